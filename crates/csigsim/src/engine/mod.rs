//! The assembled simulation: a [`World`] is built from a validated
//! [`Scenario`] and owns the components (the network, the transport, the
//! observers) and the context they act through. It dispatches each event of
//! the loop in [`crate::sim`] to the component that owns its id.

use crate::monitor::Observers;
use crate::net::{Network, PathMemo, Port, Switch};
use crate::packet::PacketArena;
use crate::scenario::Scenario;
use crate::rng::{Purpose, Stream};
use crate::id::{FlowId, HostId, NodeId, PortId, SwitchId};
use crate::sim::{Ctx, Event, Handler, PackedEvent, RunState, Stats};
use crate::transport::{FlowBuild, FlowInit, FlowRecord, FlowShared, FlowStore, HostPort, Transport};

pub mod parallel;
pub mod threads;

/// The components of a running simulation.
pub struct Components {
    pub(crate) net: Network,
    pub(crate) transport: Transport,
    pub(crate) obs: Observers,
    /// How many events apart the stages of [`Handler::prefetch`] run; 0:
    /// no stages (see `DEEP_PREFETCH_PORTS`, `FAR_PREFETCH_PORTS`).
    prefetch_spacing: usize,
}

/// Fabrics of more ports than this prefetch what the next events read (a
/// backlogged port, its queue and packet; a NIC and its head flow; an
/// arrival's route entry, switch and egress port, or its flow at a host)
/// ahead. Below, the state stays in the caches and the prefetches would
/// cost instructions for nothing: 4096 ports of 192 bytes fill most of a
/// 1 MiB second-level cache. A 128-host fat tree has 768 ports, a 1024-host
/// one 6144.
const DEEP_PREFETCH_PORTS: usize = 4096;

/// Fabrics of more ports than this run the prefetch stages four events
/// apart instead of one. Their state (87 MB at 8192 hosts, 49,152 ports)
/// is in memory rather than the shared cache, and one event's time (about
/// 150 ns there) is too short for a line to arrive before the next stage
/// reads it: on `nscc_uec_permutation_8192`, -17% of CPU time in the
/// medians of alternated runs (14.3 s apart by one, 11.8 s by four); on
/// the 1024-host case (6,144 ports, 17 MB, about 80 ns an event) four
/// apart cost +9%.
const FAR_PREFETCH_PORTS: usize = 16384;
/// The stages' spacing in events on those fabrics.
const FAR_PREFETCH_SPACING: usize = 4;

/// A simulation: its context, its components and the scenario it runs.
pub struct World {
    pub(crate) ctx: Ctx,
    pub(crate) c: Components,
    stop_ps: Option<u64>,
    pub(crate) sc: Scenario,
    /// Events a flow-level run handled beyond those of this world's queue.
    pub(crate) fluid_events: u64,
}

impl Components {
    /// The NIC port of `host`, handed to the transport.
    #[inline]
    fn host_port(net: &mut Network, host: HostId) -> HostPort<'_> {
        let (id, port) = net.host_port_mut(host);
        HostPort { id, port }
    }
}

impl Handler for Components {
    // Inlined into the loop: as a call it cost 6% more instructions.
    #[inline(always)]
    fn is_stale(&mut self, t: u64, ev: Event) -> bool {
        // A link change once every flow is done changes nothing and must not
        // stretch the run.
        if let Event::LinkChange { .. } = ev {
            return self.transport.all_finished();
        }
        self.transport.is_stale(t, ev)
    }

