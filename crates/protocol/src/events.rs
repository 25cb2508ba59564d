//! Session-log events (the README's "The session log").

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    ExactJson, HookDecision, ModelReply, RequestRecord, Seam, TokenUsage, ToolCall, ToolOrigin,
    mcp_names,
};

/// What kind of party decided whether a tool call ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeciderKind {
    /// A permission rule from a settings file.
    Rule,
    /// The permission mode's own policy.
    Mode,
    /// A hook (or a native plugin).
    Hook,
    /// The person at the approval prompt.
    Person,
    /// A command-line flag (`--allowedTools`, `--disallowedTools`).
    Flag,
}

/// Who decided whether a tool call ran (`tool/result.decided_by`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecidedBy {
    /// Rule, mode, hook, person or flag.
    pub kind: DeciderKind,
    /// Where it came from: a settings file or flag, the mode's name, the
    /// hook's `claude:Event:command` source, `user`.
    pub source: String,
    /// The rule as written, when a rule decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Why, in words (the denial text, the prompt's reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl DecidedBy {
    /// A decider of `kind` from `source`, with no rule or reason.
    pub fn new(kind: DeciderKind, source: impl Into<String>) -> Self {
        DecidedBy {
            kind,
            source: source.into(),
            rule: None,
            reason: None,
        }
    }

    /// The same decider with a reason.
    pub fn because(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }
}

/// Arguments replaced at approval time, on the `tool/result`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultRewrite {
    /// The arguments the tool ran with.
    pub arguments: Value,
    /// Who replaced them.
    pub by: String,
}

/// One line of a session log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// 0, 1, 2, … in file order, gap-free.
    pub seq: u64,
    /// Wall-clock time of the append (RFC 3339, UTC).
    pub ts: String,
    /// What happened.
    #[serde(flatten)]
    pub body: EventBody,
    /// The subagent whose nested run this event belongs to (`a` + 16 hex),
    /// absent for the session's own events. A nested run's events share the
    /// parent's turn number and sit inside the parent's `agent` tool call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
}

/// Why a turn closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnEndReason {
    /// The model stopped calling tools and continuation policy let it stop.
    Completed,
    /// The claimed prompt was blocked by prompt-submit policy (zero steps).
    Rejected,
    /// Cancelled by the user or the embedding application.
    Interrupted,
    /// The model provider failed.
    Error,
    /// The step bound was reached.
    MaxSteps,
    /// Policy asked the turn to stop (`continue: false`).
    Stopped,
}

impl TurnEndReason {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            TurnEndReason::Completed => "completed",
            TurnEndReason::Rejected => "rejected",
            TurnEndReason::Interrupted => "interrupted",
            TurnEndReason::Error => "error",
            TurnEndReason::MaxSteps => "max_steps",
            TurnEndReason::Stopped => "stopped",
        }
    }
}

/// What started a compaction (Claude Code's and Codex's `trigger`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionTrigger {
    /// The user asked for it (`/compact [instructions]`).
    Manual,
    /// The next request would have crossed the context threshold.
    Auto,
}

impl CompactionTrigger {
    /// The wire name (`manual` / `auto`).
    pub fn as_str(self) -> &'static str {
        match self {
            CompactionTrigger::Manual => "manual",
            CompactionTrigger::Auto => "auto",
        }
    }
}

/// A model-facing context that joins the compacted history right after the
/// summary (what session-start hooks with source `compact` added).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactionContext {
    /// The text the model sees.
    pub content: String,
    /// Who added it.
    pub source: String,
}

/// The external hook dialect a `hook/*` event belongs to: its id
/// (contracts §8: `claude`, `codex`, `gemini`, `copilot`, `sdk`).
///
/// An id, not a closed list: a dialect crate names its own
/// ([`Dialect::new`]) and registers with the hook registry, so adding one
/// needs no change here. The associated constants name the ids the
/// contracts list (they keep the spelling of the old enum variants).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Dialect(&'static str);

