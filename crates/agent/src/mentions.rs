//! `@path` mentions in a prompt (Claude Code's file references): the files
//! they name, as attachments for `Agent::attach_to_next_prompt`. The
//! terminal, `dsh -p` and `dsh replay` attach them the same way.

use std::path::Path;

use dsh_seams::ContextEntry;

/// The largest file an `@path` mention attaches whole.
pub const MENTION_MAX_BYTES: u64 = 256 * 1024;
/// The most directory entries an `@dir/` mention lists.
const MENTION_MAX_ENTRIES: usize = 200;

/// Where an `@path` attachment's `context/message` says it came from.
pub const MENTION_SOURCE_PREFIX: &str = "mention:";

/// The attachments of a prompt's `@path` mentions. The prompt itself stays
/// as typed (Claude Code hands hooks the typed prompt); each mentioned file
/// that exists (relative to `cwd`, or absolute) becomes one context entry
/// holding a `<file path="…">…</file>` block (a directory as its listing),
/// which the agent records after the prompt-submit seam
/// (`Agent::attach_to_next_prompt`). A file over [`MENTION_MAX_BYTES`] or
/// not UTF-8 is named but not attached, so the model reads it with its
/// tools. Mentions that name nothing stay text and attach nothing.
pub fn mention_attachments(prompt: &str, cwd: &Path) -> Vec<ContextEntry> {
    let mut blocks = Vec::new();
    let mut seen = Vec::new();
    for word in prompt.split_whitespace() {
        let Some(mention) = word.strip_prefix('@') else {
            continue;
        };
        // `see @src/main.rs.` — trailing punctuation is not part of the path.
        let mention = mention.trim_end_matches([',', '.', ';', ':', '!', '?', ')', '"', '\'']);
        if mention.is_empty() || seen.iter().any(|s: &String| s == mention) {
            continue;
        }
        let path = cwd.join(mention);
        let block = if path.is_dir() {
            let Ok(entries) = fs_err::read_dir(&path) else {
                continue;
            };
            let mut names: Vec<String> = entries
                .flatten()
                .map(|entry| {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                        format!("{name}/")
                    } else {
                        name
                    }
                })
                .collect();
            names.sort();
            let more = names.len().saturating_sub(MENTION_MAX_ENTRIES);
            names.truncate(MENTION_MAX_ENTRIES);
            let mut listing = names.join("\n");
            if more > 0 {
                listing.push_str(&format!("\n… {more} more entries"));
            }
            format!("<directory path=\"{mention}\">\n{listing}\n</directory>")
        } else if path.is_file() {
            let size = fs_err::metadata(&path).map(|m| m.len()).unwrap_or(0);
            let text = if size <= MENTION_MAX_BYTES {
                fs_err::read(&path)
                    .ok()
                    .and_then(|bytes| String::from_utf8(bytes).ok())
            } else {
                None
            };
            match text {
                Some(text) => {
                    let text = text.strip_suffix('\n').unwrap_or(&text);
                    format!("<file path=\"{mention}\">\n{text}\n</file>")
                }
                None => format!(
                    "<file path=\"{mention}\" bytes=\"{size}\">(too large or not text to attach: read it with a tool)</file>"
                ),
            }
        } else {
            continue;
        };
        seen.push(mention.to_owned());
        blocks.push(ContextEntry::new(
            block,
            format!("{MENTION_SOURCE_PREFIX}{mention}"),
        ));
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_attach_files_and_listings_once() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::create_dir(dir.path().join("src")).unwrap();
        fs_err::write(dir.path().join("src/main.rs"), "fn main() {}\n").unwrap();
        let out = mention_attachments(
            "explain @src/main.rs, and @src/main.rs again; @src",
            dir.path(),
        );
        assert_eq!(
            out,
            [
                ContextEntry::new(
                    "<file path=\"src/main.rs\">\nfn main() {}\n</file>",
                    "mention:src/main.rs"
                ),
                ContextEntry::new(
                    "<directory path=\"src\">\nmain.rs\n</directory>",
                    "mention:src"
                ),
            ]
        );
    }

    #[test]
    fn prompts_without_real_mentions_attach_nothing() {
        let dir = tempfile::tempdir().unwrap();
        assert!(mention_attachments("mail me@example.com", dir.path()).is_empty());
        assert!(mention_attachments("@nothing here", dir.path()).is_empty());
    }
}
