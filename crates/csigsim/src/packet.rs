//! Packets and their arena. A packet is a small plain struct of parsed header
//! fields; it lives in a slot of [`PacketArena`] from injection to delivery or
//! drop and is referred to by its slot index. Nothing on the per-packet path
//! allocates: freed slots are reused. In-band signal state (CSIG tag, queue
//! stamps, INT stack) lives in slots parallel to the packets', only when a run
//! uses signals. This module is a leaf: every layer of the engine uses it.

use crate::id::{FlowId, HostId, PktId, PortId};

/// What a packet is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum PacketKind {
    #[default]
    Data,
    Ack,
    Nack,
    /// PFC PAUSE (XOFF) or RESUME (XON) for the data class, hop by hop.
    Pause,
    /// Congestion notification from the receiver (DCQCN's notification point).
    Cnp,
    /// Receiver credits (`[transport.rccc]`): from a receiver, the flow's
    /// cumulative grant; from a sender, a request (RTS) carrying its credit
    /// target. Both in [`Packet::credit_quanta`].
    Credit,
}

impl PacketKind {
    /// Control packets travel in the strict-priority class and are never
    /// dropped or paused.
    #[inline]
    pub fn is_control(self) -> bool {
        !matches!(self, PacketKind::Data)
    }
}

/// ECN-capable transport (sender set ECT).
pub const F_ECT: u8 = 1;
/// Congestion experienced (a switch marked the packet).
pub const F_CE: u8 = 2;
/// The payload was cut off by a trimming switch.
pub const F_TRIMMED: u8 = 4;
/// On an ACK: the receiver has every byte of the flow.
pub const F_DONE: u8 = 8;
/// On a PAUSE packet: pause (set) or resume (clear).
pub const F_XOFF: u8 = 16;
/// On data: a retransmission.
pub const F_RTX: u8 = 32;
/// On data: the sender asks for an immediate ACK (`transport.ack_request`).
pub const F_AR: u8 = 64;
/// On a trimmed data packet: the switch that trimmed it sends to the
/// destination host (UET's last-hop trim, `UET_TRIMMED_LASTHOP`).
pub const F_TRIMMED_LAST_HOP: u8 = 128;

/// Why a receiver NACKs a packet: UET's NACK codes, those csigsim's
/// receivers have cause to send. Carried by every NACK to the sender's
/// congestion control.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum NackReason {
    /// A switch in the fabric trimmed the packet (`UET_TRIMMED`).
    #[default]
    Trimmed,
    /// The switch before the destination host trimmed it (`UET_TRIMMED_LASTHOP`):
    /// the receiver's own link is the congested one.
    TrimmedLastHop,
    /// A hole in the packet sequence (no UET code under unordered delivery):
    /// go-back-N's out-of-order NACK (RoCE's sequence error) or the
    /// selective receiver's `nack_threshold`.
    Gap,
}

impl NackReason {
    /// The NACK answers a trimmed packet.
    pub fn is_trim(self) -> bool {
        matches!(self, NackReason::Trimmed | NackReason::TrimmedLastHop)
    }
}

/// Bits of a rud ACK's selective-ACK bitmap (one per packet).
pub const SACK_BITS: u32 = 32;

/// 64 bytes, aligned to a cache line: a packet is one cache miss, not two.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
pub struct Packet {
    pub kind: PacketKind,
    pub flags: u8,
    /// Link hops taken so far.
    pub hops: u8,
    /// NACK: why the receiver asks for the packet.
    pub reason: NackReason,
    pub flow: FlowId,
    /// Source and destination hosts.
    pub src: HostId,
    pub dst: HostId,
    /// Data: packet sequence number. ACK: next expected PSN (cumulative).
    /// NACK: the PSN the receiver asks for.
    pub psn: u32,
    /// ACK: the PSN of the data packet that triggered it (selective ack).
    /// NACK: the PSN of the data packet it answers.
    pub sack: u32,
    /// Bytes on the wire now (headers + payload; a trimmed packet keeps only headers).
    pub wire: u32,
    /// Payload bytes the packet carries (or carried, before trimming). An
    /// ACK carries none: under `transport.delivery = "rud"` the word holds
    /// its selective-ACK bitmap ([`Packet::sack_bitmap`]).
    pub payload: u32,
    /// Load-balancing entropy (the flow's, or per packet when the sender sprays).
    pub entropy: u32,
    /// ACK: data packets this ACK covers, and how many of them were CE-marked.
    pub acked: u16,
    pub ce: u16,
    /// Data: when the sender put it on the wire. ACK/NACK: echo of that time.
    pub sent_ps: u64,
    /// When the packet entered its current egress queue.
    pub enq_ps: u64,
    /// Ingress port at the current switch, for buffer accounting.
    pub in_port: PortId,
    /// Data: the lowest rate advice of the congestion roots that marked the
    /// packet (the enhanced congestion point). CNP: the advice the
    /// notification point reports.
    pub advice: Advice,
}

