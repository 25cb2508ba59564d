//! `grep`: searches file contents with a regular expression.
//!
//! Deliberately small next to ripgrep: the pattern is a Rust `regex`
//! (matched line by line; `-i` for case-insensitive), `path` is a file or a
//! directory (default: the session cwd), and a directory walk sees the files
//! `glob` sees (ignore files honoured, hidden files kept, version-control
//! directories skipped; see the `walk` module) less binary files (a NUL byte
//! or invalid UTF-8) and files over [`MAX_FILE_BYTES`]. `glob`
//! filters files: a pattern without `/` matches the file name, one with `/`
//! the path relative to the search root.
//!
//! Modes: `files_with_matches` (default; paths newest first), `content`
//! (`path:line:text` for each matching line, files in path order, at most
//! [`MAX_CONTENT_LINES`] lines shown) and `count` (`path:count`).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use async_trait::async_trait;
use dsh_protocol::ToolSpec;
use globset::{GlobBuilder, GlobMatcher};
use regex::{Regex, RegexBuilder};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::walk::files_under;
use super::{TypedTool, blocking, check_cancelled, decode_text, display_path, resolve_root, spec};
use crate::{Rendered, ToolContext, ToolError};

const NAME: &str = "grep";

/// Files larger than this are not searched.
pub const MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;
/// Most matching lines listed in `content` mode (the counts stay exact).
pub const MAX_CONTENT_LINES: usize = 1_000;

/// The `grep` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct GrepTool;

/// What a `grep` call reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrepMode {
    /// The paths of files with a match.
    #[default]
    FilesWithMatches,
    /// The matching lines.
    Content,
    /// Matching lines per file.
    Count,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    glob: Option<String>,
    #[serde(default)]
    output_mode: GrepMode,
    #[serde(default, rename = "-i")]
    case_insensitive: bool,
}

/// The canonical value of a `grep` call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrepOutput {
    /// The mode the search ran in.
    pub mode: GrepMode,
    /// Absolute paths of the files with a match.
    pub filenames: Vec<String>,
    /// `content` mode: `path:line:text` lines; `count` mode: `path:count`
    /// lines; `null` in `files_with_matches` mode.
    pub content: Option<String>,
    /// How many files matched.
    pub num_files: u64,
    /// How many lines matched, over all files.
    pub num_matches: u64,
}

#[async_trait]
impl TypedTool for GrepTool {
    const NAME: &'static str = NAME;
    type Args = Args;
    type Output = GrepOutput;

    fn describe(&self) -> ToolSpec {
        spec(
            NAME,
            "Searches file contents with a regular expression (Rust regex syntax). Skips files \
             ignored by .gitignore/.ignore, version-control directories and binary files. \
             output_mode: \
             files_with_matches (default), content (path:line:text) or count.",
            json!({
                "pattern": {"type": "string", "description": "The regular expression."},
                "path": {"type": "string", "description": "File or directory to search (default: the working directory)."},
                "glob": {"type": "string", "description": "Only search files matching this glob (e.g. `*.rs`, `src/**/*.ts`)."},
                "output_mode": {
                    "type": "string",
                    "enum": ["files_with_matches", "content", "count"],
                    "description": "What to report (default files_with_matches)."
                },
                "-i": {"type": "boolean", "description": "Case-insensitive search."}
            }),
            &["pattern"],
        )
    }

    async fn call(&self, ctx: &ToolContext, args: Args) -> Result<GrepOutput, ToolError> {
        let regex = RegexBuilder::new(&args.pattern)
            .case_insensitive(args.case_insensitive)
            .build()
            .map_err(|err| ToolError(format!("{NAME}: invalid pattern: {err}")))?;
        let filter = match &args.glob {
            Some(glob) if !glob.is_empty() => Some(FileFilter::new(glob)?),
            _ => None,
        };
        let root = resolve_root(NAME, ctx, args.path.as_deref()).await?;
        let cancel = ctx.cancel.clone();
        let mode = args.output_mode;
        let output = blocking(NAME, move || {
            let files = candidate_files(&root, filter.as_ref(), &cancel)?;
            search(files, &regex, mode, &cancel)
        })
        .await?;
        Ok(output)
    }

