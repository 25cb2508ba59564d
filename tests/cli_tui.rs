//! The interactive terminal as a person sees it: dsh runs in a
//! pseudo-terminal whose output is fed into a terminal emulator (`vt100`),
//! and the tests type, edit, recall history, run slash commands, watch a
//! hook's block reason and resize the window, asserting on the emulated
//! screen. The emulator answers the cursor-position queries a real
//! terminal answers (the line editor needs them).

use std::io::{Read as _, Write as _};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dsh_provider::mock::{MockProvider, MockResponse, MockToolCall};
use rexpect::process::{PtyProcess, WaitStatus};
use serde_json::json;

use crate::cli_headless::{events, mock, of_type, session_logs};
use crate::support::TestContext;

const WAIT: Duration = Duration::from_secs(60);

fn nz(n: u16) -> std::num::NonZero<u16> {
    std::num::NonZero::new(n).unwrap()
}

/// dsh in a pseudo-terminal, rendered by a terminal emulator.
struct Screen {
    process: PtyProcess,
    writer: std::fs::File,
    parser: Arc<Mutex<vt100::Parser>>,
    /// The pty's slave device (for `stty -F … rows … cols …`).
    tty: String,
}

impl Screen {
    fn spawn(ctx: &TestContext, mock: &MockProvider, size: (u16, u16), args: &[&str]) -> Screen {
        Self::spawn_with_stty(ctx, mock, size, args, "")
    }

