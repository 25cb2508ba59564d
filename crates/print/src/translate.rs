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

use dsh_protocol::{
    AssistantMessageEvent, Event, EventBody, ModelSwitchedEvent, SeamNoteEvent, TokenUsage,
    ToolCallEvent, ToolResultEvent, TurnEndEvent, TurnEndReason,
};
use serde_json::Value;

use crate::lines::{
    AssistantMessage, ContentBlock, Delta, Envelope, InitMessage, McpServerStatus, MessageUsage,
    Null, OutputUsage, PermissionDeniedMessage, StopDelta, StreamEvent, StreamEventLine,
    SystemMessage, ToolResultBlock, UserMessage,
};
use crate::messages::{
    CLAUDE_CODE_VERSION, Message, ModelUsage, ModelUsageRows, PermissionDenial, ResultMessage,
    Usage,
};
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

/// `content_block_start` of the text block.
fn text_start() -> StreamEvent {
    StreamEvent::ContentBlockStart {
        index: 0,
        content_block: ContentBlock::Text {
            text: String::new(),
        },
    }
}

/// A piece of the text block.
fn text_delta(text: &str) -> StreamEvent {
    StreamEvent::ContentBlockDelta {
        index: 0,
        delta: Delta::TextDelta {
            text: text.to_owned(),
        },
    }
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
        Message::System(SystemMessage::Init(Box::new(InitMessage {
            kind: "system",
            subtype: "init",
            cwd: init.cwd.clone(),
            session_id: self.session_id.clone(),
            tools: init.tools.iter().map(|t| naming.outward(t)).collect(),
            mcp_servers: init
                .mcp_servers
                .iter()
                .map(|(name, status)| McpServerStatus {
                    name: name.clone(),
                    status: status.clone(),
                })
                .collect(),
            model: init.model.clone(),
            permission_mode: init.permission_mode.clone(),
            slash_commands: init.slash_commands.clone(),
            claude_code_version: CLAUDE_CODE_VERSION,
            output_style: "default",
            agents: init.agents.clone(),
            skills: Vec::new(),
            plugins: Vec::new(),
            uuid: uuid(),
            original_cwd: init.cwd.clone(),
            additional_directories: init.additional_directories.clone(),
        })))
    }

    fn envelope<M>(&self, kind: &'static str, message: M) -> Envelope<M> {
        Envelope {
            kind,
            message,
            parent_tool_use_id: Null,
            session_id: self.session_id.clone(),
            uuid: uuid(),
            timestamp: now(),
            tool_use_result: None,
        }
    }

    fn stream_event(&self, event: StreamEvent, message_id: &str) -> Message {
        Message::StreamEvent(Box::new(StreamEventLine {
            kind: "stream_event",
            event,
            session_id: self.session_id.clone(),
            parent_tool_use_id: Null,
            uuid: uuid(),
            api_message_id: message_id.to_owned(),
        }))
    }

    /// An assistant message of this session's model.
    fn api_message(
        &self,
        id: &str,
        content: Vec<ContentBlock>,
        usage: MessageUsage,
        context_management: Option<Null>,
    ) -> AssistantMessage {
        AssistantMessage {
            id: id.to_owned(),
            kind: "message",
            role: "assistant",
            model: self.init.model.clone(),
            content,
            stop_reason: Null,
            stop_sequence: Null,
            usage,
            context_management,
        }
    }

    fn open_reply(&mut self, out: &mut Vec<Message>) -> String {
        if let Some(open) = &self.open {
            return open.id.clone();
        }
        let id = format!("msg_{}", uuid::Uuid::new_v4().simple());
        let message = self.api_message(&id, Vec::new(), MessageUsage::default(), None);
        out.push(self.stream_event(StreamEvent::MessageStart { message }, &id));
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
            out.push(self.stream_event(text_start(), &id));
        }
        out.push(self.stream_event(text_delta(delta), &id));
        out
    }

    fn assistant_line(&self, id: &str, block: ContentBlock, usage: Option<&TokenUsage>) -> Message {
        let usage = usage.copied().unwrap_or_default();
        let usage = Usage::from_tokens(&usage);
        let usage = MessageUsage {
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cache_creation_input_tokens: usage.cache_creation_input_tokens,
            cache_read_input_tokens: usage.cache_read_input_tokens,
        };
        let message = self.api_message(id, vec![block], usage, Some(Null));
        Message::Assistant(Box::new(self.envelope("assistant", message)))
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
                out.push(self.stream_event(text_start(), &id));
                out.push(self.stream_event(text_delta(content), &id));
            }
            let text = ContentBlock::Text {
                text: content.to_owned(),
            };
            out.push(self.assistant_line(&id, text, usage));
            if partial {
                out.push(self.stream_event(StreamEvent::ContentBlockStop { index: 0 }, &id));
            }
            index += 1;
        }
        for call in tool_calls {
            let name = self.options.naming.outward(&call.name);
            if partial {
                let content_block = ContentBlock::ToolUse {
                    id: call.id.clone(),
                    name: name.clone(),
                    input: Value::Object(serde_json::Map::new()),
                };
                let start = StreamEvent::ContentBlockStart {
                    index,
                    content_block,
                };
                out.push(self.stream_event(start, &id));
                let delta = Delta::InputJsonDelta {
                    partial_json: call.arguments.to_string(),
                };
                out.push(self.stream_event(StreamEvent::ContentBlockDelta { index, delta }, &id));
            }
            let block = ContentBlock::ToolUse {
                id: call.id.clone(),
                name,
                input: call.arguments.clone(),
            };
            out.push(self.assistant_line(&id, block, usage));
            if partial {
                out.push(self.stream_event(StreamEvent::ContentBlockStop { index }, &id));
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
            let stop = StreamEvent::MessageDelta {
                delta: StopDelta {
                    stop_reason: stop_reason.to_owned(),
                    stop_sequence: Null,
                },
                usage: OutputUsage { output_tokens },
            };
            out.push(self.stream_event(stop, &id));
            out.push(self.stream_event(StreamEvent::MessageStop, &id));
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
            out.push(Message::System(SystemMessage::PermissionDenied(Box::new(
                PermissionDeniedMessage {
                    kind: "system",
                    subtype: "permission_denied",
                    tool_name: tool_name.clone(),
                    tool_use_id: call_id.to_owned(),
                    message: content.to_owned(),
                    uuid: uuid(),
                    session_id: self.session_id.clone(),
                },
            ))));
            self.turn.denials.push(PermissionDenial {
                tool_name,
                tool_use_id: call_id.to_owned(),
                tool_input: input,
            });
        }
        let message = UserMessage {
            role: "user",
            content: vec![ToolResultBlock {
                tool_use_id: call_id.to_owned(),
                kind: "tool_result",
                content: content.to_owned(),
                is_error,
            }],
        };
        let mut line = self.envelope("user", message);
        line.tool_use_result = Some(if is_error {
            format!("Error: {content}")
        } else {
            content.to_owned()
        });
        out.push(Message::User(Box::new(line)));
        out
    }

    /// The messages one session event produces.
    pub fn event(&mut self, event: &Event) -> Vec<Message> {
        if event.agent_id.is_some() {
            return Vec::new();
        }
        match &event.body {
            EventBody::TurnStart(_) => {
                self.turn = TurnState::new(&self.meter);
                self.open = None;
                vec![self.init_message()]
            }
            EventBody::AssistantMessage(AssistantMessageEvent {
                content,
                tool_calls,
                usage,
                ..
            }) => self.assistant(content, tool_calls, usage.as_ref()),
            EventBody::ToolCall(ToolCallEvent {
                call_id,
                tool,
                arguments,
                ..
            }) => {
                self.calls
                    .insert(call_id.clone(), (tool.clone(), arguments.clone()));
                Vec::new()
            }
            EventBody::ToolResult(ToolResultEvent {
                call_id,
                is_error,
                content,
                disposition,
                ..
            }) => self.tool_result(call_id, *is_error, content, disposition.as_deref()),
            EventBody::TurnEnd(TurnEndEvent {
                reason, message, ..
            }) => vec![Message::Result(Box::new(
                self.result(*reason, message.as_deref()),
            ))],
            EventBody::ModelSwitched(ModelSwitchedEvent { to, .. }) => {
                self.init.model.clone_from(to);
                Vec::new()
            }
            // A display hook (Claude Code's MessageDisplay) replaced the
            // assistant's text as shown: the result says what was shown, as
            // Claude Code's does (`ev_message_display_replace`).
            EventBody::SeamNote(SeamNoteEvent {
                kind: dsh_protocol::SeamNoteKind::DisplayReplaced,
                detail: Some(dsh_protocol::SeamNoteDetail::Shown(shown)),
                ..
            }) => {
                self.turn.last_text = Some(shown.text.clone());
                Vec::new()
            }
            EventBody::SessionHeader(_)
            | EventBody::UserMessage(_)
            | EventBody::PromptBlocked(_)
            | EventBody::ContextMessage(_)
            | EventBody::SteeringMessage(_)
            | EventBody::CompactionStarted(_)
            | EventBody::CompactionCompleted(_)
            | EventBody::CompactionFailed(_)
            | EventBody::HookInvoked(_)
            | EventBody::HookResult(_)
            | EventBody::SeamNote(_)
            | EventBody::SessionCleared { .. } => Vec::new(),
        }
    }

    /// The `result` of the turn that just ended.
    pub fn result(&mut self, reason: TurnEndReason, message: Option<&str>) -> ResultMessage {
        let mut total = TokenUsage::default();
        let mut total_cost = 0.0;
        let mut model_usage = Vec::new();
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
            let row = ModelUsage {
                input_tokens: anthropic.input_tokens,
                output_tokens: usage.output_tokens,
                cache_read_input_tokens: usage.cache_read_input_tokens,
                cache_creation_input_tokens: usage.cache_creation_input_tokens,
                web_search_requests: 0,
                cost_usd: cost,
                context_window: dsh_model::context_window(&entry.model),
                cost_basis: if price.is_some() { "list" } else { "unknown" },
            };
            // A model recorded twice keeps its first place and its last row.
            match model_usage
                .iter_mut()
                .find(|(model, _)| *model == entry.model)
            {
                Some((_, existing)) => *existing = row,
                None => model_usage.push((entry.model.clone(), row)),
            }
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
                    Some(error.status),
                    Some(error.kind.to_owned()),
                    Some(format!(
                        "API Error: {}",
                        message.unwrap_or_else(|| error.message.clone())
                    )),
                    None,
                ),
                _ => (
                    Some(None),
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
            model_usage: ModelUsageRows(model_usage),
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
    use dsh_protocol::TurnStartEvent;
    use serde_json::json;

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

    /// The keys of a message and of its nested objects, in wire order,
    /// as `path.key` (array items under `[]`).
    fn key_paths(value: &Value, at: &str, out: &mut Vec<String>) {
        match value {
            Value::Object(fields) => {
                for (key, field) in fields {
                    let path = format!("{at}{key}");
                    out.push(path.clone());
                    key_paths(field, &format!("{path}."), out);
                }
            }
            Value::Array(items) => {
                for item in items {
                    key_paths(item, &format!("{at}[]."), out);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
        }
    }

    fn keys_of(message: &Message) -> Vec<String> {
        let mut out = Vec::new();
        key_paths(
            &serde_json::from_str(&message.to_line()).unwrap(),
            "",
            &mut out,
        );
        out
    }

    #[test]
    fn every_line_has_claude_codes_keys_in_its_order() {
        // The orders of `shared/reference/claude-agent-sdk/KEYS.md`, less
        // the keys dsh does not write.
        let mut t = translator(true);
        let init = t.event(&event(EventBody::TurnStart(TurnStartEvent { turn: 1 })));
        assert_eq!(
            keys_of(&init[0]).join(" "),
            "type subtype cwd session_id tools mcp_servers model permissionMode \
             slash_commands claude_code_version output_style agents skills plugins uuid \
             original_cwd additional_directories"
        );
        let lines = t.event(&event(assistant_with_call()));
        let envelope = "parent_tool_use_id session_id uuid timestamp";
        let message = "message.id message.type message.role message.model message.content";
        let usage = "message.stop_reason message.stop_sequence message.usage \
             message.usage.input_tokens message.usage.output_tokens \
             message.usage.cache_creation_input_tokens message.usage.cache_read_input_tokens";
        let kinds: Vec<String> = lines.iter().map(|line| keys_of(line).join(" ")).collect();
        let stream = |event: &str| {
            format!("type event {event} session_id parent_tool_use_id uuid api_message_id")
        };
        let start_message = format!(
            "event.message {}",
            format!("{message} {usage}").replace("message.", "event.message.")
        );
        let text_line = format!(
            "type message {message} message.content.[].type message.content.[].text {usage} \
             message.context_management {envelope}"
        );
        let tool_line = format!(
            "type message {message} message.content.[].type message.content.[].id \
             message.content.[].name message.content.[].input \
             message.content.[].input.command {usage} message.context_management {envelope}"
        );
        assert_eq!(
            kinds,
            [
                stream(&format!("event.type {start_message}")),
                stream(
                    "event.type event.index event.content_block event.content_block.type event.content_block.text"
                ),
                stream("event.type event.index event.delta event.delta.type event.delta.text"),
                text_line,
                stream("event.type event.index"),
                stream(
                    "event.type event.index event.content_block event.content_block.type event.content_block.id event.content_block.name event.content_block.input"
                ),
                stream(
                    "event.type event.index event.delta event.delta.type event.delta.partial_json"
                ),
                tool_line,
                stream("event.type event.index"),
                stream(
                    "event.type event.delta event.delta.stop_reason event.delta.stop_sequence event.usage event.usage.output_tokens"
                ),
                stream("event.type"),
            ]
        );
        let denied = t.tool_result("c1", true, "no", Some("denied"));
        assert_eq!(
            keys_of(&denied[0]).join(" "),
            "type subtype tool_name tool_use_id message uuid session_id"
        );
        assert_eq!(
            keys_of(&denied[1]).join(" "),
            format!(
                "type message message.role message.content message.content.[].tool_use_id \
                 message.content.[].type message.content.[].content message.content.[].is_error \
                 {envelope} tool_use_result"
            )
        );
    }

    fn assistant_with_call() -> EventBody {
        EventBody::AssistantMessage(AssistantMessageEvent {
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
        })
    }

    #[test]
    fn a_turn_becomes_init_assistant_lines_user_and_result() {
        let mut t = translator(false);
        let init = t.event(&event(EventBody::TurnStart(TurnStartEvent { turn: 1 })));
        assert_eq!(
            serde_json::to_value(&init[0]).unwrap()["tools"],
            json!(["Bash", "mcp__x__y"])
        );
        let lines = t.event(&event(assistant_with_call()));
        assert_eq!(lines.len(), 2, "one line per content block");
        let (text, tool) = (
            serde_json::to_value(&lines[0]).unwrap(),
            serde_json::to_value(&lines[1]).unwrap(),
        );
        assert_eq!(text["message"]["id"], tool["message"]["id"]);
        assert_eq!(tool["message"]["content"][0]["name"], "Bash");
        t.event(&event(EventBody::ToolCall(ToolCallEvent {
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
            origin: None,
        })));
        let denied = t.event(&event(EventBody::ToolResult(ToolResultEvent {
            turn: 1,
            call_id: "c1".into(),
            is_error: true,
            content: "needs approval".into(),
            disposition: Some("no_approval_service".into()),
            decided_by: None,
            rewrite: None,
            content_blocks: None,
            shown_input: None,
        })));
        assert_eq!(
            serde_json::to_value(&denied[0]).unwrap()["subtype"],
            "permission_denied"
        );
        assert_eq!(
            serde_json::to_value(&denied[1]).unwrap()["tool_use_result"],
            "Error: needs approval"
        );
        let end = t.event(&event(EventBody::TurnEnd(TurnEndEvent {
            turn: 1,
            reason: TurnEndReason::MaxSteps,
            message: None,
        })));
        let result = serde_json::to_value(&end[0]).unwrap();
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
        t.event(&event(EventBody::TurnStart(TurnStartEvent { turn: 1 })));
        let streamed: Vec<Value> = ["Look", "ing."]
            .iter()
            .flat_map(|delta| t.text_delta(delta))
            .map(|m| serde_json::to_value(&m).unwrap())
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
            .map(|m| serde_json::to_value(m).unwrap())
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
