//! Every signal dsh sends to a process group goes through this module
//! (`nix`'s safe `killpg`; the workspace forbids `unsafe` code).
//!
//! # The `pgid <= 1` guard
//!
//! `kill(-pgid, sig)` with `pgid == 0` signals the caller's own group and
//! with `pgid == 1`… `kill(-1, sig)` signals *every process the caller may
//! signal*. A bogus id must therefore never reach the system call. The guard
//! is the pure function [`group_target`], tested on its own: a regression
//! shows up as a failing assertion, never as a real signal to the wrong
//! group.

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
