//! The parts of a step that the session loop (`agent.rs`) and the nested
//! loop (`subagent.rs`) share: one writer for a step's tool batch, for a
//! batch's closing context FIFO, and for the continuation rule.
//!
//! Both loops hand in their own `append`, so the events land in the one
//! session log under the right owner (the nested run tags its events with
//! its agent id) and fail with the loop's own error type.

use std::collections::BTreeMap;
use std::future::Future;
use std::ops::ControlFlow;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use dsh_model::{Model, ModelError};
use dsh_protocol::{
    ContentBlock, ContextMessageEvent, DecidedBy, EventBody, ModelReply, ModelRequest,
    ResultRewrite, ShownInput, ToolCall, ToolCallEvent, ToolResultEvent,
};
use dsh_seams::{
    ContextEntry, ContinuationDecision, Disposition, HistoryInput, Plugin, ProposedCall,
    SeamContext, SettledCall, ToolExecution, ToolOutcome,
};
use dsh_tools::{Concurrency, SealedCall, ToolRegistry};
use futures::FutureExt;
use futures::stream::{FuturesUnordered, StreamExt};

use crate::agent::sink::StreamForwarder;

/// What a run batch leaves for its caller: every call settled, in order,
/// and the contexts its executions produced (the start of the batch FIFO).
pub(crate) struct RanBatch {
    pub(crate) settled: Vec<SettledCall>,
    pub(crate) fifo: Vec<ContextEntry>,
}

/// Seals every call of the step (logging the batch of `tool/call`s), then
/// runs them at once where their tools allow it ([`run_sealed`]) and
/// appends each `tool/result` in call order. `renamed` maps an id the loop
/// made unique back to the provider's id. A call whose turn was cancelled
/// before it started settles as cancelled without running.
pub(crate) async fn run_batch<E>(
    registry: &ToolRegistry,
    ctx: &SeamContext,
    turn: u64,
    calls: &[ToolCall],
    renamed: &BTreeMap<String, String>,
    append: &impl Fn(EventBody) -> Result<(), E>,
) -> Result<RanBatch, E> {
    let mut sealed = Vec::with_capacity(calls.len());
    for call in calls {
        let proposed = ProposedCall {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: call.arguments.clone(),
            parent_execution_id: None,
            origin: None,
        };
        let sealed_call = registry.seal(ctx, proposed.clone()).await;
        let exec = &sealed_call.execution;
        append(EventBody::ToolCall(ToolCallEvent {
            turn,
            call_id: exec.call_id.clone(),
            execution_id: exec.execution_id.clone(),
            parent_execution_id: exec.parent_execution_id.clone(),
            tool: exec.tool.clone(),
            arguments: (*exec.arguments).clone(),
            original_arguments: exec.original_arguments.as_deref().cloned(),
            rewritten_by: exec.rewritten_by.clone(),
            rewrite_conflicts: sealed_call.rewrite_conflicts.clone(),
            provider_call_id: renamed.get(&exec.call_id).cloned(),
            origin: exec.origin.clone(),
        }))?;
        sealed.push((proposed, sealed_call));
    }
    let mut fifo = Vec::new();
    let mut settled = Vec::with_capacity(sealed.len());
    run_sealed(registry, ctx, sealed, |finished| {
        fifo.extend(finished.contexts);
        let Finished {
            proposed,
            execution,
            outcome,
            decided_by,
            rewrite,
            history,
            ..
        } = finished;
        append(EventBody::ToolResult(ToolResultEvent {
            turn,
            call_id: execution.call_id.clone(),
            is_error: outcome.is_error,
            content: outcome.content.clone(),
            disposition: Some(outcome.disposition.as_str().to_owned()),
            decided_by,
            rewrite,
            content_blocks: content_blocks(&execution.tool, &outcome),
            shown_input: shown_input(history, &execution, outcome.disposition),
        }))?;
        settled.push(SettledCall {
            call: proposed,
            execution,
            outcome,
        });
        Ok(())
    })
    .await?;
    Ok(RanBatch { settled, fifo })
}

