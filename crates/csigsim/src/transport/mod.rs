//! Transport: host NICs and the flows (queue pairs) between them.
//!
//! [`flow`] is each flow's state machine, with no I/O; this module is the
//! I/O around it: a NIC serves ACKs first (committed to the wire on arrival),
//! then its active flows round robin, one packet each ([`Nic`]); it turns
//! what a flow answers into packets on the wire and timer events.

pub mod config;
pub mod connection;
pub mod flow;
pub mod rccc;
pub mod store;

pub use flow::{Flow, FlowBuild, FlowShared, FlowInit};
pub use store::{FlowRecord, FlowStore};

use crate::cc::CongestionControl;
use crate::monitor::{AckSeen, Observers};
use crate::net::Port;
use crate::packet::{Packet, PacketKind, Signals, F_XOFF};
use crate::id::{FlowId, HostId, PktId, PortId};
use crate::sim::{Ctx, Event};
use flow::{AckOutcome, Reflection, RtoOutcome, RxAction, SendCheck};
use std::collections::VecDeque;

/// A host's NIC: the flows with something to send, served round robin.
#[derive(Debug, Default)]
pub struct Nic {
    pub(crate) ring: VecDeque<FlowId>,
    /// Time of the pending `NicWake`, or `u64::MAX`.
    pub(crate) wake_at: u64,
    /// Receiver credits: the host's pacer, built when a flow first asks it
    /// for credit. Its steps are `NicWake` events at its `next_at`.
    pub(crate) pacer: Option<Box<rccc::Pacer>>,
}

impl rccc::Sinks for FlowStore {
    fn sink(&mut self, flow: FlowId) -> Option<&mut rccc::Sink> {
        self.get_mut(flow)?.credit.as_deref_mut().map(|c| &mut c.rx)
    }
}

/// A host NIC's port, as the transport is handed it: its id and the port.
pub struct HostPort<'a> {
    pub id: PortId,
    pub port: &'a mut Port,
}

/// Every host NIC and every flow.
#[derive(Debug)]
pub struct Transport {
    pub(crate) nics: Vec<Nic>,
    pub(crate) flows: FlowStore,
    pub(crate) shared: FlowShared,
    /// The workloads' applications: they start the flows that wait for others.
    pub(crate) apps: crate::workload::app::Apps,
    /// What a receiver answered to the packet being handled (reused: no allocation per packet).
    actions: Vec<RxAction>,
    /// Connections of several queue pairs, when `[transport.connection]` is set.
    pub(crate) conns: Option<Box<connection::Connections>>,
    /// Flows whose receiver has everything (`finish_ps` set); in a
    /// partition of a parallel run, those whose receiver is its own.
    finished: usize,
    /// In a partition of a parallel run: every flow's receiver has
    /// everything, in whichever partition (the partitions' counts added up
    /// before a link change).
    finished_everywhere: bool,
}

impl Transport {
    pub fn new(hosts: usize, flows: FlowStore, shared: FlowShared) -> Transport {
        let nics = (0..hosts).map(|_| Nic { ring: VecDeque::new(), wake_at: u64::MAX, pacer: None }).collect();
        // The store's flows are unstarted, so unfinished (a flow of no bytes
        // finishes when it starts).
        Transport { nics, flows, shared, apps: Default::default(), actions: Vec::with_capacity(4), conns: None, finished: 0, finished_everywhere: false }
    }

    /// Groups the flows into connections of several queue pairs (each flow
    /// a part of a message) and gives each part its queue pair's entropy.
    pub fn set_connections(&mut self, conns: connection::Connections) {
        conns.assign_entropy(&mut self.flows);
        self.conns = Some(Box::new(conns));
    }

    /// The connections, when the scenario has `[transport.connection]`.
    pub fn connections(&self) -> Option<&connection::Connections> {
        self.conns.as_deref()
    }

