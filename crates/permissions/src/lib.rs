//! dsh's permission model, as Claude Code has it: modes, rule syntax and
//! matching, layer precedence, workspace trust, which calls need approval
//! in each mode, and the texts the model gets. Pure functions (apart from
//! looking up where a path points, [`rule::real_path`]); the tool pipeline
//! applies them.
//!
//! Paths are judged where they point: deny and ask rules match a path as
//! written or resolved, allow rules and the inside-the-working-directories
//! shortcut only resolved ([`rule::PathJudgement`]).
//!
//! It also layers a session's permissions from its settings files and
//! command line ([`layering`]) and says which rule an approval answer adds
//! ([`always`]), so every front end offers the same answers.
//!
//! What it is not: it runs no tool and asks no one; hooks, prompts and the
//! rest of the session's assembly are other crates' business.

// File system calls go through fs-err (clippy.toml `disallowed-methods`).
#![cfg_attr(not(test), warn(clippy::disallowed_methods))]
// A new variant of our own enums must be handled where it is matched.
#![cfg_attr(not(test), warn(clippy::wildcard_enum_match_arm))]

pub mod always;
pub mod layer;
pub mod layering;
pub mod mode;
pub mod plugin;
pub mod policy;
pub mod readonly;
pub mod rule;
pub mod store;
pub mod texts;

/// Whether git's read-only commands may run a program the repository
/// configures: dsh-trust's, which the executed-file scan reads too.
pub use dsh_trust::gitconfig;

/// The shell parse lives in `dsh-shell`; these names keep its old paths.
pub use dsh_shell as shell;
pub use dsh_shell::compound;

pub use layer::{Behavior, Layer, LayerError, Source, SourcedRule};
pub use mode::{Mode, UnknownMode};
pub use plugin::PermissionsPlugin;
pub use policy::{Decider, DenyHooks, Permissions, PromptSurface, Trust, Verdict};
pub use rule::{CallInput, PathContext, Rule, RuleSyntaxError};

#[cfg(test)]
mod round3_tests;
#[cfg(test)]
mod shell_tests;
#[cfg(test)]
mod symlink_tests;
#[cfg(test)]
mod tests;
