//! The Gemini bridge on dsh's seams, as pure per-event functions over the
//! shared bridge plugin (`dsh_hooks::BridgePlugin`): each seam builds its
//! event's payload, and reads the runs (in parallel, or one after the
//! other when a matching group is `sequential`) by Gemini's merge rules
//! into seam decisions with Gemini's model-facing texts. The plugin fires,
//! marks the runs that carried the merged decision and records
//! `hook/result` in configuration order. The model events run on the
//! provider-request seams ([`crate::model_events`]).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use dsh_hook_runner::HookRunner;
use dsh_hooks::verdict::warning;
use dsh_hooks::{
    BoxFuture, Bridge, BridgePlugin, Cx, Dialect as _, Fire, Fired, Flow, Record, Winner,
};
use dsh_model::ModelError;
use dsh_protocol::{AssistantMessageEvent, Event, EventBody, ModelReply, ModelRequest};
use dsh_seams::{
    ApprovalAsk, ApprovalDecision, CallReview, CompactionDecision, CompactionInput, ContextEntry,
    ContinuationDecision, ContinuationInput, Disposition, Plugin, PostToolAction, PostToolDecision,
    PreToolOutcome, PreToolVerdict, PromptDecision, PromptInput, ProposedCall,
    ProviderRequestDecision, SeamContext, SessionEndReason, SessionStartSource, StopRequest,
    ToolExecution, ToolOutcome,
};

use crate::config::GeminiConfig;
use crate::dialect::Gemini;
use crate::event::GeminiEvent;
use crate::model_events::{ModelFields, ModelHookAnswer, ModelHookFiring, ShownReplies};
use crate::output::{self, Interpretation, Merged};
use crate::payload::{self, Common, Payload};
use crate::tail::{self, TailOutcome};
use crate::tools;
use crate::translate::{self, AfterAgentAnswer, BeforeToolAnswer, Decisive};

/// The plugin's name.
pub const PLUGIN_NAME: &str = "gemini-hooks";

/// How many consecutive AfterAgent denials dsh follows in one turn before it
/// ends the turn (Gemini CLI has no limit and loops until killed).
pub const AFTER_AGENT_CAP: u32 = 8;

/// The AfterAgent `prompt_response` when the turn has no model text.
pub const NO_RESPONSE_TEXT: &str = "[no response text]";

/// The Gemini bridge plugin.
pub(crate) type GeminiPlugin = BridgePlugin<Gemini>;

type Flows<'a, Out> = Flow<'a, Gemini, Out>;

/// What the bridge remembers about the open turn (for AfterAgent) and the
/// calls hooks asked for.
#[derive(Debug, Default)]
pub(crate) struct State {
    prompt: String,
    texts: Vec<String>,
    /// SessionStart's context, which Gemini puts in front of the first
    /// prompt (`<hook_context>CTX</hook_context>\n\nPROMPT`) — so that is
    /// the prompt BeforeAgent and AfterAgent hooks see.
    session_context: Option<String>,
    /// Calls an AfterTool hook asked for (`tailToolCallRequest`), by call
    /// id.
    tails: BTreeMap<String, Tail>,
}

/// A call an AfterTool hook asked for in place of a call's result.
#[derive(Debug, Clone)]
struct Tail {
    /// The name of the model's original call, which the tail call's
    /// BeforeTool and AfterTool payloads carry as `original_request_name`.
    original: String,
    /// The name the request gave, which those payloads carry as
    /// `tool_name` and their matchers match.
    name: String,
}

impl GeminiConfig {
    /// The bridge plugin over this configuration.
    pub fn into_plugin(self, runner: HookRunner) -> Arc<dyn Plugin> {
        let gemini = Gemini {
            handlers: self.handlers,
            shell: self.discovery.shell.clone(),
            home: self.discovery.home.clone(),
            shown: ShownReplies::default(),
            compress_fired: AtomicBool::new(false),
            offered: Default::default(),
        };
        BridgePlugin::shared(gemini, runner)
    }
}

/// The tools `request` offers, under Gemini's names and in order.
fn offered(request: &ModelRequest) -> Vec<String> {
    let names = request.tools.iter();
    names
        .map(|tool| tools::hook_tool_name(&tool.name).to_owned())
        .collect()
}

pub(crate) fn common(ctx: &SeamContext, event: GeminiEvent) -> Common {
    Common::new(
        &ctx.session.session_id,
        &ctx.session.cwd.display().to_string(),
        event,
    )
}

fn merged(runs: &[Fired<Gemini>]) -> Merged {
    output::merge(runs.iter().map(|run| &run.reading))
}

