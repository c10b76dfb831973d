//! A conservative parallel scheduler that pops events in exactly the order
//! of the single queue: (time, owner, global insertion). The simulation's
//! events of one time and owner are copies of one timer ([`Item::owner`]),
//! so for it the global insertion sequence this scheduler keeps decides
//! nothing; it is kept for items without owners (its tests' models).
//!
//! The nodes are cut into partitions, each with its own queue, handled by
//! its own [`PartHandler`]. Every event one partition schedules for another
//! is at least `lookahead` after the event being handled (a link's delay),
//! so the partitions can run the window `[W, end)`, `end` being `W +
//! lookahead` rounded down to a block of the wheel, each on its own, and
//! then meet:
//!
//! - **Inside a window, a partition's own order is the global order.** Its
//!   queue holds what was pushed before the window, in global order, and
//!   what it pushes during the window for itself before `end`, appended in
//!   the order it pushes them. Nothing another partition does in the window
//!   reaches it before `end`, so the events it pops in the window were
//!   pushed by itself or before the window, and by induction over its pops
//!   its own push order is the global one.
//! - **Every push at or after `end` waits for its number**, with the pop
//!   that made it and its place among that pop's pushes: one for this
//!   partition goes into its queue at once, tagged with them (unless it
//!   lies beyond the wheel); one for another partition is held.
//! - **At the barrier, a merge numbers the pops.** Each partition logs the
//!   pops that pushed something (one that pushes nothing changes no
//!   sequence), in (time, global sequence) order. A k-way merge of the
//!   logs by that key walks them as the single queue would have, and gives
//!   each pop the global sequence of its first push (the count of all
//!   pushes before it); a push's sequence is then that plus its place.
//!   The merge splits by time into one piece a thread: a piece's first
//!   sequence is the count of the pushes of the pops before its first
//!   time, which each log's record gives. Heads of two logs that tie in
//!   time compare by sequence; two pushes of this window from different
//!   partitions come in the order of the pops that made them, which a
//!   piece compares by the numbers it gave them, or, when an earlier piece
//!   numbers them, by going further up: no piece waits for another.
//! - **At the next window's start, each partition numbers and takes its
//!   events in parallel**: it writes the sequence of each push it placed
//!   in its queue, then takes its held events from every partition's list
//!   for it. The queue orders the events of one time by their sequence
//!   ([`Item::tie`]), so events may enter it out of order; the sequence
//!   stays with the event, for a later merge to compare.
//!
//! Per pop that pushed, the merge is a comparison of log heads (none
//! within a run of one log's pops before the other logs' next time) and
//! one counter step, shared among the threads. The outcome does not depend
//! on the number of threads.

use super::queue::{EventQueue, Item, Place, BLOCK_PS};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex, RwLock};

/// The end of a window that reaches the end of time.
const UNBOUNDED: u64 = u64::MAX;

/// Events per line of a partition's queue (16-byte items, a packed event
/// and its origin: three and their offsets a line), and lines per chunk:
/// twelve events a chunk, as its blocks hold a share of the events.
pub(super) const PART_LINE: usize = 3;
const PART_LINES: usize = 4;

/// The stages in which a partition shows its handler the events ahead
/// ([`PartHandler::prefetch`]).
pub const PREFETCH_STAGES: usize = 3;

/// An origin with this bit is a push the partition made and kept in the
/// current window: the pop that made it and its place among that pop's
/// pushes, as [`tag`] lays them out (in push order, so the queue keeps
/// them so); without it, a global sequence.
const LOCAL: u64 = 1 << 63;
/// How many pops ahead of the merge the parents of kept pushes are asked for.
const PARENT_AHEAD: usize = 8;
/// The first merge piece's share of the window's pops, in tenths of each
/// other piece's. Every piece but the first walks up into the earlier
/// pieces to order some ties, about half as much work again a pop: two
/// pieces at 8192 hosts took 0.25 to 0.27 s against 0.39 s with even
/// shares, 0.29 to 0.34 s against 0.34 to 0.40 s with 15 (the first piece
/// 60% of the pops), 0.35 to 0.39 s against 0.36 to 0.40 s with 20.
const FIRST_PIECE_SHARE: usize = 15;
/// How many events ahead of the one being imported the next window shows
/// its handler ([`PartHandler::prefetch_import`]).
const IMPORT_AHEAD: usize = 8;

