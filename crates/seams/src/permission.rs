//! Typed permission vocabulary shared by the permission model, the tool
//! pipeline and the bridges: what an approval request offers
//! (`permission_suggestions`), what an approval answer changes
//! (`updatedPermissions`), and the screening that settles a call before any
//! hook sees it.
//!
//! The serialized shapes are Claude Code's (`{"type":"addRules",…}`), so a
//! bridge passes them to hooks and reads them back without translation.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where a permission update lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum UpdateDestination {
    /// This session only.
    Session,
    /// `.claude/settings.local.json` of the project.
    LocalSettings,
    /// `.claude/settings.json` of the project.
    ProjectSettings,
    /// `~/.claude/settings.json`.
    UserSettings,
    /// The command line (treated as the session).
    CliArg,
}

/// What a rule does when it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleBehavior {
    /// Runs without asking.
    Allow,
    /// Never runs.
    Deny,
    /// Always asks.
    Ask,
}

/// One rule in an update: `Bash` + `npm test:*` is `Bash(npm test:*)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleValue {
    /// The tool (Claude Code's name).
    pub tool_name: String,
    /// What goes between the parentheses, if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_content: Option<String>,
}

impl RuleValue {
    /// The rule as written in settings (`Bash(touch:*)`, `Read`).
    pub fn to_rule_string(&self) -> String {
        match &self.rule_content {
            Some(content) => format!("{}({content})", self.tool_name),
            None => self.tool_name.clone(),
        }
    }
}

/// A change to the session's permissions, offered with an approval request
/// or made by an approval answer. Field order is Claude Code's wire order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum PermissionUpdate {
    /// Add rules.
    AddRules {
        /// The rules.
        rules: Vec<RuleValue>,
        /// allow / deny / ask.
        behavior: RuleBehavior,
        /// Where they go.
        destination: UpdateDestination,
    },
    /// Replace every rule of `behavior` at `destination`.
    ReplaceRules {
        /// The rules.
        rules: Vec<RuleValue>,
        /// allow / deny / ask.
        behavior: RuleBehavior,
        /// Where they go.
        destination: UpdateDestination,
    },
    /// Remove rules.
    RemoveRules {
        /// The rules.
        rules: Vec<RuleValue>,
        /// allow / deny / ask.
        behavior: RuleBehavior,
        /// Where they are removed from.
        destination: UpdateDestination,
    },
    /// Switch the permission mode (Claude Code's mode name).
    SetMode {
        /// `default`, `acceptEdits`, `plan`, `dontAsk`, `bypassPermissions`, `auto`.
        mode: String,
        /// Where.
        destination: UpdateDestination,
    },
    /// Add working directories.
    AddDirectories {
        /// Absolute directories.
        directories: Vec<String>,
        /// Where.
        destination: UpdateDestination,
    },
    /// Remove working directories.
    RemoveDirectories {
        /// Absolute directories.
        directories: Vec<String>,
        /// Where.
        destination: UpdateDestination,
    },
}

/// What an `ask` hands the approval seam: the reason and the permission
/// changes a person (or a PermissionRequest hook) is offered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct ApprovalAsk {
    /// Why approval is needed; the model-facing text if nobody grants it.
    pub reason: Option<String>,
    /// The suggestions; `None` when none are offered (the key is absent in
    /// Claude Code's PermissionRequest payload), as for an ask rule.
    pub suggestions: Option<Vec<PermissionUpdate>>,
}

/// An approval listener's grant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApprovalGrant {
    /// Replacement arguments (PermissionRequest `updatedInput`): re-validated
    /// against the tool's schema and logged on the `tool/result`.
    pub updated_input: Option<Value>,
    /// Permission changes to apply (PermissionRequest `updatedPermissions`).
    pub updates: Vec<PermissionUpdate>,
    /// Who granted (`claude:PermissionRequest:<command>`).
    pub by: String,
}

/// A plugin's screening of a proposed call, before any plugin reviews it:
/// a call screened out is never reviewed, so no PreToolUse hook sees it
/// (Claude Code's deny rule on a file a reading tool asks for).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Screening {
    /// On to review.
    Pass,
    /// Denied before review; `reason` is the model-facing text.
    Deny {
        /// The model-facing text.
        reason: String,
    },
}

/// What permission-denied listeners answered for an automatic denial.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DeniedFollowUp {
    /// The denial stands as it is.
    Stand,
    /// Tell the model it may retry (PermissionDenied `retry: true`).
    MayRetry,
}
