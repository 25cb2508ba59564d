//! Rendering a live session for a person at a terminal.
//!
//! Everything the interactive mode shows goes through [`Terminal`], which
//! serializes writes from the agent's callbacks (streamed text, appended
//! events, notices), the approval prompt and the hook spinner, so a spinner
//! line never splits streamed text. Colour is used only on a terminal and
//! never when `NO_COLOR` is set (or with `--color never`); without a
//! terminal the spinner becomes one "still running" line.
//!
//! The formatting helpers are pure functions over the session-log events, so
//! what a hook did (blocked, rewrote, asked) reads the same here as in the log.

use std::io::{IsTerminal as _, Write as _};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use dsh_protocol::{
    AssistantMessageEvent, ContextMessageEvent, Event, EventBody, HookInvokedEvent,
    HookResultEvent, PromptBlockedEvent, SteeringMessageEvent, ToolCallEvent, ToolResultEvent,
    TurnEndReason, UserMessageEvent,
};
use dsh_seams::{NoticeLevel, UserNotice};
use serde_json::Value;

use dsh_tools::change::PendingChange;

use crate::tui::hook_line::{HookReport, describe_hook};
use crate::tui::render::{self, MarkdownStream, Span};
use crate::tui::text::{LINE_CHARS, strip_hook_wrapper};
pub use crate::tui::text::{Tone, truncate};

/// When to colour output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// On a terminal, unless the environment says otherwise (`NO_COLOR`,
    /// `CLICOLOR=0`, `TERM=dumb`; `CLICOLOR_FORCE` forces it on).
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// How long a hook runs before the spinner shows it.
pub const SPINNER_AFTER: Duration = Duration::from_secs(1);
/// How often the spinner is redrawn.
pub const SPINNER_TICK: Duration = Duration::from_millis(120);
/// How many lines of a tool result are shown.
const RESULT_LINES: usize = 4;
const SPINNER_FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// Whether colour is on for stdout under `choice` and the environment.
pub fn color_enabled(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        // anstream reads the conventions (a terminal, `NO_COLOR`,
        // `CLICOLOR`, `CLICOLOR_FORCE`, `TERM=dumb`) for stdout.
        ColorChoice::Auto => match anstream::AutoStream::choice(&std::io::stdout()) {
            anstream::ColorChoice::Always | anstream::ColorChoice::AlwaysAnsi => true,
            anstream::ColorChoice::Never | anstream::ColorChoice::Auto => false,
        },
    }
}

struct RunningHook {
    invocation_id: String,
    label: String,
    /// The whole command, for `/last`.
    command: String,
    started: Instant,
    announced: bool,
}

#[derive(Default)]
struct State {
    /// Streamed text left the cursor mid-line.
    mid_line: bool,
    /// Text streamed since the last `assistant/message`.
    streamed: bool,
    /// The spinner occupies the current line.
    spinner_shown: bool,
    frame: usize,
    hooks: Vec<RunningHook>,
    /// Streamed assistant Markdown waiting for the end of its line.
    markdown: Option<MarkdownStream>,
    /// Since when a model reply is awaited (for the spinner).
    model_wait: Option<Instant>,
    /// The provider's latest retry of the awaited request (one updating
    /// line, not a warning per attempt).
    retry: Option<String>,
    /// The full texts behind the notable hook and tool outcomes of the
    /// latest turn that had any (`/last`, Ctrl-O).
    last_detail: Vec<String>,
    /// A turn started since `last_detail` was written: the next detail
    /// replaces them.
    fresh_turn: bool,
    /// The session's working directory (where `write`/`edit` paths resolve).
    cwd: std::path::PathBuf,
    /// The files `write`/`edit` calls in flight change, with their text
    /// before, by call id: their results show the diff.
    changes: std::collections::HashMap<String, PendingChange>,
}

/// The interactive session's output.
pub struct Terminal {
    color: bool,
    tty: bool,
    state: Mutex<State>,
    /// The line editor holds the terminal in raw mode (no `\n` → `\r\n`
    /// translation): output then ends its lines with `\r\n` itself.
    editing: Arc<AtomicBool>,
    /// Show everything (`--verbose`, Ctrl-O): hook runs that changed
    /// nothing and the context hooks add, which are hidden by default.
    verbose: AtomicBool,
}

