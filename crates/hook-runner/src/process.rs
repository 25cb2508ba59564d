//! The process layer: starting, watching and killing one child of dsh (a
//! hook command or a `bash` tool call).
//!
//! # Signal policy
//!
//! **Every hook runs in its own process group** (`setpgid(0, 0)` at spawn,
//! so the group id is the hook's pid). That decides three things:
//!
//! * **Who gets Ctrl-C.** The terminal sends SIGINT to its *foreground*
//!   process group, which is dsh's. Hooks are not in it, so a Ctrl-C reaches
//!   dsh alone; dsh then decides what to do and, if hooks must stop, calls
//!   [`ProcessLayer::kill_all`] from its own signal-handling path (e.g. a
//!   task awaiting `tokio::signal::ctrl_c()`, never a raw `sigaction` handler:
//!   `kill_all` takes a mutex). The same call belongs on every exit path of
//!   dsh. A hook therefore never sees a half-delivered Ctrl-C racing dsh's own
//!   shutdown, and a hook that traps SIGINT cannot keep the session alive.
//! * **What happens to a hook's children.** A shell hook forks: `sh -c 'a | b'`
//!   or `sleep 100 & wait`. Killing only the shell (what Codex does) leaves
//!   those children running and, worse, holding the stdout pipe open, so a
//!   reader waiting for EOF hangs (reported upstream as anthropics/claude-code#77078 and #85250). Every
//!   signal here goes to the whole group (`kill(-pgid, sig)`), children
//!   included.
//! * **How a hook is stopped.** On its deadline or on cancellation: SIGTERM
//!   (and SIGCONT, so a member stopped by job control can act on it) to
//!   the group, up to [`ProcessSpec::kill_grace`] to exit, then
//!   SIGKILL to the group, then reap. Output pipes are read for at most a
//!   short settle time after the SIGKILL: a process that escaped the group
//!   (`setsid`) and still holds a pipe is abandoned, not waited for. So a
//!   killed run returns within `timeout + kill_grace + KILL_SETTLE`.
//!   [`ProcessLayer::kill_all`] skips the SIGTERM step: dsh is leaving.
//!   A hook spawned concurrently with `kill_all` (spawned before, registered
//!   after) is killed as soon as it registers, so none slips through.
//! * **The terminal.** A hook's group is a background group of dsh's
//!   terminal session: stdin is always a pipe, but a hook that opens
//!   `/dev/tty` and reads it is stopped by SIGTTIN until its deadline. (Claude
//!   Code runs hooks with no controlling terminal at all; dsh keeps them in
//!   its session so that `kill_all` and the terminal's hang-up reach them.)
//!
//! A child that **exits on its own** is not killed. Its pipes are drained for
//! at most [`ProcessSpec::drain_after_exit`] after it exits; anything it deliberately left running
//! in the background (`cmd &`) keeps running, as it would in a terminal, and
//! loses nothing but the pipe (a later write to it gets SIGPIPE).
//!
//! As a backstop, the child is spawned with `kill_on_drop`, and a
//! [`ProcessGroupGuard`] SIGKILLs the group if the run future is dropped
//! before it finished (the caller gave up on it).
//!
//! Known limit: the group id is the leader's pid. Once the leader is reaped
//! and every member has exited, the kernel may reuse that number; a SIGKILL
//! sent to the group in the microseconds between reap and deregistration
//! could in theory hit a new group with the same id. Deregistration follows
//! the reap immediately to keep that window negligible.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::pin::pin;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tracing::debug;

use crate::signals::{self, GroupSignal};
use crate::watchdog;

/// After the final SIGKILL, how long to wait for the reap and for the output
/// pipes to reach EOF. Killed processes die within milliseconds; only a
/// process that escaped the group can keep a pipe open longer.
pub const KILL_SETTLE: Duration = Duration::from_millis(250);

/// Size of the read buffer for each output stream.
const READ_CHUNK: usize = 64 * 1024;

/// File descriptors one live child costs dsh at its peak (the spawn): three
/// pipes with both ends open, std's exec-error pipe, and a pidfd.
const FDS_PER_CHILD: u64 = 9;
/// Descriptors left for everything else dsh has open (logs, sockets, the
/// terminal, the runtime's own).
const FDS_RESERVED: u64 = 64;
/// Upper bound on concurrent children whatever the fd limit says.
const MAX_CONCURRENT_CHILDREN: u64 = 4096;

