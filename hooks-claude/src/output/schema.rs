//! Claude Code's hook output schema, checked on the fields it types: JSON
//! that fails it is ignored (fail open), see `docs/sources.md`.

use serde_json::Value;

use crate::events::HookEvent;

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn expect(value: Option<&Value>, path: &str, want: &str) -> Result<(), String> {
    match value {
        None => Ok(()),
        Some(v) if type_name(v) == want => Ok(()),
        Some(v) => Err(format!(
            "{path}: Invalid input: expected {want}, received {}",
            type_name(v)
        )),
    }
}

fn expect_option(value: Option<&Value>, path: &str, options: &[&str]) -> Result<(), String> {
    match value {
        None => Ok(()),
        Some(Value::String(s)) if options.contains(&s.as_str()) => Ok(()),
        Some(_) => Err(format!(
            "{path}: Invalid option: expected one of {}",
            options
                .iter()
                .map(|o| format!("\"{o}\""))
                .collect::<Vec<_>>()
                .join("|")
        )),
    }
}

/// Claude Code's output schema (`docs/sources.md`), on the fields it types.
pub fn validate(json: &Value, event: HookEvent) -> Result<(), String> {
    expect(json.get("continue"), "continue", "boolean")?;
    expect(json.get("suppressOutput"), "suppressOutput", "boolean")?;
    expect(json.get("stopReason"), "stopReason", "string")?;
    expect_option(json.get("decision"), "decision", &["approve", "block"])?;
    expect(json.get("reason"), "reason", "string")?;
    expect(json.get("systemMessage"), "systemMessage", "string")?;
    expect(json.get("terminalSequence"), "terminalSequence", "string")?;
    let Some(specific) = json.get("hookSpecificOutput") else {
        return Ok(());
    };
    expect(Some(specific), "hookSpecificOutput", "object")?;
    expect(
        specific.get("hookEventName"),
        "hookSpecificOutput.hookEventName",
        "string",
    )?;
    expect(
        specific.get("additionalContext"),
        "hookSpecificOutput.additionalContext",
        "string",
    )?;
    if event == HookEvent::PreToolUse {
        expect_option(
            specific.get("permissionDecision"),
            "hookSpecificOutput.permissionDecision",
            &["allow", "deny", "ask", "defer"],
        )?;
        expect(
            specific.get("permissionDecisionReason"),
            "hookSpecificOutput.permissionDecisionReason",
            "string",
        )?;
        expect(
            specific.get("updatedInput"),
            "hookSpecificOutput.updatedInput",
            "object",
        )?;
    }
    if event == HookEvent::PreModelSwitch {
        expect_option(
            specific.get("permissionDecision"),
            "hookSpecificOutput.permissionDecision",
            &["allow", "deny", "ask"],
        )?;
        expect(
            specific.get("permissionDecisionReason"),
            "hookSpecificOutput.permissionDecisionReason",
            "string",
        )?;
    }
    if event == HookEvent::MessageDisplay {
        expect(
            specific.get("displayContent"),
            "hookSpecificOutput.displayContent",
            "string",
        )?;
    }
    if event == HookEvent::PermissionRequest
        && let Some(decision) = specific.get("decision")
    {
        expect(Some(decision), "hookSpecificOutput.decision", "object")?;
        expect_option(
            decision.get("behavior"),
            "hookSpecificOutput.decision.behavior",
            &["allow", "deny"],
        )?;
        expect(
            decision.get("updatedInput"),
            "hookSpecificOutput.decision.updatedInput",
            "object",
        )?;
        expect(
            decision.get("message"),
            "hookSpecificOutput.decision.message",
            "string",
        )?;
        expect(
            decision.get("interrupt"),
            "hookSpecificOutput.decision.interrupt",
            "boolean",
        )?;
    }
    Ok(())
}
