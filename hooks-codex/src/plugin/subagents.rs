//! The sub-agent seams: Codex SubagentStart (matcher on the agent type, its
//! `additionalContext` into the sub-agent's first request) and SubagentStop
//! (Stop's rules inside the sub-agent).

use dsh_hooks::{Cx, Dialect as _, Flow, Record};
use dsh_seams::{ContextEntry, ContinuationDecision, SubagentStartInput, SubagentStopInput};

use super::{Flows, context_entries, ctx_turn_id, fire, turns};
use crate::dialect::Codex;
use crate::event::CodexEvent;
use crate::payload::{self, codex_agent_type};

pub(super) fn subagent_start<'a>(
    cx: Cx<'_, Codex>,
    input: &'a SubagentStartInput,
) -> Flows<'a, Vec<ContextEntry>> {
    let event = CodexEvent::SubagentStart;
    let agent_type = codex_agent_type(&input.identity.agent_type);
    let payload = payload::subagent_start(
        &cx.bridge.base(cx.ctx),
        &ctx_turn_id(cx.ctx),
        &input.identity.agent_id,
        agent_type,
    );
    Flow::fire(fire(event, payload, Some(agent_type)), move |cx, runs| {
        let contexts = context_entries(&cx.bridge.source(event), runs);
        (Record::AsRead, Flow::Done(contexts))
    })
}

pub(super) fn subagent_stop<'a>(
    cx: Cx<'_, Codex>,
    input: &'a SubagentStopInput,
) -> Flows<'a, ContinuationDecision> {
    let agent_type = codex_agent_type(&input.identity.agent_type);
    let last = Some(input.last_assistant_message.as_str()).filter(|text| !text.is_empty());
    let payload = payload::subagent_stop(
        &cx.bridge.base(cx.ctx),
        &ctx_turn_id(cx.ctx),
        &input.identity.agent_id,
        agent_type,
        input.stop_hook_active,
        last,
    );
    let firing = fire(CodexEvent::SubagentStop, payload, Some(agent_type));
    turns::continuation(&cx, firing, input.forced_continuations)
}
