//! The engine with a toy dialect and real `sh` processes: records come in
//! configuration order whatever the completion order, detached runs are
//! recorded at launch and read when harvested, winners are marked, notices
//! carry their typed level.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_hook_runner::{HookProgram, HookRunner, HookSpec, RunRecord, RunnerConfig};
use dsh_hooks::names::{EventTable, Tabled};
use dsh_hooks::{Dialect, Engine, Finished, Firing, HandlerInfo, Harvested, Launch, mark_winner};
use dsh_protocol::{
    EventBody, HookDecision, HookEffect, HookInvokedEvent, HookOutcomeKind, HookResultEvent, Seam,
};
use dsh_seams::{
    CancellationToken, ContextEntry, NoticeLevel, SeamContext, SessionEnv, SessionInfo,
    SessionSink, TurnControl, UserNotice,
};
use serde_json::{Value, json};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Await,
    Detach,
    Skip,
    Custom,
}

#[derive(Clone)]
struct Toy {
    name: &'static str,
    script: &'static str,
    mode: Mode,
}

#[derive(Default)]
struct ToyDialect {
    configured: Vec<Toy>,
}

/// The toy's events, on the pre-execute seam.
#[derive(Debug, Clone, Copy, PartialEq)]
enum ToyEvent {
    Ev,
    PreToolUse,
}

impl Tabled for ToyEvent {
    const TABLE: EventTable<ToyEvent> = EventTable(&[
        (ToyEvent::Ev, "Ev", None, Seam::PreExecute),
        (ToyEvent::PreToolUse, "PreToolUse", None, Seam::PreExecute),
    ]);
}

impl Dialect for ToyDialect {
    type Event = ToyEvent;
    type Handler = Toy;
    /// A prefix the handler names must start with.
    type Subject<'s> = &'s str;
    type Custom = String;
    type Reading = String;
    type Note = &'static str;

    fn dialect(&self) -> dsh_protocol::Dialect {
        dsh_protocol::Dialect::Claude
    }
    fn candidates(&self, _event: ToyEvent, subject: &&str) -> Vec<&Toy> {
        self.configured
            .iter()
            .filter(|toy| toy.name.starts_with(*subject))
            .collect()
    }
    fn dedup_key(&self, handler: &Toy) -> Option<String> {
        (handler.mode != Mode::Custom).then(|| handler.script.to_owned())
    }
    fn admits(&self, _event: ToyEvent, handler: &Toy, _subject: &&str) -> bool {
        handler.mode != Mode::Skip
    }
    fn describe(&self, handler: &Toy) -> HandlerInfo {
        HandlerInfo {
            matcher: None,
            origin: format!("toy#{}", handler.name),
            command: handler.script.to_owned(),
        }
    }
    fn custom_record(&self, custom: &String) -> RunRecord {
        RunRecord {
            stdout: custom.clone(),
            ..RunRecord::detached()
        }
    }
    fn decision(&self, _handler: &Toy, reading: &String) -> HookDecision {
        HookDecision {
            reason: Some(reading.clone()),
            ..HookDecision::of(if reading.starts_with("deny") {
                HookEffect::Deny
            } else {
                HookEffect::None
            })
        }
    }
    fn parsed_output(&self, _reading: &String) -> Option<Value> {
        None
    }
    fn notices(&self, event: ToyEvent, handler: &Toy, reading: &String) -> Vec<UserNotice> {
        vec![UserNotice {
            source: format!("{}:{}", event.as_str(), handler.name),
            text: reading.clone(),
            level: if reading.starts_with("deny") {
                NoticeLevel::Warning
            } else {
                NoticeLevel::Info
            },
        }]
    }
    fn detached_decision(&self, _handler: &Toy) -> HookDecision {
        HookDecision {
            why: Some("detached".to_owned()),
            ..HookDecision::default()
        }
    }
}

#[derive(Default)]
struct Sink {
    events: Mutex<Vec<EventBody>>,
    notices: Mutex<Vec<UserNotice>>,
}

impl SessionSink for Sink {
    fn record(&self, body: EventBody) {
        self.events.lock().unwrap().push(body);
    }
    fn tell_user(&self, notice: UserNotice) {
        self.notices.lock().unwrap().push(notice);
    }
}

