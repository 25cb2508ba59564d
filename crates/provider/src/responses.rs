//! The OpenAI Responses API wire format: dsh messages → one streaming
//! `POST {base}/responses` body, the event stream → a [`ModelReply`], the
//! API's error codes → typed failures, and the reasoning items a reasoning
//! model returns, kept so they go back with the tool calls they led to.
//!
//! Shapes follow what Codex itself sends (its captured requests): system
//! text as `developer` messages in `input` (Codex sends no `instructions`),
//! `function_call` / `function_call_output` items, function tools with
//! `strict: false`, `store: false`, and for reasoning models
//! `include: ["reasoning.encrypted_content"]`. Private to this crate.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use dsh_model::{FailureCategory, ProviderFailure, StreamSink};
use dsh_protocol::{Message, ModelReply, ModelRequest, TokenUsage, ToolCall};

use crate::api::responses::{
    self, ContentPart, Event, EventType, InputItem, Item, Output, OutputItem, ReplayedReasoning,
    Response, Role, ToolChoice, Usage as ResponsesUsage, text_of,
};
use crate::api::{Function, Loose};

use crate::settings::ProviderSettings;
use crate::stream::Progress;
use crate::transport::{ErrorBody, EventAccumulator, EventError, WireApi, generic_error_body};
use crate::wire::{arguments_string, parse_arguments};

/// How many replies' reasoning items are remembered. A reasoning item only
/// matters while its tool calls are still in the conversation being sent;
/// older ones are dropped first.
const REASONING_MEMORY: usize = 256;

/// Whether `model` is a reasoning model, which returns (encrypted)
/// reasoning items and accepts `include: ["reasoning.encrypted_content"]`;
/// other models reject that `include`.
pub(crate) fn is_reasoning_model(model: &str) -> bool {
    let model = model.to_ascii_lowercase();
    let model = model.rsplit('/').next().unwrap_or(&model);
    if model.starts_with("gpt-5") {
        // The chat-tuned gpt-5 snapshots do not reason.
        return !model.contains("-chat");
    }
    ["o1", "o3", "o4", "codex-"]
        .iter()
        .any(|prefix| model.starts_with(prefix))
}

/// Reasoning items a reasoning model returned with its tool calls, by the
/// id of the reply's first call: when the conversation sends that call
/// back, its reasoning goes in front of it, as the API asks for reasoning
/// that led to a function call. Shared by the provider's model switches.
/// The reply carries the items too (`ModelReply::thinking`), so the
/// session log keeps them and a resumed session sends them from there.
#[derive(Debug, Default)]
pub(crate) struct ReasoningMemory {
    entries: Mutex<VecDeque<(String, Vec<ReplayedReasoning>)>>,
}

impl ReasoningMemory {
    /// Keeps `items` for the reply whose first tool call is `call_id`.
    pub(crate) fn remember(&self, call_id: &str, items: Vec<ReplayedReasoning>) {
        if items.is_empty() || call_id.is_empty() {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries.retain(|(id, _)| id != call_id);
        if entries.len() >= REASONING_MEMORY {
            entries.pop_front();
        }
        entries.push_back((call_id.to_owned(), items));
    }

    /// The reasoning items kept for the reply whose first call is `call_id`.
    pub(crate) fn recall(&self, call_id: &str) -> Vec<ReplayedReasoning> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries
            .iter()
            .find(|(id, _)| id == call_id)
            .map(|(_, items)| items.clone())
            .unwrap_or_default()
    }
}

/// Builds the body of one streaming Responses request.
pub(crate) fn request_body(
    settings: &ProviderSettings,
    request: &ModelRequest,
    reasoning: &ReasoningMemory,
) -> responses::Request {
    // `/model NAME` names the model per request; otherwise the configured one.
    let model = request.model.as_ref().unwrap_or(&settings.model);
    let mut input = Vec::new();
    for message in &request.messages {
        push_items(&mut input, message, reasoning);
    }
    let tools: Vec<responses::Tool> = request
        .tools
        .iter()
        .map(|tool| responses::Tool {
            kind: Function::Function,
            name: tool.name.clone(),
            description: tool.description.clone(),
            strict: false,
            parameters: tool.input_schema.clone(),
        })
        .collect();
    let offers_tools = !tools.is_empty();
    responses::Request {
        model: model.clone(),
        input,
        tools,
        tool_choice: offers_tools.then_some(ToolChoice::Auto),
        parallel_tool_calls: offers_tools.then_some(true),
        // Nothing is kept on OpenAI's side: every request carries the whole
        // conversation, reasoning included (encrypted), as Codex does.
        store: false,
        stream: true,
        include: if is_reasoning_model(model) {
            vec!["reasoning.encrypted_content"]
        } else {
            Vec::new()
        },
        max_output_tokens: settings.max_tokens,
        temperature: settings.temperature.map(f64::from),
        // Structured output (`dsh exec --output-schema`), in the shape and
        // key order Codex sends: the final answer is JSON following the schema.
        text: settings
            .output_schema
            .as_ref()
            .map(|schema| responses::TextOptions {
                format: responses::TextFormat::JsonSchema {
                    strict: true,
                    schema: schema.clone(),
                    name: "codex_output_schema",
                },
            }),
    }
}

