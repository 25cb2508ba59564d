//! Permission updates: the changes an approval request offers
//! (`permission_suggestions`) and an approval answer makes
//! (`updatedPermissions`). The serialized shapes are Claude Code's
//! (`{"type":"addRules",…}`).
//!
//! Plain data here so that a hook's logged decision can carry them; the
//! seams re-export them, and `dsh-permissions` applies them.

use serde::{Deserialize, Serialize};

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
