//! The Copilot bridge as one `dsh_seams::Plugin`. Each seam builds its
//! event's payload ([`crate::payload`]), runs the selected entries one
//! after the other in Copilot's order through the shared engine
//! (`dsh-hooks`, which records `hook/invoked` and `hook/result`), reads
//! them with [`crate::output`] and maps the result onto the seam with
//! Copilot's model-facing texts.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use dsh_hook_runner::HookRunner;
use dsh_hooks::{Engine, Request};
use dsh_seams::{
    AgentDefinition, ApprovalAsk, ApprovalDecision, CallReview, CancellationToken,
    CompactionDecision, CompactionInput, ContextEntry, ContinuationDecision, ContinuationInput,
    Disposition, InputRewrite, Plugin, PostToolAction, PostToolDecision, PreToolDecision,
    PreToolOutcome, PreToolVerdict, PromptDecision, PromptInput, ProposedCall, SeamContext,
    SessionEndReason, SessionStartSource, SubagentStartInput, SubagentStopInput, ToolExecution,
    ToolOutcome, TurnFailure,
};

use crate::config::CopilotConfig;
use crate::dialect::{Copilot, Payload};
use crate::event::CopilotEvent;
use crate::output::Decision;
use crate::payload::{self, AgentFields, Body, Common, ToolResult};
use crate::tools;
use crate::translate::{self, Mark, PromptAnswer, StopAnswer};

/// The plugin's name.
pub const PLUGIN_NAME: &str = "copilot-hooks";

/// How many consecutive agentStop blocks Copilot follows before it ends
/// the run anyway (cl_stop_block: 9 agentStop calls).
pub const AGENT_STOP_CAP: u32 = 8;

type Fired = dsh_hooks::Fired<Copilot>;

/// What the bridge remembers across seams.
#[derive(Debug, Default)]
struct State {
    /// sessionStart waits for the first prompt (its payload carries it).
    pending_start: Option<&'static str>,
    /// A model call failed in this session (sessionEnd `reason: error`).
    errored: bool,
    /// permissionRequest answers per call id, for the approval seam.
    permission: HashMap<String, bool>,
    /// Subagents whose last forced turn came from an agentStop block (its
    /// `stop_hook_active`; a subagentStop block leaves it false,
    /// subagent_stop_block).
    agent_stop_blocked: HashMap<String, bool>,
}

/// Copilot's built-in `explore` agent type, offered to dsh's `agent` tool
/// so a model that names it (as Copilot's `task` tool lets it) gets a
/// subagent (subagent_task).
pub const EXPLORE_AGENT: &str = "explore";

/// The Copilot hooks bridge.
pub struct CopilotPlugin {
    engine: Engine<Copilot>,
    user_dir: std::path::PathBuf,
    state: Mutex<State>,
}

impl CopilotConfig {
    /// The bridge plugin over this configuration.
    pub fn into_plugin(self, runner: HookRunner) -> Arc<dyn Plugin> {
        Arc::new(CopilotPlugin::new(self, runner))
    }
}

fn source(event: CopilotEvent) -> String {
    format!("copilot:{}", event.as_str())
}

fn readings(fired: &[Fired]) -> Vec<&crate::output::Reading> {
    fired.iter().map(|run| &run.reading).collect()
}

