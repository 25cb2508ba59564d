//! Codex's configuration layers, added together (`discovery.rs` in 0.169,
//! checked against the real binary's `hooks/list`).
//!
//! Order (which is also the order handlers run and merge in): managed
//! requirements (`<managed_dir>/requirements.toml` `[hooks]`), the system
//! layer (`<managed_dir>/hooks.json`, `<managed_dir>/config.toml`), the user
//! layer (`$CODEX_HOME/hooks.json`, `$CODEX_HOME/config.toml`), then every
//! project layer from the project root (the nearest ancestor with `.git`) down
//! to the cwd (`<dir>/.codex/hooks.json`, `<dir>/.codex/config.toml`). Within
//! one file handlers are ordered by event (Codex's event order), then group,
//! then handler.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::event::CodexEvent;
use crate::matcher::Matcher;
use crate::plugins::{self, CodexPluginOrigin};

/// Where to look for Codex configuration. Tests point every path at temp dirs.
#[derive(Debug, Clone)]
pub struct CodexDiscovery {
    /// The session's working directory (the project).
    pub cwd: PathBuf,
    /// The user's home directory.
    pub home: PathBuf,
    /// `$CODEX_HOME`; `None` means `<home>/.codex`.
    pub codex_home: Option<PathBuf>,
    /// The system/managed configuration folder (`/etc/codex`): its
    /// `requirements.toml`, `config.toml` and `hooks.json` are managed layers.
    /// `None` skips managed layers.
    pub managed_dir: Option<PathBuf>,
    /// Where over-long `additionalContext` is spilled (Codex: `/tmp/hook_outputs`).
    pub spill_dir: PathBuf,
    /// How many consecutive Stop-hook blocks one turn may take before dsh
    /// stops honouring them (Codex has no cap).
    pub stop_block_cap: u32,
    /// The shell hook commands run with (`<shell> -c <command>`; Codex 0.169: `/bin/bash`).
    pub shell: PathBuf,
    /// Whether a project layer's `approval_policy`, `sandbox_mode` and
    /// plugin switches apply in a project neither dsh nor Codex trusts.
    pub project_settings: ProjectSettings,
    /// The session's reader: each configuration file is read from disk once.
    pub files: dsh_files::ConfigFiles,
}

impl CodexDiscovery {
    /// Defaults for a project in `cwd` and a user whose home is `home`:
    /// `CODEX_HOME` = `<home>/.codex`, managed dir `/etc/codex`, spill dir
    /// `/tmp/hook_outputs`, Stop cap 8, shell `/bin/bash`.
    pub fn new(cwd: impl Into<PathBuf>, home: impl Into<PathBuf>) -> Self {
        CodexDiscovery {
            cwd: cwd.into(),
            home: home.into(),
            codex_home: None,
            managed_dir: Some(PathBuf::from("/etc/codex")),
            spill_dir: PathBuf::from("/tmp/hook_outputs"),
            stop_block_cap: 8,
            shell: PathBuf::from("/bin/bash"),
            project_settings: ProjectSettings::Apply,
            files: dsh_files::ConfigFiles::default(),
        }
    }

    /// The effective `CODEX_HOME`.
    pub fn codex_home(&self) -> PathBuf {
        self.codex_home
            .clone()
            .unwrap_or_else(|| self.home.join(".codex"))
    }
}

pub mod approval;
mod error;
pub use approval::ApprovalSettings;
use dsh_hooks::names::Tabled;
use dsh_hooks::project_settings::{HeldBack, ProjectSettings};
pub use error::ConfigError;
mod entry;
mod trust;

pub use dsh_hooks::entries::Off;
pub(crate) use entry::Handler;
pub use entry::{EntryStatus, HookEntry, LayerSource, TrustPolicy, TrustState};
use trust::notify_trust;
pub use trust::{NOTIFY_EVENT, NotifyConfig, definition_hash, sha256_hex, trust_key};

/// Formats a path inside notices the way Codex does (`Path::display`).
struct PathDisplay<'a>(&'a Path);

impl std::fmt::Display for PathDisplay<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0.display())
    }
}

