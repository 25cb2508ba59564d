//! `bash`: runs a shell command.
//!
//! # Process and signal policy
//!
//! The command runs as `bash -c COMMAND` (as Claude Code's Bash tool and
//! Codex's shell do; Debian's `sh` is dash, where `[[ ]]`, arrays and
//! `source` fail) in the session cwd, with dsh's environment plus
//! [`ToolContext::env`] minus the process layer's scrubbed variables (dsh's
//! API keys), stdin connected to `/dev/null`. It goes through the same
//! [`ProcessLayer`] as hook commands: **its own process group** (the group id
//! is the shell's pid), registered for `kill_all`, killed with dsh even when dsh is SIGKILLed (the
//! layer's watchdog), within the process-wide concurrency budget. A Ctrl-C
//! delivered to dsh's terminal group therefore does not reach the command
//! directly; dsh decides what happens to it:
//!
//! - **Timeout** (argument `timeout`, ms, default 120 000, at most 600 000):
//!   SIGTERM to the whole group, up to [`KILL_GRACE`] for the shell to exit,
//!   then SIGKILL to the group regardless (a grandchild that ignores SIGTERM
//!   does not survive), then the shell is reaped.
//! - **Cancellation** ([`ToolContext::cancel`]): the same sequence, and the
//!   value says `interrupted: true`.
//! - **The future is dropped** mid-run (the caller gave up): the layer's guard
//!   sends SIGKILL to the group, and tokio's `kill_on_drop` reaps the shell.
//! - **[`ProcessLayer::kill_all`]** (dsh exits or the user pressed Ctrl-C):
//!   SIGKILL to the group, and the value says `interrupted: true`.
//! - **Normal exit**: background processes the command started are left
//!   alone (starting a server with `cmd > log 2>&1 &` is legitimate). If one
//!   of them still holds our stdout/stderr, we stop reading after
//!   [`POST_EXIT_DRAIN`] and return what we have rather than waiting for it.
//!
//! # Working directory
//!
//! Inside a session the shell keeps its working directory from one call to
//! the next, as Claude Code's Bash tool does: the command runs with an
//! `EXIT` trap that writes `pwd -P` to a private temporary file, and when that
//! names another existing directory the session's working directory moves
//! there ([`dsh_seams::SessionEnv::set_work_dir`]); the tool pipeline then
//! fires the cwd-changed seam. A command that replaces the shell (`exec`) or
//! clears the trap leaves the directory where it was.
//!
//! The calls of one model reply run at once, each starting in the kept
//! directory. A command that may move it (a `cd`, `pushd`, `popd`,
//! `source`, `.`, `eval`, `exec`, `trap` or `builtin` word anywhere in it)
//! runs alone instead ([`crate::Concurrency::Exclusive`]), so the calls
//! after it start where it ended and the directory moves in call order.
//!
//! stdout and stderr are read concurrently (a sequential read deadlocks on a
//! full pipe) and bounded: the first [`HEAD_BYTES`] and last [`TAIL_BYTES`]
//! bytes of each stream are kept, the rest is drained and counted, and a
//! marker in the middle says how much was left out.

use std::collections::VecDeque;
use std::time::Duration;

use async_trait::async_trait;
use dsh_hook_runner::{
    OutputSink, ProcessCommand, ProcessExit, ProcessLayer, ProcessSpec, StdinSource,
};
use dsh_protocol::ToolSpec;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::shells::ShellStore;
use super::{TypedTool, spec};
use crate::{Rendered, ToolContext, ToolError};

const NAME: &str = "bash";

/// Default timeout in milliseconds.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// Largest accepted timeout in milliseconds; larger values are clamped.
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// Bytes kept from the start of each stream.
pub const HEAD_BYTES: usize = 20_000;
/// Bytes kept from the end of each stream.
pub const TAIL_BYTES: usize = 10_000;
/// How long the group gets between SIGTERM and SIGKILL.
pub const KILL_GRACE: Duration = Duration::from_millis(1_000);
/// How long we keep reading after the shell exited, for output still in
/// flight; a background process holding the pipe does not hold the call.
pub const POST_EXIT_DRAIN: Duration = Duration::from_millis(2_000);

/// The shell the command runs in (looked up on `PATH`).
pub const SHELL: &str = "bash";

