//! The turn seams: Codex Stop hooks (their continuation prompts and dsh's
//! cap on consecutive blocks) and the legacy `notify` program at turn end.

use dsh_hook_runner::RunRecord as ProcessFacts;
use dsh_hook_runner::{HookProgram, HookSpec};
use dsh_hooks::{BridgePlugin, Cx, Dialect as _, Fire, Flow, Record, Winner};
use dsh_protocol::{
    Dialect, EventBody, ExactJson, HookDecision, HookInvokedEvent, Seam, TurnEndReason,
};
use dsh_seams::{
    CancellationToken, ContinuationDecision, ContinuationInput, NoticeLevel, SeamContext,
    TurnSummary, UserNotice,
};

use super::{Flows, NOTIFY_TIMEOUT, ctx_turn_id, fire, turn_id};
use crate::config::{NOTIFY_EVENT, NotifyConfig, TrustPolicy, TrustState};
use crate::dialect::Codex;
use crate::event::CodexEvent;
use crate::payload;
use crate::translate::{self, StopAnswer, StopRun};

pub(super) fn stop<'a>(
    cx: Cx<'_, Codex>,
    input: &'a ContinuationInput,
) -> Flows<'a, ContinuationDecision> {
    let last = Some(input.last_assistant_message.as_str()).filter(|text| !text.is_empty());
    let payload = payload::stop(
        &cx.bridge.base(cx.ctx),
        &ctx_turn_id(cx.ctx),
        input.forced_continuations > 0,
        last,
    );
    let firing = fire(CodexEvent::Stop, payload, None);
    continuation(&cx, firing, input.forced_continuations)
}

/// Stop's rules for `firing` (Stop, or SubagentStop inside a subagent):
/// a `continue: false` halts, blocks become continuation prompts, and
/// dsh's cap on consecutive blocks applies.
pub(super) fn continuation<'a>(
    cx: &Cx<'_, Codex>,
    firing: Fire<Codex>,
    forced_continuations: u32,
) -> Flows<'a, ContinuationDecision> {
    let event = firing.event;
    let source = cx.bridge.source(event);
    let cap = cx.bridge.stop_block_cap;
    Flow::fire(firing, move |_, runs| {
        let runs: Vec<StopRun<'_>> = runs
            .iter()
            .map(|record| StopRun {
                effect: &record.reading.interpretation.effect,
                display_order: record.handler.display_order,
                source: &record.handler.source_path,
            })
            .collect();
        let decision = translate::stop(event, &runs, forced_continuations, cap);
        let decisive = decision.decisive;
        match decision.answer {
            StopAnswer::Halt(reason) => (
                Record::At(decision.winner, decisive),
                Flow::Done(ContinuationDecision::Halt { reason }),
            ),
            StopAnswer::Stop => (Record::AsRead, Flow::Done(ContinuationDecision::Stop)),
            StopAnswer::Capped(text) => {
                let record = Record::Capped(decisive, text.clone());
                // Told after the runs are recorded.
                let tell = Flow::later(move |cx| {
                    tracing::warn!("{text}");
                    cx.ctx.sink.tell_user(UserNotice {
                        source,
                        text,
                        level: NoticeLevel::Warning,
                    });
                    Flow::Done(ContinuationDecision::Stop)
                });
                (record, tell)
            }
            StopAnswer::Continue(prompt) => (
                Record::Won(Winner::Every, decisive),
                Flow::Done(ContinuationDecision::Continue {
                    reason: Some(prompt),
                    source,
                    contexts: Vec::new(),
                }),
            ),
        }
    })
}

/// Turn end: Interrupt for an interrupted turn (on a fresh token: the
/// turn's own is cancelled already), the legacy `notify` program after a
/// finished one.
pub(super) async fn turn_end(
    plugin: &BridgePlugin<Codex>,
    ctx: &SeamContext,
    summary: &TurnSummary,
) {
    let codex = plugin.bridge();
    match summary.reason {
        TurnEndReason::Interrupted => {
            let turn = turn_id(&ctx.session.session_id, summary.turn);
            let payload = payload::interrupt(&codex.base(ctx), &turn);
            let firing = fire(CodexEvent::Interrupt, payload, None).fresh();
            plugin.drive(ctx, Flow::notify(firing, ())).await;
        }
        TurnEndReason::Completed | TurnEndReason::Stopped => {
            if let Some(notify) = &codex.notify
                && may_run_notify(codex, notify)
            {
                run_notify(plugin, ctx, notify, summary).await;
            }
        }
        TurnEndReason::Rejected | TurnEndReason::Error | TurnEndReason::MaxSteps => {}
    }
}

/// Whether `notify` runs under the session's trust policy, like any
/// other handler (see [`crate::config::NotifyConfig`]).
fn may_run_notify(codex: &Codex, notify: &NotifyConfig) -> bool {
    match codex.policy {
        TrustPolicy::RunAll => notify.trust != TrustState::Disabled,
        TrustPolicy::TrustedOnly => notify.trust.runs_when_trusted_only(),
    }
}

/// Runs `notify` after a finished turn. The turn is already closed in
/// the log, so its run is recorded session-scoped (no turn).
async fn run_notify(
    plugin: &BridgePlugin<Codex>,
    ctx: &SeamContext,
    notify: &NotifyConfig,
    summary: &TurnSummary,
) {
    let Some((program, args)) = notify.argv.split_first() else {
        return;
    };
    let turn = turn_id(&ctx.session.session_id, summary.turn);
    let cwd = ctx.session.cwd.display().to_string();
    let payload = payload::notify(
        &ctx.session.session_id,
        &turn,
        &cwd,
        std::slice::from_ref(&summary.prompt),
        summary.last_assistant_message.as_deref(),
    );
    let input = ExactJson::of(&payload);
    let mut argv = args.to_vec();
    argv.push(input.text().to_owned());
    let invocation_id = ctx.sink.new_id();
    ctx.sink.record(EventBody::HookInvoked(HookInvokedEvent {
        turn: None,
        invocation_id: invocation_id.clone(),
        dialect: Dialect::Codex,
        event: NOTIFY_EVENT.to_owned(),
        seam: Seam::TurnEnd,
        matcher: None,
        origin: Some(notify.origin_label()),
        command: notify.command(),
        input,
        call_id: None,
    }));
    let run = plugin
        .engine()
        .runner()
        .run(
            HookSpec {
                program: HookProgram::Exec {
                    program: program.clone(),
                    args: argv,
                },
                cwd: ctx.session.cwd.clone(),
                env: Vec::new(),
                stdin: Vec::new(),
                timeout: NOTIFY_TIMEOUT,
            },
            &CancellationToken::new(),
        )
        .await;
    ctx.sink.record(ProcessFacts::of(&run).into_event(
        None,
        invocation_id,
        None,
        HookDecision {
            why: Some("legacy notify is fire-and-forget; its output is ignored".to_owned()),
            ..HookDecision::default()
        },
    ));
}
