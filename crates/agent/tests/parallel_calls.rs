//! The calls of one model reply run at once through the real loop and the
//! built-in tools: post-execute fires as each call finishes, results stay in
//! call order, writes of one file keep their order, a `cd` runs alone, one
//! approval is open at a time, and a cancelled turn settles the calls that
//! had not started.

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use dsh_agent::{Agent, AgentParts, Fixture, Observers, QueuedPrompt, ScriptedModel};
use dsh_protocol::{Event, EventBody, SessionHeaderEvent, ToolResultEvent};
use dsh_seams::{
    ApprovalResponse, CancellationToken, Plugin, PostToolDecision, PreToolDecision, PreToolOutcome,
    PreToolVerdict, SeamContext, SessionEnv, SessionInfo, ToolExecution, ToolOutcome,
};
use dsh_session::SessionLog;
use dsh_tools::ApprovalService;

/// What a call was, as the recorder names it: its command or its file.
fn label(exec: &ToolExecution) -> String {
    let arguments = &exec.arguments;
    arguments["command"]
        .as_str()
        .or_else(|| arguments["file_path"].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// Records when each call's post-execute starts and ends; sleeps `pause`
/// in between. Optionally asks for approval of every call.
#[derive(Default)]
struct Recorder {
    seen: Mutex<Vec<String>>,
    pause: Duration,
    ask: bool,
}

impl Recorder {
    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

#[async_trait]
impl Plugin for Recorder {
    fn name(&self) -> &str {
        "recorder"
    }

    async fn pre_execute(
        &self,
        _ctx: &SeamContext,
        _exec: &ToolExecution,
        _review: Option<&PreToolVerdict>,
    ) -> PreToolOutcome {
        if !self.ask {
            return PreToolOutcome::allow();
        }
        PreToolOutcome {
            decision: PreToolDecision::Ask {
                reason: Some("asked".into()),
                suggestions: None,
            },
            contexts: Vec::new(),
        }
    }

    async fn post_execute(
        &self,
        _ctx: &SeamContext,
        exec: &ToolExecution,
        _outcome: &ToolOutcome,
        _duration: Duration,
    ) -> PostToolDecision {
        self.seen
            .lock()
            .unwrap()
            .push(format!("start {}", label(exec)));
        tokio::time::sleep(self.pause).await;
        self.seen
            .lock()
            .unwrap()
            .push(format!("end {}", label(exec)));
        PostToolDecision::accept()
    }
}

/// Approves every call after a pause, counting how many asks are open.
#[derive(Default)]
struct Person {
    open: Mutex<usize>,
    most_open: Mutex<usize>,
    asked: Mutex<Vec<String>>,
}

#[async_trait]
impl ApprovalService for Person {
    async fn request(&self, exec: &ToolExecution, _reason: Option<&str>) -> ApprovalResponse {
        {
            let mut open = self.open.lock().unwrap();
            *open += 1;
            let mut most = self.most_open.lock().unwrap();
            *most = (*most).max(*open);
        }
        self.asked.lock().unwrap().push(label(exec));
        tokio::time::sleep(Duration::from_millis(100)).await;
        *self.open.lock().unwrap() -= 1;
        ApprovalResponse::AllowedOnce
    }
}

struct Run {
    agent: Agent,
    dir: tempfile::TempDir,
}

/// An agent whose model makes `calls` (tool name, arguments) in one reply,
/// then answers "done".
fn agent(calls: serde_json::Value, plugin: Arc<Recorder>, person: Option<Arc<Person>>) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let script = serde_json::json!({"prompts": [], "model": [
        {"text": "running", "tool_calls": calls},
        {"text": "done"}
    ]});
    let fixture = Fixture::parse(std::path::Path::new("test.json"), &script.to_string()).unwrap();
    let model = Arc::new(ScriptedModel::new("test", fixture.script()));
    let log = SessionLog::in_memory(EventBody::SessionHeader(SessionHeaderEvent {
        session_id: "s".into(),
        cwd: dir.path().display().to_string(),
        version: "test".into(),
        notices: vec![],
        provider_api: None,
    }))
    .unwrap();
    let plugins: Vec<Arc<dyn Plugin>> = vec![plugin];
    let mut registry =
        dsh_agent::builtin_registry(&plugins, &dsh_tools::builtin::ProcessLayer::default());
    if let Some(person) = person {
        registry.set_approval(person);
    }
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
        registry,
        model,
        system_prompt: "system".into(),
        max_steps: 10,
        observers: Observers::default(),
    });
    Run { agent, dir }
}

