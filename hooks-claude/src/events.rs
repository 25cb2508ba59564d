//! The Claude Code hook event catalogue (the 33 names CC 2.1.328 knows) and
//! what dsh does with each.

use std::time::Duration;

use dsh_hooks::names::{EventTable, Tabled};
use dsh_protocol::Seam;

use HookEvent as E;

/// A Claude Code hook event name, as spelled in `settings.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HookEvent {
    /// Before a tool call.
    PreToolUse,
    /// After a successful tool call.
    PostToolUse,
    /// After a failed tool call.
    PostToolUseFailure,
    /// After a batch of tool calls.
    PostToolBatch,
    /// CC waits for the user.
    Notification,
    /// A prompt was submitted.
    UserPromptSubmit,
    /// A slash command expanded.
    UserPromptExpansion,
    /// The session started.
    SessionStart,
    /// The session ends.
    SessionEnd,
    /// The main agent wants to stop.
    Stop,
    /// A turn ended by an API error.
    StopFailure,
    /// A subagent started.
    SubagentStart,
    /// A subagent wants to stop.
    SubagentStop,
    /// Before compaction.
    PreCompact,
    /// After compaction.
    PostCompact,
    /// Before a model switch.
    PreModelSwitch,
    /// After a model switch.
    PostModelSwitch,
    /// A permission dialog is about to show.
    PermissionRequest,
    /// The auto-mode classifier denied a call.
    PermissionDenied,
    /// `--init` / `--maintenance`.
    Setup,
    /// An agent-team teammate went idle.
    TeammateIdle,
    /// A task was created.
    TaskCreated,
    /// A task completed.
    TaskCompleted,
    /// An MCP elicitation.
    Elicitation,
    /// An MCP elicitation result.
    ElicitationResult,
    /// A settings file changed.
    ConfigChange,
    /// A worktree is created.
    WorktreeCreate,
    /// A worktree is removed.
    WorktreeRemove,
    /// CLAUDE.md / rules were loaded.
    InstructionsLoaded,
    /// The working directory changed.
    CwdChanged,
    /// A watched file changed.
    FileChanged,
    /// A directory was added.
    DirectoryAdded,
    /// Assistant text is displayed.
    MessageDisplay,
}

/// The values of StopFailure's `error` (its matcher's subject), as Claude
/// Code documents them. dsh sends `rate_limit`, `authentication_failed`,
/// `billing_error`, `server_error` and `unknown` (see `stop_failure_error`).
pub const STOP_FAILURE_ERRORS: [&str; 7] = [
    "rate_limit",
    "authentication_failed",
    "billing_error",
    "invalid_request",
    "server_error",
    "max_output_tokens",
    "unknown",
];

/// Whether dsh fires an event, and why not when it does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventSupport {
    /// dsh fires it.
    Fired,
    /// dsh has no such moment; hooks configured for it never run.
    NotFired(&'static str),
}

