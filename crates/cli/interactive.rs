//! `dsh`: an interactive session in the current directory.
//!
//! Plain line input (no full-screen UI): each line is one send, one turn.
//! While a turn runs, the assistant's text streams, every tool call is shown
//! with its arguments and outcome, hook runs are shown as they finish (a
//! spinner for hooks that take longer than a second), and notices appear as
//! plugins raise them. Lines typed while a turn runs are queued and sent
//! after it. `ask` decisions become the approval prompt (`approval_prompt.rs`).
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

use crate::stdio::ExitStatus;
use std::io::{BufRead as _, IsTerminal as _};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::Context as _;
use dsh_agent::{Observers, QueuedPrompt};
use dsh_seams::{CancellationToken, Notification, NotificationKind, SessionEndReason};
use tokio::sync::mpsc;

use crate::log_view::ColorChoice;
use crate::sessions::{self, AgentOptions, Pick};
use crate::signals::{Signals, Stop};
use crate::terminal::{SPINNER_TICK, Terminal, Tone};

/// The interactive options.
#[derive(Debug, Clone)]
pub struct InteractiveArgs {
    /// Which session.
    pub pick: Pick,
    /// `--wait`: wait for another writer of the session instead of failing.
    pub wait: dsh_session::LockWait,
    /// Extra Claude Code settings files.
    pub settings: Vec<PathBuf>,
    /// Claude Code plugin directories loaded for this run (`--plugin-dir`).
    pub plugin_dirs: Vec<PathBuf>,
    /// `--model`.
    pub model: Option<String>,
    /// Bound on model requests per turn.
    pub max_steps: u64,
    /// `--autocompact`.
    pub autocompact: Option<crate::compact::AutocompactFlag>,
    /// Permission mode and rules.
    pub permissions: crate::perms::PermissionFlags,
    /// Colour.
    pub color: ColorChoice,
    /// MCP configuration files (`--mcp-config`).
    pub mcp_config: Vec<PathBuf>,
}

/// One thing read from stdin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Input {
    Line(String),
    Eof,
    /// Not typed: a signal ended the session while dsh waited for input.
    Stopped,
}

pub(crate) type SharedInput = Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<Input>>>;
/// The running turn's token, when a turn runs.
pub(crate) type TurnSlot = Arc<Mutex<Option<CancellationToken>>>;

/// Reads stdin line by line on a thread of its own (a blocking read cannot
/// be cancelled; the thread simply ends with the process).
fn spawn_reader() -> anyhow::Result<mpsc::UnboundedReceiver<Input>> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::Builder::new()
        .name("dsh-stdin".to_owned())
        .spawn(move || {
            let stdin = std::io::stdin();
            loop {
                let mut line = String::new();
                match stdin.lock().read_line(&mut line) {
                    Ok(0) => {
                        let _ = tx.send(Input::Eof);
                        return;
                    }
                    Ok(_) => {
                        let line = line.trim_end_matches(['\n', '\r']).to_owned();
                        if tx.send(Input::Line(line)).is_err() {
                            return;
                        }
                    }
                    Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(error) => {
                        tracing::warn!("cannot read stdin: {error}");
                        let _ = tx.send(Input::Eof);
                        return;
                    }
                }
            }
        })
        .context("cannot start the input thread")?;
    Ok(rx)
}

pub(crate) async fn next_input(input: &SharedInput) -> Input {
    input.lock().await.recv().await.unwrap_or(Input::Eof)
}

/// How long the prompt waits before the idle notification fires: 60 s, as
/// Claude Code, or `DSH_IDLE_NOTIFY_SECS`.
fn idle_notification_after() -> std::time::Duration {
    let seconds = std::env::var("DSH_IDLE_NOTIFY_SECS")
        .ok()
        .and_then(|value| value.trim().parse::<u64>().ok())
        .unwrap_or(60);
    std::time::Duration::from_secs(seconds)
}

