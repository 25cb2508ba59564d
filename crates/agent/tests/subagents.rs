//! The `agent` tool's nested loop through the real loop: interleaved
//! fixture steps, the subagent seams and identity, and custom agent types.

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use dsh_agent::{Fixture, Observers, ReplayOptions, replay_fixture};
use dsh_protocol::{EventBody, Message, SessionHeaderEvent, ToolResultEvent, TurnEndReason};
use dsh_seams::{
    AgentDefinition, ContextEntry, ContinuationDecision, Plugin, PostToolDecision, SeamContext,
    SubagentStartInput, SubagentStopInput, ToolExecution, ToolOutcome,
};
use dsh_session::SessionLog;
use serde_json::json;

fn header() -> EventBody {
    EventBody::SessionHeader(SessionHeaderEvent {
        session_id: "s".into(),
        cwd: "/tmp".into(),
        version: "test".into(),
        notices: vec![],
        provider_api: None,
    })
}

fn options(dir: &std::path::Path, plugins: Vec<Arc<dyn Plugin>>) -> ReplayOptions {
    ReplayOptions {
        label: "test".to_owned(),
        cwd: dir.to_owned(),
        session_id: "s".to_owned(),
        log: SessionLog::in_memory(header()).unwrap(),
        resumed: false,
        plugins,
        processes: dsh_tools::builtin::ProcessLayer::default(),
        max_steps: 10,
        system_prompt: "parent prompt".to_owned(),
        observers: Observers::default(),
        prompt_limit: None,
        skip_prompts: 0,
        auto_compact: dsh_agent::AutoCompact::default(),
        extra_tools: Vec::new(),
        tools: dsh_tools::builtin::BuiltinSelection::All,
        setup: None,
        project: Default::default(),
    }
}

/// Records what it sees and forces one extra subagent turn.
#[derive(Default)]
struct Probe {
    seen: Mutex<Vec<String>>,
    definitions: Vec<AgentDefinition>,
}

impl Probe {
    fn note(&self, ctx: &SeamContext, what: &str) {
        let who = ctx
            .agent
            .as_ref()
            .map_or("parent".to_owned(), |agent| agent.agent_type.clone());
        self.seen.lock().unwrap().push(format!("{who}:{what}"));
    }
}

#[async_trait]
impl Plugin for Probe {
    fn name(&self) -> &str {
        "probe"
    }

    fn agent_definitions(&self) -> Vec<AgentDefinition> {
        self.definitions.clone()
    }

    async fn subagent_start(
        &self,
        ctx: &SeamContext,
        input: &SubagentStartInput,
    ) -> Vec<ContextEntry> {
        self.note(ctx, &format!("start {}", input.prompt));
        vec![ContextEntry::new("START-CTX", "probe")]
    }

    async fn post_execute(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        _outcome: &ToolOutcome,
        _duration: std::time::Duration,
    ) -> PostToolDecision {
        self.note(ctx, &format!("post {}", exec.tool));
        PostToolDecision::accept()
    }

    async fn subagent_stop(
        &self,
        ctx: &SeamContext,
        input: &SubagentStopInput,
    ) -> ContinuationDecision {
        self.note(
            ctx,
            &format!(
                "stop {} active={}",
                input.last_assistant_message, input.stop_hook_active
            ),
        );
        if input.stop_hook_active {
            ContinuationDecision::Stop
        } else {
            ContinuationDecision::Continue {
                reason: Some("CHECK AGAIN".to_owned()),
                source: "probe".to_owned(),
                contexts: Vec::new(),
            }
        }
    }
}