impl Tabled for HookEvent {
    /// Every event with its wire name and the dsh seam it runs on (for
    /// `hook/invoked.seam`), in the order Claude Code's hook reference
    /// lists them.
    #[rustfmt::skip]
    const TABLE: EventTable<HookEvent> = EventTable(&[
        (E::PreToolUse, "PreToolUse", None, Seam::PreExecute),
        (E::PostToolUse, "PostToolUse", None, Seam::PostExecute),
        (E::PostToolUseFailure, "PostToolUseFailure", None, Seam::PostExecute),
        (E::PostToolBatch, "PostToolBatch", None, Seam::BatchSettled),
        (E::Notification, "Notification", None, Seam::Notification),
        (E::UserPromptSubmit, "UserPromptSubmit", None, Seam::PromptSubmit),
        // The expansion is a second prompt-policy step of the same turn.
        (E::UserPromptExpansion, "UserPromptExpansion", None, Seam::PromptSubmit),
        (E::SessionStart, "SessionStart", None, Seam::SessionStart),
        (E::SessionEnd, "SessionEnd", None, Seam::SessionEnd),
        (E::Stop, "Stop", None, Seam::TurnContinuation),
        (E::StopFailure, "StopFailure", None, Seam::TurnFailed),
        (E::SubagentStart, "SubagentStart", None, Seam::SubagentStart),
        (E::SubagentStop, "SubagentStop", None, Seam::SubagentStop),
        (E::PreCompact, "PreCompact", None, Seam::Compaction),
        (E::PostCompact, "PostCompact", None, Seam::Compaction),
        (E::PreModelSwitch, "PreModelSwitch", None, Seam::ModelSwitch),
        (E::PostModelSwitch, "PostModelSwitch", None, Seam::ModelSwitch),
        (E::PermissionRequest, "PermissionRequest", None, Seam::Approval),
        // PermissionDenied reports how an approval ended (auto mode).
        (E::PermissionDenied, "PermissionDenied", None, Seam::Approval),
        (E::Setup, "Setup", None, Seam::Setup),
        (E::TeammateIdle, "TeammateIdle", None, Seam::Unmapped),
        (E::TaskCreated, "TaskCreated", None, Seam::Task),
        (E::TaskCompleted, "TaskCompleted", None, Seam::Task),
        (E::Elicitation, "Elicitation", None, Seam::Elicitation),
        (E::ElicitationResult, "ElicitationResult", None, Seam::Elicitation),
        (E::ConfigChange, "ConfigChange", None, Seam::ConfigChange),
        (E::WorktreeCreate, "WorktreeCreate", None, Seam::Unmapped),
        (E::WorktreeRemove, "WorktreeRemove", None, Seam::Unmapped),
        // Instruction files are read as the session starts.
        (E::InstructionsLoaded, "InstructionsLoaded", None, Seam::SessionStart),
        (E::CwdChanged, "CwdChanged", None, Seam::CwdChanged),
        (E::FileChanged, "FileChanged", None, Seam::FileChanged),
        (E::DirectoryAdded, "DirectoryAdded", None, Seam::Unmapped),
        (E::MessageDisplay, "MessageDisplay", None, Seam::MessageDisplay),
    ]);
}

