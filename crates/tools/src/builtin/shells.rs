//! Background shells: `bash` with `run_in_background`, `bash_output` and
//! `kill_shell` (Claude Code's `Bash` `run_in_background`, `BashOutput`,
//! `KillShell`).
//!
//! A background command runs through the same [`ProcessLayer`] as every
//! other child: its own process group, registered for `kill_all`, killed
//! with dsh even when dsh is SIGKILLed. Its output is collected (bounded to
//! the last [`KEPT_BYTES`] of each stream) while it runs; `bash_output`
//! returns what arrived since the last read. The [`ShellStore`] belongs to
//! the session's registry: when the session ends and the store is dropped,
//! every shell still running is killed (SIGTERM, then SIGKILL to the group).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use dsh_hook_runner::{OutputSink, ProcessExit, ProcessLayer, ProcessSpec};
use dsh_protocol::ToolSpec;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{TypedTool, spec};
use crate::{Rendered, ToolContext, ToolError};

/// `bash_output`'s name.
pub const OUTPUT: &str = "bash_output";
/// `kill_shell`'s name.
pub const KILL: &str = "kill_shell";
/// Bytes of each stream a background shell keeps unread (older bytes are
/// dropped and counted).
pub const KEPT_BYTES: usize = 256 * 1024;
/// How long a background command may run.
pub const BACKGROUND_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

/// A background shell's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShellStatus {
    /// Still running.
    Running,
    /// Exited on its own (see the exit code).
    Completed,
    /// Killed by `kill_shell`, the session's end or its timeout.
    Killed,
    /// Could not be started.
    Failed,
}

#[derive(Debug, Default)]
struct Stream {
    unread: Vec<u8>,
    dropped: usize,
}

impl Stream {
    fn push(&mut self, bytes: &[u8]) {
        self.unread.extend_from_slice(bytes);
        if self.unread.len() > KEPT_BYTES {
            let over = self.unread.len() - KEPT_BYTES;
            self.unread.drain(..over);
            self.dropped = self.dropped.saturating_add(over);
        }
    }

    fn take(&mut self) -> String {
        let bytes = std::mem::take(&mut self.unread);
        let dropped = std::mem::take(&mut self.dropped);
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if dropped == 0 {
            text
        } else {
            format!("... [{dropped} earlier bytes of output dropped] ...\n{text}")
        }
    }
}

#[derive(Debug)]
struct Shell {
    command: String,
    status: ShellStatus,
    exit_code: Option<i32>,
    stdout: Stream,
    stderr: Stream,
    cancel: CancellationToken,
}

#[derive(Debug, Default)]
struct Shells {
    next_id: u64,
    shells: BTreeMap<String, Arc<Mutex<Shell>>>,
}

impl Drop for Shells {
    fn drop(&mut self) {
        for shell in self.shells.values() {
            shell
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .cancel
                .cancel();
        }
    }
}

/// The session's background shells, shared by `bash`, `bash_output` and
/// `kill_shell`. Cheap to clone; when the last clone is dropped every shell
/// still running is killed.
#[derive(Debug, Clone, Default)]
pub struct ShellStore {
    inner: Arc<Mutex<Shells>>,
}

/// One stream of a background shell, as the process layer feeds it.
struct Sink {
    shell: Arc<Mutex<Shell>>,
    stderr: bool,
}

impl OutputSink for Sink {
    fn push(&mut self, chunk: &[u8]) {
        let mut shell = self.shell.lock().unwrap_or_else(PoisonError::into_inner);
        if self.stderr {
            shell.stderr.push(chunk);
        } else {
            shell.stdout.push(chunk);
        }
    }
}

impl ShellStore {
    /// No shells.
    pub fn new() -> Self {
        ShellStore::default()
    }

    fn get(&self, id: &str) -> Option<Arc<Mutex<Shell>>> {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .shells
            .get(id)
            .cloned()
    }

