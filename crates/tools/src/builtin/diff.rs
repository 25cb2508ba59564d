//! A small line diff producing unified-diff hunks (`structured_patch`).
//!
//! Lines are `\n`-terminated pieces of the text (a final piece without `\n`
//! is a line too, followed in the hunk by `\ No newline at end of file`, as
//! in `diff -u`). The common prefix and suffix are trimmed first — an edit
//! usually touches a small region — and the rest is aligned with a longest
//! common subsequence table; past [`MAX_TABLE_CELLS`] the middle is reported
//! as one replacement instead. Hunk starts follow `diff -u`: 1-based, and for
//! an empty range the number of the line *before* it.

use serde::{Deserialize, Serialize};

/// Unchanged lines shown around each change.
pub const CONTEXT_LINES: usize = 3;
/// Largest LCS table (old × new lines of the differing middle) we build.
pub const MAX_TABLE_CELLS: usize = 4_000_000;

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Equal,
    Delete,
    Insert,
}

/// The hunks turning `old` into `new` (empty when they are equal).
pub fn structured_patch(old: &str, new: &str) -> Vec<Hunk> {
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let ops = diff_ops(&old_lines, &new_lines);
    build_hunks(&ops, &old_lines, &new_lines)
}

fn diff_ops(old: &[&str], new: &[&str]) -> Vec<Op> {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let max_suffix = old.len().min(new.len()) - prefix;
    let suffix = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    let old_mid = &old[prefix..old.len() - suffix];
    let new_mid = &new[prefix..new.len() - suffix];

    let mut ops = vec![Op::Equal; prefix];
    if old_mid.len().saturating_mul(new_mid.len()) <= MAX_TABLE_CELLS {
        ops.extend(lcs_ops(old_mid, new_mid));
    } else {
        ops.extend(std::iter::repeat_n(Op::Delete, old_mid.len()));
        ops.extend(std::iter::repeat_n(Op::Insert, new_mid.len()));
    }
    ops.extend(std::iter::repeat_n(Op::Equal, suffix));
    ops
}

fn lcs_ops(old: &[&str], new: &[&str]) -> Vec<Op> {
    let (n, m) = (old.len(), new.len());
    // table[i][j] = LCS length of old[i..] and new[j..], row-major.
    let width = m + 1;
    let mut table = vec![0u32; (n + 1) * width];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            table[i * width + j] = if old[i] == new[j] {
                table[(i + 1) * width + j + 1] + 1
            } else {
                table[(i + 1) * width + j].max(table[i * width + j + 1])
            };
        }
    }
    let mut ops = Vec::with_capacity(n + m);
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && old[i] == new[j] {
            ops.push(Op::Equal);
            i += 1;
            j += 1;
        } else if j == m || (i < n && table[(i + 1) * width + j] >= table[i * width + j + 1]) {
            // Deletions before insertions, as diff -u prints them.
            ops.push(Op::Delete);
            i += 1;
        } else {
            ops.push(Op::Insert);
            j += 1;
        }
    }
    ops
}

fn build_hunks(ops: &[Op], old: &[&str], new: &[&str]) -> Vec<Hunk> {
    // Positions (old index, new index) before each op.
    let mut positions = Vec::with_capacity(ops.len() + 1);
    let (mut o, mut n) = (0usize, 0usize);
    for op in ops {
        positions.push((o, n));
        match op {
            Op::Equal => {
                o += 1;
                n += 1;
            }
            Op::Delete => o += 1,
            Op::Insert => n += 1,
        }
    }
    positions.push((o, n));

    let changes: Vec<usize> = (0..ops.len()).filter(|&k| ops[k] != Op::Equal).collect();
    let mut hunks = Vec::new();
    let mut k = 0;
    while k < changes.len() {
        let first = changes[k];
        let mut last = first;
        while k + 1 < changes.len() && changes[k + 1] - last <= 2 * CONTEXT_LINES + 1 {
            k += 1;
            last = changes[k];
        }
        k += 1;
        let start = first.saturating_sub(CONTEXT_LINES);
        let end = (last + 1 + CONTEXT_LINES).min(ops.len());
        hunks.push(make_hunk(&ops[start..end], positions[start], old, new));
    }
    hunks
}

fn make_hunk(ops: &[Op], (old_pos, new_pos): (usize, usize), old: &[&str], new: &[&str]) -> Hunk {
    let mut lines = Vec::new();
    let (mut o, mut n) = (old_pos, new_pos);
    let mut push = |prefix: char, line: &str| {
        let text = line.strip_suffix('\n').unwrap_or(line);
        lines.push(format!("{prefix}{text}"));
        if !line.ends_with('\n') {
            lines.push("\\ No newline at end of file".to_owned());
        }
    };
    for op in ops {
        match op {
            Op::Equal => {
                push(' ', old[o]);
                o += 1;
                n += 1;
            }
            Op::Delete => {
                push('-', old[o]);
                o += 1;
            }
            Op::Insert => {
                push('+', new[n]);
                n += 1;
            }
        }
    }
    let old_lines = (o - old_pos) as u64;
    let new_lines = (n - new_pos) as u64;
    let start = |pos: usize, count: u64| {
        if count == 0 {
            pos as u64
        } else {
            pos as u64 + 1
        }
    };
    Hunk {
        old_start: start(old_pos, old_lines),
        old_lines,
        new_start: start(new_pos, new_lines),
        new_lines,
        lines,
    }
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
    fn validate_rejects_inconsistent_hunks() {
        assert!(hunk((1, 1), (1, 1), &["-a"]).validate().is_err());
        assert!(hunk((1, 1), (1, 0), &["?a"]).validate().is_err());
        assert!(hunk((1, 1), (1, 1), &["-a", "+b"]).validate().is_ok());
    }
}