impl HookEvent {
    /// Every event, in the order Claude Code's hook reference lists them.
    pub const ALL: [HookEvent; 33] = {
        let mut all = [HookEvent::PreToolUse; 33];
        let mut i = 0;
        while i < all.len() {
            all[i] = Self::TABLE.0[i].0;
            i += 1;
        }
        all
    };

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        Self::TABLE.name(self)
    }

    /// Parses a wire name (case-sensitive, as Claude Code).
    pub fn parse(name: &str) -> Option<HookEvent> {
        Self::TABLE.parse(name).map(|(event, _)| event)
    }

    /// The dsh seam this event runs on (for `hook/invoked.seam`).
    pub fn seam(self) -> Seam {
        Self::TABLE.seam(self)
    }

    /// Whether dsh fires this event.
    pub fn support(self) -> EventSupport {
        match self {
            HookEvent::PreToolUse
            | HookEvent::PostToolUse
            | HookEvent::PostToolUseFailure
            | HookEvent::Notification
            | HookEvent::UserPromptSubmit
            | HookEvent::SessionStart
            | HookEvent::SessionEnd
            | HookEvent::Stop
            | HookEvent::StopFailure
            | HookEvent::PermissionRequest
            | HookEvent::PermissionDenied
            | HookEvent::PostToolBatch
            | HookEvent::PreCompact
            | HookEvent::PostCompact
            | HookEvent::UserPromptExpansion
            | HookEvent::InstructionsLoaded
            | HookEvent::SubagentStart
            | HookEvent::SubagentStop
            | HookEvent::Setup
            | HookEvent::MessageDisplay
            | HookEvent::CwdChanged
            | HookEvent::PreModelSwitch
            | HookEvent::PostModelSwitch
            | HookEvent::TaskCreated
            | HookEvent::TaskCompleted
            | HookEvent::WorktreeCreate
            | HookEvent::WorktreeRemove
            | HookEvent::DirectoryAdded
            | HookEvent::ConfigChange
            | HookEvent::FileChanged
            | HookEvent::Elicitation
            | HookEvent::ElicitationResult => EventSupport::Fired,
            HookEvent::TeammateIdle => EventSupport::NotFired("dsh has no agent teams"),
        }
    }

    /// Whether a `matcher` means anything on this event;
    /// on the others it is ignored, as Claude Code ignores it.
    pub fn supports_matcher(self) -> bool {
        !matches!(
            self,
            HookEvent::UserPromptSubmit
                | HookEvent::PostToolBatch
                | HookEvent::Stop
                | HookEvent::TeammateIdle
                | HookEvent::TaskCreated
                | HookEvent::TaskCompleted
                | HookEvent::WorktreeCreate
                | HookEvent::WorktreeRemove
                | HookEvent::MessageDisplay
                | HookEvent::CwdChanged
        )
    }

    /// Whether exit code 2 blocks (or feeds back) on this event, as the
    /// interpreter treats it: anywhere else exit 2 is a non-blocking error
    /// whose stderr only the user sees. PermissionRequest is not one: Claude
    /// Code ignores its exit 2.
    pub fn exit2_blocks(self) -> bool {
        match self {
            HookEvent::PreToolUse
            | HookEvent::PostToolUse
            | HookEvent::PostToolUseFailure
            | HookEvent::PostToolBatch
            | HookEvent::UserPromptSubmit
            | HookEvent::UserPromptExpansion
            | HookEvent::Stop
            | HookEvent::SubagentStop
            | HookEvent::PreCompact
            | HookEvent::PreModelSwitch
            | HookEvent::TaskCreated
            | HookEvent::TaskCompleted
            | HookEvent::ConfigChange
            | HookEvent::Elicitation
            | HookEvent::ElicitationResult => true,
            HookEvent::Notification
            | HookEvent::SessionStart
            | HookEvent::SessionEnd
            | HookEvent::StopFailure
            | HookEvent::SubagentStart
            | HookEvent::PostCompact
            | HookEvent::PostModelSwitch
            | HookEvent::PermissionRequest
            | HookEvent::PermissionDenied
            | HookEvent::Setup
            | HookEvent::TeammateIdle
            | HookEvent::WorktreeCreate
            | HookEvent::WorktreeRemove
            | HookEvent::InstructionsLoaded
            | HookEvent::CwdChanged
            | HookEvent::FileChanged
            | HookEvent::DirectoryAdded
            | HookEvent::MessageDisplay => false,
        }
    }

    /// Whether this is one of the tool events (where `if` is evaluated).
    pub fn is_tool_event(self) -> bool {
        matches!(
            self,
            HookEvent::PreToolUse
                | HookEvent::PostToolUse
                | HookEvent::PostToolUseFailure
                | HookEvent::PermissionRequest
                | HookEvent::PermissionDenied
        )
    }

    /// Claude Code's default timeout for a command/http hook on this event
    /// (docs/sources.md): 600 s, 30 s for UserPromptSubmit, 10 s for
    /// MessageDisplay. SessionEnd's shared budget is applied by the plugin.
    pub fn default_timeout(self) -> Duration {
        match self {
            HookEvent::UserPromptSubmit => Duration::from_secs(30),
            HookEvent::MessageDisplay => Duration::from_secs(10),
            HookEvent::PreToolUse
            | HookEvent::PostToolUse
            | HookEvent::PostToolUseFailure
            | HookEvent::PostToolBatch
            | HookEvent::Notification
            | HookEvent::UserPromptExpansion
            | HookEvent::SessionStart
            | HookEvent::SessionEnd
            | HookEvent::Stop
            | HookEvent::StopFailure
            | HookEvent::SubagentStart
            | HookEvent::SubagentStop
            | HookEvent::PreCompact
            | HookEvent::PostCompact
            | HookEvent::PreModelSwitch
            | HookEvent::PostModelSwitch
            | HookEvent::PermissionRequest
            | HookEvent::PermissionDenied
            | HookEvent::Setup
            | HookEvent::TeammateIdle
            | HookEvent::TaskCreated
            | HookEvent::TaskCompleted
            | HookEvent::Elicitation
            | HookEvent::ElicitationResult
            | HookEvent::ConfigChange
            | HookEvent::WorktreeCreate
            | HookEvent::WorktreeRemove
            | HookEvent::InstructionsLoaded
            | HookEvent::CwdChanged
            | HookEvent::FileChanged
            | HookEvent::DirectoryAdded => Duration::from_secs(600),
        }
    }
}

