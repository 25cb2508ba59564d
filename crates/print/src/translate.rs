//! dsh's session events → Claude Code's stdout messages.
//!
//! A [`Translator`] is fed every durable event of the session as it is
//! appended (the agent's `on_event` observer) and, with partial messages
//! on, every streamed piece of text (`on_text`). Each call answers the
//! messages to write, in order. A `turn/start` answers `system/init`; a
//! `turn/end` answers the turn's `result`.
//!
//! Events of subagents (`agent_id` set) produce nothing: Claude Code's
//! `parent_tool_use_id` threading of subagent messages is not reproduced.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use dsh_protocol::{Event, EventBody, TokenUsage, TurnEndReason};
use serde_json::{Map, Value, json};

use crate::messages::{CLAUDE_CODE_VERSION, Message, PermissionDenial, ResultMessage, Usage};
use crate::model::{Meter, ToolNaming};

/// What `system/init` reports about the session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InitInfo {
    /// The session's working directory.
    pub cwd: PathBuf,
    /// The tools on offer, under dsh's names (translated on output).
    pub tools: Vec<String>,
    /// MCP servers and their state (`connected`, `failed`, …).
    pub mcp_servers: Vec<(String, String)>,
    /// The model.
    pub model: String,
    /// The permission mode, Claude Code's spelling.
    pub permission_mode: String,
    /// Custom slash commands.
    pub slash_commands: Vec<String>,
    /// Custom agents.
    pub agents: Vec<String>,
    /// `--add-dir` directories.
    pub additional_directories: Vec<PathBuf>,
}

/// How the translator writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options {
    /// `--include-partial-messages`: `stream_event` messages.
    pub partial_messages: bool,
    /// The tool names the caller sees.
    pub naming: ToolNaming,
}

/// A reply being streamed (`--include-partial-messages`).
#[derive(Debug, Default)]
struct OpenReply {
    id: String,
    /// The text block is open at index 0.
    text_open: bool,
}

/// Per-turn bookkeeping.
#[derive(Debug)]
struct TurnState {
    started: Instant,
    api_ms_at_start: u64,
    num_turns: u64,
    last_text: Option<String>,
    stop_reason: Option<String>,
    denials: Vec<PermissionDenial>,
}

impl TurnState {
    fn new(meter: &Meter) -> Self {
        TurnState {
            started: Instant::now(),
            api_ms_at_start: meter.api_ms(),
            num_turns: 0,
            last_text: None,
            stop_reason: None,
            denials: Vec::new(),
        }
    }
}

/// Turns a session's events into Claude Code's messages. See the module docs.
#[derive(Debug)]
pub struct Translator {
    session_id: String,
    init: InitInfo,
    options: Options,
    meter: Meter,
    turn: TurnState,
    open: Option<OpenReply>,
    /// call id → (dsh tool name, arguments), for denials.
    calls: HashMap<String, (String, Value)>,
    results: u64,
    max_turns: Option<u64>,
}

fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

fn now() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

/// `tool/result` dispositions that are a permission refusal.
fn is_denial(disposition: Option<&str>) -> bool {
    matches!(
        disposition,
        Some(
            "denied"
                | "approval_rejected"
                | "approval_cancelled"
                | "approval_unavailable"
                | "no_approval_service"
        )
    )
}

impl Translator {
    /// A translator for `session_id`; `meter` must be the one the session's
    /// model records into ([`crate::PrintModel`]), `max_turns` the bound
    /// the turn runs under (for the `error_max_turns` text).
    pub fn new(
        session_id: impl Into<String>,
        init: InitInfo,
        options: Options,
        meter: Meter,
        max_turns: Option<u64>,
    ) -> Self {
        let turn = TurnState::new(&meter);
        Translator {
            session_id: session_id.into(),
            init,
            options,
            meter,
            turn,
            open: None,
            calls: HashMap::new(),
            results: 0,
            max_turns,
        }
    }

    /// The permission mode `system/init` reports from now on (the SDK's
    /// `set_permission_mode`).
    pub fn set_permission_mode(&mut self, mode: &str) {
        mode.clone_into(&mut self.init.permission_mode);
    }

    /// Sets the tools `system/init` lists (dsh's names; the agent knows
    /// them only once it is built, after the translator).
    pub fn set_tools(&mut self, tools: Vec<String>) {
        self.init.tools = tools;
    }