/// One call of a batch, run (or settled without running).
struct Finished {
    proposed: ProposedCall,
    execution: ToolExecution,
    outcome: ToolOutcome,
    decided_by: Option<DecidedBy>,
    /// Arguments an approval replaced after the `tool/call` was logged.
    rewrite: Option<ResultRewrite>,
    /// What the winning rewrite wants the model's history to show.
    history: HistoryInput,
    contexts: Vec<ContextEntry>,
}

/// Runs sealed calls at once, in one task: a call starts as soon as every
/// earlier call its [`Concurrency`] conflicts with has finished (calls that
/// write one file keep their order, an exclusive call runs alone), so each
/// call's post-execute listeners (AfterTool, PostToolUse) fire as it
/// finishes. `settle` gets the finished calls in call order, each as soon
/// as it and every call before it have finished. Paths resolve against the
/// working directory the batch starts in.
async fn run_sealed<E>(
    registry: &ToolRegistry,
    ctx: &SeamContext,
    sealed: Vec<(ProposedCall, SealedCall)>,
    mut settle: impl FnMut(Finished) -> Result<(), E>,
) -> Result<(), E> {
    let cwd = ctx.session.current_dir();
    let kinds: Vec<Concurrency> = sealed
        .iter()
        .map(|(_, call)| registry.concurrency(call, &cwd))
        .collect();
    let mut waiting: Vec<Option<(ProposedCall, SealedCall)>> =
        sealed.into_iter().map(Some).collect();
    let mut done: Vec<Option<Finished>> = waiting.iter().map(|_| None).collect();
    let mut finished = vec![false; waiting.len()];
    let mut settled = 0;
    let mut running = FuturesUnordered::new();
    loop {
        for index in 0..waiting.len() {
            let blocked = (0..index)
                .any(|earlier| !finished[earlier] && kinds[index].conflicts(&kinds[earlier]));
            if blocked {
                continue;
            }
            if let Some((proposed, call)) = waiting[index].take() {
                running.push(run_one(registry, ctx, index, proposed, call));
            }
        }
        while let Some(ready) = done.get_mut(settled).and_then(Option::take) {
            settle(ready)?;
            settled += 1;
        }
        let Some((index, ran)) = running.next().await else {
            return Ok(());
        };
        finished[index] = true;
        done[index] = Some(ran);
    }
}

/// One call through the registry, or settled as cancelled when the turn
/// was cancelled before it started.
async fn run_one(
    registry: &ToolRegistry,
    ctx: &SeamContext,
    index: usize,
    proposed: ProposedCall,
    sealed: SealedCall,
) -> (usize, Finished) {
    let mut execution = sealed.execution.clone();
    let history = sealed.history;
    let logged_arguments = Arc::clone(&execution.arguments);
    let mut decided_by = None;
    let mut contexts = Vec::new();
    let outcome = if ctx.cancel.is_cancelled() {
        ToolOutcome::error(
            "Interrupted by the user before this call ran.",
            Disposition::Cancelled,
        )
    } else {
        let result = registry.execute(ctx, sealed).await;
        contexts = result.contexts;
        decided_by = result.decided_by;
        if let Some(ran) = result.execution {
            execution = ran;
        }
        result.outcome
    };
    let rewrite = (!Arc::ptr_eq(&execution.arguments, &logged_arguments)).then(|| ResultRewrite {
        arguments: (*execution.arguments).clone(),
        by: execution.rewritten_by.clone().unwrap_or_default(),
    });
    (
        index,
        Finished {
            proposed,
            execution,
            outcome,
            decided_by,
            rewrite,
            history,
            contexts,
        },
    )
}

/// What the model's later history shows as a call's input, decided once
/// the outcome is known: nothing (the model's own input) without a rewrite
/// that asked for it; `{}` when the rewritten input is not an object (a
/// denied call's too); else the rewritten input, also for a call denied
/// after the rewrite or one whose input failed the tool's check
/// (pre_modified_schema).
fn shown_input(
    history: HistoryInput,
    execution: &ToolExecution,
    disposition: Disposition,
) -> Option<ShownInput> {
    if history != HistoryInput::Rewritten || execution.rewritten_by.is_none() {
        return None;
    }
    match disposition {
        Disposition::UnknownTool => None,
        _ if !execution.arguments.is_object() => Some(ShownInput::Emptied),
        Disposition::InvalidArguments
        | Disposition::Denied(_)
        | Disposition::Executed
        | Disposition::Failed
        | Disposition::Cancelled => Some(ShownInput::Rewritten),
    }
}

