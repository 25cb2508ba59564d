//! Where sessions live and how one is opened: `$DSH_HOME/sessions/<id>.jsonl`,
//! the `dsh sessions` listing, `--resume ID` / `--continue`, the model, and
//! the agent of an interactive or headless session.

use crate::stdio::{ExitStatus, errln, outln};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, bail};
use dsh_agent::{Agent, AgentParts, Observers};
use dsh_model::Model;
use dsh_protocol::{Event, EventBody};
use dsh_provider::{OpenAiProvider, ProviderSettings};
use dsh_seams::{SessionEnv, SessionInfo, SessionStartSource};
use dsh_session::{LockWait, SessionLog};
use dsh_tools::ApprovalService;

use crate::terminal::truncate;
use crate::wiring::{self, HookSources, LoadedHooks};

/// The directory under `$DSH_HOME` holding session logs.
pub const SESSIONS_DIR: &str = "sessions";

/// How the user asked to pick the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pick {
    /// A new session in the current directory.
    New,
    /// `--resume ID` (a full id or an unambiguous prefix).
    Resume(String),
    /// `--continue`: the newest session whose cwd is the current directory.
    Continue,
}

/// dsh's home: `$DSH_HOME`, else `~/.dsh`.
pub fn dsh_home() -> anyhow::Result<PathBuf> {
    dsh_provider::resolve_dsh_home(&|name| std::env::var(name).ok())
        .context("cannot find dsh's home: set DSH_HOME or HOME")
}

/// `$DSH_HOME/sessions`.
pub fn sessions_dir(dsh_home: &Path) -> PathBuf {
    dsh_home.join(SESSIONS_DIR)
}

/// The model the settings point at (`[provider]` in `config.toml`, then
/// `DSH_BASE_URL`, `DSH_MODEL`, `DSH_API_KEY`/`DEEPSEEK_API_KEY`);
/// `model_override` is `--model`.
pub fn model(dsh_home: &Path, model_override: Option<&str>) -> anyhow::Result<Arc<dyn Model>> {
    let mut settings = ProviderSettings::load(dsh_home, &|name| std::env::var(name).ok())?;
    if let Some(model) = model_override {
        settings.model = model.to_owned();
    }
    Ok(Arc::new(OpenAiProvider::new(settings)?))
}

/// One stored session, as `dsh sessions` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSummary {
    /// The session id.
    pub id: String,
    /// The log file.
    pub path: PathBuf,
    /// The session's working directory.
    pub cwd: String,
    /// When it started (the header's timestamp, RFC 3339).
    pub started: String,
    /// When it was last written to.
    pub updated: String,
    /// The first prompt, if any.
    pub first_prompt: Option<String>,
    /// How many turns it has.
    pub turns: u64,
}

fn summarize(path: &Path, events: &[Event]) -> Option<SessionSummary> {
    let header = events.first()?;
    let EventBody::SessionHeader {
        session_id, cwd, ..
    } = &header.body
    else {
        return None;
    };
    let first_prompt = events.iter().find_map(|event| match &event.body {
        EventBody::UserMessage {
            content,
            original_content,
            ..
        } => Some(original_content.clone().unwrap_or_else(|| content.clone())),
        EventBody::PromptBlocked { content, .. } => Some(content.clone()),
        EventBody::SessionHeader { .. }
        | EventBody::TurnStart { .. }
        | EventBody::CompactionStarted { .. }
        | EventBody::CompactionCompleted { .. }
        | EventBody::CompactionFailed { .. }
        | EventBody::AssistantMessage { .. }
        | EventBody::ToolCall { .. }
        | EventBody::ToolResult { .. }
        | EventBody::ContextMessage { .. }
        | EventBody::SteeringMessage { .. }
        | EventBody::TurnEnd { .. }
        | EventBody::HookInvoked { .. }
        | EventBody::HookResult { .. }
        | EventBody::SeamNote { .. }
        | EventBody::SessionCleared { .. }
        | EventBody::ModelSwitched { .. } => None,
    });
    let turns = events
        .iter()
        .filter(|event| matches!(event.body, EventBody::TurnStart { .. }))
        .count() as u64;
    Some(SessionSummary {
        id: session_id.clone(),
        path: path.to_owned(),
        cwd: cwd.clone(),
        started: header.ts.clone(),
        updated: events
            .last()
            .map_or_else(|| header.ts.clone(), |event| event.ts.clone()),
        first_prompt,
        turns,
    })
}

