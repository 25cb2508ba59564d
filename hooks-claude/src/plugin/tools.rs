//! The tool seams: PreToolUse at review time (the rewrite and the verdict
//! carried to pre-execute), PermissionRequest, PostToolUse /
//! PostToolUseFailure and PostToolBatch.

use std::time::Duration;

use dsh_seams::{
    ApprovalAsk, ApprovalDecision, ApprovalGrant, CallReview, ContextEntry, DeniedFollowUp,
    Disposition, InputRewrite, NoticeLevel, PostToolAction, PostToolDecision, PreToolDecision,
    PreToolOutcome, PreToolVerdict, SeamContext, SettledCall, StopRequest, ToolExecution,
    ToolOutcome, UserNotice,
};
use serde_json::Value;

use super::{ClaudePlugin, Firing};
use crate::dialect::source_of;
use crate::events::HookEvent;
use crate::output::{Effect, winning_permission};
use crate::payload;

fn permission_rank_of(effect: &Effect) -> u8 {
    crate::output::permission_rank(effect)
}

impl ClaudePlugin {
    /// The MCP server behind `tool`, when it is an MCP tool of this session.
    fn mcp_server_of(&self, tool: &str) -> Option<&payload::McpServerTag> {
        payload::mcp_server_of(tool, &self.config().options.mcp_servers)
    }

