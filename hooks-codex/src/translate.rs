//! What an event's runs mean on its seam, one pure function per event:
//! each takes the runs' effects in configuration order (as the interpreter
//! read them, [`crate::output`]) and returns the seam's answer with Codex's
//! model-facing texts, plus which run won ([`Translated`]). No process runs
//! here; the bridge ([`crate::plugin`]) fires the event, marks the winner,
//! records the runs and applies the answer.

use std::path::Path;

use crate::tools::HookToolInput;
use dsh_seams::{
    ApprovalDecision, CompactionDecision, ContextEntry, PostToolAction, PostToolDecision,
    PreToolDecision, PromptDecision, StoppedPrompt,
};

use crate::event::CodexEvent;
use crate::output::Effect;

/// A seam's answer and the run that decided it.
#[derive(Debug, Clone)]
pub struct Translated<T> {
    /// The seam's answer.
    pub answer: T,
    /// The index of the run whose effect decided it, if one did.
    pub winner: Option<usize>,
    /// Which effects count as decisive for the winner mark (the other
    /// decisive runs are marked as overruled).
    pub decisive: fn(&Effect) -> bool,
}

fn is_stop(effect: &Effect) -> bool {
    matches!(effect, Effect::Stop { .. })
}

fn is_block(effect: &Effect) -> bool {
    matches!(effect, Effect::Block { .. })
}

fn is_block_or_stop(effect: &Effect) -> bool {
    matches!(effect, Effect::Block { .. } | Effect::Stop { .. })
}

fn is_permission(effect: &Effect) -> bool {
    matches!(
        effect,
        Effect::PermissionAllow | Effect::PermissionDeny { .. }
    )
}

/// The first run that stopped, with its `stopReason`.
fn first_stop(effects: &[&Effect]) -> Option<(usize, Option<String>)> {
    effects
        .iter()
        .enumerate()
        .find_map(|(index, effect)| match effect {
            Effect::Stop { reason } => Some((index, reason.clone())),
            Effect::None
            | Effect::Block { .. }
            | Effect::Rewrite { .. }
            | Effect::PermissionAllow
            | Effect::PermissionDeny { .. } => None,
        })
}

/// The first run that blocked, with its reason.
fn first_block(effects: &[&Effect]) -> Option<(usize, String)> {
    effects
        .iter()
        .enumerate()
        .find_map(|(index, effect)| match effect {
            Effect::Block { reason } => Some((index, reason.clone())),
            Effect::None
            | Effect::Stop { .. }
            | Effect::Rewrite { .. }
            | Effect::PermissionAllow
            | Effect::PermissionDeny { .. } => None,
        })
}

/// SessionStart: the first `continue: false` stops the
/// session, with its `stopReason` or Codex's default text.
pub fn session_start(effects: &[&Effect]) -> Translated<Option<String>> {
    let stop = first_stop(effects);
    Translated {
        winner: stop.as_ref().map(|(index, _)| *index),
        answer: stop.map(|(_, reason)| {
            reason.unwrap_or_else(|| "SessionStart hook stopped the session".to_owned())
        }),
        decisive: is_stop,
    }
}

/// UserPromptSubmit: the first block or stop decides; a stopped prompt is
/// kept alone (`prompt_continue_false`); otherwise the prompt goes on with
/// the runs' `contexts`.
pub fn user_prompt_submit(
    effects: &[&Effect],
    contexts: Vec<ContextEntry>,
) -> Translated<PromptDecision> {
    let decisive = effects
        .iter()
        .enumerate()
        .find_map(|(index, effect)| match effect {
            Effect::Block { reason } => Some((
                index,
                PromptDecision::Block {
                    reason: reason.clone(),
                },
            )),
            Effect::Stop { reason } => Some((
                index,
                PromptDecision::Stop {
                    reason: reason
                        .clone()
                        .unwrap_or_else(|| "UserPromptSubmit hook stopped the turn".into()),
                    kept: StoppedPrompt::PromptOnly,
                },
            )),
            Effect::None
            | Effect::Rewrite { .. }
            | Effect::PermissionAllow
            | Effect::PermissionDeny { .. } => None,
        });
    match decisive {
        Some((index, answer)) => Translated {
            answer,
            winner: Some(index),
            decisive: is_block_or_stop,
        },
        None => Translated {
            answer: PromptDecision::Allow {
                rewrite: None,
                contexts,
            },
            winner: None,
            decisive: is_block_or_stop,
        },
    }
}

