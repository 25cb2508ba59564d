//! `dsh`: an interactive session in the current directory.
//!
//! No full-screen UI: each prompt is one send, one turn. On a terminal the
//! prompt is a line editor (`tui::editor`: history, Ctrl-R, multi-line,
//! completion), lines starting with `/` are slash commands (`tui::slash`),
//! and a status line precedes the prompt; piped input is read line by line.
//! While a turn runs, the assistant's text streams, every tool call is shown
//! with its arguments and outcome, hook runs are shown as they finish (a
//! spinner for hooks that take longer than a second), and notices appear as
//! plugins raise them. Lines typed while a turn runs go to that turn: they
//! are queued for its next model request (`steer.rs`, `--queue-mode`). `ask` decisions become the approval prompt (`approval_prompt.rs`).
//!
//! # Signal policy
//!
//! dsh installs a SIGINT handler at start-up, so Ctrl-C never kills dsh
//! itself. Tool and hook processes run in process groups of their own, so
//! the terminal's Ctrl-C does not reach them directly; instead:
//!
//! - Ctrl-C while a turn runs cancels that turn's token. The model request
//!   is dropped, an approval question is answered "cancelled", and the
//!   owners of tool and hook processes kill their process groups; the turn
//!   ends `interrupted` and the prompt comes back.
//! - Ctrl-C at the prompt warns once; a second Ctrl-C at the prompt (with
//!   nothing sent in between), `/exit`, or Ctrl-D (end of input) ends the
//!   session: the session-end seam runs (`SessionEndReason::Exit`) and dsh
//!   exits 0.
//! - Ctrl-C while the session-start hooks run, SIGTERM and SIGHUP end the
//!   session at any time: what runs is cancelled and its process groups
//!   killed, an open turn closes `interrupted`, the session-end hooks run
//!   within their budget, and dsh exits 130, 143 or 129. A second such
//!   signal exits at once.

use dsh_stdio::stdio::ExitStatus;
use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::Context as _;
use dsh_seams::CancellationToken;
use tokio::sync::mpsc;

use crate::input::Input;
use crate::terminal::ColorChoice;
use crate::terminal::{Terminal, Tone};
use crate::tui::editor::{Editor, EditorConfig, EditorEvent, InputMode};
use crate::tui::slash::{self, HooksAction, SlashCommand};
use crate::tui::status::StatusInfo;
use dsh_core::hooks::HookSources;
use dsh_core::sessions::{self, Pick};
use dsh_stdio::signals::Stop;

/// The interactive options.
#[derive(Debug, Clone)]
pub struct InteractiveArgs {
    /// Which session.
    pub pick: Pick,
    /// `--wait`: wait for another writer of the session instead of failing.
    pub wait: dsh_session::LockWait,
    /// The session flags.
    pub session: dsh_core::SessionFlags,
    /// Colour.
    pub color: ColorChoice,
    /// `--queue-mode`: the steering queue's mode for lines typed during a turn.
    pub queue_mode: Option<crate::steer::QueueModeFlag>,
    /// `dsh "PROMPT"`: the first prompt, handled as if typed at the prompt.
    pub first_prompt: Option<String>,
    /// `-r`/`--resume` without an id: pick the session from a list.
    pub pick_session: bool,
    /// `--verbose`: show every hook run and the context hooks add (Ctrl-O
    /// toggles it).
    pub verbose: bool,
    /// What `/hooks` and `/permissions` run: the hook tooling's session
    /// entry points, passed in by the binary.
    pub hooks: HookActions,
}

