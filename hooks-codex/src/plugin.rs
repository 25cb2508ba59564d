//! The Codex bridge as one `dsh_seams::Plugin`: selects handlers (trust
//! policy, matchers) and hands each firing to the shared engine
//! (`dsh-hooks`), which records `hook/invoked`, runs them in parallel and
//! reads them with Codex's interpreter; the bridge merges the outcomes into
//! seam decisions and the engine records `hook/result` in configuration
//! order.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use dsh_hook_runner::HookRunner;
use dsh_hooks::{Engine, Request, mark_winner};
use dsh_model::ModelError;
use dsh_protocol::{ModelReply, ModelRequest, TurnEndReason};
use dsh_seams::{
    ApprovalDecision, CallReview, CancellationToken, ContextEntry, ContinuationDecision,
    ContinuationInput, Plugin, PostToolDecision, PreToolVerdict, PromptDecision, PromptInput,
    ProposedCall, SeamContext, SessionEndReason, SessionStartSource, ToolExecution, ToolOutcome,
    TurnSummary,
};
use sha2::{Digest, Sha256};

use crate::config::{CodexConfig, NotifyConfig};
use crate::dialect::{Codex, Reading};
use crate::event::CodexEvent;
use crate::output::Effect;
use crate::payload::{self, CodexPayload, CodexTokenUsage, PayloadBase};
use crate::translate::{self, Translated};

mod compact;
mod subagents;
mod tool_seams;
mod turns;

pub use crate::config::TrustPolicy;

/// The plugin's name and the prefix of every source it reports.
pub const PLUGIN_NAME: &str = "codex-hooks";

/// How long a legacy `notify` program may run (Codex does not wait for it;
/// dsh waits so the log stays in order, but not forever).
pub(crate) const NOTIFY_TIMEOUT: Duration = Duration::from_secs(60);

/// The Codex hooks bridge.
pub struct CodexPlugin {
    notify: Option<NotifyConfig>,
    engine: Engine<Codex>,
    config: CodexConfig,
    permission_mode: Option<String>,
}

impl CodexConfig {
    /// The bridge plugin over this configuration.
    pub fn into_plugin(self, runner: HookRunner, policy: TrustPolicy) -> Arc<dyn Plugin> {
        Arc::new(CodexPlugin::new(self, runner, policy))
    }
}

/// One awaited run, read.
type Fired = dsh_hooks::Fired<Codex>;

/// The runs' effects, in configuration order (what [`translate`] reads).
fn effects(records: &[Fired]) -> Vec<&Effect> {
    records
        .iter()
        .map(|record| &record.reading.interpretation.effect)
        .collect()
}