    /// Runs PreToolUse for a proposed call: the rewrite and the verdict the
    /// pipeline carries to this plugin's pre-execute and approval.
    pub(super) async fn run_pre_tool_use(
        &self,
        ctx: &SeamContext,
        call_id: &str,
        tool: &str,
        arguments: &Value,
    ) -> CallReview {
        let tool_name = payload::cc_tool_name(tool);
        let tool_input = payload::normalize_tool_input(tool, arguments, &ctx.session.current_dir());
        let common = self.common(ctx, true);
        let firing = Firing {
            subject: Some(&tool_name),
            tool_name: Some(&tool_name),
            tool_input: Some(&tool_input),
            call_id: Some(call_id),
            ..Firing::new(
                HookEvent::PreToolUse,
                &payload::with_mcp_server(
                    payload::pre_tool_use(&common, &tool_name, &tool_input, call_id),
                    self.mcp_server_of(tool),
                ),
            )
        };
        let fired = self.fire(ctx, &firing, None).await;
        if fired.is_empty() {
            return CallReview::keep();
        }
        let effects: Vec<&Effect> = fired.iter().map(|f| &f.reading.effect).collect();
        let winner = winning_permission(&effects);
        let label = format!("PreToolUse:{tool_name}");
        let (decision, stop_for_defer) = match winner.map(|i| &fired[i].reading.effect) {
            Some(Effect::Deny { text }) => (
                PreToolDecision::Deny {
                    reason: text.clone(),
                },
                None,
            ),
            Some(Effect::Defer { reason }) => (
                PreToolDecision::Deny {
                    reason: format!(
                        "{label} hook deferred this tool call{}",
                        reason
                            .as_deref()
                            .map(|r| format!(": {r}"))
                            .unwrap_or_default()
                    ),
                },
                Some(format!(
                    "{label} hook deferred the tool call; Claude Code ends the run here (stop_reason tool_deferred){}",
                    reason
                        .as_deref()
                        .map(|r| format!(": {r}"))
                        .unwrap_or_default()
                )),
            ),
            Some(Effect::Ask { reason }) => (
                // A hook's ask offers no permission changes (not captured).
                PreToolDecision::ask(reason.clone()),
                None,
            ),
            Some(Effect::Allow { .. } | Effect::None | Effect::Block { .. }) | None => {
                (PreToolDecision::Allow, None)
            }
        };
        let denied = matches!(decision, PreToolDecision::Deny { .. });
        // A hook's explicit allow answers the permission prompt the call
        // would get (`d_pre_allow_default_mode`: no PermissionRequest);
        // deny rules still deny after it (`c7`).
        let approval = winner
            .filter(|&i| matches!(fired[i].reading.effect, Effect::Allow { .. }))
            .map(|i| {
                ApprovalDecision::Allow(ApprovalGrant {
                    updated_input: None,
                    updates: Vec::new(),
                    by: source_of(HookEvent::PreToolUse, &fired[i].handler.command_text()),
                })
            });
        let rewriters: Vec<usize> = fired
            .iter()
            .enumerate()
            .filter(|(_, f)| f.reading.updated_input.is_some())
            .map(|(i, _)| i)
            .collect();
        let rewrite_winner = if denied {
            None
        } else {
            rewriters.first().copied()
        };
        let stop = fired
            .iter()
            .find_map(|f| f.reading.stop.clone())
            .or(stop_for_defer);
        self.record(ctx, firing.event, &fired, &|i, decision| {
            if permission_rank_of(&fired[i].reading.effect) > 0 {
                decision.won = Some(Some(i) == winner);
            }
            if fired[i].reading.updated_input.is_some() {
                decision.rewrite_won = Some(Some(i) == rewrite_winner);
                if denied {
                    decision.rewrite_ignored = Some("the call is denied".to_owned());
                }
            }
        });
        let contexts = Self::joined_contexts(&fired, HookEvent::PreToolUse);
        let source = "claude:PreToolUse".to_owned();
        let verdict = PreToolVerdict {
            outcome: PreToolOutcome { decision, contexts },
            notices: stop
                .iter()
                .filter(|reason| !reason.is_empty())
                .map(|reason| UserNotice {
                    source: source.clone(),
                    text: reason.clone(),
                    level: NoticeLevel::Info,
                })
                .collect(),
            stop: stop.map(|reason| StopRequest { reason, source }),
            approval,
            decided_by: winner.map(|i| {
                dsh_protocol::DecidedBy::new(
                    dsh_protocol::DeciderKind::Hook,
                    source_of(HookEvent::PreToolUse, &fired[i].handler.command_text()),
                )
            }),
        };
        let rewrite = match rewrite_winner {
            Some(i) => InputRewrite::Rewrite {
                arguments: fired[i].reading.updated_input.clone().unwrap_or_default(),
                by: source_of(HookEvent::PreToolUse, &fired[i].handler.command_text()),
                conflicts: rewriters
                    .iter()
                    .filter(|&&r| r != i)
                    .map(|&r| source_of(HookEvent::PreToolUse, &fired[r].handler.command_text()))
                    .collect(),
            },
            None => InputRewrite::Keep,
        };
        CallReview {
            rewrite,
            verdict: Some(verdict),
        }
    }
    pub(super) async fn on_approve(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        ask: &ApprovalAsk,
        review: Option<&PreToolVerdict>,
    ) -> ApprovalDecision {
        if let Some(answer) = review.and_then(|v| v.approval.clone()) {
            return answer;
        }
        let asked_by_hook = review.is_some_and(PreToolVerdict::asks);
        if asked_by_hook && !ctx.session.interactive {
            // Claude Code in -p: a PreToolUse `ask` is denied with its raw
            // reason and PermissionRequest hooks are not called (c3, d3).
            return ApprovalDecision::Abstain;
        }
        let tool_name = payload::cc_tool_name(&exec.tool);
        let tool_input =
            payload::normalize_tool_input(&exec.tool, &exec.arguments, &ctx.session.current_dir());
        let common = self.common(ctx, true);
        let firing = Firing {
            subject: Some(&tool_name),
            tool_name: Some(&tool_name),
            tool_input: Some(&tool_input),
            call_id: Some(&exec.call_id),
            ..Firing::new(
                HookEvent::PermissionRequest,
                &payload::permission_request(
                    &common,
                    &tool_name,
                    &tool_input,
                    ask.suggestions.as_deref(),
                ),
            )
        };
        let fired = self.fire(ctx, &firing, None).await;
        let effects: Vec<&Effect> = fired.iter().map(|f| &f.reading.effect).collect();
        let winner = winning_permission(&effects);
        let allowed =
            winner.is_some_and(|i| matches!(fired[i].reading.effect, Effect::Allow { .. }));
        self.record(ctx, firing.event, &fired, &|i, decision| {
            if permission_rank_of(&fired[i].reading.effect) > 0 {
                decision.won = Some(Some(i) == winner);
            }
            if fired[i].reading.updated_input.is_some() {
                decision.rewrite_won = Some(Some(i) == winner && allowed);
            }
        });
        match winner.map(|i| (i, &fired[i].reading)) {
            Some((i, interp)) => match &interp.effect {
                Effect::Deny { text } => {
                    if interp.stop.is_some() {
                        // `interrupt: true`: Claude Code stops the turn.
                        ctx.control
                            .request_stop(text.clone(), "claude:PermissionRequest");
                    }
                    ApprovalDecision::Deny {
                        message: text.clone(),
                    }
                }
                // A grant even without changes: it names the hook that
                // allowed (the result's `decided_by`).
                Effect::Allow { .. } => ApprovalDecision::Allow(ApprovalGrant {
                    updated_input: interp.updated_input.clone(),
                    updates: interp.updated_permissions.clone().unwrap_or_default(),
                    by: source_of(
                        HookEvent::PermissionRequest,
                        &fired[i].handler.command_text(),
                    ),
                }),
                Effect::None | Effect::Ask { .. } | Effect::Defer { .. } | Effect::Block { .. } => {
                    ApprovalDecision::Abstain
                }
            },
            None => ApprovalDecision::Abstain,
        }
    }

