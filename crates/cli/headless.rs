//! `dsh -p [PROMPT]`: one headless turn, Claude Code's print mode.
//!
//! The prompt is the positional argument, or standard input when there is
//! none (`-` also reads stdin). It runs as one turn of a new session (or of
//! the session named by `--resume`/`--continue`, or a fork of it with
//! `--fork-session`), stored like any other under `$DSH_HOME/sessions/`.
//! stdout carries what `--output-format` asks for, in Claude Code's shapes
//! (dsh-print's translator): the final text, one `result` object, or the
//! `stream-json` messages; notices, warnings and errors go to stderr. The
//! model and the messages see Claude Code's tool names (`Bash`, `Read`, …).
//!
//! Approvals: nobody can answer an `ask` here, so by default it becomes a
//! denial (the registry records disposition `no_approval_service`, the
//! model is told the call needed approval, and the result lists it in
//! `permission_denials`). `--allow-ask` answers every `ask` with "allow
//! once" instead, and says so on stderr. A `deny` from a hook stays a
//! denial either way.
//!
//! Exit status: 0 when the result is not an error; 1 when it is (API
//! error, max turns, interrupted, rejected, stopped), with the reason on
//! stderr; 2 when the session could not start (bad flags, configuration,
//! missing API key, unreadable log).
//!
//! Signals: Ctrl-C (SIGINT) cancels the turn's token; the turn ends
//! `interrupted` (tool and hook processes are killed by their owners) and
//! the session-end seam still runs.

use crate::stdio::{ExitStatus, errln};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::Context as _;
use async_trait::async_trait;
use dsh_agent::Observers;
use dsh_print::{Message, OutputFormat, PrintFlags, ToolNaming, Translator};
use dsh_seams::{ApprovalResponse, ToolExecution};
use dsh_tools::ApprovalService;

use crate::sessions::{self, Pick};
use crate::signals::Stop;
use dsh_core::AgentOptions;
use dsh_tui::terminal::summarize_arguments;

/// The `-p` options.
#[derive(Debug, Clone)]
pub struct HeadlessArgs {
    /// The positional prompt (`None` or `-`: read standard input).
    pub prompt: Option<String>,
    /// Claude Code's print-mode flags.
    pub print: PrintFlags,
    /// Answer `ask` with allow-once instead of denying.
    pub allow_ask: bool,
    /// Refuse untrusted project hooks (`--strict-hooks` or `DSH_STRICT_HOOKS`).
    pub strict_hooks: bool,
    /// Which session.
    pub pick: Pick,
    /// `--wait`: wait for another writer of the session instead of failing.
    pub wait: dsh_session::LockWait,
    /// The session flags.
    pub session: dsh_core::SessionFlags,
}

/// Answers every `ask` with allow-once (`--allow-ask`), telling stderr.
pub struct AllowAsk;

#[async_trait]
impl ApprovalService for AllowAsk {
    async fn request(&self, exec: &ToolExecution, reason: Option<&str>) -> ApprovalResponse {
        let reason = reason.map(|r| format!(" ({r})")).unwrap_or_default();
        errln!(
            "dsh: --allow-ask: allowing {} {}{reason}",
            exec.tool,
            summarize_arguments(&exec.tool, &exec.arguments)
        );
        ApprovalResponse::AllowedOnce
    }
}

/// The approval service of a headless run.
pub fn approval(allow_ask: bool) -> Option<Arc<dyn ApprovalService>> {
    allow_ask.then(|| Arc::new(AllowAsk) as Arc<dyn ApprovalService>)
}

