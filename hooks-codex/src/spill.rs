//! Codex's handling of over-long `additionalContext` (observed in the
//! `big_context` capture, byte-exact).
//!
//! Tokens are estimated as `ceil(bytes / 4)`. A context over the limit
//! (default 2,500 tokens; `0` = never truncate) is written whole to
//! `<spill_dir>/<thread_id>/<uuid>.txt` and replaced by
//! `Warning: truncated output (original token count: N)\nTotal output lines: L\n\n`
//! + head + `…M tokens truncated…` + tail + `\n\nFull hook output saved to: <path>`,
//!   where head and tail share `limit * 4` bytes minus the footer's length and
//!   `M = ceil(removed bytes / 4)`.

use std::path::{Path, PathBuf};

/// Codex's default `additionalContextLimit`.
pub const DEFAULT_CONTEXT_LIMIT_TOKENS: u64 = 2_500;

fn approx_tokens(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4)
}

/// Whether `text` exceeds `limit` tokens (`Some(0)` = never, `None` = default).
pub fn needs_spill(text: &str, limit: Option<u64>) -> bool {
    let limit = limit.unwrap_or(DEFAULT_CONTEXT_LIMIT_TOKENS);
    limit != 0 && approx_tokens(text.len()) > limit
}

/// The model-facing text for an over-long context whose full text was saved at `saved_to`.
pub fn truncated_context(text: &str, limit: Option<u64>, saved_to: &Path) -> String {
    let limit = limit.unwrap_or(DEFAULT_CONTEXT_LIMIT_TOKENS);
    let footer = format!("\n\nFull hook output saved to: {}", saved_to.display());
    let budget = usize::try_from(limit.saturating_mul(4))
        .unwrap_or(usize::MAX)
        .saturating_sub(footer.len());
    let head_len = budget / 2;
    let tail_len = budget - head_len;
    let mut head_end = head_len.min(text.len());
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len().saturating_sub(tail_len).max(head_end);
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let removed = tail_start - head_end;
    let lines = text.lines().count().max(1);
    format!(
        "Warning: truncated output (original token count: {})\nTotal output lines: {lines}\n\n{}…{} tokens truncated…{}{footer}",
        approx_tokens(text.len()),
        &text[..head_end],
        approx_tokens(removed),
        &text[tail_start..],
    )
}

/// Applies Codex's limit to one context: returns the model-facing text,
/// writing the full text under `spill_dir/<thread_id>/` when it is too long.
/// If the file cannot be written the truncated text still names the path
/// Codex would have used, and the error is returned for the log.
pub fn limit_context(
    text: &str,
    limit: Option<u64>,
    spill_dir: &Path,
    thread_id: &str,
) -> (String, Option<String>) {
    if !needs_spill(text, limit) {
        return (text.to_owned(), None);
    }
    let dir = spill_dir.join(thread_id);
    // Named by its content: a replay names the same file.
    let name = format!("{}.txt", dsh_seams::derived_id(text));
    let path: PathBuf = dir.join(&name);
    let error = dsh_hooks::spill::write(&dir, &name, text)
        .err()
        .map(|err| format!("could not save hook output to {}: {err}", path.display()));
    (truncated_context(text, limit, &path), error)
}