/// The hook tooling behind `/hooks` and `/permissions` (`dsh hooks list`,
/// `trust`, `untrust` and the permission rules), for the session's hook
/// sources.
#[derive(Debug, Clone, Copy)]
pub struct HookActions {
    /// `/hooks`: prints the hook listing.
    pub list: fn(&HookSources) -> anyhow::Result<()>,
    /// `/hooks trust [SELECTOR…]`.
    pub trust: fn(&HookSources, &[String]) -> anyhow::Result<()>,
    /// `/hooks untrust [SELECTOR…]`.
    pub untrust: fn(&HookSources, &[String]) -> anyhow::Result<()>,
    /// `/permissions`: the rules and where they come from.
    pub permissions: fn(&HookSources) -> anyhow::Result<String>,
}

/// Reads stdin on a thread of its own (a blocking read cannot be
/// cancelled; the thread simply ends with the process): the line editor at
/// the prompt on a terminal, whole lines otherwise. Ctrl-C in the editor
/// arrives as a Ctrl-C at the prompt.
pub(crate) fn spawn_reader(
    mode: InputMode,
    config: EditorConfig,
    ctrl_c: mpsc::UnboundedSender<()>,
) -> anyhow::Result<(mpsc::UnboundedReceiver<Input>, Editor)> {
    let (tx, rx) = mpsc::unbounded_channel();
    let editor = crate::tui::editor::spawn(
        mode,
        config,
        Box::new(move |event| match event {
            EditorEvent::Line(line) => tx.send(Input::Line(line)).is_ok(),
            EditorEvent::Eof => tx.send(Input::Eof).is_ok(),
            EditorEvent::Interrupt => ctrl_c.send(()).is_ok(),
        }),
    )?;
    Ok((rx, editor))
}

/// How long the prompt waits before the idle notification fires: 60 s, as
/// Claude Code, or `DSH_IDLE_NOTIFY_SECS`.
pub(crate) fn idle_notification_after() -> std::time::Duration {
    let seconds = std::env::var("DSH_IDLE_NOTIFY_SECS")
        .ok()
        .and_then(|value| value.trim().parse::<u64>().ok())
        .unwrap_or(60);
    std::time::Duration::from_secs(seconds)
}

/// What the session needs before its runtime starts.
pub(crate) struct Prepared {
    pub home: PathBuf,
    pub config: dsh_core::DshConfig,
    /// What the session resolved: `/hooks`, `/permissions` and `/status`
    /// see what it loaded (plugins and MCP tags included).
    pub spec: dsh_core::SessionSpec,
    pub workspace: dsh_core::perms::WorkspaceTrust,
    pub opened: dsh_core::Assembled,
    pub model: Arc<dyn dsh_model::Model>,
    /// Bound on model requests per turn.
    pub max_steps: u64,
    pub term: Arc<Terminal>,
    pub stdin_tty: bool,
    pub input_mode: InputMode,
    pub editor_config: EditorConfig,
    pub status: StatusInfo,
    pub log_path: Option<PathBuf>,
}

