//! `dsh -p`, `dsh sessions`, `--resume` and `--continue` against the
//! loopback mock provider (nothing leaves 127.0.0.1; HOME and DSH_HOME are
//! temporary).

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use std::path::{Path, PathBuf};

use dsh_provider::mock::{MockProvider, MockResponse, MockToolCall};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::TestContext;

/// A mock serving `script`; fails the test if it cannot bind loopback.
pub(crate) fn mock(script: Vec<MockResponse>) -> MockProvider {
    MockProvider::start_blocking(script).expect("mock provider on 127.0.0.1")
}

/// `dsh` in the context's project, pointed at the mock with a test key.
pub(crate) fn dsh(ctx: &TestContext, mock: &MockProvider) -> assert_cmd::Command {
    let mut cmd = ctx.dsh();
    cmd.env("DSH_BASE_URL", mock.base_url())
        .env("DSH_API_KEY", "sk-test");
    cmd
}

/// `$DSH_HOME/sessions/*.jsonl`, sorted.
pub(crate) fn session_logs(ctx: &TestContext) -> Vec<PathBuf> {
    let dir = ctx.home().join(".dsh").join("sessions");
    let mut logs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
                .collect()
        })
        .unwrap_or_default();
    logs.sort();
    logs
}

/// Every event of a session log, as JSON.
pub(crate) fn events(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("session log")
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

pub(crate) fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|event| event["type"] == kind)
        .collect()
}

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn write_config(ctx: &TestContext, text: &str) {
    let home = ctx.home().join(".dsh");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.toml"), text).unwrap();
}

#[test]
fn print_text_prints_the_final_answer_and_stores_the_session() {
    let ctx = TestContext::new();
    let mock = mock(vec![MockResponse::text("Hello from the mock.")]);
    let output = dsh(&ctx, &mock).args(["-p", "Say hello"]).output().unwrap();
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "Hello from the mock.\n");

    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    let messages = requests[0]["messages"].as_array().unwrap();
    assert_eq!(
        messages.last().unwrap(),
        &json!({"role": "user", "content": "Say hello"})
    );
    assert_eq!(
        mock.recorded()[0].header("authorization"),
        Some("Bearer sk-test")
    );

    let logs = session_logs(&ctx);
    assert_eq!(logs.len(), 1, "one session log");
    let events = events(&logs[0]);
    assert_eq!(events[0]["type"], "session/header");
    assert_eq!(events[0]["cwd"], ctx.project().display().to_string());
    let id = logs[0].file_stem().unwrap().to_str().unwrap();
    assert_eq!(events[0]["session_id"], id);
    let ends = of_type(&events, "turn/end");
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0]["reason"], "completed");
}

#[test]
fn print_json_is_one_claude_result_object_and_the_log_has_the_events() {
    let ctx = TestContext::new();
    let mock = mock(vec![
        MockResponse::tool_calls(
            "Let me look.",
            vec![MockToolCall::new(
                "call_1",
                "Bash",
                &json!({"command": "echo tool-output"}),
            )],
        ),
        MockResponse::text("Done."),
    ]);
    let output = dsh(&ctx, &mock)
        .args(["-p", "Run echo", "--output-format", "json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let text = stdout(&output);
    assert_eq!(text.lines().count(), 1, "one line: {text}");
    let result: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["result"], "Done.");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["num_turns"], 2);
    let logs = session_logs(&ctx);
    assert_eq!(
        result["session_id"],
        logs[0].file_stem().unwrap().to_str().unwrap()
    );
    // The log keeps dsh's own events, under dsh's tool names.
    let events = events(&logs[0]);
    let calls = of_type(&events, "tool/call");
    assert_eq!(calls[0]["tool"], "bash");
    let results = of_type(&events, "tool/result");
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["is_error"], false);
    assert!(
        results[0]["content"]
            .as_str()
            .unwrap()
            .contains("tool-output"),
        "{}",
        results[0]
    );
    // The tool's output reached the model in the second request.
    let second = &mock.requests()[1]["messages"];
    let tool_message = second
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("a tool message");
    assert!(
        tool_message["content"]
            .as_str()
            .unwrap()
            .contains("tool-output")
    );
}

