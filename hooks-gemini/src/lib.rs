//! Runs users' existing Gemini CLI hooks unchanged, as Gemini CLI 0.61 does.
//!
//! What this crate is for: discovering Gemini's hook configuration
//! (`~/.gemini/settings.json` then the project's `.gemini/settings.json`,
//! `hooksConfig`, Gemini's own trusted folders), building Gemini's stdin
//! payloads byte-for-byte, interpreting hook output with Gemini's exit-code
//! and merge rules, producing the exact texts Gemini shows the model, and
//! mapping all of it onto dsh's canonical seams through the shared bridge
//! plugin (`dsh_hooks::BridgePlugin`). The translation is pure
//! ([`payload`], [`output`], [`translate`], [`tools`], [`matcher`]);
//! `dialect` describes Gemini to the shared hook engine (`dsh-hooks`),
//! which records and runs every handler; [`plugin`] plans each seam's
//! events and maps the merged outcomes onto the seams. Payloads stay typed
//! until a hook's stdin is written; hook output and settings files are
//! read through serde wire structs, each key on its own (a key of the
//! wrong type counts as absent, as in Gemini's JavaScript). Only arbitrary
//! JSON (tool arguments, the parsed output kept for the log) stays
//! `serde_json::Value`.
//!
//! What it is not: it shares the runner with the Claude Code and Codex
//! bridges but none of their interpretation; it does not write Gemini's
//! chat-recording file, does not implement dsh's own trust model (it only
//! reports Gemini's trusted-folder verdict), and does not copy Gemini's
//! misbehaviours (a headless `ask` that hangs, an AfterAgent deny loop
//! without bound). See `docs/reference/dialect-gemini.md` for the status
//! table.

// File system calls go through fs-err (clippy.toml `disallowed-methods`).
#![cfg_attr(not(test), warn(clippy::disallowed_methods))]
// A new variant of our own enums must be handled where it is matched.
#![cfg_attr(not(test), warn(clippy::wildcard_enum_match_arm))]

pub mod config;
mod dialect;
pub mod event;
pub mod lint;
pub mod llm;
pub mod matcher;
pub mod model_events;
pub mod output;
pub mod payload;
pub mod plugin;
mod registered;
pub mod tail;
pub mod tools;
pub mod translate;
pub mod trust_identity;
mod wire;

pub use config::{ConfigError, GeminiConfig, GeminiDiscovery, load};
pub use event::GeminiEvent;
pub use registered::GeminiDialect;
pub use trust_identity::TrustIdentity;
