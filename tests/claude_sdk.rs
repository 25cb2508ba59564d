//! dsh driven by the official Claude Agent SDKs — TypeScript
//! `@anthropic-ai/claude-agent-sdk` 0.3.328 (pinned in
//! `tests/claude-sdk-client/package-lock.json`) and Python
//! `claude-agent-sdk` 0.2.185 (`tests/claude-sdk-client/requirements.txt`,
//! in `tests/claude-sdk-client/.venv`) — through their executable-path
//! options, against the loopback mock model speaking the Anthropic wire.
//!
//! `.ci/run` installs both SDKs. Locally a test is skipped, with the reason
//! printed, when its SDK is absent; in CI (`CI=true`) a missing SDK, `node`
//! or venv fails it.

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use std::path::PathBuf;
use std::process::Command;

use dsh_provider::mock::{MockProvider, MockResponse, MockToolCall, MockWire};
use serde_json::{Value, json};

use crate::support::{TestContext, client_ready, npm_client_missing, repo_root};

fn client_dir() -> PathBuf {
    repo_root().join("tests").join("claude-sdk-client")
}

/// Which official SDK drives dsh.
#[derive(Clone, Copy, Debug)]
enum Sdk {
    TypeScript,
    Python,
}

impl Sdk {
    /// `Some(reason)` when this SDK cannot run here.
    fn missing(self) -> Option<String> {
        match self {
            Sdk::TypeScript => npm_client_missing(
                "claude-sdk-client",
                "@anthropic-ai/claude-agent-sdk/package.json",
                "npm ci --omit=optional --no-audit --no-fund",
            ),
            Sdk::Python => {
                let python = client_dir().join(".venv/bin/python");
                let ok = Command::new(&python)
                    .args(["-c", "import claude_agent_sdk"])
                    .output()
                    .is_ok_and(|out| out.status.success());
                (!ok).then(|| format!(
                    "{} cannot import claude_agent_sdk; run `python3 -m venv tests/claude-sdk-client/.venv && tests/claude-sdk-client/.venv/bin/pip install -r tests/claude-sdk-client/requirements.txt`",
                    python.display()
                ))
            }
        }
    }

    /// Whether the test can go on (false: skipped, said on stderr).
    fn available(self, test: &str) -> bool {
        client_ready(test, self.missing())
    }
}

fn mock(script: Vec<MockResponse>) -> MockProvider {
    MockProvider::start_blocking_with(MockWire::Anthropic, script).unwrap()
}

fn bash(id: &str, command: &str) -> MockResponse {
    MockResponse::tool_calls(
        "",
        vec![MockToolCall::new(
            id,
            "Bash",
            &json!({"command": command, "description": "test step"}),
        )],
    )
}

