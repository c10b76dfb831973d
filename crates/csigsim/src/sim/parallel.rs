//! A conservative parallel scheduler: partitions, each with its own queue
//! in the simulation's order (time, then owner: [`Item::owner`]), run
//! windows of simulated time on their own and exchange only what crosses
//! between them.
//!
//! The nodes are cut into partitions, each with its own queue, handled by
//! its own [`PartHandler`]. Every event one partition schedules for another
//! is at least `lookahead` after the event being handled (a link's delay),
//! so the partitions can run the window `[W, end)`, `end` being `W +
//! lookahead` rounded down to a block of the wheel, each on its own:
//!
//! - **A partition's queue pops in the single queue's order.** The order
//!   of one picosecond's events is their owners' (the kind of event, then
//!   the port, host, flow or operation it belongs to, in an order drawn
//!   per block), a function of the events alone: not of when or where
//!   they were pushed. Two events of one time and owner are copies of one
//!   timer, which act alike in either order. So a partition's events pop
//!   in the order the sequential engine pops them, whatever else the
//!   other partitions do.
//! - **An event for another partition is held** to the window's end (it
//!   lies at or after it: the lookahead promised that), with what it
//!   carries in the window's mail ([`Partition::mail`]: the packet that
//!   crosses, say).
//! - **At the next window's start, each partition takes what was held for
//!   it**, through its handler's [`PartHandler::import`], into its queue;
//!   the queue puts each event in its place by time and owner.
//!
//! Between two windows, one serial step swaps the windows' records and
//! finds the next window's start: nothing is numbered or merged. The
//! outcome does not depend on the number of threads or partitions.

use super::queue::{EventQueue, Item, BLOCK_PS};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, Mutex, RwLock};

/// The end of a window that reaches the end of time.
const UNBOUNDED: u64 = u64::MAX;

/// Events per line of a partition's queue: as the sequential queue's
/// (8-byte packed events, six and their offsets a line).
pub(super) const PART_LINE: usize = super::QUEUE_LINE;

/// The stages in which a partition shows its handler the events ahead
/// ([`PartHandler::prefetch`]).
pub const PREFETCH_STAGES: usize = 3;

/// How many events ahead of the one being imported the next window shows
/// its handler ([`PartHandler::prefetch_import`]).
const IMPORT_AHEAD: usize = 8;

/// A push held to the window's end: its time and its event.
#[derive(Clone, Copy)]
struct Held<E> {
    t: u64,
    ev: E,
}

/// A partition's record of one window: what it sends the others.
struct Log<E, M> {
    /// Events popped in the window.
    popped: u64,
    /// The held pushes, by the partition they are for.
    held: Vec<Vec<Held<E>>>,
    /// The earliest held time, if any push was held.
    held_min: Option<u64>,
    /// What the window sent each partition beside its events
    /// ([`Partition::mail`]).
    mail: Vec<M>,
}

impl<E, M: Mail> Log<E, M> {
    fn new(partitions: usize) -> Self {
        Log { popped: 0, held: (0..partitions).map(|_| Vec::new()).collect(), held_min: None, mail: (0..partitions).map(|_| M::default()).collect() }
    }

    fn clear(&mut self) {
        self.popped = 0;
        self.held.iter_mut().for_each(Vec::clear);
        self.held_min = None;
        self.mail.iter_mut().for_each(Mail::clear);
    }

    /// Events held for other partitions.
    fn crossings(&self) -> u64 {
        self.held.iter().map(|h| h.len() as u64).sum()
    }
}

/// One partition: its queue and the record of the window being run.
pub struct Partition<E, M = ()> {
    id: u32,
    q: EventQueue<E, PART_LINE>,
    /// End of the window being run (a block boundary).
    end: u64,
    /// The last time this window may pop: before `end` and before the
    /// run's `until` ([`Scheduler::run_until`]); `u64::MAX` when neither
    /// bounds it.
    last: u64,
    log: Log<E, M>,
    /// The pops as (time, owner, partition), when a trace is kept.
    trace: Option<Vec<(u64, u64, u32)>>,
}

impl<E: Item, M: Mail> Partition<E, M> {
    fn new(id: u32, partitions: usize) -> Self {
        Partition { id, q: EventQueue::new(), end: 0, last: u64::MAX, log: Log::new(partitions), trace: None }
    }

    /// This partition's index.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// Schedules `ev` at `t` for partition `dest`, from the handler of the
    /// event being handled. An event for another partition must lie at or
    /// after the window's end: the lookahead promised that.
    #[inline]
    pub fn push(&mut self, t: u64, dest: u32, ev: E) {
        if dest == self.id {
            self.q.push(t, ev);
            return;
        }
        assert!(
            t >= self.end,
            "an event for partition {dest} at {t} ps from partition {} inside its window ending at {} ps: \
             a delay between partitions is shorter than the lookahead",
            self.id,
            self.end
        );
        let log = &mut self.log;
        log.held[dest as usize].push(Held { t, ev });
        log.held_min = Some(log.held_min.map_or(t, |m| m.min(t)));
    }

    /// Schedules `ev` at `t` in this partition's own queue, and returns
    /// where the queue put it ([`EventQueue::push_placed`]).
    #[inline]
    pub fn push_own(&mut self, t: u64, ev: E) -> u32 {
        self.q.push_placed(t, ev)
    }

