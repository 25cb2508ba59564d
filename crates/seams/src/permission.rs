//! Typed permission vocabulary shared by the permission model, the tool
//! pipeline and the bridges: what an approval request offers
//! (`permission_suggestions`), what an approval answer changes
//! (`updatedPermissions`), and the screening that settles a call before any
//! hook sees it.
//!
//! The serialized shapes are Claude Code's (`{"type":"addRules",…}`), so a
//! bridge passes them to hooks and reads them back without translation.

use serde::Serialize;
use serde_json::Value;

// The update vocabulary is plain data in dsh-protocol, so that a hook's
// logged decision (`HookDecision::updated_permissions`) can carry it too.
pub use dsh_protocol::{PermissionUpdate, RuleBehavior, RuleValue, UpdateDestination};

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
