//! Hook stdin payloads, byte-for-byte as Claude Code 2.1.328 writes them
//! (docs/sources.md): compact JSON in a fixed key order, then one `\n`.
//!
//! Also the tool vocabulary: dsh tool names and values ↔ Claude Code's
//! `tool_name`, `tool_input` and `tool_response` shapes.

use std::path::Path;

use dsh_seams::PermissionUpdate;
use serde_json::{Map, Value, json};

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
    Builder::new(common)
        .prompt_id(common)
        .mode(common)
        .effort(common)
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
    let builder = Builder::new(common)
        .prompt_id(common)
        .mode(common)
        .effort(common)
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
    Builder::new(common)
        .prompt_id(common)
        .mode(common)
        .effort(common)
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
    Builder::new(common)
        .prompt_id(common)
        .mode(common)
        .effort(common)
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
    Builder::new(common)
        .prompt_id(common)
        .mode(common)
        .effort(common)
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
    Builder::new(common)
        .prompt_id(common)
        .mode(common)
        .effort(common)
        .event("PostToolBatch")
        .field("tool_calls", Value::Array(calls))
        .build()
}

/// `Stop`.
pub fn stop(common: &Common, stop_hook_active: bool, last_assistant_message: &str) -> Value {
    Builder::new(common)
        .prompt_id(common)
        .mode(common)
        .effort(common)
        .event("Stop")
        .field("stop_hook_active", json!(stop_hook_active))
        .field("last_assistant_message", json!(last_assistant_message))
        .field("background_tasks", json!([]))
        .field("session_crons", json!([]))
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
    Builder::new(common)
        .prompt_id(common)
        .mode(common)
        .effort(common)
        .event("SubagentStop")
        .field("stop_hook_active", json!(stop_hook_active))
        .field("agent_transcript_path", json!(agent_transcript_path))
        .field("last_assistant_message", json!(last_assistant_message))
        .field("background_tasks", json!([]))
        .field("session_crons", json!([]))
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

/// Claude Code's name for a dsh tool (`bash` → `Bash`, …); other names pass through.
pub fn cc_tool_name(dsh_tool: &str) -> String {
    match dsh_tool {
        "bash" => "Bash",
        "read" => "Read",
        "write" => "Write",
        "edit" => "Edit",
        "glob" => "Glob",
        "grep" => "Grep",
        "agent" => "Agent",
        other => other,
    }
    .to_owned()
}

/// dsh's name for a Claude Code tool name, the reverse of [`cc_tool_name`]
/// (`MultiEdit` is dsh's `edit` too); other names pass through.
pub fn dsh_tool_name(cc_tool: &str) -> &str {
    match cc_tool {
        "Bash" => "bash",
        "Read" => "read",
        "Write" => "write",
        "Edit" | "MultiEdit" => "edit",
        "Glob" => "glob",
        "Grep" => "grep",
        "Agent" => "agent",
        other => other,
    }
}

fn absolute(path: &str, cwd: &Path) -> String {
    let candidate = Path::new(path);
    if candidate.is_absolute() {
        path.to_owned()
    } else {
        cwd.join(candidate).to_string_lossy().into_owned()
    }
}

/// `tool_input` as Claude Code shows it to Pre/PostToolUse hooks: the
/// arguments with `file_path` made absolute and defaults filled in (Edit
/// gets `replace_all: false`).
pub fn normalize_tool_input(dsh_tool: &str, arguments: &Value, cwd: &Path) -> Value {
    let Value::Object(map) = arguments else {
        return arguments.clone();
    };
    let mut map = map.clone();
    if matches!(dsh_tool, "read" | "write" | "edit")
        && let Some(Value::String(path)) = map.get("file_path")
    {
        let abs = absolute(path, cwd);
        map.insert("file_path".into(), json!(abs));
    }
    if dsh_tool == "edit" && !map.contains_key("replace_all") {
        map.insert("replace_all".into(), json!(false));
    }
    // Claude Code rebuilds the input from its schema, so known keys come in
    // schema order whatever order the model used (p1: the model sent
    // `replace_all` first, PreToolUse saw it last); unknown keys follow.
    let order: &[&str] = match dsh_tool {
        "bash" => &[
            "command",
            "description",
            "timeout",
            "run_in_background",
            "dangerouslyDisableSandbox",
        ],
        "read" => &["file_path", "offset", "limit", "pages"],
        "write" => &["file_path", "content"],
        "edit" => &["file_path", "old_string", "new_string", "replace_all"],
        "glob" => &["pattern", "path"],
        "grep" => &["pattern", "path", "glob", "output_mode"],
        "agent" => &[
            "description",
            "prompt",
            "subagent_type",
            "run_in_background",
        ],
        _ => &[],
    };
    let mut ordered = Map::new();
    for key in order {
        if let Some(value) = map.remove(*key) {
            ordered.insert((*key).to_owned(), value);
        }
    }
    ordered.extend(map);
    Value::Object(ordered)
}

fn str_field<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

fn camel_patch(patch: &Value) -> Value {
    let Some(hunks) = patch.as_array() else {
        return json!([]);
    };
    Value::Array(
        hunks
            .iter()
            .map(|hunk| {
                json!({
                    "oldStart": hunk.get("old_start").cloned().unwrap_or(json!(0)),
                    "oldLines": hunk.get("old_lines").cloned().unwrap_or(json!(0)),
                    "newStart": hunk.get("new_start").cloned().unwrap_or(json!(0)),
                    "newLines": hunk.get("new_lines").cloned().unwrap_or(json!(0)),
                    "lines": hunk.get("lines").cloned().unwrap_or(json!([])),
                })
            })
            .collect(),
    )
}

/// Whether Claude Code expects a command to print nothing: every command of
/// the line is one of the silent file commands (`touch a.txt` → true,
/// `touch a && echo done` → false, as captured in `perm_*`).
fn no_output_expected(command: &str) -> bool {
    const SILENT: &[&str] = &[
        "touch", "mkdir", "rm", "rmdir", "mv", "cp", "chmod", "chown", "ln", "cd",
    ];
    let mut programs = command
        .split(['\n', ';', '|', '&'])
        .filter_map(|segment| segment.split_whitespace().next())
        .peekable();
    programs.peek().is_some() && programs.all(|program| SILENT.contains(&program))
}

/// `tool_response` for PostToolUse, from dsh's canonical tool value.
/// `arguments` are the call's (unnormalized) arguments: Claude Code echoes
/// the model's own `file_path` in `filePath` (`"notes.txt"` in `p1`).
/// `duration_ms` fills Glob's `durationMs`. Unknown tools pass their value
/// through, or the model-facing content when they have none.
pub fn tool_response(
    dsh_tool: &str,
    value: Option<&Value>,
    arguments: &Value,
    content: &str,
    duration_ms: u64,
) -> Value {
    let Some(value) = value else {
        return json!(content);
    };
    if is_mcp_tool(dsh_tool) {
        return mcp_tool_response(value);
    }
    let raw_path = arguments
        .get("file_path")
        .and_then(Value::as_str)
        .unwrap_or_else(|| str_field(value, "file_path"));
    match dsh_tool {
        "bash" => json!({
            "stdout": str_field(value, "stdout").trim_end_matches('\n'),
            "stderr": str_field(value, "stderr").trim_end_matches('\n'),
            "interrupted": value.get("interrupted").and_then(Value::as_bool).unwrap_or(false),
            "isImage": false,
            "noOutputExpected": no_output_expected(
                arguments.get("command").and_then(Value::as_str).unwrap_or(""),
            ),
        }),
        "read" => json!({
            "type": "text",
            "file": {
                "filePath": raw_path,
                "content": value.get("content").cloned().unwrap_or(json!("")),
                "numLines": value.get("num_lines").cloned().unwrap_or(json!(0)),
                "startLine": value.get("start_line").cloned().unwrap_or(json!(1)),
                "totalLines": value.get("total_lines").cloned().unwrap_or(json!(0)),
            }
        }),
        "write" => json!({
            "type": value.get("type").cloned().unwrap_or(json!("create")),
            "filePath": raw_path,
            "content": value.get("content").cloned().unwrap_or(json!("")),
            "structuredPatch": camel_patch(value.get("structured_patch").unwrap_or(&json!([]))),
            "originalFile": value.get("original_file").cloned().unwrap_or(Value::Null),
            "userModified": false,
        }),
        "edit" => json!({
            "filePath": raw_path,
            "oldString": value.get("old_string").cloned().unwrap_or(json!("")),
            "newString": value.get("new_string").cloned().unwrap_or(json!("")),
            "originalFile": value.get("original_file").cloned().unwrap_or(Value::Null),
            "structuredPatch": camel_patch(value.get("structured_patch").unwrap_or(&json!([]))),
            "userModified": false,
            "replaceAll": value.get("replace_all").cloned().unwrap_or(json!(false)),
        }),
        "glob" => json!({
            "durationMs": duration_ms,
            "numFiles": value.get("num_files").cloned().unwrap_or(json!(0)),
            "filenames": value.get("filenames").cloned().unwrap_or(json!([])),
            "truncated": value.get("truncated").cloned().unwrap_or(json!(false)),
        }),
        "grep" => {
            let mut map = Map::new();
            if let Some(mode) = value.get("mode") {
                map.insert("mode".into(), mode.clone());
            }
            map.insert(
                "numFiles".into(),
                value.get("num_files").cloned().unwrap_or(json!(0)),
            );
            map.insert(
                "filenames".into(),
                value.get("filenames").cloned().unwrap_or(json!([])),
            );
            if let Some(content) = value.get("content") {
                map.insert("content".into(), content.clone());
            }
            if let Some(lines) = value.get("num_lines") {
                map.insert("numLines".into(), lines.clone());
            }
            Value::Object(map)
        }
        // The Agent tool's response: dsh's value already uses Claude
        // Code's keys; tool names are Claude Code's.
        "agent" => {
            let mut value = value.clone();
            if let Some(Value::Array(tools)) = value.get_mut("toolsUsed") {
                for tool in tools.iter_mut() {
                    if let Some(name) = tool.as_str() {
                        *tool = json!(cc_tool_name(name));
                    }
                }
            }
            value
        }
        _ => value.clone(),
    }
}

/// One MCP server of the session as Claude Code names it in tool events:
/// `"mcp_server":{"name":…,"source":…}` (`project`, `user`, `local`,
/// `dynamic`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerTag {
    /// The configured server name.
    pub name: String,
    /// The configuration scope.
    pub source: String,
}

