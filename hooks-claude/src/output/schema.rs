//! Claude Code's hook output schema, checked on the fields it types: JSON
//! that fails it is ignored (fail open), see `docs/sources.md`. The checks
//! run over the answer's wire struct in the order Claude Code reports the
//! first failure.

use serde_json::Value;

use super::wire::{Field, HookOutputWire, PermissionDecision, WireType};
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
    HookOutputWire::read(json).validate(event)
}

impl HookOutputWire {
    /// The first schema error Claude Code would report for `event`.
    pub(crate) fn validate(&self, event: HookEvent) -> Result<(), String> {
        expect(&self.keep_going, "continue")?;
        expect(&self.suppress_output, "suppressOutput")?;
        expect(&self.stop_reason, "stopReason")?;
        expect_option(&self.decision, "decision", &["approve", "block"])?;
        expect(&self.reason, "reason")?;
        expect(&self.system_message, "systemMessage")?;
        expect(&self.terminal_sequence, "terminalSequence")?;
        expect(&self.hook_specific_output, "hookSpecificOutput")?;
        let Some(specific) = self.specific() else {
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
        if event == HookEvent::PreToolUse {
            expect_option(
                &specific.permission_decision,
                DECISION,
                &["allow", "deny", "ask", "defer"],
            )?;
            expect(&specific.permission_decision_reason, DECISION_REASON)?;
            expect(&specific.updated_input, "hookSpecificOutput.updatedInput")?;
        }
        if event == HookEvent::PreModelSwitch {
            let options = ["allow", "deny", "ask"];
            if specific.permission_decision.valid() == Some(&PermissionDecision::Defer) {
                return Err(option_error(DECISION, &options));
            }
            expect_option(&specific.permission_decision, DECISION, &options)?;
            expect(&specific.permission_decision_reason, DECISION_REASON)?;
        }
        if event == HookEvent::MessageDisplay {
            expect(
                &specific.display_content,
                "hookSpecificOutput.displayContent",
            )?;
        }
        if event == HookEvent::PermissionRequest {
            expect(&specific.decision, "hookSpecificOutput.decision")?;
            if let Some(decision) = specific.decision.valid() {
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
        Ok(())
    }
}
