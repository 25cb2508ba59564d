//! The loop: the agent, its state and its set-up. One turn (prompt policy,
//! model steps, tool batches, continuation, the end) is in `turn`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use dsh_model::Model;
use dsh_protocol::{Event, EventBody, ModelSwitchedEvent, TurnEndReason};
use dsh_seams::{
    CancellationToken, ContextEntry, Plugin, SeamContext, SessionInfo, SessionSink, StopRequest,
    SubagentRunner, TurnControl, UserNotice,
};
use dsh_session::{LogError, SessionLog};
use dsh_tools::ToolRegistry;

mod attachments;
mod hook_output;
mod lifecycle;
mod loop_seams;
pub(crate) mod sink;
mod turn;
mod worktree;
pub use loop_seams::{MessageQueue, QueueMode, QueueModes};
pub(crate) use sink::LogSink;
pub use sink::{EventCallback, NoticeCallback, Observers, TextCallback};

/// The steering and follow-up queues of a session and their modes.
#[derive(Default)]
struct Queues {
    steering: MessageQueue,
    follow_up: MessageQueue,
    modes: QueueModes,
}

/// The default bound on model requests per turn.
pub const DEFAULT_MAX_STEPS: u64 = 50;

/// Why the loop itself failed (not a turn ending badly: that is a `turn/end`).
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The session log refused or failed an append.
    #[error(transparent)]
    Log(#[from] LogError),
    /// A fixture prompt names a command dsh cannot run (`/nosuch`).
    #[error("{0}")]
    Command(String),
}

/// A queued send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedPrompt {
    /// The prompt text.
    pub text: String,
    /// Who sent it.
    pub source: String,
}

/// How a turn ended, for the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnOutcome {
    /// The turn number.
    pub turn: u64,
    /// Why it ended.
    pub reason: TurnEndReason,
    /// The last assistant text, if any.
    pub final_text: Option<String>,
    /// The error or stop message, if any.
    pub message: Option<String>,
}

/// Everything an [`Agent`] is built from.
pub struct AgentParts {
    /// The open session log (new, with its header, or reopened).
    pub log: SessionLog,
    /// The session facts listeners see.
    pub session: SessionInfo,
    /// Tools and plugins.
    pub registry: ToolRegistry,
    /// The model.
    pub model: Arc<dyn Model>,
    /// The system prompt sent first in every request.
    pub system_prompt: String,
    /// Bound on model requests per turn.
    pub max_steps: u64,
    /// Presentation callbacks.
    pub observers: Observers,
}

/// A running session.
pub struct Agent {
    sink: Arc<LogSink>,
    session: Arc<SessionInfo>,
    registry: ToolRegistry,
    model: Arc<dyn Model>,
    system_prompt: String,
    /// Text after the whole system prompt (`--append-system-prompt`).
    system_prompt_suffix: Option<String>,
    max_steps: u64,
    inbox: VecDeque<QueuedPrompt>,
    started: bool,
    pending_session_contexts: Vec<ContextEntry>,
    /// What the person attached to the next prompt (`attachments`).
    prompt_attachments: Vec<ContextEntry>,
    /// A session-start listener's stop request (Codex SessionStart
    /// `continue: false`): the next turn ends `stopped` before its prompt is
    /// processed (no prompt-submit seam, no model request, no continuation).
    session_stop: Option<StopRequest>,
    session_cancel: CancellationToken,
    /// Seed-004 queues (steering, follow-up) and their delivery modes.
    queues: Queues,
    /// A stop-after-step listener ended the session: no further send runs.
    session_end_requested: Option<String>,
    /// When dsh compacts on its own (`crate::compaction`).
    auto_compact: crate::AutoCompact,
    /// Instruction files and custom commands (empty unless set).
    project: crate::ProjectContext,
    /// The open turn's system prompt, after the system-prompt seam.
    turn_system_prompt: Option<String>,
    /// The model `/model` chose (the log's last `model/switched`).
    model_override: Option<String>,
    /// Path-scoped rules already in this conversation.
    loaded_rules: Mutex<std::collections::HashSet<std::path::PathBuf>>,
    /// Runs the `agent` tool's nested loops (`subagent.rs`).
    subagents: Arc<dyn SubagentRunner>,
    /// The set-up run asked for (`--init`, `--maintenance`), fired by
    /// [`Agent::start`].
    setup: Option<dsh_seams::SetupTrigger>,
    /// When the session's last model response came, and its usage (the
    /// model-switch seam reports them).
    last_response: Option<(std::time::Instant, Option<dsh_protocol::TokenUsage>)>,
}

