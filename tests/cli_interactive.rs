//! The interactive mode driven through a pseudo-terminal, as a person would:
//! type, watch text stream, interrupt a long tool with Ctrl-C, leave with
//! Ctrl-D. The model is the loopback mock.

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use std::time::{Duration, Instant};

use dsh_provider::mock::{MockProvider, MockReply, MockResponse, MockToolCall};
use rexpect::process::WaitStatus;
use rexpect::session::PtySession;
use serde_json::json;

use crate::cli_headless::{events, install_ask_hook, mock, of_type, session_logs};
use crate::support::TestContext;

/// Each wait for output may take this long before the test fails.
const EXPECT_TIMEOUT_MS: u64 = 60_000;

/// A unique text in the tool's command line, to find its processes.
const MARKER: &str = "dsh-pty-test-marker-5f1c";

/// Processes whose command line contains `needle`: (pid, process group).
fn processes_with(needle: &str) -> Vec<(u32, u32)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if String::from_utf8_lossy(&cmdline).contains(needle)
            && let Some((_, pgid)) = state_and_group(pid)
        {
            found.push((pid, pgid));
        }
    }
    found
}

/// A process's state letter and process group, from `/proc/PID/stat`.
fn state_and_group(pid: u32) -> Option<(char, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgid = fields.next()?.parse().ok()?;
    Some((state, pgid))
}

/// Live (not zombie) processes in process group `pgid`.
fn live_in_group(pgid: u32) -> Vec<u32> {
    let mut live = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Some((state, group)) = state_and_group(pid)
            && group == pgid
            && state != 'Z'
            && state != 'X'
        {
            live.push(pid);
        }
    }
    live
}

/// `dsh` (interactive) in a pseudo-terminal, in the context's project,
/// pointed at the mock.
fn spawn_dsh(ctx: &TestContext, mock: &MockProvider) -> PtySession {
    spawn_dsh_with(ctx, mock, &[], &[])
}

pub(crate) fn spawn_dsh_with(
    ctx: &TestContext,
    mock: &MockProvider,
    env: &[(&str, &str)],
    args: &[&str],
) -> PtySession {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_dsh"));
    cmd.current_dir(ctx.project())
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", ctx.home())
        .env("DSH_HOME", ctx.home().join(".dsh"))
        .env("CODEX_HOME", ctx.home().join(".codex"))
        .env("NO_COLOR", "1")
        .env("TERM", "dumb")
        .env("LANG", "C.UTF-8")
        .env("DSH_BASE_URL", mock.base_url())
        .env("DSH_API_KEY", "sk-test")
        .envs(env.iter().copied());
    let mut session =
        rexpect::session::spawn_command(cmd, Some(EXPECT_TIMEOUT_MS)).expect("dsh in a pty");
    // Should an expectation fail, dropping the session must not hang on dsh.
    session.process_mut().set_kill_timeout(Some(5_000));
    session
}

/// Waits for `needle`, echoing what dsh printed meanwhile (the harness
/// shows it when the test fails).
pub(crate) fn expect(session: &mut PtySession, needle: &str, what: &str) -> String {
    match session.exp_string(needle) {
        Ok(before) => {
            print!("{before}{needle}");
            before
        }
        Err(error) => panic!("waiting for {what} ({needle:?}): {error}"),
    }
}

