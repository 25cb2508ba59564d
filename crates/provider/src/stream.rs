//! Server-sent events → a [`ModelReply`]: a byte-level SSE decoder and the
//! accumulator for Chat Completions deltas. Pure; the HTTP side lives in
//! `client.rs`.

use dsh_model::StreamSink;
use dsh_protocol::{ModelReply, TokenUsage, ToolCall};

use crate::wire::{self, Chunk};

/// The largest single SSE line accepted; a server that sends more without a
/// newline is not speaking SSE.
const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Splits a byte stream into SSE events and returns each event's data.
#[derive(Debug, Default)]
pub(crate) struct SseDecoder {
    line: Vec<u8>,
    data: Option<String>,
}

impl SseDecoder {
    /// Feeds bytes; returns the data of every event they completed.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Result<Vec<String>, String> {
        let mut events = Vec::new();
        for &byte in bytes {
            if byte == b'\n' {
                let line = std::mem::take(&mut self.line);
                if let Some(data) = self.line_done(&line)? {
                    events.push(data);
                }
            } else {
                if self.line.len() >= MAX_LINE_BYTES {
                    return Err(format!(
                        "an event-stream line exceeded {MAX_LINE_BYTES} bytes"
                    ));
                }
                self.line.push(byte);
            }
        }
        Ok(events)
    }

    /// The stream ended: returns the data of an event left without its
    /// closing blank line, if any.
    pub(crate) fn finish(&mut self) -> Result<Option<String>, String> {
        let line = std::mem::take(&mut self.line);
        if !line.is_empty()
            && let Some(data) = self.line_done(&line)?
        {
            return Ok(Some(data));
        }
        Ok(self.data.take())
    }

    fn line_done(&mut self, line: &[u8]) -> Result<Option<String>, String> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            return Ok(self.data.take());
        }
        let line = std::str::from_utf8(line)
            .map_err(|error| format!("the event stream is not UTF-8: {error}"))?;
        if line.starts_with(':') {
            // A comment; servers send these as keep-alives.
            return Ok(None);
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        if field == "data" {
            match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            }
        }
        // `event`, `id` and `retry` carry nothing Chat Completions uses.
        Ok(None)
    }
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

/// Accumulates deltas into a reply.
#[derive(Debug, Default)]
pub(crate) struct Accumulator {
    text: String,
    calls: Vec<PartialCall>,
    usage: Option<TokenUsage>,
    finish_reason: Option<String>,
}

impl Accumulator {
    /// The text streamed so far.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// Whether a `finish_reason` arrived: the reply itself is complete even
    /// if the connection closes before `[DONE]` (or before the usage chunk).
    pub(crate) fn finished(&self) -> bool {
        self.finish_reason.is_some()
    }

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
                crate::client::excerpt(data)
            )
        })?;
        if let Some(error) = chunk.error {
            let message = error
                .get("message")
                .and_then(|message| message.as_str())
                .map_or_else(|| error.to_string(), str::to_owned);
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
                    self.on_tool_call_delta(call);
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

    fn on_tool_call_delta(&mut self, delta: wire::ToolCallDelta) {
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
        if self.calls.len() <= index {
            self.calls.resize_with(index + 1, PartialCall::default);
        }
        let Some(call) = self.calls.get_mut(index) else {
            return;
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

    #[test]
    fn decoder_handles_split_lines_crlf_comments_and_multiline_data() {
        let mut decoder = SseDecoder::default();
        assert_eq!(
            decoder.feed(b": keep-alive\r\n\r\ndata: {\"a\"").unwrap(),
            Vec::<String>::new()
        );
        assert_eq!(
            decoder.feed(b":1}\r\n\r\ndata:x\ndata: y\n\n").unwrap(),
            vec!["{\"a\":1}", "x\ny"]
        );
        assert_eq!(decoder.feed(b"data: tail").unwrap(), Vec::<String>::new());
        assert_eq!(decoder.finish().unwrap(), Some("tail".to_owned()));
    }

    #[test]
    fn decoder_rejects_invalid_utf8() {
        let mut decoder = SseDecoder::default();
        assert!(decoder.feed(b"data: \xff\xfe\n").is_err());
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
                output_tokens: 4
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