/// The `bash` tool. Its commands go through a [`ProcessLayer`]; share the
/// hook runner's ([`BashTool::new`] with `HookRunner::processes`) so that one
/// `kill_all` reaches both and the same variables are scrubbed.
#[derive(Debug, Clone, Default)]
pub struct BashTool {
    processes: ProcessLayer,
    shells: ShellStore,
}

impl BashTool {
    /// A `bash` tool whose commands run through `processes`, with a
    /// background-shell store of its own.
    pub fn new(processes: ProcessLayer) -> Self {
        BashTool::with_shells(processes, ShellStore::default())
    }

    /// A `bash` tool whose background commands (`run_in_background`) go to
    /// `shells`, which `bash_output` and `kill_shell` share.
    pub fn with_shells(processes: ProcessLayer, shells: ShellStore) -> Self {
        BashTool { processes, shells }
    }

    /// The process layer its commands go through.
    pub fn processes(&self) -> &ProcessLayer {
        &self.processes
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {
    command: String,
    #[serde(default)]
    #[allow(dead_code)] // for the model and for hooks; not used to run
    description: Option<String>,
    #[serde(default)]
    timeout: Option<u64>,
    #[serde(default)]
    run_in_background: Option<bool>,
}

/// The canonical value of a `bash` call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BashOutput {
    /// Captured stdout (bounded), trailing newlines trimmed.
    pub stdout: String,
    /// Captured stderr (bounded), trailing newlines trimmed. On timeout it
    /// ends with a line naming the timeout.
    pub stderr: String,
    /// The shell's exit code; `null` when it was killed by a signal.
    pub exit_code: Option<i32>,
    /// The call was cancelled and the command killed.
    pub interrupted: bool,
    /// The command ran past its timeout and was killed.
    pub timed_out: bool,
    /// The background shell's id, when the command was started with
    /// `run_in_background` (read it with `bash_output`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background_task_id: Option<String>,
}

#[async_trait]
impl TypedTool for BashTool {
    const NAME: &'static str = NAME;
    type Args = Args;
    type Output = BashOutput;

    fn describe(&self) -> ToolSpec {
        spec(
            NAME,
            "Runs a shell command with `bash -c` in the session's working directory and returns \
             its stdout and stderr. Output is truncated in the middle when very long. A \
             non-zero exit code is reported as an error.",
            json!({
                "command": {"type": "string", "description": "The command to run."},
                "description": {
                    "type": "string",
                    "description": "A short description of what the command does."
                },
                "timeout": {
                    "type": "integer",
                    "description": "Timeout in milliseconds (default 120000, max 600000)."
                },
                "run_in_background": {
                    "type": "boolean",
                    "description": "Start the command in the background and return its shell id at once; read its output with bash_output, stop it with kill_shell."
                }
            }),
            &["command"],
        )
    }

    async fn call(&self, ctx: &ToolContext, args: Args) -> Result<BashOutput, ToolError> {
        if args.run_in_background == Some(true) {
            let spec = process_spec(ctx, &args.command, Duration::from_millis(MAX_TIMEOUT_MS));
            let id = self.shells.spawn(&self.processes, spec, &args.command);
            return Ok(BashOutput {
                stdout: String::new(),
                stderr: String::new(),
                exit_code: None,
                interrupted: false,
                timed_out: false,
                background_task_id: Some(id),
            });
        }
        let timeout_ms = match args.timeout {
            None => DEFAULT_TIMEOUT_MS,
            Some(0) => return Err(ToolError(format!("{NAME}: timeout must be positive"))),
            Some(ms) => ms.min(MAX_TIMEOUT_MS),
        };
        let output = run_command(
            &self.processes,
            ctx,
            &args.command,
            Duration::from_millis(timeout_ms),
        )
        .await?;
        Ok(output)
    }

    fn overlap(&self, args: &Self::Args, _cwd: &std::path::Path) -> crate::Concurrency {
        // The kept working directory follows the calls in their order.
        if may_move_directory(&args.command) {
            crate::Concurrency::Exclusive
        } else {
            crate::Concurrency::Shared
        }
    }

