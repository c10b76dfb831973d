//! Every flow's record, and the full state of the flows in progress.
//!
//! A flow's full state ([`Flow`]: its sender, receiver and controller, a
//! kilobyte) is built when the flow is first touched (its start, or in a
//! parallel run the first packet at its receiver's partition), and retired
//! when nothing of the flow can act again: its sender has every ACK, its
//! receiver every packet and owes no ACK, no timer of it is live, its NIC
//! has dropped it from its ring and none of its packets is in the network.
//! Its counters then go to its [`FlowRecord`], and its place in the store
//! to the next flow that starts. A collective of millions of short flows
//! thus holds the flows in progress, not every flow of the run.
//!
//! The records are kept packed (88 bytes a flow, [`Packed`]): what every
//! flow of a path shares (its base RTT, hops and NIC rate) once per path
//! class, the rare rate caps and decision counts beside, the per-flow
//! counters in 32 bits (they saturate at 2^32 - 1 packets of one flow). A
//! collective of 2 million flows holds 185 MB of records where the
//! [`FlowRecord`]s it reads them as would take 420 MB.
//!
//! Retiring changes nothing a run does: what a retired flow would have done
//! with an event is nothing (see [`FlowStore::retirable`]). A parallel run
//! does not retire (a partition cannot see the packets of its flows in
//! other partitions), and keeps its flows' states until the partitions are
//! joined.

use super::flow::{Flow, FlowBuild, FlowInit, FlowShared};
use crate::cc::FlowParams;
use crate::id::{FlowId, HostId};
use std::ops::{Index, IndexMut};

/// One flow: what it is (kept from the scenario) and what came of it (the
/// counters of its state, copied when the state is retired; while the flow
/// is in progress, [`FlowStore::record`] reads them from its state).
#[derive(Clone, Debug, PartialEq)]
pub struct FlowRecord {
    pub id: FlowId,
    pub src: HostId,
    pub dst: HostId,
    /// Payload bytes (a connection of several queue pairs sets its parts'
    /// sizes when the message starts).
    pub size: u64,
    pub npkts: u32,
    /// Payload bytes a packet carries at most.
    pub mss: u32,
    /// The scheduled start until the flow starts, then its start.
    pub start_ps: u64,
    pub started: bool,
    /// When the receiver had every packet.
    pub finish_ps: Option<u64>,
    /// When the sender had every packet acknowledged.
    pub sender_done_ps: Option<u64>,
    /// Packets the receiver has in order.
    pub rcv_nxt: u32,
    pub entropy: u32,
    pub base_rtt_ps: u64,
    pub bytes_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub nacks: u64,
    pub trims: u64,
    pub ce_marks: u64,
    pub cnps: u64,
    /// The controller's decision counts, if it counts them (taken from
    /// the state with the other sender counters; None before the flow starts).
    pub decisions: Option<crate::cc::Decisions>,
    /// Sent and not yet acknowledged (only ever true of a flow in progress).
    pub in_flight: bool,
    /// Sending-rate cap from the scenario (u64::MAX: none).
    rate_cap: u64,
    /// The rate of the sender's NIC and the hops of the path, for its
    /// controller.
    line_rate_bps: u64,
    hops: u32,
}

impl FlowRecord {
    /// A flow not yet started. `entropy` is the flow's ECMP entropy,
    /// `line_rate_bps` its sender NIC's rate and `hops` its path's links.
    #[allow(clippy::too_many_arguments)]
    pub fn new(id: FlowId, f: &FlowInit, mss: u32, entropy: u32, base_rtt_ps: u64, line_rate_bps: u64, hops: u32) -> FlowRecord {
        FlowRecord {
            id,
            src: f.src,
            dst: f.dst,
            size: f.size,
            npkts: f.size.div_ceil(mss as u64) as u32,
            mss,
            start_ps: f.start_ps,
            started: false,
            finish_ps: None,
            sender_done_ps: None,
            rcv_nxt: 0,
            entropy,
            base_rtt_ps,
            bytes_sent: 0,
            retransmits: 0,
            timeouts: 0,
            nacks: 0,
            trims: 0,
            ce_marks: 0,
            cnps: 0,
            decisions: None,
            in_flight: false,
            rate_cap: f.rate_cap,
            line_rate_bps,
            hops,
        }
    }

