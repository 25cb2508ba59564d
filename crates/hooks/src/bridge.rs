//! The generic bridge plugin: the seam orchestration every dialect runs,
//! written once. [`BridgePlugin`] is the `dsh_seams::Plugin` of any
//! dialect that implements [`Bridge`]; the dialect supplies pure
//! per-event functions and the plugin does the rest.
//!
//! A seam of a bridge is a [`Flow`]: fire an event (its payload built by
//! the dialect, [`Fire`]), hand the runs' readings to the dialect's
//! aggregate-and-translate function, which says which run won
//! ([`Record`]) and what comes next: the seam's answer ([`Flow::Done`]) or
//! another event to fire (a dialect whose tool fires a second event
//! after the first one's answer, or only when the first did not decide,
//! chains them here). The plugin
//! runs the flow: it dispatches each firing through the [`Engine`]
//! (selection, `hook/invoked`, the runs in the dialect's [`Order`]),
//! marks the winner, records every `hook/result`, and keeps the bridge's
//! state between seams behind one lock that is never held across a run.
//!
//! What it is not: it holds no dialect vocabulary. Payload shapes, the
//! output reading, the aggregation rules and every model-facing text stay
//! in the dialect crate.
//!
//! [`Order`]: crate::Order

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use dsh_hook_runner::{HookRun, HookRunner};
use dsh_model::ModelError;
use dsh_protocol::{DecidedBy, Event, HookDecision, HookEffect, ModelReply, ModelRequest};
use dsh_seams::{
    AgentDefinition, ApprovalAsk, ApprovalDecision, CallReview, CancellationToken,
    CompactionDecision, CompactionInput, CompactionOutcome, ConfigChange, ConfigDecision,
    ContextEntry, ContinuationDecision, ContinuationInput, CwdChange, DeniedFollowUp,
    DirectoryAddition, DisplayDecision, DisplayInput, ElicitationAnswer, ElicitationRequest,
    ExpansionInput, FileChange, InstructionFile, LoadReason, ModelSwitch, ModelSwitchDecision,
    Notification, PermissionUpdate, Plugin, PostToolDecision, PreToolOutcome, PreToolVerdict,
    PromptDecision, PromptInput, ProposedCall, ProviderRequestDecision, RequestMeta, SeamContext,
    SessionEndReason, SessionStartSource, SettledCall, SetupTrigger, SubagentStartInput,
    SubagentStopInput, TaskEvent, TaskVerdict, ToolExecution, ToolOutcome, TurnFailure,
    TurnSummary, WorktreeCreation, WorktreeRemoval,
};
/// What the model-request seams of a [`Bridge`] return.
pub use futures::future::BoxFuture;

use crate::dispatch::{Request, Rules, Winner, mark};
use crate::engine::{Engine, Fired, Harvested, mark_winner};

mod flow;
pub use flow::*;

