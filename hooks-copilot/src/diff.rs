//! The unified diff Copilot puts in `permissionRequest`'s
//! `toolInput.diff` for a `create` or `edit` (a_file_tools), rendered the
//! way Copilot CLI 1.0 renders it:
//!
//! - a leading newline, then `diff --git a<P> b<P>` with the absolute path
//!   glued to `a`/`b` (no `/` between), index lines of zeros;
//! - a new file: `create file mode 100644`, `--- a/dev/null`, one hunk
//!   `@@ -1,0 +1,N @@` of its lines (a final newline ends the last line,
//!   it adds no empty one);
//! - a changed file: both texts cut at every `\n` (so `"alpha\nbeta\n"` is
//!   three lines, the last one empty), Myers line diff, hunks with three
//!   lines of context, each line ended by `\n`.
//!
//! [`render`] is pure; [`proposed`] reads the file as it is when the
//! permission is asked.

use std::path::Path;

use dsh_seams::ToolExecution;
use dsh_tools::builtin::structured_patch;
use dsh_tools::change::FileChange;

/// Copilot's diff turning `old` (`None`: the file does not exist) into
/// `new`, for the file at `path` (absolute, as Copilot shows it).
pub fn render(path: &str, old: Option<&str>, new: &str) -> String {
    let mut out = format!("\ndiff --git a{path} b{path}\n");
    let Some(old) = old else {
        let lines: Vec<&str> = new.strip_suffix('\n').unwrap_or(new).split('\n').collect();
        let lines = if new.is_empty() { Vec::new() } else { lines };
        out.push_str("create file mode 100644\nindex 0000000..0000000\n");
        out.push_str(&format!("--- a/dev/null\n+++ b{path}\n"));
        out.push_str(&format!("@@ -1,0 +1,{} @@\n", lines.len()));
        for line in lines {
            out.push('+');
            out.push_str(line);
            out.push('\n');
        }
        return out;
    };
    out.push_str("index 0000000..0000000 100644\n");
    out.push_str(&format!("--- a{path}\n+++ b{path}\n"));
    // Copilot cuts both texts at every `\n` (a final `\n` leaves an empty
    // last line): the shared hunks of the texts with one more `\n`, where
    // every line is `\n`-terminated.
    for hunk in structured_patch(&format!("{old}\n"), &format!("{new}\n")) {
        out.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines
        ));
        for line in hunk.lines {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// The diff for a `write` or `edit` call, from the file as it is now
/// (relative paths against `cwd`): `None` for other tools and
/// for calls whose change cannot be worked out — an edit whose
/// `old_string` is missing or not unique, a missing file for a non-empty
/// `old_string`, an unreadable or over-large file (the hook then gets an
/// empty `diff`).
pub fn proposed(cwd: &Path, exec: &ToolExecution) -> Option<String> {
    if !matches!(exec.tool.as_str(), "write" | "edit") {
        return None;
    }
    let change = FileChange::proposed(cwd, &exec.tool, &exec.arguments)?;
    Some(render(
        &change.path.display().to_string(),
        change.old_text.as_deref(),
        &change.new_text,
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};
    use std::sync::Arc;

    fn call(cwd: &Path, tool: &str, arguments: Value) -> Option<String> {
        let exec = ToolExecution {
            execution_id: "e1".into(),
            call_id: "c1".into(),
            tool: tool.into(),
            arguments: Arc::new(arguments),
            original_arguments: None,
            rewritten_by: None,
            parent_execution_id: None,
            origin: None,
        };
        proposed(cwd, &exec)
    }

    /// a_file_tools: `create` of `out.txt` with "written by model\n".
    #[test]
    fn a_new_file_is_one_hunk_of_added_lines() {
        assert_eq!(
            render("/p/out.txt", None, "written by model\n"),
            "\ndiff --git a/p/out.txt b/p/out.txt\ncreate file mode 100644\n\
             index 0000000..0000000\n--- a/dev/null\n+++ b/p/out.txt\n\
             @@ -1,0 +1,1 @@\n+written by model\n"
        );
        assert!(render("/p/x", None, "a\nb").ends_with("@@ -1,0 +1,2 @@\n+a\n+b\n"));
        assert!(render("/p/x", None, "").ends_with("@@ -1,0 +1,0 @@\n"));
    }

    /// a_file_tools: `edit` of "alpha\nbeta\n", beta → gamma; the text
    /// after the last newline is a line of its own.
    #[test]
    fn an_edit_diffs_every_newline_cut_line() {
        assert_eq!(
            render("/p/notes.txt", Some("alpha\nbeta\n"), "alpha\ngamma\n"),
            "\ndiff --git a/p/notes.txt b/p/notes.txt\nindex 0000000..0000000 100644\n\
             --- a/p/notes.txt\n+++ b/p/notes.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+gamma\n \n"
        );
    }

    /// Three lines of context; changes further apart are separate hunks.
    #[test]
    fn long_files_get_three_lines_of_context_per_hunk() {
        let old: String = (1..=20).map(|n| format!("l{n}\n")).collect();
        let new = old.replace("l2\n", "L2\n").replace("l15\n", "L15\n");
        let diff = render("/f", Some(&old), &new);
        let hunks: Vec<&str> = diff.split("@@ -").skip(1).collect();
        assert_eq!(
            hunks,
            [
                "1,5 +1,5 @@\n l1\n-l2\n+L2\n l3\n l4\n l5\n",
                "12,7 +12,7 @@\n l12\n l13\n l14\n-l15\n+L15\n l16\n l17\n l18\n",
            ]
        );
    }

    #[test]
    fn writes_and_edits_are_diffed_against_the_file_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.txt");
        std::fs::write(&path, "alpha\nbeta\n").unwrap();
        let shown = path.display().to_string();
        let edit = json!({"file_path": "notes.txt", "old_string": "beta", "new_string": "gamma"});
        assert_eq!(
            call(dir.path(), "edit", edit),
            Some(render(&shown, Some("alpha\nbeta\n"), "alpha\ngamma\n"))
        );
        let write = json!({"file_path": shown, "content": "new\n"});
        assert_eq!(
            call(dir.path(), "write", write),
            Some(render(&shown, Some("alpha\nbeta\n"), "new\n"))
        );
        let create = json!({"file_path": "out.txt", "content": "x\n"});
        let out = dir.path().join("out.txt").display().to_string();
        assert_eq!(
            call(dir.path(), "write", create),
            Some(render(&out, None, "x\n"))
        );
        // No change to show: an old_string not in the file, a missing file.
        let missing = json!({"file_path": "notes.txt", "old_string": "zeta", "new_string": "z"});
        assert_eq!(call(dir.path(), "edit", missing), None);
        let gone = json!({"file_path": "gone.txt", "old_string": "a", "new_string": "b"});
        assert_eq!(call(dir.path(), "edit", gone), None);
        assert_eq!(call(dir.path(), "bash", json!({"command": "ls"})), None);
    }
}