impl Agent {
    /// Builds an agent. Nothing runs until [`Agent::start`].
    pub fn new(parts: AgentParts) -> Self {
        let plugins = parts.registry.plugins().to_vec();
        // A reopened log keeps the model its last `/model` chose.
        let model_override = parts.log.events().iter().rev().find_map(|event| {
            if let EventBody::ModelSwitched(ModelSwitchedEvent { to, .. }) = &event.body {
                Some(to.clone())
            } else {
                None
            }
        });
        let loaded_rules = Mutex::new(crate::prompt_layer::loaded_rules(parts.log.events()));
        // Ids of this session's records, derived so that a replay repeats
        // them; a resume opens on a longer log, so never reuses them.
        let ids = dsh_seams::IdSource::new(
            &parts.session.session_id,
            u64::try_from(parts.log.events().len()).unwrap_or(u64::MAX),
        );
        let sink = Arc::new(LogSink {
            ids,
            hook_output_dir: hook_output::spill_dir(parts.session.log_path.as_deref()),
            log: Mutex::new(parts.log),
            plugins,
            observers: parts.observers,
            record_errors: Mutex::new(Vec::new()),
        });
        let subagents = crate::subagent::runner(
            Arc::clone(&sink),
            Arc::clone(&parts.model),
            &parts.registry,
            parts.max_steps,
        );
        Agent {
            sink,
            subagents,
            session: Arc::new(parts.session),
            registry: parts.registry,
            model: parts.model,
            system_prompt: parts.system_prompt,
            system_prompt_suffix: None,
            max_steps: parts.max_steps,
            inbox: VecDeque::new(),
            started: false,
            pending_session_contexts: Vec::new(),
            prompt_attachments: Vec::new(),
            session_stop: None,
            session_cancel: CancellationToken::new(),
            queues: Queues::default(),
            session_end_requested: None,
            auto_compact: crate::AutoCompact::default(),
            project: crate::ProjectContext::default(),
            turn_system_prompt: None,
            model_override,
            loaded_rules,
            setup: None,
            last_response: None,
        }
    }

    /// Asks for the set-up seam (`--init`, `--init-only`, `--maintenance`):
    /// [`Agent::start`] fires it first. Call before [`Agent::start`].
    pub fn set_setup(&mut self, trigger: Option<dsh_seams::SetupTrigger>) {
        self.setup = trigger;
    }

    /// Sets when dsh compacts automatically (default: 85 % of a 128K window).
    pub fn set_auto_compact(&mut self, auto_compact: crate::AutoCompact) {
        self.auto_compact = auto_compact;
    }

    /// Sets the project's instruction files (they join the system prompt)
    /// and custom commands. Call before [`Agent::start`].
    pub fn set_project_context(&mut self, project: crate::ProjectContext) {
        self.project = project;
    }

    /// The project's instruction files and custom commands.
    pub fn project_context(&self) -> &crate::ProjectContext {
        &self.project
    }

    /// The system prompt with the project's instructions.
    pub fn system_prompt(&self) -> String {
        let prompt = self.project.instructions.system_prompt(&self.system_prompt);
        match &self.system_prompt_suffix {
            Some(suffix) => format!("{prompt}\n\n{suffix}"),
            None => prompt,
        }
    }

    /// Replaces dsh's base system prompt (Claude Code's `--system-prompt`);
    /// the project's instructions still follow it.
    pub fn replace_system_prompt(&mut self, base: String) {
        self.system_prompt = base;
    }

    /// Puts `text` at the end of the system prompt, after the project's
    /// instructions (Claude Code's `--append-system-prompt`).
    pub fn append_system_prompt(&mut self, text: String) {
        self.system_prompt_suffix = Some(text);
    }

    /// The names of the tools on offer to the model (dsh's names).
    pub fn tool_names(&self) -> Vec<String> {
        self.registry
            .specs()
            .into_iter()
            .map(|spec| spec.name)
            .collect()
    }

    /// Offers one more tool from the next request on (the tools of a
    /// Claude Agent SDK application's in-process MCP servers).
    pub fn register_tool(&mut self, tool: Arc<dyn dsh_tools::Tool>) {
        self.registry.register_tool(tool);
    }

