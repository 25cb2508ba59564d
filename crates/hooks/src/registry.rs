//! Hook dialects as plugins: the [`HookDialect`] trait every dialect crate
//! implements, the [`DialectConfig`] its parse hands back, and the
//! [`Registry`] core, `dsh status`, the hook tools, trust and ACP iterate
//! instead of naming dialects.
//!
//! A dialect crate (`hooks-claude`, `hooks-codex`, `hooks-gemini`, …)
//! implements [`HookDialect`] on a unit struct and is registered with one
//! line in `dsh_core::dialects::registry()`. Everything dsh does per
//! dialect goes through these two traits:
//!
//! - identity: [`HookDialect::id`] (the `dialect` of `hook/*` records, what
//!   `--dialect` accepts), [`HookDialect::display_name`];
//! - discovery: [`HookDialect::config_files`] (user and project layers with
//!   their paths) and [`HookDialect::load`], which parses them once into a
//!   [`DialectConfig`];
//! - `dsh hooks check`: [`HookDialect::lint_targets`],
//!   [`HookDialect::claims_file`], [`HookDialect::lint_file`];
//! - vocabulary: [`HookDialect::event_names`], [`HookDialect::hook_tool_name`];
//! - per parse ([`DialectConfig`]): every configured hook with its trust
//!   identity ([`ConfiguredHook`], what `dsh hooks trust` pins), held-back
//!   project settings, notices, disabling untrusted origins, extra facts
//!   for `dsh hooks list`, and building the session's plugin.
//!
//! Both traits are object safe: the registry holds `Arc<dyn HookDialect>`,
//! a session holds `Box<dyn DialectConfig>` per dialect.

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use dsh_files::ConfigFiles;
use dsh_hook_runner::HookRunner;
use dsh_protocol::Dialect;
use dsh_seams::Plugin;

use crate::lint::Finding;
use crate::project_settings::{HeldBack, ProjectSettings};

/// A configured MCP server as hooks see it (Claude Code's `mcp_server`
/// payload key): its name and configuration scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerTag {
    /// The configured server name.
    pub name: String,
    /// The configuration scope (`project`, `user`, `local`, `dynamic`, …).
    pub source: String,
}

/// Where every dialect looks for its configuration: dialect-neutral facts
/// of the session's directory, environment and flags.
#[derive(Debug, Clone)]
pub struct DialectSources {
    /// The project directory (session cwd).
    pub cwd: PathBuf,
    /// `$HOME` (`/` when unset).
    pub home: PathBuf,
    /// dsh's home (`$DSH_HOME`, default `~/.dsh`).
    pub dsh_home: PathBuf,
    /// The process environment, read once; an empty value is unset. A
    /// dialect reads its own variables here (`CODEX_HOME`,
    /// `GEMINI_CLI_TRUST_WORKSPACE`, …).
    pub env: BTreeMap<String, String>,
    /// Whether project layers' settings that change how the user's own
    /// hooks and tools run apply, or wait for a trusted workspace.
    pub project_settings: ProjectSettings,
    /// Settings files given on the command line (`--settings`): the
    /// dialect whose format they are in reads them (Claude Code).
    pub settings_files: Vec<PathBuf>,
    /// Plugin directories given on the command line (`--plugin-dir`).
    pub plugin_dirs: Vec<PathBuf>,
    /// The session's configuration files, each read from disk once.
    pub files: ConfigFiles,
    /// The Claude Code settings layer stack the resolution built of these
    /// sources through `files` (held back as `project_settings` says);
    /// `None`: the Claude bridge loads it itself.
    pub settings_stack: Option<dsh_files::settings::SettingsStack>,
}

impl DialectSources {
    /// A variable of the environment snapshot (`None`: unset or empty).
    pub fn var(&self, name: &str) -> Option<&str> {
        self.env
            .get(name)
            .map(String::as_str)
            .filter(|value| !value.is_empty())
    }
}

/// Values a front end hands to one dialect, keyed by dialect id (e.g. the
/// Claude Agent SDK's registered callbacks for the `claude` dialect). The
/// dialect downcasts what it knows.
#[derive(Clone, Default)]
pub struct Attachments {
    by_dialect: BTreeMap<&'static str, Arc<dyn Any + Send + Sync>>,
}

