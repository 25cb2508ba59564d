//! One owner per session: [`Session::start`] turns a resolved spec into the
//! agent, its hook runner and its MCP servers, and [`Session::shutdown`] is
//! the one way they end (session-end hooks, MCP shutdown, hooks still
//! running killed). A session dropped without a shutdown (an error, a
//! panic) still kills every process group it started.
//!
//! Also here, for front ends that drive a session their own way:
//! [`block_on`] (the async runtime every front end runs on),
//! [`SignalWatch`] (SIGINT, SIGTERM and SIGHUP end a session in order; a
//! second one exits at once) and [`ProcessGuard`] (kills the hook
//! runner's process groups when dropped).

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use dsh_agent::Agent;
use dsh_hook_runner::HookRunner;
use dsh_mcp::McpSession;
use dsh_seams::{SessionEndReason, SessionStartSource};
use dsh_stdio::signals::{Signals, Stop};
use dsh_stdio::stdio::{ExitStatus, errln};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::{AgentOptions, Assembled, LogTarget, SessionSpec};

/// Runs `future` to completion on a multi-threaded runtime of its own, then
/// drops the runtime without waiting for its blocking pool (a parked stdin
/// read ends with the process).
pub fn block_on<F: Future>(future: F) -> Result<F::Output> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| Error::Context {
            context: "cannot start the async runtime".to_owned(),
            source: Box::new(error),
        })?;
    let output = runtime.block_on(future);
    runtime.shutdown_background();
    Ok(output)
}

/// Kills every process group of a hook runner (hooks, detached hooks, the
/// `bash` tool's commands, MCP servers it spawned) when dropped.
pub struct ProcessGuard {
    runner: HookRunner,
}

impl ProcessGuard {
    /// Guards the process groups `runner` starts.
    pub fn new(runner: HookRunner) -> Self {
        ProcessGuard { runner }
    }
}

impl Drop for ProcessGuard {
    fn drop(&mut self) {
        self.runner.kill_all();
    }
}

/// SIGINT, SIGTERM and SIGHUP, watched for one session: the first kills
/// the running hooks and cancels `cancel` (the session ends in order); a
/// second one, while it ends, exits at once. Stops watching when dropped.
pub struct SignalWatch {
    stopped: Arc<Mutex<Option<Stop>>>,
    task: tokio::task::JoinHandle<()>,
}

impl SignalWatch {
    /// Starts watching; must be called inside the runtime.
    pub fn install(runner: &HookRunner, cancel: &CancellationToken) -> Result<Self> {
        let mut signals = Signals::install().map_err(|error| Error::Other(error.into()))?;
        let stopped: Arc<Mutex<Option<Stop>>> = Arc::new(Mutex::new(None));
        let task = {
            let stopped = Arc::clone(&stopped);
            let runner = runner.clone();
            let cancel = cancel.clone();
            tokio::spawn(async move {
                let stop = signals.recv().await;
                *stopped.lock().unwrap_or_else(PoisonError::into_inner) = Some(stop);
                // kill_all ends running and detached hooks; cancelling makes
                // the owners of tool processes kill their groups. kill_all
                // comes first: once the token is cancelled the session-end
                // hooks may start, and they must not be killed.
                runner.kill_all();
                cancel.cancel();
                // A second signal while the session ends: stop waiting.
                let again = signals.recv().await;
                runner.kill_all();
                errln!("dsh: {} again; exiting now", again.name());
                ExitStatus::from(stop).exit_now();
            })
        };
        Ok(SignalWatch { stopped, task })
    }

    /// The signal that stopped the session, if one came.
    pub fn stopped(&self) -> Option<Stop> {
        *self.stopped.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stops watching (signals then kill dsh again); what already came
    /// stays readable.
    pub fn stop_watching(&self) {
        self.task.abort();
    }
}

impl Drop for SignalWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What a front end brings to a session: once the session is assembled
/// (its id, notices, servers and permission mode are known), what its agent
/// needs. A closure over `&Assembled` is one.
pub trait FrontEnd {
    /// The agent's model, observers, approvals and bounds, given the
    /// assembled session.
    fn agent_options(self, opened: &Assembled) -> Result<AgentOptions>;
}

impl<F: FnOnce(&Assembled) -> Result<AgentOptions>> FrontEnd for F {
    fn agent_options(self, opened: &Assembled) -> Result<AgentOptions> {
        self(opened)
    }
}

/// A running session: its agent, hook runner and MCP servers, owned
/// together and ended together.
pub struct Session {
    agent: Agent,
    runner: HookRunner,
    mcp: Arc<McpSession>,
    source: SessionStartSource,
    signals: Option<SignalWatch>,
    ended: bool,
    // Last: kills what is left after everything above let go of it.
    _guard: ProcessGuard,
}

impl Session {
    /// Starts what `spec` resolved for `front`: hooks, permissions, MCP
    /// servers and the log (see [`crate::assemble`]), then the agent. Must
    /// be called outside any async runtime (MCP servers start on their
    /// own).
    pub fn start(spec: SessionSpec, target: LogTarget, front: impl FrontEnd) -> Result<Self> {
        let opened = crate::assemble(spec, target)?;
        let options = front.agent_options(&opened)?;
        Self::from_assembled(opened, options)
    }