    /// Takes back the pending event `ev` at `t`, put at `place`, from this
    /// partition's own queue, which must hold it
    /// ([`crate::sim::Ctx::reschedule`]).
    #[inline]
    pub fn remove(&mut self, t: u64, ev: E, place: u32)
    where
        E: PartialEq,
    {
        assert!(self.q.remove(t, ev, place), "partition {}: no such event pending at {t} ps", self.id);
    }

    /// What this window sends partition `dest` beside its events (the
    /// packets that cross, say), for the handler to add to: an event held
    /// for `dest` may name what it added (an index, say). `dest` reads it
    /// in [`PartHandler::import`] when it takes the event; it is emptied
    /// when the next window but one starts.
    #[inline]
    pub fn mail(&mut self, dest: u32) -> &mut M {
        &mut self.log.mail[dest as usize]
    }

    /// Takes the events the other partitions held for this one in the last
    /// window (`prev`), through the handler's [`PartHandler::import`] with
    /// their sender's mail.
    fn take_held<H: PartHandler<E, M>>(&mut self, prev: &[Log<E, M>], h: &mut H) {
        let me = self.id as usize;
        for (s, log) in prev.iter().enumerate() {
            if s == me {
                continue;
            }
            h.absorb(&log.mail[me]);
            let held = &log.held[me];
            for (i, x) in held.iter().enumerate() {
                if let Some(a) = held.get(i + IMPORT_AHEAD) {
                    h.prefetch_import(&a.ev, &log.mail[me], IMPORT_AHEAD);
                }
                let ev = h.import(x.ev, &log.mail[me]);
                self.q.push(x.t, ev);
            }
        }
    }

    /// The next event of the window, if any.
    #[inline]
    fn pop(&mut self) -> Option<(u64, E)> {
        let (t, e) = self.q.pop_within(self.end, self.last)?;
        self.log.popped += 1;
        if let Some(trace) = &mut self.trace {
            trace.push((t, e.owner(), self.id));
        }
        Some((t, e))
    }

    /// Takes its held events, then runs the window: pops and handles its
    /// events.
    fn run_window<H: PartHandler<E, M>>(&mut self, prev: &[Log<E, M>], h: &mut H) {
        self.take_held(prev, h);
        let spacing = h.prefetch_spacing();
        while let Some((t, ev)) = self.pop() {
            // The next events of this block, for the handler to ask the
            // CPU for what they will touch while this one is handled: the
            // next one, and the stages further ahead when the handler asks
            // for them.
            if spacing > 0 {
                // Stage by stage, as in the sequential loop: a loop over
                // the stages was not unrolled.
                let stage = |stage: usize| {
                    if let Some(next) = self.q.peek_ahead(stage * spacing - 1) {
                        h.prefetch(next, stage);
                    }
                };
                const _: () = assert!(PREFETCH_STAGES == 3);
                stage(3);
                stage(2);
                stage(1);
            }
            if let Some(next) = self.q.peek_ahead(0) {
                h.prefetch(next, 0);
            }
            h.handle(t, ev, self);
        }
    }
}

/// What one partition sends another in a window beside its events, in a
/// container of the handler's choosing ([`Partition::mail`]).
pub trait Mail: Default + Send + Sync {
    /// Empties it for another window.
    fn clear(&mut self);
}

impl<T: Send + Sync> Mail for Vec<T> {
    fn clear(&mut self) {
        Vec::clear(self);
    }
}

/// No mail.
impl Mail for () {
    fn clear(&mut self) {}
}

/// What handles a partition's events, pushing through
/// [`Partition::push`].
pub trait PartHandler<E, M = ()>: Send {
    fn handle(&mut self, t: u64, ev: E, part: &mut Partition<E, M>);
    /// Takes what another partition's last window sent this one beside
    /// its events ([`Partition::mail`]), before its events are taken:
    /// state that must be in place before anything of the new window
    /// happens (a window's mail is at least a lookahead ahead of what
    /// reads it).
    fn absorb(&mut self, mail: &M) {
        let _ = mail;
    }
    /// The partition will handle `ev` next (`stage` 0), or it is at stage
    /// `stage` (1 to [`PREFETCH_STAGES`]) of those [`Self::prefetch_spacing`]
    /// events apart, as [`super::Handler::prefetch`]: a hint only.
    #[inline]
    fn prefetch(&self, ev: &E, stage: usize) {
        let _ = (ev, stage);
    }
    /// How many events apart to show the stages of [`Self::prefetch`]
    /// (asked once a window); 0 for none.
    fn prefetch_spacing(&self) -> usize {
        0
    }
    /// The event `ahead` places after the one about to be imported will
    /// be imported from `mail` too (if nothing else comes between): the
    /// handler may ask the CPU for what that import will touch. A hint
    /// only.
    #[inline]
    fn prefetch_import(&self, ev: &E, mail: &M, ahead: usize) {
        let _ = (ev, mail, ahead);
    }
    /// An event another partition held for this one, as it enters this
    /// partition's queue, with the mail its sender sent this partition in
    /// that window: the handler may turn what the event names in `mail`
    /// into state of its own.
    #[inline]
    fn import(&mut self, ev: E, mail: &M) -> E {
        let _ = mail;
        ev
    }
}

