//! One settings layer's `permissions` block, parsed with file:line:col
//! errors.

use std::path::PathBuf;

use crate::mode::Mode;
pub use crate::rule::Behavior;
use crate::rule::{Rule, RuleSyntaxError};

/// Where a rule came from, highest precedence first for `defaultMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    /// Managed policy settings.
    Policy,
    /// Command-line flags (`--allowedTools`, `--permission-mode`, …).
    CliArg,
    /// `.claude/settings.local.json`.
    Local,
    /// `.claude/settings.json`.
    Project,
    /// `~/.claude/settings.json`.
    User,
    /// Added during the session (a PermissionRequest's `updatedPermissions`
    /// with destination `session`, or "allow for this session").
    Session,
}

impl Source {
    /// The name `hooks list` shows and `updatedPermissions` uses.
    pub fn name(self) -> &'static str {
        match self {
            Source::Policy => "policySettings",
            Source::CliArg => "cliArg",
            Source::Local => "localSettings",
            Source::Project => "projectSettings",
            Source::User => "userSettings",
            Source::Session => "session",
        }
    }

    /// Project-scoped layers lose their `allow` rules in an untrusted workspace.
    pub fn is_project_scoped(self) -> bool {
        matches!(self, Source::Project | Source::Local)
    }
}

/// A rule with its behaviour and provenance.
#[derive(Debug, Clone)]
pub struct SourcedRule {
    /// The rule.
    pub rule: Rule,
    /// What it does.
    pub behavior: Behavior,
    /// Which layer.
    pub source: Source,
    /// The file (or flag) it was read from.
    pub origin: String,
}

/// One layer's permissions.
#[derive(Debug, Clone)]
pub struct Layer {
    /// Which layer this is.
    pub source: Source,
    /// Its file or flag.
    pub origin: String,
    /// Its rules in file order.
    pub rules: Vec<SourcedRule>,
    /// `permissions.defaultMode`.
    pub default_mode: Option<Mode>,
    /// `permissions.additionalDirectories`, as written.
    pub additional_directories: Vec<PathBuf>,
}

/// A settings file whose `permissions` block is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayerError {
    /// Not JSON at all.
    #[error("{origin}:{line}:{column}: {message}")]
    Json {
        /// The file.
        origin: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// serde_json's explanation.
        message: String,
    },
    /// A key has the wrong type.
    #[error("{origin}:{line}:{column}: `permissions.{key}` {message}")]
    Shape {
        /// The file.
        origin: String,
        /// 1-based line of the key.
        line: usize,
        /// 1-based column of the key.
        column: usize,
        /// Which key.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A rule that does not parse.
    #[error("{origin}:{line}:{column}: rule {rule:?} in `permissions.{key}`: {error}")]
    Rule {
        /// The file.
        origin: String,
        /// 1-based line of the rule's character in error.
        line: usize,
        /// 1-based column of it.
        column: usize,
        /// `allow`, `deny` or `ask`.
        key: String,
        /// The rule as written.
        rule: String,
        /// Why.
        error: RuleSyntaxError,
    },
}

/// 1-based line and column of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rfind('\n')
        .map_or(before.len(), |i| before.len() - i - 1)
        + 1;
    (line, column)
}

/// Where a JSON string with this value is written in `text`, searching
/// from `from`: the byte offset of its first character after the quote.
fn locate_string(text: &str, value: &str, from: usize) -> Option<usize> {
    let encoded = serde_json::to_string(value).ok()?;
    let start = from.min(text.len());
    text.get(start..)?.find(&encoded).map(|i| start + i + 1)
}

fn error_offset(e: &RuleSyntaxError) -> usize {
    match e {
        RuleSyntaxError::Empty => 0,
        RuleSyntaxError::BadToolName { offset, .. }
        | RuleSyntaxError::Unclosed { offset }
        | RuleSyntaxError::EmptyContent { offset }
        | RuleSyntaxError::BadPattern { offset, .. } => *offset,
    }
}