impl Packet {
    /// A rud ACK's selective-ACK bitmap: bit `i` set when the receiver holds
    /// packet [`Packet::sack_base`] + `i`.
    #[inline]
    pub fn sack_bitmap(&self) -> u32 {
        self.payload
    }

    #[inline]
    pub fn set_sack_bitmap(&mut self, bits: u32) {
        self.payload = bits;
    }

    /// Receiver credits, in quanta: a data packet's or a request's credit
    /// target, a credit packet's cumulative grant. The word is the ACK's
    /// `sack`, which no data or credit packet uses.
    #[inline]
    pub fn credit_quanta(&self) -> u32 {
        self.sack
    }

    #[inline]
    pub fn set_credit_quanta(&mut self, q: u32) {
        self.sack = q;
    }

    /// The first packet a rud ACK's bitmap covers: the [`SACK_BITS`] packets
    /// up to the one that triggered the ACK (`sack`), none at or below the
    /// cumulative point (`psn`, which the receiver lacks).
    #[inline]
    pub fn sack_base(&self) -> u32 {
        (self.sack.saturating_sub(SACK_BITS - 1)).max(self.psn.saturating_add(1))
    }
}

#[derive(Debug, Default)]
pub struct PacketArena {
    slots: Vec<Packet>,
    free: Vec<PktId>,
    live: u64,
    live_bytes: u64,
    /// Signal state per slot, kept only when the run uses signals.
    sig: Vec<Signals>,
    int: Vec<IntStack>,
    with_sig: bool,
    with_int: bool,
    /// Per flow: its packets in the network (empty unless
    /// [`PacketArena::count_flows`]); PAUSE frames are no flow's.
    in_network: Vec<u32>,
}

impl PacketArena {
    pub fn new() -> Self {
        Self::default()
    }

    /// An arena whose slots also carry signal state (CSIG, stamps) and INT stacks.
    pub fn with_signals(sig: bool, int: bool) -> Self {
        PacketArena { with_sig: sig || int, with_int: int, ..Default::default() }
    }

    /// A slot for `p`. Inlined: a call passed the packet through memory.
    #[inline(always)]
    pub fn alloc(&mut self, p: Packet) -> PktId {
        self.live += 1;
        self.live_bytes += p.wire as u64;
        if let Some(n) = self.in_network.get_mut(p.flow.ix()) {
            *n += (p.kind != PacketKind::Pause) as u32;
        }
        match self.free.pop().map(|p| p.0) {
            Some(i) => {
                self.slots[i as usize] = p;
                if self.with_sig {
                    self.sig[i as usize] = Default::default();
                }
                if self.with_int {
                    self.int[i as usize].n = 0;
                }
                PktId(i)
            }
            None => {
                self.slots.push(p);
                if self.with_sig {
                    self.sig.push(Default::default());
                }
                if self.with_int {
                    self.int.push(Default::default());
                }
                PktId((self.slots.len() - 1) as u32)
            }
        }
    }

    /// The slot that the `n`-th next [`Self::alloc`] (from 0) will fill if
    /// nothing is freed before it, while a freed slot awaits it: for a
    /// caller about to allocate many packets to ask the CPU for it ahead.
    #[inline]
    pub fn next_slot(&self, n: usize) -> Option<&Packet> {
        let i = self.free.len().checked_sub(n + 1)?;
        Some(&self.slots[self.free[i].ix()])
    }

