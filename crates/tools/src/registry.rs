//! The tool registry and the five-phase pipeline.
//!
//! `seal` (validate → input-rewrite seam → re-validate → freeze identity)
//! happens for every call of a step before any of them runs, so the agent
//! can log the whole batch of `tool/call`s first. `execute` then runs one
//! sealed call through `pre-execute → guards → before-dispatch → execute wrappers →
//! dispatch → post-execute → finalize_content → result`; the agent runs the sealed
//! calls of a step at once where [`ToolRegistry::concurrency`] allows, and
//! phases 1–2 (pre-execute, approval, guards) pass one call at a time. Every failure — an unknown
//! tool, invalid arguments, a tool or listener that errors or panics, an
//! invalid replacement value — becomes an `is_error` outcome; nothing
//! escapes to the turn.

use std::any::Any;
use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use dsh_protocol::{DecidedBy, DeciderKind, ToolSpec};
use dsh_seams::{
    ApprovalResponse, CancellationToken, ContextEntry, CwdChange, DenialKind, Disposition,
    HistoryInput, InputRewrite, Next, Plugin, PostToolAction, PreToolDecision, PreToolVerdict,
    ProposedCall, RequestMeta, Screening, SeamContext, ToolExecution, ToolExecutionResult,
    ToolOutcome,
};
use dsh_seams::{ElicitationAction, ElicitationAnswer, ElicitationRequest};
use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::Value;

use crate::builtin::interaction::Question;
use crate::{Tool, ToolContext, schema};

mod changes;
mod gate;
use gate::Gate;

/// Asks a person to approve a call (interactive mode). Headless sessions
/// have none, and an `ask` then becomes a denial.
#[async_trait]
pub trait ApprovalService: Send + Sync {
    /// Shows the call and the reason; returns what the user answered.
    async fn request(&self, exec: &ToolExecution, reason: Option<&str>) -> ApprovalResponse;

    /// Puts an MCP server's question (an elicitation) to the person. A
    /// surface that cannot show it answers `cancel`, as a headless Claude
    /// Code session does.
    async fn elicit(&self, _request: &ElicitationRequest) -> ElicitationAnswer {
        ElicitationAnswer::bare(ElicitationAction::Cancel)
    }

    /// Puts `ask_user_question`'s questions to the person: question text →
    /// the chosen label(s) (comma-separated for several) or typed answer.
    /// `None`: nobody could answer (a headless session, a cancelled
    /// question).
    async fn ask_questions(&self, _questions: &[Question]) -> Option<BTreeMap<String, String>> {
        None
    }
}

/// The model-facing text of an `ask` that nobody could answer.
pub const NO_APPROVAL_TEXT: &str =
    "This call needs approval, and no one was available to approve it.";

/// The model-facing text of a call the person rejected with a reason.
pub fn rejected_with_reason_text(reason: &str) -> String {
    format!("The user rejected this call and said: {reason}")
}
/// The model-facing context when a permission-denied listener lets the
/// model retry an automatically denied call: Claude Code's text for its
/// PermissionDenied `retry: true` (`perm_mode_auto_retry`).
pub const MAY_RETRY_TEXT: &str =
    "The PermissionDenied hook indicated you may retry this tool call.";

/// A call after sealing: ready to run, or already resolved (unknown tool,
/// invalid arguments) with the outcome that replaces every later phase.
#[derive(Debug, Clone)]
pub struct SealedCall {
    /// The frozen identity (always present: even a rejected call is logged).
    pub execution: ToolExecution,
    /// Rewrites of this call that lost to the winning one.
    pub rewrite_conflicts: Vec<String>,
    /// What the model's later history shows as the input: the winning
    /// rewrite's choice ([`HistoryInput::Original`] without a rewrite).
    pub history: HistoryInput,
    rejected: Option<ToolOutcome>,
    /// Each plugin's verdict from its review, by registration index; handed
    /// back to that plugin's `pre_execute` and `approve`. Owned by the call,
    /// so a call that is rejected or dropped takes them with it.
    verdicts: Vec<Option<PreToolVerdict>>,
    /// Who screened the call out, when screening rejected it.
    screened_by: Option<DecidedBy>,
}