/// The origin of a push the partition made for itself beyond the window
/// and placed in its queue at once, until the numbering pass of the next
/// window writes its sequence: the list of placed pushes ([`Placed`])
/// keeps the pop that made it and its place, so the item needs neither.
const PLACED: u64 = 1 << 62;
const PLACE_BITS: u32 = 24;
const PLACE_MASK: u64 = (1 << PLACE_BITS) - 1;

/// The tag of push `place` of pop `pop` (bits 24 to 55 and 0 to 23), below
/// the [`LOCAL`] flag (`place` at most [`PLACE_MASK`]).
#[inline(always)]
fn tag(pop: u32, place: u32) -> u64 {
    (pop as u64) << PLACE_BITS | place as u64
}

/// The pop and place of a [`LOCAL`] origin.
#[inline(always)]
fn untag(origin: u64) -> (u32, u32) {
    let o = origin & !LOCAL;
    ((o >> PLACE_BITS) as u32, (o & PLACE_MASK) as u32)
}

/// An event in a partition's queue with where it was pushed.
#[derive(Clone, Copy)]
pub struct Tagged<E> {
    ev: E,
    origin: u64,
}

impl<E: Item> Item for Tagged<E> {
    const FILLER: Self = Tagged { ev: E::FILLER, origin: 0 };

    /// Held events enter a queue window by window, out of global order
    /// (a partition's own go in as it pushes them, others' at the next
    /// window): the queue orders each time by sequence. A push kept in
    /// its window (tagged `LOCAL`) goes after everything pushed before the
    /// window, in push order; one placed beyond it (`PLACED`) is numbered
    /// before its block is read.
    #[inline(always)]
    fn tie(&self) -> u64 {
        self.origin
    }

    /// The event's own: a partition's queue pops in the single queue's
    /// order.
    #[inline(always)]
    fn owner(&self) -> u64 {
        self.ev.owner()
    }
}

/// A pop of the window: its time and its origin, 16 bytes, which the
/// merge reads again; the number of pushes before it and the global
/// sequence of its first push are kept in lists of their own
/// ([`Log::first_push`], [`Log::bases`]).
struct PopRec {
    t: u64,
    origin: u64,
}

/// The event being handled: its time and origin.
#[derive(Clone, Copy)]
struct Popped {
    t: u64,
    origin: u64,
}

/// A push placed in the partition's queue beyond the window: where, and
/// the pop that made it and its place among that pop's pushes (as its tag
/// says), for the numbering pass to write its sequence without reading it.
#[derive(Clone, Copy)]
struct Placed {
    at: Place,
    pop: u32,
    place: u32,
}

/// A push held to the window's end: its time, its event, the pop that made
/// it (an index in the log) and its place among that pop's pushes.
#[derive(Clone, Copy)]
struct Held<E> {
    t: u64,
    ev: E,
    pop: u32,
    place: u32,
}

/// A partition's record of one window.
struct Log<E, M> {
    /// The pops that pushed (all of them while a trace is kept): a pop
    /// that pushes nothing changes no sequence, and the merge leaves it out.
    pops: Vec<PopRec>,
    /// Per pop, the number of pushes of the window before it.
    first_push: Vec<u32>,
    /// Per pop, the global sequence of its first push, which the merge
    /// writes (atomics: while one thread writes one, another may read
    /// the pops beside it; the barrier after the merge orders the writes
    /// before every read). At least as long as `pops` once the window has
    /// run; never shortened, so that a window writes no zeros here.
    bases: Vec<AtomicU64>,
    /// Events popped in the window.
    popped: u64,
    /// Pushes so far in the window.
    pushes: u32,
    /// The held pushes, by the partition they are for.
    held: Vec<Vec<Held<E>>>,
    /// Where the pushes for this partition beyond the window went in its
    /// queue (their origins [`PLACED`]).
    placed: Vec<Placed>,
    /// The earliest held time, if any push was held.
    held_min: Option<u64>,
    /// What the window sent each partition beside its events
    /// ([`Partition::mail`]).
    mail: Vec<M>,
}

impl<E, M: Mail> Log<E, M> {
    fn new(partitions: usize) -> Self {
        Log {
            pops: Vec::new(),
            first_push: Vec::new(),
            bases: Vec::new(),
            popped: 0,
            pushes: 0,
            held: (0..partitions).map(|_| Vec::new()).collect(),
            placed: Vec::new(),
            held_min: None,
            mail: (0..partitions).map(|_| M::default()).collect(),
        }
    }

    fn clear(&mut self) {
        self.pops.clear();
        self.first_push.clear();
        self.popped = 0;
        self.pushes = 0;
        self.held.iter_mut().for_each(Vec::clear);
        self.placed.clear();
        self.held_min = None;
        self.mail.iter_mut().for_each(Mail::clear);
    }
}