impl Layer {
    /// An empty layer.
    pub fn empty(source: Source, origin: impl Into<String>) -> Layer {
        Layer {
            source,
            origin: origin.into(),
            rules: Vec::new(),
            default_mode: None,
            additional_directories: Vec::new(),
        }
    }

    /// Parses a settings file's text; only its `permissions` key is read.
    pub fn from_settings_text(
        source: Source,
        origin: impl Into<String>,
        text: &str,
    ) -> Result<Layer, LayerError> {
        Layer::from_settings(source, origin, &dsh_files::Json::parse(text))
    }

    /// A settings file's `permissions` key, from the session's one parse
    /// of it (the text locates errors).
    pub fn from_settings(
        source: Source,
        origin: impl Into<String>,
        json: &dsh_files::Json,
    ) -> Result<Layer, LayerError> {
        let origin = origin.into();
        let text = json.text();
        let doc = json.document().map_err(|e| LayerError::Json {
            origin: origin.clone(),
            line: e.line,
            column: e.column,
            // The error names the position once, from `line`/`column`.
            message: e.message.clone(),
        })?;
        let mut layer = Layer::empty(source, origin.clone());
        let Some(perms) = doc.get("permissions") else {
            return Ok(layer);
        };
        let perms_at = text.find("\"permissions\"").unwrap_or(0);
        let shape = |key: &str, message: &str| {
            let at = locate_string(text, key, perms_at).unwrap_or(perms_at);
            let (line, column) = line_col(text, at);
            LayerError::Shape {
                origin: origin.clone(),
                line,
                column,
                key: key.to_owned(),
                message: message.to_owned(),
            }
        };
        let Some(perms) = perms.as_object() else {
            return Err(shape("permissions", "is not an object"));
        };
        for behavior in [Behavior::Deny, Behavior::Ask, Behavior::Allow] {
            let key = behavior.key();
            let Some(list) = perms.get(key) else { continue };
            let Some(list) = list.as_array() else {
                return Err(shape(key, "is not a list of rule strings"));
            };
            let key_at = locate_string(text, key, perms_at).unwrap_or(perms_at);
            let mut cursor = key_at;
            for item in list {
                let Some(raw) = item.as_str() else {
                    return Err(shape(key, "has an entry that is not a string"));
                };
                let at = locate_string(text, raw, cursor).unwrap_or(cursor);
                cursor = at;
                match Rule::parse(raw) {
                    Ok(rule) => layer.rules.push(SourcedRule {
                        rule,
                        behavior,
                        source,
                        origin: origin.clone(),
                    }),
                    Err(error) => {
                        // The offset is into the rule string; JSON escapes
                        // could shift it, which only blurs the column.
                        let (line, column) = line_col(text, at + error_offset(&error));
                        return Err(LayerError::Rule {
                            origin: origin.clone(),
                            line,
                            column,
                            key: key.to_owned(),
                            rule: raw.to_owned(),
                            error,
                        });
                    }
                }
            }
        }
        if let Some(m) = perms.get("defaultMode") {
            let parsed = m.as_str().map(str::parse::<Mode>);
            match parsed {
                Some(Ok(mode)) => layer.default_mode = Some(mode),
                Some(Err(e)) => return Err(shape("defaultMode", &e.to_string())),
                None => return Err(shape("defaultMode", "is not a string")),
            }
        }
        if let Some(dirs) = perms.get("additionalDirectories") {
            let Some(dirs) = dirs.as_array() else {
                return Err(shape("additionalDirectories", "is not a list of paths"));
            };
            for d in dirs {
                let Some(d) = d.as_str() else {
                    return Err(shape(
                        "additionalDirectories",
                        "has an entry that is not a string",
                    ));
                };
                layer.additional_directories.push(PathBuf::from(d));
            }
        }
        Ok(layer)
    }

