//! Assembling a session: tools, hook bridges, the log, the agent.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use dsh_agent::{Agent, AgentParts, Observers};
use dsh_model::Model;
use dsh_protocol::EventBody;
use dsh_seams::{Plugin, SessionEnv, SessionInfo};
use dsh_session::SessionLog;
use dsh_hook_runner::{HookRunner, RunnerConfig};
use dsh_hooks_claude::ClaudeDiscovery;
use dsh_hooks_codex::{CodexDiscovery, TrustPolicy};

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
    /// Whether hooks nobody trusted yet still run (replay: yes, as the
    /// contract says; interactive sessions apply dsh's trust rules).
    pub run_untrusted: bool,
}

impl HookSources {
    /// From the process environment.
    pub fn from_env(cwd: PathBuf, claude_settings: Vec<PathBuf>) -> Self {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/"));
        let dsh_home = std::env::var_os("DSH_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".dsh"));
        HookSources {
            cwd,
            home,
            dsh_home,
            claude_settings,
            run_untrusted: true,
        }
    }
}

/// The hook plugins and the start-up notices their configuration produced.
pub struct LoadedHooks {
    /// Plugins in registration order (Claude Code, then Codex).
    pub plugins: Vec<Arc<dyn Plugin>>,
    /// Notices for the session header and stderr.
    pub notices: Vec<String>,
    /// The runner every hook process goes through; `kill_all` on exit.
    pub runner: HookRunner,
}

/// Discovers and loads every hook configuration. An unreadable configuration
/// is an error: dsh does not start a session on a config it cannot read.
pub fn load_hooks(sources: &HookSources) -> anyhow::Result<LoadedHooks> {
    let runner = HookRunner::new(RunnerConfig::default());
    let mut plugins: Vec<Arc<dyn Plugin>> = Vec::new();
    let mut notices = Vec::new();

    let mut claude_discovery =
        ClaudeDiscovery::new(sources.cwd.clone(), sources.home.clone(), &sources.dsh_home);
    claude_discovery.extra_settings = sources.claude_settings.clone();
    let claude = dsh_hooks_claude::load(&claude_discovery)
        .context("cannot load the Claude Code hook configuration")?;
    notices.extend(claude.notices().into_iter().map(|notice| format!("claude: {notice}")));
    if !claude.handlers().is_empty() {
        plugins.push(claude.into_plugin(runner.clone()));
    }

    let codex = dsh_hooks_codex::load(&CodexDiscovery::from_env(
        sources.cwd.clone(),
        sources.home.clone(),
    ))
    .context("cannot load the Codex hook configuration")?;
    notices.extend(codex.notices().into_iter().map(|notice| format!("codex: {notice}")));
    if !codex.is_empty() {
        let policy = if sources.run_untrusted {
            TrustPolicy::RunAll
        } else {
            TrustPolicy::TrustedOnly
        };
        plugins.push(codex.into_plugin(runner.clone(), policy));
    }
    Ok(LoadedHooks {
        plugins,
        notices,
        runner,
    })
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
    }
}

/// Everything needed to build an agent for a new session.
pub struct NewSession {
    pub session_id: String,
    pub cwd: PathBuf,
    pub log: SessionLog,
    pub hooks: LoadedHooks,
    pub model: Arc<dyn Model>,
    pub interactive: bool,
    pub max_steps: u64,
    pub observers: Observers,
}

/// Builds the agent.
pub fn agent(session: NewSession) -> anyhow::Result<Agent> {
    let log_path = session.log.path().map(Path::to_path_buf);
    let registry = dsh_agent::builtin_registry(&session.hooks.plugins);
    let info = SessionInfo {
        session_id: session.session_id,
        cwd: session.cwd.clone(),
        model: session.model.name(),
        log_path,
        env: SessionEnv::default(),
        interactive: session.interactive,
    };
    Ok(Agent::new(AgentParts {
        log: session.log,
        session: info,
        registry,
        model: session.model,
        system_prompt: system_prompt(&session.cwd),
        max_steps: session.max_steps,
        observers: session.observers,
    }))
}

/// The current directory, canonicalized.
pub fn current_dir() -> anyhow::Result<PathBuf> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    Ok(cwd.canonicalize().unwrap_or(cwd))
}
