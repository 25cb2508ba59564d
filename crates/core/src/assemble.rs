//! A resolved spec into a running session: hooks loaded, permissions after
//! them, MCP servers started, the log opened. Every front end starts its
//! sessions here.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use dsh_agent::{Agent, AgentParts, AutoCompact, Observers, ProjectContext};
use dsh_hook_runner::HookRunner;
use dsh_model::Model;
use dsh_permissions::PermissionsPlugin;
use dsh_seams::{Plugin, SessionEnv, SessionInfo, SessionStartSource};
use dsh_session::{LockWait, SessionLog, TornTail};
use dsh_tools::ApprovalService;

use crate::mcp::McpSession;
use crate::{Error, Result, ResultExt as _, SessionSpec, TrustPolicy};

/// The Codex bridge's notice for a project Codex does not trust.
const CODEX_UNTRUSTED: &str = "is not trusted in Codex";

/// Where the session's log goes.
pub enum LogTarget {
    /// A new log `<sessions dir>/<id>.jsonl` (a private directory).
    New {
        /// The session id.
        id: String,
        /// The directory holding session logs.
        dir: PathBuf,
        /// Whether to wait for another writer.
        wait: LockWait,
    },
    /// A stored log, reopened.
    Reopen {
        /// Its path.
        path: PathBuf,
        /// Whether to wait for another writer.
        wait: LockWait,
    },
    /// A log written to `writer` (replay `--out`), named by `path`.
    Writer {
        /// The session id.
        id: String,
        /// The file's path (for messages).
        path: PathBuf,
        /// Where the lines go.
        writer: Box<dyn dsh_session::LogWriter>,
    },
    /// A log in memory (replay to stdout, tests).
    InMemory {
        /// The session id.
        id: String,
    },
}

impl LogTarget {
    /// The id of the session a new log is made for (`None` for a reopened
    /// log, whose header has it).
    pub fn new_session_id(&self) -> Option<&str> {
        match self {
            LogTarget::New { id, .. }
            | LogTarget::Writer { id, .. }
            | LogTarget::InMemory { id } => Some(id),
            LogTarget::Reopen { .. } => None,
        }
    }
}

/// A session ready for a driver, before its agent exists: what a front end
/// needs to know about it (its id, directory, log, notices, permission
/// mode, servers, commands) through the methods below, and the few things
/// a front end adds (a last plugin, whether `ask_user_question` is
/// offered). [`crate::Session::from_assembled`] builds the agent over it.
pub struct Assembled {
    /// The session id.
    pub(crate) session_id: String,
    /// The project directory.
    pub(crate) cwd: PathBuf,
    /// The open log.
    pub(crate) log: SessionLog,
    /// How the session-start seam is told the session began.
    pub(crate) source: SessionStartSource,
    /// Hook bridges then the permission stage, in pipeline order.
    pub(crate) plugins: Vec<Arc<dyn Plugin>>,
    /// The runner every hook process goes through; `kill_all` on exit.
    pub(crate) runner: HookRunner,
    /// The permission stage, typed (approval answers add rules to it).
    pub(crate) permissions: Arc<PermissionsPlugin>,
    /// The running MCP servers; close them when the session ends.
    pub(crate) mcp: Arc<McpSession>,
    /// Instructions and custom commands.
    pub(crate) project: ProjectContext,
    /// Automatic compaction.
    pub(crate) auto_compact: AutoCompact,
    /// The start-up notices (hooks, then MCP), as in the log header.
    pub(crate) notices: Vec<String>,
    /// Lines worth stderr at start-up (discovery problems, failed servers).
    pub(crate) problems: Vec<String>,
    /// The hook bridges' own notices (the first part of `notices`).
    pub(crate) hook_notices: Vec<String>,
    /// The dialect of each hook bridge, in order: the first
    /// `hook_dialects.len()` entries of `plugins` are theirs.
    pub(crate) hook_dialects: Vec<dsh_protocol::Dialect>,
    /// A reopened log's incomplete last line, dropped.
    pub(crate) torn: Option<TornTail>,
    /// The built-in tools the session offers (`--tools`).
    pub(crate) tools: dsh_tools::builtin::BuiltinSelection,
    /// The set-up run the flags ask for (`--init`, `--maintenance`).
    pub(crate) setup: Option<dsh_seams::SetupTrigger>,
    /// Whether `web_fetch` is offered (`[tools] web_fetch`).
    pub(crate) web_fetch: bool,
    /// Whether `ask_user_question` is offered. `-p` turns it off: nobody
    /// is there to answer, and Claude Code does not offer it there
    /// (`ev_ask_user_question_p`).
    pub(crate) ask_user: bool,
}