impl<E, M> Log<E, M> {
    /// Asks the CPU for the record of the pop that pushed pop `k`'s event,
    /// if that pop is of this window (a hint only).
    #[inline(always)]
    fn prefetch_parent(&self, k: usize) {
        if let Some(r) = self.pops.get(k) {
            if r.origin & LOCAL != 0 {
                let parent = untag(r.origin).0 as usize;
                if let (Some(p), Some(b)) = (self.pops.get(parent), self.bases.get(parent)) {
                    super::prefetch(p);
                    super::prefetch(b);
                }
            }
        }
    }

    /// The global sequence of pop `k`'s first push (merged).
    #[inline]
    fn base(&self, k: usize) -> u64 {
        self.bases[k].load(Ordering::Relaxed)
    }

    /// The global sequence of push `place` of pop `pop` (merged).
    #[inline]
    fn push_sequence(&self, pop: u32, place: u32) -> u64 {
        self.base(pop as usize) + place as u64
    }

    /// The global sequence of a popped event (its parent merged).
    fn sequence(&self, origin: u64) -> u64 {
        if origin & LOCAL != 0 {
            let (pop, place) = untag(origin);
            self.push_sequence(pop, place)
        } else {
            origin
        }
    }

    /// The number of pushes before pop `k` (all of them, at the end).
    #[inline]
    fn pushes_before(&self, k: usize) -> u32 {
        self.first_push.get(k).map_or(self.pushes, |&f| f)
    }

    /// The number of pushes of pop `k`.
    #[inline]
    fn pushes_of(&self, k: usize) -> u64 {
        (self.pushes_before(k + 1) - self.first_push[k]) as u64
    }

    /// The first of this log's pops at or after `t`.
    fn first_at(&self, t: u64) -> usize {
        self.pops.partition_point(|r| r.t < t)
    }
}

/// One partition: its queue and the record of the window being run.
pub struct Partition<E, M = ()> {
    id: u32,
    q: EventQueue<Tagged<E>, PART_LINE, PART_LINES>,
    /// End of the window being run (a block boundary).
    end: u64,
    /// The last time this window may pop: before `end` and before the
    /// run's `until` ([`Scheduler::run_until`]); `u64::MAX` when neither
    /// bounds it.
    last: u64,
    log: Log<E, M>,
    /// The event being handled, logged in `log.pops` only when it pushes
    /// (see [`Log::pops`]).
    cur: Popped,
    /// Whether `cur` is logged.
    logged: bool,
    /// Log every pop, for a trace of the merged order.
    log_all: bool,
}

