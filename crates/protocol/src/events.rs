//! Session-log events (the README's "The session log").

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{HookDecision, Seam, TokenUsage, ToolCall};

/// One line of a session log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// 0, 1, 2, … in file order, gap-free.
    pub seq: u64,
    /// Wall-clock time of the append (RFC 3339, UTC).
    pub ts: String,
    /// What happened.
    #[serde(flatten)]
    pub body: EventBody,
    /// The subagent whose nested run this event belongs to (`a` + 16 hex),
    /// absent for the session's own events. A nested run's events share the
    /// parent's turn number and sit inside the parent's `agent` tool call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
}

/// Why a turn closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnEndReason {
    /// The model stopped calling tools and continuation policy let it stop.
    Completed,
    /// The claimed prompt was blocked by prompt-submit policy (zero steps).
    Rejected,
    /// Cancelled by the user or the embedding application.
    Interrupted,
    /// The model provider failed.
    Error,
    /// The step bound was reached.
    MaxSteps,
    /// Policy asked the turn to stop (`continue: false`).
    Stopped,
}

impl TurnEndReason {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            TurnEndReason::Completed => "completed",
            TurnEndReason::Rejected => "rejected",
            TurnEndReason::Interrupted => "interrupted",
            TurnEndReason::Error => "error",
            TurnEndReason::MaxSteps => "max_steps",
            TurnEndReason::Stopped => "stopped",
        }
    }
}

/// The external hook dialect a `hook/*` event belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    /// Claude Code hooks (`.claude/settings*.json`).
    Claude,
    /// Codex hooks (`.codex/hooks.json`, `config.toml`).
    Codex,
}

impl Dialect {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Claude => "claude",
            Dialect::Codex => "codex",
        }
    }
}

/// How a hook process ended, as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookOutcomeKind {
    /// The process exited on its own with an exit code.
    Exited,
    /// The process was killed by a signal it did not get from dsh.
    Signaled,
    /// dsh killed it at its deadline.
    TimedOut,
    /// dsh killed it because the work it guarded was cancelled.
    Cancelled,
    /// It never ran (command not found, permission denied, …).
    SpawnFailed,
    /// It was not awaited (`async` handlers); its end is not recorded here.
    Detached,
    /// An HTTP hook answered with a non-2xx status (in `http_status`): a
    /// non-blocking error. (A 2xx is recorded as `exited` with code 0.)
    HttpError,
}

