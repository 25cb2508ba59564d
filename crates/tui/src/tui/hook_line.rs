//! One line saying what a finished hook did — which hook blocked,
//! rewrote or asked about what, or that it failed — in the hook's own words.

use dsh_protocol::{HookDecision, HookEffect, HookOutcomeKind};

use crate::tui::text::{LINE_CHARS, Tone, strip_hook_wrapper, truncate};

/// The hook's own words: for an exit-2 block its stderr's first line, else
/// the first line of its reason without the model-facing wrapper, else its
/// stderr's first line.
fn own_words<'a>(report: &HookReport<'a>) -> Option<&'a str> {
    let stderr_line = report
        .stderr
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty());
    if report.exit_code == Some(2)
        && let Some(line) = stderr_line
    {
        return Some(line);
    }
    report
        .decision
        .best_reason()
        .map(strip_hook_wrapper)
        .and_then(|reason| reason.lines().map(str::trim).find(|line| !line.is_empty()))
        .or(stderr_line)
}

/// A finished hook, as [`describe_hook`] reads it.
pub struct HookReport<'a> {
    /// `claude PreToolUse hook `./guard.sh``.
    pub label: &'a str,
    /// How the process ended.
    pub outcome: HookOutcomeKind,
    /// Its exit code.
    pub exit_code: Option<i32>,
    /// Whether dsh killed it at its deadline.
    pub timed_out: bool,
    /// Wall time.
    pub duration_ms: u64,
    /// Runner diagnostics.
    pub error: Option<&'a str>,
    /// What it meant on the seam.
    pub decision: &'a HookDecision,
    /// Its stderr (its own words when it blocks with exit code 2).
    pub stderr: &'a str,
}

/// One line saying what a hook did: which hook blocked, rewrote or asked
/// about what, or that it failed; routine runs are dim.
pub fn describe_hook(report: &HookReport<'_>) -> (Tone, String) {
    let decision = report.decision;
    let effect = decision.effect;
    let reason = own_words(report);
    let rewrote = decision.updated_input.is_some();
    let stops = decision.stops();
    let took = if report.duration_ms >= 1000 {
        format!("{:.1}s", report.duration_ms as f64 / 1000.0)
    } else {
        format!("{} ms", report.duration_ms)
    };
    let label = report.label;
    let failure = match report.outcome {
        HookOutcomeKind::TimedOut => Some("timed out".to_owned()),
        HookOutcomeKind::Cancelled => Some("cancelled".to_owned()),
        HookOutcomeKind::SpawnFailed => Some(format!(
            "could not run{}",
            report.error.map(|e| format!(": {e}")).unwrap_or_default()
        )),
        HookOutcomeKind::Signaled => Some("killed by a signal".to_owned()),
        HookOutcomeKind::HttpError => Some(report.error.unwrap_or("HTTP error").to_owned()),
        HookOutcomeKind::Exited | HookOutcomeKind::Detached => None,
    };
    let reason_tail = reason
        .map(|r| format!(": {}", truncate(r, LINE_CHARS)))
        .unwrap_or_default();
    if let Some(failure) = failure.or_else(|| report.timed_out.then(|| "timed out".to_owned())) {
        return (Tone::Warn, format!("⚑ {label} {failure} ({took})"));
    }
    match effect {
        // A hook whose own words already say so (`Blocked: use …`) is not
        // prefixed with dsh's `blocked` as well.
        HookEffect::Deny | HookEffect::Block if reason.is_some_and(says_blocked) => {
            (Tone::Bad, format!("⚑ {label}{reason_tail} ({took})"))
        }
        HookEffect::Deny | HookEffect::Block => (
            Tone::Bad,
            format!("⚑ {label} blocked{reason_tail} ({took})"),
        ),
        HookEffect::Ask => (
            Tone::Warn,
            format!("⚑ {label} asks for approval{reason_tail} ({took})"),
        ),
        _ if stops => (
            Tone::Warn,
            format!("⚑ {label} stopped the turn{reason_tail} ({took})"),
        ),
        _ if rewrote => (Tone::Warn, format!("⚑ {label} rewrote the input ({took})")),
        HookEffect::Allow => (
            Tone::Dim,
            format!("· {label} allowed{reason_tail} ({took})"),
        ),
        HookEffect::None | HookEffect::Defer | HookEffect::Stop | HookEffect::Rewrite => {
            let code = match report.exit_code {
                Some(0) | None => String::new(),
                Some(code) => format!(", exit {code}"),
            };
            let tone = if code.is_empty() {
                Tone::Dim
            } else {
                Tone::Warn
            };
            (tone, format!("· {label} ran ({took}{code})"))
        }
    }
}

/// Whether a hook's reason opens by saying it blocks (`Blocked: …`,
/// `BLOCKED - …`, `Block: …`).
fn says_blocked(reason: &str) -> bool {
    let word: String = reason
        .trim_start()
        .chars()
        .take_while(|c| c.is_alphabetic())
        .collect();
    matches!(word.to_lowercase().as_str(), "blocked" | "block")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn a_hook_that_says_blocked_is_not_prefixed_with_blocked() {
        let decision: &'static HookDecision = Box::leak(Box::new(
            serde_json::from_value::<HookDecision>(
                json!({"effect": "deny", "reason": "Blocked: use the safe-clean script instead"}),
            )
            .expect("a decision record"),
        ));
        let report = HookReport {
            label: "claude PreToolUse hook `./guard.sh`",
            outcome: HookOutcomeKind::Exited,
            exit_code: Some(0),
            timed_out: false,
            duration_ms: 5,
            error: None,
            stderr: "",
            decision,
        };
        let (tone, text) = describe_hook(&report);
        assert_eq!(tone, Tone::Bad);
        assert_eq!(
            text,
            "⚑ claude PreToolUse hook `./guard.sh`: Blocked: use the safe-clean script instead (5 ms)"
        );
        assert!(says_blocked("BLOCKED - no"));
        assert!(!says_blocked("Blockchain writes are not allowed"));
    }

    #[test]
    fn hooks_that_block_rewrite_or_time_out_say_so() {
        let report = |decision: Value, outcome| HookReport {
            label: "claude PreToolUse hook `./guard.sh`",
            outcome,
            exit_code: Some(2),
            timed_out: false,
            duration_ms: 1500,
            error: None,
            stderr: "",
            decision: Box::leak(Box::new(
                serde_json::from_value::<HookDecision>(decision).expect("a decision record"),
            )),
        };
        let (tone, text) = describe_hook(&report(
            json!({"effect": "deny", "reason": "rm -rf is not allowed"}),
            HookOutcomeKind::Exited,
        ));
        assert_eq!(tone, Tone::Bad);
        assert_eq!(
            text,
            "⚑ claude PreToolUse hook `./guard.sh` blocked: rm -rf is not allowed (1.5s)"
        );
        let (_, text) = describe_hook(&report(
            json!({"effect": "allow", "updated_input": {"command": "ls"}}),
            HookOutcomeKind::Exited,
        ));
        assert!(text.contains("rewrote the input"), "{text}");
        let (tone, text) = describe_hook(&report(
            json!({"effect": "none"}),
            HookOutcomeKind::TimedOut,
        ));
        assert_eq!(tone, Tone::Warn);
        assert!(text.contains("timed out"), "{text}");
    }
}
