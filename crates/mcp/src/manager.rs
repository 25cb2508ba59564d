//! The connection manager: one live client per configured server.
//!
//! [`McpManager::start`] starts every server at once, each bounded by the
//! start-up timeout (spawn, `initialize`, `tools/list`), and keeps a status
//! per server. Stdio servers are children of dsh started through the hook
//! runner's [`ProcessLayer`]: their own process group, the API-key
//! variables scrubbed, registered so that `kill_all` and the watchdog (dsh
//! dying, even by SIGKILL) take the whole group down.
//!
//! Every call is bounded by the tool timeout (`MCP_TOOL_TIMEOUT` in ms, a
//! server's own Codex `tool_timeout_sec`, else [`DEFAULT_TOOL_TIMEOUT`]);
//! on expiry the server is sent `notifications/cancelled` and the call
//! fails naming the server and tool. An answer longer than `rmcp` accepts
//! (16 MiB on one line) is dropped by the transport; the [`crate::oversize`]
//! watch on the server's stdout notices and fails the call waiting for it
//! at once instead of letting it wait for the timeout (every call in flight
//! on that server when the message's `id` is not in its first 4 KiB).
//!
//! A server that dies mid-session: the call in flight fails with an error
//! naming the server (and its exit status and last stderr lines), and the
//! next call restarts it once. A second death leaves it failed.
//! [`McpManager::shutdown`] closes every connection (stdin closed, a short
//! grace, then the group is SIGKILLed).

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use dsh_hook_runner::{ProcessLayer, ServiceGroup};
use dsh_seams::RequestMeta;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, RequestId, RequestMetaObject, ServerResult, Tool as ToolDef,
};
use rmcp::service::{PeerRequestOptions, RunningService, ServiceError};
use rmcp::{Peer, RoleClient, ServiceExt};
use serde_json::Value;
use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::config::{ServerConfig, ServerSource, ServerTransport};
use crate::elicit::{DshClient, ElicitSlot};
use crate::oversize::{LineWatch, MAX_LINE, Oversized, SeenId};

/// `MCP_TIMEOUT`'s default: how long a server has to start and list its
/// tools.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// `MCP_TOOL_TIMEOUT`'s default: Claude Code's, 100,000,000 ms (about 27.8
/// hours; its documentation names the variable but not the default, this is
/// the value its client falls back to). Long-running tools are legitimate;
/// a lost answer is caught by the oversize watch, not by this bound.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_millis(100_000_000);

/// How long a closing server gets to exit on its own before its group is
/// killed.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(500);

/// How much of a server's stderr is kept for its failure reason.
const STDERR_TAIL: usize = 2048;

/// How the manager runs servers.
#[derive(Debug, Clone)]
pub struct McpOptions {
    /// The session's working directory (a server's default cwd).
    pub cwd: std::path::PathBuf,
    /// Start-up bound per server (`MCP_TIMEOUT` in ms, as Claude Code).
    pub startup_timeout: Duration,
    /// Bound on one tool call (`MCP_TOOL_TIMEOUT` in ms, default
    /// [`DEFAULT_TOOL_TIMEOUT`]); `None`: unbounded. A server's own
    /// `tool_timeout_sec` wins.
    pub tool_timeout: Option<Duration>,
    /// The process layer children go through.
    pub processes: ProcessLayer,
}

impl McpOptions {
    /// Options for `cwd`, timeouts from `MCP_TIMEOUT` / `MCP_TOOL_TIMEOUT`
    /// (milliseconds; unset, zero or unparsable: the defaults).
    pub fn new(
        cwd: std::path::PathBuf,
        processes: ProcessLayer,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Self {
        let millis = |name: &str| {
            env(name)
                .and_then(|value| value.trim().parse::<u64>().ok())
                .filter(|ms| *ms > 0)
                .map(Duration::from_millis)
        };
        McpOptions {
            cwd,
            startup_timeout: millis("MCP_TIMEOUT").unwrap_or(DEFAULT_STARTUP_TIMEOUT),
            tool_timeout: Some(millis("MCP_TOOL_TIMEOUT").unwrap_or(DEFAULT_TOOL_TIMEOUT)),
            processes,
        }
    }
}

/// A server's state as `dsh mcp list` and the session header show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerStatus {
    /// Initialized; its tools are offered.
    Connected,
    /// Could not be started or died; why.
    Failed {
        /// What went wrong, naming the server.
        reason: String,
    },
    /// Closed by [`McpManager::shutdown`].
    Closed,
}