/// Everything discovered: handlers, entries, notices, `notify`.
#[derive(Debug, Clone)]
pub struct CodexConfig {
    pub(crate) handlers: Vec<Handler>,
    pub(crate) entries: Vec<HookEntry>,
    pub(crate) notices: Vec<String>,
    pub(crate) notify: Option<NotifyConfig>,
    pub(crate) discovery: CodexDiscovery,
    pub(crate) approval: ApprovalSettings,
    /// Project settings not applied: the workspace is not trusted.
    pub held_back: Vec<HeldBack>,
}

mod layers;
mod wire;
use layers::Layers;
use wire::*;

/// Reads one Codex configuration file as Codex would parse it — `*.toml`
/// as TOML, anything else as JSON — and returns the whole document as JSON
/// (TOML tables become objects), for tools that inspect the raw
/// configuration (`dsh hooks check`). Errors name `file:line:column`.
pub fn read_document(path: &Path) -> Result<Value, ConfigError> {
    // std: `ConfigError::Read` names the path itself.
    #[allow(clippy::disallowed_methods)]
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_owned(),
        source,
    })?;
    if path.extension().is_some_and(|ext| ext == "toml") {
        let toml = dsh_files::Toml::parse(text);
        let table: toml::Table = toml
            .deserialize()
            .map_err(|err| toml_error(path, toml.text(), &err))?;
        serde_json::to_value(table).map_err(|err| ConfigError::Toml {
            path: path.to_owned(),
            line: 1,
            column: 1,
            message: err.to_string(),
        })
    } else {
        serde_json::from_str(&text).map_err(|err| json_error(path, &err))
    }
}

// ------------------------------------------------------------------ loading

struct Loader {
    handlers: Vec<Handler>,
    entries: Vec<HookEntry>,
    notices: Vec<String>,
    states: BTreeMap<String, HookStateWire>,
    display_order: usize,
}

impl Loader {
    /// Appends the hooks of every enabled plugin (its `hooks/hooks.json`);
    /// a plugin that cannot be read is a notice, never an error.
    fn append_plugins(
        &mut self,
        codex_home: &Path,
        plugin_layers: &[(PathBuf, Vec<(String, bool)>)],
        allow_managed_only: bool,
    ) {
        for found in plugins::find(codex_home, plugin_layers, &mut self.notices) {
            // std: the notice below names the file itself.
            #[allow(clippy::disallowed_methods)]
            let read = std::fs::read_to_string(&found.hooks_file);
            let text = match read {
                Ok(text) => text,
                Err(error) => {
                    self.notices.push(format!(
                        "plugin {} not loaded: cannot read {}: {error}",
                        found.origin.id,
                        found.hooks_file.display()
                    ));
                    continue;
                }
            };
            // A broken plugin is reported, never fatal: the user's own
            // configuration still loads.
            match parse_hooks_json(&found.hooks_file, &dsh_files::Json::parse(text)) {
                Ok((events, unknown)) => {
                    for key in unknown {
                        self.notices.push(format!(
                            "ignoring unknown hook event `{key}` in {} (Codex 0.169 ignores it too)",
                            found.hooks_file.display()
                        ));
                    }
                    let source = Source {
                        path: &found.hooks_file,
                        layer: LayerSource::User,
                        project_trusted: true,
                        plugin: Some(&found.origin),
                    };
                    self.append(&source, events, allow_managed_only);
                }
                Err(error) => self
                    .notices
                    .push(format!("plugin {} not loaded: {error}", found.origin.id)),
            }
        }
    }
}

struct Source<'a> {
    path: &'a Path,
    layer: LayerSource,
    /// For project layers: whether Codex would load the project at all.
    project_trusted: bool,
    /// Set for a plugin's `hooks/hooks.json` (trusted like user hooks).
    plugin: Option<&'a CodexPluginOrigin>,
}

impl Loader {
    fn append(&mut self, source: &Source<'_>, events: EventsWire, allow_managed_only: bool) {
        if allow_managed_only && !source.layer.managed() {
            return;
        }
        for (event, groups) in events.into_groups() {
            for (group_index, group) in groups.into_iter().enumerate() {
                self.append_group(source, event, group_index, group);
            }
        }
    }

