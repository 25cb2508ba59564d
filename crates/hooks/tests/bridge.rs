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

use dsh_hook_runner::{HookExit, HookProgram, HookRun, HookRunner, HookSpec, RunRecord};
use dsh_hooks::names::{EventTable, Tabled};
use dsh_hooks::{
    Bridge, BridgePlugin, Cx, Dialect, Finished, Fire, Flow, HandlerInfo, Harvested, Launch,
    Record, Rules, Winner, readings,
};
use dsh_protocol::{EventBody, HookDecision, HookEffect, HookInvokedEvent, HookResultEvent, Seam};
use dsh_seams::{
    CancellationToken, CompactionOutcome, CompactionTrigger, ContextEntry, ContinuationDecision,
    ContinuationInput, DisplayDecision, DisplayInput, NoticeLevel, Plugin, PromptDecision,
    PromptInput, SeamContext, SessionEndReason, SessionEnv, SessionInfo, SessionSink,
    SessionStartSource, TurnControl, TurnFailure, UserNotice,
};
use futures::FutureExt;
use serde_json::Value;

/// Handlers answer a number; a negative one refuses the prompt.
struct Toy {
    handlers: Vec<(Ev, i64)>,
}

#[derive(Default)]
struct Seen {
    prompts: usize,
}

/// The toy's events, all on the prompt seam.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ev {
    Ask,
    Tell,
    Bg,
    Run,
}

impl Tabled for Ev {
    const TABLE: EventTable<Ev> = EventTable(&[
        (Ev::Ask, "Ask", None, Seam::PromptSubmit),
        (Ev::Tell, "Tell", None, Seam::PromptSubmit),
        (Ev::Bg, "Bg", None, Seam::PromptSubmit),
        (Ev::Run, "Run", None, Seam::PromptSubmit),
    ]);
}

impl Dialect for Toy {
    type Event = Ev;
    type Handler = (Ev, i64);
    type Subject<'s> = ();
    type Custom = i64;
    type Reading = i64;
    type Note = ();
    fn dialect(&self) -> dsh_protocol::Dialect {
        dsh_protocol::Dialect::new("toy")
    }
    fn candidates(&self, event: Ev, _subject: &()) -> Vec<&(Ev, i64)> {
        self.handlers.iter().filter(|(e, _)| *e == event).collect()
    }
    fn describe(&self, handler: &(Ev, i64)) -> HandlerInfo {
        HandlerInfo {
            matcher: None,
            origin: format!("{}#{}", handler.0.as_str(), handler.1),
            command: handler.1.to_string(),
        }
    }
    fn custom_record(&self, _custom: &i64) -> RunRecord {
        RunRecord::detached()
    }
    fn decision(&self, _handler: &(Ev, i64), reading: &i64) -> HookDecision {
        HookDecision {
            reason: Some(reading.to_string()),
            ..HookDecision::of(HookEffect::None)
        }
    }
    fn parsed_output(&self, _reading: &i64) -> Option<Value> {
        None
    }
    fn notices(&self, _e: Ev, _h: &(Ev, i64), _r: &i64) -> Vec<UserNotice> {
        Vec::new()
    }
    fn detached_decision(&self, _handler: &(Ev, i64)) -> HookDecision {
        HookDecision::of(HookEffect::None)
    }
}