    /// [`Screen::spawn`] with more `stty` settings for the terminal (the
    /// pty starts without echo; a person's terminal echoes).
    fn spawn_with_stty(
        ctx: &TestContext,
        mock: &MockProvider,
        (rows, cols): (u16, u16),
        args: &[&str],
        stty: &str,
    ) -> Screen {
        let tty_file = ctx.home().join(format!("tty-{}", std::process::id()));
        let _ = std::fs::remove_file(&tty_file);
        // The shell sizes the terminal and names it, then becomes dsh.
        let mut cmd = std::process::Command::new("sh");
        cmd.arg("-c")
            .arg(format!(
                "tty > '{}'; stty rows {rows} cols {cols} {stty}; exec \"$0\" \"$@\"",
                tty_file.display()
            ))
            .arg(env!("CARGO_BIN_EXE_dsh"))
            .args(args)
            .current_dir(ctx.project())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", ctx.home())
            .env("DSH_HOME", ctx.home().join(".dsh"))
            .env("CODEX_HOME", ctx.home().join(".codex"))
            .env("TERM", "xterm-256color")
            .env("LANG", "C.UTF-8")
            .env("DSH_BASE_URL", mock.base_url())
            .env("DSH_API_KEY", "sk-test");
        if !args.contains(&"--color") {
            cmd.env("NO_COLOR", "1");
        }
        let mut process = PtyProcess::new(cmd).expect("dsh in a pty");
        process.set_kill_timeout(Some(5_000));
        let mut reader = process.get_file_handle().unwrap();
        let mut answers = process.get_file_handle().unwrap();
        let writer = process.get_file_handle().unwrap();
        let parser = Arc::new(Mutex::new(vt100::Parser::new(nz(rows), nz(cols), 0)));
        {
            let parser = Arc::clone(&parser);
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                let mut tail: Vec<u8> = Vec::new();
                loop {
                    let n = match reader.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    let mut parser = parser.lock().unwrap();
                    if std::env::var_os("DSH_TUI_TEST_RAW").is_some() {
                        eprintln!("RAW {:?}", String::from_utf8_lossy(&buf[..n]));
                    }
                    parser.process(&buf[..n]);
                    // A cursor-position query (ESC [ 6 n), possibly split
                    // across reads: answer where the emulator's cursor is.
                    tail.extend_from_slice(&buf[..n]);
                    let queries = tail.windows(4).filter(|w| w == b"\x1b[6n").count();
                    if queries > 0 {
                        let (row, col) = parser.screen().cursor_position();
                        for _ in 0..queries {
                            let _ = write!(answers, "\x1b[{};{}R", row + 1, col + 1);
                        }
                        let _ = answers.flush();
                        tail.clear();
                    } else if tail.len() > 3 {
                        tail.drain(..tail.len() - 3);
                    }
                }
            });
        }
        let deadline = Instant::now() + WAIT;
        let tty = loop {
            if let Ok(name) = std::fs::read_to_string(&tty_file)
                && name.ends_with('\n')
            {
                break name.trim().to_owned();
            }
            assert!(Instant::now() < deadline, "the pty never got a name");
            std::thread::sleep(Duration::from_millis(20));
        };
        Screen {
            process,
            writer,
            parser,
            tty,
        }
    }

    fn contents(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// Waits until the screen satisfies `probe`.
    fn wait_for(&self, what: &str, probe: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let contents = self.contents();
            if probe(&contents) {
                return contents;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; the screen:\n{contents}"
            );
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    fn wait_text(&self, needle: &str) -> String {
        self.wait_for(needle, |screen| screen.contains(needle))
    }

    /// The screen's last line that starts with the prompt.
    fn prompt_line(&self) -> String {
        self.contents()
            .lines()
            .rev()
            .find(|line| line.starts_with("> "))
            .unwrap_or("")
            .to_owned()
    }

    fn wait_prompt(&self) {
        self.wait_for("the prompt", |screen| {
            screen
                .lines()
                .last()
                .is_some_and(|line| line == ">" || line.starts_with("> "))
                || screen.trim_end().ends_with('>')
        });
    }

    fn send(&mut self, keys: &str) {
        self.writer.write_all(keys.as_bytes()).unwrap();
        self.writer.flush().unwrap();
    }

    /// Types `text` a few characters at a time, as a person would.
    fn type_text(&mut self, text: &str) {
        for chunk in text.as_bytes().chunks(4) {
            self.writer.write_all(chunk).unwrap();
            self.writer.flush().unwrap();
            std::thread::sleep(Duration::from_millis(15));
        }
    }

    fn resize(&mut self, rows: u16, cols: u16) {
        let status = std::process::Command::new("stty")
            .args([
                "-F",
                &self.tty,
                "rows",
                &rows.to_string(),
                "cols",
                &cols.to_string(),
            ])
            .status()
            .unwrap();
        assert!(status.success(), "stty failed");
        self.parser
            .lock()
            .unwrap()
            .screen_mut()
            .set_size(nz(rows), nz(cols));
    }

    fn exit_with_ctrl_d(mut self) {
        self.send("\x04");
        let deadline = Instant::now() + WAIT;
        let status = loop {
            match self.process.status() {
                Some(WaitStatus::StillAlive) | None => {}
                Some(status) => break status,
            }
            assert!(
                Instant::now() < deadline,
                "dsh did not exit on Ctrl-D; the screen:\n{}",
                self.contents()
            );
            std::thread::sleep(Duration::from_millis(30));
        };
        assert!(matches!(status, WaitStatus::Exited(_, 0)), "{status:?}");
    }
}

/// The user messages the mock received, one per request (the last one).
fn last_user_message(mock: &MockProvider, request: usize) -> String {
    let requests = mock.requests();
    let messages = requests[request]["messages"].as_array().unwrap();
    messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap()
        .to_owned()
}

#[test]
fn a_person_edits_recalls_history_and_runs_slash_commands() {
    let ctx = TestContext::new();
    let mock = mock(vec![
        MockResponse::text("First answer."),
        MockResponse::text("Second answer."),
        MockResponse::text("Third answer."),
    ]);
    let mut screen = Screen::spawn(&ctx, &mock, (30, 100), &[]);
    screen.wait_text("Ctrl-D exits");
    screen.wait_text("default mode");
    screen.wait_prompt();

    // A typo in a command gets a suggestion; /help lists the commands.
    screen.type_text("/hlep\r");
    screen.wait_text("unknown command /hlep — did you mean /help?");
    screen.type_text("/help\r");
    // dsh wraps the keys paragraph itself: read it with its rows joined.
    screen.wait_for("Ctrl-R searches history", |s| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .contains("Ctrl-R searches history")
    });

    // Editing: a typo fixed with backspace, a word inserted after moving
    // the cursor to the start of the line (Ctrl-A).
    screen.type_text("Say helo");
    screen.send("\x7f");
    screen.type_text("lo");
    screen.send("\x01");
    screen.type_text("Please ");
    screen.wait_for("the edited line", |s| s.contains("> Please Say hello"));
    screen.send("\r");
    screen.wait_text("First answer.");
    assert_eq!(last_user_message(&mock, 0), "Please Say hello");

    // A trailing backslash continues the prompt on a new line.
    screen.type_text("line one \\\r");
    screen.wait_text("… ");
    screen.type_text("line two\r");
    screen.wait_text("Second answer.");
    assert_eq!(last_user_message(&mock, 1), "line one \nline two");

    // Up arrow recalls the first prompt; Enter sends it again.
    screen.wait_prompt();
    screen.send("\x1b[A\x1b[A");
    screen.wait_for("the recalled prompt", |_| true);
    let deadline = Instant::now() + WAIT;
    while !screen.prompt_line().contains("Please Say hello") {
        assert!(Instant::now() < deadline, "{}", screen.contents());
        std::thread::sleep(Duration::from_millis(30));
    }
    screen.send("\r");
    screen.wait_text("Third answer.");
    assert_eq!(last_user_message(&mock, 2), "Please Say hello");

    // The status line counts what the mock reported.
    screen.type_text("/status\r");
    screen.wait_text("steps per turn: no bound");
    screen.type_text("/mcp\r");
    screen.wait_text("no MCP servers");
    screen.exit_with_ctrl_d();

    // History persists per project: a new dsh finds it with Ctrl-R.
    let mock2 = crate::cli_headless::mock(Vec::new());
    let mut screen = Screen::spawn(&ctx, &mock2, (30, 100), &[]);
    screen.wait_prompt();
    screen.send("\x12");
    screen.type_text("Plea");
    screen.wait_for("the history search", |s| {
        s.contains("history search: Plea") && s.contains("Please Say hello")
    });
    screen.send("\x03"); // Ctrl-C leaves the search
    screen.wait_text("Ctrl-C again or Ctrl-D to exit");
    screen.wait_prompt();
    screen.exit_with_ctrl_d();
    let history = std::fs::read_dir(ctx.home().join(".dsh/history"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(history).unwrap();
    assert!(text.contains("Please Say hello"), "{text}");
    assert!(text.contains("/help"), "{text}");
}

#[test]
fn a_hook_block_shows_the_hooks_own_words_and_ctrl_o_the_rest() {
    let ctx = TestContext::new();
    let hooks = ctx.project().join(".claude/hooks/guards/for/this/project");
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::write(
        hooks.join("bash_validator.sh"),
        "cat >/dev/null\necho 'rm -rf is not allowed here; use trash instead' >&2\necho 'second line for the log' >&2\nexit 2\n",
    )
    .unwrap();
    let claude = ctx.home().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join("settings.json"),
        r#"{ "hooks": { "PreToolUse": [ { "matcher": "Bash", "hooks": [ { "type": "command", "command": "bash \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/guards/for/this/project/bash_validator.sh --strict" } ] } ] } }"#,
    )
    .unwrap();
    let mock = mock(vec![
        MockResponse::tool_calls(
            "I'll clean it.",
            vec![MockToolCall::new(
                "call_1",
                "bash",
                &json!({ "command": "rm -rf build" }),
            )],
        ),
        MockResponse::text("The hook blocked that."),
    ]);
    let mut screen = Screen::spawn(&ctx, &mock, (30, 80), &[]);
    screen.wait_prompt();
    screen.type_text("Clean the build directory\r");
    let shown = screen.wait_text("The hook blocked that.");
    assert!(
        shown.contains("blocked: rm -rf is not allowed here; use trash instead"),
        "{shown}"
    );
    // Not the model-facing wrapper with the whole command.
    assert!(!shown.contains("hook error: ["), "{shown}");
    // The command is shortened in the middle: both ends stay readable.
    assert!(shown.contains("`bash \"$CLAUDE_PROJECT_D"), "{shown}");
    assert!(shown.contains("validator.sh --strict`"), "{shown}");
    // No screen row breaks inside a word of the reason.
    assert!(
        !shown
            .lines()
            .any(|l| l.ends_with("trash") && !l.contains("instead")),
        "{shown}"
    );

    let redact = |text: &str| {
        let text = regex::Regex::new(r"\(\d+ ms\)")
            .unwrap()
            .replace_all(text, "(N ms)");
        let text = regex::Regex::new(r"[0-9a-f]{8} · context")
            .unwrap()
            .replace_all(&text, "SESSION · context");
        let text = regex::Regex::new(r"session [0-9a-f-]{36}")
            .unwrap()
            .replace_all(&text, "session SESSION-ID");
        ctx.redact(&text)
            .lines()
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n")
            .trim_end()
            .to_owned()
    };
    // The turn is over once the prompt is back: the screen is settled.
    screen.wait_prompt();
    insta::assert_snapshot!("hook_block_screen", redact(&screen.contents()));

    // Ctrl-O: the full text (the whole command, stderr, the model's text).
    screen.send("\x0f");
    screen.wait_text("exit code: 2");
    let detail = screen.wait_for("the rest of the detail", |s| s.trim_end().ends_with('>'));
    // Shown with --nocapture (the README's transcript is this screen).
    println!("{}", redact(&detail));
    // The whole command, on rows dsh broke between its words.
    assert!(
        detail
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .contains("project/bash_validator.sh --strict"),
        "{detail}"
    );
    assert!(
        detail.contains(
            "stderr:\nrm -rf is not allowed here; use trash instead\nsecond line for the log"
        ),
        "{detail}"
    );
    // /hooks lists the hook with where it comes from and its trust state.
    screen.type_text("/hooks\r");
    let listed = screen.wait_text("no flag or defaultMode");
    println!("{}", redact(&listed));
    assert!(
        listed.contains("     active — ") && listed.contains("settings.json#hooks.PreToolUse[0]"),
        "{listed}"
    );
    screen.exit_with_ctrl_d();

    let events = events(&session_logs(&ctx)[0]);
    let results = of_type(&events, "tool/result");
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["is_error"], true);
}

