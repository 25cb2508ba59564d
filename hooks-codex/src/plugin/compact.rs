//! Compaction through Codex's hooks (`compact*` captures, OBSERVED.md):
//! PreCompact before the summary request — exit 2 is a failed run and the
//! compaction still happens; `continue: false` ends the compaction and the
//! turn — then, once the summary is in, PostCompact and SessionStart with
//! source `compact` (Codex's order; its contexts join the compacted history).

use dsh_seams::{
    CompactionDecision, CompactionInput, CompactionOutcome, ContextEntry, Plugin as _, SeamContext,
    SessionStartSource,
};

use super::{CodexPlugin, effects};
use crate::event::CodexEvent;
use crate::payload;
use crate::translate;

impl CodexPlugin {
    pub(super) async fn on_before_compact(
        &self,
        ctx: &SeamContext,
        input: &CompactionInput,
    ) -> CompactionDecision {
        let event = CodexEvent::PreCompact;
        let payload = payload::compact(
            &self.base(ctx),
            &Self::turn_id(ctx),
            event.as_str(),
            input.trigger.as_str(),
        );
        let trigger = input.trigger.as_str();
        let mut records = self
            .run_event(ctx, event, payload, Some((trigger, &[])), None, &ctx.cancel)
            .await;
        let decision = translate::pre_compact(&effects(&records));
        Self::mark(&mut records, &decision);
        self.record(ctx, event, &records);
        if let CompactionDecision::Cancel { reason } = &decision.answer {
            ctx.control.request_stop(reason.clone(), "codex:PreCompact");
        }
        decision.answer
    }

    pub(super) async fn on_compacted(
        &self,
        ctx: &SeamContext,
        outcome: &CompactionOutcome,
    ) -> Vec<ContextEntry> {
        let event = CodexEvent::PostCompact;
        let trigger = outcome.trigger.as_str();
        let payload = payload::compact(
            &self.base(ctx),
            &Self::turn_id(ctx),
            event.as_str(),
            trigger,
        );
        let records = self
            .run_event(ctx, event, payload, Some((trigger, &[])), None, &ctx.cancel)
            .await;
        self.record(ctx, event, &records);
        self.session_start(ctx, SessionStartSource::Compact).await
    }
}