fn context(sink: Arc<Sink>) -> SeamContext {
    SeamContext {
        session: Arc::new(SessionInfo {
            session_id: "s".to_owned(),
            cwd: PathBuf::from("/"),
            model: "m".to_owned(),
            log_path: None,
            env: SessionEnv::default(),
            interactive: false,
        }),
        turn: Some(1),
        cancel: CancellationToken::new(),
        sink,
        control: TurnControl::default(),
        agent: None,
        subagents: None,
    }
}

fn spec(script: &str) -> HookSpec {
    HookSpec {
        program: HookProgram::Shell {
            shell: PathBuf::from("/bin/sh"),
            command: script.to_owned(),
        },
        cwd: PathBuf::from("/"),
        env: Vec::new(),
        stdin: Vec::new(),
        timeout: Duration::from_secs(10),
    }
}

fn launch(_: usize, handler: &Toy) -> Launch<'static, ToyDialect> {
    match handler.mode {
        Mode::Await => Launch::Process(spec(handler.script)),
        Mode::Detach => Launch::Detached {
            spec: spec(handler.script),
            note: Some(handler.name),
        },
        Mode::Skip => Launch::Skip,
        Mode::Custom => {
            let text = handler.script.to_owned();
            Launch::Custom(Box::pin(async move { text }))
        }
    }
}

fn read(_: &Toy, finished: Finished<'_, String>) -> String {
    match finished {
        Finished::Process(run) => run.stdout.text().trim().to_owned(),
        Finished::Custom(text) => text.clone(),
    }
}

#[tokio::test]
async fn records_follow_configuration_order_not_completion_order() {
    let sink = Arc::new(Sink::default());
    let ctx = context(sink.clone());
    let engine = Engine::new(
        ToyDialect::default(),
        HookRunner::new(RunnerConfig::default()),
    );
    let payload = dsh_protocol::ExactJson::of(&json!({"k": 1}));
    let handlers = vec![
        Toy {
            name: "slow",
            script: "sleep 0.3; echo deny slow",
            mode: Mode::Await,
        },
        Toy {
            name: "skip",
            script: "unused",
            mode: Mode::Skip,
        },
        Toy {
            name: "http",
            script: "custom answer",
            mode: Mode::Custom,
        },
        Toy {
            name: "fast",
            script: "echo deny fast",
            mode: Mode::Await,
        },
    ];
    let firing = Firing {
        event: ToyEvent::Ev,
        payload: &payload,
        call_id: Some("call_1"),
        cancel: &ctx.cancel,
    };
    let mut fired = engine.fire(&ctx, &firing, handlers, launch, read).await;
    let names: Vec<&str> = fired.iter().map(|f| f.handler.name).collect();
    assert_eq!(names, ["slow", "http", "fast"]);
    assert_eq!(fired[0].reading, "deny slow");
    mark_winner(&mut fired, Some(2), |reading: &String| {
        reading.starts_with("deny")
    });
    assert_eq!(fired[0].won, Some(false));
    assert_eq!(fired[1].won, None);
    assert_eq!(fired[2].won, Some(true));
    engine.record(&ctx, ToyEvent::Ev, &fired, &|i, decision| {
        if i == 1 {
            decision.note = Some("extra".to_owned());
        }
    });

    let events = sink.events.lock().unwrap().clone();
    let mut invoked = Vec::new();
    let mut results = Vec::new();
    for event in &events {
        match event {
            EventBody::HookInvoked(HookInvokedEvent {
                invocation_id,
                origin,
                seam,
                input,
                call_id,
                ..
            }) => {
                assert_eq!(*seam, Seam::PreExecute);
                assert_eq!(input, &payload);
                assert_eq!(call_id.as_deref(), Some("call_1"));
                invoked.push((invocation_id.clone(), origin.clone().unwrap()));
            }
            EventBody::HookResult(HookResultEvent {
                invocation_id,
                decision,
                ..
            }) => {
                results.push((invocation_id.clone(), (**decision).clone()));
            }
            other => panic!("{other:?}"),
        }
    }
    // Every invoked record comes before any result.
    assert_eq!(invoked.len(), 4);
    assert!(matches!(events[3], EventBody::HookInvoked(_)));
    let origins: Vec<&str> = invoked.iter().map(|(_, o)| o.as_str()).collect();
    assert_eq!(origins, ["toy#slow", "toy#skip", "toy#http", "toy#fast"]);
    // Results in configuration order; the skipped handler has none.
    let ids: Vec<&str> = results.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(
        ids,
        [
            invoked[0].0.as_str(),
            invoked[2].0.as_str(),
            invoked[3].0.as_str()
        ]
    );
    assert_eq!(results[0].1.won, Some(false));
    assert_eq!(results[0].1.effect, HookEffect::Deny);
    assert_eq!(results[1].1.note.as_deref(), Some("extra"));
    assert_eq!(results[1].1.reason.as_deref(), Some("custom answer"));
    assert_eq!(results[2].1.won, Some(true));

    let notices = sink.notices.lock().unwrap().clone();
    let levels: Vec<(String, NoticeLevel)> =
        notices.into_iter().map(|n| (n.source, n.level)).collect();
    assert_eq!(
        levels,
        [
            ("Ev:slow".to_owned(), NoticeLevel::Warning),
            ("Ev:http".to_owned(), NoticeLevel::Info),
            ("Ev:fast".to_owned(), NoticeLevel::Warning),
        ]
    );
}

