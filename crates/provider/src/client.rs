//! The HTTP side: one streaming POST per attempt, retries with backoff,
//! and every failure turned into a [`ModelError`] a person can act on.

use std::time::Duration;

use async_trait::async_trait;
use dsh_model::{Model, ModelError, ProviderFailure, StreamSink};
use dsh_protocol::{ModelReply, ModelRequest, ToolCall};
use futures::StreamExt;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, RETRY_AFTER};
use serde_json::Value;

use crate::settings::{ENV_API_KEY, ProviderSettings};
use crate::stream::{Accumulator, MAX_LINE_BYTES, Progress, SseError, sse_data};
use crate::wire;

/// The longest `Retry-After` honoured; a server asking for more gets this.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// The longest computed backoff delay.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How much of an error body is read.
const ERROR_BODY_CAP: usize = 16 * 1024;
/// How many characters of a body or chunk go into an error message.
const EXCERPT_CHARS: usize = 300;

/// Why an [`OpenAiProvider`] could not be built.
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
}

impl ProviderError {
    /// The typed failure, for errors the user fixes in the provider's set-up
    /// (a missing key); `None` for dsh's own set-up failures.
    pub fn failure(&self) -> Option<ProviderFailure> {
        match self {
            ProviderError::MissingApiKey { .. } => {
                Some(ProviderFailure::missing_key(self.to_string()))
            }
            ProviderError::Client(_) => None,
        }
    }
}

/// An OpenAI-compatible Chat Completions client (DeepSeek by default).
///
/// Each [`Model::complete`] call is one streaming request, retried on 429,
/// 5xx and connection failures. Dropping the future closes the connection.
pub struct OpenAiProvider {
    settings: ProviderSettings,
    api_key: String,
    url: String,
    client: reqwest::Client,
}

impl std::fmt::Debug for OpenAiProvider {
    // The key must never reach a log line (the settings redact their own).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiProvider")
            .field("settings", &self.settings)
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl OpenAiProvider {
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
        let url = settings.completions_url();
        let mut builder = reqwest::Client::builder()
            .connect_timeout(settings.connect_timeout)
            .user_agent(concat!("dsh/", env!("CARGO_PKG_VERSION")));
        if is_loopback(&url) {
            // A proxy from the environment must not capture a local server
            // (a local model, or the mock in tests).
            builder = builder.no_proxy();
        }
        let client = builder.build().map_err(ProviderError::Client)?;
        Ok(OpenAiProvider {
            settings,
            api_key,
            url,
            client,
        })
    }

    /// The settings this provider was built from.
    pub fn settings(&self) -> &ProviderSettings {
        &self.settings
    }

