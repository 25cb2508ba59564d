//! The bridge end to end: real hook processes (fixtures/codex/hooks) through
//! the runner, a hand-built SeamContext and a recording SessionSink.

#![allow(clippy::unwrap_used, clippy::type_complexity)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_hook_runner::{HookRunner, RunnerConfig};
use dsh_hooks_codex::{CodexDiscovery, TrustPolicy, load};
use dsh_protocol::{EventBody, HookInvokedEvent, HookResultEvent, HookRunStatus, TurnEndReason};
use dsh_seams::{
    CancellationToken, ContinuationDecision, ContinuationInput, Disposition, InputRewrite, Plugin,
    PostToolAction, PreToolDecision, PromptDecision, PromptInput, ProposedCall, SeamContext,
    SessionEnv, SessionInfo, SessionSink, ToolExecution, ToolOutcome, TurnControl, TurnSummary,
    UserNotice,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

#[derive(Default)]
struct Recorder {
    events: Mutex<Vec<EventBody>>,
    notices: Mutex<Vec<UserNotice>>,
}

impl SessionSink for Recorder {
    fn record(&self, body: EventBody) {
        self.events.lock().unwrap().push(body);
    }
    fn tell_user(&self, notice: UserNotice) {
        self.notices.lock().unwrap().push(notice);
    }
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/codex/hooks")
        .join(name)
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}

struct Harness {
    _tmp: tempfile::TempDir,
    project: PathBuf,
    hooks_json: PathBuf,
    recorder: Arc<Recorder>,
    ctx: SeamContext,
    plugin: Arc<dyn Plugin>,
}

fn harness(hooks: Value, config_toml: &str, policy: TrustPolicy, cap: u32) -> Harness {
    harness_with(hooks, |_| config_toml.to_owned(), policy, cap)
}

fn harness_with(
    hooks: Value,
    config_toml: impl Fn(&Path) -> String,
    policy: TrustPolicy,
    cap: u32,
) -> Harness {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let project = tmp.path().join("project");
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let hooks_json = home.join(".codex/hooks.json");
    std::fs::write(
        &hooks_json,
        serde_json::to_string(&json!({ "hooks": hooks })).unwrap(),
    )
    .unwrap();
    std::fs::write(home.join(".codex/config.toml"), config_toml(&hooks_json)).unwrap();
    let mut discovery = CodexDiscovery::new(&project, &home);
    discovery.managed_dir = None;
    discovery.spill_dir = tmp.path().join("spill");
    discovery.stop_block_cap = cap;
    let config = load(&discovery).unwrap();
    let plugin = config.into_plugin(HookRunner::new(RunnerConfig::default()), policy);
    let recorder = Arc::new(Recorder::default());
    let ctx = SeamContext {
        session: Arc::new(SessionInfo {
            session_id: "01a227a8-e507-7093-8212-cd94c52cd14e".into(),
            cwd: project.clone(),
            model: "gpt-5.5".into(),
            log_path: None,
            env: SessionEnv::default(),
            interactive: false,
        }),
        turn: Some(1),
        cancel: CancellationToken::new(),
        sink: recorder.clone(),
        control: TurnControl::default(),
        agent: None,
        subagents: None,
    };
    Harness {
        _tmp: tmp,
        project,
        hooks_json,
        recorder,
        ctx,
        plugin,
    }
}

fn bash_call(command: &str) -> ProposedCall {
    ProposedCall {
        call_id: "call_1".into(),
        tool: "bash".into(),
        arguments: json!({ "command": command }),
        parent_execution_id: None,
        origin: None,
    }
}

fn sealed(call: &ProposedCall, arguments: Value) -> ToolExecution {
    ToolExecution {
        execution_id: "exec_1".into(),
        call_id: call.call_id.clone(),
        tool: call.tool.clone(),
        arguments: Arc::new(arguments),
        original_arguments: None,
        rewritten_by: None,
        parent_execution_id: None,
        origin: None,
    }
}

fn events(h: &Harness) -> Vec<EventBody> {
    h.recorder.events.lock().unwrap().clone()
}

#[tokio::test]
async fn pre_tool_use_block_is_recorded_and_denies_with_codex_text() {
    let h = harness(
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": fixture("block_dangerous_bash.sh")},
            {"type": "command", "command": fixture("unknown_field.sh")}
        ]}]}),
        "",
        TrustPolicy::RunAll,
        8,
    );
    let call = bash_call("rm -rf build");
    let review = h.plugin.rewrite_input(&h.ctx, &call).await;
    assert_eq!(review.rewrite, InputRewrite::Keep);
    let outcome = h
        .plugin
        .pre_execute(
            &h.ctx,
            &sealed(&call, call.arguments.clone()),
            review.verdict.as_ref(),
        )
        .await;
    assert_eq!(
        outcome.decision,
        PreToolDecision::Deny {
            reason: "Command blocked by PreToolUse hook: dangerous command blocked: rm -rf is not allowed here. Command: rm -rf build".into()
        }
    );
    let events = events(&h);
    assert_eq!(events.len(), 4, "{events:#?}");
    let kinds: Vec<&str> = events.iter().map(EventBody::type_name).collect();
    assert_eq!(
        kinds,
        ["hook/invoked", "hook/invoked", "hook/result", "hook/result"]
    );
    let EventBody::HookInvoked(HookInvokedEvent {
        event,
        seam,
        input,
        call_id,
        origin,
        dialect,
        ..
    }) = &events[0]
    else {
        panic!()
    };
    assert_eq!(
        (event.as_str(), seam.as_str(), call_id.as_deref()),
        ("PreToolUse", "pre-execute", Some("call_1"))
    );
    assert_eq!(dialect.as_str(), "codex");
    assert_eq!(
        origin.as_deref(),
        Some(format!("{}#hooks.PreToolUse[0].hooks[0]", h.hooks_json.display()).as_str())
    );
    let input: Value = input.read().unwrap();
    assert_eq!(input["tool_name"], "Bash");
    assert_eq!(input["tool_input"], json!({"command": "rm -rf build"}));
    assert_eq!(input["transcript_path"], Value::Null);
    assert_eq!(input["cwd"], h.project.display().to_string());
    let EventBody::HookResult(HookResultEvent {
        exit_code,
        decision,
        stderr,
        ..
    }) = &events[2]
    else {
        panic!()
    };
    assert_eq!(*exit_code, Some(2));
    assert_eq!(
        stderr,
        "dangerous command blocked: rm -rf is not allowed here\n"
    );
    assert_eq!(decision.status, Some(HookRunStatus::Blocked));
    assert_eq!(decision.won, Some(true));
    assert_eq!(decision.trust.as_deref(), Some("untrusted"));
    let EventBody::HookResult(HookResultEvent {
        decision, error, ..
    }) = &events[3]
    else {
        panic!()
    };
    assert_eq!(decision.status, Some(HookRunStatus::Failed));
    assert_eq!(
        error.as_deref(),
        Some("hook returned invalid pre-tool-use JSON output")
    );
}