    // Inlined into the loop (one queue's and a partition's): as a call it
    // cost 3% more instructions on one queue.
    #[inline(always)]
    fn handle(&mut self, ctx: &mut Ctx, ev: Event) {
        let Components { net, transport, obs, .. } = self;
        match ev {
            Event::Arrive { pkt, port } => {
                let node = net.port_node[port.ix()];
                match net.host_of(node) {
                    Some(host) => {
                        let mut hp = HostPort { id: port, port: &mut net.ports[port] };
                        transport.host_receive(ctx, obs, &mut hp, host, pkt);
                    }
                    None => net.switch_receive(ctx, obs, SwitchId(node.0 - net.num_hosts()), pkt, port),
                }
            }
            Event::TxDone { port } => {
                if !net.ports[port].tx_done(port, ctx) {
                    return;
                }
                let node = net.port_node[port.ix()];
                match net.host_of(node) {
                    Some(host) => {
                        let mut hp = HostPort { id: port, port: &mut net.ports[port] };
                        transport.transmit(ctx, obs, &mut hp, host);
                    }
                    None => net.switch_transmit(ctx, obs, port),
                }
            }
            Event::NicWake { host } => transport.on_nic_wake(ctx, obs, &mut Self::host_port(net, host), host),
            Event::FlowStart { flow } => {
                let src = transport.flows.src(flow);
                transport.on_flow_start(ctx, obs, &mut Self::host_port(net, src), flow)
            }
            Event::FlowTimer { flow } => {
                let src = transport.flows.src(flow);
                transport.on_flow_timer(ctx, obs, &mut Self::host_port(net, src), flow)
            }
            Event::AckTimer { flow } => {
                let dst = transport.flows.dst(flow);
                transport.on_ack_timer(ctx, obs, &mut Self::host_port(net, dst), flow)
            }
            Event::CcTimer { flow } => {
                let src = transport.flows.src(flow);
                transport.on_cc_timer(ctx, obs, &mut Self::host_port(net, src), flow)
            }
            Event::LinkChange { change } => net.link_change(ctx, obs, change),
            Event::AppTimer { op } => transport.apps.timer(ctx, op),
        }
    }

    // Always inlined: the loop calls it with a constant stage, three times
    // an event, and a call's own work cost about a tenth of the loop's
    // instructions at 1024 hosts.
    #[inline(always)]
    fn prefetch(&self, pkts: &PacketArena, ev: PackedEvent, stage: usize) {
        // Read from the packed form: unpacking every event three stages
        // ahead cost more than the rest of the loop's bookkeeping.
        match (ev.tx_done(), ev.arrival()) {
            // A port with a backlog is served one packet time after it was
            // last touched: on a large fabric its lines, the slot of its
            // queue's head and the packet in it have left the cache by then.
            // Each is asked for one event after the line it is found from
            // (a demand load here would stall the loop as long as a miss in
            // the handler).
            (Some(port), _) => {
                let p = &self.net.ports[port];
                match stage {
                    3 => {
                        // One line: queue, transmitter and flags.
                        crate::sim::prefetch(p);
                        // A NIC's stages start from its host (the port's
                        // own line is not in yet: the node from the dense
                        // copy); a switch port's node is read when it is
                        // served, and asked for now.
                        if self.net.is_host_port(port) {
                            self.prefetch_nic(self.net.port_node[port.ix()], 3);
                        } else {
                            crate::sim::prefetch(&self.net.port_node[port.ix()]);
                        }
                    }
                    2 => match self.net.rings.front(&p.q) {
                        Some(slot) => crate::sim::prefetch(slot),
                        // A NIC: its ring of flows, then the flow to send.
                        None => self.prefetch_nic_port(port, 2),
                    },
                    _ => match self.net.rings.front(&p.q) {
                        Some(&pkt) => {
                            crate::sim::prefetch(pkts.get(pkt));
                            // The egress functions read and write its signals.
                            crate::sim::prefetch_signals(pkts, pkt);
                        }
                        None => self.prefetch_nic_port(port, 1),
                    },
                }
            }
            // An arrival reads its packet and the node of its port; at a
            // switch then the route entry and the egress port, at a host its
            // flow's fields and the word of the flow's bitmap: each asked for
            // an event after what it is found from.
            (None, Some((pkt, port))) => {
                if stage == 3 {
                    crate::sim::prefetch(pkts.get(pkt));
                    crate::sim::prefetch(&self.net.port_node[port.ix()]);
                } else {
                    let node = self.net.port_node[port.ix()];
                    match self.net.switch_of(node) {
                        Some(sw) => self.net.prefetch_forward(sw, pkts.get(pkt), stage, self.prefetch_spacing >= FAR_PREFETCH_SPACING),
                        // At a host: the flow's state and the packet's
                        // signals, then the word of its bitmap.
                        None => {
                            let p = pkts.get(pkt);
                            if stage == 2 {
                                crate::sim::prefetch_signals(pkts, pkt);
                                if p.kind != crate::packet::PacketKind::Data {
                                    self.obs.prefetch_ack(p.flow);
                                }
                            }
                            self.transport.prefetch_receive(p, stage)
                        }
                    }
                }
            }
            (None, None) => {}
        }
    }

    fn prefetch_spacing(&self) -> usize {
        self.prefetch_spacing
    }
}

