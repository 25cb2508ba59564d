//! One test per session-log rule.

use std::io::Write;

use dsh_protocol::{
    AssistantMessageEvent, ContextMessageEvent, EventBody, HookInvokedEvent, Message,
    ModelSwitchedEvent, PromptBlockedEvent, SessionHeaderEvent, SteeringMessageEvent, ToolCall,
    ToolCallEvent, ToolResultEvent, TurnEndEvent, TurnEndReason, TurnStartEvent, UserMessageEvent,
};
use dsh_session::{LogError, SessionLog, derive_messages, load};
use serde_json::json;

fn header() -> EventBody {
    EventBody::SessionHeader(SessionHeaderEvent {
        session_id: "s1".into(),
        cwd: "/tmp".into(),
        version: "test".into(),
        notices: vec![],
        provider_api: None,
    })
}

fn call(id: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: "bash".into(),
        arguments: json!({"command": "true"}),
    }
}

fn tool_call(turn: u64, id: &str) -> EventBody {
    EventBody::ToolCall(ToolCallEvent {
        turn,
        call_id: id.into(),
        execution_id: format!("x-{id}"),
        parent_execution_id: None,
        tool: "bash".into(),
        arguments: json!({"command": "true"}),
        original_arguments: None,
        rewritten_by: None,
        rewrite_conflicts: vec![],
        provider_call_id: None,
        origin: None,
    })
}

fn tool_result(turn: u64, id: &str) -> EventBody {
    EventBody::ToolResult(ToolResultEvent {
        turn,
        call_id: id.into(),
        is_error: false,
        content: "ok".into(),
        disposition: None,
        decided_by: None,
        rewrite: None,
        content_blocks: None,
        shown_input: None,
    })
}

fn assistant(turn: u64, calls: Vec<ToolCall>) -> EventBody {
    EventBody::AssistantMessage(AssistantMessageEvent {
        turn,
        step: 1,
        content: "hi".into(),
        tool_calls: calls,
        usage: None,
        thinking: None,
    })
}

fn user(turn: u64) -> EventBody {
    EventBody::UserMessage(UserMessageEvent {
        turn,
        content: "hello".into(),
        source: "user".into(),
        original_content: None,
    })
}

fn end(turn: u64) -> EventBody {
    EventBody::TurnEnd(TurnEndEvent {
        turn,
        reason: TurnEndReason::Completed,
        message: None,
    })
}

fn is_invariant(result: Result<impl Sized, LogError>) -> bool {
    matches!(result, Err(LogError::Invariant { .. }))
}

#[test]
fn header_must_come_first() {
    let mut log = SessionLog::in_memory(header()).unwrap();
    assert!(is_invariant(log.append(header())));
}

#[test]
fn events_outside_a_turn_are_refused() {
    let mut log = SessionLog::in_memory(header()).unwrap();
    assert!(is_invariant(log.append(user(1))));
}

#[test]
fn session_scoped_hook_records_are_allowed_outside_turns() {
    let mut log = SessionLog::in_memory(header()).unwrap();
    log.append(EventBody::HookInvoked(HookInvokedEvent {
        turn: None,
        invocation_id: "h1".into(),
        dialect: dsh_protocol::Dialect::Claude,
        event: "SessionStart".into(),
        seam: dsh_protocol::Seam::SessionStart,
        matcher: None,
        origin: None,
        command: "true".into(),
        input: dsh_protocol::ExactJson::of(&json!({})),
        call_id: None,
    }))
    .unwrap();
}

#[test]
fn turns_balance_and_number_in_sequence() {
    let mut log = SessionLog::in_memory(header()).unwrap();
    assert!(is_invariant(
        log.append(EventBody::TurnStart(TurnStartEvent { turn: 2 }))
    ));
    log.append(EventBody::TurnStart(TurnStartEvent { turn: 1 }))
        .unwrap();
    assert!(is_invariant(
        log.append(EventBody::TurnStart(TurnStartEvent { turn: 2 }))
    ));
    assert!(is_invariant(log.append(end(2))));
    log.append(end(1)).unwrap();
    assert!(is_invariant(log.append(end(1))));
    log.append(EventBody::TurnStart(TurnStartEvent { turn: 2 }))
        .unwrap();
}