/// A dialect's part in every seam, as pure per-event functions. Each seam
/// method plans the seam's [`Flow`] from its input and the bridge's state;
/// the defaults answer as a plugin that does not take part would.
pub trait Bridge: Rules + 'static {
    /// What the bridge remembers across seams.
    type State: Default + Send;
    /// What a firing's handlers are matched against, owned (a tool name).
    type Key: Send;
    /// Which runs' answers are decisive for the winner mark.
    type Decisive: Copy + Send;

    /// The plugin's name.
    fn plugin_name(&self) -> &'static str;
    /// The subject the engine matches `key`'s handlers against.
    fn subject<'k>(&self, key: &'k Self::Key) -> Self::Subject<'k>;
    /// Whether `reading` gave the `decisive` answer.
    fn holds(&self, decisive: Self::Decisive, reading: &Self::Reading) -> bool;

    /// Reads a detached run that finished, when a flow harvests it.
    /// Default: recorded with no effect, nothing for the model.
    fn read_detached(
        &self,
        _ctx: &SeamContext,
        _handler: &Self::Handler,
        _note: &Self::Note,
        _run: &HookRun,
    ) -> Harvested {
        Harvested {
            decision: HookDecision::of(HookEffect::None),
            parsed: None,
            context: None,
        }
    }

    /// Agent types the dialect's tool has built in.
    fn agent_definitions(&self) -> Vec<AgentDefinition> {
        Vec::new()
    }
    /// Observes an event of the session log (what the bridge keeps of
    /// the turn for later payloads).
    fn on_event(&self, _state: &mut Self::State, _event: &Event) {}
    /// A model request about to go out. For dialects whose model events
    /// read and patch the request as a whole: they fire through
    /// [`BridgePlugin::drive`] themselves. Default: keep it.
    fn before_provider_request<'a>(
        _plugin: &'a BridgePlugin<Self>,
        _ctx: &'a SeamContext,
        _request: &'a ModelRequest,
    ) -> BoxFuture<'a, ProviderRequestDecision> {
        Box::pin(async { ProviderRequestDecision::Keep })
    }
    /// A model request's result (as [`Bridge::before_provider_request`]).
    /// Default: nothing.
    fn after_model_request<'a>(
        _plugin: &'a BridgePlugin<Self>,
        _ctx: &'a SeamContext,
        _request: &'a ModelRequest,
        _result: Result<&'a ModelReply, &'a ModelError>,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
    /// Session start.
    fn session_start<'a>(
        _cx: Cx<'_, Self>,
        _start: SessionStartSource,
    ) -> Flow<'a, Self, Vec<ContextEntry>> {
        Flow::Done(Vec::new())
    }
    /// A prompt is submitted.
    fn prompt_submit<'a>(
        _cx: Cx<'_, Self>,
        _prompt: &'a PromptInput,
    ) -> Flow<'a, Self, PromptDecision> {
        Flow::Done(PromptDecision::allow())
    }
    /// A proposed call is reviewed.
    fn rewrite_input<'a>(_cx: Cx<'_, Self>, _call: &'a ProposedCall) -> Flow<'a, Self, CallReview> {
        Flow::Done(CallReview::keep())
    }
    /// The sealed call, before it runs.
    fn pre_execute<'a>(
        cx: Cx<'_, Self>,
        _exec: &'a ToolExecution,
        review: Option<&'a PreToolVerdict>,
    ) -> Flow<'a, Self, PreToolOutcome> {
        Flow::Done(review.map_or_else(PreToolOutcome::allow, |verdict| verdict.deliver(cx.ctx)))
    }
    /// An ask, before the user is asked.
    fn approve<'a>(
        _cx: Cx<'_, Self>,
        _exec: &'a ToolExecution,
        _ask: &'a ApprovalAsk,
        _review: Option<&'a PreToolVerdict>,
    ) -> Flow<'a, Self, ApprovalDecision> {
        Flow::Done(ApprovalDecision::Abstain)
    }
    /// A call that is going to run, right before dispatch: the request
    /// metadata it carries (`meta`: what the listeners before left).
    fn before_dispatch<'a>(
        _cx: Cx<'_, Self>,
        _exec: &'a ToolExecution,
        meta: Option<RequestMeta>,
    ) -> Flow<'a, Self, Option<RequestMeta>> {
        Flow::Done(meta)
    }
    /// A call ran.
    fn post_execute<'a>(
        _cx: Cx<'_, Self>,
        _exec: &'a ToolExecution,
        _outcome: &'a ToolOutcome,
        _duration: Duration,
    ) -> Flow<'a, Self, PostToolDecision> {
        Flow::Done(PostToolDecision::accept())
    }
    /// The turn reached a natural stop.
    fn turn_continuation<'a>(
        _cx: Cx<'_, Self>,
        _input: &'a ContinuationInput,
    ) -> Flow<'a, Self, ContinuationDecision> {
        Flow::Done(ContinuationDecision::Stop)
    }
    /// A model request failed the turn.
    fn turn_failed<'a>(_cx: Cx<'_, Self>, _failure: &'a TurnFailure) -> Flow<'a, Self, ()> {
        Flow::Done(())
    }
    /// Before the history is compacted.
    fn session_before_compact<'a>(
        _cx: Cx<'_, Self>,
        _input: &'a CompactionInput,
    ) -> Flow<'a, Self, CompactionDecision> {
        Flow::Done(CompactionDecision::proceed())
    }
    /// The session ends.
    fn session_end<'a>(_cx: Cx<'_, Self>, _reason: SessionEndReason) -> Flow<'a, Self, ()> {
        Flow::Done(())
    }
    /// A subagent is about to start.
    fn subagent_start<'a>(
        _cx: Cx<'_, Self>,
        _input: &'a SubagentStartInput,
    ) -> Flow<'a, Self, Vec<ContextEntry>> {
        Flow::Done(Vec::new())
    }
    /// A subagent reached a natural stop.
    fn subagent_stop<'a>(
        _cx: Cx<'_, Self>,
        _input: &'a SubagentStopInput,
    ) -> Flow<'a, Self, ContinuationDecision> {
        Flow::Done(ContinuationDecision::Stop)
    }

    // Seams added for Codex.

    /// A model request is about to go out (advisory).
    fn before_model_request<'a>(_cx: Cx<'_, Self>, _req: &'a ModelRequest) -> Flow<'a, Self, ()> {
        Flow::Done(())
    }
    /// The history was compacted; contexts for the compacted history.
    fn session_compacted<'a>(
        _cx: Cx<'_, Self>,
        _outcome: &'a CompactionOutcome,
    ) -> Flow<'a, Self, Vec<ContextEntry>> {
        Flow::Done(Vec::new())
    }
    /// The turn ended. Async over the plugin, for dialects that also run
    /// a program of their own there (not a hook). Default: nothing.
    fn turn_end<'a>(
        _plugin: &'a BridgePlugin<Self>,
        _ctx: &'a SeamContext,
        _summary: &'a TurnSummary,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }

    // Seams added for Claude Code.

    /// A notification (a permission prompt, idle). Default: nothing.
    fn notification<'a>(_cx: Cx<'_, Self>, _notification: &'a Notification) -> Flow<'a, Self, ()> {
        Flow::Done(())
    }
    /// An assistant message about to be shown. Default: shown as it is.
    fn message_display<'a>(
        _cx: Cx<'_, Self>,
        _input: &'a DisplayInput,
    ) -> Flow<'a, Self, DisplayDecision> {
        Flow::Done(DisplayDecision::Keep)
    }
    /// An MCP server asks the user. Default: no answer in the user's place.
    fn elicitation<'a>(
        _cx: Cx<'_, Self>,
        _request: &'a ElicitationRequest,
    ) -> Flow<'a, Self, Option<ElicitationAnswer>> {
        Flow::Done(None)
    }
    /// The user's answer to an elicitation. Default: kept.
    fn elicitation_result<'a>(
        _cx: Cx<'_, Self>,
        _request: &'a ElicitationRequest,
        _answer: &'a ElicitationAnswer,
    ) -> Flow<'a, Self, Option<ElicitationAnswer>> {
        Flow::Done(None)
    }
    /// A task is created or completed. Default: allowed.
    fn task_event<'a>(_cx: Cx<'_, Self>, _task: &'a TaskEvent) -> Flow<'a, Self, TaskVerdict> {
        Flow::Done(TaskVerdict::Allow)
    }
    /// Before the model is switched. Default: allowed.
    fn before_model_switch<'a>(
        _cx: Cx<'_, Self>,
        _switch: &'a ModelSwitch,
    ) -> Flow<'a, Self, ModelSwitchDecision> {
        Flow::Done(ModelSwitchDecision::Allow)
    }
    /// The model was switched. Default: nothing.
    fn model_switched<'a>(_cx: Cx<'_, Self>, _switch: &'a ModelSwitch) -> Flow<'a, Self, ()> {
        Flow::Done(())
    }
    /// A worktree is to be created. Default: not handled.
    fn worktree_create<'a>(_cx: Cx<'_, Self>, _name: &'a str) -> Flow<'a, Self, WorktreeCreation> {
        Flow::Done(WorktreeCreation::NotHandled)
    }
    /// A worktree this session created is to be removed. Default: not
    /// handled.
    fn worktree_remove<'a>(_cx: Cx<'_, Self>, _path: &'a Path) -> Flow<'a, Self, WorktreeRemoval> {
        Flow::Done(WorktreeRemoval::NotHandled)
    }
    /// `--init` / `--maintenance`. Default: nothing.
    fn setup<'a>(_cx: Cx<'_, Self>, _trigger: SetupTrigger) -> Flow<'a, Self, ()> {
        Flow::Done(())
    }
    /// The working directory moved. Default: nothing.
    fn cwd_changed<'a>(_cx: Cx<'_, Self>, _change: &'a CwdChange) -> Flow<'a, Self, ()> {
        Flow::Done(())
    }
    /// A settings file changed. Default: applied.
    fn config_change<'a>(
        _cx: Cx<'_, Self>,
        _change: &'a ConfigChange,
    ) -> Flow<'a, Self, ConfigDecision> {
        Flow::Done(ConfigDecision::Apply)
    }
    /// A watched file changed. Default: nothing.
    fn file_changed<'a>(_cx: Cx<'_, Self>, _change: &'a FileChange) -> Flow<'a, Self, ()> {
        Flow::Done(())
    }
    /// A settings change was applied. Default: nothing.
    fn config_applied<'a>(_cx: Cx<'_, Self>, _change: &'a ConfigChange) -> Flow<'a, Self, ()> {
        Flow::Done(())
    }
    /// A directory was added to the session; texts that each ask for a
    /// turn of their own. Default: none.
    fn directory_added<'a>(
        _cx: Cx<'_, Self>,
        _added: &'a DirectoryAddition,
    ) -> Flow<'a, Self, Vec<String>> {
        Flow::Done(Vec::new())
    }
    /// Instruction files were loaded. Default: nothing.
    fn instructions_loaded<'a>(
        _cx: Cx<'_, Self>,
        _files: &'a [InstructionFile],
        _reason: LoadReason,
    ) -> Flow<'a, Self, ()> {
        Flow::Done(())
    }
    /// A custom command's prompt is about to be expanded. Default: allowed.
    fn prompt_expansion<'a>(
        _cx: Cx<'_, Self>,
        _input: &'a ExpansionInput,
    ) -> Flow<'a, Self, PromptDecision> {
        Flow::Done(PromptDecision::allow())
    }
    /// Who decided `exec`, in the dialect's terms, when its own review
    /// settled it. Default: nothing to say.
    fn explain(
        &self,
        _exec: &ToolExecution,
        _review: Option<&PreToolVerdict>,
    ) -> Option<DecidedBy> {
        None
    }
    /// Permission updates were applied. Default: nothing.
    fn permissions_updated<'a>(
        _cx: Cx<'_, Self>,
        _updates: &'a [PermissionUpdate],
    ) -> Flow<'a, Self, ()> {
        Flow::Done(())
    }
    /// An automatic check denied a call. Default: the denial stands.
    fn permission_denied<'a>(
        _cx: Cx<'_, Self>,
        _exec: &'a ToolExecution,
        _check_reason: &'a str,
    ) -> Flow<'a, Self, DeniedFollowUp> {
        Flow::Done(DeniedFollowUp::Stand)
    }
    /// A batch of calls settled. Default: no contexts.
    fn batch_settled<'a>(
        _cx: Cx<'_, Self>,
        _batch: &'a [SettledCall],
    ) -> Flow<'a, Self, Vec<ContextEntry>> {
        Flow::Done(Vec::new())
    }
}

