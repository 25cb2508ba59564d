//! Where sessions live and how one is picked: `$DSH_HOME/sessions/<id>.jsonl`,
//! the stored sessions newest first, `--resume ID` (an id or unambiguous
//! prefix: the one resolver every front end uses) and `--continue`.
//!
//! Not here: how a front end shows the list (`dsh sessions`, ACP's
//! `session/list`).

use std::path::{Path, PathBuf};

use dsh_session::LockWait;
use dsh_stdio::stdio::errln;

use crate::{Error, Result, ResultExt as _};

// The store itself (summaries, listing, the one id-prefix resolver) is
// dsh-session's; this module adds what a front end needs around it.
pub use dsh_session::store::{SESSIONS_DIR, SessionSummary, sessions_dir};

/// Every readable session under `dsh_home`, newest activity first; the logs
/// skipped are named on stderr.
pub fn list(dsh_home: &Path) -> Result<Vec<SessionSummary>> {
    Ok(dsh_session::store::list(dsh_home, &mut |warning| {
        errln!("{warning}");
    })?)
}

/// The session `id` names: an exact id, or a prefix only one session has.
pub fn find(dsh_home: &Path, id: &str) -> Result<SessionSummary> {
    dsh_session::validate_session_id(id).context("cannot resume")?;
    Ok(dsh_session::store::find(dsh_home, id, &mut |warning| {
        errln!("{warning}");
    })?)
}

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

/// `--fork-session`: a copy of `summary`'s log as the new session `new_id`
/// (its header names the new id; every other line is the old log's), whose
/// path a front end then reopens. The old session is left as it was.
pub fn fork(dsh_home: &Path, summary: &SessionSummary, new_id: &str) -> Result<PathBuf> {
    dsh_session::validate_session_id(new_id).context("cannot fork the session")?;
    let dir = sessions_dir(dsh_home);
    let target = dir.join(format!("{new_id}.jsonl"));
    if target.exists() {
        return Err(Error::msg(format!(
            "Session ID {new_id} is already in use."
        )));
    }
    let text = fs_err::read_to_string(&summary.path).context("cannot fork the session")?;
    let (first, rest) = text.split_once('\n').unwrap_or((text.as_str(), ""));
    let mut header: dsh_protocol::Event = serde_json::from_str(first).map_err(|err| {
        Error::msg(format!(
            "{}:1: not a session header: {err}",
            summary.path.display()
        ))
    })?;
    let dsh_protocol::EventBody::SessionHeader(dsh_protocol::SessionHeaderEvent {
        session_id, ..
    }) = &mut header.body
    else {
        return Err(Error::msg(format!(
            "{}:1: not a session header",
            summary.path.display()
        )));
    };
    new_id.clone_into(session_id);
    let header = dsh_session::encode(&header).context("cannot fork the session")?;
    // Private, as every session log, and never over an existing file.
    let mut file = {
        use fs_err::os::unix::fs::OpenOptionsExt as _;
        fs_err::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&target)
            .context("cannot fork the session")?
    };
    std::io::Write::write_all(&mut file, format!("{header}\n{rest}").as_bytes())
        .context("cannot fork the session")?;
    Ok(target)
}

/// The provider errors that mean a session never started: the key was
/// refused, or the endpoint could not be reached (dsh-provider's texts).
const START_UP_FAILURES: [&str; 2] = ["authentication failed", "cannot connect to"];

/// Whether the session log at `path` never reached the model: no
/// assistant message and no tool call, and every turn it has ended in a
/// start-up failure (a refused key, an unreachable endpoint). A server
/// error or a refused request keeps the session: the model was reached.
pub fn never_answered(path: &Path) -> bool {
    let Ok(loaded) = dsh_session::load(path) else {
        return false;
    };
    let mut turns = 0;
    for event in &loaded.events {
        if matches!(
            &event.body,
            dsh_protocol::EventBody::AssistantMessage(_) | dsh_protocol::EventBody::ToolCall(_)
        ) {
            return false;
        }
        if let dsh_protocol::EventBody::TurnEnd(dsh_protocol::TurnEndEvent {
            reason,
            message,
            ..
        }) = &event.body
        {
            let start_up = message
                .as_deref()
                .is_some_and(|text| START_UP_FAILURES.iter().any(|f| text.contains(f)));
            if *reason != dsh_protocol::TurnEndReason::Error || !start_up {
                return false;
            }
            turns += 1;
        }
    }
    turns > 0
}

/// A new session that failed to start (see [`never_answered`]) is not
/// kept: its log and lock file are removed, so `dsh sessions` and
/// `/resume` list only sessions that reached the model. Only a regular
/// file is removed. Returns whether it was.
pub fn forget_failed_start(path: &Path) -> bool {
    if !never_answered(path) {
        return false;
    }
    let regular =
        |path: &Path| fs_err::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_file());
    if !regular(path) || fs_err::remove_file(path).is_err() {
        return false;
    }
    let lock = dsh_session::SessionLock::path_for(path);
    if regular(&lock) {
        let _ = fs_err::remove_file(&lock);
    }
    true
}

/// Tells stderr about a reopened log's torn last line.
pub fn report_torn(assembled: &crate::Assembled) {
    if let Some(torn) = assembled.torn() {
        errln!(
            "dsh: warning: {}:{}: the last line was incomplete ({} bytes, left by a crash); it was dropped",
            assembled
                .log()
                .path()
                .map_or_else(String::new, |path| path.display().to_string()),
            torn.line,
            torn.bytes
        );
    }
}