#[test]
fn tool_results_follow_their_batch_of_calls() {
    let mut log = SessionLog::in_memory(header()).unwrap();
    log.append(EventBody::TurnStart(TurnStartEvent { turn: 1 }))
        .unwrap();
    log.append(user(1)).unwrap();
    log.append(assistant(1, vec![call("a"), call("b")]))
        .unwrap();
    log.append(tool_call(1, "a")).unwrap();
    // A result before every call of the batch is sealed is refused.
    assert!(is_invariant(log.append(tool_result(1, "a"))));
    // A call the model never made is refused.
    assert!(is_invariant(log.append(tool_call(1, "zzz"))));
    log.append(tool_call(1, "b")).unwrap();
    log.append(tool_result(1, "a")).unwrap();
    // Surface events cannot interleave with the batch's results.
    assert!(is_invariant(log.append(EventBody::ContextMessage(
        ContextMessageEvent {
            turn: 1,
            content: "x".into(),
            source: "p".into()
        }
    ))));
    // The turn cannot end with an unresolved call.
    assert!(is_invariant(log.append(end(1))));
    log.append(tool_result(1, "b")).unwrap();
    assert!(is_invariant(log.append(tool_result(1, "b"))));
    log.append(end(1)).unwrap();
}

#[test]
fn seq_is_gap_free() {
    let mut log = SessionLog::in_memory(header()).unwrap();
    log.append(EventBody::TurnStart(TurnStartEvent { turn: 1 }))
        .unwrap();
    let _ = log.append(end(7));
    log.append(end(1)).unwrap();
    let seqs: Vec<u64> = log.events().iter().map(|e| e.seq).collect();
    assert_eq!(seqs, vec![0, 1, 2]);
}

#[test]
fn acknowledged_events_are_on_disk_immediately() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let mut log = SessionLog::create(&path, header()).unwrap();
    log.append(EventBody::TurnStart(TurnStartEvent { turn: 1 }))
        .unwrap();
    // Read the file while the log is still open (no drop, no explicit flush).
    let loaded = load(&path).unwrap();
    assert_eq!(loaded.events.len(), 2);
    assert!(loaded.torn_tail.is_none());
}

#[test]
fn torn_tail_is_reported_not_parsed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    {
        let mut log = SessionLog::create(&path, header()).unwrap();
        log.append(EventBody::TurnStart(TurnStartEvent { turn: 1 }))
            .unwrap();
    }
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(br#"{"type":"turn/end","seq":2,"ts":"x","turn":1,"reas"#)
        .unwrap();
    let loaded = load(&path).unwrap();
    assert_eq!(loaded.events.len(), 2);
    let torn = loaded.torn_tail.unwrap();
    assert_eq!(torn.line, 3);
}

#[test]
fn complete_but_unterminated_last_line_is_torn() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    {
        SessionLog::create(&path, header()).unwrap();
    }
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(br#"{"type":"turn/start","seq":1,"ts":"x","turn":1}"#)
        .unwrap();
    let loaded = load(&path).unwrap();
    assert_eq!(loaded.events.len(), 1);
    assert!(loaded.torn_tail.is_some());
}

#[test]
fn corrupt_middle_line_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    {
        let mut log = SessionLog::create(&path, header()).unwrap();
        log.append(EventBody::TurnStart(TurnStartEvent { turn: 1 }))
            .unwrap();
    }
    let text = std::fs::read_to_string(&path).unwrap();
    let broken = text.replacen("turn/start", "turn/stort", 1);
    std::fs::write(&path, broken).unwrap();
    let err = load(&path).unwrap_err().to_string();
    assert!(err.contains("s.jsonl:2"), "{err}");
}

