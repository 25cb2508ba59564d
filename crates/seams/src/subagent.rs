//! Subagents: the identity of a nested run, what the `agent` tool asks
//! for, custom agent definitions, and the runner the agent loop provides.

use std::path::PathBuf;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::SeamContext;

/// The agent type used when the model names none (Claude Code's default).
pub const DEFAULT_AGENT_TYPE: &str = "general-purpose";

/// Who is running: set on the [`SeamContext`] of every seam fired inside a
/// subagent's nested run, so bridges can tell the subagent's hooks apart
/// (and put `agent_id`/`agent_type` into their payloads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentIdentity {
    /// `a` followed by 16 lowercase hex digits, 17 characters in all
    /// (Claude Code's shape, e.g. `a732e1a2e557f7cc8`).
    pub agent_id: String,
    /// The agent type (`general-purpose`, or a custom agent's name).
    pub agent_type: String,
}

impl AgentIdentity {
    /// Whether `id` has the shape of an agent id (`a` + 16 lowercase hex).
    pub fn is_valid_id(id: &str) -> bool {
        id.len() == 17
            && id.starts_with('a')
            && id[1..]
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    }
}

/// What the model asked the `agent` tool for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentRequest {
    /// A short description of the task (shown to people).
    pub description: String,
    /// The task: the subagent's first user message.
    pub prompt: String,
    /// The agent type; [`DEFAULT_AGENT_TYPE`] when the model named none.
    pub subagent_type: String,
}

/// How a nested run ended, as the `agent` tool reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentReport {
    /// The run's identity.
    pub identity: AgentIdentity,
    /// The subagent's last assistant text (the tool result).
    pub final_text: String,
    /// The tools it called, in first-use order.
    pub tools_used: Vec<String>,
    /// How many tool calls it made.
    pub tool_uses: u64,
    /// The model it used.
    pub model: String,
    /// Whether it ran to its natural end (false: interrupted, step bound,
    /// provider error, a stop request).
    pub completed: bool,
    /// Why it did not complete, when it did not.
    pub message: Option<String>,
}

/// A custom agent type (Claude Code's `.claude/agents/<name>.md`), offered
/// by a bridge through [`crate::Plugin::agent_definitions`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentDefinition {
    /// The name the model passes as `subagent_type`.
    pub name: String,
    /// When to use it (shown to the model in the `agent` tool).
    pub description: String,
    /// The system prompt (the file's body).
    pub system_prompt: String,
    /// The dsh tools it may use; `None` means every tool but `agent`.
    pub tools: Option<Vec<String>>,
    /// A model name replacing the session's, when set.
    pub model: Option<String>,
    /// The file it came from.
    pub source: PathBuf,
}

/// What the subagent-start seam is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentStartInput {
    /// The nested run's identity (also on the context).
    pub identity: AgentIdentity,
    /// The task it was given (already its first user message).
    pub prompt: String,
    /// The task's short description.
    pub description: String,
}

/// What the subagent-stop seam is told when the nested run reaches a
/// natural stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentStopInput {
    /// The nested run's identity (also on the context).
    pub identity: AgentIdentity,
    /// Its last assistant text.
    pub last_assistant_message: String,
    /// Whether a subagent-stop listener already forced it to continue.
    pub stop_hook_active: bool,
    /// How many times it was forced to continue so far.
    pub forced_continuations: u32,
}

/// Runs a subagent's nested loop; provided by the agent loop on the
/// [`SeamContext`] it hands to tools (`None` where no loop runs, e.g.
/// `dsh hooks test`).
#[async_trait]
pub trait SubagentRunner: Send + Sync {
    /// Runs `request` as a nested agent inside the call `execution_id` of
    /// `parent`'s turn; `cancel` reaches the nested loop. An `Err` is a
    /// model-facing reason the run could not start (unknown agent type).
    async fn run(
        &self,
        parent: &SeamContext,
        request: SubagentRequest,
        execution_id: &str,
        cancel: CancellationToken,
    ) -> Result<SubagentReport, String>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_ids_have_claude_codes_shape() {
        assert!(AgentIdentity::is_valid_id("a732e1a2e557f7cc8"));
        assert!(!AgentIdentity::is_valid_id("b732e1a2e557f7cc8"));
        assert!(!AgentIdentity::is_valid_id("a732e1a2e557f7cc"));
        assert!(!AgentIdentity::is_valid_id("a732e1a2e557f7cc80"));
        assert!(!AgentIdentity::is_valid_id("a732e1a2e557f7cG8"));
    }
}
