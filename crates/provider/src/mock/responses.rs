//! The mock's Responses API encoding: a [`MockReply`] as the event stream
//! OpenAI's Responses API sends (and Codex accepts): `response.created`,
//! per output item `response.output_item.added`, its deltas and
//! `response.output_item.done`, then `response.completed` with usage.
//! A reply's thinking blocks become reasoning items (the thinking their
//! summary, the signature their encrypted content); its cache reads are
//! the usage's cached tokens.

use dsh_protocol::TokenUsage;
use serde::Serialize;

use super::MockReply;

/// One event: its payload's keys, then its `type` (the mock's key order).
#[derive(Serialize)]
struct Event<T> {
    #[serde(flatten)]
    payload: T,
    #[serde(rename = "type")]
    kind: &'static str,
}

/// The payload of each event the mock sends.
#[derive(Serialize)]
#[serde(untagged)]
enum Payload<'a> {
    /// `response.created`, `response.completed`, `response.failed`.
    Response { response: Response<'a> },
    /// `response.output_item.added` / `.done`.
    Item { output_index: usize, item: Item<'a> },
    /// `response.reasoning_summary_text.delta`.
    SummaryDelta {
        item_id: &'a str,
        output_index: usize,
        summary_index: u32,
        delta: &'a str,
    },
    /// `response.output_text.delta`.
    TextDelta {
        item_id: &'a str,
        output_index: usize,
        content_index: u32,
        delta: &'a str,
    },
    /// `response.function_call_arguments.delta`.
    ArgumentsDelta {
        item_id: &'a str,
        output_index: usize,
        delta: &'a str,
    },
    /// `response.function_call_arguments.done`.
    ArgumentsDone {
        item_id: &'a str,
        output_index: usize,
        arguments: &'a str,
    },
}

/// The response an event carries.
#[derive(Serialize)]
struct Response<'a> {
    id: &'static str,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    output: Option<Vec<Item<'a>>>,
    /// On `response.completed`: the usage, `null` when the reply has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<Option<Usage>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorBody<'a>>,
}

impl Response<'_> {
    fn new(status: &'static str) -> Self {
        Response {
            id: "resp_mock",
            status,
            output: None,
            usage: None,
            error: None,
        }
    }
}

/// An output item, by its `type`.
#[derive(Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Item<'a> {
    Reasoning {
        id: String,
        summary: Vec<SummaryText<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<&'a str>,
    },
    Message {
        id: &'static str,
        role: &'static str,
        status: &'static str,
        content: Vec<OutputText>,
    },
    FunctionCall {
        id: String,
        call_id: &'a str,
        name: &'a str,
        arguments: String,
        status: &'static str,
    },
}

/// A reasoning item's summary part.
#[derive(Clone, Serialize)]
#[serde(tag = "type", rename = "summary_text")]
struct SummaryText<'a> {
    text: &'a str,
}

/// A message item's text part, with no annotations.
#[derive(Clone, Serialize)]
#[serde(tag = "type", rename = "output_text")]
struct OutputText {
    text: String,
    annotations: [(); 0],
}

/// The usage of `response.completed`.
#[derive(Serialize)]
struct Usage {
    input_tokens: u64,
    input_tokens_details: CachedTokens,
    output_tokens: u64,
    output_tokens_details: ReasoningTokens,
    total_tokens: u64,
}

#[derive(Serialize)]
struct CachedTokens {
    cached_tokens: u64,
}

#[derive(Serialize)]
struct ReasoningTokens {
    reasoning_tokens: u64,
}

impl From<TokenUsage> for Usage {
    fn from(usage: TokenUsage) -> Self {
        Usage {
            input_tokens: usage.input_tokens,
            input_tokens_details: CachedTokens {
                cached_tokens: usage.cache_read_input_tokens,
            },
            output_tokens: usage.output_tokens,
            output_tokens_details: ReasoningTokens {
                reasoning_tokens: 0,
            },
            total_tokens: usage.input_tokens + usage.output_tokens,
        }
    }
}

/// A failed response's error.
#[derive(Serialize)]
struct ErrorBody<'a> {
    code: &'a str,
    message: &'a str,
}

