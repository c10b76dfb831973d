//! The parallel mode: one simulation on several threads, its outputs
//! byte-identical to the sequential run's.
//!
//! The fabric is cut into partitions ([`Split`]); each partition is a whole
//! [`World`] of its own (its context, packet arena and components) that
//! handles only the events of its nodes: arrivals and transmissions at its
//! ports, and the timers of the flows whose sender (or, for the delayed
//! ACK, whose receiver) is one of its hosts. The scheduler of
//! [`crate::sim::parallel`] runs the partitions window by window in
//! exactly the single queue's (time, owner) order; an event one
//! partition schedules for another is an arrival across a link between
//! them, at least the link's delay later, and the packet goes with it (by
//! mail, into the other partition's arena). At the end the state of each
//! node and flow is taken from the partition that owns it, the counters are
//! added up, and the joined world is read by the outputs as a sequential
//! one is.
//!
//! A flow's sender and receiver state live in the partitions of their
//! hosts; the joined world has their records, each flow's from its
//! sender's partition with its receiver's counters from its receiver's
//! (`FlowStore::joined`).
//!
//! What the mode refuses ([`Split::refusal`], [`Split::flow_refusal`],
//! [`Split::graph_refusal`]), and runs on one thread instead: flows that
//! wait for flows ending in another partition (a pipeline across pods: a
//! flow ending at one host starts another at another host in the same
//! picosecond; a ring's steps stay in their partitions), workload graphs
//! whose operations wait for one complete in another partition (a send
//! complete when delivered across the cut, a collective across it), a
//! packet capture of a run with link failures (the changes' copies in
//! every partition have one owner), and fabrics whose links between
//! partitions are shorter than a block of the event wheel (1,024 ps).
//!
//! Workload graphs (`chakra`, `goal`) run partitioned when every operation
//! waits only for operations complete in its own partition: each operation
//! runs at a host the graph keeps (a compute delay and a join at its
//! rank's, a flow and its sent at its sender's), and its timer
//! ([`Event::AppTimer`]) is that host's partition's. Every partition's
//! world starts the whole graph alike; an operation's events reach only
//! its own partition, so a partition's graph moves only by its own
//! operations. At the join each operation's times are taken from where
//! they happened: its begin from where it began (a flow that waited for
//! nothing: where it is complete, which writes its scheduled start), its
//! completion from where it was complete (a flow's: its receiver's).
//!
//! Link failures run partitioned: every partition makes each change to its
//! own copy of the routes and rates (only a port's own partition drops what
//! the port holds), and the run stops at each change's time until every
//! partition has handled everything before it. A change comes first among
//! its picosecond's events, and is void once every flow is finished: the
//! partitions' counts of finished flows, added up at that stop, say so as
//! the single queue's count would.
//!
//! Connections of several queue pairs run partitioned: a message's split
//! is its sender's decision; the parts' sizes, and the parts of no bytes
//! (whole at their start), reach the receiver's partition with the
//! window's mail ([`PartNote`]).
//!
//! A packet capture runs partitioned: each partition holds the frames its
//! ports send, each with the event that sent it, and between two stretches
//! of the run they are merged into the capture's files in the single
//! queue's order of those events ([`crate::monitor::capture::Capture::merge`]).

use super::World;
use crate::bits::{bit, set_bit};
use crate::id::{FlowId, NodeId, PktId};
use crate::net::Network;
use crate::packet::{IntStack, Packet, PacketArena, Signals};
use crate::sim::parallel::{Mail, ParallelStats, PartHandler, Partition, Scheduler};
use crate::sim::queue::BLOCK_PS;
use crate::sim::{Event, Handler, PackedEvent, RunState, SimQueue};
use std::sync::Arc;

/// How a fabric is cut: each node's partition and the shortest delay of a
/// link between two partitions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    /// Per node (hosts first, then switches): its partition.
    pub node_part: Vec<u32>,
    pub parts: u32,
    /// The shortest propagation delay of a link between two partitions.
    pub lookahead: u64,
}

