//! The interpreter's unit tests.
#![allow(clippy::unwrap_used)]
use super::*;

fn id(s: &str) -> String {
    s.to_owned()
}

fn pre(command: &str) -> EventCtx<'_> {
    EventCtx {
        event: HookEvent::PreToolUse,
        tool_name: Some("Bash"),
        source: None,
        prompt: None,
        command,
    }
}

#[test]
fn exit2_ignores_stdout_and_uses_stderr() {
    let facts = HookFacts::exited(
        2,
        r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}"#,
        "STDERR-REASON\n",
    );
    let out = interpret(&pre("CMD"), &facts, &id);
    assert_eq!(
        out.effect,
        Effect::Deny {
            text: "PreToolUse:Bash hook error: [CMD]: STDERR-REASON".into()
        }
    );
    assert_eq!(out.parsed, ParsedOutput::IgnoredOnExit2);
}

#[test]
fn leading_whitespace_before_json_is_allowed() {
    let out = interpret(
        &pre("CMD"),
        &HookFacts::exited(0, "  \n{\"decision\":\"block\"}", ""),
        &id,
    );
    assert_eq!(
        out.effect,
        Effect::Deny {
            text: "PreToolUse:Bash hook error: Blocked by hook".into()
        }
    );
}

#[test]
fn merge_precedence() {
    let allow = Effect::Allow { reason: None };
    let ask = Effect::Ask { reason: None };
    let deny = Effect::Deny { text: "d".into() };
    let defer = Effect::Defer { reason: None };
    assert_eq!(winning_permission(&[&allow, &ask, &deny, &defer]), Some(2));
    assert_eq!(winning_permission(&[&allow, &ask, &defer]), Some(2));
    assert_eq!(winning_permission(&[&allow, &ask]), Some(1));
    assert_eq!(winning_permission(&[&Effect::None]), None);
}