    /// The flow level's hooks of the connections: flow `flow` (a QP's part
    /// of a message) starts at `now`, and its size is decided with its
    /// message's other parts.
    pub(crate) fn start_part(&mut self, now: u64, flow: FlowId) {
        if let Some(c) = self.conns.as_deref_mut() {
            c.on_part_start(now, flow, &mut self.flows);
        }
    }

    /// The flow level's hooks of the connections: the part's sender is done
    /// at `now` (CAST's sample), its NIC at `rate_bps`.
    pub(crate) fn part_done(&mut self, now: u64, part: connection::PartDone, rate_bps: u64) {
        if let Some(c) = self.conns.as_deref_mut() {
            let t = &self.shared.t;
            c.on_part_done(now, part, rate_bps, (t.mtu + t.header) as u64);
        }
    }

    pub fn flows(&self) -> &FlowStore {
        &self.flows
    }

    /// Has every flow's receiver got everything? (Counted as flows finish:
    /// a scan of millions of flows at every link change was not free.)
    pub(crate) fn all_finished(&self) -> bool {
        self.finished_everywhere || self.finished == self.flows.len()
    }

    /// The flows whose receiver has everything, counted here.
    pub(crate) fn finished_here(&self) -> usize {
        self.finished
    }

    /// Every flow is finished, as the partitions of a parallel run found
    /// between two windows.
    pub(crate) fn set_finished_everywhere(&mut self) {
        self.finished_everywhere = true;
    }

    /// Counts the finished flows again, after flows were swapped in from
    /// other partitions.
    pub(crate) fn recount_finished(&mut self) {
        self.finished = self.flows.count_finished();
    }

    pub fn shared(&self) -> &FlowShared {
        &self.shared
    }

    pub(crate) fn on_flow_start(&mut self, ctx: &mut Ctx, obs: &mut Observers, hp: &mut HostPort, flow: FlowId) {
        if let Some(c) = self.conns.as_deref_mut() {
            c.on_part_start(ctx.now, flow, &mut self.flows);
        }
        if self.flows.state(flow, &self.shared).start(ctx.now) {
            // A flow of no bytes (a queue pair that carries none of a message).
            ctx.stats.flows_completed += 1;
            self.finished += 1;
            self.flows.retire_if_over(flow, ctx.pkts.in_network(flow));
            if self.apps.any_waits() {
                self.apps.arrived(ctx, flow);
            }
            return;
        }
        self.activate(ctx, obs, hp, flow);
    }

    /// Puts a flow on its NIC's ring (if not there) and kicks the NIC.
    fn activate(&mut self, ctx: &mut Ctx, obs: &mut Observers, hp: &mut HostPort, flow: FlowId) {
        let f = &mut self.flows[flow];
        if f.sender_done_ps.is_some() {
            return;
        }
        if !f.in_ring {
            f.in_ring = true;
            self.nics[f.src].ring.push_back(flow);
        }
        let host = f.src;
        self.kick(ctx, obs, hp, host);
    }

    /// Starts the NIC's transmitter now if it is idle, or makes sure a
    /// `TxDone` will serve it when the current packet is out.
    #[inline]
    pub(crate) fn kick(&mut self, ctx: &mut Ctx, obs: &mut Observers, hp: &mut HostPort, host: HostId) {
        if hp.port.kick(hp.id, ctx) {
            self.transmit(ctx, obs, hp, host);
        }
    }

    /// Prefetch stages of a NIC's `TxDone` (a hint only): the NIC (stage
    /// 3), its ring (stage 2), then the state of the flow at its head
    /// (stage 1).
    #[inline]
    pub(crate) fn prefetch_nic(&self, host: HostId, stage: usize) {
        let ring = &self.nics[host].ring;
        if stage == 3 {
            crate::sim::prefetch(&self.nics[host]);
        } else if stage == 2 {
            if let Some(slot) = ring.front() {
                crate::sim::prefetch(slot);
            }
        } else if let Some(&flow) = ring.front() {
            self.flows[flow].prefetch_send();
        }
    }

