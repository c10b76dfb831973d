//! The switch: output-queued, store-and-forward, one shared buffer.
//!
//! - Control packets (ACK, NACK, CNP, PAUSE, trimmed headers) use a
//!   strict-priority queue per egress port and are never paused.
//! - Data admission depends on the mode. `lossy` and `trim`: per-egress-port
//!   reservation plus the dynamic threshold alpha * (free shared buffer).
//!   `pfc`: per-ingress-port reservation, shared pool up to the XOFF threshold
//!   alpha * (free shared buffer), then headroom; crossing XOFF sends a PAUSE
//!   upstream, draining below XOFF - xon_delta (headroom empty) sends a RESUME.
//! - ECN (RED on the egress data queue, sampled as a packet leaves, against
//!   the bytes behind it, or with `ecn_at = "enqueue"` as it joins) marks ECT
//!   packets, with the thresholds resolved for each egress port.
//! - `control_queue = "shared"` puts ACKs, NACKs and CNPs in the data queue;
//!   `trim_victim` may trim the last queued packet instead of the arriving one.
//! - Buffer is released when a packet starts transmission.
//!
//! [`Switch`] holds a switch's buffer state, its randomness and its resolved
//! configuration; the buffer decisions of each mode live in [`super::mode`]
//! (one file per mode) and are tested without a network. [`Network`]
//! composes them into the forwarding path.

use super::port::{AT_DEQUEUE, NO_MARKING};
use super::Network;
use crate::monitor::Observers;
use crate::packet::{Advice, Packet, PacketKind, F_CE, F_ECT, F_TRIMMED, F_TRIMMED_LAST_HOP, F_XOFF};
use super::config::{ControlQueue, EcnConfig, EcnMode, SwitchConfig, TrimVictim};
use super::mode::{Admission, Refusal};
use crate::signal::ecp;
use crate::rng::Stream;
use crate::id::{PktId, PortId, SwitchId};
use crate::sim::Ctx;

/// A switch's shared buffer, its per-switch randomness and its configuration.
///
/// Laid out hot first, aligned to a cache line: the first two lines hold
/// what forwarding a data packet reads and writes (buffer counters, random
/// streams, and copies of the few configuration fields the forwarding path
/// reads, which sit far apart in `cfg`); before, those fields spread over
/// four or five lines.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Switch {
    pub(crate) spray_rng: Stream,
    pub(crate) shared_used: u64,
    /// Shared pool after per-port reservations (and PFC headroom).
    pub(crate) shared_size: u64,
    /// `cfg.reserved`, `cfg.mode`, `cfg.routing`, `cfg.control_queue` and
    /// `cfg.dt_alpha`, copied (the configuration does not change in a run).
    pub(crate) reserved: u64,
    pub(crate) dmodk_divisor: u32,
    pub(crate) mode: super::SwitchMode,
    pub(crate) routing: crate::lb::RoutingPolicy,
    pub(crate) control_queue: ControlQueue,
    pub(crate) tier: u8,
    pub(crate) ecn_rng: Stream,
    /// Bytes of data in the buffer now, and the most ever.
    pub(crate) used: u64,
    pub(crate) max_used: u64,
    pub(crate) hash_salt: u64,
    pub(crate) dt_alpha: f64,
    pub(crate) first_port: u32,
    pub(crate) num_ports: u32,
    /// PFC headroom per ingress port.
    pub(crate) headroom: u64,
    /// The switch's configuration (buffer, mode, reservations, PFC, trimming);
    /// ECN thresholds are resolved per egress port instead.
    pub(crate) cfg: SwitchConfig,
    pub(crate) name: String,
}

impl Switch {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn tier(&self) -> u8 {
        self.tier
    }

    /// The switch's ports, in port order.
    pub fn ports(&self) -> impl Iterator<Item = PortId> {
        (self.first_port..self.first_port + self.num_ports).map(PortId)
    }

    /// The most bytes the buffer ever held.
    pub fn max_used(&self) -> u64 {
        self.max_used
    }