#[tokio::test]
async fn pre_tool_use_rewrite_runs_before_sealing_and_keeps_context() {
    let h = harness(
        json!({"PreToolUse": [{"hooks": [{"type": "command", "command": fixture("rewrite_to_dry_run.py")}]}]}),
        "",
        TrustPolicy::RunAll,
        8,
    );
    let call = bash_call("make deploy");
    let review = h.plugin.rewrite_input(&h.ctx, &call).await;
    let InputRewrite::Rewrite {
        arguments,
        by,
        conflicts,
        history,
        refusal,
    } = review.rewrite
    else {
        panic!("{review:?}")
    };
    assert_eq!(arguments, json!({"command": "make deploy --dry-run"}));
    assert!(by.starts_with("codex:PreToolUse:"), "{by}");
    assert!(conflicts.is_empty());
    // Codex's history keeps the model's own input.
    assert_eq!(history, dsh_seams::HistoryInput::Original);
    assert_eq!(refusal, None);
    let outcome = h
        .plugin
        .pre_execute(&h.ctx, &sealed(&call, arguments), review.verdict.as_ref())
        .await;
    assert_eq!(outcome.decision, PreToolDecision::Allow);
    assert_eq!(outcome.contexts.len(), 1);
    assert_eq!(
        outcome.contexts[0].content,
        "deploy was rewritten to a dry run"
    );
}