/// The content blocks an MCP tool's result goes to the model as, where the
/// API takes blocks (Claude Code hands the Messages API an MCP result's
/// blocks, `mcp_text_result`): the result's text blocks, when the model's
/// text is exactly their text one per line — no structured content shown
/// instead, no error prefix, nothing a listener replaced or appended.
fn content_blocks(tool: &str, outcome: &ToolOutcome) -> Option<Vec<ContentBlock>> {
    if !tool.starts_with("mcp__") || outcome.is_error {
        return None;
    }
    let value = outcome.value.as_ref()?;
    if value.get("structuredContent").is_some() {
        return None;
    }
    let blocks = value.get("content")?.as_array()?;
    let mut texts = Vec::with_capacity(blocks.len());
    for block in blocks {
        if block.get("type").and_then(serde_json::Value::as_str) != Some("text") {
            return None;
        }
        texts.push(block.get("text")?.as_str()?);
    }
    (!blocks.is_empty() && texts.join("\n") == outcome.content).then(|| {
        texts
            .into_iter()
            .map(|text| ContentBlock::Text {
                text: text.to_owned(),
            })
            .collect()
    })
}

/// The end of a batch's context FIFO, after what the caller already put in
/// it: contexts injected during the batch, then each plugin's
/// batch-settled contexts in registration order.
pub(crate) async fn settle_batch(
    registry: &ToolRegistry,
    ctx: &SeamContext,
    settled: &[SettledCall],
    mut fifo: Vec<ContextEntry>,
) -> Vec<ContextEntry> {
    fifo.extend(ctx.control.take_injected());
    for plugin in registry.plugins() {
        if let Ok(contexts) = AssertUnwindSafe(plugin.batch_settled(ctx, settled))
            .catch_unwind()
            .await
        {
            fifo.extend(contexts);
        }
    }
    fifo
}

/// One model request between the request seams: the before-request
/// listeners, the model's reply streamed through `forwarder`, the
/// after-request listeners. `None` when the turn is cancelled before the
/// reply arrives (the after-request listeners then do not run).
pub(crate) async fn complete(
    registry: &ToolRegistry,
    ctx: &SeamContext,
    model: &dyn Model,
    request: &ModelRequest,
    mut forwarder: StreamForwarder,
) -> Option<Result<ModelReply, ModelError>> {
    for plugin in registry.plugins() {
        let _ = AssertUnwindSafe(plugin.before_model_request(ctx, request))
            .catch_unwind()
            .await;
    }
    let result = tokio::select! {
        result = model.complete(request, &mut forwarder) => result,
        _ = ctx.cancel.cancelled() => return None,
    };
    for plugin in registry.plugins() {
        let _ = AssertUnwindSafe(plugin.after_model_request(ctx, request, result.as_ref()))
            .catch_unwind()
            .await;
    }
    Some(result)
}

/// Appends contexts as `context` messages of `turn`, in order.
pub(crate) fn append_contexts<E>(
    append: &impl Fn(EventBody) -> Result<(), E>,
    turn: u64,
    contexts: impl IntoIterator<Item = ContextEntry>,
) -> Result<(), E> {
    for entry in contexts {
        append(EventBody::ContextMessage(ContextMessageEvent {
            turn,
            content: entry.content,
            source: entry.source,
        }))?;
    }
    Ok(())
}

