//! Fixtures that need native plugins, run through the library API with the
//! same loop, tools and log as `dsh replay`. Also the integration test that
//! composes a native plugin on every seam.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use dsh_agent::{
    Fixture, Observers, ReplayOptions, ScriptedModel, replay_fixture, replay_with_model,
};
use dsh_protocol::{EventBody, SessionHeaderEvent, TurnEndReason};
use dsh_seams::{
    ApprovalDecision, CancellationToken, ContextEntry, ContinuationDecision, ContinuationInput,
    GuardVerdict, HistoryInput, InputRewrite, Next, Plugin, PostToolAction, PostToolDecision,
    PreToolDecision, PreToolOutcome, PromptDecision, PromptInput, ProposedCall, SeamContext,
    SessionEndReason, SessionStartSource, ToolExecution, ToolOutcome, TurnSummary,
};
use dsh_seams::{CallReview, PreToolVerdict};
use dsh_session::{SessionLog, encode};
use serde_json::json;

use crate::support::{TestContext, fixture, normalize_jsonl};

fn header(ctx: &TestContext) -> EventBody {
    EventBody::SessionHeader(SessionHeaderEvent {
        session_id: "test-session".into(),
        cwd: ctx.project().display().to_string(),
        version: "test".into(),
        notices: vec![],
        provider_api: None,
    })
}

fn options(ctx: &TestContext, name: &str, plugins: Vec<Arc<dyn Plugin>>) -> ReplayOptions {
    ReplayOptions {
        label: name.to_owned(),
        cwd: ctx.project(),
        session_id: "test-session".into(),
        log: SessionLog::in_memory(header(ctx)).unwrap(),
        resumed: false,
        plugins,
        processes: dsh_tools::builtin::ProcessLayer::default(),
        max_steps: 10,
        system_prompt: "You are a test agent.".into(),
        observers: Observers::default(),
        prompt_limit: None,
        skip_prompts: 0,
        auto_compact: dsh_agent::AutoCompact::default(),
        project: Default::default(),
        extra_tools: Vec::new(),
        tools: dsh_tools::builtin::BuiltinSelection::All,
        setup: None,
    }
}

fn jsonl(events: &[dsh_protocol::Event]) -> String {
    events.iter().map(|e| encode(e).unwrap() + "\n").collect()
}

fn requests_jsonl(requests: &[dsh_protocol::RequestRecord]) -> String {
    requests
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect()
}

async fn run_native(
    name: &str,
    plugins: Vec<Arc<dyn Plugin>>,
) -> (String, String, dsh_agent::ReplayOutput) {
    let ctx = TestContext::new();
    let fx = Fixture::load(&fixture(name)).unwrap();
    let output = replay_fixture(&fx, options(&ctx, name, plugins))
        .await
        .unwrap();
    assert!(
        output.record_errors.is_empty(),
        "{:?}",
        output.record_errors
    );
    let log = normalize_jsonl(&jsonl(&output.events), &ctx);
    let requests = normalize_jsonl(&requests_jsonl(&output.requests), &ctx);
    (log, requests, output)
}

/// Blocks prompts mentioning SECRET; rewrites "say hi" politely with a context.
struct PromptPolicy;

#[async_trait]
impl Plugin for PromptPolicy {
    fn name(&self) -> &str {
        "prompt-policy"
    }
    async fn prompt_submit(&self, _ctx: &SeamContext, prompt: &PromptInput) -> PromptDecision {
        if prompt.content.contains("SECRET") {
            PromptDecision::Block {
                reason: "prompts may not ask for secrets".into(),
            }
        } else if prompt.content == "say hi" {
            PromptDecision::Allow {
                rewrite: Some("say hi politely".into()),
                contexts: vec![ContextEntry::new(
                    "The user prefers short answers.",
                    "prompt-policy",
                )],
            }
        } else {
            PromptDecision::allow()
        }
    }
}