fn text_message(role: Role, text: &str) -> InputItem {
    let text = text.to_owned();
    let part = match role {
        Role::Assistant => ContentPart::OutputText { text },
        Role::Developer | Role::User => ContentPart::InputText { text: Some(text) },
    };
    InputItem::Item(Item::Message {
        role,
        content: vec![part],
    })
}

fn push_items(input: &mut Vec<InputItem>, message: &Message, reasoning: &ReasoningMemory) {
    match message {
        Message::System { content } => input.push(text_message(Role::Developer, content)),
        Message::User { content } => input.push(text_message(Role::User, content)),
        Message::Assistant {
            content,
            tool_calls,
            thinking,
        } => {
            // The model's own order: reasoning, then text, then calls. The
            // reasoning items the session log kept (a resumed session), else
            // the ones remembered; only Responses reasoning items.
            let logged: Vec<_> = thinking
                .iter()
                .flatten()
                .filter(|item| item["type"] == "reasoning")
                .cloned()
                .map(InputItem::Logged)
                .collect();
            if logged.is_empty() {
                let kept = tool_calls
                    .first()
                    .map(|first| reasoning.recall(&first.id))
                    .unwrap_or_default();
                input.extend(kept.into_iter().map(InputItem::Reasoning));
            } else {
                input.extend(logged);
            }
            if !content.is_empty() {
                input.push(text_message(Role::Assistant, content));
            }
            input.extend(tool_calls.iter().map(|call| {
                InputItem::Item(Item::FunctionCall {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    arguments: arguments_string(&call.arguments),
                })
            }));
        }
        Message::Tool {
            tool_call_id,
            content,
            blocks,
            ..
        } => {
            // An MCP result of several text blocks stays blocks
            // (`input_text` items); one block is its text.
            let output = match blocks {
                Some(blocks) if blocks.len() > 1 => Output::Parts(
                    blocks
                        .iter()
                        .map(|block| ContentPart::InputText {
                            text: Some(block.text().to_owned()),
                        })
                        .collect(),
                ),
                Some(_) | None => Output::Text(content.clone()),
            };
            input.push(InputItem::Item(Item::FunctionCallOutput {
                call_id: tool_call_id.clone(),
                output,
            }));
        }
    }
}

impl ResponsesUsage {
    /// Prompt tokens served from OpenAI's prompt cache.
    pub(crate) fn cached_tokens(&self) -> u64 {
        self.input_tokens_details.cached_tokens
    }

    /// Output tokens spent on reasoning.
    pub(crate) fn reasoning_tokens(&self) -> u64 {
        self.output_tokens_details.reasoning_tokens
    }
}

impl From<ResponsesUsage> for TokenUsage {
    fn from(usage: ResponsesUsage) -> Self {
        // OpenAI's `input_tokens` already include the cached ones, as
        // dsh's do; the API reports no cache writes (caching is automatic).
        TokenUsage {
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cache_read_input_tokens: usage.cached_tokens(),
            cache_creation_input_tokens: 0,
        }
    }
}

/// The category of an OpenAI error `code` (or `type`), when it says more
/// than the HTTP status: a 429 `insufficient_quota` is a billing problem
/// that no retry fixes, not a rate limit.
pub(crate) fn category_of_code(code: &str) -> Option<FailureCategory> {
    match code {
        "insufficient_quota" | "billing_hard_limit_reached" | "billing_not_active" => {
            Some(FailureCategory::BillingError)
        }
        "rate_limit_exceeded" | "rate_limit_error" | "tokens" | "requests" => {
            Some(FailureCategory::RateLimit)
        }
        "invalid_api_key" | "invalid_authentication" | "authentication_error" => {
            Some(FailureCategory::AuthenticationFailed)
        }
        "server_error" | "server_is_overloaded" | "slow_down" | "overloaded" => {
            Some(FailureCategory::ServerError)
        }
        "invalid_request_error"
        | "invalid_prompt"
        | "context_length_exceeded"
        | "model_not_found"
        | "unsupported_parameter"
        | "invalid_value" => Some(FailureCategory::InvalidRequest),
        _ => None,
    }
}

/// The error code of an OpenAI error body: its `code` when that names a
/// category dsh knows, else its `type`.
pub(crate) fn error_code(body: &str) -> Option<String> {
    let parsed = crate::api::ErrorBody::parse(body)?;
    // The `error` object when there is one (of any type), else the top.
    let fields = match parsed.error {
        Some(error) => error.ok().unwrap_or_default(),
        None => parsed.top,
    };
    let code = fields.code.and_then(Loose::ok);
    let kind = fields.kind.and_then(Loose::ok);
    match (code, kind) {
        (Some(code), _) if category_of_code(&code).is_some() => Some(code),
        (_, Some(kind)) => Some(kind),
        (Some(code), None) => Some(code),
        (None, None) => None,
    }
}

