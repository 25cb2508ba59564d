//! A scripted model server on loopback, for tests (feature `mock`).
//!
//! [`MockProvider`] binds `127.0.0.1:0` and answers each model request
//! (`POST …/chat/completions`, or `POST …/v1/messages` when it speaks
//! [`MockWire::Anthropic`], or `POST …/responses` when it speaks
//! [`MockWire::Responses`]) with the next [`MockResponse`] of its script,
//! recording every request. A request past the end of the script gets HTTP
//! 500 with a body saying so, so over-consumption fails loudly. It is a
//! small hand-written HTTP/1.1 server: one request per connection
//! (`Connection: close`), streamed replies as chunked `text/event-stream`.
//!
//! Two ways to run it: [`MockProvider::start`] inside a tokio runtime (the
//! server's tasks run on that runtime), or [`MockProvider::start_blocking`]
//! from any thread (the server gets its own thread and runtime, for CLI
//! tests that point `DSH_BASE_URL` at it); `start_with` and
//! `start_blocking_with` choose the wire format. Dropping the handle stops
//! the server and closes its connections.
//!
//! The server is hand-written rather than built on a mocking crate: the
//! failure cases need a stream cut mid-body, headers followed by silence,
//! paced events and a count of connections the client dropped, which a
//! request/response matcher does not express.

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use dsh_protocol::TokenUsage;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

mod anthropic;
mod chat;
mod responses;
pub use responses::{responses_events, responses_failed};

/// The wire format the mock speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MockWire {
    /// OpenAI-compatible Chat Completions (`/chat/completions`).
    #[default]
    Chat,
    /// Anthropic Messages (`/v1/messages`), events named by their `type`.
    Anthropic,
    /// OpenAI Responses (`/responses`), events named by their `type`.
    Responses,
}

impl MockWire {
    /// Whether `path` is this wire's model endpoint.
    fn serves(self, path: &str) -> bool {
        match self {
            MockWire::Chat => path.ends_with("/chat/completions"),
            MockWire::Anthropic => path.ends_with("/v1/messages"),
            MockWire::Responses => path.ends_with("/responses"),
        }
    }

    /// One server-sent event carrying `data`.
    fn frame(self, data: &str) -> String {
        match self {
            MockWire::Chat => format!("data: {data}\n\n"),
            MockWire::Anthropic | MockWire::Responses => {
                /// An event's `type`, which names its SSE event.
                #[derive(serde::Deserialize)]
                struct Kind {
                    #[serde(rename = "type")]
                    kind: String,
                }
                let name = serde_json::from_str::<Kind>(data)
                    .map_or_else(|_| "message".to_owned(), |event| event.kind);
                format!("event: {name}\ndata: {data}\n\n")
            }
        }
    }
}

/// The largest request head the mock accepts.
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// A tool call in a scripted reply; its arguments stream in pieces.
#[derive(Debug, Clone, PartialEq)]
pub struct MockToolCall {
    /// The call id (`call_1`).
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The `arguments` string, in the pieces it streams in; their
    /// concatenation is what the client should see.
    pub argument_chunks: Vec<String>,
}

impl MockToolCall {
    /// A call whose JSON arguments stream in three pieces.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: &Value) -> Self {
        let text = arguments.to_string();
        let chars: Vec<char> = text.chars().collect();
        let piece = chars.len().div_ceil(3).max(1);
        let argument_chunks = chars
            .chunks(piece)
            .map(|chunk| chunk.iter().collect())
            .collect();
        MockToolCall {
            id: id.into(),
            name: name.into(),
            argument_chunks,
        }
    }

    /// A call with its `arguments` string given piece by piece (need not be JSON).
    pub fn raw(
        id: impl Into<String>,
        name: impl Into<String>,
        argument_chunks: Vec<String>,
    ) -> Self {
        MockToolCall {
            id: id.into(),
            name: name.into(),
            argument_chunks,
        }
    }
}

