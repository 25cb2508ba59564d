//! Runs external hook commands the way Claude Code and Codex do.
//!
//! What this crate is for: start one hook process (shell or exec form) in its
//! own process group, write its stdin payload and close it, read stdout and
//! stderr concurrently up to a cap, enforce the deadline and cancellation by
//! killing the whole group, and report how it ended as a [`HookExit`] value;
//! or, for an HTTP hook ([`HookProgram::Http`]), POST the payload under the
//! same deadline, cancellation and caps and report the response.
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
//! The processes themselves go through one public layer, [`ProcessLayer`]
//! (also used by the `bash` tool): own process group, stdin, bounded
//! concurrent capture, deadline, cancellation, group kill, a registry for
//! `kill_all`, children that die with dsh (a watchdog process, see the
//! `watchdog` module), secrets scrubbed from their environment, and a
//! concurrency budget sized from the fd limit. The signal policy (who gets
//! Ctrl-C, what happens to a hook's children) is documented at the top of
//! the `process` module; every signal goes through [`signals`].

// File system calls go through fs-err (clippy.toml `disallowed-methods`).
#![cfg_attr(not(test), warn(clippy::disallowed_methods))]
// A new variant of our own enums must be handled where it is matched.
#![cfg_attr(not(test), warn(clippy::wildcard_enum_match_arm))]

mod http;
mod outcome;
mod process;
mod record;
mod runner;
pub mod signals;
pub mod vars;
mod watchdog;

use std::path::PathBuf;
use std::time::Duration;

pub use http::{HttpHook, interpolate_header};
pub use outcome::{Captured, Completeness, DshFault, HookExit, HookRun};
pub use process::{
    KILL_SETTLE, OutputSink, ProcessCommand, ProcessExit, ProcessLayer, ProcessRun, ProcessSpec,
    ServiceGroup, StdinSource, default_scrubbed_env,
};
pub use record::RunRecord;
pub use runner::{HookRunner, LaunchCheck};

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
    /// An HTTP hook: the stdin payload is POSTed to a URL and the response
    /// body is the hook's stdout (see [`HttpHook`]).
    Http(HttpHook),
}

impl HookProgram {
    /// The binary that is actually executed: the shell for the shell form,
    /// the program for the exec form. Used in spawn-failure messages.
    /// For an HTTP hook, its URL.
    pub fn executable(&self) -> String {
        match self {
            HookProgram::Shell { shell, .. } => shell.display().to_string(),
            HookProgram::Exec { program, .. } => program.clone(),
            HookProgram::Http(hook) => hook.url.clone(),
        }
    }

    /// The process-layer command for this program; `None` for an HTTP hook,
    /// which starts no process.
    pub fn command(&self) -> Option<ProcessCommand> {
        match self {
            HookProgram::Shell { shell, command } => {
                Some(ProcessCommand::shell(shell.as_os_str(), command.clone()))
            }
            HookProgram::Exec { program, args } => {
                Some(ProcessCommand::exec(program, args.clone()))
            }
            HookProgram::Http(_) => None,
        }
    }
}

/// Everything needed to run one hook once.
#[derive(Debug, Clone)]
pub struct HookSpec {
    /// What to start.
    pub program: HookProgram,
    /// Working directory (unused by HTTP hooks).
    pub cwd: PathBuf,
    /// Variables added to dsh's own environment (later entries win; unused
    /// by HTTP hooks, whose headers read dsh's environment).
    pub env: Vec<(String, String)>,
    /// The bytes written to stdin before it is closed (for an HTTP hook, the
    /// request body).
    pub stdin: Vec<u8>,
    /// The deadline, counted from spawn.
    pub timeout: Duration,
}

/// Tunables shared by every run of one [`HookRunner`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunnerConfig {
    /// How many bytes of stderr are kept, and how many bytes of each stream
    /// the session log stores ([`RunRecord::of`], with a marker when cut).
    /// Everything past what is kept is still read (so the hook never blocks
    /// on a full pipe) and counted in [`Captured::total_bytes`].
    pub capture_limit: usize,
    /// How many bytes of stdout are kept for the bridges to parse a decision
    /// from; larger than `capture_limit` so that dsh's own log cap never
    /// turns a long deny into "no decision". Past this the capture reports
    /// [`Completeness::Cut`] and bridges fail closed.
    pub decision_limit: usize,
    /// After SIGTERM, how long a hook's process group gets to exit before
    /// SIGKILL. Also how long output pipes are drained after the hook itself
    /// has exited (a background process it left behind may hold them open).
    pub kill_grace: Duration,
    /// Variables removed from every hook's environment (and from the `bash`
    /// tool's, when it shares the runner's [`ProcessLayer`]): dsh's API key
    /// variables by default; wiring adds the provider's `api_key_env`.
    pub scrub_env: Vec<String>,
    /// Variables every command hook starts with, under its own (a hook's
    /// `env` wins): wiring sets Python's bytecode cache outside the
    /// project here.
    pub base_env: Vec<(String, String)>,
}

impl RunnerConfig {
    /// Default for [`RunnerConfig::capture_limit`]: 1 MiB per stream.
    pub const DEFAULT_CAPTURE_LIMIT: usize = 1024 * 1024;
    /// Default for [`RunnerConfig::decision_limit`]: 16 MiB.
    pub const DEFAULT_DECISION_LIMIT: usize = 16 * 1024 * 1024;
    /// Default for [`RunnerConfig::kill_grace`]: 500 ms.
    pub const DEFAULT_KILL_GRACE: Duration = Duration::from_millis(500);
}

impl Default for RunnerConfig {
    fn default() -> Self {
        RunnerConfig {
            capture_limit: Self::DEFAULT_CAPTURE_LIMIT,
            decision_limit: Self::DEFAULT_DECISION_LIMIT,
            kill_grace: Self::DEFAULT_KILL_GRACE,
            scrub_env: default_scrubbed_env(),
            base_env: Vec::new(),
        }
    }
}
