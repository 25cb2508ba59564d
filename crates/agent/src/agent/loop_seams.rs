//! The seed-004 loop seams applied: the context transform and the provider
//! request before each model request, stop-after-step and prepare-next-step
//! after each step, and the steering and follow-up queues with their
//! delivery modes. Every change a plugin makes here is recorded as a
//! `seam/note`.

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, PoisonError};

use dsh_protocol::{
    EventBody, ModelReply, ModelRequest, RequestRecord, Seam, SeamNoteDetail, SeamNoteEvent,
    SeamNoteKind, SteeringMessageEvent,
};
use dsh_seams::{
    ContextDecision, NoticeLevel, ProviderRequestDecision, SeamContext, SessionSink, StepReport,
    StepStop, UserNotice, check_adjacency,
};
use futures::FutureExt;

use super::{Agent, AgentError, QueuedPrompt};

/// How many queued messages one delivery takes (seed 004's queue modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueueMode {
    /// Everything queued is delivered together.
    #[default]
    All,
    /// One message per delivery; the rest wait for the next opportunity
    /// (the next step for steering, the next would-be stop for follow-ups).
    OneAtATime,
}

/// The delivery mode of each queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueueModes {
    /// Steering: delivered before the next model request of the running
    /// turn (after the current step's tool calls settle).
    pub steering: QueueMode,
    /// Follow-up: delivered when the running turn would stop, continuing it.
    pub follow_up: QueueMode,
}

/// Messages for the running turn, pushed from anywhere (the terminal while
/// a turn runs, a plugin). A cheap handle: clones share the queue.
#[derive(Debug, Clone, Default)]
pub struct MessageQueue(Arc<Mutex<VecDeque<QueuedPrompt>>>);

impl MessageQueue {
    /// Queues a message.
    pub fn push(&self, text: impl Into<String>, source: impl Into<String>) {
        self.lock().push_back(QueuedPrompt {
            text: text.into(),
            source: source.into(),
        });
    }

    /// How many messages wait.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether none wait.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Takes everything queued (e.g. what arrived after the running turn
    /// took its last delivery, for the caller to send on).
    pub fn drain(&self) -> Vec<QueuedPrompt> {
        self.take(QueueMode::All)
    }

