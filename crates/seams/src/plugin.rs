//! The plugin trait: one method per seam, each with a neutral default.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use dsh_model::ModelError;
use dsh_protocol::{Event, ModelReply, ModelRequest, TurnEndReason};
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::{AgentDefinition, SubagentStartInput, SubagentStopInput};
use crate::{
    ApprovalDecision, CallReview, ContextEntry, ContinuationDecision, GuardVerdict,
    PostToolDecision, PreToolOutcome, PreToolVerdict, PromptDecision, ProposedCall, SeamContext,
    SessionEndReason, SessionStartSource, ToolExecution, ToolOutcome,
};

/// A prompt claimed for a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptInput {
    /// The text (possibly rewritten by an earlier listener).
    pub content: String,
    /// Who sent it (`user`, …).
    pub source: String,
}

/// What the continuation seam is told at a natural stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContinuationInput {
    /// The turn.
    pub turn: u64,
    /// The step that just ended.
    pub step: u64,
    /// The last assistant text of the turn.
    pub last_assistant_message: String,
    /// How many consecutive times this turn was forced to continue so far.
    pub forced_continuations: u32,
}

/// One settled call of a step's batch, as batch listeners see it.
#[derive(Debug, Clone, PartialEq)]
pub struct SettledCall {
    /// The call as the model made it (arguments before any rewrite).
    pub call: ProposedCall,
    /// The sealed identity.
    pub execution: ToolExecution,
    /// The authoritative outcome.
    pub outcome: ToolOutcome,
}

/// What a turn-end observer is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnSummary {
    /// The turn.
    pub turn: u64,
    /// Why it closed.
    pub reason: TurnEndReason,
    /// The prompt that opened it.
    pub prompt: String,
    /// The last assistant text, if the model answered.
    pub last_assistant_message: Option<String>,
}

/// Why dsh is waiting for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotificationKind {
    /// An approval prompt is on screen.
    PermissionPrompt,
    /// The session is idle, waiting for input.
    Idle,
}

/// A notification about the user being needed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    /// Why.
    pub kind: NotificationKind,
    /// What the user is shown.
    pub message: String,
}

/// Delegation to the rest of the execute-wrapper chain and, at its end, to
/// core dispatch.
pub struct Next<'a> {
    wrappers: &'a [Arc<dyn Plugin>],
    ctx: &'a SeamContext,
    exec: &'a ToolExecution,
    dispatch: &'a (dyn Fn(CancellationToken) -> BoxFuture<'a, ToolOutcome> + Send + Sync),
}

impl<'a> Next<'a> {
    /// A chain over `wrappers` ending in `dispatch`.
    pub fn new(
        wrappers: &'a [Arc<dyn Plugin>],
        ctx: &'a SeamContext,
        exec: &'a ToolExecution,
        dispatch: &'a (dyn Fn(CancellationToken) -> BoxFuture<'a, ToolOutcome> + Send + Sync),
    ) -> Self {
        Next {
            wrappers,
            ctx,
            exec,
            dispatch,
        }
    }

    /// Runs the rest of the chain with `signal`. Core dispatch observes both
    /// this signal and the execution's original one, so a wrapper can replace
    /// the signal but never remove cancellation.
    pub fn run(self, signal: CancellationToken) -> BoxFuture<'a, ToolOutcome> {
        match self.wrappers.split_first() {
            Some((first, rest)) => {
                let next = Next {
                    wrappers: rest,
                    ctx: self.ctx,
                    exec: self.exec,
                    dispatch: self.dispatch,
                };
                Box::pin(async move { first.execute(self.ctx, self.exec, signal, next).await })
            }
            None => (self.dispatch)(signal),
        }
    }
}

/// A native hook: an ordinary plugin on the canonical seams. Every method has
/// a neutral default, so a plugin implements only the seams it cares about.
/// Listeners run in registration order.
#[async_trait]
pub trait Plugin: Send + Sync {
    /// The plugin's name, used as the `source` of what it adds.
    fn name(&self) -> &str;

    /// Session start (once before turn 1). Returns contexts for the first
    /// model request; cannot block.
    async fn session_start(
        &self,
        _ctx: &SeamContext,
        _source: SessionStartSource,
    ) -> Vec<ContextEntry> {
        Vec::new()
    }

    /// Prompt-submit waterfall.
    async fn prompt_submit(&self, _ctx: &SeamContext, _prompt: &PromptInput) -> PromptDecision {
        PromptDecision::allow()
    }

