//! `dsh replay` and `dsh log` as a user runs them: exit codes, stdout, stderr.

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
