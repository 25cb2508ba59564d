//! Gemini's matchers: tool events test `new RegExp(matcher).test(tool_name)`
//! (unanchored, case-sensitive; an invalid regex falls back to string
//! equality); SessionStart, SessionEnd and PreCompress compare the source,
//! reason or trigger exactly; every other event ignores its matcher.

use crate::event::GeminiEvent;

/// Whether a group's `matcher` accepts `subject` on `event`.
pub fn matches(event: GeminiEvent, matcher: Option<&str>, subject: Option<&str>) -> bool {
    let Some(matcher) = matcher.filter(|m| !m.is_empty() && *m != "*") else {
        return true;
    };
    if !honours_matcher(event) {
        return true;
    }
    let Some(subject) = subject else {
        return true;
    };
    if event.matches_tools() {
        match regex::Regex::new(matcher) {
            Ok(regex) => regex.is_match(subject),
            Err(_) => matcher == subject,
        }
    } else {
        matcher == subject
    }
}

/// Whether `event` reads its matcher at all.
pub fn honours_matcher(event: GeminiEvent) -> bool {
    match event {
        GeminiEvent::BeforeTool
        | GeminiEvent::AfterTool
        | GeminiEvent::SessionStart
        | GeminiEvent::SessionEnd
        | GeminiEvent::PreCompress => true,
        GeminiEvent::BeforeAgent
        | GeminiEvent::AfterAgent
        | GeminiEvent::BeforeModel
        | GeminiEvent::AfterModel
        | GeminiEvent::BeforeToolSelection
        | GeminiEvent::Notification => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `m_tool_matchers`: unanchored and case-sensitive; an invalid regex is
    /// an exact string; lifecycle matchers are exact.
    #[test]
    fn tool_matchers_are_unanchored_regexes_and_lifecycle_ones_exact() {
        let tool = GeminiEvent::BeforeTool;
        let name = Some("run_shell_command");
        for (matcher, expected) in [
            ("shell", true),
            ("run_shell_command", true),
            ("^run_shell_command$", true),
            ("RUN_SHELL_COMMAND", false),
            ("read_file|run_shell", true),
            ("*", true),
            ("", true),
            ("^read", false),
            ("(", false),
        ] {
            assert_eq!(matches(tool, Some(matcher), name), expected, "{matcher}");
        }
        assert!(matches(tool, Some("("), Some("(")));
        let start = GeminiEvent::SessionStart;
        assert!(matches(start, Some("startup"), Some("startup")));
        assert!(!matches(start, Some("start.*"), Some("startup")));
        assert!(matches(GeminiEvent::BeforeAgent, Some("nothing"), None));
    }
}