/// Every readable session under `dsh_home`, newest activity first. Logs
/// that cannot be read, entries that are not regular files (a FIFO would
/// hang the read; a symlink could lead out of `$DSH_HOME`) and headers with
/// an unsafe session id are reported on stderr and skipped.
pub fn list(dsh_home: &Path) -> anyhow::Result<Vec<SessionSummary>> {
    let dir = sessions_dir(dsh_home);
    check_inside_home(dsh_home, &dir)?;
    let entries = match fs_err::read_dir(&dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error.into()),
    };
    let mut sessions = Vec::new();
    for entry in entries {
        let entry = entry?;
        let path = entry.path();
        if path.extension().and_then(|ext| ext.to_str()) != Some("jsonl") {
            continue;
        }
        // The entry's own type: a symlink is not followed to find out.
        let kind = entry.file_type()?;
        if !kind.is_file() {
            errln!(
                "dsh: warning: {}: {}, not a regular file; skipped",
                path.display(),
                dsh_session::describe_kind(&kind)
            );
            continue;
        }
        match dsh_session::load_with(&path, dsh_session::Follow::NoSymlinks) {
            Ok(loaded) => match summarize(&path, &loaded.events) {
                Some(summary) => match dsh_session::validate_session_id(&summary.id) {
                    Ok(()) => sessions.push(summary),
                    Err(error) => {
                        errln!("dsh: warning: {}: {error}; skipped", path.display());
                    }
                },
                None => errln!(
                    "dsh: warning: {}: no session header; skipped",
                    path.display()
                ),
            },
            Err(error) => errln!("dsh: warning: {error}; skipped"),
        }
    }
    // RFC 3339 UTC timestamps of one writer sort as strings.
    sessions.sort_by(|a, b| {
        b.updated
            .cmp(&a.updated)
            .then_with(|| b.started.cmp(&a.started))
    });
    Ok(sessions)
}

/// Refuses a sessions directory that resolves outside dsh's home (a
/// symlink planted at `$DSH_HOME/sessions`). A missing directory passes.
fn check_inside_home(dsh_home: &Path, dir: &Path) -> anyhow::Result<()> {
    let (Ok(home), Ok(resolved)) = (dsh_home.canonicalize(), dir.canonicalize()) else {
        return Ok(());
    };
    if !resolved.starts_with(&home) {
        bail!(
            "{} leads to {}, outside dsh's home {}; dsh does not follow it",
            dir.display(),
            resolved.display(),
            home.display()
        );
    }
    Ok(())
}

fn local_time(ts: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(ts)
        .map(|time| {
            time.with_timezone(&chrono::Local)
                .format("%Y-%m-%d %H:%M")
                .to_string()
        })
        .unwrap_or_else(|_| ts.to_owned())
}

