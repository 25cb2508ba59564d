//! The tool seams: PreToolUse at review time (the rewrite and the verdict
//! carried to pre-execute), PermissionRequest and PostToolUse.

use std::time::Duration;

use dsh_hooks::Dialect as _;
use dsh_seams::{
    ApprovalDecision, CallReview, Disposition, InputRewrite, PostToolDecision, PreToolOutcome,
    PreToolVerdict, SeamContext, ToolExecution, ToolOutcome,
};
use serde_json::Value;

use super::{CodexPlugin, effects};
use crate::config::approval::{NEVER_TEXT, PolicyApproval};
use crate::event::CodexEvent;
use crate::matcher::tool_aliases;
use crate::output::{Effect, EntryKind, RunStatus};
use crate::payload;
use crate::tools;
use crate::translate;

impl CodexPlugin {
    pub(super) fn existing_file(
        ctx: &SeamContext,
        tool: &str,
        arguments: &Value,
    ) -> Option<String> {
        if tool != "write" {
            return None;
        }
        let path = arguments.get("file_path").and_then(Value::as_str)?;
        let path = ctx.session.cwd.join(path);
        fs_err::read_to_string(path).ok()
    }

    /// Runs PreToolUse for a proposed call: the rewrite and the verdict the
    /// pipeline carries to this plugin's pre-execute.
    pub(super) async fn run_pre_tool_use(
        &self,
        ctx: &SeamContext,
        call_id: &str,
        tool: &str,
        arguments: &Value,
    ) -> CallReview {
        let event = CodexEvent::PreToolUse;
        let name = tools::hook_tool_name(tool);
        let existing = Self::existing_file(ctx, tool, arguments);
        let tool_input =
            tools::hook_tool_input(tool, arguments, &ctx.session.cwd, existing.as_deref());
        let payload = payload::pre_tool_use(
            &self.base(ctx),
            &Self::turn_id(ctx),
            name,
            &tool_input,
            call_id,
        );
        let mut records = self
            .run_event(
                ctx,
                event,
                payload,
                Some((name, tool_aliases(name))),
                Some(call_id),
                &ctx.cancel,
            )
            .await;
        // Apply rewrites; a rewrite dsh cannot express fails that run.
        let mut rewritten: Option<(usize, Value)> = None;
        let mut conflicts = Vec::new();
        for (index, record) in records.iter_mut().enumerate() {
            if let Effect::Rewrite { updated_input } = &record.reading.interpretation.effect {
                match tools::arguments_from_updated_input(
                    tool,
                    arguments,
                    updated_input,
                    &ctx.session.cwd,
                ) {
                    Ok(new_arguments) => {
                        if rewritten.is_none() {
                            rewritten = Some((index, new_arguments));
                        } else {
                            conflicts.push(record.handler.origin.clone());
                        }
                    }
                    Err(error) => {
                        let mut failed = record.reading.interpretation.clone();
                        failed.status = RunStatus::Failed;
                        failed.effect = Effect::None;
                        failed.entries.push(crate::output::OutputEntry {
                            kind: EntryKind::Error,
                            text: error,
                        });
                        record.reading.interpretation = failed;
                        record.record = self
                            .engine
                            .dialect()
                            .adjust_record(&record.reading, record.record.clone());
                    }
                }
            }
        }
        let contexts = Self::context_entries(event, &records);
        let verdict = translate::pre_tool_use(&effects(&records), tool, &tool_input);
        Self::mark(&mut records, &verdict);
        let blocked = verdict.winner.is_some();
        if !blocked {
            Self::mark_won(
                &mut records,
                rewritten.as_ref().map(|(index, _)| *index),
                |effect| matches!(effect, Effect::Rewrite { .. }),
            );
        }
        self.record(ctx, event, &records);
        let verdict = PreToolVerdict::of(PreToolOutcome {
            decision: verdict.answer,
            contexts,
        });
        let rewrite = match (blocked, rewritten) {
            (false, Some((index, arguments))) => InputRewrite::Rewrite {
                arguments,
                by: records
                    .get(index)
                    .map(|record| format!("codex:PreToolUse:{}", record.handler.origin))
                    .unwrap_or_default(),
                conflicts,
            },
            _ => InputRewrite::Keep,
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
        _reason: Option<&str>,
        _review: Option<&PreToolVerdict>,
    ) -> ApprovalDecision {
        // Under `approval_policy = "never"` Codex asks nobody: no
        // PermissionRequest hook runs and the call is rejected.
        if let Some(policy) = &self.config.approval.policy {
            match policy.value.approval() {
                PolicyApproval::Reject => {
                    return ApprovalDecision::Deny {
                        message: NEVER_TEXT.to_owned(),
                    };
                }
                PolicyApproval::AskHooks => {}
            }
        }
        let event = CodexEvent::PermissionRequest;
        let name = tools::hook_tool_name(&exec.tool);
        // Approval runs before dispatch, so the file a `write` replaces is
        // still the one pre-execute saw.
        let existing = Self::existing_file(ctx, &exec.tool, &exec.arguments);
        let pre_input = tools::hook_tool_input(
            &exec.tool,
            &exec.arguments,
            &ctx.session.cwd,
            existing.as_deref(),
        );
        let tool_input = tools::permission_tool_input(&pre_input, &exec.tool, &exec.arguments);
        let payload =
            payload::permission_request(&self.base(ctx), &Self::turn_id(ctx), name, &tool_input);
        let mut records = self
            .run_event(
                ctx,
                event,
                payload,
                Some((name, tool_aliases(name))),
                Some(&exec.call_id),
                &ctx.cancel,
            )
            .await;
        let decision = translate::permission_request(&effects(&records), &exec.tool);
        Self::mark(&mut records, &decision);
        self.record(ctx, event, &records);
        decision.answer
    }

    pub(super) async fn on_post_execute(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        outcome: &ToolOutcome,
        duration: Duration,
    ) -> PostToolDecision {
        if outcome.disposition != Disposition::Executed {
            return PostToolDecision::accept();
        }
        // Codex fires no PostToolUse for an MCP call whose result is an
        // error (`isError`): PreToolUse, then the next request (a failed shell
        // command, which is a result with an exit code, still gets one).
        if outcome.is_error && exec.tool.starts_with("mcp__") {
            return PostToolDecision::accept();
        }
        let event = CodexEvent::PostToolUse;
        let name = tools::hook_tool_name(&exec.tool);
        // The file a `write` replaced is gone from disk; its value keeps it.
        let original = outcome
            .value
            .as_ref()
            .and_then(|value| value.get("original_file"))
            .and_then(Value::as_str);
        let tool_input =
            tools::hook_tool_input(&exec.tool, &exec.arguments, &ctx.session.cwd, original);
        let tool_response = tools::hook_tool_response(
            &exec.tool,
            &exec.arguments,
            &ctx.session.cwd,
            outcome.is_error,
            &outcome.content,
            outcome.value.as_ref(),
            duration,
        );
        let payload = payload::post_tool_use(
            &self.base(ctx),
            &Self::turn_id(ctx),
            name,
            &tool_input,
            &tool_response,
            &exec.call_id,
        );
        let mut records = self
            .run_event(
                ctx,
                event,
                payload,
                Some((name, tool_aliases(name))),
                Some(&exec.call_id),
                &ctx.cancel,
            )
            .await;
        let contexts = Self::context_entries(event, &records);
        let decision = translate::post_tool_use(&effects(&records), contexts);
        Self::mark(&mut records, &decision);
        self.record(ctx, event, &records);
        decision.answer
    }
}