    fn show(&self, output: BashOutput) -> Result<Rendered, ToolError> {
        Ok(render_output(&output))
    }
}

fn render_output(output: &BashOutput) -> Rendered {
    if let Some(id) = &output.background_task_id {
        return Rendered {
            content: format!(
                "Command running in the background with id {id}. Read its output with bash_output."
            ),
            is_error: false,
        };
    }
    let joined = [output.stdout.as_str(), output.stderr.as_str()]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    let with_heading = |heading: &str| {
        if joined.is_empty() {
            heading.to_owned()
        } else {
            format!("{heading}\n{joined}")
        }
    };
    if output.interrupted {
        return Rendered {
            content: with_heading("Command was interrupted"),
            is_error: true,
        };
    }
    if output.timed_out {
        // The run puts "Command timed out after N ms" at the end of stderr;
        // a hook-supplied value may not, so say it here in that case.
        let content = if joined.contains("timed out") {
            joined
        } else {
            with_heading("Command timed out")
        };
        return Rendered {
            content,
            is_error: true,
        };
    }
    match output.exit_code {
        Some(0) => Rendered {
            content: if joined.is_empty() {
                "(Bash completed with no output)".to_owned()
            } else {
                joined
            },
            is_error: false,
        },
        Some(code) => Rendered {
            content: with_heading(&format!("Exit code {code}")),
            is_error: true,
        },
        None => Rendered {
            content: with_heading("Command was terminated by a signal"),
            is_error: true,
        },
    }
}

/// How a command of this tool runs: `bash -c` in the session cwd.
fn process_spec(ctx: &ToolContext, command: &str, timeout: Duration) -> ProcessSpec {
    ProcessSpec {
        command: ProcessCommand::shell(SHELL, command),
        cwd: ctx.cwd.clone(),
        env: ctx.env.clone(),
        stdin: StdinSource::Null,
        timeout,
        kill_grace: KILL_GRACE,
        drain_after_exit: POST_EXIT_DRAIN,
    }
}

async fn run_command(
    processes: &ProcessLayer,
    ctx: &ToolContext,
    command: &str,
    timeout: Duration,
) -> Result<BashOutput, ToolError> {
    // Inside a session, where the shell ends up is kept for the next call.
    let cwd_record = match &ctx.seam {
        Some(_) => tempfile::NamedTempFile::new().ok(),
        None => None,
    };
    let script = match &cwd_record {
        Some(file) => format!(
            // On the command's first line, so bash's `line N` in its errors is unchanged.
            "trap 'pwd -P >| {} 2>/dev/null' EXIT; {command}",
            shell_quote(&file.path().to_string_lossy())
        ),
        None => command.to_owned(),
    };
    let spec = process_spec(ctx, &script, timeout);
    let run = processes
        .run(spec, Capture::default(), Capture::default(), &ctx.cancel)
        .await;
    let (exit_code, timed_out, interrupted) = match &run.exit {
        ProcessExit::Exited(code) => (Some(*code), false, false),
        ProcessExit::Signaled(_) => (None, false, false),
        // Whatever the shell returned while being killed is not its answer.
        ProcessExit::TimedOut => (None, true, false),
        ProcessExit::Cancelled => (None, false, true),
        ProcessExit::SpawnFailed(why) | ProcessExit::DshLimit(why) => {
            return Err(ToolError(format!(
                "{NAME}: could not start `{SHELL}` in {}: {why}",
                ctx.cwd.display()
            )));
        }
    };

    if let (Some(file), Some(seam)) = (&cwd_record, &ctx.seam) {
        follow_cd(file.path(), ctx, seam);
    }
    let mut stdout = run.stdout.text();
    let mut stderr = run.stderr.text();
    trim_trailing_newlines(&mut stdout);
    trim_trailing_newlines(&mut stderr);
    if timed_out {
        if !stderr.is_empty() {
            stderr.push('\n');
        }
        stderr.push_str(&format!(
            "Command timed out after {} ms",
            timeout.as_millis()
        ));
    }
    tracing::debug!(
        pid = run.pid,
        ?exit_code,
        timed_out,
        interrupted,
        "bash command finished"
    );
    Ok(BashOutput {
        stdout,
        stderr,
        exit_code,
        interrupted,
        timed_out,
        background_task_id: None,
    })
}

/// Moves the session's working directory where the shell's `EXIT` trap said
/// it ended, when that is another existing directory.
fn follow_cd(record: &std::path::Path, ctx: &ToolContext, seam: &dsh_seams::SeamContext) {
    let Ok(text) = fs_err::read_to_string(record) else {
        return;
    };
    let ended = std::path::PathBuf::from(text.trim_end_matches('\n'));
    if !ended.is_absolute() || !ended.is_dir() {
        return;
    }
    let before = ctx.cwd.canonicalize().unwrap_or_else(|_| ctx.cwd.clone());
    if ended != before {
        seam.session.env.set_work_dir(ended);
    }
}

/// Whether `command` may leave the shell in another directory (or stop the
/// `EXIT` trap that reports it): a word that is a builtin able to do that.
/// Conservative by words, so `echo cd` counts too; a builtin reached only
/// through a variable (`$verb /tmp`) is not seen.
fn may_move_directory(command: &str) -> bool {
    const MOVERS: &[&str] = &[
        "cd", "pushd", "popd", "source", ".", "eval", "exec", "trap", "builtin",
    ];
    command
        .split(|c: char| c.is_whitespace() || ";&|(){}<>`".contains(c))
        .map(|word| word.trim_matches(|c| c == '"' || c == '\'' || c == '\\'))
        .any(|word| MOVERS.contains(&word))
}

/// `text` as one single-quoted shell word.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// A bounded capture of one stream: head, tail, and a count of what was
/// dropped in between.
#[derive(Debug, Default)]
struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: usize,
}

