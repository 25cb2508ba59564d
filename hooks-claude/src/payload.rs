//! Hook stdin payloads, byte-for-byte as Claude Code 2.1.328 writes them
//! (docs/sources.md): compact JSON in a fixed key order, then one `\n`.
//! Each event's stdin is a `#[derive(Serialize)]` struct whose field order
//! is the captured key order (a shared [`Head`], then the event's fields);
//! the functions build them from [`Common`].
//!
//! Also the tool vocabulary: dsh tool names and values ↔ Claude Code's
//! `tool_name`, `tool_input` and `tool_response` shapes.

use dsh_seams::PermissionUpdate;
use serde::Serialize;
use serde_json::{Value, json};

mod lifecycle;
mod response;
mod tools;
mod worktree;
pub use lifecycle::*;
pub use response::*;
pub use tools::*;
pub use worktree::*;

/// The fields most events share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Common {
    /// The session id.
    pub session_id: String,
    /// The Claude-format transcript dsh keeps.
    pub transcript_path: String,
    /// The session's cwd.
    pub cwd: String,
    /// The current prompt's id (absent before the first prompt).
    pub prompt_id: Option<String>,
    /// `permission_mode`.
    pub permission_mode: String,
    /// `effort.level`.
    pub effort: String,
    /// The subagent the event fires inside, if any.
    pub agent: Option<AgentIds>,
}

/// The subagent an event fires inside: every payload then names it
/// (`agent_id` and `agent_type` before `effort`, or before
/// `hook_event_name` when there is no `effort`, as captured);
/// `session_id`/`transcript_path` stay the session's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentIds {
    /// The subagent's id.
    pub agent_id: String,
    /// Its type.
    pub agent_type: String,
}

/// Serializes a payload as Claude Code writes it to stdin: compact JSON + `\n`.
pub fn to_stdin(payload: &(impl Serialize + ?Sized)) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(payload).unwrap_or_else(|_| b"{}".to_vec());
    bytes.push(b'\n');
    bytes
}

/// `effort`: `{"level": …}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Effort<'a> {
    /// `low`, `medium`, `high`, …
    pub level: &'a str,
}

/// The head every payload starts with, in Claude Code's order: the common
/// fields, then (per event) the prompt id, the permission mode and the
/// effort, then the event name. An absent optional is left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Head<'a> {
    /// The session id.
    pub session_id: &'a str,
    /// The Claude-format transcript.
    pub transcript_path: &'a str,
    /// The session's cwd.
    pub cwd: &'a str,
    /// The current prompt's id, on events that carry it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_id: Option<&'a str>,
    /// The permission mode, on events that carry it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<&'a str>,
    /// The subagent, inside one.
    #[serde(flatten)]
    pub agent: Option<&'a AgentIds>,
    /// The effort, on events that carry it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effort: Option<Effort<'a>>,
    /// The event's name.
    pub hook_event_name: &'a str,
}

impl Common {
    /// The bare head: session id, transcript, cwd, event name.
    fn head<'a>(&'a self, event: &'a str) -> Head<'a> {
        Head {
            session_id: &self.session_id,
            transcript_path: &self.transcript_path,
            cwd: &self.cwd,
            prompt_id: None,
            permission_mode: None,
            agent: self.agent.as_ref(),
            effort: None,
            hook_event_name: event,
        }
    }
    /// With the prompt id (when there is one).
    fn head_prompt<'a>(&'a self, event: &'a str) -> Head<'a> {
        Head {
            prompt_id: self.prompt_id.as_deref(),
            ..self.head(event)
        }
    }
    /// With the prompt id and the permission mode.
    fn head_prompt_mode<'a>(&'a self, event: &'a str) -> Head<'a> {
        Head {
            permission_mode: Some(&self.permission_mode),
            ..self.head_prompt(event)
        }
    }
    /// The head of the payloads fired around a turn's steps (tools, stop,
    /// batch): prompt id, permission mode, effort.
    fn head_step<'a>(&'a self, event: &'a str) -> Head<'a> {
        Head {
            effort: Some(Effort {
                level: &self.effort,
            }),
            ..self.head_prompt_mode(event)
        }
    }
}

