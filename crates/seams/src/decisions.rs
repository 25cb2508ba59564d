//! Typed decisions, one small enum per seam.

use serde::Serialize;
use serde_json::Value;

/// A piece of model-facing context with the name of who supplied it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContextEntry {
    /// The text the model sees, exactly.
    pub content: String,
    /// Who added it (plugin name, or `claude:PostToolUse:<command>` for a hook).
    pub source: String,
}

impl ContextEntry {
    /// A context entry.
    pub fn new(content: impl Into<String>, source: impl Into<String>) -> Self {
        ContextEntry {
            content: content.into(),
            source: source.into(),
        }
    }
}

/// Why the session started (or restarted its context).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionStartSource {
    /// A new session.
    Startup,
    /// A session reopened from its log.
    Resume,
    /// `/clear` started a fresh conversation.
    Clear,
    /// Reserved: history compacted.
    Compact,
}

impl SessionStartSource {
    /// The wire name, as Claude Code and Codex spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionStartSource::Startup => "startup",
            SessionStartSource::Resume => "resume",
            SessionStartSource::Clear => "clear",
            SessionStartSource::Compact => "compact",
        }
    }
}

/// Why the session is ending.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionEndReason {
    /// The user exited (Ctrl-D, second Ctrl-C, `/exit`).
    Exit,
    /// A headless or replayed session ran out of work.
    Other,
    /// `/clear` ended the conversation (a new one starts in the same session).
    Clear,
}

/// What prompt-submit policy decided about a claimed send.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum PromptDecision {
    /// The prompt proceeds, possibly rewritten, possibly with extra contexts.
    Allow {
        /// Replacement prompt text.
        rewrite: Option<String>,
        /// Contexts appended after the `user/message`, each with its own source.
        contexts: Vec<ContextEntry>,
    },
    /// The prompt is vetoed: `prompt/blocked` and a zero-step `rejected` turn.
    Block {
        /// Why (user-facing; never model-facing).
        reason: String,
    },
    /// The prompt is kept but the turn stops before any model request (`stopped`).
    Stop {
        /// Why (user-facing).
        reason: String,
        /// What the conversation keeps besides the prompt.
        kept: StoppedPrompt,
    },
}

/// What the conversation keeps of a prompt stopped before any model request,
/// so that the next turn's model sees (or does not see) why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StoppedPrompt {
    /// The prompt alone (Codex).
    PromptOnly,
    /// The prompt, then a user-side note saying why and an assistant reply
    /// that no request was made (Claude Code: `Operation stopped by hook: R`
    /// and `No response requested.`).
    WithExchange {
        /// The user-side note (a steering message).
        note: String,
        /// The assistant's reply, recorded without a model request.
        reply: String,
        /// Who stopped the prompt.
        source: String,
    },
}

impl PromptDecision {
    /// Allow unchanged, with no contexts.
    pub fn allow() -> Self {
        PromptDecision::Allow {
            rewrite: None,
            contexts: Vec::new(),
        }
    }
}

/// What the input-rewrite seam decided for a proposed call.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum InputRewrite {
    /// Keep the arguments as they are.
    Keep,
    /// Replace the arguments before the call is sealed.
    Rewrite {
        /// The new arguments (re-validated against the tool's schema).
        arguments: Value,
        /// Who rewrote them.
        by: String,
        /// Other rewrites of the same call that lost to this one.
        conflicts: Vec<String>,
        /// What the model's later history shows as the call's input.
        history: HistoryInput,
        /// The model-facing text, exactly, when the rewriting dialect's own
        /// tool refuses these arguments before it runs: sealing then
        /// rejects the call as invalid arguments with it, in place of its
        /// schema check and wording. `None`: the schema check decides.
        #[serde(skip_serializing_if = "Option::is_none")]
        refusal: Option<String>,
    },
}

/// What the model's later history shows as the input of a call whose
/// input a plugin rewrote (the winning rewrite decides).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HistoryInput {
    /// The model's own input, whatever the call ran with.
    #[default]
    Original,
    /// The rewritten input, also for a call denied after the rewrite or
    /// one whose input failed the tool's check; `{}` when it is not an
    /// object.
    Rewritten,
}