/// PreToolUse's verdict on dsh tool `tool` (hooks saw `tool_input`): the
/// first block denies the call with Codex's text. Rewrites are applied by
/// the bridge (they need the tool's arguments).
pub fn pre_tool_use(
    effects: &[&Effect],
    tool: &str,
    tool_input: &HookToolInput,
) -> Translated<PreToolDecision> {
    let block = first_block(effects);
    Translated {
        winner: block.as_ref().map(|(index, _)| *index),
        answer: match block {
            Some((_, reason)) => PreToolDecision::Deny {
                reason: pre_tool_block_text_for(Some(tool), &reason, tool_input),
            },
            None => PreToolDecision::Allow,
        },
        decisive: is_block,
    }
}

/// PermissionRequest on dsh tool `tool`: the first deny wins over any
/// allow; an allow approves once; no decision abstains.
pub fn permission_request(effects: &[&Effect], tool: &str) -> Translated<ApprovalDecision> {
    let deny = effects
        .iter()
        .enumerate()
        .find_map(|(index, effect)| match effect {
            Effect::PermissionDeny { message } => Some((index, message.clone())),
            Effect::None
            | Effect::Block { .. }
            | Effect::Stop { .. }
            | Effect::Rewrite { .. }
            | Effect::PermissionAllow => None,
        });
    let allow = effects
        .iter()
        .position(|effect| **effect == Effect::PermissionAllow);
    let winner = deny.as_ref().map(|(index, _)| *index).or(allow);
    let answer = match (deny, allow) {
        (Some((_, message)), _) => ApprovalDecision::Deny {
            message: permission_denied_text(tool, &message),
        },
        (None, Some(_)) => ApprovalDecision::AllowOnce,
        (None, None) => ApprovalDecision::Abstain,
    };
    Translated {
        answer,
        winner,
        decisive: is_permission,
    }
}

/// PostToolUse: the first block, or stop with a `stopReason`, replaces what
/// the model sees of the result with its reason; the runs' `contexts` go on.
pub fn post_tool_use(
    effects: &[&Effect],
    contexts: Vec<ContextEntry>,
) -> Translated<PostToolDecision> {
    let replace = effects
        .iter()
        .enumerate()
        .find_map(|(index, effect)| match effect {
            Effect::Block { reason }
            | Effect::Stop {
                reason: Some(reason),
            } => Some((index, reason.clone())),
            Effect::None
            | Effect::Stop { .. }
            | Effect::Rewrite { .. }
            | Effect::PermissionAllow
            | Effect::PermissionDeny { .. } => None,
        });
    Translated {
        winner: replace.as_ref().map(|(index, _)| *index),
        answer: PostToolDecision {
            action: match replace {
                Some((_, content)) => PostToolAction::ReplaceContent { content },
                None => PostToolAction::Accept,
            },
            contexts,
        },
        decisive: is_block_or_stop,
    }
}

/// One Stop (or SubagentStop) run as [`stop`] reads it: its effect and
/// the handler's place, which names its continuation prompt.
#[derive(Debug, Clone, Copy)]
pub struct StopRun<'a> {
    /// What the run meant.
    pub effect: &'a Effect,
    /// The handler's display order.
    pub display_order: usize,
    /// The file that configured it.
    pub source: &'a Path,
}

/// What a Stop (or SubagentStop) firing decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopAnswer {
    /// A `continue: false` ends the turn with this reason.
    Halt(String),
    /// No run blocked: the turn stops normally.
    Stop,
    /// Runs blocked, but dsh's cap on consecutive blocks was reached: the
    /// turn stops and the user is told this text (Codex has no cap).
    Capped(String),
    /// Every blocking run's `hook_prompt`, joined with a newline: the turn
    /// continues with it (every blocking run wins).
    Continue(String),
}

