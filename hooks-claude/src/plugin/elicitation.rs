//! Elicitation and ElicitationResult: an MCP server's question to the user
//! (`ev_elicit_*` captures of Claude Code 2.1.328).
//!
//! Elicitation (matcher on the server name) fires before anyone is asked:
//! a hook's `hookSpecificOutput.action` (with `content`) answers in the
//! user's place, and then neither the user nor ElicitationResult is asked;
//! an exit 2 answers `decline`. ElicitationResult fires with what the user
//! (in a headless session: nobody, so `cancel`) answered; its `action` and
//! `content` replace the answer, and an exit 2 turns it into `decline`.

use dsh_hooks::{Cx, Flow};

use super::{Fired, Firing, answer};
use crate::dialect::Claude;
use crate::events::HookEvent;
use crate::output::Effect;
use crate::output::keys::ElicitationKeys;
use crate::payload;
use dsh_seams::{ElicitationAction, ElicitationAnswer, ElicitationRequest};

/// The first answer among the hooks, in configuration order: an exit 2
/// declines, a valid `hookSpecificOutput.action` answers.
fn answer_of(fired: &[Fired]) -> Option<ElicitationAnswer> {
    fired.iter().find_map(|f| {
        if let Effect::Deny { .. } | Effect::Block { .. } = &f.reading.effect {
            return Some(ElicitationAnswer::bare(ElicitationAction::Decline));
        }
        let keys: ElicitationKeys = f.reading.parsed.event_keys()?;
        let action = ElicitationAction::parse(keys.action.as_str()?)?;
        let content = keys.content.into_valid().map(serde_json::Value::Object);
        Some(ElicitationAnswer { action, content })
    })
}

/// Elicitation: a hook may answer in the user's place.
pub(super) fn elicitation<'a>(
    cx: Cx<'_, Claude>,
    request: &'a ElicitationRequest,
) -> Flow<'a, Claude, Option<ElicitationAnswer>> {
    let common = cx.bridge.common(cx.state, cx.ctx, true);
    let firing = Firing {
        subject: Some(&request.server),
        ..Firing::new(
            HookEvent::Elicitation,
            &payload::elicitation(&common, request),
        )
    };
    answer(&cx, &firing, answer_of)
}

/// ElicitationResult: a hook may change the user's answer.
pub(super) fn elicitation_result<'a>(
    cx: Cx<'_, Claude>,
    request: &'a ElicitationRequest,
    user: &'a ElicitationAnswer,
) -> Flow<'a, Claude, Option<ElicitationAnswer>> {
    let common = cx.bridge.common(cx.state, cx.ctx, true);
    let firing = Firing {
        subject: Some(&request.server),
        ..Firing::new(
            HookEvent::ElicitationResult,
            &payload::elicitation_result(&common, request, user),
        )
    };
    answer(&cx, &firing, answer_of)
}
