//! ConfigChange and FileChanged through `dsh replay`: a settings file a tool
//! changes is applied (its permission rules) unless a ConfigChange hook keeps
//! the old settings, the hooks it adds never run in the session that saw
//! the change, and a FileChanged hook's `CLAUDE_ENV_FILE` reaches the next
//! bash call (direnv).

use serde_json::{Value, json};

use crate::cli_headless::events;
use crate::support::TestContext;

/// A project whose ConfigChange hook records its stdin and exits `exit`.
fn project(exit: i32) -> TestContext {
    let ctx = TestContext::new();
    let claude = ctx.project().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join("settings.json"),
        json!({"hooks": {"ConfigChange": [{"hooks": [{"type": "command",
            "command": format!("cat >> \"$CLAUDE_PROJECT_DIR/config_change.jsonl\"; echo >> \"$CLAUDE_PROJECT_DIR/config_change.jsonl\"; echo kept >&2; exit {exit}")}]}]}})
        .to_string(),
    )
    .unwrap();
    ctx
}

/// Replays: write `.claude/settings.local.json` (a deny rule and a new
/// PostToolUse hook), then run `touch denied`.
fn replay_settings_change(ctx: &TestContext) -> Vec<Value> {
    let local = json!({
        "permissions": {"deny": ["Bash(touch denied)"]},
        "hooks": {"PostToolUse": [{"hooks": [{"type": "command",
            "command": "touch \"$CLAUDE_PROJECT_DIR/new-hook-ran\""}]}]}
    });
    let fixture = ctx.home().join("fixture.json");
    std::fs::write(
        &fixture,
        json!({
            "prompts": ["Change the settings"],
            "model": [
                {"tool_calls": [{"id": "call_write", "name": "write", "arguments": {
                    "file_path": ctx.project().join(".claude/settings.local.json"),
                    "content": local.to_string()}}]},
                {"tool_calls": [{"id": "call_touch", "name": "bash", "arguments":
                    {"command": "touch denied"}}]},
                {"text": "DONE"}
            ]
        })
        .to_string(),
    )
    .unwrap();
    let out = ctx.home().join("session.jsonl");
    ctx.dsh()
        .current_dir(ctx.project())
        .arg("replay")
        .arg(&fixture)
        .args(["--session-id", "watch-session", "--out"])
        .arg(&out)
        .assert()
        .success();
    events(&out)
}

fn config_changes(ctx: &TestContext) -> Vec<Value> {
    std::fs::read_to_string(ctx.project().join("config_change.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn an_applied_settings_change_brings_its_rules_but_not_its_hooks() {
    let ctx = project(0);
    let log = replay_settings_change(&ctx);
    let changes = config_changes(&ctx);
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0]["hook_event_name"], "ConfigChange");
    assert_eq!(changes[0]["source"], "local_settings");
    assert_eq!(
        changes[0]["file_path"],
        ctx.project()
            .join(".claude/settings.local.json")
            .display()
            .to_string()
    );
    // The new deny rule decides the next call.
    let touch = log
        .iter()
        .find(|e| e["type"] == "tool/result" && e["call_id"] == "call_touch")
        .unwrap();
    assert_eq!(touch["is_error"], true, "{touch}");
    assert!(!ctx.project().join("denied").exists());
    // The hook the change added does not run in this session.
    assert!(!ctx.project().join("new-hook-ran").exists());
}

#[test]
fn a_blocked_settings_change_keeps_the_old_rules() {
    let ctx = project(2);
    let log = replay_settings_change(&ctx);
    assert_eq!(config_changes(&ctx).len(), 1);
    let touch = log
        .iter()
        .find(|e| e["type"] == "tool/result" && e["call_id"] == "call_touch")
        .unwrap();
    assert_ne!(touch["is_error"], true, "{touch}");
    assert!(ctx.project().join("denied").exists());
    assert!(!ctx.project().join("new-hook-ran").exists());
}

#[test]
fn a_file_changed_hook_exports_reach_the_next_bash_call() {
    let ctx = TestContext::new();
    let claude = ctx.project().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    // direnv-style: on `.envrc`, export what it says through CLAUDE_ENV_FILE.
    std::fs::write(
        claude.join("settings.json"),
        json!({"hooks": {"FileChanged": [{"matcher": ".envrc|.env", "hooks": [{"type": "command",
            "command": "cat > \"$CLAUDE_PROJECT_DIR/file_changed.json\"; cat \"$CLAUDE_PROJECT_DIR/.envrc\" >> \"$CLAUDE_ENV_FILE\""}]}]}})
        .to_string(),
    )
    .unwrap();
    let fixture = ctx.home().join("fixture.json");
    std::fs::write(
        &fixture,
        json!({
            "prompts": ["Set up the environment"],
            "model": [
                {"tool_calls": [{"id": "call_envrc", "name": "bash", "arguments":
                    {"command": "echo 'export FROM_ENVRC=loaded' > .envrc; echo x > other"}}]},
                {"tool_calls": [{"id": "call_echo", "name": "bash", "arguments":
                    {"command": "echo \"value=$FROM_ENVRC\""}}]},
                {"text": "DONE"}
            ]
        })
        .to_string(),
    )
    .unwrap();
    let out = ctx.home().join("session.jsonl");
    ctx.dsh()
        .current_dir(ctx.project())
        .arg("replay")
        .arg(&fixture)
        .args(["--session-id", "watch-session", "--out"])
        .arg(&out)
        .assert()
        .success();
    let log = events(&out);
    let payload: Value = serde_json::from_str(
        &std::fs::read_to_string(ctx.project().join("file_changed.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(payload["hook_event_name"], "FileChanged");
    assert_eq!(payload["event"], "add");
    assert_eq!(
        payload["file_path"],
        ctx.project().join(".envrc").display().to_string()
    );
    let echo = log
        .iter()
        .find(|e| e["type"] == "tool/result" && e["call_id"] == "call_echo")
        .unwrap();
    assert!(echo.to_string().contains("value=loaded"), "{echo}");
}

#[test]
fn a_change_made_between_turns_fires_as_the_next_turn_starts() {
    let ctx = TestContext::new();
    let claude = ctx.project().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    // The Stop hook changes `.envrc` after the turn's last tool call: only
    // the next turn's start can report it, before its prompt hooks.
    let order = "\"$CLAUDE_PROJECT_DIR/order.txt\"";
    std::fs::write(
        claude.join("settings.json"),
        json!({"hooks": {
            "Stop": [{"hooks": [{"type": "command",
                "command": "echo changed >> \"$CLAUDE_PROJECT_DIR/.envrc\""}]}],
            "UserPromptSubmit": [{"hooks": [{"type": "command",
                "command": format!("echo prompt >> {order}")}]}],
            "FileChanged": [{"matcher": ".envrc", "hooks": [{"type": "command",
                "command": format!("echo file_changed >> {order}")}]}]
        }})
        .to_string(),
    )
    .unwrap();
    let fixture = ctx.home().join("fixture.json");
    std::fs::write(
        &fixture,
        json!({"prompts": ["one", "two"], "model": [{"text": "first"}, {"text": "second"}]})
            .to_string(),
    )
    .unwrap();
    ctx.dsh()
        .current_dir(ctx.project())
        .arg("replay")
        .arg(&fixture)
        .args(["--session-id", "watch-session"])
        .assert()
        .success();
    let order = std::fs::read_to_string(ctx.project().join("order.txt")).unwrap();
    assert_eq!(
        order.lines().collect::<Vec<_>>(),
        ["prompt", "file_changed", "prompt"]
    );
}
