//! The one directory walk behind `glob` and `grep`.
//!
//! Both tools skip the same things, so that a file one of them finds the other
//! searches too, and both follow the rule Claude Code's ripgrep-backed tools
//! follow: `.gitignore`, `.ignore`, `.git/info/exclude` and the user's global
//! git excludes are honoured (also outside a git repository, so a scratch
//! project behaves like a checkout), hidden files are searched, and
//! version-control directories are never entered. Symlinks are not followed.
//! Entries are yielded in path order; unreadable entries are skipped.

use std::path::{Path, PathBuf};

use ignore::WalkBuilder;
use tokio_util::sync::CancellationToken;

use super::check_cancelled;
use crate::ToolError;

/// Directories never entered, whatever the ignore files say.
const VCS_DIRS: [&str; 5] = [".git", ".hg", ".svn", ".bzr", ".jj"];

/// Every regular file below `root` that the skip rule keeps, in path order.
/// Stops with an error when `cancel` fires.
pub(super) fn files_under(
    tool: &str,
    root: &Path,
    cancel: &CancellationToken,
) -> Result<Vec<PathBuf>, ToolError> {
    let walk = WalkBuilder::new(root)
        .hidden(false)
        .parents(true)
        .ignore(true)
        .git_ignore(true)
        .git_global(true)
        .git_exclude(true)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_path(Path::cmp)
        .filter_entry(|entry| {
            entry.depth() == 0
                || !(entry.file_type().is_some_and(|t| t.is_dir())
                    && VCS_DIRS.iter().any(|d| entry.file_name() == *d))
        })
        .build();
    let mut files = Vec::new();
    for entry in walk {
        check_cancelled(tool, cancel)?;
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                tracing::debug!(%err, "{tool}: skipping unreadable entry");
                continue;
            }
        };
        if entry.file_type().is_some_and(|t| t.is_file()) {
            files.push(entry.into_path());
        }
    }
    Ok(files)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests may unwrap
mod tests {
    use super::*;

    fn write(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "x").unwrap();
    }

    #[test]
    fn honours_gitignore_keeps_hidden_skips_vcs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for p in [
            "a.rs",
            ".env.example",
            ".config/tool.toml",
            "target/out.rs",
            "src/gen/x.rs",
            "src/keep.rs",
            ".git/HEAD",
            ".hg/store",
            "logs/app.log",
        ] {
            write(&root.join(p));
        }
        std::fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
        std::fs::write(root.join("src/.ignore"), "gen/\n").unwrap();
        let found: Vec<String> = files_under("t", root, &CancellationToken::new())
            .unwrap()
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            found,
            [
                ".config/tool.toml",
                ".env.example",
                ".gitignore",
                "a.rs",
                "src/.ignore",
                "src/keep.rs"
            ]
        );
    }

    #[test]
    fn cancellation_stops_the_walk() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("a"));
        let cancel = CancellationToken::new();
        cancel.cancel();
        assert!(files_under("t", dir.path(), &cancel).is_err());
    }
}