    /// The `system/init` message.
    pub fn init_message(&self) -> Message {
        let naming = self.options.naming;
        let init = &self.init;
        Message::System(json!({
            "type": "system",
            "subtype": "init",
            "cwd": init.cwd,
            "session_id": self.session_id,
            "tools": init.tools.iter().map(|t| naming.outward(t)).collect::<Vec<_>>(),
            "mcp_servers": init.mcp_servers.iter()
                .map(|(name, status)| json!({"name": name, "status": status}))
                .collect::<Vec<_>>(),
            "model": init.model,
            "permissionMode": init.permission_mode,
            "slash_commands": init.slash_commands,
            "claude_code_version": CLAUDE_CODE_VERSION,
            "output_style": "default",
            "agents": init.agents,
            "skills": [],
            "plugins": [],
            "uuid": uuid(),
            "original_cwd": init.cwd,
            "additional_directories": init.additional_directories,
        }))
    }

    fn envelope(&self, kind: &str, message: Value) -> Value {
        json!({
            "type": kind,
            "message": message,
            "parent_tool_use_id": null,
            "session_id": self.session_id,
            "uuid": uuid(),
            "timestamp": now(),
        })
    }

    fn stream_event(&self, event: Value, message_id: &str) -> Message {
        Message::StreamEvent(json!({
            "type": "stream_event",
            "event": event,
            "session_id": self.session_id,
            "parent_tool_use_id": null,
            "uuid": uuid(),
            "api_message_id": message_id,
        }))
    }

    fn open_reply(&mut self, out: &mut Vec<Message>) -> String {
        if let Some(open) = &self.open {
            return open.id.clone();
        }
        let id = format!("msg_{}", uuid::Uuid::new_v4().simple());
        out.push(self.stream_event(
            json!({"type": "message_start", "message": {
                "id": id, "type": "message", "role": "assistant", "model": self.init.model,
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": 0, "output_tokens": 0,
                          "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}}),
            &id,
        ));
        self.open = Some(OpenReply {
            id: id.clone(),
            text_open: false,
        });
        id
    }

    /// A piece of streamed assistant text: `stream_event` messages when
    /// partial messages are on, nothing otherwise.
    pub fn text_delta(&mut self, delta: &str) -> Vec<Message> {
        let mut out = Vec::new();
        if !self.options.partial_messages || delta.is_empty() {
            return out;
        }
        let id = self.open_reply(&mut out);
        if let Some(open) = &mut self.open
            && !open.text_open
        {
            open.text_open = true;
            out.push(self.stream_event(
                json!({"type": "content_block_start", "index": 0,
                       "content_block": {"type": "text", "text": ""}}),
                &id,
            ));
        }
        out.push(self.stream_event(
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "text_delta", "text": delta}}),
            &id,
        ));
        out
    }

