//! The seed-004 loop seams: the message list before each request
//! (`context`), the outgoing provider request (`before_provider_request`),
//! and what happens after each step (stop-after-step, prepare-next-step).
//! Their decisions are typed here; the agent applies and records them.

use std::collections::BTreeSet;
use std::sync::Arc;

use dsh_model::Model;
use dsh_protocol::{Message, ModelReply, ModelRequest};

/// The context seam's answer for one request.
#[derive(Debug, Clone, PartialEq)]
pub enum ContextDecision {
    /// Send the list as it is.
    Keep,
    /// Send this list instead (this request only; the log is unchanged). It
    /// must keep every tool call's results right after its assistant message
    /// ([`check_adjacency`]); a list that does not is refused and the list
    /// the plugin was given is sent.
    Replace(Vec<Message>),
}

/// The before-provider-request seam's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum ProviderRequestDecision {
    /// Send the request as it is.
    Keep,
    /// Send this request instead; recorded durably (`seam/note`).
    Replace(ModelRequest),
    /// Send nothing: the turn ends `stopped` with this reason, shown to the
    /// user; recorded durably (`seam/note`). Later listeners are not asked.
    Block {
        /// Why, for the log and the user.
        reason: String,
    },
    /// Send nothing and use this reply as the model's answer to this
    /// request (a hook's synthetic response); recorded durably
    /// (`seam/note` with the reply). Later listeners are not asked.
    Answer(ModelReply),
}

/// What the step-end seams are told: one step (a model request and the
/// tool calls it made, all settled) just ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepReport {
    /// The turn.
    pub turn: u64,
    /// The step.
    pub step: u64,
    /// The assistant text of this step.
    pub assistant_text: String,
    /// The ids of the tool calls it made (their results are recorded).
    pub tool_call_ids: Vec<String>,
}

/// The stop-after-step seam's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepStop {
    /// Go on as the loop would.
    Continue,
    /// End the turn now (`stopped`, with this reason).
    EndTurn {
        /// Why, for the log and the user.
        reason: String,
    },
    /// End the turn now and the session after it: no further queued send
    /// runs.
    EndSession {
        /// Why, for the log and the user.
        reason: String,
    },
}

/// The prepare-next-step seam's answer: what changes from the next model
/// request on (for the rest of the session). Unset fields stay as they are.
#[derive(Clone, Default)]
pub struct NextStepUpdate {
    /// The model to ask from now on.
    pub model: Option<Arc<dyn Model>>,
    /// The system prompt to send from now on.
    pub system_prompt: Option<String>,
}

impl std::fmt::Debug for NextStepUpdate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NextStepUpdate")
            .field("model", &self.model.as_ref().map(|model| model.name()))
            .field("system_prompt", &self.system_prompt)
            .finish()
    }
}

/// Checks that every assistant message's tool calls are answered right
/// after it, each exactly once, and that no tool result stands anywhere
/// else: what every provider requires of a message list. Returns what is
/// wrong, for people.
pub fn check_adjacency(messages: &[Message]) -> Result<(), String> {
    let mut index = 0;
    while let Some(message) = messages.get(index) {
        match message {
            Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => {
                let mut open: BTreeSet<&str> =
                    tool_calls.iter().map(|call| call.id.as_str()).collect();
                let mut next = index + 1;
                while !open.is_empty() {
                    match messages.get(next) {
                        Some(Message::Tool { tool_call_id, .. }) => {
                            if !open.remove(tool_call_id.as_str()) {
                                return Err(format!(
                                    "message {next}: the result for `{tool_call_id}` does not answer a call of message {index}, or answers it twice"
                                ));
                            }
                            next += 1;
                        }
                        Some(
                            Message::System { .. }
                            | Message::User { .. }
                            | Message::Assistant { .. },
                        )
                        | None => {
                            let missing: Vec<&str> = open.into_iter().collect();
                            return Err(format!(
                                "message {index}: the tool calls {missing:?} are not answered right after it"
                            ));
                        }
                    }
                }
                index = next;
            }
            Message::Tool { tool_call_id, .. } => {
                return Err(format!(
                    "message {index}: the result for `{tool_call_id}` does not follow its call"
                ));
            }
            Message::System { .. } | Message::User { .. } | Message::Assistant { .. } => {
                index += 1;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use dsh_protocol::ToolCall;
    use serde_json::json;

    use super::*;

    fn call(ids: &[&str]) -> Message {
        Message::Assistant {
            content: String::new(),
            tool_calls: ids
                .iter()
                .map(|id| ToolCall {
                    id: (*id).to_owned(),
                    name: "bash".to_owned(),
                    arguments: json!({}),
                })
                .collect(),
            thinking: None,
        }
    }

    fn result(id: &str) -> Message {
        Message::Tool {
            tool_call_id: id.to_owned(),
            content: "ok".to_owned(),
            is_error: false,
            blocks: None,
        }
    }

    fn user(text: &str) -> Message {
        Message::User {
            content: text.to_owned(),
        }
    }

    #[test]
    fn results_right_after_their_calls_pass_in_any_order() {
        let list = [
            user("hi"),
            call(&["a", "b"]),
            result("b"),
            result("a"),
            user("more"),
        ];
        assert_eq!(check_adjacency(&list), Ok(()));
    }

    #[test]
    fn a_dropped_result_a_moved_result_and_a_stray_result_are_refused() {
        let dropped = [user("hi"), call(&["a", "b"]), result("a"), user("x")];
        assert!(check_adjacency(&dropped).unwrap_err().contains("[\"b\"]"));
        let moved = [user("hi"), call(&["a"]), user("between"), result("a")];
        assert!(check_adjacency(&moved).is_err());
        let stray = [user("hi"), result("a")];
        assert!(
            check_adjacency(&stray)
                .unwrap_err()
                .contains("does not follow")
        );
        let twice = [call(&["a"]), result("a"), result("a")];
        assert!(check_adjacency(&twice).is_err());
        let cut = [user("hi"), call(&["a"])];
        assert!(check_adjacency(&cut).is_err());
    }
}
