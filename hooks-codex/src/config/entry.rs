//! What discovery produces per handler: its layer, trust state and dsh
//! status (`dsh hooks list`), and the runnable view the plugin uses.

use std::path::PathBuf;

use dsh_hooks::entries::Off;

use crate::event::CodexEvent;
use crate::matcher::Matcher;
use crate::plugins::CodexPluginOrigin;

/// Which layer a hook came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerSource {
    /// `requirements.toml` `[hooks]` (managed).
    Requirements,
    /// `/etc/codex` (managed).
    System,
    /// `$CODEX_HOME`.
    User,
    /// `<project>/.codex`.
    Project,
}

impl LayerSource {
    /// Codex's name (`hooks/list` `source`).
    pub fn as_str(self) -> &'static str {
        match self {
            LayerSource::Requirements => "requirements",
            LayerSource::System => "system",
            LayerSource::User => "user",
            LayerSource::Project => "project",
        }
    }

    pub(super) fn managed(self) -> bool {
        matches!(self, LayerSource::Requirements | LayerSource::System)
    }
}

/// Which configured hooks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustPolicy {
    /// Every enabled hook, trusted or not (replay and headless default; what
    /// Codex's `--dangerously-bypass-hook-trust` does). Untrusted runs are
    /// recorded as such in their `hook/result` decision (`"trust"`).
    RunAll,
    /// Only managed hooks and hooks whose `trusted_hash` matches (what Codex
    /// does by default).
    TrustedOnly,
}

/// Codex's trust state of one handler (`hooks/list` `trustStatus`, plus `disabled`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustState {
    /// From a managed layer: always runs.
    Managed,
    /// `trusted_hash` equals the current definition hash.
    Trusted,
    /// No `trusted_hash` (or the project itself is not trusted).
    Untrusted,
    /// A `trusted_hash` that no longer matches: the hook changed since it was trusted.
    Modified,
    /// `enabled = false`: never runs.
    Disabled,
}

impl TrustState {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            TrustState::Managed => "managed",
            TrustState::Trusted => "trusted",
            TrustState::Untrusted => "untrusted",
            TrustState::Modified => "modified",
            TrustState::Disabled => "disabled",
        }
    }

    /// Whether Codex itself would run it without `--dangerously-bypass-hook-trust`.
    pub fn runs_when_trusted_only(self) -> bool {
        matches!(self, TrustState::Managed | TrustState::Trusted)
    }
}

/// Whether an entry will run in dsh (left out by dsh's trust: `disabled:
/// <why>`).
pub type EntryStatus = dsh_hooks::entries::EntryStatus<Off>;

/// One configured handler, for `dsh hooks list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookEntry {
    /// Codex event name (`PreToolUse`).
    pub event: String,
    /// The effective matcher (`None` when absent or ignored for this event).
    pub matcher: Option<String>,
    /// Handler type: `command`, `prompt`, `agent`, `mcp_tool`.
    pub handler: String,
    /// The command, for command handlers.
    pub command: Option<String>,
    /// Effective timeout in seconds (default 600, minimum 1, clamped per event).
    pub timeout_secs: u64,
    /// `async: true`.
    pub is_async: bool,
    /// `statusMessage`.
    pub status_message: Option<String>,
    /// `<file>#hooks.<Event>[group].hooks[handler]`.
    pub origin: String,
    /// Codex's trust key `<file>:<event_label>:<group>:<handler>`.
    pub key: String,
    /// Codex's definition hash (`sha256:…`), for command handlers.
    pub current_hash: Option<String>,
    /// Which layer.
    pub source: LayerSource,
    /// Trust state.
    pub trust: TrustState,
    /// Whether dsh runs it.
    pub status: EntryStatus,
    /// `<name>@<marketplace>` for a plugin hook (its `hooks/hooks.json` is `origin`'s file).
    pub plugin: Option<String>,
}

/// A runnable command handler (crate-internal view).
#[derive(Debug, Clone)]
pub(crate) struct Handler {
    pub event: CodexEvent,
    pub matcher_text: Option<String>,
    pub matcher: Matcher,
    pub command: String,
    pub timeout_secs: u64,
    pub is_async: bool,
    pub context_limit: Option<u64>,
    pub source_path: PathBuf,
    pub origin: String,
    pub display_order: usize,
    pub trust: TrustState,
    /// The plugin it came from, when it did.
    pub plugin: Option<CodexPluginOrigin>,
}
