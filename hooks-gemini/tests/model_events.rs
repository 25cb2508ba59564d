//! The model events through the Gemini plugin with real hook processes: the
//! projects of `fixtures/gemini/model/` (their `.gemini/settings.json` and
//! `hook.sh`, which answers as the captured hooks did), a hand-built
//! SeamContext and a recording SessionSink.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use dsh_hook_runner::{HookRunner, RunnerConfig};
use dsh_hooks_gemini::config::GeminiDiscovery;
use dsh_hooks_gemini::load;
use dsh_protocol::{
    EventBody, HookInvokedEvent, Message, ModelReply, ModelRequest, ToolCall, ToolSpec,
};
use dsh_seams::{
    CancellationToken, Plugin, ProviderRequestDecision, SeamContext, SessionEnv, SessionInfo,
    SessionSink, TurnControl, UserNotice,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

#[derive(Default)]
struct Recorder {
    events: Mutex<Vec<EventBody>>,
    notices: Mutex<Vec<UserNotice>>,
}

impl SessionSink for Recorder {
    fn record(&self, body: EventBody) {
        self.events.lock().unwrap().push(body);
    }
    fn tell_user(&self, notice: UserNotice) {
        self.notices.lock().unwrap().push(notice);
    }
}

fn scenarios() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/gemini/model")
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

struct Harness {
    _tmp: tempfile::TempDir,
    recorder: Arc<Recorder>,
    ctx: SeamContext,
    plugin: Arc<dyn Plugin>,
}

fn harness(scenario: &str) -> Harness {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let project = tmp.path().join("project");
    std::fs::create_dir_all(&home).unwrap();
    copy_tree(&scenarios().join(scenario).join("project"), &project);
    std::fs::copy(scenarios().join("hook.sh"), project.join(".gemini/hook.sh")).unwrap();
    let mut discovery = GeminiDiscovery::new(&project, &home);
    discovery.trust_workspace = true;
    let plugin = load(&discovery)
        .unwrap()
        .into_plugin(HookRunner::new(RunnerConfig::default()));
    let recorder = Arc::new(Recorder::default());
    let ctx = SeamContext {
        session: Arc::new(SessionInfo {
            session_id: "s-1".into(),
            cwd: project,
            model: "gemini-3.8-flash".into(),
            log_path: None,
            env: SessionEnv::default(),
            interactive: false,
        }),
        turn: Some(1),
        cancel: CancellationToken::new(),
        sink: recorder.clone(),
        control: TurnControl::default(),
        agent: None,
        subagents: None,
    };
    Harness {
        _tmp: tmp,
        recorder,
        ctx,
        plugin,
    }
}

impl Harness {
    /// (event, stdin) of every hook run, in order.
    fn invoked(&self) -> Vec<(String, Value)> {
        self.recorder
            .events
            .lock()
            .unwrap()
            .iter()
            .filter_map(|event| match event {
                EventBody::HookInvoked(HookInvokedEvent { event, input, .. }) => {
                    Some((event.clone(), input.clone()))
                }
                _ => None,
            })
            .map(|(event, input)| (event, serde_json::from_str(input.text()).unwrap()))
            .collect()
    }
}

fn request(step: u64, messages: Vec<Message>) -> ModelRequest {
    let mut all = vec![Message::System {
        content: "dsh system prompt".into(),
    }];
    all.extend(messages);
    ModelRequest {
        turn: 1,
        step,
        messages: all,
        tools: ["bash", "read", "write", "edit", "glob", "grep"]
            .map(|name| ToolSpec {
                name: name.into(),
                description: String::new(),
                input_schema: json!({}),
            })
            .to_vec(),
        model: None,
    }
}

fn user(text: &str) -> Message {
    Message::User {
        content: text.into(),
    }
}

#[tokio::test]
async fn bm_deny_exit2_blocks_with_the_stderr_reason() {
    let h = harness("bm_deny_exit2");
    let decision = h
        .plugin
        .before_provider_request(&h.ctx, &request(1, vec![user("Just say something")]))
        .await;
    assert_eq!(
        decision,
        ProviderRequestDecision::Block {
            reason: "Agent execution blocked: BM-EXIT2: model call refused".into()
        }
    );
    let invoked = h.invoked();
    assert_eq!(invoked.len(), 1);
    let (event, input) = &invoked[0];
    assert_eq!(event, "BeforeModel");
    let keys: Vec<&String> = input.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        vec![
            "session_id",
            "transcript_path",
            "cwd",
            "hook_event_name",
            "timestamp",
            "llm_request"
        ]
    );
    assert_eq!(
        input["llm_request"],
        json!({"model": "gemini-3.8-flash",
               "messages": [{"role": "user", "content": "Just say something"}],
               "config": {}})
    );
}

