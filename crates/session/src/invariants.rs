//! The structural rules every appended event must satisfy.

use std::collections::{BTreeMap, BTreeSet};

use dsh_protocol::{
    AssistantMessageEvent, CompactionCompletedEvent, CompactionFailedEvent, CompactionStartedEvent,
    ContextMessageEvent, EventBody, HookInvokedEvent, HookResultEvent, PromptBlockedEvent,
    SeamNoteEvent, SteeringMessageEvent, ToolCallEvent, ToolResultEvent, TurnEndEvent,
    TurnStartEvent, UserMessageEvent,
};

/// An append that would break the log's structure. The event is not written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvariantError {
    /// The first event must be `session/header`, and only the first.
    #[error("`session/header` must be the first event and appear once (got `{0}` at seq {1})")]
    HeaderPlacement(&'static str, u64),
    /// An event that belongs in a turn arrived with no turn open.
    #[error("`{0}` needs an open turn, but no turn is open")]
    OutsideTurn(&'static str),
    /// An event names a turn other than the open one.
    #[error("`{kind}` names turn {got}, but the open turn is {open}")]
    WrongTurn {
        /// Event type.
        kind: &'static str,
        /// The turn it named.
        got: u64,
        /// The open turn.
        open: u64,
    },
    /// A subagent's event broke its nested run's structure.
    #[error("subagent `{agent}`: {message}")]
    Subagent {
        /// The agent id the event was tagged with.
        agent: String,
        /// What was wrong.
        message: String,
    },
    /// A turn opened while another was open, or out of sequence.
    #[error("`turn/start` for turn {got}: expected turn {expected} with no turn open")]
    TurnSequence {
        /// The turn it named.
        got: u64,
        /// The turn expected next.
        expected: u64,
    },
    /// A tool call or result that does not fit the current batch.
    #[error("tool batch: {0}")]
    Batch(String),
}

/// Tracks what is open so each append can be checked in O(1)-ish time.
#[derive(Debug, Clone, Default)]
pub(crate) struct InvariantState {
    seen_header: bool,
    open_turn: Option<u64>,
    last_turn: u64,
    /// Calls the last assistant message announced.
    announced: Vec<String>,
    called: BTreeSet<String>,
    resulted: BTreeSet<String>,
    /// Each subagent's own batch bookkeeping (its events are tagged with
    /// its id and live inside the parent's open turn).
    agents: BTreeMap<String, NestedBatch>,
}

/// A nested run's batch: the calls its last assistant message announced.
#[derive(Debug, Clone, Default)]
struct NestedBatch {
    announced: Vec<String>,
    called: BTreeSet<String>,
    resulted: BTreeSet<String>,
}

impl NestedBatch {
    fn open(&self) -> bool {
        self.announced.iter().any(|id| !self.resulted.contains(id))
    }
}

impl InvariantState {
    pub(crate) fn open_turn(&self) -> Option<u64> {
        self.open_turn
    }

    pub(crate) fn last_turn(&self) -> u64 {
        self.last_turn
    }

    /// Call ids announced by the last assistant message that have no result yet.
    pub(crate) fn unresolved_calls(&self) -> Vec<String> {
        self.announced
            .iter()
            .filter(|id| !self.resulted.contains(*id))
            .cloned()
            .collect()
    }

    /// Call ids announced but not yet sealed as `tool/call`.
    pub(crate) fn uncalled(&self) -> Vec<String> {
        self.announced
            .iter()
            .filter(|id| !self.called.contains(*id))
            .cloned()
            .collect()
    }

    fn batch_open(&self) -> bool {
        !self.unresolved_calls().is_empty()
    }

    /// Checks a loaded event, routed by its tag.
    pub(crate) fn accept_event(
        &mut self,
        event: &dsh_protocol::Event,
    ) -> Result<(), InvariantError> {
        match &event.agent_id {
            Some(agent) => self.accept_nested(agent, &event.body),
            None => self.accept(event.seq, &event.body),
        }
    }

    /// Checks an event of the subagent `agent`: it must sit in the open
    /// turn, and its own batches follow the same rules as the parent's.
    pub(crate) fn accept_nested(
        &mut self,
        agent: &str,
        body: &EventBody,
    ) -> Result<(), InvariantError> {
        let kind = body.type_name();
        let fail = |message: String| InvariantError::Subagent {
            agent: agent.to_owned(),
            message,
        };
        let batch = self.agents.entry(agent.to_owned()).or_default().clone();
        let mut next = batch.clone();
        match body {
            EventBody::SessionHeader(_)
            | EventBody::TurnStart(_)
            | EventBody::TurnEnd(_)
            | EventBody::PromptBlocked(_)
            | EventBody::CompactionStarted(_)
            | EventBody::CompactionCompleted(_)
            | EventBody::CompactionFailed(_)
            | EventBody::SessionCleared { .. }
            | EventBody::ModelSwitched(_) => {
                return Err(fail(format!(
                    "`{kind}` belongs to the session, not a subagent"
                )));
            }
            EventBody::HookInvoked(HookInvokedEvent { turn, .. })
            | EventBody::HookResult(HookResultEvent { turn, .. })
            | EventBody::SeamNote(SeamNoteEvent { turn, .. }) => {
                if let Some(turn) = turn {
                    self.check_turn(kind, *turn)?;
                }
            }
            EventBody::AssistantMessage(AssistantMessageEvent {
                turn, tool_calls, ..
            }) => {
                self.check_turn(kind, *turn)?;
                if batch.open() {
                    return Err(fail(format!("`{kind}` while its calls have no result")));
                }
                next = NestedBatch {
                    announced: tool_calls.iter().map(|call| call.id.clone()).collect(),
                    ..NestedBatch::default()
                };
            }
            EventBody::ToolCall(ToolCallEvent { turn, call_id, .. }) => {
                self.check_turn(kind, *turn)?;
                if !batch.announced.contains(call_id) || !next.called.insert(call_id.clone()) {
                    return Err(fail(format!(
                        "tool/call `{call_id}` not announced or repeated"
                    )));
                }
            }
            EventBody::ToolResult(ToolResultEvent { turn, call_id, .. }) => {
                self.check_turn(kind, *turn)?;
                if batch.announced.contains(call_id) && !next.resulted.insert(call_id.clone()) {
                    return Err(fail(format!("tool/result `{call_id}` recorded twice")));
                }
            }
            EventBody::UserMessage(UserMessageEvent { turn, .. })
            | EventBody::ContextMessage(ContextMessageEvent { turn, .. })
            | EventBody::SteeringMessage(SteeringMessageEvent { turn, .. }) => {
                self.check_turn(kind, *turn)?;
                if batch.open() {
                    return Err(fail(format!("`{kind}` while its calls have no result")));
                }
            }
        }
        self.agents.insert(agent.to_owned(), next);
        Ok(())
    }

    /// Checks `body` at `seq` and, if it is acceptable, updates the state.
    pub(crate) fn accept(&mut self, seq: u64, body: &EventBody) -> Result<(), InvariantError> {
        let kind = body.type_name();
        if let EventBody::SessionHeader(_) = body {
            if self.seen_header || seq != 0 {
                return Err(InvariantError::HeaderPlacement(kind, seq));
            }
            self.seen_header = true;
            return Ok(());
        }
        if !self.seen_header {
            return Err(InvariantError::HeaderPlacement(kind, seq));
        }
        match body {
            EventBody::SessionHeader(_) => Ok(()),
            EventBody::TurnStart(TurnStartEvent { turn }) => {
                let expected = self.last_turn + 1;
                if self.open_turn.is_some() || *turn != expected {
                    return Err(InvariantError::TurnSequence {
                        got: *turn,
                        expected,
                    });
                }
                self.open_turn = Some(*turn);
                self.last_turn = *turn;
                self.announced.clear();
                self.called.clear();
                self.resulted.clear();
                Ok(())
            }
            EventBody::TurnEnd(TurnEndEvent { turn, .. }) => {
                self.check_turn(kind, *turn)?;
                if self.batch_open() {
                    return Err(InvariantError::Batch(format!(
                        "turn {turn} cannot end while calls {:?} have no tool/result",
                        self.unresolved_calls()
                    )));
                }
                self.open_turn = None;
                // A nested run never outlives the turn that started it.
                self.agents.clear();
                Ok(())
            }
            // A hook's forced continuation may start the conversation again
            // inside a turn (Gemini CLI's AfterAgent `clearContext`), between
            // steps: never while a call waits for its result.
            EventBody::SessionCleared { .. }
                if self.open_turn.is_some() && self.unresolved_calls().is_empty() =>
            {
                Ok(())
            }
            // Session commands (`/clear`, `/model`) run between turns.
            EventBody::SessionCleared { .. } | EventBody::ModelSwitched(_) => {
                match self.open_turn {
                    Some(open) => Err(InvariantError::Batch(format!(
                        "`{kind}` cannot be recorded inside turn {open}"
                    ))),
                    None => Ok(()),
                }
            }
            EventBody::HookInvoked(HookInvokedEvent { turn, .. })
            | EventBody::HookResult(HookResultEvent { turn, .. })
            | EventBody::SeamNote(SeamNoteEvent { turn, .. }) => {
                // Session-scoped hooks (session start before turn 1, session
                // end) carry no turn; a hook that names a turn must name the
                // open one.
                match turn {
                    Some(turn) => self.check_turn(kind, *turn),
                    None => Ok(()),
                }
            }
            EventBody::AssistantMessage(AssistantMessageEvent {
                turn, tool_calls, ..
            }) => {
                self.check_turn(kind, *turn)?;
                self.check_no_batch(kind)?;
                let mut ids = BTreeSet::new();
                for call in tool_calls {
                    if !ids.insert(call.id.clone()) {
                        return Err(InvariantError::Batch(format!(
                            "assistant message repeats call id `{}`",
                            call.id
                        )));
                    }
                }
                self.announced = tool_calls.iter().map(|call| call.id.clone()).collect();
                self.called.clear();
                self.resulted.clear();
                Ok(())
            }
            EventBody::ToolCall(ToolCallEvent {
                turn,
                call_id,
                parent_execution_id,
                ..
            }) => {
                self.check_turn(kind, *turn)?;
                if parent_execution_id.is_some() {
                    // Nested dispatch is recorded for audit; it is not part
                    // of the model's batch.
                    return Ok(());
                }
                if !self.announced.contains(call_id) {
                    return Err(InvariantError::Batch(format!(
                        "tool/call `{call_id}` was not announced by the last assistant message"
                    )));
                }
                if !self.resulted.is_empty() {
                    return Err(InvariantError::Batch(format!(
                        "tool/call `{call_id}` after results of its batch began"
                    )));
                }
                if !self.called.insert(call_id.clone()) {
                    return Err(InvariantError::Batch(format!(
                        "tool/call `{call_id}` recorded twice"
                    )));
                }
                Ok(())
            }
            EventBody::ToolResult(ToolResultEvent { turn, call_id, .. }) => {
                self.check_turn(kind, *turn)?;
                if !self.announced.contains(call_id) {
                    // A nested result: allowed while its parent's batch is open.
                    return Ok(());
                }
                if !self.uncalled().is_empty() {
                    return Err(InvariantError::Batch(format!(
                        "tool/result `{call_id}` before every call of its batch was recorded (missing {:?})",
                        self.uncalled()
                    )));
                }
                if !self.resulted.insert(call_id.clone()) {
                    return Err(InvariantError::Batch(format!(
                        "tool/result `{call_id}` recorded twice"
                    )));
                }
                Ok(())
            }
            EventBody::UserMessage(UserMessageEvent { turn, .. })
            | EventBody::CompactionStarted(CompactionStartedEvent { turn, .. })
            | EventBody::CompactionCompleted(CompactionCompletedEvent { turn, .. })
            | EventBody::CompactionFailed(CompactionFailedEvent { turn, .. })
            | EventBody::PromptBlocked(PromptBlockedEvent { turn, .. })
            | EventBody::ContextMessage(ContextMessageEvent { turn, .. })
            | EventBody::SteeringMessage(SteeringMessageEvent { turn, .. }) => {
                self.check_turn(kind, *turn)?;
                self.check_no_batch(kind)
            }
        }
    }

    fn check_turn(&self, kind: &'static str, turn: u64) -> Result<(), InvariantError> {
        match self.open_turn {
            None => Err(InvariantError::OutsideTurn(kind)),
            Some(open) if open != turn => Err(InvariantError::WrongTurn {
                kind,
                got: turn,
                open,
            }),
            Some(_) => Ok(()),
        }
    }

    fn check_no_batch(&self, kind: &'static str) -> Result<(), InvariantError> {
        if self.batch_open() {
            return Err(InvariantError::Batch(format!(
                "`{kind}` between a batch's tool calls and its results (unresolved {:?})",
                self.unresolved_calls()
            )));
        }
        Ok(())
    }
}
