//! SIGTERM, SIGHUP and SIGINT during `dsh -p`: the turn closes
//! `interrupted`, session-end hooks run, no hook or tool process is left,
//! and dsh exits 143 / 129 / 130.

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use dsh_provider::mock::{MockProvider, MockReply, MockResponse, MockToolCall};
use serde_json::json;

use crate::cli_headless::{events, mock, of_type, session_logs};
use crate::support::TestContext;

/// Pids of live processes whose command line contains `marker`.
pub(crate) fn marked_processes(marker: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return pids;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        // A zombie has an empty command line: it is already dead.
        if String::from_utf8_lossy(&cmdline).contains(marker) {
            pids.push(pid);
        }
    }
    pids
}

/// Waits until `check` holds, up to `limit`.
pub(crate) fn wait_for(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    check()
}

/// User-level Claude Code hooks (trusted without a prompt): SessionStart
/// runs `start_command`, SessionEnd touches `session-end-ran` in the project.
pub(crate) fn install_hooks(ctx: &TestContext, start_command: &str) {
    let claude = ctx.home().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    let settings = json!({"hooks": {
        "SessionStart": [{"hooks": [{"type": "command", "command": start_command}]}],
        "SessionEnd": [{"hooks": [{"type": "command", "command": "touch session-end-ran"}]}],
    }});
    std::fs::write(claude.join("settings.json"), settings.to_string()).unwrap();
}

/// A command that sleeps as one process whose argv carries `marker`.
pub(crate) fn sleeper(marker: &str, seconds: u32) -> String {
    format!("python3 -c 'import sys, time; time.sleep({seconds})' {marker}")
}

pub(crate) fn spawn_dsh(ctx: &TestContext, mock: &MockProvider, args: &[&str]) -> Child {
    let mut cmd = ctx.dsh_std();
    cmd.env("DSH_BASE_URL", mock.base_url())
        .env("DSH_API_KEY", "sk-test")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.spawn().unwrap()
}

pub(crate) fn send(child: &Child, signal: &str) {
    let status = std::process::Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

/// Waits for `child` to exit (killing it after 20 s) and returns its output.
pub(crate) fn finish(mut child: Child) -> std::process::Output {
    let exited = wait_for(Duration::from_secs(20), || {
        child.try_wait().unwrap().is_some()
    });
    if !exited {
        let _ = child.kill();
    }
    let output = child.wait_with_output().unwrap();
    assert!(
        exited,
        "dsh did not exit: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn unique(label: &str) -> String {
    format!("dsh-test-{label}-{}-{}", std::process::id(), uuid_like())
}

fn uuid_like() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

fn stopped_during_a_tool(signal: &str, code: i32) {
    let ctx = TestContext::new();
    install_hooks(&ctx, "true");
    let marker = unique(signal);
    let mock = mock(vec![
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                "call_1",
                "bash",
                &json!({"command": sleeper(&marker, 30)}),
            )],
        ),
        MockResponse::text("never"),
    ]);
    let child = spawn_dsh(
        &ctx,
        &mock,
        // Claude Code's default mode asks for a python3 command, and `-p`
        // denies asks: pre-approve it as a user would.
        &[
            "-p",
            "run it",
            "--output-format",
            "stream-json",
            "--verbose",
            "--allowedTools",
            "Bash(python3:*)",
        ],
    );
    assert!(
        wait_for(Duration::from_secs(15), || !marked_processes(&marker)
            .is_empty()),
        "the tool never started"
    );
    send(&child, signal);
    let output = finish(child);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(code), "{stderr}");
    assert!(
        wait_for(Duration::from_secs(2), || marked_processes(&marker)
            .is_empty()),
        "tool processes left behind: {:?}",
        marked_processes(&marker)
    );
    let log = &session_logs(&ctx)[0];
    let events = events(log);
    let ends = of_type(&events, "turn/end");
    assert_eq!(ends.len(), 1, "{events:?}");
    assert_eq!(ends[0]["reason"], "interrupted");
    assert!(ctx.project().join("session-end-ran").exists(), "{stderr}");
    // Every message a stream-json consumer saw is backed by the file.
    let streamed: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert!(!streamed.is_empty());
    let checked = crate::support::claude_stream_in_log(&streamed, &events).unwrap();
    assert_eq!(checked, streamed.len());
}

