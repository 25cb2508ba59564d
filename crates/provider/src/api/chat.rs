//! Chat Completions (`POST {base}/chat/completions`): the request body and
//! the streamed chunks.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Function;

/// One streaming request.
#[derive(Debug, Serialize)]
pub(crate) struct Request {
    pub model: String,
    pub messages: Vec<RequestMessage>,
    /// Omitted when the request offers no tools.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool>,
    pub stream: bool,
    pub stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Widened from the settings' `f32` the way a JSON value holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
}

/// `stream_options`.
#[derive(Debug, Serialize)]
pub(crate) struct StreamOptions {
    pub include_usage: bool,
}

/// One message, by its `role`.
#[derive(Debug, Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub(crate) enum RequestMessage {
    System {
        content: String,
    },
    User {
        content: String,
    },
    /// `content` is `null` for a reply that only calls tools (as OpenAI
    /// documents it); `tool_calls` is left out when there are none.
    Assistant {
        content: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<RequestToolCall>,
    },
    Tool {
        tool_call_id: String,
        content: String,
    },
}

/// A tool call the assistant made, sent back.
#[derive(Debug, Serialize)]
pub(crate) struct RequestToolCall {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: Function,
    pub function: FunctionCall,
}

/// A call's function: its name and its arguments as the JSON text.
#[derive(Debug, Serialize)]
pub(crate) struct FunctionCall {
    pub name: String,
    pub arguments: String,
}

/// A tool offered to the model.
#[derive(Debug, Serialize)]
pub(crate) struct Tool {
    #[serde(rename = "type")]
    pub kind: Function,
    pub function: FunctionSpec,
}

/// A function tool's name, description and parameter schema.
#[derive(Debug, Serialize)]
pub(crate) struct FunctionSpec {
    pub name: String,
    pub description: String,
    /// The tool's JSON Schema: arbitrary JSON.
    pub parameters: Value,
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
    pub error: Option<ChunkError>,
}

/// A failure reported inside the stream: its `message` when there is
/// one, else the whole object as the server sent it.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum ChunkError {
    Message { message: String },
    Other(Value),
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
