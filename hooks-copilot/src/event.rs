//! Copilot CLI's hook events and the two names each may be configured
//! under: the native camelCase name (Copilot payloads) and the PascalCase
//! name (Claude Code style payloads, "VS Code compatible").

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
    /// Before an MCP tool call (accepted, never fired: not observed).
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

/// Each event with its camelCase and PascalCase names, in the order of
/// Copilot's documentation.
const NAMES: [(CopilotEvent, &str, Option<&str>); 15] = [
    (
        CopilotEvent::SessionStart,
        "sessionStart",
        Some("SessionStart"),
    ),
    (
        CopilotEvent::UserPromptSubmitted,
        "userPromptSubmitted",
        Some("UserPromptSubmit"),
    ),
    (
        CopilotEvent::UserPromptTransformed,
        "userPromptTransformed",
        None,
    ),
    (CopilotEvent::PreToolUse, "preToolUse", Some("PreToolUse")),
    (
        CopilotEvent::PermissionRequest,
        "permissionRequest",
        Some("PermissionRequest"),
    ),
    (
        CopilotEvent::PostToolUse,
        "postToolUse",
        Some("PostToolUse"),
    ),
    (
        CopilotEvent::PostToolUseFailure,
        "postToolUseFailure",
        Some("PostToolUseFailure"),
    ),
    (CopilotEvent::AgentStop, "agentStop", Some("Stop")),
    (
        CopilotEvent::SubagentStart,
        "subagentStart",
        Some("SubagentStart"),
    ),
    (
        CopilotEvent::SubagentStop,
        "subagentStop",
        Some("SubagentStop"),
    ),
    (CopilotEvent::PreCompact, "preCompact", Some("PreCompact")),
    (
        CopilotEvent::Notification,
        "notification",
        Some("Notification"),
    ),
    (
        CopilotEvent::ErrorOccurred,
        "errorOccurred",
        Some("ErrorOccurred"),
    ),
    (CopilotEvent::SessionEnd, "sessionEnd", Some("SessionEnd")),
    (CopilotEvent::PreMcpToolCall, "preMcpToolCall", None),
];

impl CopilotEvent {
    /// Every event, in the order of Copilot's documentation.
    pub fn all() -> impl Iterator<Item = CopilotEvent> {
        NAMES.iter().map(|(event, _, _)| *event)
    }

    fn names(self) -> (&'static str, Option<&'static str>) {
        NAMES
            .iter()
            .find(|(event, _, _)| *event == self)
            .map_or(("", None), |(_, camel, pascal)| (*camel, *pascal))
    }

    /// The camelCase name (`hookType` in Copilot's log).
    pub fn as_str(self) -> &'static str {
        self.names().0
    }

    /// The PascalCase name, for the events that have one.
    pub fn pascal(self) -> Option<&'static str> {
        self.names().1
    }

    /// The name an entry is configured under in `mode`.
    pub fn name(self, mode: Mode) -> &'static str {
        match mode {
            Mode::Camel => self.as_str(),
            Mode::Pascal => self.pascal().unwrap_or(self.as_str()),
        }
    }

    /// Parses a configured event name (exact, case-sensitive): the event
    /// and which payload mode the name selects.
    pub fn parse(name: &str) -> Option<(CopilotEvent, Mode)> {
        NAMES.iter().find_map(|(event, camel, pascal)| {
            if *camel == name {
                Some((*event, Mode::Camel))
            } else if *pascal == Some(name) {
                Some((*event, Mode::Pascal))
            } else {
                None
            }
        })
    }

    /// The canonical seam the event runs on.
    pub fn seam(self) -> dsh_protocol::Seam {
        use dsh_protocol::Seam;
        match self {
            CopilotEvent::SessionStart => Seam::SessionStart,
            CopilotEvent::UserPromptSubmitted | CopilotEvent::UserPromptTransformed => {
                Seam::PromptSubmit
            }
            CopilotEvent::PreToolUse | CopilotEvent::PreMcpToolCall => Seam::PreExecute,
            CopilotEvent::PermissionRequest => Seam::Approval,
            CopilotEvent::PostToolUse | CopilotEvent::PostToolUseFailure => Seam::PostExecute,
            CopilotEvent::AgentStop => Seam::TurnContinuation,
            CopilotEvent::SubagentStart => Seam::SubagentStart,
            CopilotEvent::SubagentStop => Seam::SubagentStop,
            CopilotEvent::PreCompact => Seam::Compaction,
            CopilotEvent::Notification => Seam::Notification,
            CopilotEvent::ErrorOccurred => Seam::TurnFailed,
            CopilotEvent::SessionEnd => Seam::SessionEnd,
        }
    }

    /// Whether the matcher is tested against a tool name.
    pub fn matches_tools(self) -> bool {
        matches!(
            self,
            CopilotEvent::PreToolUse
                | CopilotEvent::PostToolUse
                | CopilotEvent::PostToolUseFailure
                | CopilotEvent::PermissionRequest
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
