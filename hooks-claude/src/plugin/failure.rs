//! StopFailure: fired instead of Stop when the turn's model request fails
//! (`misc_stopfailure_*`), never waited for; SessionEnd still runs.

use std::time::Duration;

use dsh_hooks::{Cx, Flow, Record};
use dsh_model::{FailureCategory, ModelError};
use dsh_seams::TurnFailure;

use super::Firing;
use crate::dialect::Claude;
use crate::events::HookEvent;
use crate::payload;

/// How long session teardown lets still-running StopFailure hooks finish
/// before they are killed. Claude Code exits without waiting for them, so
/// only a quick hook completes there; this bounds dsh's wait the same way
/// (a hook that needs longer is killed) without racing a hook that only
/// writes a file.
pub(crate) const STOP_FAILURE_GRACE: Duration = Duration::from_secs(1);

/// The StopFailure `error` field (the matcher's subject) for a failure.
/// Claude Code sends `unknown` for a plain HTTP 400 (`misc_stopfailure_400`),
/// so a refused request is `unknown` here too.
pub fn stop_failure_error(category: FailureCategory) -> &'static str {
    match category {
        FailureCategory::RateLimit => "rate_limit",
        FailureCategory::ServerError => "server_error",
        FailureCategory::AuthenticationFailed | FailureCategory::MissingKey => {
            "authentication_failed"
        }
        FailureCategory::BillingError => "billing_error",
        FailureCategory::InvalidRequest | FailureCategory::Unknown => "unknown",
    }
}

/// Claude Code's text for a failed request (its result line and the
/// StopFailure `last_assistant_message`), as captured for 400, 429 and 529.
pub fn api_error_text(error: &ModelError) -> String {
    let Some(failure) = &error.failure else {
        return format!("API Error: {}", error.message);
    };
    let Some(status) = failure.status else {
        return format!("API Error: {}", failure.message);
    };
    let message = failure.message.as_str();
    match status {
        429 if message.is_empty() => "API Error: Request rejected (429)".to_owned(),
        429 => format!("API Error: Request rejected (429) · {message}"),
        529 => {
            let what = if message.is_empty() {
                "Overloaded"
            } else {
                message
            };
            let advice = match &failure.gateway {
                Some(gateway) => {
                    format!(" If it persists, check your inference gateway ({gateway}).")
                }
                None => String::new(),
            };
            format!(
                "API Error: 529 {what}. This is a server-side issue, usually temporary — try again in a moment.{advice}"
            )
        }
        _ if message.is_empty() => format!("API Error: {status}"),
        _ => format!("API Error: {status} {message}"),
    }
}

/// StopFailure: every handler is launched detached (`rules.rs`), so the
/// firing returns once they have started; SessionEnd settles them.
pub(super) fn turn_failed<'a>(
    cx: Cx<'_, Claude>,
    failure: &'a TurnFailure,
) -> Flow<'a, Claude, ()> {
    let common = cx.bridge.common(cx.state, cx.ctx, true);
    let error = stop_failure_error(failure.error.category());
    let text = api_error_text(&failure.error);
    let firing = Firing {
        subject: Some(error),
        ..Firing::new(
            HookEvent::StopFailure,
            &payload::stop_failure(&common, error, &text),
        )
    };
    Flow::fire(Claude::fire_of(&cx, &firing), |cx, _| {
        cx.state.stop_failure_started = true;
        (Record::AsRead, Flow::Done(()))
    })
}

/// At teardown: lets StopFailure hooks still running finish within
/// [`STOP_FAILURE_GRACE`] and records those that did (outside any turn);
/// the caller then kills what is left.
pub(super) fn settle_stop_failure<'a>(cx: Cx<'_, Claude>) -> Flow<'a, Claude, ()> {
    if !std::mem::take(&mut cx.state.stop_failure_started) {
        return Flow::Done(());
    }
    // Their output is ignored; an async hook's context has no turn left
    // to reach either.
    let harvest = Flow::harvest(|_, _| Flow::Done(()));
    Flow::settle(STOP_FAILURE_GRACE, harvest)
}

#[cfg(test)]
mod tests {
    use dsh_model::ProviderFailure;

    use super::*;

    fn failed(status: u16, message: &str, gateway: Option<&str>) -> ModelError {
        ModelError::new("whatever dsh says").with_failure(
            ProviderFailure::from_status(status, message).with_gateway(gateway.map(str::to_owned)),
        )
    }

    #[test]
    fn texts_are_claude_codes_as_captured() {
        assert_eq!(
            api_error_text(&failed(400, "MOCK-400: prompt is invalid", None)),
            "API Error: 400 MOCK-400: prompt is invalid"
        );
        assert_eq!(
            api_error_text(&failed(429, "MOCK-429: slow down", None)),
            "API Error: Request rejected (429) · MOCK-429: slow down"
        );
        assert_eq!(
            api_error_text(&failed(529, "Overloaded", Some("127.0.0.1:4242"))),
            "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:4242)."
        );
        assert_eq!(
            api_error_text(&ModelError::new("the reply stalled")),
            "API Error: the reply stalled"
        );
    }

    #[test]
    fn categories_are_the_captured_matcher_values() {
        let cases = [
            (400, "unknown"),
            (401, "authentication_failed"),
            (403, "authentication_failed"),
            (402, "billing_error"),
            (429, "rate_limit"),
            (500, "server_error"),
            (529, "server_error"),
        ];
        for (status, expected) in cases {
            assert_eq!(
                stop_failure_error(failed(status, "", None).category()),
                expected,
                "{status}"
            );
        }
        assert_eq!(
            stop_failure_error(ModelError::new("cut").category()),
            "unknown"
        );
    }
}
