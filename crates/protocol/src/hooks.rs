//! Typed hook records: the canonical seam a hook runs on and what one hook
//! run meant there (`hook/result.decision`).
//!
//! Both bridges write the same record. Every field is optional on the wire
//! (`#[serde(default)]`), so logs written before the record was typed still
//! load, and a field a bridge has nothing to say about is left out.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::PermissionUpdate;

/// The canonical dsh seam an external hook event runs on
/// (`hook/invoked.seam`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Seam {
    /// Session start, before turn 1.
    SessionStart,
    /// A prompt claimed for a turn.
    PromptSubmit,
    /// A proposed or sealed tool call, before it runs.
    PreExecute,
    /// An `ask` being resolved.
    Approval,
    /// A call that is going to run, right before dispatch (its request
    /// metadata).
    BeforeDispatch,
    /// A tool call's outcome.
    PostExecute,
    /// A step's whole batch of tool calls has settled.
    BatchSettled,
    /// A natural stop of the model.
    TurnContinuation,
    /// Around a model request.
    ModelRequest,
    /// A turn closing.
    TurnEnd,
    /// The session ending.
    SessionEnd,
    /// dsh waiting for the user.
    Notification,
    /// A turn's model request failed (the turn closes `error`).
    TurnFailed,
    /// The message list before each model request (seed 004 `context`).
    Context,
    /// After each step: end the turn or session, or prepare the next step.
    StepEnd,
    /// Around a compaction of the history (before it, and after it).
    Compaction,
    /// A subagent's nested run is starting.
    SubagentStart,
    /// A subagent reached a natural stop.
    SubagentStop,
    /// The set-up run (`--init`, `--init-only`, `--maintenance`).
    Setup,
    /// Assistant text about to be displayed.
    MessageDisplay,
    /// The session's working directory moved (bash `cd`).
    CwdChanged,
    /// Around a model switch (`/model`, a host's `set_model`).
    ModelSwitch,
    /// A task tool created a task or marked one completed.
    Task,
    /// A settings file changed during the session.
    ConfigChange,
    /// A watched file changed.
    FileChanged,
    /// An MCP server's question to the user, and the answer.
    Elicitation,
    /// An event dsh never fires (kept so such configuration can be listed).
    #[serde(rename = "none")]
    Unmapped,
}

impl Seam {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Seam::SessionStart => "session-start",
            Seam::PromptSubmit => "prompt-submit",
            Seam::PreExecute => "pre-execute",
            Seam::Approval => "approval",
            Seam::BeforeDispatch => "before-dispatch",
            Seam::PostExecute => "post-execute",
            Seam::BatchSettled => "batch-settled",
            Seam::TurnContinuation => "turn-continuation",
            Seam::ModelRequest => "model-request",
            Seam::TurnEnd => "turn-end",
            Seam::SessionEnd => "session-end",
            Seam::Notification => "notification",
            Seam::TurnFailed => "turn-failed",
            Seam::Context => "context",
            Seam::StepEnd => "step-end",
            Seam::Compaction => "compaction",
            Seam::SubagentStart => "subagent-start",
            Seam::SubagentStop => "subagent-stop",
            Seam::Setup => "setup",
            Seam::MessageDisplay => "message-display",
            Seam::CwdChanged => "cwd-changed",
            Seam::ModelSwitch => "model-switch",
            Seam::Task => "task",
            Seam::ConfigChange => "config-change",
            Seam::FileChanged => "file-changed",
            Seam::Elicitation => "elicitation",
            Seam::Unmapped => "none",
        }
    }
}

impl std::fmt::Display for Seam {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one hook run did on its seam, in either dialect's vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookEffect {
    /// Nothing decisive.
    #[default]
    None,
    /// Allowed the call (permission decisions).
    Allow,
    /// Asked for approval.
    Ask,
    /// Deferred the call (Claude Code `defer`).
    Defer,
    /// Denied the call (permission decisions).
    Deny,
    /// Blocked the action (feedback to the model).
    Block,
    /// Stopped the turn or session (Codex `continue: false`).
    Stop,
    /// Rewrote the tool input (Codex `updatedInput`).
    Rewrite,
}

impl HookEffect {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            HookEffect::None => "none",
            HookEffect::Allow => "allow",
            HookEffect::Ask => "ask",
            HookEffect::Defer => "defer",
            HookEffect::Deny => "deny",
            HookEffect::Block => "block",
            HookEffect::Stop => "stop",
            HookEffect::Rewrite => "rewrite",
        }
    }
}

