//! `--worktree NAME` (WorktreeCreate, WorktreeRemove) and `/add-dir`
//! (DirectoryAdded) against the Claude Code 2.1.328 captures in
//! `fixtures/claude/captures/ev_worktree*` and `ev_add_dir_*`: which hooks
//! fire, their stdin key for key, the session's directory afterwards and
//! Claude Code's words.

use std::path::{Path, PathBuf};
use std::process::Command;

use dsh_provider::mock::{MockResponse, MockToolCall};
use pretty_assertions::assert_eq;
use serde_json::Value;

use crate::cli_headless::{dsh, events, mock, session_logs};
use crate::support::{TestContext, fixture};

/// A capture's file, parsed.
fn capture(scenario: &str, file: &str) -> Value {
    let path = fixture("claude/captures").join(scenario).join(file);
    serde_json::from_str(&std::fs::read_to_string(&path).expect("capture file")).expect("JSON")
}

/// The capture's hook invocations: (event, stdin with placeholders).
fn captured_hooks(scenario: &str) -> Vec<(String, Value)> {
    capture(scenario, "hooks.json")
        .as_array()
        .expect("hooks")
        .iter()
        .map(|record| {
            let raw = record["stdin_raw"].as_str().expect("stdin_raw");
            assert!(raw.ends_with('\n'), "Claude Code ends stdin with a newline");
            (
                record["event"].as_str().expect("event").to_owned(),
                serde_json::from_str(raw).expect("stdin JSON"),
            )
        })
        .collect()
}

/// A recorder every hook runs: appends its stdin to `<home>/rec/<EVENT>`
/// (and to `<home>/rec/order`), its directory to `<EVENT>.pwd` and its
/// `CLAUDE_PROJECT_DIR` to `<EVENT>.project`, prints `<home>/rec/<EVENT>.stdout` when
/// there is one (a capture's behaviour), and a WorktreeCreate prints
/// `creating` then `$WT_PATH` when that is set.
fn recorder(ctx: &TestContext) -> PathBuf {
    let script = ctx.home().join("rec.sh");
    std::fs::create_dir_all(ctx.home().join("rec")).unwrap();
    std::fs::write(
        &script,
        "#!/bin/sh\nd=\"$(dirname \"$0\")/rec\"\ncat >> \"$d/$1\"\necho \"$1\" >> \"$d/order\"\n\
         pwd >> \"$d/$1.pwd\"\necho \"$CLAUDE_PROJECT_DIR\" >> \"$d/$1.project\"\n\
         if [ -f \"$d/$1.stdout\" ]; then cat \"$d/$1.stdout\"; fi\n\
         if [ \"$1\" = WorktreeCreate ] && [ -n \"$WT_PATH\" ]; then printf 'creating\\n%s\\n' \"$WT_PATH\"; fi\n",
    )
    .unwrap();
    script
}

/// Claude Code settings with the recorder on `events`.
fn settings(script: &Path, events: &[&str]) -> String {
    let hooks: serde_json::Map<String, Value> = events
        .iter()
        .map(|event| {
            (
                (*event).to_owned(),
                serde_json::json!([{"hooks": [{"type": "command",
                    "command": format!("sh {} {event}", script.display())}]}]),
            )
        })
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({ "hooks": hooks })).unwrap()
}

