//! The turn seams: Codex Stop hooks (their continuation prompts and dsh's
//! cap on consecutive blocks) and the legacy `notify` program at turn end.

use dsh_hook_runner::RunRecord as ProcessFacts;
use dsh_hook_runner::{HookProgram, HookSpec};
use dsh_protocol::{Dialect, EventBody, HookDecision, Seam};
use dsh_seams::{
    CancellationToken, ContinuationDecision, ContinuationInput, NoticeLevel, SeamContext,
    TurnSummary, UserNotice,
};

use super::{CodexPlugin, NOTIFY_TIMEOUT, effects, hook_prompt, turn_id};
use crate::config::{NOTIFY_EVENT, NotifyConfig, TrustPolicy, TrustState};
use crate::event::CodexEvent;
use crate::output::Effect;
use crate::payload;
use crate::translate;

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
        let halt = translate::stop_halt(event, &effects(&records));
        if let Some(reason) = halt.answer.clone() {
            Self::mark(&mut records, &halt);
            self.record(ctx, event, &records);
            return ContinuationDecision::Halt { reason };
        }
        let prompts: Vec<String> = records
            .iter()
            .filter_map(|record| match &record.reading.interpretation.effect {
                Effect::Block { reason } => Some(hook_prompt(
                    event,
                    record.handler.display_order,
                    &record.handler.source_path,
                    reason,
                )),
                Effect::None
                | Effect::Stop { .. }
                | Effect::Rewrite { .. }
                | Effect::PermissionAllow
                | Effect::PermissionDeny { .. } => None,
            })
            .collect();
        if prompts.is_empty() {
            self.record(ctx, event, &records);
            return ContinuationDecision::Stop;
        }
        let cap = self.config.discovery.stop_block_cap;
        if forced_continuations >= cap {
            let text = format!(
                "Codex {event} hooks blocked {forced_continuations} consecutive times in this turn; dsh's cap is {cap}, so the turn ends (Codex itself has no cap)",
            );
            Self::mark_won(&mut records, None, |effect| {
                matches!(effect, Effect::Block { .. })
            });
            self.engine.record(ctx, event, &records, &|i, decision| {
                if records[i].won.is_some() {
                    decision.capped = Some(text.clone());
                }
            });
            tracing::warn!("{text}");
            ctx.sink.tell_user(UserNotice {
                source: source.clone(),
                text,
                level: NoticeLevel::Warning,
            });
            return ContinuationDecision::Stop;
        }
        for record in &mut records {
            if matches!(record.reading.interpretation.effect, Effect::Block { .. }) {
                record.won = Some(true);
            }
        }
        self.record(ctx, event, &records);
        ContinuationDecision::Continue {
            reason: Some(prompts.join("\n")),
            source,
            contexts: Vec::new(),
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
