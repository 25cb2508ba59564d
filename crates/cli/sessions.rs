//! Where sessions live and how one is opened: `$DSH_HOME/sessions/<id>.jsonl`,
//! the `dsh sessions` listing, `--resume ID` / `--continue`, the model, and
//! the agent of an interactive or headless session.

use crate::stdio::{ExitStatus, errln, outln};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use dsh_session::LockWait;

use crate::terminal::truncate;

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
pub fn dsh_home() -> anyhow::Result<PathBuf> {
    Ok(dsh_core::Env::from_process().dsh_home()?)
}

pub use dsh_session::store::{SessionSummary, sessions_dir};

/// Every readable session under `dsh_home`, newest activity first; the
/// ones skipped are named on stderr (see [`dsh_session::store::list`]).
pub fn list(dsh_home: &Path) -> anyhow::Result<Vec<SessionSummary>> {
    Ok(dsh_session::store::list(dsh_home, &mut warn)?)
}

/// The session `id` names: an exact id, or a prefix only one session has
/// (see [`dsh_session::store::find`]).
pub fn find(dsh_home: &Path, id: &str) -> anyhow::Result<SessionSummary> {
    Ok(dsh_session::store::find(dsh_home, id, &mut warn)?)
}

/// Names a skipped session log on stderr.
pub fn warn(message: String) {
    errln!("dsh: warning: {message}");
}

fn local_time(ts: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(ts)
        .map(|time| {
            time.with_timezone(&chrono::Local)
                .format("%Y-%m-%d %H:%M")
                .to_string()
        })
        .unwrap_or_else(|_| ts.to_owned())
}

/// `dsh sessions`: one line per session, newest first.
pub fn run_list(json: bool) -> anyhow::Result<ExitStatus> {
    let home = dsh_home()?;
    let sessions = list(&home)?;
    if json {
        for session in &sessions {
            let line = serde_json::json!({
                "id": session.id,
                "path": session.path,
                "cwd": session.cwd,
                "started": session.started,
                "updated": session.updated,
                "turns": session.turns,
                "first_prompt": session.first_prompt,
            });
            outln!("{line}")?;
        }
        return Ok(ExitStatus::Success);
    }
    if sessions.is_empty() {
        errln!("dsh: no sessions in {}", sessions_dir(&home).display());
        return Ok(ExitStatus::Success);
    }
    outln!(
        "{:<36}  {:<16}  {:>5}  CWD / FIRST PROMPT",
        "ID",
        "UPDATED",
        "TURNS"
    )?;
    for session in &sessions {
        let prompt = session
            .first_prompt
            .as_deref()
            .map(|prompt| truncate(&prompt.replace('\n', " "), 70))
            .unwrap_or_else(|| "(no prompt)".to_owned());
        outln!(
            "{:<36}  {:<16}  {:>5}  {}\n{:<36}  {:<16}  {:>5}  {}",
            session.id,
            local_time(&session.updated),
            session.turns,
            session.cwd,
            "",
            "",
            "",
            prompt
        )?;
    }
    Ok(ExitStatus::Success)
}

/// The stored session `pick` names (`None`: a new session in `current`),
/// and the directory the session runs in.
pub fn pick(
    dsh_home: &Path,
    pick: &Pick,
    current: &Path,
) -> anyhow::Result<(PathBuf, Option<SessionSummary>)> {
    let existing = match pick {
        Pick::New => None,
        Pick::Resume(id) => Some(find(dsh_home, id)?),
        Pick::Continue => {
            let cwd = current.display().to_string();
            let newest = list(dsh_home)?
                .into_iter()
                .find(|session| session.cwd == cwd);
            Some(newest.with_context(|| {
                format!("no session to continue in {cwd}; `dsh sessions` lists them")
            })?)
        }
    };
    match existing {
        None => Ok((current.to_owned(), None)),
        Some(summary) => {
            let cwd = PathBuf::from(&summary.cwd);
            if !cwd.is_dir() {
                bail!(
                    "session {} belongs to {}, which is no longer a directory",
                    summary.id,
                    cwd.display()
                );
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
) -> dsh_core::LogTarget {
    match existing {
        None => dsh_core::LogTarget::New {
            id: uuid::Uuid::new_v4().to_string(),
            dir: sessions_dir(dsh_home),
            wait,
        },
        Some(summary) => dsh_core::LogTarget::Reopen {
            path: summary.path.clone(),
            wait,
        },
    }
}

/// Tells stderr about a reopened log's torn last line.
pub fn report_torn(assembled: &dsh_core::Assembled) {
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
