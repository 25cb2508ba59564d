//! Noticing the messages `rmcp` drops for their size.
//!
//! `rmcp`'s stdio transport discards an incoming line longer than
//! [`MAX_LINE`] (it logs it and keeps the connection open), so a call whose
//! answer was that line would wait for ever. [`LineWatch`] sits between a
//! server's stdout and the transport, measures every line as it passes
//! (nothing is buffered beyond a short prefix), and as soon as one is bound
//! to be dropped reports it, with the top-level JSON-RPC `id` when the
//! prefix shows one, so that the call waiting for it fails at once.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use rmcp::model::RequestId;
use serde::de::IgnoredAny;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::broadcast;

/// The longest line `rmcp` accepts, newline excluded: a line of this many
/// bytes or more is discarded.
pub const MAX_LINE: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// How much of each line is kept to find its `id`.
const PREFIX: usize = 4096;

/// A message the transport is dropping for its size.
#[derive(Debug, Clone, PartialEq)]
pub struct Oversized {
    /// The message's top-level `id`, when its first bytes show one.
    pub id: Option<SeenId>,
}

/// The top-level `id` of a message being dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SeenId {
    /// A request id (a number or a string, read as `rmcp` reads them): the
    /// message may be the answer to that request.
    Request(RequestId),
    /// `null` or another JSON scalar: not the answer to any request.
    Other,
}

/// Line accounting for one stream.
#[derive(Debug)]
struct Tracker {
    limit: usize,
    line_len: usize,
    prefix: Vec<u8>,
    reported: bool,
    report: broadcast::Sender<Oversized>,
}

impl Tracker {
    fn observe(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            match bytes.iter().position(|byte| *byte == b'\n') {
                Some(end) => {
                    self.feed(bytes.get(..end).unwrap_or_default());
                    self.line_len = 0;
                    self.prefix.clear();
                    self.reported = false;
                    bytes = bytes.get(end + 1..).unwrap_or_default();
                }
                None => {
                    self.feed(bytes);
                    bytes = &[];
                }
            }
        }
    }

    fn feed(&mut self, part: &[u8]) {
        let room = PREFIX.saturating_sub(self.prefix.len()).min(part.len());
        self.prefix
            .extend_from_slice(part.get(..room).unwrap_or_default());
        self.line_len = self.line_len.saturating_add(part.len());
        if !self.reported && self.line_len >= self.limit {
            self.reported = true;
            let id = top_level_id(&self.prefix);
            tracing::warn!(
                ?id,
                limit = self.limit,
                "an MCP server sent an oversized message"
            );
            // No receiver (no call in flight) is fine.
            let _ = self.report.send(Oversized { id });
        }
    }
}

/// An [`AsyncRead`] that passes everything through and reports lines the
/// transport will drop (see the module docs).
#[derive(Debug)]
pub struct LineWatch<R> {
    inner: R,
    tracker: Tracker,
}

