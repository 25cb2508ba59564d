//! The interactive terminal: the line editor, Markdown and hook
//! rendering helpers, slash commands and the status line (`@path` mentions
//! are `dsh_agent::mentions`).
//!
//! `interactive.rs` owns the session loop and `terminal.rs` the output
//! stream; this tree holds what they call.

pub mod diff;
pub mod editor;
pub mod hook_line;
pub mod modes;
pub mod render;
pub mod slash;
pub mod status;
pub mod text;
pub mod usage;