/// What program a child runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessCommand {
    /// The executable (looked up on `PATH` when it has no slash).
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<String>,
}

impl ProcessCommand {
    /// `SHELL -c COMMAND`.
    pub fn shell(shell: impl Into<OsString>, command: impl Into<String>) -> Self {
        ProcessCommand {
            program: shell.into(),
            args: vec!["-c".to_owned(), command.into()],
        }
    }

    /// An explicit argument vector, no shell.
    pub fn exec(program: impl Into<OsString>, args: Vec<String>) -> Self {
        ProcessCommand {
            program: program.into(),
            args,
        }
    }

    /// The executable, for messages.
    pub fn executable(&self) -> String {
        PathBuf::from(&self.program).display().to_string()
    }
}

/// What the child reads on stdin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StdinSource {
    /// `/dev/null` (the `bash` tool).
    Null,
    /// A pipe that receives these bytes and is then closed (hooks).
    Bytes(Vec<u8>),
}

/// How a child process ended. Distinct values, never confused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessExit {
    /// Exited on its own with this code.
    Exited(i32),
    /// Killed by a signal dsh did not send (the signal number).
    Signaled(i32),
    /// Killed by dsh at its deadline.
    TimedOut,
    /// Killed by dsh because the caller's token fired or
    /// [`ProcessLayer::kill_all`] ran (or never started for those reasons).
    Cancelled,
    /// Never ran: the program could not be started. The message names the
    /// executable and carries the OS error.
    SpawnFailed(String),
    /// Never ran because dsh hit one of its own resource limits starting it
    /// (EMFILE, ENFILE, EAGAIN, ENOMEM): not the program's fault.
    DshLimit(String),
}

/// One child to run under [`ProcessLayer::run`].
#[derive(Debug, Clone)]
pub struct ProcessSpec {
    /// What to start.
    pub command: ProcessCommand,
    /// Working directory.
    pub cwd: PathBuf,
    /// Variables added to dsh's own environment (later entries win). The
    /// layer's scrubbed variables are removed even when listed here.
    pub env: Vec<(String, String)>,
    /// Stdin.
    pub stdin: StdinSource,
    /// The deadline, counted from spawn.
    pub timeout: Duration,
    /// After SIGTERM, how long the group gets to exit before SIGKILL.
    pub kill_grace: Duration,
    /// After the child exited on its own, how long its output pipes are
    /// still read (a background process it left behind may hold them open;
    /// it is not waited for past this).
    pub drain_after_exit: Duration,
}

/// Where one output stream goes: the layer reads every byte (so the child
/// never blocks on a full pipe) and hands each chunk here; the sink decides
/// what to keep, which bounds memory.
pub trait OutputSink: Send {
    /// Receives the next chunk of the stream.
    fn push(&mut self, chunk: &[u8]);
}

/// How one child ended and what its sinks collected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessRun<S> {
    /// How it ended.
    pub exit: ProcessExit,
    /// The stdout sink.
    pub stdout: S,
    /// The stderr sink.
    pub stderr: S,
    /// Wall time from spawn to reap (zero when it never started).
    pub duration: Duration,
    /// The child's pid, which is also its process-group id; `None` when it
    /// never started.
    pub pid: Option<u32>,
}

/// The process layer every child of dsh goes through: hook commands and the
/// `bash` tool. Each child runs in its own process group, dies with dsh
/// (its whole group, even when dsh is SIGKILLed: see the `watchdog`
/// module), has the scrubbed variables removed from
/// its environment, and counts against one process-wide concurrency budget
/// sized from the file-descriptor limit, so thousands of simultaneous runs
/// queue instead of failing with EMFILE.
///
/// Cheap to clone; clones share the registry of live groups, so
/// [`ProcessLayer::kill_all`] on any clone reaches every child started
/// through any of them.
#[derive(Debug, Clone)]
pub struct ProcessLayer {
    registry: Arc<Registry>,
    scrub_env: Arc<[String]>,
}

impl Default for ProcessLayer {
    fn default() -> Self {
        ProcessLayer::new(default_scrubbed_env())
    }
}