    /// PermissionDenied: auto mode's check denied the call. A hook's
    /// `retry: true` lets the model know it may try again.
    pub(super) async fn on_permission_denied(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        check_reason: &str,
    ) -> DeniedFollowUp {
        let tool_name = payload::cc_tool_name(&exec.tool);
        let tool_input =
            payload::normalize_tool_input(&exec.tool, &exec.arguments, &ctx.session.current_dir());
        let common = self.common(ctx, true);
        let firing = Firing {
            subject: Some(&tool_name),
            tool_name: Some(&tool_name),
            tool_input: Some(&tool_input),
            call_id: Some(&exec.call_id),
            ..Firing::new(
                HookEvent::PermissionDenied,
                &payload::permission_denied(
                    &common,
                    &tool_name,
                    &tool_input,
                    &exec.call_id,
                    check_reason,
                ),
            )
        };
        let fired = self.fire(ctx, &firing, None).await;
        self.record(ctx, firing.event, &fired, &|_, _| {});
        if fired.iter().any(|f| f.reading.retry) {
            DeniedFollowUp::MayRetry
        } else {
            DeniedFollowUp::Stand
        }
    }

    pub(super) async fn on_post_execute(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        outcome: &ToolOutcome,
        duration: Duration,
    ) -> PostToolDecision {
        let executed = matches!(outcome.disposition, Disposition::Executed);
        let failed_body = matches!(outcome.disposition, Disposition::Failed);
        if !executed && !failed_body {
            return PostToolDecision::accept();
        }
        let duration_ms = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
        let tool_name = payload::cc_tool_name(&exec.tool);
        let tool_input =
            payload::normalize_tool_input(&exec.tool, &exec.arguments, &ctx.session.current_dir());
        let response = payload::tool_response(
            &exec.tool,
            outcome.value.as_ref(),
            &exec.arguments,
            &outcome.content,
            duration_ms,
        );
        let common = self.common(ctx, true);
        {
            let mut state = self.state();
            if let Some(transcript) = state.transcript.as_mut() {
                transcript
                    .tool_responses
                    .insert(exec.call_id.clone(), response.clone());
            }
        }
        let (event, payload) = if outcome.is_error {
            (
                HookEvent::PostToolUseFailure,
                payload::post_tool_use_failure(
                    &common,
                    &tool_name,
                    &tool_input,
                    &exec.call_id,
                    &outcome.content,
                    false,
                    duration_ms,
                ),
            )
        } else {
            (
                HookEvent::PostToolUse,
                payload::post_tool_use(
                    &common,
                    &tool_name,
                    &tool_input,
                    &response,
                    &exec.call_id,
                    duration_ms,
                ),
            )
        };
        let payload = payload::with_mcp_server(payload, self.mcp_server_of(&exec.tool));
        let firing = Firing {
            subject: Some(&tool_name),
            tool_name: Some(&tool_name),
            tool_input: Some(&tool_input),
            call_id: Some(&exec.call_id),
            ..Firing::new(event, &payload)
        };
        let fired = self.fire(ctx, &firing, None).await;
        let replace_at = fired
            .iter()
            .position(|f| f.reading.replace_output.is_some());
        self.record(ctx, firing.event, &fired, &|i, decision| {
            if fired[i].reading.replace_output.is_some() {
                decision.replace_won = Some(Some(i) == replace_at);
            }
        });
        if let Some(reason) = fired.iter().find_map(|f| f.reading.stop.clone()) {
            ctx.control
                .request_stop(reason.clone(), format!("claude:{event}"));
            if !reason.is_empty() {
                ctx.sink.tell_user(UserNotice {
                    source: format!("claude:{event}"),
                    text: reason,
                    level: NoticeLevel::Info,
                });
            }
        }
        let action = match replace_at.and_then(|i| fired[i].reading.replace_output.clone()) {
            Some(Value::String(content)) => PostToolAction::ReplaceContent { content },
            // Content blocks: Claude Code hands them to the model as the
            // result and PostToolBatch sees them (`mcp_updated_output_blocks`):
            // they become the MCP result, rendered as any MCP result is.
            Some(Value::Array(blocks)) => PostToolAction::ReplaceValue {
                value: serde_json::json!({"content": blocks, "isError": false}),
            },
            Some(other) => PostToolAction::ReplaceContent {
                content: other.to_string(),
            },
            None => PostToolAction::Accept,
        };
        PostToolDecision {
            action,
            contexts: Self::joined_contexts(&fired, event),
        }
    }

