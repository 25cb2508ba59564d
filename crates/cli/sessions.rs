//! `dsh sessions`: the stored sessions as a table or JSON lines. The store
//! itself (list, the id-prefix resolver, `--resume` / `--continue`) is
//! `dsh_core::sessions`, re-exported here for the other front ends.

use crate::stdio::{ExitStatus, errln, outln};
use std::path::Path;

pub use dsh_core::sessions::{
    Pick, SessionSummary, dsh_home, log_target, pick, report_torn, sessions_dir,
};

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