    /// How many shells are still running.
    pub fn running(&self) -> usize {
        let shells = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        shells
            .shells
            .values()
            .filter(|shell| {
                shell.lock().unwrap_or_else(PoisonError::into_inner).status == ShellStatus::Running
            })
            .count()
    }

    /// Starts `spec` (whose shell runs `command`) in the background and
    /// returns its id (`bash_1`, …). Its timeout becomes
    /// [`BACKGROUND_TIMEOUT`].
    pub(crate) fn spawn(
        &self,
        processes: &ProcessLayer,
        mut spec: ProcessSpec,
        command: &str,
    ) -> String {
        let cancel = CancellationToken::new();
        let shell = Arc::new(Mutex::new(Shell {
            command: command.to_owned(),
            status: ShellStatus::Running,
            exit_code: None,
            stdout: Stream::default(),
            stderr: Stream::default(),
            cancel: cancel.clone(),
        }));
        let id = {
            let mut shells = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
            shells.next_id += 1;
            let id = format!("bash_{}", shells.next_id);
            shells.shells.insert(id.clone(), Arc::clone(&shell));
            id
        };
        spec.timeout = BACKGROUND_TIMEOUT;
        let processes = processes.clone();
        tokio::spawn(async move {
            let stdout = Sink {
                shell: Arc::clone(&shell),
                stderr: false,
            };
            let stderr = Sink {
                shell: Arc::clone(&shell),
                stderr: true,
            };
            let run = processes.run(spec, stdout, stderr, &cancel).await;
            let mut state = shell.lock().unwrap_or_else(PoisonError::into_inner);
            match run.exit {
                ProcessExit::Exited(code) => {
                    state.status = ShellStatus::Completed;
                    state.exit_code = Some(code);
                }
                ProcessExit::Signaled(_) | ProcessExit::TimedOut | ProcessExit::Cancelled => {
                    state.status = ShellStatus::Killed;
                }
                ProcessExit::SpawnFailed(why) | ProcessExit::DshLimit(why) => {
                    state.status = ShellStatus::Failed;
                    state.stderr.push(why.as_bytes());
                }
            }
        });
        id
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OutputArgs {
    bash_id: String,
    #[serde(default)]
    filter: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct KillArgs {
    shell_id: String,
}

/// `bash_output`'s value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ShellOutput {
    /// The shell.
    pub shell_id: String,
    /// Its command.
    pub command: String,
    /// Its state.
    pub status: ShellStatus,
    /// Its exit code, once it exited on its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// stdout since the last read (lines matching `filter`, when given).
    pub stdout: String,
    /// stderr since the last read (lines matching `filter`, when given).
    pub stderr: String,
}

/// `kill_shell`'s value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KillOutput {
    /// What happened.
    pub message: String,
    /// The shell.
    pub shell_id: String,
}

/// `bash_output`.
#[derive(Debug, Clone, Default)]
pub struct BashOutputTool(pub ShellStore);

/// `kill_shell`.
#[derive(Debug, Clone, Default)]
pub struct KillShellTool(pub ShellStore);

fn filtered(text: String, filter: Option<&regex::Regex>) -> String {
    match filter {
        None => text,
        Some(filter) => text
            .lines()
            .filter(|line| filter.is_match(line))
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

#[async_trait]
impl TypedTool for BashOutputTool {
    const NAME: &'static str = OUTPUT;
    type Args = OutputArgs;
    type Output = ShellOutput;

    fn describe(&self) -> ToolSpec {
        spec(
            OUTPUT,
            "Returns what a background shell (bash with run_in_background) printed since the \
             last call, and whether it is still running.",
            json!({
                "bash_id": {"type": "string", "description": "The shell's id, as bash returned it."},
                "filter": {"type": "string", "description": "A regular expression: only matching lines are returned (the others are still consumed)."}
            }),
            &["bash_id"],
        )
    }

    async fn call(&self, _ctx: &ToolContext, args: OutputArgs) -> Result<ShellOutput, ToolError> {
        let filter = args
            .filter
            .as_deref()
            .map(regex::Regex::new)
            .transpose()
            .map_err(|err| ToolError(format!("{OUTPUT}: invalid filter: {err}")))?;
        let shell = self
            .0
            .get(&args.bash_id)
            .ok_or_else(|| ToolError(format!("{OUTPUT}: no shell with id {}", args.bash_id)))?;
        let mut shell = shell.lock().unwrap_or_else(PoisonError::into_inner);
        let stdout = filtered(shell.stdout.take(), filter.as_ref());
        let stderr = filtered(shell.stderr.take(), filter.as_ref());
        Ok(ShellOutput {
            shell_id: args.bash_id,
            command: shell.command.clone(),
            status: shell.status,
            exit_code: shell.exit_code,
            stdout,
            stderr,
        })
    }

    fn overlap(&self, _args: &Self::Args, _cwd: &std::path::Path) -> crate::Concurrency {
        crate::Concurrency::Shared
    }

    fn show(&self, output: ShellOutput) -> Result<Rendered, ToolError> {
        let status = match (output.status, output.exit_code) {
            (ShellStatus::Completed, Some(code)) => format!("completed (exit code {code})"),
            (ShellStatus::Running, _) => "running".to_owned(),
            (ShellStatus::Completed, None) => "completed".to_owned(),
            (ShellStatus::Killed, _) => "killed".to_owned(),
            (ShellStatus::Failed, _) => "failed to start".to_owned(),
        };
        let mut content = format!("Shell {}: {status}", output.shell_id);
        for (label, text) in [("stdout", &output.stdout), ("stderr", &output.stderr)] {
            if !text.is_empty() {
                content.push_str(&format!("\n<{label}>\n{}\n</{label}>", text.trim_end()));
            }
        }
        Ok(Rendered {
            content,
            is_error: false,
        })
    }
}

#[async_trait]
impl TypedTool for KillShellTool {
    const NAME: &'static str = KILL;
    type Args = KillArgs;
    type Output = KillOutput;

    fn describe(&self) -> ToolSpec {
        spec(
            KILL,
            "Stops a background shell and everything it started.",
            json!({"shell_id": {"type": "string", "description": "The shell's id."}}),
            &["shell_id"],
        )
    }

    async fn call(&self, _ctx: &ToolContext, args: KillArgs) -> Result<KillOutput, ToolError> {
        let shell = self
            .0
            .get(&args.shell_id)
            .ok_or_else(|| ToolError(format!("{KILL}: no shell with id {}", args.shell_id)))?;
        let cancel = {
            let shell = shell.lock().unwrap_or_else(PoisonError::into_inner);
            if shell.status != ShellStatus::Running {
                return Err(ToolError(format!(
                    "{KILL}: shell {} is not running",
                    args.shell_id
                )));
            }
            shell.cancel.clone()
        };
        cancel.cancel();
        // Wait (boundedly) until the layer has killed and reaped the group.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while shell.lock().unwrap_or_else(PoisonError::into_inner).status == ShellStatus::Running
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(KillOutput {
            message: format!("Killed shell {}", args.shell_id),
            shell_id: args.shell_id,
        })
    }

    fn overlap(&self, _args: &Self::Args, _cwd: &std::path::Path) -> crate::Concurrency {
        crate::Concurrency::Shared
    }

    fn show(&self, output: KillOutput) -> Result<Rendered, ToolError> {
        Ok(Rendered {
            content: output.message,
            is_error: false,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests may unwrap
mod tests {
    use super::*;
    use crate::Tool;
    use crate::builtin::BashTool;

    fn ctx(dir: &std::path::Path) -> ToolContext {
        ToolContext::new(dir, CancellationToken::new())
    }

    async fn wait_for(store: &ShellStore, tool: &BashOutputTool, id: &str, want: &str) -> String {
        let mut seen = String::new();
        for _ in 0..200 {
            let value = tool
                .run(&ctx(std::path::Path::new("/")), &json!({"bash_id": id}))
                .await
                .unwrap();
            seen.push_str(value["stdout"].as_str().unwrap());
            if seen.contains(want) {
                return seen;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!(
            "never saw {want:?} (got {seen:?}, {} running)",
            store.running()
        );
    }

    #[tokio::test]
    async fn background_output_is_read_incrementally_and_kill_stops_the_group() {
        let dir = tempfile::tempdir().unwrap();
        let processes = ProcessLayer::default();
        let store = ShellStore::new();
        let bash = BashTool::with_shells(processes.clone(), store.clone());
        let output = BashOutputTool(store.clone());
        let kill = KillShellTool(store.clone());
        let value = bash
            .run(
                &ctx(dir.path()),
                &json!({"command": "echo first; sleep 0.2; echo second; sleep 60 & wait",
                        "run_in_background": true}),
            )
            .await
            .unwrap();
        let id = value["background_task_id"].as_str().unwrap().to_owned();
        assert_eq!(id, "bash_1");
        assert!(bash.render(&value).unwrap().content.contains("bash_1"));
        let seen = wait_for(&store, &output, &id, "second").await;
        assert!(seen.starts_with("first\n"), "{seen}");
        assert_eq!(store.running(), 1);
        assert_eq!(processes.live_groups(), 1);

        let killed = kill
            .run(&ctx(dir.path()), &json!({"shell_id": id}))
            .await
            .unwrap();
        assert_eq!(killed["message"], "Killed shell bash_1");
        assert_eq!(store.running(), 0);
        assert_eq!(processes.live_groups(), 0);
        let after = output
            .run(&ctx(dir.path()), &json!({"bash_id": "bash_1"}))
            .await
            .unwrap();
        assert_eq!(after["status"], "killed");
        let again = kill
            .run(&ctx(dir.path()), &json!({"shell_id": "bash_1"}))
            .await
            .unwrap_err();
        assert!(again.0.contains("not running"), "{again}");
    }

    #[tokio::test]
    async fn dropping_the_store_kills_running_shells() {
        let dir = tempfile::tempdir().unwrap();
        let processes = ProcessLayer::default();
        let store = ShellStore::new();
        let bash = BashTool::with_shells(processes.clone(), store.clone());
        bash.run(
            &ctx(dir.path()),
            &json!({"command": "sleep 60", "run_in_background": true}),
        )
        .await
        .unwrap();
        for _ in 0..200 {
            if processes.live_groups() == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        assert_eq!(processes.live_groups(), 1);
        drop(bash);
        drop(store);
        for _ in 0..200 {
            if processes.live_groups() == 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("the background shell survived its session");
    }

    #[tokio::test]
    async fn a_completed_shell_reports_its_exit_code_and_filter_keeps_matching_lines() {
        let dir = tempfile::tempdir().unwrap();
        let store = ShellStore::new();
        let bash = BashTool::with_shells(ProcessLayer::default(), store.clone());
        bash.run(
            &ctx(dir.path()),
            &json!({"command": "printf 'ok 1\\nbad\\nok 2\\n'; exit 4", "run_in_background": true}),
        )
        .await
        .unwrap();
        let output = BashOutputTool(store.clone());
        for _ in 0..200 {
            if store.running() == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        let value = output
            .run(
                &ctx(dir.path()),
                &json!({"bash_id": "bash_1", "filter": "^ok"}),
            )
            .await
            .unwrap();
        assert_eq!(value["status"], "completed");
        assert_eq!(value["exitCode"], 4);
        assert_eq!(value["stdout"], "ok 1\nok 2");
        let missing = output
            .run(&ctx(dir.path()), &json!({"bash_id": "bash_9"}))
            .await
            .unwrap_err();
        assert!(missing.0.contains("no shell with id bash_9"));
    }
}