/// A function call being streamed.
#[derive(Debug, Default)]
struct PartialCall {
    item_id: String,
    call_id: String,
    name: String,
    arguments: String,
}

/// One streamed output item, by its `output_index`.
#[derive(Debug)]
enum Streamed {
    /// An assistant message; whether any of its text arrived as deltas.
    Message { streamed: bool },
    /// A function call.
    Call(PartialCall),
    /// A reasoning item; once done, what of it goes back (`None` while
    /// streaming, or when it has no encrypted content to go back with).
    Reasoning(Option<ReplayedReasoning>),
    /// Anything else (web search calls, …): not dsh's.
    Other,
}

/// Accumulates Responses stream events into a reply.
#[derive(Debug, Default)]
pub(crate) struct ResponsesAccumulator {
    text: String,
    items: BTreeMap<u64, Streamed>,
    /// `item_id` → `output_index`, for events that name only the item.
    ids: HashMap<String, u64>,
    usage: Option<ResponsesUsage>,
    completed: bool,
    /// The text held in finished reasoning items (summaries, encrypted
    /// content), for the reply limit.
    reasoning_bytes: usize,
    /// Where the reply's reasoning is kept for the next requests.
    reasoning: Option<Arc<ReasoningMemory>>,
}

impl ResponsesAccumulator {
    /// Applies one event's data.
    fn apply(&mut self, data: &str, sink: &mut dyn StreamSink) -> Result<Progress, EventError> {
        let data = data.trim();
        // Not part of the Responses stream, but harmless from gateways.
        if data.is_empty() || data == "[DONE]" {
            return Ok(Progress::More);
        }
        let event: Event = match serde_json::from_str(data) {
            Ok(event) => event,
            // An object without a `type` is no event: skipped, as before.
            Err(_) if serde_json::from_str::<EventType>(data).is_ok_and(|at| at.kind.is_none()) => {
                return Ok(Progress::More);
            }
            Err(error) => {
                return Err(EventError::from(format!(
                    "malformed stream event ({error}): {}",
                    crate::transport::excerpt(data)
                )));
            }
        };
        match event {
            Event::ItemAdded {
                output_index: Some(index),
                item: Some(item),
            } => self.item_added(index, &item),
            Event::ItemDone {
                output_index: Some(index),
                item: Some(item),
            } => self.item_done(index, item, sink),
            Event::TextDelta {
                output_index,
                item_id,
                delta: Some(delta),
            } if !delta.is_empty() => {
                if let Some(index) = self.index_of(output_index, item_id.as_deref()) {
                    let item = self
                        .items
                        .entry(index)
                        .or_insert(Streamed::Message { streamed: false });
                    if let Streamed::Message { streamed } = item {
                        *streamed = true;
                    }
                }
                sink.text_delta(&delta);
                self.text.push_str(&delta);
            }
            Event::ArgumentsDelta {
                output_index,
                item_id,
                delta: Some(delta),
            } => {
                if let Some(call) = self.call_mut(output_index, item_id.as_deref()) {
                    call.arguments.push_str(&delta);
                }
            }
            Event::ArgumentsDone {
                output_index,
                item_id,
                arguments: Some(arguments),
            } => {
                if let Some(call) = self.call_mut(output_index, item_id.as_deref()) {
                    call.arguments = arguments;
                }
            }
            Event::Completed { response } => {
                self.complete(response.unwrap_or_default(), sink);
                return Ok(Progress::Done);
            }
            Event::Incomplete { response } => {
                let response = response.unwrap_or_default();
                let reason = response
                    .incomplete_details
                    .as_ref()
                    .and_then(|details| details.reason.as_deref())
                    .unwrap_or("unknown");
                tracing::warn!("the response stopped incomplete ({reason})");
                self.complete(response, sink);
                return Ok(Progress::Done);
            }
            Event::Failed { response } => {
                let error = response
                    .and_then(|response| response.error)
                    .unwrap_or_default();
                return Err(error_event(error.code.as_deref(), error.message.as_deref()));
            }
            Event::Error { code, message } => {
                return Err(error_event(code.as_deref(), message.as_deref()));
            }
            // Without the index, item or delta they need; response.created,
            // in_progress, content_part.*, reasoning summaries,
            // output_text.done, …: nothing dsh needs.
            Event::ItemAdded { .. }
            | Event::ItemDone { .. }
            | Event::TextDelta { .. }
            | Event::ArgumentsDelta { .. }
            | Event::ArgumentsDone { .. }
            | Event::Other => {}
        }
        Ok(Progress::More)
    }

    /// The finished response: its usage, and the items of a server that
    /// streamed none.
    fn complete(&mut self, response: Response, sink: &mut dyn StreamSink) {
        if let Some(usage) = response.usage {
            self.usage = Some(usage);
        }
        if self.items.is_empty()
            && let Some(output) = response.output
        {
            for (index, item) in output.into_iter().enumerate() {
                let index = index as u64;
                self.item_added(index, &item);
                self.item_done(index, item, sink);
            }
        }
        self.completed = true;
    }