impl Attachments {
    /// Hands `value` to `dialect`, replacing what it had.
    pub fn insert<T: Any + Send + Sync>(&mut self, dialect: Dialect, value: T) {
        self.by_dialect.insert(dialect.as_str(), Arc::new(value));
    }

    /// What `dialect` was handed, if it is a `T`.
    pub fn get<T: Any + Send + Sync>(&self, dialect: Dialect) -> Option<&T> {
        self.by_dialect
            .get(dialect.as_str())
            .and_then(|value| value.downcast_ref::<T>())
    }
}

impl fmt::Debug for Attachments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.by_dialect.keys()).finish()
    }
}

/// What the session adds when a dialect's plugin is built.
pub struct SessionHooks<'a> {
    /// The runner every hook process goes through.
    pub runner: HookRunner,
    /// Whether hooks nobody trusted yet run (replay) or only trusted ones
    /// (for dialects with their own trust, such as Codex's `trusted_hash`).
    pub run_untrusted: bool,
    /// The session's permission mode as hooks see it (`permission_mode`);
    /// `None` keeps the dialect's default.
    pub permission_mode: Option<&'a str>,
    /// Whether that mode was asked for (`--permission-mode`,
    /// `--dangerously-skip-permissions`) rather than being the session's
    /// default. A dialect whose tool derives the mode itself (Codex, from
    /// its approval policy) shows the session's mode only then.
    pub permission_mode_requested: bool,
    /// The session's MCP servers.
    pub mcp_servers: &'a [McpServerTag],
    /// What the front end handed to dialects, by id.
    pub attachments: &'a Attachments,
}

/// What building a plugin produced.
#[derive(Default)]
pub struct BuiltPlugin {
    /// The plugin; `None` when nothing would run (no active handler).
    pub plugin: Option<Arc<dyn Plugin>>,
    /// Notices the build produced, already prefixed (`sdk: …`).
    pub notices: Vec<String>,
}

/// Where a configured hook comes from, for trust.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookScope {
    /// User-level, managed or given on the command line: the user put it
    /// there; trusted.
    User,
    /// From a project file: it needs dsh's trust (`trust.json`).
    Project,
    /// From a project file and trusted by the tool's own mechanism (Codex's
    /// `trusted_hash`).
    TrustedByDialect,
}

/// One configured hook as dsh's trust, `dsh hooks list` and `dsh status`
/// see it.
#[derive(Debug, Clone)]
pub struct ConfiguredHook {
    /// The event as configured.
    pub event: String,
    /// The matcher as configured.
    pub matcher: Option<String>,
    /// The command (or a description of a handler that is not a command):
    /// what trust scans for executed files and shows the user.
    pub command: String,
    /// The handler as `dsh hooks list` shows it (`command: …`, `http: …`).
    pub handler: String,
    /// The timeout in seconds.
    pub timeout_secs: f64,
    /// The configuration file.
    pub file: PathBuf,
    /// `<file>#…`: where in the file; what trust keys a hook by.
    pub origin: String,
    /// The definition trust hashes (dialect, file, event, matcher, handler,
    /// timeout, …): change any of it and the hook asks again.
    pub identity: serde_json::Value,
    /// User, project, or trusted by the dialect itself.
    pub scope: HookScope,
    /// Whether the dialect would run it when trusted (active, or excluded
    /// only by dsh's trust).
    pub active: bool,
    /// The status as `dsh hooks list` shows it (`active`,
    /// `disabled: <why>`, `unsupported: <why>`).
    pub status: String,
    /// `<plugin>@<marketplace>` for a hook a plugin brought.
    pub plugin: Option<String>,
    /// Where the command runs, when the dialect runs it elsewhere than
    /// the session directory or sets variables it may name files through:
    /// trust pins the files the hook will really run.
    pub runs_in: RunsIn,
}

/// Where a command hook runs and what its dialect sets for it (default:
/// the session directory, nothing set).
#[derive(Debug, Clone, Default)]
pub struct RunsIn {
    /// The working directory (`None`: the session directory).
    pub dir: Option<PathBuf>,
    /// The project directory its variables stand for (`None`: the session
    /// directory).
    pub project: Option<PathBuf>,
    /// Variables the dialect sets for the hook, in the order it applies
    /// them (the last of a name wins).
    pub env: Vec<(String, String)>,
}