#[allow(non_upper_case_globals)]
impl Dialect {
    /// Claude Code hooks (`.claude/settings*.json`).
    pub const Claude: Dialect = Dialect("claude");
    /// Codex hooks (`.codex/hooks.json`, `config.toml`).
    pub const Codex: Dialect = Dialect("codex");
    /// Gemini CLI hooks (`.gemini/settings.json`).
    pub const Gemini: Dialect = Dialect("gemini");
    /// GitHub Copilot CLI hooks (`.github/hooks/*.json`).
    pub const Copilot: Dialect = Dialect("copilot");
    /// Hooks an application registered through an SDK's control protocol
    /// (the Claude Agent SDK's `hooks` option).
    pub const Sdk: Dialect = Dialect("sdk");

    /// A dialect named by its id (lowercase, as records carry it).
    pub const fn new(id: &'static str) -> Dialect {
        Dialect(id)
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        self.0
    }

    /// The dialect of a wire name: a known id is its constant; another id
    /// is kept once for the life of the process (a log names a handful).
    /// `None` for a name no dialect can have (empty, over 32 bytes, or not
    /// `[a-z0-9_-]`).
    pub fn from_wire(name: &str) -> Option<Dialect> {
        let valid = !name.is_empty()
            && name.len() <= 32
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
        if !valid {
            return None;
        }
        for known in [
            Dialect::Claude,
            Dialect::Codex,
            Dialect::Gemini,
            Dialect::Copilot,
            Dialect::Sdk,
        ] {
            if known.0 == name {
                return Some(known);
            }
        }
        static OTHERS: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
        let mut others = OTHERS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(id) = others.iter().find(|id| **id == name) {
            return Some(Dialect(id));
        }
        let id: &'static str = Box::leak(name.to_owned().into_boxed_str());
        others.push(id);
        Some(Dialect(id))
    }
}

impl std::fmt::Debug for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // As the enum printed: `Claude`, `Codex`, …
        let mut chars = self.0.chars();
        match chars.next() {
            Some(first) => write!(f, "{}{}", first.to_ascii_uppercase(), chars.as_str()),
            None => Ok(()),
        }
    }
}

impl std::fmt::Display for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl Serialize for Dialect {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for Dialect {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Dialect, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Dialect::from_wire(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("`{name}` is not a hook dialect id")))
    }
}

/// How a hook process ended, as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookOutcomeKind {
    /// The process exited on its own with an exit code.
    Exited,
    /// The process was killed by a signal it did not get from dsh.
    Signaled,
    /// dsh killed it at its deadline.
    TimedOut,
    /// dsh killed it because the work it guarded was cancelled.
    Cancelled,
    /// It never ran (command not found, permission denied, …).
    SpawnFailed,
    /// It was not awaited (`async` handlers); its end is not recorded here.
    Detached,
    /// An HTTP hook answered with a non-2xx status (in `http_status`): a
    /// non-blocking error. (A 2xx is recorded as `exited` with code 0.)
    HttpError,
}

