//! The interpreter's unit tests.
#![allow(clippy::unwrap_used)]
use super::*;

fn id(s: &str) -> String {
    s.to_owned()
}

fn pre(command: &str) -> EventCtx<'_> {
    pre_tool("Bash", command)
}

fn pre_tool<'a>(tool: &'a str, command: &'a str) -> EventCtx<'a> {
    EventCtx {
        event: HookEvent::PreToolUse,
        tool_name: Some(tool),
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
            text: "PreToolUse:Bash hook error: [CMD]: STDERR-REASON\n".into()
        }
    );
    assert_eq!(out.parsed, ParsedOutput::IgnoredOnExit2);
}

/// `b2_pre_exit2_json`: a legacy block printed by a hook that exits 2 is shown
/// by its reason alone; any other stdout leaves the stderr frame.
#[test]
fn exit2_with_a_legacy_block_on_stdout_shows_its_reason() {
    let facts = HookFacts::exited(
        2,
        r#"{"decision":"block","reason":"JSON-REASON-R"}"#,
        "npm-exec-noise\n",
    );
    let out = interpret(&pre("CMD"), &facts, &id);
    assert_eq!(
        out.effect,
        Effect::Deny {
            text: "PreToolUse:Bash hook error: JSON-REASON-R".into()
        }
    );
    let facts = HookFacts::exited(2, r#"{"decision":"approve","reason":"R"}"#, "STDERR\n");
    let out = interpret(&pre("CMD"), &facts, &id);
    assert_eq!(
        out.effect,
        Effect::Deny {
            text: "PreToolUse:Bash hook error: [CMD]: STDERR\n".into()
        }
    );
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

fn deny_json(reason: &str) -> String {
    serde_json::json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": reason,
    }})
    .to_string()
}

/// `nl_deny_*`: the JSON deny's frame depends on the tool, and the reason
/// keeps its newline either way.
#[test]
fn json_deny_frame_per_tool() {
    let cases = [
        ("Read", "R\n"),
        ("Write", "R\n"),
        ("Edit", "R\n"),
        ("Bash", "PreToolUse:Bash hook error: R\n"),
        ("Glob", "PreToolUse:Glob hook error: R\n"),
        ("Grep", "PreToolUse:Grep hook error: R\n"),
        (
            "mcp__echo__echo",
            "PreToolUse:mcp__echo__echo hook error: R\n",
        ),
    ];
    for (tool, want) in cases {
        let out = interpret(
            &pre_tool(tool, "CMD"),
            &HookFacts::exited(0, deny_json("R\n"), ""),
            &id,
        );
        assert_eq!(out.effect, Effect::Deny { text: want.into() }, "{tool}");
    }
}

/// Exit 2 is labelled for every tool (only a blocking error, no decision).
#[test]
fn exit2_is_labelled_for_file_tools_too() {
    let out = interpret(
        &pre_tool("Read", "CMD"),
        &HookFacts::exited(2, "", "\nNO\n"),
        &id,
    );
    assert_eq!(
        out.effect,
        Effect::Deny {
            text: "PreToolUse:Read hook error: [CMD]: \nNO\n".into()
        }
    );
}

/// Whitespace-only stderr is Claude Code's placeholder, not a blank reason.
#[test]
fn exit2_whitespace_only_stderr_is_the_placeholder() {
    let out = interpret(&pre("CMD"), &HookFacts::exited(2, "", " \n"), &id);
    assert_eq!(
        out.effect,
        Effect::Deny {
            text: "PreToolUse:Bash hook error: [CMD]: No stderr output".into()
        }
    );
}

/// `nl_stop_exit2` and `nl_post_exit2`: verbatim stderr in Stop feedback and
/// in the PostToolUse blocking error.
#[test]
fn exit2_texts_keep_newlines() {
    let stop = EventCtx {
        event: HookEvent::Stop,
        tool_name: None,
        source: None,
        prompt: None,
        command: "CMD",
    };
    let out = interpret(
        &stop,
        &HookFacts::exited(2, "", "\nNL-STOP: keep going\n"),
        &id,
    );
    match merge_stop(&[&out], 0, 0) {
        StopMerge::Continue { reason, .. } => assert_eq!(
            reason,
            "Stop hook feedback:\n[CMD]: \nNL-STOP: keep going\n"
        ),
        other => panic!("{other:?}"),
    }
    let post = EventCtx {
        event: HookEvent::PostToolUse,
        tool_name: Some("Bash"),
        source: None,
        prompt: None,
        command: "CMD",
    };
    let out = interpret(
        &post,
        &HookFacts::exited(2, "", "NL-POST: bad output\n"),
        &id,
    );
    assert_eq!(
        out.contexts,
        vec![
            "PostToolUse:Bash hook blocking error from command: \"CMD\": [CMD]: NL-POST: bad output\n"
                .to_owned()
        ]
    );
}

