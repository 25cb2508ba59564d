//! Settings discovery and merge, as Claude Code 2.1.328 does it.
//!
//! Sources: managed policy (`<managed_dir>/managed-settings.json`
//! then `<managed_dir>/managed-settings.d/*.json` in name order), `--settings`
//! files, `<project>/.claude/settings.local.json`, `<project>/.claude/settings.json`
//! and `~/.claude/settings.json`. Hooks from every source accumulate; identical
//! commands run once (the dedup happens when a firing selects handlers, so a
//! command configured under two matchers still runs once when both match).
//!
//! Configuration order — the order in which handlers are listed, recorded,
//! and in which the first rewrite wins — is precedence order, highest first:
//! managed, `--settings` (in flag order), local, project, user; inside a file,
//! file order.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::events::{EventSupport, HookEvent};
use crate::matcher::Matcher;
use crate::plugins::{self, PluginOrigin};
use crate::settings_env;
use dsh_files::settings::SettingsStack;
use dsh_hooks::project_settings::{HeldBack, ProjectSettings};

mod discovery;
mod handler;
mod parse;
use crate::output::wire::Field;
use crate::settings_wire::{GroupWire, SettingsKeys, SettingsWire};
use parse::parse_handler;

pub use discovery::{ClaudeDiscovery, project_slug};
pub(crate) use handler::SdkCallbacks;
pub use handler::{CommandForm, HandlerKind, HandlerStatus, HookCallbacks, HookEntry, HookHandler};

/// A configuration that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A settings file exists but could not be read.
    #[error("cannot read Claude Code settings {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A settings file is not valid JSON.
    #[error("invalid JSON in Claude Code settings {}:{line}:{column}: {message}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// A matcher is not a valid ECMAScript regex.
    #[error("invalid matcher regex {pattern:?} for {event} hooks in {}: {message}", path.display())]
    InvalidMatcher {
        /// The file.
        path: PathBuf,
        /// The event it was configured under.
        event: String,
        /// The pattern.
        pattern: String,
        /// The regex engine's message.
        message: String,
    },
    /// A handler's `timeout` is a number no deadline can hold.
    #[error("invalid timeout in Claude Code settings {}: {field} is {value} seconds, more than a deadline can hold", path.display())]
    InvalidTimeout {
        /// The file.
        path: PathBuf,
        /// The JSON path of the field (`hooks.PreToolUse[0].hooks[1].timeout`).
        field: String,
        /// The configured value, as written.
        value: String,
    },
}

/// Which settings layer a handler came from (the layer stack's source:
/// [`dsh_files::settings`]).
pub use dsh_files::settings::SettingsSource;

/// Knobs of the bridge that are not in settings files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaudeOptions {
    /// `permission_mode` sent to hooks. dsh runs tools without asking unless
    /// a policy asks, which is Claude Code's `bypassPermissions`.
    pub permission_mode: String,
    /// `effort.level` sent to hooks and `CLAUDE_EFFORT`.
    pub effort: String,
    /// `CLAUDE_CODE_ENTRYPOINT`: `cli` interactive, `sdk-cli` headless — the
    /// values Claude Code itself uses, so hooks that branch on it behave the same.
    pub entrypoint_interactive: String,
    /// See `entrypoint_interactive`.
    pub entrypoint_headless: String,
    /// Consecutive Stop blocks before dsh overrides (`CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`, 0 = no cap).
    pub stop_block_cap: u32,
    /// SessionEnd hooks' shared budget override (`CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS`).
    pub session_end_budget: Option<Duration>,
    /// Model-facing hook strings longer than this are spilled to a file (10,000).
    pub output_cap_chars: usize,
    /// The session's MCP servers, for the `mcp_server` key of MCP tool events.
    pub mcp_servers: Vec<crate::payload::McpServerTag>,
}

impl Default for ClaudeOptions {
    fn default() -> Self {
        ClaudeOptions {
            permission_mode: "bypassPermissions".to_owned(),
            effort: "medium".to_owned(),
            entrypoint_interactive: "cli".to_owned(),
            entrypoint_headless: "sdk-cli".to_owned(),
            stop_block_cap: 9,
            session_end_budget: None,
            output_cap_chars: 10_000,
            mcp_servers: Vec::new(),
        }
    }
}

