//! The Claude Code bridge as a [`Plugin`]: per seam it selects the matching
//! handlers (deduplicated on the command, as Claude Code does, then `if`
//! rules), builds the payload and hands the firing to the shared engine
//! (`dsh-hooks`), which records `hook/invoked`, runs the handlers in parallel
//! (cancelled by `ctx.cancel`) and reads each answer with this dialect's
//! interpreter; the bridge then merges the decisions in configuration order
//! (never completion order) and the engine records `hook/result` for each.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
use dsh_hook_runner::HookRunner;
use dsh_hooks::{BridgePlugin, Cx, Engine, Fire, Flow, Record, Request};
use dsh_protocol::{Event, EventBody, HookDecision};
use dsh_seams::{
    ApprovalAsk, ApprovalDecision, CallReview, ContextEntry, ContinuationDecision,
    ContinuationInput, DeniedFollowUp, Notification, PermissionUpdate, Plugin, PostToolDecision,
    PreToolVerdict, PromptDecision, PromptInput, ProposedCall, SeamContext, SessionEndReason,
    SessionStartSource, SettledCall, SubagentStartInput, SubagentStopInput, ToolExecution,
    ToolOutcome, TurnFailure,
};

use crate::config::ClaudeConfig;
use crate::dialect::{Claude, Firing, Selector};
use crate::envfile::EnvFileNames;
use crate::events::HookEvent;
use crate::payload::{self, Common};
use crate::rules::Sent;
use crate::transcript::Transcript;

mod bridged;
mod compact;
mod elicitation;
mod failure;
mod lifecycle;
mod prompting;
mod tasks;
mod tools;
mod turns;
mod worktree;
pub use worktree::NO_WORKTREE_PATH;
mod watch;

const NAME: &str = "claude";

impl ClaudeConfig {
    /// The bridge plugin running this configuration's hooks through `runner`.
    pub fn into_plugin(self, runner: HookRunner) -> Arc<dyn Plugin> {
        Arc::new(ClaudePlugin::new(self, runner))
    }
}

/// The Claude Code bridge plugin. Build it with [`ClaudeConfig::into_plugin`]
/// (or [`ClaudePlugin::new`] to keep the concrete type). The seams ported
/// to [`dsh_hooks::Bridge`] run through the generic [`BridgePlugin`]; the
/// others are still written out here over the same engine and state.
pub struct ClaudePlugin {
    bridge: BridgePlugin<Claude>,
}

/// What the bridge keeps for the session (never per call).
#[derive(Default)]
pub(crate) struct State {
    prompt_ids: HashMap<u64, String>,
    last_prompt_id: Option<String>,
    transcript: Option<Transcript>,
    /// StopFailure hooks were started and may still be running.
    stop_failure_started: bool,
    /// The mode an accepted `setMode` switched to (else the configured one).
    mode: Option<String>,
    /// `.claude/rules` files whose InstructionsLoaded waits for SessionStart.
    pending_rules: Vec<(dsh_seams::InstructionFile, dsh_seams::LoadReason)>,
    /// Sidechain transcripts of subagents, by agent id.
    agent_transcripts: HashMap<String, Transcript>,
    /// The settings `env` read again after an applied ConfigChange (else
    /// the configuration's).
    settings_env: Option<Vec<(String, String)>>,
}

/// One awaited run, read.
type Fired = dsh_hooks::Fired<Claude>;

impl Claude {
    /// The transcript file for `session_id`.
    pub(crate) fn transcript_path(&self, session_id: &str) -> PathBuf {
        self.config
            .discovery
            .transcript_dir
            .join(format!("{session_id}.jsonl"))
    }

    /// The merged settings `env`: as read again after an applied
    /// ConfigChange, else as configured.
    fn settings_env(&self, state: &State) -> Vec<(String, String)> {
        state
            .settings_env
            .clone()
            .unwrap_or_else(|| self.config.settings_env.clone())
    }

