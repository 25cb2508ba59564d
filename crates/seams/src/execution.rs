//! The frozen identity of a tool execution and its normalized outcome.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::ContextEntry;

pub use dsh_protocol::{ToolOrigin, mcp_names, mcp_tool_parts};

/// A call the model proposed, before validation and sealing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProposedCall {
    /// The model's call id.
    pub call_id: String,
    /// dsh's native tool name.
    pub tool: String,
    /// The model's arguments.
    pub arguments: Value,
    /// The execution id of the enclosing call, for nested dispatch.
    pub parent_execution_id: Option<String>,
    /// Where the tool comes from, when it is not dsh's own (the registry
    /// fills it in from the tool).
    #[serde(skip)]
    pub origin: Option<ToolOrigin>,
}

impl ProposedCall {
    /// The server and tool names of an MCP call ([`mcp_names`]).
    pub fn mcp_names(&self) -> Option<(&str, &str)> {
        mcp_names(&self.tool, self.origin.as_ref())
    }
}

/// A sealed tool execution: identity every phase, the log, the UI and the tool
/// body agree on. Immutable once created.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolExecution {
    /// dsh's opaque execution id.
    pub execution_id: String,
    /// The model's call id.
    pub call_id: String,
    /// dsh's native tool name.
    pub tool: String,
    /// The frozen arguments the tool runs with.
    pub arguments: Arc<Value>,
    /// The model's own arguments, when a rewrite replaced them.
    pub original_arguments: Option<Arc<Value>>,
    /// Who rewrote the arguments.
    pub rewritten_by: Option<String>,
    /// The parent execution, for nested dispatch.
    pub parent_execution_id: Option<String>,
    /// Where the tool comes from, when it is not dsh's own.
    #[serde(skip)]
    pub origin: Option<ToolOrigin>,
}

impl ToolExecution {
    /// The server and tool names of an MCP call ([`mcp_names`]).
    pub fn mcp_names(&self) -> Option<(&str, &str)> {
        mcp_names(&self.tool, self.origin.as_ref())
    }
}

/// Why a call was denied, kept distinct so the log can say which.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DenialKind {
    /// A pre-execute listener denied.
    Policy,
    /// A guard denied.
    Guard,
    /// Approval was asked and an approval listener or the user rejected.
    ApprovalRejected,
    /// The approval prompt was cancelled.
    ApprovalCancelled,
    /// The approval channel failed before anyone answered.
    ApprovalUnavailable,
    /// Approval was asked but no approval service exists (headless).
    NoApprovalService,
    /// Approval was asked for a call with no agent behind it.
    NoAgent,
}

/// Which phase produced the authoritative outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "denial", rename_all = "snake_case")]
pub enum Disposition {
    /// The tool body ran (its result may still be an error).
    Executed,
    /// The call was denied before dispatch.
    Denied(DenialKind),
    /// The tool name is not registered.
    UnknownTool,
    /// Arguments failed the tool's input schema.
    InvalidArguments,
    /// The tool body or a listener failed or panicked.
    Failed,
    /// The call was cancelled while running.
    Cancelled,
}

impl Disposition {
    /// A short name for the log.
    pub fn as_str(self) -> &'static str {
        match self {
            Disposition::Executed => "executed",
            Disposition::Denied(DenialKind::Policy) => "denied",
            Disposition::Denied(DenialKind::Guard) => "denied_by_guard",
            Disposition::Denied(DenialKind::ApprovalRejected) => "approval_rejected",
            Disposition::Denied(DenialKind::ApprovalCancelled) => "approval_cancelled",
            Disposition::Denied(DenialKind::ApprovalUnavailable) => "approval_unavailable",
            Disposition::Denied(DenialKind::NoApprovalService) => "no_approval_service",
            Disposition::Denied(DenialKind::NoAgent) => "no_agent",
            Disposition::UnknownTool => "unknown_tool",
            Disposition::InvalidArguments => "invalid_arguments",
            Disposition::Failed => "failed",
            Disposition::Cancelled => "cancelled",
        }
    }
}

/// A normalized tool outcome: what every phase after dispatch sees.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolOutcome {
    /// Whether the model is told the call failed.
    pub is_error: bool,
    /// The text the model sees.
    pub content: String,
    /// The tool's canonical structured value (e.g. bash stdout/stderr/exit code).
    pub value: Option<Value>,
    /// Which phase decided.
    pub disposition: Disposition,
}

impl ToolOutcome {
    /// A successful execution.
    pub fn success(content: impl Into<String>, value: Option<Value>) -> Self {
        ToolOutcome {
            is_error: false,
            content: content.into(),
            value,
            disposition: Disposition::Executed,
        }
    }

    /// An error outcome with the given disposition.
    pub fn error(content: impl Into<String>, disposition: Disposition) -> Self {
        ToolOutcome {
            is_error: true,
            content: content.into(),
            value: None,
            disposition,
        }
    }
}

/// What `ToolRegistry::execute` returns: the authoritative outcome plus the
/// contexts it produced, in order (deferred nested contexts, then decision contexts).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolExecutionResult {
    /// The sealed identity (absent only when the call could not be sealed).
    pub execution: Option<ToolExecution>,
    /// The authoritative outcome, after `finalize_content`.
    pub outcome: ToolOutcome,
    /// Contexts for the batch FIFO.
    pub contexts: Vec<ContextEntry>,
    /// Who decided whether the call ran, when the pipeline knows.
    pub decided_by: Option<dsh_protocol::DecidedBy>,
}
