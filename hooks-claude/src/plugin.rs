//! The Claude Code bridge as a [`Plugin`]: the generic [`BridgePlugin`]
//! of the Claude Code dialect, whose seams are flows (`bridged.rs`, one module per
//! group of events). Per seam Claude Code's part is pure: the payload it
//! fires (selected by matcher, deduplicated on the command, then `if`
//! rules, run by the shared engine), how the runs are recorded (winner
//! marks and per-run fields, in configuration order, never completion
//! order) and what the runs mean for the seam; async hooks are harvested
//! at the next prompt and StopFailure hooks settled at SessionEnd.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use dsh_hook_runner::HookRunner;
use dsh_hooks::{BridgePlugin, Cx, Fire, Flow, Record};
use dsh_seams::{ContextEntry, Plugin, SeamContext};

use crate::config::ClaudeConfig;
use crate::dialect::{Claude, Firing, Selector, source_of};
use crate::envfile::EnvFileNames;
use crate::events::HookEvent;
use crate::payload::{self, Common};
use crate::rules::Sent;
use crate::transcript::Transcript;

mod bridged;
mod compact;
mod elicitation;
mod failure;
mod lifecycle;
mod prompting;
mod tasks;
mod tools;
mod transcribe;
mod turns;
mod worktree;
pub use worktree::NO_WORKTREE_PATH;
mod watch;

const NAME: &str = "claude";

impl ClaudeConfig {
    /// The bridge plugin running this configuration's hooks through
    /// `runner`: Claude Code's seams as flows on the generic
    /// [`BridgePlugin`].
    pub fn into_plugin(self, runner: HookRunner) -> Arc<dyn Plugin> {
        BridgePlugin::shared(Claude { config: self }, runner)
    }
}

/// Which runs' answers are decisive for a Claude Code winner mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decisive {
    /// A `continue: false` or a block (the prompt events, PostToolBatch).
    Halting,
    /// A permission answer: allow, ask, deny or defer (PreToolUse,
    /// PermissionRequest).
    Permission,
}

/// What the bridge keeps for the session (never per call).
#[derive(Default)]
pub(crate) struct State {
    prompt_ids: HashMap<u64, String>,
    last_prompt_id: Option<String>,
    transcript: Option<Transcript>,
    /// StopFailure hooks were started and may still be running.
    stop_failure_started: bool,
    /// The mode an accepted `setMode` switched to (else the configured one).
    mode: Option<String>,
    /// `.claude/rules` files whose InstructionsLoaded waits for SessionStart.
    pending_rules: Vec<(dsh_seams::InstructionFile, dsh_seams::LoadReason)>,
    /// Sidechain transcripts of subagents, by agent id.
    agent_transcripts: HashMap<String, Transcript>,
    /// The settings `env` read again after an applied ConfigChange (else
    /// the configuration's).
    settings_env: Option<Vec<(String, String)>>,
}

/// One awaited run, read.
type Fired = dsh_hooks::Fired<Claude>;

impl Claude {
    /// The transcript file for `session_id`.
    pub(crate) fn transcript_path(&self, session_id: &str) -> PathBuf {
        self.config
            .discovery
            .transcript_dir
            .join(format!("{session_id}.jsonl"))
    }

    /// The merged settings `env`: as read again after an applied
    /// ConfigChange, else as configured.
    fn settings_env(&self, state: &State) -> Vec<(String, String)> {
        state
            .settings_env
            .clone()
            .unwrap_or_else(|| self.config.settings_env.clone())
    }

    /// The MCP server behind `tool`, when it is an MCP tool of this session.
    fn mcp_server_of(&self, tool: &str) -> Option<&payload::McpServerTag> {
        payload::mcp_server_of(tool, &self.config.options.mcp_servers)
    }

    fn ensure_session(&self, state: &mut State, ctx: &SeamContext) {
        if state.transcript.is_none() {
            state.transcript = Some(Transcript::new(
                self.transcript_path(&ctx.session.session_id),
                ctx.session.session_id.clone(),
                ctx.session.cwd.to_string_lossy().into_owned(),
            ));
        }
    }

    fn prompt_id(state: &mut State, ctx: &SeamContext) -> Option<String> {
        match ctx.turn {
            Some(turn) => {
                let id = state
                    .prompt_ids
                    .entry(turn)
                    .or_insert_with(|| prompt_id_for(&ctx.session.session_id, turn))
                    .clone();
                state.last_prompt_id = Some(id.clone());
                Some(id)
            }
            None => state.last_prompt_id.clone(),
        }
    }

