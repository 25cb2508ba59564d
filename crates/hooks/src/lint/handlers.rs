//! One hook handler: its fields and its timeout.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::commands::{check_command, check_exit_one, check_transcript_glob};
use super::{Checker, EventInfo, Rules, Severity, nearest};

/// The handler fields every check reads, each leniently: one of another
/// type is absent (and reported as missing where it is required).
#[derive(Debug, Default, Deserialize)]
struct HandlerFields {
    #[serde(rename = "type", default, deserialize_with = "crate::wire::lenient")]
    kind: Option<String>,
    #[serde(default, deserialize_with = "crate::wire::lenient")]
    command: Option<String>,
}

pub(super) fn check_handler(
    c: &mut Checker<'_>,
    rules: &dyn Rules,
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
    let fields = HandlerFields::deserialize(handler).unwrap_or_default();
    let kind = fields.kind.as_deref().unwrap_or("");
    let known: Vec<&str> = match rules.handler_fields(kind) {
        Some(fields) => fields,
        None if kind.is_empty() => {
            c.push(
                Severity::Error,
                "missing-type",
                Some(at.to_owned()),
                None,
                "the handler has no `type` (\"command\"); it is ignored".into(),
            );
            return;
        }
        None if matches!(kind, "prompt" | "agent" | "mcp_tool") => {
            c.push(
                Severity::Warning,
                "unsupported-handler",
                Some(at.to_owned()),
                Some(kind),
                format!("dsh cannot run `{kind}` hooks; this one never runs in dsh"),
            );
            return;
        }
        None => {
            c.push(
                Severity::Error,
                "unknown-handler-type",
                Some(at.to_owned()),
                Some(kind),
                format!(
                    "unknown handler type `{kind}`{}",
                    nearest(kind, ["command", "http"])
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
                rules.tool_name(),
                nearest(&key, known.iter().copied())
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default()
            ),
        );
    }
    rules.check_handler(c, object, at);
    let command = fields.command.as_deref();
    check_timeout(c, object, at, command);
    if kind == "command" {
        match command {
            Some(command) => {
                let exec_form = rules.is_exec_form(object);
                check_command(c, command, exec_form, &format!("{at}.command"));
                if !exec_form && dsh_trust::exec_scan::scan(command, c.project).computed {
                    c.push(
                        Severity::Warning,
                        "computed-command",
                        Some(format!("{at}.command")),
                        Some(command),
                        dsh_trust::COMPUTED_NOTICE.into(),
                    );
                }
                if event.is_some_and(|e| e.exit2_blocks) {
                    check_exit_one(c, command, at);
                }
                if rules.checks_transcript_glob() {
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

fn check_timeout(c: &mut Checker<'_>, object: &Map<String, Value>, at: &str, needle: Option<&str>) {
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
