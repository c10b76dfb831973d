//! The event queue: events pop in (time, owner) order. Within a
//! picosecond, an event's owner ([`Item::owner`]: its kind's rank and the
//! port, host, flow or link change it belongs to) decides, the ids of one
//! rank in an order drawn afresh for every block of the wheel (1,024 ps),
//! so that no port or flow is served first for the whole run. The order
//! depends on nothing but the events themselves: not on when they were
//! scheduled, nor on which queue (the single one, or a partition's of the
//! parallel mode) holds them.

use super::Event;

/// What the queue holds: a small copyable value, with a filler for the
/// unused places of a chunk. The simulation's queue holds packed events;
/// so do the parallel scheduler's partitions (see [`super::parallel`]).
pub trait Item: Copy {
    const FILLER: Self;
    /// Orders the items of one time: below 2^[`OWNER_BITS`], a rank in
    /// the bits from 32 up and an id in bits 0 to 31. The queue pops by
    /// (time, rank, id in the order of the time's block, insertion); two
    /// of the simulation's events of one time and owner are copies of one
    /// timer.
    #[inline(always)]
    fn owner(&self) -> u64 {
        0
    }
}

/// The bits of an [`Item::owner`]: a rank of 4 bits above an id of 32.
pub const OWNER_BITS: u32 = 36;

impl Item for Event {
    const FILLER: Event = Event::TxDone { port: crate::id::PortId(0) };
    #[inline(always)]
    fn owner(&self) -> u64 {
        super::PackedEvent::new(*self).owner()
    }
}

impl Item for super::PackedEvent {
    const FILLER: super::PackedEvent = super::PackedEvent::FILLER;
    #[inline(always)]
    fn owner(&self) -> u64 {
        super::PackedEvent::owner(*self)
    }
}

/// The order of the ids of one rank within block `block` of the wheel:
/// they compare as `id ^ block_mask(block)`. A pair of ids is ordered by
/// one bit of the mask (at the highest bit where they differ), so each
/// goes first in half of the blocks: a fixed order of ids would serve the
/// same port or flow first at every tie of a symmetric fabric.
#[inline]
pub fn block_mask(block: u64) -> u64 {
    // Two rounds of multiply and fold: blocks in any arithmetic progression
    // (a fabric's periodic ties) draw unrelated masks, as one odd multiple
    // alone (a Weyl sequence) does not guarantee.
    let x = (block ^ 0x6f72_6465_7273).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (x ^ x >> 32).wrapping_mul(0xd6e8_feb8_6659_fd93) >> 32
}

/// An event's place in the block being read: its time within the block
/// above its owner's order (`mask`: [`block_mask`] of the block), so that
/// one comparison of integers orders (time, owner).
#[inline(always)]
fn sort_key<E: Item>(t: u64, e: &E, mask: u64) -> u64 {
    (t & (BLOCK_PS - 1)) << OWNER_BITS | (e.owner() ^ mask)
}

/// Times are bucketed by block of 2^10 ps (about 1 ns); within the block
/// being read, events are kept sorted instead. Few events share a block, and
/// sorting them is cheaper than bucketing them down to the picosecond.
const BLOCK_BITS: u32 = 10;
/// The length of a block in picoseconds.
pub const BLOCK_PS: u64 = 1 << BLOCK_BITS;
/// Blocks the wheel holds: 2^13 of 2^10 ps, 8.39 us ahead of the block being
/// read. A packet's next event (its arrival one link delay and one
/// serialization away, its port's `TxDone`) falls within it, and so does a
/// receiver's coalesced-ACK timer (5 us by default, one per few packets:
/// in a heap, a push and a pop of a logarithm each, missing the cache on
/// a large fabric); retransmission and congestion-control timers and
/// flow starts further out wait among the far events (`FarEvents`).
const WHEEL_BITS: u32 = 13;
const WHEEL: usize = 1 << WHEEL_BITS;
const WHEEL_MASK: u64 = WHEEL as u64 - 1;
/// Words of the wheel's occupancy bitmap (one bit a slot); the summary
/// ([`Summary`]) has one bit a word.
const WORDS: usize = WHEEL / 64;
/// One bit a word of the bitmap.
type Summary = u128;
const _: () = assert!(WORDS == Summary::BITS as usize);
/// Events popped between two chunks of the next block asked for, at most:
/// a queue of smaller chunks asks for one every chunk's worth of pops.
const AHEAD_STEP: usize = 16;

/// Whether an event at `t` is within the wheel's reach of a queue whose
/// last pop was at `now`: the block being read is `now`'s, and events of
/// the `WHEEL - 1` blocks after it are in their slots, never among the far
/// events ([`EventQueue::remove`] finds them). Depends on the two times
/// alone, so that every queue (the single one, a partition's) agrees.
#[inline(always)]
pub fn within_reach(now: u64, t: u64) -> bool {
    t >= now && (t >> BLOCK_BITS) - (now >> BLOCK_BITS) < WHEEL as u64 - 1
}

/// End of a list.
const NIL: u32 = u32::MAX;

/// No place in a slot ([`EventQueue::push_placed`]).
pub const NO_PLACE: u32 = u32::MAX;

/// The offset of an event taken back from its slot ([`EventQueue::remove`]):
/// above every offset within a block.
const DEAD: u16 = u16::MAX;

/// Events per line of a chunk, unless the queue says otherwise: four
/// 12-byte events and their offsets fill 56 of a line's 64 bytes.
const PER_LINE: usize = 4;
/// Lines per chunk, unless the queue says otherwise.
const LINES: usize = 4;

/// A cache line of a chunk: events and, beside each, its time within its
/// block (the slot's block gives the rest). An append writes one line,
/// not one line of times and another of events. One cache line when `L`
/// items and their offsets fit 64 bytes, as the simulation's packed
/// events do six to a line and the parallel scheduler's tagged events
/// three; larger items make a line span more (the order is the same).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line<E, const L: usize> {
    events: [E; L],
    offsets: [u16; L],
}

/// A run of pending events in a slot's list, in insertion order, or a free
/// chunk: `C` lines of `L` events. Every chunk of a list but its tail is
/// full; the tail's length is kept with the list. The chunks' links are
/// in a list of their own ([`EventQueue::links`]).
#[derive(Clone, Copy)]
struct Chunk<E, const L: usize, const C: usize> {
    lines: [Line<E, L>; C],
}

impl<E: Item, const L: usize, const C: usize> Chunk<E, L, C> {
    const EMPTY: Self = Chunk { lines: [Line { events: [E::FILLER; L], offsets: [0; L] }; C] };
    /// Events a chunk holds.
    const N: usize = L * C;

    /// Puts event `e` at `t` in place `at`.
    #[inline(always)]
    fn put(&mut self, at: usize, t: u64, e: E) {
        let line = &mut self.lines[at / L];
        line.events[at % L] = e;
        line.offsets[at % L] = (t & (BLOCK_PS - 1)) as u16;
    }
}

/// A wheel slot's list of chunks.
#[derive(Clone, Copy)]
struct Slot {
    first: u32,
    tail: u32,
    /// Events in the tail chunk.
    tail_len: u32,
}

const EMPTY_SLOT: Slot = Slot { first: NIL, tail: NIL, tail_len: 0 };

/// The wheel slot of time `t`'s block.
#[inline(always)]
fn slot_of(t: u64) -> usize {
    (t >> BLOCK_BITS & WHEEL_MASK) as usize
}

