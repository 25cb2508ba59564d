//! `in_progress` for a tool call the moment it starts running.
//!
//! The session log has no event for "execution started" (a call is logged
//! when sealed and again when settled), so an editor would show a long
//! command as pending for its whole run. This execute wrapper sits last in
//! the plugin chain, where every pre-execute hook, rule and approval has
//! already let the call through, and tells the client just before the tool
//! is dispatched. A denied call never reaches it, and goes from pending to
//! failed.

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    SessionId, SessionUpdate, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use async_trait::async_trait;
use dsh_seams::{CancellationToken, Next, Plugin, SeamContext, ToolExecution, ToolOutcome};

/// The update that marks `call_id` as running.
pub fn in_progress(call_id: &str) -> SessionUpdate {
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
        call_id.to_owned(),
        ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
    ))
}

/// The execute wrapper of one ACP session (see the module docs).
pub struct ExecutionStarts {
    cx: ConnectionTo<Client>,
    session_id: SessionId,
}

impl ExecutionStarts {
    /// Reports the calls of `session_id` to `cx`.
    pub fn new(cx: ConnectionTo<Client>, session_id: SessionId) -> Self {
        ExecutionStarts { cx, session_id }
    }
}

#[async_trait]
impl Plugin for ExecutionStarts {
    fn name(&self) -> &str {
        "acp"
    }

    async fn execute(
        &self,
        _ctx: &SeamContext,
        exec: &ToolExecution,
        signal: CancellationToken,
        next: Next<'_>,
    ) -> ToolOutcome {
        super::send_update(&self.cx, &self.session_id, in_progress(&exec.call_id));
        next.run(signal).await
    }
}
