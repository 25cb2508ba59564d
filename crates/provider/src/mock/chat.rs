//! The mock's Chat Completions encoding: a [`MockReply`] as the
//! `chat.completion.chunk`s an OpenAI-compatible server streams: the
//! assistant role, the text pieces, each tool call's head and argument
//! pieces, the finish reason, then (when set) a usage chunk with no choices.

use dsh_protocol::TokenUsage;
use serde::Serialize;

use super::MockReply;

/// One `chat.completion.chunk`.
#[derive(Serialize)]
struct Chunk<'a> {
    id: &'static str,
    object: &'static str,
    created: u64,
    model: &'static str,
    choices: Vec<Choice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<Usage>,
}

impl<'a> Chunk<'a> {
    /// A chunk of the one choice the mock streams.
    fn of(delta: Delta<'a>, finish_reason: Option<&'static str>) -> Self {
        Chunk {
            choices: vec![Choice {
                index: 0,
                delta,
                finish_reason,
            }],
            ..Chunk::empty()
        }
    }

    fn empty() -> Self {
        Chunk {
            id: "chatcmpl-mock",
            object: "chat.completion.chunk",
            created: 0,
            model: "mock",
            choices: Vec::new(),
            usage: None,
        }
    }

    fn line(&self) -> String {
        // Plain structs of strings and numbers: encoding cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[derive(Serialize)]
struct Choice<'a> {
    index: u32,
    delta: Delta<'a>,
    finish_reason: Option<&'static str>,
}

/// What a chunk adds; absent keys are left out (`{}` on the last chunk).
#[derive(Default, Serialize)]
struct Delta<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_calls: Option<[CallDelta<'a>; 1]>,
}

/// A piece of a tool call: its head (`id`, `type`, name) first, then
/// argument pieces.
#[derive(Serialize)]
struct CallDelta<'a> {
    index: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    function: FunctionDelta<'a>,
}

#[derive(Serialize)]
struct FunctionDelta<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    arguments: &'a str,
}

/// The usage chunk's counts, with the prompt cache as DeepSeek reports it
/// (Chat Completions has no cache writes).
#[derive(Serialize)]
struct Usage {
    prompt_tokens: u64,
    completion_tokens: u64,
    total_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_hit_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_miss_tokens: Option<u64>,
}

impl From<TokenUsage> for Usage {
    fn from(usage: TokenUsage) -> Self {
        let cached = usage.cache_read_input_tokens;
        Usage {
            prompt_tokens: usage.input_tokens,
            completion_tokens: usage.output_tokens,
            total_tokens: usage.input_tokens + usage.output_tokens,
            prompt_cache_hit_tokens: (cached > 0).then_some(cached),
            prompt_cache_miss_tokens: (cached > 0)
                .then(|| usage.input_tokens.saturating_sub(cached)),
        }
    }
}

/// The `data:` payloads of `reply`, without the final `[DONE]`.
pub(super) fn chat_events(reply: &MockReply) -> Vec<String> {
    let opening = Delta {
        role: Some("assistant"),
        content: Some(""),
        ..Delta::default()
    };
    let mut events = vec![Chunk::of(opening, None).line()];
    for text in &reply.text_chunks {
        let delta = Delta {
            content: Some(text),
            ..Delta::default()
        };
        events.push(Chunk::of(delta, None).line());
    }
    for (index, call) in reply.tool_calls.iter().enumerate() {
        let piece = |head: bool, arguments| Delta {
            tool_calls: Some([CallDelta {
                index,
                id: head.then_some(call.id.as_str()),
                kind: head.then_some("function"),
                function: FunctionDelta {
                    name: head.then_some(call.name.as_str()),
                    arguments,
                },
            }]),
            ..Delta::default()
        };
        events.push(Chunk::of(piece(true, ""), None).line());
        for arguments in &call.argument_chunks {
            events.push(Chunk::of(piece(false, arguments), None).line());
        }
    }
    let finish_reason = if reply.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    events.push(Chunk::of(Delta::default(), Some(finish_reason)).line());
    if let Some(usage) = reply.usage {
        let last = Chunk {
            usage: Some(usage.into()),
            ..Chunk::empty()
        };
        events.push(last.line());
    }
    events
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};

    use super::*;
    use crate::mock::MockToolCall;

    // The chunks as the mock wrote them with `json!` before they were
    // typed: the typed chunks must be the same bytes.
    fn old_chat_events(reply: &MockReply) -> Vec<String> {
        let chunk = |choices: Value| {
            json!({
                "id": "chatcmpl-mock",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "mock",
                "choices": choices,
            })
            .to_string()
        };
        let mut events = vec![chunk(json!([
            {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}
        ]))];
        for text in &reply.text_chunks {
            events.push(chunk(json!([
                {"index": 0, "delta": {"content": text}, "finish_reason": null}
            ])));
        }
        for (index, call) in reply.tool_calls.iter().enumerate() {
            events.push(chunk(json!([{"index": 0, "delta": {"tool_calls": [{
                "index": index, "id": call.id, "type": "function",
                "function": {"name": call.name, "arguments": ""}
            }]}, "finish_reason": null}])));
            for piece in &call.argument_chunks {
                events.push(chunk(json!([{"index": 0, "delta": {"tool_calls": [{
                    "index": index, "function": {"arguments": piece}
                }]}, "finish_reason": null}])));
            }
        }
        let finish_reason = if reply.tool_calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        events.push(chunk(json!([
            {"index": 0, "delta": {}, "finish_reason": finish_reason}
        ])));
        if let Some(usage) = reply.usage {
            let mut last = json!({
                "id": "chatcmpl-mock",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "mock",
                "choices": [],
            });
            last["usage"] = json!({
                "prompt_tokens": usage.input_tokens,
                "completion_tokens": usage.output_tokens,
                "total_tokens": usage.input_tokens + usage.output_tokens,
            });
            // As DeepSeek reports its prompt cache (Chat Completions has
            // no cache writes).
            if usage.cache_read_input_tokens > 0 {
                last["usage"]["prompt_cache_hit_tokens"] = json!(usage.cache_read_input_tokens);
                last["usage"]["prompt_cache_miss_tokens"] = json!(
                    usage
                        .input_tokens
                        .saturating_sub(usage.cache_read_input_tokens)
                );
            }
            events.push(last.to_string());
        }
        events
    }

    #[test]
    fn typed_chunks_are_the_bytes_the_mock_always_sent() {
        let mut calls = MockReply::text("two calls");
        calls.tool_calls = vec![
            MockToolCall::new("call_1", "bash", &json!({"command": "ls"})),
            MockToolCall::raw("call_2", "read", vec!["{\"pa".into(), "th\":1}".into()]),
        ];
        calls.usage = Some(TokenUsage {
            input_tokens: 10,
            output_tokens: 4,
            cache_read_input_tokens: 3,
            cache_creation_input_tokens: 0,
        });
        let mut uncached = MockReply::text("no cache");
        uncached.usage = Some(TokenUsage {
            input_tokens: 7,
            output_tokens: 2,
            ..TokenUsage::default()
        });
        for reply in [MockReply::default(), uncached, calls] {
            assert_eq!(chat_events(&reply), old_chat_events(&reply));
        }
    }
}
