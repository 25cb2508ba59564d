//! The mock's Responses API encoding: a [`MockReply`] as the event stream
//! OpenAI's Responses API sends (and Codex accepts): `response.created`,
//! per output item `response.output_item.added`, its deltas and
//! `response.output_item.done`, then `response.completed` with usage.

use serde_json::{Value, json};

use super::MockReply;

/// What a Responses reply carries beyond a [`MockReply`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResponsesExtras {
    /// A reasoning item first in the output, with this encrypted content.
    pub encrypted_reasoning: Option<String>,
    /// Prompt tokens reported as served from the cache.
    pub cached_tokens: u64,
    /// Output tokens reported as reasoning.
    pub reasoning_tokens: u64,
}

/// The `data:` payloads of `reply` in the Responses API's event stream.
pub fn responses_events(reply: &MockReply, extras: &ResponsesExtras) -> Vec<String> {
    let mut events = vec![event(
        "response.created",
        json!({"response": {"id": "resp_mock", "status": "in_progress", "output": []}}),
    )];
    let mut output = Vec::new();
    if let Some(encrypted) = &extras.encrypted_reasoning {
        let index = output.len();
        let item = json!({"type": "reasoning", "id": "rs_mock", "summary": []});
        events.push(event(
            "response.output_item.added",
            json!({"output_index": index, "item": item}),
        ));
        let done = json!({"type": "reasoning", "id": "rs_mock", "summary": [],
                          "encrypted_content": encrypted});
        events.push(event(
            "response.output_item.done",
            json!({"output_index": index, "item": done}),
        ));
        output.push(done);
    }
    if !reply.text_chunks.is_empty() {
        let index = output.len();
        let id = "msg_mock";
        events.push(event(
            "response.output_item.added",
            json!({"output_index": index, "item": {
                "type": "message", "id": id, "role": "assistant", "status": "in_progress", "content": []}}),
        ));
        for piece in &reply.text_chunks {
            events.push(event(
                "response.output_text.delta",
                json!({"item_id": id, "output_index": index, "content_index": 0, "delta": piece}),
            ));
        }
        let text: String = reply.text_chunks.concat();
        let done = json!({"type": "message", "id": id, "role": "assistant", "status": "completed",
                          "content": [{"type": "output_text", "text": text, "annotations": []}]});
        events.push(event(
            "response.output_item.done",
            json!({"output_index": index, "item": done}),
        ));
        output.push(done);
    }
    for call in &reply.tool_calls {
        let index = output.len();
        let id = format!("fc_{}", call.id);
        events.push(event(
            "response.output_item.added",
            json!({"output_index": index, "item": {
                "type": "function_call", "id": id, "call_id": call.id, "name": call.name,
                "arguments": "", "status": "in_progress"}}),
        ));
        for piece in &call.argument_chunks {
            events.push(event(
                "response.function_call_arguments.delta",
                json!({"item_id": id, "output_index": index, "delta": piece}),
            ));
        }
        let arguments: String = call.argument_chunks.concat();
        events.push(event(
            "response.function_call_arguments.done",
            json!({"item_id": id, "output_index": index, "arguments": arguments}),
        ));
        let done = json!({"type": "function_call", "id": id, "call_id": call.id,
                          "name": call.name, "arguments": arguments, "status": "completed"});
        events.push(event(
            "response.output_item.done",
            json!({"output_index": index, "item": done}),
        ));
        output.push(done);
    }
    let usage = reply.usage.map(|usage| {
        json!({
            "input_tokens": usage.input_tokens,
            "input_tokens_details": {"cached_tokens": extras.cached_tokens},
            "output_tokens": usage.output_tokens,
            "output_tokens_details": {"reasoning_tokens": extras.reasoning_tokens},
            "total_tokens": usage.input_tokens + usage.output_tokens,
        })
    });
    events.push(event(
        "response.completed",
        json!({"response": {"id": "resp_mock", "status": "completed", "output": output,
                            "usage": usage}}),
    ));
    events
}

/// A failed response: `response.created`, then `response.failed` with this
/// error code and message.
pub fn responses_failed(code: &str, message: &str) -> Vec<String> {
    vec![
        event(
            "response.created",
            json!({"response": {"id": "resp_mock", "status": "in_progress"}}),
        ),
        event(
            "response.failed",
            json!({"response": {"id": "resp_mock", "status": "failed",
                                "error": {"code": code, "message": message}}}),
        ),
    ]
}

fn event(kind: &str, mut payload: Value) -> String {
    if let Value::Object(map) = &mut payload {
        map.insert("type".to_owned(), Value::String(kind.to_owned()));
    }
    payload.to_string()
}
