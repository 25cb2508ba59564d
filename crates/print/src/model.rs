//! The model as Claude Code's print mode needs it: tool names the caller
//! expects ([`ToolNaming`]), the usage, API time and API error of every
//! request ([`Meter`]), and `--fallback-model`.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use async_trait::async_trait;
use dsh_model::{FailureCategory, Model, ModelError, ProviderFailure, StreamSink};
use dsh_protocol::{Message, ModelReply, ModelRequest, TokenUsage};

/// Which names the model and the messages use for dsh's built-in tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolNaming {
    /// dsh's own canonical names (`bash`, `read`, …).
    #[default]
    Dsh,
    /// Claude Code's (`Bash`, `Read`, `WebFetch`, `TaskCreate`, `Agent`, …:
    /// hooks-claude's `cc_tool_name`); MCP tools keep `mcp__server__tool`
    /// either way.
    ClaudeCode,
}

impl ToolNaming {
    /// The name the outside world sees for dsh tool `name`.
    pub fn outward(self, name: &str) -> String {
        match self {
            ToolNaming::Dsh => name.to_owned(),
            ToolNaming::ClaudeCode => dsh_hooks_claude::payload::cc_tool_name(name),
        }
    }

    /// dsh's name for a tool the outside world named `name` (the reverse
    /// of [`ToolNaming::outward`]; other names pass through).
    pub fn inward(self, name: &str) -> String {
        match self {
            ToolNaming::Dsh => name.to_owned(),
            ToolNaming::ClaudeCode => dsh_hooks_claude::payload::dsh_tool_name(name).to_owned(),
        }
    }

    /// The request as the model is to see it: tool specs and earlier tool
    /// calls under the outward names.
    pub fn request_outward(self, request: &ModelRequest) -> ModelRequest {
        let mut request = request.clone();
        if self == ToolNaming::Dsh {
            return request;
        }
        for tool in &mut request.tools {
            tool.name = self.outward(&tool.name);
        }
        for message in &mut request.messages {
            if let Message::Assistant { tool_calls, .. } = message {
                for call in tool_calls {
                    call.name = self.outward(&call.name);
                }
            }
        }
        request
    }
}

/// One model's share of a session's usage.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelTokens {
    /// The model's name as the provider was asked for it.
    pub model: String,
    /// Its tokens, summed over requests.
    pub usage: TokenUsage,
    /// How many requests it answered.
    pub requests: u64,
}

/// An API error the model answered with, for the result's
/// `api_error_status` / `api_error_type`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status, when there was a response.
    pub status: Option<u16>,
    /// Anthropic's error type for the category (`invalid_request_error`, …).
    pub kind: &'static str,
    /// The message dsh reports.
    pub message: String,
}

#[derive(Debug, Default)]
struct MeterState {
    api_ms: u64,
    models: Vec<ModelTokens>,
    last_error: Option<ApiError>,
}

/// What every model request of a session used: tokens per model, time
/// spent waiting on the API, the last API error. Cheap to clone (shared).
#[derive(Debug, Clone, Default)]
pub struct Meter(Arc<Mutex<MeterState>>);

impl Meter {
    /// An empty meter.
    pub fn new() -> Self {
        Meter::default()
    }

    fn with<T>(&self, f: impl FnOnce(&mut MeterState) -> T) -> T {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Milliseconds spent in model requests so far.
    pub fn api_ms(&self) -> u64 {
        self.with(|state| state.api_ms)
    }

    /// Tokens per model, in the order the models were first used.
    pub fn models(&self) -> Vec<ModelTokens> {
        self.with(|state| state.models.clone())
    }

    /// The last request's error, if the last request failed.
    pub fn last_error(&self) -> Option<ApiError> {
        self.with(|state| state.last_error.clone())
    }

    /// Records one request of `model`.
    pub fn record(&self, model: &str, elapsed_ms: u64, usage: Option<TokenUsage>) {
        self.with(|state| {
            state.api_ms = state.api_ms.saturating_add(elapsed_ms);
            state.last_error = None;
            let index = match state.models.iter().position(|m| m.model == model) {
                Some(index) => index,
                None => {
                    state.models.push(ModelTokens {
                        model: model.to_owned(),
                        ..ModelTokens::default()
                    });
                    state.models.len() - 1
                }
            };
            let entry = &mut state.models[index];
            entry.requests += 1;
            if let Some(usage) = usage {
                let sum = &mut entry.usage;
                sum.input_tokens += usage.input_tokens;
                sum.output_tokens += usage.output_tokens;
                sum.cache_read_input_tokens += usage.cache_read_input_tokens;
                sum.cache_creation_input_tokens += usage.cache_creation_input_tokens;
            }
        });
    }

    /// Records a failed request.
    pub fn record_error(&self, elapsed_ms: u64, error: &ModelError) {
        let failure = error.failure.as_ref();
        let api_error = ApiError {
            status: failure.and_then(|f| f.status),
            kind: anthropic_error_type(failure),
            message: error.message.clone(),
        };
        self.with(|state| {
            state.api_ms = state.api_ms.saturating_add(elapsed_ms);
            state.last_error = Some(api_error);
        });
    }
}

/// Anthropic's `error.type` for a failure's category.
fn anthropic_error_type(failure: Option<&ProviderFailure>) -> &'static str {
    match failure.map(|f| (f.category, f.status)) {
        Some((_, Some(529))) => "overloaded_error",
        Some((FailureCategory::AuthenticationFailed, Some(403))) => "permission_error",
        Some((FailureCategory::AuthenticationFailed | FailureCategory::MissingKey, _)) => {
            "authentication_error"
        }
        Some((FailureCategory::BillingError, _)) => "billing_error",
        Some((FailureCategory::RateLimit, _)) => "rate_limit_error",
        Some((FailureCategory::ServerError, _)) => "api_error",
        Some((FailureCategory::InvalidRequest, Some(404))) => "not_found_error",
        Some((FailureCategory::InvalidRequest, Some(413))) => "request_too_large",
        Some((FailureCategory::InvalidRequest, _)) => "invalid_request_error",
        Some((FailureCategory::Unknown, _)) | None => "api_error",
    }
}

