//! The permission flags of every session, handed to dsh-permissions'
//! layering (settings files, rules, mode, workspace trust), which owns it.

use std::path::PathBuf;

use crate::Result;
/// A permission mode (`--permission-mode`, [`SessionMode::mode`]).
pub use dsh_permissions::Mode;
use dsh_permissions::layering;

/// Permission flags of every session (part of [`crate::SessionFlags`]).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PermissionFlags {
    /// Permission mode: acceptEdits, auto, bypassPermissions, manual (hooks see `default`), dontAsk, plan.
    #[arg(long = "permission-mode", value_name = "MODE", value_parser = mode_parser())]
    pub permission_mode: Option<Mode>,
    /// Rules that run without asking (`Bash(npm test:*)`, `Read`, …), comma- or space-separated.
    #[arg(long = "allowedTools", alias = "allowed-tools", value_name = "RULES")]
    pub allowed_tools: Vec<String>,
    /// Rules that never run, comma- or space-separated.
    #[arg(
        long = "disallowedTools",
        alias = "disallowed-tools",
        value_name = "RULES"
    )]
    pub disallowed_tools: Vec<String>,
    /// `none`: no one can answer a permission prompt; every ask is denied
    /// with Claude Code's "no approval surface" text.
    #[arg(long = "permission-prompts", value_name = "SURFACE", value_parser = ["none"])]
    pub permission_prompts: Option<String>,
    /// Also let tools work in DIR as in the project, as `claude --add-dir` (repeat for more).
    #[arg(long = "add-dir", value_name = "DIR")]
    pub add_dirs: Vec<PathBuf>,
    /// Run every tool call without a permission check: the
    /// `bypassPermissions` mode (deny rules and hooks still apply).
    #[arg(long, conflicts_with = "permission_mode")]
    pub dangerously_skip_permissions: bool,
}

/// The mode names, as completions offer them (`manual` is `default`).
pub const MODE_NAMES: [&str; 7] = [
    "acceptEdits",
    "auto",
    "bypassPermissions",
    "default",
    "dontAsk",
    "manual",
    "plan",
];

/// `--permission-mode`: one of [`MODE_NAMES`], which shell completions
/// offer.
fn mode_parser() -> impl clap::builder::TypedValueParser<Value = Mode> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(MODE_NAMES).try_map(|s| s.parse::<Mode>())
}

impl PermissionFlags {
    /// The mode the command line asks for: `--permission-mode`, or
    /// `bypassPermissions` for `--dangerously-skip-permissions` (the two
    /// conflict). The one place the two flags become a mode.
    pub fn requested_mode(&self) -> Option<Mode> {
        self.permission_mode.or(self
            .dangerously_skip_permissions
            .then_some(Mode::BypassPermissions))
    }
}

/// The session's permission mode: one typed fact, decided once by
/// [`crate::SessionSpec::resolve`] (flag, else a settings `defaultMode`,
/// else the policy's fallback, else Claude Code's `default`) and read by
/// everyone: the permission stage starts in it, hooks' `permission_mode`
/// carries it, `dsh status` and the front ends show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionMode {
    /// The command line asked for it (`--permission-mode`,
    /// `--dangerously-skip-permissions`).
    Requested(Mode),
    /// The configuration chose it (a settings `defaultMode`, replay's
    /// `bypassPermissions`, or Claude Code's `default`).
    Configured(Mode),
}

impl SessionMode {
    /// The mode.
    pub fn mode(self) -> Mode {
        match self {
            SessionMode::Requested(mode) | SessionMode::Configured(mode) => mode,
        }
    }

    /// Whether the command line asked for it: a dialect whose tool derives
    /// the mode itself (Codex, from its approval policy) shows the
    /// session's mode only then.
    pub fn requested(self) -> bool {
        match self {
            SessionMode::Requested(_) => true,
            SessionMode::Configured(_) => false,
        }
    }
}

impl std::fmt::Display for SessionMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.mode().fmt(f)
    }
}

pub use dsh_permissions::layering::{Built, WorkspaceTrust, workspace_trust, workspace_trust_with};

/// The session's permission layers (dsh-permissions' [`layering`]) for
/// these flags, from the places `at` names (its `fallback` is the mode when
/// neither the flag nor a `defaultMode` names one: replay's
/// `bypassPermissions`, per contracts §6), read through the session's
/// reader (each file read once).
///
/// [`layering`]: dsh_permissions::layering
pub fn build_with(
    flags: &PermissionFlags,
    at: &layering::Where<'_>,
    files: &dsh_files::ConfigFiles,
) -> Result<Built> {
    let requested = layering::Requested {
        mode: flags.requested_mode(),
        additional_directories: flags.add_dirs.clone(),
        allowed_tools: flags.allowed_tools.clone(),
        disallowed_tools: flags.disallowed_tools.clone(),
        no_prompt_surface: flags.permission_prompts.as_deref() == Some("none"),
    };
    Ok(layering::build_with(&requested, at, files)?)
}