/// The hook bridges of an assembled session without its agent (`dsh hooks
/// test|replay` fire them directly).
pub struct HookBridges {
    /// Each bridge with its dialect, in pipeline order.
    pub bridges: Vec<(dsh_protocol::Dialect, Arc<dyn Plugin>)>,
    /// The runner every hook process goes through.
    pub runner: HookRunner,
    /// The bridges' start-up notices (a hook that will not run, and why).
    pub notices: Vec<String>,
}

/// What else an agent needs besides the assembled session.
pub struct AgentOptions {
    /// The model.
    pub model: Arc<dyn Model>,
    /// Whether a person can answer prompts.
    pub interactive: bool,
    /// Bound on model requests per turn.
    pub max_steps: u64,
    /// Presentation callbacks.
    pub observers: Observers,
    /// Who answers `ask` decisions; `None` makes each one a denial.
    pub approval: Option<Arc<dyn ApprovalService>>,
}

/// Starts what `spec` resolved. Servers still waiting for consent under
/// [`TrustPolicy::Ask`] do not start (nobody approved them). Must be called
/// outside any async runtime (MCP servers start on a runtime of their own).
pub fn assemble(mut spec: SessionSpec, target: LogTarget) -> Result<Assembled> {
    if !spec.consent.is_empty() {
        match spec.policy {
            TrustPolicy::Ask | TrustPolicy::Headless { .. } => spec.skip_servers(),
            TrustPolicy::RunAll | TrustPolicy::HookTools(_) => spec.approve_servers(),
        }
    }
    let mut scrub = crate::hooks::scrubbed_env_for(&spec.env, &spec.config);
    // The key variable of the API this session speaks (which
    // `--provider-api` may have chosen) is kept from children too.
    if let Some(provider) = &spec.provider
        && !scrub.contains(&provider.api_key_env)
    {
        scrub.push(provider.api_key_env.clone());
    }
    // The configuration trust was decided on: parsed once, in `resolve`.
    let mut hooks = crate::hooks::plugins_from(
        spec.hooks.clone(),
        &spec.sources,
        scrub,
        std::sync::Arc::new(spec.launch_pins()),
    )?;
    // After the bridges: PreToolUse hooks fire before the rules decide.
    hooks.plugins.push(Arc::clone(&spec.permissions.plugin));
    // Last: its session start follows the hooks that ask for files to watch.
    hooks
        .plugins
        .push(Arc::new(dsh_watch::WatchPlugin::new(watched_settings(
            &spec.settings,
        ))));
    // Started before the log header is written: it lists them.
    let mcp = McpSession::start(
        &spec.env.lookup(),
        &spec.mcp,
        &spec.cwd,
        hooks.runner.processes(),
    )?;
    let mut notices = hooks.notices.clone();
    // Codex's own trust matters no more once dsh trusts every one of the
    // project's Codex hooks (`dsh hooks trust`, the trust question): the
    // start-up notice is left to `dsh hooks list`.
    if notices.iter().any(|n| n.contains(CODEX_UNTRUSTED)) {
        // Decided when the session resolved (the trust file read once);
        // worked out here where trust was not decided.
        let untrusted = match &spec.untrusted_dialects {
            Some(dialects) => dialects.clone(),
            None => (crate::trust::untrusted_of(&spec.sources, &spec.hooks)?.iter())
                .map(|hook| hook.dialect)
                .collect(),
        };
        if !untrusted.contains(&dsh_protocol::Dialect::Codex) {
            notices.retain(|n| !n.contains(CODEX_UNTRUSTED));
        }
    }
    notices.extend(mcp.notices().iter().cloned());
    let problems = mcp.problems().to_vec();
    let provider_api = spec
        .provider
        .as_ref()
        .map(|provider| provider.api.as_str().to_owned());
    let header_for = |id: &str| {
        let mut header = crate::hooks::header(id, &spec.cwd, notices.clone());
        if let dsh_protocol::EventBody::SessionHeader(dsh_protocol::SessionHeaderEvent {
            provider_api: api,
            ..
        }) = &mut header
        {
            api.clone_from(&provider_api);
        }
        header
    };
    let (session_id, log, source, torn) = match target {
        LogTarget::New { id, dir, wait } => {
            dsh_session::create_private_dir(&dir)?;
            check_inside(&dir, spec.sources.dsh_home.as_path())?;
            let path = dir.join(format!("{id}.jsonl"));
            let log = SessionLog::create_with(&path, header_for(&id), wait)
                .with_context(|| format!("cannot create the session log {}", path.display()))?;
            (id, log, SessionStartSource::Startup, None)
        }
        LogTarget::Reopen { path, wait } => {
            let (log, torn) = SessionLog::open_with(&path, wait)
                .with_context(|| format!("cannot reopen the session log {}", path.display()))?;
            let id = log
                .events()
                .first()
                .and_then(|event| {
                    if let dsh_protocol::EventBody::SessionHeader(
                        dsh_protocol::SessionHeaderEvent { session_id, .. },
                    ) = &event.body
                    {
                        Some(session_id.clone())
                    } else {
                        None
                    }
                })
                .ok_or_else(|| Error::msg(format!("{}: no session header", path.display())))?;
            (id, log, SessionStartSource::Resume, torn)
        }
        LogTarget::Writer { id, path, writer } => {
            let log = SessionLog::over_writer(&path, writer, header_for(&id))
                .with_context(|| format!("cannot write the session log {}", path.display()))?;
            (id, log, SessionStartSource::Startup, None)
        }
        LogTarget::InMemory { id } => {
            let log = SessionLog::in_memory(header_for(&id))?;
            (id, log, SessionStartSource::Startup, None)
        }
    };
    let mut log = log;
    // What ran before the log existed (`--worktree`'s WorktreeCreate).
    for body in std::mem::take(&mut spec.early_records) {
        log.append(body)
            .with_context(|| "cannot record the WorktreeCreate hooks in the session log")?;
    }
    let project = ProjectContext::discover(&spec.context_roots());
    Ok(Assembled {
        session_id,
        cwd: spec.cwd.clone(),
        log,
        source,
        plugins: hooks.plugins,
        runner: hooks.runner.clone(),
        permissions: Arc::clone(&spec.permissions.permissions),
        mcp: Arc::new(mcp),
        project,
        auto_compact: spec.compaction,
        notices,
        problems,
        hook_notices: hooks.notices,
        hook_dialects: hooks.dialects,
        torn,
        tools: spec.flags.builtin_selection(),
        setup: spec.flags.setup_trigger(),
        web_fetch: spec.config.web_fetch()?,
        ask_user: true,
    })
}