impl Split {
    /// Cuts `net` into `parts` partitions along its top tier: the switches
    /// below the top tier fall into blocks that are connected without it
    /// (the pods of a fat tree, the leaves of a leaf-spine), each host goes
    /// with its switch, the blocks go to partitions in order, as evenly by
    /// hosts as whole blocks allow, and the top tier's switches are shared
    /// out by index. A fat tree is cut into halves of pods and of cores,
    /// so only agg-core links cross. Refuses (naming why) a cut with an
    /// empty partition or a link between partitions shorter than one block
    /// of the event wheel.
    pub fn new(net: &Network, parts: u32) -> Result<Split, String> {
        assert!(parts >= 1);
        let hosts = net.num_hosts() as usize;
        let switches = net.switches();
        let nodes = hosts + switches.len();
        let top = switches.iter().map(|s| s.tier()).max().unwrap_or(0);
        // Union-find over the switches below the top tier.
        let mut root: Vec<usize> = (0..nodes).collect();
        fn find(root: &mut [usize], mut x: usize) -> usize {
            while root[x] != x {
                root[x] = root[root[x]];
                x = root[x];
            }
            x
        }
        let is_top = |n: usize| n >= hosts && switches[n - hosts].tier() == top && top > 0;
        let ports = net.ports();
        for p in ports {
            let (a, b) = (p.node().ix(), ports[p.peer()].node().ix());
            // Hosts join their switch; lower switches join each other.
            if !is_top(a) && !is_top(b) {
                let (ra, rb) = (find(&mut root, a), find(&mut root, b));
                root[ra.max(rb)] = ra.min(rb);
            }
        }
        // Blocks in order of their first node, weighed by their hosts.
        let mut block_of = vec![usize::MAX; nodes];
        let mut weight: Vec<u64> = Vec::new();
        let mut first: Vec<usize> = Vec::new();
        for n in 0..nodes {
            if is_top(n) {
                continue;
            }
            let r = find(&mut root, n);
            if block_of[r] == usize::MAX {
                block_of[r] = weight.len();
                weight.push(0);
                first.push(n);
            }
            block_of[n] = block_of[r];
            weight[block_of[n]] += (n < hosts) as u64;
        }
        // Order blocks by their first switch (a block's hosts may come
        // before or after it in the host list).
        let lowest_switch = |b: usize| (hosts..nodes).find(|&n| block_of[n] == b).unwrap_or(first[b]);
        let mut order: Vec<usize> = (0..weight.len()).collect();
        order.sort_by_key(|&b| lowest_switch(b));
        let total: u64 = weight.iter().sum::<u64>().max(1);
        let mut block_part = vec![0u32; weight.len()];
        let mut before = 0u64;
        for &b in &order {
            // The partition of the block's middle host.
            let mid = before * 2 + weight[b];
            block_part[b] = ((mid * parts as u64) / (total * 2)).min(parts as u64 - 1) as u32;
            before += weight[b];
        }
        let tops: Vec<usize> = (hosts..nodes).filter(|&n| is_top(n)).collect();
        let mut node_part = vec![0u32; nodes];
        for n in 0..nodes {
            if !is_top(n) {
                node_part[n] = block_part[block_of[n]];
            }
        }
        for (i, &n) in tops.iter().enumerate() {
            node_part[n] = (i as u64 * parts as u64 / tops.len() as u64) as u32;
        }
        let mut lookahead = u64::MAX;
        for p in ports {
            let (a, b) = (p.node().ix(), ports[p.peer()].node().ix());
            if node_part[a] != node_part[b] {
                lookahead = lookahead.min(p.delay_ps());
            }
        }
        let mut used = vec![false; parts as usize];
        node_part.iter().for_each(|&k| used[k as usize] = true);
        if let Some(k) = used.iter().position(|u| !u) {
            return Err(format!(
                "the fabric does not cut into {parts} partitions along a top tier of switches (partition {k} would hold no node)"
            ));
        }
        if parts > 1 && lookahead < BLOCK_PS {
            return Err(format!(
                "a link between partitions has a delay of {lookahead} ps, under the {BLOCK_PS} ps the parallel mode needs"
            ));
        }
        Ok(Split { node_part, parts, lookahead })
    }

    /// Why the flows of `w` cannot run on this cut, if they cannot. A flow
    /// that waits for others is started in the same picosecond as the last
    /// of them ends, by the partition where it ends: its receiver's (its
    /// sender's for a flow of no bytes, which ends as it starts). So each
    /// flow it waits for must end in its sender's partition, and a flow
    /// queued behind another (the next work request of a queue pair) must
    /// share that flow's sender's partition. A ring's next step starts at
    /// the host that received the last one: rings stay within their
    /// partitions. (Flows of no bytes come only from connections of
    /// several queue pairs, which [`Split::refusal`] refuses.)
    pub fn flow_refusal(&self, w: &World) -> Option<String> {
        let store = w.flow_store();
        let flows = |i: u32| store.spec(FlowId(i));
        let name = |i: u32| w.sc.flow_name(FlowId(i));
        let part = |h: crate::id::HostId| self.node_part[h.ix()];
        let ends_in = |f: crate::transport::FlowRecord| if f.npkts == 0 { part(f.src) } else { part(f.dst) };
        let mut refusal = None;
        w.sc.for_each_dep(|d| {
            let f = flows(d.flow);
            let home = part(f.src);
            if let Some(&a) = d.after.iter().find(|&&a| ends_in(flows(a)) != home) {
                refusal = Some(format!(
                    "flow {} waits for flow {}, which ends in another partition (flows that wait for others across partitions run on one thread)",
                    name(d.flow),
                    name(a)
                ));
            } else if let Some(a) = d.after_sent.filter(|&a| part(flows(a).src) != home) {
                refusal = Some(format!(
                    "flow {} waits for flow {} to leave a NIC in another partition (flows that wait for others across partitions run on one thread)",
                    name(d.flow),
                    name(a)
                ));
            }
            refusal.is_none()
        });
        refusal
    }

