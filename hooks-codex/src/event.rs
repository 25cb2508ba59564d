//! Codex 0.169's hook events and the per-event facts every other module needs.

use std::fmt;

use dsh_protocol::Seam;

/// One of the 14 hook events Codex 0.169 knows, in Codex's own order (the
/// order `hooks/list` reports handlers of one file in, which is also dsh's
/// configuration order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CodexEvent {
    /// Before every model request (observation only).
    PreModelRequest,
    /// After every model request (observation only).
    PostModelRequest,
    /// Before a tool runs.
    PreToolUse,
    /// When a tool needs approval.
    PermissionRequest,
    /// After a tool ran.
    PostToolUse,
    /// Before compaction (dsh does not compact).
    PreCompact,
    /// After compaction (dsh does not compact).
    PostCompact,
    /// Thread start, resume, clear, compact.
    SessionStart,
    /// Thread shutdown.
    SessionEnd,
    /// Before a prompt is sent.
    UserPromptSubmit,
    /// A sub-agent starts (dsh's `agent` tool).
    SubagentStart,
    /// A sub-agent reaches a natural stop.
    SubagentStop,
    /// A turn is about to end.
    Stop,
    /// A turn was interrupted.
    Interrupt,
}

impl CodexEvent {
    /// Every event, in Codex's order.
    pub const ALL: [CodexEvent; 14] = [
        CodexEvent::PreModelRequest,
        CodexEvent::PostModelRequest,
        CodexEvent::PreToolUse,
        CodexEvent::PermissionRequest,
        CodexEvent::PostToolUse,
        CodexEvent::PreCompact,
        CodexEvent::PostCompact,
        CodexEvent::SessionStart,
        CodexEvent::SessionEnd,
        CodexEvent::UserPromptSubmit,
        CodexEvent::SubagentStart,
        CodexEvent::SubagentStop,
        CodexEvent::Stop,
        CodexEvent::Interrupt,
    ];