fn wait_until<T>(what: &str, timeout: Duration, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = probe() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_person_streams_interrupts_a_tool_and_exits() {
    let ctx = TestContext::new();
    let command = format!("sleep 30 && echo {MARKER}");
    let mock = mock(vec![
        MockResponse::Reply(
            MockReply::chunks(["Hello ", "from ", "the ", "mock."])
                .with_delay(Duration::from_millis(20)),
        ),
        MockResponse::tool_calls(
            "Napping first.",
            vec![MockToolCall::new(
                "call_1",
                "bash",
                &json!({ "command": command }),
            )],
        ),
    ]);

    // Claude Code's default mode asks before `sleep`; pre-approve it (the
    // `echo` after `&&` is read-only) so the person interrupts a running tool.
    let mut session = spawn_dsh_with(&ctx, &mock, &[], &["--allowedTools", "Bash(sleep:*)"]);
    expect(&mut session, "Ctrl-D exits", "the banner");
    expect(&mut session, "> ", "the prompt");
    session.send_line("Say hello").unwrap();
    expect(&mut session, "Hello from the mock.", "streamed text");
    expect(&mut session, "> ", "the prompt after turn 1");

    session.send_line("Take a nap").unwrap();
    expect(&mut session, "Napping first.", "turn 2 text");
    expect(
        &mut session,
        "$ sleep 30",
        "the tool call with its arguments",
    );
    // The command is running once its shell shows up.
    let (shell_pid, pgid) = wait_until("the tool's process", Duration::from_secs(30), || {
        processes_with(MARKER).into_iter().next()
    });
    assert!(live_in_group(pgid).contains(&shell_pid));

    session.send_control('c').unwrap();
    expect(&mut session, "interrupted", "the turn ends interrupted");
    expect(&mut session, "> ", "the prompt after the interrupt");
    wait_until(
        "the tool's process group to be gone",
        Duration::from_secs(20),
        || live_in_group(pgid).is_empty().then_some(()),
    );

    session.send_control('d').unwrap();
    session.exp_eof().expect("dsh exits on Ctrl-D");
    let status = session.process().wait().expect("wait for dsh");
    assert!(
        matches!(status, WaitStatus::Exited(_, 0)),
        "exit status {status:?}"
    );

    // What the log says.
    let logs = session_logs(&ctx);
    assert_eq!(logs.len(), 1);
    let events = events(&logs[0]);
    let ends = of_type(&events, "turn/end");
    assert_eq!(ends.len(), 2, "{ends:?}");
    assert_eq!(ends[0]["reason"], "completed");
    assert_eq!(ends[1]["reason"], "interrupted");
    let results = of_type(&events, "tool/result");
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["call_id"], "call_1");
    assert_eq!(results[0]["is_error"], true);
    let assistant = of_type(&events, "assistant/message");
    assert_eq!(assistant[0]["content"], "Hello from the mock.");
    // Interrupting did not ask the model again.
    assert_eq!(mock.requests().len(), 2);
    assert_eq!(mock.remaining(), 0);
}

#[test]
fn an_ask_becomes_a_question_answered_at_the_terminal() {
    let ctx = TestContext::new();
    install_ask_hook(&ctx);
    let touch = |file: &str| {
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                "call_1",
                "bash",
                &json!({ "command": format!("touch {file}") }),
            )],
        )
    };
    let mock = mock(vec![
        touch("denied-file"),
        MockResponse::text("Denied then."),
        touch("allowed-file"),
        MockResponse::text("Allowed then."),
    ]);
    let mut session = spawn_dsh(&ctx, &mock);
    expect(&mut session, "Ctrl-D exits", "the banner");
    expect(&mut session, "> ", "the prompt");

    session.send_line("Touch the first file").unwrap();
    let question = expect(&mut session, "choice [1/4]: ", "the approval question");
    assert!(question.contains("$ touch denied-file"), "{question}");
    assert!(
        question.contains("a person must approve shell commands"),
        "{question}"
    );
    session.send_line("n").unwrap();
    expect(&mut session, "reason for the model", "the reason question");
    session.send_line("").unwrap();
    expect(&mut session, "denied", "the denial");
    expect(&mut session, "Denied then.", "the model's answer");
    expect(&mut session, "> ", "the prompt after turn 1");

    session.send_line("Touch the second file").unwrap();
    expect(
        &mut session,
        "choice [1/4]: ",
        "the second approval question",
    );
    session.send_line("y").unwrap();
    expect(&mut session, "allowed once", "the approval");
    expect(&mut session, "Allowed then.", "the model's answer");
    expect(&mut session, "> ", "the prompt after turn 2");

    session.send_control('d').unwrap();
    session.exp_eof().expect("dsh exits on Ctrl-D");
    let status = session.process().wait().expect("wait for dsh");
    assert!(
        matches!(status, WaitStatus::Exited(_, 0)),
        "exit status {status:?}"
    );

    assert!(!ctx.project().join("denied-file").exists());
    assert!(ctx.project().join("allowed-file").exists());
    let events = events(&session_logs(&ctx)[0]);
    let dispositions: Vec<&str> = of_type(&events, "tool/result")
        .iter()
        .map(|result| result["disposition"].as_str().unwrap())
        .collect();
    assert_eq!(dispositions, ["approval_rejected", "executed"]);
}

