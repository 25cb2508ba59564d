//! The model-facing projection of a session log.

use dsh_protocol::{
    AssistantMessageEvent, CompactionCompletedEvent, ContextMessageEvent, Event, EventBody,
    Message, ShownInput, SteeringMessageEvent, ToolCallEvent, ToolResultEvent, UserMessageEvent,
};

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

/// Projects the session's own model-facing conversation from a log (events
/// of subagents' nested runs are left out: their outcome is the `agent`
/// call's result). See [`derive_messages_of`].
pub fn derive_messages(events: &[Event]) -> Vec<Message> {
    derive_messages_of(events, None)
}

/// Projects one conversation of the log (the session's own for `agent_id`
/// `None`, else one subagent's nested run), honouring its last
/// `compaction/completed`: its summary, its contexts, the events it kept
/// verbatim, then everything after it. Without a compaction this is
/// [`derive_plain`] over that conversation's events.
pub fn derive_messages_of(events: &[Event], agent_id: Option<&str>) -> Vec<Message> {
    // References, not copies: this runs before every model request.
    let events: Vec<&Event> = events
        .iter()
        .filter(|event| event.agent_id.as_deref() == agent_id)
        .collect();
    let last = events.iter().enumerate().rev().find_map(|(index, event)| {
        if let EventBody::CompactionCompleted(CompactionCompletedEvent {
            summary,
            kept_from_seq,
            contexts,
            ..
        }) = &event.body
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
        messages.extend(derive_plain(
            events[..index]
                .iter()
                .copied()
                .filter(|event| event.seq >= from),
        ));
    }
    messages.extend(derive_plain(events[index + 1..].iter().copied()));
    messages
}

/// Projects the model-facing conversation from a log: user and steering
/// messages as `user`, assistant replies, tool results as `tool`, and
/// contexts as `system` messages. Non-surface events (`session/header`,
/// `turn/*`, `prompt/blocked`, `hook/*`) never reach the model, and nor do
/// results of nested calls the model did not make. Compaction events are
/// ignored here ([`derive_messages`] applies them).
///
/// A call keeps the model's own arguments in its assistant message unless
/// its `tool/result` carries `shown_input`: then the message shows the
/// arguments of the call's `tool/call` (`rewritten`) or `{}` (`emptied`).
pub fn derive_plain<'a>(events: impl IntoIterator<Item = &'a Event>) -> Vec<Message> {
    let mut messages = Vec::new();
    let mut model_call_ids: Vec<String> = Vec::new();
    // The last assistant message's index and its calls' logged arguments.
    let mut assistant_at: Option<usize> = None;
    let mut sealed: Vec<&'a ToolCallEvent> = Vec::new();
    for event in events {
        match &event.body {
            EventBody::UserMessage(UserMessageEvent { content, .. })
            | EventBody::SteeringMessage(SteeringMessageEvent { content, .. }) => {
                messages.push(Message::User {
                    content: content.clone(),
                })
            }
            EventBody::AssistantMessage(AssistantMessageEvent {
                content,
                tool_calls,
                thinking,
                ..
            }) => {
                model_call_ids = tool_calls.iter().map(|call| call.id.clone()).collect();
                sealed.clear();
                assistant_at = Some(messages.len());
                messages.push(Message::Assistant {
                    content: content.clone(),
                    tool_calls: tool_calls.clone(),
                    thinking: thinking.clone(),
                });
            }
            EventBody::ToolResult(ToolResultEvent {
                call_id,
                content,
                is_error,
                content_blocks,
                shown_input,
                ..
            }) => {
                if model_call_ids.iter().any(|id| id == call_id) {
                    if let (Some(shown), Some(at)) = (shown_input, assistant_at) {
                        let logged = sealed.iter().rev().find(|call| call.call_id == *call_id);
                        show_input(&mut messages[at], call_id, *shown, logged.copied());
                    }
                    messages.push(Message::Tool {
                        tool_call_id: call_id.clone(),
                        content: content.clone(),
                        is_error: *is_error,
                        blocks: content_blocks.clone(),
                    });
                }
            }
            EventBody::ContextMessage(ContextMessageEvent { content, .. }) => {
                messages.push(Message::System {
                    content: content.clone(),
                })
            }
            EventBody::ToolCall(call) => sealed.push(call),
            // `/clear`: the conversation starts again from here.
            EventBody::SessionCleared { .. } => {
                messages.clear();
                model_call_ids.clear();
                sealed.clear();
                assistant_at = None;
            }
            EventBody::SessionHeader(_)
            | EventBody::ModelSwitched(_)
            | EventBody::TurnStart(_)
            | EventBody::TurnEnd(_)
            | EventBody::PromptBlocked(_)
            | EventBody::CompactionStarted(_)
            | EventBody::CompactionCompleted(_)
            | EventBody::CompactionFailed(_)
            | EventBody::HookInvoked(_)
            | EventBody::HookResult(_)
            | EventBody::SeamNote(_) => {}
        }
    }
    messages
}

