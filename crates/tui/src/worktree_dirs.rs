//! `/add-dir PATH` (a working directory added mid-session, then the
//! DirectoryAdded hooks) and the end of a session that made its worktree
//! (`--worktree`: the WorktreeRemove hooks, or dsh's own `git worktree
//! remove`).

use std::path::Path;

use dsh_agent::Agent;
use dsh_core::worktree::Worktree;
use dsh_permissions::PermissionsPlugin;
use dsh_protocol::{PermissionUpdate, UpdateDestination};
use dsh_seams::{DirectoryAddition, DirectorySource, SessionEndReason, WorktreeRemoval};

use crate::terminal::{Terminal, Tone};

/// `/add-dir PATH`: the directory (relative to the session's directory, `~`
/// for home) becomes a working directory for the session, as `--add-dir`
/// makes one at start-up; then the directory-added seam fires. Claude Code
/// 2.1.328 says `Added PATH as a working directory for this session`
/// (`ev_add_dir_tui`). Returns the text of the turn the hooks asked for
/// (a DirectoryAdded `systemMessage`, `ev_add_dir_tui_message`), which
/// the caller runs at once as a [`dsh_seams::NOTIFICATION_SOURCE`] turn.
pub(crate) async fn add_dir(
    term: &Terminal,
    agent: &Agent,
    permissions: &PermissionsPlugin,
    cwd: &Path,
    path: Option<&str>,
) -> Option<String> {
    let Some(path) = path else {
        term.lines(Tone::Warn, "usage: /add-dir PATH — add a working directory");
        return None;
    };
    let expanded = match (path.strip_prefix('~'), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            Path::new(&home).join(rest.trim_start_matches('/'))
        }
        _ => cwd.join(path),
    };
    let Ok(directory) = expanded.canonicalize() else {
        term.lines(
            Tone::Bad,
            &format!("✗ {} does not exist", expanded.display()),
        );
        return None;
    };
    if !directory.is_dir() {
        term.lines(
            Tone::Bad,
            &format!("✗ {} is not a directory", directory.display()),
        );
        return None;
    }
    if permissions.working_dirs().contains(&directory) {
        term.lines(
            Tone::Dim,
            &format!("{} is already a working directory", directory.display()),
        );
        return None;
    }
    let update = PermissionUpdate::AddDirectories {
        directories: vec![directory.to_string_lossy().into_owned()],
        destination: UpdateDestination::Session,
    };
    for problem in permissions.apply_update(&update) {
        term.lines(Tone::Warn, &problem);
    }
    term.lines(
        Tone::Plain,
        &format!(
            "Added {} as a working directory for this session",
            directory.display()
        ),
    );
    let asked = agent
        .directory_added(&DirectoryAddition {
            directory,
            source: DirectorySource::SlashCommand,
        })
        .await;
    (!asked.is_empty()).then(|| asked.join("\n\n"))
}

/// Before the session-end seam of a session that made `worktree` and ends
/// for good (not `/clear` or `/resume`): a worktree with changes is kept;
/// otherwise the removal seam fires (WorktreeRemove, `ev_worktree_remove`)
/// and a worktree dsh made is removed; a removed worktree sends the session
/// back to the directory it started in for the session-end seam. Returns
/// what to say once the session has ended (Claude Code prints it after its
/// screen is gone).
pub(crate) async fn leave_worktree(
    agent: &Agent,
    worktree: Option<&Worktree>,
    reason: SessionEndReason,
) -> Option<String> {
    let worktree = worktree?;
    if reason != SessionEndReason::Exit {
        return None;
    }
    if worktree.has_changes() {
        return Some(worktree.kept_message());
    }
    let removal = agent.remove_worktree(&worktree.path).await;
    let removed = removal == WorktreeRemoval::Removed;
    let said = worktree.settle(removal);
    // Removed: the session ends back in the project it started in, as
    // Claude Code's SessionEnd does (`ev_worktree_remove`: its `cwd` and
    // directory are the project, CLAUDE_PROJECT_DIR stays the worktree).
    if removed || !worktree.path.exists() {
        agent.session().env.set_work_dir(worktree.origin.clone());
    }
    Some(said)
}
