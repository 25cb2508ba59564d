//! The permission model as a pipeline stage: a [`Plugin`] whose
//! `pre_execute` turns a [`Verdict`] into allow / ask / deny.
//!
//! Register it after the hook bridges: the pre-execute waterfall runs in
//! registration order, so PreToolUse hooks fire first (as in Claude Code)
//! and a hook's deny ends the waterfall before the rules are consulted. An
//! ask goes to the approval seam, where the bridges fire PermissionRequest;
//! nobody answering denies it with the verdict's reason.

use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;
use dsh_seams::{
    Plugin, PreToolDecision, PreToolOutcome, PreToolVerdict, SeamContext, ToolExecution,
};

use crate::layer::Behavior;
use crate::mode::Mode;
use crate::policy::{Permissions, PromptSurface, Verdict};
use crate::rule::Rule;

/// Claude Code's name for a dsh tool, which is what rules are written
/// against; other names (MCP tools) pass through.
pub fn rule_tool_name(dsh_tool: &str) -> &str {
    match dsh_tool {
        "bash" => "Bash",
        "read" => "Read",
        "write" => "Write",
        "edit" => "Edit",
        "glob" => "Glob",
        "grep" => "Grep",
        "agent" => "Agent",
        other => other,
    }
}

/// The pipeline stage.
#[derive(Debug)]
pub struct PermissionsPlugin {
    state: Mutex<Permissions>,
    surface: PromptSurface,
}

impl PermissionsPlugin {
    /// A stage applying `permissions`; `surface` says who can answer asks.
    pub fn new(permissions: Permissions, surface: PromptSurface) -> Self {
        PermissionsPlugin {
            state: Mutex::new(permissions),
            surface,
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut Permissions) -> R) -> R {
        // A poisoned lock only means another call panicked mid-decision;
        // the rules themselves are still consistent.
        let mut guard = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut guard)
    }

    /// The current mode (what hook payloads' `permission_mode` must say).
    pub fn mode(&self) -> Mode {
        self.with(|p| p.mode())
    }

    /// Adds a session rule (PermissionRequest `updatedPermissions`).
    pub fn add_session_rule(&self, rule: Rule, behavior: Behavior) {
        self.with(|p| p.add_session_rule(rule, behavior));
    }

    /// Switches mode (an accepted `setMode` suggestion).
    pub fn set_mode(&self, mode: Mode) {
        self.with(|p| p.set_mode(mode));
    }

    /// The verdict for a call, by dsh tool name.
    pub fn verdict(&self, dsh_tool: &str, arguments: &serde_json::Value) -> Verdict {
        self.with(|p| p.decide(rule_tool_name(dsh_tool), arguments))
    }
}

#[async_trait]
impl Plugin for PermissionsPlugin {
    fn name(&self) -> &str {
        "permissions"
    }

    async fn pre_execute(
        &self,
        _ctx: &SeamContext,
        exec: &ToolExecution,
        _review: Option<&PreToolVerdict>,
    ) -> PreToolOutcome {
        let decision = match self.verdict(&exec.tool, &exec.arguments) {
            Verdict::Allow(_) => PreToolDecision::Allow,
            Verdict::Deny { message, .. } => PreToolDecision::Deny { reason: message },
            Verdict::Ask { reason, .. } => PreToolDecision::Ask {
                reason: Some(Verdict::unanswered_text(&reason, self.surface)),
            },
        };
        PreToolOutcome {
            decision,
            contexts: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::rule::PathContext;

    fn exec(tool: &str, args: serde_json::Value) -> ToolExecution {
        ToolExecution {
            execution_id: "e1".into(),
            call_id: "c1".into(),
            tool: tool.into(),
            arguments: Arc::new(args),
            original_arguments: None,
            rewritten_by: None,
            parent_execution_id: None,
        }
    }

    fn plugin(mode: Mode, surface: PromptSurface) -> PermissionsPlugin {
        let ctx = PathContext {
            cwd: PathBuf::from("/proj"),
            home: None,
        };
        PermissionsPlugin::new(Permissions::new(mode, ctx), surface)
    }

    #[tokio::test]
    async fn asks_carry_the_unanswered_text_for_the_surface() {
        let ctx = SeamContext::detached("/proj");
        let call = exec("bash", json!({"command": "touch a.txt"}));
        let headless = plugin(Mode::Default, PromptSurface::Headless)
            .pre_execute(&ctx, &call, None)
            .await;
        let PreToolDecision::Ask { reason: Some(text) } = headless.decision else {
            panic!("expected an ask, got {:?}", headless.decision);
        };
        assert!(
            text.starts_with("touch in '/proj/a.txt' needs approval."),
            "{text}"
        );
        let none = plugin(Mode::Default, PromptSurface::None)
            .pre_execute(&ctx, &call, None)
            .await;
        let PreToolDecision::Ask { reason: Some(text) } = none.decision else {
            panic!("expected an ask");
        };
        assert!(
            text.starts_with("Permission for this tool use was denied."),
            "{text}"
        );
    }

    #[tokio::test]
    async fn reads_run_and_session_rules_take_effect() {
        let ctx = SeamContext::detached("/proj");
        let p = plugin(Mode::Default, PromptSurface::Headless);
        let read = p
            .pre_execute(&ctx, &exec("read", json!({"file_path": "x"})), None)
            .await;
        assert_eq!(read.decision, PreToolDecision::Allow);
        let call = exec("bash", json!({"command": "touch b"}));
        assert!(matches!(
            p.pre_execute(&ctx, &call, None).await.decision,
            PreToolDecision::Ask { .. }
        ));
        p.add_session_rule(Rule::parse("Bash(touch:*)").expect("rule"), Behavior::Allow);
        assert_eq!(
            p.pre_execute(&ctx, &call, None).await.decision,
            PreToolDecision::Allow
        );
        p.set_mode(Mode::Plan);
        assert_eq!(p.mode(), Mode::Plan);
    }
}