/// A streamed reply: text pieces, then tool calls, then `finish_reason`,
/// then usage (when set), then `[DONE]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MockReply {
    /// Text pieces, each its own `delta.content` event.
    pub text_chunks: Vec<String>,
    /// Tool calls, streamed after the text.
    pub tool_calls: Vec<MockToolCall>,
    /// Pause before every event after the first.
    pub chunk_delay: Duration,
    /// The usage chunk (`stream_options.include_usage`), when set.
    pub usage: Option<TokenUsage>,
    /// Thinking blocks (Anthropic) before the text: each its thinking text
    /// and signature.
    pub thinking: Vec<(String, String)>,
}

impl MockReply {
    /// A reply streaming `text` word by word (spaces kept).
    pub fn text(text: &str) -> Self {
        MockReply {
            text_chunks: text.split_inclusive(' ').map(str::to_owned).collect(),
            ..MockReply::default()
        }
    }

    /// A reply streaming exactly these text pieces.
    pub fn chunks<S: Into<String>>(chunks: impl IntoIterator<Item = S>) -> Self {
        MockReply {
            text_chunks: chunks.into_iter().map(Into::into).collect(),
            ..MockReply::default()
        }
    }

    /// Adds a tool call.
    pub fn with_tool_call(mut self, call: MockToolCall) -> Self {
        self.tool_calls.push(call);
        self
    }

    /// Sets the pause before every event after the first.
    pub fn with_delay(mut self, delay: Duration) -> Self {
        self.chunk_delay = delay;
        self
    }

    /// Sets the usage the reply reports.
    pub fn with_usage(mut self, input_tokens: u64, output_tokens: u64) -> Self {
        self.usage = Some(TokenUsage {
            input_tokens,
            output_tokens,
            ..Default::default()
        });
        self
    }

    /// Sets the prompt-cache figures the reply reports (Anthropic): of
    /// the usage's `input_tokens`, `read` came from the cache and
    /// `creation` was written to it.
    pub fn with_cache(mut self, read: u64, creation: u64) -> Self {
        let usage = self.usage.get_or_insert_with(TokenUsage::default);
        usage.cache_read_input_tokens = read;
        usage.cache_creation_input_tokens = creation;
        self
    }

    /// Adds a signed thinking block (Anthropic), streamed before the text.
    /// Served as the Responses API it is a reasoning item: the thinking its
    /// summary, the signature its encrypted content.
    pub fn with_thinking(mut self, thinking: &str, signature: &str) -> Self {
        self.thinking
            .push((thinking.to_owned(), signature.to_owned()));
        self
    }

    /// The `data:` payloads of this reply in `wire`'s format (Chat
    /// Completions' without the final `[DONE]`; Anthropic's ending in
    /// `message_stop`).
    pub fn events_for(&self, wire: MockWire) -> Vec<String> {
        match wire {
            MockWire::Chat => self.events(),
            MockWire::Anthropic => self.anthropic_events(),
            MockWire::Responses => responses_events(self),
        }
    }

    /// The Messages API events of this reply: `message_start` (with the
    /// prompt usage), one content block per thinking block, the text and
    /// each tool call, `message_delta` with the stop reason and output
    /// tokens, `message_stop`.
    pub fn anthropic_events(&self) -> Vec<String> {
        anthropic::anthropic_events(self)
    }

    /// The `data:` payloads of this reply, without the final `[DONE]`.
    pub fn events(&self) -> Vec<String> {
        chat::chat_events(self)
    }
}

/// One scripted answer.
#[derive(Debug, Clone, PartialEq)]
pub enum MockResponse {
    /// A complete streamed reply ending in `[DONE]`.
    Reply(MockReply),
    /// A plain HTTP response (`application/json` body), e.g. 401, 429, 503.
    Status {
        /// The status code.
        status: u16,
        /// The `Retry-After` header value, when set.
        retry_after: Option<String>,
        /// The body.
        body: String,
    },
    /// The reply's first `events` events, then the connection drops
    /// (no final chunk, no `[DONE]`).
    CutAfter {
        /// The reply being cut.
        reply: MockReply,
        /// How many `data:` events are sent before the cut.
        events: usize,
    },
    /// The reply's first `after_events` events, then `data: {raw}`, then a
    /// clean end of the body.
    Malformed {
        /// The reply whose head is sent.
        reply: MockReply,
        /// How many good events precede the bad one.
        after_events: usize,
        /// The malformed payload.
        raw: String,
    },
    /// These `data:` payloads verbatim, then a clean end of the body (add
    /// `"[DONE]"` yourself when wanted).
    Events(Vec<String>),
    /// Never answers: with `send_headers`, sends `200` headers and then
    /// nothing. Holds the connection until the client closes it.
    Hang {
        /// Whether the status line and headers are sent first.
        send_headers: bool,
    },
}

