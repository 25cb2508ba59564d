//! Copilot's matchers. camelCase entries: a regex anchored `^(?:…)$`,
//! case-sensitive, on the native tool name (`bash`, `bash|view`, `.*`
//! match a bash call; `Bash`, `ba`, `shell` do not; an invalid regex
//! matches nothing). PascalCase entries: the same regex tried on the Claude
//! name and on the native name (`Bash` and `bash` both match; `Read` and
//! `view` match a view), `*` matches all (pre_matchers,
//! cc_pascal_tool_names).

use crate::event::Mode;
use crate::tools;

/// Whether an entry with `matcher` runs for a call of the native tool
/// `native` (no matcher, or an empty one: always).
pub fn matches(mode: Mode, matcher: Option<&str>, native: &str) -> bool {
    let Some(pattern) = matcher.filter(|m| !m.is_empty()) else {
        return true;
    };
    if mode == Mode::Pascal && pattern == "*" {
        return true;
    }
    let Ok(regex) = regex::Regex::new(&format!("^(?:{pattern})$")) else {
        return false;
    };
    match mode {
        Mode::Camel => regex.is_match(native),
        Mode::Pascal => regex.is_match(native) || regex.is_match(tools::claude_name(native)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_is_anchored_and_case_sensitive_pascal_takes_both_names() {
        let camel = |m| matches(Mode::Camel, m, "bash");
        assert!(
            camel(Some("bash")) && camel(Some("bash|view")) && camel(Some(".*")) && camel(None)
        );
        assert!(!camel(Some("Bash")) && !camel(Some("ba")) && !camel(Some("shell")));
        assert!(!camel(Some("(")) && !camel(Some("view")));
        assert!(matches(Mode::Pascal, Some("Bash"), "bash"));
        assert!(matches(Mode::Pascal, Some("bash"), "bash"));
        assert!(matches(Mode::Pascal, Some("Read"), "view"));
        assert!(matches(Mode::Pascal, Some("view"), "view"));
        assert!(matches(Mode::Pascal, Some("Write|Edit"), "create"));
        assert!(matches(Mode::Pascal, Some("*"), "grep"));
        assert!(!matches(Mode::Pascal, Some("Glob|Grep"), "view"));
    }
}