/// One server's report.
#[derive(Debug, Clone)]
pub struct ServerReport {
    /// Configured name.
    pub name: String,
    /// Scope.
    pub source: ServerSource,
    /// Defining file.
    pub origin: std::path::PathBuf,
    /// Status now.
    pub status: ServerStatus,
    /// The server's own tool names, as listed at start-up.
    pub tools: Vec<String>,
}

impl ServerReport {
    /// One line: `echo (project): connected, 3 tools` / `… failed: reason`.
    pub fn line(&self) -> String {
        let state = match &self.status {
            ServerStatus::Connected => format!(
                "connected, {} tool{}",
                self.tools.len(),
                if self.tools.len() == 1 { "" } else { "s" }
            ),
            ServerStatus::Failed { reason } => format!("failed: {reason}"),
            ServerStatus::Closed => "closed".to_owned(),
        };
        format!("{} ({}): {state}", self.name, self.source.as_str())
    }
}

/// A failed MCP call, as the model is told.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CallError(pub String);

struct Connection {
    service: RunningService<RoleClient, DshClient>,
    child: Child,
    group: ServiceGroup,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    /// Messages the transport dropped for their size (see `oversize`).
    oversized: broadcast::Sender<Oversized>,
}

impl Connection {
    fn peer(&self) -> Peer<RoleClient> {
        self.service.peer().clone()
    }

    /// Why the connection is gone: the exit status if the child exited,
    /// and the tail of its stderr.
    fn death(&mut self) -> String {
        let mut parts = Vec::new();
        match self.child.try_wait() {
            Ok(Some(status)) => parts.push(format!("the server exited ({status})")),
            Ok(None) if self.group.killed() => parts.push("the server was killed".to_owned()),
            Ok(None) => parts.push("the connection closed".to_owned()),
            Err(err) => parts.push(format!("cannot read its status: {err}")),
        }
        let tail = stderr_text(&self.stderr);
        if !tail.is_empty() {
            parts.push(format!("stderr: {tail}"));
        }
        parts.join("; ")
    }

    async fn close(mut self) {
        // Closing the transport closes the server's stdin: a well-behaved
        // server exits on EOF.
        let _ = tokio::time::timeout(SHUTDOWN_GRACE, self.service.close()).await;
        let _ = tokio::time::timeout(SHUTDOWN_GRACE, self.child.wait()).await;
        // Dropping the group SIGKILLs whatever is left of it.
        drop(self.group);
    }
}

fn stderr_text(buffer: &Mutex<VecDeque<u8>>) -> String {
    let bytes: Vec<u8> = buffer
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .copied()
        .collect();
    String::from_utf8_lossy(&bytes).trim().to_owned()
}

enum Slot {
    Live(Box<Connection>),
    Dead { reason: String },
    Closed,
}

