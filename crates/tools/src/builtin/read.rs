//! `read`: returns a range of lines of a text file.
//!
//! Lines are the pieces between `\n` separators, so a file ending in a
//! newline has a final empty line — `alpha\nbeta\n` has three lines and
//! renders as `1\talpha\n2\tbeta\n3\t`, exactly as Claude Code shows it.

use async_trait::async_trait;
use dsh_protocol::ToolSpec;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{TypedTool, decode_text, display_path, spec};
use crate::{Rendered, ToolContext, ToolError};

const NAME: &str = "read";

/// Lines returned when `limit` is not given.
pub const DEFAULT_LIMIT: u64 = 2_000;
/// Files larger than this are refused (read a range with `bash` instead).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// Rendered lines longer than this many characters are cut with a marker.
pub const MAX_RENDERED_LINE_CHARS: usize = 2_000;

/// The `read` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadTool;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {
    file_path: String,
    #[serde(default)]
    offset: Option<u64>,
    #[serde(default)]
    limit: Option<u64>,
}

/// The canonical value of a `read` call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadOutput {
    /// Absolute path of the file.
    pub file_path: String,
    /// The raw text of the returned lines, joined by `\n`.
    pub content: String,
    /// How many lines `content` holds (0 when the range is empty).
    pub num_lines: u64,
    /// 1-based number of the first returned line.
    pub start_line: u64,
    /// Lines in the whole file (0 for an empty file).
    pub total_lines: u64,
}

#[async_trait]
impl TypedTool for ReadTool {
    const NAME: &'static str = NAME;
    type Args = Args;
    type Output = ReadOutput;

    fn describe(&self) -> ToolSpec {
        spec(
            NAME,
            "Reads a text file and returns its lines numbered like `cat -n`. By default up to \
             2000 lines from the start; use offset (1-based line) and limit for other ranges.",
            json!({
                "file_path": {"type": "string", "description": "Path of the file (absolute, or relative to the working directory)."},
                "offset": {"type": "integer", "description": "1-based line number to start at."},
                "limit": {"type": "integer", "description": "Number of lines to return (default 2000)."}
            }),
            &["file_path"],
        )
    }

    async fn call(&self, ctx: &ToolContext, args: Args) -> Result<ReadOutput, ToolError> {
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
        if limit == 0 {
            return Err(ToolError(format!("{NAME}: limit must be at least 1")));
        }
        let start_line = args.offset.unwrap_or(1).max(1);
        let path = ctx.resolve(&args.file_path);
        let shown = display_path(&path);

        let metadata = tokio::fs::metadata(&path).await.map_err(|err| {
            if err.kind() == std::io::ErrorKind::NotFound {
                ToolError(format!("{NAME}: file does not exist: {shown}"))
            } else {
                ToolError(format!("{NAME}: cannot access {shown}: {err}"))
            }
        })?;
        check_kind(&shown, &metadata.file_type())?;
        if metadata.len() > MAX_FILE_BYTES {
            return Err(too_large(&shown, metadata.len()));
        }
        let bytes = {
            let path = path.clone();
            let shown = shown.clone();
            tokio::task::spawn_blocking(move || read_bounded(&path, &shown))
                .await
                .map_err(|err| ToolError(format!("{NAME}: the read did not finish: {err}")))??
        };
        let text = decode_text(bytes).ok_or_else(|| {
            ToolError(format!(
                "{NAME}: {shown} appears to be a binary file; it cannot be read as text"
            ))
        })?;
        Ok(select_lines(shown, &text, start_line, limit))
    }

    fn overlap(&self, args: &Self::Args, cwd: &std::path::Path) -> crate::Concurrency {
        crate::Concurrency::reads(cwd, &args.file_path)
    }

    fn show(&self, output: ReadOutput) -> Result<Rendered, ToolError> {
        render_output(&output).map(|content| Rendered {
            content,
            is_error: false,
        })
    }
}

/// Refuses everything but regular files: a FIFO blocks a reader forever and
/// a device such as `/dev/zero` never ends, so neither is "a file" to read.
fn check_kind(shown: &str, kind: &std::fs::FileType) -> Result<(), ToolError> {
    use std::os::unix::fs::FileTypeExt as _;
    let what = if kind.is_file() {
        return Ok(());
    } else if kind.is_dir() {
        return Err(ToolError(format!(
            "{NAME}: {shown} is a directory, not a file (list it with glob or bash)"
        )));
    } else if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    };
    Err(ToolError(format!(
        "{NAME}: cannot read {shown}: it is {what}; only regular files can be read"
    )))
}

fn too_large(shown: &str, len: u64) -> ToolError {
    ToolError(format!(
        "{NAME}: {shown} is {len} bytes, larger than the {MAX_FILE_BYTES}-byte limit"
    ))
}

