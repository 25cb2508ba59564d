//! The session and turn seams: SessionStart (with `CLAUDE_ENV_FILE`),
//! UserPromptSubmit and Stop.

use dsh_seams::{
    ContextEntry, ContinuationDecision, ContinuationInput, NoticeLevel, PromptDecision,
    PromptInput, SeamContext, SessionStartSource, StoppedPrompt, UserNotice,
};

use dsh_hooks::{Cx, Flow, Record};

use super::lifecycle::EnvFiles;
use super::{Decisive, Fired, Firing, joined_contexts};
use crate::dialect::{Claude, event_source, source_of};
use crate::events::HookEvent;
use crate::output::{Effect, Interpretation, StopMerge, merge_stop};
use crate::payload;

/// The assistant reply Claude Code records after a prompt stopped before any
/// model request.
const NO_RESPONSE_REQUESTED: &str = "No response requested.";

/// SessionStart: settings `env` and `CLAUDE_ENV_FILE` exports reach the
/// bash tool, `watchPaths` are watched; the runs' contexts for the model.
pub(super) fn session_start<'a>(
    cx: Cx<'_, Claude>,
    source: SessionStartSource,
) -> Flow<'a, Claude, Vec<ContextEntry>> {
    let compact = source == SessionStartSource::Compact;
    let common = cx.bridge.common(cx.state, cx.ctx, compact);
    // Settings `env` reaches the bash tool; a CLAUDE_ENV_FILE export
    // (applied below) replaces it there, as captured.
    for (name, value) in cx.bridge.settings_env(cx.state) {
        cx.ctx.session.env.set(name, value);
    }
    super::watch::watch_matcher_names(cx.bridge, cx.ctx);
    // One CLAUDE_ENV_FILE per SessionStart hook (Claude Code:
    // `sessionstart-hook-<i>.sh`).
    let env_files = EnvFiles::prepare(&cx.bridge.config, cx.ctx, "sessionstart");
    let firing = Firing {
        subject: Some(source.as_str()),
        source: Some(source.as_str()),
        ..Firing::new(
            HookEvent::SessionStart,
            &if compact {
                payload::session_start_compact(&common, &cx.ctx.session.model)
            } else {
                payload::session_start(&common, source.as_str())
            },
        )
    };
    let fire = Claude::fire_with(&cx, &firing, Some(env_files.names()));
    Flow::fire_recorded(
        fire,
        |_, _| Record::AsRead,
        move |cx, fired| {
            env_files.apply(cx.ctx, HookEvent::SessionStart);
            // `watchPaths` adds files to watch for the rest of the session.
            if let Some(paths) = super::lifecycle::watch_paths(fired) {
                cx.ctx.session.env.watch_paths(paths);
            }
            Flow::Done(joined_contexts(fired, HookEvent::SessionStart))
        },
    )
}

/// UserPromptSubmit: finished async hooks are harvested first (their
/// contexts come before the runs'); a stop or block decides the prompt.
pub(super) fn prompt_submit<'a>(
    _cx: Cx<'_, Claude>,
    prompt: &'a PromptInput,
) -> Flow<'a, Claude, PromptDecision> {
    Flow::harvest(move |cx: Cx<'_, Claude>, mut contexts| {
        let common = cx.bridge.common(cx.state, cx.ctx, true);
        let firing = Firing {
            prompt: Some(&prompt.content),
            ..Firing::new(
                HookEvent::UserPromptSubmit,
                &payload::user_prompt_submit(&common, &prompt.content),
            )
        };
        let event = firing.event;
        Flow::fire_recorded(
            Claude::fire_of(&cx, &firing),
            |_, fired| prompt_marks(fired),
            move |_, fired| {
                if let Some(decision) = prompt_verdict(event, fired) {
                    return Flow::Done(decision);
                }
                contexts.extend(joined_contexts(fired, event));
                // A turn nobody typed reaches the model framed as a notification.
                let rewrite = (prompt.source == dsh_seams::NOTIFICATION_SOURCE)
                    .then(|| super::worktree::notification_for_model(&prompt.content));
                Flow::Done(PromptDecision::Allow { rewrite, contexts })
            },
        )
    })
}

/// Stop: the merged answer of the runs (the block cap included).
pub(super) fn turn_continuation<'a>(
    cx: Cx<'_, Claude>,
    input: &'a ContinuationInput,
) -> Flow<'a, Claude, ContinuationDecision> {
    let common = cx.bridge.common(cx.state, cx.ctx, true);
    let firing = Firing::new(
        HookEvent::Stop,
        &payload::stop(
            &common,
            input.forced_continuations > 0,
            &input.last_assistant_message,
        ),
    );
    let forced = input.forced_continuations;
    Flow::fire_recorded(
        Claude::fire_of(&cx, &firing),
        move |cx, fired| stop_marks(&merged_stop(cx.bridge, fired, forced), fired),
        move |cx, fired| {
            let merged = merged_stop(cx.bridge, fired, forced);
            Flow::Done(stop_continuation(cx.ctx, HookEvent::Stop, fired, merged))
        },
    )
}

