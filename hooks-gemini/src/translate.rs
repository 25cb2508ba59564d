//! What an event's merged readings mean on its seam, as pure functions:
//! the bridge ([`crate::plugin`]) fires the event, merges the runs with
//! [`crate::output::merge`], and applies what these return, with which
//! runs won ([`Decisive`]). No process runs here.

use dsh_seams::{HistoryInput, InputRewrite, PreToolDecision, ProposedCall};

use crate::output::{self, Decision, Interpretation, Merged};
use crate::tools;

/// Which runs carried the answer that was applied (every one of them is
/// marked a winner: Gemini merges them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decisive {
    /// `continue: false`.
    Stop,
    /// A deny or block.
    Deny,
    /// An ask.
    Ask,
    /// A `tool_input` rewrite.
    ToolInput,
    /// An AfterTool `tailToolCallRequest`.
    TailCall,
}

impl Decisive {
    /// Whether `reading` gave this answer.
    pub fn holds(self, reading: &Interpretation) -> bool {
        match self {
            Decisive::Stop => reading.stop.is_some(),
            Decisive::Deny => matches!(reading.decision, Decision::Deny { .. }),
            Decisive::Ask => matches!(reading.decision, Decision::Ask { .. }),
            Decisive::ToolInput => reading.tool_input.given().is_some(),
            Decisive::TailCall => reading.tail_call.given().is_some(),
        }
    }
}

/// BeforeTool's answer on the seam.
#[derive(Debug, Clone, PartialEq)]
pub struct BeforeToolAnswer {
    /// Whether the call runs.
    pub decision: PreToolDecision,
    /// The merged input, under dsh's argument names, when it passed
    /// Gemini's re-validation.
    pub rewrite: InputRewrite,
    /// `continue: false`: the turn stops with this text.
    pub stop: Option<String>,
}

/// BeforeTool over `merged` for `call` (Gemini name `name`); a rewrite is
/// credited to `by`.
pub fn before_tool(
    merged: &Merged,
    call: &ProposedCall,
    name: &str,
    by: String,
) -> (BeforeToolAnswer, Option<Decisive>) {
    let deny = |reason: String, stop: Option<String>| BeforeToolAnswer {
        decision: PreToolDecision::Deny { reason },
        rewrite: InputRewrite::Keep,
        stop,
    };
    if let Some(stop) = &merged.stop {
        let text = output::stopped_text(stop.as_deref());
        return (deny(text.clone(), Some(text)), Some(Decisive::Stop));
    }
    if merged.deny {
        let text = output::before_tool_block_text(merged.reason.as_deref());
        return (deny(text, None), Some(Decisive::Deny));
    }
    let keep = |decision| BeforeToolAnswer {
        decision,
        rewrite: InputRewrite::Keep,
        stop: None,
    };
    if merged.ask {
        // Gemini waits for a confirmation; dsh asks its approval seam,
        // which never hangs (headless: no one to ask, the call is denied).
        let answer = keep(PreToolDecision::ask(merged.reason.clone()));
        return (answer, Some(Decisive::Ask));
    }
    let Some(update) = &merged.tool_input else {
        return (keep(PreToolDecision::Allow), None);
    };
    // Gemini builds the call from the hook's `tool_input` alone: the
    // model's arguments it leaves out are gone (`bt_tool_input_partial`;
    // `{}` fails the check, `bt_tool_input_odd`).
    // The arguments no Gemini hook sees (those Gemini has no name for)
    // stay from the model's call.
    let seen = tools::hook_tool_input(&call.tool, &call.arguments);
    let seen = tools::arguments_from_tool_input(&call.tool, &Default::default(), &seen);
    let mut unseen = call.arguments.clone();
    if let (Some(unseen), Some(seen)) = (unseen.as_object_mut(), seen.as_object()) {
        unseen.retain(|key, _| !seen.contains_key(key));
    }
    let answer = match tools::validate_tool_input(name, update) {
        // A failure is the call's error result and the tool does not run.
        Err(problem) => deny(tools::invalid_rewrite_text(&problem), None),
        Ok(()) => BeforeToolAnswer {
            decision: PreToolDecision::Allow,
            rewrite: InputRewrite::Rewrite {
                arguments: tools::arguments_from_tool_input(&call.tool, &unseen, update),
                by,
                conflicts: Vec::new(),
                history: HistoryInput::Original,
                refusal: None,
            },
            stop: None,
        },
    };
    (answer, Some(Decisive::ToolInput))
}

/// AfterAgent's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AfterAgentAnswer {
    /// `continue: false`: the turn ends with the reason.
    Halt(String),
    /// The answer stands; the turn ends.
    Stop,
    /// The hooks denied again past dsh's cap: the turn ends, with the
    /// warning (recorded on the denying runs and shown to the user).
    Capped(String),
    /// The reason is sent as the retry's new prompt.
    Retry {
        /// The deniers' reasons.
        reason: String,
        /// `clearContext`: the retry starts from a fresh history.
        clear_context: bool,
    },
}