impl std::fmt::Display for HookEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for event in HookEvent::ALL {
            assert_eq!(HookEvent::parse(event.as_str()), Some(event));
            assert!(seen.insert(event.as_str()));
        }
        assert_eq!(HookEvent::parse("pretooluse"), None);
    }

    /// The lifecycle events (Setup, MessageDisplay, CwdChanged, the model switch) fire, each on its own seam.
    #[test]
    fn lifecycle_events_are_fired() {
        for (event, seam) in [
            (HookEvent::Setup, Seam::Setup),
            (HookEvent::MessageDisplay, Seam::MessageDisplay),
            (HookEvent::CwdChanged, Seam::CwdChanged),
            (HookEvent::PostModelSwitch, Seam::ModelSwitch),
        ] {
            assert_eq!(event.support(), EventSupport::Fired, "{event}");
            assert_eq!(event.seam(), seam, "{event}");
            assert!(!event.exit2_blocks(), "{event}");
        }
        // An exit 2 refuses a model switch (`ev_model_sdk_exit2`).
        assert!(HookEvent::PreModelSwitch.exit2_blocks());
    }

    /// The watched-file events fire from the session's watcher; a
    /// ConfigChange exit 2 keeps the old settings (`ev_config_change_block`).
    #[test]
    fn watched_file_events_are_fired() {
        assert_eq!(HookEvent::ConfigChange.support(), EventSupport::Fired);
        assert_eq!(HookEvent::ConfigChange.seam(), Seam::ConfigChange);
        assert!(HookEvent::ConfigChange.exit2_blocks());
        assert_eq!(HookEvent::FileChanged.support(), EventSupport::Fired);
        assert_eq!(HookEvent::FileChanged.seam(), Seam::FileChanged);
        assert!(!HookEvent::FileChanged.exit2_blocks());
        assert!(HookEvent::FileChanged.supports_matcher());
    }

    /// The prompt-layer events fire (so `dsh hooks check` and the
    /// start-up notices no longer call them unsupported); agent teams do not.
    #[test]
    fn prompt_layer_events_are_fired() {
        assert_eq!(HookEvent::InstructionsLoaded.support(), EventSupport::Fired);
        assert_eq!(
            HookEvent::UserPromptExpansion.support(),
            EventSupport::Fired
        );
        assert!(HookEvent::UserPromptExpansion.exit2_blocks());
        assert!(!HookEvent::InstructionsLoaded.exit2_blocks());
        assert!(matches!(
            HookEvent::TeammateIdle.support(),
            EventSupport::NotFired(_)
        ));
    }

    /// The task events fire on the task seam, and exit 2 blocks them.
    #[test]
    fn task_events_are_fired_and_blockable() {
        for event in [HookEvent::TaskCreated, HookEvent::TaskCompleted] {
            assert_eq!(event.support(), EventSupport::Fired, "{event}");
            assert_eq!(event.seam(), Seam::Task, "{event}");
            assert!(event.exit2_blocks(), "{event}");
            assert!(!event.supports_matcher(), "{event}");
        }
    }
}