/// One configured server and its connection.
pub struct Server {
    config: ServerConfig,
    options: McpOptions,
    slot: tokio::sync::Mutex<Slot>,
    status: Mutex<ServerStatus>,
    tools: Mutex<Vec<ToolDef>>,
    restarts_left: Mutex<u32>,
    /// Where the server's elicitations go (the tool call in flight).
    pub(crate) elicit: ElicitSlot,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("name", &self.config.name)
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

impl Server {
    /// The configuration it was started from.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// Its status now.
    pub fn status(&self) -> ServerStatus {
        self.status
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Its tools as listed at start-up.
    pub fn tool_defs(&self) -> Vec<ToolDef> {
        self.tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set_status(&self, status: ServerStatus) {
        *self.status.lock().unwrap_or_else(PoisonError::into_inner) = status;
    }

    /// Starts (or restarts) the connection and lists the tools.
    async fn connect(&self) -> Result<(Connection, Vec<ToolDef>), String> {
        let name = &self.config.name;
        let origin = self.config.origin.display();
        if let Some(problem) = &self.config.problem {
            return Err(format!("MCP server `{name}` ({origin}): {problem}"));
        }
        let (command, args, env, cwd) = match &self.config.transport {
            ServerTransport::Stdio {
                command,
                args,
                env,
                cwd,
            } => (command, args, env, cwd),
            ServerTransport::Remote { kind, url } => {
                return Err(format!(
                    "MCP server `{name}` ({origin}): `{kind}` servers ({url}) are not supported by dsh yet; only stdio servers are"
                ));
            }
        };
        let mut cmd = Command::new(command);
        cmd.args(args)
            .envs(env.iter())
            .current_dir(cwd.as_deref().unwrap_or(&self.options.cwd))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let (mut child, group) = self.options.processes.spawn_service(cmd).map_err(|err| {
            format!("MCP server `{name}` ({origin}): cannot start `{command}`: {err}")
        })?;
        let stderr = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL)));
        if let Some(mut pipe) = child.stderr.take() {
            let stderr = Arc::clone(&stderr);
            tokio::spawn(async move {
                let mut chunk = [0u8; 1024];
                while let Ok(read) = pipe.read(&mut chunk).await {
                    if read == 0 {
                        break;
                    }
                    let mut tail = stderr.lock().unwrap_or_else(PoisonError::into_inner);
                    tail.extend(&chunk[..read]);
                    while tail.len() > STDERR_TAIL {
                        tail.pop_front();
                    }
                }
            });
        }
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(format!("MCP server `{name}`: no stdio pipes"));
        };
        let (oversized, _) = broadcast::channel(16);
        let stdout = LineWatch::new(stdout, MAX_LINE, oversized.clone());
        let client = DshClient::new(name, self.elicit.clone());
        let startup_timeout = self
            .config
            .startup_timeout
            .unwrap_or(self.options.startup_timeout);
        let started = tokio::time::timeout(startup_timeout, async {
            let service = client
                .serve((stdout, stdin))
                .await
                .map_err(|err| format!("initialize failed: {err}"))?;
            let tools = service
                .peer()
                .list_all_tools()
                .await
                .map_err(|err| format!("tools/list failed: {err}"))?;
            Ok::<_, String>((service, tools))
        })
        .await;
        let mut connection_parts = (child, group, stderr);
        match started {
            Ok(Ok((service, tools))) => {
                let (child, group, stderr) = connection_parts;
                Ok((
                    Connection {
                        service,
                        child,
                        group,
                        stderr,
                        oversized,
                    },
                    tools,
                ))
            }
            Ok(Err(problem)) => {
                let tail = stderr_text(&connection_parts.2);
                let exited = match connection_parts.0.try_wait() {
                    Ok(Some(status)) => format!(" (it exited: {status})"),
                    Ok(None) | Err(_) => String::new(),
                };
                let tail = if tail.is_empty() {
                    String::new()
                } else {
                    format!("; stderr: {tail}")
                };
                Err(format!(
                    "MCP server `{name}` ({origin}): {problem}{exited}{tail}"
                ))
            }
            Err(_) => Err(format!(
                "MCP server `{name}` ({origin}): did not start within {} ms",
                startup_timeout.as_millis()
            )),
        }
    }

    /// A peer to call and a subscription to its oversized messages,
    /// restarting a dead server once.
    async fn live_peer(
        &self,
    ) -> Result<(Peer<RoleClient>, broadcast::Receiver<Oversized>), String> {
        let mut slot = self.slot.lock().await;
        if let Slot::Live(connection) = &mut *slot
            && connection.service.is_transport_closed()
        {
            let reason = format!("MCP server `{}`: {}", self.config.name, connection.death());
            *slot = Slot::Dead { reason };
        }
        match &*slot {
            Slot::Live(connection) => {
                return Ok((connection.peer(), connection.oversized.subscribe()));
            }
            Slot::Closed => {
                return Err(format!(
                    "MCP server `{}` is closed (the session is ending)",
                    self.config.name
                ));
            }
            Slot::Dead { .. } => {}
        }
        let reason = match &*slot {
            Slot::Dead { reason } => reason.clone(),
            Slot::Live(_) | Slot::Closed => String::new(),
        };
        {
            let mut left = self
                .restarts_left
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if *left == 0 {
                return Err(format!("{reason} (not restarted again)"));
            }
            *left -= 1;
        }
        tracing::info!(server = %self.config.name, "restarting MCP server");
        match self.connect().await {
            Ok((connection, tools)) => {
                let peer = (connection.peer(), connection.oversized.subscribe());
                *self.tools.lock().unwrap_or_else(PoisonError::into_inner) = tools;
                *slot = Slot::Live(Box::new(connection));
                self.set_status(ServerStatus::Connected);
                Ok(peer)
            }
            Err(problem) => {
                let reason = format!("{reason}; restart failed: {problem}");
                *slot = Slot::Dead {
                    reason: reason.clone(),
                };
                self.set_status(ServerStatus::Failed {
                    reason: reason.clone(),
                });
                Err(reason)
            }
        }
    }

    /// Calls one of this server's tools by its own name; `meta`, when
    /// given, is the request's `_meta` (as given: dsh adds no keys).
    pub async fn call(
        &self,
        tool: &str,
        arguments: &Value,
        meta: Option<&RequestMeta>,
        cancel: &CancellationToken,
    ) -> Result<CallToolResult, CallError> {
        let name = &self.config.name;
        let (peer, mut oversized) = self.live_peer().await.map_err(CallError)?;
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(map) = arguments {
            params = params.with_arguments(map.clone());
        }
        params.meta = meta.map(|meta| RequestMetaObject::from(meta.0.clone()));
        let timeout = self.config.tool_timeout.or(self.options.tool_timeout);
        // rmcp bounds the wait and sends `notifications/cancelled` on expiry.
        let options = timeout.map_or_else(
            PeerRequestOptions::no_options,
            PeerRequestOptions::with_timeout,
        );
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = match peer.send_cancellable_request(request, options).await {
            Ok(handle) => handle,
            Err(err) => return Err(self.failed(tool, &err).await),
        };
        let id = handle.id.clone();
        let response = handle.await_response();
        tokio::pin!(response);
        let mut watching = true;
        let outcome = loop {
            tokio::select! {
                outcome = &mut response => break outcome,
                _ = cancel.cancelled() => {
                    cancel_request(&peer, id, "interrupted").await;
                    return Err(CallError(format!(
                        "MCP tool `{tool}` on server `{name}` was interrupted"
                    )));
                }
                report = oversized.recv(), if watching => match report {
                    // Another request's answer (or a server request).
                    Ok(Oversized { id: Some(SeenId::Request(other)) }) if other != id => {}
                    Ok(Oversized { id: Some(SeenId::Other) }) => {}
                    // Ours, or one whose id could not be seen: fail rather
                    // than wait for an answer that will never come.
                    Ok(Oversized { .. }) | Err(broadcast::error::RecvError::Lagged(_)) => {
                        cancel_request(&peer, id, "the answer exceeded the client's message size limit").await;
                        return Err(CallError(format!(
                            "MCP server `{name}` answered `{tool}` with a message of {} MiB or more, \
                             which the MCP client drops; no result (ask the tool for less)",
                            MAX_LINE / (1024 * 1024)
                        )));
                    }
                    Err(broadcast::error::RecvError::Closed) => watching = false,
                },
            }
        };
        if let Err(ServiceError::Timeout { timeout }) = &outcome {
            return Err(CallError(format!(
                "MCP tool `{tool}` on server `{name}` did not answer within {} ms",
                timeout.as_millis()
            )));
        }
        match outcome {
            Ok(ServerResult::CallToolResult(result)) => Ok(result),
            Ok(other) => Err(CallError(format!(
                "MCP server `{name}` answered `{tool}` with something other than a tool result: {}",
                serde_json::to_string(&other).unwrap_or_default()
            ))),
            Err(err) => Err(self.failed(tool, &err).await),
        }
    }

    /// The error for a call that failed in the client: the server's death
    /// (the slot is marked dead and the connection closed) or `err`.
    async fn failed(&self, tool: &str, err: &ServiceError) -> CallError {
        let mut slot = self.slot.lock().await;
        let died = match &mut *slot {
            Slot::Live(connection) if connection.service.is_transport_closed() => {
                // Give the exit a moment to be reaped, for the status.
                tokio::time::sleep(Duration::from_millis(50)).await;
                Some(connection.death())
            }
            Slot::Live(_) | Slot::Dead { .. } | Slot::Closed => None,
        };
        let Some(death) = died else {
            return CallError(format!(
                "MCP server `{}` could not run `{tool}`: {err}",
                self.config.name
            ));
        };
        let reason = format!("MCP server `{}`: {death}", self.config.name);
        if let Slot::Live(connection) = std::mem::replace(
            &mut *slot,
            Slot::Dead {
                reason: reason.clone(),
            },
        ) {
            drop(slot);
            connection.close().await;
        }
        self.set_status(ServerStatus::Failed { reason });
        CallError(format!(
            "MCP server `{}` failed during `{tool}`: {death}",
            self.config.name
        ))
    }

    async fn close(&self) {
        let previous = std::mem::replace(&mut *self.slot.lock().await, Slot::Closed);
        if let Slot::Live(connection) = previous {
            connection.close().await;
        }
        if self.status() == ServerStatus::Connected {
            self.set_status(ServerStatus::Closed);
        }
    }
}

