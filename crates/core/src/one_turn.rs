//! One headless turn, from the session-start hooks to teardown: what `-p`
//! and `dsh exec` share. It owns the async runtime, the stop signals and the
//! order things end in; what the turn prints is the caller's (through the
//! agent's observers).

use std::sync::{Arc, Mutex, PoisonError};

use dsh_agent::{Agent, QueuedPrompt, TurnOutcome};
use dsh_hook_runner::HookRunner;
use dsh_mcp::McpSession;
use dsh_seams::{ContextEntry, SessionEndReason, SessionStartSource};
use dsh_stdio::signals::{Signals, Stop};
use dsh_stdio::stdio::{ExitStatus, errln};

use crate::error::{Error, Result};

/// What one headless turn needs besides the agent.
pub struct OneTurn {
    /// The user's prompt.
    pub prompt: String,
    /// Files the prompt mentions, attached to it.
    pub attachments: Vec<ContextEntry>,
    /// Why the session starts (new, resumed), for the session-start hooks.
    pub source: SessionStartSource,
    /// The session's MCP servers, closed at the end.
    pub mcp: Arc<McpSession>,
    /// The hook runner, whose running and detached hooks end with the turn.
    pub runner: HookRunner,
    /// `--init-only`: the set-up and session-start hooks, then no turn.
    pub init_only: bool,
}

/// How the turn went.
#[derive(Debug)]
pub struct TurnRun {
    /// The turn's outcome; `None` when a signal came while the
    /// session-start hooks ran, or with `--init-only`: no turn was opened.
    pub outcome: Option<TurnOutcome>,
    /// The stop signal that ended the run early, if one did.
    pub stop: Option<Stop>,
}

/// Runs the session-start hooks, one turn and the session-end hooks, then
/// closes MCP and ends every hook still running. SIGINT, SIGTERM and SIGHUP
/// end the session in order from the moment the runtime starts; a second
/// one exits at once.
pub fn run_one_turn(agent: &mut Agent, turn: OneTurn) -> Result<TurnRun> {
    let OneTurn {
        prompt,
        attachments,
        source,
        mcp,
        runner,
        init_only,
    } = turn;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| Error::Context {
            context: "cannot start the async runtime".to_owned(),
            source: Box::new(error),
        })?;
    let ran = runtime.block_on(async {
        // Before the session-start hooks run: from here on a stop signal
        // ends the session in order instead of killing dsh.
        let mut signals = Signals::install().map_err(|error| Error::Other(error.into()))?;
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
            // `--init-only`: the set-up is the whole run.
            None if init_only => None,
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
        Ok::<_, Error>(TurnRun {
            outcome: outcome.transpose()?,
            stop,
        })
    });
    runtime.shutdown_background();
    ran
}