    fn ensure_session(&self, state: &mut State, ctx: &SeamContext) {
        if state.transcript.is_none() {
            state.transcript = Some(Transcript::new(
                self.transcript_path(&ctx.session.session_id),
                ctx.session.session_id.clone(),
                ctx.session.cwd.to_string_lossy().into_owned(),
            ));
        }
    }

    fn prompt_id(state: &mut State, ctx: &SeamContext) -> Option<String> {
        match ctx.turn {
            Some(turn) => {
                let id = state
                    .prompt_ids
                    .entry(turn)
                    .or_insert_with(|| prompt_id_for(&ctx.session.session_id, turn))
                    .clone();
                state.last_prompt_id = Some(id.clone());
                Some(id)
            }
            None => state.last_prompt_id.clone(),
        }
    }

    /// The fields every payload starts with (`prompt_id` on the events
    /// that carry it).
    fn common(&self, state: &mut State, ctx: &SeamContext, with_prompt: bool) -> Common {
        self.ensure_session(state, ctx);
        Common {
            session_id: ctx.session.session_id.clone(),
            transcript_path: self
                .transcript_path(&ctx.session.session_id)
                .to_string_lossy()
                .into_owned(),
            cwd: ctx.session.current_dir().to_string_lossy().into_owned(),
            prompt_id: if with_prompt {
                Self::prompt_id(state, ctx)
            } else {
                None
            },
            permission_mode: state
                .mode
                .clone()
                .unwrap_or_else(|| self.config.options.permission_mode.clone()),
            effort: self.config.options.effort.clone(),
            agent: ctx.agent.as_ref().map(|agent| payload::AgentIds {
                agent_id: agent.agent_id.clone(),
                agent_type: agent.agent_type.clone(),
            }),
        }
    }

    /// What `firing` is matched against and what its runs are started
    /// with. Inside a subagent the agent's own frontmatter hooks are
    /// candidates (and every payload names it: `Common::agent`).
    fn sent(
        &self,
        state: &State,
        ctx: &SeamContext,
        firing: &Firing<'_>,
        env_files: Option<&EnvFileNames>,
    ) -> (Selector, Sent) {
        let agent = ctx.agent.as_ref().map(|agent| agent.agent_type.as_str());
        let sent = Sent {
            json: firing.payload.clone(),
            tool_name: firing.tool_name.map(str::to_owned),
            source: firing.source.map(str::to_owned),
            prompt: firing.prompt.map(str::to_owned),
            call_id: firing.call_id.map(str::to_owned),
            settings_env: self.settings_env(state),
            env_files: env_files.cloned(),
        };
        (firing.selector(agent), sent)
    }

    /// `firing` as a bridge flow fires it.
    fn fire_of(cx: &Cx<'_, Self>, firing: &Firing<'_>) -> Fire<Self> {
        Self::fire_with(cx, firing, None)
    }

    /// `firing` as a bridge flow fires it, with each hook's
    /// `CLAUDE_ENV_FILE` named by `env_files`.
    fn fire_with(
        cx: &Cx<'_, Self>,
        firing: &Firing<'_>,
        env_files: Option<&EnvFileNames>,
    ) -> Fire<Self> {
        let (key, sent) = cx.bridge.sent(cx.state, cx.ctx, firing, env_files);
        let fire = Fire::new(firing.event, key, sent);
        match firing.call_id {
            Some(call_id) => fire.call(call_id),
            None => fire,
        }
    }
}

impl ClaudePlugin {
    /// The plugin for `config`, running hooks through `runner`.
    pub fn new(config: ClaudeConfig, runner: HookRunner) -> Self {
        ClaudePlugin {
            bridge: BridgePlugin::new(Claude { config }, runner),
        }
    }

    fn engine(&self) -> &Engine<Claude> {
        self.bridge.engine()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.bridge.state()
    }

