//! How a hook run is described in the session log.
//!
//! Both bridges record every run (process or HTTP) as a `hook/result`; the fields that say how
//! the process ended are the runner's facts, so they are derived here once.
//! What the run *meant* (parsed output, decision) stays with the bridges.

use std::time::Duration;

use dsh_protocol::{EventBody, HookDecision, HookOutcomeKind, HookResultEvent};
use serde_json::Value;

use crate::{HookExit, HookRun};

/// The process facts of one hook run, in the shape of a `hook/result`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRecord {
    /// How it ended.
    pub outcome: HookOutcomeKind,
    /// Exit code, if it exited on its own.
    pub exit_code: Option<i32>,
    /// The signal that ended it, if any.
    pub signal: Option<i32>,
    /// Whether dsh killed it at its deadline.
    pub timed_out: bool,
    /// Spawn to reap.
    pub duration: Duration,
    /// Bounded stdout (with a marker when cut).
    pub stdout: String,
    /// Bounded stderr (with a marker when cut).
    pub stderr: String,
    /// Why it did not run or was killed, for people.
    pub error: Option<String>,
    /// The HTTP status an HTTP hook got.
    pub http_status: Option<u16>,
}

impl RunRecord {
    /// The facts of a finished run.
    pub fn of(run: &HookRun) -> Self {
        let (outcome, exit_code, signal, error) = match &run.exit {
            // Claude Code treats a 2xx like exit 0: recorded as such, with
            // the status beside it.
            HookExit::Responded(status) if (200..300).contains(status) => {
                (HookOutcomeKind::Exited, Some(0), None, None)
            }
            HookExit::Responded(status) => (
                HookOutcomeKind::HttpError,
                None,
                None,
                Some(format!("HTTP status {status}")),
            ),
            HookExit::Exited(code) => (HookOutcomeKind::Exited, Some(*code), None, None),
            HookExit::Signaled(signal) => (HookOutcomeKind::Signaled, None, Some(*signal), None),
            HookExit::TimedOut => (HookOutcomeKind::TimedOut, None, None, Some(run.describe())),
            HookExit::Cancelled => (HookOutcomeKind::Cancelled, None, None, None),
            // The log's contract has one kind for "never ran"; the error
            // text says it was dsh's side.
            HookExit::SpawnFailed(why) | HookExit::DshLimit(why) => {
                (HookOutcomeKind::SpawnFailed, None, None, Some(why.clone()))
            }
        };
        RunRecord {
            outcome,
            exit_code,
            signal,
            timed_out: run.exit == HookExit::TimedOut,
            duration: run.duration,
            stdout: run.stdout.display_within(run.record_limit),
            stderr: run.stderr.display_within(run.record_limit),
            error,
            http_status: run.exit.http_status(),
        }
    }

    /// A run that was started but not awaited (`async` handlers).
    pub fn detached() -> Self {
        RunRecord {
            outcome: HookOutcomeKind::Detached,
            exit_code: None,
            signal: None,
            timed_out: false,
            duration: Duration::ZERO,
            stdout: String::new(),
            stderr: String::new(),
            error: None,
            http_status: None,
        }
    }

    /// The `hook/result` event for this run.
    pub fn into_event(
        self,
        turn: Option<u64>,
        invocation_id: String,
        parsed_output: Option<Value>,
        decision: HookDecision,
    ) -> EventBody {
        EventBody::HookResult(HookResultEvent {
            turn,
            invocation_id,
            outcome: self.outcome,
            exit_code: self.exit_code,
            signal: self.signal,
            timed_out: self.timed_out,
            duration_ms: u64::try_from(self.duration.as_millis()).unwrap_or(u64::MAX),
            stdout: self.stdout,
            stderr: self.stderr,
            error: self.error,
            http_status: self.http_status,
            parsed_output,
            decision: Box::new(decision),
        })
    }
}
