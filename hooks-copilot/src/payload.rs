//! Copilot's stdin payloads, byte for byte: one compact JSON object, no
//! trailing newline. camelCase entries get `sessionId, timestamp (epoch
//! ms), cwd` then the event's camelCase keys; PascalCase entries get
//! `hook_event_name, session_id, timestamp (ISO-8601), cwd` then snake_case
//! keys and Claude tool names. `permissionRequest` has one shape in both
//! modes (`hookName` first). Key orders are the captures'.

use dsh_seams::SeamContext;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::event::{CopilotEvent, Mode};
use crate::tools;

/// What every payload starts with.
#[derive(Debug, Clone, PartialEq)]
pub struct Common {
    /// The session (or subagent) id.
    pub session_id: String,
    /// Epoch milliseconds.
    pub timestamp_ms: i64,
    /// The session directory.
    pub cwd: String,
    /// The subagent the event fires inside, if any.
    pub agent: Option<AgentFields>,
}

/// Inside a subagent every payload gains `agentId, agentType,
/// parentAgentId` at the end and `sessionId` is the subagent's id, except
/// `permissionRequest` (and subagentStart/subagentStop, which fire for the
/// parent) that keep the parent's session id (subagent_task).
#[derive(Debug, Clone, PartialEq)]
pub struct AgentFields {
    /// The subagent's id.
    pub agent_id: String,
    /// Its agent type (`explore`).
    pub agent_type: String,
    /// The parent session's id.
    pub parent_id: String,
}

impl Common {
    /// Now, in `ctx`'s session or inside its subagent.
    pub fn of(ctx: &SeamContext) -> Self {
        let parent_id = &ctx.session.session_id;
        let agent = ctx.agent.as_ref().map(|identity| AgentFields {
            agent_id: identity.agent_id.clone(),
            agent_type: identity.agent_type.clone(),
            parent_id: parent_id.clone(),
        });
        Common {
            session_id: agent.as_ref().map_or(parent_id, |a| &a.agent_id).clone(),
            timestamp_ms: chrono::Utc::now().timestamp_millis(),
            cwd: ctx.session.cwd.display().to_string(),
            agent,
        }
    }

    /// The parent session's id (the session's own outside subagents).
    fn parent_id(&self) -> &str {
        self.agent
            .as_ref()
            .map_or(&self.session_id, |fields| &fields.parent_id)
    }

    fn iso(&self) -> String {
        chrono::DateTime::from_timestamp_millis(self.timestamp_ms)
            .unwrap_or_default()
            .format("%Y-%m-%dT%H:%M:%S%.3fZ")
            .to_string()
    }
}

/// A tool's result as `postToolUse` reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// `success` (Copilot's only observed value here).
    pub result_type: String,
    /// What the model is shown.
    pub text_result_for_llm: String,
}

/// `errorOccurred`'s `error`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorInfo {
    /// The error message.
    pub message: String,
    /// The error's name.
    pub name: String,
    /// Its stack (`""`).
    pub stack: String,
}

