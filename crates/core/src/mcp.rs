//! MCP servers for a session (`--mcp-config FILE`): discovery with the
//! session's environment, and the tags hooks see. The running servers are
//! dsh-mcp's [`McpSession`].

use std::path::{Path, PathBuf};

use dsh_hooks_claude::McpServerTag;
use dsh_mcp::{Discovered, McpDiscovery};

use crate::{Env, Result};

/// The session's running servers (dsh-mcp's).
pub use dsh_mcp::McpSession;

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
