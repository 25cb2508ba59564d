//! `dsh mcp list`: every configured MCP server with its consent state; the
//! ones a session starts unasked are started, listed and stopped.

use std::path::PathBuf;

use clap::Subcommand;
use dsh_core::mcp::{McpConfigArg, ServerConsent, ServerStatus};
use serde_json::json;

use crate::stdio::{ExitStatus, outln};

/// `dsh mcp …`.
#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Lists every configured MCP server with its consent state.
    ///
    /// Each server is approved, not approved or disabled, with where that
    /// is recorded. The servers a session starts without asking are
    /// started, listed with their status and tools, and stopped again; a
    /// project server nobody approved is never started here.
    List {
        /// Extra MCP configuration file(s) or JSON text, as `claude --mcp-config`.
        #[arg(long = "mcp-config", value_name = "FILE|JSON", value_parser = McpConfigArg::parse)]
        mcp_config: Vec<McpConfigArg>,
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
    // Resolved by core, as every command that reads configuration is.
    let workspace = dsh_core::Workspace::resolve(dsh_core::WorkspaceInputs {
        env: &env,
        cwd: &cwd,
        settings: &settings,
        mcp_config: &mcp_config,
    });
    let listed = workspace.mcp_listing()?;
    let session = workspace.start_servers(&listed)?;
    let reports = session.reports();
    session.close_blocking();
    if !json {
        for notice in &listed.startable.notices {
            outln!("note: {notice}")?;
        }
        if listed.servers.is_empty() {
            outln!("no MCP servers configured")?;
        }
    }
    for server in &listed.servers {
        // Reports are taken before the servers are closed again.
        let report = reports.iter().find(|report| report.name == server.name);
        let (status, reason, tools) = match report.map(|report| (&report.status, report)) {
            None => ("not started", None, Vec::new()),
            Some((ServerStatus::Connected, report)) => ("connected", None, report.tools.clone()),
            Some((ServerStatus::Closed, report)) => ("closed", None, report.tools.clone()),
            Some((ServerStatus::Failed { reason }, _)) => {
                ("failed", Some(reason.clone()), Vec::new())
            }
        };
        if json {
            outln!(
                "{}",
                json!({
                    "name": server.name,
                    "source": server.source.as_str(),
                    "file": server.origin,
                    "consent": server.consent.as_str(),
                    "consent_by": server.consent.by(),
                    "status": status,
                    "reason": reason,
                    "tools": tools,
                })
            )?;
            continue;
        }
        let consent = match &server.consent {
            ServerConsent::NotApproved => {
                "not approved (approve it in Claude Code, which records it in ~/.claude.json, or trust the workspace: `dsh hooks trust`)".to_owned()
            }
            ServerConsent::Approved { by } => format!("approved ({by})"),
            ServerConsent::Disabled { by } => format!("disabled ({by})"),
        };
        let state = match (&reason, status) {
            (Some(reason), _) => format!("failed: {reason}"),
            (None, "not started") => "not started".to_owned(),
            (None, status) => format!("{status}, tools: {}", tools.join(", ")),
        };
        outln!(
            "{}  {}  {}  {consent}: {state}",
            server.name,
            server.source.as_str(),
            server.origin.display(),
        )?;
    }
    Ok(ExitStatus::Success)
}
