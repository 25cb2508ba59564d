//! Stdin payloads, byte-for-byte as Codex 0.169 writes them: one line of
//! compact JSON, no trailing newline, keys in the captured order (which
//! differs per event). Each event's stdin is a `#[derive(Serialize)]`
//! struct whose field order is the captured key order; the builders return
//! them inside a [`CodexPayload`], which stays typed until a handler's stdin
//! is written ([`to_stdin`]). Inside a sub-agent a payload names it
//! ([`CodexPayload::in_agent`]) at the position Codex puts the two keys.

use serde::Serialize;

use crate::tools::{HookToolInput, HookToolResponse};

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

/// The sub-agent a payload fired in: `agent_id`, `agent_type`, flattened
/// into the payload where Codex puts them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentIds {
    /// The sub-agent's id.
    pub agent_id: String,
    /// Its type (Codex's name, see [`codex_agent_type`]).
    pub agent_type: String,
}

/// The common head of a turn-scoped payload (tool events, Stop,
/// sub-agents, Interrupt), in Codex's captured order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TurnHead {
    /// Codex's thread id.
    pub session_id: String,
    /// The turn.
    pub turn_id: String,
    /// Codex's rollout file (`null` in dsh).
    pub transcript_path: Option<String>,
    /// The session cwd.
    pub cwd: String,
    /// The event's name.
    pub hook_event_name: &'static str,
    /// The model slug.
    pub model: String,
    /// The permission mode.
    pub permission_mode: String,
    /// The sub-agent, inside one (right after `permission_mode`, as on
    /// SubagentStart).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentIds>,
}

impl PayloadBase {
    fn head(&self, turn_id: &str, event: &'static str) -> TurnHead {
        TurnHead {
            session_id: self.session_id.clone(),
            turn_id: turn_id.to_owned(),
            transcript_path: self.transcript_path.clone(),
            cwd: self.cwd.clone(),
            hook_event_name: event,
            model: self.model.clone(),
            permission_mode: self.permission_mode.clone(),
            agent: None,
        }
    }
}

/// One firing's stdin, typed. Serializes to the event's struct (no tag).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum CodexPayload {
    /// `SessionStart`.
    SessionStart(SessionStartInput),
    /// `UserPromptSubmit`.
    UserPromptSubmit(UserPromptSubmitInput),
    /// `PreModelRequest`.
    PreModelRequest(PreModelRequestInput),
    /// `PostModelRequest`.
    PostModelRequest(PostModelRequestInput),
    /// `PreToolUse`, `PermissionRequest`, `PostToolUse`.
    Tool(ToolInput),
    /// `Stop`.
    Stop(StopInput),
    /// `SubagentStart`.
    SubagentStart(SubagentStartInput),
    /// `SubagentStop`.
    SubagentStop(SubagentStopInput),
    /// `Interrupt`: the head alone.
    Interrupt(TurnHead),
    /// `PreCompact`, `PostCompact`.
    Compact(CompactInput),
    /// `SessionEnd`.
    SessionEnd(SessionEndInput),
}

impl CodexPayload {
    /// This payload as fired inside sub-agent `agent_id` of (Codex's)
    /// `agent_type`: the two keys go right before `hook_event_name` where it
    /// comes late (Pre/PostModelRequest, as captured; compaction and
    /// SessionEnd likewise, having no `permission_mode`), otherwise right
    /// after `permission_mode` (as on SubagentStart; the captures show no
    /// tool event inside a sub-agent). The sub-agent events' own payloads
    /// already name it and are returned unchanged.
    #[must_use]
    pub fn in_agent(mut self, agent_id: &str, agent_type: &str) -> Self {
        let ids = Some(AgentIds {
            agent_id: agent_id.to_owned(),
            agent_type: agent_type.to_owned(),
        });
        match &mut self {
            CodexPayload::SessionStart(input) => input.agent = ids,
            CodexPayload::UserPromptSubmit(UserPromptSubmitInput { head, .. })
            | CodexPayload::Tool(ToolInput { head, .. })
            | CodexPayload::Stop(StopInput { head, .. })
            | CodexPayload::Interrupt(head) => head.agent = ids,
            CodexPayload::PreModelRequest(input) => input.agent = ids,
            CodexPayload::PostModelRequest(input) => input.agent = ids,
            CodexPayload::Compact(input) => input.agent = ids,
            CodexPayload::SessionEnd(input) => input.agent = ids,
            CodexPayload::SubagentStart(_) | CodexPayload::SubagentStop(_) => {}
        }
        self
    }
}