/// The event facts `dsh hooks check` reads agree with the interpreter:
/// exit 2 blocks (or feeds back) exactly where `exit2_blocks` says so.
#[test]
fn exit2_blocks_is_what_the_interpreter_does() {
    for event in HookEvent::ALL {
        let ctx = EventCtx {
            event,
            tool_name: event.is_tool_event().then_some("Bash"),
            source: Some("startup"),
            prompt: Some("Please run echo hi"),
            command: "CMD",
        };
        let out = interpret(&ctx, &HookFacts::exited(2, "", "NO"), &|t: &str| {
            t.to_owned()
        });
        let blocks = matches!(out.effect, Effect::Deny { .. } | Effect::Block { .. });
        assert_eq!(blocks, event.exit2_blocks(), "{event}: {out:?}");
    }
    assert!(!HookEvent::PermissionRequest.exit2_blocks());
    assert!(HookEvent::PostToolBatch.exit2_blocks());
}

fn pre_compact(command: &str) -> EventCtx<'_> {
    EventCtx {
        event: HookEvent::PreCompact,
        tool_name: None,
        source: None,
        prompt: None,
        command,
    }
}

#[test]
fn pre_compact_exit2_blocks_with_the_captured_text() {
    // cmp_precompact_exit2.
    let out = interpret(
        &pre_compact("CMD"),
        &HookFacts::exited(2, "", "PRECOMPACT-EXIT2: not now"),
        &id,
    );
    assert_eq!(
        out.effect,
        Effect::Block {
            text: "Compaction blocked by PreCompact hook: [CMD]: PRECOMPACT-EXIT2: not now".into()
        }
    );
}

#[test]
fn pre_compact_plain_stdout_is_kept_for_the_summary_instructions() {
    // OBSERVED §5.7 (r2_compact_resume): appended to the compaction instructions.
    let out = interpret(
        &pre_compact("CMD"),
        &HookFacts::exited(0, "PRECOMPACT-STDOUT\n", ""),
        &id,
    );
    assert_eq!(out.effect, Effect::None);
    assert_eq!(out.contexts, vec!["PRECOMPACT-STDOUT".to_owned()]);
    // PostCompact's stdout reaches nobody (cmp_post_and_ss_outputs).
    let post = EventCtx {
        event: HookEvent::PostCompact,
        ..pre_compact("CMD")
    };
    let out = interpret(
        &post,
        &HookFacts::exited(0, "POSTCOMPACT-STDOUT\n", ""),
        &id,
    );
    assert!(out.contexts.is_empty());
}

#[test]
fn pre_compact_json_block_skips_compaction_in_the_same_frame() {
    let out = interpret(
        &pre_compact("CMD"),
        &HookFacts::exited(0, r#"{"decision":"block","reason":"busy"}"#, ""),
        &id,
    );
    assert_eq!(
        out.effect,
        Effect::Block {
            text: "Compaction blocked by PreCompact hook: [CMD]: busy".into()
        }
    );
}

fn task(event: HookEvent) -> EventCtx<'static> {
    EventCtx {
        event,
        tool_name: None,
        source: None,
        prompt: None,
        command: "CMD",
    }
}

/// TaskCreated and TaskCompleted: exit 2 blocks with stderr (PROTOCOL.md:
/// the task is rolled back, stderr reaches the model).
#[test]
fn task_events_block_on_exit2() {
    for event in [HookEvent::TaskCreated, HookEvent::TaskCompleted] {
        let facts = HookFacts::exited(2, "", "not yet\n");
        let out = interpret(&task(event), &facts, &id);
        assert_eq!(
            out.effect,
            Effect::Block {
                text: "[CMD]: not yet\n".into()
            },
            "{event}"
        );
        assert!(out.user_notices.is_empty(), "{event}");
    }
}

