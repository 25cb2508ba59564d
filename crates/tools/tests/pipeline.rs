//! One test per pipeline rule, through the real registry.

#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use dsh_protocol::ToolSpec;
use dsh_seams::{
    ApprovalDecision, ApprovalResponse, CancellationToken, ContextEntry, DenialKind, Disposition,
    GuardVerdict, HistoryInput, InputRewrite, Next, Plugin, PostToolAction, PostToolDecision,
    PreToolDecision, PreToolOutcome, ProposedCall, RequestMeta, SeamContext, ToolExecution,
    ToolOutcome,
};
use dsh_seams::{CallReview, PreToolVerdict};
use dsh_tools::{
    ApprovalService, CallVerdict, Rendered, Tool, ToolContext, ToolError, ToolRegistry,
};
use serde_json::{Value, json};

/// A tool that echoes `text`, can fail or panic on request, and counts
/// dispatches and finalize_content calls.
#[derive(Default)]
struct Echo {
    dispatched: AtomicUsize,
    finalized: AtomicUsize,
}

#[async_trait]
impl Tool for Echo {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "echo".into(),
            description: "echo".into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "text": {"type": "string"},
                    "fail": {"type": "boolean"},
                    "panic": {"type": "boolean"},
                    "defer": {"type": "string"},
                    "wait_for_cancel": {"type": "boolean"},
                    "meta": {"type": "boolean"}
                },
                "required": ["text"],
                "additionalProperties": false
            }),
        }
    }

    async fn run(&self, ctx: &ToolContext, args: &Value) -> Result<Value, ToolError> {
        self.dispatched.fetch_add(1, Ordering::SeqCst);
        if let Some(text) = args.get("defer").and_then(Value::as_str) {
            ctx.defer_context(ContextEntry::new(text, "echo"));
        }
        if args.get("panic") == Some(&json!(true)) {
            panic!("echo exploded");
        }
        if args.get("fail") == Some(&json!(true)) {
            return Err(ToolError("echo failed on purpose".into()));
        }
        if args.get("meta") == Some(&json!(true)) {
            let meta = serde_json::to_string(&ctx.request_meta).unwrap();
            return Ok(json!({"text": meta}));
        }
        if args.get("wait_for_cancel") == Some(&json!(true)) {
            ctx.cancel.cancelled().await;
            return Ok(json!({"text": "cancelled"}));
        }
        Ok(json!({"text": args["text"]}))
    }

    fn render(&self, value: &Value) -> Result<Rendered, ToolError> {
        match value.get("text").and_then(Value::as_str) {
            Some(text) => Ok(Rendered {
                content: text.to_owned(),
                is_error: false,
            }),
            None => Err(ToolError("value has no `text` string".into())),
        }
    }

    fn finalize_content(&self, _outcome: &ToolOutcome) -> Option<String> {
        self.finalized.fetch_add(1, Ordering::SeqCst);
        None
    }
}

/// A configurable plugin recording which seams it saw.
#[derive(Default)]
struct Probe {
    name: String,
    pre: Option<PreToolDecision>,
    pre_context: Option<String>,
    pre_panics: bool,
    /// What `before_dispatch` answers: `None` keeps the meta it is
    /// handed, `Some` replaces it (`Some(None)` drops it).
    dispatch_meta: Option<Option<RequestMeta>>,
    dispatch_panics: bool,
    /// `before_dispatch` calls: the arguments and the meta handed in.
    dispatched: Mutex<Vec<String>>,
    guard: Option<GuardVerdict>,
    approve: Option<ApprovalDecision>,
    post: Option<PostToolAction>,
    post_context: Option<String>,
    rewrite: Option<Value>,
    wrapper_result: Option<ToolOutcome>,
    wrapper_signal: bool,
    observer_panics: bool,
    seen: Mutex<Vec<String>>,
    /// The call id of every call post-execute saw.
    post_call_ids: Mutex<Vec<String>>,
}

impl Probe {
    fn named(name: &str) -> Self {
        Probe {
            name: name.into(),
            ..Probe::default()
        }
    }
    fn saw(&self, what: &str, exec: &ToolExecution) {
        self.seen
            .lock()
            .unwrap()
            .push(format!("{what}:{}", exec.execution_id));
    }
    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

#[async_trait]
impl Plugin for Probe {
    fn name(&self) -> &str {
        &self.name
    }

    async fn rewrite_input(&self, _ctx: &SeamContext, _call: &ProposedCall) -> CallReview {
        match &self.rewrite {
            Some(arguments) => InputRewrite::Rewrite {
                arguments: arguments.clone(),
                by: self.name.clone(),
                conflicts: vec![],
                history: HistoryInput::Original,
                refusal: None,
            },
            None => InputRewrite::Keep,
        }
        .into()
    }

    async fn pre_execute(
        &self,
        _ctx: &SeamContext,
        exec: &ToolExecution,
        _review: Option<&PreToolVerdict>,
    ) -> PreToolOutcome {
        self.saw("pre", exec);
        if self.pre_panics {
            panic!("pre listener exploded");
        }
        PreToolOutcome {
            decision: self.pre.clone().unwrap_or(PreToolDecision::Allow),
            contexts: self
                .pre_context
                .iter()
                .map(|text| ContextEntry::new(text.clone(), self.name.clone()))
                .collect(),
        }
    }

    async fn before_dispatch(
        &self,
        _ctx: &SeamContext,
        exec: &ToolExecution,
        meta: Option<RequestMeta>,
    ) -> Option<RequestMeta> {
        let handed = serde_json::to_string(&meta).unwrap();
        (self.dispatched.lock().unwrap()).push(format!("{} {handed}", exec.arguments));
        if self.dispatch_panics {
            panic!("before-dispatch listener exploded");
        }
        self.dispatch_meta.clone().unwrap_or(meta)
    }

    async fn approve(
        &self,
        _ctx: &SeamContext,
        exec: &ToolExecution,
        _ask: &dsh_seams::ApprovalAsk,
        _review: Option<&PreToolVerdict>,
    ) -> ApprovalDecision {
        self.saw("approve", exec);
        self.approve.clone().unwrap_or(ApprovalDecision::Abstain)
    }

