//! `dsh hooks check` for a Claude Code settings file's `permissions` block:
//! every `allow` / `deny` / `ask` entry parsed with `dsh-permissions`' own
//! parser (the one sessions use), `defaultMode` and
//! `additionalDirectories`. Unlike a session, which stops at the first bad
//! entry, the check reports every one, each at `file:line:col` of the
//! character in error with the rule text.

use dsh_permissions::{Behavior, Mode, Rule, RuleSyntaxError};
use serde_json::Value;

use dsh_hooks::lint::{Checker, Severity};

/// 1-based `line:column` of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> String {
    let before = text.get(..offset.min(text.len())).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map_or(1, |tail| tail.chars().count() + 1);
    format!("{line}:{column}")
}

/// Byte offset of the first character of the JSON string `value` (after its
/// quote) in `text`, searching from `from`.
fn string_at(text: &str, value: &str, from: usize) -> Option<usize> {
    let quoted = serde_json::to_string(value).ok()?;
    let start = from.min(text.len());
    text.get(start..)?.find(&quoted).map(|i| start + i + 1)
}

/// Where in the rule string the parser stopped.
fn error_offset(error: &RuleSyntaxError) -> usize {
    match error {
        RuleSyntaxError::Empty => 0,
        RuleSyntaxError::BadToolName { offset, .. }
        | RuleSyntaxError::Unclosed { offset }
        | RuleSyntaxError::EmptyContent { offset }
        | RuleSyntaxError::BadPattern { offset, .. } => *offset,
    }
}

/// Checks `document["permissions"]` of a Claude Code settings file.
pub(super) fn check(c: &mut Checker<'_>, document: &Value) {
    let Some(permissions) = document.get("permissions") else {
        return;
    };
    let text = c.text().to_owned();
    let block_at = string_at(&text, "permissions", 0).unwrap_or(0);
    let key_position = |key: &str| {
        string_at(&text, key, block_at)
            .map(|at| line_col(&text, at.saturating_sub(1)))
            .unwrap_or_else(|| line_col(&text, block_at))
    };
    let Some(permissions) = permissions.as_object() else {
        c.push_at(
            Severity::Error,
            "invalid-permissions",
            Some("permissions".to_owned()),
            Some(key_position("permissions")),
            "`permissions` is not an object: dsh refuses to start with it".to_owned(),
        );
        return;
    };
    for behavior in [Behavior::Allow, Behavior::Deny, Behavior::Ask] {
        let key = behavior.key();
        let Some(list) = permissions.get(key) else {
            continue;
        };
        let at = format!("permissions.{key}");
        let Some(list) = list.as_array() else {
            c.push_at(
                Severity::Error,
                "invalid-permissions",
                Some(at),
                Some(key_position(key)),
                format!("`permissions.{key}` is not a list of rule strings"),
            );
            continue;
        };
        let mut cursor = string_at(&text, key, block_at).unwrap_or(block_at);
        for (index, entry) in list.iter().enumerate() {
            let at = format!("permissions.{key}[{index}]");
            let Some(raw) = entry.as_str() else {
                c.push_at(
                    Severity::Error,
                    "invalid-permission-rule",
                    Some(at),
                    Some(line_col(&text, cursor)),
                    format!("entry {index} of `permissions.{key}` is not a string: {entry}"),
                );
                continue;
            };
            let start = string_at(&text, raw, cursor).unwrap_or(cursor);
            cursor = start;
            if let Err(error) = Rule::parse(raw) {
                // JSON escapes inside the rule could shift the column; the
                // line and the rule text stay right.
                c.push_at(
                    Severity::Error,
                    "invalid-permission-rule",
                    Some(at),
                    Some(line_col(&text, start + error_offset(&error))),
                    format!(
                        "rule {raw:?} in `permissions.{key}`: {error} (dsh refuses to start with it)"
                    ),
                );
            }
        }
    }
    if let Some(mode) = permissions.get("defaultMode") {
        let problem = match mode.as_str().map(str::parse::<Mode>) {
            Some(Ok(_)) => None,
            Some(Err(error)) => Some(error.to_string()),
            None => Some(format!("defaultMode is not a string: {mode}")),
        };
        if let Some(problem) = problem {
            c.push_at(
                Severity::Error,
                "invalid-default-mode",
                Some("permissions.defaultMode".to_owned()),
                Some(key_position("defaultMode")),
                format!("`permissions.defaultMode`: {problem}"),
            );
        }
    }
    if let Some(dirs) = permissions.get("additionalDirectories") {
        let all_strings = dirs
            .as_array()
            .is_some_and(|dirs| dirs.iter().all(Value::is_string));
        if !all_strings {
            c.push_at(
                Severity::Error,
                "invalid-permissions",
                Some("permissions.additionalDirectories".to_owned()),
                Some(key_position("additionalDirectories")),
                "`permissions.additionalDirectories` is not a list of paths".to_owned(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based_lines_and_columns() {
        let text = "{\n  \"a\": [\"Bash(x\"]\n}";
        let at = string_at(text, "Bash(x", 0).unwrap();
        assert_eq!(line_col(text, at), "2:10");
        assert_eq!(line_col(text, 0), "1:1");
    }
}
