//! `dsh replay` and `dsh log` as a user runs them: exit codes, stdout, stderr.

use std::os::unix::fs::FileTypeExt as _;

use crate::support::{TestContext, fixture};

fn snapshot_output(ctx: &TestContext, output: &std::process::Output) -> String {
    format!(
        "exit: {}\n--- stdout\n{}--- stderr\n{}",
        output
            .status
            .code()
            .map_or("signal".to_owned(), |c| c.to_string()),
        ctx.redact(&String::from_utf8_lossy(&output.stdout)),
        ctx.redact(&String::from_utf8_lossy(&output.stderr)),
    )
}

#[test]
fn replay_of_a_missing_fixture_names_the_file() {
    let ctx = TestContext::new();
    let output = ctx.dsh().args(["replay", "no-such.json"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    insta::assert_snapshot!(snapshot_output(&ctx, &output));
}

#[test]
fn replay_of_a_malformed_fixture_names_the_json_path() {
    let ctx = TestContext::new();
    std::fs::write(
        ctx.project().join("bad.json"),
        r#"{"prompts": ["hi"], "model": [{"text": "a"}, {"tool_calls": [{"nmae": "bash"}]}]}"#,
    )
    .unwrap();
    let output = ctx.dsh().args(["replay", "bad.json"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    insta::assert_snapshot!(snapshot_output(&ctx, &output));
}

#[test]
fn replay_rejects_unknown_top_level_keys() {
    let ctx = TestContext::new();
    std::fs::write(
        ctx.project().join("typo.json"),
        "{\"prompts\": [\"hi\"],\n \"modle\": []}",
    )
    .unwrap();
    let output = ctx.dsh().args(["replay", "typo.json"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("typo.json"), "{stderr}");
    assert!(stderr.contains("unknown field `modle`"), "{stderr}");
}

#[test]
fn replay_writes_the_log_to_out_and_nothing_to_stdout() {
    let ctx = TestContext::new();
    let out = ctx.home().join("session.jsonl");
    let output = ctx
        .dsh()
        .arg("replay")
        .arg(fixture("plain_answer.json"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(output.stdout.is_empty());
    let log = std::fs::read_to_string(&out).unwrap();
    assert_eq!(log.lines().count(), 5);
    // A fresh session id each run without --session-id.
    let header: serde_json::Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    assert_eq!(header["type"], "session/header");
    assert_eq!(header["session_id"].as_str().unwrap().len(), 36);
}

#[test]
fn log_renders_a_session_for_people() {
    let ctx = TestContext::new();
    let out = ctx.home().join("session.jsonl");
    ctx.dsh()
        .arg("replay")
        .arg(fixture("failing_bash.json"))
        .args(["--session-id", "test-session", "--out"])
        .arg(&out)
        .assert()
        .success();
    let output = ctx.dsh().arg("log").arg(&out).output().unwrap();
    assert!(output.status.success());
    insta::assert_snapshot!(snapshot_output(&ctx, &output));
}

#[test]
fn log_reports_a_torn_tail_and_still_renders() {
    let ctx = TestContext::new();
    let out = ctx.home().join("session.jsonl");
    ctx.dsh()
        .arg("replay")
        .arg(fixture("plain_answer.json"))
        .args(["--session-id", "test-session", "--out"])
        .arg(&out)
        .assert()
        .success();
    let mut text = std::fs::read_to_string(&out).unwrap();
    text.push_str("{\"type\":\"turn/sta");
    std::fs::write(&out, text).unwrap();
    let output = ctx.dsh().arg("log").arg(&out).output().unwrap();
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("session.jsonl:6: the last line is incomplete"),
        "{stderr}"
    );
}

#[test]
fn log_of_a_missing_file_fails_with_the_path() {
    let ctx = TestContext::new();
    let output = ctx.dsh().args(["log", "nope.jsonl"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("nope.jsonl"));
}

/// Pids of live processes whose command line contains `needle`.
fn live_processes_with(needle: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z'));
        if !zombie
            && String::from_utf8_lossy(&cmdline)
                .replace('\0', " ")
                .contains(needle)
        {
            pids.push(pid);
        }
    }
    pids
}

#[test]
fn ctrl_c_during_replay_kills_the_running_hook_group_and_exits_130() {
    let ctx = TestContext::new();
    let claude = ctx.project().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    // A hook that would run for over an hour, with a grandchild.
    std::fs::write(
        claude.join("settings.json"),
        r#"{ "hooks": { "PreToolUse": [ { "hooks": [ { "type": "command", "command": "sleep 4242 & sleep 4243" } ] } ] } }"#,
    )
    .unwrap();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_dsh"))
        .current_dir(ctx.project())
        .env("HOME", ctx.home())
        .env("DSH_HOME", ctx.home().join(".dsh"))
        .env("CODEX_HOME", ctx.home().join(".codex"))
        .arg("replay")
        .arg(fixture("failing_bash.json"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while live_processes_with("sleep 4243").is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the hook never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    assert!(String::from_utf8_lossy(&output.stderr).contains("replay interrupted"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let left = [
            live_processes_with("sleep 4242"),
            live_processes_with("sleep 4243"),
        ]
        .concat();
        if left.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "hook processes survived: {left:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn replay_out_never_replaces_what_is_at_the_path() {
    let ctx = TestContext::new();
    let dir = ctx.home().join("outs");
    std::fs::create_dir_all(&dir).unwrap();
    let run = |flag: &str, path: &std::path::Path| {
        ctx.dsh()
            .arg("replay")
            .arg(fixture("plain_answer.json"))
            .arg(flag)
            .arg(path)
            .output()
            .unwrap()
    };

    // An existing regular file is truncated and written in place (same inode).
    let existing = dir.join("existing.jsonl");
    std::fs::write(
        &existing,
        "old contents that are longer than nothing\n".repeat(50),
    )
    .unwrap();
    let inode =
        |p: &std::path::Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).unwrap());
    let before = inode(&existing);
    assert!(run("--out", &existing).status.success());
    assert_eq!(
        inode(&existing),
        before,
        "the file was replaced, not rewritten"
    );
    let text = std::fs::read_to_string(&existing).unwrap();
    assert_eq!(text.lines().count(), 5, "{text}");
    assert!(!text.contains("old contents"));

    // A symlink is written through and stays a symlink.
    let target = dir.join("target.jsonl");
    let link = dir.join("link.jsonl");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    assert!(run("--out", &link).status.success());
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap().lines().count(), 5);
    let requests_link = dir.join("requests-link.jsonl");
    let requests_target = dir.join("requests-target.jsonl");
    std::os::unix::fs::symlink(&requests_target, &requests_link).unwrap();
    assert!(run("--requests-out", &requests_link).status.success());
    assert!(
        std::fs::symlink_metadata(&requests_link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_to_string(&requests_target)
            .unwrap()
            .lines()
            .count(),
        1
    );

    // A FIFO and a directory are refused with a clear error and left alone.
    let fifo = dir.join("pipe");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let subdir = dir.join("subdir");
    std::fs::create_dir(&subdir).unwrap();
    for (flag, path, kind) in [
        ("--out", &fifo, "a FIFO"),
        ("--requests-out", &fifo, "a FIFO"),
        ("--out", &subdir, "a directory"),
        ("--requests-out", &subdir, "a directory"),
    ] {
        let output = run(flag, path);
        assert_eq!(output.status.code(), Some(2), "{flag} {}", path.display());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(kind), "{stderr}");
        assert!(stderr.contains("not a regular file"), "{stderr}");
    }
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    assert!(subdir.is_dir());
    // A character device is refused before anything is written to it.
    let output = run("--out", std::path::Path::new("/dev/zero"));
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("a character device"));
}
