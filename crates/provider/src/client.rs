//! The public provider: the configured wire API over the shared transport,
//! and the errors of building it.

use std::sync::Arc;

use async_trait::async_trait;
use dsh_model::{Model, ModelError, ProviderFailure, StreamSink};
use dsh_protocol::{ModelReply, ModelRequest};

use crate::anthropic::AnthropicApi;
use crate::responses::ResponsesApi;
use crate::settings::{ENV_API_KEY, ProviderApi, ProviderSettings};
use crate::transport::HttpModel;
use crate::wire::ChatApi;

/// Why an [`HttpProvider`] could not be built, or refused a reply.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// No API key in `DSH_API_KEY` nor in the configured key variable.
    #[error("no API key for {base_url}: set {ENV_API_KEY} or {api_key_env}")]
    MissingApiKey {
        /// The configured key variable (default `DEEPSEEK_API_KEY`).
        api_key_env: String,
        /// The endpoint the key is for.
        base_url: String,
    },
    /// The HTTP client could not be set up (e.g. no TLS backend).
    #[error("cannot set up the HTTP client: {0}")]
    Client(#[source] reqwest::Error),
    /// One reply grew past [`ProviderSettings::max_reply_bytes`]: its text,
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

/// The wire API a provider speaks, each over the shared transport.
#[derive(Clone)]
enum Wire {
    Chat(HttpModel<ChatApi>),
    Anthropic(HttpModel<AnthropicApi>),
    Responses(HttpModel<ResponsesApi>),
}

/// dsh's HTTP model provider: the wire API the settings choose (Chat
/// Completions by default) over one shared transport.
///
/// Each [`Model::complete`] call is one streaming request, retried on 429,
/// 5xx (and overload) and connection failures. Dropping the future closes
/// the connection.
#[derive(Clone)]
pub struct HttpProvider {
    wire: Wire,
}

/// The provider's former name, from when it spoke Chat Completions only.
pub type OpenAiProvider = HttpProvider;

impl std::fmt::Debug for HttpProvider {
    // The key must never reach a log line (the settings redact their own).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpProvider")
            .field("settings", self.settings())
            .field("url", &self.url())
            .finish_non_exhaustive()
    }
}

impl HttpProvider {
    /// Builds a provider; fails when no API key was resolved.
    pub fn new(settings: ProviderSettings) -> Result<Self, ProviderError> {
        let api_key = match settings.api_key.as_deref().map(str::trim) {
            Some(key) if !key.is_empty() => key.to_owned(),
            _ => {
                return Err(ProviderError::MissingApiKey {
                    api_key_env: settings.api_key_env.clone(),
                    base_url: settings.base_url.clone(),
                });
            }
        };
        let wire = match settings.api {
            ProviderApi::Chat => Wire::Chat(
                HttpModel::new(settings, api_key, ChatApi).map_err(ProviderError::Client)?,
            ),
            ProviderApi::Anthropic => Wire::Anthropic(
                HttpModel::new(settings, api_key, AnthropicApi::default())
                    .map_err(ProviderError::Client)?,
            ),
            ProviderApi::Responses => Wire::Responses(
                HttpModel::new(settings, api_key, ResponsesApi::default())
                    .map_err(ProviderError::Client)?,
            ),
        };
        Ok(HttpProvider { wire })
    }

    /// The settings this provider was built from.
    pub fn settings(&self) -> &ProviderSettings {
        match &self.wire {
            Wire::Chat(model) => &model.settings,
            Wire::Anthropic(model) => &model.settings,
            Wire::Responses(model) => &model.settings,
        }
    }

    /// The URL requests are posted to.
    pub fn url(&self) -> &str {
        match &self.wire {
            Wire::Chat(model) => model.url(),
            Wire::Anthropic(model) => model.url(),
            Wire::Responses(model) => model.url(),
        }
    }
}

#[async_trait]
impl Model for HttpProvider {
    async fn complete(
        &self,
        request: &ModelRequest,
        sink: &mut dyn StreamSink,
    ) -> Result<ModelReply, ModelError> {
        match &self.wire {
            Wire::Chat(model) => model.complete(request, sink).await,
            Wire::Anthropic(model) => model.complete(request, sink).await,
            Wire::Responses(model) => model.complete(request, sink).await,
        }
    }

    fn name(&self) -> String {
        self.settings().model.clone()
    }

    fn with_model(&self, name: &str) -> Option<Arc<dyn Model>> {
        let wire = match &self.wire {
            Wire::Chat(model) => Wire::Chat(model.with_model(name)),
            Wire::Anthropic(model) => Wire::Anthropic(model.with_model(name)),
            Wire::Responses(model) => Wire::Responses(model.with_model(name)),
        };
        Some(Arc::new(HttpProvider { wire }))
    }
}
