//! Hostile session directories and ids, private state and the session lock,
//! through the `dsh` binary against the loopback mock provider.

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use std::os::unix::fs::PermissionsExt as _;
use std::time::Duration;

use dsh_provider::mock::MockResponse;

use crate::cli_headless::{dsh, mock, session_logs};
use crate::support::TestContext;

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn mkfifo(path: &std::path::Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success());
}

/// Runs `cmd`, failing the test if it has not finished within 20 s (what a
/// FIFO in the sessions directory used to cause).
fn output_within(mut cmd: assert_cmd::Command) -> std::process::Output {
    cmd.timeout(Duration::from_secs(20));
    let output = cmd.output().unwrap();
    assert!(
        output.status.code().is_some(),
        "dsh hung or was killed: {}",
        stderr(&output)
    );
    output
}

#[test]
fn fifos_and_symlinks_in_the_sessions_dir_are_skipped_with_a_warning() {
    let ctx = TestContext::new();
    let mock = mock(vec![MockResponse::text("one"), MockResponse::text("two")]);
    let first = dsh(&ctx, &mock).args(["-p", "first"]).output().unwrap();
    assert!(first.status.success(), "{}", stderr(&first));
    let sessions = ctx.home().join(".dsh/sessions");
    mkfifo(&sessions.join("fifo.jsonl"));
    // A symlink out of $DSH_HOME to a log that looks valid.
    let outside = ctx.home().join("outside.jsonl");
    std::fs::copy(&session_logs(&ctx)[0], &outside).unwrap();
    std::os::unix::fs::symlink(&outside, sessions.join("link.jsonl")).unwrap();

    let mut list = ctx.dsh();
    list.args(["sessions", "--json"]);
    let listed = output_within(list);
    assert!(listed.status.success(), "{}", stderr(&listed));
    let err = stderr(&listed);
    assert!(
        err.contains("fifo.jsonl: a FIFO, not a regular file; skipped"),
        "{err}"
    );
    assert!(
        err.contains("link.jsonl: a symbolic link, not a regular file; skipped"),
        "{err}"
    );
    assert_eq!(String::from_utf8_lossy(&listed.stdout).lines().count(), 1);

    let mut cont = dsh(&ctx, &mock);
    cont.args(["-p", "again", "--continue"]);
    let continued = output_within(cont);
    assert!(continued.status.success(), "{}", stderr(&continued));
}

#[test]
fn unsafe_session_ids_are_refused_everywhere() {
    let ctx = TestContext::new();
    let mock = mock(vec![MockResponse::text("never")]);
    for id in ["", "../x", "a/b"] {
        let output = dsh(&ctx, &mock)
            .args(["-p", "hi", "--resume", id])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "--resume {id:?}");
        assert!(
            stderr(&output).contains("session id"),
            "{}",
            stderr(&output)
        );
    }
    let output = ctx
        .dsh()
        .arg("replay")
        .arg(crate::support::fixture("plain_answer.json"))
        .args(["--session-id", "../../escape"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("session id"),
        "{}",
        stderr(&output)
    );
    assert!(mock.requests().is_empty());

    // A log whose header carries a path-like id is not offered for resume.
    let sessions = ctx.home().join(".dsh/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let header = serde_json::json!({"type": "session/header", "seq": 0, "ts": "2025-01-01T00:00:00.000Z",
        "session_id": "../../evil", "cwd": ctx.project(), "version": "0", "notices": []});
    std::fs::write(sessions.join("evil.jsonl"), format!("{header}\n")).unwrap();
    let listed = ctx.dsh().args(["sessions", "--json"]).output().unwrap();
    assert!(
        stderr(&listed).contains("is not allowed"),
        "{}",
        stderr(&listed)
    );
    assert!(listed.stdout.is_empty());
}

#[test]
fn session_state_is_private() {
    let ctx = TestContext::new();
    let mock = mock(vec![MockResponse::text("hi")]);
    let output = dsh(&ctx, &mock).args(["-p", "hi"]).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let log = &session_logs(&ctx)[0];
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(log), 0o600);
    assert_eq!(mode(log.parent().unwrap()), 0o700);
    assert_eq!(mode(&log.with_extension("lock")), 0o600);
}

#[test]
fn a_second_writer_of_a_session_is_refused_naming_the_holder() {
    let ctx = TestContext::new();
    let mock = mock(vec![MockResponse::text("one"), MockResponse::text("two")]);
    let first = dsh(&ctx, &mock).args(["-p", "first"]).output().unwrap();
    assert!(first.status.success(), "{}", stderr(&first));
    let log = session_logs(&ctx)[0].clone();
    let id = log.file_stem().unwrap().to_str().unwrap().to_owned();
    // Hold the session's lock from a child process that writes its pid the
    // way dsh does.
    let lock = log.with_extension("lock");
    let mut holder = std::process::Command::new("python3")
        .arg("-c")
        .arg(
            "import fcntl, os, sys, time\n\
             f = open(sys.argv[1], 'r+')\n\
             fcntl.flock(f, fcntl.LOCK_EX)\n\
             f.truncate(0); f.write(str(os.getpid()) + '\\n'); f.flush()\n\
             print('locked', flush=True)\n\
             time.sleep(float(sys.argv[2]))\n",
        )
        .arg(&lock)
        .arg("2")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(holder.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line.trim(), "locked");

    let refused = dsh(&ctx, &mock)
        .args(["-p", "second", "--resume", &id])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let err = stderr(&refused);
    assert!(err.contains(&id), "{err}");
    assert!(err.contains(&format!("pid {}", holder.id())), "{err}");
    assert!(err.contains("--wait"), "{err}");

    // With --wait the second writer runs once the holder lets go.
    let waited = dsh(&ctx, &mock)
        .args(["-p", "second", "--resume", &id, "--wait"])
        .output()
        .unwrap();
    assert!(waited.status.success(), "{}", stderr(&waited));
    assert!(holder.wait().unwrap().success());
    let loaded = dsh_session::load(&log).unwrap();
    assert_eq!(loaded.torn_tail, None);
    let turns = loaded
        .events
        .iter()
        .filter(|e| matches!(e.body, dsh_protocol::EventBody::TurnEnd(_)))
        .count();
    assert_eq!(turns, 2);
}
