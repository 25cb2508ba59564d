//! How dsh's tools look to Codex hooks (`core/src/tools/hook_names.rs`).
//!
//! * `bash` → `Bash`, `tool_input: {"command": …}` only, `tool_response` the
//!   plain combined stdout + stderr string, each non-empty stream ending in a
//!   newline (dsh's bash value has trailing newlines trimmed; Codex sends the
//!   raw output, e.g. `"hi\n"`).
//! * `write` and `edit` → `apply_patch`, the change expressed as a Codex patch
//!   in `tool_input.command` (`*** Begin Patch` … `*** End Patch\n`). A
//!   `write` of a new file is an `*** Add File:`; of an existing file, and
//!   every `edit`, an `*** Update File:` with one `@@` hunk removing the old
//!   lines and adding the new ones (dsh does not compute context lines;
//!   `replace_all` is not expressible in a patch and is not shown).
//! * `read`, `glob`, `grep` keep their dsh names and arguments (Codex has no
//!   such tools); `tool_response` is the model-facing content.
//! * MCP tools keep their `mcp__<server>__<tool>` name and arguments; the
//!   `tool_response` is the whole MCP result object, camelCase
//!   (`{"content":[…],"structuredContent":…,"isError":false}`, `mcp_basic`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::lenient::lenient;
use serde_json::{Value, json};

/// The name a dsh tool has in Codex hook payloads.
pub fn hook_tool_name(tool: &str) -> &str {
    match tool {
        "bash" => "Bash",
        "write" | "edit" => "apply_patch",
        other => other,
    }
}

/// What a Codex hook tool name is in dsh: the reverse of [`hook_tool_name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DshTool<'a> {
    /// This dsh tool.
    Tool(&'a str),
    /// `apply_patch`: dsh's `write` or `edit`; the name alone cannot say which.
    WriteOrEdit,
}

/// dsh's tool for a Codex hook tool name (`Bash`, and Codex's own names for
/// its shell tool, are `bash`); other names pass through.
pub fn dsh_tool(hook_name: &str) -> DshTool<'_> {
    match hook_name {
        "Bash" | "shell" | "exec_command" => DshTool::Tool("bash"),
        "apply_patch" => DshTool::WriteOrEdit,
        other => DshTool::Tool(other),
    }
}

fn display_path(file_path: &str, cwd: &Path) -> String {
    let path = Path::new(file_path);
    match path.strip_prefix(cwd) {
        Ok(relative) if !relative.as_os_str().is_empty() => relative.display().to_string(),
        _ => file_path.to_owned(),
    }
}

fn lines(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    let text = text.strip_suffix('\n').unwrap_or(text);
    text.split('\n').collect()
}

/// Renders an Add File patch (`write` of a new file).
pub fn add_file_patch(path: &str, content: &str) -> String {
    let mut patch = format!("*** Begin Patch\n*** Add File: {path}\n");
    for line in lines(content) {
        patch.push('+');
        patch.push_str(line);
        patch.push('\n');
    }
    patch.push_str("*** End Patch\n");
    patch
}

/// Renders an Update File patch with one hunk replacing `old` by `new`.
pub fn update_file_patch(path: &str, old: &str, new: &str) -> String {
    let mut patch = format!("*** Begin Patch\n*** Update File: {path}\n@@\n");
    for line in lines(old) {
        patch.push('-');
        patch.push_str(line);
        patch.push('\n');
    }
    for line in lines(new) {
        patch.push('+');
        patch.push_str(line);
        patch.push('\n');
    }
    patch.push_str("*** End Patch\n");
    patch
}

/// The fields of dsh's `bash`, `write` and `edit` arguments (and of their
/// values) that Codex hooks are shown; any other field is not read.
#[derive(Debug, Default, Deserialize)]
struct Fields {
    #[serde(default, deserialize_with = "lenient")]
    command: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    description: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    file_path: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    content: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    old_string: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    new_string: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    stdout: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    stderr: Option<String>,
    #[serde(default, rename = "type", deserialize_with = "lenient")]
    kind: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    original_file: Option<String>,
}

impl Fields {
    /// The fields of `json`; nothing when it is not an object.
    fn of(json: &Value) -> Self {
        Fields::deserialize(json).unwrap_or_default()
    }
}

fn text(field: &Option<String>) -> &str {
    field.as_deref().unwrap_or_default()
}

