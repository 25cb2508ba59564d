//! PostToolUse's `tool_response` (and the transcript's `toolUseResult`):
//! each built-in tool's canonical dsh value read into Claude Code's shape
//! for it, written in the captured key order. A key missing from the value
//! reads as its default.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{cc_tool_name, is_mcp_tool, mcp_tool_response};

/// A tool's `tool_response` as Claude Code shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ToolResponse {
    /// `Bash`.
    Bash(BashResponse),
    /// `Read`.
    Read(ReadResponse),
    /// `Write`.
    Write(WriteResponse),
    /// `Edit`.
    Edit(EditResponse),
    /// `Glob`.
    Glob(GlobResponse),
    /// `Grep`.
    Grep(GrepResponse),
    /// `Agent`.
    Agent(AgentResponse),
    /// The model-facing text, for a call with no value.
    Text(String),
    /// An MCP result or another tool's value: JSON dsh passes on as the
    /// tool gave it.
    Passed(Value),
}

/// The `Agent` tool's response: dsh's value already has Claude Code's keys
/// in its order; only the tool names in `toolsUsed` become Claude Code's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentResponse {
    status: String,
    prompt: String,
    agent_id: String,
    agent_type: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tools_used: Vec<String>,
    content: Vec<AgentText>,
    resolved_model: String,
    total_tool_use_count: u64,
}

/// A block of the subagent's answer (`{"type": "text", "text": …}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentText {
    #[serde(rename = "type")]
    kind: String,
    text: String,
}

/// `Bash`'s response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all(serialize = "camelCase"), default)]
pub struct BashResponse {
    stdout: String,
    stderr: String,
    interrupted: bool,
    #[serde(skip_deserializing)]
    is_image: bool,
    #[serde(skip_deserializing)]
    no_output_expected: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    background_task_id: Option<String>,
}

/// `Read`'s response: `{"type":"text","file":{…}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadResponse {
    #[serde(rename = "type")]
    kind: &'static str,
    file: ReadFile,
}

/// The file `Read` returned.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all(serialize = "camelCase"), default)]
pub struct ReadFile {
    file_path: String,
    content: String,
    num_lines: u64,
    #[serde(default = "first_line")]
    start_line: u64,
    total_lines: u64,
}

/// `Write`'s response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all(serialize = "camelCase"), default)]
pub struct WriteResponse {
    #[serde(rename = "type", default = "created")]
    kind: String,
    file_path: String,
    content: String,
    structured_patch: Vec<PatchHunk>,
    original_file: Option<String>,
    #[serde(skip_deserializing)]
    user_modified: bool,
}

/// `Edit`'s response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all(serialize = "camelCase"), default)]
pub struct EditResponse {
    file_path: String,
    old_string: String,
    new_string: String,
    original_file: Option<String>,
    structured_patch: Vec<PatchHunk>,
    #[serde(skip_deserializing)]
    user_modified: bool,
    replace_all: bool,
}

/// `Glob`'s response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all(serialize = "camelCase"), default)]
pub struct GlobResponse {
    #[serde(skip_deserializing)]
    duration_ms: u64,
    num_files: u64,
    filenames: Vec<String>,
    truncated: bool,
}

/// `Grep`'s response: `mode`, `content` and `numLines` only when dsh's
/// value has them (`content` is there as `null` in `files_with_matches`
/// mode).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all(serialize = "camelCase"), default)]
pub struct GrepResponse {
    #[serde(skip_serializing_if = "Option::is_none")]
    mode: Option<String>,
    num_files: u64,
    filenames: Vec<String>,
    #[serde(
        skip_serializing_if = "Option::is_none",
        deserialize_with = "dsh_protocol::present"
    )]
    content: Option<Option<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    num_lines: Option<u64>,
}

/// One hunk of a structured patch, in Claude Code's camelCase.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all(serialize = "camelCase"), default)]
pub struct PatchHunk {
    old_start: u64,
    old_lines: u64,
    new_start: u64,
    new_lines: u64,
    lines: Vec<String>,
}

fn first_line() -> u64 {
    1
}

fn created() -> String {
    "create".to_owned()
}

