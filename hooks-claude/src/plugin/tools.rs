//! The tool seams: PreToolUse at review time (the rewrite and the verdict
//! carried to pre-execute), PermissionRequest, PostToolUse /
//! PostToolUseFailure and PostToolBatch.

use std::time::Duration;

use dsh_seams::{
    ApprovalAsk, ApprovalDecision, ApprovalGrant, CallReview, ContextEntry, DeniedFollowUp,
    Disposition, HistoryInput, InputRewrite, NoticeLevel, PostToolAction, PostToolDecision,
    PreToolDecision, PreToolOutcome, PreToolVerdict, ProposedCall, SeamContext, SettledCall,
    StopRequest, ToolExecution, ToolOutcome, UserNotice,
};
use serde_json::Value;

use dsh_hooks::{Cx, Flow, Record};

use super::{Decisive, Fired, Firing, answer, joined_contexts};
use crate::dialect::{Claude, event_source, source_of};
use crate::events::HookEvent;
use crate::output::{Effect, winning_permission};
use crate::payload::{self, Common};

/// A tool call as Claude Code's tool events name it: the tool's name,
/// its normalized input and the call id, which are the matcher's subject,
/// the `if` rules' facts and part of every tool payload.
struct Called<'a> {
    name: String,
    input: Value,
    call_id: &'a str,
}

impl<'a> Called<'a> {
    /// The call of dsh's `tool` with `arguments`, and the payloads'
    /// common fields.
    fn of(
        cx: &mut Cx<'_, Claude>,
        tool: &str,
        arguments: &Value,
        call_id: &'a str,
    ) -> (Self, Common) {
        let called = Called {
            name: payload::cc_tool_name(tool),
            input: payload::normalize_tool_input(tool, arguments, &cx.ctx.session.current_dir()),
            call_id,
        };
        (called, cx.bridge.common(cx.state, cx.ctx, true))
    }

    /// `event` fired for this call with `payload`.
    fn firing(&self, event: HookEvent, payload: &impl serde::Serialize) -> Firing<'_> {
        Firing {
            subject: Some(&self.name),
            tool_name: Some(&self.name),
            tool_input: Some(&self.input),
            call_id: Some(self.call_id),
            ..Firing::new(event, payload)
        }
    }
}

/// PreToolUse's picks among its runs: the permission winner, whether the
/// call is denied, and which rewrite wins.
struct PreToolPick {
    winner: Option<usize>,
    denied: bool,
    rewriters: Vec<usize>,
    rewrite_winner: Option<usize>,
}

impl PreToolPick {
    fn of(fired: &[Fired]) -> Self {
        let effects: Vec<&Effect> = fired.iter().map(|f| &f.reading.effect).collect();
        let winner = winning_permission(&effects);
        let denied = winner.is_some_and(|i| {
            matches!(
                fired[i].reading.effect,
                Effect::Deny { .. } | Effect::Defer { .. }
            )
        });
        let rewriters: Vec<usize> = fired
            .iter()
            .enumerate()
            .filter(|(_, f)| f.reading.updated_input.is_some())
            .map(|(i, _)| i)
            .collect();
        let rewrite_winner = if denied {
            None
        } else {
            rewriters.first().copied()
        };
        PreToolPick {
            winner,
            denied,
            rewriters,
            rewrite_winner,
        }
    }

    /// The permission winner among the runs that answered one; each
    /// rewrite marked won or not (and ignored when the call is denied).
    fn record(self) -> Record<Decisive> {
        let PreToolPick {
            winner,
            denied,
            rewriters,
            rewrite_winner,
        } = self;
        Record::At(winner, Decisive::Permission).with(move |i, decision| {
            if rewriters.contains(&i) {
                decision.rewrite_won = Some(Some(i) == rewrite_winner);
                if denied {
                    decision.rewrite_ignored = Some("the call is denied".to_owned());
                }
            }
        })
    }
}

/// PreToolUse for a proposed call: the rewrite and the verdict the
/// pipeline carries to pre-execute and approval.
pub(super) fn pre_tool_use<'a>(
    mut cx: Cx<'_, Claude>,
    call: &'a ProposedCall,
) -> Flow<'a, Claude, CallReview> {
    let (called, common) = Called::of(&mut cx, &call.tool, &call.arguments, &call.call_id);
    let firing = called.firing(
        HookEvent::PreToolUse,
        &payload::with_mcp_server(
            payload::pre_tool_use(&common, &called.name, &called.input, called.call_id),
            cx.bridge.mcp_server_of(&call.tool),
        ),
    );
    let fire = Claude::fire_of(&cx, &firing);
    let tool_name = called.name;
    Flow::fire_recorded(
        fire,
        |_, fired| PreToolPick::of(fired).record(),
        move |_, fired| Flow::Done(review_of(fired, &tool_name)),
    )
}