#[test]
fn markdown_is_rendered_and_rewrapped_after_a_resize() {
    let ctx = TestContext::new();
    let paragraph = "Every word of this paragraph stays whole when the terminal is narrow, because dsh wraps between words and never inside one.";
    let mock = mock(vec![
        MockResponse::text(
            "# Plan\n\n- first **bold** step\n- second `code` step\n\n```rust\nfn main() {}\n```\nDone.",
        ),
        MockResponse::text(paragraph),
    ]);
    let mut screen = Screen::spawn(&ctx, &mock, (40, 100), &["--color", "always"]);
    screen.wait_prompt();
    screen.type_text("Make a plan\r");
    let shown = screen.wait_text("Done.");
    let lines: Vec<&str> = shown.lines().map(str::trim_end).collect();
    assert!(lines.contains(&"Plan"), "{shown}");
    assert!(lines.contains(&"• first bold step"), "{shown}");
    assert!(lines.contains(&"• second code step"), "{shown}");
    assert!(lines.contains(&"  fn main() {}"), "{shown}");
    assert!(!shown.contains("```") && !shown.contains("**"), "{shown}");

    screen.resize(40, 40);
    screen.wait_prompt();
    screen.type_text("Explain\r");
    let shown = screen.wait_for("the wrapped paragraph and the prompt", |s| {
        s.contains("Every word")
            && s.trim_end()
                .lines()
                .last()
                .is_some_and(|l| l.starts_with('>'))
            && s.lines().filter(|l| l.contains(" · context")).count() >= 3
    });
    let rows: Vec<&str> = shown
        .lines()
        .map(str::trim_end)
        .skip_while(|row| !row.starts_with("Every word"))
        .take_while(|row| !row.contains(" · context"))
        .collect();
    assert!(rows.len() >= 3, "{shown}");
    assert!(rows.iter().all(|row| row.chars().count() <= 40), "{shown}");
    // Rejoined, the rows are the paragraph: no word was split.
    assert_eq!(rows.join(" "), paragraph);
    screen.exit_with_ctrl_d();
}

