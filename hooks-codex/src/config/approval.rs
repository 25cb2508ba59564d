//! Codex's `approval_policy` and `sandbox_mode` (top-level keys of every
//! `config.toml` layer; the last layer that sets one wins, as Codex merges
//! them), and what they mean for dsh.
//!
//! dsh decides which calls need approval with its own permission model
//! (Claude Code's modes and rules, and hooks that answer `ask`). The Codex
//! policy decides what happens to such a call at the approval seam:
//!
//! | `approval_policy` | Codex | dsh |
//! |---|---|---|
//! | `never` | never asks; an escalation request is rejected (`approval policy is Never; reject command …`), no PermissionRequest hook fires | the call is rejected with Codex's text; no PermissionRequest hook runs, nobody is asked |
//! | `on-request` | asks when the model requests escalation; PermissionRequest hooks answer first | PermissionRequest hooks run for every call that needs approval, then the person |
//! | `untrusted` | asks for everything but known-safe commands (rejected at start-up by 0.169) | as `on-request` (dsh's default mode already asks for everything but reads and read-only commands) |
//! | `on-failure` | asks after a sandboxed command failed | as `on-request`: dsh has no sandbox to fail in |
//!
//! Hooks are told `permission_mode` = `bypassPermissions` under `never` and
//! `default` otherwise, as Codex reports them. `sandbox_mode` is read and
//! reported only: **dsh enforces no sandbox**.

use std::path::PathBuf;

/// The model-facing text of a call that needs approval under `never`
/// (Codex 0.169, `permission_allow` and friends).
pub const NEVER_TEXT: &str = "approval policy is Never; reject command — you cannot ask for escalated permissions if the approval policy is Never";

/// Codex's `approval_policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalPolicy {
    /// `untrusted`.
    Untrusted,
    /// `on-request`.
    OnRequest,
    /// `on-failure`.
    OnFailure,
    /// `never`.
    Never,
}

impl ApprovalPolicy {
    /// Parses the config value.
    pub fn parse(value: &str) -> Option<ApprovalPolicy> {
        match value {
            "untrusted" => Some(ApprovalPolicy::Untrusted),
            "on-request" => Some(ApprovalPolicy::OnRequest),
            "on-failure" => Some(ApprovalPolicy::OnFailure),
            "never" => Some(ApprovalPolicy::Never),
            _ => None,
        }
    }

    /// The config value.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalPolicy::Untrusted => "untrusted",
            ApprovalPolicy::OnRequest => "on-request",
            ApprovalPolicy::OnFailure => "on-failure",
            ApprovalPolicy::Never => "never",
        }
    }

    /// The `permission_mode` Codex reports to hooks under this policy.
    pub fn permission_mode(self) -> &'static str {
        match self {
            ApprovalPolicy::Never => "bypassPermissions",
            ApprovalPolicy::Untrusted | ApprovalPolicy::OnRequest | ApprovalPolicy::OnFailure => {
                "default"
            }
        }
    }

    /// What the approval seam does with a call that needs approval.
    pub fn approval(self) -> PolicyApproval {
        match self {
            ApprovalPolicy::Never => PolicyApproval::Reject,
            ApprovalPolicy::Untrusted | ApprovalPolicy::OnRequest | ApprovalPolicy::OnFailure => {
                PolicyApproval::AskHooks
            }
        }
    }
}

/// What a Codex policy makes of a call that needs approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyApproval {
    /// Run the PermissionRequest hooks; without a decision the person decides.
    AskHooks,
    /// Reject it with [`NEVER_TEXT`]; no hook runs and nobody is asked.
    Reject,
}

/// Codex's `sandbox_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxMode {
    /// `read-only`.
    ReadOnly,
    /// `workspace-write`.
    WorkspaceWrite,
    /// `danger-full-access`.
    DangerFullAccess,
}

impl SandboxMode {
    /// Parses the config value.
    pub fn parse(value: &str) -> Option<SandboxMode> {
        match value {
            "read-only" => Some(SandboxMode::ReadOnly),
            "workspace-write" => Some(SandboxMode::WorkspaceWrite),
            "danger-full-access" => Some(SandboxMode::DangerFullAccess),
            _ => None,
        }
    }

    /// The config value.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::DangerFullAccess => "danger-full-access",
        }
    }

    /// Whether Codex would confine commands (anything but full access).
    pub fn confines(self) -> bool {
        match self {
            SandboxMode::ReadOnly | SandboxMode::WorkspaceWrite => true,
            SandboxMode::DangerFullAccess => false,
        }
    }
}

/// A setting and the file that chose it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting<T> {
    /// The value.
    pub value: T,
    /// The `config.toml` it came from.
    pub origin: PathBuf,
}

/// The Codex approval settings in effect.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApprovalSettings {
    /// `approval_policy`, if any layer sets it.
    pub policy: Option<Setting<ApprovalPolicy>>,
    /// `sandbox_mode`, if any layer sets it.
    pub sandbox: Option<Setting<SandboxMode>>,
}

