//! Reading a Copilot hook's run (exit code, stdout, stderr) with Copilot's
//! rules, merging an event's runs, and the exact texts Copilot shows the
//! model. Everything here is pure.
//!
//! stdout is one JSON document, read when the hook exits 0 (and for exit 2
//! on preToolUse); anything else on stdout means "no output"
//! (pre_output_parsing). `hookSpecificOutput` is read only from PascalCase
//! preToolUse entries (pre_pascal_deny, pre_updated_input_cc).

use dsh_hook_runner::HookExit;
use dsh_hooks::lenient::Lenient;
use dsh_hooks::wire::Present;
use serde::Deserialize;
use serde_json::Value;

use crate::event::{CopilotEvent, Mode};

/// A preToolUse / permissionRequest decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run without the permission flow.
    Allow,
    /// Do not run; the model-facing text.
    Deny(String),
    /// Ask the user; the model-facing text if nobody can answer.
    Ask(String),
}

/// How the run went, for the log.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Status {
    /// It ran and exited 0.
    #[default]
    Ok,
    /// Exit 2 on an event where that means something.
    Blocked,
    /// A non-zero exit, a timeout or a failed start: Copilot logs it as
    /// failed (`hook.end.error.message`).
    Failed(String),
}

/// What one run said, in Copilot's terms.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reading {
    /// How it went.
    pub status: Status,
    /// stdout as parsed, when it was one JSON document.
    pub parsed: Option<Value>,
    /// preToolUse / permissionRequest decision.
    pub decision: Option<Decision>,
    /// preToolUse `modifiedArgs` (or Pascal `updatedInput`) as written:
    /// any JSON, `null` too. Copilot puts it in place of the arguments
    /// whatever it is; its tool then fails a value that is not an object
    /// (pre_modified_null, pre_modified_nonobject).
    pub modified_args: Option<Value>,
    /// `additionalContext`.
    pub additional_context: Option<String>,
    /// postToolUse `modifiedResult.textResultForLlm`.
    pub modified_result: Option<String>,
    /// `decision: "block"` with its reason (userPromptSubmitted, postToolUse,
    /// agentStop).
    pub block: Option<String>,
    /// userPromptSubmitted `modifiedPrompt`.
    pub modified_prompt: Option<String>,
    /// permissionRequest `interrupt: true` (with a deny).
    pub interrupt: bool,
    /// A `session.warning` Copilot emits (exit 2 on a non-blocking event:
    /// the stderr).
    pub warning: Option<String>,
}

impl Reading {
    /// A run that went as `status` and said nothing.
    fn of(status: Status) -> Self {
        Reading {
            status,
            ..Reading::default()
        }
    }

    /// Whether Copilot counts the run as failed.
    pub fn failed(&self) -> Option<&str> {
        match &self.status {
            Status::Failed(message) => Some(message),
            Status::Ok | Status::Blocked => None,
        }
    }
}

/// `reason`, or `fallback` when it is missing or empty.
fn or<'a>(reason: Option<&'a str>, fallback: &'a str) -> &'a str {
    reason.filter(|r| !r.is_empty()).unwrap_or(fallback)
}

/// `Denied by preToolUse hook: <reason>`.
pub fn deny_text(reason: Option<&str>) -> String {
    let reason = or(reason, "No reason provided");
    format!("Denied by preToolUse hook: {reason}")
}

/// A permissionRequest deny.
pub fn permission_deny_text(message: Option<&str>) -> String {
    let message = or(message, "Permission denied by hook.");
    format!("Permission denied by a PermissionRequest hook: {message}")
}

