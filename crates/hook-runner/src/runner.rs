//! [`HookRunner`]: the handle the bridges hold.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::http::{HttpRun, run_http};
use crate::outcome::{CappedSink, Captured, HookExit, HookRun};
use crate::process::{ProcessCommand, ProcessLayer, ProcessSpec, StdinSource};
use crate::{HookProgram, HookSpec, HttpHook, RunnerConfig};

/// Runs hook processes. Cheap to clone; all clones share one configuration
/// and one [`ProcessLayer`] (one registry of live process groups), so
/// [`HookRunner::kill_all`] on any clone reaches every hook started through
/// any of them, and every `bash` call started through
/// [`HookRunner::processes`].
#[derive(Clone)]
pub struct HookRunner {
    config: Arc<RunnerConfig>,
    layer: ProcessLayer,
    /// Built at the first HTTP hook (loading TLS roots costs time that
    /// command-only sessions should not pay).
    http: Arc<OnceLock<Result<reqwest::Client, String>>>,
    /// Asked before each configured hook starts (none: every one starts).
    launch_check: Option<Arc<dyn LaunchCheck>>,
}

impl std::fmt::Debug for HookRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookRunner")
            .field("config", &self.config)
            .field("layer", &self.layer)
            .field("launch_check", &self.launch_check.is_some())
            .finish_non_exhaustive()
    }
}

/// Decides, right before a configured hook starts, whether it may: what
/// trust pinned at the start of a session must still be what the hook
/// runs from where it starts now.
pub trait LaunchCheck: Send + Sync {
    /// `Err(why)` when the hook at `origin` (its `file#json.path`) must not
    /// start in `cwd`.
    fn admit(&self, origin: &str, cwd: &std::path::Path) -> Result<(), String>;
}

impl Default for HookRunner {
    fn default() -> Self {
        HookRunner::new(RunnerConfig::default())
    }
}

impl HookRunner {
    /// A runner with its own (empty) registry of live process groups.
    pub fn new(config: RunnerConfig) -> Self {
        let layer = ProcessLayer::new(config.scrub_env.clone());
        HookRunner {
            config: Arc::new(config),
            layer,
            http: Arc::new(OnceLock::new()),
            launch_check: None,
        }
    }

    /// This runner asking `check` before each configured hook starts.
    pub fn with_launch_check(mut self, check: Arc<dyn LaunchCheck>) -> Self {
        self.launch_check = Some(check);
        self
    }

    /// The run that stands for the hook at `origin` when it may not start
    /// as `spec` says (it never started: [`HookExit::SpawnFailed`] with the
    /// reason, read as any hook that cannot start is); `None`: it may.
    pub fn refusal(&self, origin: &str, spec: &HookSpec) -> Option<HookRun> {
        let check = self.launch_check.as_ref()?;
        check.admit(origin, &spec.cwd).err().map(|why| HookRun {
            exit: HookExit::SpawnFailed(why),
            stdout: Captured::default(),
            stderr: Captured::default(),
            duration: Duration::ZERO,
            pid: None,
            timeout: spec.timeout,
            record_limit: self.config.capture_limit,
        })
    }

    /// The configuration this runner was built with.
    pub fn config(&self) -> &RunnerConfig {
        &self.config
    }

    /// The process layer under this runner: hand it to the `bash` tool so
    /// that its commands share the registry (`kill_all`), the scrubbed
    /// environment and the concurrency budget.
    pub fn processes(&self) -> &ProcessLayer {
        &self.layer
    }

