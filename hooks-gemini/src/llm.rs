//! Translation between dsh's provider-neutral model request and reply and
//! the hook-facing `llm_request` / `llm_response` shapes of Gemini CLI 0.61.
//!
//! Gemini shows its model hooks a reduced view of the request: the model
//! name, the conversation as text only (`{"role": "user"|"model",
//! "content": TEXT}`, every text part of one content concatenated without a
//! separator, contents without text left out) and the sampling `config`.
//! There is no system instruction, no tool declaration and no `toolConfig`
//! in it. A reply is shown as `{"text", "candidates": [{"content": {"role":
//! "model", "parts": [TEXT...]}, "finishReason"?, "index": 0}],
//! "usageMetadata"}`, again text only.
//!
//! dsh's request is a list of typed messages, system prompt first. The
//! mapping onto Gemini's contents:
//! - the first `system` message is the system prompt: Gemini never shows
//!   its system instruction to hooks, so neither does dsh;
//! - `user` messages and later `system` messages (contexts added by hooks
//!   and plugins) are user-role text; consecutive ones form one content, as
//!   Gemini's session context and prompt are two text parts of one content;
//! - an `assistant` message with text is one `model` content; its tool
//!   calls are not text and are not shown;
//! - `tool` results are function responses in Gemini: no text, not shown,
//!   and they end the user-role content before them.
//!
//! The hook-facing answers are here too: what the model events read of a
//! hook's `hookSpecificOutput` ([`ModelOutput`]: an `llm_request` patch, an
//! `llm_response`, a `toolConfig`), and the stdin keys they send
//! ([`ModelFields`]).
//!
//! Everything here is pure: no I/O, no hooks.

use dsh_protocol::{Message, ModelReply, ModelRequest, TokenUsage};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use dsh_hooks::wire::lenient;

use crate::wire::{Each, TextPart};

/// Who said a message, in Gemini's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LlmRole {
    /// The user, and context added on the user's side.
    User,
    /// The model.
    Model,
}

/// One text-bearing content of the conversation, as hooks see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LlmMessage {
    /// Whose turn.
    pub role: LlmRole,
    /// The content's text parts, concatenated.
    pub content: String,
}

/// Gemini's hook-facing `llm_request`, keys in Gemini's order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LlmRequest {
    /// The model asked.
    pub model: String,
    /// The conversation, text only.
    pub messages: Vec<LlmMessage>,
    /// Sampling settings (`temperature`, `topP`, …) as the provider sends
    /// them; dsh's request carries none, so this is empty (see
    /// [`to_llm_request`]).
    pub config: SamplingConfig,
}

/// The sampling settings of a request shown to hooks: dsh's
/// provider-neutral request carries none, so Gemini's `config` is `{}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct SamplingConfig {}

/// Which dsh messages each hook-facing message stands for, so that a
/// hook's replacement can be put back where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MessageMap {
    slots: Vec<Slot>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Slot {
    role: LlmRole,
    /// Indices into the request's messages, ascending and consecutive.
    indices: Vec<usize>,
}