impl Terminal {
    /// A terminal on stdout.
    pub fn new(color: bool) -> Self {
        Terminal {
            color,
            tty: std::io::stdout().is_terminal(),
            state: Mutex::new(State::default()),
            editing: Arc::new(AtomicBool::new(false)),
            verbose: AtomicBool::new(false),
        }
    }

    /// Sets the session's working directory (where `write`/`edit` paths
    /// resolve for their diffs).
    pub fn set_cwd(&self, cwd: &std::path::Path) {
        self.with_state(|state, _| state.cwd = cwd.to_owned());
    }

    /// Shows (or hides again) what is hidden by default: hook runs that
    /// changed nothing and the context hooks add.
    pub fn set_verbose(&self, verbose: bool) {
        self.verbose.store(verbose, Ordering::SeqCst);
    }

    /// Whether everything is shown.
    pub fn verbose(&self) -> bool {
        self.verbose.load(Ordering::SeqCst)
    }

    /// Prints lines each in its own tone.
    pub fn toned_lines(&self, lines: &[(Tone, String)]) {
        for (tone, line) in lines {
            self.lines(*tone, line);
        }
    }

    /// The flag the line editor sets while it holds the terminal in raw mode.
    pub fn editing_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.editing)
    }

    fn paint(&self, tone: Tone, text: &str) -> String {
        if self.color && tone != Tone::Plain {
            let style = tone.style();
            format!("{style}{text}{style:#}")
        } else {
            text.to_owned()
        }
    }

    fn with_state<T>(&self, f: impl FnOnce(&mut State, &mut String) -> T) -> T {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let mut out = String::new();
        let value = f(&mut state, &mut out);
        if self.editing.load(Ordering::SeqCst) {
            // A notice while the prompt is being edited (e.g. an idle hook).
            out = out.replace('\n', "\r\n");
        }
        if !out.is_empty() {
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(out.as_bytes());
            let _ = stdout.flush();
        }
        value
    }

    /// Clears the spinner and ends streamed text, so a whole line can follow.
    fn start_line(state: &mut State, out: &mut String) {
        if state.spinner_shown {
            out.push_str("\r\x1b[2K");
            state.spinner_shown = false;
        }
        if state.mid_line {
            out.push('\n');
            state.mid_line = false;
        }
    }

    /// Prints whole lines; on a terminal each is word-wrapped to its width
    /// (see [`wrap_line`]), as the Markdown renderer wraps the model's text.
    pub fn lines(&self, tone: Tone, text: &str) {
        let width = self.tty.then(render::terminal_width);
        self.with_state(|state, out| {
            Self::start_line(state, out);
            for line in text.lines() {
                let wrapped = match width {
                    Some(width) => wrap_line(line, width),
                    None => line.to_owned(),
                };
                for row in wrapped.split('\n') {
                    out.push_str(&self.paint(tone, row));
                    out.push('\n');
                }
            }
        });
    }

    /// "interrupting the turn…" after a Ctrl-C. The terminal may already
    /// have echoed `^C` where the cursor was (ECHOCTL in cooked mode):
    /// that echo is taken back first, so the line reads `^C` once.
    pub fn interrupting(&self) {
        let echoed = self.tty && echoes_control_chars();
        self.with_state(|state, out| {
            if echoed {
                out.push_str("\x08\x08\x1b[K");
            }
            Self::start_line(state, out);
            out.push_str(&self.paint(Tone::Warn, "^C interrupting the turn…"));
            out.push('\n');
        });
    }

    /// Prints a prompt and leaves the cursor after it.
    pub fn prompt(&self, text: &str) {
        self.with_state(|state, out| {
            Self::start_line(state, out);
            out.push_str(&self.paint(Tone::Accent, text));
        });
    }

    /// Streamed assistant text.
    pub fn text(&self, delta: &str) {
        if delta.is_empty() {
            return;
        }
        let color = self.color;
        self.with_state(|state, out| {
            state.stop_waiting();
            state.streamed = true;
            let markdown = state
                .markdown
                .get_or_insert_with(|| MarkdownStream::new(color, render::terminal_width()));
            markdown.set_width(render::terminal_width());
            let ready = markdown.push(delta);
            if ready.is_empty() {
                return;
            }
            Self::start_line(state, out);
            out.push_str(&ready);
        });
    }

    /// A user notice from a plugin or hook.
    pub fn notice(&self, notice: &UserNotice) {
        if let Some(retry) = retry_summary(notice) {
            return self.retrying(retry);
        }
        let (tone, mark) = match notice.level {
            NoticeLevel::Info => (Tone::Plain, "ⓘ"),
            NoticeLevel::Warning => (Tone::Warn, "⚠"),
        };
        self.lines(tone, &format!("{mark} [{}] {}", notice.source, notice.text));
    }

    /// An event the agent just appended.
    pub fn event(&self, event: &Event) {
        match &event.body {
            // `/clear` and `/model` tell the user through notices.
            EventBody::SeamNote(_)
            | EventBody::SessionHeader(_)
            | EventBody::TurnStart(_)
            | EventBody::CompactionStarted(_)
            | EventBody::CompactionCompleted(_)
            | EventBody::CompactionFailed(_)
            | EventBody::SessionCleared { .. }
            | EventBody::ModelSwitched(_)
            | EventBody::TurnEnd(_) => {}
            EventBody::UserMessage(UserMessageEvent {
                content,
                original_content: Some(_),
                ..
            }) => self.lines(
                Tone::Warn,
                &format!(
                    "↳ prompt rewritten by a hook: {}",
                    truncate(content, LINE_CHARS)
                ),
            ),
            EventBody::UserMessage(_) => {
                self.with_state(|state, _| state.fresh_turn = true);
                self.wait_for_model();
            }
            EventBody::PromptBlocked(PromptBlockedEvent { reason, .. }) => {
                self.lines(Tone::Bad, &format!("✗ prompt blocked: {reason}"));
            }
            EventBody::AssistantMessage(AssistantMessageEvent { content, .. }) => {
                let color = self.color;
                self.with_state(|state, out| {
                    state.stop_waiting();
                    let streamed = std::mem::take(&mut state.streamed);
                    let mut markdown = state
                        .markdown
                        .take()
                        .unwrap_or_else(|| MarkdownStream::new(color, render::terminal_width()));
                    let rest = if streamed {
                        markdown.finish()
                    } else {
                        markdown.render(content)
                    };
                    Self::start_line(state, out);
                    out.push_str(&rest);
                });
            }
            EventBody::ToolCall(ToolCallEvent {
                call_id,
                tool,
                arguments,
                original_arguments,
                rewritten_by,
                ..
            }) => {
                self.with_state(|state, _| {
                    state.stop_waiting();
                    if let Some(change) = PendingChange::capture(&state.cwd, tool, arguments) {
                        state.changes.insert(call_id.clone(), change);
                    }
                });
                self.lines(
                    Tone::Accent,
                    &format!("● {tool} {}", summarize_arguments(tool, arguments)),
                );
                if let Some(original) = original_arguments {
                    let by = rewritten_by.as_deref().unwrap_or("a hook");
                    self.lines(
                        Tone::Warn,
                        &format!(
                            "  ↳ arguments rewritten by {by} (the model asked for {})",
                            summarize_arguments(tool, original)
                        ),
                    );
                }
            }
            EventBody::ToolResult(ToolResultEvent {
                call_id,
                is_error,
                content,
                disposition,
                ..
            }) => {
                let executed = !*is_error && disposition.as_deref().is_none_or(|d| d == "executed");
                let (pending, cwd) =
                    self.with_state(|state, _| (state.changes.remove(call_id), state.cwd.clone()));
                match pending.filter(|_| executed).and_then(PendingChange::settle) {
                    // A `write`/`edit` that ran: what it changed, as a diff.
                    Some(change) => {
                        self.lines(
                            Tone::Dim,
                            &format!("  ⎿ {}", crate::tui::diff::summary(&change, &cwd)),
                        );
                        self.toned_lines(&crate::tui::diff::lines(&change, "      "));
                    }
                    None => {
                        let (tone, text) =
                            describe_result(*is_error, content, disposition.as_deref());
                        self.lines(tone, &text);
                    }
                }
                if *is_error {
                    let what = disposition.as_deref().unwrap_or("error").replace('_', " ");
                    self.set_last(format!(
                        "tool result ({what}), as the model sees it:\n{content}"
                    ));
                }
                self.wait_for_model();
            }
            // Hook context (UserPromptSubmit, SessionStart) reaches the
            // model each prompt: shown only when everything is.
            EventBody::ContextMessage(_) if !self.verbose() => {}
            EventBody::ContextMessage(ContextMessageEvent {
                content, source, ..
            }) => self.lines(
                Tone::Dim,
                &format!(
                    "  + context from {source}: {}",
                    truncate(first_line(content), LINE_CHARS)
                ),
            ),
            EventBody::SteeringMessage(SteeringMessageEvent {
                content, source, ..
            }) => self.lines(
                Tone::Warn,
                &format!(
                    "↻ {source} keeps the turn going: {}",
                    truncate(content, LINE_CHARS)
                ),
            ),
            EventBody::HookInvoked(HookInvokedEvent {
                invocation_id,
                dialect,
                event,
                command,
                ..
            }) => {
                // The command shortened in the middle: its program and its
                // last argument both stay readable.
                let label = format!(
                    "{} {event} hook `{}`",
                    dialect.as_str(),
                    render::shorten_middle(command, HOOK_COMMAND_CHARS)
                );
                self.with_state(|state, _| {
                    state.hooks.push(RunningHook {
                        invocation_id: invocation_id.clone(),
                        label,
                        command: command.clone(),
                        started: Instant::now(),
                        announced: false,
                    });
                });
            }
            EventBody::HookResult(_) => self.hook_result(&event.body),
        }
    }

    /// A finished hook: one line saying what it did (routine runs only
    /// when everything is shown), and its full text for `/last`.
    fn hook_result(&self, body: &EventBody) {
        let EventBody::HookResult(HookResultEvent {
            invocation_id,
            outcome,
            exit_code,
            timed_out,
            duration_ms,
            error,
            decision,
            stdout,
            stderr,
            ..
        }) = body
        else {
            return;
        };
        let found = self.with_state(|state, _| {
            let index = state
                .hooks
                .iter()
                .position(|hook| hook.invocation_id == *invocation_id)?;
            let hook = state.hooks.remove(index);
            Some((hook.label, hook.command))
        });
        let (label, command) = found.unwrap_or_else(|| ("hook".to_owned(), String::new()));
        let report = HookReport {
            label: &label,
            outcome: *outcome,
            exit_code: *exit_code,
            timed_out: *timed_out,
            duration_ms: *duration_ms,
            error: error.as_deref(),
            decision,
            stderr,
        };
        let (tone, text) = describe_hook(&report);
        // A run that changed nothing is shown only when everything is.
        if tone == Tone::Dim && !self.verbose() {
            return;
        }
        self.wrapped(tone, &text);
        if tone != Tone::Dim {
            let mut detail = format!("{label}\ncommand: {command}\n");
            if let Some(code) = exit_code {
                detail.push_str(&format!("exit code: {code}\n"));
            }
            if let Some(reason) = decision.best_reason() {
                detail.push_str(&format!(
                    "reason (as the model is told):\n{}\n",
                    reason.trim_end()
                ));
            }
            if !stderr.trim().is_empty() {
                detail.push_str(&format!("stderr:\n{}\n", stderr.trim_end()));
            }
            if !stdout.trim().is_empty() {
                detail.push_str(&format!("stdout:\n{}\n", stdout.trim_end()));
            }
            if let Some(error) = error {
                detail.push_str(&format!("error: {error}\n"));
            }
            self.set_last(detail);
        }
    }

    /// Redraws the spinner for hooks running longer than [`SPINNER_AFTER`].
    pub fn tick(&self) {
        self.with_state(|state, out| {
            let now = Instant::now();
            let Some(hook) = state
                .hooks
                .iter_mut()
                .find(|hook| now.duration_since(hook.started) >= SPINNER_AFTER)
            else {
                // No long hook: a model reply that keeps us waiting.
                if let Some(since) = state.model_wait
                    && self.tty
                    && !state.mid_line
                    && now.duration_since(since) >= SPINNER_AFTER
                {
                    state.frame = (state.frame + 1) % SPINNER_FRAMES.len();
                    let line = model_wait_line(state, now.duration_since(since));
                    let tone = if state.retry.is_some() {
                        Tone::Warn
                    } else {
                        Tone::Dim
                    };
                    out.push_str("\r\x1b[2K");
                    out.push_str(&self.paint(tone, &line));
                    state.spinner_shown = true;
                }
                return;
            };
            let elapsed = now.duration_since(hook.started).as_secs_f32();
            if self.tty {
                if state.mid_line {
                    return;
                }
                state.frame = (state.frame + 1) % SPINNER_FRAMES.len();
                let frame = SPINNER_FRAMES[state.frame];
                let line = format!("{frame} {} running… {elapsed:.0}s", hook.label);
                out.push_str("\r\x1b[2K");
                out.push_str(&self.paint(Tone::Dim, &line));
                state.spinner_shown = true;
            } else if !hook.announced {
                hook.announced = true;
                let line = format!("… {} still running", hook.label);
                if state.mid_line {
                    out.push('\n');
                    state.mid_line = false;
                }
                out.push_str(&line);
                out.push('\n');
            }
        });
    }

    /// The closing line of a turn that did not complete.
    pub fn turn_end(&self, reason: TurnEndReason, message: Option<&str>) {
        self.with_state(|state, out| {
            state.stop_waiting();
            if let Some(mut markdown) = state.markdown.take() {
                let rest = markdown.finish();
                Self::start_line(state, out);
                out.push_str(&rest);
            }
        });
        if reason == TurnEndReason::Error
            && let Some(message) = message
            && let Some(explained) = crate::tui::status::explain_provider_error(message)
        {
            self.set_last(format!("provider error:\n{message}"));
            self.lines(
                Tone::Bad,
                &format!("✗ {explained} (Ctrl-O: the full error)"),
            );
            return;
        }
        let tail = message.map(|m| format!(": {m}")).unwrap_or_default();
        match reason {
            TurnEndReason::Completed => self.with_state(Self::start_line),
            TurnEndReason::Interrupted => self.lines(Tone::Warn, &format!("⏹ interrupted{tail}")),
            TurnEndReason::Rejected => self.lines(Tone::Bad, &format!("✗ prompt rejected{tail}")),
            TurnEndReason::Error => self.lines(Tone::Bad, &format!("✗ error{tail}")),
            TurnEndReason::MaxSteps => {
                self.lines(Tone::Warn, &format!("⏹ step bound reached{tail}"))
            }
            TurnEndReason::Stopped => self.lines(Tone::Warn, &format!("⏹ stopped by a hook{tail}")),
        }
    }
}