    /// Why `w`'s scenario cannot run in partitions, if it cannot.
    pub fn refusal(w: &World) -> Option<&'static str> {
        Self::scenario_refusal(&w.sc)
    }

    /// [`Split::refusal`] from the scenario alone, before its worlds are
    /// built: a workload graph that does not say where its operations run
    /// (one built by hand) cannot be cut.
    pub fn scenario_refusal(sc: &crate::scenario::Scenario) -> Option<&'static str> {
        if sc.workloads.iter().any(|w| matches!(&w.flows, crate::workload::Flows::Dag(d) if !d.has_hosts())) {
            Some("a workload graph without its operations' hosts runs on one thread")
        } else {
            None
        }
    }

    /// Where each operation of graph `d` (workload flows from `first`)
    /// begins and where it is complete, by partition: a compute delay, a
    /// join and a flow's sent at their host, a flow begins at its sender
    /// and is complete at its receiver (at its sender if it has no
    /// packets: whole as it starts).
    fn graph_places(&self, d: &crate::workload::dag::Dag, first: u32, store: &crate::transport::FlowStore) -> (Vec<u32>, Vec<u32>) {
        use crate::workload::dag::Op;
        let n = d.ops.len() as u32;
        let begins: Vec<u32> = (0..n).map(|op| self.node_part[d.host(op).expect("a host an operation").ix()]).collect();
        let ends = (0..n)
            .map(|op| match d.ops[op as usize] {
                Op::Flow(f) if store.spec(FlowId(first + f)).npkts > 0 => self.node_part[d.flow_ends(f).1.ix()],
                _ => begins[op as usize],
            })
            .collect();
        (begins, ends)
    }

    /// [`Split::graph_places`] of each workload graph of `w`, in workload
    /// order.
    fn graphs_places(&self, w: &World) -> Vec<(Vec<u32>, Vec<u32>)> {
        w.sc.workloads
            .iter()
            .filter_map(|wl| match &wl.flows {
                crate::workload::Flows::Dag(d) => Some(self.graph_places(d, wl.first, w.flow_store())),
                _ => None,
            })
            .collect()
    }

    /// Why the workload graphs of `w` cannot run on this cut, if they
    /// cannot. An operation begins, in the same picosecond as the last it
    /// waits for is complete, in the partition where that one is complete:
    /// so each operation it waits for must be complete in the partition
    /// where it begins (a flow's arrival at its receiver's, a flow's sent,
    /// a compute delay or a join at its host's). A partition's graph then
    /// moves only by what happens in it.
    /// `places` are the graphs' [`Split::graph_places`], workload by
    /// workload ([`Split::graphs_places`]).
    pub fn graph_refusal(&self, w: &World, places: &[(Vec<u32>, Vec<u32>)]) -> Option<String> {
        let graphs = w.sc.workloads.iter().filter_map(|wl| match &wl.flows {
            crate::workload::Flows::Dag(d) => Some(d),
            _ => None,
        });
        for (d, (begins, ends)) in graphs.zip(places) {
            for b in 0..d.ops.len() as u32 {
                if let Some(&a) = d.after(b).iter().find(|&&a| ends[a as usize] != begins[b as usize]) {
                    return Some(format!(
                        "{}: {} waits for {}, which is complete in another partition (operations that wait for others across partitions run on one thread)",
                        d.trace.name,
                        graph_op_name(d, b),
                        graph_op_name(d, a)
                    ));
                }
            }
        }
        None
    }

    /// Why a capture of `sc` cannot run in partitions, if it cannot: a link
    /// change is handled by every partition under one owner, so its frames
    /// would have no single place in the run's order.
    pub fn capture_refusal(sc: &crate::scenario::Scenario) -> Option<&'static str> {
        (!sc.failures.is_empty()).then_some("a packet capture of a run with link failures runs on one thread")
    }
}

/// Operation `op` of graph `d` as a refusal names it: the step of the
/// trace it begins or completes, else its rank and what it is.
fn graph_op_name(d: &crate::workload::dag::Dag, op: u32) -> String {
    use crate::workload::dag::Op;
    let host = d.host(op).map_or(u32::MAX, |h| h.0);
    let at = match d.trace.hosts.iter().position(|&h| h == host) {
        Some(r) => format!("rank {r}'s"),
        None => format!("host {host}'s"),
    };
    if let Some(st) = d.trace.steps.iter().find(|st| st.done == op).or_else(|| d.trace.steps.iter().find(|st| st.begin == op)) {
        return format!("rank {}'s {} {} ({})", st.rank, st.kind.name(), st.id, d.trace.names[st.name as usize]);
    }
    match d.ops[op as usize] {
        Op::Flow(f) => format!("{at} flow {} to host {}", d.specs.name(f), d.flow_ends(f).1 .0),
        Op::Sent(f) => format!("{at} flow {} to host {} leaving its NIC", d.specs.name(f), d.flow_ends(f).1 .0),
        Op::Compute { .. } => format!("{at} compute delay (operation {op})"),
        Op::Join => format!("{at} operation {op}"),
    }
}

/// Which partition each event belongs to: its port's node, or its flow's
/// sender (the delayed ACK: its receiver), or its graph operation's host.
struct Owners {
    port: Vec<u32>,
    host: Vec<u32>,
    flow_src: Vec<u32>,
    flow_dst: Vec<u32>,
    /// Per graph operation of the run (the ids of [`Event::AppTimer`]):
    /// the partition where it begins.
    op: Vec<u32>,
}

impl Owners {
    #[inline]
    fn of(&self, ev: Event) -> u32 {
        match ev {
            Event::Arrive { port, .. } | Event::TxDone { port } => self.port[port.ix()],
            Event::NicWake { host } => self.host[host.ix()],
            Event::FlowStart { flow } | Event::FlowTimer { flow } | Event::CcTimer { flow } => self.flow_src[flow.ix()],
            Event::AckTimer { flow } => self.flow_dst[flow.ix()],
            Event::LinkChange { .. } => unreachable!("a link change is every partition's, scheduled before the run"),
            Event::AppTimer { op } => self.op[op as usize],
        }
    }
}

/// The packets a window sends another partition, in the order their
/// arrivals name them, with their signal slots and INT stacks when the run
/// carries them (each list then as long as the packets'): a packet alone is
/// one cache line, with its slots beside it six.
#[derive(Default)]
pub struct Crossings {
    pkts: Vec<Packet>,
    sigs: Vec<Signals>,
    ints: Vec<IntStack>,
    /// What the senders of connections' messages decided that their
    /// receivers here need ([`PartNote`]).
    parts: Vec<PartNote>,
}

/// What a message's receiver needs of what its sender decided when the
/// message was posted (`[transport.connection]`): each part's size, and
/// the parts of no bytes, which are whole at their start. A window's notes
/// are taken before the next window's events, and a part's first packet
/// arrives a lookahead after its start at the least.
#[derive(Clone, Copy, Debug)]
enum PartNote {
    Size { flow: FlowId, size: u64 },
    Empty { flow: FlowId, at: u64 },
}

impl Crossings {
    /// Moves packet `pkt` out of `pkts` into this mail, and answers the
    /// index its arrival names. Out of line: a tenth of the pushes cross,
    /// and inlined into the partition's loop it cost the loop registers.
    #[inline(never)]
    fn send(&mut self, pkts: &mut PacketArena, pkt: PktId) -> PktId {
        let at = PktId(self.pkts.len() as u32);
        self.pkts.push(*pkts.get(pkt));
        if pkts.has_signals() {
            self.sigs.push(*pkts.sig(pkt));
        }
        if pkts.has_int() {
            self.ints.push(*pkts.int(pkt));
        }
        pkts.free(pkt);
        at
    }
}