/// Claude Code's name part rule for `mcp__<server>__<tool>`: anything but
/// `[A-Za-z0-9_-]` becomes `_`.
fn mcp_name_part(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Whether `tool` is an MCP tool (`mcp__…`).
pub fn is_mcp_tool(tool: &str) -> bool {
    tool.starts_with("mcp__")
}

/// The server of an MCP tool, among `servers`; the longest server prefix
/// wins (a server named `a__b` against one named `a`).
pub fn mcp_server_of<'a>(tool: &str, servers: &'a [McpServerTag]) -> Option<&'a McpServerTag> {
    servers
        .iter()
        .filter(|tag| tool.starts_with(&format!("mcp__{}__", mcp_name_part(&tag.name))))
        .max_by_key(|tag| tag.name.len())
}

/// Appends Claude Code's trailing `mcp_server` key to a tool event payload.
pub fn with_mcp_server(payload: Value, server: Option<&McpServerTag>) -> Value {
    match (payload, server) {
        (Value::Object(mut map), Some(tag)) => {
            map.insert(
                "mcp_server".into(),
                json!({"name": tag.name, "source": tag.source}),
            );
            Value::Object(map)
        }
        (payload, _) => payload,
    }
}

/// The text of MCP content blocks as dsh's MCP tools render it (text
/// blocks as they are, other blocks as JSON, one per line).
fn mcp_content_text(content: &Value) -> String {
    content
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .map(|block| match block.get("text").and_then(Value::as_str) {
                    Some(text) if block.get("type").and_then(Value::as_str) == Some("text") => {
                        text.to_owned()
                    }
                    Some(_) | None => block.to_string(),
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// An MCP tool's `tool_response` from its canonical result value: the
/// structured content as a JSON *string* when there is one (`mcp_basic`),
/// else the content block array (`mcp_text_result`).
pub fn mcp_tool_response(value: &Value) -> Value {
    match value.get("structuredContent") {
        Some(structured) => json!(structured.to_string()),
        None => value.get("content").cloned().unwrap_or_else(|| json!([])),
    }
}

/// PostToolBatch's `tool_response` for one call: the model-facing text,
/// except for a text-only MCP result nobody replaced, which Claude Code
/// passes as its content block array.
pub fn batch_tool_response(
    dsh_tool: &str,
    value: Option<&Value>,
    content: &str,
    is_error: bool,
) -> Value {
    if let Some(value) = value
        && is_mcp_tool(dsh_tool)
        && !is_error
        && value.get("structuredContent").is_none()
        && let Some(blocks) = value.get("content")
        && mcp_content_text(blocks) == content
    {
        return blocks.clone();
    }
    json!(content)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn common() -> Common {
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
    use super::*;

    fn common() -> Common {
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
