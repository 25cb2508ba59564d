//! Where MCP servers are configured, read the way Claude Code and Codex
//! read them.
//!
//! * Claude Code: `--mcp-config FILE` (source `dynamic`), `~/.claude.json`
//!   `projects[<cwd>].mcpServers` (`local`), the project's `.mcp.json`
//!   (`project`), `~/.claude.json` `mcpServers` (`user`). A name defined in
//!   several scopes is taken from the first in that order. `${VAR}` and
//!   `${VAR:-default}` are expanded in `command`, `args`, `env` and `url`
//!   (an unset variable without a default makes the entry unusable:
//!   [`ServerConfig::problem`]; remote servers' `headers` are checked to
//!   be strings but not expanded or sent, as remote servers are not
//!   connected yet). A key of the wrong type is an error naming the file,
//!   the server and the key (`files.rs` holds the files' shapes).
//! * Project servers and the approval settings: a server named in
//!   `disabledMcpjsonServers` (any settings layer, or the project's entry in
//!   `~/.claude.json`) is not started. Headless runs start every other
//!   `.mcp.json` server without asking, as Claude Code does in `-p`
//!   (`mcp_unapproved`). Approval (`enableAllProjectMcpServers: true` or
//!   the name in `enabledMcpjsonServers`) counts only from user-level state:
//!   `~/.claude.json` `projects[<cwd>]` (where Claude Code's dialog records
//!   it), `~/.claude/settings.json` and `--settings` files — never from the
//!   project's own `.claude/settings*.json`, since a cloned repository's
//!   `.mcp.json` runs commands and could approve itself. The project's
//!   `.codex/config.toml` servers have no user-level approval. Project
//!   servers without one are listed in [`Discovered::unapproved`]; with
//!   [`McpDiscovery::require_project_approval`] they are dropped instead.
//! * Codex: `[mcp_servers.NAME]` tables (`command`, `args`, `env`, `cwd`,
//!   `url`, `enabled`) in `$CODEX_HOME/config.toml` (default `~/.codex`),
//!   then the project's `.codex/config.toml` (a later layer replaces a server
//!   of the same name). Codex does not expand variables. A Codex server whose
//!   name a Claude Code scope already defines is skipped with a notice.
//!
//! A file that exists but cannot be read or parsed is an error naming the
//! file (and the server, for a bad entry): dsh does not start a session on
//! a configuration it cannot read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use dsh_files::Json;
use dsh_files::settings::{SettingsSource, SettingsStack, inline_settings};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::entry::McpServerEntry;
use crate::files::{Approvals, ClaudeMcpFile, CodexFile, CodexServer, Loose, ServerTable};

use crate::expand::{Expansion, expand};

/// Which configuration scope a server came from: Claude Code's
/// `mcp_server.source` for the hooks, and `dsh mcp list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ServerSource {
    /// `--mcp-config FILE`.
    Dynamic,
    /// `~/.claude.json` `projects[<cwd>].mcpServers`.
    Local,
    /// The project's `.mcp.json`.
    Project,
    /// `~/.claude.json` `mcpServers`.
    User,
    /// Codex `config.toml` `[mcp_servers]`.
    Codex,
}

impl ServerSource {
    /// The name Claude Code uses (`codex` for Codex's configuration).
    pub fn as_str(self) -> &'static str {
        match self {
            ServerSource::Dynamic => "dynamic",
            ServerSource::Local => "local",
            ServerSource::Project => "project",
            ServerSource::User => "user",
            ServerSource::Codex => "codex",
        }
    }
}

/// How dsh talks to a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerTransport {
    /// A child process speaking MCP on its stdin/stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to dsh's environment.
        env: BTreeMap<String, String>,
        /// The working directory (the session's when absent).
        cwd: Option<PathBuf>,
    },
    /// A remote server (`type: "http"` / `"sse"`, Codex `url`). Configured
    /// servers are listed, but dsh does not connect them yet.
    Remote {
        /// `http`, `sse`, …: as configured.
        kind: String,
        /// The endpoint.
        url: String,
    },
}

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// The configured name (`mcp__<name>__<tool>`).
    pub name: String,
    /// The scope it came from.
    pub source: ServerSource,
    /// The file that defined it.
    pub origin: PathBuf,
    /// How to reach it.
    pub transport: ServerTransport,
    /// Why the entry cannot be used as written (variables missing from the
    /// environment); the server is then reported failed, not started.
    pub problem: Option<String>,
    /// The entry's own start-up bound (Codex `startup_timeout_sec`); the
    /// session's (`MCP_TIMEOUT`) when absent.
    pub startup_timeout: Option<std::time::Duration>,
    /// The entry's own bound on one call (Codex `tool_timeout_sec`); the
    /// session's (`MCP_TOOL_TIMEOUT`) when absent.
    pub tool_timeout: Option<std::time::Duration>,
}

/// Where to look.
#[derive(Debug, Clone)]
pub struct McpDiscovery {
    /// The project directory.
    pub cwd: PathBuf,
    /// `$HOME`.
    pub home: PathBuf,
    /// `$CODEX_HOME` (default `~/.codex`).
    pub codex_home: PathBuf,
    /// `--mcp-config` values (files or inline JSON), in order.
    pub mcp_configs: Vec<McpConfigArg>,
    /// The session's Claude Code settings layers (each file parsed once):
    /// the user, `--settings`, project and local layers' approvals
    /// (`enabledMcpjsonServers`, `disabledMcpjsonServers`,
    /// `enableAllProjectMcpServers`) are read.
    pub settings: SettingsStack,
    /// Whether project servers need an approval recorded in settings
    /// (interactive sessions); headless runs start them as `claude -p` does.
    pub require_project_approval: bool,
    /// The session's reader: each configuration file is read from disk once.
    pub files: dsh_files::ConfigFiles,
}

impl McpDiscovery {
    /// The usual places for a project at `cwd`, `CODEX_HOME` read from `env`.
    pub fn new(cwd: PathBuf, home: PathBuf, env: &dyn Fn(&str) -> Option<String>) -> Self {
        let codex_home = env("CODEX_HOME")
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".codex"));
        McpDiscovery {
            cwd,
            home,
            codex_home,
            mcp_configs: Vec::new(),
            settings: SettingsStack::default(),
            require_project_approval: false,
            files: dsh_files::ConfigFiles::default(),
        }
    }
}