    /// Prefetch stages of a packet's arrival at its host (a hint only): the
    /// state of its flow (stage 2), then the word of its bitmap (stage 1).
    #[inline]
    pub(crate) fn prefetch_receive(&self, p: &Packet, stage: usize) {
        let Some(f) = self.flows.get(p.flow) else { return };
        f.prefetch_receive(p, stage);
    }

    /// The NIC's transmitter is free: send the next data packet, if any.
    pub(crate) fn transmit(&mut self, ctx: &mut Ctx, obs: &mut Observers, hp: &mut HostPort, host: HostId) {
        let Some(pkt) = self.nic_next(ctx, hp.port, host) else { return };
        let end = hp.port.start_tx(hp.id, ctx, obs, pkt, ctx.now);
        if self.apps.watches_sent() {
            self.start_queued(ctx, pkt, end);
        }
        if !self.nics[host].ring.is_empty() {
            hp.port.again_at(hp.id, ctx, end);
        }
    }

    /// The next data packet a host NIC sends: flows round robin, one packet each.
    /// (ACKs and NACKs never wait for this: they are committed on arrival.)
    fn nic_next(&mut self, ctx: &mut Ctx, port: &Port, host: HostId) -> Option<PktId> {
        if port.paused {
            return None;
        }
        let now = ctx.now;
        let mut wake = u64::MAX;
        let nic = &mut self.nics[host];
        for _ in 0..nic.ring.len() {
            let flow = nic.ring.pop_front().expect("ring length");
            let f = &mut self.flows[flow];
            match f.check_send(now) {
                SendCheck::Send(psn, rtx) => {
                    let mut sent = f.send(now, psn, rtx, port.rate_bps, &self.shared);
                    if self.shared.t.rccc.is_some() {
                        sent.packet.set_credit_quanta(f.credit_target(nic.ring.len() as u32, &self.shared));
                    }
                    nic.ring.push_back(flow);
                    if let Some(at) = sent.arm_rto {
                        ctx.push(at, Event::FlowTimer { flow });
                    }
                    if sent.resend {
                        ctx.stats.retransmits += 1;
                    }
                    let id = ctx.inject(sent.packet);
                    if sent.tagged {
                        if let Some(cs) = &self.shared.csig {
                            cs.init(ctx.pkts.sig_mut(id));
                        }
                    }
                    return Some(id);
                }
                SendCheck::Blocked => {
                    f.in_ring = false;
                    if f.sender_done_ps.is_some() {
                        self.flows.retire_if_over(flow, ctx.pkts.in_network(flow));
                    }
                }
                SendCheck::Paced(t) => {
                    wake = wake.min(t);
                    nic.ring.push_back(flow);
                }
            }
        }
        if wake != u64::MAX && wake < nic.wake_at {
            nic.wake_at = wake;
            ctx.push(wake, Event::NicWake { host });
        }
        None
    }

    /// A paced flow may be ready: the `NicWake` at `ctx.now`.
    pub(crate) fn on_nic_wake(&mut self, ctx: &mut Ctx, obs: &mut Observers, hp: &mut HostPort, host: HostId) {
        if self.nics[host].wake_at == ctx.now {
            self.nics[host].wake_at = u64::MAX;
            self.kick(ctx, obs, hp, host);
        }
        if self.nics[host].pacer.as_ref().is_some_and(|p| p.next_at == ctx.now) {
            self.pull_step(ctx, obs, hp, host);
        }
    }

    /// Receiver credits: `flow` asks the pacer of its receiving `host` for credit.
    fn request_pull(&mut self, ctx: &mut Ctx, obs: &mut Observers, hp: &mut HostPort, host: HostId, flow: FlowId) {
        let Some(cfg) = &self.shared.t.rccc else { return };
        let Some(c) = self.flows.get_mut(flow).and_then(|f| f.credit.as_deref_mut()) else { return };
        let mtu = self.shared.t.mtu;
        let pacer = self.nics[host].pacer.get_or_insert_with(|| Box::new(rccc::Pacer::new(cfg, hp.port.rate_bps, mtu)));
        if pacer.request(flow, &mut c.rx) {
            self.pull_step(ctx, obs, hp, host);
        }
    }

