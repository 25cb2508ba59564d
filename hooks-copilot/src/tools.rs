//! How dsh's tools look to Copilot hooks: Copilot's native names and
//! argument names (`bash`, `read` ↔ `view {path, view_range}`, `write` ↔
//! `create {path, file_text}`, `edit` ↔ `edit {path, old_str, new_str}`,
//! `glob`, `grep`, `agent` ↔ `task`), and the Claude names PascalCase
//! entries see (`bash→Bash, view→Read, create→Write, edit→Edit,
//! glob→Glob, grep→Grep`; the input keys stay native,
//! cc_pascal_tool_names).

use std::borrow::Cow;

use dsh_hooks::names::{ArgumentNames, ToolNames, copy_keys};
use serde_json::{Map, Value};

use crate::event::Mode;

/// Copilot's native names for dsh's tools.
pub const NATIVE: ToolNames =
    ToolNames(&[("read", "view"), ("write", "create"), ("agent", "task")]);

/// The Claude Code names PascalCase entries see.
pub const CLAUDE: ToolNames = ToolNames(&[
    ("bash", "Bash"),
    ("read", "Read"),
    ("write", "Write"),
    ("edit", "Edit"),
    ("glob", "Glob"),
    ("grep", "Grep"),
    ("agent", "Task"),
]);

/// The native Copilot name of a dsh tool; an MCP tool is
/// `<server>-<tool>`, the name Copilot's model and hooks see (mcp_rec_all),
/// here as read back from dsh's name (see [`named`]).
pub fn native_name(tool: &str) -> Cow<'_, str> {
    named(tool, dsh_seams::mcp_tool_parts(tool))
}

/// The native Copilot name of the dsh tool `tool`, or of the MCP tool
/// whose server and tool names `mcp` gives: `<server>-<tool>`, with the
/// names as they are configured and as the server gives them.
pub fn named<'t>(tool: &'t str, mcp: Option<(&str, &str)>) -> Cow<'t, str> {
    match mcp {
        Some((server, name)) => Cow::Owned(format!("{server}-{name}")),
        None => Cow::Borrowed(NATIVE.dialect_name(tool)),
    }
}

/// The dsh tool a Copilot name (native or Claude) stands for.
pub fn dsh_name(name: &str) -> &str {
    NATIVE.dsh_name(CLAUDE.dsh_name(name))
}

/// The Claude Code name PascalCase payloads carry for a native name.
pub fn claude_name(native: &str) -> &str {
    CLAUDE.dialect_name(NATIVE.dsh_name(native))
}

/// The tool name a payload of `mode` carries (an MCP tool's is
/// `<server>-<tool>` in both, mcp_pascal).
pub fn payload_name(tool: &str, mode: Mode) -> Cow<'_, str> {
    let native = native_name(tool);
    match (mode, native) {
        (Mode::Pascal, Cow::Borrowed(native)) => Cow::Borrowed(claude_name(native)),
        (Mode::Camel | Mode::Pascal, native) => native,
    }
}

/// Whether a tool only reads: Copilot asks no permission for it, so no
/// `permissionRequest` fires (a_file_tools).
pub fn is_read_only(tool: &str) -> bool {
    matches!(tool, "read" | "glob" | "grep")
}

/// The argument names of Copilot's tools (its model's names). dsh's `agent`
/// tool has no `name` argument (Copilot's task label): it is not there to
/// carry.
#[rustfmt::skip]
pub const ARGUMENTS: ArgumentNames = ArgumentNames(&[
    ("bash", &[("command", "command"), ("description", "description")]),
    ("read", &[("file_path", "path")]),
    ("write", &[("file_path", "path"), ("content", "file_text")]),
    ("edit", &[("file_path", "path"), ("old_string", "old_str"), ("new_string", "new_str")]),
    ("agent", &[("description", "description"), ("prompt", "prompt"), ("subagent_type", "agent_type")]),
]);