/// AfterAgent over `merged`, after `forced` consecutive denials in this
/// turn, with dsh's `cap` (Gemini CLI has none).
pub fn after_agent(merged: Merged, forced: u32, cap: u32) -> (AfterAgentAnswer, Option<Decisive>) {
    if let Some(stop) = merged.stop {
        let reason = stop.unwrap_or_else(|| "AfterAgent hook stopped the turn".to_owned());
        return (AfterAgentAnswer::Halt(reason), Some(Decisive::Stop));
    }
    if !merged.deny {
        return (AfterAgentAnswer::Stop, None);
    }
    if forced >= cap {
        let text = format!(
            "Gemini AfterAgent hooks denied {forced} consecutive answers in this turn; dsh's cap is {cap}, so the turn ends (Gemini CLI itself has no cap)"
        );
        return (AfterAgentAnswer::Capped(text), Some(Decisive::Deny));
    }
    let answer = AfterAgentAnswer::Retry {
        reason: merged.reason.unwrap_or_default(),
        clear_context: merged.clear_context,
    };
    (answer, Some(Decisive::Deny))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn merged(edit: impl FnOnce(&mut Merged)) -> Merged {
        let mut merged = Merged::default();
        edit(&mut merged);
        merged
    }

    #[test]
    fn before_tool_answers_in_gemini_precedence() {
        let call = ProposedCall {
            call_id: "c".into(),
            tool: "bash".into(),
            arguments: json!({"command": "ls"}),
            parent_execution_id: None,
            origin: None,
        };
        let answer = |m: &Merged| before_tool(m, &call, "run_shell_command", "by".into());
        let all = merged(|m| {
            m.stop = Some(Some("halt".into()));
            m.deny = true;
            m.tool_input = Some(json!({"command": "pwd"}));
        });
        let (stopped, decisive) = answer(&all);
        assert_eq!(decisive, Some(Decisive::Stop));
        assert_eq!(stopped.stop, Some(output::stopped_text(Some("halt"))));
        let deny = merged(|m| {
            m.deny = true;
            m.reason = Some("no".into());
        });
        let (denied, decisive) = answer(&deny);
        assert_eq!(
            denied.decision,
            PreToolDecision::Deny {
                reason: output::before_tool_block_text(Some("no"))
            }
        );
        assert_eq!(decisive, Some(Decisive::Deny));
        let rewrite = merged(|m| m.tool_input = Some(json!({"command": "pwd"})));
        let (rewritten, decisive) = answer(&rewrite);
        assert_eq!(
            rewritten.rewrite,
            InputRewrite::Rewrite {
                arguments: json!({"command": "pwd"}),
                by: "by".into(),
                conflicts: Vec::new(),
                history: HistoryInput::Original,
                refusal: None,
            }
        );
        assert_eq!(decisive, Some(Decisive::ToolInput));
        let (allowed, decisive) = answer(&Merged::default());
        assert_eq!(
            (allowed.decision, allowed.rewrite, decisive),
            (PreToolDecision::Allow, InputRewrite::Keep, None)
        );
    }

    /// `bt_tool_input_partial`: the hook's `tool_input` replaces the
    /// model's arguments (`description` is gone); an argument no Gemini
    /// hook sees stays. `bt_tool_input_odd`: `{}` fails Gemini's check.
    #[test]
    fn a_hooks_tool_input_replaces_the_models_arguments() {
        let call = ProposedCall {
            call_id: "c".into(),
            tool: "bash".into(),
            arguments: json!({"command": "echo hi", "description": "say hi", "timeout": 5}),
            parent_execution_id: None,
            origin: None,
        };
        let answer = |input| {
            let merged = merged(|m| m.tool_input = Some(input));
            before_tool(&merged, &call, "run_shell_command", "by".into()).0
        };
        assert_eq!(
            answer(json!({"command": "echo NEW"})).rewrite,
            InputRewrite::Rewrite {
                arguments: json!({"timeout": 5, "command": "echo NEW"}),
                by: "by".into(),
                conflicts: Vec::new(),
                history: HistoryInput::Original,
                refusal: None,
            }
        );
        let empty = answer(json!({}));
        assert_eq!(
            (empty.decision, empty.rewrite),
            (
                PreToolDecision::Deny {
                    reason: tools::invalid_rewrite_text(
                        "params must have required property 'command'"
                    )
                },
                InputRewrite::Keep
            )
        );
    }

    #[test]
    fn after_agent_denials_retry_until_the_cap() {
        let deny = merged(|m| {
            m.deny = true;
            m.reason = Some("again".into());
            m.clear_context = true;
        });
        assert_eq!(
            after_agent(deny.clone(), 0, 8).0,
            AfterAgentAnswer::Retry {
                reason: "again".into(),
                clear_context: true
            }
        );
        assert!(
            matches!(after_agent(deny, 8, 8).0, AfterAgentAnswer::Capped(text) if text.contains("denied 8 consecutive"))
        );
        assert_eq!(
            after_agent(Merged::default(), 0, 8),
            (AfterAgentAnswer::Stop, None)
        );
        let stop = merged(|m| m.stop = Some(None));
        assert_eq!(
            after_agent(stop, 0, 8),
            (
                AfterAgentAnswer::Halt("AfterAgent hook stopped the turn".into()),
                Some(Decisive::Stop)
            )
        );
    }
}