/// PreToolUse's runs as the call's review.
fn review_of(fired: &[Fired], tool_name: &str) -> CallReview {
    if fired.is_empty() {
        return CallReview::keep();
    }
    let PreToolPick {
        winner,
        rewriters,
        rewrite_winner,
        ..
    } = PreToolPick::of(fired);
    let label = format!("PreToolUse:{tool_name}");
    let (decision, stop_for_defer) = match winner.map(|i| &fired[i].reading.effect) {
        Some(Effect::Deny { text }) => (
            PreToolDecision::Deny {
                reason: text.clone(),
            },
            None,
        ),
        Some(Effect::Defer { reason }) => (
            PreToolDecision::Deny {
                reason: format!(
                    "{label} hook deferred this tool call{}",
                    reason
                        .as_deref()
                        .map(|r| format!(": {r}"))
                        .unwrap_or_default()
                ),
            },
            Some(format!(
                "{label} hook deferred the tool call; Claude Code ends the run here (stop_reason tool_deferred){}",
                reason
                    .as_deref()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default()
            )),
        ),
        Some(Effect::Ask { reason }) => (
            // A hook's ask offers no permission changes (not captured).
            PreToolDecision::ask(reason.clone()),
            None,
        ),
        Some(Effect::Allow { .. } | Effect::None | Effect::Block { .. }) | None => {
            (PreToolDecision::Allow, None)
        }
    };
    // A hook's explicit allow answers the permission prompt the call
    // would get (`d_pre_allow_default_mode`: no PermissionRequest);
    // deny rules still deny after it (`c7`).
    let approval = winner
        .filter(|&i| matches!(fired[i].reading.effect, Effect::Allow { .. }))
        .map(|i| {
            ApprovalDecision::Allow(ApprovalGrant {
                updated_input: None,
                updates: Vec::new(),
                by: source_of(HookEvent::PreToolUse, &fired[i].handler.command_text()),
            })
        });
    let stop = fired
        .iter()
        .find_map(|f| f.reading.stop.clone())
        .or(stop_for_defer);
    let contexts = joined_contexts(fired, HookEvent::PreToolUse);
    let source = event_source(HookEvent::PreToolUse);
    let verdict = PreToolVerdict {
        outcome: PreToolOutcome { decision, contexts },
        notices: stop
            .iter()
            .filter(|reason| !reason.is_empty())
            .map(|reason| UserNotice {
                source: source.clone(),
                text: reason.clone(),
                level: NoticeLevel::Info,
            })
            .collect(),
        stop: stop.map(|reason| StopRequest { reason, source }),
        approval,
        decided_by: winner.map(|i| {
            dsh_protocol::DecidedBy::new(
                dsh_protocol::DeciderKind::Hook,
                source_of(HookEvent::PreToolUse, &fired[i].handler.command_text()),
            )
        }),
    };
    let rewrite = match rewrite_winner {
        Some(i) => InputRewrite::Rewrite {
            arguments: fired[i].reading.updated_input.clone().unwrap_or_default(),
            by: source_of(HookEvent::PreToolUse, &fired[i].handler.command_text()),
            conflicts: rewriters
                .iter()
                .filter(|&&r| r != i)
                .map(|&r| source_of(HookEvent::PreToolUse, &fired[r].handler.command_text()))
                .collect(),
            history: HistoryInput::Original,
            refusal: None,
        },
        None => InputRewrite::Keep,
    };
    CallReview {
        rewrite,
        verdict: Some(verdict),
    }
}

/// PermissionRequest: the permission winner answers the ask; an allow
/// may rewrite the input and add permission updates.
pub(super) fn approve<'a>(
    mut cx: Cx<'_, Claude>,
    exec: &'a ToolExecution,
    ask: &'a ApprovalAsk,
    review: Option<&'a PreToolVerdict>,
) -> Flow<'a, Claude, ApprovalDecision> {
    if let Some(answer) = review.and_then(|v| v.approval.clone()) {
        return Flow::Done(answer);
    }
    let asked_by_hook = review.is_some_and(PreToolVerdict::asks);
    if asked_by_hook && !cx.ctx.session.interactive {
        // Claude Code in -p: a PreToolUse `ask` is denied with its raw
        // reason and PermissionRequest hooks are not called (c3, d3).
        return Flow::Done(ApprovalDecision::Abstain);
    }
    let (called, common) = Called::of(&mut cx, &exec.tool, &exec.arguments, &exec.call_id);
    let firing = called.firing(
        HookEvent::PermissionRequest,
        &payload::permission_request(
            &common,
            &called.name,
            &called.input,
            ask.suggestions.as_deref(),
        ),
    );
    Flow::fire_recorded(
        Claude::fire_of(&cx, &firing),
        |_, fired| {
            let winner = permission_winner(fired);
            let allowed =
                winner.is_some_and(|i| matches!(fired[i].reading.effect, Effect::Allow { .. }));
            let rewriters: Vec<bool> = fired
                .iter()
                .map(|f| f.reading.updated_input.is_some())
                .collect();
            Record::At(winner, Decisive::Permission).with(move |i, decision| {
                if rewriters.get(i).copied().unwrap_or(false) {
                    decision.rewrite_won = Some(Some(i) == winner && allowed);
                }
            })
        },
        |cx, fired| Flow::Done(approval_of(cx.ctx, fired)),
    )
}