/// The file a `write` call replaces (its `file_path`), when the call is one.
pub fn write_target(tool: &str, arguments: &Value) -> Option<String> {
    (tool == "write").then(|| Fields::of(arguments).file_path)?
}

/// The original content a `write` value kept (`original_file`).
pub fn original_file(value: &Value) -> Option<String> {
    Fields::of(value).original_file
}

/// The `tool_input` a Codex hook sees.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum HookToolInput {
    /// `Bash` and `apply_patch`: the command or the patch; a shell call's
    /// `PermissionRequest` adds the model's `description`.
    Command {
        /// The shell command, or the patch.
        command: String,
        /// The model's description of a shell call (Codex: its justification).
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    /// Any other tool: its dsh arguments, as the model gave them.
    Arguments(Value),
}

impl HookToolInput {
    /// The `command` hooks see, when the input has a string one.
    pub fn command(&self) -> Option<&str> {
        match self {
            HookToolInput::Command { command, .. } => Some(command),
            HookToolInput::Arguments(arguments) => arguments.get("command")?.as_str(),
        }
    }

    fn command_only(command: String) -> Self {
        HookToolInput::Command {
            command,
            description: None,
        }
    }
}

/// The `tool_response` a `PostToolUse` hook sees.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum HookToolResponse {
    /// Shell output, a patch's report, or the model-facing content.
    Text(String),
    /// An MCP tool's whole result object, camelCase.
    McpResult(Value),
}

/// The `tool_input` a Codex hook sees for a dsh call. `existing_file` is the
/// current content of a `write` target (`None` when it does not exist yet).
pub fn hook_tool_input(
    tool: &str,
    arguments: &Value,
    cwd: &Path,
    existing_file: Option<&str>,
) -> HookToolInput {
    let fields = || Fields::of(arguments);
    match tool {
        "bash" => HookToolInput::command_only(fields().command.unwrap_or_default()),
        "write" => {
            let fields = fields();
            let path = display_path(text(&fields.file_path), cwd);
            let content = text(&fields.content);
            let patch = match existing_file {
                None => add_file_patch(&path, content),
                Some(original) => update_file_patch(&path, original, content),
            };
            HookToolInput::command_only(patch)
        }
        "edit" => {
            let fields = fields();
            let path = display_path(text(&fields.file_path), cwd);
            let patch =
                update_file_patch(&path, text(&fields.old_string), text(&fields.new_string));
            HookToolInput::command_only(patch)
        }
        _ => HookToolInput::Arguments(arguments.clone()),
    }
}

/// The `tool_input` of a `PermissionRequest`: shell calls carry the model's
/// `description` (Codex: its justification); patches lose their final newline.
pub fn permission_tool_input(
    pre_tool_input: &HookToolInput,
    tool: &str,
    arguments: &Value,
) -> HookToolInput {
    match tool {
        "bash" => {
            let fields = Fields::of(arguments);
            HookToolInput::Command {
                command: fields.command.unwrap_or_default(),
                description: fields.description,
            }
        }
        "write" | "edit" => {
            let patch = pre_tool_input.command().unwrap_or_default();
            HookToolInput::command_only(patch.strip_suffix('\n').unwrap_or(patch).to_owned())
        }
        _ => pre_tool_input.clone(),
    }
}

/// The `tool_response` a PostToolUse hook sees.
pub fn hook_tool_response(
    tool: &str,
    arguments: &Value,
    cwd: &Path,
    is_error: bool,
    content: &str,
    value: Option<&Value>,
    duration: Duration,
) -> HookToolResponse {
    let text_response = |text: String| HookToolResponse::Text(text);
    match tool {
        "bash" => match value.map(Fields::of) {
            Some(value) => {
                // dsh's bash tool trims trailing newlines from its value
                // (Claude Code's shape); Codex shows the raw output, which
                // for line-oriented output ends each stream with a newline.
                let mut response = String::new();
                for stream in [&value.stdout, &value.stderr] {
                    let stream = text(stream);
                    response.push_str(stream);
                    if !stream.is_empty() && !stream.ends_with('\n') {
                        response.push('\n');
                    }
                }
                text_response(response)
            }
            None => text_response(content.to_owned()),
        },
        "write" | "edit" => {
            let secs = duration.as_secs();
            if is_error {
                return text_response(format!(
                    "Exit code: 1\nWall time: {secs} seconds\nOutput:\n{content}\n"
                ));
            }
            let letter = match value.and_then(|value| Fields::of(value).kind).as_deref() {
                Some("create") => "A",
                _ if tool == "write" && value.is_none() => "A",
                _ => "M",
            };
            let path = display_path(text(&Fields::of(arguments).file_path), cwd);
            text_response(format!(
                "Exit code: 0\nWall time: {secs} seconds\nOutput:\nSuccess. Updated the following files:\n{letter} {path}\n"
            ))
        }
        mcp if mcp.starts_with("mcp__") => match value {
            Some(result) => HookToolResponse::McpResult(result.clone()),
            None => text_response(content.to_owned()),
        },
        _ => text_response(content.to_owned()),
    }
}