/// An event whose payload is the head and nothing else
/// (`SubagentStart`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeadOnlyInput<'a> {
    /// The head.
    #[serde(flatten)]
    pub head: Head<'a>,
}

/// `SessionStart`'s stdin (`model` only for source `compact`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionStartInput<'a> {
    /// The head.
    #[serde(flatten)]
    pub head: Head<'a>,
    /// `startup`, `resume`, `clear`, `compact`.
    pub source: &'a str,
    /// The model, after a compaction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<&'a str>,
}

/// `SessionStart` (`source` startup/resume/clear/compact). Claude Code's
/// resume-only cache statistics are not sent: dsh has no such figures.
pub fn session_start<'a>(common: &'a Common, source: &'a str) -> SessionStartInput<'a> {
    SessionStartInput {
        head: common.head("SessionStart"),
        source,
        model: None,
    }
}

/// `SessionStart` with source `compact`: unlike the other sources it
/// carries the prompt id and the model (`cmp_*` captures).
pub fn session_start_compact<'a>(common: &'a Common, model: &'a str) -> SessionStartInput<'a> {
    SessionStartInput {
        head: common.head_prompt("SessionStart"),
        source: "compact",
        model: Some(model),
    }
}

/// `PreCompact`'s stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PreCompactInput<'a> {
    /// The head.
    #[serde(flatten)]
    pub head: Head<'a>,
    /// `manual` or `auto`.
    pub trigger: &'a str,
    /// The `/compact` text (`null` without).
    pub custom_instructions: Option<&'a str>,
}

/// `PreCompact`: `trigger` manual|auto, `custom_instructions` (null without text).
pub fn pre_compact<'a>(
    common: &'a Common,
    trigger: &'a str,
    custom_instructions: Option<&'a str>,
) -> PreCompactInput<'a> {
    PreCompactInput {
        head: common.head_prompt("PreCompact"),
        trigger,
        custom_instructions,
    }
}

/// `PostCompact`'s stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PostCompactInput<'a> {
    /// The head.
    #[serde(flatten)]
    pub head: Head<'a>,
    /// `manual` or `auto`.
    pub trigger: &'a str,
    /// The summary reply as written.
    pub compact_summary: &'a str,
}

/// `PostCompact`: `compact_summary` is the summary reply as written.
pub fn post_compact<'a>(
    common: &'a Common,
    trigger: &'a str,
    compact_summary: &'a str,
) -> PostCompactInput<'a> {
    PostCompactInput {
        head: common.head_prompt("PostCompact"),
        trigger,
        compact_summary,
    }
}

/// `UserPromptSubmit`'s stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserPromptSubmitInput<'a> {
    /// The head.
    #[serde(flatten)]
    pub head: Head<'a>,
    /// The prompt text.
    pub prompt: &'a str,
}

/// `UserPromptSubmit`.
pub fn user_prompt_submit<'a>(common: &'a Common, prompt: &'a str) -> UserPromptSubmitInput<'a> {
    UserPromptSubmitInput {
        head: common.head_prompt_mode("UserPromptSubmit"),
        prompt,
    }
}

/// `UserPromptExpansion`'s stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserPromptExpansionInput<'a> {
    /// The head.
    #[serde(flatten)]
    pub head: Head<'a>,
    /// `slash_command`, …
    pub expansion_type: &'a str,
    /// The command's name.
    pub command_name: &'a str,
    /// Its arguments.
    pub command_args: &'a str,
    /// Where it was defined.
    pub command_source: &'a str,
    /// The prompt as typed.
    pub prompt: &'a str,
}

/// `UserPromptExpansion` (`misc_expansion`): after UserPromptSubmit, for a
/// prompt that invokes a custom command or skill.
pub fn user_prompt_expansion<'a>(
    common: &'a Common,
    expansion_type: &'a str,
    command_name: &'a str,
    command_args: &'a str,
    command_source: &'a str,
    prompt: &'a str,
) -> UserPromptExpansionInput<'a> {
    UserPromptExpansionInput {
        head: common.head_prompt_mode("UserPromptExpansion"),
        expansion_type,
        command_name,
        command_args,
        command_source,
        prompt,
    }
}

