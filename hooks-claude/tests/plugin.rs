//! Real hook scripts (`fixtures/claude/hooks/`) run through the plugin with a
//! hand-built `SeamContext` and a recording `SessionSink`.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_hook_runner::{HookRunner, RunnerConfig};
use dsh_hooks_claude::{ClaudeDiscovery, ClaudeOptions, load_with_options};
use dsh_protocol::{
    Event, EventBody, HookEffect, HookInvokedEvent, HookOutcomeKind, HookResultEvent, Seam,
    SessionHeaderEvent, ToolResultEvent,
};
use dsh_seams::{
    CancellationToken, ContextEntry, ContinuationDecision, ContinuationInput, Disposition,
    HistoryInput, InputRewrite, Plugin, PostToolAction, PreToolDecision, PromptDecision,
    PromptInput, ProposedCall, SeamContext, SessionEnv, SessionInfo, SessionSink,
    SessionStartSource, ToolExecution, ToolOutcome, TurnControl, UserNotice,
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
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/claude/hooks")
        .join(name);
    let path = path.canonicalize().unwrap();
    let interpreter = if name.ends_with(".py") {
        "python3"
    } else {
        "sh"
    };
    format!("{interpreter} '{}'", path.display())
}

struct Setup {
    _tmp: tempfile::TempDir,
    project: PathBuf,
    plugin: Arc<dyn Plugin>,
    sink: Arc<Recorder>,
    ctx: SeamContext,
}

fn setup(settings: Value) -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let project = tmp.path().join("proj");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        project.join(".claude/settings.json"),
        serde_json::to_string_pretty(&settings).unwrap(),
    )
    .unwrap();
    let mut discovery = ClaudeDiscovery::new(&project, &home, &tmp.path().join("dsh"));
    discovery.managed_dir = tmp.path().join("no-managed");
    let config = load_with_options(&discovery, ClaudeOptions::default()).unwrap();
    let plugin = config.into_plugin(HookRunner::new(RunnerConfig::default()));
    let sink = Arc::new(Recorder::default());
    let ctx = SeamContext {
        session: Arc::new(SessionInfo {
            session_id: "11111111-2222-3333-4444-555555555555".to_owned(),
            cwd: project.clone(),
            model: "test".to_owned(),
            log_path: None,
            env: SessionEnv::default(),
            interactive: false,
        }),
        turn: Some(1),
        cancel: CancellationToken::new(),
        sink: sink.clone(),
        control: TurnControl::default(),
        agent: None,
        subagents: None,
    };
    Setup {
        _tmp: tmp,
        project,
        plugin,
        sink,
        ctx,
    }
}

fn hook(command: String) -> Value {
    json!({"type": "command", "command": command})
}

fn exec(call_id: &str, tool: &str, arguments: Value) -> ToolExecution {
    ToolExecution {
        execution_id: format!("exec-{call_id}"),
        call_id: call_id.to_owned(),
        tool: tool.to_owned(),
        arguments: Arc::new(arguments),
        original_arguments: None,
        rewritten_by: None,
        parent_execution_id: None,
        origin: None,
    }
}

async fn pre_tool(
    s: &Setup,
    call_id: &str,
    tool: &str,
    arguments: Value,
) -> (InputRewrite, PreToolDecision) {
    let proposed = ProposedCall {
        call_id: call_id.to_owned(),
        tool: tool.to_owned(),
        arguments: arguments.clone(),
        parent_execution_id: None,
        origin: None,
    };
    let review = s.plugin.rewrite_input(&s.ctx, &proposed).await;
    let arguments = match &review.rewrite {
        InputRewrite::Rewrite { arguments, .. } => arguments.clone(),
        InputRewrite::Keep => arguments,
    };
    let outcome = s
        .plugin
        .pre_execute(
            &s.ctx,
            &exec(call_id, tool, arguments),
            review.verdict.as_ref(),
        )
        .await;
    (review.rewrite, outcome.decision)
}