/// Opens the session: which one (the picker for `-r` without an id), its
/// spec, the trust question, its log and agent parts, and the terminal.
fn prepare(args: &InteractiveArgs) -> anyhow::Result<Prepared> {
    let env = dsh_core::Env::from_process();
    let home = env.dsh_home()?;
    let config = dsh_core::DshConfig::load(&home)?;
    let current = dsh_core::current_dir()?;
    let pick = match (&args.pick, args.pick_session) {
        (Pick::New, true) => match crate::picker::pick_at_start(&home, &current)? {
            Some(id) => Pick::Resume(id),
            None => Pick::New,
        },
        (pick, _) => pick.clone(),
    };
    let (cwd, existing) = sessions::pick(&home, &pick, &current)?;
    let mut spec = dsh_core::SessionSpec::resolve(dsh_core::Inputs {
        env: &env,
        config: &config,
        flags: &args.session,
        cwd: &cwd,
        policy: dsh_core::TrustPolicy::Ask,
    })?;
    let model = spec.model()?;
    {
        let stdin = std::io::stdin();
        spec.ask_in_terminal(&mut stdin.lock(), &mut std::io::stdout())?;
    }
    let session_spec = spec.clone();
    let workspace = spec.workspace;
    let opened = dsh_core::assemble(
        spec,
        sessions::log_target(&home, existing.as_ref(), args.wait),
    )?;
    sessions::report_torn(&opened);
    let term = Arc::new(Terminal::new(crate::terminal::color_enabled(args.color)));
    term.set_cwd(&opened.cwd);
    term.set_verbose(args.verbose);
    let stdin_tty = std::io::stdin().is_terminal();
    let editor_config = EditorConfig {
        history: crate::tui::editor::history_path(&home, &opened.cwd),
        cwd: opened.cwd.clone(),
        color: term.color(),
        editing: term.editing_flag(),
    };
    let mut status = StatusInfo {
        model: model.name(),
        session_id: opened.session_id.clone(),
        mode: session_spec.permissions.mode.to_string(),
        context_tokens: None,
        cache: None,
        meter: crate::tui::usage::Meter::of_events(opened.log.events()),
    };
    if let Some(usage) = last_usage(opened.log.events()) {
        status.record_usage(&usage);
    }
    Ok(Prepared {
        home,
        config,
        spec: session_spec,
        workspace,
        log_path: opened.log.path().map(std::path::Path::to_path_buf),
        opened,
        model,
        // A person is there to press Ctrl-C: no silent cap unless
        // `--max-steps` asks for one.
        max_steps: args.session.max_steps.unwrap_or(u64::MAX),
        term,
        stdin_tty,
        input_mode: InputMode::detect(stdin_tty, std::io::stdout().is_terminal()),
        editor_config,
        status,
    })
}

/// Runs an interactive session.
pub fn run(args: InteractiveArgs) -> anyhow::Result<ExitStatus> {
    let prepared = prepare(&args)?;
    let input_mode = prepared.input_mode;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = runtime.block_on(crate::prompt_loop::drive(&args, prepared));
    // A signal may have ended the session while the editor held the
    // terminal in raw mode.
    if input_mode == InputMode::Editor {
        crate::tui::editor::restore_terminal();
    }
    // The stdin thread may be blocked in a read; it ends with the process.
    runtime.shutdown_background();
    let (stop, next) = result?;
    Ok(match (stop, next) {
        (Some(stop), _) => ExitStatus::from(stop),
        (None, Next::Exit) => ExitStatus::Success,
        (None, Next::Restart(restart)) => return Err(reexec(&restart)),
    })
}

/// The environment variable a `/clear` restart sets so the new session's
/// SessionStart hooks see `clear` as its source.
const START_SOURCE_ENV: &str = "DSH_START_SOURCE";

/// How the session starts: `clear` after a `/clear` restart, else as the
/// session was opened (`startup`, `resume`).
pub(crate) fn start_source(opened: dsh_seams::SessionStartSource) -> dsh_seams::SessionStartSource {
    match std::env::var(START_SOURCE_ENV).as_deref() {
        Ok("clear") => dsh_seams::SessionStartSource::Clear,
        _ => opened,
    }
}

/// `/clear`: a new session with the model in use.
pub(crate) fn cleared(model: String) -> Next {
    Next::Restart(Restart {
        resume: None,
        model: Some(model),
        clear: true,
    })
}

/// `/resume ID`.
pub(crate) fn resume(id: String) -> Next {
    Next::Restart(Restart {
        resume: Some(id),
        model: None,
        clear: false,
    })
}

/// What follows the session loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Next {
    /// dsh exits.
    Exit,
    /// dsh starts again in another session (`/resume`, `/clear`; `/model
    /// NAME` acts on the running session): the session ended (its end
    /// hooks ran) and dsh replaces itself with a fresh process for the
    /// next one, so no state of the old session (hooks, trust answers,
    /// runtime, usage) leaks into it.
    Restart(Restart),
}

/// How dsh is started again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Restart {
    /// `--resume ID`, or a new session.
    pub resume: Option<String>,
    /// `--model NAME` replacing the current one.
    pub model: Option<String>,
    /// `/clear`: the new session starts with the source `clear`.
    pub clear: bool,
}

