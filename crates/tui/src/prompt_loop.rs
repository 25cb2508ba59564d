//! The interactive session's runtime side: signals, the input reader, the
//! agent and its observers, and the prompt loop (wait at the prompt, run a
//! slash command or a turn, repeat). `interactive.rs` prepares what this
//! needs and runs it on a runtime of its own.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use dsh_agent::commands::PromptCommand;
use dsh_agent::{Observers, QueuedPrompt};
use dsh_core::AgentOptions;
use dsh_permissions::{Mode, PermissionsPlugin};
use dsh_protocol::TokenUsage;
use dsh_seams::{Notification, NotificationKind, SessionEndReason};
use dsh_stdio::signals::{Signals, Stop};
use tokio::sync::mpsc;

use crate::input::{Input, SharedInput, TurnSlot, next_input};
use crate::restart::{Next, cleared, resume, start_source};
use crate::slash_commands::{HookActions, SlashContext, run_slash};
use crate::terminal::{SPINNER_TICK, Terminal, Tone};
use crate::tui::editor::{Editor, EditorConfig, EditorEvent, InputMode};
use crate::tui::slash::{self, Parsed, SlashCommand};
use crate::tui::status::StatusInfo;
use crate::tui::usage::Meter;
use dsh_seams::CancellationToken;
use dsh_stdio::stdio::ExitStatus;

/// The running session, as the prompt loop drives it.
struct Session {
    /// The agent, its hook runner and MCP servers (dsh-core's owner).
    core: dsh_core::Session,
    term: Arc<Terminal>,
    status: StatusInfo,
    /// Tokens and cost, fed by the agent's events.
    meter: Arc<Mutex<Meter>>,
    /// The usage of the latest reply, for the context figure.
    usage: Arc<Mutex<Option<TokenUsage>>>,
    stopper: Stopper,
    input: SharedInput,
    gate: Arc<crate::steer::InputGate>,
    turn: TurnSlot,
    ctrl_c_at_prompt: mpsc::UnboundedReceiver<()>,
    stop_rx: mpsc::UnboundedReceiver<Stop>,
    editor: Editor,
    input_mode: InputMode,
    stdin_tty: bool,
    /// Input typed during a turn that waits for the prompt after it.
    typed_ahead: VecDeque<Input>,
    cwd: PathBuf,
    home: PathBuf,
    log_path: Option<PathBuf>,
    spec: dsh_core::SessionSpec,
    max_steps: u64,
    hooks: HookActions,
    permissions: Arc<PermissionsPlugin>,
    /// `bypassPermissions` was the mode at start: Shift-Tab may return to it.
    bypass_allowed: bool,
    idle_after: std::time::Duration,
    /// Turns in the session's log (resumed ones included).
    turns: u64,
}

/// What one prompt line led to.
enum Step {
    /// Back to the prompt.
    Continue,
    /// The session loop ends.
    End(Next),
}

/// What a slash command led to.
enum Handled {
    Done,
    End(Next),
    /// A turn to run with this text (`/compact`).
    Send(String),
    /// A turn nobody typed (a hook's message after `/add-dir`).
    Notify(String),
}

/// What the session loop takes from the command line.
pub(crate) struct LoopOptions {
    /// `--queue-mode`.
    pub queue_mode: Option<crate::steer::QueueModeFlag>,
    /// `dsh "PROMPT"`: the first prompt, handled as if typed.
    pub first_prompt: Option<String>,
    /// What `/hooks` and `/permissions` run.
    pub hooks: HookActions,
    /// `--init-only`: end after the start-up hooks.
    pub init_only: bool,
}

