//! The Gemini bridge as one `dsh_seams::Plugin`: builds each event's
//! payload, hands the firing to the shared engine (`dsh-hooks`), which
//! records `hook/invoked`, runs the handlers (in parallel, or one after the
//! other when a matching group is `sequential`) and reads them with
//! Gemini's interpreter; the bridge merges the runs by Gemini's rules into
//! seam decisions with Gemini's model-facing texts, and the engine records
//! `hook/result` in configuration order.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use dsh_hook_runner::HookRunner;
use dsh_hooks::{Engine, Request, Winner};
use dsh_protocol::{Event, EventBody};
use dsh_seams::{
    ApprovalAsk, ApprovalDecision, CallReview, CancellationToken, CompactionDecision,
    CompactionInput, ContextEntry, ContinuationDecision, ContinuationInput, Disposition,
    NoticeLevel, Plugin, PostToolAction, PostToolDecision, PreToolOutcome, PreToolVerdict,
    PromptDecision, PromptInput, ProposedCall, SeamContext, SessionEndReason, SessionStartSource,
    StopRequest, ToolExecution, ToolOutcome, UserNotice,
};
use serde_json::Value;

use crate::config::GeminiConfig;
use crate::dialect::Gemini;
use crate::event::GeminiEvent;
use crate::output::{self, Decision, Interpretation, Merged};
use crate::payload::{self, Common, Payload};
use crate::tools;
use crate::translate::{self, AfterAgentAnswer, BeforeToolAnswer};

/// The plugin's name.
pub const PLUGIN_NAME: &str = "gemini-hooks";

/// How many consecutive AfterAgent denials dsh follows in one turn before it
/// ends the turn (Gemini CLI has no limit and loops until killed).
pub const AFTER_AGENT_CAP: u32 = 8;

/// The AfterAgent `prompt_response` when the turn has no model text.
pub const NO_RESPONSE_TEXT: &str = "[no response text]";

type Fired = dsh_hooks::Fired<Gemini>;

/// What the bridge remembers about the open turn (for AfterAgent).
#[derive(Debug, Default)]
struct TurnState {
    prompt: String,
    texts: Vec<String>,
    /// SessionStart's context, which Gemini puts in front of the first
    /// prompt (`<hook_context>CTX</hook_context>\n\nPROMPT`) — so that is
    /// the prompt BeforeAgent and AfterAgent hooks see.
    session_context: Option<String>,
}

/// The Gemini hooks bridge.
pub struct GeminiPlugin {
    pub(crate) engine: Engine<Gemini>,
    turn: Mutex<TurnState>,
    /// What AfterModel hooks put in place of replies (for AfterAgent).
    pub(crate) shown: ShownReplies,
    /// An automatic compaction fired PreCompress (`auto`) for the request
    /// about to go out, so that request does not fire it again.
    compress_fired: AtomicBool,
    /// Calls an AfterTool hook asked for (`tailToolCallRequest`), by call
    /// id: the name of the model's original call, which their BeforeTool
    /// and AfterTool payloads carry as `original_request_name`.
    tails: Mutex<BTreeMap<String, String>>,
}

impl GeminiConfig {
    /// The bridge plugin over this configuration.
    pub fn into_plugin(self, runner: HookRunner) -> Arc<dyn Plugin> {
        Arc::new(GeminiPlugin::new(self, runner))
    }
}

fn source(event: GeminiEvent) -> String {
    format!("gemini:{}", event.as_str())
}

impl GeminiPlugin {
    /// A plugin over `config`.
    pub fn new(config: GeminiConfig, runner: HookRunner) -> Self {
        GeminiPlugin {
            engine: Engine::new(
                Gemini {
                    handlers: config.handlers,
                    shell: config.discovery.shell.clone(),
                    home: config.discovery.home.clone(),
                },
                runner,
            ),
            turn: Mutex::new(TurnState::default()),
            shown: ShownReplies::default(),
            compress_fired: AtomicBool::new(false),
            tails: Mutex::new(BTreeMap::new()),
        }
    }

    pub(crate) fn common(ctx: &SeamContext, event: GeminiEvent) -> Common {
        Common::new(
            &ctx.session.session_id,
            &ctx.session.cwd.display().to_string(),
            event,
        )
    }