    fn guard(&self, _ctx: &SeamContext, exec: &ToolExecution) -> GuardVerdict {
        self.saw("guard", exec);
        self.guard.clone().unwrap_or(GuardVerdict::Abstain)
    }

    async fn execute(
        &self,
        _ctx: &SeamContext,
        exec: &ToolExecution,
        signal: CancellationToken,
        next: Next<'_>,
    ) -> ToolOutcome {
        self.saw("execute", exec);
        if let Some(result) = &self.wrapper_result {
            return result.clone();
        }
        if self.wrapper_signal {
            // Replace the signal with one that is never cancelled.
            return next.run(CancellationToken::new()).await;
        }
        next.run(signal).await
    }

    async fn post_execute(
        &self,
        _ctx: &SeamContext,
        exec: &ToolExecution,
        _outcome: &ToolOutcome,
        _duration: Duration,
    ) -> PostToolDecision {
        self.saw("post", exec);
        (self.post_call_ids.lock().unwrap()).push(exec.call_id.clone());
        PostToolDecision {
            action: self.post.clone().unwrap_or(PostToolAction::Accept),
            contexts: self
                .post_context
                .iter()
                .map(|text| ContextEntry::new(text.clone(), self.name.clone()))
                .collect(),
        }
    }

    fn tool_result(&self, _ctx: &SeamContext, exec: &ToolExecution, _outcome: &ToolOutcome) {
        self.saw("result", exec);
        if self.observer_panics {
            panic!("observer exploded");
        }
    }
}

struct Fixture {
    registry: ToolRegistry,
    echo: Arc<Echo>,
}

fn fixture(plugins: Vec<Arc<Probe>>) -> Fixture {
    fixture_of(plugins.into_iter().map(|p| p as Arc<dyn Plugin>).collect())
}

fn fixture_of(plugins: Vec<Arc<dyn Plugin>>) -> Fixture {
    let echo = Arc::new(Echo::default());
    let mut registry = ToolRegistry::new();
    registry.register_tool(echo.clone());
    for plugin in plugins {
        registry.register_plugin(plugin);
    }
    Fixture { registry, echo }
}

fn ctx() -> SeamContext {
    let mut ctx = SeamContext::detached(std::env::temp_dir());
    ctx.turn = Some(1);
    ctx
}

fn call(arguments: Value) -> ProposedCall {
    ProposedCall {
        call_id: "call_1".into(),
        tool: "echo".into(),
        arguments,
        parent_execution_id: None,
        origin: None,
    }
}

async fn run(
    fixture: &Fixture,
    ctx: &SeamContext,
    arguments: Value,
) -> dsh_seams::ToolExecutionResult {
    let sealed = fixture.registry.seal(ctx, call(arguments)).await;
    fixture.registry.execute(ctx, sealed).await
}

#[tokio::test]
async fn arguments_are_validated_before_any_policy() {
    let probe = Arc::new(Probe::named("p"));
    let fx = fixture(vec![probe.clone()]);
    let result = run(&fx, &ctx(), json!({"txt": "x"})).await;
    assert!(result.outcome.is_error);
    assert_eq!(result.outcome.disposition, Disposition::InvalidArguments);
    assert!(
        result
            .outcome
            .content
            .contains("missing required field `text`"),
        "{}",
        result.outcome.content
    );
    assert!(
        probe.seen().iter().all(|s| s.starts_with("result")),
        "{:?}",
        probe.seen()
    );
    assert_eq!(fx.echo.dispatched.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn unknown_tool_becomes_an_error_result() {
    let fx = fixture(vec![]);
    let ctx = ctx();
    let mut proposed = call(json!({}));
    proposed.tool = "nope".into();
    let sealed = fx.registry.seal(&ctx, proposed).await;
    let result = fx.registry.execute(&ctx, sealed).await;
    assert!(result.outcome.is_error);
    assert_eq!(result.outcome.disposition, Disposition::UnknownTool);
}

#[tokio::test]
async fn every_phase_sees_the_same_frozen_identity() {
    let probe = Arc::new(Probe::named("p"));
    let fx = fixture(vec![probe.clone()]);
    let result = run(&fx, &ctx(), json!({"text": "hi"})).await;
    let id = result.execution.unwrap().execution_id;
    let seen = probe.seen();
    assert_eq!(seen.len(), 5, "{seen:?}");
    for phase in ["pre", "guard", "execute", "post", "result"] {
        assert!(
            seen.contains(&format!("{phase}:{id}")),
            "{phase} missing in {seen:?}"
        );
    }
}

#[tokio::test]
async fn nested_calls_carry_the_parent_execution_id() {
    let fx = fixture(vec![]);
    let mut proposed = call(json!({"text": "x"}));
    proposed.parent_execution_id = Some("exec_parent".into());
    let sealed = fx.registry.seal(&ctx(), proposed).await;
    assert_eq!(
        sealed.execution.parent_execution_id.as_deref(),
        Some("exec_parent")
    );
}

fn meta(value: Value) -> Option<RequestMeta> {
    Some(RequestMeta(value.as_object().unwrap().clone()))
}

#[tokio::test]
async fn the_before_dispatch_chain_sets_the_request_meta_the_tool_gets() {
    let with_meta = |name: &str, answer: Option<Option<RequestMeta>>, panics: bool| {
        let mut probe = Probe::named(name);
        probe.dispatch_meta = answer;
        probe.dispatch_panics = panics;
        Arc::new(probe)
    };
    let sent = |probes: Vec<Arc<Probe>>| async move {
        let fx = fixture(probes.clone());
        let content = run(&fx, &ctx(), json!({"text": "", "meta": true}))
            .await
            .outcome
            .content;
        let handed: Vec<String> = (probes.iter())
            .flat_map(|p| p.dispatched.lock().unwrap().clone())
            .collect();
        (content, handed)
    };
    let args = r#"{"text":"","meta":true}"#;
    let (content, handed) = sent(vec![with_meta("none", None, false)]).await;
    assert_eq!(content, "null");
    assert_eq!(handed, [format!("{args} null")]);
    // Each listener is handed what the one before left; one that keeps it
    // passes it on, a panicking one changes nothing, the last answer is
    // sent.
    let chain = vec![
        with_meta("a", Some(meta(json!({"a": 1}))), false),
        with_meta("keeps", None, false),
        with_meta("panics", Some(meta(json!({"x": 0}))), true),
        with_meta("c", Some(meta(json!({"c": 2, "b": 1}))), false),
    ];
    let (content, handed) = sent(chain).await;
    assert_eq!(content, r#"{"c":2,"b":1}"#);
    let a = format!(r#"{args} {{"a":1}}"#);
    assert_eq!(handed, [format!("{args} null"), a.clone(), a.clone(), a]);
    // A listener may drop it again.
    let dropped = vec![
        with_meta("a", Some(meta(json!({"a": 1}))), false),
        with_meta("drops", Some(None), false),
    ];
    assert_eq!(sent(dropped).await.0, "null");
}

/// Only a call that is going to run reaches before-dispatch: not one a
/// pre-execute listener, the approval or a guard stops; and it sees the
/// arguments an approval replaced.
#[tokio::test]
async fn before_dispatch_fires_only_for_calls_that_run() {
    let deny = || "no".to_owned();
    let mut pre = Probe::named("pre");
    pre.pre = Some(PreToolDecision::Deny { reason: deny() });
    let mut refused = Probe::named("refused");
    refused.pre = Some(PreToolDecision::ask(None));
    refused.approve = Some(ApprovalDecision::Deny { message: deny() });
    let mut guard = Probe::named("guard");
    guard.guard = Some(GuardVerdict::Deny { reason: deny() });
    for probe in [pre, refused, guard].map(Arc::new) {
        let fx = fixture(vec![probe.clone()]);
        let result = run(&fx, &ctx(), json!({"text": "x"})).await;
        assert!(result.outcome.is_error, "{}: {result:?}", probe.name);
        assert_eq!(fx.echo.dispatched.load(Ordering::SeqCst), 0);
        assert!(
            probe.dispatched.lock().unwrap().is_empty(),
            "{}",
            probe.name
        );
        assert!(probe.seen().iter().any(|s| s.starts_with("pre:")));
    }
    // An ask the approval grants runs, with the granted arguments.
    let granter = Arc::new(Granter {
        arguments: json!({"text": "granted"}),
        saw: Mutex::new(None),
        updates: Mutex::new(vec![]),
    });
    let probe = Arc::new(Probe::named("p"));
    let fx = fixture_of(vec![granter, probe.clone()]);
    let result = run(&fx, &ctx(), json!({"text": "asked"})).await;
    assert_eq!(result.outcome.content, "granted");
    assert_eq!(
        *probe.dispatched.lock().unwrap(),
        [r#"{"text":"granted"} null"#]
    );
}

#[tokio::test]
async fn deny_skips_execute_and_dispatch_but_reaches_post_and_result() {
    let mut probe = Probe::named("p");
    probe.pre = Some(PreToolDecision::Deny {
        reason: "no way".into(),
    });
    let probe = Arc::new(probe);
    let fx = fixture(vec![probe.clone()]);
    let result = run(&fx, &ctx(), json!({"text": "hi"})).await;
    assert_eq!(result.outcome.content, "no way");
    assert!(result.outcome.is_error);
    assert_eq!(
        result.outcome.disposition,
        Disposition::Denied(DenialKind::Policy)
    );
    assert_eq!(fx.echo.dispatched.load(Ordering::SeqCst), 0);
    let phases: Vec<String> = probe
        .seen()
        .iter()
        .map(|s| s.split(':').next().unwrap().to_owned())
        .collect();
    assert_eq!(phases, vec!["pre", "post", "result"]);
}

#[tokio::test]
async fn guard_cannot_resurrect_denied_call() {
    // The first listener denies; a later one allows; the guard abstains:
    // the call stays denied and the guard is never consulted.
    let mut denier = Probe::named("denier");
    denier.pre = Some(PreToolDecision::Deny {
        reason: "denied".into(),
    });
    let allower = Probe::named("allower");
    let denier = Arc::new(denier);
    let allower = Arc::new(allower);
    let fx = fixture(vec![denier.clone(), allower.clone()]);
    let result = run(&fx, &ctx(), json!({"text": "hi"})).await;
    assert_eq!(
        result.outcome.disposition,
        Disposition::Denied(DenialKind::Policy)
    );
    assert!(!allower.seen().iter().any(|s| s.starts_with("pre")));
    assert!(!denier.seen().iter().any(|s| s.starts_with("guard")));
}

#[tokio::test]
async fn guard_runs_after_the_whole_waterfall_and_can_only_deny() {
    let mut guard = Probe::named("guard");
    guard.guard = Some(GuardVerdict::Deny {
        reason: "invariant".into(),
    });
    let guard = Arc::new(guard);
    let later = Arc::new(Probe::named("later"));
    let fx = fixture(vec![guard.clone(), later.clone()]);
    let result = run(&fx, &ctx(), json!({"text": "hi"})).await;
    assert_eq!(
        result.outcome.disposition,
        Disposition::Denied(DenialKind::Guard)
    );
    assert_eq!(result.outcome.content, "invariant");
    // The later plugin's pre-execute ran before the first plugin's guard.
    assert!(later.seen().iter().any(|s| s.starts_with("pre")));
    assert_eq!(fx.echo.dispatched.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn ask_without_an_approval_service_becomes_a_denial() {
    let mut probe = Probe::named("p");
    probe.pre = Some(PreToolDecision::ask(Some("ASK-REASON".into())));
    let fx = fixture(vec![Arc::new(probe)]);
    let result = run(&fx, &ctx(), json!({"text": "hi"})).await;
    assert_eq!(result.outcome.content, "ASK-REASON");
    assert_eq!(
        result.outcome.disposition,
        Disposition::Denied(DenialKind::NoApprovalService)
    );
}

#[tokio::test]
async fn ask_without_an_agent_becomes_a_distinct_denial() {
    let mut probe = Probe::named("p");
    probe.pre = Some(PreToolDecision::ask(None));
    let fx = fixture(vec![Arc::new(probe)]);
    let mut ctx = ctx();
    ctx.turn = None;
    let result = run(&fx, &ctx, json!({"text": "hi"})).await;
    assert_eq!(
        result.outcome.disposition,
        Disposition::Denied(DenialKind::NoAgent)
    );
}

struct Answer(ApprovalResponse);

#[async_trait]
impl ApprovalService for Answer {
    async fn request(&self, _exec: &ToolExecution, _reason: Option<&str>) -> ApprovalResponse {
        self.0.clone()
    }
}

#[tokio::test]
async fn only_an_explicit_allowed_once_continues_an_ask() {
    for (answer, expected) in [
        (ApprovalResponse::AllowedOnce, Disposition::Executed),
        (
            ApprovalResponse::Rejected,
            Disposition::Denied(DenialKind::ApprovalRejected),
        ),
        (
            ApprovalResponse::RejectedWithReason {
                reason: "not now".into(),
            },
            Disposition::Denied(DenialKind::ApprovalRejected),
        ),
        (
            ApprovalResponse::Cancelled,
            Disposition::Denied(DenialKind::ApprovalCancelled),
        ),
        (
            ApprovalResponse::Unavailable,
            Disposition::Denied(DenialKind::ApprovalUnavailable),
        ),
    ] {
        let mut probe = Probe::named("p");
        probe.pre = Some(PreToolDecision::ask(Some("why".into())));
        let mut fx = fixture(vec![Arc::new(probe)]);
        fx.registry.set_approval(Arc::new(Answer(answer.clone())));
        let result = run(&fx, &ctx(), json!({"text": "hi"})).await;
        assert_eq!(result.outcome.disposition, expected, "{answer:?}");
        if let ApprovalResponse::RejectedWithReason { reason } = &answer {
            // The person's reason is what the model reads.
            assert_eq!(
                result.outcome.content,
                format!("The user rejected this call and said: {reason}")
            );
        }
    }
}

#[tokio::test]
async fn an_approval_listener_answers_before_the_user_is_asked() {
    let mut asker = Probe::named("asker");
    asker.pre = Some(PreToolDecision::ask(None));
    let mut approver = Probe::named("approver");
    approver.approve = Some(ApprovalDecision::Deny {
        message: "PERMREQ-DENY".into(),
    });
    let mut fx = fixture(vec![Arc::new(asker), Arc::new(approver)]);
    fx.registry
        .set_approval(Arc::new(Answer(ApprovalResponse::AllowedOnce)));
    let result = run(&fx, &ctx(), json!({"text": "hi"})).await;
    assert_eq!(result.outcome.content, "PERMREQ-DENY");
    assert_eq!(
        result.outcome.disposition,
        Disposition::Denied(DenialKind::ApprovalRejected)
    );
}

#[tokio::test]
async fn a_wrapper_authored_result_short_circuits_dispatch_and_is_renormalized() {
    let mut wrapper = Probe::named("w");
    wrapper.wrapper_result = Some(ToolOutcome {
        is_error: false,
        content: "claims something else".into(),
        value: Some(json!({"text": "cached"})),
        disposition: Disposition::Executed,
    });
    let fx = fixture(vec![Arc::new(wrapper)]);
    let result = run(&fx, &ctx(), json!({"text": "hi"})).await;
    assert_eq!(fx.echo.dispatched.load(Ordering::SeqCst), 0);
    assert_eq!(result.outcome.content, "cached");
}

#[tokio::test]
async fn a_wrapper_can_replace_the_signal_but_not_remove_cancellation() {
    let mut wrapper = Probe::named("w");
    wrapper.wrapper_signal = true;
    let fx = fixture(vec![Arc::new(wrapper)]);
    let ctx = ctx();
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    });
    let result = tokio::time::timeout(
        Duration::from_secs(10),
        run(&fx, &ctx, json!({"text": "hi", "wait_for_cancel": true})),
    )
    .await
    .expect("the tool saw the original cancellation");
    assert_eq!(result.outcome.content, "cancelled");
}

#[tokio::test]
async fn post_execute_block_replaces_the_outcome_with_feedback() {
    let mut probe = Probe::named("p");
    probe.post = Some(PostToolAction::Block {
        feedback: "bad output".into(),
    });
    let fx = fixture(vec![Arc::new(probe)]);
    let result = run(&fx, &ctx(), json!({"text": "hi"})).await;
    assert!(result.outcome.is_error);
    assert_eq!(result.outcome.content, "bad output");
}

/// A tail call runs next as a call of its own (sealed, post-execute again)
/// under the model's call id, its result stands for the call's, and a chain
/// that never ends stops after `MAX_TAIL_CALLS`.
#[tokio::test]
async fn post_execute_tail_call_runs_next_and_its_result_stands() {
    let mut probe = Probe::named("p");
    probe.post = Some(PostToolAction::TailCall {
        tool: "echo".into(),
        arguments: json!({"text": "tail"}),
    });
    let probe = Arc::new(probe);
    let fx = fixture(vec![probe.clone()]);
    let result = run(&fx, &ctx(), json!({"text": "first"})).await;
    assert_eq!(result.outcome.content, "tail");
    let execution = result.execution.unwrap();
    assert_eq!(execution.call_id, "call_1");
    assert_eq!(*execution.arguments, json!({"text": "first"}));
    let posts = probe
        .seen()
        .iter()
        .filter(|s| s.starts_with("post:"))
        .count();
    assert_eq!(posts, 1 + dsh_tools::MAX_TAIL_CALLS);
    let call_ids = probe.post_call_ids.lock().unwrap().clone();
    assert_eq!(call_ids, vec!["call_1"; 1 + dsh_tools::MAX_TAIL_CALLS]);
}

#[tokio::test]
async fn post_execute_content_replacement_keeps_the_value() {
    let mut probe = Probe::named("p");
    probe.post = Some(PostToolAction::ReplaceContent {
        content: "[redacted]".into(),
    });
    let fx = fixture(vec![Arc::new(probe)]);
    let result = run(&fx, &ctx(), json!({"text": "secret"})).await;
    assert_eq!(result.outcome.content, "[redacted]");
    assert_eq!(result.outcome.value, Some(json!({"text": "secret"})));
}

#[tokio::test]
async fn post_execute_value_replacement_revalidates_and_rerenders() {
    let mut good = Probe::named("good");
    good.post = Some(PostToolAction::ReplaceValue {
        value: json!({"text": "new"}),
    });
    let fx = fixture(vec![Arc::new(good)]);
    let result = run(&fx, &ctx(), json!({"text": "old"})).await;
    assert_eq!(result.outcome.content, "new");
    assert!(!result.outcome.is_error);

    let mut bad = Probe::named("bad");
    bad.post = Some(PostToolAction::ReplaceValue {
        value: json!({"nope": 1}),
    });
    let fx = fixture(vec![Arc::new(bad)]);
    let result = run(&fx, &ctx(), json!({"text": "old"})).await;
    assert!(result.outcome.is_error);
    assert_eq!(result.outcome.disposition, Disposition::Failed);
}

#[tokio::test]
async fn finalize_content_runs_once_after_pre_execute_failure() {
    let mut probe = Probe::named("p");
    probe.pre_panics = true;
    let fx = fixture(vec![Arc::new(probe)]);
    let result = run(&fx, &ctx(), json!({"text": "hi"})).await;
    assert!(result.outcome.is_error);
    assert_eq!(result.outcome.disposition, Disposition::Failed);
    assert!(result.outcome.content.contains("pre listener exploded"));
    assert_eq!(fx.echo.finalized.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn finalize_content_runs_once_on_success_and_on_denial() {
    let fx = fixture(vec![]);
    run(&fx, &ctx(), json!({"text": "hi"})).await;
    assert_eq!(fx.echo.finalized.load(Ordering::SeqCst), 1);
    let mut probe = Probe::named("p");
    probe.pre = Some(PreToolDecision::Deny {
        reason: "no".into(),
    });
    let fx = fixture(vec![Arc::new(probe)]);
    run(&fx, &ctx(), json!({"text": "hi"})).await;
    assert_eq!(fx.echo.finalized.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_panicking_tool_becomes_an_error_result() {
    let fx = fixture(vec![]);
    let result = run(&fx, &ctx(), json!({"text": "hi", "panic": true})).await;
    assert!(result.outcome.is_error);
    assert_eq!(result.outcome.disposition, Disposition::Failed);
    assert!(result.outcome.content.contains("echo exploded"));
}

#[tokio::test]
async fn a_failing_tool_is_an_executed_error() {
    let fx = fixture(vec![]);
    let result = run(&fx, &ctx(), json!({"text": "hi", "fail": true})).await;
    assert!(result.outcome.is_error);
    assert_eq!(result.outcome.disposition, Disposition::Executed);
    assert_eq!(result.outcome.content, "echo failed on purpose");
}

#[tokio::test]
async fn a_failing_result_observer_is_contained() {
    let mut probe = Probe::named("p");
    probe.observer_panics = true;
    let fx = fixture(vec![Arc::new(probe)]);
    let result = run(&fx, &ctx(), json!({"text": "hi"})).await;
    assert!(!result.outcome.is_error);
    assert_eq!(result.outcome.content, "hi");
}

#[tokio::test]
async fn adding_context_is_not_a_veto() {
    let mut probe = Probe::named("ctx");
    probe.pre_context = Some("PRE".into());
    probe.post_context = Some("POST".into());
    let fx = fixture(vec![Arc::new(probe)]);
    let result = run(&fx, &ctx(), json!({"text": "hi"})).await;
    assert!(!result.outcome.is_error);
    let contexts: Vec<&str> = result.contexts.iter().map(|c| c.content.as_str()).collect();
    assert_eq!(contexts, vec!["PRE", "POST"]);
}

#[tokio::test]
async fn deferred_contexts_precede_decision_contexts_unless_blocked() {
    let mut probe = Probe::named("p");
    probe.post_context = Some("DECISION".into());
    let fx = fixture(vec![Arc::new(probe)]);
    let result = run(&fx, &ctx(), json!({"text": "hi", "defer": "NESTED"})).await;
    let contexts: Vec<&str> = result.contexts.iter().map(|c| c.content.as_str()).collect();
    assert_eq!(contexts, vec!["NESTED", "DECISION"]);

    let mut blocker = Probe::named("b");
    blocker.post = Some(PostToolAction::Block {
        feedback: "no".into(),
    });
    blocker.post_context = Some("BLOCK-CONTEXT".into());
    let fx = fixture(vec![Arc::new(blocker)]);
    let result = run(&fx, &ctx(), json!({"text": "hi", "defer": "NESTED"})).await;
    let contexts: Vec<&str> = result.contexts.iter().map(|c| c.content.as_str()).collect();
    assert_eq!(contexts, vec!["BLOCK-CONTEXT"]);
}

#[tokio::test]
async fn deferred_contexts_survive_a_failing_tool() {
    let fx = fixture(vec![]);
    let result = run(
        &fx,
        &ctx(),
        json!({"text": "hi", "defer": "NESTED", "fail": true}),
    )
    .await;
    assert!(result.outcome.is_error);
    assert_eq!(result.contexts.len(), 1);
}

#[tokio::test]
async fn an_input_rewrite_is_revalidated_and_recorded() {
    let mut rewriter = Probe::named("rewriter");
    rewriter.rewrite = Some(json!({"text": "REWRITTEN"}));
    let mut second = Probe::named("second");
    second.rewrite = Some(json!({"text": "LOSER"}));
    let fx = fixture(vec![Arc::new(rewriter), Arc::new(second)]);
    let ctx = ctx();
    let sealed = fx
        .registry
        .seal(&ctx, call(json!({"text": "original"})))
        .await;
    assert_eq!(*sealed.execution.arguments, json!({"text": "REWRITTEN"}));
    assert_eq!(
        sealed.execution.original_arguments.as_deref(),
        Some(&json!({"text": "original"}))
    );
    assert_eq!(sealed.execution.rewritten_by.as_deref(), Some("rewriter"));
    assert_eq!(sealed.rewrite_conflicts, vec!["second".to_owned()]);
    let result = fx.registry.execute(&ctx, sealed).await;
    assert_eq!(result.outcome.content, "REWRITTEN");

    let mut bad = Probe::named("bad");
    bad.rewrite = Some(json!({"wrong": true}));
    let fx = fixture(vec![Arc::new(bad)]);
    let result = run(&fx, &ctx, json!({"text": "x"})).await;
    assert_eq!(result.outcome.disposition, Disposition::InvalidArguments);
    assert!(result.outcome.content.contains("after `bad` rewrote them"));
}

/// Records notifications, then asks.
#[derive(Default)]
struct NotifiedAsker {
    notified: Mutex<Vec<String>>,
}

#[async_trait]
impl Plugin for NotifiedAsker {
    fn name(&self) -> &str {
        "notified"
    }
    async fn pre_execute(
        &self,
        _ctx: &SeamContext,
        _exec: &ToolExecution,
        _review: Option<&PreToolVerdict>,
    ) -> PreToolOutcome {
        PreToolOutcome {
            decision: PreToolDecision::ask(None),
            contexts: vec![],
        }
    }
    async fn notification(&self, _ctx: &SeamContext, notification: &dsh_seams::Notification) {
        self.notified
            .lock()
            .unwrap()
            .push(notification.message.clone());
    }
}

#[tokio::test]
async fn the_notification_seam_fires_before_the_user_is_asked() {
    let plugin = Arc::new(NotifiedAsker::default());
    let echo = Arc::new(Echo::default());
    let mut registry = ToolRegistry::new();
    registry.register_tool(echo);
    registry.register_plugin(plugin.clone());
    // Without an approval service nobody is asked, so nobody is notified.
    let ctx = ctx();
    let sealed = registry.seal(&ctx, call(json!({"text": "hi"}))).await;
    registry.execute(&ctx, sealed).await;
    assert!(plugin.notified.lock().unwrap().is_empty());
    registry.set_approval(Arc::new(Answer(ApprovalResponse::AllowedOnce)));
    let sealed = registry.seal(&ctx, call(json!({"text": "hi"}))).await;
    let result = registry.execute(&ctx, sealed).await;
    assert_eq!(result.outcome.content, "hi");
    assert_eq!(
        *plugin.notified.lock().unwrap(),
        vec!["dsh needs your permission to use echo".to_owned()]
    );
}

/// A plugin that judges a call in its review and relies on the default
/// `pre_execute`, counting reviews and what `approve` was handed.
#[derive(Default)]
struct Reviewer {
    decision: Option<PreToolDecision>,
    rewrite: Option<Value>,
    /// Refuse the rewrite with this text (the rewrite's `refusal`).
    refuse: Option<String>,
    only_for: Option<String>,
    reviews: AtomicUsize,
    approve_saw: Mutex<Vec<Option<PreToolDecision>>>,
}

#[async_trait]
impl Plugin for Reviewer {
    fn name(&self) -> &str {
        "reviewer"
    }
    async fn rewrite_input(&self, _ctx: &SeamContext, call: &ProposedCall) -> CallReview {
        self.reviews.fetch_add(1, Ordering::SeqCst);
        if let Some(only) = &self.only_for
            && call.arguments["text"] != json!(only)
        {
            return CallReview::keep();
        }
        let rewrite = match (&self.rewrite, &self.refuse) {
            (Some(arguments), None) => InputRewrite::Rewrite {
                arguments: arguments.clone(),
                by: "reviewer".into(),
                conflicts: vec![],
                history: HistoryInput::Original,
                refusal: None,
            },
            (Some(arguments), Some(reason)) => InputRewrite::Rewrite {
                arguments: arguments.clone(),
                by: "reviewer".into(),
                conflicts: vec!["inner".into()],
                history: HistoryInput::Rewritten,
                refusal: Some(reason.clone()),
            },
            (None, _) => InputRewrite::Keep,
        };
        CallReview {
            rewrite,
            verdict: self.decision.clone().map(|decision| {
                PreToolVerdict::of(PreToolOutcome {
                    decision,
                    contexts: vec![ContextEntry::new("REVIEW-CTX", "reviewer")],
                })
            }),
        }
    }
    async fn approve(
        &self,
        _ctx: &SeamContext,
        _exec: &ToolExecution,
        _ask: &dsh_seams::ApprovalAsk,
        review: Option<&PreToolVerdict>,
    ) -> ApprovalDecision {
        self.approve_saw
            .lock()
            .unwrap()
            .push(review.map(|v| v.outcome.decision.clone()));
        ApprovalDecision::AllowOnce
    }
}

#[tokio::test]
async fn a_review_verdict_reaches_its_own_plugin_once_and_nothing_else() {
    let reviewer = Arc::new(Reviewer {
        decision: Some(PreToolDecision::ask(Some("look".into()))),
        ..Reviewer::default()
    });
    let bystander = Arc::new(Probe::named("bystander"));
    let fx = fixture_of(vec![reviewer.clone(), bystander.clone()]);
    let result = run(&fx, &ctx(), json!({"text": "hi"})).await;
    assert!(!result.outcome.is_error, "{:?}", result.outcome);
    assert_eq!(reviewer.reviews.load(Ordering::SeqCst), 1);
    assert_eq!(
        reviewer.approve_saw.lock().unwrap().clone(),
        vec![Some(PreToolDecision::ask(Some("look".into())))]
    );
    assert_eq!(result.contexts.len(), 1);
    assert_eq!(result.contexts[0].content, "REVIEW-CTX");
    assert_eq!(fx.echo.dispatched.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_rewrite_rejected_at_sealing_drops_the_verdict_with_the_call() {
    // The reviewer judges (ask + context) and rewrites only `bad` calls; its
    // rewrite fails re-validation, so that call is rejected at sealing.
    let reviewer = Arc::new(Reviewer {
        decision: Some(PreToolDecision::ask(Some("STALE".into()))),
        rewrite: Some(json!({"text": 42})),
        only_for: Some("bad".into()),
        ..Reviewer::default()
    });
    let fx = fixture_of(vec![reviewer.clone()]);
    let result = run(&fx, &ctx(), json!({"text": "bad"})).await;
    assert_eq!(result.outcome.disposition, Disposition::InvalidArguments);
    assert!(result.contexts.is_empty());
    // The next call (same call id) is not judged: nothing of the rejected
    // call's verdict may apply to it.
    let result = run(&fx, &ctx(), json!({"text": "ok"})).await;
    assert!(!result.outcome.is_error, "{:?}", result.outcome);
    assert!(result.contexts.is_empty(), "{:?}", result.contexts);
    assert_eq!(reviewer.reviews.load(Ordering::SeqCst), 2);
    assert_eq!(fx.echo.dispatched.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_denied_call_is_denied_whatever_its_rewrite() {
    // The review denies and rewrites to input that fails the check (or that
    // its dialect refuses): the deny stands, with the rewrite on the call.
    for refuse in [None, Some("Invalid input: NOT THIS".to_owned())] {
        let reviewer = Arc::new(Reviewer {
            decision: Some(PreToolDecision::Deny {
                reason: "NO".into(),
            }),
            rewrite: Some(json!(null)),
            refuse,
            ..Reviewer::default()
        });
        let fx = fixture_of(vec![reviewer]);
        let result = run(&fx, &ctx(), json!({"text": "hi"})).await;
        assert_eq!(result.outcome.content, "NO");
        assert_eq!(
            result.outcome.disposition,
            Disposition::Denied(DenialKind::Policy)
        );
        let execution = result.execution.expect("an identity");
        assert_eq!(*execution.arguments, json!(null));
        assert_eq!(execution.rewritten_by.as_deref(), Some("reviewer"));
        assert_eq!(fx.echo.dispatched.load(Ordering::SeqCst), 0);
    }
}

#[tokio::test]
async fn a_refused_rewrite_fails_the_call_with_the_dialects_text() {
    // Valid for the schema, yet refused: the dialect's text stands, the call
    // never runs, and the rewrite stays on its identity; a later rewrite of
    // the same call loses to it.
    let reviewer = Arc::new(Reviewer {
        decision: Some(PreToolDecision::Allow),
        rewrite: Some(json!({"text": "other"})),
        refuse: Some("Invalid input: NOT THIS".into()),
        ..Reviewer::default()
    });
    let later = Arc::new(Reviewer {
        rewrite: Some(json!({"text": "later"})),
        ..Reviewer::default()
    });
    let fx = fixture_of(vec![reviewer.clone(), later]);
    let sealed = fx.registry.seal(&ctx(), call(json!({"text": "hi"}))).await;
    assert_eq!(sealed.rewrite_conflicts, vec!["inner", "reviewer"]);
    assert_eq!(sealed.history, HistoryInput::Rewritten);
    let result = fx.registry.execute(&ctx(), sealed).await;
    assert_eq!(result.outcome.content, "Invalid input: NOT THIS");
    assert_eq!(result.outcome.disposition, Disposition::InvalidArguments);
    let execution = result.execution.expect("an identity");
    assert_eq!(*execution.arguments, json!({"text": "other"}));
    assert_eq!(execution.rewritten_by.as_deref(), Some("reviewer"));
    assert!(result.contexts.is_empty());
    assert_eq!(fx.echo.dispatched.load(Ordering::SeqCst), 0);
}

// ---------------------------------------------------------------- decide

#[tokio::test]
async fn decide_applies_guards_without_dispatching_or_post_execute() {
    let mut guard = Probe::named("guard");
    guard.guard = Some(GuardVerdict::Deny {
        reason: "invariant".into(),
    });
    let guard = Arc::new(guard);
    let fx = fixture(vec![guard.clone()]);
    let decided = fx
        .registry
        .decide(&ctx(), call(json!({"text": "hi"})))
        .await;
    let CallVerdict::Denied { decision, outcome } = decided.verdict else {
        panic!("not denied: {:?}", decided.verdict);
    };
    // The pre-execute waterfall allowed it; the guard stopped it.
    assert_eq!(decision, PreToolDecision::Allow);
    assert_eq!(outcome.disposition, Disposition::Denied(DenialKind::Guard));
    assert_eq!(fx.echo.dispatched.load(Ordering::SeqCst), 0);
    assert!(
        !guard
            .seen()
            .iter()
            .any(|s| s.starts_with("post") || s.starts_with("result")),
        "{:?}",
        guard.seen()
    );
}

#[tokio::test]
async fn decide_rejects_a_rewrite_that_breaks_the_schema() {
    let mut rewriter = Probe::named("rewriter");
    rewriter.rewrite = Some(json!({"text": 42}));
    let fx = fixture(vec![Arc::new(rewriter)]);
    let decided = fx
        .registry
        .decide(&ctx(), call(json!({"text": "hi"})))
        .await;
    let CallVerdict::Rejected(outcome) = decided.verdict else {
        panic!("not rejected: {:?}", decided.verdict);
    };
    assert_eq!(outcome.disposition, Disposition::InvalidArguments);
    assert!(outcome.content.contains("after `rewriter` rewrote them"));
    assert_eq!(fx.echo.dispatched.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn decide_agrees_with_execute_on_an_unanswered_ask() {
    let mut probe = Probe::named("p");
    probe.pre = Some(PreToolDecision::ask(Some("ASK-REASON".into())));
    let fx = fixture(vec![Arc::new(probe)]);
    let decided = fx
        .registry
        .decide(&ctx(), call(json!({"text": "hi"})))
        .await;
    let executed = run(&fx, &ctx(), json!({"text": "hi"})).await;
    let CallVerdict::Denied { outcome, .. } = decided.verdict else {
        panic!("not denied: {:?}", decided.verdict);
    };
    assert_eq!(outcome.content, executed.outcome.content);
    assert_eq!(outcome.disposition, executed.outcome.disposition);
}

#[tokio::test]
async fn decide_lets_an_allowed_call_through_with_its_contexts() {
    let mut probe = Probe::named("p");
    probe.pre_context = Some("remember this".into());
    let fx = fixture(vec![Arc::new(probe)]);
    let decided = fx
        .registry
        .decide(&ctx(), call(json!({"text": "hi"})))
        .await;
    assert!(
        matches!(
            decided.verdict,
            CallVerdict::Runs {
                decision: PreToolDecision::Allow
            }
        ),
        "{:?}",
        decided.verdict
    );
    assert_eq!(decided.contexts.len(), 1);
    assert_eq!(fx.echo.dispatched.load(Ordering::SeqCst), 0);
}

/// Screens out calls whose text is `secret`; counts every review it sees.
#[derive(Default)]
struct Screener {
    reviews: AtomicUsize,
}

#[async_trait]
impl Plugin for Screener {
    fn name(&self) -> &str {
        "screener"
    }
    async fn screen(&self, _ctx: &SeamContext, call: &ProposedCall) -> dsh_seams::Screening {
        if call.arguments["text"] == "secret" {
            dsh_seams::Screening::Deny {
                reason: "SCREENED".into(),
            }
        } else {
            dsh_seams::Screening::Pass
        }
    }
    async fn rewrite_input(&self, _ctx: &SeamContext, _call: &ProposedCall) -> CallReview {
        self.reviews.fetch_add(1, Ordering::SeqCst);
        CallReview::keep()
    }
    fn explain(
        &self,
        _exec: &ToolExecution,
        _review: Option<&PreToolVerdict>,
    ) -> Option<dsh_protocol::DecidedBy> {
        Some(dsh_protocol::DecidedBy::new(
            dsh_protocol::DeciderKind::Rule,
            "screener-rules",
        ))
    }
}

#[tokio::test]
async fn a_screened_call_is_never_reviewed_and_says_who_screened_it() {
    let screener = Arc::new(Screener::default());
    let probe = Arc::new(Probe::named("p"));
    let plugins: Vec<Arc<dyn Plugin>> = vec![probe.clone(), screener.clone()];
    let fx = fixture_of(plugins);
    let result = run(&fx, &ctx(), json!({"text": "secret"})).await;
    assert_eq!(result.outcome.content, "SCREENED");
    assert_eq!(
        result.outcome.disposition,
        Disposition::Denied(DenialKind::Policy)
    );
    // Neither plugin reviewed it, though the probe is registered first.
    assert_eq!(screener.reviews.load(Ordering::SeqCst), 0);
    assert!(
        probe.seen().iter().all(|s| s.starts_with("result")),
        "{:?}",
        probe.seen()
    );
    assert_eq!(fx.echo.dispatched.load(Ordering::SeqCst), 0);
    let by = result.decided_by.expect("decided_by");
    assert_eq!(by.kind, dsh_protocol::DeciderKind::Rule);
    assert_eq!(by.source, "screener-rules");
    assert_eq!(by.reason.as_deref(), Some("SCREENED"));
    // Another call passes screening and is reviewed.
    let result = run(&fx, &ctx(), json!({"text": "fine"})).await;
    assert!(!result.outcome.is_error);
    assert_eq!(screener.reviews.load(Ordering::SeqCst), 1);
}

/// Asks with a suggestion, then grants with replacement arguments.
struct Granter {
    arguments: Value,
    saw: Mutex<Option<dsh_seams::ApprovalAsk>>,
    updates: Mutex<Vec<dsh_seams::PermissionUpdate>>,
}

#[async_trait]
impl Plugin for Granter {
    fn name(&self) -> &str {
        "granter"
    }
    async fn pre_execute(
        &self,
        _ctx: &SeamContext,
        _exec: &ToolExecution,
        _review: Option<&PreToolVerdict>,
    ) -> PreToolOutcome {
        PreToolOutcome {
            decision: PreToolDecision::Ask {
                reason: Some("needs a yes".into()),
                suggestions: Some(vec![dsh_seams::PermissionUpdate::SetMode {
                    mode: "acceptEdits".into(),
                    destination: dsh_seams::UpdateDestination::Session,
                }]),
            },
            contexts: vec![],
        }
    }
    async fn approve(
        &self,
        _ctx: &SeamContext,
        _exec: &ToolExecution,
        ask: &dsh_seams::ApprovalAsk,
        _review: Option<&PreToolVerdict>,
    ) -> ApprovalDecision {
        *self.saw.lock().unwrap() = Some(ask.clone());
        ApprovalDecision::Allow(dsh_seams::ApprovalGrant {
            updated_input: Some(self.arguments.clone()),
            updates: ask.suggestions.clone().unwrap_or_default(),
            by: "granter:hook".into(),
        })
    }
    async fn permissions_updated(
        &self,
        _ctx: &SeamContext,
        updates: &[dsh_seams::PermissionUpdate],
    ) {
        self.updates.lock().unwrap().extend_from_slice(updates);
    }
}

#[tokio::test]
async fn an_approval_grant_replaces_arguments_revalidated_and_applies_updates() {
    let granter = Arc::new(Granter {
        arguments: json!({"text": "granted"}),
        saw: Mutex::new(None),
        updates: Mutex::new(vec![]),
    });
    let plugins: Vec<Arc<dyn Plugin>> = vec![granter.clone()];
    let fx = fixture_of(plugins);
    let result = run(&fx, &ctx(), json!({"text": "asked"})).await;
    assert_eq!(result.outcome.content, "granted", "{result:?}");
    let exec = result.execution.expect("execution");
    assert_eq!(*exec.arguments, json!({"text": "granted"}));
    assert_eq!(
        exec.original_arguments.as_deref(),
        Some(&json!({"text": "asked"}))
    );
    assert_eq!(exec.rewritten_by.as_deref(), Some("granter:hook"));
    let saw = granter.saw.lock().unwrap().clone().expect("approve ran");
    assert_eq!(saw.reason.as_deref(), Some("needs a yes"));
    assert_eq!(saw.suggestions.as_ref().map(Vec::len), Some(1));
    assert_eq!(granter.updates.lock().unwrap().len(), 1);
    assert_eq!(
        result.decided_by.expect("decided_by").source,
        "granter:hook"
    );

    // Replacement arguments that fail the schema are refused.
    let bad = Arc::new(Granter {
        arguments: json!({"nope": 1}),
        saw: Mutex::new(None),
        updates: Mutex::new(vec![]),
    });
    let plugins: Vec<Arc<dyn Plugin>> = vec![bad];
    let fx = fixture_of(plugins);
    let result = run(&fx, &ctx(), json!({"text": "asked"})).await;
    assert_eq!(result.outcome.disposition, Disposition::InvalidArguments);
    assert_eq!(fx.echo.dispatched.load(Ordering::SeqCst), 0);
}
