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

impl CopilotEvent {
    /// Every event, in the order of Copilot's documentation.
    pub const ALL: [CopilotEvent; 15] = [
        CopilotEvent::SessionStart,
        CopilotEvent::UserPromptSubmitted,
        CopilotEvent::UserPromptTransformed,
        CopilotEvent::PreToolUse,
        CopilotEvent::PermissionRequest,
        CopilotEvent::PostToolUse,
        CopilotEvent::PostToolUseFailure,
        CopilotEvent::AgentStop,
        CopilotEvent::SubagentStart,
        CopilotEvent::SubagentStop,
        CopilotEvent::PreCompact,
        CopilotEvent::Notification,
        CopilotEvent::ErrorOccurred,
        CopilotEvent::SessionEnd,
        CopilotEvent::PreMcpToolCall,
    ];

    /// The camelCase name (`hookType` in Copilot's log).
    pub fn as_str(self) -> &'static str {
        match self {
            CopilotEvent::SessionStart => "sessionStart",
            CopilotEvent::UserPromptSubmitted => "userPromptSubmitted",
            CopilotEvent::UserPromptTransformed => "userPromptTransformed",
            CopilotEvent::PreToolUse => "preToolUse",
            CopilotEvent::PermissionRequest => "permissionRequest",
            CopilotEvent::PostToolUse => "postToolUse",
            CopilotEvent::PostToolUseFailure => "postToolUseFailure",
            CopilotEvent::AgentStop => "agentStop",
            CopilotEvent::SubagentStart => "subagentStart",
            CopilotEvent::SubagentStop => "subagentStop",
            CopilotEvent::PreCompact => "preCompact",
            CopilotEvent::Notification => "notification",
            CopilotEvent::ErrorOccurred => "errorOccurred",
            CopilotEvent::SessionEnd => "sessionEnd",
            CopilotEvent::PreMcpToolCall => "preMcpToolCall",
        }
    }

    /// The PascalCase name, for the events that have one.
    pub fn pascal(self) -> Option<&'static str> {
        Some(match self {
            CopilotEvent::SessionStart => "SessionStart",
            CopilotEvent::UserPromptSubmitted => "UserPromptSubmit",
            CopilotEvent::PreToolUse => "PreToolUse",
            CopilotEvent::PermissionRequest => "PermissionRequest",
            CopilotEvent::PostToolUse => "PostToolUse",
            CopilotEvent::PostToolUseFailure => "PostToolUseFailure",
            CopilotEvent::AgentStop => "Stop",
            CopilotEvent::SubagentStart => "SubagentStart",
            CopilotEvent::SubagentStop => "SubagentStop",
            CopilotEvent::PreCompact => "PreCompact",
            CopilotEvent::Notification => "Notification",
            CopilotEvent::ErrorOccurred => "ErrorOccurred",
            CopilotEvent::SessionEnd => "SessionEnd",
            CopilotEvent::UserPromptTransformed | CopilotEvent::PreMcpToolCall => return None,
        })
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
        CopilotEvent::ALL.into_iter().find_map(|event| {
            if event.as_str() == name {
                Some((event, Mode::Camel))
            } else if event.pascal() == Some(name) {
                Some((event, Mode::Pascal))
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
