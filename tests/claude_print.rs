//! `dsh -p` as Claude Code's print mode, against the loopback mock
//! provider: the command line (switch, positional and stdin prompts, every
//! flag taking effect) and the `json` / `stream-json` messages compared
//! with what Claude Code 2.1.328 printed for the same runs
//! (`fixtures/claude/print/`, see its README).

use dsh_provider::mock::{MockReply, MockResponse, MockToolCall};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::cli_headless::{dsh, events, mock, session_logs};
use crate::support::{TestContext, fixture};

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn lines(output: &std::process::Output) -> Vec<Value> {
    stdout(output)
        .lines()
        .map(|line| serde_json::from_str(line).expect("every stdout line is JSON"))
        .collect()
}

/// A captured run: its messages.
fn captured(name: &str) -> Vec<Value> {
    std::fs::read_to_string(fixture(&format!("claude/print/{name}.jsonl")))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn kind(message: &Value) -> String {
    assert!(message["type"].is_string(), "no type: {message}");
    match message["subtype"].as_str() {
        Some(subtype) if message["type"] != "result" => {
            format!("{}/{subtype}", message["type"].as_str().unwrap())
        }
        _ => message["type"].as_str().unwrap().to_owned(),
    }
}

fn keys(value: &Value) -> Vec<String> {
    value.as_object().unwrap().keys().cloned().collect()
}

/// dsh's keys appear in the order Claude Code writes them: each is one of
/// the captured message's keys and they keep its order (dsh leaves out
/// what it cannot fill truthfully, never adds or reorders).
fn assert_keys_in_claude_order(ours: &Value, theirs: &Value) {
    let theirs = keys(theirs);
    let positions: Vec<usize> = keys(ours)
        .iter()
        .map(|key| {
            theirs
                .iter()
                .position(|t| t == key)
                .unwrap_or_else(|| panic!("`{key}` is not a key Claude Code writes: {ours}"))
        })
        .collect();
    assert!(
        positions.windows(2).all(|w| w[0] < w[1]),
        "keys out of Claude Code's order: {:?} vs {theirs:?}",
        keys(ours)
    );
}

fn result_of(output: &std::process::Output) -> Value {
    let text = stdout(output);
    assert_eq!(text.lines().count(), 1, "one line: {text}");
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_claude_p_json_script_runs_unchanged() {
    let ctx = TestContext::new();
    let mock = mock(vec![MockResponse::text("Hello from the mock.")]);
    // The script as written for Claude Code; `claude` on PATH is dsh.
    let bin = ctx.home().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(crate::support::dsh_bin(), bin.join("claude")).unwrap();
    let script = r#"set -e
answer=$(claude -p "Say hello" --output-format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"])')
echo "got: $answer""#;
    let output = std::process::Command::new("sh")
        .args(["-c", script])
        .current_dir(ctx.project())
        .env_clear()
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("HOME", ctx.home())
        .env("DSH_HOME", ctx.home().join(".dsh"))
        .env("DSH_BASE_URL", mock.base_url())
        .env("DSH_API_KEY", "sk-test")
        .output()
        .unwrap();
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "got: Hello from the mock.\n");
}

#[test]
fn json_result_has_claude_codes_keys_order_and_values() {
    let ctx = TestContext::new();
    let mock = mock(vec![MockResponse::text("Hello from the mock.")]);
    // The prompt after the flags, as the issue's failing example had it.
    let output = dsh(&ctx, &mock)
        .args(["-p", "--output-format", "json", "Say hello"])
        .output()
        .unwrap();
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let ours = result_of(&output);
    let theirs = &captured("cli_json_text")[0];
    assert_keys_in_claude_order(&ours, theirs);
    for key in [
        "type",
        "subtype",
        "is_error",
        "num_turns",
        "result",
        "permission_denials",
        "terminal_reason",
        "stop_reason",
        "api_error_status",
    ] {
        assert_eq!(ours[key], theirs[key], "{key}");
    }
    for key in ["duration_ms", "duration_api_ms"] {
        assert!(ours[key].is_u64(), "{key}: {ours}");
    }
    assert_keys_in_claude_order(&ours["usage"], &theirs["usage"]);
    let id = ours["session_id"].as_str().unwrap();
    assert_eq!(
        session_logs(&ctx)[0].file_stem().unwrap().to_str().unwrap(),
        id
    );
}

#[test]
fn a_denied_tool_is_a_permission_denial_as_in_claude_code() {
    let ctx = TestContext::new();
    let mock = mock(vec![
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                "toolu_oracle_001",
                "Bash",
                &json!({"command": "touch x.txt", "description": "oracle step"}),
            )],
        ),
        MockResponse::text("I could not create it."),
    ]);
    let output = dsh(&ctx, &mock)
        .args(["-p", "Create x.txt", "--output-format", "json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert!(!ctx.project().join("x.txt").exists());
    let ours = result_of(&output);
    let theirs = &captured("cli_json_denied")[0];
    assert_keys_in_claude_order(&ours, theirs);
    for key in [
        "subtype",
        "is_error",
        "num_turns",
        "result",
        "permission_denials",
        "stop_reason",
    ] {
        assert_eq!(ours[key], theirs[key], "{key}");
    }
}

#[test]
fn an_api_error_is_success_with_is_error_and_exit_1() {
    let ctx = TestContext::new();
    let home = ctx.home().join(".dsh");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.toml"), "[provider]\nmax_retries = 0\n").unwrap();
    let mock = mock(vec![MockResponse::status(
        400,
        r#"{"error":{"type":"invalid_request_error","message":"oracle mock: bad request"}}"#,
    )]);
    let output = dsh(&ctx, &mock)
        .args(["-p", "Trigger an API error", "--output-format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "stderr: {}", stderr(&output));
    let ours = result_of(&output);
    let theirs = &captured("cli_json_api_error")[0];
    assert_keys_in_claude_order(&ours, theirs);
    for key in [
        "subtype",
        "is_error",
        "num_turns",
        "terminal_reason",
        "api_error_status",
        "api_error_type",
    ] {
        assert_eq!(ours[key], theirs[key], "{key}");
    }
    let text = ours["result"].as_str().unwrap();
    assert!(text.starts_with("API Error: "), "{text}");
    assert!(text.contains("oracle mock: bad request"), "{text}");
}

/// The `cli_stream_json` run: Bash allowed by `--allowedTools`, Write
/// denied (nobody can approve it in `-p`).
#[test]
fn stream_json_matches_the_captured_messages() {
    let ctx = TestContext::new();
    let project = ctx.project();
    let write_path = project.join("w.txt").display().to_string();
    let mock = mock(vec![
        MockResponse::tool_calls(
            "First bash.",
            vec![MockToolCall::new(
                "toolu_oracle_001",
                "Bash",
                &json!({"command": "touch s.txt", "description": "oracle step"}),
            )],
        ),
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                "toolu_oracle_002",
                "Write",
                &json!({"file_path": write_path, "content": "W\n"}),
            )],
        ),
        MockResponse::text("FINAL: one of two."),
    ]);
    let output = dsh(&ctx, &mock)
        .args([
            "-p",
            "Make files",
            "--output-format",
            "stream-json",
            "--verbose",
            "--allowedTools",
            "Bash",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert!(project.join("s.txt").exists());
    assert!(!project.join("w.txt").exists());
    let ours = lines(&output);
    let theirs = captured("cli_stream_json");
    let kinds = |messages: &[Value]| messages.iter().map(kind).collect::<Vec<_>>();
    assert_eq!(kinds(&ours), kinds(&theirs));
    let session_id = ours[0]["session_id"].as_str().unwrap().to_owned();
    for (mine, capture) in ours.iter().zip(&theirs) {
        assert_keys_in_claude_order(mine, capture);
        assert_eq!(mine["session_id"], session_id.as_str(), "{mine}");
        if let Some(message) = mine.get("message").filter(|m| m.is_object()) {
            assert_keys_in_claude_order(message, &capture["message"]);
            // The content blocks, ids and names included, are the captured ones.
            let redact = |text: String| text.replace(&project.display().to_string(), "<PROJECT>");
            let mine = redact(message["content"].to_string());
            let theirs = capture["message"]["content"].to_string();
            if capture["type"] == "assistant"
                || capture["message"]["content"][0]["is_error"] == false
            {
                assert_eq!(mine, theirs);
            }
        }
    }
    assert_eq!(ours[0]["cwd"], project.display().to_string());
    assert_eq!(ours[0]["permissionMode"], "default");
    let tools: Vec<&str> = ours[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    for tool in ["Bash", "Read", "Write", "Edit", "Glob", "Grep", "Agent"] {
        assert!(tools.contains(&tool), "{tools:?}");
    }
    // The denial: a system message, an error tool result, the result's list.
    assert_eq!(ours[5]["tool_name"], "Write");
    assert_eq!(ours[5]["tool_use_id"], "toolu_oracle_002");
    assert_eq!(ours[6]["message"]["content"][0]["is_error"], true);
    let result = ours.last().unwrap();
    let captured_result = theirs.last().unwrap();
    for key in ["subtype", "is_error", "num_turns", "result", "stop_reason"] {
        assert_eq!(result[key], captured_result[key], "{key}");
    }
    assert_eq!(
        result["permission_denials"],
        json!([{"tool_name": "Write", "tool_use_id": "toolu_oracle_002",
                "tool_input": {"file_path": write_path, "content": "W\n"}}])
    );
    // The model saw Claude Code's tool names.
    let offered: Vec<String> = mock.requests()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(offered.contains(&"Bash".to_owned()), "{offered:?}");
    assert!(!offered.contains(&"bash".to_owned()), "{offered:?}");
}

#[test]
fn max_turns_ends_error_max_turns_with_exit_1_and_max_steps_is_its_alias() {
    for flag in ["--max-turns", "--max-steps"] {
        let ctx = TestContext::new();
        let mock = mock(vec![
            MockResponse::tool_calls(
                "",
                vec![MockToolCall::new(
                    "toolu_oracle_001",
                    "Bash",
                    &json!({"command": "echo 1", "description": "oracle step"}),
                )],
            ),
            MockResponse::text("never reached"),
        ]);
        let output = dsh(&ctx, &mock)
            .args([
                "-p",
                "Run echo 1",
                "--output-format",
                "stream-json",
                "--verbose",
                flag,
                "1",
                "--permission-mode",
                "bypassPermissions",
            ])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{flag}: {}", stderr(&output));
        let ours = lines(&output);
        let theirs = captured("cli_stream_json_max_turns");
        assert_eq!(
            ours.iter().map(kind).collect::<Vec<_>>(),
            theirs.iter().map(kind).collect::<Vec<_>>()
        );
        let result = ours.last().unwrap();
        let captured_result = theirs.last().unwrap();
        assert_keys_in_claude_order(result, captured_result);
        for key in [
            "subtype",
            "is_error",
            "num_turns",
            "errors",
            "terminal_reason",
            "stop_reason",
        ] {
            assert_eq!(result[key], captured_result[key], "{flag} {key}");
        }
        assert_eq!(ours[0]["permissionMode"], "bypassPermissions");
        assert_eq!(mock.requests().len(), 1, "{flag}");
    }
}

#[test]
fn the_prompt_comes_from_stdin_when_none_is_given() {
    for args in [vec!["-p"], vec!["-p", "-"]] {
        let ctx = TestContext::new();
        let mock = mock(vec![MockResponse::text("from stdin")]);
        let output = dsh(&ctx, &mock)
            .args(&args)
            .write_stdin("hi there\n")
            .output()
            .unwrap();
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
        assert_eq!(stdout(&output), "from stdin\n");
        let messages = mock.requests()[0]["messages"].clone();
        assert_eq!(
            messages.as_array().unwrap().last().unwrap(),
            &json!({"role": "user", "content": "hi there"})
        );
    }
    // No prompt anywhere: Claude Code's error, nothing sent.
    let ctx = TestContext::new();
    let mock = mock(Vec::new());
    let output = dsh(&ctx, &mock)
        .args(["-p"])
        .write_stdin("")
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(
        stderr(&output)
            .contains("Input must be provided either through stdin or as a prompt argument"),
        "{}",
        stderr(&output)
    );
    assert!(mock.requests().is_empty());
}

#[test]
fn stream_json_without_verbose_is_refused_in_claude_codes_words() {
    let ctx = TestContext::new();
    let mock = mock(Vec::new());
    let output = dsh(&ctx, &mock)
        .args(["-p", "hi", "--output-format", "stream-json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr(&output),
        "Error: When using --print, --output-format=stream-json requires --verbose\n"
    );
    assert!(stdout(&output).is_empty());
    assert!(mock.requests().is_empty());
}

#[test]
fn partial_messages_stream_the_reply_as_anthropic_events() {
    let ctx = TestContext::new();
    let mock = mock(vec![MockResponse::text("Streaming text part")]);
    let output = dsh(&ctx, &mock)
        .args([
            "-p",
            "go",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let ours = lines(&output);
    let events: Vec<String> = ours
        .iter()
        .filter(|m| m["type"] == "stream_event")
        .map(|m| m["event"]["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(events.first().map(String::as_str), Some("message_start"));
    assert_eq!(events[1], "content_block_start");
    assert!(
        events
            .iter()
            .filter(|e| *e == "content_block_delta")
            .count()
            >= 2,
        "{events:?}"
    );
    assert_eq!(
        &events[events.len() - 3..],
        ["content_block_stop", "message_delta", "message_stop"]
    );
    let text: String = ours
        .iter()
        .filter(|m| m["event"]["delta"]["type"] == "text_delta")
        .map(|m| m["event"]["delta"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Streaming text part");
    // The complete assistant line comes before its block's stop.
    let assistant = ours.iter().position(|m| m["type"] == "assistant").unwrap();
    let stop = ours
        .iter()
        .position(|m| m["event"]["type"] == "content_block_stop")
        .unwrap();
    assert!(assistant < stop);
    let first_event = ours.iter().find(|m| m["type"] == "stream_event").unwrap();
    assert_eq!(
        keys(first_event),
        [
            "type",
            "event",
            "session_id",
            "parent_tool_use_id",
            "uuid",
            "api_message_id"
        ]
    );
    // Without stream-json, the flag is refused.
    let output = dsh(&ctx, &mock)
        .args(["-p", "go", "--include-partial-messages"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn json_verbose_prints_every_message_as_an_array() {
    let ctx = TestContext::new();
    let mock = mock(vec![MockResponse::text("all of it")]);
    let output = dsh(&ctx, &mock)
        .args(["-p", "go", "--output-format", "json", "--verbose"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let all: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let kinds: Vec<String> = all.as_array().unwrap().iter().map(kind).collect();
    assert_eq!(kinds, ["system/init", "assistant", "result"]);
}

fn system_prompt(request: &Value) -> String {
    request["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn system_prompt_flags_replace_and_append() {
    let ctx = TestContext::new();
    let mock = mock(vec![
        MockResponse::text("a"),
        MockResponse::text("b"),
        MockResponse::text("c"),
    ]);
    dsh(&ctx, &mock).args(["-p", "x"]).assert().success();
    dsh(&ctx, &mock)
        .args(["-p", "x", "--system-prompt", "You are a pirate."])
        .assert()
        .success();
    dsh(&ctx, &mock)
        .args([
            "-p",
            "x",
            "--append-system-prompt",
            "Always answer in French.",
        ])
        .assert()
        .success();
    let requests = mock.requests();
    let default = system_prompt(&requests[0]);
    assert_eq!(requests[0]["messages"][0]["role"], "system");
    assert_eq!(system_prompt(&requests[1]), "You are a pirate.");
    let appended = system_prompt(&requests[2]);
    assert!(appended.starts_with(&default), "{appended}");
    assert!(
        appended.ends_with("\n\nAlways answer in French."),
        "{appended}"
    );
}

#[test]
fn session_id_names_the_new_session_and_fork_session_copies_one() {
    let ctx = TestContext::new();
    let mock = mock(vec![
        MockResponse::text("first"),
        MockResponse::text("forked"),
    ]);
    let id = "6f1c3a2e-4b5d-4e6f-8a9b-0c1d2e3f4a5b";
    let output = dsh(&ctx, &mock)
        .args(["-p", "FIRST", "--output-format", "json", "--session-id", id])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(result_of(&output)["session_id"], id);
    let old_log = ctx.home().join(".dsh/sessions").join(format!("{id}.jsonl"));
    let old_events = events(&old_log);

    // The same id again: refused, nothing sent.
    let again = dsh(&ctx, &mock)
        .args(["-p", "x", "--session-id", id])
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("already in use"),
        "{}",
        stderr(&again)
    );
    // Not a UUID: Claude Code's refusal.
    let bad = dsh(&ctx, &mock)
        .args(["-p", "x", "--session-id", "nope"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad).contains("Invalid session ID"),
        "{}",
        stderr(&bad)
    );
    assert_eq!(mock.requests().len(), 1);

    let output = dsh(&ctx, &mock)
        .args([
            "-p",
            "SECOND",
            "--output-format",
            "json",
            "--resume",
            id,
            "--fork-session",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let forked = result_of(&output);
    let new_id = forked["session_id"].as_str().unwrap();
    assert_ne!(new_id, id);
    // The fork's request carried the old history; the old log is untouched.
    let second = mock.requests()[1]["messages"].to_string();
    assert!(
        second.contains("FIRST") && second.contains("SECOND"),
        "{second}"
    );
    assert_eq!(events(&old_log), old_events);
    let new_events = events(
        &ctx.home()
            .join(".dsh/sessions")
            .join(format!("{new_id}.jsonl")),
    );
    assert_eq!(new_events[0]["session_id"], new_id);
    assert!(new_events.len() > old_events.len());
}

#[test]
fn add_dir_lets_edits_reach_another_directory() {
    let ctx = TestContext::new();
    let other = tempfile::tempdir().unwrap();
    let other_dir = other.path().canonicalize().unwrap();
    let target = other_dir.join("note.txt");
    let write = |id: &str| {
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                id,
                "Write",
                &json!({"file_path": target.display().to_string(), "content": "hi\n"}),
            )],
        )
    };
    let mock = mock(vec![
        write("call_1"),
        MockResponse::text("refused"),
        write("call_2"),
        MockResponse::text("written"),
    ]);
    let output = dsh(&ctx, &mock)
        .args(["-p", "w", "--permission-mode", "acceptEdits"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        !target.exists(),
        "outside the working directories, acceptEdits asks"
    );
    let output = dsh(&ctx, &mock)
        .args([
            "-p",
            "w",
            "--permission-mode",
            "acceptEdits",
            "--output-format",
            "json",
        ])
        .arg("--add-dir")
        .arg(&other_dir)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hi\n");
    assert_eq!(result_of(&output)["permission_denials"], json!([]));
}

#[test]
fn dangerously_skip_permissions_is_bypass_permissions() {
    let ctx = TestContext::new();
    let mock = mock(vec![
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                "call_1",
                "Bash",
                &json!({"command": "touch ran.txt"}),
            )],
        ),
        MockResponse::text("done"),
    ]);
    let output = dsh(&ctx, &mock)
        .args([
            "-p",
            "go",
            "--dangerously-skip-permissions",
            "--output-format",
            "stream-json",
            "--verbose",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(ctx.project().join("ran.txt").exists());
    assert_eq!(lines(&output)[0]["permissionMode"], "bypassPermissions");
}

fn init_mcp_servers(
    ctx: &TestContext,
    mock: &dsh_provider::mock::MockProvider,
    extra: &[&str],
) -> Value {
    let output = dsh(ctx, mock)
        .args(["-p", "go", "--output-format", "stream-json", "--verbose"])
        .args(extra)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    lines(&output)[0]["mcp_servers"].clone()
}

#[test]
fn strict_mcp_config_keeps_only_the_flag_files_servers() {
    let ctx = TestContext::new();
    // A user-level server (it cannot start: `false` exits at once).
    std::fs::write(
        ctx.home().join(".claude.json"),
        r#"{"mcpServers":{"everywhere":{"command":"false"}}}"#,
    )
    .unwrap();
    let flag_file = ctx.project().join("only.json");
    std::fs::write(&flag_file, r#"{"mcpServers":{"mine":{"command":"false"}}}"#).unwrap();
    let mock = mock(vec![MockResponse::text("a"), MockResponse::text("b")]);
    let names = |servers: &Value| -> Vec<String> {
        let mut names: Vec<String> = servers
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_owned())
            .collect();
        names.sort();
        names
    };
    let flag = flag_file.display().to_string();
    let lenient = init_mcp_servers(&ctx, &mock, &["--mcp-config", &flag]);
    assert_eq!(names(&lenient), ["everywhere", "mine"]);
    let strict = init_mcp_servers(&ctx, &mock, &["--mcp-config", &flag, "--strict-mcp-config"]);
    assert_eq!(names(&strict), ["mine"]);
}

#[test]
fn fallback_model_answers_when_the_model_is_overloaded() {
    let ctx = TestContext::new();
    let home = ctx.home().join(".dsh");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.toml"), "[provider]\nmax_retries = 0\n").unwrap();
    let mock = mock(vec![
        MockResponse::status(
            529,
            r#"{"error":{"type":"overloaded_error","message":"busy"}}"#,
        ),
        MockResponse::text("from the fallback"),
    ]);
    let output = dsh(&ctx, &mock)
        .env("DSH_MODEL", "main-model")
        .args([
            "-p",
            "go",
            "--fallback-model",
            "spare-model",
            "--output-format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let result = result_of(&output);
    assert_eq!(result["result"], "from the fallback");
    let requests = mock.requests();
    assert_eq!(requests[0]["model"], "main-model");
    assert_eq!(requests[1]["model"], "spare-model");
    assert!(
        result["modelUsage"].get("spare-model").is_some(),
        "{result}"
    );
}

#[test]
fn setting_sources_all_three_run_and_a_subset_is_refused() {
    let ctx = TestContext::new();
    let mock = mock(vec![MockResponse::text("ok")]);
    dsh(&ctx, &mock)
        .args(["-p", "go", "--setting-sources", "user,project,local"])
        .assert()
        .success();
    let output = dsh(&ctx, &mock)
        .args(["-p", "go", "--setting-sources", "project"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("--setting-sources project"),
        "{}",
        stderr(&output)
    );
    assert_eq!(mock.requests().len(), 1);
}

#[test]
fn usage_and_cost_come_from_the_providers_tokens_and_the_price_table() {
    let ctx = TestContext::new();
    let reply = |text: &str| {
        MockResponse::Reply(
            MockReply::text(text)
                .with_usage(1_000, 100)
                .with_cache(400, 0),
        )
    };
    let mock = mock(vec![reply("priced"), reply("unpriced")]);
    let output = dsh(&ctx, &mock)
        .env("DSH_MODEL", "deepseek-chat")
        .args(["-p", "go", "--output-format", "json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let result = result_of(&output);
    // 600 uncached in × $0.28 + 400 cache reads × $0.028 (the mock reports
    // them as DeepSeek does) + 100 out × $0.42, per million.
    let expected = (600.0 * 0.28 + 400.0 * 0.028 + 100.0 * 0.42) / 1_000_000.0;
    let cost = result["total_cost_usd"].as_f64().unwrap();
    assert!((cost - expected).abs() < 1e-12, "{cost} vs {expected}");
    // Claude's usage counts cache reads apart from the input.
    assert_eq!(result["usage"]["input_tokens"], 600);
    assert_eq!(result["usage"]["cache_read_input_tokens"], 400);
    assert_eq!(result["usage"]["output_tokens"], 100);
    let row = &result["modelUsage"]["deepseek-chat"];
    assert_eq!(row["inputTokens"], 600);
    assert_eq!(row["cacheReadInputTokens"], 400);
    assert_eq!(row["costUSD"].as_f64().unwrap(), cost);
    assert_eq!(row["costBasis"], "list");
    assert_eq!(row["contextWindow"], 128_000);

    // A model without a list price: its tokens, a cost of 0, and a note.
    let output = dsh(&ctx, &mock)
        .env("DSH_MODEL", "house-model-7")
        .args(["-p", "go", "--output-format", "json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let result = result_of(&output);
    assert_eq!(result["total_cost_usd"], 0.0);
    let row = &result["modelUsage"]["house-model-7"];
    assert_eq!(row["outputTokens"], 100);
    assert_eq!(row["costUSD"], 0.0);
    assert_eq!(row["costBasis"], "unknown");
    assert!(
        stderr(&output).contains("no list price is known for model `house-model-7`"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_positional_prompt_without_p_starts_the_terminal_with_it() {
    let ctx = TestContext::new();
    let mock = mock(vec![MockResponse::text("Hello from the terminal.")]);
    let output = dsh(&ctx, &mock)
        .arg("Say hello")
        .write_stdin("")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("Hello from the terminal."),
        "{}",
        stdout(&output)
    );
    let messages = mock.requests()[0]["messages"].clone();
    assert_eq!(
        messages.as_array().unwrap().last().unwrap(),
        &json!({"role": "user", "content": "Say hello"})
    );
    // Print-only flags without -p are refused, not ignored.
    let output = dsh(&ctx, &mock)
        .args(["Say hello", "--output-format", "json"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("--output-format only applies with -p"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn text_verbose_names_each_tool_call_and_result_on_stderr() {
    let ctx = TestContext::new();
    let mock = mock(vec![
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                "call_1",
                "Bash",
                &json!({"command": "echo seen"}),
            )],
        ),
        MockResponse::text("done"),
    ]);
    let output = dsh(&ctx, &mock)
        .args(["-p", "go", "--verbose", "--allowedTools", "Bash"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stdout(&output), "done\n");
    let err = stderr(&output);
    assert!(
        err.contains(r#"dsh: tool Bash {"command":"echo seen"}"#),
        "{err}"
    );
    assert!(err.contains("dsh: result seen"), "{err}");
}
