//! The seam orchestration every bridge runs, once: select the handlers of
//! one firing, serialize the dialect's payload when it is written to a
//! hook's stdin, run the handlers in parallel or one after the other
//! (each seeing the previous one's changes, stopping at a decisive
//! answer where the dialect says so), mark which run's answer won and
//! record the results.
//!
//! A dialect takes part through [`Rules`]: what a payload looks like on
//! the wire, how a handler is launched and read, and the per-event rules
//! of the run loop (order, chaining, the answer that ends a chain). What
//! the runs mean on a seam (aggregating the readings, translating them
//! into the seam's decision with the dialect's texts) stays in the
//! dialect's pure functions.

use dsh_protocol::ExactJson;
use dsh_seams::{CancellationToken, SeamContext};

use crate::engine::{Dialect, Engine, Finished, Fired, Firing, Launch, mark_winner};

/// How one firing's handlers run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// All at once, each with the same payload (Claude Code, Codex,
    /// Gemini's default).
    Parallel,
    /// One after the other in configuration order; each sees the payload
    /// as the previous run left it ([`Rules::chain`]) and a run that
    /// [`Rules::ends_chain`] stops the rest (a dialect that always runs
    /// its hooks in turn, or a group configured to).
    Sequential,
}

/// Which of the runs whose answer was decisive won (`hook/result.won`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Winner {
    /// The first decisive run in configuration order.
    First,
    /// The last decisive run (a later answer overrides an earlier one).
    Last,
    /// Every decisive run (their answers were merged).
    Every,
    /// None of them (e.g. dsh's cap overrode the answer).
    Nobody,
}

/// Marks, among the runs `decisive` selects, which won by `winner`.
pub fn mark<D: Dialect>(
    fired: &mut [Fired<D>],
    winner: Winner,
    decisive: impl Fn(&D::Reading) -> bool,
) {
    let index = match winner {
        Winner::First => fired.iter().position(|run| decisive(&run.reading)),
        Winner::Last => fired.iter().rposition(|run| decisive(&run.reading)),
        Winner::Every | Winner::Nobody => None,
    };
    mark_winner(fired, index, &decisive);
    if winner == Winner::Every {
        for run in fired.iter_mut().filter(|run| decisive(&run.reading)) {
            run.won = Some(true);
        }
    }
}

/// A dialect's part in the run loop. Everything here is a pure function
/// of its inputs except [`Rules::launch`], which only describes the run.
pub trait Rules: Dialect + Sized {
    /// One firing's payload as the bridge built it, typed until a hook's
    /// stdin needs it.
    type Payload: Send + Sync;

    /// How `event`'s `selected` handlers run. Default: in parallel.
    fn order(&self, _event: Self::Event, _selected: &[Self::Handler]) -> Order {
        Order::Parallel
    }
    /// The JSON `handler` gets on stdin for `payload`, serialized once
    /// (`hook/invoked.input` records this text). In parallel order every
    /// handler gets the first handler's JSON.
    fn wire(
        &self,
        ctx: &SeamContext,
        event: Self::Event,
        payload: &Self::Payload,
        handler: &Self::Handler,
    ) -> ExactJson;
    /// The exact stdin bytes of `wire`. Default: its text, no newline.
    fn stdin(&self, wire: &ExactJson) -> Vec<u8> {
        wire.text().as_bytes().to_vec()
    }
    /// How `handler` runs with `stdin`.
    fn launch<'a>(
        &'a self,
        ctx: &'a SeamContext,
        handler: &Self::Handler,
        stdin: &[u8],
    ) -> Launch<'a, Self>;
    /// Reads a finished run of `handler` on `event`.
    fn read(
        &self,
        ctx: &SeamContext,
        event: Self::Event,
        handler: &Self::Handler,
        finished: Finished<'_, Self::Custom>,
    ) -> Self::Reading;
    /// How the handler in `slot` runs with `stdin`, for a dialect whose
    /// launch depends on the firing (its payload, the other selected
    /// handlers, the handler's place among them). Default:
    /// [`Rules::launch`].
    fn launch_in<'a>(
        &'a self,
        ctx: &'a SeamContext,
        slot: &Slot<'_, Self>,
        stdin: &[u8],
    ) -> Launch<'a, Self> {
        self.launch(ctx, slot.handler, stdin)
    }
    /// Reads a finished run of `handler` on `event` with the `payload` it
    /// was given (`_payload`), for a dialect whose reading depends on the firing.
    /// Default: [`Rules::read`].
    fn read_in(
        &self,
        ctx: &SeamContext,
        event: Self::Event,
        _payload: &Self::Payload,
        handler: &Self::Handler,
        finished: Finished<'_, Self::Custom>,
    ) -> Self::Reading {
        self.read(ctx, event, handler, finished)
    }
    /// In sequential order: what the next handler sees after a run read as
    /// `reading` (e.g. a rewritten tool input). Default: unchanged.
    fn chain(&self, _event: Self::Event, _payload: &mut Self::Payload, _reading: &Self::Reading) {}
    /// In sequential order: whether `reading` stops the handlers after it
    /// (e.g. a deny). Default: never.
    fn ends_chain(&self, _event: Self::Event, _reading: &Self::Reading) -> bool {
        false
    }
}

