//! Questions dsh puts to the editor's user through `session/request_permission`:
//! a pre-execute `ask` for one tool call, whether to run untrusted project
//! hooks, and whether to start project MCP servers nobody approved.
//!
//! A tool call's question offers the terminal's choices: allow always (when
//! the permission mode asked and dsh-permissions can name a rule for the
//! call: the rule is kept for the session and written to
//! `.claude/settings.local.json`), allow once, and reject. The hook and server questions are one-shot (allow once / reject
//! once), for this session only. Only an "allow" option id dsh offered
//! allows; every other outcome is a refusal, told apart in the log
//! (`tracing`) by why:
//! - the user picked "reject once" → `ApprovalResponse::Rejected`;
//! - the client answered `cancelled`, or the turn was cancelled while
//!   asking → `ApprovalResponse::Cancelled` (the question was withdrawn);
//! - the client replied with a JSON-RPC error, or the connection closed →
//!   `ApprovalResponse::Unavailable` (nobody could be asked);
//! - an option id dsh never offered → `Rejected` (an answer, but not yes).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ElicitationCapabilities, PermissionOption, PermissionOptionKind, RequestPermissionRequest,
    SessionId, SessionUpdate, ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind,
};
use async_trait::async_trait;
use dsh_seams::{ApprovalResponse, CancellationToken, ToolExecution};
use dsh_tools::ApprovalService;

use super::translate::describe_call;
use dsh_permissions::PermissionsPlugin;
use dsh_permissions::always::{can_remember, rule_for_call};

pub use super::permission::{ALLOW_ALWAYS, ALLOW_ONCE, REJECT_ONCE};
use super::permission::{Answer, ask};

/// The running turn's token, when a turn runs.
pub type TurnSlot = Arc<Mutex<Option<CancellationToken>>>;

fn options(allow: &str, reject: &str) -> Vec<PermissionOption> {
    vec![
        PermissionOption::new(ALLOW_ONCE, allow, PermissionOptionKind::AllowOnce),
        PermissionOption::new(REJECT_ONCE, reject, PermissionOptionKind::RejectOnce),
    ]
}

/// Resolves `ask` decisions through the editor.
pub struct AcpApproval {
    cx: ConnectionTo<Client>,
    session_id: SessionId,
    cwd: PathBuf,
    turn: TurnSlot,
    permissions: Arc<PermissionsPlugin>,
    /// The elicitation modes the client declared at `initialize`.
    elicitation: Option<ElicitationCapabilities>,
}

impl AcpApproval {
    /// An approval service for one session; "allow always" adds its rule
    /// to `permissions`.
    pub fn new(
        cx: ConnectionTo<Client>,
        session_id: SessionId,
        cwd: PathBuf,
        turn: TurnSlot,
        permissions: Arc<PermissionsPlugin>,
    ) -> Self {
        AcpApproval {
            cx,
            session_id,
            cwd,
            turn,
            permissions,
            elicitation: None,
        }
    }

    /// MCP elicitations go to the client as `elicitation/create` in the
    /// modes it declared (`clientCapabilities.elicitation`).
    #[must_use]
    pub fn with_elicitation(mut self, capabilities: Option<ElicitationCapabilities>) -> Self {
        self.elicitation = capabilities;
        self
    }
}

impl AcpApproval {
    fn token(&self) -> CancellationToken {
        self.turn
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .unwrap_or_default()
    }
}

#[async_trait]
impl ApprovalService for AcpApproval {
    async fn elicit(
        &self,
        request: &dsh_seams::ElicitationRequest,
    ) -> dsh_seams::ElicitationAnswer {
        super::questions::elicit(
            &self.cx,
            &self.session_id,
            &self.token(),
            self.elicitation.as_ref(),
            request,
        )
        .await
    }

    async fn ask_questions(
        &self,
        questions: &[dsh_tools::builtin::interaction::Question],
    ) -> Option<std::collections::BTreeMap<String, String>> {
        super::questions::ask_questions(&self.cx, &self.session_id, &self.token(), questions).await
    }

