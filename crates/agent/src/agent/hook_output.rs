//! Long hook output leaves the session log for a spill file.
//!
//! A `hook/result` carries what the hook printed. Hooks can print megabytes
//! (and binary: a NUL costs six bytes as JSON's `\u0000`), and the log keeps
//! every event in memory for the session's life, so a stream past
//! [`INLINE_LIMIT`] is written whole to a file next to the log and the event
//! keeps a head of it and a marker naming the file. The hook's decision and
//! its recorded stdin stay in the log whole: that is what replaying the
//! decision needs.

use std::path::{Path, PathBuf};

use dsh_protocol::{EventBody, HookResultEvent};

/// A stream whose JSON encoding would exceed this many bytes is spilled.
pub(crate) const INLINE_LIMIT: usize = 16 * 1024;

/// How much of a spilled stream stays in the log (JSON-encoded bytes).
pub(crate) const HEAD_LIMIT: usize = 2 * 1024;

/// Where a session's spilled hook output goes: `<log>.hook-output/` beside
/// the log file (`sessions/<id>.jsonl` → `sessions/<id>.hook-output/`), or
/// nowhere when the log has no file (then the log keeps only the head).
pub(crate) fn spill_dir(log_path: Option<&Path>) -> Option<PathBuf> {
    let path = log_path?;
    let stem = path.file_stem()?;
    let mut name = stem.to_os_string();
    name.push(".hook-output");
    Some(path.with_file_name(name))
}

/// Bounds a `hook/result`'s streams (other events pass unchanged).
pub(crate) fn bound(body: &mut EventBody, dir: Option<&Path>) {
    if let EventBody::HookResult(HookResultEvent {
        invocation_id,
        stdout,
        stderr,
        parsed_output,
        ..
    }) = body
    {
        let spilled = bound_stream(stdout, dir, invocation_id, "stdout");
        bound_stream(stderr, dir, invocation_id, "stderr");
        // The parsed form of a spilled stdout is as large as the stdout:
        // the file has it, and the decision records what it meant. (It is
        // stored as a JSON value, so its serialized length is its cost.)
        if spilled
            && parsed_output
                .as_ref()
                .is_some_and(|value| value.to_string().len() > INLINE_LIMIT)
        {
            *parsed_output = None;
        }
    }
}

/// The bytes `text` takes as a JSON string's contents.
fn json_len(text: &str) -> usize {
    text.chars().map(json_char_len).sum()
}

fn json_char_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if c < ' ' => 6,
        c => c.len_utf8(),
    }
}