    /// The configuration key and `hook_event_name` (`PreToolUse`).
    pub fn as_str(self) -> &'static str {
        match self {
            CodexEvent::PreModelRequest => "PreModelRequest",
            CodexEvent::PostModelRequest => "PostModelRequest",
            CodexEvent::PreToolUse => "PreToolUse",
            CodexEvent::PermissionRequest => "PermissionRequest",
            CodexEvent::PostToolUse => "PostToolUse",
            CodexEvent::PreCompact => "PreCompact",
            CodexEvent::PostCompact => "PostCompact",
            CodexEvent::SessionStart => "SessionStart",
            CodexEvent::SessionEnd => "SessionEnd",
            CodexEvent::UserPromptSubmit => "UserPromptSubmit",
            CodexEvent::SubagentStart => "SubagentStart",
            CodexEvent::SubagentStop => "SubagentStop",
            CodexEvent::Stop => "Stop",
            CodexEvent::Interrupt => "Interrupt",
        }
    }

    /// Parses a configuration key; unknown keys (`StopFailure`, …) are `None`.
    pub fn from_name(name: &str) -> Option<CodexEvent> {
        CodexEvent::ALL
            .into_iter()
            .find(|event| event.as_str() == name)
    }

    /// The snake-case label in trust keys and hashes (`pre_tool_use`).
    pub fn key_label(self) -> &'static str {
        match self {
            CodexEvent::PreModelRequest => "pre_model_request",
            CodexEvent::PostModelRequest => "post_model_request",
            CodexEvent::PreToolUse => "pre_tool_use",
            CodexEvent::PermissionRequest => "permission_request",
            CodexEvent::PostToolUse => "post_tool_use",
            CodexEvent::PreCompact => "pre_compact",
            CodexEvent::PostCompact => "post_compact",
            CodexEvent::SessionStart => "session_start",
            CodexEvent::SessionEnd => "session_end",
            CodexEvent::UserPromptSubmit => "user_prompt_submit",
            CodexEvent::SubagentStart => "subagent_start",
            CodexEvent::SubagentStop => "subagent_stop",
            CodexEvent::Stop => "stop",
            CodexEvent::Interrupt => "interrupt",
        }
    }

    /// The kebab-case label in `<hook_prompt hook_run_id="stop:0:…">`.
    pub fn kebab_label(self) -> String {
        self.key_label().replace('_', "-")
    }

    /// Whether Codex tests the group's matcher for this event (against the
    /// tool name, or the session-start source). Other events ignore it.
    pub fn honours_matcher(self) -> bool {
        matches!(
            self,
            CodexEvent::PreToolUse
                | CodexEvent::PermissionRequest
                | CodexEvent::PostToolUse
                | CodexEvent::SessionStart
        )
    }

    /// Whether exit code 2 with a reason on stderr blocks (or denies, or
    /// continues the turn) on this event, as the interpreter treats it;
    /// anywhere else it is a failed run.
    pub fn exit2_blocks(self) -> bool {
        match self {
            CodexEvent::PreToolUse
            | CodexEvent::PermissionRequest
            | CodexEvent::PostToolUse
            | CodexEvent::UserPromptSubmit
            | CodexEvent::Stop
            | CodexEvent::SubagentStop => true,
            CodexEvent::PreModelRequest
            | CodexEvent::PostModelRequest
            | CodexEvent::PreCompact
            | CodexEvent::PostCompact
            | CodexEvent::SessionStart
            | CodexEvent::SessionEnd
            | CodexEvent::SubagentStart
            | CodexEvent::Interrupt => false,
        }
    }

    /// Whether this event can emit `additionalContext` (otherwise Codex
    /// ignores `additionalContextLimit` with a warning).
    pub fn emits_context(self) -> bool {
        matches!(
            self,
            CodexEvent::PreToolUse
                | CodexEvent::PostToolUse
                | CodexEvent::SessionStart
                | CodexEvent::UserPromptSubmit
                | CodexEvent::SubagentStart
        )
    }

    /// Codex's default timeout in seconds when `timeout` is missing.
    pub fn default_timeout_secs(self) -> u64 {
        match self {
            CodexEvent::SessionEnd | CodexEvent::Interrupt => 1,
            CodexEvent::PreToolUse
            | CodexEvent::PermissionRequest
            | CodexEvent::PostToolUse
            | CodexEvent::SessionStart
            | CodexEvent::UserPromptSubmit
            | CodexEvent::Stop
            | CodexEvent::PreCompact
            | CodexEvent::PostCompact
            | CodexEvent::SubagentStart
            | CodexEvent::SubagentStop
            | CodexEvent::PreModelRequest
            | CodexEvent::PostModelRequest => 600,
        }
    }

    /// Codex's maximum timeout for this event, if it clamps one.
    pub fn max_timeout_secs(self) -> Option<u64> {
        match self {
            CodexEvent::SessionEnd | CodexEvent::Interrupt => Some(3),
            CodexEvent::PreToolUse
            | CodexEvent::PermissionRequest
            | CodexEvent::PostToolUse
            | CodexEvent::SessionStart
            | CodexEvent::UserPromptSubmit
            | CodexEvent::Stop
            | CodexEvent::PreCompact
            | CodexEvent::PostCompact
            | CodexEvent::SubagentStart
            | CodexEvent::SubagentStop
            | CodexEvent::PreModelRequest
            | CodexEvent::PostModelRequest => None,
        }
    }

    /// The canonical dsh seam this event runs on (`hook/invoked.seam`).
    pub fn seam(self) -> Seam {
        match self {
            CodexEvent::PreModelRequest | CodexEvent::PostModelRequest => Seam::ModelRequest,
            CodexEvent::PreToolUse => Seam::PreExecute,
            CodexEvent::PermissionRequest => Seam::Approval,
            CodexEvent::PostToolUse => Seam::PostExecute,
            CodexEvent::SessionStart => Seam::SessionStart,
            CodexEvent::SessionEnd => Seam::SessionEnd,
            CodexEvent::UserPromptSubmit => Seam::PromptSubmit,
            CodexEvent::Stop => Seam::TurnContinuation,
            CodexEvent::Interrupt => Seam::TurnEnd,
            CodexEvent::PreCompact | CodexEvent::PostCompact => Seam::Compaction,
            CodexEvent::SubagentStart => Seam::SubagentStart,
            CodexEvent::SubagentStop => Seam::SubagentStop,
        }
    }

    /// Codex's error entry when the hook printed JSON it could not accept.
    pub fn invalid_json_message(self) -> &'static str {
        match self {
            CodexEvent::PreToolUse => "hook returned invalid pre-tool-use JSON output",
            CodexEvent::PermissionRequest => "hook returned invalid permission-request JSON output",
            CodexEvent::PostToolUse => "hook returned invalid post-tool-use JSON output",
            CodexEvent::SessionStart => "hook returned invalid session start JSON output",
            CodexEvent::UserPromptSubmit => "hook returned invalid user prompt submit JSON output",
            CodexEvent::Stop => "hook returned invalid stop hook JSON output",
            CodexEvent::Interrupt => "hook returned invalid interrupt hook JSON output",
            CodexEvent::SubagentStart => "hook returned invalid subagent start JSON output",
            CodexEvent::SubagentStop => "hook returned invalid subagent stop hook JSON output",
            CodexEvent::PreCompact
            | CodexEvent::PostCompact
            | CodexEvent::PreModelRequest
            | CodexEvent::PostModelRequest
            | CodexEvent::SessionEnd => "hook returned invalid JSON output",
        }
    }
}

impl fmt::Display for CodexEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
