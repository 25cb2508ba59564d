//! What a Claude Code, Codex or Gemini CLI user meets first: the
//! one trust question and what it trusts, the dialects' own trust notices,
//! sessions that never started, `dsh sessions rm`, id prefixes, provider
//! errors that name the variable in use, the system prompt keys of
//! config.toml, completions of enum flags and the manual pages.

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use std::path::Path;

use dsh_provider::mock::{MockResponse, MockToolCall};
use serde_json::{Value, json};

use crate::cli_headless::{dsh, events, mock, of_type, session_logs};
use crate::cli_interactive::{expect, spawn_dsh_with};
use crate::support::TestContext;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn config(ctx: &TestContext, text: &str) {
    write(&ctx.home().join(".dsh").join("config.toml"), text);
}

/// A project that brings a hook and an allow rule for `ls`.
fn project_with_hook_and_allow_rule(ctx: &TestContext) {
    write(
        &ctx.project().join(".claude").join("settings.json"),
        &json!({
            "permissions": {"allow": ["Bash(ls:*)"]},
            "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "touch hook-ran"}]}]}
        })
        .to_string(),
    );
}

#[test]
fn yes_to_the_trust_question_trusts_hooks_and_workspace_at_once() {
    let ctx = TestContext::new();
    project_with_hook_and_allow_rule(&ctx);
    let provider = mock(vec![
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                "call_ls",
                "bash",
                &json!({"command": "ls"}),
            )],
        ),
        MockResponse::text("listed"),
    ]);
    let mut session = spawn_dsh_with(&ctx, &provider, &[], &[]);
    let question = expect(&mut session, "Trust this project?", "the trust question");
    // One question names the hook and the rule.
    assert!(question.contains("touch hook-ran"), "{question}");
    assert!(question.contains("allow Bash(ls:*)"), "{question}");
    session.send_line("y").unwrap();
    expect(&mut session, "Trusted", "the answer");
    expect(&mut session, "> ", "the prompt");
    session.send_line("list the files").unwrap();
    // The project's allow rule applies in this session: `ls` runs unasked.
    expect(&mut session, "listed", "the answer after ls");
    expect(&mut session, "> ", "the prompt after the turn");
    session.send_line("/status").unwrap();
    let status = expect(&mut session, "hooks:", "the status");
    assert!(status.contains("trusted (dsh hooks trust)"), "{status}");
    session.send_control('d').unwrap();
    session.exp_eof().unwrap();
    assert!(ctx.project().join("hook-ran").exists());
    let log = events(&session_logs(&ctx)[0]);
    let results = of_type(&log, "tool/result");
    assert_eq!(results.len(), 1, "{log:?}");
    assert_eq!(results[0]["is_error"], false, "{:?}", results[0]);

    // Asked once per project: the next session runs without a question,
    // and headless strict mode finds nothing untrusted.
    let provider = mock(vec![MockResponse::text("again")]);
    let output = dsh(&ctx, &provider)
        .args(["-p", "hi", "--strict-hooks"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        !stderr(&output).contains("untrusted"),
        "{}",
        stderr(&output)
    );
    let status: Value = serde_json::from_slice(
        &ctx.dsh()
            .args(["status", "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(
        status["permissions"]["workspace_trusted_by"],
        "dsh hooks trust"
    );
}

#[test]
fn codex_and_gemini_trust_notices_appear_only_with_their_project_config() {
    let ctx = TestContext::new();
    project_with_hook_and_allow_rule(&ctx);
    let provider = mock(vec![
        MockResponse::text("one"),
        MockResponse::text("two"),
        MockResponse::text("three"),
    ]);
    let output = dsh(&ctx, &provider).args(["-p", "hi"]).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(!stderr(&output).contains("Codex"), "{}", stderr(&output));
    // Headless asks nothing, and names what does not apply.
    assert!(
        stderr(&output).contains("not applying the project's allow rule(s) Bash(ls:*)"),
        "{}",
        stderr(&output)
    );
    assert!(!stderr(&output).contains("Gemini"), "{}", stderr(&output));
    let listed = ctx.dsh().args(["hooks", "list"]).output().unwrap();
    assert!(
        !stdout(&listed).contains("codex: approval_policy"),
        "{}",
        stdout(&listed)
    );

    // With Codex hooks in the project, the notice says what to do.
    write(
        &ctx.project().join(".codex").join("hooks.json"),
        &json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}})
            .to_string(),
    );
    let output = dsh(&ctx, &provider).args(["-p", "hi"]).output().unwrap();
    let err = stderr(&output);
    assert!(err.contains("is not trusted in Codex"), "{err}");
    assert!(err.contains("trust_level = \"trusted\"` to "), "{err}");
    assert!(err.contains("config.toml"), "{err}");
    // Once dsh trusts them, Codex's own trust is no start-up news.
    let trusted = ctx.dsh().args(["hooks", "trust"]).output().unwrap();
    assert!(trusted.status.success(), "{}", stderr(&trusted));
    let output = dsh(&ctx, &provider).args(["-p", "hi"]).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        !stderr(&output).contains("not trusted in Codex"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn hooks_check_warns_about_gemini_hooks_in_a_folder_gemini_does_not_trust() {
    let ctx = TestContext::new();
    write(
        &ctx.project().join(".gemini").join("settings.json"),
        &json!({"hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "true"}]}]}})
            .to_string(),
    );
    let output = ctx.dsh().args(["hooks", "check"]).output().unwrap();
    let out = stdout(&output);
    assert!(output.status.success(), "{out}{}", stderr(&output));
    assert!(out.contains("warning[gemini-folder-untrusted]"), "{out}");
    assert!(out.contains("TRUST_FOLDER"), "{out}");
    assert!(out.contains("trustedFolders.json"), "{out}");
    assert!(out.contains("1 warning(s)"), "{out}");

    // Trusted in Gemini CLI: no warning.
    write(
        &ctx.home().join(".gemini").join("trustedFolders.json"),
        &json!({ctx.project().display().to_string(): "TRUST_FOLDER"}).to_string(),
    );
    let output = ctx.dsh().args(["hooks", "check"]).output().unwrap();
    assert!(
        !stdout(&output).contains("gemini-folder-untrusted"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn a_refused_key_is_one_line_naming_its_variable_and_leaves_no_session() {
    let ctx = TestContext::new();
    let provider = mock(vec![MockResponse::status(
        401,
        r#"{"error":{"message":"invalid api key","type":"authentication_error"}}"#,
    )]);
    let output = ctx
        .dsh()
        .env("DSH_BASE_URL", provider.base_url())
        .env("DEEPSEEK_API_KEY", "sk-wrong")
        .args(["-p", "hi"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert!(
        err.contains(
            "the key in DEEPSEEK_API_KEY was refused; set a valid key in DEEPSEEK_API_KEY"
        ),
        "{err}"
    );
    assert!(err.contains("no session was kept"), "{err}");
    assert!(session_logs(&ctx).is_empty(), "{:?}", session_logs(&ctx));
}

#[test]
fn an_unreachable_endpoint_is_one_line_with_the_fix_and_leaves_no_session() {
    let ctx = TestContext::new();
    config(&ctx, "[provider]\nmax_retries = 0\n");
    // A port nothing listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let output = ctx
        .dsh()
        .env("DSH_BASE_URL", format!("http://127.0.0.1:{port}"))
        .env("DSH_API_KEY", "sk-test")
        .args(["-p", "hi"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    let last = err.lines().last().unwrap();
    assert!(last.contains("cannot connect to"), "{err}");
    assert!(last.contains("check $DSH_BASE_URL"), "{err}");
    assert!(!err.contains("error sending request"), "{err}");
    assert!(!err.contains("tcp connect error"), "{err}");
    assert!(session_logs(&ctx).is_empty());
    // `dsh sessions` has nothing to list.
    let listed = ctx.dsh().args(["sessions", "--json"]).output().unwrap();
    assert_eq!(stdout(&listed), "");
}

#[test]
fn no_key_names_every_variable_looked_at_in_the_error_and_in_status() {
    let ctx = TestContext::new();
    let output = ctx.dsh().args(["-p", "hi"]).output().unwrap();
    assert!(!output.status.success());
    let err = stderr(&output);
    for name in [
        "DSH_API_KEY",
        "DEEPSEEK_API_KEY",
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
    ] {
        assert!(err.contains(name), "{name}: {err}");
    }
    let status = ctx.dsh().args(["status"]).output().unwrap();
    let text = stdout(&status);
    assert!(text.contains("key: none set (DSH_API_KEY, DEEPSEEK_API_KEY, ANTHROPIC_API_KEY and OPENAI_API_KEY are all unset)"), "{text}");
    let set = ctx
        .dsh()
        .env("ANTHROPIC_API_KEY", "sk-ant")
        .args(["status"])
        .output()
        .unwrap();
    assert!(
        stdout(&set).contains("key: set (from $ANTHROPIC_API_KEY)"),
        "{}",
        stdout(&set)
    );
}

/// Runs `dsh -p` with `--session-id id`, answered by the mock.
fn session_with_id(ctx: &TestContext, id: &str) {
    let provider = mock(vec![MockResponse::text("kept")]);
    let output = dsh(ctx, &provider)
        .args(["-p", "hi", "--session-id", id])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
}

#[test]
fn sessions_rm_and_log_take_an_unambiguous_id_prefix() {
    let ctx = TestContext::new();
    let first = "11111111-1111-4111-8111-111111111111";
    let second = "11111111-2222-4222-8222-222222222222";
    session_with_id(&ctx, first);
    session_with_id(&ctx, second);
    assert_eq!(session_logs(&ctx).len(), 2);

    // `dsh log` takes the same prefixes as `--resume` and `dsh hooks log`.
    let log = ctx.dsh().args(["log", "11111111-2"]).output().unwrap();
    assert!(log.status.success(), "{}", stderr(&log));
    assert!(stdout(&log).contains("kept"), "{}", stdout(&log));

    // An ambiguous prefix deletes nothing.
    let ambiguous = ctx.dsh().args(["sessions", "rm", "1111"]).output().unwrap();
    assert!(!ambiguous.status.success());
    assert!(
        stderr(&ambiguous).contains("1111"),
        "{}",
        stderr(&ambiguous)
    );
    assert_eq!(session_logs(&ctx).len(), 2);
    // Nothing outside the sessions directory can be named.
    let outside = ctx.home().join("precious.jsonl");
    std::fs::write(&outside, "{}").unwrap();
    let escape = ctx
        .dsh()
        .args(["sessions", "rm", "../precious"])
        .output()
        .unwrap();
    assert!(!escape.status.success());
    assert!(outside.exists());

    let removed = ctx
        .dsh()
        .args(["sessions", "rm", "11111111-1"])
        .output()
        .unwrap();
    assert!(removed.status.success(), "{}", stderr(&removed));
    assert!(stdout(&removed).contains(first), "{}", stdout(&removed));
    let left = session_logs(&ctx);
    assert_eq!(left.len(), 1);
    assert!(left[0].ends_with(format!("{second}.jsonl")));
}

fn system_text(request: &Value) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "system")
        .map(|message| message["content"].to_string())
        .collect()
}

#[test]
fn config_toml_system_prompt_keys_reach_the_model_in_the_terminal_and_p() {
    let ctx = TestContext::new();
    config(
        &ctx,
        "system_prompt = \"You are the door keeper.\"\nappend_system_prompt = \"Answer in one word.\"\n",
    );
    let provider = mock(vec![MockResponse::text("open")]);
    let mut session = spawn_dsh_with(&ctx, &provider, &[], &[]);
    expect(&mut session, "> ", "the prompt");
    session.send_line("knock").unwrap();
    expect(&mut session, "open", "the answer");
    session.send_control('d').unwrap();
    session.exp_eof().unwrap();
    let system = system_text(&provider.requests()[0]);
    assert!(system.contains("You are the door keeper."), "{system}");
    assert!(system.contains("Answer in one word."), "{system}");

    // `-p`: the keys apply, and a flag wins over its key.
    let provider = mock(vec![MockResponse::text("shut")]);
    let output = dsh(&ctx, &provider)
        .args(["-p", "knock", "--system-prompt", "You are the window."])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let system = system_text(&provider.requests()[0]);
    assert!(system.contains("You are the window."), "{system}");
    assert!(!system.contains("door keeper"), "{system}");
    assert!(system.contains("Answer in one word."), "{system}");
}

#[test]
fn completions_offer_the_values_of_enum_flags() {
    let ctx = TestContext::new();
    let output = ctx.dsh().args(["completions", "bash"]).output().unwrap();
    let script = stdout(&output);
    let after = |flag: &str| {
        let at = script
            .find(&format!("{flag})"))
            .unwrap_or_else(|| panic!("{flag}"));
        script[at..].lines().nth(1).unwrap().to_owned()
    };
    let modes = after("--permission-mode");
    assert!(
        modes.contains("acceptEdits") && modes.contains("bypassPermissions"),
        "{modes}"
    );
    assert!(after("--output-format").contains("stream-json"));
    assert!(after("--provider-api").contains("anthropic"));
}

#[test]
fn the_manual_has_its_sections_and_every_page_it_names_exists() {
    let ctx = TestContext::new();
    let output = ctx.dsh().args(["man"]).output().unwrap();
    let page = stdout(&output);
    for section in [
        ".SH DESCRIPTION",
        ".SH ENVIRONMENT",
        ".SH FILES",
        ".SH EXAMPLES",
    ] {
        assert!(page.contains(section), "{section}");
    }
    assert!(page.contains("DSH_API_KEY"));
    assert!(
        page.contains("runs the hooks you wrote"),
        "a real description"
    );
    // Every `dsh-…(1)` named anywhere is a page `dsh man --out-dir` writes
    // and `dsh man SUB…` prints.
    let dir = tempfile::tempdir().unwrap();
    let written = ctx
        .dsh()
        .args(["man", "--out-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(written.status.success(), "{}", stderr(&written));
    let mut named = Vec::new();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        // roff escapes a hyphen as `\-`.
        let text = std::fs::read_to_string(entry.unwrap().path())
            .unwrap()
            .replace("\\-", "-");
        for word in text.split(char::is_whitespace) {
            if let Some(name) = word.strip_suffix("(1)")
                && name.starts_with("dsh-")
            {
                named.push(name.to_owned());
            }
        }
    }
    assert!(named.contains(&"dsh-hooks".to_owned()), "{named:?}");
    assert!(named.contains(&"dsh-hooks-list".to_owned()), "{named:?}");
    for name in &named {
        assert!(
            dir.path().join(format!("{name}.1")).is_file(),
            "{name}(1) is named but not written"
        );
        let words: Vec<&str> = name.trim_start_matches("dsh-").split('-').collect();
        let single = ctx.dsh().arg("man").args(&words).output().unwrap();
        assert!(single.status.success(), "{name}: {}", stderr(&single));
        assert!(stdout(&single).contains(&format!(".TH {name} ")), "{name}");
    }
}