/// The settings files a session watches, by layer: the ones Claude Code
/// reports in ConfigChange (`~/.claude/settings.json`, the project's
/// `.claude/settings.json` and `.claude/settings.local.json`), from the
/// session's settings layer stack (user first).
fn watched_settings(
    settings: &dsh_files::settings::SettingsStack,
) -> Vec<(dsh_seams::ConfigSource, PathBuf)> {
    use dsh_files::settings::SettingsSource;
    settings
        .layers()
        .iter()
        .rev()
        .filter_map(|layer| {
            let source = match layer.source {
                SettingsSource::User => dsh_seams::ConfigSource::UserSettings,
                SettingsSource::Project => dsh_seams::ConfigSource::ProjectSettings,
                SettingsSource::Local => dsh_seams::ConfigSource::LocalSettings,
                SettingsSource::Managed | SettingsSource::Flag => return None,
            };
            Some((source, layer.path.clone()))
        })
        .collect()
}

/// Refuses a sessions directory that resolves outside dsh's home (a
/// symlink planted at `$DSH_HOME/sessions`). A missing directory passes.
pub fn check_inside(dir: &Path, dsh_home: &Path) -> Result<()> {
    let (Ok(home), Ok(resolved)) = (dsh_home.canonicalize(), dir.canonicalize()) else {
        return Ok(());
    };
    if !resolved.starts_with(&home) {
        return Err(Error::msg(format!(
            "{} leads to {}, outside dsh's home {}; dsh does not follow it",
            dir.display(),
            resolved.display(),
            home.display()
        )));
    }
    Ok(())
}

impl Assembled {
    /// A session of `plugins` alone, its log in memory: no hooks, MCP
    /// servers, project context or compaction, every built-in tool (an
    /// embedder's or a test's pipeline).
    pub fn bare(
        session_id: &str,
        cwd: &Path,
        plugins: Vec<Arc<dyn Plugin>>,
        permissions: Arc<PermissionsPlugin>,
    ) -> Result<Assembled> {
        let header = crate::hooks::header(session_id, cwd, Vec::new());
        Ok(Assembled {
            session_id: session_id.to_owned(),
            cwd: cwd.to_owned(),
            log: SessionLog::in_memory(header)?,
            source: SessionStartSource::Startup,
            plugins,
            runner: HookRunner::new(dsh_hook_runner::RunnerConfig::default()),
            permissions,
            mcp: Arc::new(McpSession::none()),
            project: ProjectContext::default(),
            auto_compact: AutoCompact::Off,
            notices: Vec::new(),
            problems: Vec::new(),
            hook_notices: Vec::new(),
            hook_dialects: Vec::new(),
            torn: None,
            tools: dsh_tools::builtin::BuiltinSelection::All,
            setup: None,
            web_fetch: true,
            ask_user: true,
        })
    }