impl Rules for Toy {
    type Payload = String;
    fn wire(
        &self,
        _ctx: &SeamContext,
        _e: Ev,
        payload: &String,
        _h: &(Ev, i64),
    ) -> dsh_protocol::ExactJson {
        dsh_protocol::ExactJson::of(payload)
    }
    fn launch<'a>(
        &'a self,
        _ctx: &'a SeamContext,
        handler: &(Ev, i64),
        _stdin: &[u8],
    ) -> Launch<'a, Self> {
        // `Run` handlers are processes exiting with their number; `Bg`
        // ones the same, detached (a negative one sleeps instead).
        let command = match handler.1 {
            n if n < 0 => "sleep 5".to_owned(),
            n => format!("exit {n}"),
        };
        let spec = HookSpec {
            program: HookProgram::Shell {
                shell: PathBuf::from("/bin/sh"),
                command,
            },
            cwd: PathBuf::from("/"),
            env: Vec::new(),
            stdin: Vec::new(),
            timeout: Duration::from_secs(10),
        };
        match handler.0 {
            Ev::Run => Launch::Process(spec),
            Ev::Bg => Launch::Detached {
                spec,
                note: Some(()),
            },
            _ => Launch::Custom(futures::future::ready(handler.1).boxed()),
        }
    }
    fn read(&self, _ctx: &SeamContext, _e: Ev, _h: &(Ev, i64), finished: Finished<'_, i64>) -> i64 {
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
        Flow::fire(Fire::new(Ev::Ask, (), payload), move |_, runs| {
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
                        Flow::notify(Fire::new(Ev::Tell, (), rewrite), decision),
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
        let fire = Fire::new(Ev::Ask, (), outcome.summary.clone());
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
    /// A detached run that finished gives its exit code as context.
    fn read_detached(
        &self,
        _ctx: &SeamContext,
        _handler: &(Ev, i64),
        _note: &(),
        run: &HookRun,
    ) -> Harvested {
        let code = match run.exit {
            HookExit::Exited(code) => code.to_string(),
            _ => "killed".to_owned(),
        };
        Harvested {
            decision: HookDecision {
                reason: Some(format!("late {code}")),
                ..HookDecision::of(HookEffect::None)
            },
            parsed: None,
            context: Some(ContextEntry::new(code, "toy")),
        }
    }
    /// Starts the `Bg` handlers, detached.
    fn turn_failed<'a>(_cx: Cx<'_, Self>, _failure: &'a TurnFailure) -> Flow<'a, Self, ()> {
        Flow::notify(Fire::new(Ev::Bg, (), "failed".to_owned()), ())
    }
    /// Lets the detached runs finish, then harvests them.
    fn session_start<'a>(
        _cx: Cx<'_, Self>,
        _start: SessionStartSource,
    ) -> Flow<'a, Self, Vec<ContextEntry>> {
        let harvest = Flow::harvest(|_, contexts| Flow::Done(contexts));
        Flow::settle(Duration::from_secs(5), harvest)
    }
    /// Kills what is pending, then harvests (nothing is left).
    fn turn_continuation<'a>(
        _cx: Cx<'_, Self>,
        _input: &'a ContinuationInput,
    ) -> Flow<'a, Self, ContinuationDecision> {
        let harvest = Flow::harvest(|_, contexts| {
            let reason = format!("{} harvested", contexts.len());
            Flow::Done(ContinuationDecision::Halt { reason })
        });
        Flow::abort_pending(Flow::settle(Duration::from_secs(5), harvest))
    }
    /// The first run wins among all; every run's result then notes its
    /// place, and the answer is told to the user after the records.
    fn message_display<'a>(
        _cx: Cx<'_, Self>,
        input: &'a DisplayInput,
    ) -> Flow<'a, Self, DisplayDecision> {
        let fire = Fire::new(Ev::Ask, (), input.text.clone());
        Flow::fire_recorded(
            fire,
            |_, _| {
                Record::At(Some(0), false).with(|index, decision| {
                    decision.overridden = Some(format!("run {index}"));
                })
            },
            |cx, runs| {
                let text = readings(runs).iter().map(|r| r.to_string()).collect();
                cx.ctx.sink.tell_user(UserNotice {
                    source: "toy".to_owned(),
                    text: "told".to_owned(),
                    level: NoticeLevel::Info,
                });
                Flow::Done(DisplayDecision::Replace { text })
            },
        )
    }
    fn session_end<'a>(cx: Cx<'_, Self>, _reason: SessionEndReason) -> Flow<'a, Self, ()> {
        let payload = format!("after {} prompts", cx.state.prompts);
        let run = Fire::new(Ev::Run, (), payload).fresh();
        Flow::later(move |_| Flow::notify(run, ()))
    }
}

#[derive(Default)]
struct Sink {
    events: Mutex<Vec<EventBody>>,
    told: Mutex<Vec<usize>>,
}