/// Reads one run of an entry of `mode` on `event` that ended with `exit`
/// (its deadline `timeout_sec`). `display_file` names the entry's file in
/// Copilot's "hook errored" text.
pub fn interpret(
    event: CopilotEvent,
    mode: Mode,
    display_file: &str,
    (exit, timeout_sec): (&HookExit, u64),
    stdout: &str,
    stderr: &str,
) -> Reading {
    let read = || {
        serde_json::from_str::<Value>(stdout.trim())
            .ok()
            .filter(Value::is_object)
            .map_or_else(Reading::default, |doc| read_fields(event, mode, doc))
    };
    let why = match exit {
        HookExit::Exited(0) => return read(),
        HookExit::Exited(2) => return exit_two(event, read, stderr),
        HookExit::Exited(code) => {
            format!("Error: Hook command failed with code {code}\nStderr: {stderr}")
        }
        // Fail-open, even on preToolUse (cl_timeout_field).
        HookExit::TimedOut => {
            let why =
                format!("HookTimeoutError: Hook command timed out after {timeout_sec} seconds");
            return Reading::of(Status::Failed(why));
        }
        HookExit::Signaled(signal) => format!("killed by signal {signal}"),
        HookExit::Cancelled => "cancelled".to_owned(),
        HookExit::SpawnFailed(message) | HookExit::DshLimit(message) => message.clone(),
        HookExit::Responded(status) => format!("HTTP status {status}"),
    };
    // preToolUse fails closed (pre_missing_script, x_powershell_only_entry).
    let errored = format!("Denied by preToolUse hook from \"{display_file}\" (hook errored)");
    Reading {
        decision: (event == CopilotEvent::PreToolUse).then_some(Decision::Deny(errored)),
        ..Reading::of(Status::Failed(why))
    }
}

/// Exit 2: `read` reads stdout (only preToolUse looks at it).
fn exit_two(event: CopilotEvent, read: impl FnOnce() -> Reading, stderr: &str) -> Reading {
    let text = Some(stderr.to_owned()).filter(|s| !s.is_empty());
    let mut blocked = Reading::of(Status::Blocked);
    match event {
        CopilotEvent::PreToolUse => {
            // A deny JSON's reason is used; else a fixed text (cl_exit2).
            let json = read();
            blocked.decision = Some(Decision::Deny(match json.decision {
                Some(Decision::Deny(text)) => text,
                Some(Decision::Allow | Decision::Ask(_)) | None => {
                    deny_text(Some("hook exited with code 2"))
                }
            }));
            blocked.parsed = json.parsed;
        }
        CopilotEvent::PermissionRequest => {
            blocked.decision = Some(Decision::Deny(permission_deny_text(None)));
        }
        CopilotEvent::PostToolUseFailure => blocked.additional_context = text,
        CopilotEvent::SessionStart
        | CopilotEvent::UserPromptSubmitted
        | CopilotEvent::UserPromptTransformed
        | CopilotEvent::PostToolUse
        | CopilotEvent::AgentStop
        | CopilotEvent::SubagentStart
        | CopilotEvent::SubagentStop
        | CopilotEvent::PreCompact
        | CopilotEvent::Notification
        | CopilotEvent::ErrorOccurred
        | CopilotEvent::SessionEnd
        | CopilotEvent::PreMcpToolCall => {
            let why = format!("Error: Hook command failed with code 2\nStderr: {stderr}");
            return Reading {
                warning: text,
                ..Reading::of(Status::Failed(why))
            };
        }
    }
    blocked
}

/// The keys Copilot reads from a hook's stdout. Copilot reads each key on
/// its own: one of the wrong type counts as absent and spoils nothing else.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Wire {
    additional_context: Lenient<String>,
    decision: Lenient<String>,
    reason: Lenient<String>,
    #[serde(flatten)]
    permission: PermissionWire,
    hook_specific_output: Lenient<PermissionWire>,
    /// Present with any value: a `null` replaces the arguments too.
    modified_args: Lenient<Present>,
    behavior: Lenient<String>,
    message: Lenient<String>,
    interrupt: Lenient<bool>,
    modified_result: Lenient<ModifiedResult>,
    modified_prompt: Lenient<String>,
}

/// preToolUse's decision keys (top level, or PascalCase entries'
/// `hookSpecificOutput`).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct PermissionWire {
    permission_decision: Lenient<String>,
    permission_decision_reason: Lenient<String>,
    /// A `null` here is as good as missing (cc_pascal_updated_null).
    updated_input: Option<Present>,
}

/// postToolUse `modifiedResult`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct ModifiedResult {
    text_result_for_llm: Lenient<String>,
}