/// One selected handler's place in a firing ([`Rules::launch_in`]).
pub struct Slot<'r, D: Rules> {
    /// The event.
    pub event: D::Event,
    /// The payload as this handler gets it.
    pub payload: &'r D::Payload,
    /// Every handler the firing selected, in configuration order.
    pub selected: &'r [D::Handler],
    /// This handler's index in `selected`.
    pub index: usize,
    /// This handler.
    pub handler: &'r D::Handler,
}

/// One firing as a bridge asks for it.
pub struct Request<'a, D: Rules> {
    /// The event.
    pub event: D::Event,
    /// What its handlers are matched against.
    pub subject: D::Subject<'a>,
    /// The payload, serialized when a handler's stdin is written.
    pub payload: D::Payload,
    /// The tool call it judges, for tool events.
    pub call_id: Option<&'a str>,
    /// Cancels the awaited runs.
    pub cancel: &'a CancellationToken,
}

/// What every run of one firing shares.
struct Shot<'r, D: Rules> {
    event: D::Event,
    payload: &'r D::Payload,
    selected: &'r [D::Handler],
    offset: usize,
    call_id: Option<&'r str>,
    cancel: &'r CancellationToken,
}

impl<D: Rules> Engine<D> {
    /// Runs one firing to its readings: selects the handlers, then runs
    /// them in the dialect's [`Order`]. Nothing is recorded as a result
    /// yet: the bridge aggregates the readings and calls
    /// [`Engine::settle`] (or [`Engine::finish`]).
    pub async fn dispatch(&self, ctx: &SeamContext, request: Request<'_, D>) -> Vec<Fired<D>> {
        let Request {
            event,
            subject,
            mut payload,
            call_id,
            cancel,
        } = request;
        let selected = self.select(event, &subject);
        let rules = self.dialect();
        let Some(first) = selected.first() else {
            return Vec::new();
        };
        if rules.order(event, &selected) == Order::Parallel {
            let wire = rules.wire(ctx, event, &payload, first);
            let shot = Shot {
                event,
                payload: &payload,
                selected: &selected,
                offset: 0,
                call_id,
                cancel,
            };
            return self.fire_one(ctx, &shot, &wire, selected.clone()).await;
        }
        let mut fired = Vec::new();
        for (offset, handler) in selected.iter().enumerate() {
            let wire = rules.wire(ctx, event, &payload, handler);
            let shot = Shot {
                event,
                payload: &payload,
                selected: &selected,
                offset,
                call_id,
                cancel,
            };
            let mut runs = self
                .fire_one(ctx, &shot, &wire, vec![handler.clone()])
                .await;
            let ends = runs.iter().any(|run| rules.ends_chain(event, &run.reading));
            if let Some(run) = runs.first() {
                rules.chain(event, &mut payload, &run.reading);
            }
            fired.append(&mut runs);
            if ends {
                break;
            }
        }
        fired
    }

    /// Runs `handlers` (the selected ones from `shot.offset` on) with the
    /// same `wire`.
    async fn fire_one(
        &self,
        ctx: &SeamContext,
        shot: &Shot<'_, D>,
        wire: &ExactJson,
        handlers: Vec<D::Handler>,
    ) -> Vec<Fired<D>> {
        let rules = self.dialect();
        let stdin = rules.stdin(wire);
        let event = shot.event;
        let firing = Firing {
            event,
            payload: wire,
            call_id: shot.call_id,
            cancel: shot.cancel,
        };
        self.fire(
            ctx,
            &firing,
            handlers,
            |index, handler| {
                let slot = Slot {
                    event,
                    payload: shot.payload,
                    selected: shot.selected,
                    index: shot.offset + index,
                    handler,
                };
                rules.launch_in(ctx, &slot, &stdin)
            },
            |handler, finished| rules.read_in(ctx, event, shot.payload, handler, finished),
        )
        .await
    }