#[test]
fn two_ctrl_c_at_the_prompt_exit_and_run_the_session_end_hooks() {
    let ctx = TestContext::new();
    let claude = ctx.home().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join("settings.json"),
        r#"{ "hooks": { "SessionEnd": [ { "hooks": [ { "type": "command", "command": "cat > \"$HOME/session-end.json\"" } ] } ] } }"#,
    )
    .unwrap();
    let mock = mock(Vec::new());
    let mut session = spawn_dsh(&ctx, &mock);
    expect(&mut session, "Ctrl-D exits", "the banner");
    expect(&mut session, "> ", "the prompt");
    session.send_control('c').unwrap();
    expect(&mut session, "Ctrl-C again", "the warning");
    expect(&mut session, "> ", "the prompt again");
    session.send_control('c').unwrap();
    session.exp_eof().expect("dsh exits on the second Ctrl-C");
    let status = session.process().wait().expect("wait for dsh");
    assert!(
        matches!(status, WaitStatus::Exited(_, 0)),
        "exit status {status:?}"
    );

    let input = std::fs::read_to_string(ctx.home().join("session-end.json"))
        .expect("the SessionEnd hook ran");
    let input: serde_json::Value = serde_json::from_str(&input).unwrap();
    assert_eq!(input["hook_event_name"], "SessionEnd");
    // `SessionEndReason::Exit`, as Claude Code names a user's exit.
    assert_eq!(input["reason"], "prompt_input_exit");
    assert!(mock.requests().is_empty());
}

#[test]
fn waiting_at_the_prompt_fires_the_idle_notification_once() {
    let ctx = TestContext::new();
    let claude = ctx.home().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join("settings.json"),
        r#"{ "hooks": { "Notification": [ { "matcher": "idle_prompt", "hooks": [ { "type": "command", "command": "cat >> \"$HOME/notifications.jsonl\"; echo >> \"$HOME/notifications.jsonl\"" } ] } ] } }"#,
    )
    .unwrap();
    let mock = mock(Vec::new());
    let mut session = spawn_dsh_with(&ctx, &mock, &[("DSH_IDLE_NOTIFY_SECS", "1")], &[]);
    expect(&mut session, "> ", "the prompt");
    let path = ctx.home().join("notifications.jsonl");
    let text = wait_until("the idle notification", Duration::from_secs(30), || {
        std::fs::read_to_string(&path)
            .ok()
            .filter(|t| !t.is_empty())
    });
    // Once per idle period, not every second.
    std::thread::sleep(Duration::from_millis(2500));
    let text = std::fs::read_to_string(&path).unwrap_or(text);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{text}");
    let input: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(input["hook_event_name"], "Notification");
    assert_eq!(input["notification_type"], "idle_prompt");
    session.send_control('d').unwrap();
    session.exp_eof().expect("dsh exits on Ctrl-D");
}

