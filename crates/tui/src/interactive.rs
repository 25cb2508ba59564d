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
use std::sync::Arc;

use crate::terminal::ColorChoice;
use crate::terminal::Terminal;
use crate::tui::editor::{EditorConfig, InputMode};
use crate::tui::status::StatusInfo;
use dsh_core::sessions::{self, Pick};

pub use crate::slash_commands::HookActions;

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

/// Opens the session: which one (the picker for `-r` without an id), its
/// spec, the trust question, its log and agent parts, and the terminal.
fn prepare(args: &InteractiveArgs) -> anyhow::Result<crate::prompt_loop::Prepared> {
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
    let target = sessions::log_target(&home, existing.as_ref(), args.wait);
    // `--worktree`: the session moves there; the worktree's own settings
    // (and their trust) apply from then on.
    let mut worktree = None;
    if let Some(name) = &args.session.worktree {
        let id = target.new_session_id().map(str::to_owned);
        let id = id.ok_or_else(|| anyhow::anyhow!("--worktree starts a new session"))?;
        let (moved, made) = dsh_core::worktree::enter(&spec, name, &id)??;
        spec = moved;
        let stdin = std::io::stdin();
        spec.ask_in_terminal(&mut stdin.lock(), &mut std::io::stdout())?;
        worktree = Some(made);
    }
    let session_spec = spec.clone();
    let workspace = spec.workspace;
    let opened = dsh_core::assemble(spec, target)?;
    sessions::report_torn(&opened);
    let term = Arc::new(Terminal::new(crate::terminal::color_enabled(args.color)));
    term.set_cwd(opened.cwd());
    term.set_verbose(args.verbose);
    let stdin_tty = std::io::stdin().is_terminal();
    let editor_config = EditorConfig {
        history: crate::tui::editor::history_path(&home, opened.cwd()),
        cwd: opened.cwd().to_owned(),
        color: term.color(),
        editing: term.editing_flag(),
    };
    let mut status = StatusInfo {
        model: model.name(),
        session_id: opened.session_id().to_owned(),
        mode: session_spec.mode.to_string(),
        context_tokens: None,
        cache: None,
        meter: crate::tui::usage::Meter::of_events(opened.log().events()),
    };
    if let Some(usage) = last_usage(opened.log().events()) {
        status.record_usage(&usage);
    }
    Ok(crate::prompt_loop::Prepared {
        home,
        config,
        spec: session_spec,
        workspace,
        log_path: opened.log().path().map(std::path::Path::to_path_buf),
        new_session: existing.is_none(),
        worktree,
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
    let fresh_log = prepared.log_path.clone().filter(|_| prepared.new_session);
    let options = crate::prompt_loop::LoopOptions {
        queue_mode: args.queue_mode,
        // A restarted dsh (`/clear`, `/resume`) keeps its arguments, but
        // their first prompt was sent in the session before.
        first_prompt: args
            .first_prompt
            .clone()
            .filter(|_| !crate::restart::restarted()),
        hooks: args.hooks,
        init_only: args.session.init_only,
    };
    // The stdin thread may be blocked in a read; it ends with the process.
    let result = dsh_core::block_on(crate::prompt_loop::drive(options, prepared))?;
    // A signal may have ended the session while the editor held the
    // terminal in raw mode.
    if input_mode == InputMode::Editor {
        crate::tui::editor::restore_terminal();
    }
    // A new session whose every turn failed before the model answered (a
    // refused key, an unreachable endpoint) is not kept.
    if let Some(path) = &fresh_log {
        dsh_core::sessions::forget_failed_start(path);
    }
    let (stop, next) = result?;
    Ok(match (stop, next) {
        (Some(stop), _) => ExitStatus::from(stop),
        (None, crate::restart::Next::Exit) => ExitStatus::Success,
        (None, crate::restart::Next::Restart(restart)) => {
            return Err(crate::restart::reexec(&restart));
        }
    })
}

/// The usage the session's last reply reported (a resumed session).
fn last_usage(events: &[dsh_protocol::Event]) -> Option<dsh_protocol::TokenUsage> {
    events.iter().rev().find_map(|event| {
        if let dsh_protocol::EventBody::AssistantMessage(dsh_protocol::AssistantMessageEvent {
            usage: Some(usage),
            ..
        }) = &event.body
        {
            Some(*usage)
        } else {
            None
        }
    })
}