impl Components {
    /// [`Components::prefetch_nic`] of the node of `port`, read only if the
    /// port is a host's.
    #[inline(always)]
    fn prefetch_nic_port(&self, port: PortId, stage: usize) {
        if self.net.is_host_port(port) {
            self.prefetch_nic(self.net.port_node[port.ix()], stage);
        }
    }

    /// The prefetch stage `stage` of a `TxDone` at the port of `node`, if a
    /// host's.
    #[inline]
    fn prefetch_nic(&self, node: NodeId, stage: usize) {
        if let Some(host) = self.net.host_of(node) {
            self.transport.prefetch_nic(host, stage);
        }
    }
}

impl World {
    pub fn new(sc: Scenario) -> World {
        let t = &sc.transport;
        let max_packet = (t.mtu + t.header) as u64;
        let mut net = Network::new(&sc.topology, &sc.switch, max_packet, &sc.signals, sc.seed);
        let mut ctx = Ctx::new(PacketArena::with_signals(sc.signals.any(), sc.signals.int.is_some()));
        let (tag_bytes, int_bytes) = net.signal_bytes();
        // Defaults an algorithm derives from the whole network (NSCC's
        // network RTT and trimming, the credits' network RTT).
        let mut build = FlowBuild::new(t, t.mtu + t.header + tag_bytes + int_bytes, sc.seed);
        let trimming = sc.switch.mode.on_refuse() == crate::net::mode::Refusal::Trim;
        let nflows = sc.flow_count();
        // The flow level runs no congestion control: it does not need the
        // fabric's RTT, a walk of every pair of edge switches.
        let flow_level = sc.engine.fidelity == crate::scenario::config::Fidelity::Flow;
        let network_rtt = if nflows == 0 || flow_level { 0 } else { net.fabric_rtt(max_packet, t.ack_size as u64) };
        build.prepare(&crate::cc::Fabric { network_rtt, trimming });
        let mut apps = crate::workload::app::Apps::new(&sc.workloads);
        let mut flows = FlowStore::with_capacity(nflows, build);
        // Each flow's base RTT (`Network::base_rtt`: a full packet out, an
        // ACK back) and links, walked once per run of flows of one pair.
        let (mut out, mut back) = (PathMemo::new(&net), PathMemo::new(&net));
        // Another job's flows, in a run of one job alone: never started.
        let muted: Vec<std::ops::Range<u32>> =
            (0..sc.workloads.len()).filter(|&k| sc.muted(k)).map(|k| sc.workloads[k].first..sc.workloads[k].first + sc.workloads[k].len()).collect();
        sc.for_each_flow(|id, f, waits| {
            let path = out.walk(&net, f.src, f.dst, max_packet);
            let base_rtt_ps = path.latency_ps + back.walk(&net, f.dst, f.src, t.ack_size as u64).latency_ps;
            let hops = path.hops;
            let line_rate_bps = net.ports()[net.host_port(f.src)].rate_bps();
            let entropy = Stream::new(sc.seed, id.0 as u64, Purpose::FlowEntropy).next_u64() as u32;
            let spec = FlowInit { src: f.src, dst: f.dst, size: f.size, start_ps: f.start.0, rate_cap: f.rate_cap, name: &f.name };
            flows.push(&FlowRecord::new(id, &spec, t.mtu, entropy, base_rtt_ps, line_rate_bps, hops));
            // A flow that waits for others is started by its application.
            if !waits && !muted.iter().any(|r| r.contains(&id.0)) {
                ctx.push(f.start.0, Event::FlowStart { flow: id });
            }
        });
        apps.start(&mut ctx, |k| sc.muted(k));
        net.schedule_failures(&sc.failures, &mut ctx);
        let shared = FlowShared { t: sc.transport.clone(), csig: sc.signals.csig.clone(), stamp: sc.signals.stamp, tag_bytes, int_bytes };
        let nports = net.ports().len();
        let m = &sc.monitor;
        let mut obs = Observers::new(m.window.0.max(1), nports, flows.len(), m.links, sc.signals.any(), m.cc, m.idle_rows);
        if !sc.jobs.is_empty() {
            let w = &sc.workloads;
            obs.attach_jobs(sc.jobs.iter().map(|j| (w[j.workload].first, w[j.workload].first + w[j.workload].len())).collect(), nports);
        }
        // A flow's state is built when it starts and retired when it is over.
        ctx.pkts.count_flows(flows.len());
        let mut transport = Transport::new(sc.topology.hosts.len(), flows, shared);
        transport.apps = apps;
        if let (Some(plan), Some(cfg)) = (&sc.connections, sc.transport.connection) {
            transport.set_connections(crate::transport::connection::Connections::new(cfg, plan));
        }
        let prefetch_spacing = match net.ports().len() {
            n if n > FAR_PREFETCH_PORTS => FAR_PREFETCH_SPACING,
            n if n > DEEP_PREFETCH_PORTS => 1,
            _ => 0,
        };
        // Where the stages run far apart, the pending events outgrow the
        // caches too.
        ctx.q.fetch_ahead_blocks(prefetch_spacing >= FAR_PREFETCH_SPACING);
        World { ctx, c: Components { net, transport, obs, prefetch_spacing }, stop_ps: sc.stop.map(|s| s.0), sc, fluid_events: 0 }
    }