/// `-p` runs one turn, so a built-in command (`/clear`, `/model`) or an
/// unknown `/name` cannot be its prompt; a custom command can (it expands
/// into the turn's prompt), and so can `/compact [instructions]` on a resumed
/// session (`--resume`, `--continue`): it compacts that session as the
/// terminal's `/compact` does, with the same hooks and events. Checked before
/// a session opens.
fn refuse_session_command(prompt: &str, resuming: bool) -> anyhow::Result<()> {
    use dsh_agent::commands::{CommandCatalog, PromptCommand, parse};
    let roots = dsh_agent::instructions::ContextRoots::from_env(crate::wiring::current_dir()?);
    match parse(prompt, &CommandCatalog::discover(&roots)) {
        None | Some(PromptCommand::Custom(_)) => Ok(()),
        Some(PromptCommand::Invalid(message)) => anyhow::bail!("{message}"),
        Some(PromptCommand::Model(_)) => {
            anyhow::bail!("/model changes a session's model; with -p use --model NAME")
        }
        Some(PromptCommand::Compact(_)) if resuming => Ok(()),
        Some(PromptCommand::Compact(_)) => anyhow::bail!(
            "/compact compacts an existing session: with -p name it with --resume ID or --continue"
        ),
        Some(PromptCommand::Clear) => anyhow::bail!(
            "{} acts on a session's history, not a turn: it cannot be a -p prompt",
            prompt.split_whitespace().next().unwrap_or_default()
        ),
    }
}

/// The prompt: the positional argument, else standard input.
fn read_prompt(prompt: Option<&str>) -> anyhow::Result<String> {
    match prompt {
        Some(prompt) if prompt != "-" => Ok(prompt.to_owned()),
        _ => {
            if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                anyhow::bail!(
                    "Input must be provided either through stdin or as a prompt argument when using --print"
                );
            }
            let text = std::io::read_to_string(std::io::stdin())
                .context("cannot read the prompt from stdin")?;
            if text.trim().is_empty() {
                anyhow::bail!(
                    "Input must be provided either through stdin or as a prompt argument when using --print"
                );
            }
            // `echo hi | dsh -p`: the prompt is `hi`, not `hi\n`.
            Ok(text.trim_end_matches(['\n', '\r']).to_owned())
        }
    }
}

/// The run's result message: the last one the translator made.
fn last_result(messages: &[Message]) -> Option<Box<dsh_print::ResultMessage>> {
    messages.iter().rev().find_map(|message| match message {
        Message::Result(result) => Some(result.clone()),
        Message::System(_) | Message::Assistant(_) | Message::User(_) | Message::StreamEvent(_) => {
            None
        }
    })
}

/// `--worktree`: the session moves into the worktree (a `-p` run keeps
/// it). `None` when it could not be made; the reason is on stderr.
fn enter_worktree(
    spec: &dsh_core::SessionSpec,
    name: &str,
    target: &dsh_core::LogTarget,
) -> anyhow::Result<Option<dsh_core::SessionSpec>> {
    let id = target.new_session_id().map(str::to_owned);
    let id = id.ok_or_else(|| anyhow::anyhow!("--worktree starts a new session"))?;
    match dsh_core::worktree::enter(spec, name, &id)? {
        Ok((moved, _)) => Ok(Some(moved)),
        Err(failed) => {
            errln!("{failed}");
            Ok(None)
        }
    }
}

/// Where the session's log goes: the picked session, a fork of it, or a new
/// one (with `--session-id`'s id when given).
fn log_target(
    home: &std::path::Path,
    existing: Option<&dsh_core::sessions::SessionSummary>,
    print: &PrintFlags,
    wait: dsh_session::LockWait,
) -> anyhow::Result<dsh_core::LogTarget> {
    let id = print.session_id.clone();
    match (existing, print.fork_session) {
        (Some(old), true) => {
            let id = id.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
            let path = dsh_core::sessions::fork(home, old, &id)?;
            Ok(dsh_core::LogTarget::Reopen { path, wait })
        }
        (None, _) => match id {
            Some(id) => {
                let dir = sessions::sessions_dir(home);
                if dir.join(format!("{id}.jsonl")).exists() {
                    anyhow::bail!("Session ID {id} is already in use.");
                }
                Ok(dsh_core::LogTarget::New { id, dir, wait })
            }
            None => Ok(sessions::log_target(home, None, wait)),
        },
        (Some(_), false) => Ok(sessions::log_target(home, existing, wait)),
    }
}

/// `--verbose` in text mode: each tool call and result, one line on stderr.
fn verbose_line(message: &Message) {
    match message {
        Message::Assistant(line) => {
            for block in &line.message.content {
                if let dsh_print::lines::ContentBlock::ToolUse { name, input, .. } = block {
                    errln!("dsh: tool {name} {input}");
                }
            }
        }
        Message::User(line) => {
            for block in &line.message.content {
                errln!(
                    "dsh: result{} {}",
                    if block.is_error { " (error)" } else { "" },
                    block.content.lines().next().unwrap_or("")
                );
            }
        }
        Message::System(_) | Message::StreamEvent(_) | Message::Result(_) => {}
    }
}

