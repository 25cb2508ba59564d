//! The session around the turns: repairing a reopened log, the
//! session-start, notification and session-end seams, `/clear` and
//! `/model`.

use std::panic::AssertUnwindSafe;
use std::sync::PoisonError;

use dsh_protocol::{
    EventBody, ModelSwitchedEvent, SeamNoteEvent, ToolCallEvent, ToolResultEvent, TurnEndEvent,
    TurnEndReason,
};
use dsh_seams::{
    CancellationToken, Notification, SeamContext, SessionEndReason, SessionSink,
    SessionStartSource, TurnControl, UserNotice,
};
use futures::FutureExt;

use super::{Agent, AgentError};

impl Agent {
    /// Closes what a crash left open in a reopened log: results for calls
    /// that never finished and the open turn (`interrupted`).
    pub fn repair_open_turn(&self) -> Result<(), AgentError> {
        let (open_turn, uncalled, unresolved) = self
            .sink
            .with_log(|log| (log.open_turn(), log.uncalled(), log.unresolved_calls()));
        let Some(turn) = open_turn else {
            return Ok(());
        };
        self.close_open_calls(
            turn,
            uncalled,
            unresolved,
            "recovered",
            "This call did not finish: the session ended before its result was recorded.",
        )?;
        self.append(EventBody::TurnEnd(TurnEndEvent {
            turn,
            reason: TurnEndReason::Interrupted,
            message: Some("dsh stopped before this turn ended; closed on resume".to_owned()),
        }))?;
        Ok(())
    }

    /// Closes the calls `turn` left open: a placeholder `tool/call`
    /// (execution id `exec_<label>_<call id>`) for each result without one,
    /// and a cancelled `tool/result` saying `content` for each call without
    /// a result. Shared by resume repair and a failed turn's close.
    pub(super) fn close_open_calls(
        &self,
        turn: u64,
        uncalled: Vec<String>,
        unresolved: Vec<String>,
        label: &str,
        content: &str,
    ) -> Result<(), AgentError> {
        for call_id in uncalled {
            self.append(EventBody::ToolCall(ToolCallEvent {
                turn,
                call_id: call_id.clone(),
                execution_id: format!("exec_{label}_{call_id}"),
                parent_execution_id: None,
                tool: "unknown".to_owned(),
                arguments: serde_json::Value::Object(serde_json::Map::new()),
                original_arguments: None,
                rewritten_by: None,
                rewrite_conflicts: Vec::new(),
                provider_call_id: None,
                origin: None,
            }))?;
        }
        for call_id in unresolved {
            self.append(EventBody::ToolResult(ToolResultEvent {
                turn,
                call_id,
                is_error: true,
                content: content.to_owned(),
                disposition: Some("cancelled".to_owned()),
                decided_by: None,
                rewrite: None,
                content_blocks: None,
                shown_input: None,
            }))?;
        }
        Ok(())
    }

    /// Fires the session-start seam, once, before turn 1. Listeners' contexts
    /// reach the first model request.
    pub async fn start(&mut self, source: SessionStartSource) {
        if self.started {
            return;
        }
        self.started = true;
        let control = TurnControl::default();
        let ctx = self.context(None, self.session_cancel.clone(), control.clone());
        if let Some(trigger) = self.setup {
            for plugin in self.registry.plugins() {
                if AssertUnwindSafe(plugin.setup(&ctx, trigger))
                    .catch_unwind()
                    .await
                    .is_err()
                {
                    tracing::error!("setup listener `{}` panicked", plugin.name());
                }
            }
        }
        crate::prompt_layer::announce_instructions(
            self.registry.plugins(),
            &ctx,
            &self.project.instructions,
        )
        .await;
        self.run_session_start(&ctx, control, source).await;
    }

    /// The session-start seam again (`/clear`).
    async fn fire_session_start(&mut self, source: SessionStartSource) {
        let control = TurnControl::default();
        let ctx = self.context(None, self.session_cancel.clone(), control.clone());
        self.run_session_start(&ctx, control, source).await;
    }

    async fn run_session_start(
        &mut self,
        ctx: &SeamContext,
        control: TurnControl,
        source: SessionStartSource,
    ) {
        let ctx = ctx.clone();
        for plugin in self.registry.plugins() {
            match AssertUnwindSafe(plugin.session_start(&ctx, source))
                .catch_unwind()
                .await
            {
                Ok(contexts) => self.pending_session_contexts.extend(contexts),
                Err(_) => tracing::error!(
                    "session-start listener `{}` panicked; the session continues",
                    plugin.name()
                ),
            }
        }
        self.session_stop = control.stop_requested();
    }