#[tokio::test]
async fn bash_validator_blocks_with_exit_2_and_everything_is_recorded_in_order() {
    let audit = tempfile::NamedTempFile::new().unwrap();
    let audit_cmd = format!(
        "AUDIT_LOG='{}' {}",
        audit.path().display(),
        fixture("audit_log.sh")
    );
    let validator = fixture("bash_validator.sh");
    let s = setup(json!({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [hook(validator.clone()), hook(fixture("input_rewriter.py"))]},
        {"matcher": "*", "hooks": [hook(audit_cmd.clone())]}
    ]}}));
    let (rewrite, decision) =
        pre_tool(&s, "call_1", "bash", json!({"command": "rm -rf build"})).await;
    assert_eq!(rewrite, InputRewrite::Keep);
    assert_eq!(
        decision,
        PreToolDecision::Deny {
            reason: format!(
                "PreToolUse:Bash hook error: [{validator}]: Blocked: 'rm -rf build' is not allowed by the project's bash policy\n"
            )
        }
    );

    let events = s.sink.events.lock().unwrap().clone();
    assert_eq!(events.len(), 6, "{events:#?}");
    let mut invoked = Vec::new();
    for event in &events[..3] {
        match event {
            EventBody::HookInvoked(HookInvokedEvent {
                invocation_id,
                event,
                seam,
                command,
                input,
                call_id,
                turn,
                ..
            }) => {
                assert_eq!(
                    (event.as_str(), seam.as_str(), turn),
                    ("PreToolUse", "pre-execute", &Some(1))
                );
                assert_eq!(call_id.as_deref(), Some("call_1"));
                let sent = input.text().to_owned();
                let input: Value = input.read().unwrap();
                assert_eq!(input["tool_input"], json!({"command": "rm -rf build"}));
                assert_eq!(input["cwd"], json!(s.project.to_string_lossy()));
                invoked.push((invocation_id.clone(), command.clone(), sent));
            }
            other => panic!("expected hook/invoked, got {other:?}"),
        }
    }
    assert_eq!(
        invoked.iter().map(|i| i.1.clone()).collect::<Vec<_>>(),
        vec![validator.clone(), fixture("input_rewriter.py"), audit_cmd]
    );
    for (index, event) in events[3..].iter().enumerate() {
        match event {
            EventBody::HookResult(HookResultEvent {
                invocation_id,
                outcome,
                exit_code,
                decision,
                stderr,
                ..
            }) => {
                assert_eq!(
                    invocation_id, &invoked[index].0,
                    "results in configuration order"
                );
                assert_eq!(*outcome, HookOutcomeKind::Exited);
                if index == 0 {
                    assert_eq!(*exit_code, Some(2));
                    assert!(stderr.contains("not allowed"));
                    assert_eq!(decision.effect, HookEffect::Deny);
                    assert_eq!(decision.won, Some(true));
                } else {
                    assert_eq!(*exit_code, Some(0));
                    assert_eq!(decision.effect, HookEffect::None);
                }
            }
            other => panic!("expected hook/result, got {other:?}"),
        }
    }
    // The audit hook got exactly the recorded stdin text, one newline.
    let logged = std::fs::read_to_string(audit.path()).unwrap();
    assert_eq!(logged, format!("{}\n", invoked[2].2));
}

#[tokio::test]
async fn rewriter_and_env_protector() {
    let rewriter = fixture("input_rewriter.py");
    let s = setup(json!({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [hook(rewriter.clone())]},
        {"matcher": "Read|Edit|Write", "hooks": [hook(fixture("env_protector.py"))]}
    ]}}));
    let (rewrite, decision) = pre_tool(
        &s,
        "call_1",
        "bash",
        json!({"command": "npm test", "description": "x"}),
    )
    .await;
    assert_eq!(
        rewrite,
        InputRewrite::Rewrite {
            arguments: json!({"command": "pnpm test", "description": "x"}),
            by: format!("claude:PreToolUse:{rewriter}"),
            conflicts: vec![],
            history: HistoryInput::Original,
            refusal: None,
        }
    );
    assert_eq!(decision, PreToolDecision::Allow);

    let (_, decision) = pre_tool(&s, "call_2", "read", json!({"file_path": ".env"})).await;
    assert_eq!(
        decision,
        PreToolDecision::Deny {
            // A JSON deny on Read is the bare reason (`nl_deny_read_tools`).
            reason: ".env holds secrets; read .env.example instead".into()
        }
    );
    let (_, decision) = pre_tool(&s, "call_3", "read", json!({"file_path": "src/main.rs"})).await;
    assert_eq!(decision, PreToolDecision::Allow);
}

