//! Gemini's model events on dsh's provider-request seams: BeforeModel and
//! BeforeToolSelection on `before_provider_request`, AfterModel on the
//! model-request observer (`after_model_request`).
//!
//! What Gemini CLI 0.61 does, and what dsh does with it:
//! - **BeforeModel** sees `llm_request` ([`crate::llm`]). A deny (JSON
//!   `decision` `deny`/`block`, or an exit code of 2 or more) keeps the
//!   request from being sent and ends the turn with `Agent execution
//!   blocked: REASON`; with a `hookSpecificOutput.llm_response` as well,
//!   that response answers in the model's place. `continue: false` stops
//!   the turn the same way. Otherwise `hookSpecificOutput.llm_request`
//!   patches this one request (texts in place, `model`); several hooks'
//!   patches merge field by field, later hooks winning.
//! - **BeforeToolSelection** sees the request as BeforeModel left it. Its
//!   `hookSpecificOutput.toolConfig` answers are unioned: names sorted and
//!   deduplicated, any `NONE` wins (no names), else any `ANY`, else `AUTO`.
//!   Gemini passes that to the API as `functionCallingConfig` and still
//!   declares every tool; dsh's provider-neutral request has no
//!   function-calling mode, so dsh offers the model only the allowed tools
//!   (none for `NONE`), which is what the setting asks the model to do.
//! - **AfterModel** fires per streamed chunk in Gemini. dsh hands the model
//!   events one chunk per reply: the complete reply, once it has streamed,
//!   with finish reason `STOP`. A replacement (`hookSpecificOutput.
//!   llm_response` with a non-empty first candidate) is, as in Gemini, what
//!   the user is shown and what AfterAgent's `prompt_response` holds, while
//!   the conversation history keeps the model's original text. The reply
//!   has already streamed when it fires, so dsh shows the replacement as a
//!   notice rather than in place of the streamed text. A deny is shown as
//!   `Agent execution blocked: REASON` and changes nothing else.
//!
//! The hook runs themselves go through [`ModelHookFiring`], which the
//! plugin implements with the shared engine; everything else is pure.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;
use dsh_hooks::verdict::{notice, warning};
use dsh_protocol::{ModelReply, ModelRequest};
use dsh_seams::{NoticeLevel, ProviderRequestDecision, SeamContext};

use crate::event::GeminiEvent;
pub use crate::llm::{CallingMode, ModelFields, ModelOutput, ToolConfig};
use crate::llm::{
    LlmRequest, LlmRequestPatch, LlmResponseWire, PatchLeftovers, apply_llm_request,
    to_llm_request, to_llm_response,
};
use crate::output::{Decision, Interpretation};

/// The text Gemini shows for a blocked model event.
pub fn blocked_text(reason: &str) -> String {
    format!("Agent execution blocked: {reason}")
}

/// What Gemini says when a deny gives no reason.
pub const NO_REASON: &str = "No reason provided";

/// One model-event hook's answer, as Gemini's exit-code and output rules
/// read it (the plugin builds it from the engine's reading).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelHookAnswer {
    /// A deny: JSON `decision` `deny`/`block`, or exit code 2 or more. The
    /// reason (or `systemMessage`) as Gemini shows it.
    pub denied: Option<String>,
    /// `continue: false`, with its `stopReason`.
    pub stopped: Option<String>,
    /// The model events' keys of `hookSpecificOutput`.
    pub output: ModelOutput,
}

/// Runs Gemini hooks for one model event. The plugin implements it over
/// the shared engine (which records every run); tests implement it with
/// canned answers.
#[async_trait]
pub trait ModelHookFiring: Send + Sync {
    /// Whether any hook is configured for `event` (nothing is built when
    /// none is).
    fn configured(&self, event: GeminiEvent) -> bool;

    /// Fires `event` with its own stdin keys (`llm_request`, …; the common
    /// keys are the plugin's), returning every run's answer in
    /// configuration order.
    async fn fire(
        &self,
        ctx: &SeamContext,
        event: GeminiEvent,
        fields: ModelFields,
    ) -> Vec<ModelHookAnswer>;

