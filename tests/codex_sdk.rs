//! `dsh exec` driven by an application nobody on this project wrote: the
//! official Codex TypeScript SDK (`@openai/codex-sdk` 0.163, pinned in
//! `tests/codex-sdk-client/package-lock.json`) with `codexPathOverride`
//! pointing at dsh, against the loopback mock speaking the Responses API:
//! a thread, a follow-up turn (resume), a thread resumed by id with an
//! output schema, a failing turn, and a streamed run.
//!
//! `.ci/run` installs the SDK (`npm ci --omit=optional` in
//! `tests/codex-sdk-client`: the Codex binaries are optional dependencies
//! the SDK does not need when it is given an executable). Locally the test
//! is skipped, with the reason printed, when `node_modules` is absent; in CI
//! (`CI=true`) a missing SDK or `node` fails it.

use std::path::PathBuf;

use dsh_provider::mock::{MockProvider, MockReply, MockResponse, MockToolCall, MockWire};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{TestContext, client_ready, npm_client_missing, repo_root};

fn client_dir() -> PathBuf {
    repo_root().join("tests").join("codex-sdk-client")
}

#[test]
fn the_official_codex_sdk_runs_threads_on_dsh_exec() {
    let missing = npm_client_missing(
        "codex-sdk-client",
        "@openai/codex-sdk/package.json",
        "npm ci --omit=optional --no-audit --no-fund",
    );
    if !client_ready("the_official_codex_sdk_runs_threads_on_dsh_exec", missing) {
        return;
    }
    let ctx = TestContext::new();
    let mut call = MockReply::text("").with_usage(10, 5);
    call.tool_calls = vec![MockToolCall::new(
        "call_1",
        "bash",
        &json!({"command": "echo hi"}),
    )];
    let mock = MockProvider::start_blocking_with(
        MockWire::Responses,
        vec![
            MockResponse::Reply(call),
            MockResponse::Reply(MockReply::text("first answer").with_usage(20, 3)),
            MockResponse::Reply(MockReply::text("second answer")),
            MockResponse::Reply(MockReply::text(r#"{"ok":true}"#)),
            MockResponse::status(
                400,
                r#"{"error":{"message":"the model is unavailable","type":"invalid_request_error"}}"#,
            ),
            MockResponse::Reply(MockReply::text("streamed answer")),
        ],
    )
    .unwrap();

    let output = ctx
        .command("node")
        .arg(client_dir().join("client.mjs"))
        .current_dir(client_dir())
        .env("DSH_BASE_URL", mock.base_url())
        .env("CODEX_TEST_API_KEY", "sk-from-the-sdk")
        .env("DSH_PROVIDER_API", "responses")
        .env("DSH_MODEL", "gpt-5")
        .env("DSH_LOG", "error")
        .env("DSH_BIN", crate::support::dsh_bin())
        .env("CODEX_PROJECT", ctx.project())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "client.mjs failed:\n{stderr}");
    let seen: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
        panic!(
            "client.mjs printed no JSON:\n{}\n{stderr}",
            String::from_utf8_lossy(&output.stdout)
        )
    });

    // The SDK's `apiKey` (CODEX_API_KEY) was the key: no dsh key is set.
    for request in mock.recorded() {
        assert_eq!(
            request.header("authorization"),
            Some("Bearer sk-from-the-sdk")
        );
    }

    // The thread id is the dsh session's, and every turn stayed on it.
    let thread = seen["threadId"].as_str().unwrap();
    assert!(
        ctx.home()
            .join(".dsh/sessions")
            .join(format!("{thread}.jsonl"))
            .is_file(),
        "no session {thread}"
    );
    assert_eq!(seen["resumedId"], thread);
    let sessions: Vec<String> = std::fs::read_dir(ctx.home().join(".dsh/sessions"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".jsonl"))
        .collect();
    let sessions = sessions.len();
    assert_eq!(sessions, 2, "one thread resumed three times, one streamed");

    // The first turn: the command item and the answer, with usage.
    let first = &seen["first"];
    assert_eq!(first["finalResponse"], "first answer");
    assert_eq!(
        first["items"],
        json!([
            {"id": "item_0", "type": "command_execution", "command": "bash -c 'echo hi'",
             "aggregated_output": "hi\n", "exit_code": 0, "status": "completed"},
            {"id": "item_1", "type": "agent_message", "text": "first answer"}
        ])
    );
    assert_eq!(
        first["usage"],
        json!({"input_tokens": 30, "cached_input_tokens": 0, "cache_write_input_tokens": 0,
               "output_tokens": 8, "reasoning_output_tokens": 0})
    );

    // The follow-up turn saw the first one.
    assert_eq!(seen["second"]["finalResponse"], "second answer");
    let requests = mock.requests();
    let history = requests[2]["input"].to_string();
    assert!(
        history.contains("please run echo hi") && history.contains("first answer"),
        "{history}"
    );

    // The output schema reached the model as the Responses API's format.
    assert_eq!(seen["structured"]["finalResponse"], r#"{"ok":true}"#);
    assert_eq!(
        requests[3]["text"]["format"]["type"], "json_schema",
        "{}",
        requests[3]
    );
    assert_eq!(
        requests[3]["text"]["format"]["schema"]["required"],
        json!(["ok"])
    );
    assert!(requests[2].get("text").is_none(), "{}", requests[2]);

    // The failing turn threw with turn.failed's message.
    let failure = seen["failure"].as_str().unwrap();
    assert!(failure.contains("the model is unavailable"), "{failure}");

    // The streamed run: Codex's event sequence.
    let types: Vec<&str> = seen["streamed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|event| event["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "thread.started",
            "turn.started",
            "item.completed",
            "turn.completed"
        ]
    );
    assert_eq!(
        seen["streamed"][2]["item"],
        json!({"id": "item_0", "type": "agent_message", "text": "streamed answer"})
    );
}
