//! Running a fixture transcript through the real loop: what `dsh replay`
//! does, available to tests that register native plugins.

use std::path::PathBuf;
use std::sync::Arc;

use dsh_protocol::{RequestRecord, TurnEndReason};
use dsh_seams::{
    CancellationToken, Plugin, SessionEndReason, SessionEnv, SessionInfo, SessionStartSource,
};
use dsh_session::SessionLog;
use dsh_tools::ToolRegistry;
use dsh_tools::builtin::{BuiltinSelection, ProcessLayer};

use crate::{
    Agent, AgentError, AgentParts, Fixture, Observers, QueuedPrompt, ScriptedModel, TurnOutcome,
};

/// How to replay a fixture.
pub struct ReplayOptions {
    /// A label for errors (the fixture's path).
    pub label: String,
    /// The project directory.
    pub cwd: PathBuf,
    /// The session id.
    pub session_id: String,
    /// The log to write (new, with header; or reopened for a resume).
    pub log: SessionLog,
    /// Whether the log was reopened (session start fires with `resume`).
    pub resumed: bool,
    /// Plugins on the seams, in order.
    pub plugins: Vec<Arc<dyn Plugin>>,
    /// The process layer the `bash` tool runs commands through (the hook
    /// runner's, so one `kill_all` and one scrubbed environment cover both).
    pub processes: ProcessLayer,
    /// Bound on model requests per turn.
    pub max_steps: u64,
    /// The system prompt.
    pub system_prompt: String,
    /// Presentation callbacks.
    pub observers: Observers,
    /// Only the first N prompts (None: all).
    pub prompt_limit: Option<usize>,
    /// Skip the first N prompts (the rest of a resumed fixture).
    pub skip_prompts: usize,
    /// When the session compacts on its own (`--autocompact`).
    pub auto_compact: crate::AutoCompact,
    /// Instruction files and custom commands (`ProjectContext::discover`);
    /// the default has none.
    pub project: crate::ProjectContext,
    /// Tools offered besides the built-in ones (MCP server tools).
    pub extra_tools: Vec<Arc<dyn dsh_tools::Tool>>,
    /// Which built-in tools are offered (`--tools`).
    pub tools: BuiltinSelection,
    /// The set-up run to fire before the session starts (`--init`,
    /// `--init-only`, `--maintenance`).
    pub setup: Option<dsh_seams::SetupTrigger>,
}

/// What a replay produced.
pub struct ReplayOutput {
    /// Every model request, in order.
    pub requests: Vec<RequestRecord>,
    /// How each turn ended.
    pub outcomes: Vec<TurnOutcome>,
    /// The log's events.
    pub events: Vec<dsh_protocol::Event>,
    /// Plugin records the log refused (should be empty).
    pub record_errors: Vec<String>,
}

/// A registry with every built-in tool (the `bash` tool on `processes`) and
/// `plugins`.
pub fn builtin_registry(plugins: &[Arc<dyn Plugin>], processes: &ProcessLayer) -> ToolRegistry {
    selected_registry(plugins, processes, &BuiltinSelection::All)
}

/// A registry with the built-in tools `selection` keeps (`--tools`) and
/// `plugins`.
pub fn selected_registry(
    plugins: &[Arc<dyn Plugin>],
    processes: &ProcessLayer,
    selection: &BuiltinSelection,
) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    for tool in dsh_tools::builtin::selected_tools(processes, selection) {
        registry.register_tool(tool);
    }
    for plugin in plugins {
        registry.register_plugin(Arc::clone(plugin));
    }
    registry
}

/// Replays `fixture`: session start, every prompt as its own turn, session end.
pub async fn replay_fixture(
    fixture: &Fixture,
    options: ReplayOptions,
) -> Result<ReplayOutput, AgentError> {
    replay_fixture_until(fixture, options, CancellationToken::new()).await
}

/// Like [`replay_fixture`], stopping when `stop` fires (a signal): the open
/// turn ends `interrupted` (its tools and hooks are cancelled), no further
/// prompt starts, and the session-end hooks still run on a fresh token.
pub async fn replay_fixture_until(
    fixture: &Fixture,
    options: ReplayOptions,
    stop: CancellationToken,
) -> Result<ReplayOutput, AgentError> {
    let model = Arc::new(ScriptedModel::new(options.label.clone(), fixture.script()));
    replay_inner(fixture, options, model, stop).await
}

/// Like [`replay_fixture_until`], handing each model request to `requests`
/// as it is made instead of keeping them all ([`ReplayOutput::requests`] is
/// empty): what `dsh replay` does, so a long fixture's memory stays linear.
pub async fn replay_fixture_streaming(
    fixture: &Fixture,
    options: ReplayOptions,
    stop: CancellationToken,
    requests: crate::scripted::RequestSink,
) -> Result<ReplayOutput, AgentError> {
    let model = Arc::new(ScriptedModel::streaming(
        options.label.clone(),
        fixture.script(),
        requests,
    ));
    replay_inner(fixture, options, model, stop).await
}

