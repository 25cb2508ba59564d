//! A set of watched files, looked at on demand.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, channel};
use std::time::SystemTime;

use dsh_seams::{FileChange, FileChangeKind};
use notify::{RecommendedWatcher, RecursiveMode, Watcher as _};

/// Why a watcher could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot start the file watcher: {0}")]
pub struct WatchError(#[from] notify::Error);

/// What a file looked like at the last look (`None`: absent).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    len: u64,
    modified: Option<SystemTime>,
    inode: u64,
}

fn look(path: &Path) -> Option<Seen> {
    let meta = std::fs::metadata(path).ok()?;
    Some(Seen {
        len: meta.len(),
        modified: meta.modified().ok(),
        inode: inode(&meta),
    })
}

#[cfg(unix)]
fn inode(meta: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}

#[cfg(not(unix))]
fn inode(_meta: &std::fs::Metadata) -> u64 {
    0
}

/// Watches files through their directories (a file that does not exist yet
/// can be added). [`Watcher::changes`] compares each file with the last look
/// (size, modification time, inode), so what it reports does not depend on
/// when `notify`'s events arrive, and also counts a file `notify` reported
/// written whose size and time did not move (a coarse clock). One look
/// reports one change per file however many writes came. Dropping it stops
/// `notify`'s thread and closes its descriptor.
pub struct Watcher {
    inner: RecommendedWatcher,
    events: Receiver<notify::Result<notify::Event>>,
    files: BTreeMap<PathBuf, Option<Seen>>,
    order: Vec<PathBuf>,
    dirs: BTreeSet<PathBuf>,
    touched: BTreeSet<PathBuf>,
    last_look: SystemTime,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher")
            .field("files", &self.order)
            .field("dirs", &self.dirs)
            .finish_non_exhaustive()
    }
}

impl Watcher {
    /// A watcher over no files.
    pub fn new() -> Result<Self, WatchError> {
        let (tx, events) = channel();
        let inner = notify::recommended_watcher(tx)?;
        Ok(Watcher {
            inner,
            events,
            files: BTreeMap::new(),
            order: Vec::new(),
            dirs: BTreeSet::new(),
            touched: BTreeSet::new(),
            last_look: SystemTime::now(),
        })
    }

    /// Watches exactly `paths` (absolute) from now on. A file new to the set
    /// is looked at now; one no longer in it is forgotten. Directories that
    /// cannot be watched (missing) are skipped: their files are still
    /// compared at each look.
    pub fn set_files(&mut self, paths: &[PathBuf]) {
        if paths == self.order.as_slice() {
            return;
        }
        self.collect();
        let mut files = BTreeMap::new();
        for path in paths {
            let seen = match self.files.remove(path) {
                Some(seen) => seen,
                None => look(path),
            };
            files.insert(path.clone(), seen);
        }
        self.files = files;
        self.order = paths.to_vec();
        let wanted: BTreeSet<PathBuf> = paths
            .iter()
            .filter_map(|path| path.parent().map(Path::to_path_buf))
            .collect();
        for gone in self.dirs.difference(&wanted) {
            let _ = self.inner.unwatch(gone);
        }
        let mut dirs = BTreeSet::new();
        for dir in wanted {
            if self.dirs.contains(&dir)
                || self.inner.watch(&dir, RecursiveMode::NonRecursive).is_ok()
            {
                dirs.insert(dir);
            }
        }
        self.dirs = dirs;
    }

    /// The files watched, in the order given.
    pub fn files(&self) -> &[PathBuf] {
        &self.order
    }

    fn collect(&mut self) {
        while let Ok(event) = self.events.try_recv() {
            let Ok(event) = event else { continue };
            for path in event.paths {
                if self.files.contains_key(&path) {
                    self.touched.insert(path);
                }
            }
        }
    }