/// `SessionStart`'s stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionStartInput {
    /// Codex's thread id.
    pub session_id: String,
    /// Codex's rollout file (`null` in dsh).
    pub transcript_path: Option<String>,
    /// The session cwd.
    pub cwd: String,
    /// `SessionStart`.
    pub hook_event_name: &'static str,
    /// The model slug.
    pub model: String,
    /// The permission mode.
    pub permission_mode: String,
    /// The sub-agent, inside one.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentIds>,
    /// `startup`, `resume`, `clear`, `compact`.
    pub source: String,
}

/// `SessionStart`.
pub fn session_start(base: &PayloadBase, source: &str) -> CodexPayload {
    CodexPayload::SessionStart(SessionStartInput {
        session_id: base.session_id.clone(),
        transcript_path: base.transcript_path.clone(),
        cwd: base.cwd.clone(),
        hook_event_name: "SessionStart",
        model: base.model.clone(),
        permission_mode: base.permission_mode.clone(),
        agent: None,
        source: source.to_owned(),
    })
}

/// `UserPromptSubmit`'s stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserPromptSubmitInput {
    /// The common head (event `UserPromptSubmit`).
    #[serde(flatten)]
    pub head: TurnHead,
    /// The prompt text.
    pub prompt: String,
}

/// `UserPromptSubmit`.
pub fn user_prompt_submit(base: &PayloadBase, turn_id: &str, prompt: &str) -> CodexPayload {
    CodexPayload::UserPromptSubmit(UserPromptSubmitInput {
        head: base.head(turn_id, "UserPromptSubmit"),
        prompt: prompt.to_owned(),
    })
}

/// `PreModelRequest`'s stdin (no `permission_mode`; `cwd` before
/// `transcript_path`; the event name last).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PreModelRequestInput {
    /// Codex's thread id.
    pub session_id: String,
    /// The turn.
    pub turn_id: String,
    /// The session cwd.
    pub cwd: String,
    /// Codex's rollout file (`null` in dsh).
    pub transcript_path: Option<String>,
    /// The model slug.
    pub model: String,
    /// The sub-agent, inside one.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentIds>,
    /// `PreModelRequest`.
    pub hook_event_name: &'static str,
}