    /// Receiver credits: the pacer of `host` grants one pull, if a flow
    /// wants one, and waits for the next step.
    fn pull_step(&mut self, ctx: &mut Ctx, obs: &mut Observers, hp: &mut HostPort, host: HostId) {
        let Some(pacer) = self.nics[host].pacer.as_deref_mut() else { return };
        let Some(g) = pacer.step(ctx.now, &mut self.flows) else { return };
        ctx.push(pacer.next_at, Event::NicWake { host });
        let p = self.flows[g.flow].credit_packet(g.granted, &self.shared);
        let id = ctx.inject(p);
        self.send_ctrl(ctx, obs, hp, id);
    }

    /// Commits control packet `id` to the host's wire at once, behind
    /// whatever is on it.
    #[inline]
    fn send_ctrl(&mut self, ctx: &mut Ctx, obs: &mut Observers, hp: &mut HostPort, id: PktId) {
        ctx.pkts.get_mut(id).enq_ps = ctx.now;
        let start = hp.port.busy_until.max(ctx.now);
        hp.port.start_tx(hp.id, ctx, obs, id, start);
    }

    /// A packet arrived at `host` through its NIC port.
    pub(crate) fn host_receive(&mut self, ctx: &mut Ctx, obs: &mut Observers, hp: &mut HostPort, host: HostId, pkt: PktId) {
        let p = *ctx.pkts.get(pkt);
        let sig = if ctx.pkts.has_signals() { *ctx.pkts.sig(pkt) } else { Signals::default() };
        // The INT stack stays in the freed slot: an ACK reads it there, a
        // data packet's reflection takes it from there.
        let int_head = ctx.pkts.has_int().then(|| ctx.pkts.int_head(pkt));
        ctx.consume(pkt);
        let now = ctx.now;
        match p.kind {
            PacketKind::Pause => {
                if hp.port.set_paused(hp.id, now, obs, p.flags & F_XOFF != 0) {
                    self.kick(ctx, obs, hp, host);
                }
            }
            PacketKind::Data => {
                debug_assert_eq!(p.dst, host);
                // A parallel run's receiver builds its state here.
                let f = self.flows.state(p.flow, &self.shared);
                let mut actions = std::mem::take(&mut self.actions);
                let out = f.on_data(now, &p, &sig, int_head.is_some(), &self.shared, &mut actions);
                let s = &mut ctx.stats;
                s.data_packets_delivered += out.delivered as u64;
                s.flows_completed += out.completed as u64;
                self.finished += out.completed as usize;
                s.out_of_order_discards += out.discarded as u64;
                s.cnps_suppressed += out.cnp_suppressed as u64;
                for a in actions.drain(..) {
                    self.rx_action(ctx, obs, hp, p.flow, a, int_head.map(|h| (pkt, h)));
                }
                self.actions = actions;
                if out.pull {
                    self.request_pull(ctx, obs, hp, host, p.flow);
                }
                if out.completed && self.apps.any_waits() {
                    self.apps.arrived(ctx, p.flow);
                }
            }
            PacketKind::Ack => {
                let f = &mut self.flows[p.flow];
                let int = int_head.map(|_| ctx.pkts.int(pkt));
                let AckOutcome::Applied { seen, done, wants_timer } = f.on_ack(now, &p, &sig, int, &self.shared) else {
                    self.retire_if_over(ctx, p.flow);
                    return;
                };
                let s = &seen.sample;
                let m = f.cc.metrics();
                let a = AckSeen { csig: seen.csig, stamps: seen.stamps, int: s.int, metrics: m, rtt_ps: s.rtt_ps, acked_pkts: s.acked_pkts, ce_pkts: s.ce_pkts };
                obs.on_ack(now, p.flow, &a);
                if done {
                    if let Some(c) = self.conns.as_deref_mut() {
                        let t = &self.shared.t;
                        let f = &self.flows[p.flow];
                        let part = connection::PartDone { id: f.id, size: f.size, start_ps: f.start_ps, base_rtt_ps: f.base_rtt_ps };
                        c.on_part_done(now, part, hp.port.rate_bps, (t.mtu + t.header) as u64);
                    }
                    self.retire_if_over(ctx, p.flow);
                    return;
                }
                if wants_timer {
                    self.arm_cc_timer(ctx, p.flow);
                }
                self.activate(ctx, obs, hp, p.flow);
            }
            PacketKind::Nack => {
                let Some(wants_timer) = self.flows[p.flow].on_nack(now, &p, &self.shared) else {
                    self.retire_if_over(ctx, p.flow);
                    return;
                };
                if wants_timer {
                    self.arm_cc_timer(ctx, p.flow);
                }
                self.activate(ctx, obs, hp, p.flow);
            }
            PacketKind::Cnp => {
                if let Some(earlier) = self.flows[p.flow].on_cnp(now, &p, &self.shared) {
                    self.arm_cc_timer(ctx, p.flow);
                    // A rate that rose re-paced the waiting packet earlier:
                    // the NIC must wake for it then.
                    if earlier {
                        self.activate(ctx, obs, hp, p.flow);
                    }
                }
                self.retire_if_over(ctx, p.flow);
            }
            PacketKind::Credit if self.flows.dst(p.flow) == host => {
                // A sender's request (RTS), at its receiver.
                if self.flows.state(p.flow, &self.shared).on_credit_request(&p) {
                    self.request_pull(ctx, obs, hp, host, p.flow);
                }
            }
            PacketKind::Credit => {
                if self.flows[p.flow].on_credit(now, &p).is_none() {
                    self.retire_if_over(ctx, p.flow);
                    return;
                }
                self.activate(ctx, obs, hp, p.flow);
            }
        }
    }