    /// The sending-rate cap from the scenario in bits/s (u64::MAX: none).
    pub fn rate_cap(&self) -> u64 {
        self.rate_cap
    }

    /// Payload bytes the receiver has in order.
    pub fn delivered_bytes(&self) -> u64 {
        (self.rcv_nxt as u64 * self.mss as u64).min(self.size)
    }

    /// Payload bytes of packet `psn`.
    pub fn payload(&self, psn: u32) -> u32 {
        super::flow::payload_of(self.size, self.mss, psn)
    }

    /// Takes the receiver's counters from `r`, the record of the flow in
    /// its receiver's partition: a parallel run keeps a flow's sender in
    /// its source's partition and its receiver in its destination's.
    /// Everything else is the sender's (its start, its timers, its
    /// controller and counters).
    fn take_receiver(&mut self, r: &FlowRecord) {
        self.rcv_nxt = r.rcv_nxt;
        self.finish_ps = r.finish_ps;
        self.ce_marks = r.ce_marks;
        self.cnps = r.cnps;
        self.nacks = r.nacks;
        self.trims = r.trims;
    }

    /// Takes what came of the flow from its state.
    fn take_outcome(&mut self, f: &Flow) {
        self.size = f.size;
        self.npkts = f.npkts;
        self.start_ps = f.start_ps;
        self.started = f.started;
        self.finish_ps = f.finish_ps;
        self.sender_done_ps = f.sender_done_ps;
        self.rcv_nxt = f.rcv_nxt;
        self.entropy = f.entropy;
        self.bytes_sent = f.bytes_sent;
        self.retransmits = f.retransmits;
        self.timeouts = f.timeouts;
        self.nacks = f.nacks;
        self.trims = f.trims;
        self.ce_marks = f.ce_marks;
        self.cnps = f.cnps;
        self.decisions = crate::cc::CongestionControl::decisions(&f.cc);
        self.in_flight = f.snd_nxt.max(f.high_sent) > f.snd_una;
    }
}

/// `slot` of a flow whose state was never built.
const UNBORN: u32 = u32::MAX;
/// `slot` of a flow whose state was retired.
const RETIRED: u32 = u32::MAX - 1;

/// A time that is not there ([`Packed`]'s `finish_ps` and `sender_done_ps`).
const NO_TIME: u64 = u64::MAX;
/// `Packed::decisions` of a flow whose controller counts none.
const NO_DECISIONS: u32 = u32::MAX;
/// `Packed::class_flags`: the flow has started; its data is in flight; the
/// rest is the path class.
const STARTED: u32 = 1 << 31;
const IN_FLIGHT: u32 = 1 << 30;
const CLASS: u32 = IN_FLIGHT - 1;

/// A [`FlowRecord`] as the store keeps it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Packed {
    size: u64,
    start_ps: u64,
    finish_ps: u64,
    sender_done_ps: u64,
    bytes_sent: u64,
    src: HostId,
    dst: HostId,
    rcv_nxt: u32,
    entropy: u32,
    class_flags: u32,
    /// Index into [`FlowStore::decisions`], or [`NO_DECISIONS`].
    decisions: u32,
    retransmits: u32,
    timeouts: u32,
    nacks: u32,
    trims: u32,
    ce_marks: u32,
    cnps: u32,
}

/// What the flows of one path share: a [`FlowRecord`]'s base RTT, hops and
/// sender NIC rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct PathClass {
    base_rtt_ps: u64,
    line_rate_bps: u64,
    hops: u32,
}

/// A counter in 32 bits, saturated.
fn sat(v: u64) -> u32 {
    v.min(u32::MAX as u64) as u32
}

fn time(t: Option<u64>) -> u64 {
    t.unwrap_or(NO_TIME)
}

fn opt_time(t: u64) -> Option<u64> {
    (t != NO_TIME).then_some(t)
}