    /// The configuration this plugin runs.
    pub fn config(&self) -> &ClaudeConfig {
        &self.bridge.bridge().config
    }

    /// The merged settings `env`: as read again after an applied
    /// ConfigChange, else as configured.
    pub fn settings_env(&self) -> Vec<(String, String)> {
        self.bridge.bridge().settings_env(&self.state())
    }

    /// The transcript file for `session_id`.
    pub fn transcript_path(&self, session_id: &str) -> PathBuf {
        self.bridge.bridge().transcript_path(session_id)
    }

    fn common(&self, ctx: &SeamContext, with_prompt: bool) -> Common {
        self.bridge
            .bridge()
            .common(&mut self.state(), ctx, with_prompt)
    }

    /// Runs one firing through the engine's dispatch: it selects the
    /// handlers (deduplicated, then `if` rules), records `hook/invoked` for
    /// each and runs them in parallel. `env_files` names each hook's
    /// `CLAUDE_ENV_FILE` on the events that set one. Results are recorded
    /// by the caller, after merging, with [`ClaudePlugin::record`].
    async fn fire(
        &self,
        ctx: &SeamContext,
        firing: &Firing<'_>,
        env_files: Option<&EnvFileNames>,
    ) -> Vec<Fired> {
        let (key, sent) = {
            let state = self.state();
            self.bridge.bridge().sent(&state, ctx, firing, env_files)
        };
        let request = Request {
            event: firing.event,
            subject: &key,
            payload: sent,
            call_id: firing.call_id,
            cancel: &ctx.cancel,
        };
        self.engine().dispatch(ctx, request).await
    }

    /// Records `hook/result` for every run in configuration order (with
    /// what `extra` adds to each decision) and shows the runs' notices.
    fn record(
        &self,
        ctx: &SeamContext,
        event: HookEvent,
        fired: &[Fired],
        extra: &dyn Fn(usize, &mut HookDecision),
    ) {
        self.engine().record(ctx, event, fired, extra);
    }

    /// Collects finished async hooks: their contexts for the model, their
    /// results for the log.
    fn harvest_async(&self, ctx: &SeamContext) -> Vec<ContextEntry> {
        let claude = self.bridge.bridge();
        self.engine()
            .harvest(ctx, |_, note, run| claude.harvest(ctx, note, run))
    }

    fn joined_contexts(fired: &[Fired], event: HookEvent) -> Vec<ContextEntry> {
        let texts: Vec<&str> = fired
            .iter()
            .flat_map(|f| f.reading.contexts.iter().map(String::as_str))
            .collect();
        if texts.is_empty() {
            return Vec::new();
        }
        let sources: Vec<String> = fired
            .iter()
            .filter(|f| !f.reading.contexts.is_empty())
            .map(|f| f.handler.command_text())
            .collect();
        vec![ContextEntry::new(
            texts.join("\n\n"),
            format!("claude:{event}:{}", sources.join(" + ")),
        )]
    }
}

#[async_trait]
impl Plugin for ClaudePlugin {
    fn name(&self) -> &str {
        NAME
    }

    fn agent_definitions(&self) -> Vec<dsh_seams::AgentDefinition> {
        self.config()
            .agents
            .iter()
            .map(|agent| agent.definition.clone())
            .collect()
    }

    async fn session_start(
        &self,
        ctx: &SeamContext,
        source: SessionStartSource,
    ) -> Vec<ContextEntry> {
        let contexts = self.on_session_start(ctx, source).await;
        self.fire_pending_rules(ctx).await;
        contexts
    }

    async fn setup(&self, ctx: &SeamContext, trigger: dsh_seams::SetupTrigger) {
        self.bridge.setup(ctx, trigger).await;
    }

    async fn message_display(
        &self,
        ctx: &SeamContext,
        input: &dsh_seams::DisplayInput,
    ) -> dsh_seams::DisplayDecision {
        self.bridge.message_display(ctx, input).await
    }