#[tokio::test]
async fn a_subagent_runs_nested_with_interleaved_steps_and_its_own_seams() {
    let dir = tempfile::tempdir().unwrap();
    let probe = Arc::new(Probe::default());
    let fixture: Fixture = serde_json::from_value(json!({
        "prompts": ["delegate"],
        "model": [
            {"tool_calls": [{"id": "t1", "name": "agent",
                "arguments": {"description": "d", "prompt": "Run echo sub"}}]},
            {"tool_calls": [{"id": "t2", "name": "bash", "arguments": {"command": "echo sub"}}]},
            {"text": "first answer"},
            {"text": "SUB DONE"},
            {"text": "PARENT DONE"}
        ]
    }))
    .unwrap();
    let output = replay_fixture(&fixture, options(dir.path(), vec![probe.clone()]))
        .await
        .unwrap();
    assert_eq!(output.outcomes[0].reason, TurnEndReason::Completed);
    assert_eq!(
        output.outcomes[0].final_text.as_deref(),
        Some("PARENT DONE")
    );

    // Five requests in the order they were made: parent, three nested, parent.
    let firsts: Vec<String> = output
        .requests
        .iter()
        .map(|r| match &r.messages[1] {
            Message::User { content } => content.clone(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        firsts,
        [
            "delegate",
            "Run echo sub",
            "Run echo sub",
            "Run echo sub",
            "delegate"
        ]
    );
    // The nested conversation: its own system prompt, the task, the start
    // context; no `agent` tool on offer.
    let nested = &output.requests[1];
    assert_eq!(
        nested.messages[0],
        Message::System {
            content: dsh_agent::GENERAL_PURPOSE_PROMPT.to_owned()
        }
    );
    assert_eq!(
        nested.messages[2],
        Message::System {
            content: "START-CTX".to_owned()
        }
    );
    assert!(nested.tools.iter().all(|tool| tool != "agent"));
    assert!(output.requests[0].tools.iter().any(|t| t == "agent"));
    // The forced continuation reached the subagent as a user message.
    assert_eq!(
        output.requests[3].messages.last().unwrap(),
        &Message::User {
            content: "CHECK AGAIN".to_owned()
        }
    );
    // The parent sees only the final text, as the agent call's result.
    let last = &output.requests[4].messages;
    assert_eq!(
        last.last().unwrap(),
        &Message::Tool {
            tool_call_id: "t1".to_owned(),
            content: "SUB DONE".to_owned(),
            is_error: false,
            blocks: None,
        }
    );

    // Seams inside carry the identity; the parent's post-execute comes last.
    assert_eq!(
        *probe.seen.lock().unwrap(),
        [
            "general-purpose:start Run echo sub",
            "general-purpose:post bash",
            "general-purpose:stop first answer active=false",
            "general-purpose:stop SUB DONE active=true",
            "parent:post agent",
        ]
    );
    // Every nested event is tagged with one well-formed agent id.
    let tags: std::collections::BTreeSet<&str> = output
        .events
        .iter()
        .filter_map(|e| e.agent_id.as_deref())
        .collect();
    assert_eq!(tags.len(), 1);
    assert!(dsh_seams::AgentIdentity::is_valid_id(tags.first().unwrap()));
}

#[tokio::test]
async fn custom_agent_types_limit_tools_and_unknown_types_fail() {
    let dir = tempfile::tempdir().unwrap();
    let probe = Arc::new(Probe {
        seen: Mutex::default(),
        definitions: vec![AgentDefinition {
            name: "reviewer".to_owned(),
            description: "reviews".to_owned(),
            system_prompt: "You review.".to_owned(),
            tools: Some(vec!["read".to_owned()]),
            model: None,
            source: dir.path().join("reviewer.md"),
        }],
    });
    let fixture: Fixture = serde_json::from_value(json!({
        "prompts": ["delegate"],
        "model": [
            {"tool_calls": [
                {"id": "t1", "name": "agent",
                 "arguments": {"description": "d", "prompt": "p", "subagent_type": "nobody"}},
                {"id": "t2", "name": "agent",
                 "arguments": {"description": "d", "prompt": "review", "subagent_type": "reviewer"}}
            ]},
            {"text": "first"},
            {"text": "reviewed"},
            {"text": "PARENT DONE"}
        ]
    }))
    .unwrap();
    let output = replay_fixture(&fixture, options(dir.path(), vec![probe.clone()]))
        .await
        .unwrap();
    assert_eq!(output.outcomes[0].reason, TurnEndReason::Completed);
    let results: Vec<(String, bool, String)> = output
        .events
        .iter()
        .filter(|e| e.agent_id.is_none())
        .filter_map(|e| match &e.body {
            EventBody::ToolResult(ToolResultEvent {
                call_id,
                is_error,
                content,
                ..
            }) => Some((call_id.clone(), *is_error, content.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        [
            (
                "t1".to_owned(),
                true,
                "agent: unknown agent type `nobody`; available: general-purpose, reviewer"
                    .to_owned()
            ),
            ("t2".to_owned(), false, "reviewed".to_owned()),
        ]
    );
    let nested = &output.requests[1];
    assert_eq!(
        nested.messages[0],
        Message::System {
            content: "You review.".to_owned()
        }
    );
    let names: Vec<&str> = nested.tools.iter().map(|t| t.as_str()).collect();
    assert_eq!(names, ["read"]);
}

#[tokio::test]
async fn cancelling_the_turn_reaches_the_nested_loop_and_its_tools() {
    let dir = tempfile::tempdir().unwrap();
    let fixture: Fixture = serde_json::from_value(json!({
        "prompts": ["delegate"],
        "model": [
            {"tool_calls": [{"id": "t1", "name": "agent",
                "arguments": {"description": "d", "prompt": "wait"}}]},
            {"tool_calls": [{"id": "t2", "name": "bash", "arguments": {"command": "sleep 30"}}]},
            {"text": "never"},
            {"text": "never either"}
        ]
    }))
    .unwrap();
    let stop = dsh_seams::CancellationToken::new();
    let trigger = stop.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        trigger.cancel();
    });
    let started = std::time::Instant::now();
    let output = dsh_agent::replay_fixture_until(&fixture, options(dir.path(), Vec::new()), stop)
        .await
        .unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(output.outcomes[0].reason, TurnEndReason::Interrupted);
    // The nested bash call and the outer agent call both end with a result.
    let results: Vec<(Option<String>, String, bool)> = output
        .events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolResult(ToolResultEvent {
                call_id, is_error, ..
            }) => Some((e.agent_id.clone(), call_id.clone(), *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results[0].0.is_some() && results[0].1 == "t2" && results[0].2);
    assert!(results[1].0.is_none() && results[1].1 == "t1" && results[1].2);
    // Only two model requests were made: the parent's and the subagent's first.
    assert_eq!(output.requests.len(), 2);
}
