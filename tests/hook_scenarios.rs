//! Real-world Claude Code and Codex hook scripts, unchanged, driven by
//! fixture transcripts through `dsh replay`: one snapshot of the session log
//! and one of the model requests per scenario, plus targeted assertions.

use std::path::PathBuf;

use crate::support::{TestContext, events_of, normalize_jsonl, repo_root};

#[derive(Clone, Copy)]
enum Dialect {
    Claude,
    Codex,
}

struct Run {
    log: String,
    requests: String,
    stderr: String,
    ctx: TestContext,
}

fn scenario_dir(dialect: Dialect) -> PathBuf {
    match dialect {
        Dialect::Claude => repo_root().join("fixtures/claude"),
        Dialect::Codex => repo_root().join("fixtures/codex"),
    }
}

fn run(dialect: Dialect, name: &str) -> Run {
    let ctx = TestContext::new();
    let dir = scenario_dir(dialect);
    let scenarios = dir.join("scenarios");
    match dialect {
        Dialect::Claude => {
            let settings = ctx.project().join(".claude");
            std::fs::create_dir_all(&settings).unwrap();
            std::fs::copy(
                scenarios.join(format!("{name}.settings.json")),
                settings.join("settings.json"),
            )
            .unwrap();
        }
        Dialect::Codex => {
            let codex_home = ctx.home().join(".codex");
            std::fs::create_dir_all(&codex_home).unwrap();
            std::fs::copy(
                scenarios.join(format!("{name}.hooks.json")),
                codex_home.join("hooks.json"),
            )
            .unwrap();
            let config = scenarios.join(format!("{name}.config.toml"));
            if config.exists() {
                std::fs::copy(config, codex_home.join("config.toml")).unwrap();
            }
        }
    }
    let requests_path = ctx.home().join("requests.jsonl");
    let output = ctx
        .dsh()
        .env("HOOKS", dir.join("hooks"))
        .arg("replay")
        .arg(scenarios.join(format!("{name}.json")))
        .args(["--session-id", "test-session", "--requests-out"])
        .arg(&requests_path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "replay {name} failed: {stderr}");
    let log = normalize_jsonl(&String::from_utf8_lossy(&output.stdout), &ctx);
    let requests = normalize_jsonl(&std::fs::read_to_string(&requests_path).unwrap(), &ctx);
    Run {
        log,
        stderr: ctx.redact(&stderr),
        requests,
        ctx,
    }
}