    fn append_group(
        &mut self,
        source: &Source<'_>,
        event: CodexEvent,
        group_index: usize,
        group: GroupWire,
    ) {
        let path = PathDisplay(source.path);
        let matcher_text = if event.honours_matcher() {
            group.matcher.clone()
        } else {
            None
        };
        let (matcher, matcher_error) = match Matcher::compile(matcher_text.as_deref()) {
            Ok(matcher) => (matcher, None),
            Err(err) => {
                self.notices.push(format!(
                    "invalid matcher {:?} in {path}: {err}",
                    matcher_text.as_deref().unwrap_or_default()
                ));
                (Matcher::All, Some(err))
            }
        };
        for (handler_index, handler) in group.hooks.into_iter().enumerate() {
            let key = trust_key(source.path, event, group_index, handler_index);
            let origin = format!(
                "{path}#hooks.{}[{group_index}].hooks[{handler_index}]",
                event.as_str()
            );
            let base_entry = |handler_type: &str| HookEntry {
                event: event.as_str().to_owned(),
                matcher: matcher_text.clone(),
                handler: handler_type.to_owned(),
                command: None,
                timeout_secs: event.default_timeout_secs(),
                is_async: false,
                status_message: None,
                origin: origin.clone(),
                key: key.clone(),
                current_hash: None,
                source: source.layer,
                trust: if source.layer.managed() {
                    TrustState::Managed
                } else {
                    TrustState::Untrusted
                },
                status: EntryStatus::Active,
                plugin: source.plugin.map(|p| p.id.clone()),
            };
            if let Some(err) = &matcher_error {
                let mut entry = base_entry("command");
                entry.status = EntryStatus::unsupported(format!("invalid matcher: {err}"));
                if let HandlerWire::Command { command, .. } = &handler {
                    entry.command = Some(command.clone());
                }
                self.entries.push(entry);
                continue;
            }
            match handler {
                HandlerWire::Command {
                    command,
                    timeout,
                    is_async,
                    status_message,
                    additional_context_limit,
                    ..
                } => {
                    if command.trim().is_empty() {
                        self.notices
                            .push(format!("skipping empty hook command in {path}"));
                        let mut entry = base_entry("command");
                        entry.command = Some(command);
                        entry.status = EntryStatus::unsupported("empty command");
                        self.entries.push(entry);
                        continue;
                    }
                    let mut timeout_secs = timeout.unwrap_or(event.default_timeout_secs()).max(1);
                    if let Some(max) = event.max_timeout_secs()
                        && timeout_secs > max
                    {
                        self.notices
                            .push(format!("clamping {event} hook timeout to {max}s in {path}"));
                        timeout_secs = max;
                    }
                    let context_limit = if event.emits_context() {
                        additional_context_limit
                    } else {
                        if additional_context_limit.is_some() {
                            self.notices.push(format!(
                                "ignoring additionalContextLimit for {event} hook in {path}: this event cannot emit additionalContext"
                            ));
                        }
                        None
                    };
                    let hash = definition_hash(
                        event,
                        matcher_text.as_deref(),
                        &command,
                        timeout_secs,
                        is_async,
                        status_message.as_deref(),
                        context_limit,
                    );
                    let state = self.states.get(&key).cloned().unwrap_or_default();
                    let trust = if source.layer.managed() {
                        TrustState::Managed
                    } else if state.enabled == Some(false) {
                        TrustState::Disabled
                    } else if !source.project_trusted {
                        TrustState::Untrusted
                    } else {
                        match state.trusted_hash.as_deref() {
                            Some(trusted) if trusted == hash => TrustState::Trusted,
                            Some(_) => TrustState::Modified,
                            None => TrustState::Untrusted,
                        }
                    };
                    let status = if trust == TrustState::Disabled {
                        EntryStatus::disabled(format!("enabled = false in [hooks.state.\"{key}\"]"))
                    } else {
                        EntryStatus::Active
                    };
                    let mut entry = base_entry("command");
                    entry.command = Some(command.clone());
                    entry.timeout_secs = timeout_secs;
                    entry.is_async = is_async;
                    entry.status_message = status_message.clone();
                    entry.current_hash = Some(hash);
                    entry.trust = trust;
                    entry.status = status.clone();
                    self.entries.push(entry);
                    if status == EntryStatus::Active {
                        self.handlers.push(Handler {
                            event,
                            matcher_text: matcher_text.clone(),
                            matcher: matcher.clone(),
                            command,
                            timeout_secs,
                            is_async,
                            context_limit,
                            source_path: source.path.to_owned(),
                            origin,
                            display_order: self.display_order,
                            trust,
                            plugin: source.plugin.cloned(),
                        });
                    }
                    self.display_order += 1;
                }
                HandlerWire::Prompt {} | HandlerWire::Agent {} => {
                    let kind = if matches!(handler, HandlerWire::Prompt {}) {
                        "prompt"
                    } else {
                        "agent"
                    };
                    self.notices.push(format!(
                        "skipping {kind} hook in {path}: {kind} hooks are not supported yet"
                    ));
                    let mut entry = base_entry(kind);
                    entry.status = EntryStatus::unsupported(format!(
                        "{kind} hooks are not supported (Codex 0.169 skips them too)"
                    ));
                    self.entries.push(entry);
                }
                HandlerWire::McpTool { server, tool } => {
                    self.notices.push(format!(
                        "skipping mcp_tool hook ({}/{}) in {path}: dsh has no MCP client",
                        server.as_deref().unwrap_or("?"),
                        tool.as_deref().unwrap_or("?")
                    ));
                    let mut entry = base_entry("mcp_tool");
                    entry.status = EntryStatus::unsupported(
                        "mcp_tool handlers need an MCP client, which dsh does not have",
                    );
                    self.entries.push(entry);
                    self.display_order += 1;
                }
            }
        }
    }
}

