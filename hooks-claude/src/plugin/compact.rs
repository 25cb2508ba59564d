//! Compaction through Claude Code's hooks (PROTOCOL-ADDENDUM §7): PreCompact
//! before the summary request (exit 2 or a block skips the compaction with
//! `Compaction blocked by PreCompact hook: [CMD]: <stderr>`; plain stdout is
//! appended to the summary instructions), then SessionStart with source
//! `compact` (its context joins the compacted history), then PostCompact
//! with the raw summary (its output reaches no model).

use dsh_seams::{
    CompactionDecision, CompactionInput, CompactionOutcome, ContextEntry, SessionStartSource,
};

use dsh_hooks::{Cx, Flow};

use super::{Firing, answer};
use crate::dialect::Claude;
use crate::events::HookEvent;
use crate::output::Effect;
use crate::payload;

/// PostCompact: SessionStart (`compact`) runs first and its contexts
/// are the answer; PostCompact is advisory.
pub(super) fn compacted<'a>(
    cx: Cx<'_, Claude>,
    outcome: &'a CompactionOutcome,
) -> Flow<'a, Claude, Vec<ContextEntry>> {
    super::turns::session_start(cx, SessionStartSource::Compact).and_then(move |cx, contexts| {
        let common = cx.bridge.common(cx.state, cx.ctx, true);
        let trigger = outcome.trigger.as_str();
        let firing = Firing {
            subject: Some(trigger),
            ..Firing::new(
                HookEvent::PostCompact,
                &payload::post_compact(&common, trigger, &outcome.summary),
            )
        };
        Flow::notify(Claude::fire_of(&cx, &firing), contexts)
    })
}

/// PreCompact: a block (or exit 2) cancels the compaction with its text;
/// `additionalContext`s become the summary's custom instructions.
pub(super) fn before_compact<'a>(
    cx: Cx<'_, Claude>,
    input: &'a CompactionInput,
) -> Flow<'a, Claude, CompactionDecision> {
    {
        let common = cx.bridge.common(cx.state, cx.ctx, true);
        let trigger = input.trigger.as_str();
        let firing = Firing {
            subject: Some(trigger),
            ..Firing::new(
                HookEvent::PreCompact,
                &payload::pre_compact(&common, trigger, input.custom_instructions.as_deref()),
            )
        };
        answer(&cx, &firing, |fired| {
            let mut instructions = Vec::new();
            for run in fired {
                match &run.reading.effect {
                    Effect::Block { text } | Effect::Deny { text } => {
                        return CompactionDecision::Cancel {
                            reason: text.clone(),
                        };
                    }
                    Effect::None
                    | Effect::Allow { .. }
                    | Effect::Ask { .. }
                    | Effect::Defer { .. } => {}
                }
                instructions.extend(run.reading.contexts.iter().cloned());
            }
            CompactionDecision::Proceed { instructions }
        })
    }
}
