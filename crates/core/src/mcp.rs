//! MCP servers for a session (`--mcp-config FILE`, the session header's
//! `mcp:` lines): discovery and the running servers.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use dsh_hook_runner::ProcessLayer;
use dsh_hooks_claude::McpServerTag;
use dsh_mcp::{Discovered, McpDiscovery, McpManager, McpOptions, ServerReport, ServerStatus};

use crate::{Env, Result, ResultExt as _};

/// Whether project servers without a user-level approval are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectServers {
    /// Kept, and listed in [`Discovered::unapproved`] for the session's
    /// consent rules to decide.
    StartAll,
    /// Dropped with a notice.
    ApprovedOnly,
}

/// Reads every MCP configuration layer for a session in `cwd`.
pub fn discover(
    env: &Env,
    cwd: &Path,
    settings: &[PathBuf],
    mcp_config: &[PathBuf],
    project: ProjectServers,
) -> Result<Discovered> {
    let lookup = env.lookup();
    let mut discovery = McpDiscovery::new(cwd.to_owned(), env.home_or_root(), &lookup);
    discovery.codex_home = env.codex_home();
    discovery.mcp_config_files = mcp_config.to_vec();
    discovery.extra_settings = settings.to_vec();
    discovery.require_project_approval = match project {
        ProjectServers::StartAll => false,
        ProjectServers::ApprovedOnly => true,
    };
    Ok(dsh_mcp::discover(&discovery, &lookup)?)
}

/// What the Claude Code bridge puts in MCP tool events' `mcp_server`.
pub fn tags(discovered: &Discovered) -> Vec<McpServerTag> {
    discovered
        .servers
        .iter()
        .map(|server| McpServerTag {
            name: server.name.clone(),
            source: server.source.as_str().to_owned(),
        })
        .collect()
}

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
        env: &Env,
        discovered: &Discovered,
        cwd: &Path,
        processes: &ProcessLayer,
    ) -> Result<Self> {
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
            .context("cannot start the MCP runtime")?;
        let lookup = env.lookup();
        let options = McpOptions::new(cwd.to_owned(), processes.clone(), &lookup);
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
