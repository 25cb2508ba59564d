//! The transport every wire API shares: one streaming POST per attempt,
//! retries with backoff and `Retry-After`, connect and idle timeouts,
//! cancellation by drop, the API key kept out of messages, HTTP statuses
//! turned into typed failures, and the server-sent events of the body read
//! into a reply.
//!
//! A wire API ([`WireApi`]) supplies only what differs between APIs: the
//! URL and authentication headers, the request body, the accumulator that
//! turns its events into text deltas, tool calls and usage, and how its
//! error bodies read.

use std::time::Duration;

use crate::api::Loose;
use dsh_model::{FailureCategory, ModelError, ProviderFailure, StreamSink};
use dsh_protocol::{ModelReply, ModelRequest};
use futures::StreamExt;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, RETRY_AFTER};

use crate::error::ProviderError;
use crate::settings::{ENV_API_KEY, ProviderSettings};
use crate::stream::{MAX_LINE_BYTES, Progress, SseError, sse_data};

/// The longest `Retry-After` honoured; a server asking for more gets this.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// The longest computed backoff delay.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How much of an error body is read.
const ERROR_BODY_CAP: usize = 16 * 1024;
/// How many characters of a body or chunk go into an error message.
const EXCERPT_CHARS: usize = 300;

/// What an API's error body says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ErrorBody {
    /// The server's message, or an excerpt of the body.
    pub message: String,
    /// The API's own error type (`overloaded_error`), when it names one.
    pub kind: Option<String>,
}

/// Why an event could not be applied to a reply.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EventError {
    /// For people.
    pub message: String,
    /// The provider's typed failure, when the stream carried an error event.
    pub failure: Option<ProviderFailure>,
}

impl From<String> for EventError {
    fn from(message: String) -> Self {
        EventError {
            message,
            failure: None,
        }
    }
}

/// What one held part of a reply (a tool call, a content block, an output
/// item) counts towards the reply limit besides its text, so that a stream
/// of empty parts is bounded too.
pub(crate) const PART_BYTES: usize = 64;

/// Turns one API's stream events into a reply.
pub(crate) trait EventAccumulator: Send {
    /// Applies one event's data, streaming text to `sink`.
    fn on_event(&mut self, data: &str, sink: &mut dyn StreamSink) -> Result<Progress, EventError>;
    /// The text streamed so far.
    fn text(&self) -> &str;
    /// The bytes the reply holds so far: text, tool-call ids, names and
    /// arguments, and thinking, plus [`PART_BYTES`] for each part. Checked against
    /// [`ProviderSettings::max_reply_bytes`] after every event.
    fn size(&self) -> usize;
    /// Whether anything of the reply arrived (text or a tool call): the
    /// attempt can no longer be repeated without the sink seeing it twice.
    fn started(&self) -> bool;
    /// Whether the reply itself is complete, so a connection that closes
    /// now lost nothing.
    fn finished(&self) -> bool;
    /// What a body that ends before the reply is complete lacked, for the error.
    fn missing_end(&self) -> &'static str;
    /// The finished reply.
    fn into_reply(self) -> ModelReply;
}

/// What one wire API supplies to the shared transport.
pub(crate) trait WireApi: Clone + Send + Sync + 'static {
    /// The accumulator of one reply.
    type Accumulator: EventAccumulator;
    /// The typed body of one request (its fields in wire order).
    type Body: serde::Serialize + Send + Sync;
    /// The endpoint requests are posted to.
    fn url(&self, base_url: &str) -> String;
    /// The request with its authentication (and version) headers: a
    /// bearer token unless the API says otherwise.
    fn authorize(
        &self,
        request: reqwest::RequestBuilder,
        api_key: &str,
    ) -> reqwest::RequestBuilder {
        request.bearer_auth(api_key)
    }
    /// The body of one streaming request.
    fn request_body(&self, settings: &ProviderSettings, request: &ModelRequest) -> Self::Body;
    /// A fresh accumulator for one attempt.
    fn accumulator(&self) -> Self::Accumulator;
    /// What an error body says.
    fn error_body(&self, body: &str) -> ErrorBody {
        generic_error_body(body)
    }
    /// The category of a refused request: from its status, unless the
    /// API's error type says more.
    fn category(&self, status: u16, _body: &ErrorBody) -> FailureCategory {
        FailureCategory::from_status(status)
    }
    /// A reply sent as one JSON document instead of a stream (a server that
    /// ignored `stream: true`).
    fn whole_reply(&self, bytes: &[u8], sink: &mut dyn StreamSink) -> Result<ModelReply, String> {
        let _ = (bytes, sink);
        Err("the server answered with JSON instead of an event stream".to_owned())
    }
}

/// One API spoken over HTTP: the shared transport around a [`WireApi`].
#[derive(Clone)]
pub(crate) struct HttpModel<W> {
    pub settings: ProviderSettings,
    api_key: String,
    url: String,
    client: reqwest::Client,
    pub wire: W,
}

