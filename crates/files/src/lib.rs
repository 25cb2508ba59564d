//! dsh-files: the configuration files of one session, read from disk once.
//!
//! What this crate is for: [`ConfigFiles`] is a shared, memoizing reader.
//! `SessionSpec::resolve` makes one and hands clones to everything that
//! reads configuration (permission layers, the hook dialects, MCP
//! discovery, trust, settings `env`): the first reader of a path reads it,
//! every later one gets the same text (or the same error). So a file is
//! opened once per session, and every consumer sees the same contents —
//! the trust decision is taken on the text that runs.
//!
//! What it is not: a parser or a watcher. It holds text, not settings, and
//! never notices a file changing after it was read (a new session reads
//! again). Files dsh writes (`trust.json` after a trust answer,
//! `~/.claude.json` after a consent answer) are read again by whoever reads
//! them next through a fresh reader.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// One read: the text, or the error's kind and message (an error is
/// remembered too, so a missing file is looked up once).
#[derive(Debug, Clone)]
enum Read {
    Text(Arc<str>),
    Failed(io::ErrorKind, String),
}

#[derive(Debug, Default)]
struct Cache {
    reads: HashMap<PathBuf, Read>,
    /// How often each path was read from disk (tests check "once").
    disk_reads: HashMap<PathBuf, usize>,
}

/// A shared, memoizing reader of configuration files. Clones share one
/// cache; [`ConfigFiles::default`] is a fresh one.
#[derive(Debug, Clone, Default)]
pub struct ConfigFiles {
    cache: Arc<Mutex<Cache>>,
}

impl ConfigFiles {
    /// A fresh reader (nothing read yet).
    pub fn new() -> Self {
        ConfigFiles::default()
    }

    fn lock(&self) -> MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The text of `path`, read from disk the first time it is asked for.
    /// The error of a failed read (not found, not UTF-8, …) is the same
    /// kind every time, with the message of the first read.
    pub fn read_to_string(&self, path: &Path) -> io::Result<String> {
        // std, not fs-err: callers name the path in their own errors.
        #[allow(clippy::disallowed_methods)]
        self.read_with(path, |path| std::fs::read_to_string(path))
    }

    /// [`ConfigFiles::read_to_string`] with the caller's own way of
    /// reading the first time (fs-err's messages, a non-blocking open that
    /// refuses a FIFO, …).
    pub fn read_with(
        &self,
        path: &Path,
        read: impl FnOnce(&Path) -> io::Result<String>,
    ) -> io::Result<String> {
        if let Some(read) = self.lock().reads.get(path) {
            return answer(read);
        }
        let read = match read(path) {
            Ok(text) => Read::Text(Arc::from(text)),
            Err(error) => Read::Failed(error.kind(), error.to_string()),
        };
        let mut cache = self.lock();
        *cache.disk_reads.entry(path.to_owned()).or_default() += 1;
        let read = cache.reads.entry(path.to_owned()).or_insert(read).clone();
        answer(&read)
    }

    /// The text of `path`, `None` when it does not exist.
    pub fn read_if_exists(&self, path: &Path) -> io::Result<Option<String>> {
        match self.read_to_string(path) {
            Ok(text) => Ok(Some(text)),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// How many times `path` was read from disk through this reader (and
    /// its clones).
    pub fn disk_reads(&self, path: &Path) -> usize {
        self.lock().disk_reads.get(path).copied().unwrap_or(0)
    }

    /// Every path read from disk, with how often (tests).
    pub fn all_disk_reads(&self) -> Vec<(PathBuf, usize)> {
        let mut all: Vec<(PathBuf, usize)> = self
            .lock()
            .disk_reads
            .iter()
            .map(|(path, count)| (path.clone(), *count))
            .collect();
        all.sort();
        all
    }

    /// Forgets `path` (dsh wrote it): the next reader reads it again.
    pub fn forget(&self, path: &Path) {
        self.lock().reads.remove(path);
    }
}

/// Readers compare equal: which reader a discovery reads through is not
/// part of what it describes (its paths and options are).
impl PartialEq for ConfigFiles {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

impl Eq for ConfigFiles {}

fn answer(read: &Read) -> io::Result<String> {
    match read {
        Read::Text(text) => Ok(text.to_string()),
        Read::Failed(kind, message) => Err(io::Error::new(*kind, message.clone())),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_from_disk_once_and_clones_share_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "{\"a\":1}").unwrap();
        let files = ConfigFiles::new();
        let other = files.clone();
        assert_eq!(files.read_to_string(&path).unwrap(), "{\"a\":1}");
        // Changed on disk: the session keeps the text it read.
        std::fs::write(&path, "{\"a\":2}").unwrap();
        assert_eq!(other.read_to_string(&path).unwrap(), "{\"a\":1}");
        assert_eq!(files.disk_reads(&path), 1);
        // A fresh reader reads again.
        assert_eq!(
            ConfigFiles::new().read_to_string(&path).unwrap(),
            "{\"a\":2}"
        );
    }

    #[test]
    fn a_missing_file_is_looked_up_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing.toml");
        let files = ConfigFiles::new();
        assert!(files.read_if_exists(&path).unwrap().is_none());
        assert_eq!(
            files.read_to_string(&path).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        assert_eq!(files.disk_reads(&path), 1);
        files.forget(&path);
        std::fs::write(&path, "x").unwrap();
        assert_eq!(files.read_to_string(&path).unwrap(), "x");
        assert_eq!(files.disk_reads(&path), 2);
    }
}
