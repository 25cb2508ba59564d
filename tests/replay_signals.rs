//! SIGTERM, SIGHUP and SIGINT during `dsh replay`: the replay is not dropped;
//! the open turn closes `interrupted`, session-end hooks run, no hook
//! process is left, and dsh exits 143 / 129 / 130.

#![allow(clippy::unwrap_used)]

use std::process::{Child, ExitStatus, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::cli_signals::{marked_processes, send, wait_for};
use crate::support::{TestContext, events_of};

/// Waits for dsh to exit after a signal; kills it (and fails) after 20 s.
fn wait_exit(child: &mut Child) -> ExitStatus {
    let mut exited = None;
    let done = wait_for(Duration::from_secs(20), || {
        exited = child.try_wait().unwrap();
        exited.is_some()
    });
    if !done {
        let _ = child.kill();
        let _ = child.wait();
        panic!("dsh did not exit after the signal");
    }
    exited.unwrap()
}

/// A started hook must be waited for: the signal goes to dsh when it runs.
fn wait_started(child: &mut Child, marker_file: &std::path::Path) {
    if !wait_for(Duration::from_secs(20), || marker_file.exists()) {
        let _ = child.kill();
        let _ = child.wait();
        panic!("the hook never started");
    }
}

fn replay_until_signal(signal: &str, expected_code: i32, marker: &str) {
    let ctx = TestContext::new();
    let claude = ctx.project().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    let settings = json!({"hooks": {
        "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command",
            "command": format!("touch pre-started; exec sleep {marker}")}]}],
        "SessionEnd": [{"hooks": [{"type": "command", "command": "touch session-end-ran"}]}],
    }});
    std::fs::write(claude.join("settings.json"), settings.to_string()).unwrap();
    std::fs::write(
        ctx.project().join("fixture.json"),
        r#"{"prompts": ["one", "two"], "model": [
            {"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]},
            {"text": "done"},
            {"text": "second"}
        ]}"#,
    )
    .unwrap();
    let log_path = ctx.home().join("log.jsonl");
    let mut child = ctx
        .dsh_std()
        .args(["replay", "fixture.json", "--out"])
        .arg(&log_path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_started(&mut child, &ctx.project().join("pre-started"));
    send(&child, signal);
    let status = wait_exit(&mut child);
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(expected_code), "{signal}: {stderr}");
    let log = std::fs::read_to_string(&log_path).unwrap();
    let ends = events_of(&log, "turn/end");
    assert_eq!(ends.len(), 1, "one turn, closed, no second turn: {log}");
    assert_eq!(ends[0]["reason"], "interrupted", "{log}");
    assert!(
        ctx.project().join("session-end-ran").exists(),
        "session-end hooks did not run: {stderr}"
    );
    assert!(
        wait_for(Duration::from_secs(5), || marked_processes(marker)
            .is_empty()),
        "hook processes left behind"
    );
}

#[test]
fn sigterm_during_replay_closes_the_turn_interrupted_and_exits_143() {
    replay_until_signal("TERM", 143, "31.4159");
}

#[test]
fn sighup_during_replay_closes_the_turn_interrupted_and_exits_129() {
    replay_until_signal("HUP", 129, "31.2718");
}

#[test]
fn sigint_during_replay_closes_the_turn_interrupted_and_exits_130() {
    replay_until_signal("INT", 130, "31.1414");
}

/// A signal while the session-start hooks run: they are killed, no turn
/// opens, the session-end hooks still run, exit 143.
#[test]
fn sigterm_during_session_start_hooks_opens_no_turn_and_runs_session_end() {
    let marker = "32.7182";
    let ctx = TestContext::new();
    let claude = ctx.project().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    let settings = json!({"hooks": {
        "SessionStart": [{"hooks": [{"type": "command",
            "command": format!("touch start-started; exec sleep {marker}")}]}],
        "SessionEnd": [{"hooks": [{"type": "command", "command": "touch session-end-ran"}]}],
    }});
    std::fs::write(claude.join("settings.json"), settings.to_string()).unwrap();
    std::fs::write(
        ctx.project().join("fixture.json"),
        r#"{"prompts": ["one"], "model": [{"text": "done"}]}"#,
    )
    .unwrap();
    let log_path = ctx.home().join("log.jsonl");
    let mut child = ctx
        .dsh_std()
        .args(["replay", "fixture.json", "--out"])
        .arg(&log_path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_started(&mut child, &ctx.project().join("start-started"));
    send(&child, "TERM");
    assert_eq!(wait_exit(&mut child).code(), Some(143));
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(events_of(&log, "turn/start").is_empty(), "{log}");
    assert!(ctx.project().join("session-end-ran").exists());
    assert!(wait_for(Duration::from_secs(5), || marked_processes(
        marker
    )
    .is_empty()));
}
