//! Compaction through Claude Code's hooks (PROTOCOL-ADDENDUM §7): PreCompact
//! before the summary request (exit 2 or a block skips the compaction with
//! `Compaction blocked by PreCompact hook: [CMD]: <stderr>`; plain stdout is
//! appended to the summary instructions), then SessionStart with source
//! `compact` (its context joins the compacted history), then PostCompact
//! with the raw summary (its output reaches no model).

use dsh_seams::{
    CompactionDecision, CompactionInput, CompactionOutcome, ContextEntry, SeamContext,
    SessionStartSource,
};

use super::{ClaudePlugin, Firing};
use crate::events::HookEvent;
use crate::output::Effect;
use crate::payload;

impl ClaudePlugin {
    pub(super) async fn on_before_compact(
        &self,
        ctx: &SeamContext,
        input: &CompactionInput,
    ) -> CompactionDecision {
        let common = self.common(ctx, true);
        let trigger = input.trigger.as_str();
        let firing = Firing {
            subject: Some(trigger),
            ..Firing::new(
                HookEvent::PreCompact,
                &payload::pre_compact(&common, trigger, input.custom_instructions.as_deref()),
            )
        };
        let fired = self.fire(ctx, &firing, None).await;
        self.record(ctx, firing.event, &fired, &|_, _| {});
        let mut instructions = Vec::new();
        for run in &fired {
            match &run.reading.effect {
                Effect::Block { text } | Effect::Deny { text } => {
                    return CompactionDecision::Cancel {
                        reason: text.clone(),
                    };
                }
                Effect::None | Effect::Allow { .. } | Effect::Ask { .. } | Effect::Defer { .. } => {
                }
            }
            instructions.extend(run.reading.contexts.iter().cloned());
        }
        CompactionDecision::Proceed { instructions }
    }

    pub(super) async fn on_compacted(
        &self,
        ctx: &SeamContext,
        outcome: &CompactionOutcome,
    ) -> Vec<ContextEntry> {
        let contexts = self
            .on_session_start(ctx, SessionStartSource::Compact)
            .await;
        let common = self.common(ctx, true);
        let trigger = outcome.trigger.as_str();
        let firing = Firing {
            subject: Some(trigger),
            ..Firing::new(
                HookEvent::PostCompact,
                &payload::post_compact(&common, trigger, &outcome.summary),
            )
        };
        let fired = self.fire(ctx, &firing, None).await;
        self.record(ctx, firing.event, &fired, &|_, _| {});
        contexts
    }
}