/// `toolArgs` / `tool_input` for a dsh call: the arguments under Copilot's
/// names, as Copilot's model would have sent them (`read`'s `offset` and
/// `limit` as a `view_range`).
pub fn tool_args(tool: &str, arguments: &Value) -> Value {
    let mut out = Map::new();
    if !ARGUMENTS.rename(tool, true, arguments, &mut out) {
        return arguments.clone();
    }
    if tool == "read" {
        let offset = arguments.get("offset").and_then(Value::as_u64);
        if let Some(limit) = arguments.get("limit").and_then(Value::as_u64) {
            let start = offset.unwrap_or(1);
            let range = vec![start, start + limit.saturating_sub(1)];
            out.insert("view_range".into(), range.into());
        } else if let Some(start) = offset {
            out.insert("view_range".into(), vec![start as i64, -1].into());
        }
    }
    Value::Object(out)
}

/// dsh arguments for Copilot `toolArgs` (a hook's `modifiedArgs`, which
/// replace the arguments wholesale): the reverse of [`tool_args`]. Copilot's
/// tools read a string as JSON text, so one holding an object runs as that
/// object (pre_modified_nonobject call 6); anything else that is not an
/// object is handed on as it is, and sealing rejects the call, as Copilot's
/// tool fails it (`Invalid input: Expected JSON object but got null`).
pub fn arguments_from(tool: &str, args: &Value) -> Value {
    let parsed = args
        .as_str()
        .and_then(|text| serde_json::from_str(text).ok())
        .map(Value::Object);
    let args = parsed.as_ref().unwrap_or(args);
    if !args.is_object() {
        return args.clone();
    }
    let mut out = Map::new();
    if !ARGUMENTS.rename(tool, false, args, &mut out) {
        return args.clone();
    }
    if tool == "read"
        && let Some(range) = args.get("view_range").and_then(Value::as_array)
    {
        let start = range.first().and_then(Value::as_i64).unwrap_or(1);
        out.insert("offset".into(), start.into());
        if let Some(end) = range
            .get(1)
            .and_then(Value::as_i64)
            .filter(|end| *end >= start)
        {
            out.insert("limit".into(), (end - start + 1).into());
        }
    }
    Value::Object(out)
}

/// The keys Copilot's tools were seen to check before they run, in the
/// order Copilot reports them: (dsh tool, key, JSON type, required)
/// (pre_modified_schema, pre_modified_schema_files; an unlisted key is not
/// checked here, dsh's schema check words its failures).
#[rustfmt::skip]
const CHECKED: &[(&str, &str, &str, bool)] = &[
    ("bash", "command", "string", true), ("bash", "description", "string", false),
    ("read", "path", "string", true), ("read", "view_range", "array", false),
    ("write", "path", "string", true), ("write", "file_text", "string", true),
    ("edit", "path", "string", true),
];

/// What Copilot's tool `tool` (dsh's name) says when a hook's replaced
/// arguments `args` (Copilot's names, as the hook wrote them) fail its
/// check: it fails the call before it runs. A string is read as JSON text
/// first (one that is not JSON: `Invalid input: expected value at line 1
/// column 1`); a non-object is `Invalid input: Expected JSON object but got
/// null` (`array`, `number`, `boolean`; pre_modified_null,
/// pre_modified_nonobject); an object's keys are checked as
/// `CHECKED` says: `Invalid input: "command": Required`, `… Expected
/// string, received number`, and for several `Invalid input: Multiple
/// validation errors:` with one `\n- ` line each. `None`: it passes.
pub fn refusal(tool: &str, args: &Value) -> Option<String> {
    let parsed;
    let args = match args.as_str() {
        Some(text) => match serde_json::from_str(text) {
            Ok(value) => {
                parsed = value;
                &parsed
            }
            Err(error) => return Some(format!("Invalid input: {error}")),
        },
        None => args,
    };
    let json_type = dsh_hooks::wire::json_type;
    if !args.is_object() {
        let kind = json_type(args);
        return Some(format!(
            "Invalid input: Expected JSON object but got {kind}"
        ));
    }
    let checked = CHECKED.iter().filter(|(name, ..)| *name == tool);
    let problems: Vec<String> = checked
        .filter_map(|(_, key, kind, required)| match args.get(key) {
            None if *required => Some(format!("\"{key}\": Required")),
            Some(value) if json_type(value) != *kind => Some(format!(
                "\"{key}\": Expected {kind}, received {}",
                json_type(value)
            )),
            _ => None,
        })
        .collect();
    match problems.as_slice() {
        [] => None,
        [one] => Some(format!("Invalid input: {one}")),
        many => Some(format!(
            "Invalid input: Multiple validation errors:\n- {}",
            many.join("\n- ")
        )),
    }
}