pub(crate) fn project_dirs(cwd: &Path) -> Vec<PathBuf> {
    let mut chain = Vec::new();
    let mut root = None;
    for dir in cwd.ancestors() {
        chain.push(dir.to_owned());
        if dir.join(".git").exists() {
            root = Some(dir);
            break;
        }
    }
    if root.is_none() {
        chain = vec![cwd.to_owned()];
    }
    chain.reverse();
    chain
}

struct LayerFiles {
    layer: LayerSource,
    json: Option<(PathBuf, EventsWire)>,
    toml: Option<(PathBuf, EventsWire)>,
    project_dir: Option<PathBuf>,
}

/// Reads every layer. Malformed JSON or TOML is an error naming file and
/// line:column (Codex would warn and skip the file; dsh refuses to guess).
pub fn load(discovery: &CodexDiscovery) -> Result<CodexConfig, ConfigError> {
    let mut read = Layers::new(discovery);
    if let Some(managed_dir) = &discovery.managed_dir {
        let requirements = managed_dir.join("requirements.toml");
        if let Some(toml) = read_toml_if_exists(&discovery.files, &requirements)? {
            let (config, _unknown) = parse_config_toml(&requirements, &toml)?;
            if config.allow_managed_hooks_only == Some(true) {
                read.allow_managed_only = true;
            }
            if let Some(hooks) = config.hooks {
                let source = hooks
                    .managed_dir
                    .clone()
                    .filter(|dir| dir.is_absolute())
                    .unwrap_or_else(|| requirements.clone());
                if !hooks.is_empty() {
                    read.requirement_hooks = Some((source, hooks));
                }
            }
        }
        read.read_layer(managed_dir, LayerSource::System, None)?;
    }
    let codex_home = discovery.codex_home();
    read.read_layer(&codex_home, LayerSource::User, None)?;
    for dir in project_dirs(&discovery.cwd) {
        let dot_codex = dir.join(".codex");
        if dot_codex == codex_home || !dot_codex.is_dir() {
            continue;
        }
        read.read_layer(&dot_codex, LayerSource::Project, Some(dir))?;
    }
    let Layers {
        notices,
        states,
        trusted_projects,
        mut notify,
        notify_project,
        allow_managed_only,
        requirement_hooks,
        layers,
        mut plugin_layers,
        plugins_feature,
        approval,
        held_back,
        ..
    } = read;
    let is_trusted_project = |dir: &Path| {
        trusted_projects
            .iter()
            .any(|path| path == dir || discovery.cwd.starts_with(path) && dir.starts_with(path))
    };

    let mut loader = Loader {
        handlers: Vec::new(),
        entries: Vec::new(),
        notices,
        states,
        display_order: 0,
    };
    if let Some((path, events)) = requirement_hooks {
        let source = Source {
            path: &path,
            layer: LayerSource::Requirements,
            project_trusted: true,
            plugin: None,
        };
        loader.append(&source, events, allow_managed_only);
    }
    for files in layers {
        let project_trusted = match &files.project_dir {
            None => true,
            Some(dir) => {
                let trusted = is_trusted_project(dir);
                if !trusted && (files.json.is_some() || files.toml.is_some()) {
                    loader.notices.push(format!(
                        "project {} is not trusted in Codex, so Codex would not run its hooks; dsh runs them once you trust them (`dsh hooks trust`). To trust it in Codex too, add `[projects.\"{}\"] trust_level = \"trusted\"` to {}",
                        dir.display(),
                        dir.display(),
                        codex_home.join("config.toml").display()
                    ));
                }
                trusted
            }
        };
        if let (Some((json_path, _)), Some((toml_path, _))) = (&files.json, &files.toml) {
            loader.notices.push(format!(
                "loading hooks from both {} and {}; prefer a single representation for this layer",
                json_path.display(),
                toml_path.display()
            ));
        }
        for (path, events) in [files.json, files.toml].into_iter().flatten() {
            let source = Source {
                path: &path,
                layer: files.layer,
                project_trusted,
                plugin: None,
            };
            loader.append(&source, events, allow_managed_only);
        }
    }
    // Plugin hooks after every layer's own hooks, trusted like user hooks.
    if let Some((false, path)) = &plugins_feature {
        if plugin_layers
            .iter()
            .any(|(_, entries)| entries.iter().any(|(_, on)| *on))
        {
            loader.notices.push(format!(
                "plugins are switched off ([features] plugins = false in {}); no plugin hooks run",
                path.display()
            ));
        }
        plugin_layers.clear();
    }
    loader.append_plugins(&codex_home, &plugin_layers, allow_managed_only);
    if let Some(notify) = &mut notify {
        let project_trusted = notify_project.as_deref().is_none_or(&is_trusted_project);
        notify.trust = notify_trust(notify, project_trusted, &loader.states);
        loader.entries.push(HookEntry {
            event: NOTIFY_EVENT.to_owned(),
            matcher: None,
            handler: "command".to_owned(),
            command: Some(notify.command()),
            timeout_secs: crate::plugin::NOTIFY_TIMEOUT.as_secs(),
            is_async: false,
            status_message: None,
            origin: notify.origin_label(),
            key: notify.key(),
            current_hash: Some(notify.definition_hash()),
            source: notify.layer,
            trust: notify.trust,
            status: if notify.trust == TrustState::Disabled {
                EntryStatus::disabled(format!(
                    "enabled = false in [hooks.state.\"{}\"]",
                    notify.key()
                ))
            } else {
                EntryStatus::Active
            },
            plugin: None,
        });
    }
    let mut notices = loader.notices;
    notices.extend(approval.notices());
    Ok(CodexConfig {
        handlers: loader.handlers,
        entries: loader.entries,
        notices,
        notify,
        discovery: discovery.clone(),
        approval,
        held_back,
    })
}

