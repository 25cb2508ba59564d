//! What an event's readings mean on its seam, one pure function per
//! event: each aggregates the runs' readings by Copilot's rules (first or
//! last decisive answer, joined contexts) and translates the aggregate
//! into the seam's decision with Copilot's model-facing texts, plus which
//! run won ([`Mark`]). No process runs here; the bridge ([`crate::plugin`])
//! fires the event and applies the answer.

use dsh_hooks::Winner;
use dsh_seams::{
    ApprovalDecision, CallReview, ContextEntry, HistoryInput, InputRewrite, PostToolAction,
    PreToolDecision, PreToolOutcome, PreToolVerdict, PromptDecision,
};

use crate::output::{self, Decision, Reading};
use crate::tools;

/// Which runs' answers are decisive for the winner mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decisive {
    /// `decision: "block"`.
    Block,
    /// A deny.
    Deny,
    /// An ask.
    Ask,
    /// An allow.
    Allow,
    /// Any permission decision.
    Decision,
    /// `modifiedPrompt`.
    ModifiedPrompt,
    /// `modifiedResult`.
    ModifiedResult,
}

impl Decisive {
    /// Whether `reading` gave this answer.
    pub fn holds(self, reading: &Reading) -> bool {
        match self {
            Decisive::Block => reading.block.is_some(),
            Decisive::Deny => matches!(reading.decision, Some(Decision::Deny(_))),
            Decisive::Ask => matches!(reading.decision, Some(Decision::Ask(_))),
            Decisive::Allow => reading.decision == Some(Decision::Allow),
            Decisive::Decision => reading.decision.is_some(),
            Decisive::ModifiedPrompt => reading.modified_prompt.is_some(),
            Decisive::ModifiedResult => reading.modified_result.is_some(),
        }
    }
}

/// Which run won, if any answer was decisive: marked before recording.
pub type Mark = Option<(Winner, Decisive)>;

/// userPromptSubmitted: the first block wins (the prompt is not sent);
/// otherwise the prompt goes on, rewritten by the last `modifiedPrompt`,
/// with `contexts` and then the joined contexts as Copilot appends them
/// to the user message (from `source`).
pub fn prompt_submitted(
    readings: &[&Reading],
    mut contexts: Vec<ContextEntry>,
    source: &str,
) -> (PromptDecision, Mark) {
    if let Some(reason) = readings.iter().find_map(|r| r.block.clone()) {
        let mark = Some((Winner::First, Decisive::Block));
        return (PromptDecision::Block { reason }, mark);
    }
    let rewrite = readings
        .iter()
        .rev()
        .find_map(|r| r.modified_prompt.clone());
    contexts.extend(output::joined_context(readings).map(|text| {
        ContextEntry::new(
            format!("<system_reminder>\n{text}\n</system_reminder>"),
            source,
        )
    }));
    let mark = Some((Winner::Last, Decisive::ModifiedPrompt));
    (PromptDecision::Allow { rewrite, contexts }, mark)
}

/// preToolUse: a deny ends the chain, so the last decision is the one
/// that stands; the last `modifiedArgs` before it rewrites the call to
/// `tool` (a denied call keeps it too, for the history); the contexts are the user messages Copilot adds (from
/// `source`). With whether a hook decided (then no permissionRequest
/// fires).
pub fn pre_tool_use(readings: &[&Reading], tool: &str, source: &str) -> (CallReview, bool, Mark) {
    let decided = readings.iter().rev().find_map(|r| r.decision.clone());
    let contexts = readings
        .iter()
        .filter_map(|r| r.additional_context.as_deref())
        .filter(|text| !text.is_empty())
        .map(|text| {
            let text = format!("Additional context from preToolUse hook:\n{text}");
            ContextEntry::new(text, source)
        })
        .collect();
    let (decision, approval, mark) = match &decided {
        Some(Decision::Deny(text)) => (
            PreToolDecision::Deny {
                reason: text.clone(),
            },
            None,
            Some((Winner::Last, Decisive::Deny)),
        ),
        Some(Decision::Ask(text)) => (
            PreToolDecision::ask(Some(text.clone())),
            None,
            Some((Winner::Last, Decisive::Ask)),
        ),
        Some(Decision::Allow) => (
            PreToolDecision::Allow,
            Some(ApprovalDecision::AllowOnce),
            Some((Winner::Last, Decisive::Allow)),
        ),
        None => (PreToolDecision::Allow, None, None),
    };
    // The last `modifiedArgs` of an entry that did not deny: a deny ends
    // the chain without its own, and the earlier ones stand, for a denied
    // call too (pre_rewrite_then_deny, pre_null_then_deny).
    let modified = readings
        .iter()
        .rev()
        .filter(|r| !matches!(r.decision, Some(Decision::Deny(_))))
        .find_map(|r| r.modified_args.as_ref());
    let rewrite = match modified {
        Some(args) if !matches!(decision, PreToolDecision::Ask { .. }) => {
            InputRewrite::Rewrite {
                // Copilot's tool checks the arguments itself, in its own words.
                refusal: tools::refusal(tool, args),
                arguments: tools::arguments_from(tool, args),
                by: source.to_owned(),
                conflicts: Vec::new(),
                history: HistoryInput::Rewritten,
            }
        }
        Some(_) | None => InputRewrite::Keep,
    };
    let mut verdict = PreToolVerdict::of(PreToolOutcome { decision, contexts });
    verdict.approval = approval;
    let verdict = Some(verdict);
    (CallReview { rewrite, verdict }, decided.is_some(), mark)
}

