//! OpenAI Responses (`POST {base}/responses`): the request body, in the
//! shapes and key order Codex sends, and the streamed events.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Function, Loose};

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

/// What dsh reads of an output item: its type, ids, name, arguments and
/// message text. (The item itself is kept whole besides: a reasoning item
/// goes back exactly as it came.) A key of another type reads as absent.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ItemView {
    #[serde(rename = "type", default)]
    pub kind: Option<Loose<String>>,
    #[serde(default)]
    pub id: Option<Loose<String>>,
    #[serde(default)]
    pub call_id: Option<Loose<String>>,
    #[serde(default)]
    pub name: Option<Loose<String>>,
    #[serde(default)]
    pub arguments: Option<Loose<String>>,
    #[serde(default)]
    pub content: Option<Loose<Vec<Loose<PartView>>>>,
    #[serde(default)]
    pub encrypted_content: Option<Loose<String>>,
}

/// A reasoning item as it goes back in `input`: type, summary and the
/// encrypted content. The `id` stays behind: with `store: false` the API
/// has no item of that id to look up and would refuse the reference.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename = "reasoning")]
pub(crate) struct ReplayedReasoning {
    /// The summary parts, as the API sent them.
    pub summary: Value,
    pub encrypted_content: String,
}

/// A part of a message item's content: `output_text` or `refusal`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct PartView {
    #[serde(default)]
    pub text: Option<Loose<String>>,
    #[serde(default)]
    pub refusal: Option<Loose<String>>,
}

impl ItemView {
    /// The view of an item (all absent when it is not an object).
    pub fn of(item: &Value) -> Self {
        ItemView::deserialize(item).unwrap_or_default()
    }

    fn text(key: &Option<Loose<String>>) -> Option<&str> {
        match key {
            Some(Loose::Is(text)) => Some(text),
            Some(Loose::Not(_)) | None => None,
        }
    }

    /// `type`, when a string.
    pub fn kind(&self) -> Option<&str> {
        Self::text(&self.kind)
    }

    /// `id`, when a string.
    pub fn id(&self) -> Option<&str> {
        Self::text(&self.id)
    }

    /// `call_id`, when a string.
    pub fn call_id(&self) -> Option<&str> {
        Self::text(&self.call_id)
    }

    /// `name`, when a string.
    pub fn name(&self) -> Option<&str> {
        Self::text(&self.name)
    }

    /// `arguments`, when a string.
    pub fn arguments(&self) -> Option<&str> {
        Self::text(&self.arguments)
    }

    /// `encrypted_content`, when a string.
    pub fn encrypted_content(&self) -> Option<&str> {
        Self::text(&self.encrypted_content)
    }

    /// A message item's text: each part's `text`, or its `refusal`.
    pub fn message_text(&self) -> String {
        let Some(Loose::Is(parts)) = &self.content else {
            return String::new();
        };
        parts
            .iter()
            .filter_map(|part| match part {
                // A `text` of another type does not fall back to `refusal`.
                Loose::Is(part) => match &part.text {
                    Some(Loose::Is(text)) => Some(text.clone()),
                    Some(Loose::Not(_)) => None,
                    None => Self::text(&part.refusal).map(str::to_owned),
                },
                Loose::Not(_) => None,
            })
            .collect()
    }
}
