//! The mock's Anthropic Messages encoding: a [`MockReply`] as the events
//! the Messages API streams: `message_start` (with the prompt usage), one
//! content block per thinking block, the text and each tool call,
//! `message_delta` with the stop reason and output tokens, `message_stop`.

use serde::Serialize;

use super::MockReply;

/// One streamed event, by its `type` (which comes first).
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event<'a> {
    MessageStart {
        message: StartMessage,
    },
    Ping,
    ContentBlockStart {
        index: usize,
        content_block: Block<'a>,
    },
    ContentBlockDelta {
        index: usize,
        delta: Delta<'a>,
    },
    ContentBlockStop {
        index: usize,
    },
    MessageDelta {
        delta: StopDelta,
        usage: OutputUsage,
    },
    MessageStop,
}

/// `message_start`'s message: empty, with the prompt's usage.
#[derive(Serialize)]
struct StartMessage {
    id: &'static str,
    #[serde(rename = "type")]
    kind: &'static str,
    role: &'static str,
    model: &'static str,
    content: [(); 0],
    stop_reason: Option<&'static str>,
    stop_sequence: Option<&'static str>,
    usage: StartUsage,
}

#[derive(Serialize)]
struct StartUsage {
    input_tokens: u64,
    cache_read_input_tokens: u64,
    cache_creation_input_tokens: u64,
    output_tokens: u64,
}

/// A content block as it starts (empty).
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    Thinking {
        thinking: &'static str,
    },
    Text {
        text: &'static str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: Empty,
    },
}

/// `{}`: a tool call's input before its pieces arrive.
#[derive(Serialize)]
struct Empty {}