fn permission_winner(fired: &[Fired]) -> Option<usize> {
    let effects: Vec<&Effect> = fired.iter().map(|f| &f.reading.effect).collect();
    winning_permission(&effects)
}

/// PermissionRequest's runs as the ask's answer.
fn approval_of(ctx: &SeamContext, fired: &[Fired]) -> ApprovalDecision {
    let Some((i, interp)) = permission_winner(fired).map(|i| (i, &fired[i].reading)) else {
        return ApprovalDecision::Abstain;
    };
    match &interp.effect {
        Effect::Deny { text } => {
            if interp.stop.is_some() {
                // `interrupt: true`: Claude Code stops the turn.
                ctx.control
                    .request_stop(text.clone(), event_source(HookEvent::PermissionRequest));
            }
            ApprovalDecision::Deny {
                message: text.clone(),
            }
        }
        // A grant even without changes: it names the hook that
        // allowed (the result's `decided_by`).
        Effect::Allow { .. } => ApprovalDecision::Allow(ApprovalGrant {
            updated_input: interp.updated_input.clone(),
            updates: interp.updated_permissions.clone().unwrap_or_default(),
            by: source_of(
                HookEvent::PermissionRequest,
                &fired[i].handler.command_text(),
            ),
        }),
        Effect::None | Effect::Ask { .. } | Effect::Defer { .. } | Effect::Block { .. } => {
            ApprovalDecision::Abstain
        }
    }
}

/// PermissionDenied: auto mode's check denied the call. A hook's
/// `retry: true` lets the model know it may try again.
pub(super) fn permission_denied<'a>(
    mut cx: Cx<'_, Claude>,
    exec: &'a ToolExecution,
    check_reason: &'a str,
) -> Flow<'a, Claude, DeniedFollowUp> {
    let (called, common) = Called::of(&mut cx, &exec.tool, &exec.arguments, &exec.call_id);
    let firing = called.firing(
        HookEvent::PermissionDenied,
        &payload::permission_denied(
            &common,
            &called.name,
            &called.input,
            called.call_id,
            check_reason,
        ),
    );
    answer(&cx, &firing, |fired| {
        if fired.iter().any(|f| f.reading.retry) {
            DeniedFollowUp::MayRetry
        } else {
            DeniedFollowUp::Stand
        }
    })
}

/// PostToolUse / PostToolUseFailure: the first replacement of the output
/// wins; `continue: false` stops the turn.
pub(super) fn post_execute<'a>(
    mut cx: Cx<'_, Claude>,
    exec: &'a ToolExecution,
    outcome: &'a ToolOutcome,
    duration: Duration,
) -> Flow<'a, Claude, PostToolDecision> {
    let executed = matches!(outcome.disposition, Disposition::Executed);
    let failed_body = matches!(outcome.disposition, Disposition::Failed);
    if !executed && !failed_body {
        return Flow::Done(PostToolDecision::accept());
    }
    let duration_ms = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
    let (called, common) = Called::of(&mut cx, &exec.tool, &exec.arguments, &exec.call_id);
    let response = payload::tool_response(
        &exec.tool,
        outcome.value.as_ref(),
        &exec.arguments,
        &outcome.content,
        duration_ms,
    );
    if let Some(transcript) = cx.state.transcript.as_mut() {
        transcript
            .tool_responses
            .insert(exec.call_id.clone(), response.clone());
    }
    let (event, payload) = if outcome.is_error {
        (
            HookEvent::PostToolUseFailure,
            payload::post_tool_use_failure(
                &common,
                &called.name,
                &called.input,
                called.call_id,
                &outcome.content,
                false,
                duration_ms,
            ),
        )
    } else {
        (
            HookEvent::PostToolUse,
            payload::post_tool_use(
                &common,
                &called.name,
                &called.input,
                &response,
                called.call_id,
                duration_ms,
            ),
        )
    };
    let payload = payload::with_mcp_server(payload, cx.bridge.mcp_server_of(&exec.tool));
    let firing = called.firing(event, &payload);
    Flow::fire_recorded(
        Claude::fire_of(&cx, &firing),
        |_, fired| {
            let replace_at = replace_at(fired);
            let replacing: Vec<bool> = fired
                .iter()
                .map(|f| f.reading.replace_output.is_some())
                .collect();
            Record::edit(move |i, decision| {
                if replacing.get(i).copied().unwrap_or(false) {
                    decision.replace_won = Some(Some(i) == replace_at);
                }
            })
        },
        move |cx, fired| Flow::Done(post_tool_of(cx.ctx, event, fired)),
    )
}

