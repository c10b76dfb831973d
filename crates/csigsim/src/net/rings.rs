//! The ports' data queues: each a ring of [`Queued`] packets (the id and
//! what the departure reads of the packet), all rings in one vector. A port keeps only its ring's position (base, head, length,
//! capacity: 13 bytes), so its queue, transmitter and marking state fit one
//! cache line; a `VecDeque` in the port took 32 bytes of it and its buffer
//! was an allocation of its own.
//!
//! A ring's capacity is a power of two (indices wrap with a mask). A ring
//! that fills is moved to a region twice as large; the region it leaves is
//! kept for the next ring that grows to its size. Rings never shrink, so
//! the vector holds every ring's largest region plus the regions left
//! behind and not yet taken.

use crate::id::{PktId, PortId};

/// A packet waiting in a data queue, with what its departure reads of it:
/// the switch port it came in through (buffer and PFC accounting), its
/// wire bytes, whether it is data and ECN-capable. The departure then
/// reads the ring's slot only, not the packet's line, which on a large
/// fabric has left the cache while the packet waited (and was read at
/// its arrival, a packet time or more before).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Queued {
    pub pkt: PktId,
    pub in_port: PortId,
    /// Wire bytes in bits 0 to 29, [`Queued::ECT`] and [`Queued::DATA`].
    bits: u32,
}

impl Queued {
    const ECT: u32 = 1 << 30;
    const DATA: u32 = 1 << 31;
    const WIRE: u32 = Self::ECT - 1;

    #[inline(always)]
    pub fn new(pkt: PktId, in_port: PortId, wire: u32, data: bool, ect: bool) -> Queued {
        assert!(wire <= Self::WIRE, "a packet of 2^30 bytes or more");
        Queued { pkt, in_port, bits: wire | if data { Self::DATA } else { 0 } | if ect { Self::ECT } else { 0 } }
    }

    /// Wire bytes as the packet joined (only the signals of its departure
    /// change them, and they read the packet).
    #[inline(always)]
    pub fn wire(&self) -> u64 {
        (self.bits & Self::WIRE) as u64
    }

    /// A data packet (not an ACK, NACK or CNP in a shared queue).
    #[inline(always)]
    pub fn is_data(&self) -> bool {
        self.bits & Self::DATA != 0
    }

    /// ECN-capable transport.
    #[inline(always)]
    pub fn ect(&self) -> bool {
        self.bits & Self::ECT != 0
    }
}

/// The first region a ring gets: 8 packets (96 bytes).
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

/// Every port's ring, in one vector.
#[derive(Debug, Default)]
pub(crate) struct Rings {
    slots: Vec<Queued>,
    /// Free regions by capacity (log2).
    free: Vec<Vec<u32>>,
}

impl Rings {
    /// Appends `pkt` at the tail of ring `r`.
    #[inline(always)]
    pub fn push_back(&mut self, r: &mut RingPos, pkt: Queued) {
        if r.len == r.cap() {
            self.grow(r);
        }
        let i = r.slot(r.len);
        self.slots[i] = pkt;
        r.len += 1;
    }

    /// Takes the head of ring `r`.
    #[inline(always)]
    pub fn pop_front(&mut self, r: &mut RingPos) -> Option<Queued> {
        if r.len == 0 {
            return None;
        }
        let pkt = self.slots[r.slot(0)];
        r.len -= 1;
        // A ring left empty starts again at its region's start: its next
        // packets go to the lines it wrote last, not on around the region
        // to lines that have left the cache since they were written.
        r.head = if r.len == 0 { 0 } else { (r.head + 1) & ((1 << r.cap_log2) - 1) };
        Some(pkt)
    }

    /// Takes the tail of ring `r`.
    #[inline]
    pub fn pop_back(&mut self, r: &mut RingPos) -> Option<Queued> {
        if r.len == 0 {
            return None;
        }
        r.len -= 1;
        Some(self.slots[r.slot(r.len)])
    }

    #[inline(always)]
    pub fn front(&self, r: &RingPos) -> Option<&Queued> {
        (r.len > 0).then(|| &self.slots[r.slot(0)])
    }

    #[inline]
    pub fn back(&self, r: &RingPos) -> Option<&Queued> {
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
                self.slots.resize(end, Queued::new(PktId(0), PortId(0), 0, false, false));
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

    /// A slot of ring `n`: the packet's id and, to tell slots apart in
    /// every field, the rest drawn from it.
    fn q(n: u32) -> Queued {
        Queued::new(PktId(n), PortId(n * 7), n * 13 % 9000, n.is_multiple_of(3), n % 5 < 2)
    }

    #[test]
    fn a_slot_keeps_what_it_was_given() {
        for (wire, data, ect) in [(0, false, false), (4150, true, true), ((1 << 30) - 1, true, false), (64, false, true)] {
            let s = Queued::new(PktId(9), PortId(5), wire, data, ect);
            assert_eq!((s.pkt, s.in_port, s.wire(), s.is_data(), s.ect()), (PktId(9), PortId(5), wire as u64, data, ect));
        }
    }

    proptest! {
        /// Four rings sharing the vector behave as four `VecDeque`s, through
        /// growth, wrap-around and reuse of freed regions.
        #[test]
        fn rings_behave_as_deques(ops in proptest::collection::vec(op(), 1..600)) {
            let mut rings = Rings::default();
            let mut pos = [RingPos::EMPTY; 4];
            let mut model: [VecDeque<Queued>; 4] = Default::default();
            for (n, o) in ops.into_iter().enumerate() {
                match o {
                    Op::Push(q) => {
                        rings.push_back(&mut pos[q], self::q(n as u32));
                        model[q].push_back(self::q(n as u32));
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
            rings.push_back(&mut a, q(i));
        }
        // a: 8 slots at 0, then 16 at 8; b takes the 8 a left.
        assert_eq!({ a.base }, 8);
        assert_eq!({ a.cap_log2 }, 4);
        rings.push_back(&mut b, q(100));
        assert_eq!({ b.base }, 0);
        assert_eq!(rings.slots.len(), 24);
        assert_eq!((0..9).map(|_| rings.pop_front(&mut a).unwrap().pkt.0).collect::<Vec<_>>(), (0..9).collect::<Vec<_>>());
    }
}
