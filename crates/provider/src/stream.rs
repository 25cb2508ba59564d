//! Server-sent events → a [`ModelReply`]: the event stream of a reply
//! (decoded by `eventsource-stream`, guarded against stalls and runaway
//! lines) and the accumulator for Chat Completions deltas. The HTTP side
//! lives in `client.rs`.

use std::time::Duration;

use bytes::Bytes;
use dsh_model::StreamSink;
use dsh_protocol::{ModelReply, TokenUsage, ToolCall};
use eventsource_stream::{EventStreamError, Eventsource};
use futures::{Stream, StreamExt, stream};

use crate::api::chat::{Chunk, ChunkError, ToolCallDelta};
use crate::transport::{EventAccumulator, EventError};
use crate::wire;

/// The largest single SSE line accepted; a server that sends more without a
/// newline is not speaking SSE.
pub(crate) const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The most tool calls one Chat Completions reply may index: a fragment's
/// `index` sizes the list of calls, so a huge one must not allocate.
const MAX_TOOL_CALLS: usize = 4096;

/// Why an event stream stopped early.
#[derive(Debug)]
pub(crate) enum SseError<E> {
    /// No bytes arrived for the idle timeout.
    Stalled,
    /// The body failed (the connection broke).
    Body(E),
    /// A line grew past [`MAX_LINE_BYTES`].
    LineTooLong,
    /// The stream is not UTF-8, or not SSE.
    Malformed(String),
}

/// The body and how many bytes its current line has so far.
struct Guarded<S> {
    body: S,
    line: usize,
    idle: Duration,
    ended: bool,
}

/// The data of every server-sent event in `body`, in order. Each read of
/// the body has `idle` to deliver bytes; comments (keep-alives) count as
/// bytes. An event left without its closing blank line when the body ends
/// is delivered too (servers that close right after their last `data:`).
pub(crate) fn sse_data<S, E>(
    body: S,
    idle: Duration,
) -> impl Stream<Item = Result<String, SseError<E>>>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
{
    let guarded = Guarded {
        body,
        line: 0,
        idle,
        ended: false,
    };
    let bytes = stream::unfold(guarded, |mut state| async move {
        if state.ended {
            return None;
        }
        let item = match tokio::time::timeout(state.idle, state.body.next()).await {
            Err(_) => Err(Guard::Stalled),
            // The end closes a last line and event the server left open.
            Ok(None) => {
                state.ended = true;
                Ok(Bytes::from_static(b"\n\n"))
            }
            Ok(Some(Err(error))) => Err(Guard::Body(error)),
            Ok(Some(Ok(bytes))) => {
                state.line = match bytes.iter().rposition(|&byte| byte == b'\n') {
                    Some(at) => bytes.len() - at - 1,
                    None => state.line.saturating_add(bytes.len()),
                };
                if state.line > MAX_LINE_BYTES {
                    Err(Guard::LineTooLong)
                } else {
                    Ok(bytes)
                }
            }
        };
        // After an error the stream ends.
        state.ended |= item.is_err();
        Some((item, state))
    });
    bytes.eventsource().map(|event| match event {
        Ok(event) => Ok(event.data),
        Err(EventStreamError::Transport(Guard::Stalled)) => Err(SseError::Stalled),
        Err(EventStreamError::Transport(Guard::Body(error))) => Err(SseError::Body(error)),
        Err(EventStreamError::Transport(Guard::LineTooLong)) => Err(SseError::LineTooLong),
        Err(EventStreamError::Utf8(error)) => Err(SseError::Malformed(format!(
            "the event stream is not UTF-8: {error}"
        ))),
        Err(EventStreamError::Parser(error)) => Err(SseError::Malformed(format!(
            "the event stream is not server-sent events: {error}"
        ))),
    })
}

/// What the byte guard in front of the decoder reports.
#[derive(Debug)]
enum Guard<E> {
    Stalled,
    Body(E),
    LineTooLong,
}

