//! The tool vocabulary of the payloads: dsh tool names and values ↔
//! Claude Code's `tool_name`, `tool_input` and `tool_response` shapes,
//! MCP tools included.

use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value, json};

/// Claude Code's name for a dsh tool (`bash` → `Bash`, …); other names pass through.
pub fn cc_tool_name(dsh_tool: &str) -> String {
    match dsh_tool {
        "bash" => "Bash",
        "bash_output" => "BashOutput",
        "kill_shell" => "KillShell",
        "read" => "Read",
        "write" => "Write",
        "edit" => "Edit",
        "notebook_edit" => "NotebookEdit",
        "glob" => "Glob",
        "grep" => "Grep",
        "web_fetch" => "WebFetch",
        "task_create" => "TaskCreate",
        "task_get" => "TaskGet",
        "task_update" => "TaskUpdate",
        "task_list" => "TaskList",
        "ask_user_question" => "AskUserQuestion",
        "exit_plan_mode" => "ExitPlanMode",
        "agent" => "Agent",
        other => other,
    }
    .to_owned()
}

/// dsh's name for a Claude Code tool name, the reverse of [`cc_tool_name`]
/// (`MultiEdit` is dsh's `edit` too, `Task` is `agent`); other names pass
/// through.
pub fn dsh_tool_name(cc_tool: &str) -> &str {
    match cc_tool {
        "Bash" => "bash",
        "BashOutput" | "TaskOutput" => "bash_output",
        "KillShell" | "TaskStop" => "kill_shell",
        "Read" => "read",
        "Write" => "write",
        "Edit" | "MultiEdit" => "edit",
        "NotebookEdit" => "notebook_edit",
        "Glob" => "glob",
        "Grep" => "grep",
        "WebFetch" => "web_fetch",
        "TaskCreate" => "task_create",
        "TaskGet" => "task_get",
        "TaskUpdate" => "task_update",
        "TaskList" => "task_list",
        "AskUserQuestion" => "ask_user_question",
        "ExitPlanMode" => "exit_plan_mode",
        "Agent" | "Task" => "agent",
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

/// One MCP server of the session as Claude Code names it in tool events:
/// `"mcp_server":{"name":…,"source":…}` (`project`, `user`, `local`,
/// `dynamic`, …).
pub use dsh_hooks::registry::McpServerTag;

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

/// Claude Code's trailing `mcp_server` key of an MCP tool's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct McpServerKey<'a> {
    /// The configured server name.
    pub name: &'a str,
    /// Its configuration scope.
    pub source: &'a str,
}

/// Appends Claude Code's trailing `mcp_server` key to a tool event payload.
pub fn with_mcp_server<'a>(
    payload: super::ToolInput<'a>,
    server: Option<&'a McpServerTag>,
) -> super::ToolInput<'a> {
    super::ToolInput {
        mcp_server: server.map(|tag| McpServerKey {
            name: &tag.name,
            source: &tag.source,
        }),
        ..payload
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
) -> super::ToolResponse {
    if let Some(value) = value
        && is_mcp_tool(dsh_tool)
        && !is_error
        && value.get("structuredContent").is_none()
        && let Some(blocks) = value.get("content")
        && mcp_content_text(blocks) == content
    {
        return super::ToolResponse::Passed(blocks.clone());
    }
    super::ToolResponse::Text(content.to_owned())
}
