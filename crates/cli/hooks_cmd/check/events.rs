//! The event table of a hook file: events, matcher groups and matchers.

use dsh_hooks_claude::HookEvent;
use dsh_hooks_claude::events::EventSupport;
use dsh_hooks_codex::CodexEvent;
use serde_json::Value;

use super::handlers::check_handler;
use super::{Checker, Kind, Severity, subjects};
use crate::hooks_cmd::nearest;

pub(super) fn walk(c: &mut Checker<'_>, document: &Value) {
    let Some(hooks) = document.get("hooks") else {
        return;
    };
    let Some(hooks) = hooks.as_object() else {
        c.push(
            Severity::Error,
            "not-an-object",
            Some("hooks".into()),
            Some("hooks"),
            "`hooks` must be an object of event names; it is ignored".into(),
        );
        return;
    };
    for (event_name, groups) in hooks {
        if c.kind == Kind::Codex && (event_name == "state" || event_name == "managed_dir") {
            continue;
        }
        let at = format!("hooks.{event_name}");
        c.event_offset = 0;
        c.event_offset = serde_json::to_string(event_name)
            .ok()
            .and_then(|quoted| c.text.find(&quoted))
            .or_else(|| c.text.find(&format!("hooks.{event_name}")))
            .unwrap_or(0);
        let event = check_event(c, event_name, &at);
        let Some(groups) = groups.as_array() else {
            c.push(
                Severity::Error,
                "not-an-array",
                Some(at),
                Some(event_name),
                format!("hooks.{event_name} must be an array of matcher groups; it is ignored"),
            );
            continue;
        };
        for (gi, group) in groups.iter().enumerate() {
            let at = format!("hooks.{event_name}[{gi}]");
            check_group(c, event.as_ref(), event_name, group, &at);
        }
    }
}

/// What the checker knows about an event, whatever the dialect.
pub(super) struct EventInfo {
    pub(super) honours_matcher: bool,
    pub(super) exit2_blocks: bool,
}

pub(super) fn check_event(c: &mut Checker<'_>, name: &str, at: &str) -> Option<EventInfo> {
    match c.kind {
        Kind::Claude => match HookEvent::parse(name) {
            Some(event) => {
                if let EventSupport::NotFired(why) = event.support() {
                    c.push(
                        Severity::Warning,
                        "event-not-fired",
                        Some(at.to_owned()),
                        Some(name),
                        format!("dsh does not fire {name} ({why}); these hooks never run in dsh"),
                    );
                }
                Some(EventInfo {
                    honours_matcher: event.supports_matcher(),
                    exit2_blocks: event.exit2_blocks(),
                })
            }
            None => {
                let suggestion = nearest(name, HookEvent::ALL.iter().map(|e| e.as_str()));
                c.push(
                    Severity::Error,
                    "unknown-event",
                    Some(at.to_owned()),
                    Some(name),
                    format!(
                        "unknown event `{name}`: Claude Code accepts it but never fires it{}",
                        suggestion
                            .map(|s| format!(" (did you mean `{s}`?)"))
                            .unwrap_or_default()
                    ),
                );
                None
            }
        },
        Kind::Codex => match CodexEvent::from_name(name) {
            // dsh fires every Codex event (compaction and subagents included).
            Some(event) => Some(EventInfo {
                honours_matcher: event.honours_matcher(),
                exit2_blocks: event.exit2_blocks(),
            }),
            None => {
                let suggestion = nearest(name, CodexEvent::ALL.iter().map(|e| e.as_str()));
                c.push(
                    Severity::Error,
                    "unknown-event",
                    Some(at.to_owned()),
                    Some(name),
                    format!(
                        "unknown event `{name}`: Codex ignores it, so these hooks never run{}",
                        suggestion
                            .map(|s| format!(" (did you mean `{s}`?)"))
                            .unwrap_or_default()
                    ),
                );
                None
            }
        },
    }
}

