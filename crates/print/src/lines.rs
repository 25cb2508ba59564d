//! The `stream-json` lines other than `result`, as structs whose fields are
//! in the order Claude Code writes the keys
//! (`shared/reference/claude-agent-sdk/KEYS.md`): `system` lines, the
//! `assistant` and `user` envelopes and their API-shaped messages, and
//! `stream_event` lines with the Anthropic streaming events they carry.
//!
//! Only a tool call's `input` stays untyped: it is the model's arguments,
//! whatever the tool takes.

use std::path::PathBuf;

use serde::Serialize;

/// A JSON `null` that is always `null` on the wire (`parent_tool_use_id`,
/// `stop_sequence`, …): dsh never has anything to put there.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Null;

/// A `system` line.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SystemMessage {
    /// `system/init`, at the start of every turn.
    Init(Box<InitMessage>),
    /// `system/permission_denied`, before the refused call's tool result.
    PermissionDenied(Box<PermissionDeniedMessage>),
}

/// `system/init`: what the session is made of.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InitMessage {
    /// Always `system`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Always `init`.
    pub subtype: &'static str,
    /// The session's working directory.
    pub cwd: PathBuf,
    /// The session id.
    pub session_id: String,
    /// The tools on offer, under the caller's names.
    pub tools: Vec<String>,
    /// MCP servers and their state.
    pub mcp_servers: Vec<McpServerStatus>,
    /// The model.
    pub model: String,
    /// The permission mode, Claude Code's spelling.
    #[serde(rename = "permissionMode")]
    pub permission_mode: String,
    /// Custom slash commands.
    pub slash_commands: Vec<String>,
    /// [`crate::CLAUDE_CODE_VERSION`].
    pub claude_code_version: &'static str,
    /// Always `default`.
    pub output_style: &'static str,
    /// Custom agents.
    pub agents: Vec<String>,
    /// Skills (dsh lists none).
    pub skills: Vec<String>,
    /// Plugins (dsh lists none).
    pub plugins: Vec<String>,
    /// This message's id.
    pub uuid: String,
    /// The directory the session started in (the same as `cwd`).
    pub original_cwd: PathBuf,
    /// `--add-dir` directories.
    pub additional_directories: Vec<PathBuf>,
}

/// One MCP server of `system/init`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct McpServerStatus {
    /// The server's name.
    pub name: String,
    /// `connected`, `failed`, ….
    pub status: String,
}

/// `system/permission_denied`: a permission check refused a tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PermissionDeniedMessage {
    /// Always `system`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Always `permission_denied`.
    pub subtype: &'static str,
    /// The tool's name as the caller sees it.
    pub tool_name: String,
    /// The model's call id.
    pub tool_use_id: String,
    /// What the model was told.
    pub message: String,
    /// This message's id.
    pub uuid: String,
    /// The session id.
    pub session_id: String,
}

/// An `assistant` or `user` line: an API message in Claude Code's envelope.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Envelope<M> {
    /// `assistant` or `user`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The API message.
    pub message: M,
    /// Always `null` (subagent threading is not reproduced).
    pub parent_tool_use_id: Null,
    /// The session id.
    pub session_id: String,
    /// This message's id.
    pub uuid: String,
    /// When the line was written (RFC 3339, milliseconds, UTC).
    pub timestamp: String,
    /// A `user` line's tool result as text (`Error: …` for an error).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_use_result: Option<String>,
}

/// An assistant message, Anthropic's shape: the body of an `assistant`
/// line (one content block) and of `message_start` (none yet).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AssistantMessage {
    /// The reply's id (`msg_…`), shared by its lines.
    pub id: String,
    /// Always `message`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Always `assistant`.
    pub role: &'static str,
    /// The model.
    pub model: String,
    /// The content blocks.
    pub content: Vec<ContentBlock>,
    /// Always `null` here (the reason comes in `message_delta`).
    pub stop_reason: Null,
    /// Always `null`.
    pub stop_sequence: Null,
    /// The reply's tokens.
    pub usage: MessageUsage,
    /// `null` on an `assistant` line, absent in `message_start`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_management: Option<Null>,
}

/// A content block of an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// A tool call.
    ToolUse {
        /// The model's call id.
        id: String,
        /// The tool's name as the caller sees it.
        name: String,
        /// The call's arguments (`{}` when a stream starts the block).
        input: serde_json::Value,
    },
}

/// An API message's tokens, in the key order of Claude Code's lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct MessageUsage {
    /// Input tokens not read from or written to the cache.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens written to the cache.
    pub cache_creation_input_tokens: u64,
    /// Input tokens read from the cache.
    pub cache_read_input_tokens: u64,
}

/// A `user` line's message: tool results going back to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserMessage {
    /// Always `user`.
    pub role: &'static str,
    /// The results (dsh writes one per line).
    pub content: Vec<ToolResultBlock>,
}

/// One tool result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolResultBlock {
    /// The model's call id.
    pub tool_use_id: String,
    /// Always `tool_result`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// What the model sees.
    pub content: String,
    /// Whether the model is told the call failed.
    pub is_error: bool,
}

/// A `stream_event` line (`--include-partial-messages`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StreamEventLine {
    /// Always `stream_event`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The streaming event.
    pub event: StreamEvent,
    /// The session id.
    pub session_id: String,
    /// Always `null`.
    pub parent_tool_use_id: Null,
    /// This message's id.
    pub uuid: String,
    /// The id of the reply the event belongs to.
    pub api_message_id: String,
}

/// An Anthropic streaming event, as Claude Code passes it on.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// A reply starts.
    MessageStart {
        /// The reply so far (no content).
        message: AssistantMessage,
    },
    /// A content block starts.
    ContentBlockStart {
        /// The block's index in the reply.
        index: u64,
        /// The block, empty.
        content_block: ContentBlock,
    },
    /// A piece of a content block.
    ContentBlockDelta {
        /// The block's index in the reply.
        index: u64,
        /// The piece.
        delta: Delta,
    },
    /// A content block is complete.
    ContentBlockStop {
        /// The block's index in the reply.
        index: u64,
    },
    /// The reply's stop reason and output tokens.
    MessageDelta {
        /// The stop reason.
        delta: StopDelta,
        /// The output tokens.
        usage: OutputUsage,
    },
    /// The reply is complete.
    MessageStop,
}

/// A piece of a content block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Delta {
    /// Text.
    TextDelta {
        /// The text.
        text: String,
    },
    /// A piece of a tool call's arguments, as JSON text.
    InputJsonDelta {
        /// The JSON text.
        partial_json: String,
    },
}

/// `message_delta`'s `delta`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StopDelta {
    /// `end_turn` or `tool_use`.
    pub stop_reason: String,
    /// Always `null`.
    pub stop_sequence: Null,
}

/// `message_delta`'s `usage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct OutputUsage {
    /// Output tokens of the reply.
    pub output_tokens: u64,
}