impl Mail for Crossings {
    fn clear(&mut self) {
        self.pkts.clear();
        self.sigs.clear();
        self.ints.clear();
        self.parts.clear();
    }
}

/// One partition: a world of its own that handles its nodes' events.
struct Share {
    id: u32,
    w: World,
    owners: Arc<Owners>,
    /// Which ports are this partition's, a bit each ([`Owners::port`]).
    own_ports: Vec<u64>,
    /// How far apart the world's prefetch stages run
    /// ([`Handler::prefetch_spacing`]).
    prefetch_spacing: usize,
    /// Link changes popped here beside partition 0: each partition pops
    /// its copy, the single queue pops one.
    copies_popped: u64,
    /// Per message of the connections: its parts' sizes were mailed to its
    /// receiver's partition (a bit each; empty without connections).
    parts_mailed: Vec<u64>,
    /// The run has a capture: each event's (time, owner) goes to it first.
    capturing: bool,
}

impl Share {
    /// Flow `flow` started at `t`: if it is a part of a message whose
    /// receiver is another partition's, mails that partition the parts'
    /// sizes (once a message: they are decided at its first part's start)
    /// and, for a part of no bytes, that it is whole.
    #[cold]
    #[inline(never)]
    fn mail_parts(&mut self, t: u64, flow: FlowId, part: &mut Partition<PackedEvent, Crossings>) {
        let Some(conns) = self.w.c.transport.connections() else { return };
        let dest = self.owners.flow_dst[flow.ix()];
        if dest == self.id {
            return;
        }
        let (n, (m, _)) = (conns.qps(), conns.part(flow));
        let flows = self.w.c.transport.flows();
        let notes = &mut part.mail(dest).parts;
        if !bit(&self.parts_mailed, m as u32) {
            set_bit(&mut self.parts_mailed, m as u32);
            for q in 0..n {
                let f = FlowId((m * n + q) as u32);
                notes.push(PartNote::Size { flow: f, size: flows.record(f).size });
            }
        }
        if flows.record(flow).size == 0 {
            notes.push(PartNote::Empty { flow, at: t });
        }
    }
}

impl PartHandler<PackedEvent, Crossings> for Share {
    #[inline]
    fn handle(&mut self, t: u64, ev: PackedEvent, part: &mut Partition<PackedEvent, Crossings>) {
        if self.capturing {
            if let Some(c) = self.w.c.obs.capture_mut() {
                c.set_key(t, ev.owner());
            }
        }
        let ev = ev.event();
        let started = match ev {
            Event::LinkChange { .. } => {
                self.copies_popped += (self.id != 0) as u64;
                None
            }
            Event::FlowStart { flow } if !self.parts_mailed.is_empty() => Some(flow),
            _ => None,
        };
        let World { ctx, c, .. } = &mut self.w;
        if c.is_stale(t, ev) {
            return;
        }
        ctx.now = t;
        c.handle(ctx, ev);
        let crate::sim::Ctx { staged, pkts, unstaged, .. } = ctx;
        let ports = &mut c.net.ports;
        let out = staged.as_mut().expect("a partition's context stages its pushes");
        for &(at, e) in out.iter() {
            // Most pushes are for this partition's own ports: a bit a port
            // stays in the first-level cache, where the owners' table (four
            // bytes a port, shared by all) missed it on most pushes.
            let dest = match e.port() {
                Some(port) if bit(&self.own_ports, port.0) => self.id,
                _ => self.owners.of(e.event()),
            };
            if let Some(port) = e.tx_done() {
                // Always this partition's: the port keeps where it went.
                ports[port].txdone = part.push_own(at, e);
                continue;
            }
            let e = match e.arrival() {
                // The packet goes with its arrival, and leaves this arena.
                Some((pkt, port)) if dest != self.id => PackedEvent::new(Event::Arrive { pkt: part.mail(dest).send(pkts, pkt), port }),
                _ => e,
            };
            part.push(at, dest, e);
        }
        out.clear();
        // What the handler took back from this partition's queue.
        for (at, e, place) in unstaged.drain(..) {
            part.remove(at, e, place);
        }
        if let Some(flow) = started {
            self.mail_parts(t, flow, part);
        }
    }

    /// The parts' sizes that the senders of messages decided for receivers
    /// here, and the parts of no bytes, whole at their start there: their
    /// arrival counts for what waits for the message, at their time.
    fn absorb(&mut self, mail: &Crossings) {
        let World { ctx, c, .. } = &mut self.w;
        let t = &mut c.transport;
        for &note in &mail.parts {
            match note {
                PartNote::Size { flow, size } => t.flows.set_size(flow, size),
                PartNote::Empty { flow, at } => {
                    t.flows.record_mut(flow).finish_ps = Some(at);
                    if t.apps.any_waits() {
                        let now = std::mem::replace(&mut ctx.now, at);
                        t.apps.arrived(ctx, flow);
                        ctx.now = now;
                        // A message has a part of some bytes, which arrives
                        // later: nothing starts before it.
                        debug_assert!(ctx.staged.as_ref().is_none_or(|s| s.is_empty()), "a message of no bytes waited for across partitions");
                    }
                }
            }
        }
    }

    /// As the sequential loop: the packet of the next arrival, and, on
    /// large fabrics, the stages of [`Handler::prefetch`] (inlined, for
    /// the loop's constant stages to select the code).
    #[inline(always)]
    fn prefetch(&self, ev: &PackedEvent, stage: usize) {
        let World { ctx, c, .. } = &self.w;
        if stage == 0 {
            if let Some((pkt, _)) = ev.arrival() {
                crate::sim::prefetch(ctx.pkts.get(pkt));
            }
        } else {
            c.prefetch(&ctx.pkts, *ev, stage);
        }
    }