    /// The display seam for an assistant message's text: the first listener
    /// that replaces it wins, recorded as a `seam/note` (`display_replaced`,
    /// `detail.text`) for whoever presents the session; the history keeps the
    /// model's text.
    pub(super) async fn display(
        &self,
        ctx: &SeamContext,
        turn: u64,
        step: u64,
        text: &str,
    ) -> Result<(), AgentError> {
        if text.is_empty() {
            return Ok(());
        }
        let input = dsh_seams::DisplayInput {
            turn,
            step,
            message_id: dsh_seams::derived_id(&format!(
                "{}:message:{turn}:{step}",
                self.session.session_id
            )),
            text: text.to_owned(),
        };
        for plugin in self.registry.plugins() {
            let decision = AssertUnwindSafe(plugin.message_display(ctx, &input))
                .catch_unwind()
                .await
                .unwrap_or_default();
            if let dsh_seams::DisplayDecision::Replace { text } = decision {
                self.append(EventBody::SeamNote(SeamNoteEvent {
                    turn: Some(turn),
                    seam: dsh_protocol::Seam::MessageDisplay,
                    plugin: plugin.name().to_owned(),
                    kind: dsh_protocol::SeamNoteKind::DisplayReplaced,
                    message: "the assistant's text is shown replaced".to_owned(),
                    detail: Some(dsh_protocol::SeamNoteDetail::Shown(
                        dsh_protocol::ShownText { text },
                    )),
                }))?;
                break;
            }
        }
        Ok(())
    }

    /// Fires the notification seam (dsh is waiting for the user) outside any turn.
    pub async fn notify(&self, notification: &Notification) {
        let ctx = self.context(None, CancellationToken::new(), TurnControl::default());
        for plugin in self.registry.plugins() {
            if AssertUnwindSafe(plugin.notification(&ctx, notification))
                .catch_unwind()
                .await
                .is_err()
            {
                tracing::error!("notification listener `{}` panicked", plugin.name());
            }
        }
    }

    /// Tells every plugin about permission changes made outside an
    /// approval (the terminal's Shift-Tab mode switch): the permission
    /// stage applies them, and hook dialects tell later hooks the mode in
    /// effect.
    pub async fn permissions_updated(&self, updates: &[dsh_protocol::PermissionUpdate]) {
        let ctx = self.context(None, CancellationToken::new(), TurnControl::default());
        for plugin in self.registry.plugins() {
            if AssertUnwindSafe(plugin.permissions_updated(&ctx, updates))
                .catch_unwind()
                .await
                .is_err()
            {
                tracing::error!("permission listener `{}` panicked", plugin.name());
            }
        }
    }

    /// `/clear`: the session-end seam (reason `clear`), a durable
    /// `session/cleared` (nothing before it reaches the model again), then
    /// the session-start seam (source `clear`), whose contexts join the next
    /// turn, as Claude Code does. The instruction files stay in the system
    /// prompt; InstructionsLoaded does not fire again.
    pub async fn clear(&mut self) -> Result<(), AgentError> {
        self.end(SessionEndReason::Clear).await;
        self.append(EventBody::SessionCleared {})?;
        self.pending_session_contexts.clear();
        self.loaded_rules
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        self.started = true;
        self.fire_session_start(SessionStartSource::Clear).await;
        Ok(())
    }

    /// `/model NAME` or a host's `set_model`: the model-switch seam first
    /// (a listener may refuse: the user is told why and `Ok(Err(reason))`
    /// comes back), then a durable `model/switched` (a resumed session keeps
    /// the model) and the switched seam. Between turns.
    pub async fn switch_model(
        &mut self,
        name: &str,
        source: dsh_seams::ModelSwitchSource,
    ) -> Result<Result<(), String>, AgentError> {
        let from = self
            .model_override
            .clone()
            .unwrap_or_else(|| self.model.name());
        let switch = dsh_seams::ModelSwitch {
            from: from.clone(),
            to: name.to_owned(),
            requested: name.to_owned(),
            source,
            last_usage: self.last_response.and_then(|(_, usage)| usage),
            since_last_response: self.last_response.map(|(at, _)| at.elapsed()),
        };
        let ctx = self.context(None, self.session_cancel.clone(), TurnControl::default());
        for plugin in self.registry.plugins() {
            let decision = AssertUnwindSafe(plugin.before_model_switch(&ctx, &switch))
                .catch_unwind()
                .await
                .unwrap_or_default();
            if let dsh_seams::ModelSwitchDecision::Deny { reason } = decision {
                self.sink.tell_user(UserNotice {
                    source: plugin.name().to_owned(),
                    text: format!("the model stays {from}: {reason}"),
                    level: dsh_seams::NoticeLevel::Warning,
                });
                return Ok(Err(reason));
            }
        }
        self.append(EventBody::ModelSwitched(ModelSwitchedEvent {
            from,
            to: name.to_owned(),
        }))?;
        self.model_override = Some(name.to_owned());
        self.sink.tell_user(UserNotice {
            source: "dsh".to_owned(),
            text: format!("model set to {name} for the following requests"),
            level: dsh_seams::NoticeLevel::Info,
        });
        for plugin in self.registry.plugins() {
            if AssertUnwindSafe(plugin.model_switched(&ctx, &switch))
                .catch_unwind()
                .await
                .is_err()
            {
                tracing::error!("model-switched listener `{}` panicked", plugin.name());
            }
        }
        Ok(Ok(()))
    }

    /// The model the next request names.
    pub fn current_model(&self) -> String {
        self.model_override
            .clone()
            .unwrap_or_else(|| self.model.name())
    }

    /// Fires the session-end seam.
    pub async fn end(&mut self, reason: SessionEndReason) {
        let ctx = self.context(None, CancellationToken::new(), TurnControl::default());
        for plugin in self.registry.plugins() {
            if AssertUnwindSafe(plugin.session_end(&ctx, reason))
                .catch_unwind()
                .await
                .is_err()
            {
                tracing::error!("session-end listener `{}` panicked", plugin.name());
            }
        }
    }
}