fn read_fields(event: CopilotEvent, mode: Mode, doc: Value) -> Reading {
    let wire = Wire::deserialize(&doc).unwrap_or_default();
    let mut reading = Reading {
        additional_context: wire.additional_context.0,
        ..Reading::default()
    };
    let block =
        (wire.decision.0.as_deref() == Some("block")).then(|| wire.reason.0.unwrap_or_default());
    match event {
        CopilotEvent::PreToolUse => {
            let specific = wire.hook_specific_output.0.filter(|_| mode == Mode::Pascal);
            let pick = |field: fn(&PermissionWire) -> &Lenient<String>| {
                specific
                    .as_ref()
                    .and_then(|s| field(s).0.clone())
                    .or_else(|| field(&wire.permission).0.clone())
            };
            let reason = pick(|w| &w.permission_decision_reason);
            reading.decision = match pick(|w| &w.permission_decision).as_deref() {
                Some("deny") => Some(Decision::Deny(deny_text(reason.as_deref()))),
                Some("ask") => Some(Decision::Ask(format!(
                    "Denied by preToolUse hook (unable to ask user for confirmation): {}",
                    or(reason.as_deref(), "No reason provided")
                ))),
                Some("allow") => Some(Decision::Allow),
                Some(_) | None => None,
            };
            // Pascal: a non-null `updatedInput` of any type wins over the
            // flat `modifiedArgs`; a null one leaves it the flat key, which
            // counts with any value, null too (cc_pascal_updated_null,
            // cc_pascal_modified_null; camelCase: pre_modified_null).
            let updated = specific.and_then(|s| s.updated_input);
            reading.modified_args = updated.or(wire.modified_args.0).map(|Present(args)| args);
        }
        CopilotEvent::PermissionRequest => {
            reading.decision = match wire.behavior.0.as_deref() {
                Some("allow") => Some(Decision::Allow),
                Some("deny") => Some(Decision::Deny(permission_deny_text(
                    wire.message.0.as_deref(),
                ))),
                Some(_) | None => None,
            };
            reading.interrupt = wire.interrupt.0 == Some(true);
        }
        CopilotEvent::PostToolUse => {
            reading.modified_result = wire.modified_result.0.and_then(|r| r.text_result_for_llm.0);
            reading.block = block;
        }
        CopilotEvent::UserPromptSubmitted => {
            reading.modified_prompt = wire.modified_prompt.0;
            reading.block = block;
        }
        CopilotEvent::AgentStop | CopilotEvent::SubagentStop => reading.block = block,
        CopilotEvent::SessionStart
        | CopilotEvent::UserPromptTransformed
        | CopilotEvent::PostToolUseFailure
        | CopilotEvent::SubagentStart
        | CopilotEvent::PreCompact
        | CopilotEvent::Notification
        | CopilotEvent::ErrorOccurred
        | CopilotEvent::SessionEnd
        | CopilotEvent::PreMcpToolCall => {}
    }
    reading.parsed = Some(doc);
    reading
}

