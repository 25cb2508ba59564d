//! Matchers, tool presentation, model-facing texts.

#![allow(clippy::unwrap_used, clippy::type_complexity)]

use std::path::Path;
use std::time::Duration;

use dsh_hook_runner::HookExit;
use dsh_hooks::names::Tabled;
use dsh_hooks_codex::CodexEvent;
use dsh_hooks_codex::matcher::{Matcher, tool_aliases};
use dsh_hooks_codex::output::{Effect, RunFacts, interpret};
use dsh_hooks_codex::plugin::{hook_prompt, permission_denied_text, pre_tool_block_text, turn_id};
use dsh_hooks_codex::tools;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// What a hook reads: the JSON of a typed input or response.
fn wire(typed: impl serde::Serialize) -> Value {
    serde_json::to_value(typed).unwrap()
}

fn matches(pattern: Option<&str>, name: &str) -> bool {
    Matcher::compile(pattern)
        .unwrap()
        .matches(name, tool_aliases(name))
}

#[test]
fn matcher_table_from_the_captures() {
    assert!(!matches(Some("^NoSuchTool$"), "Bash"));
    assert!(matches(Some("^Bash$"), "Bash"));
    assert!(matches(Some("Bash|apply_patch"), "Bash"));
    assert!(matches(Some("Bash|apply_patch"), "apply_patch"));
    assert!(matches(Some("*"), "Bash"));
    assert!(matches(Some(""), "Bash"));
    assert!(matches(None, "Bash"));
    assert!(!matches(Some("shell|exec_command"), "Bash"));
    assert!(matches(Some("Edit"), "apply_patch"));
    assert!(matches(Some("Write"), "apply_patch"));
    assert!(!matches(Some("Bash"), "BashOutput"), "exact alternatives");
    assert!(matches(Some("Ba.h"), "BashOutput"), "regex is unanchored");
    assert!(matches(Some("startup"), "startup"));
    assert!(!matches(Some("resume"), "startup"));
    assert!(!matches(Some("Agent"), "collaborationspawn_agent"));
    assert!(Matcher::compile(Some("(unclosed")).is_err());
}

#[test]
fn bash_is_presented_as_codex_bash() {
    let args = json!({"command": "echo hi", "description": "say hi", "timeout": 5000});
    assert_eq!(tools::hook_tool_name("bash"), "Bash");
    assert_eq!(
        wire(tools::hook_tool_input("bash", &args, Path::new("/p"), None)),
        json!({"command": "echo hi"})
    );
    let response = tools::hook_tool_response(
        "bash",
        &args,
        Path::new("/p"),
        true,
        "Exit code 3\nout\nerr",
        Some(&json!({"stdout": "out\n", "stderr": "err\n", "exit_code": 3})),
        Duration::ZERO,
    );
    assert_eq!(wire(response), json!("out\nerr\n"));
    // dsh's bash tool trims trailing newlines from its value; Codex hooks
    // still see each stream's final newline (captures/post_failing_command).
    let trimmed = tools::hook_tool_response(
        "bash",
        &args,
        Path::new("/p"),
        true,
        "Exit code 3\nout\nerr",
        Some(&json!({"stdout": "out", "stderr": "err", "exit_code": 3})),
        Duration::ZERO,
    );
    assert_eq!(wire(trimmed), json!("out\nerr\n"));
    let pre = tools::hook_tool_input("bash", &args, Path::new("/p"), None);
    assert_eq!(
        wire(tools::permission_tool_input(&pre, "bash", &args)),
        json!({"command": "echo hi", "description": "say hi"})
    );
}

