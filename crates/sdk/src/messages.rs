//! The conversation as Claude Code's stream-json messages (`system/init`,
//! `assistant`, `user`, `result`), built from the session's events.
//!
//! Only what an SDK application reads is filled in; the field order is
//! Claude Code's (`PROTOCOL.md` §4). The full `claude -p` message model
//! (usage, cost, partial messages) belongs to the print front end; this
//! module is the driver's view of it.

use std::time::Instant;

use dsh_protocol::{Event, EventBody, TokenUsage, TurnEndReason};
use serde_json::{Value, json};

fn now() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

fn fresh() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Claude Code's tool name for a dsh tool.
fn cc_name(tool: &str) -> String {
    dsh_hooks_claude::payload::cc_tool_name(tool)
}

/// What `system/init` reports.
pub struct InitFacts<'a> {
    /// The session directory.
    pub cwd: &'a str,
    /// The session.
    pub session_id: &'a str,
    /// Claude Code's names of the tools offered.
    pub tools: Vec<String>,
    /// The model.
    pub model: &'a str,
    /// The permission mode, in Claude Code's words.
    pub permission_mode: &'a str,
}

/// `system/init`, emitted at the start of every turn.
pub fn init(facts: &InitFacts<'_>) -> Value {
    json!({
        "type": "system",
        "subtype": "init",
        "cwd": facts.cwd,
        "session_id": facts.session_id,
        "tools": facts.tools,
        "mcp_servers": [],
        "model": facts.model,
        "permissionMode": facts.permission_mode,
        "slash_commands": [],
        "apiKeySource": "none",
        "claude_code_version": dsh_sdk_control::CLAUDE_CODE_PROTOCOL_VERSION,
        "output_style": "default",
        "agents": [],
        "skills": [],
        "plugins": [],
        "uuid": fresh(),
    })
}

/// The `user` line a `set_model` answer is preceded by.
pub fn model_set(session_id: &str, model: &str) -> Value {
    json!({
        "type": "user",
        "message": {"role": "user", "content": format!("<local-command-stdout>Set model to `{model}`</local-command-stdout>")},
        "session_id": session_id,
        "parent_tool_use_id": null,
        "uuid": fresh(),
        "timestamp": now(),
        "isReplay": true,
    })
}

/// One turn's translation: its messages as events arrive, then its result.
pub struct Turn {
    session_id: String,
    model: String,
    started: Instant,
    steps: u64,
    usage: TokenUsage,
    denials: Vec<Value>,
    calls: Vec<(String, String, Value)>,
}

impl Turn {
    /// A turn of `session_id` on `model`.
    pub fn new(session_id: String, model: String) -> Self {
        Turn {
            session_id,
            model,
            started: Instant::now(),
            steps: 0,
            usage: TokenUsage::default(),
            denials: Vec::new(),
            calls: Vec::new(),
        }
    }

    fn usage_json(usage: &TokenUsage) -> Value {
        json!({
            "input_tokens": usage.input_tokens,
            "cache_creation_input_tokens": usage.cache_creation_input_tokens,
            "cache_read_input_tokens": usage.cache_read_input_tokens,
            "output_tokens": usage.output_tokens,
        })
    }

    fn assistant(&self, id: &str, block: Value, usage: &TokenUsage) -> Value {
        json!({
            "type": "assistant",
            "message": {
                "id": id,
                "type": "message",
                "role": "assistant",
                "model": self.model,
                "content": [block],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": Self::usage_json(usage),
            },
            "parent_tool_use_id": null,
            "session_id": self.session_id,
            "uuid": fresh(),
            "timestamp": now(),
        })
    }

