//! The Chat Completions wire format: dsh messages → request body, and the
//! streamed chunk shapes. Private to this crate; nothing else speaks it.

use dsh_model::StreamSink;
use dsh_protocol::{Message, ModelReply, ModelRequest, TokenUsage, ToolCall};
use serde_json::{Map, Value};

use crate::api::Function;
use crate::api::chat::{self, Completion, Usage};

use crate::settings::ProviderSettings;
use crate::stream::Accumulator;
use crate::transport::WireApi;

/// OpenAI-compatible Chat Completions: `POST {base_url}/chat/completions`
/// with a bearer token.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ChatApi;

impl WireApi for ChatApi {
    type Accumulator = Accumulator;
    type Body = chat::Request;

    fn url(&self, base_url: &str) -> String {
        format!("{}/chat/completions", base_url.trim_end_matches('/'))
    }

    fn request_body(&self, settings: &ProviderSettings, request: &ModelRequest) -> chat::Request {
        request_body(settings, request)
    }

    fn accumulator(&self) -> Accumulator {
        Accumulator::default()
    }

    fn whole_reply(&self, bytes: &[u8], sink: &mut dyn StreamSink) -> Result<ModelReply, String> {
        let completion: Completion = serde_json::from_slice(bytes)
            .map_err(|error| format!("malformed completion ({error})"))?;
        let Some(choice) = completion.choices.into_iter().next() else {
            return Err("the completion has no choices".to_owned());
        };
        let text = choice.message.content.unwrap_or_default();
        if !text.is_empty() {
            sink.text_delta(&text);
        }
        let tool_calls = choice
            .message
            .tool_calls
            .into_iter()
            .enumerate()
            .map(|(index, call)| ToolCall {
                id: call.id.unwrap_or_else(|| format!("call_{}", index + 1)),
                name: call.function.name,
                arguments: parse_arguments(&call.function.arguments),
            })
            .collect();
        Ok(ModelReply {
            text,
            tool_calls,
            usage: completion.usage.map(Into::into),
            thinking: None,
        })
    }
}

/// Builds the body of one streaming request.
pub(crate) fn request_body(settings: &ProviderSettings, request: &ModelRequest) -> chat::Request {
    // `/model NAME` names the model per request; otherwise the configured one.
    let model = request.model.as_ref().unwrap_or(&settings.model);
    chat::Request {
        model: model.clone(),
        messages: request.messages.iter().map(request_message).collect(),
        tools: request
            .tools
            .iter()
            .map(|tool| chat::Tool {
                kind: Function::Function,
                function: chat::FunctionSpec {
                    name: tool.name.clone(),
                    description: tool.description.clone(),
                    parameters: tool.input_schema.clone(),
                },
            })
            .collect(),
        stream: true,
        stream_options: chat::StreamOptions {
            include_usage: true,
        },
        max_tokens: settings.max_tokens,
        temperature: settings.temperature.map(f64::from),
    }
}

fn request_message(message: &Message) -> chat::RequestMessage {
    match message {
        Message::System { content } => chat::RequestMessage::System {
            content: content.clone(),
        },
        Message::User { content } => chat::RequestMessage::User {
            content: content.clone(),
        },
        Message::Assistant {
            content,
            tool_calls,
            ..
        } => chat::RequestMessage::Assistant {
            // OpenAI documents `content: null` for a reply that only calls tools.
            content: (tool_calls.is_empty() || !content.is_empty()).then(|| content.clone()),
            tool_calls: tool_calls.iter().map(request_tool_call).collect(),
        },
        // An MCP result's blocks go as their text: OpenAI-compatible servers
        // (DeepSeek, the default) are not all known to take content parts on
        // a tool message.
        Message::Tool {
            tool_call_id,
            content,
            ..
        } => chat::RequestMessage::Tool {
            tool_call_id: tool_call_id.clone(),
            content: content.clone(),
        },
    }
}

fn request_tool_call(call: &ToolCall) -> chat::RequestToolCall {
    chat::RequestToolCall {
        id: call.id.clone(),
        kind: Function::Function,
        function: chat::FunctionCall {
            name: call.name.clone(),
            arguments: arguments_string(&call.arguments),
        },
    }
}

/// The `arguments` string sent back to the model. Arguments the model sent
/// as invalid JSON are kept as a JSON string value (see
/// [`parse_arguments`]) and go back exactly as received.
pub(crate) fn arguments_string(arguments: &Value) -> String {
    match arguments {
        Value::String(raw) => raw.clone(),
        other @ Value::Null
        | other @ Value::Bool(_)
        | other @ Value::Number(_)
        | other @ Value::Array(_)
        | other @ Value::Object(_) => other.to_string(),
    }
}