/// permissionRequest: all run, the later decision wins (perm_merge); with
/// whether it asked to interrupt the run.
pub fn permission_request(readings: &[&Reading]) -> (Option<(Decision, bool)>, Mark) {
    let last = readings
        .iter()
        .rev()
        .find_map(|r| r.decision.clone().map(|decision| (decision, r.interrupt)));
    (last, Some((Winner::Last, Decisive::Decision)))
}

/// postToolUse: the first block wins; otherwise the last `modifiedResult`
/// replaces the result and the joined contexts follow it.
pub fn post_tool_use(
    readings: &[&Reading],
    native_tool: &str,
    content: &str,
) -> (PostToolAction, Mark) {
    if let Some(reason) = readings.iter().find_map(|r| r.block.clone()) {
        let action = PostToolAction::Block {
            feedback: format!("Tool result blocked: {reason}"),
        };
        return (action, Some((Winner::First, Decisive::Block)));
    }
    let modified = readings
        .iter()
        .rev()
        .find_map(|r| r.modified_result.clone());
    let context = output::joined_context(readings);
    if modified.is_none() && context.is_none() {
        return (PostToolAction::Accept, None);
    }
    let mut content = modified.unwrap_or_else(|| content.to_owned());
    if let Some(context) = context {
        content.push_str(&format!(
            "\n\nTool \"{native_tool}\" succeeded. Additional guidance from postToolUse hooks:\n{context}"
        ));
    }
    (
        PostToolAction::ReplaceContent { content },
        Some((Winner::Last, Decisive::ModifiedResult)),
    )
}

/// postToolUseFailure: the joined contexts, as the user message Copilot
/// adds after the failed result.
pub fn post_tool_use_failure(readings: &[&Reading], native_tool: &str) -> Option<String> {
    output::joined_context(readings).map(|text| {
        format!(
            "Tool \"{native_tool}\" failed. Additional guidance from postToolUseFailure hooks:\n{text}"
        )
    })
}

