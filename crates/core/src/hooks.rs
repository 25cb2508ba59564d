//! Where a session's hooks come from and how the dialects' bridges are
//! loaded (Claude Code, then Codex, then Gemini CLI: the registration order
//! is the order their hooks run in on a shared seam).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use dsh_hook_runner::{HookRunner, RunnerConfig};
use dsh_hooks::project_settings::{HeldBack, ProjectSettings};
use dsh_hooks_claude::{ClaudeConfig, ClaudeDiscovery};
use dsh_hooks_codex::{CodexConfig, CodexDiscovery, TrustPolicy};
use dsh_hooks_gemini::GeminiConfig;
use dsh_protocol::EventBody;
use dsh_seams::Plugin;

use crate::{Env, Result, ResultExt as _};

/// Where hooks come from, as the user's environment and flags say.
#[derive(Debug, Clone)]
pub struct HookSources {
    /// The project directory (session cwd).
    pub cwd: PathBuf,
    /// `$HOME`.
    pub home: PathBuf,
    /// dsh's home (`$DSH_HOME`, default `~/.dsh`).
    pub dsh_home: PathBuf,
    /// Extra Claude Code settings files (`--settings`).
    pub claude_settings: Vec<PathBuf>,
    /// Claude Code plugins loaded for this run only (`--plugin-dir`).
    pub claude_plugin_dirs: Vec<PathBuf>,
    /// Whether hooks nobody trusted yet still run (replay: yes, as the
    /// contract says; interactive sessions apply dsh's trust rules).
    pub run_untrusted: bool,
    /// Origins (`<file>#hooks.<Event>[i].hooks[j]`) of hooks that must not
    /// run: project hooks the user has not trusted (see `trust.rs`). They
    /// are loaded, listed as disabled, and never run.
    pub excluded_hooks: Vec<String>,
    /// The session's permission mode as hooks see it (`permission_mode`);
    /// `None` keeps the bridges' defaults.
    pub permission_mode: Option<dsh_permissions::Mode>,
    /// The session's MCP servers (name, source) for the Claude Code bridge's
    /// `mcp_server` key.
    pub mcp_servers: Vec<dsh_hooks_claude::McpServerTag>,
    /// `$CODEX_HOME` (default `~/.codex`).
    pub codex_home: PathBuf,
    /// `GEMINI_CLI_TRUST_WORKSPACE=true`: Gemini CLI trusts the project
    /// folder whatever `~/.gemini/trustedFolders.json` says.
    pub gemini_trust_workspace: bool,
    /// Whether the project layers' settings that change how the user's
    /// own hooks and tools run apply (a trusted workspace, replay, the hook
    /// tooling) or wait for trust (sessions in an untrusted workspace).
    pub project_settings: ProjectSettings,
    /// Hooks an application registered through the Claude Agent SDK
    /// (`dsh-sdk`): they join the Claude Code bridge ahead of the settings
    /// hooks. Trust does not apply: the application that drives the
    /// session registered them.
    pub sdk_hooks: Option<dsh_hooks_claude::SdkHookSet>,
}

impl HookSources {
    /// From the process environment (read once, through [`Env`]).
    pub fn from_env(cwd: PathBuf, claude_settings: Vec<PathBuf>) -> Self {
        HookSources::new(&Env::from_process(), cwd, claude_settings)
    }

    /// From `env`: an empty `DSH_HOME` or `CODEX_HOME` is unset.
    pub fn new(env: &Env, cwd: PathBuf, claude_settings: Vec<PathBuf>) -> Self {
        HookSources {
            cwd,
            home: env.home_or_root(),
            dsh_home: env.dsh_home_or_default(),
            codex_home: env.codex_home(),
            gemini_trust_workspace: env.var("GEMINI_CLI_TRUST_WORKSPACE").as_deref()
                == Some("true"),
            claude_settings,
            claude_plugin_dirs: Vec::new(),
            run_untrusted: true,
            excluded_hooks: Vec::new(),
            permission_mode: None,
            mcp_servers: Vec::new(),
            project_settings: ProjectSettings::Apply,
            sdk_hooks: None,
        }
    }