    /// Marks the winner among the decisive runs, then records every run.
    pub fn settle(
        &self,
        ctx: &SeamContext,
        event: D::Event,
        fired: &mut [Fired<D>],
        winner: Winner,
        decisive: impl Fn(&D::Reading) -> bool,
    ) {
        mark(fired, winner, decisive);
        self.finish(ctx, event, fired);
    }

    /// Records every run as it was read (no answer of theirs was decisive).
    pub fn finish(&self, ctx: &SeamContext, event: D::Event, fired: &[Fired<D>]) {
        self.record(ctx, event, fired, &|_, _| {});
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Mutex;

    use dsh_hook_runner::{HookRunner, RunRecord};
    use dsh_protocol::{HookDecision, HookEffect, Seam};
    use dsh_seams::UserNotice;

    use crate::names::{EventTable, Tabled};
    use futures::FutureExt;

    use super::*;
    use crate::engine::HandlerInfo;

    /// A dialect whose handlers are closures over the payload (a number):
    /// each answers `Some(n)` to rewrite it, or denies.
    struct Toy {
        handlers: Vec<usize>,
        order: Order,
        seen: Mutex<Vec<(usize, i64)>>,
        /// Each launch's slot: index, how many were selected, payload.
        slots: Mutex<Vec<(usize, usize, i64)>>,
        /// Where handlers 0 and 1 start real processes (a process and a
        /// detached one, each touching a file named after it); none: every
        /// handler answers in process.
        processes: Option<std::path::PathBuf>,
    }

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Answer {
        Add(i64),
        Deny,
        Nothing,
    }

    const ANSWERS: [Answer; 4] = [
        Answer::Add(1),
        Answer::Nothing,
        Answer::Deny,
        Answer::Add(10),
    ];

    impl Tabled for () {
        const TABLE: EventTable<()> = EventTable(&[((), "Toy", None, Seam::PreExecute)]);
    }

    impl Dialect for Toy {
        type Event = ();
        type Handler = usize;
        type Subject<'s> = ();
        type Custom = Answer;
        type Reading = Answer;
        type Note = ();
        fn dialect(&self) -> dsh_protocol::Dialect {
            dsh_protocol::Dialect::new("toy")
        }
        fn candidates(&self, _event: (), _subject: &()) -> Vec<&usize> {
            self.handlers.iter().collect()
        }
        fn describe(&self, handler: &usize) -> HandlerInfo {
            HandlerInfo {
                matcher: None,
                origin: "toy".into(),
                command: handler.to_string(),
            }
        }
        fn custom_record(&self, _custom: &Answer) -> RunRecord {
            RunRecord::detached()
        }
        fn decision(&self, _handler: &usize, _reading: &Answer) -> HookDecision {
            HookDecision::of(HookEffect::None)
        }
        fn parsed_output(&self, _reading: &Answer) -> Option<serde_json::Value> {
            None
        }
        fn notices(&self, _event: (), _handler: &usize, _reading: &Answer) -> Vec<UserNotice> {
            Vec::new()
        }
        fn detached_decision(&self, _handler: &usize) -> HookDecision {
            HookDecision::of(HookEffect::None)
        }
    }

    impl Rules for Toy {
        type Payload = i64;
        fn launch_in<'a>(
            &'a self,
            ctx: &'a SeamContext,
            slot: &Slot<'_, Self>,
            stdin: &[u8],
        ) -> Launch<'a, Self> {
            let place = (slot.index, slot.selected.len(), *slot.payload);
            self.slots.lock().unwrap().push(place);
            assert_eq!(slot.selected.get(slot.index), Some(slot.handler));
            self.launch(ctx, slot.handler, stdin)
        }
        fn order(&self, _event: (), _selected: &[usize]) -> Order {
            self.order
        }
        fn wire(
            &self,
            _ctx: &SeamContext,
            _event: (),
            payload: &i64,
            _handler: &usize,
        ) -> ExactJson {
            ExactJson::of(payload)
        }
        fn launch<'a>(
            &'a self,
            _ctx: &'a SeamContext,
            handler: &usize,
            stdin: &[u8],
        ) -> Launch<'a, Self> {
            let seen: i64 = std::str::from_utf8(stdin).unwrap().parse().unwrap();
            self.seen.lock().unwrap().push((*handler, seen));
            if let Some(dir) = &self.processes
                && *handler < 2
            {
                let spec = dsh_hook_runner::HookSpec {
                    program: dsh_hook_runner::HookProgram::Shell {
                        shell: "/bin/sh".into(),
                        command: format!("touch ran-{handler}"),
                    },
                    cwd: dir.clone(),
                    env: Vec::new(),
                    stdin: Vec::new(),
                    timeout: std::time::Duration::from_secs(10),
                };
                return match handler {
                    0 => Launch::Process(spec),
                    _ => Launch::Detached { spec, note: None },
                };
            }
            Launch::Custom(futures::future::ready(ANSWERS[*handler]).boxed())
        }
        fn read(
            &self,
            _ctx: &SeamContext,
            _event: (),
            _h: &usize,
            f: Finished<'_, Answer>,
        ) -> Answer {
            match f {
                Finished::Custom(answer) => *answer,
                // A hook that could not start, read as one dialect does:
                // fail closed.
                Finished::Process(run) if run.pid.is_none() => Answer::Deny,
                Finished::Process(_) => Answer::Nothing,
            }
        }
        fn chain(&self, _event: (), payload: &mut i64, reading: &Answer) {
            if let Answer::Add(n) = reading {
                *payload += n;
            }
        }
        fn ends_chain(&self, _event: (), reading: &Answer) -> bool {
            *reading == Answer::Deny
        }
    }

    type Slots = Vec<(usize, usize, i64)>;

    async fn run(order: Order) -> (Vec<Answer>, Vec<(usize, i64)>) {
        let (readings, seen, _) = run_slots(order).await;
        (readings, seen)
    }

    impl Toy {
        fn new(handlers: Vec<usize>, order: Order, processes: Option<std::path::PathBuf>) -> Self {
            Toy {
                handlers,
                order,
                seen: Mutex::new(Vec::new()),
                slots: Mutex::new(Vec::new()),
                processes,
            }
        }
    }

    /// Fires the toy event with the payload 100.
    async fn dispatch(engine: &Engine<Toy>, ctx: &SeamContext) -> Vec<Fired<Toy>> {
        let cancel = CancellationToken::new();
        let request = Request {
            event: (),
            subject: (),
            payload: 100,
            call_id: None,
            cancel: &cancel,
        };
        engine.dispatch(ctx, request).await
    }

    async fn run_slots(order: Order) -> (Vec<Answer>, Vec<(usize, i64)>, Slots) {
        let toy = Toy::new(vec![0, 1, 2, 3], order, None);
        let engine = Engine::new(toy, HookRunner::default());
        let ctx = SeamContext::detached(std::env::temp_dir());
        let fired = dispatch(&engine, &ctx).await;
        let seen = engine.dialect().seen.lock().unwrap().clone();
        let slots = engine.dialect().slots.lock().unwrap().clone();
        (
            fired.into_iter().map(|run| run.reading).collect(),
            seen,
            slots,
        )
    }

    /// Records what the engine writes and shows.
    #[derive(Default)]
    struct Recorded {
        results: Mutex<Vec<dsh_protocol::HookResultEvent>>,
        notices: Mutex<Vec<String>>,
    }

    impl dsh_seams::SessionSink for Recorded {
        fn record(&self, body: dsh_protocol::EventBody) {
            if let dsh_protocol::EventBody::HookResult(result) = body {
                self.results.lock().unwrap().push(result);
            }
        }
        fn tell_user(&self, notice: UserNotice) {
            self.notices.lock().unwrap().push(notice.text);
        }
    }

    /// Refuses every hook from the origin `toy`.
    struct RefuseToy;

    impl dsh_hook_runner::LaunchCheck for RefuseToy {
        fn admit(&self, origin: &str, _cwd: &std::path::Path) -> Result<(), String> {
            match origin {
                "toy" => Err("not started: pinned".to_owned()),
                _ => Ok(()),
            }
        }
    }

    /// A hook the runner's launch check refuses never starts, awaited or
    /// detached: the awaited one is read as a hook that could not start,
    /// the detached one is recorded as such and shown to the user.
    #[tokio::test]
    async fn a_refused_launch_starts_nothing_and_is_read_as_not_started() {
        let dir = tempfile::tempdir().unwrap();
        let fire = |runner: HookRunner| {
            let dir = dir.path().to_owned();
            async move {
                let toy = Toy::new(vec![0, 1], Order::Parallel, Some(dir.clone()));
                let engine = Engine::new(toy, runner);
                let sink = std::sync::Arc::new(Recorded::default());
                let mut ctx = SeamContext::detached(dir);
                ctx.sink = sink.clone();
                let readings: Vec<Answer> = dispatch(&engine, &ctx)
                    .await
                    .into_iter()
                    .map(|run| run.reading)
                    .collect();
                (readings, sink)
            }
        };
        let (readings, sink) =
            fire(HookRunner::default().with_launch_check(std::sync::Arc::new(RefuseToy))).await;
        assert_eq!(readings, [Answer::Deny]);
        // A detached start would finish on its own: give it the time.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert!(!dir.path().join("ran-0").exists());
        assert!(!dir.path().join("ran-1").exists());
        let results = sink.results.lock().unwrap().clone();
        assert!(
            results
                .iter()
                .all(|result| result.error.as_deref() == Some("not started: pinned")),
            "{results:?}"
        );
        // The detached one's result is recorded at once (the awaited one's
        // when its bridge records the firing).
        assert_eq!(results.len(), 1, "{results:?}");
        let notices = sink.notices.lock().unwrap().clone();
        assert!(
            notices
                .iter()
                .any(|notice| notice.contains("not started: pinned")),
            "{notices:?}"
        );
        // Without the check both start.
        let (readings, _) = fire(HookRunner::default()).await;
        assert_eq!(readings, [Answer::Nothing]);
        assert!(dir.path().join("ran-0").exists());
        for _ in 0..100 {
            if dir.path().join("ran-1").exists() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        assert!(dir.path().join("ran-1").exists());
    }

    /// A dialect that launches by the firing sees each handler's place
    /// among all the selected ones, and the payload as that run gets it.
    #[tokio::test]
    async fn launch_in_sees_each_handlers_place_and_payload() {
        let (_, _, slots) = run_slots(Order::Sequential).await;
        assert_eq!(slots, vec![(0, 4, 100), (1, 4, 101), (2, 4, 101)]);
        let (_, _, slots) = run_slots(Order::Parallel).await;
        assert_eq!(
            slots,
            vec![(0, 4, 100), (1, 4, 100), (2, 4, 100), (3, 4, 100)]
        );
    }

    #[tokio::test]
    async fn a_sequential_chain_passes_rewrites_on_and_stops_at_a_deny() {
        let (readings, seen) = run(Order::Sequential).await;
        assert_eq!(
            readings,
            vec![Answer::Add(1), Answer::Nothing, Answer::Deny]
        );
        assert_eq!(seen, vec![(0, 100), (1, 101), (2, 101)]);
    }

    #[tokio::test]
    async fn parallel_handlers_all_run_on_the_same_payload() {
        let (readings, seen) = run(Order::Parallel).await;
        assert_eq!(readings, ANSWERS.to_vec());
        assert_eq!(seen, vec![(0, 100), (1, 100), (2, 100), (3, 100)]);
    }

    fn fired(readings: &[Answer]) -> Vec<Fired<Toy>> {
        readings
            .iter()
            .enumerate()
            .map(|(handler, reading)| Fired {
                handler,
                invocation_id: handler.to_string(),
                record: RunRecord::detached(),
                reading: *reading,
                won: None,
            })
            .collect()
    }

    #[test]
    fn winners_are_marked_among_the_decisive_runs_only() {
        let readings = [Answer::Add(1), Answer::Nothing, Answer::Add(2)];
        let adds = |r: &Answer| matches!(r, Answer::Add(_));
        let marks = |winner| {
            let mut runs = fired(&readings);
            mark(&mut runs, winner, adds);
            runs.iter().map(|run| run.won).collect::<Vec<_>>()
        };
        assert_eq!(marks(Winner::First), vec![Some(true), None, Some(false)]);
        assert_eq!(marks(Winner::Last), vec![Some(false), None, Some(true)]);
        assert_eq!(marks(Winner::Every), vec![Some(true), None, Some(true)]);
        assert_eq!(marks(Winner::Nobody), vec![Some(false), None, Some(false)]);
    }
}