impl ApprovalSettings {
    /// Reads one layer's values over the lower layers', adding a notice
    /// for each value dsh does not know or treats differently.
    pub(crate) fn apply_layer(
        &mut self,
        origin: &std::path::Path,
        policy: Option<&str>,
        sandbox: Option<&str>,
        notices: &mut Vec<String>,
    ) {
        if let Some(text) = policy {
            match ApprovalPolicy::parse(text) {
                Some(value) => {
                    self.policy = Some(Setting {
                        value,
                        origin: origin.to_owned(),
                    });
                }
                None => notices.push(format!(
                    "ignoring approval_policy = {text:?} in {}: expected untrusted, on-request, on-failure or never",
                    origin.display()
                )),
            }
        }
        if let Some(text) = sandbox {
            match SandboxMode::parse(text) {
                Some(value) => {
                    self.sandbox = Some(Setting {
                        value,
                        origin: origin.to_owned(),
                    });
                }
                None => notices.push(format!(
                    "ignoring sandbox_mode = {text:?} in {}: expected read-only, workspace-write or danger-full-access",
                    origin.display()
                )),
            }
        }
    }

    /// Notices about the settings in effect: the sandbox dsh does not
    /// enforce, and policies dsh reads differently from Codex.
    pub(crate) fn notices(&self) -> Vec<String> {
        let mut notices = Vec::new();
        if let Some(sandbox) = &self.sandbox
            && sandbox.value.confines()
        {
            notices.push(format!(
                "sandbox_mode={} requested; no sandbox is enforced by dsh ({})",
                sandbox.value.as_str(),
                sandbox.origin.display()
            ));
        }
        if let Some(policy) = &self.policy {
            match policy.value {
                ApprovalPolicy::Untrusted => notices.push(format!(
                    "approval_policy=untrusted ({}) works as on-request in dsh (Codex 0.169 refuses it at start-up)",
                    policy.origin.display()
                )),
                ApprovalPolicy::OnFailure => notices.push(format!(
                    "approval_policy=on-failure ({}) works as on-request in dsh: there is no sandbox for a command to fail in",
                    policy.origin.display()
                )),
                ApprovalPolicy::OnRequest | ApprovalPolicy::Never => {}
            }
        }
        notices
    }

    /// One line for `dsh hooks list`: the policy and the sandbox.
    pub fn describe(&self) -> String {
        let policy = match &self.policy {
            Some(policy) => format!(
                "approval_policy={} ({})",
                policy.value.as_str(),
                policy.origin.display()
            ),
            None => "approval_policy not set".to_owned(),
        };
        let sandbox = match &self.sandbox {
            Some(sandbox) if sandbox.value.confines() => format!(
                "sandbox_mode={} requested; no sandbox is enforced by dsh",
                sandbox.value.as_str()
            ),
            Some(sandbox) => format!(
                "sandbox_mode={}; dsh enforces no sandbox",
                sandbox.value.as_str()
            ),
            None => "sandbox_mode not set; dsh enforces no sandbox".to_owned(),
        };
        format!("{policy}; {sandbox}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn values_round_trip_and_the_last_layer_wins() {
        for policy in ["untrusted", "on-request", "on-failure", "never"] {
            assert_eq!(
                ApprovalPolicy::parse(policy).map(|p| p.as_str()),
                Some(policy)
            );
        }
        for sandbox in ["read-only", "workspace-write", "danger-full-access"] {
            assert_eq!(
                SandboxMode::parse(sandbox).map(|s| s.as_str()),
                Some(sandbox)
            );
        }
        let mut settings = ApprovalSettings::default();
        let mut notices = Vec::new();
        settings.apply_layer(
            Path::new("/u/config.toml"),
            Some("never"),
            Some("read-only"),
            &mut notices,
        );
        settings.apply_layer(
            Path::new("/p/.codex/config.toml"),
            Some("on-request"),
            Some("sometimes"),
            &mut notices,
        );
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert!(notices[0].contains("sandbox_mode = \"sometimes\""));
        let policy = settings.policy.clone().map(|p| (p.value, p.origin));
        assert_eq!(
            policy,
            Some((
                ApprovalPolicy::OnRequest,
                PathBuf::from("/p/.codex/config.toml")
            ))
        );
        assert_eq!(
            settings.sandbox.as_ref().map(|s| s.value),
            Some(SandboxMode::ReadOnly)
        );
        assert_eq!(
            settings.notices(),
            vec![
                "sandbox_mode=read-only requested; no sandbox is enforced by dsh (/u/config.toml)"
            ]
        );
        assert!(
            settings
                .describe()
                .contains("sandbox_mode=read-only requested; no sandbox is enforced by dsh")
        );
    }

    #[test]
    fn never_rejects_and_reports_bypass_the_rest_ask_hooks() {
        assert_eq!(ApprovalPolicy::Never.approval(), PolicyApproval::Reject);
        assert_eq!(ApprovalPolicy::Never.permission_mode(), "bypassPermissions");
        for policy in [
            ApprovalPolicy::Untrusted,
            ApprovalPolicy::OnRequest,
            ApprovalPolicy::OnFailure,
        ] {
            assert_eq!(policy.approval(), PolicyApproval::AskHooks);
            assert_eq!(policy.permission_mode(), "default");
        }
        assert!(!SandboxMode::DangerFullAccess.confines());
    }
}
