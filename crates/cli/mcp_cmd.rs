//! MCP servers for a session (`--mcp-config FILE`, the session header's
//! `mcp:` lines) and `dsh mcp list`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::Context as _;
use clap::Subcommand;
use dsh_hook_runner::ProcessLayer;
use dsh_hooks_claude::McpServerTag;
use dsh_mcp::{Discovered, McpDiscovery, McpManager, McpOptions, ServerStatus};
use serde_json::json;

use crate::stdio::{ExitStatus, outln};

/// `dsh mcp …`.
#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Starts every configured MCP server, lists it (source, file, status,
    /// tools) and stops it again.
    List {
        /// Extra MCP configuration file(s), as `claude --mcp-config`.
        #[arg(long = "mcp-config", value_name = "FILE")]
        mcp_config: Vec<PathBuf>,
        /// Extra Claude Code settings file(s) (for `disabledMcpjsonServers`).
        #[arg(long = "settings", value_name = "FILE")]
        settings: Vec<PathBuf>,
        /// One JSON object per server instead of text.
        #[arg(long)]
        json: bool,
    },
}

fn env_lookup(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Whether project (`.mcp.json`) servers need an approval in settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectServers {
    /// Started as `claude -p` starts them (replay, `-p`, `dsh mcp list`).
    StartAll,
    /// Only those approved in settings (interactive sessions).
    ApprovedOnly,
}

/// Reads every MCP configuration layer for a session in `cwd`.
pub fn discover(
    cwd: &Path,
    home: &Path,
    settings: &[PathBuf],
    mcp_config: &[PathBuf],
    project: ProjectServers,
) -> anyhow::Result<Discovered> {
    let mut discovery = McpDiscovery::new(cwd.to_owned(), home.to_owned(), &env_lookup);
    discovery.mcp_config_files = mcp_config.to_vec();
    discovery.extra_settings = settings.to_vec();
    discovery.require_project_approval = match project {
        ProjectServers::StartAll => false,
        ProjectServers::ApprovedOnly => true,
    };
    Ok(dsh_mcp::discover(&discovery, &env_lookup)?)
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
        discovered: &Discovered,
        cwd: &Path,
        processes: &ProcessLayer,
    ) -> anyhow::Result<Self> {
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
        let options = McpOptions::new(cwd.to_owned(), processes.clone(), &env_lookup);
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

/// `dsh mcp list`.
pub fn run(command: McpCommand) -> anyhow::Result<ExitStatus> {
    let McpCommand::List {
        mcp_config,
        settings,
        json,
    } = command;
    let cwd = crate::wiring::current_dir()?;
    let sources = crate::wiring::HookSources::from_env(cwd.clone(), settings.clone());
    let discovered = discover(
        &cwd,
        &sources.home,
        &settings,
        &mcp_config,
        ProjectServers::StartAll,
    )?;
    let processes = ProcessLayer::new(crate::wiring::scrubbed_env(&sources.dsh_home));
    let session = McpSession::start(&discovered, &cwd, &processes)?;
    let reports = session.manager.reports();
    {
        let runtime = session
            .runtime
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(runtime) = runtime.as_ref() {
            runtime.block_on(session.close());
        }
    }
    if !json {
        for notice in &discovered.notices {
            outln!("note: {notice}")?;
        }
        if reports.is_empty() {
            outln!("no MCP servers configured")?;
        }
    }
    for report in &reports {
        // Reports are taken before the servers are closed again.
        let (status, reason) = match &report.status {
            ServerStatus::Connected => ("connected", None),
            ServerStatus::Closed => ("closed", None),
            ServerStatus::Failed { reason } => ("failed", Some(reason.clone())),
        };
        if json {
            outln!(
                "{}",
                json!({
                    "name": report.name,
                    "source": report.source.as_str(),
                    "file": report.origin,
                    "status": status,
                    "reason": reason,
                    "tools": report.tools,
                })
            )?;
        } else {
            outln!(
                "{}  {}  {}  {}",
                report.name,
                report.source.as_str(),
                report.origin.display(),
                match &reason {
                    Some(reason) => format!("failed: {reason}"),
                    None => format!("{status}, tools: {}", report.tools.join(", ")),
                }
            )?;
        }
    }
    Ok(ExitStatus::Success)
}