/// Tells the server to stop working on request `id` (best effort, briefly).
async fn cancel_request(peer: &Peer<RoleClient>, id: RequestId, reason: &str) {
    let notice = peer.notify_cancelled(CancelledNotificationParam::new(
        Some(id),
        Some(reason.to_owned()),
    ));
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, notice).await;
}

/// Every configured server of a session.
#[derive(Debug, Default, Clone)]
pub struct McpManager {
    servers: Vec<Arc<Server>>,
}

impl McpManager {
    /// Starts every server concurrently, each within the start-up timeout.
    /// Never fails: a server that cannot start is reported failed.
    pub async fn start(configs: Vec<ServerConfig>, options: McpOptions) -> McpManager {
        let servers: Vec<Arc<Server>> = configs
            .into_iter()
            .map(|config| {
                Arc::new(Server {
                    config,
                    options: options.clone(),
                    slot: tokio::sync::Mutex::new(Slot::Dead {
                        reason: String::new(),
                    }),
                    status: Mutex::new(ServerStatus::Failed {
                        reason: "not started".to_owned(),
                    }),
                    tools: Mutex::new(Vec::new()),
                    restarts_left: Mutex::new(1),
                    elicit: ElicitSlot::default(),
                })
            })
            .collect();
        futures::future::join_all(servers.iter().map(|server| async move {
            match server.connect().await {
                Ok((connection, tools)) => {
                    *server.tools.lock().unwrap_or_else(PoisonError::into_inner) = tools;
                    *server.slot.lock().await = Slot::Live(Box::new(connection));
                    server.set_status(ServerStatus::Connected);
                }
                Err(reason) => {
                    tracing::warn!(server = %server.config.name, %reason, "MCP server failed to start");
                    // A server that never started is not restarted per call.
                    *server
                        .restarts_left
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner) = 0;
                    *server.slot.lock().await = Slot::Dead {
                        reason: reason.clone(),
                    };
                    server.set_status(ServerStatus::Failed { reason });
                }
            }
        }))
        .await;
        McpManager { servers }
    }

    /// The servers, in configuration precedence order.
    pub fn servers(&self) -> &[Arc<Server>] {
        &self.servers
    }

    /// Whether no server is configured.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// Every server's report.
    pub fn reports(&self) -> Vec<ServerReport> {
        self.servers
            .iter()
            .map(|server| ServerReport {
                name: server.config.name.clone(),
                source: server.config.source,
                origin: server.config.origin.clone(),
                status: server.status(),
                tools: server
                    .tool_defs()
                    .iter()
                    .map(|tool| tool.name.to_string())
                    .collect(),
            })
            .collect()
    }

    /// `(name, source)` of every configured server: what the Claude Code
    /// bridge needs for its `mcp_server` key.
    pub fn identities(&self) -> Vec<(String, ServerSource)> {
        self.servers
            .iter()
            .map(|server| (server.config.name.clone(), server.config.source))
            .collect()
    }

    /// Closes every connection and ends every server process group.
    pub async fn shutdown(&self) {
        futures::future::join_all(self.servers.iter().map(|server| server.close())).await;
    }
}