/// A stable, UUID-shaped id for turn `turn` of `session_id` (the same on replay).
pub fn turn_id(session_id: &str, turn: u64) -> String {
    let digest = Sha256::digest(format!("{session_id}:turn:{turn}").as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    bytes[6] = (bytes[6] & 0x0f) | 0x80;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    uuid::Uuid::from_bytes(bytes).to_string()
}

pub use crate::translate::{
    hook_prompt, permission_denied_text, pre_tool_block_text, pre_tool_block_text_for,
};

impl CodexPlugin {
    /// A plugin over `config`.
    pub fn new(config: CodexConfig, runner: HookRunner, policy: TrustPolicy) -> Self {
        CodexPlugin {
            notify: config.notify.clone(),
            engine: Engine::new(
                Codex {
                    handlers: config.handlers.clone(),
                    policy,
                    shell: config.discovery.shell.clone(),
                    spill_dir: config.discovery.spill_dir.clone(),
                },
                runner,
            ),
            config,
            permission_mode: None,
        }
    }

    /// Overrides `permission_mode` (default: `default` for interactive
    /// sessions, `bypassPermissions` for headless and replayed ones).
    pub fn with_permission_mode(mut self, mode: impl Into<String>) -> Self {
        self.permission_mode = Some(mode.into());
        self
    }

    fn base(&self, ctx: &SeamContext) -> PayloadBase {
        PayloadBase {
            session_id: ctx.session.session_id.clone(),
            transcript_path: None,
            cwd: ctx.session.cwd.display().to_string(),
            model: ctx.session.model.clone(),
            permission_mode: self.permission_mode.clone().unwrap_or_else(|| {
                // Codex reports its approval policy (never → bypassPermissions).
                if let Some(policy) = &self.config.approval.policy {
                    policy.value.permission_mode().to_owned()
                } else if ctx.session.interactive {
                    "default".to_owned()
                } else {
                    "bypassPermissions".to_owned()
                }
            }),
        }
    }

    fn turn_id(ctx: &SeamContext) -> String {
        turn_id(&ctx.session.session_id, ctx.turn.unwrap_or(0))
    }

    /// Runs every selected handler of `event` with `payload` through the
    /// engine (`hook/invoked` for each before any starts). Results are
    /// recorded by the caller, after merging, with [`CodexPlugin::record`].
    async fn run_event(
        &self,
        ctx: &SeamContext,
        event: CodexEvent,
        payload: CodexPayload,
        matcher_input: Option<(&str, &[&str])>,
        call_id: Option<&str>,
        cancel: &CancellationToken,
    ) -> Vec<Fired> {
        let request = Request {
            event,
            subject: matcher_input,
            payload,
            call_id,
            cancel,
        };
        self.engine.dispatch(ctx, request).await
    }

    fn record(&self, ctx: &SeamContext, event: CodexEvent, records: &[Fired]) {
        self.engine.finish(ctx, event, records);
    }

    fn context_entries(event: CodexEvent, records: &[Fired]) -> Vec<ContextEntry> {
        records
            .iter()
            .flat_map(|record| {
                record.reading.contexts.iter().map(move |text| {
                    ContextEntry::new(
                        text.clone(),
                        format!("codex:{event}:{}", record.handler.origin),
                    )
                })
            })
            .collect()
    }

    /// Marks the run `translated` names as the winner.
    fn mark<T>(records: &mut [Fired], translated: &Translated<T>) {
        Self::mark_won(records, translated.winner, translated.decisive);
    }

    fn mark_won(records: &mut [Fired], winner: Option<usize>, decisive: impl Fn(&Effect) -> bool) {
        mark_winner(records, winner, |reading: &Reading| {
            decisive(&reading.interpretation.effect)
        });
    }
}

#[async_trait]
impl Plugin for CodexPlugin {
    fn name(&self) -> &str {
        PLUGIN_NAME
    }

    async fn session_start(
        &self,
        ctx: &SeamContext,
        source: SessionStartSource,
    ) -> Vec<ContextEntry> {
        let event = CodexEvent::SessionStart;
        let payload = payload::session_start(&self.base(ctx), source.as_str());
        let mut records = self
            .run_event(
                ctx,
                event,
                payload,
                Some((source.as_str(), &[])),
                None,
                &ctx.cancel,
            )
            .await;
        let stop = translate::session_start(&effects(&records));
        Self::mark(&mut records, &stop);
        self.record(ctx, event, &records);
        if let Some(reason) = stop.answer {
            ctx.control.request_stop(reason, "codex:SessionStart");
        }
        Self::context_entries(event, &records)
    }

    async fn prompt_submit(&self, ctx: &SeamContext, prompt: &PromptInput) -> PromptDecision {
        let event = CodexEvent::UserPromptSubmit;
        let payload =
            payload::user_prompt_submit(&self.base(ctx), &Self::turn_id(ctx), &prompt.content);
        let mut records = self
            .run_event(ctx, event, payload, None, None, &ctx.cancel)
            .await;
        let contexts = Self::context_entries(event, &records);
        let decision = translate::user_prompt_submit(&effects(&records), contexts);
        Self::mark(&mut records, &decision);
        self.record(ctx, event, &records);
        decision.answer
    }

    async fn rewrite_input(&self, ctx: &SeamContext, call: &ProposedCall) -> CallReview {
        self.run_pre_tool_use(ctx, &call.call_id, &call.tool, &call.arguments)
            .await
    }

    async fn approve(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        ask: &dsh_seams::ApprovalAsk,
        review: Option<&PreToolVerdict>,
    ) -> ApprovalDecision {
        self.on_approve(ctx, exec, ask.reason.as_deref(), review)
            .await
    }

    async fn post_execute(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        outcome: &ToolOutcome,
        duration: Duration,
    ) -> PostToolDecision {
        self.on_post_execute(ctx, exec, outcome, duration).await
    }

    async fn turn_continuation(
        &self,
        ctx: &SeamContext,
        input: &ContinuationInput,
    ) -> ContinuationDecision {
        self.on_turn_continuation(ctx, input).await
    }

    async fn subagent_start(
        &self,
        ctx: &SeamContext,
        input: &dsh_seams::SubagentStartInput,
    ) -> Vec<ContextEntry> {
        self.on_subagent_start(ctx, input).await
    }

    async fn subagent_stop(
        &self,
        ctx: &SeamContext,
        input: &dsh_seams::SubagentStopInput,
    ) -> ContinuationDecision {
        self.on_subagent_stop(ctx, input).await
    }

    async fn before_model_request(&self, ctx: &SeamContext, _request: &ModelRequest) {
        let payload = payload::pre_model_request(&self.base(ctx), &Self::turn_id(ctx));
        let records = self
            .run_event(
                ctx,
                CodexEvent::PreModelRequest,
                payload,
                None,
                None,
                &ctx.cancel,
            )
            .await;
        self.record(ctx, CodexEvent::PreModelRequest, &records);
    }

    async fn after_model_request(
        &self,
        ctx: &SeamContext,
        _request: &ModelRequest,
        result: Result<&ModelReply, &ModelError>,
    ) {
        let result = match result {
            Ok(reply) => Ok(reply.usage.map(|usage| CodexTokenUsage {
                input_tokens: usage.input_tokens,
                cached_input_tokens: usage.cache_read_input_tokens,
                cache_write_input_tokens: usage.cache_creation_input_tokens,
                output_tokens: usage.output_tokens,
                ..CodexTokenUsage::default()
            })),
            Err(error) => Err(error.message.as_str()),
        };
        let payload = payload::post_model_request(&self.base(ctx), &Self::turn_id(ctx), result);
        let records = self
            .run_event(
                ctx,
                CodexEvent::PostModelRequest,
                payload,
                None,
                None,
                &ctx.cancel,
            )
            .await;
        self.record(ctx, CodexEvent::PostModelRequest, &records);
    }

    async fn turn_end(&self, ctx: &SeamContext, summary: &TurnSummary) {
        match summary.reason {
            TurnEndReason::Interrupted => {
                let payload = payload::interrupt(
                    &self.base(ctx),
                    &turn_id(&ctx.session.session_id, summary.turn),
                );
                // The turn's own token is already cancelled: run on a fresh one.
                let records = self
                    .run_event(
                        ctx,
                        CodexEvent::Interrupt,
                        payload,
                        None,
                        None,
                        &CancellationToken::new(),
                    )
                    .await;
                self.record(ctx, CodexEvent::Interrupt, &records);
            }
            TurnEndReason::Completed | TurnEndReason::Stopped => {
                if let Some(notify) = &self.notify
                    && self.may_run_notify(notify)
                {
                    self.run_notify(ctx, notify, summary).await;
                }
            }
            TurnEndReason::Rejected | TurnEndReason::Error | TurnEndReason::MaxSteps => {}
        }
    }

    async fn session_before_compact(
        &self,
        ctx: &SeamContext,
        input: &dsh_seams::CompactionInput,
    ) -> dsh_seams::CompactionDecision {
        self.on_before_compact(ctx, input).await
    }

    async fn session_compacted(
        &self,
        ctx: &SeamContext,
        outcome: &dsh_seams::CompactionOutcome,
    ) -> Vec<ContextEntry> {
        self.on_compacted(ctx, outcome).await
    }

    async fn session_end(&self, ctx: &SeamContext, _reason: SessionEndReason) {
        let payload = payload::session_end(&self.base(ctx));
        let records = self
            .run_event(
                ctx,
                CodexEvent::SessionEnd,
                payload,
                None,
                None,
                &CancellationToken::new(),
            )
            .await;
        self.record(ctx, CodexEvent::SessionEnd, &records);
    }
}
