//! `canUseTool`: with `--permission-prompt-tool stdio`, an `ask` that no
//! PermissionRequest hook settled goes to the application as a
//! `can_use_tool` request, on the approval seam (after the bridges' own
//! PermissionRequest hooks, as in Claude Code).

use std::sync::Arc;

use async_trait::async_trait;
use dsh_sdk_control::{AnswerLine, CanUseTool, CliRequest, PermissionAnswer, SessionState};
use dsh_seams::{
    ApprovalAsk, ApprovalDecision, ApprovalGrant, Plugin, PreToolVerdict, SeamContext,
    ToolExecution,
};
use serde_json::Value;

use crate::peer::Peer;

/// Who granted, in the log.
const BY: &str = "sdk:canUseTool";

/// The approval-seam plugin that asks the application.
pub struct CanUseToolPlugin {
    peer: Arc<Peer>,
}

impl CanUseToolPlugin {
    /// Asks through `peer`.
    pub fn new(peer: Arc<Peer>) -> Self {
        CanUseToolPlugin { peer }
    }
}

/// The request for one call.
pub fn request_for(exec: &ToolExecution, ask: &ApprovalAsk) -> CanUseTool {
    let name = dsh_hooks_claude::payload::cc_tool_name(&exec.tool);
    let input = (*exec.arguments).clone();
    // Claude Code: Bash's own `description`, a file tool's path.
    let description = input
        .get("description")
        .or_else(|| input.get("file_path"))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| ask.reason.clone());
    CanUseTool {
        display_name: name.clone(),
        tool_name: name,
        input,
        description,
        permission_suggestions: ask.suggestions.iter().flatten().cloned().collect(),
        blocked_path: None,
        tool_use_id: exec.call_id.clone(),
    }
}

/// What dsh does with the application's answer.
pub fn decision_for(answer: Result<AnswerLine, String>) -> ApprovalDecision {
    let answer = match answer {
        Ok(answer) => answer,
        Err(why) => {
            return ApprovalDecision::Deny {
                message: format!("canUseTool could not answer: {why}"),
            };
        }
    };
    match answer.read::<PermissionAnswer>() {
        Ok(PermissionAnswer::Allow {
            updated_input,
            updated_permissions,
        }) => ApprovalDecision::Allow(ApprovalGrant {
            updated_input,
            updates: updated_permissions
                .into_iter()
                .flatten()
                .filter_map(dsh_sdk_control::Loose::ok)
                .collect(),
            by: BY.to_owned(),
        }),
        Ok(PermissionAnswer::Deny { message, .. }) => ApprovalDecision::Deny { message },
        Err(error) => ApprovalDecision::Deny {
            message: format!("canUseTool answered something dsh cannot read: {error}"),
        },
    }
}

#[async_trait]
impl Plugin for CanUseToolPlugin {
    fn name(&self) -> &str {
        BY
    }

    async fn approve(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        ask: &ApprovalAsk,
        _review: Option<&PreToolVerdict>,
    ) -> ApprovalDecision {
        let request = CliRequest::CanUseTool(request_for(exec, ask));
        self.peer.state(SessionState::RequiresAction);
        let answer = tokio::select! {
            answer = self.peer.request(request) => answer,
            () = ctx.cancel.cancelled() => Err("the turn was interrupted".to_owned()),
        };
        self.peer.state(SessionState::Running);
        decision_for(answer)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The answer of a `control_response` line carrying `payload`.
    fn answer(payload: Value) -> Result<AnswerLine, String> {
        let line = json!({"type": "control_response", "response": {
            "subtype": "success", "request_id": "r", "response": payload}});
        match dsh_sdk_control::parse_line(&line.to_string()).unwrap() {
            dsh_sdk_control::Inbound::ControlResponse(answer) => answer.result,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn answers_become_approval_decisions() {
        let allow = decision_for(answer(
            json!({"behavior": "allow", "updatedInput": {"command": "touch rewritten.txt"}, "toolUseID": "t"}),
        ));
        assert_eq!(
            allow,
            ApprovalDecision::Allow(ApprovalGrant {
                updated_input: Some(json!({"command": "touch rewritten.txt"})),
                updates: Vec::new(),
                by: BY.to_owned(),
            })
        );
        let deny = decision_for(answer(
            json!({"behavior": "deny", "message": "two is forbidden"}),
        ));
        assert_eq!(
            deny,
            ApprovalDecision::Deny {
                message: "two is forbidden".to_owned()
            }
        );
        assert!(matches!(
            decision_for(Err("gone".to_owned())),
            ApprovalDecision::Deny { message } if message.contains("gone")
        ));
        assert!(matches!(
            decision_for(answer(json!({"behavior": "maybe"}))),
            ApprovalDecision::Deny { .. }
        ));
    }
}