/// Runs the session: start-up hooks, the prompt loop, the end hooks.
pub(crate) async fn drive(
    args: LoopOptions,
    prepared: Prepared,
) -> anyhow::Result<(Option<Stop>, Next)> {
    let Prepared {
        home,
        config,
        spec,
        workspace,
        opened,
        model,
        max_steps,
        term,
        stdin_tty,
        input_mode,
        editor_config,
        status,
        log_path,
        new_session: _,
        worktree,
    } = prepared;
    // Installed before anything runs, so no signal kills dsh outright;
    // they are read once the agent exists (until then they wait).
    let (sigint, terminations) = Signals::install()?.split();
    let (ctrl_c_tx, ctrl_c_at_prompt) = mpsc::unbounded_channel::<()>();
    let (reader, editor) = spawn_reader(input_mode, editor_config, ctrl_c_tx.clone())?;
    let input: SharedInput = Arc::new(tokio::sync::Mutex::new(reader));
    let turn: TurnSlot = Arc::new(Mutex::new(None));
    spawn_spinner(&term);

    let resumed_turns = opened.log().last_turn();
    let session_id = opened.session_id().to_owned();
    let cwd = opened.cwd().to_owned();
    let source = start_source(opened.source());
    let notices = opened.notices().to_vec();
    // MCP servers that started are news, not a warning; hook notices,
    // discovery notices and failed servers are warnings.
    let settled_servers: Vec<String> = opened
        .mcp()
        .notices()
        .iter()
        .filter(|line| !opened.problems().contains(line))
        .cloned()
        .collect();
    let runner = opened.runner().clone();
    let permissions = Arc::clone(opened.permissions());
    let meter = Arc::new(Mutex::new(status.meter));
    let usage: Arc<Mutex<Option<TokenUsage>>> = Arc::new(Mutex::new(None));
    let gate = Arc::new(crate::steer::InputGate::default());
    let approval = Arc::new(crate::approval_prompt::TerminalApproval {
        term: Arc::clone(&term),
        input: Arc::clone(&input),
        gate: Arc::clone(&gate),
        turn: Arc::clone(&turn),
        permissions: Some(Arc::clone(opened.permissions())),
        project: cwd.clone(),
        workspace,
    });
    let model_name = model.name();
    let mut core = dsh_core::Session::from_assembled(
        opened,
        AgentOptions {
            model,
            interactive: true,
            max_steps,
            observers: observers(&term, &meter, &usage),
            approval: Some(approval),
        },
    )?;
    let agent = core.agent();
    // config.toml's `system_prompt` / `append_system_prompt`.
    config.apply_system_prompt(agent, None, None)?;
    let steering_mode = config.queue_mode(args.queue_mode.map(Into::into))?;
    agent.set_queue_modes(dsh_agent::QueueModes {
        steering: steering_mode,
        follow_up: steering_mode,
    });

    let stopper = Stopper {
        stopped: Arc::new(Mutex::new(None)),
        session_cancel: agent.session_cancel(),
        runner: runner.clone(),
        term: Arc::clone(&term),
    };
    let (stop_tx, stop_rx) = mpsc::unbounded_channel::<Stop>();
    // Ctrl-C while the session-start hooks run ends the session like
    // SIGTERM does; afterwards it interrupts the turn or warns at the prompt.
    let starting = Arc::new(std::sync::atomic::AtomicBool::new(true));
    spawn_signal_readers(
        sigint,
        terminations,
        SignalTargets {
            turn: Arc::clone(&turn),
            term: Arc::clone(&term),
            starting: Arc::clone(&starting),
            stopper: stopper.clone(),
            stop_tx,
            ctrl_c_tx,
        },
    );

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
    // The source a restart (`/clear`) names, else the log's.
    core.agent().start(source).await;
    starting.store(false, std::sync::atomic::Ordering::SeqCst);

    let init_only = args.init_only;
    let mut typed_ahead = VecDeque::new();
    if let Some(first) = args.first_prompt.clone() {
        typed_ahead.push_back(Input::Line(first));
    }
    let mut session = Session {
        core,
        term: Arc::clone(&term),
        status,
        meter,
        usage,
        stopper: stopper.clone(),
        input,
        gate,
        turn,
        ctrl_c_at_prompt,
        stop_rx,
        editor,
        input_mode,
        stdin_tty,
        typed_ahead,
        cwd,
        home,
        log_path,
        bypass_allowed: spec.mode.mode() == Mode::BypassPermissions,
        spec,
        max_steps,
        hooks: args.hooks,
        permissions,
        idle_after: idle_notification_after(),
        turns: resumed_turns,
    };
    // `--init-only`: the Setup and session-start hooks were the whole session.
    let next = if init_only {
        Next::Exit
    } else {
        session.prompt_loop().await?
    };
    let stop = stopper.stopped();
    if let Some(stop) = stop {
        term.lines(Tone::Warn, &format!("{}: ending the session", stop.name()));
    }
    let reason = match (stop, &next) {
        (Some(_), _) => SessionEndReason::Other,
        (None, Next::Restart(restart)) if restart.clear => SessionEndReason::Clear,
        (None, _) => SessionEndReason::Exit,
    };
    let left =
        crate::worktree_dirs::leave_worktree(session.core.agent_ref(), worktree.as_ref(), reason);
    let left = left.await;
    // Session-end hooks run even after a signal, inside their budget; MCP
    // closes and detached (async) hooks do not outlive the session.
    session.core.shutdown(reason).await;
    if let Some(left) = left {
        term.lines(Tone::Plain, &left);
    }
    if next == Next::Exit && session.turns > 0 {
        term.lines(
            Tone::Dim,
            &format!("resume this session with `dsh -r {session_id}`"),
        );
    }
    Ok((stop, next))
}

