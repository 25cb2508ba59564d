//! The loop's prompt layer: instruction files in the system
//! prompt, custom commands expanding a turn's prompt, and the system-prompt
//! seam. The loop (`agent.rs`) calls these at three points: session start,
//! after prompt-submit policy, and before a turn's first request.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use dsh_seams::{
    AgentStartInput, ContextEntry, ExpansionInput, ExpansionType, LoadReason, NoticeLevel, Plugin,
    PromptDecision, SeamContext, StoppedPrompt, UserNotice,
};
use futures::FutureExt;

use crate::commands::{self, CommandCatalog, PromptCommand};
use crate::instructions::Instructions;

/// What a session knows about its project: instruction files and commands.
#[derive(Debug, Clone, Default)]
pub struct ProjectContext {
    /// Instruction files (already in the system prompt the agent sends).
    pub instructions: Instructions,
    /// Custom commands, skills and Codex prompts.
    pub commands: CommandCatalog,
}

impl ProjectContext {
    /// Reads both from `roots`, with the default instruction cap.
    pub fn discover(roots: &crate::instructions::ContextRoots) -> Self {
        ProjectContext {
            instructions: Instructions::discover(roots, crate::instructions::DEFAULT_MAX_BYTES),
            commands: CommandCatalog::discover(roots),
        }
    }
}

/// Tells the user what the cap cut and fires the instructions-loaded seam.
pub(crate) async fn announce_instructions(
    plugins: &[Arc<dyn Plugin>],
    ctx: &SeamContext,
    instructions: &Instructions,
) {
    for notice in &instructions.notices {
        ctx.sink.tell_user(UserNotice {
            source: "dsh".to_owned(),
            text: notice.clone(),
            level: NoticeLevel::Warning,
        });
    }
    if instructions.files.is_empty() {
        return;
    }
    for plugin in plugins {
        if AssertUnwindSafe(plugin.instructions_loaded(
            ctx,
            &instructions.files,
            LoadReason::SessionStart,
        ))
        .catch_unwind()
        .await
        .is_err()
        {
            tracing::error!("instructions-loaded listener `{}` panicked", plugin.name());
        }
    }
}

/// What the prompt-expansion step made of a turn's prompt.
pub(crate) enum Expansion {
    /// Not a custom command: the prompt goes to the model as it is.
    Unchanged,
    /// The command's text replaces the prompt; contexts follow it.
    Expanded {
        content: String,
        contexts: Vec<ContextEntry>,
    },
    /// A listener blocked the expansion: no model request (`rejected`).
    Blocked(String),
    /// A listener stopped the turn (`stopped`), and what the conversation
    /// keeps besides the prompt.
    Stopped(String, StoppedPrompt),
}

/// Expands `content` when it invokes a custom command, firing the
/// prompt-expansion seam (a blocking listener wins; contexts join in order).
pub(crate) async fn expand(
    plugins: &[Arc<dyn Plugin>],
    ctx: &SeamContext,
    content: &str,
    catalog: &CommandCatalog,
) -> Expansion {
    let Some(PromptCommand::Custom(invocation)) = commands::parse(content, catalog) else {
        return Expansion::Unchanged;
    };
    let input = ExpansionInput {
        prompt: content.to_owned(),
        command_name: invocation.name.clone(),
        command_args: invocation.args.clone(),
        source: invocation.command.source,
        expansion_type: ExpansionType::SlashCommand,
        expanded: invocation.expand(),
    };
    let mut contexts = Vec::new();
    for plugin in plugins {
        let decision = AssertUnwindSafe(plugin.prompt_expansion(ctx, &input))
            .catch_unwind()
            .await
            .unwrap_or_else(|_| PromptDecision::Block {
                reason: format!("prompt-expansion listener `{}` failed", plugin.name()),
            });
        match decision {
            PromptDecision::Allow {
                rewrite: _,
                contexts: more,
            } => contexts.extend(more),
            PromptDecision::Block { reason } => return Expansion::Blocked(reason),
            PromptDecision::Stop { reason, kept } => return Expansion::Stopped(reason, kept),
        }
    }
    Expansion::Expanded {
        content: input.expanded,
        contexts,
    }
}

