//! Anthropic's Messages API: dsh messages → a Messages request (system
//! blocks, tools, `tool_use` / `tool_result` blocks, prompt-cache
//! breakpoints, extended thinking), and the streamed events → a reply.
//! Private to this crate.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use dsh_model::{FailureCategory, ProviderFailure, StreamSink};
use dsh_protocol::{Message, ModelReply, ModelRequest, TokenUsage, ToolCall};
use serde_json::{Value, json};

use crate::api::Loose;
use crate::api::messages::{
    self, Block, CacheControl, Content, Delta, Event, RequestMessage, Role, StartBlock, Thinking,
    ThinkingBlock, ToolResultContent, text_of,
};

use crate::settings::ProviderSettings;
use crate::stream::Progress;
use crate::transport::{ErrorBody, EventAccumulator, EventError, WireApi, excerpt};
use crate::wire::parse_arguments;

/// The API version every request names (`anthropic-version`).
pub(crate) const ANTHROPIC_VERSION: &str = "2023-06-01";
/// `max_tokens` when the settings name none (the API requires one).
const DEFAULT_MAX_TOKENS: u32 = 8192;
/// How many replies' thinking blocks are remembered.
const THINKING_MEMORY: usize = 64;

/// The thinking blocks of recent replies that called tools, keyed by the
/// id of the reply's first tool call. With extended thinking on, the API
/// wants the thinking blocks of the assistant message whose tool results
/// are being sent, unchanged and signed. The reply carries the blocks too
/// (`ModelReply::thinking`), so the session log keeps them; a message
/// without them (a log written before dsh kept them) falls back to these.
#[derive(Debug, Default)]
pub(crate) struct ThinkingMemory {
    blocks: HashMap<String, Vec<ThinkingBlock>>,
    order: VecDeque<String>,
}

impl ThinkingMemory {
    fn remember(&mut self, first_call: &str, blocks: Vec<ThinkingBlock>) {
        if self.blocks.insert(first_call.to_owned(), blocks).is_none() {
            self.order.push_back(first_call.to_owned());
        }
        while self.order.len() > THINKING_MEMORY {
            if let Some(oldest) = self.order.pop_front() {
                self.blocks.remove(&oldest);
            }
        }
    }

    fn recall(&self, first_call: &str) -> Option<&[ThinkingBlock]> {
        self.blocks.get(first_call).map(Vec::as_slice)
    }
}

/// Shared between a provider and the copies `/model` makes of it.
type Memory = Arc<Mutex<ThinkingMemory>>;

fn lock(memory: &Memory) -> std::sync::MutexGuard<'_, ThinkingMemory> {
    // The memory holds plain data; a panic elsewhere leaves it usable.
    memory.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Anthropic Messages: `POST {base_url}/v1/messages` with `x-api-key`.
#[derive(Debug, Clone, Default)]
pub(crate) struct AnthropicApi {
    memory: Memory,
}

impl WireApi for AnthropicApi {
    type Accumulator = MessagesAccumulator;
    type Body = messages::Request;

    fn url(&self, base_url: &str) -> String {
        format!("{}/v1/messages", base_url.trim_end_matches('/'))
    }

    fn authorize(
        &self,
        request: reqwest::RequestBuilder,
        api_key: &str,
    ) -> reqwest::RequestBuilder {
        request
            .header("x-api-key", api_key)
            .header("anthropic-version", ANTHROPIC_VERSION)
    }

    fn request_body(
        &self,
        settings: &ProviderSettings,
        request: &ModelRequest,
    ) -> messages::Request {
        request_body(settings, request, &lock(&self.memory))
    }

    fn accumulator(&self) -> MessagesAccumulator {
        MessagesAccumulator {
            memory: Some(self.memory.clone()),
            ..MessagesAccumulator::default()
        }
    }

    fn category(&self, status: u16, body: &ErrorBody) -> FailureCategory {
        body.kind
            .as_deref()
            .and_then(category_of_type)
            .unwrap_or_else(|| FailureCategory::from_status(status))
    }
}

/// The category of one of the API's error types.
fn category_of_type(kind: &str) -> Option<FailureCategory> {
    Some(match kind {
        "authentication_error" | "permission_error" => FailureCategory::AuthenticationFailed,
        "billing_error" => FailureCategory::BillingError,
        "rate_limit_error" => FailureCategory::RateLimit,
        "overloaded_error" | "api_error" | "timeout_error" => FailureCategory::ServerError,
        "invalid_request_error" | "not_found_error" | "request_too_large" => {
            FailureCategory::InvalidRequest
        }
        _ => return None,
    })
}

