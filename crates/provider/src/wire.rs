//! The Chat Completions wire format: dsh messages → request body, and the
//! streamed chunk shapes. Private to this crate; nothing else speaks it.

use dsh_model::StreamSink;
use dsh_protocol::{Message, ModelReply, ModelRequest, TokenUsage, ToolCall};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::settings::ProviderSettings;
use crate::stream::Accumulator;
use crate::transport::WireApi;

/// OpenAI-compatible Chat Completions: `POST {base_url}/chat/completions`
/// with a bearer token.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ChatApi;

impl WireApi for ChatApi {
    type Accumulator = Accumulator;

    fn url(&self, base_url: &str) -> String {
        format!("{}/chat/completions", base_url.trim_end_matches('/'))
    }

    fn request_body(&self, settings: &ProviderSettings, request: &ModelRequest) -> Value {
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

/// Builds the JSON body of one streaming request.
pub(crate) fn request_body(settings: &ProviderSettings, request: &ModelRequest) -> Value {
    let mut body = Map::new();
    // `/model NAME` names the model per request; otherwise the configured one.
    let model = request.model.as_ref().unwrap_or(&settings.model);
    body.insert("model".into(), Value::String(model.clone()));
    body.insert(
        "messages".into(),
        Value::Array(request.messages.iter().map(message_json).collect()),
    );
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.input_schema,
                    }
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("stream".into(), Value::Bool(true));
    body.insert("stream_options".into(), json!({ "include_usage": true }));
    if let Some(max_tokens) = settings.max_tokens {
        body.insert("max_tokens".into(), json!(max_tokens));
    }
    if let Some(temperature) = settings.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    Value::Object(body)
}

fn message_json(message: &Message) -> Value {
    match message {
        Message::System { content } => json!({ "role": "system", "content": content }),
        Message::User { content } => json!({ "role": "user", "content": content }),
        Message::Assistant {
            content,
            tool_calls,
            ..
        } => {
            if tool_calls.is_empty() {
                json!({ "role": "assistant", "content": content })
            } else {
                // OpenAI documents `content: null` for a reply that only calls tools.
                let content = if content.is_empty() {
                    Value::Null
                } else {
                    Value::String(content.clone())
                };
                let calls: Vec<Value> = tool_calls.iter().map(tool_call_json).collect();
                json!({ "role": "assistant", "content": content, "tool_calls": calls })
            }
        }
        // An MCP result's blocks go as their text: OpenAI-compatible servers
        // (DeepSeek, the default) are not all known to take content parts on
        // a tool message.
        Message::Tool {
            tool_call_id,
            content,
            ..
        } => json!({ "role": "tool", "tool_call_id": tool_call_id, "content": content }),
    }
}

fn tool_call_json(call: &ToolCall) -> Value {
    json!({
        "id": call.id,
        "type": "function",
        "function": { "name": call.name, "arguments": arguments_string(&call.arguments) },
    })
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

/// One `data:` payload of a streamed reply.
#[derive(Debug, Deserialize)]
pub(crate) struct Chunk {
    #[serde(default)]
    pub choices: Vec<Choice>,
    #[serde(default)]
    pub usage: Option<Usage>,
    /// Some servers report a failure inside the stream.
    #[serde(default)]
    pub error: Option<Value>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Choice {
    #[serde(default)]
    pub index: u32,
    #[serde(default)]
    pub delta: Option<Delta>,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct Delta {
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ToolCallDelta {
    #[serde(default)]
    pub index: Option<usize>,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub function: Option<FunctionDelta>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct FunctionDelta {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub arguments: Option<String>,
}

/// Chat Completions usage. Prompt-cache reads come as OpenAI's
/// `prompt_tokens_details.cached_tokens` or DeepSeek's
/// `prompt_cache_hit_tokens` (both part of `prompt_tokens`); neither API
/// reports cache writes.
#[derive(Debug, Clone, Copy, Deserialize)]
pub(crate) struct Usage {
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
    #[serde(default)]
    pub prompt_tokens_details: Option<PromptTokensDetails>,
    #[serde(default)]
    pub prompt_cache_hit_tokens: Option<u64>,
}

/// OpenAI's breakdown of `prompt_tokens`.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub(crate) struct PromptTokensDetails {
    #[serde(default)]
    pub cached_tokens: u64,
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

/// A whole (non-streamed) completion, for servers that ignore `stream: true`.
#[derive(Debug, Deserialize)]
pub(crate) struct Completion {
    #[serde(default)]
    pub choices: Vec<CompletionChoice>,
    #[serde(default)]
    pub usage: Option<Usage>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct CompletionChoice {
    pub message: CompletionMessage,
}

#[derive(Debug, Deserialize)]
pub(crate) struct CompletionMessage {
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub tool_calls: Vec<CompletionToolCall>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct CompletionToolCall {
    #[serde(default)]
    pub id: Option<String>,
    pub function: CompletionFunction,
}

#[derive(Debug, Deserialize)]
pub(crate) struct CompletionFunction {
    pub name: String,
    #[serde(default)]
    pub arguments: String,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use dsh_protocol::ToolSpec;
    use pretty_assertions::assert_eq;

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
        assert_eq!(
            request_body(&settings, &request),
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
        assert_eq!(
            request_body(&settings, &request)["model"],
            json!("deepseek-reasoner")
        );
    }

    #[test]
    fn arguments_parse_leniently() {
        assert_eq!(parse_arguments(r#"{"a":1}"#), json!({"a": 1}));
        assert_eq!(parse_arguments(""), json!({}));
        assert_eq!(parse_arguments("{\"a\":"), json!("{\"a\":"));
        assert_eq!(arguments_string(&parse_arguments("{\"a\":")), "{\"a\":");
    }
}