    fn prefetch_spacing(&self) -> usize {
        self.prefetch_spacing
    }

    /// The crossing packet, and the arena slot it will take: a window's
    /// imports come one after another, each a miss or two otherwise.
    #[inline]
    fn prefetch_import(&self, ev: &PackedEvent, mail: &Crossings, ahead: usize) {
        if let Some((pkt, _)) = ev.arrival() {
            let pkts = &self.w.ctx.pkts;
            if let Some(p) = mail.pkts.get(pkt.ix()) {
                crate::sim::prefetch(p);
            }
            if let Some(slot) = pkts.next_slot(ahead) {
                crate::sim::prefetch(slot);
            }
        }
    }

    fn import(&mut self, ev: PackedEvent, mail: &Crossings) -> PackedEvent {
        let Some((pkt, port)) = ev.arrival() else { return ev };
        let pkts = &mut self.w.ctx.pkts;
        let id = pkts.alloc(mail.pkts[pkt.ix()]);
        if pkts.has_signals() {
            *pkts.sig_mut(id) = mail.sigs[pkt.ix()];
        }
        if pkts.has_int() {
            *pkts.int_mut(id) = mail.ints[pkt.ix()];
        }
        PackedEvent::new(Event::Arrive { pkt: id, port })
    }
}

/// A simulation run on partitions; [`Parallel::into_world`] joins them.
pub struct Parallel {
    sched: Scheduler<PackedEvent, Crossings>,
    shares: Vec<Share>,
    threads: usize,
    split: Split,
    /// Whether a run reached the scenario's stop time.
    stopped: bool,
    /// The times of the link changes, in order ([`Parallel::run_to`]
    /// stops at each), and how many the run has passed.
    changes: Vec<u64>,
    changes_passed: usize,
    /// The capture's files, when the run has one: the partitions hold
    /// their frames until [`Parallel::flush_monitors`].
    capture: Option<crate::monitor::capture::Capture>,
}

impl Parallel {
    /// Cuts `w` (a world not yet run) into `parts` partitions to run on
    /// `threads` threads; gives `w` back with the reason when it cannot
    /// be cut ([`Split::refusal`], [`Split::new`]).
    pub fn new(w: World, parts: u32, threads: usize) -> Result<Parallel, Box<(World, String)>> {
        Self::with_worlds(w, Vec::new(), parts, threads)
    }

    /// [`Parallel::new`] with the worlds of partitions 1 and up already
    /// built from the same scenario ([`build_worlds`]); built here if
    /// `others` does not hold one for each.
    pub fn with_worlds(w: World, others: Vec<World>, parts: u32, threads: usize) -> Result<Parallel, Box<(World, String)>> {
        if let Some(why) = Split::refusal(&w) {
            return Err(Box::new((w, why.to_string())));
        }
        if let Some(why) = w.c.obs.capturing().then(|| Split::capture_refusal(&w.sc)).flatten() {
            return Err(Box::new((w, why.to_string())));
        }
        let split = match Split::new(&w.c.net, parts) {
            Ok(s) => s,
            Err(e) => return Err(Box::new((w, e))),
        };
        let places = split.graphs_places(&w);
        if let Some(why) = split.flow_refusal(&w).or_else(|| split.graph_refusal(&w, &places)) {
            return Err(Box::new((w, why)));
        }
        let net = &w.c.net;
        let port_node = |p: usize| net.port_node[p].ix();
        let owners = Arc::new(Owners {
            port: (0..net.ports().len()).map(|p| split.node_part[port_node(p)]).collect(),
            host: split.node_part[..net.num_hosts() as usize].to_vec(),
            flow_src: w.flow_store().records().map(|f| split.node_part[f.src.ix()]).collect(),
            flow_dst: w.flow_store().records().map(|f| split.node_part[f.dst.ix()]).collect(),
            // In workload order, as the applications number them.
            op: places.into_iter().flat_map(|(begins, _)| begins).collect(),
        });
        let mut sched = Scheduler::new(parts as usize, split.lookahead);
        // As the world's own queue would on this fabric.
        sched.fetch_ahead_blocks(w.ctx.q.fetches_ahead_blocks());
        let mut others = if others.len() + 1 == parts as usize { others } else { (1..parts).map(|_| World::new(w.sc.clone())).collect() };
        let mut shares = Vec::with_capacity(parts as usize);
        let mut first = w;
        // The scheduled events (flow starts), in the queue's order, each to
        // its partition; every partition's own queue stays empty.
        let mut q = std::mem::take(&mut first.ctx.q);
        while let Some((t, ev)) = q.pop() {
            match ev.event() {
                // Every partition changes its copy of the network.
                Event::LinkChange { .. } => (0..parts).for_each(|k| sched.push(t, k, ev)),
                e => sched.push(t, owners.of(e), ev),
            }
        }
        let changes = first.c.net.failures.change_times();
        // The capture's files, written between stretches from what the
        // partitions hold.
        let capture = first.c.obs.take_capture();
        for (id, mut w) in std::iter::once(first).chain(others.drain(..)).enumerate() {
            w.ctx.q = SimQueue::new();
            w.ctx.staged = Some(Vec::new());
            // A partition cannot see its flows' packets in others; it builds
            // the states of the flows with a host in it.
            w.keep_flow_states();
            let mine = |f: usize| owners.flow_src[f] == id as u32 || owners.flow_dst[f] == id as u32;
            w.c.transport.flows.reserve_states((0..owners.flow_src.len()).filter(|&f| mine(f)).count());
            let prefetch_spacing = w.c.prefetch_spacing();
            let mut own_ports = vec![0u64; owners.port.len().div_ceil(64)];
            for (p, _) in owners.port.iter().enumerate().filter(|&(_, &o)| o == id as u32) {
                set_bit(&mut own_ports, p as u32);
            }
            w.c.net.failures.own_only(&own_ports);
            let messages = w.c.transport.connections().map_or(0, |c| w.flow_store().len() / c.qps());
            let parts_mailed = vec![0u64; messages.div_ceil(64)];
            if let Some(c) = &capture {
                w.c.obs.attach_capture(c.held());
            }
            shares.push(Share { id: id as u32, w, owners: owners.clone(), own_ports, prefetch_spacing, copies_popped: 0, parts_mailed, capturing: capture.is_some() });
        }
        Ok(Parallel { sched, shares, threads, split, stopped: false, changes, changes_passed: 0, capture })
    }