/// Turns the model's `arguments` string into a value.
///
/// Valid JSON becomes that value; an empty string becomes `{}` (some servers
/// send nothing for a tool without parameters); anything else is kept
/// verbatim as a JSON string. A model's malformed arguments are the model's
/// mistake, not a provider failure: the tool registry rejects a non-object
/// with a message the model can read and correct, and the original text
/// round-trips unchanged in the next request.
pub(crate) fn parse_arguments(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(Map::new());
    }
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned()))
}

impl From<Usage> for TokenUsage {
    fn from(usage: Usage) -> Self {
        let cached = usage
            .prompt_tokens_details
            .unwrap_or_default()
            .cached_tokens
            .max(usage.prompt_cache_hit_tokens.unwrap_or(0))
            .min(usage.prompt_tokens);
        TokenUsage {
            input_tokens: usage.prompt_tokens,
            output_tokens: usage.completion_tokens,
            cache_read_input_tokens: cached,
            ..Default::default()
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod usage_tests {
    use super::*;

    #[test]
    fn cache_reads_come_from_openai_or_deepseek_fields() {
        let usage = |value: serde_json::Value| -> TokenUsage {
            serde_json::from_value::<Usage>(value).unwrap().into()
        };
        let openai = usage(
            serde_json::json!({"prompt_tokens": 100, "completion_tokens": 5,
            "prompt_tokens_details": {"cached_tokens": 64}}),
        );
        assert_eq!(openai.cache_read_input_tokens, 64);
        assert_eq!(openai.input_tokens, 100);
        let deepseek = usage(
            serde_json::json!({"prompt_tokens": 100, "completion_tokens": 5,
            "prompt_cache_hit_tokens": 80, "prompt_cache_miss_tokens": 20}),
        );
        assert_eq!(deepseek.cache_read_input_tokens, 80);
        let plain = usage(serde_json::json!({"prompt_tokens": 3, "completion_tokens": 4}));
        assert_eq!(plain.cache_read_input_tokens, 0);
        assert_eq!(plain.cache_creation_input_tokens, 0);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use dsh_protocol::ToolSpec;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn messages_and_tools_map_to_chat_completions() {
        let request = ModelRequest {
            turn: 1,
            step: 2,
            messages: vec![
                Message::System {
                    content: "sys".into(),
                },
                Message::User {
                    content: "hi".into(),
                },
                Message::Assistant {
                    content: String::new(),
                    thinking: None,
                    tool_calls: vec![
                        ToolCall {
                            id: "call_1".into(),
                            name: "bash".into(),
                            arguments: json!({"command": "ls"}),
                        },
                        ToolCall {
                            id: "call_2".into(),
                            name: "read".into(),
                            arguments: Value::String("{not json".into()),
                        },
                    ],
                },
                Message::Tool {
                    tool_call_id: "call_1".into(),
                    content: "out".into(),
                    is_error: false,
                    blocks: None,
                },
                Message::Assistant {
                    content: "done".into(),
                    tool_calls: vec![],
                    thinking: None,
                },
            ],
            tools: vec![ToolSpec {
                name: "bash".into(),
                description: "runs".into(),
                input_schema: json!({"type": "object"}),
            }],
            model: None,
        };
        let settings = ProviderSettings {
            model: "m".into(),
            max_tokens: Some(10),
            ..ProviderSettings::default()
        };
        // The bytes sent, keys in order.
        assert_eq!(
            serde_json::to_string(&request_body(&settings, &request)).unwrap(),
            json!({
                "model": "m",
                "messages": [
                    {"role": "system", "content": "sys"},
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "call_1", "type": "function",
                         "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}},
                        {"id": "call_2", "type": "function",
                         "function": {"name": "read", "arguments": "{not json"}},
                    ]},
                    {"role": "tool", "tool_call_id": "call_1", "content": "out"},
                    {"role": "assistant", "content": "done"},
                ],
                "tools": [{"type": "function", "function": {
                    "name": "bash", "description": "runs", "parameters": {"type": "object"}}}],
                "stream": true,
                "stream_options": {"include_usage": true},
                "max_tokens": 10,
            })
            .to_string()
        );
    }

    #[test]
    fn a_switched_model_names_the_request() {
        let request = ModelRequest {
            turn: 1,
            step: 1,
            messages: Vec::new(),
            tools: Vec::new(),
            model: Some("deepseek-reasoner".into()),
        };
        let settings = ProviderSettings {
            model: "deepseek-chat".into(),
            ..ProviderSettings::default()
        };
        assert_eq!(request_body(&settings, &request).model, "deepseek-reasoner");
    }

    #[test]
    fn arguments_parse_leniently() {
        assert_eq!(parse_arguments(r#"{"a":1}"#), json!({"a": 1}));
        assert_eq!(parse_arguments(""), json!({}));
        assert_eq!(parse_arguments("{\"a\":"), json!("{\"a\":"));
        assert_eq!(arguments_string(&parse_arguments("{\"a\":")), "{\"a\":");
    }
}