/// The `system/init` facts of a session: its directory, servers, model,
/// permission mode, commands and extra directories.
fn init_info(
    opened: &dsh_core::Assembled,
    model_name: String,
    session: &dsh_core::SessionFlags,
) -> dsh_print::InitInfo {
    dsh_print::InitInfo {
        cwd: opened.cwd().to_owned(),
        mcp_servers: opened
            .mcp()
            .reports()
            .iter()
            .map(|report| {
                let status = match report.status {
                    dsh_core::mcp::ServerStatus::Connected => "connected",
                    dsh_core::mcp::ServerStatus::Failed { .. } => "failed",
                    dsh_core::mcp::ServerStatus::Closed => "closed",
                };
                (report.name.clone(), status.to_owned())
            })
            .collect(),
        model: model_name,
        permission_mode: opened.permission_mode().to_string(),
        slash_commands: opened
            .commands()
            .iter()
            .map(|command| command.name.clone())
            .collect(),
        additional_directories: session.permissions.add_dirs.clone(),
        ..dsh_print::InitInfo::default()
    }
}

/// What `--output-format` prints at the end: the result's text, the
/// result object, or every message (`json --verbose`); `stream-json`
/// printed them as they came.
fn print_result(
    format: OutputFormat,
    verbose: bool,
    messages: &[Message],
    result: &dsh_print::ResultMessage,
) -> anyhow::Result<()> {
    match format {
        OutputFormat::Text => {
            if !result.is_error
                && let Some(text) = &result.result
            {
                crate::wiring::stdout_line(text.trim_end_matches('\n'));
            }
        }
        OutputFormat::Json if verbose => {
            crate::wiring::stdout_line(&serde_json::to_string(messages)?);
        }
        OutputFormat::Json => {
            let message = Message::Result(Box::new(result.clone()));
            crate::wiring::stdout_line(&message.to_line());
        }
        OutputFormat::StreamJson => {}
    }
    Ok(())
}

