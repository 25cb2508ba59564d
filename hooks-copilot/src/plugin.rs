//! The Copilot bridge on dsh's seams, as pure per-event functions over the
//! shared bridge plugin (`dsh_hooks::BridgePlugin`): each seam plans its
//! events' payloads ([`crate::payload`]), hands each firing's readings to
//! [`crate::translate`] (Copilot's aggregation and model-facing texts) and
//! says what fires next. The plugin runs the entries one after the other
//! in Copilot's order, marks the winner and records `hook/invoked` and
//! `hook/result`.

use std::collections::HashSet;
use std::time::Duration;

use dsh_hooks::{Bridge, Cx, Dialect as _, Fire, Flow, Record, readings};
use dsh_seams::{
    AgentDefinition, ApprovalAsk, ApprovalDecision, CallReview, CompactionDecision,
    CompactionInput, ContextEntry, ContinuationDecision, ContinuationInput, Disposition,
    PostToolDecision, PreToolDecision, PreToolOutcome, PreToolVerdict, PromptDecision, PromptInput,
    ProposedCall, RequestMeta, SeamContext, SessionEndReason, SessionStartSource, SettledCall,
    SubagentStartInput, SubagentStopInput, ToolExecution, ToolOutcome, TurnFailure,
};

use crate::dialect::{Copilot, Payload};
use crate::diff;
use crate::event::CopilotEvent;
use crate::mcp_call::McpCall;
use crate::output::{Decision, Reading, joined_context};
use crate::payload::{self, Body, Common, ErrorInfo, ToolResult};
use crate::tools;
use crate::translate::{self, Decisive};

/// The plugin's name.
pub const PLUGIN_NAME: &str = "copilot-hooks";

/// How many consecutive agentStop blocks Copilot follows before it ends
/// the run anyway (cl_stop_block: 9 agentStop calls).
pub const AGENT_STOP_CAP: u32 = 8;

/// Copilot's built-in `explore` agent type, offered to dsh's `agent` tool
/// so a model that names it (as Copilot's `task` tool lets it) gets a
/// subagent (subagent_task).
pub const EXPLORE_AGENT: &str = "explore";

/// What the bridge remembers across seams.
#[derive(Debug, Default)]
pub(crate) struct State {
    /// sessionStart waits for the first prompt (its payload carries it).
    pending_start: Option<&'static str>,
    /// A model call failed in this session (sessionEnd `reason: error`).
    errored: bool,
    /// permissionRequest answers per call id, for the approval seam.
    permission: HashSet<String>,
    /// Subagents whose last forced turn came from an agentStop block (its
    /// `stop_hook_active`; a subagentStop block leaves it false,
    /// subagent_stop_block).
    agent_stop_blocked: HashSet<String>,
}

type Flows<'a, Out> = Flow<'a, Copilot, Out>;

/// `body`'s event, its payload headed for `ctx`, matched against `tool`.
fn fire(ctx: &SeamContext, body: Body, tool: Option<String>) -> Fire<Copilot> {
    let payload = Payload {
        common: Common::of(ctx),
        body,
    };
    Fire::new(payload.body.event(), tool, payload)
}

fn transcript(cx: &Cx<'_, Copilot>) -> String {
    match &cx.ctx.session.log_path {
        Some(path) => path.display().to_string(),
        None => payload::transcript_path(&cx.bridge.user_dir, &cx.ctx.session.session_id),
    }
}

fn contexts(text: Option<String>, source: String) -> Vec<ContextEntry> {
    text.map(|text| vec![ContextEntry::new(text, source)])
        .unwrap_or_default()
}

/// userPromptTransformed's body: the prompt after Copilot's date preamble.
fn transformed(prompt: &str) -> Body {
    Body::UserPromptTransformed {
        prompt: prompt.to_owned(),
        transformed_prompt: format!(
            "<current_datetime>{}</current_datetime>\n\n{prompt}",
            chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3f+00:00")
        ),
    }
}