/// `InstructionsLoaded`'s stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InstructionsLoadedInput<'a> {
    /// The head.
    #[serde(flatten)]
    pub head: Head<'a>,
    /// The instruction file.
    pub file_path: &'a str,
    /// `Project`, `User`, …
    pub memory_type: &'a str,
    /// Why it was loaded.
    pub load_reason: &'a str,
    /// A path-scoped rule's globs (left out when none).
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub globs: &'a [String],
    /// The file that triggered a path-scoped rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger_file_path: Option<&'a str>,
}

/// `InstructionsLoaded` (`misc_instructions_loaded`): one per instruction
/// file; no `prompt_id` or `permission_mode`. A path-scoped rule adds the
/// documented `globs` and `trigger_file_path` (PROTOCOL.md; not captured).
pub fn instructions_loaded<'a>(
    common: &'a Common,
    file_path: &'a str,
    memory_type: &'a str,
    load_reason: &'a str,
    globs: &'a [String],
    trigger_file_path: Option<&'a str>,
) -> InstructionsLoadedInput<'a> {
    InstructionsLoadedInput {
        head: common.head("InstructionsLoaded"),
        file_path,
        memory_type,
        load_reason,
        globs,
        trigger_file_path,
    }
}

/// The tool events' stdin (`PreToolUse`, `PermissionRequest`,
/// `PermissionDenied`, `PostToolUse`, `PostToolUseFailure`): the step head,
/// the tool, then what each event adds, in the captured order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolInput<'a> {
    /// The head.
    #[serde(flatten)]
    pub head: Head<'a>,
    /// Claude Code's tool name.
    pub tool_name: &'a str,
    /// The tool's input.
    pub tool_input: &'a Value,
    /// What the tool returned (`PostToolUse`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_response: Option<&'a ToolResponse>,
    /// The permission model's suggestions (`PermissionRequest`, when offered).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_suggestions: Option<&'a [PermissionUpdate]>,
    /// The call's id (not on `PermissionRequest`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<&'a str>,
    /// Why the call was denied (`PermissionDenied`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'a str>,
    /// The model-facing error text (`PostToolUseFailure`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'a str>,
    /// Whether the failure was an interrupt (`PostToolUseFailure`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_interrupt: Option<bool>,
    /// How long the call ran (`PostToolUse`, `PostToolUseFailure`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The server of an MCP tool, last ([`with_mcp_server`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcp_server: Option<McpServerKey<'a>>,
}

impl<'a> ToolInput<'a> {
    fn new(head: Head<'a>, tool_name: &'a str, tool_input: &'a Value) -> Self {
        ToolInput {
            head,
            tool_name,
            tool_input,
            tool_response: None,
            permission_suggestions: None,
            tool_use_id: None,
            reason: None,
            error: None,
            is_interrupt: None,
            duration_ms: None,
            mcp_server: None,
        }
    }
}

/// `PreToolUse`.
pub fn pre_tool_use<'a>(
    common: &'a Common,
    tool_name: &'a str,
    tool_input: &'a Value,
    tool_use_id: &'a str,
) -> ToolInput<'a> {
    ToolInput {
        tool_use_id: Some(tool_use_id),
        ..ToolInput::new(common.head_step("PreToolUse"), tool_name, tool_input)
    }
}

/// `PermissionRequest` (no `tool_use_id`, as captured). `suggestions` are
/// the permission model's for this call; `None` leaves the key out, as
/// Claude Code does for an ask rule or in plan mode.
pub fn permission_request<'a>(
    common: &'a Common,
    tool_name: &'a str,
    tool_input: &'a Value,
    suggestions: Option<&'a [PermissionUpdate]>,
) -> ToolInput<'a> {
    ToolInput {
        permission_suggestions: suggestions,
        ..ToolInput::new(common.head_step("PermissionRequest"), tool_name, tool_input)
    }
}

/// `PermissionDenied` (auto mode's classifier denied the call): `reason` is
/// the check's reason (`Classifier unavailable`).
pub fn permission_denied<'a>(
    common: &'a Common,
    tool_name: &'a str,
    tool_input: &'a Value,
    tool_use_id: &'a str,
    reason: &'a str,
) -> ToolInput<'a> {
    ToolInput {
        tool_use_id: Some(tool_use_id),
        reason: Some(reason),
        ..ToolInput::new(common.head_step("PermissionDenied"), tool_name, tool_input)
    }
}

