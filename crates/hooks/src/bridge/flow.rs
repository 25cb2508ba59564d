//! A seam's course as data: the events it fires ([`Fire`]), how each
//! firing's runs are recorded ([`Record`]) and what comes next ([`Flow`]).

use std::sync::Arc;
use std::time::Duration;

use dsh_protocol::HookDecision;
use dsh_seams::{ContextEntry, SeamContext};

use super::Bridge;
use crate::dispatch::Winner;
use crate::engine::{Dialect, Fired};

/// One run's decision, edited by its index.
type EditFn = dyn Fn(usize, &mut HookDecision) + Send + Sync;

/// Extra per-run `hook/result` fields the dialect writes itself (by the
/// run's index), after the winner marks: notes, overrides, a second
/// winner mark of its own.
#[derive(Clone)]
pub struct Edit(Arc<EditFn>);

impl Edit {
    /// An edit of each run's decision.
    pub fn new(edit: impl Fn(usize, &mut HookDecision) + Send + Sync + 'static) -> Self {
        Edit(Arc::new(edit))
    }

    /// Applies the edit to run `index`'s decision.
    pub fn apply(&self, index: usize, decision: &mut HookDecision) {
        (self.0)(index, decision);
    }
}

impl std::fmt::Debug for Edit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Edit(..)")
    }
}

/// Two edits are equal when they are the same edit.
impl PartialEq for Edit {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Edit {}

/// How a firing's runs are recorded, by the dialect's reading of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record<D> {
    /// As read: no answer was decisive.
    AsRead,
    /// Among the runs whose answer was `D`, the [`Winner`] won.
    Won(Winner, D),
    /// The runs whose answer was `D` were overridden by dsh's cap: none
    /// won, and each carries the cap's text (`hook/result.capped`).
    Capped(D, String),
    /// Among the runs whose answer was `D`, the run at this index won
    /// (none did if `None`): the dialect's aggregation picked it.
    At(Option<usize>, D),
    /// Recorded as the inner record says, then each run's decision edited
    /// (winner marks the dialect set on [`Fired::won`] itself are kept).
    Edited(Box<Record<D>>, Edit),
}

impl<D> Record<D> {
    /// As read, with each run's decision edited by `edit`.
    pub fn edit(edit: impl Fn(usize, &mut HookDecision) + Send + Sync + 'static) -> Self {
        Record::Edited(Box::new(Record::AsRead), Edit::new(edit))
    }

    /// This record, with each run's decision then edited by `edit`.
    pub fn with(self, edit: impl Fn(usize, &mut HookDecision) + Send + Sync + 'static) -> Self {
        Record::Edited(Box::new(self), Edit::new(edit))
    }
}

impl<D> From<Option<(Winner, D)>> for Record<D> {
    fn from(mark: Option<(Winner, D)>) -> Self {
        match mark {
            Some((winner, decisive)) => Record::Won(winner, decisive),
            None => Record::AsRead,
        }
    }
}

/// The readings of a firing's runs, in run order.
pub fn readings<D: Dialect>(runs: &[Fired<D>]) -> Vec<&D::Reading> {
    runs.iter().map(|run| &run.reading).collect()
}

/// One event a seam fires, as the dialect's pure functions built it.
pub struct Fire<B: Bridge> {
    /// The event.
    pub event: B::Event,
    /// What the handlers are matched against, owned ([`Bridge::subject`]).
    pub key: B::Key,
    /// The payload, serialized when a handler's stdin is written.
    pub payload: B::Payload,
    /// The tool call it judges, for tool events.
    pub call_id: Option<String>,
    /// Runs on a token of its own rather than the turn's (a turn that
    /// failed or a session that ends may be cancelled already).
    pub fresh: bool,
}

impl<B: Bridge> Fire<B> {
    /// `event` with `payload`, unmatched, on the turn's token.
    pub fn new(event: B::Event, key: B::Key, payload: B::Payload) -> Self {
        Fire {
            event,
            key,
            payload,
            call_id: None,
            fresh: false,
        }
    }

    /// For the tool call `call_id`.
    pub fn call(mut self, call_id: &str) -> Self {
        self.call_id = Some(call_id.to_owned());
        self
    }

    /// On a fresh token.
    pub fn fresh(mut self) -> Self {
        self.fresh = true;
        self
    }
}

/// What a step of a flow sees: the dialect, the bridge's state (locked for
/// the step, never across a run) and the seam's context.
pub struct Cx<'s, B: Bridge> {
    /// The dialect.
    pub bridge: &'s B,
    /// What the bridge remembers across seams.
    pub state: &'s mut B::State,
    /// The seam's context.
    pub ctx: &'s SeamContext,
}

type Then<'a, B, Out> =
    Box<dyn for<'s> FnOnce(Cx<'s, B>, &'s mut [Fired<B>]) -> Step<'a, B, Out> + Send + 'a>;
type Later<'a, B, Out> = Box<dyn for<'s> FnOnce(Cx<'s, B>) -> Flow<'a, B, Out> + Send + 'a>;
type Marks<'a, B> = Box<
    dyn for<'s> FnOnce(Cx<'s, B>, &'s mut [Fired<B>]) -> Record<<B as Bridge>::Decisive>
        + Send
        + 'a,
>;
type After<'a, B, Out> =
    Box<dyn for<'s> FnOnce(Cx<'s, B>, &'s [Fired<B>]) -> Flow<'a, B, Out> + Send + 'a>;
type Harvest<'a, B, Out> =
    Box<dyn for<'s> FnOnce(Cx<'s, B>, Vec<ContextEntry>) -> Flow<'a, B, Out> + Send + 'a>;