    /// The cut.
    pub fn split(&self) -> &Split {
        &self.split
    }

    /// The scenario's stop time, if it has one.
    pub fn stop_ps(&self) -> Option<u64> {
        self.shares[0].w.stop_ps
    }

    /// Whether the run reached the scenario's stop time.
    pub fn at_stop(&self) -> bool {
        self.stopped
    }

    /// Partition 0's world: the whole network and every flow (each
    /// partition's state is its own), for what is set up from them.
    pub fn world(&self) -> &World {
        &self.shares[0].w
    }

    /// Streams the monitor files to `sink` as
    /// [`crate::monitor::Observers::stream_to`] does,
    /// the rows handed over by [`Parallel::flush_monitors`] between stretches
    /// of the run rather than from inside a window.
    pub fn stream_to(&mut self, sink: Box<dyn crate::monitor::RowSink>) {
        let obs = &mut self.shares[0].w.c.obs;
        obs.stream_to(sink);
        obs.flush_only_when_asked();
    }

    /// Hands the streamed monitor files every window before the one now
    /// (between two stretches of the run, when every partition has handled
    /// every event before the end of the stretch): each partition's
    /// monitors are swapped into partition 0's observers, flushed there, and
    /// swapped back. The capture's frames go to its files first
    /// ([`Parallel::flush_capture`]). Without a sink or a capture, nothing.
    pub fn flush_monitors(&mut self) {
        self.flush_capture();
        if !self.shares[0].w.c.obs.streamed() {
            return;
        }
        let now = self.now();
        let (first, rest) = self.shares.split_first_mut().expect("a partition");
        let owners = first.owners.clone();
        let swap = |base: &mut crate::monitor::Observers, other: &mut crate::monitor::Observers, k: u32| {
            base.swap_part(other, |p| owners.port[p] == k, |f| owners.flow_src[f] == k);
        };
        for other in rest.iter_mut() {
            swap(&mut first.w.c.obs, &mut other.w.c.obs, other.id);
            first.w.c.obs.absorb_held(&mut other.w.c.obs);
        }
        first.w.c.obs.flush_streamed(now);
        for other in rest.iter_mut() {
            swap(&mut first.w.c.obs, &mut other.w.c.obs, other.id);
        }
    }

    /// Writes the frames the partitions hold into the capture's files
    /// (between two stretches, when every partition has handled every
    /// event before the end of the stretch).
    fn flush_capture(&mut self) {
        if let Some(c) = &mut self.capture {
            let mut held: Vec<&mut crate::monitor::capture::Capture> = self.shares.iter_mut().filter_map(|s| s.w.c.obs.capture_mut()).collect();
            c.merge(&mut held);
        }
    }

    /// The number of flows.
    pub fn flows_total(&self) -> usize {
        self.shares[0].w.flow_store().len()
    }

    /// Runs until no event is left, the scenario's stop time, or (when
    /// given) `until` (rounded up to a block of the wheel, 1,024 ps); the
    /// answer is as [`World::run_to`]'s. A run may go on after `until`, not
    /// after the stop time.
    pub fn run_to(&mut self, until: Option<u64>) -> RunState {
        assert!(!self.stopped, "the run reached its stop time");
        let until = until.map(|u| u.checked_next_multiple_of(BLOCK_PS).unwrap_or(u64::MAX));
        let (bound, at_stop) = match (until, self.stop_ps()) {
            (Some(u), Some(s)) if u <= s => (u, false),
            (_, Some(s)) => (s.saturating_add(1), true),
            (Some(u), None) => (u, false),
            (None, None) => (u64::MAX, false),
        };
        // Each link change waits for every partition to have handled what
        // comes before it: it is void once every flow is finished, which
        // only the partitions' counts added up can say.
        while let Some(&t) = self.changes.get(self.changes_passed).filter(|&&t| t < bound) {
            self.sched.run_until(&mut self.shares, self.threads, t);
            self.changes_passed += 1;
            let finished: usize = self.shares.iter().map(|s| s.w.c.transport.finished_here()).sum();
            if finished == self.flows_total() {
                self.shares.iter_mut().for_each(|s| s.w.c.transport.set_finished_everywhere());
            }
        }
        self.sched.run_until(&mut self.shares, self.threads, bound);
        match self.sched.next_bound() {
            None => RunState::Idle,
            Some(_) if at_stop => {
                self.stopped = true;
                RunState::Stopped
            }
            Some(_) => RunState::Stopped,
        }
    }

    /// The simulated time of the last event handled (the stop time once
    /// reached).
    pub fn now(&self) -> u64 {
        match (self.stopped, self.stop_ps()) {
            (true, Some(s)) => s,
            _ => self.shares.iter().map(|s| s.w.ctx.now).max().unwrap_or(0),
        }
    }

    /// The run's counters so far, added up.
    pub fn stats(&self) -> crate::sim::Stats {
        let mut s = crate::sim::Stats::default();
        self.shares.iter().for_each(|sh| s.add(&sh.w.ctx.stats));
        s
    }

