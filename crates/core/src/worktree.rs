//! `--worktree NAME`: the session works in a worktree of the project.
//!
//! The worktree-creation seam fires first, with the original project's
//! hooks (Claude Code's WorktreeCreate); the first listener that handles it
//! says where the worktree is. With none, dsh makes a git worktree itself,
//! where Claude Code 2.1.328 makes one (`ev_worktree_git`):
//! `<repository>/.claude/worktrees/NAME` on a new branch `worktree-NAME`,
//! locked while the session uses it. The front end then resolves the
//! session again in the worktree, whose own settings apply from then on.
//! When an interactive session that made the worktree ends, the
//! worktree-removal seam fires ([`Worktree::settle`] says what became of
//! it); a `-p` run keeps it.
//!
//! WorktreeCreate runs before the session log exists (the log is opened in
//! the worktree): its `hook/*` records are kept and written to the log as
//! soon as it opens, right after the header.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, PoisonError};

use dsh_protocol::EventBody;
use dsh_seams::{
    CancellationToken, IdSource, SeamContext, SessionEnv, SessionInfo, SessionSink, TurnControl,
    UserNotice, WorktreeCreation, WorktreeRemoval,
};

use crate::{Error, Result, SessionSpec};

/// Who made the worktree (and so who removes it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MadeBy {
    /// A worktree-creation listener (a WorktreeCreate hook).
    Hook,
    /// dsh, with `git worktree add` on this branch.
    Git {
        /// The repository the worktree belongs to.
        repository: PathBuf,
        /// The worktree's branch (`worktree-NAME`).
        branch: String,
        /// The commit it started from.
        base: String,
    },
}

/// The worktree a session moved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worktree {
    /// The name given to `--worktree`.
    pub name: String,
    /// Its directory: the session's directory from now on.
    pub path: PathBuf,
    /// The directory the session was started in.
    pub origin: PathBuf,
    /// Who made it.
    pub made_by: MadeBy,
}

/// The sink of the creation seam, which fires before the session log
/// exists: it keeps the `hook/*` records for the log, with ids derived from
/// the session (a replay repeats them, and they never collide with the
/// session's own), and drops user notices (the hook's words on failure are
/// in the error).
struct EarlyRecords {
    records: Mutex<Vec<EventBody>>,
    ids: IdSource,
}

impl EarlyRecords {
    fn new(session_id: &str) -> Self {
        EarlyRecords {
            records: Mutex::new(Vec::new()),
            ids: IdSource::new(&format!("{session_id}:worktree-create"), 0),
        }
    }

