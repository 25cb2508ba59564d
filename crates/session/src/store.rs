//! The session store: `$DSH_HOME/sessions/<id>.jsonl`, listed newest
//! first, and the one resolver from a full id or an unambiguous prefix to a
//! stored session.

use std::path::{Path, PathBuf};

use dsh_protocol::{Event, EventBody};

use crate::{Follow, SessionIdError, describe_kind, load_with, validate_session_id};

/// Why the session store could not be read or an id could not be resolved.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Reading the sessions directory failed (the message names the path).
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
        /// Where it leads.
        resolved: PathBuf,
        /// dsh's home, resolved.
        home: PathBuf,
    },
    /// The id asked for is not a safe session id.
    #[error("cannot resume")]
    CannotResume(#[source] SessionIdError),
    /// No stored session has this id or prefix.
    #[error("no session {id} in {}; `dsh sessions` lists them", dir.display())]
    NotFound {
        /// The id or prefix asked for.
        id: String,
        /// The sessions directory searched.
        dir: PathBuf,
    },
    /// More than one stored session starts with this prefix.
    #[error("{id} is ambiguous: {count} sessions start with it")]
    Ambiguous {
        /// The prefix asked for.
        id: String,
        /// How many sessions start with it.
        count: usize,
    },
}

/// The directory under `$DSH_HOME` holding session logs.
pub const SESSIONS_DIR: &str = "sessions";

/// `$DSH_HOME/sessions`.
pub fn sessions_dir(dsh_home: &Path) -> PathBuf {
    dsh_home.join(SESSIONS_DIR)
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

fn summarize(path: &Path, events: &[Event]) -> Option<SessionSummary> {
    let header = events.first()?;
    let EventBody::SessionHeader {
        session_id, cwd, ..
    } = &header.body
    else {
        return None;
    };
    let first_prompt = events.iter().find_map(|event| match &event.body {
        EventBody::UserMessage {
            content,
            original_content,
            ..
        } => Some(original_content.clone().unwrap_or_else(|| content.clone())),
        EventBody::PromptBlocked { content, .. } => Some(content.clone()),
        EventBody::SessionHeader { .. }
        | EventBody::TurnStart { .. }
        | EventBody::CompactionStarted { .. }
        | EventBody::CompactionCompleted { .. }
        | EventBody::CompactionFailed { .. }
        | EventBody::AssistantMessage { .. }
        | EventBody::ToolCall { .. }
        | EventBody::ToolResult { .. }
        | EventBody::ContextMessage { .. }
        | EventBody::SteeringMessage { .. }
        | EventBody::TurnEnd { .. }
        | EventBody::HookInvoked { .. }
        | EventBody::HookResult { .. }
        | EventBody::SeamNote { .. }
        | EventBody::SessionCleared { .. }
        | EventBody::ModelSwitched { .. } => None,
    });
    let turns = events
        .iter()
        .filter(|event| matches!(event.body, EventBody::TurnStart { .. }))
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
/// an unsafe session id are skipped, each named once to `warn`.
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
                "{}: {}, not a regular file; skipped",
                path.display(),
                describe_kind(&kind)
            ));
            continue;
        }
        match load_with(&path, Follow::NoSymlinks) {
            Ok(loaded) => match summarize(&path, &loaded.events) {
                Some(summary) => match validate_session_id(&summary.id) {
                    Ok(()) => sessions.push(summary),
                    Err(error) => warn(format!("{}: {error}; skipped", path.display())),
                },
                None => warn(format!("{}: no session header; skipped", path.display())),
            },
            Err(error) => warn(format!("{error}; skipped")),
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

/// The session `id` names: an exact id, or a prefix only one session has.
pub fn find(
    dsh_home: &Path,
    id: &str,
    warn: &mut dyn FnMut(String),
) -> Result<SessionSummary, StoreError> {
    validate_session_id(id).map_err(StoreError::CannotResume)?;
    let sessions = list(dsh_home, warn)?;
    if let Some(exact) = sessions.iter().find(|session| session.id == id) {
        return Ok(exact.clone());
    }
    let matching: Vec<&SessionSummary> = sessions
        .iter()
        .filter(|session| session.id.starts_with(id))
        .collect();
    match matching.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(StoreError::NotFound {
            id: id.to_owned(),
            dir: sessions_dir(dsh_home),
        }),
        many => Err(StoreError::Ambiguous {
            id: id.to_owned(),
            count: many.len(),
        }),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use dsh_protocol::TurnEndReason;

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
                EventBody::SessionHeader {
                    session_id: "s1".into(),
                    cwd: "/p".into(),
                    version: "0".into(),
                    notices: vec![],
                },
            ),
            event(1, "2025-01-01T10:00:01Z", EventBody::TurnStart { turn: 1 }),
            event(
                2,
                "2025-01-01T10:00:01Z",
                EventBody::UserMessage {
                    turn: 1,
                    content: "rewritten".into(),
                    source: "user".into(),
                    original_content: Some("typed".into()),
                },
            ),
            event(
                3,
                "2025-01-01T10:00:02Z",
                EventBody::TurnEnd {
                    turn: 1,
                    reason: TurnEndReason::Completed,
                    message: None,
                },
            ),
            event(4, "2025-01-01T11:00:00Z", EventBody::TurnStart { turn: 2 }),
        ];
        let summary = summarize(Path::new("/x/s1.jsonl"), &events).unwrap();
        assert_eq!(summary.turns, 2);
        assert_eq!(summary.first_prompt.as_deref(), Some("typed"));
        assert_eq!(summary.started, "2025-01-01T10:00:00Z");
        assert_eq!(summary.updated, "2025-01-01T11:00:00Z");
        assert_eq!(summary.cwd, "/p");
    }
}