    /// RED: does a packet joining a data queue of `q` bytes get marked?
    #[inline]
    pub fn red(&mut self, ecn: &EcnConfig, q: u64) -> bool {
        if q <= ecn.kmin.0 {
            false
        } else if q >= ecn.kmax.0 {
            true
        } else {
            let prob = ecn.pmax * (q - ecn.kmin.0) as f64 / (ecn.kmax.0 - ecn.kmin.0) as f64;
            self.ecn_rng.unit() < prob
        }
    }
}

impl Network {
    pub(crate) fn switch_receive(&mut self, ctx: &mut Ctx, obs: &mut Observers, sw: SwitchId, pkt: PktId, in_port: PortId) {
        let p = *ctx.pkts.get(pkt);
        if p.kind == PacketKind::Pause {
            ctx.pkts.free(pkt);
            ctx.stats.packets_delivered += 1;
            ctx.stats.bytes_delivered += p.wire as u64;
            if self.ports[in_port].set_paused(in_port, ctx.now, obs, p.flags & F_XOFF != 0) {
                self.switch_kick(ctx, obs, in_port);
            }
            return;
        }
        let out = self.choose_egress(ctx.now, sw, &p);
        if self.failures.is_down(out) {
            self.drop_into_down_link(ctx, obs, out, pkt);
            return;
        }
        self.enqueue(ctx, obs, sw, out, pkt, in_port);
    }

    /// Asks the CPU, in stages an event apart, for what forwarding `p` at
    /// `sw` will read: the switch and, on a `far` fabric (stages four
    /// events apart), the route's candidate list (`stage` 2), then the
    /// egress port a stateless policy will choose (`stage` 1). A hint only.
    /// On a smaller fabric the route table and the port ids stay in cache
    /// (5 and 24 KB at 1024 hosts), and asking for them cost instructions
    /// for nothing.
    #[inline(always)]
    pub(crate) fn prefetch_forward(&self, sw: SwitchId, p: &Packet, stage: usize, far: bool) {
        let s = &self.switches[sw];
        if stage == 2 {
            if far {
                self.routes.prefetch(sw, p.dst);
            }
            crate::sim::prefetch(s);
            return;
        }
        let cands = self.routes.candidates(sw, p.dst);
        if let Some(out) = crate::lb::predict(s.routing, cands, p.entropy, p.dst.0, s.hash_salt, s.dmodk_divisor, &s.spray_rng) {
            crate::sim::prefetch(&self.ports[out]);
        }
    }

    fn choose_egress(&mut self, now: u64, sw: SwitchId, p: &Packet) -> PortId {
        let (cands, group) = self.routes.next_hops(sw, p.dst);
        let Some(group) = group else { return cands[0] };
        let s = &mut self.switches[sw];
        let ports = &self.ports;
        let load = |q: PortId| {
            let port = &ports[q];
            crate::lb::Load { queue_bytes: port.queue_bytes(), busy_until: port.busy_until, down: self.failures.is_down(q) }
        };
        let (entropy, dst, salt, divisor) = (p.entropy, p.dst.0, s.hash_salt, s.dmodk_divisor);
        let ctx = crate::lb::Ctx { cands, entropy, dst, salt, divisor, now, rng: &mut s.spray_rng, load };
        crate::lb::choose(s.routing, ctx, group)
    }

    fn enqueue(&mut self, ctx: &mut Ctx, obs: &mut Observers, sw: SwitchId, out: PortId, pkt: PktId, in_port: PortId) {
        let now = ctx.now;
        let p = ctx.pkts.get(pkt);
        let ctrl = p.kind.is_control();
        // A trimmed header stays in the control class at every later hop too;
        // PAUSE frames always do; ACKs, NACKs and CNPs unless `control_queue = "shared"`.
        if p.flags & F_TRIMMED != 0
            || (ctrl && (p.kind == PacketKind::Pause || self.switches[sw].control_queue == ControlQueue::Priority))
        {
            self.push_ctrl(ctx, obs, out, pkt);
            return;
        }
        let wire = p.wire as u64;
        let flow = p.flow;
        let s = &mut self.switches[sw];
        let mode = s.mode;
        match mode.admit(s, &mut self.ports, in_port, out, wire) {
            Admission::Admitted { send_xoff } => {
                if send_xoff {
                    self.send_pause(ctx, obs, in_port, true);
                }
            }
            // A control packet in the data queue is never trimmed.
            Admission::Refused if ctrl => {
                obs.on_drop(now, out);
                ctx.drop_packet(pkt);
                return;
            }
            Admission::Refused => match mode.on_refuse() {
                Refusal::Trim if self.trim_last_queued(ctx, obs, sw, out, in_port, wire) => {}
                Refusal::Trim => {
                    obs.on_trim(now, out);
                    self.trim(ctx, obs, sw, out, pkt);
                    return;
                }
                Refusal::Drop => {
                    obs.on_drop(now, out);
                    ctx.drop_packet(pkt);
                    return;
                }
            },
        }
        if !ctrl {
            self.mark_on_enqueue(ctx, obs, sw, out, pkt, flow, wire);
        }
        let s = &mut self.switches[sw];
        s.used += wire;
        s.max_used = s.max_used.max(s.used);
        let p = ctx.pkts.get_mut(pkt);
        p.in_port = in_port;
        p.enq_ps = now;
        let port = &mut self.ports[out];
        self.rings.push_back(&mut port.q, pkt);
        port.data_bytes += wire;
        obs.on_queue(now, out, port.data_bytes);
        if !port.paused {
            self.switch_kick(ctx, obs, out);
        }
    }