/// The variables removed from every child's environment by default: dsh's
/// own API key variables (the model's key must not reach a hook or a
/// model-run `env`) and `DSH_KEY_FD`, the marker of dsh's start-up key
/// hand-off (a child dsh must never take it for its own).
pub fn default_scrubbed_env() -> Vec<String> {
    vec![
        "DSH_API_KEY".to_owned(),
        "DEEPSEEK_API_KEY".to_owned(),
        "DSH_KEY_FD".to_owned(),
    ]
}

impl ProcessLayer {
    /// A layer with its own (empty) registry that removes `scrub_env` from
    /// every child's environment.
    pub fn new(scrub_env: Vec<String>) -> Self {
        ProcessLayer {
            registry: Arc::new(Registry::default()),
            scrub_env: scrub_env.into(),
        }
    }

    /// The variables removed from every child's environment.
    pub fn scrubbed_env(&self) -> &[String] {
        &self.scrub_env
    }

    /// How many children may run at once in this process (all layers share
    /// the budget, since the fd limit is per process).
    pub fn concurrency_limit() -> usize {
        limit_from_nofile(current_nofile_limit())
    }

    /// Runs one child to completion (see the module docs for the policy):
    /// returns when it exited, or was killed because `spec.timeout` passed
    /// (`TimedOut`) or `cancel` fired or [`ProcessLayer::kill_all`] ran
    /// (`Cancelled`). Never fails: a child that cannot start is
    /// `SpawnFailed`. Dropping the future SIGKILLs the child's group.
    pub async fn run<S: OutputSink>(
        &self,
        spec: ProcessSpec,
        stdout: S,
        stderr: S,
        cancel: &CancellationToken,
    ) -> ProcessRun<S> {
        run_one(self, spec, stdout, stderr, cancel).await
    }

    /// Waits for a slot of the process-wide budget (for work that holds
    /// descriptors but is not a child: HTTP hooks); `None` when `cancel`
    /// fired first.
    pub(crate) async fn permit(&self, cancel: &CancellationToken) -> Option<OwnedSemaphorePermit> {
        acquire_permit(cancel).await
    }

    /// A token that the next [`ProcessLayer::kill_all`] cancels.
    pub(crate) fn abort_token(&self) -> CancellationToken {
        self.registry.abort_token()
    }

    /// SIGKILLs the process group of every child currently running through
    /// this layer or a clone of it, and aborts every HTTP hook request in
    /// flight; their runs report `Cancelled`.
    ///
    /// Safe to call from any thread, any number of times; it does not wait
    /// for the processes to be reaped (their `run` calls do that). It takes
    /// a mutex, so it must not be called from inside a raw signal handler.
    pub fn kill_all(&self) {
        self.registry.kill_all();
    }

    /// How many process groups are live (spawned and not yet reaped and
    /// deregistered). Meant for tests and diagnostics.
    pub fn live_groups(&self) -> usize {
        self.registry.len()
    }

    /// Spawns a long-lived service child (an MCP server speaking on its
    /// stdin/stdout) under the same policy as every other child: its own
    /// process group, the scrubbed variables removed, registered so that
    /// [`ProcessLayer::kill_all`] and the watchdog (dsh's death) reach its
    /// whole group. The caller owns the pipes; dropping the returned
    /// [`ServiceGroup`] SIGKILLs the group and deregisters it.
    pub fn spawn_service(&self, mut command: Command) -> io::Result<(Child, ServiceGroup)> {
        for name in self.scrub_env.iter() {
            command.env_remove(name);
        }
        command.process_group(0).kill_on_drop(true);
        let epoch_at_spawn = self.registry.epoch();
        let child = command.spawn()?;
        let Some(pid) = child.id() else {
            return Err(io::Error::other(
                "the service exited before it was registered",
            ));
        };
        let guard = self.registry.register(pid, epoch_at_spawn);
        Ok((child, ServiceGroup { guard }))
    }
}

fn current_nofile_limit() -> u64 {
    match nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE) {
        Ok((soft, _hard)) => soft,
        // Unknown: assume the common default soft limit.
        Err(_) => 1024,
    }
}

/// The concurrency budget for a soft fd limit of `nofile`: what is left
/// after the reserve, divided by the cost of one child, at least one.
fn limit_from_nofile(nofile: u64) -> usize {
    let budget = nofile.saturating_sub(FDS_RESERVED) / FDS_PER_CHILD;
    usize::try_from(budget.clamp(1, MAX_CONCURRENT_CHILDREN)).unwrap_or(1)
}