fn tool_results(log: &str) -> Vec<(bool, String)> {
    events_of(log, "tool/result")
        .iter()
        .map(|r| {
            (
                r["is_error"].as_bool().unwrap(),
                r["content"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn contexts(log: &str) -> Vec<String> {
    events_of(log, "context/message")
        .iter()
        .map(|c| c["content"].as_str().unwrap().to_owned())
        .collect()
}

fn snapshot(name: &str, run: &Run) {
    insta::assert_snapshot!(format!("{name}__log"), run.log);
    insta::assert_snapshot!(format!("{name}__requests"), run.requests);
}

#[test]
fn claude_bash_validator_blocks_with_exit_2() {
    let run = run(Dialect::Claude, "bash_validator");
    assert_eq!(
        tool_results(&run.log),
        vec![
            (
                true,
                "PreToolUse:Bash hook error: [sh \"$HOOKS/bash_validator.sh\"]: Blocked: 'rm -rf build' is not allowed by the project's bash policy\n".to_owned()
            ),
            (false, "listed".to_owned()),
        ]
    );
    snapshot("claude_bash_validator", &run);
}

#[test]
fn claude_env_protector_denies_with_json() {
    let run = run(Dialect::Claude, "env_protector");
    let results = tool_results(&run.log);
    assert_eq!(
        results[1],
        (
            true,
            // A JSON deny on Read reaches the model as the bare reason (`nl_deny_read`).
            ".env holds secrets; read .env.example instead".to_owned()
        )
    );
    assert_eq!(results[2], (false, "1\tPORT=8080\n2\t".to_owned()));
    snapshot("claude_env_protector", &run);
}

#[test]
fn claude_formatter_after_write_changes_the_file_and_adds_context() {
    let run = run(Dialect::Claude, "format_after_edit");
    assert_eq!(
        std::fs::read_to_string(run.ctx.project().join("main.py")).unwrap(),
        "print('hi')\n"
    );
    assert_eq!(
        contexts(&run.log),
        vec!["PostToolUse:Write hook additional context: formatted main.py"]
    );
    snapshot("claude_format_after_edit", &run);
}

#[test]
fn claude_session_start_and_prompt_context_reach_the_first_request() {
    let run = run(Dialect::Claude, "session_and_prompt_context");
    let first = run.requests.lines().next().unwrap();
    assert!(
        first.contains("SessionStart hook additional context: Deploy target: staging"),
        "{first}"
    );
    assert!(
        first.contains("UserPromptSubmit hook success: Current branch: feature"),
        "{first}"
    );
    // CLAUDE_ENV_FILE: the exported variable reaches the later bash call.
    assert_eq!(
        tool_results(&run.log)[0],
        (false, "stage=staging".to_owned())
    );
    snapshot("claude_session_and_prompt_context", &run);
}

#[test]
fn claude_stop_gate_blocks_once_then_lets_the_turn_end() {
    let run = run(Dialect::Claude, "stop_test_gate");
    let steering = events_of(&run.log, "steering/message");
    assert_eq!(steering.len(), 1);
    assert_eq!(
        steering[0]["content"],
        "Stop hook feedback:\nTests have not passed yet: run the test suite"
    );
    let stops: Vec<_> = events_of(&run.log, "hook/invoked")
        .into_iter()
        .filter(|h| h["event"] == "Stop")
        .collect();
    assert_eq!(stops.len(), 2);
    assert_eq!(stops[0]["input"]["stop_hook_active"], false);
    assert_eq!(stops[1]["input"]["stop_hook_active"], true);
    assert_eq!(events_of(&run.log, "turn/end")[0]["reason"], "completed");
    snapshot("claude_stop_test_gate", &run);
}

#[test]
fn claude_input_rewriter_runs_the_rewrite_and_records_both() {
    let run = run(Dialect::Claude, "input_rewriter");
    let call = &events_of(&run.log, "tool/call")[0];
    assert_eq!(
        call["arguments"]["command"],
        "pnpm install 2>/dev/null; echo ran: $0"
    );
    assert_eq!(
        call["original_arguments"]["command"],
        "npm install 2>/dev/null; echo ran: $0"
    );
    assert!(
        call["rewritten_by"]
            .as_str()
            .unwrap()
            .contains("input_rewriter.py")
    );
    // The model's own call stays in history.
    assert!(
        run.requests
            .contains("\"command\":\"npm install 2>/dev/null; echo ran: $0\"")
    );
    snapshot("claude_input_rewriter", &run);
}

#[test]
fn claude_audit_logger_sees_every_event_and_duplicates_run_once() {
    let run = run(Dialect::Claude, "audit_log");
    let audit = std::fs::read_to_string(run.ctx.project().join(".claude/audit.jsonl")).unwrap();
    let events: Vec<String> = audit
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["hook_event_name"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        events,
        vec![
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
            "Stop",
            "SessionEnd"
        ]
    );
    // Every hook run is in the log, including session-scoped ones.
    let invoked = events_of(&run.log, "hook/invoked");
    assert_eq!(invoked.len(), 6);
    assert!(
        invoked[0].get("turn").is_none(),
        "SessionStart runs before turn 1"
    );
    assert!(
        invoked[5].get("turn").is_none(),
        "SessionEnd runs after the last turn"
    );
    snapshot("claude_audit_log", &run);
}

#[test]
fn codex_pre_block_uses_codex_wording_and_ignores_invalid_output() {
    let run = run(Dialect::Codex, "pre_block");
    assert_eq!(
        tool_results(&run.log),
        vec![(
            true,
            "Command blocked by PreToolUse hook: dangerous command blocked: rm -rf is not allowed here. Command: rm -rf build".to_owned()
        )]
    );
    snapshot("codex_pre_block", &run);
}

#[test]
fn codex_prompt_and_session_context() {
    let run = run(Dialect::Codex, "prompt_context");
    assert_eq!(
        contexts(&run.log),
        vec![
            "session started from the fixture",
            "Project conventions: run tests with make check"
        ]
    );
    snapshot("codex_prompt_context", &run);
}

#[test]
fn codex_stop_block_continues_with_a_hook_prompt() {
    let run = run(Dialect::Codex, "stop_continue");
    let steering = events_of(&run.log, "steering/message");
    assert_eq!(steering.len(), 1);
    let content = steering[0]["content"].as_str().unwrap();
    assert!(
        content.starts_with("<hook_prompt hook_run_id=\"stop:0:"),
        "{content}"
    );
    assert!(
        content.ends_with("\">please run the checks before stopping</hook_prompt>"),
        "{content}"
    );
    snapshot("codex_stop_continue", &run);
}

#[test]
fn codex_rewrite_runs_the_dry_run() {
    let run = run(Dialect::Codex, "rewrite_dry_run");
    let call = &events_of(&run.log, "tool/call")[0];
    assert_eq!(call["arguments"]["command"], "make deploy --dry-run");
    assert_eq!(call["original_arguments"]["command"], "make deploy");
    snapshot("codex_rewrite_dry_run", &run);
}

#[test]
fn codex_post_audit_and_notify() {
    let run = run(Dialect::Codex, "post_audit_notify");
    let audit = std::fs::read_to_string(run.ctx.project().join(".codex-audit.log")).unwrap();
    let payload: serde_json::Value = serde_json::from_str(audit.lines().next().unwrap()).unwrap();
    assert_eq!(payload["tool_name"], "apply_patch");
    assert_eq!(
        payload["tool_input"]["command"],
        "*** Begin Patch\n*** Add File: hello.txt\n+hello from patch\n*** End Patch\n"
    );
    let notify = std::fs::read_to_string(run.ctx.project().join("notify.log")).unwrap();
    let notify: serde_json::Value = serde_json::from_str(notify.trim()).unwrap();
    assert_eq!(notify["type"], "agent-turn-complete");
    assert_eq!(notify["last-assistant-message"], "Wrote it.");
    snapshot("codex_post_audit_notify", &run);
    assert!(
        run.stderr.is_empty() || !run.stderr.contains("error"),
        "{}",
        run.stderr
    );
}

/// A PostToolBatch block stops the loop before the next model call (as
/// Claude Code does): the turn ends `stopped` after the batch, its text
/// stays in the conversation, and the scripted second reply is never asked for.
#[test]
fn claude_post_tool_batch_block_stops_before_the_next_model_call() {
    let ctx = TestContext::new();
    let settings = ctx.project().join(".claude");
    std::fs::create_dir_all(&settings).unwrap();
    std::fs::write(
        settings.join("settings.json"),
        r#"{"hooks": {"PostToolBatch": [{"hooks": [{"type": "command", "command": "cat >/dev/null; echo 'batch rejected' >&2; exit 2"}]}]}}"#,
    )
    .unwrap();
    let fixture = ctx.home().join("batch.json");
    std::fs::write(
        &fixture,
        r#"{"description": "PostToolBatch blocks", "prompts": ["go"], "model": [
            {"text": "", "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]},
            {"text": "NEVER-ASKED"}
        ]}"#,
    )
    .unwrap();
    let output = ctx.dsh().arg("replay").arg(&fixture).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let log = String::from_utf8_lossy(&output.stdout).into_owned();
    let ends = events_of(&log, "turn/end");
    assert_eq!(ends.len(), 1, "{log}");
    assert_eq!(ends[0]["reason"], "stopped", "{log}");
    assert!(
        ends[0]["message"]
            .as_str()
            .unwrap()
            .contains("batch rejected"),
        "{log}"
    );
    assert_eq!(events_of(&log, "assistant/message").len(), 1, "{log}");
    assert!(!log.contains("NEVER-ASKED\"}"), "{log}");
    assert!(
        contexts(&log).iter().any(|c| c.contains("batch rejected")),
        "{log}"
    );
    let invoked = events_of(&log, "hook/invoked");
    assert_eq!(invoked[0]["seam"], "batch-settled", "{log}");
}
