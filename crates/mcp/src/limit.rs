//! The size limits on MCP results, as Claude Code 2.1.328 applies them
//! (captures: `fixtures/claude/captures/mcp_*`).
//!
//! - `MAX_MCP_OUTPUT_TOKENS` unset: a result whose content, written as
//!   pretty JSON, is longer than [`PERSIST_CHARS`] characters is saved to a
//!   file and the model gets a `<persisted-output>` block naming the file,
//!   its size and the first [`PREVIEW_CHARS`] characters.
//! - `MAX_MCP_OUTPUT_TOKENS=N` set: a result whose text is more than `N`
//!   tokens, counted as characters / 4, is saved to a `.txt` file and the
//!   model gets `Error: result (… characters across … line) exceeds maximum
//!   allowed tokens. Output has been saved to <PATH>.` and Claude Code's
//!   reading instructions. (With the default of [`DEFAULT_MAX_TOKENS`] the
//!   character limit is always hit first.)
//!
//! dsh writes the files under `<session dir>/tool-results/` (the session
//! log's path without `.jsonl`), or under the temporary directory when the
//! session has no log file.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use dsh_tools::ToolContext;
use dsh_tools::builtin::bash::bound_output;

/// The variable that sets the token limit.
pub const MAX_TOKENS_VAR: &str = "MAX_MCP_OUTPUT_TOKENS";
/// The token limit when the variable is unset.
pub const DEFAULT_MAX_TOKENS: usize = 25_000;
/// The fixed character limit that applies when the variable is unset.
pub const PERSIST_CHARS: usize = 50_000;
/// How much of a persisted result the model is shown.
pub const PREVIEW_CHARS: usize = 2_000;
/// Lines longer than this cannot be read in chunks by the Read tool.
const READ_LINE_CHARS: usize = 2_000;

/// Where and under which names one call's oversized result is saved.
#[derive(Debug, Clone)]
pub struct ResultStore {
    /// The directory the files go to.
    pub dir: PathBuf,
    /// `MAX_MCP_OUTPUT_TOKENS`, when set to a positive number.
    pub max_tokens: Option<usize>,
    /// The server's name.
    pub server: String,
    /// The tool's name on the server.
    pub tool: String,
    /// The call's id (names the file of a persisted result).
    pub call_id: String,
}

impl ResultStore {
    /// The store for a call of `tool` on `server` made with `ctx`: the
    /// variable is read from the session's environment, then dsh's.
    pub fn for_call(ctx: &ToolContext, server: &str, tool: &str) -> Self {
        let from_session = ctx
            .env
            .iter()
            .find(|(name, _)| name == MAX_TOKENS_VAR)
            .map(|(_, value)| value.clone());
        let raw = from_session.or_else(|| std::env::var(MAX_TOKENS_VAR).ok());
        let dir = ctx
            .seam
            .as_ref()
            .and_then(|seam| seam.session.log_path.as_ref())
            .map(|log| log.with_extension("").join("tool-results"))
            .unwrap_or_else(|| std::env::temp_dir().join("dsh-tool-results"));
        ResultStore {
            dir,
            max_tokens: parse_max_tokens(raw.as_deref()),
            server: server.to_owned(),
            tool: tool.to_owned(),
            call_id: ctx.execution_id.clone(),
        }
    }
}

