//! The event queue: events pop in (time, insertion) order, so events
//! scheduled for the same picosecond pop in the order they were scheduled,
//! on every machine and every run.

use super::Event;

/// Times are bucketed by block of 2^10 ps (about 1 ns); within the block
/// being read, events are kept sorted instead. Few events share a block, and
/// sorting them is cheaper than bucketing them down to the picosecond.
const BLOCK_BITS: u32 = 10;
/// Bits of the block number per level.
const BITS: u32 = 6;
const SLOTS: usize = 1 << BITS;
/// Levels needed to cover the block numbers of 64-bit times.
const LEVELS: usize = (64 - BLOCK_BITS as usize).div_ceil(BITS as usize);
/// End of a list.
const NIL: u32 = u32::MAX;

/// Events per chunk of a bucket's list.
const CHUNK: usize = 16;

/// A run of pending events in a bucket's list, in insertion order, or a free
/// chunk. Times and events apart: 20 bytes an event rather than 24 with the
/// padding of a (u64, Event) pair. Every chunk of a list but its tail is
/// full; the tail's length is kept with the list, so an append writes only
/// the event's own lines.
#[derive(Clone, Copy)]
struct Chunk {
    times: [u64; CHUNK],
    events: [Event; CHUNK],
    next: u32,
}

const EMPTY_CHUNK: Chunk = Chunk { times: [0; CHUNK], events: [Event::TxDone { port: crate::id::PortId(0) }; CHUNK], next: NIL };

/// A bucket's list of chunks.
#[derive(Clone, Copy)]
struct Bucket {
    first: u32,
    tail: u32,
    /// Events in the tail chunk.
    tail_len: u32,
    /// The earliest time in the bucket, kept as events are appended, so that
    /// taking a bucket above level 0 reads its chunks once, not twice.
    min: u64,
}

const EMPTY_BUCKET: Bucket = Bucket { first: NIL, tail: NIL, tail_len: 0, min: u64::MAX };

/// A radix heap over block numbers with 64-way digits (a hierarchical
/// timing wheel that cascades lazily), whose buckets keep insertion order.
///
/// Times popped never decrease (the simulation never schedules into the
/// past). `last` is the time of the latest event taken out; `now` holds the
/// events of its block, sorted by time, ties in insertion order. Any other
/// event is in the bucket (level, slot) where level is the highest 6-bit
/// digit in which its block number differs from that of `last`, and slot is
/// its block number's value in that digit. When `now` has been read to its
/// end, the lowest non-empty bucket (found from bit masks) is taken: at
/// level 0 its events are all of one block and become `now`, sorted; above,
/// `last` moves to its smallest time and its events are spread over `now`
/// and the lower levels. An event only ever moves down, at most once per
/// level: a packet simulator's pending times lie within a few link delays
/// (2^20 to 2^22 ps, 2^10 to 2^12 blocks), so once or twice, where a binary
/// radix heap over picoseconds moves it up to twenty times.
///
/// Buckets are linked lists of chunks of 16 events through one vector of
/// chunks (with a free list), so memory follows the number of pending events
/// (plus at most one part-filled chunk per bucket), not the largest number
/// each of the 576 buckets ever held; and a bucket is read from a few
/// contiguous runs, not one scattered node per event (on the large fabrics
/// the pending events do not fit the caches, and a list of single nodes
/// cost a cache miss per event).
///
/// Ties need no sequence number: events are only spread into buckets that
/// are empty (every level below the one taken), by walking a bucket in
/// order, and pushes append; so in every bucket the events of one time are
/// in insertion order, the sort of a block is stable, and an event put into
/// `now` goes after every event of its time.
pub struct EventQueue {
    now: Vec<(u64, Event)>,
    /// Scratch space for sorting a block (see `sort_by_time`).
    scratch: Vec<(u64, Event)>,
    /// Read position in `now`; the entries before it have been popped.
    head: usize,
    chunks: Vec<Chunk>,
    /// First free chunk, linked through `next`.
    free: u32,
    /// Per bucket, its list, `LEVELS * SLOTS`, level-major.
    lists: Box<[Bucket]>,
    /// Per level, bit `s` set when slot `s` is not empty.
    masks: [u64; LEVELS],
    /// Bit `l` set when level `l` has a non-empty slot.
    levels: u16,
    last: u64,
    len: usize,
    popped: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for EventQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "EventQueue {{ len: {}, popped: {} }}", self.len, self.popped)
    }
}

