//! dsh's own limits never turn a deny into an allow: a decision larger than
//! the log's capture still decides, one larger than the decision buffer
//! fails closed on blocking events and only warns elsewhere.

use std::path::Path;

use crate::support::{TestContext, events_of};

/// A fixture whose one tool call would create `ran` in the project.
const TOUCH_FIXTURE: &str = r#"{
  "prompts": ["make the file"],
  "model": [
    { "tool_calls": [ { "name": "bash", "arguments": { "command": "touch ran" } } ] },
    { "text": "done" }
  ]
}"#;

/// The Python program a hook runs: `padding` bytes of whitespace, then a
/// JSON object with a deny reason of `reason_len` characters.
fn deny_script(padding: usize, reason_len: usize, json: &str) -> String {
    format!(
        "import sys\nsys.stdout.write(' ' * {padding})\nreason = 'x' * {reason_len}\nsys.stdout.write({json})\n"
    )
}

const CLAUDE_DENY: &str = r#"'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "' + reason + '"}}'"#;
const CODEX_DENY: &str = r#"'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "' + reason + '"}}'"#;

fn claude_project(ctx: &TestContext, event: &str, script: &str) {
    let dir = ctx.project().join(".claude");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("hook.py"), script).unwrap();
    let settings = serde_json::json!({
        "hooks": { event: [ { "matcher": "*", "hooks": [
            { "type": "command", "command": "python3 .claude/hook.py" } ] } ] }
    });
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
}

fn codex_user_hooks(ctx: &TestContext, event: &str, script: &str) {
    let dir = ctx.home().join(".codex");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("hook.py"), script).unwrap();
    let hooks = serde_json::json!({
        "hooks": { event: [ { "matcher": "*", "hooks": [
            { "type": "command", "command": format!("python3 {}", dir.join("hook.py").display()) } ] } ] }
    });
    std::fs::write(dir.join("hooks.json"), hooks.to_string()).unwrap();
}

struct Replay {
    log: String,
    stderr: String,
}

fn replay(ctx: &TestContext) -> Replay {
    std::fs::write(ctx.project().join("fixture.json"), TOUCH_FIXTURE).unwrap();
    let output = ctx.dsh().args(["replay", "fixture.json"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "replay failed: {stderr}");
    Replay {
        log: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr,
    }
}

fn tool_result(log: &str) -> (bool, String) {
    let results = events_of(log, "tool/result");
    assert_eq!(results.len(), 1, "{log}");
    (
        results[0]["is_error"].as_bool().unwrap(),
        results[0]["content"].as_str().unwrap().to_owned(),
    )
}

fn ran(project: &Path) -> bool {
    project.join("ran").exists()
}

const SEVENTEEN_MIB: usize = 17 * 1024 * 1024;

#[test]
fn claude_a_deny_larger_than_the_log_capture_still_denies() {
    let ctx = TestContext::new();
    claude_project(&ctx, "PreToolUse", &deny_script(0, 1_200_000, CLAUDE_DENY));
    let run = replay(&ctx);
    assert!(!ran(&ctx.project()), "the denied call ran");
    let (is_error, content) = tool_result(&run.log);
    assert!(is_error);
    assert!(!content.contains("dsh could not read"), "{content:.300}");
}

#[test]
fn claude_output_past_the_decision_buffer_fails_closed_on_pre_tool_use() {
    let ctx = TestContext::new();
    claude_project(
        &ctx,
        "PreToolUse",
        &deny_script(SEVENTEEN_MIB, 10, CLAUDE_DENY),
    );
    let run = replay(&ctx);
    assert!(
        !ran(&ctx.project()),
        "the call ran although the hook's decision was unreadable"
    );
    let (is_error, content) = tool_result(&run.log);
    assert!(is_error);
    assert!(
        content.contains("dsh could not read this hook's decision"),
        "{content}"
    );
    assert!(
        run.stderr
            .contains("dsh could not read this hook's decision"),
        "no visible notice: {}",
        run.stderr
    );
}

#[test]
fn claude_output_past_the_decision_buffer_only_warns_on_post_tool_use() {
    let ctx = TestContext::new();
    claude_project(
        &ctx,
        "PostToolUse",
        &deny_script(SEVENTEEN_MIB, 10, CLAUDE_DENY),
    );
    let run = replay(&ctx);
    assert!(
        ran(&ctx.project()),
        "a non-blocking event must not stop the call"
    );
    assert!(
        run.stderr
            .contains("dsh could not read this hook's decision"),
        "no visible notice: {}",
        run.stderr
    );
}

#[test]
fn codex_a_deny_larger_than_the_log_capture_still_denies() {
    let ctx = TestContext::new();
    codex_user_hooks(&ctx, "PreToolUse", &deny_script(0, 1_200_000, CODEX_DENY));
    let run = replay(&ctx);
    assert!(!ran(&ctx.project()), "the denied call ran");
    let (is_error, content) = tool_result(&run.log);
    assert!(is_error);
    assert!(!content.contains("dsh could not read"), "{content:.300}");
}

#[test]
fn codex_output_past_the_decision_buffer_fails_closed_on_pre_tool_use() {
    let ctx = TestContext::new();
    codex_user_hooks(
        &ctx,
        "PreToolUse",
        &deny_script(SEVENTEEN_MIB, 10, CODEX_DENY),
    );
    let run = replay(&ctx);
    assert!(
        !ran(&ctx.project()),
        "the call ran although the hook's decision was unreadable"
    );
    let (is_error, content) = tool_result(&run.log);
    assert!(is_error);
    assert!(
        content.contains("dsh could not read this hook's decision"),
        "{content}"
    );
    assert!(
        run.stderr
            .contains("dsh could not read this hook's decision"),
        "no visible notice: {}",
        run.stderr
    );
}

/// A missing script is the hook's own failure (exit 127 from the shell):
/// Claude Code treats it as a non-blocking error, and so does dsh.
#[test]
fn claude_a_missing_script_stays_a_non_blocking_error() {
    let ctx = TestContext::new();
    let dir = ctx.project().join(".claude");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = serde_json::json!({
        "hooks": { "PreToolUse": [ { "matcher": "*", "hooks": [
            { "type": "command", "command": "./.claude/no-such-hook.sh" } ] } ] }
    });
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
    let _ = replay(&ctx);
    assert!(ran(&ctx.project()), "a missing script must not block");
}