    /// Runs until the queue is empty, the stop time, or `max_events` events.
    pub fn run(&mut self, max_events: u64) -> RunState {
        self.run_to(max_events, None)
    }

    /// Runs until the queue is empty, `max_events` events, or the first event
    /// after `until` or the scenario's stop time, whichever is earlier. The
    /// answer is `Stopped` at either time: at the stop time [`World::now`]
    /// is the stop time, at `until` it stays the time of the last event
    /// handled. Stopping at `until` changes no output: the next event runs
    /// when the run is resumed.
    pub fn run_to(&mut self, max_events: u64, until: Option<u64>) -> RunState {
        let stop = match (self.stop_ps, until) {
            (Some(s), Some(u)) => Some(s.min(u)),
            (s, u) => s.or(u),
        };
        let state = crate::sim::run(&mut self.ctx, stop, max_events, &mut self.c);
        if state == RunState::Stopped && stop == self.stop_ps {
            self.ctx.now = stop.expect("stopped at a time");
        }
        state
    }

    /// Runs every event up to and including time `t` (or until the queue
    /// empties or the scenario's stop time), and the clock to `t` (or the
    /// stop time) if events remain; returns whether events remain.
    pub fn run_until(&mut self, t: u64) -> bool {
        let stop = self.stop_ps.map_or(t, |s| s.min(t));
        let state = crate::sim::run(&mut self.ctx, Some(stop), u64::MAX, &mut self.c);
        if state == RunState::Stopped {
            self.ctx.now = stop;
        }
        state != RunState::Idle
    }

    /// Moves the clock to `t` if it is later: the run has seen every event
    /// up to `t` and found nothing to do (a watchdog's look at a stalled
    /// run). Only for a world that will not run on.
    pub(crate) fn advance_to(&mut self, t: u64) {
        self.ctx.now = self.ctx.now.max(t);
    }

    /// Closes the monitor windows at the end of the run, and lets the
    /// workloads drop what only a running world needs. Nothing runs after.
    pub fn finish(&mut self) {
        self.c.obs.finish(self.ctx.now);
        self.c.transport.apps.end();
    }

    /// The simulated time now, in picoseconds.
    pub fn now(&self) -> u64 {
        self.ctx.now
    }

    /// The scenario's stop time, if it has one.
    pub fn stop_ps(&self) -> Option<u64> {
        self.stop_ps
    }

    /// Events handled so far.
    pub fn events(&self) -> u64 {
        self.ctx.q.popped() + self.fluid_events
    }

    pub fn stats(&self) -> &Stats {
        &self.ctx.stats
    }

    pub fn scenario(&self) -> &Scenario {
        &self.sc
    }

    pub fn network(&self) -> &Network {
        &self.c.net
    }

    /// Every flow's record (what it is and what came of it so far), in
    /// flow order: a copy, made at each call.
    pub fn flows(&self) -> Vec<FlowRecord> {
        self.c.transport.flows().records().collect()
    }

    /// The flows: their records, and the states of those in progress.
    pub fn flow_store(&self) -> &FlowStore {
        self.c.transport.flows()
    }

    /// The state of flow `i` (its sender, receiver and controller), while
    /// it has one: from its start until it is over, or to the end of the
    /// run after [`World::keep_flow_states`].
    pub fn flow_state(&self, i: usize) -> Option<&crate::transport::Flow> {
        self.c.transport.flows().get(FlowId(i as u32))
    }