    /// dsh's tool name for a Gemini tool name (`read_file` → `read`);
    /// `None` for a name dsh has no tool for.
    fn native_tool_name(&self, gemini: &str) -> Option<String>;
}

/// What the BeforeModel hooks of one request decided together.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum BeforeModelOutcome {
    /// Send the request, patched when a hook gave `llm_request`.
    #[default]
    Send,
    /// Send it with this patch.
    Patch(LlmRequestPatch),
    /// Do not send it; the turn ends with this text.
    Block(String),
    /// Do not send it; `reply` answers instead and the user is shown the
    /// block's text, as Gemini shows it.
    Answer {
        /// `Agent execution blocked: REASON`.
        shown: String,
        /// The synthetic reply.
        reply: ModelReply,
    },
}

/// Folds BeforeModel answers in configuration order. Any deny blocks (its
/// `llm_response`, the last one given by a denying hook, answers instead);
/// otherwise any `continue: false` stops; otherwise the `llm_request`
/// patches merge, later hooks winning field by field. An `llm_response`
/// without a deny is ignored, as Gemini ignores it.
pub fn fold_before_model(answers: &[ModelHookAnswer]) -> BeforeModelOutcome {
    let mut denied: Option<String> = None;
    let mut synthetic: Option<ModelReply> = None;
    let mut stopped: Option<String> = None;
    let mut patch: Option<LlmRequestPatch> = None;
    for answer in answers {
        if let Some(reason) = &answer.denied {
            denied = Some(match denied {
                Some(earlier) => format!("{earlier}\n{reason}"),
                None => reason.clone(),
            });
            if let Some(reply) = answer
                .output
                .llm_response
                .as_ref()
                .and_then(LlmResponseWire::reply)
            {
                synthetic = Some(reply);
            }
        }
        if let (None, Some(reason)) = (&stopped, &answer.stopped) {
            stopped = Some(reason.clone());
        }
        if let Some(next) = answer.output.llm_request.clone() {
            patch = Some(match patch {
                Some(earlier) => earlier.merged_with(next),
                None => next,
            });
        }
    }
    match (denied, synthetic, stopped, patch) {
        (Some(reason), Some(reply), _, _) => BeforeModelOutcome::Answer {
            shown: blocked_text(&reason),
            reply,
        },
        (Some(reason), None, _, _) => BeforeModelOutcome::Block(blocked_text(&reason)),
        (None, _, Some(reason), _) => BeforeModelOutcome::Block(blocked_text(&reason)),
        (None, _, None, Some(patch)) => BeforeModelOutcome::Patch(patch),
        (None, _, None, None) => BeforeModelOutcome::Send,
    }
}

/// The merged `toolConfig` of one request's BeforeToolSelection hooks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSelection {
    /// `NONE` beats `ANY` beats `AUTO`.
    pub mode: CallingMode,
    /// Gemini tool names, sorted, each once; empty under `NONE`.
    pub allowed: Vec<String>,
}

/// Folds BeforeToolSelection answers: `None` when no hook gave a
/// `toolConfig`. `decision` and `continue` are ignored, as in Gemini.
pub fn fold_tool_selection(answers: &[ModelHookAnswer]) -> Option<ToolSelection> {
    let mut mode: Option<CallingMode> = None;
    let mut names: BTreeSet<String> = BTreeSet::new();
    for answer in answers {
        let Some(config) = &answer.output.tool_config else {
            continue;
        };
        let this = config.mode();
        mode = Some(mode.map_or(this, |earlier| earlier.max(this)));
        names.extend(config.names().map(str::to_owned));
    }
    let mode = mode?;
    let allowed = match mode {
        CallingMode::None => Vec::new(),
        CallingMode::Auto | CallingMode::Any => names.into_iter().collect(),
    };
    Some(ToolSelection { mode, allowed })
}

