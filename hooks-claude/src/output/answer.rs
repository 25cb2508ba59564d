//! What a schema-valid JSON answer means, event by event: each event reads
//! the keys it honours from the answer's wire struct and notes the ones it
//! cannot honour.

use serde_json::Value;

use super::wire::{Behavior, Field, HookOutputWire, PermissionDecision, SpecificWire, TopDecision};
use super::{
    BLOCKED_BY_HOOK, DenyFrame, Effect, EventCtx, Interpretation, deny_frame, stopped_text,
};
use crate::events::HookEvent;

/// One answer being applied: the event, the texts' label and the keys
/// most events share.
struct Answer<'a> {
    ctx: &'a EventCtx<'a>,
    label: &'a str,
    wire: &'a HookOutputWire,
    cap: &'a dyn Fn(&str) -> String,
    /// The legacy top-level `decision`.
    decision: Option<TopDecision>,
    /// The legacy top-level `reason`.
    reason: Option<&'a str>,
    /// `continue: false`.
    stopped: bool,
    /// `stopReason` (empty when absent).
    stop_reason: String,
}

/// Applies a schema-valid answer to `out`.
pub(super) fn apply_json(
    ctx: &EventCtx<'_>,
    label: &str,
    wire: &HookOutputWire,
    out: &mut Interpretation,
    cap: &dyn Fn(&str) -> String,
) {
    if let Some(message) = wire.system_message.as_str() {
        out.inform(format!("{label} says: {message}"));
    }
    let answer = Answer {
        ctx,
        label,
        wire,
        cap,
        decision: wire.decision.valid().copied(),
        reason: wire.reason.as_str(),
        stopped: wire.stops(),
        stop_reason: wire.stop_reason.as_str().unwrap_or("").to_owned(),
    };
    match ctx.event {
        HookEvent::PreToolUse => answer.pre_tool_use(out),
        HookEvent::PostToolUse | HookEvent::PostToolUseFailure | HookEvent::PostToolBatch => {
            answer.post_tool_use(out);
        }
        HookEvent::UserPromptSubmit | HookEvent::UserPromptExpansion => answer.prompt(out),
        // Into the subagent's first request (`sub_start_ctx`).
        HookEvent::SubagentStart => {
            answer.start_context(out, "continue: SubagentStart cannot stop the subagent");
        }
        HookEvent::SessionStart => {
            answer.start_context(out, "continue: SessionStart cannot stop the session");
        }
        HookEvent::Stop | HookEvent::SubagentStop => answer.stop(out),
        HookEvent::PermissionRequest => answer.permission_request(out),
        HookEvent::PreCompact => answer.pre_compact(out),
        HookEvent::PermissionDenied => {
            if answer.specific().and_then(|s| s.retry.valid()) == Some(&true) {
                out.retry = true;
            }
        }
        HookEvent::PreModelSwitch => answer.model_switch(out),
        HookEvent::ConfigChange => answer.config_change(out),
        HookEvent::TaskCreated | HookEvent::TaskCompleted => answer.task(out),
        HookEvent::Notification
        | HookEvent::SessionEnd
        | HookEvent::StopFailure
        | HookEvent::PostCompact
        | HookEvent::PostModelSwitch
        | HookEvent::Setup
        | HookEvent::TeammateIdle
        | HookEvent::Elicitation
        | HookEvent::ElicitationResult
        | HookEvent::WorktreeCreate
        | HookEvent::WorktreeRemove
        | HookEvent::InstructionsLoaded
        | HookEvent::CwdChanged
        | HookEvent::FileChanged
        | HookEvent::DirectoryAdded
        | HookEvent::MessageDisplay => answer.cannot_stop(out),
    }
}

