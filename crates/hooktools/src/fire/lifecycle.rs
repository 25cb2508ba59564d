//! The events beyond tools, prompts and the session's ends that `dsh hooks
//! test` fires (subagents, compaction, a failed request, slash-command
//! expansion, instruction files, an automatic denial): what each reads from
//! the payload, and how each goes through the bridges' seam.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::bail;
use dsh_model::{ModelError, ProviderFailure};
use dsh_seams::{
    AgentIdentity, CommandSource, CompactionDecision, CompactionInput, CompactionOutcome,
    CompactionTrigger, ContinuationDecision, DeniedFollowUp, ExpansionInput, ExpansionType,
    InstructionFile, InstructionKind, LoadReason, MemoryType, Plugin, PromptDecision, SeamContext,
    SubagentStartInput, SubagentStopInput, ToolExecution, TurnFailure,
};
use serde_json::{Value, json};

use super::firing::{Firing, TestEvent};
use super::sees::{Sees, context_lines};

/// The agent id a synthetic subagent gets when the payload names none
/// (Claude Code's shape: `a` and 16 lowercase hex digits).
const DEFAULT_AGENT_ID: &str = "a0123456789abcdef";

/// The fields of the events this module fires, from the payload (or the
/// `dsh hooks test` flags, which write into the payload).
#[derive(Debug, Clone)]
pub(crate) struct LifecycleFields {
    pub trigger: CompactionTrigger,
    pub custom_instructions: Option<String>,
    pub compact_summary: String,
    pub agent_id: String,
    pub agent_type: String,
    /// StopFailure's `error` category.
    pub failure: FailureKind,
    pub command_name: String,
    pub command_args: String,
    pub file_path: String,
    pub memory_type: MemoryType,
    pub load_reason: LoadReason,
    /// PermissionDenied's `reason` (the automatic check's words).
    pub denied_reason: String,
}

/// The StopFailure categories dsh itself sends, with the provider answer
/// that produces each (so the bridge derives the category as in a session).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FailureKind {
    RateLimit,
    AuthenticationFailed,
    BillingError,
    ServerError,
    Unknown,
}

impl FailureKind {
    const NAMES: [(&'static str, FailureKind); 5] = [
        ("rate_limit", FailureKind::RateLimit),
        ("authentication_failed", FailureKind::AuthenticationFailed),
        ("billing_error", FailureKind::BillingError),
        ("server_error", FailureKind::ServerError),
        ("unknown", FailureKind::Unknown),
    ];

    fn parse(name: &str) -> anyhow::Result<FailureKind> {
        if let Some((_, kind)) = Self::NAMES.iter().find(|(n, _)| *n == name) {
            return Ok(*kind);
        }
        let names: Vec<&str> = Self::NAMES.iter().map(|(n, _)| *n).collect();
        bail!(
            "StopFailure error `{name}` is not one dsh sends ({})",
            names.join(", ")
        )
    }

    /// A model error the bridge maps back to this category.
    fn model_error(self) -> ModelError {
        let status = match self {
            FailureKind::RateLimit => Some(429),
            FailureKind::AuthenticationFailed => Some(401),
            FailureKind::BillingError => Some(402),
            FailureKind::ServerError => Some(529),
            // No provider answer at all (a stalled stream): `unknown`.
            FailureKind::Unknown => None,
        };
        let error = ModelError::new("synthetic failure from dsh hooks test");
        match status {
            Some(status) => error.with_failure(ProviderFailure::from_status(
                status,
                "synthetic failure from dsh hooks test",
            )),
            None => error,
        }
    }
}

impl LifecycleFields {
    pub(crate) fn from_payload(
        event: TestEvent,
        payload: &Value,
    ) -> anyhow::Result<LifecycleFields> {
        let text = |key: &str| payload.get(key).and_then(Value::as_str).map(str::to_owned);
        let trigger = match text("trigger").as_deref() {
            None | Some("manual") => CompactionTrigger::Manual,
            Some("auto") => CompactionTrigger::Auto,
            Some(other) => bail!("unknown compaction trigger `{other}` (manual, auto)"),
        };
        let agent_id = text("agent_id").unwrap_or_else(|| DEFAULT_AGENT_ID.to_owned());
        // Bridges build the subagent's transcript path from its id.
        if !AgentIdentity::is_valid_id(&agent_id) {
            bail!("agent_id `{agent_id}` is not `a` followed by 16 lowercase hex digits");
        }
        // `error` is StopFailure's category; elsewhere it is a tool's error text.
        let failure = match (event, text("error")) {
            (TestEvent::StopFailure, Some(name)) => FailureKind::parse(&name)?,
            _ => FailureKind::Unknown,
        };
        let memory_type = match text("memory_type").as_deref() {
            None | Some("Project") => MemoryType::Project,
            Some("User") => MemoryType::User,
            Some("Local") => MemoryType::Local,
            Some(other) => bail!("unknown memory_type `{other}` (User, Project, Local)"),
        };
        let load_reason = match text("load_reason").as_deref() {
            None | Some("session_start") => LoadReason::SessionStart,
            Some("path_glob_match") => LoadReason::PathGlobMatch,
            Some(other) => {
                bail!("unknown load_reason `{other}` (session_start, path_glob_match)")
            }
        };
        Ok(LifecycleFields {
            trigger,
            custom_instructions: text("custom_instructions"),
            compact_summary: text("compact_summary")
                .unwrap_or_else(|| "(synthetic summary of the conversation)".to_owned()),
            agent_id,
            agent_type: text("agent_type")
                .unwrap_or_else(|| dsh_seams::DEFAULT_AGENT_TYPE.to_owned()),
            failure,
            command_name: text("command_name").unwrap_or_else(|| "example".to_owned()),
            command_args: text("command_args").unwrap_or_default(),
            file_path: text("file_path").unwrap_or_else(|| "CLAUDE.md".to_owned()),
            memory_type,
            load_reason,
            denied_reason: text("reason")
                .unwrap_or_else(|| "denied by an automatic check".to_owned()),
        })
    }

