//! The session store: `$DSH_HOME/sessions/<id>.jsonl`, listed newest first,
//! one session found by its id or an unambiguous id prefix.

use std::path::{Path, PathBuf};

use dsh_protocol::{Event, EventBody, PromptBlockedEvent, SessionHeaderEvent, UserMessageEvent};

use crate::{Follow, describe_kind, load_with, validate_session_id};

/// The directory under `$DSH_HOME` holding session logs.
pub const SESSIONS_DIR: &str = "sessions";

/// `$DSH_HOME/sessions`.
pub fn sessions_dir(dsh_home: &Path) -> PathBuf {
    dsh_home.join(SESSIONS_DIR)
}

/// Why the store could not be listed or a session not found.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The sessions directory could not be read.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// `$DSH_HOME/sessions` resolves outside dsh's home.
    #[error(
        "{} leads to {}, outside dsh's home {}; dsh does not follow it",
        dir.display(),
        resolved.display(),
        home.display()
    )]
    OutsideHome {
        /// The sessions directory.
        dir: PathBuf,
        /// Where it resolves to.
        resolved: PathBuf,
        /// dsh's home, resolved.
        home: PathBuf,
    },
    /// No session has this id or id prefix.
    #[error("no session {id} in {}; `dsh sessions` lists them", dir.display())]
    NotFound {
        /// The id asked for.
        id: String,
        /// The sessions directory.
        dir: PathBuf,
    },
    /// More than one session starts with this prefix.
    #[error("{id} is ambiguous: {count} sessions start with it")]
    Ambiguous {
        /// The id prefix asked for.
        id: String,
        /// How many sessions start with it.
        count: usize,
    },
}

/// One stored session, as `dsh sessions` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSummary {
    /// The session id.
    pub id: String,
    /// The log file.
    pub path: PathBuf,
    /// The session's working directory.
    pub cwd: String,
    /// When it started (the header's timestamp, RFC 3339).
    pub started: String,
    /// When it was last written to.
    pub updated: String,
    /// The first prompt, if any.
    pub first_prompt: Option<String>,
    /// How many turns it has.
    pub turns: u64,
}

/// The summary of the log at `path` holding `events`; `None` without a
/// session header.
pub fn summarize(path: &Path, events: &[Event]) -> Option<SessionSummary> {
    let header = events.first()?;
    let EventBody::SessionHeader(SessionHeaderEvent {
        session_id, cwd, ..
    }) = &header.body
    else {
        return None;
    };
    let first_prompt = events.iter().find_map(|event| match &event.body {
        EventBody::UserMessage(UserMessageEvent {
            content,
            original_content,
            ..
        }) => Some(original_content.clone().unwrap_or_else(|| content.clone())),
        EventBody::PromptBlocked(PromptBlockedEvent { content, .. }) => Some(content.clone()),
        EventBody::SessionHeader(_)
        | EventBody::TurnStart(_)
        | EventBody::CompactionStarted(_)
        | EventBody::CompactionCompleted(_)
        | EventBody::CompactionFailed(_)
        | EventBody::AssistantMessage(_)
        | EventBody::ToolCall(_)
        | EventBody::ToolResult(_)
        | EventBody::ContextMessage(_)
        | EventBody::SteeringMessage(_)
        | EventBody::TurnEnd(_)
        | EventBody::HookInvoked(_)
        | EventBody::HookResult(_)
        | EventBody::SeamNote(_)
        | EventBody::SessionCleared { .. }
        | EventBody::ModelSwitched(_) => None,
    });
    let turns = events
        .iter()
        .filter(|event| matches!(event.body, EventBody::TurnStart(_)))
        .count() as u64;
    Some(SessionSummary {
        id: session_id.clone(),
        path: path.to_owned(),
        cwd: cwd.clone(),
        started: header.ts.clone(),
        updated: events
            .last()
            .map_or_else(|| header.ts.clone(), |event| event.ts.clone()),
        first_prompt,
        turns,
    })
}

/// Every readable session under `dsh_home`, newest activity first. Logs
/// that cannot be read, entries that are not regular files (a FIFO would
/// hang the read; a symlink could lead out of `$DSH_HOME`) and headers with
/// an unsafe session id are skipped, each with a warning line handed to
/// `warn` (for stderr, in the order met).
pub fn list(
    dsh_home: &Path,
    warn: &mut dyn FnMut(String),
) -> Result<Vec<SessionSummary>, StoreError> {
    let dir = sessions_dir(dsh_home);
    check_inside_home(dsh_home, &dir)?;
    let entries = match fs_err::read_dir(&dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error.into()),
    };
    let mut sessions = Vec::new();
    for entry in entries {
        let entry = entry?;
        let path = entry.path();
        if path.extension().and_then(|ext| ext.to_str()) != Some("jsonl") {
            continue;
        }
        // The entry's own type: a symlink is not followed to find out.
        let kind = entry.file_type()?;
        if !kind.is_file() {
            warn(format!(
                "dsh: warning: {}: {}, not a regular file; skipped",
                path.display(),
                describe_kind(&kind)
            ));
            continue;
        }
        match load_with(&path, Follow::NoSymlinks) {
            Ok(loaded) => match summarize(&path, &loaded.events) {
                Some(summary) => match validate_session_id(&summary.id) {
                    Ok(()) => sessions.push(summary),
                    Err(error) => {
                        warn(format!(
                            "dsh: warning: {}: {error}; skipped",
                            path.display()
                        ));
                    }
                },
                None => warn(format!(
                    "dsh: warning: {}: no session header; skipped",
                    path.display()
                )),
            },
            Err(error) => warn(format!("dsh: warning: {error}; skipped")),
        }
    }
    // RFC 3339 UTC timestamps of one writer sort as strings.
    sessions.sort_by(|a, b| {
        b.updated
            .cmp(&a.updated)
            .then_with(|| b.started.cmp(&a.started))
    });
    Ok(sessions)
}