impl MockResponse {
    /// A streamed text reply (word by word).
    pub fn text(text: &str) -> Self {
        MockResponse::Reply(MockReply::text(text))
    }

    /// A streamed reply with optional text and the given tool calls.
    pub fn tool_calls(text: &str, calls: Vec<MockToolCall>) -> Self {
        let mut reply = if text.is_empty() {
            MockReply::default()
        } else {
            MockReply::text(text)
        };
        reply.tool_calls = calls;
        MockResponse::Reply(reply)
    }

    /// A plain HTTP status with a body.
    pub fn status(status: u16, body: impl Into<String>) -> Self {
        MockResponse::Status {
            status,
            retry_after: None,
            body: body.into(),
        }
    }

    /// A plain HTTP status with `Retry-After: {seconds}` and a body.
    pub fn status_retry_after(status: u16, seconds: &str, body: impl Into<String>) -> Self {
        MockResponse::Status {
            status,
            retry_after: Some(seconds.to_owned()),
            body: body.into(),
        }
    }
}

/// One request the mock received.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// The HTTP method.
    pub method: String,
    /// The request path.
    pub path: String,
    /// Headers, names lowercased, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body as JSON (a JSON string when it was not JSON).
    pub body: Value,
    /// When the request was fully read.
    pub received_at: Instant,
}

impl RecordedRequest {
    /// The first value of a header (name case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

#[derive(Debug, Default)]
struct State {
    wire: MockWire,
    script: VecDeque<MockResponse>,
    scripted: usize,
    requests: Vec<RecordedRequest>,
    disconnects: usize,
}

#[derive(Debug, Clone, Default)]
struct Shared(Arc<Mutex<State>>);

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A test thread that panicked while holding the lock leaves data
        // that is still worth reading.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A running mock server. Dropping it stops the server.
#[derive(Debug)]
pub struct MockProvider {
    address: SocketAddr,
    shared: Shared,
    stop: CancellationToken,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl MockProvider {
    /// Starts a Chat Completions server on the current tokio runtime.
    ///
    /// Fails outside a runtime (use [`MockProvider::start_blocking`]) or
    /// when loopback cannot be bound.
    pub fn start(script: Vec<MockResponse>) -> io::Result<Self> {
        Self::start_with(MockWire::Chat, script)
    }

    /// Starts a server speaking `wire` on the current tokio runtime.
    pub fn start_with(wire: MockWire, script: Vec<MockResponse>) -> io::Result<Self> {
        let handle = tokio::runtime::Handle::try_current().map_err(|_| {
            io::Error::other("MockProvider::start needs a tokio runtime; use start_blocking")
        })?;
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let address = listener.local_addr()?;
        let listener = {
            let _guard = handle.enter();
            TcpListener::from_std(listener)?
        };
        let shared = Shared::default();
        shared.lock().wire = wire;
        shared.lock().scripted = script.len();
        shared.lock().script = script.into();
        let stop = CancellationToken::new();
        handle.spawn(serve(listener, shared.clone(), stop.clone()));
        Ok(MockProvider {
            address,
            shared,
            stop,
            thread: None,
        })
    }

    /// Starts a Chat Completions server on a thread of its own with its own
    /// runtime; usable from synchronous tests.
    pub fn start_blocking(script: Vec<MockResponse>) -> io::Result<Self> {
        Self::start_blocking_with(MockWire::Chat, script)
    }

    /// Starts a server speaking `wire` on a thread of its own.
    pub fn start_blocking_with(wire: MockWire, script: Vec<MockResponse>) -> io::Result<Self> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let address = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let shared = Shared::default();
        shared.lock().wire = wire;
        shared.lock().scripted = script.len();
        shared.lock().script = script.into();
        let stop = CancellationToken::new();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let thread = {
            let shared = shared.clone();
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("dsh-mock-provider".to_owned())
                .spawn(move || {
                    runtime.block_on(async move {
                        match TcpListener::from_std(listener) {
                            Ok(listener) => {
                                let _ = ready_tx.send(Ok(()));
                                serve(listener, shared, stop).await;
                            }
                            Err(error) => {
                                let _ = ready_tx.send(Err(error));
                            }
                        }
                    });
                })?
        };
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(MockProvider {
                address,
                shared,
                stop,
                thread: Some(thread),
            }),
            Ok(Err(error)) => Err(error),
            Err(_) => Err(io::Error::other("the mock provider thread exited early")),
        }
    }