impl CopilotPlugin {
    /// A plugin over `config`.
    pub fn new(config: CopilotConfig, runner: HookRunner) -> Self {
        let repo = config.discovery.repo_root();
        CopilotPlugin {
            user_dir: config.discovery.user_dir(),
            engine: Engine::new(
                Copilot {
                    handlers: config.handlers,
                    shell: config.discovery.shell.clone(),
                    repo,
                },
                runner,
            ),
            state: Mutex::new(State::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn common(ctx: &SeamContext) -> Common {
        let agent = ctx.agent.as_ref().map(|identity| AgentFields {
            agent_id: identity.agent_id.clone(),
            agent_type: identity.agent_type.clone(),
            parent_id: ctx.session.session_id.clone(),
        });
        Common::inside(
            &ctx.session.session_id,
            &ctx.session.cwd.display().to_string(),
            agent,
        )
    }

    fn transcript(&self, ctx: &SeamContext) -> String {
        match &ctx.session.log_path {
            Some(path) => path.display().to_string(),
            None => payload::transcript_path(&self.user_dir, &ctx.session.session_id),
        }
    }

    /// Fires `body`'s event: the engine runs the selected entries one
    /// after the other in Copilot's order, chaining preToolUse
    /// `modifiedArgs` and stopping at its first deny ([`crate::dialect`]).
    async fn run(
        &self,
        ctx: &SeamContext,
        body: Body,
        subject: Option<&str>,
        call_id: Option<&str>,
        cancel: &CancellationToken,
    ) -> Vec<Fired> {
        let request = Request {
            event: body.event(),
            subject,
            payload: Payload {
                common: Self::common(ctx),
                body,
            },
            call_id,
            cancel,
        };
        self.engine.dispatch(ctx, request).await
    }

    /// Marks the winner `mark` names and records every run.
    fn settle(&self, ctx: &SeamContext, event: CopilotEvent, fired: &mut [Fired], mark: Mark) {
        match mark {
            Some((winner, decisive)) => {
                self.engine
                    .settle(ctx, event, fired, winner, |r| decisive.holds(r));
            }
            None => self.engine.finish(ctx, event, fired),
        }
    }

    /// Fires an advisory event and records its runs.
    async fn fire_and_record(&self, ctx: &SeamContext, body: Body, cancel: &CancellationToken) {
        let event = body.event();
        let fired = self.run(ctx, body, None, None, cancel).await;
        self.engine.finish(ctx, event, &fired);
    }

    /// Fires sessionStart (held until the first prompt, which its payload
    /// carries); returns its contexts.
    async fn fire_session_start(&self, ctx: &SeamContext, prompt: &str) -> Vec<ContextEntry> {
        let Some(start) = self.lock().pending_start.take() else {
            return Vec::new();
        };
        let event = CopilotEvent::SessionStart;
        let body = Body::SessionStart {
            source: start.to_owned(),
            initial_prompt: prompt.to_owned(),
        };
        let fired = self.run(ctx, body, None, None, &ctx.cancel).await;
        self.engine.finish(ctx, event, &fired);
        // On --continue the context is not injected again
        // (ss_context_and_resume).
        translate::session_start(&readings(&fired), start == "resume")
            .map(|text| vec![ContextEntry::new(text, source(event))])
            .unwrap_or_default()
    }

    /// userPromptSubmitted and userPromptTransformed for a prompt Copilot
    /// makes itself (an agentStop block's reason), recorded only.
    async fn fire_prompt_hooks(&self, ctx: &SeamContext, prompt: &str) {
        let body = Body::UserPromptSubmitted {
            prompt: prompt.to_owned(),
        };
        let fired = self.run(ctx, body, None, None, &ctx.cancel).await;
        self.engine
            .finish(ctx, CopilotEvent::UserPromptSubmitted, &fired);
        let fired = self
            .run(ctx, transformed(prompt), None, None, &ctx.cancel)
            .await;
        self.engine
            .finish(ctx, CopilotEvent::UserPromptTransformed, &fired);
    }
}

impl CopilotPlugin {
    /// A stop block's reason as a new user turn: userPromptSubmitted fires
    /// for it (stop_block_once, subagent_stop_block); what those hooks
    /// answer is not applied to it.
    async fn continue_with(
        &self,
        ctx: &SeamContext,
        reason: String,
        event: CopilotEvent,
    ) -> ContinuationDecision {
        self.fire_prompt_hooks(ctx, &reason).await;
        ContinuationDecision::Continue {
            reason: Some(reason),
            source: source(event),
            contexts: Vec::new(),
        }
    }
}

/// userPromptTransformed's body: the prompt after Copilot's date preamble.
fn transformed(prompt: &str) -> Body {
    Body::UserPromptTransformed {
        prompt: prompt.to_owned(),
        transformed: format!(
            "<current_datetime>{}</current_datetime>\n\n{prompt}",
            chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3f+00:00")
        ),
    }
}

#[async_trait]
impl Plugin for CopilotPlugin {
    fn name(&self) -> &str {
        PLUGIN_NAME
    }

    fn agent_definitions(&self) -> Vec<AgentDefinition> {
        vec![AgentDefinition {
            name: EXPLORE_AGENT.to_owned(),
            description: "Explores the codebase: finds files, reads them and reports what it \
                          found (Copilot CLI's built-in agent type)."
                .to_owned(),
            system_prompt: "You are an exploration agent. Look through the project with \
                            the tools you have, do not change anything, and end with a short \
                            report of what you found."
                .to_owned(),
            tools: Some(["bash", "read", "glob", "grep"].map(str::to_owned).to_vec()),
            model: None,
            source: self.user_dir.clone(),
        }]
    }

    async fn subagent_start(
        &self,
        ctx: &SeamContext,
        input: &SubagentStartInput,
    ) -> Vec<ContextEntry> {
        let event = CopilotEvent::SubagentStart;
        let body = Body::SubagentStart {
            transcript_path: self.transcript(ctx),
        };
        let fired = self.run(ctx, body, None, None, &ctx.cancel).await;
        self.engine.finish(ctx, event, &fired);
        let context = translate::subagent_start(&readings(&fired));
        // Copilot prepends the context to the subagent's prompt, and the
        // subagent's userPromptSubmitted sees that prompt
        // (subagent_stop_block); dsh adds the context after it.
        let prompt = match &context {
            Some(text) => format!("{text}\n\n{}", input.prompt),
            None => input.prompt.clone(),
        };
        self.fire_prompt_hooks(ctx, &prompt).await;
        context
            .map(|text| vec![ContextEntry::new(text, source(event))])
            .unwrap_or_default()
    }

    async fn subagent_stop(
        &self,
        ctx: &SeamContext,
        input: &SubagentStopInput,
    ) -> ContinuationDecision {
        let agent_id = input.identity.agent_id.clone();
        // Inside the subagent, agentStop fires first (subagent_task).
        let blocked = self
            .lock()
            .agent_stop_blocked
            .remove(&agent_id)
            .unwrap_or(false);
        let body = Body::AgentStop {
            transcript_path: self.transcript(ctx),
            stop_reason: "end_turn".to_owned(),
            stop_hook_active: blocked,
        };
        let mut fired = self.run(ctx, body, None, None, &ctx.cancel).await;
        let (answer, mark) = translate::agent_stop(
            &readings(&fired),
            input.forced_continuations,
            AGENT_STOP_CAP,
        );
        self.settle(ctx, CopilotEvent::AgentStop, &mut fired, mark);
        if let StopAnswer::Continue(reason) = answer {
            self.lock().agent_stop_blocked.insert(agent_id, true);
            return self
                .continue_with(ctx, reason, CopilotEvent::AgentStop)
                .await;
        }
        let event = CopilotEvent::SubagentStop;
        let body = Body::SubagentStop {
            transcript_path: self.transcript(ctx),
            response: input.last_assistant_message.clone(),
            stop_reason: "end_turn".to_owned(),
            stop_hook_active: input.stop_hook_active,
        };
        let mut fired = self.run(ctx, body, None, None, &ctx.cancel).await;
        let (answer, mark) = translate::agent_stop(
            &readings(&fired),
            input.forced_continuations,
            AGENT_STOP_CAP,
        );
        self.settle(ctx, event, &mut fired, mark);
        match answer {
            StopAnswer::Stop | StopAnswer::Capped => ContinuationDecision::Stop,
            // The subagent gets the reason as a new prompt; its new final
            // text is what the task tool returns (subagent_stop_block).
            StopAnswer::Continue(reason) => self.continue_with(ctx, reason, event).await,
        }
    }

    async fn session_start(
        &self,
        _ctx: &SeamContext,
        start: SessionStartSource,
    ) -> Vec<ContextEntry> {
        let name = match start {
            SessionStartSource::Startup | SessionStartSource::Clear => "new",
            SessionStartSource::Resume => "resume",
            // Copilot fires no sessionStart after compacting.
            SessionStartSource::Compact => return Vec::new(),
        };
        self.lock().pending_start = Some(name);
        Vec::new()
    }

    async fn prompt_submit(&self, ctx: &SeamContext, prompt: &PromptInput) -> PromptDecision {
        let mut contexts = self.fire_session_start(ctx, &prompt.content).await;
        let event = CopilotEvent::UserPromptSubmitted;
        let body = Body::UserPromptSubmitted {
            prompt: prompt.content.clone(),
        };
        let mut fired = self.run(ctx, body, None, None, &ctx.cancel).await;
        let (answer, mark) = translate::prompt_submitted(&readings(&fired));
        self.settle(ctx, event, &mut fired, mark);
        let rewrite = match answer {
            PromptAnswer::Block(reason) => return PromptDecision::Block { reason },
            PromptAnswer::Allow { rewrite, context } => {
                contexts.extend(context.map(|text| ContextEntry::new(text, source(event))));
                rewrite
            }
        };
        let effective = rewrite.clone().unwrap_or_else(|| prompt.content.clone());
        let fired = self
            .run(ctx, transformed(&effective), None, None, &ctx.cancel)
            .await;
        self.engine
            .finish(ctx, CopilotEvent::UserPromptTransformed, &fired);
        PromptDecision::Allow { rewrite, contexts }
    }

    async fn rewrite_input(&self, ctx: &SeamContext, call: &ProposedCall) -> CallReview {
        let event = CopilotEvent::PreToolUse;
        let native = tools::native_name(&call.tool).to_owned();
        let body = Body::PreToolUse {
            tool: call.tool.clone(),
            args: tools::tool_args(&call.tool, &call.arguments),
        };
        let mut fired = self
            .run(ctx, body, Some(&native), Some(&call.call_id), &ctx.cancel)
            .await;
        let (answer, mark) = translate::pre_tool_use(&readings(&fired));
        self.settle(ctx, event, &mut fired, mark);
        let rewrite = match answer.modified_args {
            Some(args) => InputRewrite::Rewrite {
                arguments: tools::arguments_from(&call.tool, &args),
                by: source(event),
                conflicts: Vec::new(),
            },
            None => InputRewrite::Keep,
        };
        if answer.decided {
            // A preToolUse decision skips the permission flow.
            self.lock().permission.insert(call.call_id.clone(), true);
        }
        let contexts = answer
            .contexts
            .into_iter()
            .map(|text| ContextEntry::new(text, source(event)))
            .collect();
        let mut verdict = PreToolVerdict::of(PreToolOutcome {
            decision: answer.decision,
            contexts,
        });
        verdict.approval = answer.approval;
        CallReview {
            rewrite,
            verdict: Some(verdict),
        }
    }

    async fn pre_execute(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        review: Option<&PreToolVerdict>,
    ) -> PreToolOutcome {
        let outcome = review.map_or_else(PreToolOutcome::allow, |verdict| verdict.deliver(ctx));
        let decided = self.lock().permission.remove(&exec.call_id).is_some();
        if decided || !tools::asks_permission(&exec.tool) {
            return outcome;
        }
        // permissionRequest: only for calls no preToolUse hook decided,
        // never for read-only tools (a_file_tools, pre_allow_no_allow_all).
        let event = CopilotEvent::PermissionRequest;
        let (tool_name, tool_input) = tools::permission_view(&exec.tool, &exec.arguments, None);
        let body = Body::PermissionRequest {
            tool_name,
            tool_input,
        };
        let native = tools::native_name(&exec.tool).to_owned();
        let mut fired = self
            .run(ctx, body, Some(&native), Some(&exec.call_id), &ctx.cancel)
            .await;
        let (last, mark) = translate::permission_request(&readings(&fired));
        self.settle(ctx, event, &mut fired, mark);
        match last {
            Some((Decision::Deny(text), interrupt)) => {
                if interrupt {
                    ctx.control.request_stop(text.clone(), source(event));
                }
                PreToolOutcome {
                    decision: PreToolDecision::Deny { reason: text },
                    contexts: outcome.contexts,
                }
            }
            Some((Decision::Allow, _)) => {
                self.lock().permission.insert(exec.call_id.clone(), true);
                outcome
            }
            Some((Decision::Ask(_), _)) | None => outcome,
        }
    }

    async fn approve(
        &self,
        _ctx: &SeamContext,
        exec: &ToolExecution,
        _ask: &ApprovalAsk,
        review: Option<&PreToolVerdict>,
    ) -> ApprovalDecision {
        if let Some(approval) = review.and_then(|verdict| verdict.approval.clone()) {
            return approval;
        }
        if self.lock().permission.remove(&exec.call_id).is_some() {
            return ApprovalDecision::AllowOnce;
        }
        ApprovalDecision::Abstain
    }

    async fn post_execute(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        outcome: &ToolOutcome,
        _duration: Duration,
    ) -> PostToolDecision {
        if outcome.disposition != Disposition::Executed {
            return PostToolDecision::accept();
        }
        let native = tools::native_name(&exec.tool).to_owned();
        let args = tools::tool_args(&exec.tool, &exec.arguments);
        // A failing command is a success with its exit code (a_file_tools).
        if outcome.is_error && exec.tool != "bash" {
            let event = CopilotEvent::PostToolUseFailure;
            let body = Body::PostToolUseFailure {
                tool: exec.tool.clone(),
                args,
                error: outcome.content.clone(),
            };
            let fired = self
                .run(ctx, body, Some(&native), Some(&exec.call_id), &ctx.cancel)
                .await;
            self.engine.finish(ctx, event, &fired);
            let contexts = translate::post_tool_use_failure(&readings(&fired), &native)
                .map(|text| ContextEntry::new(text, source(event)))
                .into_iter()
                .collect();
            return PostToolDecision {
                action: PostToolAction::Accept,
                contexts,
            };
        }
        let event = CopilotEvent::PostToolUse;
        let body = Body::PostToolUse {
            tool: exec.tool.clone(),
            args,
            result: ToolResult {
                result_type: "success".to_owned(),
                text: outcome.content.clone(),
            },
        };
        let mut fired = self
            .run(ctx, body, Some(&native), Some(&exec.call_id), &ctx.cancel)
            .await;
        let (action, mark) = translate::post_tool_use(&readings(&fired), &native, &outcome.content);
        self.settle(ctx, event, &mut fired, mark);
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
        let event = CopilotEvent::AgentStop;
        let body = Body::AgentStop {
            transcript_path: self.transcript(ctx),
            stop_reason: "end_turn".to_owned(),
            stop_hook_active: input.forced_continuations > 0,
        };
        let mut fired = self.run(ctx, body, None, None, &ctx.cancel).await;
        let (answer, mark) = translate::agent_stop(
            &readings(&fired),
            input.forced_continuations,
            AGENT_STOP_CAP,
        );
        self.settle(ctx, event, &mut fired, mark);
        match answer {
            // Copilot ends the run after 8 consecutive blocks.
            StopAnswer::Stop | StopAnswer::Capped => ContinuationDecision::Stop,
            StopAnswer::Continue(reason) => self.continue_with(ctx, reason, event).await,
        }
    }

    async fn turn_failed(&self, ctx: &SeamContext, failure: &TurnFailure) {
        self.lock().errored = true;
        let body = Body::ErrorOccurred {
            context: "model_call".to_owned(),
            recoverable: true,
            message: failure.error.to_string(),
            name: "Error".to_owned(),
        };
        self.fire_and_record(ctx, body, &CancellationToken::new())
            .await;
    }

    async fn session_before_compact(
        &self,
        ctx: &SeamContext,
        input: &CompactionInput,
    ) -> CompactionDecision {
        let body = Body::PreCompact {
            transcript_path: self.transcript(ctx),
            trigger: input.trigger.as_str().to_owned(),
            custom_instructions: input.custom_instructions.clone().unwrap_or_default(),
        };
        // Advisory: nothing it says changes the compaction.
        self.fire_and_record(ctx, body, &ctx.cancel).await;
        CompactionDecision::proceed()
    }

    async fn session_end(&self, ctx: &SeamContext, _reason: SessionEndReason) {
        let errored = self.lock().errored;
        let body = Body::SessionEnd {
            reason: if errored { "error" } else { "complete" }.to_owned(),
        };
        // The turn's token may be cancelled: run on a fresh one.
        self.fire_and_record(ctx, body, &CancellationToken::new())
            .await;
    }
}