    /// Events handled so far (stale timers included, as on one queue:
    /// a link change once, not once a partition).
    pub fn events(&self) -> u64 {
        self.sched.stats().events - self.shares.iter().map(|s| s.copies_popped).sum::<u64>()
    }

    /// What the scheduler did.
    pub fn sched_stats(&self) -> ParallelStats {
        self.sched.stats()
    }

    /// The earliest start of a flow that has started and not finished.
    pub fn first_unfinished_start(&self) -> Option<u64> {
        let owners = &self.shares[0].owners;
        (0..owners.flow_src.len())
            .filter_map(|f| {
                let sender = self.shares[owners.flow_src[f] as usize].w.c.transport.flows.record(FlowId(f as u32));
                let receiver = self.shares[owners.flow_dst[f] as usize].w.c.transport.flows.record(FlowId(f as u32));
                (sender.started && receiver.finish_ps.is_none()).then_some(sender.start_ps)
            })
            .min()
    }

    /// Joins the partitions into one world to read the outputs from (not to
    /// run on): each node's and flow's state from the partition that owns
    /// it, the counters added up.
    pub fn into_world(mut self) -> World {
        self.flush_capture();
        let now = self.now();
        let events = self.events();
        let Parallel { shares, split, capture, .. } = self;
        let owners = shares[0].owners.clone();
        let mut rest: Vec<World> = Vec::with_capacity(shares.len());
        let mut it = shares.into_iter();
        let mut base = it.next().expect("a partition").w;
        rest.extend(it.map(|s| s.w));
        let part = |n: NodeId| split.node_part[n.ix()];
        for (k, other) in rest.iter_mut().enumerate() {
            let k = k as u32 + 1;
            base.c.net.take_part(&mut other.c.net, |n| part(n) == k);
            let (bn, on) = (&mut base.c.transport.nics, &mut other.c.transport.nics);
            for h in 0..bn.len() {
                if owners.host[h] == k {
                    std::mem::swap(&mut bn[h], &mut on[h]);
                }
            }
            let ports_of = |p: usize| owners.port[p] == k;
            base.c.obs.take_part(&mut other.c.obs, ports_of, |f| owners.flow_src[f] == k);
            base.ctx.stats.add(&other.ctx.stats);
            base.ctx.pkts.count_live_of(&other.ctx.pkts);
            if let (Some(b), Some(o)) = (base.c.transport.conns.as_deref_mut(), other.c.transport.connections()) {
                let n = o.qps();
                b.take_part(o, |m| owners.flow_src[m * n] == k);
            }
        }
        // Graph operations: each time from the partition where it happened.
        // A flow that waited for nothing began at its scheduled start, which
        // the partition where it is complete writes. (The places are found
        // again here rather than kept through the run: 8 bytes an operation.)
        let mut apps = std::mem::take(&mut base.c.transport.apps);
        for (k, wl) in base.sc.workloads.iter().enumerate() {
            let crate::workload::Flows::Dag(d) = &wl.flows else { continue };
            let (begins, ends) = split.graph_places(d, wl.first, &base.c.transport.flows);
            let begun_at = |op: u32| match d.ops[op as usize] {
                crate::workload::dag::Op::Flow(_) if d.after(op).is_empty() => ends[op as usize],
                _ => begins[op as usize],
            };
            for (j, other) in rest.iter().enumerate() {
                let j = j as u32 + 1;
                apps.take_op_times(&other.c.transport.apps, k, |op| begun_at(op) == j, |op| ends[op as usize] == j);
            }
        }
        base.c.transport.apps = apps;
        // Flows: the sender's half from its host's partition, the
        // receiver's from its host's.
        let joined = {
            let parts: Vec<&crate::transport::FlowStore> = std::iter::once(&base).chain(rest.iter()).map(|w| &w.c.transport.flows).collect();
            crate::transport::FlowStore::joined(&parts, &owners.flow_src, &owners.flow_dst)
        };
        base.c.transport.flows = joined;
        base.c.transport.recount_finished();
        if let Some(c) = capture {
            base.c.obs.attach_capture(c);
        }
        base.ctx.now = now;
        base.ctx.q.count_popped(events);
        base.ctx.staged = None;
        base
    }
}

