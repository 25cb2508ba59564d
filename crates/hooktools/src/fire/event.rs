//! The events `dsh hooks test` can fire, by name, and the event-field
//! flags each accepts.

use anyhow::bail;
use dsh_hooks::lint::nearest;

/// The events `dsh hooks test` can fire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TestEvent {
    PreToolUse,
    PermissionRequest,
    PostToolUse,
    PostToolUseFailure,
    UserPromptSubmit,
    SessionStart,
    Stop,
    SessionEnd,
    Notification,
    // Fired by `lifecycle`.
    SubagentStart,
    SubagentStop,
    PreCompact,
    PostCompact,
    StopFailure,
    UserPromptExpansion,
    InstructionsLoaded,
    PermissionDenied,
}

pub(super) const TESTABLE: &[(&str, TestEvent)] = &[
    ("PreToolUse", TestEvent::PreToolUse),
    ("PermissionRequest", TestEvent::PermissionRequest),
    ("PostToolUse", TestEvent::PostToolUse),
    ("PostToolUseFailure", TestEvent::PostToolUseFailure),
    ("UserPromptSubmit", TestEvent::UserPromptSubmit),
    ("SessionStart", TestEvent::SessionStart),
    ("Stop", TestEvent::Stop),
    ("SessionEnd", TestEvent::SessionEnd),
    ("Notification", TestEvent::Notification),
    ("SubagentStart", TestEvent::SubagentStart),
    ("SubagentStop", TestEvent::SubagentStop),
    ("PreCompact", TestEvent::PreCompact),
    ("PostCompact", TestEvent::PostCompact),
    ("StopFailure", TestEvent::StopFailure),
    ("UserPromptExpansion", TestEvent::UserPromptExpansion),
    ("InstructionsLoaded", TestEvent::InstructionsLoaded),
    ("PermissionDenied", TestEvent::PermissionDenied),
    // Gemini CLI's names for the same seams.
    ("BeforeTool", TestEvent::PreToolUse),
    ("AfterTool", TestEvent::PostToolUse),
    ("BeforeAgent", TestEvent::UserPromptSubmit),
    ("AfterAgent", TestEvent::Stop),
    ("PreCompress", TestEvent::PreCompact),
    // GitHub Copilot CLI's camelCase names.
    ("sessionStart", TestEvent::SessionStart),
    ("userPromptSubmitted", TestEvent::UserPromptSubmit),
    ("preToolUse", TestEvent::PreToolUse),
    ("permissionRequest", TestEvent::PermissionRequest),
    ("postToolUse", TestEvent::PostToolUse),
    ("postToolUseFailure", TestEvent::PostToolUseFailure),
    ("agentStop", TestEvent::Stop),
    ("preCompact", TestEvent::PreCompact),
    ("sessionEnd", TestEvent::SessionEnd),
];

impl TestEvent {
    /// Refuses an event-field flag (`key` is the payload key it writes)
    /// on an event that has no such field, rather than ignoring it.
    pub(crate) fn check_flag(self, key: &str) -> anyhow::Result<()> {
        let (flag, events): (&str, &[TestEvent]) = match key {
            "agent_type" => (
                "--agent-type",
                &[TestEvent::SubagentStart, TestEvent::SubagentStop],
            ),
            "trigger" => (
                "--trigger",
                &[TestEvent::PreCompact, TestEvent::PostCompact],
            ),
            "error" => ("--error", &[TestEvent::StopFailure]),
            "command_name" => ("--command-name", &[TestEvent::UserPromptExpansion]),
            _ => return Ok(()),
        };
        if events.contains(&self) {
            return Ok(());
        }
        let names: Vec<&str> = events.iter().map(|event| event.name()).collect();
        bail!(
            "{flag} applies to {} only, not {}",
            names.join(" and "),
            self.name()
        )
    }

    /// The event's name.
    pub(crate) fn name(self) -> &'static str {
        TESTABLE
            .iter()
            .find(|(_, event)| *event == self)
            .map_or("", |(name, _)| *name)
    }

    pub(crate) fn parse(name: &str) -> anyhow::Result<TestEvent> {
        if let Some((_, event)) = TESTABLE.iter().find(|(n, _)| *n == name) {
            return Ok(*event);
        }
        let registry = dsh_core::dialects::registry();
        let all: Vec<&str> = registry.iter().flat_map(|d| d.event_names()).collect();
        let known_elsewhere = all.contains(&name);
        if known_elsewhere {
            bail!(
                "`dsh hooks test` cannot fire {name}: dsh does not fire it, or it needs a model request (testable: {})",
                TESTABLE
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        bail!(
            "unknown hook event `{name}`{}",
            nearest(name, all)
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default()
        )
    }

    pub(super) fn is_tool_event(self) -> bool {
        matches!(
            self,
            TestEvent::PreToolUse
                | TestEvent::PermissionRequest
                | TestEvent::PostToolUse
                | TestEvent::PostToolUseFailure
                | TestEvent::PermissionDenied
        )
    }
}
