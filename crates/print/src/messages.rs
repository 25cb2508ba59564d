//! Claude Code's stdout messages (`--output-format json|stream-json`), keys
//! in the order Claude Code 2.1.328 writes them
//! (`shared/reference/claude-agent-sdk/KEYS.md`).
//!
//! The `result` message is typed ([`ResultMessage`]); the others are JSON
//! objects built in wire order ([`Message`] says which kind each is).

use serde::Serialize;
use serde_json::{Map, Value};

/// The Claude Code version whose print-mode protocol dsh speaks; the
/// `claude_code_version` of `system/init` (the Python SDK reads it there).
pub const CLAUDE_CODE_VERSION: &str = "2.1.328";

/// One stdout message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// `system` messages: `init`, `permission_denied`, ….
    System(Value),
    /// One content block of a model reply.
    Assistant(Value),
    /// Tool results going back to the model.
    User(Value),
    /// A raw streaming event (`--include-partial-messages`).
    StreamEvent(Value),
    /// The end of a turn.
    Result(Box<ResultMessage>),
}

impl Message {
    /// The message as JSON.
    pub fn to_value(&self) -> Value {
        match self {
            Message::System(value)
            | Message::Assistant(value)
            | Message::User(value)
            | Message::StreamEvent(value) => value.clone(),
            Message::Result(result) => serde_json::to_value(result).unwrap_or(Value::Null),
        }
    }

    /// The message as one line of JSON (no newline).
    pub fn to_line(&self) -> String {
        self.to_value().to_string()
    }
}

/// The `result` message: the last line of `stream-json`, the whole of
/// `json`. Key order is Claude Code's, which does not start with `type`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResultMessage {
    /// Milliseconds spent waiting on the model API during the turn.
    pub duration_api_ms: u64,
    /// The last reply's stop reason (`end_turn`, `tool_use`), when one came.
    pub stop_reason: Option<String>,
    /// The session id.
    pub session_id: String,
    /// What the session's requests cost at list prices, in USD (0 for a
    /// model without a known price).
    pub total_cost_usd: f64,
    /// The session's tokens, Anthropic-style (`input_tokens` uncached).
    pub usage: Usage,
    /// Tokens and cost per model.
    #[serde(rename = "modelUsage")]
    pub model_usage: Map<String, Value>,
    /// The tool calls a permission check refused.
    pub permission_denials: Vec<PermissionDenial>,
    /// Why the turn ended (`completed`, `max_turns`, `api_error`, …).
    pub terminal_reason: String,
    /// Whether the turn failed.
    pub is_error: bool,
    /// Model turns: one more than the rounds of tool results.
    pub num_turns: u64,
    /// `success`, `error_max_turns` or `error_during_execution`.
    pub subtype: String,
    /// The HTTP status of an API error (`null` on success; absent with `errors`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_error_status: Option<Value>,
    /// Anthropic's error type of an API error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_error_type: Option<String>,
    /// The final text, or the API error's text (absent with `errors`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// What went wrong, for the error subtypes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<String>>,
    /// Always `result`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Milliseconds from the turn's start to its end.
    pub duration_ms: u64,
    /// This message's id.
    pub uuid: String,
    /// Prompts waiting behind this turn (always 0 in print mode).
    pub queued_turn_count: u64,
    /// 0 for the first result of the process, 1 for the next, ….
    pub result_index: u64,
}

/// Token counts, Anthropic's `usage` shape.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    /// Input tokens not read from or written to the cache.
    pub input_tokens: u64,
    /// Input tokens written to the cache.
    pub cache_creation_input_tokens: u64,
    /// Input tokens read from the cache.
    pub cache_read_input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Server-side tools (dsh runs none: zeros).
    pub server_tool_use: ServerToolUse,
}

/// Server-side tool requests.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ServerToolUse {
    /// Web searches.
    pub web_search_requests: u64,
    /// Web fetches.
    pub web_fetch_requests: u64,
}

impl Usage {
    /// From dsh's usage, whose `input_tokens` include the cached ones.
    pub fn from_tokens(tokens: &dsh_protocol::TokenUsage) -> Self {
        Usage {
            input_tokens: tokens
                .input_tokens
                .saturating_sub(tokens.cache_read_input_tokens)
                .saturating_sub(tokens.cache_creation_input_tokens),
            cache_creation_input_tokens: tokens.cache_creation_input_tokens,
            cache_read_input_tokens: tokens.cache_read_input_tokens,
            output_tokens: tokens.output_tokens,
            server_tool_use: ServerToolUse::default(),
        }
    }
}

/// A tool call a permission check refused.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PermissionDenial {
    /// The tool's name as the caller sees it.
    pub tool_name: String,
    /// The model's call id.
    pub tool_use_id: String,
    /// The call's input.
    pub tool_input: Value,
}