/// What the dialect makes of one firing's runs: how they are recorded and
/// what comes next.
pub type Step<'a, B, Out> = (Record<<B as Bridge>::Decisive>, Flow<'a, B, Out>);

/// A seam's course: fire events one after another, each followed by the
/// dialect's pure reading of its runs, until the seam's answer.
pub enum Flow<'a, B: Bridge, Out> {
    /// The seam's answer.
    Done(Out),
    /// Fire an event; its readings go to the function, which marks the
    /// winner and says what comes next.
    Fire(Fire<B>, Then<'a, B, Out>),
    /// Look at the state (and the context) first, then go on.
    Later(Later<'a, B, Out>),
    /// Fire an event; the first function says how its runs are recorded,
    /// the second reads the recorded runs and says what comes next (for an
    /// answer whose effects must follow the `hook/result` records).
    FireRecorded(Fire<B>, Marks<'a, B>, After<'a, B, Out>),
    /// Collect the detached runs that finished (each recorded with the
    /// dialect's [`Bridge::read_detached`]); their contexts go to the
    /// function. Unfinished ones stay pending.
    Harvest(Harvest<'a, B, Out>),
    /// Wait up to this long for the detached runs still pending, then go
    /// on (they stay pending: harvest or abort them next).
    Settle(Duration, Box<Flow<'a, B, Out>>),
    /// Kill the detached runs still pending, then go on.
    AbortPending(Box<Flow<'a, B, Out>>),
}

impl<'a, B: Bridge, Out: Send + 'a> Flow<'a, B, Out> {
    /// Fires `fire`, then `then` over its runs (handlers and readings; a
    /// dialect may revise a reading before it is recorded).
    pub fn fire(
        fire: Fire<B>,
        then: impl for<'s> FnOnce(Cx<'s, B>, &'s mut [Fired<B>]) -> Step<'a, B, Out> + Send + 'a,
    ) -> Self {
        Flow::Fire(fire, Box::new(then))
    }

    /// Fires an advisory event (nothing its runs say is decisive), records
    /// its runs, then answers `out`.
    pub fn notify(fire: Fire<B>, out: Out) -> Self {
        Flow::fire(fire, move |_, _| (Record::AsRead, Flow::Done(out)))
    }

    /// Fires `fire`; `marks` says how its runs are recorded, then `after`
    /// reads the recorded runs.
    pub fn fire_recorded(
        fire: Fire<B>,
        marks: impl for<'s> FnOnce(Cx<'s, B>, &'s mut [Fired<B>]) -> Record<B::Decisive> + Send + 'a,
        after: impl for<'s> FnOnce(Cx<'s, B>, &'s [Fired<B>]) -> Flow<'a, B, Out> + Send + 'a,
    ) -> Self {
        Flow::FireRecorded(fire, Box::new(marks), Box::new(after))
    }

    /// Collects the finished detached runs, then `then` with their
    /// contexts (in start order).
    pub fn harvest(
        then: impl for<'s> FnOnce(Cx<'s, B>, Vec<ContextEntry>) -> Flow<'a, B, Out> + Send + 'a,
    ) -> Self {
        Flow::Harvest(Box::new(then))
    }

    /// Waits up to `grace` for the pending detached runs, then `next`.
    pub fn settle(grace: Duration, next: Self) -> Self {
        Flow::Settle(grace, Box::new(next))
    }

    /// Kills the pending detached runs, then `next`.
    pub fn abort_pending(next: Self) -> Self {
        Flow::AbortPending(Box::new(next))
    }

    /// Runs `later` with the state and context when the flow gets there.
    pub fn later(later: impl for<'s> FnOnce(Cx<'s, B>) -> Flow<'a, B, Out> + Send + 'a) -> Self {
        Flow::Later(Box::new(later))
    }

    /// This flow, then `next` with its answer.
    pub fn and_then<Next: Send + 'a>(
        self,
        next: impl for<'s> FnOnce(Cx<'s, B>, Out) -> Flow<'a, B, Next> + Send + 'a,
    ) -> Flow<'a, B, Next> {
        match self {
            Flow::Done(out) => Flow::later(move |cx| next(cx, out)),
            Flow::Later(later) => Flow::later(move |cx| later(cx).and_then(next)),
            Flow::Fire(fire, then) => Flow::fire(fire, move |cx, runs| {
                let (record, flow) = then(cx, runs);
                (record, flow.and_then(next))
            }),
            Flow::FireRecorded(fire, marks, after) => Flow::FireRecorded(
                fire,
                marks,
                Box::new(move |cx, runs| after(cx, runs).and_then(next)),
            ),
            Flow::Harvest(then) => {
                Flow::harvest(move |cx, contexts| then(cx, contexts).and_then(next))
            }
            Flow::Settle(grace, flow) => Flow::settle(grace, (*flow).and_then(next)),
            Flow::AbortPending(flow) => Flow::abort_pending((*flow).and_then(next)),
        }
    }
}