/// The process-wide budget, sized once from the fd limit at first use.
fn permits() -> Arc<Semaphore> {
    static PERMITS: OnceLock<Arc<Semaphore>> = OnceLock::new();
    Arc::clone(PERMITS.get_or_init(|| Arc::new(Semaphore::new(ProcessLayer::concurrency_limit()))))
}

/// The live process groups of every clone of one layer, with a flag per
/// group that [`Registry::kill_all`] sets so the run reports `Cancelled`.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    groups: Mutex<HashMap<u32, Arc<AtomicBool>>>,
    /// Bumped by every [`Registry::kill_all`], so a child spawned just before
    /// a `kill_all` but registered just after it is still killed.
    kill_epoch: AtomicU64,
    /// Cancelled (and replaced) by every [`Registry::kill_all`]: work that is
    /// not a process (HTTP hooks) watches it.
    aborts: Mutex<CancellationToken>,
}

impl Registry {
    fn lock(&self) -> MutexGuard<'_, HashMap<u32, Arc<AtomicBool>>> {
        // A panic while holding this lock cannot leave the map inconsistent
        // (every operation is a single insert/remove/iterate), so poisoning
        // is ignored rather than propagated.
        self.groups
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    /// The token the next [`Registry::kill_all`] cancels.
    pub(crate) fn abort_token(&self) -> CancellationToken {
        self.aborts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    pub(crate) fn kill_all(&self) {
        {
            let mut aborts = self
                .aborts
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            aborts.cancel();
            *aborts = CancellationToken::new();
        }
        let groups = self.lock();
        self.kill_epoch.fetch_add(1, Ordering::SeqCst);
        for (&pgid, killed) in groups.iter() {
            killed.store(true, Ordering::SeqCst);
            signals::signal_group(pgid, GroupSignal::SIGKILL);
        }
        if !groups.is_empty() {
            debug!(groups = groups.len(), "killed every live process group");
        }
    }

    fn epoch(&self) -> u64 {
        self.kill_epoch.load(Ordering::SeqCst)
    }

    /// Registers a freshly spawned group. `epoch_at_spawn` is
    /// [`Registry::epoch`] read before spawning: if a `kill_all` ran in
    /// between, it could not see this group, so it is killed here.
    fn register(self: &Arc<Self>, pgid: u32, epoch_at_spawn: u64) -> ProcessGroupGuard {
        let killed = Arc::new(AtomicBool::new(false));
        let mut groups = self.lock();
        groups.insert(pgid, Arc::clone(&killed));
        watchdog::watch(pgid);
        if self.epoch() != epoch_at_spawn {
            killed.store(true, Ordering::SeqCst);
            signals::signal_group(pgid, GroupSignal::SIGKILL);
        }
        drop(groups);
        ProcessGroupGuard {
            registry: Arc::clone(self),
            pgid,
            killed,
            finished: false,
        }
    }
}

/// Owns one registered process group for the duration of a run. Dropping it
/// deregisters the group; dropping it before [`ProcessGroupGuard::finish`]
/// (the run future was abandoned mid-flight) also SIGKILLs the group.
#[derive(Debug)]
pub(crate) struct ProcessGroupGuard {
    registry: Arc<Registry>,
    pgid: u32,
    killed: Arc<AtomicBool>,
    finished: bool,
}

impl ProcessGroupGuard {
    /// Whether [`Registry::kill_all`] has killed this group.
    fn killed_by_kill_all(&self) -> bool {
        self.killed.load(Ordering::SeqCst)
    }

    /// The run is over and its leader reaped: deregister without killing.
    fn finish(mut self) {
        self.finished = true;
    }
}

impl Drop for ProcessGroupGuard {
    fn drop(&mut self) {
        self.registry.lock().remove(&self.pgid);
        if !self.finished {
            debug!(pgid = self.pgid, "run abandoned; killing its process group");
            signals::signal_group(self.pgid, GroupSignal::SIGKILL);
        }
        watchdog::unwatch(self.pgid);
    }
}

/// A registered service child's process group (see
/// [`ProcessLayer::spawn_service`]). Dropping it SIGKILLs the group (a
/// service never ends on its own terms while dsh needs it) and removes it
/// from the registry and the watchdog.
#[derive(Debug)]
pub struct ServiceGroup {
    guard: ProcessGroupGuard,
}

impl ServiceGroup {
    /// The group id (the service leader's pid).
    pub fn pgid(&self) -> u32 {
        self.guard.pgid
    }