/// sessionStart, held until the first prompt (which its payload carries);
/// its contexts. On --continue the context is not injected again
/// (ss_context_and_resume).
fn first_session_start<'a>(cx: Cx<'_, Copilot>, prompt: &str) -> Flows<'a, Vec<ContextEntry>> {
    let Some(start) = cx.state.pending_start.take() else {
        return Flow::Done(Vec::new());
    };
    let body = Body::SessionStart {
        source: start.to_owned(),
        initial_prompt: prompt.to_owned(),
    };
    Flow::fire(fire(cx.ctx, body, None), move |cx, runs| {
        let text = (start != "resume").then(|| joined_context(&readings(runs)));
        let source = cx.bridge.source(CopilotEvent::SessionStart);
        (Record::AsRead, Flow::Done(contexts(text.flatten(), source)))
    })
}

/// userPromptSubmitted and userPromptTransformed for a prompt Copilot
/// makes itself (a stop block's reason, a subagent's prompt), recorded
/// only; then `out`.
fn prompt_hooks<'a, Out: Send + 'a>(ctx: &SeamContext, prompt: String, out: Out) -> Flows<'a, Out> {
    let body = Body::UserPromptSubmitted {
        prompt: prompt.clone(),
    };
    Flow::fire(fire(ctx, body, None), move |cx, _| {
        (
            Record::AsRead,
            Flow::notify(fire(cx.ctx, transformed(&prompt), None), out),
        )
    })
}

/// agentStop or subagentStop after `forced` blocks: the first block's
/// reason is followed (up to Copilot's cap) as a new user turn, for which
/// userPromptSubmitted fires (stop_block_once, subagent_stop_block; what
/// those hooks answer is not applied to it). Inside a subagent, agentStop
/// names the subagent (its next agentStop says a block forced it) and the
/// subagentStop that fires when no agentStop hook blocks.
fn stop<'a>(
    ctx: &SeamContext,
    body: Body,
    forced: u32,
    subagent: Option<(String, Body)>,
) -> Flows<'a, ContinuationDecision> {
    let event = body.event();
    Flow::fire(fire(ctx, body, None), move |cx, runs| {
        let (answer, mark) = translate::agent_stop(&readings(runs), forced, AGENT_STOP_CAP);
        let next = match (answer, subagent) {
            (Some(reason), subagent) => {
                if let Some((agent_id, _)) = subagent {
                    cx.state.agent_stop_blocked.insert(agent_id);
                }
                let decision = ContinuationDecision::Continue {
                    reason: Some(reason.clone()),
                    source: cx.bridge.source(event),
                    contexts: Vec::new(),
                };
                prompt_hooks(cx.ctx, reason, decision)
            }
            // The subagent gets a subagentStop block's reason as a new
            // prompt; its new final text is what the task tool returns
            // (subagent_stop_block).
            (None, Some((_, then))) => stop(cx.ctx, then, forced, None),
            (None, None) => Flow::Done(ContinuationDecision::Stop),
        };
        (mark.into(), next)
    })
}

/// `body`'s event for the call `call_id` of the tool whose native name is
/// `native` (what its matchers see).
fn tool_fire(ctx: &SeamContext, body: Body, native: String, call_id: &str) -> Fire<Copilot> {
    fire(ctx, body, Some(native)).call(call_id)
}

/// postToolUseFailure for each call of `batch` whose rewritten arguments
/// were not valid, with `toolArgs` the rewrite, `{}` for one that is not an
/// object, as Copilot sends it when its tool rejects the input a preToolUse
/// hook gave (pre_modified_invalid_failure, pre_modified_schema).
/// dsh rejects such a call when it seals it, before any post-execute, so
/// these fire when the batch settles; their contexts (in `contexts`)
/// follow the batch's results.
fn rejected_rewrites<'a>(
    ctx: &SeamContext,
    batch: &'a [SettledCall],
    mut contexts: Vec<ContextEntry>,
) -> Flows<'a, Vec<ContextEntry>> {
    let Some((settled, rest)) = batch.split_first() else {
        return Flow::Done(contexts);
    };
    let exec = &settled.execution;
    if settled.outcome.disposition != Disposition::InvalidArguments || exec.rewritten_by.is_none() {
        return rejected_rewrites(ctx, rest, contexts);
    }
    let native = tools::named(&exec.tool, exec.mcp_names()).into_owned();
    let body = Body::PostToolUseFailure {
        tool_name: native.clone(),
        tool_args: match exec.arguments.is_object() {
            true => tools::tool_args(&exec.tool, &exec.arguments),
            false => serde_json::json!({}),
        },
        // Copilot's error is the tool's text without its `Invalid input: `.
        error: (settled.outcome.content.strip_prefix("Invalid input: "))
            .unwrap_or(&settled.outcome.content)
            .to_owned(),
    };
    let firing = tool_fire(ctx, body, native.clone(), &exec.call_id);
    Flow::fire(firing, move |cx, runs| {
        let text = translate::post_tool_use_failure(&readings(runs), &native);
        let source = cx.bridge.source(CopilotEvent::PostToolUseFailure);
        contexts.extend(self::contexts(text, source));
        (Record::AsRead, rejected_rewrites(cx.ctx, rest, contexts))
    })
}