/// What a run did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ParallelStats {
    /// Events popped, in all partitions.
    pub events: u64,
    /// Windows run.
    pub windows: u64,
    /// Events one partition pushed for another.
    pub crossings: u64,
    /// Wall-clock seconds spent between windows (the serial step that
    /// swaps the windows' records and opens the next window), during
    /// which no window runs.
    pub merge_s: f64,
}

/// The earliest time at which an event may be pending: in a queue, or held
/// for a partition in the last window's records.
fn earliest<'a, E: Item + 'a, M: 'a>(parts: impl Iterator<Item = &'a Partition<E, M>>, prev: &[Log<E, M>]) -> Option<u64> {
    let queued = parts.filter_map(|p| p.q.next_bound()).min();
    queued.into_iter().chain(prev.iter().filter_map(|l| l.held_min)).min()
}

/// Opens the next window on every partition: false when every queue and
/// every list of held events is empty, or holds nothing before `until`.
fn open_window<E: Item, M: Mail>(parts: &mut [&mut Partition<E, M>], prev: &[Log<E, M>], lookahead: u64, until: u64) -> bool {
    let Some(w) = earliest(parts.iter().map(|p| &**p), prev) else { return false };
    if w >= until && until != UNBOUNDED {
        return false;
    }
    // Rounded down to a block, so that no queue reads a block that a held
    // push may still reach; at least one block after `w`, since the
    // lookahead is at least a block. Past the last block of time the
    // window has no end: what is pushed there for another partition lies
    // at the end of time, saturated, and is held for the next window.
    let end = match w.checked_add(lookahead) {
        Some(e) if e / BLOCK_PS * BLOCK_PS > w => e / BLOCK_PS * BLOCK_PS,
        _ => UNBOUNDED,
    };
    // A run that ends at `until` ends its last window at the block
    // boundary at or after it (the queues stop at `until` itself).
    let end = end.min(until.checked_next_multiple_of(BLOCK_PS).unwrap_or(UNBOUNDED));
    for p in parts.iter_mut() {
        p.end = end;
        // `end` is at least a block; `until` more than `w`.
        p.last = if end == UNBOUNDED && until == UNBOUNDED { u64::MAX } else { end.min(until) - 1 };
    }
    true
}

/// The serial step between windows: unless no window has run yet (`ran`
/// false), counts the window just run and makes each partition's record
/// the one its held events are taken from (the older record, emptied, is
/// reused); then opens the next window. False when nothing is left.
fn between_windows<E: Item, M: Mail>(stats: &mut ParallelStats, parts: &mut [&mut Partition<E, M>], prev: &mut [Log<E, M>], lookahead: u64, until: u64, ran: bool) -> bool {
    if ran {
        stats.windows += 1;
        for (p, l) in parts.iter_mut().zip(prev.iter_mut()) {
            stats.events += p.log.popped;
            stats.crossings += p.log.crossings();
            std::mem::swap(&mut p.log, l);
            p.log.clear();
        }
    }
    open_window(parts, prev, lookahead, until)
}

/// The partitions and the lookahead.
pub struct Scheduler<E, M = ()> {
    /// Set while a run is under way: a run that panicked leaves a window
    /// half done, and the scheduler refuses to go on from there.
    running: bool,
    /// Set by a run that ended inside a block of the wheel: a push from
    /// outside ([`Scheduler::push`]) could fall before what its queues
    /// have read, so none is taken; runs may go on.
    ended: bool,
    parts: Vec<Partition<E, M>>,
    /// The last window's records: where held events are taken from.
    prev: Vec<Log<E, M>>,
    lookahead: u64,
    stats: ParallelStats,
}

impl<E: Item + Send + Sync, M: Mail> Scheduler<E, M> {
    /// `partitions` queues; `lookahead` is the shortest delay of an event
    /// one partition schedules for another, at least one block of the
    /// wheel ([`BLOCK_PS`], 1,024 ps).
    pub fn new(partitions: usize, lookahead: u64) -> Self {
        assert!(partitions >= 1 && partitions <= u32::MAX as usize);
        assert!(lookahead >= BLOCK_PS, "a lookahead of {lookahead} ps is shorter than a block of the wheel ({BLOCK_PS} ps)");
        Scheduler {
            running: false,
            ended: false,
            parts: (0..partitions).map(|i| Partition::new(i as u32, partitions)).collect(),
            prev: (0..partitions).map(|_| Log::new(partitions)).collect(),
            lookahead,
            stats: ParallelStats::default(),
        }
    }

    /// Every partition's queue asks for its next block's chunks while it
    /// pops a block ([`EventQueue::fetch_ahead_blocks`]): for partitions
    /// whose pending events outgrow the caches. A hint only.
    pub fn fetch_ahead_blocks(&mut self, on: bool) {
        self.parts.iter_mut().for_each(|p| p.q.fetch_ahead_blocks(on));
    }

    /// Records every pop (for tests).
    pub fn keep_trace(&mut self) {
        self.parts.iter_mut().for_each(|p| p.trace = Some(Vec::new()));
    }

