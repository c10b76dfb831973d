//! The network: ports (one per end of each full-duplex link), switches with a
//! shared buffer, routing and the forwarding path.
//!
//! [`Network`] owns the ports, the switches and the routing table, each
//! switch with the configuration resolved for it and each egress port with
//! its own ECN marking. Host NICs live in the transport; they own their host's
//! port through `Network::host_port_mut`.

pub mod config;
pub mod failure;
pub mod mode;
pub use crate::packet;
pub mod port;
pub(crate) mod rings;
pub mod routing;
pub mod switch;
pub mod topology;

pub use config::*;
pub use port::Port;
pub use switch::Switch;

use crate::id::{HostId, NodeId, PortId, SwitchId};
use crate::signal::{SignalRuntime, SignalSetup};
use crate::rng::{Purpose, Stream};
use routing::{Routes, SwitchGraph};
use topology::{NodeRef, TopologySpec};

/// The fabric: every port, every switch and the routes between them.
#[derive(Debug)]
pub struct Network {
    pub(crate) ports: Vec<Port>,
    /// The node that owns each port, apart from the ports themselves: an
    /// arrival at a switch or a departure only needs the node, and a large
    /// fabric's ports do not fit the caches.
    pub(crate) port_node: Vec<NodeId>,
    /// The ports' data queues.
    pub(crate) rings: rings::Rings,
    pub(crate) switches: Vec<Switch>,
    pub(crate) routes: Routes,
    pub(crate) num_hosts: u32,
    /// The hosts' ports come first (ports are numbered node by node, hosts
    /// first): those below this id are NICs.
    host_ports_end: u32,
    /// Per host: its NIC's port.
    host_port: Vec<PortId>,
    /// The distinct ECN settings of the egress ports (`Port::marking` indexes it).
    pub(crate) markings: Vec<EcnConfig>,
    /// `trim_victim = "either"`: each port's own coin (empty otherwise).
    pub(crate) victim_rng: Vec<Stream>,
    /// The run's signal set-up and the per-port signal state.
    pub(crate) signals: SignalSetup,
    pub(crate) sig: SignalRuntime,
    /// Per topology link: its two ports (the `a` end first).
    pub(crate) link_ports: Vec<[PortId; 2]>,
    /// `[[topology.failure]]`: the schedule and which ports are down.
    pub(crate) failures: failure::Failures,
}

/// PFC headroom of an ingress port on a link of `rate_bps` and `delay_ps`:
/// what arrives after XOFF is sent, while the PAUSE crosses the link and the
/// upstream finishes its current packet.
pub fn pfc_headroom(sw: &SwitchConfig, rate_bps: u64, delay_ps: u64, max_packet: u64) -> u64 {
    if let Some(h) = sw.pfc.headroom {
        return h.0;
    }
    crate::units::bytes_in(delay_ps, rate_bps).saturating_mul(2).saturating_add(2 * max_packet + 64)
}