/// What discovery found.
#[derive(Debug, Clone, Default)]
pub struct Discovered {
    /// The servers to start, in precedence order.
    pub servers: Vec<ServerConfig>,
    /// Servers not started and why (disabled, shadowed).
    pub notices: Vec<String>,
    /// Names of kept servers a project configured (`.mcp.json`, the
    /// project's `.codex/config.toml`) that no user-level state approved:
    /// they need consent (or a trusted workspace) before they start.
    pub unapproved: Vec<String>,
    /// Kept `.mcp.json` servers that user-level state approved, and where.
    pub approved: Vec<(String, Recorded)>,
    /// Configured servers that are not started because a setting turns
    /// them off (`disabledMcpjsonServers`, Codex `enabled = false`).
    pub disabled: Vec<DisabledServer>,
    /// `--mcp-config` servers of `"type": "sdk"`: they live inside the
    /// Claude Agent SDK application that started dsh, which reaches them
    /// over its control protocol; nothing here starts them.
    pub sdk_servers: Vec<String>,
}

/// One `--mcp-config` value. Claude Code takes a file path or the JSON
/// text itself; the Python Agent SDK passes the JSON
/// (`{"mcpServers":{"calc":{"type":"sdk","name":"calc"}}}`).
#[derive(Debug, Clone, PartialEq)]
pub enum McpConfigArg {
    /// A file holding `{"mcpServers":{…}}`.
    File(PathBuf),
    /// The configuration given inline on the command line (its JSON
    /// text, checked when it was read).
    Inline(String),
}

impl McpConfigArg {
    /// Reads one command-line value: text starting with `{` is the JSON
    /// itself and must parse; anything else names a file.
    pub fn parse(value: &str) -> Result<Self, String> {
        if !value.trim_start().starts_with('{') {
            return Ok(McpConfigArg::File(PathBuf::from(value)));
        }
        match serde_json::from_str::<ClaudeMcpFile>(value) {
            Ok(_) => Ok(McpConfigArg::Inline(value.to_owned())),
            Err(error) => Err(format!("not valid JSON ({error})")),
        }
    }

    /// What messages name as its origin: the file, or `--mcp-config` for
    /// inline JSON.
    pub fn origin(&self) -> PathBuf {
        match self {
            McpConfigArg::File(path) => path.clone(),
            McpConfigArg::Inline(_) => PathBuf::from("--mcp-config"),
        }
    }

    /// The configuration, read from the file when it is one (a missing
    /// file is an error: it was named on the command line).
    pub(crate) fn load(&self) -> Result<ClaudeMcpFile, ConfigError> {
        match self {
            McpConfigArg::Inline(json) => {
                serde_json::from_str(json).map_err(|error| ConfigError::Parse {
                    path: self.origin(),
                    message: error.to_string(),
                })
            }
            McpConfigArg::File(path) => read_json(&dsh_files::ConfigFiles::default(), path)?
                .ok_or_else(|| ConfigError::Read {
                    path: path.clone(),
                    source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
                }),
        }
    }

    /// The names of its `"type": "sdk"` servers, in order; none when the
    /// file cannot be read (discovery reports that).
    pub fn sdk_servers(&self) -> Vec<String> {
        let Ok(file) = self.load() else {
            return Vec::new();
        };
        file.mcp_servers
            .entries()
            .iter()
            .filter(|(_, entry)| is_sdk(entry))
            .map(|(name, _)| name.clone())
            .collect()
    }
}

/// Whether a server entry is one of the SDK application's in-process servers.
fn is_sdk(entry: &Result<McpServerEntry, String>) -> bool {
    entry
        .as_ref()
        .is_ok_and(|entry| entry.kind.as_deref() == Some("sdk"))
}

/// A setting about a server and the file that holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The setting: `enabledMcpjsonServers`, `enableAllProjectMcpServers`,
    /// `disabledMcpjsonServers` or `enabled = false`.
    pub setting: &'static str,
    /// The file it is in.
    pub file: PathBuf,
}

impl std::fmt::Display for Recorded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} in {}", self.setting, self.file.display())
    }
}

/// A configured server a setting keeps from starting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisabledServer {
    /// Its name.
    pub name: String,
    /// The scope that configures it.
    pub source: ServerSource,
    /// The file that configures it.
    pub origin: PathBuf,
    /// The setting that turns it off.
    pub by: Recorded,
}

impl DisabledServer {
    /// What a session says about it (sessions name disabled `.mcp.json`
    /// servers among their notices; a Codex `enabled = false` is silent).
    pub fn notice(&self) -> String {
        format!(
            "MCP server `{}` ({}) not started: {}",
            self.name,
            self.origin.display(),
            self.by
        )
    }
}

/// A configuration dsh cannot use.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but cannot be read.
    #[error("cannot read MCP servers from {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid JSON / TOML, or not the expected shape.
    #[error("cannot read MCP servers from {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The file cannot be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// One server entry is not usable.
    #[error("invalid MCP server `{server}` in {path}: {message}")]
    Server {
        /// The file.
        path: PathBuf,
        /// The server's name.
        server: String,
        /// What is wrong.
        message: String,
    },
}