    /// `trim_victim`: a data packet of `wire` bytes was refused at `out`. If
    /// the policy picks the last queued packet, and it is a data packet whose
    /// removal makes room, cuts that one instead and admits the arriving
    /// packet (htsim's `CompositeQueue`). Returns whether it did.
    fn trim_last_queued(&mut self, ctx: &mut Ctx, obs: &mut Observers, sw: SwitchId, out: PortId, in_port: PortId, wire: u64) -> bool {
        let take_tail = match self.switches[sw].cfg.trim_victim {
            TrimVictim::Arriving => false,
            TrimVictim::LastQueued => true,
            // htsim draws its coin only for a packet that does not fit.
            TrimVictim::Either => self.victim_rng.get_mut(out.ix()).is_some_and(|r| r.unit() < 0.5),
        };
        let Some(&tail) = self.rings.back(&self.ports[out].q).filter(|_| take_tail) else { return false };
        let t = ctx.pkts.get(tail);
        if t.kind != PacketKind::Data || !super::mode::trim::admits_after(&self.switches[sw], &self.ports, out, t.wire as u64, wire) {
            return false;
        }
        self.rings.pop_back(&mut self.ports[out].q);
        self.release(ctx, obs, sw, out, tail);
        let s = &mut self.switches[sw];
        let admitted = s.mode.admit(s, &mut self.ports, in_port, out, wire);
        debug_assert_eq!(admitted, Admission::Admitted { send_xoff: false });
        obs.on_queue(ctx.now, out, self.ports[out].data_bytes);
        obs.on_trim(ctx.now, out);
        self.trim(ctx, obs, sw, out, tail);
        true
    }