/// Redraws the spinner while dsh runs.
fn spawn_spinner(term: &Arc<Terminal>) {
    let term = Arc::clone(term);
    tokio::spawn(async move {
        let mut interval = tokio::time::interval(SPINNER_TICK);
        loop {
            interval.tick().await;
            term.tick();
        }
    });
}

/// What the agent's callbacks feed: the terminal, the usage meter and the
/// latest reply's usage.
fn observers(
    term: &Arc<Terminal>,
    meter: &Arc<Mutex<Meter>>,
    usage: &Arc<Mutex<Option<TokenUsage>>>,
) -> Observers {
    let (text, event, notice) = (Arc::clone(term), Arc::clone(term), Arc::clone(term));
    let (meter, usage) = (Arc::clone(meter), Arc::clone(usage));
    Observers {
        on_event: Some(Arc::new(move |e| {
            meter
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .observe(e);
            if let dsh_protocol::EventBody::AssistantMessage(
                dsh_protocol::AssistantMessageEvent {
                    usage: Some(reported),
                    ..
                },
            ) = &e.body
            {
                *usage.lock().unwrap_or_else(PoisonError::into_inner) = Some(*reported);
            }
            event.event(e)
        })),
        on_notice: Some(Arc::new(move |n| notice.notice(n))),
        on_text: Some(Arc::new(move |t| text.text(t))),
    }
}

/// What the signal readers act on.
struct SignalTargets {
    turn: TurnSlot,
    term: Arc<Terminal>,
    starting: Arc<std::sync::atomic::AtomicBool>,
    stopper: Stopper,
    stop_tx: mpsc::UnboundedSender<Stop>,
    ctrl_c_tx: mpsc::UnboundedSender<()>,
}