#[test]
fn write_and_edit_are_rendered_as_apply_patch() {
    let cwd = Path::new("/proj");
    let write = json!({"file_path": "/proj/hello.txt", "content": "hello from patch\n"});
    let input = tools::hook_tool_input("write", &write, cwd, None);
    // Byte-identical to captures/apply_patch (Add File).
    assert_eq!(
        wire(&input),
        json!({"command": "*** Begin Patch\n*** Add File: hello.txt\n+hello from patch\n*** End Patch\n"})
    );
    assert_eq!(tools::hook_tool_name("write"), "apply_patch");
    assert_eq!(
        wire(tools::permission_tool_input(&input, "write", &write)),
        json!({"command": "*** Begin Patch\n*** Add File: hello.txt\n+hello from patch\n*** End Patch"})
    );
    let response = tools::hook_tool_response(
        "write",
        &write,
        cwd,
        false,
        "ok",
        Some(&json!({"type": "create"})),
        Duration::from_millis(20),
    );
    assert_eq!(
        wire(response),
        json!(
            "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nA hello.txt\n"
        )
    );

    let overwrite = tools::hook_tool_input("write", &write, cwd, Some("old\n"));
    assert_eq!(
        overwrite.command().unwrap(),
        "*** Begin Patch\n*** Update File: hello.txt\n@@\n-old\n+hello from patch\n*** End Patch\n"
    );

    let edit = json!({"file_path": "/elsewhere/a.rs", "old_string": "a\nb", "new_string": "c"});
    assert_eq!(
        tools::hook_tool_input("edit", &edit, cwd, None)
            .command()
            .unwrap(),
        "*** Begin Patch\n*** Update File: /elsewhere/a.rs\n@@\n-a\n-b\n+c\n*** End Patch\n"
    );
    let response = tools::hook_tool_response("edit", &edit, cwd, false, "ok", None, Duration::ZERO);
    assert!(
        wire(response)
            .as_str()
            .unwrap()
            .ends_with("M /elsewhere/a.rs\n")
    );
}

#[test]
fn rewritten_inputs_map_back_to_dsh_arguments() {
    let cwd = Path::new("/proj");
    let original = json!({"command": "echo hi", "description": "d"});
    assert_eq!(
        tools::arguments_from_updated_input(
            "bash",
            &original,
            &json!({"command": "echo rewritten"}),
            cwd
        )
        .unwrap(),
        json!({"command": "echo rewritten", "description": "d"})
    );
    assert_eq!(
        tools::arguments_from_updated_input("bash", &original, &json!({"cmd": 1}), cwd)
            .unwrap_err(),
        tools::UPDATED_INPUT_NO_COMMAND
    );
    let patch = json!({"command": "*** Begin Patch\n*** Add File: b.txt\n+x\n+y\n*** End Patch\n"});
    assert_eq!(
        tools::arguments_from_updated_input("write", &json!({}), &patch, cwd).unwrap(),
        json!({"file_path": "/proj/b.txt", "content": "x\ny\n"})
    );
    let patch = json!({"command": "*** Begin Patch\n*** Update File: a.rs\n@@\n keep\n-old\n+new\n*** End Patch"});
    assert_eq!(
        tools::arguments_from_updated_input("edit", &json!({}), &patch, cwd).unwrap(),
        json!({"file_path": "/proj/a.rs", "old_string": "keep\nold", "new_string": "keep\nnew"})
    );
    assert!(
        tools::arguments_from_updated_input("write", &json!({}), &json!({"command": "nope"}), cwd)
            .is_err()
    );
}

#[test]
fn model_facing_texts() {
    assert_eq!(
        pre_tool_block_text(
            "blocked by policy: no echo allowed",
            &tools::HookToolInput::Arguments(json!({"command": "echo hi"}))
        ),
        "Command blocked by PreToolUse hook: blocked by policy: no echo allowed. Command: echo hi"
    );
    assert_eq!(
        pre_tool_block_text(
            "no patching",
            &tools::HookToolInput::Command {
                command:
                    "*** Begin Patch\n*** Add File: hello.txt\n+hello from patch\n*** End Patch\n"
                        .into(),
                description: None
            }
        ),
        "Command blocked by PreToolUse hook: no patching. Command: *** Begin Patch\n*** Add File: hello.txt\n+hello from patch\n*** End Patch\n"
    );
    assert_eq!(
        hook_prompt(
            CodexEvent::Stop,
            0,
            Path::new("<CODEX_HOME>/hooks.json"),
            "please continue: run one more check"
        ),
        "<hook_prompt hook_run_id=\"stop:0:<CODEX_HOME>/hooks.json\">please continue: run one more check</hook_prompt>"
    );
    assert_eq!(
        permission_denied_text("bash", "denied by permission hook"),
        "exec_command failed: CreateProcess { message: \"Rejected(\\\"denied by permission hook\\\")\" }"
    );
    assert_eq!(
        permission_denied_text("write", "permission exit2 deny"),
        "permission exit2 deny"
    );
    assert_eq!(turn_id("s", 1), turn_id("s", 1));
    assert_ne!(turn_id("s", 1), turn_id("s", 2));
    assert_eq!(turn_id("s", 1).len(), 36);
}

fn run(
    event: CodexEvent,
    code: i32,
    stdout: &str,
    stderr: &str,
) -> dsh_hooks_codex::output::Interpretation {
    interpret(
        event,
        &RunFacts {
            exit: HookExit::Exited(code),
            timeout_secs: 0,
            stdout,
            stderr,
        },
    )
}

