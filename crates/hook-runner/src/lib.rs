//! Runs external hook commands the way Claude Code and Codex do.
//!
//! What this crate is for: start one hook process (shell or exec form) in its
//! own process group, write its stdin payload and close it, read stdout and
//! stderr concurrently up to a cap, enforce the deadline and cancellation by
//! killing the whole group, and report how it ended as a [`HookExit`] value.
//! [`HookRunner`] does this for one hook ([`HookRunner::run`]), for a batch in
//! parallel ([`HookRunner::run_all`]) or in the background
//! ([`HookRunner::spawn_detached`]), and keeps a registry of live process
//! groups so that dsh can kill them all on exit or Ctrl-C
//! ([`HookRunner::kill_all`]).
//!
//! What it is not: it never parses or interprets a hook's output (that is the
//! bridges' job), never decides anything, never deduplicates handlers (that
//! rule is dialect-specific and lives in the bridges), and never writes the
//! session log. Unix only: it relies on process groups and POSIX signals.
//!
//! The signal policy (who gets Ctrl-C, what happens to a hook's children) is
//! documented at the top of the `process` module.

mod outcome;
mod process;
mod record;
mod runner;

use std::path::PathBuf;
use std::time::Duration;

pub use outcome::{Captured, HookExit, HookRun};
pub use record::RunRecord;
pub use runner::HookRunner;

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

impl HookProgram {
    /// The binary that is actually executed: the shell for the shell form,
    /// the program for the exec form. Used in spawn-failure messages.
    pub fn executable(&self) -> String {
        match self {
            HookProgram::Shell { shell, .. } => shell.display().to_string(),
            HookProgram::Exec { program, .. } => program.clone(),
        }
    }
}

/// Everything needed to run one hook once.
#[derive(Debug, Clone)]
pub struct HookSpec {
    /// What to start.
    pub program: HookProgram,
    /// Working directory.
    pub cwd: PathBuf,
    /// Variables added to dsh's own environment (later entries win).
    pub env: Vec<(String, String)>,
    /// The bytes written to stdin before it is closed.
    pub stdin: Vec<u8>,
    /// The deadline, counted from spawn.
    pub timeout: Duration,
}

/// Tunables shared by every run of one [`HookRunner`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunnerConfig {
    /// How many bytes of each of stdout and stderr are kept. Everything past
    /// this is still read (so the hook never blocks on a full pipe) and
    /// counted in [`Captured::total_bytes`], but not stored.
    pub capture_limit: usize,
    /// After SIGTERM, how long a hook's process group gets to exit before
    /// SIGKILL. Also how long output pipes are drained after the hook itself
    /// has exited (a background process it left behind may hold them open).
    pub kill_grace: Duration,
}

impl RunnerConfig {
    /// Default for [`RunnerConfig::capture_limit`]: 1 MiB per stream.
    pub const DEFAULT_CAPTURE_LIMIT: usize = 1024 * 1024;
    /// Default for [`RunnerConfig::kill_grace`]: 500 ms.
    pub const DEFAULT_KILL_GRACE: Duration = Duration::from_millis(500);
}

impl Default for RunnerConfig {
    fn default() -> Self {
        RunnerConfig {
            capture_limit: Self::DEFAULT_CAPTURE_LIMIT,
            kill_grace: Self::DEFAULT_KILL_GRACE,
        }
    }
}