    /// Carries out one receiver action of `flow` at the receiver's NIC.
    /// `int`: the freed data packet whose INT stack a reflection carries,
    /// with its head ([`crate::packet::PacketArena::reflect_int`]).
    fn rx_action(&mut self, ctx: &mut Ctx, obs: &mut Observers, hp: &mut HostPort, flow: FlowId, a: RxAction, int: Option<(PktId, (u8, u8))>) {
        match a {
            RxAction::AckTimer(at) => ctx.push(at, Event::AckTimer { flow }),
            RxAction::Send(p, refl) => {
                match p.kind {
                    PacketKind::Ack => ctx.stats.acks_sent += 1,
                    PacketKind::Nack => ctx.stats.nacks_sent += 1,
                    PacketKind::Cnp => ctx.stats.cnps_sent += 1,
                    _ => {}
                }
                let id = ctx.inject(p);
                if let Reflection::Signals(s, with_int) = refl {
                    if ctx.pkts.has_signals() {
                        *ctx.pkts.sig_mut(id) = s;
                    }
                    if let (true, Some((from, head))) = (with_int, int) {
                        ctx.pkts.reflect_int(from, head, id);
                    }
                }
                // Control packets are committed to the wire at once, behind
                // whatever is on it.
                self.send_ctrl(ctx, obs, hp, id);
            }
        }
    }

    /// A data packet leaves the NIC until `end`: if it is its flow's last,
    /// the flow queued behind it may start then (the first time only).
    #[inline]
    fn start_queued(&mut self, ctx: &mut Ctx, pkt: PktId, end: u64) {
        let p = ctx.pkts.get(pkt);
        let (flow, psn) = (p.flow, p.psn);
        if psn + 1 == self.flows[flow].npkts {
            self.apps.sent(ctx, flow, end);
        }
    }

