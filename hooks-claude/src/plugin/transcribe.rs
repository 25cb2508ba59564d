//! The Claude-format transcript the bridge keeps from the session log:
//! the session's at `transcript_path`, each subagent's in its sidechain,
//! and the prompt ids later payloads carry.

use dsh_protocol::{Event, EventBody, SessionHeaderEvent, ToolResultEvent, TurnStartEvent};

use super::{State, prompt_id_for};
use crate::dialect::Claude;
use crate::transcript::Transcript;

/// Appends `event` to the transcript it belongs to (and keeps the
/// session's header and each turn's prompt id).
pub(super) fn on_event(claude: &Claude, state: &mut State, event: &Event) {
    match &event.body {
        EventBody::SessionHeader(SessionHeaderEvent {
            session_id, cwd, ..
        }) => {
            if state.transcript.is_none() {
                state.transcript = Some(Transcript::new(
                    claude.transcript_path(session_id),
                    session_id.clone(),
                    cwd.clone(),
                ));
            }
            return;
        }
        EventBody::TurnStart(TurnStartEvent { turn }) => {
            let session_id = state
                .transcript
                .as_ref()
                .map(|transcript| transcript.session_id().to_owned())
                .unwrap_or_default();
            let id = state
                .prompt_ids
                .entry(*turn)
                .or_insert_with(|| prompt_id_for(&session_id, *turn))
                .clone();
            state.last_prompt_id = Some(id);
            return;
        }
        EventBody::UserMessage(_)
        | EventBody::PromptBlocked(_)
        | EventBody::AssistantMessage(_)
        | EventBody::ToolCall(_)
        | EventBody::ToolResult(_)
        | EventBody::ContextMessage(_)
        | EventBody::SteeringMessage(_)
        | EventBody::TurnEnd(_)
        | EventBody::CompactionStarted(_)
        | EventBody::CompactionCompleted(_)
        | EventBody::CompactionFailed(_)
        | EventBody::HookInvoked(_)
        | EventBody::HookResult(_)
        | EventBody::SeamNote(_)
        | EventBody::SessionCleared { .. }
        | EventBody::ModelSwitched(_) => {}
    }
    let prompt_id = state.last_prompt_id.clone();
    if let Some(agent_id) = &event.agent_id {
        // A subagent's events go to its sidechain transcript; its tool
        // responses were stashed on the session's.
        let response = match &event.body {
            EventBody::ToolResult(ToolResultEvent { call_id, .. }) => state
                .transcript
                .as_mut()
                .and_then(|t| t.tool_responses.remove(call_id))
                .map(|r| (call_id.clone(), r)),
            EventBody::SessionHeader(_)
            | EventBody::TurnStart(_)
            | EventBody::UserMessage(_)
            | EventBody::PromptBlocked(_)
            | EventBody::AssistantMessage(_)
            | EventBody::ToolCall(_)
            | EventBody::ContextMessage(_)
            | EventBody::SteeringMessage(_)
            | EventBody::TurnEnd(_)
            | EventBody::CompactionStarted(_)
            | EventBody::CompactionCompleted(_)
            | EventBody::CompactionFailed(_)
            | EventBody::HookInvoked(_)
            | EventBody::HookResult(_)
            | EventBody::SeamNote(_)
            | EventBody::SessionCleared { .. }
            | EventBody::ModelSwitched(_) => None,
        };
        let State {
            transcript,
            agent_transcripts,
            ..
        } = state;
        let Some(session) = transcript.as_ref() else {
            return;
        };
        let sidechain = agent_transcripts
            .entry(agent_id.clone())
            .or_insert_with(|| session.for_agent(agent_id));
        if let Some((call_id, response)) = response {
            sidechain.tool_responses.insert(call_id, response);
        }
        if let Err(error) = sidechain.append(event, prompt_id.as_deref()) {
            tracing::warn!(%error, "cannot append to a subagent's Claude-format transcript");
        }
        return;
    }
    if let Some(transcript) = state.transcript.as_mut()
        && let Err(error) = transcript.append(event, prompt_id.as_deref())
    {
        tracing::warn!(%error, "cannot append to the Claude-format transcript");
    }
}