/// The events the recorder saw, in order.
fn fired(ctx: &TestContext) -> Vec<String> {
    std::fs::read_to_string(ctx.home().join("rec/order"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The stdin one event's hook got (its first run).
fn recorded(ctx: &TestContext, event: &str) -> Value {
    let text = std::fs::read_to_string(ctx.home().join("rec").join(event)).expect("recorded");
    let first = text.lines().next().expect("one line");
    serde_json::from_str(first).expect("stdin JSON")
}

fn keys(value: &Value) -> Vec<String> {
    value.as_object().expect("object").keys().cloned().collect()
}

/// Replaces the capture's placeholders with this run's paths.
fn placed(value: &Value, ctx: &TestContext) -> Value {
    let text = value
        .to_string()
        .replace("<PROJECT>", &ctx.project().display().to_string())
        .replace("<HOME>", &ctx.home().display().to_string());
    serde_json::from_str(&text).unwrap()
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `git init` and an empty first commit, as the captures' set-up does.
fn git_project(ctx: &TestContext) {
    let project = ctx.project();
    git(&project, &["init", "-q"]);
    git(
        &project,
        &[
            "-c",
            "user.email=a@b",
            "-c",
            "user.name=o",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "init",
        ],
    );
}

fn header_cwd(ctx: &TestContext) -> String {
    let logs = session_logs(ctx);
    assert_eq!(logs.len(), 1, "one session");
    let events = events(&logs[0]);
    assert_eq!(events[0]["type"], "session/header");
    events[0]["cwd"].as_str().unwrap().to_owned()
}

#[test]
fn worktree_create_names_the_path_and_the_session_moves_there_as_captured() {
    // ev_worktree_path: the project's settings hook WorktreeCreate (and
    // SessionStart, UserPromptSubmit, SessionEnd, WorktreeRemove); the hook
    // prints `creating` then the path. Only WorktreeCreate fires: the session
    // moved to the worktree, whose own settings have no hooks.
    let ctx = TestContext::new();
    git_project(&ctx);
    recorder_settings(
        &ctx,
        &ctx.project().join(".claude"),
        "ev_worktree_path",
        "settings.json",
    );
    let worktree = ctx.home().join("wt/feat1");
    std::fs::create_dir_all(&worktree).unwrap();
    let model = mock(vec![MockResponse::text("FINAL: hi.")]);
    let output = dsh(&ctx, &model)
        .env("WT_PATH", &worktree)
        .args(["-p", "Please say hi", "--worktree", "feat1"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "FINAL: hi.\n");

    let expected = captured_hooks("ev_worktree_path");
    let events: Vec<&str> = expected.iter().map(|(event, _)| event.as_str()).collect();
    assert_eq!(fired(&ctx), events);
    let (_, want) = &expected[0];
    let got = recorded(&ctx, "WorktreeCreate");
    assert_eq!(keys(&got), keys(want));
    let want = placed(want, &ctx);
    for key in ["cwd", "hook_event_name", "name"] {
        assert_eq!(got[key], want[key], "{key}");
    }
    // The session (its log, its model request) is in the worktree.
    assert_eq!(header_cwd(&ctx), worktree.display().to_string());
    let sid = session_logs(&ctx)[0]
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert_eq!(got["session_id"], sid.as_str());
    assert_eq!(model.requests().len(), 1);
}

#[test]
fn the_worktree_create_run_is_in_the_session_log() {
    // WorktreeCreate runs before the session log exists (the log opens in
    // the worktree); its run is still a durable `hook/invoked` +
    // `hook/result` pair, right after the header, before the first turn.
    let ctx = TestContext::new();
    git_project(&ctx);
    recorder_settings(
        &ctx,
        &ctx.project().join(".claude"),
        "ev_worktree_path",
        "settings.json",
    );
    let worktree = ctx.home().join("wt/feat1");
    std::fs::create_dir_all(&worktree).unwrap();
    let model = mock(vec![MockResponse::text("FINAL: hi.")]);
    let output = dsh(&ctx, &model)
        .env("WT_PATH", &worktree)
        .args(["-p", "Please say hi", "--worktree", "feat1"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let logs = session_logs(&ctx);
    assert_eq!(logs.len(), 1, "one session");
    let events = events(&logs[0]);
    let types: Vec<&str> = events
        .iter()
        .map(|event| event["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types[..3],
        ["session/header", "hook/invoked", "hook/result"],
        "{types:?}"
    );
    let (invoked, result) = (&events[1], &events[2]);
    assert_eq!(invoked["event"], "WorktreeCreate");
    assert_eq!(invoked["input"]["hook_event_name"], "WorktreeCreate");
    assert_eq!(invoked["input"]["name"], "feat1");
    assert_eq!(invoked["input"]["cwd"], ctx.project().display().to_string());
    assert_eq!(result["invocation_id"], invoked["invocation_id"]);
    assert_eq!(result["exit_code"], 0);
    assert_eq!(
        result["stdout"],
        format!("creating\n{}\n", worktree.display())
    );
    // Each invocation id is the log's once.
    let ids: Vec<&Value> = events
        .iter()
        .filter(|event| event["type"] == "hook/invoked")
        .map(|event| &event["invocation_id"])
        .collect();
    let unique: std::collections::HashSet<String> = ids.iter().map(|id| id.to_string()).collect();
    assert_eq!(unique.len(), ids.len(), "{ids:?}");
}

#[test]
fn a_worktree_create_hook_without_a_path_fails_the_run_in_claude_codes_words() {
    // ev_worktree: the hook exits 0 and prints nothing; the run exits 1
    // with Claude Code's stderr, before any model request.
    let ctx = TestContext::new();
    git_project(&ctx);
    let script = recorder(&ctx);
    std::fs::create_dir_all(ctx.project().join(".claude")).unwrap();
    std::fs::write(
        ctx.project().join(".claude/settings.json"),
        settings(
            &script,
            &[
                "WorktreeCreate",
                "WorktreeRemove",
                "SessionStart",
                "SessionEnd",
            ],
        ),
    )
    .unwrap();
    let model = mock(vec![MockResponse::text("FINAL: hi.")]);
    let output = dsh(&ctx, &model)
        .args(["-p", "Please say hi", "--worktree", "feat1"])
        .output()
        .unwrap();
    let exit = capture("ev_worktree", "exit.json");
    assert_eq!(
        output.status.code(),
        Some(exit["rc"].as_i64().unwrap() as i32)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    let want = exit["stderr"].as_str().unwrap();
    assert!(
        stderr.lines().any(|line| format!("{line}\n") == want),
        "stderr: {stderr}"
    );
    let expected: Vec<String> = captured_hooks("ev_worktree")
        .into_iter()
        .map(|(event, _)| event)
        .collect();
    assert_eq!(fired(&ctx), expected);
    assert!(model.requests().is_empty());
    assert!(session_logs(&ctx).is_empty(), "no session was kept");
}

#[test]
fn without_a_hook_dsh_makes_a_git_worktree_where_claude_code_does_and_p_keeps_it() {
    // ev_worktree_git: no WorktreeCreate hook; Claude Code runs in
    // <PROJECT>/.claude/worktrees/feat1 on branch worktree-feat1, locked, and
    // a -p run leaves it there.
    let ctx = TestContext::new();
    git_project(&ctx);
    let model = mock(vec![MockResponse::text("FINAL: hi.")]);
    let output = dsh(&ctx, &model)
        .args(["-p", "Please say hi", "--worktree", "feat1"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let captured = capture("ev_worktree_git", "model.json");
    let listing = captured[1]["new_or_changed"].to_string();
    assert!(
        listing.contains("<PROJECT>/.claude/worktrees/feat1")
            && listing.contains("[worktree-feat1] locked"),
        "the capture shows where Claude Code put it: {listing}"
    );
    let path = ctx.project().join(".claude/worktrees/feat1");
    assert_eq!(header_cwd(&ctx), path.display().to_string());
    let list = git(&ctx.project(), &["worktree", "list", "--porcelain"]);
    assert!(
        list.contains(&format!("worktree {}", path.display())),
        "{list}"
    );
    assert!(list.contains("branch refs/heads/worktree-feat1"), "{list}");
    assert!(list.contains("\nlocked"), "{list}");
}

#[test]
fn outside_a_git_repository_without_a_hook_the_run_fails_before_the_model() {
    let ctx = TestContext::new();
    let model = mock(vec![MockResponse::text("FINAL: hi.")]);
    let output = dsh(&ctx, &model)
        .args(["-p", "Please say hi", "--worktree", "feat1"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("Error creating worktree: ") && stderr.contains("not in a git repository"),
        "{stderr}"
    );
    assert!(model.requests().is_empty());
}

/// Claude Code user settings (`~/.claude/settings.json`, no trust
/// question) with the recorder on the events the capture's settings hook.
fn user_settings(ctx: &TestContext, scenario: &str, file: &str) {
    recorder_settings(ctx, &ctx.home().join(".claude"), scenario, file);
}

/// `claude_dir/settings.json` with the recorder on the events the
/// capture's `file` hooks.
fn recorder_settings(ctx: &TestContext, claude_dir: &Path, scenario: &str, file: &str) {
    let script = recorder(ctx);
    let configured: Vec<String> = capture(scenario, file)["hooks"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let configured: Vec<&str> = configured.iter().map(String::as_str).collect();
    std::fs::create_dir_all(claude_dir).unwrap();
    std::fs::write(
        claude_dir.join("settings.json"),
        settings(&script, &configured),
    )
    .unwrap();
}

/// Waits for `needle` in the terminal, failing with what was seen.
fn expect(session: &mut rexpect::session::PtySession, needle: &str) -> String {
    match session.exp_string(needle) {
        Ok(before) => before,
        Err(error) => panic!("waiting for {needle:?}: {error}"),
    }
}

#[test]
fn add_dir_in_the_terminal_adds_a_working_directory_and_fires_directory_added() {
    // ev_add_dir_tui: `/add-dir <HOME>/extra` typed in the terminal, then a
    // prompt, then /exit. (Claude Code asks whether to trust the directory and
    // whether to remember it; the capture answered "yes, for this session".)
    let ctx = TestContext::new();
    user_settings(&ctx, "ev_add_dir_tui", "settings.json");
    let extra = ctx.home().join("extra");
    std::fs::create_dir_all(&extra).unwrap();
    std::fs::write(extra.join("readme.txt"), "extra\n").unwrap();
    let model = mock(vec![
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                "call_1",
                "write",
                &serde_json::json!({"file_path": extra.join("new.txt"), "content": "x\n"}),
            )],
        ),
        MockResponse::text("FINAL: hi."),
    ]);
    // acceptEdits: edits inside the working directories need no approval,
    // edits outside them ask (nobody answers here).
    let mut session = crate::cli_interactive::spawn_dsh_with(
        &ctx,
        &model,
        &[],
        &["--permission-mode", "acceptEdits"],
    );
    session
        .send_line(&format!("/add-dir {}", extra.display()))
        .unwrap();
    expect(
        &mut session,
        &format!(
            "Added {} as a working directory for this session",
            extra.display()
        ),
    );
    session.send_line("Please say hi").unwrap();
    expect(&mut session, "FINAL: hi.");
    session.send_line("/exit").unwrap();
    session.exp_eof().unwrap();

    let expected = captured_hooks("ev_add_dir_tui");
    let events: Vec<&str> = expected.iter().map(|(event, _)| event.as_str()).collect();
    assert_eq!(fired(&ctx), events);
    let (_, want) = expected
        .iter()
        .find(|(event, _)| event == "DirectoryAdded")
        .unwrap();
    let got = recorded(&ctx, "DirectoryAdded");
    assert_eq!(keys(&got), keys(want));
    let want = placed(want, &ctx);
    for key in ["cwd", "hook_event_name", "directory", "source"] {
        assert_eq!(got[key], want[key], "{key}");
    }
    // The added directory is a working directory: the edit in it needed no
    // approval.
    assert_eq!(
        std::fs::read_to_string(extra.join("new.txt")).unwrap(),
        "x\n"
    );
}

#[test]
fn a_directory_added_system_message_is_a_turn_of_its_own_as_captured() {
    // ev_add_dir_tui_message: the DirectoryAdded hook answers with a
    // `systemMessage`. Claude Code makes a turn of it at once: the
    // UserPromptSubmit hooks see `DirectoryAdded hook: <message>` as the
    // prompt, and the model gets it as a system notification, not as
    // something the user typed. The prompt typed next is a turn of its own.
    let ctx = TestContext::new();
    let scenario = "ev_add_dir_tui_message";
    user_settings(&ctx, scenario, "settings.json");
    let said = capture(scenario, "scenario.json")["behaviors"]["rec_DirectoryAdded"]["stdout"]
        .as_str()
        .unwrap()
        .to_owned();
    std::fs::write(ctx.home().join("rec/DirectoryAdded.stdout"), said).unwrap();
    let extra = ctx.home().join("extra");
    std::fs::create_dir_all(&extra).unwrap();
    let model = mock(vec![
        MockResponse::text("NOTED: extra."),
        MockResponse::text("FINAL: hi."),
    ]);
    let mut session = crate::cli_interactive::spawn_dsh_with(&ctx, &model, &[], &[]);
    session
        .send_line(&format!("/add-dir {}", extra.display()))
        .unwrap();
    expect(&mut session, "NOTED: extra.");
    session.send_line("Please say hi").unwrap();
    expect(&mut session, "FINAL: hi.");
    session.send_line("/exit").unwrap();
    session.exp_eof().unwrap();

    // The hooks, in the captured order, and what UserPromptSubmit saw.
    let expected = captured_hooks(scenario);
    let events: Vec<&str> = expected.iter().map(|(event, _)| event.as_str()).collect();
    assert_eq!(fired(&ctx), events);
    let prompts: Vec<Value> = std::fs::read_to_string(ctx.home().join("rec/UserPromptSubmit"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap()["prompt"].clone())
        .collect();
    let want: Vec<Value> = expected
        .iter()
        .filter(|(event, _)| event == "UserPromptSubmit")
        .map(|(_, stdin)| stdin["prompt"].clone())
        .collect();
    assert_eq!(prompts, want);

    // The model got the message as Claude Code sent it: the notification
    // block closes the first request's user message.
    let captured = capture(scenario, "model.json");
    let blocks = captured[0]["messages"][0]["content"].as_array().unwrap();
    let notification = blocks.last().unwrap()["text"].as_str().unwrap();
    assert!(notification.contains("[SYSTEM NOTIFICATION - NOT USER INPUT]"));
    let requests = model.requests();
    assert_eq!(requests.len(), 2, "the message's turn, then the prompt's");
    let last_user = |request: &Value| -> String {
        let messages = request["messages"].as_array().unwrap();
        let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
        user["content"].as_str().unwrap().to_owned()
    };
    assert_eq!(last_user(&requests[0]), notification);
    assert_eq!(last_user(&requests[1]), "Please say hi");
    let second = requests[1]["messages"].to_string();
    assert!(
        second.contains("NOTED: extra."),
        "the notification's exchange stays in the conversation: {second}"
    );
}

#[test]
fn add_dir_at_start_up_fires_no_directory_added() {
    // ev_add_dir_flag: `--add-dir` is part of the session from the start.
    let ctx = TestContext::new();
    user_settings(&ctx, "ev_add_dir_flag", "settings.json");
    let extra = ctx.home().join("extra");
    std::fs::create_dir_all(&extra).unwrap();
    let model = mock(vec![MockResponse::text("FINAL: hi.")]);
    let output = dsh(&ctx, &model)
        .args(["-p", "Please say hi", "--add-dir"])
        .arg(&extra)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let expected: Vec<String> = captured_hooks("ev_add_dir_flag")
        .into_iter()
        .map(|(event, _)| event)
        .collect();
    assert_eq!(fired(&ctx), expected);
}

#[test]
fn an_interactive_worktree_session_fires_worktree_remove_when_it_ends() {
    // ev_worktree_remove: the hooks are the user's, so they apply in the
    // worktree too; /exit fires WorktreeRemove (in the worktree) before
    // SessionEnd, and Claude Code then prints `Worktree removed (no changes)`.
    let ctx = TestContext::new();
    git_project(&ctx);
    user_settings(&ctx, "ev_worktree_remove", "home-settings.json");
    let worktree = ctx.home().join("wt/feat1");
    std::fs::create_dir_all(&worktree).unwrap();
    let model = mock(vec![MockResponse::text("FINAL: hi.")]);
    let wt = worktree.display().to_string();
    let mut session = crate::cli_interactive::spawn_dsh_with(
        &ctx,
        &model,
        &[("WT_PATH", wt.as_str())],
        &["--worktree", "feat1"],
    );
    session.send_line("Please say hi").unwrap();
    expect(&mut session, "FINAL: hi.");
    session.send_line("/exit").unwrap();
    let terminal = capture("ev_worktree_remove", "terminal.json");
    let said = terminal["after_exit"][0].as_str().unwrap();
    expect(&mut session, said);
    session.exp_eof().unwrap();

    let expected = captured_hooks("ev_worktree_remove");
    let events: Vec<&str> = expected.iter().map(|(event, _)| event.as_str()).collect();
    assert_eq!(fired(&ctx), events);
    let (_, want) = expected
        .iter()
        .find(|(event, _)| event == "WorktreeRemove")
        .unwrap();
    let got = recorded(&ctx, "WorktreeRemove");
    assert_eq!(keys(&got), keys(want));
    let want = placed(want, &ctx);
    for key in ["cwd", "hook_event_name", "worktree_path"] {
        assert_eq!(got[key], want[key], "{key}");
    }
    // The worktree is gone: SessionEnd fires back in the original project
    // (its `cwd` and the hook's directory), while CLAUDE_PROJECT_DIR stays
    // the worktree the session was resolved in.
    let (_, want) = expected
        .iter()
        .find(|(event, _)| event == "SessionEnd")
        .unwrap();
    let want = placed(want, &ctx);
    let got = recorded(&ctx, "SessionEnd");
    assert_eq!(got["cwd"], want["cwd"]);
    assert_eq!(got["cwd"], ctx.project().display().to_string());
    let record = capture("ev_worktree_remove", "hooks.json");
    let env = &record.as_array().unwrap().last().unwrap()["env"];
    assert_eq!(env["PWD"], "<PROJECT>");
    assert_eq!(env["CLAUDE_PROJECT_DIR"], "<HOME>/wt/feat1");
    let line = |name: &str| {
        std::fs::read_to_string(ctx.home().join("rec").join(name))
            .unwrap()
            .trim_end()
            .to_owned()
    };
    assert_eq!(line("SessionEnd.pwd"), ctx.project().display().to_string());
    assert_eq!(line("SessionEnd.project"), worktree.display().to_string());
}

#[test]
fn without_a_worktree_remove_hook_a_hook_made_worktree_is_kept_in_claude_codes_words() {
    // ev_worktree_tui: the project's hooks made the worktree; in the
    // worktree no hook removes it.
    let ctx = TestContext::new();
    git_project(&ctx);
    let script = recorder(&ctx);
    std::fs::create_dir_all(ctx.project().join(".claude")).unwrap();
    std::fs::write(
        ctx.project().join(".claude/settings.json"),
        settings(&script, &["WorktreeCreate", "WorktreeRemove"]),
    )
    .unwrap();
    let worktree = ctx.home().join("wt/feat1");
    std::fs::create_dir_all(&worktree).unwrap();
    let model = mock(vec![MockResponse::text("FINAL: hi.")]);
    let wt = worktree.display().to_string();
    let mut session = crate::cli_interactive::spawn_dsh_with(
        &ctx,
        &model,
        &[("WT_PATH", wt.as_str())],
        &["--worktree", "feat1"],
    );
    // The project's hooks are not trusted yet: trust them for the session.
    let _ = session.exp_string("trust");
    session.send_line("y").unwrap();
    session.send_line("Please say hi").unwrap();
    expect(&mut session, "FINAL: hi.");
    session.send_line("/exit").unwrap();
    let terminal = capture("ev_worktree_tui", "terminal.json");
    let said = terminal["after_exit"][0]
        .as_str()
        .unwrap()
        .replace("<HOME>", &ctx.home().display().to_string());
    expect(&mut session, &said);
    session.exp_eof().unwrap();
    assert_eq!(fired(&ctx), ["WorktreeCreate"]);
    assert!(worktree.is_dir(), "kept");
}

#[test]
fn replay_runs_the_fixture_in_the_worktree() {
    let ctx = TestContext::new();
    git_project(&ctx);
    let out = ctx.home().join("replay.jsonl");
    let output = ctx
        .dsh()
        .arg("replay")
        .arg(fixture("plain_answer.json"))
        .args(["--worktree", "feat1", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let events = events(&out);
    assert_eq!(events[0]["type"], "session/header");
    let path = ctx.project().join(".claude/worktrees/feat1");
    assert_eq!(events[0]["cwd"], path.display().to_string());
}

#[test]
fn acp_and_status_refuse_worktree() {
    let ctx = TestContext::new();
    for command in ["acp", "status"] {
        let output = ctx
            .dsh()
            .args([command, "--worktree", "feat1"])
            .output()
            .unwrap();
        assert!(!output.status.success(), "{command}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("does not take --worktree"), "{stderr}");
    }
}