impl<W: WireApi> HttpModel<W> {
    /// Builds the client; `api_key` is already checked non-empty.
    pub fn new(settings: ProviderSettings, api_key: String, wire: W) -> reqwest::Result<Self> {
        let url = wire.url(&settings.base_url);
        let mut builder = reqwest::Client::builder()
            .connect_timeout(settings.connect_timeout)
            .user_agent(concat!("dsh/", env!("CARGO_PKG_VERSION")));
        if is_loopback(&url) {
            // A proxy from the environment must not capture a local server
            // (a local model, or the mock in tests).
            builder = builder.no_proxy();
        }
        let client = builder.build()?;
        Ok(HttpModel {
            settings,
            api_key,
            url,
            client,
            wire,
        })
    }

    /// The same transport asking for another model.
    pub fn with_model(&self, name: &str) -> Self {
        let mut model = self.clone();
        name.clone_into(&mut model.settings.model);
        model
    }

    /// The URL requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Answers one request, retrying transient failures.
    pub async fn complete(
        &self,
        request: &ModelRequest,
        sink: &mut dyn StreamSink,
    ) -> Result<ModelReply, ModelError> {
        let body = self.wire.request_body(&self.settings, request);
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

    /// One attempt: send, check the status, read the reply.
    async fn attempt(
        &self,
        body: &W::Body,
        sink: &mut dyn StreamSink,
    ) -> Result<ModelReply, Failure> {
        let timeout = self.settings.request_timeout;
        let request = self
            .client
            .post(&self.url)
            .header(ACCEPT, "text/event-stream")
            .json(body);
        let send = self.wire.authorize(request, &self.api_key).send();
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
                    reason: format!(
                        "cannot connect to {}: {}; {}",
                        self.url,
                        root_cause(&error),
                        self.settings.base_url_fix()
                    ),
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
                .whole_reply(response, sink)
                .await
                .map_err(Failure::Fatal);
        }
        self.read_stream(response, sink).await
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
        let error = self.wire.error_body(&self.redact(&body));
        let detail = error.message.clone();
        let status_text = status_text(status);
        let mut failure = ProviderFailure::from_status(status.as_u16(), detail.clone())
            .with_retry_after(retry_after)
            .with_gateway(gateway(&self.url));
        failure.category = self.wire.category(status.as_u16(), &error);
        if failure.category == FailureCategory::AuthenticationFailed {
            return Failure::Fatal(
                ModelError::new(format!(
                    "authentication failed ({status_text}) at {}: {}{}",
                    self.url,
                    match &self.settings.origins.api_key {
                        Some(name) =>
                            format!("the key in {name} was refused; set a valid key in {name}"),
                        None => format!("check {ENV_API_KEY} or {}", self.settings.api_key_env),
                    },
                    suffix(&detail)
                ))
                .with_failure(failure),
            );
        }
        let reason = format!("{status_text} from {}{}", self.url, suffix(&detail));
        let retryable = match failure.category {
            FailureCategory::RateLimit | FailureCategory::ServerError => true,
            FailureCategory::MissingKey
            | FailureCategory::AuthenticationFailed
            | FailureCategory::BillingError
            | FailureCategory::InvalidRequest
            | FailureCategory::Unknown => false,
        };
        if retryable {
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
    ) -> Result<ModelReply, Failure> {
        let idle = self.settings.request_timeout;
        let mut events = std::pin::pin!(sse_data(response.bytes_stream(), idle));
        let mut accumulator = self.wire.accumulator();
        let fail = |accumulator: &W::Accumulator, message: String| {
            Failure::Fatal(ModelError {
                message: self.redact(&message),
                partial_text: accumulator.text().to_owned(),
                failure: None,
            })
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
            let progress = accumulator.on_event(&data, sink);
            // Before anything else: past the limit the reply is refused,
            // whatever the event said, and the connection dropped.
            let limit = self.settings.max_reply_bytes;
            if accumulator.size() > limit {
                return Err(fail(
                    &accumulator,
                    ProviderError::ReplyTooLarge { limit }.to_string(),
                ));
            }
            match progress {
                Ok(Progress::Done) => return Ok(accumulator.into_reply()),
                Ok(Progress::More) => {}
                Err(EventError { message, failure }) => {
                    let message = self.redact(&message);
                    return Err(match failure {
                        // An overload or rate limit announced before anything
                        // streamed can be asked again; the sink saw nothing.
                        Some(failure)
                            if !accumulator.started()
                                && matches!(
                                    failure.category,
                                    FailureCategory::ServerError | FailureCategory::RateLimit
                                ) =>
                        {
                            Failure::Retryable {
                                reason: message,
                                retry_after: None,
                                failure: Some(failure.with_gateway(gateway(&self.url))),
                            }
                        }
                        Some(failure) => Failure::Fatal(ModelError {
                            message,
                            partial_text: accumulator.text().to_owned(),
                            failure: Some(failure.with_gateway(gateway(&self.url))),
                        }),
                        None => fail(&accumulator, message),
                    });
                }
            }
        }
        if accumulator.finished() {
            tracing::debug!("stream ended after the reply was complete, without its end event");
            return Ok(accumulator.into_reply());
        }
        let missing = accumulator.missing_end();
        Err(fail(
            &accumulator,
            format!("the connection closed before the reply was complete ({missing})"),
        ))
    }

    /// A server that ignored `stream: true` and sent one JSON document.
    async fn whole_reply(
        &self,
        response: reqwest::Response,
        sink: &mut dyn StreamSink,
    ) -> Result<ModelReply, ModelError> {
        let timeout = self.settings.request_timeout;
        let limit = self.settings.max_reply_bytes;
        let bytes = match tokio::time::timeout(timeout, read_body(response, limit)).await {
            Err(_) => {
                return Err(ModelError::new(format!(
                    "the reply stalled: no complete body from {} within {}s",
                    self.url,
                    timeout.as_secs_f64()
                )));
            }
            Ok(Err(BodyError::Broken(error))) => {
                return Err(ModelError::new(format!(
                    "the connection broke mid-reply: {}",
                    error_chain(&error)
                )));
            }
            Ok(Err(BodyError::TooLarge)) => {
                return Err(ModelError::new(
                    ProviderError::ReplyTooLarge { limit }.to_string(),
                ));
            }
            Ok(Ok(bytes)) => bytes,
        };
        self.wire.whole_reply(&bytes, sink).map_err(|message| {
            ModelError::new(format!(
                "{message} from {}: {}",
                self.url,
                excerpt(&self.redact(&String::from_utf8_lossy(&bytes)))
            ))
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

/// Why a whole body was not read.
enum BodyError {
    /// The connection broke.
    Broken(reqwest::Error),
    /// The body passed the limit (it is not read further).
    TooLarge,
}

/// The whole body, refused once it passes `limit` bytes (a reply sent as
/// one JSON document is bounded by its body).
async fn read_body(mut response: reqwest::Response, limit: usize) -> Result<Vec<u8>, BodyError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(BodyError::Broken)? {
        if body.len().saturating_add(chunk.len()) > limit {
            return Err(BodyError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
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

/// The server's own message and error type when the body is an error
/// object in the shape OpenAI and Anthropic share (`error.message`,
/// `error.type`), otherwise an excerpt of the body.
pub(crate) fn generic_error_body(body: &str) -> ErrorBody {
    let parsed = crate::api::ErrorBody::parse(body);
    let (inner, top) = match parsed {
        Some(parsed) => (parsed.error.and_then(Loose::ok), Some(parsed.top)),
        None => (None, None),
    };
    // `error.message` when the key is there (even of another type), else
    // a top-level `message`.
    let message = match inner.as_ref().and_then(|error| error.message.clone()) {
        Some(found) => found.ok(),
        None => top.and_then(|top| top.message).and_then(Loose::ok),
    };
    let kind = inner.and_then(|error| error.kind).and_then(Loose::ok);
    ErrorBody {
        message: excerpt(message.as_deref().unwrap_or(body)),
        kind,
    }
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
        // Anthropic's 529 has no IANA reason phrase.
        None if status.as_u16() == 529 => "HTTP 529 Overloaded".to_owned(),
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
/// The innermost cause of `error` (`Connection refused (os error 111)`),
/// the part a person acts on.
fn root_cause(error: &dyn std::error::Error) -> String {
    let mut cause = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

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
    fn error_body_prefers_the_servers_message_and_type() {
        assert_eq!(
            generic_error_body(r#"{"error":{"message":"Insufficient Balance","type":"x"}}"#),
            ErrorBody {
                message: "Insufficient Balance".to_owned(),
                kind: Some("x".to_owned())
            }
        );
        assert_eq!(generic_error_body("  plain\n text ").message, "plain text");
        assert!(excerpt(&"x".repeat(1000)).ends_with('…'));
    }

    /// Bodies of other shapes: a top-level `message`, an `error` that is a
    /// string, an array; none fails, each falls back to what it has.
    #[test]
    fn error_bodies_of_other_shapes_fall_back() {
        let top = generic_error_body(r#"{"message":"Model not found","type":"t"}"#);
        assert_eq!(top.message, "Model not found");
        assert_eq!(top.kind, None);
        let string = generic_error_body(r#"{"error":"bad key","message":"denied"}"#);
        assert_eq!(string.message, "denied");
        assert_eq!(string.kind, None);
        let odd = generic_error_body(r#"{"error":{"message":7,"type":"x"},"message":"m"}"#);
        assert_eq!(
            odd.message,
            r#"{"error":{"message":7,"type":"x"},"message":"m"}"#
        );
        assert_eq!(odd.kind.as_deref(), Some("x"));
        assert_eq!(generic_error_body("[1,2]").message, "[1,2]");
    }

    #[test]
    fn loopback_detection() {
        assert!(is_loopback("http://127.0.0.1:8080/chat/completions"));
        assert!(is_loopback("http://localhost/chat/completions"));
        assert!(is_loopback("http://[::1]:1/chat/completions"));
        assert!(!is_loopback("https://api.deepseek.com/chat/completions"));
    }

    #[test]
    fn status_529_reads_as_overloaded() {
        assert_eq!(
            status_text(StatusCode::from_u16(529).unwrap()),
            "HTTP 529 Overloaded"
        );
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
