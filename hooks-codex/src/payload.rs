//! Stdin payloads, byte-for-byte as Codex 0.169 writes them: one line of
//! compact JSON, no trailing newline, keys in the captured order (which
//! differs per event). Each event's stdin is a `#[derive(Serialize)]`
//! struct whose field order is the captured key order; the functions build
//! them from a [`PayloadBase`].

use serde::Serialize;
use serde_json::{Map, Value};

/// The fields every payload shares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PayloadBase {
    /// Codex's thread id; dsh's session id.
    pub session_id: String,
    /// Codex's rollout file; dsh writes none, so `None` → JSON `null` (what
    /// Codex sends for a thread without a rollout).
    pub transcript_path: Option<String>,
    /// The session cwd.
    pub cwd: String,
    /// The model slug.
    pub model: String,
    /// `default`, `bypassPermissions`, …
    pub permission_mode: String,
}

/// The common head of a turn-scoped payload (tool events, Stop,
/// sub-agents, Interrupt), in Codex's captured order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TurnHead<'a> {
    /// Codex's thread id.
    pub session_id: &'a str,
    /// The turn.
    pub turn_id: &'a str,
    /// Codex's rollout file (`null` in dsh).
    pub transcript_path: Option<&'a str>,
    /// The session cwd.
    pub cwd: &'a str,
    /// The event's name.
    pub hook_event_name: &'a str,
    /// The model slug.
    pub model: &'a str,
    /// The permission mode.
    pub permission_mode: &'a str,
}

impl PayloadBase {
    fn head<'a>(&'a self, turn_id: &'a str, event: &'a str) -> TurnHead<'a> {
        TurnHead {
            session_id: &self.session_id,
            turn_id,
            transcript_path: self.transcript_path.as_deref(),
            cwd: &self.cwd,
            hook_event_name: event,
            model: &self.model,
            permission_mode: &self.permission_mode,
        }
    }
}

/// A payload as a JSON value. The payload structs hold only strings,
/// booleans, numbers and JSON values, so serializing them cannot fail.
fn value_of(payload: &impl Serialize) -> Value {
    serde_json::to_value(payload).unwrap_or(Value::Null)
}

/// `SessionStart`'s stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionStartInput<'a> {
    /// Codex's thread id.
    pub session_id: &'a str,
    /// Codex's rollout file (`null` in dsh).
    pub transcript_path: Option<&'a str>,
    /// The session cwd.
    pub cwd: &'a str,
    /// `SessionStart`.
    pub hook_event_name: &'static str,
    /// The model slug.
    pub model: &'a str,
    /// The permission mode.
    pub permission_mode: &'a str,
    /// `startup`, `resume`, `clear`, `compact`.
    pub source: &'a str,
}

/// `SessionStart`.
pub fn session_start(base: &PayloadBase, source: &str) -> Value {
    value_of(&SessionStartInput {
        session_id: &base.session_id,
        transcript_path: base.transcript_path.as_deref(),
        cwd: &base.cwd,
        hook_event_name: "SessionStart",
        model: &base.model,
        permission_mode: &base.permission_mode,
        source,
    })
}

/// `UserPromptSubmit`'s stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserPromptSubmitInput<'a> {
    /// The common head (event `UserPromptSubmit`).
    #[serde(flatten)]
    pub head: TurnHead<'a>,
    /// The prompt text.
    pub prompt: &'a str,
}

/// `UserPromptSubmit`.
pub fn user_prompt_submit(base: &PayloadBase, turn_id: &str, prompt: &str) -> Value {
    value_of(&UserPromptSubmitInput {
        head: base.head(turn_id, "UserPromptSubmit"),
        prompt,
    })
}

/// `PreModelRequest`'s stdin (no `permission_mode`; `cwd` before
/// `transcript_path`; the event name last).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PreModelRequestInput<'a> {
    /// Codex's thread id.
    pub session_id: &'a str,
    /// The turn.
    pub turn_id: &'a str,
    /// The session cwd.
    pub cwd: &'a str,
    /// Codex's rollout file (`null` in dsh).
    pub transcript_path: Option<&'a str>,
    /// The model slug.
    pub model: &'a str,
    /// `PreModelRequest`.
    pub hook_event_name: &'static str,
}

/// `PreModelRequest` (no `permission_mode`; `cwd` before `transcript_path`).
pub fn pre_model_request(base: &PayloadBase, turn_id: &str) -> Value {
    value_of(&PreModelRequestInput {
        session_id: &base.session_id,
        turn_id,
        cwd: &base.cwd,
        transcript_path: base.transcript_path.as_deref(),
        model: &base.model,
        hook_event_name: "PreModelRequest",
    })
}

