//! The files MCP servers are configured in, as dsh reads them: Claude
//! Code's `{"mcpServers": …}` (`.mcp.json`, `--mcp-config`, and
//! `~/.claude.json` with its `projects`), the approval keys of Claude Code
//! settings files, and Codex's `[mcp_servers]` tables.
//!
//! Plain shapes: what is checked, and the messages, are `config`'s. Keys
//! dsh does not read are ignored. A key read as [`Loose`] does not fail the
//! file when it holds something else: `config` names it in the server's
//! error, or ignores it where Claude Code and Codex ignore it.

use std::collections::BTreeMap;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess};

use crate::entry::{Checked, FromMap, MapOr, McpServerEntry};

/// A value of the expected type, or a note that the key held another.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(untagged)]
pub(crate) enum Loose<T> {
    /// The expected type.
    Is(T),
    /// Anything else.
    Not(IgnoredAny),
}

impl<T> Loose<T> {
    /// The value when it has the expected type.
    pub fn ok(self) -> Option<T> {
        match self {
            Loose::Is(value) => Some(value),
            Loose::Not(_) => None,
        }
    }
}

/// `{"mcpServers": {…}}`: `.mcp.json`, a `--mcp-config` file or its inline
/// JSON, and `~/.claude.json` (which adds `projects`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub(crate) struct ClaudeMcpFile {
    /// The servers.
    #[serde(rename = "mcpServers", default)]
    pub mcp_servers: ServerTable,
    /// `~/.claude.json`: what Claude Code keeps per project directory.
    #[serde(default)]
    pub projects: Option<Loose<BTreeMap<String, Loose<ProjectState>>>>,
}

impl ClaudeMcpFile {
    /// The state `~/.claude.json` keeps for the project at `dir`.
    pub fn project(&self, dir: &str) -> Option<&ProjectState> {
        match self.projects.as_ref()? {
            Loose::Is(projects) => match projects.get(dir)? {
                Loose::Is(project) => Some(project),
                Loose::Not(_) => None,
            },
            Loose::Not(_) => None,
        }
    }
}

/// One project's entry in `~/.claude.json` `projects`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub(crate) struct ProjectState {
    /// Its `local`-scope servers.
    #[serde(rename = "mcpServers", default)]
    pub mcp_servers: ServerTable,
    /// What Claude Code's approval dialog recorded.
    #[serde(flatten)]
    pub approvals: Approvals,
}

/// The keys about project (`.mcp.json`) servers, in a settings file or a
/// project's `~/.claude.json` entry. A malformed one approves nothing.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Approvals {
    /// `disabledMcpjsonServers`.
    #[serde(default)]
    pub disabled_mcpjson_servers: Option<Loose<Vec<String>>>,
    /// `enabledMcpjsonServers`.
    #[serde(default)]
    pub enabled_mcpjson_servers: Option<Loose<Vec<String>>>,
    /// `enableAllProjectMcpServers`.
    #[serde(default)]
    pub enable_all_project_mcp_servers: Option<Loose<bool>>,
}

/// A `mcpServers` table: absent (or `null`), its entries in file order
/// (each parsed, or the reason it cannot be), or not an object at all.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) enum ServerTable {
    /// No servers.
    #[default]
    Absent,
    /// The entries as written, by name.
    Entries(Vec<(String, Result<McpServerEntry, String>)>),
    /// `mcpServers` holds something other than an object.
    NotAnObject,
}

impl ServerTable {
    /// The entries (none when absent or malformed).
    pub fn entries(&self) -> &[(String, Result<McpServerEntry, String>)] {
        match self {
            ServerTable::Entries(entries) => entries,
            ServerTable::Absent | ServerTable::NotAnObject => &[],
        }
    }
}

impl<'de> Deserialize<'de> for ServerTable {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(MapOr(PhantomData))
    }
}

impl FromMap for ServerTable {
    const EXPECTING: &'static str = "an object of MCP servers";

    fn from_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut entries = Vec::new();
        while let Some(name) = map.next_key::<String>()? {
            // Read to its end whatever it holds, so that one bad entry is
            // reported under its own name instead of failing the file.
            let Checked(entry) = map.next_value()?;
            entries.push((name, entry));
        }
        Ok(ServerTable::Entries(entries))
    }

    fn other() -> Self {
        ServerTable::NotAnObject
    }

    fn null() -> Self {
        ServerTable::Absent
    }
}

/// The part of a Codex `config.toml` about MCP servers.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct CodexFile {
    /// `[mcp_servers.NAME]` tables, by name.
    #[serde(default)]
    pub mcp_servers: Option<Loose<BTreeMap<String, Loose<CodexServer>>>>,
}

/// One `[mcp_servers.NAME]` table.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct CodexServer {
    /// `enabled = false` keeps it from starting.
    #[serde(default)]
    pub enabled: Option<Loose<bool>>,
    /// The program of a stdio server.
    #[serde(default)]
    pub command: Option<Loose<String>>,
    /// Its arguments.
    #[serde(default)]
    pub args: Option<Loose<Vec<String>>>,
    /// Variables added to its environment.
    #[serde(default)]
    pub env: Option<Loose<BTreeMap<String, Loose<String>>>>,
    /// Its working directory.
    #[serde(default)]
    pub cwd: Option<Loose<String>>,
    /// The endpoint of a remote server.
    #[serde(default)]
    pub url: Option<Loose<String>>,
    /// Seconds to wait for start-up (integer or float).
    #[serde(default)]
    pub startup_timeout_sec: Option<Loose<f64>>,
    /// Seconds one call may take.
    #[serde(default)]
    pub tool_timeout_sec: Option<Loose<f64>>,
}