/// A Codex run status (`HookRunStatus`), plus `running` for detached runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookRunStatus {
    /// Ran; maybe added context or a warning.
    Completed,
    /// Failed; its output was ignored (fail-open).
    Failed,
    /// Blocked the action.
    Blocked,
    /// `continue: false`.
    Stopped,
    /// Not awaited (async handler).
    Running,
}

/// One Codex output entry (`HookOutputEntry`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookEntry {
    /// `warning`, `stop`, `feedback`, `context` or `error`.
    pub kind: String,
    /// Its text.
    pub text: String,
}

/// `hook/result.decision`: what one hook run meant on its seam.
///
/// Field names are the ones the log has always carried (contracts: fields
/// are added, never renamed), so the Codex bridge keeps writing `message`
/// for a PermissionRequest denial and `capped` for the Stop-hook cap where
/// the Claude bridge writes `reason` and `overridden`; readers use
/// [`HookDecision::best_reason`] and [`HookDecision::override_text`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct HookDecision {
    /// Codex's run status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<HookRunStatus>,
    /// What the run did.
    #[serde(default)]
    pub effect: HookEffect,
    /// The hook's reason (block feedback, denial message, ask/allow reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Codex's name for a PermissionRequest denial's message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Codex output entries (always written by the Codex bridge, even empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<HookEntry>>,
    /// Model-facing contexts it added.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contexts: Vec<String>,
    /// Continuation prompts it asked for (Claude Code Stop `reason`s).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steering: Vec<String>,
    /// The tool input it asked for, as the hook gave it: a `null` it gave
    /// reads back as that `null`, not as no input.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub updated_input: Option<Value>,
    /// `false` when the hook asked to stop (`continue: false`).
    #[serde(default, rename = "continue", skip_serializing_if = "Option::is_none")]
    pub continues: Option<bool>,
    /// Why it asked to stop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Texts shown to the user only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub user_notices: Vec<String>,
    /// Output fields the dialect ignores here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<String>,
    /// Why the run meant what it meant (failures, async runs, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Codex trust state of the handler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust: Option<String>,
    /// Why a long context could not be spilled to a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spill_error: Option<String>,
    /// Whether this run's decisive answer was the one the seam acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub won: Option<bool>,
    /// Whether this run's rewrite was the one applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewrite_won: Option<bool>,
    /// Why its rewrite was not applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewrite_ignored: Option<String>,
    /// Why its updated input was ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_input_ignored: Option<String>,
    /// Whether its output replacement was the one applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replace_won: Option<bool>,
    /// What overrode its decision (e.g. the Stop-hook cap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overridden: Option<String>,
    /// Codex's name for what overrode its decision (the Stop-hook cap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capped: Option<String>,
    /// Whether this is an async run's late result.
    #[serde(default, rename = "async", skip_serializing_if = "std::ops::Not::not")]
    pub is_async: bool,
    /// The turn an async run's contexts were delivered in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivered_in_turn: Option<u64>,
    /// A note for people reading the log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The permission changes an approval hook made (Claude Code's
    /// PermissionRequest `updatedPermissions`). A log value that is not a
    /// list of updates (older logs kept the hook's raw JSON) reads as none.
    #[serde(
        default,
        deserialize_with = "updates_or_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub updated_permissions: Option<Vec<PermissionUpdate>>,
    /// A PermissionDenied hook's `retry: true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<bool>,
}

/// `deserialize_with` for a key that counts when it is there, whatever it
/// holds (`null` too); with `#[serde(default)]` a missing key is `None`.
pub fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// `updated_permissions` as logged: the typed updates, or `None` when the
/// value does not read as them (never an error: the rest of the record
/// still loads).
fn updates_or_none<'de, D>(deserializer: D) -> Result<Option<Vec<PermissionUpdate>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    /// The updates, or anything else (read and dropped).
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Logged {
        Updates(Vec<PermissionUpdate>),
        Unreadable(serde::de::IgnoredAny),
    }
    Ok(match Option::<Logged>::deserialize(deserializer)? {
        Some(Logged::Updates(updates)) => Some(updates),
        Some(Logged::Unreadable(_)) | None => None,
    })
}

impl HookDecision {
    /// A decision with `effect` and nothing else.
    pub fn of(effect: HookEffect) -> Self {
        HookDecision {
            effect,
            ..HookDecision::default()
        }
    }