impl<R> LineWatch<R> {
    /// Watches `inner` for lines of `limit` bytes or more (newline
    /// excluded), reporting each once on `report`.
    pub fn new(inner: R, limit: usize, report: broadcast::Sender<Oversized>) -> Self {
        LineWatch {
            inner,
            tracker: Tracker {
                limit,
                line_len: 0,
                prefix: Vec::with_capacity(PREFIX),
                reported: false,
                report,
            },
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LineWatch<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        this.tracker
            .observe(buf.filled().get(before..).unwrap_or_default());
        Poll::Ready(Ok(()))
    }
}

/// The `id` member of the JSON object `prefix` starts (possibly cut
/// short): a number, a string or `null`, when it comes before the prefix
/// ends. Keys of nested values are not looked at.
pub fn top_level_id(prefix: &[u8]) -> Option<SeenId> {
    let mut depth = 0usize;
    let mut top_is_object = false;
    let mut expect_key = false;
    let mut at = 0usize;
    while let Some(&byte) = prefix.get(at) {
        match byte {
            b'"' => {
                let end = string_end(prefix, at)?;
                if depth == 1 && top_is_object && expect_key {
                    expect_key = false;
                    let colon = skip_ws(prefix, end);
                    if prefix.get(colon) != Some(&b':') {
                        return None;
                    }
                    if prefix.get(at..end) == Some(b"\"id\"".as_slice()) {
                        return value_at(prefix, skip_ws(prefix, colon + 1));
                    }
                    at = colon + 1;
                    continue;
                }
                at = end;
                continue;
            }
            b'{' | b'[' => {
                depth += 1;
                if depth == 1 {
                    top_is_object = byte == b'{';
                    expect_key = top_is_object;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            b',' if depth == 1 => expect_key = top_is_object,
            _ => {}
        }
        at += 1;
    }
    None
}

/// The index just past the string starting at `start` (a `"`); `None` when
/// the prefix ends inside it.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut at = start + 1;
    loop {
        match bytes.get(at)? {
            b'\\' => at += 2,
            b'"' => return Some(at + 1),
            _ => at += 1,
        }
    }
}

fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// The scalar JSON value at `at`, when it is complete within `bytes`.
fn value_at(bytes: &[u8], at: usize) -> Option<SeenId> {
    let end = match bytes.get(at)? {
        b'"' => string_end(bytes, at)?,
        _ => {
            let len = bytes.get(at..)?.iter().position(|byte| {
                matches!(byte, b',' | b'}' | b']') || byte.is_ascii_whitespace()
            })?;
            at + len
        }
    };
    let scalar = bytes.get(at..end)?;
    match serde_json::from_slice::<RequestId>(scalar) {
        Ok(id) => Some(SeenId::Request(id)),
        Err(_) => serde_json::from_slice::<IgnoredAny>(scalar)
            .ok()
            .map(|_| SeenId::Other),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;
    use tokio::io::AsyncReadExt as _;

    fn number(id: i64) -> Option<SeenId> {
        Some(SeenId::Request(NumberOrString::Number(id)))
    }

    #[test]
    fn the_top_level_id_is_found_in_a_prefix() {
        let cases: Vec<(&str, Option<SeenId>)> = vec![
            (
                r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"te"#,
                number(7),
            ),
            (
                r#"{ "id" : "req-1" , "result": "#,
                Some(SeenId::Request(NumberOrString::String("req-1".into()))),
            ),
            (r#"{"jsonrpc":"2.0","result":{"id":3,"x":"#, None),
            (r#"{"result":{"content":"a\"id\":4"},"id":9}"#, number(9)),
            (
                r#"{"jsonrpc":"2.0","id":null,"error":{"#,
                Some(SeenId::Other),
            ),
            (
                r#"{"jsonrpc":"2.0","id":true,"error":{"#,
                Some(SeenId::Other),
            ),
            (r#"{"jsonrpc":"2.0","id":12"#, None),
            (r#"[{"id":1}]"#, None),
            ("", None),
        ];
        for (prefix, expected) in cases {
            assert_eq!(top_level_id(prefix.as_bytes()), expected, "{prefix}");
        }
    }

    #[tokio::test]
    async fn long_lines_are_reported_once_and_everything_passes_through() {
        let (sender, mut receiver) = broadcast::channel(8);
        let mut input = Vec::new();
        input.extend_from_slice(b"{\"id\":1,\"result\":\"short\"}\n");
        input.extend_from_slice(b"{\"id\":2,\"result\":\"");
        input.extend(std::iter::repeat_n(b'x', 100));
        input.extend_from_slice(b"\"}\n{\"id\":3}\n");
        // Exactly at the limit (newline excluded) is dropped by rmcp too.
        input.extend(std::iter::repeat_n(b'y', 40));
        input.push(b'\n');
        let mut watch = LineWatch::new(input.as_slice(), 40, sender);
        let mut out = Vec::new();
        watch.read_to_end(&mut out).await.unwrap();
        assert_eq!(out, input);
        assert_eq!(receiver.try_recv().unwrap(), Oversized { id: number(2) });
        assert_eq!(receiver.try_recv().unwrap(), Oversized { id: None });
        assert!(receiver.try_recv().is_err());
    }
}