impl MessageMap {
    /// How many hook-facing messages the request produced.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether the request had no text-bearing message.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

/// The hook-facing view of `request`, and the map back. `model` is the
/// model's name when the request does not switch it.
pub fn to_llm_request(request: &ModelRequest, model: &str) -> (LlmRequest, MessageMap) {
    let mut messages: Vec<LlmMessage> = Vec::new();
    let mut slots: Vec<Slot> = Vec::new();
    // Whether the last content is a user-role one that may still grow.
    let mut open_user = false;
    for (index, message) in request.messages.iter().enumerate() {
        match message {
            Message::System { .. } if index == 0 => {}
            Message::System { content } | Message::User { content } => {
                match (open_user, messages.last_mut(), slots.last_mut()) {
                    (true, Some(last), Some(slot)) => {
                        last.content.push_str(content);
                        slot.indices.push(index);
                    }
                    _ => {
                        messages.push(LlmMessage {
                            role: LlmRole::User,
                            content: content.clone(),
                        });
                        slots.push(Slot {
                            role: LlmRole::User,
                            indices: vec![index],
                        });
                        open_user = true;
                    }
                }
            }
            Message::Assistant { content, .. } => {
                open_user = false;
                if !content.is_empty() {
                    messages.push(LlmMessage {
                        role: LlmRole::Model,
                        content: content.clone(),
                    });
                    slots.push(Slot {
                        role: LlmRole::Model,
                        indices: vec![index],
                    });
                }
            }
            Message::Tool { .. } => open_user = false,
        }
    }
    // Gemini leaves out contents without text: a user-role run whose texts
    // are all empty is not shown either.
    let (messages, slots) = messages
        .into_iter()
        .zip(slots)
        .filter(|(message, _)| !message.content.is_empty())
        .unzip();
    let llm = LlmRequest {
        model: request.model.clone().unwrap_or_else(|| model.to_owned()),
        messages,
        config: SamplingConfig {},
    };
    (llm, MessageMap { slots })
}

/// A hook's `llm_request` replacement (`hookSpecificOutput.llm_request`):
/// every field optional, as Gemini reads it.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct LlmRequestPatch {
    /// Another model for this request.
    #[serde(default)]
    pub model: Option<String>,
    /// Texts for the conversation's text-bearing contents, in order.
    #[serde(default)]
    pub messages: Option<Vec<LlmMessagePatch>>,
    /// Sampling settings.
    #[serde(default)]
    pub config: Option<Map<String, Value>>,
}

/// One message of a hook's replacement. Only its text is used: the role of
/// the content it replaces stays (Gemini keeps the content's role).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
pub struct LlmMessagePatch {
    /// The role the hook wrote; not used.
    #[serde(default)]
    pub role: Option<String>,
    /// The new text.
    #[serde(default)]
    pub content: String,
}

impl LlmRequestPatch {
    /// This patch with `later`'s fields laid over it: Gemini merges
    /// BeforeModel outputs field by field, later hooks winning.
    pub fn merged_with(self, later: LlmRequestPatch) -> LlmRequestPatch {
        LlmRequestPatch {
            model: later.model.or(self.model),
            messages: later.messages.or(self.messages),
            config: later.config.or(self.config),
        }
    }
}

/// What applying a patch did not carry over, for the record and the user.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PatchLeftovers {
    /// Sampling settings the hook set; dsh's provider-neutral request has
    /// no place for them, so they are not sent.
    pub config_keys: Vec<String>,
    /// Hook messages beyond the request's text-bearing contents: Gemini
    /// replaces texts in place and has no content for them either.
    pub extra_messages: usize,
}

impl PatchLeftovers {
    /// Whether everything the hook asked for was applied.
    pub fn is_empty(&self) -> bool {
        self.config_keys.is_empty() && self.extra_messages == 0
    }
}

/// `request` with a hook's patch applied, for this request only. The i-th
/// hook message replaces the text of the i-th text-bearing content: a
/// user-role run of several messages becomes one user message with that
/// text (Gemini collapses a content's text parts into one), a model
/// message keeps its tool calls. Contents past the hook's list stay.
pub fn apply_llm_request(
    request: &ModelRequest,
    map: &MessageMap,
    patch: &LlmRequestPatch,
) -> (ModelRequest, PatchLeftovers) {
    let mut leftovers = PatchLeftovers::default();
    if let Some(config) = &patch.config {
        leftovers.config_keys = config.keys().cloned().collect();
    }
    let mut out = request.clone();
    if let Some(model) = &patch.model {
        out.model = Some(model.clone());
    }
    let Some(replacements) = &patch.messages else {
        return (out, leftovers);
    };
    leftovers.extra_messages = replacements.len().saturating_sub(map.slots.len());
    // Replacement per original index: `Some(message)` at a slot's first
    // index, `None` at the indices it swallows.
    let mut replaced: Vec<Option<Option<Message>>> = vec![None; request.messages.len()];
    for (slot, patch) in map.slots.iter().zip(replacements) {
        let Some((&first, rest)) = slot.indices.split_first() else {
            continue;
        };
        let new = match (slot.role, request.messages.get(first)) {
            (
                LlmRole::Model,
                Some(Message::Assistant {
                    tool_calls,
                    thinking,
                    ..
                }),
            ) => Message::Assistant {
                content: patch.content.clone(),
                tool_calls: tool_calls.clone(),
                thinking: thinking.clone(),
            },
            (LlmRole::User | LlmRole::Model, _) => Message::User {
                content: patch.content.clone(),
            },
        };
        if let Some(entry) = replaced.get_mut(first) {
            *entry = Some(Some(new));
        }
        for &index in rest {
            if let Some(entry) = replaced.get_mut(index) {
                *entry = Some(None);
            }
        }
    }
    out.messages = request
        .messages
        .iter()
        .zip(replaced)
        .filter_map(|(message, replacement)| match replacement {
            None => Some(message.clone()),
            Some(new) => new,
        })
        .collect();
    (out, leftovers)
}

