//! Questions asked on someone else's behalf: the model's
//! `ask_user_question` (one `session/request_permission` per question, its
//! options as the choices) and an MCP server's elicitation.
//!
//! An elicitation goes to the editor as ACP's own `elicitation/create` when
//! the client declared it can show that mode (`clientCapabilities.elicitation.form`
//! or `.url`): the form's schema is passed on, and the user's values come
//! back to the server. Otherwise it is a permission request: accept or
//! decline, and a form with required fields cannot be filled in that way,
//! so only decline is offered then and the editor's user is told why.
//!
//! ACP asks permission only for a tool call, so each permission question is
//! announced as a pending pseudo call (`dsh-question-<n>`), asked, then
//! settled.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CreateElicitationRequest, ElicitationAction as AcpAction, ElicitationCapabilities,
    ElicitationFormMode, ElicitationMode as AcpMode, ElicitationSchema, ElicitationSessionScope,
    ElicitationUrlMode, PermissionOption, PermissionOptionKind, RequestPermissionRequest,
    SessionId, SessionUpdate, ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind,
};
use dsh_seams::{
    CancellationToken, ElicitationAction, ElicitationAnswer, ElicitationMode, ElicitationRequest,
};
use dsh_tools::builtin::interaction::Question;
use serde_json::json;

use super::permission::{Answer, REJECT_ONCE, ask};

/// The option id of a question's `n`th option (1-based).
fn option_id(n: usize) -> String {
    format!("option_{n}")
}

/// The option id that accepts an elicitation.
pub const ACCEPT: &str = "accept";

static NEXT: AtomicU64 = AtomicU64::new(1);

/// One question as a pending pseudo call: its id, once announced.
struct Pending<'a> {
    cx: &'a ConnectionTo<Client>,
    session_id: &'a SessionId,
    call_id: String,
}

impl<'a> Pending<'a> {
    fn announce(
        cx: &'a ConnectionTo<Client>,
        session_id: &'a SessionId,
        title: &str,
        text: &str,
    ) -> Self {
        let call_id = format!("dsh-question-{}", NEXT.fetch_add(1, Ordering::Relaxed));
        super::send_update(
            cx,
            session_id,
            SessionUpdate::ToolCall(
                ToolCall::new(call_id.clone(), title.to_owned())
                    .kind(ToolKind::Other)
                    .status(ToolCallStatus::Pending)
                    .content(vec![ToolCallContent::from(text.to_owned())]),
            ),
        );
        Pending {
            cx,
            session_id,
            call_id,
        }
    }

    async fn choose(
        &self,
        title: &str,
        text: &str,
        choices: Vec<PermissionOption>,
        cancel: &CancellationToken,
    ) -> Answer {
        let fields = ToolCallUpdateFields::new()
            .title(title.to_owned())
            .kind(ToolKind::Other)
            .status(ToolCallStatus::Pending)
            .content(vec![ToolCallContent::from(text.to_owned())]);
        let request = RequestPermissionRequest::new(
            self.session_id.clone(),
            ToolCallUpdate::new(self.call_id.clone(), fields),
            choices,
        );
        ask(self.cx, request, cancel).await
    }

    fn settle(&self, answered: bool, text: String) {
        let status = if answered {
            ToolCallStatus::Completed
        } else {
            ToolCallStatus::Failed
        };
        super::send_update(
            self.cx,
            self.session_id,
            SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                self.call_id.clone(),
                ToolCallUpdateFields::new()
                    .status(status)
                    .content(vec![ToolCallContent::from(text)]),
            )),
        );
    }
}