/// `PostToolUse`.
pub fn post_tool_use<'a>(
    common: &'a Common,
    tool_name: &'a str,
    tool_input: &'a Value,
    tool_response: &'a ToolResponse,
    tool_use_id: &'a str,
    duration_ms: u64,
) -> ToolInput<'a> {
    ToolInput {
        tool_response: Some(tool_response),
        tool_use_id: Some(tool_use_id),
        duration_ms: Some(duration_ms),
        ..ToolInput::new(common.head_step("PostToolUse"), tool_name, tool_input)
    }
}

/// `PostToolUseFailure`; `error` is the model-facing error text.
pub fn post_tool_use_failure<'a>(
    common: &'a Common,
    tool_name: &'a str,
    tool_input: &'a Value,
    tool_use_id: &'a str,
    error: &'a str,
    is_interrupt: bool,
    duration_ms: u64,
) -> ToolInput<'a> {
    ToolInput {
        tool_use_id: Some(tool_use_id),
        error: Some(error),
        is_interrupt: Some(is_interrupt),
        duration_ms: Some(duration_ms),
        ..ToolInput::new(
            common.head_step("PostToolUseFailure"),
            tool_name,
            tool_input,
        )
    }
}

/// One entry of `PostToolBatch`'s `tool_calls`, serialized in the captured
/// key order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchCall {
    /// Claude Code's tool name.
    pub tool_name: String,
    /// The model's raw input (not normalized, as captured).
    pub tool_input: Value,
    /// The model's call id.
    pub tool_use_id: String,
    /// The model-facing result: a string, or for a text-only MCP result the
    /// content block array (`mcp_text_result`), as captured.
    pub tool_response: ToolResponse,
}

/// `PostToolBatch`'s `tool_input`: the model's input as Claude Code parsed it, paths left
/// relative, but schema defaults filled in *first* (`p1_file_tools_payloads`: an Edit without
/// `replace_all` arrives as `{"replace_all":false,"file_path":"notes.txt",…}`).
pub fn batch_tool_input(dsh_tool: &str, arguments: &Value) -> Value {
    if let Value::Object(map) = arguments
        && dsh_tool == "edit"
        && !map.contains_key("replace_all")
    {
        let mut with_default = serde_json::Map::new();
        with_default.insert("replace_all".into(), json!(false));
        with_default.extend(map.clone());
        return Value::Object(with_default);
    }
    arguments.clone()
}

/// `PostToolBatch`'s stdin.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PostToolBatchInput<'a> {
    /// The head.
    #[serde(flatten)]
    pub head: Head<'a>,
    /// Every call of the batch.
    pub tool_calls: &'a [BatchCall],
}

/// `PostToolBatch`: once per step, after every call of the batch settled.
pub fn post_tool_batch<'a>(common: &'a Common, calls: &'a [BatchCall]) -> PostToolBatchInput<'a> {
    PostToolBatchInput {
        head: common.head_step("PostToolBatch"),
        tool_calls: calls,
    }
}

/// `Stop`'s and `SubagentStop`'s stdin. dsh runs no background tasks or
/// session crons, so both lists are always empty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StopInput<'a> {
    /// The head.
    #[serde(flatten)]
    pub head: Head<'a>,
    /// Whether a Stop hook already continued this turn.
    pub stop_hook_active: bool,
    /// The subagent's transcript (`SubagentStop`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_transcript_path: Option<&'a str>,
    /// The last assistant message.
    pub last_assistant_message: &'a str,
    /// Always empty.
    pub background_tasks: &'a [NoEntry],
    /// Always empty.
    pub session_crons: &'a [NoEntry],
}

/// An entry of a list dsh always sends empty (`background_tasks`,
/// `session_crons`: dsh runs neither), so no value of it exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum NoEntry {}

/// `Stop`.
pub fn stop<'a>(
    common: &'a Common,
    stop_hook_active: bool,
    last_assistant_message: &'a str,
) -> StopInput<'a> {
    StopInput {
        head: common.head_step("Stop"),
        stop_hook_active,
        agent_transcript_path: None,
        last_assistant_message,
        background_tasks: &[],
        session_crons: &[],
    }
}

