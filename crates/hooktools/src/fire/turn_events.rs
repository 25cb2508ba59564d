//! The turn's own events under `dsh hooks test`: UserPromptSubmit and
//! Stop, fired through every plugin as the loop fires them.

use std::sync::Arc;

use dsh_seams::{
    ContinuationDecision, ContinuationInput, Plugin, PromptDecision, PromptInput, SeamContext,
};

use super::decided::Decided;
use super::firing::Firing;
use super::sees::{Continuing, Sees};

/// UserPromptSubmit: the first block or stop wins; rewrites chain.
pub(super) async fn prompt_submit(
    plugins: &[Arc<dyn Plugin>],
    ctx: &SeamContext,
    firing: &Firing,
    mut sees: Sees<'_>,
) -> (Decided, String) {
    let mut prompt = PromptInput {
        content: firing.prompt.clone(),
        source: "user".to_owned(),
    };
    let mut contexts = Vec::new();
    let mut rewritten = None;
    let mut decided = None;
    for plugin in plugins {
        match plugin.prompt_submit(ctx, &prompt).await {
            PromptDecision::Allow {
                rewrite,
                contexts: own,
            } => {
                contexts.extend(own);
                if let Some(text) = rewrite {
                    prompt.content = text.clone();
                    rewritten = Some(text);
                }
            }
            other @ PromptDecision::Block { .. } | other @ PromptDecision::Stop { .. } => {
                decided = Some(other);
                break;
            }
        }
    }
    let decision = decided.unwrap_or(PromptDecision::Allow {
        rewrite: rewritten,
        contexts,
    });
    let summary = sees.prompt_decision(&decision, "prompt", &prompt.content);
    (Decided::Prompt(decision), summary.to_owned())
}

/// Stop: the first plugin that does not let the turn end decides.
pub(super) async fn continuation(
    plugins: &[Arc<dyn Plugin>],
    ctx: &SeamContext,
    firing: &Firing,
    mut sees: Sees<'_>,
) -> (Decided, String) {
    let input = ContinuationInput {
        turn: firing.turn,
        step: 1,
        last_assistant_message: firing.last_assistant_message.clone(),
        forced_continuations: u32::from(firing.stop_hook_active),
    };
    let mut decision = ContinuationDecision::Stop;
    for plugin in plugins {
        let own = plugin.turn_continuation(ctx, &input).await;
        if own != ContinuationDecision::Stop {
            decision = own;
            break;
        }
    }
    let summary = sees.continuation(&decision, Continuing::Turn);
    (Decided::Continuation(decision), summary.to_owned())
}