    /// A copy of every event so far.
    pub fn events(&self) -> Vec<Event> {
        self.sink.with_log(|log| log.events().to_vec())
    }

    /// Records that plugins tried and the log refused.
    pub fn record_errors(&self) -> Vec<String> {
        self.sink
            .record_errors
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The session facts.
    pub fn session(&self) -> &Arc<SessionInfo> {
        &self.session
    }

    /// Cancelled when the whole session is torn down; cancels any turn.
    pub fn session_cancel(&self) -> CancellationToken {
        self.session_cancel.clone()
    }

    fn context(
        &self,
        turn: Option<u64>,
        cancel: CancellationToken,
        control: TurnControl,
    ) -> SeamContext {
        SeamContext {
            session: Arc::clone(&self.session),
            turn,
            cancel,
            sink: self.sink.clone(),
            control,
            agent: None,
            subagents: Some(Arc::clone(&self.subagents)),
        }
    }

    pub(crate) fn append(&self, body: EventBody) -> Result<Event, AgentError> {
        Ok(self.sink.append(body)?)
    }

    /// The system prompt requests of the open turn carry (after the
    /// system-prompt seam), else the session's with its instructions.
    pub(crate) fn request_system_prompt(&self) -> String {
        self.turn_system_prompt
            .clone()
            .unwrap_or_else(|| self.system_prompt())
    }

    /// The model `/model` chose, which requests name (else the provider's).
    pub(crate) fn request_model(&self) -> Option<String> {
        self.model_override.clone()
    }

    pub(crate) fn plugins(&self) -> &[Arc<dyn Plugin>] {
        self.registry.plugins()
    }

    pub(crate) fn tool_specs(&self) -> Vec<dsh_protocol::ToolSpec> {
        self.registry.specs()
    }

    pub(crate) fn model(&self) -> &Arc<dyn Model> {
        &self.model
    }

    pub(crate) fn max_steps(&self) -> u64 {
        self.max_steps
    }

    pub(crate) fn auto_compact_limit(&self) -> Option<u64> {
        self.auto_compact.limit()
    }

    /// The estimated size of the next request (without copying the log).
    pub(crate) fn estimated_tokens(&self) -> u64 {
        let system_prompt = self.request_system_prompt();
        self.sink
            .with_log(|log| crate::estimate_tokens(log.events(), &system_prompt))
    }

    /// Queues a send.
    pub fn enqueue(&mut self, send: QueuedPrompt) {
        self.inbox.push_back(send);
    }

    /// Runs every queued send, one turn each, in order.
    pub async fn run_pending(
        &mut self,
        cancel: &CancellationToken,
    ) -> Result<Vec<TurnOutcome>, AgentError> {
        let mut outcomes = Vec::new();
        while self.session_end_requested.is_none()
            && let Some(send) = self.inbox.pop_front()
        {
            // Built-in commands (`/clear`, `/model`, `/compact`) and unknown
            // `/name`s are not turns (commands.rs).
            if let Some(command) = crate::commands::parse(&send.text, &self.project.commands)
                && self.run_builtin(command).await?
            {
                continue;
            }
            outcomes.push(self.run_turn(send, cancel.child_token()).await?);
        }
        Ok(outcomes)
    }

    /// Runs a built-in command (`/clear`, `/model`, `/compact`) or reports
    /// an invalid one to the user. Returns whether the send was handled
    /// (`false` for a custom command or `/compact`, which run as turns).
    pub async fn run_builtin(
        &mut self,
        command: crate::commands::PromptCommand,
    ) -> Result<bool, AgentError> {
        use crate::commands::PromptCommand;
        match command {
            PromptCommand::Custom(_) => Ok(false),
            PromptCommand::Invalid(message) => {
                self.sink.tell_user(UserNotice {
                    source: "dsh".to_owned(),
                    text: message,
                    level: dsh_seams::NoticeLevel::Warning,
                });
                Ok(true)
            }
            // `/compact` runs as its own turn (one summary request, no
            // prompt policy): `run_turn` hands it to `crate::compaction`.
            PromptCommand::Compact(_) => Ok(false),
            PromptCommand::Clear => {
                self.clear().await?;
                Ok(true)
            }
            PromptCommand::Model(name) => {
                // A refused switch was told to the user by the seam.
                let _refused = self
                    .switch_model(&name, dsh_seams::ModelSwitchSource::Command)
                    .await?;
                Ok(true)
            }
        }
    }
}
