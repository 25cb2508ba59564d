//! Where a session's hooks come from and how the dialects' bridges are
//! loaded: every registered dialect ([`crate::dialects::registry`]), in
//! registration order (the order their hooks run in on a shared seam).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use dsh_files::ConfigFiles;
use dsh_hook_runner::{HookRunner, RunnerConfig};
use dsh_hooks::project_settings::{HeldBack, ProjectSettings};
use dsh_hooks::registry::{
    Attachments, DialectConfig, DialectSources, McpServerTag, Registry, SessionHooks,
};
use dsh_protocol::{EventBody, SessionHeaderEvent};
use dsh_seams::Plugin;

use crate::{Env, Result};

/// Where hooks come from, as the user's environment and flags say. What a
/// single dialect needs beyond these is keyed by its id ([`Attachments`])
/// or read from the environment snapshot by the dialect itself.
#[derive(Debug, Clone)]
pub struct HookSources {
    /// The project directory (session cwd).
    pub cwd: PathBuf,
    /// `$HOME`.
    pub home: PathBuf,
    /// dsh's home (`$DSH_HOME`, default `~/.dsh`).
    pub dsh_home: PathBuf,
    /// The environment, read once (`CODEX_HOME`,
    /// `GEMINI_CLI_TRUST_WORKSPACE`, … are the dialects' to read).
    pub env: Env,
    /// Settings files given on the command line (`--settings`).
    pub settings_files: Vec<PathBuf>,
    /// Plugins loaded for this run only (`--plugin-dir`).
    pub plugin_dirs: Vec<PathBuf>,
    /// Whether hooks nobody trusted yet still run (replay: yes, as the
    /// contract says; interactive sessions apply dsh's trust rules).
    pub run_untrusted: bool,
    /// Origins (`<file>#hooks.<Event>[i].hooks[j]`) of hooks that must not
    /// run: project hooks the user has not trusted (see `trust.rs`). They
    /// are loaded, listed as disabled, and never run.
    pub excluded_hooks: Vec<String>,
    /// The session's permission mode as hooks see it (`permission_mode`,
    /// and whether the flags asked for it); `None` keeps the bridges'
    /// defaults (the hook tools without `--permission-mode`).
    pub permission_mode: Option<crate::perms::SessionMode>,
    /// The session's MCP servers (name, source), for the hook payloads that
    /// name them.
    pub mcp_servers: Vec<McpServerTag>,
    /// Whether the project layers' settings that change how the user's
    /// own hooks and tools run apply (a trusted workspace, replay, the hook
    /// tooling) or wait for trust (sessions in an untrusted workspace).
    pub project_settings: ProjectSettings,
    /// What a front end hands to one dialect, keyed by its id (the Claude
    /// Agent SDK's registered hooks, for `claude`). Trust does not apply to
    /// them: the application that drives the session registered them.
    pub attachments: Attachments,
    /// The reader every configuration read goes through while
    /// [`crate::SessionSpec::resolve`] runs (each file read from disk once,
    /// every consumer sees the same text); `None` elsewhere: each load
    /// reads the files afresh (the terminal's `/hooks` after an edit).
    pub files: Option<ConfigFiles>,
    /// The Claude Code settings layer stack [`crate::SessionSpec::resolve`]
    /// built through `files` (`None` with `files`: loads build their own).
    pub settings_stack: Option<dsh_files::settings::SettingsStack>,
}

impl HookSources {
    /// From `env`: an empty `DSH_HOME` or `CODEX_HOME` is unset.
    pub fn new(env: &Env, cwd: PathBuf, settings_files: Vec<PathBuf>) -> Self {
        HookSources {
            cwd,
            home: env.home_or_root(),
            dsh_home: env.dsh_home_or_default(),
            env: env.clone(),
            settings_files,
            plugin_dirs: Vec::new(),
            run_untrusted: true,
            excluded_hooks: Vec::new(),
            permission_mode: None,
            mcp_servers: Vec::new(),
            project_settings: ProjectSettings::Apply,
            attachments: Attachments::default(),
            files: None,
            settings_stack: None,
        }
    }