impl State {
    /// The model answered (or the wait ended otherwise).
    fn stop_waiting(&mut self) {
        self.model_wait = None;
        self.retry = None;
    }
}

/// The spinner's line while the model is awaited, with the latest retry.
fn model_wait_line(state: &State, elapsed: Duration) -> String {
    let retry = state
        .retry
        .as_deref()
        .map(|retry| format!(" · {retry}"))
        .unwrap_or_default();
    let line = format!(
        "{} waiting for the model… {:.0}s{retry} · Ctrl-C interrupts",
        SPINNER_FRAMES[state.frame],
        elapsed.as_secs_f32()
    );
    truncate(&line, render::terminal_width().saturating_sub(1).max(20))
}

/// `retrying (attempt 2): cannot connect to …; retrying in 1.0s` for the
/// provider's retry notice, on one line; `None` for other notices.
fn retry_summary(notice: &UserNotice) -> Option<String> {
    let rest = notice
        .text
        .strip_prefix("retrying the model request ")
        .filter(|_| notice.source == "provider")?;
    Some(format!("retrying {}", first_line(rest).trim()))
}

impl Terminal {
    /// The provider retries the awaited request: on a terminal the
    /// spinner's one line says so (each retry replaces the last), else one
    /// line per retry.
    fn retrying(&self, retry: String) {
        if !self.tty {
            return self.lines(Tone::Warn, &format!("↻ {retry}"));
        }
        self.with_state(|state, out| {
            let since = *state.model_wait.get_or_insert_with(Instant::now);
            state.retry = Some(retry);
            if state.mid_line {
                out.push('\n');
                state.mid_line = false;
            }
            let line = model_wait_line(state, since.elapsed());
            out.push_str("\r\x1b[2K");
            out.push_str(&self.paint(Tone::Warn, &line));
            state.spinner_shown = true;
        });
    }