#[test]
fn resume_reopens_and_appends_after_cutting_a_torn_tail() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    {
        let mut log = SessionLog::create(&path, header()).unwrap();
        log.append(EventBody::TurnStart(TurnStartEvent { turn: 1 }))
            .unwrap();
        log.append(end(1)).unwrap();
    }
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(b"{\"type\":\"tur").unwrap();
    let (mut log, torn) = SessionLog::open(&path).unwrap();
    assert!(torn.is_some());
    assert_eq!(log.last_turn(), 1);
    log.append(EventBody::TurnStart(TurnStartEvent { turn: 2 }))
        .unwrap();
    let loaded = load(&path).unwrap();
    assert!(loaded.torn_tail.is_none());
    assert_eq!(loaded.events.len(), 4);
    assert_eq!(loaded.events[3].seq, 3);
}

#[test]
fn derive_messages_skips_non_surface_events() {
    let mut log = SessionLog::in_memory(header()).unwrap();
    log.append(EventBody::TurnStart(TurnStartEvent { turn: 1 }))
        .unwrap();
    log.append(EventBody::PromptBlocked(PromptBlockedEvent {
        turn: 1,
        content: "secret".into(),
        source: "user".into(),
        reason: "no".into(),
    }))
    .unwrap();
    log.append(EventBody::TurnEnd(TurnEndEvent {
        turn: 1,
        reason: TurnEndReason::Rejected,
        message: None,
    }))
    .unwrap();
    log.append(EventBody::TurnStart(TurnStartEvent { turn: 2 }))
        .unwrap();
    log.append(user(2)).unwrap();
    log.append(assistant(2, vec![call("a")])).unwrap();
    log.append(tool_call(2, "a")).unwrap();
    log.append(tool_result(2, "a")).unwrap();
    log.append(EventBody::ContextMessage(ContextMessageEvent {
        turn: 2,
        content: "ctx".into(),
        source: "p".into(),
    }))
    .unwrap();
    log.append(EventBody::SteeringMessage(SteeringMessageEvent {
        turn: 2,
        content: "go on".into(),
        source: "p".into(),
    }))
    .unwrap();
    let messages = derive_messages(log.events());
    assert_eq!(
        messages,
        vec![
            Message::User {
                content: "hello".into()
            },
            Message::Assistant {
                content: "hi".into(),
                tool_calls: vec![call("a")],
                thinking: None,
            },
            Message::Tool {
                tool_call_id: "a".into(),
                content: "ok".into(),
                is_error: false,
                blocks: None,
            },
            Message::System {
                content: "ctx".into()
            },
            Message::User {
                content: "go on".into()
            },
        ]
    );
}

/// `/model` is recorded between turns only; `session/cleared` between
/// turns, or inside one between steps (a hook's `clearContext`) but never
/// while a call waits for its result; nothing before a `session/cleared`
/// reaches the model again.
#[test]
fn session_commands_sit_between_turns_and_clear_the_model_view() {
    let mut log = SessionLog::in_memory(header()).unwrap();
    log.append(EventBody::TurnStart(TurnStartEvent { turn: 1 }))
        .unwrap();
    log.append(EventBody::UserMessage(UserMessageEvent {
        turn: 1,
        content: "old".into(),
        source: "user".into(),
        original_content: None,
    }))
    .unwrap();
    log.append(assistant(1, vec![call("a")])).unwrap();
    log.append(tool_call(1, "a")).unwrap();
    assert!(log.append(EventBody::SessionCleared {}).is_err());
    log.append(tool_result(1, "a")).unwrap();
    assert!(
        log.append(EventBody::ModelSwitched(ModelSwitchedEvent {
            from: "a".into(),
            to: "b".into()
        }))
        .is_err()
    );
    log.append(EventBody::SessionCleared {}).unwrap();
    log.append(EventBody::SteeringMessage(SteeringMessageEvent {
        turn: 1,
        content: "again".into(),
        source: "hook".into(),
    }))
    .unwrap();
    assert_eq!(
        derive_messages(log.events()),
        vec![Message::User {
            content: "again".into()
        }]
    );
    log.append(EventBody::TurnEnd(TurnEndEvent {
        turn: 1,
        reason: TurnEndReason::Completed,
        message: None,
    }))
    .unwrap();
    log.append(EventBody::ModelSwitched(ModelSwitchedEvent {
        from: "a".into(),
        to: "b".into(),
    }))
    .unwrap();
    log.append(EventBody::SessionCleared {}).unwrap();
    log.append(EventBody::TurnStart(TurnStartEvent { turn: 2 }))
        .unwrap();
    log.append(EventBody::UserMessage(UserMessageEvent {
        turn: 2,
        content: "new".into(),
        source: "user".into(),
        original_content: None,
    }))
    .unwrap();
    assert_eq!(
        derive_messages(log.events()),
        vec![Message::User {
            content: "new".into()
        }]
    );
}