/// All `additionalContext`s of an event's runs, in run order, joined by a
/// blank line.
pub fn joined_context(readings: &[&Reading]) -> Option<String> {
    let contexts: Vec<&str> = readings
        .iter()
        .filter_map(|r| r.additional_context.as_deref())
        .filter(|c| !c.is_empty())
        .collect();
    (!contexts.is_empty()).then(|| contexts.join("\n\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn pre(mode: Mode, end: HookExit, stdout: &str) -> Reading {
        interpret(
            CopilotEvent::PreToolUse,
            mode,
            ".github/hooks/h.json",
            (&end, 1),
            stdout,
            "ERR",
        )
    }

    #[test]
    fn pre_tool_use_decisions_and_exit_codes() {
        // pre_deny_no_reason, pre_ask.
        assert_eq!(
            pre(
                Mode::Camel,
                HookExit::Exited(0),
                r#"{"permissionDecision":"deny"}"#
            )
            .decision,
            Some(Decision::Deny(
                "Denied by preToolUse hook: No reason provided".into()
            ))
        );
        assert_eq!(
            pre(
                Mode::Camel,
                HookExit::Exited(0),
                r#"{"permissionDecision":"ask","permissionDecisionReason":"sure?"}"#
            )
            .decision,
            Some(Decision::Ask(
                "Denied by preToolUse hook (unable to ask user for confirmation): sure?".into()
            ))
        );
        // pre_output_parsing: a log line before the JSON means no output.
        assert_eq!(
            pre(
                Mode::Camel,
                HookExit::Exited(0),
                "log\n{\"permissionDecision\":\"deny\"}"
            )
            .decision,
            None
        );
        // pre_updated_input_cc / pre_pascal_deny.
        let specific = r#"{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"R","updatedInput":{"command":"x"}}}"#;
        assert_eq!(
            pre(Mode::Camel, HookExit::Exited(0), specific).decision,
            None
        );
        let pascal = pre(Mode::Pascal, HookExit::Exited(0), specific);
        assert_eq!(
            pascal.decision,
            Some(Decision::Deny("Denied by preToolUse hook: R".into()))
        );
        assert_eq!(
            pascal.modified_args,
            Some(serde_json::json!({"command": "x"}))
        );
        // cl_exit2; exit 3 with a deny JSON is an errored deny.
        assert_eq!(
            pre(Mode::Pascal, HookExit::Exited(2), "").decision,
            Some(Decision::Deny(
                "Denied by preToolUse hook: hook exited with code 2".into()
            ))
        );
        assert_eq!(
            pre(
                Mode::Camel,
                HookExit::Exited(3),
                r#"{"permissionDecision":"deny"}"#
            )
            .decision,
            Some(Decision::Deny(
                "Denied by preToolUse hook from \".github/hooks/h.json\" (hook errored)".into()
            ))
        );
        // Exit 2 with a deny JSON: its reason, and the document is recorded;
        // another event does not read stdout on exit 2.
        let deny = r#"{"permissionDecision":"deny","permissionDecisionReason":"R2"}"#;
        let blocked = pre(Mode::Camel, HookExit::Exited(2), deny);
        assert_eq!(
            (blocked.decision, blocked.status),
            (
                Some(Decision::Deny("Denied by preToolUse hook: R2".into())),
                Status::Blocked
            )
        );
        assert_eq!(blocked.parsed, serde_json::from_str(deny).ok());
        let ups = interpret(
            CopilotEvent::UserPromptSubmitted,
            Mode::Camel,
            "f",
            (&HookExit::Exited(2), 30),
            r#"{"decision":"block","reason":"no"}"#,
            "",
        );
        assert_eq!((ups.block, ups.parsed), (None, None));
        // cl_timeout_field: fail-open.
        let timed_out = pre(Mode::Camel, HookExit::TimedOut, "");
        assert_eq!(timed_out.decision, None);
        assert!(timed_out.failed().is_some());
    }

    #[test]
    fn other_events_read_their_fields() {
        let ups = interpret(
            CopilotEvent::UserPromptSubmitted,
            Mode::Pascal,
            "f",
            (&HookExit::Exited(0), 30),
            r#"{"decision":"block","reason":"no","hookSpecificOutput":{"additionalContext":"x"}}"#,
            "",
        );
        assert_eq!(ups.block.as_deref(), Some("no"));
        assert_eq!(ups.additional_context, None);
        // ups_exit2: a warning only.
        let warned = interpret(
            CopilotEvent::UserPromptSubmitted,
            Mode::Camel,
            "f",
            (&HookExit::Exited(2), 30),
            "",
            "careful",
        );
        assert_eq!(
            (warned.block, warned.warning.as_deref()),
            (None, Some("careful"))
        );
        // post_failure_context: exit 2's stderr is the context.
        let failure = interpret(
            CopilotEvent::PostToolUseFailure,
            Mode::Camel,
            "f",
            (&HookExit::Exited(2), 30),
            "",
            "FAIL-EXIT2-STDERR",
        );
        assert_eq!(
            failure.additional_context.as_deref(),
            Some("FAIL-EXIT2-STDERR")
        );
        // perm_exit2_and_interrupt.
        let perm = interpret(
            CopilotEvent::PermissionRequest,
            Mode::Camel,
            "f",
            (&HookExit::Exited(2), 30),
            "",
            "x",
        );
        assert_eq!(
            perm.decision,
            Some(Decision::Deny(
                "Permission denied by a PermissionRequest hook: Permission denied by hook.".into()
            ))
        );
    }

    #[test]
    fn a_key_of_the_wrong_type_reads_as_absent_and_spoils_no_other() {
        let reading = pre(
            Mode::Pascal,
            HookExit::Exited(0),
            r#"{"permissionDecisionReason": 5, "modifiedArgs": "x",
                "hookSpecificOutput": {"permissionDecision": "deny", "updatedInput": {"a": 1}},
                "additionalContext": "CTX"}"#,
        );
        assert_eq!(
            reading.decision,
            Some(Decision::Deny(deny_text(None))),
            "the top-level reason is not a string"
        );
        assert_eq!(
            reading.modified_args,
            Some(serde_json::json!({"a": 1})),
            "updatedInput wins over a flat modifiedArgs (cc_pascal_updated_null call 6)"
        );
        assert_eq!(reading.additional_context.as_deref(), Some("CTX"));
        let camel = pre(
            Mode::Camel,
            HookExit::Exited(0),
            r#"{"hookSpecificOutput": {"permissionDecision": "deny"}}"#,
        );
        assert_eq!(
            camel.decision, None,
            "camelCase entries have no hookSpecificOutput"
        );
    }

    fn modified(mode: Mode, stdout: &str) -> Option<Value> {
        pre(mode, HookExit::Exited(0), stdout).modified_args
    }

    #[test]
    fn a_camel_modified_args_counts_with_any_value_null_too() {
        use serde_json::json;
        // pre_modified_null, pre_modified_nonobject: the value as written.
        for (stdout, args) in [
            (r#"{"modifiedArgs": null}"#, Some(Value::Null)),
            (
                r#"{"modifiedArgs": null, "permissionDecision": "allow"}"#,
                Some(Value::Null),
            ),
            (
                r#"{"modifiedArgs": "echo STRING"}"#,
                Some(json!("echo STRING")),
            ),
            (r#"{"modifiedArgs": [1]}"#, Some(json!([1]))),
            (r#"{"modifiedArgs": 5}"#, Some(json!(5))),
            (r#"{"modifiedArgs": {}}"#, Some(json!({}))),
            (r#"{"permissionDecision": "allow"}"#, None),
            // pre_updated_input_cc: camelCase entries read no updatedInput.
            (
                r#"{"hookSpecificOutput": {"updatedInput": {"command": "x"}}}"#,
                None,
            ),
        ] {
            assert_eq!(modified(Mode::Camel, stdout), args, "{stdout}");
        }
    }

    #[test]
    fn a_pascal_updated_input_counts_unless_null_and_wins_over_the_flat_key() {
        use serde_json::json;
        let hso = |inner: &str, flat: &str| {
            format!(r#"{{"hookSpecificOutput": {{"hookEventName": "PreToolUse"{inner}}}{flat}}}"#)
        };
        for (stdout, args) in [
            // cc_pascal_updated_null 1, 3; cc_pascal_updated_input 1.
            (hso(r#", "updatedInput": null"#, ""), None),
            (hso(r#", "updatedInput": "s""#, ""), Some(json!("s"))),
            (
                hso(r#", "updatedInput": {"c": 1}"#, ""),
                Some(json!({"c": 1})),
            ),
            // cc_pascal_updated_null 5, 8: updatedInput wins.
            (
                hso(r#", "updatedInput": {"c": 5}"#, r#", "modifiedArgs": null"#),
                Some(json!({"c": 5})),
            ),
            (
                hso(
                    r#", "updatedInput": {"c": 8}"#,
                    r#", "modifiedArgs": {"c": 0}"#,
                ),
                Some(json!({"c": 8})),
            ),
            // cc_pascal_modified_null 1, 3, 4: the flat key, null too.
            (r#"{"modifiedArgs": null}"#.to_owned(), Some(Value::Null)),
            (
                hso(r#", "updatedInput": null"#, r#", "modifiedArgs": {"c": 3}"#),
                Some(json!({"c": 3})),
            ),
            (
                hso(r#", "updatedInput": null"#, r#", "modifiedArgs": null"#),
                Some(Value::Null),
            ),
        ] {
            assert_eq!(modified(Mode::Pascal, &stdout), args, "{stdout}");
        }
    }
}