async fn send(run: &mut Run, cancel: &CancellationToken) {
    run.agent.enqueue(QueuedPrompt {
        text: "go".into(),
        source: "user".into(),
    });
    run.agent.run_pending(cancel).await.unwrap();
}

/// The `tool/result` contents, in log order.
fn results(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolResult(ToolResultEvent { content, .. }) => Some(content.clone()),
            _ => None,
        })
        .collect()
}

fn bash(command: &str) -> serde_json::Value {
    serde_json::json!({"name": "bash", "arguments": {"command": command}})
}

fn write(path: &str, content: &str) -> serde_json::Value {
    serde_json::json!({"name": "write", "arguments": {"file_path": path, "content": content}})
}

#[tokio::test]
async fn post_execute_fires_as_each_call_finishes_and_results_keep_call_order() {
    let recorder = Arc::new(Recorder::default());
    let calls = serde_json::json!([bash("sleep 1; echo slow"), bash("echo fast")]);
    let mut run = agent(calls, recorder.clone(), None);
    let started = std::time::Instant::now();
    send(&mut run, &CancellationToken::new()).await;
    assert_eq!(
        recorder.seen(),
        [
            "start echo fast",
            "end echo fast",
            "start sleep 1; echo slow",
            "end sleep 1; echo slow"
        ]
    );
    assert_eq!(results(&run.agent.events()), ["slow", "fast"]);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn writes_of_one_file_keep_their_order_and_other_files_overlap() {
    let recorder = Arc::new(Recorder {
        pause: Duration::from_millis(300),
        ..Recorder::default()
    });
    let calls = serde_json::json!([write("a.txt", "one"), write("./a.txt", "two")]);
    let mut run = agent(calls, recorder.clone(), None);
    send(&mut run, &CancellationToken::new()).await;
    assert_eq!(
        recorder.seen(),
        ["start a.txt", "end a.txt", "start ./a.txt", "end ./a.txt"]
    );
    let text = std::fs::read_to_string(run.dir.path().join("a.txt")).unwrap();
    assert_eq!(text, "two");

    let recorder = Arc::new(Recorder {
        pause: Duration::from_millis(300),
        ..Recorder::default()
    });
    let calls = serde_json::json!([write("a.txt", "one"), write("b.txt", "two")]);
    let mut run = agent(calls, recorder.clone(), None);
    send(&mut run, &CancellationToken::new()).await;
    let seen = recorder.seen();
    assert!(
        seen[..2].iter().all(|s| s.starts_with("start")),
        "both run at once: {seen:?}"
    );
}

/// A command that moves the kept directory runs alone: the next call starts
/// where it ended.
#[tokio::test]
async fn a_cd_runs_alone_and_the_next_call_starts_where_it_ended() {
    let recorder = Arc::new(Recorder::default());
    let calls = serde_json::json!([bash("sleep 0.3; mkdir -p sub && cd sub"), bash("pwd")]);
    let mut run = agent(calls, recorder.clone(), None);
    send(&mut run, &CancellationToken::new()).await;
    let results = results(&run.agent.events());
    assert!(results[1].ends_with("/sub"), "{results:?}");
}

#[tokio::test]
async fn one_approval_is_open_at_a_time_in_call_order() {
    let recorder = Arc::new(Recorder {
        ask: true,
        ..Recorder::default()
    });
    let person = Arc::new(Person::default());
    let calls = serde_json::json!([bash("echo one"), bash("echo two"), bash("echo three")]);
    let mut run = agent(calls, recorder, Some(person.clone()));
    send(&mut run, &CancellationToken::new()).await;
    assert_eq!(*person.most_open.lock().unwrap(), 1);
    assert_eq!(
        *person.asked.lock().unwrap(),
        ["echo one", "echo two", "echo three"]
    );
    assert_eq!(results(&run.agent.events()), ["one", "two", "three"]);
}

/// Cancelled while the first call runs: it is interrupted, and the call that
/// waited for it (a `cd`, which runs alone) never starts.
#[tokio::test]
async fn a_cancelled_turn_settles_the_calls_that_had_not_started() {
    let recorder = Arc::new(Recorder::default());
    let calls = serde_json::json!([bash("sleep 5"), bash("cd / && echo never")]);
    let mut run = agent(calls, recorder.clone(), None);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        trigger.cancel();
    });
    let started = std::time::Instant::now();
    send(&mut run, &cancel).await;
    assert!(started.elapsed() < Duration::from_secs(4));
    let results = results(&run.agent.events());
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[1], "Interrupted by the user before this call ran.");
    assert!(!recorder.seen().iter().any(|s| s.contains("never")));
}