/// `request` offering only what `selection` allows: no tools under
/// `NONE`; under `ANY`/`AUTO` with names, the tools those names map to
/// (`native` gives dsh's name for a Gemini one); without names, all.
pub fn apply_tool_selection(
    request: &ModelRequest,
    selection: &ToolSelection,
    native: impl Fn(&str) -> Option<String>,
) -> ModelRequest {
    let mut out = request.clone();
    match selection.mode {
        CallingMode::None => out.tools.clear(),
        CallingMode::Auto | CallingMode::Any if selection.allowed.is_empty() => {}
        CallingMode::Auto | CallingMode::Any => {
            let allowed: BTreeSet<String> = selection
                .allowed
                .iter()
                .map(|name| native(name).unwrap_or_else(|| name.clone()))
                .collect();
            out.tools.retain(|tool| allowed.contains(&tool.name));
        }
    }
    out
}

/// What the AfterModel hooks of one reply decided together.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AfterModelOutcome {
    /// The text shown instead of the reply's (the last hook's wins).
    pub shown: Option<String>,
    /// Deny texts, for the user.
    pub blocked: Option<String>,
}

/// Folds AfterModel answers in configuration order: later replacements
/// win; denies are joined.
pub fn fold_after_model(answers: &[ModelHookAnswer]) -> AfterModelOutcome {
    let mut outcome = AfterModelOutcome::default();
    for answer in answers {
        if let Some(text) = answer
            .output
            .llm_response
            .as_ref()
            .and_then(LlmResponseWire::text)
        {
            outcome.shown = Some(text);
        }
        if let Some(reason) = &answer.denied {
            outcome.blocked = Some(match outcome.blocked.take() {
                Some(earlier) => format!("{earlier}\n{reason}"),
                None => reason.clone(),
            });
        }
    }
    outcome
}

impl ModelHookAnswer {
    /// A run as Gemini's output rules read it: the deny's text is the
    /// `systemMessage` when set, else the reason (Gemini's "Agent execution
    /// blocked" text).
    pub(crate) fn from_reading(reading: &Interpretation) -> ModelHookAnswer {
        let denied = match &reading.decision {
            Decision::Deny { reason } => Some(
                reading
                    .system_message
                    .clone()
                    .or_else(|| reason.clone())
                    .unwrap_or_else(|| NO_REASON.to_owned()),
            ),
            Decision::Allow | Decision::Ask { .. } => None,
        };
        let stopped = reading
            .stop
            .as_ref()
            .map(|reason| reason.clone().unwrap_or_else(|| NO_REASON.to_owned()));
        ModelHookAnswer {
            denied,
            stopped,
            output: reading.model.clone(),
        }
    }
}

/// The stdin keys of BeforeModel and BeforeToolSelection.
fn request_only(llm_request: LlmRequest) -> ModelFields {
    ModelFields {
        llm_request,
        llm_response: None,
    }
}

/// The name of the model a request goes to.
fn model_name(ctx: &SeamContext) -> String {
    ctx.session.model.clone()
}

/// BeforeModel, then BeforeToolSelection on the request as BeforeModel left
/// it: the before-provider-request decision for one request.
pub async fn before_provider_request(
    firing: &dyn ModelHookFiring,
    ctx: &SeamContext,
    request: &ModelRequest,
) -> ProviderRequestDecision {
    let model = model_name(ctx);
    let mut current = request.clone();
    let mut replaced = false;
    if firing.configured(GeminiEvent::BeforeModel) {
        let (llm, map) = to_llm_request(&current, &model);
        let answers = firing
            .fire(ctx, GeminiEvent::BeforeModel, request_only(llm))
            .await;
        match fold_before_model(&answers) {
            BeforeModelOutcome::Send => {}
            BeforeModelOutcome::Patch(patch) => {
                let (patched, leftovers) = apply_llm_request(&current, &map, &patch);
                tell_leftovers(ctx, &leftovers);
                replaced = patched != current;
                current = patched;
            }
            BeforeModelOutcome::Block(reason) => {
                return ProviderRequestDecision::Block { reason };
            }
            BeforeModelOutcome::Answer { shown, reply } => {
                ctx.sink.tell_user(warning("gemini BeforeModel", shown));
                return ProviderRequestDecision::Answer(reply);
            }
        }
    }
    if firing.configured(GeminiEvent::BeforeToolSelection) {
        let (llm, _) = to_llm_request(&current, &model);
        let answers = firing
            .fire(ctx, GeminiEvent::BeforeToolSelection, request_only(llm))
            .await;
        if let Some(selection) = fold_tool_selection(&answers) {
            let restricted =
                apply_tool_selection(&current, &selection, |name| firing.native_tool_name(name));
            replaced |= restricted != current;
            current = restricted;
        }
    }
    if replaced {
        ProviderRequestDecision::Replace(current)
    } else {
        ProviderRequestDecision::Keep
    }
}

