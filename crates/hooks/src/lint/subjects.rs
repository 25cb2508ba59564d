//! Matchers that cannot match: on events whose matcher is tested against a
//! closed set of values (a compaction trigger, a start source, an error
//! category, a load reason), a matcher none of them satisfies never runs its
//! hooks. Events matched on an open name (a tool, an agent type, a command)
//! are not judged here: any name may exist.

use super::{Checker, Rules, Severity};

/// Warns (`matcher-never-matches`, at the matcher's file:line) when
/// `pattern` (a valid matcher) matches none of `event`'s closed set of
/// subjects.
pub(super) fn check(c: &mut Checker<'_>, rules: &dyn Rules, event: &str, pattern: &str, at: &str) {
    let Some((what, values)) = rules.closed_subjects(event) else {
        return;
    };
    if values
        .iter()
        .any(|value| rules.matcher_matches(pattern, value))
    {
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