    fn take(&self) -> Vec<EventBody> {
        std::mem::take(&mut self.records.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl SessionSink for EarlyRecords {
    fn record(&self, body: EventBody) {
        self.records
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(body);
    }

    fn tell_user(&self, _notice: UserNotice) {}

    fn new_id(&self) -> String {
        self.ids.next_id()
    }
}

/// A worktree that could not be made; the session does not start. Shown
/// as Claude Code shows it: `Error creating worktree: …`, exit status 1.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Error creating worktree: {0}")]
pub struct WorktreeFailed(pub String);

/// Makes the worktree `name` for the session `session_id` resolved in
/// `spec` (the original project): the creation seam with the project's
/// hooks, else `git worktree add`. Must be called outside any async
/// runtime.
pub fn create(
    spec: &SessionSpec,
    name: &str,
    session_id: &str,
) -> Result<std::result::Result<Worktree, WorktreeFailed>> {
    Ok(create_recorded(spec, name, session_id)?.0)
}

/// [`create`], with the creation seam's `hook/*` records.
fn create_recorded(
    spec: &SessionSpec,
    name: &str,
    session_id: &str,
) -> Result<(
    std::result::Result<Worktree, WorktreeFailed>,
    Vec<EventBody>,
)> {
    if let Err(why) = check_name(name) {
        return Ok((Err(WorktreeFailed(why)), Vec::new()));
    }
    let scrub = crate::hooks::scrubbed_env_for(&spec.env, &spec.config);
    let hooks = crate::hooks::plugins_from(
        spec.hooks.clone(),
        &spec.sources,
        scrub,
        std::sync::Arc::new(spec.launch_pins()),
    )?;
    let sink = Arc::new(EarlyRecords::new(session_id));
    let ctx = SeamContext {
        session: Arc::new(SessionInfo {
            session_id: session_id.to_owned(),
            cwd: spec.cwd.clone(),
            model: String::new(),
            log_path: None,
            env: SessionEnv::default(),
            interactive: false,
        }),
        turn: None,
        cancel: CancellationToken::new(),
        sink: Arc::clone(&sink) as Arc<dyn SessionSink>,
        control: TurnControl::default(),
        agent: None,
        subagents: None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::msg(format!("cannot start the async runtime: {e}")))?;
    let answer = runtime.block_on(async {
        for plugin in &hooks.plugins {
            match plugin.worktree_create(&ctx, name).await {
                WorktreeCreation::NotHandled => continue,
                answer @ (WorktreeCreation::Created { .. } | WorktreeCreation::Failed { .. }) => {
                    return answer;
                }
            }
        }
        WorktreeCreation::NotHandled
    });
    hooks.runner.kill_all();
    let made = match answer {
        WorktreeCreation::Created { path } => Ok(Worktree {
            name: name.to_owned(),
            path: path.canonicalize().unwrap_or(path),
            origin: spec.cwd.clone(),
            made_by: MadeBy::Hook,
        }),
        WorktreeCreation::Failed { message } => Err(WorktreeFailed(message)),
        WorktreeCreation::NotHandled => git_worktree(&spec.cwd, name, session_id),
    };
    Ok((made, sink.take()))
}

/// `--worktree NAME` for a new session `session_id` resolved in `spec`:
/// makes the worktree ([`create`]) and resolves the session again there
/// (same environment, configuration, flags and trust policy), whose own
/// settings apply from then on. The creation seam's `hook/*` records go
/// with the moved spec: [`crate::assemble`] writes them to the new log.
pub fn enter(
    spec: &SessionSpec,
    name: &str,
    session_id: &str,
) -> Result<std::result::Result<(SessionSpec, Worktree), WorktreeFailed>> {
    let (worktree, records) = create_recorded(spec, name, session_id)?;
    let worktree = match worktree {
        Ok(worktree) => worktree,
        Err(failed) => return Ok(Err(failed)),
    };
    let mut flags = spec.flags.clone();
    flags.settings = spec.flags.absolute_settings(&spec.cwd);
    let mut moved = SessionSpec::resolve(crate::Inputs {
        env: &spec.env,
        config: &spec.config,
        flags: &flags,
        cwd: &worktree.path,
        policy: spec.policy,
    })?;
    moved.early_records = records;
    Ok(Ok((moved, worktree)))
}

/// A name is one path component: no `/`, no `..`, not empty.
fn check_name(name: &str) -> std::result::Result<(), String> {
    if name.is_empty()
        || name == "."
        || name == ".."
        || name.contains(['/', '\\'])
        || name.chars().any(char::is_control)
    {
        return Err(format!(
            "invalid worktree name {name:?}: use letters, digits, `-`, `_` or `.` (one path component)"
        ));
    }
    Ok(())
}

fn git(cwd: &Path, args: &[&str]) -> std::result::Result<String, String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(cwd)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout)
            .trim_end()
            .to_owned())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).trim().to_owned())
    }
}

/// `git worktree add --lock -b worktree-NAME <repo>/.claude/worktrees/NAME`;
/// a worktree already there (an earlier session's) is reused.
fn git_worktree(
    cwd: &Path,
    name: &str,
    session_id: &str,
) -> std::result::Result<Worktree, WorktreeFailed> {
    let repository = git(cwd, &["rev-parse", "--show-toplevel"]).map_err(|_| {
        WorktreeFailed(format!(
            "{} is not in a git repository: --worktree needs one, or a WorktreeCreate hook",
            cwd.display()
        ))
    })?;
    let repository = PathBuf::from(repository);
    let path = repository.join(".claude").join("worktrees").join(name);
    let branch = format!("worktree-{name}");
    let base = git(&repository, &["rev-parse", "HEAD"])
        .map_err(|why| WorktreeFailed(format!("git rev-parse HEAD failed: {why}")))?;
    if !path.is_dir() {
        let reason = format!("dsh session {session_id}");
        let target = path.to_string_lossy().into_owned();
        git(
            &repository,
            &[
                "worktree", "add", "--lock", "--reason", &reason, "-b", &branch, &target, "HEAD",
            ],
        )
        .map_err(|why| WorktreeFailed(format!("git worktree add failed: {why}")))?;
    }
    Ok(Worktree {
        name: name.to_owned(),
        path: path.canonicalize().unwrap_or(path),
        origin: cwd.to_path_buf(),
        made_by: MadeBy::Git {
            repository,
            branch,
            base,
        },
    })
}

