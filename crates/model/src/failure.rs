//! What a provider answered when it refused a request, typed: the category
//! hook bridges put in front of hooks (Claude Code's StopFailure `error`)
//! and the terminal explains, with one line on what it means and one on what
//! to do.

use std::time::Duration;

/// Why the provider refused a request, in the categories people act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailureCategory {
    /// No API key is configured (dsh never sent the request).
    MissingKey,
    /// The key was refused (HTTP 401 or 403).
    AuthenticationFailed,
    /// The account cannot pay for the request (HTTP 402).
    BillingError,
    /// Too many requests (HTTP 429).
    RateLimit,
    /// The provider failed or is overloaded (HTTP 5xx, Anthropic's 529).
    ServerError,
    /// The provider refused the request itself (HTTP 400, 404, 413, 422, …).
    InvalidRequest,
    /// Anything else: no status, or a status none of the above covers.
    Unknown,
}

impl FailureCategory {
    /// The category for an HTTP status.
    pub fn from_status(status: u16) -> Self {
        match status {
            401 | 403 => FailureCategory::AuthenticationFailed,
            402 => FailureCategory::BillingError,
            429 => FailureCategory::RateLimit,
            500..=599 => FailureCategory::ServerError,
            400..=499 => FailureCategory::InvalidRequest,
            _ => FailureCategory::Unknown,
        }
    }

    /// dsh's own name for the category (snake_case, stable).
    pub fn as_str(self) -> &'static str {
        match self {
            FailureCategory::MissingKey => "missing_key",
            FailureCategory::AuthenticationFailed => "authentication_failed",
            FailureCategory::BillingError => "billing_error",
            FailureCategory::RateLimit => "rate_limit",
            FailureCategory::ServerError => "server_error",
            FailureCategory::InvalidRequest => "invalid_request",
            FailureCategory::Unknown => "unknown",
        }
    }
}

impl std::fmt::Display for FailureCategory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The provider's answer to a failed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderFailure {
    /// The category, from the status (or [`FailureCategory::MissingKey`]).
    pub category: FailureCategory,
    /// The HTTP status, when there was a response.
    pub status: Option<u16>,
    /// The provider's own error message (the body's `error.message`, or an
    /// excerpt of the body); empty when it sent none.
    pub message: String,
    /// How long the provider asked to wait (`Retry-After`), if it said.
    pub retry_after: Option<Duration>,
    /// The endpoint's `host:port`, named in the advice for server errors.
    pub gateway: Option<String>,
}

impl ProviderFailure {
    /// A failure for an HTTP status and the provider's message.
    pub fn from_status(status: u16, message: impl Into<String>) -> Self {
        ProviderFailure {
            category: FailureCategory::from_status(status),
            status: Some(status),
            message: message.into(),
            retry_after: None,
            gateway: None,
        }
    }

    /// No API key was configured.
    pub fn missing_key(message: impl Into<String>) -> Self {
        ProviderFailure {
            category: FailureCategory::MissingKey,
            status: None,
            message: message.into(),
            retry_after: None,
            gateway: None,
        }
    }

    /// With the server's requested wait.
    pub fn with_retry_after(mut self, retry_after: Option<Duration>) -> Self {
        self.retry_after = retry_after;
        self
    }

    /// With the endpoint's `host:port`.
    pub fn with_gateway(mut self, gateway: Option<String>) -> Self {
        self.gateway = gateway;
        self
    }

    /// One line on what happened (names the status).
    pub fn explanation(&self) -> String {
        let status = self
            .status
            .map(|status| format!(" (HTTP {status})"))
            .unwrap_or_default();
        match self.category {
            FailureCategory::MissingKey => "no API key is configured for the provider".to_owned(),
            FailureCategory::AuthenticationFailed => {
                format!("the provider refused the API key{status}")
            }
            FailureCategory::BillingError => {
                format!("the provider refused the request for billing reasons{status}")
            }
            FailureCategory::RateLimit => {
                format!("the provider is rate-limiting requests{status}")
            }
            FailureCategory::ServerError => {
                format!("the provider failed or is overloaded{status}")
            }
            FailureCategory::InvalidRequest => {
                format!("the provider rejected the request as invalid{status}")
            }
            FailureCategory::Unknown => format!("the model request failed{status}"),
        }
    }

    /// One line on what to do about it.
    pub fn fix(&self) -> String {
        match self.category {
            FailureCategory::MissingKey | FailureCategory::AuthenticationFailed => {
                "set DSH_API_KEY (or the API's own key variable: DEEPSEEK_API_KEY, ANTHROPIC_API_KEY or OPENAI_API_KEY, or the one `api_key_env` names) to a valid key for this endpoint".to_owned()
            }
            FailureCategory::BillingError => {
                "check the account's balance or plan with the provider".to_owned()
            }
            FailureCategory::RateLimit => match self.retry_after {
                Some(wait) => format!(
                    "wait {:.0} s (the provider's Retry-After) and send again",
                    wait.as_secs_f64().ceil()
                ),
                None => "wait a moment and send again; lower the request rate if it keeps happening"
                    .to_owned(),
            },
            FailureCategory::ServerError => match &self.gateway {
                Some(gateway) => format!(
                    "usually temporary: try again in a moment; if it persists, check the endpoint ({gateway})"
                ),
                None => "usually temporary: try again in a moment".to_owned(),
            },
            FailureCategory::InvalidRequest => {
                "read the provider's message: the model name, max_tokens or the history may not suit this endpoint".to_owned()
            }
            FailureCategory::Unknown => {
                "read the message above; send again if it looks transient".to_owned()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_categories() {
        let cases = [
            (400, FailureCategory::InvalidRequest),
            (401, FailureCategory::AuthenticationFailed),
            (402, FailureCategory::BillingError),
            (403, FailureCategory::AuthenticationFailed),
            (404, FailureCategory::InvalidRequest),
            (429, FailureCategory::RateLimit),
            (500, FailureCategory::ServerError),
            (503, FailureCategory::ServerError),
            (529, FailureCategory::ServerError),
            (302, FailureCategory::Unknown),
        ];
        for (status, category) in cases {
            assert_eq!(FailureCategory::from_status(status), category, "{status}");
        }
    }

    #[test]
    fn explanations_name_the_status_and_the_fix_the_wait() {
        let failure = ProviderFailure::from_status(429, "slow down")
            .with_retry_after(Some(Duration::from_millis(2500)));
        assert_eq!(
            failure.explanation(),
            "the provider is rate-limiting requests (HTTP 429)"
        );
        assert_eq!(
            failure.fix(),
            "wait 3 s (the provider's Retry-After) and send again"
        );
        let server =
            ProviderFailure::from_status(503, "").with_gateway(Some("127.0.0.1:9".to_owned()));
        assert!(server.fix().contains("(127.0.0.1:9)"), "{}", server.fix());
        let key = ProviderFailure::missing_key("no key");
        assert_eq!(key.status, None);
        assert!(key.fix().contains("DSH_API_KEY"));
    }
}