/// A model that speaks [`ToolNaming`] to the provider, records every
/// request in a [`Meter`], and on an overloaded or failing provider
/// (HTTP 5xx, 529) asks the `--fallback-model` once instead.
pub struct PrintModel {
    inner: Arc<dyn Model>,
    naming: ToolNaming,
    meter: Meter,
    fallback: Option<String>,
}

impl PrintModel {
    /// Wraps `inner`.
    pub fn wrap(
        inner: Arc<dyn Model>,
        naming: ToolNaming,
        meter: Meter,
        fallback: Option<String>,
    ) -> Arc<dyn Model> {
        Arc::new(PrintModel {
            inner,
            naming,
            meter,
            fallback,
        })
    }

    async fn ask(
        &self,
        model: &dyn Model,
        request: &ModelRequest,
        sink: &mut dyn StreamSink,
    ) -> Result<ModelReply, ModelError> {
        let started = Instant::now();
        let answer = model.complete(request, sink).await;
        let elapsed = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        match &answer {
            Ok(reply) => {
                let name = request.model.clone().unwrap_or_else(|| model.name());
                self.meter.record(&name, elapsed, reply.usage);
            }
            Err(error) => self.meter.record_error(elapsed, error),
        }
        answer
    }
}

#[async_trait]
impl Model for PrintModel {
    async fn complete(
        &self,
        request: &ModelRequest,
        sink: &mut dyn StreamSink,
    ) -> Result<ModelReply, ModelError> {
        let outward = self.naming.request_outward(request);
        let mut answer = self.ask(self.inner.as_ref(), &outward, sink).await;
        if let (Err(error), Some(fallback)) = (&answer, &self.fallback)
            && error.category() == FailureCategory::ServerError
            && error.partial_text.is_empty()
            && let Some(other) = self.inner.with_model(fallback)
        {
            let mut retry = outward.clone();
            retry.model = Some(fallback.clone());
            answer = self.ask(other.as_ref(), &retry, sink).await;
        }
        let mut reply = answer?;
        for call in &mut reply.tool_calls {
            call.name = self.naming.inward(&call.name);
        }
        Ok(reply)
    }

    fn name(&self) -> String {
        self.inner.name()
    }

    fn with_model(&self, name: &str) -> Option<Arc<dyn Model>> {
        let inner = self.inner.with_model(name)?;
        Some(PrintModel::wrap(
            inner,
            self.naming,
            self.meter.clone(),
            self.fallback.clone(),
        ))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use dsh_protocol::{ToolCall, ToolSpec};
    use serde_json::json;

    struct Echo(Mutex<Vec<ModelRequest>>);

    #[async_trait]
    impl Model for Echo {
        async fn complete(
            &self,
            request: &ModelRequest,
            _sink: &mut dyn StreamSink,
        ) -> Result<ModelReply, ModelError> {
            self.0.lock().unwrap().push(request.clone());
            Ok(ModelReply {
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: "c2".into(),
                    name: "Bash".into(),
                    arguments: json!({"command": "ls"}),
                }],
                usage: Some(TokenUsage {
                    input_tokens: 10,
                    output_tokens: 2,
                    ..TokenUsage::default()
                }),
                thinking: None,
            })
        }
        fn name(&self) -> String {
            "m".into()
        }
    }

    #[tokio::test]
    async fn claude_naming_renames_outward_and_back_and_meters() {
        let echo = Arc::new(Echo(Mutex::new(Vec::new())));
        let meter = Meter::new();
        let model = PrintModel::wrap(echo.clone(), ToolNaming::ClaudeCode, meter.clone(), None);
        let request = ModelRequest {
            turn: 1,
            step: 1,
            messages: vec![Message::Assistant {
                content: String::new(),
                tool_calls: vec![ToolCall {
                    id: "c1".into(),
                    name: "read".into(),
                    arguments: json!({}),
                }],
                thinking: None,
            }],
            tools: vec![ToolSpec {
                name: "bash".into(),
                description: String::new(),
                input_schema: json!({}),
            }],
            model: None,
        };
        let reply = model
            .complete(&request, &mut dsh_model::NoStream)
            .await
            .unwrap();
        assert_eq!(reply.tool_calls[0].name, "bash");
        let sent = &echo.0.lock().unwrap()[0];
        assert_eq!(sent.tools[0].name, "Bash");
        assert!(
            matches!(&sent.messages[0], Message::Assistant { tool_calls, .. } if tool_calls[0].name == "Read")
        );
        let models = meter.models();
        assert_eq!(models[0].model, "m");
        assert_eq!(models[0].usage.input_tokens, 10);
        assert_eq!(ToolNaming::ClaudeCode.inward("mcp__s__t"), "mcp__s__t");
        assert_eq!(ToolNaming::Dsh.outward("bash"), "bash");
    }
}
