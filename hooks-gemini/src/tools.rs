//! How dsh's tools look to Gemini hooks: Gemini's names and argument names
//! (`bash` ↔ `run_shell_command`, `read` ↔ `read_file`, `write` ↔
//! `write_file`, `edit` ↔ `replace`, `glob` ↔ `glob`, `grep` ↔
//! `grep_search`), and `tool_response` shaped as Gemini shapes it
//! (`{"llmContent", "returnDisplay", "error"?}`).

use std::path::Path;

use dsh_hooks::lenient::Lenient;
use dsh_hooks::names::{ArgumentNames, ToolNames, copy_keys};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Gemini's names for dsh's tools.
pub const NAMES: ToolNames = ToolNames(&[
    ("bash", "run_shell_command"),
    ("read", "read_file"),
    ("write", "write_file"),
    ("edit", "replace"),
    ("grep", "grep_search"),
    ("bash_output", "read_background_output"),
]);

/// The name a dsh tool has in Gemini hook payloads.
pub fn hook_tool_name(tool: &str) -> &str {
    NAMES.dialect_name(tool)
}

/// The dsh tool a Gemini tool name stands for (the reverse of
/// [`hook_tool_name`]); other names pass through.
pub fn dsh_tool_name(hook_name: &str) -> &str {
    NAMES.dsh_name(hook_name)
}

/// The argument names of Gemini's tools.
#[rustfmt::skip]
pub const ARGUMENTS: ArgumentNames = ArgumentNames(&[
    ("bash", &[("command", "command"), ("description", "description")]),
    ("read", &[("file_path", "file_path")]),
    ("write", &[("file_path", "file_path"), ("content", "content")]),
    ("edit", &[("file_path", "file_path"), ("old_string", "old_string"), ("new_string", "new_string")]),
]);

/// `tool_input` for a dsh call: the arguments under Gemini's names
/// (`read`'s `offset` and `limit` as lines, `edit`'s `replace_all` as
/// `allow_multiple`).
pub fn hook_tool_input(tool: &str, arguments: &Value) -> Value {
    let mut out = Map::new();
    if !ARGUMENTS.rename(tool, true, arguments, &mut out) {
        return arguments.clone();
    }
    if tool == "read" {
        let offset = arguments.get("offset").and_then(Value::as_u64);
        if let Some(offset) = offset {
            out.insert("start_line".into(), offset.into());
        }
        if let Some(limit) = arguments.get("limit").and_then(Value::as_u64) {
            let start = offset.unwrap_or(1);
            out.insert("end_line".into(), (start + limit.saturating_sub(1)).into());
        }
    }
    if tool == "edit" && arguments.get("replace_all").and_then(Value::as_bool) == Some(true) {
        out.insert("allow_multiple".into(), true.into());
    }
    Value::Object(out)
}

/// dsh arguments for a Gemini `tool_input` (a hook's, or a tail call's
/// `args`): the reverse of [`hook_tool_input`]. Keys of `original` are
/// kept unless `input` names them.
pub fn arguments_from_tool_input(tool: &str, original: &Value, input: &Value) -> Value {
    let mut out = original.as_object().cloned().unwrap_or_default();
    if !ARGUMENTS.rename(tool, false, input, &mut out) {
        return input.clone();
    }
    if tool == "read" {
        let start = input.get("start_line").and_then(Value::as_u64);
        if let Some(start) = start {
            out.insert("offset".into(), start.into());
        }
        if let Some(end) = input.get("end_line").and_then(Value::as_u64) {
            let start = start.unwrap_or(1);
            out.insert("limit".into(), (end.saturating_sub(start) + 1).into());
        }
    }
    if tool == "edit" {
        copy_keys(input, &mut out, &[("allow_multiple", "replace_all")]);
    }
    Value::Object(out)
}

/// Shallow-merges a hook's `tool_input` over `base` (Gemini's rule).
pub fn merge_input(base: &Value, update: &Value) -> Value {
    match (base, update) {
        (Value::Object(base), Value::Object(update)) => {
            let mut merged = base.clone();
            for (key, value) in update {
                merged.insert(key.clone(), value.clone());
            }
            Value::Object(merged)
        }
        _ => update.clone(),
    }
}

/// A parameter type in Gemini's tool declarations.
#[derive(Debug, Clone, Copy)]
enum ParamType {
    String,
    Integer,
    Boolean,
}

impl ParamType {
    fn name(self) -> &'static str {
        match self {
            ParamType::String => "string",
            ParamType::Integer => "integer",
            ParamType::Boolean => "boolean",
        }
    }

    fn accepts(self, value: &Value) -> bool {
        match self {
            ParamType::String => value.is_string(),
            ParamType::Integer => value.is_i64() || value.is_u64(),
            ParamType::Boolean => value.is_boolean(),
        }
    }
}