/// One event's own fields (the keys after the common prefix), in the
/// captures' order, named as in camelCase payloads (snake_case keys are
/// derived from them).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged, rename_all_fields = "camelCase")]
pub enum Body {
    /// `source` (`new`, `resume`), `initialPrompt`.
    SessionStart {
        /// `new` or `resume`.
        source: String,
        /// The first prompt.
        initial_prompt: String,
    },
    /// `reason` (`complete`, `error`).
    SessionEnd {
        /// Why.
        reason: String,
    },
    /// The raw prompt.
    UserPromptSubmitted {
        /// The user's text.
        prompt: String,
    },
    /// The prompt and what the model gets.
    UserPromptTransformed {
        /// The user's text.
        prompt: String,
        /// The prompt after Copilot's preamble.
        transformed_prompt: String,
    },
    /// A call about to run.
    PreToolUse {
        /// The native tool name (written as the mode's tool name).
        tool_name: String,
        /// Copilot's arguments.
        tool_args: Value,
    },
    /// A call that ran.
    PostToolUse {
        /// The native tool name (written as the mode's tool name).
        tool_name: String,
        /// Copilot's arguments.
        tool_args: Value,
        /// Its result.
        tool_result: ToolResult,
    },
    /// A call that failed.
    PostToolUseFailure {
        /// The native tool name (written as the mode's tool name).
        tool_name: String,
        /// Copilot's arguments.
        tool_args: Value,
        /// The error text.
        error: String,
    },
    /// The permission flow of a call (one camelCase shape in both modes).
    PermissionRequest {
        /// The permission view's tool name.
        tool_name: String,
        /// The permission view.
        tool_input: Value,
    },
    /// The agent ended its turn.
    AgentStop {
        /// Copilot's session log path.
        transcript_path: String,
        /// `end_turn`.
        stop_reason: String,
        /// Whether a stop hook already blocked in this turn (snake_case
        /// even in camelCase payloads).
        #[serde(rename = "stop_hook_active")]
        stop_hook_active: bool,
    },
    /// Before compaction.
    PreCompact {
        /// Copilot's session log path.
        transcript_path: String,
        /// `manual` / `auto`.
        trigger: String,
        /// Extra instructions (`""`).
        custom_instructions: String,
    },
    /// A subagent is about to start (fired for the parent; the agent's
    /// fields follow `transcriptPath`).
    SubagentStart {
        /// Copilot's session log path (the parent's).
        transcript_path: String,
    },
    /// A subagent reached its natural stop (fired for the parent; the
    /// agent's fields follow `transcriptPath`).
    SubagentStop {
        /// Copilot's session log path (the parent's).
        transcript_path: String,
        /// The subagent's final text.
        response: String,
        /// `end_turn`.
        stop_reason: String,
        /// Whether a subagentStop hook already blocked it.
        #[serde(rename = "stop_hook_active")]
        stop_hook_active: bool,
    },
    /// Before an MCP call's request ([`crate::mcp_call`]).
    PreMcpToolCall(Box<crate::mcp_call::McpCall>),
    /// An error.
    ErrorOccurred {
        /// `model_call`, …
        error_context: String,
        /// Whether the session can go on.
        recoverable: bool,
        /// The error.
        error: ErrorInfo,
    },
}

impl Body {
    /// The event it belongs to.
    pub fn event(&self) -> CopilotEvent {
        match self {
            Body::SessionStart { .. } => CopilotEvent::SessionStart,
            Body::SessionEnd { .. } => CopilotEvent::SessionEnd,
            Body::UserPromptSubmitted { .. } => CopilotEvent::UserPromptSubmitted,
            Body::UserPromptTransformed { .. } => CopilotEvent::UserPromptTransformed,
            Body::PreToolUse { .. } => CopilotEvent::PreToolUse,
            Body::PostToolUse { .. } => CopilotEvent::PostToolUse,
            Body::PostToolUseFailure { .. } => CopilotEvent::PostToolUseFailure,
            Body::PermissionRequest { .. } => CopilotEvent::PermissionRequest,
            Body::AgentStop { .. } => CopilotEvent::AgentStop,
            Body::PreCompact { .. } => CopilotEvent::PreCompact,
            Body::ErrorOccurred { .. } => CopilotEvent::ErrorOccurred,
            Body::SubagentStart { .. } => CopilotEvent::SubagentStart,
            Body::SubagentStop { .. } => CopilotEvent::SubagentStop,
            Body::PreMcpToolCall(_) => CopilotEvent::PreMcpToolCall,
        }
    }
}

struct Keys {
    map: Map<String, Value>,
    mode: Mode,
}

impl Keys {
    fn new(mode: Mode) -> Self {
        Keys {
            map: Map::new(),
            mode,
        }
    }

    /// Inserts under the camelCase key, or its snake_case form (`toolArgs`
    /// is `tool_input`).
    fn put(&mut self, camel: &str, value: impl Into<Value>) {
        let mut key = String::new();
        match (self.mode, camel) {
            (Mode::Camel, _) => key.push_str(camel),
            (Mode::Pascal, "toolArgs") => key.push_str("tool_input"),
            (Mode::Pascal, _) => {
                for c in camel.chars() {
                    if c.is_ascii_uppercase() {
                        key.push('_');
                    }
                    key.push(c.to_ascii_lowercase());
                }
            }
        }
        self.map.insert(key, value.into());
    }
}

