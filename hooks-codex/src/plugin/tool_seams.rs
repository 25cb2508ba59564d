//! The tool seams: PreToolUse at review time (the rewrite and the verdict
//! carried to pre-execute), PermissionRequest and PostToolUse.

use std::time::Duration;

use dsh_hooks::{Cx, Dialect as _, Fire, Flow, Record};
use dsh_seams::{
    ApprovalDecision, CallReview, Disposition, HistoryInput, InputRewrite, PostToolDecision,
    PreToolOutcome, PreToolVerdict, ProposedCall, SeamContext, ToolExecution, ToolOutcome,
};
use serde_json::Value;

use super::{Fired, Flows, context_entries, ctx_turn_id, effects, marked};
use crate::config::approval::{NEVER_TEXT, PolicyApproval};
use crate::dialect::Codex;
use crate::event::CodexEvent;
use crate::matcher::tool_aliases;
use crate::output::{Effect, EntryKind, OutputEntry, RunStatus};
use crate::payload::{self, CodexPayload};
use crate::tools;
use crate::translate;

fn is_rewrite(effect: &Effect) -> bool {
    matches!(effect, Effect::Rewrite { .. })
}

/// `event` on the call `call_id` to hook tool `name`, matched through its
/// aliases.
fn fire_tool(event: CodexEvent, payload: CodexPayload, name: &str, call_id: &str) -> Fire<Codex> {
    Fire::new(event, Some((name.to_owned(), tool_aliases(name))), payload).call(call_id)
}

fn existing_file(ctx: &SeamContext, tool: &str, arguments: &Value) -> Option<String> {
    let path = ctx.session.cwd.join(tools::write_target(tool, arguments)?);
    fs_err::read_to_string(path).ok()
}

/// Applies the runs' rewrites to `call`: the first one dsh can express
/// wins, later ones are conflicts, and one it cannot express fails its
/// run. Returns the winner's index and arguments, and the conflicts.
fn apply_rewrites(
    codex: &Codex,
    ctx: &SeamContext,
    call: &ProposedCall,
    runs: &mut [Fired],
) -> (Option<(usize, Value)>, Vec<String>) {
    let mut rewritten: Option<(usize, Value)> = None;
    let mut conflicts = Vec::new();
    for (index, record) in runs.iter_mut().enumerate() {
        let Effect::Rewrite { updated_input } = &record.reading.interpretation.effect else {
            continue;
        };
        let cwd = &ctx.session.cwd;
        match tools::arguments_from_updated_input(&call.tool, &call.arguments, updated_input, cwd) {
            Ok(new_arguments) => {
                if rewritten.is_none() {
                    rewritten = Some((index, new_arguments));
                } else {
                    conflicts.push(record.handler.origin.clone());
                }
            }
            Err(error) => {
                let failed = &mut record.reading.interpretation;
                failed.status = RunStatus::Failed;
                failed.effect = Effect::None;
                failed.entries.push(OutputEntry {
                    kind: EntryKind::Error,
                    text: error,
                });
                record.record = codex.adjust_record(&record.reading, record.record.clone());
            }
        }
    }
    (rewritten, conflicts)
}

/// PreToolUse for a proposed call: the rewrite and the verdict the
/// pipeline carries to this plugin's pre-execute.
pub(super) fn pre_tool_use<'a>(cx: Cx<'_, Codex>, call: &'a ProposedCall) -> Flows<'a, CallReview> {
    let event = CodexEvent::PreToolUse;
    let name = tools::hook_tool_name(&call.tool);
    let existing = existing_file(cx.ctx, &call.tool, &call.arguments);
    let tool_input = tools::hook_tool_input(
        &call.tool,
        &call.arguments,
        &cx.ctx.session.cwd,
        existing.as_deref(),
    );
    let base = cx.bridge.base(cx.ctx);
    let payload = payload::pre_tool_use(
        &base,
        &ctx_turn_id(cx.ctx),
        name,
        &tool_input,
        &call.call_id,
    );
    let firing = fire_tool(event, payload, name, &call.call_id);
    Flow::fire(firing, move |cx, runs| {
        let (rewritten, conflicts) = apply_rewrites(cx.bridge, cx.ctx, call, runs);
        let source = cx.bridge.source(event);
        let contexts = context_entries(&source, runs);
        let verdict = translate::pre_tool_use(&effects(runs), &call.tool, &tool_input);
        let blocked = verdict.winner.is_some();
        let record: Record<fn(&Effect) -> bool> = if blocked {
            marked(&verdict)
        } else {
            Record::At(rewritten.as_ref().map(|(index, _)| *index), is_rewrite)
        };
        let rewrite = match (blocked, rewritten) {
            (false, Some((index, arguments))) => InputRewrite::Rewrite {
                arguments,
                by: runs
                    .get(index)
                    .map(|run| format!("{source}:{}", run.handler.origin))
                    .unwrap_or_default(),
                conflicts,
                history: HistoryInput::Original,
                refusal: None,
            },
            _ => InputRewrite::Keep,
        };
        let verdict = PreToolVerdict::of(PreToolOutcome {
            decision: verdict.answer,
            contexts,
        });
        let review = CallReview {
            rewrite,
            verdict: Some(verdict),
        };
        (record, Flow::Done(review))
    })
}