    /// Marks the start of a wait for the model (the spinner's clock).
    fn wait_for_model(&self) {
        self.with_state(|state, _| state.model_wait = Some(Instant::now()));
    }

    fn set_last(&self, detail: String) {
        self.with_state(|state, _| {
            if std::mem::take(&mut state.fresh_turn) {
                state.last_detail.clear();
            }
            state.last_detail.push(detail);
        });
    }

    /// The full texts behind the notable hook and tool outcomes of the
    /// latest turn that had any.
    pub fn last_detail(&self) -> Option<String> {
        self.with_state(|state, _| {
            (!state.last_detail.is_empty()).then(|| state.last_detail.join("\n"))
        })
    }

    /// Whether colour is on.
    pub fn color(&self) -> bool {
        self.color
    }

    /// Prints `text` word-wrapped to the terminal's width (continuation
    /// lines indented), never breaking inside a word.
    pub fn wrapped(&self, tone: Tone, text: &str) {
        let width = render::terminal_width();
        let mut out = String::new();
        for line in text.lines() {
            let spans = [Span::new(line, tone.style())];
            let first = Span::new("", anstyle::Style::new());
            out.push_str(&render::wrap(
                &spans,
                width,
                &first,
                "    ",
                self.color && tone != Tone::Plain,
            ));
            out.push('\n');
        }
        self.with_state(|state, buffer| {
            Self::start_line(state, buffer);
            buffer.push_str(&out);
        });
    }
}