/// The payload of an [`Event`], tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum EventBody {
    /// First line of every session log.
    #[serde(rename = "session/header")]
    SessionHeader(SessionHeaderEvent),
    /// A turn opens (one per claimed send).
    #[serde(rename = "turn/start")]
    TurnStart(TurnStartEvent),
    /// An allowed prompt, after prompt policy (rewritten if a listener rewrote it).
    #[serde(rename = "user/message")]
    UserMessage(UserMessageEvent),
    /// A prompt vetoed by prompt-submit policy, in place of its `user/message`.
    #[serde(rename = "prompt/blocked")]
    PromptBlocked(PromptBlockedEvent),
    /// A model reply.
    #[serde(rename = "assistant/message")]
    AssistantMessage(AssistantMessageEvent),
    /// A sealed tool execution, before policy.
    #[serde(rename = "tool/call")]
    ToolCall(ToolCallEvent),
    /// The authoritative outcome of a tool call.
    #[serde(rename = "tool/result")]
    ToolResult(ToolResultEvent),
    /// Model-facing context added by a plugin or hook.
    #[serde(rename = "context/message")]
    ContextMessage(ContextMessageEvent),
    /// Model-facing steering inside a turn (a forced continuation's reason).
    #[serde(rename = "steering/message")]
    SteeringMessage(SteeringMessageEvent),
    /// A turn closes.
    #[serde(rename = "turn/end")]
    TurnEnd(TurnEndEvent),
    /// A compaction begins (manual `/compact`, or automatic before a request).
    #[serde(rename = "compaction/started")]
    CompactionStarted(CompactionStartedEvent),
    /// The history before `kept_from_seq` is replaced by `summary`: from
    /// here on the model sees the summary, then `contexts`, then the events
    /// from `kept_from_seq` on (kept verbatim), then everything after this
    /// event.
    #[serde(rename = "compaction/completed")]
    CompactionCompleted(CompactionCompletedEvent),
    /// A compaction did not happen; the history is unchanged.
    #[serde(rename = "compaction/failed")]
    CompactionFailed(CompactionFailedEvent),
    /// Before an external hook command runs.
    #[serde(rename = "hook/invoked")]
    HookInvoked(HookInvokedEvent),
    /// After a hook command ends.
    #[serde(rename = "hook/result")]
    HookResult(HookResultEvent),
    /// A native plugin changed (or tried to change) what the loop was about
    /// to use on one of the seed-004 seams: a context transform refused, a
    /// provider request replaced, the turn or session ended after a step, the
    /// model or system prompt set for the next step. Never model-facing.
    #[serde(rename = "seam/note")]
    SeamNote(SeamNoteEvent),
    /// `/clear`: nothing before this reaches the model again.
    /// Between turns; the session-end and session-start hooks of the clear
    /// are recorded around it.
    #[serde(rename = "session/cleared")]
    SessionCleared {},
    /// `/model NAME`: the following requests name `to`. Between turns.
    #[serde(rename = "model/switched")]
    ModelSwitched(ModelSwitchedEvent),
}

/// First line of every session log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionHeaderEvent {
    /// The session's id.
    pub session_id: String,
    /// The session's working directory.
    pub cwd: String,
    /// The dsh version that created the log.
    pub version: String,
    /// Start-up notices (unsupported hook events or handler types, config warnings).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
    /// The model API that served the session (`chat`, `anthropic`,
    /// `responses`); absent for a scripted model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_api: Option<String>,
}

/// A turn opens (one per claimed send).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnStartEvent {
    /// 1-based turn number.
    pub turn: u64,
}

/// An allowed prompt, after prompt policy (rewritten if a listener rewrote it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserMessageEvent {
    /// Turn number.
    pub turn: u64,
    /// The prompt the model sees.
    pub content: String,
    /// Who sent it (`user`, …).
    pub source: String,
    /// The original text when policy rewrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_content: Option<String>,
}

/// A prompt vetoed by prompt-submit policy, in place of its `user/message`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptBlockedEvent {
    /// Turn number.
    pub turn: u64,
    /// The original prompt.
    pub content: String,
    /// Who sent it.
    pub source: String,
    /// Why it was blocked (user-facing).
    pub reason: String,
}

/// A model reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssistantMessageEvent {
    /// Turn number.
    pub turn: u64,
    /// 1-based step within the turn.
    pub step: u64,
    /// The reply text.
    pub content: String,
    /// Tool calls, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Token usage when the provider reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<TokenUsage>,
    /// The provider's thinking / reasoning blocks, kept so a resumed
    /// session sends them back as an uninterrupted one would; absent
    /// when the reply had none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<crate::ThinkingBlocks>,
}