    /// The fields every payload starts with (`prompt_id` on the events
    /// that carry it).
    fn common(&self, state: &mut State, ctx: &SeamContext, with_prompt: bool) -> Common {
        self.ensure_session(state, ctx);
        Common {
            session_id: ctx.session.session_id.clone(),
            transcript_path: self
                .transcript_path(&ctx.session.session_id)
                .to_string_lossy()
                .into_owned(),
            cwd: ctx.session.current_dir().to_string_lossy().into_owned(),
            prompt_id: if with_prompt {
                Self::prompt_id(state, ctx)
            } else {
                None
            },
            permission_mode: state
                .mode
                .clone()
                .unwrap_or_else(|| self.config.options.permission_mode.clone()),
            effort: self.config.options.effort.clone(),
            agent: ctx.agent.as_ref().map(|agent| payload::AgentIds {
                agent_id: agent.agent_id.clone(),
                agent_type: agent.agent_type.clone(),
            }),
        }
    }

    /// What `firing` is matched against and what its runs are started
    /// with. Inside a subagent the agent's own frontmatter hooks are
    /// candidates (and every payload names it: `Common::agent`).
    fn sent(
        &self,
        state: &State,
        ctx: &SeamContext,
        firing: &Firing<'_>,
        env_files: Option<&EnvFileNames>,
    ) -> (Selector, Sent) {
        let agent = ctx.agent.as_ref().map(|agent| agent.agent_type.as_str());
        let sent = Sent {
            json: firing.payload.clone(),
            tool_name: firing.tool_name.map(str::to_owned),
            source: firing.source.map(str::to_owned),
            prompt: firing.prompt.map(str::to_owned),
            call_id: firing.call_id.map(str::to_owned),
            settings_env: self.settings_env(state),
            env_files: env_files.cloned(),
        };
        (firing.selector(agent), sent)
    }

    /// `firing` as a bridge flow fires it.
    fn fire_of(cx: &Cx<'_, Self>, firing: &Firing<'_>) -> Fire<Self> {
        Self::fire_with(cx, firing, None)
    }

    /// `firing` as a bridge flow fires it, with each hook's
    /// `CLAUDE_ENV_FILE` named by `env_files`.
    fn fire_with(
        cx: &Cx<'_, Self>,
        firing: &Firing<'_>,
        env_files: Option<&EnvFileNames>,
    ) -> Fire<Self> {
        let (key, sent) = cx.bridge.sent(cx.state, cx.ctx, firing, env_files);
        let fire = Fire::new(firing.event, key, sent);
        match firing.call_id {
            Some(call_id) => fire.call(call_id),
            None => fire,
        }
    }
}

/// The runs' contexts as one entry for the model, named after the hooks
/// that gave them (`claude:<event>:<commands>`).
fn joined_contexts(fired: &[Fired], event: HookEvent) -> Vec<ContextEntry> {
    let texts: Vec<&str> = fired
        .iter()
        .flat_map(|f| f.reading.contexts.iter().map(String::as_str))
        .collect();
    if texts.is_empty() {
        return Vec::new();
    }
    let sources: Vec<String> = fired
        .iter()
        .filter(|f| !f.reading.contexts.is_empty())
        .map(|f| f.handler.command_text())
        .collect();
    vec![ContextEntry::new(
        texts.join("\n\n"),
        source_of(event, &sources.join(" + ")),
    )]
}

/// Fires `firing`, records its runs as read (no answer of theirs wins
/// over another's) and answers what `read` makes of them.
pub(super) fn answer<'a, Out: Send + 'a>(
    cx: &Cx<'_, Claude>,
    firing: &Firing<'_>,
    read: impl FnOnce(&[Fired]) -> Out + Send + 'a,
) -> Flow<'a, Claude, Out> {
    Flow::fire(Claude::fire_of(cx, firing), move |_, fired| {
        (Record::AsRead, Flow::Done(read(fired)))
    })
}

/// The prompt id of turn `turn`: derived from the session and the turn, so
/// a replay repeats it.
fn prompt_id_for(session_id: &str, turn: u64) -> String {
    dsh_seams::derived_id(&format!("{session_id}:prompt:{turn}"))
}