fn error(i: &dsh_hooks_codex::output::Interpretation) -> String {
    i.entries
        .iter()
        .map(|e| format!("{}:{}", e.kind.as_str(), e.text))
        .collect::<Vec<_>>()
        .join("|")
}

#[test]
fn pre_tool_use_failures_from_observed_scenarios() {
    let e = CodexEvent::PreToolUse;
    let cases = [
        (
            2,
            "",
            "",
            "error:PreToolUse hook exited with code 2 but did not write a blocking reason to stderr",
        ),
        (
            0,
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask"}}"#,
            "",
            "error:PreToolUse hook returned unsupported permissionDecision:ask",
        ),
        (
            0,
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}"#,
            "",
            "error:PreToolUse hook returned unsupported permissionDecision:allow",
        ),
        (
            0,
            r#"{"decision":"approve","reason":"ok"}"#,
            "",
            "error:PreToolUse hook returned unsupported decision:approve",
        ),
        (
            0,
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}}"#,
            "",
            "error:PreToolUse hook returned permissionDecision:deny without a non-empty permissionDecisionReason",
        ),
        (
            0,
            r#"{"continue":false,"stopReason":"pre says stop"}"#,
            "",
            "error:PreToolUse hook returned unsupported continue:false",
        ),
        (
            0,
            r#"{"foo":1}"#,
            "",
            "error:hook returned invalid pre-tool-use JSON output",
        ),
        (3, "", "boom", "error:hook exited with code 3"),
    ];
    for (code, stdout, stderr, expected) in cases {
        let i = run(e, code, stdout, stderr);
        assert_eq!(i.status.as_str(), "failed", "{stdout}");
        assert_eq!(error(&i), expected);
        assert_eq!(i.effect, Effect::None);
    }
    // exit 2 wins over stdout JSON
    let i = run(
        e,
        2,
        r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}"#,
        "stderr reason\n",
    );
    assert_eq!(
        i.effect,
        Effect::Block {
            reason: "stderr reason".into()
        }
    );
    let i = run(
        e,
        0,
        r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"echo rewritten"}}}"#,
        "",
    );
    assert_eq!(
        i.effect,
        Effect::Rewrite {
            updated_input: json!({"command": "echo rewritten"})
        }
    );
    assert_eq!(i.status.as_str(), "completed");
}

