//! `dsh exec`, Codex's non-interactive command, end to end against the
//! loopback mock speaking the Responses API: the JSONL events have the
//! shapes and key orders of the real `codex exec --json`
//! (`fixtures/codex/exec/*.json`, from the Codex 0.169 captures), and the
//! command line does what Codex's does (resume, `--output-last-message`,
//! `--output-schema`, the git-repository check, sandbox refusals).

use std::path::Path;

use dsh_provider::mock::{MockProvider, MockReply, MockResponse, MockToolCall, MockWire};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{TestContext, events_of, repo_root};

/// A Responses-API mock serving `script`.
fn responses_mock(script: Vec<MockResponse>) -> MockProvider {
    MockProvider::start_blocking_with(MockWire::Responses, script).unwrap()
}

/// `dsh exec` in the context's project, pointed at the mock.
fn exec(ctx: &TestContext, mock: &MockProvider) -> assert_cmd::Command {
    let mut cmd = ctx.dsh();
    cmd.env("DSH_BASE_URL", mock.base_url())
        .env("DSH_API_KEY", "sk-test")
        .env("DSH_PROVIDER_API", "responses")
        .env("DSH_MODEL", "gpt-5")
        .arg("exec");
    cmd
}

fn lines(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON: {line}")))
        .collect()
}