/// A tool's required parameter names and its parameters with their types.
type Declared = (
    &'static [&'static str],
    &'static [(&'static str, ParamType)],
);

/// Gemini CLI 0.61's declared parameters (names and types, in declaration
/// order) and required names of the tools dsh offers under Gemini names
/// (`a_baseline_all_events/tools.json` in the reference). `replace`'s
/// required `instruction` is left out: dsh's `edit` has no such argument,
/// so a model's call to it never carries one.
fn declared(hook_name: &str) -> Option<Declared> {
    use ParamType::{Boolean, Integer, String};
    Some(match hook_name {
        "run_shell_command" => (
            &["command"],
            &[
                ("command", String),
                ("description", String),
                ("dir_path", String),
                ("is_background", Boolean),
                ("delay_ms", Integer),
            ],
        ),
        "read_file" => (
            &["file_path"],
            &[
                ("file_path", String),
                ("start_line", Integer),
                ("end_line", Integer),
            ],
        ),
        "write_file" => (
            &["file_path", "content"],
            &[("file_path", String), ("content", String)],
        ),
        "replace" => (
            &["file_path", "old_string", "new_string"],
            &[
                ("file_path", String),
                ("instruction", String),
                ("old_string", String),
                ("new_string", String),
                ("allow_multiple", Boolean),
            ],
        ),
        "grep_search" => (
            &["pattern"],
            &[
                ("pattern", String),
                ("dir_path", String),
                ("include_pattern", String),
                ("exclude_pattern", String),
                ("names_only", Boolean),
                ("max_matches_per_file", Integer),
                ("total_max_matches", Integer),
            ],
        ),
        "glob" => (
            &["pattern"],
            &[
                ("pattern", String),
                ("dir_path", String),
                ("case_sensitive", Boolean),
                ("respect_git_ignore", Boolean),
                ("respect_gemini_ignore", Boolean),
            ],
        ),
        _ => return None,
    })
}

/// Gemini's check of a hook-modified `tool_input` against the tool's
/// declared parameters: the first problem in its validator's wording
/// (`params/command must be string`, `params must have required property
/// 'command'`). Tools Gemini declares no parameters for pass.
pub fn validate_tool_input(hook_name: &str, input: &Value) -> Result<(), String> {
    let Some((required, params)) = declared(hook_name) else {
        return Ok(());
    };
    let Some(map) = input.as_object() else {
        return Err("params must be object".to_owned());
    };
    if let Some(missing) = required.iter().find(|name| !map.contains_key(**name)) {
        return Err(format!("params must have required property '{missing}'"));
    }
    for (name, kind) in params {
        if let Some(value) = map.get(*name)
            && !kind.accepts(value)
        {
            return Err(format!("params/{name} must be {}", kind.name()));
        }
    }
    Ok(())
}

/// What the model gets when a hook's `tool_input` fails Gemini's check
/// (`bt_rewrite_invalid`).
pub fn invalid_rewrite_text(problem: &str) -> String {
    format!("Tool parameter modification by hook failed validation: {problem}")
}

fn file_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_owned())
}

fn absolute(path: &str, cwd: &Path) -> String {
    let path = Path::new(path);
    if path.is_absolute() {
        path.display().to_string()
    } else {
        cwd.join(path).display().to_string()
    }
}

/// `tool_response` as Gemini shapes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResponse {
    /// What the model is given.
    pub llm_content: String,
    /// What the user is shown.
    pub return_display: ReturnDisplay,
    /// Set when the tool failed (never for a failing shell command).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolError>,
}

/// `returnDisplay`: text, or a file diff for writes and edits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ReturnDisplay {
    /// Plain text.
    Text(String),
    /// A written or edited file.
    File(FileDiff),
}

/// Gemini's file diff display.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileDiff {
    /// The file's base name.
    pub file_name: String,
    /// Its absolute path.
    pub file_path: String,
    /// The content before (empty for a new file).
    pub original_content: String,
    /// The content after.
    pub new_content: String,
    /// Whether the write created the file.
    pub is_new_file: bool,
}

/// `error` of a failed tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolError {
    /// The tool's output.
    pub message: String,
    /// `execution_failed`.
    #[serde(rename = "type")]
    pub kind: &'static str,
}

/// The keys of dsh's structured tool results that Gemini's shapes use
/// (each absent when missing or of another type).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ResultKeys {
    stdout: Lenient<String>,
    stderr: Lenient<String>,
    exit_code: Lenient<i64>,
    content: Lenient<String>,
    original_file: Lenient<String>,
}

