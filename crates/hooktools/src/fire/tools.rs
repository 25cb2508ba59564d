//! The tool events `dsh hooks test` fires: PreToolUse through the tool
//! registry's own dry run, PermissionRequest through the approval seam,
//! PostToolUse/PostToolUseFailure through the post-execute seam.

use std::sync::Arc;
use std::time::Duration;

use dsh_seams::{
    ApprovalDecision, DenialKind, Disposition, Plugin, PostToolAction, PostToolDecision,
    PreToolDecision, PreToolOutcome, ProposedCall, SeamContext, ToolExecution,
};
use dsh_tools::{CallVerdict, builtin::ProcessLayer};
use serde_json::Value;

use super::decided::{Decided, PreToolReport, RewriteReport, StoppedReport};

use super::event::TestEvent;
use super::firing::Firing;
use super::sees::{Sees, context_lines};
use crate::common::excerpt;

/// Fires one tool event; returns the decision, its summary, and the
/// arguments the call would run with.
pub(super) async fn fire(
    plugins: &[Arc<dyn Plugin>],
    ctx: &SeamContext,
    firing: &Firing,
    sees: Sees<'_>,
) -> (Decided, String, Option<Value>) {
    let mut arguments_used = None;
    let (decision, summary) = match firing.event {
        TestEvent::PreToolUse => {
            let call = ProposedCall {
                call_id: firing.call_id.clone(),
                tool: firing.tool.clone(),
                arguments: firing.arguments.clone(),
                parent_execution_id: None,
                origin: None,
            };
            // The registry's own dry run (seal, pre-execute, approval,
            // guards): what a session would decide, never dispatched.
            let mut registry = dsh_agent::builtin_registry(plugins, &ProcessLayer::default());
            // An MCP tool is asked about without starting its server.
            if firing.tool.starts_with("mcp__") {
                registry.register_tool(std::sync::Arc::new(dsh_mcp::McpStandIn::new(&firing.tool)));
            }
            let decided = registry.decide(ctx, call).await;
            let exec = &decided.execution;
            let rewritten_by = exec.rewritten_by.clone();
            let (decision, stopped) = match decided.verdict {
                CallVerdict::Runs { decision } => (Some(decision), None),
                CallVerdict::Denied { decision, outcome } => (Some(decision), Some(outcome)),
                CallVerdict::Rejected(outcome) => (None, Some(outcome)),
            };
            let stopped_by = stopped.as_ref().map(|outcome| outcome.disposition);
            let summary = match (&decision, stopped_by) {
                (None, _) => {
                    sees.model.push(format!(
                        "tool result (error): {}",
                        stopped.as_ref().map_or("", |o| o.content.as_str())
                    ));
                    match &rewritten_by {
                        Some(by) => format!(
                            "rejected: {by} rewrote the arguments and they fail the tool's check"
                        ),
                        None => "rejected before any hook decided".to_owned(),
                    }
                }
                (Some(_), Some(Disposition::Denied(DenialKind::Guard))) => {
                    sees.model.push(format!(
                        "tool result (error): {}",
                        stopped.as_ref().map_or("", |o| o.content.as_str())
                    ));
                    "deny (guard)".to_owned()
                }
                (
                    Some(
                        PreToolDecision::Deny { reason } | PreToolDecision::AutoDeny { reason, .. },
                    ),
                    _,
                ) => {
                    sees.model.push(format!("tool result (error): {reason}"));
                    "deny".to_owned()
                }
                (
                    Some(PreToolDecision::Ask { reason, .. }),
                    Some(Disposition::Denied(DenialKind::NoApprovalService)),
                ) => {
                    sees.model.push(format!(
                        "interactive: the user is asked to approve; headless: tool result (error): {}",
                        reason.as_deref().unwrap_or("(dsh's default denial text)")
                    ));
                    "ask".to_owned()
                }
                (Some(PreToolDecision::Ask { .. }), Some(_)) => {
                    sees.model.push(format!(
                        "tool result (error): {}",
                        stopped.as_ref().map_or("", |o| o.content.as_str())
                    ));
                    "ask, denied by an approval hook".to_owned()
                }
                (Some(PreToolDecision::Ask { .. }), None) => {
                    sees.model.push(format!(
                        "the {} call runs with {}",
                        firing.tool, exec.arguments
                    ));
                    "ask, allowed by an approval hook".to_owned()
                }
                (Some(PreToolDecision::Allow), _) => {
                    sees.model.push(format!(
                        "the {} call runs with {}",
                        firing.tool, exec.arguments
                    ));
                    match &rewritten_by {
                        Some(by) => format!("allow, arguments rewritten by {by}"),
                        None => "allow".to_owned(),
                    }
                }
            };
            sees.model.extend(context_lines(&decided.contexts));
            arguments_used = Some((*exec.arguments).clone());
            let outcome = PreToolOutcome {
                decision: decision.clone().unwrap_or(PreToolDecision::Allow),
                contexts: decided.contexts.clone(),
            };
            let rewrite = rewritten_by.map(|by| RewriteReport {
                arguments: (*exec.arguments).clone(),
                by,
                conflicts: decided.rewrite_conflicts.clone(),
            });
            // What stopped the call beyond the hooks' own decision
            // (sealing, a guard, an approval hook).
            let beyond_hooks = match (&decision, stopped_by) {
                (None, _) => true,
                (Some(_), Some(Disposition::Denied(DenialKind::Guard))) => true,
                (Some(PreToolDecision::Ask { .. }), Some(Disposition::Denied(kind))) => {
                    kind != DenialKind::NoApprovalService
                }
                _ => false,
            };
            let stopped = stopped
                .filter(|_| beyond_hooks)
                .map(|stopped| StoppedReport {
                    content: stopped.content,
                    disposition: stopped.disposition,
                });
            let report = PreToolReport {
                outcome,
                rewrite,
                stopped,
            };
            (Decided::PreTool(report), summary)
        }
        TestEvent::PermissionRequest => {
            arguments_used = Some(firing.arguments.clone());
            permission_request(plugins, ctx, firing, sees).await
        }
        TestEvent::PostToolUse | TestEvent::PostToolUseFailure => {
            arguments_used = Some(firing.arguments.clone());
            post_tool(plugins, ctx, firing, sees).await
        }
        // The other events are fired by the parent module and `lifecycle`.
        TestEvent::UserPromptSubmit
        | TestEvent::SessionStart
        | TestEvent::Stop
        | TestEvent::SessionEnd
        | TestEvent::Notification
        | TestEvent::SubagentStart
        | TestEvent::SubagentStop
        | TestEvent::PreCompact
        | TestEvent::PostCompact
        | TestEvent::StopFailure
        | TestEvent::UserPromptExpansion
        | TestEvent::InstructionsLoaded
        | TestEvent::PermissionDenied => (Decided::Nothing, "not fired here".to_owned()),
    };
    (decision, summary, arguments_used)
}