impl ClaudeOptions {
    /// Defaults with the environment knobs Claude Code reads applied
    /// (`CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`, `CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS`).
    pub fn from_env() -> Self {
        let mut options = ClaudeOptions::default();
        if let Some(cap) = std::env::var("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP")
            .ok()
            .and_then(|v| v.trim().parse::<u32>().ok())
        {
            options.stop_block_cap = cap;
        }
        if let Some(ms) = std::env::var("CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
        {
            options.session_end_budget = Some(Duration::from_millis(ms));
        }
        options
    }
}

/// The merged Claude Code hook configuration.
#[derive(Debug, Clone)]
pub struct ClaudeConfig {
    pub(crate) handlers: Vec<HookHandler>,
    pub(crate) notices: Vec<String>,
    /// Where the bridge keeps state and transcripts, and the project dir.
    pub discovery: ClaudeDiscovery,
    /// Bridge knobs (defaults from the environment).
    pub options: ClaudeOptions,
    /// The settings files that were read, in configuration order.
    pub files: Vec<PathBuf>,
    /// The merged settings `env` block: exported to every hook and to the
    /// bash tool, over dsh's inherited environment.
    pub settings_env: Vec<(String, String)>,
    /// Project and local settings not applied: the workspace is not
    /// trusted (`env` keys, `disableAllHooks`).
    pub held_back: Vec<dsh_hooks::project_settings::HeldBack>,
    /// Custom agents from `.claude/agents/*.md` (project, then user).
    pub agents: Vec<crate::agents::AgentFile>,
    /// Agent files that could not be read: each path and why.
    pub skipped_agents: Vec<(PathBuf, String)>,
    /// Where SDK hook callbacks go ([`ClaudeConfig::add_sdk_hooks`]).
    pub(crate) sdk: Option<SdkCallbacks>,
}

struct SettingsFile {
    path: PathBuf,
    source: SettingsSource,
    /// What dsh reads of it.
    settings: SettingsWire,
    /// Set for a plugin's `hooks/hooks.json` (only its `hooks` are read).
    plugin: Option<PluginOrigin>,
}

fn read_settings(
    files: &dsh_files::ConfigFiles,
    path: &Path,
    source: SettingsSource,
) -> Result<Option<SettingsFile>, ConfigError> {
    // Through the session's reader, its one parse (the settings layer
    // stack's): `ConfigError::Read` names the path.
    let parsed = match files.json(path) {
        Ok(Some(parsed)) => parsed,
        Ok(None) => return Ok(None),
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.to_owned(),
                source,
            });
        }
    };
    let json = parsed.document().map_err(|error| ConfigError::Json {
        path: path.to_owned(),
        line: error.line,
        column: error.column,
        message: error.message.clone(),
    })?;
    Ok(Some(SettingsFile {
        path: path.to_owned(),
        source,
        settings: Field::<SettingsWire>::read(json)
            .into_valid()
            .unwrap_or_default(),
        plugin: None,
    }))
}

/// `--settings '{"env": …}'`: Claude Code takes the settings JSON itself
/// when the argument is not a file (`env_cli_settings`).
fn inline_settings(arg: &Path) -> Option<&str> {
    let text = arg.to_str()?;
    text.trim_start().starts_with('{').then_some(text)
}

fn read_inline_settings(arg: &Path, text: &str) -> Result<SettingsFile, ConfigError> {
    let settings: Field<SettingsWire> =
        serde_json::from_str(text).map_err(|error| ConfigError::Json {
            path: arg.to_owned(),
            line: error.line(),
            column: error.column(),
            message: without_position(&error),
        })?;
    Ok(SettingsFile {
        path: PathBuf::from("--settings"),
        source: SettingsSource::Flag,
        settings: settings.into_valid().unwrap_or_default(),
        plugin: None,
    })
}

/// Reads and merges every settings source of `discovery`.
pub fn load(discovery: &ClaudeDiscovery) -> Result<ClaudeConfig, ConfigError> {
    load_with_options(discovery, ClaudeOptions::from_env())
}

