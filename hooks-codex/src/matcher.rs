//! Codex's matcher rules (`events/common.rs` in 0.169, observed in the captures).
//!
//! Missing, empty or `*` match everything; a matcher made only of
//! `[A-Za-z0-9_|]` is an exact match against its `|`-separated alternatives;
//! anything else is a Rust regex searched unanchored. A tool is also matched
//! through its aliases (`apply_patch` answers to `Edit` and `Write`).

use regex::Regex;

/// A compiled matcher.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// Matches everything (missing, `""`, `"*"`, or an event that ignores matchers).
    All,
    /// Exact match against one of these names.
    Exact(Vec<String>),
    /// An unanchored regex search.
    Regex(Regex),
}

impl Matcher {
    /// Compiles a matcher as Codex does. The error is the regex crate's message.
    pub fn compile(pattern: Option<&str>) -> Result<Matcher, String> {
        let Some(pattern) = pattern else {
            return Ok(Matcher::All);
        };
        if pattern.is_empty() || pattern == "*" {
            return Ok(Matcher::All);
        }
        if pattern
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|')
        {
            return Ok(Matcher::Exact(
                pattern.split('|').map(str::to_owned).collect(),
            ));
        }
        Regex::new(pattern)
            .map(Matcher::Regex)
            .map_err(|err| err.to_string())
    }

    /// Whether `name` (or one of its `aliases`) is selected.
    pub fn matches(&self, name: &str, aliases: &[&str]) -> bool {
        let one = |candidate: &str| match self {
            Matcher::All => true,
            Matcher::Exact(names) => names.iter().any(|n| n == candidate),
            Matcher::Regex(regex) => regex.is_match(candidate),
        };
        one(name) || aliases.iter().any(|alias| one(alias))
    }
}

/// The aliases Codex matches a hook tool name through (`hook_names.rs`).
pub fn tool_aliases(hook_tool_name: &str) -> &'static [&'static str] {
    match hook_tool_name {
        "apply_patch" => &["Write", "Edit"],
        "spawn_agent" => &["Agent"],
        _ => &[],
    }
}