/// The payload of an [`Event`], tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum EventBody {
    /// First line of every session log.
    #[serde(rename = "session/header")]
    SessionHeader {
        /// The session's id.
        session_id: String,
        /// The session's working directory.
        cwd: String,
        /// The dsh version that created the log.
        version: String,
        /// Start-up notices (unsupported hook events or handler types, config warnings).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        notices: Vec<String>,
    },
    /// A turn opens (one per claimed send).
    #[serde(rename = "turn/start")]
    TurnStart {
        /// 1-based turn number.
        turn: u64,
    },
    /// An allowed prompt, after prompt policy (rewritten if a listener rewrote it).
    #[serde(rename = "user/message")]
    UserMessage {
        /// Turn number.
        turn: u64,
        /// The prompt the model sees.
        content: String,
        /// Who sent it (`user`, …).
        source: String,
        /// The original text when policy rewrote it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        original_content: Option<String>,
    },
    /// A prompt vetoed by prompt-submit policy, in place of its `user/message`.
    #[serde(rename = "prompt/blocked")]
    PromptBlocked {
        /// Turn number.
        turn: u64,
        /// The original prompt.
        content: String,
        /// Who sent it.
        source: String,
        /// Why it was blocked (user-facing).
        reason: String,
    },
    /// A model reply.
    #[serde(rename = "assistant/message")]
    AssistantMessage {
        /// Turn number.
        turn: u64,
        /// 1-based step within the turn.
        step: u64,
        /// The reply text.
        content: String,
        /// Tool calls, in order.
        tool_calls: Vec<ToolCall>,
        /// Token usage when the provider reported it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<TokenUsage>,
    },
    /// A sealed tool execution, before policy.
    #[serde(rename = "tool/call")]
    ToolCall {
        /// Turn number.
        turn: u64,
        /// The model's call id.
        call_id: String,
        /// dsh's opaque execution id.
        execution_id: String,
        /// The execution id of the enclosing call, for nested dispatch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_execution_id: Option<String>,
        /// dsh's native tool name.
        tool: String,
        /// The arguments the tool runs with.
        arguments: Value,
        /// The model's own arguments, when a hook rewrote them.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        original_arguments: Option<Value>,
        /// Who rewrote the arguments.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rewritten_by: Option<String>,
        /// Rewrites that lost to an earlier one (configuration order wins).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        rewrite_conflicts: Vec<String>,
        /// The id the provider sent, when dsh renamed a repeated one (the
        /// second `call_1` of a message becomes `call_1~2`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider_call_id: Option<String>,
    },
    /// The authoritative outcome of a tool call.
    #[serde(rename = "tool/result")]
    ToolResult {
        /// Turn number.
        turn: u64,
        /// The model's call id.
        call_id: String,
        /// Whether the model is told the call failed.
        is_error: bool,
        /// The text the model sees.
        content: String,
        /// Which phase decided the outcome (`executed`, `denied`, …).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        disposition: Option<String>,
    },
    /// Model-facing context added by a plugin or hook.
    #[serde(rename = "context/message")]
    ContextMessage {
        /// Turn number.
        turn: u64,
        /// The text the model sees.
        content: String,
        /// Who added it.
        source: String,
    },
    /// Model-facing steering inside a turn (a forced continuation's reason).
    #[serde(rename = "steering/message")]
    SteeringMessage {
        /// Turn number.
        turn: u64,
        /// The text the model sees.
        content: String,
        /// Who steered.
        source: String,
    },
    /// A turn closes.
    #[serde(rename = "turn/end")]
    TurnEnd {
        /// Turn number.
        turn: u64,
        /// Why it closed.
        reason: TurnEndReason,
        /// A human-readable explanation (model error text, stop reason, cap notice).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// Before an external hook command runs.
    #[serde(rename = "hook/invoked")]
    HookInvoked {
        /// The open turn, or none for session-scoped hooks (session start before turn 1, session end).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        turn: Option<u64>,
        /// Pairs this with its `hook/result`.
        invocation_id: String,
        /// `claude` or `codex`.
        dialect: Dialect,
        /// The external event name (`PreToolUse`, …).
        event: String,
        /// The canonical seam it runs on.
        seam: Seam,
        /// The matcher of the group it came from.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        matcher: Option<String>,
        /// Where the handler was configured (`file:line:column` or `file#hooks.Event[0].hooks[1]`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        origin: Option<String>,
        /// The command as configured.
        command: String,
        /// The exact JSON sent on stdin.
        input: Value,
        /// The tool call this hook judges, for tool events.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
    },
    /// After a hook command ends.
    #[serde(rename = "hook/result")]
    HookResult {
        /// The open turn, or none for session-scoped hooks.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        turn: Option<u64>,
        /// Pairs this with its `hook/invoked`.
        invocation_id: String,
        /// How the process ended.
        outcome: HookOutcomeKind,
        /// Exit code; null if it never ran or was killed.
        exit_code: Option<i32>,
        /// The signal that ended it, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signal: Option<i32>,
        /// Whether dsh killed it at its deadline.
        timed_out: bool,
        /// Wall time from spawn to reap.
        duration_ms: u64,
        /// Captured stdout (bounded; a marker says when cut).
        stdout: String,
        /// Captured stderr (bounded; a marker says when cut).
        stderr: String,
        /// Why it could not run, or other runner diagnostics.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// The status an HTTP hook's response had.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        http_status: Option<u16>,
        /// The hook's stdout as the dialect parsed it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parsed_output: Option<Value>,
        /// What it meant on the seam (boxed: it is by far the largest field).
        decision: Box<HookDecision>,
    },
}

impl EventBody {
    /// The `type` tag of this event.
    pub fn type_name(&self) -> &'static str {
        match self {
            EventBody::SessionHeader { .. } => "session/header",
            EventBody::TurnStart { .. } => "turn/start",
            EventBody::UserMessage { .. } => "user/message",
            EventBody::PromptBlocked { .. } => "prompt/blocked",
            EventBody::AssistantMessage { .. } => "assistant/message",
            EventBody::ToolCall { .. } => "tool/call",
            EventBody::ToolResult { .. } => "tool/result",
            EventBody::ContextMessage { .. } => "context/message",
            EventBody::SteeringMessage { .. } => "steering/message",
            EventBody::TurnEnd { .. } => "turn/end",
            EventBody::HookInvoked { .. } => "hook/invoked",
            EventBody::HookResult { .. } => "hook/result",
        }
    }
}
