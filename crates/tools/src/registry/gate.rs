//! Phases 1–2 of the pipeline: the pre-execute waterfall, the approval an
//! `ask` needs (with the grant it may bring), the permission-denied
//! follow-up, and the guards. `execute` and `decide` both go through
//! [`ToolRegistry::gate`], so a dry run can never disagree with a real one.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use dsh_protocol::{DecidedBy, DeciderKind};
use dsh_seams::{
    ApprovalAsk, ApprovalDecision, ApprovalGrant, ApprovalResponse, ContextEntry, DenialKind,
    DeniedFollowUp, Disposition, GuardVerdict, Notification, NotificationKind, Plugin,
    PreToolDecision, PreToolVerdict, SeamContext, ToolExecution, ToolOutcome,
};
use futures::FutureExt;

use super::{
    MAY_RETRY_TEXT, NO_APPROVAL_TEXT, ToolRegistry, explain, panic_text, rejected_with_reason_text,
};
use crate::schema;

/// How phases 1–2 ended for one call.
pub(super) enum Gate {
    /// On to dispatch; `decision` is the pre-execute waterfall's;
    /// `rewritten` is the call with the arguments an approval replaced.
    Pass {
        decision: PreToolDecision,
        rewritten: Option<ToolExecution>,
        decided_by: Option<DecidedBy>,
    },
    /// Denied (by pre-execute, approval or a guard); post-execute still runs.
    Denied {
        decision: PreToolDecision,
        outcome: ToolOutcome,
        decided_by: Option<DecidedBy>,
    },
    /// A listener failed; the call ends with this outcome.
    Failed(ToolOutcome),
}

/// How the approval of an `ask` ended, and who answered (`None`: nobody
/// could, so the asker decided).
pub(super) enum Resolved {
    /// Granted, possibly with replacement arguments and permission changes.
    Granted(Option<ApprovalGrant>, DecidedBy),
    /// Not granted: the outcome the model sees.
    Refused(ToolOutcome, Option<DecidedBy>),
}