    pub(super) async fn on_batch_settled(
        &self,
        ctx: &SeamContext,
        batch: &[SettledCall],
    ) -> Vec<ContextEntry> {
        if batch.is_empty() {
            return Vec::new();
        }
        let calls: Vec<payload::BatchCall> = batch
            .iter()
            .map(|settled| payload::BatchCall {
                tool_name: payload::cc_tool_name(&settled.call.tool),
                tool_input: payload::batch_tool_input(&settled.call.tool, &settled.call.arguments),
                tool_use_id: settled.call.call_id.clone(),
                tool_response: payload::batch_tool_response(
                    &settled.call.tool,
                    settled.outcome.value.as_ref(),
                    &settled.outcome.content,
                    settled.outcome.is_error,
                ),
            })
            .collect();
        let common = self.common(ctx, true);
        let firing = Firing::new(
            HookEvent::PostToolBatch,
            &payload::post_tool_batch(&common, &calls),
        );
        let fired = self.fire(ctx, &firing, None).await;
        // A block (exit 2 or `decision: "block"`) or `continue: false` stops
        // the loop before the next model call; the block text still reaches
        // the conversation through the contexts. The first in configuration
        // order gives the reason.
        let stop_at = fired.iter().position(|f| {
            f.reading.stop.is_some() || matches!(f.reading.effect, Effect::Block { .. })
        });
        self.record(ctx, firing.event, &fired, &|i, decision| {
            let interp = &fired[i].reading;
            if interp.stop.is_some() || matches!(interp.effect, Effect::Block { .. }) {
                decision.won = Some(Some(i) == stop_at);
            }
        });
        if let Some(i) = stop_at {
            let interp = &fired[i].reading;
            let block_text = match &interp.effect {
                Effect::Block { text } => Some(text.clone()),
                Effect::None
                | Effect::Allow { .. }
                | Effect::Ask { .. }
                | Effect::Defer { .. }
                | Effect::Deny { .. } => None,
            };
            let reason = interp.stop.clone().or(block_text).unwrap_or_default();
            ctx.control
                .request_stop(reason, "claude:PostToolBatch".to_owned());
        }
        Self::joined_contexts(&fired, HookEvent::PostToolBatch)
    }
}