/// Tells the user what a BeforeModel patch asked for that dsh does not
/// send.
fn tell_leftovers(ctx: &SeamContext, leftovers: &PatchLeftovers) {
    if leftovers.is_empty() {
        return;
    }
    let mut parts = Vec::new();
    if !leftovers.config_keys.is_empty() {
        parts.push(format!(
            "sampling settings ({}) are not sent: dsh's model request has no place for them",
            leftovers.config_keys.join(", ")
        ));
    }
    if leftovers.extra_messages > 0 {
        parts.push(format!(
            "{} message(s) beyond the conversation's were ignored",
            leftovers.extra_messages
        ));
    }
    ctx.sink
        .tell_user(warning("gemini BeforeModel", parts.join("; ")));
}

/// AfterModel on a reply that arrived: fires the hooks with the request as
/// sent and the whole reply, records a replacement in `shown`, and tells
/// the user what a hook replaced or denied.
pub async fn after_model_request(
    firing: &dyn ModelHookFiring,
    ctx: &SeamContext,
    request: &ModelRequest,
    reply: &ModelReply,
    shown: &ShownReplies,
) {
    if !firing.configured(GeminiEvent::AfterModel) {
        return;
    }
    let (llm, _) = to_llm_request(request, &model_name(ctx));
    let fired = ModelFields {
        llm_request: llm,
        llm_response: Some(to_llm_response(reply)),
    };
    let answers = firing.fire(ctx, GeminiEvent::AfterModel, fired).await;
    let outcome = fold_after_model(&answers);
    if let Some(reason) = outcome.blocked {
        ctx.sink
            .tell_user(warning("gemini AfterModel", blocked_text(&reason)));
    }
    if let Some(text) = outcome.shown {
        let said = format!("the reply is shown as: {text}");
        ctx.sink
            .tell_user(notice("gemini AfterModel", said, NoticeLevel::Info));
        // Only the session's own replies reach AfterAgent; a subagent's
        // turn and step numbers are its own.
        if ctx.agent.is_none() {
            shown.record(request.turn, request.step, text);
        }
    }
}

/// The texts AfterModel hooks put in place of replies, per (turn, step):
/// AfterAgent's `prompt_response` uses them instead of the model's text.
#[derive(Debug, Default)]
pub struct ShownReplies {
    shown: Mutex<BTreeMap<(u64, u64), String>>,
}

impl ShownReplies {
    /// Records what is shown for a reply.
    pub fn record(&self, turn: u64, step: u64, text: String) {
        self.lock().insert((turn, step), text);
    }

    /// What is shown for the reply of `step` in `turn`, when a hook
    /// replaced it.
    pub fn shown(&self, turn: u64, step: u64) -> Option<String> {
        self.lock().get(&(turn, step)).cloned()
    }

    /// Forgets a finished turn.
    pub fn forget_turn(&self, turn: u64) {
        self.lock().retain(|(t, _), _| *t != turn);
    }