/// A rewrite dsh cannot express fails its run (recorded as failed, with
/// the reason as its error) and the next rewrite wins, with no conflict.
#[tokio::test]
async fn an_inexpressible_rewrite_fails_its_run_and_the_next_one_wins() {
    let rewrite = |input: &str| {
        format!(
            "cat >/dev/null; echo '{{\"hookSpecificOutput\":{{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\",\"updatedInput\":{input}}}}}'"
        )
    };
    let h = harness(
        json!({"PreToolUse": [{"hooks": [
            {"type": "command", "command": rewrite(r#"{"cmd":"x"}"#)},
            {"type": "command", "command": rewrite(r#"{"command":"make test"}"#)}
        ]}]}),
        "",
        TrustPolicy::RunAll,
        8,
    );
    let review = h.plugin.rewrite_input(&h.ctx, &bash_call("make")).await;
    let InputRewrite::Rewrite {
        arguments,
        conflicts,
        ..
    } = review.rewrite
    else {
        panic!("{review:?}")
    };
    assert_eq!(arguments, json!({"command": "make test"}));
    assert!(conflicts.is_empty(), "{conflicts:?}");
    let results: Vec<(Option<HookRunStatus>, Option<bool>, Option<String>)> = events(&h)
        .into_iter()
        .filter_map(|event| match event {
            EventBody::HookResult(HookResultEvent {
                decision, error, ..
            }) => Some((decision.status, decision.won, error)),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        [
            (
                Some(HookRunStatus::Failed),
                None,
                Some(dsh_hooks_codex::tools::UPDATED_INPUT_NO_COMMAND.to_owned())
            ),
            (Some(HookRunStatus::Completed), Some(true), None),
        ]
    );
}

#[tokio::test]
async fn post_tool_use_exit2_replaces_output_and_sees_codex_shapes() {
    let h = harness(
        json!({"PostToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": fixture("post_audit_log.sh")},
            {"type": "command", "command": "cat >/dev/null; echo 'post exit2 feedback' >&2; exit 2"}
        ]}]}),
        "",
        TrustPolicy::RunAll,
        8,
    );
    let call = bash_call("echo hi");
    let exec = sealed(&call, call.arguments.clone());
    let review = h.plugin.rewrite_input(&h.ctx, &call).await;
    let _ = h
        .plugin
        .pre_execute(&h.ctx, &exec, review.verdict.as_ref())
        .await;
    let outcome = ToolOutcome::success(
        "hi\n",
        Some(json!({"stdout": "hi\n", "stderr": "", "exit_code": 0})),
    );
    let decision = h
        .plugin
        .post_execute(&h.ctx, &exec, &outcome, Duration::from_millis(5))
        .await;
    assert_eq!(
        decision.action,
        PostToolAction::ReplaceContent {
            content: "post exit2 feedback".into()
        }
    );
    let audit = std::fs::read_to_string(h.project.join(".codex-audit.log")).unwrap();
    let payload: Value = serde_json::from_str(audit.trim()).unwrap();
    assert_eq!(payload["hook_event_name"], "PostToolUse");
    assert_eq!(payload["tool_response"], "hi\n");
    assert_eq!(payload["tool_use_id"], "call_1");
    assert_eq!(payload["permission_mode"], "bypassPermissions");
    // A denied call never reaches PostToolUse.
    let denied = ToolOutcome::error("no", Disposition::Denied(dsh_seams::DenialKind::Policy));
    let before = events(&h).len();
    let decision = h
        .plugin
        .post_execute(&h.ctx, &exec, &denied, Duration::ZERO)
        .await;
    assert_eq!(decision.action, PostToolAction::Accept);
    assert_eq!(events(&h).len(), before);
}

#[tokio::test]
async fn prompt_plain_stdout_becomes_context() {
    let h = harness(
        json!({"UserPromptSubmit": [{"hooks": [{"type": "command", "command": fixture("prompt_conventions.sh")}]}]}),
        "",
        TrustPolicy::RunAll,
        8,
    );
    let decision = h
        .plugin
        .prompt_submit(
            &h.ctx,
            &PromptInput {
                content: "hello".into(),
                source: "user".into(),
            },
        )
        .await;
    let PromptDecision::Allow {
        rewrite: None,
        contexts,
    } = decision
    else {
        panic!("{decision:?}")
    };
    assert_eq!(
        contexts[0].content,
        "Project conventions: run tests with make check"
    );
}

#[tokio::test]
async fn stop_block_continues_with_hook_prompt_then_caps() {
    let h = harness(
        json!({"Stop": [{"hooks": [{"type": "command", "command": fixture("stop_until_checked.py")}]}]}),
        "",
        TrustPolicy::RunAll,
        8,
    );
    let input = |forced| ContinuationInput {
        turn: 1,
        step: 1,
        last_assistant_message: "done".into(),
        forced_continuations: forced,
    };
    let decision = h.plugin.turn_continuation(&h.ctx, &input(0)).await;
    assert_eq!(
        decision,
        ContinuationDecision::Continue {
            reason: Some(format!(
                "<hook_prompt hook_run_id=\"stop:0:{}\">please run the checks before stopping</hook_prompt>",
                h.hooks_json.display()
            )),
            source: "codex:Stop".into(),
            contexts: Vec::new(),
        }
    );
    assert_eq!(
        h.plugin.turn_continuation(&h.ctx, &input(1)).await,
        ContinuationDecision::Stop
    );
    let inputs: Vec<Value> = events(&h)
        .into_iter()
        .filter_map(|e| match e {
            EventBody::HookInvoked(HookInvokedEvent { input, .. }) => input.read().ok(),
            _ => None,
        })
        .collect();
    assert_eq!(inputs[0]["stop_hook_active"], false);
    assert_eq!(inputs[1]["stop_hook_active"], true);

    let always = harness(
        json!({"Stop": [{"hooks": [{"type": "command", "command": "cat >/dev/null; echo '{\"decision\":\"block\",\"reason\":\"again\"}'"}]}]}),
        "",
        TrustPolicy::RunAll,
        2,
    );
    assert!(matches!(
        always
            .plugin
            .turn_continuation(&always.ctx, &input(1))
            .await,
        ContinuationDecision::Continue { .. }
    ));
    assert_eq!(
        always
            .plugin
            .turn_continuation(&always.ctx, &input(2))
            .await,
        ContinuationDecision::Stop
    );
    let notices = always.recorder.notices.lock().unwrap().clone();
    assert!(
        notices.iter().any(|n| n.text.contains("cap is 2")),
        "{notices:?}"
    );
    let last = events(&always).into_iter().last().unwrap();
    let EventBody::HookResult(HookResultEvent { decision, .. }) = last else {
        panic!()
    };
    assert_eq!(decision.won, Some(false));
    assert!(decision.capped.is_some());
}

#[tokio::test]
async fn trusted_only_skips_untrusted_but_runs_trusted_hooks() {
    let hooks =
        json!({"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo ctx"}]}]});
    let h = harness(hooks.clone(), "", TrustPolicy::TrustedOnly, 8);
    let decision = h
        .plugin
        .prompt_submit(
            &h.ctx,
            &PromptInput {
                content: "x".into(),
                source: "user".into(),
            },
        )
        .await;
    assert_eq!(decision, PromptDecision::allow());
    assert!(events(&h).is_empty());

    // Trust it the way Codex's TUI does: trusted_hash under [hooks.state."<key>"].
    let hash = dsh_hooks_codex::config::definition_hash(
        dsh_hooks_codex::CodexEvent::UserPromptSubmit,
        None,
        "echo ctx",
        600,
        false,
        None,
        None,
    );
    let h = harness_with(
        hooks,
        |hooks_json| {
            format!(
                "[hooks.state.\"{}:user_prompt_submit:0:0\"]\ntrusted_hash = \"{hash}\"\n",
                hooks_json.display()
            )
        },
        TrustPolicy::TrustedOnly,
        8,
    );
    let decision = h
        .plugin
        .prompt_submit(
            &h.ctx,
            &PromptInput {
                content: "x".into(),
                source: "user".into(),
            },
        )
        .await;
    let PromptDecision::Allow { contexts, .. } = decision else {
        panic!("{decision:?}")
    };
    assert_eq!(contexts[0].content, "ctx");
    let EventBody::HookResult(HookResultEvent { decision, .. }) = events(&h).pop().unwrap() else {
        panic!()
    };
    assert_eq!(decision.trust.as_deref(), Some("trusted"));
}