/// [`load`] with explicit bridge options (tests pin them).
pub fn load_with_options(
    discovery: &ClaudeDiscovery,
    options: ClaudeOptions,
) -> Result<ClaudeConfig, ConfigError> {
    let candidates = discovery.candidates();
    let mut files = Vec::new();
    for (path, source) in candidates {
        if source == SettingsSource::Flag
            && !path.exists()
            && let Some(text) = inline_settings(&path)
        {
            files.push(read_inline_settings(&path, text)?);
            continue;
        }
        // Only `--settings` files must exist; the others are optional.
        if source == SettingsSource::Flag && !path.exists() {
            return Err(ConfigError::Read {
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
                path,
            });
        }
        if let Some(file) = read_settings(&discovery.files, &path, source)? {
            files.push(file);
        }
    }
    // Plugins: discovered from the settings layers, their hooks files
    // appended after every settings file (plugin hooks come after settings
    // hooks in configuration order).
    let layers: Vec<plugins::Layer<'_>> = files
        .iter()
        .map(|f| plugins::Layer {
            path: &f.path,
            source: f.source,
            settings: &f.settings,
        })
        .collect();
    let discovered = plugins::discover(discovery, &layers);
    let mut notices = discovered.notices;
    // A repository's `env` reaches the user's own hooks and the bash tool
    // (`PATH`, `BASH_ENV`): it waits for a trusted workspace, as Claude
    // Code applies it only after its trust dialog.
    let hold = discovery.project_settings == ProjectSettings::HoldBack;
    let mut held_back = Vec::new();
    for file in files.iter().filter(|f| hold && f.source.is_project()) {
        if let Some(env) = file.settings.env.valid() {
            held_back.extend(env.keys().map(|name| HeldBack {
                key: format!("env.{name}"),
                file: file.path.clone(),
            }));
        }
    }
    let env_layers: Vec<settings_env::EnvLayer<'_>> = files
        .iter()
        .filter(|f| !(hold && f.source.is_project()))
        .map(|f| settings_env::EnvLayer {
            path: &f.path,
            source: f.source,
            settings: &f.settings,
        })
        .collect();
    let settings_env = settings_env::merge(&env_layers, &mut notices);
    for plugin in discovered.plugins {
        files.push(SettingsFile {
            path: plugin.hooks_file,
            source: plugin.origin.layer,
            settings: plugin.settings,
            plugin: Some(plugin.origin),
        });
    }
    // Custom agents: their frontmatter hooks are read like a settings
    // file's, then scoped to the agent (they fire only inside it).
    let (agents, agent_notices) = crate::agents::load_agents(&discovery.cwd, &discovery.home);
    notices.extend(
        agent_notices
            .iter()
            .map(|(path, why)| crate::agents::skipped_agent_notice(path, why)),
    );
    for agent in &agents {
        if let Some(hooks) = &agent.hooks {
            files.push(SettingsFile {
                path: agent.definition.source.clone(),
                source: match agent.scope {
                    crate::agents::AgentScope::Project => SettingsSource::Project,
                    crate::agents::AgentScope::User => SettingsSource::User,
                },
                settings: SettingsWire {
                    hooks: Field::Valid(hooks.clone()),
                    ..SettingsWire::default()
                },
                plugin: None,
            });
        }
    }
    let mut config = build(files, discovery.clone(), options, notices)?;
    for handler in &mut config.handlers {
        handler.agent = agents
            .iter()
            .find(|agent| agent.hooks.is_some() && agent.definition.source == handler.file)
            .map(|agent| agent.definition.name.clone());
    }
    config.settings_env = settings_env;
    held_back.append(&mut config.held_back);
    config.held_back = held_back;
    config.agents = agents;
    config.skipped_agents = agent_notices;
    Ok(config)
}

impl SettingsFile {
    /// The keys that switch hooks off or limit them, typed.
    fn keys(&self) -> SettingsKeys {
        self.settings.keys.clone()
    }
}

