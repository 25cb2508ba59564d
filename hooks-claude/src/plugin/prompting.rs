//! The prompt-layer events: InstructionsLoaded and
//! UserPromptExpansion.

use dsh_hooks::{Cx, Flow};
use dsh_seams::{ExpansionInput, InstructionFile, InstructionKind, LoadReason, PromptDecision};

use super::turns::{prompt_marks, prompt_verdict};
use super::{Firing, joined_contexts};
use crate::dialect::Claude;
use crate::events::HookEvent;
use crate::payload;

/// Fires InstructionsLoaded for Claude Code's memory files now; rules
/// wait until SessionStart has run (`misc_instructions_loaded`: Claude
/// Code reports `.claude/rules` files after its SessionStart hooks).
/// Codex `AGENTS.md` files are not Claude Code instructions: no event.
pub(super) fn instructions_loaded<'a>(
    cx: Cx<'_, Claude>,
    files: &'a [InstructionFile],
    reason: LoadReason,
) -> Flow<'a, Claude, ()> {
    let mut now = Vec::new();
    for file in files {
        match file.kind {
            InstructionKind::ClaudeMemory => now.push((file.clone(), reason)),
            InstructionKind::ClaudeRule => match reason {
                LoadReason::SessionStart => cx.state.pending_rules.push((file.clone(), reason)),
                LoadReason::PathGlobMatch => now.push((file.clone(), reason)),
            },
            InstructionKind::Agents => {}
        }
    }
    fire_each(cx, now)
}

/// Fires InstructionsLoaded for the rules held back by
/// [`instructions_loaded`].
pub(super) fn pending_rules<'a>(cx: Cx<'_, Claude>) -> Flow<'a, Claude, ()> {
    let pending = std::mem::take(&mut cx.state.pending_rules);
    fire_each(cx, pending)
}

/// Fires InstructionsLoaded for each file in turn.
fn fire_each<'a>(
    cx: Cx<'_, Claude>,
    mut files: Vec<(InstructionFile, LoadReason)>,
) -> Flow<'a, Claude, ()> {
    if files.is_empty() {
        return Flow::Done(());
    }
    let (file, reason) = files.remove(0);
    let common = cx.bridge.common(cx.state, cx.ctx, false);
    let firing = Firing {
        subject: Some(reason.as_str()),
        ..Firing::new(
            HookEvent::InstructionsLoaded,
            &payload::instructions_loaded(
                &common,
                &file.path.to_string_lossy(),
                file.memory_type.as_str(),
                reason.as_str(),
                &file.globs,
                file.trigger
                    .as_ref()
                    .map(|t| t.to_string_lossy().into_owned())
                    .as_deref(),
            ),
        )
    };
    Flow::notify(Claude::fire_of(&cx, &firing), ()).and_then(move |cx, ()| fire_each(cx, files))
}

/// UserPromptExpansion: exit 2 or `decision: "block"` rejects the turn
/// with Claude Code's text; `additionalContext` follows the prompt;
/// `continue: false` stops the turn.
pub(super) fn prompt_expansion<'a>(
    cx: Cx<'_, Claude>,
    input: &'a ExpansionInput,
) -> Flow<'a, Claude, PromptDecision> {
    let common = cx.bridge.common(cx.state, cx.ctx, true);
    let firing = Firing {
        subject: Some(&input.command_name),
        prompt: Some(&input.prompt),
        ..Firing::new(
            HookEvent::UserPromptExpansion,
            &payload::user_prompt_expansion(
                &common,
                input.expansion_type.as_str(),
                &input.command_name,
                &input.command_args,
                input.source.settings_name(),
                &input.prompt,
            ),
        )
    };
    let event = firing.event;
    Flow::fire_recorded(
        Claude::fire_of(&cx, &firing),
        |_, fired| prompt_marks(fired),
        move |_, fired| {
            Flow::Done(
                prompt_verdict(event, fired).unwrap_or_else(|| PromptDecision::Allow {
                    rewrite: None,
                    contexts: joined_contexts(fired, event),
                }),
            )
        },
    )
}