/// Refuses a sessions directory that resolves outside dsh's home (a
/// symlink planted at `$DSH_HOME/sessions`). A missing directory passes.
fn check_inside_home(dsh_home: &Path, dir: &Path) -> Result<(), StoreError> {
    let (Ok(home), Ok(resolved)) = (dsh_home.canonicalize(), dir.canonicalize()) else {
        return Ok(());
    };
    if !resolved.starts_with(&home) {
        return Err(StoreError::OutsideHome {
            dir: dir.to_owned(),
            resolved,
            home,
        });
    }
    Ok(())
}

/// What an id prefix names among some ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefixMatch<T> {
    /// The id itself, or the one id starting with the prefix.
    One(T),
    /// No id starts with it.
    None,
    /// This many ids start with it (and none equals it).
    Ambiguous(usize),
}

/// dsh's one id-prefix resolver: the item whose id equals `prefix`, else
/// the only item whose id starts with it.
pub fn resolve_prefix<T>(
    items: impl IntoIterator<Item = T>,
    id_of: impl Fn(&T) -> &str,
    prefix: &str,
) -> PrefixMatch<T> {
    let mut matching = Vec::new();
    for item in items {
        let id = id_of(&item);
        if id == prefix {
            return PrefixMatch::One(item);
        }
        if id.starts_with(prefix) {
            matching.push(item);
        }
    }
    match matching.len() {
        0 => PrefixMatch::None,
        1 => matching.pop().map_or(PrefixMatch::None, PrefixMatch::One),
        count => PrefixMatch::Ambiguous(count),
    }
}

/// The stored session `id` names: an exact id, or a prefix only one
/// session has. Warnings of [`list`] go to `warn`.
pub fn find(
    dsh_home: &Path,
    id: &str,
    warn: &mut dyn FnMut(String),
) -> Result<SessionSummary, StoreError> {
    let sessions = list(dsh_home, warn)?;
    match resolve_prefix(sessions, |session| &session.id, id) {
        PrefixMatch::One(session) => Ok(session),
        PrefixMatch::None => Err(StoreError::NotFound {
            id: id.to_owned(),
            dir: sessions_dir(dsh_home),
        }),
        PrefixMatch::Ambiguous(count) => Err(StoreError::Ambiguous {
            id: id.to_owned(),
            count,
        }),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use dsh_protocol::TurnEndReason;
    use dsh_protocol::{TurnEndEvent, TurnStartEvent};

    fn event(seq: u64, ts: &str, body: EventBody) -> Event {
        Event {
            seq,
            ts: ts.to_owned(),
            body,
            agent_id: None,
        }
    }

    #[test]
    fn a_summary_counts_turns_and_keeps_the_first_prompt_as_typed() {
        let events = vec![
            event(
                0,
                "2025-01-01T10:00:00Z",
                EventBody::SessionHeader(SessionHeaderEvent {
                    session_id: "s1".into(),
                    cwd: "/p".into(),
                    version: "0".into(),
                    notices: vec![],
                    provider_api: None,
                }),
            ),
            event(
                1,
                "2025-01-01T10:00:01Z",
                EventBody::TurnStart(TurnStartEvent { turn: 1 }),
            ),
            event(
                2,
                "2025-01-01T10:00:01Z",
                EventBody::UserMessage(UserMessageEvent {
                    turn: 1,
                    content: "rewritten".into(),
                    source: "user".into(),
                    original_content: Some("typed".into()),
                }),
            ),
            event(
                3,
                "2025-01-01T10:00:02Z",
                EventBody::TurnEnd(TurnEndEvent {
                    turn: 1,
                    reason: TurnEndReason::Completed,
                    message: None,
                }),
            ),
            event(
                4,
                "2025-01-01T11:00:00Z",
                EventBody::TurnStart(TurnStartEvent { turn: 2 }),
            ),
        ];
        let summary = summarize(Path::new("/x/s1.jsonl"), &events).unwrap();
        assert_eq!(summary.turns, 2);
        assert_eq!(summary.first_prompt.as_deref(), Some("typed"));
        assert_eq!(summary.started, "2025-01-01T10:00:00Z");
        assert_eq!(summary.updated, "2025-01-01T11:00:00Z");
        assert_eq!(summary.cwd, "/p");
    }

    #[test]
    fn a_prefix_resolves_to_the_exact_id_first_then_to_a_unique_prefix() {
        let ids = ["abc", "abcd", "xyz1", "xyz2"];
        let resolve = |prefix| resolve_prefix(ids, |id| id, prefix);
        assert_eq!(resolve("abc"), PrefixMatch::One("abc"));
        assert_eq!(resolve("abcd"), PrefixMatch::One("abcd"));
        assert_eq!(resolve("ab"), PrefixMatch::Ambiguous(2));
        assert_eq!(resolve("xyz"), PrefixMatch::Ambiguous(2));
        assert_eq!(resolve("xyz2"), PrefixMatch::One("xyz2"));
        assert_eq!(resolve("q"), PrefixMatch::None);
    }
}