    fn assistant_line(&self, id: &str, block: Value, usage: Option<&TokenUsage>) -> Message {
        let usage = usage.copied().unwrap_or_default();
        let usage = Usage::from_tokens(&usage);
        Message::Assistant(self.envelope(
            "assistant",
            json!({
                "id": id,
                "type": "message",
                "role": "assistant",
                "model": self.init.model,
                "content": [block],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": {
                    "input_tokens": usage.input_tokens,
                    "output_tokens": usage.output_tokens,
                    "cache_creation_input_tokens": usage.cache_creation_input_tokens,
                    "cache_read_input_tokens": usage.cache_read_input_tokens,
                },
                "context_management": null,
            }),
        ))
    }

    fn assistant(
        &mut self,
        content: &str,
        tool_calls: &[dsh_protocol::ToolCall],
        usage: Option<&TokenUsage>,
    ) -> Vec<Message> {
        let mut out = Vec::new();
        let partial = self.options.partial_messages;
        let id = if partial {
            self.open_reply(&mut out)
        } else {
            format!("msg_{}", uuid::Uuid::new_v4().simple())
        };
        let mut index = 0;
        if !content.is_empty() {
            if partial && !self.open.as_ref().is_some_and(|open| open.text_open) {
                // The provider did not stream this text: one delta.
                out.push(self.stream_event(
                    json!({"type": "content_block_start", "index": 0,
                           "content_block": {"type": "text", "text": ""}}),
                    &id,
                ));
                out.push(self.stream_event(
                    json!({"type": "content_block_delta", "index": 0,
                           "delta": {"type": "text_delta", "text": content}}),
                    &id,
                ));
            }
            out.push(self.assistant_line(&id, json!({"type": "text", "text": content}), usage));
            if partial {
                out.push(self.stream_event(json!({"type": "content_block_stop", "index": 0}), &id));
            }
            index += 1;
        }
        for call in tool_calls {
            let name = self.options.naming.outward(&call.name);
            if partial {
                out.push(self.stream_event(
                    json!({"type": "content_block_start", "index": index,
                           "content_block": {"type": "tool_use", "id": call.id, "name": name, "input": {}}}),
                    &id,
                ));
                out.push(self.stream_event(
                    json!({"type": "content_block_delta", "index": index,
                           "delta": {"type": "input_json_delta", "partial_json": call.arguments.to_string()}}),
                    &id,
                ));
            }
            out.push(self.assistant_line(
                &id,
                json!({"type": "tool_use", "id": call.id, "name": name, "input": call.arguments}),
                usage,
            ));
            if partial {
                out.push(
                    self.stream_event(json!({"type": "content_block_stop", "index": index}), &id),
                );
            }
            index += 1;
        }
        let stop_reason = if tool_calls.is_empty() {
            "end_turn"
        } else {
            "tool_use"
        };
        if partial {
            let output_tokens = usage.map_or(0, |u| u.output_tokens);
            out.push(self.stream_event(
                json!({"type": "message_delta",
                       "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                       "usage": {"output_tokens": output_tokens}}),
                &id,
            ));
            out.push(self.stream_event(json!({"type": "message_stop"}), &id));
            self.open = None;
        }
        self.turn.num_turns += 1;
        self.turn.stop_reason = Some(stop_reason.to_owned());
        if !content.is_empty() || tool_calls.is_empty() {
            self.turn.last_text = Some(content.to_owned());
        }
        out
    }

    fn tool_result(
        &mut self,
        call_id: &str,
        is_error: bool,
        content: &str,
        disposition: Option<&str>,
    ) -> Vec<Message> {
        let mut out = Vec::new();
        if is_denial(disposition) {
            let (tool, input) = self
                .calls
                .get(call_id)
                .cloned()
                .unwrap_or_else(|| (String::new(), Value::Null));
            let tool_name = self.options.naming.outward(&tool);
            out.push(Message::System(json!({
                "type": "system",
                "subtype": "permission_denied",
                "tool_name": tool_name,
                "tool_use_id": call_id,
                "message": content,
                "uuid": uuid(),
                "session_id": self.session_id,
            })));
            self.turn.denials.push(PermissionDenial {
                tool_name,
                tool_use_id: call_id.to_owned(),
                tool_input: input,
            });
        }
        let mut line = self.envelope(
            "user",
            json!({"role": "user", "content": [{
                "tool_use_id": call_id, "type": "tool_result",
                "content": content, "is_error": is_error}]}),
        );
        if let Value::Object(map) = &mut line {
            let result = if is_error {
                format!("Error: {content}")
            } else {
                content.to_owned()
            };
            map.insert("tool_use_result".to_owned(), Value::String(result));
        }
        out.push(Message::User(line));
        out
    }

    /// The messages one session event produces.
    pub fn event(&mut self, event: &Event) -> Vec<Message> {
        if event.agent_id.is_some() {
            return Vec::new();
        }
        match &event.body {
            EventBody::TurnStart { .. } => {
                self.turn = TurnState::new(&self.meter);
                self.open = None;
                vec![self.init_message()]
            }
            EventBody::AssistantMessage {
                content,
                tool_calls,
                usage,
                ..
            } => self.assistant(content, tool_calls, usage.as_ref()),
            EventBody::ToolCall {
                call_id,
                tool,
                arguments,
                ..
            } => {
                self.calls
                    .insert(call_id.clone(), (tool.clone(), arguments.clone()));
                Vec::new()
            }
            EventBody::ToolResult {
                call_id,
                is_error,
                content,
                disposition,
                ..
            } => self.tool_result(call_id, *is_error, content, disposition.as_deref()),
            EventBody::TurnEnd {
                reason, message, ..
            } => vec![Message::Result(Box::new(
                self.result(*reason, message.as_deref()),
            ))],
            EventBody::ModelSwitched { to, .. } => {
                self.init.model.clone_from(to);
                Vec::new()
            }
            // A display hook (Claude Code's MessageDisplay) replaced the
            // assistant's text as shown: the result says what was shown, as
            // Claude Code's does (`ev_message_display_replace`).
            EventBody::SeamNote {
                kind: dsh_protocol::SeamNoteKind::DisplayReplaced,
                detail: Some(detail),
                ..
            } => {
                if let Some(text) = detail.get("text").and_then(Value::as_str) {
                    self.turn.last_text = Some(text.to_owned());
                }
                Vec::new()
            }
            EventBody::SessionHeader { .. }
            | EventBody::UserMessage { .. }
            | EventBody::PromptBlocked { .. }
            | EventBody::ContextMessage { .. }
            | EventBody::SteeringMessage { .. }
            | EventBody::CompactionStarted { .. }
            | EventBody::CompactionCompleted { .. }
            | EventBody::CompactionFailed { .. }
            | EventBody::HookInvoked { .. }
            | EventBody::HookResult { .. }
            | EventBody::SeamNote { .. }
            | EventBody::SessionCleared { .. } => Vec::new(),
        }
    }

    /// The `result` of the turn that just ended.
    pub fn result(&mut self, reason: TurnEndReason, message: Option<&str>) -> ResultMessage {
        let mut total = TokenUsage::default();
        let mut total_cost = 0.0;
        let mut model_usage = Map::new();
        for entry in self.meter.models() {
            let usage = entry.usage;
            total.input_tokens += usage.input_tokens;
            total.output_tokens += usage.output_tokens;
            total.cache_read_input_tokens += usage.cache_read_input_tokens;
            total.cache_creation_input_tokens += usage.cache_creation_input_tokens;
            let price = dsh_model::pricing::price(&entry.model);
            let cost = price.map_or(0.0, |price| price.cost_usd(&usage));
            total_cost += cost;
            let anthropic = Usage::from_tokens(&usage);
            let mut row = json!({
                "inputTokens": anthropic.input_tokens,
                "outputTokens": usage.output_tokens,
                "cacheReadInputTokens": usage.cache_read_input_tokens,
                "cacheCreationInputTokens": usage.cache_creation_input_tokens,
                "webSearchRequests": 0,
                "costUSD": cost,
            });
            if let (Value::Object(row), Some(window)) =
                (&mut row, dsh_model::context_window(&entry.model))
            {
                row.insert("contextWindow".to_owned(), json!(window));
            }
            if let Value::Object(row) = &mut row {
                row.insert(
                    "costBasis".to_owned(),
                    json!(if price.is_some() { "list" } else { "unknown" }),
                );
            }
            model_usage.insert(entry.model.clone(), row);
        }
        let api_error = self.meter.last_error();
        let (subtype, terminal_reason, is_error) = match reason {
            TurnEndReason::Completed => ("success", "completed", false),
            TurnEndReason::MaxSteps => ("error_max_turns", "max_turns", true),
            TurnEndReason::Error if api_error.is_some() => ("success", "api_error", true),
            TurnEndReason::Error => ("error_during_execution", "error", true),
            TurnEndReason::Interrupted => ("error_during_execution", "aborted_tools", true),
            TurnEndReason::Rejected => ("error_during_execution", "prompt_blocked", true),
            TurnEndReason::Stopped => ("error_during_execution", "stopped", true),
        };
        let message = message.map(str::to_owned);
        let (api_error_status, api_error_type, result, errors) = match subtype {
            "success" => match &api_error {
                Some(error) if is_error => (
                    Some(error.status.map_or(Value::Null, Value::from)),
                    Some(error.kind.to_owned()),
                    Some(format!(
                        "API Error: {}",
                        message.unwrap_or_else(|| error.message.clone())
                    )),
                    None,
                ),
                _ => (
                    Some(Value::Null),
                    None,
                    Some(self.turn.last_text.clone().unwrap_or_default()),
                    None,
                ),
            },
            "error_max_turns" => {
                let bound = self
                    .max_turns
                    .map_or_else(|| self.turn.num_turns.to_string(), |n| n.to_string());
                (
                    None,
                    None,
                    None,
                    Some(vec![format!("Reached maximum number of turns ({bound})")]),
                )
            }
            _ => (
                None,
                None,
                None,
                Some(vec![message.unwrap_or_else(|| reason.as_str().to_owned())]),
            ),
        };
        // Claude Code counts the model turn a bound refused to start.
        let num_turns = if reason == TurnEndReason::MaxSteps {
            self.turn.num_turns + 1
        } else {
            self.turn.num_turns.max(1)
        };
        let index = self.results;
        self.results += 1;
        ResultMessage {
            duration_api_ms: self
                .meter
                .api_ms()
                .saturating_sub(self.turn.api_ms_at_start),
            stop_reason: self.turn.stop_reason.clone(),
            session_id: self.session_id.clone(),
            total_cost_usd: total_cost,
            usage: Usage::from_tokens(&total),
            model_usage,
            permission_denials: std::mem::take(&mut self.turn.denials),
            terminal_reason: terminal_reason.to_owned(),
            is_error,
            num_turns,
            subtype: subtype.to_owned(),
            api_error_status,
            api_error_type,
            result,
            errors,
            kind: "result",
            duration_ms: u64::try_from(self.turn.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            uuid: uuid(),
            queued_turn_count: 0,
            result_index: index,
        }
    }

    /// Models without a known price that the session used (for a note:
    /// their cost is reported as 0).
    pub fn unpriced_models(&self) -> Vec<String> {
        self.meter
            .models()
            .into_iter()
            .filter(|entry| dsh_model::pricing::price(&entry.model).is_none())
            .map(|entry| entry.model)
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use dsh_protocol::ToolCall;

    fn event(body: EventBody) -> Event {
        Event {
            seq: 0,
            ts: String::new(),
            body,
            agent_id: None,
        }
    }

    fn translator(partial: bool) -> Translator {
        Translator::new(
            "s-1",
            InitInfo {
                model: "m".into(),
                tools: vec!["bash".into(), "mcp__x__y".into()],
                ..InitInfo::default()
            },
            Options {
                partial_messages: partial,
                naming: ToolNaming::ClaudeCode,
            },
            Meter::new(),
            Some(1),
        )
    }

    fn assistant_with_call() -> EventBody {
        EventBody::AssistantMessage {
            turn: 1,
            step: 1,
            content: "Looking.".into(),
            tool_calls: vec![ToolCall {
                id: "c1".into(),
                name: "bash".into(),
                arguments: json!({"command": "ls"}),
            }],
            usage: None,
            thinking: None,
        }
    }

    #[test]
    fn a_turn_becomes_init_assistant_lines_user_and_result() {
        let mut t = translator(false);
        let init = t.event(&event(EventBody::TurnStart { turn: 1 }));
        assert_eq!(init[0].to_value()["tools"], json!(["Bash", "mcp__x__y"]));
        let lines = t.event(&event(assistant_with_call()));
        assert_eq!(lines.len(), 2, "one line per content block");
        let (text, tool) = (lines[0].to_value(), lines[1].to_value());
        assert_eq!(text["message"]["id"], tool["message"]["id"]);
        assert_eq!(tool["message"]["content"][0]["name"], "Bash");
        t.event(&event(EventBody::ToolCall {
            turn: 1,
            call_id: "c1".into(),
            execution_id: "e".into(),
            parent_execution_id: None,
            tool: "bash".into(),
            arguments: json!({"command": "ls"}),
            original_arguments: None,
            rewritten_by: None,
            rewrite_conflicts: Vec::new(),
            provider_call_id: None,
        }));
        let denied = t.event(&event(EventBody::ToolResult {
            turn: 1,
            call_id: "c1".into(),
            is_error: true,
            content: "needs approval".into(),
            disposition: Some("no_approval_service".into()),
            decided_by: None,
            rewrite: None,
            content_blocks: None,
        }));
        assert_eq!(denied[0].to_value()["subtype"], "permission_denied");
        assert_eq!(
            denied[1].to_value()["tool_use_result"],
            "Error: needs approval"
        );
        let end = t.event(&event(EventBody::TurnEnd {
            turn: 1,
            reason: TurnEndReason::MaxSteps,
            message: None,
        }));
        let result = end[0].to_value();
        assert_eq!(result["subtype"], "error_max_turns");
        assert_eq!(
            result["errors"],
            json!(["Reached maximum number of turns (1)"])
        );
        assert_eq!(result["num_turns"], 2);
        assert_eq!(result["permission_denials"][0]["tool_name"], "Bash");
        assert!(result.get("result").is_none() && result.get("api_error_status").is_none());
        let keys: Vec<&String> = result.as_object().unwrap().keys().collect();
        assert_eq!(keys[0], "duration_api_ms");
        assert_eq!(keys.last().unwrap().as_str(), "result_index");
    }

    #[test]
    fn partial_messages_close_the_text_block_after_its_assistant_line() {
        let mut t = translator(true);
        t.event(&event(EventBody::TurnStart { turn: 1 }));
        let streamed: Vec<Value> = ["Look", "ing."]
            .iter()
            .flat_map(|delta| t.text_delta(delta))
            .map(|m| m.to_value())
            .collect();
        let kinds: Vec<&str> = streamed
            .iter()
            .map(|m| m["event"]["type"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_delta"
            ]
        );
        let rest: Vec<Value> = t
            .event(&event(assistant_with_call()))
            .iter()
            .map(Message::to_value)
            .collect();
        let kinds: Vec<String> = rest
            .iter()
            .map(|m| {
                m["event"]["type"]
                    .as_str()
                    .map_or_else(|| m["type"].as_str().unwrap().to_owned(), str::to_owned)
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "assistant",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "assistant",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        assert_eq!(
            rest[3]["event"]["delta"]["partial_json"],
            r#"{"command":"ls"}"#
        );
        let id = &streamed[0]["api_message_id"];
        assert!(
            rest.iter()
                .all(|m| m["api_message_id"] == *id || m["message"]["id"] == *id)
        );
    }
}