impl<E: Item, M: Mail> Partition<E, M> {
    fn new(id: u32, partitions: usize) -> Self {
        let cur = Popped { t: 0, origin: 0 };
        Partition { id, q: EventQueue::new(), end: 0, last: u64::MAX, log: Log::new(partitions), cur, logged: true, log_all: false }
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
        if !self.logged {
            self.log_pop();
        }
        let log = &mut self.log;
        let pop = log.pops.len() as u32 - 1;
        let place = log.pushes - log.first_push[pop as usize];
        log.pushes = log.pushes.checked_add(1).expect("more than 2^32 - 1 pushes in one window");
        if dest == self.id && t < self.end {
            // Handlers schedule a few events each; 2^24 from one would be a bug.
            assert!(place as u64 <= PLACE_MASK, "more than 2^24 events scheduled by one event");
            self.q.push(t, Tagged { ev, origin: LOCAL | tag(pop, place) });
            return;
        }
        // Its own beyond the window (nearly every arrival a link delay
        // ahead) straight into the queue, numbered before its block is
        // read: not held and taken back.
        if dest == self.id {
            if let Some(at) = self.q.try_place(t, Tagged { ev, origin: PLACED }) {
                log.placed.push(Placed { at, pop, place });
                return;
            }
        }
        assert!(
            t >= self.end,
            "an event for partition {dest} at {t} ps from partition {} inside its window ending at {} ps: \
             a delay between partitions is shorter than the lookahead",
            self.id,
            self.end
        );
        log.held[dest as usize].push(Held { t, ev, pop, place });
        log.held_min = Some(log.held_min.map_or(t, |m| m.min(t)));
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

    /// Numbers the pushes this partition placed in its queue in the last
    /// window (`prev`, merged), and takes the events the partitions held
    /// for this one, each with its sequence (the queue orders by it); those
    /// from another partition through the handler's
    /// [`PartHandler::import`] with their sender's mail.
    fn take_held<H: PartHandler<E, M>>(&mut self, prev: &[Log<E, M>], h: &mut H) {
        let me = self.id as usize;
        let own = &prev[me];
        // Written without being read: the item's lines are a window old
        // and out of the cache, and a store need not wait for them.
        for p in &own.placed {
            self.q.item_mut(p.at).origin = own.push_sequence(p.pop, p.place);
        }
        for (s, log) in prev.iter().enumerate() {
            let held = &log.held[me];
            for (i, x) in held.iter().enumerate() {
                let ev = if s == me {
                    x.ev
                } else {
                    if let Some(a) = held.get(i + IMPORT_AHEAD) {
                        h.prefetch_import(&a.ev, &log.mail[me], IMPORT_AHEAD);
                    }
                    h.import(x.ev, &log.mail[me])
                };
                self.q.push(x.t, Tagged { ev, origin: log.push_sequence(x.pop, x.place) });
            }
        }
    }

    /// The next event of the window, if any, logged as popped.
    #[inline]
    fn pop(&mut self) -> Option<(u64, E)> {
        let (t, e) = self.q.pop_within(self.end, self.last)?;
        self.log.popped += 1;
        self.cur = Popped { t, origin: e.origin };
        self.logged = false;
        if self.log_all {
            self.log_pop();
        }
        Some((t, e.ev))
    }

    /// Logs the event being handled as a pop of the window.
    #[inline]
    fn log_pop(&mut self) {
        assert!(self.log.pops.len() < u32::MAX as usize, "more than 2^32 - 1 events in one window");
        self.log.pops.push(PopRec { t: self.cur.t, origin: self.cur.origin });
        self.log.first_push.push(self.log.pushes);
        self.logged = true;
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
                        h.prefetch(&next.ev, stage);
                    }
                };
                const _: () = assert!(PREFETCH_STAGES == 3);
                stage(3);
                stage(2);
                stage(1);
            }
            if let Some(next) = self.q.peek_ahead(0) {
                h.prefetch(&next.ev, 0);
            }
            h.handle(t, ev, self);
        }
        // Room for the merge to number every pop (grown, never shortened).
        let n = self.log.pops.len();
        if self.log.bases.len() < n {
            self.log.bases.resize_with(n, Default::default);
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
    /// Wall-clock seconds spent in the merges (every thread merges a piece,
    /// while no window runs).
    pub merge_s: f64,
}

/// The merge's state: the global insertion counter, what was counted, and
/// the merged order when a trace is kept.
struct Merger {
    /// Global insertion sequence: pushes counted so far.
    seq: u64,
    stats: ParallelStats,
    /// The merged pops as (time, global sequence, partition), when asked for.
    trace: Option<Vec<(u64, u64, u32)>>,
}

/// One thread's share of a window's merge: the pops of every log in a
/// range of times, numbered in the single queue's order. Scratch space,
/// kept from window to window.
#[derive(Default)]
struct Piece {
    /// Per log, the index of this piece's first pop.
    start: Vec<usize>,
    /// Per log, the index of the next piece's first pop (the log's end
    /// for the last piece).
    ends: Vec<usize>,
    /// Each log's read position.
    heads: Vec<usize>,
    /// The piece's pops in the merged order, (log, index), when a trace is
    /// kept.
    order: Vec<(u32, u32)>,
}