#[test]
fn print_stream_json_emits_claude_messages_then_a_result_line() {
    let ctx = TestContext::new();
    let mock = mock(vec![MockResponse::text("Streamed answer.")]);
    let output = dsh(&ctx, &mock)
        .args([
            "-p",
            "Stream it",
            "--output-format",
            "stream-json",
            "--verbose",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let lines: Vec<Value> = stdout(&output)
        .lines()
        .map(|line| serde_json::from_str(line).expect("every line is JSON"))
        .collect();
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["system", "assistant", "result"]);
    let last = lines.last().unwrap();
    assert_eq!(last["result"], "Streamed answer.");
    assert_eq!(last["subtype"], "success");
    let logs = session_logs(&ctx);
    assert_eq!(
        lines[0]["session_id"],
        logs[0].file_stem().unwrap().to_str().unwrap()
    );
}

#[test]
fn a_provider_500_fails_the_turn_with_the_error_on_stderr() {
    let ctx = TestContext::new();
    write_config(&ctx, "[provider]\nmax_retries = 0\n");
    let mock = mock(vec![MockResponse::status(
        500,
        r#"{"error":"upstream exploded"}"#,
    )]);
    let output = dsh(&ctx, &mock).args(["-p", "Hello"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "");
    let err = stderr(&output);
    assert!(err.contains("500"), "{err}");
    assert!(err.contains("upstream exploded"), "{err}");
    assert!(err.contains("ended error"), "{err}");
    let events = events(&session_logs(&ctx)[0]);
    assert_eq!(of_type(&events, "turn/end")[0]["reason"], "error");
    assert_eq!(mock.remaining(), 0);
}

#[test]
fn a_retried_request_is_shown_to_the_user_and_the_turn_completes() {
    let ctx = TestContext::new();
    write_config(&ctx, "[provider]\nmax_retries = 1\n");
    let mock = mock(vec![
        MockResponse::status_retry_after(503, "0", "busy"),
        MockResponse::text("after the retry"),
    ]);
    let output = dsh(&ctx, &mock).args(["-p", "Hello"]).output().unwrap();
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output).trim(), "after the retry");
    let err = stderr(&output);
    assert!(
        err.contains("[provider] retrying the model request (attempt 1)"),
        "{err}"
    );
    assert!(err.contains("503"), "{err}");
}