/// The `dsh_seams::Plugin` of a [`Bridge`]: runs each seam's flow.
pub struct BridgePlugin<B: Bridge> {
    engine: Engine<B>,
    state: Mutex<B::State>,
}

impl<B: Bridge> BridgePlugin<B>
where
    for<'s> B::Subject<'s>: Send,
{
    /// The plugin of `bridge`, running hooks through `runner`.
    pub fn new(bridge: B, runner: HookRunner) -> Self {
        BridgePlugin {
            engine: Engine::new(bridge, runner),
            state: Mutex::new(B::State::default()),
        }
    }

    /// The plugin, shared.
    pub fn shared(bridge: B, runner: HookRunner) -> Arc<dyn Plugin> {
        Arc::new(BridgePlugin::new(bridge, runner))
    }

    /// The dialect.
    pub fn bridge(&self) -> &B {
        self.engine.dialect()
    }

    /// The engine it dispatches through.
    pub fn engine(&self) -> &Engine<B> {
        &self.engine
    }

    fn lock(&self) -> MutexGuard<'_, B::State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The bridge's state, locked: for a dialect's seams that are not
    /// flows yet. Never hold it across a run.
    pub fn state(&self) -> MutexGuard<'_, B::State> {
        self.lock()
    }

    /// Runs `flow` to its answer.
    pub async fn drive<'a, Out: Send + 'a>(
        &self,
        ctx: &SeamContext,
        mut flow: Flow<'a, B, Out>,
    ) -> Out {
        let bridge = self.engine.dialect();
        loop {
            flow = match flow {
                Flow::Done(out) => return out,
                Flow::Later(later) => {
                    let mut state = self.lock();
                    later(Cx {
                        bridge,
                        state: &mut state,
                        ctx,
                    })
                }
                Flow::Fire(fire, then) => {
                    let (event, mut fired) = self.dispatch(ctx, fire).await;
                    let (record, next) = then(self.cx(&mut self.lock(), ctx), &mut fired);
                    self.record(ctx, event, &mut fired, record);
                    next
                }
                Flow::FireRecorded(fire, marks, after) => {
                    let (event, mut fired) = self.dispatch(ctx, fire).await;
                    let record = marks(self.cx(&mut self.lock(), ctx), &mut fired);
                    self.record(ctx, event, &mut fired, record);
                    after(self.cx(&mut self.lock(), ctx), &fired)
                }
                Flow::Harvest(then) => {
                    let contexts = self.engine.harvest(ctx, |handler, note, run| {
                        bridge.read_detached(ctx, handler, note, run)
                    });
                    then(self.cx(&mut self.lock(), ctx), contexts)
                }
                Flow::Settle(grace, next) => {
                    self.engine.settle_pending(grace).await;
                    *next
                }
                Flow::AbortPending(next) => {
                    self.engine.abort_pending();
                    *next
                }
            };
        }
    }

    fn cx<'s>(&'s self, state: &'s mut B::State, ctx: &'s SeamContext) -> Cx<'s, B> {
        Cx {
            bridge: self.engine.dialect(),
            state,
            ctx,
        }
    }

    /// Dispatches one firing of a flow through the engine.
    async fn dispatch(&self, ctx: &SeamContext, fire: Fire<B>) -> (B::Event, Vec<Fired<B>>) {
        let Fire {
            event,
            key,
            payload,
            call_id,
            fresh,
        } = fire;
        let own = CancellationToken::new();
        let request = Request {
            event,
            subject: self.engine.dialect().subject(&key),
            payload,
            call_id: call_id.as_deref(),
            cancel: if fresh { &own } else { &ctx.cancel },
        };
        (event, self.engine.dispatch(ctx, request).await)
    }

    /// Marks the winner `record` names and records every run's
    /// `hook/result`, with what `record` adds to each.
    fn record(
        &self,
        ctx: &SeamContext,
        event: B::Event,
        fired: &mut [Fired<B>],
        record: Record<B::Decisive>,
    ) {
        let bridge = self.engine.dialect();
        let holds = |decisive| move |reading: &B::Reading| bridge.holds(decisive, reading);
        let mut capped = None;
        let mut edits = Vec::new();
        let mut record = record;
        loop {
            match record {
                Record::AsRead => break,
                Record::Won(winner, decisive) => mark(fired, winner, holds(decisive)),
                Record::Capped(decisive, text) => {
                    mark(fired, Winner::Nobody, holds(decisive));
                    capped = Some(text);
                }
                Record::At(index, decisive) => mark_winner(fired, index, holds(decisive)),
                Record::Edited(inner, edit) => {
                    edits.push(edit);
                    record = *inner;
                    continue;
                }
            }
            break;
        }
        // The innermost edit first, as the records were wrapped.
        edits.reverse();
        let fired = &*fired;
        self.engine.record(ctx, event, fired, &|index, decision| {
            if let Some(text) = &capped
                && fired.get(index).is_some_and(|run| run.won.is_some())
            {
                decision.capped = Some(text.clone());
            }
            for edit in &edits {
                edit.apply(index, decision);
            }
        });
    }

    async fn run<'a, Out: Send + 'a>(
        &self,
        ctx: &SeamContext,
        plan: impl for<'s> FnOnce(Cx<'s, B>) -> Flow<'a, B, Out> + Send + 'a,
    ) -> Out {
        self.drive(ctx, Flow::later(plan)).await
    }
}

