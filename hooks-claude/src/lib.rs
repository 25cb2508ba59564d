//! Runs users' existing Claude Code hooks unchanged on dsh's canonical seams,
//! byte-for-byte as Claude Code 2.1.328 does.
//!
//! What this crate is for: discovering and merging Claude Code settings
//! files ([`load`]), matching hooks the way Claude Code matches them
//! ([`Matcher`]), building each event's stdin payload in Claude Code's exact
//! key order ([`payload`]), interpreting each hook's exit code, stdout and
//! stderr into typed decisions with Claude Code's exact model-facing texts
//! ([`output`]), and wiring all of it onto the seams as one
//! [`dsh_seams::Plugin`] ([`ClaudeConfig::into_plugin`]) that records every
//! hook run as `hook/invoked` + `hook/result` and keeps a Claude-format
//! transcript at `transcript_path`.
//!
//! What it is not: it does not spawn processes itself (that is
//! `dsh-hook-runner`'s job), it never writes the session log directly (it
//! hands events to the session sink), and it does not implement Claude Code
//! features dsh lacks (compaction, MCP, prompt/agent hooks) — the
//! events and handler types it cannot honour are reported as start-up
//! notices, see `README.md` for the full status table.
//!
//! Ground truth: Claude Code 2.1.328's documented and captured behaviour
//! (`docs/sources.md`); where they disagree the captures win.

// File system calls go through fs-err (clippy.toml `disallowed-methods`).
#![cfg_attr(not(test), warn(clippy::disallowed_methods))]
// A new variant of our own enums must be handled where it is matched.
#![cfg_attr(not(test), warn(clippy::wildcard_enum_match_arm))]

pub mod agents;
pub mod config;
mod dialect;
pub mod envfile;
pub mod events;
pub mod if_rule;
pub mod lint;
pub mod matcher;
pub mod output;
pub mod payload;
pub mod plugin;
pub mod plugins;
mod registered;
mod rules;
pub mod sdk;
pub mod settings_env;
mod settings_wire;
pub mod transcript;
pub mod trust_identity;

pub use config::{
    ClaudeConfig, ClaudeDiscovery, ClaudeOptions, ConfigError, HookEntry, HookHandler, load,
    load_with_options, project_slug,
};
pub use events::HookEvent;
pub use matcher::Matcher;
pub use payload::McpServerTag;
pub use plugins::{PluginOrigin, PluginScope};
pub use registered::ClaudeDialect;
pub use sdk::{HookCallbacks, SdkHook, SdkHookSet};
pub use trust_identity::TrustIdentity;