impl Piece {
    /// Numbers piece `w` of `n` of the window whose logs are `logs`, the
    /// window's first push being global sequence `seq0`. The pieces split
    /// the window at times of its longest log's pops, by that log's pops
    /// with the first piece's share [`FIRST_PIECE_SHARE`]; a piece's pops
    /// are those of every log from its time to the next's.
    fn merge<E, M>(&mut self, logs: &[&Log<E, M>], w: usize, n: usize, seq0: u64, trace: bool) {
        let parts = logs.len();
        let longest = logs.iter().map(|l| l.pops.len()).max().unwrap_or(0);
        let lead = logs.iter().position(|l| l.pops.len() == longest).unwrap_or(0);
        // Where piece `i` starts in log `j`.
        let cut = |i: usize, j: usize| -> usize {
            if i == 0 {
                0
            } else if i == n || longest == 0 {
                logs[j].pops.len()
            } else {
                // Piece 0 counts FIRST_PIECE_SHARE tenths, every other ten.
                let at = (FIRST_PIECE_SHARE + 10 * (i - 1)) * longest / (FIRST_PIECE_SHARE + 10 * (n - 1));
                logs[j].first_at(logs[lead].pops[at].t)
            }
        };
        self.start.clear();
        self.start.extend((0..parts).map(|j| cut(w, j)));
        self.heads.clear();
        self.heads.extend_from_slice(&self.start);
        self.ends.clear();
        self.ends.extend((0..parts).map(|j| cut(w + 1, j)));
        self.order.clear();
        // The pushes of every pop before this piece's time come first.
        let mut seq = seq0 + logs.iter().zip(&self.start).map(|(l, &s)| l.pushes_before(s) as u64).sum::<u64>();
        if let [a, b] = logs {
            self.merge_two(a, b, &mut seq, trace);
        }
        loop {
            // The head of least (time, sequence).
            let mut best: Option<usize> = None;
            for i in 0..parts {
                if self.heads[i] < self.ends[i] && best.is_none_or(|j| Self::before(logs[i], self.start[i], self.heads[i], logs[j], self.start[j], self.heads[j])) {
                    best = Some(i);
                }
            }
            let Some(i) = best else { break };
            // The selected log leads up to the next head of another log:
            // its pops before that time go in a run, without comparisons.
            let bound = (0..parts).filter(|&j| j != i && self.heads[j] < self.ends[j]).map(|j| logs[j].pops[self.heads[j]].t).min().unwrap_or(u64::MAX);
            let log = logs[i];
            let mut k = self.heads[i];
            loop {
                self.number(log, i, k, &mut seq, trace);
                k += 1;
                if k == self.ends[i] || log.pops[k].t >= bound {
                    break;
                }
            }
            self.heads[i] = k;
        }
    }

    /// Whether pop `k` of log `x` comes before pop `ky` of log `y` (another
    /// log; this piece starts at `x_start` and `y_start` in them) in the
    /// single queue's order: by time, then by global sequence.
    /// A sequence assigned before the window is less than every push of
    /// it. Two pushes of the window, one by each log, come in the order of
    /// the pops that made them (a pop's pushes take consecutive numbers):
    /// by their numbers when both are of this piece; the one of an earlier
    /// piece first when only one is; and when neither is, the comparison
    /// goes on with those pops (earlier in their logs, so it ends),
    /// without the numbers another thread is writing.
    #[inline(always)]
    fn before<E, M>(x: &Log<E, M>, x_start: usize, mut k: usize, y: &Log<E, M>, y_start: usize, mut ky: usize) -> bool {
        loop {
            let (a, b) = (&x.pops[k], &y.pops[ky]);
            if a.t != b.t {
                return a.t < b.t;
            }
            let (la, lb) = (a.origin & LOCAL != 0, b.origin & LOCAL != 0);
            if !(la && lb) {
                return if la == lb { a.origin < b.origin } else { lb };
            }
            let ((pa, qa), (pb, qb)) = (untag(a.origin), untag(b.origin));
            let (pa, pb) = (pa as usize, pb as usize);
            let (mine_a, mine_b) = (pa >= x_start, pb >= y_start);
            if mine_a && mine_b {
                return x.base(pa) + (qa as u64) < y.base(pb) + qb as u64;
            }
            if mine_a != mine_b {
                return mine_b;
            }
            k = pa;
            ky = pb;
        }
    }

    /// Gives pop `k` of log `i`, next in the single queue's order, the
    /// global sequence of its first push, and counts its pushes.
    #[inline(always)]
    fn number<E, M>(&mut self, log: &Log<E, M>, i: usize, k: usize, seq: &mut u64, trace: bool) {
        if trace {
            self.order.push((i as u32, k as u32));
        }
        log.bases[k].store(*seq, Ordering::Relaxed);
        *seq += log.pushes_of(k);
    }

    /// The merge of two logs while both have pops left in the piece (the
    /// rest is the general loop's): which log leads is a comparison of
    /// times whose outcome selects the log by index, not by a branch,
    /// since the two partitions' pops interleave unpredictably.
    fn merge_two<E, M>(&mut self, a: &Log<E, M>, b: &Log<E, M>, seq: &mut u64, trace: bool) {
        let (mut ia, mut ib) = (self.heads[0], self.heads[1]);
        let (sa, sb) = (self.start[0], self.start[1]);
        let (na, nb) = (self.ends[0], self.ends[1]);
        let logs = [a, b];
        // The parent a tie will look up, a few pops ahead in each log:
        // each pop's once, as its log moves past the pop that many before.
        for d in 0..PARENT_AHEAD {
            a.prefetch_parent(ia + d);
            b.prefetch_parent(ib + d);
        }
        while ia < na && ib < nb {
            let take_b = Self::before(b, sb, ib, a, sa, ia);
            let k = if take_b { &mut ib } else { &mut ia };
            let log = logs[take_b as usize];
            self.number(log, take_b as usize, *k, seq, trace);
            log.prefetch_parent(*k + PARENT_AHEAD);
            *k += 1;
        }
        self.heads[0] = ia;
        self.heads[1] = ib;
    }
}

