//! The session and turn seams: SessionStart (with `CLAUDE_ENV_FILE`),
//! UserPromptSubmit and Stop.

use dsh_seams::{
    ContextEntry, ContinuationDecision, ContinuationInput, NoticeLevel, PromptDecision,
    PromptInput, SeamContext, SessionStartSource, StoppedPrompt, UserNotice,
};

use super::lifecycle::EnvFiles;
use super::{ClaudePlugin, Fired, Firing};
use crate::events::HookEvent;
use crate::output::{Effect, Interpretation, StopMerge, merge_stop};
use crate::payload;

/// The assistant reply Claude Code records after a prompt stopped before any
/// model request.
const NO_RESPONSE_REQUESTED: &str = "No response requested.";

impl ClaudePlugin {
    pub(super) async fn on_session_start(
        &self,
        ctx: &SeamContext,
        source: SessionStartSource,
    ) -> Vec<ContextEntry> {
        let compact = source == SessionStartSource::Compact;
        let common = self.common(ctx, compact);
        // Settings `env` reaches the bash tool; a CLAUDE_ENV_FILE export
        // (applied below) replaces it there, as captured.
        for (name, value) in self.settings_env() {
            ctx.session.env.set(name, value);
        }
        self.watch_matcher_names(ctx);
        // One CLAUDE_ENV_FILE per SessionStart hook (Claude Code:
        // `sessionstart-hook-<i>.sh`).
        let env_files = EnvFiles::prepare(self.config(), ctx, "sessionstart");
        let firing = Firing {
            subject: Some(source.as_str()),
            source: Some(source.as_str()),
            ..Firing::new(
                HookEvent::SessionStart,
                &if compact {
                    payload::session_start_compact(&common, &ctx.session.model)
                } else {
                    payload::session_start(&common, source.as_str())
                },
            )
        };
        let fired = self.fire(ctx, &firing, Some(env_files.names())).await;
        self.record(ctx, firing.event, &fired, &|_, _| {});
        env_files.apply(ctx, HookEvent::SessionStart);
        // `watchPaths` adds files to watch for the rest of the session.
        if let Some(paths) = super::lifecycle::watch_paths(&fired) {
            ctx.session.env.watch_paths(paths);
        }
        Self::joined_contexts(&fired, HookEvent::SessionStart)
    }

    pub(super) async fn on_prompt_submit(
        &self,
        ctx: &SeamContext,
        prompt: &PromptInput,
    ) -> PromptDecision {
        let mut contexts = self.harvest_async(ctx);
        let common = self.common(ctx, true);
        let firing = Firing {
            prompt: Some(&prompt.content),
            ..Firing::new(
                HookEvent::UserPromptSubmit,
                &payload::user_prompt_submit(&common, &prompt.content),
            )
        };
        let fired = self.fire(ctx, &firing, None).await;
        if let Some(decision) = self.prompt_verdict(ctx, firing.event, &fired) {
            return decision;
        }
        contexts.extend(Self::joined_contexts(&fired, HookEvent::UserPromptSubmit));
        // A turn nobody typed reaches the model framed as a notification.
        let rewrite = (prompt.source == dsh_seams::NOTIFICATION_SOURCE)
            .then(|| super::worktree::notification_for_model(&prompt.content));
        PromptDecision::Allow { rewrite, contexts }
    }

    pub(super) async fn on_turn_continuation(
        &self,
        ctx: &SeamContext,
        input: &ContinuationInput,
    ) -> ContinuationDecision {
        let common = self.common(ctx, true);
        let firing = Firing::new(
            HookEvent::Stop,
            &payload::stop(
                &common,
                input.forced_continuations > 0,
                &input.last_assistant_message,
            ),
        );
        let fired = self.fire(ctx, &firing, None).await;
        let merged = self.merged_stop(&fired, input.forced_continuations);
        let stop_at = fired.iter().position(|f| f.reading.stop.is_some());
        self.record(ctx, firing.event, &fired, &|i, decision| {
            let interp = &fired[i].reading;
            let forcing =
                matches!(interp.effect, Effect::Block { .. }) || !interp.steering.is_empty();
            match &merged {
                StopMerge::Halt { .. } if forcing || interp.stop.is_some() => {
                    decision.won = Some(Some(i) == stop_at);
                }
                StopMerge::CapFired { message } if forcing => {
                    decision.won = Some(false);
                    decision.overridden = Some(message.clone());
                }
                StopMerge::Continue { .. } if forcing => decision.won = Some(true),
                StopMerge::Stop
                | StopMerge::Halt { .. }
                | StopMerge::CapFired { .. }
                | StopMerge::Continue { .. } => {}
            }
        });
        Self::stop_continuation(ctx, firing.event, &fired, merged)
    }