    /// Retires the flow's state if the flow is over (see
    /// [`FlowStore::retirable`]): called where a sender that is done
    /// handles what can be its last event (an ACK, NACK or CNP that came
    /// late, or its controller's last timer).
    #[inline]
    fn retire_if_over(&mut self, ctx: &Ctx, flow: FlowId) {
        if self.flows[flow].sender_done_ps.is_some() {
            self.flows.retire_if_over(flow, ctx.pkts.in_network(flow));
        }
    }

    /// Makes sure a `CcTimer` event is pending for the controller's next timer.
    fn arm_cc_timer(&mut self, ctx: &mut Ctx, flow: FlowId) {
        if let Some(t) = self.flows[flow].cc_timer_due(ctx.now) {
            ctx.push(t, Event::CcTimer { flow });
        }
    }

    /// The controller's timer: run it, re-arm, and let the sender use a
    /// window or rate that may have grown.
    pub(crate) fn on_cc_timer(&mut self, ctx: &mut Ctx, obs: &mut Observers, hp: &mut HostPort, flow: FlowId) {
        if !self.flows[flow].on_cc_timer(ctx.now, &self.shared) {
            self.retire_if_over(ctx, flow);
            return;
        }
        self.arm_cc_timer(ctx, flow);
        self.activate(ctx, obs, hp, flow);
    }

    /// The delayed-ACK timer: send the coalesced ACK if it is still owed.
    pub(crate) fn on_ack_timer(&mut self, ctx: &mut Ctx, obs: &mut Observers, hp: &mut HostPort, flow: FlowId) {
        if let Some(a) = self.flows[flow].on_ack_timer(ctx.now, &self.shared) {
            self.rx_action(ctx, obs, hp, flow, a, None);
        }
    }

    pub(crate) fn on_flow_timer(&mut self, ctx: &mut Ctx, obs: &mut Observers, hp: &mut HostPort, flow: FlowId) {
        match self.flows[flow].on_rto_timer(ctx.now, &self.shared) {
            RtoOutcome::Idle => {}
            RtoOutcome::Rearm(at) => ctx.push(at, Event::FlowTimer { flow }),
            RtoOutcome::Fired { wants_timer, rearm } => {
                ctx.stats.timeouts += 1;
                if wants_timer {
                    self.arm_cc_timer(ctx, flow);
                }
                if rearm != u64::MAX {
                    ctx.push(rearm, Event::FlowTimer { flow });
                }
                // Without credit, the sender tells its receiver it waits.
                if let Some(p) = self.flows[flow].credit_request(ctx.now, &self.shared) {
                    let id = ctx.inject(p);
                    self.send_ctrl(ctx, obs, hp, id);
                }
                self.activate(ctx, obs, hp, flow);
            }
        }
    }

