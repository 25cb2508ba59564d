//! The generic bridge plugin with a toy dialect whose per-event functions
//! are pure: a seam's flow fires one event, reads its runs, marks the
//! winner and fires the next; records come in flow order; the state a
//! seam leaves is what the next seam sees; a fresh firing survives a
//! cancelled turn; a seam the bridge plans nothing for answers as the
//! plugin defaults do.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use std::time::Duration;

use dsh_hook_runner::{HookExit, HookProgram, HookRunner, HookSpec, RunRecord};
use dsh_hooks::{
    Bridge, BridgePlugin, Cx, Dialect, Finished, Fire, Flow, HandlerInfo, Launch, Record, Rules,
    Winner, readings,
};
use dsh_protocol::{EventBody, HookDecision, HookEffect, Seam};
use dsh_seams::{
    CancellationToken, CompactionOutcome, CompactionTrigger, ContextEntry, Plugin, PromptDecision,
    PromptInput, SeamContext, SessionEndReason, SessionEnv, SessionInfo, SessionSink, TurnControl,
    UserNotice,
};
use futures::FutureExt;
use serde_json::Value;

/// Handlers answer a number; a negative one refuses the prompt.
struct Toy {
    handlers: Vec<(&'static str, i64)>,
}

#[derive(Default)]
struct Seen {
    prompts: usize,
}

impl Dialect for Toy {
    type Event = &'static str;
    type Handler = (&'static str, i64);
    type Subject<'s> = ();
    type Custom = i64;
    type Reading = i64;
    type Note = ();
    fn dialect(&self) -> dsh_protocol::Dialect {
        dsh_protocol::Dialect::new("toy")
    }
    fn event_name(&self, event: &'static str) -> &'static str {
        event
    }
    fn seam(&self, _event: &'static str) -> Seam {
        Seam::PromptSubmit
    }
    fn candidates(&self, event: &'static str, _subject: &()) -> Vec<&(&'static str, i64)> {
        self.handlers.iter().filter(|(e, _)| *e == event).collect()
    }
    fn describe(&self, handler: &(&'static str, i64)) -> HandlerInfo {
        HandlerInfo {
            matcher: None,
            origin: format!("{}#{}", handler.0, handler.1),
            command: handler.1.to_string(),
        }
    }
    fn custom_record(&self, _custom: &i64) -> RunRecord {
        RunRecord::detached()
    }
    fn decision(&self, _handler: &(&'static str, i64), reading: &i64) -> HookDecision {
        HookDecision {
            reason: Some(reading.to_string()),
            ..HookDecision::of(HookEffect::None)
        }
    }
    fn parsed_output(&self, _reading: &i64) -> Option<Value> {
        None
    }
    fn notices(&self, _e: &'static str, _h: &(&'static str, i64), _r: &i64) -> Vec<UserNotice> {
        Vec::new()
    }
    fn detached_decision(&self, _handler: &(&'static str, i64)) -> HookDecision {
        HookDecision::of(HookEffect::None)
    }
}

impl Rules for Toy {
    type Payload = String;
    fn wire(
        &self,
        _ctx: &SeamContext,
        _e: &'static str,
        payload: &String,
        _h: &(&'static str, i64),
    ) -> Value {
        Value::from(payload.as_str())
    }
    fn launch<'a>(
        &'a self,
        _ctx: &'a SeamContext,
        handler: &(&'static str, i64),
        _stdin: &[u8],
    ) -> Launch<'a, Self> {
        // `Run` handlers are processes exiting with their number.
        if handler.0 != "Run" {
            return Launch::Custom(futures::future::ready(handler.1).boxed());
        }
        Launch::Process(HookSpec {
            program: HookProgram::Shell {
                shell: PathBuf::from("/bin/sh"),
                command: format!("exit {}", handler.1),
            },
            cwd: PathBuf::from("/"),
            env: Vec::new(),
            stdin: Vec::new(),
            timeout: Duration::from_secs(10),
        })
    }
    fn read(
        &self,
        _ctx: &SeamContext,
        _e: &'static str,
        _h: &(&'static str, i64),
        finished: Finished<'_, i64>,
    ) -> i64 {
        match finished {
            Finished::Custom(answer) => *answer,
            Finished::Process(run) => match run.exit {
                HookExit::Exited(code) => i64::from(code),
                _ => -100,
            },
        }
    }
}

/// How refusals are recorded: the first wins, unless the prompt is `cap`
/// (then dsh's cap overrides them all).
fn refusal(prompt: &str) -> Record<bool> {
    if prompt == "cap" {
        Record::Capped(true, "capped by dsh".to_owned())
    } else {
        Record::Won(Winner::First, true)
    }
}

/// Pure: the prompt's answer from the `Ask` runs.
fn ask(readings: &[&i64]) -> Result<i64, String> {
    match readings.iter().find(|r| ***r < 0) {
        Some(refusal) => Err(format!("refused by {refusal}")),
        None => Ok(readings.iter().copied().sum()),
    }
}

impl Bridge for Toy {
    type State = Seen;
    type Key = ();
    type Decisive = bool;
    fn plugin_name(&self) -> &'static str {
        "toy-hooks"
    }
    fn subject(&self, _key: &()) {}
    /// `true`: refusals are decisive; `false`: every answer is.
    fn holds(&self, refusals: bool, reading: &i64) -> bool {
        !refusals || *reading < 0
    }
    fn prompt_submit<'a>(
        cx: Cx<'_, Self>,
        prompt: &'a PromptInput,
    ) -> Flow<'a, Self, PromptDecision> {
        cx.state.prompts += 1;
        let payload = format!("{} #{}", prompt.content, cx.state.prompts);
        Flow::fire(Fire::new("Ask", (), payload), move |_, runs| {
            match ask(&readings(runs)) {
                Err(reason) => (
                    refusal(&prompt.content),
                    Flow::Done(PromptDecision::Block { reason }),
                ),
                Ok(sum) => {
                    let rewrite = format!("{} +{sum}", prompt.content);
                    let decision = PromptDecision::Allow {
                        rewrite: Some(rewrite.clone()),
                        contexts: Vec::new(),
                    };
                    (
                        Record::Won(Winner::Last, false),
                        Flow::notify(Fire::new("Tell", (), rewrite), decision),
                    )
                }
            }
        })
    }
    /// Answers over 10 are revised into refusals before they are
    /// recorded; the largest refusal wins, wherever it is.
    fn session_compacted<'a>(
        _cx: Cx<'_, Self>,
        outcome: &'a CompactionOutcome,
    ) -> Flow<'a, Self, Vec<ContextEntry>> {
        let fire = Fire::new("Ask", (), outcome.summary.clone());
        Flow::fire(fire, |_, runs| {
            for run in runs.iter_mut().filter(|run| run.reading > 10) {
                run.reading = -run.reading;
            }
            let largest = (0..runs.len()).min_by_key(|index| runs[*index].reading);
            let text = largest.map(|index| runs[index].reading.to_string());
            let contexts = text.map(|text| ContextEntry::new(text, "toy")).into_iter();
            (Record::At(largest, true), Flow::Done(contexts.collect()))
        })
    }
    fn session_end<'a>(cx: Cx<'_, Self>, _reason: SessionEndReason) -> Flow<'a, Self, ()> {
        let payload = format!("after {} prompts", cx.state.prompts);
        let run = Fire::new("Run", (), payload).fresh();
        Flow::later(move |_| Flow::notify(run, ()))
    }
}