    /// The messages one event becomes (none for most).
    pub fn event(&mut self, event: &Event) -> Vec<Value> {
        if event.agent_id.is_some() {
            // A subagent's own conversation stays inside its tool call.
            return Vec::new();
        }
        match &event.body {
            EventBody::AssistantMessage {
                content,
                tool_calls,
                usage,
                ..
            } => {
                self.steps += 1;
                let usage = usage.clone().unwrap_or_default();
                self.usage.input_tokens += usage.input_tokens;
                self.usage.output_tokens += usage.output_tokens;
                self.usage.cache_read_input_tokens += usage.cache_read_input_tokens;
                self.usage.cache_creation_input_tokens += usage.cache_creation_input_tokens;
                let id = format!("msg_{}", fresh().replace('-', ""));
                let mut lines = Vec::new();
                // One line per content block, as Claude Code.
                if !content.is_empty() {
                    lines.push(self.assistant(
                        &id,
                        json!({"type": "text", "text": content}),
                        &usage,
                    ));
                }
                for call in tool_calls {
                    self.calls
                        .push((call.id.clone(), cc_name(&call.name), call.arguments.clone()));
                    lines.push(self.assistant(
                        &id,
                        json!({"type": "tool_use", "id": call.id, "name": cc_name(&call.name), "input": call.arguments}),
                        &usage,
                    ));
                }
                lines
            }
            EventBody::ToolResult {
                call_id,
                is_error,
                content,
                disposition,
                ..
            } => {
                if disposition.as_deref().is_some_and(|d| d != "executed")
                    && let Some((_, name, input)) = self.calls.iter().find(|(id, ..)| id == call_id)
                {
                    self.denials.push(
                        json!({"tool_name": name, "tool_use_id": call_id, "tool_input": input}),
                    );
                }
                vec![json!({
                    "type": "user",
                    "message": {"role": "user", "content": [
                        {"tool_use_id": call_id, "type": "tool_result", "content": content, "is_error": is_error}
                    ]},
                    "parent_tool_use_id": null,
                    "session_id": self.session_id,
                    "uuid": fresh(),
                    "timestamp": now(),
                    "tool_use_result": if *is_error { Value::String(format!("Error: {content}")) } else { json!({"stdout": content}) },
                })]
            }
            _ => Vec::new(),
        }
    }

    /// The turn's `result`. Claude Code's key order (`type` is not first);
    /// a failed turn has `errors` in place of `result`.
    pub fn result(
        &self,
        reason: TurnEndReason,
        final_text: Option<&str>,
        message: Option<&str>,
    ) -> (Value, bool) {
        let (subtype, is_error, terminal) = match reason {
            TurnEndReason::Completed | TurnEndReason::Stopped | TurnEndReason::Rejected => {
                ("success", false, "completed")
            }
            TurnEndReason::MaxSteps => ("error_max_turns", true, "max_turns"),
            TurnEndReason::Interrupted => ("error_during_execution", true, "aborted_tools"),
            TurnEndReason::Error => ("success", true, "api_error"),
        };
        let duration = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let mut result = serde_json::Map::new();
        result.insert("duration_api_ms".into(), json!(duration));
        result.insert(
            "stop_reason".into(),
            json!(if is_error {
                Value::Null
            } else {
                json!("end_turn")
            }),
        );
        result.insert("session_id".into(), json!(self.session_id));
        result.insert("total_cost_usd".into(), json!(0));
        result.insert("usage".into(), Self::usage_json(&self.usage));
        result.insert("permission_denials".into(), json!(self.denials));
        result.insert("terminal_reason".into(), json!(terminal));
        result.insert("is_error".into(), json!(is_error));
        result.insert("num_turns".into(), json!(self.steps));
        result.insert("subtype".into(), json!(subtype));
        match (subtype, reason) {
            ("success", TurnEndReason::Error) => {
                let text = format!(
                    "API Error: {}",
                    message.unwrap_or("the model request failed")
                );
                result.insert("result".into(), json!(text));
            }
            ("success", _) => {
                result.insert("result".into(), json!(final_text.unwrap_or_default()));
            }
            (_, TurnEndReason::MaxSteps) => {
                result.insert(
                    "errors".into(),
                    json!([format!("Reached maximum number of turns ({})", self.steps)]),
                );
            }
            _ => {
                result.insert("errors".into(), json!([message.unwrap_or("interrupted")]));
            }
        }
        result.insert("type".into(), json!("result"));
        result.insert("duration_ms".into(), json!(duration));
        result.insert("uuid".into(), json!(fresh()));
        (Value::Object(result), is_error)
    }
}