impl Worktree {
    /// Whether the worktree has changes a removal would lose: uncommitted
    /// changes (git status) or, for one dsh made, commits on its branch.
    pub fn has_changes(&self) -> bool {
        // Only a checkout of its own: a hook's directory inside some other
        // repository does not take that repository's changes as its own.
        let own = git(&self.path, &["rev-parse", "--show-toplevel"])
            .is_ok_and(|top| Path::new(&top).canonicalize().ok().as_deref() == Some(&self.path));
        let dirty = own && git(&self.path, &["status", "--porcelain"]).is_ok_and(|s| !s.is_empty());
        let committed = match &self.made_by {
            MadeBy::Git { base, .. } => git(
                &self.path,
                &["rev-list", "--count", &format!("{base}..HEAD")],
            )
            .is_ok_and(|count| count != "0" && !count.is_empty()),
            MadeBy::Hook => false,
        };
        dirty || committed
    }

    /// After the removal seam answered `removal` (a session that made the
    /// worktree ended): removes a worktree dsh made when it has no
    /// changes, and says what became of it, in Claude Code's words where
    /// it has them (`ev_worktree_remove`, `ev_worktree_tui`).
    pub fn settle(&self, removal: WorktreeRemoval) -> String {
        match (&self.made_by, removal) {
            (_, WorktreeRemoval::Removed) => "Worktree removed (no changes)".to_owned(),
            (MadeBy::Hook, WorktreeRemoval::NotHandled) => {
                format!("Couldn't remove worktree. Kept at {}", self.path.display())
            }
            (
                MadeBy::Git {
                    repository, branch, ..
                },
                WorktreeRemoval::NotHandled,
            ) => {
                let target = self.path.to_string_lossy().into_owned();
                let _ = git(repository, &["worktree", "unlock", &target]);
                match git(repository, &["worktree", "remove", &target]) {
                    Ok(_) => {
                        let _ = git(repository, &["branch", "-D", branch]);
                        "Worktree removed (no changes)".to_owned()
                    }
                    Err(_) => {
                        format!("Couldn't remove worktree. Kept at {}", self.path.display())
                    }
                }
            }
        }
    }

    /// What is said when the worktree is kept because it has changes.
    pub fn kept_message(&self) -> String {
        format!("Worktree kept at {} (it has changes)", self.path.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_one_path_component() {
        assert!(check_name("feat1").is_ok());
        for bad in ["", "..", "a/b", "a\\b", "x\ny"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn outside_git_without_a_hook_the_creation_fails_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let failed = git_worktree(dir.path(), "feat1", "s").unwrap_err();
        assert!(failed.to_string().starts_with("Error creating worktree: "));
        assert!(failed.0.contains("not in a git repository"), "{failed}");
    }

    #[test]
    fn a_git_worktree_is_made_locked_on_its_branch_and_removed_when_clean() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().canonicalize().unwrap();
        let run = |args: &[&str]| {
            let out = Command::new("git")
                .arg("-C")
                .arg(&repo)
                .args(args)
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        run(&["init", "-q"]);
        run(&[
            "-c",
            "user.email=a@b",
            "-c",
            "user.name=o",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "init",
        ]);
        let wt = git_worktree(&repo, "feat1", "sid").unwrap();
        assert_eq!(wt.path, repo.join(".claude/worktrees/feat1"));
        let list = run(&["worktree", "list", "--porcelain"]);
        assert!(list.contains("branch refs/heads/worktree-feat1"), "{list}");
        assert!(list.contains("locked dsh session sid"), "{list}");
        assert!(!wt.has_changes());
        std::fs::write(wt.path.join("new.txt"), "x").unwrap();
        assert!(wt.has_changes(), "an untracked file is a change");
        std::fs::remove_file(wt.path.join("new.txt")).unwrap();
        let inside = Worktree {
            path: repo.join("plain"),
            made_by: MadeBy::Hook,
            ..wt.clone()
        };
        std::fs::create_dir(&inside.path).unwrap();
        std::fs::write(repo.join("dirty.txt"), "x").unwrap();
        assert!(
            !inside.has_changes(),
            "a hook's directory inside a repository is not that repository"
        );
        std::fs::remove_file(repo.join("dirty.txt")).unwrap();
        std::fs::remove_dir(&inside.path).unwrap();
        assert_eq!(
            wt.settle(WorktreeRemoval::NotHandled),
            "Worktree removed (no changes)"
        );
        assert!(!wt.path.exists());
        assert!(!run(&["branch"]).contains("worktree-feat1"));
    }
}
