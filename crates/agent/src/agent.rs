//! The loop.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, PoisonError};

use dsh_model::Model;
use dsh_protocol::{Event, EventBody, Message, ModelRequest, ToolCall, TurnEndReason};
use dsh_seams::{
    CancellationToken, ContextEntry, ContinuationDecision, ContinuationInput, Plugin,
    PromptDecision, PromptInput, SeamContext, SessionInfo, SessionSink, SessionStartSource,
    StepReport, StopRequest, StoppedPrompt, SubagentRunner, TurnControl, TurnFailure, TurnSummary,
    UserNotice,
};
use dsh_session::{LogError, SessionLog, derive_messages};
use dsh_tools::ToolRegistry;
use futures::FutureExt;

mod attachments;
mod hook_output;
mod lifecycle;
mod loop_seams;
pub(crate) mod sink;
pub use loop_seams::{MessageQueue, QueueMode, QueueModes};
use loop_seams::{PlannedRequest, QueueKind};
pub use sink::{EventCallback, NoticeCallback, Observers, TextCallback};
pub(crate) use sink::{LogSink, StreamForwarder};

/// The steering and follow-up queues of a session and their modes.
#[derive(Default)]
struct Queues {
    steering: MessageQueue,
    follow_up: MessageQueue,
    modes: QueueModes,
}

/// The default bound on model requests per turn.
pub const DEFAULT_MAX_STEPS: u64 = 50;

/// Why the loop itself failed (not a turn ending badly: that is a `turn/end`).
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The session log refused or failed an append.
    #[error(transparent)]
    Log(#[from] LogError),
    /// A fixture prompt names a command dsh cannot run (`/nosuch`).
    #[error("{0}")]
    Command(String),
}

/// A queued send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedPrompt {
    /// The prompt text.
    pub text: String,
    /// Who sent it.
    pub source: String,
}

/// How a turn ended, for the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnOutcome {
    /// The turn number.
    pub turn: u64,
    /// Why it ended.
    pub reason: TurnEndReason,
    /// The last assistant text, if any.
    pub final_text: Option<String>,
    /// The error or stop message, if any.
    pub message: Option<String>,
}

/// Everything an [`Agent`] is built from.
pub struct AgentParts {
    /// The open session log (new, with its header, or reopened).
    pub log: SessionLog,
    /// The session facts listeners see.
    pub session: SessionInfo,
    /// Tools and plugins.
    pub registry: ToolRegistry,
    /// The model.
    pub model: Arc<dyn Model>,
    /// The system prompt sent first in every request.
    pub system_prompt: String,
    /// Bound on model requests per turn.
    pub max_steps: u64,
    /// Presentation callbacks.
    pub observers: Observers,
}

/// A running session.
pub struct Agent {
    sink: Arc<LogSink>,
    session: Arc<SessionInfo>,
    registry: ToolRegistry,
    model: Arc<dyn Model>,
    system_prompt: String,
    /// Text after the whole system prompt (`--append-system-prompt`).
    system_prompt_suffix: Option<String>,
    max_steps: u64,
    inbox: VecDeque<QueuedPrompt>,
    started: bool,
    pending_session_contexts: Vec<ContextEntry>,
    /// What the person attached to the next prompt (`attachments`).
    prompt_attachments: Vec<ContextEntry>,
    /// A session-start listener's stop request (Codex SessionStart
    /// `continue: false`): the next turn ends `stopped` before its prompt is
    /// processed (no prompt-submit seam, no model request, no continuation).
    session_stop: Option<StopRequest>,
    session_cancel: CancellationToken,
    /// Seed-004 queues (steering, follow-up) and their delivery modes.
    queues: Queues,
    /// A stop-after-step listener ended the session: no further send runs.
    session_end_requested: Option<String>,
    /// When dsh compacts on its own (`crate::compaction`).
    auto_compact: crate::AutoCompact,
    /// Instruction files and custom commands (empty unless set).
    project: crate::ProjectContext,
    /// The open turn's system prompt, after the system-prompt seam.
    turn_system_prompt: Option<String>,
    /// The model `/model` chose (the log's last `model/switched`).
    model_override: Option<String>,
    /// Path-scoped rules already in this conversation.
    loaded_rules: Mutex<std::collections::HashSet<std::path::PathBuf>>,
    /// Runs the `agent` tool's nested loops (`subagent.rs`).
    subagents: Arc<dyn SubagentRunner>,
}