/// `PreModelRequest` (no `permission_mode`; `cwd` before `transcript_path`).
pub fn pre_model_request(base: &PayloadBase, turn_id: &str) -> CodexPayload {
    CodexPayload::PreModelRequest(PreModelRequestInput {
        session_id: base.session_id.clone(),
        turn_id: turn_id.to_owned(),
        cwd: base.cwd.clone(),
        transcript_path: base.transcript_path.clone(),
        model: base.model.clone(),
        agent: None,
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
pub struct PostModelRequestInput {
    /// Codex's thread id.
    pub session_id: String,
    /// The turn.
    pub turn_id: String,
    /// The session cwd.
    pub cwd: String,
    /// Codex's rollout file (`null` in dsh).
    pub transcript_path: Option<String>,
    /// The model slug.
    pub model: String,
    /// The sub-agent, inside one.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentIds>,
    /// `PostModelRequest`.
    pub hook_event_name: &'static str,
    /// `completed` or `failed`.
    pub status: &'static str,
    /// The failure, for a failed request.
    pub error: Option<String>,
    /// The usage, when the provider reported it.
    pub token_usage: Option<TokenUsageWire>,
}

/// `PostModelRequest`: `Ok(usage)` for a completed request, `Err(message)` for a failed one.
pub fn post_model_request(
    base: &PayloadBase,
    turn_id: &str,
    result: Result<Option<CodexTokenUsage>, &str>,
) -> CodexPayload {
    let (status, error, token_usage) = match result {
        Ok(usage) => ("completed", None, usage.map(CodexTokenUsage::wire)),
        Err(message) => ("failed", Some(message.to_owned()), None),
    };
    CodexPayload::PostModelRequest(PostModelRequestInput {
        session_id: base.session_id.clone(),
        turn_id: turn_id.to_owned(),
        cwd: base.cwd.clone(),
        transcript_path: base.transcript_path.clone(),
        model: base.model.clone(),
        agent: None,
        hook_event_name: "PostModelRequest",
        status,
        error,
        token_usage,
    })
}

/// `PreToolUse`, `PermissionRequest` and `PostToolUse`'s stdin: the head,
/// the tool, and what each event adds (`PermissionRequest` has no
/// `tool_use_id`, only `PostToolUse` a `tool_response`). The tool's input
/// and response are JSON: their shapes are the tools' own
/// ([`crate::tools`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolInput {
    /// The common head.
    #[serde(flatten)]
    pub head: TurnHead,
    /// Codex's tool name.
    pub tool_name: String,
    /// The tool's arguments, as Codex shows them.
    pub tool_input: HookToolInput,
    /// What the tool returned (`PostToolUse`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_response: Option<HookToolResponse>,
    /// The call's id (not on `PermissionRequest`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
}

/// `PreToolUse`.
pub fn pre_tool_use(
    base: &PayloadBase,
    turn_id: &str,
    tool_name: &str,
    tool_input: &HookToolInput,
    tool_use_id: &str,
) -> CodexPayload {
    CodexPayload::Tool(ToolInput {
        head: base.head(turn_id, "PreToolUse"),
        tool_name: tool_name.to_owned(),
        tool_input: tool_input.clone(),
        tool_response: None,
        tool_use_id: Some(tool_use_id.to_owned()),
    })
}

/// `PermissionRequest` (no `tool_use_id`).
pub fn permission_request(
    base: &PayloadBase,
    turn_id: &str,
    tool_name: &str,
    tool_input: &HookToolInput,
) -> CodexPayload {
    CodexPayload::Tool(ToolInput {
        head: base.head(turn_id, "PermissionRequest"),
        tool_name: tool_name.to_owned(),
        tool_input: tool_input.clone(),
        tool_response: None,
        tool_use_id: None,
    })
}

/// `PostToolUse`.
pub fn post_tool_use(
    base: &PayloadBase,
    turn_id: &str,
    tool_name: &str,
    tool_input: &HookToolInput,
    tool_response: &HookToolResponse,
    tool_use_id: &str,
) -> CodexPayload {
    CodexPayload::Tool(ToolInput {
        head: base.head(turn_id, "PostToolUse"),
        tool_name: tool_name.to_owned(),
        tool_input: tool_input.clone(),
        tool_response: Some(tool_response.clone()),
        tool_use_id: Some(tool_use_id.to_owned()),
    })
}

/// `Stop`'s stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StopInput {
    /// The common head (event `Stop`).
    #[serde(flatten)]
    pub head: TurnHead,
    /// Whether a Stop hook already continued this turn.
    pub stop_hook_active: bool,
    /// The last assistant message, if any.
    pub last_assistant_message: Option<String>,
}

/// `Stop`.
pub fn stop(
    base: &PayloadBase,
    turn_id: &str,
    stop_hook_active: bool,
    last_assistant_message: Option<&str>,
) -> CodexPayload {
    CodexPayload::Stop(StopInput {
        head: base.head(turn_id, "Stop"),
        stop_hook_active,
        last_assistant_message: last_assistant_message.map(str::to_owned),
    })
}

/// `SubagentStart`'s stdin: the head, then the sub-agent's id and type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SubagentStartInput {
    /// The common head (event `SubagentStart`).
    #[serde(flatten)]
    pub head: TurnHead,
    /// The sub-agent's id.
    pub agent_id: String,
    /// Its type (Codex's name).
    pub agent_type: String,
}

/// `SubagentStart`: the common fields, then the sub-agent's id and type.
pub fn subagent_start(
    base: &PayloadBase,
    turn_id: &str,
    agent_id: &str,
    agent_type: &str,
) -> CodexPayload {
    CodexPayload::SubagentStart(SubagentStartInput {
        head: base.head(turn_id, "SubagentStart"),
        agent_id: agent_id.to_owned(),
        agent_type: agent_type.to_owned(),
    })
}