/// The arguments this dsh was started with, without the session choice
/// (`-r`/`--resume`, `-c`/`--continue`) and, when `drop_model`, `--model`.
fn restart_args(args: &[std::ffi::OsString], drop_model: bool) -> Vec<std::ffi::OsString> {
    let mut kept = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let text = arg.to_string_lossy();
        if text == "-r" || text == "--resume" {
            // Its id is optional (`-r` alone opens the picker).
            if iter
                .clone()
                .next()
                .is_some_and(|next| !next.to_string_lossy().starts_with('-'))
            {
                iter.next();
            }
            continue;
        }
        if drop_model && text == "--model" {
            iter.next();
            continue;
        }
        if text == "-c"
            || text == "--continue"
            || text.starts_with("--resume=")
            || (drop_model && text.starts_with("--model="))
        {
            continue;
        }
        kept.push(arg.clone());
    }
    kept
}

/// Replaces this process with `dsh` in the next session; returns only on failure.
fn reexec(restart: &Restart) -> anyhow::Error {
    use std::os::unix::process::CommandExt as _;
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(error) => return anyhow::Error::new(error).context("cannot find dsh to restart it"),
    };
    let original: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let mut args = restart_args(&original, restart.model.is_some());
    if let Some(id) = &restart.resume {
        args.push("--resume".into());
        args.push(id.into());
    }
    if let Some(model) = &restart.model {
        args.push("--model".into());
        args.push(model.into());
    }
    let mut command = std::process::Command::new(exe);
    command.args(args);
    if restart.clear {
        command.env(START_SOURCE_ENV, "clear");
    } else {
        command.env_remove(START_SOURCE_ENV);
    }
    // The keys are no longer in this environment: the next image gets them back and hands them off anew.
    dsh_provider::key_handoff::restore_keys_for_exec(&mut command);
    let error = command.exec();
    anyhow::Error::new(error).context("cannot restart dsh for the next session")
}

/// The usage the session's last reply reported (a resumed session).
fn last_usage(events: &[dsh_protocol::Event]) -> Option<dsh_protocol::TokenUsage> {
    events.iter().rev().find_map(|event| {
        if let dsh_protocol::EventBody::AssistantMessage {
            usage: Some(usage), ..
        } = &event.body
        {
            Some(*usage)
        } else {
            None
        }
    })
}

/// What a slash command can see.
pub(crate) struct SlashContext<'a> {
    pub term: &'a Terminal,
    pub status: &'a StatusInfo,
    /// What the session resolved (its hook sources carry plugins and MCP tags).
    pub spec: &'a dsh_core::SessionSpec,
    /// Bound on model requests per turn.
    pub max_steps: u64,
    pub cwd: &'a std::path::Path,
    pub log_path: Option<&'a std::path::Path>,
    /// The hook tooling `/hooks` and `/permissions` run.
    pub hooks: HookActions,
}

