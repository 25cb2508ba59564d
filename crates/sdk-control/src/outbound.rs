//! What the CLI writes on stdout besides the conversation messages: its
//! control requests to the SDK, its answers to the SDK's, and the
//! SDK-host system messages. Field order is wire order.

use dsh_protocol::PermissionUpdate;
use serde::Serialize;
use serde_json::Value;

/// `{"type":"control_request","request_id":…,"request":{…}}` (CLI → SDK).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ControlRequestLine {
    /// Always `control_request`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// A fresh UUID; the SDK's answer echoes it.
    pub request_id: String,
    /// The request.
    pub request: CliRequest,
}

impl ControlRequestLine {
    /// A request line with `request_id`.
    pub fn new(request_id: String, request: CliRequest) -> Self {
        ControlRequestLine {
            kind: "control_request",
            request_id,
            request,
        }
    }
}

/// A request the CLI sends the SDK, by `subtype`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum CliRequest {
    /// The permission check reached "ask" and the application has `canUseTool`.
    CanUseTool(CanUseTool),
    /// An SDK hook callback fires.
    HookCallback(HookCallback),
    /// A JSON-RPC message for an in-process SDK MCP server.
    McpMessage(McpMessage),
}

/// `can_use_tool`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CanUseTool {
    /// Claude Code's tool name (`Bash`, `Write`, `mcp__calc__add`).
    pub tool_name: String,
    /// The name shown to people (the tool name).
    pub display_name: String,
    /// The call's input as the model made it.
    pub input: Value,
    /// Why the call needs a decision, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Permission updates the application may grant (`addRules`, `setMode`, …).
    pub permission_suggestions: Vec<PermissionUpdate>,
    /// The path outside the workspace the call touches, if that is why it asks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_path: Option<String>,
    /// The model's id for the call.
    pub tool_use_id: String,
}

/// `hook_callback`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HookCallback {
    /// The id from `initialize.hooks` (`hook_0`, …).
    pub callback_id: String,
    /// Exactly the hook's stdin JSON.
    pub input: dsh_protocol::ExactJson,
    /// The tool's id for tool events; a fresh UUID for others.
    pub tool_use_id: String,
}

/// `mcp_message`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McpMessage {
    /// The SDK MCP server's name.
    pub server_name: String,
    /// The JSON-RPC message.
    pub message: crate::RpcMessage,
}

/// An empty list of pending requests (`[]`): a dsh process answering
/// `initialize` has never left a question open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NothingPending;

impl Serialize for NothingPending {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(std::iter::empty::<()>())
    }
}

/// `{"type":"control_response","response":{…}}` (CLI → SDK).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ControlResponseLine {
    /// Always `control_response`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The answer.
    pub response: ResponseBody,
}

/// The `user` line Claude Code writes before answering `set_model`: the
/// local command's output, marked as replayed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LocalCommandLine {
    /// Always `user`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// `{"role": "user", "content": "<local-command-stdout>…"}`.
    pub message: LocalCommandMessage,
    /// The session's id.
    pub session_id: String,
    /// Always `null`.
    pub parent_tool_use_id: Option<String>,
    /// A fresh UUID.
    pub uuid: String,
    /// When, as `2026-01-02T03:04:05.678Z`.
    pub timestamp: String,
    /// Always `true`.
    #[serde(rename = "isReplay")]
    pub is_replay: bool,
}

/// The message of a [`LocalCommandLine`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LocalCommandMessage {
    /// Always `user`.
    pub role: &'static str,
    /// The command's output in `<local-command-stdout>` tags.
    pub content: String,
}

impl LocalCommandLine {
    /// The line for a command that printed `stdout`.
    pub fn new(session_id: &str, stdout: &str, uuid: String, timestamp: String) -> Self {
        LocalCommandLine {
            kind: "user",
            message: LocalCommandMessage {
                role: "user",
                content: format!("<local-command-stdout>{stdout}</local-command-stdout>"),
            },
            session_id: session_id.to_owned(),
            parent_tool_use_id: None,
            uuid,
            timestamp,
            is_replay: true,
        }
    }
}

/// The payload of a success answer, by the request it answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SuccessPayload {
    /// `initialize`.
    Initialize(Box<InitializeResponse>),
    /// `interrupt`: `{"still_queued": []}` (dsh queues no prompts).
    Interrupted {
        /// Always empty.
        still_queued: NothingPending,
    },
    /// `set_model`: the model now in use.
    Model {
        /// The model's name.
        model: String,
    },
    /// `set_permission_mode`: the mode now in force.
    Mode {
        /// The mode's name (`acceptEdits`, …).
        mode: String,
    },
}

/// The answer inside a [`ControlResponseLine`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum ResponseBody {
    /// The request was served.
    Success {
        /// The request answered.
        request_id: String,
        /// Its payload.
        response: SuccessPayload,
        /// `initialize` only: `[]`.
        #[serde(skip_serializing_if = "Option::is_none")]
        pending_permission_requests: Option<NothingPending>,
        /// `initialize` only: `[]`.
        #[serde(skip_serializing_if = "Option::is_none")]
        pending_user_dialog_requests: Option<NothingPending>,
    },
    /// The request failed.
    Error {
        /// The request answered.
        request_id: String,
        /// Why.
        error: String,
    },
}