/// Gemini's hook-facing `llm_response`, keys in Gemini's order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LlmResponse {
    /// The chunk's text.
    pub text: String,
    /// One candidate.
    pub candidates: Vec<LlmCandidate>,
    /// Token counts.
    #[serde(rename = "usageMetadata")]
    pub usage_metadata: UsageMetadata,
}

/// One candidate of [`LlmResponse`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LlmCandidate {
    /// The candidate's text parts.
    pub content: LlmContent,
    /// `STOP` on the last chunk of a reply; absent on earlier chunks.
    #[serde(rename = "finishReason", skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// Always 0.
    pub index: u32,
}

/// The content of a candidate: text parts only.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LlmContent {
    /// Always `model`.
    pub role: LlmRole,
    /// Text parts (function calls are not shown).
    pub parts: Vec<String>,
}

/// Token counts as Gemini names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct UsageMetadata {
    /// Prompt tokens.
    #[serde(rename = "promptTokenCount")]
    pub prompt_token_count: u64,
    /// Reply tokens.
    #[serde(rename = "candidatesTokenCount")]
    pub candidates_token_count: u64,
    /// Their sum.
    #[serde(rename = "totalTokenCount")]
    pub total_token_count: u64,
}

impl From<Option<TokenUsage>> for UsageMetadata {
    fn from(usage: Option<TokenUsage>) -> Self {
        let usage = usage.unwrap_or_default();
        UsageMetadata {
            prompt_token_count: usage.input_tokens,
            candidates_token_count: usage.output_tokens,
            total_token_count: usage.input_tokens.saturating_add(usage.output_tokens),
        }
    }
}

/// The hook-facing view of a whole dsh reply, as Gemini shows its last
/// chunk: dsh hands hooks one chunk per reply (the complete reply), so it
/// carries the `STOP` finish reason. A reply without text has no parts
/// (Gemini's function-call-only chunk, `am_replace_response`).
pub fn to_llm_response(reply: &ModelReply) -> LlmResponse {
    let parts = if reply.text.is_empty() {
        Vec::new()
    } else {
        vec![reply.text.clone()]
    };
    LlmResponse {
        text: reply.text.clone(),
        candidates: vec![LlmCandidate {
            content: LlmContent {
                role: LlmRole::Model,
                parts,
            },
            finish_reason: Some("STOP".to_owned()),
            index: 0,
        }],
        usage_metadata: reply.usage.into(),
    }
}

/// A hook's `llm_response` (`hookSpecificOutput.llm_response`), read the
/// way Gemini reads a replacement: only the first candidate's parts count.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
pub struct LlmResponseWire {
    #[serde(default, deserialize_with = "crate::wire::first_object")]
    candidates: Option<CandidateWire>,
}

/// The first candidate of a hook's `llm_response`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
struct CandidateWire {
    #[serde(default, deserialize_with = "crate::wire::object")]
    content: Option<ContentWire>,
}

/// Its `content`: the parts.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
struct ContentWire {
    #[serde(default, deserialize_with = "dsh_hooks::wire::lenient")]
    parts: Option<Vec<TextPart>>,
}

impl LlmResponseWire {
    /// The replacement's text: the first candidate's parts joined, when it
    /// has any. `None` when there is no non-empty first candidate (Gemini
    /// then keeps the chunk). Parts may be strings or `{"text": …}`
    /// objects; other parts carry no text.
    pub fn text(&self) -> Option<String> {
        let parts = self.candidates.as_ref()?.content.as_ref()?.parts.as_ref()?;
        if parts.is_empty() {
            return None;
        }
        Some(parts.iter().filter_map(|part| part.0.as_deref()).collect())
    }