impl SealedCall {
    /// A call resolved at sealing time: `outcome` replaces every later
    /// phase, and its identity is logged as it stands.
    fn rejected(execution: ToolExecution, outcome: ToolOutcome) -> Self {
        SealedCall {
            execution,
            rewrite_conflicts: Vec::new(),
            history: HistoryInput::Original,
            rejected: Some(outcome),
            verdicts: Vec::new(),
            screened_by: None,
        }
    }

    /// The outcome when the call was resolved at sealing time.
    pub fn rejection(&self) -> Option<&ToolOutcome> {
        self.rejected.as_ref()
    }
}

/// What phases 1–5 produced for a call that reached them.
struct Ran {
    outcome: ToolOutcome,
    rewritten: Option<ToolExecution>,
    decided_by: Option<DecidedBy>,
    /// A post-execute listener's tail call, under the call's own id.
    tail: Option<ProposedCall>,
}

/// How many tail calls (`PostToolAction::TailCall`) one model call may
/// chain before the last one's result stands.
pub const MAX_TAIL_CALLS: usize = 8;

/// `plugin`'s account of a decision it made, or the plugin itself as a hook.
fn explain(
    plugin: &dyn Plugin,
    exec: &ToolExecution,
    review: Option<&PreToolVerdict>,
    reason: &str,
) -> DecidedBy {
    let by = std::panic::catch_unwind(AssertUnwindSafe(|| plugin.explain(exec, review)))
        .ok()
        .flatten()
        .unwrap_or_else(|| DecidedBy::new(DeciderKind::Hook, plugin.name()));
    if by.reason.is_some() || reason.is_empty() {
        by
    } else {
        by.because(reason)
    }
}

/// What [`ToolRegistry::decide`] found.
#[derive(Debug, Clone)]
pub struct CallDecision {
    /// The sealed identity (arguments after any rewrite).
    pub execution: ToolExecution,
    /// Rewrites that lost to the winning one.
    pub rewrite_conflicts: Vec<String>,
    /// Contexts the pre-execute listeners added.
    pub contexts: Vec<ContextEntry>,
    /// Whether the call would run.
    pub verdict: CallVerdict,
}

/// Whether a call would reach its tool.
#[derive(Debug, Clone)]
pub enum CallVerdict {
    /// It would run; `decision` is the pre-execute waterfall's (an `ask`
    /// here was approved).
    Runs {
        /// The combined pre-execute decision.
        decision: PreToolDecision,
    },
    /// Pre-execute, approval or a guard stopped it with `outcome`.
    Denied {
        /// The combined pre-execute decision.
        decision: PreToolDecision,
        /// The result the model would see.
        outcome: ToolOutcome,
    },
    /// Sealing resolved it (unknown tool, invalid or invalidly rewritten
    /// arguments) or a listener failed: the outcome the model would see.
    Rejected(ToolOutcome),
}