#[test]
fn clear_starts_a_new_session_with_an_empty_context() {
    let ctx = TestContext::new();
    // SessionStart and SessionEnd hooks record what they were told.
    let claude = ctx.home().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    let record = |file: &str| json!([{ "hooks": [{ "type": "command", "command": format!("cat >> \"$HOME/{file}\"; echo >> \"$HOME/{file}\"") }] }]);
    std::fs::write(
        claude.join("settings.json"),
        json!({ "hooks": { "SessionStart": record("starts.jsonl"), "SessionEnd": record("ends.jsonl") } })
            .to_string(),
    )
    .unwrap();
    let mock = mock(vec![
        MockResponse::Reply(
            dsh_provider::mock::MockReply::chunks(["Before."]).with_usage(2_000, 100),
        ),
        MockResponse::text("After."),
    ]);
    // The first prompt from the command line: sent once, not again by the
    // restarted dsh.
    let mut screen = Screen::spawn(&ctx, &mock, (30, 120), &["one"]);
    screen.wait_text("Before.");
    screen.wait_text("2k in · 100 out");
    screen.type_text("/clear\r");
    screen.wait_text("context cleared");
    // The new session's header, with another id.
    let shown = screen.wait_for("the new session", |s| {
        s.matches("· Ctrl-C interrupts").count() == 2
    });
    let ids: Vec<&str> = shown
        .lines()
        .filter_map(|line| line.strip_prefix("session "))
        .filter_map(|rest| rest.split_whitespace().next())
        .collect();
    assert_eq!(ids.len(), 2, "{shown}");
    assert_ne!(ids[0], ids[1], "{shown}");
    assert!(
        shown.contains(&format!("this one resumes with `dsh -r {}`", ids[0])),
        "{shown}"
    );
    screen.wait_prompt();
    // Usage starts from zero: the status line shows no tokens yet.
    let status = screen
        .contents()
        .lines()
        .rev()
        .find(|line| line.contains("· context"))
        .unwrap()
        .to_owned();
    assert!(!status.contains(" in · "), "{status}");
    screen.type_text("two\r");
    screen.wait_text("After.");
    screen.exit_with_ctrl_d();
    // Two sessions; the second request carries no trace of the first.
    assert_eq!(session_logs(&ctx).len(), 2);
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let second = requests[1]["messages"].to_string();
    assert!(!second.contains("Before."), "{second}");
    assert!(second.contains("two"), "{second}");
    // SessionEnd `clear` ended the first, SessionStart `clear` opened the second.
    let read = |file: &str| -> Vec<serde_json::Value> {
        std::fs::read_to_string(ctx.home().join(file))
            .unwrap()
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    };
    let starts = read("starts.jsonl");
    let sources: Vec<&str> = starts
        .iter()
        .map(|s| s["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources, ["startup", "clear"]);
    assert_ne!(starts[0]["session_id"], starts[1]["session_id"]);
    let ends = read("ends.jsonl");
    let reasons: Vec<&str> = ends.iter().map(|e| e["reason"].as_str().unwrap()).collect();
    assert_eq!(reasons, ["clear", "prompt_input_exit"]);
}

#[test]
fn errors_read_as_one_line_ctrl_c_interrupts_and_the_status_line_counts_context() {
    let ctx = TestContext::new();
    let mock = mock(vec![
        MockResponse::status(401, r#"{"error":{"message":"invalid api key"}}"#),
        MockResponse::Reply(
            dsh_provider::mock::MockReply::chunks(["Counting", " slowly", " forever"])
                .with_delay(Duration::from_secs(30)),
        ),
        MockResponse::Reply(
            dsh_provider::mock::MockReply::chunks(["Done."]).with_usage(12_000, 300),
        ),
    ]);
    let mut screen = Screen::spawn(&ctx, &mock, (30, 120), &[]);
    screen.wait_prompt();
    screen.type_text("hello\r");
    let shown = screen.wait_text("the provider rejected the API key");
    // The variable the key came from.
    assert!(shown.contains("set a valid key in DSH_API_KEY"), "{shown}");
    screen.wait_prompt();

    // Ctrl-C while the model streams interrupts the turn, not dsh.
    screen.type_text("count\r");
    screen.wait_for("the request", |_| mock.requests().len() >= 2);
    std::thread::sleep(Duration::from_millis(300));
    screen.send("\x03");
    let shown = screen.wait_text("interrupted");
    // The terminal's own `^C` echo and dsh's line read as one `^C`.
    screen.wait_text("interrupting the turn");
    let shown = format!("{shown}{}", screen.contents());
    assert!(!shown.contains("^C^C"), "{shown}");
    assert!(shown.contains("^C interrupting the turn…"), "{shown}");
    screen.wait_prompt();

    // Tab completes a command; the reply's usage reaches the status line.
    screen.type_text("/perm\t");
    let deadline = Instant::now() + WAIT;
    while screen.prompt_line().trim_end() != "> /permissions" {
        assert!(Instant::now() < deadline, "{}", screen.contents());
        std::thread::sleep(Duration::from_millis(30));
    }
    screen.send("\r");
    screen.wait_text("this session: default mode");
    screen.type_text("last one\r");
    screen.wait_text("Done.");
    screen.wait_text("context 12.3k/128k (9%)");
    screen.exit_with_ctrl_d();

    let events = events(&session_logs(&ctx)[0]);
    let reasons: Vec<&str> = of_type(&events, "turn/end")
        .iter()
        .map(|end| end["reason"].as_str().unwrap())
        .collect();
    assert_eq!(reasons, ["error", "interrupted", "completed"]);
}

#[test]
fn a_slow_model_shows_a_spinner_until_its_text_arrives() {
    let ctx = TestContext::new();
    let mock = mock(vec![MockResponse::Reply(
        dsh_provider::mock::MockReply::chunks(["Here at last."])
            .with_delay(Duration::from_millis(2500)),
    )]);
    let mut screen = Screen::spawn(&ctx, &mock, (20, 100), &[]);
    screen.wait_prompt();
    screen.type_text("take your time\r");
    let waiting = screen.wait_text("waiting for the model…");
    assert!(waiting.contains("Ctrl-C interrupts"), "{waiting}");
    let done = screen.wait_text("Here at last.");
    // The spinner's line was cleared, not left behind.
    assert!(!done.contains("waiting for the model"), "{done}");
    screen.exit_with_ctrl_d();
}

#[test]
fn hooks_trust_from_the_prompt() {
    let ctx = TestContext::new();
    let claude = ctx.project().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join("settings.json"),
        r#"{ "hooks": { "UserPromptSubmit": [ { "hooks": [ { "type": "command", "command": "true project-hook-marker" } ] } ] } }"#,
    )
    .unwrap();
    let mock = mock(Vec::new());
    let mut screen = Screen::spawn(&ctx, &mock, (40, 120), &[]);
    screen.wait_text("Trust this project?");
    screen.type_text("n\r");
    screen.wait_text("Not trusted: its hooks do not run");
    screen.wait_prompt();
    screen.type_text("/hooks\r");
    let before = screen.wait_text("no flag or defaultMode");
    screen.type_text("/hooks trust\r");
    let after = screen.wait_text("(trust applies from the next session on)");
    screen.wait_prompt();
    screen.type_text("/hooks\r");
    let listed = screen.wait_for("the second listing", |s| {
        s.matches("no flag or defaultMode").count() >= 2
    });
    println!("{before}\n----\n{after}\n----\n{listed}");
    let first = &listed[listed.find("> /hooks\n").unwrap()..listed.find("> /hooks trust").unwrap()];
    let last = &listed[listed.rfind("> /hooks\n").unwrap()..];
    assert!(first.contains("untrusted"), "{first}");
    assert!(
        !last.contains("untrusted") && last.contains("trusted"),
        "{last}"
    );
    screen.exit_with_ctrl_d();
}

#[test]
fn model_reopens_the_session_with_another_model() {
    let ctx = TestContext::new();
    let mock = mock(vec![
        MockResponse::text("From the first model."),
        MockResponse::text("From the second model."),
    ]);
    let mut screen = Screen::spawn(&ctx, &mock, (40, 120), &[]);
    screen.wait_prompt();
    screen.type_text("one\r");
    screen.wait_text("From the first model.");
    screen.type_text("/model other-model\r");
    screen.wait_text("other-model · ");
    screen.wait_prompt();
    screen.type_text("two\r");
    screen.wait_text("From the second model.");
    screen.exit_with_ctrl_d();
    // The same session, now talking to the other model with the history.
    assert_eq!(session_logs(&ctx).len(), 1);
    let requests = mock.requests();
    assert_eq!(requests[1]["model"], "other-model");
    assert!(
        requests[1]["messages"]
            .to_string()
            .contains("From the first model.")
    );
}

// Lines typed during a turn.
#[test]
fn a_line_typed_while_a_tool_runs_joins_the_running_turn() {
    let ctx = TestContext::new();
    let mock = mock(vec![
        MockResponse::tool_calls(
            "Napping first.",
            vec![MockToolCall::new(
                "call_1",
                "bash",
                &json!({ "command": "sleep 3" }),
            )],
        ),
        MockResponse::text("Rested, and noted."),
    ]);
    let mut screen = Screen::spawn(&ctx, &mock, (30, 100), &["--allowedTools", "Bash(sleep:*)"]);
    screen.wait_prompt();
    screen.type_text("take a nap\r");
    screen.wait_text("sleep 3");
    screen.type_text("also water the plants\r");
    screen.wait_text("queued for the running turn: also water the plants");
    screen.wait_text("Rested, and noted.");
    screen.wait_prompt();
    screen.exit_with_ctrl_d();
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert_eq!(last_user_message(&mock, 0), "take a nap");
    assert_eq!(last_user_message(&mock, 1), "also water the plants");
    let events = events(&session_logs(&ctx)[0]);
    assert_eq!(of_type(&events, "turn/end").len(), 1, "no extra turn");
    assert_eq!(of_type(&events, "steering/message").len(), 1);
}

/// Screen rows `from` (a row containing it) through `to`, each as shown,
/// with whether the terminal (not dsh) wrapped it onto the next row.
fn region(screen: &Screen, from: &str, to: &str) -> Vec<(String, bool)> {
    let parser = screen.parser.lock().unwrap();
    let grid = parser.screen();
    let (rows, cols) = grid.size();
    let (rows, cols) = (rows.get(), cols.get());
    let all: Vec<(String, bool)> = grid
        .rows(0, cols)
        .zip(0..rows)
        .map(|(text, row)| (text, grid.row_wrapped(row)))
        .collect();
    let start = all.iter().position(|(text, _)| text.contains(from));
    let Some(start) = start else {
        return Vec::new();
    };
    let end = all[start..]
        .iter()
        .position(|(text, _)| text.contains(to))
        .map_or(all.len(), |offset| start + offset + 1);
    all[start..end].to_vec()
}

fn words(rows: &[(String, bool)]) -> Vec<String> {
    rows.iter()
        .flat_map(|(text, _)| text.split_whitespace().map(str::to_owned))
        .collect::<Vec<_>>()
}

#[test]
fn dshs_own_text_wraps_between_words_like_the_models() {
    // The same /help, wide and narrow: the narrow one has the same words,
    // each whole, on rows dsh broke itself (none the terminal wrapped).
    let help_rows = |cols: u16| {
        let ctx = TestContext::new();
        let mock = mock(Vec::new());
        let mut screen = Screen::spawn(&ctx, &mock, (60, cols), &[]);
        screen.wait_prompt();
        screen.type_text("/help\r");
        screen.wait_text("Commands:");
        screen.wait_prompt();
        let rows = region(&screen, "Commands:", "model.");
        screen.exit_with_ctrl_d();
        rows
    };
    let wide = help_rows(250);
    let narrow = help_rows(52);
    assert!(narrow.len() > wide.len(), "{narrow:#?}");
    assert_eq!(words(&narrow), words(&wide));
    for (text, wrapped) in &narrow {
        assert!(
            !wrapped,
            "the terminal broke this row: {text:?}\n{narrow:#?}"
        );
        assert!(text.trim_end().chars().count() <= 52, "{text:?}");
    }
}

#[test]
fn a_hook_that_says_blocked_reads_once_and_long_lines_wrap() {
    let ctx = TestContext::new();
    let hooks = ctx.project().join(".claude/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::write(
        hooks.join("safe_clean_guard.sh"),
        "cat >/dev/null\necho 'Blocked: use the safe-clean script instead of removing the build history by hand' >&2\nexit 2\n",
    )
    .unwrap();
    let claude = ctx.home().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join("settings.json"),
        r#"{ "hooks": { "PreToolUse": [ { "matcher": "Bash", "hooks": [ { "type": "command", "command": "bash \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/safe_clean_guard.sh" } ] } ] } }"#,
    )
    .unwrap();
    let mock = mock(vec![
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                "call_1",
                "bash",
                &json!({ "command": "rm -rf build" }),
            )],
        ),
        MockResponse::text("Understood."),
    ]);
    let mut screen = Screen::spawn(&ctx, &mock, (40, 60), &[]);
    screen.wait_prompt();
    screen.type_text("Clean up\r");
    let shown = screen.wait_text("Understood.");
    assert!(shown.contains("Blocked: use the safe-clean"), "{shown}");
    assert!(
        !shown.to_lowercase().contains("blocked: blocked"),
        "{shown}"
    );
    screen.wait_prompt();
    // /last's full text: every row broken by dsh, between words.
    screen.send("/last\r");
    screen.wait_text("exit code: 2");
    screen.wait_prompt();
    let rows = region(&screen, "safe_clean_guard", "exit code: 2");
    assert!(!rows.is_empty(), "{}", screen.contents());
    // Only a single word wider than the screen may run over its edge.
    let unbreakable = |text: &str| text.split_whitespace().count() == 1;
    for (text, wrapped) in &rows {
        assert!(
            !wrapped || unbreakable(text),
            "the terminal broke this row: {text:?}\n{rows:#?}"
        );
    }
    screen.exit_with_ctrl_d();
}

