//! The event table of a hook file: events, matcher groups and matchers.

use serde_json::Value;

use super::handlers::check_handler;
use super::{Checker, EventInfo, Rules, Severity, nearest, subjects};

pub(super) fn walk(c: &mut Checker<'_>, rules: &dyn Rules, document: &Value) {
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
        if rules.skips_event(event_name) {
            continue;
        }
        let at = format!("hooks.{event_name}");
        c.enter_event(event_name);
        let event = rules.event(c, event_name, &at);
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
            check_group(c, rules, event.as_ref(), event_name, group, &at);
        }
    }
}

fn check_group(
    c: &mut Checker<'_>,
    rules: &dyn Rules,
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
        Some(Value::String(pattern)) => check_matcher(c, rules, event, event_name, pattern, at),
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
                check_handler(c, rules, event, handler, &format!("{at}.hooks[{hi}]"));
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

fn check_matcher(
    c: &mut Checker<'_>,
    rules: &dyn Rules,
    event: Option<&EventInfo>,
    event_name: &str,
    pattern: &str,
    at: &str,
) {
    let at = format!("{at}.matcher");
    let error = rules.matcher_error(pattern);
    if let Some(message) = error {
        let consequence = rules.invalid_matcher_consequence();
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
        subjects::check(c, rules, event_name, pattern, &at);
    }
    rules.check_matcher(c, pattern, &at);
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