/// `decision: "block"` cancels a TaskCreated (style A); on TaskCompleted it
/// is recorded as ignored, and `continue: false` stops nothing on either.
#[test]
fn task_created_takes_a_json_block() {
    let facts = HookFacts::exited(0, r#"{"decision":"block","reason":"too vague"}"#, "");
    let out = interpret(&task(HookEvent::TaskCreated), &facts, &id);
    assert_eq!(
        out.effect,
        Effect::Block {
            text: "too vague".into()
        }
    );
    let out = interpret(&task(HookEvent::TaskCompleted), &facts, &id);
    assert_eq!(out.effect, Effect::None);
    assert_eq!(out.ignored.len(), 1, "{:?}", out.ignored);
    let facts = HookFacts::exited(0, r#"{"continue":false,"stopReason":"halt"}"#, "");
    let out = interpret(&task(HookEvent::TaskCreated), &facts, &id);
    assert_eq!(out.effect, Effect::None);
    assert_eq!(out.stop, None);
    assert!(out.ignored[0].starts_with("continue:"), "{:?}", out.ignored);
}

/// The first schema failure, in Claude Code's order and words, for answers
/// with keys of the wrong type; unknown keys and keys another event types
/// are tolerated.
#[test]
fn schema_errors_name_the_first_bad_key() {
    use HookEvent::{MessageDisplay, PermissionRequest, PreModelSwitch, PreToolUse, Stop};
    let cases: &[(HookEvent, &str, Result<(), &str>)] = &[
        (Stop, r#"{"whatever":[1],"continue":true}"#, Ok(())),
        (
            Stop,
            r#"{"reason":5,"continue":"no"}"#,
            Err("continue: Invalid input: expected boolean, received string"),
        ),
        (
            Stop,
            r#"{"continue":null}"#,
            Err("continue: Invalid input: expected boolean, received null"),
        ),
        (
            Stop,
            r#"{"decision":"deny"}"#,
            Err(r#"decision: Invalid option: expected one of "approve"|"block""#),
        ),
        (
            Stop,
            r#"{"decision":3}"#,
            Err(r#"decision: Invalid option: expected one of "approve"|"block""#),
        ),
        (
            Stop,
            r#"{"terminalSequence":{}}"#,
            Err("terminalSequence: Invalid input: expected string, received object"),
        ),
        (
            Stop,
            r#"{"hookSpecificOutput":[]}"#,
            Err("hookSpecificOutput: Invalid input: expected object, received array"),
        ),
        (
            Stop,
            r#"{"hookSpecificOutput":{"additionalContext":1.5}}"#,
            Err(
                "hookSpecificOutput.additionalContext: Invalid input: expected string, received number",
            ),
        ),
        (
            Stop,
            r#"{"hookSpecificOutput":{"permissionDecision":"maybe","updatedInput":1}}"#,
            Ok(()),
        ),
        (
            PreToolUse,
            r#"{"hookSpecificOutput":{"permissionDecision":"maybe"}}"#,
            Err(
                r#"hookSpecificOutput.permissionDecision: Invalid option: expected one of "allow"|"deny"|"ask"|"defer""#,
            ),
        ),
        (
            PreToolUse,
            r#"{"hookSpecificOutput":{"permissionDecision":"defer","updatedInput":[]}}"#,
            Err("hookSpecificOutput.updatedInput: Invalid input: expected object, received array"),
        ),
        (
            PreModelSwitch,
            r#"{"hookSpecificOutput":{"permissionDecision":"defer"}}"#,
            Err(
                r#"hookSpecificOutput.permissionDecision: Invalid option: expected one of "allow"|"deny"|"ask""#,
            ),
        ),
        (
            MessageDisplay,
            r#"{"hookSpecificOutput":{"displayContent":false}}"#,
            Err(
                "hookSpecificOutput.displayContent: Invalid input: expected string, received boolean",
            ),
        ),
        (
            PermissionRequest,
            r#"{"hookSpecificOutput":{"decision":"allow"}}"#,
            Err("hookSpecificOutput.decision: Invalid input: expected object, received string"),
        ),
        (
            PermissionRequest,
            r#"{"hookSpecificOutput":{"decision":{"behavior":"ask"}}}"#,
            Err(
                r#"hookSpecificOutput.decision.behavior: Invalid option: expected one of "allow"|"deny""#,
            ),
        ),
        (
            PermissionRequest,
            r#"{"hookSpecificOutput":{"decision":{"behavior":"deny","interrupt":"yes"}}}"#,
            Err(
                "hookSpecificOutput.decision.interrupt: Invalid input: expected boolean, received string",
            ),
        ),
    ];
    for (event, json, want) in cases {
        let json: Value = serde_json::from_str(json).unwrap();
        assert_eq!(
            validate(&json, *event),
            want.map_err(str::to_owned),
            "{event} {json}"
        );
    }
}

fn permission_request() -> EventCtx<'static> {
    EventCtx {
        event: HookEvent::PermissionRequest,
        tool_name: Some("Bash"),
        source: None,
        prompt: None,
        command: "CMD",
    }
}

/// `updatedPermissions` that are not permission updates are recorded as
/// ignored with serde's reason; the allow and its `updatedInput` stand.
#[test]
fn unreadable_updated_permissions_are_ignored_with_the_reason() {
    let stdout = r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"ls"},"updatedPermissions":[{"type":"nope"}]}}}"#;
    let out = interpret(
        &permission_request(),
        &HookFacts::exited(0, stdout, ""),
        &id,
    );
    assert_eq!(out.effect, Effect::Allow { reason: None });
    assert_eq!(
        out.updated_input,
        Some(serde_json::json!({"command": "ls"}))
    );
    let why = serde_json::from_value::<Vec<PermissionUpdate>>(serde_json::json!([{"type":"nope"}]))
        .unwrap_err();
    assert_eq!(
        out.ignored,
        vec![format!(
            "updatedPermissions: not a list of permission updates ({why})"
        )]
    );
    let deny = r#"{"hookSpecificOutput":{"decision":{"behavior":"deny","interrupt":true}}}"#;
    let out = interpret(&permission_request(), &HookFacts::exited(0, deny, ""), &id);
    assert_eq!(
        out.effect,
        Effect::Deny {
            text: BLOCKED_BY_HOOK.into()
        }
    );
    assert_eq!(out.stop, Some(String::new()));
}

