//! The permission flags of every session, handed to dsh-permissions'
//! layering (settings files, rules, mode, workspace trust), which owns it.

use std::path::PathBuf;

use crate::Result;
use dsh_permissions::{Mode, layering};

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
        mode: flags.permission_mode.or(flags
            .dangerously_skip_permissions
            .then_some(Mode::BypassPermissions)),
        additional_directories: flags.add_dirs.clone(),
        allowed_tools: flags.allowed_tools.clone(),
        disallowed_tools: flags.disallowed_tools.clone(),
        no_prompt_surface: flags.permission_prompts.as_deref() == Some("none"),
    };
    Ok(layering::build_with(&requested, at, files)?)
}