/// An event's shape: its type, keys in order, and its item's type and keys.
fn shape(event: &Value) -> String {
    let keys = |value: &Value| -> String {
        value
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut shape = format!("{} [{}]", event["type"].as_str().unwrap(), keys(event));
    if let Some(item) = event.get("item") {
        shape.push_str(&format!(
            " {} [{}]",
            item["type"].as_str().unwrap(),
            keys(item)
        ));
    }
    if let Some(usage) = event.get("usage") {
        shape.push_str(&format!(" usage [{}]", keys(usage)));
    }
    shape
}

/// The shapes of a captured `codex exec --json` run, without the two
/// warnings about `--dangerously-bypass-hook-trust` (a Codex flag).
fn captured(name: &str) -> Vec<String> {
    let path = repo_root()
        .join("fixtures/codex/exec")
        .join(format!("{name}.json"));
    let events: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    events
        .iter()
        .filter(|event| event["item"]["type"] != "error")
        .map(shape)
        .collect()
}

fn reply_with_call(call: MockToolCall) -> MockResponse {
    let mut reply = MockReply::text("").with_usage(10, 5);
    reply.tool_calls = vec![call];
    MockResponse::Reply(reply)
}

#[test]
fn a_command_a_file_change_and_the_answer_print_as_codex_prints_them() {
    let ctx = TestContext::new();
    let mock = responses_mock(vec![
        reply_with_call(MockToolCall::new(
            "call_1",
            "bash",
            &json!({"command": "echo hi"}),
        )),
        reply_with_call(MockToolCall::new(
            "call_2",
            "write",
            &json!({"file_path": "hello.txt", "content": "hello from dsh\n"}),
        )),
        MockResponse::Reply(MockReply::text("done").with_usage(20, 3)),
    ]);
    let output = exec(&ctx, &mock)
        .args([
            "--json",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            "please run echo hi",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "stderr: {stderr}");
    let events = lines(&output.stdout);

    // Codex's shapes: the baseline capture (a command, then the answer),
    // with the capture's file change where dsh's write ran.
    let baseline = captured("baseline");
    let patch = captured("apply_patch");
    let file_change: Vec<String> = patch
        .iter()
        .filter(|shape| shape.contains("file_change"))
        .cloned()
        .collect();
    assert_eq!(file_change.len(), 2, "{patch:?}");
    let mut expected = baseline.clone();
    let answer = expected
        .iter()
        .position(|shape| shape.contains("agent_message"))
        .unwrap();
    expected.splice(answer..answer, file_change);
    assert_eq!(events.iter().map(shape).collect::<Vec<_>>(), expected);

    // And the values dsh fixes.
    let session = std::fs::read_dir(ctx.home().join(".dsh/sessions"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let session_id = session.file_stem().unwrap().to_str().unwrap();
    assert_eq!(events[0]["thread_id"], session_id);
    assert_eq!(
        events[3]["item"],
        json!({"id": "item_0", "type": "command_execution", "command": "bash -c 'echo hi'",
               "aggregated_output": "hi\n", "exit_code": 0, "status": "completed"})
    );
    let hello = ctx.project().join("hello.txt");
    assert_eq!(
        events[5]["item"],
        json!({"id": "item_1", "type": "file_change",
               "changes": [{"path": hello.display().to_string(), "kind": "add"}],
               "status": "completed"})
    );
    assert_eq!(std::fs::read_to_string(&hello).unwrap(), "hello from dsh\n");
    assert_eq!(
        events[6]["item"],
        json!({"id": "item_2", "type": "agent_message", "text": "done"})
    );
    assert_eq!(
        events[7]["usage"],
        json!({"input_tokens": 40, "cached_input_tokens": 0, "cache_write_input_tokens": 0,
               "output_tokens": 13, "reasoning_output_tokens": 0})
    );
}

/// `dsh exec --json` in a project whose `.mcp.json` configures dsh's echo
/// test server as `server` (started with `server_args`), with a model that
/// calls `tool` once: the JSON events, which end successfully.
fn exec_one_mcp_call(
    ctx: &TestContext,
    server: &str,
    server_args: &[&str],
    tool: &str,
) -> Vec<Value> {
    let script = repo_root().join("fixtures/mcp/echo_server.py");
    let mut args = vec![json!(script)];
    args.extend(server_args.iter().map(|arg| json!(arg)));
    std::fs::write(
        ctx.project().join(".mcp.json"),
        json!({"mcpServers": {server: {"command": "python3", "args": args}}}).to_string(),
    )
    .unwrap();
    let mock = responses_mock(vec![
        reply_with_call(MockToolCall::new("call_1", tool, &json!({"text": "hello"}))),
        MockResponse::Reply(MockReply::text("done").with_usage(20, 10)),
    ]);
    let output = exec(ctx, &mock)
        .args([
            "--json",
            "--skip-git-repo-check",
            "--sandbox",
            "danger-full-access",
            "echo it",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "stderr: {stderr}");
    let events = lines(&output.stdout);
    assert_eq!(
        events.iter().map(shape).collect::<Vec<_>>(),
        captured("mcp_basic")
    );
    events
}

#[test]
fn an_mcp_tool_call_prints_as_codex_prints_it() {
    let ctx = TestContext::new();
    let events = exec_one_mcp_call(&ctx, "echo", &[], "mcp__echo__echo");
    assert_eq!(
        events[2]["item"],
        json!({"id": "item_0", "type": "mcp_tool_call", "server": "echo", "tool": "echo",
               "arguments": {"text": "hello"}, "result": null, "error": null, "status": "in_progress"})
    );
    assert_eq!(events[3]["item"]["status"], "completed");
    assert_eq!(
        events[3]["item"]["result"]["content"][0]["type"], "text",
        "{}",
        events[3]
    );
}

/// A server configured as `oracle.v2` offering `echo.v2`: the model calls
/// dsh's sanitized name `mcp__oracle_v2__echo_v2`, and the item names the
/// server as configured and the tool as the server names it (what the
/// call recorded on `tool/call`), not as read back from dsh's name.
#[test]
fn an_mcp_call_names_its_server_and_tool_as_configured() {
    let ctx = TestContext::new();
    let events = exec_one_mcp_call(&ctx, "oracle.v2", &["--dotted"], "mcp__oracle_v2__echo_v2");
    assert_eq!(
        events[2]["item"],
        json!({"id": "item_0", "type": "mcp_tool_call", "server": "oracle.v2", "tool": "echo.v2",
               "arguments": {"text": "hello"}, "result": null, "error": null, "status": "in_progress"})
    );
    let done = &events[3]["item"];
    assert_eq!(
        (&done["server"], &done["tool"], &done["status"]),
        (&json!("oracle.v2"), &json!("echo.v2"), &json!("completed"))
    );
    assert_eq!(
        done["result"]["content"][0]["text"], "ECHO-V2: hello",
        "{done}"
    );
    // The session log's `tool/call` records the call's origin.
    let logs = crate::cli_headless::session_logs(&ctx);
    assert_eq!(logs.len(), 1, "{logs:?}");
    let calls = events_of(&std::fs::read_to_string(&logs[0]).unwrap(), "tool/call");
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(
        (&calls[0]["tool"], &calls[0]["origin"]),
        (
            &json!("mcp__oracle_v2__echo_v2"),
            &json!({"kind": "mcp", "server": "oracle.v2", "tool": "echo.v2"})
        )
    );
}

#[test]
fn a_model_error_fails_the_turn_as_codex_does() {
    let ctx = TestContext::new();
    let mock = responses_mock(vec![MockResponse::status(
        400,
        r#"{"error":{"message":"the model is unavailable","type":"invalid_request_error"}}"#,
    )]);
    let output = exec(&ctx, &mock)
        .args(["--json", "--skip-git-repo-check", "hi"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let events = lines(&output.stdout);
    assert_eq!(
        events.iter().map(shape).collect::<Vec<_>>(),
        captured("model_error")
    );
    let message = events[3]["error"]["message"].as_str().unwrap();
    assert!(message.contains("the model is unavailable"), "{message}");
    assert_eq!(events[2]["message"], message);
}

#[test]
fn resume_continues_the_thread_with_the_prompt_on_stdin() {
    let ctx = TestContext::new();
    let mock = responses_mock(vec![
        MockResponse::Reply(MockReply::text("first answer")),
        MockResponse::Reply(MockReply::text("second answer")),
    ]);
    let last = ctx.home().join("last.txt");
    std::fs::write(&last, "stale and longer than the answer").unwrap();
    let first = exec(&ctx, &mock)
        .args(["--json", "--skip-git-repo-check", "-o"])
        .arg(&last)
        .write_stdin("first question")
        .output()
        .unwrap();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert_eq!(std::fs::read_to_string(&last).unwrap(), "first answer");
    let thread = lines(&first.stdout)[0]["thread_id"]
        .as_str()
        .unwrap()
        .to_owned();

    // The SDK's follow-up: options first, `resume ID` last, prompt on stdin.
    let second = exec(&ctx, &mock)
        .args([
            "--experimental-json",
            "--sandbox",
            "danger-full-access",
            "--cd",
        ])
        .arg(ctx.project())
        .args([
            "--skip-git-repo-check",
            "--config",
            "approval_policy=\"never\"",
            "resume",
            &thread,
        ])
        .write_stdin("second question")
        .output()
        .unwrap();
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let events = lines(&second.stdout);
    assert_eq!(
        events[0],
        json!({"type": "thread.started", "thread_id": thread})
    );
    assert_eq!(
        events.last().unwrap()["type"],
        "turn.completed",
        "{events:?}"
    );
    // The second request carried the first turn.
    let input = mock.requests()[1]["input"].to_string();
    assert!(
        input.contains("first question") && input.contains("first answer"),
        "{input}"
    );
    assert!(input.contains("second question"), "{input}");

    // `resume --last` with options after it, and human output: the final
    // message alone on stdout.
    let mock = responses_mock(vec![MockResponse::Reply(MockReply::text("third answer"))]);
    let third = exec(&ctx, &mock)
        .args([
            "resume",
            "--last",
            "--skip-git-repo-check",
            "third question",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&third.stderr);
    assert!(third.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&third.stdout), "third answer\n");
    assert!(
        stderr.contains(&format!("session id: {thread}")),
        "{stderr}"
    );
    assert!(
        mock.requests()[0]["input"]
            .to_string()
            .contains("second answer")
    );
}

#[test]
fn an_output_schema_reaches_the_responses_api_as_text_format() {
    let ctx = TestContext::new();
    let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}},
                        "required": ["ok"], "additionalProperties": false});
    let path = ctx.home().join("schema.json");
    std::fs::write(&path, schema.to_string()).unwrap();
    let mock = responses_mock(vec![MockResponse::Reply(MockReply::text(r#"{"ok":true}"#))]);
    let output = exec(&ctx, &mock)
        .args(["--json", "--skip-git-repo-check", "--output-schema"])
        .arg(&path)
        .arg("answer in JSON")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        mock.requests()[0]["text"],
        json!({"format": {"type": "json_schema", "strict": true, "schema": schema,
                          "name": "codex_output_schema"}})
    );

    // Another API has no such format: refused before any request.
    let chat = MockProvider::start_blocking(Vec::new()).unwrap();
    let refused = exec(&ctx, &chat)
        .env("DSH_PROVIDER_API", "chat")
        .args(["--skip-git-repo-check", "--output-schema"])
        .arg(&path)
        .arg("answer in JSON")
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("speaks the chat API"), "{stderr}");
    assert!(chat.requests().is_empty());
}

fn refusal(ctx: &TestContext, args: &[&str]) -> (Option<i32>, String) {
    let mock = responses_mock(Vec::new());
    let output = exec(ctx, &mock).args(args).arg("hi").output().unwrap();
    assert!(mock.requests().is_empty(), "{args:?} reached the model");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn outside_a_git_repository_and_under_a_sandbox_dsh_refuses_in_one_line() {
    let ctx = TestContext::new();
    let (code, stderr) = refusal(&ctx, &["--json"]);
    assert_eq!(code, Some(1));
    assert_eq!(
        stderr,
        "Not inside a trusted directory and --skip-git-repo-check was not specified.\n"
    );
    for sandbox in [
        &["--sandbox", "read-only"][..],
        &["-s", "workspace-write"],
        &["--full-auto"],
        &["-c", "sandbox_mode=\"read-only\""],
    ] {
        let args: Vec<&str> = [&["--skip-git-repo-check"][..], sandbox].concat();
        let (code, stderr) = refusal(&ctx, &args);
        assert_ne!(code, Some(0), "{sandbox:?}");
        assert_eq!(stderr.lines().count(), 1, "{sandbox:?}: {stderr}");
        assert!(
            stderr.contains("dsh cannot enforce"),
            "{sandbox:?}: {stderr}"
        );
    }
    let (_, stderr) = refusal(&ctx, &["--skip-git-repo-check", "-c", "profile=\"x\""]);
    assert!(
        stderr.contains("-c profile: dsh exec does not know"),
        "{stderr}"
    );

    // Inside a git repository the check passes.
    std::fs::create_dir(ctx.project().join(".git")).unwrap();
    let mock = responses_mock(vec![MockResponse::Reply(MockReply::text("ok"))]);
    let output = exec(&ctx, &mock).args(["--json", "hi"]).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(Path::new(&ctx.project().join(".git")).is_dir());
}

#[test]
fn model_flags_and_config_overrides_reach_the_request() {
    let ctx = TestContext::new();
    let mock = responses_mock(vec![
        MockResponse::Reply(MockReply::text("one")),
        MockResponse::Reply(MockReply::text("two")),
    ]);
    // `-c model_provider="openai"` selects the Responses API over the
    // environment's Chat Completions; `-c model` names the model.
    let output = exec(&ctx, &mock)
        .env("DSH_PROVIDER_API", "chat")
        .args([
            "--json",
            "--skip-git-repo-check",
            "-c",
            "model_provider=\"openai\"",
            "-c",
            "model=\"gpt-from-config\"",
            "-c",
            "model_reasoning_effort=\"high\"",
            "--add-dir",
            "/tmp",
            "hi",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(mock.requests()[0]["model"], "gpt-from-config");
    assert!(
        stderr.contains("-c model_reasoning_effort=\"high\" is ignored"),
        "{stderr}"
    );
    assert!(stderr.contains("--add-dir is ignored"), "{stderr}");
    // `-m` wins over `-c model`.
    let output = exec(&ctx, &mock)
        .args([
            "--skip-git-repo-check",
            "-m",
            "gpt-from-flag",
            "-c",
            "model=\"gpt-from-config\"",
            "hi",
        ])
        .output()
        .unwrap();
    assert!(output.status.success());
    assert_eq!(String::from_utf8_lossy(&output.stdout), "two\n");
    assert_eq!(mock.requests()[1]["model"], "gpt-from-flag");
}