impl Network {
    /// Builds the fabric of `topo`: ports grouped by node in link order,
    /// switches with `sw`'s configuration, per-port marking and signal state,
    /// and the routing table. `max_packet` is the largest data packet on the wire.
    pub fn new(topo: &TopologySpec, sw: &SwitchConfig, max_packet: u64, signals: &SignalSetup, seed: u64) -> Network {
        let nh = topo.hosts.len() as u32;
        let ns = topo.switches.len();
        let node_of = |r: NodeRef| match r {
            NodeRef::Host(h) => h,
            NodeRef::Switch(s) => nh + s,
        };
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
                ports.push(Port::new(NodeId(n as u32), l.rate.0, l.delay.0));
            }
        }
        for ends in &port_of_end {
            ports[ends[0] as usize].peer = PortId(ends[1]);
            ports[ends[1] as usize].peer = PortId(ends[0]);
        }
        let switches: Vec<Switch> = topo
            .switches
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let n = nh as usize + i;
                let fp = first_port[n];
                let np = node_ports[n].len() as u32;
                let headroom = if sw.mode.headroom() {
                    (fp..fp + np)
                        .map(|p| pfc_headroom(sw, ports[p as usize].rate_bps, ports[p as usize].delay_ps, max_packet))
                        .max()
                        .unwrap_or(0)
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
                    reserved: sw.reserved.0,
                    dt_alpha: sw.dt_alpha,
                    mode: sw.mode,
                    routing: sw.routing,
                    control_queue: sw.control_queue,
                    cfg: sw.clone(),
                    shared_size: sw.buffer.0.saturating_sub(reserved_total),
                    shared_used: 0,
                    used: 0,
                    max_used: 0,
                    headroom,
                    hash_salt: Stream::new(seed, i as u64, Purpose::SwitchHash).next_u64(),
                    ecn_rng: Stream::new(seed, i as u64, Purpose::SwitchEcn),
                    spray_rng: Stream::new(seed, i as u64, Purpose::SwitchSpray),
                }
            })
            .collect();
        // Routing table over the switch graph.
        let mut attach_switch = vec![SwitchId(0); nh as usize];
        let mut attach_port = vec![PortId(0); nh as usize];
        let switch_ports: Vec<Vec<(PortId, Option<u32>)>> = (0..ns)
            .map(|i| {
                let n = nh as usize + i;
                (first_port[n]..first_port[n] + node_ports[n].len() as u32)
                    .map(|p| {
                        let NodeId(peer_node) = ports[ports[p as usize].peer].node;
                        if peer_node < nh {
                            attach_switch[peer_node as usize] = SwitchId(i as u32);
                            attach_port[peer_node as usize] = PortId(p);
                            (PortId(p), None)
                        } else {
                            (PortId(p), Some(peer_node - nh))
                        }
                    })
                    .collect()
            })
            .collect();
        let routes = Routes::build(&SwitchGraph { switch_ports: &switch_ports }, attach_switch, attach_port);
        let link_ports = port_of_end.iter().map(|e| [PortId(e[0]), PortId(e[1])]).collect();
        let host_port = (0..nh).map(|h| PortId(first_port[h as usize])).collect();
        let port_node = ports.iter().map(|p| p.node).collect();
        let ports_len = ports.len() as u32;
        let mut net = Network {
            ports,
            port_node,
            rings: Default::default(),
            switches,
            routes,
            num_hosts: nh,
            host_ports_end: first_port.get(nh as usize).copied().unwrap_or(ports_len),
            host_port,
            markings: Vec::new(),
            victim_rng: Vec::new(),
            signals: signals.clone(),
            sig: SignalRuntime::default(),
            link_ports,
            failures: Default::default(),
        };
        net.resolve_markings(sw);
        net.resolve_port_models(sw, seed);
        net.sig = net.signal_runtime();
        net
    }

    /// Does switch port `pid` of switch `si` face down: towards a host or a
    /// lower tier, or, between equals, towards the lower index?
    fn faces_down(&self, si: usize, pid: PortId) -> bool {
        let peer = self.ports[self.ports[pid].peer].node;
        let Some(SwitchId(p)) = self.switch_of(peer) else { return true };
        let (s, ps) = (&self.switches[si], &self.switches[p as usize]);
        ps.tier < s.tier || (ps.tier == s.tier && p < si as u32)
    }

    /// Takes from `other` (a partition of a parallel run, which forwarded
    /// through its own nodes only) the state of the nodes `owned` selects:
    /// their ports with their signal meters and coins, and the switches;
    /// this network's leave in their place. A taken port's queue still
    /// names `other`'s rings and packets: the network is then one to read
    /// the counters of, not to run on.
    pub(crate) fn take_part(&mut self, other: &mut Network, owned: impl Fn(NodeId) -> bool) {
        use std::mem::swap;
        for p in 0..self.ports.len() {
            if !owned(self.port_node[p]) {
                continue;
            }
            swap(&mut self.ports[p], &mut other.ports[p]);
            if let (Some(a), Some(b)) = (self.sig.abw.get_mut(p), other.sig.abw.get_mut(p)) {
                swap(a, b);
            }
            if let (Some(a), Some(b)) = (self.victim_rng.get_mut(p), other.victim_rng.get_mut(p)) {
                swap(a, b);
            }
        }
        for s in 0..self.switches.len() {
            if owned(NodeId(self.num_hosts + s as u32)) {
                swap(&mut self.switches[s], &mut other.switches[s]);
            }
        }
        let port_node = &self.port_node;
        self.failures.take_part(&other.failures, |p| owned(port_node[p]));
    }

    /// The switch a node is, if it is not a host.
    #[inline]
    pub fn switch_of(&self, node: NodeId) -> Option<SwitchId> {
        node.0.checked_sub(self.num_hosts).map(SwitchId)
    }

    /// Each switch egress port's ECN settings: `switch.ecn`, then every
    /// matching `switch.ecn_rule` in order.
    fn resolve_markings(&mut self, sw: &SwitchConfig) {
        for si in 0..self.switches.len() {
            for (j, pid) in self.switches[si].ports().enumerate() {
                let s = &self.switches[si];
                let (rate, down) = (self.ports[pid].rate_bps, self.faces_down(si, pid));
                let mut ecn = sw.ecn;
                for r in &sw.ecn_rule {
                    if r.matches(&s.name, s.tier, j as u32, rate, down) {
                        ecn = Some(r.ecn);
                    }
                }
                if let Some(e) = ecn {
                    // ECP decides at enqueue, where its root and fair-share tests are defined.
                    let at_dequeue = e.mode == EcnMode::Red && sw.ecn_at.unwrap_or(EcnAt::DEFAULT) == EcnAt::Dequeue;
                    let idx = match self.markings.iter().position(|m| *m == e) {
                        Some(i) => i,
                        None => {
                            self.markings.push(e);
                            self.markings.len() - 1
                        }
                    };
                    assert!(idx < port::NO_MARKING as usize, "more than {} distinct ECN settings", port::NO_MARKING);
                    self.ports[pid].marking = idx as u16 | if at_dequeue { port::AT_DEQUEUE } else { 0 };
                }
            }
        }
    }

    /// Each switch port's PFC thresholds (`switch.pfc`, then every matching
    /// `switch.pfc_rule` in order, key by key), its copy of the switch's
    /// `ctrl_buffer` and, for `trim_victim = "either"`, its own random
    /// stream.
    fn resolve_port_models(&mut self, sw: &SwitchConfig, seed: u64) {
        for si in 0..self.switches.len() {
            for (j, pid) in self.switches[si].ports().enumerate() {
                let s = &self.switches[si];
                let (rate, down) = (self.ports[pid].rate_bps, self.faces_down(si, pid));
                let (mut alpha, mut xon_delta) = (sw.pfc.alpha, sw.pfc.xon_delta.0);
                for r in &sw.pfc_rule {
                    if r.matches(&s.name, s.tier, j as u32, rate, down) {
                        alpha = r.pfc.alpha.unwrap_or(alpha);
                        xon_delta = r.pfc.xon_delta.map_or(xon_delta, |x| x.0);
                    }
                }
                let port = &mut self.ports[pid];
                (port.pfc_alpha, port.xon_delta) = (alpha, xon_delta);
                // 2^32 - 1 bytes and above: no limit (a control backlog
                // of gigabytes is never reached).
                port.ctrl_buffer = s.cfg.ctrl_buffer.0.min(u32::MAX as u64) as u32;
            }
        }
        if sw.trim_victim == TrimVictim::Either {
            self.victim_rng = (0..self.ports.len() as u64).map(|p| Stream::new(seed, p, Purpose::TrimVictim)).collect();
        }
    }

    /// Per-port CSIG actions, locators and ABW meters.
    fn signal_runtime(&self) -> SignalRuntime {
        use crate::signal::csig::{locator, PortAction, SignalType};
        let setup = &self.signals;
        let mut rt = SignalRuntime { on: setup.any(), ..Default::default() };
        if let Some(cs) = &setup.csig {
            rt.tag_bytes = cs.size.bytes();
            rt.abw_on = matches!(cs.sig, SignalType::Abw | SignalType::AbwC);
            rt.action = vec![PortAction::Update; self.ports.len()];
            rt.locator = vec![0; self.ports.len()];
            for (si, s) in self.switches.iter().enumerate() {
                for (j, pid) in s.ports().enumerate() {
                    let down = self.faces_down(si, pid);
                    rt.action[pid.ix()] = setup.action(&s.name, s.tier, j as u32);
                    rt.locator[pid.ix()] = locator(cs.lm_bits, s.tier, down, si as u32, j as u32);
                }
            }
            if rt.abw_on {
                rt.abw = vec![Default::default(); self.ports.len()];
            }
        }
        if let Some(ic) = &setup.int {
            rt.int_on = true;
            rt.int_bytes = ic.overhead();
        }
        rt
    }

    pub fn num_hosts(&self) -> u32 {
        self.num_hosts
    }

    pub fn ports(&self) -> &[Port] {
        &self.ports
    }

    pub fn switches(&self) -> &[Switch] {
        &self.switches
    }

    pub fn routes(&self) -> &Routes {
        &self.routes
    }

    /// The failure schedule and the ports down now.
    pub fn failures(&self) -> &failure::Failures {
        &self.failures
    }

    /// The NIC port of `host`.
    pub fn host_port(&self, host: HostId) -> PortId {
        self.host_port[host.ix()]
    }

    pub(crate) fn host_port_mut(&mut self, host: HostId) -> (PortId, &mut Port) {
        let id = self.host_port[host.ix()];
        (id, &mut self.ports[id])
    }

    /// Whether `port` is a host's (a NIC), from its id alone: the loop's
    /// prefetch stages ask this of every departure, and `port_node` (4
    /// bytes a port, 196 KB at 8192 hosts) would be one more line to wait
    /// for.
    #[inline(always)]
    pub(crate) fn is_host_port(&self, port: PortId) -> bool {
        port.0 < self.host_ports_end
    }

    /// The host a node is, if it is one.
    #[inline]
    pub fn host_of(&self, node: NodeId) -> Option<HostId> {
        (node.0 < self.num_hosts).then_some(HostId(node.0))
    }

    /// The ECN settings of egress port `port`, if it marks.
    pub fn marking(&self, port: PortId) -> Option<&EcnConfig> {
        let m = self.ports[port].marking;
        (m != port::NO_MARKING).then(|| &self.markings[(m & !port::AT_DEQUEUE) as usize])
    }

    /// Wire bytes a CSIG tag and an INT stack add to a packet.
    pub fn signal_bytes(&self) -> (u32, u32) {
        (self.sig.tag_bytes, self.sig.int_bytes)
    }

    /// Store-and-forward latency of one packet of `bytes` from `src` to `dst`
    /// on an idle network (first equal-cost path), and the path's slowest rate.
    pub fn path_latency(&self, src: HostId, dst: HostId, bytes: u64) -> (u64, u64) {
        let w = self.walk_path(src, dst, bytes);
        (w.latency_ps, w.slowest_bps)
    }

    /// Walks the first equal-cost path from `src` to `dst` with one packet
    /// of `bytes` on an idle network.
    pub fn walk_path(&self, src: HostId, dst: HostId, bytes: u64) -> PathWalk {
        let mut port = self.host_port[src.ix()];
        let mut w = PathWalk { latency_ps: 0, slowest_bps: u64::MAX, hops: 0 };
        for _ in 0..256 {
            let p = &self.ports[port];
            w.latency_ps += crate::units::tx_time_ps(bytes, p.rate_bps) + p.delay_ps;
            w.slowest_bps = w.slowest_bps.min(p.rate_bps);
            w.hops += 1;
            let Some(sw) = self.switch_of(self.ports[p.peer].node) else { break };
            port = self.routes.candidates(sw, dst)[0];
        }
        w
    }

    /// Unloaded round trip from `src` to `dst`: a packet of `packet_bytes` out
    /// along the first equal-cost path, one of `ack_bytes` back along the
    /// first reverse path.
    pub fn base_rtt(&self, src: HostId, dst: HostId, packet_bytes: u64, ack_bytes: u64) -> u64 {
        self.path_latency(src, dst, packet_bytes).0 + self.path_latency(dst, src, ack_bytes).0
    }

    /// The fabric's unloaded round trip: the largest [`Network::base_rtt`]
    /// between two hosts. Hosts on one edge switch share every hop beyond
    /// their access link, so one host per edge switch stands for the others
    /// (the one whose access link is slowest, then longest), and pairs of
    /// representatives are compared, plus the two slowest hosts of each edge
    /// switch between themselves: edge switches squared, not hosts squared.
    pub fn fabric_rtt(&self, packet_bytes: u64, ack_bytes: u64) -> u64 {
        let access = |h: u32| {
            let p = &self.ports[self.host_port[h as usize]];
            crate::units::tx_time_ps(packet_bytes, p.rate_bps) + crate::units::tx_time_ps(ack_bytes, p.rate_bps) + 2 * p.delay_ps
        };
        // Per edge switch, its two hosts with the longest access round trip.
        let mut edges: Vec<(NodeId, [Option<u32>; 2])> = Vec::new();
        // Per node: its index in `edges` (a search of `edges` per host was
        // hosts times edge switches).
        let mut slot_of = vec![u32::MAX; self.num_hosts() as usize + self.switches.len()];
        for h in 0..self.num_hosts() {
            let edge = self.ports[self.ports[self.host_port[h as usize]].peer].node;
            let slot = match slot_of[edge.ix()] {
                u32::MAX => {
                    slot_of[edge.ix()] = edges.len() as u32;
                    edges.push((edge, [None, None]));
                    edges.len() - 1
                }
                i => i as usize,
            };
            let top = &mut edges[slot].1;
            if top[0].is_none_or(|a| access(h) > access(a)) {
                top[1] = top[0];
                top[0] = Some(h);
            } else if top[1].is_none_or(|b| access(h) > access(b)) {
                top[1] = Some(h);
            }
        }
        let rtt = |a: u32, b: u32| self.base_rtt(HostId(a), HostId(b), packet_bytes, ack_bytes);
        let mut longest = 0;
        for (i, (_, a)) in edges.iter().enumerate() {
            if let [Some(x), Some(y)] = *a {
                longest = longest.max(rtt(x, y)).max(rtt(y, x));
            }
            for (_, b) in &edges[i + 1..] {
                let (x, y) = (a[0].expect("every edge has a host"), b[0].expect("every edge has a host"));
                longest = longest.max(rtt(x, y)).max(rtt(y, x));
            }
        }
        longest
    }

}

