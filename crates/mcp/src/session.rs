//! A session's running MCP servers: started before the session's log
//! header is written (the header lists them), on a runtime of their own,
//! closed when the session ends.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use dsh_hook_runner::ProcessLayer;

use crate::{Discovered, McpManager, McpOptions, ServerReport, ServerStatus};

/// A session's running MCP servers. They live on a runtime of their own,
/// started before the session's log header is written (the header lists
/// them with their status); the session's own runtime calls their tools.
pub struct McpSession {
    runtime: Mutex<Option<tokio::runtime::Runtime>>,
    manager: McpManager,
    notices: Vec<String>,
    /// The notices worth stderr at start-up: discovery notices and servers
    /// that failed.
    problems: Vec<String>,
}

impl McpSession {
    /// A session without MCP servers.
    pub fn none() -> Self {
        McpSession {
            runtime: Mutex::new(None),
            manager: McpManager::default(),
            notices: Vec::new(),
            problems: Vec::new(),
        }
    }

    /// Starts every discovered server (bounded by `MCP_TIMEOUT`) with
    /// children on `processes`. A server that fails is reported, not fatal.
    /// Must be called outside any async runtime.
    pub fn start(
        env: &dyn Fn(&str) -> Option<String>,
        discovered: &Discovered,
        cwd: &Path,
        processes: &ProcessLayer,
    ) -> std::io::Result<Self> {
        let mut notices: Vec<String> = discovered
            .notices
            .iter()
            .map(|notice| format!("mcp: {notice}"))
            .collect();
        if discovered.servers.is_empty() {
            return Ok(McpSession {
                runtime: Mutex::new(None),
                manager: McpManager::default(),
                problems: notices.clone(),
                notices,
            });
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("dsh-mcp")
            .enable_all()
            .build()
            .map_err(|error| {
                std::io::Error::new(
                    error.kind(),
                    format!("cannot start the MCP runtime: {error}"),
                )
            })?;
        let options = McpOptions::new(cwd.to_owned(), processes.clone(), env);
        let manager = runtime.block_on(McpManager::start(discovered.servers.clone(), options));
        let mut problems = notices.clone();
        for report in manager.reports() {
            let line = format!("mcp: {}", report.line());
            match report.status {
                ServerStatus::Connected | ServerStatus::Closed => {}
                ServerStatus::Failed { .. } => problems.push(line.clone()),
            }
            notices.push(line);
        }
        Ok(McpSession {
            runtime: Mutex::new(Some(runtime)),
            manager,
            notices,
            problems,
        })
    }

    /// `mcp: …` lines for the session header: discovery notices, then one
    /// line per server with its status.
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// The lines worth printing on stderr at start-up: discovery notices
    /// and failed servers.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    /// The connected servers' tools.
    pub fn tools(&self) -> Vec<Arc<dyn dsh_tools::Tool>> {
        self.manager.tools()
    }

    /// Each server's report (name, source, status, tools).
    pub fn reports(&self) -> Vec<ServerReport> {
        self.manager.reports()
    }

    /// Closes every server from outside any runtime (`dsh mcp list`).
    pub fn close_blocking(&self) {
        let runtime = self.runtime.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(runtime) = runtime.as_ref() {
            runtime.block_on(self.close());
        }
    }

    /// Closes every server (inside the session's runtime, before hooks and
    /// children are killed at the end of a session).
    pub async fn close(&self) {
        self.manager.shutdown().await;
    }
}

impl Drop for McpSession {
    fn drop(&mut self) {
        // Servers not closed by `close` die with their process groups when
        // the last tool holding them goes; the runtime itself is dropped
        // without blocking (this may run inside another runtime).
        let runtime = self
            .runtime
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(runtime) = runtime {
            runtime.shutdown_background();
        }
    }
}
