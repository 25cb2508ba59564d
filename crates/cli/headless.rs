//! `dsh -p PROMPT`: one headless turn.
//!
//! The prompt runs as one turn of a new session (or of the session named by
//! `--resume`/`--continue`), stored like any other under
//! `$DSH_HOME/sessions/`. stdout carries only the result, in the format
//! `--output-format` chose; notices, warnings and errors go to stderr.
//!
//! Approvals: nobody can answer an `ask` here, so by default it becomes a
//! denial (the registry records disposition `no_approval_service` and the
//! model is told the call needed approval). `--allow-ask` answers every
//! `ask` with "allow once" instead, and says so on stderr. A `deny` from a
//! hook stays a denial either way.
//!
//! Exit status: 0 only when the turn ended `completed`; 1 for any other
//! ending (error, interrupted, rejected, stopped, max_steps), with the
//! reason on stderr; 2 when the session could not start (configuration,
//! missing API key, unreadable log).
//!
//! Signals: Ctrl-C (SIGINT) cancels the turn's token; the turn ends
//! `interrupted` (tool and hook processes are killed by their owners) and
//! the session-end seam still runs.

use crate::stdio::{ExitStatus, errln};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::Context as _;
use async_trait::async_trait;
use clap::ValueEnum;
use dsh_agent::{Observers, QueuedPrompt, TurnOutcome};
use dsh_protocol::TurnEndReason;
use dsh_seams::{ApprovalResponse, SessionEndReason, ToolExecution};
use dsh_session::encode;
use dsh_tools::ApprovalService;
use serde_json::{Value, json};

use crate::sessions::{self, Pick};
use crate::signals::{Signals, Stop};
use dsh_core::AgentOptions;
use dsh_tui::terminal::summarize_arguments;

/// What `-p` prints on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// The final assistant text.
    Text,
    /// One JSON object at the end: the result, the session id, the events.
    Json,
    /// Each session event as a JSON line as it is appended, then a result line.
    StreamJson,
}

