//! The provider's typed errors: building it, and a reply it refused. A
//! module of its own, so that the transport and the client both name them.

use dsh_model::ProviderFailure;

use crate::settings::ENV_API_KEY;

/// Why an [`crate::HttpProvider`] could not be built, or refused a reply.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// No API key in `DSH_API_KEY` nor in the configured key variable.
    #[error(
        "no API key for {base_url} ({api} API): {looked_at} unset; set {api_key_env} (or {ENV_API_KEY}) to your key"
    )]
    MissingApiKey {
        /// The API spoken (`chat`, `anthropic`, `responses`).
        api: String,
        /// Every variable looked at, for people (`A, B and C are all`).
        looked_at: String,
        /// The configured key variable (default `DEEPSEEK_API_KEY`).
        api_key_env: String,
        /// The endpoint the key is for.
        base_url: String,
    },
    /// The HTTP client could not be set up (e.g. no TLS backend).
    #[error("cannot set up the HTTP client: {0}")]
    Client(#[source] reqwest::Error),
    /// One reply grew past [`crate::ProviderSettings::max_reply_bytes`]: its text,
    /// tool-call arguments and thinking together (or, for a reply sent as
    /// one JSON document, its body) are over the limit. The connection is
    /// dropped there; the model's error message carries this text.
    #[error(
        "the model's reply grew past {limit} bytes (text, tool-call arguments and thinking together) and was refused; `max_reply_mib` in the [provider] table of config.toml sets the limit"
    )]
    ReplyTooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
}

impl ProviderError {
    /// The typed failure, for errors the user fixes in the provider's set-up
    /// (a missing key); `None` for dsh's own set-up failures.
    pub fn failure(&self) -> Option<ProviderFailure> {
        match self {
            ProviderError::MissingApiKey { .. } => {
                Some(ProviderFailure::missing_key(self.to_string()))
            }
            ProviderError::Client(_) | ProviderError::ReplyTooLarge { .. } => None,
        }
    }
}
