//! Stdin payloads, byte-for-byte as Codex 0.169 writes them: one line of
//! compact JSON, no trailing newline, keys in the captured order (which
//! differs per event; `serde_json`'s `preserve_order` keeps it).

use serde_json::{Map, Value, json};

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

impl PayloadBase {
    fn transcript(&self) -> Value {
        self.transcript_path
            .as_ref()
            .map_or(Value::Null, |path| Value::from(path.as_str()))
    }
}

/// `SessionStart`.
pub fn session_start(base: &PayloadBase, source: &str) -> Value {
    json!({
        "session_id": base.session_id,
        "transcript_path": base.transcript(),
        "cwd": base.cwd,
        "hook_event_name": "SessionStart",
        "model": base.model,
        "permission_mode": base.permission_mode,
        "source": source,
    })
}

/// `UserPromptSubmit`.
pub fn user_prompt_submit(base: &PayloadBase, turn_id: &str, prompt: &str) -> Value {
    json!({
        "session_id": base.session_id,
        "turn_id": turn_id,
        "transcript_path": base.transcript(),
        "cwd": base.cwd,
        "hook_event_name": "UserPromptSubmit",
        "model": base.model,
        "permission_mode": base.permission_mode,
        "prompt": prompt,
    })
}

/// `PreModelRequest` (no `permission_mode`; `cwd` before `transcript_path`).
pub fn pre_model_request(base: &PayloadBase, turn_id: &str) -> Value {
    json!({
        "session_id": base.session_id,
        "turn_id": turn_id,
        "cwd": base.cwd,
        "transcript_path": base.transcript(),
        "model": base.model,
        "hook_event_name": "PreModelRequest",
    })
}

/// Token usage as Codex reports it after a model request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CodexTokenUsage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Cached prompt tokens (dsh's providers do not report them: 0).
    pub cached_input_tokens: u64,
    /// Cache-write tokens (0).
    pub cache_write_input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Reasoning tokens (0).
    pub reasoning_output_tokens: u64,
}

impl CodexTokenUsage {
    fn to_value(self) -> Value {
        json!({
            "input_tokens": self.input_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "cache_write_input_tokens": self.cache_write_input_tokens,
            "output_tokens": self.output_tokens,
            "reasoning_output_tokens": self.reasoning_output_tokens,
            "total_tokens": self.input_tokens + self.output_tokens,
        })
    }
}

/// `PostModelRequest`: `Ok(usage)` for a completed request, `Err(message)` for a failed one.
pub fn post_model_request(
    base: &PayloadBase,
    turn_id: &str,
    result: Result<Option<CodexTokenUsage>, &str>,
) -> Value {
    let (status, error, usage) = match result {
        Ok(usage) => (
            "completed",
            Value::Null,
            usage.map_or(Value::Null, CodexTokenUsage::to_value),
        ),
        Err(message) => ("failed", Value::from(message), Value::Null),
    };
    json!({
        "session_id": base.session_id,
        "turn_id": turn_id,
        "cwd": base.cwd,
        "transcript_path": base.transcript(),
        "model": base.model,
        "hook_event_name": "PostModelRequest",
        "status": status,
        "error": error,
        "token_usage": usage,
    })
}

fn tool_common(base: &PayloadBase, turn_id: &str, event: &str) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("session_id".into(), Value::from(base.session_id.as_str()));
    map.insert("turn_id".into(), Value::from(turn_id));
    map.insert("transcript_path".into(), base.transcript());
    map.insert("cwd".into(), Value::from(base.cwd.as_str()));
    map.insert("hook_event_name".into(), Value::from(event));
    map.insert("model".into(), Value::from(base.model.as_str()));
    map.insert(
        "permission_mode".into(),
        Value::from(base.permission_mode.as_str()),
    );
    map
}

/// `PreToolUse`.
pub fn pre_tool_use(
    base: &PayloadBase,
    turn_id: &str,
    tool_name: &str,
    tool_input: &Value,
    tool_use_id: &str,
) -> Value {
    let mut map = tool_common(base, turn_id, "PreToolUse");
    map.insert("tool_name".into(), Value::from(tool_name));
    map.insert("tool_input".into(), tool_input.clone());
    map.insert("tool_use_id".into(), Value::from(tool_use_id));
    Value::Object(map)
}

/// `PermissionRequest` (no `tool_use_id`).
pub fn permission_request(
    base: &PayloadBase,
    turn_id: &str,
    tool_name: &str,
    tool_input: &Value,
) -> Value {
    let mut map = tool_common(base, turn_id, "PermissionRequest");
    map.insert("tool_name".into(), Value::from(tool_name));
    map.insert("tool_input".into(), tool_input.clone());
    Value::Object(map)
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
    let mut map = tool_common(base, turn_id, "PostToolUse");
    map.insert("tool_name".into(), Value::from(tool_name));
    map.insert("tool_input".into(), tool_input.clone());
    map.insert("tool_response".into(), tool_response.clone());
    map.insert("tool_use_id".into(), Value::from(tool_use_id));
    Value::Object(map)
}

/// `Stop`.
pub fn stop(
    base: &PayloadBase,
    turn_id: &str,
    stop_hook_active: bool,
    last_assistant_message: Option<&str>,
) -> Value {
    let mut map = tool_common(base, turn_id, "Stop");
    map.insert("stop_hook_active".into(), Value::Bool(stop_hook_active));
    map.insert(
        "last_assistant_message".into(),
        last_assistant_message.map_or(Value::Null, Value::from),
    );
    Value::Object(map)
}

/// `SubagentStart`: the common fields, then the sub-agent's id and type.
pub fn subagent_start(
    base: &PayloadBase,
    turn_id: &str,
    agent_id: &str,
    agent_type: &str,
) -> Value {
    let mut map = tool_common(base, turn_id, "SubagentStart");
    map.insert("agent_id".into(), Value::from(agent_id));
    map.insert("agent_type".into(), Value::from(agent_type));
    Value::Object(map)
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
    let mut map = Map::new();
    for (key, value) in tool_common(base, turn_id, "SubagentStop") {
        let after_transcript = key == "transcript_path";
        map.insert(key, value);
        if after_transcript {
            map.insert("agent_transcript_path".into(), base.transcript());
        }
    }
    map.insert("stop_hook_active".into(), Value::Bool(stop_hook_active));
    map.insert("agent_id".into(), Value::from(agent_id));
    map.insert("agent_type".into(), Value::from(agent_type));
    map.insert(
        "last_assistant_message".into(),
        last_assistant_message.map_or(Value::Null, Value::from),
    );
    Value::Object(map)
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
    Value::Object(tool_common(base, turn_id, "Interrupt"))
}

/// `PreCompact` / `PostCompact` (`compact*` captures): the turn, the model and
/// `trigger`; no `permission_mode`.
pub fn compact(base: &PayloadBase, turn_id: &str, event: &str, trigger: &str) -> Value {
    let mut map = tool_common(base, turn_id, event);
    map.remove("permission_mode");
    map.insert("trigger".into(), Value::from(trigger));
    Value::Object(map)
}

/// `SessionEnd` (`reason` is always `other` in Codex 0.169).
pub fn session_end(base: &PayloadBase) -> Value {
    json!({
        "session_id": base.session_id,
        "transcript_path": base.transcript(),
        "cwd": base.cwd,
        "hook_event_name": "SessionEnd",
        "reason": "other",
    })
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
    json!({
        "type": "agent-turn-complete",
        "thread-id": thread_id,
        "turn-id": turn_id,
        "cwd": cwd,
        "input-messages": input_messages,
        "last-assistant-message": last_assistant_message,
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
