//! One model of what a `write` or `edit` call does to a file, for every
//! front end that shows it: the terminal prints it as a coloured unified
//! diff, ACP sends it as `diff` tool-call content.
//!
//! A change is the file's text before and after. Before a call runs,
//! [`FileChange::proposed`] works out what it would do from its arguments
//! (for an approval question); while it runs, a [`PendingChange`] holds the
//! text before and [`PendingChange::settle`] reads the text after (the real
//! change, whatever the tool did). [`FileChange::hunks`] are the unified-diff
//! hunks (`similar`'s Myers diff, three lines of context), the same ones the
//! tools' own `structuredPatch` values carry.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::builtin::Hunk;
use crate::builtin::diff::structured_patch;
use crate::builtin::{edit, write};

/// Files larger than this are not read for a diff (the result text still shows).
pub const DIFF_LIMIT_BYTES: u64 = 1024 * 1024;

/// A file's text before and after a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The file, resolved against the session's working directory.
    pub path: PathBuf,
    /// Its text before (`None`: the file did not exist or was unreadable).
    pub old_text: Option<String>,
    /// Its text after.
    pub new_text: String,
}

/// Lines added and removed by a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChangeCounts {
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
}

impl FileChange {
    /// What a call of `tool` with `arguments` would do, worked out from the
    /// file as it is now: `write` replaces the text, `edit` replaces
    /// `old_string` with `new_string` as the tool would. `None` for other
    /// tools, for arguments the tool would refuse (an `old_string` that is
    /// missing or not unique), and for files too large to read.
    pub fn proposed(cwd: &Path, tool: &str, arguments: &Value) -> Option<FileChange> {
        let path = changed_path(cwd, tool, arguments)?;
        let old_text = read_small(&path);
        if old_text.is_none() && path.exists() {
            return None;
        }
        // The tool's own arguments: what it would refuse has no change.
        let new_text = match tool {
            "write" => write::Args::deserialize(arguments).ok()?.content,
            "edit" => {
                let args = edit::Args::deserialize(arguments).ok()?;
                apply_edit(
                    old_text.as_deref(),
                    &args.old_string,
                    &args.new_string,
                    args.replace_all,
                )?
            }
            _ => return None,
        };
        Some(FileChange {
            path,
            old_text,
            new_text,
        })
    }

    /// The unified-diff hunks turning the old text into the new (a new file
    /// diffs against the empty text).
    pub fn hunks(&self) -> Vec<Hunk> {
        structured_patch(self.old_text.as_deref().unwrap_or(""), &self.new_text)
    }

    /// How many lines the change adds and removes.
    pub fn counts(&self) -> ChangeCounts {
        let mut counts = ChangeCounts::default();
        for hunk in self.hunks() {
            for line in &hunk.lines {
                match line.chars().next() {
                    Some('+') => counts.added += 1,
                    Some('-') => counts.removed += 1,
                    _ => {}
                }
            }
        }
        counts
    }

    /// Whether the call created the file.
    pub fn created(&self) -> bool {
        self.old_text.is_none()
    }
}

/// A `write` or `edit` call that has not finished: the file and its text
/// before the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingChange {
    path: PathBuf,
    before: Option<String>,
}

impl PendingChange {
    /// Reads the file a call of `tool` changes, before it runs; `None` for
    /// calls that change no file.
    pub fn capture(cwd: &Path, tool: &str, arguments: &Value) -> Option<PendingChange> {
        let path = changed_path(cwd, tool, arguments)?;
        Some(PendingChange {
            before: read_small(&path),
            path,
        })
    }

    /// The change the call made: the file's text now against its text
    /// before. `None` when the file cannot be read now (gone, too large).
    pub fn settle(self) -> Option<FileChange> {
        let new_text = read_small(&self.path)?;
        Some(FileChange {
            path: self.path,
            old_text: self.before,
            new_text,
        })
    }

    /// The file the call changes.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The file a call of `tool` changes, resolved against `cwd`.
fn changed_path(cwd: &Path, tool: &str, arguments: &Value) -> Option<PathBuf> {
    let described = crate::describe(tool, arguments);
    let path = Path::new(described.changed_file()?);
    Some(if path.is_absolute() {
        path.to_owned()
    } else {
        cwd.join(path)
    })
}

/// The text of a regular file of at most [`DIFF_LIMIT_BYTES`].
pub fn read_small(path: &Path) -> Option<String> {
    let metadata = fs_err::metadata(path).ok()?;
    if !metadata.is_file() || metadata.len() > DIFF_LIMIT_BYTES {
        return None;
    }
    fs_err::read_to_string(path).ok()
}

/// `edit`'s replacement: an empty `old_string` fills a missing or empty
/// file; otherwise `old_string` must occur once (or `replace_all`).
fn apply_edit(text: Option<&str>, old: &str, new: &str, replace_all: bool) -> Option<String> {
    if old == new {
        return None;
    }
    match (text, old.is_empty()) {
        (None, true) => Some(new.to_owned()),
        (Some(""), true) => Some(new.to_owned()),
        (None, false) | (Some(_), true) => None,
        (Some(text), false) => match text.matches(old).count() {
            0 => None,
            1 => Some(text.replacen(old, new, 1)),
            _ if replace_all => Some(text.replace(old, new)),
            _ => None,
        },
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn an_edit_is_proposed_from_the_file_and_settled_from_the_disk() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
        let arguments =
            json!({"file_path": "notes.txt", "old_string": "beta", "new_string": "gamma"});
        let proposed = FileChange::proposed(dir.path(), "edit", &arguments).unwrap();
        assert_eq!(proposed.new_text, "alpha\ngamma\n");
        assert_eq!(
            proposed.hunks()[0].lines,
            [" alpha", "-beta", "+gamma"].map(str::to_owned)
        );
        assert_eq!(
            proposed.counts(),
            ChangeCounts {
                added: 1,
                removed: 1
            }
        );
        let pending = PendingChange::capture(dir.path(), "edit", &arguments).unwrap();
        std::fs::write(dir.path().join("notes.txt"), "alpha\ngamma\n").unwrap();
        assert_eq!(pending.settle().unwrap(), proposed);
    }

    #[test]
    fn a_write_of_a_new_file_diffs_against_nothing_and_refused_edits_propose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let write = FileChange::proposed(
            dir.path(),
            "write",
            &json!({"file_path": "new.txt", "content": "one\ntwo\n"}),
        )
        .unwrap();
        assert!(write.created());
        assert_eq!(
            write.counts(),
            ChangeCounts {
                added: 2,
                removed: 0
            }
        );
        std::fs::write(dir.path().join("a.txt"), "x\nx\n").unwrap();
        let ambiguous = json!({"file_path": "a.txt", "old_string": "x", "new_string": "y"});
        assert_eq!(FileChange::proposed(dir.path(), "edit", &ambiguous), None);
        let all = json!({"file_path": "a.txt", "old_string": "x", "new_string": "y", "replace_all": true});
        assert_eq!(
            FileChange::proposed(dir.path(), "edit", &all)
                .unwrap()
                .new_text,
            "y\ny\n"
        );
        assert_eq!(
            FileChange::proposed(dir.path(), "bash", &json!({"command": "ls"})),
            None
        );
    }
}
