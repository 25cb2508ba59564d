//! Interpreting one hook run the way Codex 0.169 does: strict output
//! validation (an unknown field anywhere makes the whole output invalid and
//! the run `failed`, fail-open), per-event exit-code rules, and Codex's own
//! run classification (`completed` / `failed` / `blocked` / `stopped` with
//! `warning` / `context` / `feedback` / `stop` / `error` entries).

use dsh_hook_runner::HookExit;
use dsh_hooks::names::Tabled;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

use crate::event::CodexEvent;

/// What a run produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFacts<'a> {
    /// How it ended, as the hook runner saw it.
    pub exit: HookExit,
    /// Its configured timeout, in seconds (the text of a timeout says it).
    pub timeout_secs: u64,
    /// Its stdout (UTF-8 lossy).
    pub stdout: &'a str,
    /// Its stderr (UTF-8 lossy).
    pub stderr: &'a str,
}

/// Codex's run status (`HookRunSummary.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    /// Ran; maybe added context or a warning.
    Completed,
    /// Failed; its output was ignored (fail-open).
    Failed,
    /// Blocked the action (feedback).
    Blocked,
    /// `continue: false`.
    Stopped,
}

impl RunStatus {
    /// The log's typed status.
    pub fn hook_status(self) -> dsh_protocol::HookRunStatus {
        use dsh_protocol::HookRunStatus;
        match self {
            RunStatus::Completed => HookRunStatus::Completed,
            RunStatus::Failed => HookRunStatus::Failed,
            RunStatus::Blocked => HookRunStatus::Blocked,
            RunStatus::Stopped => HookRunStatus::Stopped,
        }
    }

    /// Codex's name.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Blocked => "blocked",
            RunStatus::Stopped => "stopped",
        }
    }
}

/// Codex's entry kinds (`HookOutputEntryKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// `systemMessage` (user-only).
    Warning,
    /// `continue: false` with a `stopReason`.
    Stop,
    /// A block reason.
    Feedback,
    /// Model-facing context.
    Context,
    /// Why the run failed.
    Error,
}

impl EntryKind {
    /// Codex's name.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Warning => "warning",
            EntryKind::Stop => "stop",
            EntryKind::Feedback => "feedback",
            EntryKind::Context => "context",
            EntryKind::Error => "error",
        }
    }
}

/// One entry of a run summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputEntry {
    /// Kind.
    pub kind: EntryKind,
    /// Text.
    pub text: String,
}

/// What one run means on its event.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Nothing beyond contexts and warnings.
    None,
    /// Block with a reason (PreToolUse deny/block, PostToolUse, UserPromptSubmit, Stop).
    Block {
        /// The reason (stderr trimmed for exit 2).
        reason: String,
    },
    /// `continue: false`.
    Stop {
        /// `stopReason`.
        reason: Option<String>,
    },
    /// PreToolUse `allow` with `updatedInput`.
    Rewrite {
        /// The new `tool_input` (Codex's shape).
        updated_input: Value,
    },
    /// PermissionRequest `allow`.
    PermissionAllow,
    /// PermissionRequest `deny` (or exit 2).
    PermissionDeny {
        /// The message.
        message: String,
    },
}

/// The interpretation of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Interpretation {
    /// Codex's classification.
    pub status: RunStatus,
    /// Codex's entries, in Codex's order.
    pub entries: Vec<OutputEntry>,
    /// The decision.
    pub effect: Effect,
    /// Model-facing contexts, in order (before any truncation).
    pub contexts: Vec<String>,
    /// `systemMessage`, shown to the user only.
    pub system_message: Option<String>,
    /// The stdout as JSON, when it parsed.
    pub parsed: Option<Value>,
}

impl Interpretation {
    fn new() -> Self {
        Interpretation {
            status: RunStatus::Completed,
            entries: Vec::new(),
            effect: Effect::None,
            contexts: Vec::new(),
            system_message: None,
            parsed: None,
        }
    }

    fn failed(error: impl Into<String>) -> Self {
        let mut this = Interpretation::new();
        this.fail(error);
        this
    }