/// The `data:` payloads of `reply` in the Responses API's event stream.
pub fn responses_events(reply: &MockReply) -> Vec<String> {
    let mut events = vec![event(
        "response.created",
        Payload::Response {
            response: Response {
                output: Some(Vec::new()),
                ..Response::new("in_progress")
            },
        },
    )];
    let mut output = Vec::new();
    for (number, (thinking, signature)) in reply.thinking.iter().enumerate() {
        let index = output.len();
        let id = format!("rs_mock_{number}");
        let item = Item::Reasoning {
            id: id.clone(),
            summary: Vec::new(),
            encrypted_content: None,
        };
        events.push(added(index, item));
        events.push(event(
            "response.reasoning_summary_text.delta",
            Payload::SummaryDelta {
                item_id: &id,
                output_index: index,
                summary_index: 0,
                delta: thinking,
            },
        ));
        let done = Item::Reasoning {
            id: id.clone(),
            summary: vec![SummaryText { text: thinking }],
            encrypted_content: Some(signature),
        };
        events.push(finished(index, done.clone()));
        output.push(done);
    }
    if !reply.text_chunks.is_empty() {
        let index = output.len();
        let id = "msg_mock";
        let message = |status, content| Item::Message {
            id,
            role: "assistant",
            status,
            content,
        };
        events.push(added(index, message("in_progress", Vec::new())));
        for piece in &reply.text_chunks {
            events.push(event(
                "response.output_text.delta",
                Payload::TextDelta {
                    item_id: id,
                    output_index: index,
                    content_index: 0,
                    delta: piece,
                },
            ));
        }
        let text = OutputText {
            text: reply.text_chunks.concat(),
            annotations: [],
        };
        let done = message("completed", vec![text]);
        events.push(finished(index, done.clone()));
        output.push(done);
    }
    for call in &reply.tool_calls {
        let index = output.len();
        let id = format!("fc_{}", call.id);
        let function_call = |arguments: String, status| Item::FunctionCall {
            id: id.clone(),
            call_id: &call.id,
            name: &call.name,
            arguments,
            status,
        };
        events.push(added(index, function_call(String::new(), "in_progress")));
        for piece in &call.argument_chunks {
            events.push(event(
                "response.function_call_arguments.delta",
                Payload::ArgumentsDelta {
                    item_id: &id,
                    output_index: index,
                    delta: piece,
                },
            ));
        }
        let arguments: String = call.argument_chunks.concat();
        events.push(event(
            "response.function_call_arguments.done",
            Payload::ArgumentsDone {
                item_id: &id,
                output_index: index,
                arguments: &arguments,
            },
        ));
        let done = function_call(arguments, "completed");
        events.push(finished(index, done.clone()));
        output.push(done);
    }
    events.push(event(
        "response.completed",
        Payload::Response {
            response: Response {
                output: Some(output),
                usage: Some(reply.usage.map(Usage::from)),
                ..Response::new("completed")
            },
        },
    ));
    events
}

/// A failed response: `response.created`, then `response.failed` with this
/// error code and message.
pub fn responses_failed(code: &str, message: &str) -> Vec<String> {
    vec![
        event(
            "response.created",
            Payload::Response {
                response: Response::new("in_progress"),
            },
        ),
        event(
            "response.failed",
            Payload::Response {
                response: Response {
                    error: Some(ErrorBody { code, message }),
                    ..Response::new("failed")
                },
            },
        ),
    ]
}

fn added(index: usize, item: Item<'_>) -> String {
    event(
        "response.output_item.added",
        Payload::Item {
            output_index: index,
            item,
        },
    )
}

fn finished(index: usize, item: Item<'_>) -> String {
    event(
        "response.output_item.done",
        Payload::Item {
            output_index: index,
            item,
        },
    )
}

