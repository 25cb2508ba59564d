//! dsh-core: what a dsh session is made of, resolved once for every front
//! end (the terminal, `dsh -p`, `dsh replay`, `dsh acp`, `dsh hooks
//! test|replay` and `dsh status`).
//!
//! - [`Env`]: HOME, DSH_HOME, CODEX_HOME and the provider variables, read
//!   once (an empty value is unset everywhere).
//! - [`DshConfig`]: `$DSH_HOME/config.toml`, read once.
//! - [`SessionFlags`]: the command-line flags of every subcommand that
//!   starts a session.
//! - [`SessionSpec::resolve`]: hooks of both dialects with plugins and the
//!   trust decision, permission layers, MCP servers with their consent,
//!   instructions, compaction, provider and model.
//! - [`Workspace::resolve`]: a directory's configuration for the commands
//!   that read it without starting a session (`dsh hooks
//!   list|check|trust|untrust`, `dsh mcp list`, `/hooks`): the same
//!   sources, reader and trust decision.
//! - [`system_prompt`]: dsh's versioned system prompt with tool guidance
//!   and an environment block.
//! - [`assemble`]: the spec into a running session (hooks, permissions, MCP
//!   servers, log), from which a front end builds its agent.
//! - [`Session`]: the one owner of a running session's agent, hook runner
//!   and MCP servers, with one shutdown path and a guard that kills its
//!   process groups; [`block_on`] and [`SignalWatch`] for front ends.
//!
//! Not here: presentation (terminal rendering, ACP translation, output
//! formats), how a front end asks its user (it answers the spec's
//! questions), and the binary's dispatch. This crate depends on library
//! crates only.

// File system calls go through fs-err (clippy.toml `disallowed-methods`).
#![cfg_attr(not(test), warn(clippy::disallowed_methods))]
// A new variant of our own enums must be handled where it is matched.
#![cfg_attr(not(test), warn(clippy::wildcard_enum_match_arm))]

mod assemble;
mod compact;
mod config;
pub mod dialects;
mod env;
mod error;
mod flags;
mod hooks;
pub mod mcp;
mod one_turn;
pub mod perms;
mod session;
pub mod sessions;
mod spec;
mod status;
pub mod system_prompt;
pub mod trust;
mod trust_question;
mod workspace;
pub mod worktree;

pub use assemble::{AgentOptions, Assembled, HookBridges, LogTarget, assemble};
pub use config::{DshConfig, config_keys};
/// Why a Claude Code settings layer does not apply ([`Workspace::settings`]).
pub use dsh_files::settings::DisabledReason;
/// The runner every hook and tool process of a session goes through
/// ([`Session::runner`]).
pub use dsh_hook_runner::HookRunner;
/// Whether opening a session log waits for another writer ([`LogTarget`]).
pub use dsh_session::LockWait;
pub use env::{Env, current_dir};
pub use error::{Error, Result, ResultExt};
pub use flags::SessionFlags;
pub use hooks::{HookConfigs, HookSources, system_prompt as replay_system_prompt};
pub use one_turn::{OneTurn, TurnRun, run_one_turn};
pub use perms::SessionMode;
pub use session::{FrontEnd, ProcessGuard, Session, SignalWatch, block_on};
pub use spec::{HookToolsTrust, Inputs, McpConsent, RememberedServers, SessionSpec, TrustPolicy};
pub use status::Status;
pub use trust_question::{ProjectAnswer, ProjectOffer};
pub use workspace::{PermissionView, Workspace, WorkspaceInputs};
