//! The plugin trait: one method per seam, each with a neutral default.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use dsh_model::ModelError;
use dsh_protocol::{Event, Message, ModelReply, ModelRequest, TurnEndReason};
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::{AgentDefinition, SubagentStartInput, SubagentStopInput};
use crate::{AgentStartDecision, AgentStartInput, ExpansionInput, InstructionFile, LoadReason};
use crate::{
    ApprovalAsk, ApprovalDecision, CallReview, CompactionDecision, CompactionInput,
    CompactionOutcome, ContextDecision, ContextEntry, ContinuationDecision, DeniedFollowUp,
    GuardVerdict, NextStepUpdate, PermissionUpdate, PostToolDecision, PreToolOutcome,
    PreToolVerdict, PromptDecision, ProposedCall, ProviderRequestDecision, RequestMeta, Screening,
    SeamContext, SessionEndReason, SessionStartSource, StepReport, StepStop, ToolExecution,
    ToolOutcome,
};
use crate::{ConfigChange, ConfigDecision, FileChange, SessionChange};
use crate::{
    CwdChange, DisplayDecision, DisplayInput, ModelSwitch, ModelSwitchDecision, SetupTrigger,
};
use crate::{DirectoryAddition, WorktreeCreation, WorktreeRemoval};
use crate::{ElicitationAnswer, ElicitationRequest, TaskEvent, TaskVerdict};

/// A prompt claimed for a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptInput {
    /// The text (possibly rewritten by an earlier listener).
    pub content: String,
    /// Who sent it (`user`, [`NOTIFICATION_SOURCE`], …).
    pub source: String,
}

/// The source of a turn nobody typed: a hook's message the front end
/// makes a turn of (a DirectoryAdded `systemMessage`). A dialect may frame
/// it for the model as a notification rather than the user's words.
pub const NOTIFICATION_SOURCE: &str = "notification";

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

/// What the turn-failed seam is told: the model request of `step` failed
/// and the turn closes `error` right after the listeners return.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnFailure {
    /// The turn.
    pub turn: u64,
    /// The step whose request failed.
    pub step: u64,
    /// The failure, with the provider's typed answer when there was one
    /// ([`ModelError::category`]).
    pub error: ModelError,
}

