//! Copilot CLI's hook events and the two names each may be configured
//! under: the native camelCase name (Copilot payloads) and the PascalCase
//! name (Claude Code style payloads, "VS Code compatible").

use dsh_hooks::names::{EventTable, Tabled};
use dsh_protocol::Seam;

use CopilotEvent as E;

/// One Copilot CLI hook event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CopilotEvent {
    /// A session started (`new`, `resume`).
    SessionStart,
    /// A prompt was submitted.
    UserPromptSubmitted,
    /// The prompt as the model will get it (after the date preamble).
    UserPromptTransformed,
    /// Before a tool runs.
    PreToolUse,
    /// The permission flow of a call no `preToolUse` hook decided.
    PermissionRequest,
    /// A tool ran.
    PostToolUse,
    /// A tool failed.
    PostToolUseFailure,
    /// The agent ended its turn.
    AgentStop,
    /// A subagent started.
    SubagentStart,
    /// A subagent ended its turn.
    SubagentStop,
    /// Before the history is compacted.
    PreCompact,
    /// A notification (an async shell finished, …).
    Notification,
    /// An error (a failed model call, …).
    ErrorOccurred,
    /// The session ended.
    SessionEnd,
    /// Before an MCP tool call's request is sent ([`crate::mcp_call`]).
    PreMcpToolCall,
}

/// Which payload shape a configured entry gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mode {
    /// Configured under the camelCase name: Copilot's own payload.
    Camel,
    /// Configured under the PascalCase name (or in Claude Code's nested
    /// form): snake_case payload, ISO timestamp, Claude tool names.
    Pascal,
}

impl Tabled for CopilotEvent {
    /// Each event with its camelCase and PascalCase names and its seam, in
    /// the order of Copilot's documentation.
    #[rustfmt::skip]
    const TABLE: EventTable<CopilotEvent> = EventTable(&[
        (E::SessionStart, "sessionStart", Some("SessionStart"), Seam::SessionStart),
        (E::UserPromptSubmitted, "userPromptSubmitted", Some("UserPromptSubmit"), Seam::PromptSubmit),
        (E::UserPromptTransformed, "userPromptTransformed", None, Seam::PromptSubmit),
        (E::PreToolUse, "preToolUse", Some("PreToolUse"), Seam::PreExecute),
        (E::PermissionRequest, "permissionRequest", Some("PermissionRequest"), Seam::Approval),
        (E::PostToolUse, "postToolUse", Some("PostToolUse"), Seam::PostExecute),
        (E::PostToolUseFailure, "postToolUseFailure", Some("PostToolUseFailure"), Seam::PostExecute),
        (E::AgentStop, "agentStop", Some("Stop"), Seam::TurnContinuation),
        (E::SubagentStart, "subagentStart", Some("SubagentStart"), Seam::SubagentStart),
        (E::SubagentStop, "subagentStop", Some("SubagentStop"), Seam::SubagentStop),
        (E::PreCompact, "preCompact", Some("PreCompact"), Seam::Compaction),
        (E::Notification, "notification", Some("Notification"), Seam::Notification),
        (E::ErrorOccurred, "errorOccurred", Some("ErrorOccurred"), Seam::TurnFailed),
        (E::SessionEnd, "sessionEnd", Some("SessionEnd"), Seam::SessionEnd),
        (E::PreMcpToolCall, "preMcpToolCall", Some("PreMcpToolCall"), Seam::BeforeDispatch),
    ]);
}

impl CopilotEvent {
    /// The name an entry is configured under in `mode`.
    pub fn name(self, mode: Mode) -> &'static str {
        match mode {
            Mode::Camel => self.as_str(),
            Mode::Pascal => self.alias().unwrap_or(self.as_str()),
        }
    }

    /// Parses a configured event name (exact, case-sensitive): the event
    /// and which payload mode the name selects.
    pub fn parse(name: &str) -> Option<(CopilotEvent, Mode)> {
        let (event, pascal) = Self::TABLE.parse(name)?;
        Some((event, if pascal { Mode::Pascal } else { Mode::Camel }))
    }

    /// Whether the matcher is tested against a tool name.
    pub fn matches_tools(self) -> bool {
        matches!(
            self,
            CopilotEvent::PreToolUse
                | CopilotEvent::PostToolUse
                | CopilotEvent::PostToolUseFailure
                | CopilotEvent::PermissionRequest
                | CopilotEvent::PreMcpToolCall
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_casings_name_the_same_event() {
        assert_eq!(
            CopilotEvent::parse("UserPromptSubmit"),
            Some((CopilotEvent::UserPromptSubmitted, Mode::Pascal))
        );
        assert_eq!(
            CopilotEvent::parse("agentStop"),
            Some((CopilotEvent::AgentStop, Mode::Camel))
        );
        assert_eq!(
            CopilotEvent::parse("Stop"),
            Some((CopilotEvent::AgentStop, Mode::Pascal))
        );
        // x_invalid_configs: unknown names are ignored.
        assert_eq!(CopilotEvent::parse("beforeToolUse"), None);
        assert_eq!(CopilotEvent::parse("pretooluse"), None);
    }
}