    /// A whole dsh reply from this response (a synthetic answer): its text,
    /// no tool calls (Gemini's hook responses are text only).
    pub fn reply(&self) -> Option<ModelReply> {
        self.text().map(|text| ModelReply {
            text,
            tool_calls: Vec::new(),
            usage: None,
            thinking: None,
        })
    }
}

/// The keys of a hook's `hookSpecificOutput` that the model events read,
/// each when it is an object (Gemini ignores anything else).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelOutput {
    /// BeforeModel's `llm_request` patch (`None` also when it is not of
    /// the patch's shape).
    pub llm_request: Option<LlmRequestPatch>,
    /// BeforeModel's synthetic or AfterModel's replacement `llm_response`.
    pub llm_response: Option<LlmResponseWire>,
    /// BeforeToolSelection's `toolConfig`.
    pub tool_config: Option<ToolConfig>,
}

/// A BeforeToolSelection hook's `toolConfig`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolConfig {
    /// `AUTO`, `ANY` or `NONE` (anything else reads as `AUTO`).
    #[serde(default, deserialize_with = "lenient")]
    mode: Option<String>,
    /// The names; entries that are not strings are skipped.
    #[serde(default, deserialize_with = "lenient")]
    allowed_function_names: Option<Vec<Each<String>>>,
}

impl ToolConfig {
    /// The mode asked for; `AUTO` when missing or unknown.
    pub fn mode(&self) -> CallingMode {
        self.mode
            .as_deref()
            .and_then(CallingMode::parse)
            .unwrap_or(CallingMode::Auto)
    }

    /// The function names given, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.allowed_function_names
            .iter()
            .flatten()
            .filter_map(|name| name.0.as_deref())
    }
}

/// The stdin keys of a model event after the common ones: `llm_request`,
/// and on AfterModel `llm_response`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelFields {
    /// The request as hooks see it.
    pub llm_request: LlmRequest,
    /// AfterModel's reply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm_response: Option<LlmResponse>,
}

/// Gemini's function-calling mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CallingMode {
    /// The model decides.
    Auto,
    /// The model must call one of the allowed functions.
    Any,
    /// No function calls.
    None,
}

