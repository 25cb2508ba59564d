//! Unified-diff hunks (`structured_patch`) for the `edit` and `write` values.
//!
//! Lines are `\n`-terminated pieces of the text (a final piece without `\n`
//! is a line too, followed in the hunk by `\ No newline at end of file`, as
//! in `diff -u`). The alignment is `similar`'s Myers diff with a deadline, so
//! a pathological pair of texts costs at most [`DIFF_TIMEOUT`] and yields a
//! coarser (still correct) diff. Hunk starts follow `diff -u`: 1-based, and
//! for an empty range the number of the line *before* it.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use similar::{Algorithm, ChangeTag, DiffOp, TextDiff};

/// Unchanged lines shown around each change.
pub const CONTEXT_LINES: usize = 3;
/// Longest time spent aligning two texts before settling for a coarser diff.
pub const DIFF_TIMEOUT: Duration = Duration::from_secs(1);

/// One hunk of a unified diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hunk {
    /// First old line of the hunk (1-based).
    pub old_start: u64,
    /// Old lines covered (context and removed).
    pub old_lines: u64,
    /// First new line of the hunk (1-based).
    pub new_start: u64,
    /// New lines covered (context and added).
    pub new_lines: u64,
    /// `" ctx"`, `"-old"`, `"+new"`, and `"\ No newline at end of file"`.
    pub lines: Vec<String>,
}

impl Hunk {
    /// Checks that the line prefixes and the counts agree.
    pub fn validate(&self) -> Result<(), String> {
        let (mut old, mut new) = (0u64, 0u64);
        for line in &self.lines {
            match line.chars().next() {
                Some(' ') => {
                    old += 1;
                    new += 1;
                }
                Some('-') => old += 1,
                Some('+') => new += 1,
                Some('\\') => {}
                _ => {
                    return Err(format!(
                        "hunk line {line:?} has no ' ', '-', '+' or '\\' prefix"
                    ));
                }
            }
        }
        if old != self.old_lines || new != self.new_lines {
            return Err(format!(
                "hunk counts old_lines={} new_lines={} but its lines make {old} and {new}",
                self.old_lines, self.new_lines
            ));
        }
        Ok(())
    }
}

/// The hunks turning `old` into `new` (empty when they are equal).
pub fn structured_patch(old: &str, new: &str) -> Vec<Hunk> {
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
    diff.grouped_ops(CONTEXT_LINES)
        .iter()
        .filter_map(|group| make_hunk(&diff, group))
        .collect()
}

fn make_hunk<'a>(diff: &TextDiff<'a, 'a, 'a, str>, group: &[DiffOp]) -> Option<Hunk> {
    let (first, last) = (group.first()?, group.last()?);
    let old_range = first.old_range().start..last.old_range().end;
    let new_range = first.new_range().start..last.new_range().end;
    let mut lines = Vec::new();
    for op in group {
        for change in diff.iter_changes(op) {
            let prefix = match change.tag() {
                ChangeTag::Equal => ' ',
                ChangeTag::Delete => '-',
                ChangeTag::Insert => '+',
            };
            let text = change.value();
            lines.push(format!(
                "{prefix}{}",
                text.strip_suffix('\n').unwrap_or(text)
            ));
            if change.missing_newline() {
                lines.push("\\ No newline at end of file".to_owned());
            }
        }
    }
    // `diff -u`: 1-based starts, and for an empty range the line before it.
    let start = |range: &std::ops::Range<usize>| {
        if range.is_empty() {
            range.start as u64
        } else {
            range.start as u64 + 1
        }
    };
    Some(Hunk {
        old_start: start(&old_range),
        old_lines: old_range.len() as u64,
        new_start: start(&new_range),
        new_lines: new_range.len() as u64,
        lines,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests may unwrap
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn hunk(old: (u64, u64), new: (u64, u64), lines: &[&str]) -> Hunk {
        Hunk {
            old_start: old.0,
            old_lines: old.1,
            new_start: new.0,
            new_lines: new.1,
            lines: lines.iter().map(|l| (*l).to_owned()).collect(),
        }
    }

    #[test]
    fn matches_claude_codes_captured_edit() {
        assert_eq!(
            structured_patch("alpha\nbeta\n", "alpha\ngamma\n"),
            vec![hunk((1, 2), (1, 2), &[" alpha", "-beta", "+gamma"])]
        );
    }

    #[test]
    fn equal_texts_have_no_hunks() {
        assert_eq!(structured_patch("a\nb\n", "a\nb\n"), vec![]);
        assert_eq!(structured_patch("", ""), vec![]);
    }

    #[test]
    fn context_is_three_lines_and_distant_changes_split() {
        let old: String = (1..=20).map(|i| format!("{i}\n")).collect();
        let new: String = (1..=20)
            .map(|i| match i {
                2 => "two\n".to_owned(),
                18 => "eighteen\n".to_owned(),
                _ => format!("{i}\n"),
            })
            .collect();
        let hunks = structured_patch(&old, &new);
        assert_eq!(
            hunks,
            vec![
                hunk((1, 5), (1, 5), &[" 1", "-2", "+two", " 3", " 4", " 5"]),
                hunk(
                    (15, 6),
                    (15, 6),
                    &[" 15", " 16", " 17", "-18", "+eighteen", " 19", " 20"]
                ),
            ]
        );
        for h in &hunks {
            h.validate().unwrap();
        }
    }

    #[test]
    fn nearby_changes_merge_into_one_hunk() {
        let old: String = (1..=12).map(|i| format!("{i}\n")).collect();
        let new: String = (1..=12)
            .map(|i| match i {
                3 => "three\n".to_owned(),
                9 => "nine\n".to_owned(),
                _ => format!("{i}\n"),
            })
            .collect();
        let hunks = structured_patch(&old, &new);
        assert_eq!(hunks.len(), 1);
        assert_eq!((hunks[0].old_start, hunks[0].old_lines), (1, 12));
        hunks[0].validate().unwrap();
    }

    #[test]
    fn pure_insertion_and_deletion_ranges() {
        assert_eq!(
            structured_patch("", "new\n"),
            vec![hunk((0, 0), (1, 1), &["+new"])]
        );
        assert_eq!(
            structured_patch("a\nb\n", "a\n"),
            vec![hunk((1, 2), (1, 1), &[" a", "-b"])]
        );
    }

    #[test]
    fn missing_final_newline_is_marked() {
        assert_eq!(
            structured_patch("a\nb", "a\nb\n"),
            vec![hunk(
                (1, 2),
                (1, 2),
                &[" a", "-b", "\\ No newline at end of file", "+b"]
            )]
        );
    }

    #[test]
    fn large_rewrites_stay_consistent() {
        let old: String = (0..5_000).map(|i| format!("old {i}\n")).collect();
        let new: String = (0..5_000)
            .map(|i| format!("new {}\n", i * 7 % 5_000))
            .collect();
        let hunks = structured_patch(&old, &new);
        assert_eq!(hunks.len(), 1);
        assert_eq!((hunks[0].old_lines, hunks[0].new_lines), (5_000, 5_000));
        hunks[0].validate().unwrap();
    }

    #[test]
    fn validate_rejects_inconsistent_hunks() {
        assert!(hunk((1, 1), (1, 1), &["-a"]).validate().is_err());
        assert!(hunk((1, 1), (1, 0), &["?a"]).validate().is_err());
        assert!(hunk((1, 1), (1, 1), &["-a", "+b"]).validate().is_ok());
    }
}
