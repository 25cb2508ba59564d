//! `dsh mcp list`: every configured MCP server, started, listed, stopped.

use std::path::PathBuf;

use clap::Subcommand;
use dsh_core::mcp::{McpSession, ProjectServers, discover};
use dsh_hook_runner::ProcessLayer;
use dsh_mcp::ServerStatus;
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

/// `dsh mcp list`.
pub fn run(command: McpCommand) -> anyhow::Result<ExitStatus> {
    let McpCommand::List {
        mcp_config,
        settings,
        json,
    } = command;
    let env = dsh_core::Env::from_process();
    let cwd = crate::wiring::current_dir()?;
    let discovered = discover(&env, &cwd, &settings, &mcp_config, ProjectServers::StartAll)?;
    let processes = ProcessLayer::new(crate::wiring::scrubbed_env(&env.dsh_home_or_default()));
    let session = McpSession::start(&env.lookup(), &discovered, &cwd, &processes)?;
    let reports = session.reports();
    session.close_blocking();
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