/// One event's JSON text (serializing these plain structs cannot fail).
fn event(kind: &'static str, payload: Payload<'_>) -> String {
    serde_json::to_string(&Event { payload, kind }).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};

    use super::*;
    use crate::mock::MockToolCall;

    // The events as the mock wrote them with `json!` before they were
    // typed: the typed events must be the same bytes.
    /// The `data:` payloads of `reply` in the Responses API's event stream.
    fn old_responses_events(reply: &MockReply) -> Vec<String> {
        let mut events = vec![old_event(
            "response.created",
            json!({"response": {"id": "resp_mock", "status": "in_progress", "output": []}}),
        )];
        let mut output = Vec::new();
        for (number, (thinking, signature)) in reply.thinking.iter().enumerate() {
            let index = output.len();
            let id = format!("rs_mock_{number}");
            let item = json!({"type": "reasoning", "id": id, "summary": []});
            events.push(old_event(
                "response.output_item.added",
                json!({"output_index": index, "item": item}),
            ));
            let summary = json!([{"type": "summary_text", "text": thinking}]);
            events.push(old_event(
                "response.reasoning_summary_text.delta",
                json!({"item_id": id, "output_index": index, "summary_index": 0, "delta": thinking}),
            ));
            let done = json!({"type": "reasoning", "id": id, "summary": summary,
                              "encrypted_content": signature});
            events.push(old_event(
                "response.output_item.done",
                json!({"output_index": index, "item": done}),
            ));
            output.push(done);
        }
        if !reply.text_chunks.is_empty() {
            let index = output.len();
            let id = "msg_mock";
            events.push(old_event(
                "response.output_item.added",
                json!({"output_index": index, "item": {
                    "type": "message", "id": id, "role": "assistant", "status": "in_progress", "content": []}}),
            ));
            for piece in &reply.text_chunks {
                events.push(old_event(
                    "response.output_text.delta",
                    json!({"item_id": id, "output_index": index, "content_index": 0, "delta": piece}),
                ));
            }
            let text: String = reply.text_chunks.concat();
            let done = json!({"type": "message", "id": id, "role": "assistant", "status": "completed",
                              "content": [{"type": "output_text", "text": text, "annotations": []}]});
            events.push(old_event(
                "response.output_item.done",
                json!({"output_index": index, "item": done}),
            ));
            output.push(done);
        }
        for call in &reply.tool_calls {
            let index = output.len();
            let id = format!("fc_{}", call.id);
            events.push(old_event(
                "response.output_item.added",
                json!({"output_index": index, "item": {
                    "type": "function_call", "id": id, "call_id": call.id, "name": call.name,
                    "arguments": "", "status": "in_progress"}}),
            ));
            for piece in &call.argument_chunks {
                events.push(old_event(
                    "response.function_call_arguments.delta",
                    json!({"item_id": id, "output_index": index, "delta": piece}),
                ));
            }
            let arguments: String = call.argument_chunks.concat();
            events.push(old_event(
                "response.function_call_arguments.done",
                json!({"item_id": id, "output_index": index, "arguments": arguments}),
            ));
            let done = json!({"type": "function_call", "id": id, "call_id": call.id,
                              "name": call.name, "arguments": arguments, "status": "completed"});
            events.push(old_event(
                "response.output_item.done",
                json!({"output_index": index, "item": done}),
            ));
            output.push(done);
        }
        let usage = reply.usage.map(|usage| {
            json!({
                "input_tokens": usage.input_tokens,
                "input_tokens_details": {"cached_tokens": usage.cache_read_input_tokens},
                "output_tokens": usage.output_tokens,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": usage.input_tokens + usage.output_tokens,
            })
        });
        events.push(old_event(
            "response.completed",
            json!({"response": {"id": "resp_mock", "status": "completed", "output": output,
                                "usage": usage}}),
        ));
        events
    }

    /// A failed response: `response.created`, then `response.failed` with this
    /// error code and message.
    fn old_responses_failed(code: &str, message: &str) -> Vec<String> {
        vec![
            old_event(
                "response.created",
                json!({"response": {"id": "resp_mock", "status": "in_progress"}}),
            ),
            old_event(
                "response.failed",
                json!({"response": {"id": "resp_mock", "status": "failed",
                                    "error": {"code": code, "message": message}}}),
            ),
        ]
    }

    fn old_event(kind: &str, mut payload: Value) -> String {
        if let Value::Object(map) = &mut payload {
            map.insert("type".to_owned(), Value::String(kind.to_owned()));
        }
        payload.to_string()
    }

    #[test]
    fn typed_events_are_the_bytes_the_mock_always_sent() {
        let mut full = MockReply::chunks(["Hel", "lo"]);
        full.thinking = vec![("hmm".to_owned(), "sig".to_owned())];
        full.tool_calls = vec![
            MockToolCall::new("call_1", "bash", &json!({"command": "ls"})),
            MockToolCall::raw("call_2", "read", vec!["{\"pa".into(), "th\":1}".into()]),
        ];
        full.usage = Some(TokenUsage {
            input_tokens: 10,
            output_tokens: 4,
            cache_read_input_tokens: 3,
            cache_creation_input_tokens: 0,
        });
        for reply in [MockReply::default(), MockReply::text("just words"), full] {
            assert_eq!(responses_events(&reply), old_responses_events(&reply));
        }
        assert_eq!(
            responses_failed("server_error", "try again"),
            old_responses_failed("server_error", "try again")
        );
    }
}
