//! The mock's Responses API encoding: a [`MockReply`] as the event stream
//! OpenAI's Responses API sends (and Codex accepts): `response.created`,
//! per output item `response.output_item.added`, its deltas and
//! `response.output_item.done`, then `response.completed` with usage.
//! A reply's thinking blocks become reasoning items (the thinking their
//! summary, the signature their encrypted content); its cache reads are
//! the usage's cached tokens.

use serde_json::{Value, json};

use super::MockReply;

/// The `data:` payloads of `reply` in the Responses API's event stream.
pub fn responses_events(reply: &MockReply) -> Vec<String> {
    let mut events = vec![event(
        "response.created",
        json!({"response": {"id": "resp_mock", "status": "in_progress", "output": []}}),
    )];
    let mut output = Vec::new();
    for (number, (thinking, signature)) in reply.thinking.iter().enumerate() {
        let index = output.len();
        let id = format!("rs_mock_{number}");
        let item = json!({"type": "reasoning", "id": id, "summary": []});
        events.push(event(
            "response.output_item.added",
            json!({"output_index": index, "item": item}),
        ));
        let summary = json!([{"type": "summary_text", "text": thinking}]);
        events.push(event(
            "response.reasoning_summary_text.delta",
            json!({"item_id": id, "output_index": index, "summary_index": 0, "delta": thinking}),
        ));
        let done = json!({"type": "reasoning", "id": id, "summary": summary,
                          "encrypted_content": signature});
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
            "input_tokens_details": {"cached_tokens": usage.cache_read_input_tokens},
            "output_tokens": usage.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
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