#[tokio::test]
async fn bm_modify_request_rewrites_the_request_and_tool_selection_sees_it() {
    let h = harness("bm_modify_request");
    let first = request(1, vec![user("Please run echo hi")]);
    let decision = h.plugin.before_provider_request(&h.ctx, &first).await;
    let ProviderRequestDecision::Replace(sent) = decision else {
        panic!("expected a replacement, got {decision:?}");
    };
    assert_eq!(sent.messages[1], user("REWRITTEN-PROMPT by BeforeModel"));
    assert_eq!(sent.tools, first.tools, "the recorder selects nothing");
    let invoked = h.invoked();
    let events: Vec<&str> = invoked.iter().map(|(e, _)| e.as_str()).collect();
    assert_eq!(events, vec!["BeforeModel", "BeforeToolSelection"]);
    assert_eq!(
        invoked[1].1["llm_request"]["messages"],
        json!([{"role": "user", "content": "REWRITTEN-PROMPT by BeforeModel"}])
    );
    {
        let notices = h.recorder.notices.lock().unwrap();
        assert!(
            notices.iter().any(|n| n.text.contains("temperature")),
            "the ignored sampling setting is named: {notices:?}"
        );
    }

    // The second request: the hook answers nothing, the request is kept.
    let second = request(
        2,
        vec![
            user("Please run echo hi"),
            Message::Assistant {
                content: "I'll run it.".into(),
                tool_calls: vec![ToolCall {
                    id: "call_1".into(),
                    name: "bash".into(),
                    arguments: json!({"command": "echo hi"}),
                }],
                thinking: None,
            },
            Message::Tool {
                tool_call_id: "call_1".into(),
                content: "hi".into(),
                is_error: false,
                blocks: None,
            },
        ],
    );
    assert_eq!(
        h.plugin.before_provider_request(&h.ctx, &second).await,
        ProviderRequestDecision::Keep
    );
    assert_eq!(
        h.invoked()[2].1["llm_request"]["messages"],
        json!([{"role": "user", "content": "Please run echo hi"},
               {"role": "model", "content": "I'll run it."}])
    );
}

#[tokio::test]
async fn bts_allowed_names_offers_the_union() {
    let h = harness("bts_allowed_names");
    let decision = h
        .plugin
        .before_provider_request(&h.ctx, &request(1, vec![user("Please run echo hi")]))
        .await;
    let ProviderRequestDecision::Replace(sent) = decision else {
        panic!("expected a replacement, got {decision:?}");
    };
    let tools: Vec<&str> = sent.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, vec!["read", "glob"]);
    assert_eq!(
        sent.messages,
        request(1, vec![user("Please run echo hi")]).messages
    );
}

#[tokio::test]
async fn am_replace_response_sees_the_whole_reply_and_keeps_it() {
    let h = harness("am_replace_response");
    let sent = request(1, vec![user("Please run echo hi")]);
    let reply = ModelReply {
        text: "ORIGINAL TEXT with secret-1234".into(),
        tool_calls: Vec::new(),
        usage: None,
        thinking: None,
    };
    h.plugin
        .after_model_request(&h.ctx, &sent, Ok(&reply))
        .await;
    let invoked = h.invoked();
    assert_eq!(invoked.len(), 1);
    assert_eq!(
        invoked[0].1["llm_response"],
        json!({"text": "ORIGINAL TEXT with secret-1234",
               "candidates": [{"content": {"role": "model", "parts": ["ORIGINAL TEXT with secret-1234"]},
                               "finishReason": "STOP", "index": 0}],
               "usageMetadata": {"promptTokenCount": 0, "candidatesTokenCount": 0, "totalTokenCount": 0}})
    );
    let notices = h.recorder.notices.lock().unwrap();
    assert!(
        notices
            .iter()
            .any(|n| n.text == "the reply is shown as: REDACTED-A "),
        "{notices:?}"
    );
}