#[test]
fn a_turn_that_does_not_complete_is_a_failure_in_json_too() {
    let ctx = TestContext::new();
    write_config(&ctx, "[provider]\nmax_retries = 0\n");
    let mock = mock(vec![MockResponse::status(500, "nope")]);
    let output = dsh(&ctx, &mock)
        .args(["-p", "Hello", "--output-format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
    // Claude Code's shape for an API error: success, but is_error.
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["terminal_reason"], "api_error");
    assert_eq!(result["is_error"], true);
    assert_eq!(result["api_error_status"], 500);
    assert_eq!(result["api_error_type"], "api_error");
    let text = result["result"].as_str().unwrap();
    assert!(text.starts_with("API Error: "), "{text}");
    assert!(text.contains("500"), "{text}");
}

#[test]
fn a_missing_api_key_names_the_variables_and_starts_nothing() {
    let ctx = TestContext::new();
    let mock = mock(Vec::new());
    let output = ctx
        .dsh()
        .env("DSH_BASE_URL", mock.base_url())
        .args(["-p", "Hello"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(err.contains("DSH_API_KEY"), "{err}");
    assert!(err.contains("DEEPSEEK_API_KEY"), "{err}");
    assert!(session_logs(&ctx).is_empty());
    assert!(mock.requests().is_empty());

    // The same for the interactive mode, before any prompt is read.
    let output = ctx
        .dsh()
        .env("DSH_BASE_URL", mock.base_url())
        .write_stdin("")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("DSH_API_KEY"));
}

#[test]
fn the_key_variable_can_be_renamed_in_config_toml() {
    let ctx = TestContext::new();
    write_config(
        &ctx,
        "[provider]\napi_key_env = \"MY_TEST_KEY\"\nmodel = \"my-model\"\n",
    );
    let mock = mock(vec![MockResponse::text("ok")]);
    let output = ctx
        .dsh()
        .env("DSH_BASE_URL", mock.base_url())
        .env("MY_TEST_KEY", "sk-renamed")
        .args(["-p", "Hello"])
        .output()
        .unwrap();
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(
        mock.recorded()[0].header("authorization"),
        Some("Bearer sk-renamed")
    );
    assert_eq!(mock.requests()[0]["model"], "my-model");
}

#[test]
fn sessions_lists_newest_first_with_cwd_prompt_and_turns() {
    let ctx = TestContext::new();
    let other = ctx.home().join("other-project");
    std::fs::create_dir_all(&other).unwrap();
    let mock = mock(vec![
        MockResponse::text("one"),
        MockResponse::text("two"),
        MockResponse::text("three"),
    ]);
    dsh(&ctx, &mock)
        .args(["-p", "First prompt here"])
        .assert()
        .success();
    let first = session_logs(&ctx);
    dsh(&ctx, &mock)
        .current_dir(&other)
        .args(["-p", "Second prompt elsewhere"])
        .assert()
        .success();
    let id_of = |path: &PathBuf| path.file_stem().unwrap().to_str().unwrap().to_owned();
    let first_id = id_of(&first[0]);
    let second_id = session_logs(&ctx)
        .iter()
        .map(id_of)
        .find(|id| *id != first_id)
        .unwrap();
    // A second turn in the first session makes it the newest.
    dsh(&ctx, &mock)
        .args(["-p", "Another turn", "--resume", &first_id])
        .assert()
        .success();

    let output = ctx.dsh().arg("sessions").output().unwrap();
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let text = stdout(&output);
    let first_at = text.find(&first_id).expect("first session listed");
    let second_at = text.find(&second_id).expect("second session listed");
    assert!(first_at < second_at, "newest first:\n{text}");
    assert!(text.contains("First prompt here"), "{text}");
    assert!(text.contains("Second prompt elsewhere"), "{text}");
    assert!(text.contains(&other.display().to_string()), "{text}");

    let output = ctx.dsh().args(["sessions", "--json"]).output().unwrap();
    let rows: Vec<Value> = stdout(&output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["id"], first_id);
    assert_eq!(rows[0]["turns"], 2);
    assert_eq!(rows[0]["first_prompt"], "First prompt here");
    assert_eq!(rows[0]["cwd"], ctx.project().display().to_string());
    assert_eq!(rows[1]["id"], second_id);
    assert_eq!(rows[1]["turns"], 1);
    assert_eq!(rows[1]["cwd"], other.display().to_string());
}

/// Runs a first turn, then a second one reopened with `how`; checks the
/// second request carried the first turn and the log grew by one turn.
fn resume_carries_the_first_turn(how: &dyn Fn(&str) -> Vec<String>) {
    let ctx = TestContext::new();
    let mock = mock(vec![
        MockResponse::text("First answer."),
        MockResponse::text("Second answer."),
    ]);
    let output = dsh(&ctx, &mock)
        .args(["-p", "First question", "--output-format", "json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let first: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let id = first["session_id"].as_str().unwrap().to_owned();

    let mut args = vec!["-p".to_owned(), "Second question".to_owned()];
    args.extend(how(&id));
    let output = dsh(&ctx, &mock).args(&args).output().unwrap();
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "Second answer.\n");

    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let conversation: Vec<(String, String)> = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_owned(),
                m["content"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    assert_eq!(
        conversation,
        [
            ("user".to_owned(), "First question".to_owned()),
            ("assistant".to_owned(), "First answer.".to_owned()),
            ("user".to_owned(), "Second question".to_owned()),
        ]
    );

    let logs = session_logs(&ctx);
    assert_eq!(logs.len(), 1, "no new session was created");
    let events = events(&logs[0]);
    let starts: Vec<&Value> = of_type(&events, "turn/start");
    assert_eq!(starts.len(), 2);
    assert_eq!(starts[1]["turn"], 2);
    let ends = of_type(&events, "turn/end");
    assert_eq!(ends[1]["reason"], "completed");
    assert_eq!(of_type(&events, "session/header").len(), 1);
}

#[test]
fn resume_by_id_reopens_the_session() {
    resume_carries_the_first_turn(&|id| vec!["--resume".to_owned(), id.to_owned()]);
}

#[test]
fn resume_accepts_an_unambiguous_id_prefix() {
    resume_carries_the_first_turn(&|id| vec!["-r".to_owned(), id[..8].to_owned()]);
}

#[test]
fn continue_reopens_the_newest_session_of_this_directory() {
    resume_carries_the_first_turn(&|_| vec!["--continue".to_owned()]);
}

#[test]
fn continue_without_a_session_here_is_a_clear_error() {
    let ctx = TestContext::new();
    let mock = mock(Vec::new());
    let output = dsh(&ctx, &mock)
        .args(["-p", "Hi", "--continue"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("no session to continue"),
        "{}",
        stderr(&output)
    );
    let output = dsh(&ctx, &mock)
        .args(["-p", "Hi", "--resume", "nope"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("no session nope"),
        "{}",
        stderr(&output)
    );
    assert!(mock.requests().is_empty());
}

#[test]
fn resuming_a_log_with_a_torn_tail_reports_it_and_carries_on() {
    let ctx = TestContext::new();
    let mock = mock(vec![MockResponse::text("one"), MockResponse::text("two")]);
    dsh(&ctx, &mock).args(["-p", "First"]).assert().success();
    let log = session_logs(&ctx).remove(0);
    let id = log.file_stem().unwrap().to_str().unwrap().to_owned();
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str(r#"{"seq":5,"ts":"2025-01-01T00:00:00.000Z","type":"turn/st"#);
    std::fs::write(&log, text).unwrap();

    let output = dsh(&ctx, &mock)
        .args(["-p", "Second", "--resume", &id])
        .output()
        .unwrap();
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let err = stderr(&output);
    assert!(err.contains("incomplete"), "{err}");
    assert!(err.contains(&log.display().to_string()), "{err}");
    // The torn bytes are gone and the log is whole again.
    let loaded = dsh_session::load(&log).unwrap();
    assert!(loaded.torn_tail.is_none());
    assert_eq!(
        loaded
            .events
            .iter()
            .filter(|e| e.body.type_name() == "turn/end")
            .count(),
        2
    );
}

#[test]
fn a_crashed_open_turn_is_closed_interrupted_on_resume() {
    let ctx = TestContext::new();
    let mock = mock(vec![MockResponse::text("one"), MockResponse::text("two")]);
    dsh(&ctx, &mock).args(["-p", "First"]).assert().success();
    let log = session_logs(&ctx).remove(0);
    let id = log.file_stem().unwrap().to_str().unwrap().to_owned();
    // Cut the log after turn 1's user message, as a crash would.
    let text = std::fs::read_to_string(&log).unwrap();
    let kept: Vec<&str> = text
        .lines()
        .take_while(|line| !line.contains("\"assistant/message\""))
        .collect();
    std::fs::write(&log, format!("{}\n", kept.join("\n"))).unwrap();

    let output = dsh(&ctx, &mock)
        .args(["-p", "Second", "--resume", &id])
        .output()
        .unwrap();
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let events = events(&log);
    let ends = of_type(&events, "turn/end");
    assert_eq!(ends.len(), 2);
    assert_eq!(ends[0]["turn"], 1);
    assert_eq!(ends[0]["reason"], "interrupted");
    assert_eq!(ends[1]["turn"], 2);
    assert_eq!(ends[1]["reason"], "completed");
}

/// A user-level Claude Code PreToolUse hook that answers `ask` for Bash.
pub(crate) fn install_ask_hook(ctx: &TestContext) {
    let claude = ctx.home().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join("ask.sh"),
        "cat >/dev/null\nprintf '%s' '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"ask\",\"permissionDecisionReason\":\"a person must approve shell commands\"}}'\n",
    )
    .unwrap();
    std::fs::write(
        claude.join("settings.json"),
        r#"{ "hooks": { "PreToolUse": [ { "matcher": "Bash", "hooks": [ { "type": "command", "command": "sh \"$HOME/.claude/ask.sh\"" } ] } ] } }"#,
    )
    .unwrap();
}

fn touch_then_answer(file: &str) -> Vec<MockResponse> {
    vec![
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                "call_1",
                "bash",
                &json!({ "command": format!("touch {file}") }),
            )],
        ),
        MockResponse::text("Finished."),
    ]
}

#[test]
fn headless_ask_is_a_denial_unless_allow_ask() {
    let ctx = TestContext::new();
    install_ask_hook(&ctx);
    let mock = mock(touch_then_answer("created-by-tool"));
    let output = dsh(&ctx, &mock)
        .args(["-p", "Touch a file"])
        .output()
        .unwrap();
    // The turn itself completes: the denial is the tool's result.
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "Finished.\n");
    assert!(!ctx.project().join("created-by-tool").exists());
    let events = events(&session_logs(&ctx)[0]);
    let invoked = of_type(&events, "hook/invoked");
    assert_eq!(invoked.len(), 1);
    assert_eq!(invoked[0]["event"], "PreToolUse");
    let result = of_type(&events, "tool/result")[0];
    assert_eq!(result["is_error"], true);
    assert_eq!(result["disposition"], "no_approval_service");
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .contains("a person must approve shell commands"),
        "{result}"
    );
    // The model was told.
    let told = mock.requests()[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| {
            m["role"] == "tool"
                && m["content"]
                    .as_str()
                    .unwrap_or("")
                    .contains("a person must approve")
        });
    assert!(told);
}

#[test]
fn allow_ask_answers_allow_once_in_headless() {
    let ctx = TestContext::new();
    install_ask_hook(&ctx);
    let mock = mock(touch_then_answer("created-by-tool"));
    let output = dsh(&ctx, &mock)
        .args(["-p", "Touch a file", "--allow-ask"])
        .output()
        .unwrap();
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert!(ctx.project().join("created-by-tool").exists());
    assert!(
        stderr(&output).contains("--allow-ask: allowing bash"),
        "{}",
        stderr(&output)
    );
    let events = events(&session_logs(&ctx)[0]);
    let result = of_type(&events, "tool/result")[0];
    assert_eq!(result["is_error"], false);
    assert_eq!(result["disposition"], "executed");
}

#[test]
fn headless_runs_name_untrusted_project_hooks_and_strict_refuses_them() {
    let ctx = TestContext::new();
    let claude = ctx.project().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join("settings.json"),
        r#"{ "hooks": { "UserPromptSubmit": [ { "hooks": [ { "type": "command", "command": "touch prompt-hook-ran" } ] } ] } }"#,
    )
    .unwrap();
    let mock = mock(vec![MockResponse::text("ok")]);

    let output = dsh(&ctx, &mock)
        .env("DSH_STRICT_HOOKS", "1")
        .args(["-p", "Hello"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("untrusted"), "{}", stderr(&output));
    assert!(!ctx.project().join("prompt-hook-ran").exists());
    assert!(session_logs(&ctx).is_empty());

    // The flag does the same as the variable.
    let output = dsh(&ctx, &mock)
        .args(["-p", "Hello", "--strict-hooks"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("dsh hooks trust"),
        "{}",
        stderr(&output)
    );
    assert!(!ctx.project().join("prompt-hook-ran").exists());

    let output = dsh(&ctx, &mock).args(["-p", "Hello"]).output().unwrap();
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert!(
        stderr(&output).contains("touch prompt-hook-ran"),
        "{}",
        stderr(&output)
    );
    assert!(ctx.project().join("prompt-hook-ran").exists());
}

/// `dsh -p --plugin-dir DIR` loads the plugin for the run, as `claude --plugin-dir`: its
/// UserPromptSubmit hook runs with `CLAUDE_PLUGIN_ROOT` = the directory and its context
/// reaches the model. Without the flag the plugin is not loaded.
#[test]
fn print_loads_a_plugin_dir_for_the_run() {
    let ctx = TestContext::new();
    let plugin = ctx.home().join("src/probe");
    std::fs::create_dir_all(plugin.join(".claude-plugin")).unwrap();
    std::fs::create_dir_all(plugin.join("hooks")).unwrap();
    std::fs::write(
        plugin.join(".claude-plugin/plugin.json"),
        r#"{"name": "probe", "version": "1.0.0"}"#,
    )
    .unwrap();
    std::fs::write(
        plugin.join("hooks/hooks.json"),
        r#"{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command",
            "command": "echo \"PLUGIN-ROOT=${CLAUDE_PLUGIN_ROOT}\""}]}]}}"#,
    )
    .unwrap();
    let mock = mock(vec![
        MockResponse::text("first"),
        MockResponse::text("second"),
    ]);
    let output = dsh(&ctx, &mock)
        .args(["-p", "hi", "--plugin-dir"])
        .arg(&plugin)
        .output()
        .unwrap();
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let output = dsh(&ctx, &mock).args(["-p", "hi"]).output().unwrap();
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let want = format!("PLUGIN-ROOT={}", plugin.display());
    let with = requests[0].to_string();
    assert!(with.contains(&want), "{with}");
    assert!(!requests[1].to_string().contains("PLUGIN-ROOT="));
}