/// Token usage as Codex reports it after a model request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CodexTokenUsage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Cached prompt tokens (0 unless the provider reports cache reads).
    pub cached_input_tokens: u64,
    /// Cache-write tokens (0 unless the provider reports cache writes).
    pub cache_write_input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Reasoning tokens (0).
    pub reasoning_output_tokens: u64,
}

/// [`CodexTokenUsage`] on the wire, with its total.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TokenUsageWire {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Cached prompt tokens.
    pub cached_input_tokens: u64,
    /// Cache-write tokens.
    pub cache_write_input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Reasoning tokens.
    pub reasoning_output_tokens: u64,
    /// Prompt plus completion tokens.
    pub total_tokens: u64,
}

impl CodexTokenUsage {
    fn wire(self) -> TokenUsageWire {
        TokenUsageWire {
            input_tokens: self.input_tokens,
            cached_input_tokens: self.cached_input_tokens,
            cache_write_input_tokens: self.cache_write_input_tokens,
            output_tokens: self.output_tokens,
            reasoning_output_tokens: self.reasoning_output_tokens,
            total_tokens: self.input_tokens + self.output_tokens,
        }
    }
}

/// `PostModelRequest`'s stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PostModelRequestInput<'a> {
    /// Codex's thread id.
    pub session_id: &'a str,
    /// The turn.
    pub turn_id: &'a str,
    /// The session cwd.
    pub cwd: &'a str,
    /// Codex's rollout file (`null` in dsh).
    pub transcript_path: Option<&'a str>,
    /// The model slug.
    pub model: &'a str,
    /// `PostModelRequest`.
    pub hook_event_name: &'static str,
    /// `completed` or `failed`.
    pub status: &'static str,
    /// The failure, for a failed request.
    pub error: Option<&'a str>,
    /// The usage, when the provider reported it.
    pub token_usage: Option<TokenUsageWire>,
}

/// `PostModelRequest`: `Ok(usage)` for a completed request, `Err(message)` for a failed one.
pub fn post_model_request(
    base: &PayloadBase,
    turn_id: &str,
    result: Result<Option<CodexTokenUsage>, &str>,
) -> Value {
    let (status, error, token_usage) = match result {
        Ok(usage) => ("completed", None, usage.map(CodexTokenUsage::wire)),
        Err(message) => ("failed", Some(message), None),
    };
    value_of(&PostModelRequestInput {
        session_id: &base.session_id,
        turn_id,
        cwd: &base.cwd,
        transcript_path: base.transcript_path.as_deref(),
        model: &base.model,
        hook_event_name: "PostModelRequest",
        status,
        error,
        token_usage,
    })
}

/// `PreToolUse`, `PermissionRequest` and `PostToolUse`'s stdin: the head,
/// the tool, and what each event adds (`PermissionRequest` has no
/// `tool_use_id`, only `PostToolUse` a `tool_response`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolInput<'a> {
    /// The common head.
    #[serde(flatten)]
    pub head: TurnHead<'a>,
    /// Codex's tool name.
    pub tool_name: &'a str,
    /// The tool's arguments.
    pub tool_input: &'a Value,
    /// What the tool returned (`PostToolUse`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_response: Option<&'a Value>,
    /// The call's id (not on `PermissionRequest`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<&'a str>,
}

/// `PreToolUse`.
pub fn pre_tool_use(
    base: &PayloadBase,
    turn_id: &str,
    tool_name: &str,
    tool_input: &Value,
    tool_use_id: &str,
) -> Value {
    value_of(&ToolInput {
        head: base.head(turn_id, "PreToolUse"),
        tool_name,
        tool_input,
        tool_response: None,
        tool_use_id: Some(tool_use_id),
    })
}

/// `PermissionRequest` (no `tool_use_id`).
pub fn permission_request(
    base: &PayloadBase,
    turn_id: &str,
    tool_name: &str,
    tool_input: &Value,
) -> Value {
    value_of(&ToolInput {
        head: base.head(turn_id, "PermissionRequest"),
        tool_name,
        tool_input,
        tool_response: None,
        tool_use_id: None,
    })
}

/// `PostToolUse`.
pub fn post_tool_use(
    base: &PayloadBase,
    turn_id: &str,
    tool_name: &str,
    tool_input: &Value,
    tool_response: &Value,
    tool_use_id: &str,
) -> Value {
    value_of(&ToolInput {
        head: base.head(turn_id, "PostToolUse"),
        tool_name,
        tool_input,
        tool_response: Some(tool_response),
        tool_use_id: Some(tool_use_id),
    })
}

/// `Stop`'s stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StopInput<'a> {
    /// The common head (event `Stop`).
    #[serde(flatten)]
    pub head: TurnHead<'a>,
    /// Whether a Stop hook already continued this turn.
    pub stop_hook_active: bool,
    /// The last assistant message, if any.
    pub last_assistant_message: Option<&'a str>,
}

