//! The generic dispatcher: one firing of one event over the handlers a
//! dialect selected.

use std::sync::{Mutex, MutexGuard, PoisonError};

use dsh_hook_runner::{HookRun, HookRunner, HookSpec, RunRecord};
use dsh_protocol::{EventBody, ExactJson, HookDecision, HookInvokedEvent, Seam};
use dsh_seams::{CancellationToken, ContextEntry, SeamContext, UserNotice};
use futures::future::BoxFuture;

use crate::names::Tabled;
use serde_json::Value;
use tokio::task::JoinHandle;

/// What the log says about one configured handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandlerInfo {
    /// The matcher of the group it came from.
    pub matcher: Option<String>,
    /// Where it was configured.
    pub origin: String,
    /// The command (or URL) as configured.
    pub command: String,
}

impl HandlerInfo {
    /// The facts of a handler with this matcher, origin and command.
    pub fn new(matcher: &Option<String>, origin: &str, command: impl Into<String>) -> Self {
        HandlerInfo {
            matcher: matcher.clone(),
            origin: origin.to_owned(),
            command: command.into(),
        }
    }
}

/// An event as the log records it: its wire name and the seam it runs on.
/// Every [`Tabled`] event is one; a dialect with its own lookups implements
/// it by hand.
pub trait Named: Copy + Send + Sync {
    /// The event's wire name (`hook/invoked.event`).
    fn wire_name(self) -> &'static str;
    /// The canonical seam the event runs on.
    fn run_seam(self) -> Seam;
}

impl<E: Tabled + Send + Sync> Named for E {
    fn wire_name(self) -> &'static str {
        self.as_str()
    }

    fn run_seam(self) -> Seam {
        self.seam()
    }
}

/// One external hook dialect, as the engine needs to know it. Everything
/// here is the dialect's own vocabulary; the engine only sequences it.
pub trait Dialect: Send + Sync {
    /// The dialect's event type, named and placed on its seam.
    type Event: Named;
    /// A configured handler.
    type Handler: Clone + Send + Sync;
    /// What one firing's handlers are matched against (a tool name, a
    /// session-start source, the whole call for `if` rules, …).
    type Subject<'s>;
    /// What a handler the dialect runs itself (not as a process, e.g. an
    /// HTTP hook) hands back.
    type Custom: Send;
    /// The dialect's reading of one finished run.
    type Reading: Send + Sync;
    /// What a detached run must remember to be read when it is harvested.
    type Note: Send;