/// Runs `scenario` of the SDK's driver against `mock` in `ctx`'s project;
/// returns what the application saw.
fn drive(sdk: Sdk, ctx: &TestContext, mock: &MockProvider, scenario: &str) -> Value {
    let mut command = match sdk {
        Sdk::TypeScript => {
            let mut command = ctx.command("node");
            command.arg(client_dir().join("driver.mjs"));
            command
        }
        Sdk::Python => {
            let mut command = ctx.command(client_dir().join(".venv/bin/python"));
            command.arg(client_dir().join("driver.py"));
            command
        }
    };
    let output = command
        .arg(scenario)
        .current_dir(client_dir())
        .env("ANTHROPIC_BASE_URL", mock.base_url())
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .env("DSH_LOG", "error")
        .env("DSH_BIN", crate::support::dsh_bin())
        .env("SDK_PROJECT", ctx.project())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{sdk:?} driver {scenario} failed:\n{stderr}"
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
        panic!(
            "{sdk:?} driver {scenario} printed no JSON:\n{}\nstderr:\n{stderr}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

fn messages<'a>(seen: &'a Value, kind: &str) -> Vec<&'a Value> {
    seen["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["type"] == kind)
        .collect()
}

fn keys(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

/// The one session log of the context.
fn session_log(ctx: &TestContext) -> Vec<Value> {
    let logs = crate::cli_headless::session_logs(ctx);
    assert_eq!(logs.len(), 1, "{logs:?}");
    std::fs::read_to_string(&logs[0])
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn plain_query(sdk: Sdk) {
    let ctx = TestContext::new();
    let mock = mock(vec![MockResponse::text("Hello from the mock.")]);
    let seen = drive(sdk, &ctx, &mock, "plain");
    let kinds: Vec<&str> = seen["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["system", "assistant", "result"], "{seen}");
    let init = messages(&seen, "system")[0];
    assert_eq!(init["subtype"], "init");
    assert_eq!(init["cwd"], ctx.project().to_str().unwrap());
    let result = messages(&seen, "result")[0];
    if let Sdk::TypeScript = sdk {
        // Claude Code's key order: `type` is not first (PROTOCOL.md §4).
        assert_eq!(keys(result)[0], "duration_api_ms", "{result}");
    }
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["result"], "Hello from the mock.");
    assert_eq!(result["num_turns"], 1);
    assert_eq!(result["session_id"], init["session_id"]);
    assert_eq!(seen["errors"], json!([]));
    // The session is a dsh session like any other.
    let log = session_log(&ctx);
    assert_eq!(log[0]["session_id"], init["session_id"]);
    assert_eq!(mock.requests().len(), 1);
}

#[test]
fn typescript_plain_query() {
    if Sdk::TypeScript.available("typescript_plain_query") {
        plain_query(Sdk::TypeScript);
    }
}

#[test]
fn python_plain_query() {
    if Sdk::Python.available("python_plain_query") {
        plain_query(Sdk::Python);
    }
}

fn allowed_tool(sdk: Sdk) {
    let ctx = TestContext::new();
    let mock = mock(vec![
        bash("toolu_1", "echo made > allowed.txt"),
        MockResponse::text("made it"),
    ]);
    let seen = drive(sdk, &ctx, &mock, "allowed");
    assert!(ctx.project().join("allowed.txt").is_file(), "{seen}");
    let assistant = messages(&seen, "assistant");
    assert_eq!(assistant[0]["message"]["content"][0]["type"], "tool_use");
    assert_eq!(assistant[0]["message"]["content"][0]["name"], "Bash");
    let user = messages(&seen, "user");
    let block = &user[0]["message"]["content"][0];
    assert_eq!(block["type"], "tool_result");
    assert_eq!(block["tool_use_id"], "toolu_1");
    assert_eq!(block["is_error"], false);
    assert_eq!(seen["callbacks"], json!([]), "no permission question");
}

#[test]
fn typescript_allowed_tool_runs_without_asking() {
    if Sdk::TypeScript.available("typescript_allowed_tool_runs_without_asking") {
        allowed_tool(Sdk::TypeScript);
    }
}

fn can_use_tool(sdk: Sdk) {
    let ctx = TestContext::new();
    let mock = mock(vec![
        bash("toolu_1", "touch one.txt"),
        bash("toolu_2", "touch two.txt"),
        MockResponse::text("done"),
    ]);
    let seen = drive(sdk, &ctx, &mock, "can_use_tool");
    let asked: Vec<&Value> = seen["callbacks"].as_array().unwrap().iter().collect();
    assert_eq!(asked.len(), 2, "{seen}");
    assert_eq!(asked[0]["toolName"], "Bash");
    assert_eq!(asked[0]["input"]["command"], "touch one.txt");
    // Denied: not run, and the model is told why.
    assert!(!ctx.project().join("one.txt").exists());
    // Allowed with an updated input: the input given runs, not the model's.
    assert!(ctx.project().join("rewritten.txt").is_file());
    assert!(!ctx.project().join("two.txt").exists());
    let requests = mock.requests();
    let told = serde_json::to_string(&requests[1]["messages"]).unwrap();
    assert!(
        told.contains("Denied by the test: one is forbidden"),
        "{told}"
    );
    let result = messages(&seen, "result")[0];
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["permission_denials"][0]["tool_use_id"], "toolu_1");
}

#[test]
fn typescript_can_use_tool_denies_and_rewrites() {
    if Sdk::TypeScript.available("typescript_can_use_tool_denies_and_rewrites") {
        can_use_tool(Sdk::TypeScript);
    }
}

#[test]
fn python_can_use_tool_denies_and_rewrites() {
    if Sdk::Python.available("python_can_use_tool_denies_and_rewrites") {
        can_use_tool(Sdk::Python);
    }
}

fn sdk_and_settings_hooks(sdk: Sdk) {
    let ctx = TestContext::new();
    let claude = ctx.project().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join("settings.json"),
        r#"{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"cat > \"$CLAUDE_PROJECT_DIR/settings_hook_stdin.json\"; echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"additionalContext\":\"pre-context-from-settings-hook\"}}'"}]}]}}"#,
    )
    .unwrap();
    let mock = mock(vec![
        bash("toolu_1", "echo both"),
        bash("toolu_2", "rm -rf build"),
        MockResponse::text("FINAL: both hooks ran."),
    ]);
    let seen = drive(sdk, &ctx, &mock, "hooks");
    let callbacks = seen["callbacks"].as_array().unwrap();
    let events: Vec<&str> = callbacks
        .iter()
        .map(|c| c["event"].as_str().unwrap())
        .collect();
    // PreToolUse for both calls; PostToolUse only for the one that ran.
    assert_eq!(
        events,
        ["PreToolUse", "PostToolUse", "PreToolUse"],
        "{seen}"
    );
    // The SDK hook's input is exactly the settings hook's stdin (the
    // settings hook kept the last one it got: the rm's).
    let stdin: Value = serde_json::from_str(
        &std::fs::read_to_string(ctx.project().join("settings_hook_stdin.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(callbacks[2]["input"], stdin);
    assert_eq!(callbacks[0]["input"]["hook_event_name"], "PreToolUse");
    assert_eq!(callbacks[0]["input"]["tool_name"], "Bash");
    assert_eq!(callbacks[0]["toolUseID"], "toolu_1");
    // Both contexts reach the model; the SDK hook's deny stops the rm.
    let told = serde_json::to_string(&mock.requests()[1]["messages"]).unwrap();
    assert!(told.contains("pre-context-from-sdk-hook"), "{told}");
    assert!(told.contains("pre-context-from-settings-hook"), "{told}");
    let told = serde_json::to_string(&mock.requests()[2]["messages"]).unwrap();
    assert!(told.contains("the SDK hook says no"), "{told}");

    // The log records both dialects on the same seam.
    let log = session_log(&ctx);
    let invoked: Vec<(&str, &str)> = log
        .iter()
        .filter(|e| e["type"] == "hook/invoked")
        .map(|e| (e["dialect"].as_str().unwrap(), e["event"].as_str().unwrap()))
        .collect();
    assert_eq!(
        invoked,
        [
            ("sdk", "PreToolUse"),
            ("claude", "PreToolUse"),
            ("sdk", "PostToolUse"),
            ("sdk", "PreToolUse"),
            ("claude", "PreToolUse"),
        ],
        "{log:?}"
    );
    let seams: Vec<&str> = log
        .iter()
        .filter(|e| e["type"] == "hook/invoked" && e["event"] == "PreToolUse")
        .map(|e| e["seam"].as_str().unwrap())
        .collect();
    assert!(seams.windows(2).all(|w| w[0] == w[1]), "{seams:?}");
}

#[test]
fn typescript_sdk_hook_beside_a_settings_hook() {
    if Sdk::TypeScript.available("typescript_sdk_hook_beside_a_settings_hook") {
        sdk_and_settings_hooks(Sdk::TypeScript);
    }
}

#[test]
fn python_sdk_hook_beside_a_settings_hook() {
    if Sdk::Python.available("python_sdk_hook_beside_a_settings_hook") {
        sdk_and_settings_hooks(Sdk::Python);
    }
}

fn write(id: &str, path: &str, content: &str) -> MockResponse {
    MockResponse::tool_calls(
        "",
        vec![MockToolCall::new(
            id,
            "Write",
            &json!({"file_path": path, "content": content}),
        )],
    )
}

fn mode_and_model(sdk: Sdk) {
    let ctx = TestContext::new();
    let project = ctx.project();
    let a = project.join("a.txt").to_string_lossy().into_owned();
    let b = project.join("b.txt").to_string_lossy().into_owned();
    let mock = mock(vec![
        write("toolu_1", &a, "A\n"),
        MockResponse::text("wrote a"),
        write("toolu_2", &b, "B\n"),
        MockResponse::text("wrote b"),
    ]);
    let seen = drive(sdk, &ctx, &mock, "mode_and_model");
    assert!(project.join("a.txt").is_file() && project.join("b.txt").is_file());
    // Asked for a.txt only: acceptEdits lets b.txt through.
    let asked = seen["callbacks"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "{seen}");
    assert_eq!(asked[0]["toolName"], "Write");
    let results = messages(&seen, "result");
    assert_eq!(results.len(), 2, "{seen}");
    // The second turn's requests name the new model.
    let requests = mock.requests();
    assert_ne!(requests[0]["model"], "claude-haiku-4-5");
    assert_eq!(requests[2]["model"], "claude-haiku-4-5");
    assert_eq!(requests[3]["model"], "claude-haiku-4-5");
    let inits = messages(&seen, "system");
    let modes: Vec<&Value> = inits
        .iter()
        .filter(|m| m["subtype"] == "init")
        .map(|m| &m["permissionMode"])
        .collect();
    assert_eq!(modes, [&json!("default"), &json!("acceptEdits")]);
    // The transcript of the session-log: both turns in one session.
    let log = session_log(&ctx);
    assert_eq!(log.iter().filter(|e| e["type"] == "turn/start").count(), 2);
    assert!(log.iter().any(|e| e["type"] == "model/switched"));
}

#[test]
fn typescript_permission_mode_and_model_switch_between_turns() {
    if Sdk::TypeScript.available("typescript_permission_mode_and_model_switch_between_turns") {
        mode_and_model(Sdk::TypeScript);
    }
}

#[test]
fn python_permission_mode_and_model_switch_between_turns() {
    if Sdk::Python.available("python_permission_mode_and_model_switch_between_turns") {
        mode_and_model(Sdk::Python);
    }
}

#[test]
fn typescript_interrupt_stops_the_turn_and_the_session_goes_on() {
    if !Sdk::TypeScript.available("typescript_interrupt_stops_the_turn_and_the_session_goes_on") {
        return;
    }
    let ctx = TestContext::new();
    let mock = mock(vec![
        bash("toolu_1", "sleep 30"),
        MockResponse::text("still here"),
    ]);
    let started = std::time::Instant::now();
    let seen = drive(Sdk::TypeScript, &ctx, &mock, "interrupt");
    assert!(
        started.elapsed().as_secs() < 25,
        "the sleep was not stopped"
    );
    assert_eq!(
        seen["calls"][0]["ret"],
        json!({"still_queued": []}),
        "{seen}"
    );
    let results = messages(&seen, "result");
    assert_eq!(results.len(), 2, "{seen}");
    assert_eq!(results[0]["subtype"], "error_during_execution");
    assert_eq!(results[0]["is_error"], true);
    assert_eq!(results[1]["subtype"], "success");
    assert_eq!(results[1]["result"], "still here");
    let log = session_log(&ctx);
    let ends: Vec<&str> = log
        .iter()
        .filter(|e| e["type"] == "turn/end")
        .map(|e| e["reason"].as_str().unwrap())
        .collect();
    assert_eq!(ends, ["interrupted", "completed"]);
}

#[test]
fn typescript_sdk_mcp_server_tool_joins_the_session() {
    if Sdk::TypeScript.available("typescript_sdk_mcp_server_tool_joins_the_session") {
        sdk_mcp_server_tool_joins_the_session(Sdk::TypeScript);
    }
}

/// Python names its server in `--mcp-config` as inline JSON
/// (`"type": "sdk"`) and sends no manifest: dsh asks it for its tools.
#[test]
fn python_sdk_mcp_server_tool_joins_the_session() {
    if Sdk::Python.available("python_sdk_mcp_server_tool_joins_the_session") {
        sdk_mcp_server_tool_joins_the_session(Sdk::Python);
    }
}

fn sdk_mcp_server_tool_joins_the_session(sdk: Sdk) {
    let ctx = TestContext::new();
    let mock = mock(vec![
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                "toolu_1",
                "mcp__calc__add",
                &json!({"a": 2, "b": 3}),
            )],
        ),
        MockResponse::text("2 + 3 = 5"),
    ]);
    let seen = drive(sdk, &ctx, &mock, "mcp");
    // The model was offered the tool, the application ran it, the model got 5.
    let offered = serde_json::to_string(&mock.requests()[0]["tools"]).unwrap();
    assert!(offered.contains("mcp__calc__add"), "{offered}");
    assert_eq!(
        seen["callbacks"],
        json!([{"kind": "mcp", "tool": "add", "args": {"a": 2, "b": 3}}]),
        "{seen}"
    );
    let told = serde_json::to_string(&mock.requests()[1]["messages"]).unwrap();
    assert!(told.contains("\"5\""), "{told}");
    let init = messages(&seen, "system")[0];
    assert!(
        init["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("mcp__calc__add")),
        "{init}"
    );
    assert_eq!(messages(&seen, "result")[0]["result"], "2 + 3 = 5");
}

fn resume(sdk: Sdk) {
    let ctx = TestContext::new();
    let mock = mock(vec![
        MockResponse::text("OK, remembered."),
        MockResponse::text("The word was PAPAYA."),
    ]);
    let seen = drive(sdk, &ctx, &mock, "resume");
    let results = messages(&seen, "result");
    assert_eq!(results.len(), 2, "{seen}");
    // The same session id across both processes; the history went along.
    assert_eq!(results[0]["session_id"], results[1]["session_id"]);
    assert_eq!(results[1]["result"], "The word was PAPAYA.");
    let told = serde_json::to_string(&mock.requests()[1]["messages"]).unwrap();
    assert!(told.contains("Remember the word PAPAYA."), "{told}");
    assert_eq!(crate::cli_headless::session_logs(&ctx).len(), 1);
}

#[test]
fn typescript_resume_continues_the_session() {
    if Sdk::TypeScript.available("typescript_resume_continues_the_session") {
        resume(Sdk::TypeScript);
    }
}

#[test]
fn python_resume_continues_the_session() {
    if Sdk::Python.available("python_resume_continues_the_session") {
        resume(Sdk::Python);
    }
}

/// No SDK: `-p --input-format stream-json` with one user line and EOF, no
/// `initialize` (the `cli_stdin_stream_json` capture): the turn runs, and
/// stdout holds Claude Code's messages only, no control or state lines.
#[test]
fn stdin_stream_json_without_an_sdk() {
    let ctx = TestContext::new();
    let mock = mock(vec![MockResponse::text("Hello from the mock.")]);
    let output = ctx
        .dsh()
        .env("ANTHROPIC_BASE_URL", mock.base_url())
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .args([
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
        ])
        .write_stdin(
            r#"{"type":"user","message":{"role":"user","content":"Say hello"},"parent_tool_use_id":null,"session_id":""}
"#,
        )
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let kinds: Vec<String> = lines
        .iter()
        .map(|m| {
            let subtype = m["subtype"]
                .as_str()
                .map(|s| format!("/{s}"))
                .unwrap_or_default();
            format!("{}{subtype}", m["type"].as_str().unwrap())
        })
        .collect();
    assert_eq!(kinds, ["system/init", "assistant", "result/success"]);
    assert_eq!(lines[2]["result"], "Hello from the mock.");
}

/// A line that is not the protocol is named on stderr and skipped; a
/// control request dsh does not serve is answered with an error; a
/// bad `--input-format` combination is refused in one line.
#[test]
fn stream_json_input_refuses_clearly() {
    let ctx = TestContext::new();
    let mock = mock(vec![MockResponse::text("ok")]);
    let output = ctx
        .dsh()
        .env("ANTHROPIC_BASE_URL", mock.base_url())
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .args(["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"])
        .write_stdin(concat!(
            "{\"type\":\"control_request\",\"request_id\":\"r1\",\"request\":{\"subtype\":\"initialize\"}}\n",
            "not json\n",
            "{\"type\":\"control_request\",\"request_id\":\"r2\",\"request\":{\"subtype\":\"rewind_files\"}}\n",
            "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
        ))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("stream-json input: not a JSON object"),
        "{stderr}"
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let init = lines
        .iter()
        .find(|l| l["response"]["request_id"] == "r1")
        .unwrap();
    assert_eq!(init["type"], "control_response");
    assert_eq!(
        keys(&init["response"]),
        [
            "subtype",
            "request_id",
            "response",
            "pending_permission_requests",
            "pending_user_dialog_requests"
        ]
    );
    let refused = lines
        .iter()
        .find(|l| l["response"]["request_id"] == "r2")
        .unwrap();
    assert_eq!(refused["response"]["subtype"], "error");
    assert!(
        refused["response"]["error"]
            .as_str()
            .unwrap()
            .contains("rewind_files")
    );
    assert_eq!(lines.last().unwrap()["type"], "result");

    let refused = ctx
        .dsh()
        .args(["--input-format", "stream-json"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr)
            .contains("--input-format stream-json needs --output-format stream-json")
    );
}