/// SIGINT interrupts the turn (or warns at the prompt; during start-up it
/// ends the session); SIGTERM and SIGHUP end the session.
fn spawn_signal_readers(
    mut sigint: tokio::signal::unix::Signal,
    mut terminations: dsh_stdio::signals::Terminations,
    targets: SignalTargets,
) {
    let SignalTargets {
        turn,
        term,
        starting,
        stopper,
        stop_tx,
        ctrl_c_tx,
    } = targets;
    {
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
    tokio::spawn(async move {
        loop {
            let stop = terminations.recv().await;
            stopper.stop(stop);
            let _ = stop_tx.send(stop);
        }
    });
}

impl Session {
    /// Prompts until the session ends; what follows it.
    async fn prompt_loop(&mut self) -> anyhow::Result<Next> {
        let mut armed = false;
        while self.stopper.stopped().is_none() {
            self.show_status();
            let line = match self.wait_for_input().await {
                None if armed => {
                    self.term.lines(Tone::Plain, "");
                    break;
                }
                None => {
                    armed = true;
                    self.term
                        .lines(Tone::Dim, "\n(Ctrl-C again or Ctrl-D to exit)");
                    continue;
                }
                Some(Input::Eof) => {
                    if self.stdin_tty {
                        self.term.lines(Tone::Plain, "");
                    }
                    break;
                }
                Some(Input::Line(line)) => line,
                Some(Input::Stopped) => break,
            };
            armed = false;
            match self.handle_line(line).await? {
                Step::Continue => {}
                Step::End(next) => return Ok(next),
            }
        }
        Ok(Next::Exit)
    }

    /// The status line before the prompt (on a terminal).
    fn show_status(&mut self) {
        if let Some(reported) = self
            .usage
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            self.status.record_usage(&reported);
        }
        self.status.meter = *self.meter.lock().unwrap_or_else(PoisonError::into_inner);
        self.status.mode = self.permissions.mode().to_string();
        if self.stdin_tty {
            let width = crate::tui::render::terminal_width();
            self.term.lines(
                Tone::Dim,
                &crate::terminal::truncate(&self.status.line(), width),
            );
        }
    }

    /// The next input at the prompt; `None` for a Ctrl-C there. Waiting a
    /// minute fires the notification seam once (Claude Code's
    /// `idle_prompt` Notification hooks).
    async fn wait_for_input(&mut self) -> Option<Input> {
        if let Some(ahead) = self.typed_ahead.pop_front() {
            return Some(ahead);
        }
        match self.input_mode {
            InputMode::Editor => self.editor.request(),
            InputMode::Lines if self.stdin_tty => self.term.prompt("> "),
            InputMode::Lines => {}
        }
        let idle = tokio::time::sleep(self.idle_after);
        tokio::pin!(idle);
        let mut notified = false;
        loop {
            tokio::select! {
                input = next_input(&self.input) => return Some(input),
                Some(()) = self.ctrl_c_at_prompt.recv() => return None,
                Some(_) = self.stop_rx.recv() => return Some(Input::Stopped),
                () = &mut idle, if !notified => {
                    notified = true;
                    self.core.agent()
                        .notify(&Notification {
                            kind: NotificationKind::Idle,
                            message: "dsh is waiting for your input".to_owned(),
                        })
                        .await;
                }
            }
        }
    }

    /// A line typed at the prompt: a slash command, or a prompt for a turn.
    async fn handle_line(&mut self, line: String) -> anyhow::Result<Step> {
        let text = line.trim();
        if text.is_empty() {
            return Ok(Step::Continue);
        }
        // A custom command (`.claude/commands`, a skill, a Codex prompt)
        // is a turn the agent expands, not a terminal command.
        let custom = matches!(
            dsh_agent::commands::parse(text, &self.core.agent().project_context().commands),
            Some(PromptCommand::Custom(_))
        );
        let parsed = if custom {
            Parsed::Prompt
        } else {
            slash::parse(text)
        };
        let prompt =
            match parsed {
                // `@path` mentions: hooks see the prompt as typed, the model
                // gets the files as context after the prompt.
                Parsed::Prompt => {
                    self.core.agent().attach_to_next_prompt(
                        dsh_agent::mentions::mention_attachments(&line, &self.cwd),
                    );
                    line
                }
                Parsed::Command(command) => match self.command(command).await? {
                    Handled::Done => return Ok(Step::Continue),
                    Handled::End(next) => return Ok(Step::End(next)),
                    Handled::Send(text) => text,
                    Handled::Notify(text) => {
                        return self.run_turn(text, dsh_seams::NOTIFICATION_SOURCE).await;
                    }
                },
                Parsed::Unknown { name, suggestion } => {
                    let hint = suggestion
                        .map(|s| format!(" — did you mean {s}?"))
                        .unwrap_or_else(|| " — /help lists the commands".to_owned());
                    self.term
                        .lines(Tone::Warn, &format!("unknown command {name}{hint}"));
                    return Ok(Step::Continue);
                }
                Parsed::Usage(info) => {
                    self.term.lines(
                        Tone::Warn,
                        &format!("usage: {} {} — {}", info.name, info.usage, info.about),
                    );
                    return Ok(Step::Continue);
                }
            };
        self.run_turn(prompt, "user").await
    }

    /// Ends the session after the log failed.
    async fn fail(&mut self, error: dsh_agent::AgentError) -> anyhow::Error {
        self.core.shutdown(SessionEndReason::Exit).await;
        anyhow::Error::new(error).context("the session log failed")
    }

    /// Runs a slash command.
    async fn command(&mut self, command: SlashCommand) -> anyhow::Result<Handled> {
        match command {
            // `/clear` and `/model NAME` act on the running session: durable
            // events with their hooks (SessionEnd/SessionStart `clear`).
            // `/clear` ends this session (SessionEnd `clear`) and starts a
            // new one (new id, empty context, usage from zero; SessionStart
            // `clear`) with the model in use.
            SlashCommand::Clear => {
                self.term.lines(
                    Tone::Dim,
                    &format!(
                        "context cleared: starting a new session (this one resumes with `dsh -r {}`)",
                        self.status.session_id
                    ),
                );
                return Ok(Handled::End(cleared(self.core.agent().current_model())));
            }
            SlashCommand::Model(Some(name)) => {
                self.status.model = name.clone();
                if let Err(error) = self
                    .core
                    .agent()
                    .run_builtin(PromptCommand::Model(name))
                    .await
                {
                    return Err(self.fail(error).await);
                }
            }
            // `/compact` runs as a turn of its own (no mentions to expand).
            SlashCommand::Compact(instructions) => {
                return Ok(Handled::Send(match instructions {
                    Some(instructions) => format!("/compact {instructions}"),
                    None => "/compact".to_owned(),
                }));
            }
            SlashCommand::Mcp => {
                let lines = self.core.mcp().notices();
                if lines.is_empty() {
                    self.term.lines(
                        Tone::Plain,
                        "no MCP servers (`dsh mcp list` shows where dsh looks)",
                    );
                }
                for line in lines {
                    self.term.lines(Tone::Plain, line);
                }
            }
            SlashCommand::Cost => {
                let meter = *self.meter.lock().unwrap_or_else(PoisonError::into_inner);
                self.term
                    .lines(Tone::Plain, &meter.report(&self.status.model));
            }
            SlashCommand::Verbose => self.toggle_verbose(),
            SlashCommand::Mode(name) => self.switch_mode(name.as_deref()).await,
            SlashCommand::AddDir(path) => {
                let (term, agent, cwd) = (&self.term, self.core.agent_ref(), &self.cwd);
                let asked = crate::worktree_dirs::add_dir(
                    term,
                    agent,
                    &self.permissions,
                    cwd,
                    path.as_deref(),
                )
                .await;
                if let Some(text) = asked {
                    return Ok(Handled::Notify(text));
                }
            }
            SlashCommand::Resume(None) => {
                let picked = crate::picker::pick_in_session(
                    &self.term,
                    &self.input,
                    &self.home,
                    &self.cwd,
                    &self.status.session_id,
                )
                .await?;
                if let Some(id) = picked {
                    return Ok(Handled::End(resume(id)));
                }
            }
            other @ (SlashCommand::Help
            | SlashCommand::Status
            | SlashCommand::Hooks(_)
            | SlashCommand::Permissions
            | SlashCommand::Model(None)
            | SlashCommand::Resume(Some(_))
            | SlashCommand::Last
            | SlashCommand::Exit) => {
                let context = SlashContext {
                    term: &self.term,
                    status: &self.status,
                    spec: &self.spec,
                    max_steps: self.max_steps,
                    cwd: &self.cwd,
                    log_path: self.log_path.as_deref(),
                    hooks: self.hooks,
                };
                match run_slash(&context, other) {
                    Ok(Some(next)) => return Ok(Handled::End(next)),
                    Ok(None) => {}
                    Err(error) => self.term.lines(Tone::Bad, &format!("✗ {error:#}")),
                }
            }
        }
        Ok(Handled::Done)
    }

    /// Ctrl-O: shows every hook run and the context hooks add from now on
    /// (and the last notable outcome in full), or hides them again.
    fn toggle_verbose(&self) {
        let on = !self.term.verbose();
        self.term.set_verbose(on);
        if on {
            self.term.lines(
                Tone::Dim,
                "showing every hook run and hook context (Ctrl-O hides them again)",
            );
            if let Some(detail) = self.term.last_detail() {
                self.term.lines(Tone::Plain, &detail);
            }
        } else {
            self.term.lines(
                Tone::Dim,
                "hiding hook runs that changed nothing (Ctrl-O shows them)",
            );
        }
    }

    /// `/mode NAME` sets the permission mode; `/mode` (Shift-Tab) moves to
    /// the next one. Every plugin hears of it (a session `setMode`), so
    /// hooks are told the new mode too.
    async fn switch_mode(&self, name: Option<&str>) {
        let current = self.permissions.mode();
        let mode = match name {
            None => crate::tui::modes::next(current, self.bypass_allowed),
            Some(name) => match name.parse::<Mode>() {
                Ok(Mode::BypassPermissions) if !self.bypass_allowed => {
                    self.term.lines(
                        Tone::Warn,
                        "bypassPermissions is only on offer when dsh started in it \
                         (--dangerously-skip-permissions)",
                    );
                    return;
                }
                Ok(mode) => mode,
                Err(error) => {
                    self.term.lines(Tone::Warn, &error.to_string());
                    return;
                }
            },
        };
        self.core
            .agent_ref()
            .permissions_updated(&[dsh_protocol::PermissionUpdate::SetMode {
                mode: mode.to_string(),
                destination: dsh_protocol::UpdateDestination::Session,
            }])
            .await;
        self.permissions.set_mode(mode);
        self.term.lines(
            Tone::Accent,
            &format!(
                "permission mode: {mode} — {} (Shift-Tab cycles)",
                crate::tui::modes::about(mode)
            ),
        );
    }

    /// Runs one turn; lines typed meanwhile steer it.
    async fn run_turn(&mut self, line: String, source: &str) -> anyhow::Result<Step> {
        // A Ctrl-C that raced the end of the previous turn is stale.
        while self.ctrl_c_at_prompt.try_recv().is_ok() {}
        let token = self.core.agent().session_cancel().child_token();
        *self.turn.lock().unwrap_or_else(PoisonError::into_inner) = Some(token.clone());
        let steering = self.core.agent().steering_queue();
        let outcome = {
            let running = self.core.agent().run_turn(
                QueuedPrompt {
                    text: line,
                    source: source.to_owned(),
                },
                token,
            );
            tokio::pin!(running);
            // Reading stops at the end of input; what is left waits.
            // Piped input is a script, not a person typing along: its
            // lines stay one turn each.
            let mut reading = self.stdin_tty;
            loop {
                tokio::select! {
                    outcome = &mut running => break outcome,
                    typed = crate::steer::next_typed(&self.input, &self.gate), if reading => {
                        match crate::steer::classify(typed) {
                            crate::steer::Typed::Steer(text) => {
                                self.term.lines(Tone::Dim, &format!("⧗ queued for the running turn: {text}"));
                                steering.push(text, "user");
                            }
                            crate::steer::Typed::Later(later) => {
                                reading = !matches!(later, Input::Eof | Input::Stopped);
                                self.typed_ahead.push_back(later);
                            }
                            crate::steer::Typed::Ignore => {}
                        }
                    }
                }
            }
        };
        self.turns += 1;
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
                self.term.lines(
                    Tone::Warn,
                    &format!("not sent (the turn was interrupted): {text}"),
                );
            }
        } else if !late.is_empty() {
            self.typed_ahead.push_front(Input::Line(late.join("\n")));
        }
        *self.turn.lock().unwrap_or_else(PoisonError::into_inner) = None;
        match outcome {
            Ok(outcome) => self
                .term
                .turn_end(outcome.reason, outcome.message.as_deref()),
            Err(error) => return Err(self.fail(error).await),
        }
        // A native plugin's stop-after-step ended the session (seed 004).
        if let Some(why) = self.core.agent().session_end_requested() {
            self.term
                .lines(Tone::Warn, &format!("a plugin ended the session: {why}"));
            return Ok(Step::End(Next::Exit));
        }
        Ok(Step::Continue)
    }
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
    /// The session was created by this start (not resumed): a failed
    /// start-up does not keep it.
    pub new_session: bool,
    /// The worktree `--worktree` made for the session.
    pub worktree: Option<dsh_core::worktree::Worktree>,
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

/// Ends the session on SIGTERM, SIGHUP, or Ctrl-C during start-up: records
/// the first signal, cancels everything running (owners of hook and tool
/// processes kill their groups) and kills detached hooks. A second signal
/// exits at once.
#[derive(Clone)]
pub(crate) struct Stopper {
    pub stopped: Arc<Mutex<Option<Stop>>>,
    pub session_cancel: CancellationToken,
    pub runner: dsh_core::HookRunner,
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