    /// The pops so far as (time, owner, partition), in the single queue's
    /// order: the partitions' pops merged by time, then owner as the queue
    /// orders them. (A partition's own pops keep their order: one pushed
    /// for the current picosecond pops after those before it, whatever
    /// its owner, as in the single queue.)
    pub fn trace(&self) -> Vec<(u64, u64, u32)> {
        let logs: Vec<&[(u64, u64, u32)]> = self.parts.iter().map(|p| p.trace.as_deref().unwrap_or(&[])).collect();
        let key = |&(t, owner, _): &(u64, u64, u32)| (t, owner ^ super::queue::block_mask(t / BLOCK_PS));
        let mut heads = vec![0; logs.len()];
        let mut all = Vec::with_capacity(logs.iter().map(|l| l.len()).sum());
        while let Some(i) = (0..logs.len()).filter(|&i| heads[i] < logs[i].len()).min_by_key(|&i| key(&logs[i][heads[i]])) {
            all.push(logs[i][heads[i]]);
            heads[i] += 1;
        }
        all
    }

    /// Schedules `ev` at `t` for partition `dest` before the run.
    pub fn push(&mut self, t: u64, dest: u32, ev: E) {
        assert!(!self.running, "the scheduler's last run panicked");
        assert!(!self.ended, "the scheduler's last run ended inside a block of the wheel");
        self.parts[dest as usize].q.push(t, ev);
    }

    /// Runs windows until every queue is empty, the window's work on
    /// `threads` threads (at most one a partition); `handlers[i]` handles
    /// partition `i`'s events. The order of events, and so the outcome, is
    /// the same for any number of threads.
    pub fn run<H: PartHandler<E, M>>(&mut self, handlers: &mut [H], threads: usize) -> ParallelStats {
        self.run_until(handlers, threads, UNBOUNDED)
    }

    /// [`Scheduler::run`] for the events before `until` only (`u64::MAX`:
    /// every event); the others wait for a later run, which may go on from
    /// any `until`, on a block boundary of the wheel ([`BLOCK_PS`]) or
    /// inside a block (a link's change of state, before which every
    /// partition must have handled everything). After a run that ended
    /// inside a block the scheduler takes no more [`Scheduler::push`]es.
    pub fn run_until<H: PartHandler<E, M>>(&mut self, handlers: &mut [H], threads: usize, until: u64) -> ParallelStats {
        assert_eq!(handlers.len(), self.parts.len());
        assert!(!self.running, "the scheduler's last run panicked");
        self.running = true;
        let stats = self.run_windows(handlers, threads, until);
        self.running = false;
        self.ended |= until != UNBOUNDED && !until.is_multiple_of(BLOCK_PS);
        stats
    }

    /// The earliest time at which an event may be pending (a lower bound),
    /// or `None` when nothing is.
    pub fn next_bound(&self) -> Option<u64> {
        earliest(self.parts.iter(), &self.prev)
    }

    /// What the runs so far did.
    pub fn stats(&self) -> ParallelStats {
        self.stats
    }

