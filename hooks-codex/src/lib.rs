//! Runs users' existing Codex hooks unchanged, exactly as Codex 0.169 does.
//!
//! What this crate is for: discovering Codex's hook configuration (every
//! layer: managed, `$CODEX_HOME`, the project's `.codex/`; `hooks.json` and
//! `[hooks]` in `config.toml`; trust state by Codex's own definition hash),
//! building Codex's stdin payloads byte-for-byte, interpreting hook output
//! with Codex's strict rules and run classification, and mapping all of it
//! onto dsh's canonical seams as one [`dsh_seams::Plugin`]
//! ([`CodexConfig::into_plugin`]). The translation is pure ([`payload`],
//! [`output`], [`translate`], [`tools`], [`spill`], [`matcher`]); `dialect` describes
//! Codex to the shared hook engine (`dsh-hooks`), which records and runs
//! every handler; [`plugin`] plans each seam as a flow for the shared
//! bridge plugin (`dsh_hooks::BridgePlugin`), which fires it and marks
//! the winner the translation names.
//!
//! What it is not: it shares the runner with the Claude Code bridge but none
//! of its interpretation; it does not write a Codex rollout file
//! (`transcript_path` is `null`), does not implement dsh's own trust model,
//! and does not fire events dsh has no equivalent for (compaction,
//! sub-agents). See `README.md` for the full status table.

// File system calls go through fs-err (clippy.toml `disallowed-methods`).
#![cfg_attr(not(test), warn(clippy::disallowed_methods))]
// A new variant of our own enums must be handled where it is matched.
#![cfg_attr(not(test), warn(clippy::wildcard_enum_match_arm))]

pub mod config;
mod dialect;
pub mod event;
mod lenient;
pub mod lint;
pub mod matcher;
pub mod output;
pub mod payload;
pub mod plugin;
pub mod plugins;
mod registered;
pub mod spill;
pub mod tools;
pub mod translate;
pub mod trust_identity;

pub use config::{
    CodexConfig, CodexDiscovery, ConfigError, EntryStatus, HookEntry, LayerSource, NotifyConfig,
    Off, TrustState, load,
};
pub use event::CodexEvent;
pub use plugin::TrustPolicy;
pub use plugins::CodexPluginOrigin;
pub use registered::CodexDialect;
pub use trust_identity::TrustIdentity;