/// Stop's winner marks: a halt's first stop wins among the forcing and
/// stopping runs; a fired cap overrides every forcing run; a continuation
/// is every forcing run's.
fn stop_marks(merged: &StopMerge, fired: &[Fired]) -> Record<Decisive> {
    let stop_at = fired.iter().position(|f| f.reading.stop.is_some());
    let marks: Vec<(Option<bool>, Option<String>)> = fired
        .iter()
        .enumerate()
        .map(|(i, run)| {
            let interp = &run.reading;
            let forcing =
                matches!(interp.effect, Effect::Block { .. }) || !interp.steering.is_empty();
            match merged {
                StopMerge::Halt { .. } if forcing || interp.stop.is_some() => {
                    (Some(Some(i) == stop_at), None)
                }
                StopMerge::CapFired { message } if forcing => (Some(false), Some(message.clone())),
                StopMerge::Continue { .. } if forcing => (Some(true), None),
                StopMerge::Stop
                | StopMerge::Halt { .. }
                | StopMerge::CapFired { .. }
                | StopMerge::Continue { .. } => (None, None),
            }
        })
        .collect();
    Record::edit(move |i, decision| {
        let Some((won, overridden)) = marks.get(i) else {
            return;
        };
        if won.is_some() {
            decision.won = *won;
        }
        if overridden.is_some() {
            decision.overridden.clone_from(overridden);
        }
    })
}

/// A prompt event's winner (UserPromptSubmit, UserPromptExpansion): the
/// first `continue: false`, else the first block, among the runs that
/// stop or block.
pub(super) fn prompt_marks(fired: &[Fired]) -> Record<Decisive> {
    let stop_at = fired.iter().position(|f| f.reading.stop.is_some());
    let block_at = fired
        .iter()
        .position(|f| matches!(f.reading.effect, Effect::Block { .. }));
    Record::At(stop_at.or(block_at), Decisive::Halting)
}

/// A prompt event's answer: the first `continue: false` stops the turn,
/// else the first block rejects it; `None` lets the prompt through.
pub(super) fn prompt_verdict(event: HookEvent, fired: &[Fired]) -> Option<PromptDecision> {
    let stop_at = fired.iter().position(|f| f.reading.stop.is_some());
    let block_at = fired
        .iter()
        .position(|f| matches!(f.reading.effect, Effect::Block { .. }));
    if let Some(i) = stop_at {
        let reason = fired[i].reading.stop.clone().unwrap_or_default();
        let reason = format!("Operation stopped by hook: {reason}");
        // UserPromptSubmit: Claude Code keeps the stopped prompt with
        // its note and `No response requested.`, so a later turn's model
        // sees why (`h5_ups_continue_false_resume`). Not captured for
        // UserPromptExpansion: the prompt alone.
        let kept = if event == HookEvent::UserPromptSubmit {
            StoppedPrompt::WithExchange {
                note: reason.clone(),
                reply: NO_RESPONSE_REQUESTED.to_owned(),
                source: event_source(event),
            }
        } else {
            StoppedPrompt::PromptOnly
        };
        return Some(PromptDecision::Stop { reason, kept });
    }
    if let Some(i) = block_at
        && let Effect::Block { text } = &fired[i].reading.effect
    {
        return Some(PromptDecision::Block {
            reason: text.clone(),
        });
    }
    None
}

/// Stop's merge of the runs' answers (the same feedback text, the
/// same consecutive-block cap), for Stop and SubagentStop alike.
pub(super) fn merged_stop(claude: &Claude, fired: &[Fired], forced: u32) -> StopMerge {
    let answers: Vec<&Interpretation> = fired.iter().map(|f| &f.reading).collect();
    merge_stop(&answers, forced, claude.config.options.stop_block_cap)
}

/// Stop's and SubagentStop's merged answer as the loop's decision: a
/// fired block cap is told to the user, and a continuation names the
/// hooks that forced it (`claude:<event>:<commands>`).
pub(super) fn stop_continuation(
    ctx: &SeamContext,
    event: HookEvent,
    fired: &[Fired],
    merged: StopMerge,
) -> ContinuationDecision {
    match merged {
        StopMerge::Stop => ContinuationDecision::Stop,
        StopMerge::Halt { reason } => ContinuationDecision::Halt { reason },
        StopMerge::CapFired { message } => {
            ctx.sink.tell_user(UserNotice {
                source: event_source(event),
                text: message,
                level: NoticeLevel::Warning,
            });
            ContinuationDecision::Stop
        }
        StopMerge::Continue {
            reason,
            by,
            context,
        } => {
            let sources: Vec<String> = by
                .iter()
                .map(|&i| fired[i].handler.command_text())
                .collect();
            let source = source_of(event, &sources.join(" + "));
            ContinuationDecision::Continue {
                reason: Some(reason),
                contexts: context
                    .map(|c| vec![ContextEntry::new(c, source.clone())])
                    .unwrap_or_default(),
                source,
            }
        }
    }
}