fn build(
    files: Vec<SettingsFile>,
    discovery: ClaudeDiscovery,
    options: ClaudeOptions,
    mut notices: Vec<String>,
) -> Result<ClaudeConfig, ConfigError> {
    // A plugin's hooks file contributes hooks only; settings keys in it
    // (disableAllHooks, allowedHttpHookUrls, …) mean nothing there.
    let (plugin_files, files): (Vec<SettingsFile>, Vec<SettingsFile>) =
        files.into_iter().partition(|f| f.plugin.is_some());
    let hold = discovery.project_settings == ProjectSettings::HoldBack;
    let stack = discovery.settings_stack();
    let (switches, held_back) = Switches::read(&files, &stack, hold, &mut notices);
    let mut handlers = Vec::new();
    for file in files.iter().chain(&plugin_files) {
        handlers.extend(file_handlers(file, &mut notices)?);
    }
    switches.set_statuses(&mut handlers, &mut notices);

    Ok(ClaudeConfig {
        handlers,
        notices,
        discovery,
        options,
        files: files.into_iter().map(|f| f.path).collect(),
        settings_env: Vec::new(),
        held_back,
        agents: Vec::new(),
        skipped_agents: Vec::new(),
        sdk: None,
    })
}

/// The settings keys that switch hooks off or limit them, as the files
/// set them: `(value, file)` of the deciding file.
struct Switches {
    managed_disable: Option<(bool, PathBuf)>,
    other_disable: Option<(bool, PathBuf)>,
    managed_only: Option<(bool, PathBuf)>,
    allowed_urls: Option<Vec<String>>,
}

impl Switches {
    /// The switches `stack` decided for `files` (its layers), with the
    /// keys only the bridge acts on; `hold` holds a repository's back
    /// (returned as held back).
    fn read(
        files: &[SettingsFile],
        stack: &SettingsStack,
        hold: bool,
        notices: &mut Vec<String>,
    ) -> (Switches, Vec<HeldBack>) {
        // A repository switching the user's hooks off (or back on) waits for
        // a trusted workspace too.
        let mut held_back = Vec::new();
        for file in files.iter().filter(|f| hold && f.source.is_project()) {
            if file.keys().disable_all_hooks.valid().is_some() {
                held_back.push(HeldBack {
                    key: "disableAllHooks".to_owned(),
                    file: file.path.clone(),
                });
            }
        }
        // The layer stack's one decision; inline `--settings` JSON is
        // named `--settings`, as the bridge names that layer.
        let named = |switch: &Option<(bool, PathBuf)>| {
            switch.as_ref().map(|(on, path)| {
                let inline = stack
                    .get(path)
                    .is_some_and(|layer| layer.source == SettingsSource::Flag)
                    && dsh_files::settings::inline_settings(path).is_some();
                (
                    *on,
                    if inline {
                        "--settings".into()
                    } else {
                        path.clone()
                    },
                )
            })
        };
        let decided = stack.hook_switches();
        let managed_disable = named(&decided.managed_disable);
        let managed_only = named(&decided.managed_only);
        let other_disable = named(&decided.other_disable);
        for file in files {
            if file.source != SettingsSource::Managed
                && file.keys().allow_managed_hooks_only != Field::Absent
            {
                notices.push(format!(
                "allowManagedHooksOnly in {} is ignored (it is honoured only in managed settings)",
                file.path.display()
            ));
            }
        }
        let mut allowed_urls: Option<Vec<String>> = None;
        for file in files {
            if let Some(list) = file.keys().allowed_http_hook_urls.valid() {
                let urls = allowed_urls.get_or_insert_with(Vec::new);
                urls.extend(list.iter().filter_map(Field::as_str).map(str::to_owned));
            }
        }

        let switches = Switches {
            managed_disable,
            other_disable,
            managed_only,
            allowed_urls,
        };
        (switches, held_back)
    }