/// What a walk of a path found ([`Network::walk_path`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathWalk {
    /// Store-and-forward latency of the packet, link delays included.
    pub latency_ps: u64,
    /// The slowest link's rate.
    pub slowest_bps: u64,
    /// Links on the path.
    pub hops: u32,
}

/// The last path walked from each host, and what the walk found: loops
/// over millions of flows (set-up, collection) walk a path per flow, and
/// a collective's flows repeat their pairs (a ring's 2 (n - 1) flows a
/// rank all go to its neighbour). A walk from another host, to another
/// host or with another packet size is walked anew.
pub struct PathMemo {
    last: Vec<Option<(HostId, u64, PathWalk)>>,
}

impl PathMemo {
    pub fn new(net: &Network) -> PathMemo {
        PathMemo { last: vec![None; net.num_hosts() as usize] }
    }

    /// [`Network::walk_path`], walked again only when `src`'s last walk was
    /// to another host or with another size.
    pub fn walk(&mut self, net: &Network, src: HostId, dst: HostId, bytes: u64) -> PathWalk {
        match self.last[src.ix()] {
            Some((d, b, w)) if d == dst && b == bytes => w,
            _ => {
                let w = net.walk_path(src, dst, bytes);
                self.last[src.ix()] = Some((dst, bytes, w));
                w
            }
        }
    }
}