impl ControlResponseLine {
    /// A success answer carrying `response`.
    pub fn success(request_id: &str, response: SuccessPayload) -> Self {
        ControlResponseLine {
            kind: "control_response",
            response: ResponseBody::Success {
                request_id: request_id.to_owned(),
                response,
                pending_permission_requests: None,
                pending_user_dialog_requests: None,
            },
        }
    }

    /// The answer to `initialize` (with the two empty pending lists).
    pub fn initialized(request_id: &str, response: &InitializeResponse) -> Self {
        ControlResponseLine {
            kind: "control_response",
            response: ResponseBody::Success {
                request_id: request_id.to_owned(),
                response: SuccessPayload::Initialize(Box::new(response.clone())),
                pending_permission_requests: Some(NothingPending),
                pending_user_dialog_requests: Some(NothingPending),
            },
        }
    }

    /// An error answer.
    pub fn error(request_id: &str, error: impl Into<String>) -> Self {
        ControlResponseLine {
            kind: "control_response",
            response: ResponseBody::Error {
                request_id: request_id.to_owned(),
                error: error.into(),
            },
        }
    }
}

/// The inner `response` of the `initialize` answer: the keys of Claude
/// Code's, in its order, with what dsh has (no account, no remote
/// control, no fast mode).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InitializeResponse {
    /// Slash commands.
    pub commands: Vec<SlashCommandInfo>,
    /// Agent types.
    pub agents: Vec<AgentInfo>,
    /// Always `default`.
    pub output_style: &'static str,
    /// `["default"]`.
    pub available_output_styles: Vec<&'static str>,
    /// The model in use.
    pub models: Vec<ModelInfo>,
    /// dsh has no Claude account: `{}`.
    pub account: Account,
    /// dsh's process id.
    pub pid: u32,
    /// The protocol level dsh speaks ([`crate::CLAUDE_CODE_PROTOCOL_VERSION`]).
    pub claude_code_version: &'static str,
    /// The permission mode in force.
    pub current_permission_mode: String,
    /// Present when `initialize` registered hooks: the callback ids taken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hooks_applied: Option<Vec<String>>,
    /// Present with SDK MCP servers: their names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sdk_mcp_manifests_parked: Option<Vec<String>>,
    /// `idle`.
    pub session_state: &'static str,
    /// What this CLI is.
    pub capabilities: Capabilities,
}

/// A slash command in the `initialize` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SlashCommandInfo {
    /// Its name, without the slash.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The hint for its arguments.
    pub argument_hint: String,
}

/// An agent type in the `initialize` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentInfo {
    /// Its name (`subagent_type`).
    pub name: String,
    /// What it is for.
    pub description: String,
}

/// A model in the `initialize` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    /// The name requests carry.
    pub value: String,
    /// The name shown to people.
    pub display_name: String,
    /// What it is.
    pub description: String,
}

/// The Claude account in the `initialize` answer: dsh has none (`{}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Account {}

/// What the CLI answering `initialize` is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Capabilities {
    /// dsh's version.
    pub dsh_version: String,
}

/// `system/session_state_changed`, emitted when the SDK sets
/// `CLAUDE_CODE_SDK_READS_SESSION_STATE=1`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionStateChanged {
    /// `system`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// `session_state_changed`.
    pub subtype: &'static str,
    /// The new state.
    pub state: SessionState,
    /// Always true.
    pub sdk_host_only: bool,
    /// A fresh id.
    pub uuid: String,
    /// The session.
    pub session_id: String,
}

/// The session states the SDK tracks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    /// A turn runs.
    Running,
    /// A permission question waits for the application.
    RequiresAction,
    /// No turn runs.
    Idle,
}

impl SessionStateChanged {
    /// The message for `state`.
    pub fn new(state: SessionState, uuid: String, session_id: String) -> Self {
        SessionStateChanged {
            kind: "system",
            subtype: "session_state_changed",
            state,
            sdk_host_only: true,
            uuid,
            session_id,
        }
    }
}

/// `system/status` after a permission-mode change:
/// `{"type":"system","subtype":"status","status":null,"permissionMode":…,"uuid":…,"session_id":…}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModeStatus {
    /// `system`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// `status`.
    pub subtype: &'static str,
    /// `null`.
    pub status: Option<String>,
    /// The new mode.
    #[serde(rename = "permissionMode")]
    pub permission_mode: String,
    /// A fresh id.
    pub uuid: String,
    /// The session.
    pub session_id: String,
}