/// A sealed tool execution, before policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallEvent {
    /// Turn number.
    pub turn: u64,
    /// The model's call id.
    pub call_id: String,
    /// dsh's opaque execution id.
    pub execution_id: String,
    /// The execution id of the enclosing call, for nested dispatch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_execution_id: Option<String>,
    /// dsh's native tool name.
    pub tool: String,
    /// The arguments the tool runs with.
    pub arguments: Value,
    /// The model's own arguments, when a hook rewrote them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_arguments: Option<Value>,
    /// Who rewrote the arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewritten_by: Option<String>,
    /// Rewrites that lost to an earlier one (configuration order wins).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rewrite_conflicts: Vec<String>,
    /// The id the provider sent, when dsh renamed a repeated one (the
    /// second `call_1` of a message becomes `call_1~2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_call_id: Option<String>,
    /// Where the tool comes from, under its source's own names, when it
    /// is not dsh's own (an MCP tool's configured server and tool name,
    /// which `tool` may have sanitized).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<ToolOrigin>,
}

impl ToolCallEvent {
    /// The server and tool names of an MCP call: the recorded origin, else
    /// read back from `tool` ([`mcp_names`]).
    pub fn mcp_names(&self) -> Option<(&str, &str)> {
        mcp_names(&self.tool, self.origin.as_ref())
    }
}

/// The authoritative outcome of a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResultEvent {
    /// Turn number.
    pub turn: u64,
    /// The model's call id.
    pub call_id: String,
    /// Whether the model is told the call failed.
    pub is_error: bool,
    /// The text the model sees.
    pub content: String,
    /// Which phase decided the outcome (`executed`, `denied`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disposition: Option<String>,
    /// Which rule, mode, hook, person or flag decided whether the call
    /// ran, when the pipeline knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<DecidedBy>,
    /// Arguments an approval replaced after the `tool/call` was logged
    /// (PermissionRequest `updatedInput`): what the tool ran with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewrite: Option<ResultRewrite>,
    /// An MCP result's content blocks as the model is given them on APIs
    /// that take blocks (`content` is their text, one block per line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_blocks: Option<Vec<crate::ContentBlock>>,
    /// What the model's later history shows as the call's input when it is
    /// not the model's own (a rewrite whose plugin asked for it); absent: the
    /// model's own input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shown_input: Option<ShownInput>,
}

/// The input the model's later history shows for a call, in place of the
/// model's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShownInput {
    /// The arguments of the call's `tool/call` event (what it ran with).
    Rewritten,
    /// `{}`: the rewritten input is not an object.
    Emptied,
}

/// Model-facing context added by a plugin or hook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextMessageEvent {
    /// Turn number.
    pub turn: u64,
    /// The text the model sees.
    pub content: String,
    /// Who added it.
    pub source: String,
}

/// Model-facing steering inside a turn (a forced continuation's reason).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteeringMessageEvent {
    /// Turn number.
    pub turn: u64,
    /// The text the model sees.
    pub content: String,
    /// Who steered.
    pub source: String,
}

/// A turn closes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnEndEvent {
    /// Turn number.
    pub turn: u64,
    /// Why it closed.
    pub reason: TurnEndReason,
    /// A human-readable explanation (model error text, stop reason, cap notice).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A compaction begins (manual `/compact`, or automatic before a request).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactionStartedEvent {
    /// Turn number.
    pub turn: u64,
    /// Manual or automatic.
    pub trigger: CompactionTrigger,
    /// The user's `/compact` text, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_instructions: Option<String>,
    /// dsh's estimate of the conversation's size in tokens.
    pub estimated_tokens: u64,
}

