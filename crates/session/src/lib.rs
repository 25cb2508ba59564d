//! dsh's durable session log.
//!
//! What this crate is for: the fact log of a session as JSONL, one event per
//! line. [`SessionLog::append`] enforces the log's structural invariants
//! (header first, every other event inside an open turn except session-scoped
//! hook records, balanced turns, tool results after their batch of calls,
//! gap-free `seq`) and writes each accepted event with a single write so an
//! acknowledged event survives `kill -9`. [`load`] reads a log back,
//! detecting and dropping a torn last line instead of parsing it as data, and
//! [`derive_messages`] projects the model-facing conversation.
//!
//! [`safe_fs`] is the one way dsh writes a whole state file (trust store,
//! `.claude/settings.local.json`): fresh temp file, no symlinks, fixed mode,
//! atomic rename.
//!
//! [`store`] is the session store under `$DSH_HOME/sessions`: listing,
//! summaries and the one id-prefix resolver.
//!
//! What it is not: it decides nothing about a session and runs nothing; the
//! agent loop is the only writer.

// File system calls go through fs-err (clippy.toml `disallowed-methods`).
#![cfg_attr(not(test), warn(clippy::disallowed_methods))]
// A new variant of our own enums must be handled where it is matched.
#![cfg_attr(not(test), warn(clippy::wildcard_enum_match_arm))]

mod id;
mod invariants;
mod line;
mod lock;
mod log;
mod messages;
pub mod safe_fs;
pub mod store;

pub use id::{MAX_SESSION_ID_LEN, SessionIdError, validate_session_id};
pub use invariants::InvariantError;
pub use lock::{LockError, LockWait, SessionLock};
pub use log::*;
pub use messages::{
    compacted_summary_message, derive_messages, derive_messages_of, derive_plain, summary_text,
};
pub use safe_fs::{create_private_dir, write_atomic};
