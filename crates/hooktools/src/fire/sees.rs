//! Where a firing's "the model sees" / "the user sees" lines go.

/// Where a firing's "the model sees" / "the user sees" lines go.
pub(crate) struct Sees<'a> {
    pub model: &'a mut Vec<String>,
    pub user: &'a mut Vec<String>,
}

/// The "the model sees" lines of added context.
pub(crate) fn context_lines(contexts: &[dsh_seams::ContextEntry]) -> Vec<String> {
    contexts
        .iter()
        .map(|c| format!("system message: {}", c.content))
        .collect()
}

impl Sees<'_> {
    /// What a prompt-policy decision shows (UserPromptSubmit on the
    /// `prompt`, UserPromptExpansion on the `command`), and its summary.
    /// `sent`: the text the model gets when the hooks allow it.
    pub(crate) fn prompt_decision(
        &mut self,
        decision: &dsh_seams::PromptDecision,
        what: &str,
        sent: &str,
    ) -> &'static str {
        use dsh_seams::PromptDecision;
        match decision {
            PromptDecision::Allow { contexts, .. } => {
                self.model.push(format!("user message: {sent}"));
                self.model.extend(context_lines(contexts));
                "allow"
            }
            PromptDecision::Block { reason } => {
                self.model
                    .push(format!("nothing: the {what} is blocked, no model request"));
                self.user.push(format!("{what} blocked: {reason}"));
                "block"
            }
            PromptDecision::Stop { reason, .. } => {
                self.model
                    .push("nothing: the turn stops before a model request".into());
                self.user.push(format!("turn stopped: {reason}"));
                "stop"
            }
        }
    }

    /// What a continuation decision shows (Stop for the turn, SubagentStop
    /// for a subagent), and its summary.
    pub(crate) fn continuation(
        &mut self,
        decision: &dsh_seams::ContinuationDecision,
        of: Continuing,
    ) -> &'static str {
        use dsh_seams::ContinuationDecision;
        match decision {
            ContinuationDecision::Stop => {
                self.model.push(
                    match of {
                        Continuing::Turn => "nothing: the turn ends",
                        Continuing::Subagent => "nothing: the subagent ends and reports back",
                    }
                    .into(),
                );
                match of {
                    Continuing::Turn => "stop (the turn ends normally)",
                    Continuing::Subagent => "stop (the subagent ends normally)",
                }
            }
            ContinuationDecision::Continue {
                reason, contexts, ..
            } => {
                if let Some(reason) = reason {
                    let speaker = match of {
                        Continuing::Turn => "user message",
                        Continuing::Subagent => "subagent user message",
                    };
                    self.model.push(format!("{speaker}: {reason}"));
                }
                self.model.extend(context_lines(contexts));
                match of {
                    Continuing::Turn => "continue (the turn goes on)",
                    Continuing::Subagent => "continue (the subagent goes on)",
                }
            }
            ContinuationDecision::Halt { reason } => {
                let who = match of {
                    Continuing::Turn => "turn",
                    Continuing::Subagent => "subagent",
                };
                self.user.push(format!("{who} stopped: {reason}"));
                "halt"
            }
        }
    }
}

/// Whose continuation a Stop-like event decides.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Continuing {
    /// The session's turn (Stop).
    Turn,
    /// A subagent's run (SubagentStop).
    Subagent,
}