impl Agent {
    /// Builds an agent. Nothing runs until [`Agent::start`].
    pub fn new(parts: AgentParts) -> Self {
        let plugins = parts.registry.plugins().to_vec();
        // A reopened log keeps the model its last `/model` chose.
        let model_override = parts.log.events().iter().rev().find_map(|event| {
            if let EventBody::ModelSwitched { to, .. } = &event.body {
                Some(to.clone())
            } else {
                None
            }
        });
        let loaded_rules = Mutex::new(crate::prompt_layer::loaded_rules(parts.log.events()));
        // Ids of this session's records, derived so that a replay repeats
        // them; a resume opens on a longer log, so never reuses them.
        let ids = dsh_seams::IdSource::new(
            &parts.session.session_id,
            u64::try_from(parts.log.events().len()).unwrap_or(u64::MAX),
        );
        let sink = Arc::new(LogSink {
            ids,
            hook_output_dir: hook_output::spill_dir(parts.session.log_path.as_deref()),
            log: Mutex::new(parts.log),
            plugins,
            observers: parts.observers,
            record_errors: Mutex::new(Vec::new()),
        });
        let subagents = crate::subagent::runner(
            Arc::clone(&sink),
            Arc::clone(&parts.model),
            &parts.registry,
            parts.max_steps,
        );
        Agent {
            sink,
            subagents,
            session: Arc::new(parts.session),
            registry: parts.registry,
            model: parts.model,
            system_prompt: parts.system_prompt,
            system_prompt_suffix: None,
            max_steps: parts.max_steps,
            inbox: VecDeque::new(),
            started: false,
            pending_session_contexts: Vec::new(),
            prompt_attachments: Vec::new(),
            session_stop: None,
            session_cancel: CancellationToken::new(),
            queues: Queues::default(),
            session_end_requested: None,
            auto_compact: crate::AutoCompact::default(),
            project: crate::ProjectContext::default(),
            turn_system_prompt: None,
            model_override,
            loaded_rules,
        }
    }

    /// Sets when dsh compacts automatically (default: 85 % of a 128K window).
    pub fn set_auto_compact(&mut self, auto_compact: crate::AutoCompact) {
        self.auto_compact = auto_compact;
    }

    /// Sets the project's instruction files (they join the system prompt)
    /// and custom commands. Call before [`Agent::start`].
    pub fn set_project_context(&mut self, project: crate::ProjectContext) {
        self.project = project;
    }

    /// The project's instruction files and custom commands.
    pub fn project_context(&self) -> &crate::ProjectContext {
        &self.project
    }

    /// The system prompt with the project's instructions.
    pub fn system_prompt(&self) -> String {
        let prompt = self.project.instructions.system_prompt(&self.system_prompt);
        match &self.system_prompt_suffix {
            Some(suffix) => format!("{prompt}\n\n{suffix}"),
            None => prompt,
        }
    }

    /// Replaces dsh's base system prompt (Claude Code's `--system-prompt`);
    /// the project's instructions still follow it.
    pub fn replace_system_prompt(&mut self, base: String) {
        self.system_prompt = base;
    }

    /// Puts `text` at the end of the system prompt, after the project's
    /// instructions (Claude Code's `--append-system-prompt`).
    pub fn append_system_prompt(&mut self, text: String) {
        self.system_prompt_suffix = Some(text);
    }