/// Every run that carried the merged decision won, except for the
/// answers the last run wins whole (`tool_input`, `tailToolCallRequest`).
fn every(decisive: Decisive) -> Record<Decisive> {
    match decisive {
        Decisive::ToolInput | Decisive::TailCall => Record::Won(Winner::Last, decisive),
        Decisive::Stop | Decisive::Deny | Decisive::Ask => Record::Won(Winner::Every, decisive),
    }
}

fn context_entry(source: String, merged: &Merged) -> Vec<ContextEntry> {
    merged
        .additional_context
        .iter()
        .map(|context| ContextEntry::new(output::hook_context(context), source.clone()))
        .collect()
}

/// BeforeAgent over `text`: the user's prompt, or an AfterAgent retry's
/// reason (Gemini fires BeforeAgent again for the retry).
fn before_agent<'a>(ctx: &SeamContext, text: String) -> Flows<'a, PromptDecision> {
    let event = GeminiEvent::BeforeAgent;
    let body = Payload::BeforeAgent(payload::BeforeAgent {
        common: common(ctx, event),
        prompt: text,
    });
    Flow::fire(Fire::new(event, None, body), move |cx, runs| {
        let merged = merged(runs);
        if merged.deny {
            let reason = merged.reason.unwrap_or_default();
            return (
                every(Decisive::Deny),
                Flow::Done(PromptDecision::Block { reason }),
            );
        }
        if let Some(stop) = merged.stop {
            let decision = PromptDecision::Stop {
                reason: stop.unwrap_or_else(|| "BeforeAgent hook stopped the turn".to_owned()),
                // No capture shows what Gemini keeps of a stopped prompt; like
                // Codex, the prompt alone.
                kept: dsh_seams::StoppedPrompt::PromptOnly,
            };
            return (every(Decisive::Stop), Flow::Done(decision));
        }
        let decision = PromptDecision::Allow {
            rewrite: None,
            contexts: context_entry(cx.bridge.source(event), &merged),
        };
        (Record::AsRead, Flow::Done(decision))
    })
}

/// PreCompress with `trigger` (advisory).
fn pre_compress<'a>(ctx: &SeamContext, trigger: &'static str) -> Flows<'a, ()> {
    let event = GeminiEvent::PreCompress;
    let body = Payload::PreCompress(payload::PreCompress {
        common: common(ctx, event),
        trigger,
    });
    Flow::notify(Fire::new(event, Some(trigger.to_owned()), body), ())
}

impl Bridge for Gemini {
    type State = State;
    /// The tool name, session-start source, session-end reason or
    /// compression trigger the matcher is tested against.
    type Key = Option<String>;
    type Decisive = Decisive;

