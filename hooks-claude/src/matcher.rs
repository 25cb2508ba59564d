//! Claude Code matchers (docs/sources.md).
//!
//! `*`, empty or missing match everything. A matcher made only of letters,
//! digits, `_`, `-`, spaces, `,` and `|` is an exact name or a `|`/`,` list of
//! exact names (each trimmed, case-sensitive, no substring match). Anything
//! else is an unanchored ECMAScript regular expression tested with `.test()`,
//! evaluated with `regress` so JavaScript semantics carry over.

/// A compiled matcher.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// Matches every subject.
    All,
    /// Matches a subject equal to one of these names.
    Exact(Vec<String>),
    /// Matches a subject in which this regex finds a match anywhere.
    Regex {
        /// The pattern as configured.
        pattern: String,
        /// The compiled ECMAScript regex.
        regex: regress::Regex,
    },
}

/// Why a matcher could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatcherError {
    /// The pattern.
    pub pattern: String,
    /// The regex engine's message.
    pub message: String,
}

fn is_plain(pattern: &str) -> bool {
    pattern
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' ' | ',' | '|'))
}

impl Matcher {
    /// Compiles a matcher as Claude Code reads it (`None` = key absent).
    pub fn compile(pattern: Option<&str>) -> Result<Matcher, MatcherError> {
        let Some(pattern) = pattern else {
            return Ok(Matcher::All);
        };
        if pattern == "*" || pattern.is_empty() {
            return Ok(Matcher::All);
        }
        if is_plain(pattern) {
            let names: Vec<String> = pattern
                .split(['|', ','])
                .map(str::trim)
                .filter(|name| !name.is_empty())
                .map(str::to_owned)
                .collect();
            if names.is_empty() {
                // Only separators and spaces: Claude Code treats the trimmed
                // pattern as empty, i.e. match everything.
                return Ok(Matcher::All);
            }
            return Ok(Matcher::Exact(names));
        }
        match regress::Regex::new(pattern) {
            Ok(regex) => Ok(Matcher::Regex {
                pattern: pattern.to_owned(),
                regex,
            }),
            Err(error) => Err(MatcherError {
                pattern: pattern.to_owned(),
                message: error.to_string(),
            }),
        }
    }

    /// Whether `subject` (tool name, source, …) matches.
    pub fn matches(&self, subject: &str) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Exact(names) => names.iter().any(|name| name == subject),
            Matcher::Regex { regex, .. } => regex.find(subject).is_some(),
        }
    }
}

/// `*` matches any run of characters (including `/`); everything else is literal.
pub(crate) fn wildcard(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let mut rest = text;
    for (index, part) in parts.iter().enumerate() {
        if index == 0 {
            match rest.strip_prefix(part) {
                Some(r) => rest = r,
                None => return false,
            }
        } else if index == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
    }
    true
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn m(pattern: Option<&str>) -> Matcher {
        Matcher::compile(pattern).unwrap()
    }

    /// Capture `n_matchers`: a Bash call, then a Write call.
    #[test]
    fn observed_matcher_table() {
        let table: &[(Option<&str>, bool, bool)] = &[
            (Some("Bash"), true, false),
            (Some("Edit|Write"), false, true),
            (Some("Bash|Read"), true, false),
            (Some("*"), true, true),
            (Some(""), true, true),
            (None, true, true),
            (Some("B.*"), true, false),
            (Some("^Bash$"), true, false),
            (Some(" Bash "), true, false),
            (Some("bash"), false, false),
            (Some("Ba"), false, false),
            (Some("Bash(echo *)"), false, false),
            (Some("Read"), false, false),
            (Some("Write"), false, true),
        ];
        for (pattern, bash, write) in table {
            let matcher = m(*pattern);
            assert_eq!(matcher.matches("Bash"), *bash, "{pattern:?} vs Bash");
            assert_eq!(matcher.matches("Write"), *write, "{pattern:?} vs Write");
        }
    }

    #[test]
    fn lists_commas_hyphens_and_unanchored_regex() {
        assert!(m(Some("Bash, Write")).matches("Write"));
        assert!(m(Some("mcp__brave-search")).matches("mcp__brave-search"));
        assert!(!m(Some("mcp__brave")).matches("mcp__brave-search"));
        assert!(m(Some("Edit.*")).matches("NotebookEdit"));
        assert!(m(Some("mcp__.*")).matches("mcp__memory__save"));
        assert!(m(Some("^(startup|resume)$")).matches("resume"));
        assert!(!m(Some("^(startup|resume)$")).matches("compact"));
    }

    #[test]
    fn invalid_regex_names_the_pattern() {
        let error = Matcher::compile(Some("Bash(")).unwrap_err();
        assert_eq!(error.pattern, "Bash(");
        assert!(!error.message.is_empty());
    }
}
