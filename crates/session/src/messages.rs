//! The model-facing projection of a session log.

use dsh_protocol::{Event, EventBody, Message};

/// Projects the model-facing conversation from a log: user and steering
/// messages as `user`, assistant replies, tool results as `tool`, and
/// contexts as `system` messages. Non-surface events (`session/header`,
/// `turn/*`, `prompt/blocked`, `hook/*`) never reach the model, and nor do
/// results of nested calls the model did not make.
pub fn derive_messages(events: &[Event]) -> Vec<Message> {
    let mut messages = Vec::new();
    let mut model_call_ids: Vec<String> = Vec::new();
    for event in events {
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
            // `/clear`: the conversation starts again from here.
            EventBody::SessionCleared { .. } => {
                messages.clear();
                model_call_ids.clear();
            }
            EventBody::SessionHeader { .. }
            | EventBody::ModelSwitched { .. }
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
