//! Hook stdin payloads, byte-for-byte as Claude Code 2.1.328 writes them
//! (docs/sources.md): compact JSON in a fixed key order, then one `\n`.
//!
//! Also the tool vocabulary: dsh tool names and values ↔ Claude Code's
//! `tool_name`, `tool_input` and `tool_response` shapes.

use dsh_seams::PermissionUpdate;
use serde_json::{Map, Value, json};

mod tools;
pub use tools::*;

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
}

/// Serializes a payload as Claude Code writes it to stdin: compact JSON + `\n`.
pub fn to_stdin(payload: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(payload).unwrap_or_else(|_| b"{}".to_vec());
    bytes.push(b'\n');
    bytes
}

struct Builder {
    map: Map<String, Value>,
}

impl Builder {
    fn new(common: &Common) -> Self {
        let mut map = Map::new();
        map.insert("session_id".into(), json!(common.session_id));
        map.insert("transcript_path".into(), json!(common.transcript_path));
        map.insert("cwd".into(), json!(common.cwd));
        Builder { map }
    }
    /// The head of the payloads fired around a turn's steps (tools, stop,
    /// batch): the common fields, then prompt id, permission mode, effort.
    fn in_step(common: &Common) -> Self {
        Self::new(common)
            .prompt_id(common)
            .mode(common)
            .effort(common)
    }
    /// Stop's and SubagentStop's tail: dsh runs no background tasks or
    /// session crons, so both lists are always empty.
    fn no_background_work(self) -> Self {
        self.field("background_tasks", json!([]))
            .field("session_crons", json!([]))
    }
    fn prompt_id(mut self, common: &Common) -> Self {
        if let Some(id) = &common.prompt_id {
            self.map.insert("prompt_id".into(), json!(id));
        }
        self
    }
    fn mode(mut self, common: &Common) -> Self {
        self.map
            .insert("permission_mode".into(), json!(common.permission_mode));
        self
    }
    fn effort(mut self, common: &Common) -> Self {
        self.map
            .insert("effort".into(), json!({ "level": common.effort }));
        self
    }
    fn event(self, name: &str) -> Self {
        self.field("hook_event_name", json!(name))
    }
    fn field(mut self, key: &str, value: Value) -> Self {
        self.map.insert(key.to_owned(), value);
        self
    }
    fn build(self) -> Value {
        Value::Object(self.map)
    }
}

/// `SessionStart` (`source` startup/resume/clear/compact). Claude Code's
/// resume-only cache statistics are not sent: dsh has no such figures.
pub fn session_start(common: &Common, source: &str) -> Value {
    Builder::new(common)
        .event("SessionStart")
        .field("source", json!(source))
        .build()
}

/// `SessionStart` with source `compact`: unlike the other sources it
/// carries the prompt id and the model (`cmp_*` captures).
pub fn session_start_compact(common: &Common, model: &str) -> Value {
    Builder::new(common)
        .prompt_id(common)
        .event("SessionStart")
        .field("source", json!("compact"))
        .field("model", json!(model))
        .build()
}

/// `PreCompact`: `trigger` manual|auto, `custom_instructions` (null without text).
pub fn pre_compact(common: &Common, trigger: &str, custom_instructions: Option<&str>) -> Value {
    Builder::new(common)
        .prompt_id(common)
        .event("PreCompact")
        .field("trigger", json!(trigger))
        .field("custom_instructions", json!(custom_instructions))
        .build()
}

/// `PostCompact`: `compact_summary` is the summary reply as written.
pub fn post_compact(common: &Common, trigger: &str, compact_summary: &str) -> Value {
    Builder::new(common)
        .prompt_id(common)
        .event("PostCompact")
        .field("trigger", json!(trigger))
        .field("compact_summary", json!(compact_summary))
        .build()
}

/// `UserPromptSubmit`.
pub fn user_prompt_submit(common: &Common, prompt: &str) -> Value {
    Builder::new(common)
        .prompt_id(common)
        .mode(common)
        .event("UserPromptSubmit")
        .field("prompt", json!(prompt))
        .build()
}

/// `UserPromptExpansion` (`misc_expansion`): after UserPromptSubmit, for a
/// prompt that invokes a custom command or skill.
pub fn user_prompt_expansion(
    common: &Common,
    expansion_type: &str,
    command_name: &str,
    command_args: &str,
    command_source: &str,
    prompt: &str,
) -> Value {
    Builder::new(common)
        .prompt_id(common)
        .mode(common)
        .event("UserPromptExpansion")
        .field("expansion_type", json!(expansion_type))
        .field("command_name", json!(command_name))
        .field("command_args", json!(command_args))
        .field("command_source", json!(command_source))
        .field("prompt", json!(prompt))
        .build()
}