    /// The Claude Code bridge's discovery for these sources.
    pub fn claude_discovery(&self) -> ClaudeDiscovery {
        let mut discovery =
            ClaudeDiscovery::new(self.cwd.clone(), self.home.clone(), &self.dsh_home);
        discovery.extra_settings = self.claude_settings.clone();
        discovery.plugin_dirs = self.claude_plugin_dirs.clone();
        discovery.project_settings = self.project_settings;
        discovery
    }
}

/// Every dialect's hook configuration, parsed once per session: trust is
/// decided on these parsed hooks ([`crate::trust::hooks_of`]) and the same
/// parsed hooks run ([`plugins_from`]), so a file changed while the trust
/// question is on screen is never run unhashed.
#[derive(Debug, Clone)]
pub struct HookConfigs {
    /// Claude Code's settings layers, plugins and agents.
    pub claude: ClaudeConfig,
    /// Codex's config layers.
    pub codex: CodexConfig,
    /// Gemini CLI's settings layers.
    pub gemini: GeminiConfig,
}

impl HookConfigs {
    /// Reads every dialect's configuration for `sources`.
    pub fn load(sources: &HookSources) -> Result<HookConfigs> {
        let claude = dsh_hooks_claude::load(&sources.claude_discovery())
            .context("cannot load the Claude Code hook configuration")?;
        let codex = dsh_hooks_codex::load(&sources.codex_discovery())
            .context("cannot load the Codex hook configuration")?;
        let gemini = dsh_hooks_gemini::load(&sources.gemini_discovery())
            .context("cannot load the Gemini CLI hook configuration")?;
        Ok(HookConfigs {
            claude,
            codex,
            gemini,
        })
    }

    /// The project settings every dialect left out (the workspace is not
    /// trusted), with the dialect that reads them.
    pub fn held_back(&self) -> Vec<(dsh_protocol::Dialect, HeldBack)> {
        let tag = |dialect: dsh_protocol::Dialect, list: &[HeldBack]| {
            list.iter()
                .cloned()
                .map(move |held| (dialect, held))
                .collect::<Vec<_>>()
        };
        let mut all = tag(dsh_protocol::Dialect::Claude, &self.claude.held_back);
        all.extend(tag(dsh_protocol::Dialect::Codex, &self.codex.held_back));
        all.extend(tag(dsh_protocol::Dialect::Gemini, &self.gemini.held_back));
        all
    }
}

/// The hook plugins and the start-up notices their configuration produced.
pub struct LoadedHooks {
    /// Plugins in registration order (Claude Code, then Codex, then Gemini).
    pub plugins: Vec<Arc<dyn Plugin>>,
    /// Notices for the session header and stderr.
    pub notices: Vec<String>,
    /// The runner every hook process goes through; `kill_all` on exit.
    pub runner: HookRunner,
}

/// Discovers and loads every hook configuration. An unreadable configuration
/// is an error: dsh does not start a session on a config it cannot read.
pub fn load_hooks(sources: &HookSources) -> Result<LoadedHooks> {
    load_hooks_with(sources, scrubbed_env(&sources.dsh_home))
}

/// [`load_hooks`] with the variables to scrub already known.
pub fn load_hooks_with(sources: &HookSources, scrub_env: Vec<String>) -> Result<LoadedHooks> {
    plugins_from(HookConfigs::load(sources)?, sources, scrub_env)
}