impl ToolRegistry {
    /// Phases 1–2 for a sealed call: the pre-execute waterfall, the
    /// approval an `ask` needs, and the guards. Shared by `execute` and
    /// `decide`, so a dry run can never disagree with a real one.
    pub(super) async fn gate(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        verdicts: &[Option<PreToolVerdict>],
        contexts: &mut Vec<ContextEntry>,
    ) -> Gate {
        // Phase 1: pre-execute waterfall. A deny ends it; an ask is kept
        // while later listeners may still deny; contexts always accumulate.
        let mut decision = PreToolDecision::Allow;
        // Which plugin's ask or deny the decision is.
        let mut decider: Option<usize> = None;
        for (index, plugin) in self.plugins.iter().enumerate() {
            let review = verdicts.get(index).and_then(Option::as_ref);
            match AssertUnwindSafe(plugin.pre_execute(ctx, exec, review))
                .catch_unwind()
                .await
            {
                Ok(outcome) => {
                    contexts.extend(outcome.contexts);
                    match outcome.decision {
                        PreToolDecision::Allow => {}
                        ask @ PreToolDecision::Ask { .. } => {
                            if decision == PreToolDecision::Allow {
                                decision = ask;
                                decider = Some(index);
                            }
                        }
                        deny
                        @ (PreToolDecision::Deny { .. } | PreToolDecision::AutoDeny { .. }) => {
                            decision = deny;
                            decider = Some(index);
                            break;
                        }
                    }
                }
                Err(payload) => {
                    return Gate::Failed(ToolOutcome::error(
                        format!(
                            "pre-execute listener `{}` failed: {}",
                            plugin.name(),
                            panic_text(payload.as_ref())
                        ),
                        Disposition::Failed,
                    ));
                }
            }
        }

        let explained = |index: Option<usize>, reason: &str| {
            index.and_then(|i| {
                let review = verdicts.get(i).and_then(Option::as_ref);
                self.plugins
                    .get(i)
                    .map(|p| explain(p.as_ref(), exec, review, reason))
            })
        };
        let mut rewritten = None;
        let mut decided_by;
        let mut outcome = match &decision {
            PreToolDecision::Deny { reason } => {
                decided_by = explained(decider, reason);
                Some(ToolOutcome::error(
                    reason.clone(),
                    Disposition::Denied(DenialKind::Policy),
                ))
            }
            PreToolDecision::AutoDeny {
                reason,
                check_reason,
            } => {
                decided_by = explained(decider, reason);
                self.tell_denied(ctx, exec, check_reason, contexts).await;
                Some(ToolOutcome::error(
                    reason.clone(),
                    Disposition::Denied(DenialKind::Policy),
                ))
            }
            PreToolDecision::Ask {
                reason,
                suggestions,
            } => {
                let ask = ApprovalAsk {
                    reason: reason.clone(),
                    suggestions: suggestions.clone(),
                };
                match self.resolve_ask(ctx, exec, &ask, verdicts).await {
                    Resolved::Granted(None, by) => {
                        decided_by = Some(by);
                        None
                    }
                    Resolved::Granted(Some(grant), by) => {
                        decided_by = Some(by);
                        match self.apply_grant(ctx, exec, grant).await {
                            Ok(replacement) => {
                                rewritten = replacement;
                                None
                            }
                            Err(outcome) => Some(outcome),
                        }
                    }
                    Resolved::Refused(outcome, by) => {
                        // Nobody answered: the asker's policy decided.
                        decided_by = by.or_else(|| explained(decider, &outcome.content));
                        Some(outcome)
                    }
                }
            }
            PreToolDecision::Allow => {
                // The first plugin sure of its allow (a rule, a mode).
                decided_by = self.plugins.iter().enumerate().find_map(|(i, p)| {
                    let review = verdicts.get(i).and_then(Option::as_ref);
                    std::panic::catch_unwind(AssertUnwindSafe(|| p.explain(exec, review)))
                        .ok()
                        .flatten()
                });
                None
            }
        };
        let exec = rewritten.as_ref().unwrap_or(exec);

        // Phase 2: guards, after the whole waterfall; they can only deny.
        if outcome.is_none() {
            for plugin in &self.plugins {
                let verdict =
                    std::panic::catch_unwind(AssertUnwindSafe(|| plugin.guard(ctx, exec)));
                match verdict {
                    Ok(GuardVerdict::Abstain) => {}
                    Ok(GuardVerdict::Deny { reason }) => {
                        decided_by =
                            Some(DecidedBy::new(DeciderKind::Hook, plugin.name()).because(&reason));
                        outcome = Some(ToolOutcome::error(
                            reason,
                            Disposition::Denied(DenialKind::Guard),
                        ));
                        break;
                    }
                    Err(payload) => {
                        return Gate::Failed(ToolOutcome::error(
                            format!(
                                "guard `{}` failed: {}",
                                plugin.name(),
                                panic_text(payload.as_ref())
                            ),
                            Disposition::Failed,
                        ));
                    }
                }
            }
        }

        match outcome {
            None => Gate::Pass {
                decision,
                rewritten,
                decided_by,
            },
            Some(outcome) => Gate::Denied {
                decision,
                outcome,
                decided_by,
            },
        }
    }

    /// An automatic denial: the permission-denied listeners hear it; any
    /// that lets the model retry adds [`MAY_RETRY_TEXT`] as a context.
    async fn tell_denied(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        check_reason: &str,
        contexts: &mut Vec<ContextEntry>,
    ) {
        let mut retry_by = None;
        for plugin in &self.plugins {
            let answer = AssertUnwindSafe(plugin.permission_denied(ctx, exec, check_reason))
                .catch_unwind()
                .await;
            match answer {
                Ok(DeniedFollowUp::MayRetry) => {
                    retry_by.get_or_insert_with(|| plugin.name().to_owned());
                }
                // A failing listener cannot widen anything: the denial stands.
                Ok(DeniedFollowUp::Stand) | Err(_) => {}
            }
        }
        if let Some(by) = retry_by {
            contexts.push(ContextEntry::new(MAY_RETRY_TEXT, by));
        }
    }