    /// In-band signals and, unless the port marks at dequeue, ECN for a data
    /// packet joining the queue of `out`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn mark_on_enqueue(&mut self, ctx: &mut Ctx, obs: &mut Observers, sw: SwitchId, out: PortId, pkt: PktId, flow: crate::id::FlowId, wire: u64) {
        let now = ctx.now;
        let q = self.ports[out].data_bytes;
        if self.sig.on {
            crate::signal::egress::on_enqueue(&self.signals, &mut ctx.pkts, pkt, q);
        }
        // ECN: RED on the data queue this packet joins; with ECP only at congestion roots.
        let marking = self.ports[out].marking;
        if marking != NO_MARKING && marking & AT_DEQUEUE == 0 {
            let ecn = &self.markings[marking as usize];
            let port = &mut self.ports[out];
            let eligible = match ecn.mode {
                EcnMode::Red => true,
                EcnMode::Ecp => {
                    let root = ecp::is_root(
                        q,
                        ecn.root_threshold.unwrap_or(ecn.kmin).0,
                        port.paused,
                        port.last_pause_end,
                        now,
                        ecn.pause_memory.0,
                    );
                    let mark = root && port.occupancy.contributes(flow, q, ecn.fair_share);
                    port.occupancy.add(flow, wire, ecn.max_flows as usize);
                    mark
                }
            };
            if eligible && ctx.pkts.get(pkt).flags & F_ECT != 0 && self.switches[sw].red(ecn, q) {
                if ecn.mode == EcnMode::Ecp {
                    let port = &self.ports[out];
                    if let Some(share) = port.occupancy.contributor_share(q + wire, ecn.fair_share, port.rate_bps) {
                        let threshold = ecn.root_threshold.unwrap_or(ecn.kmin).0;
                        let drain = ecp::drain_factor(q + wire, threshold, port.rate_bps, ecn.drain_time.0);
                        let p = ctx.pkts.get_mut(pkt);
                        p.advice = p.advice.lower(Advice::new(share, drain));
                    }
                }
                ctx.pkts.get_mut(pkt).flags |= F_CE;
                ctx.stats.ecn_marks += 1;
                obs.on_mark(now, out);
            }
        }
    }

    /// `ecn_at = "dequeue"`: RED on the bytes a departing data packet leaves
    /// behind it in the queue of `port` (ns-3 and htsim mark as the packet
    /// leaves, after taking it off the queue).
    #[inline]
    fn mark_on_dequeue(&mut self, ctx: &mut Ctx, obs: &mut Observers, sw: SwitchId, port: PortId, pkt: PktId) {
        if ctx.pkts.get(pkt).flags & F_ECT == 0 {
            return;
        }
        let ecn = self.markings[(self.ports[port].marking & !AT_DEQUEUE) as usize];
        if self.switches[sw].red(&ecn, self.ports[port].data_bytes) {
            ctx.pkts.get_mut(pkt).flags |= F_CE;
            ctx.stats.ecn_marks += 1;
            obs.on_mark(ctx.now, port);
        }
    }

    /// Starts the transmitter of switch port `port` now if it is idle, or
    /// makes sure a `TxDone` will serve it when the current packet is out.
    #[inline(always)]
    pub(crate) fn switch_kick(&mut self, ctx: &mut Ctx, obs: &mut Observers, port: PortId) {
        if self.ports[port].kick(port, ctx) {
            self.switch_transmit(ctx, obs, port);
        }
    }

    /// The transmitter of switch port `port` is free: send the next data
    /// packet, if any and not paused.
    #[inline(always)]
    pub(crate) fn switch_transmit(&mut self, ctx: &mut Ctx, obs: &mut Observers, port: PortId) {
        if self.ports[port].paused {
            return;
        }
        let Some(end) = self.send_data(ctx, obs, port, ctx.now) else { return };
        if !self.ports[port].q.is_empty() {
            self.ports[port].again_at(port, ctx, end);
        }
    }

    /// Takes the head of port `port`'s data queue, if any, and puts it on the
    /// wire at `start` (now, or right after what is already committed).
    /// Returns the end of its serialization.
    fn send_data(&mut self, ctx: &mut Ctx, obs: &mut Observers, port: PortId, start: u64) -> Option<u64> {
        let now = ctx.now;
        let p = &mut self.ports[port];
        let pkt = self.rings.pop_front(&mut p.q)?;
        p.trim_run = 0;
        let sw = self.switch_of(self.port_node[port.ix()]).expect("a switch port");
        self.release(ctx, obs, sw, port, pkt);
        obs.on_queue(now, port, self.ports[port].data_bytes);
        // Control packets share this queue only with `control_queue = "shared"`.
        let data = ctx.pkts.get(pkt).kind == PacketKind::Data;
        if data && self.ports[port].marking & AT_DEQUEUE != 0 {
            self.mark_on_dequeue(ctx, obs, sw, port, pkt);
        }
        if self.sig.on && data {
            let p = &self.ports[port];
            // The bytes sent sit on the port's second line: read only for INT.
            let tx_total = if self.sig.int_on { p.tx_total } else { 0 };
            let e = crate::signal::egress::Egress { port, rate_bps: p.rate_bps, queue_bytes: p.data_bytes, tx_total };
            crate::signal::egress::on_depart(&self.signals, &mut self.sig, ctx, e, pkt);
        }
        Some(self.start_tx(ctx, obs, port, pkt, start))
    }

    /// A switch port puts `pkt` on the wire (and its ABW meter sees it).
    #[inline(always)]
    fn start_tx(&mut self, ctx: &mut Ctx, obs: &mut Observers, port: PortId, pkt: PktId, start: u64) -> u64 {
        // Only INT reads the bytes sent (its txBytes), kept on the port's
        // second line, and only CSIG's ABW types meter the port.
        if self.sig.on {
            let wire = ctx.pkts.get(pkt).wire as u64;
            if self.sig.int_on {
                self.ports[port].tx_total += wire;
            }
            if self.sig.abw_on {
                let end = start + crate::units::tx_time_ps(wire, self.ports[port].rate_bps);
                crate::signal::egress::on_tx(&self.signals, &mut self.sig, port, ctx.now, start, end);
            }
        }
        self.ports[port].start_tx(port, ctx, obs, pkt, start)
    }

    /// Sends a control packet on switch port `port`. Control has strict
    /// priority and is never paused, so its start time is known now: right
    /// after whatever is on the wire or already committed. It is committed at
    /// once, which saves the `TxDone` event a queued packet would need.
    ///
    /// Trimmed headers follow `switch.header_service`. `weighted` (the
    /// default) keeps a trimming fabric live: they take turns with waiting
    /// data by bytes. A trimmed header that would bring the trimmed bytes
    /// committed ahead of waiting data since the last data packet started
    /// above `header_weight` x the size of the data packet at the head of
    /// the queue lets that packet go first (committed now, to start after
    /// what is on the wire), so a stream of headers cannot starve data.
    /// `strict` never lets data go first, as htsim's header queue.
    pub(crate) fn push_ctrl(&mut self, ctx: &mut Ctx, obs: &mut Observers, port: PortId, pkt: PktId) {
        let now = ctx.now;
        let (wire, trimmed) = {
            let q = ctx.pkts.get(pkt);
            (q.wire as u64, q.flags & F_TRIMMED != 0)
        };
        if trimmed {
            let p = &self.ports[port];
            if let Some(&head) = self.rings.front(&p.q) {
                // Read only when headers meet waiting data: the switch's own setting.
                let sw = self.switch_of(self.port_node[port.ix()]).expect("a switch port");
                let allowance = self.switches[sw].cfg.header_allowance();
                if let Some(w) = allowance.filter(|_| !p.paused) {
                    if p.trim_run as u64 + wire > w.saturating_mul(ctx.pkts.get(head).wire as u64) {
                        let start = p.busy_until.max(now);
                        self.send_data(ctx, obs, port, start);
                    }
                }
            }
        }
        let p = &self.ports[port];
        let start = p.busy_until.max(now);
        // A switch's control class has a finite queue too: headers trimmed
        // faster than the port drains them (and ACKs behind them) are dropped.
        // PAUSE frames always go.
        if ctx.pkts.get(pkt).kind != PacketKind::Pause {
            let backlog = crate::units::bytes_in(start - now, p.rate_bps);
            if backlog + ctx.pkts.get(pkt).wire as u64 > p.ctrl_buffer as u64 && p.ctrl_buffer != u32::MAX {
                obs.on_drop(now, port);
                ctx.drop_packet(pkt);
                return;
            }
        }
        ctx.pkts.get_mut(pkt).enq_ps = now;
        if trimmed {
            // Only headers that went ahead of waiting data count.
            let p = &mut self.ports[port];
            // Saturating: past 2^32 - 1 bytes the run exceeds any packet anyway.
            p.trim_run = if p.q.is_empty() { 0 } else { p.trim_run.saturating_add(wire.min(u32::MAX as u64) as u32) };
        }
        self.start_tx(ctx, obs, port, pkt, start);
    }

    /// Cuts a data packet to its headers and forwards it as control.
    fn trim(&mut self, ctx: &mut Ctx, obs: &mut Observers, sw: SwitchId, out: PortId, pkt: PktId) {
        let keep = self.switches[sw].cfg.trim_size;
        let old = ctx.pkts.get(pkt).wire;
        if old > keep {
            ctx.stats.bytes_trimmed += (old - keep) as u64;
            ctx.pkts.set_wire(pkt, keep);
        }
        ctx.stats.packets_trimmed += 1;
        // A port that leads to a host is the packet's last hop (UET's last-hop trim).
        let last_hop = self.port_node[self.ports[out].peer.ix()].0 < self.num_hosts;
        ctx.pkts.get_mut(pkt).flags |= F_TRIMMED | if last_hop { F_TRIMMED_LAST_HOP } else { 0 };
        if self.sig.on {
            // The tag of a trimmed packet no longer describes a full packet's path.
            ctx.pkts.sig_mut(pkt).csig_d = true;
        }
        self.push_ctrl(ctx, obs, out, pkt);
    }

    fn send_pause(&mut self, ctx: &mut Ctx, obs: &mut Observers, port: PortId, xoff: bool) {
        let p = Packet { kind: PacketKind::Pause, flags: if xoff { F_XOFF } else { 0 }, wire: 64, ..Default::default() };
        if xoff {
            ctx.stats.pauses_sent += 1;
        } else {
            ctx.stats.resumes_sent += 1;
        }
        let id = ctx.inject(p);
        self.push_ctrl(ctx, obs, port, id);
    }

    /// Releases a queued packet's buffer as it starts transmission, or as
    /// it is taken off the tail to be trimmed. Inlined, as
    /// `switch_transmit` is: as calls their register saves cost more than
    /// the small bodies (-1.7% instructions on the 128-host NSCC case).
    #[inline(always)]
    pub(super) fn release(&mut self, ctx: &mut Ctx, obs: &mut Observers, sw: SwitchId, out: PortId, pkt: PktId) {
        let p = ctx.pkts.get(pkt);
        let (wire, flow, in_port) = (p.wire as u64, p.flow, p.in_port);
        let marking = self.ports[out].marking;
        if marking != NO_MARKING && self.markings[(marking & !AT_DEQUEUE) as usize].mode == EcnMode::Ecp && p.kind == PacketKind::Data {
            self.ports[out].occupancy.remove(flow, wire);
        }
        let s = &mut self.switches[sw];
        s.used -= wire;
        if s.mode.release(s, &mut self.ports, in_port, out, wire) {
            self.send_pause(ctx, obs, in_port, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{Port, SwitchMode};
    use crate::units::Size;

    /// A switch with `shared` bytes of shared buffer and the given configuration.
    fn switch(cfg: SwitchConfig, shared: u64, headroom: u64) -> Switch {
        Switch {
            name: "s0".into(),
            tier: 0,
            dmodk_divisor: 1,
            first_port: 0,
            num_ports: 4,
            reserved: cfg.reserved.0,
            dt_alpha: cfg.dt_alpha,
            mode: cfg.mode,
            routing: cfg.routing,
            control_queue: cfg.control_queue,
            cfg,
            shared_size: shared,
            shared_used: 0,
            used: 0,
            max_used: 0,
            headroom,
            hash_salt: 0,
            ecn_rng: Stream::new(1, 0, crate::rng::Purpose::SwitchEcn),
            spray_rng: Stream::new(1, 0, crate::rng::Purpose::SwitchSpray),
        }
    }

    #[test]
    fn egress_dynamic_threshold_admits_up_to_alpha_times_the_free_pool() {
        let cfg = SwitchConfig { reserved: Size(1000), dt_alpha: 1.0, ..Default::default() };
        let mut s = switch(cfg, 10_000, 0);
        let mut ports = vec![Port::new(crate::id::NodeId(4), 100_000_000_000, 1_000_000), Port::new(crate::id::NodeId(4), 100_000_000_000, 1_000_000)];
        let ok = Admission::Admitted { send_xoff: false };
        let admit = |s: &mut Switch, ports: &mut [Port], wire| SwitchMode::Lossy.admit(s, ports, PortId(0), PortId(1), wire);
        // The reservation first: no shared bytes taken.
        assert_eq!(admit(&mut s, &mut ports, 1000), ok);
        ports[1].data_bytes = 1000;
        assert_eq!(s.shared_used, 0);
        // Beyond it, a queue may hold alpha x free: with 10,000 free, 4,000 more
        // fits (4,000 <= 6,000 free after), 4,000 again does not (8,000 > 6,000).
        assert_eq!(admit(&mut s, &mut ports, 4000), ok);
        ports[1].data_bytes += 4000;
        assert_eq!(s.shared_used, 4000);
        assert_eq!(admit(&mut s, &mut ports, 4000), Admission::Refused);
        assert_eq!(s.shared_used, 4000, "a refused packet takes nothing");
        assert_eq!((SwitchMode::Lossy.on_refuse(), SwitchMode::Trim.on_refuse()), (Refusal::Drop, Refusal::Trim));
        // Releasing returns shared bytes before reserved ones.
        assert!(!SwitchMode::Lossy.release(&mut s, &mut ports, PortId(0), PortId(1), 3000));
        assert_eq!((s.shared_used, ports[1].data_bytes), (1000, 2000));
        SwitchMode::Trim.release(&mut s, &mut ports, PortId(0), PortId(1), 2000);
        assert_eq!((s.shared_used, ports[1].data_bytes), (0, 0));
    }

    #[test]
    fn pfc_sends_xoff_at_the_threshold_uses_headroom_then_xon_below_it() {
        let cfg = SwitchConfig { reserved: Size(0), mode: crate::net::SwitchMode::Pfc, ..Default::default() };
        let mut s = switch(cfg, 10_000, 3000);
        // Port 0 is the ingress, port 1 the egress; the thresholds are the ingress port's.
        let mut ports = vec![Port::new(crate::id::NodeId(4), 100_000_000_000, 1_000_000), Port::new(crate::id::NodeId(4), 100_000_000_000, 1_000_000)];
        (ports[0].pfc_alpha, ports[0].xon_delta) = (1.0, 1000);
        ports[1].data_bytes = 10_000;
        let pfc = SwitchMode::Pfc;
        // XOFF when the port's shared use reaches alpha x free: 5,000 used leaves 5,000 free.
        assert_eq!(pfc.admit(&mut s, &mut ports, PortId(0), PortId(1), 4000), Admission::Admitted { send_xoff: false });
        assert_eq!(pfc.admit(&mut s, &mut ports, PortId(0), PortId(1), 1000), Admission::Admitted { send_xoff: true });
        assert!(ports[0].xoff_sent);
        // Past XOFF the packet lands in headroom, and XOFF is not sent twice.
        assert_eq!(pfc.admit(&mut s, &mut ports, PortId(0), PortId(1), 2000), Admission::Admitted { send_xoff: false });
        assert_eq!((ports[0].in_bytes, ports[0].in_headroom), (5000, 2000));
        assert_eq!(pfc.admit(&mut s, &mut ports, PortId(0), PortId(1), 1500), Admission::Refused, "headroom overflow");
        // Draining empties headroom first; XON only once shared + xon_delta <= XOFF:
        // at 5,000 shared XOFF is 5,000 (5,000 + 1,000 > 5,000), at 4,000 it is 6,000.
        assert!(!pfc.release(&mut s, &mut ports, PortId(0), PortId(1), 2000));
        assert_eq!((ports[0].in_bytes, ports[0].in_headroom), (5000, 0));
        assert!(pfc.release(&mut s, &mut ports, PortId(0), PortId(1), 1000));
        assert!(!ports[0].xoff_sent);
        assert_eq!(ports[1].data_bytes, 7000, "the egress queue drains by what left");
    }

    #[test]
    fn the_forwarding_fields_fill_the_first_two_lines() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(align_of::<Switch>(), 64);
        assert_eq!(offset_of!(Switch, ecn_rng), 64);
        assert_eq!(offset_of!(Switch, dt_alpha) + size_of::<f64>(), 128);
    }

    #[test]
    fn red_never_marks_at_kmin_always_at_kmax_and_linearly_between() {
        let mut s = switch(SwitchConfig::default(), 10_000, 0);
        let ecn = EcnConfig {
            kmin: Size(100),
            kmax: Size(300),
            pmax: 0.5,
            mode: EcnMode::Red,
            root_threshold: None,
            pause_memory: crate::units::Time(0),
            fair_share: 1.0,
            max_flows: 1,
            drain_time: crate::units::Time(1),
        };
        assert!((0..1000).all(|_| !s.red(&ecn, 100)));
        assert!((0..1000).all(|_| s.red(&ecn, 300)));
        // Halfway: probability pmax / 2 = 0.25.
        let marks = (0..20_000).filter(|_| s.red(&ecn, 200)).count() as f64 / 20_000.0;
        assert!((marks - 0.25).abs() < 0.02, "{marks}");
    }
}

crate::id::index_by!(SwitchId => Switch);
