//! Runs users' existing GitHub Copilot CLI hooks unchanged, as Copilot CLI
//! 1.0 does: dsh's fourth hook dialect (record id `copilot`).
//!
//! What this crate is for: discovering Copilot's hook files
//! (`~/.copilot/hooks/*.json`, inline `hooks` in `~/.copilot/settings.json`,
//! the repository's `.github/hooks/*.json` and `.github/copilot/settings*.json`)
//! in Copilot's order, building its stdin payloads byte for byte in both
//! modes (camelCase events with Copilot's payloads, PascalCase events with
//! Claude-style payloads), reading hook output with Copilot's exit-code
//! rules, producing the exact texts Copilot shows the model, and mapping it
//! onto dsh's canonical seams through the shared bridge plugin
//! (`dsh_hooks::BridgePlugin`). The translation is pure ([`config`],
//! [`payload`], [`output`], [`translate`], [`tools`], [`matcher`],
//! [`diff`]);
//! `dialect` describes Copilot to the shared hook engine (`dsh-hooks`);
//! [`plugin`] plans each seam's events.
//!
//! What it is not: it does not read a repository's `.claude/settings*.json`
//! (Copilot does; dsh leaves that file to the Claude Code dialect so each
//! hook fires once), does not implement Copilot's folder trust (dsh's own
//! project trust gates repository hooks), and does not write Copilot's
//! session-state files. See `docs/reference/dialect-copilot.md`.

// File system calls go through fs-err (clippy.toml `disallowed-methods`).
#![cfg_attr(not(test), warn(clippy::disallowed_methods))]
// A new variant of our own enums must be handled where it is matched.
#![cfg_attr(not(test), warn(clippy::wildcard_enum_match_arm))]

pub mod config;
mod dialect;
pub mod diff;
pub mod event;
pub mod lint;
pub mod matcher;
pub mod mcp_call;
pub mod output;
pub mod payload;
pub mod plugin;
mod registered;
mod test_payload;
pub mod tools;
pub mod translate;

pub use config::{CopilotConfig, CopilotDiscovery, copilot_vars, load};
pub use event::{CopilotEvent, Mode};
pub use registered::CopilotDialect;
