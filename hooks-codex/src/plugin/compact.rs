//! Compaction through Codex's hooks (`compact*` captures, OBSERVED.md):
//! PreCompact before the summary request — exit 2 is a failed run and the
//! compaction still happens; `continue: false` ends the compaction and the
//! turn — then, once the summary is in, PostCompact and SessionStart with
//! source `compact` (Codex's order; its contexts join the compacted history).

use dsh_seams::{
    CompactionDecision, CompactionInput, CompactionOutcome, ContextEntry, Plugin as _, SeamContext,
    SessionStartSource,
};

use super::CodexPlugin;
use crate::event::CodexEvent;
use crate::output::Effect;
use crate::payload;

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
        let stop = records.iter().enumerate().find_map(|(index, record)| {
            match &record.reading.interpretation.effect {
                Effect::Stop { reason } => Some((index, reason.clone())),
                Effect::None
                | Effect::Block { .. }
                | Effect::Rewrite { .. }
                | Effect::PermissionAllow
                | Effect::PermissionDeny { .. } => None,
            }
        });
        Self::mark_won(&mut records, stop.as_ref().map(|(i, _)| *i), |effect| {
            matches!(effect, Effect::Stop { .. })
        });
        self.record(ctx, event, &records);
        match stop {
            Some((_, reason)) => {
                let reason =
                    reason.unwrap_or_else(|| "PreCompact hook stopped the turn".to_owned());
                ctx.control.request_stop(reason.clone(), "codex:PreCompact");
                CompactionDecision::Cancel { reason }
            }
            None => CompactionDecision::proceed(),
        }
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