    async fn elicitation(
        &self,
        ctx: &SeamContext,
        request: &dsh_seams::ElicitationRequest,
    ) -> Option<dsh_seams::ElicitationAnswer> {
        self.bridge.elicitation(ctx, request).await
    }

    async fn elicitation_result(
        &self,
        ctx: &SeamContext,
        request: &dsh_seams::ElicitationRequest,
        answer: &dsh_seams::ElicitationAnswer,
    ) -> Option<dsh_seams::ElicitationAnswer> {
        self.bridge.elicitation_result(ctx, request, answer).await
    }

    async fn cwd_changed(&self, ctx: &SeamContext, change: &dsh_seams::CwdChange) {
        self.bridge.cwd_changed(ctx, change).await;
    }

    async fn worktree_create(&self, ctx: &SeamContext, name: &str) -> dsh_seams::WorktreeCreation {
        self.bridge.worktree_create(ctx, name).await
    }

    async fn worktree_remove(
        &self,
        ctx: &SeamContext,
        path: &std::path::Path,
    ) -> dsh_seams::WorktreeRemoval {
        self.bridge.worktree_remove(ctx, path).await
    }

    async fn directory_added(
        &self,
        ctx: &SeamContext,
        added: &dsh_seams::DirectoryAddition,
    ) -> Vec<String> {
        self.on_directory_added(ctx, added).await
    }

    async fn config_change(
        &self,
        ctx: &SeamContext,
        change: &dsh_seams::ConfigChange,
    ) -> dsh_seams::ConfigDecision {
        self.bridge.config_change(ctx, change).await
    }

    async fn config_applied(&self, ctx: &SeamContext, change: &dsh_seams::ConfigChange) {
        self.on_config_applied(ctx, change);
    }

    async fn file_changed(&self, ctx: &SeamContext, change: &dsh_seams::FileChange) {
        self.bridge.file_changed(ctx, change).await;
    }

    async fn before_model_switch(
        &self,
        ctx: &SeamContext,
        switch: &dsh_seams::ModelSwitch,
    ) -> dsh_seams::ModelSwitchDecision {
        self.bridge.before_model_switch(ctx, switch).await
    }

    async fn model_switched(&self, ctx: &SeamContext, switch: &dsh_seams::ModelSwitch) {
        self.bridge.model_switched(ctx, switch).await;
    }

    async fn instructions_loaded(
        &self,
        ctx: &SeamContext,
        files: &[dsh_seams::InstructionFile],
        reason: dsh_seams::LoadReason,
    ) {
        self.on_instructions_loaded(ctx, files, reason).await;
    }

    async fn prompt_expansion(
        &self,
        ctx: &SeamContext,
        input: &dsh_seams::ExpansionInput,
    ) -> PromptDecision {
        self.on_prompt_expansion(ctx, input).await
    }

    async fn prompt_submit(&self, ctx: &SeamContext, prompt: &PromptInput) -> PromptDecision {
        self.on_prompt_submit(ctx, prompt).await
    }

    async fn rewrite_input(&self, ctx: &SeamContext, call: &ProposedCall) -> CallReview {
        self.run_pre_tool_use(ctx, &call.call_id, &call.tool, &call.arguments)
            .await
    }

    async fn approve(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        ask: &ApprovalAsk,
        review: Option<&PreToolVerdict>,
    ) -> ApprovalDecision {
        self.on_approve(ctx, exec, ask, review).await
    }

    fn explain(
        &self,
        _exec: &ToolExecution,
        review: Option<&PreToolVerdict>,
    ) -> Option<dsh_protocol::DecidedBy> {
        // Only a PreToolUse deny or ask is this bridge's own decision; an
        // allow here is "no objection" (the permission model still decides).
        review
            .filter(|v| !matches!(v.outcome.decision, dsh_seams::PreToolDecision::Allow))
            .map(|v| {
                v.decided_by.clone().unwrap_or_else(|| {
                    dsh_protocol::DecidedBy::new(
                        dsh_protocol::DeciderKind::Hook,
                        "claude:PreToolUse",
                    )
                })
            })
    }