/// The history before `kept_from_seq` is replaced by `summary`: from
/// here on the model sees the summary, then `contexts`, then the events
/// from `kept_from_seq` on (kept verbatim), then everything after this
/// event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactionCompletedEvent {
    /// Turn number.
    pub turn: u64,
    /// Manual or automatic.
    pub trigger: CompactionTrigger,
    /// The summary exactly as written (the model's raw reply, or a plugin's text).
    pub summary: String,
    /// `model`, or the name of the plugin that supplied the summary.
    pub summarized_by: String,
    /// The first event kept verbatim after the summary (the latest
    /// assistant message and what followed it); none when nothing is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept_from_seq: Option<u64>,
    /// Contexts placed right after the summary (session-start `compact` hooks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contexts: Vec<CompactionContext>,
    /// dsh's estimate of the conversation's size before compaction.
    pub tokens_before: u64,
}

/// A compaction did not happen; the history is unchanged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactionFailedEvent {
    /// Turn number.
    pub turn: u64,
    /// Manual or automatic.
    pub trigger: CompactionTrigger,
    /// Why (a hook's block text, a plugin's cancel reason, a model error).
    pub reason: String,
}

/// Before an external hook command runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookInvokedEvent {
    /// The open turn, or none for session-scoped hooks (session start before turn 1, session end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u64>,
    /// Pairs this with its `hook/result`.
    pub invocation_id: String,
    /// `claude` or `codex`.
    pub dialect: Dialect,
    /// The external event name (`PreToolUse`, …).
    pub event: String,
    /// The canonical seam it runs on.
    pub seam: Seam,
    /// The matcher of the group it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matcher: Option<String>,
    /// Where the handler was configured (`file:line:column` or `file#hooks.Event[0].hooks[1]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// The command as configured.
    pub command: String,
    /// The exact JSON sent on stdin.
    pub input: ExactJson,
    /// The tool call this hook judges, for tool events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
}

/// After a hook command ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookResultEvent {
    /// The open turn, or none for session-scoped hooks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u64>,
    /// Pairs this with its `hook/invoked`.
    pub invocation_id: String,
    /// How the process ended.
    pub outcome: HookOutcomeKind,
    /// Exit code; null if it never ran or was killed.
    pub exit_code: Option<i32>,
    /// The signal that ended it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// Whether dsh killed it at its deadline.
    pub timed_out: bool,
    /// Wall time from spawn to reap.
    pub duration_ms: u64,
    /// Captured stdout (bounded; a marker says when cut).
    pub stdout: String,
    /// Captured stderr (bounded; a marker says when cut).
    pub stderr: String,
    /// Why it could not run, or other runner diagnostics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The status an HTTP hook's response had.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    /// The hook's stdout as the dialect parsed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parsed_output: Option<Value>,
    /// What it meant on the seam (boxed: it is by far the largest field).
    pub decision: Box<HookDecision>,
}

/// A native plugin changed (or tried to change) what the loop was about
/// to use on one of the seed-004 seams: a context transform refused, a
/// provider request replaced, the turn or session ended after a step, the
/// model or system prompt set for the next step. Never model-facing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeamNoteEvent {
    /// The open turn, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u64>,
    /// The seam.
    pub seam: Seam,
    /// The plugin that acted.
    pub plugin: String,
    /// What happened.
    pub kind: SeamNoteKind,
    /// For people.
    pub message: String,
    /// What was used instead, when it matters (a replaced request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<SeamNoteDetail>,
}

/// `/model NAME`: the following requests name `to`. Between turns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelSwitchedEvent {
    /// The model used until now.
    pub from: String,
    /// The model used from now on.
    pub to: String,
}

/// What a plugin put in the model's or the loop's place, on a `seam/note`
/// (its `kind` says which). Read back by shape, in this order: a string, a
/// request record, a reply, `{"text": …}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SeamNoteDetail {
    /// The system prompt set for the next step (`system_prompt_replaced`).
    Prompt(String),
    /// The request sent instead, as `--requests-out` records one
    /// (`request_replaced`).
    Request(RequestRecord),
    /// The reply given in the model's place (`request_answered`).
    Reply(ModelReply),
    /// The text shown in place of the assistant's (`display_replaced`).
    Shown(ShownText),
}

/// `{"text": …}`: the assistant text as shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShownText {
    /// What is shown.
    pub text: String,
}