/// Every flow's record and the states of the flows in progress, indexed by
/// flow id (indexing a flow with no state panics: see [`FlowStore::state`]).
#[derive(Debug)]
pub struct FlowStore {
    records: Vec<Packed>,
    /// Payload bytes a packet carries at most (every flow's `mss`).
    mss: u32,
    classes: Vec<PathClass>,
    class_of: std::collections::HashMap<PathClass, u32>,
    /// The flows with a rate cap, by flow id, and their caps.
    rate_caps: Vec<(FlowId, u64)>,
    /// The decision counts of the flows whose controllers count them.
    decisions: Vec<crate::cc::Decisions>,
    /// Per flow: its state's place in `live`, or [`UNBORN`] or [`RETIRED`].
    slot: Vec<u32>,
    live: Vec<Flow>,
    /// Places in `live` whose flows were retired.
    free: Vec<u32>,
    build: FlowBuild,
    retire: bool,
    /// The most states held at once, and the states retired.
    peak_live: usize,
    retired: usize,
}

impl FlowStore {
    /// The flows of a run, none started; states are retired unless
    /// [`FlowStore::keep_states`] is called.
    pub fn new(records: Vec<FlowRecord>, build: FlowBuild) -> FlowStore {
        let mut s = FlowStore::with_capacity(records.len(), build);
        for r in &records {
            s.push(r);
        }
        s
    }

    /// A store with room for `n` flows and none yet: [`FlowStore::push`]
    /// adds them in id order, none started.
    pub fn with_capacity(n: usize, build: FlowBuild) -> FlowStore {
        FlowStore {
            records: Vec::with_capacity(n),
            mss: 0,
            classes: Vec::new(),
            class_of: Default::default(),
            rate_caps: Vec::new(),
            decisions: Vec::new(),
            slot: Vec::with_capacity(n),
            live: Vec::new(),
            free: Vec::new(),
            build,
            retire: true,
            peak_live: 0,
            retired: 0,
        }
    }

    /// Adds the next flow.
    pub fn push(&mut self, r: &FlowRecord) {
        debug_assert!(r.id.ix() == self.records.len() && (self.mss == 0 || self.mss == r.mss));
        self.mss = r.mss;
        if r.rate_cap != u64::MAX {
            self.rate_caps.push((r.id, r.rate_cap));
        }
        // Written whole by `pack`, which reads only its class and its decision counts' place.
        self.records.push(Packed { decisions: NO_DECISIONS, ..Default::default() });
        self.slot.push(UNBORN);
        self.pack(r);
    }

    /// The class of a path, added if new.
    fn class(&mut self, c: PathClass) -> u32 {
        if let Some(&k) = self.class_of.get(&c) {
            return k;
        }
        let k = self.classes.len() as u32;
        assert!(k < CLASS, "more path classes than a record can name");
        self.classes.push(c);
        self.class_of.insert(c, k);
        k
    }

    /// Writes `r` into its packed record (its rate cap stays as pushed).
    fn pack(&mut self, r: &FlowRecord) {
        let c = PathClass { base_rtt_ps: r.base_rtt_ps, line_rate_bps: r.line_rate_bps, hops: r.hops };
        // A record packed again (a flow retired) keeps its class unlooked-up.
        let had = self.records[r.id.ix()].class_flags & CLASS;
        let class = if self.classes.get(had as usize) == Some(&c) { had } else { self.class(c) };
        let mut decisions = self.records[r.id.ix()].decisions;
        if let Some(d) = r.decisions {
            if decisions == NO_DECISIONS {
                decisions = self.decisions.len() as u32;
                self.decisions.push(d);
            }
            self.decisions[decisions as usize] = d;
        }
        debug_assert!(r.mss == self.mss && r.npkts == r.size.div_ceil(self.mss as u64) as u32, "flow {}", r.id);
        self.records[r.id.ix()] = Packed {
            size: r.size,
            start_ps: r.start_ps,
            finish_ps: time(r.finish_ps),
            sender_done_ps: time(r.sender_done_ps),
            bytes_sent: r.bytes_sent,
            src: r.src,
            dst: r.dst,
            rcv_nxt: r.rcv_nxt,
            entropy: r.entropy,
            class_flags: class | if r.started { STARTED } else { 0 } | if r.in_flight { IN_FLIGHT } else { 0 },
            decisions,
            retransmits: sat(r.retransmits),
            timeouts: sat(r.timeouts),
            nacks: sat(r.nacks),
            trims: sat(r.trims),
            ce_marks: sat(r.ce_marks),
            cnps: sat(r.cnps),
        };
    }