    fn fail(&mut self, error: impl Into<String>) {
        self.status = RunStatus::Failed;
        self.effect = Effect::None;
        self.contexts.clear();
        self.entries
            .retain(|entry| entry.kind == EntryKind::Warning);
        self.entries.push(OutputEntry {
            kind: EntryKind::Error,
            text: error.into(),
        });
    }

    fn warn(&mut self, message: Option<String>) {
        if let Some(message) = message {
            self.entries.push(OutputEntry {
                kind: EntryKind::Warning,
                text: message.clone(),
            });
            self.system_message = Some(message);
        }
    }

    fn context(&mut self, context: Option<String>) {
        if let Some(context) = context {
            self.entries.push(OutputEntry {
                kind: EntryKind::Context,
                text: context.clone(),
            });
            self.contexts.push(context);
        }
    }

    fn block(&mut self, reason: String) {
        self.status = RunStatus::Blocked;
        self.entries.push(OutputEntry {
            kind: EntryKind::Feedback,
            text: reason.clone(),
        });
        self.effect = Effect::Block { reason };
    }

    fn stop(&mut self, reason: Option<String>) {
        self.status = RunStatus::Stopped;
        if let Some(reason) = &reason {
            self.entries.push(OutputEntry {
                kind: EntryKind::Stop,
                text: reason.clone(),
            });
        }
        self.effect = Effect::Stop { reason };
    }
}

fn non_empty(text: Option<&str>) -> Option<String> {
    text.map(str::trim)
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
}

fn looks_like_json(text: &str) -> bool {
    let text = text.trim_start();
    text.starts_with('{') || text.starts_with('[')
}

// ----------------------------------------------------------------- wire types

#[derive(Debug, Deserialize, PartialEq, Eq)]
enum BlockOnly {
    #[serde(rename = "block")]
    Block,
}

#[derive(Debug, Deserialize, PartialEq, Eq)]
enum LegacyPreDecision {
    #[serde(rename = "approve")]
    Approve,
    #[serde(rename = "block")]
    Block,
}