#[tokio::test]
async fn session_start_context_and_env_file() {
    let s = setup(json!({"hooks": {"SessionStart": [
        {"matcher": "startup", "hooks": [hook(fixture("session_start_context.sh"))]}
    ]}}));
    let contexts = s
        .plugin
        .session_start(&s.ctx, SessionStartSource::Startup)
        .await;
    assert_eq!(contexts.len(), 1);
    assert_eq!(
        contexts[0].content,
        "SessionStart hook additional context: Deploy target: staging"
    );
    assert_eq!(
        s.ctx.session.env.snapshot(),
        vec![("PROJECT_STAGE".to_owned(), "staging".to_owned())]
    );
    let events = s.sink.events.lock().unwrap().clone();
    match &events[0] {
        EventBody::HookInvoked(HookInvokedEvent { seam, input, .. }) => {
            assert_eq!(*seam, Seam::SessionStart);
            let input: Value = input.read().unwrap();
            assert_eq!(input["source"], "startup");
            assert!(input.get("prompt_id").is_none());
        }
        other => panic!("{other:?}"),
    }
    // The matcher is tested against the source.
    assert!(
        s.plugin
            .session_start(&s.ctx, SessionStartSource::Resume)
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn prompt_context_and_stop_gate() {
    let gate = fixture("stop_test_gate.py");
    let s = setup(json!({"hooks": {
        "UserPromptSubmit": [{"hooks": [hook(format!("FAKE_BRANCH=feature {}", fixture("prompt_context.sh")))]}],
        "Stop": [{"hooks": [hook(gate.clone())]}]
    }}));
    let decision = s
        .plugin
        .prompt_submit(
            &s.ctx,
            &PromptInput {
                content: "hi".into(),
                source: "user".into(),
            },
        )
        .await;
    match decision {
        PromptDecision::Allow {
            rewrite: None,
            contexts,
        } => assert_eq!(
            contexts
                .iter()
                .map(|c| c.content.clone())
                .collect::<Vec<_>>(),
            vec![format!(
                "UserPromptSubmit hook success: Current branch: feature\nWorking directory: {}",
                s.project.display()
            )]
        ),
        other => panic!("{other:?}"),
    }
    let input = |forced| ContinuationInput {
        turn: 1,
        step: 1,
        last_assistant_message: "done".into(),
        forced_continuations: forced,
    };
    let decision = s.plugin.turn_continuation(&s.ctx, &input(0)).await;
    let source = format!("claude:Stop:{gate}");
    assert_eq!(
        decision,
        ContinuationDecision::Continue {
            reason: Some(
                "Stop hook feedback:\nTests have not passed yet: run the test suite".into()
            ),
            source: source.clone(),
            contexts: vec![ContextEntry::new(
                format!(
                    "Stop hook blocking error from command: \"{gate}\": Tests have not passed yet: run the test suite"
                ),
                source,
            )],
        }
    );
    // stop_hook_active is true on the forced continuation: the gate lets go.
    assert_eq!(
        s.plugin.turn_continuation(&s.ctx, &input(1)).await,
        ContinuationDecision::Stop
    );
    let events = s.sink.events.lock().unwrap().clone();
    let stop_inputs: Vec<Value> = events
        .iter()
        .filter_map(|e| match e {
            EventBody::HookInvoked(HookInvokedEvent { event, input, .. }) if event == "Stop" => {
                input.read().ok()
            }
            _ => None,
        })
        .collect();
    assert_eq!(stop_inputs[0]["stop_hook_active"], false);
    assert_eq!(stop_inputs[1]["stop_hook_active"], true);
    assert_eq!(stop_inputs[0]["background_tasks"], json!([]));
}

#[tokio::test]
async fn formatter_after_edit_and_transcript() {
    let s = setup(json!({"hooks": {"PostToolUse": [
        {"matcher": "Edit|Write", "hooks": [hook(fixture("format_after_edit.sh"))]}
    ]}}));
    let file = s.project.join("a.txt");
    std::fs::write(&file, "alpha   \nbeta\t\n").unwrap();
    s.plugin.on_event(&Event {
        seq: 0,
        ts: "2026-01-01T00:00:00Z".into(),
        agent_id: None,
        body: EventBody::SessionHeader(SessionHeaderEvent {
            session_id: s.ctx.session.session_id.clone(),
            cwd: s.project.to_string_lossy().into_owned(),
            version: "0".into(),
            notices: vec![],
            provider_api: None,
        }),
    });
    let value = json!({"file_path": file.to_string_lossy(), "old_string": "a", "new_string": "a",
        "original_file": "alpha   \nbeta\t\n", "replace_all": false, "structured_patch": []});
    let execution = exec(
        "call_1",
        "edit",
        json!({"file_path": "a.txt", "old_string": "a", "new_string": "a"}),
    );
    let outcome =
        ToolOutcome::success("The file a.txt has been updated successfully.", Some(value));
    let decision = s
        .plugin
        .post_execute(&s.ctx, &execution, &outcome, Duration::from_millis(5))
        .await;
    assert_eq!(decision.action, PostToolAction::Accept);
    assert_eq!(
        decision
            .contexts
            .iter()
            .map(|c| c.content.clone())
            .collect::<Vec<_>>(),
        vec!["PostToolUse:Edit hook additional context: formatted a.txt".to_owned()]
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "alpha\nbeta\n");

    // A denied call gets no PostToolUse.
    let denied = ToolOutcome::error("no", Disposition::Denied(dsh_seams::DenialKind::Policy));
    let before = s.sink.events.lock().unwrap().len();
    let _ = s
        .plugin
        .post_execute(&s.ctx, &execution, &denied, Duration::ZERO)
        .await;
    assert_eq!(s.sink.events.lock().unwrap().len(), before);

    // The transcript records the tool result with Claude Code's toolUseResult.
    s.plugin.on_event(&Event {
        seq: 1,
        ts: "2026-01-01T00:00:01Z".into(),
        agent_id: None,
        body: EventBody::ToolResult(ToolResultEvent {
            turn: 1,
            call_id: "call_1".into(),
            is_error: false,
            content: "ok".into(),
            disposition: None,
            decided_by: None,
            rewrite: None,
            content_blocks: None,
            shown_input: None,
        }),
    });
    let events = s.sink.events.lock().unwrap().clone();
    let transcript_path = match &events[0] {
        EventBody::HookInvoked(HookInvokedEvent { input, .. }) => {
            let input: Value = input.read().unwrap();
            input["transcript_path"].as_str().unwrap().to_owned()
        }
        other => panic!("{other:?}"),
    };
    let text = std::fs::read_to_string(&transcript_path).unwrap();
    let line: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(line["type"], "user");
    assert_eq!(line["message"]["content"][0]["tool_use_id"], "call_1");
    assert_eq!(line["toolUseResult"]["filePath"], "a.txt");
    assert_eq!(line["toolUseResult"]["replaceAll"], false);
}

#[tokio::test]
async fn async_hook_output_reaches_the_next_turn() {
    let script = "cat >/dev/null; sleep 0.2; echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PostToolUse\",\"additionalContext\":\"ASYNC-CTX\"}}'";
    let s = setup(json!({"hooks": {"PostToolUse": [
        {"hooks": [{"type": "command", "command": script, "async": true}]}
    ]}}));
    let execution = exec("call_1", "bash", json!({"command": "echo hi"}));
    let outcome = ToolOutcome::success(
        "hi",
        Some(
            json!({"stdout": "hi\n", "stderr": "", "exit_code": 0, "interrupted": false, "timed_out": false}),
        ),
    );
    let started = std::time::Instant::now();
    let decision = s
        .plugin
        .post_execute(&s.ctx, &execution, &outcome, Duration::ZERO)
        .await;
    assert!(decision.contexts.is_empty());
    assert!(
        started.elapsed() < Duration::from_millis(150),
        "async hook was awaited"
    );
    let events = s.sink.events.lock().unwrap().clone();
    assert!(matches!(
        events[1],
        EventBody::HookResult(HookResultEvent {
            outcome: HookOutcomeKind::Detached,
            ..
        })
    ));

    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut ctx = s.ctx.clone();
    ctx.turn = Some(2);
    match s
        .plugin
        .prompt_submit(
            &ctx,
            &PromptInput {
                content: "next".into(),
                source: "user".into(),
            },
        )
        .await
    {
        PromptDecision::Allow { contexts, .. } => assert_eq!(
            contexts
                .iter()
                .map(|c| c.content.clone())
                .collect::<Vec<_>>(),
            vec!["PostToolUse:Bash hook additional context: ASYNC-CTX".to_owned()]
        ),
        other => panic!("{other:?}"),
    }
}

/// A one-shot HTTP server on loopback: answers one POST with `status` and
/// `body`, and hands back the request body it received.
async fn http_hook_server(
    status: u16,
    body: &'static str,
) -> (String, tokio::task::JoinHandle<String>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let handle = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = stream.read(&mut buf).await.unwrap();
            request.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&request).to_string();
            if let Some(split) = text.find("\r\n\r\n") {
                let length = text[..split]
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse::<usize>().unwrap())
                    })
                    .unwrap_or(0);
                if request.len() >= split + 4 + length {
                    let reply = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    stream.write_all(reply.as_bytes()).await.unwrap();
                    return text[split + 4..].to_owned();
                }
            }
            if n == 0 {
                return String::new();
            }
        }
    });
    (url, handle)
}