/// PermissionRequest, before the user is asked.
pub(super) fn permission_request<'a>(
    cx: Cx<'_, Codex>,
    exec: &'a ToolExecution,
) -> Flows<'a, ApprovalDecision> {
    // Under `approval_policy = "never"` Codex asks nobody: no
    // PermissionRequest hook runs and the call is rejected.
    if let Some(PolicyApproval::Reject) = cx.bridge.approval.map(|policy| policy.approval()) {
        return Flow::Done(ApprovalDecision::Deny {
            message: NEVER_TEXT.to_owned(),
        });
    }
    let event = CodexEvent::PermissionRequest;
    let name = tools::hook_tool_name(&exec.tool);
    // Approval runs before dispatch, so the file a `write` replaces is
    // still the one pre-execute saw.
    let existing = existing_file(cx.ctx, &exec.tool, &exec.arguments);
    let pre_input = tools::hook_tool_input(
        &exec.tool,
        &exec.arguments,
        &cx.ctx.session.cwd,
        existing.as_deref(),
    );
    let tool_input = tools::permission_tool_input(&pre_input, &exec.tool, &exec.arguments);
    let base = cx.bridge.base(cx.ctx);
    let payload = payload::permission_request(&base, &ctx_turn_id(cx.ctx), name, &tool_input);
    Flow::fire(
        fire_tool(event, payload, name, &exec.call_id),
        move |_, runs| {
            let decision = translate::permission_request(&effects(runs), &exec.tool);
            (marked(&decision), Flow::Done(decision.answer))
        },
    )
}

/// PostToolUse after a call ran.
pub(super) fn post_tool_use<'a>(
    cx: Cx<'_, Codex>,
    exec: &'a ToolExecution,
    outcome: &'a ToolOutcome,
    duration: Duration,
) -> Flows<'a, PostToolDecision> {
    if outcome.disposition != Disposition::Executed {
        return Flow::Done(PostToolDecision::accept());
    }
    // Codex fires no PostToolUse for an MCP call whose result is an
    // error (`isError`): PreToolUse, then the next request (a failed shell
    // command, which is a result with an exit code, still gets one).
    if outcome.is_error && exec.tool.starts_with("mcp__") {
        return Flow::Done(PostToolDecision::accept());
    }
    let event = CodexEvent::PostToolUse;
    let name = tools::hook_tool_name(&exec.tool);
    let cwd = &cx.ctx.session.cwd;
    // The file a `write` replaced is gone from disk; its value keeps it.
    let original = outcome.value.as_ref().and_then(tools::original_file);
    let tool_input = tools::hook_tool_input(&exec.tool, &exec.arguments, cwd, original.as_deref());
    let tool_response = tools::hook_tool_response(
        &exec.tool,
        &exec.arguments,
        cwd,
        outcome.is_error,
        &outcome.content,
        outcome.value.as_ref(),
        duration,
    );
    let payload = payload::post_tool_use(
        &cx.bridge.base(cx.ctx),
        &ctx_turn_id(cx.ctx),
        name,
        &tool_input,
        &tool_response,
        &exec.call_id,
    );
    Flow::fire(
        fire_tool(event, payload, name, &exec.call_id),
        move |cx, runs| {
            let contexts = context_entries(&cx.bridge.source(event), runs);
            let decision = translate::post_tool_use(&effects(runs), contexts);
            (marked(&decision), Flow::Done(decision.answer))
        },
    )
}