/// An event beyond the wheel, ordered by (time, insertion): the order its
/// block's slot receives it in, which the block's sort keeps for items of
/// one time and owner.
struct Far<E> {
    t: u64,
    seq: u64,
    ev: E,
}

impl<E> PartialEq for Far<E> {
    fn eq(&self, o: &Far<E>) -> bool {
        (self.t, self.seq) == (o.t, o.seq)
    }
}
impl<E> Eq for Far<E> {}
impl<E> PartialOrd for Far<E> {
    fn partial_cmp(&self, o: &Far<E>) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Far<E> {
    /// Reversed: `BinaryHeap` keeps the greatest on top, the queue wants
    /// the earliest.
    fn cmp(&self, o: &Far<E>) -> std::cmp::Ordering {
        (o.t, o.seq).cmp(&(self.t, self.seq))
    }
}

/// The events beyond the wheel, in (time, insertion) order: a run of
/// pushes whose times never decreased, kept as a FIFO, and a heap for the
/// others. Most far events are timers set a fixed delay ahead (a
/// retransmission timeout from each flow's first packet), so their times
/// follow the clock: on a workload of millions of short flows the heap
/// held every pending timer (hundreds of thousands, megabytes past the
/// caches, a cache miss a level on every pop), where the run appends and
/// pops at its ends. The earlier of the two heads pops first, by (time,
/// insertion), so the order is the one a heap alone gave.
struct FarEvents<E> {
    run: std::collections::VecDeque<Far<E>>,
    heap: std::collections::BinaryHeap<Far<E>>,
    /// Insertion counter.
    seq: u64,
    /// The time of the event that pops next, kept for the wheel's check
    /// at every block it reads.
    first: Option<u64>,
}

impl<E> FarEvents<E> {
    fn new() -> Self {
        FarEvents { run: std::collections::VecDeque::new(), heap: std::collections::BinaryHeap::new(), seq: 0, first: None }
    }

    fn push(&mut self, t: u64, ev: E) {
        let f = Far { t, seq: self.seq, ev };
        self.seq += 1;
        self.first = Some(self.first.map_or(t, |first| first.min(t)));
        // The run stays sorted by (time, insertion): its times never
        // decrease and its insertions increase.
        if self.run.back().is_none_or(|b| b.t <= t) {
            self.run.push_back(f);
        } else {
            self.heap.push(f);
        }
    }

    /// Whether the run's head pops before the heap's.
    fn run_first(&self) -> Option<bool> {
        match (self.run.front(), self.heap.peek()) {
            (None, None) => None,
            (Some(_), None) => Some(true),
            (None, Some(_)) => Some(false),
            // `Far`'s order is reversed: the greater pops first.
            (Some(r), Some(h)) => Some(r > h),
        }
    }

    /// The time of the event that pops next.
    #[inline(always)]
    fn first_time(&self) -> Option<u64> {
        self.first
    }

    fn pop(&mut self) -> Option<Far<E>> {
        let f = if self.run_first()? { self.run.pop_front() } else { self.heap.pop() };
        self.first = match (self.run.front(), self.heap.peek()) {
            (Some(r), Some(h)) => Some(r.t.min(h.t)),
            (r, h) => r.or(h).map(|f| f.t),
        };
        f
    }
}

/// A timing wheel of 1024-ps blocks whose slots keep insertion order, with
/// the far events (`FarEvents`) for what lies beyond it.
///
/// Times popped never decrease (the simulation never schedules into the
/// past). `cur` is the block being read: `now` holds its events, sorted by
/// time and owner ([`sort_key`]). An event of a later block within
/// `WHEEL` blocks of `cur` is appended to that block's slot (block modulo
/// `WHEEL`); one further out goes to `far` (`FarEvents`), in (time,
/// insertion) order. When `now` has been read to its end, the next occupied slot
/// (found from the bitmap) becomes `cur`; before anything can be pushed into
/// the blocks that this brings within reach of the wheel, the far events
/// of those blocks are moved into their slots, in (time, insertion) order.
///
/// A packet simulator's pending times lie within a few link delays, so
/// nearly every event is written once, into its slot, and read once, when
/// its block is sorted (a radix heap over block numbers moved each event
/// down a level or two first, an event heap costs a logarithm per pop).
///
/// Slots are linked lists of chunks of `C` lines of `L` events (16 by
/// default, 24 in the simulation's queue) through one vector of chunks
/// (with a free list), so memory follows the number of pending events
/// (plus at most one part-filled chunk per slot), not the largest number
/// each slot ever held; and a slot is read from a few contiguous runs, not
/// one scattered node per event. A chunk's
/// lines keep each event beside its time within the slot's block, so an
/// append writes one cache line. On request ([`Self::fetch_ahead_blocks`])
/// the next block's chunks are asked for while a block is popped.
///
/// Ties of time need no sequence number: the owner orders them, and the
/// events of one time and owner in the simulation are copies of one timer.
/// A slot only ever holds one block, and the far events of a block are
/// all moved into its slot before any event of that block can be pushed
/// there; the sort of a block is stable, so items of one time and owner
/// keep insertion order. An event pushed into `now`
/// goes after those of smaller key and before those of larger key still
/// to pop: the next pop is always the least of what is left, whatever was
/// popped before.
pub struct EventQueue<E = Event, const L: usize = PER_LINE, const C: usize = LINES> {
    /// The block being read: each event with its [`sort_key`].
    now: Vec<(u64, E)>,
    /// [`block_mask`] of `cur`.
    mask: u64,
    /// Scratch space for sorting a block (see `sort_by_time`).
    scratch: Vec<(u64, E)>,
    /// Read position in `now`; the entries before it have been popped.
    head: usize,
    chunks: Vec<Chunk<E, L, C>>,
    /// Per chunk, the next of its list (or of the free list).
    links: Vec<u32>,
    /// First free chunk, linked through `links`.
    free: u32,
    /// Per slot of the wheel, its list.
    slots: Box<[Slot]>,
    /// Bit `s % 64` of word `s / 64` set when slot `s` is not empty.
    words: [u64; WORDS],
    /// Bit `w` set when word `w` is not 0.
    summary: Summary,
    /// The block being read (`now`'s).
    cur: u64,
    /// Its first picosecond.
    base: u64,
    /// Events `WHEEL` blocks or more after `cur`.
    far: FarEvents<E>,
    last: u64,
    len: usize,
    popped: u64,
    /// Whether the next block's chunks are asked for while the block being
    /// read is popped ([`EventQueue::fetch_ahead_blocks`]).
    ahead_on: bool,
    /// The chunk of the next occupied slot last asked for (NIL: none).
    ahead: u32,
}

impl<E: Item, const L: usize, const C: usize> Default for EventQueue<E, L, C> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E, const L: usize, const C: usize> std::fmt::Debug for EventQueue<E, L, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "EventQueue {{ len: {}, popped: {} }}", self.len, self.popped)
    }
}

/// Whether `a` pops after `b`: by sort key (time and owner).
#[inline(always)]
fn after<E: Item>(a: &(u64, E), b: &(u64, E)) -> bool {
    a.0 > b.0
}

