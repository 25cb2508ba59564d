//! The worktree-removal and directory-added seams, fired by the front end
//! (the end of a session that made its worktree, `/add-dir`).

use std::panic::AssertUnwindSafe;
use std::path::Path;

use dsh_seams::{CancellationToken, DirectoryAddition, TurnControl, WorktreeRemoval};
use futures::FutureExt;

use super::Agent;

impl Agent {
    /// Fires the worktree-removal seam for `path`: the first listener that
    /// removes it answers.
    pub async fn remove_worktree(&self, path: &Path) -> WorktreeRemoval {
        let ctx = self.context(None, CancellationToken::new(), TurnControl::default());
        for plugin in self.registry.plugins() {
            match AssertUnwindSafe(plugin.worktree_remove(&ctx, path))
                .catch_unwind()
                .await
            {
                Ok(WorktreeRemoval::NotHandled) => {}
                Ok(WorktreeRemoval::Removed) => return WorktreeRemoval::Removed,
                Err(_) => tracing::error!("worktree-remove listener `{}` panicked", plugin.name()),
            }
        }
        WorktreeRemoval::NotHandled
    }

    /// Fires the directory-added seam (the directory is already a working
    /// directory of the session); returns the texts the listeners ask a
    /// turn for, in plugin order.
    pub async fn directory_added(&self, added: &DirectoryAddition) -> Vec<String> {
        let ctx = self.context(None, CancellationToken::new(), TurnControl::default());
        let mut asked = Vec::new();
        for plugin in self.registry.plugins() {
            match AssertUnwindSafe(plugin.directory_added(&ctx, added))
                .catch_unwind()
                .await
            {
                Ok(texts) => asked.extend(texts),
                Err(_) => {
                    tracing::error!("directory-added listener `{}` panicked", plugin.name());
                }
            }
        }
        asked
    }
}