impl OutputSink for Capture {
    fn push(&mut self, bytes: &[u8]) {
        Capture::push(self, bytes);
    }
}

impl Capture {
    fn push(&mut self, mut bytes: &[u8]) {
        self.total = self.total.saturating_add(bytes.len());
        let head_room = HEAD_BYTES.saturating_sub(self.head.len());
        let into_head = head_room.min(bytes.len());
        self.head.extend_from_slice(&bytes[..into_head]);
        bytes = &bytes[into_head..];
        if bytes.len() >= TAIL_BYTES {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - TAIL_BYTES..]);
        } else {
            let overflow = (self.tail.len() + bytes.len()).saturating_sub(TAIL_BYTES);
            self.tail.drain(..overflow);
            self.tail.extend(bytes);
        }
    }

    fn text(&self) -> String {
        let kept = self.head.len() + self.tail.len();
        let omitted = self.total.saturating_sub(kept);
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        if omitted == 0 {
            let mut all = self.head.clone();
            all.extend_from_slice(&tail);
            return String::from_utf8_lossy(&all).into_owned();
        }
        let head = utf8_prefix(&self.head);
        let tail = utf8_suffix(&tail);
        format!(
            "{}\n\n... [{omitted} bytes of output omitted] ...\n\n{}",
            String::from_utf8_lossy(head),
            String::from_utf8_lossy(tail)
        )
    }
}

/// `text` bounded as the bash tool bounds each output stream: within
/// [`HEAD_BYTES`] + [`TAIL_BYTES`] it is returned unchanged; longer, its
/// first `HEAD_BYTES` and last `TAIL_BYTES` bytes are kept (whole UTF-8
/// characters) with `... [N bytes of output omitted] ...` between them.
/// Other tools whose output the model sees (MCP results) use this too.
pub fn bound_output(text: &str) -> String {
    let mut capture = Capture::default();
    capture.push(text.as_bytes());
    capture.text()
}

/// The bytes up to the last complete UTF-8 character (a cut may split one).
fn utf8_prefix(bytes: &[u8]) -> &[u8] {
    match std::str::from_utf8(bytes) {
        Err(err) if err.error_len().is_none() => &bytes[..err.valid_up_to()],
        _ => bytes,
    }
}

/// The bytes from the first UTF-8 character start (skips continuation bytes).
fn utf8_suffix(bytes: &[u8]) -> &[u8] {
    let skip = bytes
        .iter()
        .take(3)
        .take_while(|b| (**b & 0b1100_0000) == 0b1000_0000)
        .count();
    &bytes[skip..]
}