/// A subagent's nested run: its events are tagged, sit inside the parent's
/// open `agent` call, follow their own batch rules, survive a reload, and
/// stay out of the parent's projection.
#[test]
fn nested_runs_are_tagged_and_projected_apart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let mut log = SessionLog::create(&path, header()).unwrap();
    log.append(EventBody::TurnStart(TurnStartEvent { turn: 1 }))
        .unwrap();
    log.append(EventBody::UserMessage(UserMessageEvent {
        turn: 1,
        content: "delegate".into(),
        source: "user".into(),
        original_content: None,
    }))
    .unwrap();
    let agent_call = ToolCall {
        id: "outer".into(),
        name: "agent".into(),
        arguments: json!({"description": "d", "prompt": "p"}),
    };
    log.append(EventBody::AssistantMessage(AssistantMessageEvent {
        turn: 1,
        step: 1,
        content: String::new(),
        tool_calls: vec![agent_call],
        usage: None,
        thinking: None,
    }))
    .unwrap();
    log.append(tool_call(1, "outer")).unwrap();
    let agent = Some("a0123456789abcdef");
    // Untagged, this message would break the parent's open batch.
    let user = EventBody::UserMessage(UserMessageEvent {
        turn: 1,
        content: "p".into(),
        source: "agent".into(),
        original_content: None,
    });
    assert!(log.append(user.clone()).is_err());
    log.append_as(user, agent).unwrap();
    log.append_as(
        EventBody::AssistantMessage(AssistantMessageEvent {
            turn: 1,
            step: 1,
            content: String::new(),
            tool_calls: vec![call("inner")],
            usage: None,
            thinking: None,
        }),
        agent,
    )
    .unwrap();
    // The nested batch has its own rules: an unannounced call is refused.
    assert!(log.append_as(tool_call(1, "other"), agent).is_err());
    log.append_as(tool_call(1, "inner"), agent).unwrap();
    let inner_result = EventBody::ToolResult(ToolResultEvent {
        turn: 1,
        call_id: "inner".into(),
        is_error: false,
        content: "ok".into(),
        disposition: None,
        decided_by: None,
        rewrite: None,
        content_blocks: None,
        shown_input: None,
    });
    log.append_as(inner_result, agent).unwrap();
    // Session-level events never belong to a subagent.
    assert!(
        log.append_as(
            EventBody::TurnEnd(TurnEndEvent {
                turn: 1,
                reason: TurnEndReason::Completed,
                message: None
            }),
            agent
        )
        .is_err()
    );
    log.append(EventBody::ToolResult(ToolResultEvent {
        turn: 1,
        call_id: "outer".into(),
        is_error: false,
        content: "done".into(),
        disposition: None,
        decided_by: None,
        rewrite: None,
        content_blocks: None,
        shown_input: None,
    }))
    .unwrap();
    log.append(EventBody::TurnEnd(TurnEndEvent {
        turn: 1,
        reason: TurnEndReason::Completed,
        message: None,
    }))
    .unwrap();
    drop(log);

    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        text.matches("\"agent_id\":\"a0123456789abcdef\"").count(),
        4
    );
    let (reopened, _) = SessionLog::open(&path).unwrap();
    let events = reopened.events();
    let parent = derive_messages(events);
    assert_eq!(parent.len(), 3, "{parent:?}");
    let nested = dsh_session::derive_messages_of(events, agent);
    assert_eq!(
        nested,
        vec![
            Message::User {
                content: "p".into()
            },
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![call("inner")],
                thinking: None,
            },
            Message::Tool {
                tool_call_id: "inner".into(),
                content: "ok".into(),
                is_error: false,
                blocks: None,
            },
        ]
    );
}