    /// The reader for one load: the resolution's, or a fresh one.
    pub fn reader(&self) -> ConfigFiles {
        self.files.clone().unwrap_or_default()
    }

    /// What every dialect's discovery reads.
    pub fn dialect_sources(&self) -> DialectSources {
        DialectSources {
            cwd: self.cwd.clone(),
            home: self.home.clone(),
            dsh_home: self.dsh_home.clone(),
            env: self.env.vars().clone(),
            project_settings: self.project_settings,
            settings_files: self.settings_files.clone(),
            plugin_dirs: self.plugin_dirs.clone(),
            files: self.reader(),
            settings_stack: self.settings_stack.clone(),
        }
    }
}

/// Every dialect's hook configuration, parsed once per session, in
/// registration order: trust is decided on these parsed hooks
/// ([`crate::trust::hooks_of`]) and the same parsed hooks run
/// (`plugins_from`, in [`crate::assemble`]), so a file changed while the
/// trust question is on screen is never run unhashed.
#[derive(Debug, Clone)]
pub struct HookConfigs {
    configs: Vec<Box<dyn DialectConfig>>,
}

impl HookConfigs {
    /// Reads every registered dialect's configuration for `sources`.
    pub fn load(sources: &HookSources) -> Result<HookConfigs> {
        HookConfigs::load_from(&crate::dialects::registry(), sources)
    }

    /// [`HookConfigs::load`] over `registry`.
    pub fn load_from(registry: &Registry, sources: &HookSources) -> Result<HookConfigs> {
        let configs = registry
            .load(&sources.dialect_sources())
            .map_err(|error| crate::Error::Other(Box::new(error)))?;
        Ok(HookConfigs { configs })
    }

    /// Each dialect's configuration, in registration order.
    pub fn iter(&self) -> impl Iterator<Item = &dyn DialectConfig> {
        self.configs.iter().map(|config| config.as_ref())
    }

    /// The configuration of the dialect with this id.
    pub fn get(&self, id: &str) -> Option<&dyn DialectConfig> {
        self.iter().find(|config| config.dialect().as_str() == id)
    }

    /// The project settings every dialect left out (the workspace is not
    /// trusted), with the dialect that reads them.
    pub fn held_back(&self) -> Vec<(dsh_protocol::Dialect, HeldBack)> {
        self.iter()
            .flat_map(|config| {
                let dialect = config.dialect();
                config
                    .held_back()
                    .into_iter()
                    .map(move |held| (dialect, held))
            })
            .collect()
    }

    /// Every dialect's start-up notices, prefixed with its id.
    pub fn notices(&self) -> Vec<String> {
        self.iter()
            .flat_map(|config| {
                let id = config.dialect().as_str();
                config
                    .notices()
                    .into_iter()
                    .map(move |notice| format!("{id}: {notice}"))
            })
            .collect()
    }
}

/// The hook plugins and the start-up notices their configuration produced.
pub struct LoadedHooks {
    /// Plugins in registration order (Claude Code, then Codex, then Gemini).
    pub plugins: Vec<Arc<dyn Plugin>>,
    /// Which dialect each plugin of [`LoadedHooks::plugins`] belongs to.
    pub dialects: Vec<dsh_protocol::Dialect>,
    /// Notices for the session header and stderr.
    pub notices: Vec<String>,
    /// The runner every hook process goes through; `kill_all` on exit.
    pub runner: HookRunner,
}