fn replace_at(fired: &[Fired]) -> Option<usize> {
    fired
        .iter()
        .position(|f| f.reading.replace_output.is_some())
}

/// PostToolUse's runs as the call's post-tool decision.
fn post_tool_of(ctx: &SeamContext, event: HookEvent, fired: &[Fired]) -> PostToolDecision {
    if let Some(reason) = fired.iter().find_map(|f| f.reading.stop.clone()) {
        ctx.control
            .request_stop(reason.clone(), event_source(event));
        if !reason.is_empty() {
            ctx.sink.tell_user(UserNotice {
                source: event_source(event),
                text: reason,
                level: NoticeLevel::Info,
            });
        }
    }
    let action = match replace_at(fired).and_then(|i| fired[i].reading.replace_output.clone()) {
        Some(Value::String(content)) => PostToolAction::ReplaceContent { content },
        // Content blocks: Claude Code hands them to the model as the
        // result and PostToolBatch sees them (`mcp_updated_output_blocks`):
        // they become the MCP result, rendered as any MCP result is.
        Some(Value::Array(blocks)) => PostToolAction::ReplaceValue {
            value: serde_json::json!({"content": blocks, "isError": false}),
        },
        Some(other) => PostToolAction::ReplaceContent {
            content: other.to_string(),
        },
        None => PostToolAction::Accept,
    };
    PostToolDecision {
        action,
        contexts: joined_contexts(fired, event),
    }
}

/// PostToolBatch: a block (exit 2 or `decision: "block"`) or `continue:
/// false` stops the loop before the next model call; the block text
/// still reaches the conversation through the contexts. The first in
/// configuration order gives the reason.
pub(super) fn batch_settled<'a>(
    cx: Cx<'_, Claude>,
    batch: &'a [SettledCall],
) -> Flow<'a, Claude, Vec<ContextEntry>> {
    if batch.is_empty() {
        return Flow::Done(Vec::new());
    }
    let calls: Vec<payload::BatchCall> = batch
        .iter()
        .map(|settled| payload::BatchCall {
            tool_name: payload::cc_tool_name(&settled.call.tool),
            tool_input: payload::batch_tool_input(&settled.call.tool, &settled.call.arguments),
            tool_use_id: settled.call.call_id.clone(),
            tool_response: payload::batch_tool_response(
                &settled.call.tool,
                settled.outcome.value.as_ref(),
                &settled.outcome.content,
                settled.outcome.is_error,
            ),
        })
        .collect();
    let common = cx.bridge.common(cx.state, cx.ctx, true);
    let firing = Firing::new(
        HookEvent::PostToolBatch,
        &payload::post_tool_batch(&common, &calls),
    );
    Flow::fire_recorded(
        Claude::fire_of(&cx, &firing),
        |_, fired| Record::At(halt_at(fired), Decisive::Halting),
        |cx, fired| {
            if let Some(i) = halt_at(fired) {
                let interp = &fired[i].reading;
                let block_text = match &interp.effect {
                    Effect::Block { text } => Some(text.clone()),
                    Effect::None
                    | Effect::Allow { .. }
                    | Effect::Ask { .. }
                    | Effect::Defer { .. }
                    | Effect::Deny { .. } => None,
                };
                let reason = interp.stop.clone().or(block_text).unwrap_or_default();
                cx.ctx
                    .control
                    .request_stop(reason, event_source(HookEvent::PostToolBatch));
            }
            Flow::Done(joined_contexts(fired, HookEvent::PostToolBatch))
        },
    )
}

/// The first run that stops or blocks.
fn halt_at(fired: &[Fired]) -> Option<usize> {
    fired
        .iter()
        .position(|f| f.reading.stop.is_some() || matches!(f.reading.effect, Effect::Block { .. }))
}
