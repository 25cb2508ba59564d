//! What a schema-valid JSON answer means, event by event: each event reads
//! the keys it honours from the answer's wire struct and notes the ones it
//! cannot honour.

use serde_json::Value;

use super::keys::{
    EventAnswer, EventKeys, RequestKeys, SwitchDecisionKeys, ToolDecisionKeys, ToolOutputKeys,
};
use super::wire::{Behavior, Field, HookOutputWire, PermissionDecision, TopDecision};
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

/// Applies a schema-valid answer, read for `ctx.event`, to `out`.
pub(super) fn apply_json(
    ctx: &EventCtx<'_>,
    label: &str,
    read: &EventAnswer,
    out: &mut Interpretation,
    cap: &dyn Fn(&str) -> String,
) {
    let wire = &read.wire;
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
    match &read.keys {
        EventKeys::PreToolUse(keys) => answer.pre_tool_use(keys, out),
        EventKeys::ToolOutput(keys) => answer.post_tool_use(keys, out),
        EventKeys::PermissionRequest(keys) => answer.permission_request(keys, out),
        EventKeys::PermissionDenied(keys) => {
            if keys.retry.valid() == Some(&true) {
                out.retry = true;
            }
        }
        EventKeys::PreModelSwitch(keys) => answer.model_switch(keys, out),
        // Their keys are read by the bridge (the answer, the path, the
        // text to show); nothing here can stop.
        EventKeys::Elicitation(_) | EventKeys::WorktreeCreate(_) | EventKeys::MessageDisplay(_) => {
            answer.cannot_stop(out);
        }
        EventKeys::None => answer.keyless(out),
    }
}

impl Answer<'_> {
    /// An event with no `hookSpecificOutput` keys of its own.
    fn keyless(&self, out: &mut Interpretation) {
        match self.ctx.event {
            HookEvent::UserPromptSubmit | HookEvent::UserPromptExpansion => self.prompt(out),
            // Into the subagent's first request (`sub_start_ctx`).
            HookEvent::SubagentStart => {
                self.start_context(out, "continue: SubagentStart cannot stop the subagent");
            }
            HookEvent::SessionStart => {
                self.start_context(out, "continue: SessionStart cannot stop the session");
            }
            HookEvent::Stop | HookEvent::SubagentStop => self.stop(out),
            HookEvent::PreCompact => self.pre_compact(out),
            HookEvent::ConfigChange => self.config_change(out),
            HookEvent::TaskCreated | HookEvent::TaskCompleted => self.task(out),
            // The events with keys of their own are applied with them.
            HookEvent::PreToolUse
            | HookEvent::PostToolUse
            | HookEvent::PostToolUseFailure
            | HookEvent::PostToolBatch
            | HookEvent::PermissionRequest
            | HookEvent::PermissionDenied
            | HookEvent::PreModelSwitch
            | HookEvent::Elicitation
            | HookEvent::ElicitationResult
            | HookEvent::WorktreeCreate
            | HookEvent::MessageDisplay
            | HookEvent::Notification
            | HookEvent::SessionEnd
            | HookEvent::StopFailure
            | HookEvent::PostCompact
            | HookEvent::PostModelSwitch
            | HookEvent::Setup
            | HookEvent::TeammateIdle
            | HookEvent::WorktreeRemove
            | HookEvent::InstructionsLoaded
            | HookEvent::CwdChanged
            | HookEvent::FileChanged
            | HookEvent::DirectoryAdded => self.cannot_stop(out),
        }
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

    fn pre_tool_use(&self, keys: &ToolDecisionKeys, out: &mut Interpretation) {
        let label = self.label;
        let permission = keys.permission_decision.valid().copied();
        let permission_reason = keys.permission_decision_reason.as_str().map(str::to_owned);
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
        if let Some(updated) = keys.updated_input.valid() {
            out.updated_input = Some(Value::Object(updated.clone()));
        }
        if let Some(context) = self.context() {
            out.contexts
                .push(format!("{label} hook additional context: {context}"));
        }
        self.stop_with_text(out);
    }

    fn post_tool_use(&self, keys: &ToolOutputKeys, out: &mut Interpretation) {
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
        if let Some(replacement) = keys.updated_mcp_tool_output.valid() {
            if is_mcp {
                out.replace_output = Some(replacement.clone());
            } else {
                out.ignored.push(
                    "updatedMCPToolOutput: ignored for a non-MCP tool (as Claude Code)".to_owned(),
                );
            }
        }
        if let Some(replacement) = keys.updated_tool_output.valid() {
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

    fn permission_request(&self, keys: &RequestKeys, out: &mut Interpretation) {
        let Some(decision) = keys.decision.valid() else {
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

    fn model_switch(&self, keys: &SwitchDecisionKeys, out: &mut Interpretation) {
        // `permissionDecision` as on PreToolUse (`ev_model_sdk_deny`): `deny`
        // refuses the switch with the reason; `ask` is refused too, as in a
        // headless Claude Code session (dsh asks no one about a switch).
        if let Some(kind @ (PermissionDecision::Deny | PermissionDecision::Ask)) =
            keys.permission_decision.valid().copied()
        {
            let why = keys
                .permission_decision_reason
                .as_str()
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
