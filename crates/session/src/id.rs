//! Session ids, which name files under `$DSH_HOME/sessions`.

/// The longest id accepted (a UUID is 36 characters).
pub const MAX_SESSION_ID_LEN: usize = 128;

/// Why a session id was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionIdError {
    /// The id is empty.
    #[error("a session id cannot be empty")]
    Empty,
    /// The id is longer than [`MAX_SESSION_ID_LEN`].
    #[error("session id is {0} characters long; at most {MAX_SESSION_ID_LEN} are allowed")]
    TooLong(usize),
    /// The id holds a character outside the safe set, or starts with a dot.
    #[error(
        "session id {0:?} is not allowed: use letters, digits, `-`, `_` and `.` (not first), as in a UUID"
    )]
    Unsafe(String),
}

/// Checks that `id` can name a file in the sessions directory and nothing
/// else: non-empty, at most [`MAX_SESSION_ID_LEN`] ASCII letters, digits,
/// `-`, `_` or `.`, and not starting with `.` (so never `.`, `..`, a hidden
/// file or a path). Every UUID passes.
pub fn validate_session_id(id: &str) -> Result<(), SessionIdError> {
    if id.is_empty() {
        return Err(SessionIdError::Empty);
    }
    if id.len() > MAX_SESSION_ID_LEN {
        return Err(SessionIdError::TooLong(id.len()));
    }
    let safe = id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if !safe || id.starts_with('.') {
        return Err(SessionIdError::Unsafe(id.to_owned()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_and_safe_names_pass() {
        for id in [
            "0f8fad5b-d9cb-469f-a165-70867728950e",
            "s1",
            "fixture_run.2",
        ] {
            assert_eq!(validate_session_id(id), Ok(()), "{id}");
        }
    }

    #[test]
    fn paths_dots_and_empty_ids_are_refused() {
        assert_eq!(validate_session_id(""), Err(SessionIdError::Empty));
        for id in [
            "..",
            ".",
            "../x",
            "a/b",
            "/etc/passwd",
            ".hidden",
            "a b",
            "a\0b",
            "é",
        ] {
            assert!(
                matches!(validate_session_id(id), Err(SessionIdError::Unsafe(_))),
                "{id:?}"
            );
        }
        assert!(matches!(
            validate_session_id(&"a".repeat(MAX_SESSION_ID_LEN + 1)),
            Err(SessionIdError::TooLong(_))
        ));
    }
}