impl Answer<'_> {
    fn specific(&self) -> Option<&SpecificWire> {
        self.wire.specific()
    }

    fn blocks(&self) -> bool {
        self.decision == Some(TopDecision::Block)
    }

    /// `additionalContext`, capped.
    fn context(&self) -> Option<String> {
        self.wire.context().map(|context| (self.cap)(context))
    }

    /// `continue: false` on an event that cannot stop anything.
    fn cannot_stop(&self, out: &mut Interpretation) {
        if self.stopped {
            out.ignored
                .push(format!("continue: {} cannot stop anything", self.ctx.event));
        }
    }

    /// `continue: false` on a tool event: the stop text is also a context.
    fn stop_with_text(&self, out: &mut Interpretation) {
        if self.stopped {
            out.contexts
                .push(stopped_text(self.label, &self.stop_reason));
            out.stop = Some(self.stop_reason.clone());
        }
    }

    fn pre_tool_use(&self, out: &mut Interpretation) {
        let label = self.label;
        let specific = self.specific();
        let permission = specific.and_then(|s| s.permission_decision.valid().copied());
        let permission_reason =
            specific.and_then(|s| s.permission_decision_reason.as_str().map(str::to_owned));
        // The legacy top-level decision maps approve→allow, block→deny.
        let reason = self.reason.map(str::to_owned);
        let (kind, why) = match (permission, self.decision) {
            (Some(p), _) => (Some(p), permission_reason),
            (None, Some(TopDecision::Approve)) => (Some(PermissionDecision::Allow), reason),
            (None, Some(TopDecision::Block)) => (Some(PermissionDecision::Deny), reason),
            (None, None) => (None, None),
        };
        out.effect = match kind {
            Some(PermissionDecision::Allow) => Effect::Allow { reason: why },
            Some(PermissionDecision::Ask) => Effect::Ask { reason: why },
            Some(PermissionDecision::Defer) => Effect::Defer { reason: why },
            Some(PermissionDecision::Deny) => {
                let why = why.as_deref().unwrap_or(BLOCKED_BY_HOOK);
                Effect::Deny {
                    text: match deny_frame(self.ctx.tool_name) {
                        DenyFrame::Bare => why.to_owned(),
                        DenyFrame::Labelled => format!("{label} hook error: {why}"),
                    },
                }
            }
            None => Effect::None,
        };
        if let Some(updated) = specific.and_then(|s| s.updated_input.valid()) {
            out.updated_input = Some(Value::Object(updated.clone()));
        }
        if let Some(context) = self.context() {
            out.contexts
                .push(format!("{label} hook additional context: {context}"));
        }
        self.stop_with_text(out);
    }

    fn post_tool_use(&self, out: &mut Interpretation) {
        let label = self.label;
        if let Some(context) = self.context() {
            out.contexts
                .push(format!("{label} hook additional context: {context}"));
        }
        if self.blocks() {
            let text = format!(
                "{label} hook blocking error from command: \"{}\": {}",
                self.ctx.command,
                self.reason.unwrap_or(BLOCKED_BY_HOOK)
            );
            out.contexts.push(text.clone());
            out.effect = Effect::Block { text };
        }
        let is_mcp = self.ctx.tool_name.is_some_and(|t| t.starts_with("mcp__"));
        let specific = self.specific();
        if let Some(replacement) = specific.and_then(|s| s.updated_mcp_tool_output.valid()) {
            if is_mcp {
                out.replace_output = Some(replacement.clone());
            } else {
                out.ignored.push(
                    "updatedMCPToolOutput: ignored for a non-MCP tool (as Claude Code)".to_owned(),
                );
            }
        }
        if let Some(replacement) = specific.and_then(|s| s.updated_tool_output.valid()) {
            if !is_mcp {
                out.ignored.push(
                    "updatedToolOutput: not honoured for built-in tools (dsh cannot check it against Claude Code's output schema)".to_owned(),
                );
            } else if out.replace_output.is_some() {
                out.ignored.push(
                    "updatedToolOutput: updatedMCPToolOutput of the same hook wins".to_owned(),
                );
            } else {
                // An MCP tool's output is what the model sees (a string or
                // blocks), so it is replaced as captured
                // (`mcp_updated_tool_output`).
                out.replace_output = Some(replacement.clone());
            }
        }
        self.stop_with_text(out);
    }

    fn prompt(&self, out: &mut Interpretation) {
        let event = self.ctx.event;
        if self.blocks() {
            out.effect = Effect::Block {
                text: format!(
                    "{event} operation blocked by hook:\n{}\n\nOriginal prompt: {}",
                    self.reason.unwrap_or(BLOCKED_BY_HOOK),
                    self.ctx.prompt.unwrap_or("")
                ),
            };
        }
        if let Some(context) = self.context() {
            out.contexts
                .push(format!("{event} hook additional context: {context}"));
        }
        if self.stopped {
            out.stop = Some(self.stop_reason.clone());
        }
    }

    /// SessionStart / SubagentStart: a context, and no way to stop.
    fn start_context(&self, out: &mut Interpretation, cannot_stop: &str) {
        if let Some(context) = self.context() {
            out.contexts.push(format!(
                "{} hook additional context: {context}",
                self.ctx.event
            ));
        }
        if self.stopped {
            out.ignored.push(cannot_stop.to_owned());
        }
    }

    fn stop(&self, out: &mut Interpretation) {
        let event = self.ctx.event;
        if self.blocks() {
            let reason = self.reason.unwrap_or(BLOCKED_BY_HOOK);
            out.contexts.push(format!(
                "{event} hook blocking error from command: \"{}\": {reason}",
                self.ctx.command
            ));
            out.effect = Effect::Block {
                text: reason.to_owned(),
            };
        }
        // Each event names itself (`j4_stop_additional_context`,
        // `sub_stop_ctx`).
        if let Some(context) = self.context() {
            out.steering.push(format!(
                "<system-reminder>\n{event} hook additional context: {context}\n</system-reminder>"
            ));
        }
        if self.stopped {
            out.stop = Some(self.stop_reason.clone());
        }
    }

    fn permission_request(&self, out: &mut Interpretation) {
        let Some(decision) = self.specific().and_then(|s| s.decision.valid()) else {
            return;
        };
        match decision.behavior.valid() {
            Some(Behavior::Allow) => {
                out.effect = Effect::Allow { reason: None };
                if let Some(updated) = decision.updated_input.valid() {
                    out.updated_input = Some(Value::Object(updated.clone()));
                }
                match &decision.updated_permissions {
                    Field::Valid(updates) => {
                        out.updated_permissions = Some(updates.clone());
                    }
                    Field::Invalid { error, .. } => out.ignored.push(format!(
                        "updatedPermissions: not a list of permission updates ({error})"
                    )),
                    Field::Absent => {}
                }
            }
            Some(Behavior::Deny) => {
                out.effect = Effect::Deny {
                    text: decision
                        .message
                        .as_str()
                        .unwrap_or(BLOCKED_BY_HOOK)
                        .to_owned(),
                };
                if decision.interrupt.valid() == Some(&true) {
                    out.stop = Some(String::new());
                }
            }
            None => {}
        }
    }

    fn pre_compact(&self, out: &mut Interpretation) {
        // PROTOCOL.md: PreCompact takes the top-level `decision: "block"`.
        // Only the exit-2 text is captured; a JSON block uses the same frame.
        if self.blocks() {
            out.effect = Effect::Block {
                text: format!(
                    "Compaction blocked by PreCompact hook: [{}]: {}",
                    self.ctx.command,
                    self.reason.unwrap_or(BLOCKED_BY_HOOK)
                ),
            };
        }
        if self.stopped {
            out.ignored
                .push("continue: PreCompact cannot stop anything".to_owned());
        }
    }

    fn model_switch(&self, out: &mut Interpretation) {
        // `permissionDecision` as on PreToolUse (`ev_model_sdk_deny`): `deny`
        // refuses the switch with the reason; `ask` is refused too, as in a
        // headless Claude Code session (dsh asks no one about a switch).
        let specific = self.specific();
        if let Some(kind @ (PermissionDecision::Deny | PermissionDecision::Ask)) =
            specific.and_then(|s| s.permission_decision.valid().copied())
        {
            let why = specific
                .and_then(|s| s.permission_decision_reason.as_str())
                .unwrap_or(BLOCKED_BY_HOOK);
            out.effect = Effect::Deny {
                text: why.to_owned(),
            };
            if kind == PermissionDecision::Ask {
                out.ignored
                    .push("permissionDecision: ask refuses the switch (no one to ask)".to_owned());
            }
        }
        if self.stopped {
            out.ignored
                .push("continue: PreModelSwitch cannot stop anything".to_owned());
        }
    }

    /// PROTOCOL.md: a top-level `decision: "block"` keeps the old settings.
    fn config_change(&self, out: &mut Interpretation) {
        if self.blocks() {
            let text = self.reason.unwrap_or(BLOCKED_BY_HOOK).to_owned();
            out.effect = Effect::Block { text };
        }
        if self.stopped {
            out.ignored
                .push("continue: ConfigChange cannot stop anything".to_owned());
        }
    }

    /// PROTOCOL.md: TaskCreated takes the top-level `decision: "block"`
    /// (and ignores `continue: false`); TaskCompleted is decided by its exit
    /// code, a `continue: false` stopping a teammate, which dsh does not have.
    fn task(&self, out: &mut Interpretation) {
        if self.blocks() {
            if self.ctx.event == HookEvent::TaskCreated {
                out.effect = Effect::Block {
                    text: self.reason.unwrap_or(BLOCKED_BY_HOOK).to_owned(),
                };
            } else {
                out.ignored
                    .push("decision: TaskCompleted is blocked by exit code 2 only".to_owned());
            }
        }
        self.cannot_stop(out);
    }
}