    /// What changed since the last look, one entry per file, in the order
    /// the files were given.
    pub fn changes(&mut self) -> Vec<FileChange> {
        self.collect();
        let touched = std::mem::take(&mut self.touched);
        let since = std::mem::replace(&mut self.last_look, SystemTime::now());
        let mut out = Vec::new();
        for path in &self.order {
            let now = look(path);
            let Some(before) = self.files.get_mut(path) else {
                continue;
            };
            let kind = match (&*before, &now) {
                (None, Some(_)) => Some(FileChangeKind::Add),
                (Some(_), None) => Some(FileChangeKind::Unlink),
                (Some(old), Some(new)) if old != new => Some(FileChangeKind::Change),
                // Same size and time, but notify saw a write: counted when
                // the time is after the last look (a coarse clock), so an
                // event that arrives late for a write already reported is
                // not reported twice.
                (Some(_), Some(new))
                    if touched.contains(path) && new.modified.is_some_and(|m| m > since) =>
                {
                    Some(FileChangeKind::Change)
                }
                _ => None,
            };
            *before = now;
            if let Some(kind) = kind {
                out.push(FileChange {
                    path: path.clone(),
                    kind,
                });
            }
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use super::*;

    /// Tests that start watchers take it, so that the descriptor count of
    /// [`dropping_the_watcher_ends_its_thread_and_descriptor`] is theirs.
    pub(crate) static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn serial() -> std::sync::MutexGuard<'static, ()> {
        SERIAL
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn kinds(watcher: &mut Watcher) -> Vec<(String, FileChangeKind)> {
        watcher
            .changes()
            .into_iter()
            .map(|c| {
                let name = c.path.file_name().unwrap().to_string_lossy().into_owned();
                (name, c.kind)
            })
            .collect()
    }

    #[test]
    fn many_writes_between_two_looks_are_one_change() {
        let _guard = serial();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".envrc");
        std::fs::write(&file, "0").unwrap();
        let mut watcher = Watcher::new().unwrap();
        watcher.set_files(std::slice::from_ref(&file));
        assert_eq!(kinds(&mut watcher), []);
        for i in 1..=5 {
            std::fs::write(&file, format!("export X={i}\n")).unwrap();
        }
        assert_eq!(
            kinds(&mut watcher),
            [(".envrc".to_owned(), FileChangeKind::Change)]
        );
        // Nothing since: nothing reported, even as late events arrive.
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert_eq!(kinds(&mut watcher), []);
    }

    #[test]
    fn added_and_removed_files_are_told_apart() {
        let _guard = serial();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("watched.txt");
        let other = dir.path().join("other.txt");
        let mut watcher = Watcher::new().unwrap();
        watcher.set_files(std::slice::from_ref(&file));
        std::fs::write(&file, "a").unwrap();
        std::fs::write(&other, "not watched").unwrap();
        assert_eq!(
            kinds(&mut watcher),
            [("watched.txt".to_owned(), FileChangeKind::Add)]
        );
        std::fs::remove_file(&file).unwrap();
        assert_eq!(
            kinds(&mut watcher),
            [("watched.txt".to_owned(), FileChangeKind::Unlink)]
        );
        // Created and removed between two looks: nothing to report.
        std::fs::write(&file, "b").unwrap();
        std::fs::remove_file(&file).unwrap();
        assert_eq!(kinds(&mut watcher), []);
    }

    #[test]
    fn a_file_dropped_from_the_list_is_no_longer_reported() {
        let _guard = serial();
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("sub").join("b");
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let mut watcher = Watcher::new().unwrap();
        watcher.set_files(&[a.clone(), b.clone()]);
        assert_eq!(watcher.dirs.len(), 2);
        watcher.set_files(std::slice::from_ref(&b));
        assert_eq!(watcher.dirs.len(), 1);
        std::fs::write(&a, "x").unwrap();
        std::fs::write(&b, "y").unwrap();
        assert_eq!(kinds(&mut watcher), [("b".to_owned(), FileChangeKind::Add)]);
    }

    /// The inotify descriptors this process holds.
    #[cfg(target_os = "linux")]
    fn inotify_fds() -> usize {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .filter(|target| target.to_string_lossy().contains("inotify"))
            .count()
    }

    /// The threads `notify` names for its event loop.
    #[cfg(target_os = "linux")]
    fn notify_threads() -> usize {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("comm")).ok())
            .filter(|name| name.contains("notify"))
            .count()
    }

    /// The inotify descriptors and notify threads once they stop falling
    /// (at most 5 s).
    #[cfg(target_os = "linux")]
    fn settled_counts() -> (usize, usize) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut counts = (inotify_fds(), notify_threads());
        while counts != (0, 0) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
            counts = (inotify_fds(), notify_threads());
        }
        counts
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn dropping_the_watcher_ends_its_thread_and_descriptor() {
        // The other tests of this binary run watchers too: counted under
        // one lock, and only this watcher's own resources are compared.
        let _guard = SERIAL
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // A watcher an earlier test dropped may still be ending its thread:
        // wait for it, so the baseline is this binary's quiet state (every
        // watcher in it is made under the lock this test holds).
        let (fds, threads) = settled_counts();
        let dir = tempfile::tempdir().unwrap();
        let mut watcher = Watcher::new().unwrap();
        watcher.set_files(&[dir.path().join("f")]);
        assert_eq!(inotify_fds(), fds + 1);
        assert_eq!(notify_threads(), threads + 1);
        drop(watcher);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while (inotify_fds(), notify_threads()) != (fds, threads) {
            assert!(
                std::time::Instant::now() < deadline,
                "the watcher's thread or descriptor outlived it"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}
