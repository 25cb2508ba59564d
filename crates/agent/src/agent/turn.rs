//! One turn of the loop: prompt policy, the model step, the tool batch,
//! continuation and the turn's end, and closing a turn whose log failed.
//! The agent's state and its public set-up live in the parent module.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::panic::AssertUnwindSafe;

use dsh_protocol::{
    AssistantMessageEvent, EventBody, Message, ModelReply, ModelRequest, PromptBlockedEvent,
    SteeringMessageEvent, ToolCall, TurnEndEvent, TurnEndReason, TurnStartEvent, UserMessageEvent,
};
use dsh_seams::{
    CancellationToken, ContextEntry, ContinuationDecision, ContinuationInput, PromptDecision,
    PromptInput, SeamContext, SessionSink, SessionStartSource, StepReport, StoppedPrompt,
    TurnControl, TurnFailure, TurnSummary, UserNotice,
};
use dsh_session::derive_messages;
use futures::FutureExt;

use super::loop_seams::{PlannedRequest, QueueKind};
use super::sink::StreamForwarder;
use super::{Agent, AgentError, QueuedPrompt, TurnOutcome};

impl Agent {
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
                    EventBody::AssistantMessage(AssistantMessageEvent { content, .. }) => {
                        Some(content.clone())
                    }
                    EventBody::TurnStart(_) => Some(String::new()),
                    EventBody::SessionHeader(_)
                    | EventBody::UserMessage(_)
                    | EventBody::PromptBlocked(_)
                    | EventBody::ToolCall(_)
                    | EventBody::ToolResult(_)
                    | EventBody::ContextMessage(_)
                    | EventBody::SteeringMessage(_)
                    | EventBody::TurnEnd(_)
                    | EventBody::CompactionStarted(_)
                    | EventBody::CompactionCompleted(_)
                    | EventBody::CompactionFailed(_)
                    | EventBody::HookInvoked(_)
                    | EventBody::HookResult(_)
                    | EventBody::SeamNote(_)
                    | EventBody::SessionCleared { .. }
                    | EventBody::ModelSwitched(_) => None,
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
            self.append(EventBody::TurnEnd(TurnEndEvent {
                turn,
                reason: TurnEndReason::Error,
                message: Some(message.clone()),
            }))
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
        self.append(EventBody::TurnStart(TurnStartEvent { turn }))?;
        self.turn_system_prompt = None;
        let control = TurnControl::default();
        let ctx = self.context(Some(turn), cancel.clone(), control.clone());
        // What changed on disk since the last tool call (settings files,
        // watched files) is reported before the prompt is looked at.
        self.registry.fire_session_changes(&ctx).await;
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

        match self.admit_prompt(&ctx, turn, &send, attachments).await? {
            Admission::Admitted => {}
            Admission::Ended(reason, message) => {
                return self.finish(&ctx, summary, reason, message).await;
            }
        }
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
            self.deliver_steering(turn, &mut steering, &mut steering_contexts)?;
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
            let reply = match self.request_step(&ctx, turn, step, &mut summary).await? {
                StepReply::Reply(reply) => reply,
                StepReply::Ended(reason, message) => {
                    return self.finish(&ctx, summary, reason, message).await;
                }
            };
            let (tool_calls, renamed) = unique_call_ids(&reply.tool_calls);
            self.warn_renamed_calls(&renamed);
            self.append(EventBody::AssistantMessage(AssistantMessageEvent {
                turn,
                step,
                content: reply.text.clone(),
                tool_calls: tool_calls.clone(),
                usage: reply.usage,
                thinking: reply.thinking.clone(),
            }))?;
            summary.last_assistant_message = Some(reply.text.clone());
            self.last_response = Some((std::time::Instant::now(), reply.usage));
            self.display(&ctx, turn, step, &reply.text).await?;

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
                        // A listener that asked for a fresh history (Gemini's
                        // AfterAgent `clearContext`): the continuation starts
                        // the conversation again.
                        if control.take_clear_history() {
                            self.append(EventBody::SessionCleared {})?;
                        }
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

    /// Logs what steers the next step: a forced continuation's reasons,
    /// their contexts, then the queued steering messages.
    fn deliver_steering(
        &mut self,
        turn: u64,
        steering: &mut VecDeque<(String, String)>,
        contexts: &mut Vec<ContextEntry>,
    ) -> Result<(), AgentError> {
        while let Some((content, source)) = steering.pop_front() {
            self.append(EventBody::SteeringMessage(SteeringMessageEvent {
                turn,
                content,
                source,
            }))?;
        }
        self.append_contexts(turn, contexts.drain(..))?;
        self.deliver_queued(turn, QueueKind::Steering)?;
        Ok(())
    }

    /// Tells the user about call ids the model repeated in one message.
    fn warn_renamed_calls(&self, renamed: &BTreeMap<String, String>) {
        for (new_id, original) in renamed {
            self.sink.tell_user(UserNotice {
                source: "dsh".to_owned(),
                text: format!(
                    "the model repeated tool call id `{original}` in one message; the repeat runs as `{new_id}`"
                ),
                level: dsh_seams::NoticeLevel::Warning,
            });
        }
    }

