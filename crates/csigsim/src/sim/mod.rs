//! The engine: one event enum, one queue ordered by (time, sequence), and the
//! [`World`] that owns every port, switch, host and flow as dense vectors
//! indexed by id. A packet's departure from a port schedules its arrival at
//! the next node directly (serialization and propagation folded in), so an
//! unqueued packet costs one event per link; a port with a backlog adds one
//! `TxDone` per packet it sends from the backlog.

pub mod queue;
pub mod rng;

use crate::cc::{Cc, FlowParams};
use crate::net::routing::{Routes, SwitchGraph};
use crate::net::topology::NodeRef;
use crate::net::{packet::PacketArena, Port, Switch};
use crate::scenario::config::SwitchMode;
use crate::scenario::Scenario;
use crate::transport::{Flow, Host};
use crate::units::tx_time_ps;
use queue::EventQueue;
use rng::{Purpose, Stream};
use std::collections::VecDeque;

/// Everything that happens, as ids. Kept small: the heap moves these around.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A packet has fully arrived at the node that owns `port` (ingress side).
    Arrive { pkt: u32, port: u32 },
    /// `port` finished serializing and has a backlog to serve.
    TxDone { port: u32 },
    /// A host's NIC may have a paced flow ready.
    NicWake { host: u32 },
    FlowStart { flow: u32 },
    /// A flow's retransmission timer may be due.
    FlowTimer { flow: u32 },
    /// A flow's receiver may owe a coalesced ACK.
    AckTimer { flow: u32 },
    /// A flow's congestion controller asked for a timer.
    CcTimer { flow: u32 },
}

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

/// How a call to [`World::run`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunState {
    /// No events remain.
    Idle,
    /// The stop time was reached.
    Stopped,
    /// The event budget of this call ran out; call again to continue.
    Paused,
}

pub struct World {
    pub now: u64,
    pub stop_ps: Option<u64>,
    pub q: EventQueue,
    pub pkts: PacketArena,
    pub num_hosts: u32,
    pub ports: Vec<Port>,
    pub switches: Vec<Switch>,
    pub hosts: Vec<Host>,
    pub flows: Vec<Flow>,
    pub routes: Routes,
    pub sig: crate::signal::SignalRuntime,
    /// Packet capture, when asked for.
    pub capture: Option<crate::output::capture::Capture>,
    pub sc: Scenario,
    pub window_ps: u64,
    /// Per-packet link counters are kept only when links.csv is wanted.
    pub record_links: bool,
    pub stats: Stats,
    /// Largest data packet on the wire.
    pub max_packet: u64,
}

