//! Model-facing messages and tool calls.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A reply's thinking / reasoning blocks as the provider's API sent them
/// (Messages API `thinking` blocks with their signatures, Responses
/// `reasoning` items): opaque to dsh, sent back unchanged.
pub type ThinkingBlocks = Vec<Value>;

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The model's id for this call (`call_1`, `toolu_…`).
    pub id: String,
    /// dsh's native tool name (`bash`, `read`, …).
    pub name: String,
    /// Arguments exactly as the model sent them.
    pub arguments: Value,
}

/// One message of the model-facing conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// System prompt, or model-facing context added by a plugin or hook.
    System {
        /// The text the model sees.
        content: String,
    },
    /// A user prompt, or model-facing steering.
    User {
        /// The text the model sees.
        content: String,
    },
    /// A model reply, possibly calling tools.
    Assistant {
        /// The reply's text (may be empty).
        content: String,
        /// Tool calls the reply made, in order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
        /// The provider's thinking / reasoning blocks for this reply
        /// (Messages API `thinking` blocks with their signatures, Responses
        /// `reasoning` items), opaque to dsh and sent back unchanged; absent
        /// when the reply had none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thinking: Option<ThinkingBlocks>,
    },
    /// The authoritative result of one tool call.
    Tool {
        /// The id of the call this answers.
        tool_call_id: String,
        /// The text the model sees.
        content: String,
        /// Whether the model is told the call failed (`tool_result`
        /// `is_error` on the Messages API). Not part of the recorded
        /// request shape (`--requests-out`, contract §4).
        #[serde(default, skip_serializing)]
        is_error: bool,
        /// An MCP result's content blocks, given as blocks on the APIs that
        /// take them (the Messages API `tool_result` content, Responses and
        /// Chat Completions content parts); `content` is their text.
        #[serde(
            default,
            rename = "content_blocks",
            skip_serializing_if = "Option::is_none"
        )]
        blocks: Option<Vec<ContentBlock>>,
    },
}

/// One content block of a tool result, as the model is given it on the APIs
/// that take blocks: an MCP result's text blocks (the only kind dsh passes
/// on as blocks; another result goes as its text).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// `{"type":"text","text":…}`.
    Text {
        /// The block's text.
        text: String,
    },
}

impl ContentBlock {
    /// The block's text.
    pub fn text(&self) -> &str {
        match self {
            ContentBlock::Text { text } => text,
        }
    }
}

/// A tool as offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// dsh's native tool name.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments.
    pub input_schema: Value,
}

/// What a model provider is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    /// 1-based turn number.
    pub turn: u64,
    /// 1-based step number within the turn.
    pub step: u64,
    /// The conversation, system prompt first.
    pub messages: Vec<Message>,
    /// The tools on offer.
    pub tools: Vec<ToolSpec>,
    /// The model to ask, when `/model` switched it; `None`: the provider's own.
    pub model: Option<String>,
}

/// The recorded form of a model request (`--requests-out`, contract §4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestRecord {
    /// 1-based turn number.
    pub turn: u64,
    /// 1-based step number within the turn.
    pub step: u64,
    /// The conversation exactly as sent.
    pub messages: Vec<Message>,
    /// Names of the tools on offer.
    pub tools: Vec<String>,
    /// The model asked, when `/model` switched it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl From<&ModelRequest> for RequestRecord {
    fn from(request: &ModelRequest) -> Self {
        RequestRecord {
            turn: request.turn,
            step: request.step,
            messages: request.messages.clone(),
            tools: request.tools.iter().map(|tool| tool.name.clone()).collect(),
            model: request.model.clone(),
        }
    }
}

/// Token usage a provider reported for one request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Prompt tokens.
    #[serde(default)]
    pub input_tokens: u64,
    /// Completion tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Of `input_tokens`, those read from the provider's prompt cache
    /// (absent when the provider reports none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read_input_tokens: u64,
    /// Of `input_tokens`, those written to the provider's prompt cache
    /// (absent when the provider reports none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_creation_input_tokens: u64,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// A complete model reply.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelReply {
    /// The reply's text.
    pub text: String,
    /// Tool calls, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Usage, when the provider reports it.
    pub usage: Option<TokenUsage>,
    /// Thinking / reasoning blocks the provider wants sent back with this
    /// reply's tool calls (see [`Message::Assistant`]'s `thinking`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<ThinkingBlocks>,
}