/// One plugin's review of a proposed call, made once before the call is
/// sealed: the rewrite it wants and, when it already judged the call (e.g. a
/// `PreToolUse` hook that both rewrites and decides), that verdict. The
/// registry keeps the verdict on the sealed call and hands it back to the
/// same plugin's [`crate::Plugin::pre_execute`] and
/// [`crate::Plugin::approve`], so a plugin keeps no per-call state and
/// nothing outlives a call that sealing rejects.
#[derive(Debug, Clone, PartialEq)]
pub struct CallReview {
    /// The rewrite (or `Keep`).
    pub rewrite: InputRewrite,
    /// The verdict reached while reviewing, if the plugin judged the call.
    pub verdict: Option<PreToolVerdict>,
}

impl CallReview {
    /// No rewrite and no verdict.
    pub fn keep() -> Self {
        CallReview {
            rewrite: InputRewrite::Keep,
            verdict: None,
        }
    }
}

impl From<InputRewrite> for CallReview {
    fn from(rewrite: InputRewrite) -> Self {
        CallReview {
            rewrite,
            verdict: None,
        }
    }
}

/// A pre-execute verdict reached at review time, plus what the plugin wants
/// done when the call reaches pre-execute (a stop request, user notices).
#[derive(Debug, Clone, PartialEq)]
pub struct PreToolVerdict {
    /// The decision and contexts pre-execute returns.
    pub outcome: PreToolOutcome,
    /// A stop to request when the call reaches pre-execute.
    pub stop: Option<crate::StopRequest>,
    /// Notices to show when the call reaches pre-execute.
    pub notices: Vec<crate::UserNotice>,
    /// The answer this plugin already gave should the call need approval
    /// (a Claude Code PreToolUse `allow` approves the permission prompt the
    /// call would otherwise get; deny rules still apply, as they deny).
    pub approval: Option<ApprovalDecision>,
    /// Who in the plugin reached the verdict (the winning hook), for the
    /// result's `decided_by`.
    pub decided_by: Option<dsh_protocol::DecidedBy>,
}

impl PreToolVerdict {
    /// A verdict that is just `outcome`.
    pub fn of(outcome: PreToolOutcome) -> Self {
        PreToolVerdict {
            outcome,
            stop: None,
            notices: Vec::new(),
            approval: None,
            decided_by: None,
        }
    }

    /// Carries the verdict out at pre-execute: requests its stop, shows its
    /// notices, and returns its outcome.
    pub fn deliver(&self, ctx: &crate::SeamContext) -> PreToolOutcome {
        if let Some(stop) = &self.stop {
            ctx.control
                .request_stop(stop.reason.clone(), stop.source.clone());
        }
        for notice in &self.notices {
            ctx.sink.tell_user(notice.clone());
        }
        self.outcome.clone()
    }

    /// Whether the verdict asks for approval.
    pub fn asks(&self) -> bool {
        matches!(self.outcome.decision, PreToolDecision::Ask { .. })
    }
}

/// What pre-execute policy decided for a sealed call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum PreToolDecision {
    /// Proceed to guards and dispatch.
    Allow,
    /// Do not run; `reason` becomes the model-facing error content verbatim.
    Deny {
        /// The model-facing text.
        reason: String,
    },
    /// Resolve through the approval seam.
    Ask {
        /// Why approval is needed; the model-facing text if approval is not given.
        reason: Option<String>,
        /// The permission changes offered with the request (Claude Code's
        /// `permission_suggestions`); `None` when none are offered.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        suggestions: Option<Vec<crate::PermissionUpdate>>,
    },
    /// Denied by an automatic check standing in for a person (Claude Code's
    /// auto-mode classifier): like `Deny`, and the permission-denied
    /// listeners hear `check_reason` (they may let the model retry).
    AutoDeny {
        /// The model-facing text.
        reason: String,
        /// Why the check denied (PermissionDenied `reason`).
        check_reason: String,
    },
}

impl PreToolDecision {
    /// An ask with a reason and no suggestions.
    pub fn ask(reason: Option<String>) -> Self {
        PreToolDecision::Ask {
            reason,
            suggestions: None,
        }
    }
}