    /// The base URL to configure (`DSH_BASE_URL`): `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Every request body received, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.shared
            .lock()
            .requests
            .iter()
            .map(|request| request.body.clone())
            .collect()
    }

    /// Every request received, with method, path and headers.
    pub fn recorded(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// Script entries not yet served.
    pub fn remaining(&self) -> usize {
        self.shared.lock().script.len()
    }

    /// Connections the client closed while the mock was still answering
    /// (hanging or streaming): how a test sees a cancelled request.
    pub fn disconnects(&self) -> usize {
        self.shared.lock().disconnects
    }
}

impl Drop for MockProvider {
    fn drop(&mut self) {
        self.stop.cancel();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn serve(listener: TcpListener, shared: Shared, stop: CancellationToken) {
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((socket, _)) => {
                let shared = shared.clone();
                let stop = stop.clone();
                tokio::spawn(async move {
                    tokio::select! {
                        () = stop.cancelled() => {}
                        result = handle_connection(socket, &shared) => {
                            if let Err(error) = result {
                                tracing::debug!("mock provider connection: {error}");
                            }
                        }
                    }
                });
            }
            Err(error) => {
                tracing::debug!("mock provider accept: {error}");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
}

struct Head {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
}

async fn read_request(socket: &mut TcpStream) -> io::Result<Option<(Head, Vec<u8>)>> {
    let mut buffer = Vec::new();
    let mut scratch = [0u8; 8192];
    let head_end = loop {
        if let Some(index) = find(&buffer, b"\r\n\r\n") {
            break index;
        }
        if buffer.len() > MAX_HEAD_BYTES {
            return Err(io::Error::other("request head too large"));
        }
        let read = socket.read(&mut scratch).await?;
        if read == 0 {
            return Ok(None);
        }
        buffer.extend_from_slice(scratch.get(..read).unwrap_or_default());
    };
    let head_text =
        String::from_utf8_lossy(buffer.get(..head_end).unwrap_or_default()).into_owned();
    let mut lines = head_text.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let length = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = buffer.get(head_end + 4..).unwrap_or_default().to_vec();
    while body.len() < length {
        let read = socket.read(&mut scratch).await?;
        if read == 0 {
            return Ok(None);
        }
        body.extend_from_slice(scratch.get(..read).unwrap_or_default());
    }
    body.truncate(length);
    Ok(Some((
        Head {
            method,
            path,
            headers,
        },
        body,
    )))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

async fn handle_connection(mut socket: TcpStream, shared: &Shared) -> io::Result<()> {
    let Some((head, body)) = read_request(&mut socket).await? else {
        return Ok(());
    };
    let body = serde_json::from_slice(&body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
    let (wire, response) = {
        let mut state = shared.lock();
        let wire = state.wire;
        let is_completion = head.method == "POST" && wire.serves(&head.path);
        state.requests.push(RecordedRequest {
            method: head.method.clone(),
            path: head.path.clone(),
            headers: head.headers,
            body,
            received_at: Instant::now(),
        });
        let response = if is_completion {
            let number = state.requests.len();
            let scripted = state.scripted;
            Some(state.script.pop_front().unwrap_or_else(|| {
                MockResponse::status(
                    500,
                    json!({"error": {"message": format!(
                        "mock provider: script exhausted: request #{number} but only {scripted} responses were scripted"
                    )}})
                    .to_string(),
                )
            }))
        } else {
            None
        };
        (wire, response)
    };
    let Some(response) = response else {
        let body = format!("mock provider: no route for {} {}", head.method, head.path);
        return write_plain(&mut socket, 404, None, "text/plain", &body).await;
    };
    let outcome = match response {
        MockResponse::Reply(reply) => {
            let mut events = reply.events_for(wire);
            if wire == MockWire::Chat {
                events.push("[DONE]".to_owned());
            }
            stream_events(&mut socket, wire, &events, reply.chunk_delay, End::Clean).await
        }
        MockResponse::Status {
            status,
            retry_after,
            body,
        } => {
            write_plain(
                &mut socket,
                status,
                retry_after.as_deref(),
                "application/json",
                &body,
            )
            .await
        }
        MockResponse::CutAfter { reply, events } => {
            let all = reply.events_for(wire);
            let head: Vec<String> = all.into_iter().take(events).collect();
            stream_events(&mut socket, wire, &head, reply.chunk_delay, End::Cut).await
        }
        MockResponse::Malformed {
            reply,
            after_events,
            raw,
        } => {
            let mut head: Vec<String> = reply
                .events_for(wire)
                .into_iter()
                .take(after_events)
                .collect();
            head.push(raw);
            stream_events(&mut socket, wire, &head, reply.chunk_delay, End::Clean).await
        }
        MockResponse::Events(events) => {
            stream_events(&mut socket, wire, &events, Duration::ZERO, End::Clean).await
        }
        MockResponse::Hang { send_headers } => {
            if send_headers {
                socket.write_all(stream_head().as_bytes()).await?;
                socket.flush().await?;
            }
            wait_for_close(&mut socket).await;
            shared.lock().disconnects += 1;
            return Ok(());
        }
    };
    if let Err(error) = &outcome
        && matches!(
            error.kind(),
            io::ErrorKind::BrokenPipe
                | io::ErrorKind::ConnectionReset
                | io::ErrorKind::ConnectionAborted
        )
    {
        shared.lock().disconnects += 1;
    }
    outcome
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    /// The terminating zero-length chunk: the body ends normally.
    Clean,
    /// The socket closes mid-body.
    Cut,
}

fn stream_head() -> String {
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
     Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        .to_owned()
}

async fn stream_events(
    socket: &mut TcpStream,
    wire: MockWire,
    events: &[String],
    delay: Duration,
    end: End,
) -> io::Result<()> {
    socket.write_all(stream_head().as_bytes()).await?;
    for (index, data) in events.iter().enumerate() {
        if index > 0 && !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        let payload = wire.frame(data);
        let chunk = format!("{:x}\r\n{payload}\r\n", payload.len());
        socket.write_all(chunk.as_bytes()).await?;
        socket.flush().await?;
    }
    match end {
        End::Clean => {
            socket.write_all(b"0\r\n\r\n").await?;
            socket.flush().await?;
            socket.shutdown().await
        }
        // Dropping the socket without the final chunk is the cut.
        End::Cut => Ok(()),
    }
}

async fn write_plain(
    socket: &mut TcpStream,
    status: u16,
    retry_after: Option<&str>,
    content_type: &str,
    body: &str,
) -> io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    };
    let mut head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(seconds) = retry_after {
        head.push_str(&format!("Retry-After: {seconds}\r\n"));
    }
    head.push_str("\r\n");
    socket.write_all(head.as_bytes()).await?;
    socket.write_all(body.as_bytes()).await?;
    socket.flush().await?;
    socket.shutdown().await
}

/// Reads (and discards) until the peer closes the connection.
async fn wait_for_close(socket: &mut TcpStream) {
    let mut scratch = [0u8; 1024];
    loop {
        match socket.read(&mut scratch).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}
