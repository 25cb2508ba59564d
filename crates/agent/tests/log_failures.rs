//! What the loop does when the log fails mid-turn or the provider repeats a
//! tool call id: the turn always ends inside the log.

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use dsh_agent::{Fixture, Observers, ReplayOptions, replay_fixture};
use dsh_protocol::{
    AssistantMessageEvent, EventBody, SessionHeaderEvent, ToolCallEvent, ToolResultEvent,
    TurnEndEvent, TurnEndReason,
};
use dsh_session::{LogWriter, SessionLog, load};
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

fn options(dir: &std::path::Path, log: SessionLog) -> ReplayOptions {
    ReplayOptions {
        label: "test".to_owned(),
        cwd: dir.to_owned(),
        session_id: "s".to_owned(),
        log,
        resumed: false,
        plugins: Vec::new(),
        processes: dsh_tools::builtin::ProcessLayer::default(),
        max_steps: 10,
        system_prompt: "test".to_owned(),
        observers: Observers::default(),
        prompt_limit: None,
        skip_prompts: 0,
        auto_compact: dsh_agent::AutoCompact::default(),
        project: Default::default(),
        extra_tools: Vec::new(),
        tools: dsh_tools::builtin::BuiltinSelection::All,
        setup: None,
    }
}

/// Fails the first write of a line containing `needle` half-way with ENOSPC.
#[derive(Debug)]
struct FailOn {
    file: std::fs::File,
    needle: &'static str,
    fired: Arc<AtomicBool>,
}

impl LogWriter for FailOn {
    fn write_line(&mut self, line: &[u8]) -> std::io::Result<()> {
        let text = String::from_utf8_lossy(line);
        if text.contains(self.needle) && !self.fired.swap(true, Ordering::SeqCst) {
            self.file.write_all(&line[..line.len() / 2])?;
            return Err(std::io::Error::from_raw_os_error(28));
        }
        self.file.write_all(line)
    }
    fn truncate_to(&mut self, len: u64) -> std::io::Result<()> {
        self.file.truncate_to(len)
    }
}

#[tokio::test]
async fn a_failed_append_ends_the_turn_error_and_the_log_stays_readable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let fired = Arc::new(AtomicBool::new(false));
    let writer = FailOn {
        file: std::fs::File::create(&path).unwrap(),
        needle: "\"type\":\"tool/result\"",
        fired: Arc::clone(&fired),
    };
    let log = SessionLog::over_writer(&path, Box::new(writer), header()).unwrap();
    let fixture: Fixture = serde_json::from_value(json!({
        "prompts": ["go", "and again"],
        "model": [
            {"text": "running", "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]},
            {"text": "second turn"}
        ]
    }))
    .unwrap();
    let output = replay_fixture(&fixture, options(dir.path(), log))
        .await
        .unwrap();
    assert!(fired.load(Ordering::SeqCst), "the failure was injected");
    assert_eq!(output.outcomes[0].reason, TurnEndReason::Error);
    let message = output.outcomes[0].message.clone().unwrap();
    assert!(message.contains("session log failed"), "{message}");
    assert_eq!(output.outcomes[0].final_text.as_deref(), Some("running"));
    // The next turn runs on a log that still records everything.
    assert_eq!(output.outcomes[1].reason, TurnEndReason::Completed);
    let loaded = load(&path).unwrap();
    assert_eq!(loaded.torn_tail, None);
    assert_eq!(loaded.events, output.events);
    let first_end = loaded
        .events
        .iter()
        .find_map(|event| match &event.body {
            EventBody::TurnEnd(TurnEndEvent {
                turn: 1, reason, ..
            }) => Some(*reason),
            _ => None,
        })
        .unwrap();
    assert_eq!(first_end, TurnEndReason::Error);
}

#[tokio::test]
async fn repeated_call_ids_are_renamed_and_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let log = SessionLog::in_memory(header()).unwrap();
    let fixture: Fixture = serde_json::from_value(json!({
        "prompts": ["go"],
        "model": [
            {"text": "two calls, one id", "tool_calls": [
                {"id": "call_1", "name": "bash", "arguments": {"command": "echo first"}},
                {"id": "call_1", "name": "bash", "arguments": {"command": "echo second"}}
            ]},
            {"text": "done"}
        ]
    }))
    .unwrap();
    let output = replay_fixture(&fixture, options(dir.path(), log))
        .await
        .unwrap();
    assert_eq!(output.outcomes[0].reason, TurnEndReason::Completed);
    let assistant = output
        .events
        .iter()
        .find_map(|event| match &event.body {
            EventBody::AssistantMessage(AssistantMessageEvent { tool_calls, .. })
                if !tool_calls.is_empty() =>
            {
                Some(tool_calls.clone())
            }
            _ => None,
        })
        .unwrap();
    let ids: Vec<&str> = assistant.iter().map(|call| call.id.as_str()).collect();
    assert_eq!(ids, ["call_1", "call_1~2"]);
    let calls: Vec<(String, Option<String>)> = output
        .events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolCall(ToolCallEvent {
                call_id,
                provider_call_id,
                ..
            }) => Some((call_id.clone(), provider_call_id.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("call_1".to_owned(), None),
            ("call_1~2".to_owned(), Some("call_1".to_owned()))
        ]
    );
    let results: Vec<String> = output
        .events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolResult(ToolResultEvent { content, .. }) => Some(content.clone()),
            _ => None,
        })
        .collect();
    assert!(
        results[0].contains("first") && results[1].contains("second"),
        "{results:?}"
    );
}