/// `StopFailure`'s stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StopFailureInput<'a> {
    /// The head.
    #[serde(flatten)]
    pub head: Head<'a>,
    /// The error category.
    pub error: &'a str,
    /// Claude Code's error text.
    pub last_assistant_message: &'a str,
}

/// `StopFailure` (`misc_stopfailure_*`): no `permission_mode`, `effort`
/// before the event name, then the error category and Claude Code's error text.
pub fn stop_failure<'a>(
    common: &'a Common,
    error: &'a str,
    last_assistant_message: &'a str,
) -> StopFailureInput<'a> {
    StopFailureInput {
        head: Head {
            effort: Some(Effort {
                level: &common.effort,
            }),
            ..common.head_prompt("StopFailure")
        },
        error,
        last_assistant_message,
    }
}

/// `SubagentStart`: no `permission_mode` or `effort`; the agent fields are
/// added where every payload fired inside a subagent gets them
/// ([`AgentIds`]).
pub fn subagent_start<'a>(common: &'a Common) -> HeadOnlyInput<'a> {
    HeadOnlyInput {
        head: common.head_prompt("SubagentStart"),
    }
}

/// `SubagentStop`: `Stop`'s fields with the subagent's transcript.
pub fn subagent_stop<'a>(
    common: &'a Common,
    stop_hook_active: bool,
    agent_transcript_path: &'a str,
    last_assistant_message: &'a str,
) -> StopInput<'a> {
    StopInput {
        head: common.head_step("SubagentStop"),
        stop_hook_active,
        agent_transcript_path: Some(agent_transcript_path),
        last_assistant_message,
        background_tasks: &[],
        session_crons: &[],
    }
}

/// `TaskCreated` / `TaskCompleted`'s stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskInput<'a> {
    /// The head.
    #[serde(flatten)]
    pub head: Head<'a>,
    /// The task's id.
    pub task_id: &'a str,
    /// The task's subject.
    pub task_subject: &'a str,
    /// The task's description, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_description: Option<&'a str>,
}

/// `TaskCreated` or `TaskCompleted` (`event`): `task_id`, `task_subject`,
/// `task_description` after the head of a turn's steps. Not captured
/// (headless Claude Code does not offer `TaskCreate`): the fields are
/// PROTOCOL.md's; the head is the one every tool-time event carries.
/// `teammate_name`/`team_name` are left out: dsh has no agent teams.
pub fn task_event<'a>(
    common: &'a Common,
    event: &'a str,
    task_id: &'a str,
    task_subject: &'a str,
    task_description: &'a str,
) -> TaskInput<'a> {
    TaskInput {
        head: common.head_step(event),
        task_id,
        task_subject,
        task_description: (!task_description.is_empty()).then_some(task_description),
    }
}

/// `SessionEnd`'s stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionEndInput<'a> {
    /// The head.
    #[serde(flatten)]
    pub head: Head<'a>,
    /// Why the session ended.
    pub reason: &'a str,
}

/// `SessionEnd`.
pub fn session_end<'a>(common: &'a Common, reason: &'a str) -> SessionEndInput<'a> {
    SessionEndInput {
        head: common.head_prompt("SessionEnd"),
        reason,
    }
}

/// `Notification`'s stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotificationInput<'a> {
    /// The head.
    #[serde(flatten)]
    pub head: Head<'a>,
    /// The notification text.
    pub message: &'a str,
    /// Its kind.
    pub notification_type: &'a str,
}