impl Bridge for Copilot {
    type State = State;
    /// The native tool name (tool events).
    type Key = Option<String>;
    type Decisive = Decisive;

    fn plugin_name(&self) -> &'static str {
        PLUGIN_NAME
    }

    fn subject<'k>(&self, key: &'k Option<String>) -> Option<&'k str> {
        key.as_deref()
    }

    fn holds(&self, decisive: Decisive, reading: &Reading) -> bool {
        decisive.holds(reading)
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

    fn subagent_start<'a>(
        cx: Cx<'_, Self>,
        input: &'a SubagentStartInput,
    ) -> Flows<'a, Vec<ContextEntry>> {
        let body = Body::SubagentStart {
            transcript_path: transcript(&cx),
        };
        Flow::fire(fire(cx.ctx, body, None), move |cx, runs| {
            let context = joined_context(&readings(runs));
            // Copilot prepends the context to the subagent's prompt, and the
            // subagent's userPromptSubmitted sees that prompt
            // (subagent_stop_block); dsh adds the context after it.
            let prompt = match &context {
                Some(text) => format!("{text}\n\n{}", input.prompt),
                None => input.prompt.clone(),
            };
            let out = contexts(context, cx.bridge.source(CopilotEvent::SubagentStart));
            (Record::AsRead, prompt_hooks(cx.ctx, prompt, out))
        })
    }

    fn subagent_stop<'a>(
        cx: Cx<'_, Self>,
        input: &'a SubagentStopInput,
    ) -> Flows<'a, ContinuationDecision> {
        let agent_id = input.identity.agent_id.clone();
        // Inside the subagent, agentStop fires first (subagent_task).
        let body = Body::AgentStop {
            transcript_path: transcript(&cx),
            stop_reason: "end_turn".to_owned(),
            stop_hook_active: cx.state.agent_stop_blocked.remove(&agent_id),
        };
        let then = Body::SubagentStop {
            transcript_path: transcript(&cx),
            response: input.last_assistant_message.clone(),
            stop_reason: "end_turn".to_owned(),
            stop_hook_active: input.stop_hook_active,
        };
        let subagent = Some((agent_id, then));
        stop(cx.ctx, body, input.forced_continuations, subagent)
    }

    fn session_start<'a>(
        cx: Cx<'_, Self>,
        start: SessionStartSource,
    ) -> Flows<'a, Vec<ContextEntry>> {
        cx.state.pending_start = match start {
            SessionStartSource::Startup | SessionStartSource::Clear => Some("new"),
            SessionStartSource::Resume => Some("resume"),
            // Copilot fires no sessionStart after compacting.
            SessionStartSource::Compact => return Flow::Done(Vec::new()),
        };
        Flow::Done(Vec::new())
    }

    fn prompt_submit<'a>(cx: Cx<'_, Self>, prompt: &'a PromptInput) -> Flows<'a, PromptDecision> {
        first_session_start(cx, &prompt.content).and_then(move |cx, contexts| {
            let body = Body::UserPromptSubmitted {
                prompt: prompt.content.clone(),
            };
            Flow::fire(fire(cx.ctx, body, None), move |cx, runs| {
                let source = cx.bridge.source(CopilotEvent::UserPromptSubmitted);
                let (decision, mark) =
                    translate::prompt_submitted(&readings(runs), contexts, &source);
                let PromptDecision::Allow { rewrite, .. } = &decision else {
                    return (mark.into(), Flow::Done(decision));
                };
                let effective = rewrite.as_deref().unwrap_or(&prompt.content);
                let next = fire(cx.ctx, transformed(effective), None);
                (mark.into(), Flow::notify(next, decision))
            })
        })
    }

    fn rewrite_input<'a>(cx: Cx<'_, Self>, call: &'a ProposedCall) -> Flows<'a, CallReview> {
        let native = tools::named(&call.tool, call.mcp_names()).into_owned();
        let body = Body::PreToolUse {
            tool_name: native.clone(),
            tool_args: tools::tool_args(&call.tool, &call.arguments),
        };
        let firing = tool_fire(cx.ctx, body, native, &call.call_id);
        Flow::fire(firing, move |cx, runs| {
            let source = cx.bridge.source(CopilotEvent::PreToolUse);
            let (review, decided, mark) =
                translate::pre_tool_use(&readings(runs), &call.tool, &source);
            if decided {
                // A preToolUse decision skips the permission flow.
                cx.state.permission.insert(call.call_id.clone());
            }
            (mark.into(), Flow::Done(review))
        })
    }

    fn pre_execute<'a>(
        cx: Cx<'_, Self>,
        exec: &'a ToolExecution,
        review: Option<&'a PreToolVerdict>,
    ) -> Flows<'a, PreToolOutcome> {
        let outcome = review.map_or_else(PreToolOutcome::allow, |verdict| verdict.deliver(cx.ctx));
        let decided = cx.state.permission.remove(&exec.call_id);
        if decided || !tools::asks_permission(&exec.tool) {
            return Flow::Done(outcome);
        }
        // permissionRequest: only for calls no preToolUse hook decided,
        // never for read-only tools (a_file_tools, pre_allow_no_allow_all).
        let event = CopilotEvent::PermissionRequest;
        // create/edit show the change as Copilot's unified diff, worked out
        // from the file as it is now (empty when it cannot be).
        let diff = diff::proposed(&cx.ctx.session.cwd, exec);
        let mcp = exec.mcp_names();
        let (tool_name, tool_input) =
            tools::permission_view(&exec.tool, mcp, &exec.arguments, diff.as_deref());
        let body = Body::PermissionRequest {
            tool_name,
            tool_input,
        };
        let native = tools::named(&exec.tool, mcp).into_owned();
        let firing = tool_fire(cx.ctx, body, native, &exec.call_id);
        Flow::fire(firing, move |cx, runs| {
            let (last, mark) = translate::permission_request(&readings(runs));
            let outcome = match last {
                Some((Decision::Deny(text), interrupt)) => {
                    if interrupt {
                        cx.ctx
                            .control
                            .request_stop(text.clone(), cx.bridge.source(event));
                    }
                    PreToolOutcome {
                        decision: PreToolDecision::Deny { reason: text },
                        contexts: outcome.contexts,
                    }
                }
                Some((Decision::Allow, _)) => {
                    cx.state.permission.insert(exec.call_id.clone());
                    outcome
                }
                Some((Decision::Ask(_), _)) | None => outcome,
            };
            (mark.into(), Flow::Done(outcome))
        })
    }

    /// preMcpToolCall, for an MCP call that is going to run: the request
    /// metadata its entries' `metaToUse` chain ends with (nothing else
    /// they answer changes the call).
    fn before_dispatch<'a>(
        cx: Cx<'_, Self>,
        exec: &'a ToolExecution,
        meta: Option<RequestMeta>,
    ) -> Flows<'a, Option<RequestMeta>> {
        let Some(call) = McpCall::of(exec, meta.clone()) else {
            return Flow::Done(meta);
        };
        let (subject, id) = (call.subject(), call.call_id().to_owned());
        let body = Body::PreMcpToolCall(Box::new(call.clone()));
        let firing = fire(cx.ctx, body, Some(subject)).call(&id);
        Flow::fire(firing, move |_, runs| {
            (
                Record::AsRead,
                Flow::Done(call.request_meta(readings(runs))),
            )
        })
    }

    fn approve<'a>(
        cx: Cx<'_, Self>,
        exec: &'a ToolExecution,
        _ask: &'a ApprovalAsk,
        review: Option<&'a PreToolVerdict>,
    ) -> Flows<'a, ApprovalDecision> {
        if let Some(approval) = review.and_then(|verdict| verdict.approval.clone()) {
            return Flow::Done(approval);
        }
        Flow::Done(if cx.state.permission.remove(&exec.call_id) {
            ApprovalDecision::AllowOnce
        } else {
            ApprovalDecision::Abstain
        })
    }

    fn post_execute<'a>(
        cx: Cx<'_, Self>,
        exec: &'a ToolExecution,
        outcome: &'a ToolOutcome,
        _duration: Duration,
    ) -> Flows<'a, PostToolDecision> {
        if outcome.disposition != Disposition::Executed {
            return Flow::Done(PostToolDecision::accept());
        }
        let native = tools::named(&exec.tool, exec.mcp_names()).into_owned();
        let (tool_name, content) = (native.clone(), outcome.content.clone());
        let tool_args = tools::tool_args(&exec.tool, &exec.arguments);
        // A failing command is a success with its exit code (a_file_tools).
        let failed = outcome.is_error && exec.tool != "bash";
        let body = if failed {
            Body::PostToolUseFailure {
                tool_name,
                tool_args,
                error: content,
            }
        } else {
            let tool_result = ToolResult {
                result_type: "success".to_owned(),
                text_result_for_llm: content,
            };
            Body::PostToolUse {
                tool_name,
                tool_args,
                tool_result,
            }
        };
        let firing = tool_fire(cx.ctx, body, native.clone(), &exec.call_id);
        Flow::fire(firing, move |cx, runs| {
            let readings = readings(runs);
            if failed {
                let text = translate::post_tool_use_failure(&readings, &native);
                let source = cx.bridge.source(CopilotEvent::PostToolUseFailure);
                let decision = PostToolDecision {
                    contexts: contexts(text, source),
                    ..PostToolDecision::accept()
                };
                return (Record::AsRead, Flow::Done(decision));
            }
            let (action, mark) = translate::post_tool_use(&readings, &native, &outcome.content);
            let decision = PostToolDecision {
                action,
                contexts: Vec::new(),
            };
            (mark.into(), Flow::Done(decision))
        })
    }

    fn batch_settled<'a>(
        cx: Cx<'_, Self>,
        batch: &'a [SettledCall],
    ) -> Flows<'a, Vec<ContextEntry>> {
        rejected_rewrites(cx.ctx, batch, Vec::new())
    }

    fn turn_continuation<'a>(
        cx: Cx<'_, Self>,
        input: &'a ContinuationInput,
    ) -> Flows<'a, ContinuationDecision> {
        let body = Body::AgentStop {
            transcript_path: transcript(&cx),
            stop_reason: "end_turn".to_owned(),
            stop_hook_active: input.forced_continuations > 0,
        };
        // Copilot ends the run after 8 consecutive blocks.
        stop(cx.ctx, body, input.forced_continuations, None)
    }

    fn turn_failed<'a>(cx: Cx<'_, Self>, failure: &'a TurnFailure) -> Flows<'a, ()> {
        cx.state.errored = true;
        let body = Body::ErrorOccurred {
            error_context: "model_call".to_owned(),
            recoverable: true,
            error: ErrorInfo {
                message: failure.error.to_string(),
                name: "Error".to_owned(),
                stack: String::new(),
            },
        };
        Flow::notify(fire(cx.ctx, body, None).fresh(), ())
    }

    fn session_before_compact<'a>(
        cx: Cx<'_, Self>,
        input: &'a CompactionInput,
    ) -> Flows<'a, CompactionDecision> {
        let body = Body::PreCompact {
            transcript_path: transcript(&cx),
            trigger: input.trigger.as_str().to_owned(),
            custom_instructions: input.custom_instructions.clone().unwrap_or_default(),
        };
        // Advisory: nothing it says changes the compaction.
        Flow::notify(fire(cx.ctx, body, None), CompactionDecision::proceed())
    }

    fn session_end<'a>(cx: Cx<'_, Self>, _reason: SessionEndReason) -> Flows<'a, ()> {
        let reason = if cx.state.errored {
            "error"
        } else {
            "complete"
        };
        let body = Body::SessionEnd {
            reason: reason.to_owned(),
        };
        // The turn's token may be cancelled: run on a fresh one.
        Flow::notify(fire(cx.ctx, body, None).fresh(), ())
    }
}
