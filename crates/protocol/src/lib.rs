//! Plain data shared by every dsh crate.
//!
//! What this crate is for: the serde types that cross crate and process
//! boundaries — model-facing messages, tool calls, the session-log events of
//! the README's "The session log", and the recorded model requests.
//!
//! What it is not: it performs no I/O, spawns nothing, depends on no runtime
//! and enforces no invariants. Appending with invariants is `dsh-session`'s
//! job; deciding anything is the seams' and the agent's.

// File system calls go through fs-err (clippy.toml `disallowed-methods`).
#![cfg_attr(not(test), warn(clippy::disallowed_methods))]
// A new variant of our own enums must be handled where it is matched.
#![cfg_attr(not(test), warn(clippy::wildcard_enum_match_arm))]

mod events;
mod exact_json;
mod hooks;
mod messages;
mod permission_update;
mod tool_origin;

pub use events::*;
pub use exact_json::ExactJson;
pub use hooks::*;
pub use messages::*;
pub use permission_update::*;
pub use tool_origin::*;