/// `dsh sessions`: one line per session, newest first.
pub fn run_list(json: bool) -> anyhow::Result<ExitStatus> {
    let home = dsh_home()?;
    let sessions = list(&home)?;
    if json {
        for session in &sessions {
            let line = serde_json::json!({
                "id": session.id,
                "path": session.path,
                "cwd": session.cwd,
                "started": session.started,
                "updated": session.updated,
                "turns": session.turns,
                "first_prompt": session.first_prompt,
            });
            outln!("{line}")?;
        }
        return Ok(ExitStatus::Success);
    }
    if sessions.is_empty() {
        errln!("dsh: no sessions in {}", sessions_dir(&home).display());
        return Ok(ExitStatus::Success);
    }
    outln!(
        "{:<36}  {:<16}  {:>5}  CWD / FIRST PROMPT",
        "ID",
        "UPDATED",
        "TURNS"
    )?;
    for session in &sessions {
        let prompt = session
            .first_prompt
            .as_deref()
            .map(|prompt| truncate(&prompt.replace('\n', " "), 70))
            .unwrap_or_else(|| "(no prompt)".to_owned());
        outln!(
            "{:<36}  {:<16}  {:>5}  {}\n{:<36}  {:<16}  {:>5}  {}",
            session.id,
            local_time(&session.updated),
            session.turns,
            session.cwd,
            "",
            "",
            "",
            prompt
        )?;
    }
    Ok(ExitStatus::Success)
}

/// A session log ready for an agent.
pub struct Opened {
    /// The session id.
    pub session_id: String,
    /// The session's working directory.
    pub cwd: PathBuf,
    /// The open log (its header written, or reopened).
    pub log: SessionLog,
    /// How the session-start seam is told the session began.
    pub source: SessionStartSource,
    /// The hooks for `cwd`.
    pub hooks: LoadedHooks,
    /// The seq of the first event this run appends (0 for a new session,
    /// counting the header).
    pub first_seq: u64,
    /// The session's permission stage (the approval prompt's session
    /// rules); `None` where the session has no permission model (ACP).
    pub permissions: Option<Arc<dsh_permissions::PermissionsPlugin>>,
    /// The session's MCP servers (their tools join the registry); the
    /// caller keeps a clone to close them when the session ends.
    pub mcp: Arc<crate::mcp_cmd::McpSession>,
}

/// Finds the session `pick` names, or prepares a new one, loads the hooks
/// for its directory (always through [`wiring::load_hooks`]), starts its MCP
/// servers and opens its log.
// Each argument is one command-line input of the session; a struct for them
// would only rename the call sites.
#[allow(clippy::too_many_arguments)]
pub fn open(
    dsh_home: &Path,
    pick: &Pick,
    settings: &[PathBuf],
    plugin_dirs: &[PathBuf],
    permissions: &crate::perms::PermissionFlags,
    trust: Trust,
    wait: LockWait,
    mcp_config: &[PathBuf],
) -> anyhow::Result<Opened> {
    let current = wiring::current_dir()?;
    let existing = match pick {
        Pick::New => None,
        Pick::Resume(id) => Some(find(dsh_home, id)?),
        Pick::Continue => {
            let cwd = current.display().to_string();
            let newest = list(dsh_home)?
                .into_iter()
                .find(|session| session.cwd == cwd);
            Some(newest.with_context(|| {
                format!("no session to continue in {cwd}; `dsh sessions` lists them")
            })?)
        }
    };
    match existing {
        None => {
            let cwd = current;
            let (hooks, permissions, mcp) =
                load_hooks(&cwd, settings, plugin_dirs, permissions, trust, mcp_config)?;
            let session_id = uuid::Uuid::new_v4().to_string();
            let dir = sessions_dir(dsh_home);
            dsh_session::create_private_dir(&dir)?;
            check_inside_home(dsh_home, &dir)?;
            let path = dir.join(format!("{session_id}.jsonl"));
            let header = wiring::header(&session_id, &cwd, hooks.notices.clone());
            let log = SessionLog::create_with(&path, header, wait)
                .with_context(|| format!("cannot create the session log {}", path.display()))?;
            Ok(Opened {
                session_id,
                cwd,
                log,
                source: SessionStartSource::Startup,
                hooks,
                first_seq: 0,
                permissions: Some(permissions),
                mcp: Arc::new(mcp),
            })
        }
        Some(summary) => {
            let cwd = PathBuf::from(&summary.cwd);
            if !cwd.is_dir() {
                bail!(
                    "session {} belongs to {}, which is no longer a directory",
                    summary.id,
                    cwd.display()
                );
            }
            if cwd != current {
                errln!("dsh: resuming in the session's directory {}", cwd.display());
            }
            let (hooks, permissions, mcp) =
                load_hooks(&cwd, settings, plugin_dirs, permissions, trust, mcp_config)?;
            let (log, torn) = SessionLog::open_with(&summary.path, wait).with_context(|| {
                format!("cannot reopen the session log {}", summary.path.display())
            })?;
            if let Some(torn) = torn {
                errln!(
                    "dsh: warning: {}:{}: the last line was incomplete ({} bytes, left by a crash); it was dropped",
                    summary.path.display(),
                    torn.line,
                    torn.bytes
                );
            }
            let first_seq = log.events().len() as u64;
            Ok(Opened {
                session_id: summary.id,
                cwd,
                log,
                source: SessionStartSource::Resume,
                hooks,
                first_seq,
                permissions: Some(permissions),
                mcp: Arc::new(mcp),
            })
        }
    }
}