#[test]
fn sigterm_during_a_tool_closes_the_turn_and_exits_143() {
    stopped_during_a_tool("TERM", 143);
}

#[test]
fn sighup_during_a_tool_closes_the_turn_and_exits_129() {
    stopped_during_a_tool("HUP", 129);
}

#[test]
fn ctrl_c_during_session_start_hooks_ends_the_session_and_exits_130() {
    let ctx = TestContext::new();
    let marker = unique("start");
    install_hooks(&ctx, &sleeper(&marker, 30));
    let mock = mock(vec![MockResponse::text("never")]);
    let child = spawn_dsh(&ctx, &mock, &["-p", "hello"]);
    assert!(
        wait_for(Duration::from_secs(15), || !marked_processes(&marker)
            .is_empty()),
        "the SessionStart hook never started"
    );
    send(&child, "INT");
    let output = finish(child);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(
        wait_for(Duration::from_secs(2), || marked_processes(&marker)
            .is_empty()),
        "hook processes left behind"
    );
    assert!(mock.requests().is_empty(), "no turn after Ctrl-C");
    let events = events(&session_logs(&ctx)[0]);
    assert!(of_type(&events, "turn/start").is_empty(), "{events:?}");
    assert!(ctx.project().join("session-end-ran").exists(), "{stderr}");
}

#[test]
fn sigterm_while_the_model_answers_closes_the_turn_interrupted() {
    let ctx = TestContext::new();
    install_hooks(&ctx, "true");
    let mock = mock(vec![MockResponse::Reply(
        MockReply::text("slow").with_delay(Duration::from_secs(30)),
    )]);
    let child = spawn_dsh(&ctx, &mock, &["-p", "hello"]);
    assert!(wait_for(Duration::from_secs(15), || !mock
        .requests()
        .is_empty()));
    send(&child, "TERM");
    let output = finish(child);
    assert_eq!(output.status.code(), Some(143));
    let events = events(&session_logs(&ctx)[0]);
    let ends = of_type(&events, "turn/end");
    assert_eq!(ends[0]["reason"], "interrupted");
    assert!(Path::new(&ctx.project().join("session-end-ran")).exists());
}

#[test]
fn sighup_in_an_interactive_session_closes_the_turn_and_exits_129() {
    use std::io::Write as _;
    let ctx = TestContext::new();
    install_hooks(&ctx, "true");
    let marker = unique("interactive");
    let mock = mock(vec![MockResponse::tool_calls(
        "",
        vec![MockToolCall::new(
            "call_1",
            "bash",
            &json!({"command": sleeper(&marker, 30)}),
        )],
    )]);
    let mut cmd = ctx.dsh_std();
    cmd.env("DSH_BASE_URL", mock.base_url())
        .env("DSH_API_KEY", "sk-test")
        // The default mode would ask before the python3 command runs.
        .args(["--allowedTools", "Bash(python3:*)"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "run it").unwrap();
    assert!(
        wait_for(Duration::from_secs(15), || !marked_processes(&marker)
            .is_empty()),
        "the tool never started"
    );
    send(&child, "HUP");
    let output = finish(child);
    drop(stdin);
    assert_eq!(
        output.status.code(),
        Some(129),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(wait_for(Duration::from_secs(2), || marked_processes(
        &marker
    )
    .is_empty()));
    let events = events(&session_logs(&ctx)[0]);
    assert_eq!(of_type(&events, "turn/end")[0]["reason"], "interrupted");
    assert!(ctx.project().join("session-end-ran").exists());
}
