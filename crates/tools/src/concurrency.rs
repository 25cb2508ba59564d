//! How one call may overlap the other calls of its batch.
//!
//! The agent runs the calls of one model reply at once (as Gemini CLI,
//! Claude Code and Codex do), except where running them together could
//! change what they do. Each tool says so per call with a [`Concurrency`],
//! and [`Concurrency::conflicts`] says which pairs keep their call order: a
//! call starts once every earlier call it conflicts with has finished.

use std::path::{Component, Path, PathBuf};

/// How a call may overlap the other calls of its batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Concurrency {
    /// Overlaps any call but an exclusive one (a shell command that stays
    /// in its directory, a fetch, a look at a background shell).
    Shared,
    /// Runs alone: after every earlier call of the batch, before every
    /// later one (a subagent, a question to the person, a task change, a
    /// shell command that may move the kept working directory, any tool
    /// that says nothing).
    Exclusive,
    /// Reads these paths (files or directory roots): overlaps anything but
    /// a call that writes one of them, or a path under or above one.
    Reads(Vec<PathBuf>),
    /// Writes these paths: calls that read or write one of them, or a path
    /// under or above one, keep their call order.
    Writes(Vec<PathBuf>),
}

impl Concurrency {
    /// Reads `path`, resolved against `cwd` when relative.
    pub fn reads(cwd: &Path, path: &str) -> Self {
        Concurrency::Reads(vec![resolve(cwd, path)])
    }

    /// Writes `path`, resolved against `cwd` when relative.
    pub fn writes(cwd: &Path, path: &str) -> Self {
        Concurrency::Writes(vec![resolve(cwd, path)])
    }

    /// Whether two calls of one batch must not overlap (the later one waits
    /// for the earlier one). Symmetric.
    pub fn conflicts(&self, other: &Concurrency) -> bool {
        match (self, other) {
            (Concurrency::Exclusive, _) | (_, Concurrency::Exclusive) => true,
            (Concurrency::Shared, _)
            | (_, Concurrency::Shared)
            | (Concurrency::Reads(_), Concurrency::Reads(_)) => false,
            (Concurrency::Writes(a), Concurrency::Writes(b) | Concurrency::Reads(b))
            | (Concurrency::Reads(a), Concurrency::Writes(b)) => overlap(a, b),
        }
    }
}

/// Whether a path of `a` is one of `b`, or under or above one.
fn overlap(a: &[PathBuf], b: &[PathBuf]) -> bool {
    a.iter()
        .any(|a| b.iter().any(|b| a.starts_with(b) || b.starts_with(a)))
}

/// `path` against `cwd`, with `.` and `..` taken out by their names (links
/// are not followed: two names of one file through a link are two paths).
fn resolve(cwd: &Path, path: &str) -> PathBuf {
    let joined = cwd.join(path);
    let mut out = PathBuf::new();
    for part in joined.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Prefix(_) | Component::RootDir | Component::Normal(_) => out.push(part),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_conflicts_with_everything_shared_with_nothing_else() {
        let write = Concurrency::writes(Path::new("/p"), "a.txt");
        for other in [Concurrency::Shared, Concurrency::Exclusive, write.clone()] {
            assert!(Concurrency::Exclusive.conflicts(&other), "{other:?}");
            assert!(other.conflicts(&Concurrency::Exclusive), "{other:?}");
        }
        assert!(!Concurrency::Shared.conflicts(&Concurrency::Shared));
        assert!(!Concurrency::Shared.conflicts(&write));
    }

    #[test]
    fn paths_conflict_when_one_is_written_and_they_meet() {
        let cwd = Path::new("/p");
        let write_a = Concurrency::writes(cwd, "sub/../a.txt");
        assert!(write_a.conflicts(&Concurrency::writes(cwd, "/p/a.txt")));
        assert!(write_a.conflicts(&Concurrency::reads(cwd, "./a.txt")));
        // A search of the folder meets a write in it.
        assert!(Concurrency::reads(cwd, ".").conflicts(&write_a));
        assert!(!write_a.conflicts(&Concurrency::writes(cwd, "b.txt")));
        assert!(!Concurrency::reads(cwd, "a.txt").conflicts(&Concurrency::reads(cwd, "a.txt")));
    }
}
