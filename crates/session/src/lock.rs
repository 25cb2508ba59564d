//! One writer per session: an exclusive advisory lock on a sibling file.
//!
//! The lock lives on `<id>.lock` next to `<id>.jsonl`, never on the log
//! itself, so the log can be replaced or truncated without touching the
//! lock. The holder writes its pid into the lock file so a second writer can
//! say who has the session. The lock file is never removed: unlinking it
//! while another process waits on it would let two writers in.

use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

/// What to do when another process holds the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockWait {
    /// Fail at once with [`LockError::Held`].
    Fail,
    /// Block until the holder lets go (`--wait`).
    Wait,
}

/// Why the session could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds the session.
    #[error(
        "session {session} is in use by another dsh ({holder}); run again when it ends, or pass --wait"
    )]
    Held {
        /// The session (the log's file stem).
        session: String,
        /// Who holds it, as the lock file says.
        holder: String,
    },
    /// The lock file could not be opened or locked.
    #[error("cannot lock {}: {source}", path.display())]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// A held session lock; released when dropped (or when the process dies).
#[derive(Debug)]
pub struct SessionLock {
    _file: std::fs::File,
    path: PathBuf,
}

impl SessionLock {
    /// The lock file that guards `log_path`: the same stem, `.lock`.
    pub fn path_for(log_path: &Path) -> PathBuf {
        log_path.with_extension("lock")
    }

    /// Takes the exclusive lock that guards `log_path`, creating the lock
    /// file (0600, never through a symlink) if needed.
    pub fn acquire(log_path: &Path, wait: LockWait) -> Result<Self, LockError> {
        let path = Self::path_for(log_path);
        let io = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        #[allow(clippy::disallowed_methods)] // custom_flags/mode: std's OpenOptionsExt
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
            .map_err(io)?;
        // `File::lock`/`try_lock` are `flock(2)` on Unix: advisory, released
        // when the descriptor closes (also when dsh is killed).
        let locked = match wait {
            LockWait::Wait => file.lock().map(|()| true),
            LockWait::Fail => match file.try_lock() {
                Ok(()) => Ok(true),
                Err(std::fs::TryLockError::WouldBlock) => Ok(false),
                Err(std::fs::TryLockError::Error(error)) => Err(error),
            },
        }
        .map_err(io)?;
        if !locked {
            let mut text = String::new();
            let holder = match file.read_to_string(&mut text) {
                Ok(_) => match text.trim().parse::<u32>() {
                    Ok(pid) => format!("pid {pid}"),
                    Err(_) => "a process that has not written its pid yet".to_owned(),
                },
                Err(_) => "a process whose pid cannot be read".to_owned(),
            };
            let session = log_path
                .file_stem()
                .map(|stem| stem.to_string_lossy().into_owned())
                .unwrap_or_default();
            return Err(LockError::Held { session, holder });
        }
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        writeln!(file, "{}", std::process::id()).map_err(io)?;
        Ok(SessionLock { _file: file, path })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}