    /// Which dialect this is (`hook/invoked.dialect`).
    fn dialect(&self) -> dsh_protocol::Dialect;
    /// Which dialect one handler's runs are recorded under (default:
    /// [`Dialect::dialect`]); a bridge that also runs handlers registered
    /// another way (the Claude Agent SDK's callbacks) tells them apart here.
    fn handler_dialect(&self, _handler: &Self::Handler) -> dsh_protocol::Dialect {
        self.dialect()
    }
    /// `<dialect>:<event>`: who speaks, for notices, contexts and stops.
    fn source(&self, event: Self::Event) -> String {
        format!("{}:{}", self.dialect(), event.wire_name())
    }
    /// The handlers that may run for one firing, in configuration order,
    /// before deduplication: configured for `event`, enabled, and accepted
    /// by their matcher for `subject`.
    fn candidates(&self, event: Self::Event, subject: &Self::Subject<'_>) -> Vec<&Self::Handler>;
    /// Handlers with the same key run once, the first in configuration
    /// order; `None`: never deduplicated. Default: never.
    fn dedup_key(&self, _handler: &Self::Handler) -> Option<String> {
        None
    }
    /// A last filter after deduplication (e.g. Claude Code's `if` rules,
    /// which Claude Code applies to the deduplicated list). Default: keep.
    fn admits(
        &self,
        _event: Self::Event,
        _handler: &Self::Handler,
        _subject: &Self::Subject<'_>,
    ) -> bool {
        true
    }
    /// The handler, for `hook/invoked`.
    fn describe(&self, handler: &Self::Handler) -> HandlerInfo;
    /// The log's facts of a custom run. Default, for a dialect that runs
    /// nothing itself (`Custom = Infallible`, so never asked): no facts.
    fn custom_record(&self, _custom: &Self::Custom) -> RunRecord {
        RunRecord::detached()
    }
    /// The log's facts of a run, once read (e.g. a reading's own error
    /// replaces the runner's diagnostics). Default: unchanged.
    fn adjust_record(&self, _reading: &Self::Reading, record: RunRecord) -> RunRecord {
        record
    }
    /// What the run meant on its seam, before winner marks.
    fn decision(&self, handler: &Self::Handler, reading: &Self::Reading) -> HookDecision;
    /// The run's stdout as the dialect parsed it.
    fn parsed_output(&self, reading: &Self::Reading) -> Option<Value>;
    /// What the user is told about the run, with typed levels.
    fn notices(
        &self,
        event: Self::Event,
        handler: &Self::Handler,
        reading: &Self::Reading,
    ) -> Vec<UserNotice>;
    /// The decision recorded when a handler is started detached. Default:
    /// still running, no effect.
    fn detached_decision(&self, _handler: &Self::Handler) -> HookDecision {
        HookDecision {
            status: Some(dsh_protocol::HookRunStatus::Running),
            ..HookDecision::of(dsh_protocol::HookEffect::None)
        }
    }
}

/// How one selected handler runs.
pub enum Launch<'a, D: Dialect> {
    /// A process, awaited through the hook runner with the firing's cancel.
    Process(HookSpec),
    /// A run the dialect performs itself, awaited in parallel with the rest.
    Custom(BoxFuture<'a, D::Custom>),
    /// A process started and not awaited; `note` keeps what is needed to
    /// read it at [`Engine::harvest`] (none: nobody reads it).
    Detached {
        /// The process.
        spec: HookSpec,
        /// What reading it later needs.
        note: Option<D::Note>,
    },
    /// Recorded as invoked but not run (a handler type dsh cannot run).
    Skip,
}

/// A finished run, as handed to the dialect's reader.
pub enum Finished<'a, C> {
    /// A process the runner ran.
    Process(&'a HookRun),
    /// A custom run.
    Custom(&'a C),
}

impl<'a> Finished<'a, std::convert::Infallible> {
    /// The process run of a dialect that runs nothing itself.
    pub fn process(self) -> &'a HookRun {
        match self {
            Finished::Process(run) => run,
            Finished::Custom(never) => match *never {},
        }
    }
}

/// One firing: the event, the exact stdin payload, the call it judges and
/// the token that cancels its runs.
pub struct Firing<'a, D: Dialect> {
    /// The event.
    pub event: D::Event,
    /// The JSON text sent to every handler.
    pub payload: &'a ExactJson,
    /// The tool call it judges, for tool events.
    pub call_id: Option<&'a str>,
    /// Cancels the awaited runs.
    pub cancel: &'a CancellationToken,
}

/// One awaited run, read.
pub struct Fired<D: Dialect> {
    /// The handler.
    pub handler: D::Handler,
    /// Pairs `hook/invoked` with `hook/result`.
    pub invocation_id: String,
    /// The process facts for the log.
    pub record: RunRecord,
    /// The dialect's reading.
    pub reading: D::Reading,
    /// Whether this run's decisive answer won (set by [`mark_winner`]).
    pub won: Option<bool>,
}

/// A detached run waiting to be harvested.
struct Pending<D: Dialect> {
    invocation_id: String,
    handler: D::Handler,
    note: D::Note,
    handle: JoinHandle<HookRun>,
}

/// What reading a harvested run produced.
pub struct Harvested {
    /// Its decision (the engine records it).
    pub decision: HookDecision,
    /// Its parsed stdout.
    pub parsed: Option<Value>,
    /// Context for the model, if any.
    pub context: Option<ContextEntry>,
}

/// The dispatcher for one dialect.
pub struct Engine<D: Dialect> {
    dialect: D,
    runner: HookRunner,
    pending: Mutex<Vec<Pending<D>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Keeps the first of the handlers that share a key, in order; handlers
/// without a key are all kept.
pub fn dedup<'h, H>(
    handlers: impl IntoIterator<Item = &'h H>,
    key: impl Fn(&H) -> Option<String>,
) -> Vec<&'h H>
where
    H: 'h,
{
    let mut seen = std::collections::HashSet::new();
    handlers
        .into_iter()
        .filter(|handler| key(handler).is_none_or(|k| seen.insert(k)))
        .collect()
}

/// Marks, among the runs `decisive` selects, whether each is the `winner`.
pub fn mark_winner<D: Dialect>(
    fired: &mut [Fired<D>],
    winner: Option<usize>,
    decisive: impl Fn(&D::Reading) -> bool,
) {
    for (index, run) in fired.iter_mut().enumerate() {
        if decisive(&run.reading) {
            run.won = Some(Some(index) == winner);
        }
    }
}

