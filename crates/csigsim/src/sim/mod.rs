//! The event loop and nothing else: one event enum of ids (queued packed in
//! 8 bytes, [`PackedEvent`]), one queue ordered by (time, owner) (see
//! [`queue`]), the run counters, and the narrow context
//! ([`Ctx`]) that components act through: the time, the queue, the packet
//! arena and the counters. sim/ knows no component: whoever owns the
//! components (the engine's `World`) implements [`Handler`] and [`run`]
//! drives it.
//!
//! A packet's departure from a port schedules its arrival at the next node
//! directly (serialization and propagation folded in), so an unqueued packet
//! costs one event per link; a port with a backlog adds one `TxDone` per
//! packet it sends from the backlog.

pub mod parallel;
pub mod queue;
/// The random streams (a leaf module; re-exported here for the components).
pub use crate::rng;

use crate::id::{FlowId, HostId, PktId, PortId};
use crate::packet::{Packet, PacketArena};
use queue::EventQueue;

/// Everything that happens, as ids. Kept small: the queue moves these around.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A packet has fully arrived at the node that owns `port` (ingress side).
    Arrive { pkt: PktId, port: PortId },
    /// `port` finished serializing and has a backlog to serve.
    TxDone { port: PortId },
    /// A host's NIC may have a paced flow ready.
    NicWake { host: HostId },
    FlowStart { flow: FlowId },
    /// A flow's retransmission timer may be due.
    FlowTimer { flow: FlowId },
    /// A flow's receiver may owe a coalesced ACK.
    AckTimer { flow: FlowId },
    /// A flow's congestion controller asked for a timer.
    CcTimer { flow: FlowId },
    /// A link fails, comes back, or the routes reconverge (`net::failure`).
    LinkChange { change: u32 },
    /// A workload's timer: an operation of a workload's graph (a compute
    /// delay) is over (`workload::dag`).
    AppTimer { op: u32 },
}

/// An [`Event`] in 8 bytes, as the queues keep it: the enum takes 12 (a
/// tag beside two 32-bit ids), and a cache line holds six of these and
/// their times within their block where it held four events.
///
/// An arrival has bit 63 clear, its port in bits 32 to 62 and its packet
/// in bits 0 to 31; every other event has bit 63 set, its kind in bits 32
/// to 35 and its id in bits 0 to 31. A port id is therefore below 2^31
/// ([`MAX_PORTS`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PackedEvent(u64);

/// Ports a network may have, for a port id to fit a [`PackedEvent`].
pub const MAX_PORTS: u64 = 1 << 31;

const NOT_ARRIVAL: u64 = 1 << 63;

/// The kinds of the events other than arrivals (bits 32 to 35), named so
/// that packing, unpacking and [`PackedEvent::tx_done`] read one table.
/// The number is also the kind's rank among the events of one picosecond
/// ([`PackedEvent::owner`]); arrivals take rank [`ARRIVE`]: after the
/// timers and before the transmitters, as they mostly went under
/// insertion order too (an arrival is scheduled a link delay ahead, a
/// `TxDone` one serialization).
const LINK_CHANGE: u64 = 0;
const FLOW_START: u64 = 1;
const FLOW_TIMER: u64 = 2;
const CC_TIMER: u64 = 3;
const ACK_TIMER: u64 = 4;
const APP_TIMER: u64 = 5;
const ARRIVE: u64 = 6;
const NIC_WAKE: u64 = 7;
const TX_DONE: u64 = 8;

impl PackedEvent {
    /// A `TxDone` of port 0: what fills the unused places of the queue's lines.
    pub const FILLER: PackedEvent = PackedEvent(NOT_ARRIVAL | TX_DONE << 32);