/// Reads at most [`MAX_FILE_BYTES`] from a regular file. The open does not
/// block (a path swapped for a FIFO after the first check cannot hang the
/// tool), the kind is checked again on the open handle, and the read is
/// bounded even if the file grows meanwhile.
fn read_bounded(path: &std::path::Path, shown: &str) -> Result<Vec<u8>, ToolError> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    #[allow(clippy::disallowed_methods)] // custom_flags/mode: std's OpenOptionsExt
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|err| ToolError(format!("{NAME}: cannot read {shown}: {err}")))?;
    let metadata = file
        .metadata()
        .map_err(|err| ToolError(format!("{NAME}: cannot read {shown}: {err}")))?;
    check_kind(shown, &metadata.file_type())?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| ToolError(format!("{NAME}: cannot read {shown}: {err}")))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(shown, bytes.len() as u64));
    }
    Ok(bytes)
}

fn select_lines(file_path: String, text: &str, start_line: u64, limit: u64) -> ReadOutput {
    if text.is_empty() {
        return ReadOutput {
            file_path,
            content: String::new(),
            num_lines: 0,
            start_line,
            total_lines: 0,
        };
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let total = lines.len();
    let start = usize::try_from(start_line - 1)
        .unwrap_or(usize::MAX)
        .min(total);
    let end = start
        .saturating_add(usize::try_from(limit).unwrap_or(usize::MAX))
        .min(total);
    let selected = &lines[start..end];
    ReadOutput {
        file_path,
        content: selected.join("\n"),
        num_lines: selected.len() as u64,
        start_line,
        total_lines: total as u64,
    }
}

fn render_output(output: &ReadOutput) -> Result<String, ToolError> {
    let invalid = |why: &str| Err(ToolError(format!("{NAME}: invalid result value: {why}")));
    if output.start_line == 0 {
        return invalid("start_line must be at least 1");
    }
    if output.num_lines == 0 {
        if !output.content.is_empty() {
            return invalid("num_lines is 0 but content is not empty");
        }
        return Ok(if output.total_lines == 0 {
            "Warning: the file exists but the contents are empty.".to_owned()
        } else {
            format!(
                "Warning: the file exists but is shorter than the provided offset ({}). The file has {} lines.",
                output.start_line, output.total_lines
            )
        });
    }
    let lines: Vec<&str> = output.content.split('\n').collect();
    if lines.len() as u64 != output.num_lines {
        return invalid(&format!(
            "num_lines is {} but content has {} lines",
            output.num_lines,
            lines.len()
        ));
    }
    let last_line = output.start_line.saturating_add(output.num_lines - 1);
    if last_line > output.total_lines {
        return invalid(&format!(
            "lines {}..={last_line} exceed total_lines {}",
            output.start_line, output.total_lines
        ));
    }
    let numbered: Vec<String> = lines
        .iter()
        .zip(output.start_line..)
        .map(|(line, number)| format!("{number}\t{}", cut_line(line)))
        .collect();
    Ok(numbered.join("\n"))
}

fn cut_line(line: &str) -> std::borrow::Cow<'_, str> {
    match line.char_indices().nth(MAX_RENDERED_LINE_CHARS) {
        None => line.into(),
        Some((cut, _)) => format!("{}… [line truncated]", &line[..cut]).into(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests may unwrap
mod tests {
    use super::*;
    use crate::Tool;
    use pretty_assertions::assert_eq;
    use tokio_util::sync::CancellationToken;

    fn ctx(dir: &std::path::Path) -> ToolContext {
        ToolContext::new(dir, CancellationToken::new())
    }

    #[tokio::test]
    async fn whole_file_matches_claude_code_rendering() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
        let value = ReadTool
            .run(&ctx(dir.path()), &json!({"file_path": "notes.txt"}))
            .await
            .unwrap();
        let abs = dir.path().join("notes.txt").to_string_lossy().into_owned();
        assert_eq!(
            value,
            json!({"file_path": abs, "content": "alpha\nbeta\n", "num_lines": 3, "start_line": 1, "total_lines": 3})
        );
        let rendered = ReadTool.render(&value).unwrap();
        assert_eq!(rendered.content, "1\talpha\n2\tbeta\n3\t");
        assert!(!rendered.is_error);
    }

    #[tokio::test]
    async fn offset_and_limit_select_a_range() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
        let file = dir.path().join("ten.txt");
        std::fs::write(&file, text).unwrap();
        let value = ReadTool
            .run(
                &ctx(dir.path()),
                &json!({"file_path": file.to_str().unwrap(), "offset": 4, "limit": 3}),
            )
            .await
            .unwrap();
        let out: ReadOutput = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(out.content, "line 4\nline 5\nline 6");
        assert_eq!((out.num_lines, out.start_line, out.total_lines), (3, 4, 11));
        assert_eq!(
            ReadTool.render(&value).unwrap().content,
            "4\tline 4\n5\tline 5\n6\tline 6"
        );
    }

    #[tokio::test]
    async fn default_limit_is_2000_lines() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (1..=2500).map(|i| format!("{i}\n")).collect();
        std::fs::write(dir.path().join("big.txt"), text).unwrap();
        let value = ReadTool
            .run(&ctx(dir.path()), &json!({"file_path": "big.txt"}))
            .await
            .unwrap();
        let out: ReadOutput = serde_json::from_value(value).unwrap();
        assert_eq!(out.num_lines, 2000);
        assert_eq!(out.total_lines, 2501);
        assert!(out.content.ends_with("\n2000"));
    }

    #[tokio::test]
    async fn offset_past_the_end_and_empty_files_warn() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("short.txt"), "a\nb").unwrap();
        std::fs::write(dir.path().join("empty.txt"), "").unwrap();
        let past = ReadTool
            .run(
                &ctx(dir.path()),
                &json!({"file_path": "short.txt", "offset": 9}),
            )
            .await
            .unwrap();
        assert_eq!(
            ReadTool.render(&past).unwrap().content,
            "Warning: the file exists but is shorter than the provided offset (9). The file has 2 lines."
        );
        let empty = ReadTool
            .run(&ctx(dir.path()), &json!({"file_path": "empty.txt"}))
            .await
            .unwrap();
        assert_eq!(empty["total_lines"], 0);
        assert_eq!(
            ReadTool.render(&empty).unwrap().content,
            "Warning: the file exists but the contents are empty."
        );
    }

    #[tokio::test]
    async fn missing_directory_and_binary_files_are_errors_naming_the_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("bin.dat"), [1u8, 0, 2, 3]).unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        for (name, needle) in [
            ("nope.txt", "does not exist"),
            ("sub", "is a directory"),
            ("bin.dat", "binary"),
        ] {
            let err = ReadTool
                .run(&ctx(dir.path()), &json!({"file_path": name}))
                .await
                .unwrap_err();
            let abs = dir.path().join(name);
            assert!(err.0.contains(abs.to_str().unwrap()), "{err}");
            assert!(err.0.contains(needle), "{err}");
        }
    }

    #[tokio::test]
    async fn fifos_and_devices_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        for (path, needle) in [
            (fifo.to_str().unwrap(), "FIFO"),
            ("/dev/zero", "character device"),
        ] {
            // A blocking open or an unbounded read would never finish.
            let err = tokio::time::timeout(
                std::time::Duration::from_secs(10),
                ReadTool.run(&ctx(dir.path()), &json!({"file_path": path})),
            )
            .await
            .expect("read must not block on a non-regular file")
            .unwrap_err();
            assert!(err.0.contains(needle), "{err}");
            assert!(err.0.contains("only regular files"), "{err}");
        }
    }

    #[test]
    fn the_bounded_read_refuses_a_file_that_outgrew_the_check() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("grown.txt");
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(MAX_FILE_BYTES + 1).unwrap();
        let err = read_bounded(&path, "grown.txt").unwrap_err();
        assert!(err.0.contains("larger than"), "{err}");
    }

    #[tokio::test]
    async fn zero_limit_is_rejected() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a").unwrap();
        assert!(
            ReadTool
                .run(&ctx(dir.path()), &json!({"file_path": "a.txt", "limit": 0}))
                .await
                .is_err()
        );
    }

    #[test]
    fn long_lines_are_cut_in_rendering_only() {
        let long = "x".repeat(MAX_RENDERED_LINE_CHARS + 10);
        let value = json!({"file_path": "/f", "content": long, "num_lines": 1, "start_line": 1, "total_lines": 1});
        let content = ReadTool.render(&value).unwrap().content;
        assert!(content.ends_with("… [line truncated]"));
        assert_eq!(
            content.len(),
            2 + MAX_RENDERED_LINE_CHARS + "… [line truncated]".len()
        );
    }

    #[test]
    fn render_rejects_invalid_values() {
        for bad in [
            json!({"file_path": "/f", "content": "a\nb", "num_lines": 1, "start_line": 1, "total_lines": 2}),
            json!({"file_path": "/f", "content": "a", "num_lines": 1, "start_line": 0, "total_lines": 1}),
            json!({"file_path": "/f", "content": "a", "num_lines": 1, "start_line": 5, "total_lines": 2}),
            json!({"file_path": "/f", "content": "a", "num_lines": 0, "start_line": 1, "total_lines": 2}),
            json!({"file_path": "/f", "content": "a", "num_lines": -1, "start_line": 1, "total_lines": 2}),
            json!({"file_path": "/f", "content": "a"}),
            json!({"filePath": "/f", "content": "a", "num_lines": 1, "start_line": 1, "total_lines": 1}),
        ] {
            assert!(ReadTool.render(&bad).is_err(), "accepted {bad}");
        }
    }
}