/// `Stop`.
pub fn stop(
    base: &PayloadBase,
    turn_id: &str,
    stop_hook_active: bool,
    last_assistant_message: Option<&str>,
) -> Value {
    value_of(&StopInput {
        head: base.head(turn_id, "Stop"),
        stop_hook_active,
        last_assistant_message,
    })
}

/// `SubagentStart`'s stdin: the head, then the sub-agent's id and type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SubagentStartInput<'a> {
    /// The common head (event `SubagentStart`).
    #[serde(flatten)]
    pub head: TurnHead<'a>,
    /// The sub-agent's id.
    pub agent_id: &'a str,
    /// Its type (Codex's name).
    pub agent_type: &'a str,
}

/// `SubagentStart`: the common fields, then the sub-agent's id and type.
pub fn subagent_start(
    base: &PayloadBase,
    turn_id: &str,
    agent_id: &str,
    agent_type: &str,
) -> Value {
    value_of(&SubagentStartInput {
        head: base.head(turn_id, "SubagentStart"),
        agent_id,
        agent_type,
    })
}

/// `SubagentStop`'s stdin, in the captured order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SubagentStopInput<'a> {
    /// Codex's thread id.
    pub session_id: &'a str,
    /// The turn.
    pub turn_id: &'a str,
    /// Codex's rollout file (`null` in dsh).
    pub transcript_path: Option<&'a str>,
    /// The sub-agent's rollout file (`null` in dsh).
    pub agent_transcript_path: Option<&'a str>,
    /// The session cwd.
    pub cwd: &'a str,
    /// `SubagentStop`.
    pub hook_event_name: &'static str,
    /// The model slug.
    pub model: &'a str,
    /// The permission mode.
    pub permission_mode: &'a str,
    /// Whether a Stop hook already continued this sub-agent.
    pub stop_hook_active: bool,
    /// The sub-agent's id.
    pub agent_id: &'a str,
    /// Its type (Codex's name).
    pub agent_type: &'a str,
    /// Its last assistant message, if any.
    pub last_assistant_message: Option<&'a str>,
}

/// `SubagentStop`: `agent_transcript_path` after `transcript_path` (both
/// `null`: dsh writes no Codex rollout), then Stop's fields around the
/// sub-agent's id and type, as captured.
pub fn subagent_stop(
    base: &PayloadBase,
    turn_id: &str,
    agent_id: &str,
    agent_type: &str,
    stop_hook_active: bool,
    last_assistant_message: Option<&str>,
) -> Value {
    value_of(&SubagentStopInput {
        session_id: &base.session_id,
        turn_id,
        transcript_path: base.transcript_path.as_deref(),
        agent_transcript_path: base.transcript_path.as_deref(),
        cwd: &base.cwd,
        hook_event_name: "SubagentStop",
        model: &base.model,
        permission_mode: &base.permission_mode,
        stop_hook_active,
        agent_id,
        agent_type,
        last_assistant_message,
    })
}

/// A payload fired inside a sub-agent: `agent_id` and `agent_type` go right
/// before `hook_event_name` where it is last but one (Pre/PostModelRequest,
/// as captured), otherwise right after `permission_mode` (as on
/// SubagentStart; the captures show no tool event inside a sub-agent).
pub fn with_agent(payload: &Value, agent_id: &str, agent_type: &str) -> Value {
    let Value::Object(map) = payload else {
        return payload.clone();
    };
    let before_event = !map.contains_key("permission_mode");
    let mut out = Map::new();
    for (key, value) in map {
        if before_event && key == "hook_event_name" {
            out.insert("agent_id".into(), Value::from(agent_id));
            out.insert("agent_type".into(), Value::from(agent_type));
        }
        let after_mode = key == "permission_mode";
        out.insert(key.clone(), value.clone());
        if after_mode {
            out.insert("agent_id".into(), Value::from(agent_id));
            out.insert("agent_type".into(), Value::from(agent_type));
        }
    }
    Value::Object(out)
}

/// Codex's name for dsh's default agent type.
pub fn codex_agent_type(dsh_type: &str) -> &str {
    if dsh_type == dsh_seams::DEFAULT_AGENT_TYPE {
        "default"
    } else {
        dsh_type
    }
}

/// `Interrupt`.
pub fn interrupt(base: &PayloadBase, turn_id: &str) -> Value {
    value_of(&base.head(turn_id, "Interrupt"))
}

/// `PreCompact` / `PostCompact`'s stdin (`compact*` captures): the turn,
/// the model and `trigger`; no `permission_mode`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CompactInput<'a> {
    /// Codex's thread id.
    pub session_id: &'a str,
    /// The turn.
    pub turn_id: &'a str,
    /// Codex's rollout file (`null` in dsh).
    pub transcript_path: Option<&'a str>,
    /// The session cwd.
    pub cwd: &'a str,
    /// `PreCompact` or `PostCompact`.
    pub hook_event_name: &'a str,
    /// The model slug.
    pub model: &'a str,
    /// `manual` or `auto`.
    pub trigger: &'a str,
}

