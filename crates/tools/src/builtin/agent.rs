//! `agent`: delegates a task to a subagent — a nested agent loop with its
//! own conversation — and returns the subagent's final text.
//!
//! The tool only defines the call and its value; the nested loop is the
//! agent loop's [`SubagentRunner`](dsh_seams::SubagentRunner), reached
//! through the seam context the registry hands the tool. Without one (a
//! tool run outside a session) the call fails with a clear message.

use async_trait::async_trait;
use dsh_protocol::ToolSpec;
use dsh_seams::{DEFAULT_AGENT_TYPE, SubagentRequest};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{TypedTool, spec};
use crate::{Rendered, ToolContext, ToolError};

/// The tool's name.
pub const NAME: &str = "agent";

/// The `agent` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct AgentTool;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {
    description: String,
    prompt: String,
    #[serde(default)]
    subagent_type: Option<String>,
    /// Accepted for Claude Code's argument shape; dsh always waits for the
    /// subagent (a background run is not offered).
    #[serde(default, rename = "run_in_background")]
    _run_in_background: Option<bool>,
}

/// One block of the subagent's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentContentBlock {
    /// Always `text`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The text.
    pub text: String,
}

/// The canonical value of an `agent` call (field names follow Claude
/// Code's `Agent` tool response, so the bridge passes them through).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentOutput {
    /// `completed`, or `incomplete` when the nested run did not reach its
    /// natural end.
    pub status: String,
    /// The task it was given.
    pub prompt: String,
    /// The nested run's id.
    pub agent_id: String,
    /// Its agent type.
    pub agent_type: String,
    /// The dsh tools it called, in first-use order (absent when none, as
    /// in Claude Code's response).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools_used: Vec<String>,
    /// Its final answer.
    pub content: Vec<AgentContentBlock>,
    /// The model it ran on.
    pub resolved_model: String,
    /// How many tool calls it made.
    pub total_tool_use_count: u64,
}

#[async_trait]
impl TypedTool for AgentTool {
    const NAME: &'static str = NAME;
    type Args = Args;
    type Output = AgentOutput;

    fn describe(&self) -> ToolSpec {
        spec(
            NAME,
            "Delegates a task to a subagent: a fresh conversation with its own context that \
             can use the other tools, and whose final message comes back as this tool's \
             result. Give it a complete, self-contained prompt.",
            json!({
                "description": {"type": "string", "description": "A short (3-5 word) description of the task."},
                "prompt": {"type": "string", "description": "The task for the subagent."},
                "subagent_type": {"type": "string", "description": "The agent type to use (default: general-purpose)."},
                "run_in_background": {"type": "boolean", "description": "Accepted for compatibility; dsh always waits for the result."}
            }),
            &["description", "prompt"],
        )
    }

    async fn call(&self, ctx: &ToolContext, args: Args) -> Result<AgentOutput, ToolError> {
        let Some(parent) = ctx.seam.as_ref() else {
            return Err(ToolError(format!(
                "{NAME}: subagents need a running session"
            )));
        };
        let Some(runner) = parent.subagents.clone() else {
            return Err(ToolError(format!(
                "{NAME}: subagents are not available here"
            )));
        };
        let request = SubagentRequest {
            description: args.description,
            prompt: args.prompt.clone(),
            subagent_type: args
                .subagent_type
                .filter(|kind| !kind.is_empty())
                .unwrap_or_else(|| DEFAULT_AGENT_TYPE.to_owned()),
        };
        let report = runner
            .run(parent, request, &ctx.execution_id, ctx.cancel.clone())
            .await
            .map_err(|reason| ToolError(format!("{NAME}: {reason}")))?;
        Ok(AgentOutput {
            status: if report.completed {
                "completed"
            } else {
                "incomplete"
            }
            .to_owned(),
            prompt: args.prompt,
            agent_id: report.identity.agent_id,
            agent_type: report.identity.agent_type,
            tools_used: report.tools_used,
            content: vec![AgentContentBlock {
                kind: "text".to_owned(),
                text: match (report.completed, report.message) {
                    (false, Some(message)) if report.final_text.is_empty() => {
                        format!("The subagent stopped before answering: {message}")
                    }
                    (true, _) | (false, _) => report.final_text,
                },
            }],
            resolved_model: report.model,
            total_tool_use_count: report.tool_uses,
        })
    }

    fn show(&self, output: AgentOutput) -> Result<Rendered, ToolError> {
        let content: String = output
            .content
            .iter()
            .map(|block| block.text.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        Ok(Rendered {
            content,
            is_error: output.status != "completed",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Tool;
    use tokio_util::sync::CancellationToken;

    #[tokio::test]
    async fn without_a_session_the_call_fails_clearly() {
        let ctx = ToolContext::new("/tmp", CancellationToken::new());
        let error = AgentTool
            .run(&ctx, &json!({"description": "d", "prompt": "p"}))
            .await
            .unwrap_err();
        assert_eq!(error.0, "agent: subagents need a running session");
    }

    #[test]
    fn render_shows_the_final_text_and_rejects_foreign_values() {
        let value = json!({
            "status": "completed", "prompt": "p", "agentId": "a0123456789abcdef",
            "agentType": "general-purpose", "toolsUsed": ["bash"],
            "content": [{"type": "text", "text": "DONE"}],
            "resolvedModel": "m", "totalToolUseCount": 1
        });
        let rendered = AgentTool.render(&value).unwrap();
        assert_eq!(rendered.content, "DONE");
        assert!(!rendered.is_error);
        let mut incomplete = value.clone();
        incomplete["status"] = json!("incomplete");
        assert!(AgentTool.render(&incomplete).unwrap().is_error);
        assert!(AgentTool.render(&json!({"content": "DONE"})).is_err());
    }
}