impl<D: Dialect> Engine<D> {
    /// An engine for `dialect`, running processes through `runner`.
    pub fn new(dialect: D, runner: HookRunner) -> Self {
        Engine {
            dialect,
            runner,
            pending: Mutex::new(Vec::new()),
        }
    }

    /// The dialect.
    pub fn dialect(&self) -> &D {
        &self.dialect
    }

    /// The hook runner.
    pub fn runner(&self) -> &HookRunner {
        &self.runner
    }

    /// The handlers one firing runs, in configuration order: the dialect's
    /// candidates, deduplicated, then its last filter.
    pub fn select(&self, event: D::Event, subject: &D::Subject<'_>) -> Vec<D::Handler> {
        dedup(self.dialect.candidates(event, subject), |handler| {
            self.dialect.dedup_key(handler)
        })
        .into_iter()
        .filter(|handler| self.dialect.admits(event, handler, subject))
        .cloned()
        .collect()
    }

    /// Runs one firing over `handlers` (already selected, in configuration
    /// order): records `hook/invoked` for each before any starts, starts
    /// detached ones (recording their result at once), runs the others in
    /// parallel, and reads each with `read`. Results are not recorded yet:
    /// the bridge merges first, then calls [`Engine::record`].
    pub async fn fire<'a>(
        &self,
        ctx: &SeamContext,
        firing: &Firing<'_, D>,
        handlers: Vec<D::Handler>,
        launch: impl Fn(usize, &D::Handler) -> Launch<'a, D>,
        read: impl Fn(&D::Handler, Finished<'_, D::Custom>) -> D::Reading,
    ) -> Vec<Fired<D>> {
        let mut processes = Vec::new();
        let mut process_slots = Vec::new();
        let mut customs = Vec::new();
        let mut custom_slots = Vec::new();
        let mut awaited: Vec<(D::Handler, String)> = Vec::new();
        // Hooks the runner would not start: what trust pinned is not what
        // they would run now (read as hooks that could not start).
        let mut refused: Vec<(usize, HookRun)> = Vec::new();
        for (index, handler) in handlers.into_iter().enumerate() {
            let info = self.dialect.describe(&handler);
            let origin = info.origin.clone();
            let invocation_id = ctx.sink.new_id();
            ctx.sink.record(EventBody::HookInvoked(HookInvokedEvent {
                turn: ctx.turn,
                invocation_id: invocation_id.clone(),
                dialect: self.dialect.handler_dialect(&handler),
                event: firing.event.wire_name().to_owned(),
                seam: firing.event.run_seam(),
                matcher: info.matcher,
                origin: Some(info.origin),
                command: info.command,
                input: firing.payload.clone(),
                call_id: firing.call_id.map(str::to_owned),
            }));
            match launch(index, &handler) {
                Launch::Process(spec) => {
                    match self.runner.refusal(&origin, &spec) {
                        None => {
                            process_slots.push(awaited.len());
                            processes.push(spec);
                        }
                        Some(run) => refused.push((awaited.len(), run)),
                    }
                    awaited.push((handler, invocation_id));
                }
                Launch::Custom(future) => {
                    custom_slots.push(awaited.len());
                    customs.push(future);
                    awaited.push((handler, invocation_id));
                }
                Launch::Detached { spec, note } => {
                    if let Some(run) = self.runner.refusal(&origin, &spec) {
                        ctx.sink.record(RunRecord::of(&run).into_event(
                            ctx.turn,
                            invocation_id.clone(),
                            None,
                            self.dialect.detached_decision(&handler),
                        ));
                        ctx.sink.tell_user(crate::verdict::warning(
                            self.dialect.handler_dialect(&handler).as_str(),
                            format!(
                                "{} hook {origin} did not start: {}",
                                firing.event.wire_name(),
                                run.describe()
                            ),
                        ));
                        continue;
                    }
                    let handle = self.runner.spawn_detached(spec);
                    ctx.sink.record(RunRecord::detached().into_event(
                        ctx.turn,
                        invocation_id.clone(),
                        None,
                        self.dialect.detached_decision(&handler),
                    ));
                    match note {
                        Some(note) => lock(&self.pending).push(Pending {
                            invocation_id,
                            handler,
                            note,
                            handle,
                        }),
                        // Nobody reads it: the process runs on, unawaited.
                        None => drop(handle),
                    }
                }
                Launch::Skip => {}
            }
        }
        let (process_runs, custom_runs) = futures::join!(
            self.runner.run_all(processes, firing.cancel),
            futures::future::join_all(customs)
        );
        let mut reads: Vec<Option<(D::Reading, RunRecord)>> =
            awaited.iter().map(|_| None).collect();
        for (slot, run) in process_slots.into_iter().zip(process_runs.iter()) {
            if let Some((handler, _)) = awaited.get(slot) {
                let reading = read(handler, Finished::Process(run));
                let record = self.dialect.adjust_record(&reading, RunRecord::of(run));
                reads[slot] = Some((reading, record));
            }
        }
        for (slot, run) in &refused {
            if let Some((handler, _)) = awaited.get(*slot) {
                let reading = read(handler, Finished::Process(run));
                let record = self.dialect.adjust_record(&reading, RunRecord::of(run));
                reads[*slot] = Some((reading, record));
            }
        }
        for (slot, custom) in custom_slots.into_iter().zip(custom_runs.iter()) {
            if let Some((handler, _)) = awaited.get(slot) {
                let reading = read(handler, Finished::Custom(custom));
                let record = self
                    .dialect
                    .adjust_record(&reading, self.dialect.custom_record(custom));
                reads[slot] = Some((reading, record));
            }
        }
        awaited
            .into_iter()
            .zip(reads)
            .filter_map(|((handler, invocation_id), read)| {
                let (reading, record) = read?;
                Some(Fired {
                    handler,
                    invocation_id,
                    record,
                    reading,
                    won: None,
                })
            })
            .collect()
    }