/// Stable insertion sort by time.
fn insertion_sort(v: &mut [(u64, Event)]) {
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && v[j - 1].0 > x.0 {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

/// Bits of a time within its block that the counting pass sorts by (64
/// sub-blocks of 16 ps).
const SUB_BITS: u32 = 6;
/// Below this many events a block is insertion-sorted directly.
const COUNTING_MIN: usize = 24;

/// Stable sort by time of the events of one block. A block holds tens (1024
/// hosts) to hundreds (8192 hosts) of events in no particular order, which
/// an insertion sort alone handles in quadratic time: a stable counting
/// pass by sub-block first leaves a few events per sub-block for the
/// insertion sort to order. `scratch` is kept by the queue, so this
/// allocates only while the largest block grows.
fn sort_by_time(v: &mut Vec<(u64, Event)>, scratch: &mut Vec<(u64, Event)>) {
    let n = v.len();
    if n < COUNTING_MIN {
        insertion_sort(v);
        return;
    }
    let shift = BLOCK_BITS - SUB_BITS;
    let sub = |t: u64| (t >> shift) as usize & ((1 << SUB_BITS) - 1);
    let mut start = [0u32; (1 << SUB_BITS) + 1];
    for &(t, _) in v.iter() {
        start[sub(t) + 1] += 1;
    }
    for k in 1..start.len() {
        start[k] += start[k - 1];
    }
    std::mem::swap(v, scratch);
    v.clear();
    v.resize(n, scratch[0]);
    for &(t, e) in scratch.iter() {
        let k = sub(t);
        v[start[k] as usize] = (t, e);
        start[k] += 1;
    }
    insertion_sort(v);
}

impl EventQueue {
    pub fn new() -> Self {
        EventQueue {
            now: Vec::new(),
            scratch: Vec::new(),
            head: 0,
            chunks: Vec::new(),
            free: NIL,
            lists: vec![EMPTY_BUCKET; LEVELS * SLOTS].into_boxed_slice(),
            masks: [0; LEVELS],
            levels: 0,
            last: 0,
            len: 0,
            popped: 0,
        }
    }

    /// Schedules `event` at `time_ps`, which must not be before the time of
    /// an event already popped or peeked.
    #[inline]
    pub fn push(&mut self, time_ps: u64, event: Event) {
        assert!(time_ps >= self.last, "event scheduled at {time_ps} ps, before {} ps", self.last);
        self.len += 1;
        match self.bucket(time_ps) {
            None => self.put_now(time_ps, event),
            Some(i) => self.append(i, time_ps, event),
        }
    }

    /// The bucket of time `t`, or `None` for the block being read.
    #[inline(always)]
    fn bucket(&self, t: u64) -> Option<usize> {
        let diff = (t >> BLOCK_BITS) ^ (self.last >> BLOCK_BITS);
        if diff == 0 {
            return None;
        }
        let l = (63 - diff.leading_zeros()) / BITS;
        let s = (t >> (BLOCK_BITS + l * BITS)) as usize & (SLOTS - 1);
        Some(l as usize * SLOTS + s)
    }

    /// Appends an event to bucket `i`. Inlined: it is called for every push
    /// and for every event a refill moves down.
    #[inline(always)]
    fn append(&mut self, i: usize, t: u64, e: Event) {
        let b = self.lists[i];
        if b.first != NIL && (b.tail_len as usize) < CHUNK {
            let c = &mut self.chunks[b.tail as usize];
            c.times[b.tail_len as usize] = t;
            c.events[b.tail_len as usize] = e;
            let b = &mut self.lists[i];
            b.tail_len += 1;
            b.min = b.min.min(t);
            return;
        }
        self.append_chunk(i, t, e);
    }

    /// Appends an event to bucket `i` in a new chunk.
    fn append_chunk(&mut self, i: usize, t: u64, e: Event) {
        let b = self.lists[i];
        let n = self.alloc_chunk();
        let c = &mut self.chunks[n as usize];
        c.times[0] = t;
        c.events[0] = e;
        c.next = NIL;
        if b.first == NIL {
            self.lists[i] = Bucket { first: n, tail: n, tail_len: 1, min: t };
            let (l, s) = (i / SLOTS, i % SLOTS);
            self.masks[l] |= 1 << s;
            self.levels |= 1 << l;
        } else {
            self.chunks[b.tail as usize].next = n;
            self.lists[i] = Bucket { tail: n, tail_len: 1, min: b.min.min(t), ..b };
        }
    }

    #[inline]
    fn alloc_chunk(&mut self) -> u32 {
        if self.free != NIL {
            let n = self.free;
            self.free = self.chunks[n as usize].next;
            n
        } else {
            assert!(self.chunks.len() < NIL as usize, "too many pending events");
            self.chunks.push(EMPTY_CHUNK);
            (self.chunks.len() - 1) as u32
        }
    }

    /// Puts an event of the block being read after every event at or before
    /// its time.
    #[inline]
    fn put_now(&mut self, t: u64, e: Event) {
        if self.now.last().is_none_or(|&(u, _)| u <= t) {
            self.now.push((t, e));
        } else {
            let i = self.head + self.now[self.head..].partition_point(|&(u, _)| u <= t);
            self.now.insert(i, (t, e));
        }
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(u64, Event)> {
        if self.head == self.now.len() && !self.refill() {
            return None;
        }
        let e = self.now[self.head];
        self.head += 1;
        self.last = e.0;
        self.len -= 1;
        self.popped += 1;
        Some(e)
    }

    /// The event `k` places after the next one, if it is already in the
    /// block being read (no refill): for the loop to prefetch what it will
    /// touch.
    #[inline]
    pub fn peek_ahead(&self, k: usize) -> Option<&Event> {
        self.now.get(self.head + k).map(|(_, e)| e)
    }

    /// The time of the next event; from then on, no event may be pushed
    /// before it.
    #[inline]
    pub fn peek_time(&mut self) -> Option<u64> {
        if self.head == self.now.len() && !self.refill() {
            return None;
        }
        Some(self.now[self.head].0)
    }

    /// `now` has been read to its end: refills it from the lowest non-empty
    /// bucket. False if the queue is empty.
    fn refill(&mut self) -> bool {
        self.now.clear();
        self.head = 0;
        if self.levels == 0 {
            return false;
        }
        let l = self.levels.trailing_zeros() as usize;
        let s = self.masks[l].trailing_zeros() as usize;
        self.masks[l] &= !(1 << s);
        if self.masks[l] == 0 {
            self.levels &= !(1 << l);
        }
        let i = l * SLOTS + s;
        let b = self.lists[i];
        self.lists[i] = EMPTY_BUCKET;
        let mut n = b.first;
        let len = |n: u32| if n == b.tail { b.tail_len as usize } else { CHUNK };
        if l == 0 {
            // Every event of a level-0 slot is in one block.
            while n != NIL {
                let c = &self.chunks[n as usize];
                let (k, next) = (len(n), c.next);
                self.now.extend(c.times[..k].iter().copied().zip(c.events[..k].iter().copied()));
                self.free_chunk(n);
                n = next;
            }
            sort_by_time(&mut self.now, &mut self.scratch);
            self.last = self.now[0].0;
            return true;
        }
        self.last = b.min;
        while n != NIL {
            // Read in place (no copy of the chunk); freed once read, so the
            // spread below never writes into it.
            let (k, next) = (len(n), self.chunks[n as usize].next);
            for j in 0..k {
                let c = &self.chunks[n as usize];
                let (t, ev) = (c.times[j], c.events[j]);
                match self.bucket(t) {
                    None => self.put_now(t, ev),
                    Some(j) => self.append(j, t, ev),
                }
            }
            self.free_chunk(n);
            n = next;
        }
        true
    }

    #[inline]
    fn free_chunk(&mut self, n: u32) {
        self.chunks[n as usize].next = self.free;
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

    #[test]
    fn same_time_events_pop_in_insertion_order() {
        let mut q = EventQueue::new();
        q.push(10, ev(2));
        q.push(5, ev(9));
        q.push(10, ev(1));
        q.push(10, ev(3));
        assert_eq!(drain(&mut q), vec![(5, ev(9)), (10, ev(2)), (10, ev(1)), (10, ev(3))]);
        assert_eq!(q.popped(), 4);
        assert!(q.is_empty());
    }

    /// Times on both sides of every power of two up to the far future,
    /// pushed three times over in changing order, half of them popped, then
    /// more pushed at the current time and in the far future: ties must come
    /// out in insertion order whichever buckets they waited in.
    #[test]
    fn ties_keep_insertion_order_across_buckets_and_far_future() {
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
                want.insert((t, n), ev(n));
                n += 1;
            }
            for &t in times.iter().filter(|&&t| t >= u64::MAX - 1) {
                q.push(t, ev(n));
                want.insert((t, n), ev(n));
                n += 1;
            }
        }
        // Pop half, then push more at and after the current time.
        let mut got = Vec::new();
        for _ in 0..want.len() / 2 {
            got.push(q.pop().unwrap());
        }
        let now = got.last().unwrap().0;
        for t in [now, now, now + 1, u64::MAX - 1, now, u64::MAX] {
            q.push(t, ev(n));
            want.insert((t, n), ev(n));
            n += 1;
        }
        assert_eq!(q.len(), want.len() - got.len());
        got.extend(drain(&mut q));
        let want: Vec<(u64, Event)> = want.into_iter().map(|((t, _), e)| (t, e)).collect();
        assert_eq!(got, want);
    }

    /// Blocks large enough for the counting pass, with ties across and
    /// within sub-blocks: the result is the stable sort by time.
    #[test]
    fn large_blocks_sort_stably() {
        for n in [COUNTING_MIN - 1, COUNTING_MIN, 100, 700] {
            let mut x = 0x9e37_79b9_7f4a_7c15u64;
            let mut v: Vec<(u64, Event)> = (0..n as u64)
                .map(|i| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    // A few distinct times per sub-block, so ties are common.
                    ((5 << BLOCK_BITS) + x % 300 * 3, ev(i))
                })
                .collect();
            let mut want = v.clone();
            want.sort_by_key(|&(t, _)| t);
            let mut scratch = Vec::new();
            sort_by_time(&mut v, &mut scratch);
            assert_eq!(v, want, "{n} events");
        }
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
        assert_eq!(drain(&mut q), vec![(3, ev(1)), (3, ev(2)), (7, ev(0))]);
        assert_eq!(q.popped(), 3);
    }

    /// One step of a random run: push at `now + delay`, or pop.
    #[derive(Clone, Debug)]
    enum Op {
        Push(u64),
        Pop,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            // Delays as a packet simulator makes them: none, a few ps,
            // within a nanosecond, link-scale, and far-future timers.
            2 => Just(Op::Push(0)),
            3 => (0u64..4).prop_map(Op::Push),
            3 => (0u64..3000).prop_map(Op::Push),
            4 => (0u64..2_000_000).prop_map(Op::Push),
            1 => (0u64..1 << 40).prop_map(Op::Push),
            1 => any::<u64>().prop_map(Op::Push),
            6 => Just(Op::Pop),
        ]
    }

    proptest! {
        #[test]
        fn interleaved_push_pop_matches_an_ordered_map(ops in proptest::collection::vec(op(), 0..600)) {
            let mut q = EventQueue::new();
            let mut reference: BTreeMap<(u64, u64), Event> = BTreeMap::new();
            let mut now = 0u64;
            for (n, o) in ops.into_iter().enumerate() {
                let n = n as u64;
                match o {
                    Op::Push(d) => {
                        let t = now.saturating_add(d);
                        q.push(t, ev(n));
                        reference.insert((t, n), ev(n));
                    }
                    Op::Pop => {
                        let want = reference.pop_first().map(|((t, _), e)| (t, e));
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
            let rest: Vec<(u64, Event)> = reference.into_iter().map(|((t, _), e)| (t, e)).collect();
            prop_assert_eq!(drain(&mut q), rest);
        }
    }
}