impl Merger {
    /// After every piece of the window's merge: counts the window's pushes
    /// and events, and records the merged order when asked for.
    fn finish<E, M>(&mut self, logs: &[&Log<E, M>], pieces: &[Mutex<Piece>]) {
        if let Some(tr) = self.trace.as_mut() {
            for p in pieces {
                for &(i, k) in &p.lock().unwrap_or_else(|e| e.into_inner()).order {
                    let r = &logs[i as usize].pops[k as usize];
                    tr.push((r.t, logs[i as usize].sequence(r.origin), i));
                }
            }
        }
        for (i, log) in logs.iter().enumerate() {
            self.seq += log.pushes as u64;
            self.stats.events += log.popped;
            self.stats.crossings += log.held.iter().enumerate().filter(|&(d, _)| d != i).map(|(_, h)| h.len() as u64).sum::<u64>();
        }
        self.stats.windows += 1;
    }
}

/// A lower bound of the time of every event queued in `parts` or held in
/// `prev`; `None` when there is none.
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
        p.log.clear();
    }
    true
}

/// The serial step between windows: unless no window has run yet (or
/// `merged` is false), counts the window just run, merged into `pieces`,
/// and makes each partition's log the record its held events are taken
/// from (the older record is reused); then opens the next window. False
/// when nothing is left.
fn between_windows<E: Item, M: Mail>(m: &mut Merger, parts: &mut [&mut Partition<E, M>], prev: &mut [Log<E, M>], pieces: &[Mutex<Piece>], lookahead: u64, until: u64, merged: bool) -> bool {
    if merged {
        let logs: Vec<&Log<E, M>> = parts.iter().map(|p| &p.log).collect();
        m.finish(&logs, pieces);
        for (p, l) in parts.iter_mut().zip(prev.iter_mut()) {
            std::mem::swap(&mut p.log, l);
        }
    }
    open_window(parts, prev, lookahead, until)
}