/// Spills `text` when it is too long for the log, leaving its head and a
/// marker; returns whether it did.
fn bound_stream(text: &mut String, dir: Option<&Path>, invocation_id: &str, stream: &str) -> bool {
    // Cheap first look: every char costs at most six bytes.
    if text.len() * 6 <= INLINE_LIMIT || json_len(text) <= INLINE_LIMIT {
        return false;
    }
    let mut cost = 0;
    let mut head_end = 0;
    for (index, c) in text.char_indices() {
        cost += json_char_len(c);
        if cost > HEAD_LIMIT {
            break;
        }
        head_end = index + c.len_utf8();
    }
    let total = text.len();
    let saved = dir.and_then(|dir| {
        // The invocation id is the session's own (UUID-shaped); anything
        // else is not used as a file name.
        let safe = !invocation_id.is_empty()
            && invocation_id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !safe {
            return None;
        }
        let path = dir.join(format!("{invocation_id}.{stream}"));
        let written = dsh_session::create_private_dir(dir)
            .and_then(|()| dsh_session::write_atomic(&path, text.as_bytes(), 0o600));
        match written {
            Ok(()) => Some(path),
            Err(error) => {
                tracing::warn!(
                    "could not save a hook's {stream} to {}: {error}",
                    path.display()
                );
                None
            }
        }
    });
    // A new string, not a truncated one: truncating keeps the capacity,
    // and the log would hold on to the whole output's memory.
    let mut bounded = text.get(..head_end).unwrap_or_default().to_owned();
    match saved {
        Some(path) => bounded.push_str(&format!(
            "\n[dsh: output truncated: kept {head_end} of {total} bytes; the whole {stream} is in {}]",
            path.display()
        )),
        None => bounded.push_str(&format!(
            "\n[dsh: output truncated: kept {head_end} of {total} bytes]"
        )),
    }
    *text = bounded;
    true
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use dsh_protocol::{HookDecision, HookOutcomeKind};

    fn result(stdout: String, stderr: String, parsed: Option<serde_json::Value>) -> EventBody {
        EventBody::HookResult(HookResultEvent {
            turn: Some(1),
            invocation_id: "0123-abcd".to_owned(),
            outcome: HookOutcomeKind::Exited,
            exit_code: Some(0),
            signal: None,
            timed_out: false,
            duration_ms: 1,
            stdout,
            stderr,
            error: None,
            http_status: None,
            parsed_output: parsed,
            decision: Box::new(HookDecision::default()),
        })
    }

    fn streams(body: &EventBody) -> (String, String, Option<serde_json::Value>) {
        match body {
            EventBody::HookResult(HookResultEvent {
                stdout,
                stderr,
                parsed_output,
                ..
            }) => (stdout.clone(), stderr.clone(), parsed_output.clone()),
            _ => panic!("not a hook result"),
        }
    }

    #[test]
    fn the_spill_dir_sits_beside_the_log() {
        assert_eq!(
            spill_dir(Some(Path::new("/h/sessions/s1.jsonl"))),
            Some(PathBuf::from("/h/sessions/s1.hook-output"))
        );
        assert_eq!(spill_dir(None), None);
    }

    #[test]
    fn short_output_stays_in_the_log() {
        let mut body = result("ok\n".to_owned(), "\0\0".to_owned(), None);
        let before = body.clone();
        bound(&mut body, Some(Path::new("/nonexistent")));
        assert_eq!(body, before);
    }

    #[test]
    fn long_output_is_spilled_whole_and_named_in_the_log() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s1.hook-output");
        let long = "x".repeat(100_000);
        let json = format!("{{\"systemMessage\": \"{long}\"}}");
        let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
        let mut body = result(json.clone(), "short".to_owned(), Some(parsed));
        bound(&mut body, Some(&dir));
        let (stdout, stderr, parsed) = streams(&body);
        assert_eq!(stderr, "short");
        assert!(parsed.is_none());
        assert!(stdout.starts_with("{\"systemMessage\": \"xxx"), "{stdout}");
        let file = dir.join("0123-abcd.stdout");
        assert!(
            // Three quotes in the head take two bytes each as JSON.
            stdout.ends_with(&format!(
                "kept {} of {} bytes; the whole stdout is in {}]",
                HEAD_LIMIT - 3,
                json.len(),
                file.display()
            )),
            "{stdout}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), json);
        // The log must not keep the whole output's memory either.
        assert!(stdout.capacity() < INLINE_LIMIT, "{}", stdout.capacity());
    }

    #[test]
    fn nul_bytes_are_spilled_as_bytes_not_escapes() {
        let tmp = tempfile::tempdir().unwrap();
        let nuls = "\0".repeat(20_000);
        let mut body = result(String::new(), nuls.clone(), None);
        bound(&mut body, Some(tmp.path()));
        let (_, stderr, _) = streams(&body);
        let encoded = serde_json::to_string(&body).unwrap();
        assert!(encoded.len() < HEAD_LIMIT + 1024, "{}", encoded.len());
        assert!(stderr.starts_with(&"\0".repeat(HEAD_LIMIT / 6)));
        let spilled = std::fs::read(tmp.path().join("0123-abcd.stderr")).unwrap();
        assert_eq!(spilled.len(), 20_000);
        assert!(spilled.iter().all(|&b| b == 0));
    }

    #[test]
    fn without_a_file_the_log_keeps_the_head_and_says_so() {
        let mut body = result("é".repeat(20_000), String::new(), None);
        bound(&mut body, None);
        let (stdout, _, _) = streams(&body);
        assert!(
            stdout.ends_with(&format!("kept {HEAD_LIMIT} of 40000 bytes]")),
            "{stdout}"
        );
    }

    #[test]
    fn an_odd_invocation_id_is_not_a_file_name() {
        let tmp = tempfile::tempdir().unwrap();
        let mut body = result("y".repeat(50_000), String::new(), None);
        if let EventBody::HookResult(HookResultEvent { invocation_id, .. }) = &mut body {
            *invocation_id = "../escape".to_owned();
        }
        bound(&mut body, Some(tmp.path()));
        let (stdout, _, _) = streams(&body);
        assert!(stdout.ends_with("of 50000 bytes]"), "{stdout}");
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }
}
