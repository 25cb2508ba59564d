//! Project settings that wait for a trusted workspace.
//!
//! A repository's own settings layer can change how the user's hooks and
//! tools run (Claude Code's `env` exported to every hook and the bash tool,
//! `disableAllHooks`, Gemini CLI's `hooksConfig`, Codex's `approval_policy`).
//! Claude Code and Codex apply such a layer only in a trusted folder; each
//! bridge takes [`ProjectSettings`] in its discovery and, held back, names
//! every key it left out ([`HeldBack`]) so `dsh status` can say so.

use std::path::PathBuf;

/// Whether a bridge applies its project layers' settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProjectSettings {
    /// Applied (a trusted workspace, `dsh replay`, the hook tooling).
    #[default]
    Apply,
    /// Not applied: the workspace is not trusted.
    HoldBack,
}

/// One project setting left out because the workspace is not trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldBack {
    /// The key as the file spells it (`env.PATH`, `hooksConfig.enabled`).
    pub key: String,
    /// The file that sets it.
    pub file: PathBuf,
}

/// Why a held-back setting is not applied, for notices and `dsh status`.
pub const HELD_BACK_WHY: &str = "the workspace is not trusted; `dsh hooks trust` in it (or Claude Code's trust dialog) applies it";