/// Why a hook's `updatedInput` cannot be applied.
pub const UPDATED_INPUT_NO_COMMAND: &str =
    "hook returned updatedInput without string field `command`";

/// Turns a PreToolUse `updatedInput` (Codex's shape) back into dsh arguments.
pub fn arguments_from_updated_input(
    tool: &str,
    original: &Value,
    updated: &Value,
    cwd: &Path,
) -> Result<Value, String> {
    match tool {
        "bash" => {
            let command = Fields::of(updated)
                .command
                .ok_or_else(|| UPDATED_INPUT_NO_COMMAND.to_owned())?;
            let mut arguments = original.clone();
            match arguments.as_object_mut() {
                Some(map) => {
                    map.insert("command".into(), command.into());
                }
                None => arguments = json!({ "command": command }),
            }
            Ok(arguments)
        }
        "write" | "edit" => {
            let patch = Fields::of(updated)
                .command
                .ok_or_else(|| UPDATED_INPUT_NO_COMMAND.to_owned())?;
            let arguments = patch_to_arguments(tool, &patch, cwd)?;
            serde_json::to_value(arguments).map_err(|error| error.to_string())
        }
        _ => {
            if updated.is_object() {
                Ok(updated.clone())
            } else {
                Err("hook returned updatedInput that is not an object".into())
            }
        }
    }
}

fn resolve(path: &str, cwd: &Path) -> String {
    let path = PathBuf::from(path);
    if path.is_absolute() {
        path.display().to_string()
    } else {
        cwd.join(path).display().to_string()
    }
}

/// The `write` or `edit` arguments a one-file patch stands for (key order
/// as dsh's tools declare them).
#[derive(Debug, PartialEq, Serialize)]
#[serde(untagged)]
enum PatchArguments {
    /// `*** Add File`: the whole new content.
    Write { file_path: String, content: String },
    /// `*** Update File` with one hunk: the text it replaces and its replacement.
    Edit {
        file_path: String,
        old_string: String,
        new_string: String,
    },
}

/// Parses a one-file patch back into `write`/`edit` arguments.
fn patch_to_arguments(tool: &str, patch: &str, cwd: &Path) -> Result<PatchArguments, String> {
    let unsupported = || {
        format!(
            "dsh can only run a rewritten apply_patch as `{tool}`: one `*** {}` section",
            if tool == "write" {
                "Add File"
            } else {
                "Update File` with one `@@` hunk"
            }
        )
    };
    let body: Vec<&str> = patch.trim_end_matches('\n').split('\n').collect();
    let (Some(first), Some(last)) = (body.first(), body.last()) else {
        return Err(unsupported());
    };
    if first.trim() != "*** Begin Patch" || last.trim() != "*** End Patch" || body.len() < 3 {
        return Err(unsupported());
    }
    let inner = &body[1..body.len() - 1];
    let header = inner.first().copied().unwrap_or_default();
    let rest = inner.get(1..).unwrap_or_default();
    if rest.iter().any(|line| line.starts_with("*** ")) {
        return Err(unsupported());
    }
    let joined = |prefixes: &[char]| {
        let mut text = String::new();
        for line in rest {
            if let Some(first) = line.chars().next()
                && prefixes.contains(&first)
            {
                text.push_str(&line[first.len_utf8()..]);
                text.push('\n');
            }
        }
        text
    };
    match (tool, header) {
        ("write", header) if header.starts_with("*** Add File: ") => {
            let path = resolve(&header["*** Add File: ".len()..], cwd);
            Ok(PatchArguments::Write {
                file_path: path,
                content: joined(&['+']),
            })
        }
        ("edit", header) if header.starts_with("*** Update File: ") => {
            if rest.iter().filter(|line| line.starts_with("@@")).count() > 1 {
                return Err(unsupported());
            }
            let path = resolve(&header["*** Update File: ".len()..], cwd);
            let old = joined(&['-', ' ']);
            let new = joined(&['+', ' ']);
            Ok(PatchArguments::Edit {
                file_path: path,
                old_string: old.strip_suffix('\n').unwrap_or(&old).to_owned(),
                new_string: new.strip_suffix('\n').unwrap_or(&new).to_owned(),
            })
        }
        _ => Err(unsupported()),
    }
}