    async fn permissions_updated(&self, _ctx: &SeamContext, updates: &[PermissionUpdate]) {
        // Hooks are told the mode in effect: an accepted `setMode` changes
        // every later payload's `permission_mode`.
        for update in updates {
            if let PermissionUpdate::SetMode { mode, .. } = update {
                self.state().mode = Some(mode.clone());
            }
        }
    }

    async fn permission_denied(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        check_reason: &str,
    ) -> DeniedFollowUp {
        self.on_permission_denied(ctx, exec, check_reason).await
    }

    async fn post_execute(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        outcome: &ToolOutcome,
        duration: Duration,
    ) -> PostToolDecision {
        self.on_post_execute(ctx, exec, outcome, duration).await
    }

    async fn batch_settled(&self, ctx: &SeamContext, batch: &[SettledCall]) -> Vec<ContextEntry> {
        self.on_batch_settled(ctx, batch).await
    }

    async fn turn_continuation(
        &self,
        ctx: &SeamContext,
        input: &ContinuationInput,
    ) -> ContinuationDecision {
        self.on_turn_continuation(ctx, input).await
    }

    async fn subagent_start(
        &self,
        ctx: &SeamContext,
        input: &SubagentStartInput,
    ) -> Vec<ContextEntry> {
        self.bridge.subagent_start(ctx, input).await
    }

    async fn subagent_stop(
        &self,
        ctx: &SeamContext,
        input: &SubagentStopInput,
    ) -> ContinuationDecision {
        self.bridge.subagent_stop(ctx, input).await
    }

    async fn task_event(
        &self,
        ctx: &SeamContext,
        event: &dsh_seams::TaskEvent,
    ) -> dsh_seams::TaskVerdict {
        self.bridge.task_event(ctx, event).await
    }

    async fn session_end(&self, ctx: &SeamContext, reason: SessionEndReason) {
        let wire = match reason {
            SessionEndReason::Exit => "prompt_input_exit",
            SessionEndReason::Other => "other",
            SessionEndReason::Clear => "clear",
        };
        let common = self.common(ctx, true);
        let firing = Firing {
            subject: Some(wire),
            ..Firing::new(HookEvent::SessionEnd, &payload::session_end(&common, wire))
        };
        let fired = self.fire(ctx, &firing, None).await;
        self.record(ctx, firing.event, &fired, &|_, _| {});
        self.settle_stop_failure(ctx).await;
        // Async hooks still running are killed at teardown, as Claude Code does.
        self.engine().abort_pending();
    }

    async fn notification(&self, ctx: &SeamContext, notification: &Notification) {
        self.bridge.notification(ctx, notification).await;
    }

    async fn turn_failed(&self, ctx: &SeamContext, failure: &TurnFailure) {
        self.on_turn_failed(ctx, failure).await;
    }

    async fn session_before_compact(
        &self,
        ctx: &SeamContext,
        input: &dsh_seams::CompactionInput,
    ) -> dsh_seams::CompactionDecision {
        self.bridge.session_before_compact(ctx, input).await
    }

    async fn session_compacted(
        &self,
        ctx: &SeamContext,
        outcome: &dsh_seams::CompactionOutcome,
    ) -> Vec<ContextEntry> {
        self.on_compacted(ctx, outcome).await
    }