    /// Prompt policy for one turn: the prompt-submit listeners, a custom
    /// command's expansion, the agent-start seam; then the user message and
    /// its contexts are logged. A veto or stop ends the turn before any
    /// model request.
    async fn admit_prompt(
        &mut self,
        ctx: &SeamContext,
        turn: u64,
        send: &QueuedPrompt,
        attachments: Vec<ContextEntry>,
    ) -> Result<Admission, AgentError> {
        let mut content = send.text.clone();
        let mut prompt_contexts = Vec::new();
        for plugin in self.registry.plugins() {
            let input = PromptInput {
                content: content.clone(),
                source: send.source.clone(),
            };
            let decision = AssertUnwindSafe(plugin.prompt_submit(ctx, &input))
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
                    self.append(EventBody::PromptBlocked(PromptBlockedEvent {
                        turn,
                        content: send.text.clone(),
                        source: send.source.clone(),
                        reason: reason.clone(),
                    }))?;
                    return Ok(Admission::Ended(TurnEndReason::Rejected, Some(reason)));
                }
                PromptDecision::Stop { reason, kept } => {
                    self.keep_stopped_prompt(turn, send, &content, &kept)?;
                    return Ok(Admission::Ended(TurnEndReason::Stopped, Some(reason)));
                }
            }
        }
        // A custom command: UserPromptSubmit saw the prompt as typed; the
        // expansion seam now sees the command, and the model its text.
        match crate::prompt_layer::expand(
            self.registry.plugins(),
            ctx,
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
                self.append(EventBody::PromptBlocked(PromptBlockedEvent {
                    turn,
                    content: send.text.clone(),
                    source: send.source.clone(),
                    reason: reason.clone(),
                }))?;
                return Ok(Admission::Ended(TurnEndReason::Rejected, Some(reason)));
            }
            crate::prompt_layer::Expansion::Stopped(reason, kept) => {
                self.keep_stopped_prompt(turn, send, &content, &kept)?;
                return Ok(Admission::Ended(TurnEndReason::Stopped, Some(reason)));
            }
        }
        let (turn_prompt, start_contexts) = crate::prompt_layer::agent_start(
            self.registry.plugins(),
            ctx,
            &content,
            &self.system_prompt(),
            &self.project.instructions,
        )
        .await;
        self.turn_system_prompt = Some(turn_prompt);
        prompt_contexts.extend(start_contexts);
        self.append(EventBody::UserMessage(UserMessageEvent {
            turn,
            content: content.clone(),
            source: send.source.clone(),
            original_content: (content != send.text).then(|| send.text.clone()),
        }))?;
        let session_contexts = std::mem::take(&mut self.pending_session_contexts);
        self.append_contexts(
            turn,
            session_contexts
                .into_iter()
                .chain(attachments)
                .chain(prompt_contexts),
        )?;
        Ok(Admission::Admitted)
    }

    /// One model request of the turn: sent (through the request seams), or
    /// answered or blocked by a plugin. A failed request is logged with the
    /// text that had streamed, and the turn-failed seam hears of it.
    async fn request_step(
        &mut self,
        ctx: &SeamContext,
        turn: u64,
        step: u64,
        summary: &mut TurnSummary,
    ) -> Result<StepReply, AgentError> {
        let result = match self.request_for_step(ctx, turn, step).await? {
            PlannedRequest::Send(request) => {
                let forwarder = StreamForwarder {
                    on_text: self.sink.observers.on_text.clone(),
                    on_notice: self.sink.observers.on_notice.clone(),
                };
                let Some(result) = crate::step::complete(
                    &self.registry,
                    ctx,
                    self.model.as_ref(),
                    &request,
                    forwarder,
                )
                .await
                else {
                    return Ok(StepReply::Ended(TurnEndReason::Interrupted, None));
                };
                result
            }
            PlannedRequest::Blocked(reason) => {
                return Ok(StepReply::Ended(TurnEndReason::Stopped, Some(reason)));
            }
            // Nothing was sent, so the request observers are not told.
            PlannedRequest::Answered(reply) => Ok(reply),
        };
        let reply = match result {
            Ok(reply) => reply,
            Err(error) => {
                if !error.partial_text.is_empty() {
                    self.append(EventBody::AssistantMessage(AssistantMessageEvent {
                        turn,
                        step,
                        content: error.partial_text.clone(),
                        tool_calls: Vec::new(),
                        usage: None,
                        thinking: None,
                    }))?;
                    summary.last_assistant_message = Some(error.partial_text.clone());
                }
                let failure = TurnFailure {
                    turn,
                    step,
                    error: error.clone(),
                };
                for plugin in self.registry.plugins() {
                    let _ = AssertUnwindSafe(plugin.turn_failed(ctx, &failure))
                        .catch_unwind()
                        .await;
                }
                return Ok(StepReply::Ended(TurnEndReason::Error, Some(error.message)));
            }
        };
        Ok(StepReply::Reply(reply))
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
        self.append(EventBody::UserMessage(UserMessageEvent {
            turn,
            content: content.to_owned(),
            source: send.source.clone(),
            original_content: (content != send.text).then(|| send.text.clone()),
        }))?;
        match kept {
            StoppedPrompt::PromptOnly => {}
            StoppedPrompt::WithExchange {
                note,
                reply,
                source,
            } => {
                self.append(EventBody::SteeringMessage(SteeringMessageEvent {
                    turn,
                    content: note.clone(),
                    source: source.clone(),
                }))?;
                self.append(EventBody::AssistantMessage(AssistantMessageEvent {
                    turn,
                    step: 0,
                    content: reply.clone(),
                    tool_calls: Vec::new(),
                    usage: None,
                    thinking: None,
                }))?;
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

    pub(super) fn build_request(&self, turn: u64, step: u64) -> ModelRequest {
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
        self.append(EventBody::TurnEnd(TurnEndEvent {
            turn: summary.turn,
            reason,
            message: message.clone(),
        }))?;
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

/// How prompt policy left a turn.
enum Admission {
    /// The prompt reached the log; model requests follow.
    Admitted,
    /// The turn ends here, before any request.
    Ended(TurnEndReason, Option<String>),
}

/// How one model request of a turn came back.
enum StepReply {
    Reply(ModelReply),
    /// The turn ends here (interrupted, blocked or failed).
    Ended(TurnEndReason, Option<String>),
}