    /// Signal state of a packet (only in an arena made `with_signals`).
    #[inline]
    pub fn sig(&self, id: PktId) -> &Signals {
        &self.sig[id.ix()]
    }
    #[inline]
    pub fn sig_mut(&mut self, id: PktId) -> &mut Signals {
        &mut self.sig[id.ix()]
    }
    #[inline]
    pub fn int(&self, id: PktId) -> &IntStack {
        &self.int[id.ix()]
    }
    #[inline]
    pub fn int_mut(&mut self, id: PktId) -> &mut IntStack {
        &mut self.int[id.ix()]
    }
    /// The head of a packet's INT stack (its hop count and multiplier),
    /// what [`Self::reflect_int`] needs besides the freed slot.
    #[inline]
    pub fn int_head(&self, id: PktId) -> (u8, u8) {
        let s = &self.int[id.ix()];
        (s.n, s.multi)
    }
    /// Gives packet `to` the INT stack that packet `from` carried when it
    /// was freed, `head` being [`Self::int_head`] of it read before: a
    /// receiver reflects a data packet's stack into its ACK without copying
    /// the stack out and back. The ACK usually takes the data packet's own
    /// slot (freed slots are reused last in, first out), whose hops are
    /// then in place; otherwise its live hops are copied. A freed slot's
    /// hops stay as they were until an egress writes them, which no
    /// receiver does between freeing and reflecting.
    #[inline]
    pub fn reflect_int(&mut self, from: PktId, head: (u8, u8), to: PktId) {
        let (f, t, n) = (from.ix(), to.ix(), head.0 as usize);
        if f != t {
            let (src, dst) = if f < t {
                let (low, high) = self.int.split_at_mut(t);
                (&low[f], &mut high[0])
            } else {
                let (low, high) = self.int.split_at_mut(f);
                (&high[0], &mut low[t])
            };
            dst.hops[..n].copy_from_slice(&src.hops[..n]);
        }
        let s = &mut self.int[t];
        (s.n, s.multi) = head;
    }
    /// The signal state and the INT stack of a packet, where the arena
    /// keeps them: for the loop to ask the CPU for them ahead (they sit in
    /// vectors of their own, a line or more away from the packet).
    #[inline(always)]
    pub fn signal_slots(&self, id: PktId) -> (Option<&Signals>, Option<&IntStack>) {
        (self.sig.get(id.ix()), self.int.get(id.ix()))
    }
    pub fn has_signals(&self) -> bool {
        self.with_sig
    }
    pub fn has_int(&self) -> bool {
        self.with_int
    }

    #[inline]
    pub fn free(&mut self, id: PktId) {
        let p = &self.slots[id.ix()];
        self.live -= 1;
        self.live_bytes -= p.wire as u64;
        if let Some(n) = self.in_network.get_mut(p.flow.ix()) {
            *n -= (p.kind != PacketKind::Pause) as u32;
        }
        self.free.push(id);
    }

    /// Counts the packets of each of `flows` flows in the network from now
    /// on (none may be live yet): what tells the transport that a flow's
    /// state can go.
    pub fn count_flows(&mut self, flows: usize) {
        debug_assert_eq!(self.live, 0);
        self.in_network = vec![0; flows];
    }

    /// Stops counting packets per flow (a partition of a parallel run,
    /// whose packets leave its arena for another's).
    pub fn stop_counting_flows(&mut self) {
        self.in_network = Vec::new();
    }

    /// The flow's packets in the network (`u32::MAX` when not counted: a
    /// flow whose packets are not counted is never known to have none).
    #[inline]
    pub fn in_network(&self, flow: FlowId) -> u32 {
        self.in_network.get(flow.ix()).copied().unwrap_or(u32::MAX)
    }

    /// Shrinks a packet in place (trimming), keeping the live-byte count right.
    #[inline]
    pub fn set_wire(&mut self, id: PktId, wire: u32) {
        let p = &mut self.slots[id.ix()];
        self.live_bytes = self.live_bytes - p.wire as u64 + wire as u64;
        p.wire = wire;
    }

    #[inline]
    pub fn get(&self, id: PktId) -> &Packet {
        &self.slots[id.ix()]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PktId) -> &mut Packet {
        &mut self.slots[id.ix()]
    }

    /// Counts `other`'s live packets as this arena's (the partitions of a
    /// parallel run, joined at its end).
    pub(crate) fn count_live_of(&mut self, other: &PacketArena) {
        self.live += other.live;
        self.live_bytes += other.live_bytes;
    }

