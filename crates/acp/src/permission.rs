//! One `session/request_permission` round trip and what its answer means
//! to dsh: the option ids dsh offers and the reduced [`Answer`]. Shared by
//! tool-call approvals and consent questions (`approval`) and questions
//! asked on someone else's behalf (`questions`).

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{RequestPermissionOutcome, RequestPermissionRequest};
use dsh_seams::CancellationToken;

/// The option id that allows, once.
pub const ALLOW_ONCE: &str = "allow_once";
/// The option id that allows always (adds the call's rule).
pub const ALLOW_ALWAYS: &str = "allow_always";
/// The option id that rejects, once.
pub const REJECT_ONCE: &str = "reject_once";

/// What the client answered, reduced to what dsh does with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    /// The "allow once" option.
    AllowOnce,
    /// The "allow always" option.
    AllowAlways,
    /// The "reject once" option.
    RejectOnce,
    /// An option id dsh did not offer.
    UnknownOption(String),
    /// The client answered `cancelled`.
    ClientCancelled,
    /// The turn was cancelled while the question was open.
    TurnCancelled,
    /// The request failed: an error reply or a closed connection.
    Failed(String),
}

pub(crate) async fn ask(
    cx: &ConnectionTo<Client>,
    request: RequestPermissionRequest,
    cancel: &CancellationToken,
) -> Answer {
    let sent = cx.send_request(request).block_task();
    let reply = tokio::select! {
        reply = sent => reply,
        () = cancel.cancelled() => return Answer::TurnCancelled,
    };
    match reply {
        Ok(response) => match response.outcome {
            RequestPermissionOutcome::Selected(selected) => match &*selected.option_id.0 {
                ALLOW_ONCE => Answer::AllowOnce,
                ALLOW_ALWAYS => Answer::AllowAlways,
                REJECT_ONCE => Answer::RejectOnce,
                other => Answer::UnknownOption(other.to_owned()),
            },
            RequestPermissionOutcome::Cancelled => Answer::ClientCancelled,
            // An outcome this protocol version does not know is not a yes.
            _ => Answer::UnknownOption("(unknown outcome)".to_owned()),
        },
        Err(error) => Answer::Failed(error.to_string()),
    }
}