#[tokio::test]
async fn an_http_hook_gets_the_payload_and_its_json_answer_decides() {
    let (url, server) = http_hook_server(
        200,
        r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"HTTP-DENY"}}"#,
    )
    .await;
    let s = setup(json!({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "http", "url": url}]}
    ]}}));
    let (_, decision) = pre_tool(&s, "toolu_1", "bash", json!({"command": "ls"})).await;
    assert_eq!(
        decision,
        PreToolDecision::Deny {
            reason: "PreToolUse:Bash hook error: HTTP-DENY".to_owned()
        }
    );
    let payload: Value = serde_json::from_str(&server.await.unwrap()).unwrap();
    assert_eq!(payload["hook_event_name"], "PreToolUse");
    assert_eq!(payload["tool_input"]["command"], "ls");
}

#[tokio::test]
async fn an_http_hook_that_answers_non_2xx_is_a_non_blocking_error() {
    let (url, server) = http_hook_server(500, r#"{"decision":"block"}"#).await;
    let s = setup(json!({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "http", "url": url}]}
    ]}}));
    let (_, decision) = pre_tool(&s, "toolu_1", "bash", json!({"command": "ls"})).await;
    assert_eq!(decision, PreToolDecision::Allow);
    server.await.unwrap();
    let events = s.sink.events.lock().unwrap().clone();
    let error = events.iter().find_map(|event| match event {
        EventBody::HookResult(HookResultEvent { error, .. }) => error.clone(),
        _ => None,
    });
    assert!(error.unwrap_or_default().contains("HTTP status 500"));
}