/// A fact a dialect adds to `dsh hooks list` (Codex's approval policy and
/// sandbox, which dsh does not enforce).
#[derive(Debug, Clone)]
pub struct ListFact {
    /// The key in `--format json` output (`codex_approval`).
    pub key: String,
    /// Its JSON value.
    pub json: serde_json::Value,
    /// The line for people; empty when there is nothing to tell them
    /// (the fact is then for `--format json` only).
    pub text: String,
}

/// A configuration file a dialect reads, and from which layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    /// The path.
    pub path: PathBuf,
    /// `managed`, `user`, `project`, `local`, `cli`, `plugin` …: the
    /// dialect's name for the layer.
    pub layer: &'static str,
}

/// The files `dsh hooks check` lints for a dialect, and the setup's own
/// findings.
#[derive(Debug, Clone, Default)]
pub struct LintTargets {
    /// The configuration files, in the order the check lists them.
    pub files: Vec<PathBuf>,
    /// Files loaded only when every dialect's configuration loads (plugins'
    /// hook files): listed after every dialect's `files`.
    pub loaded_files: Vec<PathBuf>,
    /// Findings about the setup itself (a plugin that cannot load), kept
    /// only when every dialect's configuration loads.
    pub findings: Vec<Finding>,
}

/// How strongly a dialect claims a file named on `dsh hooks check`'s
/// command line; the strongest claim wins, ties go to the first registered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FileClaim {
    /// Any file nobody else claims (Claude Code settings).
    Fallback,
    /// A name this dialect uses (`hooks.json`, `config.toml`).
    Name,
    /// A path only this dialect uses (`.gemini/settings.json`, a plugin's
    /// `hooks/hooks.json` next to `.claude-plugin/`).
    Path,
}

/// A dialect's configuration failed to load (or its plugin could not be
/// built): the session does not start.
#[derive(Debug, thiserror::Error)]
#[error("{context}")]
pub struct LoadError {
    /// What was being done (`cannot load the Codex hook configuration`).
    pub context: String,
    /// Why it failed (file, line, field).
    #[source]
    pub source: Box<dyn std::error::Error + Send + Sync>,
}

impl LoadError {
    /// `context`, caused by `source`.
    pub fn new(
        context: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        LoadError {
            context: context.into(),
            source: Box::new(source),
        }
    }

    /// Loading `display_name`'s configuration failed with `source`.
    pub fn loading(
        display_name: &str,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        LoadError::new(
            format!("cannot load the {display_name} hook configuration"),
            source,
        )
    }
}

/// One external hook dialect. Implemented by each dialect crate on a unit
/// struct and registered once in `dsh_core::dialects::registry()`.
pub trait HookDialect: Send + Sync {
    /// The dialect id (`claude`, `codex`, `gemini`, …): the `dialect` of
    /// its `hook/*` records and what `--dialect` accepts.
    fn id(&self) -> Dialect;
    /// The tool's name for people (`Claude Code`, `Codex`, `Gemini CLI`).
    fn display_name(&self) -> &'static str;
    /// The files this dialect reads for `sources`, existing or not, in
    /// precedence order (lowest first), with their layers.
    fn config_files(&self, sources: &DialectSources) -> Vec<ConfigFile>;
    /// Parses every layer once. An unreadable or invalid file is an error:
    /// no session starts on a configuration dsh cannot read.
    fn load(&self, sources: &DialectSources) -> Result<Box<dyn DialectConfig>, LoadError>;
    /// What `dsh hooks check` lints when no file is named.
    fn lint_targets(&self, sources: &DialectSources) -> LintTargets;
    /// Whether a file named on `dsh hooks check`'s command line is in this
    /// dialect's format (`None`: not claimed).
    fn claims_file(&self, path: &Path) -> Option<FileClaim>;
    /// Lints one file (`project` resolves relative script paths).
    fn lint_file(&self, path: &Path, project: &Path) -> Vec<Finding>;
    /// The events this dialect configures, in the order a session meets
    /// them.
    fn event_names(&self) -> Vec<&'static str>;
    /// The event `dsh hooks test` fires for this dialect's `event`, by its
    /// Claude Code name (the vocabulary `dsh hooks test` fires in), when
    /// the name is the dialect's own and dsh fires it. Default: none.
    fn test_event(&self, _event: &str) -> Option<&'static str> {
        None
    }
    /// The name a dsh tool (`bash`, `read`, `mcp__srv__t`, …) has in this
    /// dialect's payloads and matchers.
    fn hook_tool_name(&self, dsh_tool: &str) -> String;
    /// The dsh tool a tool name of this dialect's payloads stands for (the
    /// reverse of [`HookDialect::hook_tool_name`], for `dsh hooks test
    /// --tool`): `Ok(None)` when it is not one of this dialect's own names,
    /// an error when the name alone cannot say which tool it is.
    fn dsh_tool_name(&self, _hook_tool: &str) -> Result<Option<String>, String> {
        Ok(None)
    }
    /// A payload in this dialect's own field names (as its hooks get it:
    /// `--input`, or a recorded stdin `dsh hooks replay` fires again),
    /// rewritten in the names `dsh hooks test` reads (Claude Code's
    /// `session_id`, `tool_name`, `tool_input`, `tool_response`, …).
    /// `None` when `payload` is not such a payload; only called with a
    /// JSON object. Default: none (the dialect's payloads use those names).
    fn test_payload(&self, _payload: &str) -> Option<String> {
        None
    }
    /// dsh's arguments for a `tool_input` written in this dialect's
    /// argument names; `None` when they are dsh's own.
    fn dsh_arguments(
        &self,
        _dsh_tool: &str,
        _tool_input: &serde_json::Value,
    ) -> Option<serde_json::Value> {
        None
    }
}

