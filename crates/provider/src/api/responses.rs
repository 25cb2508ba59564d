//! OpenAI Responses (`POST {base}/responses`): the request body, in the
//! shapes and key order Codex sends, and the streamed events.

use serde::de::IgnoredAny;
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
    /// A reasoning item this process kept from a reply.
    Reasoning(ReplayedReasoning),
    /// A reasoning item as the session log holds it (a resumed session):
    /// the protocol's opaque thinking item, sent back as it is.
    Logged(Value),
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

/// One streamed event, by its `type`; only the events and fields dsh
/// reads. An event of another type (`response.created`, reasoning
/// summaries, `content_part.*`, …) is [`Event::Other`] and skipped.
#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
pub(crate) enum Event {
    /// `response.output_item.added`: an item starts.
    #[serde(rename = "response.output_item.added")]
    ItemAdded {
        #[serde(default)]
        output_index: Option<u64>,
        #[serde(default)]
        item: Option<Loose<OutputItem>>,
    },
    /// `response.output_item.done`: an item, finished and whole.
    #[serde(rename = "response.output_item.done")]
    ItemDone {
        #[serde(default)]
        output_index: Option<u64>,
        #[serde(default)]
        item: Option<Loose<OutputItem>>,
    },
    /// A piece of a message's text (or of its refusal).
    #[serde(
        rename = "response.output_text.delta",
        alias = "response.refusal.delta"
    )]
    TextDelta {
        #[serde(default)]
        output_index: Option<u64>,
        #[serde(default)]
        item_id: Option<String>,
        #[serde(default)]
        delta: Option<String>,
    },
    /// A piece of a function call's arguments.
    #[serde(rename = "response.function_call_arguments.delta")]
    ArgumentsDelta {
        #[serde(default)]
        output_index: Option<u64>,
        #[serde(default)]
        item_id: Option<String>,
        #[serde(default)]
        delta: Option<String>,
    },
    /// A function call's whole arguments.
    #[serde(rename = "response.function_call_arguments.done")]
    ArgumentsDone {
        #[serde(default)]
        output_index: Option<u64>,
        #[serde(default)]
        item_id: Option<String>,
        #[serde(default)]
        arguments: Option<String>,
    },
    /// The response finished.
    #[serde(rename = "response.completed")]
    Completed {
        #[serde(default)]
        response: Option<Response>,
    },
    /// The response stopped early (`incomplete_details.reason` says why).
    #[serde(rename = "response.incomplete")]
    Incomplete {
        #[serde(default)]
        response: Option<Response>,
    },
    /// The response failed (`response.error`).
    #[serde(rename = "response.failed")]
    Failed {
        #[serde(default)]
        response: Option<Response>,
    },
    /// A stream-level error.
    #[serde(rename = "error")]
    Error {
        #[serde(default)]
        code: Option<String>,
        #[serde(default)]
        message: Option<String>,
    },
    /// Every other event type: nothing dsh needs.
    #[serde(other)]
    Other,
}

/// An event's `type` alone, to tell an event without one (skipped, as
/// a gateway's stray line) from a malformed event of a known type.
#[derive(Debug, Deserialize)]
pub(crate) struct EventType {
    #[serde(rename = "type", default)]
    pub kind: Option<IgnoredAny>,
}

/// The response a `response.completed`, `.incomplete` or `.failed` event
/// carries (and the whole reply of a server that did not stream).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Response {
    #[serde(default)]
    pub usage: Option<Usage>,
    /// The output items, for a server that streamed none.
    #[serde(default)]
    pub output: Option<Vec<Loose<OutputItem>>>,
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

/// An output item, by its `type`: what dsh reads of it. A key of
/// another type reads as absent (an item that is no object at all, or has
/// no `type`, is [`Loose::Not`] where it is read, and counts as
/// [`OutputItem::Other`]).
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum OutputItem {
    /// An assistant message.
    Message {
        #[serde(default)]
        id: Option<Loose<String>>,
        #[serde(default)]
        content: Option<Loose<Vec<Loose<PartView>>>>,
    },
    /// A function call.
    FunctionCall {
        #[serde(default)]
        id: Option<Loose<String>>,
        #[serde(default)]
        call_id: Option<Loose<String>>,
        #[serde(default)]
        name: Option<Loose<String>>,
        #[serde(default)]
        arguments: Option<Loose<String>>,
    },
    /// A reasoning item: its summary and (with `include`) its encrypted
    /// content, which go back with the calls it led to.
    Reasoning {
        #[serde(default)]
        id: Option<Loose<String>>,
        /// The summary parts, sent back as the API wrote them.
        #[serde(default)]
        summary: Option<Value>,
        #[serde(default)]
        encrypted_content: Option<Loose<String>>,
    },
    /// Web search calls and every other item type: not dsh's.
    #[serde(other)]
    Other,
}

/// A reasoning item as it goes back in `input`: type, summary and the
/// encrypted content. The `id` stays behind: with `store: false` the API
/// has no item of that id to look up and would refuse the reference.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename = "reasoning")]
pub(crate) struct ReplayedReasoning {
    /// The summary parts, as the API sent them (`[]` when it sent none).
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

/// A key's text, when it held a string.
pub(crate) fn text_of(key: Option<&Loose<String>>) -> Option<&str> {
    match key {
        Some(Loose::Is(text)) => Some(text),
        Some(Loose::Not(_)) | None => None,
    }
}

impl OutputItem {
    /// The item's `id`, when a string.
    pub fn id(&self) -> Option<&str> {
        match self {
            OutputItem::Message { id, .. }
            | OutputItem::FunctionCall { id, .. }
            | OutputItem::Reasoning { id, .. } => text_of(id.as_ref()),
            OutputItem::Other => None,
        }
    }

    /// A message item's text: each part's `text`, or its `refusal`
    /// (empty for any other item).
    pub fn message_text(&self) -> String {
        let OutputItem::Message {
            content: Some(Loose::Is(parts)),
            ..
        } = self
        else {
            return String::new();
        };
        parts
            .iter()
            .filter_map(|part| match part {
                // A `text` of another type does not fall back to `refusal`.
                Loose::Is(part) => match &part.text {
                    Some(Loose::Is(text)) => Some(text.clone()),
                    Some(Loose::Not(_)) => None,
                    None => text_of(part.refusal.as_ref()).map(str::to_owned),
                },
                Loose::Not(_) => None,
            })
            .collect()
    }
}