    /// Whether the hook asked to stop.
    pub fn stops(&self) -> bool {
        self.continues == Some(false)
    }

    /// The most telling reason: the hook's reason (or Codex's denial
    /// message), else its stop reason.
    pub fn best_reason(&self) -> Option<&str> {
        self.reason
            .as_deref()
            .or(self.message.as_deref())
            .or(self.stop_reason.as_deref())
    }

    /// What overrode the decision, under either bridge's name.
    pub fn override_text(&self) -> Option<&str> {
        self.overridden.as_deref().or(self.capped.as_deref())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn todays_claude_decision_round_trips_with_its_keys() {
        let written = json!({
            "effect": "deny", "reason": "no", "contexts": ["c"],
            "continue": false, "stop_reason": "halt", "won": true,
            "rewrite_won": false, "rewrite_ignored": "the call is denied"
        });
        let decision: HookDecision = serde_json::from_value(written.clone()).unwrap();
        assert_eq!(decision.effect, HookEffect::Deny);
        assert!(decision.stops());
        assert_eq!(serde_json::to_value(&decision).unwrap(), written);
    }

    #[test]
    fn codex_names_are_still_read() {
        let old = json!({
            "status": "completed", "effect": "deny", "message": "nope",
            "entries": [], "trust": "untrusted", "won": false, "capped": "cap hit"
        });
        let decision: HookDecision = serde_json::from_value(old).unwrap();
        assert_eq!(decision.best_reason(), Some("nope"));
        assert_eq!(decision.override_text(), Some("cap hit"));
        assert_eq!(decision.entries, Some(Vec::new()));
        assert_eq!(decision.status, Some(HookRunStatus::Completed));
        // Written back with the same keys: the contract renames nothing.
        let again = serde_json::to_value(&decision).unwrap();
        assert_eq!(again["message"], "nope");
        assert_eq!(again["capped"], "cap hit");
        assert_eq!(again["entries"], json!([]));
        assert!(again.get("reason").is_none());
    }

    #[test]
    fn a_null_updated_input_reads_back_as_given() {
        let written = json!({"effect": "rewrite", "updated_input": null});
        let decision: HookDecision = serde_json::from_value(written.clone()).unwrap();
        assert_eq!(decision.updated_input, Some(Value::Null));
        assert_eq!(serde_json::to_value(&decision).unwrap(), written);
        let absent: HookDecision = serde_json::from_value(json!({"effect": "rewrite"})).unwrap();
        assert_eq!(absent.updated_input, None);
    }

    #[test]
    fn an_empty_decision_loads_as_none() {
        let decision: HookDecision = serde_json::from_value(json!({})).unwrap();
        assert_eq!(decision, HookDecision::default());
        assert_eq!(
            serde_json::to_value(HookDecision::of(HookEffect::None)).unwrap(),
            json!({"effect": "none"})
        );
    }

    #[test]
    fn seams_use_their_wire_names() {
        for seam in [
            Seam::PreExecute,
            Seam::BeforeDispatch,
            Seam::BatchSettled,
            Seam::Unmapped,
        ] {
            assert_eq!(
                serde_json::to_value(seam).unwrap(),
                Value::String(seam.as_str().to_owned())
            );
        }
    }

    #[test]
    fn updated_permissions_are_typed_and_a_raw_old_value_reads_as_none() {
        let wire = json!({"effect": "allow", "updated_permissions": [
            {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}],
             "behavior": "allow", "destination": "session"},
            {"type": "setMode", "mode": "acceptEdits", "destination": "localSettings"}
        ]});
        let decision: HookDecision = serde_json::from_value(wire.clone()).unwrap();
        let updates = decision.updated_permissions.clone().unwrap();
        assert_eq!(updates.len(), 2);
        assert!(matches!(
            &updates[0],
            crate::PermissionUpdate::AddRules { rules, behavior: crate::RuleBehavior::Allow, .. }
                if rules[0].to_rule_string() == "Bash(npm test:*)"
        ));
        // Written back byte for byte: the log keeps its shape.
        assert_eq!(
            serde_json::to_string(&decision).unwrap(),
            serde_json::to_string(&wire).unwrap()
        );
        let old: HookDecision = serde_json::from_value(
            json!({"effect": "allow", "updated_permissions": {"whatever": true}, "reason": "r"}),
        )
        .unwrap();
        assert_eq!(old.updated_permissions, None);
        assert_eq!(old.reason.as_deref(), Some("r"));
    }
}