fn registry_with(s: &Setup) -> dsh_tools::ToolRegistry {
    let mut registry = dsh_tools::ToolRegistry::new();
    for tool in dsh_tools::builtin::builtin_tools() {
        registry.register_tool(tool);
    }
    registry.register_plugin(s.plugin.clone());
    registry
}

fn proposed(call_id: &str, tool: &str, arguments: Value) -> ProposedCall {
    ProposedCall {
        call_id: call_id.to_owned(),
        tool: tool.to_owned(),
        arguments,
        parent_execution_id: None,
        origin: None,
    }
}

fn invocations_for(s: &Setup, call_id: &str) -> usize {
    s.sink
        .events
        .lock()
        .unwrap()
        .iter()
        .filter(|event| {
            matches!(event, EventBody::HookInvoked(HookInvokedEvent { call_id: Some(id), .. }) if id == call_id)
        })
        .count()
}

/// A PreToolUse verdict belongs to the call it judged: when sealing rejects
/// that call's rewrite, nothing of it may reach a later call, even one that
/// reuses the call id and that no hook matches.
#[tokio::test]
async fn a_rejected_rewrite_leaves_no_verdict_behind() {
    let rewrite = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":42},"additionalContext":"STALE-CONTEXT"}}"#;
    let s = setup(json!({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [hook(format!("cat >/dev/null; echo '{rewrite}'"))]}
    ]}}));
    let registry = registry_with(&s);
    let sealed = registry
        .seal(&s.ctx, proposed("call_1", "bash", json!({"command": "ls"})))
        .await;
    let rejection = sealed.rejection().cloned().unwrap();
    assert_eq!(rejection.disposition, Disposition::InvalidArguments);
    let result = registry.execute(&s.ctx, sealed).await;
    assert!(result.contexts.is_empty(), "{:?}", result.contexts);

    // Same call id, a tool no hook matches: no hook runs, nothing stale applies.
    let file = s.project.join("notes.txt");
    std::fs::write(&file, "hello\n").unwrap();
    let sealed = registry
        .seal(
            &s.ctx,
            proposed(
                "call_1",
                "read",
                json!({"file_path": file.display().to_string()}),
            ),
        )
        .await;
    assert!(sealed.rejection().is_none());
    let result = registry.execute(&s.ctx, sealed).await;
    assert!(!result.outcome.is_error, "{:?}", result.outcome);
    assert!(result.contexts.is_empty(), "{:?}", result.contexts);
    assert_eq!(invocations_for(&s, "call_1"), 1);
}