/// `SubagentStop`'s stdin, in the captured order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SubagentStopInput {
    /// Codex's thread id.
    pub session_id: String,
    /// The turn.
    pub turn_id: String,
    /// Codex's rollout file (`null` in dsh).
    pub transcript_path: Option<String>,
    /// The sub-agent's rollout file (`null` in dsh).
    pub agent_transcript_path: Option<String>,
    /// The session cwd.
    pub cwd: String,
    /// `SubagentStop`.
    pub hook_event_name: &'static str,
    /// The model slug.
    pub model: String,
    /// The permission mode.
    pub permission_mode: String,
    /// Whether a Stop hook already continued this sub-agent.
    pub stop_hook_active: bool,
    /// The sub-agent's id.
    pub agent_id: String,
    /// Its type (Codex's name).
    pub agent_type: String,
    /// Its last assistant message, if any.
    pub last_assistant_message: Option<String>,
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
) -> CodexPayload {
    CodexPayload::SubagentStop(SubagentStopInput {
        session_id: base.session_id.clone(),
        turn_id: turn_id.to_owned(),
        transcript_path: base.transcript_path.clone(),
        agent_transcript_path: base.transcript_path.clone(),
        cwd: base.cwd.clone(),
        hook_event_name: "SubagentStop",
        model: base.model.clone(),
        permission_mode: base.permission_mode.clone(),
        stop_hook_active,
        agent_id: agent_id.to_owned(),
        agent_type: agent_type.to_owned(),
        last_assistant_message: last_assistant_message.map(str::to_owned),
    })
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
pub fn interrupt(base: &PayloadBase, turn_id: &str) -> CodexPayload {
    CodexPayload::Interrupt(base.head(turn_id, "Interrupt"))
}

/// `PreCompact` / `PostCompact`'s stdin (`compact*` captures): the turn,
/// the model and `trigger`; no `permission_mode`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CompactInput {
    /// Codex's thread id.
    pub session_id: String,
    /// The turn.
    pub turn_id: String,
    /// Codex's rollout file (`null` in dsh).
    pub transcript_path: Option<String>,
    /// The session cwd.
    pub cwd: String,
    /// The sub-agent, inside one.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentIds>,
    /// `PreCompact` or `PostCompact`.
    pub hook_event_name: String,
    /// The model slug.
    pub model: String,
    /// `manual` or `auto`.
    pub trigger: String,
}

/// `PreCompact` / `PostCompact` (`compact*` captures): the turn, the model and
/// `trigger`; no `permission_mode`.
pub fn compact(base: &PayloadBase, turn_id: &str, event: &str, trigger: &str) -> CodexPayload {
    CodexPayload::Compact(CompactInput {
        session_id: base.session_id.clone(),
        turn_id: turn_id.to_owned(),
        transcript_path: base.transcript_path.clone(),
        cwd: base.cwd.clone(),
        agent: None,
        hook_event_name: event.to_owned(),
        model: base.model.clone(),
        trigger: trigger.to_owned(),
    })
}

/// `SessionEnd`'s stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionEndInput {
    /// Codex's thread id.
    pub session_id: String,
    /// Codex's rollout file (`null` in dsh).
    pub transcript_path: Option<String>,
    /// The session cwd.
    pub cwd: String,
    /// The sub-agent, inside one.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentIds>,
    /// `SessionEnd`.
    pub hook_event_name: &'static str,
    /// Always `other` in Codex 0.169.
    pub reason: &'static str,
}