    /// The stored record of flow `id`, unpacked.
    fn unpack(&self, id: FlowId) -> FlowRecord {
        let p = &self.records[id.ix()];
        let c = self.classes[(p.class_flags & CLASS) as usize];
        let rate_cap = match self.rate_caps.binary_search_by_key(&id, |r| r.0) {
            Ok(i) => self.rate_caps[i].1,
            Err(_) => u64::MAX,
        };
        FlowRecord {
            id,
            src: p.src,
            dst: p.dst,
            size: p.size,
            npkts: p.size.div_ceil(self.mss as u64) as u32,
            mss: self.mss,
            start_ps: p.start_ps,
            started: p.class_flags & STARTED != 0,
            finish_ps: opt_time(p.finish_ps),
            sender_done_ps: opt_time(p.sender_done_ps),
            rcv_nxt: p.rcv_nxt,
            entropy: p.entropy,
            base_rtt_ps: c.base_rtt_ps,
            bytes_sent: p.bytes_sent,
            retransmits: p.retransmits as u64,
            timeouts: p.timeouts as u64,
            nacks: p.nacks as u64,
            trims: p.trims as u64,
            ce_marks: p.ce_marks as u64,
            cnps: p.cnps as u64,
            decisions: (p.decisions != NO_DECISIONS).then(|| self.decisions[p.decisions as usize]),
            in_flight: p.class_flags & IN_FLIGHT != 0,
            rate_cap,
            line_rate_bps: c.line_rate_bps,
            hops: c.hops,
        }
    }

    /// Keeps every state built until the end of the run (a partition of a
    /// parallel run).
    pub fn keep_states(&mut self) {
        self.retire = false;
    }

    /// Makes room for `n` states at once, so that the store never grows
    /// by copying (a copy of a gigabyte of states while the old one is
    /// held): for a store that keeps states and knows how many it may build.
    pub fn reserve_states(&mut self, n: usize) {
        self.live.reserve_exact(n.saturating_sub(self.live.len()));
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// States held now (built and not retired).
    pub fn live(&self) -> usize {
        self.live.len() - self.free.len()
    }

    /// The most states held at once so far.
    pub fn peak_live(&self) -> usize {
        self.peak_live
    }

    /// States retired so far.
    pub fn retired(&self) -> usize {
        self.retired
    }

    /// What the flow is and what came of it so far.
    pub fn record(&self, id: FlowId) -> FlowRecord {
        let mut r = self.unpack(id);
        if let Some(f) = self.get(id) {
            r.take_outcome(f);
        }
        r
    }

    /// Every flow's [`FlowRecord`], in flow order.
    pub fn records(&self) -> impl ExactSizeIterator<Item = FlowRecord> + '_ {
        (0..self.records.len()).map(|i| self.record(FlowId(i as u32)))
    }

    /// The flow's stored record, read without touching its state: what
    /// the scenario gave (its hosts, its size as a connection set it, its
    /// scheduled start) and, only once the state is retired, what came of
    /// it ([`FlowStore::record`] reads a state in progress).
    pub fn spec(&self, id: FlowId) -> FlowRecord {
        self.unpack(id)
    }

    /// The flow's sending host.
    #[inline]
    pub fn src(&self, id: FlowId) -> HostId {
        self.records[id.ix()].src
    }

    /// The flow's receiving host.
    #[inline]
    pub fn dst(&self, id: FlowId) -> HostId {
        self.records[id.ix()].dst
    }

    /// Whether the flow has started (read without touching its state, as
    /// [`FlowStore::spec`]).
    pub fn started(&self, id: FlowId) -> bool {
        self.records[id.ix()].class_flags & STARTED != 0
    }