/// The payload an entry of `mode` gets.
pub fn build(common: &Common, body: &Body, mode: Mode) -> Value {
    let event = body.event();
    let agent = common.agent.as_ref();
    // permissionRequest has the same camelCase shape in both modes, headed
    // by its name (cc_pascal_flat), and the view's own tool name;
    // preMcpToolCall is camelCase in both modes too (mcp_pascal), with the
    // server's own tool name.
    let permission = matches!(body, Body::PermissionRequest { .. });
    let mcp = event == CopilotEvent::PreMcpToolCall;
    let mode = if permission || mcp { Mode::Camel } else { mode };
    let mut keys = Keys::new(mode);
    if permission {
        keys.put("hookName", "permissionRequest");
    }
    // subagentStart/subagentStop fire for the parent: its session id, and
    // the agent's fields in the event's own key order.
    let for_parent = matches!(body, Body::SubagentStart { .. } | Body::SubagentStop { .. });
    let session_id = if for_parent || permission {
        common.parent_id()
    } else {
        &common.session_id
    };
    if mode == Mode::Pascal {
        keys.put("hookEventName", event.name(Mode::Pascal));
    }
    keys.put("sessionId", session_id);
    match mode {
        Mode::Camel => keys.put("timestamp", common.timestamp_ms),
        Mode::Pascal => keys.put("timestamp", common.iso()),
    }
    keys.put("cwd", common.cwd.clone());
    let mut fields = serde_json::to_value(body).unwrap_or_default();
    let fields = fields
        .as_object_mut()
        .map(std::mem::take)
        .unwrap_or_default();
    for (key, mut value) in fields {
        if key == "toolName" && !permission && !mcp {
            value = tools::payload_name(value.as_str().unwrap_or_default(), mode).into();
        } else if key == "toolResult" {
            let mut inner = Keys::new(mode);
            for (key, value) in value.as_object().into_iter().flatten() {
                inner.put(key, value.clone());
            }
            value = inner.map.into();
        }
        keys.put(&key, value);
        if let (true, "transcriptPath", Some(fields)) = (for_parent, key.as_str(), agent) {
            let (id, kind) = (&fields.agent_id, &fields.agent_type);
            let named = if event == CopilotEvent::SubagentStart {
                [("agentName", kind), ("agentId", id), ("agentType", kind)]
            } else {
                [("agentId", id), ("agentType", kind), ("agentName", kind)]
            };
            named
                .into_iter()
                .for_each(|(key, value)| keys.put(key, value.clone()));
        }
    }
    if permission {
        keys.put("permissionSuggestions", json!([]));
    }
    if let Some(fields) = agent {
        if !for_parent {
            keys.put("agentId", fields.agent_id.clone());
            keys.put("agentType", fields.agent_type.clone());
        }
        keys.put("parentAgentId", fields.parent_id.clone());
    }
    keys.map.into()
}

