//! A file change ([`dsh_tools::change::FileChange`], the model ACP sends as
//! `diff` content too) as the terminal shows it: a one-line summary and the
//! unified diff's lines, each with its line number, removals red and
//! additions green (with `-`/`+` marks, so it reads without colour too).

use std::path::Path;

use dsh_tools::change::FileChange;

use crate::tui::text::Tone;

/// The most diff lines shown for one change (the rest is counted).
pub const DIFF_LINES: usize = 40;

/// `notes.txt` (relative to `cwd` when inside it).
pub fn shown_path(change: &FileChange, cwd: &Path) -> String {
    change
        .path
        .strip_prefix(cwd)
        .unwrap_or(&change.path)
        .display()
        .to_string()
}

fn plural(count: usize, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

/// `1 addition and 1 removal`.
pub fn counts_text(change: &FileChange) -> String {
    let counts = change.counts();
    format!(
        "{} and {}",
        plural(counts.added, "addition", "additions"),
        plural(counts.removed, "removal", "removals")
    )
}

/// What a finished call did: `Updated notes.txt with 1 addition and 1
/// removal`, `Created new.txt with 2 lines`.
pub fn summary(change: &FileChange, cwd: &Path) -> String {
    let path = shown_path(change, cwd);
    if change.created() {
        format!(
            "Created {path} with {}",
            plural(change.new_text.lines().count(), "line", "lines")
        )
    } else if change.old_text.as_deref() == Some(change.new_text.as_str()) {
        format!("{path} unchanged")
    } else {
        format!("Updated {path} with {}", counts_text(change))
    }
}

/// The diff's lines, indented by `indent`, at most [`DIFF_LINES`] of them:
/// `  12 -old`, `  12 +new`, `  13  context`, `…` between hunks.
pub fn lines(change: &FileChange, indent: &str) -> Vec<(Tone, String)> {
    let hunks = change.hunks();
    let width = hunks
        .iter()
        .map(|hunk| (hunk.old_start + hunk.old_lines).max(hunk.new_start + hunk.new_lines))
        .max()
        .unwrap_or(0)
        .to_string()
        .len();
    let mut out = Vec::new();
    for (index, hunk) in hunks.iter().enumerate() {
        if index > 0 {
            out.push((Tone::Dim, format!("{indent}{:>width$} ⋮", "")));
        }
        let (mut old, mut new) = (hunk.old_start.max(1), hunk.new_start.max(1));
        for line in &hunk.lines {
            let (mark, rest) = line.split_at(line.chars().next().map_or(0, char::len_utf8));
            let (tone, number) = match mark {
                "-" => {
                    old += 1;
                    (Tone::Bad, old - 1)
                }
                "+" => {
                    new += 1;
                    (Tone::Good, new - 1)
                }
                " " => {
                    old += 1;
                    new += 1;
                    (Tone::Dim, new - 1)
                }
                // `\ No newline at end of file`
                _ => {
                    out.push((Tone::Dim, format!("{indent}{:>width$}  {line}", "")));
                    continue;
                }
            };
            let mark = if mark == " " { " " } else { mark };
            out.push((tone, format!("{indent}{number:>width$} {mark}{rest}")));
        }
    }
    if out.len() > DIFF_LINES {
        let hidden = out.len() - DIFF_LINES;
        out.truncate(DIFF_LINES);
        out.push((Tone::Dim, format!("{indent}… +{hidden} lines")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::path::PathBuf;

    fn change(old: Option<&str>, new: &str) -> FileChange {
        FileChange {
            path: PathBuf::from("/p/src/a.rs"),
            old_text: old.map(str::to_owned),
            new_text: new.to_owned(),
        }
    }

    #[test]
    fn an_edit_reads_as_numbered_removals_and_additions() {
        let edit = change(Some("alpha\nbeta\ngamma\n"), "alpha\nBETA\ngamma\n");
        assert_eq!(
            summary(&edit, Path::new("/p")),
            "Updated src/a.rs with 1 addition and 1 removal"
        );
        let shown: Vec<(Tone, String)> = lines(&edit, "    ");
        assert_eq!(
            shown,
            vec![
                (Tone::Dim, "    1  alpha".to_owned()),
                (Tone::Bad, "    2 -beta".to_owned()),
                (Tone::Good, "    2 +BETA".to_owned()),
                (Tone::Dim, "    3  gamma".to_owned()),
            ]
        );
    }

    #[test]
    fn a_new_file_is_created_and_long_diffs_are_cut() {
        let text: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let write = change(None, &text);
        assert_eq!(
            summary(&write, Path::new("/elsewhere")),
            "Created /p/src/a.rs with 100 lines"
        );
        let shown = lines(&write, "");
        assert_eq!(shown.len(), DIFF_LINES + 1);
        assert_eq!(shown[0], (Tone::Good, "  1 +line 1".to_owned()));
        assert_eq!(shown[DIFF_LINES].1, "… +60 lines");
    }
}
