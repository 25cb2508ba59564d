//! OpenAI Responses (`POST {base}/responses`): the request body, in the
//! shapes and key order Codex sends, and the streamed events.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Function;

/// One streaming request.
#[derive(Debug, Serialize)]
pub(crate) struct Request {
    pub model: String,
    pub input: Vec<InputItem>,
    /// Left out, with `tool_choice` and `parallel_tool_calls`, when the
    /// request offers no tools.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    pub store: bool,
    pub stream: bool,
    /// `["reasoning.encrypted_content"]` for a reasoning model.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// Widened from the settings' `f32` the way a JSON value holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Structured output (`dsh exec --output-schema`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<TextOptions>,
}

/// An item of `input`: one dsh builds, or a reasoning item the API handed
/// out, sent back as kept.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum InputItem {
    Item(Item),
    /// A `reasoning` item with its encrypted content: opaque.
    Reasoning(Value),
}

/// An input item dsh builds, by its `type`.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Item {
    Message {
        role: Role,
        content: Vec<ContentPart>,
    },
    FunctionCall {
        call_id: String,
        name: String,
        /// The arguments as the JSON text.
        arguments: String,
    },
    FunctionCallOutput {
        call_id: String,
        output: Output,
    },
}

/// A message's role (system text goes as `developer`, as Codex sends it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Role {
    Developer,
    User,
    Assistant,
}

/// A part of a message's content, or of a function call's output.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ContentPart {
    InputText { text: Option<String> },
    OutputText { text: String },
}

/// A function call's output: its text, or an MCP result's text blocks.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum Output {
    Text(String),
    Parts(Vec<ContentPart>),
}

/// A function tool (non-strict: dsh's schemas are not written for
/// strict mode; Codex sends its own non-strict too).
#[derive(Debug, Serialize)]
pub(crate) struct Tool {
    #[serde(rename = "type")]
    pub kind: Function,
    pub name: String,
    pub description: String,
    pub strict: bool,
    /// The tool's JSON Schema: arbitrary JSON.
    pub parameters: Value,
}

/// `tool_choice`.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ToolChoice {
    Auto,
}

/// `text`: the final answer's format.
#[derive(Debug, Serialize)]
pub(crate) struct TextOptions {
    pub format: TextFormat,
}

/// A JSON Schema output format, in Codex's key order.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum TextFormat {
    JsonSchema {
        strict: bool,
        /// The caller's schema: arbitrary JSON.
        schema: Value,
        name: &'static str,
    },
}

/// One event's payload: only the fields dsh reads.
#[derive(Debug, Deserialize)]
pub(crate) struct Event {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub output_index: Option<u64>,
    #[serde(default)]
    pub item_id: Option<String>,
    /// An output item, kept whole: a reasoning item goes back as it came.
    #[serde(default)]
    pub item: Option<Value>,
    #[serde(default)]
    pub delta: Option<String>,
    #[serde(default)]
    pub arguments: Option<String>,
    #[serde(default)]
    pub response: Option<Response>,
    // The `error` event's own fields.
    #[serde(default)]
    pub code: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
}

/// The response a `response.completed`, `.incomplete` or `.failed` event
/// carries (and the whole reply of a server that did not stream).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Response {
    #[serde(default)]
    pub usage: Option<Usage>,
    /// The output items, for a server that streamed none.
    #[serde(default)]
    pub output: Option<Vec<Value>>,
    #[serde(default)]
    pub incomplete_details: Option<IncompleteDetails>,
    #[serde(default)]
    pub error: Option<ResponseError>,
}

/// Why a response stopped incomplete.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct IncompleteDetails {
    #[serde(default)]
    pub reason: Option<String>,
}

/// A failed response's error.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ResponseError {
    #[serde(default)]
    pub code: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
}

/// Usage as the Responses API reports it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub(crate) struct Usage {
    /// Prompt tokens, cached ones included.
    #[serde(default)]
    pub input_tokens: u64,
    /// Output tokens, reasoning included.
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub input_tokens_details: InputDetails,
    #[serde(default)]
    pub output_tokens_details: OutputDetails,
}

/// The breakdown of `input_tokens`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub(crate) struct InputDetails {
    #[serde(default)]
    pub cached_tokens: u64,
}

/// The breakdown of `output_tokens`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub(crate) struct OutputDetails {
    #[serde(default)]
    pub reasoning_tokens: u64,
}