    fn run_windows<H: PartHandler<E, M>>(&mut self, handlers: &mut [H], threads: usize, until: u64) -> ParallelStats {
        let threads = threads.clamp(1, self.parts.len());
        let Scheduler { parts, prev, lookahead, stats, .. } = self;
        let lookahead = *lookahead;
        if threads == 1 {
            let mut refs: Vec<&mut Partition<E, M>> = parts.iter_mut().collect();
            let mut more = between_windows(stats, &mut refs, prev, lookahead, until, false);
            while more {
                for (p, h) in refs.iter_mut().zip(handlers.iter_mut()) {
                    p.run_window(prev, h);
                }
                let start = std::time::Instant::now();
                more = between_windows(stats, &mut refs, prev, lookahead, until, true);
                stats.merge_s += start.elapsed().as_secs_f64();
            }
            return *stats;
        }
        // Each partition behind a lock that one thread takes for writing
        // during a window, and the thread of the serial step between
        // windows; its handler behind a lock of its own. The last window's
        // records are read by all during a window and written by the
        // serial step only.
        let cells: Vec<RwLock<&mut Partition<E, M>>> = parts.iter_mut().map(RwLock::new).collect();
        let handler_cells: Vec<Mutex<&mut H>> = handlers.iter_mut().map(Mutex::new).collect();
        let prev = RwLock::new(prev);
        // The serial step between windows, on one thread while the others wait.
        let between = |ran: bool| -> bool {
            let start = std::time::Instant::now();
            let mut guards: Vec<_> = cells.iter().map(|c| c.write().expect("a window panicked")).collect();
            let mut refs: Vec<&mut Partition<E, M>> = guards.iter_mut().map(|g| &mut ***g).collect();
            let mut prev = prev.write().expect("a window panicked");
            let more = between_windows(stats, &mut refs, &mut prev[..], lookahead, until, ran);
            if ran {
                stats.merge_s += start.elapsed().as_secs_f64();
            }
            more
        };
        let done = AtomicBool::new(false);
        let barrier = Barrier::new(threads);
        // A handler that panics must not leave the other threads waiting
        // at a barrier: its thread keeps the panic, still meets the others,
        // and the run stops at the barrier; the panic is raised again once
        // every thread has left.
        let panicked: Mutex<Option<Box<dyn std::any::Any + Send>>> = Mutex::new(None);
        let keep = |run: std::thread::Result<()>| {
            if let Err(e) = run {
                panicked.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
            }
        };
        let failed = || panicked.lock().unwrap_or_else(|e| e.into_inner()).is_some();
        // Thread `w`'s share of a window.
        let window = |w: usize| {
            keep(std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let prev = prev.read().unwrap_or_else(|e| e.into_inner());
                for (cell, h) in cells.iter().zip(&handler_cells).skip(w).step_by(threads) {
                    let mut p = cell.write().unwrap_or_else(|e| e.into_inner());
                    let mut h = h.lock().unwrap_or_else(|e| e.into_inner());
                    p.run_window(&prev[..], &mut **h);
                }
            })));
        };
        std::thread::scope(|s| {
            let mut between = between;
            done.store(!between(false), Ordering::Release);
            for w in 1..threads {
                let (window, barrier, done) = (&window, &barrier, &done);
                s.spawn(move || loop {
                    barrier.wait();
                    if done.load(Ordering::Acquire) {
                        return;
                    }
                    window(w);
                    barrier.wait();
                });
            }
            loop {
                barrier.wait();
                if done.load(Ordering::Acquire) {
                    return;
                }
                window(0);
                barrier.wait();
                let more = !failed()
                    && match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| between(true))) {
                        Ok(more) => more,
                        Err(e) => {
                            keep(Err(e));
                            false
                        }
                    };
                done.store(!more, Ordering::Release);
            }
        });
        if let Some(e) = panicked.into_inner().unwrap_or_else(|e| e.into_inner()) {
            std::panic::resume_unwind(e);
        }
        *stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// An event of the model: the node it is for and a value.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Ev {
        node: u32,
        value: u64,
    }

    /// Values are below 2^24 and nodes below 2^12, so that the owner (node
    /// above value) tells every two different events of a node apart; two
    /// of one time and owner are copies, as in the simulation.
    impl Item for Ev {
        const FILLER: Ev = Ev { node: 0, value: 0 };
        fn owner(&self) -> u64 {
            debug_assert!(self.node < 1 << 12 && self.value < 1 << 24);
            (self.node as u64) << 24 | self.value
        }
    }

    /// The single queue's order of `e` at `t`, for a reference queue of
    /// ordered keys: its time, then its owner as the queue compares owners
    /// in `t`'s block.
    fn key(t: u64, e: &Ev) -> (u64, u64) {
        (t, e.owner() ^ crate::sim::queue::block_mask(t / BLOCK_PS))
    }

    fn mix(x: u64) -> u64 {
        crate::rng::mix(x, 0)
    }

    /// A model whose every step depends on the order of what came before:
    /// a node's state folds in each event it handles, and what it schedules
    /// (how many events, for which nodes, how far ahead) comes from that
    /// state. Delays are drawn from a few values, so ties are common, and
    /// are at least `lookahead` between partitions.
    #[derive(Clone)]
    struct Model {
        nodes: u32,
        parts: u32,
        lookahead: u64,
        /// Events a node handles before it stops scheduling.
        budget: u32,
        /// Delays beyond the wheel's span (among its far events) as well.
        wide: bool,
        /// The partitions' queues ask for their next blocks ahead.
        fetch_ahead: bool,
        state: Vec<u64>,
        handled: Vec<u32>,
        /// Each node's handled events, in order.
        seen: Vec<Vec<(u64, u64)>>,
    }

    impl Model {
        fn new(nodes: u32, parts: u32, lookahead: u64, budget: u32) -> Self {
            let n = nodes as usize;
            Model { nodes, parts, lookahead, budget, wide: false, fetch_ahead: false, state: vec![0; n], handled: vec![0; n], seen: vec![Vec::new(); n] }
        }

        fn part(&self, node: u32) -> u32 {
            node % self.parts
        }

        /// Handles `ev` at `t`; returns what it schedules.
        fn step(&mut self, t: u64, ev: Ev, out: &mut Vec<(u64, Ev)>) {
            let n = ev.node as usize;
            self.state[n] = mix(self.state[n] ^ ev.value ^ t.rotate_left(17));
            self.seen[n].push((t, ev.value));
            self.handled[n] += 1;
            if self.handled[n] > self.budget {
                return;
            }
            let mut x = self.state[n];
            for _ in 0..x % 3 + 1 {
                x = mix(x);
                let node = (x % self.nodes as u64) as u32;
                let near = [0, 0, 1, 7, 1000, 1024, 3000][(x >> 8) as usize % 7];
                let mut far = self.lookahead + [0, 0, 0, 1, 1024, 5000][(x >> 16) as usize % 6];
                if self.wide && x >> 28 & 3 == 0 {
                    // Around and beyond the wheel's 4,194,304 ps.
                    far += [4_194_303, 4_194_304, 9_000_000, 1 << 33][(x >> 30) as usize % 4];
                }
                let d = if self.part(node) == self.part(ev.node) && x >> 24 & 1 == 0 { near } else { far };
                out.push((t + d, Ev { node, value: x >> 40 }));
            }
        }
    }

    /// The model on one queue of (time, owner) keys: its pops as (time,
    /// owner, partition).
    fn sequential(m: &mut Model, seeds: &[(u64, Ev)]) -> Vec<(u64, u64, u32)> {
        let mut q: BTreeMap<((u64, u64), u64), Ev> = BTreeMap::new();
        let mut seq = 0;
        for &(t, e) in seeds {
            q.insert((key(t, &e), seq), e);
            seq += 1;
        }
        let mut trace = Vec::new();
        let mut out = Vec::new();
        while let Some((((t, _), _), e)) = q.pop_first() {
            trace.push((t, e.owner(), m.part(e.node)));
            out.clear();
            m.step(t, e, &mut out);
            for &(t2, e2) in &out {
                q.insert((key(t2, &e2), seq), e2);
                seq += 1;
            }
        }
        trace
    }

    /// One partition's share of the model (each works on its own copy and
    /// touches only its own nodes).
    struct Share {
        m: Model,
        out: Vec<(u64, Ev)>,
    }

    /// An event for another partition carries its value by mail (as a
    /// packet crosses): the event holds the mail's index, and the value is
    /// read back when the partition takes it.
    impl PartHandler<Ev, Vec<u64>> for Share {
        fn handle(&mut self, t: u64, ev: Ev, part: &mut Partition<Ev, Vec<u64>>) {
            assert_eq!(self.m.part(ev.node), part.id());
            self.out.clear();
            self.m.step(t, ev, &mut self.out);
            for &(t2, mut e2) in &self.out {
                let dest = self.m.part(e2.node);
                if dest != part.id() {
                    let mail = part.mail(dest);
                    mail.push(e2.value);
                    e2.value = mail.len() as u64 - 1;
                }
                part.push(t2, dest, e2);
            }
        }

        fn import(&mut self, ev: Ev, mail: &Vec<u64>) -> Ev {
            Ev { value: mail[ev.value as usize], ..ev }
        }
    }

    /// The model on `m.parts` partitions and `threads` threads, run to the
    /// end in runs that stop at each of `untils`; with a trace of the pops,
    /// or without (as a simulation runs).
    fn parallel_in_runs(m: &Model, seeds: &[(u64, Ev)], threads: usize, untils: &[u64], trace: bool) -> (Vec<(u64, u64, u32)>, Model, ParallelStats) {
        let mut s = Scheduler::new(m.parts as usize, m.lookahead);
        s.fetch_ahead_blocks(m.fetch_ahead);
        if trace {
            s.keep_trace();
        }
        for &(t, e) in seeds {
            s.push(t, m.part(e.node), e);
        }
        let mut shares: Vec<Share> = (0..m.parts).map(|_| Share { m: m.clone(), out: Vec::new() }).collect();
        for &u in untils {
            s.run_until(&mut shares, threads, u);
            assert!(s.trace().last().is_none_or(|&(t, _, _)| t < u));
        }
        let stats = s.run(&mut shares, threads);
        // Each node's state from the partition that owns it.
        let mut merged = m.clone();
        for node in 0..m.nodes {
            let own = &shares[m.part(node) as usize].m;
            let n = node as usize;
            merged.state[n] = own.state[n];
            merged.handled[n] = own.handled[n];
            merged.seen[n] = own.seen[n].clone();
        }
        (s.trace(), merged, stats)
    }

    /// The model run with a trace, and checked to end in the same state
    /// and count the same events without.
    fn parallel(m: &Model, seeds: &[(u64, Ev)], threads: usize) -> (Vec<(u64, u64, u32)>, Model, ParallelStats) {
        let (trace, merged, stats) = parallel_in_runs(m, seeds, threads, &[], true);
        let (_, plain, plain_stats) = parallel_in_runs(m, seeds, threads, &[], false);
        assert_eq!(plain.seen, merged.seen);
        assert_eq!(plain.state, merged.state);
        assert_eq!(plain_stats.events, stats.events);
        (trace, merged, stats)
    }

    fn seeds(nodes: u32, k: u64) -> Vec<(u64, Ev)> {
        (0..nodes as u64 * 2).map(|i| ((mix(i ^ k) % 4) * 1000, Ev { node: (i % nodes as u64) as u32, value: mix(k + i) >> 40 })).collect()
    }

    /// Seeds spread over 2^34 ps: partitions idle for long stretches.
    fn spread_seeds(nodes: u32, k: u64) -> Vec<(u64, Ev)> {
        (0..nodes as u64 * 2).map(|i| (mix(i ^ k) % (1 << 34), Ev { node: (i % nodes as u64) as u32, value: mix(k + i) >> 40 })).collect()
    }

    #[test]
    fn parallel_order_is_the_sequential_order() {
        for (parts, lookahead, fetch_ahead) in [(1, 1024, false), (2, 1024, false), (2, 1024, true), (2, 3000, false), (3, 2048, true), (4, 1_000_000, false)] {
            let model = Model { fetch_ahead, ..Model::new(12, parts, lookahead, 40) };
            let seeds = seeds(12, parts as u64);
            let mut seq = model.clone();
            let want = sequential(&mut seq, &seeds);
            assert!(want.len() > 400, "{}", want.len());
            for threads in [1, 2, 4] {
                let (got, m, stats) = parallel(&model, &seeds, threads);
                assert_eq!(got, want, "{parts} partitions, lookahead {lookahead}, {threads} threads");
                assert_eq!(m.seen, seq.seen);
                assert_eq!(m.state, seq.state);
                assert_eq!(stats.events, want.len() as u64);
                if parts > 1 {
                    assert!(stats.crossings > 0 && stats.windows > 1, "{stats:?}");
                }
            }
        }
    }

    /// A run stopped at block boundaries, or inside blocks, and continued
    /// pops as one run to the end; after a run that stopped inside a block
    /// no push from outside is taken.
    #[test]
    fn runs_stop_before_until_and_go_on() {
        let model = Model::new(12, 2, 3000, 40);
        let seeds = seeds(12, 7);
        let mut seq = model.clone();
        let want = sequential(&mut seq, &seeds);
        let last = want.last().expect("events").0;
        // Every block boundary but a few, so that runs of one block and of
        // several alternate; then the same inside the blocks, at times
        // that events have and times that none has.
        let untils: Vec<u64> = (1..last / BLOCK_PS).filter(|k| k % 4 != 3).map(|k| k * BLOCK_PS).collect();
        assert!(untils.len() >= 8, "{last}");
        let inside: Vec<u64> = untils.iter().enumerate().map(|(i, u)| u + [333, 1, 1000, 512][i % 4]).collect();
        let at_events: Vec<u64> = want.iter().map(|&(t, _, _)| t).filter(|t| !t.is_multiple_of(BLOCK_PS)).step_by(3).collect();
        assert!(at_events.windows(2).any(|w| w[0] / BLOCK_PS == w[1] / BLOCK_PS), "two stops inside one block");
        for threads in [1, 2] {
            for runs in [&untils, &inside, &at_events] {
                let mut runs = runs.clone();
                runs.dedup();
                let (got, m, _) = parallel_in_runs(&model, &seeds, threads, &runs, true);
                assert_eq!(got, want);
                assert_eq!(m.seen, seq.seen);
                let (_, m, _) = parallel_in_runs(&model, &seeds, threads, &runs, false);
                assert_eq!(m.seen, seq.seen);
            }
        }
        let until = untils[2] + 333;
        let mut s: Scheduler<Ev, Vec<u64>> = Scheduler::new(2, 3000);
        s.keep_trace();
        for &(t, e) in &seeds {
            s.push(t, model.part(e.node), e);
        }
        let mut shares: Vec<Share> = (0..2).map(|_| Share { m: model.clone(), out: Vec::new() }).collect();
        s.run_until(&mut shares, 2, until);
        let before = want.iter().take_while(|&&(t, _, _)| t < until).count();
        assert_eq!(s.trace(), want[..before].to_vec());
        let (t, e) = seeds[0];
        let push = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| s.push(t, 0, e)));
        assert!(push.is_err(), "a push after a run ended inside a block was taken");
        s.run(&mut shares, 1);
        assert_eq!(s.trace(), want);
    }

    /// A push for another partition inside the window breaks the promise
    /// the windows rest on, and is refused.
    #[test]
    #[should_panic(expected = "shorter than the lookahead")]
    fn a_crossing_inside_the_window_is_refused() {
        struct Early;
        impl PartHandler<Ev> for Early {
            fn handle(&mut self, t: u64, ev: Ev, part: &mut Partition<Ev>) {
                if ev.value == 0 {
                    part.push(t + 10, 1, Ev { node: 1, value: 1 });
                }
            }
        }
        let mut s = Scheduler::new(2, 2048);
        s.push(0, 0, Ev { node: 0, value: 0 });
        s.run(&mut [Early, Early], 1);
    }

    /// Two events bouncing between two partitions, 4,096 ps a hop, whose
    /// handler panics in partition `.0` after 50,000 ps.
    struct FailsIn(u32);
    impl PartHandler<Ev> for FailsIn {
        fn handle(&mut self, t: u64, ev: Ev, part: &mut Partition<Ev>) {
            if part.id() == self.0 && t > 50_000 {
                panic!("handler failed");
            }
            part.push(t + 4096, ev.node % 2, ev);
        }
    }

    fn bouncing() -> Scheduler<Ev> {
        let mut s = Scheduler::new(2, 4096);
        s.push(0, 0, Ev { node: 0, value: 0 });
        s.push(0, 1, Ev { node: 1, value: 0 });
        s
    }

    /// A handler that panics on a worker thread (partition 1) stops the
    /// run with its panic; the other threads do not wait for it forever.
    #[test]
    #[should_panic(expected = "handler failed")]
    fn a_panic_on_a_worker_thread_ends_the_run() {
        bouncing().run(&mut [FailsIn(1), FailsIn(1)], 2);
    }

    /// Events in the last block of time (where a window cannot end at a
    /// block boundary after its start) are handled, and the run ends. In
    /// order up to the last picosecond of time; there, an event one
    /// partition pushes for another (saturated) waits for the next window
    /// and pops after that partition's own events of the picosecond, as
    /// no later time exists to hold it for.
    #[test]
    fn events_at_the_end_of_time_are_handled() {
        let mut model = Model::new(4, 2, 1024, 3);
        let seeds: Vec<(u64, Ev)> = [u64::MAX - 5000, u64::MAX - 1, u64::MAX, u64::MAX - 1, u64::MAX]
            .iter()
            .enumerate()
            .map(|(i, &t)| (t, Ev { node: i as u32 % 4, value: i as u64 }))
            .collect();
        // Saturating, as the simulation's times are.
        struct Saturating(Share);
        impl PartHandler<Ev> for Saturating {
            fn handle(&mut self, t: u64, ev: Ev, part: &mut Partition<Ev>) {
                self.0.out.clear();
                let n = ev.node as usize;
                self.0.m.seen[n].push((t, ev.value));
                self.0.m.handled[n] += 1;
                if self.0.m.handled[n] <= self.0.m.budget {
                    let node = (ev.node + 1) % self.0.m.nodes;
                    part.push(t.saturating_add(2048), self.0.m.part(node), Ev { node, value: ev.value + 10 });
                }
            }
        }
        let mut s = Scheduler::new(2, 1024);
        s.keep_trace();
        for &(t, e) in &seeds {
            s.push(t, model.part(e.node), e);
        }
        let mut h: Vec<Saturating> = (0..2).map(|_| Saturating(Share { m: model.clone(), out: Vec::new() })).collect();
        let stats = s.run(&mut h, 2);
        // The same on one queue.
        let mut q: BTreeMap<((u64, u64), u64), Ev> = BTreeMap::new();
        for (i, &(t, e)) in seeds.iter().enumerate() {
            q.insert((key(t, &e), i as u64), e);
        }
        let mut seq = seeds.len() as u64;
        let mut want = Vec::new();
        while let Some((((t, _), _), e)) = q.pop_first() {
            want.push((t, e.owner(), model.part(e.node)));
            let n = e.node as usize;
            model.handled[n] += 1;
            if model.handled[n] <= model.budget {
                let node = (e.node + 1) % model.nodes;
                let next = Ev { node, value: e.value + 10 };
                q.insert((key(t.saturating_add(2048), &next), seq), next);
                seq += 1;
            }
        }
        let got = s.trace();
        let before_last = |v: &[(u64, u64, u32)]| v.iter().filter(|x| x.0 < u64::MAX).copied().collect::<Vec<_>>();
        assert_eq!(before_last(&got), before_last(&want));
        assert_eq!(stats.events, want.len() as u64);
        // As many events of each partition at the last picosecond.
        for part in 0..2 {
            let last = |v: &[(u64, u64, u32)]| v.iter().filter(|x| x.0 == u64::MAX && x.2 == part).count();
            assert_eq!(last(&got), last(&want), "partition {part}");
        }
    }

    /// A panic on the main thread (partition 0) ends the run too, and the
    /// scheduler refuses to go on from the half-done window.
    #[test]
    fn a_panicked_run_is_not_continued() {
        let mut s = bouncing();
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| s.run(&mut [FailsIn(0), FailsIn(0)], 2)));
        assert!(run.is_err());
        let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| s.run(&mut [FailsIn(0), FailsIn(0)], 1)));
        let e = again.expect_err("refused");
        let msg = e.downcast_ref::<&str>().map(|m| m.to_string()).or_else(|| e.downcast_ref::<String>().cloned()).unwrap_or_default();
        assert!(msg.contains("last run panicked"), "{msg}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn random_models_keep_the_sequential_order(
            nodes in 1u32..20,
            parts in 1u32..5,
            lookahead in prop_oneof![Just(1024u64), 1024u64..5000, Just(1u64 << 20), Just(5_000_000u64)],
            budget in 1u32..30,
            k in any::<u64>(),
            threads in 1usize..4,
            wide in any::<bool>(),
        ) {
            let mut model = Model::new(nodes, parts, lookahead, budget);
            model.wide = wide;
            let seeds = if wide { spread_seeds(nodes, k) } else { seeds(nodes, k) };
            let mut seq = model.clone();
            let want = sequential(&mut seq, &seeds);
            let (got, m, _) = parallel(&model, &seeds, threads);
            prop_assert_eq!(got, want);
            prop_assert_eq!(m.seen, seq.seen);
        }
    }

    /// Records the events it handles and the events it is shown, with the
    /// stage and how many it had handled by then.
    struct Shown {
        spacing: usize,
        handled: Vec<u64>,
        shown: std::sync::Mutex<Vec<(usize, u64, usize)>>,
    }

    impl PartHandler<Ev> for Shown {
        fn handle(&mut self, _t: u64, ev: Ev, _part: &mut Partition<Ev>) {
            self.handled.push(ev.value);
        }
        fn prefetch(&self, ev: &Ev, stage: usize) {
            self.shown.lock().unwrap().push((self.handled.len(), ev.value, stage));
        }
        fn prefetch_spacing(&self) -> usize {
            self.spacing
        }
    }

    /// A partition shows its handler the next event (stage 0) and, with a
    /// spacing, stage `s` the event `s x spacing` events after the one it
    /// is about to handle, while it lies in the block being read.
    #[test]
    fn partitions_show_stages_spacing_apart() {
        for spacing in [0, 1, 3] {
            let mut s: Scheduler<Ev> = Scheduler::new(1, 1 << 20);
            let n = 30u64;
            for i in 0..n {
                s.push((i * 11) % 30 * 20, 0, Ev { node: 0, value: i });
            }
            let mut h = [Shown { spacing, handled: Vec::new(), shown: Default::default() }];
            s.run(&mut h, 1);
            let [h] = h;
            assert_eq!(h.handled.len(), n as usize);
            let shown = h.shown.into_inner().unwrap();
            let mut per_stage = [0; PREFETCH_STAGES + 1];
            for &(done, v, stage) in &shown {
                // Shown after popping event `done` and before handling it:
                // stage 0 is the event after it.
                let at = done + if stage == 0 { 1 } else { stage * spacing };
                assert_eq!(h.handled[at], v, "spacing {spacing}, stage {stage}, after {done} handled");
                per_stage[stage] += 1;
            }
            assert_eq!(per_stage[0], n as usize - 1);
            for (stage, &count) in per_stage.iter().enumerate().skip(1) {
                let expect = if spacing == 0 { 0 } else { n as usize - stage * spacing };
                assert_eq!(count, expect, "spacing {spacing}, stage {stage}");
            }
        }
    }
}
