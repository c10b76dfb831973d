//! The ports' data queues: each a ring of packet ids, all rings in one
//! vector. A port keeps only its ring's position (base, head, length,
//! capacity: 13 bytes), so its queue, transmitter and marking state fit one
//! cache line; a `VecDeque` in the port took 32 bytes of it and its buffer
//! was an allocation of its own.
//!
//! A ring's capacity is a power of two (indices wrap with a mask). A ring
//! that fills is moved to a region twice as large; the region it leaves is
//! kept for the next ring that grows to its size. Rings never shrink, so
//! the vector holds every ring's largest region plus the regions left
//! behind and not yet taken.

use crate::id::PktId;

/// The first region a ring gets: 8 packets (32 bytes).
const FIRST_LOG2: u8 = 3;

/// Where a port's ring is in [`Rings`]. Packed (13 bytes) so that it
/// shares a cache line with the rest of the port's forwarding state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, packed)]
pub(crate) struct RingPos {
    pub base: u32,
    pub head: u32,
    pub len: u32,
    pub cap_log2: u8,
}

impl RingPos {
    /// No region yet (`cap_log2` 0): a port's ring before its first packet.
    pub const EMPTY: RingPos = RingPos { base: 0, head: 0, len: 0, cap_log2: 0 };

    /// 0 for no region (2^0 with the low bit cleared), else 2^`cap_log2`:
    /// regions hold at least 8.
    #[inline(always)]
    fn cap(&self) -> u32 {
        (1 << self.cap_log2) & !1
    }

    /// The slot of the `i`th packet from the head.
    #[inline(always)]
    fn slot(&self, i: u32) -> usize {
        (self.base + ((self.head + i) & ((1 << self.cap_log2) - 1))) as usize
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[cfg(test)]
    fn len(&self) -> u32 {
        self.len
    }
}

/// Every port's ring, in one vector of packet ids.
#[derive(Debug, Default)]
pub(crate) struct Rings {
    slots: Vec<PktId>,
    /// Free regions by capacity (log2).
    free: Vec<Vec<u32>>,
}

impl Rings {
    /// Appends `pkt` at the tail of ring `r`.
    #[inline(always)]
    pub fn push_back(&mut self, r: &mut RingPos, pkt: PktId) {
        if r.len == r.cap() {
            self.grow(r);
        }
        let i = r.slot(r.len);
        self.slots[i] = pkt;
        r.len += 1;
    }

    /// Takes the head of ring `r`.
    #[inline(always)]
    pub fn pop_front(&mut self, r: &mut RingPos) -> Option<PktId> {
        if r.len == 0 {
            return None;
        }
        let pkt = self.slots[r.slot(0)];
        r.head = (r.head + 1) & ((1 << r.cap_log2) - 1);
        r.len -= 1;
        Some(pkt)
    }

    /// Takes the tail of ring `r`.
    #[inline]
    pub fn pop_back(&mut self, r: &mut RingPos) -> Option<PktId> {
        if r.len == 0 {
            return None;
        }
        r.len -= 1;
        Some(self.slots[r.slot(r.len)])
    }

    #[inline(always)]
    pub fn front(&self, r: &RingPos) -> Option<&PktId> {
        (r.len > 0).then(|| &self.slots[r.slot(0)])
    }

    #[inline]
    pub fn back(&self, r: &RingPos) -> Option<&PktId> {
        (r.len > 0).then(|| &self.slots[r.slot(r.len - 1)])
    }

    /// Moves full ring `r` to a region twice its size (the first region if
    /// it has none), its packets in order from the region's start.
    #[cold]
    fn grow(&mut self, r: &mut RingPos) {
        let log2 = if r.cap_log2 == 0 { FIRST_LOG2 } else { r.cap_log2 + 1 };
        assert!(log2 < 32, "a port queue of 2^31 packets");
        let base = match self.free.get_mut(log2 as usize).and_then(|f| f.pop()) {
            Some(b) => b,
            None => {
                let b = self.slots.len();
                let end = b + (1usize << log2);
                assert!(end <= u32::MAX as usize, "port queues of more than 2^32 - 1 packets in all");
                self.slots.resize(end, PktId(0));
                b as u32
            }
        };
        for i in 0..r.len {
            self.slots[base as usize + i as usize] = self.slots[r.slot(i)];
        }
        if r.cap_log2 != 0 {
            let k = r.cap_log2 as usize;
            if self.free.len() <= k {
                self.free.resize(k + 1, Vec::new());
            }
            self.free[k].push(r.base);
        }
        *r = RingPos { base, head: 0, len: r.len, cap_log2: log2 };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    #[derive(Clone, Debug)]
    enum Op {
        Push(usize),
        PopFront(usize),
        PopBack(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0..4usize).prop_map(Op::Push),
            2 => (0..4usize).prop_map(Op::PopFront),
            1 => (0..4usize).prop_map(Op::PopBack),
        ]
    }

    proptest! {
        /// Four rings sharing the vector behave as four `VecDeque`s, through
        /// growth, wrap-around and reuse of freed regions.
        #[test]
        fn rings_behave_as_deques(ops in proptest::collection::vec(op(), 1..600)) {
            let mut rings = Rings::default();
            let mut pos = [RingPos::EMPTY; 4];
            let mut model: [VecDeque<PktId>; 4] = Default::default();
            for (n, o) in ops.into_iter().enumerate() {
                match o {
                    Op::Push(q) => {
                        rings.push_back(&mut pos[q], PktId(n as u32));
                        model[q].push_back(PktId(n as u32));
                    }
                    Op::PopFront(q) => prop_assert_eq!(rings.pop_front(&mut pos[q]), model[q].pop_front()),
                    Op::PopBack(q) => prop_assert_eq!(rings.pop_back(&mut pos[q]), model[q].pop_back()),
                }
                for q in 0..4 {
                    prop_assert_eq!(pos[q].len() as usize, model[q].len());
                    prop_assert_eq!(rings.front(&pos[q]), model[q].front());
                    prop_assert_eq!(rings.back(&pos[q]), model[q].back());
                }
            }
        }
    }

    #[test]
    fn a_region_left_by_a_growing_ring_is_reused_by_the_next() {
        let mut rings = Rings::default();
        let (mut a, mut b) = (RingPos::EMPTY, RingPos::EMPTY);
        for i in 0..9 {
            rings.push_back(&mut a, PktId(i));
        }
        // a: 8 slots at 0, then 16 at 8; b takes the 8 a left.
        assert_eq!({ a.base }, 8);
        assert_eq!({ a.cap_log2 }, 4);
        rings.push_back(&mut b, PktId(100));
        assert_eq!({ b.base }, 0);
        assert_eq!(rings.slots.len(), 24);
        assert_eq!((0..9).map(|_| rings.pop_front(&mut a).unwrap().0).collect::<Vec<_>>(), (0..9).collect::<Vec<_>>());
    }
}