    fn on_event(&self, event: &Event) {
        let mut state = self.state();
        match &event.body {
            EventBody::SessionHeader {
                session_id, cwd, ..
            } => {
                if state.transcript.is_none() {
                    state.transcript = Some(Transcript::new(
                        self.transcript_path(session_id),
                        session_id.clone(),
                        cwd.clone(),
                    ));
                }
                return;
            }
            EventBody::TurnStart { turn } => {
                let session_id = state
                    .transcript
                    .as_ref()
                    .map(|transcript| transcript.session_id().to_owned())
                    .unwrap_or_default();
                let id = state
                    .prompt_ids
                    .entry(*turn)
                    .or_insert_with(|| prompt_id_for(&session_id, *turn))
                    .clone();
                state.last_prompt_id = Some(id);
                return;
            }
            EventBody::UserMessage { .. }
            | EventBody::PromptBlocked { .. }
            | EventBody::AssistantMessage { .. }
            | EventBody::ToolCall { .. }
            | EventBody::ToolResult { .. }
            | EventBody::ContextMessage { .. }
            | EventBody::SteeringMessage { .. }
            | EventBody::TurnEnd { .. }
            | EventBody::CompactionStarted { .. }
            | EventBody::CompactionCompleted { .. }
            | EventBody::CompactionFailed { .. }
            | EventBody::HookInvoked { .. }
            | EventBody::HookResult { .. }
            | EventBody::SeamNote { .. }
            | EventBody::SessionCleared { .. }
            | EventBody::ModelSwitched { .. } => {}
        }
        let prompt_id = state.last_prompt_id.clone();
        if let Some(agent_id) = &event.agent_id {
            // A subagent's events go to its sidechain transcript; its tool
            // responses were stashed on the session's.
            let response = match &event.body {
                EventBody::ToolResult { call_id, .. } => state
                    .transcript
                    .as_mut()
                    .and_then(|t| t.tool_responses.remove(call_id))
                    .map(|r| (call_id.clone(), r)),
                EventBody::SessionHeader { .. }
                | EventBody::TurnStart { .. }
                | EventBody::UserMessage { .. }
                | EventBody::PromptBlocked { .. }
                | EventBody::AssistantMessage { .. }
                | EventBody::ToolCall { .. }
                | EventBody::ContextMessage { .. }
                | EventBody::SteeringMessage { .. }
                | EventBody::TurnEnd { .. }
                | EventBody::CompactionStarted { .. }
                | EventBody::CompactionCompleted { .. }
                | EventBody::CompactionFailed { .. }
                | EventBody::HookInvoked { .. }
                | EventBody::HookResult { .. }
                | EventBody::SeamNote { .. }
                | EventBody::SessionCleared { .. }
                | EventBody::ModelSwitched { .. } => None,
            };
            let State {
                transcript,
                agent_transcripts,
                ..
            } = &mut *state;
            let Some(session) = transcript.as_ref() else {
                return;
            };
            let sidechain = agent_transcripts
                .entry(agent_id.clone())
                .or_insert_with(|| session.for_agent(agent_id));
            if let Some((call_id, response)) = response {
                sidechain.tool_responses.insert(call_id, response);
            }
            if let Err(error) = sidechain.append(event, prompt_id.as_deref()) {
                tracing::warn!(%error, "cannot append to a subagent's Claude-format transcript");
            }
            return;
        }
        if let Some(transcript) = state.transcript.as_mut()
            && let Err(error) = transcript.append(event, prompt_id.as_deref())
        {
            tracing::warn!(%error, "cannot append to the Claude-format transcript");
        }
    }
}

/// Fires `firing`, records its runs as read (no answer of theirs wins
/// over another's) and answers what `read` makes of them.
pub(super) fn answer<'a, Out: Send + 'a>(
    cx: &Cx<'_, Claude>,
    firing: &Firing<'_>,
    read: impl FnOnce(&[Fired]) -> Out + Send + 'a,
) -> Flow<'a, Claude, Out> {
    Flow::fire(Claude::fire_of(cx, firing), move |_, fired| {
        (Record::AsRead, Flow::Done(read(fired)))
    })
}

/// The prompt id of turn `turn`: derived from the session and the turn, so
/// a replay repeats it.
fn prompt_id_for(session_id: &str, turn: u64) -> String {
    dsh_seams::derived_id(&format!("{session_id}:prompt:{turn}"))
}
