//! One headless turn, from the session-start hooks to teardown: what `-p`
//! and `dsh exec` share. It runs the session on the async runtime with the
//! stop signals watched and ends it through [`Session::shutdown`]; what the
//! turn prints is the caller's (through the agent's observers).

use dsh_agent::{QueuedPrompt, TurnOutcome};
use dsh_seams::{ContextEntry, SessionEndReason};
use dsh_stdio::signals::Stop;

use crate::error::{Error, Result};
use crate::session::{Session, block_on};

/// What one headless turn needs besides the session.
pub struct OneTurn {
    /// The user's prompt.
    pub prompt: String,
    /// Files the prompt mentions, attached to it.
    pub attachments: Vec<ContextEntry>,
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
pub fn run_one_turn(session: &mut Session, turn: OneTurn) -> Result<TurnRun> {
    let OneTurn {
        prompt,
        attachments,
        init_only,
    } = turn;
    block_on(async {
        // Before the session-start hooks run: from here on a stop signal
        // ends the session in order instead of killing dsh.
        session.watch_signals()?;
        session.agent().attach_to_next_prompt(attachments);
        session.begin().await;
        let outcome = match session.stopped() {
            // Stopped while the session-start hooks ran: no turn is opened.
            Some(_) => None,
            // `--init-only`: the set-up is the whole run.
            None if init_only => None,
            None => {
                let cancel = session.agent().session_cancel().child_token();
                let prompt = QueuedPrompt {
                    text: prompt,
                    source: "user".to_owned(),
                };
                Some(session.agent().run_turn(prompt, cancel).await)
            }
        };
        // Session-end hooks run even after a signal (with a fresh token,
        // inside their own budget).
        session.shutdown(SessionEndReason::Other).await;
        Ok::<_, Error>(TurnRun {
            outcome: outcome.transpose()?,
            stop: session.stopped(),
        })
    })?
}