impl World {
    pub fn new(sc: Scenario) -> World {
        let topo = &sc.topology;
        let nh = topo.hosts.len() as u32;
        let ns = topo.switches.len();
        let node_of = |r: NodeRef| match r {
            NodeRef::Host(h) => h,
            NodeRef::Switch(s) => nh + s,
        };
        // Ports, grouped by node in link order.
        let mut node_ports: Vec<Vec<(usize, bool)>> = vec![Vec::new(); nh as usize + ns];
        for (i, l) in topo.links.iter().enumerate() {
            node_ports[node_of(l.a) as usize].push((i, true));
            node_ports[node_of(l.b) as usize].push((i, false));
        }
        let mut port_of_end = vec![[0u32; 2]; topo.links.len()];
        let mut ports = Vec::with_capacity(topo.links.len() * 2);
        let mut first_port = vec![0u32; node_ports.len()];
        for (n, list) in node_ports.iter().enumerate() {
            first_port[n] = ports.len() as u32;
            for &(li, is_a) in list {
                let l = &topo.links[li];
                port_of_end[li][if is_a { 0 } else { 1 }] = ports.len() as u32;
                ports.push(Port {
                    node: n as u32,
                    peer: 0,
                    rate_bps: l.rate.0,
                    delay_ps: l.delay.0,
                    busy_until: 0,
                    txdone_pending: false,
                    paused: false,
                    data: VecDeque::new(),
                    data_bytes: 0,
                    in_bytes: 0,
                    in_headroom: 0,
                    xoff_sent: false,
                    tx_total: 0,
                    last_pause_end: None,
                    occupancy: Default::default(),
                    mon: Default::default(),
                });
            }
        }
        for ends in &port_of_end {
            ports[ends[0] as usize].peer = ends[1];
            ports[ends[1] as usize].peer = ends[0];
        }
        let t = &sc.transport;
        let max_packet = (t.mtu + t.header) as u64;
        let sw = &sc.switch;
        let switches: Vec<Switch> = topo
            .switches
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let n = nh as usize + i;
                let fp = first_port[n];
                let np = node_ports[n].len() as u32;
                let headroom = if sw.mode == SwitchMode::Pfc {
                    (fp..fp + np).map(|p| pfc_headroom(sw, &ports[p as usize], max_packet)).max().unwrap_or(0)
                } else {
                    0
                };
                let reserved_total = sw.reserved.0 * np as u64 + headroom * np as u64;
                Switch {
                    name: s.name.clone(),
                    tier: s.tier,
                    dmodk_divisor: s.dmodk_divisor.max(1),
                    first_port: fp,
                    num_ports: np,
                    shared_size: sw.buffer.0.saturating_sub(reserved_total),
                    shared_used: 0,
                    used: 0,
                    max_used: 0,
                    headroom,
                    hash_salt: Stream::new(sc.seed, i as u64, Purpose::SwitchHash).next_u64(),
                    ecn_rng: Stream::new(sc.seed, i as u64, Purpose::SwitchEcn),
                    spray_rng: Stream::new(sc.seed, i as u64, Purpose::SwitchSpray),
                }
            })
            .collect();
        // Routing table over the switch graph.
        let mut attach_switch = vec![0u32; nh as usize];
        let mut attach_port = vec![0u32; nh as usize];
        let switch_ports: Vec<Vec<(u32, Option<u32>)>> = (0..ns)
            .map(|i| {
                let n = nh as usize + i;
                (first_port[n]..first_port[n] + node_ports[n].len() as u32)
                    .map(|p| {
                        let peer_node = ports[ports[p as usize].peer as usize].node;
                        if peer_node < nh {
                            attach_switch[peer_node as usize] = i as u32;
                            attach_port[peer_node as usize] = p;
                            (p, None)
                        } else {
                            (p, Some(peer_node - nh))
                        }
                    })
                    .collect()
            })
            .collect();
        let routes = Routes::build(&SwitchGraph { switch_ports: &switch_ports }, attach_switch, attach_port);
        let hosts: Vec<Host> = (0..nh)
            .map(|h| Host { port: first_port[h as usize], ring: VecDeque::new(), wake_at: u64::MAX })
            .collect();
        let sig = signal_runtime(&sc, &ports, &switches, nh);
        let mut w = World {
            now: 0,
            stop_ps: sc.stop.map(|s| s.0),
            q: EventQueue::new(),
            pkts: PacketArena::with_signals(sc.signals.any(), sc.signals.int.is_some()),
            sig,
            capture: None,
            num_hosts: nh,
            ports,
            switches,
            hosts,
            flows: Vec::with_capacity(sc.flows.len()),
            routes,
            window_ps: sc.monitor.window.0.max(1),
            record_links: sc.monitor.links,
            stats: Stats::default(),
            max_packet,
            sc,
        };
        // Defaults an algorithm derives from the whole network (NSCC's network RTT).
        let base_rtts: Vec<u64> = w.sc.flows.iter().map(|f| w.base_rtt(f.src, f.dst)).collect();
        let mut cc_config = w.sc.transport.cc_config();
        cc_config.prepare(&base_rtts);
        for (i, &base_rtt_ps) in base_rtts.iter().enumerate() {
            let f = &w.sc.flows[i];
            let (src, dst) = (f.src, f.dst);
            let port = &w.ports[w.hosts[src as usize].port as usize];
            let t = &w.sc.transport;
            let params = FlowParams {
                line_rate_bps: port.rate_bps,
                base_rtt_ps,
                mss: t.mtu,
                packet_bytes: t.mtu + t.header + w.sig.tag_bytes + w.sig.int_bytes,
                hops: w.path_hops(src, dst),
            };
            let cc = Cc::new(&cc_config, &params);
            let entropy = Stream::new(w.sc.seed, i as u64, Purpose::FlowEntropy).next_u64() as u32;
            let flow = Flow::new(i as u32, f, &w.sc.transport, cc, entropy, params.base_rtt_ps, w.sc.seed);
            w.q.push(f.start.0, Event::FlowStart { flow: i as u32 });
            w.flows.push(flow);
        }
        w
    }

    /// Unloaded round trip from `src` to `dst`: a full data packet out along
    /// the first equal-cost path, an ACK back along the first reverse path.
    pub fn base_rtt(&self, src: u32, dst: u32) -> u64 {
        let t = &self.sc.transport;
        self.path_latency(src, dst, (t.mtu + t.header) as u64).0 + self.path_latency(dst, src, t.ack_size as u64).0
    }

    /// Store-and-forward latency of one packet of `bytes` from `src` to `dst`
    /// on an idle network (first equal-cost path), and the path's slowest rate.
    pub fn path_latency(&self, src: u32, dst: u32, bytes: u64) -> (u64, u64) {
        let mut port = self.hosts[src as usize].port;
        let (mut total, mut slowest) = (0, u64::MAX);
        for _ in 0..256 {
            let p = &self.ports[port as usize];
            total += tx_time_ps(bytes, p.rate_bps) + p.delay_ps;
            slowest = slowest.min(p.rate_bps);
            let node = self.ports[p.peer as usize].node;
            if node < self.num_hosts {
                break;
            }
            port = self.routes.candidates(node - self.num_hosts, dst)[0];
        }
        (total, slowest)
    }

    /// Links on the first equal-cost path from `src` to `dst`.
    pub fn path_hops(&self, src: u32, dst: u32) -> u32 {
        let mut port = self.hosts[src as usize].port;
        for hops in 1..=256 {
            let node = self.ports[self.ports[port as usize].peer as usize].node;
            if node < self.num_hosts {
                return hops;
            }
            port = self.routes.candidates(node - self.num_hosts, dst)[0];
        }
        256
    }

    pub fn node_name(&self, node: u32) -> &str {
        if node < self.num_hosts {
            &self.sc.topology.hosts[node as usize]
        } else {
            &self.switches[(node - self.num_hosts) as usize].name
        }
    }

    /// Runs every event up to and including time `t` (or until the queue
    /// empties or the scenario's stop time); returns whether events remain.
    pub fn run_until(&mut self, t: u64) -> bool {
        let stop = self.stop_ps;
        self.stop_ps = Some(stop.map_or(t, |s| s.min(t)));
        let state = self.run(u64::MAX);
        self.stop_ps = stop;
        state != RunState::Idle
    }

    /// Runs until the queue is empty, the stop time, or `max_events` events.
    pub fn run(&mut self, max_events: u64) -> RunState {
        let mut budget = max_events;
        while let Some(t) = self.q.peek_time() {
            if let Some(stop) = self.stop_ps {
                if t > stop {
                    self.now = stop;
                    return RunState::Stopped;
                }
            }
            if budget == 0 {
                return RunState::Paused;
            }
            budget -= 1;
            let (t, ev) = self.q.pop().expect("peeked");
            // Stale timers (a finished flow's retransmission timer, an ACK timer
            // whose ACK already went) are not activity: they must not stretch
            // the simulated time of the run.
            match ev {
                Event::FlowTimer { flow } => {
                    let f = &self.flows[flow as usize];
                    if f.sender_done_ps.is_some() || f.rto_at == u64::MAX {
                        self.flows[flow as usize].timer_pending = false;
                        continue;
                    }
                }
                Event::AckTimer { flow } if self.flows[flow as usize].ack_at != t => continue,
                Event::CcTimer { flow } if self.flows[flow as usize].cc_timer_at != t => continue,
                _ => {}
            }
            self.now = t;
            match ev {
                Event::Arrive { pkt, port } => self.on_arrive(pkt, port),
                Event::TxDone { port } => {
                    let p = &mut self.ports[port as usize];
                    if p.busy_until > t {
                        // Control packets were committed behind the packet that
                        // just finished: serve the backlog after them.
                        let at = p.busy_until;
                        self.q.push(at, Event::TxDone { port });
                    } else {
                        p.txdone_pending = false;
                        self.try_transmit(port);
                    }
                }
                Event::NicWake { host } => {
                    if self.hosts[host as usize].wake_at == t {
                        self.hosts[host as usize].wake_at = u64::MAX;
                        self.kick(self.hosts[host as usize].port);
                    }
                }
                Event::FlowStart { flow } => self.on_flow_start(flow),
                Event::FlowTimer { flow } => self.on_flow_timer(flow),
                Event::AckTimer { flow } => self.on_ack_timer(flow),
                Event::CcTimer { flow } => self.on_cc_timer(flow),
            }
        }
        RunState::Idle
    }

    /// A packet arrived at the node owning `port`.
    fn on_arrive(&mut self, pkt: u32, port: u32) {
        let node = self.ports[port as usize].node;
        if node < self.num_hosts {
            self.host_receive(node, pkt, port);
        } else {
            self.switch_receive(node - self.num_hosts, pkt, port);
        }
    }

    /// Starts the port's transmitter now if it is idle, or makes sure a
    /// `TxDone` will serve it when the current packet is out.
    #[inline]
    pub fn kick(&mut self, port: u32) {
        let p = &mut self.ports[port as usize];
        if p.txdone_pending {
            return;
        }
        if p.busy_until <= self.now {
            self.try_transmit(port);
        } else {
            p.txdone_pending = true;
            let at = p.busy_until;
            self.q.push(at, Event::TxDone { port });
        }
    }

    /// The transmitter is free: send the next packet, if any.
    fn try_transmit(&mut self, port: u32) {
        let node = self.ports[port as usize].node;
        let next = if node < self.num_hosts { self.nic_next(node) } else { self.switch_next(port) };
        let Some(pkt) = next else { return };
        if self.sig.on && node >= self.num_hosts {
            self.signal_egress(port, pkt);
        }
        let end = self.start_tx(port, pkt, self.now);
        let p = &self.ports[port as usize];
        let backlog = !p.data.is_empty() || (node < self.num_hosts && !self.hosts[node as usize].ring.is_empty());
        if backlog {
            self.ports[port as usize].txdone_pending = true;
            self.q.push(end, Event::TxDone { port });
        }
    }

    /// Puts `pkt` on the wire of `port` at `start` (now, or later for a control
    /// packet committed behind the packet on the wire) and schedules its
    /// arrival at the far end. Returns the end of its serialization.
    #[inline]
    pub(crate) fn start_tx(&mut self, port: u32, pkt: u32, start: u64) -> u64 {
        let now = self.now;
        let p = &mut self.ports[port as usize];
        let wire = self.pkts.get(pkt).wire as u64;
        let end = start + tx_time_ps(wire, p.rate_bps);
        p.busy_until = end;
        p.tx_total += wire;
        if self.sig.abw_on {
            if let Some(cs) = &self.sc.signals.csig {
                self.sig.abw[port as usize].on_tx(now, start, end, cs.abw_interval_ps, cs.abw_ewma);
            }
        }
        if self.record_links {
            p.mon.on_tx(now, start, end, wire, self.window_ps);
        }
        let arrive_at = end + p.delay_ps;
        let peer = p.peer;
        if self.capture.is_some() {
            self.capture(port, pkt, start);
        }
        self.pkts.get_mut(pkt).hops += 1;
        self.stats.link_hops += 1;
        self.q.push(arrive_at, Event::Arrive { pkt, port: peer });
        end
    }

    /// Allocates a packet and counts it as injected.
    #[inline]
    pub fn inject(&mut self, p: crate::net::packet::Packet) -> u32 {
        self.stats.packets_injected += 1;
        self.stats.bytes_injected += p.wire as u64;
        self.pkts.alloc(p)
    }

    /// A packet reached its destination host and leaves the network.
    #[inline]
    pub fn consume(&mut self, pkt: u32) {
        self.stats.packets_delivered += 1;
        self.stats.bytes_delivered += self.pkts.get(pkt).wire as u64;
        self.pkts.free(pkt);
    }

    /// A packet was dropped at a switch.
    #[inline]
    pub fn drop_packet(&mut self, pkt: u32) {
        self.stats.packets_dropped += 1;
        self.stats.bytes_dropped += self.pkts.get(pkt).wire as u64;
        self.pkts.free(pkt);
    }

    /// Closes the monitor windows at the end of the run.
    pub fn finish(&mut self) {
        let end = self.now;
        for p in &mut self.ports {
            p.mon.finish(end, self.window_ps);
        }
        for f in &mut self.flows {
            f.sigmon.finish();
            f.ccmon.finish();
        }
    }

    /// End-of-run invariants; an empty list means all hold.
    pub fn check_invariants(&self) -> Vec<String> {
        let mut bad = Vec::new();
        let s = &self.stats;
        let (live, live_bytes) = self.pkts.live();
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
        for sw in &self.switches {
            if sw.max_used > self.sc.switch.buffer.0 {
                bad.push(format!("switch {} held {} bytes, above its {} byte buffer", sw.name, sw.max_used, self.sc.switch.buffer.0));
            }
        }
        for f in &self.flows {
            if f.finish_ps.is_some() && f.rcv_nxt != f.npkts {
                bad.push(format!("flow {} finished without all its packets", f.id));
            }
        }
        bad
    }
}