#[derive(Debug, Deserialize, PartialEq, Eq)]
enum PermissionDecision {
    #[serde(rename = "allow")]
    Allow,
    #[serde(rename = "deny")]
    Deny,
    #[serde(rename = "ask")]
    Ask,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PreToolUseSpecific {
    #[serde(rename = "hookEventName")]
    hook_event_name: String,
    #[serde(default, rename = "permissionDecision")]
    permission_decision: Option<PermissionDecision>,
    #[serde(default, rename = "permissionDecisionReason")]
    permission_decision_reason: Option<String>,
    #[serde(default, rename = "updatedInput")]
    updated_input: Option<Value>,
    #[serde(default, rename = "additionalContext")]
    additional_context: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PreToolUseWire {
    #[serde(default, rename = "continue")]
    continue_processing: Option<bool>,
    #[serde(default, rename = "stopReason")]
    stop_reason: Option<String>,
    #[serde(default, rename = "suppressOutput")]
    suppress_output: Option<bool>,
    #[serde(default, rename = "systemMessage")]
    system_message: Option<String>,
    #[serde(default)]
    decision: Option<LegacyPreDecision>,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default, rename = "hookSpecificOutput")]
    specific: Option<PreToolUseSpecific>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PermissionDecisionWire {
    behavior: PermissionBehavior,
    #[serde(default)]
    message: Option<String>,
    /// Unsupported: only its presence is read (a non-null value fails the run).
    #[serde(default, rename = "updatedInput")]
    updated_input: Option<IgnoredAny>,
    /// Unsupported: only its presence is read.
    #[serde(default, rename = "updatedPermissions")]
    updated_permissions: Option<IgnoredAny>,
    #[serde(default)]
    interrupt: Option<bool>,
}

#[derive(Debug, Deserialize, PartialEq, Eq)]
enum PermissionBehavior {
    #[serde(rename = "allow")]
    Allow,
    #[serde(rename = "deny")]
    Deny,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PermissionSpecific {
    #[serde(rename = "hookEventName")]
    hook_event_name: String,
    #[serde(default)]
    decision: Option<PermissionDecisionWire>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PermissionWire {
    #[serde(default, rename = "continue")]
    continue_processing: Option<bool>,
    #[serde(default, rename = "stopReason")]
    stop_reason: Option<String>,
    #[serde(default, rename = "suppressOutput")]
    suppress_output: Option<bool>,
    #[serde(default, rename = "systemMessage")]
    system_message: Option<String>,
    #[serde(default, rename = "hookSpecificOutput")]
    specific: Option<PermissionSpecific>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PostToolUseSpecific {
    #[serde(rename = "hookEventName")]
    hook_event_name: String,
    #[serde(default, rename = "additionalContext")]
    additional_context: Option<String>,
    /// Unsupported: only its presence is read (a non-null value fails the run).
    #[serde(default, rename = "updatedMCPToolOutput")]
    updated_mcp_tool_output: Option<IgnoredAny>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PostToolUseWire {
    #[serde(default, rename = "continue")]
    continue_processing: Option<bool>,
    #[serde(default, rename = "stopReason")]
    stop_reason: Option<String>,
    #[serde(default, rename = "suppressOutput")]
    suppress_output: Option<bool>,
    #[serde(default, rename = "systemMessage")]
    system_message: Option<String>,
    #[serde(default)]
    decision: Option<BlockOnly>,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default, rename = "hookSpecificOutput")]
    specific: Option<PostToolUseSpecific>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ContextSpecific {
    #[serde(rename = "hookEventName")]
    hook_event_name: String,
    #[serde(default, rename = "additionalContext")]
    additional_context: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PromptWire {
    #[serde(default, rename = "continue")]
    continue_processing: Option<bool>,
    #[serde(default, rename = "stopReason")]
    stop_reason: Option<String>,
    #[serde(default, rename = "suppressOutput")]
    _suppress_output: Option<bool>,
    #[serde(default, rename = "systemMessage")]
    system_message: Option<String>,
    #[serde(default)]
    decision: Option<BlockOnly>,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default, rename = "hookSpecificOutput")]
    specific: Option<ContextSpecific>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionStartWire {
    #[serde(default, rename = "continue")]
    continue_processing: Option<bool>,
    #[serde(default, rename = "stopReason")]
    stop_reason: Option<String>,
    #[serde(default, rename = "suppressOutput")]
    _suppress_output: Option<bool>,
    #[serde(default, rename = "systemMessage")]
    system_message: Option<String>,
    #[serde(default, rename = "hookSpecificOutput")]
    specific: Option<ContextSpecific>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StopWire {
    #[serde(default, rename = "continue")]
    continue_processing: Option<bool>,
    #[serde(default, rename = "stopReason")]
    stop_reason: Option<String>,
    #[serde(default, rename = "suppressOutput")]
    _suppress_output: Option<bool>,
    #[serde(default, rename = "systemMessage")]
    system_message: Option<String>,
    #[serde(default)]
    decision: Option<BlockOnly>,
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UniversalWire {
    #[serde(default, rename = "continue")]
    continue_processing: Option<bool>,
    #[serde(default, rename = "stopReason")]
    stop_reason: Option<String>,
    #[serde(default, rename = "suppressOutput")]
    _suppress_output: Option<bool>,
    #[serde(default, rename = "systemMessage")]
    system_message: Option<String>,
}

// -------------------------------------------------------------- interpreter

/// Interprets one run of a handler of `event`. A PostToolUse
/// `updatedMCPToolOutput` always fails: Codex 0.169 rejects it even for MCP
/// tools (`mcp_post_updated_output`).
pub fn interpret(event: CodexEvent, facts: &RunFacts<'_>) -> Interpretation {
    match &facts.exit {
        // A limit never gets here (the reader answers a dsh fault first);
        // read like any other failure to start.
        HookExit::SpawnFailed(message) | HookExit::DshLimit(message) => {
            Interpretation::failed(message.clone())
        }
        // Codex has no HTTP hooks; the runner only answers this for one.
        HookExit::Responded(status) => Interpretation::failed(format!("HTTP status {status}")),
        HookExit::TimedOut => {
            Interpretation::failed(format!("hook timed out after {}s", facts.timeout_secs))
        }
        HookExit::Cancelled => Interpretation::failed("hook cancelled"),
        // Killed by a signal dsh did not send.
        HookExit::Signaled(_) => Interpretation::failed("hook exited without a status code"),
        HookExit::Exited(0) => interpret_stdout(event, facts.stdout),
        HookExit::Exited(2) => interpret_exit2(event, facts.stderr),
        HookExit::Exited(code) => Interpretation::failed(format!("hook exited with code {code}")),
    }
}

fn interpret_exit2(event: CodexEvent, stderr: &str) -> Interpretation {
    let reason = non_empty(Some(stderr));
    let mut this = Interpretation::new();
    let missing = match event {
        CodexEvent::PreToolUse => {
            "PreToolUse hook exited with code 2 but did not write a blocking reason to stderr"
        }
        CodexEvent::UserPromptSubmit => {
            "UserPromptSubmit hook exited with code 2 but did not write a blocking reason to stderr"
        }
        CodexEvent::PostToolUse => {
            "PostToolUse hook exited with code 2 but did not write feedback to stderr"
        }
        CodexEvent::Stop => {
            "Stop hook exited with code 2 but did not write a continuation prompt to stderr"
        }
        CodexEvent::SubagentStop => {
            "SubagentStop hook exited with code 2 but did not write a continuation prompt to stderr"
        }
        CodexEvent::PermissionRequest => {
            "PermissionRequest hook exited with code 2 but did not write a denial reason to stderr"
        }
        CodexEvent::PreModelRequest
        | CodexEvent::PostModelRequest
        | CodexEvent::PreCompact
        | CodexEvent::PostCompact => {
            return Interpretation::failed(
                reason.unwrap_or_else(|| "hook exited with code 2".to_owned()),
            );
        }
        CodexEvent::SessionStart
        | CodexEvent::SessionEnd
        | CodexEvent::SubagentStart
        | CodexEvent::Interrupt => return Interpretation::failed("hook exited with code 2"),
    };
    match reason {
        Some(reason) if event == CodexEvent::PermissionRequest => {
            this.status = RunStatus::Blocked;
            this.entries.push(OutputEntry {
                kind: EntryKind::Feedback,
                text: reason.clone(),
            });
            this.effect = Effect::PermissionDeny { message: reason };
            this
        }
        Some(reason) => {
            this.block(reason);
            this
        }
        None => Interpretation::failed(missing),
    }
}

fn interpret_stdout(event: CodexEvent, stdout: &str) -> Interpretation {
    let trimmed = stdout.trim();
    let mut this = Interpretation::new();
    this.parsed = serde_json::from_str::<Value>(trimmed).ok();
    if matches!(
        event,
        CodexEvent::PreModelRequest | CodexEvent::PostModelRequest | CodexEvent::SessionEnd
    ) || trimmed.is_empty()
    {
        return this;
    }
    let parsed = this.parsed.clone();
    let invalid = || {
        let mut failed = Interpretation::failed(event.invalid_json_message());
        failed.parsed = parsed.clone();
        failed
    };
    macro_rules! parse {
        ($wire:ty) => {
            match serde_json::from_str::<$wire>(trimmed) {
                Ok(wire) => wire,
                Err(_) if looks_like_json(trimmed) => return invalid(),
                Err(_) => return plain_text(event, trimmed, this),
            }
        };
    }
    // Wires with `hookSpecificOutput`: it must name this very event.
    macro_rules! parse_specific {
        ($wire:ty) => {{
            let wire = parse!($wire);
            if wire
                .specific
                .as_ref()
                .is_some_and(|s| s.hook_event_name != event.as_str())
            {
                return invalid();
            }
            wire
        }};
    }
    match event {
        CodexEvent::PreToolUse => {
            let wire = parse_specific!(PreToolUseWire);
            pre_tool_use(wire, this)
        }
        CodexEvent::PermissionRequest => {
            let wire = parse_specific!(PermissionWire);
            permission_request(wire, this)
        }
        CodexEvent::PostToolUse => {
            let wire = parse_specific!(PostToolUseWire);
            post_tool_use(wire, this)
        }
        CodexEvent::UserPromptSubmit => {
            let wire = parse_specific!(PromptWire);
            user_prompt_submit(wire, this)
        }
        CodexEvent::SessionStart | CodexEvent::SubagentStart => {
            let wire = parse_specific!(SessionStartWire);
            this.warn(wire.system_message);
            this.context(wire.specific.and_then(|s| s.additional_context));
            if wire.continue_processing == Some(false) {
                this.stop(wire.stop_reason);
            }
            this
        }
        CodexEvent::Stop | CodexEvent::SubagentStop => {
            let wire = parse!(StopWire);
            this.warn(wire.system_message);
            if wire.continue_processing == Some(false) {
                this.stop(wire.stop_reason);
            } else if wire.decision == Some(BlockOnly::Block) {
                match non_empty(wire.reason.as_deref()) {
                    Some(reason) => this.block(reason),
                    None => this.fail(format!(
                        "{event} hook returned decision:block without a non-empty reason"
                    )),
                }
            }
            this
        }
        CodexEvent::Interrupt | CodexEvent::PreCompact | CodexEvent::PostCompact => {
            let wire = parse!(UniversalWire);
            this.warn(wire.system_message);
            // Only compaction honours `continue: false`; Interrupt ignores it.
            if event == CodexEvent::PreCompact && wire.continue_processing == Some(false) {
                this.stop(wire.stop_reason);
            }
            this
        }
        CodexEvent::PreModelRequest | CodexEvent::PostModelRequest | CodexEvent::SessionEnd => this,
    }
}

fn plain_text(event: CodexEvent, trimmed: &str, mut this: Interpretation) -> Interpretation {
    match event {
        CodexEvent::UserPromptSubmit | CodexEvent::SessionStart | CodexEvent::SubagentStart => {
            this.context(Some(trimmed.to_owned()));
            this
        }
        CodexEvent::Interrupt => {
            let mut failed = Interpretation::failed("Interrupt hook returned non-JSON stdout");
            failed.parsed = None;
            failed
        }
        CodexEvent::PreModelRequest
        | CodexEvent::PostModelRequest
        | CodexEvent::PreToolUse
        | CodexEvent::PermissionRequest
        | CodexEvent::PostToolUse
        | CodexEvent::PreCompact
        | CodexEvent::PostCompact
        | CodexEvent::SessionEnd
        | CodexEvent::SubagentStop
        | CodexEvent::Stop => this,
    }
}

fn pre_tool_use(wire: PreToolUseWire, mut this: Interpretation) -> Interpretation {
    const P: &str = "PreToolUse hook returned";
    this.warn(wire.system_message);
    if wire.continue_processing == Some(false) {
        this.fail(format!("{P} unsupported continue:false"));
        return this;
    }
    if wire.stop_reason.is_some() {
        this.fail(format!("{P} unsupported stopReason"));
        return this;
    }
    if wire.suppress_output == Some(true) {
        this.fail(format!("{P} unsupported suppressOutput"));
        return this;
    }
    let (decision, reason, updated, context) = match wire.specific {
        Some(s) => (
            s.permission_decision,
            s.permission_decision_reason,
            s.updated_input,
            s.additional_context,
        ),
        None => (None, None, None, None),
    };
    this.context(context);
    if decision.is_some() || reason.is_some() || updated.is_some() {
        match (decision, updated) {
            (Some(PermissionDecision::Allow), Some(updated_input)) => {
                this.effect = Effect::Rewrite { updated_input };
            }
            (Some(PermissionDecision::Allow), None) => {
                this.fail(format!("{P} unsupported permissionDecision:allow"));
            }
            (Some(PermissionDecision::Ask), _) => {
                this.fail(format!("{P} unsupported permissionDecision:ask"));
            }
            (_, Some(_)) => {
                this.fail(format!("{P} updatedInput without permissionDecision:allow"));
            }
            (Some(PermissionDecision::Deny), None) => match non_empty(reason.as_deref()) {
                Some(reason) => this.block(reason),
                None => this.fail(format!(
                    "{P} permissionDecision:deny without a non-empty permissionDecisionReason"
                )),
            },
            (None, None) => {
                this.fail(format!(
                    "{P} permissionDecisionReason without permissionDecision"
                ));
            }
        }
        return this;
    }
    match wire.decision {
        Some(LegacyPreDecision::Block) => match non_empty(wire.reason.as_deref()) {
            Some(reason) => this.block(reason),
            None => this.fail(format!("{P} decision:block without a non-empty reason")),
        },
        Some(LegacyPreDecision::Approve) => this.fail(format!("{P} unsupported decision:approve")),
        None if wire.reason.is_some() => this.fail(format!("{P} reason without decision")),
        None => {}
    }
    this
}

fn permission_request(wire: PermissionWire, mut this: Interpretation) -> Interpretation {
    const P: &str = "PermissionRequest hook returned";
    this.warn(wire.system_message);
    if wire.continue_processing == Some(false) {
        this.fail(format!("{P} unsupported continue:false"));
        return this;
    }
    if wire.stop_reason.is_some() {
        this.fail(format!("{P} unsupported stopReason"));
        return this;
    }
    if wire.suppress_output == Some(true) {
        this.fail(format!("{P} unsupported suppressOutput"));
        return this;
    }
    let Some(decision) = wire.specific.and_then(|s| s.decision) else {
        return this;
    };
    if decision.updated_input.is_some() {
        this.fail(format!("{P} unsupported updatedInput"));
    } else if decision.updated_permissions.is_some() {
        this.fail(format!("{P} unsupported updatedPermissions"));
    } else if decision.interrupt == Some(true) {
        this.fail(format!("{P} unsupported interrupt:true"));
    } else {
        match decision.behavior {
            PermissionBehavior::Allow => this.effect = Effect::PermissionAllow,
            PermissionBehavior::Deny => {
                let message = non_empty(decision.message.as_deref())
                    .unwrap_or_else(|| "PermissionRequest hook denied approval".to_owned());
                this.status = RunStatus::Blocked;
                this.entries.push(OutputEntry {
                    kind: EntryKind::Feedback,
                    text: message.clone(),
                });
                this.effect = Effect::PermissionDeny { message };
            }
        }
    }
    this
}

fn post_tool_use(wire: PostToolUseWire, mut this: Interpretation) -> Interpretation {
    const P: &str = "PostToolUse hook returned";
    this.warn(wire.system_message);
    if wire.suppress_output == Some(true) {
        this.fail(format!("{P} unsupported suppressOutput"));
        return this;
    }
    let (context, mcp) = match wire.specific {
        Some(s) => (s.additional_context, s.updated_mcp_tool_output),
        None => (None, None),
    };
    if mcp.is_some() {
        this.fail(format!("{P} unsupported updatedMCPToolOutput"));
        return this;
    }
    this.context(context);
    if wire.continue_processing == Some(false) {
        this.stop(wire.stop_reason);
    } else if wire.decision == Some(BlockOnly::Block) {
        match non_empty(wire.reason.as_deref()) {
            Some(reason) => this.block(reason),
            None => this.fail(format!("{P} decision:block without a non-empty reason")),
        }
    } else if wire.reason.is_some() {
        this.fail(format!("{P} reason without decision"));
    }
    this
}

fn user_prompt_submit(wire: PromptWire, mut this: Interpretation) -> Interpretation {
    this.warn(wire.system_message);
    let context = wire.specific.and_then(|s| s.additional_context);
    let invalid_block =
        wire.decision == Some(BlockOnly::Block) && non_empty(wire.reason.as_deref()).is_none();
    if !invalid_block {
        this.context(context);
    }
    if wire.continue_processing == Some(false) {
        this.stop(wire.stop_reason);
    } else if invalid_block {
        this.fail("UserPromptSubmit hook returned decision:block without a non-empty reason");
    } else if wire.decision == Some(BlockOnly::Block)
        && let Some(reason) = non_empty(wire.reason.as_deref())
    {
        this.block(reason);
    }
    this
}