    /// `--allowedTools` / `--disallowedTools` values: comma- or
    /// space-separated rules, where a space inside parentheses is content.
    pub fn from_cli(allowed: &[String], disallowed: &[String]) -> Result<Layer, LayerError> {
        let mut layer = Layer::empty(Source::CliArg, "command line");
        for (flag, values, behavior) in [
            ("--allowedTools", allowed, Behavior::Allow),
            ("--disallowedTools", disallowed, Behavior::Deny),
        ] {
            for value in values {
                for raw in split_tool_list(value) {
                    let rule = Rule::parse(&raw).map_err(|error| LayerError::Rule {
                        origin: flag.to_owned(),
                        line: 1,
                        column: error_offset(&error) + 1,
                        key: behavior.key().to_owned(),
                        rule: raw.clone(),
                        error,
                    })?;
                    layer.rules.push(SourcedRule {
                        rule,
                        behavior,
                        source: Source::CliArg,
                        origin: flag.to_owned(),
                    });
                }
            }
        }
        Ok(layer)
    }
}

/// Splits `"Bash(git log:*) Edit,Read"` into rules: separators are commas
/// and whitespace outside parentheses.
pub fn split_tool_list(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    for c in value.chars() {
        match c {
            '(' => {
                depth += 1;
                cur.push(c);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                cur.push(c);
            }
            ',' | ' ' | '\t' | '\n' if depth == 0 => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_settings_permissions_block() {
        let text = r#"{
  "permissions": {
    "allow": ["Bash(npm test:*)", "Read"],
    "deny": ["Read(./secrets/**)"],
    "ask": ["mcp__github"],
    "defaultMode": "acceptEdits",
    "additionalDirectories": ["../lib"]
  }
}"#;
        let layer = Layer::from_settings_text(Source::Project, ".claude/settings.json", text)
            .expect("valid");
        let got: Vec<(&str, Behavior)> = layer
            .rules
            .iter()
            .map(|r| (r.rule.raw.as_str(), r.behavior))
            .collect();
        assert_eq!(
            got,
            vec![
                ("Read(./secrets/**)", Behavior::Deny),
                ("mcp__github", Behavior::Ask),
                ("Bash(npm test:*)", Behavior::Allow),
                ("Read", Behavior::Allow),
            ]
        );
        assert_eq!(layer.default_mode, Some(Mode::AcceptEdits));
        assert_eq!(layer.additional_directories, vec![PathBuf::from("../lib")]);
    }

    #[test]
    fn rule_errors_name_file_line_and_column() {
        let text = "{\n  \"permissions\": {\n    \"allow\": [\"Read\", \"Bash(npm\"]\n  }\n}";
        let err = Layer::from_settings_text(Source::Local, "s.json", text).expect_err("bad rule");
        // On line 3 the rule's `B` is at column 24, so its `(` is at 28.
        assert_eq!(
            err.to_string(),
            "s.json:3:28: rule \"Bash(npm\" in `permissions.allow`: unclosed `(` at offset 4: a rule with content ends with `)`"
        );
        let err = Layer::from_settings_text(
            Source::User,
            "u.json",
            "{\"permissions\": {\"defaultMode\": \"yolo\"}}",
        )
        .expect_err("bad mode");
        assert!(
            err.to_string()
                .starts_with("u.json:1:19: `permissions.defaultMode`"),
            "{err}"
        );
        let err =
            Layer::from_settings_text(Source::User, "u.json", "{\n nope").expect_err("bad json");
        assert!(err.to_string().starts_with("u.json:2:"), "{err}");
    }

    #[test]
    fn cli_lists_split_outside_parentheses() {
        assert_eq!(
            split_tool_list("Bash(git log:*) Edit,Read"),
            vec!["Bash(git log:*)", "Edit", "Read"]
        );
        let layer = Layer::from_cli(&["Bash(npm test:*),Read".into()], &["WebFetch".into()])
            .expect("valid");
        assert_eq!(layer.rules.len(), 3);
        assert_eq!(layer.rules[2].behavior, Behavior::Deny);
        assert!(Layer::from_cli(&["Bash(".into()], &[]).is_err());
    }
}