    /// The flow's stored record, to write what came of it where no state
    /// is kept (the flow-level engine): packed again when the guard goes.
    pub(crate) fn record_mut(&mut self, id: FlowId) -> RecordMut<'_> {
        let r = self.unpack(id);
        RecordMut { store: self, r }
    }

    /// The flow's state, if it has one now.
    #[inline]
    pub fn get(&self, id: FlowId) -> Option<&Flow> {
        self.live.get(*self.slot.get(id.ix())? as usize)
    }

    /// The flow's state, if it has one now.
    #[inline]
    pub fn get_mut(&mut self, id: FlowId) -> Option<&mut Flow> {
        self.live.get_mut(self.slot[id.ix()] as usize)
    }

    /// Has the flow's state been retired?
    pub fn is_retired(&self, id: FlowId) -> bool {
        self.slot[id.ix()] == RETIRED
    }

    /// The states held now, in no particular order.
    pub fn states(&self) -> impl Iterator<Item = &Flow> + '_ {
        self.slot.iter().filter_map(|&s| self.live.get(s as usize))
    }

    /// The flow's state, built if it has none yet. A retired flow's state is
    /// not built again: nothing of it is left to act (debug builds check).
    #[inline]
    pub fn state(&mut self, id: FlowId, sh: &FlowShared) -> &mut Flow {
        let mut s = self.slot[id.ix()];
        debug_assert_ne!(s, RETIRED, "flow {id} acts after it was retired");
        if s == UNBORN {
            s = self.build_in_place(id, sh);
        }
        &mut self.live[s as usize]
    }

    /// Builds the flow's state in a free place; returns the place.
    #[cold]
    #[inline(never)]
    fn build_in_place(&mut self, id: FlowId, sh: &FlowShared) -> u32 {
        let f = self.build_state(id, sh);
        self.put(id, Some(f));
        self.peak_live = self.peak_live.max(self.live());
        self.slot[id.ix()]
    }

    /// A new state for the flow, as it was before it started.
    fn build_state(&self, id: FlowId, sh: &FlowShared) -> Flow {
        let r = &self.unpack(id);
        let params = FlowParams {
            line_rate_bps: r.line_rate_bps,
            base_rtt_ps: r.base_rtt_ps,
            mss: sh.t.mtu,
            packet_bytes: self.build.packet_bytes,
            hops: r.hops,
        };
        let init = FlowInit { src: r.src, dst: r.dst, size: r.size, start_ps: r.start_ps, rate_cap: r.rate_cap, name: "" };
        Flow::new(id, &init, &sh.t, &self.build, &params, r.entropy)
    }

    /// Sets the size of a flow not yet started (its state's too, if built).
    pub fn set_size(&mut self, id: FlowId, size: u64) {
        let r = &mut self.records[id.ix()];
        debug_assert!(r.class_flags & STARTED == 0 && size <= r.size);
        r.size = size;
        if let Some(s) = self.live.get_mut(self.slot[id.ix()] as usize) {
            s.set_size(size);
        }
    }

    /// Sets a flow's entropy (before the run).
    pub fn set_entropy(&mut self, id: FlowId, entropy: u32) {
        self.records[id.ix()].entropy = entropy;
        if let Some(s) = self.live.get_mut(self.slot[id.ix()] as usize) {
            s.entropy = entropy;
        }
    }

    /// Can the flow's state go? Only when nothing could reach it again and
    /// find anything to do: its sender is done and its receiver finished
    /// (so neither sends again), its receiver owes no ACK (so an `AckTimer`
    /// finds `ack_at` unset and is stale), no controller timer is due (so a
    /// `CcTimer` finds `cc_timer_at` unset and is stale; an `FlowTimer` of
    /// a sender that is done is stale as well), its NIC has taken it off the
    /// ring, and `in_network`, the packets of the flow still in the network,
    /// is 0 (so no packet arrives for it).
    pub fn retirable(f: &Flow, in_network: u32) -> bool {
        f.sender_done_ps.is_some()
            && f.finish_ps.is_some()
            && f.pending_acks == 0
            && f.ack_at == u64::MAX
            && f.cc_timer_at == u64::MAX
            && !f.in_ring
            && in_network == 0
    }

    /// Retires the flow's state if [`FlowStore::retirable`] (and this store
    /// retires): its counters go to its record.
    #[inline]
    pub fn retire_if_over(&mut self, id: FlowId, in_network: u32) {
        if !self.retire {
            return;
        }
        let s = self.slot[id.ix()];
        let Some(f) = self.live.get(s as usize) else { return };
        if !Self::retirable(f, in_network) {
            return;
        }
        let mut r = self.unpack(id);
        r.take_outcome(f);
        self.pack(&r);
        self.slot[id.ix()] = RETIRED;
        self.free.push(s);
        self.retired += 1;
    }

    /// The flows of a parallel run's partitions joined into one store, to
    /// read the outputs from: each flow's record from its sender's
    /// partition (`sender[f]`), with the receiver's counters from its
    /// receiver's (`receiver[f]`). The joined store holds no state.
    pub(crate) fn joined(parts: &[&FlowStore], sender: &[u32], receiver: &[u32]) -> FlowStore {
        let mut joined = FlowStore::with_capacity(parts[0].len(), parts[0].build.clone());
        joined.retire = false;
        for f in 0..parts[0].len() {
            let id = FlowId(f as u32);
            let (s, d) = (sender[f] as usize, receiver[f] as usize);
            let mut r = parts[s].record(id);
            if d != s {
                r.take_receiver(&parts[d].record(id));
            }
            joined.push(&r);
        }
        joined
    }

    /// The earliest start of a flow that has started and not finished.
    pub fn first_unfinished_start(&self) -> Option<u64> {
        if self.retire {
            // A flow that has started and not finished has its state.
            return self.states().filter(|f| f.started && f.finish_ps.is_none()).map(|f| f.start_ps).min();
        }
        self.records().filter(|f| f.started && f.finish_ps.is_none()).map(|f| f.start_ps).min()
    }

    fn put(&mut self, id: FlowId, f: Option<Flow>) {
        let Some(f) = f else { return };
        let s = match self.free.pop() {
            Some(s) => {
                self.live[s as usize] = f;
                s
            }
            None => {
                self.live.push(f);
                (self.live.len() - 1) as u32
            }
        };
        self.slot[id.ix()] = s;
    }

    /// Counts the flows whose receiver has every packet.
    pub fn count_finished(&self) -> usize {
        (0..self.records.len()).filter(|&i| self.record(FlowId(i as u32)).finish_ps.is_some()).count()
    }
}