/// Why dsh is waiting for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotificationKind {
    /// An approval prompt is on screen.
    PermissionPrompt,
    /// The session is idle, waiting for input.
    Idle,
    /// The user answered an MCP server's elicitation (Claude Code's
    /// `elicitation_response`, after ElicitationResult).
    ElicitationResponse,
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

    /// Screens a proposed call before any plugin reviews it. Every plugin
    /// screens first; the first `Deny` rejects the call unreviewed (no
    /// `rewrite_input`, no pre-execute, no post-execute).
    async fn screen(&self, _ctx: &SeamContext, _call: &ProposedCall) -> Screening {
        Screening::Pass
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

    /// Approval seam: answers an `ask` (its reason and the permission
    /// changes it offers) before the user is asked. `review` is this
    /// plugin's own verdict for the call, as in `pre_execute`.
    async fn approve(
        &self,
        _ctx: &SeamContext,
        _exec: &ToolExecution,
        _ask: &ApprovalAsk,
        _review: Option<&PreToolVerdict>,
    ) -> ApprovalDecision {
        ApprovalDecision::Abstain
    }

    /// Permission changes an approval granted (PermissionRequest
    /// `updatedPermissions`, "allow for this session"): every plugin hears
    /// them, in registration order, before the call runs.
    async fn permissions_updated(&self, _ctx: &SeamContext, _updates: &[PermissionUpdate]) {}

    /// A call was denied by an automatic check (`PreToolDecision::AutoDeny`):
    /// Claude Code's PermissionDenied. Any listener answering `MayRetry`
    /// lets the model know it may try again.
    async fn permission_denied(
        &self,
        _ctx: &SeamContext,
        _exec: &ToolExecution,
        _check_reason: &str,
    ) -> DeniedFollowUp {
        DeniedFollowUp::Stand
    }

    /// Who decided, in this plugin's terms, when its screening or
    /// pre-execute settled `exec` (a deny, an ask, or an allow it is sure
    /// of): the rule, mode or hook behind it. `review` is this plugin's own
    /// verdict for the call. `None`: nothing to say (the pipeline then
    /// names the plugin).
    fn explain(
        &self,
        _exec: &ToolExecution,
        _review: Option<&PreToolVerdict>,
    ) -> Option<dsh_protocol::DecidedBy> {
        None
    }

    /// Guard: synchronous, after the whole pre-execute waterfall; deny or abstain.
    fn guard(&self, _ctx: &SeamContext, _exec: &ToolExecution) -> GuardVerdict {
        GuardVerdict::Abstain
    }

    /// A call that is going to run (the pre-execute waterfall, the
    /// approval and the guards let it through), right before the execute
    /// wrappers and dispatch; never for a call that is denied, nor in a dry
    /// run. Sets the request metadata the tool is called with (an MCP tool
    /// sends it as its request's `_meta`): listeners run in registration
    /// order, each handed what the one before returned (`meta`, `None` at
    /// first), and the last one's answer is sent. Cannot block. Default:
    /// `meta` unchanged.
    async fn before_dispatch(
        &self,
        _ctx: &SeamContext,
        _exec: &ToolExecution,
        meta: Option<RequestMeta>,
    ) -> Option<RequestMeta> {
        meta
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

    /// Observes a turn ended by a failed model request, before its
    /// `turn/end error`. Observers only: nothing they do changes the turn,
    /// and a listener that must not hold the session up (Claude Code's
    /// StopFailure hooks) starts its work without waiting for it.
    async fn turn_failed(&self, _ctx: &SeamContext, _failure: &TurnFailure) {}

    /// Seed 004 `context`: transforms the message list (system prompt
    /// first) before each model request. Listeners run in registration
    /// order, each seeing the list the previous one left; a list that breaks
    /// tool-call/result adjacency is refused (notice and `seam/note`).
    async fn context(&self, _ctx: &SeamContext, _messages: &[Message]) -> ContextDecision {
        ContextDecision::Keep
    }

    /// Seed 004 `before_provider_request`: inspects or replaces the
    /// outgoing request, after the context seam. A replacement is recorded
    /// (`seam/note` with the request sent).
    async fn before_provider_request(
        &self,
        _ctx: &SeamContext,
        _request: &ModelRequest,
    ) -> ProviderRequestDecision {
        ProviderRequestDecision::Keep
    }

    /// Seed 004 stop-after-turn (a dsh step): after every step, before the
    /// loop goes on; can end the turn or the session.
    async fn stop_after_step(&self, _ctx: &SeamContext, _step: &StepReport) -> StepStop {
        StepStop::Continue
    }

    /// Seed 004 prepare-next-turn (a dsh step): after every step that did
    /// not stop; sets the model or the system prompt from the next request on.
    async fn prepare_next_step(&self, _ctx: &SeamContext, _step: &StepReport) -> NextStepUpdate {
        NextStepUpdate::default()
    }

    /// Before the history is compacted (seed 004 `session_before_compact`):
    /// cancel it, add summary instructions, or supply the summary. Listeners
    /// run in registration order; the first `Cancel` ends the waterfall, the
    /// first `Summary` is used (later listeners still run and may cancel).
    async fn session_before_compact(
        &self,
        _ctx: &SeamContext,
        _input: &CompactionInput,
    ) -> CompactionDecision {
        CompactionDecision::proceed()
    }

    /// After the summary is in hand and before `compaction/completed` is
    /// recorded: this is the session-start seam with source `compact` (the
    /// bridges fire their SessionStart `compact` and PostCompact hooks here,
    /// each in its tool's order). Returned contexts join the compacted
    /// history right after the summary.
    async fn session_compacted(
        &self,
        _ctx: &SeamContext,
        _outcome: &CompactionOutcome,
    ) -> Vec<ContextEntry> {
        Vec::new()
    }

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

    // Lifecycle seams.

    /// The set-up run (`--init`, `--init-only`, `--maintenance`): once,
    /// before the instruction files are announced and before the
    /// session-start seam. Observation only.
    async fn setup(&self, _ctx: &SeamContext, _trigger: SetupTrigger) {}

    /// An assistant message's text is about to be shown (after it is
    /// recorded). The first `Replace` in registration order is shown instead;
    /// the history keeps the model's text either way.
    async fn message_display(&self, _ctx: &SeamContext, _input: &DisplayInput) -> DisplayDecision {
        DisplayDecision::Keep
    }

    /// The session's working directory moved (the bash tool ran `cd`):
    /// fired after the call's post-execute seam, with the new directory
    /// already in effect. Observation only.
    async fn cwd_changed(&self, _ctx: &SeamContext, _change: &CwdChange) {}

    /// A model switch (`/model`, a host's `set_model`) is about to happen,
    /// between turns. The first `Deny` in registration order refuses it.
    async fn before_model_switch(
        &self,
        _ctx: &SeamContext,
        _switch: &ModelSwitch,
    ) -> ModelSwitchDecision {
        ModelSwitchDecision::Allow
    }

    /// A model switch happened (after its `model/switched` is recorded).
    /// Observation only.
    async fn model_switched(&self, _ctx: &SeamContext, _switch: &ModelSwitch) {}

    /// Before a session starts in a worktree (`--worktree NAME`), in the
    /// original project: the first listener that handles it creates the
    /// worktree and says where it is.
    async fn worktree_create(&self, _ctx: &SeamContext, _name: &str) -> WorktreeCreation {
        WorktreeCreation::NotHandled
    }

    /// When a session that created a worktree through
    /// [`Plugin::worktree_create`] ends: the first listener that handles it
    /// removes the worktree.
    async fn worktree_remove(
        &self,
        _ctx: &SeamContext,
        _path: &std::path::Path,
    ) -> WorktreeRemoval {
        WorktreeRemoval::NotHandled
    }

    /// After a working directory was added mid-session (`/add-dir`).
    /// Returns texts that ask for a turn of their own (sent with
    /// [`NOTIFICATION_SOURCE`]), in configuration order. Default: none.
    async fn directory_added(&self, _ctx: &SeamContext, _added: &DirectoryAddition) -> Vec<String> {
        Vec::new()
    }
    /// What a session's watcher saw since it last looked: the tool pipeline
    /// asks every listener before and after each call's dispatch (before
    /// post-execute), so a change a tool made is reported while that call
    /// is still open. Only the watcher answers.
    fn session_changes(&self, _ctx: &SeamContext) -> Vec<SessionChange> {
        Vec::new()
    }

    /// A settings file changed during the session. The first `Keep` in
    /// registration order keeps the settings the session has; otherwise
    /// [`Plugin::config_applied`] follows.
    async fn config_change(&self, _ctx: &SeamContext, _change: &ConfigChange) -> ConfigDecision {
        ConfigDecision::Apply
    }

    /// A changed settings file is to be applied: each listener re-reads
    /// what it takes from it (rules, `env`).
    async fn config_applied(&self, _ctx: &SeamContext, _change: &ConfigChange) {}

    /// A watched file changed. Observation only.
    async fn file_changed(&self, _ctx: &SeamContext, _change: &FileChange) {}

    // Prompt-layer seams.

    /// Instruction files were loaded into the system prompt (before the
    /// session-start seam, and again after `/clear`). Observation only.
    async fn instructions_loaded(
        &self,
        _ctx: &SeamContext,
        _files: &[InstructionFile],
        _reason: LoadReason,
    ) {
    }

    /// A prompt that names a custom command is about to be replaced by its
    /// expansion (after prompt-submit allowed it). `Block` rejects the turn
    /// with no model request; `Allow`'s contexts follow the prompt; a
    /// rewrite is ignored (the expansion is the command's).
    async fn prompt_expansion(
        &self,
        _ctx: &SeamContext,
        _input: &ExpansionInput,
    ) -> PromptDecision {
        PromptDecision::allow()
    }

    /// The system-prompt seam (seed 004's `before_agent_start`): once per
    /// turn, before its first model request, a listener may replace the
    /// system prompt for this turn and add contexts after the prompt.
    async fn before_agent_start(
        &self,
        _ctx: &SeamContext,
        _input: &AgentStartInput,
    ) -> AgentStartDecision {
        AgentStartDecision::keep()
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

    /// An MCP server asks the user something: a listener may answer in the
    /// user's place (the first answer wins; nobody is asked then).
    async fn elicitation(
        &self,
        _ctx: &SeamContext,
        _request: &ElicitationRequest,
    ) -> Option<ElicitationAnswer> {
        None
    }

    /// The user's answer to an elicitation, before it goes back to the
    /// server: a listener may replace it (the first replacement wins).
    async fn elicitation_result(
        &self,
        _ctx: &SeamContext,
        _request: &ElicitationRequest,
        _answer: &ElicitationAnswer,
    ) -> Option<ElicitationAnswer> {
        None
    }

    /// A task tool created a task or marked one completed (Claude Code's
    /// TaskCreated / TaskCompleted). Plugins are asked in order; the first
    /// `Block` rolls the change back and the tool call fails with its
    /// feedback.
    async fn task_event(&self, _ctx: &SeamContext, _event: &TaskEvent) -> TaskVerdict {
        TaskVerdict::Allow
    }
}
