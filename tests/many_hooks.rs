//! 10,000 hooks on one event under a low fd limit: every hook runs (queued
//! behind the fd-sized concurrency budget) or the event fails closed; never
//! "no decision".

use crate::support::{TestContext, events_of};

const HOOKS: usize = 10_000;

#[test]
fn ten_thousand_pre_tool_use_hooks_under_ulimit_256_all_run_and_the_deny_holds() {
    let ctx = TestContext::new();
    let dir = ctx.project().join(".claude");
    std::fs::create_dir_all(&dir).unwrap();
    // Distinct commands (identical ones are deduplicated); the last one
    // denies, so a hook that never ran cannot go unnoticed.
    let mut hooks: Vec<serde_json::Value> = (0..HOOKS - 1)
        .map(|i| serde_json::json!({"type": "command", "command": format!("exit 0 # {i}")}))
        .collect();
    hooks.push(serde_json::json!({"type": "command",
        "command": "echo 'the last hook says no' >&2; exit 2"}));
    let settings = serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": hooks}]}});
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
    std::fs::write(
        ctx.project().join("fixture.json"),
        r#"{"prompts": ["go"], "model": [
            {"tool_calls": [{"name": "bash", "arguments": {"command": "touch ran"}}]},
            {"text": "done"}
        ]}"#,
    )
    .unwrap();
    let dsh = crate::support::dsh_bin();
    // The environment `TestContext::dsh` pins, with `sh` lowering the fd
    // limit before it execs dsh.
    let output = std::process::Command::new("sh")
        .current_dir(ctx.project())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", ctx.home())
        .env("DSH_HOME", ctx.home().join(".dsh"))
        .env("CODEX_HOME", ctx.home().join(".codex"))
        .env("NO_COLOR", "1")
        .env("DSH_BIN", &dsh)
        .args([
            "-c",
            "ulimit -n 256 && exec \"$DSH_BIN\" replay fixture.json",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let log = String::from_utf8_lossy(&output.stdout);
    let results = events_of(&log, "hook/result");
    assert_eq!(results.len(), HOOKS, "{stderr}");
    let not_exited: Vec<_> = results
        .iter()
        .filter(|result| result["outcome"] != "exited")
        .collect();
    let tool_results = events_of(&log, "tool/result");
    assert_eq!(tool_results.len(), 1);
    let content = tool_results[0]["content"].as_str().unwrap();
    assert!(!ctx.project().join("ran").exists(), "the denied call ran");
    if not_exited.is_empty() {
        // Every hook ran: the last one's deny decided.
        assert!(content.contains("the last hook says no"), "{content}");
    } else {
        // Some could not start: the event failed closed, and said why.
        assert!(
            content.contains("dsh could not read this hook's decision"),
            "{content}"
        );
    }
}
