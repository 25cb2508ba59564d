//! Shift-Tab's permission-mode cycle, as Claude Code's: default →
//! acceptEdits → plan → default, with bypassPermissions after plan only
//! when the session started in it.

use dsh_permissions::Mode;

/// The mode after `current`.
pub fn next(current: Mode, bypass_allowed: bool) -> Mode {
    match current {
        Mode::Default => Mode::AcceptEdits,
        Mode::AcceptEdits => Mode::Plan,
        Mode::Plan if bypass_allowed => Mode::BypassPermissions,
        Mode::Plan | Mode::BypassPermissions | Mode::DontAsk | Mode::Auto => Mode::Default,
    }
}

/// What a mode means, in a few words.
pub fn about(mode: Mode) -> &'static str {
    match mode {
        Mode::Default => "file changes and commands ask",
        Mode::AcceptEdits => "file edits run without asking",
        Mode::Plan => "read-only: nothing is changed",
        Mode::DontAsk => "whatever would ask is denied",
        Mode::BypassPermissions => "everything runs without asking",
        Mode::Auto => "the vendor's classifier (unavailable in dsh)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shift_tab_cycles_like_claude_code() {
        let mut seen = vec![Mode::Default];
        for _ in 0..3 {
            seen.push(next(*seen.last().unwrap_or(&Mode::Default), false));
        }
        assert_eq!(
            seen,
            [Mode::Default, Mode::AcceptEdits, Mode::Plan, Mode::Default]
        );
        assert_eq!(next(Mode::Plan, true), Mode::BypassPermissions);
        assert_eq!(next(Mode::BypassPermissions, true), Mode::Default);
    }
}