    /// Is a transport timer event at `t` stale? A stale event changes nothing
    /// and is not activity (it must not stretch the run's simulated time).
    /// A retired flow's timers are all stale, as its state would have said
    /// (see [`FlowStore::retirable`]).
    #[inline(always)]
    pub(crate) fn is_stale(&mut self, t: u64, ev: Event) -> bool {
        match ev {
            Event::FlowTimer { flow } => self.flows.get_mut(flow).is_none_or(|f| f.rto_stale()),
            Event::AckTimer { flow } => self.flows.get_mut(flow).is_none_or(|f| f.ack_timer_stale()),
            Event::CcTimer { flow } => self.flows.get_mut(flow).is_none_or(|f| f.cc_timer_at != t),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketArena;
    use flow::FlowInit;

    const RATE: u64 = 100_000_000_000;

    /// Flows from host 0 to host 1 with the given rate caps, on one NIC.
    fn transport(caps: &[u64]) -> Transport {
        let t = config::TransportConfig { mtu: 1000, ..Default::default() };
        let flows = caps
            .iter()
            .enumerate()
            .map(|(i, &cap)| {
                let spec = FlowInit { src: HostId(0), dst: HostId(1), size: 10_000, start_ps: 0, rate_cap: cap, name: "" };
                FlowRecord::new(FlowId(i as u32), &spec, t.mtu, 0, 10_000_000, RATE, 2)
            })
            .collect();
        let build = FlowBuild::new(&t, 1064, 1);
        Transport::new(2, FlowStore::new(flows, build), FlowShared { t, csig: None, stamp: None, tag_bytes: 0, int_bytes: 0 })
    }

    /// Serves the NIC's transmitter at each `TxDone` it asks for, `n` times;
    /// returns the flow of each packet sent, in order.
    fn serve(tr: &mut Transport, ctx: &mut Ctx, port: &mut Port, n: usize) -> Vec<u32> {
        let mut obs = Observers::default();
        let mut order = Vec::new();
        for f in (0..tr.flows.len() as u32).map(FlowId) {
            tr.on_flow_start(ctx, &mut obs, &mut HostPort { id: PortId(0), port }, f);
        }
        while order.len() < n {
            let Some((t, ev)) = ctx.q.pop() else { break };
            ctx.now = t;
            match ev.event() {
                Event::Arrive { pkt, .. } => {
                    order.push(ctx.pkts.get(pkt).flow.0);
                    ctx.consume(pkt);
                }
                Event::TxDone { .. } => {
                    port.txdone = crate::net::port::TXDONE_NONE;
                    tr.transmit(ctx, &mut obs, &mut HostPort { id: PortId(0), port }, HostId(0));
                }
                Event::NicWake { host } => tr.on_nic_wake(ctx, &mut obs, &mut HostPort { id: PortId(0), port }, host),
                _ => {}
            }
        }
        order
    }

    #[test]
    fn nic_serves_active_flows_round_robin_one_packet_each() {
        let mut tr = transport(&[u64::MAX, u64::MAX, u64::MAX]);
        let mut ctx = Ctx::new(PacketArena::new());
        let mut port = Port::new(crate::id::NodeId(0), RATE, 1_000);
        // Flow 0 starts on an idle NIC and sends at once; it then rejoins the
        // ring behind nothing, and flows 1 and 2 queue behind it.
        assert_eq!(serve(&mut tr, &mut ctx, &mut port, 9), vec![0, 0, 1, 2, 0, 1, 2, 0, 1]);
    }

    #[test]
    fn a_paced_flow_yields_its_turn_and_the_nic_wakes_for_it() {
        // Flow 0 is capped at a tenth of the line rate: between two of its
        // packets the NIC sends nine of flow 1's.
        let mut tr = transport(&[RATE / 10, u64::MAX]);
        let mut ctx = Ctx::new(PacketArena::new());
        let mut port = Port::new(crate::id::NodeId(0), RATE, 1_000);
        let order = serve(&mut tr, &mut ctx, &mut port, 11);
        assert_eq!(order, vec![0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0]);
    }

    #[test]
    fn a_rate_that_rises_wakes_the_nic_for_the_re_paced_packet() {
        use crate::cc::{dcqcn::DcqcnConfig, CcConfig, CcKind};
        use config::PacingUpdate;
        // One DCQCN flow, cut by a CNP before it starts to R1, and raised
        // to R2 by its recovery step 100 ns later, while its second packet
        // waits and the NIC sleeps until that packet's time at R1.
        let dcqcn = DcqcnConfig { decrease_timer: Some(crate::units::Time(0)), increase_timer: Some(crate::units::Time(100_000)), ..Default::default() };
        for update in [PacingUpdate::OnSend, PacingUpdate::OnRateChange] {
            let mut t = config::TransportConfig { mtu: 1000, cc: CcKind::Dcqcn, pacing_update: update, ..Default::default() };
            t.cc_sections.insert(CcConfig::Dcqcn(dcqcn));
            let spec = FlowInit { src: HostId(0), dst: HostId(1), size: 10_000, start_ps: 0, rate_cap: u64::MAX, name: "" };
            let flows = vec![FlowRecord::new(FlowId(0), &spec, t.mtu, 0, 10_000_000, RATE, 2)];
            let build = FlowBuild::new(&t, 1064, 1);
            let mut tr = Transport::new(2, FlowStore::new(flows, build), FlowShared { t, csig: None, stamp: None, tag_bytes: 0, int_bytes: 0 });
            let mut ctx = Ctx::new(PacketArena::new());
            let mut port = Port::new(crate::id::NodeId(0), RATE, 1_000);
            let mut obs = Observers::default();
            let f0 = FlowId(0);
            let cnp = Packet { kind: PacketKind::Cnp, ..Default::default() };
            assert_eq!(tr.flows.state(f0, &tr.shared).on_cnp(0, &cnp, &tr.shared), Some(false));
            tr.arm_cc_timer(&mut ctx, f0);
            let r1 = tr.flows[f0].cc.rate();
            tr.on_flow_start(&mut ctx, &mut obs, &mut HostPort { id: PortId(0), port: &mut port }, f0);
            let mut sends = Vec::new();
            let (mut wake_after_step, mut r2) = (0, 0);
            while sends.len() < 2 {
                let (now, ev) = ctx.q.pop().expect("an event");
                ctx.now = now;
                let hp = &mut HostPort { id: PortId(0), port: &mut port };
                match ev.event() {
                    Event::Arrive { pkt, .. } => {
                        let p = ctx.pkts.get(pkt);
                        sends.push((p.psn, p.sent_ps, p.wire));
                        ctx.consume(pkt);
                    }
                    Event::TxDone { .. } => {
                        hp.port.txdone = crate::net::port::TXDONE_NONE;
                        tr.transmit(&mut ctx, &mut obs, hp, HostId(0));
                    }
                    Event::NicWake { host } => tr.on_nic_wake(&mut ctx, &mut obs, hp, host),
                    Event::CcTimer { flow } if !tr.is_stale(now, ev.event()) => {
                        tr.on_cc_timer(&mut ctx, &mut obs, hp, flow);
                        if r2 == 0 {
                            r2 = tr.flows[f0].cc.rate();
                            wake_after_step = tr.nics[0].wake_at;
                        }
                    }
                    _ => {}
                }
            }
            assert!(r1 < RATE && r2 > r1, "{r1} {r2}");
            let (w, step) = (sends[0].2 as u64, 100_000);
            assert_eq!((sends[0].0, sends[0].1, sends[1].0), (0, 0, 1));
            assert!(crate::units::tx_time_ps(w, RATE) < step && step < crate::units::tx_time_ps(w, r1), "the step comes while packet 1 waits");
            if update == PacingUpdate::OnRateChange {
                // Packet 1 moved to R2's time, and the NIC's wake-up with it.
                let at = crate::units::tx_time_ps(w, r2);
                assert_eq!((wake_after_step, sends[1].1), (at, at));
            } else {
                let at = crate::units::tx_time_ps(w, r1);
                assert_eq!((wake_after_step, sends[1].1), (at, at), "R2 applies from packet 2");
            }
        }
    }

    #[test]
    fn a_paused_nic_sends_nothing_until_resumed() {
        let mut tr = transport(&[u64::MAX]);
        let mut ctx = Ctx::new(PacketArena::new());
        let mut port = Port::new(crate::id::NodeId(0), RATE, 1_000);
        port.paused = true;
        assert!(serve(&mut tr, &mut ctx, &mut port, 1).is_empty());
        let mut obs = Observers::default();
        assert!(port.set_paused(PortId(0), ctx.now, &mut obs, false));
        tr.kick(&mut ctx, &mut obs, &mut HostPort { id: PortId(0), port: &mut port }, HostId(0));
        assert_eq!(ctx.stats.packets_injected, 1);
    }
}

crate::id::index_by!(HostId => Nic);
