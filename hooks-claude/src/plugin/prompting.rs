//! The prompt-layer events: InstructionsLoaded and
//! UserPromptExpansion.

use dsh_seams::{
    ExpansionInput, InstructionFile, InstructionKind, LoadReason, PromptDecision, SeamContext,
};

use super::{ClaudePlugin, Firing};
use crate::events::HookEvent;
use crate::payload;

impl ClaudePlugin {
    /// Fires InstructionsLoaded for Claude Code's memory files now; rules
    /// wait until SessionStart has run (`misc_instructions_loaded`: Claude
    /// Code reports `.claude/rules` files after its SessionStart hooks).
    /// Codex `AGENTS.md` files are not Claude Code instructions: no event.
    pub(super) async fn on_instructions_loaded(
        &self,
        ctx: &SeamContext,
        files: &[InstructionFile],
        reason: LoadReason,
    ) {
        let mut now = Vec::new();
        for file in files {
            match file.kind {
                InstructionKind::ClaudeMemory => now.push(file.clone()),
                InstructionKind::ClaudeRule => match reason {
                    LoadReason::SessionStart => {
                        self.state().pending_rules.push((file.clone(), reason));
                    }
                    LoadReason::PathGlobMatch => now.push(file.clone()),
                },
                InstructionKind::Agents => {}
            }
        }
        for file in &now {
            self.fire_instructions_loaded(ctx, file, reason).await;
        }
    }

    /// Fires InstructionsLoaded for the rules held back by
    /// [`ClaudePlugin::on_instructions_loaded`].
    pub(super) async fn fire_pending_rules(&self, ctx: &SeamContext) {
        let pending = std::mem::take(&mut self.state().pending_rules);
        for (file, reason) in &pending {
            self.fire_instructions_loaded(ctx, file, *reason).await;
        }
    }

    async fn fire_instructions_loaded(
        &self,
        ctx: &SeamContext,
        file: &InstructionFile,
        reason: LoadReason,
    ) {
        let common = self.common(ctx, false);
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
        let fired = self.fire(ctx, &firing, None).await;
        self.record(ctx, firing.event, &fired, &|_, _| {});
    }

    /// UserPromptExpansion: exit 2 or `decision: "block"` rejects the turn
    /// with Claude Code's text; `additionalContext` follows the prompt;
    /// `continue: false` stops the turn.
    pub(super) async fn on_prompt_expansion(
        &self,
        ctx: &SeamContext,
        input: &ExpansionInput,
    ) -> PromptDecision {
        let common = self.common(ctx, true);
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
        let fired = self.fire(ctx, &firing, None).await;
        if let Some(decision) = self.prompt_verdict(ctx, firing.event, &fired) {
            return decision;
        }
        PromptDecision::Allow {
            rewrite: None,
            contexts: Self::joined_contexts(&fired, HookEvent::UserPromptExpansion),
        }
    }
}
