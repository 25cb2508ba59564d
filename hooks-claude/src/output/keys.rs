//! `hookSpecificOutput` per event: the keys Claude Code reads for the event
//! a hook answers, beyond the ones every event shares
//! ([`super::wire::SpecificHead`]). Each event's keys are a serde struct of
//! lenient [`Field`]s, read once for the event being answered (not for the
//! `hookEventName` the answer claims: a wrong name is refused before).

use serde::Deserialize;
use serde_json::{Map, Value};

use super::wire::{Field, HookOutputWire, PermissionDecision, RequestDecisionWire, WireType};
use crate::events::HookEvent;

/// PreToolUse's keys.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct ToolDecisionKeys {
    /// Allow, deny, ask or defer the call.
    pub permission_decision: Field<PermissionDecision>,
    /// Why (the deny text, or the user-facing reason).
    pub permission_decision_reason: Field<String>,
    /// The input to run the call with instead (a tool's arguments: any
    /// object).
    pub updated_input: Field<Map<String, Value>>,
}

/// PreModelSwitch's keys.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct SwitchDecisionKeys {
    /// Allow, deny or ask (`defer` is refused by the schema).
    pub permission_decision: Field<PermissionDecision>,
    /// Why.
    pub permission_decision_reason: Field<String>,
}

/// PermissionRequest's keys.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct RequestKeys {
    /// The decision.
    pub decision: Field<RequestDecisionWire>,
}

/// PostToolUse's (and PostToolUseFailure's, PostToolBatch's) keys.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct ToolOutputKeys {
    /// An MCP tool's replacement result (whatever the hook printed: any
    /// JSON, passed on verbatim).
    #[serde(rename = "updatedMCPToolOutput")]
    pub updated_mcp_tool_output: Field<Value>,
    /// The same, under its newer name (any JSON).
    pub updated_tool_output: Field<Value>,
}

/// PermissionDenied's keys.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct RetryKeys {
    /// Let the model retry the denied call.
    pub retry: Field<bool>,
}

/// Elicitation's and ElicitationResult's keys.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct ElicitationKeys {
    /// `accept`, `decline` or `cancel`.
    pub action: Field<String>,
    /// The answer's content (the server's form: any object).
    pub content: Field<Map<String, Value>>,
}

/// WorktreeCreate's keys.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct WorktreeKeys {
    /// Where the hook made the worktree.
    pub worktree_path: Field<String>,
}

/// MessageDisplay's keys.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct DisplayKeys {
    /// The text to show instead of the message.
    pub display_content: Field<String>,
}

macro_rules! object_keys {
    ($($keys:ty),*) => {$(
        impl WireType for $keys {
            const JSON: Option<&'static str> = Some("object");
        }
    )*};
}

object_keys!(
    ToolDecisionKeys,
    SwitchDecisionKeys,
    RequestKeys,
    ToolOutputKeys,
    RetryKeys,
    ElicitationKeys,
    WorktreeKeys,
    DisplayKeys
);

/// One event's own keys of an answer's `hookSpecificOutput`.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) enum EventKeys {
    /// PreToolUse.
    PreToolUse(ToolDecisionKeys),
    /// PreModelSwitch.
    PreModelSwitch(SwitchDecisionKeys),
    /// PermissionRequest.
    PermissionRequest(RequestKeys),
    /// PostToolUse, PostToolUseFailure, PostToolBatch.
    ToolOutput(ToolOutputKeys),
    /// PermissionDenied.
    PermissionDenied(RetryKeys),
    /// Elicitation, ElicitationResult.
    Elicitation(ElicitationKeys),
    /// WorktreeCreate.
    WorktreeCreate(WorktreeKeys),
    /// MessageDisplay.
    MessageDisplay(DisplayKeys),
    /// An event with no keys of its own.
    #[default]
    None,
}

/// A schema-checked JSON answer read once for the event it answers: the
/// keys every event reads and the event's own.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct EventAnswer {
    /// The top-level keys and `hookSpecificOutput`'s shared ones.
    pub wire: HookOutputWire,
    /// The event's own keys.
    pub keys: EventKeys,
}

impl EventAnswer {
    /// Reads `answer` (a hook's JSON object) for `event`.
    pub(crate) fn read(answer: &Value, event: HookEvent) -> Self {
        let keys = match event {
            HookEvent::PreToolUse => EventKeys::PreToolUse(keys_of(answer)),
            HookEvent::PreModelSwitch => EventKeys::PreModelSwitch(keys_of(answer)),
            HookEvent::PermissionRequest => EventKeys::PermissionRequest(keys_of(answer)),
            HookEvent::PostToolUse | HookEvent::PostToolUseFailure | HookEvent::PostToolBatch => {
                EventKeys::ToolOutput(keys_of(answer))
            }
            HookEvent::PermissionDenied => EventKeys::PermissionDenied(keys_of(answer)),
            HookEvent::Elicitation | HookEvent::ElicitationResult => {
                EventKeys::Elicitation(keys_of(answer))
            }
            HookEvent::WorktreeCreate => EventKeys::WorktreeCreate(keys_of(answer)),
            HookEvent::MessageDisplay => EventKeys::MessageDisplay(keys_of(answer)),
            HookEvent::UserPromptSubmit
            | HookEvent::UserPromptExpansion
            | HookEvent::Notification
            | HookEvent::SessionStart
            | HookEvent::SessionEnd
            | HookEvent::Stop
            | HookEvent::StopFailure
            | HookEvent::SubagentStart
            | HookEvent::SubagentStop
            | HookEvent::PreCompact
            | HookEvent::PostCompact
            | HookEvent::PostModelSwitch
            | HookEvent::Setup
            | HookEvent::TeammateIdle
            | HookEvent::TaskCreated
            | HookEvent::TaskCompleted
            | HookEvent::ConfigChange
            | HookEvent::WorktreeRemove
            | HookEvent::InstructionsLoaded
            | HookEvent::CwdChanged
            | HookEvent::FileChanged
            | HookEvent::DirectoryAdded => EventKeys::None,
        };
        EventAnswer {
            wire: HookOutputWire::read(answer),
            keys,
        }
    }
}

/// The keys `K` of `answer`'s `hookSpecificOutput` (all absent when it is
/// not an object).
pub(crate) fn keys_of<K: WireType + Default>(answer: &Value) -> K {
    answer
        .get("hookSpecificOutput")
        .map(Field::<K>::read)
        .and_then(Field::into_valid)
        .unwrap_or_default()
}