/// PFC headroom of an ingress port: what arrives after XOFF is sent, while
/// the PAUSE crosses the link and the upstream finishes its current packet.
pub fn pfc_headroom(sw: &crate::scenario::config::SwitchConfig, p: &Port, max_packet: u64) -> u64 {
    if let Some(h) = sw.pfc.headroom {
        return h.0;
    }
    2 * crate::units::bytes_in(p.delay_ps, p.rate_bps) + 2 * max_packet + 64
}

/// Per-port CSIG actions, locators and ABW meters.
fn signal_runtime(sc: &Scenario, ports: &[Port], switches: &[Switch], nh: u32) -> crate::signal::SignalRuntime {
    use crate::signal::csig::{locator, PortAction, SignalType};
    let setup = &sc.signals;
    let mut rt = crate::signal::SignalRuntime { on: setup.any(), ..Default::default() };
    if let Some(cs) = &setup.csig {
        rt.tag_bytes = cs.size.bytes();
        rt.abw_on = matches!(cs.sig, SignalType::Abw | SignalType::AbwC);
        rt.action = vec![PortAction::Update; ports.len()];
        rt.locator = vec![0; ports.len()];
        for (si, s) in switches.iter().enumerate() {
            for j in 0..s.num_ports {
                let pid = (s.first_port + j) as usize;
                let peer = ports[ports[pid].peer as usize].node;
                // Down: towards a host or a lower tier; between equals, towards the lower index.
                let down = if peer < nh {
                    true
                } else {
                    let ps = &switches[(peer - nh) as usize];
                    ps.tier < s.tier || (ps.tier == s.tier && peer - nh < si as u32)
                };
                rt.action[pid] = setup.action(&s.name, s.tier, j);
                rt.locator[pid] = locator(cs.lm_bits, s.tier, down, si as u32, j);
            }
        }
        if rt.abw_on {
            rt.abw = vec![Default::default(); ports.len()];
        }
    }
    if let Some(ic) = &setup.int {
        rt.int_bytes = ic.overhead();
    }
    rt
}