    fn index_of(&self, index: Option<u64>, item_id: Option<&str>) -> Option<u64> {
        index.or_else(|| item_id.and_then(|id| self.ids.get(id).copied()))
    }

    fn call_mut(&mut self, index: Option<u64>, item_id: Option<&str>) -> Option<&mut PartialCall> {
        let index = self.index_of(index, item_id)?;
        match self.items.get_mut(&index) {
            Some(Streamed::Call(call)) => Some(call),
            Some(Streamed::Message { .. } | Streamed::Reasoning(_) | Streamed::Other) | None => {
                None
            }
        }
    }

    fn item_added(&mut self, index: u64, item: &Loose<OutputItem>) {
        let Loose::Is(item) = item else {
            self.items.entry(index).or_insert(Streamed::Other);
            return;
        };
        let owned = |text: Option<&Loose<String>>| text_of(text).unwrap_or_default().to_owned();
        let id = item.id().unwrap_or_default().to_owned();
        if !id.is_empty() {
            self.ids.insert(id.clone(), index);
        }
        let entry = match item {
            OutputItem::Message { .. } => Streamed::Message { streamed: false },
            OutputItem::FunctionCall {
                call_id,
                name,
                arguments,
                ..
            } => Streamed::Call(PartialCall {
                item_id: id,
                call_id: owned(call_id.as_ref()),
                name: owned(name.as_ref()),
                arguments: owned(arguments.as_ref()),
            }),
            OutputItem::Reasoning { .. } => Streamed::Reasoning(None),
            OutputItem::Other => Streamed::Other,
        };
        self.items.entry(index).or_insert(entry);
    }

    fn item_done(&mut self, index: u64, item: Loose<OutputItem>, sink: &mut dyn StreamSink) {
        if !self.items.contains_key(&index) {
            self.item_added(index, &item);
        }
        let (Some(entry), Loose::Is(item)) = (self.items.get_mut(&index), item) else {
            return;
        };
        match (entry, item) {
            (Streamed::Message { streamed }, item) => {
                // Text the server did not stream arrives whole here.
                if !*streamed {
                    *streamed = true;
                    let text = item.message_text();
                    if !text.is_empty() {
                        sink.text_delta(&text);
                        self.text.push_str(&text);
                    }
                }
            }
            (
                Streamed::Call(call),
                OutputItem::FunctionCall {
                    call_id,
                    name,
                    arguments,
                    ..
                },
            ) => {
                // The finished item is authoritative.
                if let Some(call_id) = text_of(call_id.as_ref()).filter(|id| !id.is_empty()) {
                    call.call_id = call_id.to_owned();
                }
                if let Some(name) = text_of(name.as_ref()).filter(|name| !name.is_empty()) {
                    call.name = name.to_owned();
                }
                if let Some(arguments) = text_of(arguments.as_ref()) {
                    call.arguments = arguments.to_owned();
                }
            }
            (
                Streamed::Reasoning(kept),
                OutputItem::Reasoning {
                    summary,
                    encrypted_content,
                    ..
                },
            ) => {
                // Only an item with encrypted content can be read again
                // by the API without storage.
                let replayed = text_of(encrypted_content.as_ref())
                    .filter(|content| !content.is_empty())
                    .map(|content| ReplayedReasoning {
                        summary: summary.unwrap_or_else(|| serde_json::json!([])),
                        encrypted_content: content.to_owned(),
                    });
                let held = replayed.as_ref().map_or(0, reasoning_bytes);
                if let Some(earlier) = std::mem::replace(kept, replayed) {
                    self.reasoning_bytes = self
                        .reasoning_bytes
                        .saturating_sub(reasoning_bytes(&earlier));
                }
                self.reasoning_bytes = self.reasoning_bytes.saturating_add(held);
            }
            // A finished item of another type than it started as: the
            // start decides, as before.
            (Streamed::Call(_) | Streamed::Reasoning(_) | Streamed::Other, _) => {}
        }
    }

    /// The finished reply, and the reasoning items to send back with its
    /// tool calls (only those the API can read again without storage:
    /// the ones with encrypted content).
    pub(crate) fn finish(self) -> (ModelReply, Vec<ReplayedReasoning>) {
        let mut tool_calls = Vec::new();
        let mut reasoning = Vec::new();
        for (index, item) in self.items {
            match item {
                Streamed::Call(call) => tool_calls.push(ToolCall {
                    id: if !call.call_id.is_empty() {
                        call.call_id
                    } else if !call.item_id.is_empty() {
                        call.item_id
                    } else {
                        format!("call_{}", index + 1)
                    },
                    name: call.name,
                    arguments: parse_arguments(&call.arguments),
                }),
                Streamed::Reasoning(Some(item)) => reasoning.push(item),
                Streamed::Reasoning(None) | Streamed::Message { .. } | Streamed::Other => {}
            }
        }
        // Kept in the session log too (through the reply), so a resumed
        // session sends them back as the memory does.
        let thinking = (!tool_calls.is_empty() && !reasoning.is_empty()).then(|| {
            reasoning
                .iter()
                .filter_map(|item| serde_json::to_value(item).ok())
                .collect()
        });
        let reply = ModelReply {
            text: self.text,
            tool_calls,
            usage: self.usage.map(Into::into),
            thinking,
        };
        (reply, reasoning)
    }
}

