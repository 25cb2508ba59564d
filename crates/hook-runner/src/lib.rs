//! Runs external hook commands the way Claude Code and Codex do.
//!
//! What this crate is for: start one hook process (shell or exec form) in its
//! own process group, write its stdin payload and close it, read stdout and
//! stderr concurrently up to a cap, enforce the deadline and cancellation by
//! killing the whole group, and report how it ended as a [`HookExit`] value.
//!
//! What it is not: it never parses or interprets a hook's output (that is the
//! bridges' job), never decides anything, and never writes the session log.

// API sketch; the implementation lands with the hook-runner issue.
use std::path::PathBuf;
use std::time::Duration;

/// How a hook command is started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookProgram {
    /// `SHELL -c COMMAND` (Claude Code: `/bin/sh`; Codex: `/bin/bash`).
    Shell {
        /// The shell binary.
        shell: PathBuf,
        /// The command string, passed as one argument after `-c`.
        command: String,
    },
    /// An explicit argument vector, no shell.
    Exec {
        /// The program to run (looked up on `PATH` when it has no slash).
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
}

/// Everything needed to run one hook once.
#[derive(Debug, Clone)]
pub struct HookSpec {
    /// What to start.
    pub program: HookProgram,
    /// Working directory.
    pub cwd: PathBuf,
    /// Variables added to dsh's own environment.
    pub env: Vec<(String, String)>,
    /// The bytes written to stdin before it is closed.
    pub stdin: Vec<u8>,
    /// The deadline, counted from spawn.
    pub timeout: Duration,
}

/// How a hook process ended. Distinct values, never confused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookExit {
    /// Exited on its own with this code.
    Exited(i32),
    /// Killed by a signal dsh did not send.
    Signaled(i32),
    /// Killed by dsh at its deadline.
    TimedOut,
    /// Killed by dsh because the guarded work was cancelled.
    Cancelled,
    /// Never ran.
    SpawnFailed(String),
}

/// One captured output stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    /// The first bytes, up to the cap.
    pub bytes: Vec<u8>,
    /// Everything the process wrote, counted even past the cap.
    pub total_bytes: u64,
}
