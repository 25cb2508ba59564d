//! StopFailure: fired instead of Stop when the turn's model request fails
//! (`misc_stopfailure_*`), never waited for; SessionEnd still runs.

use std::time::Duration;

use dsh_model::{FailureCategory, ModelError};
use dsh_seams::{SeamContext, TurnFailure};

use super::{ClaudePlugin, Firing};
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

impl ClaudePlugin {
    pub(super) async fn on_turn_failed(&self, ctx: &SeamContext, failure: &TurnFailure) {
        let common = self.common(ctx, true);
        let error = stop_failure_error(failure.error.category());
        let text = api_error_text(&failure.error);
        let firing = Firing {
            subject: Some(error),
            ..Firing::new(
                HookEvent::StopFailure,
                &payload::stop_failure(&common, error, &text),
            )
        };
        // Every StopFailure handler is launched detached (plugin.rs), so
        // this returns once they have started.
        let fired = self.fire(ctx, &firing, None).await;
        self.record(ctx, firing.event, &fired, &|_, _| {});
        self.state().stop_failure_started = true;
    }

    /// At teardown: lets StopFailure hooks still running finish within
    /// [`STOP_FAILURE_GRACE`] and records those that did (outside any turn);
    /// the caller then kills what is left.
    pub(super) async fn settle_stop_failure(&self, ctx: &SeamContext) {
        let started = std::mem::take(&mut self.state().stop_failure_started);
        if started {
            self.engine().settle_pending(STOP_FAILURE_GRACE).await;
            // Their output is ignored; an async hook's context has no turn
            // left to reach either.
            let _ = self.harvest_async(ctx);
        }
    }
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
