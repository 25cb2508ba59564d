//! The Codex bridge on dsh's seams, as pure per-event functions over the
//! shared bridge plugin (`dsh_hooks::BridgePlugin`): each seam builds its
//! event's payload ([`crate::payload`]), hands the runs' effects to
//! [`crate::translate`] (Codex's aggregation and model-facing texts) and
//! says which run won. The plugin fires the event through the shared
//! engine, which records `hook/invoked`, runs the handlers in parallel and
//! reads them with Codex's interpreter, then marks the winner and records
//! `hook/result` in configuration order.

use std::sync::Arc;
use std::time::Duration;

use dsh_hook_runner::HookRunner;
use dsh_hooks::{BoxFuture, Bridge, BridgePlugin, Cx, Dialect as _, Fire, Flow, Record};
use dsh_model::ModelError;
use dsh_protocol::{ModelReply, ModelRequest};
use dsh_seams::{
    ApprovalAsk, ApprovalDecision, CallReview, CompactionDecision, CompactionInput,
    CompactionOutcome, ContextEntry, ContinuationDecision, ContinuationInput, Plugin,
    PostToolDecision, PreToolVerdict, PromptDecision, PromptInput, ProposedCall, SeamContext,
    SessionEndReason, SessionStartSource, SubagentStartInput, SubagentStopInput, ToolExecution,
    ToolOutcome, TurnSummary,
};
use sha2::{Digest, Sha256};

use crate::config::CodexConfig;
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

impl CodexConfig {
    /// The bridge plugin over this configuration.
    pub fn into_plugin(self, runner: HookRunner, policy: TrustPolicy) -> Arc<dyn Plugin> {
        self.plugin(runner, policy, None)
    }

    /// The bridge plugin, its payloads' `permission_mode` set to `mode`
    /// when given (default: Codex's approval policy, else `default` for
    /// interactive sessions and `bypassPermissions` for headless ones).
    pub(crate) fn plugin(
        self,
        runner: HookRunner,
        policy: TrustPolicy,
        mode: Option<String>,
    ) -> Arc<dyn Plugin> {
        let codex = Codex {
            handlers: self.handlers,
            policy,
            shell: self.discovery.shell,
            spill_dir: self.discovery.spill_dir,
            notify: self.notify,
            stop_block_cap: self.discovery.stop_block_cap,
            approval: self.approval.policy.map(|setting| setting.value),
            permission_mode: mode,
        };
        BridgePlugin::shared(codex, runner)
    }
}

/// One awaited run, read.
type Fired = dsh_hooks::Fired<Codex>;
type Flows<'a, Out> = Flow<'a, Codex, Out>;

/// The runs' effects, in configuration order (what [`translate`] reads).
fn effects(records: &[Fired]) -> Vec<&Effect> {
    records
        .iter()
        .map(|record| &record.reading.interpretation.effect)
        .collect()
}