    /// Runs one hook: spawns it in its own process group, writes
    /// `spec.stdin` and closes it, captures stdout and stderr up to the caps,
    /// and returns when it has exited, or has been killed because
    /// `spec.timeout` passed (`TimedOut`) or `cancel` fired (`Cancelled`).
    /// Never fails: a hook that cannot start is `SpawnFailed`.
    ///
    /// A killed hook returns within `timeout + kill_grace` plus a fixed
    /// settle time of 250 ms. Dropping the returned future SIGKILLs the
    /// hook's group.
    pub async fn run(&self, spec: HookSpec, cancel: &CancellationToken) -> HookRun {
        let command = match spec.program {
            HookProgram::Shell { shell, command } => {
                ProcessCommand::shell(shell.into_os_string(), command)
            }
            HookProgram::Exec { program, args } => ProcessCommand::exec(program, args),
            HookProgram::Http(hook) => {
                return self.run_http(hook, spec.stdin, spec.timeout, cancel).await;
            }
        };
        let timeout = spec.timeout;
        let process = ProcessSpec {
            command,
            cwd: spec.cwd,
            env: (self.config.base_env.iter().cloned())
                .chain(spec.env)
                .collect(),
            stdin: StdinSource::Bytes(spec.stdin),
            timeout,
            kill_grace: self.config.kill_grace,
            drain_after_exit: self.config.kill_grace,
        };
        let run = self
            .layer
            .run(
                process,
                CappedSink::new(self.config.decision_limit),
                CappedSink::new(self.config.capture_limit),
                cancel,
            )
            .await;
        HookRun {
            exit: run.exit.into(),
            stdout: run.stdout.captured,
            stderr: run.stderr.captured,
            duration: run.duration,
            pid: run.pid,
            timeout,
            record_limit: self.config.capture_limit,
        }
    }

    async fn run_http(
        &self,
        hook: HttpHook,
        body: Vec<u8>,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> HookRun {
        let not_run = |exit| HookRun {
            exit,
            stdout: Captured::default(),
            stderr: Captured::default(),
            duration: Duration::ZERO,
            pid: None,
            timeout,
            record_limit: self.config.capture_limit,
        };
        let killed = self.layer.abort_token();
        if cancel.is_cancelled() {
            return not_run(HookExit::Cancelled);
        }
        let Some(_permit) = self.layer.permit(cancel).await else {
            return not_run(HookExit::Cancelled);
        };
        if killed.is_cancelled() {
            return not_run(HookExit::Cancelled);
        }
        let client = self.http.get_or_init(|| {
            reqwest::Client::builder()
                .build()
                .map_err(|err| format!("cannot set up an HTTP client: {err}"))
        });
        let client = match client {
            Ok(client) => client,
            Err(why) => return not_run(HookExit::DshLimit(why.clone())),
        };
        run_http(HttpRun {
            client,
            hook,
            body,
            timeout,
            decision_limit: self.config.decision_limit,
            capture_limit: self.config.capture_limit,
            cancel,
            killed,
        })
        .await
    }

    /// Runs every hook in parallel and returns their results in the order of
    /// `specs` (never in completion order). Cancelling `cancel` cancels all.
    /// At most [`ProcessLayer::concurrency_limit`] run at once (process-wide);
    /// the rest wait for a slot, so a huge batch never exhausts file
    /// descriptors.
    pub async fn run_all(&self, specs: Vec<HookSpec>, cancel: &CancellationToken) -> Vec<HookRun> {
        futures::future::join_all(specs.into_iter().map(|spec| self.run(spec, cancel))).await
    }

    /// Runs a hook in the background (for `async: true` handlers) on the
    /// current tokio runtime. It obeys its own timeout, is registered like any
    /// other run and is killed by [`HookRunner::kill_all`] (then reporting
    /// `Cancelled`). Aborting the returned handle kills it too.
    ///
    /// # Panics
    ///
    /// When called outside a tokio runtime, like [`tokio::spawn`].
    pub fn spawn_detached(&self, spec: HookSpec) -> tokio::task::JoinHandle<HookRun> {
        let runner = self.clone();
        tokio::spawn(async move { runner.run(spec, &CancellationToken::new()).await })
    }

    /// SIGKILLs the process group of every hook currently running through
    /// this runner or any clone of it (and every `bash` call sharing its
    /// [`ProcessLayer`]); their runs report `Cancelled`.
    ///
    /// dsh calls this when it exits and when the user presses Ctrl-C: put it
    /// on the caller's signal-handling path (e.g. after
    /// `tokio::signal::ctrl_c().await`) and on every exit path. Safe to call
    /// from any thread, any number of times; it does not wait for the
    /// processes to be reaped (their `run` calls do that). It takes a mutex,
    /// so it must not be called from inside a raw POSIX signal handler.
    pub fn kill_all(&self) {
        self.layer.kill_all();
    }

    /// How many process groups are live (spawned and not yet reaped and
    /// deregistered). Meant for tests and diagnostics.
    pub fn live_groups(&self) -> usize {
        self.layer.live_groups()
    }
}
