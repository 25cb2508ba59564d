//! Payloads of the worktree and working-directory events: WorktreeCreate,
//! WorktreeRemove, DirectoryAdded.

use serde::Serialize;

use super::{Common, Head};

/// `WorktreeCreate`'s stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorktreeCreateInput<'a> {
    /// The bare head (fired before any prompt, in the original project).
    #[serde(flatten)]
    pub head: Head<'a>,
    /// The name given to `--worktree`.
    pub name: &'a str,
}

/// `WorktreeCreate` (`ev_worktree`, `ev_worktree_path`): the bare head,
/// then `name`.
pub fn worktree_create<'a>(common: &'a Common, name: &'a str) -> WorktreeCreateInput<'a> {
    WorktreeCreateInput {
        head: common.head("WorktreeCreate"),
        name,
    }
}

/// `WorktreeRemove`'s stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorktreeRemoveInput<'a> {
    /// The head with the prompt id (its `cwd` is the worktree).
    #[serde(flatten)]
    pub head: Head<'a>,
    /// The worktree being removed.
    pub worktree_path: &'a str,
}

/// `WorktreeRemove` (`ev_worktree_remove`): the head with the prompt id,
/// then `worktree_path`.
pub fn worktree_remove<'a>(common: &'a Common, worktree_path: &'a str) -> WorktreeRemoveInput<'a> {
    WorktreeRemoveInput {
        head: common.head_prompt("WorktreeRemove"),
        worktree_path,
    }
}

/// `DirectoryAdded`'s stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DirectoryAddedInput<'a> {
    /// The head with the prompt id.
    #[serde(flatten)]
    pub head: Head<'a>,
    /// The directory added, absolute.
    pub directory: &'a str,
    /// `slash_command` (`/add-dir`).
    pub source: &'a str,
}

/// `DirectoryAdded` (`ev_add_dir_tui`): the head with the prompt id, then
/// `directory` and `source`.
pub fn directory_added<'a>(
    common: &'a Common,
    directory: &'a str,
    source: &'a str,
) -> DirectoryAddedInput<'a> {
    DirectoryAddedInput {
        head: common.head_prompt("DirectoryAdded"),
        directory,
        source,
    }
}