/// How project hooks nobody trusted yet are handled (see `crate::trust`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// Ask the person at the terminal once (before the session starts).
    Interactive,
    /// Headless: run them but name them on stderr, or refuse when `strict`.
    Headless {
        /// `DSH_STRICT_HOOKS`: refuse untrusted project hooks.
        strict: bool,
    },
}

/// The hooks of `cwd` under dsh's trust rules for interactive and headless
/// sessions (replay runs everything and does not come here), followed by
/// the permission rules (`permissions` flags over every settings layer).
fn load_hooks(
    cwd: &Path,
    settings: &[PathBuf],
    plugin_dirs: &[PathBuf],
    permissions: &crate::perms::PermissionFlags,
    trust: Trust,
    mcp_config: &[PathBuf],
) -> anyhow::Result<(
    LoadedHooks,
    Arc<dsh_permissions::PermissionsPlugin>,
    crate::mcp_cmd::McpSession,
)> {
    let mut sources = HookSources::from_env(cwd.to_owned(), settings.to_vec());
    // Interactive sessions start only the project MCP servers approved in
    // settings (Claude Code's dialog records its approvals there).
    let project_servers = match trust {
        Trust::Interactive => crate::mcp_cmd::ProjectServers::ApprovedOnly,
        Trust::Headless { .. } => crate::mcp_cmd::ProjectServers::StartAll,
    };
    let mcp_servers =
        crate::mcp_cmd::discover(cwd, &sources.home, settings, mcp_config, project_servers)?;
    sources.mcp_servers = crate::mcp_cmd::tags(&mcp_servers);
    // Unlike replay there is no fallback: without the flag or a settings
    // `defaultMode` the session runs Claude Code's `default` mode, so a call
    // that needs approval asks (a person) or is denied (`-p`).
    let permissions = crate::perms::build(permissions, cwd, &sources.home, settings, None)?;
    sources.permission_mode = Some(permissions.mode);
    // `--plugin-dir`: Claude Code plugins loaded for this run only.
    sources.claude_plugin_dirs = plugin_dirs.to_vec();
    match trust {
        Trust::Interactive => {
            let stdin = std::io::stdin();
            let mut stdout = std::io::stdout();
            crate::trust::apply_interactive(&mut sources, &mut stdin.lock(), &mut stdout)?;
        }
        Trust::Headless { strict } => {
            crate::trust::apply_headless(&mut sources, strict, &mut std::io::stderr())?;
        }
    }
    let mut hooks = wiring::load_hooks(&sources)?;
    // After the bridges: PreToolUse hooks fire before the rules decide.
    hooks.plugins.push(permissions.plugin);
    // Started before the log header is written: it lists them.
    let mcp = crate::mcp_cmd::McpSession::start(&mcp_servers, cwd, hooks.runner.processes())?;
    hooks.notices.extend(mcp.notices().iter().cloned());
    Ok((hooks, permissions.permissions, mcp))
}

