//! Claude Code's hook output schema, checked on the fields it types: JSON
//! that fails it is ignored (fail open), see `docs/sources.md`. The checks
//! run over the answer's wire struct in the order Claude Code reports the
//! first failure.

use serde_json::Value;

use super::keys::{EventAnswer, EventKeys};
use super::wire::{Field, PermissionDecision, WireType};
use crate::events::HookEvent;

/// `path: Invalid input: expected T, received U` for a key of the wrong type.
fn expect<T: WireType>(field: &Field<T>, path: &str) -> Result<(), String> {
    match field {
        Field::Absent | Field::Valid(_) => Ok(()),
        Field::Invalid { received, .. } => Err(format!(
            "{path}: Invalid input: expected {}, received {received}",
            T::JSON.unwrap_or("a value")
        )),
    }
}

/// `path: Invalid option: expected one of "a"|"b"`.
fn option_error(path: &str, options: &[&str]) -> String {
    format!(
        "{path}: Invalid option: expected one of {}",
        options
            .iter()
            .map(|o| format!("\"{o}\""))
            .collect::<Vec<_>>()
            .join("|")
    )
}

/// A key that must be one of `options` (its enum holds exactly them).
fn expect_option<T>(field: &Field<T>, path: &str, options: &[&str]) -> Result<(), String> {
    match field {
        Field::Absent | Field::Valid(_) => Ok(()),
        Field::Invalid { .. } => Err(option_error(path, options)),
    }
}

/// Claude Code's output schema (`docs/sources.md`), on the fields it types.
pub fn validate(json: &Value, event: HookEvent) -> Result<(), String> {
    EventAnswer::read(json, event).validate()
}

impl EventAnswer {
    /// The first schema error Claude Code would report for the event the
    /// answer was read for.
    pub(crate) fn validate(&self) -> Result<(), String> {
        let wire = &self.wire;
        expect(&wire.keep_going, "continue")?;
        expect(&wire.suppress_output, "suppressOutput")?;
        expect(&wire.stop_reason, "stopReason")?;
        expect_option(&wire.decision, "decision", &["approve", "block"])?;
        expect(&wire.reason, "reason")?;
        expect(&wire.system_message, "systemMessage")?;
        expect(&wire.terminal_sequence, "terminalSequence")?;
        expect(&wire.hook_specific_output, "hookSpecificOutput")?;
        let Some(specific) = wire.specific() else {
            return Ok(());
        };
        expect(
            &specific.hook_event_name,
            "hookSpecificOutput.hookEventName",
        )?;
        expect(
            &specific.additional_context,
            "hookSpecificOutput.additionalContext",
        )?;
        const DECISION: &str = "hookSpecificOutput.permissionDecision";
        const DECISION_REASON: &str = "hookSpecificOutput.permissionDecisionReason";
        match &self.keys {
            EventKeys::PreToolUse(keys) => {
                expect_option(
                    &keys.permission_decision,
                    DECISION,
                    &["allow", "deny", "ask", "defer"],
                )?;
                expect(&keys.permission_decision_reason, DECISION_REASON)?;
                expect(&keys.updated_input, "hookSpecificOutput.updatedInput")?;
            }
            EventKeys::PreModelSwitch(keys) => {
                let options = ["allow", "deny", "ask"];
                if keys.permission_decision.valid() == Some(&PermissionDecision::Defer) {
                    return Err(option_error(DECISION, &options));
                }
                expect_option(&keys.permission_decision, DECISION, &options)?;
                expect(&keys.permission_decision_reason, DECISION_REASON)?;
            }
            EventKeys::MessageDisplay(keys) => {
                expect(&keys.display_content, "hookSpecificOutput.displayContent")?;
            }
            EventKeys::PermissionRequest(keys) => {
                expect(&keys.decision, "hookSpecificOutput.decision")?;
                if let Some(decision) = keys.decision.valid() {
                    expect_option(
                        &decision.behavior,
                        "hookSpecificOutput.decision.behavior",
                        &["allow", "deny"],
                    )?;
                    expect(
                        &decision.updated_input,
                        "hookSpecificOutput.decision.updatedInput",
                    )?;
                    expect(&decision.message, "hookSpecificOutput.decision.message")?;
                    expect(&decision.interrupt, "hookSpecificOutput.decision.interrupt")?;
                }
            }
            // Keys the schema does not type (or events with none).
            EventKeys::ToolOutput(_)
            | EventKeys::PermissionDenied(_)
            | EventKeys::Elicitation(_)
            | EventKeys::WorktreeCreate(_)
            | EventKeys::None => {}
        }
        Ok(())
    }
}