/// One dialect's configuration, parsed once per session: trust is decided
/// on it and the same parse runs.
pub trait DialectConfig: Send + Sync + fmt::Debug {
    /// The dialect it belongs to.
    fn dialect(&self) -> Dialect;
    /// A copy (a spec is cloned by the hook tools).
    fn clone_box(&self) -> Box<dyn DialectConfig>;
    /// Every configured hook, in configuration order.
    fn hooks(&self) -> Vec<ConfiguredHook>;
    /// Project settings left out because the workspace is not trusted
    /// (none, for a dialect whose project files hold only hooks).
    fn held_back(&self) -> Vec<HeldBack> {
        Vec::new()
    }
    /// Start-up notices (a hook that will not run and why; the tool's own
    /// project trust, when the project configures this dialect).
    fn notices(&self) -> Vec<String>;
    /// Switches off the hooks at `origins` (they stay listed, disabled
    /// with `reason`, and never run).
    fn disable_origins(&mut self, origins: &[String], reason: &str);
    /// Extra facts for `dsh hooks list` (default: none).
    fn list_facts(&self) -> Vec<ListFact> {
        Vec::new()
    }
    /// The session's plugin for this configuration.
    fn into_plugin(self: Box<Self>, session: &SessionHooks<'_>) -> Result<BuiltPlugin, LoadError>;
}

impl Clone for Box<dyn DialectConfig> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// The registered dialects, in registration order: the order their hooks
/// run on a shared seam and are listed.
#[derive(Clone, Default)]
pub struct Registry {
    dialects: Vec<Arc<dyn HookDialect>>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Registry::default()
    }

    /// Adds a dialect (after those registered before it).
    pub fn register(mut self, dialect: Arc<dyn HookDialect>) -> Self {
        self.dialects.push(dialect);
        self
    }

    /// Every dialect, in registration order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn HookDialect>> {
        self.dialects.iter()
    }

    /// The dialect with this id.
    pub fn get(&self, id: &str) -> Option<&Arc<dyn HookDialect>> {
        self.dialects.iter().find(|d| d.id().as_str() == id)
    }

    /// The registered ids, in order.
    pub fn ids(&self) -> Vec<&'static str> {
        self.dialects.iter().map(|d| d.id().as_str()).collect()
    }

    /// The dialect a command-line `--dialect` names, or an error listing
    /// the known ids.
    pub fn parse(&self, id: &str) -> Result<Dialect, UnknownDialect> {
        self.get(id).map(|d| d.id()).ok_or_else(|| UnknownDialect {
            given: id.to_owned(),
            known: self.ids().join(", "),
        })
    }

    /// Parses every dialect's configuration, in registration order.
    pub fn load(&self, sources: &DialectSources) -> Result<Vec<Box<dyn DialectConfig>>, LoadError> {
        self.dialects.iter().map(|d| d.load(sources)).collect()
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.ids()).finish()
    }
}

/// `--dialect` named no registered dialect.
#[derive(Debug, Clone, thiserror::Error)]
#[error("unknown hook dialect `{given}` (known: {known})")]
pub struct UnknownDialect {
    /// What was given.
    pub given: String,
    /// The known ids, comma separated.
    pub known: String,
}