/// What the stream said after one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Progress {
    /// Keep reading.
    More,
    /// `[DONE]` arrived.
    Done,
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

impl EventAccumulator for Accumulator {
    fn on_event(&mut self, data: &str, sink: &mut dyn StreamSink) -> Result<Progress, EventError> {
        Accumulator::on_event(self, data, sink).map_err(EventError::from)
    }

    fn text(&self) -> &str {
        &self.text
    }

    fn size(&self) -> usize {
        self.calls.iter().fold(self.text.len(), |size, call| {
            size.saturating_add(
                crate::transport::PART_BYTES
                    + call.id.len()
                    + call.name.len()
                    + call.arguments.len(),
            )
        })
    }

    fn started(&self) -> bool {
        !self.text.is_empty() || !self.calls.is_empty()
    }

    /// Whether a `finish_reason` arrived: the reply itself is complete even
    /// if the connection closes before `[DONE]` (or before the usage chunk).
    fn finished(&self) -> bool {
        self.finish_reason.is_some()
    }

    fn missing_end(&self) -> &'static str {
        "no finish_reason or [DONE]"
    }

    fn into_reply(self) -> ModelReply {
        Accumulator::into_reply(self)
    }
}

/// Accumulates Chat Completions deltas into a reply.
#[derive(Debug, Default)]
pub(crate) struct Accumulator {
    text: String,
    calls: Vec<PartialCall>,
    usage: Option<TokenUsage>,
    finish_reason: Option<String>,
}

impl Accumulator {
    /// Applies one event's data.
    pub(crate) fn on_event(
        &mut self,
        data: &str,
        sink: &mut dyn StreamSink,
    ) -> Result<Progress, String> {
        let data = data.trim();
        if data == "[DONE]" {
            return Ok(Progress::Done);
        }
        if data.is_empty() {
            return Ok(Progress::More);
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|error| {
            format!(
                "malformed stream chunk ({error}): {}",
                crate::transport::excerpt(data)
            )
        })?;
        if let Some(error) = chunk.error {
            let message = match error {
                ChunkError::Message { message } => message,
                ChunkError::Other(other) => other.to_string(),
            };
            return Err(format!(
                "the provider reported an error mid-stream: {message}"
            ));
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(usage.into());
        }
        // dsh never asks for more than one choice.
        for choice in chunk.choices.into_iter().filter(|choice| choice.index == 0) {
            if let Some(delta) = choice.delta {
                if let Some(content) = delta.content.filter(|content| !content.is_empty()) {
                    sink.text_delta(&content);
                    self.text.push_str(&content);
                }
                for call in delta.tool_calls.unwrap_or_default() {
                    self.on_tool_call_delta(call)?;
                }
            }
            // Some servers send `""` rather than `null` while streaming.
            if let Some(reason) = choice.finish_reason.filter(|reason| !reason.is_empty()) {
                if reason == "length" {
                    tracing::warn!("the model stopped at its token limit (finish_reason=length)");
                }
                self.finish_reason = Some(reason);
            }
        }
        Ok(Progress::More)
    }

    fn on_tool_call_delta(&mut self, delta: ToolCallDelta) -> Result<(), String> {
        // The index says which call a fragment continues. Servers that omit
        // it start a new call with each new id and continue the last one
        // otherwise.
        let index = match delta.index {
            Some(index) => index,
            None => match (&delta.id, self.calls.last()) {
                (Some(id), Some(last)) if !last.id.is_empty() && &last.id != id => self.calls.len(),
                (_, Some(_)) => self.calls.len() - 1,
                (_, None) => 0,
            },
        };
        if index >= MAX_TOOL_CALLS {
            return Err(format!(
                "a tool call's index {index} is past the {MAX_TOOL_CALLS} calls one reply may hold"
            ));
        }
        if self.calls.len() <= index {
            self.calls.resize_with(index + 1, PartialCall::default);
        }
        let Some(call) = self.calls.get_mut(index) else {
            return Ok(());
        };
        if let Some(id) = delta.id.filter(|id| !id.is_empty())
            && call.id.is_empty()
        {
            call.id = id;
        }
        if let Some(function) = delta.function {
            if let Some(name) = function.name.filter(|name| !name.is_empty())
                && call.name.is_empty()
            {
                call.name = name;
            }
            if let Some(arguments) = function.arguments {
                call.arguments.push_str(&arguments);
            }
        }
        Ok(())
    }