/// The tools on offer and the plugins on the seams, in registration order.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
    plugins: Vec<Arc<dyn Plugin>>,
    approval: Option<Arc<dyn ApprovalService>>,
    /// Held through a call's phases 1–2, so the calls of a batch that run
    /// at once pass pre-execute and approval one at a time, in the order
    /// they reach it: one question to the person open at a time. Shared by
    /// clones (a subagent's registry).
    gate_turn: Arc<tokio::sync::Mutex<()>>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.tools.keys().collect::<Vec<_>>())
            .field(
                "plugins",
                &self
                    .plugins
                    .iter()
                    .map(|p| p.name().to_owned())
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

fn panic_text(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "unknown panic".to_owned()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        ToolRegistry::default()
    }

    /// Registers a tool (a later tool with the same name replaces an earlier one).
    pub fn register_tool(&mut self, tool: Arc<dyn Tool>) {
        self.tools.insert(tool.spec().name, tool);
    }

    /// Keeps only the tools whose name passes `keep` (a subagent's tool set).
    pub fn retain_tools(&mut self, keep: impl Fn(&str) -> bool) {
        self.tools.retain(|name, _| keep(name));
    }

    /// Registers a plugin; plugins run in registration order.
    pub fn register_plugin(&mut self, plugin: Arc<dyn Plugin>) {
        self.plugins.push(plugin);
    }

    /// Sets the approval service (interactive mode).
    pub fn set_approval(&mut self, approval: Arc<dyn ApprovalService>) {
        self.approval = Some(approval);
    }

    /// The plugins, in order.
    pub fn plugins(&self) -> &[Arc<dyn Plugin>] {
        &self.plugins
    }

    /// The tools on offer, sorted by name.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.values().map(|tool| tool.spec()).collect()
    }

    /// How a sealed call may overlap the other calls of its batch, relative
    /// paths resolving against `cwd`: the tool's answer; a call resolved at
    /// sealing runs no tool and overlaps anything.
    pub fn concurrency(&self, sealed: &SealedCall, cwd: &std::path::Path) -> crate::Concurrency {
        if sealed.rejected.is_some() {
            return crate::Concurrency::Shared;
        }
        match self.tools.get(&sealed.execution.tool) {
            Some(tool) => std::panic::catch_unwind(AssertUnwindSafe(|| {
                tool.concurrency(&sealed.execution, cwd)
            }))
            .unwrap_or(crate::Concurrency::Exclusive),
            None => crate::Concurrency::Shared,
        }
    }

    /// Validates a proposed call, runs the input-rewrite seam, re-validates a
    /// rewrite, and freezes the call's identity.
    pub async fn seal(&self, ctx: &SeamContext, mut call: ProposedCall) -> SealedCall {
        // Derived by the session's sink, so a replay repeats it.
        let execution_id = format!("exec_{}", ctx.sink.new_id().replace('-', ""));
        let mut execution = ToolExecution {
            execution_id,
            call_id: call.call_id.clone(),
            tool: call.tool.clone(),
            arguments: Arc::new(call.arguments.clone()),
            original_arguments: None,
            rewritten_by: None,
            parent_execution_id: call.parent_execution_id.clone(),
            origin: None,
        };
        let Some(tool) = self.tools.get(&call.tool) else {
            let known: Vec<&str> = self.tools.keys().map(String::as_str).collect();
            let outcome = ToolOutcome::error(
                format!(
                    "Unknown tool `{}`. Available tools: {}.",
                    call.tool,
                    known.join(", ")
                ),
                Disposition::UnknownTool,
            );
            return SealedCall::rejected(execution, outcome);
        };
        // Every listener sees where the tool comes from.
        call.origin = tool.origin();
        execution.origin = call.origin.clone();
        let input_schema = tool.spec().input_schema;
        if let Err(problem) = schema::validate(&input_schema, &call.arguments) {
            let outcome = ToolOutcome::error(
                format!("Invalid arguments for `{}`: {problem}", call.tool),
                Disposition::InvalidArguments,
            );
            return SealedCall::rejected(execution, outcome);
        }

        // Screening: a call a plugin settles here is never reviewed, so no
        // review-time hook (PreToolUse) sees it.
        for plugin in &self.plugins {
            let screening = AssertUnwindSafe(plugin.screen(ctx, &call))
                .catch_unwind()
                .await;
            let outcome = match screening {
                Ok(Screening::Pass) => continue,
                Ok(Screening::Deny { reason }) => {
                    let by = explain(plugin.as_ref(), &execution, None, &reason);
                    let outcome =
                        ToolOutcome::error(reason, Disposition::Denied(DenialKind::Policy));
                    return SealedCall {
                        screened_by: Some(by),
                        ..SealedCall::rejected(execution, outcome)
                    };
                }
                Err(payload) => ToolOutcome::error(
                    format!(
                        "screening listener `{}` failed: {}",
                        plugin.name(),
                        panic_text(payload.as_ref())
                    ),
                    Disposition::Failed,
                ),
            };
            return SealedCall::rejected(execution, outcome);
        }

        let mut winner: Option<InputRewrite> = None;
        let mut conflicts = Vec::new();
        let mut verdicts = Vec::with_capacity(self.plugins.len());
        for plugin in &self.plugins {
            let review = AssertUnwindSafe(plugin.rewrite_input(ctx, &call))
                .catch_unwind()
                .await;
            let rewrite = review.map(|review| {
                verdicts.push(review.verdict);
                review.rewrite
            });
            match rewrite {
                Ok(InputRewrite::Keep) => {}
                Ok(mut rewrite) => {
                    if let InputRewrite::Rewrite {
                        by,
                        conflicts: lost,
                        ..
                    } = &mut rewrite
                    {
                        conflicts.append(lost);
                        if winner.is_some() {
                            conflicts.push(by.clone());
                        }
                    }
                    winner.get_or_insert(rewrite);
                }
                Err(payload) => {
                    let outcome = ToolOutcome::error(
                        format!(
                            "input-rewrite listener `{}` failed: {}",
                            plugin.name(),
                            panic_text(payload.as_ref())
                        ),
                        Disposition::Failed,
                    );
                    return SealedCall {
                        rewrite_conflicts: conflicts,
                        ..SealedCall::rejected(execution, outcome)
                    };
                }
            }
        }
        let mut rejected = None;
        let mut shown = HistoryInput::Original;
        if let Some(InputRewrite::Rewrite {
            arguments,
            by,
            history,
            refusal,
            ..
        }) = winner
        {
            shown = history;
            // The rewriting dialect's own wording, or the schema's.
            let reason = refusal.or_else(|| {
                let problem = schema::validate(&input_schema, &arguments).err()?;
                Some(format!(
                    "Invalid arguments for `{}` after `{by}` rewrote them: {problem}",
                    call.tool
                ))
            });
            // A call a review already denied never runs, whatever its input:
            // its deny stands (delivered at pre-execute), not the input check.
            let denied = verdicts.iter().flatten().any(|verdict| {
                matches!(
                    verdict.outcome.decision,
                    PreToolDecision::Deny { .. } | PreToolDecision::AutoDeny { .. }
                )
            });
            if let Some(reason) = reason.filter(|_| !denied) {
                rejected = Some(ToolOutcome::error(reason, Disposition::InvalidArguments));
                // The call never reaches pre-execute: its verdicts go now.
                verdicts.clear();
            }
            execution.original_arguments = Some(Arc::new(call.arguments.clone()));
            execution.arguments = Arc::new(arguments);
            execution.rewritten_by = Some(by);
        }
        SealedCall {
            execution,
            rewrite_conflicts: conflicts,
            history: shown,
            rejected,
            verdicts,
            screened_by: None,
        }
    }

    /// Runs a sealed call through the pipeline. A post-execute listener's
    /// tail call runs next under the same call id (sealed and executed as a
    /// call of its own), and its result is the call's, up to
    /// [`MAX_TAIL_CALLS`] in a chain.
    pub async fn execute(&self, ctx: &SeamContext, sealed: SealedCall) -> ToolExecutionResult {
        let (mut result, mut tail) = self.execute_once(ctx, sealed).await;
        let mut chained = 0;
        while let Some(proposed) = tail.take() {
            if chained >= MAX_TAIL_CALLS {
                ctx.sink.tell_user(dsh_seams::UserNotice {
                    source: "dsh".to_owned(),
                    text: format!(
                        "a post-execute listener asked for more than {MAX_TAIL_CALLS} tail calls in a row; the last result stands"
                    ),
                    level: dsh_seams::NoticeLevel::Warning,
                });
                break;
            }
            chained += 1;
            let sealed = self.seal(ctx, proposed).await;
            let (next, next_tail) = Box::pin(self.execute_once(ctx, sealed)).await;
            let mut contexts = std::mem::take(&mut result.contexts);
            contexts.extend(next.contexts);
            // The model's call keeps its own execution; the result is the
            // tail's.
            result = ToolExecutionResult {
                execution: result.execution,
                outcome: next.outcome,
                contexts,
                decided_by: next.decided_by.or(result.decided_by),
            };
            tail = next_tail;
        }
        result
    }

    async fn execute_once(
        &self,
        ctx: &SeamContext,
        sealed: SealedCall,
    ) -> (ToolExecutionResult, Option<ProposedCall>) {
        let mut exec = sealed.execution;
        let mut tail = None;
        let tool = self.tools.get(&exec.tool).cloned();
        let mut contexts = Vec::new();
        let mut decided_by = sealed.screened_by;
        let outcome = match sealed.rejected {
            Some(outcome) => outcome,
            None => match &tool {
                Some(tool) => {
                    let ran = self
                        .run_phases(ctx, &exec, tool, &sealed.verdicts, &mut contexts)
                        .await;
                    if let Some(rewritten) = ran.rewritten {
                        exec = rewritten;
                    }
                    decided_by = ran.decided_by;
                    tail = ran.tail;
                    ran.outcome
                }
                None => ToolOutcome::error(
                    format!("Unknown tool `{}`.", exec.tool),
                    Disposition::UnknownTool,
                ),
            },
        };
        let outcome = finalize(tool.as_deref(), outcome);
        for plugin in &self.plugins {
            // Observers are contained: a panicking observer changes nothing.
            let _ = std::panic::catch_unwind(AssertUnwindSafe(|| {
                plugin.tool_result(ctx, &exec, &outcome)
            }));
        }
        (
            ToolExecutionResult {
                execution: Some(exec),
                outcome,
                contexts,
                decided_by,
            },
            tail,
        )
    }

    async fn run_phases(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        tool: &Arc<dyn Tool>,
        verdicts: &[Option<PreToolVerdict>],
        contexts: &mut Vec<ContextEntry>,
    ) -> Ran {
        let gate = {
            let _turn = self.gate_turn.lock().await;
            self.gate(ctx, exec, verdicts, contexts).await
        };
        let (outcome, rewritten, decided_by) = match gate {
            Gate::Pass {
                rewritten,
                decided_by,
                ..
            } => (None, rewritten, decided_by),
            Gate::Denied {
                outcome,
                decided_by,
                ..
            } => (Some(outcome), None, decided_by),
            // A failed listener ends the call here: no post-execute.
            Gate::Failed(outcome) => {
                return Ran {
                    outcome,
                    rewritten: None,
                    decided_by: None,
                    tail: None,
                };
            }
        };
        // An approval that replaced the arguments: the rest of the call
        // (dispatch, post-execute) sees the replacement.
        let exec = rewritten.as_ref().unwrap_or(exec);
        // The call is going to run: the before-dispatch listeners set the
        // request metadata it carries.
        let request_meta = match outcome {
            None => self.before_dispatch(ctx, exec).await,
            Some(_) => None,
        };

        // Phases 3–4: execute wrappers around dispatch. What changed on disk
        // since the last look is reported first, so that the look after
        // dispatch sees this call's changes only.
        self.fire_session_changes(ctx).await;
        let dir_before = ctx.session.current_dir();
        let started = Instant::now();
        let mut deferred = Vec::new();
        let mut outcome = match outcome {
            Some(denied) => denied,
            None => {
                let (outcome, nested) = self.dispatch(ctx, exec, tool, request_meta).await;
                deferred = nested;
                outcome
            }
        };
        let duration = started.elapsed();
        // What the call changed (a settings file, a watched file) fires
        // while the call is still open: before its post-execute.
        self.fire_session_changes(ctx).await;

        // Phase 5: post-execute waterfall, for every resolved decision.
        let mut decision_contexts = Vec::new();
        let mut blocked = false;
        let mut tail = None;
        for plugin in &self.plugins {
            let decision = AssertUnwindSafe(plugin.post_execute(ctx, exec, &outcome, duration))
                .catch_unwind()
                .await;
            match decision {
                Ok(decision) => {
                    decision_contexts.extend(decision.contexts);
                    match decision.action {
                        PostToolAction::Accept => {}
                        PostToolAction::Block { feedback } => {
                            blocked = true;
                            outcome = ToolOutcome {
                                is_error: true,
                                content: feedback,
                                value: outcome.value,
                                disposition: outcome.disposition,
                            };
                        }
                        PostToolAction::ReplaceContent { content } => outcome.content = content,
                        // The first listener's tail call wins.
                        PostToolAction::TailCall { tool, arguments } => {
                            if tail.is_none() {
                                tail = Some(ProposedCall {
                                    call_id: exec.call_id.clone(),
                                    tool,
                                    arguments,
                                    parent_execution_id: None,
                                    origin: None,
                                });
                            }
                        }
                        PostToolAction::ReplaceValue { value } => match tool.render(&value) {
                            Ok(rendered) => {
                                outcome.content = rendered.content;
                                outcome.is_error = rendered.is_error;
                                outcome.value = Some(value);
                            }
                            Err(problem) => {
                                outcome = ToolOutcome::error(
                                    format!(
                                        "post-execute listener `{}` replaced the value with one `{}` cannot present: {problem}",
                                        plugin.name(),
                                        exec.tool
                                    ),
                                    Disposition::Failed,
                                );
                            }
                        },
                    }
                }
                Err(payload) => {
                    outcome = ToolOutcome::error(
                        format!(
                            "post-execute listener `{}` failed: {}",
                            plugin.name(),
                            panic_text(payload.as_ref())
                        ),
                        Disposition::Failed,
                    );
                    break;
                }
            }
        }
        // An accepted call keeps its nested contexts ahead of decision
        // contexts; a blocked one exposes only what the blocking decisions said.
        if !blocked {
            contexts.extend(deferred);
        }
        contexts.extend(decision_contexts);
        // The call moved the session's working directory (bash `cd`): the
        // lifecycle seam, after post-execute, with the new directory in effect.
        let dir_after = ctx.session.current_dir();
        if dir_after != dir_before {
            let change = CwdChange {
                old: dir_before,
                new: dir_after,
            };
            for plugin in &self.plugins {
                if AssertUnwindSafe(plugin.cwd_changed(ctx, &change))
                    .catch_unwind()
                    .await
                    .is_err()
                {
                    tracing::error!("cwd-changed listener `{}` panicked", plugin.name());
                }
            }
        }
        Ran {
            outcome,
            rewritten,
            decided_by,
            // A blocked result stands.
            tail: tail.filter(|_| !blocked),
        }
    }

    /// What the pipeline decides for `call` short of running it: sealing
    /// (validation, input rewrite, re-validation), the pre-execute
    /// waterfall, approval and guards, exactly as [`ToolRegistry::execute`]
    /// would; the tool is never dispatched and post-execute never runs.
    /// For `dsh hooks test` and other dry runs.
    pub async fn decide(&self, ctx: &SeamContext, call: ProposedCall) -> CallDecision {
        let sealed = self.seal(ctx, call).await;
        let mut contexts = Vec::new();
        let verdict = match sealed.rejected {
            Some(outcome) => CallVerdict::Rejected(outcome),
            None => match self
                .gate(ctx, &sealed.execution, &sealed.verdicts, &mut contexts)
                .await
            {
                Gate::Pass { decision, .. } => CallVerdict::Runs { decision },
                Gate::Denied {
                    decision, outcome, ..
                } => CallVerdict::Denied { decision, outcome },
                Gate::Failed(outcome) => CallVerdict::Rejected(outcome),
            },
        };
        CallDecision {
            execution: sealed.execution,
            rewrite_conflicts: sealed.rewrite_conflicts,
            contexts,
            verdict,
        }
    }

    /// The before-dispatch waterfall for a call that is going to run: the
    /// request metadata the last listener left. A listener that panics
    /// changes nothing.
    async fn before_dispatch(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
    ) -> Option<RequestMeta> {
        let mut meta = None;
        for plugin in &self.plugins {
            let kept = meta.clone();
            match AssertUnwindSafe(plugin.before_dispatch(ctx, exec, meta))
                .catch_unwind()
                .await
            {
                Ok(answer) => meta = answer,
                Err(_) => {
                    tracing::error!("before-dispatch listener `{}` panicked", plugin.name());
                    meta = kept;
                }
            }
        }
        meta
    }

    /// Execute wrappers around core dispatch. Returns the normalized outcome
    /// and the contexts the tool deferred.
    async fn dispatch(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        tool: &Arc<dyn Tool>,
        request_meta: Option<RequestMeta>,
    ) -> (ToolOutcome, Vec<ContextEntry>) {
        let mut tool_ctx = ToolContext::new(ctx.session.current_dir(), ctx.cancel.clone());
        tool_ctx.request_meta = request_meta;
        tool_ctx.env = ctx.session.env.snapshot();
        tool_ctx.execution_id = exec.execution_id.clone();
        tool_ctx.seam = Some(ctx.clone());
        tool_ctx.set_plugins(self.plugins.clone());
        tool_ctx.set_asker(self.approval.clone());
        let original_signal = ctx.cancel.clone();
        let core = {
            let tool = Arc::clone(tool);
            let tool_ctx = tool_ctx.clone();
            let arguments = Arc::clone(&exec.arguments);
            let name = exec.tool.clone();
            move |signal: CancellationToken| -> BoxFuture<'_, ToolOutcome> {
                let tool = Arc::clone(&tool);
                let mut tool_ctx = tool_ctx.clone();
                let arguments = Arc::clone(&arguments);
                let original = original_signal.clone();
                let name = name.clone();
                Box::pin(async move {
                    // The tool observes both the original signal and the
                    // wrapper's replacement: a wrapper can add cancellation,
                    // never remove it.
                    let combined = CancellationToken::new();
                    tool_ctx.cancel = combined.clone();
                    let watcher = {
                        let combined = combined.clone();
                        async move {
                            tokio::select! {
                                _ = original.cancelled() => {},
                                _ = signal.cancelled() => {},
                            }
                            combined.cancel();
                        }
                    };
                    let run = AssertUnwindSafe(tool.run(&tool_ctx, &arguments)).catch_unwind();
                    let result = tokio::select! {
                        result = run => result,
                        _ = async { watcher.await; tokio::time::sleep(Duration::from_secs(5)).await } => {
                            return ToolOutcome::error(
                                format!("`{name}` was cancelled and did not stop in time."),
                                Disposition::Cancelled,
                            );
                        }
                    };
                    match result {
                        Ok(Ok(value)) => render(tool.as_ref(), &name, value),
                        Ok(Err(error)) => ToolOutcome {
                            is_error: true,
                            content: error.0,
                            value: None,
                            disposition: Disposition::Executed,
                        },
                        Err(payload) => ToolOutcome::error(
                            format!("`{name}` failed: {}", panic_text(payload.as_ref())),
                            Disposition::Failed,
                        ),
                    }
                })
            }
        };
        let next = Next::new(&self.plugins, ctx, exec, &core);
        let outcome = AssertUnwindSafe(next.run(ctx.cancel.clone()))
            .catch_unwind()
            .await;
        let outcome = match outcome {
            Ok(outcome) => renormalize(tool.as_ref(), &exec.tool, outcome),
            Err(payload) => ToolOutcome::error(
                format!("execute wrapper failed: {}", panic_text(payload.as_ref())),
                Disposition::Failed,
            ),
        };
        (outcome, tool_ctx.take_deferred())
    }
}

