//! Permission layering for a session: flags and settings files into a
//! [`PermissionsPlugin`] registered after the hook bridges.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::{Result, ResultExt as _};
use dsh_permissions::{
    Layer, Mode, PathContext, Permissions, PermissionsPlugin, PromptSurface, Source, Trust, store,
};
use dsh_seams::Plugin;

/// Permission flags of every session (part of [`crate::SessionFlags`]).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PermissionFlags {
    /// Permission mode: acceptEdits, auto, bypassPermissions, manual (hooks see `default`), dontAsk, plan.
    #[arg(long = "permission-mode", value_name = "MODE", value_parser = parse_mode)]
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
}

fn parse_mode(s: &str) -> Result<Mode, String> {
    s.parse::<Mode>().map_err(|e| e.to_string())
}

/// The session's permissions and the mode hooks are told.
#[derive(Clone)]
pub struct Built {
    /// The pipeline stage.
    pub plugin: Arc<dyn Plugin>,
    /// The effective mode.
    pub mode: Mode,
    /// The same stage, typed: the approval prompt adds session rules to it
    /// and asks it who wanted a call approved.
    pub permissions: Arc<PermissionsPlugin>,
}

/// Who vouched for the workspace, for its project `allow` rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkspaceTrust {
    /// `~/.claude.json` `projects.<cwd>.hasTrustDialogAccepted` (Claude
    /// Code's trust dialog).
    ClaudeJson,
    /// `dsh hooks trust` (no selector) in this directory: a workspace
    /// record in `$DSH_HOME/trust.json`.
    DshTrust,
    /// Neither: project `allow` rules are dropped.
    Untrusted,
}

impl WorkspaceTrust {
    /// What the permission model does with it.
    pub fn trust(self) -> Trust {
        match self {
            WorkspaceTrust::ClaudeJson | WorkspaceTrust::DshTrust => Trust::Trusted,
            WorkspaceTrust::Untrusted => Trust::Untrusted,
        }
    }

    /// How `hooks list` names it.
    pub fn by(self) -> Option<&'static str> {
        match self {
            WorkspaceTrust::ClaudeJson => Some("~/.claude.json"),
            WorkspaceTrust::DshTrust => Some("dsh hooks trust"),
            WorkspaceTrust::Untrusted => None,
        }
    }
}

/// Whether the workspace `cwd` is trusted: either consent counts, Claude
/// Code's trust dialog or dsh's own `dsh hooks trust`, each for exactly
/// this directory. An unreadable trust store vouches for nothing (the
/// hooks loader reports it).
pub fn workspace_trust(home: &Path, dsh_home: &Path, cwd: &Path) -> WorkspaceTrust {
    if store::claude_json_trusts(&home.join(".claude.json"), cwd) {
        WorkspaceTrust::ClaudeJson
    } else if dsh_trust::TrustStore::load(dsh_home).is_ok_and(|s| s.trusts_project(cwd)) {
        WorkspaceTrust::DshTrust
    } else {
        WorkspaceTrust::Untrusted
    }
}

/// Reads every settings layer and the flags. `fallback` is the mode when
/// neither the flag nor a `defaultMode` names one (replay:
/// `bypassPermissions`, per contracts §6).
pub fn build(
    flags: &PermissionFlags,
    cwd: &Path,
    home: &Path,
    dsh_home: &Path,
    extra_settings: &[PathBuf],
    fallback: Option<Mode>,
) -> Result<Built> {
    let mut layers = Vec::new();
    for (source, path) in store::settings_paths(Some(home), cwd) {
        layers.push(store::read_layer(source, &path)?);
    }
    for path in extra_settings {
        // `--settings` files rank with the command line, as in Claude Code.
        layers.push(store::read_layer(Source::CliArg, path)?);
    }
    layers.push(
        Layer::from_cli(&flags.allowed_tools, &flags.disallowed_tools)
            .context("invalid permission rule on the command line")?,
    );
    let mode = match flags.permission_mode {
        Some(m) => m,
        None => {
            let from_settings = Permissions::effective_mode(None, &layers);
            let named = layers.iter().any(|l| l.default_mode.is_some());
            match fallback {
                Some(f) if !named => f,
                _ => from_settings,
            }
        }
    };
    // Project allow rules apply only in a workspace the user trusts.
    let trust = workspace_trust(home, dsh_home, cwd).trust();
    let mut permissions = Permissions::new(
        mode,
        PathContext {
            cwd: cwd.to_owned(),
            home: Some(home.to_owned()),
        },
    );
    for layer in layers {
        permissions.add_layer(layer, trust);
    }
    let surface = match flags.permission_prompts.as_deref() {
        Some("none") => PromptSurface::None,
        _ => PromptSurface::Headless,
    };
    let permissions = Arc::new(PermissionsPlugin::new(permissions, surface));
    Ok(Built {
        plugin: Arc::clone(&permissions) as Arc<dyn Plugin>,
        mode,
        permissions,
    })
}