/// Python reads a module's bytecode from `__pycache__` beside it when the
/// header's source time and size match, whatever the source says: a
/// project could plant bytecode that runs instead of the trusted module it
/// stands beside. Hooks keep their bytecode under dsh's home instead,
/// unless the user chose a place (`PYTHONPYCACHEPREFIX` already set).
fn python_cache(dsh_home: &std::path::Path) -> Vec<(String, String)> {
    const PREFIX: &str = "PYTHONPYCACHEPREFIX";
    if std::env::var_os(PREFIX).is_some() {
        return Vec::new();
    }
    vec![(
        PREFIX.to_owned(),
        dsh_home.join("pycache").display().to_string(),
    )]
}

/// The hook plugins of configurations already parsed (the session's one
/// parse), with the origins `sources` excludes disabled. Fails only when
/// a dialect cannot build its plugin (an SDK's hook registrations).
pub fn plugins_from(
    configs: HookConfigs,
    sources: &HookSources,
    scrub_env: Vec<String>,
    launch_check: Arc<dyn dsh_hook_runner::LaunchCheck>,
) -> Result<LoadedHooks> {
    let runner = HookRunner::new(RunnerConfig {
        scrub_env,
        base_env: python_cache(&sources.dsh_home),
        ..RunnerConfig::default()
    })
    .with_launch_check(launch_check);
    let mut plugins: Vec<Arc<dyn Plugin>> = Vec::new();
    let mut dialects = Vec::new();
    let mut notices: Vec<String> = configs
        .held_back()
        .into_iter()
        .map(|(dialect, held)| {
            format!(
                "{}: {} in {} is not applied: {}",
                dialect.as_str(),
                held.key,
                held.file.display(),
                dsh_hooks::project_settings::HELD_BACK_WHY
            )
        })
        .collect();
    let session = SessionHooks {
        runner: runner.clone(),
        run_untrusted: sources.run_untrusted,
        permission_mode: sources.permission_mode.map(|mode| mode.mode().hook_name()),
        permission_mode_requested: sources
            .permission_mode
            .is_some_and(crate::perms::SessionMode::requested),
        mcp_servers: &sources.mcp_servers,
        attachments: &sources.attachments,
    };
    for mut config in configs.configs {
        config.disable_origins(&sources.excluded_hooks, dsh_trust::NOT_TRUSTED);
        let dialect = config.dialect();
        let own: Vec<String> = config
            .notices()
            .into_iter()
            .map(|notice| format!("{}: {notice}", dialect.as_str()))
            .collect();
        let built = config
            .into_plugin(&session)
            .map_err(|error| crate::Error::Other(Box::new(error)))?;
        notices.extend(built.notices);
        notices.extend(own);
        if let Some(plugin) = built.plugin {
            plugins.push(plugin);
            dialects.push(dialect);
        }
    }
    Ok(LoadedHooks {
        plugins,
        dialects,
        notices,
        runner,
    })
}

/// The variables no hook or tool command may see: dsh's API key variables
/// and the provider's configured `api_key_env`. An unreadable provider
/// configuration leaves the defaults (the model set-up reports it).
///
/// For an environment and configuration already read (nothing here reads
/// the process environment).
pub fn scrubbed_env_for(env: &Env, config: &crate::DshConfig) -> Vec<String> {
    let mut names = dsh_hook_runner::default_scrubbed_env();
    if let Ok(settings) = config.provider(env, None)
        && !names.contains(&settings.api_key_env)
    {
        names.push(settings.api_key_env);
    }
    names
}

/// The fixed system prompt of `dsh replay`: deterministic, so fixture
/// request snapshots hold. Live sessions render [`crate::system_prompt`].
pub fn system_prompt(cwd: &Path) -> String {
    format!(
        "You are dsh, a coding agent working in a terminal. The project is at {}. \
         Use the tools to inspect and change files and to run commands; answer concisely.",
        cwd.display()
    )
}

/// The session header.
pub fn header(session_id: &str, cwd: &Path, notices: Vec<String>) -> EventBody {
    EventBody::SessionHeader(SessionHeaderEvent {
        session_id: session_id.to_owned(),
        cwd: cwd.display().to_string(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        notices,
        provider_api: None,
    })
}
