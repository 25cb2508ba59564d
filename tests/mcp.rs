//! MCP servers end to end: `.mcp.json` and `--mcp-config` through
//! `dsh -p` against the loopback provider and `dsh replay`, `dsh mcp list`, and
//! the servers' lifetime (gone when dsh is). The server is
//! `fixtures/mcp/echo_server.py`, a real stdio MCP server.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use dsh_provider::mock::{MockResponse, MockToolCall};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::cli_headless::{dsh, events, mock, of_type, session_logs};
use crate::support::{TestContext, repo_root};

fn server() -> PathBuf {
    repo_root()
        .join("fixtures")
        .join("mcp")
        .join("echo_server.py")
}

/// A project `.mcp.json` with the test server as `echo`, logging its calls.
fn project_server(ctx: &TestContext) -> PathBuf {
    let log = ctx.home().join("mcp_calls.jsonl");
    let config = json!({"mcpServers": {"echo": {
        "command": "python3",
        "args": ["${MCP_SERVER}"],
        "env": {"MCP_ECHO_LOG": log},
    }}});
    std::fs::write(ctx.project().join(".mcp.json"), config.to_string()).unwrap();
    log
}

fn calls(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn alive(pid: i32) -> bool {
    // Signal 0: delivery check only.
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok()
}

fn wait_gone(pid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn headless_run_uses_an_mcp_tool_through_hooks_and_stops_the_server() {
    let ctx = TestContext::new();
    let log = project_server(&ctx);
    // A PreToolUse hook on `mcp__echo__.*` rewrites the argument.
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "mcp__echo__.*", "hooks": [{
        "type": "command",
        "command": "cat > /dev/null; echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\",\"updatedInput\":{\"text\":\"from-hook\"}}}'"
    }]}]}});
    std::fs::create_dir_all(ctx.project().join(".claude")).unwrap();
    std::fs::write(
        ctx.project().join(".claude").join("settings.json"),
        settings.to_string(),
    )
    .unwrap();
    let provider = mock(vec![
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                "call_1",
                "mcp__echo__echo",
                &json!({"text": "hi"}),
            )],
        ),
        MockResponse::text("Done."),
    ]);
    let output = dsh(&ctx, &provider)
        .env("MCP_SERVER", server())
        .args(["-p", "Echo hi", "--permission-mode", "bypassPermissions"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "stderr: {stderr}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "Done.\n");

    // The tool was offered with its schema, and the model got the structured result.
    let requests = provider.requests();
    let tool = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "mcp__echo__echo")
        .expect("mcp__echo__echo offered");
    assert_eq!(tool["function"]["parameters"]["required"], json!(["text"]));
    let last = requests[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "tool");
    assert_eq!(last["content"], r#"{"result":"ECHO: from-hook"}"#);

    // The header lists the server; the log has the call as any other.
    let logs = session_logs(&ctx);
    let events = events(&logs[0]);
    assert_eq!(
        events[0]["notices"],
        json!(["mcp: echo (project): connected, 6 tools"])
    );
    let results = of_type(&events, "tool/result");
    assert_eq!(results[0]["content"], r#"{"result":"ECHO: from-hook"}"#);

    // The server got the rewritten argument, and it is gone now.
    let calls = calls(&log);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["arguments"], json!({"text": "from-hook"}));
    let pid = i32::try_from(calls[0]["pid"].as_i64().unwrap()).unwrap();
    assert!(wait_gone(pid), "MCP server {pid} outlived dsh");
}

#[test]
fn permission_rules_name_mcp_tools() {
    let ctx = TestContext::new();
    let log = project_server(&ctx);
    let provider = mock(vec![
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                "call_1",
                "mcp__echo__echo",
                &json!({"text": "hi"}),
            )],
        ),
        MockResponse::text("Done."),
    ]);
    let output = dsh(&ctx, &provider)
        .env("MCP_SERVER", server())
        .args([
            "-p",
            "Echo hi",
            "--permission-mode",
            "bypassPermissions",
            "--disallowedTools",
            "mcp__echo",
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let events = events(&session_logs(&ctx)[0]);
    let result = of_type(&events, "tool/result")[0].clone();
    assert_eq!(result["is_error"], true, "{result}");
    assert!(calls(&log).is_empty(), "the denied call reached the server");
}

#[test]
fn replay_with_mcp_config_and_a_broken_server_reports_it() {
    let ctx = TestContext::new();
    let extra = ctx.project().join("extra.json");
    let config = json!({"mcpServers": {
        "echo": {"command": "python3", "args": [server()]},
        "broken": {"command": "python3", "args": ["-c", "import sys; sys.stderr.write('no luck'); sys.exit(4)"]},
        "unset": {"command": "${DSH_TEST_NOT_SET}/server"},
    }});
    std::fs::write(&extra, config.to_string()).unwrap();
    let fixture = ctx.project().join("fixture.json");
    let script = json!({"prompts": ["go"], "model": [
        {"tool_calls": [
            {"name": "mcp__echo__echo_text", "arguments": {"text": "plain"}},
            {"name": "mcp__broken__anything", "arguments": {}}
        ]},
        {"text": "end"}
    ]});
    std::fs::write(&fixture, script.to_string()).unwrap();
    let output = ctx
        .dsh()
        .arg("replay")
        .arg(&fixture)
        .arg("--mcp-config")
        .arg(&extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "stderr: {stderr}");
    assert!(
        stderr.contains("mcp: broken (dynamic): failed: MCP server `broken`"),
        "{stderr}"
    );
    assert!(stderr.contains("no luck"), "{stderr}");
    assert!(
        stderr.contains("mcp: unset (dynamic): failed:") && stderr.contains("DSH_TEST_NOT_SET"),
        "{stderr}"
    );
    let log: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let notices = log[0]["notices"].as_array().unwrap();
    assert_eq!(notices[0], "mcp: echo (dynamic): connected, 6 tools");
    let results = of_type(&log, "tool/result");
    assert_eq!(results[0]["content"], "ECHO-TEXT: plain");
    // The failed server offers no tools: the call is an unknown tool.
    assert_eq!(results[1]["is_error"], true);
    assert!(
        results[1]["content"]
            .as_str()
            .unwrap()
            .starts_with("Unknown tool `mcp__broken__anything`"),
        "{}",
        results[1]
    );
}

/// `--mcp-config` takes the JSON itself, as Claude Code does (the Python
/// Agent SDK passes it that way): the server starts and its tool runs.
#[test]
fn replay_with_inline_mcp_config_json_runs_the_server() {
    let ctx = TestContext::new();
    let config = json!({"mcpServers": {"echo": {"command": "python3", "args": [server()]}}});
    let fixture = ctx.project().join("fixture.json");
    let script = json!({"prompts": ["go"], "model": [
        {"tool_calls": [{"name": "mcp__echo__echo_text", "arguments": {"text": "inline"}}]},
        {"text": "end"}
    ]});
    std::fs::write(&fixture, script.to_string()).unwrap();
    let output = ctx
        .dsh()
        .arg("replay")
        .arg(&fixture)
        .arg("--mcp-config")
        .arg(config.to_string())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "stderr: {stderr}");
    let log: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let notices = log[0]["notices"].as_array().unwrap();
    assert_eq!(notices[0], "mcp: echo (dynamic): connected, 6 tools");
    let results = of_type(&log, "tool/result");
    assert_eq!(results[0]["content"], "ECHO-TEXT: inline");
}