/// PermissionRequest: the first deny wins, else the first allow.
async fn permission_request(
    plugins: &[Arc<dyn Plugin>],
    ctx: &SeamContext,
    firing: &Firing,
    sees: Sees<'_>,
) -> (Decided, String) {
    let exec = ToolExecution {
        execution_id: "exec_hooks_test".to_owned(),
        call_id: firing.call_id.clone(),
        tool: firing.tool.clone(),
        arguments: Arc::new(firing.arguments.clone()),
        original_arguments: None,
        rewritten_by: None,
        parent_execution_id: None,
        origin: None,
    };
    let mut combined = ApprovalDecision::Abstain;
    for plugin in plugins {
        match plugin
            .approve(ctx, &exec, &dsh_seams::ApprovalAsk::default(), None)
            .await
        {
            ApprovalDecision::Abstain => {}
            allow @ ApprovalDecision::Allow(_) => {
                if combined == ApprovalDecision::Abstain {
                    combined = allow;
                }
            }
            ApprovalDecision::AllowOnce => {
                if combined == ApprovalDecision::Abstain {
                    combined = ApprovalDecision::AllowOnce;
                }
            }
            deny @ ApprovalDecision::Deny { .. } => {
                combined = deny;
                break;
            }
        }
    }
    let summary = match &combined {
        ApprovalDecision::Abstain => {
            sees.model
                .push("no hook decided: the user is asked (headless: denied)".into());
            "abstain"
        }
        ApprovalDecision::AllowOnce => {
            sees.model.push(format!("the {} call runs", firing.tool));
            "allow once"
        }
        ApprovalDecision::Allow(grant) => {
            match &grant.updated_input {
                Some(input) => sees
                    .model
                    .push(format!("the {} call runs with {input}", firing.tool)),
                None => sees.model.push(format!("the {} call runs", firing.tool)),
            }
            if !grant.updates.is_empty() {
                sees.model.push(format!(
                    "permission updates: {}",
                    serde_json::to_string(&grant.updates).unwrap_or_default()
                ));
            }
            "allow"
        }
        ApprovalDecision::Deny { message } => {
            sees.model.push(format!("tool result (error): {message}"));
            "deny"
        }
    };
    (Decided::Approval(combined), summary.to_owned())
}

/// PostToolUse and PostToolUseFailure: contexts add up, the first action that is not accept wins.
async fn post_tool(
    plugins: &[Arc<dyn Plugin>],
    ctx: &SeamContext,
    firing: &Firing,
    sees: Sees<'_>,
) -> (Decided, String) {
    let exec = ToolExecution {
        execution_id: "exec_hooks_test".to_owned(),
        call_id: firing.call_id.clone(),
        tool: firing.tool.clone(),
        arguments: Arc::new(firing.arguments.clone()),
        original_arguments: None,
        rewritten_by: None,
        parent_execution_id: None,
        origin: None,
    };
    let outcome = firing.outcome();
    let mut combined = PostToolDecision::accept();
    for plugin in plugins {
        let own = plugin
            .post_execute(ctx, &exec, &outcome, Duration::from_millis(1))
            .await;
        combined.contexts.extend(own.contexts);
        if combined.action == PostToolAction::Accept {
            combined.action = own.action;
        }
    }
    let summary = match &combined.action {
        PostToolAction::Accept => {
            sees.model.push(format!(
                "tool result{}: {}",
                if outcome.is_error { " (error)" } else { "" },
                excerpt(&outcome.content, 200)
            ));
            "accept"
        }
        PostToolAction::Block { feedback } => {
            sees.model.push(format!("tool result (error): {feedback}"));
            "block"
        }
        PostToolAction::ReplaceContent { content } => {
            sees.model.push(format!("tool result: {content}"));
            "replace content"
        }
        PostToolAction::ReplaceValue { value } => {
            sees.model.push(format!("tool result value: {value}"));
            "replace value"
        }
        PostToolAction::TailCall { tool, arguments } => {
            sees.model.push(format!(
                "tool result: that of a tail call {tool} {arguments}"
            ));
            "tail call"
        }
    };
    sees.model.extend(context_lines(&combined.contexts));
    (Decided::PostTool(combined), summary.to_owned())
}
