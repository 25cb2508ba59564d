//! MCP elicitation on dsh's side: a server asks the user something
//! (`elicitation/create`) while one of its tools runs.
//!
//! The client handler ([`DshClient`]) turns the request into dsh's
//! canonical [`ElicitationRequest`] and hands it to the tool call in flight
//! on that server (its [`ElicitSlot`]), which answers it on the session's
//! own runtime through [`dsh_tools::ToolContext::elicit`] (seams, the
//! person, the result seam). A request with no call in flight, or whose
//! call ended first, is answered `cancel`.

use std::sync::{Arc, Mutex, PoisonError};

use dsh_seams::{ElicitationAction, ElicitationAnswer, ElicitationMode, ElicitationRequest};
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationCapability,
    FormElicitationCapability, Implementation, ProtocolVersion, UrlElicitationCapability,
};
use rmcp::service::{RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData};
use tokio::sync::{mpsc, oneshot};

/// One question waiting for its answer.
pub(crate) type Pending = (ElicitationRequest, oneshot::Sender<ElicitationAnswer>);

/// Where a server's elicitations go: the tool call in flight on it.
#[derive(Clone, Default)]
pub(crate) struct ElicitSlot(Arc<Mutex<Option<mpsc::UnboundedSender<Pending>>>>);

impl ElicitSlot {
    /// Routes the server's questions to the returned receiver until the
    /// guard drops.
    pub(crate) fn open(&self) -> (SlotGuard, mpsc::UnboundedReceiver<Pending>) {
        let (sender, receiver) = mpsc::unbounded_channel();
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(sender.clone());
        (SlotGuard(self.clone(), sender), receiver)
    }

    fn current(&self) -> Option<mpsc::UnboundedSender<Pending>> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Closes the slot when the call ends, unless a later call on the same
/// server took it over (calls in parallel: the newest one gets the
/// server's questions).
pub(crate) struct SlotGuard(ElicitSlot, mpsc::UnboundedSender<Pending>);

impl Drop for SlotGuard {
    fn drop(&mut self) {
        let mut slot = self.0.0.lock().unwrap_or_else(PoisonError::into_inner);
        if slot
            .as_ref()
            .is_some_and(|current| current.same_channel(&self.1))
        {
            *slot = None;
        }
    }
}

/// dsh's MCP client: its identity, the capabilities it declares (form and
/// URL elicitation, as Claude Code declares them), and the elicitation
/// handler.
pub(crate) struct DshClient {
    info: ClientConfig,
    server: String,
    slot: ElicitSlot,
}

impl DshClient {
    pub(crate) fn new(server: &str, slot: ElicitSlot) -> Self {
        let mut elicitation = ElicitationCapability::new();
        elicitation.form = Some(FormElicitationCapability::new());
        elicitation.url = Some(UrlElicitationCapability::new());
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(elicitation);
        // The newest revision that still has the `initialize` handshake; a
        // server that knows only older ones answers with its own (negotiation).
        let info = ClientConfig::new(
            capabilities,
            Implementation::new("dsh", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE);
        DshClient {
            info,
            server: server.to_owned(),
            slot,
        }
    }
}

/// The canonical request for `params` from `server`; `None` for a mode
/// dsh does not know.
// `ElicitRequestParams` is non-exhaustive: a later mode needs the `_` arm.
#[allow(clippy::wildcard_enum_match_arm)]
pub(crate) fn canonical(server: &str, params: ElicitRequestParams) -> Option<ElicitationRequest> {
    Some(match params {
        ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } => ElicitationRequest {
            server: server.to_owned(),
            message,
            mode: ElicitationMode::Form,
            requested_schema: serde_json::to_value(&requested_schema).ok(),
            url: None,
            elicitation_id: None,
        },
        ElicitRequestParams::UrlElicitationParams {
            message,
            url,
            elicitation_id,
            ..
        } => ElicitationRequest {
            server: server.to_owned(),
            message,
            mode: ElicitationMode::Url,
            requested_schema: None,
            url: Some(url),
            elicitation_id: (!elicitation_id.is_empty()).then_some(elicitation_id),
        },
        _ => return None,
    })
}

/// The MCP result for a canonical answer: content only with `accept`.
pub(crate) fn wire_answer(answer: ElicitationAnswer) -> ElicitResult {
    let action = match answer.action {
        ElicitationAction::Accept => rmcp::model::ElicitationAction::Accept,
        ElicitationAction::Decline => rmcp::model::ElicitationAction::Decline,
        ElicitationAction::Cancel => rmcp::model::ElicitationAction::Cancel,
    };
    let result = ElicitResult::new(action);
    match (answer.action, answer.content) {
        (ElicitationAction::Accept, Some(content)) => result.with_content(content),
        (ElicitationAction::Accept | ElicitationAction::Decline | ElicitationAction::Cancel, _) => {
            result
        }
    }
}

impl ClientHandler for DshClient {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let Some(request) = canonical(&self.server, request) else {
            return Ok(wire_answer(ElicitationAnswer::bare(
                ElicitationAction::Decline,
            )));
        };
        let cancel = ElicitationAnswer::bare(ElicitationAction::Cancel);
        let Some(sender) = self.slot.current() else {
            return Ok(wire_answer(cancel));
        };
        let (reply, answer) = oneshot::channel();
        if sender.send((request, reply)).is_err() {
            return Ok(wire_answer(cancel));
        }
        Ok(wire_answer(answer.await.unwrap_or(cancel)))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_form_request_keeps_its_schema_in_wire_order() {
        let params: ElicitRequestParams = serde_json::from_value(json!({
            "message": "What is your name?",
            "requestedSchema": {"type": "object", "properties": {
                "name": {"type": "string", "title": "Name", "description": "Your name"},
                "ok": {"type": "boolean", "title": "OK", "description": "Go ahead?"}},
                "required": ["name"]}
        }))
        .unwrap();
        let request = canonical("elicit", params).unwrap();
        assert_eq!(request.mode, ElicitationMode::Form);
        assert_eq!(
            serde_json::to_string(&request.requested_schema.unwrap()).unwrap(),
            r#"{"type":"object","properties":{"name":{"type":"string","title":"Name","description":"Your name"},"ok":{"type":"boolean","title":"OK","description":"Go ahead?"}},"required":["name"]}"#
        );
    }

    #[test]
    fn a_call_ending_leaves_a_later_calls_slot_open() {
        let slot = ElicitSlot::default();
        let (first, _first_rx) = slot.open();
        let (second, _second_rx) = slot.open();
        drop(first);
        assert!(
            slot.current().is_some(),
            "the second call lost its questions"
        );
        drop(second);
        assert!(slot.current().is_none());
    }

    #[test]
    fn content_goes_back_only_with_accept() {
        let content = Some(json!({"name": "Ada"}));
        let accepted = wire_answer(ElicitationAnswer {
            action: ElicitationAction::Accept,
            content: content.clone(),
        });
        assert_eq!(
            serde_json::to_value(&accepted).unwrap(),
            json!({"action": "accept", "content": {"name": "Ada"}})
        );
        let declined = wire_answer(ElicitationAnswer {
            action: ElicitationAction::Decline,
            content,
        });
        assert_eq!(
            serde_json::to_value(&declined).unwrap(),
            json!({"action": "decline"})
        );
    }
}
