//! dsh-watch: the session's file watcher.
//!
//! What this crate is for: [`Watcher`] watches a set of files (their
//! directories, through the maintained `notify` crate) and, each time it is
//! asked, says which of them were added, changed or removed since it last
//! looked: one [`FileChange`] per file however many writes it saw.
//! [`WatchPlugin`] is the session's owner of one: a pipeline listener that
//! starts it with the session, answers the tool pipeline's drain point
//! ([`dsh_seams::Plugin::session_changes`]) with the settings files and the
//! files listeners asked for ([`dsh_seams::SessionEnv::watch_names`] and
//! friends), and drops it when the session ends: no thread or inotify
//! descriptor outlives the session.
//!
//! What it is not: it neither decides what a change means nor re-reads any
//! file; the seams' listeners do (the Claude bridge's ConfigChange and
//! FileChanged hooks, the permission stage's rules).

mod plugin;
mod watcher;

pub use plugin::WatchPlugin;
pub use watcher::{WatchError, Watcher};

pub use dsh_seams::{FileChange, FileChangeKind};