    async fn request(&self, exec: &ToolExecution, reason: Option<&str>) -> ApprovalResponse {
        let token = self
            .turn
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .unwrap_or_default();
        let described = describe_call(&self.cwd, &exec.tool, &exec.arguments);
        let mut fields = ToolCallUpdateFields::new()
            .title(described.title)
            .kind(described.kind)
            .status(ToolCallStatus::Pending)
            .raw_input((*exec.arguments).clone())
            .locations(described.locations);
        if let Some(reason) = reason {
            fields = fields.content(vec![ToolCallContent::from(format!(
                "Approval needed: {reason}"
            ))]);
        }
        // As in the terminal: "allow always" only where a rule would keep
        // the question from coming back (the permission mode asked).
        let rule = can_remember(&self.permissions, &exec.tool, &exec.arguments, reason)
            .then(|| rule_for_call(&exec.tool, &exec.arguments, &self.cwd))
            .flatten();
        let mut choices = Vec::new();
        if let Some(rule) = &rule {
            choices.push(PermissionOption::new(
                ALLOW_ALWAYS,
                format!("Always allow {rule}"),
                PermissionOptionKind::AllowAlways,
            ));
        }
        choices.extend(options("Allow once", "Reject"));
        let request = RequestPermissionRequest::new(
            self.session_id.clone(),
            ToolCallUpdate::new(exec.call_id.clone(), fields),
            choices,
        );
        match ask(&self.cx, request, &token).await {
            Answer::AllowOnce => ApprovalResponse::AllowedOnce,
            Answer::AllowAlways => match &rule {
                Some(rule) => {
                    match dsh_permissions::always::allow_always(&self.permissions, &self.cwd, rule)
                    {
                        Ok(path) => {
                            tracing::info!("always allowed {rule} (saved to {})", path.display());
                        }
                        Err(error) => {
                            tracing::warn!("cannot save {rule}: {error}; allowed for this session");
                        }
                    }
                    ApprovalResponse::AllowedOnce
                }
                // Not offered for this call: an answer, but not yes.
                None => {
                    tracing::warn!(
                        "permission for {}: the client chose allow-always, which dsh did not offer; denied",
                        exec.call_id
                    );
                    ApprovalResponse::Rejected
                }
            },
            Answer::RejectOnce => ApprovalResponse::Rejected,
            Answer::UnknownOption(id) => {
                tracing::warn!(
                    "permission for {}: the client chose option {id:?}, which dsh did not offer; denied",
                    exec.call_id
                );
                ApprovalResponse::Rejected
            }
            Answer::ClientCancelled => ApprovalResponse::Cancelled,
            Answer::TurnCancelled => {
                tracing::info!(
                    "permission for {}: the turn was cancelled while asking",
                    exec.call_id
                );
                ApprovalResponse::Cancelled
            }
            Answer::Failed(error) => {
                tracing::warn!(
                    "permission for {}: the request failed ({error}); denied",
                    exec.call_id
                );
                ApprovalResponse::Unavailable
            }
        }
    }
}

/// What the person answered a consent question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustAnswer {
    /// Allowed for good: the caller stores it (`trust.json` for hooks,
    /// `~/.claude.json` for MCP servers), as the terminal's answer does.
    Always,
    /// Allowed for this session only (nothing is stored).
    RunThisSession,
    /// Anything else: they do not run.
    Skip,
}

/// A question about something the project would run that nobody approved
/// yet (untrusted hooks, unapproved MCP servers), asked once per session
/// through `session/request_permission`.
pub struct ConsentQuestion {
    call_id: String,
    title: String,
    description: String,
    /// The "allow always" option's label.
    always: &'static str,
    /// The "allow once" option's label.
    allow: &'static str,
    /// The "reject once" option's label.
    reject: &'static str,
    /// What is skipped on a refusal, for the diagnostics.
    what: &'static str,
    /// The settled question's text after an allow (for good: the file
    /// follows).
    allowed: &'static str,
    /// The settled question's text after anything else.
    skipped: &'static str,
}