#[test]
fn markdown_blocks_stay_apart_and_a_connected_mcp_server_is_no_warning() {
    let ctx = TestContext::new();
    let config = ctx.home().join("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"echo": {
            "command": "python3",
            "args": [crate::support::repo_root().join("fixtures/mcp/echo_server.py")],
        }}})
        .to_string(),
    )
    .unwrap();
    let mock = mock(vec![MockResponse::text(
        "# Plan\nFirst a paragraph.\n- one step\n- two steps\n```sh\nls -la\n```\nDone.",
    )]);
    let config = config.display().to_string();
    let mut screen = Screen::spawn(
        &ctx,
        &mock,
        (40, 100),
        &["--color", "always", "--mcp-config", &config],
    );
    let banner = screen.wait_text("mcp: echo");
    let line = banner
        .lines()
        .find(|line| line.contains("mcp: echo"))
        .unwrap();
    assert!(line.contains("connected"), "{banner}");
    assert!(!line.contains('⚠'), "{banner}");
    screen.wait_prompt();
    screen.type_text("Make a plan\r");
    let shown = screen.wait_text("Done.");
    let rows: Vec<&str> = shown
        .lines()
        .map(str::trim_end)
        .skip_while(|row| *row != "Plan")
        .take_while(|row| *row != "Done.")
        .collect();
    assert_eq!(
        rows,
        [
            "Plan",
            "",
            "First a paragraph.",
            "",
            "• one step",
            "• two steps",
            "",
            "  ls -la",
            ""
        ],
        "{shown}"
    );
    screen.exit_with_ctrl_d();
}