    /// One attempt: send, check the status, read the reply.
    async fn attempt(
        &self,
        body: &Value,
        sink: &mut dyn StreamSink,
    ) -> Result<ModelReply, Failure> {
        let timeout = self.settings.request_timeout;
        let send = self
            .client
            .post(&self.url)
            .bearer_auth(&self.api_key)
            .header(ACCEPT, "text/event-stream")
            .json(body)
            .send();
        let response = match tokio::time::timeout(timeout, send).await {
            Err(_) => {
                return Err(Failure::Fatal(ModelError::new(format!(
                    "request timed out: no response from {} within {}s (request_timeout_secs)",
                    self.url,
                    timeout.as_secs_f64()
                ))));
            }
            Ok(Err(error)) if error.is_connect() => {
                return Err(Failure::Retryable {
                    reason: format!("cannot connect to {}: {}", self.url, error_chain(&error)),
                    retry_after: None,
                    failure: None,
                });
            }
            Ok(Err(error)) => {
                return Err(Failure::Retryable {
                    reason: format!("request to {} failed: {}", self.url, error_chain(&error)),
                    retry_after: None,
                    failure: None,
                });
            }
            Ok(Ok(response)) => response,
        };

        let status = response.status();
        if !status.is_success() {
            return Err(self.status_failure(response).await);
        }
        let is_json = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.trim_start().starts_with("application/json"));
        if is_json {
            return self
                .whole_completion(response, sink)
                .await
                .map_err(Failure::Fatal);
        }
        self.read_stream(response, sink)
            .await
            .map_err(Failure::Fatal)
    }

    /// `text` (from the server) with the API key replaced: a server that
    /// echoes the key in an error must not put it in a message, and from
    /// there in the session log or on the terminal. Keys under 8 characters
    /// are left alone (replacing them would garble ordinary text).
    fn redact(&self, text: &str) -> String {
        if self.api_key.len() >= 8 && text.contains(&self.api_key) {
            text.replace(&self.api_key, "[API key]")
        } else {
            text.to_owned()
        }
    }

    async fn status_failure(&self, response: reqwest::Response) -> Failure {
        let status = response.status();
        let retry_after = retry_after(response.headers());
        let body = read_error_body(response, self.settings.request_timeout).await;
        let detail = error_detail(&self.redact(&body));
        let status_text = status_text(status);
        let failure = ProviderFailure::from_status(status.as_u16(), detail.clone())
            .with_retry_after(retry_after)
            .with_gateway(gateway(&self.url));
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            return Failure::Fatal(
                ModelError::new(format!(
                    "authentication failed ({status_text}) at {}: check {ENV_API_KEY} or {}{}",
                    self.url,
                    self.settings.api_key_env,
                    suffix(&detail)
                ))
                .with_failure(failure),
            );
        }
        let reason = format!("{status_text} from {}{}", self.url, suffix(&detail));
        if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
            Failure::Retryable {
                reason,
                retry_after,
                failure: Some(failure),
            }
        } else {
            Failure::Fatal(ModelError::new(reason).with_failure(failure))
        }
    }

    async fn read_stream(
        &self,
        response: reqwest::Response,
        sink: &mut dyn StreamSink,
    ) -> Result<ModelReply, ModelError> {
        let idle = self.settings.request_timeout;
        let mut events = std::pin::pin!(sse_data(response.bytes_stream(), idle));
        let mut accumulator = Accumulator::default();
        let fail = |accumulator: &Accumulator, message: String| ModelError {
            message,
            partial_text: accumulator.text().to_owned(),
            failure: None,
        };
        while let Some(event) = events.next().await {
            let data = match event {
                Ok(data) => data,
                Err(SseError::Stalled) => {
                    return Err(fail(
                        &accumulator,
                        format!(
                            "the reply stalled: no data from {} for {}s (request_timeout_secs)",
                            self.url,
                            idle.as_secs_f64()
                        ),
                    ));
                }
                Err(SseError::Body(error)) => {
                    return Err(fail(
                        &accumulator,
                        format!("the connection broke mid-reply: {}", error_chain(&error)),
                    ));
                }
                Err(SseError::LineTooLong) => {
                    return Err(fail(
                        &accumulator,
                        format!("an event-stream line exceeded {MAX_LINE_BYTES} bytes"),
                    ));
                }
                Err(SseError::Malformed(message)) => return Err(fail(&accumulator, message)),
            };
            match accumulator.on_event(&data, sink) {
                Ok(Progress::Done) => return Ok(accumulator.into_reply()),
                Ok(Progress::More) => {}
                Err(message) => return Err(fail(&accumulator, message)),
            }
        }
        if accumulator.finished() {
            tracing::debug!("stream ended after finish_reason without [DONE]");
            return Ok(accumulator.into_reply());
        }
        Err(fail(
            &accumulator,
            "the connection closed before the reply was complete (no finish_reason or [DONE])"
                .to_owned(),
        ))
    }

    /// A server that ignored `stream: true` and sent one JSON completion.
    async fn whole_completion(
        &self,
        response: reqwest::Response,
        sink: &mut dyn StreamSink,
    ) -> Result<ModelReply, ModelError> {
        let timeout = self.settings.request_timeout;
        let bytes = match tokio::time::timeout(timeout, response.bytes()).await {
            Err(_) => {
                return Err(ModelError::new(format!(
                    "the reply stalled: no complete body from {} within {}s",
                    self.url,
                    timeout.as_secs_f64()
                )));
            }
            Ok(Err(error)) => {
                return Err(ModelError::new(format!(
                    "the connection broke mid-reply: {}",
                    error_chain(&error)
                )));
            }
            Ok(Ok(bytes)) => bytes,
        };
        let completion: wire::Completion = serde_json::from_slice(&bytes).map_err(|error| {
            ModelError::new(format!(
                "malformed completion from {} ({error}): {}",
                self.url,
                excerpt(&self.redact(&String::from_utf8_lossy(&bytes)))
            ))
        })?;
        let Some(choice) = completion.choices.into_iter().next() else {
            return Err(ModelError::new(format!(
                "the completion from {} has no choices",
                self.url
            )));
        };
        let text = choice.message.content.unwrap_or_default();
        if !text.is_empty() {
            sink.text_delta(&text);
        }
        let tool_calls = choice
            .message
            .tool_calls
            .into_iter()
            .enumerate()
            .map(|(index, call)| ToolCall {
                id: call.id.unwrap_or_else(|| format!("call_{}", index + 1)),
                name: call.function.name,
                arguments: wire::parse_arguments(&call.function.arguments),
            })
            .collect();
        Ok(ModelReply {
            text,
            tool_calls,
            usage: completion.usage.map(Into::into),
        })
    }

    fn backoff(&self, retry: u32) -> Duration {
        let factor = 2u32.saturating_pow(retry.saturating_sub(1));
        self.settings
            .retry_base_delay
            .saturating_mul(factor)
            .min(MAX_BACKOFF)
    }
}