fn render(tool: &dyn Tool, name: &str, value: Value) -> ToolOutcome {
    match tool.render(&value) {
        Ok(rendered) => ToolOutcome {
            is_error: rendered.is_error,
            content: rendered.content,
            value: Some(value),
            disposition: Disposition::Executed,
        },
        Err(problem) => ToolOutcome::error(
            format!("`{name}` produced a value it cannot present: {problem}"),
            Disposition::Failed,
        ),
    }
}

/// A wrapper-authored outcome is re-normalized through the tool's renderer
/// when it carries a value, so it cannot present something the value does
/// not say.
fn renormalize(tool: &dyn Tool, name: &str, outcome: ToolOutcome) -> ToolOutcome {
    match (&outcome.disposition, outcome.value.clone()) {
        (Disposition::Executed, Some(value)) => {
            let rendered = render(tool, name, value);
            if rendered.content == outcome.content && rendered.is_error == outcome.is_error {
                outcome
            } else {
                rendered
            }
        }
        _ => outcome,
    }
}

/// `finalize_content` runs exactly once on every normalized outcome; it may
/// replace the content and nothing else. A panicking finalizer keeps the
/// content as it was.
fn finalize(tool: Option<&dyn Tool>, mut outcome: ToolOutcome) -> ToolOutcome {
    if let Some(tool) = tool
        && let Ok(Some(content)) =
            std::panic::catch_unwind(AssertUnwindSafe(|| tool.finalize_content(&outcome)))
    {
        outcome.content = content;
    }
    outcome
}