#[test]
fn ctrl_c_while_a_command_runs_reads_one_caret_c() {
    let ctx = TestContext::new();
    let mock = mock(vec![
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                "call_1",
                "bash",
                &json!({ "command": "sleep 30" }),
            )],
        ),
        MockResponse::text("Stopped."),
    ]);
    let mut screen = Screen::spawn_with_stty(
        &ctx,
        &mock,
        (30, 100),
        &["--permission-mode", "bypassPermissions"],
        "echo echoctl",
    );
    screen.wait_prompt();
    screen.type_text("Wait a while\r");
    screen.wait_text("$ sleep 30");
    std::thread::sleep(Duration::from_millis(300));
    screen.send("\x03");
    let shown = screen.wait_text("interrupting the turn");
    // The terminal echoed `^C` itself (cooked mode): dsh's line takes it
    // back instead of adding a second one.
    assert!(!shown.contains("^C^C"), "{shown}");
    let line = shown
        .lines()
        .find(|line| line.contains("interrupting the turn"))
        .unwrap();
    assert_eq!(line.trim_end(), "^C interrupting the turn…", "{shown}");
    screen.wait_prompt();
    screen.exit_with_ctrl_d();
}

/// The screen with its session ids, timings and temp paths replaced.
fn settled(ctx: &TestContext, text: &str) -> String {
    let text = regex::Regex::new(r"[0-9a-f]{8}-[0-9a-f-]{27}")
        .unwrap()
        .replace_all(text, "SESSION-ID");
    let text = regex::Regex::new(r"· [0-9a-f]{8} · context")
        .unwrap()
        .replace_all(&text, "· SESSION · context");
    ctx.redact(&text)
        .lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
        .trim_end()
        .to_owned()
}

#[test]
fn an_edit_is_approved_from_its_diff_and_usage_and_cost_are_counted() {
    use dsh_provider::mock::MockReply;
    let ctx = TestContext::new();
    std::fs::write(
        ctx.project().join("notes.txt"),
        "alpha\nbeta\ngamma\ndelta\n",
    )
    .unwrap();
    let edit = MockToolCall::new(
        "call_1",
        "edit",
        &json!({"file_path": "notes.txt", "old_string": "beta", "new_string": "BETA"}),
    );
    let mock = mock(vec![
        MockResponse::Reply(
            MockReply::chunks(["I'll capitalize it."])
                .with_tool_call(edit)
                .with_usage(12_000, 300),
        ),
        MockResponse::Reply(
            MockReply::chunks(["Done."])
                .with_usage(13_000, 50)
                .with_cache(11_000, 0),
        ),
    ]);
    let mut screen = Screen::spawn(&ctx, &mock, (40, 100), &[]);
    screen.wait_prompt();
    screen.type_text("Capitalize beta in notes.txt\r");
    // The approval shows the change, not the JSON arguments.
    let question = screen.wait_text("choice [1-4]:");
    assert!(
        question.contains("? edit notes.txt needs your approval"),
        "{question}"
    );
    assert!(
        question.contains("notes.txt: 1 addition and 1 removal"),
        "{question}"
    );
    assert!(question.contains("    2 -beta"), "{question}");
    assert!(question.contains("    2 +BETA"), "{question}");
    assert!(question.contains("    1  alpha"), "{question}");
    assert!(!question.contains("arguments: {"), "{question}");
    println!("the approval:\n{}", settled(&ctx, &question));
    screen.type_text("1\r");
    // The result is the diff of what changed on disk.
    let shown = screen.wait_text("Done.");
    assert!(
        shown.contains("⎿ Updated notes.txt with 1 addition and 1 removal"),
        "{shown}"
    );
    assert!(shown.contains("      2 +BETA"), "{shown}");
    assert!(!shown.contains("has been updated successfully"), "{shown}");
    assert_eq!(
        std::fs::read_to_string(ctx.project().join("notes.txt")).unwrap(),
        "alpha\nBETA\ngamma\ndelta\n"
    );
    // The status line: the context window and the session's tokens and cost.
    screen.wait_prompt();
    let shown = screen.wait_text("25k in · 350 out · $");
    let status = shown
        .lines()
        .rev()
        .find(|line| line.contains("· context"))
        .unwrap();
    assert!(status.contains("context 13.1k/128k (10%)"), "{status}");
    assert!(status.ends_with("default mode"), "{status}");
    println!("the turn and the status line:\n{}", settled(&ctx, &shown));
    // /cost: the last turn and the session, cache reads included.
    screen.type_text("/cost\r");
    let cost = screen.wait_text("list prices");
    assert!(
        cost.contains("last turn: 25k in (11k cache read, 0 cache write) · 350 out · $"),
        "{cost}"
    );
    assert!(cost.contains("(2 model requests)"), "{cost}");
    screen.wait_prompt();
    // Shift-Tab cycles the permission mode; the status line shows it.
    screen.send("\x1b[Z");
    screen.wait_text("permission mode: acceptEdits");
    screen.wait_for("the status line in acceptEdits", |s| {
        s.lines()
            .any(|l| l.contains("· context") && l.ends_with("acceptEdits mode"))
    });
    screen.wait_prompt();
    screen.send("\x1b[Z");
    screen.wait_text("permission mode: plan");
    screen.wait_prompt();
    screen.send("\x1b[Z");
    screen.wait_text("permission mode: default");
    screen.wait_prompt();
    // Leaving names the command that resumes the session.
    let id = session_logs(&ctx)[0]
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    screen.send("\x04");
    screen.wait_text(&format!("resume this session with `dsh -r {id}`"));
}

