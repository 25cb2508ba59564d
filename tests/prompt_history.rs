//! The terminal's prompt history survives every way a session ends: each
//! prompt is on disk (`$DSH_HOME/history/…`) as soon as it is sent, so
//! `/exit`, Ctrl-D, SIGHUP and SIGTERM all leave it there, and the next
//! session recalls it with Up.

use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dsh_provider::mock::{MockProvider, MockResponse};
use rexpect::process::{PtyProcess, Signal, WaitStatus};

use crate::cli_headless::mock;
use crate::support::TestContext;

const WAIT: Duration = Duration::from_secs(60);

/// dsh in a pseudo-terminal, its output rendered by a terminal emulator
/// that answers the line editor's cursor-position queries.
struct Pty {
    process: PtyProcess,
    writer: std::fs::File,
    parser: Arc<Mutex<vt100::Parser>>,
}

impl Pty {
    fn spawn(ctx: &TestContext, mock: &MockProvider) -> Pty {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_dsh"));
        cmd.current_dir(ctx.project())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", ctx.home())
            .env("DSH_HOME", ctx.home().join(".dsh"))
            .env("CODEX_HOME", ctx.home().join(".codex"))
            .env("TERM", "xterm-256color")
            .env("LANG", "C.UTF-8")
            .env("NO_COLOR", "1")
            .env("DSH_BASE_URL", mock.base_url())
            .env("DSH_API_KEY", "sk-test");
        let mut process = PtyProcess::new(cmd).expect("dsh in a pty");
        process.set_kill_timeout(Some(5_000));
        let mut reader = process.get_file_handle().unwrap();
        let mut answers = process.get_file_handle().unwrap();
        let writer = process.get_file_handle().unwrap();
        let rows = std::num::NonZero::new(30).unwrap();
        let cols = std::num::NonZero::new(100).unwrap();
        let parser = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 0)));
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
                    parser.process(&buf[..n]);
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
        Pty {
            process,
            writer,
            parser,
        }
    }

    fn contents(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    fn wait_text(&self, needle: &str) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let contents = self.contents();
            if contents.contains(needle) {
                return contents;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {needle:?}; the screen:\n{contents}"
            );
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    fn wait_prompt(&self) {
        let deadline = Instant::now() + WAIT;
        loop {
            let contents = self.contents();
            if contents
                .lines()
                .last()
                .is_some_and(|line| line == ">" || line.starts_with("> "))
                || contents.trim_end().ends_with('>')
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for the prompt; the screen:\n{contents}"
            );
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    fn type_text(&mut self, text: &str) {
        for chunk in text.as_bytes().chunks(4) {
            self.writer.write_all(chunk).unwrap();
            self.writer.flush().unwrap();
            std::thread::sleep(Duration::from_millis(15));
        }
    }

    fn send(&mut self, keys: &str) {
        self.writer.write_all(keys.as_bytes()).unwrap();
        self.writer.flush().unwrap();
    }

    fn signal(&mut self, signal: Signal) {
        self.process.signal(signal).unwrap();
    }

    /// Waits for dsh to end (any status: a signal exit is not 0).
    fn wait_exit(&mut self, how: &str) -> WaitStatus {
        let deadline = Instant::now() + WAIT;
        loop {
            match self.process.status() {
                Some(WaitStatus::StillAlive) | None => {}
                Some(status) => return status,
            }
            assert!(
                Instant::now() < deadline,
                "dsh did not exit on {how}; the screen:\n{}",
                self.contents()
            );
            std::thread::sleep(Duration::from_millis(30));
        }
    }
}

/// The history file's text (the one file under `$DSH_HOME/history/`).
fn history_text(ctx: &TestContext) -> String {
    let dir = ctx.home().join(".dsh/history");
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| entries.flatten().map(|entry| entry.path()).collect())
        .unwrap_or_default();
    files
        .first()
        .map(|path| std::fs::read_to_string(path).unwrap())
        .unwrap_or_default()
}