/// Whether a call goes through the permission flow (permissionRequest):
/// not for read-only tools (a_file_tools) nor for the `task` tool, whose
/// subagent asks for its own calls (subagent_task).
pub fn asks_permission(tool: &str) -> bool {
    !is_read_only(tool) && tool != "agent"
}

/// `permissionRequest`'s `toolName` and `toolInput`: a permission view, not
/// the arguments (bash → `{command}`; create and edit → `edit` with
/// `{file_path, diff}`; a_file_tools; an MCP tool, `mcp` its server and
/// tool names, is `<server>/<tool>`, mcp_rec_all).
pub fn permission_view(
    tool: &str,
    mcp: Option<(&str, &str)>,
    arguments: &Value,
    diff: Option<&str>,
) -> (String, Value) {
    let mut out = Map::new();
    match tool {
        "bash" => {
            copy_keys(arguments, &mut out, &[("command", "command")]);
            ("bash".to_owned(), Value::Object(out))
        }
        "write" | "edit" => {
            copy_keys(arguments, &mut out, &[("file_path", "file_path")]);
            out.insert("diff".into(), diff.unwrap_or_default().into());
            ("edit".to_owned(), Value::Object(out))
        }
        other => match mcp {
            Some((server, name)) => (format!("{server}/{name}"), arguments.clone()),
            None => (native_name(other).into_owned(), tool_args(other, arguments)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    /// subagent_task: dsh's `agent` is Copilot's `task`, `subagent_type`
    /// its `agent_type`; it asks no permission itself.
    #[test]
    fn the_agent_tool_is_copilots_task() {
        assert_eq!(payload_name("agent", Mode::Camel), "task");
        let agent = json!({"description": "d", "prompt": "p", "subagent_type": "explore"});
        assert_eq!(
            tool_args("agent", &agent).to_string(),
            r#"{"description":"d","prompt":"p","agent_type":"explore"}"#
        );
        assert_eq!(arguments_from("agent", &tool_args("agent", &agent)), agent);
        assert!(!asks_permission("agent"));
        assert!(!asks_permission("read"));
        assert!(asks_permission("bash"));
    }

    /// pre_modified_nonobject, pre_modified_null: a string holding an
    /// object runs as that object; other values stay as they are (and fail
    /// the call at sealing), not an empty object.
    #[test]
    fn modified_args_that_are_not_an_object() {
        let view = json!(r#"{"path": "/p/a.txt"}"#);
        assert_eq!(
            arguments_from("read", &view),
            json!({"file_path": "/p/a.txt"})
        );
        for args in [
            json!(null),
            json!("echo STRING"),
            json!([1]),
            json!(5),
            json!("[1]"),
        ] {
            assert_eq!(arguments_from("bash", &args), args);
        }
        assert_eq!(arguments_from("bash", &json!({})), json!({}));
    }

    /// pre_modified_nonobject, pre_modified_null, pre_modified_invalid_failure:
    /// Copilot's wording for arguments that are not an object.
    #[test]
    fn arguments_that_are_not_an_object_fail_in_copilots_words() {
        let got = |kind: &str| {
            Some(format!(
                "Invalid input: Expected JSON object but got {kind}"
            ))
        };
        let refusal = |args: Value| refusal("bash", &args);
        assert_eq!(refusal(json!(null)), got("null"));
        assert_eq!(refusal(json!([1])), got("array"));
        assert_eq!(refusal(json!(5)), got("number"));
        assert_eq!(refusal(json!(true)), got("boolean"));
        assert_eq!(refusal(json!("[1]")), got("array"));
        assert_eq!(
            refusal(json!("echo STRING")).as_deref(),
            Some("Invalid input: expected value at line 1 column 1")
        );
        assert_eq!(refusal(json!({"command": "ls"})), None);
        assert_eq!(refusal(json!(r#"{"command": "ls"}"#)), None);
    }

    /// pre_modified_schema, pre_modified_schema_files: an object that fails
    /// the tool's schema, in Copilot's words (dsh's tool names).
    #[test]
    fn arguments_that_fail_the_schema_fail_in_copilots_words() {
        let says = |tool: &str, args: Value| refusal(tool, &args).unwrap_or_default();
        assert_eq!(
            says("bash", json!({})),
            r#"Invalid input: "command": Required"#
        );
        assert_eq!(
            says("bash", json!({"command": null, "description": "d"})),
            r#"Invalid input: "command": Expected string, received null"#
        );
        assert_eq!(
            says("bash", json!({"command": 5, "description": 6})),
            "Invalid input: Multiple validation errors:\n\
             - \"command\": Expected string, received number\n\
             - \"description\": Expected string, received number"
        );
        assert_eq!(
            says("write", json!({})),
            "Invalid input: Multiple validation errors:\n\
             - \"path\": Required\n- \"file_text\": Required"
        );
        assert_eq!(
            says("edit", json!({})),
            r#"Invalid input: "path": Required"#
        );
        assert_eq!(
            says("read", json!({"path": "/a", "view_range": "1-2"})),
            r#"Invalid input: "view_range": Expected array, received string"#
        );
        // Passes Copilot's check (description is optional there).
        assert_eq!(says("bash", json!({"command": "ls"})), "");
        assert_eq!(says("mcp__s__t", json!({})), "");
    }

    /// a_file_tools, cc_pascal_tool_names.
    #[test]
    fn dsh_tools_have_copilots_names_and_arguments() {
        assert_eq!(payload_name("read", Mode::Camel), "view");
        // An MCP tool: `<server>-<tool>` in both modes, `<server>/<tool>`
        // in permissionRequest (mcp_rec_all, mcp_pascal).
        assert_eq!(
            payload_name("mcp__oracle__echo_text", Mode::Camel),
            "oracle-echo_text"
        );
        assert_eq!(
            payload_name("mcp__oracle__echo_text", Mode::Pascal),
            "oracle-echo_text"
        );
        let mcp = Some(("oracle", "echo_text"));
        let (name, input) =
            permission_view("mcp__oracle__echo_text", mcp, &json!({"text": "x"}), None);
        assert_eq!(
            (name.as_str(), input),
            ("oracle/echo_text", json!({"text": "x"}))
        );
        assert_eq!(payload_name("read", Mode::Pascal), "Read");
        assert_eq!(payload_name("write", Mode::Pascal), "Write");
        assert_eq!(dsh_name("create"), "write");
        let write = json!({"file_path": "/p/out.txt", "content": "new\n"});
        assert_eq!(
            tool_args("write", &write),
            json!({"path": "/p/out.txt", "file_text": "new\n"})
        );
        assert_eq!(arguments_from("write", &tool_args("write", &write)), write);
        let edit = json!({"file_path": "/p/n", "old_string": "beta", "new_string": "gamma"});
        assert_eq!(
            tool_args("edit", &edit).to_string(),
            r#"{"path":"/p/n","old_str":"beta","new_str":"gamma"}"#
        );
        assert_eq!(
            tool_args("read", &json!({"file_path": "/a", "offset": 3, "limit": 2})),
            json!({"path": "/a", "view_range": [3, 4]})
        );
        assert_eq!(
            arguments_from("read", &json!({"path": "/a", "view_range": [3, 4]})),
            json!({"file_path": "/a", "offset": 3, "limit": 2})
        );
        let (name, view) = permission_view(
            "bash",
            None,
            &json!({"command": "ls", "description": "d"}),
            None,
        );
        assert_eq!((name.as_str(), view), ("bash", json!({"command": "ls"})));
        let (name, view) = permission_view("write", None, &write, Some("DIFF"));
        assert_eq!(
            (name.as_str(), view),
            ("edit", json!({"file_path": "/p/out.txt", "diff": "DIFF"}))
        );
    }
}
