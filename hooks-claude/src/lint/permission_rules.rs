//! `dsh hooks check` for a Claude Code settings file's `permissions` block:
//! every `allow` / `deny` / `ask` entry parsed with `dsh-permissions`' own
//! parser (the one sessions use), `defaultMode` and
//! `additionalDirectories`. Unlike a session, which stops at the first bad
//! entry, the check reports every one, each at `file:line:col` of the
//! character in error with the rule text.

use dsh_permissions::{Behavior, Mode, Rule, RuleSyntaxError};
use serde::Deserialize;

use dsh_hooks::lint::{Checker, Severity};

use crate::output::wire::{Field, WireType};

/// A settings file's `permissions` block as the check reads it: each key
/// lenient, so a key of the wrong type is reported with its JSON text.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct PermissionsWire {
    allow: Field<Vec<Field<String>>>,
    deny: Field<Vec<Field<String>>>,
    ask: Field<Vec<Field<String>>>,
    default_mode: Field<String>,
    additional_directories: Field<Vec<Field<String>>>,
}

impl WireType for PermissionsWire {
    const JSON: Option<&'static str> = Some("object");
}

/// The part of a settings document the check reads.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(super) struct PermissionsDocument {
    permissions: Field<PermissionsWire>,
}

impl WireType for PermissionsDocument {
    const JSON: Option<&'static str> = Some("object");
}

impl PermissionsWire {
    /// The rule list of `behavior`.
    fn rules(&self, behavior: Behavior) -> &Field<Vec<Field<String>>> {
        match behavior {
            Behavior::Allow => &self.allow,
            Behavior::Deny => &self.deny,
            Behavior::Ask => &self.ask,
        }
    }
}

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

/// Checks the `permissions` block of a Claude Code settings file.
pub(super) fn check(c: &mut Checker<'_>, document: &PermissionsDocument) {
    let permissions = &document.permissions;
    if matches!(permissions, Field::Absent) {
        return;
    }
    let text = c.text().to_owned();
    let block_at = string_at(&text, "permissions", 0).unwrap_or(0);
    let key_position = |key: &str| {
        string_at(&text, key, block_at)
            .map(|at| line_col(&text, at.saturating_sub(1)))
            .unwrap_or_else(|| line_col(&text, block_at))
    };
    let Some(permissions) = permissions.valid() else {
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
        let list = permissions.rules(behavior);
        if matches!(list, Field::Absent) {
            continue;
        }
        let at = format!("permissions.{key}");
        let Some(list) = list.valid() else {
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
                let entry = entry.written().unwrap_or_default();
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
    let mode = &permissions.default_mode;
    if !matches!(mode, Field::Absent) {
        let problem = match mode.as_str().map(str::parse::<Mode>) {
            Some(Ok(_)) => None,
            Some(Err(error)) => Some(error.to_string()),
            None => Some(format!(
                "defaultMode is not a string: {}",
                mode.written().unwrap_or_default()
            )),
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
    let dirs = &permissions.additional_directories;
    if !matches!(dirs, Field::Absent) {
        let all_strings = dirs
            .valid()
            .is_some_and(|dirs| dirs.iter().all(|dir| dir.as_str().is_some()));
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
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The findings (code and message) of checking `text`.
    fn findings(text: &str) -> Vec<String> {
        let document: serde_json::Value = serde_json::from_str(text).unwrap();
        let mut checker = Checker::new(Path::new("/s.json"), text.to_owned(), Path::new("/"));
        let read: Field<PermissionsDocument> = Field::read(&document);
        check(&mut checker, &read.into_valid().unwrap_or_default());
        checker
            .finish()
            .into_iter()
            .map(|f| format!("{} {}", f.code, f.message))
            .collect()
    }

    /// Keys and entries of the wrong type are each reported (with the
    /// value's JSON text where the message quotes it); the rest is checked.
    #[test]
    fn wrong_types_are_reported_one_by_one() {
        let found = findings(
            r#"{"permissions": {"allow": ["Read", 3, {"a": [true]}, "Bash(x"], "deny": "Bash",
                "ask": null, "defaultMode": 5, "additionalDirectories": ["/a", 1]}}"#,
        );
        assert_eq!(
            found,
            [
                "invalid-permission-rule entry 1 of `permissions.allow` is not a string: 3",
                r#"invalid-permission-rule entry 2 of `permissions.allow` is not a string: {"a":[true]}"#,
                "invalid-permission-rule rule \"Bash(x\" in `permissions.allow`: unclosed `(` at offset 4: a rule with content ends with `)` (dsh refuses to start with it)",
                "invalid-permissions `permissions.deny` is not a list of rule strings",
                "invalid-permissions `permissions.ask` is not a list of rule strings",
                "invalid-default-mode `permissions.defaultMode`: defaultMode is not a string: 5",
                "invalid-permissions `permissions.additionalDirectories` is not a list of paths",
            ]
        );
        assert_eq!(
            findings(r#"{"permissions": [1]}"#),
            ["invalid-permissions `permissions` is not an object: dsh refuses to start with it"]
        );
        assert_eq!(
            findings(r#"{"permissions": {"allow": [], "additionalDirectories": []}}"#),
            Vec::<String>::new()
        );
        assert_eq!(findings("[1]"), Vec::<String>::new());
    }

    #[test]
    fn positions_are_one_based_lines_and_columns() {
        let text = "{\n  \"a\": [\"Bash(x\"]\n}";
        let at = string_at(text, "Bash(x", 0).unwrap();
        assert_eq!(line_col(text, at), "2:10");
        assert_eq!(line_col(text, 0), "1:1");
    }
}
