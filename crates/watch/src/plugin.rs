//! The session's owner of a [`Watcher`]: a pipeline listener.

use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;
use dsh_seams::{
    ConfigChange, ConfigSource, Plugin, SeamContext, SessionChange, SessionEndReason,
    SessionStartSource,
};

use crate::Watcher;

/// Starts a [`Watcher`] with the session (the session-start seam, after
/// the listeners before it asked for their files), answers the drain point
/// with the settings files and the requested files, and drops the watcher
/// at session end (or when the session's pipeline is dropped).
#[derive(Debug)]
pub struct WatchPlugin {
    settings: Vec<(ConfigSource, PathBuf)>,
    watcher: Mutex<Option<Watcher>>,
}

impl WatchPlugin {
    /// A listener watching these settings files (by layer) and whatever
    /// listeners ask for.
    pub fn new(settings: Vec<(ConfigSource, PathBuf)>) -> Self {
        WatchPlugin {
            settings,
            watcher: Mutex::new(None),
        }
    }

    /// Whether a watcher is running (tests: it ends with the session).
    pub fn is_running(&self) -> bool {
        self.lock().is_some()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Watcher>> {
        self.watcher.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Every file to watch now: the settings files, then what listeners
    /// asked for (names in the current working directory).
    fn wanted(&self, ctx: &SeamContext) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = self.settings.iter().map(|(_, p)| p.clone()).collect();
        let requested = ctx
            .session
            .env
            .watch_requests()
            .paths(&ctx.session.current_dir());
        for path in requested {
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
        paths
    }
}

#[async_trait]
impl Plugin for WatchPlugin {
    fn name(&self) -> &str {
        "watch"
    }

    async fn session_start(
        &self,
        ctx: &SeamContext,
        _source: SessionStartSource,
    ) -> Vec<dsh_seams::ContextEntry> {
        let wanted = self.wanted(ctx);
        let mut slot = self.lock();
        if slot.is_none() {
            match Watcher::new() {
                Ok(watcher) => *slot = Some(watcher),
                Err(error) => {
                    tracing::warn!(%error, "settings and watched files are not watched");
                }
            }
        }
        if let Some(watcher) = slot.as_mut() {
            watcher.set_files(&wanted);
        }
        Vec::new()
    }

    fn session_changes(&self, ctx: &SeamContext) -> Vec<SessionChange> {
        let wanted = self.wanted(ctx);
        let mut slot = self.lock();
        let Some(watcher) = slot.as_mut() else {
            return Vec::new();
        };
        // Changes to the files watched until now, then the new list (a new
        // file is looked at from here on).
        let found = watcher.changes();
        watcher.set_files(&wanted);
        found
            .into_iter()
            .map(
                |change| match self.settings.iter().find(|(_, path)| *path == change.path) {
                    Some((source, path)) => SessionChange::Config(ConfigChange {
                        source: *source,
                        path: path.clone(),
                    }),
                    None => SessionChange::File(change),
                },
            )
            .collect()
    }

    async fn session_end(&self, _ctx: &SeamContext, _reason: SessionEndReason) {
        self.lock().take();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use dsh_seams::{FileChange, FileChangeKind};

    #[test]
    fn settings_and_requested_files_are_reported_and_the_watcher_ends_with_the_session() {
        let _guard = crate::watcher::tests::SERIAL
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(reported_and_ended());
    }

    async fn reported_and_ended() {
        let dir = tempfile::tempdir().unwrap();
        let local = dir.path().join(".claude").join("settings.local.json");
        std::fs::create_dir(dir.path().join(".claude")).unwrap();
        let plugin = WatchPlugin::new(vec![(ConfigSource::LocalSettings, local.clone())]);
        let ctx = SeamContext::detached(dir.path());
        ctx.session.env.watch_names([".envrc".to_owned()]);
        assert!(!plugin.is_running());
        plugin
            .session_start(&ctx, SessionStartSource::Startup)
            .await;
        assert!(plugin.is_running());
        assert_eq!(plugin.session_changes(&ctx), []);

        std::fs::write(&local, "{}").unwrap();
        std::fs::write(dir.path().join(".envrc"), "export A=1").unwrap();
        std::fs::write(dir.path().join("other"), "not watched").unwrap();
        assert_eq!(
            plugin.session_changes(&ctx),
            [
                SessionChange::Config(ConfigChange {
                    source: ConfigSource::LocalSettings,
                    path: local,
                }),
                SessionChange::File(FileChange {
                    path: dir.path().join(".envrc"),
                    kind: FileChangeKind::Add,
                }),
            ]
        );
        // A path asked for later is looked at from then on.
        ctx.session.env.set_dynamic_watch(vec!["other".into()]);
        assert_eq!(plugin.session_changes(&ctx), []);
        std::fs::remove_file(dir.path().join("other")).unwrap();
        assert_eq!(
            plugin.session_changes(&ctx),
            [SessionChange::File(FileChange {
                path: dir.path().join("other"),
                kind: FileChangeKind::Unlink,
            })]
        );

        plugin.session_end(&ctx, SessionEndReason::Other).await;
        assert!(!plugin.is_running());
        assert_eq!(plugin.session_changes(&ctx), []);
    }
}
