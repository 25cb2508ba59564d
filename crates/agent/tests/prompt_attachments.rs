//! Prompt attachments (`Agent::attach_to_next_prompt`, an `@path`
//! mention's file): the prompt-submit seam sees the prompt as typed, the
//! model gets the attachment as a durable `context/message` after the
//! `user/message`, and a blocked prompt drops what was attached to it.

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use dsh_agent::{
    Agent, AgentParts, Fixture, Observers, QueuedPrompt, ScriptedModel, builtin_registry,
};
use dsh_protocol::{ContextMessageEvent, EventBody, Message, SessionHeaderEvent, TurnEndReason};
use dsh_seams::{
    CancellationToken, ContextEntry, Plugin, PromptDecision, PromptInput, SeamContext, SessionEnv,
    SessionInfo,
};
use dsh_session::SessionLog;

/// Records what the prompt-submit seam sees; blocks prompts with "forbidden".
#[derive(Default)]
struct Gatekeeper {
    seen: Mutex<Vec<String>>,
}

#[async_trait]
impl Plugin for Gatekeeper {
    fn name(&self) -> &str {
        "gatekeeper"
    }

    async fn prompt_submit(&self, _ctx: &SeamContext, prompt: &PromptInput) -> PromptDecision {
        self.seen.lock().unwrap().push(prompt.content.clone());
        if prompt.content.contains("forbidden") {
            PromptDecision::Block {
                reason: "not this one".into(),
            }
        } else {
            PromptDecision::allow()
        }
    }
}

#[tokio::test]
async fn attachments_follow_the_typed_prompt_and_a_blocked_prompt_drops_them() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Fixture::parse(
        std::path::Path::new("test.json"),
        r#"{"prompts": [], "model": [{"text": "a"}, {"text": "b"}]}"#,
    )
    .unwrap();
    let model = Arc::new(ScriptedModel::new("test", fixture.script()));
    let gatekeeper = Arc::new(Gatekeeper::default());
    let plugins: Vec<Arc<dyn Plugin>> = vec![gatekeeper.clone()];
    let log = SessionLog::in_memory(EventBody::SessionHeader(SessionHeaderEvent {
        session_id: "s".into(),
        cwd: dir.path().display().to_string(),
        version: "test".into(),
        notices: vec![],
        provider_api: None,
    }))
    .unwrap();
    let mut agent = Agent::new(AgentParts {
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
        observers: Observers::default(),
    });
    let mut turn = async |text: &str, attached: Option<&str>| {
        if let Some(content) = attached {
            agent.attach_to_next_prompt([ContextEntry::new(content, "mention:x")]);
        }
        agent
            .run_turn(
                QueuedPrompt {
                    text: text.into(),
                    source: "user".into(),
                },
                CancellationToken::new(),
            )
            .await
            .unwrap()
            .reason
    };
    assert_eq!(
        turn("forbidden @x", Some("BLOCKED FILE")).await,
        TurnEndReason::Rejected
    );
    assert_eq!(turn("plain", None).await, TurnEndReason::Completed);
    assert_eq!(
        turn("read @x", Some("ATTACHED FILE")).await,
        TurnEndReason::Completed
    );

    // The seam saw every prompt as typed.
    assert_eq!(
        *gatekeeper.seen.lock().unwrap(),
        ["forbidden @x", "plain", "read @x"]
    );
    let events = agent.events();
    let contexts: Vec<(&str, &str)> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ContextMessage(ContextMessageEvent {
                content, source, ..
            }) => Some((content.as_str(), source.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(contexts, [("ATTACHED FILE", "mention:x")]);
    // The model saw the attachment right after the prompt, on the last request only.
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let has_file = |request: &dsh_protocol::RequestRecord| {
        request
            .messages
            .iter()
            .any(|m| matches!(m, Message::System { content } if content == "ATTACHED FILE"))
    };
    assert!(!has_file(&requests[0]));
    assert!(has_file(&requests[1]));
    let last_two: Vec<&Message> = requests[1].messages.iter().rev().take(2).collect();
    assert!(
        matches!(last_two[1], Message::User { content } if content == "read @x"),
        "{last_two:?}"
    );
}