/// The status the API answers an error type with, for a typed failure that
/// arrived inside a stream (whose own status was 200).
fn status_of_type(kind: &str) -> Option<u16> {
    Some(match kind {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "billing_error" => 402,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "api_error" => 500,
        "timeout_error" => 504,
        "overloaded_error" => 529,
        _ => return None,
    })
}

/// Builds the body of one streaming request.
pub(crate) fn request_body(
    settings: &ProviderSettings,
    request: &ModelRequest,
    memory: &ThinkingMemory,
) -> messages::Request {
    let model = request.model.as_ref().unwrap_or(&settings.model);

    // Leading system messages are the system prompt; later ones (context a
    // hook or plugin added mid-conversation) go to the model as user text,
    // since the API has no system role inside `messages`.
    let first_other = request
        .messages
        .iter()
        .position(|message| !matches!(message, Message::System { .. }))
        .unwrap_or(request.messages.len());
    let (system, conversation) = request.messages.split_at(first_other);
    let mut system_blocks: Vec<Block> = system
        .iter()
        .filter_map(|message| match message {
            Message::System { content } if !content.is_empty() => Some(Block::text(content)),
            Message::System { .. }
            | Message::User { .. }
            | Message::Assistant { .. }
            | Message::Tool { .. } => None,
        })
        .collect();
    // Breakpoint 1: the system prompt (with the tools before it, the
    // stable prefix of every request).
    if let Some(last) = system_blocks.last_mut() {
        last.cache();
    }

    let (mut messages, missing_thinking) = conversation_messages(conversation, memory);
    // Breakpoint 2: the moving end of the conversation, as Claude Code
    // places it: the last block of the last message, so the next request
    // reads everything up to here from the cache (not a thinking block).
    if let Some(Content::Block(block)) = messages
        .last_mut()
        .and_then(|message| message.content.last_mut())
    {
        block.cache();
    }

    let mut tools: Vec<messages::Tool> = request
        .tools
        .iter()
        .map(|tool| messages::Tool {
            name: tool.name.clone(),
            description: tool.description.clone(),
            input_schema: tool.input_schema.clone(),
            cache_control: None,
        })
        .collect();
    // Breakpoint 3: the tools, so a changed system prompt still reads
    // them from the cache.
    if let Some(last) = tools.last_mut() {
        last.cache_control = Some(CacheControl::Ephemeral);
    }
    let budget = settings.thinking_budget_tokens;
    let max_tokens = settings.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    // Thinking stays off for a request continuing a tool call whose
    // thinking blocks dsh does not have (a log written before dsh kept them): the API
    // refuses that history with thinking on, and accepts it with it off.
    let (max_tokens, thinking, temperature) = match budget.filter(|_| !missing_thinking) {
        // The budget counts against max_tokens, which must exceed it.
        Some(budget) => (
            max_tokens.max(budget.saturating_add(DEFAULT_MAX_TOKENS)),
            Some(Thinking::Enabled {
                budget_tokens: budget,
            }),
            // The API rejects a temperature other than 1 with thinking on.
            None,
        ),
        None => (max_tokens, None, settings.temperature.map(f64::from)),
    };
    messages::Request {
        model: model.clone(),
        system: system_blocks,
        messages,
        tools,
        max_tokens,
        thinking,
        temperature,
        stream: true,
    }
}