/// Sends `prompt` and waits for the model's answer; the prompt is in the
/// history file by then (before anything ends the session).
fn send_prompt(pty: &mut Pty, ctx: &TestContext, prompt: &str, answer: &str) {
    pty.wait_prompt();
    pty.type_text(prompt);
    pty.send("\r");
    pty.wait_text(answer);
    pty.wait_prompt();
    let history = history_text(ctx);
    assert!(
        history.contains(prompt),
        "the prompt is not on disk while the session runs: {history:?}"
    );
}

/// A second session in the same project recalls `prompt` with Up.
fn recalled_by_the_next_session(ctx: &TestContext, prompt: &str) {
    let mock = mock(vec![]);
    let mut pty = Pty::spawn(ctx, &mock);
    pty.wait_text("Ctrl-D exits");
    pty.wait_prompt();
    // Up walks back from the newest entry (`/exit` itself is one).
    let wanted = format!("> {prompt}");
    let mut presses = 0;
    while !pty.contents().contains(&wanted) {
        assert!(
            presses < 3,
            "Up never recalled {prompt:?}:\n{}",
            pty.contents()
        );
        pty.send("\x1b[A");
        presses += 1;
        std::thread::sleep(Duration::from_millis(300));
    }
    pty.send("\x15"); // Ctrl-U: clear the recalled line
    pty.send("\x04");
    pty.wait_exit("Ctrl-D");
}

fn one_session(prompt: &str, end: impl FnOnce(&mut Pty)) {
    let ctx = TestContext::new();
    let mock = mock(vec![MockResponse::text("Noted.")]);
    let mut pty = Pty::spawn(&ctx, &mock);
    pty.wait_text("Ctrl-D exits");
    send_prompt(&mut pty, &ctx, prompt, "Noted.");
    end(&mut pty);
    let history = history_text(&ctx);
    assert_eq!(
        history.matches(prompt).count(),
        1,
        "once in the history: {history:?}"
    );
    recalled_by_the_next_session(&ctx, prompt);
}

#[test]
fn history_survives_slash_exit() {
    one_session("remember the exit path", |pty| {
        pty.type_text("/exit\r");
        let status = pty.wait_exit("/exit");
        assert!(matches!(status, WaitStatus::Exited(_, 0)), "{status:?}");
    });
}

#[test]
fn history_survives_ctrl_d() {
    one_session("remember the ctrl d path", |pty| {
        pty.send("\x04");
        let status = pty.wait_exit("Ctrl-D");
        assert!(matches!(status, WaitStatus::Exited(_, 0)), "{status:?}");
    });
}

#[test]
fn history_survives_sighup() {
    one_session("remember the hangup path", |pty| {
        pty.signal(Signal::SIGHUP);
        pty.wait_exit("SIGHUP");
    });
}

#[test]
fn history_survives_sigterm() {
    one_session("remember the terminate path", |pty| {
        pty.signal(Signal::SIGTERM);
        pty.wait_exit("SIGTERM");
    });
}

#[test]
fn a_prompt_is_on_disk_while_its_turn_still_runs() {
    let ctx = TestContext::new();
    // The model never answers: the turn is still open when dsh is killed.
    let mock = mock(vec![MockResponse::Hang {
        send_headers: false,
    }]);
    let mut pty = Pty::spawn(&ctx, &mock);
    pty.wait_text("Ctrl-D exits");
    pty.wait_prompt();
    let prompt = "remember the open turn";
    pty.type_text(prompt);
    pty.send("\r");
    let deadline = Instant::now() + WAIT;
    while !history_text(&ctx).contains(prompt) {
        assert!(
            Instant::now() < deadline,
            "the prompt never reached the history while its turn ran"
        );
        std::thread::sleep(Duration::from_millis(30));
    }
    // Nothing is left to flush: even SIGKILL keeps it.
    pty.signal(Signal::SIGKILL);
    pty.wait_exit("SIGKILL");
    assert!(history_text(&ctx).contains(prompt));
}