/// An MCP tool's output replaced with JSON `null` is replaced with `null`
/// (present is not the same as absent).
#[test]
fn a_null_mcp_output_replacement_is_kept() {
    let ctx = EventCtx {
        event: HookEvent::PostToolUse,
        tool_name: Some("mcp__echo__echo"),
        source: None,
        prompt: None,
        command: "CMD",
    };
    let stdout =
        r#"{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedMCPToolOutput":null}}"#;
    let out = interpret(&ctx, &HookFacts::exited(0, stdout, ""), &id);
    assert_eq!(out.replace_output, Some(Value::Null));
}

/// An exit-2 stdout that is a JSON array is not a legacy block, whatever
/// its elements.
#[test]
fn an_exit2_array_on_stdout_is_not_a_block_answer() {
    let facts = HookFacts::exited(2, r#"[true,false,"x","block","why"]"#, "err\n");
    let out = interpret(&pre("CMD"), &facts, &id);
    assert_eq!(
        out.effect,
        Effect::Deny {
            text: "PreToolUse:Bash hook error: [CMD]: err\n".into()
        }
    );
}

/// Each event reads only its own `hookSpecificOutput` keys: another event's
/// keys (even of a wrong type) neither act nor fail the schema, and the
/// event's own keys act.
#[test]
fn each_event_reads_only_its_own_specific_keys() {
    let stdout = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no","retry":"x","updatedMCPToolOutput":1,"decision":"allow","worktreePath":2}}"#;
    let out = interpret(
        &pre_tool("Bash", "CMD"),
        &HookFacts::exited(0, stdout, ""),
        &id,
    );
    assert!(
        matches!(out.parsed, ParsedOutput::Json(_)),
        "{:?}",
        out.parsed
    );
    assert_eq!(
        out.effect,
        Effect::Deny {
            text: "PreToolUse:Bash hook error: no".to_owned()
        }
    );
    assert!(!out.retry && out.replace_output.is_none());
    let parsed = parse_stdout(stdout, HookEvent::PreToolUse);
    let worktree: Option<keys::WorktreeKeys> = parsed.event_keys();
    assert_eq!(
        worktree.map(|keys| keys.worktree_path.written().map(str::to_owned)),
        Some(Some("2".to_owned()))
    );

    // PermissionDenied: its `retry`, and a PreToolUse key it does not read.
    let denied = EventCtx {
        event: HookEvent::PermissionDenied,
        tool_name: Some("Bash"),
        source: None,
        prompt: None,
        command: "CMD",
    };
    let stdout = r#"{"hookSpecificOutput":{"retry":true,"permissionDecision":"maybe"}}"#;
    let out = interpret(&denied, &HookFacts::exited(0, stdout, ""), &id);
    assert!(out.retry);
    assert_eq!(out.effect, Effect::None);
}
