//! dsh's tool registry, the five-phase tool pipeline, and the built-in tools.
//!
//! What this crate is for: sealing a proposed call into a frozen
//! [`ToolExecution`](dsh_seams::ToolExecution), running it through
//! `pre-execute → guards → execute wrappers → dispatch → post-execute →
//! finalize_content → result`, normalizing every failure into an `is_error`
//! outcome, and the built-in tools (`bash`, `read`, `write`, `edit`, `glob`,
//! `grep`) with real behaviour, and how a call is described to people
//! ([`describe()`]).
//!
//! What it is not: it does not run the agent loop, talk to a model, or write
//! the session log; the agent appends what the registry reports.

// File system calls go through fs-err (clippy.toml `disallowed-methods`).
#![cfg_attr(not(test), warn(clippy::disallowed_methods))]
// A new variant of our own enums must be handled where it is matched.
#![cfg_attr(not(test), warn(clippy::wildcard_enum_match_arm))]

pub mod builtin;
pub mod change;
mod concurrency;
mod describe;
pub mod map_or;
mod tool;

pub use concurrency::Concurrency;
pub use describe::{TITLE_CHARS, ToolDescription, ToolKind, ToolPath, describe};
pub use tool::*;
mod registry;
pub mod schema;

pub use registry::*;
