//! MCP servers for a session (`--mcp-config FILE`): discovery with the
//! session's environment, the tags hooks see, and each server's consent
//! state as `dsh mcp list` shows it ([`listing_with`]). The running servers are
//! dsh-mcp's [`McpSession`].

use std::path::{Path, PathBuf};

use dsh_files::settings::SettingsStack;
use dsh_hooks::registry::McpServerTag;
use dsh_mcp::{Discovered, McpDiscovery, ServerSource};
use dsh_permissions::layering::{WorkspaceTrust, workspace_trust_with};

use crate::{Env, Result};

/// The session's running servers (dsh-mcp's), how each one is doing, and
/// `--mcp-config`'s argument.
pub use dsh_mcp::{McpConfigArg, McpSession, ServerStatus};

/// Whether project servers without a user-level approval are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectServers {
    /// Kept, and listed in [`Discovered::unapproved`] for the session's
    /// consent rules to decide.
    StartAll,
    /// Dropped with a notice.
    ApprovedOnly,
}

/// Reads every MCP configuration layer for a session in `cwd` through the
/// session's reader (each file read once); the approvals in Claude Code
/// settings files are read from the session's settings layer stack.
pub fn discover_with(
    env: &Env,
    cwd: &Path,
    settings: &SettingsStack,
    mcp_config: &[dsh_mcp::McpConfigArg],
    project: ProjectServers,
    files: &dsh_files::ConfigFiles,
) -> Result<Discovered> {
    let lookup = env.lookup();
    let mut discovery = McpDiscovery::new(cwd.to_owned(), env.home_or_root(), &lookup);
    discovery.codex_home = env.codex_home();
    discovery.files = files.clone();
    discovery.mcp_configs = mcp_config.to_vec();
    discovery.settings = settings.clone();
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

/// Whether a configured server starts without anyone being asked, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerConsent {
    /// It starts: the user configured it, user-level state approved the
    /// project server, or the workspace is trusted. `by` says which, and
    /// where that is recorded.
    Approved {
        /// Where the consent is recorded.
        by: String,
    },
    /// A project server nobody approved: the terminal and ACP ask before it
    /// starts, `-p` names it on stderr (and skips it when strict).
    NotApproved,
    /// A setting keeps it from starting.
    Disabled {
        /// The setting and its file.
        by: String,
    },
}

impl ServerConsent {
    /// `approved`, `not approved` or `disabled`.
    pub fn as_str(&self) -> &'static str {
        match self {
            ServerConsent::Approved { .. } => "approved",
            ServerConsent::NotApproved => "not approved",
            ServerConsent::Disabled { .. } => "disabled",
        }
    }

    /// Where the state is recorded; `None` for a server nobody approved.
    pub fn by(&self) -> Option<&str> {
        match self {
            ServerConsent::Approved { by } | ServerConsent::Disabled { by } => Some(by),
            ServerConsent::NotApproved => None,
        }
    }
}

/// One configured server and its consent state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedServer {
    /// Its name.
    pub name: String,
    /// The scope that configures it.
    pub source: ServerSource,
    /// The file that configures it.
    pub origin: PathBuf,
    /// Whether it starts unasked.
    pub consent: ServerConsent,
}

/// Every configured server with its consent state, and the ones that
/// start without a question.
#[derive(Debug, Clone)]
pub struct McpListing {
    /// Every server in precedence order, then the disabled ones.
    pub servers: Vec<ListedServer>,
    /// The servers a session starts without asking anyone (the approved
    /// ones), with the discovery notices that are not about a disabled
    /// server (those are in [`McpListing::servers`]).
    pub startable: Discovered,
}

/// Every MCP server configured for `cwd` with its consent state, decided
/// as a session decides it: the user's own configuration needs no consent;
/// a project server (`.mcp.json`, the project's `.codex/config.toml`)
/// starts when user-level state approves it or the workspace is trusted.
/// Read through `files` with the settings layers of `settings` (see
/// [`crate::Workspace::mcp_listing`]).
pub fn listing_with(
    env: &Env,
    cwd: &Path,
    settings: &SettingsStack,
    mcp_config: &[dsh_mcp::McpConfigArg],
    files: &dsh_files::ConfigFiles,
) -> Result<McpListing> {
    let mut discovered = discover_with(
        env,
        cwd,
        settings,
        mcp_config,
        ProjectServers::StartAll,
        files,
    )?;
    let trusted_by =
        match workspace_trust_with(files, &env.home_or_root(), &env.dsh_home_or_default(), cwd) {
            WorkspaceTrust::ClaudeJson => Some(format!(
                "workspace trusted: hasTrustDialogAccepted in {}",
                env.home_or_root().join(".claude.json").display()
            )),
            WorkspaceTrust::DshTrust => Some(format!(
                "workspace trusted: `dsh hooks trust`, in {}",
                env.dsh_home_or_default().join("trust.json").display()
            )),
            WorkspaceTrust::ThisSession | WorkspaceTrust::Untrusted => None,
        };
    let mut servers: Vec<ListedServer> = discovered
        .servers
        .iter()
        .map(|server| {
            let approval = discovered
                .approved
                .iter()
                .find(|(name, _)| *name == server.name)
                .map(|(_, recorded)| recorded.to_string());
            let consent = if discovered.unapproved.contains(&server.name) {
                match &trusted_by {
                    Some(by) => ServerConsent::Approved { by: by.clone() },
                    None => ServerConsent::NotApproved,
                }
            } else {
                ServerConsent::Approved {
                    by: approval.unwrap_or_else(|| {
                        format!("your own configuration, {}", server.origin.display())
                    }),
                }
            };
            ListedServer {
                name: server.name.clone(),
                source: server.source,
                origin: server.origin.clone(),
                consent,
            }
        })
        .collect();
    servers.extend(discovered.disabled.iter().map(|disabled| ListedServer {
        name: disabled.name.clone(),
        source: disabled.source,
        origin: disabled.origin.clone(),
        consent: ServerConsent::Disabled {
            by: disabled.by.to_string(),
        },
    }));
    let waiting: Vec<&String> = servers
        .iter()
        .filter(|listed| listed.consent == ServerConsent::NotApproved)
        .map(|listed| &listed.name)
        .collect();
    discovered
        .servers
        .retain(|server| !waiting.contains(&&server.name));
    discovered.unapproved.clear();
    let disabled: Vec<String> = discovered.disabled.iter().map(|d| d.notice()).collect();
    discovered
        .notices
        .retain(|notice| !disabled.contains(notice));
    Ok(McpListing {
        servers,
        startable: discovered,
    })
}