    /// Forgets everything (a new turn opens).
    pub fn clear(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<(u64, u64), String>> {
        self.shown.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::{Arc, Mutex};

    use dsh_hooks::names::Tabled;

    use dsh_protocol::{Message, ToolSpec};
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};

    use super::*;
    use crate::output::interpret;
    use dsh_hook_runner::HookExit;

    /// A hook that printed `{"hookSpecificOutput": specific}`, as the
    /// output reader reads it.
    fn answer(specific: Value) -> ModelHookAnswer {
        let stdout = json!({ "hookSpecificOutput": specific }).to_string();
        ModelHookAnswer::from_reading(&interpret((&HookExit::Exited(0), 0), &stdout, ""))
    }

    fn denied(reason: &str) -> ModelHookAnswer {
        ModelHookAnswer {
            denied: Some(reason.to_owned()),
            ..ModelHookAnswer::default()
        }
    }

    fn tool(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.to_owned(),
            description: String::new(),
            input_schema: json!({}),
        }
    }

    fn request() -> ModelRequest {
        ModelRequest {
            turn: 1,
            step: 1,
            messages: vec![
                Message::System {
                    content: "sys".to_owned(),
                },
                Message::User {
                    content: "Please run echo hi".to_owned(),
                },
            ],
            tools: ["bash", "read", "glob", "write"].map(tool).to_vec(),
            model: None,
        }
    }

    fn native(name: &str) -> Option<String> {
        match name {
            "run_shell_command" => Some("bash".to_owned()),
            "read_file" => Some("read".to_owned()),
            "write_file" => Some("write".to_owned()),
            "glob" => Some("glob".to_owned()),
            _ => None,
        }
    }

    /// `bm_deny_exit2`: exit 2 with a stderr reason blocks, no synthetic
    /// response.
    #[test]
    fn a_deny_blocks_with_geminis_text() {
        assert_eq!(
            fold_before_model(&[denied("BM-EXIT2: model call refused")]),
            BeforeModelOutcome::Block(
                "Agent execution blocked: BM-EXIT2: model call refused".to_owned()
            )
        );
        let stop = ModelHookAnswer {
            stopped: Some("halt".to_owned()),
            ..ModelHookAnswer::default()
        };
        assert_eq!(
            fold_before_model(&[stop]),
            BeforeModelOutcome::Block("Agent execution blocked: halt".to_owned())
        );
    }

    #[test]
    fn a_synthetic_response_counts_only_with_a_deny() {
        let response =
            json!({"llm_response": {"candidates": [{"content": {"parts": ["CANNED"]}}]}});
        assert_eq!(
            fold_before_model(&[answer(response.clone())]),
            BeforeModelOutcome::Send
        );
        let mut with_deny = answer(response);
        with_deny.denied = Some("r".to_owned());
        match fold_before_model(&[with_deny]) {
            BeforeModelOutcome::Answer { shown, reply } => {
                assert_eq!(reply.text, "CANNED");
                assert_eq!(shown, "Agent execution blocked: r");
            }
            other => panic!("expected an answer, got {other:?}"),
        }
    }

    /// `bm_modify_request`'s hook output, then a later hook setting only
    /// the model.
    #[test]
    fn patches_merge_later_fields_winning() {
        let first = answer(json!({"hookEventName": "BeforeModel", "llm_request": {
            "messages": [{"role": "user", "content": "REWRITTEN-PROMPT by BeforeModel"}],
            "config": {"temperature": 0.1}}}));
        let second = answer(json!({"llm_request": {"model": "other"}}));
        let BeforeModelOutcome::Patch(patch) = fold_before_model(&[first, second]) else {
            panic!("expected a patch");
        };
        assert_eq!(patch.model.as_deref(), Some("other"));
        assert_eq!(
            patch.messages.unwrap()[0].content,
            "REWRITTEN-PROMPT by BeforeModel"
        );
        assert_eq!(patch.config.unwrap()["temperature"], json!(0.1));
    }

    /// `bts_allowed_names`: ANY+[read_file] and AUTO+[glob] give ANY with
    /// both names, sorted.
    #[test]
    fn tool_configs_union_and_the_strongest_mode_wins() {
        let bts1 = answer(json!({"hookEventName": "BeforeToolSelection",
            "toolConfig": {"mode": "ANY", "allowedFunctionNames": ["read_file"]}}));
        let bts2 =
            answer(json!({"toolConfig": {"mode": "AUTO", "allowedFunctionNames": ["glob"]}}));
        let selection = fold_tool_selection(&[bts1.clone(), bts2.clone()]).unwrap();
        assert_eq!(
            selection,
            ToolSelection {
                mode: CallingMode::Any,
                allowed: vec!["glob".to_owned(), "read_file".to_owned()]
            }
        );
        let sent = apply_tool_selection(&request(), &selection, native);
        let names: Vec<&str> = sent.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, vec!["read", "glob"]);