    fn take(&self, mode: QueueMode) -> Vec<QueuedPrompt> {
        let mut queue = self.lock();
        match mode {
            QueueMode::All => queue.drain(..).collect(),
            QueueMode::OneAtATime => queue.pop_front().into_iter().collect(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<QueuedPrompt>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What the request seams decided for one step.
#[derive(Debug)]
pub(super) enum PlannedRequest {
    /// Send this request.
    Send(ModelRequest),
    /// Send nothing; the turn ends `stopped` with this reason.
    Blocked(String),
    /// Send nothing; this reply answers the request.
    Answered(ModelReply),
}

/// Which queue a delivery drains.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum QueueKind {
    Steering,
    FollowUp,
}

impl Agent {
    /// The steering queue: messages delivered before the running turn's next
    /// model request.
    pub fn steering_queue(&self) -> MessageQueue {
        self.queues.steering.clone()
    }

    /// The follow-up queue: messages delivered when the running turn would
    /// stop, so that it goes on.
    pub fn follow_up_queue(&self) -> MessageQueue {
        self.queues.follow_up.clone()
    }

    /// Sets how many queued messages each delivery takes.
    pub fn set_queue_modes(&mut self, modes: QueueModes) {
        self.queues.modes = modes;
    }

    /// Why a plugin ended the session, if one did: no further queued send
    /// runs ([`Agent::run_pending`] stops).
    pub fn session_end_requested(&self) -> Option<&str> {
        self.session_end_requested.as_deref()
    }

    fn note(
        &self,
        turn: u64,
        seam: Seam,
        plugin: &str,
        kind: SeamNoteKind,
        message: String,
        detail: Option<SeamNoteDetail>,
    ) -> Result<(), AgentError> {
        self.append(EventBody::SeamNote(SeamNoteEvent {
            turn: Some(turn),
            seam,
            plugin: plugin.to_owned(),
            kind,
            message,
            detail,
        }))?;
        Ok(())
    }

    /// Delivers queued messages of `kind` (per its mode) as
    /// `steering/message`s; returns whether any was delivered.
    pub(super) fn deliver_queued(&self, turn: u64, kind: QueueKind) -> Result<bool, AgentError> {
        let (queue, mode) = match kind {
            QueueKind::Steering => (&self.queues.steering, self.queues.modes.steering),
            QueueKind::FollowUp => (&self.queues.follow_up, self.queues.modes.follow_up),
        };
        let taken = queue.take(mode);
        let delivered = !taken.is_empty();
        for message in taken {
            self.append(EventBody::SteeringMessage(SteeringMessageEvent {
                turn,
                content: message.text,
                source: message.source,
            }))?;
        }
        Ok(delivered)
    }

    /// The request for one step: the derived messages through the context
    /// seam, then the request through the before-provider-request seam,
    /// which may also keep it from being sent (a block or an answer in the
    /// model's place ends the waterfall).
    pub(super) async fn request_for_step(
        &self,
        ctx: &SeamContext,
        turn: u64,
        step: u64,
    ) -> Result<PlannedRequest, AgentError> {
        let mut request = self.build_request(turn, step);
        for plugin in self.registry.plugins() {
            let decision = AssertUnwindSafe(plugin.context(ctx, &request.messages))
                .catch_unwind()
                .await
                .unwrap_or(ContextDecision::Keep);
            match decision {
                ContextDecision::Keep => {}
                ContextDecision::Replace(messages) => match check_adjacency(&messages) {
                    Ok(()) => {
                        self.note(
                            turn,
                            Seam::Context,
                            plugin.name(),
                            SeamNoteKind::ContextReplaced,
                            format!(
                                "step {step}: {} messages sent instead of {}",
                                messages.len(),
                                request.messages.len()
                            ),
                            None,
                        )?;
                        request.messages = messages;
                    }
                    Err(why) => {
                        let message = format!(
                            "step {step}: the context transform of `{}` was refused, the untransformed messages were sent: {why}",
                            plugin.name()
                        );
                        self.sink.tell_user(UserNotice {
                            source: plugin.name().to_owned(),
                            text: message.clone(),
                            level: NoticeLevel::Warning,
                        });
                        self.note(
                            turn,
                            Seam::Context,
                            plugin.name(),
                            SeamNoteKind::ContextRejected,
                            message,
                            None,
                        )?;
                    }
                },
            }
        }
        for plugin in self.registry.plugins() {
            let decision = AssertUnwindSafe(plugin.before_provider_request(ctx, &request))
                .catch_unwind()
                .await
                .unwrap_or(ProviderRequestDecision::Keep);
            match decision {
                ProviderRequestDecision::Keep => {}
                ProviderRequestDecision::Replace(replacement) => {
                    let detail = Some(SeamNoteDetail::Request(RequestRecord::from(&replacement)));
                    self.note(
                        turn,
                        Seam::ModelRequest,
                        plugin.name(),
                        SeamNoteKind::RequestReplaced,
                        format!("step {step}: the provider request was replaced"),
                        detail,
                    )?;
                    request = replacement;
                }
                ProviderRequestDecision::Block { reason } => {
                    self.note(
                        turn,
                        Seam::ModelRequest,
                        plugin.name(),
                        SeamNoteKind::RequestBlocked,
                        format!("step {step}: the provider request was not sent: {reason}"),
                        None,
                    )?;
                    return Ok(PlannedRequest::Blocked(reason));
                }
                ProviderRequestDecision::Answer(reply) => {
                    let detail = Some(SeamNoteDetail::Reply(reply.clone()));
                    self.note(
                        turn,
                        Seam::ModelRequest,
                        plugin.name(),
                        SeamNoteKind::RequestAnswered,
                        format!("step {step}: the provider request was answered without the model"),
                        detail,
                    )?;
                    return Ok(PlannedRequest::Answered(reply));
                }
            }
        }
        Ok(PlannedRequest::Send(request))
    }

    /// After a step: the stop-after-step seam (an end of the turn or of the
    /// session wins; the session's end beats the turn's), then, if the loop
    /// goes on, prepare-next-step (the first listener to set a field wins).
    /// Returns the reason when the turn must end `stopped`.
    pub(super) async fn after_step(
        &mut self,
        ctx: &SeamContext,
        report: &StepReport,
    ) -> Result<Option<String>, AgentError> {
        let mut decided: Option<(StepStop, String)> = None;
        for plugin in self.registry.plugins() {
            let decision = AssertUnwindSafe(plugin.stop_after_step(ctx, report))
                .catch_unwind()
                .await
                .unwrap_or(StepStop::Continue);
            let replaces = match (&decided, &decision) {
                (_, StepStop::Continue) => false,
                (None, StepStop::EndTurn { .. } | StepStop::EndSession { .. }) => true,
                (Some((StepStop::EndTurn { .. }, _)), StepStop::EndSession { .. }) => true,
                (
                    Some((
                        StepStop::Continue | StepStop::EndTurn { .. } | StepStop::EndSession { .. },
                        _,
                    )),
                    StepStop::EndTurn { .. } | StepStop::EndSession { .. },
                ) => false,
            };
            if replaces {
                decided = Some((decision, plugin.name().to_owned()));
            }
        }
        match decided {
            Some((StepStop::EndTurn { reason }, plugin)) => {
                self.note(
                    report.turn,
                    Seam::StepEnd,
                    &plugin,
                    SeamNoteKind::TurnEndRequested,
                    format!("step {}: {reason}", report.step),
                    None,
                )?;
                return Ok(Some(reason));
            }
            Some((StepStop::EndSession { reason }, plugin)) => {
                self.note(
                    report.turn,
                    Seam::StepEnd,
                    &plugin,
                    SeamNoteKind::SessionEndRequested,
                    format!("step {}: {reason}", report.step),
                    None,
                )?;
                self.session_end_requested = Some(reason.clone());
                return Ok(Some(reason));
            }
            Some((StepStop::Continue, _)) | None => {}
        }
        let mut model_set = false;
        let mut prompt_set = false;
        for plugin in self.registry.plugins().to_vec() {
            let Ok(update) = AssertUnwindSafe(plugin.prepare_next_step(ctx, report))
                .catch_unwind()
                .await
            else {
                continue;
            };
            if let Some(model) = update.model
                && !model_set
            {
                model_set = true;
                let message = format!(
                    "after step {}: the model is now `{}` (was `{}`)",
                    report.step,
                    model.name(),
                    self.model.name()
                );
                self.note(
                    report.turn,
                    Seam::StepEnd,
                    plugin.name(),
                    SeamNoteKind::ModelSwitched,
                    message,
                    None,
                )?;
                self.model = model;
            }
            if let Some(prompt) = update.system_prompt
                && !prompt_set
            {
                prompt_set = true;
                self.note(
                    report.turn,
                    Seam::StepEnd,
                    plugin.name(),
                    SeamNoteKind::SystemPromptReplaced,
                    format!("after step {}: the system prompt was replaced", report.step),
                    Some(SeamNoteDetail::Prompt(prompt.clone())),
                )?;
                // The rest of this turn uses it as given (it replaces what the
                // system-prompt seam chose for the turn); later turns start
                // from it as their base prompt.
                self.turn_system_prompt = Some(prompt.clone());
                self.system_prompt = prompt;
            }
        }
        Ok(None)
    }
}
