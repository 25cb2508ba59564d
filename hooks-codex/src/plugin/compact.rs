//! Compaction through Codex's hooks (`compact*` captures, OBSERVED.md):
//! PreCompact before the summary request — exit 2 is a failed run and the
//! compaction still happens; `continue: false` ends the compaction and the
//! turn — then, once the summary is in, PostCompact and SessionStart with
//! source `compact` (Codex's order; its contexts join the compacted history).

use dsh_hooks::names::Tabled;
use dsh_hooks::{Bridge as _, Cx, Dialect as _, Flow};
use dsh_seams::{
    CompactionDecision, CompactionInput, CompactionOutcome, ContextEntry, SessionStartSource,
};

use super::{Flows, ctx_turn_id, effects, fire, marked};
use crate::dialect::Codex;
use crate::event::CodexEvent;
use crate::payload;
use crate::translate;

pub(super) fn pre_compact<'a>(
    cx: Cx<'_, Codex>,
    input: &'a CompactionInput,
) -> Flows<'a, CompactionDecision> {
    let event = CodexEvent::PreCompact;
    let trigger = input.trigger.as_str();
    let base = cx.bridge.base(cx.ctx);
    let payload = payload::compact(&base, &ctx_turn_id(cx.ctx), event.as_str(), trigger);
    Flow::fire(fire(event, payload, Some(trigger)), move |cx, runs| {
        let decision = translate::pre_compact(&effects(runs));
        let record = marked(&decision);
        let source = cx.bridge.source(event);
        let then = Flow::later(move |cx| {
            if let CompactionDecision::Cancel { reason } = &decision.answer {
                cx.ctx.control.request_stop(reason.clone(), source);
            }
            Flow::Done(decision.answer)
        });
        (record, then)
    })
}

pub(super) fn post_compact<'a>(
    cx: Cx<'_, Codex>,
    outcome: &'a CompactionOutcome,
) -> Flows<'a, Vec<ContextEntry>> {
    let event = CodexEvent::PostCompact;
    let trigger = outcome.trigger.as_str();
    let base = cx.bridge.base(cx.ctx);
    let payload = payload::compact(&base, &ctx_turn_id(cx.ctx), event.as_str(), trigger);
    Flow::notify(fire(event, payload, Some(trigger)), ())
        .and_then(|cx, ()| Codex::session_start(cx, SessionStartSource::Compact))
}
