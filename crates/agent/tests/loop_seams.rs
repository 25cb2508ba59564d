//! The seed-004 seams through the real loop, each with a native plugin: the
//! context transform (and its adjacency check), the provider-request
//! replacement, stop-after-step, prepare-next-step, the steering and
//! follow-up queue modes, and turn-failed.

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use dsh_agent::{
    Agent, AgentParts, Fixture, MessageQueue, Observers, QueueMode, QueueModes, QueuedPrompt,
    ScriptedModel, builtin_registry,
};
use dsh_model::{FailureCategory, Model};
use dsh_protocol::{
    Event, EventBody, Message, ModelRequest, SeamNoteEvent, SeamNoteKind, SessionHeaderEvent,
    ToolResultEvent, TurnEndReason, UserMessageEvent,
};
use dsh_seams::{
    CancellationToken, ContextDecision, NextStepUpdate, NoticeLevel, Plugin,
    ProviderRequestDecision, SeamContext, SessionEnv, SessionInfo, StepReport, StepStop,
    ToolExecution, ToolOutcome, TurnFailure, UserNotice,
};
use dsh_session::SessionLog;

struct Run {
    agent: Agent,
    model: Arc<ScriptedModel>,
    notices: Arc<Mutex<Vec<UserNotice>>>,
    _dir: tempfile::TempDir,
}

/// An agent over `fixture_json`'s scripted model with `plugins`.
fn agent(fixture_json: &str, plugins: Vec<Arc<dyn Plugin>>) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Fixture::parse(std::path::Path::new("test.json"), fixture_json).unwrap();
    let model = Arc::new(ScriptedModel::new("test", fixture.script()));
    let notices = Arc::new(Mutex::new(Vec::new()));
    let seen = notices.clone();
    let log = SessionLog::in_memory(EventBody::SessionHeader(SessionHeaderEvent {
        session_id: "s".into(),
        cwd: dir.path().display().to_string(),
        version: "test".into(),
        notices: vec![],
        provider_api: None,
    }))
    .unwrap();
    let agent = Agent::new(AgentParts {
        log,
        session: SessionInfo {
            session_id: "s".into(),
            cwd: dir.path().to_owned(),
            model: "scripted".into(),
            log_path: None,
            env: SessionEnv::default(),
            interactive: false,
        },
        registry: builtin_registry(&plugins, &dsh_tools::builtin::ProcessLayer::default()),
        model: model.clone(),
        system_prompt: "system".into(),
        max_steps: 10,
        observers: Observers {
            on_notice: Some(Arc::new(move |notice: &UserNotice| {
                seen.lock().unwrap().push(notice.clone());
            })),
            ..Observers::default()
        },
    });
    Run {
        agent,
        model,
        notices,
        _dir: dir,
    }
}

async fn send(run: &mut Run, prompts: &[&str]) -> Vec<dsh_agent::TurnOutcome> {
    for prompt in prompts {
        run.agent.enqueue(QueuedPrompt {
            text: (*prompt).to_owned(),
            source: "user".into(),
        });
    }
    run.agent
        .run_pending(&CancellationToken::new())
        .await
        .unwrap()
}

fn notes(events: &[Event]) -> Vec<(SeamNoteKind, String)> {
    events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::SeamNote(SeamNoteEvent { kind, plugin, .. }) => {
                Some((*kind, plugin.clone()))
            }
            _ => None,
        })
        .collect()
}

fn user_texts(request: &dsh_protocol::RequestRecord) -> Vec<String> {
    request
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::User { content } => Some(content.clone()),
            _ => None,
        })
        .collect()
}

const TWO_STEPS: &str = r#"{"prompts": [], "model": [
    {"text": "running", "tool_calls": [{"name": "bash", "arguments": {"command": "echo one"}}]},
    {"text": "done"}
]}"#;

/// Drops every user message but the last: a pruning transform that keeps
/// tool calls and results together.
struct KeepLastPrompt;