/// PreToolUse runs once per call: at review time, never again at
/// pre-execute, whether or not a hook rewrote or decided anything.
#[tokio::test]
async fn pre_tool_use_runs_exactly_once_per_call() {
    let counter = tempfile::NamedTempFile::new().unwrap();
    let count = format!("cat >/dev/null; echo x >> '{}'", counter.path().display());
    let s = setup(json!({"hooks": {"PreToolUse": [
        {"matcher": "*", "hooks": [hook(count)]}
    ]}}));
    let registry = registry_with(&s);
    for (call_id, command) in [("call_a", "true"), ("call_b", "echo hi")] {
        let sealed = registry
            .seal(
                &s.ctx,
                proposed(call_id, "bash", json!({"command": command})),
            )
            .await;
        let result = registry.execute(&s.ctx, sealed).await;
        assert!(!result.outcome.is_error, "{:?}", result.outcome);
        assert_eq!(invocations_for(&s, call_id), 1, "{call_id}");
    }
    let runs = std::fs::read_to_string(counter.path()).unwrap();
    assert_eq!(runs.lines().count(), 2, "{runs:?}");
}

fn settled_bash(call_id: &str) -> dsh_seams::SettledCall {
    let call = proposed(call_id, "bash", json!({"command": "echo hi"}));
    dsh_seams::SettledCall {
        execution: exec(call_id, "bash", call.arguments.clone()),
        call,
        outcome: ToolOutcome::success("hi\n", None),
    }
}

/// PostToolBatch runs on the batch-settled seam (it was logged as `none`).
#[tokio::test]
async fn post_tool_batch_is_logged_on_the_batch_settled_seam() {
    let s = setup(json!({"hooks": {"PostToolBatch": [
        {"hooks": [hook("cat >/dev/null; echo '{}'".to_owned())]}
    ]}}));
    let contexts = s
        .plugin
        .batch_settled(&s.ctx, &[settled_bash("call_1")])
        .await;
    assert!(contexts.is_empty(), "{contexts:?}");
    let events = s.sink.events.lock().unwrap().clone();
    let seams: Vec<Seam> = events
        .iter()
        .filter_map(|event| match event {
            EventBody::HookInvoked(HookInvokedEvent { seam, .. }) => Some(*seam),
            _ => None,
        })
        .collect();
    assert_eq!(seams, vec![Seam::BatchSettled]);
    assert!(s.ctx.control.stop_requested().is_none());
}