/// Stop and SubagentStop (`event`): the first `continue: false` halts with
/// its `stopReason` or Codex's default text; otherwise every block becomes
/// a continuation prompt, unless `forced_continuations` already reached
/// dsh's `cap`.
pub fn stop(
    event: CodexEvent,
    runs: &[StopRun<'_>],
    forced_continuations: u32,
    cap: u32,
) -> Translated<StopAnswer> {
    let effects: Vec<&Effect> = runs.iter().map(|run| run.effect).collect();
    if let Some((index, reason)) = first_stop(&effects) {
        return Translated {
            answer: StopAnswer::Halt(
                reason.unwrap_or_else(|| format!("{event} hook stopped the turn")),
            ),
            winner: Some(index),
            decisive: is_block_or_stop,
        };
    }
    let prompts: Vec<String> = runs
        .iter()
        .filter_map(|run| match run.effect {
            Effect::Block { reason } => {
                Some(hook_prompt(event, run.display_order, run.source, reason))
            }
            Effect::None
            | Effect::Stop { .. }
            | Effect::Rewrite { .. }
            | Effect::PermissionAllow
            | Effect::PermissionDeny { .. } => None,
        })
        .collect();
    let answer = if prompts.is_empty() {
        StopAnswer::Stop
    } else if forced_continuations >= cap {
        StopAnswer::Capped(format!(
            "Codex {event} hooks blocked {forced_continuations} consecutive times in this turn; dsh's cap is {cap}, so the turn ends (Codex itself has no cap)",
        ))
    } else {
        StopAnswer::Continue(prompts.join("\n"))
    };
    Translated {
        answer,
        winner: None,
        decisive: is_block,
    }
}

/// PreCompact: the first `continue: false` cancels the compaction (and the
/// bridge stops the turn with the same reason).
pub fn pre_compact(effects: &[&Effect]) -> Translated<CompactionDecision> {
    let stop = first_stop(effects);
    Translated {
        winner: stop.as_ref().map(|(index, _)| *index),
        answer: match stop {
            Some((_, reason)) => CompactionDecision::Cancel {
                reason: reason.unwrap_or_else(|| "PreCompact hook stopped the turn".to_owned()),
            },
            None => CompactionDecision::proceed(),
        },
        decisive: is_stop,
    }
}

/// The model-facing text of a PreToolUse block: for an MCP tool Codex names
/// the tool (`mcp_pre_deny`), for the others the command.
pub fn pre_tool_block_text(reason: &str, tool_input: &HookToolInput) -> String {
    pre_tool_block_text_for(None, reason, tool_input)
}

/// [`pre_tool_block_text`] for the dsh tool `tool`.
pub fn pre_tool_block_text_for(
    tool: Option<&str>,
    reason: &str,
    tool_input: &HookToolInput,
) -> String {
    if let Some(tool) = tool.filter(|tool| tool.starts_with("mcp__")) {
        return format!("Tool call blocked by PreToolUse hook: {reason}. Tool: {tool}");
    }
    let command = match tool_input.command() {
        Some(command) => command.to_owned(),
        None => serde_json::to_string(tool_input).unwrap_or_default(),
    };
    format!("Command blocked by PreToolUse hook: {reason}. Command: {command}")
}

/// The model-facing text of a PermissionRequest denial (Codex's shell tool
/// reports it through its process-spawn error; patches show the message).
pub fn permission_denied_text(dsh_tool: &str, message: &str) -> String {
    if dsh_tool == "bash" {
        let rejected = format!("Rejected({message:?})");
        format!("exec_command failed: CreateProcess {{ message: {rejected:?} }}")
    } else {
        message.to_owned()
    }
}

/// The continuation prompt of a blocking Stop hook.
pub fn hook_prompt(event: CodexEvent, display_order: usize, source: &Path, reason: &str) -> String {
    format!(
        "<hook_prompt hook_run_id=\"{}:{display_order}:{}\">{reason}</hook_prompt>",
        event.kebab_label(),
        source.display()
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn block(reason: &str) -> Effect {
        Effect::Block {
            reason: reason.to_owned(),
        }
    }

    fn stop(reason: Option<&str>) -> Effect {
        Effect::Stop {
            reason: reason.map(str::to_owned),
        }
    }

    fn context() -> Vec<ContextEntry> {
        vec![ContextEntry::new("ctx".to_owned(), "codex:test".to_owned())]
    }

    #[test]
    fn session_start_stops_at_the_first_continue_false() {
        let none = session_start(&[&Effect::None, &block("b")]);
        assert_eq!((none.answer, none.winner), (None, None));
        let (a, b) = (stop(None), stop(Some("second")));
        let first = session_start(&[&Effect::None, &a, &b]);
        assert_eq!(first.winner, Some(1));
        assert_eq!(
            first.answer.as_deref(),
            Some("SessionStart hook stopped the session")
        );
        assert!((first.decisive)(&b) && !(first.decisive)(&block("x")));
    }

    #[test]
    fn user_prompt_submit_first_block_or_stop_decides() {
        let (b, s) = (block("no"), stop(Some("halt")));
        let blocked = user_prompt_submit(&[&Effect::None, &b, &s], context());
        assert_eq!(blocked.winner, Some(1));
        assert_eq!(
            blocked.answer,
            PromptDecision::Block {
                reason: "no".into()
            }
        );
        let stopped = user_prompt_submit(&[&stop(None)], context());
        assert_eq!(
            stopped.answer,
            PromptDecision::Stop {
                reason: "UserPromptSubmit hook stopped the turn".into(),
                kept: StoppedPrompt::PromptOnly,
            }
        );
        let allowed = user_prompt_submit(&[&Effect::PermissionAllow], context());
        assert_eq!(allowed.winner, None);
        assert_eq!(
            allowed.answer,
            PromptDecision::Allow {
                rewrite: None,
                contexts: context()
            }
        );
    }

    #[test]
    fn pre_tool_use_block_names_the_command_or_the_mcp_tool() {
        let input = HookToolInput::Command {
            command: "rm -rf x".into(),
            description: None,
        };
        let (first, second) = (block("first"), block("second"));
        let denied = pre_tool_use(&[&Effect::None, &first, &second], "bash", &input);
        assert_eq!(denied.winner, Some(1));
        assert_eq!(
            denied.answer,
            PreToolDecision::Deny {
                reason: "Command blocked by PreToolUse hook: first. Command: rm -rf x".into()
            }
        );
        let mcp = pre_tool_use(
            &[&first],
            "mcp__srv__t",
            &HookToolInput::Arguments(json!({})),
        );
        assert_eq!(
            mcp.answer,
            PreToolDecision::Deny {
                reason: "Tool call blocked by PreToolUse hook: first. Tool: mcp__srv__t".into()
            }
        );
        let rewrite = Effect::Rewrite {
            updated_input: json!({}),
        };
        let allowed = pre_tool_use(&[&rewrite, &stop(None)], "bash", &input);
        assert_eq!(
            (allowed.answer, allowed.winner),
            (PreToolDecision::Allow, None)
        );
    }

    #[test]
    fn permission_request_deny_beats_an_earlier_allow() {
        let deny = Effect::PermissionDeny {
            message: "no way".into(),
        };
        let denied = permission_request(&[&Effect::PermissionAllow, &deny], "bash");
        assert_eq!(denied.winner, Some(1));
        assert_eq!(
            denied.answer,
            ApprovalDecision::Deny {
                message:
                    r#"exec_command failed: CreateProcess { message: "Rejected(\"no way\")" }"#
                        .into()
            }
        );
        let allowed = permission_request(&[&Effect::None, &Effect::PermissionAllow], "write");
        assert_eq!(
            (allowed.answer, allowed.winner),
            (ApprovalDecision::AllowOnce, Some(1))
        );
        let abstain = permission_request(&[&block("x")], "write");
        assert_eq!(
            (abstain.answer, abstain.winner),
            (ApprovalDecision::Abstain, None)
        );
    }

    #[test]
    fn post_tool_use_replaces_with_a_block_or_a_stop_reason() {
        let (bare, reasoned) = (stop(None), stop(Some("stopped")));
        let replaced = post_tool_use(&[&bare, &reasoned, &block("late")], context());
        assert_eq!(replaced.winner, Some(1));
        assert_eq!(
            replaced.answer.action,
            PostToolAction::ReplaceContent {
                content: "stopped".into()
            }
        );
        assert_eq!(replaced.answer.contexts, context());
        let kept = post_tool_use(&[&bare], Vec::new());
        assert_eq!(
            (kept.answer.action, kept.winner),
            (PostToolAction::Accept, None)
        );
    }

    fn runs<'a>(effects: &'a [Effect], source: &'a Path) -> Vec<StopRun<'a>> {
        effects
            .iter()
            .enumerate()
            .map(|(display_order, effect)| StopRun {
                effect,
                display_order,
                source,
            })
            .collect()
    }

    #[test]
    fn stop_halts_caps_or_continues_with_every_block() {
        let source = Path::new("/p/.codex/hooks.json");
        let halting = [block("b"), stop(None)];
        let halted = super::stop(CodexEvent::SubagentStop, &runs(&halting, source), 0, 3);
        assert_eq!(halted.winner, Some(1));
        assert_eq!(
            halted.answer,
            StopAnswer::Halt("SubagentStop hook stopped the turn".into())
        );
        let quiet = [Effect::None];
        let stopped = super::stop(CodexEvent::Stop, &runs(&quiet, source), 9, 3);
        assert_eq!(stopped.answer, StopAnswer::Stop);
        let blocking = [block("one"), Effect::None, block("two")];
        let going = super::stop(CodexEvent::Stop, &runs(&blocking, source), 2, 3);
        assert_eq!(
            going.answer,
            StopAnswer::Continue(format!(
                "{}\n{}",
                hook_prompt(CodexEvent::Stop, 0, source, "one"),
                hook_prompt(CodexEvent::Stop, 2, source, "two")
            ))
        );
        let capped = super::stop(CodexEvent::Stop, &runs(&blocking, source), 3, 3);
        assert!(
            matches!(&capped.answer, StopAnswer::Capped(text) if text.contains("blocked 3 consecutive times") && text.contains("cap is 3")),
            "{:?}",
            capped.answer
        );
        assert_eq!(capped.winner, None);
        assert!((capped.decisive)(&blocking[0]) && !(capped.decisive)(&stop(None)));
    }

    #[test]
    fn pre_compact_cancels_on_continue_false() {
        let cancelled = pre_compact(&[&Effect::None, &stop(Some("not now"))]);
        assert_eq!(cancelled.winner, Some(1));
        assert_eq!(
            cancelled.answer,
            CompactionDecision::Cancel {
                reason: "not now".into()
            }
        );
        let proceeds = pre_compact(&[&block("ignored")]);
        assert_eq!(proceeds.answer, CompactionDecision::proceed());
    }
}