pub(super) fn check_group(
    c: &mut Checker<'_>,
    event: Option<&EventInfo>,
    event_name: &str,
    group: &Value,
    at: &str,
) {
    let Some(object) = group.as_object() else {
        c.push(
            Severity::Error,
            "not-an-object",
            Some(at.to_owned()),
            None,
            "a matcher group must be an object with `matcher` and `hooks`".into(),
        );
        return;
    };
    for key in object.keys() {
        if key != "matcher" && key != "hooks" {
            c.push(
                Severity::Warning,
                "unknown-field",
                Some(at.to_owned()),
                Some(key),
                format!(
                    "unknown field `{key}` in a matcher group is ignored{}",
                    nearest(key, ["matcher", "hooks"])
                        .map(|s| format!(" (did you mean `{s}`?)"))
                        .unwrap_or_default()
                ),
            );
        }
    }
    match object.get("matcher") {
        None | Some(Value::Null) => {}
        Some(Value::String(pattern)) => check_matcher(c, event, event_name, pattern, at),
        Some(other) => c.push(
            Severity::Error,
            "invalid-matcher",
            Some(format!("{at}.matcher")),
            None,
            format!("`matcher` must be a string, not {other}; the group is ignored"),
        ),
    }
    match object.get("hooks") {
        Some(Value::Array(handlers)) => {
            for (hi, handler) in handlers.iter().enumerate() {
                check_handler(c, event, handler, &format!("{at}.hooks[{hi}]"));
            }
        }
        _ => c.push(
            Severity::Error,
            "no-hooks",
            Some(at.to_owned()),
            None,
            "the group has no `hooks` array; nothing runs".into(),
        ),
    }
}

pub(super) fn check_matcher(
    c: &mut Checker<'_>,
    event: Option<&EventInfo>,
    event_name: &str,
    pattern: &str,
    at: &str,
) {
    let at = format!("{at}.matcher");
    let error = match c.kind {
        Kind::Claude => dsh_hooks_claude::Matcher::compile(Some(pattern))
            .err()
            .map(|e| e.message),
        Kind::Codex => dsh_hooks_codex::matcher::Matcher::compile(Some(pattern)).err(),
    };
    if let Some(message) = error {
        let consequence = match c.kind {
            Kind::Claude => "dsh refuses to start with it",
            Kind::Codex => "Codex skips the whole group",
        };
        c.push(
            Severity::Error,
            "invalid-regex",
            Some(at),
            Some(pattern),
            format!("matcher {pattern:?} is not a valid regex ({consequence}): {message}"),
        );
        return;
    }
    // Only where the dialect honours the matcher (else `matcher-ignored`).
    if event.is_none_or(|info| info.honours_matcher) {
        subjects::check(c, event_name, pattern, &at);
    }
    if c.kind == Kind::Claude
        && let Some(server) = bare_mcp_server(pattern)
    {
        c.push(
            Severity::Warning,
            "mcp-server-matcher",
            Some(at.clone()),
            Some(pattern),
            format!(
                "matcher {pattern:?} matches no tool: MCP tools are named `mcp__{server}__<tool>` and a plain matcher must equal the whole name (use \"mcp__{server}__.*\")"
            ),
        );
    }
    if let Some(info) = event
        && !info.honours_matcher
        && !pattern.is_empty()
        && pattern != "*"
    {
        c.push(
            Severity::Warning,
            "matcher-ignored",
            Some(at),
            Some(pattern),
            format!("{event_name} ignores matchers: matcher {pattern:?} has no effect, these hooks run every time"),
        );
    }
}

/// The server of a bare `mcp__<server>` alternative in a plain (exact-match)
/// Claude Code matcher: it matches nothing (`mcp_basic`).
pub(super) fn bare_mcp_server(pattern: &str) -> Option<&str> {
    let plain = pattern
        .chars()
        .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '|');
    if !plain {
        return None;
    }
    pattern
        .split('|')
        .filter_map(|alternative| alternative.strip_prefix("mcp__"))
        .find(|server| !server.is_empty() && !server.contains("__"))
}