#[tokio::test]
async fn prompt_blocked_by_a_native_plugin() {
    let (log, requests, output) =
        run_native("prompt_blocked_native.json", vec![Arc::new(PromptPolicy)]).await;
    assert_eq!(output.outcomes[0].reason, TurnEndReason::Rejected);
    assert!(
        requests.is_empty(),
        "a blocked prompt consumes no model step"
    );
    insta::assert_snapshot!("prompt_blocked_native__log", log);
}

#[tokio::test]
async fn two_sends_one_blocked_one_allowed() {
    let (log, requests, output) =
        run_native("two_sends_one_blocked.json", vec![Arc::new(PromptPolicy)]).await;
    let reasons: Vec<_> = output.outcomes.iter().map(|o| o.reason).collect();
    assert_eq!(
        reasons,
        vec![TurnEndReason::Rejected, TurnEndReason::Completed]
    );
    assert!(
        !requests.contains("SECRET"),
        "a blocked prompt never reaches the model"
    );
    insta::assert_snapshot!("two_sends_one_blocked__log", log);
    insta::assert_snapshot!("two_sends_one_blocked__requests", requests);
}

/// Adds one post-execute context per call, naming the call.
struct PostContext;

#[async_trait]
impl Plugin for PostContext {
    fn name(&self) -> &str {
        "post-context"
    }
    async fn post_execute(
        &self,
        _ctx: &SeamContext,
        exec: &ToolExecution,
        outcome: &ToolOutcome,
        _d: Duration,
    ) -> PostToolDecision {
        PostToolDecision {
            action: PostToolAction::Accept,
            contexts: vec![ContextEntry::new(
                format!("checked {}: {}", exec.call_id, outcome.content),
                "post-context",
            )],
        }
    }
}

#[tokio::test]
async fn post_execute_contexts_from_two_calls_follow_both_results() {
    let (log, requests, _) =
        run_native("post_contexts_two_calls.json", vec![Arc::new(PostContext)]).await;
    let kinds: Vec<String> = log
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    let first_context = kinds.iter().position(|k| k == "context/message").unwrap();
    let last_result = kinds.iter().rposition(|k| k == "tool/result").unwrap();
    assert!(first_context > last_result, "{kinds:?}");
    insta::assert_snapshot!("post_contexts_two_calls__log", log);
    insta::assert_snapshot!("post_contexts_two_calls__requests", requests);
}

/// Forces one continuation with a model-facing reason.
#[derive(Default)]
struct ContinueOnce {
    seen: Mutex<Vec<u32>>,
}

#[async_trait]
impl Plugin for ContinueOnce {
    fn name(&self) -> &str {
        "continue-once"
    }
    async fn turn_continuation(
        &self,
        _ctx: &SeamContext,
        input: &ContinuationInput,
    ) -> ContinuationDecision {
        self.seen.lock().unwrap().push(input.forced_continuations);
        if input.forced_continuations == 0 {
            ContinuationDecision::Continue {
                reason: Some("Run the tests before you stop.".into()),
                source: "continue-once".into(),
                contexts: vec![],
            }
        } else {
            ContinuationDecision::Stop
        }
    }
}

#[tokio::test]
async fn a_native_continuation_steers_the_next_step_in_the_same_turn() {
    let plugin = Arc::new(ContinueOnce::default());
    let (log, requests, output) =
        run_native("native_continuation.json", vec![plugin.clone()]).await;
    assert_eq!(output.outcomes.len(), 1);
    assert_eq!(
        output.outcomes[0].final_text.as_deref(),
        Some("Tests pass too.")
    );
    assert_eq!(*plugin.seen.lock().unwrap(), vec![0, 1]);
    insta::assert_snapshot!("native_continuation__log", log);
    insta::assert_snapshot!("native_continuation__requests", requests);
}

/// Injects session-start context naming the source.
struct SessionContext;

#[async_trait]
impl Plugin for SessionContext {
    fn name(&self) -> &str {
        "session-context"
    }
    async fn session_start(
        &self,
        _ctx: &SeamContext,
        source: SessionStartSource,
    ) -> Vec<ContextEntry> {
        vec![ContextEntry::new(
            format!("Session source: {}. Current branch: main.", source.as_str()),
            "session-context",
        )]
    }
}