/// Whether the terminal on stdin echoes a typed Ctrl-C as `^C` (cooked
/// mode with ECHO and ECHOCTL; the line editor's raw mode echoes nothing).
fn echoes_control_chars() -> bool {
    use nix::sys::termios::{LocalFlags, tcgetattr};
    tcgetattr(std::io::stdin()).is_ok_and(|attrs| {
        attrs
            .local_flags
            .contains(LocalFlags::ECHO | LocalFlags::ECHOCTL | LocalFlags::ISIG)
    })
}

/// `line` word-wrapped to `width` columns: breaks only between words, and
/// continuation rows hang under the line's text (see `hang_of`).
pub fn wrap_line(line: &str, width: usize) -> String {
    if line.chars().count() <= width {
        return line.to_owned();
    }
    let trimmed = line.trim_start();
    let indent = &line[..line.len() - trimmed.len()];
    let hang = hang_of(line);
    // A column too far right would leave one word per row.
    let hang = if hang > width / 2 {
        indent.chars().count() + 4
    } else {
        hang
    };
    render::wrap(
        &[Span::new(trimmed, anstyle::Style::new())],
        width,
        &Span::new(indent, anstyle::Style::new()),
        &" ".repeat(hang),
        false,
    )
}

/// Where a line's continuation rows start: under the text after a leading
/// mark (`⎿ `, `• `, `- `, `⚑ ` …), or under the second column of a
/// two-column line (`  /help      shows this help`), else under its indent.
fn hang_of(line: &str) -> usize {
    let indent = line.chars().take_while(|c| c.is_whitespace()).count();
    let rest: Vec<char> = line.chars().skip(indent).collect();
    // A one-character mark followed by a space.
    if rest.len() > 2 && rest[1] == ' ' && !rest[0].is_alphanumeric() && rest[0] != '/' {
        return indent + 2;
    }
    // The first run of two or more spaces inside the text: a column.
    let mut column = None;
    let mut index = 0;
    while index < rest.len() {
        let run = rest[index..].iter().take_while(|c| **c == ' ').count();
        if run >= 2 && index + run < rest.len() {
            column = Some(index + run);
            break;
        }
        index += run.max(1);
    }
    indent + column.unwrap_or(0)
}