/// `value` read as a `T`: a value of another shape reads as the default.
fn read<T: for<'de> Deserialize<'de> + Default>(value: &Value) -> T {
    T::deserialize(value).unwrap_or_default()
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
) -> ToolResponse {
    let Some(value) = value else {
        return ToolResponse::Text(content.to_owned());
    };
    if is_mcp_tool(dsh_tool) {
        return ToolResponse::Passed(mcp_tool_response(value));
    }
    let argument = |key: &str| arguments.get(key).and_then(Value::as_str);
    let raw_path = |own: String| argument("file_path").map_or(own, str::to_owned);
    match dsh_tool {
        "bash" => {
            let bash: BashResponse = read(value);
            ToolResponse::Bash(BashResponse {
                stdout: bash.stdout.trim_end_matches('\n').to_owned(),
                stderr: bash.stderr.trim_end_matches('\n').to_owned(),
                no_output_expected: no_output_expected(argument("command").unwrap_or("")),
                ..bash
            })
        }
        "read" => {
            let file: ReadFile = read(value);
            ToolResponse::Read(ReadResponse {
                kind: "text",
                file: ReadFile {
                    file_path: raw_path(file.file_path.clone()),
                    ..file
                },
            })
        }
        "write" => {
            let write: WriteResponse = read(value);
            ToolResponse::Write(WriteResponse {
                file_path: raw_path(write.file_path.clone()),
                ..write
            })
        }
        "edit" => {
            let edit: EditResponse = read(value);
            ToolResponse::Edit(EditResponse {
                file_path: raw_path(edit.file_path.clone()),
                ..edit
            })
        }
        "glob" => ToolResponse::Glob(GlobResponse {
            duration_ms,
            ..read(value)
        }),
        "grep" => ToolResponse::Grep(read(value)),
        // A value of another shape (not dsh's agent tool's) passes as is.
        "agent" => match AgentResponse::deserialize(value) {
            Ok(agent) => ToolResponse::Agent(AgentResponse {
                tools_used: agent.tools_used.iter().map(|t| cc_tool_name(t)).collect(),
                ..agent
            }),
            Err(_) => ToolResponse::Passed(value.clone()),
        },
        _ => ToolResponse::Passed(value.clone()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests may unwrap
mod tests {
    use super::*;
    use serde_json::json;

    fn written(tool: &str, value: &Value, arguments: &Value) -> String {
        serde_json::to_string(&tool_response(tool, Some(value), arguments, "", 7)).unwrap()
    }

    /// Glob and Grep have no capture to rebuild (`tests/captures.rs` covers
    /// Bash, Read, Write and Edit): their keys and order as Claude Code's
    /// `durationMs`/`numFiles`/… shapes, a grep `content` of `null` kept.
    #[test]
    fn glob_and_grep_responses_keep_claude_codes_keys_and_order() {
        let glob = json!({"filenames": ["/p/a.rs"], "num_files": 1, "truncated": false});
        assert_eq!(
            written("glob", &glob, &json!({"pattern": "*.rs"})),
            r#"{"durationMs":7,"numFiles":1,"filenames":["/p/a.rs"],"truncated":false}"#
        );
        let files = json!({"mode": "files_with_matches", "filenames": ["/p/a.rs"],
            "content": null, "num_files": 1, "num_matches": 2});
        assert_eq!(
            written("grep", &files, &json!({})),
            r#"{"mode":"files_with_matches","numFiles":1,"filenames":["/p/a.rs"],"content":null}"#
        );
        let lines = json!({"mode": "content", "filenames": [], "content": "a.rs:1:x",
            "num_files": 0, "num_lines": 1});
        assert_eq!(
            written("grep", &lines, &json!({})),
            r#"{"mode":"content","numFiles":0,"filenames":[],"content":"a.rs:1:x","numLines":1}"#
        );
    }

    /// The Agent tool's value keeps its keys and order, its tool names
    /// become Claude Code's; a value of another shape passes unchanged.
    #[test]
    fn agent_response_names_claude_codes_tools() {
        let agent = json!({"status": "completed", "prompt": "p", "agentId": "a1",
            "agentType": "general-purpose", "toolsUsed": ["bash", "read"],
            "content": [{"type": "text", "text": "DONE"}], "resolvedModel": "m",
            "totalToolUseCount": 2});
        assert_eq!(
            written("agent", &agent, &json!({})),
            r#"{"status":"completed","prompt":"p","agentId":"a1","agentType":"general-purpose","toolsUsed":["Bash","Read"],"content":[{"type":"text","text":"DONE"}],"resolvedModel":"m","totalToolUseCount":2}"#
        );
        let other = json!({"toolsUsed": ["bash"], "extra": 1});
        assert_eq!(written("agent", &other, &json!({})), other.to_string());
    }

    /// Bash's background id is appended when there is one; the model's
    /// own `file_path` wins over the value's absolute one.
    #[test]
    fn bash_background_id_and_the_models_file_path() {
        let bash = json!({"stdout": "hi\n", "stderr": "", "exit_code": 0, "interrupted": false,
            "timed_out": false, "background_task_id": "b1"});
        assert_eq!(
            written("bash", &bash, &json!({"command": "touch a"})),
            r#"{"stdout":"hi","stderr":"","interrupted":false,"isImage":false,"noOutputExpected":true,"backgroundTaskId":"b1"}"#
        );
        let write = json!({"type": "update", "file_path": "/p/n.txt", "content": "x",
            "original_file": "y"});
        assert_eq!(
            written("write", &write, &json!({"file_path": "n.txt"})),
            r#"{"type":"update","filePath":"n.txt","content":"x","structuredPatch":[],"originalFile":"y","userModified":false}"#
        );
    }
}