impl CallingMode {
    pub(crate) fn parse(text: &str) -> Option<CallingMode> {
        match text {
            "AUTO" => Some(CallingMode::Auto),
            "ANY" => Some(CallingMode::Any),
            "NONE" => Some(CallingMode::None),
            _ => None,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use dsh_protocol::{ToolCall, ToolSpec};
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    /// A hook's `llm_request`, as the output reader reads it.
    fn read_patch(value: &Value) -> Option<LlmRequestPatch> {
        serde_json::from_value(value.clone()).ok()
    }

    /// A hook's `llm_response` replacement's text.
    fn response_text(value: &Value) -> Option<String> {
        LlmResponseWire::deserialize(value).ok()?.text()
    }

    /// The session context block of the captures (`bm_modify_request`),
    /// which Gemini sends as the first text part of the user content.
    const SESSION_CONTEXT: &str = "<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\n</session_context>";

    fn user(text: &str) -> Message {
        Message::User {
            content: text.to_owned(),
        }
    }

    fn system(text: &str) -> Message {
        Message::System {
            content: text.to_owned(),
        }
    }

    fn request(messages: Vec<Message>) -> ModelRequest {
        ModelRequest {
            turn: 1,
            step: 1,
            messages,
            tools: vec![ToolSpec {
                name: "bash".to_owned(),
                description: "runs".to_owned(),
                input_schema: json!({}),
            }],
            model: None,
        }
    }

    fn shell_call() -> ToolCall {
        ToolCall {
            id: "call_1".to_owned(),
            name: "bash".to_owned(),
            arguments: json!({"command": "echo hi"}),
        }
    }

    /// The second request of `bm_modify_request`: session context and
    /// prompt, the model's text with its call, the call's result.
    fn second_step() -> ModelRequest {
        request(vec![
            system("SYSTEM PROMPT"),
            system(SESSION_CONTEXT),
            user("Please run echo hi"),
            Message::Assistant {
                content: "I'll run it.".to_owned(),
                tool_calls: vec![shell_call()],
                thinking: None,
            },
            Message::Tool {
                tool_call_id: "call_1".to_owned(),
                content: "hi".to_owned(),
                is_error: false,
                blocks: None,
            },
        ])
    }

    #[test]
    fn the_request_is_shown_as_gemini_shows_it_keys_in_order() {
        let (llm, map) = to_llm_request(&second_step(), "gemini-3.8-flash");
        let shown = serde_json::to_string(&llm).unwrap();
        let expected = json!({
            "model": "gemini-3.8-flash",
            "messages": [
                {"role": "user", "content": format!("{SESSION_CONTEXT}Please run echo hi")},
                {"role": "model", "content": "I'll run it."}
            ],
            "config": {}
        });
        assert_eq!(shown, serde_json::to_string(&expected).unwrap());
        assert_eq!(map.len(), 2);
    }

    #[test]
    fn calls_only_replies_results_and_empty_runs_are_left_out() {
        let (llm, _) = to_llm_request(
            &request(vec![
                system("sys"),
                user("go"),
                Message::Assistant {
                    content: String::new(),
                    tool_calls: vec![shell_call()],
                    thinking: None,
                },
                Message::Tool {
                    tool_call_id: "call_1".to_owned(),
                    content: "hi".to_owned(),
                    is_error: false,
                    blocks: None,
                },
                system(""),
                Message::Assistant {
                    content: "done".to_owned(),
                    tool_calls: Vec::new(),
                    thinking: None,
                },
                user("more"),
                system("ctx"),
            ]),
            "m",
        );
        let roles: Vec<(LlmRole, &str)> = llm
            .messages
            .iter()
            .map(|message| (message.role, message.content.as_str()))
            .collect();
        assert_eq!(
            roles,
            vec![
                (LlmRole::User, "go"),
                (LlmRole::Model, "done"),
                (LlmRole::User, "morectx"),
            ]
        );
    }

    #[test]
    fn a_switched_model_is_the_model_shown() {
        let mut switched = second_step();
        switched.model = Some("other".to_owned());
        assert_eq!(to_llm_request(&switched, "m").0.model, "other");
    }

    /// `bm_modify_request`: the hook's one message replaces the text of
    /// the first content (context and prompt collapse into one part); its
    /// `config` is reported, not applied.
    #[test]
    fn a_patch_replaces_the_ith_content_and_reports_the_config() {
        let original = request(vec![
            system("SYSTEM PROMPT"),
            system(SESSION_CONTEXT),
            user("Please run echo hi"),
        ]);
        let (_, map) = to_llm_request(&original, "m");
        let patch = read_patch(&json!({
            "messages": [{"role": "user", "content": "REWRITTEN-PROMPT by BeforeModel"}],
            "config": {"temperature": 0.1}
        }))
        .unwrap();
        let (sent, leftovers) = apply_llm_request(&original, &map, &patch);
        assert_eq!(
            sent.messages,
            vec![
                system("SYSTEM PROMPT"),
                user("REWRITTEN-PROMPT by BeforeModel")
            ]
        );
        assert_eq!(sent.tools, original.tools);
        assert_eq!(leftovers.config_keys, vec!["temperature".to_owned()]);
        assert_eq!(leftovers.extra_messages, 0);
        // What the next hook is shown is the patched request.
        let (shown, _) = to_llm_request(&sent, "m");
        assert_eq!(
            shown.messages,
            vec![LlmMessage {
                role: LlmRole::User,
                content: "REWRITTEN-PROMPT by BeforeModel".to_owned()
            }]
        );
    }

    #[test]
    fn a_model_content_keeps_its_calls_and_later_contents_stay() {
        let original = second_step();
        let (_, map) = to_llm_request(&original, "m");
        let patch = read_patch(&json!({
            "model": "gemini-x",
            "messages": [
                {"role": "user", "content": "U"},
                {"role": "model", "content": "M"},
                {"role": "user", "content": "EXTRA"}
            ]
        }))
        .unwrap();
        let (sent, leftovers) = apply_llm_request(&original, &map, &patch);
        assert_eq!(sent.model.as_deref(), Some("gemini-x"));
        assert_eq!(
            sent.messages,
            vec![
                system("SYSTEM PROMPT"),
                user("U"),
                Message::Assistant {
                    content: "M".to_owned(),
                    tool_calls: vec![shell_call()],
                    thinking: None,
                },
                Message::Tool {
                    tool_call_id: "call_1".to_owned(),
                    content: "hi".to_owned(),
                    is_error: false,
                    blocks: None,
                },
            ]
        );
        assert_eq!(leftovers.extra_messages, 1);
        assert!(leftovers.config_keys.is_empty());

        let short = read_patch(&json!({"messages": [{"content": "ONLY"}]})).unwrap();
        let (sent, _) = apply_llm_request(&original, &map, &short);
        assert_eq!(sent.messages.get(1), Some(&user("ONLY")));
        assert_eq!(sent.messages.get(2), original.messages.get(3));
    }

    #[test]
    fn later_patches_win_field_by_field() {
        let first = read_patch(&json!({
            "model": "a", "messages": [{"content": "A"}]
        }))
        .unwrap();
        let second = read_patch(&json!({"config": {"temperature": 0.5}, "model": "b"})).unwrap();
        let merged = first.merged_with(second);
        assert_eq!(merged.model.as_deref(), Some("b"));
        assert_eq!(merged.messages.map(|m| m.len()), Some(1));
        assert!(merged.config.is_some());
        assert_eq!(read_patch(&json!("text")), None);
    }

    /// `a_streaming_chunks`' last chunk and `am_replace_response`'s
    /// function-call chunk, as dsh shows a whole reply.
    #[test]
    fn a_reply_is_shown_as_one_final_chunk() {
        let reply = ModelReply {
            text: "FINAL: all done.".to_owned(),
            tool_calls: Vec::new(),
            usage: Some(TokenUsage {
                input_tokens: 100,
                output_tokens: 10,
                ..TokenUsage::default()
            }),
            thinking: None,
        };
        let expected = json!({
            "text": "FINAL: all done.",
            "candidates": [{"content": {"role": "model", "parts": ["FINAL: all done."]},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110}
        });
        assert_eq!(
            serde_json::to_string(&to_llm_response(&reply)).unwrap(),
            serde_json::to_string(&expected).unwrap()
        );
        let calls_only = ModelReply {
            text: String::new(),
            tool_calls: vec![shell_call()],
            usage: None,
            thinking: None,
        };
        let shown = serde_json::to_value(to_llm_response(&calls_only)).unwrap();
        assert_eq!(shown["candidates"][0]["content"]["parts"], json!([]));
        assert_eq!(shown["usageMetadata"]["totalTokenCount"], json!(0));
    }

    /// `am_replace_response`: the hook's replacement as Gemini reads it.
    #[test]
    fn a_replacement_is_the_first_candidates_text() {
        let hook =
            json!({"candidates": [{"content": {"role": "model", "parts": ["REDACTED-A "]}}]});
        assert_eq!(response_text(&hook).as_deref(), Some("REDACTED-A "));
        let objects = json!({"candidates": [{"content": {"parts": [{"text": "a"}, {"functionCall": {}}, "b"]}}]});
        assert_eq!(response_text(&objects).as_deref(), Some("ab"));
        assert_eq!(
            response_text(&json!({"candidates": [{"content": {"parts": []}}]})),
            None
        );
        assert_eq!(response_text(&json!({"text": "x"})), None);
        // Only the first candidate is read; an array is not an object.
        let later_junk = json!({"candidates": [{"content": {"parts": ["c", {"text": 5}, 7]}}, 3]});
        assert_eq!(response_text(&later_junk).as_deref(), Some("c"));
        assert_eq!(
            response_text(&json!({"candidates": [[{"parts": ["x"]}]]})),
            None
        );
        assert_eq!(
            response_text(&json!({"candidates": [{"content": [["x"]]}]})),
            None
        );
        let reply = LlmResponseWire::deserialize(&hook)
            .unwrap()
            .reply()
            .unwrap();
        assert_eq!(reply.text, "REDACTED-A ");
        assert!(reply.tool_calls.is_empty());
    }
}