    /// Packets and wire bytes currently alive (in queues or on links).
    pub fn live(&self) -> (u64, u64) {
        (self.live, self.live_bytes)
    }

    /// Slots ever allocated: the arena's high-water mark.
    pub fn capacity_used(&self) -> usize {
        self.slots.len()
    }
}

/// A congestion root's rate advice to its contributors, in one 32-bit field:
/// the fair share per contributor in Mb/s (24 bits, 0 = no advice) and the
/// drain factor that the root's queue excess asks for, in 1/255 steps
/// (8 bits). The advised rate is share x drain / 255.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Advice(u32);

impl Advice {
    pub const NONE: Advice = Advice(0);
    const SHARE_MAX: u64 = (1 << 24) - 1;

    /// Encodes a share (at least 1 Mb/s, at most 16.7 Tb/s) and a drain
    /// factor in (0, 1] (at least 1/255).
    pub fn new(share_bps: u64, drain: f64) -> Self {
        let mbps = (share_bps / 1_000_000).clamp(1, Self::SHARE_MAX) as u32;
        let d = (drain * 255.0).round().clamp(1.0, 255.0) as u32;
        Advice(mbps << 8 | d)
    }

    #[inline]
    pub fn is_none(self) -> bool {
        self.0 == 0
    }

    pub fn share_mbps(self) -> u32 {
        self.0 >> 8
    }

    /// The fair share in bits per second, if there is advice.
    pub fn share_bps(self) -> Option<u64> {
        (!self.is_none()).then(|| self.share_mbps() as u64 * 1_000_000)
    }

    /// The drain factor in (0, 1]; 1 without advice.
    pub fn drain(self) -> f64 {
        if self.is_none() {
            1.0
        } else {
            (self.0 & 0xff) as f64 / 255.0
        }
    }

    /// The advised rate in bits per second (0 = none).
    pub fn bps(self) -> u64 {
        self.share_mbps() as u64 * 1_000_000 * (self.0 & 0xff) as u64 / 255
    }

    /// Of two pieces of advice, the one with the lower advised rate.
    #[inline]
    pub fn lower(self, other: Advice) -> Advice {
        let product = |a: Advice| a.share_mbps() as u64 * (a.0 & 0xff) as u64;
        match (self.is_none(), other.is_none()) {
            (true, _) => other,
            (_, true) => self,
            _ if product(other) < product(self) => other,
            _ => self,
        }
    }
}

/// Signal state carried by one packet (data: as written by switches; ACK/NACK:
/// as reflected by the receiver).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Signals {
    /// CSIG: type, encoded value, locator metadata, do-not-update bit, and the
    /// exact (egress port) writer kept out of band for analysis.
    pub csig_type: u8,
    pub csig_d: bool,
    pub csig_lm: u16,
    pub csig_value: u32,
    pub csig_writer: u32,
    /// Queue stamps: hops stamped, and MAX, SUM, sum of squares of the quantized values.
    pub stamp_hops: u8,
    pub stamp_max: u64,
    pub stamp_sum: u64,
    pub stamp_sumsq: f64,
}

/// No CSIG tag on the packet.
pub const NO_TAG: u8 = u8::MAX;
/// No writer: the tag still holds the sender's initial value.
pub const NO_WRITER: u32 = u32::MAX;

impl Default for Signals {
    fn default() -> Self {
        Signals {
            csig_type: NO_TAG,
            csig_d: false,
            csig_lm: 0,
            csig_value: 0,
            csig_writer: NO_WRITER,
            stamp_hops: 0,
            stamp_max: 0,
            stamp_sum: 0,
            stamp_sumsq: 0.0,
        }
    }
}