        let none = answer(json!({"toolConfig": {"mode": "NONE", "allowedFunctionNames": ["x"]}}));
        let selection = fold_tool_selection(&[bts1, none, bts2]).unwrap();
        assert_eq!(selection.mode, CallingMode::None);
        assert!(selection.allowed.is_empty());
        assert!(
            apply_tool_selection(&request(), &selection, native)
                .tools
                .is_empty()
        );

        assert_eq!(fold_tool_selection(&[denied("ignored")]), None);
        let all = ToolSelection {
            mode: CallingMode::Auto,
            allowed: Vec::new(),
        };
        assert_eq!(apply_tool_selection(&request(), &all, native), request());
    }

    /// Gemini reads these keys on objects only, and a list entry of the
    /// wrong type on its own.
    #[test]
    fn model_keys_are_read_from_objects_entry_by_entry() {
        let mixed =
            answer(json!({"toolConfig": {"mode": 3, "allowedFunctionNames": ["b", 1, "a", "b"]}}));
        assert_eq!(
            fold_tool_selection(&[mixed]),
            Some(ToolSelection {
                mode: CallingMode::Auto,
                allowed: vec!["a".to_owned(), "b".to_owned()]
            })
        );
        assert_eq!(
            fold_tool_selection(&[answer(json!({"toolConfig": ["ANY", ["x"]]}))]),
            None
        );
        assert_eq!(
            fold_before_model(&[answer(json!({"llm_request": ["other-model"]}))]),
            BeforeModelOutcome::Send
        );
        let positional = interpret(
            (&HookExit::Exited(0), 0),
            r#"{"hookSpecificOutput": ["ctx", null, true]}"#,
            "",
        );
        assert_eq!(positional.additional_context, None);
        assert!(!positional.clear_context);
        assert_eq!(
            ModelHookAnswer::from_reading(&positional),
            ModelHookAnswer::default()
        );
    }

    /// `am_replace_response`: two replacing answers; the last wins.
    #[test]
    fn after_model_replacements_later_wins_and_denies_join() {
        let a = answer(
            json!({"llm_response": {"candidates": [{"content": {"role": "model", "parts": ["REDACTED-A "]}}]}}),
        );
        let b = answer(
            json!({"llm_response": {"candidates": [{"content": {"role": "model", "parts": ["REDACTED-B"]}}]}}),
        );
        let empty = answer(json!({"llm_response": {"candidates": [{"content": {"parts": []}}]}}));
        let outcome = fold_after_model(&[a, b, empty, denied("one"), denied("two")]);
        assert_eq!(outcome.shown.as_deref(), Some("REDACTED-B"));
        assert_eq!(outcome.blocked.as_deref(), Some("one\ntwo"));
        assert_eq!(fold_after_model(&[]), AfterModelOutcome::default());
    }

    /// Canned answers per event, and the stdin fields each firing got.
    struct Canned {
        answers: BTreeMap<&'static str, Vec<ModelHookAnswer>>,
        fired: Mutex<Vec<(GeminiEvent, Value)>>,
    }

    #[async_trait]
    impl ModelHookFiring for Canned {
        fn configured(&self, event: GeminiEvent) -> bool {
            self.answers.contains_key(event.as_str())
        }
        async fn fire(
            &self,
            _ctx: &SeamContext,
            event: GeminiEvent,
            fields: ModelFields,
        ) -> Vec<ModelHookAnswer> {
            let fields = serde_json::to_value(fields).unwrap();
            self.fired.lock().unwrap().push((event, fields));
            self.answers
                .get(event.as_str())
                .cloned()
                .unwrap_or_default()
        }
        fn native_tool_name(&self, gemini: &str) -> Option<String> {
            native(gemini)
        }
    }

    fn canned(answers: Vec<(&'static str, Vec<ModelHookAnswer>)>) -> Canned {
        Canned {
            answers: answers.into_iter().collect(),
            fired: Mutex::new(Vec::new()),
        }
    }

    /// `bm_modify_request` + `bts_allowed_names` on one request: the
    /// selection hooks see the patched request; the request sent has the
    /// patched text and only the allowed tools.
    #[tokio::test]
    async fn before_model_then_tool_selection_on_one_request() {
        let firing = canned(vec![
            (
                "BeforeModel",
                vec![answer(json!({"llm_request": {
                    "messages": [{"role": "user", "content": "REWRITTEN"}]}}))],
            ),
            (
                "BeforeToolSelection",
                vec![answer(json!({"toolConfig": {"mode": "ANY",
                    "allowedFunctionNames": ["read_file"]}}))],
            ),
        ]);
        let ctx = SeamContext::detached("/tmp");
        let decision = before_provider_request(&firing, &ctx, &request()).await;
        let ProviderRequestDecision::Replace(sent) = decision else {
            panic!("expected a replacement, got {decision:?}");
        };
        assert_eq!(
            sent.messages[1],
            Message::User {
                content: "REWRITTEN".to_owned()
            }
        );
        assert_eq!(sent.tools, vec![tool("read")]);
        let fired = firing.fired.lock().unwrap();
        assert_eq!(fired.len(), 2);
        assert_eq!(fired[0].0, GeminiEvent::BeforeModel);
        assert_eq!(
            fired[0].1["llm_request"]["messages"][0]["content"],
            json!("Please run echo hi")
        );
        assert_eq!(
            fired[1].1["llm_request"]["messages"][0]["content"],
            json!("REWRITTEN")
        );
    }

    #[tokio::test]
    async fn nothing_configured_keeps_the_request_and_fires_nothing() {
        let firing = canned(Vec::new());
        let ctx = SeamContext::detached("/tmp");
        assert_eq!(
            before_provider_request(&firing, &ctx, &request()).await,
            ProviderRequestDecision::Keep
        );
        assert!(firing.fired.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_deny_in_before_model_skips_tool_selection() {
        let firing = canned(vec![
            ("BeforeModel", vec![denied("no")]),
            ("BeforeToolSelection", vec![]),
        ]);
        let ctx = SeamContext::detached("/tmp");
        assert_eq!(
            before_provider_request(&firing, &ctx, &request()).await,
            ProviderRequestDecision::Block {
                reason: "Agent execution blocked: no".to_owned()
            }
        );
        assert_eq!(firing.fired.lock().unwrap().len(), 1);
    }

    #[tokio::test]
    async fn after_model_records_what_is_shown_and_keeps_the_reply() {
        let firing = Arc::new(canned(vec![(
            "AfterModel",
            vec![answer(
                json!({"llm_response": {"candidates": [{"content": {"parts": ["REDACTED"]}}]}}),
            )],
        )]));
        let ctx = SeamContext::detached("/tmp");
        let shown = ShownReplies::default();
        let reply = ModelReply {
            text: "ORIGINAL TEXT with secret-1234".to_owned(),
            tool_calls: Vec::new(),
            usage: None,
            thinking: None,
        };
        after_model_request(firing.as_ref(), &ctx, &request(), &reply, &shown).await;
        assert_eq!(shown.shown(1, 1).as_deref(), Some("REDACTED"));
        assert_eq!(shown.shown(1, 2), None);
        let fired = firing.fired.lock().unwrap();
        assert_eq!(
            fired[0].1["llm_response"]["text"],
            json!("ORIGINAL TEXT with secret-1234")
        );
        let keys: Vec<&String> = fired[0].1.as_object().unwrap().keys().collect();
        assert_eq!(keys, vec!["llm_request", "llm_response"]);
        shown.forget_turn(1);
        assert_eq!(shown.shown(1, 1), None);
    }
}