/// A positive whole number, else `None` (the default applies).
pub fn parse_max_tokens(raw: Option<&str>) -> Option<usize> {
    raw.and_then(|value| value.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
}

/// The text the model gets instead of `text` (what it would be shown of
/// a result) when the result is over the limits of `store` (see the module
/// docs), after saving it; `None` when it is within them. `pretty_content`
/// gives the result's content as pretty JSON (what the default limit
/// measures and saves). When the file cannot be written, the text is cut
/// like the bash tool's output instead.
pub fn limited_text(
    text: &str,
    pretty_content: impl FnOnce() -> String,
    store: &ResultStore,
) -> Option<String> {
    let message = match store.max_tokens {
        Some(max) => {
            if text.chars().count() <= max.saturating_mul(4) {
                return None;
            }
            let name = format!(
                "mcp-{}-{}-{}.txt",
                store.server,
                store.tool,
                unique_suffix()
            );
            save(&store.dir, &name, text).map(|path| over_tokens_message(text, &path))
        }
        None => {
            let pretty = pretty_content();
            if pretty.chars().count() <= PERSIST_CHARS {
                return None;
            }
            let name = format!("{}.json", file_part(&store.call_id));
            save(&store.dir, &name, &pretty).map(|path| persisted_message(&pretty, &path))
        }
    };
    Some(message.unwrap_or_else(|_| bound_output(text)))
}

fn save(dir: &Path, name: &str, text: &str) -> std::io::Result<PathBuf> {
    fs_err::create_dir_all(dir)?;
    let path = dir.join(name);
    fs_err::write(&path, text)?;
    Ok(path)
}

/// The `<persisted-output>` block for `saved` written to `path`.
pub fn persisted_message(saved: &str, path: &Path) -> String {
    let preview: String = saved.chars().take(PREVIEW_CHARS).collect();
    format!(
        "<persisted-output>\nOutput too large ({:.1}KB). Full output saved to: {}\n\n\
         Preview (first 2KB):\n{preview}\n...\n</persisted-output>",
        saved.len() as f64 / 1024.0,
        path.display()
    )
}

/// The error text for `text` over the token limit, saved to `path`.
pub fn over_tokens_message(text: &str, path: &Path) -> String {
    let chars = text.chars().count();
    let lines = text.lines().count().max(1);
    let path = path.display();
    let mut out = format!(
        "Error: result ({} characters across {} {}) exceeds maximum allowed tokens. \
         Output has been saved to {path}.\n\
         Format: Plain text\n\
         Search within the file for specific content, and use jq if the content is JSON.\n\
         REQUIREMENTS FOR SUMMARIZATION/ANALYSIS/REVIEW:\n\
         - You MUST read the content from the file at {path} in sequential chunks until 100% of the content has been read.\n",
        grouped(chars),
        grouped(lines),
        if lines == 1 { "line" } else { "lines" },
    );
    if text
        .lines()
        .any(|line| line.chars().count() > READ_LINE_CHARS)
    {
        out.push_str(
            "- Note: this file's lines are too long for Read's offset/limit chunking. If a shell tool is available, slice by character range (e.g. python read()[A:B], dd, or cut -c) instead.\n",
        );
    }
    out.push_str(
        "- If you receive truncation warnings when reading the file, reduce the chunk size until you have read 100% of the content without truncation.\n\
         - Before producing ANY summary or analysis, you MUST explicitly describe what portion of the content you have read. ***If you did not read the entire content, you MUST explicitly state this.***\n\
         - If after a few attempts you cannot read the file (file not found, lines too long for Read's offset/limit, no shell access), STOP retrying. Summarize what you were able to read, explicitly state which portion you could not read and why, and proceed.\n",
    );
    out
}

/// `n` with commas between thousands (`4,011`).
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `id` safe as a file name part.
fn file_part(id: &str) -> String {
    let part: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if part.is_empty() {
        format!("mcp-{}", unique_suffix())
    } else {
        part
    }
}

/// `<milliseconds>-<6 base-36 characters>`, unique within the process.
fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let mut seed = u64::from(now.subsec_nanos())
        ^ (u64::from(std::process::id()) << 20)
        ^ COUNTER
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_mul(0x9e37_79b9);
    let mut tag = String::new();
    for _ in 0..6 {
        let digit = u32::try_from(seed % 36).unwrap_or(0);
        tag.push(char::from_digit(digit, 36).unwrap_or('0'));
        seed /= 36;
    }
    format!("{}-{tag}", now.as_millis())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn limit(text: &str, store: &ResultStore) -> Option<String> {
        let content = json!([{"type": "text", "text": text}]);
        limited_text(
            text,
            || serde_json::to_string_pretty(&content).unwrap(),
            store,
        )
    }

    fn store(dir: &Path, max_tokens: Option<usize>) -> ResultStore {
        ResultStore {
            dir: dir.to_path_buf(),
            max_tokens,
            server: "echo".into(),
            tool: "echo_text".into(),
            call_id: "toolu_1".into(),
        }
    }

    #[test]
    fn numbers_are_grouped() {
        assert_eq!(grouped(7), "7");
        assert_eq!(grouped(4_011), "4,011");
        assert_eq!(grouped(1_234_567), "1,234,567");
    }

    #[test]
    fn the_variable_must_be_a_positive_number() {
        assert_eq!(parse_max_tokens(Some("100")), Some(100));
        assert_eq!(parse_max_tokens(Some("0")), None);
        assert_eq!(parse_max_tokens(Some("lots")), None);
        assert_eq!(parse_max_tokens(None), None);
    }

    #[test]
    fn the_token_limit_counts_characters_over_four() {
        let dir = tempfile::tempdir().unwrap();
        let text = "x".repeat(400);
        assert_eq!(limit(&text, &store(dir.path(), Some(100))), None);
        let text = "x".repeat(401);
        let message = limit(&text, &store(dir.path(), Some(100))).unwrap();
        assert!(message.starts_with("Error: result (401 characters across 1 line)"));
        let saved = fs_err::read_dir(dir.path())
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(fs_err::read_to_string(saved.path()).unwrap(), text);
        assert!(message.contains(&saved.path().display().to_string()));
        // Short lines: no note about long lines.
        assert!(!message.contains("lines are too long"));
    }

    #[test]
    fn the_default_persists_over_fifty_thousand_characters() {
        let dir = tempfile::tempdir().unwrap();
        let text = "y".repeat(60_000);
        let message = limit(&text, &store(dir.path(), None)).unwrap();
        let path = dir.path().join("toolu_1.json");
        let saved = fs_err::read_to_string(&path).unwrap();
        assert!(saved.starts_with("[\n  {\n"));
        assert_eq!(message, persisted_message(&saved, &path));
        assert!(message.contains("Output too large (58.6KB)"), "{message}");
        assert_eq!(limit("ok", &store(dir.path(), None)), None);
    }
}