#[tokio::test]
async fn legacy_notify_gets_codex_json_as_last_argument() {
    let h = harness(
        json!({}),
        &format!("notify = [\"{}\"]\n", fixture("notify_record.sh")),
        TrustPolicy::RunAll,
        8,
    );
    let summary = TurnSummary {
        turn: 1,
        reason: TurnEndReason::Completed,
        prompt: "please run echo hi".into(),
        last_assistant_message: Some("done".into()),
    };
    h.plugin.turn_end(&h.ctx, &summary).await;
    let logged = std::fs::read_to_string(h.project.join("notify.log")).unwrap();
    let payload: Value = serde_json::from_str(logged.trim()).unwrap();
    assert_eq!(payload["type"], "agent-turn-complete");
    assert_eq!(payload["input-messages"], json!(["please run echo hi"]));
    assert_eq!(payload["last-assistant-message"], "done");
    assert_eq!(payload["thread-id"], h.ctx.session.session_id);
    let recorded = events(&h);
    let EventBody::HookInvoked(HookInvokedEvent { event, .. }) = &recorded[0] else {
        panic!()
    };
    assert_eq!(event, "notify");
    // Not for a failed turn.
    let before = events(&h).len();
    h.plugin
        .turn_end(
            &h.ctx,
            &TurnSummary {
                reason: TurnEndReason::Error,
                ..summary
            },
        )
        .await;
    assert_eq!(events(&h).len(), before);
}

