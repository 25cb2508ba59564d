//! Claude Code's stdout messages (`--output-format json|stream-json`), keys
//! in the order Claude Code 2.1.328 writes them
//! (`shared/reference/claude-agent-sdk/KEYS.md`).
//!
//! Every message is typed: the `result` message here ([`ResultMessage`]),
//! the others in [`crate::lines`]; [`Message`] says which kind each is.

use serde::{Serialize, Serializer};

use crate::lines::{AssistantMessage, Envelope, StreamEventLine, SystemMessage, UserMessage};

/// The Claude Code version whose print-mode protocol dsh speaks; the
/// `claude_code_version` of `system/init` (the Python SDK reads it there).
pub const CLAUDE_CODE_VERSION: &str = "2.1.328";

/// One stdout message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// `system` messages: `init`, `permission_denied`.
    System(SystemMessage),
    /// One content block of a model reply.
    Assistant(Box<Envelope<AssistantMessage>>),
    /// Tool results going back to the model.
    User(Box<Envelope<UserMessage>>),
    /// A streaming event (`--include-partial-messages`).
    StreamEvent(Box<StreamEventLine>),
    /// The end of a turn.
    Result(Box<ResultMessage>),
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Message::System(line) => line.serialize(serializer),
            Message::Assistant(line) => line.serialize(serializer),
            Message::User(line) => line.serialize(serializer),
            Message::StreamEvent(line) => line.serialize(serializer),
            Message::Result(result) => result.serialize(serializer),
        }
    }
}

impl Message {
    /// The message as one line of JSON (no newline; `null` if it cannot be
    /// encoded, which only a path that is not UTF-8 can cause).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "null".to_owned())
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
    pub model_usage: ModelUsageRows,
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
    /// The HTTP status of an API error (`Some(None)`, written `null`, on
    /// success or an error without a response; absent with `errors`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_error_status: Option<Option<u16>>,
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
    /// The call's input (the model's arguments, whatever the tool takes).
    pub tool_input: serde_json::Value,
}

/// `modelUsage`: one row per model, in the order the models were first
/// used, keyed by the model's name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelUsageRows(pub Vec<(String, ModelUsage)>);

impl Serialize for ModelUsageRows {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(model, row)| (model, row)))
    }
}

/// One model's tokens and cost in `modelUsage`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelUsage {
    /// Input tokens not read from or written to the cache.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from the cache.
    pub cache_read_input_tokens: u64,
    /// Input tokens written to the cache.
    pub cache_creation_input_tokens: u64,
    /// Web searches (dsh runs none: 0).
    pub web_search_requests: u64,
    /// What the model's requests cost at list prices, in USD.
    #[serde(rename = "costUSD")]
    pub cost_usd: f64,
    /// The model's context window, when dsh knows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// `list` for a known price, `unknown` for a model costed at 0.
    pub cost_basis: &'static str,
}
