//! The turn seams: Codex Stop hooks (their continuation prompts and dsh's
//! cap on consecutive blocks) and the legacy `notify` program at turn end.

use dsh_hook_runner::RunRecord as ProcessFacts;
use dsh_hook_runner::{HookProgram, HookSpec};
use dsh_protocol::{Dialect, EventBody, HookDecision, Seam};
use dsh_seams::{
    CancellationToken, ContinuationDecision, ContinuationInput, NoticeLevel, SeamContext,
    TurnSummary, UserNotice,
};

use super::{CodexPlugin, NOTIFY_TIMEOUT, turn_id};
use crate::config::{NOTIFY_EVENT, NotifyConfig, TrustPolicy, TrustState};
use crate::event::CodexEvent;
use crate::payload;
use crate::translate::{self, StopAnswer, StopRun};

impl CodexPlugin {
    pub(super) async fn on_turn_continuation(
        &self,
        ctx: &SeamContext,
        input: &ContinuationInput,
    ) -> ContinuationDecision {
        let last = Some(input.last_assistant_message.as_str()).filter(|text| !text.is_empty());
        let payload = payload::stop(
            &self.base(ctx),
            &Self::turn_id(ctx),
            input.forced_continuations > 0,
            last,
        );
        self.continuation(
            ctx,
            CodexEvent::Stop,
            payload,
            None,
            input.forced_continuations,
        )
        .await
    }

    /// Stop's rules for `event` (Stop, or SubagentStop inside a subagent):
    /// a `continue: false` halts, blocks become continuation prompts, and
    /// dsh's cap on consecutive blocks applies.
    pub(super) async fn continuation(
        &self,
        ctx: &SeamContext,
        event: CodexEvent,
        payload: crate::payload::CodexPayload,
        matcher_input: Option<(&str, &[&str])>,
        forced_continuations: u32,
    ) -> ContinuationDecision {
        let source = format!("codex:{event}");
        let mut records = self
            .run_event(ctx, event, payload, matcher_input, None, &ctx.cancel)
            .await;
        let runs: Vec<StopRun<'_>> = records
            .iter()
            .map(|record| StopRun {
                effect: &record.reading.interpretation.effect,
                display_order: record.handler.display_order,
                source: &record.handler.source_path,
            })
            .collect();
        let cap = self.config.discovery.stop_block_cap;
        let decision = translate::stop(event, &runs, forced_continuations, cap);
        match decision.answer.clone() {
            StopAnswer::Halt(reason) => {
                Self::mark(&mut records, &decision);
                self.record(ctx, event, &records);
                ContinuationDecision::Halt { reason }
            }
            StopAnswer::Stop => {
                self.record(ctx, event, &records);
                ContinuationDecision::Stop
            }
            StopAnswer::Capped(text) => {
                Self::mark(&mut records, &decision);
                self.engine.record(ctx, event, &records, &|i, decision| {
                    if records[i].won.is_some() {
                        decision.capped = Some(text.clone());
                    }
                });
                tracing::warn!("{text}");
                ctx.sink.tell_user(UserNotice {
                    source,
                    text,
                    level: NoticeLevel::Warning,
                });
                ContinuationDecision::Stop
            }
            StopAnswer::Continue(prompt) => {
                for record in &mut records {
                    if (decision.decisive)(&record.reading.interpretation.effect) {
                        record.won = Some(true);
                    }
                }
                self.record(ctx, event, &records);
                ContinuationDecision::Continue {
                    reason: Some(prompt),
                    source,
                    contexts: Vec::new(),
                }
            }
        }
    }

    /// Whether `notify` runs under the session's trust policy, like any
    /// other handler (see [`crate::config::NotifyConfig`]).
    pub(super) fn may_run_notify(&self, notify: &NotifyConfig) -> bool {
        match self.engine.dialect().policy {
            TrustPolicy::RunAll => notify.trust != TrustState::Disabled,
            TrustPolicy::TrustedOnly => notify.trust.runs_when_trusted_only(),
        }
    }

    /// Runs `notify` after a finished turn. The turn is already closed in
    /// the log, so its run is recorded session-scoped (no turn).
    pub(super) async fn run_notify(
        &self,
        ctx: &SeamContext,
        notify: &NotifyConfig,
        summary: &TurnSummary,
    ) {
        let Some((program, args)) = notify.argv.split_first() else {
            return;
        };
        let payload = payload::notify(
            &ctx.session.session_id,
            &turn_id(&ctx.session.session_id, summary.turn),
            &ctx.session.cwd.display().to_string(),
            std::slice::from_ref(&summary.prompt),
            summary.last_assistant_message.as_deref(),
        );
        let json_arg = serde_json::to_string(&payload).unwrap_or_default();
        let mut argv = args.to_vec();
        argv.push(json_arg);
        let invocation_id = ctx.sink.new_id();
        ctx.sink.record(EventBody::HookInvoked {
            turn: None,
            invocation_id: invocation_id.clone(),
            dialect: Dialect::Codex,
            event: NOTIFY_EVENT.to_owned(),
            seam: Seam::TurnEnd,
            matcher: None,
            origin: Some(notify.origin_label()),
            command: notify.command(),
            input: payload.clone(),
            call_id: None,
        });
        let run = self
            .engine
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
}