    /// Gives every handler its status, most decisive reason first, and
    /// notes what never runs.
    fn set_statuses(&self, handlers: &mut [HookHandler], notices: &mut Vec<String>) {
        let Switches {
            managed_disable,
            other_disable,
            managed_only,
            allowed_urls,
        } = self;
        // Statuses, most decisive reason first.
        let mut unsupported_types: Vec<(String, usize, String)> = Vec::new();
        let mut unfired: Vec<(HookEvent, usize)> = Vec::new();
        for handler in handlers.iter_mut() {
            let managed = handler.source == SettingsSource::Managed;
            handler.status = if let Some((true, path)) = &managed_disable {
                HandlerStatus::disabled(format!("disableAllHooks in {}", path.display()))
            } else if let (Some((true, path)), false) = (&managed_only, managed) {
                HandlerStatus::disabled(format!("allowManagedHooksOnly in {}", path.display()))
            } else if let (Some((true, path)), false) = (&other_disable, managed) {
                HandlerStatus::disabled(format!("disableAllHooks in {}", path.display()))
            } else if let HandlerKind::Unsupported { kind } = &handler.kind {
                match unsupported_types.iter_mut().find(|(k, _, _)| k == kind) {
                    Some(entry) => entry.1 += 1,
                    None => unsupported_types.push((kind.clone(), 1, handler.origin.clone())),
                }
                HandlerStatus::unsupported(format!("dsh cannot run `{kind}` hooks"))
            } else if let Some(event) = handler.event {
                match event.support() {
                    EventSupport::Fired => match (&handler.kind, &allowed_urls) {
                        (HandlerKind::Http { url, .. }, Some(allowed))
                            if !allowed.iter().any(|pattern| url_allowed(pattern, url)) =>
                        {
                            HandlerStatus::disabled(format!("{url} is not in allowedHttpHookUrls"))
                        }
                        _ => HandlerStatus::Active,
                    },
                    EventSupport::NotFired(why) => {
                        match unfired.iter_mut().find(|(e, _)| *e == event) {
                            Some(entry) => entry.1 += 1,
                            None => unfired.push((event, 1)),
                        }
                        HandlerStatus::unsupported(format!("dsh does not fire {event}: {why}"))
                    }
                }
            } else {
                HandlerStatus::unsupported(format!("unknown event {}", handler.event_name))
            };
        }
        for (kind, count, origin) in unsupported_types {
            notices.push(format!(
            "dsh cannot run `{kind}` hooks ({count} configured, first at {origin}); they never run"
        ));
        }
        for (event, count) in unfired {
            if let EventSupport::NotFired(why) = event.support() {
                notices.push(format!(
                    "{count} {event} hook(s) configured, but dsh does not fire {event} ({why})"
                ));
            }
        }
        if let Some((true, path)) = &managed_disable {
            notices.push(format!(
                "all hooks disabled by disableAllHooks in {}",
                path.display()
            ));
        } else if let Some((true, path)) = &other_disable {
            notices.push(format!(
                "non-managed hooks disabled by disableAllHooks in {}",
                path.display()
            ));
        }
    }
}

/// The handlers one settings (or plugin hooks) file configures.
fn file_handlers(
    file: &SettingsFile,
    notices: &mut Vec<String>,
) -> Result<Vec<HookHandler>, ConfigError> {
    let mut handlers = Vec::new();
    {
        let hooks = match &file.settings.hooks {
            Field::Absent => return Ok(handlers),
            Field::Valid(hooks) => hooks,
            Field::Invalid { .. } => {
                notices.push(format!(
                    "`hooks` in {} is not an object; ignored",
                    file.path.display()
                ));
                return Ok(handlers);
            }
        };
        for (event_name, groups) in hooks.iter() {
            let event = HookEvent::parse(event_name);
            if event.is_none() {
                notices.push(format!(
                    "unknown hook event `{event_name}` in {}; accepted but never fired",
                    file.path.display()
                ));
            }
            let Some(groups) = groups.valid() else {
                notices.push(format!(
                    "hooks.{event_name} in {} is not an array; ignored",
                    file.path.display()
                ));
                continue;
            };
            for (group_index, group) in groups.iter().enumerate() {
                let group: GroupWire = group.valid().cloned().unwrap_or_default();
                let matcher = match &group.matcher {
                    Field::Absent => None,
                    Field::Invalid { .. } if group.matcher.is_null() => None,
                    Field::Valid(pattern) => Some(pattern.clone()),
                    Field::Invalid { written: other, .. } => {
                        notices.push(format!(
                            "{}#hooks.{event_name}[{group_index}].matcher is not a string ({other}); group ignored",
                            file.path.display()
                        ));
                        continue;
                    }
                };
                // Events that ignore matchers (and events dsh never fires)
                // never compile theirs, as Claude Code: an odd pattern there
                // must not stop a session Claude Code would run.
                let compiled = if event.is_some_and(HookEvent::supports_matcher) {
                    Matcher::compile(matcher.as_deref()).map_err(|error| {
                        ConfigError::InvalidMatcher {
                            path: file.path.clone(),
                            event: event_name.clone(),
                            pattern: error.pattern,
                            message: error.message,
                        }
                    })?
                } else {
                    Matcher::All
                };
                let Some(list) = group.hooks.valid() else {
                    notices.push(format!(
                        "{}#hooks.{event_name}[{group_index}] has no `hooks` array; ignored",
                        file.path.display()
                    ));
                    continue;
                };
                for (handler_index, raw) in list.iter().enumerate() {
                    let field = format!("hooks.{event_name}[{group_index}].hooks[{handler_index}]");
                    let origin = format!("{}#{field}", file.path.display());
                    match parse_handler(raw, &file.path, &field, notices)? {
                        Some((kind, timeout, if_rule)) => handlers.push(HookHandler {
                            event_name: event_name.clone(),
                            event,
                            matcher: matcher.clone(),
                            compiled: compiled.clone(),
                            kind,
                            timeout,
                            if_rule,
                            source: file.source,
                            file: file.path.clone(),
                            origin,
                            status: HandlerStatus::Active,
                            plugin: file.plugin.clone(),
                            agent: None,
                        }),
                        None => continue,
                    }
                }
            }
        }
    }

    Ok(handlers)
}