/// The worlds of `parts` partitions of `sc`: the first (the one a run on
/// one thread would use) built here, the others at the same time on up to
/// `threads - 1` more threads, each a whole world of the same scenario.
pub fn build_worlds(sc: crate::scenario::Scenario, parts: usize, threads: usize) -> (World, Vec<World>) {
    let helpers = threads.clamp(1, parts) - 1;
    if helpers == 0 {
        let others = (1..parts).map(|_| World::new(sc.clone())).collect();
        return (World::new(sc), others);
    }
    std::thread::scope(|s| {
        // Helper h builds partitions h + 1, h + 1 + helpers, ...
        let jobs: Vec<_> = (0..helpers)
            .map(|h| {
                let sc = sc.clone();
                s.spawn(move || (h + 1..parts).step_by(helpers).map(|_| World::new(sc.clone())).collect::<Vec<World>>())
            })
            .collect();
        let first = World::new(sc);
        let mut built: Vec<std::vec::IntoIter<World>> = jobs
            .into_iter()
            .map(|j| j.join().unwrap_or_else(|e| std::panic::resume_unwind(e)).into_iter())
            .collect();
        // Back in partition order.
        let others = (1..parts).map(|p| built[(p - 1) % helpers].next().expect("one world a partition")).collect();
        (first, others)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A k-ary fat tree running a permutation of 2 MB flows under DCTCP
    /// (the benchmark set's `fat_tree_128` at k = 8).
    fn fat_tree(k: u32) -> String {
        format!(
            r#"name = "fat_tree k={k} permutation"
seed = 1
[topology]
kind = "fat_tree"
k = {k}
rate = "100Gbps"
delay = "1us"
[switch]
buffer = "32MB"
mode = "lossy"
ecn = {{ kmin = "100KB", kmax = "400KB", pmax = 0.2 }}
[transport]
cc = "dctcp"
mtu = 4096
header = 64
[monitor]
links = false
[[workload]]
kind = "permutation"
size = "2MB"
"#
        )
    }

    fn world(k: u32) -> World {
        World::new(crate::scenario::load_str(&fat_tree(k), "split", std::path::Path::new("."), &[], None).expect("scenario"))
    }

    /// A fat tree is cut into halves (thirds) of its pods and of its cores:
    /// every host with its edge switch and pod, only agg-core links cross,
    /// and the lookahead is their delay.
    #[test]
    fn a_fat_tree_is_cut_by_pods_and_cores() {
        let w = world(8);
        let net = &w.c.net;
        for parts in [2, 4] {
            let s = Split::new(net, parts).expect("cut");
            let hosts = net.num_hosts() as usize;
            // 16 hosts a pod; pods in order.
            for h in 0..hosts {
                assert_eq!(s.node_part[h], (h / 16 * parts as usize / 8) as u32, "host {h}");
            }
            let ports = net.ports();
            let mut crossing = 0;
            for p in ports {
                let (a, b) = (p.node(), ports[p.peer()].node());
                if s.node_part[a.ix()] != s.node_part[b.ix()] {
                    crossing += 1;
                    let tiers = [a, b].map(|n| net.switch_of(n).map(|sw| net.switches()[sw].tier()));
                    assert!(tiers.contains(&Some(2)) && tiers.contains(&Some(1)), "{tiers:?}");
                }
            }
            assert!(crossing > 0);
            assert_eq!(s.lookahead, 1_000_000);
            // Each partition holds the same number of nodes.
            let count = |k: u32| s.node_part.iter().filter(|&&x| x == k).count();
            assert!((0..parts).all(|k| count(k) == count(0)), "{:?}", (0..parts).map(count).collect::<Vec<_>>());
        }
        assert!(Split::new(net, 17).is_err(), "8 pods and 16 cores do not fill 17 partitions");
    }

    /// The worlds built side by side are one a partition, each the world
    /// of the scenario, whatever the number of threads building them; and
    /// a run from them pops the same events as a run that builds its own.
    #[test]
    fn worlds_built_side_by_side_are_whole_worlds_of_the_scenario() {
        let sc = crate::scenario::load_str(&fat_tree(4), "build", std::path::Path::new("."), &[], None).expect("scenario");
        let lone = World::new(sc.clone());
        let mut events = Vec::new();
        for (parts, threads) in [(2, 1), (2, 2), (4, 2), (4, 3), (4, 8)] {
            let (first, others) = build_worlds(sc.clone(), parts, threads);
            assert_eq!(others.len(), parts - 1, "{parts} partitions on {threads} threads");
            for w in std::iter::once(&first).chain(&others) {
                assert_eq!((w.ports().len(), w.flow_store().len(), w.ctx.q.len()), (lone.ports().len(), lone.flow_store().len(), lone.ctx.q.len()));
            }
            let mut p = Parallel::with_worlds(first, others, parts as u32, threads).ok().expect("cut");
            p.run_to(None);
            events.push((parts, p.events(), p.stats().link_hops));
        }
        for parts in [2, 4] {
            let mut p = Parallel::new(World::new(sc.clone()), parts as u32, 1).ok().expect("cut");
            p.run_to(None);
            for &(n, ev, hops) in &events {
                if n == parts {
                    assert_eq!((ev, hops), (p.events(), p.stats().link_hops), "{parts} partitions");
                }
            }
        }
    }

    /// A flow may wait for flows that end in its sender's partition (a
    /// ring's step at the host that received the last one), not for one
    /// that ends across the cut, nor for one that started there.
    #[test]
    fn flows_wait_only_for_flows_ending_in_their_partition() {
        // A 16-host fat tree (k = 4) on two partitions: hosts 0 to 7, 8 to 15.
        let with = |flows: &str| {
            let base = fat_tree(4);
            let base = &base[..base.find("[[workload]]").expect("a workload")];
            World::new(crate::scenario::load_str(&format!("{base}\n{flows}"), "deps", std::path::Path::new("."), &[], None).expect("scenario"))
        };
        let flow = |name: &str, src: u32, dst: u32, after: &str| format!("[[flow]]\nname = \"{name}\"\nsrc = {src}\ndst = {dst}\nsize = \"8KB\"\n{after}\n");
        // 0 -> 9 ends at 9; 9 -> 3 waits for it at 9: a ring's step across the cut.
        let ring = with(&(flow("a", 0, 9, "") + &flow("b", 9, 3, "after = [0]")));
        let cut = Split::new(&ring.c.net, 2).expect("cut");
        assert_eq!((cut.node_part[0], cut.node_part[9]), (0, 1));
        assert_eq!(cut.flow_refusal(&ring), None);
        assert!(Parallel::new(ring, 2, 1).is_ok());
        // 0 -> 9 ends at 9; 1 -> 2 waits for it at 1: across the cut.
        let across = with(&(flow("a", 0, 9, "") + &flow("b", 1, 2, "after = [0]")));
        let why = cut.flow_refusal(&across).expect("refused");
        assert!(why.contains("flow b waits for flow a") && why.contains("another partition"), "{why}");
        let (_, why) = *Parallel::new(across, 2, 1).err().expect("refused");
        assert!(why.contains("flow b waits for flow a"), "{why}");
        // 9 -> 0 starts in the other partition, but ends in this one: fine.
        let back = with(&(flow("a", 9, 0, "") + &flow("b", 0, 5, "after = [0]")));
        assert_eq!(cut.flow_refusal(&back), None);
    }
}
