//! The public provider: the configured wire API over the shared transport,
//! and the errors of building it.

use std::sync::Arc;

use async_trait::async_trait;
use dsh_model::{Model, ModelError, StreamSink};
use dsh_protocol::{ModelReply, ModelRequest};

use crate::anthropic::AnthropicApi;
pub use crate::error::ProviderError;
use crate::responses::ResponsesApi;
use crate::settings::{ProviderApi, ProviderSettings};
use crate::transport::HttpModel;
use crate::wire::ChatApi;

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
                    api: settings.api.to_string(),
                    looked_at: settings.looked_at_key_variables(),
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