/// Runs the system-prompt seam: each listener sees the prompt as the
/// previous one left it. Returns the turn's system prompt and contexts.
pub(crate) async fn agent_start(
    plugins: &[Arc<dyn Plugin>],
    ctx: &SeamContext,
    prompt: &str,
    system_prompt: &str,
    instructions: &Instructions,
) -> (String, Vec<ContextEntry>) {
    let mut input = AgentStartInput {
        prompt: prompt.to_owned(),
        system_prompt: system_prompt.to_owned(),
        instructions: instructions.files.clone(),
    };
    let mut contexts = Vec::new();
    for plugin in plugins {
        match AssertUnwindSafe(plugin.before_agent_start(ctx, &input))
            .catch_unwind()
            .await
        {
            Ok(decision) => {
                if let Some(replacement) = decision.system_prompt {
                    input.system_prompt = replacement;
                }
                contexts.extend(decision.contexts);
            }
            Err(_) => tracing::error!(
                "system-prompt listener `{}` panicked; its change is dropped",
                plugin.name()
            ),
        }
    }
    (input.system_prompt, contexts)
}

/// The `source` of a scoped rule's context message; a reopened log's
/// messages with it say which rules are already loaded.
pub(crate) const SCOPED_RULE_SOURCE: &str = "dsh:instructions:";

/// Loads the path-scoped rules the batch's `file_path`s match (each rule
/// once per conversation): fires the instructions-loaded seam
/// (`path_glob_match`) and returns the rules as contexts for the batch FIFO.
pub(crate) async fn scoped_rules(
    plugins: &[Arc<dyn Plugin>],
    ctx: &SeamContext,
    instructions: &Instructions,
    settled: &[dsh_seams::SettledCall],
    loaded: &std::sync::Mutex<std::collections::HashSet<std::path::PathBuf>>,
) -> Vec<ContextEntry> {
    if instructions.scoped_rules.is_empty() {
        return Vec::new();
    }
    let mut found = Vec::new();
    {
        let mut loaded = loaded
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for call in settled {
            let Some(file) = call
                .execution
                .arguments
                .get("file_path")
                .and_then(serde_json::Value::as_str)
            else {
                continue;
            };
            for rule in
                instructions.rules_for(&ctx.session.cwd, std::path::Path::new(file), &loaded)
            {
                loaded.insert(rule.path.clone());
                found.push(rule);
            }
        }
    }
    if found.is_empty() {
        return Vec::new();
    }
    for plugin in plugins {
        if AssertUnwindSafe(plugin.instructions_loaded(ctx, &found, LoadReason::PathGlobMatch))
            .catch_unwind()
            .await
            .is_err()
        {
            tracing::error!("instructions-loaded listener `{}` panicked", plugin.name());
        }
    }
    found
        .iter()
        .map(|rule| {
            let trigger = rule
                .trigger
                .as_ref()
                .map(|t| t.display().to_string())
                .unwrap_or_default();
            ContextEntry::new(
                format!(
                    "Project instructions from {} (for files matching {}; {trigger} was used):\n\n{}",
                    rule.path.display(),
                    rule.globs.join(", "),
                    rule.content.trim_end()
                ),
                format!("{SCOPED_RULE_SOURCE}{}", rule.path.display()),
            )
        })
        .collect()
}

/// The scoped rules a reopened log already loaded (after its last `/clear`).
pub(crate) fn loaded_rules(
    events: &[dsh_protocol::Event],
) -> std::collections::HashSet<std::path::PathBuf> {
    let mut loaded = std::collections::HashSet::new();
    for event in events {
        if let dsh_protocol::EventBody::ContextMessage(dsh_protocol::ContextMessageEvent {
            source,
            ..
        }) = &event.body
            && let Some(path) = source.strip_prefix(SCOPED_RULE_SOURCE)
        {
            loaded.insert(std::path::PathBuf::from(path));
        } else if let dsh_protocol::EventBody::SessionCleared {} = &event.body {
            loaded.clear();
        }
    }
    loaded
}