/// `PreCompact` / `PostCompact` (`compact*` captures): the turn, the model and
/// `trigger`; no `permission_mode`.
pub fn compact(base: &PayloadBase, turn_id: &str, event: &str, trigger: &str) -> Value {
    value_of(&CompactInput {
        session_id: &base.session_id,
        turn_id,
        transcript_path: base.transcript_path.as_deref(),
        cwd: &base.cwd,
        hook_event_name: event,
        model: &base.model,
        trigger,
    })
}

/// `SessionEnd`'s stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionEndInput<'a> {
    /// Codex's thread id.
    pub session_id: &'a str,
    /// Codex's rollout file (`null` in dsh).
    pub transcript_path: Option<&'a str>,
    /// The session cwd.
    pub cwd: &'a str,
    /// `SessionEnd`.
    pub hook_event_name: &'static str,
    /// Always `other` in Codex 0.169.
    pub reason: &'static str,
}

/// `SessionEnd` (`reason` is always `other` in Codex 0.169).
pub fn session_end(base: &PayloadBase) -> Value {
    value_of(&SessionEndInput {
        session_id: &base.session_id,
        transcript_path: base.transcript_path.as_deref(),
        cwd: &base.cwd,
        hook_event_name: "SessionEnd",
        reason: "other",
    })
}

/// The legacy `notify` argument, with kebab-case keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct NotifyArgument<'a> {
    /// `agent-turn-complete`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Codex's thread id.
    pub thread_id: &'a str,
    /// The turn.
    pub turn_id: &'a str,
    /// The session cwd.
    pub cwd: &'a str,
    /// The turn's user messages.
    pub input_messages: &'a [String],
    /// The last assistant message, if any.
    pub last_assistant_message: Option<&'a str>,
}

/// The legacy `notify` argument: `agent-turn-complete` with kebab-case keys.
/// `client` is omitted (Codex omits it when unknown; dsh is not a Codex client).
pub fn notify(
    thread_id: &str,
    turn_id: &str,
    cwd: &str,
    input_messages: &[String],
    last_assistant_message: Option<&str>,
) -> Value {
    value_of(&NotifyArgument {
        kind: "agent-turn-complete",
        thread_id,
        turn_id,
        cwd,
        input_messages,
        last_assistant_message,
    })
}

/// The exact stdin bytes: compact JSON, no trailing newline.
pub fn to_stdin(payload: &Value) -> Vec<u8> {
    serde_json::to_vec(payload).unwrap_or_default()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod subagent_tests {
    use super::*;

    fn base() -> PayloadBase {
        PayloadBase {
            session_id: "S".into(),
            transcript_path: None,
            cwd: "<PROJECT>".into(),
            model: "gpt-5.5".into(),
            permission_mode: "bypassPermissions".into(),
        }
    }

    /// The key order of `captures/subagent`'s SubagentStart and SubagentStop.
    #[test]
    fn subagent_payloads_keep_the_captured_key_order() {
        let start = subagent_start(&base(), "T", "A", "default");
        assert_eq!(
            String::from_utf8(to_stdin(&start)).unwrap(),
            r#"{"session_id":"S","turn_id":"T","transcript_path":null,"cwd":"<PROJECT>","hook_event_name":"SubagentStart","model":"gpt-5.5","permission_mode":"bypassPermissions","agent_id":"A","agent_type":"default"}"#
        );
        let stop = subagent_stop(&base(), "T", "A", "default", true, Some("continued"));
        assert_eq!(
            String::from_utf8(to_stdin(&stop)).unwrap(),
            r#"{"session_id":"S","turn_id":"T","transcript_path":null,"agent_transcript_path":null,"cwd":"<PROJECT>","hook_event_name":"SubagentStop","model":"gpt-5.5","permission_mode":"bypassPermissions","stop_hook_active":true,"agent_id":"A","agent_type":"default","last_assistant_message":"continued"}"#
        );
        // Inside a sub-agent, PreModelRequest names it before the event name.
        let pre = with_agent(&pre_model_request(&base(), "T"), "A", "default");
        assert_eq!(
            String::from_utf8(to_stdin(&pre)).unwrap(),
            r#"{"session_id":"S","turn_id":"T","cwd":"<PROJECT>","transcript_path":null,"model":"gpt-5.5","agent_id":"A","agent_type":"default","hook_event_name":"PreModelRequest"}"#
        );
        assert_eq!(codex_agent_type("general-purpose"), "default");
        assert_eq!(codex_agent_type("reviewer"), "reviewer");
    }
}