/// `SessionEnd` (`reason` is always `other` in Codex 0.169).
pub fn session_end(base: &PayloadBase) -> CodexPayload {
    CodexPayload::SessionEnd(SessionEndInput {
        session_id: base.session_id.clone(),
        transcript_path: base.transcript_path.clone(),
        cwd: base.cwd.clone(),
        agent: None,
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
pub fn notify<'a>(
    thread_id: &'a str,
    turn_id: &'a str,
    cwd: &'a str,
    input_messages: &'a [String],
    last_assistant_message: Option<&'a str>,
) -> NotifyArgument<'a> {
    NotifyArgument {
        kind: "agent-turn-complete",
        thread_id,
        turn_id,
        cwd,
        input_messages,
        last_assistant_message,
    }
}

/// The exact stdin bytes: compact JSON, no trailing newline.
pub fn to_stdin(payload: &impl Serialize) -> Vec<u8> {
    serde_json::to_vec(payload).unwrap_or_default()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod subagent_tests {
    use serde_json::{Map, Value, json};

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

    fn text(payload: &CodexPayload) -> String {
        String::from_utf8(to_stdin(payload)).unwrap()
    }

    /// The key order of `captures/subagent`'s SubagentStart and SubagentStop.
    #[test]
    fn subagent_payloads_keep_the_captured_key_order() {
        let start = subagent_start(&base(), "T", "A", "default");
        assert_eq!(
            text(&start),
            r#"{"session_id":"S","turn_id":"T","transcript_path":null,"cwd":"<PROJECT>","hook_event_name":"SubagentStart","model":"gpt-5.5","permission_mode":"bypassPermissions","agent_id":"A","agent_type":"default"}"#
        );
        let stop = subagent_stop(&base(), "T", "A", "default", true, Some("continued"));
        assert_eq!(
            text(&stop),
            r#"{"session_id":"S","turn_id":"T","transcript_path":null,"agent_transcript_path":null,"cwd":"<PROJECT>","hook_event_name":"SubagentStop","model":"gpt-5.5","permission_mode":"bypassPermissions","stop_hook_active":true,"agent_id":"A","agent_type":"default","last_assistant_message":"continued"}"#
        );
        // Inside a sub-agent, PreModelRequest names it before the event name.
        let pre = pre_model_request(&base(), "T").in_agent("A", "default");
        assert_eq!(
            text(&pre),
            r#"{"session_id":"S","turn_id":"T","cwd":"<PROJECT>","transcript_path":null,"model":"gpt-5.5","agent_id":"A","agent_type":"default","hook_event_name":"PreModelRequest"}"#
        );
        // The sub-agent events already name it: unchanged.
        assert_eq!(start.clone().in_agent("B", "x"), start);
        assert_eq!(codex_agent_type("general-purpose"), "default");
        assert_eq!(codex_agent_type("reviewer"), "reviewer");
    }

    /// The placement rule, on the JSON: the two keys right before
    /// `hook_event_name` when there is no `permission_mode`, otherwise right
    /// after `permission_mode`.
    fn placed_by_rule(payload: &Value) -> Value {
        let map = payload.as_object().unwrap();
        let before_event = !map.contains_key("permission_mode");
        let mut out = Map::new();
        let ids = |out: &mut Map<String, Value>| {
            out.insert("agent_id".into(), json!("A"));
            out.insert("agent_type".into(), json!("worker"));
        };
        for (key, value) in map {
            if before_event && key == "hook_event_name" {
                ids(&mut out);
            }
            out.insert(key.clone(), value.clone());
            if key == "permission_mode" {
                ids(&mut out);
            }
        }
        Value::Object(out)
    }

    /// Every event fired inside a sub-agent names it where the rule says,
    /// byte for byte (key order included).
    #[test]
    fn every_payload_inside_a_sub_agent_places_the_agent_by_the_rule() {
        let b = base();
        let input = HookToolInput::Command {
            command: "ls".into(),
            description: None,
        };
        let usage = CodexTokenUsage {
            input_tokens: 3,
            output_tokens: 4,
            ..CodexTokenUsage::default()
        };
        let payloads = [
            session_start(&b, "startup"),
            user_prompt_submit(&b, "T", "hi"),
            pre_model_request(&b, "T"),
            post_model_request(&b, "T", Ok(Some(usage))),
            post_model_request(&b, "T", Err("boom")),
            pre_tool_use(&b, "T", "Bash", &input, "C"),
            permission_request(&b, "T", "Bash", &input),
            post_tool_use(
                &b,
                "T",
                "Bash",
                &input,
                &HookToolResponse::Text("out".into()),
                "C",
            ),
            stop(&b, "T", false, None),
            interrupt(&b, "T"),
            compact(&b, "T", "PreCompact", "auto"),
            session_end(&b),
        ];
        for payload in payloads {
            let expected =
                serde_json::to_string(&placed_by_rule(&serde_json::to_value(&payload).unwrap()))
                    .unwrap();
            let inside = payload.clone().in_agent("A", "worker");
            assert_eq!(text(&inside), expected);
            // Outside a sub-agent there is no trace of one.
            assert!(!text(&payload).contains("agent_id"), "{}", text(&payload));
        }
    }
}