/// Stable insertion sort by sort key.
fn insertion_sort<E: Item>(v: &mut [(u64, E)]) {
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && after(&v[j - 1], &x) {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

/// Bits of the key that a counting pass sorts by, at most (64 parts).
const SUB_BITS: u32 = 6;
/// Below this many events a block, or a part of one, is insertion-sorted
/// directly.
const COUNTING_MIN: usize = 24;

/// Stable sort by sort key of the events of one block. A block holds
/// tens (1024 hosts) to hundreds (8192 hosts) of events in no particular
/// order, which an insertion sort alone handles in quadratic time; and
/// most share their picosecond with others (a symmetric fabric keeps its
/// packets on a grid of picoseconds), so that their owners' order is
/// most of the work. Counting passes ([`radix`]) first leave a few events
/// per part for the insertion sort. `scratch` is kept by the queue, so
/// this allocates only while the largest block grows.
fn sort_by_time<E: Item>(v: &mut [(u64, E)], scratch: &mut Vec<(u64, E)>) {
    let n = v.len();
    if n < COUNTING_MIN {
        insertion_sort(v);
        return;
    }
    if scratch.len() < n {
        scratch.resize(n, v[0]);
    }
    radix(v, &mut scratch[..n]);
}

/// A stable counting pass by the highest bits of the key that differ
/// within `v` (about a part for two events, at most 2^[`SUB_BITS`]) (the time's, in a block that spans many picoseconds;
/// the owner's, among events of one picosecond), then the same for each
/// part of [`COUNTING_MIN`] events or more; insertion sort for the rest.
fn radix<E: Item>(v: &mut [(u64, E)], scratch: &mut [(u64, E)]) {
    let k0 = v[0].0;
    let diff = v.iter().fold(0, |d, x| d | (x.0 ^ k0));
    if diff == 0 {
        // One key: only ties are left to order.
        insertion_sort(v);
        return;
    }
    // Parts for about two events each: a pass's fixed cost (its counts
    // and its parts) grows with the parts, and 64 of them for 24 events
    // cost more than the moves they saved.
    let bits = (usize::BITS - 2 - v.len().leading_zeros()).clamp(2, SUB_BITS);
    let shift = (u64::BITS - diff.leading_zeros()).saturating_sub(bits);
    let digit = |k: u64| (k >> shift) as usize & ((1 << bits) - 1);
    let mut counts = [0u32; 1 << SUB_BITS];
    let end = &mut counts[..1 << bits];
    for x in v.iter() {
        end[digit(x.0)] += 1;
    }
    let mut largest = 0;
    let mut sum = 0;
    for e in end.iter_mut() {
        largest = largest.max(*e);
        sum += *e;
        *e = sum;
    }
    scratch.copy_from_slice(v);
    // Backwards from each part's end: the pass stays stable.
    for &x in scratch.iter().rev() {
        let d = digit(x.0);
        end[d] -= 1;
        v[end[d] as usize] = x;
    }
    if (largest as usize) < COUNTING_MIN {
        // Parts in order, each small: one insertion sort for all.
        insertion_sort(v);
        return;
    }
    // `end` now holds each part's start.
    for d in 0..end.len() {
        let (lo, hi) = (end[d] as usize, end.get(d + 1).map_or(v.len(), |&s| s as usize));
        if hi - lo >= COUNTING_MIN {
            radix(&mut v[lo..hi], &mut scratch[lo..hi]);
        } else if hi - lo > 1 {
            insertion_sort(&mut v[lo..hi]);
        }
    }
}

impl<E: Item, const L: usize, const C: usize> EventQueue<E, L, C> {
    /// Events a chunk holds.
    const N: usize = Chunk::<E, L, C>::N;

    pub fn new() -> Self {
        EventQueue {
            now: Vec::new(),
            mask: block_mask(0),
            scratch: Vec::new(),
            head: 0,
            chunks: Vec::new(),
            links: Vec::new(),
            free: NIL,
            slots: vec![EMPTY_SLOT; WHEEL].into_boxed_slice(),
            words: [0; WORDS],
            summary: 0,
            cur: 0,
            base: 0,
            far: FarEvents::new(),
            last: 0,
            len: 0,
            popped: 0,
            ahead_on: false,
            ahead: NIL,
        }
    }

    /// Asks the CPU for the next block's chunks, one every 16 pops (every
    /// `N` pops for chunks of fewer than 16), while a block is popped: for
    /// a queue whose pending events outgrow the caches (a hint only; the
    /// order is unchanged).
    pub fn fetch_ahead_blocks(&mut self, on: bool) {
        self.ahead_on = on;
        self.ahead = NIL;
    }

    /// Whether [`Self::fetch_ahead_blocks`] is on.
    pub fn fetches_ahead_blocks(&self) -> bool {
        self.ahead_on
    }

    /// Schedules `event` at `time_ps`, which must not be before the time of
    /// an event already popped or peeked. Inlined into every caller: as a
    /// call it spent a third of its instructions on its entry and exit.
    #[inline(always)]
    pub fn push(&mut self, time_ps: u64, event: E) {
        self.push_to_slot(time_ps, event);
    }

    /// [`Self::push`], and the wheel slot the event went to, if it went to
    /// one (not the block being read, nor the far events).
    #[inline(always)]
    fn push_to_slot(&mut self, time_ps: u64, event: E) -> Option<usize> {
        assert!(time_ps >= self.last, "event scheduled at {time_ps} ps, before {} ps", self.last);
        self.len += 1;
        let ahead = (time_ps >> BLOCK_BITS) - self.cur;
        if ahead == 0 {
            self.put_now(time_ps, event);
            None
        } else if ahead < WHEEL as u64 {
            let i = slot_of(time_ps);
            self.append(i, time_ps, event);
            Some(i)
        } else {
            self.far.push(time_ps, event);
            None
        }
    }

    /// As [`Self::push`], and where the event went: a place in a slot's
    /// chunk, for [`Self::remove`] to find it at once, or [`NO_PLACE`]
    /// (the block being read, or the far events).
    #[inline(always)]
    pub fn push_placed(&mut self, time_ps: u64, event: E) -> u32 {
        let Some(i) = self.push_to_slot(time_ps, event) else { return NO_PLACE };
        let b = self.slots[i];
        // Places end below the few values kept beside them (`Port::txdone`).
        u32::try_from(b.tail as usize * Self::N + b.tail_len as usize - 1).ok().filter(|&p| p < NO_PLACE - 15).unwrap_or(NO_PLACE)
    }

    /// Takes back the pending event `event` at `time_ps`, which must lie
    /// within the wheel's reach of the block being read ([`within_reach`]
    /// of the last time popped): there it is in the block being read or in
    /// its slot, never among the far events. `place` is where
    /// [`Self::push_placed`] put it, or [`NO_PLACE`] to look for it. The
    /// events left keep their order. False if no such event is pending.
    pub fn remove(&mut self, time_ps: u64, event: E, place: u32) -> bool
    where
        E: PartialEq,
    {
        debug_assert!(within_reach(self.last, time_ps), "a removal beyond the wheel's reach");
        if time_ps < self.last {
            return false;
        }
        if time_ps >> BLOCK_BITS == self.cur {
            // The block being read is sorted by key; equal keys are copies.
            let key = sort_key(time_ps, &event, self.mask);
            let rest = &self.now[self.head..];
            let i = rest.partition_point(|&(k, _)| k < key);
            if !rest.get(i).is_some_and(|&(k, e)| k == key && e == event) {
                return false;
            }
            self.take_now(self.head + i);
            self.len -= 1;
            return true;
        }
        // In its slot, which is read only when its block is: the place is
        // still the event's. Marked dead there, it is never read into the
        // block (`refill`), and no other event moves.
        let off = (time_ps & (BLOCK_PS - 1)) as u16;
        let holds = |c: &Chunk<E, L, C>, j: usize| c.lines[j / L].offsets[j % L] == off && c.lines[j / L].events[j % L] == event;
        let at = match place {
            NO_PLACE => {
                let b = self.slots[slot_of(time_ps)];
                let mut n = b.first;
                let mut at = None;
                while n != NIL && at.is_none() {
                    let held = if n == b.tail { b.tail_len as usize } else { Self::N };
                    at = (0..held).find(|&j| holds(&self.chunks[n as usize], j)).map(|j| (n as usize, j));
                    n = self.links[n as usize];
                }
                at
            }
            p => Some((p as usize / Self::N, p as usize % Self::N)).filter(|&(c, j)| holds(&self.chunks[c], j)),
        };
        let Some((c, j)) = at else { return false };
        self.chunks[c].lines[j / L].offsets[j % L] = DEAD;
        self.len -= 1;
        true
    }

    /// [`Self::remove`] of an event that [`Self::push_placed`] put at
    /// `place` (not [`NO_PLACE`]) and that is pending, which the caller
    /// knows (a port's one `TxDone`): in its slot, the event is marked
    /// dead without reading its line first. That line was written a packet
    /// time ago; on a large fabric it has left the caches since, and a
    /// read of it stalled the loop (7% of the time at 8192 hosts), where a
    /// store does not. The block being read is searched as by `remove`.
    #[inline]
    pub fn remove_pending(&mut self, time_ps: u64, event: E, place: u32)
    where
        E: PartialEq,
    {
        debug_assert!(place != NO_PLACE);
        if time_ps >> BLOCK_BITS == self.cur {
            assert!(self.remove(time_ps, event, place), "no such event pending at {time_ps} ps");
            return;
        }
        debug_assert!(within_reach(self.last, time_ps) && time_ps >= self.last, "a removal beyond the wheel's reach");
        let (c, j) = (place as usize / Self::N, place as usize % Self::N);
        let line = &mut self.chunks[c].lines[j / L];
        debug_assert!(
            line.offsets[j % L] == (time_ps & (BLOCK_PS - 1)) as u16 && line.events[j % L] == event,
            "no such event pending at place {place}"
        );
        line.offsets[j % L] = DEAD;
        self.len -= 1;
    }

    /// Appends an event to slot `i`. Inlined: it is called for every push.
    #[inline(always)]
    fn append(&mut self, i: usize, t: u64, e: E) {
        let b = self.slots[i];
        if b.first != NIL && (b.tail_len as usize) < Self::N {
            self.chunks[b.tail as usize].put(b.tail_len as usize, t, e);
            self.slots[i].tail_len += 1;
            return;
        }
        self.append_chunk(i, t, e);
    }

    /// Appends an event to slot `i` in a new chunk.
    fn append_chunk(&mut self, i: usize, t: u64, e: E) {
        let b = self.slots[i];
        let n = self.alloc_chunk();
        self.chunks[n as usize].put(0, t, e);
        self.links[n as usize] = NIL;
        if b.first == NIL {
            self.slots[i] = Slot { first: n, tail: n, tail_len: 1 };
            self.words[i / 64] |= 1 << (i % 64);
            self.summary |= (1 as Summary) << (i / 64);
        } else {
            self.links[b.tail as usize] = n;
            self.slots[i] = Slot { tail: n, tail_len: 1, ..b };
        }
    }

    #[inline]
    fn alloc_chunk(&mut self) -> u32 {
        if self.free != NIL {
            let n = self.free;
            self.free = self.links[n as usize];
            n
        } else {
            assert!(self.chunks.len() < NIL as usize, "too many pending events");
            self.chunks.push(Chunk::EMPTY);
            self.links.push(NIL);
            (self.chunks.len() - 1) as u32
        }
    }

    /// Puts an event of the block being read among those still to pop, by
    /// its key.
    #[inline]
    fn put_now(&mut self, t: u64, e: E) {
        let x = (sort_key(t, &e, self.mask), e);
        if self.now.last().is_none_or(|last| !after(last, &x)) {
            self.now.push(x);
        } else {
            let i = self.head + self.now[self.head..].partition_point(|y| !after(y, &x));
            if self.head > 0 && i - self.head < self.now.len() - i {
                // Nearer the head: the events before it move down into the
                // place of the last one popped. A block holds hundreds of
                // events at 8192 hosts, and what is pushed into it falls
                // mostly near the head: moving the rest cost a copy of the
                // block, and the more the larger the fabric.
                self.now.copy_within(self.head..i, self.head - 1);
                self.head -= 1;
                self.now[i - 1] = x;
            } else {
                self.now.insert(i, x);
            }
        }
    }

    /// Takes entry `i` (at or after `head`) out of the block being read,
    /// moving the shorter side: the entries before it up over it (the head
    /// moves on by one) or those after it down.
    #[inline]
    fn take_now(&mut self, i: usize) {
        if i - self.head < self.now.len() - i {
            self.now.copy_within(self.head..i, self.head + 1);
            self.head += 1;
        } else {
            self.now.remove(i);
        }
    }

    /// The time of an event of the block being read, from its sort key.
    #[inline(always)]
    fn time_of(&self, key: u64) -> u64 {
        self.base | key >> OWNER_BITS
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(u64, E)> {
        if self.head == self.now.len() && !self.refill(u64::MAX) {
            return None;
        }
        let (k, e) = self.now[self.head];
        if self.ahead_on && self.head.is_multiple_of(Self::N.min(AHEAD_STEP)) {
            self.fetch_ahead();
        }
        self.head += 1;
        let t = self.time_of(k);
        self.last = t;
        self.len -= 1;
        self.popped += 1;
        Some((t, e))
    }

    /// The event `k` places after the next one, if it is already in the
    /// block being read (no refill): for the loop to prefetch what it will
    /// touch.
    #[inline]
    pub fn peek_ahead(&self, k: usize) -> Option<&E> {
        self.now.get(self.head + k).map(|(_, e)| e)
    }

    /// The time of the next event; from then on, no event may be pushed
    /// before it.
    #[inline]
    pub fn peek_time(&mut self) -> Option<u64> {
        if self.head == self.now.len() && !self.refill(u64::MAX) {
            return None;
        }
        Some(self.time_of(self.now[self.head].0))
    }

    /// No pending event is earlier than this (the next event's time, or the
    /// start of its block), and nothing moves: pushes at or after it stay
    /// allowed. None if the queue is empty.
    pub fn next_bound(&self) -> Option<u64> {
        if let Some(&(k, _)) = self.now.get(self.head) {
            return Some(self.time_of(k));
        }
        match self.next_occupied() {
            Some(b) => Some(b << BLOCK_BITS),
            None => self.far.first_time(),
        }
    }

    /// Pops the next event if it is at or before `last`, reading no block
    /// at or after `end` (the start of a block after the current time's,
    /// or `u64::MAX` for none; `last` is before it): events may still be
    /// pushed at any time from `end` on (from the next event's time, if it
    /// is after `last`).
    #[inline]
    pub fn pop_within(&mut self, end: u64, last: u64) -> Option<(u64, E)> {
        if self.head == self.now.len() {
            assert!(end == u64::MAX || end.is_multiple_of(BLOCK_PS), "a bound within a block");
            if !self.refill(end) {
                return None;
            }
        }
        if self.time_of(self.now[self.head].0) > last {
            return None;
        }
        self.pop()
    }

    /// The first occupied slot after `cur`'s, in wheel order, as a block.
    #[inline]
    fn next_occupied(&self) -> Option<u64> {
        if self.summary == 0 {
            return None;
        }
        let s0 = ((self.cur + 1) & WHEEL_MASK) as usize;
        let w0 = s0 / 64;
        let m = self.words[w0] & (!0u64 << (s0 % 64));
        let s = if m != 0 {
            w0 * 64 + m.trailing_zeros() as usize
        } else {
            // Words after w0, then (wrapping round) from word 0: what is
            // left of w0 then is below s0.
            let after = self.summary & (!0 as Summary).checked_shl(w0 as u32 + 1).unwrap_or(0);
            let w = if after != 0 { after } else { self.summary }.trailing_zeros() as usize;
            w * 64 + self.words[w].trailing_zeros() as usize
        };
        Some(self.cur + ((s as u64).wrapping_sub(self.cur) & WHEEL_MASK))
    }

    /// `now` has been read to its end: refills it from the next occupied
    /// slot, or from the far events when the wheel is empty, reading no
    /// block at or after `end` (`u64::MAX`: no bound). False if the queue
    /// is empty or its next block is not before `end`.
    fn refill(&mut self, end: u64) -> bool {
        let (cur, last) = (self.cur, self.last);
        loop {
            match self.read_block(end) {
                Some(true) => return true,
                Some(false) => continue,
                None => {
                    if self.len == 0 && self.cur != cur {
                        // Only blocks whose events were all taken back were
                        // read: pushes may still come from the last time
                        // popped on, so the queue stays where it was.
                        (self.cur, self.base, self.mask, self.last) = (cur, cur << BLOCK_BITS, block_mask(cur), last);
                    }
                    return false;
                }
            }
        }
    }

    /// One step of [`Self::refill`]: reads the next block into `now`.
    /// Some(false) when every event of the block was taken back.
    fn read_block(&mut self, end: u64) -> Option<bool> {
        self.now.clear();
        self.head = 0;
        // Far events are WHEEL blocks or more after `cur`, occupied slots
        // fewer: the far events lead only when the wheel is empty.
        let next = match self.next_occupied() {
            Some(b) => b,
            None => self.far.first_time()? >> BLOCK_BITS,
        };
        if end != u64::MAX && next << BLOCK_BITS >= end {
            return None;
        }
        self.cur = next;
        self.base = next << BLOCK_BITS;
        // Blocks up to next + WHEEL - 1 are now within reach: their far
        // events go to their (still empty) slots before anything else can.
        while let Some(t) = self.far.first_time() {
            if (t >> BLOCK_BITS) - next >= WHEEL as u64 {
                break;
            }
            let f = self.far.pop().expect("peeked");
            self.append(slot_of(f.t), f.t, f.ev);
        }
        let i = (next & WHEEL_MASK) as usize;
        let b = self.slots[i];
        self.slots[i] = EMPTY_SLOT;
        self.words[i / 64] &= !(1 << (i % 64));
        if self.words[i / 64] == 0 {
            self.summary &= !((1 as Summary) << (i / 64));
        }
        let mask = block_mask(next);
        self.mask = mask;
        let mut n = b.first;
        while n != NIL {
            let (k, after) = (if n == b.tail { b.tail_len as usize } else { Self::N }, self.links[n as usize]);
            if after != NIL {
                crate::sim::prefetch(&self.chunks[after as usize]);
            }
            let c = &self.chunks[n as usize];
            // The first `m` events of a line (all `L` but in a part-filled tail).
            let mut take = |line: &Line<E, L>, m: usize| {
                for (&o, &e) in line.offsets[..m].iter().zip(&line.events[..m]) {
                    if o != DEAD {
                        self.now.push(((o as u64) << OWNER_BITS | (e.owner() ^ mask), e));
                    }
                }
            };
            let (full, rest) = (k / L, k % L);
            for line in &c.lines[..full] {
                take(line, L);
            }
            if rest > 0 {
                take(&c.lines[full], rest);
            }
            self.free_chunk(n);
            n = after;
        }
        if self.now.is_empty() {
            // Every event of the block was taken back.
            self.last = self.base;
            return Some(false);
        }
        sort_by_time(&mut self.now, &mut self.scratch);
        self.last = self.time_of(self.now[0].0);
        if self.ahead_on {
            // The next block's chunks are asked for one at a time while
            // this one is popped (see `fetch_ahead`), its first now.
            self.ahead = match self.next_occupied() {
                Some(b) => self.slots[(b & WHEEL_MASK) as usize].first,
                None => NIL,
            };
            if let Some(c) = self.chunks.get(self.ahead as usize) {
                crate::sim::prefetch_all(c);
            }
        }
        Some(true)
    }

    /// Asks for the chunk after the one asked for last in the next occupied
    /// slot's list. A hint: a slot may have changed since (its chunks freed
    /// and reused), which costs a useless fetch at worst.
    #[inline]
    fn fetch_ahead(&mut self) {
        let Some(&after) = self.links.get(self.ahead as usize) else { return };
        self.ahead = after;
        if let Some(n) = self.chunks.get(self.ahead as usize) {
            crate::sim::prefetch_all(n);
        }
    }

    #[inline]
    fn free_chunk(&mut self, n: u32) {
        self.links[n as usize] = self.free;
        self.free = n;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Events popped so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }

    /// Counts `n` events popped from other queues (the partitions of a
    /// parallel run) as popped from this one.
    pub fn count_popped(&mut self, n: u64) {
        self.popped += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::FlowId;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn ev(i: u64) -> Event {
        Event::FlowStart { flow: FlowId(i as u32) }
    }

    fn drain(q: &mut EventQueue) -> Vec<(u64, Event)> {
        std::iter::from_fn(|| q.pop()).collect()
    }

    /// The queue's order of an event at `t`: its time, then its owner in
    /// the order of `t`'s block.
    fn key(t: u64, e: &Event) -> (u64, u64) {
        (t, e.owner() ^ block_mask(t >> BLOCK_BITS))
    }

    /// `v` in the queue's order (stable: insertion order for one owner).
    fn ordered(mut v: Vec<(u64, Event)>) -> Vec<(u64, Event)> {
        v.sort_by_key(|(t, e)| key(*t, e));
        v
    }

    /// A removal from a slot of several chunks (the first, the middle,
    /// the tail, the tail's last event), by place or looked for, keeps the
    /// others in order; a block whose events were all taken back is
    /// skipped; a removal from the block being read too.
    #[test]
    fn removal_keeps_the_order_of_the_rest() {
        let mut q = EventQueue::new();
        let mut want = Vec::new();
        // 40 events of one later block: chunks of 16, 16 and 8.
        let mut places = Vec::new();
        for i in 0..40u64 {
            // Every other one by its place, the others looked for.
            let place = q.push_placed(5 * BLOCK_PS + (i * 7) % 100, ev(i));
            places.push(if i % 2 == 0 { place } else { NO_PLACE });
            want.push((5 * BLOCK_PS + (i * 7) % 100, ev(i)));
        }
        q.push(10, ev(99));
        want.push((10, ev(99)));
        for i in [0u64, 17, 39, 38, 33, 32, 20] {
            let t = 5 * BLOCK_PS + (i * 7) % 100;
            assert!(q.remove(t, ev(i), places[i as usize]), "event {i}");
            assert!(!q.remove(t, ev(i), places[i as usize]), "event {i} twice");
            assert!(!q.remove(t, ev(i), NO_PLACE), "event {i} twice, looked for");
            want.retain(|&(u, e)| (u, e) != (t, ev(i)));
        }
        assert_eq!(q.len(), want.len());
        assert_eq!(q.pop(), Some((10, ev(99))));
        want.retain(|&(t, _)| t != 10);
        // In the block being read now.
        let t = 5 * BLOCK_PS + 35;
        assert_eq!(q.peek_time(), want.iter().map(|w| w.0).min());
        assert!(q.remove(t, ev(5), places[5]));
        want.retain(|&(u, e)| (u, e) != (t, ev(5)));
        assert_eq!(drain(&mut q), ordered(want));
        // An emptied slot is empty: the queue goes on to the next.
        let place = q.push_placed(7 * BLOCK_PS, ev(1));
        q.push(8 * BLOCK_PS, ev(2));
        assert!(q.remove(7 * BLOCK_PS, ev(1), place));
        assert_eq!(drain(&mut q), vec![(8 * BLOCK_PS, ev(2))]);
    }

    /// Asking for the next block's chunks ahead changes no pop: the same
    /// pushes, interleaved with pops (events pushed into the block being
    /// read, the next ones and beyond the wheel, chunks freed and reused),
    /// pop alike with and without it, in chunks of 16 events (four lines
    /// of four), of 8 (two lines; one asked for every 8 pops), of 24 (the
    /// simulation's shape: four lines of six) and of 12 (a partition's).
    #[test]
    fn fetching_blocks_ahead_changes_no_pop() {
        fn run<const L: usize, const C: usize>(on: bool) -> Vec<(u64, Event)> {
            let mut q: EventQueue<Event, L, C> = EventQueue::new();
            q.fetch_ahead_blocks(on);
            assert_eq!(q.fetches_ahead_blocks(), on);
            let mut x = 1u64;
            let mut now = 0;
            let mut out = Vec::new();
            let mut pushed = 0;
            for i in 0..20_000u64 {
                x = crate::rng::mix(x, i);
                if x.is_multiple_of(3) {
                    if let Some(e) = q.pop() {
                        now = e.0;
                        out.push(e);
                    }
                } else {
                    let d = [0, 5, 700, 1_024, 3_000, 40_000, 5_000_000][(x >> 8) as usize % 7];
                    q.push(now + d + (x >> 20) % 64, ev(i));
                    pushed += 1;
                }
            }
            out.extend(std::iter::from_fn(|| q.pop()));
            assert_eq!(out.len(), pushed);
            out
        }
        let plain = run::<4, 4>(false);
        assert_eq!(run::<4, 4>(true), plain);
        assert!(plain.windows(2).all(|w| w[0].0 <= w[1].0));
        assert_eq!(run::<4, 2>(false), plain);
        assert_eq!(run::<4, 2>(true), plain);
        assert_eq!(run::<6, 4>(false), plain);
        assert_eq!(run::<6, 4>(true), plain);
        assert_eq!(run::<3, 4>(true), plain);
    }

    /// A chunk of the default queue is four lines of four events: 256
    /// bytes for 16 events, each line one cache line; the simulation's
    /// (packed events) four lines of six.
    #[test]
    fn a_chunk_is_whole_cache_lines() {
        assert_eq!(std::mem::size_of::<Line<Event, PER_LINE>>(), 64);
        assert_eq!(std::mem::align_of::<Chunk<Event, PER_LINE, LINES>>(), 64);
        assert_eq!(std::mem::size_of::<Chunk<Event, PER_LINE, LINES>>(), 256);
        assert_eq!(Chunk::<Event, PER_LINE, LINES>::N, 16);
        // The simulation's packed events, six a line; the parallel
        // scheduler's items (a packed event and its origin), three.
        assert_eq!(std::mem::size_of::<Line<super::super::PackedEvent, { super::super::QUEUE_LINE }>>(), 64);
        assert_eq!(std::mem::size_of::<Chunk<super::super::PackedEvent, { super::super::QUEUE_LINE }, LINES>>(), 256);
        assert_eq!(std::mem::size_of::<Line<super::super::PackedEvent, { super::super::parallel::PART_LINE }>>(), 64);
    }

    /// Items too large for four to a cache line still queue in order: a
    /// line then spans more than 64 bytes.
    #[test]
    fn large_items_queue_in_order() {
        #[derive(Clone, Copy, Debug, PartialEq)]
        struct Big(u64, u64);
        impl Item for Big {
            const FILLER: Big = Big(0, 0);
        }
        assert!(std::mem::size_of::<Line<Big, PER_LINE>>() > 64);
        let mut q: EventQueue<Big> = EventQueue::new();
        let want: Vec<(u64, Big)> = (0..100u64).map(|i| (i * 37 % 5_000, Big(i, !i))).collect();
        for &(t, b) in &want {
            q.push(t, b);
        }
        let mut sorted = want.clone();
        sorted.sort_by_key(|&(t, _)| t);
        assert_eq!(std::iter::from_fn(|| q.pop()).collect::<Vec<_>>(), sorted);
    }

    /// Events of one picosecond pop by owner, whatever order they were
    /// pushed in; copies of one event (one owner) in insertion order.
    #[test]
    fn same_time_events_pop_by_owner() {
        let mut pushes = Vec::new();
        for i in 0..40u64 {
            // Forwards and backwards, several blocks, a few copies.
            let flow = if i % 2 == 0 { i } else { 40 - i };
            pushes.push((10 + (i % 3) * BLOCK_PS, ev(flow % 17)));
        }
        for (flows, n) in [(0..6, 0), (6..12, 1)] {
            let mut q = EventQueue::new();
            let mut want = Vec::new();
            for &(t, e) in &pushes[flows] {
                q.push(t + n, e);
                want.push((t + n, e));
            }
            assert_eq!(drain(&mut q), ordered(want));
        }
        let mut q = EventQueue::new();
        for &(t, e) in &pushes {
            q.push(t, e);
        }
        let got = drain(&mut q);
        assert_eq!(got, ordered(pushes.clone()));
        assert_eq!(q.popped(), 40);
        assert!(q.is_empty());
        // Different owners of one block come in an order of their own, not
        // by id nor by push: the block's mask decides.
        let ids: Vec<u64> = got.iter().filter(|(t, _)| *t == 10).map(|(_, e)| e.owner()).collect();
        assert!(!ids.windows(2).all(|w| w[0] <= w[1]) || !ids.windows(2).all(|w| w[0] >= w[1]), "{ids:?}");
    }

    /// A pair of owners goes each way first in about half of the blocks.
    #[test]
    fn each_of_two_owners_goes_first_in_half_of_the_blocks() {
        let (a, b) = (ev(3), ev(4));
        let mut q = EventQueue::new();
        let blocks = 4_000u64;
        for k in 0..blocks {
            q.push(k * BLOCK_PS + 7, b);
            q.push(k * BLOCK_PS + 7, a);
        }
        let got = drain(&mut q);
        let a_first = got.chunks(2).filter(|p| p[0].1 == a).count() as u64;
        assert!((blocks * 45 / 100..blocks * 55 / 100).contains(&a_first), "{a_first} of {blocks}");
    }

    /// Times on both sides of every power of two up to the far future,
    /// pushed three times over in changing order, half of them popped, then
    /// more pushed at the current time and in the far future: ties must come
    /// out by owner whichever buckets they waited in.
    #[test]
    fn ties_pop_by_owner_across_buckets_and_far_future() {
        let mut times = vec![0, 1, u64::MAX - 1, u64::MAX];
        for b in 1..64 {
            times.extend([(1u64 << b) - 1, 1 << b, (1 << b) + 1]);
        }
        let mut q = EventQueue::new();
        let mut want = BTreeMap::new();
        let mut n = 0;
        for round in 0..3 {
            // Forwards, then backwards: neighbours in time are not
            // neighbours in insertion.
            let order: Vec<u64> = if round % 2 == 0 { times.clone() } else { times.iter().rev().copied().collect() };
            for t in order {
                q.push(t, ev(n));
                want.insert((key(t, &ev(n)), n), ev(n));
                n += 1;
            }
            for &t in times.iter().filter(|&&t| t >= u64::MAX - 1) {
                q.push(t, ev(n));
                want.insert((key(t, &ev(n)), n), ev(n));
                n += 1;
            }
        }
        // Pop half, then push more at and after the current time.
        let mut got = Vec::new();
        for _ in 0..want.len() / 2 {
            got.push(q.pop().unwrap());
        }
        let now = got.last().unwrap().0;
        // Pushed at the current time: after what popped, by owner among
        // what is left.
        let mut late = Vec::new();
        for t in [now, now, now + 1, u64::MAX - 1, now, u64::MAX] {
            q.push(t, ev(n));
            late.push(((key(t, &ev(n)), n), ev(n)));
            n += 1;
        }
        let popped = got.len();
        let rest: Vec<_> = want.into_iter().skip(popped).chain(late).collect::<BTreeMap<_, _>>().into_iter().map(|(((t, _), _), e)| (t, e)).collect();
        assert_eq!(q.len(), rest.len());
        got.extend(drain(&mut q));
        assert_eq!(got[popped..], rest[..]);
    }

    /// The next of a xorshift sequence: keys for the sort tests.
    fn xorshift(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    /// `sort_by_time` on events of `keys` gives the stable sort by key.
    fn sorts_stably(keys: impl Iterator<Item = u64>, what: &str) {
        let mut v: Vec<(u64, Event)> = keys.enumerate().map(|(i, k)| (k, ev(i as u64))).collect();
        let mut want = v.clone();
        want.sort_by_key(|&(k, _)| k);
        let mut scratch = Vec::new();
        sort_by_time(&mut v, &mut scratch);
        assert_eq!(v, want, "{what}");
    }

    /// Blocks large enough for the counting pass, with ties across and
    /// within sub-blocks: the result is the stable sort by time.
    #[test]
    fn large_blocks_sort_stably() {
        for n in [COUNTING_MIN - 1, COUNTING_MIN, 100, 700] {
            let mut x = 0x9e37_79b9_7f4a_7c15u64;
            // A few distinct times per sub-block, so ties are common.
            sorts_stably((0..n).map(|_| (5 << BLOCK_BITS) + xorshift(&mut x) % 300 * 3), &format!("{n} events"));
        }
    }

    /// Parts of parts (counting passes two and three deep), parts of one
    /// key, and heavy ties: each stable.
    #[test]
    fn parts_of_parts_sort_stably() {
        for (n, times, owners) in [(3000, 4, 5000), (3000, 2, 40), (500, 1, 3), (1500, 7, 1 << 30)] {
            let mut x = 0x2545_f491_4f6c_dd1du64;
            let keys = (0..n).map(|_| {
                let x = xorshift(&mut x);
                ((x % times) << OWNER_BITS) | ((x >> 24) % owners)
            });
            sorts_stably(keys, &format!("{n} events, {times} times, {owners} owners"));
        }
    }

    /// Far events pop by (time, insertion) whether they went to the run
    /// (times that never decreased) or to the heap, ties included.
    #[test]
    fn far_events_pop_by_time_then_insertion_across_run_and_heap() {
        let mut f = FarEvents::new();
        // Insertion numbers 0 to 6: the run takes 10, 30, 30, 40; the heap 20, 30, 25.
        for t in [10, 30, 20, 30, 40, 30, 25] {
            f.push(t, ());
        }
        assert_eq!(f.run.len(), 4);
        let mut got = Vec::new();
        while let Some(t) = f.first_time() {
            let e = f.pop().expect("first time");
            assert_eq!(e.t, t);
            got.push((e.t, e.seq));
        }
        assert_eq!(got, [(10, 0), (20, 2), (25, 6), (30, 1), (30, 3), (30, 5), (40, 4)]);
        // Emptied, the run takes any time again.
        f.push(5, ());
        assert_eq!((f.run.len(), f.heap.len()), (1, 0));
    }

    /// A time pushed while beyond the wheel, then again once the wheel has
    /// come within reach of it, and at the wheel's last block and the first
    /// beyond: the far event, moved into its slot, pops by owner with the
    /// later pushes of its time.
    #[test]
    fn far_events_pop_by_owner_with_later_pushes_of_their_time() {
        let block = 1u64 << BLOCK_BITS;
        let far = (WHEEL as u64 + 10) * block + 5;
        let mut q = EventQueue::new();
        q.push(far, ev(0));
        q.push((WHEEL as u64 - 1) * block, ev(1));
        q.push(WHEEL as u64 * block, ev(2));
        q.push(20 * block, ev(3));
        // Reading block 20 brings `far` within reach.
        assert_eq!(q.pop(), Some((20 * block, ev(3))));
        q.push(far, ev(4));
        q.push(far - 1, ev(5));
        q.push(far, ev(6));
        assert_eq!(
            drain(&mut q),
            ordered(vec![
                ((WHEEL as u64 - 1) * block, ev(1)),
                (WHEEL as u64 * block, ev(2)),
                (far - 1, ev(5)),
                (far, ev(0)),
                (far, ev(4)),
                (far, ev(6)),
            ])
        );
        // An empty wheel jumps to the first far event's block.
        q.push(u64::MAX, ev(7));
        q.push(u64::MAX - 1, ev(8));
        q.push(u64::MAX, ev(9));
        assert_eq!(drain(&mut q), ordered(vec![(u64::MAX - 1, ev(8)), (u64::MAX, ev(7)), (u64::MAX, ev(9))]));
    }

    #[test]
    fn peek_time_does_not_pop() {
        let mut q = EventQueue::new();
        assert_eq!(q.peek_time(), None);
        q.push(7, ev(0));
        q.push(3, ev(1));
        assert_eq!(q.peek_time(), Some(3));
        assert_eq!(q.peek_time(), Some(3));
        assert_eq!(q.len(), 2);
        q.push(3, ev(2));
        assert_eq!(drain(&mut q), ordered(vec![(3, ev(1)), (3, ev(2)), (7, ev(0))]));
        assert_eq!(q.popped(), 3);
    }

    /// `pop_within` stops at a block boundary without reading the block
    /// beyond it, so events may still be pushed anywhere from the boundary
    /// on and pop in (time, owner) order; it stops after `last` within
    /// a block; `next_bound` is a lower bound of what is queued and moves
    /// nothing.
    #[test]
    fn popping_within_a_bound_leaves_the_blocks_beyond_it_open() {
        let b = BLOCK_PS;
        let mut q = EventQueue::new();
        assert_eq!(q.next_bound(), None);
        assert_eq!(q.pop_within(4 * b, u64::MAX), None);
        q.push(3 * b + 5, ev(0));
        q.push(9 * b + 7, ev(1));
        q.push((WHEEL as u64 + 20) * b, ev(2));
        assert_eq!(q.next_bound(), Some(3 * b));
        assert_eq!(q.pop_within(4 * b, 3 * b + 4), None);
        assert_eq!(q.pop_within(4 * b, 3 * b + 5), Some((3 * b + 5, ev(0))));
        // The next event is in block 9: not read.
        assert_eq!(q.pop_within(4 * b, u64::MAX), None);
        assert_eq!(q.pop_within(9 * b, u64::MAX), None);
        assert_eq!(q.next_bound(), Some(9 * b));
        // Pushes from the bound on, before the unread event and tied with it.
        q.push(4 * b, ev(3));
        q.push(9 * b + 7, ev(4));
        assert_eq!(q.next_bound(), Some(4 * b));
        assert_eq!(q.pop_within(10 * b, 9 * b), Some((4 * b, ev(3))));
        assert_eq!(q.pop_within(10 * b, 9 * b), None);
        assert_eq!(
            drain(&mut q),
            ordered(vec![(9 * b + 7, ev(1)), (9 * b + 7, ev(4)), ((WHEEL as u64 + 20) * b, ev(2))])
        );
        // Only far events left: the first one's time.
        q.push(u64::MAX - 3, ev(5));
        assert_eq!(q.next_bound(), Some(u64::MAX - 3));
    }

    /// An item with an owner of its own, and a number to tell copies apart.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Owned(u64, u64);

    impl Item for Owned {
        const FILLER: Owned = Owned(0, 0);
        fn owner(&self) -> u64 {
            self.0
        }
    }

    proptest! {
        /// Items pop by (time, owner in the order of the time's block,
        /// insertion) whatever the order they were pushed in, including
        /// those pushed into the block being read.
        #[test]
        fn items_pop_by_time_then_owner(ops in proptest::collection::vec((0u64..3, 0u64..6_000_000, 0u64..4, any::<bool>()), 1..400)) {
            // Chunks of 4: lists of many chunks.
            let mut q: EventQueue<Owned, 2, 2> = EventQueue::new();
            let mut reference: BTreeMap<(u64, u64, u64), Owned> = BTreeMap::new();
            let mut now = 0;
            for (n, &(kind, d, owner, high)) in ops.iter().enumerate() {
                let n = n as u64;
                if kind == 0 {
                    let want = reference.pop_first().map(|((t, _, _), e)| (t, e));
                    let got = q.pop_within(u64::MAX, u64::MAX);
                    prop_assert_eq!(got, want);
                    if let Some((t, _)) = got {
                        now = t;
                    }
                    continue;
                }
                let t = now + if kind == 1 { d % 3000 } else { d };
                // Owners of two ranks, ids that the block's mask reorders.
                let owner = if high { 1 << 32 | owner } else { owner << 30 };
                let e = Owned(owner, n);
                q.push(t, e);
                reference.insert((t, owner ^ block_mask(t >> BLOCK_BITS), n), e);
            }
            let rest: Vec<(u64, Owned)> = reference.into_iter().map(|((t, _, _), e)| (t, e)).collect();
            let got: Vec<(u64, Owned)> = std::iter::from_fn(|| q.pop()).collect();
            prop_assert_eq!(got, rest);
        }
    }

    /// One step of a random run: push at `now + delay`, or pop.
    #[derive(Clone, Debug)]
    enum Op {
        Push(u64),
        Pop,
        /// `pop_within` the start of the block this many blocks after the
        /// current time's, and a time this far after the current time.
        PopWithin(u64, u64),
        /// Take back the pending event this far into those within the
        /// wheel's reach, if any.
        Remove(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            // Delays as a packet simulator makes them: none, a few ps,
            // within a nanosecond, link-scale, and far-future timers.
            2 => Just(Op::Push(0)),
            3 => (0u64..4).prop_map(Op::Push),
            3 => (0u64..3000).prop_map(Op::Push),
            4 => (0u64..2_000_000).prop_map(Op::Push),
            // Across the whole wheel and past its end.
            2 => (0u64..2 * WHEEL as u64 * BLOCK_PS).prop_map(Op::Push),
            1 => (0u64..1 << 40).prop_map(Op::Push),
            1 => any::<u64>().prop_map(Op::Push),
            // Timers a fixed delay ahead (a retransmission timeout): far
            // pushes whose times follow the clock, tying when the clock
            // stands still.
            3 => (0u64..3).prop_map(|k| Op::Push(3 * WHEEL as u64 * BLOCK_PS + k)),
            6 => Just(Op::Pop),
            2 => (0u64..6000, 0u64..3_000_000).prop_map(|(b, l)| Op::PopWithin(b, l)),
            3 => any::<usize>().prop_map(Op::Remove),
        ]
    }

    proptest! {
        #[test]
        fn interleaved_push_pop_matches_an_ordered_map(ops in proptest::collection::vec(op(), 0..600)) {
            let mut q = EventQueue::new();
            let mut reference: BTreeMap<((u64, u64), u64), Event> = BTreeMap::new();
            let mut places = BTreeMap::new();
            let mut now = 0u64;
            for (n, o) in ops.into_iter().enumerate() {
                let n = n as u64;
                match o {
                    Op::Push(d) => {
                        let t = now.saturating_add(d);
                        // A few owners, so that copies tie too.
                        let e = ev(n % 37);
                        places.insert(n, q.push_placed(t, e));
                        reference.insert((key(t, &e), n), e);
                    }
                    Op::PopWithin(blocks, l) => {
                        // A block after the current one (none past the
                        // last block of time), and a last time before it.
                        let end = (now / BLOCK_PS).checked_add(blocks + 1).and_then(|b| b.checked_mul(BLOCK_PS)).unwrap_or(u64::MAX);
                        let last = now.saturating_add(l).min(if end == u64::MAX { u64::MAX } else { end - 1 });
                        let first = reference.first_key_value().map(|(&k, _)| k).filter(|&((t, _), _)| t <= last);
                        let want = first.map(|k| (k.0 .0, reference.remove(&k).expect("first")));
                        prop_assert_eq!(q.pop_within(end, last), want);
                        now = match want {
                            Some((t, _)) => t,
                            // Pushes stay allowed from `end` on, or from an
                            // event it read after `last`.
                            None => now.max(q.next_bound().unwrap_or(end).min(end)),
                        };
                    }
                    Op::Remove(k) => {
                        let reach: Vec<_> = reference.iter().filter(|(&((t, _), _), _)| within_reach(q.last, t)).map(|(&k, &e)| (k, e)).collect();
                        if let Some(&(k, e)) = reach.get(k % reach.len().max(1)) {
                            reference.remove(&k);
                            // By its place, or looked for.
                            let place = if k.1 % 2 == 0 { places[&k.1] } else { NO_PLACE };
                            prop_assert!(q.remove(k.0 .0, e, place));
                            // Taken once: a second copy is taken only if pending.
                            let copies = reference.iter().filter(|(&((t, _), _), &f)| t == k.0 .0 && f == e).count();
                            if copies == 0 {
                                prop_assert!(!q.remove(k.0 .0, e, NO_PLACE));
                            }
                        }
                    }
                    Op::Pop => {
                        let want = reference.pop_first().map(|(((t, _), _), e)| (t, e));
                        prop_assert_eq!(q.peek_time(), want.map(|w| w.0));
                        let got = q.pop();
                        prop_assert_eq!(got, want);
                        if let Some((t, _)) = got {
                            now = t;
                        }
                    }
                }
                prop_assert_eq!(q.len(), reference.len());
            }
            let rest: Vec<(u64, Event)> = reference.into_iter().map(|(((t, _), _), e)| (t, e)).collect();
            prop_assert_eq!(drain(&mut q), rest);
        }
    }
}
