//! dsh's canonical interception surface.
//!
//! What this crate is for: one small, exhaustive decision type per seam
//! (session start, prompt submit, tool pre-execute, guards, the execute
//! wrapper, post-execute, result observation, turn continuation, the
//! session-scoped notifications, and seed 004's loop seams: the message list
//! before each request, the provider request, stop-after-step,
//! prepare-next-step and turn-failed), the frozen identity of a tool execution,
//! and the [`Plugin`] trait through which a native hook — or a bridge that
//! translates Claude Code or Codex hooks — programs against those seams.
//!
//! What it is not: it runs no loop, spawns no processes and writes no log.
//! The agent fires the seams; the tool registry owns the tool pipeline;
//! bridges translate external protocols onto these types.

// File system calls go through fs-err (clippy.toml `disallowed-methods`).
#![cfg_attr(not(test), warn(clippy::disallowed_methods))]
// A new variant of our own enums must be handled where it is matched.
#![cfg_attr(not(test), warn(clippy::wildcard_enum_match_arm))]

mod compaction;
mod context;
mod decisions;
mod elicitation;
mod execution;
mod ids;
mod lifecycle;
mod loop_seams;
mod permission;
mod plugin;
mod prompting;
mod subagent;
mod tasks;

pub use compaction::*;
pub use context::*;
pub use decisions::*;
pub use elicitation::*;
pub use execution::*;
pub use ids::*;
pub use lifecycle::*;
pub use loop_seams::*;
pub use permission::*;
pub use plugin::*;
pub use prompting::*;
pub use subagent::*;
pub use tasks::*;

pub use tokio_util::sync::CancellationToken;