    /// Applies an approval's grant: its permission changes go to every
    /// plugin; replacement arguments are re-validated against the tool's
    /// schema and give the call a new identity (the original arguments and
    /// who replaced them kept), or an `invalid_arguments` outcome.
    async fn apply_grant(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        grant: ApprovalGrant,
    ) -> Result<Option<ToolExecution>, ToolOutcome> {
        if !grant.updates.is_empty() {
            for plugin in &self.plugins {
                // Observers are contained: a panicking listener changes nothing.
                let _ = AssertUnwindSafe(plugin.permissions_updated(ctx, &grant.updates))
                    .catch_unwind()
                    .await;
            }
        }
        let Some(arguments) = grant.updated_input else {
            return Ok(None);
        };
        let Some(tool) = self.tools.get(&exec.tool) else {
            return Err(ToolOutcome::error(
                format!("Unknown tool `{}`.", exec.tool),
                Disposition::UnknownTool,
            ));
        };
        if let Err(problem) = schema::validate(&tool.spec().input_schema, &arguments) {
            return Err(ToolOutcome::error(
                format!(
                    "Invalid arguments for `{}` after `{}` rewrote them: {problem}",
                    exec.tool, grant.by
                ),
                Disposition::InvalidArguments,
            ));
        }
        let mut rewritten = exec.clone();
        rewritten.original_arguments = Some(
            exec.original_arguments
                .clone()
                .unwrap_or_else(|| Arc::clone(&exec.arguments)),
        );
        rewritten.arguments = Arc::new(arguments);
        rewritten.rewritten_by = Some(grant.by);
        Ok(Some(rewritten))
    }

    async fn resolve_ask(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        ask: &ApprovalAsk,
        verdicts: &[Option<PreToolVerdict>],
    ) -> Resolved {
        let refused = |content: String, disposition| {
            Resolved::Refused(ToolOutcome::error(content, disposition), None)
        };
        let hook = |plugin: &Arc<dyn Plugin>| DecidedBy::new(DeciderKind::Hook, plugin.name());
        let person = || DecidedBy::new(DeciderKind::Person, "user");
        let denial_text = ask
            .reason
            .clone()
            .unwrap_or_else(|| NO_APPROVAL_TEXT.to_owned());
        if ctx.turn.is_none() {
            return refused(denial_text, Disposition::Denied(DenialKind::NoAgent));
        }
        for (index, plugin) in self.plugins.iter().enumerate() {
            let review = verdicts.get(index).and_then(Option::as_ref);
            match AssertUnwindSafe(plugin.approve(ctx, exec, ask, review))
                .catch_unwind()
                .await
            {
                Ok(ApprovalDecision::Abstain) => {}
                Ok(ApprovalDecision::AllowOnce) => return Resolved::Granted(None, hook(plugin)),
                Ok(ApprovalDecision::Allow(grant)) => {
                    let by = DecidedBy::new(DeciderKind::Hook, grant.by.clone());
                    return Resolved::Granted(Some(grant), by);
                }
                Ok(ApprovalDecision::Deny { message }) => {
                    let by = hook(plugin).because(&message);
                    return Resolved::Refused(
                        ToolOutcome::error(
                            message,
                            Disposition::Denied(DenialKind::ApprovalRejected),
                        ),
                        Some(by),
                    );
                }
                Err(payload) => {
                    return refused(
                        format!(
                            "approval listener `{}` failed: {}",
                            plugin.name(),
                            panic_text(payload.as_ref())
                        ),
                        Disposition::Failed,
                    );
                }
            }
        }
        let Some(approval) = &self.approval else {
            return refused(
                denial_text,
                Disposition::Denied(DenialKind::NoApprovalService),
            );
        };
        // The user is about to be asked: notification listeners (Claude
        // Code's `Notification` hooks) hear about it first.
        let notification = Notification {
            kind: NotificationKind::PermissionPrompt,
            message: format!("dsh needs your permission to use {}", exec.tool),
        };
        for plugin in &self.plugins {
            let _ = AssertUnwindSafe(plugin.notification(ctx, &notification))
                .catch_unwind()
                .await;
        }
        match approval.request(exec, ask.reason.as_deref()).await {
            ApprovalResponse::AllowedOnce => Resolved::Granted(None, person()),
            ApprovalResponse::Rejected => Resolved::Refused(
                ToolOutcome::error(
                    format!("The user rejected this call. {denial_text}"),
                    Disposition::Denied(DenialKind::ApprovalRejected),
                ),
                Some(person()),
            ),
            ApprovalResponse::RejectedWithReason { reason } => Resolved::Refused(
                ToolOutcome::error(
                    rejected_with_reason_text(&reason),
                    Disposition::Denied(DenialKind::ApprovalRejected),
                ),
                Some(person()),
            ),
            ApprovalResponse::Cancelled => Resolved::Refused(
                ToolOutcome::error(
                    format!("The approval prompt was cancelled. {denial_text}"),
                    Disposition::Denied(DenialKind::ApprovalCancelled),
                ),
                Some(person()),
            ),
            ApprovalResponse::Unavailable => refused(
                format!("Nobody could be asked for approval. {denial_text}"),
                Disposition::Denied(DenialKind::ApprovalUnavailable),
            ),
        }
    }
}
