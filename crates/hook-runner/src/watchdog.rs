//! Children die with dsh, even when dsh is SIGKILLed.
//!
//! One small watchdog process per dsh process (started at the first spawn):
//! `/bin/sh` running [`SCRIPT`], in its own process group, reading a pipe
//! whose only write end dsh holds. The registry of live process groups
//! tells it `+PGID` when a group starts and `-PGID` when it is reaped. When
//! dsh dies, however it dies, the kernel closes the write end; the watchdog
//! reads EOF, SIGKILLs every group still registered, and exits. On a normal
//! exit that list is empty (or holds what `kill_all` already killed).
//!
//! Why not `PR_SET_PDEATHSIG`: it must be set between fork and exec
//! (`pre_exec`), which moves every spawn off `posix_spawn` onto the slower
//! fork path (measured: hook dispatch went from 1.12x to 1.40x raw spawns);
//! it reaches only the direct child, never what the shell forked; it fires
//! when the spawning *thread* exits, not the process; and it exists on Linux
//! only. The watchdog covers whole groups on every Unix for two pipe writes
//! per run.
//!
//! What cannot be guaranteed:
//! * A process that leaves its group (`setsid`, `setpgid`, a daemonizing
//!   tool) is not in any registered group and survives.
//! * Background processes a hook or command deliberately left behind after
//!   exiting on its own (`server &`) are deregistered with their leader and
//!   survive, as they would in a terminal.
//! * The watchdog can itself be killed (e.g. `kill -9 -1` by the user, or an
//!   OOM kill); then nothing is left to act when dsh dies. It ignores
//!   SIGINT, SIGHUP, SIGTERM and SIGQUIT, and is not in dsh's process group,
//!   so Ctrl-C or a closed terminal does not take it down first.
//! * Between dsh's death and the watchdog's kill, a leader that exits may be
//!   reaped by init and its number reused; the watchdog acts within
//!   milliseconds of EOF, so that window is as small as dsh's own.
//! * If the watchdog cannot be started (no `/bin/sh`), runs go on without
//!   it; only `kill_all` on dsh's exit paths protects them then.

use std::io::Write as _;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock, PoisonError};

use std::os::unix::process::CommandExt as _;
use tracing::debug;

use crate::signals;

/// The watchdog program: keeps the set of live groups as a space-separated
/// list, and kills them all on EOF.
const SCRIPT: &str = r#"trap '' INT HUP TERM QUIT
live=' '
while read -r op pgid; do
  case $op in
    +) live="$live$pgid " ;;
    -) case $live in *" $pgid "*) live="${live%%" $pgid "*} ${live#*" $pgid "}" ;; esac ;;
  esac
done
for pgid in $live; do kill -9 "-$pgid" 2>/dev/null; done
"#;

/// The write end of the watchdog's pipe; `None` when it could not start or
/// has gone away.
fn pipe() -> &'static Mutex<Option<ChildStdin>> {
    static PIPE: OnceLock<Mutex<Option<ChildStdin>>> = OnceLock::new();
    PIPE.get_or_init(|| Mutex::new(start()))
}

fn start() -> Option<ChildStdin> {
    let spawned = Command::new("/bin/sh")
        .arg("-c")
        .arg(SCRIPT)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn();
    match spawned {
        // The child is never waited for: it lives as long as dsh, and its
        // exit status means nothing. std's pipe is close-on-exec, so no
        // other child of dsh holds the write end and delays the EOF.
        Ok(mut child) => {
            debug!(pid = child.id(), "process watchdog started");
            child.stdin.take()
        }
        Err(err) => {
            debug!(error = %err, "cannot start the process watchdog");
            None
        }
    }
}

fn send(line: String) {
    let mut pipe = pipe().lock().unwrap_or_else(PoisonError::into_inner);
    let Some(stdin) = pipe.as_mut() else { return };
    if let Err(err) = stdin.write_all(line.as_bytes()) {
        debug!(error = %err, "process watchdog gone; children no longer die with dsh");
        *pipe = None;
    }
}

/// Tells the watchdog a group is live. Refuses ids the signal guard refuses.
pub(crate) fn watch(pgid: u32) {
    if signals::group_target(pgid).is_some() {
        send(format!("+ {pgid}\n"));
    }
}

/// Tells the watchdog a group's leader was reaped (or the group killed).
pub(crate) fn unwatch(pgid: u32) {
    if signals::group_target(pgid).is_some() {
        send(format!("- {pgid}\n"));
    }
}