    fn plugin_name(&self) -> &'static str {
        PLUGIN_NAME
    }

    fn subject<'k>(&self, key: &'k Option<String>) -> Option<&'k str> {
        key.as_deref()
    }

    fn holds(&self, decisive: Decisive, reading: &Interpretation) -> bool {
        decisive.holds(reading)
    }

    fn on_event(&self, state: &mut State, event: &Event) {
        if event.agent_id.is_some() {
            return;
        }
        // The prompt is set by prompt-submit, which may come first.
        if let EventBody::TurnStart(_) = &event.body {
            state.texts.clear();
            self.shown.clear();
        } else if let EventBody::AssistantMessage(AssistantMessageEvent {
            content,
            turn,
            step,
            ..
        }) = &event.body
            && !content.is_empty()
        {
            // AfterAgent hears what AfterModel hooks had shown instead.
            let text = self
                .shown
                .shown(*turn, *step)
                .unwrap_or_else(|| content.clone());
            state.texts.push(text);
        }
    }

    fn session_start<'a>(
        cx: Cx<'_, Self>,
        start: SessionStartSource,
    ) -> Flows<'a, Vec<ContextEntry>> {
        let source_name = match start {
            SessionStartSource::Startup => "startup",
            SessionStartSource::Resume => "resume",
            SessionStartSource::Clear => "clear",
            // Gemini fires no SessionStart after compressing.
            SessionStartSource::Compact => return Flow::Done(Vec::new()),
        };
        let event = GeminiEvent::SessionStart;
        let body = Payload::SessionStart(payload::SessionStart {
            common: common(cx.ctx, event),
            source: source_name,
        });
        let firing = Fire::new(event, Some(source_name.to_owned()), body);
        Flow::fire(firing, move |cx, runs| {
            // Gemini ignores `decision` and `continue` here.
            let contexts = context_entry(cx.bridge.source(event), &merged(runs));
            cx.state.session_context = contexts.first().map(|entry| entry.content.clone());
            (Record::AsRead, Flow::Done(contexts))
        })
    }

    fn prompt_submit<'a>(cx: Cx<'_, Self>, prompt: &'a PromptInput) -> Flows<'a, PromptDecision> {
        let state = cx.state;
        state.prompt = match state.session_context.take() {
            Some(context) => format!("{context}\n\n{}", prompt.content),
            None => prompt.content.clone(),
        };
        before_agent(cx.ctx, state.prompt.clone())
    }

    fn rewrite_input<'a>(cx: Cx<'_, Self>, call: &'a ProposedCall) -> Flows<'a, CallReview> {
        let event = GeminiEvent::BeforeTool;
        let name = tools::hook_tool_name(&call.tool);
        let tail = cx.state.tails.get(&call.call_id).cloned();
        let shown = tail.as_ref().map_or(name, |tail| tail.name.as_str());
        let body = Payload::BeforeTool(payload::BeforeTool {
            common: common(cx.ctx, event),
            tool_name: shown.to_owned(),
            tool_input: tools::hook_tool_input(&call.tool, &call.arguments),
            original_request_name: tail.as_ref().map(|tail| tail.original.clone()),
        });
        let firing = Fire::new(event, Some(shown.to_owned()), body).call(&call.call_id);
        Flow::fire(firing, move |cx, runs| {
            let source = cx.bridge.source(event);
            // The rewrite is the last object given (configuration order).
            let by = runs
                .iter()
                .rev()
                .find(|run| run.reading.tool_input.given().is_some())
                .map_or_else(
                    || source.clone(),
                    |run| format!("{source}:{}", run.handler.origin),
                );
            let (answer, decisive) = translate::before_tool(&merged(runs), call, name, by);
            let BeforeToolAnswer {
                decision,
                rewrite,
                stop,
            } = answer;
            let mut verdict = PreToolVerdict::of(PreToolOutcome {
                decision,
                contexts: Vec::new(),
            });
            verdict.stop = stop.map(|reason| StopRequest { reason, source });
            let review = CallReview {
                rewrite,
                verdict: Some(verdict),
            };
            (decisive.map_or(Record::AsRead, every), Flow::Done(review))
        })
    }

    fn approve<'a>(
        cx: Cx<'_, Self>,
        exec: &'a ToolExecution,
        _ask: &'a ApprovalAsk,
        _review: Option<&'a PreToolVerdict>,
    ) -> Flows<'a, ApprovalDecision> {
        // Gemini fires Notification (ToolPermission) whenever a call waits
        // for confirmation; it is advisory.
        let event = GeminiEvent::Notification;
        let details = payload::confirmation_details(&exec.tool, &exec.arguments);
        let body = Payload::Notification(payload::Notification {
            common: common(cx.ctx, event),
            notification_type: "ToolPermission",
            message: format!("Tool {} requires execution", details.title()),
            details,
        });
        let firing = Fire::new(event, None, body).call(&exec.call_id);
        Flow::notify(firing, ApprovalDecision::Abstain)
    }

    fn post_execute<'a>(
        cx: Cx<'_, Self>,
        exec: &'a ToolExecution,
        outcome: &'a ToolOutcome,
        _duration: Duration,
    ) -> Flows<'a, PostToolDecision> {
        let tail = cx.state.tails.remove(&exec.call_id);
        if outcome.disposition != Disposition::Executed {
            return Flow::Done(PostToolDecision::accept());
        }
        let rewritten = exec
            .rewritten_by
            .as_deref()
            .is_some_and(|by| by.starts_with("gemini:"));
        let mut content = outcome.content.clone();
        if rewritten {
            content.push_str(output::REWRITE_NOTICE);
        }
        let event = GeminiEvent::AfterTool;
        let name = tools::hook_tool_name(&exec.tool);
        let original_request_name = tail.as_ref().map(|tail| tail.original.clone());
        let shown = tail.map_or_else(|| name.to_owned(), |tail| tail.name);
        let body = Payload::AfterTool(payload::AfterTool {
            common: common(cx.ctx, event),
            tool_name: shown.clone(),
            tool_input: tools::hook_tool_input(&exec.tool, &exec.arguments),
            tool_response: tools::hook_tool_response(
                &exec.tool,
                &exec.arguments,
                &cx.ctx.session.cwd,
                outcome.is_error,
                &outcome.content,
                outcome.value.as_ref(),
            ),
            original_request_name: original_request_name.clone(),
        });
        let firing = Fire::new(event, Some(shown), body).call(&exec.call_id);
        Flow::fire(firing, move |cx, runs| {
            let merged = merged(runs);
            let (record, action) = if let Some(stop) = &merged.stop {
                let text = output::stopped_text(stop.as_deref());
                cx.ctx
                    .control
                    .request_stop(text.clone(), cx.bridge.source(event));
                (
                    every(Decisive::Stop),
                    PostToolAction::Block { feedback: text },
                )
            } else if merged.deny {
                // The model gets the reason with no prefix (`Tool result
                // blocked: ` is Gemini's display text only).
                let feedback = merged.reason.clone().unwrap_or_default();
                (every(Decisive::Deny), PostToolAction::Block { feedback })
            } else if let Some(tail) = &merged.tail_call {
                let offered = cx.bridge.offered_to(cx.ctx);
                let action = match tail::resolve(tail, &offered) {
                    // The requested call runs next under this call's id;
                    // its result replaces this one for the model.
                    TailOutcome::Run {
                        tool,
                        arguments,
                        name: requested,
                    } => {
                        let original = original_request_name.unwrap_or_else(|| name.to_owned());
                        let tail = Tail {
                            original,
                            name: requested,
                        };
                        cx.state.tails.insert(exec.call_id.clone(), tail);
                        PostToolAction::TailCall { tool, arguments }
                    }
                    // Gemini refuses the call before any hook fires: its
                    // error is the result.
                    TailOutcome::Refused(feedback) => PostToolAction::Block { feedback },
                    TailOutcome::Fails(text) => {
                        cx.ctx
                            .control
                            .request_stop(text.clone(), cx.bridge.source(event));
                        PostToolAction::Block { feedback: text }
                    }
                };
                (every(Decisive::TailCall), action)
            } else if let Some(context) = &merged.additional_context {
                content.push_str("\n\n");
                content.push_str(&output::hook_context(context));
                (Record::AsRead, PostToolAction::ReplaceContent { content })
            } else if rewritten {
                (Record::AsRead, PostToolAction::ReplaceContent { content })
            } else {
                (Record::AsRead, PostToolAction::Accept)
            };
            let decision = PostToolDecision {
                action,
                contexts: Vec::new(),
            };
            (record, Flow::Done(decision))
        })
    }

    fn turn_continuation<'a>(
        cx: Cx<'_, Self>,
        input: &'a ContinuationInput,
    ) -> Flows<'a, ContinuationDecision> {
        let event = GeminiEvent::AfterAgent;
        let mut texts = cx.state.texts.clone();
        let last = input.last_assistant_message.as_str();
        if !last.is_empty() && texts.last().map(String::as_str) != Some(last) {
            texts.push(last.to_owned());
        }
        let response = if texts.is_empty() {
            NO_RESPONSE_TEXT.to_owned()
        } else {
            texts.join("\n")
        };
        let body = Payload::AfterAgent(payload::AfterAgent {
            common: common(cx.ctx, event),
            prompt: cx.state.prompt.clone(),
            prompt_response: response,
            stop_hook_active: input.forced_continuations > 0,
        });
        Flow::fire(Fire::new(event, None, body), move |cx, runs| {
            let forced = input.forced_continuations;
            let (answer, decisive) = translate::after_agent(merged(runs), forced, AFTER_AGENT_CAP);
            let won = decisive.map_or(Record::AsRead, every);
            match answer {
                AfterAgentAnswer::Halt(reason) => {
                    (won, Flow::Done(ContinuationDecision::Halt { reason }))
                }
                AfterAgentAnswer::Stop => (Record::AsRead, Flow::Done(ContinuationDecision::Stop)),
                AfterAgentAnswer::Capped(text) => {
                    let record = decisive.map_or(Record::AsRead, |decisive| {
                        Record::Capped(decisive, text.clone())
                    });
                    // Told once the runs are recorded.
                    let source = cx.bridge.source(event);
                    let tell = Flow::later(move |cx| {
                        tracing::warn!("{text}");
                        cx.ctx.sink.tell_user(warning(source, text));
                        Flow::Done(ContinuationDecision::Stop)
                    });
                    (record, tell)
                }
                AfterAgentAnswer::Retry {
                    reason,
                    clear_context,
                } => (won, retry(cx.ctx, reason, clear_context)),
            }
        })
    }

    fn before_provider_request<'a>(
        plugin: &'a GeminiPlugin,
        ctx: &'a SeamContext,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, ProviderRequestDecision> {
        Box::pin(async move {
            // Gemini fires PreCompress (`auto`) before every main-agent model
            // request, whether or not it compresses (`pc_auto`): once per
            // request, ahead of BeforeModel.
            let fired = plugin.bridge().compress_fired.swap(false, Ordering::SeqCst);
            if ctx.agent.is_none() && !fired {
                plugin.drive(ctx, pre_compress(ctx, "auto")).await;
            }
            // The main agent's tools as offered before any hook changes
            // the request (Gemini checks a tail call against its registry).
            if ctx.agent.is_none() {
                plugin.bridge().record_offered(ctx, offered(request));
            }
            crate::model_events::before_provider_request(plugin, ctx, request).await
        })
    }

    /// A subagent's requests (which skip the provider-request seam): the
    /// tools it was offered, for its tail calls.
    fn before_model_request<'a>(cx: Cx<'_, Self>, request: &'a ModelRequest) -> Flow<'a, Self, ()> {
        if cx.ctx.agent.is_some() {
            cx.bridge.record_offered(cx.ctx, offered(request));
        }
        Flow::Done(())
    }

    fn after_model_request<'a>(
        plugin: &'a GeminiPlugin,
        ctx: &'a SeamContext,
        request: &'a ModelRequest,
        result: Result<&'a ModelReply, &'a ModelError>,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Ok(reply) = result {
                let shown = &plugin.bridge().shown;
                crate::model_events::after_model_request(plugin, ctx, request, reply, shown).await;
            }
        })
    }

    fn session_before_compact<'a>(
        cx: Cx<'_, Self>,
        input: &'a CompactionInput,
    ) -> Flows<'a, CompactionDecision> {
        let trigger = input.trigger.as_str();
        pre_compress(cx.ctx, trigger).and_then(move |cx, ()| {
            // An automatic compaction runs just before a model request, which
            // would fire PreCompress (`auto`) again: that request skips it.
            if trigger == "auto" && cx.ctx.agent.is_none() {
                cx.bridge.compress_fired.store(true, Ordering::SeqCst);
            }
            // Advisory in Gemini: nothing it says changes the compression.
            Flow::Done(CompactionDecision::proceed())
        })
    }

    fn session_end<'a>(cx: Cx<'_, Self>, reason: SessionEndReason) -> Flows<'a, ()> {
        let reason = match reason {
            SessionEndReason::Exit | SessionEndReason::Other => "exit",
            SessionEndReason::Clear => "clear",
        };
        let event = GeminiEvent::SessionEnd;
        let body = Payload::SessionEnd(payload::SessionEnd {
            common: common(cx.ctx, event),
            reason,
        });
        // The turn's token may be cancelled: run on a fresh one.
        Flow::notify(Fire::new(event, Some(reason.to_owned()), body).fresh(), ())
    }
}

