//! Anthropic Messages (`POST {base}/v1/messages`): the request body and
//! the streamed events.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Loose;

/// One streaming request.
#[derive(Debug, Serialize)]
pub(crate) struct Request {
    pub model: String,
    /// The system prompt's text blocks; left out when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub system: Vec<Block>,
    pub messages: Vec<RequestMessage>,
    /// Left out when the request offers no tools.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool>,
    pub max_tokens: u32,
    /// Extended thinking, when on (then no `temperature`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking: Option<Thinking>,
    /// Widened from the settings' `f32` the way a JSON value holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    pub stream: bool,
}

/// One message: `user` or `assistant`, and its content blocks.
#[derive(Debug, Serialize)]
pub(crate) struct RequestMessage {
    pub role: Role,
    pub content: Vec<Content>,
}

/// A message's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Role {
    User,
    Assistant,
}

/// A content block of a request message: one dsh builds, or a thinking
/// block the API handed out, sent back exactly as it came.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum Content {
    Block(Block),
    /// A thinking block this process kept from a reply.
    Thinking(ThinkingBlock),
    /// A thinking block as the session log holds it (a resumed session):
    /// the protocol's opaque thinking item, sent back as it is.
    Logged(Value),
}

/// A content block dsh builds, by its `type`. `cache_control` comes last,
/// on the blocks that end a cached prefix.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Block {
    Text {
        text: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolUse {
        id: String,
        name: String,
        /// The call's arguments: arbitrary JSON (an object).
        input: Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolResult {
        tool_use_id: String,
        content: ToolResultContent,
        #[serde(skip_serializing_if = "Option::is_none")]
        is_error: Option<bool>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
}

impl Block {
    /// A text block.
    pub fn text(text: &str) -> Self {
        Block::Text {
            text: text.to_owned(),
            cache_control: None,
        }
    }

    /// Marks the block as the end of a cached prefix.
    pub fn cache(&mut self) {
        let (Block::Text { cache_control, .. }
        | Block::ToolUse { cache_control, .. }
        | Block::ToolResult { cache_control, .. }) = self;
        *cache_control = Some(CacheControl::Ephemeral);
    }
}

/// A tool result's content: the text, or an MCP result's content blocks.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum ToolResultContent {
    Text(String),
    Blocks(Vec<dsh_protocol::ContentBlock>),
}

/// A prompt-cache breakpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(crate) enum CacheControl {
    Ephemeral,
}

/// A tool offered to the model.
#[derive(Debug, Serialize)]
pub(crate) struct Tool {
    pub name: String,
    pub description: String,
    /// The tool's JSON Schema: arbitrary JSON.
    pub input_schema: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

/// `thinking`: extended thinking on, with its budget.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(crate) enum Thinking {
    Enabled { budget_tokens: u32 },
}

/// One streamed event, by its `type`; only the fields dsh reads.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Event {
    MessageStart {
        #[serde(default)]
        message: StartMessage,
    },
    ContentBlockStart {
        #[serde(default)]
        index: usize,
        /// The block, read as far as dsh knows its type (a block that is
        /// no object, or has no `type`, is [`Loose::Not`]).
        #[serde(default)]
        content_block: Option<Loose<StartBlock>>,
    },
    ContentBlockDelta {
        #[serde(default)]
        index: usize,
        #[serde(default)]
        delta: Delta,
    },
    MessageDelta {
        #[serde(default)]
        delta: MessageDelta,
        #[serde(default)]
        usage: Option<Usage>,
    },
    MessageStop,
    Error {
        #[serde(default)]
        error: ErrorDetail,
    },
    /// `ping`, `content_block_stop` and event types added later.
    #[serde(other)]
    Other,
}

/// A `content_block_start` block, by its `type`: a text or tool call's
/// first fields (a key of another type reads as absent), or a thinking
/// block, kept whole.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum StartBlock {
    Text {
        #[serde(default)]
        text: Option<Loose<String>>,
    },
    ToolUse {
        #[serde(default)]
        id: Option<Loose<String>>,
        #[serde(default)]
        name: Option<Loose<String>>,
    },
    Thinking(ThinkingText),
    RedactedThinking(RedactedThinking),
    /// Server tools and block types added later: not dsh's.
    #[serde(other)]
    Other,
}

/// A thinking block as the API hands it out (its text and signature
/// arrive as deltas) and takes it back, signed and unchanged.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ThinkingBlock {
    Thinking(ThinkingText),
    RedactedThinking(RedactedThinking),
}

/// A `thinking` block's fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ThinkingText {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// Keys dsh does not know: they go back as they came.
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

/// A `redacted_thinking` block's fields: the encrypted `data`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RedactedThinking {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    /// Keys dsh does not know: they go back as they came.
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

/// A key's text, when it held a string.
pub(crate) fn text_of(key: Option<&Loose<String>>) -> Option<&str> {
    match key {
        Some(Loose::Is(text)) => Some(text),
        Some(Loose::Not(_)) | None => None,
    }
}

/// `message_start`'s message: its usage so far.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct StartMessage {
    #[serde(default)]
    pub usage: Option<Usage>,
}

/// A piece of a content block, by its `type`.
#[derive(Debug, Default, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Delta {
    #[serde(rename = "text_delta")]
    Text {
        #[serde(default)]
        text: String,
    },
    #[serde(rename = "input_json_delta")]
    InputJson {
        #[serde(default)]
        partial_json: String,
    },
    #[serde(rename = "thinking_delta")]
    Thinking {
        #[serde(default)]
        thinking: String,
    },
    #[serde(rename = "signature_delta")]
    Signature {
        #[serde(default)]
        signature: String,
    },
    #[default]
    #[serde(other)]
    Other,
}

/// `message_delta`'s delta.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct MessageDelta {
    #[serde(default)]
    pub stop_reason: Option<String>,
}

/// Usage as the API reports it (`input_tokens` excludes the cached
/// part); an event carries only the counts it updates.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
pub(crate) struct Usage {
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
    #[serde(default)]
    pub cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    pub cache_creation_input_tokens: Option<u64>,
}

/// An `error` event's error.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ErrorDetail {
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
}