fn read_json<T: DeserializeOwned>(
    files: &dsh_files::ConfigFiles,
    path: &Path,
) -> Result<Option<T>, ConfigError> {
    // The session's one parse of the file (settings files are the
    // settings layer stack's, `~/.claude.json` is shared with trust).
    let json = match files.json_with(path, |path| fs_err::read_to_string(path)) {
        Ok(Some(json)) => json,
        Ok(None) => return Ok(None),
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    json.deserialize()
        .map(Some)
        .map_err(|err| ConfigError::Parse {
            path: path.to_path_buf(),
            message: err.to_string(),
        })
}

/// One Claude Code `mcpServers` entry, variables expanded.
fn claude_entry(
    name: &str,
    entry: &Result<McpServerEntry, String>,
    source: ServerSource,
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ServerConfig, ConfigError> {
    let bad = |message: String| ConfigError::Server {
        path: path.to_path_buf(),
        server: name.to_owned(),
        message,
    };
    let entry = entry.clone().map_err(bad)?;
    let mut expansion = Expansion::default();
    let transport = match entry.kind.as_deref() {
        None | Some("stdio") => {
            let command = match entry.command {
                Some(command) if !command.is_empty() => command,
                Some(_) | None => {
                    return Err(bad("a stdio server needs a `command` string".to_owned()));
                }
            };
            ServerTransport::Stdio {
                command: expand(&command, env, &mut expansion),
                args: entry
                    .args
                    .iter()
                    .map(|arg| expand(arg, env, &mut expansion))
                    .collect(),
                env: entry
                    .env
                    .iter()
                    .map(|(key, value)| (key.clone(), expand(value, env, &mut expansion)))
                    .collect(),
                cwd: None,
            }
        }
        Some(other) => {
            let Some(url) = entry.url else {
                return Err(bad(format!("a `{other}` server needs a `url`")));
            };
            ServerTransport::Remote {
                kind: other.to_owned(),
                url: expand(&url, env, &mut expansion),
            }
        }
    };
    Ok(ServerConfig {
        name: name.to_owned(),
        source,
        origin: path.to_path_buf(),
        transport,
        problem: expansion.problem(),
        startup_timeout: None,
        tool_timeout: None,
    })
}

fn claude_servers(
    servers: &ServerTable,
    source: ServerSource,
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<ServerConfig>, ConfigError> {
    match servers {
        ServerTable::Absent => Ok(Vec::new()),
        ServerTable::Entries(entries) => entries
            .iter()
            .map(|(name, entry)| claude_entry(name, entry, source, path, env))
            .collect(),
        ServerTable::NotAnObject => Err(ConfigError::Parse {
            path: path.to_path_buf(),
            message: "`mcpServers` must be an object".to_owned(),
        }),
    }
}

/// What the settings layers say about project servers.
#[derive(Debug, Default)]
struct ProjectApprovals {
    /// `disabledMcpjsonServers` entries and the file that named each.
    disabled: Vec<(String, PathBuf)>,
    /// `enabledMcpjsonServers` entries and the file that named each.
    enabled: Vec<(String, PathBuf)>,
    /// The first file with `enableAllProjectMcpServers: true`.
    enable_all: Option<PathBuf>,
}

impl ProjectApprovals {
    /// Where the server `name` is approved, if it is.
    fn approval(&self, name: &str) -> Option<Recorded> {
        if let Some(file) = &self.enable_all {
            return Some(Recorded {
                setting: "enableAllProjectMcpServers",
                file: file.clone(),
            });
        }
        self.enabled
            .iter()
            .find(|(enabled, _)| enabled == name)
            .map(|(_, file)| Recorded {
                setting: "enabledMcpjsonServers",
                file: file.clone(),
            })
    }
}

fn read_approvals(approvals: &mut ProjectApprovals, layer: &Approvals, file: &Path) {
    let list =
        |key: &Option<Loose<Vec<String>>>| key.clone().and_then(Loose::ok).unwrap_or_default();
    for name in list(&layer.disabled_mcpjson_servers) {
        approvals.disabled.push((name, file.to_path_buf()));
    }
    for name in list(&layer.enabled_mcpjson_servers) {
        approvals.enabled.push((name, file.to_path_buf()));
    }
    if layer.enable_all_project_mcp_servers.and_then(Loose::ok) == Some(true)
        && approvals.enable_all.is_none()
    {
        approvals.enable_all = Some(file.to_path_buf());
    }
}

/// The approval settings of every layer: the user's settings and
/// `--settings` approve or disable, the project's own settings files only
/// disable; then `~/.claude.json` `projects[<cwd>]`.
fn project_approvals(
    discovery: &McpDiscovery,
    claude_json: Option<&ClaudeMcpFile>,
) -> ProjectApprovals {
    let layers = discovery.settings.layers();
    let of = |source: SettingsSource| layers.iter().filter(move |layer| layer.source == source);
    let mut approvals = ProjectApprovals::default();
    for layer in of(SettingsSource::User)
        .chain(of(SettingsSource::Flag))
        .chain(of(SettingsSource::Project))
        .chain(of(SettingsSource::Local))
    {
        // The stack's one parse of the file; the hook loader reports its
        // errors, here one that does not read approves nothing.
        let Some(Ok(settings)) = layer.json.as_ref().map(Json::deserialize::<Approvals>) else {
            continue;
        };
        // Inline `--settings '{…}'` JSON is named as the flag.
        let file = match inline_settings(&layer.path) {
            Some(_) => Path::new("--settings"),
            None => layer.path.as_path(),
        };
        if layer.source.is_project() {
            // The project's own files may disable its servers, never
            // approve them.
            let mut ignored = ProjectApprovals::default();
            read_approvals(&mut ignored, &settings, file);
            approvals.disabled.extend(ignored.disabled);
        } else {
            read_approvals(&mut approvals, &settings, file);
        }
    }
    if let Some(project) = claude_json.and_then(|json| project_entry(json, &discovery.cwd)) {
        read_approvals(
            &mut approvals,
            &project.approvals,
            &discovery.home.join(".claude.json"),
        );
    }
    approvals
}

fn project_entry<'a>(
    claude_json: &'a ClaudeMcpFile,
    cwd: &Path,
) -> Option<&'a crate::files::ProjectState> {
    claude_json.project(cwd.to_string_lossy().as_ref())
}

/// Remembers that the user approved the project servers `names` for
/// `cwd`, where Claude Code's approval dialog records it and where
/// [`discover`] reads it: `~/.claude.json` `projects[<cwd>]
/// .enabledMcpjsonServers`. Every other key of the file is kept, in its
/// order; the file is replaced atomically (mode 0600, a symlink is
/// refused). Returns the file written.
pub fn remember_approved(
    home: &Path,
    cwd: &Path,
    names: &[String],
) -> Result<PathBuf, ConfigError> {
    let path = home.join(".claude.json");
    let mut doc = read_json::<Value>(&dsh_files::ConfigFiles::default(), &path)?
        .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
    let shape = |what: &str| ConfigError::Parse {
        path: path.clone(),
        message: format!("{what} must be an object"),
    };
    let Value::Object(root) = &mut doc else {
        return Err(shape("the file"));
    };
    let projects = root
        .entry("projects")
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    let Value::Object(projects) = projects else {
        return Err(shape("`projects`"));
    };
    let project = projects
        .entry(cwd.to_string_lossy().into_owned())
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    let Value::Object(project) = project else {
        return Err(shape("the project's entry in `projects`"));
    };
    let enabled = project
        .entry("enabledMcpjsonServers")
        .or_insert_with(|| Value::Array(Vec::new()));
    let Value::Array(enabled) = enabled else {
        return Err(ConfigError::Parse {
            path: path.clone(),
            message: "`enabledMcpjsonServers` must be a list".to_owned(),
        });
    };
    for name in names {
        if !enabled
            .iter()
            .any(|known| known.as_str() == Some(name.as_str()))
        {
            enabled.push(Value::String(name.clone()));
        }
    }
    let mut text = serde_json::to_string_pretty(&doc).map_err(|error| ConfigError::Parse {
        path: path.clone(),
        message: error.to_string(),
    })?;
    text.push('\n');
    dsh_session::write_atomic(&path, text.as_bytes(), 0o600).map_err(|source| {
        ConfigError::Write {
            path: path.clone(),
            source,
        }
    })?;
    Ok(path)
}

/// A positive number of seconds (Codex's `*_timeout_sec`, integer or float).
fn seconds(value: Option<Loose<f64>>) -> Option<std::time::Duration> {
    value
        .and_then(Loose::ok)
        .filter(|secs| secs.is_finite() && *secs > 0.0)
        .map(std::time::Duration::from_secs_f64)
}

/// Codex `[mcp_servers]` of one `config.toml`.
fn codex_servers(
    files: &dsh_files::ConfigFiles,
    path: &Path,
) -> Result<(Vec<ServerConfig>, Vec<DisabledServer>), ConfigError> {
    // The session's one parse of the file (the Codex hooks read it too).
    let toml = files
        .toml_with(path, |path| fs_err::read_to_string(path))
        .map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
    let Some(toml) = toml else {
        return Ok((Vec::new(), Vec::new()));
    };
    let parsed: CodexFile = toml.deserialize().map_err(|err| ConfigError::Parse {
        path: path.to_path_buf(),
        message: err.to_string(),
    })?;
    let map = match parsed.mcp_servers {
        None => return Ok((Vec::new(), Vec::new())),
        Some(Loose::Is(map)) => map,
        Some(Loose::Not(_)) => {
            return Err(ConfigError::Parse {
                path: path.to_path_buf(),
                message: "`mcp_servers` must be a table".to_owned(),
            });
        }
    };
    let mut out = Vec::new();
    let mut disabled = Vec::new();
    for (name, entry) in map {
        // Not a table: it has none of the keys a server needs.
        let entry = entry.ok().unwrap_or_default();
        if entry.enabled.and_then(Loose::ok) == Some(false) {
            disabled.push(DisabledServer {
                name,
                source: ServerSource::Codex,
                origin: path.to_path_buf(),
                by: Recorded {
                    setting: "enabled = false",
                    file: path.to_path_buf(),
                },
            });
            continue;
        }
        out.push(codex_server(name, entry, path)?);
    }
    Ok((out, disabled))
}

/// One Codex server table, checked.
fn codex_server(
    name: String,
    entry: CodexServer,
    path: &Path,
) -> Result<ServerConfig, ConfigError> {
    let bad = |message: String| ConfigError::Server {
        path: path.to_path_buf(),
        server: name.clone(),
        message,
    };
    let transport = match (entry.command, entry.url) {
        (Some(Loose::Is(command)), _) => ServerTransport::Stdio {
            command,
            args: match entry.args {
                None => Vec::new(),
                Some(Loose::Is(args)) => args,
                Some(Loose::Not(_)) => {
                    return Err(bad("`args` must be a list of strings".to_owned()));
                }
            },
            env: match entry.env {
                None => BTreeMap::new(),
                Some(Loose::Is(env)) => env
                    .into_iter()
                    .map(|(key, value)| match value {
                        Loose::Is(value) => Ok((key, value)),
                        Loose::Not(_) => Err(bad(format!("`env.{key}` must be a string"))),
                    })
                    .collect::<Result<_, _>>()?,
                Some(Loose::Not(_)) => {
                    return Err(bad("`env` must be an object of strings".to_owned()));
                }
            },
            cwd: entry.cwd.and_then(Loose::ok).map(PathBuf::from),
        },
        (None, Some(Loose::Is(url))) => ServerTransport::Remote {
            kind: "http".to_owned(),
            url,
        },
        (Some(Loose::Not(_)), _) => return Err(bad("`command` must be a string".to_owned())),
        (None, _) => return Err(bad("a server needs `command` or `url`".to_owned())),
    };
    Ok(ServerConfig {
        name: name.clone(),
        source: ServerSource::Codex,
        origin: path.to_path_buf(),
        transport,
        problem: None,
        startup_timeout: seconds(entry.startup_timeout_sec),
        tool_timeout: seconds(entry.tool_timeout_sec),
    })
}

/// Reads every configuration layer. `env` looks variables up for `${VAR}`.
pub fn discover(
    discovery: &McpDiscovery,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Discovered, ConfigError> {
    let mut found = Discovered::default();
    let mut layers: Vec<ServerConfig> = Vec::new();

    for config in &discovery.mcp_configs {
        let mut file = config.load()?;
        // The SDK application's own servers are reached through its
        // control protocol (dsh-sdk), not started from here.
        if let ServerTable::Entries(servers) = &mut file.mcp_servers {
            for (name, _) in servers.iter().filter(|(_, entry)| is_sdk(entry)) {
                found.sdk_servers.push(name.clone());
            }
            servers.retain(|(_, entry)| !is_sdk(entry));
        }
        layers.extend(claude_servers(
            &file.mcp_servers,
            ServerSource::Dynamic,
            &config.origin(),
            env,
        )?);
    }
    let claude_json_path = discovery.home.join(".claude.json");
    let claude_json = read_json::<ClaudeMcpFile>(&discovery.files, &claude_json_path)?;
    if let Some(project) = claude_json
        .as_ref()
        .and_then(|json| project_entry(json, &discovery.cwd))
    {
        layers.extend(claude_servers(
            &project.mcp_servers,
            ServerSource::Local,
            &claude_json_path,
            env,
        )?);
    }
    let project_path = discovery.cwd.join(".mcp.json");
    if let Some(json) = read_json::<ClaudeMcpFile>(&discovery.files, &project_path)? {
        let approvals = project_approvals(discovery, claude_json.as_ref());
        for server in claude_servers(&json.mcp_servers, ServerSource::Project, &project_path, env)?
        {
            let approval = approvals.approval(&server.name);
            let approved = approval.is_some();
            match approvals
                .disabled
                .iter()
                .find(|(name, _)| *name == server.name)
            {
                Some((_, file)) => {
                    let disabled = DisabledServer {
                        name: server.name.clone(),
                        source: server.source,
                        origin: project_path.clone(),
                        by: Recorded {
                            setting: "disabledMcpjsonServers",
                            file: file.clone(),
                        },
                    };
                    found.notices.push(disabled.notice());
                    found.disabled.push(disabled);
                }
                None if discovery.require_project_approval && !approved => {
                    found.notices.push(format!(
                        "MCP server `{}` ({}) not started: not approved (approve it in Claude Code, which records it in ~/.claude.json, or trust the workspace: `dsh hooks trust`)",
                        server.name,
                        project_path.display()
                    ));
                }
                None => {
                    match approval {
                        Some(recorded) => found.approved.push((server.name.clone(), recorded)),
                        None => found.unapproved.push(server.name.clone()),
                    }
                    layers.push(server);
                }
            }
        }
    }
    if let Some(json) = &claude_json {
        layers.extend(claude_servers(
            &json.mcp_servers,
            ServerSource::User,
            &claude_json_path,
            env,
        )?);
    }
    let mut codex: Vec<ServerConfig> = Vec::new();
    let project_codex = discovery.cwd.join(".codex").join("config.toml");
    for path in [
        discovery.codex_home.join("config.toml"),
        project_codex.clone(),
    ] {
        let (servers, disabled) = codex_servers(&discovery.files, &path)?;
        for server in servers {
            codex.retain(|earlier| earlier.name != server.name);
            codex.push(server);
        }
        found.disabled.extend(disabled);
    }
    for server in codex {
        // The same file twice (CODEX_HOME is the project's `.codex`) counts
        // as the user's.
        let from_project = server.origin == project_codex
            && discovery.codex_home.join("config.toml") != project_codex;
        if from_project {
            if discovery.require_project_approval {
                found.notices.push(format!(
                    "MCP server `{}` ({}) not started: not approved (a project's Codex servers start in a trusted workspace: `dsh hooks trust`)",
                    server.name,
                    server.origin.display()
                ));
                continue;
            }
            found.unapproved.push(server.name.clone());
        }
        layers.push(server);
    }

    for server in layers {
        match found.servers.iter().find(|kept| kept.name == server.name) {
            Some(kept) => found.notices.push(format!(
                "MCP server `{}` in {} ({}) is shadowed by the one in {} ({})",
                server.name,
                server.origin.display(),
                server.source.as_str(),
                kept.origin.display(),
                kept.source.as_str()
            )),
            None => found.servers.push(server),
        }
    }
    // A shadowed project server is not started at all: nothing to approve.
    let kept: Vec<(String, PathBuf)> = found
        .servers
        .iter()
        .map(|server| (server.name.clone(), server.origin.clone()))
        .collect();
    found.unapproved.retain(|name| {
        kept.iter().any(|(kept_name, origin)| {
            kept_name == name && (*origin == project_path || *origin == project_codex)
        })
    });
    found.approved.retain(|(name, _)| {
        kept.iter()
            .any(|(kept_name, origin)| kept_name == name && *origin == project_path)
    });
    // A server another scope starts is not one a setting turned off.
    found.disabled.retain(|disabled| {
        !kept
            .iter()
            .any(|(kept_name, _)| *kept_name == disabled.name)
    });
    Ok(found)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn write(path: &Path, text: &str) {
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(path, text).unwrap();
    }

    fn env(name: &str) -> Option<String> {
        match name {
            "ORACLE" => Some("/oracle".to_owned()),
            _ => None,
        }
    }

    /// `discovery` with the settings layers a session loads now (the
    /// user's, the project's and the local file; no managed policy).
    fn stacked(discovery: &McpDiscovery) -> McpDiscovery {
        let mut candidates: Vec<(PathBuf, SettingsSource)> = vec![
            (
                discovery.cwd.join(".claude/settings.local.json"),
                SettingsSource::Local,
            ),
            (
                discovery.cwd.join(".claude/settings.json"),
                SettingsSource::Project,
            ),
            (
                discovery.home.join(".claude/settings.json"),
                SettingsSource::User,
            ),
        ];
        // `--settings` layers come before the local one.
        let flags: Vec<(PathBuf, SettingsSource)> = discovery
            .settings
            .layers()
            .iter()
            .filter(|layer| layer.source == SettingsSource::Flag)
            .map(|layer| (layer.path.clone(), SettingsSource::Flag))
            .collect();
        candidates.splice(0..0, flags);
        let mut stacked = discovery.clone();
        stacked.settings = SettingsStack::load(&dsh_files::ConfigFiles::new(), &candidates, false);
        stacked
    }

    fn setup() -> (tempfile::TempDir, McpDiscovery) {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("project");
        let home = dir.path().join("home");
        fs_err::create_dir_all(&cwd).unwrap();
        fs_err::create_dir_all(&home).unwrap();
        let discovery = McpDiscovery::new(cwd, home, &|_| None);
        (dir, discovery)
    }

    #[test]
    fn project_servers_expand_variables_and_keep_their_scope() {
        let (_dir, discovery) = setup();
        write(
            &discovery.cwd.join(".mcp.json"),
            r#"{"mcpServers":{"echo":{"command":"python3","args":["${ORACLE}/s.py","${MODE:-fast}"],"env":{"LOG":"${ORACLE}/log"}}}}"#,
        );
        let found = discover(&stacked(&discovery), &env).unwrap();
        assert_eq!(found.servers.len(), 1);
        let server = &found.servers[0];
        assert_eq!(server.source, ServerSource::Project);
        assert_eq!(server.problem, None);
        assert_eq!(
            server.transport,
            ServerTransport::Stdio {
                command: "python3".into(),
                args: vec!["/oracle/s.py".into(), "fast".into()],
                env: BTreeMap::from([("LOG".to_owned(), "/oracle/log".to_owned())]),
                cwd: None,
            }
        );
    }

    #[test]
    fn a_missing_variable_is_a_problem_naming_it() {
        let (_dir, discovery) = setup();
        write(
            &discovery.cwd.join(".mcp.json"),
            r#"{"mcpServers":{"echo":{"command":"${NOPE}/bin"}}}"#,
        );
        let found = discover(&stacked(&discovery), &env).unwrap();
        assert_eq!(
            found.servers[0].problem.as_deref(),
            Some("missing environment variables: NOPE")
        );
    }

    #[test]
    fn dynamic_beats_local_beats_project_beats_user_and_codex() {
        let (_dir, mut discovery) = setup();
        let extra = discovery.cwd.join("extra.json");
        write(&extra, r#"{"mcpServers":{"a":{"command":"dyn"}}}"#);
        discovery.mcp_configs.push(McpConfigArg::File(extra));
        write(
            &discovery.cwd.join(".mcp.json"),
            r#"{"mcpServers":{"a":{"command":"proj"},"b":{"command":"proj"}}}"#,
        );
        let claude_json = serde_json::json!({
            "mcpServers": {"b": {"command": "user"}, "c": {"command": "user"}},
            "projects": {discovery.cwd.to_string_lossy(): {"mcpServers": {"c": {"command": "local"}}}}
        });
        write(
            &discovery.home.join(".claude.json"),
            &claude_json.to_string(),
        );
        write(
            &discovery.codex_home.join("config.toml"),
            "[mcp_servers.d]\ncommand = \"codex\"\nargs = [\"x\"]\n[mcp_servers.a]\ncommand = \"codex\"\n",
        );
        let found = discover(&stacked(&discovery), &env).unwrap();
        let names: Vec<(&str, ServerSource)> = found
            .servers
            .iter()
            .map(|s| (s.name.as_str(), s.source))
            .collect();
        assert_eq!(
            names,
            vec![
                ("a", ServerSource::Dynamic),
                ("c", ServerSource::Local),
                ("b", ServerSource::Project),
                ("d", ServerSource::Codex),
            ]
        );
        assert_eq!(found.notices.len(), 4, "{:?}", found.notices);
    }

    #[test]
    fn disabled_project_servers_are_not_started() {
        let (_dir, discovery) = setup();
        write(
            &discovery.cwd.join(".mcp.json"),
            r#"{"mcpServers":{"echo":{"command":"x"},"other":{"command":"y"}}}"#,
        );
        write(
            &discovery.cwd.join(".claude").join("settings.local.json"),
            r#"{"disabledMcpjsonServers":["echo"]}"#,
        );
        let found = discover(&stacked(&discovery), &env).unwrap();
        assert_eq!(found.servers.len(), 1);
        assert_eq!(found.servers[0].name, "other");
        assert!(found.notices[0].contains("disabledMcpjsonServers"));
    }

    /// Where each project server's approval or disabling is recorded, for
    /// `dsh mcp list`.
    #[test]
    fn approvals_and_disabled_servers_name_their_setting_and_file() {
        let (_dir, discovery) = setup();
        write(
            &discovery.cwd.join(".mcp.json"),
            r#"{"mcpServers":{"echo":{"command":"x"},"other":{"command":"y"},"third":{"command":"z"}}}"#,
        );
        let local = discovery.cwd.join(".claude").join("settings.local.json");
        write(&local, r#"{"disabledMcpjsonServers":["echo"]}"#);
        let project = discovery.cwd.to_string_lossy().into_owned();
        let claude_json = discovery.home.join(".claude.json");
        write(
            &claude_json,
            &serde_json::json!({"projects": {project: {"enabledMcpjsonServers": ["other"]}}})
                .to_string(),
        );
        let codex = discovery.codex_home.join("config.toml");
        write(
            &codex,
            "[mcp_servers.off]\ncommand = \"x\"\nenabled = false\n",
        );
        let found = discover(&stacked(&discovery), &env).unwrap();
        assert_eq!(
            found.approved,
            vec![(
                "other".to_owned(),
                Recorded {
                    setting: "enabledMcpjsonServers",
                    file: claude_json
                }
            )]
        );
        assert_eq!(found.unapproved, ["third"]);
        assert_eq!(
            found.disabled,
            vec![
                DisabledServer {
                    name: "echo".to_owned(),
                    source: ServerSource::Project,
                    origin: discovery.cwd.join(".mcp.json"),
                    by: Recorded {
                        setting: "disabledMcpjsonServers",
                        file: local
                    },
                },
                DisabledServer {
                    name: "off".to_owned(),
                    source: ServerSource::Codex,
                    origin: codex.clone(),
                    by: Recorded {
                        setting: "enabled = false",
                        file: codex
                    },
                },
            ]
        );
        // Sessions say what they said before: the disabled project server
        // only.
        assert_eq!(found.notices, [found.disabled[0].notice()]);
    }

    #[test]
    fn approvals_are_the_settings_layer_stacks_documents() {
        let (_dir, mut discovery) = setup();
        write(
            &discovery.cwd.join(".mcp.json"),
            r#"{"mcpServers":{"echo":{"command":"x"},"other":{"command":"y"},"third":{"command":"z"}}}"#,
        );
        let user = discovery.home.join(".claude/settings.json");
        write(&user, r#"{"enabledMcpjsonServers":["echo"]}"#);
        let project = discovery.cwd.join(".claude/settings.json");
        // A repository cannot approve its own servers.
        write(&project, r#"{"enabledMcpjsonServers":["third"]}"#);
        let inline = PathBuf::from(r#"{"enabledMcpjsonServers":["other"]}"#);
        discovery.settings = SettingsStack::load(
            &dsh_files::ConfigFiles::new(),
            &[
                (inline, SettingsSource::Flag),
                (project, SettingsSource::Project),
                (user.clone(), SettingsSource::User),
            ],
            false,
        );
        // What the session parsed counts, not the disk now.
        fs_err::remove_file(&user).unwrap();
        let found = discover(&discovery, &env).unwrap();
        let recorded = |file: PathBuf| Recorded {
            setting: "enabledMcpjsonServers",
            file,
        };
        assert_eq!(
            found.approved,
            vec![
                ("echo".to_owned(), recorded(user)),
                // Inline `--settings` JSON approves as a file would.
                ("other".to_owned(), recorded(PathBuf::from("--settings"))),
            ]
        );
        assert_eq!(found.unapproved, ["third"]);
    }

    #[test]
    fn interactive_sessions_start_only_approved_project_servers() {
        let (_dir, mut discovery) = setup();
        discovery.require_project_approval = true;
        write(
            &discovery.cwd.join(".mcp.json"),
            r#"{"mcpServers":{"echo":{"command":"x"},"other":{"command":"y"}}}"#,
        );
        let found = discover(&stacked(&discovery), &env).unwrap();
        assert!(found.servers.is_empty());
        assert!(
            found.notices[0].contains("not approved"),
            "{:?}",
            found.notices
        );
        // The project's own files approve nothing.
        write(
            &discovery.cwd.join(".claude").join("settings.local.json"),
            r#"{"enabledMcpjsonServers":["other"]}"#,
        );
        write(
            &discovery.cwd.join(".claude").join("settings.json"),
            r#"{"enableAllProjectMcpServers":true}"#,
        );
        assert!(
            discover(&stacked(&discovery), &env)
                .unwrap()
                .servers
                .is_empty()
        );
        // Claude Code's dialog records approvals in ~/.claude.json.
        let project = discovery.cwd.to_string_lossy().into_owned();
        write(
            &discovery.home.join(".claude.json"),
            &serde_json::json!({"projects": {project.clone(): {"enabledMcpjsonServers": ["other"]}}})
                .to_string(),
        );
        let found = discover(&stacked(&discovery), &env).unwrap();
        assert_eq!(found.servers.len(), 1);
        assert_eq!(found.servers[0].name, "other");
        write(
            &discovery.home.join(".claude.json"),
            &serde_json::json!({"projects": {project: {"enableAllProjectMcpServers": true}}})
                .to_string(),
        );
        assert_eq!(
            discover(&stacked(&discovery), &env).unwrap().servers.len(),
            2
        );
    }

    #[test]
    fn unapproved_project_servers_are_listed_for_consent() {
        let (_dir, discovery) = setup();
        write(
            &discovery.cwd.join(".mcp.json"),
            r#"{"mcpServers":{"echo":{"command":"x"}}}"#,
        );
        write(
            &discovery.cwd.join(".claude").join("settings.json"),
            r#"{"enableAllProjectMcpServers":true}"#,
        );
        write(
            &discovery.cwd.join(".codex").join("config.toml"),
            "[mcp_servers.codexy]\ncommand = \"y\"\n",
        );
        let found = discover(&stacked(&discovery), &env).unwrap();
        assert_eq!(found.servers.len(), 2);
        assert_eq!(
            found.unapproved,
            vec!["echo".to_owned(), "codexy".to_owned()]
        );
        let mut strict = discovery.clone();
        strict.require_project_approval = true;
        let found = discover(&strict, &env).unwrap();
        assert!(found.servers.is_empty(), "{:?}", found.servers);
        assert!(found.unapproved.is_empty());
    }

    #[test]
    fn errors_name_the_file_and_the_server() {
        let (_dir, discovery) = setup();
        write(
            &discovery.cwd.join(".mcp.json"),
            r#"{"mcpServers":{"echo":{"args":["x"]}}}"#,
        );
        let error = discover(&stacked(&discovery), &env)
            .unwrap_err()
            .to_string();
        assert!(error.contains(".mcp.json"), "{error}");
        assert!(error.contains("`echo`"), "{error}");
        write(&discovery.cwd.join(".mcp.json"), "{not json");
        let error = discover(&stacked(&discovery), &env)
            .unwrap_err()
            .to_string();
        assert!(error.contains(".mcp.json"), "{error}");
    }

    /// A key of the wrong type is an error naming the file, the server and
    /// the key, in every file a server is configured in; one bad entry does
    /// not hide which one it is.
    #[test]
    fn a_bad_key_names_the_file_the_server_and_the_key() {
        let (_dir, discovery) = setup();
        write(
            &discovery.cwd.join(".mcp.json"),
            r#"{"mcpServers":{"ok":{"command":"x"},"web":{"type":"http","url":"u","headers":{"Authorization":7}}}}"#,
        );
        let error = discover(&stacked(&discovery), &env)
            .unwrap_err()
            .to_string();
        assert!(error.contains(".mcp.json"), "{error}");
        assert!(error.contains("`web`"), "{error}");
        assert!(
            error.contains("`headers.Authorization` must be a string"),
            "{error}"
        );

        let (_dir, discovery) = setup();
        write(
            &discovery.cwd.join(".codex").join("config.toml"),
            "[mcp_servers.tools]\ncommand = \"t\"\nenv = { A = 1 }\n",
        );
        let error = discover(&stacked(&discovery), &env)
            .unwrap_err()
            .to_string();
        assert!(error.contains("config.toml"), "{error}");
        assert!(error.contains("`tools`"), "{error}");
        assert!(error.contains("`env.A` must be a string"), "{error}");

        let (_dir, discovery) = setup();
        write(
            &discovery.home.join(".claude.json"),
            r#"{"mcpServers":{"user":{"command":"u","args":"-v"}}}"#,
        );
        let error = discover(&stacked(&discovery), &env)
            .unwrap_err()
            .to_string();
        assert!(error.contains(".claude.json"), "{error}");
        assert!(error.contains("`user`"), "{error}");
        assert!(
            error.contains("`args` must be a list of strings"),
            "{error}"
        );
    }

    /// What Claude Code ignores when malformed, dsh ignores too: a
    /// `projects` entry that is not an object, approval lists of the wrong
    /// type. They approve nothing and fail nothing.
    #[test]
    fn malformed_approval_state_approves_nothing() {
        let (_dir, discovery) = setup();
        let cwd = discovery.cwd.to_string_lossy().into_owned();
        write(
            &discovery.cwd.join(".mcp.json"),
            r#"{"mcpServers":{"echo":{"command":"e"}}}"#,
        );
        write(
            &discovery.home.join(".claude.json"),
            &serde_json::json!({"projects": {
                cwd: {"enabledMcpjsonServers": "echo", "enableAllProjectMcpServers": "yes"},
                "/elsewhere": 5,
            }})
            .to_string(),
        );
        write(
            &discovery.home.join(".claude").join("settings.json"),
            r#"{"enabledMcpjsonServers": ["echo", 1]}"#,
        );
        let found = discover(&stacked(&discovery), &env).unwrap();
        assert_eq!(found.unapproved, ["echo"]);
        assert!(found.approved.is_empty(), "{:?}", found.approved);
    }

    #[test]
    fn inline_mcp_config_json_starts_its_servers_and_sets_sdk_ones_aside() {
        let (_dir, mut discovery) = setup();
        let arg = McpConfigArg::parse(
            r#"{"mcpServers":{"calc":{"type":"sdk","name":"calc"},"echo":{"command":"echo-server","args":["-v"]}}}"#,
        )
        .unwrap();
        assert_eq!(arg.sdk_servers(), ["calc"]);
        discovery.mcp_configs.push(arg);
        let found = discover(&stacked(&discovery), &env).unwrap();
        let names: Vec<&str> = found.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["echo"]);
        assert_eq!(found.servers[0].source, ServerSource::Dynamic);
        assert_eq!(found.servers[0].origin, PathBuf::from("--mcp-config"));
        assert_eq!(found.sdk_servers, ["calc"]);
    }

    #[test]
    fn an_mcp_config_value_is_a_file_unless_it_is_json() {
        assert_eq!(
            McpConfigArg::parse("servers.json").unwrap(),
            McpConfigArg::File(PathBuf::from("servers.json"))
        );
        let error = McpConfigArg::parse(r#"{"mcpServers": {"a": }"#).unwrap_err();
        assert!(error.starts_with("not valid JSON ("), "{error}");
        assert!(error.contains("column"), "{error}");
        let error = McpConfigArg::parse("{").unwrap_err();
        assert!(error.contains("not valid JSON"), "{error}");
    }

    #[test]
    fn a_missing_mcp_config_file_is_an_error() {
        let (_dir, mut discovery) = setup();
        discovery
            .mcp_configs
            .push(McpConfigArg::File(discovery.cwd.join("nope.json")));
        let error = discover(&stacked(&discovery), &env)
            .unwrap_err()
            .to_string();
        assert!(error.contains("nope.json"), "{error}");
    }

    #[test]
    fn codex_project_layer_replaces_the_home_layer_and_disabled_is_skipped() {
        let (_dir, discovery) = setup();
        write(
            &discovery.codex_home.join("config.toml"),
            "[mcp_servers.x]\ncommand = \"home\"\n[mcp_servers.off]\ncommand = \"y\"\nenabled = false\n",
        );
        write(
            &discovery.cwd.join(".codex").join("config.toml"),
            "[mcp_servers.x]\ncommand = \"project\"\nenv = { A = \"1\" }\nstartup_timeout_sec = 2\ntool_timeout_sec = 0.5\n",
        );
        let found = discover(&stacked(&discovery), &env).unwrap();
        assert_eq!(found.servers.len(), 1);
        let ServerTransport::Stdio { command, env, .. } = &found.servers[0].transport else {
            panic!("stdio expected");
        };
        assert_eq!(command, "project");
        assert_eq!(env.get("A").map(String::as_str), Some("1"));
        assert_eq!(
            found.servers[0].startup_timeout,
            Some(std::time::Duration::from_secs(2))
        );
        assert_eq!(
            found.servers[0].tool_timeout,
            Some(std::time::Duration::from_millis(500))
        );
    }

    #[test]
    fn an_approval_is_remembered_in_claude_json_keeping_every_other_key() {
        let (_dir, discovery) = setup();
        write(
            &discovery.cwd.join(".mcp.json"),
            r#"{"mcpServers":{"echo":{"command":"python3","args":["s.py"]},"other":{"command":"x"}}}"#,
        );
        let claude_json = discovery.home.join(".claude.json");
        let cwd = discovery.cwd.display().to_string();
        write(
            &claude_json,
            &serde_json::json!({
                "zeta": 1,
                "projects": {cwd.clone(): {"hasTrustDialogAccepted": false, "enabledMcpjsonServers": ["other"]}},
                "alpha": {"kept": true}
            })
            .to_string(),
        );
        let mut asking = discovery.clone();
        asking.require_project_approval = false;
        assert_eq!(discover(&asking, &env).unwrap().unapproved, ["echo"]);

        let written =
            remember_approved(&discovery.home, &discovery.cwd, &["echo".to_owned()]).unwrap();
        assert_eq!(written, claude_json);
        // Twice: no duplicate.
        remember_approved(&discovery.home, &discovery.cwd, &["echo".to_owned()]).unwrap();
        let doc: Value =
            serde_json::from_str(&fs_err::read_to_string(&claude_json).unwrap()).unwrap();
        let keys: Vec<&String> = doc.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["zeta", "projects", "alpha"]);
        assert_eq!(doc["alpha"]["kept"], Value::Bool(true));
        assert_eq!(
            doc["projects"][&cwd]["hasTrustDialogAccepted"],
            Value::Bool(false)
        );
        assert_eq!(
            doc["projects"][&cwd]["enabledMcpjsonServers"],
            serde_json::json!(["other", "echo"])
        );
        assert!(discover(&asking, &env).unwrap().unapproved.is_empty());
        use std::os::unix::fs::PermissionsExt as _;
        let mode = fs_err::metadata(&claude_json).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn remembering_creates_claude_json_and_refuses_a_symlink() {
        let (dir, discovery) = setup();
        remember_approved(&discovery.home, &discovery.cwd, &["echo".to_owned()]).unwrap();
        let doc: Value = serde_json::from_str(
            &fs_err::read_to_string(discovery.home.join(".claude.json")).unwrap(),
        )
        .unwrap();
        let cwd = discovery.cwd.display().to_string();
        assert_eq!(
            doc["projects"][&cwd]["enabledMcpjsonServers"],
            serde_json::json!(["echo"])
        );

        let target = dir.path().join("elsewhere.json");
        write(&target, "{}");
        fs_err::remove_file(discovery.home.join(".claude.json")).unwrap();
        std::os::unix::fs::symlink(&target, discovery.home.join(".claude.json")).unwrap();
        assert!(remember_approved(&discovery.home, &discovery.cwd, &["echo".to_owned()]).is_err());
        assert_eq!(fs_err::read_to_string(&target).unwrap(), "{}");
    }
}