/// On `-p`: Claude Code's `default` mode asks before `touch`, and
/// with nobody to ask the call is denied with the captured text.
#[test]
fn print_runs_the_default_mode_and_denies_what_needs_approval() {
    let ctx = TestContext::new();
    let mock = mock(touch_then_answer("made.txt"));
    let output = dsh(&ctx, &mock)
        .args(["-p", "Touch a file"])
        .output()
        .unwrap();
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert!(!ctx.project().join("made.txt").exists());
    let events = events(&session_logs(&ctx)[0]);
    let result = of_type(&events, "tool/result")[0];
    assert_eq!(result["is_error"], true, "{result}");
    let project = ctx.project().canonicalize().unwrap();
    let expected = format!("touch in '{}/made.txt' needs approval.", project.display());
    assert!(
        result["content"].as_str().unwrap().contains(&expected),
        "{result}"
    );
}

#[test]
fn print_takes_the_mode_and_rule_flags() {
    let ctx = TestContext::new();
    let provider = mock(touch_then_answer("by-mode.txt"));
    let output = dsh(&ctx, &provider)
        .args(["-p", "Touch", "--permission-mode", "bypassPermissions"])
        .output()
        .unwrap();
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert!(ctx.project().join("by-mode.txt").exists());

    let provider = mock(touch_then_answer("by-rule.txt"));
    let output = dsh(&ctx, &provider)
        .args(["-p", "Touch", "--allowed-tools", "Bash(touch:*)"])
        .output()
        .unwrap();
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert!(ctx.project().join("by-rule.txt").exists());

    // A deny rule wins over bypassPermissions.
    let provider = mock(touch_then_answer("denied.txt"));
    let output = dsh(&ctx, &provider)
        .args([
            "-p",
            "Touch",
            "--permission-mode",
            "bypassPermissions",
            "--disallowedTools",
            "Bash(touch:*)",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert!(!ctx.project().join("denied.txt").exists());
}

#[test]
fn print_reads_default_mode_from_settings() {
    let ctx = TestContext::new();
    let dir = ctx.home().join(".claude");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("settings.json"),
        r#"{"permissions":{"defaultMode":"acceptEdits"}}"#,
    )
    .unwrap();
    let provider = mock(touch_then_answer("accepted.txt"));
    let output = dsh(&ctx, &provider).args(["-p", "Touch"]).output().unwrap();
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    // acceptEdits runs file commands inside the project.
    assert!(ctx.project().join("accepted.txt").exists());
}

/// StopFailure end to end: the real provider client's typed
/// failure reaches the Claude Code bridge — category, Claude Code's 529 text
/// naming the endpoint — and SessionEnd still runs.
#[test]
fn a_provider_529_fires_stop_failure_hooks_and_session_end_still_runs() {
    let ctx = TestContext::new();
    write_config(&ctx, "[provider]\nmax_retries = 0\n");
    let claude = ctx.home().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    let settings = json!({"hooks": {
        "StopFailure": [{"matcher": "server_error", "hooks": [
            {"type": "command", "command": "cat > \"$HOME/stopfailure.json\""}
        ]}],
        "SessionEnd": [{"hooks": [
            {"type": "command", "command": "cat > \"$HOME/sessionend.json\""}
        ]}]
    }});
    std::fs::write(claude.join("settings.json"), settings.to_string()).unwrap();
    let mock = mock(vec![MockResponse::status(
        529,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
    )]);
    let output = dsh(&ctx, &mock).args(["-p", "Hello"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "stderr: {}", stderr(&output));
    let stdin: Value = serde_json::from_str(
        &std::fs::read_to_string(ctx.home().join("stopfailure.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(stdin["hook_event_name"], "StopFailure");
    assert_eq!(stdin["error"], "server_error");
    let gateway = mock
        .base_url()
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    assert_eq!(
        stdin["last_assistant_message"],
        format!(
            "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway ({gateway})."
        )
    );
    let end: Value =
        serde_json::from_str(&std::fs::read_to_string(ctx.home().join("sessionend.json")).unwrap())
            .unwrap();
    assert_eq!(end["hook_event_name"], "SessionEnd");
    let events = events(&session_logs(&ctx)[0]);
    let invoked: Vec<&str> = of_type(&events, "hook/invoked")
        .iter()
        .map(|e| e["seam"].as_str().unwrap())
        .collect();
    assert_eq!(invoked, ["turn-failed", "session-end"]);
}

/// A StopFailure hook that finishes after the session's next turn has begun
/// is recorded once it is collected — in the turn that collects it, or at
/// session end outside every turn — and never refused by the log.
#[test]
fn a_finished_stop_failure_hook_is_recorded_and_the_next_turn_runs() {
    let ctx = TestContext::new();
    std::fs::create_dir_all(ctx.project().join(".claude")).unwrap();
    std::fs::write(
        ctx.project().join(".claude/settings.json"),
        r#"{"hooks": {"StopFailure": [{"hooks": [{"type": "command", "command": "cat > /dev/null"}]}]}}"#,
    )
    .unwrap();
    std::fs::write(
        ctx.project().join("f.json"),
        r#"{"prompts": ["one", "two"], "model": [{"error": {"status": 429, "message": "slow"}}, {"text": "ok"}]}"#,
    )
    .unwrap();
    let output = ctx.dsh().args(["replay", "f.json"]).output().unwrap();
    let log: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let results: Vec<(&Value, &str)> = log
        .iter()
        .filter(|e| e["type"] == "hook/result")
        .map(|e| (&e["turn"], e["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[0], (&json!(1), "detached"));
    assert_eq!(results[1].1, "exited");
    let ends: Vec<&Value> = log
        .iter()
        .filter(|e| e["type"] == "turn/end")
        .map(|e| &e["reason"])
        .collect();
    assert_eq!(ends, [&json!("error"), &json!("completed")]);
}