#[async_trait]
impl Plugin for KeepLastPrompt {
    fn name(&self) -> &str {
        "keep-last-prompt"
    }
    async fn context(&self, _ctx: &SeamContext, messages: &[Message]) -> ContextDecision {
        let last_user = messages
            .iter()
            .rposition(|m| matches!(m, Message::User { .. }));
        let kept = messages
            .iter()
            .enumerate()
            .filter(|(i, m)| !matches!(m, Message::User { .. }) || Some(*i) == last_user)
            .map(|(_, m)| m.clone())
            .collect();
        ContextDecision::Replace(kept)
    }
}

#[tokio::test]
async fn a_context_transform_changes_what_the_model_sees_not_the_log() {
    let fixture = r#"{"prompts": [], "model": [{"text": "a"}, {"text": "b"}]}"#;
    let mut run = agent(fixture, vec![Arc::new(KeepLastPrompt)]);
    send(&mut run, &["first", "second"]).await;
    let requests = run.model.requests();
    assert_eq!(user_texts(&requests[0]), ["first"]);
    assert_eq!(
        user_texts(&requests[1]),
        ["second"],
        "the first prompt was pruned"
    );
    let events = run.agent.events();
    assert!(
        events.iter().any(
            |e| matches!(&e.body, EventBody::UserMessage(UserMessageEvent { content, .. }) if content == "first")
        ),
        "the log keeps what the transform dropped"
    );
    assert_eq!(
        notes(&events),
        vec![(SeamNoteKind::ContextReplaced, "keep-last-prompt".to_owned()); 2]
    );
}

/// Drops tool results: breaks adjacency, so it must be refused.
struct DropToolResults;

#[async_trait]
impl Plugin for DropToolResults {
    fn name(&self) -> &str {
        "drop-results"
    }
    async fn context(&self, _ctx: &SeamContext, messages: &[Message]) -> ContextDecision {
        ContextDecision::Replace(
            messages
                .iter()
                .filter(|m| !matches!(m, Message::Tool { .. }))
                .cloned()
                .collect(),
        )
    }
}

#[tokio::test]
async fn a_context_transform_that_breaks_adjacency_is_refused_and_reported() {
    let mut run = agent(TWO_STEPS, vec![Arc::new(DropToolResults)]);
    let outcomes = send(&mut run, &["go"]).await;
    assert_eq!(outcomes[0].reason, TurnEndReason::Completed);
    let requests = run.model.requests();
    // Step 1 has no tool calls yet: the (no-op) transform is accepted. Step
    // 2 would drop `call_1`'s result: refused, the full list is sent.
    assert!(
        requests[1]
            .messages
            .iter()
            .any(|m| matches!(m, Message::Tool { tool_call_id, .. } if tool_call_id == "call_1"))
    );
    let events = run.agent.events();
    assert_eq!(
        notes(&events),
        vec![
            (SeamNoteKind::ContextReplaced, "drop-results".to_owned()),
            (SeamNoteKind::ContextRejected, "drop-results".to_owned())
        ]
    );
    let notices = run.notices.lock().unwrap().clone();
    let refused: Vec<&UserNotice> = notices
        .iter()
        .filter(|n| n.text.contains("was refused"))
        .collect();
    assert_eq!(refused.len(), 1, "{notices:?}");
    assert_eq!(refused[0].level, NoticeLevel::Warning);
    assert!(refused[0].text.contains("call_1"), "{}", refused[0].text);
}

/// Appends a marker user message to every outgoing request.
struct Stamp;

#[async_trait]
impl Plugin for Stamp {
    fn name(&self) -> &str {
        "stamp"
    }
    async fn before_provider_request(
        &self,
        _ctx: &SeamContext,
        request: &ModelRequest,
    ) -> ProviderRequestDecision {
        let mut replaced = request.clone();
        replaced.messages.push(Message::User {
            content: format!("[stamped step {}]", request.step),
        });
        ProviderRequestDecision::Replace(replaced)
    }
}