    /// Keeps every flow's state to the end of the run, to read controllers
    /// and senders after their flows are over; call before the run. By
    /// default a flow's state is dropped once nothing of the flow can act
    /// again (its record stays), which is what lets collectives of millions
    /// of short flows fit in memory. Outputs are the same either way.
    pub fn keep_flow_states(&mut self) {
        self.c.transport.flows.keep_states();
        self.ctx.pkts.stop_counting_flows();
    }

    /// When each operation of workload `k`'s graph began and was complete
    /// (`u64::MAX`: not yet), if workload `k` of [`Scenario::workloads`]
    /// (0: the `[[flow]]` entries, then the `[[workload]]` tables) is a
    /// graph ([`crate::workload::Flows::Dag`]).
    pub fn op_times(&self, k: usize) -> Option<(&[u64], &[u64])> {
        self.c.transport.apps.op_times(k)
    }

    /// The connections of several queue pairs, when the scenario has `[transport.connection]`.
    pub fn connections(&self) -> Option<&crate::transport::connection::Connections> {
        self.c.transport.connections()
    }

    pub fn ports(&self) -> &[Port] {
        self.c.net.ports()
    }

    pub fn switches(&self) -> &[Switch] {
        self.c.net.switches()
    }

    pub fn observers(&self) -> &Observers {
        &self.c.obs
    }

    pub(crate) fn observers_mut(&mut self) -> &mut Observers {
        &mut self.c.obs
    }

    /// Hands the monitors' closed rows to `sink` as the run goes instead of
    /// keeping them ([`Observers::stream_to`]); attach before running.
    pub fn stream_monitors_to(&mut self, sink: Box<dyn crate::monitor::RowSink>) {
        self.c.obs.stream_to(sink);
    }

    /// Unloaded round trip from `src` to `dst`: a full data packet out along
    /// the first equal-cost path, an ACK back along the first reverse path.
    pub fn base_rtt(&self, src: HostId, dst: HostId) -> u64 {
        let t = &self.sc.transport;
        self.c.net.base_rtt(src, dst, (t.mtu + t.header) as u64, t.ack_size as u64)
    }

    /// Store-and-forward latency of one packet of `bytes` from `src` to `dst`
    /// on an idle network (first equal-cost path), and the path's slowest rate.
    pub fn path_latency(&self, src: HostId, dst: HostId, bytes: u64) -> (u64, u64) {
        self.c.net.path_latency(src, dst, bytes)
    }

    pub fn node_name(&self, node: NodeId) -> &str {
        match self.c.net.switch_of(node) {
            None => &self.sc.topology.hosts[node.ix()],
            Some(s) => self.c.net.switches()[s].name(),
        }
    }

    /// The port of the directed link from node `from` to node `to` (by name).
    pub fn port_between(&self, from: &str, to: &str) -> Option<PortId> {
        let ports = self.ports();
        (0..ports.len() as u32).map(PortId).find(|&p| {
            let port = &ports[p];
            self.node_name(port.node()) == from && self.node_name(ports[port.peer()].node()) == to
        })
    }

    /// End-of-run invariants; an empty list means all hold.
    pub fn check_invariants(&self) -> Vec<String> {
        let mut bad = Vec::new();
        let s = &self.ctx.stats;
        let (live, live_bytes) = self.ctx.pkts.live();
        if s.bytes_injected != s.bytes_delivered + s.bytes_dropped + s.bytes_trimmed + s.bytes_stripped + live_bytes {
            bad.push(format!(
                "bytes not conserved: injected {} != delivered {} + dropped {} + trimmed {} + stripped tags {} + in flight {}",
                s.bytes_injected, s.bytes_delivered, s.bytes_dropped, s.bytes_trimmed, s.bytes_stripped, live_bytes
            ));
        }
        if s.packets_injected != s.packets_delivered + s.packets_dropped + live {
            bad.push(format!(
                "packets not conserved: injected {} != delivered {} + dropped {} + in flight {}",
                s.packets_injected, s.packets_delivered, s.packets_dropped, live
            ));
        }
        for sw in self.switches() {
            if sw.max_used() > sw.cfg.buffer.0 {
                bad.push(format!("switch {} held {} bytes, above its {} byte buffer", sw.name(), sw.max_used(), sw.cfg.buffer.0));
            }
        }
        for f in self.flow_store().records() {
            if f.finish_ps.is_some() && f.rcv_nxt != f.npkts {
                bad.push(format!("flow {} finished without all its packets", f.id));
            }
        }
        bad
    }
}