    /// The names of the tools on offer to the model (dsh's names).
    pub fn tool_names(&self) -> Vec<String> {
        self.registry
            .specs()
            .into_iter()
            .map(|spec| spec.name)
            .collect()
    }

    /// Offers one more tool from the next request on (the tools of a
    /// Claude Agent SDK application's in-process MCP servers).
    pub fn register_tool(&mut self, tool: Arc<dyn dsh_tools::Tool>) {
        self.registry.register_tool(tool);
    }

    /// A copy of every event so far.
    pub fn events(&self) -> Vec<Event> {
        self.sink.with_log(|log| log.events().to_vec())
    }

    /// Records that plugins tried and the log refused.
    pub fn record_errors(&self) -> Vec<String> {
        self.sink
            .record_errors
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The session facts.
    pub fn session(&self) -> &Arc<SessionInfo> {
        &self.session
    }

    /// Cancelled when the whole session is torn down; cancels any turn.
    pub fn session_cancel(&self) -> CancellationToken {
        self.session_cancel.clone()
    }

    fn context(
        &self,
        turn: Option<u64>,
        cancel: CancellationToken,
        control: TurnControl,
    ) -> SeamContext {
        SeamContext {
            session: Arc::clone(&self.session),
            turn,
            cancel,
            sink: self.sink.clone(),
            control,
            agent: None,
            subagents: Some(Arc::clone(&self.subagents)),
        }
    }

    pub(crate) fn append(&self, body: EventBody) -> Result<Event, AgentError> {
        Ok(self.sink.append(body)?)
    }

    /// The system prompt requests of the open turn carry (after the
    /// system-prompt seam), else the session's with its instructions.
    pub(crate) fn request_system_prompt(&self) -> String {
        self.turn_system_prompt
            .clone()
            .unwrap_or_else(|| self.system_prompt())
    }

    /// The model `/model` chose, which requests name (else the provider's).
    pub(crate) fn request_model(&self) -> Option<String> {
        self.model_override.clone()
    }

    pub(crate) fn plugins(&self) -> &[Arc<dyn Plugin>] {
        self.registry.plugins()
    }

    pub(crate) fn tool_specs(&self) -> Vec<dsh_protocol::ToolSpec> {
        self.registry.specs()
    }

    pub(crate) fn model(&self) -> &Arc<dyn Model> {
        &self.model
    }

    pub(crate) fn max_steps(&self) -> u64 {
        self.max_steps
    }

    pub(crate) fn auto_compact_limit(&self) -> Option<u64> {
        self.auto_compact.limit()
    }

    /// The estimated size of the next request (without copying the log).
    pub(crate) fn estimated_tokens(&self) -> u64 {
        let system_prompt = self.request_system_prompt();
        self.sink
            .with_log(|log| crate::estimate_tokens(log.events(), &system_prompt))
    }

    /// Queues a send.
    pub fn enqueue(&mut self, send: QueuedPrompt) {
        self.inbox.push_back(send);
    }

    /// Runs every queued send, one turn each, in order.
    pub async fn run_pending(
        &mut self,
        cancel: &CancellationToken,
    ) -> Result<Vec<TurnOutcome>, AgentError> {
        let mut outcomes = Vec::new();
        while self.session_end_requested.is_none()
            && let Some(send) = self.inbox.pop_front()
        {
            // Built-in commands (`/clear`, `/model`, `/compact`) and unknown
            // `/name`s are not turns (commands.rs).
            if let Some(command) = crate::commands::parse(&send.text, &self.project.commands)
                && self.run_builtin(command).await?
            {
                continue;
            }
            outcomes.push(self.run_turn(send, cancel.child_token()).await?);
        }
        Ok(outcomes)
    }

    /// Runs a built-in command (`/clear`, `/model`, `/compact`) or reports
    /// an invalid one to the user. Returns whether the send was handled
    /// (`false` for a custom command or `/compact`, which run as turns).
    pub async fn run_builtin(
        &mut self,
        command: crate::commands::PromptCommand,
    ) -> Result<bool, AgentError> {
        use crate::commands::PromptCommand;
        match command {
            PromptCommand::Custom(_) => Ok(false),
            PromptCommand::Invalid(message) => {
                self.sink.tell_user(UserNotice {
                    source: "dsh".to_owned(),
                    text: message,
                    level: dsh_seams::NoticeLevel::Warning,
                });
                Ok(true)
            }
            // `/compact` runs as its own turn (one summary request, no
            // prompt policy): `run_turn` hands it to `crate::compaction`.
            PromptCommand::Compact(_) => Ok(false),
            PromptCommand::Clear => {
                self.clear().await?;
                Ok(true)
            }
            PromptCommand::Model(name) => {
                self.switch_model(&name)?;
                Ok(true)
            }
        }
    }

    /// Runs one claimed send as one turn. When the log fails mid-turn (a
    /// full disk, an I/O error, an event it refuses) the turn is closed
    /// `error` with what is already recorded kept, so nothing escapes the
    /// turn; only when even that cannot be written is the error returned.
    pub async fn run_turn(
        &mut self,
        send: QueuedPrompt,
        cancel: CancellationToken,
    ) -> Result<TurnOutcome, AgentError> {
        match self.run_turn_inner(send, cancel).await {
            Ok(outcome) => Ok(outcome),
            Err(error) => self.close_failed_turn(error),
        }
    }

    /// Closes the open turn after `error`: results for calls that never got
    /// one, then `turn/end` `error` naming the failure.
    fn close_failed_turn(&self, error: AgentError) -> Result<TurnOutcome, AgentError> {
        let (open_turn, uncalled, unresolved, last_text) = self.sink.with_log(|log| {
            let last_text = log
                .events()
                .iter()
                .rev()
                .find_map(|event| match &event.body {
                    EventBody::AssistantMessage { content, .. } => Some(content.clone()),
                    EventBody::TurnStart { .. } => Some(String::new()),
                    EventBody::SessionHeader { .. }
                    | EventBody::UserMessage { .. }
                    | EventBody::PromptBlocked { .. }
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
                    | EventBody::ModelSwitched { .. } => None,
                });
            (
                log.open_turn(),
                log.uncalled(),
                log.unresolved_calls(),
                last_text.filter(|text| !text.is_empty()),
            )
        });
        let Some(turn) = open_turn else {
            return Err(error);
        };
        let message = format!("the session log failed: {error}");
        self.sink.tell_user(UserNotice {
            source: "dsh".to_owned(),
            text: format!("turn {turn} ends with an error: {message}"),
            level: dsh_seams::NoticeLevel::Warning,
        });
        let closed = (|| {
            self.close_open_calls(
                turn,
                uncalled,
                unresolved,
                "unrecorded",
                "This call's result could not be recorded: the session log failed.",
            )?;
            self.append(EventBody::TurnEnd {
                turn,
                reason: TurnEndReason::Error,
                message: Some(message.clone()),
            })
        })();
        match closed {
            Ok(_) => Ok(TurnOutcome {
                turn,
                reason: TurnEndReason::Error,
                final_text: last_text,
                message: Some(message),
            }),
            // The log cannot take even the close: report the first failure.
            Err(_) => Err(error),
        }
    }

    async fn run_turn_inner(
        &mut self,
        send: QueuedPrompt,
        cancel: CancellationToken,
    ) -> Result<TurnOutcome, AgentError> {
        // Taken now, so a prompt the seam blocks drops them.
        let attachments = self.take_prompt_attachments();
        if !self.started {
            self.start(SessionStartSource::Startup).await;
        }
        let turn = self.sink.with_log(|log| log.last_turn()) + 1;
        // The turn opens before prompt policy, so a veto is a durable,
        // zero-step `rejected` turn.
        self.append(EventBody::TurnStart { turn })?;
        self.turn_system_prompt = None;
        let control = TurnControl::default();
        let ctx = self.context(Some(turn), cancel.clone(), control.clone());
        let mut summary = TurnSummary {
            turn,
            reason: TurnEndReason::Completed,
            prompt: send.text.clone(),
            last_assistant_message: None,
        };

        // Codex 0.169 (OBSERVED.md, `session_continue_false`): a SessionStart
        // `continue: false` ends the first turn before its prompt is looked
        // at: no UserPromptSubmit, no model request, no Stop.
        if let Some(stop) = self.session_stop.take() {
            return self
                .finish(&ctx, summary, TurnEndReason::Stopped, Some(stop.reason))
                .await;
        }

        // `/compact [instructions]` is handled as the terminal handles it: no
        // prompt policy, no user message, one summary request (compaction).
        if let Some(instructions) = crate::parse_compact_command(&send.text) {
            let (reason, message) = self.manual_compact(&ctx, turn, instructions).await?;
            return self.finish(&ctx, summary, reason, message).await;
        }

        let mut content = send.text.clone();
        let mut prompt_contexts = Vec::new();
        for plugin in self.registry.plugins() {
            let input = PromptInput {
                content: content.clone(),
                source: send.source.clone(),
            };
            let decision = AssertUnwindSafe(plugin.prompt_submit(&ctx, &input))
                .catch_unwind()
                .await
                .unwrap_or_else(|_| PromptDecision::Block {
                    reason: format!("prompt-submit listener `{}` failed", plugin.name()),
                });
            match decision {
                PromptDecision::Allow { rewrite, contexts } => {
                    if let Some(rewrite) = rewrite {
                        content = rewrite;
                    }
                    prompt_contexts.extend(contexts);
                }
                PromptDecision::Block { reason } => {
                    self.append(EventBody::PromptBlocked {
                        turn,
                        content: send.text.clone(),
                        source: send.source.clone(),
                        reason: reason.clone(),
                    })?;
                    return self
                        .finish(&ctx, summary, TurnEndReason::Rejected, Some(reason))
                        .await;
                }
                PromptDecision::Stop { reason, kept } => {
                    self.keep_stopped_prompt(turn, &send, &content, &kept)?;
                    return self
                        .finish(&ctx, summary, TurnEndReason::Stopped, Some(reason))
                        .await;
                }
            }
        }
        // A custom command: UserPromptSubmit saw the prompt as typed; the
        // expansion seam now sees the command, and the model its text.
        match crate::prompt_layer::expand(
            self.registry.plugins(),
            &ctx,
            &content,
            &self.project.commands,
        )
        .await
        {
            crate::prompt_layer::Expansion::Unchanged => {}
            crate::prompt_layer::Expansion::Expanded {
                content: expanded,
                contexts,
            } => {
                content = expanded;
                prompt_contexts.extend(contexts);
            }
            crate::prompt_layer::Expansion::Blocked(reason) => {
                self.append(EventBody::PromptBlocked {
                    turn,
                    content: send.text.clone(),
                    source: send.source.clone(),
                    reason: reason.clone(),
                })?;
                return self
                    .finish(&ctx, summary, TurnEndReason::Rejected, Some(reason))
                    .await;
            }
            crate::prompt_layer::Expansion::Stopped(reason, kept) => {
                self.keep_stopped_prompt(turn, &send, &content, &kept)?;
                return self
                    .finish(&ctx, summary, TurnEndReason::Stopped, Some(reason))
                    .await;
            }
        }
        let (turn_prompt, start_contexts) = crate::prompt_layer::agent_start(
            self.registry.plugins(),
            &ctx,
            &content,
            &self.system_prompt(),
            &self.project.instructions,
        )
        .await;
        self.turn_system_prompt = Some(turn_prompt);
        prompt_contexts.extend(start_contexts);
        self.append(EventBody::UserMessage {
            turn,
            content: content.clone(),
            source: send.source.clone(),
            original_content: (content != send.text).then(|| send.text.clone()),
        })?;
        let session_contexts = std::mem::take(&mut self.pending_session_contexts);
        self.append_contexts(
            turn,
            session_contexts
                .into_iter()
                .chain(attachments)
                .chain(prompt_contexts),
        )?;

        let mut steering: VecDeque<(String, String)> = VecDeque::new();
        let mut steering_contexts: Vec<ContextEntry> = Vec::new();
        let mut forced_continuations = 0u32;
        let mut step = 0u64;
        // One failed automatic compaction is enough for a turn: the next
        // requests go out uncompacted rather than retrying before each.
        let mut auto_compact_failed = false;
        loop {
            // Top-of-loop drain: a forced continuation's reason is recorded
            // as steering for the next step of the same turn.
            while let Some((content, source)) = steering.pop_front() {
                self.append(EventBody::SteeringMessage {
                    turn,
                    content,
                    source,
                })?;
            }
            self.append_contexts(turn, steering_contexts.drain(..))?;
            self.deliver_queued(turn, QueueKind::Steering)?;
            if cancel.is_cancelled() {
                return self
                    .finish(&ctx, summary, TurnEndReason::Interrupted, None)
                    .await;
            }
            if step >= self.max_steps {
                let message = format!(
                    "the turn reached its bound of {} model requests",
                    self.max_steps
                );
                return self
                    .finish(&ctx, summary, TurnEndReason::MaxSteps, Some(message))
                    .await;
            }
            if let Some((reason, message)) = self
                .auto_compact_before_request(&ctx, turn, &mut step, &mut auto_compact_failed)
                .await?
            {
                return self.finish(&ctx, summary, reason, message).await;
            }
            step += 1;
            let result = match self.request_for_step(&ctx, turn, step).await? {
                PlannedRequest::Send(request) => {
                    let forwarder = StreamForwarder {
                        on_text: self.sink.observers.on_text.clone(),
                        on_notice: self.sink.observers.on_notice.clone(),
                    };
                    let Some(result) = crate::step::complete(
                        &self.registry,
                        &ctx,
                        self.model.as_ref(),
                        &request,
                        forwarder,
                    )
                    .await
                    else {
                        return self
                            .finish(&ctx, summary, TurnEndReason::Interrupted, None)
                            .await;
                    };
                    result
                }
                PlannedRequest::Blocked(reason) => {
                    return self
                        .finish(&ctx, summary, TurnEndReason::Stopped, Some(reason))
                        .await;
                }
                // Nothing was sent, so the request observers are not told.
                PlannedRequest::Answered(reply) => Ok(reply),
            };
            let reply = match result {
                Ok(reply) => reply,
                Err(error) => {
                    if !error.partial_text.is_empty() {
                        self.append(EventBody::AssistantMessage {
                            turn,
                            step,
                            content: error.partial_text.clone(),
                            tool_calls: Vec::new(),
                            usage: None,
                        })?;
                        summary.last_assistant_message = Some(error.partial_text.clone());
                    }
                    let failure = TurnFailure {
                        turn,
                        step,
                        error: error.clone(),
                    };
                    for plugin in self.registry.plugins() {
                        let _ = AssertUnwindSafe(plugin.turn_failed(&ctx, &failure))
                            .catch_unwind()
                            .await;
                    }
                    return self
                        .finish(&ctx, summary, TurnEndReason::Error, Some(error.message))
                        .await;
                }
            };
            let (tool_calls, renamed) = unique_call_ids(&reply.tool_calls);
            for (new_id, original) in &renamed {
                self.sink.tell_user(UserNotice {
                    source: "dsh".to_owned(),
                    text: format!(
                        "the model repeated tool call id `{original}` in one message; the repeat runs as `{new_id}`"
                    ),
                    level: dsh_seams::NoticeLevel::Warning,
                });
            }
            self.append(EventBody::AssistantMessage {
                turn,
                step,
                content: reply.text.clone(),
                tool_calls: tool_calls.clone(),
                usage: reply.usage,
            })?;
            summary.last_assistant_message = Some(reply.text.clone());

            if reply.tool_calls.is_empty() {
                if let Some(stop) = control.stop_requested() {
                    return self
                        .finish(&ctx, summary, TurnEndReason::Stopped, Some(stop.reason))
                        .await;
                }
                let report = StepReport {
                    turn,
                    step,
                    assistant_text: reply.text.clone(),
                    tool_call_ids: Vec::new(),
                };
                if let Some(reason) = self.after_step(&ctx, &report).await? {
                    return self
                        .finish(&ctx, summary, TurnEndReason::Stopped, Some(reason))
                        .await;
                }
                let input = ContinuationInput {
                    turn,
                    step,
                    last_assistant_message: reply.text.clone(),
                    forced_continuations,
                };
                match self.continuation(&ctx, &input).await {
                    ContinuationDecision::Stop => {
                        // Seed 004: queued steering, then follow-ups, keep
                        // the turn going instead of ending it.
                        if !self.queues.steering.is_empty()
                            || self.deliver_queued(turn, QueueKind::FollowUp)?
                        {
                            continue;
                        }
                        return self
                            .finish(&ctx, summary, TurnEndReason::Completed, None)
                            .await;
                    }
                    ContinuationDecision::Halt { reason } => {
                        return self
                            .finish(&ctx, summary, TurnEndReason::Stopped, Some(reason))
                            .await;
                    }
                    ContinuationDecision::Continue {
                        reason,
                        source,
                        contexts,
                    } => {
                        forced_continuations += 1;
                        if let Some(reason) = reason {
                            steering.push_back((reason, source));
                        }
                        steering_contexts.extend(contexts);
                        continue;
                    }
                }
            }

            self.run_batch(&ctx, turn, &tool_calls, &renamed).await?;
            if cancel.is_cancelled() {
                return self
                    .finish(&ctx, summary, TurnEndReason::Interrupted, None)
                    .await;
            }
            if let Some(stop) = control.stop_requested() {
                return self
                    .finish(&ctx, summary, TurnEndReason::Stopped, Some(stop.reason))
                    .await;
            }
            let report = StepReport {
                turn,
                step,
                assistant_text: reply.text.clone(),
                tool_call_ids: tool_calls.iter().map(|call| call.id.clone()).collect(),
            };
            if let Some(reason) = self.after_step(&ctx, &report).await? {
                return self
                    .finish(&ctx, summary, TurnEndReason::Stopped, Some(reason))
                    .await;
            }
        }
    }

    async fn continuation(
        &self,
        ctx: &SeamContext,
        input: &ContinuationInput,
    ) -> ContinuationDecision {
        crate::step::decide_continuation(self.registry.plugins(), |plugin| {
            plugin.turn_continuation(ctx, input)
        })
        .await
    }

    /// The step's tool batch (see [`crate::step::run_batch`]); the session
    /// loop puts path-scoped rules first in the batch's context FIFO.
    async fn run_batch(
        &self,
        ctx: &SeamContext,
        turn: u64,
        calls: &[ToolCall],
        renamed: &BTreeMap<String, String>,
    ) -> Result<(), AgentError> {
        let append = |body| self.append(body).map(|_| ());
        let ran =
            crate::step::run_batch(&self.registry, ctx, turn, calls, renamed, &append).await?;
        let mut fifo = ran.fifo;
        fifo.extend(
            crate::prompt_layer::scoped_rules(
                self.registry.plugins(),
                ctx,
                &self.project.instructions,
                &ran.settled,
                &self.loaded_rules,
            )
            .await,
        );
        let fifo = crate::step::settle_batch(&self.registry, ctx, &ran.settled, fifo).await;
        self.append_contexts(turn, fifo)
    }

    /// Records a prompt a listener stopped before any model request: the
    /// prompt, and for a dialect that keeps it, the note saying why and the
    /// assistant's reply, so that the next turn's model sees why no answer
    /// came. The reply is step 0: no model request produced it.
    fn keep_stopped_prompt(
        &self,
        turn: u64,
        send: &QueuedPrompt,
        content: &str,
        kept: &StoppedPrompt,
    ) -> Result<(), AgentError> {
        self.append(EventBody::UserMessage {
            turn,
            content: content.to_owned(),
            source: send.source.clone(),
            original_content: (content != send.text).then(|| send.text.clone()),
        })?;
        match kept {
            StoppedPrompt::PromptOnly => {}
            StoppedPrompt::WithExchange {
                note,
                reply,
                source,
            } => {
                self.append(EventBody::SteeringMessage {
                    turn,
                    content: note.clone(),
                    source: source.clone(),
                })?;
                self.append(EventBody::AssistantMessage {
                    turn,
                    step: 0,
                    content: reply.clone(),
                    tool_calls: Vec::new(),
                    usage: None,
                })?;
            }
        }
        Ok(())
    }

    fn append_contexts(
        &self,
        turn: u64,
        contexts: impl IntoIterator<Item = ContextEntry>,
    ) -> Result<(), AgentError> {
        crate::step::append_contexts(&|body| self.append(body).map(|_| ()), turn, contexts)
    }

    fn build_request(&self, turn: u64, step: u64) -> ModelRequest {
        let mut messages = vec![Message::System {
            content: self.request_system_prompt(),
        }];
        messages.extend(self.sink.with_log(|log| derive_messages(log.events())));
        ModelRequest {
            turn,
            step,
            messages,
            tools: self.registry.specs(),
            model: self.model_override.clone(),
        }
    }

    async fn finish(
        &self,
        ctx: &SeamContext,
        mut summary: TurnSummary,
        reason: TurnEndReason,
        message: Option<String>,
    ) -> Result<TurnOutcome, AgentError> {
        // Injections made during execution still land before the turn closes.
        if let Some(turn) = ctx.turn {
            self.append_contexts(turn, ctx.control.take_injected())?;
        }
        self.append(EventBody::TurnEnd {
            turn: summary.turn,
            reason,
            message: message.clone(),
        })?;
        summary.reason = reason;
        for plugin in self.registry.plugins() {
            let _ = AssertUnwindSafe(plugin.turn_end(ctx, &summary))
                .catch_unwind()
                .await;
        }
        Ok(TurnOutcome {
            turn: summary.turn,
            reason,
            final_text: summary.last_assistant_message,
            message,
        })
    }
}

/// The calls with every id unique: a repeated id gets the first free
/// `~N` suffix (`call_1`, `call_1~2`). Returns the calls and, for each
/// renamed one, its new id mapped to the id the provider sent.
fn unique_call_ids(calls: &[ToolCall]) -> (Vec<ToolCall>, BTreeMap<String, String>) {
    let mut taken: HashSet<String> = calls.iter().map(|call| call.id.clone()).collect();
    let mut seen = HashSet::new();
    let mut renamed = BTreeMap::new();
    let calls = calls
        .iter()
        .map(|call| {
            let mut call = call.clone();
            if !seen.insert(call.id.clone()) {
                let mut n = 2u64;
                let new_id = loop {
                    let candidate = format!("{}~{n}", call.id);
                    if !taken.contains(&candidate) {
                        break candidate;
                    }
                    n += 1;
                };
                taken.insert(new_id.clone());
                seen.insert(new_id.clone());
                renamed.insert(new_id.clone(), std::mem::replace(&mut call.id, new_id));
            }
            call
        })
        .collect();
    (calls, renamed)
}