/// A piece of a content block.
#[derive(Serialize)]
#[serde(tag = "type")]
enum Delta<'a> {
    #[serde(rename = "thinking_delta")]
    Thinking { thinking: &'a str },
    #[serde(rename = "signature_delta")]
    Signature { signature: &'a str },
    #[serde(rename = "text_delta")]
    Text { text: &'a str },
    #[serde(rename = "input_json_delta")]
    InputJson { partial_json: &'a str },
}

#[derive(Serialize)]
struct StopDelta {
    stop_reason: &'static str,
    stop_sequence: Option<&'static str>,
}

#[derive(Serialize)]
struct OutputUsage {
    output_tokens: u64,
}

/// The `data:` payloads of `reply`, ending in `message_stop`.
pub(super) fn anthropic_events(reply: &MockReply) -> Vec<String> {
    let usage = reply.usage.unwrap_or_default();
    // The API's `input_tokens` excludes the cached part.
    let uncached = usage
        .input_tokens
        .saturating_sub(usage.cache_read_input_tokens)
        .saturating_sub(usage.cache_creation_input_tokens);
    let mut events = vec![
        Event::MessageStart {
            message: StartMessage {
                id: "msg_mock",
                kind: "message",
                role: "assistant",
                model: "mock",
                content: [],
                stop_reason: None,
                stop_sequence: None,
                usage: StartUsage {
                    input_tokens: uncached,
                    cache_read_input_tokens: usage.cache_read_input_tokens,
                    cache_creation_input_tokens: usage.cache_creation_input_tokens,
                    output_tokens: 1,
                },
            },
        },
        Event::Ping,
    ];
    let mut blocks: Vec<(Block<'_>, Vec<Delta<'_>>)> = Vec::new();
    for (thinking, signature) in &reply.thinking {
        blocks.push((
            Block::Thinking { thinking: "" },
            vec![Delta::Thinking { thinking }, Delta::Signature { signature }],
        ));
    }
    if !reply.text_chunks.is_empty() {
        let pieces = reply.text_chunks.iter();
        blocks.push((
            Block::Text { text: "" },
            pieces.map(|text| Delta::Text { text }).collect(),
        ));
    }
    for call in &reply.tool_calls {
        let pieces = call.argument_chunks.iter();
        blocks.push((
            Block::ToolUse {
                id: &call.id,
                name: &call.name,
                input: Empty {},
            },
            pieces
                .map(|partial_json| Delta::InputJson { partial_json })
                .collect(),
        ));
    }
    for (index, (content_block, deltas)) in blocks.into_iter().enumerate() {
        events.push(Event::ContentBlockStart {
            index,
            content_block,
        });
        events.extend(
            deltas
                .into_iter()
                .map(|delta| Event::ContentBlockDelta { index, delta }),
        );
        events.push(Event::ContentBlockStop { index });
    }
    let stop_reason = if reply.tool_calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    events.push(Event::MessageDelta {
        delta: StopDelta {
            stop_reason,
            stop_sequence: None,
        },
        usage: OutputUsage {
            output_tokens: usage.output_tokens,
        },
    });
    events.push(Event::MessageStop);
    events
        .iter()
        // Plain structs of strings and numbers: encoding cannot fail.
        .map(|event| serde_json::to_string(event).unwrap_or_default())
        .collect()
}

#[cfg(test)]
mod tests {
    use dsh_protocol::TokenUsage;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;
    use crate::mock::MockToolCall;

    // The events as the mock wrote them with `json!` before they were
    // typed: the typed events must be the same bytes.
    fn old_anthropic_events(reply: &MockReply) -> Vec<String> {
        let usage = reply.usage.unwrap_or_default();
        // The API's `input_tokens` excludes the cached part.
        let uncached = usage
            .input_tokens
            .saturating_sub(usage.cache_read_input_tokens)
            .saturating_sub(usage.cache_creation_input_tokens);
        let mut events = vec![
            json!({"type": "message_start", "message": {
                "id": "msg_mock", "type": "message", "role": "assistant", "model": "mock",
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {
                    "input_tokens": uncached,
                    "cache_read_input_tokens": usage.cache_read_input_tokens,
                    "cache_creation_input_tokens": usage.cache_creation_input_tokens,
                    "output_tokens": 1,
                },
            }}),
            json!({"type": "ping"}),
        ];
        let mut index = 0;
        for (thinking, signature) in &reply.thinking {
            events.push(json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "thinking", "thinking": ""}}));
            events.push(json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "thinking_delta", "thinking": thinking}}));
            events.push(json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "signature_delta", "signature": signature}}));
            events.push(json!({"type": "content_block_stop", "index": index}));
            index += 1;
        }
        if !reply.text_chunks.is_empty() {
            events.push(json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "text", "text": ""}}));
            for text in &reply.text_chunks {
                events.push(json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "text_delta", "text": text}}));
            }
            events.push(json!({"type": "content_block_stop", "index": index}));
            index += 1;
        }
        for call in &reply.tool_calls {
            events.push(json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}}));
            for piece in &call.argument_chunks {
                events.push(json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": piece}}));
            }
            events.push(json!({"type": "content_block_stop", "index": index}));
            index += 1;
        }
        let stop_reason = if reply.tool_calls.is_empty() {
            "end_turn"
        } else {
            "tool_use"
        };
        events.push(json!({"type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": usage.output_tokens}}));
        events.push(json!({"type": "message_stop"}));
        events.into_iter().map(|event| event.to_string()).collect()
    }

    #[test]
    fn typed_events_are_the_bytes_the_mock_always_sent() {
        let mut full = MockReply::chunks(["Hel", "lo"])
            .with_thinking("hmm", "sig")
            .with_thinking("more", "sig2");
        full.tool_calls = vec![
            MockToolCall::new("toolu_1", "bash", &json!({"command": "ls"})),
            MockToolCall::raw("toolu_2", "read", vec!["{\"pa".into(), "th\":1}".into()]),
        ];
        full.usage = Some(TokenUsage {
            input_tokens: 10,
            output_tokens: 4,
            cache_read_input_tokens: 3,
            cache_creation_input_tokens: 2,
        });
        for reply in [MockReply::default(), MockReply::text("just words"), full] {
            assert_eq!(anthropic_events(&reply), old_anthropic_events(&reply));
        }
    }
}
