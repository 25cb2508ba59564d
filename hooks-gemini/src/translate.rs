//! What an event's merged readings mean on its seam, as pure functions:
//! the bridge ([`crate::plugin`]) fires the event, merges the runs with
//! [`crate::output::merge`], and applies what these return, with which
//! runs won ([`Decisive`]). No process runs here.

use serde_json::Value;

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
}

impl Decisive {
    /// Whether `reading` gave this answer.
    pub fn holds(self, reading: &Interpretation) -> bool {
        match self {
            Decisive::Stop => reading.stop.is_some(),
            Decisive::Deny => matches!(reading.decision, Decision::Deny { .. }),
            Decisive::Ask => matches!(reading.decision, Decision::Ask { .. }),
            Decisive::ToolInput => reading.tool_input.is_some(),
        }
    }
}

/// BeforeTool's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum BeforeToolAnswer {
    /// `continue: false`: the call is denied with the text and the turn
    /// stops.
    Stop(String),
    /// The call does not run; the model-facing text.
    Deny(String),
    /// dsh's approval seam decides.
    Ask(Option<String>),
    /// The call runs with the merged input, under dsh's argument names.
    Rewrite(Value),
    /// The call runs as proposed.
    Allow,
}

/// BeforeTool over `merged`, for the dsh call `tool` with `arguments`
/// (whose Gemini name and input are `name` and `tool_input`).
pub fn before_tool(
    merged: &Merged,
    tool: &str,
    arguments: &Value,
    name: &str,
    tool_input: &Value,
) -> (BeforeToolAnswer, Option<Decisive>) {
    if let Some(stop) = &merged.stop {
        let text = output::stopped_text(stop.as_deref());
        return (BeforeToolAnswer::Stop(text), Some(Decisive::Stop));
    }
    if merged.deny {
        let text = output::before_tool_block_text(merged.reason.as_deref());
        return (BeforeToolAnswer::Deny(text), Some(Decisive::Deny));
    }
    if merged.ask {
        // Gemini waits for a confirmation; dsh asks its approval seam,
        // which never hangs (headless: no one to ask, the call is denied).
        return (
            BeforeToolAnswer::Ask(merged.reason.clone()),
            Some(Decisive::Ask),
        );
    }
    let Some(update) = &merged.tool_input else {
        return (BeforeToolAnswer::Allow, None);
    };
    let input = tools::merge_input(tool_input, update);
    let answer = match tools::validate_tool_input(name, &input) {
        // Gemini re-validates the merged input; a failure is the call's
        // error result and the tool does not run.
        Err(problem) => BeforeToolAnswer::Deny(tools::invalid_rewrite_text(&problem)),
        Ok(()) => {
            BeforeToolAnswer::Rewrite(tools::arguments_from_tool_input(tool, arguments, &input))
        }
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
        let args = json!({"command": "ls"});
        let input = json!({"command": "ls"});
        let answer = |m: &Merged| before_tool(m, "bash", &args, "run_shell_command", &input);
        let all = merged(|m| {
            m.stop = Some(Some("halt".into()));
            m.deny = true;
            m.tool_input = Some(json!({"command": "pwd"}));
        });
        assert_eq!(answer(&all).1, Some(Decisive::Stop));
        let deny = merged(|m| {
            m.deny = true;
            m.reason = Some("no".into());
        });
        assert_eq!(
            answer(&deny),
            (
                BeforeToolAnswer::Deny(output::before_tool_block_text(Some("no"))),
                Some(Decisive::Deny)
            )
        );
        let rewrite = merged(|m| m.tool_input = Some(json!({"command": "pwd"})));
        assert_eq!(
            answer(&rewrite),
            (
                BeforeToolAnswer::Rewrite(json!({"command": "pwd"})),
                Some(Decisive::ToolInput)
            )
        );
        assert_eq!(answer(&Merged::default()), (BeforeToolAnswer::Allow, None));
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