/// The conversation as Messages API messages (same-role neighbours merged,
/// so parallel tool results share one user message), and whether the
/// assistant message the request continues called tools without thinking
/// blocks dsh remembers.
fn conversation_messages(
    conversation: &[Message],
    memory: &ThinkingMemory,
) -> (Vec<RequestMessage>, bool) {
    let mut messages: Vec<RequestMessage> = Vec::new();
    let mut push = |role: Role, blocks: Vec<Content>| {
        if blocks.is_empty() {
            return;
        }
        match messages.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => messages.push(RequestMessage {
                role,
                content: blocks,
            }),
        }
    };
    // Whether the latest assistant message called tools with no
    // remembered thinking.
    let mut missing_thinking = false;
    for message in conversation {
        match message {
            Message::System { content } | Message::User { content } => {
                if !content.is_empty() {
                    push(Role::User, vec![Content::Block(Block::text(content))]);
                }
            }
            Message::Assistant {
                content,
                tool_calls,
                thinking: logged,
            } => {
                let mut blocks = Vec::new();
                // The blocks the session log kept (a resumed session), else
                // the ones remembered; only Messages API thinking blocks
                // (another API's reasoning is not for this one).
                let logged: Vec<_> = logged
                    .iter()
                    .flatten()
                    .filter(|block| {
                        matches!(
                            block["type"].as_str(),
                            Some("thinking" | "redacted_thinking")
                        )
                    })
                    .cloned()
                    .map(Content::Logged)
                    .collect();
                let thinking = if logged.is_empty() {
                    tool_calls
                        .first()
                        .and_then(|call| memory.recall(&call.id))
                        .map(|kept| kept.iter().cloned().map(Content::Thinking).collect())
                } else {
                    Some(logged)
                };
                missing_thinking = !tool_calls.is_empty() && thinking.is_none();
                blocks.extend(thinking.into_iter().flatten());
                if !content.is_empty() {
                    blocks.push(Content::Block(Block::text(content)));
                }
                for call in tool_calls {
                    blocks.push(Content::Block(Block::ToolUse {
                        id: call.id.clone(),
                        name: call.name.clone(),
                        input: tool_input(&call.arguments),
                        cache_control: None,
                    }));
                }
                push(Role::Assistant, blocks);
            }
            Message::Tool {
                tool_call_id,
                content,
                is_error,
                blocks,
            } => {
                let (content, is_error) = match blocks {
                    // An MCP result goes as its content blocks, with no
                    // `is_error` unless it failed, as Claude Code sends it
                    // (`mcp_text_result`, `mcp_updated_output_blocks`).
                    Some(blocks) => (
                        ToolResultContent::Blocks(blocks.clone()),
                        is_error.then_some(true),
                    ),
                    // Claude Code marks every other result, failed or not
                    // (`"is_error": true` on a failed call, `b_pre_exit2`).
                    None => (ToolResultContent::Text(content.clone()), Some(*is_error)),
                };
                push(
                    Role::User,
                    vec![Content::Block(Block::ToolResult {
                        tool_use_id: tool_call_id.clone(),
                        content,
                        is_error,
                        cache_control: None,
                    })],
                );
            }
        }
    }
    for message in &mut messages {
        // The API wants a user message's tool results before its text
        // (context a hook added between two results moves after them).
        message
            .content
            .sort_by_key(|block| !matches!(block, Content::Block(Block::ToolResult { .. })));
    }
    (messages, missing_thinking)
}

/// A tool call's `input`: the API takes an object. Arguments the model
/// sent as invalid JSON are kept by dsh as a string; they go back under
/// one key rather than being dropped.
fn tool_input(arguments: &Value) -> Value {
    match arguments {
        Value::Object(_) => arguments.clone(),
        Value::String(raw) => json!({ "arguments": raw }),
        Value::Null => json!({}),
        other @ (Value::Bool(_) | Value::Number(_) | Value::Array(_)) => {
            json!({ "arguments": other })
        }
    }
}

/// One content block of a reply as it streams.
#[derive(Debug)]
enum Streamed {
    Text,
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
    /// `thinking` (with its signature) or `redacted_thinking`, kept as
    /// the API sent it so that it can go back unchanged.
    Thinking(ThinkingBlock),
    /// A block type dsh does not use (server tools and the like).
    Other,
}

/// Accumulates Messages API events into a reply.
#[derive(Debug, Default)]
pub(crate) struct MessagesAccumulator {
    text: String,
    blocks: Vec<(usize, Streamed)>,
    usage: Option<Usage>,
    stop_reason: Option<String>,
    memory: Option<Memory>,
}

/// Usage as the API reports it: `input_tokens` excludes the cached part.
#[derive(Debug, Default, Clone, Copy)]
struct Usage {
    input: u64,
    output: u64,
    cache_read: u64,
    cache_creation: u64,
}

impl Usage {
    fn update(&mut self, usage: &messages::Usage) {
        if let Some(input) = usage.input_tokens {
            self.input = input;
        }
        if let Some(output) = usage.output_tokens {
            self.output = output;
        }
        if let Some(read) = usage.cache_read_input_tokens {
            self.cache_read = read;
        }
        if let Some(creation) = usage.cache_creation_input_tokens {
            self.cache_creation = creation;
        }
    }
}

