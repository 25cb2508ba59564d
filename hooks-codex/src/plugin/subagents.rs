//! The sub-agent seams: Codex SubagentStart (matcher on the agent type, its
//! `additionalContext` into the sub-agent's first request) and SubagentStop
//! (Stop's rules inside the sub-agent).

use dsh_seams::{
    ContextEntry, ContinuationDecision, SeamContext, SubagentStartInput, SubagentStopInput,
};

use super::CodexPlugin;
use crate::event::CodexEvent;
use crate::payload::{self, codex_agent_type};

impl CodexPlugin {
    pub(super) async fn on_subagent_start(
        &self,
        ctx: &SeamContext,
        input: &SubagentStartInput,
    ) -> Vec<ContextEntry> {
        let event = CodexEvent::SubagentStart;
        let agent_type = codex_agent_type(&input.identity.agent_type);
        let payload = payload::subagent_start(
            &self.base(ctx),
            &Self::turn_id(ctx),
            &input.identity.agent_id,
            agent_type,
        );
        let records = self
            .run_event(
                ctx,
                event,
                payload,
                Some((agent_type, &[])),
                None,
                &ctx.cancel,
            )
            .await;
        self.record(ctx, event, &records);
        Self::context_entries(event, &records)
    }

    pub(super) async fn on_subagent_stop(
        &self,
        ctx: &SeamContext,
        input: &SubagentStopInput,
    ) -> ContinuationDecision {
        let agent_type = codex_agent_type(&input.identity.agent_type);
        let last = Some(input.last_assistant_message.as_str()).filter(|text| !text.is_empty());
        let payload = payload::subagent_stop(
            &self.base(ctx),
            &Self::turn_id(ctx),
            &input.identity.agent_id,
            agent_type,
            input.stop_hook_active,
            last,
        );
        self.continuation(
            ctx,
            CodexEvent::SubagentStop,
            payload,
            Some((agent_type, &[])),
            input.forced_continuations,
        )
        .await
    }
}