#[test]
fn a_model_without_a_price_shows_tokens_and_no_cost() {
    use dsh_provider::mock::MockReply;
    let ctx = TestContext::new();
    let mock = mock(vec![MockResponse::Reply(
        MockReply::chunks(["Hi."]).with_usage(1_500, 20),
    )]);
    let mut screen = Screen::spawn(&ctx, &mock, (30, 100), &["--model", "my-local-model"]);
    screen.wait_prompt();
    screen.type_text("hello\r");
    screen.wait_text("Hi.");
    let shown = screen.wait_text("1.5k in · 20 out");
    let status = shown
        .lines()
        .rev()
        .find(|l| l.contains("· context"))
        .unwrap();
    assert!(!status.contains('$'), "{status}");
    screen.wait_prompt();
    screen.type_text("/cost\r");
    let cost = screen.wait_text("no price known for my-local-model");
    assert!(!cost.contains('$'), "{cost}");
    screen.exit_with_ctrl_d();
}

#[test]
fn hook_runs_that_change_nothing_are_quiet_until_ctrl_o() {
    let ctx = TestContext::new();
    let claude = ctx.home().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    let context = r#"echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"CTX-NOTE for the model"}}'"#;
    std::fs::write(
        claude.join("settings.json"),
        json!({ "hooks": {
            "UserPromptSubmit": [{ "hooks": [{ "type": "command", "command": context }] }],
            "Stop": [{ "hooks": [{ "type": "command", "command": "echo '{}'" }] }]
        }})
        .to_string(),
    )
    .unwrap();
    let mock = mock(vec![
        MockResponse::text("First."),
        MockResponse::text("Second."),
    ]);
    let mut screen = Screen::spawn(&ctx, &mock, (40, 110), &[]);
    screen.wait_prompt();
    screen.type_text("one\r");
    screen.wait_text("First.");
    screen.wait_prompt();
    let quiet = screen.contents();
    assert!(!quiet.contains("hook `"), "{quiet}");
    assert!(!quiet.contains("CTX-NOTE"), "{quiet}");
    // The model still got the context.
    assert!(
        mock.requests()[0]["messages"]
            .to_string()
            .contains("CTX-NOTE")
    );
    // Ctrl-O shows everything from now on.
    screen.send("\x0f");
    screen.wait_text("showing every hook run");
    screen.wait_prompt();
    screen.type_text("two\r");
    let shown = screen.wait_text("Second.");
    screen.wait_prompt();
    let shown = format!("{shown}{}", screen.contents());
    assert!(shown.contains("claude UserPromptSubmit hook"), "{shown}");
    assert!(shown.contains("context from"), "{shown}");
    assert!(shown.contains("CTX-NOTE"), "{shown}");
    screen.exit_with_ctrl_d();

    // `--verbose` starts with everything shown.
    let mock = crate::cli_headless::mock(vec![MockResponse::text("Third.")]);
    let mut screen = Screen::spawn(&ctx, &mock, (40, 110), &["--verbose"]);
    screen.wait_prompt();
    screen.type_text("three\r");
    screen.wait_text("Third.");
    screen.wait_text("claude Stop hook");
    screen.exit_with_ctrl_d();
}

#[test]
fn resume_without_an_id_opens_a_picker() {
    let ctx = TestContext::new();
    let mock = mock(vec![
        MockResponse::text("Noted."),
        MockResponse::text("Still here."),
    ]);
    let mut screen = Screen::spawn(&ctx, &mock, (30, 110), &[]);
    screen.wait_prompt();
    screen.type_text("remember the picker test\r");
    screen.wait_text("Noted.");
    screen.wait_prompt();
    // No other session here yet.
    screen.type_text("/resume\r");
    screen.wait_text("no other session in this directory");
    screen.exit_with_ctrl_d();
    let id = session_logs(&ctx)[0]
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned();

    let mut screen = Screen::spawn(&ctx, &mock, (30, 110), &["-r"]);
    let picker = screen.wait_text("resume which?");
    assert!(
        picker.contains("Resume a session of this directory:"),
        "{picker}"
    );
    assert!(picker.contains(&format!("1. {}", &id[..8])), "{picker}");
    assert!(picker.contains("remember the picker test"), "{picker}");
    screen.type_text("1\r");
    screen.wait_text(&format!("resumed session {id} (1 turns so far)"));
    screen.wait_prompt();
    screen.type_text("and now?\r");
    screen.wait_text("Still here.");
    let second = mock.requests()[1]["messages"].to_string();
    assert!(second.contains("remember the picker test"), "{second}");
    screen.exit_with_ctrl_d();
}

#[test]
fn a_retried_request_is_one_updating_line() {
    let ctx = TestContext::new();
    let dsh_home = ctx.home().join(".dsh");
    std::fs::create_dir_all(&dsh_home).unwrap();
    std::fs::write(
        dsh_home.join("config.toml"),
        "[provider]\nmax_retries = 2\n",
    )
    .unwrap();
    let mock = mock(vec![
        MockResponse::status_retry_after(503, "1", "busy"),
        MockResponse::status_retry_after(503, "1", "busy"),
        MockResponse::text("After the retries."),
    ]);
    let mut screen = Screen::spawn(&ctx, &mock, (30, 140), &[]);
    screen.wait_prompt();
    screen.type_text("hello\r");
    screen.wait_text("retrying (attempt 1)");
    let second = screen.wait_text("retrying (attempt 2)");
    // The second retry replaced the first: one line says it.
    assert_eq!(second.matches("retrying (attempt").count(), 1, "{second}");
    assert!(!second.contains("[provider]"), "{second}");
    let done = screen.wait_text("After the retries.");
    screen.wait_prompt();
    let done = format!("{done}{}", screen.contents());
    assert!(!done.contains("retrying"), "{done}");
    assert!(!done.contains("[provider]"), "{done}");
    screen.exit_with_ctrl_d();
}