impl From<Usage> for TokenUsage {
    // dsh's input tokens are the whole prompt (what fills the context
    // window, which compaction and the status line measure), cached or not.
    fn from(usage: Usage) -> Self {
        TokenUsage {
            input_tokens: usage.input + usage.cache_read + usage.cache_creation,
            output_tokens: usage.output,
            cache_read_input_tokens: usage.cache_read,
            cache_creation_input_tokens: usage.cache_creation,
        }
    }
}

impl MessagesAccumulator {
    fn block(&mut self, index: usize) -> Option<&mut Streamed> {
        self.blocks
            .iter_mut()
            .find(|(at, _)| *at == index)
            .map(|(_, block)| block)
    }

    fn on_delta(&mut self, index: usize, delta: Delta, sink: &mut dyn StreamSink) {
        let (is_signature, piece) = match delta {
            Delta::Text { text } => {
                if !text.is_empty() {
                    sink.text_delta(&text);
                    self.text.push_str(&text);
                }
                return;
            }
            Delta::InputJson { partial_json } => {
                if let Some(Streamed::ToolUse { json, .. }) = self.block(index) {
                    json.push_str(&partial_json);
                }
                return;
            }
            Delta::Thinking { thinking } => (false, thinking),
            Delta::Signature { signature } => (true, signature),
            Delta::Other => return,
        };
        // A redacted block takes no deltas.
        if let Some(Streamed::Thinking(ThinkingBlock::Thinking(block))) = self.block(index) {
            let text = if is_signature {
                &mut block.signature
            } else {
                &mut block.thinking
            };
            // Appended in place: many small pieces stay linear.
            text.get_or_insert_default().push_str(&piece);
        }
    }
}

