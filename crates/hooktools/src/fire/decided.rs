//! The combined seam decision of one `dsh hooks test` firing, as its JSON
//! report carries it: the seam's own decision type where the seam has one,
//! `null` for the events that cannot change anything.

use dsh_seams::{
    ApprovalDecision, ContextEntry, ContinuationDecision, DeniedFollowUp, Disposition,
    PostToolDecision, PreToolOutcome, PromptDecision,
};
use serde::Serialize;
use serde_json::Value;

/// What one firing decided (`decision` in the report).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub(crate) enum Decided {
    /// Observed only, or not fired here: `null`.
    Nothing,
    /// `UserPromptSubmit`, `UserPromptExpansion`.
    Prompt(PromptDecision),
    /// `Stop`, `SubagentStop`.
    Continuation(ContinuationDecision),
    /// `PreToolUse`: the registry's dry run.
    PreTool(PreToolReport),
    /// `PermissionRequest`.
    Approval(ApprovalDecision),
    /// `PostToolUse`, `PostToolUseFailure`.
    PostTool(PostToolDecision),
    /// `PreCompact`.
    Compaction(CompactionReport),
    /// `SessionStart`, `SubagentStart`, `PostCompact`: the contexts added.
    Contexts {
        /// In order.
        contexts: Vec<ContextEntry>,
    },
    /// `PermissionDenied`.
    Denied(DeniedFollowUp),
}

/// `PreToolUse`'s decision: the seam outcome, the rewrite the call runs
/// with, and what stopped it beyond the hooks' own decision.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct PreToolReport {
    /// The hooks' decision and contexts.
    #[serde(flatten)]
    pub outcome: PreToolOutcome,
    /// The arguments a hook rewrote the call to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rewrite: Option<RewriteReport>,
    /// What stopped the call (sealing, a guard, an approval hook).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<StoppedReport>,
}

/// A rewrite of a call's arguments.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct RewriteReport {
    /// The rewritten arguments, as the call runs with them.
    pub arguments: Value,
    /// Who rewrote them.
    pub by: String,
    /// The other hooks whose rewrites lost.
    pub conflicts: Vec<String>,
}

/// The result of a call stopped before it ran.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct StoppedReport {
    /// What the model is told.
    pub content: String,
    /// Why it did not run.
    pub disposition: Disposition,
}

/// `PreCompact`'s combined decision.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum CompactionReport {
    /// A hook cancelled the compaction (the history stays).
    Cancel(String),
    /// A hook supplied the summary.
    Summary(String),
    /// The model summarizes, with the hooks' instructions.
    Proceed {
        /// In order.
        instructions: Vec<String>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_seams::{DenialKind, PreToolDecision};
    use serde_json::json;

    fn text(decided: &Decided) -> String {
        serde_json::to_string(decided).unwrap_or_default()
    }

    /// The report's bytes are those of the JSON the firing used to build by
    /// hand: the outcome's fields, then `rewrite`, then `stopped`.
    #[test]
    fn a_pre_tool_report_keeps_the_hand_built_shape() {
        let outcome = PreToolOutcome {
            decision: PreToolDecision::Allow,
            contexts: vec![ContextEntry::new("ctx", "hook")],
        };
        let mut expected = serde_json::to_value(&outcome).unwrap_or_default();
        if let Some(map) = expected.as_object_mut() {
            map.insert(
                "rewrite".into(),
                json!({"arguments": {"command": "ls", "z": 1}, "by": "h", "conflicts": ["g"]}),
            );
            map.insert(
                "stopped".into(),
                json!({"content": "no", "disposition": Disposition::Denied(DenialKind::Guard)}),
            );
        }
        let report = Decided::PreTool(PreToolReport {
            outcome: outcome.clone(),
            rewrite: Some(RewriteReport {
                arguments: json!({"command": "ls", "z": 1}),
                by: "h".into(),
                conflicts: vec!["g".into()],
            }),
            stopped: Some(StoppedReport {
                content: "no".into(),
                disposition: Disposition::Denied(DenialKind::Guard),
            }),
        });
        assert_eq!(text(&report), expected.to_string());
        let bare = Decided::PreTool(PreToolReport {
            outcome: outcome.clone(),
            rewrite: None,
            stopped: None,
        });
        assert_eq!(
            text(&bare),
            serde_json::to_string(&outcome).unwrap_or_default()
        );
    }

    #[test]
    fn the_other_decisions_keep_their_shapes() {
        let cases = [
            (Decided::Nothing, json!(null)),
            (
                Decided::Compaction(CompactionReport::Cancel("r".into())),
                json!({"cancel": "r"}),
            ),
            (
                Decided::Compaction(CompactionReport::Summary("s".into())),
                json!({"summary": "s"}),
            ),
            (
                Decided::Compaction(CompactionReport::Proceed {
                    instructions: vec!["i".into()],
                }),
                json!({"proceed": {"instructions": ["i"]}}),
            ),
            (
                Decided::Contexts {
                    contexts: vec![ContextEntry::new("c", "s")],
                },
                json!({"contexts": [ContextEntry::new("c", "s")]}),
            ),
            (
                Decided::Denied(DeniedFollowUp::MayRetry),
                serde_json::to_value(DeniedFollowUp::MayRetry).unwrap_or_default(),
            ),
        ];
        for (decided, expected) in cases {
            assert_eq!(text(&decided), expected.to_string());
        }
    }
}