/// A PostToolBatch block stops the loop before the next model call, as
/// Claude Code does; its text still reaches the conversation.
#[tokio::test]
async fn a_post_tool_batch_block_stops_the_loop() {
    for command in [
        r#"cat >/dev/null; echo '{"decision":"block","reason":"BATCH-NO"}'"#,
        "cat >/dev/null; echo BATCH-NO >&2; exit 2",
    ] {
        let s = setup(json!({"hooks": {"PostToolBatch": [
            {"hooks": [hook(command.to_owned())]}
        ]}}));
        let contexts = s
            .plugin
            .batch_settled(&s.ctx, &[settled_bash("call_1")])
            .await;
        assert_eq!(contexts.len(), 1, "{command}: {contexts:?}");
        assert!(contexts[0].content.contains("BATCH-NO"), "{contexts:?}");
        let stop = s.ctx.control.stop_requested().expect("a stop request");
        assert!(stop.reason.contains("BATCH-NO"), "{command}: {stop:?}");
        assert_eq!(stop.source, "claude:PostToolBatch");
        let events = s.sink.events.lock().unwrap().clone();
        let won = events.iter().find_map(|event| match event {
            EventBody::HookResult(HookResultEvent { decision, .. }) => decision.won,
            _ => None,
        });
        assert_eq!(won, Some(true), "{command}");
    }
}

/// Notice levels are typed, not guessed from the text: a failing hook whose
/// stderr happens to contain " says: " is still a warning, and a hook's own
/// `systemMessage` is information.
#[tokio::test]
async fn notice_levels_come_from_what_happened_not_from_the_text() {
    let s = setup(
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            hook("cat >/dev/null; echo 'the linter says: no' >&2; exit 1".to_owned()),
            hook(r#"cat >/dev/null; echo '{"systemMessage":"all good"}'"#.to_owned())
        ]}]}}),
    );
    let _ = pre_tool(&s, "call_1", "bash", json!({"command": "ls"})).await;
    let notices = s.sink.notices.lock().unwrap().clone();
    let levels: Vec<(bool, dsh_seams::NoticeLevel)> = notices
        .iter()
        .map(|n| (n.text.contains("the linter says: no"), n.level))
        .collect();
    assert_eq!(
        levels,
        vec![
            (true, dsh_seams::NoticeLevel::Warning),
            (false, dsh_seams::NoticeLevel::Info)
        ],
        "{notices:?}"
    );
    assert!(notices[1].text.ends_with("says: all good"), "{notices:?}");
}

/// StopFailure: the matcher is on the error category, the hook gets the
/// captured payload, the seam returns without waiting for it, and a hook
/// still running past the teardown grace is killed at session end.
#[tokio::test]
async fn stop_failure_is_matched_on_the_category_and_not_waited_for() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sf.json");
    let slow_marker = tmp.path().join("slow-finished");
    let s = setup(json!({"hooks": {"StopFailure": [
        {"matcher": "rate_limit", "hooks": [hook(format!("cat > '{}'", out.display()))]},
        {"matcher": "server_error", "hooks": [hook("touch /dev/null/never".to_owned())]},
        {"matcher": "rate_limit", "hooks": [hook(format!("sleep 5; touch '{}'", slow_marker.display()))]}
    ]}}));
    let error = dsh_model::ModelError::new("HTTP 429 from the provider")
        .with_failure(dsh_model::ProviderFailure::from_status(429, "slow down"));
    let failure = dsh_seams::TurnFailure {
        turn: 1,
        step: 1,
        error,
    };
    let started = std::time::Instant::now();
    s.plugin.turn_failed(&s.ctx, &failure).await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the seam waited for the hooks: {:?}",
        started.elapsed()
    );
    let events = s.sink.events.lock().unwrap().clone();
    let invoked: Vec<(String, Seam)> = events
        .iter()
        .filter_map(|e| match e {
            EventBody::HookInvoked(HookInvokedEvent { event, seam, .. }) => {
                Some((event.clone(), *seam))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        invoked,
        vec![
            ("StopFailure".to_owned(), Seam::TurnFailed),
            ("StopFailure".to_owned(), Seam::TurnFailed)
        ],
        "only the rate_limit group runs"
    );
    let ctx = SeamContext {
        turn: None,
        ..s.ctx.clone()
    };
    let ended = std::time::Instant::now();
    s.plugin
        .session_end(&ctx, dsh_seams::SessionEndReason::Other)
        .await;
    let took = ended.elapsed();
    assert!(
        took < Duration::from_secs(4),
        "teardown waited for the slow hook: {took:?}"
    );
    let stdin = std::fs::read_to_string(&out).expect("the quick hook finished");
    let stdin: Value = serde_json::from_str(&stdin).unwrap();
    let keys: Vec<&str> = stdin
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "session_id",
            "transcript_path",
            "cwd",
            "prompt_id",
            "effort",
            "hook_event_name",
            "error",
            "last_assistant_message"
        ]
    );
    assert_eq!(stdin["error"], "rate_limit");
    assert_eq!(
        stdin["last_assistant_message"],
        "API Error: Request rejected (429) · slow down"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!slow_marker.exists(), "the slow hook was not killed");
}