/// The partitions, the merge and the lookahead.
pub struct Scheduler<E, M = ()> {
    /// Set while a run is under way: a run that panicked leaves a window
    /// half done, and the scheduler refuses to go on from there.
    running: bool,
    /// Set by a run that ended inside a block of the wheel: events its last
    /// window kept are numbered by that window's log, which is gone, so
    /// the scheduler refuses to go on from there.
    ended: bool,
    parts: Vec<Partition<E, M>>,
    /// The last window's records, merged: where held events are taken from.
    prev: Vec<Log<E, M>>,
    /// The merge's pieces, one a thread.
    pieces: Vec<Mutex<Piece>>,
    lookahead: u64,
    m: Merger,
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
            pieces: Vec::new(),
            lookahead,
            m: Merger { seq: 0, stats: ParallelStats::default(), trace: None },
        }
    }

    /// Every partition's queue asks for its next block's chunks while it
    /// pops a block ([`EventQueue::fetch_ahead_blocks`]): for partitions
    /// whose pending events outgrow the caches. A hint only.
    pub fn fetch_ahead_blocks(&mut self, on: bool) {
        self.parts.iter_mut().for_each(|p| p.q.fetch_ahead_blocks(on));
    }

    /// Records the merged order of the pops (for tests).
    pub fn keep_trace(&mut self) {
        self.m.trace = Some(Vec::new());
        self.parts.iter_mut().for_each(|p| p.log_all = true);
    }

    /// The merged pops so far: (time, global sequence, partition).
    pub fn trace(&self) -> &[(u64, u64, u32)] {
        self.m.trace.as_deref().unwrap_or(&[])
    }

    /// Schedules `ev` at `t` for partition `dest` before the run: the next
    /// global sequence.
    pub fn push(&mut self, t: u64, dest: u32, ev: E) {
        assert!(!self.running, "the scheduler's last run panicked");
        assert!(!self.ended, "the scheduler's last run ended inside a block of the wheel");
        let s = self.m.seq;
        self.m.seq += 1;
        self.parts[dest as usize].q.push(t, Tagged { ev, origin: s });
    }

    /// Runs windows until every queue is empty, the window's work on
    /// `threads` threads (at most one a partition); `handlers[i]` handles
    /// partition `i`'s events. The order of events, and so the outcome, is
    /// the same for any number of threads.
    pub fn run<H: PartHandler<E, M>>(&mut self, handlers: &mut [H], threads: usize) -> ParallelStats {
        self.run_until(handlers, threads, UNBOUNDED)
    }

    /// [`Scheduler::run`] for the events before `until` only (`u64::MAX`:
    /// every event); the others wait for a later run. A run may go on from an `until` on a block
    /// boundary of the wheel ([`BLOCK_PS`]); from any other `until` (a
    /// scenario's stop time) the scheduler refuses to go on.
    pub fn run_until<H: PartHandler<E, M>>(&mut self, handlers: &mut [H], threads: usize, until: u64) -> ParallelStats {
        assert_eq!(handlers.len(), self.parts.len());
        assert!(!self.running, "the scheduler's last run panicked");
        assert!(!self.ended, "the scheduler's last run ended inside a block of the wheel");
        self.running = true;
        let stats = self.run_windows(handlers, threads, until);
        self.running = false;
        self.ended = until != UNBOUNDED && !until.is_multiple_of(BLOCK_PS);
        stats
    }

    /// The earliest time at which an event may be pending (a lower bound),
    /// or `None` when nothing is.
    pub fn next_bound(&self) -> Option<u64> {
        earliest(self.parts.iter(), &self.prev)
    }

    /// What the runs so far did.
    pub fn stats(&self) -> ParallelStats {
        self.m.stats
    }

    fn run_windows<H: PartHandler<E, M>>(&mut self, handlers: &mut [H], threads: usize, until: u64) -> ParallelStats {
        let threads = threads.clamp(1, self.parts.len());
        let Scheduler { parts, prev, pieces, lookahead, m, .. } = self;
        let lookahead = *lookahead;
        let trace = m.trace.is_some();
        if pieces.len() != threads {
            pieces.resize_with(threads, Default::default);
        }
        if threads == 1 {
            let mut refs: Vec<&mut Partition<E, M>> = parts.iter_mut().collect();
            let mut more = between_windows(m, &mut refs, prev, pieces, lookahead, until, false);
            while more {
                for (p, h) in refs.iter_mut().zip(handlers.iter_mut()) {
                    p.run_window(prev, h);
                }
                let start = std::time::Instant::now();
                let logs: Vec<&Log<E, M>> = refs.iter().map(|p| &p.log).collect();
                pieces[0].get_mut().unwrap_or_else(|e| e.into_inner()).merge(&logs, 0, 1, m.seq, trace);
                m.stats.merge_s += start.elapsed().as_secs_f64();
                more = between_windows(m, &mut refs, prev, pieces, lookahead, until, true);
            }
            return m.stats;
        }
        // Each partition behind a lock that one thread takes for writing
        // during a window, every thread for reading during the merge, and
        // the thread of the serial step between windows for writing; its
        // handler behind a lock of its own. The last window's records are
        // read by all during a window and written by the serial step only.
        let cells: Vec<RwLock<&mut Partition<E, M>>> = parts.iter_mut().map(RwLock::new).collect();
        let handler_cells: Vec<Mutex<&mut H>> = handlers.iter_mut().map(Mutex::new).collect();
        let prev = RwLock::new(prev);
        let pieces = &pieces[..];
        // The global sequence of the window's first push, for the pieces.
        let seq0 = AtomicU64::new(m.seq);
        // The serial step between windows, on one thread while the others wait.
        let between = |merged: bool, merge_s: f64| -> bool {
            let mut guards: Vec<_> = cells.iter().map(|c| c.write().expect("a window panicked")).collect();
            let mut refs: Vec<&mut Partition<E, M>> = guards.iter_mut().map(|g| &mut ***g).collect();
            let mut prev = prev.write().expect("a window panicked");
            m.stats.merge_s += merge_s;
            let more = between_windows(m, &mut refs, &mut prev[..], pieces, lookahead, until, merged);
            seq0.store(m.seq, Ordering::Relaxed);
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
        // Thread `w`'s share of a window, then of its merge (unless a
        // window failed); the merge between two barriers, since it reads
        // every partition's record.
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
        let merge = |w: usize| {
            if failed() {
                return;
            }
            keep(std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let guards: Vec<_> = cells.iter().map(|c| c.read().unwrap_or_else(|e| e.into_inner())).collect();
                let logs: Vec<&Log<E, M>> = guards.iter().map(|g| &g.log).collect();
                let mut piece = pieces[w].lock().unwrap_or_else(|e| e.into_inner());
                piece.merge(&logs, w, threads, seq0.load(Ordering::Relaxed), trace);
            })));
        };
        std::thread::scope(|s| {
            let mut between = between;
            done.store(!between(false, 0.0), Ordering::Release);
            for w in 1..threads {
                let (window, merge, barrier, done) = (&window, &merge, &barrier, &done);
                s.spawn(move || loop {
                    barrier.wait();
                    if done.load(Ordering::Acquire) {
                        return;
                    }
                    window(w);
                    barrier.wait();
                    merge(w);
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
                let start = std::time::Instant::now();
                merge(0);
                barrier.wait();
                let merge_s = start.elapsed().as_secs_f64();
                let more = !failed()
                    && match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| between(true, merge_s))) {
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
        m.stats
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

    impl Item for Ev {
        const FILLER: Ev = Ev { node: 0, value: 0 };
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
                out.push((t + d, Ev { node, value: x >> 32 }));
            }
        }
    }

    /// The model on one (time, insertion) queue: its pops as (time,
    /// sequence, partition).
    fn sequential(m: &mut Model, seeds: &[(u64, Ev)]) -> Vec<(u64, u64, u32)> {
        let mut q: BTreeMap<(u64, u64), Ev> = BTreeMap::new();
        let mut seq = 0;
        for &(t, e) in seeds {
            q.insert((t, seq), e);
            seq += 1;
        }
        let mut trace = Vec::new();
        let mut out = Vec::new();
        while let Some(((t, s), e)) = q.pop_first() {
            trace.push((t, s, m.part(e.node)));
            out.clear();
            m.step(t, e, &mut out);
            for &(t2, e2) in &out {
                q.insert((t2, seq), e2);
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
    /// end in runs that stop at each of `untils`; with a trace of the merged
    /// order (every pop logged), or without (as a simulation runs: only
    /// pops that push are logged).
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
        (s.trace().to_vec(), merged, stats)
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
        (0..nodes as u64 * 2).map(|i| ((mix(i ^ k) % 4) * 1000, Ev { node: (i % nodes as u64) as u32, value: mix(k + i) })).collect()
    }

    /// Seeds spread over 2^34 ps: partitions idle for long stretches.
    fn spread_seeds(nodes: u32, k: u64) -> Vec<(u64, Ev)> {
        (0..nodes as u64 * 2).map(|i| (mix(i ^ k) % (1 << 34), Ev { node: (i % nodes as u64) as u32, value: mix(k + i) })).collect()
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

    /// A run stopped at block boundaries and continued pops as one run to
    /// the end; a run stopped inside a block pops every event before it
    /// and refuses to go on.
    #[test]
    fn runs_stop_before_until_and_go_on() {
        let model = Model::new(12, 2, 3000, 40);
        let seeds = seeds(12, 7);
        let mut seq = model.clone();
        let want = sequential(&mut seq, &seeds);
        let last = want.last().expect("events").0;
        // Every block boundary but a few, so that runs of one block and of
        // several alternate.
        let untils: Vec<u64> = (1..last / BLOCK_PS).filter(|k| k % 4 != 3).map(|k| k * BLOCK_PS).collect();
        assert!(untils.len() >= 8, "{last}");
        for threads in [1, 2] {
            let (got, m, _) = parallel_in_runs(&model, &seeds, threads, &untils, true);
            assert_eq!(got, want);
            assert_eq!(m.seen, seq.seen);
            let (_, m, _) = parallel_in_runs(&model, &seeds, threads, &untils, false);
            assert_eq!(m.seen, seq.seen);
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
        assert_eq!(s.trace(), &want[..before]);
        let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| s.run(&mut shares, 1)));
        assert!(again.is_err(), "a run ended inside a block went on");
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
    /// block boundary after its start) are handled, in order, and the run
    /// ends.
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
        let mut q: BTreeMap<(u64, u64), Ev> = BTreeMap::new();
        for (i, &(t, e)) in seeds.iter().enumerate() {
            q.insert((t, i as u64), e);
        }
        let mut seq = seeds.len() as u64;
        let mut want = Vec::new();
        while let Some(((t, sq), e)) = q.pop_first() {
            want.push((t, sq, model.part(e.node)));
            let n = e.node as usize;
            model.handled[n] += 1;
            if model.handled[n] <= model.budget {
                let node = (e.node + 1) % model.nodes;
                q.insert((t.saturating_add(2048), seq), Ev { node, value: e.value + 10 });
                seq += 1;
            }
        }
        assert_eq!(s.trace(), &want[..]);
        assert_eq!(stats.events, want.len() as u64);
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