/// `tool_response` for a finished dsh call, in Gemini's shape.
pub fn hook_tool_response(
    tool: &str,
    arguments: &Value,
    cwd: &Path,
    is_error: bool,
    content: &str,
    value: Option<&Value>,
) -> ToolResponse {
    let keys: ResultKeys = value
        .filter(|value| value.is_object())
        .and_then(|value| ResultKeys::deserialize(value).ok())
        .unwrap_or_default();
    let text = |field: &Lenient<String>| field.0.clone().unwrap_or_default();
    let plain = |llm: String, display: String| ToolResponse {
        llm_content: llm,
        return_display: ReturnDisplay::Text(display),
        error: None,
    };
    match (tool, value) {
        // Gemini's shell result: the combined output wrapped as untrusted,
        // the exit code when not zero; never an `error` for a failing
        // command. (dsh does not run commands in their own process group
        // the way Gemini reports it, so there is no `Process Group PGID`.)
        ("bash", Some(_)) => {
            let mut output = text(&keys.stdout);
            let stderr = text(&keys.stderr);
            if !stderr.is_empty() {
                if !output.is_empty() {
                    output.push('\n');
                }
                output.push_str(&stderr);
            }
            let shown = if output.is_empty() {
                "(empty)".to_owned()
            } else {
                output.clone()
            };
            let mut llm = format!("<untrusted_context>\nOutput: {shown}\n");
            if let Some(code) = keys.exit_code.0
                && code != 0
            {
                llm.push_str(&format!("Exit Code: {code}\n"));
            }
            llm.push_str("</untrusted_context>");
            plain(llm, output)
        }
        (_, _) if is_error => ToolResponse {
            error: Some(ToolError {
                message: content.to_owned(),
                kind: "execution_failed",
            }),
            ..plain(content.to_owned(), content.to_owned())
        },
        ("read", Some(_)) => plain(text(&keys.content), String::new()),
        ("write" | "edit", Some(_)) => {
            let path = arguments
                .get("file_path")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let new_content = match tool {
                "write" => text(&keys.content),
                _ => fs_err::read_to_string(absolute(path, cwd)).unwrap_or_default(),
            };
            let display = FileDiff {
                file_name: file_name(path),
                file_path: absolute(path, cwd),
                is_new_file: keys.original_file.0.is_none() && tool == "write",
                original_content: keys.original_file.0.unwrap_or_default(),
                new_content,
            };
            ToolResponse {
                llm_content: content.to_owned(),
                return_display: ReturnDisplay::File(display),
                error: None,
            }
        }
        (_, _) => plain(content.to_owned(), content.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn dsh_tools_have_geminis_names_and_arguments() {
        assert_eq!(hook_tool_name("bash"), "run_shell_command");
        assert_eq!(dsh_tool_name("replace"), "edit");
        assert_eq!(
            hook_tool_input("read", &json!({"file_path": "a", "offset": 3, "limit": 2})),
            json!({"file_path": "a", "start_line": 3, "end_line": 4})
        );
        assert_eq!(
            hook_tool_input(
                "edit",
                &json!({"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": true})
            ),
            json!({"file_path": "a", "old_string": "x", "new_string": "y", "allow_multiple": true})
        );
        let original = json!({"command": "echo hi", "timeout": 5});
        let merged = merge_input(
            &hook_tool_input("bash", &original),
            &json!({"command": "echo REWRITTEN"}),
        );
        assert_eq!(
            arguments_from_tool_input("bash", &original, &merged),
            json!({"command": "echo REWRITTEN", "timeout": 5})
        );
    }

    /// `bt_rewrite_invalid`: Gemini's validator wording.
    #[test]
    fn a_rewritten_input_is_checked_against_geminis_declarations() {
        assert_eq!(
            validate_tool_input("run_shell_command", &json!({"command": 42})),
            Err("params/command must be string".to_owned())
        );
        assert_eq!(
            validate_tool_input("run_shell_command", &json!({"description": "x"})),
            Err("params must have required property 'command'".to_owned())
        );
        assert_eq!(
            validate_tool_input("read_file", &json!({"file_path": "a", "start_line": "3"})),
            Err("params/start_line must be integer".to_owned())
        );
        assert_eq!(
            validate_tool_input("run_shell_command", &json!({"command": "ls"})),
            Ok(())
        );
        assert_eq!(validate_tool_input("mcp_tool", &json!(7)), Ok(()));
    }

    /// `a_file_tools`: a failing shell command has no `error`, only its exit
    /// code in the wrapped output.
    #[test]
    fn a_failing_shell_command_reports_its_exit_code_not_an_error() {
        let value = json!({"stdout": "", "stderr": "to-stderr", "exit_code": 3, "interrupted": false, "timed_out": false});
        let response =
            hook_tool_response("bash", &json!({}), Path::new("/p"), true, "x", Some(&value));
        assert_eq!(
            serde_json::to_value(response).unwrap(),
            json!({"llmContent": "<untrusted_context>\nOutput: to-stderr\nExit Code: 3\n</untrusted_context>", "returnDisplay": "to-stderr"})
        );
    }
}