#[test]
fn malformed_inline_mcp_config_json_is_refused_clearly() {
    let ctx = TestContext::new();
    let output = ctx
        .dsh()
        .args(["-p", "hi", "--mcp-config", r#"{"mcpServers": {"echo": }"#])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--mcp-config")
            && stderr.contains("not valid JSON (expected value at line 1 column"),
        "{stderr}"
    );
}

#[test]
fn malformed_codex_config_toml_is_named_with_its_line() {
    let ctx = TestContext::new();
    let codex = ctx.home().join(".codex");
    std::fs::create_dir_all(&codex).unwrap();
    std::fs::write(codex.join("config.toml"), "model = \n").unwrap();
    let output = ctx.dsh().args(["mcp", "list"]).output().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    // The file is Codex's whole configuration, not an MCP file: the error
    // says what dsh was reading it for.
    assert!(
        stderr.contains("cannot read MCP servers from")
            && stderr.contains(".codex/config.toml")
            && stderr.contains("line 1"),
        "{stderr}"
    );
}

#[test]
fn mcp_list_shows_servers_sources_and_tools() {
    let ctx = TestContext::new();
    project_server(&ctx);
    // Approved where Claude Code's dialog records it.
    std::fs::write(
        ctx.home().join(".claude.json"),
        json!({
            "mcpServers": {"far": {"type": "http", "url": "https://example.invalid/mcp"}},
            "projects": {ctx.project().display().to_string(): {"enabledMcpjsonServers": ["echo"]}},
        })
        .to_string(),
    )
    .unwrap();
    let output = ctx
        .dsh()
        .env("MCP_SERVER", server())
        .args(["mcp", "list", "--json"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["name"], "echo");
    assert_eq!(lines[0]["source"], "project");
    assert_eq!(lines[0]["consent"], "approved");
    assert_eq!(
        lines[0]["consent_by"],
        format!(
            "enabledMcpjsonServers in {}",
            ctx.home().join(".claude.json").display()
        )
    );
    assert_eq!(lines[0]["status"], "connected");
    assert_eq!(
        lines[0]["tools"],
        json!(["echo", "echo_text", "fail", "crash", "env", "slow"])
    );
    assert_eq!(lines[1]["name"], "far");
    assert_eq!(lines[1]["source"], "user");
    assert_eq!(lines[1]["consent"], "approved");
    assert_eq!(lines[1]["status"], "failed");
    assert!(
        lines[1]["reason"]
            .as_str()
            .unwrap()
            .contains("not supported")
    );

    // An invalid configuration names the file and the server.
    std::fs::write(
        ctx.project().join(".mcp.json"),
        r#"{"mcpServers":{"bad":{"args":[]}}}"#,
    )
    .unwrap();
    let output = ctx.dsh().args(["mcp", "list"]).output().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(".mcp.json") && stderr.contains("`bad`"),
        "{stderr}"
    );
}

/// `dsh mcp list` asks nobody, so it starts only what a session starts
/// unasked: a project server nobody approved is listed as such and never
/// started (its command would leave a marker file), a disabled one is
/// listed with the setting that disables it.
#[test]
fn mcp_list_never_starts_a_project_server_nobody_approved() {
    let ctx = TestContext::new();
    let marker = ctx.home().join("started");
    let config = json!({"mcpServers": {
        "sneaky": {"command": "sh", "args": ["-c", format!("touch '{}'", marker.display())]},
        "off": {"command": "sh", "args": ["-c", format!("touch '{}.off'", marker.display())]},
    }});
    std::fs::write(ctx.project().join(".mcp.json"), config.to_string()).unwrap();
    std::fs::create_dir_all(ctx.home().join(".claude")).unwrap();
    let user_settings = ctx.home().join(".claude").join("settings.json");
    std::fs::write(&user_settings, r#"{"disabledMcpjsonServers":["off"]}"#).unwrap();

    let output = ctx.dsh().args(["mcp", "list", "--json"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let lines: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mcp_json = ctx.project().join(".mcp.json");
    assert_eq!(
        lines,
        vec![
            json!({"name": "sneaky", "source": "project", "file": mcp_json,
                   "consent": "not approved", "consent_by": null,
                   "status": "not started", "reason": null, "tools": []}),
            json!({"name": "off", "source": "project", "file": mcp_json,
                   "consent": "disabled",
                   "consent_by": format!("disabledMcpjsonServers in {}", user_settings.display()),
                   "status": "not started", "reason": null, "tools": []}),
        ]
    );
    let output = ctx.dsh().args(["mcp", "list"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(&format!(
            "sneaky  project  {}  not approved (approve it in Claude Code",
            mcp_json.display()
        )) && stdout.contains("`dsh hooks trust`): not started"),
        "{stdout}"
    );
    assert!(
        stdout.contains("off  project") && stdout.contains("disabled (disabledMcpjsonServers in"),
        "{stdout}"
    );
    std::thread::sleep(Duration::from_millis(200));
    assert!(!marker.exists(), "the unapproved server was started");
    assert!(
        !marker.with_extension("off").exists(),
        "the disabled server was started"
    );

    // Once the workspace is trusted, the session would start it, and so
    // does the list.
    let output = ctx.dsh().args(["hooks", "trust"]).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let output = ctx.dsh().args(["mcp", "list", "--json"]).output().unwrap();
    let first: Value = serde_json::from_str(
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(first["consent"], "approved");
    assert!(
        first["consent_by"]
            .as_str()
            .unwrap()
            .contains("dsh hooks trust"),
        "{first}"
    );
    assert!(marker.exists(), "a trusted workspace's server starts");
}

#[test]
fn a_killed_dsh_takes_its_mcp_servers_with_it() {
    use crate::cli_signals::{finish, send, spawn_dsh, wait_for};
    use dsh_provider::mock::MockReply;

    let ctx = TestContext::new();
    // The server's leader records its pid, and outlives the server's EOF on stdin (as a
    // careless server would): only a kill of the whole group ends it.
    let pid_file = ctx.home().join("server.pid");
    let config = json!({"mcpServers": {"echo": {
        "command": "bash",
        "args": ["-c", "echo $$ > \"$0\"; python3 \"$1\"; sleep 300", pid_file, server()],
    }}});
    std::fs::write(ctx.project().join(".mcp.json"), config.to_string()).unwrap();
    let provider = mock(vec![MockResponse::Reply(
        MockReply::text("slow").with_delay(Duration::from_secs(30)),
    )]);
    let child = spawn_dsh(&ctx, &provider, &["-p", "hello"]);
    // The request is only sent once the servers have started.
    assert!(wait_for(Duration::from_secs(20), || !provider
        .requests()
        .is_empty()));
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(alive(pid));
    send(&child, "KILL");
    let _ = finish(child);
    // dsh had no chance to clean up: the watchdog kills the server's group.
    let gone = wait_gone(pid);
    if !gone {
        // Do not leave it behind when the test fails.
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    assert!(gone, "MCP server {pid} survived a SIGKILLed dsh");
}

/// `--mcp-config` file with the test server, `big` tool included, as `echo`.
fn big_server_config(ctx: &TestContext) -> PathBuf {
    let path = ctx.project().join("big-mcp.json");
    let config = json!({"mcpServers": {"echo": {
        "command": "python3",
        "args": [server(), "--big"],
    }}});
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

/// Runs one `big` call of `bytes` bytes with `MAX_MCP_OUTPUT_TOKENS` set to
/// `max_tokens` (unset for `None`); returns what the model saw of it, the
/// session log's path and the second model request's size.
fn big_call(ctx: &TestContext, bytes: u64, max_tokens: Option<&str>) -> (String, PathBuf, usize) {
    limited_call(ctx, "mcp__echo__big", &json!({"bytes": bytes}), max_tokens)
}

/// Runs one call of `tool` with `arguments` (see [`big_call`]).
fn limited_call(
    ctx: &TestContext,
    tool: &str,
    arguments: &Value,
    max_tokens: Option<&str>,
) -> (String, PathBuf, usize) {
    let config = big_server_config(ctx);
    let provider = mock(vec![
        MockResponse::tool_calls("", vec![MockToolCall::new("call_1", tool, arguments)]),
        MockResponse::text("Done."),
    ]);
    let mut command = dsh(ctx, &provider);
    command.env_remove("MAX_MCP_OUTPUT_TOKENS");
    if let Some(max) = max_tokens {
        command.env("MAX_MCP_OUTPUT_TOKENS", max);
    }
    let output = command
        .arg("--mcp-config")
        .arg(&config)
        .args(["-p", "Big", "--permission-mode", "bypassPermissions"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "stderr: {stderr}");
    let requests = provider.requests();
    let size = requests[1].to_string().len();
    let last = requests[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "tool");
    let seen = last["content"].as_str().unwrap().to_owned();
    // The log keeps exactly what the model saw.
    let logs = session_logs(ctx);
    let events = events(&logs[0]);
    let results = of_type(&events, "tool/result");
    assert_eq!(results[0]["content"], seen.as_str());
    (seen, logs[0].clone(), size)
}

/// The saved file's path in `seen`, between `before` and `after`; it must lie
/// in the session's `tool-results` directory.
fn saved_path(seen: &str, before: &str, after: &str, log: &Path) -> PathBuf {
    let start = seen.find(before).unwrap_or_else(|| panic!("{seen}")) + before.len();
    let end = start + seen[start..].find(after).unwrap();
    let path = PathBuf::from(&seen[start..end]);
    assert_eq!(
        path.parent().unwrap(),
        log.with_extension("").join("tool-results")
    );
    path
}

#[test]
fn a_big_mcp_result_is_saved_and_the_model_sees_a_preview() {
    // Claude Code's default: over 50,000 characters the content is saved
    // as pretty JSON and the model gets the first 2,000 characters.
    let ctx = TestContext::new();
    let (seen, log, size) = big_call(&ctx, 5_000_000, None);
    assert!(size < 100_000, "the second request is {size} bytes");
    assert!(
        seen.starts_with("<persisted-output>\nOutput too large (4882.9KB). Full output saved to: "),
        "{}",
        &seen[..200]
    );
    let path = saved_path(&seen, "Full output saved to: ", "\n", &log);
    // Named after the call's execution id (Claude Code: the tool use id).
    assert_eq!(path.extension().unwrap(), "json");
    let saved = std::fs::read_to_string(&path).unwrap();
    let blocks: Value = serde_json::from_str(&saved).unwrap();
    assert_eq!(blocks[0]["text"].as_str().unwrap().len(), 5_000_000);
    let preview: String = saved.chars().take(2_000).collect();
    assert!(seen.ends_with(&format!(
        "Preview (first 2KB):\n{preview}\n...\n</persisted-output>"
    )));
    let log_size = std::fs::metadata(&log).unwrap().len();
    assert!(log_size < 200_000, "the session log is {log_size} bytes");
}

#[test]
fn max_mcp_output_tokens_sets_the_limit_in_characters_over_four() {
    // 400 characters are 100 tokens: within the limit.
    let ctx = TestContext::new();
    let (seen, _, _) = big_call(&ctx, 400, Some("100"));
    assert_eq!(seen.len(), 400);
    assert!(seen.starts_with("<xxx"));
    // 401 are over it: saved as text, and the model gets Claude Code's error.
    let ctx = TestContext::new();
    let (seen, log, _) = big_call(&ctx, 4_011, Some("100"));
    assert!(
        seen.starts_with(
            "Error: result (4,011 characters across 1 line) exceeds maximum allowed tokens. \
             Output has been saved to "
        ),
        "{seen}"
    );
    let path = saved_path(
        &seen,
        "Output has been saved to ",
        ".\nFormat: Plain text\n",
        &log,
    );
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("mcp-echo-big-") && name.ends_with(".txt"),
        "{name}"
    );
    let saved = std::fs::read_to_string(&path).unwrap();
    assert_eq!(saved.len(), 4_011);
    assert!(saved.starts_with("<xxx") && saved.ends_with("xx>"));
}

/// `text` with the saved file's path (the word after `marker`, a final `.`
/// dropped) replaced by `<PATH>` everywhere.
fn without_saved_path(text: &str, marker: &str) -> String {
    let start = text
        .find(marker)
        .unwrap_or_else(|| panic!("no {marker:?} in {text}"))
        + marker.len();
    let word = text[start..].split_whitespace().next().unwrap();
    let path = word.strip_suffix('.').unwrap_or(word);
    text.replace(path, "<PATH>")
}

#[test]
fn mcp_output_limits_match_the_claude_code_captures() {
    // fixtures/claude/captures/mcp_*: the same echo_text call, with and
    // without MAX_MCP_OUTPUT_TOKENS; the model-facing text must be Claude
    // Code's but for the saved file's path (dsh saves under its session).
    for (scenario, marker) in [
        ("mcp_max_output_tokens", "Output has been saved to "),
        ("mcp_default_output_limit", "Full output saved to: "),
    ] {
        let dir = repo_root().join("fixtures/claude/captures").join(scenario);
        let read = |name: &str| -> Value {
            serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap()
        };
        let setup = read("scenario.json");
        let call = &setup["mock"]["main"][0]["content"][0];
        let max_tokens = setup["env"]["MAX_MCP_OUTPUT_TOKENS"].as_str();
        let model = read("model.json");
        let captured = model[1]["new_or_changed"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|message| message["content"].as_array().unwrap().iter())
            .find(|block| block["type"] == "tool_result")
            .unwrap()["content"]
            .as_str()
            .unwrap()
            .to_owned();
        let ctx = TestContext::new();
        let (seen, _, _) = limited_call(
            &ctx,
            call["name"].as_str().unwrap(),
            &call["input"],
            max_tokens,
        );
        assert_eq!(
            without_saved_path(&seen, marker),
            without_saved_path(&captured, marker),
            "{scenario}"
        );
    }
}

#[test]
fn oversized_and_slow_mcp_answers_fail_their_calls_without_hanging_dsh() {
    let ctx = TestContext::new();
    let config = big_server_config(&ctx);
    let provider = mock(vec![
        MockResponse::tool_calls(
            "",
            vec![
                MockToolCall::new(
                    "call_big",
                    "mcp__echo__big",
                    &json!({"bytes": 17 * 1024 * 1024}),
                ),
                MockToolCall::new("call_slow", "mcp__echo__slow", &json!({"seconds": 60})),
            ],
        ),
        MockResponse::text("Done."),
    ]);
    let mut child = ctx
        .dsh_std()
        .env("DSH_BASE_URL", provider.base_url())
        .env("DSH_API_KEY", "sk-test")
        .env("MCP_TOOL_TIMEOUT", "8000")
        .arg("--mcp-config")
        .arg(&config)
        .args(["-p", "Go", "--permission-mode", "bypassPermissions"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The timeout leaves the oversized answer time to arrive (it fails at
    // once, long before 8 s). The test's own wait is bounded: a hang fails
    // it instead of hanging it.
    let deadline = Instant::now() + Duration::from_secs(90);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("dsh hung on an oversized or slow MCP answer");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "stderr: {stderr}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "Done.\n");

    let requests = provider.requests();
    let messages = requests[1]["messages"].as_array().unwrap();
    let result = |id: &str| {
        messages
            .iter()
            .find(|message| message["role"] == "tool" && message["tool_call_id"] == id)
            .unwrap_or_else(|| panic!("no result for {id}"))["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(
        result("call_big"),
        "MCP server `echo` answered `big` with a message of 16 MiB or more, which the MCP \
         client drops; no result (ask the tool for less)"
    );
    assert_eq!(
        result("call_slow"),
        "MCP tool `slow` on server `echo` did not answer within 8000 ms"
    );
}