/// What a `seam/note` records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeamNoteKind {
    /// A context transform's message list was refused (it broke
    /// tool-call/result adjacency); the untransformed list was sent.
    ContextRejected,
    /// A context transform replaced the message list for one request.
    ContextReplaced,
    /// The outgoing provider request was replaced.
    RequestReplaced,
    /// A plugin kept the provider request from being sent; the turn ended.
    RequestBlocked,
    /// A plugin answered in the model's place; no request was sent.
    RequestAnswered,
    /// A plugin ended the turn after a step.
    TurnEndRequested,
    /// A plugin ended the session after a step: no further queued send runs.
    SessionEndRequested,
    /// A plugin set the model for the next step.
    ModelSwitched,
    /// A plugin set the system prompt for the next step.
    SystemPromptReplaced,
    /// A plugin replaced the assistant text shown to the user (display
    /// only; `detail.text` is what is shown, the history keeps the model's).
    DisplayReplaced,
}

impl EventBody {
    /// The `type` tag of this event.
    pub fn type_name(&self) -> &'static str {
        match self {
            EventBody::SessionHeader(_) => "session/header",
            EventBody::TurnStart(_) => "turn/start",
            EventBody::UserMessage(_) => "user/message",
            EventBody::PromptBlocked(_) => "prompt/blocked",
            EventBody::AssistantMessage(_) => "assistant/message",
            EventBody::ToolCall(_) => "tool/call",
            EventBody::ToolResult(_) => "tool/result",
            EventBody::ContextMessage(_) => "context/message",
            EventBody::SteeringMessage(_) => "steering/message",
            EventBody::TurnEnd(_) => "turn/end",
            EventBody::CompactionStarted(_) => "compaction/started",
            EventBody::CompactionCompleted(_) => "compaction/completed",
            EventBody::CompactionFailed(_) => "compaction/failed",
            EventBody::HookInvoked(_) => "hook/invoked",
            EventBody::HookResult(_) => "hook/result",
            EventBody::SeamNote(_) => "seam/note",
            EventBody::SessionCleared { .. } => "session/cleared",
            EventBody::ModelSwitched(_) => "model/switched",
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn note(detail: &str) -> String {
        format!(
            r#"{{"type":"seam/note","seq":4,"ts":"t","turn":1,"seam":"model-request","plugin":"p","kind":"request_answered","message":"m","detail":{detail}}}"#
        )
    }

    fn detail_of(line: &str) -> SeamNoteDetail {
        let event: Event = serde_json::from_str(line).unwrap();
        let EventBody::SeamNote(SeamNoteEvent {
            detail: Some(detail),
            ..
        }) = event.body
        else {
            panic!("{line}")
        };
        detail
    }

    #[test]
    fn seam_note_details_read_back_by_shape_and_keep_their_bytes() {
        let request =
            r#"{"turn":1,"step":2,"messages":[{"role":"user","content":"hi"}],"tools":["bash"]}"#;
        let reply = r#"{"text":"canned","tool_calls":[],"usage":null}"#;
        let cases = [
            (r#""You are terse.""#, "Prompt"),
            (request, "Request"),
            (reply, "Reply"),
            (r#"{"text":"shown"}"#, "Shown"),
        ];
        for (detail, variant) in cases {
            let read = detail_of(&note(detail));
            let kind = match &read {
                SeamNoteDetail::Prompt(_) => "Prompt",
                SeamNoteDetail::Request(_) => "Request",
                SeamNoteDetail::Reply(_) => "Reply",
                SeamNoteDetail::Shown(_) => "Shown",
            };
            assert_eq!(kind, variant, "{detail}");
            assert_eq!(serde_json::to_string(&read).unwrap(), detail);
        }
        // A shape no plugin records is refused, not kept half-read.
        assert!(serde_json::from_str::<Event>(&note(r#"{"text":"x","extra":1}"#)).is_err());
    }
}