    /// [`Session::start`] over a session already assembled.
    pub fn from_assembled(opened: Assembled, options: AgentOptions) -> Result<Self> {
        let runner = opened.runner.clone();
        // Taken before the agent exists: a failure from here on still
        // kills what the session started.
        let guard = ProcessGuard::new(runner.clone());
        let mcp = Arc::clone(&opened.mcp);
        let source = opened.source;
        let agent = opened.agent(options)?;
        Ok(Session {
            agent,
            runner,
            mcp,
            source,
            signals: None,
            ended: false,
            _guard: guard,
        })
    }

    /// The agent.
    pub fn agent(&mut self) -> &mut Agent {
        &mut self.agent
    }

    /// The agent, shared (what `&Agent` methods need).
    pub fn agent_ref(&self) -> &Agent {
        &self.agent
    }

    /// The hook runner every hook and tool process goes through.
    pub fn runner(&self) -> &HookRunner {
        &self.runner
    }

    /// The session's MCP servers.
    pub fn mcp(&self) -> &Arc<McpSession> {
        &self.mcp
    }

    /// How the session-start seam is told the session began.
    pub fn source(&self) -> SessionStartSource {
        self.source
    }

    /// From now on SIGINT, SIGTERM and SIGHUP end the session in order
    /// (see [`SignalWatch`]); must be called inside the runtime.
    pub fn watch_signals(&mut self) -> Result<()> {
        let cancel = self.agent.session_cancel();
        self.signals = Some(SignalWatch::install(&self.runner, &cancel)?);
        Ok(())
    }

    /// The signal that stopped the session, if one came.
    pub fn stopped(&self) -> Option<Stop> {
        self.signals.as_ref().and_then(SignalWatch::stopped)
    }

    /// Fires the session-start hooks.
    pub async fn begin(&mut self) {
        self.agent.start(self.source).await;
    }

    /// The one way a session ends: the session-end hooks (even after a
    /// signal, with a fresh token, inside their budget), MCP shutdown,
    /// every hook still running (detached ones too) killed, and the signal
    /// watch stopped. A second call does nothing.
    pub async fn shutdown(&mut self, reason: SessionEndReason) {
        if self.ended {
            return;
        }
        self.ended = true;
        self.agent.end(reason).await;
        self.mcp.close().await;
        // Detached (async) hooks do not outlive the session.
        self.runner.kill_all();
        if let Some(signals) = &self.signals {
            signals.stop_watching();
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::time::{Duration, Instant};

    use dsh_hook_runner::{HookProgram, HookRunner, HookSpec, RunnerConfig};

    use super::ProcessGuard;

    /// A hook that would outlive the test by far, started detached (as an
    /// async hook is), in its own process group.
    fn sleeper(runner: &HookRunner) -> tokio::task::JoinHandle<dsh_hook_runner::HookRun> {
        runner.spawn_detached(HookSpec {
            program: HookProgram::Shell {
                shell: "/bin/sh".into(),
                command: "sleep 300".to_owned(),
            },
            cwd: std::env::temp_dir(),
            env: Vec::new(),
            stdin: Vec::new(),
            timeout: Duration::from_secs(600),
        })
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn dropping_the_guard_kills_the_process_groups_left_running() {
        let runner = HookRunner::new(RunnerConfig::default());
        let guard = ProcessGuard::new(runner.clone());
        let hook = sleeper(&runner);
        let started = Instant::now();
        while runner.live_groups() == 0 {
            assert!(started.elapsed() < Duration::from_secs(20), "never started");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // An error path: the session is dropped, never shut down.
        drop(guard);
        let run = tokio::time::timeout(Duration::from_secs(20), hook)
            .await
            .expect("the hook outlived its session")
            .unwrap();
        assert!(run.pid.is_some());
        assert!(run.duration < Duration::from_secs(60), "{run:?}");
        assert_eq!(runner.live_groups(), 0);
    }
}