impl EventAccumulator for MessagesAccumulator {
    fn on_event(&mut self, data: &str, sink: &mut dyn StreamSink) -> Result<Progress, EventError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(Progress::More);
        }
        let event: Event = serde_json::from_str(data)
            .map_err(|error| format!("malformed stream event ({error}): {}", excerpt(data)))?;
        match event {
            Event::MessageStart { message } => {
                if let Some(usage) = &message.usage {
                    self.usage.get_or_insert_with(Usage::default).update(usage);
                }
            }
            Event::ContentBlockStart {
                index,
                content_block,
            } => {
                let block = match content_block {
                    Some(Loose::Is(StartBlock::Text { text })) => {
                        if let Some(initial) =
                            text_of(text.as_ref()).filter(|text| !text.is_empty())
                        {
                            sink.text_delta(initial);
                            self.text.push_str(initial);
                        }
                        Streamed::Text
                    }
                    Some(Loose::Is(StartBlock::ToolUse { id, name })) => Streamed::ToolUse {
                        id: text_of(id.as_ref()).unwrap_or_default().to_owned(),
                        name: text_of(name.as_ref()).unwrap_or_default().to_owned(),
                        json: String::new(),
                    },
                    Some(Loose::Is(StartBlock::Thinking(block))) => {
                        Streamed::Thinking(ThinkingBlock::Thinking(block))
                    }
                    Some(Loose::Is(StartBlock::RedactedThinking(block))) => {
                        Streamed::Thinking(ThinkingBlock::RedactedThinking(block))
                    }
                    Some(Loose::Is(StartBlock::Other) | Loose::Not(_)) | None => Streamed::Other,
                };
                self.blocks.push((index, block));
            }
            Event::ContentBlockDelta { index, delta } => self.on_delta(index, delta, sink),
            Event::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason {
                    if reason == "max_tokens" {
                        tracing::warn!(
                            "the model stopped at its token limit (stop_reason=max_tokens)"
                        );
                    }
                    self.stop_reason = Some(reason);
                }
                if let Some(usage) = &usage {
                    self.usage.get_or_insert_with(Usage::default).update(usage);
                }
            }
            Event::MessageStop => return Ok(Progress::Done),
            Event::Error { error } => {
                let kind = error.kind.as_deref().unwrap_or("error");
                let message = error.message.as_deref().unwrap_or_default();
                let failure = match status_of_type(kind) {
                    Some(status) => ProviderFailure::from_status(status, message),
                    None => ProviderFailure {
                        category: FailureCategory::Unknown,
                        status: None,
                        message: message.to_owned(),
                        retry_after: None,
                        gateway: None,
                    },
                };
                return Err(EventError {
                    message: format!(
                        "the provider reported an error mid-stream ({kind}): {}",
                        excerpt(message)
                    ),
                    failure: Some(failure),
                });
            }
            Event::Other => {}
        }
        Ok(Progress::More)
    }

    fn text(&self) -> &str {
        &self.text
    }

    fn size(&self) -> usize {
        let held_by = |text: &Option<String>| text.as_ref().map_or(0, String::len);
        self.blocks
            .iter()
            .fold(self.text.len(), |size, (_, block)| {
                let held = match block {
                    Streamed::ToolUse { id, name, json } => id.len() + name.len() + json.len(),
                    // Redacted thinking holds its `data`.
                    Streamed::Thinking(ThinkingBlock::Thinking(block)) => {
                        held_by(&block.thinking) + held_by(&block.signature)
                    }
                    Streamed::Thinking(ThinkingBlock::RedactedThinking(block)) => {
                        held_by(&block.data)
                    }
                    Streamed::Text | Streamed::Other => 0,
                };
                size.saturating_add(crate::transport::PART_BYTES + held)
            })
    }

    fn started(&self) -> bool {
        !self.text.is_empty() || !self.blocks.is_empty()
    }

    fn finished(&self) -> bool {
        self.stop_reason.is_some()
    }

    fn missing_end(&self) -> &'static str {
        "no stop_reason or message_stop"
    }

    fn into_reply(self) -> ModelReply {
        let mut tool_calls = Vec::new();
        let mut thinking = Vec::new();
        for (position, (_, block)) in self.blocks.into_iter().enumerate() {
            match block {
                Streamed::ToolUse { id, name, json } => tool_calls.push(ToolCall {
                    id: if id.is_empty() {
                        format!("call_{}", position + 1)
                    } else {
                        id
                    },
                    name,
                    arguments: parse_arguments(&json),
                }),
                Streamed::Thinking(block) => thinking.push(block),
                Streamed::Text | Streamed::Other => {}
            }
        }
        // Kept for the next request, in memory and (through the reply) in
        // the session log, so a resumed session sends them back too.
        let thinking = (!tool_calls.is_empty() && !thinking.is_empty()).then(|| {
            let logged = thinking
                .iter()
                .filter_map(|block| serde_json::to_value(block).ok())
                .collect();
            if let (Some(memory), Some(first)) = (&self.memory, tool_calls.first()) {
                lock(memory).remember(&first.id, thinking);
            }
            logged
        });
        ModelReply {
            text: self.text,
            tool_calls,
            usage: self.usage.map(Into::into),
            thinking,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use dsh_model::NoStream;
    use dsh_protocol::ToolSpec;
    use pretty_assertions::assert_eq;

    fn conversation() -> ModelRequest {
        ModelRequest {
            turn: 1,
            step: 2,
            messages: vec![
                Message::System {
                    content: "sys".into(),
                },
                Message::User {
                    content: "hi".into(),
                },
                Message::Assistant {
                    content: "Running both.".into(),
                    thinking: None,
                    tool_calls: vec![
                        ToolCall {
                            id: "toolu_1".into(),
                            name: "bash".into(),
                            arguments: json!({"command": "ls"}),
                        },
                        ToolCall {
                            id: "toolu_2".into(),
                            name: "read".into(),
                            arguments: Value::String("{not json".into()),
                        },
                    ],
                },
                Message::Tool {
                    tool_call_id: "toolu_1".into(),
                    content: "out".into(),
                    is_error: false,
                    blocks: None,
                },
                Message::System {
                    content: "hook context".into(),
                },
                Message::Tool {
                    tool_call_id: "toolu_2".into(),
                    content: "err".into(),
                    is_error: true,
                    blocks: None,
                },
            ],
            tools: vec![ToolSpec {
                name: "bash".into(),
                description: "runs".into(),
                input_schema: json!({"type": "object"}),
            }],
            model: None,
        }
    }

    #[test]
    fn messages_map_to_blocks_with_cache_breakpoints() {
        let settings = ProviderSettings {
            model: "claude-x".into(),
            temperature: Some(0.5),
            ..ProviderSettings::default()
        };
        let body = request_body(&settings, &conversation(), &ThinkingMemory::default());
        let cache = json!({"type": "ephemeral"});
        // The bytes sent, keys in order.
        assert_eq!(
            serde_json::to_string(&body).unwrap(),
            json!({
                "model": "claude-x",
                "system": [{"type": "text", "text": "sys", "cache_control": cache}],
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                    {"role": "assistant", "content": [
                        {"type": "text", "text": "Running both."},
                        {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}},
                        {"type": "tool_use", "id": "toolu_2", "name": "read", "input": {"arguments": "{not json"}},
                    ]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "out", "is_error": false},
                        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "err", "is_error": true},
                        {"type": "text", "text": "hook context", "cache_control": cache},
                    ]},
                ],
                "tools": [{"name": "bash", "description": "runs", "input_schema": {"type": "object"}, "cache_control": cache}],
                "max_tokens": 8192,
                "temperature": 0.5,
                "stream": true,
            })
            .to_string()
        );
    }

    /// An MCP result's blocks go as the `tool_result` content, without
    /// `is_error` unless it failed (`mcp_updated_output_blocks`).
    #[test]
    fn an_mcp_results_blocks_stay_blocks() {
        let blocks = vec![
            dsh_protocol::ContentBlock::Text {
                text: "BLOCK-ONE".into(),
            },
            dsh_protocol::ContentBlock::Text {
                text: "BLOCK-TWO".into(),
            },
        ];
        let request = ModelRequest {
            turn: 1,
            step: 2,
            messages: vec![
                Message::User {
                    content: "go".into(),
                },
                Message::Assistant {
                    content: String::new(),
                    tool_calls: vec![ToolCall {
                        id: "toolu_1".into(),
                        name: "mcp__echo__echo".into(),
                        arguments: json!({"text": "hello"}),
                    }],
                    thinking: None,
                },
                Message::Tool {
                    tool_call_id: "toolu_1".into(),
                    content: "BLOCK-ONE\nBLOCK-TWO".into(),
                    is_error: false,
                    blocks: Some(blocks.clone()),
                },
            ],
            tools: Vec::new(),
            model: None,
        };
        let body = AnthropicApi::default().request_body(&ProviderSettings::default(), &request);
        let body = serde_json::to_value(body).unwrap();
        let result = &body["messages"][2]["content"][0];
        assert_eq!(
            result["content"].to_string(),
            r#"[{"type":"text","text":"BLOCK-ONE"},{"type":"text","text":"BLOCK-TWO"}]"#
        );
        assert!(result.get("is_error").is_none(), "{result}");
    }

    fn feed(accumulator: &mut MessagesAccumulator, events: &[Value]) -> Progress {
        let mut progress = Progress::More;
        for event in events {
            progress = accumulator
                .on_event(&event.to_string(), &mut NoStream)
                .unwrap();
        }
        progress
    }

    /// Redacted thinking and keys dsh does not know go back as they came
    /// (in the reply, the memory and the next request); start blocks of
    /// another shape are no block of dsh's and break nothing.
    #[test]
    fn thinking_blocks_keep_what_dsh_does_not_read() {
        let api = AnthropicApi::default();
        let mut accumulator = api.accumulator();
        let progress = feed(
            &mut accumulator,
            &[
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "redacted_thinking", "data": "RED"}}),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "ignored"}}),
                json!({"type": "content_block_start", "index": 1, "content_block": {"type": "thinking", "thinking": "", "note": {"n": 1}}}),
                json!({"type": "content_block_delta", "index": 1, "delta": {"type": "thinking_delta", "thinking": "Hm."}}),
                json!({"type": "content_block_delta", "index": 1, "delta": {"type": "signature_delta", "signature": "s"}}),
                json!({"type": "content_block_start", "index": 2, "content_block": 7}),
                json!({"type": "content_block_start", "index": 3, "content_block": {"text": "no type"}}),
                json!({"type": "content_block_start", "index": 4, "content_block": {"type": "text", "text": 5}}),
                json!({"type": "content_block_start", "index": 5, "content_block": {"type": "server_tool_use", "id": "s"}}),
                json!({"type": "content_block_start", "index": 6, "content_block": {"type": "tool_use", "id": "toolu_1", "name": ["x"]}}),
                json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
            ],
        );
        assert_eq!(progress, Progress::More);
        assert_eq!(accumulator.text(), "");
        let held = accumulator.size();
        let reply = accumulator.into_reply();
        assert_eq!(reply.tool_calls.len(), 1);
        assert_eq!(reply.tool_calls[0].name, "");
        let blocks = vec![
            json!({"type": "redacted_thinking", "data": "RED"}),
            json!({"type": "thinking", "thinking": "Hm.", "signature": "s", "note": {"n": 1}}),
        ];
        assert_eq!(reply.thinking.as_ref(), Some(&blocks));
        // Seven blocks, and the thinking blocks' text.
        assert_eq!(
            held,
            7 * crate::transport::PART_BYTES + "toolu_1".len() + 3 + 3 + 1
        );
        let request = ModelRequest {
            turn: 1,
            step: 2,
            messages: vec![Message::Assistant {
                content: String::new(),
                tool_calls: reply.tool_calls.clone(),
                thinking: None,
            }],
            tools: Vec::new(),
            model: None,
        };
        let body =
            serde_json::to_value(api.request_body(&ProviderSettings::default(), &request)).unwrap();
        assert_eq!(body["messages"][0]["content"][0], blocks[0]);
        assert_eq!(body["messages"][0]["content"][1], blocks[1]);
    }

    #[test]
    fn thinking_is_remembered_and_sent_back_with_its_tool_call() {
        let api = AnthropicApi::default();
        let mut accumulator = api.accumulator();
        let progress = feed(
            &mut accumulator,
            &[
                json!({"type": "message_start", "message": {"usage": {"input_tokens": 5, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 20, "output_tokens": 1}}}),
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Let me "}}),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "think."}}),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig"}}),
                json!({"type": "content_block_stop", "index": 0}),
                json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_9", "name": "bash", "input": {}}}),
                json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"command\":"}}),
                json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "\"ls\"}"}}),
                json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 7}}),
                json!({"type": "message_stop"}),
            ],
        );
        assert_eq!(progress, Progress::Done);
        let reply = accumulator.into_reply();
        assert_eq!(reply.tool_calls[0].arguments, json!({"command": "ls"}));
        assert_eq!(
            reply.usage,
            Some(TokenUsage {
                input_tokens: 125,
                output_tokens: 7,
                cache_read_input_tokens: 100,
                cache_creation_input_tokens: 20,
            })
        );
        let request = ModelRequest {
            turn: 1,
            step: 2,
            messages: vec![
                Message::User {
                    content: "go".into(),
                },
                Message::Assistant {
                    content: String::new(),
                    tool_calls: reply.tool_calls.clone(),
                    thinking: None,
                },
                Message::Tool {
                    tool_call_id: "toolu_9".into(),
                    content: "a b".into(),
                    is_error: false,
                    blocks: None,
                },
            ],
            tools: Vec::new(),
            model: None,
        };
        let settings = ProviderSettings {
            thinking_budget_tokens: Some(2048),
            temperature: Some(0.2),
            ..ProviderSettings::default()
        };
        let body = serde_json::to_value(api.request_body(&settings, &request)).unwrap();
        assert_eq!(
            body["messages"][1]["content"][0],
            json!({"type": "thinking", "thinking": "Let me think.", "signature": "sig"})
        );
        assert_eq!(
            body["thinking"],
            json!({"type": "enabled", "budget_tokens": 2048})
        );
        assert_eq!(body["max_tokens"], json!(2048 + 8192));
        assert!(body.get("temperature").is_none(), "{body}");

        // A tool call whose thinking dsh does not have: thinking stays off.
        let other = AnthropicApi::default();
        let body = serde_json::to_value(other.request_body(&settings, &request)).unwrap();
        assert!(body.get("thinking").is_none(), "{body}");
        assert_eq!(body["messages"][1]["content"][0]["type"], "tool_use");
    }

    #[test]
    fn error_events_are_typed_failures() {
        let mut accumulator = MessagesAccumulator::default();
        let error = accumulator
            .on_event(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
                &mut NoStream,
            )
            .unwrap_err();
        let failure = error.failure.unwrap();
        assert_eq!(failure.category, FailureCategory::ServerError);
        assert_eq!(failure.status, Some(529));
        assert!(
            error.message.contains("overloaded_error"),
            "{}",
            error.message
        );
        assert_eq!(
            category_of_type("rate_limit_error"),
            Some(FailureCategory::RateLimit)
        );
        assert_eq!(
            category_of_type("authentication_error"),
            Some(FailureCategory::AuthenticationFailed)
        );
        assert_eq!(category_of_type("new_error"), None);
    }
}
