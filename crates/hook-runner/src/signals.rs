//! Every signal dsh sends to a process group, and the child-side set-up that
//! ties a child's life to dsh's. This is the only module of the workspace
//! that may use `unsafe` (for `pre_exec`); everything else goes through the
//! safe functions here.
//!
//! # The `pgid <= 1` guard
//!
//! `kill(-pgid, sig)` with `pgid == 0` signals the caller's own group and
//! with `pgid == 1`… `kill(-1, sig)` signals *every process the caller may
//! signal*. A bogus id must therefore never reach the system call. The guard
//! is the pure function [`group_target`], tested on its own: a regression
//! shows up as a failing assertion, never as a real signal to the wrong
//! group.
//!
//! # Children die with dsh (Linux)
//!
//! [`die_with_parent`] makes the child ask the kernel for `SIGKILL` when its
//! parent dies (`PR_SET_PDEATHSIG`), set between `fork` and `exec`, so a hook
//! or a `bash` command does not outlive a dsh that was itself `SIGKILL`ed.
//! What this cannot guarantee:
//!
//! * It reaches the **direct child only** (the group leader: the shell, or the
//!   program itself). The kernel clears the setting in every process the
//!   child forks, so `sh -c 'a; b'` where the shell forks `a` leaves `a`
//!   running (reparented) when dsh is killed with SIGKILL. A shell that
//!   `exec`s its last command (`sh -c 'sleep 30'`, bash and dash both do) keeps
//!   the setting, since it survives `execve`. When dsh exits normally or on
//!   SIGTERM/SIGINT/SIGHUP, [`crate::ProcessLayer::kill_all`] kills whole
//!   groups instead; only SIGKILL of dsh depends on this mechanism.
//! * A process that leaves its group (`setsid`, `setpgid`) is never reached by
//!   a group signal, whatever dsh does.
//! * "Parent" means the spawning **thread**: the signal fires when the thread
//!   that called `fork` exits, not the process. Children are spawned from the
//!   tokio thread that polls the run future; tokio's worker threads and the
//!   thread that calls `block_on` live as long as the runtime, and a
//!   blocking-pool thread running `Handle::block_on(run)` stays inside that
//!   call until the run is over, so in those set-ups the signal fires only
//!   when dsh itself goes. A run started on a thread that then exits before
//!   the child does (for example a short-lived `std::thread` whose own
//!   runtime hands the child to someone else) would have its child killed.
//! * Between `fork` and `prctl` the parent may already have died; the child
//!   checks its parent id after `prctl` and exits at once if it changed.
//!
//! Other Unix systems have no `PR_SET_PDEATHSIG`; there [`die_with_parent`]
//! does nothing and only `kill_all` applies.

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tracing::debug;

pub use nix::sys::signal::Signal as GroupSignal;

/// The group a signal may be sent to, or `None` when `pgid` must never be
/// signalled: 0 (the caller's own group), 1 (`kill(-1)`: every process) or a
/// number that does not fit a `pid_t`.
pub fn group_target(pgid: u32) -> Option<Pid> {
    let raw = libc::pid_t::try_from(pgid).ok()?;
    if raw <= 1 {
        return None;
    }
    Some(Pid::from_raw(raw))
}

/// Sends `signal` to every process in group `pgid`. Returns whether the
/// signal was delivered to a live group: `false` when the guard refused the
/// id or the group is already empty (ESRCH, expected and not logged).
pub fn signal_group(pgid: u32, signal: Signal) -> bool {
    let Some(target) = group_target(pgid) else {
        debug!(pgid, "refusing to signal a process group id <= 1");
        return false;
    };
    match killpg(target, signal) {
        Ok(()) => true,
        Err(Errno::ESRCH) => false,
        Err(err) => {
            debug!(pgid, ?signal, error = %err, "signalling a process group failed");
            false
        }
    }
}

/// Arranges for the child started by `command` to receive SIGKILL when the
/// spawning thread of dsh dies (Linux; see the module docs for the limits).
#[cfg(target_os = "linux")]
pub(crate) fn die_with_parent(command: &mut tokio::process::Command) {
    let parent = nix::unistd::getpid();
    // SAFETY: the closure runs in the forked child before exec, where only
    // async-signal-safe calls are allowed. prctl(2), getppid(2) and _exit(2)
    // are system calls that neither allocate nor take locks; nothing is
    // captured but a `Pid` (a plain integer).
    unsafe {
        command.pre_exec(move || {
            if nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).is_err() {
                // Not fatal: the child still runs and kill_all still applies.
                return Ok(());
            }
            if nix::unistd::getppid() != parent {
                // dsh died between fork and prctl: the signal will never come.
                libc::_exit(137);
            }
            Ok(())
        });
    }
}

/// No parent-death signal outside Linux; `kill_all` is the only mechanism.
#[cfg(not(target_os = "linux"))]
pub(crate) fn die_with_parent(_command: &mut tokio::process::Command) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guard_refuses_own_group_everyone_and_out_of_range_ids() {
        assert_eq!(group_target(0), None);
        assert_eq!(group_target(1), None);
        assert_eq!(group_target(u32::MAX), None);
        assert_eq!(group_target(1 << 31), None);
        assert_eq!(group_target(2), Some(Pid::from_raw(2)));
        assert_eq!(group_target(4242), Some(Pid::from_raw(4242)));
        assert_eq!(group_target(i32::MAX as u32), Some(Pid::from_raw(i32::MAX)));
    }
}