    /// The session id.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The project directory.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// The open log (what a resumed session already holds).
    pub fn log(&self) -> &SessionLog {
        &self.log
    }

    /// How the session-start seam is told the session began.
    pub fn source(&self) -> SessionStartSource {
        self.source
    }

    /// The start-up notices (hooks, then MCP), as in the log header.
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// The hook bridges' own notices (the first part of
    /// [`Assembled::notices`]).
    pub fn hook_notices(&self) -> &[String] {
        &self.hook_notices
    }

    /// Lines worth stderr at start-up (discovery problems, failed servers).
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    /// A reopened log's incomplete last line, dropped.
    pub fn torn(&self) -> Option<&TornTail> {
        self.torn.as_ref()
    }

    /// The runner every hook and tool process goes through.
    pub fn runner(&self) -> &HookRunner {
        &self.runner
    }

    /// The permission stage (approval answers add rules to it; its mode
    /// changes with `set_permission_mode` and the terminal's mode key).
    pub fn permissions(&self) -> &Arc<PermissionsPlugin> {
        &self.permissions
    }

    /// The permission mode the session is in now (it starts in the
    /// spec's [`crate::SessionMode`]).
    pub fn permission_mode(&self) -> dsh_permissions::Mode {
        self.permissions.mode()
    }

    /// The running MCP servers.
    pub fn mcp(&self) -> &McpSession {
        &self.mcp
    }

    /// Custom commands, skills and Codex prompts.
    pub fn commands(&self) -> &dsh_agent::commands::CommandCatalog {
        &self.project.commands
    }

    /// Adds a stage at the end of the pipeline (after the hook bridges,
    /// the permission stage and the watcher): a front end's own check.
    pub fn push_plugin(&mut self, plugin: Arc<dyn Plugin>) {
        self.plugins.push(plugin);
    }

    /// Whether `ask_user_question` is offered. `-p` turns it off: nobody
    /// is there to answer, and Claude Code does not offer it there
    /// (`ev_ask_user_question_p`).
    pub fn offer_ask_user(&mut self, offered: bool) {
        self.ask_user = offered;
    }

    /// The hook bridges alone, with their runner; the rest is dropped.
    pub fn into_hook_bridges(self) -> HookBridges {
        HookBridges {
            bridges: self.hook_dialects.into_iter().zip(self.plugins).collect(),
            runner: self.runner,
            notices: self.hook_notices,
        }
    }

    /// The agent of an interactive, headless or ACP session over this
    /// session; a turn a crash left open is repaired.
    pub fn agent(self, options: AgentOptions) -> Result<Agent> {
        let log_path = self.log.path().map(Path::to_path_buf);
        let mut registry =
            dsh_agent::selected_registry(&self.plugins, self.runner.processes(), &self.tools);
        if !self.web_fetch {
            registry.retain_tools(|name| name != dsh_tools::builtin::web_fetch::NAME);
        }
        if !self.ask_user {
            registry.retain_tools(|name| name != dsh_tools::builtin::interaction::ASK);
        }
        for tool in self.mcp.tools() {
            registry.register_tool(tool);
        }
        let offered: Vec<String> = registry.specs().into_iter().map(|spec| spec.name).collect();
        let working_dirs = self.permissions.working_dirs();
        let environment = crate::system_prompt::Environment::detect(
            &self.cwd,
            working_dirs
                .into_iter()
                .filter(|dir| *dir != self.cwd)
                .collect(),
            &options.model.name(),
        );
        let prompt = crate::system_prompt::render(&offered, &environment);
        if let Some(approval) = options.approval {
            registry.set_approval(approval);
        }
        let info = SessionInfo {
            session_id: self.session_id,
            cwd: self.cwd.clone(),
            model: options.model.name(),
            log_path,
            env: SessionEnv::default(),
            interactive: options.interactive,
        };
        let mut agent = Agent::new(AgentParts {
            log: self.log,
            session: info,
            registry,
            model: options.model,
            system_prompt: prompt,
            max_steps: options.max_steps,
            observers: options.observers,
        });
        // Project instructions and custom commands.
        agent.set_project_context(self.project);
        agent.set_auto_compact(self.auto_compact);
        agent.set_setup(self.setup);
        agent.repair_open_turn()?;
        Ok(agent)
    }
}
