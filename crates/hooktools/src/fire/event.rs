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
        let registry = dsh_core::dialects::registry();
        // A dialect's own name for one of these (Gemini's BeforeTool, …).
        let canonical = registry
            .iter()
            .find_map(|dialect| dialect.test_event(name))
            .unwrap_or(name);
        if let Some((_, event)) = TESTABLE.iter().find(|(n, _)| *n == canonical) {
            return Ok(*event);
        }
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

#[cfg(test)]
mod tests {
    use super::TestEvent;

    #[test]
    fn dialects_name_the_events_they_fire_in_their_own_words() {
        let parse = |name| TestEvent::parse(name).ok();
        assert_eq!(parse("PreToolUse"), Some(TestEvent::PreToolUse));
        assert_eq!(parse("BeforeTool"), Some(TestEvent::PreToolUse));
        assert_eq!(parse("AfterAgent"), Some(TestEvent::Stop));
        assert_eq!(parse("agentStop"), Some(TestEvent::Stop));
        assert_eq!(
            parse("userPromptSubmitted"),
            Some(TestEvent::UserPromptSubmit)
        );
        // Known to a dialect, but dsh does not fire it there.
        let refused = TestEvent::parse("userPromptTransformed").unwrap_err();
        assert!(refused.to_string().contains("cannot fire"), "{refused}");
        assert!(TestEvent::parse("BeforeModel").is_err());
    }
}
