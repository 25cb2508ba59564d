//! The subagent seams: SubagentStart (matcher on the agent type, its
//! `additionalContext` into the subagent's first request) and SubagentStop
//! (Stop's rules, with the subagent's sidechain transcript).

use dsh_seams::{
    ContextEntry, ContinuationDecision, NoticeLevel, SeamContext, SubagentStartInput,
    SubagentStopInput, UserNotice,
};

use super::{ClaudePlugin, Firing};
use crate::config::HandlerStatus;
use crate::events::HookEvent;
use crate::payload;
use crate::transcript::Transcript;

impl ClaudePlugin {
    pub(super) async fn on_subagent_start(
        &self,
        ctx: &SeamContext,
        input: &SubagentStartInput,
    ) -> Vec<ContextEntry> {
        let agent_type = input.identity.agent_type.as_str();
        // An agent whose frontmatter hooks may not run (an untrusted
        // project) says so, in Claude Code's words.
        if self
            .config()
            .handlers()
            .iter()
            .any(|h| h.agent.as_deref() == Some(agent_type) && h.status != HandlerStatus::Active)
        {
            ctx.sink.tell_user(UserNotice {
                source: "claude:SubagentStart".to_owned(),
                text: crate::agents::skipped_hooks_notice(agent_type),
                level: NoticeLevel::Info,
            });
        }
        let common = self.common(ctx, true);
        let firing = Firing {
            subject: Some(agent_type),
            ..Firing::new(HookEvent::SubagentStart, &payload::subagent_start(&common))
        };
        let fired = self.fire(ctx, &firing, None).await;
        self.record(ctx, firing.event, &fired, &|_, _| {});
        Self::joined_contexts(&fired, HookEvent::SubagentStart)
    }

    pub(super) async fn on_subagent_stop(
        &self,
        ctx: &SeamContext,
        input: &SubagentStopInput,
    ) -> ContinuationDecision {
        let common = self.common(ctx, true);
        let agent_transcript = Transcript::agent_path(
            &self.transcript_path(&ctx.session.session_id),
            &input.identity.agent_id,
        );
        let firing = Firing {
            subject: Some(&input.identity.agent_type),
            ..Firing::new(
                HookEvent::SubagentStop,
                &payload::subagent_stop(
                    &common,
                    input.stop_hook_active,
                    &agent_transcript.to_string_lossy(),
                    &input.last_assistant_message,
                ),
            )
        };
        let fired = self.fire(ctx, &firing, None).await;
        // Stop's merge: the same feedback text (`Stop hook feedback:`), the
        // same block cap.
        let merged = self.merged_stop(&fired, input.forced_continuations);
        self.record(ctx, firing.event, &fired, &|_, _| {});
        Self::stop_continuation(ctx, firing.event, &fired, merged)
    }
}
