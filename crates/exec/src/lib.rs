//! `dsh exec`: Codex's non-interactive command, so that scripts reading
//! `codex exec --json` and applications on the Codex SDK
//! (`@openai/codex-sdk`, through `codexPathOverride`) run on dsh unchanged.
//!
//! - [`ExecArgs`]: Codex's `exec` command line (`--json` /
//!   `--experimental-json`, `-m`, `-c key=value`, `--sandbox`, `-C`,
//!   `--output-schema`, `--output-last-message`, `--skip-git-repo-check`,
//!   `resume ID | --last`).
//! - [`overrides`]: the `-c key=value` overrides dsh understands, and the
//!   refusals of what it cannot honour (a sandbox it cannot enforce).
//! - [`events`]: Codex's JSONL events (`thread.started`, `turn.*`,
//!   `item.*` with Codex's item types) and the translation of dsh's session
//!   events into them.
//! - [`run`]: one turn of a dsh session through dsh-core, printed as Codex
//!   prints it (JSONL on stdout, or people's text on stderr and the final
//!   message on stdout).
//!
//! What it is not: no session logic of its own (dsh-core resolves and
//! assembles the session, dsh-agent runs it: hooks, rules and the log are
//! those of every dsh session), no sandbox (dsh cannot confine a command, so
//! a mode that promises one is refused), and not Codex's interactive
//! terminal or app-server.

// File system calls go through fs-err (clippy.toml `disallowed-methods`).
#![cfg_attr(not(test), warn(clippy::disallowed_methods))]
// A new variant of our own enums must be handled where it is matched.
#![cfg_attr(not(test), warn(clippy::wildcard_enum_match_arm))]

mod args;
pub mod events;
mod human;
pub mod overrides;
mod run;

pub use args::{ExecArgs, ExecCommand, SandboxMode};
pub use run::run;