impl Index<FlowId> for FlowStore {
    type Output = Flow;
    /// The state of a flow in progress.
    #[inline]
    fn index(&self, id: FlowId) -> &Flow {
        &self.live[self.slot[id.ix()] as usize]
    }
}

impl IndexMut<FlowId> for FlowStore {
    #[inline]
    fn index_mut(&mut self, id: FlowId) -> &mut Flow {
        &mut self.live[self.slot[id.ix()] as usize]
    }
}

/// A flow's record to change ([`FlowStore::record_mut`]), packed back into
/// the store when it goes.
pub(crate) struct RecordMut<'s> {
    store: &'s mut FlowStore,
    r: FlowRecord,
}

impl std::ops::Deref for RecordMut<'_> {
    type Target = FlowRecord;
    fn deref(&self) -> &FlowRecord {
        &self.r
    }
}

impl std::ops::DerefMut for RecordMut<'_> {
    fn deref_mut(&mut self) -> &mut FlowRecord {
        &mut self.r
    }
}

impl Drop for RecordMut<'_> {
    fn drop(&mut self) {
        // The flow-level engine moves no packets: its npkts follows its size.
        self.r.npkts = self.r.size.div_ceil(self.r.mss as u64) as u32;
        self.store.pack(&self.r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{PacketKind, Signals};
    use crate::transport::config::TransportConfig;
    use crate::transport::flow::{AckOutcome, RxAction, SendCheck};

    const RATE: u64 = 100_000_000_000;

    /// `n` flows of two 1000-byte packets from host 0 to host 1.
    fn store(n: u32) -> (FlowStore, FlowShared) {
        let t = TransportConfig { mtu: 1000, ..Default::default() };
        let init = FlowInit { src: HostId(0), dst: HostId(1), size: 2000, start_ps: 0, rate_cap: u64::MAX, name: "" };
        let records = (0..n).map(|i| FlowRecord::new(FlowId(i), &init, t.mtu, 7, 10_000_000, RATE, 2)).collect();
        let build = FlowBuild::new(&t, 1064, 1);
        (FlowStore::new(records, build), FlowShared { t, csig: None, stamp: None, tag_bytes: 0, int_bytes: 0 })
    }

    /// Runs flow `id` of `s` to its end: both packets sent, received, and
    /// their ACKs applied (the last at 5 us).
    fn run_to_the_end(s: &mut FlowStore, sh: &FlowShared, id: FlowId) {
        let f = s.state(id, sh);
        assert!(!f.start(0));
        let mut acks = Vec::new();
        for now in [0, 100] {
            let SendCheck::Send(psn, rtx) = f.check_send(now) else { panic!("sends") };
            let p = f.send(now, psn, rtx, RATE, sh).packet;
            f.on_data(now + 1_000, &p, &Signals::default(), false, sh, &mut acks);
        }
        assert_eq!(f.finish_ps, Some(1_100));
        for (i, a) in acks.drain(..).enumerate() {
            let RxAction::Send(ack, _) = a else { panic!("ACKs at once") };
            assert_eq!(ack.kind, PacketKind::Ack);
            let now = 4_000 + 1_000 * i as u64;
            assert!(matches!(f.on_ack(now, &ack, &Signals::default(), None, sh), AckOutcome::Applied { .. }));
        }
        assert_eq!(f.sender_done_ps, Some(5_000));
    }

    #[test]
    fn a_state_is_built_at_first_touch_as_the_record_says() {
        let (mut s, sh) = store(3);
        assert!(s.get(FlowId(1)).is_none());
        s.set_size(FlowId(1), 1500);
        let f = s.state(FlowId(1), &sh);
        assert_eq!((f.id, f.size, f.npkts, f.entropy, f.base_rtt_ps), (FlowId(1), 1500, 2, 7, 10_000_000));
        assert_eq!((s.live(), s.peak_live()), (1, 1));
        // The record reads the state while there is one.
        s.state(FlowId(1), &sh).start(42);
        assert_eq!((s.record(FlowId(1)).start_ps, s.record(FlowId(1)).started), (42, true));
        assert!(!s.record(FlowId(0)).started);
    }

    #[test]
    fn a_flow_is_retired_only_once_nothing_of_it_can_act() {
        let (mut s, sh) = store(2);
        let id = FlowId(0);
        // Not over: the sender still waits for its ACKs.
        s.state(id, &sh).start(0);
        s.retire_if_over(id, 0);
        assert!(s.get(id).is_some());
        let (mut s, sh) = store(2);
        run_to_the_end(&mut s, &sh, id);
        // Over, but one of its packets is in the network, its NIC still
        // has it on the ring, or its controller's timer is due.
        s.retire_if_over(id, 1);
        assert!(s.get(id).is_some());
        s[id].in_ring = true;
        s.retire_if_over(id, 0);
        assert!(s.get(id).is_some());
        s[id].in_ring = false;
        s[id].cc_timer_at = 9_000;
        s.retire_if_over(id, 0);
        assert!(s.get(id).is_some());
        s[id].cc_timer_at = u64::MAX;
        s.retire_if_over(id, 0);
        assert!(s.is_retired(id) && s.get(id).is_none());
        assert_eq!((s.live(), s.retired()), (0, 1));
        // Its record keeps what came of it (bytes sent on the wire, with
        // the 64-byte header).
        let r = s.record(id);
        assert_eq!((r.finish_ps, r.sender_done_ps, r.rcv_nxt, r.bytes_sent, r.delivered_bytes()), (Some(1_100), Some(5_000), 2, 2 * 1064, 2000));
        assert!(!r.in_flight);
        // The next flow takes its place.
        s.state(FlowId(1), &sh);
        assert_eq!((s.live(), s.peak_live(), s.live.len()), (1, 1, 1));
    }

    /// Every field of a record reads back as written; the flows of one
    /// path share one class; counters past 32 bits saturate.
    #[test]
    fn a_packed_record_reads_back_as_written() {
        let t = TransportConfig { mtu: 1000, ..Default::default() };
        let mut s = FlowStore::with_capacity(4, FlowBuild::new(&t, 1064, 1));
        let mut rs = Vec::new();
        for i in 0..4u32 {
            let init = FlowInit { src: HostId(i), dst: HostId(9 - i), size: 2500 + i as u64, start_ps: 7 * i as u64, rate_cap: if i == 2 { 40_000_000_000 } else { u64::MAX }, name: "" };
            // Flows 0 and 1 share a path class, 2 and 3 another.
            let r = FlowRecord::new(FlowId(i), &init, t.mtu, 11 * i, 10_000 + 5_000 * (i as u64 / 2), RATE, 2 + i / 2);
            s.push(&r);
            rs.push(r);
        }
        assert_eq!(s.classes.len(), 2);
        for r in &rs {
            assert_eq!(&s.record(r.id), r);
            assert_eq!((s.src(r.id), s.dst(r.id), s.started(r.id)), (r.src, r.dst, false));
        }
        let mut done = rs[3].clone();
        done.started = true;
        done.finish_ps = Some(123_456);
        done.sender_done_ps = Some(0);
        done.rcv_nxt = 3;
        done.bytes_sent = u64::MAX - 1;
        (done.retransmits, done.timeouts, done.nacks, done.trims, done.ce_marks, done.cnps) = (1, 2, 3, 4, 5, 6);
        done.decisions = Some(crate::cc::Decisions { fair: 1, proportional: 2, fast: 3, noop: 4, decrease: 5, decrease_applied: 6, quick_adapt: 7, ignored: 8 });
        done.in_flight = true;
        s.pack(&done);
        assert_eq!(s.record(FlowId(3)), done);
        assert_eq!(s.record(FlowId(2)), rs[2], "a neighbour is untouched");
        assert!(s.started(FlowId(3)));
        // A second write of the counts replaces the first, in place.
        done.decisions.as_mut().unwrap().fair = 10;
        done.retransmits = 1 << 40;
        s.pack(&done);
        let back = s.record(FlowId(3));
        assert_eq!((back.decisions.unwrap().fair, s.decisions.len()), (10, 1));
        assert_eq!(back.retransmits, u32::MAX as u64);
        // The guard packs what the flow level writes.
        s.record_mut(FlowId(0)).finish_ps = Some(9);
        assert_eq!(s.record(FlowId(0)).finish_ps, Some(9));
    }

    #[test]
    fn a_store_that_keeps_states_retires_none() {
        let (mut s, sh) = store(1);
        s.keep_states();
        run_to_the_end(&mut s, &sh, FlowId(0));
        s.retire_if_over(FlowId(0), 0);
        assert!(s.get(FlowId(0)).is_some());
        assert_eq!(s.retired(), 0);
    }

    #[test]
    fn the_joined_record_takes_the_receivers_counters_from_its_partition() {
        let (mut sender, sh) = store(1);
        let (mut receiver, _) = store(1);
        let id = FlowId(0);
        sender.keep_states();
        receiver.keep_states();
        run_to_the_end(&mut sender, &sh, id);
        // The sender's partition never saw the data; the receiver's never sent.
        let tx = &mut sender[id];
        (tx.finish_ps, tx.rcv_nxt, tx.ce_marks) = (None, 0, 0);
        let rx = receiver.state(id, &sh);
        (rx.finish_ps, rx.rcv_nxt, rx.ce_marks, rx.cnps) = (Some(1_100), 2, 1, 1);
        let joined = FlowStore::joined(&[&sender, &receiver], &[0], &[1]);
        let r = joined.record(id);
        assert_eq!((r.sender_done_ps, r.bytes_sent, r.started), (Some(5_000), 2 * 1064, true));
        assert_eq!((r.finish_ps, r.rcv_nxt, r.ce_marks, r.cnps), (Some(1_100), 2, 1, 1));
        assert_eq!(joined.count_finished(), 1);
        assert!(joined.get(id).is_none());
    }
}