/// Runs `dsh -p`.
pub fn run(args: HeadlessArgs) -> anyhow::Result<ExitStatus> {
    let resuming = !matches!(args.pick, Pick::New);
    if let Err(refused) = args.print.check(resuming) {
        // Claude Code's words and exit status for a flag combination it refuses.
        errln!("Error: {refused}");
        return Ok(ExitStatus::Failure);
    }
    let prompt = read_prompt(args.prompt.as_deref())?;
    let env = dsh_core::Env::from_process();
    let home = env.dsh_home()?;
    let config = dsh_core::DshConfig::load(&home)?;
    let (cwd, existing) = sessions::pick(&home, &args.pick, &crate::wiring::current_dir()?)?;
    refuse_session_command(&prompt, existing.is_some())?;
    let mut spec = dsh_core::SessionSpec::resolve(dsh_core::Inputs {
        env: &env,
        config: &config,
        flags: &args.session,
        cwd: &cwd,
        policy: dsh_core::TrustPolicy::Headless {
            strict: args.strict_hooks || env.strict_hooks(),
        },
    })?;
    let meter = dsh_print::Meter::new();
    let naming = ToolNaming::ClaudeCode;
    let model = dsh_print::PrintModel::wrap(
        spec.model()?,
        naming,
        meter.clone(),
        args.print.fallback_model.clone(),
    );
    let model_name = model.name();
    let target = log_target(&home, existing.as_ref(), &args.print, args.wait)?;
    if let Some(name) = &args.session.worktree {
        match enter_worktree(&spec, name, &target)? {
            Some(moved) => spec = moved,
            None => return Ok(ExitStatus::Failure),
        }
    }
    spec.decide_headless(&mut std::io::stderr())?;
    let mut opened = dsh_core::assemble(spec, target)?;
    opened.offer_ask_user(false);
    sessions::report_torn(&opened);
    for notice in opened.notices() {
        errln!("dsh: {notice}");
    }
    let session_id = opened.session_id().to_owned();
    // A new session that never reaches the model is not kept.
    let new_log = match existing {
        None => opened.log().path().map(std::path::Path::to_path_buf),
        Some(_) => None,
    };
    // `@path` mentions, as in the terminal: hooks see the prompt as typed.
    let attachments = dsh_agent::mentions::mention_attachments(&prompt, opened.cwd());
    let init = init_info(&opened, model_name, &args.session);
    let max_steps = args
        .session
        .max_steps
        .unwrap_or(dsh_agent::DEFAULT_MAX_STEPS);
    let format = args.print.output_format;
    let verbose = args.print.verbose;
    let translator = Arc::new(Mutex::new(Translator::new(
        session_id.clone(),
        init,
        dsh_print::Options {
            partial_messages: args.print.include_partial_messages,
            naming,
        },
        meter,
        Some(max_steps),
    )));
    // Every message of the run, for `json --verbose`, and the last result.
    let collected: Arc<Mutex<Vec<Message>>> = Arc::new(Mutex::new(Vec::new()));
    let emit = {
        let collected = Arc::clone(&collected);
        Arc::new(move |messages: Vec<Message>| {
            for message in messages {
                match format {
                    OutputFormat::StreamJson => crate::wiring::stdout_line(&message.to_line()),
                    OutputFormat::Text if verbose => verbose_line(&message),
                    OutputFormat::Text | OutputFormat::Json => {}
                }
                collected
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(message);
            }
        })
    };
    let observers = Observers {
        on_event: Some({
            let translator = Arc::clone(&translator);
            let emit = Arc::clone(&emit);
            Arc::new(move |event: &dsh_protocol::Event| {
                let messages = translator
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .event(event);
                emit(messages);
            })
        }),
        on_notice: Some(crate::wiring::stderr_notices()),
        on_text: args.print.include_partial_messages.then(|| {
            let translator = Arc::clone(&translator);
            let emit = Arc::clone(&emit);
            Arc::new(move |delta: &str| {
                let messages = translator
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .text_delta(delta);
                emit(messages);
            }) as dsh_agent::TextCallback
        }),
    };
    let mut session = dsh_core::Session::from_assembled(
        opened,
        AgentOptions {
            model,
            interactive: false,
            max_steps,
            observers,
            approval: approval(args.allow_ask),
        },
    )?;
    // The flags, else config.toml's `system_prompt` / `append_system_prompt`.
    config.apply_system_prompt(
        session.agent(),
        args.print.system_prompt.as_deref(),
        args.print.append_system_prompt.as_deref(),
    )?;
    {
        let mut translator = translator.lock().unwrap_or_else(PoisonError::into_inner);
        let tools = session.agent().tool_names();
        translator.set_tools(tools);
    }

    let dsh_core::TurnRun { outcome, stop } = dsh_core::run_one_turn(
        &mut session,
        dsh_core::OneTurn {
            prompt,
            attachments,
            init_only: args.session.init_only,
        },
    )?;
    let Some(outcome) = outcome else {
        if args.session.init_only && stop.is_none() {
            // `--init-only`: the Setup and SessionStart hooks ran; nothing else to do.
            return Ok(ExitStatus::Success);
        }
        let stop = stop.unwrap_or(Stop::Interrupt);
        errln!(
            "dsh: {} before the turn started (session {session_id})",
            stop.name()
        );
        return Ok(ExitStatus::from(stop));
    };
    let messages = std::mem::take(&mut *collected.lock().unwrap_or_else(PoisonError::into_inner));
    let translator = translator.lock().unwrap_or_else(PoisonError::into_inner);
    for model in translator.unpriced_models() {
        errln!("dsh: note: no list price is known for model `{model}`; its cost is reported as 0");
    }
    let Some(result) = last_result(&messages) else {
        anyhow::bail!(
            "turn {} ended without a result (session {session_id})",
            outcome.turn
        );
    };
    print_result(format, verbose, &messages, &result)?;
    if let Some(stop) = stop {
        errln!(
            "dsh: {}: turn {} ended {} (session {session_id})",
            stop.name(),
            outcome.turn,
            outcome.reason.as_str()
        );
        Ok(ExitStatus::from(stop))
    } else if !result.is_error {
        Ok(ExitStatus::Success)
    } else {
        let message = outcome
            .message
            .as_deref()
            .map(|m| format!(": {m}"))
            .unwrap_or_default();
        drop(session);
        let kept = match &new_log {
            Some(path) if dsh_core::sessions::forget_failed_start(path) => {
                "nothing reached the model; no session was kept".to_owned()
            }
            Some(_) | None => format!("session {session_id}"),
        };
        errln!(
            "dsh: turn {} ended {}{message} ({kept})",
            outcome.turn,
            outcome.reason.as_str()
        );
        Ok(ExitStatus::Failure)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use dsh_agent::{Fixture, ScriptedModel};
    use dsh_protocol::{EventBody, ToolResultEvent};
    use dsh_seams::{Plugin, PreToolDecision, PreToolOutcome, PreToolVerdict, SeamContext};
    use serde_json::json;

    /// Asks about every call, as a PreToolUse hook answering `ask` would.
    struct AlwaysAsk;

    #[async_trait]
    impl Plugin for AlwaysAsk {
        fn name(&self) -> &str {
            "always-ask"
        }
        async fn pre_execute(
            &self,
            _ctx: &SeamContext,
            _exec: &ToolExecution,
            _review: Option<&PreToolVerdict>,
        ) -> PreToolOutcome {
            PreToolOutcome {
                decision: PreToolDecision::ask(Some("the test wants a person to look".to_owned())),
                contexts: Vec::new(),
            }
        }
    }

    async fn run_with(allow_ask: bool) -> Vec<dsh_protocol::Event> {
        let dir = tempfile::tempdir().unwrap();
        let fixture: Fixture = serde_json::from_value(json!({
            "prompts": ["go"],
            "model": [
                {"tool_calls": [{"name": "bash", "arguments": {"command": "echo ran-it"}}]},
                {"text": "done"}
            ]
        }))
        .unwrap();
        let permissions = Arc::new(dsh_permissions::PermissionsPlugin::new(
            dsh_permissions::Permissions::new(
                dsh_permissions::Mode::Default,
                dsh_permissions::PathContext {
                    cwd: dir.path().to_owned(),
                    home: None,
                    base: None,
                },
            ),
            dsh_permissions::PromptSurface::Headless,
        ));
        let mut opened = dsh_core::Assembled::bare(
            "s",
            dir.path(),
            vec![Arc::new(AlwaysAsk) as Arc<dyn Plugin>],
            permissions,
        )
        .unwrap();
        opened.offer_ask_user(false);
        let mut agent = opened
            .agent(AgentOptions {
                model: Arc::new(ScriptedModel::new("t".to_owned(), fixture.script())),
                interactive: false,
                max_steps: 5,
                observers: Observers::default(),
                approval: approval(allow_ask),
            })
            .unwrap();
        let cancel = agent.session_cancel();
        agent
            .run_turn(
                dsh_agent::QueuedPrompt {
                    text: "go".to_owned(),
                    source: "user".to_owned(),
                },
                cancel,
            )
            .await
            .unwrap();
        agent.events()
    }

    fn tool_result(events: &[dsh_protocol::Event]) -> (bool, String, Option<String>) {
        events
            .iter()
            .find_map(|event| match &event.body {
                EventBody::ToolResult(ToolResultEvent {
                    is_error,
                    content,
                    disposition,
                    ..
                }) => Some((*is_error, content.clone(), disposition.clone())),
                _ => None,
            })
            .unwrap()
    }

    #[tokio::test]
    async fn headless_ask_is_a_denial_without_allow_ask() {
        let (is_error, content, disposition) = tool_result(&run_with(false).await);
        assert!(is_error);
        assert_eq!(disposition.as_deref(), Some("no_approval_service"));
        assert!(
            content.contains("the test wants a person to look"),
            "{content}"
        );
    }

    #[tokio::test]
    async fn allow_ask_answers_allow_once() {
        let (is_error, content, disposition) = tool_result(&run_with(true).await);
        assert!(!is_error, "{content}");
        assert_eq!(disposition.as_deref(), Some("executed"));
        assert!(content.contains("ran-it"), "{content}");
    }
}