/// How a translated answer's runs are recorded: its winner among the runs
/// its decisive effects select.
fn marked<T>(translated: &Translated<T>) -> Record<fn(&Effect) -> bool> {
    Record::At(translated.winner, translated.decisive)
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

fn ctx_turn_id(ctx: &SeamContext) -> String {
    turn_id(&ctx.session.session_id, ctx.turn.unwrap_or(0))
}

/// `event` with `payload`, matched against `subject` (no aliases).
fn fire(event: CodexEvent, payload: CodexPayload, subject: Option<&str>) -> Fire<Codex> {
    Fire::new(
        event,
        subject.map(|name| (name.to_owned(), &[][..])),
        payload,
    )
}

/// The runs' contexts, each from `<source>:<origin>`.
fn context_entries(source: &str, records: &[Fired]) -> Vec<ContextEntry> {
    records
        .iter()
        .flat_map(|record| {
            let from = format!("{source}:{}", record.handler.origin);
            let texts = record.reading.contexts.iter();
            texts.map(move |text| ContextEntry::new(text.clone(), from.clone()))
        })
        .collect()
}

impl Codex {
    fn base(&self, ctx: &SeamContext) -> PayloadBase {
        PayloadBase {
            session_id: ctx.session.session_id.clone(),
            transcript_path: None,
            cwd: ctx.session.cwd.display().to_string(),
            model: ctx.session.model.clone(),
            permission_mode: self.permission_mode.clone().unwrap_or_else(|| {
                // Codex reports its approval policy (never → bypassPermissions).
                if let Some(policy) = self.approval {
                    policy.permission_mode().to_owned()
                } else if ctx.session.interactive {
                    "default".to_owned()
                } else {
                    "bypassPermissions".to_owned()
                }
            }),
        }
    }
}

impl Bridge for Codex {
    type State = ();
    /// The hook tool name and its aliases, or the source it is matched as.
    type Key = Option<(String, &'static [&'static str])>;
    /// Which effects count as decisive ([`Translated::decisive`]).
    type Decisive = fn(&Effect) -> bool;

    fn plugin_name(&self) -> &'static str {
        PLUGIN_NAME
    }

    fn subject<'k>(&self, key: &'k Self::Key) -> Option<(&'k str, &'k [&'k str])> {
        key.as_ref()
            .map(|(name, aliases)| (name.as_str(), *aliases))
    }

    fn holds(&self, decisive: fn(&Effect) -> bool, reading: &Reading) -> bool {
        decisive(&reading.interpretation.effect)
    }

    fn session_start<'a>(
        cx: Cx<'_, Self>,
        source: SessionStartSource,
    ) -> Flows<'a, Vec<ContextEntry>> {
        let event = CodexEvent::SessionStart;
        let payload = payload::session_start(&cx.bridge.base(cx.ctx), source.as_str());
        Flow::fire(
            fire(event, payload, Some(source.as_str())),
            move |cx, runs| {
                let stop = translate::session_start(&effects(runs));
                let record = marked(&stop);
                let source = cx.bridge.source(event);
                let contexts = context_entries(&source, runs);
                let then = Flow::later(move |cx| {
                    if let Some(reason) = stop.answer {
                        cx.ctx.control.request_stop(reason, source);
                    }
                    Flow::Done(contexts)
                });
                (record, then)
            },
        )
    }

    fn prompt_submit<'a>(cx: Cx<'_, Self>, prompt: &'a PromptInput) -> Flows<'a, PromptDecision> {
        let event = CodexEvent::UserPromptSubmit;
        let base = cx.bridge.base(cx.ctx);
        let payload = payload::user_prompt_submit(&base, &ctx_turn_id(cx.ctx), &prompt.content);
        Flow::fire(fire(event, payload, None), move |cx, runs| {
            let contexts = context_entries(&cx.bridge.source(event), runs);
            let decision = translate::user_prompt_submit(&effects(runs), contexts);
            (marked(&decision), Flow::Done(decision.answer))
        })
    }

    fn rewrite_input<'a>(cx: Cx<'_, Self>, call: &'a ProposedCall) -> Flows<'a, CallReview> {
        tool_seams::pre_tool_use(cx, call)
    }

    fn approve<'a>(
        cx: Cx<'_, Self>,
        exec: &'a ToolExecution,
        _ask: &'a ApprovalAsk,
        _review: Option<&'a PreToolVerdict>,
    ) -> Flows<'a, ApprovalDecision> {
        tool_seams::permission_request(cx, exec)
    }

    fn post_execute<'a>(
        cx: Cx<'_, Self>,
        exec: &'a ToolExecution,
        outcome: &'a ToolOutcome,
        duration: Duration,
    ) -> Flows<'a, PostToolDecision> {
        tool_seams::post_tool_use(cx, exec, outcome, duration)
    }

    fn turn_continuation<'a>(
        cx: Cx<'_, Self>,
        input: &'a ContinuationInput,
    ) -> Flows<'a, ContinuationDecision> {
        turns::stop(cx, input)
    }

    fn session_before_compact<'a>(
        cx: Cx<'_, Self>,
        input: &'a CompactionInput,
    ) -> Flows<'a, CompactionDecision> {
        compact::pre_compact(cx, input)
    }

    fn session_end<'a>(cx: Cx<'_, Self>, _reason: SessionEndReason) -> Flows<'a, ()> {
        let payload = payload::session_end(&cx.bridge.base(cx.ctx));
        // The turn's token may be cancelled: run on a fresh one.
        Flow::notify(fire(CodexEvent::SessionEnd, payload, None).fresh(), ())
    }

    fn subagent_start<'a>(
        cx: Cx<'_, Self>,
        input: &'a SubagentStartInput,
    ) -> Flows<'a, Vec<ContextEntry>> {
        subagents::subagent_start(cx, input)
    }

    fn subagent_stop<'a>(
        cx: Cx<'_, Self>,
        input: &'a SubagentStopInput,
    ) -> Flows<'a, ContinuationDecision> {
        subagents::subagent_stop(cx, input)
    }

    fn before_model_request<'a>(cx: Cx<'_, Self>, _req: &'a ModelRequest) -> Flows<'a, ()> {
        let payload = payload::pre_model_request(&cx.bridge.base(cx.ctx), &ctx_turn_id(cx.ctx));
        Flow::notify(fire(CodexEvent::PreModelRequest, payload, None), ())
    }

    fn after_model_request<'a>(
        plugin: &'a BridgePlugin<Self>,
        ctx: &'a SeamContext,
        _request: &'a ModelRequest,
        result: Result<&'a ModelReply, &'a ModelError>,
    ) -> BoxFuture<'a, ()> {
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
        let base = plugin.bridge().base(ctx);
        let payload = payload::post_model_request(&base, &ctx_turn_id(ctx), result);
        let flow = Flow::notify(fire(CodexEvent::PostModelRequest, payload, None), ());
        Box::pin(plugin.drive(ctx, flow))
    }

    fn session_compacted<'a>(
        cx: Cx<'_, Self>,
        outcome: &'a CompactionOutcome,
    ) -> Flows<'a, Vec<ContextEntry>> {
        compact::post_compact(cx, outcome)
    }

    fn turn_end<'a>(
        plugin: &'a BridgePlugin<Self>,
        ctx: &'a SeamContext,
        summary: &'a TurnSummary,
    ) -> BoxFuture<'a, ()> {
        Box::pin(turns::turn_end(plugin, ctx, summary))
    }
}
