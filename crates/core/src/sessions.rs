//! Where sessions live and how one is picked: `$DSH_HOME/sessions/<id>.jsonl`,
//! the stored sessions newest first, `--resume ID` (an id or unambiguous
//! prefix: the one resolver every front end uses) and `--continue`.
//!
//! Not here: how a front end shows the list (`dsh sessions`, ACP's
//! `session/list`).

use std::path::{Path, PathBuf};

use dsh_protocol::{Event, EventBody};
use dsh_session::LockWait;
use dsh_stdio::stdio::errln;

use crate::{Error, Result, ResultExt as _};

/// The directory under `$DSH_HOME` holding session logs.
pub const SESSIONS_DIR: &str = "sessions";

/// How the user asked to pick the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pick {
    /// A new session in the current directory.
    New,
    /// `--resume ID` (a full id or an unambiguous prefix).
    Resume(String),
    /// `--continue`: the newest session whose cwd is the current directory.
    Continue,
}

/// dsh's home: `$DSH_HOME`, else `~/.dsh` (an empty `DSH_HOME` is unset).
pub fn dsh_home() -> Result<PathBuf> {
    crate::Env::from_process().dsh_home()
}

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
/// an unsafe session id are reported on stderr and skipped.
pub fn list(dsh_home: &Path) -> Result<Vec<SessionSummary>> {
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
            errln!(
                "dsh: warning: {}: {}, not a regular file; skipped",
                path.display(),
                dsh_session::describe_kind(&kind)
            );
            continue;
        }
        match dsh_session::load_with(&path, dsh_session::Follow::NoSymlinks) {
            Ok(loaded) => match summarize(&path, &loaded.events) {
                Some(summary) => match dsh_session::validate_session_id(&summary.id) {
                    Ok(()) => sessions.push(summary),
                    Err(error) => {
                        errln!("dsh: warning: {}: {error}; skipped", path.display());
                    }
                },
                None => errln!(
                    "dsh: warning: {}: no session header; skipped",
                    path.display()
                ),
            },
            Err(error) => errln!("dsh: warning: {error}; skipped"),
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
fn check_inside_home(dsh_home: &Path, dir: &Path) -> Result<()> {
    let (Ok(home), Ok(resolved)) = (dsh_home.canonicalize(), dir.canonicalize()) else {
        return Ok(());
    };
    if !resolved.starts_with(&home) {
        return Err(Error::msg(format!(
            "{} leads to {}, outside dsh's home {}; dsh does not follow it",
            dir.display(),
            resolved.display(),
            home.display()
        )));
    }
    Ok(())
}

/// The stored session `pick` names (`None`: a new session in `current`),
/// and the directory the session runs in.
pub fn pick(
    dsh_home: &Path,
    pick: &Pick,
    current: &Path,
) -> Result<(PathBuf, Option<SessionSummary>)> {
    let existing = match pick {
        Pick::New => None,
        Pick::Resume(id) => Some(find(dsh_home, id)?),
        Pick::Continue => {
            let cwd = current.display().to_string();
            let newest = list(dsh_home)?
                .into_iter()
                .find(|session| session.cwd == cwd);
            Some(newest.ok_or_else(|| {
                Error::msg(format!(
                    "no session to continue in {cwd}; `dsh sessions` lists them"
                ))
            })?)
        }
    };
    match existing {
        None => Ok((current.to_owned(), None)),
        Some(summary) => {
            let cwd = PathBuf::from(&summary.cwd);
            if !cwd.is_dir() {
                return Err(Error::msg(format!(
                    "session {} belongs to {}, which is no longer a directory",
                    summary.id,
                    cwd.display()
                )));
            }
            if cwd != current {
                errln!("dsh: resuming in the session's directory {}", cwd.display());
            }
            Ok((cwd, Some(summary)))
        }
    }
}

/// Where the session's log goes: a new one under `$DSH_HOME/sessions`, or
/// the stored one reopened.
pub fn log_target(
    dsh_home: &Path,
    existing: Option<&SessionSummary>,
    wait: LockWait,
) -> crate::LogTarget {
    match existing {
        None => crate::LogTarget::New {
            id: uuid::Uuid::new_v4().to_string(),
            dir: sessions_dir(dsh_home),
            wait,
        },
        Some(summary) => crate::LogTarget::Reopen {
            path: summary.path.clone(),
            wait,
        },
    }
}

/// Tells stderr about a reopened log's torn last line.
pub fn report_torn(assembled: &crate::Assembled) {
    if let Some(torn) = &assembled.torn {
        errln!(
            "dsh: warning: {}:{}: the last line was incomplete ({} bytes, left by a crash); it was dropped",
            assembled
                .log
                .path()
                .map_or_else(String::new, |path| path.display().to_string()),
            torn.line,
            torn.bytes
        );
    }
}

/// The session `id` names: an exact id, or a prefix only one session has.
pub fn find(dsh_home: &Path, id: &str) -> Result<SessionSummary> {
    dsh_session::validate_session_id(id).context("cannot resume")?;
    let sessions = list(dsh_home)?;
    if let Some(exact) = sessions.iter().find(|session| session.id == id) {
        return Ok(exact.clone());
    }
    let matching: Vec<&SessionSummary> = sessions
        .iter()
        .filter(|session| session.id.starts_with(id))
        .collect();
    match matching.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(Error::msg(format!(
            "no session {id} in {}; `dsh sessions` lists them",
            sessions_dir(dsh_home).display()
        ))),
        many => Err(Error::msg(format!(
            "{id} is ambiguous: {} sessions start with it",
            many.len()
        ))),
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