    /// Whether [`ProcessLayer::kill_all`] has killed this group.
    pub fn killed(&self) -> bool {
        self.guard.killed_by_kill_all()
    }
}

/// Why dsh stopped a child.
#[derive(Debug, Clone, Copy)]
enum KillReason {
    Deadline,
    Cancel,
}

/// How the watch loop ended.
enum Ending {
    /// The leader exited (or could not be waited for) without dsh's doing.
    Reaped(io::Result<ExitStatus>),
    /// dsh has to stop the child.
    Kill(KillReason),
}

fn build_command(layer: &ProcessLayer, spec: &ProcessSpec) -> Command {
    let mut command = Command::new(&spec.command.program);
    command
        .args(&spec.command.args)
        .current_dir(&spec.cwd)
        .envs(spec.env.iter().map(|(k, v)| (k, v)));
    // After `envs`, so a variable is gone even when a caller passed it.
    for name in layer.scrub_env.iter() {
        command.env_remove(name);
    }
    let stdin = match spec.stdin {
        StdinSource::Null => Stdio::null(),
        StdinSource::Bytes(_) => Stdio::piped(),
    };
    command
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    command
}

/// Whether a spawn error is one of dsh's own resource limits rather than
/// something wrong with the program: out of descriptors (per process or
/// system-wide), out of processes, out of memory.
fn is_dsh_limit(err: &io::Error) -> bool {
    matches!(
        err.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::EAGAIN | libc::ENOMEM)
    )
}

// std's ErrorKind is non-exhaustive: every other kind reads the same.
#[allow(clippy::wildcard_enum_match_arm)]
fn spawn_failure(spec: &ProcessSpec, err: &io::Error) -> String {
    let executable = spec.command.executable();
    match err.kind() {
        io::ErrorKind::NotFound if !spec.cwd.is_dir() => format!(
            "working directory not found: {} ({err})",
            spec.cwd.display()
        ),
        io::ErrorKind::NotFound => format!("command not found: {executable} ({err})"),
        io::ErrorKind::PermissionDenied => format!("permission denied: {executable} ({err})"),
        _ => format!("cannot start {executable}: {err}"),
    }
}

fn exit_from_status(status: ExitStatus) -> ProcessExit {
    match (status.code(), status.signal()) {
        (Some(code), _) => ProcessExit::Exited(code),
        (None, Some(signal)) => ProcessExit::Signaled(signal),
        // Neither a code nor a signal (e.g. a stopped status) cannot come
        // from wait(); report it as an unusual exit rather than guess.
        (None, None) => ProcessExit::Exited(-1),
    }
}

async fn write_stdin(stdin: Option<ChildStdin>, payload: &[u8]) {
    let Some(mut stdin) = stdin else { return };
    if !payload.is_empty() {
        match stdin.write_all(payload).await {
            Ok(()) => {}
            // The child did not want (all of) its input: normal.
            Err(err) if err.kind() == io::ErrorKind::BrokenPipe => {}
            Err(err) => debug!(error = %err, "writing child stdin failed"),
        }
    }
    // Dropping closes the pipe: the child sees EOF.
    drop(stdin);
}

async fn read_into<R: AsyncRead + Unpin, S: OutputSink>(reader: Option<R>, sink: &mut S) {
    let Some(mut reader) = reader else { return };
    let mut chunk = vec![0u8; READ_CHUNK];
    loop {
        match reader.read(&mut chunk).await {
            Ok(0) => return,
            Ok(n) => sink.push(&chunk[..n]),
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => {
                debug!(error = %err, "reading child output failed");
                return;
            }
        }
    }
}

/// Waits for a slot of the process-wide budget, or for cancellation.
async fn acquire_permit(cancel: &CancellationToken) -> Option<OwnedSemaphorePermit> {
    let permits = permits();
    tokio::select! {
        biased;
        () = cancel.cancelled() => None,
        permit = permits.acquire_owned() => permit.ok(),
    }
}

