//! Compaction: the native `session_before_compact` seam through
//! the real loop, automatic compaction driven by reported usage, and a
//! headless run against the loopback provider that crosses the context
//! limit, compacts, then resumes from the compacted log.

use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use dsh_agent::{AutoCompact, Fixture, Observers, ReplayOptions, replay_fixture};
use dsh_protocol::{
    CompactionCompletedEvent, CompactionFailedEvent, CompactionStartedEvent, EventBody, Message,
    SessionHeaderEvent, TurnEndReason,
};
use dsh_provider::mock::{MockProvider, MockResponse, MockToolCall};
use dsh_seams::{
    CompactionDecision, CompactionInput, CompactionOutcome, CompactionTrigger, ContextEntry,
    Plugin, SeamContext,
};
use dsh_session::SessionLog;
use serde_json::{Value, json};

use crate::support::TestContext;

fn options(ctx: &TestContext, plugins: Vec<Arc<dyn Plugin>>, auto: AutoCompact) -> ReplayOptions {
    ReplayOptions {
        label: "compaction".to_owned(),
        cwd: ctx.project(),
        session_id: "compaction-session".into(),
        log: SessionLog::in_memory(EventBody::SessionHeader(SessionHeaderEvent {
            session_id: "compaction-session".into(),
            cwd: ctx.project().display().to_string(),
            version: "test".into(),
            notices: vec![],
            provider_api: None,
        }))
        .unwrap(),
        resumed: false,
        plugins,
        processes: dsh_tools::builtin::ProcessLayer::default(),
        max_steps: 10,
        system_prompt: "You are a test agent.".into(),
        observers: Observers::default(),
        prompt_limit: None,
        skip_prompts: 0,
        auto_compact: auto,
        extra_tools: Vec::new(),
        tools: dsh_tools::builtin::BuiltinSelection::All,
        setup: None,
        project: Default::default(),
    }
}

fn fixture(value: Value) -> Fixture {
    Fixture::parse(Path::new("inline.json"), &value.to_string()).unwrap()
}

/// What a native compaction plugin answers, and what it saw.
struct Compactor {
    answer: CompactionDecision,
    context: Option<&'static str>,
    seen: Mutex<Vec<String>>,
}

impl Compactor {
    fn new(answer: CompactionDecision, context: Option<&'static str>) -> Arc<Self> {
        Arc::new(Compactor {
            answer,
            context,
            seen: Mutex::new(Vec::new()),
        })
    }
}

#[async_trait]
impl Plugin for Compactor {
    fn name(&self) -> &str {
        "compactor"
    }

    async fn session_before_compact(
        &self,
        _ctx: &SeamContext,
        input: &CompactionInput,
    ) -> CompactionDecision {
        self.seen.lock().unwrap().push(format!(
            "before {} {:?} messages={}",
            input.trigger.as_str(),
            input.custom_instructions,
            input.messages_to_summarize
        ));
        self.answer.clone()
    }

    async fn session_compacted(
        &self,
        _ctx: &SeamContext,
        outcome: &CompactionOutcome,
    ) -> Vec<ContextEntry> {
        self.seen.lock().unwrap().push(format!(
            "after {} by {}: {}",
            outcome.trigger.as_str(),
            outcome.summarized_by,
            outcome.summary
        ));
        self.context
            .map(|text| vec![ContextEntry::new(text, "compactor")])
            .unwrap_or_default()
    }
}

fn of_type<'a>(events: &'a [dsh_protocol::Event], kind: &str) -> Vec<&'a EventBody> {
    events
        .iter()
        .filter(|event| event.body.type_name() == kind)
        .map(|event| &event.body)
        .collect()
}

fn user_texts(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|message| match message {
            Message::User { content } => Some(content.clone()),
            Message::System { .. } | Message::Assistant { .. } | Message::Tool { .. } => None,
        })
        .collect()
}

