//! `dsh sessions`: the stored sessions as a table or JSON lines. The store
//! itself (list, the id-prefix resolver, `--resume` / `--continue`) is
//! `dsh_core::sessions`, re-exported here for the other front ends.

use crate::stdio::{ExitStatus, errln, outln};
use std::path::Path;

pub use dsh_core::sessions::{
    Pick, SessionSummary, dsh_home, log_target, pick, report_torn, sessions_dir,
};

/// `dsh sessions …` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum SessionsCommand {
    /// Deletes stored sessions: each ID is a full id or an unambiguous prefix.
    Rm {
        /// The sessions (ids or unambiguous id prefixes).
        #[arg(required = true, value_name = "ID")]
        ids: Vec<String>,
    },
}

/// Every readable session under `dsh_home`, newest first
/// (`dsh_core::sessions::list`, as an `anyhow` result for the front ends).
pub fn list(dsh_home: &Path) -> anyhow::Result<Vec<SessionSummary>> {
    Ok(dsh_core::sessions::list(dsh_home)?)
}
use dsh_tui::terminal::truncate;

fn local_time(ts: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(ts)
        .map(|time| {
            time.with_timezone(&chrono::Local)
                .format("%Y-%m-%d %H:%M")
                .to_string()
        })
        .unwrap_or_else(|_| ts.to_owned())
}

/// One line of `dsh sessions --json`, keys in this order.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SessionLine {
    /// The session id.
    pub id: String,
    /// Its log file.
    pub path: std::path::PathBuf,
    /// Its working directory.
    pub cwd: String,
    /// When it started (RFC 3339).
    pub started: String,
    /// When it was last written to (RFC 3339).
    pub updated: String,
    /// How many turns it has.
    pub turns: u64,
    /// Its first prompt, if any.
    pub first_prompt: Option<String>,
}

impl SessionLine {
    /// The line of `session`.
    pub fn of(session: &SessionSummary) -> Self {
        SessionLine {
            id: session.id.clone(),
            path: session.path.clone(),
            cwd: session.cwd.clone(),
            started: session.started.clone(),
            updated: session.updated.clone(),
            turns: session.turns,
            first_prompt: session.first_prompt.clone(),
        }
    }
}

/// `dsh sessions rm ID…`: deletes stored sessions. Each id is an exact id
/// or a prefix only one session has (the resolver `--resume` uses); an
/// ambiguous prefix deletes nothing. Only a regular file directly in the
/// sessions directory is removed, with its lock file, and never while
/// another dsh holds the session.
pub fn run_rm(ids: &[String]) -> anyhow::Result<ExitStatus> {
    let home = dsh_home()?;
    let dir = sessions_dir(&home);
    // Every id is resolved before anything is deleted.
    let mut found = Vec::new();
    for id in ids {
        found.push(dsh_core::sessions::find(&home, id)?);
    }
    for session in found {
        let path = &session.path;
        let canonical_dir = fs_err::canonicalize(&dir)?;
        let inside = path
            .parent()
            .and_then(|parent| fs_err::canonicalize(parent).ok())
            .is_some_and(|parent| parent == canonical_dir);
        let regular = fs_err::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_file());
        anyhow::ensure!(
            inside && regular,
            "refusing to delete {}: not a session log in {}",
            path.display(),
            dir.display()
        );
        // Held by a running dsh: leave it.
        let lock = dsh_session::SessionLock::acquire(path, dsh_session::LockWait::Fail)
            .map_err(|error| anyhow::anyhow!("cannot delete session {}: {error}", session.id))?;
        fs_err::remove_file(path)?;
        let lock_path = dsh_session::SessionLock::path_for(path);
        drop(lock);
        if fs_err::symlink_metadata(&lock_path).is_ok_and(|meta| meta.file_type().is_file()) {
            fs_err::remove_file(&lock_path)?;
        }
        outln!("deleted session {} ({})", session.id, path.display())?;
    }
    Ok(ExitStatus::Success)
}

/// `dsh log`'s argument: a session log file, or else a session id or
/// unambiguous id prefix (the same rules as `--resume`).
pub fn log_file(arg: &Path) -> anyhow::Result<std::path::PathBuf> {
    if arg.exists() || arg.components().count() != 1 {
        return Ok(arg.to_owned());
    }
    let id = arg.to_string_lossy();
    let home = dsh_home()?;
    Ok(dsh_core::sessions::find(&home, &id)?.path)
}

/// `dsh sessions`: one line per session, newest first.
pub fn run_list(json: bool) -> anyhow::Result<ExitStatus> {
    let home = dsh_home()?;
    let sessions = list(&home)?;
    if json {
        for session in &sessions {
            let line = serde_json::to_string(&SessionLine::of(session))?;
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_session_line_keeps_its_keys_in_order_and_parses_back() {
        let summary = SessionSummary {
            id: "0a1b".to_owned(),
            path: "/home/u/.dsh/sessions/0a1b.jsonl".into(),
            cwd: "/work/p".to_owned(),
            started: "2026-01-01T00:00:00Z".to_owned(),
            updated: "2026-01-01T00:01:00Z".to_owned(),
            first_prompt: None,
            turns: 2,
        };
        let line = serde_json::to_string(&SessionLine::of(&summary)).unwrap();
        assert_eq!(
            line,
            r#"{"id":"0a1b","path":"/home/u/.dsh/sessions/0a1b.jsonl","cwd":"/work/p","started":"2026-01-01T00:00:00Z","updated":"2026-01-01T00:01:00Z","turns":2,"first_prompt":null}"#
        );
        let parsed: SessionLine = serde_json::from_str(&line).unwrap();
        assert_eq!(parsed, SessionLine::of(&summary));
    }
}