#[tokio::test]
async fn a_replaced_provider_request_is_sent_and_logged() {
    let mut run = agent(TWO_STEPS, vec![Arc::new(Stamp)]);
    send(&mut run, &["go"]).await;
    let requests = run.model.requests();
    assert_eq!(user_texts(&requests[1]).last().unwrap(), "[stamped step 2]");
    let events = run.agent.events();
    let logged: Vec<&dsh_protocol::SeamNoteDetail> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::SeamNote(SeamNoteEvent {
                kind: SeamNoteKind::RequestReplaced,
                detail: Some(detail),
                ..
            }) => Some(detail),
            _ => None,
        })
        .collect();
    assert_eq!(logged.len(), 2);
    assert_eq!(
        serde_json::to_value(logged[1]).unwrap(),
        serde_json::to_value(&requests[1]).unwrap(),
        "the log holds the request as sent"
    );
}

/// Blocks the first request of every turn, or answers it in the model's
/// place; later plugins must not be asked.
struct Gate {
    answer: bool,
}

#[async_trait]
impl Plugin for Gate {
    fn name(&self) -> &str {
        "gate"
    }
    async fn before_provider_request(
        &self,
        _ctx: &SeamContext,
        request: &ModelRequest,
    ) -> ProviderRequestDecision {
        match (request.step, self.answer) {
            (1, false) => ProviderRequestDecision::Block {
                reason: "no model today".to_owned(),
            },
            (1, true) => ProviderRequestDecision::Answer(dsh_protocol::ModelReply {
                text: "canned".to_owned(),
                thinking: None,
                tool_calls: Vec::new(),
                usage: None,
            }),
            _ => ProviderRequestDecision::Keep,
        }
    }
}

#[tokio::test]
async fn a_blocked_provider_request_is_not_sent_and_ends_the_turn_stopped() {
    let mut run = agent(
        TWO_STEPS,
        vec![Arc::new(Gate { answer: false }), Arc::new(Stamp)],
    );
    let outcomes = send(&mut run, &["go"]).await;
    assert_eq!(outcomes[0].reason, TurnEndReason::Stopped);
    assert_eq!(outcomes[0].message.as_deref(), Some("no model today"));
    assert!(run.model.requests().is_empty(), "nothing was sent");
    let events = run.agent.events();
    assert_eq!(
        notes(&events),
        vec![(SeamNoteKind::RequestBlocked, "gate".to_owned())],
        "the stamp after the gate was not asked"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.body, EventBody::AssistantMessage(_))),
        "no reply is recorded"
    );
}

#[tokio::test]
async fn an_answered_provider_request_uses_the_reply_without_the_model() {
    let mut run = agent(
        r#"{"prompts": [], "model": [{"text": "from the model"}]}"#,
        vec![Arc::new(Gate { answer: true })],
    );
    let outcomes = send(&mut run, &["go"]).await;
    assert_eq!(outcomes[0].reason, TurnEndReason::Completed);
    assert_eq!(outcomes[0].final_text.as_deref(), Some("canned"));
    assert!(run.model.requests().is_empty(), "nothing was sent");
    let events = run.agent.events();
    let detail = events.iter().find_map(|e| match &e.body {
        EventBody::SeamNote(SeamNoteEvent {
            kind: SeamNoteKind::RequestAnswered,
            detail,
            ..
        }) => detail.clone(),
        _ => None,
    });
    let Some(dsh_protocol::SeamNoteDetail::Reply(reply)) = detail else {
        panic!("the answer is logged as a reply: {detail:?}");
    };
    assert_eq!(reply.text, "canned");
}

/// Ends the turn, or the whole session, after the first step.
struct StopAfterFirst {
    session: bool,
}

#[async_trait]
impl Plugin for StopAfterFirst {
    fn name(&self) -> &str {
        "stopper"
    }
    async fn stop_after_step(&self, _ctx: &SeamContext, step: &StepReport) -> StepStop {
        if step.step != 1 || step.tool_call_ids.is_empty() {
            return StepStop::Continue;
        }
        let reason = format!("enough after {:?}", step.tool_call_ids);
        if self.session {
            StepStop::EndSession { reason }
        } else {
            StepStop::EndTurn { reason }
        }
    }
}