    fn overlap(&self, args: &Self::Args, cwd: &std::path::Path) -> crate::Concurrency {
        crate::Concurrency::reads(
            cwd,
            args.path
                .as_deref()
                .filter(|path| !path.is_empty())
                .unwrap_or("."),
        )
    }

    fn show(&self, output: GrepOutput) -> Result<Rendered, ToolError> {
        let invalid = |why: String| ToolError(format!("{NAME}: invalid result value: {why}"));
        if output.num_files != output.filenames.len() as u64 {
            return Err(invalid(format!(
                "num_files is {} but filenames has {}",
                output.num_files,
                output.filenames.len()
            )));
        }
        let content = match (output.mode, &output.content) {
            (GrepMode::FilesWithMatches, None) => match output.num_files {
                0 => "No files found".to_owned(),
                n => format!(
                    "Found {n} {}\n{}",
                    plural(n, "file", "files"),
                    output.filenames.join("\n")
                ),
            },
            (GrepMode::Content, Some(text)) => {
                if text.is_empty() {
                    "No matches found".to_owned()
                } else {
                    text.clone()
                }
            }
            (GrepMode::Count, Some(text)) => {
                if text.is_empty() {
                    "No matches found".to_owned()
                } else {
                    format!(
                        "{text}\n\nFound {} total {} across {} {}.",
                        output.num_matches,
                        plural(output.num_matches, "occurrence", "occurrences"),
                        output.num_files,
                        plural(output.num_files, "file", "files")
                    )
                }
            }
            (GrepMode::FilesWithMatches, Some(_)) => {
                return Err(invalid(
                    "content must be null in files_with_matches mode".into(),
                ));
            }
            (GrepMode::Content | GrepMode::Count, None) => {
                return Err(invalid(
                    "content must be a string in content and count modes".into(),
                ));
            }
        };
        Ok(Rendered {
            content,
            is_error: false,
        })
    }
}

fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

/// The `glob` argument: file-name match without `/`, relative-path match with.
struct FileFilter {
    matcher: GlobMatcher,
    by_name: bool,
}

impl FileFilter {
    fn new(glob: &str) -> Result<Self, ToolError> {
        let matcher = GlobBuilder::new(glob)
            .literal_separator(true)
            .build()
            .map_err(|err| ToolError(format!("{NAME}: invalid glob {glob:?}: {err}")))?
            .compile_matcher();
        Ok(FileFilter {
            matcher,
            by_name: !glob.contains('/'),
        })
    }

    fn accepts(&self, root: &Path, path: &Path) -> bool {
        if self.by_name {
            path.file_name()
                .is_some_and(|name| self.matcher.is_match(Path::new(name)))
        } else {
            path.strip_prefix(root)
                .is_ok_and(|relative| self.matcher.is_match(relative))
        }
    }
}