#[async_trait]
impl Model for OpenAiProvider {
    async fn complete(
        &self,
        request: &ModelRequest,
        sink: &mut dyn StreamSink,
    ) -> Result<ModelReply, ModelError> {
        let body = wire::request_body(&self.settings, request);
        let mut retries = 0u32;
        loop {
            match self.attempt(&body, sink).await {
                Ok(reply) => return Ok(reply),
                Err(Failure::Fatal(error)) => return Err(error),
                Err(Failure::Retryable {
                    reason,
                    retry_after,
                    failure,
                }) => {
                    if retries >= self.settings.max_retries {
                        let attempts = retries + 1;
                        let plural = if attempts == 1 { "" } else { "s" };
                        let error = ModelError::new(format!(
                            "{reason} (gave up after {attempts} attempt{plural})"
                        ));
                        return Err(match failure {
                            Some(failure) => error.with_failure(failure),
                            None => error,
                        });
                    }
                    retries += 1;
                    let delay = retry_after.unwrap_or_else(|| self.backoff(retries));
                    let reason = format!("{reason}; retrying in {:.1}s", delay.as_secs_f64());
                    tracing::debug!(attempt = retries, "{reason}");
                    sink.retrying(retries, &reason);
                    tokio::time::sleep(delay).await;
                }
            }
        }
    }

    fn name(&self) -> String {
        self.settings.model.clone()
    }

    fn with_model(&self, name: &str) -> Option<std::sync::Arc<dyn Model>> {
        let mut settings = self.settings.clone();
        settings.model = name.to_owned();
        Some(std::sync::Arc::new(OpenAiProvider {
            settings,
            api_key: self.api_key.clone(),
            url: self.url.clone(),
            client: self.client.clone(),
        }))
    }
}

/// How one attempt failed.
enum Failure {
    /// Worth another attempt (429, 5xx, connection failure before a reply).
    Retryable {
        reason: String,
        retry_after: Option<Duration>,
        /// What the provider answered (none for a connection failure).
        failure: Option<ProviderFailure>,
    },
    /// Final: authentication, other 4xx, timeouts, anything after text streamed.
    Fatal(ModelError),
}

/// `Retry-After` in seconds (integer or decimal). The HTTP-date form is not
/// honoured; the computed backoff applies instead.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    let seconds: f64 = value.parse().ok()?;
    if !seconds.is_finite() || seconds < 0.0 {
        return None;
    }
    Some(Duration::from_secs_f64(
        seconds.min(MAX_RETRY_AFTER.as_secs_f64()),
    ))
}

async fn read_error_body(mut response: reqwest::Response, timeout: Duration) -> String {
    let mut body = Vec::new();
    let read = async {
        while let Ok(Some(chunk)) = response.chunk().await {
            body.extend_from_slice(&chunk);
            if body.len() >= ERROR_BODY_CAP {
                break;
            }
        }
    };
    // A body that never finishes still leaves the status to report.
    let _ = tokio::time::timeout(timeout, read).await;
    String::from_utf8_lossy(&body).into_owned()
}

/// The server's own message when the body is an OpenAI-style error object,
/// otherwise an excerpt of the body.
fn error_detail(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let message = parsed.as_ref().and_then(|value| {
        value
            .pointer("/error/message")
            .or_else(|| value.get("message"))
            .and_then(Value::as_str)
    });
    excerpt(message.unwrap_or(body))
}

fn suffix(detail: &str) -> String {
    if detail.is_empty() {
        String::new()
    } else {
        format!(": {detail}")
    }
}

fn status_text(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("HTTP {} {reason}", status.as_u16()),
        None => format!("HTTP {}", status.as_u16()),
    }
}

/// Whitespace collapsed, cut to a few hundred characters.
pub(crate) fn excerpt(text: &str) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() <= EXCERPT_CHARS {
        collapsed
    } else {
        let cut: String = collapsed.chars().take(EXCERPT_CHARS).collect();
        format!("{cut}…")
    }
}

/// An error with its sources, which is where reqwest keeps the useful part.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// The endpoint's `host:port` (the port only when the URL names one), as
/// server-error advice names it.
fn gateway(url: &str) -> Option<String> {
    let url = reqwest::Url::parse(url).ok()?;
    let host = url.host_str()?;
    Some(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    })
}

fn is_loopback(url: &str) -> bool {
    let Some(host) = reqwest::Url::parse(url)
        .ok()
        .and_then(|url| url.host_str().map(str::to_owned))
    else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|address| address.is_loopback())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn error_detail_prefers_the_servers_message() {
        assert_eq!(
            error_detail(r#"{"error":{"message":"Insufficient Balance","type":"x"}}"#),
            "Insufficient Balance"
        );
        assert_eq!(error_detail("  plain\n text "), "plain text");
        assert!(excerpt(&"x".repeat(1000)).ends_with('…'));
    }

    #[test]
    fn loopback_detection() {
        assert!(is_loopback("http://127.0.0.1:8080/chat/completions"));
        assert!(is_loopback("http://localhost/chat/completions"));
        assert!(is_loopback("http://[::1]:1/chat/completions"));
        assert!(!is_loopback("https://api.deepseek.com/chat/completions"));
    }

    #[test]
    fn retry_after_reads_seconds_and_caps_them() {
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, "2".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert(RETRY_AFTER, "0.5".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(500)));
        headers.insert(RETRY_AFTER, "99999".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(MAX_RETRY_AFTER));
        headers.insert(
            RETRY_AFTER,
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&headers), None);
    }
}
