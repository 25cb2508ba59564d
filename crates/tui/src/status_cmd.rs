//! `dsh status [--json]`: what a session in the current directory would
//! load, resolved by dsh-core exactly as a session resolves it.

use dsh_stdio::stdio::{ExitStatus, outln};

/// The spec of an interactive session here (the policy that asks), as
/// text or one JSON object.
pub fn run(flags: &dsh_core::SessionFlags, json: bool) -> anyhow::Result<ExitStatus> {
    flags.refuse_worktree("dsh status")?;
    let env = dsh_core::Env::from_process();
    let home = env.dsh_home()?;
    let config = dsh_core::DshConfig::load(&home)?;
    let cwd = dsh_core::current_dir()?;
    let spec = dsh_core::SessionSpec::resolve(dsh_core::Inputs {
        env: &env,
        config: &config,
        flags,
        cwd: &cwd,
        policy: dsh_core::TrustPolicy::Ask,
    })?;
    let status = dsh_core::Status::of(&spec)?;
    if json {
        outln!("{}", serde_json::to_string(&status)?)?;
    } else {
        outln!("{}", status.text().trim_end())?;
    }
    Ok(ExitStatus::Success)
}
