//! The model-facing projection of a session log.

use dsh_protocol::{Event, EventBody, Message};

/// Projects the model-facing conversation from a log: user and steering
/// messages as `user`, assistant replies, tool results as `tool`, and
/// contexts as `system` messages. Non-surface events (`session/header`,
/// `turn/*`, `prompt/blocked`, `hook/*`) never reach the model, and nor do
/// results of nested calls the model did not make.
pub fn derive_messages(events: &[Event]) -> Vec<Message> {
    derive_messages_of(events, None)
}

/// The messages of one conversation in the log: the session's own
/// (`agent_id` `None`: events of nested runs are left out, their outcome is
/// the `agent` call's result) or one subagent's nested run.
pub fn derive_messages_of(events: &[Event], agent_id: Option<&str>) -> Vec<Message> {
    let mut messages = Vec::new();
    let mut model_call_ids: Vec<String> = Vec::new();
    for event in events
        .iter()
        .filter(|event| event.agent_id.as_deref() == agent_id)
    {
        match &event.body {
            EventBody::UserMessage { content, .. } | EventBody::SteeringMessage { content, .. } => {
                messages.push(Message::User {
                    content: content.clone(),
                })
            }
            EventBody::AssistantMessage {
                content,
                tool_calls,
                ..
            } => {
                model_call_ids = tool_calls.iter().map(|call| call.id.clone()).collect();
                messages.push(Message::Assistant {
                    content: content.clone(),
                    tool_calls: tool_calls.clone(),
                });
            }
            EventBody::ToolResult {
                call_id, content, ..
            } => {
                if model_call_ids.iter().any(|id| id == call_id) {
                    messages.push(Message::Tool {
                        tool_call_id: call_id.clone(),
                        content: content.clone(),
                    });
                }
            }
            EventBody::ContextMessage { content, .. } => messages.push(Message::System {
                content: content.clone(),
            }),
            EventBody::SessionHeader { .. }
            | EventBody::TurnStart { .. }
            | EventBody::TurnEnd { .. }
            | EventBody::PromptBlocked { .. }
            | EventBody::ToolCall { .. }
            | EventBody::HookInvoked { .. }
            | EventBody::HookResult { .. } => {}
        }
    }
    messages
}