    #[inline(always)]
    pub fn new(ev: Event) -> PackedEvent {
        let other = |kind: u64, id: u32| PackedEvent(NOT_ARRIVAL | kind << 32 | id as u64);
        match ev {
            Event::Arrive { pkt, port } => {
                debug_assert!((port.0 as u64) < MAX_PORTS);
                PackedEvent((port.0 as u64) << 32 | pkt.0 as u64)
            }
            Event::TxDone { port } => other(TX_DONE, port.0),
            Event::NicWake { host } => other(NIC_WAKE, host.0),
            Event::FlowStart { flow } => other(FLOW_START, flow.0),
            Event::FlowTimer { flow } => other(FLOW_TIMER, flow.0),
            Event::AckTimer { flow } => other(ACK_TIMER, flow.0),
            Event::CcTimer { flow } => other(CC_TIMER, flow.0),
            Event::LinkChange { change } => other(LINK_CHANGE, change),
            Event::AppTimer { op } => other(APP_TIMER, op),
        }
    }

    #[inline(always)]
    pub fn event(self) -> Event {
        if let Some((pkt, port)) = self.arrival() {
            return Event::Arrive { pkt, port };
        }
        let id = self.0 as u32;
        match (self.0 >> 32) & 0xF {
            TX_DONE => Event::TxDone { port: PortId(id) },
            NIC_WAKE => Event::NicWake { host: HostId(id) },
            FLOW_START => Event::FlowStart { flow: FlowId(id) },
            FLOW_TIMER => Event::FlowTimer { flow: FlowId(id) },
            ACK_TIMER => Event::AckTimer { flow: FlowId(id) },
            CC_TIMER => Event::CcTimer { flow: FlowId(id) },
            LINK_CHANGE => Event::LinkChange { change: id },
            APP_TIMER => Event::AppTimer { op: id },
            _ => unreachable!("no event packs as kind {ARRIVE}"),
        }
    }

    /// The packet and port of an arrival, read without unpacking: the
    /// loop asks this of several events ahead per event it handles.
    #[inline(always)]
    pub fn arrival(self) -> Option<(PktId, PortId)> {
        (self.0 & NOT_ARRIVAL == 0).then_some((PktId(self.0 as u32), PortId((self.0 >> 32) as u32)))
    }

    /// The port of a `TxDone`, read without unpacking.
    #[inline(always)]
    pub fn tx_done(self) -> Option<PortId> {
        (self.0 >> 32 == (NOT_ARRIVAL | TX_DONE << 32) >> 32).then_some(PortId(self.0 as u32))
    }

    /// The event's owner among the events of its picosecond: its kind's
    /// rank (bits 32 to 35) above the entity it belongs to (bits 0 to 31):
    /// an arrival's port (the link it came over carries one packet at a
    /// time, so a port never has two arrivals in one picosecond), a
    /// `TxDone`'s port (at most one pending), a NIC's host, a flow's
    /// timer, a link change. Two different events of one picosecond never
    /// share an owner but for copies of one timer, which act alike in
    /// either order. The packet id is not part of it: it names an arena
    /// slot, which differs between the partitions of a parallel run.
    #[inline(always)]
    pub fn owner(self) -> u64 {
        if self.0 & NOT_ARRIVAL == 0 {
            ARRIVE << 32 | self.0 >> 32
        } else {
            self.0 & 0xF_FFFF_FFFF
        }
    }

    /// The port of an arrival or a `TxDone`, read without unpacking: the
    /// partition an event goes to is mostly its port's.
    #[inline(always)]
    pub fn port(self) -> Option<PortId> {
        if self.0 & NOT_ARRIVAL == 0 {
            Some(PortId((self.0 >> 32) as u32))
        } else {
            self.tx_done()
        }
    }
}

impl std::fmt::Debug for PackedEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        self.event().fmt(f)
    }
}

/// Events a line of the simulation's queue holds: six packed events and
/// their offsets fill 60 of its 64 bytes.
pub const QUEUE_LINE: usize = 6;

/// The simulation's event queue: packed events, six a cache line, four
/// lines a chunk.
pub type SimQueue = EventQueue<PackedEvent, QUEUE_LINE>;

