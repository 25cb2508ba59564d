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
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::Context as _;
use dsh_agent::{Observers, QueuedPrompt};
use dsh_seams::{CancellationToken, Notification, NotificationKind, SessionEndReason};
use tokio::sync::mpsc;

use crate::input::{Input, SharedInput, TurnSlot, next_input};
use crate::terminal::ColorChoice;
use crate::terminal::{SPINNER_TICK, Terminal, Tone};
use crate::tui::editor::{Editor, EditorConfig, EditorEvent, InputMode};
use crate::tui::slash::{self, HooksAction, Parsed, SlashCommand};
use crate::tui::status::StatusInfo;
use dsh_agent::commands::PromptCommand;
use dsh_core::AgentOptions;
use dsh_core::hooks::HookSources;
use dsh_core::sessions::{self, Pick};
use dsh_stdio::signals::{Signals, Stop};

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
fn spawn_reader(
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
fn idle_notification_after() -> std::time::Duration {
    let seconds = std::env::var("DSH_IDLE_NOTIFY_SECS")
        .ok()
        .and_then(|value| value.trim().parse::<u64>().ok())
        .unwrap_or(60);
    std::time::Duration::from_secs(seconds)
}

/// Runs an interactive session.
pub fn run(args: InteractiveArgs) -> anyhow::Result<ExitStatus> {
    let env = dsh_core::Env::from_process();
    let home = env.dsh_home()?;
    let config = dsh_core::DshConfig::load(&home)?;
    let (cwd, existing) = sessions::pick(&home, &args.pick, &dsh_core::current_dir()?)?;
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
    // `/hooks`, `/permissions` and `/status` see what this session loaded
    // (plugins and MCP tags included).
    let session_spec = spec.clone();
    let workspace = spec.workspace;
    let opened = dsh_core::assemble(
        spec,
        sessions::log_target(&home, existing.as_ref(), args.wait),
    )?;
    sessions::report_torn(&opened);
    // A person is there to press Ctrl-C: no silent cap unless `--max-steps`
    // asks for one.
    let max_steps = args.session.max_steps.unwrap_or(u64::MAX);
    let term = Arc::new(Terminal::new(crate::terminal::color_enabled(args.color)));
    let stdin_tty = std::io::stdin().is_terminal();
    let input_mode = InputMode::detect(stdin_tty, std::io::stdout().is_terminal());
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
    };
    let log_path = opened.log.path().map(std::path::Path::to_path_buf);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = runtime.block_on(async {
        // Installed before anything runs, so no signal kills dsh outright;
        // they are read once the agent exists (until then they wait).
        let (mut sigint, mut terminations) = Signals::install()?.split();
        let (ctrl_c_tx, mut ctrl_c_at_prompt) = mpsc::unbounded_channel::<()>();
        let (reader, editor) = spawn_reader(input_mode, editor_config, ctrl_c_tx.clone())?;
        let input: SharedInput = Arc::new(tokio::sync::Mutex::new(reader));
        let turn: TurnSlot = Arc::new(Mutex::new(None));
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
        if let Some(usage) = last_usage(opened.log.events()) {
            status.record_usage(&usage);
        }
        let session_id = opened.session_id.clone();
        let cwd = opened.cwd.clone();
        let source = opened.source;
        let notices = opened.notices.clone();
        // MCP servers that started are news, not a warning; hook notices,
        // discovery notices and failed servers are warnings.
        let settled_servers: Vec<String> = opened
            .mcp
            .notices()
            .iter()
            .filter(|line| !opened.problems.contains(line))
            .cloned()
            .collect();
        let runner = opened.runner.clone();
        let mcp = Arc::clone(&opened.mcp);
        let usage: Arc<Mutex<Option<dsh_protocol::TokenUsage>>> = Arc::new(Mutex::new(None));
        let observers = {
            let (text, event, notice) = (Arc::clone(&term), Arc::clone(&term), Arc::clone(&term));
            let usage = Arc::clone(&usage);
            Observers {
                on_event: Some(Arc::new(move |e| {
                    if let dsh_protocol::EventBody::AssistantMessage {
                        usage: Some(reported),
                        ..
                    } = &e.body
                    {
                        *usage.lock().unwrap_or_else(PoisonError::into_inner) = Some(*reported);
                    }
                    event.event(e)
                })),
                on_notice: Some(Arc::new(move |n| notice.notice(n))),
                on_text: Some(Arc::new(move |t| text.text(t))),
            }
        };
        let gate = Arc::new(crate::steer::InputGate::default());
        // The prompt loop shadows `input`; the steering reader keeps this.
        let typed_input = Arc::clone(&input);
        let approval = Arc::new(crate::approval_prompt::TerminalApproval {
            term: Arc::clone(&term),
            input: Arc::clone(&input),
            gate: Arc::clone(&gate),
            turn: Arc::clone(&turn),
            permissions: Some(Arc::clone(&opened.permissions)),
            project: cwd.clone(),
            workspace,
        });
        let model_name = model.name();
        let mut agent = opened.agent(AgentOptions {
            model,
            interactive: true,
            max_steps,
            observers,
            approval: Some(approval),
        })?;
        let steering_mode = config.queue_mode(args.queue_mode.map(Into::into))?;
        agent.set_queue_modes(dsh_agent::QueueModes {
            steering: steering_mode,
            follow_up: steering_mode,
        });
        let steering = agent.steering_queue();

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
                                term.interrupting();
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
            if settled_servers.contains(notice) {
                term.lines(Tone::Good, &format!("✓ {notice}"));
            } else {
                term.lines(Tone::Warn, &format!("⚠ {notice}"));
            }
        }
        agent.start(source).await;
        starting.store(false, std::sync::atomic::Ordering::SeqCst);

        let idle_after = idle_notification_after();
        let mut armed = false;
        let mut next = Next::Exit;
        // Input typed during a turn that waits for the prompt after it.
        let mut typed_ahead: std::collections::VecDeque<Input> = std::collections::VecDeque::new();
        if let Some(first) = args.first_prompt.clone() {
            typed_ahead.push_back(Input::Line(first));
        }
        // `--init-only`: the Setup and session-start hooks were the whole session.
        while stopper.stopped().is_none() && !args.session.init_only {
            if let Some(reported) = usage.lock().unwrap_or_else(PoisonError::into_inner).take() {
                status.record_usage(&reported);
            }
            if stdin_tty {
                let width = crate::tui::render::terminal_width();
                term.lines(Tone::Dim, &crate::terminal::truncate(&status.line(), width));
            }
            let ahead = typed_ahead.pop_front();
            if ahead.is_none() {
                match input_mode {
                    InputMode::Editor => editor.request(),
                    InputMode::Lines if stdin_tty => term.prompt("> "),
                    InputMode::Lines => {}
                }
            }
            // Waiting at the prompt for a minute fires the notification
            // seam once (Claude Code's `idle_prompt` Notification hooks).
            let idle = tokio::time::sleep(idle_after);
            tokio::pin!(idle);
            let mut notified = false;
            let input = loop {
                if let Some(ahead) = ahead {
                    break Some(ahead);
                }
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
            // A custom command (`.claude/commands`, a skill, a Codex prompt)
            // is a turn the agent expands, not a terminal command.
            let custom = matches!(
                dsh_agent::commands::parse(text, &agent.project_context().commands),
                Some(PromptCommand::Custom(_))
            );
            let parsed = if custom {
                Parsed::Prompt
            } else {
                slash::parse(text)
            };
            let command = match parsed {
                Parsed::Prompt => None,
                Parsed::Command(command) => Some(command),
                Parsed::Unknown { name, suggestion } => {
                    let hint = suggestion
                        .map(|s| format!(" — did you mean {s}?"))
                        .unwrap_or_else(|| " — /help lists the commands".to_owned());
                    term.lines(Tone::Warn, &format!("unknown command {name}{hint}"));
                    continue;
                }
                Parsed::Usage(info) => {
                    term.lines(
                        Tone::Warn,
                        &format!("usage: {} {} — {}", info.name, info.usage, info.about),
                    );
                    continue;
                }
            };
            let mut compact_line = None;
            // Commands that act on the running session go to the agent:
            // `/clear` and `/model NAME` are durable events with their hooks
            // (SessionEnd/SessionStart `clear`), `/compact` is a turn.
            let builtin = match &command {
                Some(SlashCommand::Clear) => Some(PromptCommand::Clear),
                Some(SlashCommand::Model(Some(name))) => Some(PromptCommand::Model(name.clone())),
                _ => None,
            };
            if let Some(builtin) = builtin {
                let cleared = matches!(builtin, PromptCommand::Clear);
                if let PromptCommand::Model(name) = &builtin {
                    status.model = name.clone();
                }
                if let Err(error) = agent.run_builtin(builtin).await {
                    agent.end(SessionEndReason::Exit).await;
                    runner.kill_all();
                    return Err(anyhow::Error::new(error).context("the session log failed"));
                }
                if cleared {
                    term.lines(
                        Tone::Dim,
                        "context cleared: the model no longer sees the conversation so far",
                    );
                }
                continue;
            }
            let command = match command {
                Some(SlashCommand::Compact(instructions)) => {
                    compact_line = Some(match instructions {
                        Some(instructions) => format!("/compact {instructions}"),
                        None => "/compact".to_owned(),
                    });
                    None
                }
                Some(SlashCommand::Mcp) => {
                    let lines = mcp.notices();
                    if lines.is_empty() {
                        term.lines(
                            Tone::Plain,
                            "no MCP servers (`dsh mcp list` shows where dsh looks)",
                        );
                    }
                    for line in lines {
                        term.lines(Tone::Plain, line);
                    }
                    continue;
                }
                other => other,
            };
            if let Some(command) = command {
                let context = SlashContext {
                    term: &term,
                    status: &status,
                    spec: &session_spec,
                    max_steps,
                    cwd: &cwd,
                    home: &home,
                    log_path: log_path.as_deref(),
                    hooks: args.hooks,
                };
                match run_slash(&context, command) {
                    Ok(Some(then)) => {
                        next = then;
                        break;
                    }
                    Ok(None) => {}
                    Err(error) => term.lines(Tone::Bad, &format!("✗ {error:#}")),
                }
                continue;
            }
            let line = match compact_line {
                // `/compact` runs as a turn of its own (no mentions to expand).
                Some(compact) => compact,
                // `@path` mentions: hooks see the prompt as typed, the
                // model gets the files as context after the prompt.
                None => {
                    agent.attach_to_next_prompt(dsh_agent::mentions::mention_attachments(&line, &cwd));
                    line
                }
            };
            // A Ctrl-C that raced the end of the previous turn is stale.
            while ctrl_c_at_prompt.try_recv().is_ok() {}
            let token = agent.session_cancel().child_token();
            *turn.lock().unwrap_or_else(PoisonError::into_inner) = Some(token.clone());
            let outcome = {
                let running = agent.run_turn(
                    QueuedPrompt {
                        text: line.clone(),
                        source: "user".to_owned(),
                    },
                    token,
                );
                tokio::pin!(running);
                // Reading stops at the end of input; what is left waits.
                // Piped input is a script, not a person typing along: its
                // lines stay one turn each.
                let mut reading = stdin_tty;
                loop {
                    tokio::select! {
                        outcome = &mut running => break outcome,
                        typed = crate::steer::next_typed(&typed_input, &gate), if reading => {
                            match crate::steer::classify(typed) {
                                crate::steer::Typed::Steer(text) => {
                                    term.lines(Tone::Dim, &format!("⧗ queued for the running turn: {text}"));
                                    steering.push(text, "user");
                                }
                                crate::steer::Typed::Later(later) => {
                                    reading = !matches!(later, Input::Eof | Input::Stopped);
                                    typed_ahead.push_back(later);
                                }
                                crate::steer::Typed::Ignore => {}
                            }
                        }
                    }
                }
            };
            // Typed after the turn's last model request: the next prompt,
            // unless the person interrupted the turn (then nothing runs on
            // its own; they can type it again).
            let late: Vec<String> = steering.drain().into_iter().map(|m| m.text).collect();
            let interrupted = matches!(
                &outcome,
                Ok(outcome) if outcome.reason == dsh_protocol::TurnEndReason::Interrupted
            );
            if interrupted {
                for text in &late {
                    term.lines(Tone::Warn, &format!("not sent (the turn was interrupted): {text}"));
                }
            } else if !late.is_empty() {
                typed_ahead.push_front(Input::Line(late.join("\n")));
            }
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
        anyhow::Ok((stop, next))
    });
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

/// What follows the session loop.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Next {
    /// dsh exits.
    Exit,
    /// dsh starts again in another session (`/resume ID`; `/clear` and
    /// `/model NAME` act on the running session): the session ended (its
    /// end hooks ran) and dsh
    /// replaces itself with a fresh process for the next one, so no state
    /// of the old session (hooks, trust answers, runtime) leaks into it.
    Restart(Restart),
}

/// How dsh is started again.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Restart {
    /// `--resume ID`, or a new session.
    resume: Option<String>,
    /// `--model NAME` replacing the current one.
    model: Option<String>,
}

