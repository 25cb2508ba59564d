//! Assembling a session: tools, hook bridges, the log, the agent.

use crate::stdio::errln;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use dsh_hook_runner::{HookRunner, RunnerConfig};
use dsh_hooks_claude::ClaudeDiscovery;
use dsh_hooks_codex::{CodexDiscovery, TrustPolicy};
use dsh_protocol::EventBody;
use std::io::Write as _;

use dsh_agent::{EventCallback, NoticeCallback};
use dsh_protocol::Event;
use dsh_seams::{NoticeLevel, Plugin, UserNotice};
use dsh_session::encode;

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
            claude_plugin_dirs: Vec::new(),
            run_untrusted: true,
            excluded_hooks: Vec::new(),
            permission_mode: None,
            mcp_servers: Vec::new(),
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
    let runner = HookRunner::new(RunnerConfig {
        scrub_env: scrubbed_env(&sources.dsh_home),
        ..RunnerConfig::default()
    });
    let mut plugins: Vec<Arc<dyn Plugin>> = Vec::new();
    let mut notices = Vec::new();

    let mut claude_discovery =
        ClaudeDiscovery::new(sources.cwd.clone(), sources.home.clone(), &sources.dsh_home);
    claude_discovery.extra_settings = sources.claude_settings.clone();
    claude_discovery.plugin_dirs = sources.claude_plugin_dirs.clone();
    let mut claude = dsh_hooks_claude::load(&claude_discovery)
        .context("cannot load the Claude Code hook configuration")?;
    claude.disable_origins(&sources.excluded_hooks, crate::trust::NOT_TRUSTED);
    if let Some(mode) = sources.permission_mode {
        claude.options.permission_mode = mode.hook_name().to_owned();
    }
    claude.options.mcp_servers = sources.mcp_servers.clone();
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

    let mut codex = dsh_hooks_codex::load(&CodexDiscovery::from_env(
        sources.cwd.clone(),
        sources.home.clone(),
    ))
    .context("cannot load the Codex hook configuration")?;
    codex.disable_origins(&sources.excluded_hooks, crate::trust::NOT_TRUSTED);
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
    Ok(LoadedHooks {
        plugins,
        notices,
        runner,
    })
}

/// The variables no hook or tool command may see: dsh's API key variables
/// and the provider's configured `api_key_env`. An unreadable provider
/// configuration leaves the defaults (the model set-up reports it).
pub(crate) fn scrubbed_env(dsh_home: &Path) -> Vec<String> {
    let mut names = dsh_hook_runner::default_scrubbed_env();
    if let Ok(settings) =
        dsh_provider::ProviderSettings::load(dsh_home, &|name| std::env::var(name).ok())
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
    }
}

/// The current directory, canonicalized.
pub fn current_dir() -> anyhow::Result<PathBuf> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    Ok(cwd.canonicalize().unwrap_or(cwd))
}

/// Writes one line to stdout and flushes it (stdout's own lock keeps
/// concurrent lines whole).
pub fn stdout_line(line: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{line}");
    let _ = stdout.flush();
}

/// Streams each appended session event to stdout as one JSON line.
pub fn stdout_events() -> EventCallback {
    Arc::new(|event: &Event| {
        if let Ok(line) = encode(event) {
            stdout_line(&line);
        }
    })
}

/// Prints user notices from plugins and hooks on stderr.
pub fn stderr_notices() -> NoticeCallback {
    Arc::new(|notice: &UserNotice| {
        let level = match notice.level {
            NoticeLevel::Info => "",
            NoticeLevel::Warning => "warning: ",
        };
        errln!("dsh: {level}[{}] {}", notice.source, notice.text);
    })
}