/// Like [`replay_fixture`], with a model the caller keeps (to continue the
/// script in a resumed session).
pub async fn replay_with_model(
    fixture: &Fixture,
    options: ReplayOptions,
    model: Arc<ScriptedModel>,
) -> Result<ReplayOutput, AgentError> {
    replay_inner(fixture, options, model, CancellationToken::new()).await
}

async fn replay_inner(
    fixture: &Fixture,
    options: ReplayOptions,
    model: Arc<ScriptedModel>,
    stop: CancellationToken,
) -> Result<ReplayOutput, AgentError> {
    check_prompts(fixture, &options.project.commands, &options.label)?;
    let mut registry = selected_registry(&options.plugins, &options.processes, &options.tools);
    for tool in &options.extra_tools {
        registry.register_tool(Arc::clone(tool));
    }
    let log_path = options.log.path().map(|path| path.to_path_buf());
    let cwd = options.cwd.clone();
    let mut agent = Agent::new(AgentParts {
        log: options.log,
        session: SessionInfo {
            session_id: options.session_id,
            cwd: options.cwd,
            model: dsh_model::Model::name(model.as_ref()),
            log_path,
            env: SessionEnv::default(),
            interactive: false,
        },
        registry,
        model: model.clone(),
        system_prompt: options.system_prompt,
        max_steps: options.max_steps,
        observers: options.observers,
    });
    agent.set_auto_compact(options.auto_compact);
    agent.set_project_context(options.project);
    agent.set_setup(options.setup);
    if options.resumed {
        agent.repair_open_turn()?;
    }
    let requests_before = model.served();
    // `stop` also reaches the session-start hooks, which run on the
    // session's own token.
    let session_cancel = agent.session_cancel();
    let link = {
        let stop = stop.clone();
        tokio::spawn(async move {
            stop.cancelled().await;
            session_cancel.cancel();
        })
    };
    agent
        .start(if options.resumed {
            SessionStartSource::Resume
        } else {
            SessionStartSource::Startup
        })
        .await;
    let prompts = PromptRange {
        skip: options.skip_prompts,
        limit: options.prompt_limit,
    };
    let outcomes = run_prompts(&mut agent, fixture, &cwd, prompts, &stop).await;
    link.abort();
    let outcomes = outcomes?;
    agent.end(SessionEndReason::Other).await;
    Ok(ReplayOutput {
        requests: model.requests_since(requests_before),
        outcomes,
        events: agent.events(),
        record_errors: agent.record_errors(),
    })
}

/// Refuses a fixture with a prompt naming a command dsh cannot run (the
/// fixture's error, named by its position), before anything runs.
pub fn check_prompts(
    fixture: &Fixture,
    commands: &crate::commands::CommandCatalog,
    label: &str,
) -> Result<(), AgentError> {
    for (index, prompt) in fixture.prompts.iter().enumerate() {
        if let Some(crate::commands::PromptCommand::Invalid(message)) =
            crate::commands::parse(prompt.text(), commands)
        {
            return Err(AgentError::Command(format!(
                "{label}: prompts[{index}]: {message}"
            )));
        }
    }
    Ok(())
}

/// Which of a fixture's prompts run.
#[derive(Debug, Clone, Copy, Default)]
pub struct PromptRange {
    /// Skip the first N (the rest of a resumed fixture).
    pub skip: usize,
    /// Only the first N after those (None: all).
    pub limit: Option<usize>,
}

/// Runs `fixture`'s prompts (those `range` keeps) on `agent`, each as its
/// own turn, after the session-start hooks: the loop of a replay, for a
/// session owned elsewhere (`dsh replay` is a session with a scripted
/// model). Stops starting prompts once `stop` fires or a hook ends the
/// session.
pub async fn run_prompts(
    agent: &mut Agent,
    fixture: &Fixture,
    cwd: &std::path::Path,
    range: PromptRange,
    stop: &CancellationToken,
) -> Result<Vec<TurnOutcome>, AgentError> {
    let mut outcomes = Vec::new();
    // One prompt at a time, so that a stop between turns starts no more.
    for prompt in fixture
        .prompts
        .iter()
        .skip(range.skip)
        .take(range.limit.unwrap_or(usize::MAX))
    {
        if stop.is_cancelled() || agent.session_end_requested().is_some() {
            break;
        }
        // `@path` mentions, as in the terminal and `dsh -p`.
        agent.attach_to_next_prompt(crate::mentions::mention_attachments(prompt.text(), cwd));
        agent.enqueue(QueuedPrompt {
            text: prompt.text().to_owned(),
            source: prompt.source().to_owned(),
        });
        outcomes.extend(agent.run_pending(stop).await?);
    }
    Ok(outcomes)
}

impl ReplayOutput {
    /// Whether every turn completed.
    pub fn all_completed(&self) -> bool {
        self.outcomes
            .iter()
            .all(|outcome| outcome.reason == TurnEndReason::Completed)
    }
}