#[async_trait]
impl<B: Bridge> Plugin for BridgePlugin<B>
where
    for<'s> B::Subject<'s>: Send,
{
    fn name(&self) -> &str {
        self.engine.dialect().plugin_name()
    }

    fn agent_definitions(&self) -> Vec<AgentDefinition> {
        self.engine.dialect().agent_definitions()
    }

    fn on_event(&self, event: &Event) {
        self.engine.dialect().on_event(&mut self.lock(), event);
    }

    async fn before_provider_request(
        &self,
        ctx: &SeamContext,
        request: &ModelRequest,
    ) -> ProviderRequestDecision {
        B::before_provider_request(self, ctx, request).await
    }

    async fn after_model_request(
        &self,
        ctx: &SeamContext,
        request: &ModelRequest,
        result: Result<&ModelReply, &ModelError>,
    ) {
        B::after_model_request(self, ctx, request, result).await;
    }

    async fn session_start(
        &self,
        ctx: &SeamContext,
        start: SessionStartSource,
    ) -> Vec<ContextEntry> {
        self.run(ctx, move |cx| B::session_start(cx, start)).await
    }

    async fn prompt_submit(&self, ctx: &SeamContext, prompt: &PromptInput) -> PromptDecision {
        self.run(ctx, |cx| B::prompt_submit(cx, prompt)).await
    }

    async fn rewrite_input(&self, ctx: &SeamContext, call: &ProposedCall) -> CallReview {
        self.run(ctx, |cx| B::rewrite_input(cx, call)).await
    }

    async fn pre_execute(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        review: Option<&PreToolVerdict>,
    ) -> PreToolOutcome {
        self.run(ctx, |cx| B::pre_execute(cx, exec, review)).await
    }

    async fn approve(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        ask: &ApprovalAsk,
        review: Option<&PreToolVerdict>,
    ) -> ApprovalDecision {
        self.run(ctx, |cx| B::approve(cx, exec, ask, review)).await
    }

    async fn before_dispatch(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        meta: Option<RequestMeta>,
    ) -> Option<RequestMeta> {
        self.run(ctx, move |cx| B::before_dispatch(cx, exec, meta))
            .await
    }

    async fn post_execute(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        outcome: &ToolOutcome,
        duration: Duration,
    ) -> PostToolDecision {
        self.run(ctx, move |cx| B::post_execute(cx, exec, outcome, duration))
            .await
    }

    async fn turn_continuation(
        &self,
        ctx: &SeamContext,
        input: &ContinuationInput,
    ) -> ContinuationDecision {
        self.run(ctx, |cx| B::turn_continuation(cx, input)).await
    }

    async fn turn_failed(&self, ctx: &SeamContext, failure: &TurnFailure) {
        self.run(ctx, |cx| B::turn_failed(cx, failure)).await;
    }

    async fn session_before_compact(
        &self,
        ctx: &SeamContext,
        input: &CompactionInput,
    ) -> CompactionDecision {
        self.run(ctx, |cx| B::session_before_compact(cx, input))
            .await
    }

    async fn session_end(&self, ctx: &SeamContext, reason: SessionEndReason) {
        self.run(ctx, move |cx| B::session_end(cx, reason)).await;
    }

    async fn subagent_start(
        &self,
        ctx: &SeamContext,
        input: &SubagentStartInput,
    ) -> Vec<ContextEntry> {
        self.run(ctx, |cx| B::subagent_start(cx, input)).await
    }

    async fn subagent_stop(
        &self,
        ctx: &SeamContext,
        input: &SubagentStopInput,
    ) -> ContinuationDecision {
        self.run(ctx, |cx| B::subagent_stop(cx, input)).await
    }

    async fn before_model_request(&self, ctx: &SeamContext, request: &ModelRequest) {
        self.run(ctx, |cx| B::before_model_request(cx, request))
            .await;
    }

    async fn session_compacted(
        &self,
        ctx: &SeamContext,
        outcome: &CompactionOutcome,
    ) -> Vec<ContextEntry> {
        self.run(ctx, |cx| B::session_compacted(cx, outcome)).await
    }

    async fn turn_end(&self, ctx: &SeamContext, summary: &TurnSummary) {
        B::turn_end(self, ctx, summary).await;
    }

    // Seams added for Claude Code.

    async fn notification(&self, ctx: &SeamContext, notification: &Notification) {
        self.run(ctx, |cx| B::notification(cx, notification)).await;
    }

    async fn message_display(&self, ctx: &SeamContext, input: &DisplayInput) -> DisplayDecision {
        self.run(ctx, |cx| B::message_display(cx, input)).await
    }

    async fn elicitation(
        &self,
        ctx: &SeamContext,
        request: &ElicitationRequest,
    ) -> Option<ElicitationAnswer> {
        self.run(ctx, |cx| B::elicitation(cx, request)).await
    }

    async fn elicitation_result(
        &self,
        ctx: &SeamContext,
        request: &ElicitationRequest,
        answer: &ElicitationAnswer,
    ) -> Option<ElicitationAnswer> {
        self.run(ctx, |cx| B::elicitation_result(cx, request, answer))
            .await
    }

    async fn task_event(&self, ctx: &SeamContext, event: &TaskEvent) -> TaskVerdict {
        self.run(ctx, |cx| B::task_event(cx, event)).await
    }

    async fn before_model_switch(
        &self,
        ctx: &SeamContext,
        switch: &ModelSwitch,
    ) -> ModelSwitchDecision {
        self.run(ctx, |cx| B::before_model_switch(cx, switch)).await
    }

    async fn model_switched(&self, ctx: &SeamContext, switch: &ModelSwitch) {
        self.run(ctx, |cx| B::model_switched(cx, switch)).await;
    }

    async fn worktree_create(&self, ctx: &SeamContext, name: &str) -> WorktreeCreation {
        self.run(ctx, |cx| B::worktree_create(cx, name)).await
    }

    async fn worktree_remove(&self, ctx: &SeamContext, path: &Path) -> WorktreeRemoval {
        self.run(ctx, |cx| B::worktree_remove(cx, path)).await
    }

    async fn setup(&self, ctx: &SeamContext, trigger: SetupTrigger) {
        self.run(ctx, move |cx| B::setup(cx, trigger)).await;
    }

    async fn cwd_changed(&self, ctx: &SeamContext, change: &CwdChange) {
        self.run(ctx, |cx| B::cwd_changed(cx, change)).await;
    }

    async fn config_change(&self, ctx: &SeamContext, change: &ConfigChange) -> ConfigDecision {
        self.run(ctx, |cx| B::config_change(cx, change)).await
    }

    async fn file_changed(&self, ctx: &SeamContext, change: &FileChange) {
        self.run(ctx, |cx| B::file_changed(cx, change)).await;
    }

    async fn config_applied(&self, ctx: &SeamContext, change: &ConfigChange) {
        self.run(ctx, |cx| B::config_applied(cx, change)).await;
    }

    async fn directory_added(&self, ctx: &SeamContext, added: &DirectoryAddition) -> Vec<String> {
        self.run(ctx, |cx| B::directory_added(cx, added)).await
    }

    async fn instructions_loaded(
        &self,
        ctx: &SeamContext,
        files: &[InstructionFile],
        reason: LoadReason,
    ) {
        self.run(ctx, move |cx| B::instructions_loaded(cx, files, reason))
            .await;
    }

    async fn prompt_expansion(&self, ctx: &SeamContext, input: &ExpansionInput) -> PromptDecision {
        self.run(ctx, |cx| B::prompt_expansion(cx, input)).await
    }

    fn explain(&self, exec: &ToolExecution, review: Option<&PreToolVerdict>) -> Option<DecidedBy> {
        self.engine.dialect().explain(exec, review)
    }

    async fn permissions_updated(&self, ctx: &SeamContext, updates: &[PermissionUpdate]) {
        self.run(ctx, |cx| B::permissions_updated(cx, updates))
            .await;
    }

    async fn permission_denied(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        check_reason: &str,
    ) -> DeniedFollowUp {
        self.run(ctx, |cx| B::permission_denied(cx, exec, check_reason))
            .await
    }

    async fn batch_settled(&self, ctx: &SeamContext, batch: &[SettledCall]) -> Vec<ContextEntry> {
        self.run(ctx, |cx| B::batch_settled(cx, batch)).await
    }
}