impl CodexConfig {
    /// Start-up notices: Codex's own warnings (both formats in one layer,
    /// invalid matchers, unsupported handler types, clamps) and dsh's
    /// (events not fired by dsh, untrusted projects).
    pub fn notices(&self) -> Vec<String> {
        self.notices.clone()
    }

    /// Every configured handler with its trust state and dsh status.
    pub fn entries(&self) -> Vec<HookEntry> {
        self.entries.clone()
    }

    /// The legacy `notify` program, if configured.
    pub fn notify(&self) -> Option<&NotifyConfig> {
        self.notify.as_ref()
    }

    /// Switches off the active handlers whose `origin` is listed: they stay
    /// in [`CodexConfig::entries`] as disabled with `reason` and never run.
    /// dsh's trust rules use this for project hooks the user has not trusted.
    pub fn disable_origins(&mut self, origins: &[String], reason: &str) {
        if let Some(notify) = &self.notify
            && origins.contains(&notify.origin_label())
        {
            self.notify = None;
        }
        self.handlers
            .retain(|handler| !origins.contains(&handler.origin));
        for entry in &mut self.entries {
            if entry.status == EntryStatus::Active && origins.contains(&entry.origin) {
                entry.status = EntryStatus::Excluded(reason.to_owned());
            }
        }
    }

    /// `approval_policy` and `sandbox_mode` as the layers set them.
    pub fn approval(&self) -> &ApprovalSettings {
        &self.approval
    }

    /// Whether nothing is configured (no handler, no `notify` and no
    /// `approval_policy`: a policy alone still decides approvals).
    pub fn is_empty(&self) -> bool {
        self.handlers.is_empty() && self.notify.is_none() && self.approval.policy.is_none()
    }
}