/// `InstructionsLoaded` (`misc_instructions_loaded`): one per instruction
/// file; no `prompt_id` or `permission_mode`. A path-scoped rule adds the
/// documented `globs` and `trigger_file_path` (PROTOCOL.md; not captured).
pub fn instructions_loaded(
    common: &Common,
    file_path: &str,
    memory_type: &str,
    load_reason: &str,
    globs: &[String],
    trigger_file_path: Option<&str>,
) -> Value {
    let mut builder = Builder::new(common)
        .event("InstructionsLoaded")
        .field("file_path", json!(file_path))
        .field("memory_type", json!(memory_type))
        .field("load_reason", json!(load_reason));
    if !globs.is_empty() {
        builder = builder.field("globs", json!(globs));
    }
    if let Some(trigger) = trigger_file_path {
        builder = builder.field("trigger_file_path", json!(trigger));
    }
    builder.build()
}

/// `PreToolUse`.
pub fn pre_tool_use(
    common: &Common,
    tool_name: &str,
    tool_input: &Value,
    tool_use_id: &str,
) -> Value {
    Builder::in_step(common)
        .event("PreToolUse")
        .field("tool_name", json!(tool_name))
        .field("tool_input", tool_input.clone())
        .field("tool_use_id", json!(tool_use_id))
        .build()
}

/// `PermissionRequest` (no `tool_use_id`, as captured). `suggestions` are
/// the permission model's for this call; `None` leaves the key out, as
/// Claude Code does for an ask rule or in plan mode.
pub fn permission_request(
    common: &Common,
    tool_name: &str,
    tool_input: &Value,
    suggestions: Option<&[PermissionUpdate]>,
) -> Value {
    let builder = Builder::in_step(common)
        .event("PermissionRequest")
        .field("tool_name", json!(tool_name))
        .field("tool_input", tool_input.clone());
    match suggestions.map(serde_json::to_value) {
        Some(Ok(list)) => builder.field("permission_suggestions", list),
        Some(Err(_)) | None => builder,
    }
    .build()
}

/// `PermissionDenied` (auto mode's classifier denied the call): `reason` is
/// the check's reason (`Classifier unavailable`).
pub fn permission_denied(
    common: &Common,
    tool_name: &str,
    tool_input: &Value,
    tool_use_id: &str,
    reason: &str,
) -> Value {
    Builder::in_step(common)
        .event("PermissionDenied")
        .field("tool_name", json!(tool_name))
        .field("tool_input", tool_input.clone())
        .field("tool_use_id", json!(tool_use_id))
        .field("reason", json!(reason))
        .build()
}

/// `PostToolUse`.
pub fn post_tool_use(
    common: &Common,
    tool_name: &str,
    tool_input: &Value,
    tool_response: &Value,
    tool_use_id: &str,
    duration_ms: u64,
) -> Value {
    Builder::in_step(common)
        .event("PostToolUse")
        .field("tool_name", json!(tool_name))
        .field("tool_input", tool_input.clone())
        .field("tool_response", tool_response.clone())
        .field("tool_use_id", json!(tool_use_id))
        .field("duration_ms", json!(duration_ms))
        .build()
}

/// `PostToolUseFailure`; `error` is the model-facing error text.
pub fn post_tool_use_failure(
    common: &Common,
    tool_name: &str,
    tool_input: &Value,
    tool_use_id: &str,
    error: &str,
    is_interrupt: bool,
    duration_ms: u64,
) -> Value {
    Builder::in_step(common)
        .event("PostToolUseFailure")
        .field("tool_name", json!(tool_name))
        .field("tool_input", tool_input.clone())
        .field("tool_use_id", json!(tool_use_id))
        .field("error", json!(error))
        .field("is_interrupt", json!(is_interrupt))
        .field("duration_ms", json!(duration_ms))
        .build()
}

/// One entry of `PostToolBatch`'s `tool_calls`.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchCall {
    /// Claude Code's tool name.
    pub tool_name: String,
    /// The model's raw input (not normalized, as captured).
    pub tool_input: Value,
    /// The model's call id.
    pub tool_use_id: String,
    /// The model-facing result: a string, or for a text-only MCP result the
    /// content block array (`mcp_text_result`), as captured.
    pub tool_response: Value,
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

/// `PostToolBatch`: once per step, after every call of the batch settled.
pub fn post_tool_batch(common: &Common, calls: &[BatchCall]) -> Value {
    let calls: Vec<Value> = calls
        .iter()
        .map(|call| {
            json!({
                "tool_name": call.tool_name,
                "tool_input": call.tool_input,
                "tool_use_id": call.tool_use_id,
                "tool_response": call.tool_response,
            })
        })
        .collect();
    Builder::in_step(common)
        .event("PostToolBatch")
        .field("tool_calls", Value::Array(calls))
        .build()
}