/// `transcriptPath`: where Copilot keeps the session log
/// (`~/.copilot/session-state/<id>/events.jsonl`). dsh writes no such file;
/// the path is Copilot's convention, for hooks that only log it.
pub fn transcript_path(copilot_dir: &std::path::Path, session_id: &str) -> String {
    copilot_dir
        .join("session-state")
        .join(session_id)
        .join("events.jsonl")
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn common() -> Common {
        Common {
            session_id: "S".into(),
            timestamp_ms: 1_796_523_851_486,
            cwd: "/p".into(),
            agent: None,
        }
    }

    /// subagent_task: inside a subagent the subagent's id is `sessionId`
    /// and the agent's fields close every payload; subagentStart/Stop and
    /// permissionRequest carry the parent's id.
    #[test]
    fn subagent_payloads_are_copilots_bytes() {
        let inside = Common {
            agent: Some(AgentFields {
                agent_id: "A".into(),
                agent_type: "explore".into(),
                parent_id: "S".into(),
            }),
            session_id: "A".into(),
            ..common()
        };
        let start = Body::SubagentStart {
            transcript_path: "/t".into(),
        };
        assert_eq!(
            build(&inside, &start, Mode::Camel).to_string(),
            r#"{"sessionId":"S","timestamp":1796523851486,"cwd":"/p","transcriptPath":"/t","agentName":"explore","agentId":"A","agentType":"explore","parentAgentId":"S"}"#
        );
        let stop = Body::SubagentStop {
            transcript_path: "/t".into(),
            response: "R".into(),
            stop_reason: "end_turn".into(),
            stop_hook_active: true,
        };
        assert_eq!(
            build(&inside, &stop, Mode::Camel).to_string(),
            r#"{"sessionId":"S","timestamp":1796523851486,"cwd":"/p","transcriptPath":"/t","agentId":"A","agentType":"explore","agentName":"explore","response":"R","stopReason":"end_turn","stop_hook_active":true,"parentAgentId":"S"}"#
        );
        let prompt = Body::UserPromptSubmitted { prompt: "P".into() };
        assert_eq!(
            build(&inside, &prompt, Mode::Camel).to_string(),
            r#"{"sessionId":"A","timestamp":1796523851486,"cwd":"/p","prompt":"P","agentId":"A","agentType":"explore","parentAgentId":"S"}"#
        );
        let perm = Body::PermissionRequest {
            tool_name: "bash".into(),
            tool_input: json!({"command": "ls"}),
        };
        assert_eq!(
            build(&inside, &perm, Mode::Camel).to_string(),
            r#"{"hookName":"permissionRequest","sessionId":"S","timestamp":1796523851486,"cwd":"/p","toolName":"bash","toolInput":{"command":"ls"},"permissionSuggestions":[],"agentId":"A","agentType":"explore","parentAgentId":"S"}"#
        );
    }

    /// a_baseline_all_events, cc_pascal_flat: key orders and timestamps.
    #[test]
    fn payloads_are_copilots_bytes() {
        let pre = Body::PreToolUse {
            tool_name: "bash".into(),
            tool_args: json!({"command": "echo hi", "description": "run it"}),
        };
        assert_eq!(
            build(&common(), &pre, Mode::Camel).to_string(),
            r#"{"sessionId":"S","timestamp":1796523851486,"cwd":"/p","toolName":"bash","toolArgs":{"command":"echo hi","description":"run it"}}"#
        );
        assert_eq!(
            build(&common(), &pre, Mode::Pascal).to_string(),
            r#"{"hook_event_name":"PreToolUse","session_id":"S","timestamp":"2026-12-06T02:24:11.486Z","cwd":"/p","tool_name":"Bash","tool_input":{"command":"echo hi","description":"run it"}}"#
        );
        let stop = Body::AgentStop {
            transcript_path: "/h/e.jsonl".into(),
            stop_reason: "end_turn".into(),
            stop_hook_active: false,
        };
        assert_eq!(
            build(&common(), &stop, Mode::Camel).to_string(),
            r#"{"sessionId":"S","timestamp":1796523851486,"cwd":"/p","transcriptPath":"/h/e.jsonl","stopReason":"end_turn","stop_hook_active":false}"#
        );
        assert_eq!(
            build(&common(), &stop, Mode::Pascal).to_string(),
            r#"{"hook_event_name":"Stop","session_id":"S","timestamp":"2026-12-06T02:24:11.486Z","cwd":"/p","transcript_path":"/h/e.jsonl","stop_reason":"end_turn","stop_hook_active":false}"#
        );
        let perm = Body::PermissionRequest {
            tool_name: "bash".into(),
            tool_input: json!({"command": "echo hi"}),
        };
        let camel = build(&common(), &perm, Mode::Camel);
        assert_eq!(camel, build(&common(), &perm, Mode::Pascal));
        assert_eq!(
            camel.to_string(),
            r#"{"hookName":"permissionRequest","sessionId":"S","timestamp":1796523851486,"cwd":"/p","toolName":"bash","toolInput":{"command":"echo hi"},"permissionSuggestions":[]}"#
        );
        let post = Body::PostToolUse {
            tool_name: "read".into(),
            tool_args: json!({"path": "/p/n"}),
            tool_result: ToolResult {
                result_type: "success".into(),
                text_result_for_llm: "alpha\n".into(),
            },
        };
        assert_eq!(
            build(&common(), &post, Mode::Pascal).to_string(),
            r#"{"hook_event_name":"PostToolUse","session_id":"S","timestamp":"2026-12-06T02:24:11.486Z","cwd":"/p","tool_name":"Read","tool_input":{"path":"/p/n"},"tool_result":{"result_type":"success","text_result_for_llm":"alpha\n"}}"#
        );
    }
}
