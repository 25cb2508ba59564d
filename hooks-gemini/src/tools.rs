//! How dsh's tools look to Gemini hooks: Gemini's names and argument names
//! (`bash` ↔ `run_shell_command`, `read` ↔ `read_file`, `write` ↔
//! `write_file`, `edit` ↔ `replace`, `glob` ↔ `glob`, `grep` ↔
//! `grep_search`), and `tool_response` shaped as Gemini shapes it
//! (`{"llmContent", "returnDisplay", "error"?}`).

use std::path::Path;

use serde_json::{Map, Value, json};

/// The name a dsh tool has in Gemini hook payloads.
pub fn hook_tool_name(tool: &str) -> &str {
    match tool {
        "bash" => "run_shell_command",
        "read" => "read_file",
        "write" => "write_file",
        "edit" => "replace",
        "grep" => "grep_search",
        "bash_output" => "read_background_output",
        other => other,
    }
}

/// The dsh tool a Gemini tool name stands for (the reverse of
/// [`hook_tool_name`]); other names pass through.
pub fn dsh_tool_name(hook_name: &str) -> &str {
    match hook_name {
        "run_shell_command" => "bash",
        "read_file" => "read",
        "write_file" => "write",
        "replace" => "edit",
        "grep_search" => "grep",
        "read_background_output" => "bash_output",
        other => other,
    }
}

fn copy(from: &Value, to: &mut Map<String, Value>, key: &str, as_key: &str) {
    if let Some(value) = from.get(key) {
        to.insert(as_key.to_owned(), value.clone());
    }
}

/// `tool_input` for a dsh call: the arguments under Gemini's names.
pub fn hook_tool_input(tool: &str, arguments: &Value) -> Value {
    let mut out = Map::new();
    match tool {
        "bash" => {
            copy(arguments, &mut out, "command", "command");
            copy(arguments, &mut out, "description", "description");
        }
        "read" => {
            copy(arguments, &mut out, "file_path", "file_path");
            let offset = arguments.get("offset").and_then(Value::as_u64);
            if let Some(offset) = offset {
                out.insert("start_line".into(), offset.into());
            }
            if let Some(limit) = arguments.get("limit").and_then(Value::as_u64) {
                let start = offset.unwrap_or(1);
                out.insert("end_line".into(), (start + limit.saturating_sub(1)).into());
            }
        }
        "write" => {
            copy(arguments, &mut out, "file_path", "file_path");
            copy(arguments, &mut out, "content", "content");
        }
        "edit" => {
            copy(arguments, &mut out, "file_path", "file_path");
            copy(arguments, &mut out, "old_string", "old_string");
            copy(arguments, &mut out, "new_string", "new_string");
            if arguments.get("replace_all").and_then(Value::as_bool) == Some(true) {
                out.insert("allow_multiple".into(), true.into());
            }
        }
        _ => return arguments.clone(),
    }
    Value::Object(out)
}

/// dsh arguments for a Gemini `tool_input` (the model's input with a
/// hook's `tool_input` merged over it): the reverse of [`hook_tool_input`].
/// Arguments Gemini has no name for are kept from `original`.
pub fn arguments_from_tool_input(tool: &str, original: &Value, input: &Value) -> Value {
    let mut out = original.as_object().cloned().unwrap_or_default();
    match tool {
        "bash" => {
            copy(input, &mut out, "command", "command");
            copy(input, &mut out, "description", "description");
        }
        "read" => {
            copy(input, &mut out, "file_path", "file_path");
            let start = input.get("start_line").and_then(Value::as_u64);
            if let Some(start) = start {
                out.insert("offset".into(), start.into());
            }
            if let Some(end) = input.get("end_line").and_then(Value::as_u64) {
                let start = start.unwrap_or(1);
                out.insert("limit".into(), (end.saturating_sub(start) + 1).into());
            }
        }
        "write" => {
            copy(input, &mut out, "file_path", "file_path");
            copy(input, &mut out, "content", "content");
        }
        "edit" => {
            copy(input, &mut out, "file_path", "file_path");
            copy(input, &mut out, "old_string", "old_string");
            copy(input, &mut out, "new_string", "new_string");
            copy(input, &mut out, "allow_multiple", "replace_all");
        }
        _ => return input.clone(),
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

/// `tool_response` for a finished dsh call, in Gemini's shape.
pub fn hook_tool_response(
    tool: &str,
    arguments: &Value,
    cwd: &Path,
    is_error: bool,
    content: &str,
    value: Option<&Value>,
) -> Value {
    let text = |key: &str| {
        value
            .and_then(|value| value.get(key))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    match (tool, value) {
        // Gemini's shell result: the combined output wrapped as untrusted,
        // the exit code when not zero; never an `error` for a failing
        // command. (dsh does not run commands in their own process group
        // the way Gemini reports it, so there is no `Process Group PGID`.)
        ("bash", Some(value)) => {
            let mut output = text("stdout");
            let stderr = text("stderr");
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
            if let Some(code) = value.get("exit_code").and_then(Value::as_i64)
                && code != 0
            {
                llm.push_str(&format!("Exit Code: {code}\n"));
            }
            llm.push_str("</untrusted_context>");
            json!({"llmContent": llm, "returnDisplay": output})
        }
        (_, _) if is_error => json!({
            "llmContent": content,
            "returnDisplay": content,
            "error": {"message": content, "type": "execution_failed"},
        }),
        ("read", Some(_)) => json!({"llmContent": text("content"), "returnDisplay": ""}),
        ("write" | "edit", Some(value)) => {
            let path = arguments
                .get("file_path")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let original = value.get("original_file").and_then(Value::as_str);
            let new_content = match tool {
                "write" => text("content"),
                _ => fs_err::read_to_string(absolute(path, cwd)).unwrap_or_default(),
            };
            json!({
                "llmContent": content,
                "returnDisplay": {
                    "fileName": file_name(path),
                    "filePath": absolute(path, cwd),
                    "originalContent": original.unwrap_or_default(),
                    "newContent": new_content,
                    "isNewFile": original.is_none() && tool == "write",
                },
            })
        }
        (_, _) => json!({"llmContent": content, "returnDisplay": content}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

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

    /// `a_file_tools`: a failing shell command has no `error`, only its exit
    /// code in the wrapped output.
    #[test]
    fn a_failing_shell_command_reports_its_exit_code_not_an_error() {
        let value = json!({"stdout": "", "stderr": "to-stderr", "exit_code": 3, "interrupted": false, "timed_out": false});
        let response =
            hook_tool_response("bash", &json!({}), Path::new("/p"), true, "x", Some(&value));
        assert_eq!(
            response,
            json!({"llmContent": "<untrusted_context>\nOutput: to-stderr\nExit Code: 3\n</untrusted_context>", "returnDisplay": "to-stderr"})
        );
    }
}
