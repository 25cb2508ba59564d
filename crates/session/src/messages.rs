//! The model-facing projection of a session log.

use dsh_protocol::{Event, EventBody, Message};

/// The user message that opens a compacted history: dsh's own framing
/// around the summary's text (the `<summary>` block when the summary has
/// one, else the whole summary without an `<analysis>` block).
pub fn compacted_summary_message(summary: &str) -> String {
    format!(
        "Earlier parts of this conversation were compacted to fit the model's context window. \
         Summary of what happened before:\n\n{}\n\n\
         The messages after this one are the most recent part of the conversation, kept as they were \
         (the summary was written without them). Carry on from there; do not ask the user to repeat anything.",
        summary_text(summary)
    )
}

/// The model-facing text of a raw summary reply.
pub fn summary_text(raw: &str) -> String {
    if let Some(start) = raw.find("<summary>") {
        let inner = &raw[start + "<summary>".len()..];
        let inner = inner.find("</summary>").map_or(inner, |end| &inner[..end]);
        return inner.trim().to_owned();
    }
    let mut text = raw.to_owned();
    if let Some(start) = text.find("<analysis>") {
        let end = text[start..]
            .find("</analysis>")
            .map_or(text.len(), |end| start + end + "</analysis>".len());
        text.replace_range(start..end, "");
    }
    text.trim().to_owned()
}

/// Projects the model-facing conversation from a log, honouring the last
/// `compaction/completed`: its summary, its contexts, the events it kept
/// verbatim, then everything after it. Without a compaction this is
/// [`derive_plain`] over the whole log.
pub fn derive_messages(events: &[Event]) -> Vec<Message> {
    let last = events.iter().enumerate().rev().find_map(|(index, event)| {
        if let EventBody::CompactionCompleted {
            summary,
            kept_from_seq,
            contexts,
            ..
        } = &event.body
        {
            Some((index, summary, *kept_from_seq, contexts))
        } else {
            None
        }
    });
    let Some((index, summary, kept_from_seq, contexts)) = last else {
        return derive_plain(events);
    };
    let mut messages = vec![Message::User {
        content: compacted_summary_message(summary),
    }];
    messages.extend(contexts.iter().map(|context| Message::System {
        content: context.content.clone(),
    }));
    if let Some(from) = kept_from_seq {
        let kept: Vec<Event> = events[..index]
            .iter()
            .filter(|event| event.seq >= from)
            .cloned()
            .collect();
        messages.extend(derive_plain(&kept));
    }
    messages.extend(derive_plain(&events[index + 1..]));
    messages
}

/// Projects the model-facing conversation from a log: user and steering
/// messages as `user`, assistant replies, tool results as `tool`, and
/// contexts as `system` messages. Non-surface events (`session/header`,
/// `turn/*`, `prompt/blocked`, `hook/*`) never reach the model, and nor do
/// results of nested calls the model did not make. Compaction events are
/// ignored here ([`derive_messages`] applies them).
pub fn derive_plain(events: &[Event]) -> Vec<Message> {
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
            EventBody::SessionHeader { .. }
            | EventBody::TurnStart { .. }
            | EventBody::TurnEnd { .. }
            | EventBody::PromptBlocked { .. }
            | EventBody::ToolCall { .. }
            | EventBody::CompactionStarted { .. }
            | EventBody::CompactionCompleted { .. }
            | EventBody::CompactionFailed { .. }
            | EventBody::HookInvoked { .. }
            | EventBody::HookResult { .. } => {}
        }
    }
    messages
}