/// The `-p` options.
#[derive(Debug, Clone)]
pub struct HeadlessArgs {
    /// The prompt (`-` reads it from stdin).
    pub prompt: String,
    /// The output format.
    pub output_format: OutputFormat,
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

/// The result object (`json` and the last `stream-json` line).
pub fn result_object(
    session_id: &str,
    log: Option<&std::path::Path>,
    outcome: &TurnOutcome,
) -> Value {
    json!({
        "type": "result",
        "session_id": session_id,
        "log": log,
        "turn": outcome.turn,
        "reason": outcome.reason.as_str(),
        "is_error": outcome.reason != TurnEndReason::Completed,
        "result": outcome.final_text,
        "message": outcome.message,
    })
}

/// `-p` runs one turn, so a built-in command (`/clear`, `/model`,
/// `/compact`) or an unknown `/name` cannot be its prompt; a custom command
/// can (it expands into the turn's prompt). Checked before a session opens.
fn refuse_session_command(prompt: &str) -> anyhow::Result<()> {
    use dsh_agent::commands::{CommandCatalog, PromptCommand, parse};
    let roots = dsh_agent::instructions::ContextRoots::from_env(crate::wiring::current_dir()?);
    match parse(prompt, &CommandCatalog::discover(&roots)) {
        None | Some(PromptCommand::Custom(_)) => Ok(()),
        Some(PromptCommand::Invalid(message)) => anyhow::bail!("{message}"),
        Some(PromptCommand::Model(_)) => {
            anyhow::bail!("/model changes a session's model; with -p use --model NAME")
        }
        Some(PromptCommand::Clear | PromptCommand::Compact(_)) => anyhow::bail!(
            "{} acts on a session's history, not a turn: it cannot be a -p prompt",
            prompt.split_whitespace().next().unwrap_or_default()
        ),
    }
}

/// Runs `dsh -p`.
pub fn run(args: HeadlessArgs) -> anyhow::Result<ExitStatus> {
    let prompt = if args.prompt == "-" {
        std::io::read_to_string(std::io::stdin()).context("cannot read the prompt from stdin")?
    } else {
        args.prompt.clone()
    };
    refuse_session_command(&prompt)?;
    let env = dsh_core::Env::from_process();
    let home = env.dsh_home()?;
    let config = dsh_core::DshConfig::load(&home)?;
    let (cwd, existing) = sessions::pick(&home, &args.pick, &crate::wiring::current_dir()?)?;
    let mut spec = dsh_core::SessionSpec::resolve(dsh_core::Inputs {
        env: &env,
        config: &config,
        flags: &args.session,
        cwd: &cwd,
        policy: dsh_core::TrustPolicy::Headless {
            strict: args.strict_hooks || env.strict_hooks(),
        },
    })?;
    let model = spec.model()?;
    spec.decide_headless(&mut std::io::stderr())?;
    let opened = dsh_core::assemble(
        spec,
        sessions::log_target(&home, existing.as_ref(), args.wait),
    )?;
    sessions::report_torn(&opened);
    for notice in &opened.notices {
        errln!("dsh: {notice}");
    }
    let session_id = opened.session_id.clone();
    let log_path = opened.log.path().map(std::path::Path::to_path_buf);
    let first_seq = opened.first_seq;
    let source = opened.source;
    // `@path` mentions, as in the terminal: hooks see the prompt as typed.
    let attachments = dsh_agent::mentions::mention_attachments(&prompt, &opened.cwd);
    let runner = opened.runner.clone();
    let mcp = Arc::clone(&opened.mcp);

    let streaming = args.output_format == OutputFormat::StreamJson;
    if streaming {
        for event in opened.log.events().iter().filter(|e| e.seq >= first_seq) {
            crate::wiring::stdout_line(&encode(event)?);
        }
    }
    let observers = Observers {
        on_event: streaming.then(crate::wiring::stdout_events),
        on_notice: Some(crate::wiring::stderr_notices()),
        on_text: None,
    };
    let mut agent = opened.agent(AgentOptions {
        model,
        interactive: false,
        max_steps: args
            .session
            .max_steps
            .unwrap_or(dsh_agent::DEFAULT_MAX_STEPS),
        observers,
        approval: approval(args.allow_ask),
    })?;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let ran = runtime.block_on(async {
        // Before the session-start hooks run: from here on SIGINT, SIGTERM
        // and SIGHUP end the session in order instead of killing dsh.
        let mut signals = Signals::install()?;
        let session_cancel = agent.session_cancel();
        let stopped: Arc<Mutex<Option<Stop>>> = Arc::new(Mutex::new(None));
        let watcher = {
            let session_cancel = session_cancel.clone();
            let stopped = Arc::clone(&stopped);
            let runner = runner.clone();
            tokio::spawn(async move {
                let stop = signals.recv().await;
                *stopped.lock().unwrap_or_else(PoisonError::into_inner) = Some(stop);
                // kill_all ends running and detached hooks; cancelling makes
                // the owners of tool processes kill their groups. kill_all
                // comes first: once the token is cancelled the session-end
                // hooks may start, and they must not be killed.
                runner.kill_all();
                session_cancel.cancel();
                // A second signal while the session ends: stop waiting.
                let again = signals.recv().await;
                runner.kill_all();
                errln!("dsh: {} again; exiting now", again.name());
                ExitStatus::from(stop).exit_now();
            })
        };
        agent.attach_to_next_prompt(attachments);
        agent.start(source).await;
        let stopped_early = *stopped.lock().unwrap_or_else(PoisonError::into_inner);
        let outcome = match stopped_early {
            // Stopped while the session-start hooks ran: no turn is opened.
            Some(_) => None,
            None => Some(
                agent
                    .run_turn(
                        QueuedPrompt {
                            text: prompt,
                            source: "user".to_owned(),
                        },
                        session_cancel.child_token(),
                    )
                    .await,
            ),
        };
        // Session-end hooks run even after a signal (with a fresh token,
        // inside their own budget).
        agent.end(SessionEndReason::Other).await;
        mcp.close().await;
        // Detached (async) hooks do not outlive the session.
        runner.kill_all();
        watcher.abort();
        let stop = *stopped.lock().unwrap_or_else(PoisonError::into_inner);
        let outcome = outcome.transpose()?;
        anyhow::Ok((outcome, stop, agent.events()))
    });
    // The runtime's blocking pool may hold a stdin reader; do not wait for it.
    runtime.shutdown_background();
    let (outcome, stop, events) = ran?;
    let Some(outcome) = outcome else {
        let stop = stop.unwrap_or(Stop::Interrupt);
        errln!(
            "dsh: {} before the turn started (session {session_id})",
            stop.name()
        );
        return Ok(ExitStatus::from(stop));
    };

    let result = result_object(&session_id, log_path.as_deref(), &outcome);
    match args.output_format {
        OutputFormat::Text => {
            if let Some(text) = &outcome.final_text
                && outcome.reason == TurnEndReason::Completed
            {
                crate::wiring::stdout_line(text.trim_end_matches('\n'));
            }
        }
        OutputFormat::Json => {
            let mut result = result;
            let events: Vec<Value> = events
                .iter()
                .filter(|event| event.seq >= first_seq)
                .map(serde_json::to_value)
                .collect::<Result<_, _>>()?;
            result["events"] = Value::Array(events);
            crate::wiring::stdout_line(&result.to_string());
        }
        OutputFormat::StreamJson => crate::wiring::stdout_line(&result.to_string()),
    }
    if let Some(stop) = stop {
        errln!(
            "dsh: {}: turn {} ended {} (session {session_id})",
            stop.name(),
            outcome.turn,
            outcome.reason.as_str()
        );
        Ok(ExitStatus::from(stop))
    } else if outcome.reason == TurnEndReason::Completed {
        Ok(ExitStatus::Success)
    } else {
        let message = outcome
            .message
            .as_deref()
            .map(|m| format!(": {m}"))
            .unwrap_or_default();
        errln!(
            "dsh: turn {} ended {}{message} (session {session_id})",
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
    use dsh_protocol::EventBody;
    use dsh_seams::{Plugin, PreToolDecision, PreToolOutcome, PreToolVerdict, SeamContext};

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
        let header = dsh_core::hooks::header("s", dir.path(), Vec::new());
        let permissions = Arc::new(dsh_permissions::PermissionsPlugin::new(
            dsh_permissions::Permissions::new(
                dsh_permissions::Mode::Default,
                dsh_permissions::PathContext {
                    cwd: dir.path().to_owned(),
                    home: None,
                },
            ),
            dsh_permissions::PromptSurface::Headless,
        ));
        let opened = dsh_core::Assembled {
            session_id: "s".to_owned(),
            cwd: dir.path().to_owned(),
            log: dsh_session::SessionLog::in_memory(header).unwrap(),
            source: dsh_seams::SessionStartSource::Startup,
            first_seq: 0,
            plugins: vec![Arc::new(AlwaysAsk) as Arc<dyn Plugin>],
            runner: dsh_hook_runner::HookRunner::new(dsh_hook_runner::RunnerConfig::default()),
            permissions,
            mcp: Arc::new(dsh_core::mcp::McpSession::none()),
            project: dsh_agent::ProjectContext::default(),
            auto_compact: dsh_agent::AutoCompact::Off,
            notices: Vec::new(),
            problems: Vec::new(),
            hook_notices: Vec::new(),
            torn: None,
        };
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
                QueuedPrompt {
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
                EventBody::ToolResult {
                    is_error,
                    content,
                    disposition,
                    ..
                } => Some((*is_error, content.clone(), disposition.clone())),
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