/// Counters for the whole run.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub link_hops: u64,
    pub packets_injected: u64,
    pub bytes_injected: u64,
    pub data_packets_delivered: u64,
    pub packets_delivered: u64,
    pub bytes_delivered: u64,
    pub packets_dropped: u64,
    pub bytes_dropped: u64,
    pub packets_trimmed: u64,
    pub bytes_trimmed: u64,
    pub ecn_marks: u64,
    pub pauses_sent: u64,
    pub resumes_sent: u64,
    pub acks_sent: u64,
    pub nacks_sent: u64,
    pub cnps_sent: u64,
    /// CNPs DCQCN-Rev's enhanced notification point decided not to send.
    pub cnps_suppressed: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub flows_completed: u64,
    /// Bytes of CSIG tags removed by `strip` ports.
    pub bytes_stripped: u64,
    /// Data packets that a go-back-N receiver discarded as out of order.
    pub out_of_order_discards: u64,
}

impl Stats {
    /// Adds `o`'s counts to these (the partitions of a parallel run).
    pub fn add(&mut self, o: &Stats) {
        // Destructured, so that a new counter cannot be left out.
        let Stats {
            link_hops,
            packets_injected,
            bytes_injected,
            data_packets_delivered,
            packets_delivered,
            bytes_delivered,
            packets_dropped,
            bytes_dropped,
            packets_trimmed,
            bytes_trimmed,
            ecn_marks,
            pauses_sent,
            resumes_sent,
            acks_sent,
            nacks_sent,
            cnps_sent,
            cnps_suppressed,
            retransmits,
            timeouts,
            flows_completed,
            bytes_stripped,
            out_of_order_discards,
        } = o;
        self.link_hops += link_hops;
        self.packets_injected += packets_injected;
        self.bytes_injected += bytes_injected;
        self.data_packets_delivered += data_packets_delivered;
        self.packets_delivered += packets_delivered;
        self.bytes_delivered += bytes_delivered;
        self.packets_dropped += packets_dropped;
        self.bytes_dropped += bytes_dropped;
        self.packets_trimmed += packets_trimmed;
        self.bytes_trimmed += bytes_trimmed;
        self.ecn_marks += ecn_marks;
        self.pauses_sent += pauses_sent;
        self.resumes_sent += resumes_sent;
        self.acks_sent += acks_sent;
        self.nacks_sent += nacks_sent;
        self.cnps_sent += cnps_sent;
        self.cnps_suppressed += cnps_suppressed;
        self.retransmits += retransmits;
        self.timeouts += timeouts;
        self.flows_completed += flows_completed;
        self.bytes_stripped += bytes_stripped;
        self.out_of_order_discards += out_of_order_discards;
    }
}

/// What every component may touch: the clock, the event queue, the packet
/// arena and the run counters.
#[derive(Debug)]
pub struct Ctx {
    pub now: u64,
    pub q: SimQueue,
    pub pkts: PacketArena,
    pub stats: Stats,
    /// When a partition of a parallel run handles the event
    /// ([`crate::engine::parallel`]): what it schedules, in the order it
    /// does, packed as queued, for the partition to route; `None` on one
    /// queue.
    pub staged: Option<Vec<(u64, PackedEvent)>>,
    /// With `staged`: events of the partition's queue that the handler
    /// took back ([`Ctx::reschedule`]), with their places, for the
    /// partition to remove.
    pub unstaged: Vec<(u64, PackedEvent, u32)>,
}

impl Ctx {
    pub fn new(pkts: PacketArena) -> Ctx {
        Ctx { now: 0, q: SimQueue::new(), pkts, stats: Stats::default(), staged: None, unstaged: Vec::new() }
    }

    /// Schedules `ev` at `t`. Inlined: it is called for every push.
    #[inline(always)]
    pub fn push(&mut self, t: u64, ev: Event) {
        let ev = PackedEvent::new(ev);
        match &mut self.staged {
            None => self.q.push(t, ev),
            Some(out) => out.push((t, ev)),
        }
    }

    /// As [`Ctx::push`], and where the queue put the event, for
    /// [`Ctx::reschedule`] to find it at once ([`queue::NO_PLACE`] when
    /// the event is staged: a partition's handler records the place when
    /// it queues it).
    #[inline(always)]
    pub fn push_placed(&mut self, t: u64, ev: Event) -> u32 {
        let ev = PackedEvent::new(ev);
        match &mut self.staged {
            None => self.q.push_placed(t, ev),
            Some(out) => {
                out.push((t, ev));
                queue::NO_PLACE
            }
        }
    }

