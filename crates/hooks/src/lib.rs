//! The hook engine both bridges share.
//!
//! What this crate is for: the dispatch loop every external hook dialect
//! needs — record `hook/invoked` for each selected handler in configuration
//! order, run the awaited ones in parallel (cancelled with the turn), start
//! detached ones and harvest them later, record `hook/result` in
//! configuration order with the dialect's typed decision, mark which run's
//! decisive answer won, show the runs' notices, and write spill files.
//!
//! It also owns the seam orchestration ([`Engine::dispatch`], [`Rules`]):
//! the run loop over the selected handlers (parallel or chained, stopping
//! where the dialect says), serializing the payload when it is written to
//! a hook, winner marks and records, so a bridge only builds payloads and
//! translates readings into seam decisions.
//!
//! What it is not: it knows no dialect. Discovery and precedence, wire
//! types, payloads, the output interpreter and merge rules, and every
//! model-facing string stay in the bridges (`hooks-claude`, `hooks-codex`),
//! which implement [`Dialect`].
//!
//! The seams themselves are run once too: [`BridgePlugin`] is the
//! `dsh_seams::Plugin` of every dialect that implements [`Bridge`], whose
//! per-event functions plan each seam's [`Flow`] (payload, aggregate,
//! translate) while the plugin fires, marks, records and keeps state.
//!
//! Dialects plug in through [`registry::HookDialect`] (discovery, trust
//! identities, lint, vocabulary, the session plugin) and are listed in a
//! [`registry::Registry`] that core iterates.
//!
//! It also holds the dialect-neutral half of `dsh hooks check`
//! ([`lint`]): the finding type, the walk over a hook file's event table
//! and the shell-command checks; each bridge adds its schema and discovery.

// File system calls go through fs-err (clippy.toml `disallowed-methods`).
#![cfg_attr(not(test), warn(clippy::disallowed_methods))]
// A new variant of our own enums must be handled where it is matched.
#![cfg_attr(not(test), warn(clippy::wildcard_enum_match_arm))]

mod bridge;
mod dispatch;
mod engine;
pub mod entries;
pub mod json_file;
pub mod lenient;
pub mod lint;
pub mod names;
pub mod position;
pub mod project_settings;
pub mod registry;
pub mod spill;
pub mod verdict;
pub mod wire;

pub use bridge::*;
pub use dispatch::*;
pub use engine::*;