    /// A prompt event's answer (UserPromptSubmit, UserPromptExpansion):
    /// the first `continue: false` stops the turn, else the first block
    /// rejects it; `None` lets the prompt through. Records each run, with
    /// which stopping or blocking answer won.
    pub(super) fn prompt_verdict(
        &self,
        ctx: &SeamContext,
        event: HookEvent,
        fired: &[Fired],
    ) -> Option<PromptDecision> {
        let stop_at = fired.iter().position(|f| f.reading.stop.is_some());
        let block_at = fired
            .iter()
            .position(|f| matches!(f.reading.effect, Effect::Block { .. }));
        let decided = stop_at.or(block_at);
        self.record(ctx, event, fired, &|i, decision| {
            if fired[i].reading.stop.is_some()
                || matches!(fired[i].reading.effect, Effect::Block { .. })
            {
                decision.won = Some(Some(i) == decided);
            }
        });
        if let Some(i) = stop_at {
            let reason = fired[i].reading.stop.clone().unwrap_or_default();
            let reason = format!("Operation stopped by hook: {reason}");
            // UserPromptSubmit: Claude Code keeps the stopped prompt with
            // its note and `No response requested.`, so a later turn's model
            // sees why (`h5_ups_continue_false_resume`). Not captured for
            // UserPromptExpansion: the prompt alone.
            let kept = if event == HookEvent::UserPromptSubmit {
                StoppedPrompt::WithExchange {
                    note: reason.clone(),
                    reply: NO_RESPONSE_REQUESTED.to_owned(),
                    source: format!("claude:{event}"),
                }
            } else {
                StoppedPrompt::PromptOnly
            };
            return Some(PromptDecision::Stop { reason, kept });
        }
        if let Some(i) = block_at
            && let Effect::Block { text } = &fired[i].reading.effect
        {
            return Some(PromptDecision::Block {
                reason: text.clone(),
            });
        }
        None
    }

    /// Stop's merge of the runs' answers (the same feedback text, the
    /// same consecutive-block cap), for Stop and SubagentStop alike.
    pub(super) fn merged_stop(&self, fired: &[Fired], forced: u32) -> StopMerge {
        let answers: Vec<&Interpretation> = fired.iter().map(|f| &f.reading).collect();
        merge_stop(&answers, forced, self.config().options.stop_block_cap)
    }

    /// Stop's and SubagentStop's merged answer as the loop's decision: a
    /// fired block cap is told to the user, and a continuation names the
    /// hooks that forced it (`claude:<event>:<commands>`).
    pub(super) fn stop_continuation(
        ctx: &SeamContext,
        event: HookEvent,
        fired: &[Fired],
        merged: StopMerge,
    ) -> ContinuationDecision {
        match merged {
            StopMerge::Stop => ContinuationDecision::Stop,
            StopMerge::Halt { reason } => ContinuationDecision::Halt { reason },
            StopMerge::CapFired { message } => {
                ctx.sink.tell_user(UserNotice {
                    source: format!("claude:{}", event.as_str()),
                    text: message,
                    level: NoticeLevel::Warning,
                });
                ContinuationDecision::Stop
            }
            StopMerge::Continue {
                reason,
                by,
                context,
            } => {
                let sources: Vec<String> = by
                    .iter()
                    .map(|&i| fired[i].handler.command_text())
                    .collect();
                let source = format!("claude:{}:{}", event.as_str(), sources.join(" + "));
                ContinuationDecision::Continue {
                    reason: Some(reason),
                    contexts: context
                        .map(|c| vec![ContextEntry::new(c, source.clone())])
                        .unwrap_or_default(),
                    source,
                }
            }
        }
    }
}
