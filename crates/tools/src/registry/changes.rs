//! The watcher's drain point: what changed on disk (settings files, files
//! listeners asked to watch) is reported before and after a call's
//! dispatch, the later one before post-execute, so the change a tool made
//! fires while that call is still open (as Claude Code's ConfigChange and
//! FileChanged do), and as each turn starts.

use std::panic::AssertUnwindSafe;

use dsh_seams::{ConfigDecision, SeamContext, SessionChange};
use futures::FutureExt;

use super::ToolRegistry;

impl ToolRegistry {
    /// Asks the listeners what changed and fires the matching seams: a
    /// settings file goes through the config-change seam (the first `Keep`
    /// keeps the old settings, else every listener applies it), a watched
    /// file through the file-changed seam. The pipeline calls it around
    /// each call's dispatch; the agent also calls it as a turn starts, for
    /// what changed between turns.
    pub async fn fire_session_changes(&self, ctx: &SeamContext) {
        let mut changes = Vec::new();
        for plugin in &self.plugins {
            match std::panic::catch_unwind(AssertUnwindSafe(|| plugin.session_changes(ctx))) {
                Ok(found) => changes.extend(found),
                Err(_) => tracing::error!("watcher `{}` panicked", plugin.name()),
            }
        }
        for change in changes {
            match change {
                SessionChange::Config(change) => {
                    let mut keep = None;
                    for plugin in &self.plugins {
                        let decision = AssertUnwindSafe(plugin.config_change(ctx, &change))
                            .catch_unwind()
                            .await
                            .unwrap_or_default();
                        if let ConfigDecision::Keep { reason } = decision {
                            keep = Some((plugin.name().to_owned(), reason));
                            break;
                        }
                    }
                    if let Some((by, reason)) = keep {
                        tracing::info!(
                            file = %change.path.display(),
                            %by,
                            %reason,
                            "settings change kept out"
                        );
                        continue;
                    }
                    for plugin in &self.plugins {
                        if AssertUnwindSafe(plugin.config_applied(ctx, &change))
                            .catch_unwind()
                            .await
                            .is_err()
                        {
                            tracing::error!("config listener `{}` panicked", plugin.name());
                        }
                    }
                }
                SessionChange::File(change) => {
                    for plugin in &self.plugins {
                        if AssertUnwindSafe(plugin.file_changed(ctx, &change))
                            .catch_unwind()
                            .await
                            .is_err()
                        {
                            tracing::error!("file-changed listener `{}` panicked", plugin.name());
                        }
                    }
                }
            }
        }
    }
}
