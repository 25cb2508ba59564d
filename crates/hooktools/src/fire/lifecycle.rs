//! The events beyond tools, prompts and the session's ends that `dsh hooks
//! test` fires (subagents, compaction, a failed request, slash-command
//! expansion, instruction files, an automatic denial): what each reads from
//! the payload, and how each goes through the bridges' seam.

use std::path::PathBuf;
use std::sync::Arc;

use dsh_seams::{
    CommandSource, CompactionDecision, CompactionInput, CompactionOutcome, ContinuationDecision,
    DeniedFollowUp, ExpansionInput, ExpansionType, InstructionFile, InstructionKind, Plugin,
    PromptDecision, SeamContext, SubagentStartInput, SubagentStopInput, ToolExecution, TurnFailure,
};

use super::decided::{CompactionReport, Decided};
use super::event::TestEvent;
use super::firing::Firing;
use super::sees::{Continuing, Sees, context_lines};

/// Fires one of this module's events through every plugin's seam.
pub(super) async fn fire(
    plugins: &[Arc<dyn Plugin>],
    ctx: &SeamContext,
    firing: &Firing,
    sees: Sees<'_>,
) -> (Decided, String) {
    let fields = &firing.lifecycle;
    match firing.event {
        TestEvent::SubagentStart => {
            let input = SubagentStartInput {
                identity: fields.identity(),
                prompt: firing.prompt.clone(),
                description: "hooks test".to_owned(),
            };
            let mut contexts = Vec::new();
            for plugin in plugins {
                contexts.extend(plugin.subagent_start(ctx, &input).await);
            }
            sees.model.extend(context_lines(&contexts));
            let summary = format!("{} context(s) for the subagent", contexts.len());
            (Decided::Contexts { contexts }, summary)
        }
        TestEvent::SubagentStop => subagent_stop(plugins, ctx, firing, sees).await,
        TestEvent::PreCompact => pre_compact(plugins, ctx, firing, sees).await,
        TestEvent::PostCompact => {
            let outcome = CompactionOutcome {
                trigger: fields.trigger,
                summary: fields.compact_summary.clone(),
                summarized_by: "model".to_owned(),
            };
            let mut contexts = Vec::new();
            for plugin in plugins {
                contexts.extend(plugin.session_compacted(ctx, &outcome).await);
            }
            sees.model.extend(context_lines(&contexts));
            let summary = format!("{} context(s) after the summary", contexts.len());
            (Decided::Contexts { contexts }, summary)
        }
        TestEvent::StopFailure => {
            let failure = TurnFailure {
                turn: firing.turn,
                step: 1,
                error: fields.failure.model_error(),
            };
            for plugin in plugins {
                plugin.turn_failed(ctx, &failure).await;
            }
            (
                Decided::Nothing,
                "observed (StopFailure hooks run detached; their output is ignored)".to_owned(),
            )
        }
        TestEvent::UserPromptExpansion => prompt_expansion(plugins, ctx, firing, sees).await,
        TestEvent::InstructionsLoaded => {
            let path = PathBuf::from(&fields.file_path);
            let file = InstructionFile {
                path: if path.is_absolute() {
                    path
                } else {
                    ctx.session.cwd.join(path)
                },
                memory_type: fields.memory_type,
                kind: InstructionKind::ClaudeMemory,
                content: "(synthetic instructions)".to_owned(),
                truncated: false,
                globs: Vec::new(),
                trigger: None,
            };
            for plugin in plugins {
                plugin
                    .instructions_loaded(ctx, std::slice::from_ref(&file), fields.load_reason)
                    .await;
            }
            (
                Decided::Nothing,
                "observed (InstructionsLoaded cannot change anything)".to_owned(),
            )
        }
        TestEvent::PermissionDenied => {
            let exec = firing.execution();
            let mut follow_up = DeniedFollowUp::Stand;
            for plugin in plugins {
                if plugin
                    .permission_denied(ctx, &exec, &fields.denied_reason)
                    .await
                    == DeniedFollowUp::MayRetry
                {
                    follow_up = DeniedFollowUp::MayRetry;
                }
            }
            let summary = match follow_up {
                DeniedFollowUp::Stand => {
                    sees.model
                        .push(format!("tool result (error): {}", fields.denied_reason));
                    "the denial stands"
                }
                DeniedFollowUp::MayRetry => {
                    sees.model.push(format!(
                        "tool result (error): {} (the model is told it may retry)",
                        fields.denied_reason
                    ));
                    "retry allowed"
                }
            };
            (Decided::Denied(follow_up), summary.to_owned())
        }
        // The other events are fired by the parent module.
        TestEvent::PreToolUse
        | TestEvent::PermissionRequest
        | TestEvent::PostToolUse
        | TestEvent::PostToolUseFailure
        | TestEvent::UserPromptSubmit
        | TestEvent::SessionStart
        | TestEvent::Stop
        | TestEvent::SessionEnd
        | TestEvent::Notification => (Decided::Nothing, "not fired here".to_owned()),
    }
}