#[derive(Default)]
struct Sink {
    events: Mutex<Vec<EventBody>>,
}

impl SessionSink for Sink {
    fn record(&self, body: EventBody) {
        self.events.lock().unwrap().push(body);
    }
    fn tell_user(&self, _notice: UserNotice) {}
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

/// `invoked EVENT INPUT` / `result won` lines, in record order.
fn log(sink: &Sink) -> Vec<String> {
    let events: Vec<EventBody> = sink.events.lock().unwrap().drain(..).collect();
    events
        .into_iter()
        .map(|event| match event {
            EventBody::HookInvoked { event, input, .. } => format!("invoked {event} {input}"),
            EventBody::HookResult { decision, .. } => format!("result {:?}", decision.won),
            other => format!("other {}", other.type_name()),
        })
        .collect()
}

fn prompt(text: &str) -> PromptInput {
    PromptInput {
        content: text.to_owned(),
        source: "user".to_owned(),
    }
}

#[tokio::test]
async fn a_flow_fires_reads_marks_and_fires_the_next_event() {
    let toy = Toy {
        handlers: vec![("Ask", 1), ("Ask", 2), ("Tell", 0)],
    };
    let plugin = BridgePlugin::new(toy, HookRunner::default());
    let sink = Arc::new(Sink::default());
    let ctx = context(sink.clone());
    let decision = plugin.prompt_submit(&ctx, &prompt("hi")).await;
    assert_eq!(
        decision,
        PromptDecision::Allow {
            rewrite: Some("hi +3".into()),
            contexts: Vec::new()
        }
    );
    assert_eq!(
        log(&sink),
        [
            "invoked Ask \"hi #1\"",
            "invoked Ask \"hi #1\"",
            "result Some(false)",
            "result Some(true)",
            "invoked Tell \"hi +3\"",
            "result None",
        ]
    );
    // The state the first seam left: the second prompt is number 2.
    plugin.prompt_submit(&ctx, &prompt("again")).await;
    assert_eq!(log(&sink)[0], "invoked Ask \"again #2\"");
}

#[tokio::test]
async fn the_first_refusal_wins_and_ends_the_flow() {
    let toy = Toy {
        handlers: vec![("Ask", 1), ("Ask", -1), ("Ask", -2), ("Tell", 0)],
    };
    let plugin = BridgePlugin::new(toy, HookRunner::default());
    let sink = Arc::new(Sink::default());
    let ctx = context(sink.clone());
    let decision = plugin.prompt_submit(&ctx, &prompt("hi")).await;
    assert_eq!(
        decision,
        PromptDecision::Block {
            reason: "refused by -1".into()
        }
    );
    plugin.prompt_submit(&ctx, &prompt("cap")).await;
    let capped: Vec<(Option<bool>, Option<String>)> = sink.events.lock().unwrap()[6..]
        .iter()
        .filter_map(|event| match event {
            EventBody::HookResult { decision, .. } => Some((decision.won, decision.capped.clone())),
            _ => None,
        })
        .collect();
    let cap = Some("capped by dsh".to_owned());
    assert_eq!(
        capped,
        [(None, None), (Some(false), cap.clone()), (Some(false), cap)]
    );
    let log = log(&sink);
    assert_eq!(
        log[3..6],
        ["result None", "result Some(true)", "result Some(false)"]
    );
    assert!(!log.iter().any(|line| line.contains("Tell")));
}

#[tokio::test]
async fn a_fresh_firing_runs_when_the_turn_is_cancelled() {
    let toy = Toy {
        handlers: vec![("Run", 3)],
    };
    let plugin = BridgePlugin::new(toy, HookRunner::default());
    let sink = Arc::new(Sink::default());
    let ctx = context(sink.clone());
    ctx.cancel.cancel();
    plugin.session_end(&ctx, SessionEndReason::Other).await;
    assert_eq!(plugin.name(), "toy-hooks");
    let events = sink.events.lock().unwrap().clone();
    let [invoked, result] = events.as_slice() else {
        panic!("two records expected: {events:?}");
    };
    assert!(matches!(invoked, EventBody::HookInvoked { input, .. } if input == "after 0 prompts"));
    assert!(matches!(
        result,
        EventBody::HookResult {
            exit_code: Some(3),
            ..
        }
    ));
}

#[tokio::test]
async fn a_revised_reading_is_recorded_and_the_dialect_picks_the_winner() {
    let toy = Toy {
        handlers: vec![("Ask", -1), ("Ask", 20), ("Ask", -3), ("Ask", 4)],
    };
    let plugin = BridgePlugin::new(toy, HookRunner::default());
    let sink = Arc::new(Sink::default());
    let ctx = context(sink.clone());
    let outcome = CompactionOutcome {
        trigger: CompactionTrigger::Manual,
        summary: "summary".to_owned(),
        summarized_by: "model".to_owned(),
    };
    let contexts = plugin.session_compacted(&ctx, &outcome).await;
    assert_eq!(
        contexts
            .iter()
            .map(|c| c.content.as_str())
            .collect::<Vec<_>>(),
        ["-20"]
    );
    let results: Vec<(Option<bool>, Option<String>)> = sink
        .events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|event| match event {
            EventBody::HookResult { decision, .. } => Some((decision.won, decision.reason.clone())),
            _ => None,
        })
        .collect();
    // The revised reading is what is recorded; the picked run won among
    // the decisive ones (neither the first nor the last of them).
    let expected = [
        (Some(false), "-1"),
        (Some(true), "-20"),
        (Some(false), "-3"),
        (None, "4"),
    ];
    assert_eq!(
        results,
        expected.map(|(won, reason)| (won, Some(reason.to_owned())))
    );
}

/// A plugin that takes part in nothing: the seams' defaults.
struct Nobody;

impl Plugin for Nobody {
    fn name(&self) -> &str {
        "nobody"
    }
}

/// A bridge that plans nothing for the seams Claude Code added answers
/// as a plugin that does not take part, and fires nothing.
#[tokio::test]
async fn the_added_seams_default_to_the_plugins_defaults() {
    let toy = Toy {
        handlers: vec![("Ask", 1)],
    };
    let plugin = BridgePlugin::new(toy, HookRunner::default());
    let sink = Arc::new(Sink::default());
    let ctx = context(sink.clone());
    let path = std::path::Path::new("/wt");
    assert_eq!(
        plugin.worktree_create(&ctx, "x").await,
        Nobody.worktree_create(&ctx, "x").await
    );
    assert_eq!(
        plugin.worktree_remove(&ctx, path).await,
        Nobody.worktree_remove(&ctx, path).await
    );
    plugin.setup(&ctx, dsh_seams::SetupTrigger::Init).await;
    assert!(log(&sink).is_empty());
}