/// The Responses API for the shared transport: its URL, bearer
/// authentication, request body, events and error codes. Clones share the
/// reasoning memory, so a model switch keeps it.
#[derive(Debug, Clone, Default)]
pub(crate) struct ResponsesApi {
    reasoning: Arc<ReasoningMemory>,
}

impl WireApi for ResponsesApi {
    type Accumulator = ResponsesAccumulator;
    type Body = responses::Request;

    fn url(&self, base_url: &str) -> String {
        format!("{}/responses", base_url.trim_end_matches('/'))
    }

    fn request_body(
        &self,
        settings: &ProviderSettings,
        request: &ModelRequest,
    ) -> responses::Request {
        request_body(settings, request, &self.reasoning)
    }

    fn accumulator(&self) -> ResponsesAccumulator {
        ResponsesAccumulator {
            reasoning: Some(Arc::clone(&self.reasoning)),
            ..ResponsesAccumulator::default()
        }
    }

    fn error_body(&self, body: &str) -> ErrorBody {
        let mut error = generic_error_body(body);
        // OpenAI's `code` is the precise one (`insufficient_quota`,
        // `rate_limit_exceeded`); its `type` is sometimes only `requests`.
        if let Some(code) = error_code(body) {
            error.kind = Some(code);
        }
        error
    }

    fn category(&self, status: u16, body: &ErrorBody) -> FailureCategory {
        let from_status = FailureCategory::from_status(status);
        match from_status {
            // A server failure stays one whatever its body says.
            FailureCategory::ServerError => from_status,
            FailureCategory::MissingKey
            | FailureCategory::AuthenticationFailed
            | FailureCategory::BillingError
            | FailureCategory::RateLimit
            | FailureCategory::InvalidRequest
            | FailureCategory::Unknown => body
                .kind
                .as_deref()
                .and_then(category_of_code)
                .unwrap_or(from_status),
        }
    }

    fn whole_reply(&self, bytes: &[u8], sink: &mut dyn StreamSink) -> Result<ModelReply, String> {
        let response: Response = serde_json::from_slice(bytes)
            .map_err(|error| format!("malformed response ({error})"))?;
        let mut accumulator = self.accumulator();
        accumulator.complete(response, sink);
        Ok(accumulator.into_reply())
    }
}

impl EventAccumulator for ResponsesAccumulator {
    fn on_event(&mut self, data: &str, sink: &mut dyn StreamSink) -> Result<Progress, EventError> {
        self.apply(data, sink)
    }

    fn text(&self) -> &str {
        &self.text
    }

    fn size(&self) -> usize {
        let held = self.items.values().fold(0usize, |size, item| {
            let held = match item {
                Streamed::Call(call) => {
                    call.item_id.len() + call.call_id.len() + call.name.len() + call.arguments.len()
                }
                Streamed::Message { .. } | Streamed::Reasoning(_) | Streamed::Other => 0,
            };
            size.saturating_add(crate::transport::PART_BYTES + held)
        });
        held.saturating_add(self.text.len())
            .saturating_add(self.reasoning_bytes)
    }

    fn started(&self) -> bool {
        !self.text.is_empty()
            || self
                .items
                .values()
                .any(|item| matches!(item, Streamed::Call(_)))
    }

    fn finished(&self) -> bool {
        self.completed
    }

    fn missing_end(&self) -> &'static str {
        "no response.completed event"
    }

    fn into_reply(self) -> ModelReply {
        if let Some(usage) = &self.usage {
            tracing::debug!(
                input = usage.input_tokens,
                cached = usage.cached_tokens(),
                output = usage.output_tokens,
                reasoning = usage.reasoning_tokens(),
                "responses usage"
            );
        }
        let memory = self.reasoning.clone();
        let (reply, reasoning) = self.finish();
        if let (Some(memory), Some(first)) = (memory, reply.tool_calls.first()) {
            memory.remember(&first.id, reasoning);
        }
        reply
    }
}

/// The bytes a kept reasoning item holds, for the reply limit.
fn reasoning_bytes(item: &ReplayedReasoning) -> usize {
    // The summary as the JSON text it goes back as.
    let summary = serde_json::to_string(&item.summary).map_or(0, |text| text.len());
    item.encrypted_content.len().saturating_add(summary)
}