#[tokio::test]
async fn stop_after_step_ends_the_turn_after_the_tools_ran() {
    let fixture = r#"{"prompts": [], "model": [
        {"text": "running", "tool_calls": [{"name": "bash", "arguments": {"command": "echo one"}}]},
        {"text": "next prompt"}
    ]}"#;
    let mut run = agent(fixture, vec![Arc::new(StopAfterFirst { session: false })]);
    let outcomes = send(&mut run, &["go", "again"]).await;
    assert_eq!(outcomes.len(), 2, "the next send still runs");
    assert_eq!(outcomes[0].reason, TurnEndReason::Stopped);
    assert_eq!(
        outcomes[0].message.as_deref(),
        Some("enough after [\"call_1\"]")
    );
    assert_eq!(outcomes[1].reason, TurnEndReason::Completed);
    let events = run.agent.events();
    assert!(
        events.iter().any(
            |e| matches!(&e.body, EventBody::ToolResult(ToolResultEvent { call_id, .. }) if call_id == "call_1")
        ),
        "the step's tools ran before the stop"
    );
    assert_eq!(
        notes(&events),
        vec![(SeamNoteKind::TurnEndRequested, "stopper".to_owned())]
    );
}

#[tokio::test]
async fn stop_after_step_can_end_the_session() {
    let mut run = agent(TWO_STEPS, vec![Arc::new(StopAfterFirst { session: true })]);
    let outcomes = send(&mut run, &["go", "never runs"]).await;
    assert_eq!(outcomes.len(), 1, "no further send runs");
    assert_eq!(outcomes[0].reason, TurnEndReason::Stopped);
    assert_eq!(
        run.agent.session_end_requested(),
        Some("enough after [\"call_1\"]")
    );
    assert_eq!(run.model.requests().len(), 1);
    assert_eq!(
        notes(&run.agent.events()),
        vec![(SeamNoteKind::SessionEndRequested, "stopper".to_owned())]
    );
}

/// After the first step: another model and another system prompt.
struct SwitchModel {
    to: Arc<dyn Model>,
}

#[async_trait]
impl Plugin for SwitchModel {
    fn name(&self) -> &str {
        "switcher"
    }
    async fn prepare_next_step(&self, _ctx: &SeamContext, step: &StepReport) -> NextStepUpdate {
        if step.step != 1 {
            return NextStepUpdate::default();
        }
        NextStepUpdate {
            model: Some(self.to.clone()),
            system_prompt: Some("a sharper system prompt".into()),
        }
    }
}

#[tokio::test]
async fn prepare_next_step_switches_the_model_and_system_prompt() {
    let other = Arc::new(ScriptedModel::new(
        "other",
        Fixture::parse(
            std::path::Path::new("other.json"),
            r#"{"prompts": [], "model": [{"text": "from the other model"}]}"#,
        )
        .unwrap()
        .script(),
    ));
    let first_only = r#"{"prompts": [], "model": [
        {"text": "running", "tool_calls": [{"name": "bash", "arguments": {"command": "echo one"}}]}
    ]}"#;
    let mut run = agent(
        first_only,
        vec![Arc::new(SwitchModel { to: other.clone() })],
    );
    let outcomes = send(&mut run, &["go"]).await;
    assert_eq!(outcomes[0].reason, TurnEndReason::Completed);
    assert_eq!(
        outcomes[0].final_text.as_deref(),
        Some("from the other model")
    );
    assert_eq!(run.model.requests().len(), 1);
    let asked = other.requests();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        asked[0].messages[0],
        Message::System {
            content: "a sharper system prompt".into()
        }
    );
    assert_eq!(
        notes(&run.agent.events()),
        vec![
            (SeamNoteKind::ModelSwitched, "switcher".to_owned()),
            (SeamNoteKind::SystemPromptReplaced, "switcher".to_owned())
        ]
    );
}

/// While the first step's tool runs, queues steering and follow-up messages.
struct Typist {
    steering: Mutex<Option<MessageQueue>>,
    follow_up: Mutex<Option<MessageQueue>>,
}