/// `ask_user_question` through the editor: each question's options as the
/// choices, plus "Skip" (a permission request takes one choice, so a
/// multi-select question gets one pick). Anything but an option leaves the
/// questions unanswered.
pub(crate) async fn ask_questions(
    cx: &ConnectionTo<Client>,
    session_id: &SessionId,
    cancel: &CancellationToken,
    questions: &[Question],
) -> Option<BTreeMap<String, String>> {
    let mut answers = BTreeMap::new();
    for question in questions {
        let title = format!("{}: {}", question.header, question.question);
        let text = question
            .options
            .iter()
            .map(|option| format!("{}: {}", option.label, option.description))
            .collect::<Vec<_>>()
            .join("\n");
        let mut choices: Vec<PermissionOption> = question
            .options
            .iter()
            .enumerate()
            .map(|(i, option)| {
                PermissionOption::new(
                    option_id(i + 1),
                    option.label.clone(),
                    PermissionOptionKind::AllowOnce,
                )
            })
            .collect();
        choices.push(PermissionOption::new(
            REJECT_ONCE,
            "Skip",
            PermissionOptionKind::RejectOnce,
        ));
        let pending = Pending::announce(cx, session_id, &title, &text);
        let picked = match pending.choose(&title, &text, choices, cancel).await {
            Answer::UnknownOption(id) => question
                .options
                .iter()
                .enumerate()
                .find(|(i, _)| option_id(i + 1) == id)
                .map(|(_, option)| option.label.clone()),
            other @ (Answer::AllowOnce
            | Answer::AllowAlways
            | Answer::RejectOnce
            | Answer::ClientCancelled
            | Answer::TurnCancelled
            | Answer::Failed(_)) => {
                tracing::info!("question {:?} not answered: {other:?}", question.question);
                None
            }
        };
        match picked {
            Some(label) => {
                pending.settle(true, format!("Answered: {label}"));
                answers.insert(question.question.clone(), label);
            }
            None => {
                pending.settle(false, "Not answered".to_owned());
                return None;
            }
        }
    }
    Some(answers)
}

/// ACP's `elicitation/create` for `request`, when the client declared the
/// mode in `capabilities` (and, for a form, the schema is one ACP can
/// carry); `None` when it cannot be asked that way.
fn native_request(
    session_id: &SessionId,
    capabilities: Option<&ElicitationCapabilities>,
    request: &ElicitationRequest,
) -> Option<CreateElicitationRequest> {
    let capabilities = capabilities?;
    let scope = ElicitationSessionScope::new(session_id.clone());
    let mode = match request.mode {
        ElicitationMode::Form => {
            capabilities.form.as_ref()?;
            let schema = request.requested_schema.clone()?;
            let schema: ElicitationSchema = match serde_json::from_value(schema) {
                Ok(schema) => schema,
                Err(error) => {
                    tracing::info!(
                        "the form of MCP server {} does not fit ACP's elicitation schema ({error}); asking for permission instead",
                        request.server
                    );
                    return None;
                }
            };
            AcpMode::Form(ElicitationFormMode::new(scope, schema))
        }
        ElicitationMode::Url => {
            capabilities.url.as_ref()?;
            AcpMode::Url(ElicitationUrlMode::new(
                scope,
                request.elicitation_id.clone()?,
                request.url.clone()?,
            ))
        }
    };
    Some(CreateElicitationRequest::new(
        mode,
        format!("MCP server {} asks: {}", request.server, request.message),
    ))
}

/// The editor's answer to `elicitation/create`, as the MCP server gets it:
/// a form's values with `accept`; an action this protocol version does not
/// know, an error reply or a cancelled turn cancel.
async fn ask_natively(
    cx: &ConnectionTo<Client>,
    cancel: &CancellationToken,
    native: CreateElicitationRequest,
    mode: ElicitationMode,
) -> ElicitationAnswer {
    let sent = cx.send_request(native).block_task();
    let reply = tokio::select! {
        reply = sent => reply,
        () = cancel.cancelled() => return ElicitationAnswer::bare(ElicitationAction::Cancel),
    };
    let response = match reply {
        Ok(response) => response,
        Err(error) => {
            tracing::info!("elicitation/create failed: {error}");
            return ElicitationAnswer::bare(ElicitationAction::Cancel);
        }
    };
    match response.action {
        AcpAction::Accept(accepted) => ElicitationAnswer {
            action: ElicitationAction::Accept,
            content: (mode == ElicitationMode::Form).then(|| {
                serde_json::to_value(accepted.content.unwrap_or_default())
                    .unwrap_or_else(|_| json!({}))
            }),
        },
        AcpAction::Decline => ElicitationAnswer::bare(ElicitationAction::Decline),
        AcpAction::Cancel | AcpAction::Other(_) => {
            ElicitationAnswer::bare(ElicitationAction::Cancel)
        }
        // A future variant is not an answer dsh can pass on.
        _ => ElicitationAnswer::bare(ElicitationAction::Cancel),
    }
}