impl Firing {
    /// The sealed call a tool event's seams see.
    pub(super) fn execution(&self) -> ToolExecution {
        ToolExecution {
            execution_id: "exec_hooks_test".to_owned(),
            call_id: self.call_id.clone(),
            tool: self.tool.clone(),
            arguments: Arc::new(self.arguments.clone()),
            original_arguments: None,
            rewritten_by: None,
            parent_execution_id: None,
            origin: None,
        }
    }
}

/// SubagentStop under `dsh hooks test`.
async fn subagent_stop(
    plugins: &[Arc<dyn Plugin>],
    ctx: &SeamContext,
    firing: &Firing,
    mut sees: Sees<'_>,
) -> (Decided, String) {
    let fields = &firing.lifecycle;
    let input = SubagentStopInput {
        identity: fields.identity(),
        last_assistant_message: firing.last_assistant_message.clone(),
        stop_hook_active: firing.stop_hook_active,
        forced_continuations: u32::from(firing.stop_hook_active),
    };
    let mut decision = ContinuationDecision::Stop;
    for plugin in plugins {
        let own = plugin.subagent_stop(ctx, &input).await;
        if own != ContinuationDecision::Stop {
            decision = own;
            break;
        }
    }
    let summary = sees.continuation(&decision, Continuing::Subagent);
    (Decided::Continuation(decision), summary.to_owned())
}

/// PreCompact under `dsh hooks test`.
async fn pre_compact(
    plugins: &[Arc<dyn Plugin>],
    ctx: &SeamContext,
    firing: &Firing,
    sees: Sees<'_>,
) -> (Decided, String) {
    let fields = &firing.lifecycle;
    let input = CompactionInput {
        trigger: fields.trigger,
        custom_instructions: fields.custom_instructions.clone(),
        estimated_tokens: 0,
        messages_to_summarize: 0,
    };
    let mut instructions = Vec::new();
    let mut summary_text = None;
    let mut cancel = None;
    for plugin in plugins {
        match plugin.session_before_compact(ctx, &input).await {
            CompactionDecision::Proceed { instructions: own } => instructions.extend(own),
            CompactionDecision::Summary { summary } => {
                summary_text.get_or_insert(summary);
            }
            CompactionDecision::Cancel { reason } => {
                cancel = Some(reason);
                break;
            }
        }
    }
    let (decision, summary) = match (cancel, summary_text) {
        (Some(reason), _) => {
            sees.user.push(format!("compaction cancelled: {reason}"));
            (
                CompactionReport::Cancel(reason),
                "cancel (the history stays)",
            )
        }
        (None, Some(text)) => {
            sees.model
                .push(format!("summary (instead of the model's): {text}"));
            (CompactionReport::Summary(text), "summary supplied")
        }
        (None, None) => {
            for line in &instructions {
                sees.model.push(format!("summary instructions: {line}"));
            }
            (CompactionReport::Proceed { instructions }, "proceed")
        }
    };
    (Decided::Compaction(decision), summary.to_owned())
}

/// UserPromptExpansion under `dsh hooks test`.
async fn prompt_expansion(
    plugins: &[Arc<dyn Plugin>],
    ctx: &SeamContext,
    firing: &Firing,
    mut sees: Sees<'_>,
) -> (Decided, String) {
    let fields = &firing.lifecycle;
    let input = ExpansionInput {
        prompt: format!("/{} {}", fields.command_name, fields.command_args)
            .trim_end()
            .to_owned(),
        command_name: fields.command_name.clone(),
        command_args: fields.command_args.clone(),
        source: CommandSource::Project,
        expansion_type: ExpansionType::SlashCommand,
        expanded: firing.prompt.clone(),
    };
    let mut contexts = Vec::new();
    let mut decided = None;
    for plugin in plugins {
        match plugin.prompt_expansion(ctx, &input).await {
            // A rewrite is ignored here: the expansion is the command's.
            PromptDecision::Allow {
                contexts: own,
                rewrite: _,
            } => contexts.extend(own),
            other @ (PromptDecision::Block { .. } | PromptDecision::Stop { .. }) => {
                decided = Some(other);
                break;
            }
        }
    }
    let decision = decided.unwrap_or(PromptDecision::Allow {
        rewrite: None,
        contexts,
    });
    let summary = sees.prompt_decision(&decision, "command", &input.expanded);
    (Decided::Prompt(decision), summary.to_owned())
}
