//! A project's Codex `notify` is a project hook: listed, logged.

use crate::support::{TestContext, events_of};

fn project_with_notify(ctx: &TestContext) {
    let dir = ctx.project().join(".codex");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        "notify = [\"sh\", \"-c\", \"touch notified\"]\n",
    )
    .unwrap();
    std::fs::write(
        ctx.project().join("fixture.json"),
        r#"{"prompts": ["hi"], "model": [{"text": "hello"}]}"#,
    )
    .unwrap();
}

#[test]
fn a_project_notify_is_listed_as_an_untrusted_project_hook() {
    let ctx = TestContext::new();
    project_with_notify(&ctx);
    let output = ctx.dsh().args(["hooks", "list"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(stdout.contains("notify"), "{stdout}");
    assert!(stdout.contains("sh -c touch notified"), "{stdout}");
    assert!(stdout.contains("untrusted"), "{stdout}");
}

#[test]
fn a_project_notify_run_is_logged_session_scoped_without_errors() {
    let ctx = TestContext::new();
    project_with_notify(&ctx);
    let output = ctx.dsh().args(["replay", "fixture.json"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("ERROR"), "{stderr}");
    assert!(
        !stderr.contains('\u{1b}'),
        "colour codes on a pipe: {stderr}"
    );
    let log = String::from_utf8_lossy(&output.stdout);
    let invoked = events_of(&log, "hook/invoked");
    assert_eq!(invoked.len(), 1, "{log}");
    assert_eq!(invoked[0]["event"], "notify");
    assert!(invoked[0].get("turn").is_none(), "{log}");
    assert_eq!(events_of(&log, "hook/result").len(), 1, "{log}");
    assert!(ctx.project().join("notified").exists());
}

/// dsh's own diagnostics (here at debug level) carry no colour codes when
/// stderr is a pipe.
#[test]
fn diagnostics_on_a_pipe_have_no_colour_codes() {
    let ctx = TestContext::new();
    project_with_notify(&ctx);
    let output = ctx
        .dsh()
        .env("DSH_LOG", "debug")
        .env_remove("NO_COLOR")
        .args(["replay", "fixture.json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("DEBUG"),
        "no diagnostics to check: {stderr}"
    );
    assert!(
        !stderr.contains('\u{1b}'),
        "colour codes on a pipe: {stderr:.500}"
    );
}