/// The approval prompt's four answers in one session, in Claude Code's
/// `default` mode with no hooks but a `permission_prompt` Notification
/// recorder: allow once; deny with a reason (the model's next request
/// carries it); always allow (the rule lands in
/// `.claude/settings.local.json` and the next matching call runs without
/// asking); allow for this session (a session rule only).
#[test]
fn the_approval_prompt_allows_denies_with_a_reason_and_remembers() {
    let ctx = TestContext::new();
    let claude = ctx.home().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join("settings.json"),
        r#"{ "hooks": { "Notification": [ { "matcher": "permission_prompt", "hooks": [ { "type": "command", "command": "cat >> \"$HOME/prompts.jsonl\"; echo >> \"$HOME/prompts.jsonl\"" } ] } ] } }"#,
    )
    .unwrap();
    let bash = |id: &str, command: &str| {
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                id,
                "bash",
                &json!({ "command": command }),
            )],
        )
    };
    const REASON: &str = "use the scratch directory instead";
    let mock = mock(vec![
        bash("call_1", "touch once-file"),
        MockResponse::text("Touched once."),
        bash("call_2", "touch denied-file"),
        MockResponse::text("Not touched."),
        bash("call_3", "touch always-file"),
        bash("call_4", "touch again-file"),
        MockResponse::text("Touched twice."),
        bash("call_5", "mkdir session-dir"),
        bash("call_6", "mkdir second-dir"),
        MockResponse::text("Made both."),
    ]);
    let mut session = spawn_dsh(&ctx, &mock);
    expect(&mut session, "Ctrl-D exits", "the banner");
    expect(&mut session, "> ", "the prompt");

    // 1. Allow once.
    session.send_line("Touch once").unwrap();
    let question = expect(&mut session, "choice [1-4]: ", "the first question");
    assert!(question.contains("$ touch once-file"), "{question}");
    assert!(
        question.contains("asked by: permission mode default"),
        "{question}"
    );
    assert!(question.contains("needs approval"), "{question}");
    assert!(
        question.contains("2 (a) allow for this session: Bash(touch:*)"),
        "{question}"
    );
    session.send_line("1").unwrap();
    expect(&mut session, "allowed once", "allow once");
    expect(&mut session, "Touched once.", "turn 1's answer");
    expect(&mut session, "> ", "the prompt after turn 1");

    // 2. Deny with a reason.
    session.send_line("Touch another").unwrap();
    expect(&mut session, "choice [1-4]: ", "the second question");
    session.send_line("n").unwrap();
    expect(&mut session, "reason for the model", "the reason question");
    session.send_line(REASON).unwrap();
    expect(&mut session, "denied", "the denial");
    expect(&mut session, "Not touched.", "turn 2's answer");
    expect(&mut session, "> ", "the prompt after turn 2");

    // 3. Always allow: the second touch of the turn does not ask.
    session.send_line("Touch two more").unwrap();
    expect(&mut session, "choice [1-4]: ", "the third question");
    session.send_line("A").unwrap();
    expect(
        &mut session,
        "always allowed: Bash(touch:*)",
        "always allow",
    );
    expect(
        &mut session,
        "this workspace is not trusted: later sessions drop project allow rules",
        "the untrusted-workspace note",
    );
    let rest = expect(&mut session, "Touched twice.", "turn 3's answer");
    assert!(!rest.contains("choice ["), "the second touch asked: {rest}");
    expect(&mut session, "> ", "the prompt after turn 3");

    // 4. Allow for this session: the second mkdir does not ask.
    session.send_line("Make two directories").unwrap();
    let question = expect(&mut session, "choice [1-4]: ", "the fourth question");
    assert!(question.contains("$ mkdir session-dir"), "{question}");
    session.send_line("a").unwrap();
    expect(
        &mut session,
        "allowed for this session: Bash(mkdir:*)",
        "allow for the session",
    );
    let rest = expect(&mut session, "Made both.", "turn 4's answer");
    assert!(!rest.contains("choice ["), "the second mkdir asked: {rest}");
    expect(&mut session, "> ", "the prompt after turn 4");

    session.send_control('d').unwrap();
    session.exp_eof().expect("dsh exits on Ctrl-D");
    let status = session.process().wait().expect("wait for dsh");
    assert!(
        matches!(status, WaitStatus::Exited(_, 0)),
        "exit status {status:?}"
    );

    let project = ctx.project();
    for made in [
        "once-file",
        "always-file",
        "again-file",
        "session-dir",
        "second-dir",
    ] {
        assert!(project.join(made).exists(), "{made} was not made");
    }
    assert!(!project.join("denied-file").exists());

    // The model was told the reason, in the tool result of call_2.
    let requests = mock.requests();
    assert_eq!(requests.len(), 10);
    let denied = requests[3]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == "call_2")
        .unwrap_or_else(|| panic!("no tool result for call_2: {}", requests[3]));
    assert_eq!(
        denied["content"],
        format!("The user rejected this call and said: {REASON}")
    );

    // "Always allow" wrote the rule where Claude Code keeps it; "allow for
    // this session" wrote nothing.
    let local: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(project.join(".claude/settings.local.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(local["permissions"]["allow"], json!(["Bash(touch:*)"]));

    // Four questions, four `permission_prompt` notifications before them.
    let prompts = std::fs::read_to_string(ctx.home().join("prompts.jsonl")).unwrap();
    let prompts: Vec<serde_json::Value> = prompts
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(prompts.len(), 4, "{prompts:?}");
    assert!(
        prompts
            .iter()
            .all(|p| p["notification_type"] == "permission_prompt")
    );

    let events = events(&session_logs(&ctx)[0]);
    let dispositions: Vec<&str> = of_type(&events, "tool/result")
        .iter()
        .map(|result| result["disposition"].as_str().unwrap())
        .collect();
    assert_eq!(
        dispositions,
        [
            "executed",
            "approval_rejected",
            "executed",
            "executed",
            "executed",
            "executed"
        ]
    );
}