/// A custom agent's frontmatter hooks that dsh's trust disabled do not run
/// inside the agent, and SubagentStart says so in Claude Code's words
/// (`captures/sub_custom_agent`); settings hooks still fire there, with the
/// agent's identity in the payload.
#[tokio::test]
async fn untrusted_frontmatter_hooks_are_skipped_with_claude_codes_message() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let project = tmp.path().join("proj");
    std::fs::create_dir_all(project.join(".claude/agents")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let marker = project.join("frontmatter-ran");
    std::fs::write(
        project.join(".claude/agents/reviewer.md"),
        format!(
            "---\nname: reviewer\ndescription: Reviews.\nhooks:\n  SubagentStart:\n    - hooks:\n        - type: command\n          command: touch '{}'\n---\nReview.\n",
            marker.display()
        ),
    )
    .unwrap();
    let start = project.join("start.json");
    std::fs::write(
        project.join(".claude/settings.json"),
        json!({"hooks": {"SubagentStart": [{"matcher": "reviewer", "hooks": [
            {"type": "command", "command": format!("cat > '{}'", start.display())}]}]}})
        .to_string(),
    )
    .unwrap();
    let mut discovery = ClaudeDiscovery::new(&project, &home, &tmp.path().join("dsh"));
    discovery.managed_dir = tmp.path().join("no-managed");
    let mut config = load_with_options(&discovery, ClaudeOptions::default()).unwrap();
    let frontmatter: Vec<String> = config
        .handlers()
        .iter()
        .filter(|h| h.agent.as_deref() == Some("reviewer"))
        .map(|h| h.origin.clone())
        .collect();
    assert_eq!(frontmatter.len(), 1);
    config.disable_origins(&frontmatter, "not trusted");
    let plugin = config.into_plugin(HookRunner::new(RunnerConfig::default()));
    assert_eq!(plugin.agent_definitions()[0].name, "reviewer");
    let sink = Arc::new(Recorder::default());
    let identity = dsh_seams::AgentIdentity {
        agent_id: "a0123456789abcdef".to_owned(),
        agent_type: "reviewer".to_owned(),
    };
    let ctx = SeamContext {
        session: Arc::new(SessionInfo {
            session_id: "11111111-2222-3333-4444-555555555555".to_owned(),
            cwd: project.clone(),
            model: "test".to_owned(),
            log_path: None,
            env: SessionEnv::default(),
            interactive: false,
        }),
        turn: Some(1),
        cancel: CancellationToken::new(),
        sink: sink.clone(),
        control: TurnControl::default(),
        agent: Some(identity.clone()),
        subagents: None,
    };
    let contexts = plugin
        .subagent_start(
            &ctx,
            &dsh_seams::SubagentStartInput {
                identity,
                prompt: "p".to_owned(),
                description: "d".to_owned(),
            },
        )
        .await;
    assert!(contexts.is_empty());
    assert!(!marker.exists(), "the untrusted frontmatter hook ran");
    let notices: Vec<String> = sink
        .notices
        .lock()
        .unwrap()
        .iter()
        .map(|n| n.text.clone())
        .collect();
    assert_eq!(
        notices,
        [
            "Skipping frontmatter hooks for agent 'reviewer': the folder its definition file came from is not trusted"
        ]
    );
    let stdin: Value = serde_json::from_str(&std::fs::read_to_string(&start).unwrap()).unwrap();
    let keys: Vec<&str> = stdin
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "session_id",
            "transcript_path",
            "cwd",
            "prompt_id",
            "agent_id",
            "agent_type",
            "hook_event_name"
        ]
    );
    assert_eq!(stdin["agent_id"], "a0123456789abcdef");
}
