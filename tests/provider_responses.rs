//! `dsh -p` with `--provider-api responses` against the loopback mock: the
//! same conversation through Chat Completions and through the Responses
//! API gives hooks identical payloads, and the Responses API's refusals
//! reach StopFailure hooks with their category.

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use dsh_provider::mock::{MockProvider, MockReply, MockResponse, MockToolCall, MockWire};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::TestContext;

/// The conversation both APIs serve: a shell call, then an answer.
fn conversation() -> Vec<MockReply> {
    let mut call = MockReply::text("Let me look.");
    call.tool_calls = vec![MockToolCall::new(
        "call_1",
        "bash",
        &json!({"command": "echo from-the-tool"}),
    )];
    vec![call, MockReply::text("All done.")]
}

/// Claude Code hooks on every event of a turn, each appending its stdin
/// as one line to `$HOME/hooks.jsonl`.
fn install_hooks(ctx: &TestContext) {
    let claude = ctx.home().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    let record = json!([{"hooks": [{"type": "command",
        "command": "tr -d '\\n' >> \"$HOME/hooks.jsonl\"; echo >> \"$HOME/hooks.jsonl\""}]}]);
    let mut hooks = serde_json::Map::new();
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "SessionEnd",
    ] {
        hooks.insert(event.to_owned(), record.clone());
    }
    std::fs::write(
        claude.join("settings.json"),
        json!({"hooks": hooks}).to_string(),
    )
    .unwrap();
}

/// What the hooks saw in one run, without the fields that differ between
/// any two sessions (their ids, transcript paths and timings).
fn run(api: &str, wire: MockWire) -> (Vec<Value>, Vec<Value>, String) {
    let ctx = TestContext::new();
    install_hooks(&ctx);
    let script = conversation()
        .into_iter()
        .map(MockResponse::Reply)
        .collect();
    let mock = MockProvider::start_blocking_with(wire, script).unwrap();
    let output = ctx
        .dsh()
        .env("DSH_BASE_URL", mock.base_url())
        .env("DSH_API_KEY", "sk-test")
        .env("DSH_MODEL", "gpt-5")
        .args(["--provider-api", api, "-p", "Run the echo"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{api}: {stderr}");
    let text = std::fs::read_to_string(ctx.home().join("hooks.jsonl")).unwrap();
    let project = ctx.project().display().to_string();
    let payloads = text
        .lines()
        .map(|line| {
            let mut payload: Value = serde_json::from_str(line).unwrap();
            let object = payload.as_object_mut().unwrap();
            // Per-session ids and timings.
            for key in ["session_id", "transcript_path", "prompt_id", "duration_ms"] {
                object.remove(key);
            }
            // Each run has its own temporary project.
            let mut payload = payload.to_string().replace(&project, "<PROJECT>");
            payload = payload.replace(&ctx.home().display().to_string(), "<HOME>");
            serde_json::from_str(&payload).unwrap()
        })
        .collect();
    (
        payloads,
        mock.requests(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn hooks_see_the_same_payloads_through_chat_and_responses() {
    let (chat_hooks, chat_requests, chat_out) = run("chat", MockWire::Chat);
    let (responses_hooks, responses_requests, responses_out) =
        run("responses", MockWire::Responses);

    assert_eq!(chat_out, "All done.\n");
    assert_eq!(responses_out, chat_out);
    let events: Vec<&str> = responses_hooks
        .iter()
        .map(|payload| payload["hook_event_name"].as_str().unwrap())
        .collect();
    assert_eq!(
        events,
        [
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
            "Stop",
            "SessionEnd"
        ]
    );
    assert_eq!(responses_hooks, chat_hooks);
    // And each API was really spoken.
    assert!(chat_requests[0].get("messages").is_some());
    assert!(responses_requests[0].get("input").is_some());
    assert_eq!(responses_requests.len(), 2);
    let second = responses_requests[1]["input"].as_array().unwrap();
    assert!(
        second
            .iter()
            .any(|item| item["type"] == "function_call_output"
                && item["output"].as_str().unwrap().contains("from-the-tool")),
        "{second:?}"
    );
}

#[test]
fn an_exhausted_quota_reaches_stop_failure_as_a_billing_error() {
    let ctx = TestContext::new();
    let claude = ctx.home().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    let settings = json!({"hooks": {"StopFailure": [{"hooks": [
        {"type": "command", "command": "cat > \"$HOME/stopfailure.json\""}
    ]}]}});
    std::fs::write(claude.join("settings.json"), settings.to_string()).unwrap();
    let mock = MockProvider::start_blocking_with(MockWire::Responses, vec![MockResponse::status(
        429,
        r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#,
    )])
    .unwrap();
    let output = ctx
        .dsh()
        .env("DSH_BASE_URL", mock.base_url())
        .env("DSH_API_KEY", "sk-test")
        .args(["--provider-api", "responses", "-p", "Hello"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    // Not retried: no wait for a quota.
    assert_eq!(mock.requests().len(), 1);
    let stdin: Value = serde_json::from_str(
        &std::fs::read_to_string(ctx.home().join("stopfailure.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(stdin["hook_event_name"], "StopFailure");
    assert_eq!(stdin["error"], "billing_error");
}