    /// Fires `event` through the engine: its handlers run in parallel,
    /// or one after the other when a selected group is `sequential`
    /// ([`crate::dialect`]). Results are recorded by the caller after
    /// merging ([`GeminiPlugin::record`]).
    pub(crate) async fn run_event(
        &self,
        ctx: &SeamContext,
        event: GeminiEvent,
        payload: Payload,
        subject: Option<&str>,
        call_id: Option<&str>,
        cancel: &CancellationToken,
    ) -> Vec<Fired> {
        let request = Request {
            event,
            subject,
            payload,
            call_id,
            cancel,
        };
        self.engine.dispatch(ctx, request).await
    }

    pub(crate) fn record(&self, ctx: &SeamContext, event: GeminiEvent, fired: &[Fired]) {
        self.engine.finish(ctx, event, fired);
    }

    fn merged(fired: &[Fired]) -> Merged {
        output::merge(fired.iter().map(|run| &run.reading))
    }

    /// Marks every run that carried the merged decision as a winner.
    fn mark(fired: &mut [Fired], decisive: impl Fn(&Interpretation) -> bool) {
        dsh_hooks::mark(fired, Winner::Every, decisive);
    }

    fn context_entry(event: GeminiEvent, merged: &Merged) -> Vec<ContextEntry> {
        merged
            .additional_context
            .iter()
            .map(|context| ContextEntry::new(output::hook_context(context), source(event)))
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, TurnState> {
        self.turn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The original call's name when `call_id` runs a tail call.
    fn original_request_name(&self, call_id: &str) -> Option<String> {
        self.tails
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(call_id)
            .cloned()
    }
}

impl GeminiPlugin {
    /// BeforeAgent over `text`: the user's prompt, or an AfterAgent
    /// retry's reason (Gemini fires BeforeAgent again for the retry).
    async fn before_agent(&self, ctx: &SeamContext, text: String) -> PromptDecision {
        let event = GeminiEvent::BeforeAgent;
        let body = Payload::BeforeAgent(payload::BeforeAgent {
            common: Self::common(ctx, event),
            prompt: text,
        });
        let mut fired = self
            .run_event(ctx, event, body, None, None, &ctx.cancel)
            .await;
        let merged = Self::merged(&fired);
        if merged.deny {
            Self::mark(&mut fired, denies);
            self.record(ctx, event, &fired);
            return PromptDecision::Block {
                reason: merged.reason.unwrap_or_default(),
            };
        }
        if let Some(stop) = merged.stop {
            Self::mark(&mut fired, |r| r.stop.is_some());
            self.record(ctx, event, &fired);
            return PromptDecision::Stop {
                reason: stop.unwrap_or_else(|| "BeforeAgent hook stopped the turn".to_owned()),
                // No capture shows what Gemini keeps of a stopped prompt; like
                // Codex, the prompt alone.
                kept: dsh_seams::StoppedPrompt::PromptOnly,
            };
        }
        self.record(ctx, event, &fired);
        PromptDecision::Allow {
            rewrite: None,
            contexts: Self::context_entry(event, &merged),
        }
    }
}

impl GeminiPlugin {
    /// Fires PreCompress with `trigger` (advisory).
    async fn pre_compress(&self, ctx: &SeamContext, trigger: &'static str) {
        let event = GeminiEvent::PreCompress;
        let body = Payload::PreCompress(payload::PreCompress {
            common: Self::common(ctx, event),
            trigger,
        });
        let fired = self
            .run_event(ctx, event, body, Some(trigger), None, &ctx.cancel)
            .await;
        self.record(ctx, event, &fired);
    }
}

fn denies(reading: &Interpretation) -> bool {
    matches!(reading.decision, Decision::Deny { .. })
}

#[async_trait]
impl Plugin for GeminiPlugin {
    fn name(&self) -> &str {
        PLUGIN_NAME
    }

    fn on_event(&self, event: &Event) {
        if event.agent_id.is_some() {
            return;
        }
        // The prompt is set by prompt-submit, which may come first.
        if let EventBody::TurnStart { .. } = &event.body {
            self.lock().texts.clear();
            self.shown.clear();
        } else if let EventBody::AssistantMessage {
            content,
            turn,
            step,
            ..
        } = &event.body
            && !content.is_empty()
        {
            // AfterAgent hears what AfterModel hooks had shown instead.
            let text = self
                .shown
                .shown(*turn, *step)
                .unwrap_or_else(|| content.clone());
            self.lock().texts.push(text);
        }
    }

    async fn session_start(
        &self,
        ctx: &SeamContext,
        start: SessionStartSource,
    ) -> Vec<ContextEntry> {
        let source_name = match start {
            SessionStartSource::Startup => "startup",
            SessionStartSource::Resume => "resume",
            SessionStartSource::Clear => "clear",
            // Gemini fires no SessionStart after compressing.
            SessionStartSource::Compact => return Vec::new(),
        };
        let event = GeminiEvent::SessionStart;
        let body = Payload::SessionStart(payload::SessionStart {
            common: Self::common(ctx, event),
            source: source_name,
        });
        let fired = self
            .run_event(ctx, event, body, Some(source_name), None, &ctx.cancel)
            .await;
        // Gemini ignores `decision` and `continue` here.
        self.record(ctx, event, &fired);
        let contexts = Self::context_entry(event, &Self::merged(&fired));
        self.lock().session_context = contexts.first().map(|entry| entry.content.clone());
        contexts
    }

    async fn prompt_submit(&self, ctx: &SeamContext, prompt: &PromptInput) -> PromptDecision {
        let text = {
            let mut state = self.lock();
            state.prompt = match state.session_context.take() {
                Some(context) => format!("{context}\n\n{}", prompt.content),
                None => prompt.content.clone(),
            };
            state.prompt.clone()
        };
        self.before_agent(ctx, text).await
    }

    async fn rewrite_input(&self, ctx: &SeamContext, call: &ProposedCall) -> CallReview {
        let event = GeminiEvent::BeforeTool;
        let name = tools::hook_tool_name(&call.tool);
        let body = Payload::BeforeTool(payload::BeforeTool {
            common: Self::common(ctx, event),
            tool_name: name.to_owned(),
            tool_input: tools::hook_tool_input(&call.tool, &call.arguments),
            original_request_name: self.original_request_name(&call.call_id),
        });
        let mut fired = self
            .run_event(
                ctx,
                event,
                body,
                Some(name),
                Some(&call.call_id),
                &ctx.cancel,
            )
            .await;
        let merged = Self::merged(&fired);
        let by = fired
            .iter()
            .find(|run| run.reading.tool_input.is_some())
            .map(|run| format!("gemini:BeforeTool:{}", run.handler.origin))
            .unwrap_or_else(|| source(event));
        let (answer, decisive) = translate::before_tool(&merged, call, name, by);
        if let Some(decisive) = decisive {
            Self::mark(&mut fired, |r| decisive.holds(r));
        }
        let BeforeToolAnswer {
            decision,
            rewrite,
            stop,
        } = answer;
        let stop = stop.map(|reason| StopRequest {
            reason,
            source: source(event),
        });
        self.record(ctx, event, &fired);
        let mut verdict = PreToolVerdict::of(PreToolOutcome {
            decision,
            contexts: Vec::new(),
        });
        verdict.stop = stop;
        CallReview {
            rewrite,
            verdict: Some(verdict),
        }
    }

    async fn approve(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        _ask: &ApprovalAsk,
        _review: Option<&PreToolVerdict>,
    ) -> ApprovalDecision {
        // Gemini fires Notification (ToolPermission) whenever a call waits
        // for confirmation; it is advisory.
        let event = GeminiEvent::Notification;
        let (title, details) = payload::confirmation_details(&exec.tool, &exec.arguments);
        let body = Payload::Notification(payload::Notification {
            common: Self::common(ctx, event),
            notification_type: "ToolPermission",
            message: format!("Tool {title} requires execution"),
            details,
        });
        let fired = self
            .run_event(ctx, event, body, None, Some(&exec.call_id), &ctx.cancel)
            .await;
        self.record(ctx, event, &fired);
        ApprovalDecision::Abstain
    }

    async fn post_execute(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        outcome: &ToolOutcome,
        _duration: Duration,
    ) -> PostToolDecision {
        let original_request_name = {
            let mut tails = self.tails.lock().unwrap_or_else(PoisonError::into_inner);
            tails.remove(&exec.call_id)
        };
        if outcome.disposition != Disposition::Executed {
            return PostToolDecision::accept();
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
        let body = Payload::AfterTool(payload::AfterTool {
            common: Self::common(ctx, event),
            tool_name: name.to_owned(),
            tool_input: tools::hook_tool_input(&exec.tool, &exec.arguments),
            tool_response: tools::hook_tool_response(
                &exec.tool,
                &exec.arguments,
                &ctx.session.cwd,
                outcome.is_error,
                &outcome.content,
                outcome.value.as_ref(),
            ),
            original_request_name: original_request_name.clone(),
        });
        let mut fired = self
            .run_event(
                ctx,
                event,
                body,
                Some(name),
                Some(&exec.call_id),
                &ctx.cancel,
            )
            .await;
        let merged = Self::merged(&fired);
        let action = if let Some(stop) = &merged.stop {
            Self::mark(&mut fired, |r| r.stop.is_some());
            let text = output::stopped_text(stop.as_deref());
            ctx.control.request_stop(text.clone(), source(event));
            PostToolAction::Block { feedback: text }
        } else if merged.deny {
            Self::mark(&mut fired, denies);
            // The model gets the reason with no prefix (`Tool result
            // blocked: ` is Gemini's display text only).
            PostToolAction::Block {
                feedback: merged.reason.clone().unwrap_or_default(),
            }
        } else if let Some(tail) = &merged.tail_call {
            // The requested call runs next under this call's id; its
            // result replaces this one for the model.
            let tool = tools::dsh_tool_name(&tail.name).to_owned();
            let arguments = tools::arguments_from_tool_input(
                &tool,
                &Value::Object(Default::default()),
                &tail.args,
            );
            let original = original_request_name.unwrap_or_else(|| name.to_owned());
            self.tails
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(exec.call_id.clone(), original);
            Self::mark(&mut fired, |r| r.tail_call.is_some());
            PostToolAction::TailCall { tool, arguments }
        } else if let Some(context) = &merged.additional_context {
            content.push_str("\n\n");
            content.push_str(&output::hook_context(context));
            PostToolAction::ReplaceContent { content }
        } else if rewritten {
            PostToolAction::ReplaceContent { content }
        } else {
            PostToolAction::Accept
        };
        self.record(ctx, event, &fired);
        PostToolDecision {
            action,
            contexts: Vec::new(),
        }
    }

    async fn turn_continuation(
        &self,
        ctx: &SeamContext,
        input: &ContinuationInput,
    ) -> ContinuationDecision {
        let event = GeminiEvent::AfterAgent;
        let (prompt, response) = {
            let state = self.lock();
            let mut texts = state.texts.clone();
            let last = input.last_assistant_message.as_str();
            if !last.is_empty() && texts.last().map(String::as_str) != Some(last) {
                texts.push(last.to_owned());
            }
            let response = if texts.is_empty() {
                NO_RESPONSE_TEXT.to_owned()
            } else {
                texts.join("\n")
            };
            (state.prompt.clone(), response)
        };
        let body = Payload::AfterAgent(payload::AfterAgent {
            common: Self::common(ctx, event),
            prompt,
            prompt_response: response,
            stop_hook_active: input.forced_continuations > 0,
        });
        let mut fired = self
            .run_event(ctx, event, body, None, None, &ctx.cancel)
            .await;
        let (answer, decisive) = translate::after_agent(
            Self::merged(&fired),
            input.forced_continuations,
            AFTER_AGENT_CAP,
        );
        let won = |r: &Interpretation| decisive.is_some_and(|d| d.holds(r));
        let (reason, clear_context) = match answer {
            AfterAgentAnswer::Halt(reason) => {
                Self::mark(&mut fired, won);
                self.record(ctx, event, &fired);
                return ContinuationDecision::Halt { reason };
            }
            AfterAgentAnswer::Stop => {
                self.record(ctx, event, &fired);
                return ContinuationDecision::Stop;
            }
            AfterAgentAnswer::Capped(text) => {
                dsh_hooks::mark(&mut fired, Winner::Nobody, won);
                self.engine.record(ctx, event, &fired, &|i, decision| {
                    if fired.get(i).is_some_and(|run| run.won.is_some()) {
                        decision.capped = Some(text.clone());
                    }
                });
                tracing::warn!("{text}");
                ctx.sink.tell_user(UserNotice {
                    source: source(event),
                    text,
                    level: NoticeLevel::Warning,
                });
                return ContinuationDecision::Stop;
            }
            AfterAgentAnswer::Retry {
                reason,
                clear_context,
            } => (reason, clear_context),
        };
        Self::mark(&mut fired, won);
        self.record(ctx, event, &fired);
        // Gemini sends the reason as a new prompt, so BeforeAgent fires for
        // it (`aa_deny_retry`): its block or stop ends the turn, its context
        // follows the reason. AfterAgent's `prompt` stays the user's.
        let contexts = match self.before_agent(ctx, reason.clone()).await {
            PromptDecision::Allow { contexts, .. } => contexts,
            PromptDecision::Block { reason } | PromptDecision::Stop { reason, .. } => {
                return ContinuationDecision::Halt { reason };
            }
        };
        if clear_context {
            // `clearContext`: the retry starts from a fresh history holding
            // only the reason (`aa_clear_context`).
            ctx.control.request_clear_history();
        }
        // The reason is the retry's new user message, verbatim.
        ContinuationDecision::Continue {
            reason: Some(reason),
            source: source(event),
            contexts,
        }
    }

    async fn before_provider_request(
        &self,
        ctx: &SeamContext,
        request: &dsh_protocol::ModelRequest,
    ) -> dsh_seams::ProviderRequestDecision {
        // Gemini fires PreCompress (`auto`) before every main-agent model
        // request, whether or not it compresses (`pc_auto`): once per
        // request, ahead of BeforeModel.
        if ctx.agent.is_none() && !self.compress_fired.swap(false, Ordering::SeqCst) {
            self.pre_compress(ctx, "auto").await;
        }
        self.fire_before_model_hooks(ctx, request).await
    }

    async fn after_model_request(
        &self,
        ctx: &SeamContext,
        request: &dsh_protocol::ModelRequest,
        result: Result<&dsh_protocol::ModelReply, &dsh_model::ModelError>,
    ) {
        if let Ok(reply) = result {
            self.fire_after_model_hooks(ctx, request, reply).await;
        }
    }

    async fn session_before_compact(
        &self,
        ctx: &SeamContext,
        input: &CompactionInput,
    ) -> CompactionDecision {
        let trigger = input.trigger.as_str();
        self.pre_compress(ctx, trigger).await;
        // An automatic compaction runs just before a model request, which
        // would fire PreCompress (`auto`) again: that request skips it.
        if trigger == "auto" && ctx.agent.is_none() {
            self.compress_fired.store(true, Ordering::SeqCst);
        }
        // Advisory in Gemini: nothing it says changes the compression.
        CompactionDecision::proceed()
    }

    async fn session_end(&self, ctx: &SeamContext, reason: SessionEndReason) {
        let reason = match reason {
            SessionEndReason::Exit | SessionEndReason::Other => "exit",
            SessionEndReason::Clear => "clear",
        };
        let event = GeminiEvent::SessionEnd;
        let body = Payload::SessionEnd(payload::SessionEnd {
            common: Self::common(ctx, event),
            reason,
        });
        // The turn's token may be cancelled: run on a fresh one.
        let fired = self
            .run_event(
                ctx,
                event,
                body,
                Some(reason),
                None,
                &CancellationToken::new(),
            )
            .await;
        self.record(ctx, event, &fired);
    }
}
/// The texts AfterModel hooks put in place of replies, per (turn, step):
/// AfterAgent's `prompt_response` uses them instead of the model's text.
#[derive(Debug, Default)]
pub struct ShownReplies {
    shown: Mutex<BTreeMap<(u64, u64), String>>,
}

impl ShownReplies {
    /// Records what is shown for a reply.
    pub fn record(&self, turn: u64, step: u64, text: String) {
        self.lock().insert((turn, step), text);
    }

    /// What is shown for the reply of `step` in `turn`, when a hook
    /// replaced it.
    pub fn shown(&self, turn: u64, step: u64) -> Option<String> {
        self.lock().get(&(turn, step)).cloned()
    }

    /// Forgets a finished turn.
    pub fn forget_turn(&self, turn: u64) {
        self.lock().retain(|(t, _), _| *t != turn);
    }

    /// Forgets everything (a new turn opens).
    pub fn clear(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<(u64, u64), String>> {
        self.shown.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