    /// Records `hook/result` for every run in configuration order, with the
    /// dialect's decision, its winner mark, and what `extra` adds; then shows
    /// each run's notices.
    pub fn record(
        &self,
        ctx: &SeamContext,
        event: D::Event,
        fired: &[Fired<D>],
        extra: &dyn Fn(usize, &mut HookDecision),
    ) {
        for (index, run) in fired.iter().enumerate() {
            let mut decision = self.dialect.decision(&run.handler, &run.reading);
            if run.won.is_some() {
                decision.won = run.won;
            }
            extra(index, &mut decision);
            ctx.sink.record(run.record.clone().into_event(
                ctx.turn,
                run.invocation_id.clone(),
                self.dialect.parsed_output(&run.reading),
                decision,
            ));
            for notice in self.dialect.notices(event, &run.handler, &run.reading) {
                ctx.sink.tell_user(notice);
            }
        }
    }

    /// Records and reads every detached run that has finished; returns the
    /// contexts they produced, in start order. Unfinished runs stay pending.
    pub fn harvest(
        &self,
        ctx: &SeamContext,
        read: impl Fn(&D::Handler, &D::Note, &HookRun) -> Harvested,
    ) -> Vec<ContextEntry> {
        let finished: Vec<Pending<D>> = {
            let mut pending = lock(&self.pending);
            let (done, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut *pending)
                .into_iter()
                .partition(|p| p.handle.is_finished());
            *pending = waiting;
            done
        };
        let mut contexts = Vec::new();
        for pending in finished {
            let Some(run) = futures::FutureExt::now_or_never(pending.handle).and_then(Result::ok)
            else {
                continue;
            };
            let harvested = read(&pending.handler, &pending.note, &run);
            // Recorded in the turn that harvests it (none at session end):
            // the log accepts hook records only inside the open turn or
            // outside every turn, and a run started in an earlier turn (an
            // async hook, a StopFailure hook) pairs with its `hook/invoked`
            // there by invocation id.
            ctx.sink.record(RunRecord::of(&run).into_event(
                ctx.turn,
                pending.invocation_id,
                harvested.parsed,
                harvested.decision,
            ));
            contexts.extend(harvested.context);
        }
        contexts
    }

    /// Waits up to `grace` for the detached runs still pending to finish
    /// (they stay pending: harvest or abort them afterwards). For teardown,
    /// where a run that is quick should still get to finish and a slow one
    /// must not hold dsh up.
    pub async fn settle_pending(&self, grace: std::time::Duration) {
        let deadline = tokio::time::Instant::now() + grace;
        loop {
            let done = lock(&self.pending).iter().all(|p| p.handle.is_finished());
            if done || tokio::time::Instant::now() >= deadline {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }

    /// Kills every detached run still pending (session teardown).
    pub fn abort_pending(&self) {
        for pending in std::mem::take(&mut *lock(&self.pending)) {
            pending.handle.abort();
        }
    }
}