/// The hook plugins of configurations already parsed (the session's one
/// parse), with the origins `sources` excludes disabled. Fails only when
/// an SDK's hook registrations cannot be added.
pub fn plugins_from(
    configs: HookConfigs,
    sources: &HookSources,
    scrub_env: Vec<String>,
) -> Result<LoadedHooks> {
    let runner = HookRunner::new(RunnerConfig {
        scrub_env,
        ..RunnerConfig::default()
    });
    let mut plugins: Vec<Arc<dyn Plugin>> = Vec::new();
    let mut notices = Vec::new();
    let HookConfigs {
        mut claude,
        mut codex,
        mut gemini,
    } = configs;
    for (dialect, held) in [
        ("claude", &claude.held_back),
        ("codex", &codex.held_back),
        ("gemini", &gemini.held_back),
    ] {
        for held in held {
            notices.push(format!(
                "{dialect}: {} in {} is not applied: {}",
                held.key,
                held.file.display(),
                dsh_hooks::project_settings::HELD_BACK_WHY
            ));
        }
    }
    claude.disable_origins(&sources.excluded_hooks, dsh_trust::NOT_TRUSTED);
    if let Some(mode) = sources.permission_mode {
        claude.options.permission_mode = mode.hook_name().to_owned();
    }
    claude.options.mcp_servers = sources.mcp_servers.clone();
    if let Some(sdk) = &sources.sdk_hooks {
        let sdk_notices = claude
            .add_sdk_hooks(&sdk.hooks, std::sync::Arc::clone(&sdk.transport))
            .context("cannot register the SDK's hooks")?;
        notices.extend(
            sdk_notices
                .into_iter()
                .map(|notice| format!("sdk: {notice}")),
        );
    }
    notices.extend(
        claude
            .notices()
            .into_iter()
            .map(|notice| format!("claude: {notice}")),
    );
    // Custom agents (`.claude/agents/*.md`) reach the `agent` tool through
    // the bridge, so it is registered for them too.
    if !claude.handlers().is_empty() || !claude.agents.is_empty() {
        plugins.push(claude.into_plugin(runner.clone()));
    }

    codex.disable_origins(&sources.excluded_hooks, dsh_trust::NOT_TRUSTED);
    notices.extend(
        codex
            .notices()
            .into_iter()
            .map(|notice| format!("codex: {notice}")),
    );
    if !codex.is_empty() {
        let policy = if sources.run_untrusted {
            TrustPolicy::RunAll
        } else {
            TrustPolicy::TrustedOnly
        };
        plugins.push(codex.into_plugin(runner.clone(), policy));
    }

    gemini.disable_origins(&sources.excluded_hooks, dsh_trust::NOT_TRUSTED);
    notices.extend(
        gemini
            .notices()
            .into_iter()
            .map(|notice| format!("gemini: {notice}")),
    );
    if gemini.handlers().iter().any(|handler| handler.is_active()) {
        plugins.push(gemini.into_plugin(runner.clone()));
    }
    Ok(LoadedHooks {
        plugins,
        notices,
        runner,
    })
}

impl HookSources {
    /// The Gemini bridge's discovery for these sources.
    pub fn gemini_discovery(&self) -> dsh_hooks_gemini::GeminiDiscovery {
        let mut discovery =
            dsh_hooks_gemini::GeminiDiscovery::new(self.cwd.clone(), self.home.clone());
        discovery.trust_workspace = self.gemini_trust_workspace;
        discovery.project_settings = self.project_settings;
        discovery
    }

    /// The Codex bridge's discovery for these sources (`CODEX_HOME` as
    /// [`Env`] read it).
    pub fn codex_discovery(&self) -> CodexDiscovery {
        let mut discovery = CodexDiscovery::new(self.cwd.clone(), self.home.clone());
        discovery.codex_home = Some(self.codex_home.clone());
        discovery.project_settings = self.project_settings;
        discovery
    }
}

/// The variables no hook or tool command may see: dsh's API key variables
/// and the provider's configured `api_key_env`. An unreadable provider
/// configuration leaves the defaults (the model set-up reports it).
pub fn scrubbed_env(dsh_home: &Path) -> Vec<String> {
    let env = Env::from_process();
    let config =
        crate::DshConfig::load(dsh_home).unwrap_or_else(|_| crate::DshConfig::empty(dsh_home));
    scrubbed_env_for(&env, &config)
}

/// [`scrubbed_env`] for an environment and configuration already read.
pub fn scrubbed_env_for(env: &Env, config: &crate::DshConfig) -> Vec<String> {
    let mut names = dsh_hook_runner::default_scrubbed_env();
    if let Ok(settings) = config.provider(env, None)
        && !names.contains(&settings.api_key_env)
    {
        names.push(settings.api_key_env);
    }
    names
}

/// The system prompt every request starts with.
pub fn system_prompt(cwd: &Path) -> String {
    format!(
        "You are dsh, a coding agent working in a terminal. The project is at {}. \
         Use the tools to inspect and change files and to run commands; answer concisely.",
        cwd.display()
    )
}

/// The session header.
pub fn header(session_id: &str, cwd: &Path, notices: Vec<String>) -> EventBody {
    EventBody::SessionHeader {
        session_id: session_id.to_owned(),
        cwd: cwd.display().to_string(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        notices,
        provider_api: None,
    }
}