/// `Notification` (never captured headless; documented fields, docs/sources.md).
pub fn notification<'a>(
    common: &'a Common,
    message: &'a str,
    notification_type: &'a str,
) -> NotificationInput<'a> {
    NotificationInput {
        head: common.head_prompt("Notification"),
        message,
        notification_type,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::path::Path;

    use super::*;

    pub(super) fn common() -> Common {
        Common {
            session_id: "S".into(),
            transcript_path: "T".into(),
            cwd: "/p".into(),
            prompt_id: Some("P".into()),
            permission_mode: "bypassPermissions".into(),
            effort: "medium".into(),
            agent: None,
        }
    }

    #[test]
    fn stdin_is_compact_with_one_newline() {
        let bytes = to_stdin(&session_end(&common(), "other"));
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            "{\"session_id\":\"S\",\"transcript_path\":\"T\",\"cwd\":\"/p\",\"prompt_id\":\"P\",\"hook_event_name\":\"SessionEnd\",\"reason\":\"other\"}\n"
        );
    }

    /// Inside a subagent the ids go before `effort`, or before
    /// `hook_event_name` on events without one (`sub_*` captures).
    #[test]
    fn payloads_inside_a_subagent_name_it_before_effort() {
        let inside = Common {
            agent: Some(AgentIds {
                agent_id: "A".into(),
                agent_type: "Explore".into(),
            }),
            ..common()
        };
        let stop = String::from_utf8(to_stdin(&stop(&inside, false, "done"))).unwrap();
        assert!(
            stop.contains(r#""permission_mode":"bypassPermissions","agent_id":"A","agent_type":"Explore","effort":{"level":"medium"},"hook_event_name":"Stop""#),
            "{stop}"
        );
        let end = String::from_utf8(to_stdin(&session_end(&inside, "other"))).unwrap();
        assert_eq!(
            end,
            "{\"session_id\":\"S\",\"transcript_path\":\"T\",\"cwd\":\"/p\",\"prompt_id\":\"P\",\"agent_id\":\"A\",\"agent_type\":\"Explore\",\"hook_event_name\":\"SessionEnd\",\"reason\":\"other\"}\n"
        );
    }

    #[test]
    fn edit_input_gets_absolute_path_and_replace_all() {
        let input = normalize_tool_input(
            "edit",
            &json!({"file_path": "notes.txt", "old_string": "beta", "new_string": "gamma"}),
            Path::new("/p"),
        );
        assert_eq!(
            serde_json::to_string(&input).unwrap(),
            r#"{"file_path":"/p/notes.txt","old_string":"beta","new_string":"gamma","replace_all":false}"#
        );
    }
}

#[cfg(test)]
mod post_tool_batch_tests {
    /// `captures/p1_file_tools_payloads`: the Edit call's PostToolBatch `tool_input`.
    #[test]
    fn batch_tool_input_puts_edit_defaults_first() {
        let raw = serde_json::json!({"file_path": "notes.txt", "old_string": "beta", "new_string": "gamma"});
        assert_eq!(
            serde_json::to_string(&super::batch_tool_input("edit", &raw)).unwrap(),
            r#"{"replace_all":false,"file_path":"notes.txt","old_string":"beta","new_string":"gamma"}"#
        );
        let explicit = serde_json::json!({"file_path": "a", "old_string": "b", "new_string": "c", "replace_all": true});
        assert_eq!(super::batch_tool_input("edit", &explicit), explicit);
        let read = serde_json::json!({"file_path": "notes.txt"});
        assert_eq!(super::batch_tool_input("read", &read), read);
    }

    use super::*;

    /// `captures/t_postbatch_ctx`: PostToolBatch stdin, byte-exact.
    #[test]
    fn post_tool_batch_matches_the_capture() {
        let common = Common {
            session_id: "e2c7f81a-b40f-4201-9af8-d9e28796d774".into(),
            transcript_path:
                "<HOME>/.claude/projects/<PROJECT_SLUG>/e2c7f81a-b40f-4201-9af8-d9e28796d774.jsonl"
                    .into(),
            cwd: "<PROJECT>".into(),
            prompt_id: Some("dedd554b-5043-4e97-b56c-c03cad50671e".into()),
            permission_mode: "bypassPermissions".into(),
            effort: "medium".into(),
            agent: None,
        };
        let calls = [BatchCall {
            tool_name: "Bash".into(),
            tool_input: json!({"command": "echo hi", "description": "x"}),
            tool_use_id: "toolu_oracle_001".into(),
            tool_response: ToolResponse::Text("hi".into()),
        }];
        let stdin = String::from_utf8(to_stdin(&post_tool_batch(&common, &calls))).unwrap();
        assert_eq!(
            stdin,
            "{\"session_id\":\"e2c7f81a-b40f-4201-9af8-d9e28796d774\",\"transcript_path\":\"<HOME>/.claude/projects/<PROJECT_SLUG>/e2c7f81a-b40f-4201-9af8-d9e28796d774.jsonl\",\"cwd\":\"<PROJECT>\",\"prompt_id\":\"dedd554b-5043-4e97-b56c-c03cad50671e\",\"permission_mode\":\"bypassPermissions\",\"effort\":{\"level\":\"medium\"},\"hook_event_name\":\"PostToolBatch\",\"tool_calls\":[{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"echo hi\",\"description\":\"x\"},\"tool_use_id\":\"toolu_oracle_001\",\"tool_response\":\"hi\"}]}\n"
        );
    }
}