    /// Moves the pending event `ev` from `from`, where it was put at
    /// `place`, to `to`, so that it pops once, at `to`, and not first at
    /// `from` only to be pushed again. Only an event within the wheel's
    /// reach ([`queue::within_reach`]) is moved, a rule of the two times
    /// alone, so that a run on one queue and one on partitions move the
    /// same events and count the same pops. Returns its new place, or None
    /// (nothing moved). The event must be pending at `from`.
    #[inline]
    pub fn reschedule(&mut self, from: u64, to: u64, ev: Event, place: u32) -> Option<u32> {
        if !queue::within_reach(self.now, from) {
            return None;
        }
        let packed = PackedEvent::new(ev);
        match &mut self.staged {
            // Where the queue put it: marked dead there without a read.
            None if place != queue::NO_PLACE => self.q.remove_pending(from, packed, place),
            None => assert!(self.q.remove(from, packed, place), "no {ev:?} pending at {from} ps"),
            // Pushed by this handler, or already in the partition's queue.
            Some(out) => match out.iter().rposition(|&x| x == (from, packed)) {
                Some(i) => {
                    out.remove(i);
                }
                None => self.unstaged.push((from, packed, place)),
            },
        }
        Some(self.push_placed(to, ev))
    }

    /// Allocates a packet and counts it as injected.
    #[inline]
    pub fn inject(&mut self, p: Packet) -> PktId {
        self.stats.packets_injected += 1;
        self.stats.bytes_injected += p.wire as u64;
        self.pkts.alloc(p)
    }

    /// A packet reached its destination and leaves the network.
    #[inline]
    pub fn consume(&mut self, pkt: PktId) {
        self.stats.packets_delivered += 1;
        self.stats.bytes_delivered += self.pkts.get(pkt).wire as u64;
        self.pkts.free(pkt);
    }

    /// A packet was dropped at a switch.
    #[inline]
    pub fn drop_packet(&mut self, pkt: PktId) {
        self.stats.packets_dropped += 1;
        self.stats.bytes_dropped += self.pkts.get(pkt).wire as u64;
        self.pkts.free(pkt);
    }
}

/// How a call to [`run`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunState {
    /// No events remain.
    Idle,
    /// The stop time was reached.
    Stopped,
    /// The event budget of this call ran out; call again to continue.
    Paused,
}

/// The owner of the components: it decides which events are stale and
/// dispatches the others.
pub trait Handler {
    /// A stale event (a timer whose deadline moved or whose flow finished) is
    /// popped without advancing the clock: it is not activity and must not
    /// stretch the simulated time of the run.
    fn is_stale(&mut self, t: u64, ev: Event) -> bool;
    /// Handles one event at `ctx.now`.
    fn handle(&mut self, ctx: &mut Ctx, ev: Event);
    /// Stage `stage` (3, then 2, then 1) of what the loop will handle
    /// `ev`, `stage` times [`Handler::prefetch_spacing`] events after the
    /// current one: the owner may ask the CPU for what `ev` will touch
    /// ([`prefetch`]), the first line at stage 3 and, as the event comes
    /// closer, what each line fetched before leads to. A hint only.
    #[inline]
    fn prefetch(&self, _pkts: &PacketArena, _ev: PackedEvent, _stage: usize) {}
    /// How many events apart the loop runs the stages of
    /// [`Handler::prefetch`] (asked once a run); 0 for none, when the state
    /// fits the caches. Further apart on a larger fabric, whose lines
    /// take longer to arrive.
    fn prefetch_spacing(&self) -> usize {
        0
    }
}

/// How many events ahead the loop prefetches an arrival's packet (1 and
/// 2 measured alike; 1 is the more likely to be still in cache when used).
const PREFETCH_AHEAD: usize = 1;

/// Asks the CPU to bring `x` into the cache; changes nothing else.
#[inline(always)]
pub fn prefetch<T>(x: &T) {
    prefetch_line(x as *const T as *const u8);
}

