//! What an event's readings mean on its seam, one pure function per
//! event: each aggregates the runs' readings by Copilot's rules (first or
//! last decisive answer, joined contexts) and translates the aggregate
//! into the seam's decision with Copilot's model-facing texts, plus which
//! run won ([`Mark`]). No process runs here; the bridge ([`crate::plugin`])
//! fires the event and applies the answer.

use dsh_hooks::Winner;
use dsh_seams::{ApprovalDecision, PostToolAction, PreToolDecision};
use serde_json::Value;

use crate::output::{self, Decision, Reading};

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

/// userPromptSubmitted's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptAnswer {
    /// The first block wins: the prompt is not sent.
    Block(String),
    /// The prompt goes on, rewritten by the last `modifiedPrompt`, with
    /// the joined contexts as Copilot appends them.
    Allow {
        /// The last `modifiedPrompt`.
        rewrite: Option<String>,
        /// The `<system_reminder>` text.
        context: Option<String>,
    },
}

/// userPromptSubmitted.
pub fn prompt_submitted(readings: &[&Reading]) -> (PromptAnswer, Mark) {
    if let Some(reason) = readings.iter().find_map(|r| r.block.clone()) {
        return (
            PromptAnswer::Block(reason),
            Some((Winner::First, Decisive::Block)),
        );
    }
    let rewrite = readings
        .iter()
        .rev()
        .find_map(|r| r.modified_prompt.clone());
    let context = output::joined_context(readings.iter().copied())
        .map(|text| output::prompt_context_text(&text));
    (
        PromptAnswer::Allow { rewrite, context },
        Some((Winner::Last, Decisive::ModifiedPrompt)),
    )
}

/// preToolUse's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct PreToolAnswer {
    /// The seam decision.
    pub decision: PreToolDecision,
    /// An allow skips the approval flow.
    pub approval: Option<ApprovalDecision>,
    /// The last `modifiedArgs`, when the call runs.
    pub modified_args: Option<Value>,
    /// The contexts, as the user messages Copilot adds.
    pub contexts: Vec<String>,
    /// Whether a hook decided (then no permissionRequest fires).
    pub decided: bool,
}

/// preToolUse: a deny ends the chain, so the last decision is the one
/// that stands.
pub fn pre_tool_use(readings: &[&Reading]) -> (PreToolAnswer, Mark) {
    let decided = readings.iter().rev().find_map(|r| r.decision.clone());
    let modified_args = readings.iter().rev().find_map(|r| r.modified_args.clone());
    let contexts = readings
        .iter()
        .filter_map(|r| r.additional_context.as_deref())
        .filter(|text| !text.is_empty())
        .map(output::pre_context_text)
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
    let modified_args = modified_args.filter(|_| decision == PreToolDecision::Allow);
    let answer = PreToolAnswer {
        decision,
        approval,
        modified_args,
        contexts,
        decided: decided.is_some(),
    };
    (answer, mark)
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
            feedback: output::post_block_text(&reason),
        };
        return (action, Some((Winner::First, Decisive::Block)));
    }
    let modified = readings
        .iter()
        .rev()
        .find_map(|r| r.modified_result.clone());
    let context = output::joined_context(readings.iter().copied());
    if modified.is_none() && context.is_none() {
        return (PostToolAction::Accept, None);
    }
    let mut content = modified.unwrap_or_else(|| content.to_owned());
    if let Some(context) = context {
        content.push_str(&output::post_context_suffix(native_tool, &context));
    }
    (
        PostToolAction::ReplaceContent { content },
        Some((Winner::Last, Decisive::ModifiedResult)),
    )
}

/// postToolUseFailure: the joined contexts, as the user message Copilot
/// adds after the failed result.
pub fn post_tool_use_failure(readings: &[&Reading], native_tool: &str) -> Option<String> {
    output::joined_context(readings.iter().copied())
        .map(|text| output::failure_context_text(native_tool, &text))
}

/// agentStop's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopAnswer {
    /// The turn ends.
    Stop,
    /// Copilot's cap: the block is not followed.
    Capped,
    /// The first block's reason becomes a new user turn.
    Continue(String),
}

/// agentStop, after `forced` consecutive blocks in this turn (Copilot
/// ends the run after `cap`).
pub fn agent_stop(readings: &[&Reading], forced: u32, cap: u32) -> (StopAnswer, Mark) {
    match readings.iter().find_map(|r| r.block.clone()) {
        None => (StopAnswer::Stop, None),
        Some(_) if forced >= cap => (StopAnswer::Capped, Some((Winner::Nobody, Decisive::Block))),
        Some(reason) => (
            StopAnswer::Continue(reason),
            Some((Winner::First, Decisive::Block)),
        ),
    }
}

/// sessionStart: the joined contexts, injected once (not on resume).
pub fn session_start(readings: &[&Reading], resume: bool) -> Option<String> {
    if resume {
        return None;
    }
    output::joined_context(readings.iter().copied())
}

/// subagentStart: the joined contexts, put before the subagent's prompt.
pub fn subagent_start(readings: &[&Reading]) -> Option<String> {
    output::joined_context(readings.iter().copied())
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
    fn a_pre_tool_deny_stands_and_drops_the_rewrite() {
        let rewrite = Reading {
            modified_args: Some(json!({"command": "ls"})),
            ..context("look")
        };
        let (answer, mark) = pre_tool_use(&[&rewrite, &deny("no")]);
        assert_eq!(
            answer.decision,
            PreToolDecision::Deny {
                reason: "no".into()
            }
        );
        assert_eq!(answer.modified_args, None);
        assert!(answer.decided);
        assert_eq!(
            answer.contexts,
            vec!["Additional context from preToolUse hook:\nlook".to_owned()]
        );
        assert_eq!(mark, Some((Winner::Last, Decisive::Deny)));
        let (answer, mark) = pre_tool_use(&[&rewrite]);
        assert_eq!(answer.decision, PreToolDecision::Allow);
        assert_eq!(answer.modified_args, Some(json!({"command": "ls"})));
        assert!(!answer.decided);
        assert_eq!(mark, None);
    }

    #[test]
    fn the_first_prompt_block_wins_and_contexts_join_otherwise() {
        let block = |text: &str| Reading {
            block: Some(text.into()),
            ..Reading::default()
        };
        let (answer, mark) = prompt_submitted(&[&context("a"), &block("one"), &block("two")]);
        assert_eq!(answer, PromptAnswer::Block("one".into()));
        assert_eq!(mark, Some((Winner::First, Decisive::Block)));
        let rewritten = Reading {
            modified_prompt: Some("new".into()),
            ..context("b")
        };
        let (answer, _) = prompt_submitted(&[&context("a"), &rewritten]);
        assert_eq!(
            answer,
            PromptAnswer::Allow {
                rewrite: Some("new".into()),
                context: Some("<system_reminder>\na\n\nb\n</system_reminder>".into()),
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
        assert_eq!(agent_stop(&[], 0, 8).0, StopAnswer::Stop);
        assert_eq!(
            agent_stop(&[&block], 0, 8).0,
            StopAnswer::Continue("again".into())
        );
        assert_eq!(
            agent_stop(&[&block], 8, 8),
            (StopAnswer::Capped, Some((Winner::Nobody, Decisive::Block)))
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