fn url_allowed(pattern: &str, url: &str) -> bool {
    crate::matcher::wildcard(pattern, url)
}

impl ClaudeConfig {
    /// Start-up notices: unknown events, events dsh does not fire, handler
    /// types it cannot honour, ignored entries, disabled hooks.
    pub fn notices(&self) -> Vec<String> {
        self.notices.clone()
    }

    /// Every configured handler, in configuration order.
    pub fn handlers(&self) -> &[HookHandler] {
        &self.handlers
    }

    /// Switches off the active handlers whose `origin` is listed: they stay
    /// in [`ClaudeConfig::entries`] as `disabled: <reason>` and never run.
    /// dsh's trust rules use this for project hooks the user has not trusted.
    pub fn disable_origins(&mut self, origins: &[String], reason: &str) {
        for handler in &mut self.handlers {
            if handler.status == HandlerStatus::Active && origins.contains(&handler.origin) {
                handler.status = HandlerStatus::Excluded(reason.to_owned());
            }
        }
    }

    /// Rows for `dsh hooks list`.
    pub fn entries(&self) -> Vec<HookEntry> {
        self.handlers.iter().map(HookHandler::entry).collect()
    }

    /// The active handlers for `event` whose matcher accepts `subject`
    /// (`None` for events without matcher support), deduplicated on the
    /// command, in configuration order.
    pub fn select(&self, event: HookEvent, subject: Option<&str>) -> Vec<&HookHandler> {
        dsh_hooks::dedup(self.candidates(event, subject), |h| Some(h.dedup_key()))
    }

    /// The active handlers for `event` whose matcher accepts `subject`, in
    /// configuration order, before deduplication.
    pub fn candidates(&self, event: HookEvent, subject: Option<&str>) -> Vec<&HookHandler> {
        self.candidates_in(event, subject, None)
    }

    /// [`ClaudeConfig::candidates`] for a firing inside the subagent of
    /// type `agent` (`None`: the session's own loop): a custom agent's
    /// frontmatter hooks are candidates only inside that agent.
    pub fn candidates_in(
        &self,
        event: HookEvent,
        subject: Option<&str>,
        agent: Option<&str>,
    ) -> Vec<&HookHandler> {
        let subject = if event.supports_matcher() {
            subject
        } else {
            None
        };
        self.handlers
            .iter()
            .filter(|h| h.event == Some(event) && h.status == HandlerStatus::Active)
            .filter(|h| h.agent.is_none() || h.agent.as_deref() == agent)
            .filter(|h| h.matches(subject))
            .collect()
    }
}

pub use dsh_hooks::position::without_position;