/// An AfterAgent denial's retry: Gemini sends the reason as a new prompt,
/// so BeforeAgent fires for it (`aa_deny_retry`): its block or stop ends
/// the turn, its context follows the reason. AfterAgent's `prompt` stays
/// the user's.
fn retry<'a>(
    ctx: &SeamContext,
    reason: String,
    clear_context: bool,
) -> Flows<'a, ContinuationDecision> {
    before_agent(ctx, reason.clone()).and_then(move |cx, decision| {
        let contexts = match decision {
            PromptDecision::Allow { contexts, .. } => contexts,
            PromptDecision::Block { reason } | PromptDecision::Stop { reason, .. } => {
                return Flow::Done(ContinuationDecision::Halt { reason });
            }
        };
        if clear_context {
            // `clearContext`: the retry starts from a fresh history holding
            // only the reason (`aa_clear_context`).
            cx.ctx.control.request_clear_history();
        }
        // The reason is the retry's new user message, verbatim.
        Flow::Done(ContinuationDecision::Continue {
            reason: Some(reason),
            source: cx.bridge.source(GeminiEvent::AfterAgent),
            contexts,
        })
    })
}

#[async_trait]
impl ModelHookFiring for GeminiPlugin {
    fn configured(&self, event: GeminiEvent) -> bool {
        // Gemini ignores matchers on model events.
        !self.engine().select(event, &None).is_empty()
    }

    async fn fire(
        &self,
        ctx: &SeamContext,
        event: GeminiEvent,
        fields: ModelFields,
    ) -> Vec<ModelHookAnswer> {
        let body = Payload::Model(payload::ModelEvent {
            common: common(ctx, event),
            fields,
        });
        let flow = Flow::fire(Fire::new(event, None, body), |_, runs| {
            let answers = runs
                .iter()
                .map(|run| ModelHookAnswer::from_reading(&run.reading))
                .collect();
            (Record::AsRead, Flow::Done(answers))
        });
        self.drive(ctx, flow).await
    }

    fn native_tool_name(&self, gemini: &str) -> Option<String> {
        Some(tools::dsh_tool_name(gemini).to_owned())
    }
}