/// `Stop`.
pub fn stop(common: &Common, stop_hook_active: bool, last_assistant_message: &str) -> Value {
    Builder::in_step(common)
        .event("Stop")
        .field("stop_hook_active", json!(stop_hook_active))
        .field("last_assistant_message", json!(last_assistant_message))
        .no_background_work()
        .build()
}

/// `StopFailure` (`misc_stopfailure_*`): no `permission_mode`, `effort`
/// before the event name, then the error category and Claude Code's error text.
pub fn stop_failure(common: &Common, error: &str, last_assistant_message: &str) -> Value {
    Builder::new(common)
        .prompt_id(common)
        .effort(common)
        .event("StopFailure")
        .field("error", json!(error))
        .field("last_assistant_message", json!(last_assistant_message))
        .build()
}

/// `SubagentStart`: no `permission_mode` or `effort`; the agent fields are
/// added where every payload fired inside a subagent gets them
/// ([`with_agent`]).
pub fn subagent_start(common: &Common) -> Value {
    Builder::new(common)
        .prompt_id(common)
        .event("SubagentStart")
        .build()
}

/// `SubagentStop`: `Stop`'s fields with the subagent's transcript.
pub fn subagent_stop(
    common: &Common,
    stop_hook_active: bool,
    agent_transcript_path: &str,
    last_assistant_message: &str,
) -> Value {
    Builder::in_step(common)
        .event("SubagentStop")
        .field("stop_hook_active", json!(stop_hook_active))
        .field("agent_transcript_path", json!(agent_transcript_path))
        .field("last_assistant_message", json!(last_assistant_message))
        .no_background_work()
        .build()
}

/// A payload fired inside a subagent: `agent_id` and `agent_type` go
/// before `effort` (or before `hook_event_name` when there is no
/// `effort`), as captured; `session_id`/`transcript_path` stay the
/// session's.
pub fn with_agent(payload: &Value, agent_id: &str, agent_type: &str) -> Value {
    let Value::Object(map) = payload else {
        return payload.clone();
    };
    let anchor = if map.contains_key("effort") {
        "effort"
    } else {
        "hook_event_name"
    };
    let mut out = Map::new();
    for (key, value) in map {
        if key == anchor {
            out.insert("agent_id".into(), json!(agent_id));
            out.insert("agent_type".into(), json!(agent_type));
        }
        out.insert(key.clone(), value.clone());
    }
    Value::Object(out)
}

/// `SessionEnd`.
pub fn session_end(common: &Common, reason: &str) -> Value {
    Builder::new(common)
        .prompt_id(common)
        .event("SessionEnd")
        .field("reason", json!(reason))
        .build()
}

/// `Notification` (never captured headless; documented fields, docs/sources.md).
pub fn notification(common: &Common, message: &str, notification_type: &str) -> Value {
    Builder::new(common)
        .prompt_id(common)
        .event("Notification")
        .field("message", json!(message))
        .field("notification_type", json!(notification_type))
        .build()
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
        };
        let calls = [BatchCall {
            tool_name: "Bash".into(),
            tool_input: json!({"command": "echo hi", "description": "x"}),
            tool_use_id: "toolu_oracle_001".into(),
            tool_response: json!("hi"),
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
        let payload = with_mcp_server(
            pre_tool_use(&common(), "mcp__echo__echo", &json!({"text":"hello"}), "t1"),
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
            tool_response("mcp__echo__echo", Some(&structured), &json!({}), "", 1),
            json!("{\"result\":\"ECHO: hello\"}")
        );
        let text_only =
            json!({"content":[{"type":"text","text":"ECHO-TEXT: plain"}],"isError":false});
        assert_eq!(
            tool_response("mcp__echo__echo_text", Some(&text_only), &json!({}), "", 1),
            json!([{"type":"text","text":"ECHO-TEXT: plain"}])
        );
        // PostToolBatch: blocks for an untouched text-only result, the text otherwise.
        assert_eq!(
            batch_tool_response(
                "mcp__echo__echo_text",
                Some(&text_only),
                "ECHO-TEXT: plain",
                false
            ),
            json!([{"type":"text","text":"ECHO-TEXT: plain"}])
        );
        assert_eq!(
            batch_tool_response("mcp__echo__echo_text", Some(&text_only), "REPLACED", false),
            json!("REPLACED")
        );
        assert_eq!(
            batch_tool_response(
                "mcp__echo__echo",
                Some(&structured),
                "{\"result\":\"ECHO: hello\"}",
                false
            ),
            json!("{\"result\":\"ECHO: hello\"}")
        );
    }
}