/// Files to search, in path order. A root that is a file is searched even
/// if an ignore file or the glob would skip it.
fn candidate_files(
    root: &Path,
    filter: Option<&FileFilter>,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<Vec<PathBuf>, ToolError> {
    if root.is_file() {
        return Ok(vec![root.to_path_buf()]);
    }
    let mut files = files_under(NAME, root, cancel)?;
    if let Some(filter) = filter {
        files.retain(|path| filter.accepts(root, path));
    }
    Ok(files)
}

/// Reads a file as text if it is small enough and not binary.
fn read_text(path: &Path) -> Option<String> {
    let metadata = fs_err::metadata(path).ok()?;
    if metadata.len() > MAX_FILE_BYTES {
        tracing::debug!(path = %path.display(), "grep: skipping large file");
        return None;
    }
    match fs_err::read(path) {
        Ok(bytes) => decode_text(bytes),
        Err(err) => {
            tracing::debug!(path = %path.display(), %err, "grep: skipping unreadable file");
            None
        }
    }
}

fn search(
    files: Vec<PathBuf>,
    regex: &Regex,
    mode: GrepMode,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<GrepOutput, ToolError> {
    let mut matched: Vec<(SystemTime, String)> = Vec::new();
    let mut content_lines: Vec<String> = Vec::new();
    let mut omitted_lines = 0usize;
    let mut num_matches = 0u64;
    for path in files {
        check_cancelled(NAME, cancel)?;
        let Some(text) = read_text(&path) else {
            continue;
        };
        let shown = display_path(&path);
        let mut count = 0u64;
        for (index, line) in text.lines().enumerate() {
            if !regex.is_match(line) {
                continue;
            }
            count += 1;
            if mode == GrepMode::Content {
                if content_lines.len() < MAX_CONTENT_LINES {
                    content_lines.push(format!("{shown}:{}:{line}", index + 1));
                } else {
                    omitted_lines += 1;
                }
            }
        }
        if count == 0 {
            continue;
        }
        num_matches += count;
        if mode == GrepMode::Count {
            content_lines.push(format!("{shown}:{count}"));
        }
        let modified = fs_err::metadata(&path)
            .and_then(|m| m.modified())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        matched.push((modified, shown));
    }
    if mode == GrepMode::FilesWithMatches {
        matched.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    }
    if omitted_lines > 0 {
        content_lines.push(format!(
            "[... {omitted_lines} more matching lines not shown]"
        ));
    }
    let filenames: Vec<String> = matched.into_iter().map(|(_, path)| path).collect();
    Ok(GrepOutput {
        mode,
        num_files: filenames.len() as u64,
        filenames,
        content: match mode {
            GrepMode::FilesWithMatches => None,
            GrepMode::Content | GrepMode::Count => Some(content_lines.join("\n")),
        },
        num_matches,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests may unwrap
mod tests {
    use super::*;
    use crate::Tool;
    use pretty_assertions::assert_eq;
    use serde_json::Value;
    use std::time::Duration;
    use tokio_util::sync::CancellationToken;

    fn ctx(dir: &Path) -> ToolContext {
        ToolContext::new(dir, CancellationToken::new())
    }

    fn write(path: &Path, text: &str, age_secs: u64) {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, text).unwrap();
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(SystemTime::now() - Duration::from_secs(age_secs))
            .unwrap();
    }

    /// A tree with matches in searched and skipped places.
    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(&root.join("a.rs"), "fn main() {}\n// TODO one\n", 100);
        write(&root.join("src/b.rs"), "todo two\nTODO three\n", 10);
        write(&root.join("src/c.txt"), "nothing here\n", 5);
        write(&root.join(".hidden/d.rs"), "TODO hidden\n", 1);
        write(&root.join("target/e.rs"), "TODO built\n", 1);
        write(&root.join(".git/f"), "TODO git\n", 1);
        write(&root.join(".gitignore"), "target/\n", 200);
        std::fs::write(root.join("bin.dat"), b"TODO\0binary").unwrap();
        dir
    }

    async fn grep(dir: &Path, args: Value) -> GrepOutput {
        serde_json::from_value(GrepTool.run(&ctx(dir), &args).await.unwrap()).unwrap()
    }

    #[tokio::test]
    async fn files_mode_honours_ignores_skips_vcs_and_binary() {
        let dir = tree();
        let abs = |p: &str| dir.path().join(p).to_string_lossy().into_owned();
        let out = grep(dir.path(), json!({"pattern": "TODO"})).await;
        assert_eq!(
            out,
            GrepOutput {
                mode: GrepMode::FilesWithMatches,
                filenames: vec![abs(".hidden/d.rs"), abs("src/b.rs"), abs("a.rs")],
                content: None,
                num_files: 3,
                num_matches: 3,
            }
        );
        let rendered = GrepTool
            .render(&serde_json::to_value(&out).unwrap())
            .unwrap();
        assert_eq!(
            rendered.content,
            format!(
                "Found 3 files\n{}\n{}\n{}",
                abs(".hidden/d.rs"),
                abs("src/b.rs"),
                abs("a.rs")
            )
        );
    }

    #[tokio::test]
    async fn content_mode_case_insensitive_with_glob() {
        let dir = tree();
        let abs = |p: &str| dir.path().join(p).to_string_lossy().into_owned();
        let out = grep(
            dir.path(),
            json!({"pattern": "todo", "-i": true, "output_mode": "content", "glob": "*.rs"}),
        )
        .await;
        assert_eq!(out.num_matches, 4);
        assert_eq!(out.num_files, 3);
        assert_eq!(
            out.content.as_deref(),
            Some(
                format!(
                    "{h}:1:TODO hidden\n{a}:2:// TODO one\n{b}:1:todo two\n{b}:2:TODO three",
                    h = abs(".hidden/d.rs"),
                    a = abs("a.rs"),
                    b = abs("src/b.rs")
                )
                .as_str()
            )
        );
        let value = serde_json::to_value(&out).unwrap();
        assert_eq!(
            GrepTool.render(&value).unwrap().content,
            out.content.unwrap()
        );
    }

    #[tokio::test]
    async fn count_mode_and_path_scoping() {
        let dir = tree();
        let abs = |p: &str| dir.path().join(p).to_string_lossy().into_owned();
        let out = grep(
            dir.path(),
            json!({"pattern": "(?i)todo", "output_mode": "count", "path": "src"}),
        )
        .await;
        assert_eq!(
            out.content.as_deref(),
            Some(format!("{}:2", abs("src/b.rs")).as_str())
        );
        assert_eq!(
            GrepTool
                .render(&serde_json::to_value(&out).unwrap())
                .unwrap()
                .content,
            format!(
                "{}:2\n\nFound 2 total occurrences across 1 file.",
                abs("src/b.rs")
            )
        );
        // A file as the path, even an ignored one.
        let single = grep(
            dir.path(),
            json!({"pattern": "TODO", "path": "target/e.rs"}),
        )
        .await;
        assert_eq!(single.filenames, vec![abs("target/e.rs")]);
        // A glob with a slash matches the relative path.
        let scoped = grep(dir.path(), json!({"pattern": "TODO", "glob": "src/*.rs"})).await;
        assert_eq!(scoped.filenames, vec![abs("src/b.rs")]);
    }

    #[tokio::test]
    async fn no_match_and_bad_inputs() {
        let dir = tree();
        let none = GrepTool
            .run(&ctx(dir.path()), &json!({"pattern": "zzz"}))
            .await
            .unwrap();
        assert_eq!(GrepTool.render(&none).unwrap().content, "No files found");
        let none = GrepTool
            .run(
                &ctx(dir.path()),
                &json!({"pattern": "zzz", "output_mode": "content"}),
            )
            .await
            .unwrap();
        assert_eq!(GrepTool.render(&none).unwrap().content, "No matches found");
        let err = GrepTool
            .run(&ctx(dir.path()), &json!({"pattern": "("}))
            .await
            .unwrap_err();
        assert!(err.0.contains("invalid pattern"), "{err}");
        let err = GrepTool
            .run(&ctx(dir.path()), &json!({"pattern": "x", "path": "nope"}))
            .await
            .unwrap_err();
        assert!(
            err.0.contains(dir.path().join("nope").to_str().unwrap()),
            "{err}"
        );
        let err = GrepTool
            .run(
                &ctx(dir.path()),
                &json!({"pattern": "x", "output_mode": "lines"}),
            )
            .await
            .unwrap_err();
        assert!(err.0.contains("invalid arguments"), "{err}");
    }

    #[tokio::test]
    async fn content_lines_are_capped_but_counts_exact() {
        let dir = tempfile::tempdir().unwrap();
        let text = "hit\n".repeat(MAX_CONTENT_LINES + 5);
        std::fs::write(dir.path().join("many.txt"), text).unwrap();
        let out = grep(
            dir.path(),
            json!({"pattern": "hit", "output_mode": "content"}),
        )
        .await;
        assert_eq!(out.num_matches, (MAX_CONTENT_LINES + 5) as u64);
        let content = out.content.unwrap();
        assert_eq!(content.lines().count(), MAX_CONTENT_LINES + 1);
        assert!(content.ends_with("[... 5 more matching lines not shown]"));
    }

    #[test]
    fn render_rejects_invalid_values() {
        for bad in [
            json!({"mode": "files_with_matches", "filenames": [], "content": "x", "num_files": 0, "num_matches": 0}),
            json!({"mode": "content", "filenames": [], "content": null, "num_files": 0, "num_matches": 0}),
            json!({"mode": "files_with_matches", "filenames": ["/a"], "content": null, "num_files": 3, "num_matches": 1}),
            json!({"mode": "lines", "filenames": [], "content": null, "num_files": 0, "num_matches": 0}),
            json!({"mode": "count", "filenames": [], "content": "", "numFiles": 0, "num_matches": 0}),
        ] {
            assert!(GrepTool.render(&bad).is_err(), "accepted {bad}");
        }
    }
}