fn error_event(code: Option<&str>, message: Option<&str>) -> EventError {
    let message = message.unwrap_or("no message").to_owned();
    let category = code
        .and_then(category_of_code)
        .unwrap_or(FailureCategory::Unknown);
    let code_text = code.map(|code| format!(" ({code})")).unwrap_or_default();
    EventError {
        message: format!("the provider reported an error mid-stream{code_text}: {message}"),
        failure: Some(ProviderFailure {
            category,
            status: None,
            message,
            retry_after: None,
            gateway: None,
        }),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// The body as the JSON it is sent as, keys in wire order.
    fn request_body(
        settings: &ProviderSettings,
        request: &ModelRequest,
        reasoning: &ReasoningMemory,
    ) -> Value {
        serde_json::to_value(super::request_body(settings, request, reasoning)).unwrap()
    }
    use dsh_model::NoStream;
    use dsh_protocol::ToolSpec;
    use pretty_assertions::assert_eq;

    fn request(messages: Vec<Message>, model: &str) -> ModelRequest {
        ModelRequest {
            turn: 1,
            step: 1,
            messages,
            tools: vec![ToolSpec {
                name: "bash".into(),
                description: "runs".into(),
                input_schema: json!({"type": "object"}),
            }],
            model: Some(model.into()),
        }
    }

    fn feed(accumulator: &mut ResponsesAccumulator, events: &[Value]) {
        for event in events {
            accumulator
                .on_event(&event.to_string(), &mut NoStream)
                .unwrap();
        }
    }

    #[test]
    fn an_output_schema_becomes_the_text_format_codex_sends() {
        let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
        let settings = ProviderSettings {
            output_schema: Some(schema.clone()),
            ..ProviderSettings::default()
        };
        let messages = vec![Message::User {
            content: "hi".into(),
        }];
        let memory = ReasoningMemory::default();
        let body = request_body(&settings, &request(messages.clone(), "m"), &memory);
        assert_eq!(
            body["text"],
            json!({"format": {"type": "json_schema", "strict": true, "schema": schema, "name": "codex_output_schema"}})
        );
        let keys: Vec<&String> = body["text"]["format"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["type", "strict", "schema", "name"]);
        // Without a schema the body has no `text` at all.
        let plain = request_body(
            &ProviderSettings::default(),
            &request(messages, "m"),
            &memory,
        );
        assert!(plain.get("text").is_none(), "{plain}");
    }

    #[test]
    fn messages_map_to_input_items() {
        let memory = ReasoningMemory::default();
        memory.remember(
            "call_1",
            vec![ReplayedReasoning {
                summary: json!([]),
                encrypted_content: "E".into(),
            }],
        );
        let messages = vec![
            Message::System {
                content: "sys".into(),
            },
            Message::User {
                content: "hi".into(),
            },
            Message::Assistant {
                content: "looking".into(),
                thinking: None,
                tool_calls: vec![
                    ToolCall {
                        id: "call_1".into(),
                        name: "bash".into(),
                        arguments: json!({"command": "ls"}),
                    },
                    ToolCall {
                        id: "call_2".into(),
                        name: "bash".into(),
                        arguments: Value::String("{not json".into()),
                    },
                ],
            },
            Message::Tool {
                tool_call_id: "call_1".into(),
                content: "a".into(),
                is_error: false,
                blocks: None,
            },
            Message::Tool {
                tool_call_id: "call_2".into(),
                content: "b".into(),
                is_error: false,
                blocks: None,
            },
            Message::Assistant {
                content: "done".into(),
                tool_calls: vec![],
                thinking: None,
            },
        ];
        let settings = ProviderSettings {
            max_tokens: Some(99),
            ..ProviderSettings::default()
        };
        let body = request_body(&settings, &request(messages, "gpt-5"), &memory);
        assert_eq!(
            body.to_string(),
            json!({
                "model": "gpt-5",
                "input": [
                    {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "sys"}]},
                    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
                    {"type": "reasoning", "summary": [], "encrypted_content": "E"},
                    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "looking"}]},
                    {"type": "function_call", "call_id": "call_1", "name": "bash", "arguments": "{\"command\":\"ls\"}"},
                    {"type": "function_call", "call_id": "call_2", "name": "bash", "arguments": "{not json"},
                    {"type": "function_call_output", "call_id": "call_1", "output": "a"},
                    {"type": "function_call_output", "call_id": "call_2", "output": "b"},
                    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]},
                ],
                "tools": [{"type": "function", "name": "bash", "description": "runs", "strict": false,
                           "parameters": {"type": "object"}}],
                "tool_choice": "auto",
                "parallel_tool_calls": true,
                "store": false,
                "stream": true,
                "include": ["reasoning.encrypted_content"],
                "max_output_tokens": 99,
            })
            .to_string()
        );
    }

    #[test]
    fn non_reasoning_models_get_no_include_and_empty_tools_are_omitted() {
        let mut req = request(vec![], "gpt-4.1-mini");
        req.tools.clear();
        let body = request_body(
            &ProviderSettings::default(),
            &req,
            &ReasoningMemory::default(),
        );
        assert_eq!(body.get("include"), None);
        assert_eq!(body.get("tools"), None);
        assert_eq!(body.get("tool_choice"), None);
        assert!(is_reasoning_model("o4-mini"));
        assert!(is_reasoning_model("gpt-5-codex"));
        assert!(!is_reasoning_model("gpt-5-chat-latest"));
        assert!(!is_reasoning_model("gpt-4o"));
    }

    #[test]
    fn streamed_text_calls_reasoning_and_usage_accumulate() {
        let mut accumulator = ResponsesAccumulator::default();
        feed(
            &mut accumulator,
            &[
                json!({"type": "response.created", "response": {"id": "r"}}),
                json!({"type": "response.output_item.added", "output_index": 0,
                       "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
                json!({"type": "response.output_item.done", "output_index": 0,
                       "item": {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "ENC"}}),
                json!({"type": "response.output_item.added", "output_index": 1,
                       "item": {"type": "message", "id": "m", "role": "assistant", "content": []}}),
                json!({"type": "response.output_text.delta", "item_id": "m", "output_index": 1, "delta": "Hel"}),
                json!({"type": "response.output_text.delta", "item_id": "m", "output_index": 1, "delta": "lo"}),
                json!({"type": "response.output_item.done", "output_index": 1,
                       "item": {"type": "message", "id": "m", "content": [{"type": "output_text", "text": "Hello"}]}}),
                json!({"type": "response.output_item.added", "output_index": 2,
                       "item": {"type": "function_call", "id": "fc_a", "call_id": "call_a", "name": "bash", "arguments": ""}}),
                json!({"type": "response.output_item.added", "output_index": 3,
                       "item": {"type": "function_call", "id": "fc_b", "call_id": "call_b", "name": "read", "arguments": ""}}),
                json!({"type": "response.function_call_arguments.delta", "item_id": "fc_b", "delta": "{\"path\":"}),
                json!({"type": "response.function_call_arguments.delta", "item_id": "fc_a", "output_index": 2, "delta": "{\"command\":\"ls\"}"}),
                json!({"type": "response.function_call_arguments.delta", "item_id": "fc_b", "delta": "\"x\"}"}),
            ],
        );
        assert!(!accumulator.finished());
        let done = json!({"type": "response.completed", "response": {"usage": {
            "input_tokens": 100, "input_tokens_details": {"cached_tokens": 64},
            "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 12}}}});
        assert_eq!(
            accumulator
                .on_event(&done.to_string(), &mut NoStream)
                .unwrap(),
            Progress::Done
        );
        let usage = accumulator.usage.unwrap();
        assert_eq!((usage.cached_tokens(), usage.reasoning_tokens()), (64, 12));
        let (reply, reasoning) = accumulator.finish();
        assert_eq!(reply.text, "Hello");
        // The reply (and so the session log) holds the same items.
        assert_eq!(
            reply.thinking,
            Some(vec![
                json!({"type": "reasoning", "summary": [], "encrypted_content": "ENC"})
            ])
        );
        assert_eq!(
            reply.tool_calls,
            vec![
                ToolCall {
                    id: "call_a".into(),
                    name: "bash".into(),
                    arguments: json!({"command": "ls"})
                },
                ToolCall {
                    id: "call_b".into(),
                    name: "read".into(),
                    arguments: json!({"path": "x"})
                },
            ]
        );
        assert_eq!(
            reply.usage,
            Some(TokenUsage {
                input_tokens: 100,
                output_tokens: 20,
                cache_read_input_tokens: 64,
                cache_creation_input_tokens: 0,
            })
        );
        assert_eq!(
            reasoning,
            vec![ReplayedReasoning {
                summary: json!([]),
                encrypted_content: "ENC".into(),
            }]
        );
    }

    #[test]
    fn items_only_in_the_completed_response_are_read() {
        let mut accumulator = ResponsesAccumulator::default();
        feed(
            &mut accumulator,
            &[
                json!({"type": "response.completed", "response": {"output": [
                    {"type": "message", "content": [{"type": "output_text", "text": "hi"}]},
                    {"type": "function_call", "call_id": "c", "name": "bash", "arguments": "{}"},
                    {"type": "reasoning", "summary": []},
                ]}}),
            ],
        );
        let (reply, reasoning) = accumulator.finish();
        assert_eq!(reply.text, "hi");
        assert_eq!(reply.tool_calls.len(), 1);
        // No encrypted content: nothing the API could read back.
        assert!(reasoning.is_empty());
    }

    #[test]
    fn error_events_are_typed() {
        let mut accumulator = ResponsesAccumulator::default();
        let failed = json!({"type": "response.failed", "response": {"error": {
            "code": "rate_limit_exceeded", "message": "slow down"}}});
        let error = accumulator
            .on_event(&failed.to_string(), &mut NoStream)
            .unwrap_err();
        assert!(error.message.contains("slow down"), "{}", error.message);
        assert_eq!(error.failure.unwrap().category, FailureCategory::RateLimit);
        let error = accumulator
            .on_event(
                r#"{"type":"error","code":"insufficient_quota","message":"pay up"}"#,
                &mut NoStream,
            )
            .unwrap_err();
        assert_eq!(
            error.failure.unwrap().category,
            FailureCategory::BillingError
        );
        let error = accumulator.on_event("{nope", &mut NoStream).unwrap_err();
        assert!(error.message.contains("malformed"), "{}", error.message);
        assert!(error.failure.is_none());
    }

    fn category_of_error_body(body: &str) -> Option<FailureCategory> {
        error_code(body).as_deref().and_then(category_of_code)
    }

    #[test]
    fn error_bodies_refine_the_status() {
        assert_eq!(
            category_of_error_body(
                r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#
            ),
            Some(FailureCategory::BillingError)
        );
        assert_eq!(
            category_of_error_body(
                r#"{"error":{"message":"x","type":"requests","code":"rate_limit_exceeded"}}"#
            ),
            Some(FailureCategory::RateLimit)
        );
        assert_eq!(category_of_error_body("not json"), None);
    }

    #[test]
    fn reasoning_memory_is_bounded_and_keyed_by_first_call() {
        let memory = ReasoningMemory::default();
        let item = |index: usize| ReplayedReasoning {
            summary: json!([]),
            encrypted_content: index.to_string(),
        };
        for index in 0..=REASONING_MEMORY {
            memory.remember(&format!("c{index}"), vec![item(index)]);
        }
        assert!(memory.recall("c0").is_empty());
        assert_eq!(memory.recall("c1"), vec![item(1)]);
        memory.remember("", vec![item(1)]);
        assert!(memory.recall("").is_empty());
    }

    #[test]
    fn error_codes_come_from_the_error_object_or_the_top() {
        let code = |body: &str| error_code(body);
        assert_eq!(
            code(r#"{"error":{"code":"insufficient_quota","type":"requests"}}"#).as_deref(),
            Some("insufficient_quota")
        );
        assert_eq!(
            code(r#"{"error":{"code":"odd","type":"invalid_request_error"}}"#).as_deref(),
            Some("invalid_request_error")
        );
        assert_eq!(code(r#"{"code":"odd"}"#).as_deref(), Some("odd"));
        assert_eq!(code(r#"{"error":"text","code":"odd"}"#), None);
        assert_eq!(code("not json"), None);
    }

    /// A finished message item's text: `text` parts, else `refusal`; keys
    /// of another type read as absent, an item that is no object (or has
    /// no `type`) as no item of dsh's.
    #[test]
    fn output_items_read_what_they_can() {
        let read = |item: Value| serde_json::from_value::<Loose<OutputItem>>(item).unwrap();
        let item = read(json!({"type": "message", "content": [
            {"type": "output_text", "text": "Hi"},
            {"type": "refusal", "refusal": " no"},
            {"type": "output_text", "text": 5, "refusal": "skipped"},
            "odd",
        ]}));
        assert_eq!(item.ok().unwrap().message_text(), "Hi no");
        let Loose::Is(OutputItem::FunctionCall {
            id, call_id, name, ..
        }) = read(json!({"type": "function_call", "id": ["x"], "call_id": 7, "name": "bash"}))
        else {
            panic!("a function call");
        };
        assert_eq!(text_of(id.as_ref()), None);
        assert_eq!(text_of(call_id.as_ref()), None);
        assert_eq!(text_of(name.as_ref()), Some("bash"));
        assert!(read(json!("odd")).ok().is_none());
        assert!(read(json!({"id": "x"})).ok().is_none());
        assert!(matches!(
            read(json!({"type": "web_search_call", "id": "ws"})),
            Loose::Is(OutputItem::Other)
        ));
    }

    /// Lines a gateway may add, and items of the wrong shape, are skipped;
    /// a known event whose fields have the wrong type is still an error.
    #[test]
    fn odd_events_are_skipped_and_bad_known_ones_refused() {
        let mut accumulator = ResponsesAccumulator::default();
        feed(
            &mut accumulator,
            &[
                json!({"no_type": true}),
                json!({"type": "response.created", "response": {"usage": "odd"}}),
                json!({"type": "response.output_item.added", "output_index": 0, "item": 5}),
                json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": 3}}),
                json!({"type": "response.output_item.added", "output_index": 1,
                       "item": {"type": "reasoning", "id": "rs"}}),
                json!({"type": "response.output_item.done", "output_index": 1,
                       "item": {"type": "reasoning", "summary": [{"type": "summary_text", "text": "s"}],
                                "encrypted_content": 9}}),
                json!({"type": "response.output_text.delta", "output_index": 2, "delta": "ok"}),
            ],
        );
        assert_eq!(accumulator.text, "ok");
        // A reasoning item without encrypted content (as a string) holds nothing.
        assert_eq!(accumulator.reasoning_bytes, 0);
        let error = accumulator
            .on_event(
                r#"{"type":"response.output_text.delta","delta":5}"#,
                &mut NoStream,
            )
            .unwrap_err();
        assert!(error.message.contains("malformed"), "{}", error.message);
        let error = accumulator
            .on_event(
                r#"{"type":"response.completed","response":5}"#,
                &mut NoStream,
            )
            .unwrap_err();
        assert!(error.message.contains("malformed"), "{}", error.message);
    }
}