/// The session `id` names: an exact id, or a prefix only one session has.
fn find(dsh_home: &Path, id: &str) -> anyhow::Result<SessionSummary> {
    dsh_session::validate_session_id(id).context("cannot resume")?;
    let sessions = list(dsh_home)?;
    if let Some(exact) = sessions.iter().find(|session| session.id == id) {
        return Ok(exact.clone());
    }
    let matching: Vec<&SessionSummary> = sessions
        .iter()
        .filter(|session| session.id.starts_with(id))
        .collect();
    match matching.as_slice() {
        [one] => Ok((*one).clone()),
        [] => bail!(
            "no session {id} in {}; `dsh sessions` lists them",
            sessions_dir(dsh_home).display()
        ),
        many => bail!("{id} is ambiguous: {} sessions start with it", many.len()),
    }
}

/// What else an agent needs besides the opened session.
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

/// Builds the agent over an opened session and repairs a turn a crash left
/// open. (`wiring::agent` does the same for replay, which has no approvals.)
pub fn agent(opened: Opened, options: AgentOptions) -> anyhow::Result<Agent> {
    let log_path = opened.log.path().map(Path::to_path_buf);
    let mut registry =
        dsh_agent::builtin_registry(&opened.hooks.plugins, opened.hooks.runner.processes());
    for tool in opened.mcp.tools() {
        registry.register_tool(tool);
    }
    if let Some(approval) = options.approval {
        registry.set_approval(approval);
    }
    let info = SessionInfo {
        session_id: opened.session_id,
        cwd: opened.cwd.clone(),
        model: options.model.name(),
        log_path,
        env: SessionEnv::default(),
        interactive: options.interactive,
    };
    let mut agent = Agent::new(AgentParts {
        log: opened.log,
        session: info,
        registry,
        model: options.model,
        system_prompt: wiring::system_prompt(&opened.cwd),
        max_steps: options.max_steps,
        observers: options.observers,
    });
    // Project instructions and custom commands (issue 16).
    agent.set_project_context(dsh_agent::ProjectContext::discover(
        &dsh_agent::instructions::ContextRoots::from_env(opened.cwd.clone()),
    ));
    agent.repair_open_turn()?;
    Ok(agent)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use dsh_protocol::TurnEndReason;

    fn event(seq: u64, ts: &str, body: EventBody) -> Event {
        Event {
            seq,
            ts: ts.to_owned(),
            body,
            agent_id: None,
        }
    }

    #[test]
    fn a_summary_counts_turns_and_keeps_the_first_prompt_as_typed() {
        let events = vec![
            event(
                0,
                "2025-01-01T10:00:00Z",
                EventBody::SessionHeader {
                    session_id: "s1".into(),
                    cwd: "/p".into(),
                    version: "0".into(),
                    notices: vec![],
                },
            ),
            event(1, "2025-01-01T10:00:01Z", EventBody::TurnStart { turn: 1 }),
            event(
                2,
                "2025-01-01T10:00:01Z",
                EventBody::UserMessage {
                    turn: 1,
                    content: "rewritten".into(),
                    source: "user".into(),
                    original_content: Some("typed".into()),
                },
            ),
            event(
                3,
                "2025-01-01T10:00:02Z",
                EventBody::TurnEnd {
                    turn: 1,
                    reason: TurnEndReason::Completed,
                    message: None,
                },
            ),
            event(4, "2025-01-01T11:00:00Z", EventBody::TurnStart { turn: 2 }),
        ];
        let summary = summarize(Path::new("/x/s1.jsonl"), &events).unwrap();
        assert_eq!(summary.turns, 2);
        assert_eq!(summary.first_prompt.as_deref(), Some("typed"));
        assert_eq!(summary.started, "2025-01-01T10:00:00Z");
        assert_eq!(summary.updated, "2025-01-01T11:00:00Z");
        assert_eq!(summary.cwd, "/p");
    }
}