/// agentStop, after `forced` consecutive blocks in this turn: the first
/// block's reason, which becomes a new user turn; Copilot ends the run
/// after `cap` (the block is not followed).
pub fn agent_stop(readings: &[&Reading], forced: u32, cap: u32) -> (Option<String>, Mark) {
    match readings.iter().find_map(|r| r.block.clone()) {
        None => (None, None),
        Some(_) if forced >= cap => (None, Some((Winner::Nobody, Decisive::Block))),
        Some(reason) => (Some(reason), Some((Winner::First, Decisive::Block))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn deny(text: &str) -> Reading {
        Reading {
            decision: Some(Decision::Deny(text.into())),
            ..Reading::default()
        }
    }

    fn context(text: &str) -> Reading {
        Reading {
            additional_context: Some(text.into()),
            ..Reading::default()
        }
    }

    #[test]
    fn a_pre_tool_deny_stands_and_keeps_only_earlier_rewrites() {
        let rewrite = Reading {
            modified_args: Some(json!({"command": "ls"})),
            ..context("look")
        };
        // pre_rewrite_then_deny call 2: the denier's own rewrite is dropped,
        // the earlier entry's stands; pre_modified_null call 3: so a deny
        // next to a rewrite keeps the model's input.
        let denier = Reading {
            modified_args: Some(json!({"command": "pwd"})),
            ..deny("no")
        };
        let (review, _, _) = pre_tool_use(&[&denier], "bash", "S");
        assert_eq!(review.rewrite, InputRewrite::Keep);
        let (review, decided, mark) = pre_tool_use(&[&rewrite, &denier], "bash", "S");
        assert!(matches!(
            &review.rewrite,
            InputRewrite::Rewrite { arguments, .. } if *arguments == json!({"command": "ls"})
        ));
        let verdict = review.verdict.expect("a verdict");
        assert_eq!(
            verdict.outcome.decision,
            PreToolDecision::Deny {
                reason: "no".into()
            }
        );
        assert!(decided);
        assert_eq!(
            verdict.outcome.contexts,
            vec![ContextEntry::new(
                "Additional context from preToolUse hook:\nlook",
                "S"
            )]
        );
        assert_eq!(mark, Some((Winner::Last, Decisive::Deny)));
        let (review, decided, mark) = pre_tool_use(&[&rewrite], "bash", "S");
        let verdict = review.verdict.expect("a verdict");
        assert_eq!(verdict.outcome.decision, PreToolDecision::Allow);
        assert_eq!(
            review.rewrite,
            InputRewrite::Rewrite {
                arguments: json!({"command": "ls"}),
                by: "S".into(),
                conflicts: Vec::new(),
                history: HistoryInput::Rewritten,
                refusal: None,
            }
        );
        assert!(!decided);
        assert_eq!(mark, None);
    }

    /// pre_modified_null: a rewrite to a non-object fails the call with
    /// Copilot's text; a string holding an object is a plain rewrite.
    #[test]
    fn a_non_object_rewrite_is_refused_in_copilots_words() {
        let null = Reading {
            modified_args: Some(json!(null)),
            ..Reading::default()
        };
        let (review, _, _) = pre_tool_use(&[&null], "bash", "S");
        assert_eq!(
            review.rewrite,
            InputRewrite::Rewrite {
                arguments: json!(null),
                by: "S".into(),
                conflicts: Vec::new(),
                history: HistoryInput::Rewritten,
                refusal: Some("Invalid input: Expected JSON object but got null".into()),
            }
        );
        let text = Reading {
            modified_args: Some(json!(r#"{"command": "ls"}"#)),
            ..Reading::default()
        };
        let (review, _, _) = pre_tool_use(&[&text], "bash", "S");
        assert!(matches!(
            review.rewrite,
            InputRewrite::Rewrite { refusal: None, .. }
        ));
    }

    #[test]
    fn the_first_prompt_block_wins_and_contexts_join_otherwise() {
        let block = |text: &str| Reading {
            block: Some(text.into()),
            ..Reading::default()
        };
        let runs = [&context("a"), &block("one"), &block("two")];
        let (answer, mark) = prompt_submitted(&runs, Vec::new(), "S");
        assert_eq!(
            answer,
            PromptDecision::Block {
                reason: "one".into()
            }
        );
        assert_eq!(mark, Some((Winner::First, Decisive::Block)));
        let rewritten = Reading {
            modified_prompt: Some("new".into()),
            ..context("b")
        };
        let start = vec![ContextEntry::new("first", "T")];
        let (answer, _) = prompt_submitted(&[&context("a"), &rewritten], start, "S");
        assert_eq!(
            answer,
            PromptDecision::Allow {
                rewrite: Some("new".into()),
                contexts: vec![
                    ContextEntry::new("first", "T"),
                    ContextEntry::new("<system_reminder>\na\n\nb\n</system_reminder>", "S"),
                ],
            }
        );
    }

    #[test]
    fn post_tool_results_are_replaced_then_followed_by_guidance() {
        let modified = Reading {
            modified_result: Some("R".into()),
            ..Reading::default()
        };
        let (action, mark) = post_tool_use(&[&modified, &context("c")], "bash", "orig");
        assert_eq!(
            action,
            PostToolAction::ReplaceContent {
                content:
                    "R\n\nTool \"bash\" succeeded. Additional guidance from postToolUse hooks:\nc"
                        .into()
            }
        );
        assert_eq!(mark, Some((Winner::Last, Decisive::ModifiedResult)));
        assert_eq!(
            post_tool_use(&[], "bash", "orig"),
            (PostToolAction::Accept, None)
        );
    }

    #[test]
    fn agent_stop_blocks_are_followed_up_to_the_cap() {
        let block = Reading {
            block: Some("again".into()),
            ..Reading::default()
        };
        assert_eq!(agent_stop(&[], 0, 8), (None, None));
        assert_eq!(agent_stop(&[&block], 0, 8).0.as_deref(), Some("again"));
        assert_eq!(
            agent_stop(&[&block], 8, 8),
            (None, Some((Winner::Nobody, Decisive::Block)))
        );
    }

    #[test]
    fn the_later_permission_decision_wins() {
        let interrupt = Reading {
            interrupt: true,
            ..deny("stop")
        };
        let allow = Reading {
            decision: Some(Decision::Allow),
            ..Reading::default()
        };
        let (last, _) = permission_request(&[&allow, &interrupt]);
        assert_eq!(last, Some((Decision::Deny("stop".into()), true)));
    }
}