impl SessionSink for Sink {
    fn record(&self, body: EventBody) {
        self.events.lock().unwrap().push(body);
    }
    /// Remembers how many records came before each notice.
    fn tell_user(&self, _notice: UserNotice) {
        let before = self.events.lock().unwrap().len();
        self.told.lock().unwrap().push(before);
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

/// `invoked EVENT INPUT` / `result won` lines, in record order.
fn log(sink: &Sink) -> Vec<String> {
    let events: Vec<EventBody> = sink.events.lock().unwrap().drain(..).collect();
    events
        .into_iter()
        .map(|event| match event {
            EventBody::HookInvoked(HookInvokedEvent { event, input, .. }) => {
                format!("invoked {event} {input}")
            }
            EventBody::HookResult(HookResultEvent { decision, .. }) => {
                format!("result {:?}", decision.won)
            }
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
        handlers: vec![(Ev::Ask, 1), (Ev::Ask, 2), (Ev::Tell, 0)],
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
        handlers: vec![(Ev::Ask, 1), (Ev::Ask, -1), (Ev::Ask, -2), (Ev::Tell, 0)],
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
            EventBody::HookResult(HookResultEvent { decision, .. }) => {
                Some((decision.won, decision.capped.clone()))
            }
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
        handlers: vec![(Ev::Run, 3)],
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
    assert!(
        matches!(invoked, EventBody::HookInvoked(HookInvokedEvent { input, .. }) if input.text() == r#""after 0 prompts""#)
    );
    assert!(matches!(
        result,
        EventBody::HookResult(HookResultEvent {
            exit_code: Some(3),
            ..
        })
    ));
}

#[tokio::test]
async fn a_revised_reading_is_recorded_and_the_dialect_picks_the_winner() {
    let toy = Toy {
        handlers: vec![(Ev::Ask, -1), (Ev::Ask, 20), (Ev::Ask, -3), (Ev::Ask, 4)],
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
            EventBody::HookResult(HookResultEvent { decision, .. }) => {
                Some((decision.won, decision.reason.clone()))
            }
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
        handlers: vec![(Ev::Ask, 1)],
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

fn results(sink: &Sink) -> Vec<(Option<i32>, Option<String>)> {
    sink.events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|event| match event {
            EventBody::HookResult(HookResultEvent {
                exit_code,
                decision,
                ..
            }) => Some((*exit_code, decision.reason.clone())),
            _ => None,
        })
        .collect()
}

fn failure() -> TurnFailure {
    TurnFailure {
        turn: 1,
        step: 1,
        error: dsh_model::ModelError::new("down"),
    }
}

/// Detached runs started by one seam are settled and harvested by a later
/// one: each finished run is recorded with the dialect's reading, and its
/// context comes back in start order.
#[tokio::test]
async fn a_later_seam_settles_and_harvests_the_detached_runs() {
    let toy = Toy {
        handlers: vec![(Ev::Bg, 3), (Ev::Bg, 4)],
    };
    let plugin = BridgePlugin::new(toy, HookRunner::default());
    let sink = Arc::new(Sink::default());
    let ctx = context(sink.clone());
    plugin.turn_failed(&ctx, &failure()).await;
    // Started, recorded as running at once; nothing read yet.
    assert_eq!(results(&sink), [(None, None), (None, None)]);
    let contexts = plugin
        .session_start(&ctx, SessionStartSource::Startup)
        .await;
    let texts: Vec<&str> = contexts.iter().map(|c| c.content.as_str()).collect();
    assert_eq!(texts, ["3", "4"]);
    assert_eq!(
        results(&sink)[2..],
        [
            (Some(3), Some("late 3".to_owned())),
            (Some(4), Some("late 4".to_owned()))
        ]
    );
    // Harvested once: nothing is left for the next harvest.
    assert!(
        plugin
            .session_start(&ctx, SessionStartSource::Startup)
            .await
            .is_empty()
    );
}

/// Aborted detached runs are never harvested, and the settle after the
/// abort does not wait for them.
#[tokio::test]
async fn aborted_detached_runs_are_not_harvested() {
    let toy = Toy {
        handlers: vec![(Ev::Bg, -1)],
    };
    let plugin = BridgePlugin::new(toy, HookRunner::default());
    let sink = Arc::new(Sink::default());
    let ctx = context(sink.clone());
    plugin.turn_failed(&ctx, &failure()).await;
    let started = std::time::Instant::now();
    let input = ContinuationInput {
        turn: 1,
        step: 1,
        last_assistant_message: String::new(),
        forced_continuations: 0,
    };
    let decision = plugin.turn_continuation(&ctx, &input).await;
    assert_eq!(
        decision,
        ContinuationDecision::Halt {
            reason: "0 harvested".to_owned()
        }
    );
    assert!(started.elapsed() < Duration::from_secs(4));
    assert_eq!(results(&sink).len(), 1);
}

/// An edited record keeps the dialect's winner and adds its per-run
/// fields; what follows the records sees every run and comes after them.
#[tokio::test]
async fn an_edited_record_adds_per_run_fields_before_the_answer() {
    let toy = Toy {
        handlers: vec![(Ev::Ask, 5), (Ev::Ask, 6)],
    };
    let plugin = BridgePlugin::new(toy, HookRunner::default());
    let sink = Arc::new(Sink::default());
    let ctx = context(sink.clone());
    let input = DisplayInput {
        turn: 1,
        step: 1,
        message_id: "m".to_owned(),
        text: "shown".to_owned(),
    };
    let decision = plugin.message_display(&ctx, &input).await;
    assert_eq!(
        decision,
        DisplayDecision::Replace {
            text: "56".to_owned()
        }
    );
    let marks: Vec<(Option<bool>, Option<String>)> = sink
        .events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|event| match event {
            EventBody::HookResult(HookResultEvent { decision, .. }) => {
                Some((decision.won, decision.overridden.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        marks,
        [
            (Some(true), Some("run 0".to_owned())),
            (Some(false), Some("run 1".to_owned()))
        ]
    );
    // Two invoked, two results, then the notice.
    assert_eq!(*sink.told.lock().unwrap(), [4]);
}