fn trim_trailing_newlines(text: &mut String) {
    let trimmed = text.trim_end_matches(['\n', '\r']).len();
    text.truncate(trimmed);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests may unwrap
mod tests {

    use super::*;
    use crate::Tool;
    use serde_json::Value;
    use std::time::Instant;
    use tokio_util::sync::CancellationToken;

    #[test]
    fn commands_that_may_move_the_directory_are_seen() {
        for moves in [
            "cd sub",
            "make && cd out",
            "(pushd x)",
            "\\cd /",
            "\"cd\" a",
            ". ./env.sh",
            "trap - EXIT",
        ] {
            assert!(may_move_directory(moves), "{moves}");
        }
        for stays in ["sleep 2; echo slow", "echo fast", "ls ./cdrom", "abcd x"] {
            assert!(!may_move_directory(stays), "{stays}");
        }
    }

    fn ctx(dir: &std::path::Path) -> ToolContext {
        ToolContext::new(dir, CancellationToken::new())
    }

    /// The cwd record does not shift bash's line numbers in its own errors.
    #[tokio::test]
    async fn syntax_errors_keep_their_line_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let mut inside = ctx(dir.path());
        inside.seam = Some(dsh_seams::SeamContext::detached(dir.path()));
        let out = run(&inside, json!({"command": "echo ok\nif then"})).await;
        assert!(out.stderr.contains("line 2"), "{}", out.stderr);
    }

    /// Inside a session the shell's `cd` is kept for the next call; the
    /// command's exit code and output are untouched; outside a session
    /// (no seam) nothing is tracked.
    #[tokio::test]
    async fn cd_moves_the_session_working_directory() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().canonicalize().unwrap();
        std::fs::create_dir(project.join("sub")).unwrap();
        let seam = dsh_seams::SeamContext::detached(&project);
        let mut inside = ctx(&project);
        inside.seam = Some(seam.clone());
        let out = run(&inside, json!({"command": "cd sub && echo moved; exit 3"})).await;
        assert_eq!((out.stdout.as_str(), out.exit_code), ("moved", Some(3)));
        assert_eq!(seam.session.env.work_dir(), Some(project.join("sub")));
        assert_eq!(seam.session.current_dir(), project.join("sub"));
        // A command that stays put changes nothing.
        let mut again = ctx(&project.join("sub"));
        again.seam = Some(seam.clone());
        run(&again, json!({"command": "true"})).await;
        assert_eq!(seam.session.env.work_dir(), Some(project.join("sub")));
        // Outside a session: no tracking.
        let outside = ctx(&project);
        run(&outside, json!({"command": "cd sub"})).await;
        assert_eq!(
            dsh_seams::SeamContext::detached(&project)
                .session
                .env
                .work_dir(),
            None
        );
    }

    async fn run(ctx: &ToolContext, args: Value) -> BashOutput {
        let value = BashTool::default().run(ctx, &args).await.unwrap();
        serde_json::from_value(value).unwrap()
    }

    /// No member of `pgid` survives: every member was sent SIGKILL, but on a
    /// loaded machine one may still be finishing its exit for a moment, so
    /// live members get a short grace; a survivor stays live and fails.
    async fn assert_no_survivors(pgid: i32) {
        let deadline = Instant::now() + Duration::from_secs(2);
        while !live_members(pgid).is_empty() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(live_members(pgid), Vec::<String>::new());
    }

    /// Live (non-zombie) processes whose process group is `pgid`.
    fn live_members(pgid: i32) -> Vec<String> {
        let mut live = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            let Some(after_comm) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
                continue;
            };
            let fields: Vec<&str> = after_comm.split_whitespace().collect();
            // state ppid pgrp ...
            if fields.len() > 2 && fields[2] == pgid.to_string() && fields[0] != "Z" {
                live.push(stat);
            }
        }
        live
    }

    fn read_pgid(path: &std::path::Path) -> i32 {
        std::fs::read_to_string(path)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    #[tokio::test]
    async fn success_renders_stdout_then_stderr() {
        let dir = tempfile::tempdir().unwrap();
        let out = run(
            &ctx(dir.path()),
            json!({"command": "echo hi; echo warn >&2"}),
        )
        .await;
        assert_eq!(
            out,
            BashOutput {
                stdout: "hi".into(),
                stderr: "warn".into(),
                exit_code: Some(0),
                interrupted: false,
                timed_out: false,
                background_task_id: None,
            }
        );
        let rendered = BashTool::default()
            .render(&serde_json::to_value(&out).unwrap())
            .unwrap();
        assert_eq!(rendered.content, "hi\nwarn");
        assert!(!rendered.is_error);
    }

    #[tokio::test]
    async fn empty_output_has_a_placeholder() {
        let dir = tempfile::tempdir().unwrap();
        let value = BashTool::default()
            .run(&ctx(dir.path()), &json!({"command": "true"}))
            .await
            .unwrap();
        let rendered = BashTool::default().render(&value).unwrap();
        assert_eq!(rendered.content, "(Bash completed with no output)");
        assert!(!rendered.is_error);
    }

    #[tokio::test]
    async fn non_zero_exit_is_an_error_with_the_code() {
        let dir = tempfile::tempdir().unwrap();
        let value = BashTool::default()
            .run(
                &ctx(dir.path()),
                &json!({"command": "echo oops >&2; exit 3"}),
            )
            .await
            .unwrap();
        assert_eq!(value["exit_code"], 3);
        assert_eq!(value["stderr"], "oops");
        let rendered = BashTool::default().render(&value).unwrap();
        assert_eq!(
            rendered,
            Rendered {
                content: "Exit code 3\noops".into(),
                is_error: true
            }
        );
    }

    #[tokio::test]
    async fn cwd_and_env_are_applied() {
        let dir = tempfile::tempdir().unwrap();
        let mut context = ctx(dir.path());
        context.env.push(("DSH_TEST_VAR".into(), "from ctx".into()));
        let out = run(
            &context,
            json!({"command": "pwd; echo \"$DSH_TEST_VAR\"; echo \"$PATH\" | grep -c /"}),
        )
        .await;
        let lines: Vec<&str> = out.stdout.lines().collect();
        let expected_cwd = dir.path().canonicalize().unwrap();
        assert_eq!(
            std::path::Path::new(lines[0]).canonicalize().unwrap(),
            expected_cwd
        );
        assert_eq!(lines[1], "from ctx");
        // dsh's own environment is inherited too.
        assert_eq!(lines[2], "1");
    }

    #[tokio::test]
    async fn stdin_is_null() {
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let out = run(&ctx(dir.path()), json!({"command": "cat; echo done"})).await;
        assert_eq!(out.stdout, "done");
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[tokio::test]
    async fn large_output_is_bounded_and_marked() {
        let dir = tempfile::tempdir().unwrap();
        // 2 MB on stdout and 1 MB on stderr, concurrently: neither pipe may
        // block the other.
        let out = run(
            &ctx(dir.path()),
            json!({"command": "head -c 2000000 /dev/zero | tr '\\0' a; head -c 1000000 /dev/zero | tr '\\0' b >&2; echo; echo END"}),
        )
        .await;
        assert_eq!(out.exit_code, Some(0));
        assert!(
            out.stdout.len() < HEAD_BYTES + TAIL_BYTES + 200,
            "{}",
            out.stdout.len()
        );
        assert!(out.stdout.starts_with("aaaa"));
        assert!(out.stdout.ends_with("aaaa\nEND"));
        assert!(out.stdout.contains("bytes of output omitted"));
        assert!(out.stderr.len() < HEAD_BYTES + TAIL_BYTES + 200);
        assert!(out.stderr.contains("bytes of output omitted"));
    }

    #[test]
    fn capture_keeps_head_and_tail_exactly() {
        let mut capture = Capture::default();
        let data: Vec<u8> = (0..100_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        for chunk in data.chunks(777) {
            capture.push(chunk);
        }
        let text = capture.text();
        let omitted = data.len() - HEAD_BYTES - TAIL_BYTES;
        let expected = format!(
            "{}\n\n... [{omitted} bytes of output omitted] ...\n\n{}",
            String::from_utf8_lossy(&data[..HEAD_BYTES]),
            String::from_utf8_lossy(&data[data.len() - TAIL_BYTES..])
        );
        assert_eq!(text, expected);

        let mut small = Capture::default();
        small.push(b"hello ");
        small.push(b"world");
        assert_eq!(small.text(), "hello world");
    }

    #[test]
    fn utf8_cuts_do_not_split_characters() {
        let s = "é".repeat(10);
        let bytes = s.as_bytes();
        assert_eq!(utf8_prefix(&bytes[..5]), "éé".as_bytes());
        assert_eq!(utf8_suffix(&bytes[1..]), "é".repeat(9).as_bytes());
    }

    #[tokio::test]
    async fn timeout_kills_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pgid");
        let command = format!(
            "echo $$ > '{}'; echo started; sleep 100 & sleep 100",
            pid_file.display()
        );
        let started = Instant::now();
        let value = BashTool::default()
            .run(
                &ctx(dir.path()),
                &json!({"command": command, "timeout": 500}),
            )
            .await
            .unwrap();
        let elapsed = started.elapsed();
        assert!(
            elapsed < Duration::from_millis(500) + Duration::from_secs(4),
            "{elapsed:?}"
        );
        let out: BashOutput = serde_json::from_value(value.clone()).unwrap();
        assert!(out.timed_out);
        assert!(!out.interrupted);
        assert_eq!(out.exit_code, None);
        assert_eq!(out.stdout, "started");
        assert_eq!(out.stderr, "Command timed out after 500 ms");
        assert_no_survivors(read_pgid(&pid_file)).await;

        let rendered = BashTool::default().render(&value).unwrap();
        assert!(rendered.is_error);
        assert_eq!(rendered.content, "started\nCommand timed out after 500 ms");
    }

    #[tokio::test]
    async fn timeout_escalates_to_sigkill_for_term_ignoring_processes() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pgid");
        let command = format!(
            "echo $$ > '{}'; trap '' TERM; sh -c 'trap \"\" TERM; sleep 100' & sleep 100",
            pid_file.display()
        );
        let started = Instant::now();
        let out = run(
            &ctx(dir.path()),
            json!({"command": command, "timeout": 300}),
        )
        .await;
        assert!(out.timed_out);
        assert!(
            started.elapsed() < Duration::from_secs(6),
            "{:?}",
            started.elapsed()
        );
        assert_no_survivors(read_pgid(&pid_file)).await;
    }

    #[tokio::test]
    async fn cancellation_kills_promptly_and_reports_interrupted() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pgid");
        let context = ctx(dir.path());
        let cancel = context.cancel.clone();
        let command = format!("echo $$ > '{}'; sleep 100", pid_file.display());
        let canceller = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            cancel.cancel();
        });
        let started = Instant::now();
        let value = BashTool::default()
            .run(&context, &json!({"command": command}))
            .await
            .unwrap();
        canceller.await.unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        let out: BashOutput = serde_json::from_value(value.clone()).unwrap();
        assert!(out.interrupted);
        assert!(!out.timed_out);
        assert_no_survivors(read_pgid(&pid_file)).await;
        let rendered = BashTool::default().render(&value).unwrap();
        assert!(rendered.is_error);
        assert!(rendered.content.starts_with("Command was interrupted"));
    }

    #[tokio::test]
    async fn already_cancelled_does_not_start_anything() {
        let dir = tempfile::tempdir().unwrap();
        let context = ctx(dir.path());
        context.cancel.cancel();
        let marker = dir.path().join("ran");
        let out = run(
            &context,
            json!({"command": format!("touch '{}'", marker.display())}),
        )
        .await;
        assert!(out.interrupted);
        assert!(!marker.exists());
    }

    #[tokio::test]
    async fn dropping_the_future_kills_the_group() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pgid");
        let context = ctx(dir.path());
        let command = format!("echo $$ > '{}'; sleep 100 & sleep 100", pid_file.display());
        let args = json!({"command": command});
        let tool = BashTool::default();
        let run = tool.run(&context, &args);
        let gave_up = tokio::time::timeout(Duration::from_millis(500), run).await;
        assert!(gave_up.is_err());
        assert_no_survivors(read_pgid(&pid_file)).await;
    }

    #[tokio::test]
    async fn background_process_holding_the_pipe_does_not_hold_the_call() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pgid");
        let command = format!("echo $$ > '{}'; sleep 30 & echo quick", pid_file.display());
        let started = Instant::now();
        let out = run(&ctx(dir.path()), json!({"command": command})).await;
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(out.stdout, "quick");
        assert_eq!(out.exit_code, Some(0));
        // Clean up the background sleep this test deliberately left running.
        let pgid = u32::try_from(read_pgid(&pid_file)).unwrap();
        dsh_hook_runner::signals::signal_group(
            pgid,
            dsh_hook_runner::signals::GroupSignal::SIGKILL,
        );
    }

    #[tokio::test]
    async fn runs_bash_not_posix_sh() {
        let dir = tempfile::tempdir().unwrap();
        // `[[ ]]`, arrays and `source` fail in dash (Debian's sh).
        std::fs::write(dir.path().join("lib.sh"), "greet() { echo \"hi $1\"; }\n").unwrap();
        let out = run(
            &ctx(dir.path()),
            json!({"command": "source ./lib.sh; arr=(a b c); [[ ${#arr[@]} == 3 ]] && greet \"${arr[1]}\"; echo \"$BASH_VERSION\" | grep -c ."}),
        )
        .await;
        assert_eq!(out.exit_code, Some(0), "{out:?}");
        assert_eq!(out.stdout, "hi b\n1");
    }

    #[tokio::test]
    async fn api_keys_are_scrubbed_from_the_command_environment() {
        let dir = tempfile::tempdir().unwrap();
        let tool = BashTool::new(ProcessLayer::new(vec![
            "DSH_API_KEY".into(),
            "DEEPSEEK_API_KEY".into(),
            "MY_PROVIDER_KEY".into(),
        ]));
        let mut context = ctx(dir.path());
        for name in ["DSH_API_KEY", "DEEPSEEK_API_KEY", "MY_PROVIDER_KEY"] {
            context.env.push((name.into(), "sk-secret-value".into()));
        }
        context.env.push(("HARMLESS".into(), "visible".into()));
        let value = tool
            .run(&context, &json!({"command": "env"}))
            .await
            .unwrap();
        let out: BashOutput = serde_json::from_value(value).unwrap();
        assert!(!out.stdout.contains("sk-secret-value"), "{}", out.stdout);
        assert!(out.stdout.contains("HARMLESS=visible"));
        // The default layer scrubs dsh's own key variables.
        assert_eq!(
            BashTool::default().processes().scrubbed_env(),
            ["DSH_API_KEY", "DEEPSEEK_API_KEY", "DSH_KEY_FD"]
        );
    }

    #[tokio::test]
    async fn kill_all_of_the_shared_layer_interrupts_the_command() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pgid");
        let layer = ProcessLayer::default();
        let tool = BashTool::new(layer.clone());
        let command = format!("echo $$ > '{}'; sleep 100 & sleep 100", pid_file.display());
        let killer = tokio::spawn({
            let layer = layer.clone();
            let pid_file = pid_file.clone();
            async move {
                // The shell creates the file before it writes its pid: wait
                // for the whole line.
                let written = |path: &std::path::Path| {
                    std::fs::read_to_string(path).is_ok_and(|text| text.ends_with('\n'))
                };
                while !written(&pid_file) || layer.live_groups() == 0 {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                layer.kill_all();
            }
        });
        let started = Instant::now();
        let value = tool
            .run(&ctx(dir.path()), &json!({"command": command}))
            .await
            .unwrap();
        killer.await.unwrap();
        assert!(started.elapsed() < Duration::from_secs(10));
        let out: BashOutput = serde_json::from_value(value).unwrap();
        assert!(out.interrupted, "{out:?}");
        assert_eq!(out.exit_code, None);
        assert_no_survivors(read_pgid(&pid_file)).await;
        assert_eq!(layer.live_groups(), 0);
    }

    #[tokio::test]
    async fn zero_timeout_is_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let err = BashTool::default()
            .run(&ctx(dir.path()), &json!({"command": "true", "timeout": 0}))
            .await
            .unwrap_err();
        assert!(err.0.contains("timeout"));
    }

    #[test]
    fn render_rejects_invalid_values() {
        for bad in [
            json!({"stdout": "x"}),
            json!({"stdout": 1, "stderr": "", "exit_code": 0, "interrupted": false, "timed_out": false}),
            json!({"stdout": "", "stderr": "", "exit_code": "0", "interrupted": false, "timed_out": false}),
            json!({"stdout": "", "stderr": "", "exit_code": 0, "interrupted": false, "timed_out": false, "extra": 1}),
        ] {
            assert!(BashTool::default().render(&bad).is_err(), "accepted {bad}");
        }
    }

    #[test]
    fn render_of_hook_supplied_values() {
        let timed_out = json!({"stdout": "", "stderr": "", "exit_code": null, "interrupted": false, "timed_out": true});
        assert_eq!(
            BashTool::default().render(&timed_out).unwrap(),
            Rendered {
                content: "Command timed out".into(),
                is_error: true
            }
        );
        let signalled = json!({"stdout": "partial", "stderr": "", "exit_code": null, "interrupted": false, "timed_out": false});
        assert_eq!(
            BashTool::default().render(&signalled).unwrap().content,
            "Command was terminated by a signal\npartial"
        );
        let only_stderr = json!({"stdout": "", "stderr": "note", "exit_code": 0, "interrupted": false, "timed_out": false});
        assert_eq!(
            BashTool::default().render(&only_stderr).unwrap().content,
            "note"
        );
    }
}