impl ModeStatus {
    /// The message for `mode`.
    pub fn new(mode: String, uuid: String, session_id: String) -> Self {
        ModeStatus {
            kind: "system",
            subtype: "status",
            status: None,
            permission_mode: mode,
            uuid,
            session_id,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn keys(value: &Value) -> Vec<String> {
        value.as_object().unwrap().keys().cloned().collect()
    }

    #[test]
    fn control_requests_keep_claude_codes_key_order() {
        let line = ControlRequestLine::new(
            "u-1".to_owned(),
            CliRequest::CanUseTool(CanUseTool {
                tool_name: "Write".to_owned(),
                display_name: "Write".to_owned(),
                input: json!({"file_path": "a.txt", "content": "A\n"}),
                description: Some("a.txt".to_owned()),
                permission_suggestions: vec![PermissionUpdate::SetMode {
                    mode: "acceptEdits".to_owned(),
                    destination: dsh_protocol::UpdateDestination::Session,
                }],
                blocked_path: None,
                tool_use_id: "toolu_1".to_owned(),
            }),
        );
        let value = serde_json::to_value(&line).unwrap();
        assert_eq!(keys(&value), ["type", "request_id", "request"]);
        assert_eq!(
            value["request"]["permission_suggestions"].to_string(),
            r#"[{"type":"setMode","mode":"acceptEdits","destination":"session"}]"#
        );
        // KEYS.md (can_use_tool), without server_policy_ask_only.
        assert_eq!(
            keys(&value["request"]),
            [
                "subtype",
                "tool_name",
                "display_name",
                "input",
                "description",
                "permission_suggestions",
                "tool_use_id"
            ]
        );
        let hook = ControlRequestLine::new(
            "u-2".to_owned(),
            CliRequest::HookCallback(HookCallback {
                callback_id: "hook_0".to_owned(),
                input: dsh_protocol::ExactJson::of(&json!({"hook_event_name": "PreToolUse"})),
                tool_use_id: "toolu_1".to_owned(),
            }),
        );
        let value = serde_json::to_value(&hook).unwrap();
        assert_eq!(
            keys(&value["request"]),
            ["subtype", "callback_id", "input", "tool_use_id"]
        );
        assert_eq!(value["request"]["subtype"], "hook_callback");
    }

    #[test]
    fn typed_answers_write_the_captured_bytes() {
        // KEYS.md, the `set_model` user line (written compact).
        let line = LocalCommandLine::new(
            "36c60411-4401-43a3-bde3-38041d1e3cbf",
            "Set model to `claude-haiku-4-5`",
            "56a18b9c-357f-42d1-ab5f-c64e03c38fb1".to_owned(),
            "2026-12-06T02:30:20.660Z".to_owned(),
        );
        assert_eq!(
            serde_json::to_string(&line).unwrap(),
            r#"{"type":"user","message":{"role":"user","content":"<local-command-stdout>Set model to `claude-haiku-4-5`</local-command-stdout>"},"session_id":"36c60411-4401-43a3-bde3-38041d1e3cbf","parent_tool_use_id":null,"uuid":"56a18b9c-357f-42d1-ab5f-c64e03c38fb1","timestamp":"2026-12-06T02:30:20.660Z","isReplay":true}"#
        );
        let answer = |payload| {
            let line = ControlResponseLine::success("r", payload);
            serde_json::to_value(&line).unwrap()["response"]["response"].to_string()
        };
        assert_eq!(
            answer(SuccessPayload::Interrupted {
                still_queued: NothingPending
            }),
            r#"{"still_queued":[]}"#
        );
        assert_eq!(
            answer(SuccessPayload::Model {
                model: "claude-haiku-4-5".to_owned()
            }),
            r#"{"model":"claude-haiku-4-5"}"#
        );
    }

    #[test]
    fn responses_and_state_messages_match_the_captures() {
        let ok = serde_json::to_string(&ControlResponseLine::success(
            "zp3l4n38h7",
            SuccessPayload::Mode {
                mode: "acceptEdits".to_owned(),
            },
        ))
        .unwrap();
        assert_eq!(
            ok,
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"zp3l4n38h7","response":{"mode":"acceptEdits"}}}"#
        );
        let err = serde_json::to_string(&ControlResponseLine::error("r", "no")).unwrap();
        assert_eq!(
            err,
            r#"{"type":"control_response","response":{"subtype":"error","request_id":"r","error":"no"}}"#
        );
        let state = serde_json::to_value(SessionStateChanged::new(
            SessionState::RequiresAction,
            "u".to_owned(),
            "s".to_owned(),
        ))
        .unwrap();
        assert_eq!(
            keys(&state),
            [
                "type",
                "subtype",
                "state",
                "sdk_host_only",
                "uuid",
                "session_id"
            ]
        );
        assert_eq!(state["state"], "requires_action");
        let status = serde_json::to_string(&ModeStatus::new(
            "acceptEdits".into(),
            "u".into(),
            "s".into(),
        ))
        .unwrap();
        assert_eq!(
            status,
            r#"{"type":"system","subtype":"status","status":null,"permissionMode":"acceptEdits","uuid":"u","session_id":"s"}"#
        );
    }
}