#[tokio::test]
async fn session_start_context_is_in_the_first_request() {
    let (log, requests, _) =
        run_native("session_start_context.json", vec![Arc::new(SessionContext)]).await;
    let first = requests.lines().next().unwrap();
    assert!(
        first.contains("Session source: startup. Current branch: main."),
        "{first}"
    );
    insta::assert_snapshot!("session_start_context__log", log);
    insta::assert_snapshot!("session_start_context__requests", requests);
}

#[tokio::test]
async fn resume_of_a_saved_session_fires_session_start_with_resume() {
    let ctx = TestContext::new();
    let path = ctx.home().join("session.jsonl");
    let fx = Fixture::load(&fixture("resume_session.json")).unwrap();
    let model = Arc::new(ScriptedModel::new("resume_session.json", fx.script()));
    let mut first = options(&ctx, "resume_session.json", vec![Arc::new(SessionContext)]);
    first.log = SessionLog::create(&path, header(&ctx)).unwrap();
    first.prompt_limit = Some(1);
    replay_with_model(&fx, first, model.clone()).await.unwrap();

    let (log, torn) = SessionLog::open(&path).unwrap();
    assert!(torn.is_none());
    let mut second = options(&ctx, "resume_session.json", vec![Arc::new(SessionContext)]);
    second.log = log;
    second.resumed = true;
    second.skip_prompts = 1;
    let output = replay_with_model(&fx, second, model).await.unwrap();
    let requests = normalize_jsonl(&requests_jsonl(&output.requests), &ctx);
    assert!(requests.contains("Session source: resume."), "{requests}");
    assert!(
        requests.contains("I will remember kiwi."),
        "history carries over: {requests}"
    );
    let log = normalize_jsonl(&std::fs::read_to_string(&path).unwrap(), &ctx);
    insta::assert_snapshot!("resume_session__log", log);
    insta::assert_snapshot!("resume_session__requests", requests);
}

/// A plugin on every seam, recording what it saw.
#[derive(Default)]
struct EverySeam {
    seams: Mutex<Vec<String>>,
    ends: AtomicU32,
}

impl EverySeam {
    fn saw(&self, seam: &str) {
        self.seams.lock().unwrap().push(seam.to_owned());
    }
}