/// [`prefetch`] for every cache line `x` spans (a value not aligned to a
/// line may span one more than its size in lines).
#[inline(always)]
pub fn prefetch_all<T>(x: &T) {
    let p = x as *const T as *const u8;
    let (start, size) = (p as usize, std::mem::size_of::<T>());
    prefetch_line(p);
    // The start of every later line the value spans (inside the value).
    for line in ((start & !63) + 64..start + size).step_by(64) {
        prefetch_line(p.wrapping_add(line - start));
    }
}

/// Asks the CPU for a packet's signal state and INT stack, when the run
/// carries them: the switch's egress functions and the receiver read them
/// beside the packet.
#[inline(always)]
pub fn prefetch_signals(pkts: &crate::packet::PacketArena, pkt: crate::id::PktId) {
    let (sig, int) = pkts.signal_slots(pkt);
    if let Some(s) = sig {
        prefetch_all(s);
    }
    if let Some(i) = int {
        prefetch_all(i);
    }
}

/// Asks the CPU for the line holding `p`, an address inside a live value.
#[inline(always)]
fn prefetch_line(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint: it reads nothing into the program and
    // cannot fault, and callers pass addresses inside a live reference.
    #[allow(unsafe_code)]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Runs events until the queue is empty, the first event after `stop_ps`
/// (answering `Stopped`, the clock left at the last event handled), or
/// `max_events` events.
pub fn run(ctx: &mut Ctx, stop_ps: Option<u64>, max_events: u64, h: &mut impl Handler) -> RunState {
    let mut budget = max_events;
    let spacing = h.prefetch_spacing();
    while let Some(t) = ctx.q.peek_time() {
        if let Some(stop) = stop_ps {
            if t > stop {
                // The clock stays at the last event: the caller knows whether
                // the run ends at `stop` or only looks around.
                return RunState::Stopped;
            }
        }
        if budget == 0 {
            return RunState::Paused;
        }
        budget -= 1;
        // The packet of the next arrival is usually out of cache on a large
        // fabric (it was written one link delay ago): ask for it now, while
        // this event is handled. The handler's stages, where they run, ask
        // for it earlier (the third stage).
        if spacing == 0 {
            if let Some((pkt, _)) = ctx.q.peek_ahead(PREFETCH_AHEAD).and_then(|p| p.arrival()) {
                prefetch(ctx.pkts.get(pkt));
            }
        } else {
            // Written out stage by stage: a loop over the stages was not
            // unrolled, and each handler's stages then matched on a
            // variable stage.
            let stage = |stage: usize| {
                if let Some(p) = ctx.q.peek_ahead(stage * spacing) {
                    h.prefetch(&ctx.pkts, *p, stage);
                }
            };
            stage(3);
            stage(2);
            stage(1);
        }
        let (t, ev) = ctx.q.pop().expect("peeked");
        let ev = ev.event();
        if h.is_stale(t, ev) {
            continue;
        }
        ctx.now = t;
        h.handle(ctx, ev);
    }
    RunState::Idle
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::HostId;

    /// The stages of [`Handler::prefetch`] that [`run`] shows: 3, 2, 1.
    const HANDLER_STAGES: usize = 3;

    /// Records what the loop handles and which events it shows at which
    /// stage, just before handling each.
    struct Recorder {
        spacing: usize,
        handled: Vec<u32>,
        shown: std::cell::RefCell<Vec<(usize, u32, usize)>>,
    }

    fn host(ev: &Event) -> u32 {
        match *ev {
            Event::NicWake { host } => host.0,
            _ => unreachable!("the test schedules NicWake only"),
        }
    }

    impl Handler for Recorder {
        fn is_stale(&mut self, _t: u64, _ev: Event) -> bool {
            false
        }
        fn handle(&mut self, _ctx: &mut Ctx, ev: Event) {
            self.handled.push(host(&ev));
        }
        fn prefetch(&self, _pkts: &PacketArena, ev: PackedEvent, stage: usize) {
            self.shown.borrow_mut().push((self.handled.len(), host(&ev.event()), stage));
        }
        fn prefetch_spacing(&self) -> usize {
            self.spacing
        }
    }

    /// Every event comes back from its packed form as it went in, and the
    /// packed form's readers agree with the event: ids at both ends of
    /// their range, arrivals up to the last port id.
    #[test]
    fn packed_events_unpack_to_themselves() {
        let port_ids = [0, 1, 0x1234_5678, MAX_PORTS as u32 - 1];
        let ids = [0, 1, 0x8000_0000, u32::MAX - 1, u32::MAX];
        let mut evs = Vec::new();
        for &id in &ids {
            for &port in &port_ids {
                evs.push(Event::Arrive { pkt: PktId(id), port: PortId(port) });
            }
            evs.push(Event::TxDone { port: PortId(id) });
            evs.push(Event::NicWake { host: HostId(id) });
            evs.push(Event::FlowStart { flow: FlowId(id) });
            evs.push(Event::FlowTimer { flow: FlowId(id) });
            evs.push(Event::AckTimer { flow: FlowId(id) });
            evs.push(Event::CcTimer { flow: FlowId(id) });
            evs.push(Event::LinkChange { change: id });
            evs.push(Event::AppTimer { op: id });
        }
        for ev in evs {
            let p = PackedEvent::new(ev);
            assert_eq!(p.event(), ev);
            let arrival = match ev {
                Event::Arrive { pkt, port } => Some((pkt, port)),
                _ => None,
            };
            assert_eq!(p.arrival(), arrival, "{ev:?}");
            let tx = match ev {
                Event::TxDone { port } => Some(port),
                _ => None,
            };
            assert_eq!(p.tx_done(), tx, "{ev:?}");
            assert_eq!(p.port(), arrival.map(|(_, port)| port).or(tx), "{ev:?}");
        }
        assert_eq!(std::mem::size_of::<PackedEvent>(), 8);
        // The owner: kind above id, the packet left out; arrivals between
        // the timers and the transmitters.
        let a = PackedEvent::new(Event::Arrive { pkt: PktId(u32::MAX), port: PortId(7) });
        assert_eq!(a.owner(), ARRIVE << 32 | 7);
        assert_eq!(PackedEvent::new(Event::FlowTimer { flow: FlowId(u32::MAX) }).owner(), FLOW_TIMER << 32 | u32::MAX as u64);
        assert!(PackedEvent::new(Event::TxDone { port: PortId(0) }).owner() > a.owner());
        assert!(PackedEvent::new(Event::AckTimer { flow: FlowId(u32::MAX) }).owner() < a.owner());
        assert_eq!(PackedEvent::FILLER.event(), Event::TxDone { port: PortId(0) });
    }

    /// Stage `s` is shown the event handled `s x spacing` events after the
    /// one about to be handled, while it lies in the block being read; no
    /// stage at all with a spacing of 0.
    #[test]
    fn prefetch_stages_see_the_events_spacing_apart() {
        for spacing in [0, 1, 2, 4] {
            let mut ctx = Ctx::new(PacketArena::new());
            // 40 events within one block of the wheel, pushed out of time order.
            let n = 40u32;
            for i in 0..n {
                let t = (i as u64 * 7) % 40 * 10;
                ctx.push(t, Event::NicWake { host: HostId(i) });
            }
            let mut h = Recorder { spacing, handled: Vec::new(), shown: Default::default() };
            assert_eq!(run(&mut ctx, None, u64::MAX, &mut h), RunState::Idle);
            assert_eq!(h.handled.len(), n as usize);
            let shown = h.shown.into_inner();
            if spacing == 0 {
                assert!(shown.is_empty());
                continue;
            }
            let mut per_stage = [0; HANDLER_STAGES + 1];
            for &(before, ev, stage) in &shown {
                assert!((1..=HANDLER_STAGES).contains(&stage));
                assert_eq!(h.handled[before + stage * spacing], ev, "spacing {spacing}, stage {stage}, before event {before}");
                per_stage[stage] += 1;
            }
            for (stage, &count) in per_stage.iter().enumerate().skip(1) {
                assert_eq!(count, n as usize - stage * spacing, "spacing {spacing}, stage {stage}: once before each event that has one stage x spacing after it");
            }
        }
    }
}
