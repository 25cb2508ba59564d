//! Codex 0.169's hook events and the per-event facts every other module needs.

use std::fmt;

use dsh_hooks::names::{EventTable, Tabled};
use dsh_protocol::Seam;

use CodexEvent as E;

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

impl Tabled for CodexEvent {
    /// Every event with its configuration key and `hook_event_name`, and
    /// its seam, in Codex's order.
    #[rustfmt::skip]
    const TABLE: EventTable<CodexEvent> = EventTable(&[
        (E::PreModelRequest, "PreModelRequest", None, Seam::ModelRequest),
        (E::PostModelRequest, "PostModelRequest", None, Seam::ModelRequest),
        (E::PreToolUse, "PreToolUse", None, Seam::PreExecute),
        (E::PermissionRequest, "PermissionRequest", None, Seam::Approval),
        (E::PostToolUse, "PostToolUse", None, Seam::PostExecute),
        (E::PreCompact, "PreCompact", None, Seam::Compaction),
        (E::PostCompact, "PostCompact", None, Seam::Compaction),
        (E::SessionStart, "SessionStart", None, Seam::SessionStart),
        (E::SessionEnd, "SessionEnd", None, Seam::SessionEnd),
        (E::UserPromptSubmit, "UserPromptSubmit", None, Seam::PromptSubmit),
        (E::SubagentStart, "SubagentStart", None, Seam::SubagentStart),
        (E::SubagentStop, "SubagentStop", None, Seam::SubagentStop),
        (E::Stop, "Stop", None, Seam::TurnContinuation),
        (E::Interrupt, "Interrupt", None, Seam::TurnEnd),
    ]);
}

impl CodexEvent {
    /// Parses a configuration key; unknown keys (`StopFailure`, …) are `None`.
    pub fn from_name(name: &str) -> Option<CodexEvent> {
        Self::TABLE.parse(name).map(|(event, _)| event)
    }

    /// The snake-case label in trust keys and hashes (`pre_tool_use`): the
    /// name's words, lower-cased.
    pub fn key_label(self) -> String {
        let mut label = String::new();
        for c in self.as_str().chars() {
            if c.is_ascii_uppercase() && !label.is_empty() {
                label.push('_');
            }
            label.push(c.to_ascii_lowercase());
        }
        label
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
        matches!(
            self,
            E::PreToolUse
                | E::PermissionRequest
                | E::PostToolUse
                | E::UserPromptSubmit
                | E::Stop
                | E::SubagentStop
        )
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
        self.max_timeout_secs().map_or(600, |_| 1)
    }

    /// Codex's maximum timeout for this event, if it clamps one (the
    /// shutdown events: 3 seconds, 1 by default).
    pub fn max_timeout_secs(self) -> Option<u64> {
        matches!(self, E::SessionEnd | E::Interrupt).then_some(3)
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