/// The arguments this dsh was started with, without the session choice
/// (`-r`/`--resume`, `-c`/`--continue`) and, when `drop_model`, `--model`.
fn restart_args(args: &[std::ffi::OsString], drop_model: bool) -> Vec<std::ffi::OsString> {
    let mut kept = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let text = arg.to_string_lossy();
        let takes_value = text == "-r" || text == "--resume" || (drop_model && text == "--model");
        if takes_value {
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
struct SlashContext<'a> {
    term: &'a Terminal,
    status: &'a StatusInfo,
    /// What the session resolved (its hook sources carry plugins and MCP tags).
    spec: &'a dsh_core::SessionSpec,
    /// Bound on model requests per turn.
    max_steps: u64,
    cwd: &'a std::path::Path,
    home: &'a std::path::Path,
    log_path: Option<&'a std::path::Path>,
    /// The hook tooling `/hooks` and `/permissions` run.
    hooks: HookActions,
}

/// Runs a slash command; `Some` when it ends this session.
fn run_slash(context: &SlashContext<'_>, command: SlashCommand) -> anyhow::Result<Option<Next>> {
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
        | SlashCommand::Mcp => {}
        SlashCommand::Resume(Some(id)) => {
            return Ok(Some(Next::Restart(Restart {
                resume: Some(id),
                model: None,
            })));
        }
        SlashCommand::Resume(None) => {
            let here = context.cwd.display().to_string();
            let sessions: Vec<_> = sessions::list(context.home)?
                .into_iter()
                .filter(|session| session.cwd == here && session.id != context.status.session_id)
                .take(10)
                .collect();
            if sessions.is_empty() {
                term.lines(Tone::Plain, "no other session in this directory");
            }
            for session in sessions {
                let prompt = session.first_prompt.as_deref().unwrap_or("");
                term.lines(
                    Tone::Plain,
                    &format!(
                        "{}  {}  {} turns  {}",
                        &session.id[..session.id.len().min(8)],
                        session.updated,
                        session.turns,
                        crate::terminal::truncate(prompt.lines().next().unwrap_or(""), 60)
                    ),
                );
            }
            term.lines(Tone::Dim, "/resume ID switches to one");
        }
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