    /// Reviews a proposed call before it is sealed: the input rewrite (the
    /// first rewrite in registration order wins; later ones are recorded as
    /// conflicts) and, optionally, a verdict carried to this plugin's
    /// `pre_execute` and `approve` for the same call.
    async fn rewrite_input(&self, _ctx: &SeamContext, _call: &ProposedCall) -> CallReview {
        CallReview::keep()
    }

    /// Pre-execute waterfall on the sealed call. `review` is the verdict this
    /// plugin reached in `rewrite_input` for this call, if any.
    async fn pre_execute(
        &self,
        ctx: &SeamContext,
        _exec: &ToolExecution,
        review: Option<&PreToolVerdict>,
    ) -> PreToolOutcome {
        review.map_or_else(PreToolOutcome::allow, |verdict| verdict.deliver(ctx))
    }

    /// Approval seam: answers an `ask` before the user is asked. `review` is
    /// this plugin's own verdict for the call, as in `pre_execute`.
    async fn approve(
        &self,
        _ctx: &SeamContext,
        _exec: &ToolExecution,
        _reason: Option<&str>,
        _review: Option<&PreToolVerdict>,
    ) -> ApprovalDecision {
        ApprovalDecision::Abstain
    }

    /// Guard: synchronous, after the whole pre-execute waterfall; deny or abstain.
    fn guard(&self, _ctx: &SeamContext, _exec: &ToolExecution) -> GuardVerdict {
        GuardVerdict::Abstain
    }

    /// Execute wrapper around dispatch (timeouts, retries, metrics).
    async fn execute(
        &self,
        _ctx: &SeamContext,
        _exec: &ToolExecution,
        signal: CancellationToken,
        next: Next<'_>,
    ) -> ToolOutcome {
        next.run(signal).await
    }

    /// Post-execute waterfall.
    async fn post_execute(
        &self,
        _ctx: &SeamContext,
        _exec: &ToolExecution,
        _outcome: &ToolOutcome,
        _duration: Duration,
    ) -> PostToolDecision {
        PostToolDecision::accept()
    }

    /// Result observer: immutable snapshot; cannot change the outcome.
    fn tool_result(&self, _ctx: &SeamContext, _exec: &ToolExecution, _outcome: &ToolOutcome) {}

    /// A step's whole batch of tool calls has settled (every result is
    /// recorded). Returns contexts appended after the batch's other contexts.
    async fn batch_settled(&self, _ctx: &SeamContext, _batch: &[SettledCall]) -> Vec<ContextEntry> {
        Vec::new()
    }

    /// Turn continuation at a natural stop.
    async fn turn_continuation(
        &self,
        _ctx: &SeamContext,
        _input: &ContinuationInput,
    ) -> ContinuationDecision {
        ContinuationDecision::Stop
    }

    /// Observes a model request about to be sent.
    async fn before_model_request(&self, _ctx: &SeamContext, _request: &ModelRequest) {}

    /// Observes a model request's result.
    async fn after_model_request(
        &self,
        _ctx: &SeamContext,
        _request: &ModelRequest,
        _result: Result<&ModelReply, &ModelError>,
    ) {
    }

    /// Observes a turn closing (including `interrupted`).
    async fn turn_end(&self, _ctx: &SeamContext, _summary: &TurnSummary) {}

    /// Observes the session ending.
    async fn session_end(&self, _ctx: &SeamContext, _reason: SessionEndReason) {}

    /// Observes dsh waiting for the user.
    async fn notification(&self, _ctx: &SeamContext, _notification: &Notification) {}

    /// Observes every event after it is durably appended.
    fn on_event(&self, _event: &Event) {}

    /// Custom agent types this plugin knows (Claude Code's
    /// `.claude/agents/*.md`), offered to the `agent` tool.
    fn agent_definitions(&self) -> Vec<AgentDefinition> {
        Vec::new()
    }

    /// A subagent's nested run is about to send its first request
    /// (`ctx.agent` is its identity). Returns contexts for that request;
    /// cannot block.
    async fn subagent_start(
        &self,
        _ctx: &SeamContext,
        _input: &SubagentStartInput,
    ) -> Vec<ContextEntry> {
        Vec::new()
    }

    /// A subagent reached a natural stop. `Continue` gives it another turn
    /// with the reason as a user message; `Halt` ends it `stopped`.
    async fn subagent_stop(
        &self,
        _ctx: &SeamContext,
        _input: &SubagentStopInput,
    ) -> ContinuationDecision {
        ContinuationDecision::Stop
    }
}