/// Replaces the arguments of call `call_id` in an assistant message with
/// what `shown` says: the call's logged arguments, or `{}`. A rewritten
/// call whose `tool/call` is missing keeps the model's own arguments.
fn show_input(
    message: &mut Message,
    call_id: &str,
    shown: ShownInput,
    logged: Option<&ToolCallEvent>,
) {
    let Message::Assistant { tool_calls, .. } = message else {
        return;
    };
    let Some(call) = tool_calls.iter_mut().find(|call| call.id == call_id) else {
        return;
    };
    match (shown, logged) {
        (ShownInput::Emptied, _) => call.arguments = serde_json::json!({}),
        (ShownInput::Rewritten, Some(logged)) => call.arguments = logged.arguments.clone(),
        (ShownInput::Rewritten, None) => {}
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use dsh_protocol::{CompactionContext, CompactionTrigger, ToolCall};
    use serde_json::json;

    use super::*;

    fn events(bodies: Vec<EventBody>) -> Vec<Event> {
        bodies
            .into_iter()
            .enumerate()
            .map(|(seq, body)| Event {
                seq: seq as u64,
                ts: String::new(),
                body,
                agent_id: None,
            })
            .collect()
    }

    fn user(text: &str) -> EventBody {
        EventBody::UserMessage(UserMessageEvent {
            turn: 1,
            content: text.into(),
            source: "user".into(),
            original_content: None,
        })
    }

    fn assistant(text: &str, calls: &[&str]) -> EventBody {
        EventBody::AssistantMessage(AssistantMessageEvent {
            turn: 1,
            step: 1,
            content: text.into(),
            tool_calls: calls
                .iter()
                .map(|id| ToolCall {
                    id: (*id).into(),
                    name: "bash".into(),
                    arguments: json!({}),
                })
                .collect(),
            usage: None,
            thinking: None,
        })
    }

    fn result(id: &str) -> EventBody {
        EventBody::ToolResult(ToolResultEvent {
            turn: 1,
            call_id: id.into(),
            is_error: false,
            content: format!("out {id}"),
            disposition: None,
            decided_by: None,
            rewrite: None,
            content_blocks: None,
            shown_input: None,
        })
    }

    fn completed(summary: &str, kept_from_seq: Option<u64>) -> EventBody {
        EventBody::CompactionCompleted(CompactionCompletedEvent {
            turn: 1,
            trigger: CompactionTrigger::Auto,
            summary: summary.into(),
            summarized_by: "model".into(),
            kept_from_seq,
            contexts: vec![CompactionContext {
                content: format!("ctx {summary}"),
                source: "hook".into(),
            }],
            tokens_before: 1,
        })
    }

    fn texts(messages: &[Message]) -> Vec<String> {
        messages
            .iter()
            .map(|message| match message {
                Message::System { content } => format!("system: {content}"),
                Message::User { content } => format!("user: {}", &content[..content.len().min(12)]),
                Message::Assistant { content, .. } => format!("assistant: {content}"),
                Message::Tool { tool_call_id, .. } => format!("tool: {tool_call_id}"),
            })
            .collect()
    }

    fn call_of(id: &str, model: &str, ran: &str) -> EventBody {
        EventBody::ToolCall(ToolCallEvent {
            turn: 1,
            call_id: id.into(),
            execution_id: format!("exec_{id}"),
            parent_execution_id: None,
            tool: "bash".into(),
            arguments: json!({ "command": ran }),
            original_arguments: (model != ran).then(|| json!({ "command": model })),
            rewritten_by: (model != ran).then(|| "hook".to_owned()),
            rewrite_conflicts: Vec::new(),
            provider_call_id: id.strip_suffix("~2").map(str::to_owned),
            origin: None,
        })
    }

    /// An assistant message whose call `ID` has `{"command": "model ID"}`.
    fn modelled(text: &str, calls: &[&str]) -> EventBody {
        let mut body = assistant(text, calls);
        if let EventBody::AssistantMessage(message) = &mut body {
            for call in &mut message.tool_calls {
                call.arguments = json!({ "command": format!("model {}", call.id) });
            }
        }
        body
    }

    fn shown(id: &str, shown_input: Option<ShownInput>) -> EventBody {
        let EventBody::ToolResult(mut event) = result(id) else {
            unreachable!()
        };
        event.shown_input = shown_input;
        EventBody::ToolResult(event)
    }

    fn arguments(messages: &[Message]) -> Vec<Vec<(String, String)>> {
        messages
            .iter()
            .filter_map(|message| match message {
                Message::Assistant { tool_calls, .. } => Some(
                    tool_calls
                        .iter()
                        .map(|call| (call.id.clone(), call.arguments.to_string()))
                        .collect(),
                ),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_shown_input_marker_puts_the_logged_or_empty_arguments_in_the_assistant_message() {
        let first = modelled("a1", &["ok", "bad", "denied", "kept", "dup", "dup~2"]);
        let log = events(vec![
            user("go"),
            first,
            call_of("ok", "model ok", "ran ok"),
            call_of("bad", "model bad", "ran bad"),
            call_of("denied", "model denied", "ran denied"),
            call_of("kept", "model kept", "ran kept"),
            call_of("dup", "model dup", "model dup"),
            call_of("dup~2", "model dup~2", "ran dup~2"),
            EventBody::ContextMessage(ContextMessageEvent {
                turn: 1,
                content: "between".into(),
                source: "hook".into(),
            }),
            // Rewritten: the tool/call's arguments; emptied: `{}`.
            shown("ok", Some(ShownInput::Rewritten)),
            shown("bad", Some(ShownInput::Emptied)),
            // A denied call gets no marker, and no marker is the model's own.
            shown("denied", None),
            shown("kept", None),
            shown("dup", None),
            // Of two calls the provider named `dup`, only the renamed one.
            shown("dup~2", Some(ShownInput::Rewritten)),
            assistant("a2", &["later"]),
            call_of("later", "x", "y"),
            shown("later", None),
        ]);
        let model = |id: &str| format!(r#"{{"command":"model {id}"}}"#);
        let owned = |pairs: &[(&str, String)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(id, args)| ((*id).to_owned(), args.clone()))
                .collect()
        };
        assert_eq!(
            arguments(&derive_messages(&log)),
            [
                owned(&[
                    ("ok", r#"{"command":"ran ok"}"#.to_owned()),
                    ("bad", "{}".to_owned()),
                    ("denied", model("denied")),
                    ("kept", model("kept")),
                    ("dup", model("dup")),
                    ("dup~2", r#"{"command":"ran dup~2"}"#.to_owned()),
                ]),
                owned(&[("later", "{}".to_owned())]),
            ]
        );
        // A marker whose call has no `tool/call` keeps the model's own input.
        let orphan = events(vec![
            modelled("a", &["lost"]),
            shown("lost", Some(ShownInput::Rewritten)),
        ]);
        assert_eq!(
            arguments(&derive_messages(&orphan)),
            [owned(&[("lost", model("lost"))])]
        );
    }

    #[test]
    fn the_summary_text_is_the_summary_block_or_the_reply_without_analysis() {
        assert_eq!(
            summary_text("<analysis>x</analysis>\n<summary>\n S \n</summary>"),
            "S"
        );
        assert_eq!(summary_text("<analysis>x</analysis> plain "), "plain");
        assert_eq!(summary_text("no tags"), "no tags");
        assert_eq!(summary_text("<summary>unclosed"), "unclosed");
        assert!(compacted_summary_message("<summary>S-TEXT</summary>").contains("\n\nS-TEXT\n\n"));
    }

    #[test]
    fn the_last_compaction_opens_the_history_and_keeps_its_tail() {
        let log = events(vec![
            user("first"),            // 0
            assistant("a1", &["c1"]), // 1
            result("c1"),             // 2
            assistant("a2", &["c2"]), // 3
            result("c2"),             // 4
            completed("S1", Some(3)), // 5
            assistant("a3", &[]),     // 6
            user("second"),           // 7
            completed("S2", Some(6)), // 8
            user("third"),            // 9
        ]);
        // Before the second compaction: S1, its context, the kept a2 + result, then newer.
        let first = derive_messages(&log[..8]);
        assert_eq!(
            texts(&first)[1..],
            [
                "system: ctx S1",
                "assistant: a2",
                "tool: c2",
                "assistant: a3",
                "user: second",
            ]
        );
        assert!(matches!(&first[0], Message::User { content } if content.contains("S1")));
        // After it: S2 replaces everything before a3.
        let second = derive_messages(&log);
        assert_eq!(
            texts(&second)[1..],
            [
                "system: ctx S2",
                "assistant: a3",
                "user: second",
                "user: third",
            ]
        );
        assert!(
            matches!(&second[0], Message::User { content } if content.contains("S2") && !content.contains("S1"))
        );
        // Without a kept tail only what follows the compaction stays.
        let bare = events(vec![user("first"), completed("S", None), user("next")]);
        assert_eq!(
            texts(&derive_messages(&bare))[1..],
            ["system: ctx S", "user: next"]
        );
    }
}