#[cfg(test)]
mod tool_name_tests {
    use super::{DshTool, dsh_tool, hook_tool_name};

    #[test]
    fn hook_tool_names_map_back_to_dsh_tools() {
        for tool in ["bash", "read", "glob", "grep", "mcp__x__y"] {
            assert_eq!(dsh_tool(hook_tool_name(tool)), DshTool::Tool(tool));
        }
        for tool in ["write", "edit"] {
            assert_eq!(dsh_tool(hook_tool_name(tool)), DshTool::WriteOrEdit);
        }
    }
}

#[cfg(test)]
mod mcp_tests {
    use super::*;

    #[test]
    fn a_field_of_another_type_reads_as_absent() {
        let args = json!({"command": "ls", "description": 5});
        let pre = hook_tool_input("bash", &args, Path::new("/p"), None);
        assert_eq!(
            serde_json::to_string(&permission_tool_input(&pre, "bash", &args))
                .ok()
                .as_deref(),
            Some(r#"{"command":"ls"}"#)
        );
        let value = json!({"stdout": 1, "stderr": "err"});
        assert_eq!(
            hook_tool_response(
                "bash",
                &args,
                Path::new("/p"),
                true,
                "x",
                Some(&value),
                Duration::ZERO
            ),
            HookToolResponse::Text("err\n".into())
        );
    }

    #[test]
    fn mcp_tools_keep_their_name_and_show_the_whole_result() {
        assert_eq!(hook_tool_name("mcp__echo__echo"), "mcp__echo__echo");
        let result = json!({"content":[{"type":"text","text":"ECHO: hello"}],"structuredContent":{"result":"ECHO: hello"},"isError":false});
        let response = hook_tool_response(
            "mcp__echo__echo",
            &json!({"text":"hello"}),
            Path::new("/p"),
            false,
            "{\"result\":\"ECHO: hello\"}",
            Some(&result),
            Duration::from_millis(3),
        );
        assert!(matches!(response, HookToolResponse::McpResult(_)));
        assert_eq!(
            serde_json::to_string(&response).ok().as_deref(),
            Some(
                r#"{"content":[{"type":"text","text":"ECHO: hello"}],"structuredContent":{"result":"ECHO: hello"},"isError":false}"#
            )
        );
        assert_eq!(
            arguments_from_updated_input(
                "mcp__echo__echo",
                &json!({"text":"hello"}),
                &json!({"text":"REWRITTEN"}),
                Path::new("/p")
            ),
            Ok(json!({"text":"REWRITTEN"}))
        );
    }

    #[test]
    fn a_blocked_mcp_call_names_the_tool() {
        assert_eq!(
            crate::plugin::pre_tool_block_text_for(
                Some("mcp__echo__echo"),
                "MCP-DENY",
                &HookToolInput::Arguments(json!({"text":"hello"}))
            ),
            "Tool call blocked by PreToolUse hook: MCP-DENY. Tool: mcp__echo__echo"
        );
        assert_eq!(
            crate::plugin::pre_tool_block_text_for(
                Some("bash"),
                "no",
                &HookToolInput::command_only("ls".into())
            ),
            "Command blocked by PreToolUse hook: no. Command: ls"
        );
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod patch_tests {
    use super::*;

    #[test]
    fn a_rewritten_patch_becomes_typed_arguments_in_the_tools_key_order() {
        let cwd = Path::new("/p");
        let edit = "*** Begin Patch\n*** Update File: a\n@@\n-o\n+n\n*** End Patch\n";
        let arguments =
            arguments_from_updated_input("edit", &json!({}), &json!({"command": edit}), cwd);
        assert_eq!(
            serde_json::to_string(&arguments.unwrap()).unwrap(),
            r#"{"file_path":"/p/a","old_string":"o","new_string":"n"}"#
        );
        let write = "*** Begin Patch\n*** Add File: b\n+x\n*** End Patch";
        assert_eq!(
            patch_to_arguments("write", write, cwd).unwrap(),
            PatchArguments::Write {
                file_path: "/p/b".into(),
                content: "x\n".into()
            }
        );
        assert!(patch_to_arguments("edit", write, cwd).is_err());
    }
}
