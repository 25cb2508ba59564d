//! The process edge every `dsh` front end shares: writes to stdout and
//! stderr that survive a reader going away, the exit statuses a run ends
//! with, and the signals (SIGINT, SIGTERM, SIGHUP) that stop a session.
//!
//! What it is not: no session logic and no rendering. The front-end crates
//! (the terminal, ACP, hook tooling) and the binary print through it so that
//! a closed pipe or a signal ends every one of them the same way.

// File system calls go through fs-err (clippy.toml `disallowed-methods`).
#![cfg_attr(not(test), warn(clippy::disallowed_methods))]

pub mod signals;
pub mod stdio;