/// Asks every plugin in registration order for its continuation decision
/// (turn continuation, subagent stop) and folds the answers with
/// [`fold_continuation`]; a panicking listener counts as Stop.
pub(crate) async fn decide_continuation<'a, F, Fut>(
    plugins: &'a [Arc<dyn Plugin>],
    ask: F,
) -> ContinuationDecision
where
    F: Fn(&'a Arc<dyn Plugin>) -> Fut,
    Fut: Future<Output = ContinuationDecision>,
{
    let mut decided = ContinuationDecision::Stop;
    for plugin in plugins {
        let decision = AssertUnwindSafe(ask(plugin))
            .catch_unwind()
            .await
            .unwrap_or(ContinuationDecision::Stop);
        match fold_continuation(decided, decision) {
            ControlFlow::Continue(so_far) => decided = so_far,
            ControlFlow::Break(halt) => return halt,
        }
    }
    decided
}

/// Folds one listener's continuation decision into the decision so far:
/// Halt beats Continue beats Stop, and among Continues the first in
/// registration order wins. `Break` carries a Halt, which no later
/// listener can change.
fn fold_continuation(
    decided: ContinuationDecision,
    next: ContinuationDecision,
) -> ControlFlow<ContinuationDecision, ContinuationDecision> {
    match next {
        ContinuationDecision::Stop => ControlFlow::Continue(decided),
        ContinuationDecision::Halt { .. } => ControlFlow::Break(next),
        ContinuationDecision::Continue { .. } => match decided {
            ContinuationDecision::Stop => ControlFlow::Continue(next),
            ContinuationDecision::Continue { .. } | ContinuationDecision::Halt { .. } => {
                ControlFlow::Continue(decided)
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cont(reason: &str) -> ContinuationDecision {
        ContinuationDecision::Continue {
            reason: Some(reason.to_owned()),
            source: "test".to_owned(),
            contexts: Vec::new(),
        }
    }

    #[test]
    fn the_first_continue_wins_over_stops_and_later_continues() {
        let mut decided = ContinuationDecision::Stop;
        for next in [ContinuationDecision::Stop, cont("a"), cont("b")] {
            match fold_continuation(decided, next) {
                ControlFlow::Continue(d) => decided = d,
                ControlFlow::Break(d) => panic!("no halt was given: {d:?}"),
            }
        }
        assert_eq!(decided, cont("a"));
    }

    #[test]
    fn a_halt_ends_the_fold() {
        let halt = ContinuationDecision::Halt {
            reason: "enough".to_owned(),
        };
        assert_eq!(
            fold_continuation(cont("a"), halt.clone()),
            ControlFlow::Break(halt)
        );
    }

    #[test]
    fn the_history_shows_a_rewrite_only_when_asked_and_an_object() {
        let mut execution = ToolExecution {
            execution_id: "e".to_owned(),
            call_id: "c".to_owned(),
            tool: "bash".to_owned(),
            arguments: Arc::new(serde_json::json!({"command": "new"})),
            original_arguments: Some(Arc::new(serde_json::json!({"command": "old"}))),
            rewritten_by: Some("hook".to_owned()),
            parent_execution_id: None,
            origin: None,
        };
        let asked = HistoryInput::Rewritten;
        let denied = Disposition::Denied(dsh_seams::DenialKind::Policy);
        assert_eq!(
            shown_input(asked, &execution, Disposition::Executed),
            Some(ShownInput::Rewritten)
        );
        // pre_modified_schema: an object that failed the check is shown.
        assert_eq!(
            shown_input(asked, &execution, Disposition::InvalidArguments),
            Some(ShownInput::Rewritten)
        );
        assert_eq!(
            shown_input(asked, &execution, denied),
            Some(ShownInput::Rewritten)
        );
        let mut null = execution.clone();
        null.arguments = Arc::new(serde_json::Value::Null);
        assert_eq!(shown_input(asked, &null, denied), Some(ShownInput::Emptied));
        assert_eq!(
            shown_input(asked, &null, Disposition::InvalidArguments),
            Some(ShownInput::Emptied)
        );
        let original = HistoryInput::Original;
        assert_eq!(
            shown_input(original, &execution, Disposition::Executed),
            None
        );
        execution.rewritten_by = None;
        assert_eq!(
            shown_input(asked, &execution, Disposition::InvalidArguments),
            None
        );
    }
}