/// Runs a slash command; `Some` when it ends this session.
pub(crate) fn run_slash(
    context: &SlashContext<'_>,
    command: SlashCommand,
) -> anyhow::Result<Option<Next>> {
    let term = context.term;
    let sources = || {
        let mut sources = context.spec.sources.clone();
        sources.excluded_hooks.clear();
        sources
    };
    match command {
        SlashCommand::Help => term.lines(Tone::Plain, &slash::help()),
        SlashCommand::Exit => return Ok(Some(Next::Exit)),
        SlashCommand::Status => {
            let mut text = format!("{}\n", context.status.line());
            if let Some(cache) = context.status.cache_line() {
                text.push_str(&cache);
                text.push('\n');
            }
            text.push_str(&format!("session {}\n", context.status.session_id));
            text.push_str(&format!("directory {}\n", context.cwd.display()));
            if let Some(path) = context.log_path {
                text.push_str(&format!("log {}\n", path.display()));
            }
            text.push_str(&format!(
                "steps per turn: {}\n",
                match context.max_steps {
                    u64::MAX => "no bound (Ctrl-C interrupts)".to_owned(),
                    bound => bound.to_string(),
                }
            ));
            // What `dsh status` shows for this session.
            text.push_str(dsh_core::Status::of(context.spec)?.text().trim_end());
            term.lines(Tone::Plain, &text);
        }
        SlashCommand::Hooks(HooksAction::List) => (context.hooks.list)(&sources())?,
        SlashCommand::Hooks(HooksAction::Trust(selectors)) => {
            (context.hooks.trust)(&sources(), &selectors)?;
            term.lines(Tone::Dim, "(trust applies from the next session on)");
        }
        SlashCommand::Hooks(HooksAction::Untrust(selectors)) => {
            (context.hooks.untrust)(&sources(), &selectors)?;
            term.lines(Tone::Dim, "(trust applies from the next session on)");
        }
        SlashCommand::Permissions => {
            let rules = (context.hooks.permissions)(&sources())?;
            term.lines(
                Tone::Plain,
                &format!(
                    "this session: {} mode{}",
                    context.status.mode,
                    rules.trim_end().replacen("\nPermissions", "", 1)
                ),
            );
        }
        SlashCommand::Model(None) => term.lines(
            Tone::Plain,
            &format!(
                "model {} (/model NAME reopens this session with another model)",
                context.status.model
            ),
        ),
        // The session loop hands these to the agent before `run_slash`.
        SlashCommand::Model(Some(_))
        | SlashCommand::Clear
        | SlashCommand::Compact(_)
        | SlashCommand::Mcp
        | SlashCommand::Cost
        | SlashCommand::Verbose
        | SlashCommand::Mode(_)
        | SlashCommand::Resume(None) => {}
        SlashCommand::Resume(Some(id)) => return Ok(Some(resume(id))),
        SlashCommand::Last => match term.last_detail() {
            Some(detail) => term.lines(Tone::Plain, &detail),
            None => term.lines(
                Tone::Dim,
                "nothing yet: no hook has blocked, asked or failed",
            ),
        },
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restarting_drops_the_session_choice_and_keeps_the_rest() {
        let args: Vec<std::ffi::OsString> = [
            "--resume",
            "abc",
            "--settings",
            "x.json",
            "-c",
            "--model",
            "m1",
            "--resume=def",
        ]
        .iter()
        .map(Into::into)
        .collect();
        let kept: Vec<String> = restart_args(&args, false)
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(kept, ["--settings", "x.json", "--model", "m1"]);
        let kept = restart_args(&args, true);
        assert_eq!(kept.len(), 2);
    }
}

/// Ends the session on SIGTERM, SIGHUP, or Ctrl-C during start-up: records
/// the first signal, cancels everything running (owners of hook and tool
/// processes kill their groups) and kills detached hooks. A second signal
/// exits at once.
#[derive(Clone)]
pub(crate) struct Stopper {
    pub stopped: Arc<Mutex<Option<Stop>>>,
    pub session_cancel: CancellationToken,
    pub runner: dsh_hook_runner::HookRunner,
    pub term: Arc<Terminal>,
}

impl Stopper {
    pub(crate) fn stop(&self, stop: Stop) {
        let first = {
            let mut stopped = self.stopped.lock().unwrap_or_else(PoisonError::into_inner);
            let first = stopped.is_none();
            stopped.get_or_insert(stop);
            first
        };
        self.runner.kill_all();
        if first {
            self.session_cancel.cancel();
        } else {
            self.term
                .lines(Tone::Warn, &format!("{} again; exiting now", stop.name()));
            ExitStatus::from(stop).exit_now();
        }
    }

    pub(crate) fn stopped(&self) -> Option<Stop> {
        *self.stopped.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
