//! One hook handler: its fields and its timeout.

use serde_json::{Map, Value};

use super::commands::{check_command, check_exit_one, check_transcript_glob};
use super::events::EventInfo;
use super::{Checker, Kind, Severity};
use crate::hooks_cmd::nearest;

pub(super) const CLAUDE_COMMON_FIELDS: &[&str] =
    &["type", "timeout", "if", "statusMessage", "once"];
pub(super) const CLAUDE_COMMAND_FIELDS: &[&str] =
    &["command", "args", "shell", "async", "asyncRewake"];
pub(super) const CLAUDE_HTTP_FIELDS: &[&str] = &["url", "headers", "allowedEnvVars"];
pub(super) const CODEX_COMMAND_FIELDS: &[&str] = &[
    "type",
    "command",
    "commandWindows",
    "command_windows",
    "timeout",
    "async",
    "statusMessage",
    "additionalContextLimit",
];

pub(super) fn check_handler(
    c: &mut Checker<'_>,
    event: Option<&EventInfo>,
    handler: &Value,
    at: &str,
) {
    let Some(object) = handler.as_object() else {
        c.push(
            Severity::Error,
            "not-an-object",
            Some(at.to_owned()),
            None,
            "a hook handler must be an object".into(),
        );
        return;
    };
    let kind = object.get("type").and_then(Value::as_str).unwrap_or("");
    let known: Vec<&str> = match (c.kind, kind) {
        (Kind::Claude, "command") => [CLAUDE_COMMON_FIELDS, CLAUDE_COMMAND_FIELDS].concat(),
        (Kind::Claude, "http") => [CLAUDE_COMMON_FIELDS, CLAUDE_HTTP_FIELDS].concat(),
        (Kind::Codex, "command") => CODEX_COMMAND_FIELDS.to_vec(),
        (_, "") => {
            c.push(
                Severity::Error,
                "missing-type",
                Some(at.to_owned()),
                None,
                "the handler has no `type` (\"command\"); it is ignored".into(),
            );
            return;
        }
        (Kind::Claude, "prompt" | "agent" | "mcp_tool")
        | (Kind::Codex, "prompt" | "agent" | "mcp_tool") => {
            c.push(
                Severity::Warning,
                "unsupported-handler",
                Some(at.to_owned()),
                Some(kind),
                format!("dsh cannot run `{kind}` hooks; this one never runs in dsh"),
            );
            return;
        }
        (_, other) => {
            c.push(
                Severity::Error,
                "unknown-handler-type",
                Some(at.to_owned()),
                Some(other),
                format!(
                    "unknown handler type `{other}`{}",
                    nearest(other, ["command", "http"])
                        .map(|s| format!(" (did you mean `{s}`?)"))
                        .unwrap_or_default()
                ),
            );
            return;
        }
    };
    let unknown: Vec<String> = object
        .keys()
        .filter(|key| !known.contains(&key.as_str()))
        .cloned()
        .collect();
    for key in unknown {
        c.push(
            Severity::Warning,
            "unknown-field",
            Some(at.to_owned()),
            Some(&key),
            format!(
                "field `{key}` is not a {} hook field; it is ignored{}",
                match c.kind {
                    Kind::Claude => "Claude Code",
                    Kind::Codex => "Codex",
                },
                nearest(&key, known.iter().copied())
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default()
            ),
        );
    }
    if c.kind == Kind::Claude && object.get("shell").and_then(Value::as_str) == Some("powershell") {
        c.push(
            Severity::Warning,
            "unsupported-handler",
            Some(format!("{at}.shell")),
            None,
            "dsh cannot run `shell: \"powershell\"` hooks; this one never runs in dsh".into(),
        );
    }
    check_timeout(c, object, at, object.get("command").and_then(Value::as_str));
    if kind == "command" {
        match object.get("command").and_then(Value::as_str) {
            Some(command) => {
                let exec_form =
                    c.kind == Kind::Claude && object.get("args").is_some_and(Value::is_array);
                check_command(c, command, exec_form, at);
                if !exec_form && crate::exec_scan::scan(command, c.project).computed {
                    c.push(
                        Severity::Warning,
                        "computed-command",
                        Some(format!("{at}.command")),
                        Some(command),
                        crate::trust::COMPUTED_NOTICE.into(),
                    );
                }
                if event.is_some_and(|e| e.exit2_blocks) {
                    check_exit_one(c, command, at);
                }
                if c.kind == Kind::Claude {
                    check_transcript_glob(c, command, at);
                }
            }
            None => c.push(
                Severity::Error,
                "missing-command",
                Some(at.to_owned()),
                None,
                "the command handler has no `command` string; it is ignored".into(),
            ),
        }
    }
}

pub(super) fn check_timeout(
    c: &mut Checker<'_>,
    object: &Map<String, Value>,
    at: &str,
    needle: Option<&str>,
) {
    let Some(value) = object.get("timeout") else {
        return;
    };
    let at = format!("{at}.timeout");
    match value.as_f64() {
        // The dialect loaders refuse such a file (no deadline can hold it).
        Some(secs) if secs > 0.0 && std::time::Duration::try_from_secs_f64(secs).is_err() => c
            .push(
                Severity::Error,
                "invalid-timeout",
                Some(at),
                needle,
                format!("timeout {value} is more than a deadline can hold; dsh refuses this file"),
            ),
        Some(secs) if secs >= 1000.0 => c.push(
            Severity::Warning,
            "timeout-milliseconds",
            Some(at),
            needle,
            format!(
                "timeout {value} is in seconds ({:.0} minutes); did you mean {} (milliseconds → seconds)?",
                secs / 60.0,
                secs / 1000.0
            ),
        ),
        Some(secs) if secs > 0.0 => {}
        _ => c.push(
            Severity::Error,
            "invalid-timeout",
            Some(at),
            needle,
            format!("timeout must be a positive number of seconds, not {value}"),
        ),
    }
}