    /// The finished reply.
    pub(crate) fn into_reply(self) -> ModelReply {
        let tool_calls = self
            .calls
            .into_iter()
            .enumerate()
            // An index the server skipped leaves an empty slot; it is no call.
            .filter(|(_, call)| {
                !(call.id.is_empty() && call.name.is_empty() && call.arguments.is_empty())
            })
            .map(|(index, call)| ToolCall {
                id: if call.id.is_empty() {
                    format!("call_{}", index + 1)
                } else {
                    call.id
                },
                name: call.name,
                arguments: wire::parse_arguments(&call.arguments),
            })
            .collect();
        ModelReply {
            text: self.text,
            tool_calls,
            usage: self.usage,
            thinking: None,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use dsh_model::NoStream;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    /// The events of `chunks`, and how the stream ended.
    async fn decode(chunks: &[&[u8]]) -> (Vec<String>, Option<SseError<String>>) {
        let body = stream::iter(
            chunks
                .iter()
                .map(|chunk| Ok::<_, String>(Bytes::copy_from_slice(chunk)))
                .collect::<Vec<_>>(),
        );
        let mut events = std::pin::pin!(sse_data(body, Duration::from_secs(5)));
        let mut data = Vec::new();
        while let Some(event) = events.next().await {
            match event {
                Ok(event) => data.push(event),
                Err(error) => return (data, Some(error)),
            }
        }
        (data, None)
    }

    #[tokio::test]
    async fn decoder_handles_split_lines_crlf_comments_and_multiline_data() {
        let (data, end) = decode(&[
            b": keep-alive\r\n\r\ndata: {\"a\"",
            b":1}\r\n\r\nevent: x\ndata:x\ndata: y\n\n",
            "data: \u{e9}".as_bytes()[..7].as_ref(),
            "data: \u{e9}".as_bytes()[7..].as_ref(),
            b"\n\ndata: tail",
        ])
        .await;
        assert_eq!(data, ["{\"a\":1}", "x\ny", "\u{e9}", "tail"]);
        assert!(end.is_none());
        // A stream that ends after its blank line has nothing more.
        let (data, end) = decode(&[b"data: [DONE]\n\n"]).await;
        assert_eq!(data, ["[DONE]"]);
        assert!(end.is_none());
    }

    #[tokio::test]
    async fn decoder_rejects_invalid_utf8() {
        let (data, end) = decode(&[b"data: ok\n\n", b"data: \xff\xfe\n\n"]).await;
        assert_eq!(data, ["ok"]);
        let Some(SseError::Malformed(message)) = end else {
            panic!("{end:?}");
        };
        assert!(message.contains("not UTF-8"), "{message}");
    }

    #[tokio::test]
    async fn decoder_stops_at_a_runaway_line_and_a_broken_body() {
        let long = vec![b'x'; MAX_LINE_BYTES / 2 + 1];
        let (_, end) = decode(&[b"data: ", &long, &long]).await;
        assert!(matches!(end, Some(SseError::LineTooLong)), "{end:?}");
        // A newline resets the count.
        let (_, end) = decode(&[&long, b"\n", &long]).await;
        assert!(end.is_none(), "{end:?}");

        let body = stream::iter([Ok(Bytes::from_static(b"data: a\n\n")), Err("reset")]);
        let mut events = std::pin::pin!(sse_data(body, Duration::from_secs(5)));
        assert_eq!(events.next().await.unwrap().unwrap(), "a");
        assert!(matches!(
            events.next().await,
            Some(Err(SseError::Body("reset")))
        ));
        assert!(events.next().await.is_none());
    }

    #[tokio::test]
    async fn decoder_reports_a_stall_when_bytes_stop() {
        let body = stream::iter([Ok::<_, String>(Bytes::from_static(b": ping\n"))])
            .chain(stream::pending());
        let mut events = std::pin::pin!(sse_data(body, Duration::from_millis(50)));
        assert!(matches!(events.next().await, Some(Err(SseError::Stalled))));
    }

    #[test]
    fn tool_calls_accumulate_by_index() {
        let mut accumulator = Accumulator::default();
        let events = [
            json!({"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}]}),
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"bash","arguments":""}}]}}]}),
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","type":"function","function":{"name":"read","arguments":"{\"file_"}}]}}]}),
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"command\":"}}]}}]}),
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"ls\"}"}},{"index":1,"function":{"arguments":"path\":\"x\"}"}}]}}]}),
            json!({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}),
            json!({"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}),
        ];
        for event in events {
            assert_eq!(
                accumulator
                    .on_event(&event.to_string(), &mut NoStream)
                    .unwrap(),
                Progress::More
            );
        }
        assert!(accumulator.finished());
        assert_eq!(
            accumulator.on_event("[DONE]", &mut NoStream).unwrap(),
            Progress::Done
        );
        let reply = accumulator.into_reply();
        assert_eq!(reply.text, "Hi");
        assert_eq!(
            reply.tool_calls,
            vec![
                ToolCall {
                    id: "a".into(),
                    name: "bash".into(),
                    arguments: json!({"command": "ls"})
                },
                ToolCall {
                    id: "b".into(),
                    name: "read".into(),
                    arguments: json!({"file_path": "x"})
                },
            ]
        );
        assert_eq!(
            reply.usage,
            Some(TokenUsage {
                input_tokens: 3,
                output_tokens: 4,
                ..Default::default()
            })
        );
    }

    #[test]
    fn an_empty_finish_reason_is_no_finish() {
        let mut accumulator = Accumulator::default();
        let event = json!({"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":""}]});
        accumulator
            .on_event(&event.to_string(), &mut NoStream)
            .unwrap();
        assert!(!accumulator.finished());
    }

    #[test]
    fn tool_calls_without_index_follow_ids() {
        let mut accumulator = Accumulator::default();
        let events = [
            json!({"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"x","arguments":"{}"}}]}}]}),
            json!({"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"y","arguments":"{"}}]}}]}),
            json!({"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"}"}}]}}]}),
        ];
        for event in events {
            accumulator
                .on_event(&event.to_string(), &mut NoStream)
                .unwrap();
        }
        let reply = accumulator.into_reply();
        assert_eq!(reply.tool_calls.len(), 2);
        assert_eq!(reply.tool_calls[1].arguments, json!({}));
    }

    /// A fragment's index sizes the list of calls: a huge one is an error,
    /// not an allocation.
    #[test]
    fn a_tool_call_index_past_the_bound_is_an_error() {
        let mut accumulator = Accumulator::default();
        let event = json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":4_000_000_000_u64,"id":"a","function":{"name":"x","arguments":"{}"}}]}}]});
        let error = accumulator
            .on_event(&event.to_string(), &mut NoStream)
            .unwrap_err();
        assert!(error.contains("index 4000000000"), "{error}");
        assert!(accumulator.calls.is_empty());
    }

    #[test]
    fn in_stream_errors_and_garbage_are_errors() {
        let mut accumulator = Accumulator::default();
        let error = accumulator
            .on_event(r#"{"error":{"message":"overloaded"}}"#, &mut NoStream)
            .unwrap_err();
        assert!(error.contains("overloaded"), "{error}");
        let error = accumulator.on_event("{nope", &mut NoStream).unwrap_err();
        assert!(error.contains("malformed stream chunk"), "{error}");
    }
}
