//! dsh-tui: dsh's terminal front end. The interactive session (line editor,
//! streamed Markdown and tool rendering, slash commands, the approval
//! prompt, steering typed lines into a running turn), `dsh log` (a session
//! log rendered for people) and `dsh status` (what a session here would
//! load), plus the argument summaries `dsh -p` shares.
//!
//! Not here: session assembly (`dsh-core`), the session store
//! (`dsh_core::sessions`), stdout/stderr and signals (`dsh-stdio`), the hook
//! tooling behind `/hooks` and `/permissions` (the binary passes it in as
//! [`interactive::HookActions`]), argument parsing and dispatch (the `dsh`
//! binary).

// File system calls go through fs-err (clippy.toml `disallowed-methods`).
#![cfg_attr(not(test), warn(clippy::disallowed_methods))]
// A new variant of our own enums must be handled where it is matched.
#![cfg_attr(not(test), warn(clippy::wildcard_enum_match_arm))]

pub mod approval_prompt;
mod input;
pub mod interactive;
pub mod log_view;
pub mod picker;
mod prompt_loop;
mod questions;
mod restart;
mod slash_commands;
pub mod status_cmd;
pub mod steer;
pub mod terminal;
pub mod tui;
mod worktree_dirs;