#[test]
fn print_mode_needs_the_id_that_the_picker_would_ask_for() {
    let ctx = TestContext::new();
    let mock = mock(Vec::new());
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_dsh"))
        .args(["-p", "hello", "-r"])
        .current_dir(ctx.project())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", ctx.home())
        .env("DSH_HOME", ctx.home().join(".dsh"))
        .env("DSH_BASE_URL", mock.base_url())
        .env("DSH_API_KEY", "sk-test")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--resume needs a session id with -p (`dsh sessions` lists them)"),
        "{stderr}"
    );
    assert!(mock.requests().is_empty());
}

#[test]
fn an_unreachable_provider_is_one_updating_line_then_one_error() {
    let ctx = TestContext::new();
    let mock = mock(Vec::new());
    let mut screen = Screen::spawn(&ctx, &mock, (30, 160), &[]);
    screen.wait_prompt();
    // Nothing listens at the base URL any more.
    drop(mock);
    screen.type_text("hello\r");
    let retrying = screen.wait_text("retrying (attempt 2)");
    assert_eq!(
        retrying.matches("retrying (attempt").count(),
        1,
        "{retrying}"
    );
    let shown = screen.wait_text("cannot reach the provider");
    screen.wait_prompt();
    let shown = format!("{shown}{}", screen.contents());
    assert!(!shown.contains("retrying"), "{shown}");
    assert!(!shown.contains("[provider]"), "{shown}");
    let contents = screen.contents();
    let errors = contents
        .lines()
        .filter(|line| line.starts_with('✗'))
        .count();
    assert_eq!(errors, 1, "{shown}");
    screen.exit_with_ctrl_d();
}

#[test]
fn shift_tab_tells_hooks_the_new_mode() {
    let ctx = TestContext::new();
    let claude = ctx.home().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join("settings.json"),
        json!({ "hooks": { "UserPromptSubmit": [{ "hooks": [{ "type": "command",
            "command": "cat >> \"$HOME/prompts.jsonl\"; echo >> \"$HOME/prompts.jsonl\"" }] }] } })
        .to_string(),
    )
    .unwrap();
    let mock = mock(vec![MockResponse::text("Planned.")]);
    let mut screen = Screen::spawn(&ctx, &mock, (30, 110), &[]);
    screen.wait_prompt();
    screen.send("\x1b[Z");
    screen.wait_text("permission mode: acceptEdits");
    screen.wait_prompt();
    screen.send("\x1b[Z");
    screen.wait_text("permission mode: plan");
    screen.wait_prompt();
    screen.type_text("make a plan\r");
    screen.wait_text("Planned.");
    screen.exit_with_ctrl_d();
    let recorded = std::fs::read_to_string(ctx.home().join("prompts.jsonl")).unwrap();
    let payload: serde_json::Value =
        serde_json::from_str(recorded.lines().find(|l| !l.trim().is_empty()).unwrap()).unwrap();
    assert_eq!(payload["permission_mode"], "plan", "{recorded}");
}

/// The model-facing text of the first tool result the mock was sent.
fn first_tool_result(mock: &MockProvider) -> String {
    let requests = mock.requests();
    requests
        .iter()
        .flat_map(|request| request["messages"].as_array().cloned().unwrap_or_default())
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str().map(str::to_owned))
        .expect("a tool result")
}

#[test]
fn ask_user_question_shows_the_options_and_a_number_picks_one() {
    let ctx = TestContext::new();
    let ask = MockToolCall::new(
        "call_1",
        "ask_user_question",
        &json!({"questions": [{
            "question": "Which database?",
            "header": "Database",
            "options": [
                {"label": "Postgres", "description": "the usual"},
                {"label": "SQLite", "description": "one file"}
            ]
        }]}),
    );
    let mock = mock(vec![
        MockResponse::tool_calls("", vec![ask]),
        MockResponse::text("Noted."),
    ]);
    let mut screen = Screen::spawn(&ctx, &mock, (40, 100), &[]);
    screen.wait_prompt();
    screen.type_text("Pick a database\r");
    let question = screen.wait_text("answer:");
    assert!(
        question.contains("? Database: Which database?"),
        "{question}"
    );
    assert!(question.contains("  1 Postgres — the usual"), "{question}");
    assert!(question.contains("  2 SQLite — one file"), "{question}");
    // Out of range: asked again.
    screen.type_text("3\r");
    screen.wait_for("the hint again", |s| {
        s.matches("a number, or type your own answer").count() >= 2
    });
    screen.type_text("2\r");
    screen.wait_text("Noted.");
    let result = first_tool_result(&mock);
    assert!(
        result.contains("\"Which database?\" = \"SQLite\""),
        "{result}"
    );
    screen.wait_prompt();
    screen.exit_with_ctrl_d();
}

#[test]
fn an_mcp_servers_elicitation_is_a_form_in_the_terminal() {
    let ctx = TestContext::new();
    let log = ctx.home().join("elicit.jsonl");
    let config = ctx.home().join("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"elicit": {
            "command": "python3",
            "args": [crate::support::repo_root().join("fixtures/mcp/elicit_server.py")],
            "env": {"MCP_ELICIT_LOG": log},
        }}})
        .to_string(),
    )
    .unwrap();
    let mock = mock(vec![
        MockResponse::tool_calls(
            "",
            vec![MockToolCall::new(
                "call_1",
                "mcp__elicit__ask",
                &json!({"question": "What is your name?"}),
            )],
        ),
        MockResponse::text("Hello."),
    ]);
    let config = config.display().to_string();
    let mut screen = Screen::spawn(
        &ctx,
        &mock,
        (40, 100),
        &[
            "--mcp-config",
            &config,
            "--permission-mode",
            "bypassPermissions",
        ],
    );
    screen.wait_prompt();
    screen.type_text("Ask my name\r");
    let question = screen.wait_text("choice [1/2]:");
    assert!(
        question.contains("? MCP server elicit asks: What is your name?"),
        "{question}"
    );
    screen.type_text("y\r");
    screen.wait_text("Name (string): ");
    screen.type_text("Ada\r");
    screen.wait_text("OK (boolean, Enter skips): ");
    screen.type_text("maybe\r");
    screen.wait_text("expected y or n");
    screen.type_text("y\r");
    screen.wait_text("Hello.");
    let result = first_tool_result(&mock);
    assert_eq!(
        result,
        r#"ELICIT: {"action": "accept", "content": {"name": "Ada", "ok": true}}"#
    );
    screen.wait_prompt();
    screen.exit_with_ctrl_d();
}