/// A project's `notify` runs only under the trust rules of project hooks,
/// and its run is logged session-scoped (the turn is already closed).
#[tokio::test]
async fn a_project_notify_obeys_the_trust_policy_and_is_logged_without_a_turn() {
    for (policy, runs) in [
        (TrustPolicy::TrustedOnly, false),
        (TrustPolicy::RunAll, true),
    ] {
        let h = harness(json!({}), "", policy, 8);
        std::fs::create_dir_all(h.project.join(".codex")).unwrap();
        std::fs::write(
            h.project.join(".codex/config.toml"),
            "notify = [\"sh\", \"-c\", \"touch notified\"]\n",
        )
        .unwrap();
        let home = h.hooks_json.parent().unwrap().parent().unwrap();
        let mut discovery = CodexDiscovery::new(&h.project, home);
        discovery.managed_dir = None;
        let config = load(&discovery).unwrap();
        let plugin = config.into_plugin(HookRunner::new(RunnerConfig::default()), policy);
        let summary = TurnSummary {
            turn: 1,
            reason: TurnEndReason::Completed,
            prompt: "hi".into(),
            last_assistant_message: Some("done".into()),
        };
        plugin.turn_end(&h.ctx, &summary).await;
        assert_eq!(h.project.join("notified").exists(), runs, "{policy:?}");
        let recorded = events(&h);
        if runs {
            let EventBody::HookInvoked(HookInvokedEvent { event, turn, .. }) = &recorded[0] else {
                panic!("{recorded:?}")
            };
            assert_eq!(event, "notify");
            assert_eq!(*turn, None);
            let EventBody::HookResult(HookResultEvent { turn, .. }) = &recorded[1] else {
                panic!("{recorded:?}")
            };
            assert_eq!(*turn, None);
        } else {
            assert!(recorded.is_empty(), "{recorded:?}");
        }
    }
}