/// The full result of one pre-execute listener: a decision plus contexts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PreToolOutcome {
    /// The decision.
    pub decision: PreToolDecision,
    /// Contexts for the batch FIFO (adding context is not a veto).
    pub contexts: Vec<ContextEntry>,
}

impl PreToolOutcome {
    /// Allow with no contexts.
    pub fn allow() -> Self {
        PreToolOutcome::of(PreToolDecision::Allow, Vec::new())
    }

    /// `decision` with `contexts`.
    pub fn of(decision: PreToolDecision, contexts: Vec<ContextEntry>) -> Self {
        PreToolOutcome { decision, contexts }
    }
}

/// Metadata for the request a call sends to a tool server: an MCP
/// `tools/call` request's `params._meta` object, keys in the order given,
/// as the before-dispatch listeners leave it ([`crate::Plugin::before_dispatch`]).
/// Tools that send no such request ignore it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct RequestMeta(pub serde_json::Map<String, Value>);

/// What an approval listener (e.g. a PermissionRequest hook) answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// No opinion: ask the next listener, then the approval service.
    Abstain,
    /// Allow this call once.
    AllowOnce,
    /// Allow, with replacement arguments and/or permission changes.
    Allow(crate::ApprovalGrant),
    /// Reject; `message` is the model-facing text.
    Deny {
        /// Model-facing text.
        message: String,
    },
}

/// What the user (through an approval service) answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ApprovalResponse {
    /// Allowed once.
    AllowedOnce,
    /// Rejected.
    Rejected,
    /// Rejected, with the person's one-line reason for the model (the
    /// approval prompt's "deny" with a reason typed).
    RejectedWithReason {
        /// What the person said; the model's tool_result carries it.
        reason: String,
    },
    /// The prompt was cancelled.
    Cancelled,
    /// The channel to the person failed (an error reply, a closed
    /// connection): nobody could be asked.
    Unavailable,
}

/// A guard's verdict: guards may deny or abstain, never allow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum GuardVerdict {
    /// No objection.
    Abstain,
    /// Forbid the call; `reason` is model-facing.
    Deny {
        /// The model-facing text.
        reason: String,
    },
}

/// What post-execute policy does with a tool's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum PostToolAction {
    /// Keep the outcome.
    Accept,
    /// Replace the outcome with an error carrying `feedback`.
    Block {
        /// Model-facing text.
        feedback: String,
    },
    /// Replace the model-facing content; the canonical value is kept.
    ReplaceContent {
        /// The new content.
        content: String,
    },
    /// Replace the canonical value; content is re-rendered from it.
    ReplaceValue {
        /// The new value (re-validated by the tool).
        value: Value,
    },
    /// Run another tool call next, under the same call id, and give the
    /// model its result in place of this one (Gemini CLI's AfterTool
    /// `tailToolCallRequest`). The tail goes through the whole pipeline
    /// (sealing, pre-execute, approval, post-execute) as a call of its own.
    TailCall {
        /// dsh's tool name.
        tool: String,
        /// Its arguments.
        arguments: Value,
    },
}

/// The full result of one post-execute listener.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PostToolDecision {
    /// What to do with the outcome.
    pub action: PostToolAction,
    /// Contexts for the batch FIFO.
    pub contexts: Vec<ContextEntry>,
}

impl PostToolDecision {
    /// Accept with no contexts.
    pub fn accept() -> Self {
        PostToolDecision {
            action: PostToolAction::Accept,
            contexts: Vec::new(),
        }
    }
}

/// What the turn-continuation seam decided at a natural stop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ContinuationDecision {
    /// Let the turn end `completed`.
    Stop,
    /// Run another step in the same turn.
    Continue {
        /// Model-facing steering recorded as `steering/message`.
        reason: Option<String>,
        /// Who forced the continuation.
        source: String,
        /// Extra model-facing contexts recorded after the steering.
        contexts: Vec<ContextEntry>,
    },
    /// End the turn `stopped` (`continue: false`).
    Halt {
        /// Why (user-facing).
        reason: String,
    },
}