/// Most hops a stack can hold.
pub const MAX_HOPS: usize = 8;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntHop {
    pub ts_ps: u64,
    pub tx_bytes: u64,
    pub qlen_bytes: u64,
    pub rate_bps: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntStack {
    pub n: u8,
    /// 0: exact records; else quantized records with this unit multiplier
    /// (see `signal::int`).
    pub multi: u8,
    pub hops: [IntHop; MAX_HOPS],
}

impl IntStack {
    #[inline]
    pub fn push(&mut self, h: IntHop, max: u8) -> bool {
        if self.n >= max {
            return false;
        }
        self.hops[self.n as usize] = h;
        self.n += 1;
        true
    }
    pub fn hops(&self) -> &[IntHop] {
        &self.hops[..self.n as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_stays_within_one_cache_line() {
        assert!(std::mem::size_of::<Packet>() <= 64, "{}", std::mem::size_of::<Packet>());
    }

    /// `next_slot(n)` names the slot the `n`-th next allocation fills,
    /// while freed slots remain; none beyond them (a new slot is pushed).
    #[test]
    fn next_slot_is_the_slot_later_allocations_fill() {
        let mut a = PacketArena::new();
        let ids: Vec<PktId> = (0..6).map(|i| a.alloc(Packet { wire: 100 + i, ..Default::default() })).collect();
        for &i in &[ids[4], ids[1], ids[3]] {
            a.free(i);
        }
        let ahead: Vec<*const Packet> = (0..3).map(|n| a.next_slot(n).expect("a freed slot") as *const Packet).collect();
        assert!(a.next_slot(3).is_none());
        for (n, want) in ahead.into_iter().enumerate() {
            let got = a.alloc(Packet { wire: 1, ..Default::default() });
            assert!(std::ptr::eq(a.get(got), want), "allocation {n}");
        }
        assert_eq!(a.alloc(Packet::default()), PktId(6), "past the freed slots, a new one");
    }

    /// A reflection gives the new packet exactly the freed packet's live
    /// hops and head, whether it took the freed slot or one below or above
    /// it, and whatever the new slot held before.
    #[test]
    fn reflect_int_gives_the_freed_stack_in_any_slot() {
        let hop = |i: u64| IntHop { ts_ps: i, tx_bytes: 10 * i, qlen_bytes: 100 * i, rate_bps: 1000 * i };
        for reuse in [false, true] {
            for data_ix in [0usize, 2] {
                let mut a = PacketArena::with_signals(true, true);
                let ids: Vec<PktId> = (0..3).map(|_| a.alloc(Packet::default())).collect();
                // Stale hops in every slot, the data packet's three live ones.
                for &id in &ids {
                    for i in 0..MAX_HOPS {
                        a.int_mut(id).hops[i] = hop(900 + i as u64);
                    }
                }
                let data = ids[data_ix];
                let s = a.int_mut(data);
                (s.n, s.multi) = (0, 7);
                for i in 1..=3 {
                    assert!(s.push(hop(i), MAX_HOPS as u8));
                }
                let head = a.int_head(data);
                let other = ids[1];
                a.free(data);
                if !reuse {
                    a.free(other);
                }
                let ack = a.alloc(Packet::default());
                assert_eq!(ack == data, reuse, "freed slots are reused last in, first out");
                a.reflect_int(data, head, ack);
                let got = a.int(ack);
                assert_eq!((got.n, got.multi), (3, 7));
                assert_eq!(got.hops(), &[hop(1), hop(2), hop(3)], "reuse {reuse}, data slot {data_ix}");
            }
        }
    }

    #[test]
    fn advice_encodes_share_and_drain_and_keeps_the_lower() {
        let a = Advice::new(25_000_000_000, 0.5);
        assert_eq!((a.share_mbps(), a.share_bps(), a.bps()), (25_000, Some(25_000_000_000), 25_000_000_000 * 128 / 255));
        assert!((a.drain() - 128.0 / 255.0).abs() < 1e-12);
        assert_eq!((Advice::NONE.share_bps(), Advice::NONE.drain(), Advice::NONE.bps()), (None, 1.0, 0));
        // Saturation: below 1 Mb/s and above 2^24 - 1 Mb/s; drain at least 1/255.
        assert_eq!(Advice::new(10, 0.0).share_mbps(), 1);
        assert_eq!(Advice::new(u64::MAX, 1.0).share_mbps(), (1 << 24) - 1);
        assert_eq!(Advice::new(1_000_000, 0.0).bps(), 1_000_000 / 255);
        let b = Advice::new(40_000_000_000, 0.25);
        assert_eq!(a.lower(b), b, "10 G advised beats 12.5 G");
        assert_eq!(b.lower(a), b);
        assert_eq!(Advice::NONE.lower(a), a);
        assert_eq!(a.lower(Advice::NONE), a);
    }
}
