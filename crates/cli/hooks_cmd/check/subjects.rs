//! Matchers that cannot match: on events whose matcher is tested against a
//! closed set of values (a compaction trigger, a start source, an error
//! category, a load reason), a matcher none of them satisfies never runs its
//! hooks. Events matched on an open name (a tool, an agent type, a command)
//! are not judged here: any name may exist.

use dsh_hooks_claude::events::STOP_FAILURE_ERRORS;

use super::{Checker, Kind, Severity};

/// The values a dialect's `event` matcher is tested against, when they
/// are a closed set: (what they are, every value the tool documents).
fn closed_subjects(kind: Kind, event: &str) -> Option<(&'static str, &'static [&'static str])> {
    const TRIGGERS: &[&str] = &["manual", "auto"];
    const SOURCES: &[&str] = &["startup", "resume", "clear", "compact"];
    // Claude Code's documented `load_reason` values (dsh sends the first
    // and `path_glob_match`).
    const LOAD_REASONS: &[&str] = &[
        "session_start",
        "nested_traversal",
        "path_glob_match",
        "include",
        "compact",
    ];
    match kind {
        Kind::Claude => match event {
            "StopFailure" => Some(("the error category", &STOP_FAILURE_ERRORS)),
            "PreCompact" | "PostCompact" => Some(("the trigger", TRIGGERS)),
            "SessionStart" => Some(("the source", SOURCES)),
            "InstructionsLoaded" => Some(("the load reason", LOAD_REASONS)),
            _ => None,
        },
        // Codex ignores matchers on its compaction events (reported as
        // `matcher-ignored`); SessionStart matches the source.
        Kind::Codex => match event {
            "SessionStart" => Some(("the source", SOURCES)),
            _ => None,
        },
    }
}

/// Warns (`matcher-never-matches`, at the matcher's file:line) when
/// `pattern` matches none of `event`'s closed set of subjects.
pub(super) fn check(c: &mut Checker<'_>, event: &str, pattern: &str, at: &str) {
    let Some((what, values)) = closed_subjects(c.kind, event) else {
        return;
    };
    let matches_one = match c.kind {
        Kind::Claude => match dsh_hooks_claude::Matcher::compile(Some(pattern)) {
            Ok(matcher) => values.iter().any(|value| matcher.matches(value)),
            // An invalid regex is reported on its own.
            Err(_) => true,
        },
        Kind::Codex => match dsh_hooks_codex::matcher::Matcher::compile(Some(pattern)) {
            Ok(matcher) => values.iter().any(|value| matcher.matches(value, &[])),
            Err(_) => true,
        },
    };
    if matches_one {
        return;
    }
    c.push(
        Severity::Warning,
        "matcher-never-matches",
        Some(at.to_owned()),
        Some(pattern),
        format!(
            "{event} matches on {what} ({}); matcher {pattern:?} matches none, these hooks never run",
            values.join(", ")
        ),
    );
}