/// How much of a hook's command its line shows (cut in the middle).
const HOOK_COMMAND_CHARS: usize = 48;

/// The one-line summary of a tool call's arguments.
pub fn summarize_arguments(tool: &str, arguments: &Value) -> String {
    truncate(&dsh_tools::describe(tool, arguments).summary, LINE_CHARS)
}

/// How a tool result is shown: its first lines, marked by what decided it.
pub fn describe_result(is_error: bool, content: &str, disposition: Option<&str>) -> (Tone, String) {
    let (tone, head) = match disposition {
        Some("executed") | None if !is_error => (Tone::Dim, String::new()),
        Some("executed") | None => (Tone::Bad, "error: ".to_owned()),
        Some(other)
            if other.starts_with("denied")
                || other.contains("approval")
                || other == "no_approval_service" =>
        {
            (Tone::Bad, format!("{} — ", other.replace('_', " ")))
        }
        Some(other) => (
            if is_error { Tone::Bad } else { Tone::Dim },
            format!("{} — ", other.replace('_', " ")),
        ),
    };
    // A hook's denial reads `PreToolUse:Bash hook error: [<command>]: why`
    // for the model; the person sees the why (Ctrl-O shows the rest).
    let content = strip_hook_wrapper(content);
    let lines: Vec<&str> = content.lines().collect();
    let mut text = String::new();
    for (index, line) in lines.iter().take(RESULT_LINES).enumerate() {
        let lead = if index == 0 { "  ⎿ " } else { "    " };
        let line = if index == 0 {
            format!("{head}{line}")
        } else {
            (*line).to_owned()
        };
        text.push_str(lead);
        text.push_str(&truncate(&line, LINE_CHARS));
        text.push('\n');
    }
    if lines.is_empty() {
        text.push_str(&format!("  ⎿ {head}(no output)\n"));
    }
    if lines.len() > RESULT_LINES {
        text.push_str(&format!("    … +{} lines\n", lines.len() - RESULT_LINES));
    }
    (tone, text.trim_end().to_owned())
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bash_calls_show_their_command_and_other_tools_their_target() {
        assert_eq!(
            summarize_arguments("bash", &json!({"command": "sleep 30"})),
            "$ sleep 30"
        );
        assert_eq!(
            summarize_arguments("read", &json!({"file_path": "src/a.rs"})),
            "src/a.rs"
        );
        assert_eq!(
            summarize_arguments("grep", &json!({"pattern": "fn main", "path": "src"})),
            "\"fn main\" in src"
        );
        assert_eq!(summarize_arguments("other", &json!({"x": 1})), "{\"x\":1}");
    }

    #[test]
    fn truncation_keeps_characters_whole() {
        assert_eq!(truncate("héllo wörld", 5), "héll…");
        assert_eq!(truncate("short", 5), "short");
    }

    #[test]
    fn results_show_the_first_lines_and_what_decided_them() {
        let (tone, text) = describe_result(false, "a\nb\nc\nd\ne\nf", Some("executed"));
        assert_eq!(tone, Tone::Dim);
        assert_eq!(text, "  ⎿ a\n    b\n    c\n    d\n    … +2 lines");
        let (tone, text) = describe_result(true, "needs approval", Some("no_approval_service"));
        assert_eq!(tone, Tone::Bad);
        assert_eq!(text, "  ⎿ no approval service — needs approval");
    }

    #[test]
    fn dsh_lines_wrap_between_words_under_their_text() {
        let help = format!(
            "  {:<30} {}",
            "/hooks [trust|untrust]", "lists the hooks of this session with their trust and origin"
        );
        let wrapped = wrap_line(&help, 70);
        let rows: Vec<&str> = wrapped.lines().collect();
        assert!(rows.len() > 1, "{wrapped}");
        assert!(
            rows.iter().all(|row| row.chars().count() <= 70),
            "{wrapped}"
        );
        // Continuation rows start under the description column.
        let column = rows[0].find("lists").unwrap();
        assert!(
            rows[1..]
                .iter()
                .all(|row| row[..column].trim().is_empty() && !row[column..].starts_with(' ')),
            "{wrapped}"
        );
        // Rejoined, no word was split.
        let words: Vec<&str> = wrapped.split_whitespace().collect();
        assert_eq!(words, help.split_whitespace().collect::<Vec<_>>());
        // A marked line hangs under its text.
        let result = "  ⎿ denied — safe_clean_guard.sh says this command removes the build history";
        let wrapped = wrap_line(result, 40);
        assert!(
            wrapped
                .lines()
                .skip(1)
                .all(|row| row.starts_with("    ") && !row.starts_with("     ")),
            "{wrapped}"
        );
        assert!(wrapped.contains("safe_clean_guard.sh"), "{wrapped}");
        // Short lines are left alone; a word longer than a row keeps a row.
        assert_eq!(wrap_line("short", 40), "short");
        assert_eq!(
            wrap_line("a verylongwordthatdoesnotfit", 10),
            "a\nverylongwordthatdoesnotfit"
        );
    }
}
