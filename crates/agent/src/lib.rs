//! dsh's agent loop.
//!
//! What this crate is for: running a session — the inbox of queued sends
//! (one send, one turn), the session-start seam before turn 1, prompt-submit
//! policy for each claimed send, the step loop (derive messages → model
//! request → assistant message → the batch of tool calls through the
//! registry → results → the batch's context FIFO), turn continuation, and
//! every way a turn ends. Also the scripted model and the fixture format
//! that `dsh replay` and the snapshot tests use, and the prompt layer:
//! project instruction files in the system prompt
//! ([`instructions`]), the `/name` command parser and custom-command catalog
//! ([`commands`]), and the seams they fire ([`ProjectContext`]).
//!
//! What it is not: it does not spawn hook processes or know any external
//! hook dialect (bridges are plugins), does not speak HTTP (providers
//! implement `dsh_model::Model`), and renders nothing for people.

// File system calls go through fs-err (clippy.toml `disallowed-methods`).
#![cfg_attr(not(test), warn(clippy::disallowed_methods))]
// A new variant of our own enums must be handled where it is matched.
#![cfg_attr(not(test), warn(clippy::wildcard_enum_match_arm))]

mod agent;
pub mod commands;
mod compaction;
mod fixture;
mod frontmatter;
pub mod instructions;
pub mod mentions;
mod prompt_layer;
mod replay;
mod scripted;
mod step;
mod subagent;

pub use agent::*;
pub use compaction::{
    AutoCompact, CompactionResult, DEFAULT_CONTEXT_WINDOW, DEFAULT_THRESHOLD,
    default_context_window, estimate_tokens, parse_compact_command,
};
pub use fixture::*;
pub use prompt_layer::ProjectContext;
pub use replay::*;
pub use scripted::*;
pub use subagent::GENERAL_PURPOSE_PROMPT;