#[async_trait]
impl Plugin for EverySeam {
    fn name(&self) -> &str {
        "every-seam"
    }
    async fn session_start(
        &self,
        _ctx: &SeamContext,
        _source: SessionStartSource,
    ) -> Vec<ContextEntry> {
        self.saw("session-start");
        vec![ContextEntry::new("START-CTX", "every-seam")]
    }
    async fn prompt_submit(&self, _ctx: &SeamContext, prompt: &PromptInput) -> PromptDecision {
        self.saw("prompt-submit");
        PromptDecision::Allow {
            rewrite: Some(format!("{} (rewritten)", prompt.content)),
            contexts: vec![ContextEntry::new("PROMPT-CTX", "every-seam")],
        }
    }
    async fn rewrite_input(&self, _ctx: &SeamContext, call: &ProposedCall) -> CallReview {
        self.saw("rewrite-input");
        if call.arguments["command"] == "echo original" {
            InputRewrite::Rewrite {
                arguments: json!({"command": "echo rewritten"}),
                by: "every-seam".into(),
                conflicts: vec![],
                history: HistoryInput::Original,
                refusal: None,
            }
            .into()
        } else {
            CallReview::keep()
        }
    }
    async fn pre_execute(
        &self,
        _ctx: &SeamContext,
        exec: &ToolExecution,
        _review: Option<&PreToolVerdict>,
    ) -> PreToolOutcome {
        self.saw("pre-execute");
        if exec.arguments["command"] == "echo ask" {
            return PreToolOutcome {
                decision: PreToolDecision::ask(Some("needs a yes".into())),
                contexts: vec![],
            };
        }
        PreToolOutcome {
            decision: PreToolDecision::Allow,
            contexts: vec![ContextEntry::new("PRE-CTX", "every-seam")],
        }
    }
    async fn approve(
        &self,
        _ctx: &SeamContext,
        _exec: &ToolExecution,
        _ask: &dsh_seams::ApprovalAsk,
        _review: Option<&PreToolVerdict>,
    ) -> ApprovalDecision {
        self.saw("approve");
        ApprovalDecision::AllowOnce
    }
    fn guard(&self, _ctx: &SeamContext, exec: &ToolExecution) -> GuardVerdict {
        self.saw("guard");
        if exec.arguments["command"] == "echo forbidden" {
            GuardVerdict::Deny {
                reason: "GUARD-DENIED".into(),
            }
        } else {
            GuardVerdict::Abstain
        }
    }
    async fn execute(
        &self,
        _ctx: &SeamContext,
        _exec: &ToolExecution,
        signal: CancellationToken,
        next: Next<'_>,
    ) -> ToolOutcome {
        self.saw("execute");
        next.run(signal).await
    }
    async fn post_execute(
        &self,
        _ctx: &SeamContext,
        _exec: &ToolExecution,
        outcome: &ToolOutcome,
        _d: Duration,
    ) -> PostToolDecision {
        self.saw("post-execute");
        PostToolDecision {
            action: PostToolAction::ReplaceContent {
                content: format!("{} [seen]", outcome.content),
            },
            contexts: vec![],
        }
    }
    fn tool_result(&self, _ctx: &SeamContext, _exec: &ToolExecution, _outcome: &ToolOutcome) {
        self.saw("result");
    }
    async fn turn_continuation(
        &self,
        _ctx: &SeamContext,
        input: &ContinuationInput,
    ) -> ContinuationDecision {
        self.saw("turn-continuation");
        if input.forced_continuations == 0 {
            ContinuationDecision::Continue {
                reason: Some("CONTINUE-REASON".into()),
                source: "every-seam".into(),
                contexts: vec![ContextEntry::new("CONT-CTX", "every-seam")],
            }
        } else {
            ContinuationDecision::Stop
        }
    }
    async fn turn_end(&self, _ctx: &SeamContext, _summary: &TurnSummary) {
        self.ends.fetch_add(1, Ordering::SeqCst);
    }
    async fn session_end(&self, _ctx: &SeamContext, _reason: SessionEndReason) {
        self.saw("session-end");
    }
}

#[tokio::test]
async fn a_native_plugin_composes_on_every_seam_through_the_registry() {
    let ctx = TestContext::new();
    let fx = Fixture::parse(
        std::path::Path::new("inline"),
        r#"{"description":"every seam","prompts":["go"],"model":[
            {"tool_calls":[
                {"name":"bash","arguments":{"command":"echo original"}},
                {"name":"bash","arguments":{"command":"echo ask"}},
                {"name":"bash","arguments":{"command":"echo forbidden"}}]},
            {"text":"first stop"},
            {"text":"second stop"}]}"#,
    )
    .unwrap();
    let plugin = Arc::new(EverySeam::default());
    let output = replay_fixture(&fx, options(&ctx, "inline", vec![plugin.clone()]))
        .await
        .unwrap();
    let seams = plugin.seams.lock().unwrap().clone();
    for seam in [
        "session-start",
        "prompt-submit",
        "rewrite-input",
        "pre-execute",
        "approve",
        "guard",
        "execute",
        "post-execute",
        "result",
        "turn-continuation",
        "session-end",
    ] {
        assert!(
            seams.contains(&seam.to_owned()),
            "{seam} never fired: {seams:?}"
        );
    }
    assert_eq!(plugin.ends.load(Ordering::SeqCst), 1);
    let log = normalize_jsonl(&jsonl(&output.events), &ctx);
    let results: Vec<String> = crate::support::events_of(&log, "tool/result")
        .iter()
        .map(|r| r["content"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        results,
        vec!["rewritten [seen]", "ask [seen]", "GUARD-DENIED [seen]"]
    );
    insta::assert_snapshot!("every_seam__log", log);
}