#[test]
fn other_events_follow_codex() {
    let i = run(
        CodexEvent::UserPromptSubmit,
        0,
        "log line first\n{\"decision\":\"block\",\"reason\":\"x\"}",
        "",
    );
    assert_eq!(
        i.contexts,
        vec!["log line first\n{\"decision\":\"block\",\"reason\":\"x\"}"]
    );
    let i = run(
        CodexEvent::UserPromptSubmit,
        0,
        "\n  {\"hookSpecificOutput\":{\"hookEventName\":\"UserPromptSubmit\",\"additionalContext\":\"WS-CTX\"}}  \n",
        "",
    );
    assert_eq!(i.contexts, vec!["WS-CTX"]);
    let i = run(CodexEvent::UserPromptSubmit, 2, "", "");
    assert_eq!(
        error(&i),
        "error:UserPromptSubmit hook exited with code 2 but did not write a blocking reason to stderr"
    );
    let i = run(CodexEvent::SessionStart, 2, "", "whatever");
    assert_eq!(error(&i), "error:hook exited with code 2");
    let i = run(CodexEvent::Stop, 0, r#"{"decision":"block"}"#, "");
    assert_eq!(
        error(&i),
        "error:Stop hook returned decision:block without a non-empty reason"
    );
    let i = run(
        CodexEvent::Stop,
        0,
        r#"{"continue":false,"stopReason":"stop says halt"}"#,
        "",
    );
    assert_eq!(
        (i.status.as_str(), i.effect),
        (
            "stopped",
            Effect::Stop {
                reason: Some("stop says halt".into())
            }
        )
    );
    let i = run(CodexEvent::PreModelRequest, 2, "", "pre-model block");
    assert_eq!(error(&i), "error:pre-model block");
    let i = run(
        CodexEvent::PreModelRequest,
        0,
        r#"{"decision":"block","reason":"x"}"#,
        "",
    );
    assert_eq!((i.status.as_str(), i.effect), ("completed", Effect::None));
    let i = run(
        CodexEvent::PermissionRequest,
        0,
        r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny"}}}"#,
        "",
    );
    assert_eq!(
        i.effect,
        Effect::PermissionDeny {
            message: "PermissionRequest hook denied approval".into()
        }
    );
    let i = run(
        CodexEvent::PermissionRequest,
        0,
        r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedPermissions":[]}}}"#,
        "",
    );
    assert_eq!(
        error(&i),
        "error:PermissionRequest hook returned unsupported updatedPermissions"
    );
    let i = run(
        CodexEvent::PermissionRequest,
        2,
        "",
        "permission exit2 deny\n",
    );
    assert_eq!(
        (i.status.as_str(), i.effect),
        (
            "blocked",
            Effect::PermissionDeny {
                message: "permission exit2 deny".into()
            }
        )
    );
    let i = run(CodexEvent::Interrupt, 0, "not json", "");
    assert_eq!(error(&i), "error:Interrupt hook returned non-JSON stdout");
    let i = interpret(
        CodexEvent::PreToolUse,
        &RunFacts {
            exit: HookExit::TimedOut,
            timeout_secs: 2,
            stdout: "",
            stderr: "",
        },
    );
    assert_eq!(error(&i), "error:hook timed out after 2s");
    let i = interpret(
        CodexEvent::PreToolUse,
        &RunFacts {
            exit: HookExit::Signaled(9),
            timeout_secs: 0,
            stdout: "",
            stderr: "",
        },
    );
    assert_eq!(error(&i), "error:hook exited without a status code");
    for (exit, text) in [
        (HookExit::Cancelled, "error:hook cancelled"),
        (HookExit::SpawnFailed("no sh".into()), "error:no sh"),
        (HookExit::Responded(502), "error:HTTP status 502"),
    ] {
        let facts = RunFacts {
            exit,
            timeout_secs: 0,
            stdout: "{}",
            stderr: "",
        };
        assert_eq!(error(&interpret(CodexEvent::PreToolUse, &facts)), text);
    }
}

/// The event facts `dsh hooks check` reads agree with the interpreter:
/// exit 2 with a reason blocks exactly where `exit2_blocks` says so.
#[test]
fn exit2_blocks_is_what_the_interpreter_does() {
    for event in CodexEvent::all() {
        let out = interpret(
            event,
            &RunFacts {
                exit: HookExit::Exited(2),
                timeout_secs: 0,
                stdout: "",
                stderr: "NO",
            },
        );
        let blocks = matches!(
            out.effect,
            Effect::Block { .. } | Effect::PermissionDeny { .. }
        );
        assert_eq!(blocks, event.exit2_blocks(), "{event}: {out:?}");
    }
}

/// `updatedInput`/`updatedPermissions` on a PermissionRequest and
/// `updatedMCPToolOutput` on a PostToolUse are read for their presence
/// only: any shape fails the run as unsupported, `null` reads as absent.
#[test]
fn unsupported_keys_fail_in_any_shape_and_null_is_absent() {
    let permission = |decision: &str| {
        run(
            CodexEvent::PermissionRequest,
            0,
            &format!(
                r#"{{"hookSpecificOutput":{{"hookEventName":"PermissionRequest","decision":{{"behavior":"allow"{decision}}}}}}}"#
            ),
            "",
        )
    };
    let post = |specific: &str| {
        run(
            CodexEvent::PostToolUse,
            0,
            &format!(r#"{{"hookSpecificOutput":{{"hookEventName":"PostToolUse"{specific}}}}}"#),
            "",
        )
    };
    for shape in [r#"{"a":[1,{"b":null}]}"#, "[]", "\"x\"", "0", "false"] {
        for key in ["updatedInput", "updatedPermissions"] {
            let i = permission(&format!(r#","{key}":{shape}"#));
            assert_eq!(
                (i.status.as_str(), error(&i)),
                (
                    "failed",
                    format!("error:PermissionRequest hook returned unsupported {key}")
                ),
                "{key}: {shape}"
            );
        }
        let i = post(&format!(r#","updatedMCPToolOutput":{shape}"#));
        assert_eq!(
            error(&i),
            "error:PostToolUse hook returned unsupported updatedMCPToolOutput",
            "{shape}"
        );
    }
    let i = permission(r#","updatedInput":null,"updatedPermissions":null"#);
    assert_eq!(
        (i.status.as_str(), i.effect),
        ("completed", Effect::PermissionAllow)
    );
    let i = post(r#","updatedMCPToolOutput":null"#);
    assert_eq!((i.status.as_str(), error(&i)), ("completed", String::new()));
}
