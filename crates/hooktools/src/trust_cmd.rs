//! `dsh hooks trust` / `dsh hooks untrust`.

use dsh_core::Workspace;
use dsh_core::trust::{ProjectHook, TrustStatus, show_path};
use dsh_stdio::stdio::{ExitStatus, outln};

fn selected(hook: &ProjectHook, selectors: &[String]) -> bool {
    selectors.is_empty()
        || selectors.iter().any(|s| {
            hook.origin.contains(s.as_str())
                || hook.command.contains(s.as_str())
                || hook.hash.contains(s.as_str())
        })
}

fn line(hook: &ProjectHook, cwd: &std::path::Path) -> String {
    format!(
        "[{}] {}: {}\n    from {}",
        hook.dialect.as_str(),
        hook.event,
        hook.command,
        show_path(&hook.origin, cwd)
    )
}

pub(super) fn trust(workspace: &Workspace, selectors: &[String]) -> anyhow::Result<ExitStatus> {
    let mut store = workspace.trust_store()?;
    let hooks = workspace.project_hooks(&workspace.hooks()?, &store);
    let cwd = workspace.cwd();
    // Without a selector the user trusts the workspace as a whole, as Claude
    // Code's trust dialog: its project `permissions.allow` rules apply.
    if selectors.is_empty() && !store.trusts_project(cwd) {
        store.trust_project(cwd);
        store.save()?;
        outln!(
            "trusted the workspace {}: its project permission allow rules apply",
            cwd.display()
        )?;
    }
    let candidates: Vec<&ProjectHook> = hooks
        .iter()
        .filter(|hook| !hook.status.is_trusted() && selected(hook, selectors))
        .collect();
    if candidates.is_empty() {
        let project_hooks = hooks
            .iter()
            .filter(|h| h.status != TrustStatus::UserLevel)
            .count();
        if !selectors.is_empty() && hooks.iter().all(|h| !selected(h, selectors)) {
            anyhow::bail!(
                "no hook of {} matches {}",
                cwd.display(),
                selectors.join(", ")
            );
        }
        outln!(
            "Nothing to trust: {project_hooks} project hook(s) in {}, all trusted.",
            cwd.display()
        )?;
        return Ok(ExitStatus::Success);
    }
    for hook in &candidates {
        store.trust(hook);
        outln!("trusted {}", line(hook, cwd))?;
        for script in &hook.scripts {
            outln!(
                "    script {}",
                show_path(&script.display().to_string(), cwd)
            )?;
        }
    }
    store.save()?;
    outln!(
        "{} hook(s) trusted (stored in {}); a changed definition or script asks again.",
        candidates.len(),
        store.path().display()
    )?;
    Ok(ExitStatus::Success)
}

pub(super) fn untrust(workspace: &Workspace, selectors: &[String]) -> anyhow::Result<ExitStatus> {
    let mut store = workspace.trust_store()?;
    let hooks = workspace.project_hooks(&workspace.hooks()?, &store);
    let cwd = workspace.cwd();
    let mut removed = 0;
    for hook in hooks.iter().filter(|h| selected(h, selectors)) {
        if store.untrust(hook) {
            removed += 1;
            outln!("untrusted {}", line(hook, cwd))?;
        }
    }
    if selectors.is_empty() {
        // Also forget hashes of hooks that are no longer configured here.
        removed += store.untrust_project(cwd);
    }
    if removed == 0 {
        outln!("Nothing to untrust in {}.", cwd.display())?;
        return Ok(ExitStatus::Success);
    }
    store.save()?;
    outln!("{removed} trust record(s) removed; dsh asks again before running them.")?;
    Ok(ExitStatus::Success)
}