#[tokio::test]
async fn detached_runs_are_recorded_at_launch_and_read_when_harvested() {
    let sink = Arc::new(Sink::default());
    let ctx = context(sink.clone());
    let engine = Engine::new(
        ToyDialect::default(),
        HookRunner::new(RunnerConfig::default()),
    );
    let payload = dsh_protocol::ExactJson::of(&json!({}));
    let firing = Firing {
        event: ToyEvent::Ev,
        payload: &payload,
        call_id: None,
        cancel: &ctx.cancel,
    };
    let handlers = vec![Toy {
        name: "bg",
        script: "echo late",
        mode: Mode::Detach,
    }];
    let fired = engine.fire(&ctx, &firing, handlers, launch, read).await;
    assert!(fired.is_empty());
    {
        let events = sink.events.lock().unwrap();
        assert_eq!(events.len(), 2);
        match &events[1] {
            EventBody::HookResult(HookResultEvent {
                outcome, decision, ..
            }) => {
                assert_eq!(*outcome, HookOutcomeKind::Detached);
                assert_eq!(decision.why.as_deref(), Some("detached"));
            }
            other => panic!("{other:?}"),
        }
    }
    let harvest = |_: &Toy, note: &&'static str, run: &dsh_hook_runner::HookRun| Harvested {
        decision: HookDecision {
            note: Some(format!("harvested {note}")),
            ..HookDecision::default()
        },
        parsed: None,
        context: Some(ContextEntry::new(
            run.stdout.text().trim().to_owned(),
            *note,
        )),
    };
    let mut contexts = Vec::new();
    for _ in 0..100 {
        contexts = engine.harvest(&ctx, harvest);
        if !contexts.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(contexts.len(), 1);
    assert_eq!(contexts[0].content, "late");
    let events = sink.events.lock().unwrap().clone();
    assert_eq!(events.len(), 3);
    match &events[2] {
        EventBody::HookResult(HookResultEvent {
            outcome, decision, ..
        }) => {
            assert_eq!(*outcome, HookOutcomeKind::Exited);
            assert_eq!(decision.note.as_deref(), Some("harvested bg"));
        }
        other => panic!("{other:?}"),
    }
    // Harvested once: nothing is left.
    assert!(engine.harvest(&ctx, harvest).is_empty());
    engine.abort_pending();
}

#[test]
fn selection_is_candidates_then_dedup_then_the_last_filter() {
    let toy = |name, script, mode| Toy { name, script, mode };
    let dialect = ToyDialect {
        configured: vec![
            toy("a1", "same", Mode::Await),
            toy("a2", "same", Mode::Await),
            toy("a3", "x", Mode::Custom),
            toy("a4", "x", Mode::Custom),
            toy("a5", "skip", Mode::Skip),
            toy("b1", "other", Mode::Await),
        ],
    };
    let engine = Engine::new(dialect, HookRunner::new(RunnerConfig::default()));
    let names: Vec<&str> = engine
        .select(ToyEvent::Ev, &"a")
        .iter()
        .map(|t| t.name)
        .collect();
    // a2 repeats a1's command; custom handlers have no key; a5 is filtered.
    assert_eq!(names, ["a1", "a3", "a4"]);
    let names: Vec<&str> = engine
        .select(ToyEvent::Ev, &"b")
        .iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["b1"]);
}

/// The provided source is `<dialect>:<event>`, the dialect's id and the
/// event's wire name.
#[test]
fn the_source_names_the_dialect_and_the_event() {
    assert_eq!(
        ToyDialect::default().source(ToyEvent::PreToolUse),
        "claude:PreToolUse"
    );
}