#[cfg(test)]
mod tool_name_tests {
    use super::{cc_tool_name, dsh_tool_name};

    #[test]
    fn tool_names_map_back_to_what_they_came_from() {
        for tool in [
            "bash",
            "read",
            "write",
            "edit",
            "glob",
            "grep",
            "agent",
            "mcp__x__y",
        ] {
            assert_eq!(dsh_tool_name(&cc_tool_name(tool)), tool);
        }
        assert_eq!(dsh_tool_name("MultiEdit"), "edit");
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod mcp_tests {
    use super::tests::common;
    use super::*;

    #[test]
    fn mcp_tool_events_end_with_the_server_and_keep_the_captured_shapes() {
        let servers = vec![
            McpServerTag {
                name: "echo".into(),
                source: "project".into(),
            },
            McpServerTag {
                name: "echo x".into(),
                source: "user".into(),
            },
        ];
        assert_eq!(
            mcp_server_of("mcp__echo__echo", &servers),
            Some(&servers[0])
        );
        assert_eq!(mcp_server_of("mcp__echo_x__t", &servers), Some(&servers[1]));
        assert_eq!(mcp_server_of("mcp__other__t", &servers), None);
        assert_eq!(mcp_server_of("bash", &servers), None);
        let common = common();
        let input = json!({"text":"hello"});
        let payload = with_mcp_server(
            pre_tool_use(&common, "mcp__echo__echo", &input, "t1"),
            Some(&servers[0]),
        );
        let text = String::from_utf8(to_stdin(&payload)).unwrap();
        assert!(
            text.ends_with(
                r#""tool_use_id":"t1","mcp_server":{"name":"echo","source":"project"}}
"#
            ),
            "{text}"
        );
        let structured = json!({"content":[{"type":"text","text":"ECHO: hello"}],"structuredContent":{"result":"ECHO: hello"},"isError":false});
        assert_eq!(
            serde_json::to_value(tool_response(
                "mcp__echo__echo",
                Some(&structured),
                &json!({}),
                "",
                1
            ))
            .unwrap(),
            json!("{\"result\":\"ECHO: hello\"}")
        );
        let text_only =
            json!({"content":[{"type":"text","text":"ECHO-TEXT: plain"}],"isError":false});
        assert_eq!(
            serde_json::to_value(tool_response(
                "mcp__echo__echo_text",
                Some(&text_only),
                &json!({}),
                "",
                1
            ))
            .unwrap(),
            json!([{"type":"text","text":"ECHO-TEXT: plain"}])
        );
        // PostToolBatch: blocks for an untouched text-only result, the text otherwise.
        assert_eq!(
            serde_json::to_value(batch_tool_response(
                "mcp__echo__echo_text",
                Some(&text_only),
                "ECHO-TEXT: plain",
                false
            ))
            .unwrap(),
            json!([{"type":"text","text":"ECHO-TEXT: plain"}])
        );
        assert_eq!(
            serde_json::to_value(batch_tool_response(
                "mcp__echo__echo_text",
                Some(&text_only),
                "REPLACED",
                false
            ))
            .unwrap(),
            json!("REPLACED")
        );
        assert_eq!(
            serde_json::to_value(batch_tool_response(
                "mcp__echo__echo",
                Some(&structured),
                "{\"result\":\"ECHO: hello\"}",
                false
            ))
            .unwrap(),
            json!("{\"result\":\"ECHO: hello\"}")
        );
    }
}