/// Runs an interactive session.
pub fn run(args: InteractiveArgs) -> anyhow::Result<ExitStatus> {
    let home = sessions::dsh_home()?;
    let model = sessions::model(&home, args.model.as_deref())?;
    let opened = sessions::open(
        &home,
        &args.pick,
        &args.settings,
        &args.plugin_dirs,
        &args.permissions,
        sessions::Trust::Interactive,
        args.wait,
        &args.mcp_config,
    )?;
    let term = Arc::new(Terminal::new(crate::terminal::color_enabled(args.color)));
    let stdin_tty = std::io::stdin().is_terminal();

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = runtime.block_on(async {
        // Installed before anything runs, so no signal kills dsh outright;
        // they are read once the agent exists (until then they wait).
        let (mut sigint, mut terminations) = Signals::install()?.split();
        let input: SharedInput = Arc::new(tokio::sync::Mutex::new(spawn_reader()?));
        let turn: TurnSlot = Arc::new(Mutex::new(None));
        let (ctrl_c_tx, mut ctrl_c_at_prompt) = mpsc::unbounded_channel::<()>();
        {
            let term = Arc::clone(&term);
            tokio::spawn(async move {
                let mut interval = tokio::time::interval(SPINNER_TICK);
                loop {
                    interval.tick().await;
                    term.tick();
                }
            });
        }

        let resumed_turns = opened.log.last_turn();
        let session_id = opened.session_id.clone();
        let cwd = opened.cwd.clone();
        let source = opened.source;
        let notices = opened.hooks.notices.clone();
        let runner = opened.hooks.runner.clone();
        let mcp = Arc::clone(&opened.mcp);
        let observers = {
            let (text, event, notice) = (Arc::clone(&term), Arc::clone(&term), Arc::clone(&term));
            Observers {
                on_event: Some(Arc::new(move |e| event.event(e))),
                on_notice: Some(Arc::new(move |n| notice.notice(n))),
                on_text: Some(Arc::new(move |t| text.text(t))),
            }
        };
        let approval = Arc::new(crate::approval_prompt::TerminalApproval {
            term: Arc::clone(&term),
            input: Arc::clone(&input),
            turn: Arc::clone(&turn),
            permissions: opened.permissions.clone(),
            project: cwd.clone(),
            workspace: crate::perms::workspace_trust(
                &std::env::var_os("HOME").map_or_else(|| PathBuf::from("/"), PathBuf::from),
                &home,
                &cwd,
            ),
        });
        let model_name = model.name();
        let mut agent = sessions::agent(
            opened,
            AgentOptions {
                model,
                interactive: true,
                max_steps: args.max_steps,
                observers,
                approval: Some(approval),
            },
        )?;
        agent.set_auto_compact(crate::compact::configured(
            args.autocompact,
            &model_name,
            &crate::sessions::dsh_home()?,
        )?);

        let stopper = Stopper {
            stopped: Arc::new(Mutex::new(None)),
            session_cancel: agent.session_cancel(),
            runner: runner.clone(),
            term: Arc::clone(&term),
        };
        let (stop_tx, mut stop_rx) = mpsc::unbounded_channel::<Stop>();
        // Ctrl-C while the session-start hooks run ends the session like
        // SIGTERM does; afterwards it interrupts the turn or warns at the prompt.
        let starting = Arc::new(std::sync::atomic::AtomicBool::new(true));
        {
            let turn = Arc::clone(&turn);
            let term = Arc::clone(&term);
            let starting = Arc::clone(&starting);
            let stopper = stopper.clone();
            let stop_tx = stop_tx.clone();
            tokio::spawn(async move {
                while sigint.recv().await.is_some() {
                    if starting.load(std::sync::atomic::Ordering::SeqCst) {
                        stopper.stop(Stop::Interrupt);
                        let _ = stop_tx.send(Stop::Interrupt);
                        continue;
                    }
                    let running = turn.lock().unwrap_or_else(PoisonError::into_inner).clone();
                    match running {
                        Some(token) => {
                            if !token.is_cancelled() {
                                term.lines(Tone::Warn, "^C interrupting the turn…");
                                token.cancel();
                            }
                        }
                        None => {
                            let _ = ctrl_c_tx.send(());
                        }
                    }
                }
            });
        }
        {
            let stopper = stopper.clone();
            tokio::spawn(async move {
                loop {
                    let stop = terminations.recv().await;
                    stopper.stop(stop);
                    let _ = stop_tx.send(stop);
                }
            });
        }

        term.lines(
            Tone::Accent,
            &format!(
                "dsh {} · {model_name} · {}",
                env!("CARGO_PKG_VERSION"),
                cwd.display()
            ),
        );
        let how = if resumed_turns > 0 {
            format!("resumed session {session_id} ({resumed_turns} turns so far)")
        } else {
            format!("session {session_id}")
        };
        term.lines(
            Tone::Dim,
            &format!("{how} · Ctrl-C interrupts · Ctrl-D exits"),
        );
        for notice in &notices {
            term.lines(Tone::Warn, &format!("⚠ {notice}"));
        }
        agent.start(source).await;
        starting.store(false, std::sync::atomic::Ordering::SeqCst);

        let idle_after = idle_notification_after();
        let mut armed = false;
        while stopper.stopped().is_none() {
            if stdin_tty {
                term.prompt("> ");
            }
            // Waiting at the prompt for a minute fires the notification
            // seam once (Claude Code's `idle_prompt` Notification hooks).
            let idle = tokio::time::sleep(idle_after);
            tokio::pin!(idle);
            let mut notified = false;
            let input = loop {
                tokio::select! {
                    input = next_input(&input) => break Some(input),
                    Some(()) = ctrl_c_at_prompt.recv() => break None,
                    Some(_) = stop_rx.recv() => break Some(Input::Stopped),
                    () = &mut idle, if !notified => {
                        notified = true;
                        agent
                            .notify(&Notification {
                                kind: NotificationKind::Idle,
                                message: "dsh is waiting for your input".to_owned(),
                            })
                            .await;
                    }
                }
            };
            let line = match input {
                None if armed => {
                    term.lines(Tone::Plain, "");
                    break;
                }
                None => {
                    armed = true;
                    term.lines(Tone::Dim, "\n(Ctrl-C again or Ctrl-D to exit)");
                    continue;
                }
                Some(Input::Eof) => {
                    if stdin_tty {
                        term.lines(Tone::Plain, "");
                    }
                    break;
                }
                Some(Input::Line(line)) => line,
                Some(Input::Stopped) => break,
            };
            armed = false;
            let text = line.trim();
            if text.is_empty() {
                continue;
            }
            if text == "/exit" || text == "/quit" {
                break;
            }
            // Built-in commands (`/clear`, `/model`, `/compact`) and unknown
            // `/name`s are not turns (issue 16); a custom command is.
            if let Some(command) =
                dsh_agent::commands::parse(text, &agent.project_context().commands)
            {
                match agent.run_builtin(command).await {
                    Ok(true) => continue,
                    Ok(false) => {}
                    Err(error) => {
                        agent.end(SessionEndReason::Exit).await;
                        runner.kill_all();
                        return Err(anyhow::Error::new(error).context("the session log failed"));
                    }
                }
            }
            // A Ctrl-C that raced the end of the previous turn is stale.
            while ctrl_c_at_prompt.try_recv().is_ok() {}
            let token = agent.session_cancel().child_token();
            *turn.lock().unwrap_or_else(PoisonError::into_inner) = Some(token.clone());
            let outcome = agent
                .run_turn(
                    QueuedPrompt {
                        text: line.clone(),
                        source: "user".to_owned(),
                    },
                    token,
                )
                .await;
            *turn.lock().unwrap_or_else(PoisonError::into_inner) = None;
            match outcome {
                Ok(outcome) => term.turn_end(outcome.reason, outcome.message.as_deref()),
                Err(error) => {
                    agent.end(SessionEndReason::Exit).await;
                    runner.kill_all();
                    return Err(anyhow::Error::new(error).context("the session log failed"));
                }
            }
            // A native plugin's stop-after-step ended the session (seed 004).
            if let Some(why) = agent.session_end_requested() {
                term.lines(Tone::Warn, &format!("a plugin ended the session: {why}"));
                break;
            }
        }
        let stop = stopper.stopped();
        if let Some(stop) = stop {
            term.lines(Tone::Warn, &format!("{}: ending the session", stop.name()));
        }
        let reason = match stop {
            Some(_) => SessionEndReason::Other,
            None => SessionEndReason::Exit,
        };
        // Session-end hooks run even after a signal, inside their budget.
        agent.end(reason).await;
        mcp.close().await;
        // Detached (async) hooks do not outlive the session.
        runner.kill_all();
        anyhow::Ok(stop)
    });
    // The stdin thread may be blocked in a read; it ends with the process.
    runtime.shutdown_background();
    Ok(match result? {
        Some(stop) => ExitStatus::from(stop),
        None => ExitStatus::Success,
    })
}

/// Ends the session on SIGTERM, SIGHUP, or Ctrl-C during start-up: records
/// the first signal, cancels everything running (owners of hook and tool
/// processes kill their groups) and kills detached hooks. A second signal
/// exits at once.
#[derive(Clone)]
struct Stopper {
    stopped: Arc<Mutex<Option<Stop>>>,
    session_cancel: CancellationToken,
    runner: dsh_hook_runner::HookRunner,
    term: Arc<Terminal>,
}

impl Stopper {
    fn stop(&self, stop: Stop) {
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

    fn stopped(&self) -> Option<Stop> {
        *self.stopped.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