#[tokio::test]
async fn a_native_plugin_cancels_compaction_and_the_history_stays() {
    let ctx = TestContext::new();
    let plugin = Compactor::new(
        CompactionDecision::Cancel {
            reason: "NATIVE-CANCEL: not now".into(),
        },
        None,
    );
    let fx = fixture(json!({
        "prompts": ["first", "/compact keep the tests", "second"],
        "model": [{"text": "one"}, {"text": "two"}]
    }));
    let out = replay_fixture(
        &fx,
        options(&ctx, vec![plugin.clone()], AutoCompact::default()),
    )
    .await
    .unwrap();
    // No summary request: two model requests for two real prompts.
    assert_eq!(out.requests.len(), 2);
    assert_eq!(
        plugin.seen.lock().unwrap().clone(),
        // `one`, the latest reply, is kept verbatim: only the prompt would be summarized.
        vec![r#"before manual Some("keep the tests") messages=1"#.to_owned()]
    );
    let failed = of_type(&out.events, "compaction/failed");
    assert_eq!(failed.len(), 1);
    let EventBody::CompactionFailed(CompactionFailedEvent {
        turn,
        trigger,
        reason,
    }) = failed[0]
    else {
        unreachable!()
    };
    assert_eq!((*turn, *trigger), (2, CompactionTrigger::Manual));
    assert_eq!(reason, "NATIVE-CANCEL: not now");
    assert!(of_type(&out.events, "compaction/completed").is_empty());
    // The `/compact` turn is not model-facing and the history is whole.
    assert_eq!(
        user_texts(&out.requests[1].messages),
        vec!["first".to_owned(), "second".to_owned()]
    );
    assert_eq!(out.outcomes[1].reason, TurnEndReason::Completed);
    assert_eq!(
        out.outcomes[1].message.as_deref(),
        Some("NATIVE-CANCEL: not now")
    );
}

#[tokio::test]
async fn a_native_plugin_supplies_the_summary_and_its_context_follows_it() {
    let ctx = TestContext::new();
    let plugin = Compactor::new(
        CompactionDecision::Summary {
            summary: "NATIVE-SUMMARY: the user said first".into(),
        },
        Some("NATIVE-CONTEXT after compaction"),
    );
    let fx = fixture(json!({
        "prompts": ["first", "/compact", "second"],
        "model": [{"text": "one"}, {"text": "two"}]
    }));
    let out = replay_fixture(
        &fx,
        options(&ctx, vec![plugin.clone()], AutoCompact::default()),
    )
    .await
    .unwrap();
    // The plugin's summary replaces the summary request.
    assert_eq!(out.requests.len(), 2);
    assert_eq!(
        plugin.seen.lock().unwrap().clone(),
        vec![
            "before manual None messages=1".to_owned(),
            "after manual by compactor: NATIVE-SUMMARY: the user said first".to_owned(),
        ]
    );
    let completed = of_type(&out.events, "compaction/completed");
    assert_eq!(completed.len(), 1);
    let EventBody::CompactionCompleted(CompactionCompletedEvent {
        summary,
        summarized_by,
        kept_from_seq,
        contexts,
        ..
    }) = completed[0]
    else {
        unreachable!()
    };
    assert_eq!(summary, "NATIVE-SUMMARY: the user said first");
    assert_eq!(summarized_by, "compactor");
    assert!(kept_from_seq.is_some(), "the last reply is kept verbatim");
    assert_eq!(contexts.len(), 1);
    // After: the summary, the plugin's context, the kept reply, the new prompt.
    let after = &out.requests[1].messages;
    assert!(matches!(&after[0], Message::System { .. }));
    let Message::User { content } = &after[1] else {
        panic!("the summary opens the history: {after:?}")
    };
    assert!(content.contains("NATIVE-SUMMARY: the user said first"));
    assert!(
        !after
            .iter()
            .any(|m| matches!(m, Message::User { content } if content == "first")),
        "the first prompt is summarized away"
    );
    assert_eq!(
        after[2],
        Message::System {
            content: "NATIVE-CONTEXT after compaction".into()
        }
    );
    assert_eq!(
        after[3],
        Message::Assistant {
            content: "one".into(),
            tool_calls: vec![],
            thinking: None,
        }
    );
    assert_eq!(
        after[4],
        Message::User {
            content: "second".into()
        }
    );
    assert_eq!(after.len(), 5, "the first prompt is gone: {after:?}");
}

#[tokio::test]
async fn reported_usage_over_the_threshold_compacts_before_the_next_request() {
    let ctx = TestContext::new();
    let plugin = Compactor::new(CompactionDecision::proceed(), None);
    let fx = fixture(json!({
        "prompts": ["run it"],
        "model": [
            {"text": "running", "usage": {"input_tokens": 9000, "output_tokens": 10},
             "tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "echo hi"}}]},
            {"text": "<analysis>went over it</analysis>\n<summary>AUTO-SUMMARY</summary>"},
            {"text": "done"}
        ]
    }));
    let out = replay_fixture(
        &fx,
        options(&ctx, vec![plugin.clone()], AutoCompact::window(10_000)),
    )
    .await
    .unwrap();
    assert!(out.all_completed());
    assert_eq!(out.requests.len(), 3);
    // The summary request: the history before the latest reply, then the instructions.
    let summary_request = &out.requests[1].messages;
    assert_eq!(
        user_texts(summary_request)[0],
        "run it",
        "{summary_request:?}"
    );
    let Some(Message::User { content }) = summary_request.last() else {
        panic!("instructions last: {summary_request:?}")
    };
    assert!(content.contains("<summary>"), "{content}");
    assert_eq!(summary_request.len(), 3, "system, prompt, instructions");
    // After: summary (tags stripped), the kept tool call and its result.
    let after = &out.requests[2].messages;
    let Message::User { content } = &after[1] else {
        panic!("{after:?}")
    };
    assert!(content.contains("AUTO-SUMMARY") && !content.contains("<summary>"));
    assert!(!content.contains("went over it"));
    assert!(matches!(&after[2], Message::Assistant { tool_calls, .. } if tool_calls.len() == 1));
    assert!(matches!(&after[3], Message::Tool { tool_call_id, .. } if tool_call_id == "c1"));
    assert_eq!(after.len(), 4);
    let started = of_type(&out.events, "compaction/started");
    let EventBody::CompactionStarted(CompactionStartedEvent {
        trigger,
        estimated_tokens,
        ..
    }) = started[0]
    else {
        unreachable!()
    };
    assert_eq!(*trigger, CompactionTrigger::Auto);
    assert!(*estimated_tokens > 9010, "{estimated_tokens}");
    assert_eq!(plugin.seen.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn under_the_threshold_or_off_nothing_compacts() {
    for auto in [AutoCompact::window(200_000), AutoCompact::Off] {
        let ctx = TestContext::new();
        let fx = fixture(json!({
            "prompts": ["run it"],
            "model": [
                {"text": "running", "usage": {"input_tokens": 90_000, "output_tokens": 10},
                 "tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "echo hi"}}]},
                {"text": "done"}
            ]
        }));
        let out = replay_fixture(&fx, options(&ctx, Vec::new(), auto))
            .await
            .unwrap();
        assert!(out.all_completed());
        // 90 010 tokens is below 85 % of 200 000; `Off` never compacts.
        assert!(
            of_type(&out.events, "compaction/started").is_empty(),
            "{auto:?}"
        );
        assert_eq!(out.requests.len(), 2);
    }
}

fn mock(script: Vec<MockResponse>) -> MockProvider {
    MockProvider::start_blocking(script).expect("mock provider on 127.0.0.1")
}

#[test]
fn headless_run_crosses_the_limit_compacts_and_resumes_from_the_compacted_log() {
    let ctx = TestContext::new();
    let mut big = dsh_provider::mock::MockReply::default();
    big.tool_calls.push(MockToolCall::new(
        "call_1",
        "bash",
        &json!({"command": "echo crossed"}),
    ));
    let mock = mock(vec![
        MockResponse::Reply(big.with_usage(95_000, 40)),
        MockResponse::text("<summary>HEADLESS-SUMMARY: echo ran</summary>"),
        MockResponse::text("First done."),
        MockResponse::text("Resumed answer."),
    ]);
    let run = |args: &[&str]| {
        ctx.dsh()
            .env("DSH_BASE_URL", mock.base_url())
            .env("DSH_API_KEY", "sk-test")
            .args(args)
            .output()
            .unwrap()
    };
    let output = run(&[
        "-p",
        "Please echo",
        "--autocompact",
        "100000",
        "--output-format",
        "json",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["result"], "First done.");
    let id = result["session_id"].as_str().unwrap().to_owned();
    let log =
        crate::cli_headless::events(&ctx.home().join(".dsh/sessions").join(format!("{id}.jsonl")));
    let kinds: Vec<&str> = log
        .iter()
        .filter_map(|e| e["type"].as_str())
        .filter(|kind| kind.starts_with("compaction/"))
        .collect();
    assert_eq!(kinds, ["compaction/started", "compaction/completed"]);

    let output = run(&["-p", "And now?", "--resume", &id]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout), "Resumed answer.\n");

    let requests = mock.requests();
    assert_eq!(requests.len(), 4);
    let roles_and_text = |request: &Value| -> Vec<(String, String)> {
        request["messages"]
            .as_array()
            .unwrap()
            .iter()
            .skip(1)
            .map(|m| {
                (
                    m["role"].as_str().unwrap().to_owned(),
                    m["content"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect()
    };
    // The resumed request starts from the summary: the first prompt is gone, the kept tool
    // call and its result follow, then the first run's answer and the new prompt.
    let resumed = roles_and_text(&requests[3]);
    let roles: Vec<&str> = resumed.iter().map(|(role, _)| role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant", "user"]);
    assert!(resumed[0].1.contains("HEADLESS-SUMMARY: echo ran"));
    assert_eq!(resumed[2].1, "crossed");
    assert_eq!(resumed[3].1, "First done.");
    assert_eq!(resumed[4].1, "And now?");
    assert!(!resumed.iter().any(|(_, text)| text == "Please echo"));

    // `dsh log` shows the compaction.
    let log = ctx
        .home()
        .join(".dsh")
        .join("sessions")
        .join(format!("{id}.jsonl"));
    let output = ctx.dsh().arg("log").arg(&log).output().unwrap();
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("compaction (auto): started at ~"), "{text}");
    assert!(
        text.contains("compaction (auto) completed: summary by model, kept verbatim from event"),
        "{text}"
    );
    assert!(text.contains("HEADLESS-SUMMARY: echo ran"), "{text}");
}

#[test]
fn a_claude_precompact_hook_adds_to_the_instructions_and_session_start_compact_reaches_the_model() {
    // OBSERVED §5.7 (r2_compact_resume): PreCompact's plain stdout follows the `/compact` text
    // in the summary instructions; SessionStart(compact) plain stdout reaches the model.
    let ctx = TestContext::new();
    let claude = ctx.project().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join("settings.json"),
        json!({"hooks": {
            "PreCompact": [{"hooks": [{"type": "command", "command": "echo PRECOMPACT-STDOUT"}]}],
            "SessionStart": [{"matcher": "compact",
                              "hooks": [{"type": "command", "command": "echo SS-COMPACT"}]}]
        }})
        .to_string(),
    )
    .unwrap();
    let fixture = ctx.project().join("fixture.json");
    std::fs::write(
        &fixture,
        json!({
            "prompts": ["first", "/compact KEEP-THIS-INSTRUCTION", "second"],
            "model": [{"text": "one"}, {"text": "<summary>S</summary>"}, {"text": "two"}]
        })
        .to_string(),
    )
    .unwrap();
    let requests = ctx.home().join("requests.jsonl");
    let output = ctx
        .dsh()
        .arg("replay")
        .arg(&fixture)
        .arg("--requests-out")
        .arg(&requests)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let requests: Vec<Value> = std::fs::read_to_string(&requests)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(requests.len(), 3);
    let instructions = requests[1]["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    let custom = instructions.find("KEEP-THIS-INSTRUCTION").unwrap();
    let hook = instructions.find("PRECOMPACT-STDOUT").unwrap();
    assert!(custom < hook, "{instructions}");
    let after: Vec<String> = requests[2]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            format!(
                "{}: {}",
                m["role"].as_str().unwrap(),
                m["content"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert!(
        after[1].starts_with("user: ") && after[1].contains('S'),
        "{after:?}"
    );
    assert_eq!(
        after[2],
        "system: SessionStart:compact hook success: SS-COMPACT"
    );
    assert_eq!(after[3], "assistant: one");
    assert_eq!(after[4], "user: second");
    assert!(!after.iter().any(|m| m.contains("PRECOMPACT-STDOUT")));
}

#[tokio::test]
async fn a_summary_that_leaves_the_request_over_the_limit_is_not_retried_every_step() {
    let ctx = TestContext::new();
    let big = "x".repeat(40_000);
    let fx = fixture(json!({
        "prompts": ["write it"],
        "model": [
            {"usage": {"input_tokens": 9000, "output_tokens": 10},
             "tool_calls": [{"id": "w1", "name": "write",
                             "arguments": {"file_path": "big.txt", "content": big}}]},
            {"text": "<summary>S</summary>"},
            {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "echo hi"}}]},
            {"text": "done"}
        ]
    }));
    let out = replay_fixture(&fx, options(&ctx, Vec::new(), AutoCompact::window(10_000)))
        .await
        .unwrap();
    assert!(out.all_completed());
    assert_eq!(out.requests.len(), 4);
    assert_eq!(of_type(&out.events, "compaction/started").len(), 1);
    assert_eq!(of_type(&out.events, "compaction/completed").len(), 1);
}

/// `dsh -p "/compact …" --resume ID` compacts the resumed session as the terminal's `/compact`
/// does: PreCompact (`manual`, the instructions) and PostCompact run, the log records the
/// compaction, the summary request carries the instructions, and the next turn's model sees
/// the summary instead of the turns it replaced. Without a session to resume it is refused.
#[test]
fn headless_compact_on_a_resumed_session_runs_the_terminal_compaction() {
    let ctx = TestContext::new();
    let claude = ctx.project().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    let pre = ctx.home().join("precompact.json");
    let post = ctx.home().join("postcompact.json");
    std::fs::write(
        claude.join("settings.json"),
        json!({"hooks": {
            "PreCompact": [{"hooks": [{"type": "command",
                                       "command": format!("cat > '{}'", pre.display())}]}],
            "PostCompact": [{"hooks": [{"type": "command",
                                        "command": format!("cat > '{}'", post.display())}]}]
        }})
        .to_string(),
    )
    .unwrap();
    let mock = crate::cli_headless::mock(vec![
        MockResponse::text("FIRST-ANSWER"),
        MockResponse::text("<summary>HEADLESS-COMPACT-SUMMARY</summary>"),
        MockResponse::text("AFTER-ANSWER"),
    ]);
    let refused = crate::cli_headless::dsh(&ctx, &mock)
        .args(["-p", "/compact KEEP-NAMES"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--resume ID or --continue"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    let first = crate::cli_headless::dsh(&ctx, &mock)
        .args(["-p", "FIRST-QUESTION", "--output-format", "json"])
        .output()
        .unwrap();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let first: Value = serde_json::from_slice(&first.stdout).unwrap();
    let id = first["session_id"].as_str().unwrap().to_owned();

    let compacted = crate::cli_headless::dsh(&ctx, &mock)
        .args(["-p", "/compact KEEP-NAMES", "--resume", &id])
        .args(["--output-format", "json"])
        .output()
        .unwrap();
    assert!(
        compacted.status.success(),
        "{}",
        String::from_utf8_lossy(&compacted.stderr)
    );
    let result: Value = serde_json::from_slice(&compacted.stdout).unwrap();
    assert_eq!(result["session_id"], id);
    assert_eq!(result["subtype"], "success");
    let log =
        crate::cli_headless::events(&ctx.home().join(".dsh/sessions").join(format!("{id}.jsonl")));
    let all: Vec<&str> = log.iter().filter_map(|e| e["type"].as_str()).collect();
    // This run's events: from its turn on.
    let this_run = all.iter().rposition(|t| *t == "turn/start").unwrap();
    let types = &all[this_run..];
    let started = types.iter().position(|t| *t == "compaction/started");
    let completed = types.iter().position(|t| *t == "compaction/completed");
    assert!(started.is_some() && started < completed, "{types:?}");
    assert!(!types.contains(&"user/message"), "{types:?}");

    let pre: Value = serde_json::from_str(&std::fs::read_to_string(&pre).unwrap()).unwrap();
    assert_eq!(pre["hook_event_name"], "PreCompact");
    assert_eq!(pre["trigger"], "manual");
    assert_eq!(pre["custom_instructions"], "KEEP-NAMES");
    assert_eq!(pre["session_id"], id.as_str());
    let post: Value = serde_json::from_str(&std::fs::read_to_string(&post).unwrap()).unwrap();
    assert_eq!(post["hook_event_name"], "PostCompact");
    assert_eq!(post["trigger"], "manual");

    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let summary_request = requests[1]["messages"].to_string();
    assert!(summary_request.contains("KEEP-NAMES"), "{summary_request}");
    assert!(
        summary_request.contains("FIRST-QUESTION"),
        "{summary_request}"
    );

    let after = crate::cli_headless::dsh(&ctx, &mock)
        .args(["-p", "NEXT-QUESTION", "--resume", &id])
        .output()
        .unwrap();
    assert!(
        after.status.success(),
        "{}",
        String::from_utf8_lossy(&after.stderr)
    );
    let next = mock.requests()[2]["messages"].to_string();
    assert!(next.contains("HEADLESS-COMPACT-SUMMARY"), "{next}");
    assert!(!next.contains("FIRST-QUESTION"), "{next}");
}