impl ConsentQuestion {
    /// The one trust question: everything the project at `cwd` brings
    /// that waits for trust (hooks, allow rules, `env`, MCP servers,
    /// plugins), as the terminal asks it.
    pub fn project(session: &str, cwd: &Path, offer: &dsh_core::ProjectOffer) -> Self {
        let mut description = offer.describe(cwd);
        description.push_str(
            "\nTrusting it stores that in dsh's trust.json, as `dsh hooks trust` does (its hooks run, its allow rules and env apply, its MCP servers start); this session only stores nothing.",
        );
        ConsentQuestion {
            always: "Trust this project (as `dsh hooks trust`)",
            allow: "Trust it for this session only",
            reject: "Don't trust it",
            what: "the project's configuration",
            // The answer's own line says what was trusted and where.
            allowed: "",
            skipped: "Not trusted: its hooks do not run, its servers do not start and its allow rules and env do not apply in this session.",
            call_id: format!("dsh-trust-{session}"),
            title: "Trust this project?".to_owned(),
            description,
        }
    }

    /// Asks the client; anything but an allow skips what was asked about.
    /// The caller acts on the answer, then [`Self::settle`]s the question.
    pub async fn ask(
        &self,
        cx: &ConnectionTo<Client>,
        session_id: &SessionId,
        cancel: &CancellationToken,
    ) -> TrustAnswer {
        // ACP asks permission only for a tool call, so the question is
        // announced as one (pending) before it is asked, and settled after
        // it: an editor never meets a call id it was not told about.
        let content = vec![ToolCallContent::from(self.description.clone())];
        super::send_update(
            cx,
            session_id,
            SessionUpdate::ToolCall(
                ToolCall::new(self.call_id.clone(), self.title.clone())
                    .kind(ToolKind::Execute)
                    .status(ToolCallStatus::Pending)
                    .content(content.clone()),
            ),
        );
        let fields = ToolCallUpdateFields::new()
            .title(self.title.clone())
            .kind(ToolKind::Execute)
            .status(ToolCallStatus::Pending)
            .content(content);
        let request = RequestPermissionRequest::new(
            session_id.clone(),
            ToolCallUpdate::new(self.call_id.clone(), fields),
            vec![
                PermissionOption::new(ALLOW_ALWAYS, self.always, PermissionOptionKind::AllowAlways),
                PermissionOption::new(ALLOW_ONCE, self.allow, PermissionOptionKind::AllowOnce),
                PermissionOption::new(REJECT_ONCE, self.reject, PermissionOptionKind::RejectOnce),
            ],
        );
        match ask(cx, request, cancel).await {
            Answer::AllowAlways => TrustAnswer::Always,
            Answer::AllowOnce => TrustAnswer::RunThisSession,
            other @ Answer::RejectOnce
            | other @ Answer::UnknownOption(_)
            | other @ Answer::ClientCancelled
            | other @ Answer::TurnCancelled
            | other @ Answer::Failed(_) => {
                tracing::info!("{} skipped: {other:?}", self.what);
                TrustAnswer::Skip
            }
        }
    }

    /// Settles the question after the caller acted on `answer`; `stored`
    /// says where an "always" answer was written, or why it was not.
    pub fn settle(
        &self,
        cx: &ConnectionTo<Client>,
        session_id: &SessionId,
        answer: TrustAnswer,
        stored: Option<String>,
    ) {
        let (status, outcome) = match (answer, stored) {
            (TrustAnswer::Always | TrustAnswer::RunThisSession, Some(stored)) => (
                ToolCallStatus::Completed,
                format!("{} {stored}", self.allowed).trim_start().to_owned(),
            ),
            (TrustAnswer::Always | TrustAnswer::RunThisSession, None) => {
                (ToolCallStatus::Completed, self.allowed.to_owned())
            }
            (TrustAnswer::Skip, _) => (ToolCallStatus::Failed, self.skipped.to_owned()),
        };
        super::send_update(
            cx,
            session_id,
            SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                self.call_id.clone(),
                ToolCallUpdateFields::new()
                    .status(status)
                    .content(vec![ToolCallContent::from(outcome)]),
            )),
        );
    }
}