#[async_trait]
impl Plugin for Typist {
    fn name(&self) -> &str {
        "typist"
    }
    fn tool_result(&self, _ctx: &SeamContext, _exec: &ToolExecution, _outcome: &ToolOutcome) {
        if let Some(queue) = self.steering.lock().unwrap().take() {
            queue.push("steer A", "user");
            queue.push("steer B", "user");
        }
        if let Some(queue) = self.follow_up.lock().unwrap().take() {
            queue.push("follow 1", "user");
            queue.push("follow 2", "user");
        }
    }
}

async fn typed(modes: QueueModes, steps: &str) -> (Run, Vec<Vec<String>>) {
    let typist = Arc::new(Typist {
        steering: Mutex::new(None),
        follow_up: Mutex::new(None),
    });
    let mut run = agent(steps, vec![typist.clone()]);
    run.agent.set_queue_modes(modes);
    *typist.steering.lock().unwrap() = Some(run.agent.steering_queue());
    *typist.follow_up.lock().unwrap() = Some(run.agent.follow_up_queue());
    let outcomes = send(&mut run, &["go"]).await;
    assert_eq!(outcomes.len(), 1);
    assert_eq!(outcomes[0].reason, TurnEndReason::Completed);
    let seen = run.model.requests().iter().map(user_texts).collect();
    (run, seen)
}

#[tokio::test]
async fn queued_messages_all_at_once() {
    let steps = r#"{"prompts": [], "model": [
        {"text": "", "tool_calls": [{"name": "bash", "arguments": {"command": "true"}}]},
        {"text": "after steering"},
        {"text": "after follow-ups"}
    ]}"#;
    let (run, seen) = typed(QueueModes::default(), steps).await;
    assert_eq!(
        seen,
        vec![
            vec!["go"],
            vec!["go", "steer A", "steer B"],
            vec!["go", "steer A", "steer B", "follow 1", "follow 2"],
        ]
    );
    assert!(run.agent.steering_queue().is_empty());
    assert!(run.agent.follow_up_queue().is_empty());
}

#[tokio::test]
async fn queued_messages_one_at_a_time() {
    let steps = r#"{"prompts": [], "model": [
        {"text": "", "tool_calls": [{"name": "bash", "arguments": {"command": "true"}}]},
        {"text": "1"}, {"text": "2"}, {"text": "3"}, {"text": "4"}
    ]}"#;
    let modes = QueueModes {
        steering: QueueMode::OneAtATime,
        follow_up: QueueMode::OneAtATime,
    };
    let (_run, seen) = typed(modes, steps).await;
    let added: Vec<String> = seen
        .windows(2)
        .map(|pair| pair[1][pair[0].len()..].join("+"))
        .collect();
    assert_eq!(added, ["steer A", "steer B", "follow 1", "follow 2"]);
}

/// Records what the turn-failed seam is told.
#[derive(Default)]
struct FailureWatch {
    seen: Mutex<Vec<(u64, u64, FailureCategory, String)>>,
}

#[async_trait]
impl Plugin for FailureWatch {
    fn name(&self) -> &str {
        "watch"
    }
    async fn turn_failed(&self, _ctx: &SeamContext, failure: &TurnFailure) {
        self.seen.lock().unwrap().push((
            failure.turn,
            failure.step,
            failure.error.category(),
            failure.error.message.clone(),
        ));
    }
}

#[tokio::test]
async fn a_failed_request_fires_turn_failed_with_the_typed_category() {
    let fixture = r#"{"prompts": [], "model": [
        {"text": "", "tool_calls": [{"name": "bash", "arguments": {"command": "true"}}]},
        {"error": {"status": 429, "message": "slow down"}},
        {"text": "fine again"}
    ]}"#;
    let watch = Arc::new(FailureWatch::default());
    let mut run = agent(fixture, vec![watch.clone()]);
    let outcomes = send(&mut run, &["go", "retry"]).await;
    assert_eq!(outcomes[0].reason, TurnEndReason::Error);
    assert_eq!(outcomes[1].reason, TurnEndReason::Completed);
    assert_eq!(
        *watch.seen.lock().unwrap(),
        vec![(
            1,
            2,
            FailureCategory::RateLimit,
            "HTTP 429 from the provider: slow down".to_owned()
        )]
    );
}