/// An MCP elicitation through the editor: ACP's `elicitation/create` when
/// the client can show it (see [`native_request`]); otherwise a permission
/// request to accept (URL mode, or a form without required fields,
/// answered empty) or decline, where the editor's `cancelled`, a cancelled
/// turn or a failed request cancel.
pub(crate) async fn elicit(
    cx: &ConnectionTo<Client>,
    session_id: &SessionId,
    cancel: &CancellationToken,
    capabilities: Option<&ElicitationCapabilities>,
    request: &ElicitationRequest,
) -> ElicitationAnswer {
    if let Some(native) = native_request(session_id, capabilities, request) {
        return ask_natively(cx, cancel, native, request.mode).await;
    }
    let title = format!("MCP server {} asks", request.server);
    let mut text = request.message.clone();
    if let Some(url) = &request.url {
        text.push_str(&format!("\nOpen {url}"));
    }
    // A form can be accepted without typing anything only when it has no
    // required fields.
    let acceptable = request.mode == ElicitationMode::Url
        || !request.form_fields().iter().any(|field| field.required);
    if !acceptable {
        text.push_str("\nThis question needs a form, which this editor cannot show: it can only be declined here.");
    }
    let mut choices = Vec::new();
    if acceptable {
        choices.push(PermissionOption::new(
            ACCEPT,
            "Accept",
            PermissionOptionKind::AllowOnce,
        ));
    }
    choices.push(PermissionOption::new(
        REJECT_ONCE,
        "Decline",
        PermissionOptionKind::RejectOnce,
    ));
    let pending = Pending::announce(cx, session_id, &title, &text);
    let answer = match pending.choose(&title, &text, choices, cancel).await {
        Answer::UnknownOption(id) if id == ACCEPT && acceptable => ElicitationAnswer {
            action: ElicitationAction::Accept,
            content: (request.mode == ElicitationMode::Form).then(|| json!({})),
        },
        Answer::RejectOnce | Answer::UnknownOption(_) | Answer::AllowOnce | Answer::AllowAlways => {
            ElicitationAnswer::bare(ElicitationAction::Decline)
        }
        Answer::ClientCancelled | Answer::TurnCancelled | Answer::Failed(_) => {
            ElicitationAnswer::bare(ElicitationAction::Cancel)
        }
    };
    pending.settle(
        answer.action == ElicitationAction::Accept,
        format!("Answered: {}", answer.action.as_str()),
    );
    answer
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{
        ElicitationFormCapabilities, ElicitationUrlCapabilities,
    };

    fn form() -> ElicitationRequest {
        ElicitationRequest {
            server: "elicit".into(),
            message: "What is your name?".into(),
            mode: ElicitationMode::Form,
            requested_schema: Some(json!({
                "type": "object",
                "properties": {"name": {"type": "string", "title": "Name"}},
                "required": ["name"],
            })),
            url: None,
            elicitation_id: None,
        }
    }

    fn url() -> ElicitationRequest {
        ElicitationRequest {
            mode: ElicitationMode::Url,
            requested_schema: None,
            url: Some("https://example.test/auth".into()),
            elicitation_id: Some("e-1".into()),
            ..form()
        }
    }

    /// Each mode goes to `elicitation/create` only when the client declared
    /// it; otherwise the permission request stands in.
    #[test]
    fn a_mode_goes_natively_only_where_the_client_declared_it() {
        let session = SessionId::new("s-1");
        let forms = ElicitationCapabilities::new().form(ElicitationFormCapabilities::new());
        let urls = ElicitationCapabilities::new().url(ElicitationUrlCapabilities::new());
        assert!(native_request(&session, None, &form()).is_none());
        assert!(native_request(&session, Some(&urls), &form()).is_none());
        assert!(native_request(&session, Some(&forms), &url()).is_none());

        let native = native_request(&session, Some(&forms), &form()).unwrap();
        let wire = serde_json::to_value(&native).unwrap();
        assert_eq!(wire["mode"], "form");
        assert_eq!(wire["sessionId"], "s-1");
        assert_eq!(
            wire["message"],
            "MCP server elicit asks: What is your name?"
        );
        assert_eq!(wire["requestedSchema"]["required"], json!(["name"]));
        assert_eq!(
            wire["requestedSchema"]["properties"]["name"],
            json!({"type": "string", "title": "Name"})
        );

        let native = native_request(&session, Some(&urls), &url()).unwrap();
        let wire = serde_json::to_value(&native).unwrap();
        assert_eq!(wire["mode"], "url");
        assert_eq!(wire["url"], "https://example.test/auth");
        assert_eq!(wire["elicitationId"], "e-1");
    }

    /// A schema ACP cannot carry (not a JSON object) is asked the old way.
    #[test]
    fn a_schema_acp_cannot_carry_falls_back() {
        let session = SessionId::new("s-1");
        let forms = ElicitationCapabilities::new().form(ElicitationFormCapabilities::new());
        let odd = ElicitationRequest {
            requested_schema: Some(json!("name")),
            ..form()
        };
        assert!(native_request(&session, Some(&forms), &odd).is_none());
    }
}