    /// The identity of the synthetic subagent.
    pub(crate) fn identity(&self) -> AgentIdentity {
        AgentIdentity {
            agent_id: self.agent_id.clone(),
            agent_type: self.agent_type.clone(),
        }
    }
}

/// Fires one of this module's events through every plugin's seam.
pub(super) async fn fire(
    plugins: &[Arc<dyn Plugin>],
    ctx: &SeamContext,
    firing: &Firing,
    sees: Sees<'_>,
) -> (Value, String) {
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
            (json!({"contexts": contexts}), summary)
        }
        TestEvent::SubagentStop => {
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
            let summary = match &decision {
                ContinuationDecision::Stop => {
                    sees.model
                        .push("nothing: the subagent ends and reports back".into());
                    "stop (the subagent ends normally)"
                }
                ContinuationDecision::Continue {
                    reason, contexts, ..
                } => {
                    if let Some(reason) = reason {
                        sees.model.push(format!("subagent user message: {reason}"));
                    }
                    sees.model.extend(context_lines(contexts));
                    "continue (the subagent goes on)"
                }
                ContinuationDecision::Halt { reason } => {
                    sees.user.push(format!("subagent stopped: {reason}"));
                    "halt"
                }
            };
            (
                serde_json::to_value(&decision).unwrap_or(Value::Null),
                summary.to_owned(),
            )
        }
        TestEvent::PreCompact => {
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
                    (json!({"cancel": reason}), "cancel (the history stays)")
                }
                (None, Some(text)) => {
                    sees.model
                        .push(format!("summary (instead of the model's): {text}"));
                    (json!({"summary": text}), "summary supplied")
                }
                (None, None) => {
                    for line in &instructions {
                        sees.model.push(format!("summary instructions: {line}"));
                    }
                    (
                        json!({"proceed": {"instructions": instructions}}),
                        "proceed",
                    )
                }
            };
            (decision, summary.to_owned())
        }
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
            (json!({"contexts": contexts}), summary)
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
                Value::Null,
                "observed (StopFailure hooks run detached; their output is ignored)".to_owned(),
            )
        }
        TestEvent::UserPromptExpansion => {
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
            let summary = match &decision {
                PromptDecision::Allow { contexts, .. } => {
                    sees.model.push(format!("user message: {}", input.expanded));
                    sees.model.extend(context_lines(contexts));
                    "allow"
                }
                PromptDecision::Block { reason } => {
                    sees.model
                        .push("nothing: the command is blocked, no model request".into());
                    sees.user.push(format!("command blocked: {reason}"));
                    "block"
                }
                PromptDecision::Stop { reason } => {
                    sees.model
                        .push("nothing: the turn stops before a model request".into());
                    sees.user.push(format!("turn stopped: {reason}"));
                    "stop"
                }
            };
            (
                serde_json::to_value(&decision).unwrap_or(Value::Null),
                summary.to_owned(),
            )
        }
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
                Value::Null,
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
            (
                serde_json::to_value(follow_up).unwrap_or(Value::Null),
                summary.to_owned(),
            )
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
        | TestEvent::Notification => (Value::Null, "not fired here".to_owned()),
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
        }
    }
}