async fn run_one<S: OutputSink>(
    layer: &ProcessLayer,
    spec: ProcessSpec,
    mut stdout: S,
    mut stderr: S,
    cancel: &CancellationToken,
) -> ProcessRun<S> {
    // The pieces are moved back out of this helper on every early return.
    macro_rules! never_started {
        ($exit:expr) => {
            ProcessRun {
                exit: $exit,
                stdout,
                stderr,
                duration: Duration::ZERO,
                pid: None,
            }
        };
    }
    if cancel.is_cancelled() {
        return never_started!(ProcessExit::Cancelled);
    }
    let epoch_at_wait = layer.registry.epoch();
    let Some(_permit) = acquire_permit(cancel).await else {
        return never_started!(ProcessExit::Cancelled);
    };
    if layer.registry.epoch() != epoch_at_wait {
        // kill_all ran while this run was queued: it was meant to stop too.
        return never_started!(ProcessExit::Cancelled);
    }

    let epoch_at_spawn = layer.registry.epoch();
    let started = Instant::now();
    let mut child = match build_command(layer, &spec).spawn() {
        Ok(child) => child,
        Err(err) if is_dsh_limit(&err) => {
            return never_started!(ProcessExit::DshLimit(spawn_failure(&spec, &err)));
        }
        Err(err) => return never_started!(ProcessExit::SpawnFailed(spawn_failure(&spec, &err))),
    };
    let Some(pid) = child.id() else {
        // Only possible once the child has been reaped, which we have not done.
        return never_started!(ProcessExit::DshLimit(format!(
            "cannot start {}: no process id after spawn",
            spec.command.executable()
        )));
    };
    let guard = layer.registry.register(pid, epoch_at_spawn);
    debug!(pid, program = %spec.command.executable(), "child started");

    let stdin = child.stdin.take();
    let out_pipe = child.stdout.take();
    let err_pipe = child.stderr.take();
    let payload: &[u8] = match &spec.stdin {
        StdinSource::Null => &[],
        StdinSource::Bytes(bytes) => bytes,
    };
    let grace = spec.kill_grace;

    let mut reaped_at = None;
    let exit = {
        let mut io = pin!(async {
            tokio::join!(
                write_stdin(stdin, payload),
                read_into(out_pipe, &mut stdout),
                read_into(err_pipe, &mut stderr),
            )
        });
        let mut io_done = false;
        let mut deadline = pin!(tokio::time::sleep(spec.timeout));
        let mut cancelled = pin!(cancel.cancelled());

        let ending = loop {
            tokio::select! {
                biased;
                () = &mut cancelled => break Ending::Kill(KillReason::Cancel),
                () = &mut deadline => break Ending::Kill(KillReason::Deadline),
                status = child.wait() => break Ending::Reaped(status),
                _ = &mut io, if !io_done => io_done = true,
            }
        };

        match ending {
            Ending::Reaped(status) => {
                reaped_at = Some(Instant::now());
                if !io_done
                    && tokio::time::timeout(spec.drain_after_exit, &mut io)
                        .await
                        .is_err()
                {
                    debug!(
                        pid,
                        "child exited but its output pipes stayed open; stopped reading"
                    );
                }
                match status {
                    Ok(status) if status.signal().is_some() && guard.killed_by_kill_all() => {
                        ProcessExit::Cancelled
                    }
                    Ok(status) => exit_from_status(status),
                    Err(err) => {
                        // wait() itself failed: the process is beyond our
                        // reach; make sure the group is gone.
                        debug!(pid, error = %err, "waiting for child failed");
                        signals::signal_group(pid, GroupSignal::SIGKILL);
                        ProcessExit::Signaled(libc::SIGKILL)
                    }
                }
            }
            Ending::Kill(reason) => {
                debug!(pid, ?reason, "stopping child: SIGTERM to its group");
                signals::signal_group(pid, GroupSignal::SIGTERM);
                // A member stopped by job control (e.g. SIGTTIN from reading
                // the terminal) would hold the SIGTERM pending forever.
                signals::signal_group(pid, GroupSignal::SIGCONT);
                let mut reaped = false;
                let mut term_deadline = pin!(tokio::time::sleep(grace));
                // Give the group its grace: the leader may exit early, but
                // its children may still be cleaning up (they hold the pipes).
                while !(reaped && io_done) {
                    tokio::select! {
                        biased;
                        () = &mut term_deadline => break,
                        status = child.wait(), if !reaped => {
                            reaped = true;
                            reaped_at = Some(Instant::now());
                            if let Err(err) = status {
                                debug!(pid, error = %err, "waiting for child failed");
                            }
                        }
                        _ = &mut io, if !io_done => io_done = true,
                    }
                }
                // Always: members that ignored SIGTERM must not outlive the run.
                signals::signal_group(pid, GroupSignal::SIGKILL);
                let mut settle = pin!(tokio::time::sleep(KILL_SETTLE));
                while !(reaped && io_done) {
                    tokio::select! {
                        biased;
                        () = &mut settle => break,
                        _ = child.wait(), if !reaped => {
                            reaped = true;
                            reaped_at = Some(Instant::now());
                        }
                        _ = &mut io, if !io_done => io_done = true,
                    }
                }
                if !reaped {
                    // Uninterruptible sleep, most likely. kill_on_drop and
                    // tokio's orphan reaping finish the job later.
                    debug!(pid, "child not reaped after SIGKILL; giving up waiting");
                }
                if !io_done {
                    debug!(
                        pid,
                        "a process outside the child's group holds its output; stopped reading"
                    );
                }
                match reason {
                    KillReason::Deadline => ProcessExit::TimedOut,
                    KillReason::Cancel => ProcessExit::Cancelled,
                }
            }
        }
    };
    guard.finish();
    drop(child);

    let duration = reaped_at.unwrap_or_else(Instant::now) - started;
    debug!(pid, exit = ?exit, ?duration, "child finished");
    ProcessRun {
        exit,
        stdout,
        stderr,
        duration,
        pid: Some(pid),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {

    #[test]
    fn only_resource_exhaustion_is_a_dsh_limit() {
        for errno in [libc::EMFILE, libc::ENFILE, libc::EAGAIN, libc::ENOMEM] {
            assert!(
                is_dsh_limit(&io::Error::from_raw_os_error(errno)),
                "{errno}"
            );
        }
        for errno in [libc::ENOENT, libc::EACCES, libc::ENOEXEC] {
            assert!(
                !is_dsh_limit(&io::Error::from_raw_os_error(errno)),
                "{errno}"
            );
        }
    }

    use super::*;
    use std::os::unix::process::CommandExt;

    fn spawn_sleeper() -> std::process::Child {
        let mut command = std::process::Command::new("sleep");
        command.arg("100").process_group(0);
        command.spawn().unwrap()
    }

    #[test]
    fn group_registered_after_a_concurrent_kill_all_is_killed() {
        let registry = Arc::new(Registry::default());
        let epoch = registry.epoch();
        let mut child = spawn_sleeper();
        // kill_all runs between spawn and registration: it cannot see it.
        registry.kill_all();
        let guard = registry.register(child.id(), epoch);
        assert!(guard.killed_by_kill_all());
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        guard.finish();
        assert_eq!(registry.len(), 0);
    }

    #[test]
    fn group_registered_with_current_epoch_is_left_alone_until_kill_all() {
        let registry = Arc::new(Registry::default());
        let mut child = spawn_sleeper();
        let guard = registry.register(child.id(), registry.epoch());
        assert!(!guard.killed_by_kill_all());
        assert_eq!(child.try_wait().unwrap(), None);
        assert_eq!(registry.len(), 1);
        registry.kill_all();
        assert!(guard.killed_by_kill_all());
        assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
        guard.finish();
        assert_eq!(registry.len(), 0);
    }

    #[test]
    fn dropping_an_unfinished_guard_kills_the_group() {
        let registry = Arc::new(Registry::default());
        let mut child = spawn_sleeper();
        drop(registry.register(child.id(), registry.epoch()));
        assert_eq!(registry.len(), 0);
        assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
    }

    #[test]
    fn concurrency_budget_follows_the_fd_limit() {
        assert_eq!(limit_from_nofile(0), 1);
        assert_eq!(limit_from_nofile(FDS_RESERVED), 1);
        assert_eq!(
            limit_from_nofile(1024),
            ((1024 - FDS_RESERVED) / FDS_PER_CHILD) as usize
        );
        assert_eq!(
            limit_from_nofile(u64::MAX),
            MAX_CONCURRENT_CHILDREN as usize
        );
    }
}
