//! The flow-level engine (`[engine] fidelity = "flow"`): flows as fluids
//! at their max-min fair rates over the links the routing gives them
//! ([`rates`], [`paths`]), driven by the same applications as the packet
//! engine and collected into the same outputs.
//!
//! The run is a [`World`] built as for packet level (the network, the flow
//! records, the applications and their `FlowStart` and `AppTimer` events
//! in its queue), whose queue this loop drains itself, interleaved with
//! the fluid model's own times: a flow's last byte leaving the fluid
//! (its rate integrated to its wire bytes less its first packet) and its
//! arrival, its first packet's store-and-forward latency later. A lone
//! flow's completion time is thus exactly its ideal one (flows.csv's
//! `ideal_fct_ns`). Rates change only at those times and are refilled for
//! the flows that share a link with a change. Pipelined ring collectives
//! move as one transfer per edge and channel ([`ring`]).

pub mod classes;
pub mod links;
pub mod paths;
pub mod rates;
pub mod ring;

use crate::engine::World;
use crate::id::FlowId;
use crate::sim::Event;
use rates::{Fabric, Share};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Keys of the sections the flow level reads that it models; every other
/// key set in `[switch]`, `[transport]`, `[signals]` and `monitor.cc`,
/// `monitor.stall` is accepted and reported as not modelled
/// ([`not_modelled`]).
pub const MODELLED: &[&str] = &["switch.routing", "switch.hash_salt", "transport.mtu", "transport.header", "transport.ack_size", "transport.entropy"];

/// The keys the scenario sets (after its profile) that have no meaning at
/// flow level, as dotted paths (a table's keys one by one), in file order:
/// summary.json lists them under `fidelity.not_modelled`.
pub fn not_modelled(sc: &crate::Scenario) -> Vec<String> {
    let Ok(doc) = sc.resolved_toml.parse::<toml::Table>() else { return Vec::new() };
    let mut out = Vec::new();
    fn walk(at: &str, v: &toml::Value, out: &mut Vec<String>) {
        match v.as_table() {
            Some(t) if !t.is_empty() => t.iter().for_each(|(k, v)| walk(&format!("{at}.{k}"), v, out)),
            _ => {
                if !MODELLED.contains(&at) {
                    out.push(at.to_string());
                }
            }
        }
    }
    for section in ["switch", "transport", "signals"] {
        if let Some(v) = doc.get(section) {
            walk(section, v, &mut out);
        }
    }
    if let Some(m) = doc.get("monitor").and_then(|m| m.as_table()) {
        for k in ["cc", "stall"] {
            if let Some(v) = m.get(k) {
                walk(&format!("monitor.{k}"), v, &mut out);
            }
        }
    }
    out
}

/// Whether `sc` runs at flow level (whose links.csv has no queue cells).
pub fn is_flow_level(sc: &crate::Scenario) -> bool {
    sc.engine.fidelity == crate::scenario::config::Fidelity::Flow
}

/// What the fluid model schedules for itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Due {
    /// The fluid of slot `0` (at version `1`) is drained.
    Drain(u32, u32),
    /// Flow `0` has arrived whole at its receiver.
    Arrive(u32),
    /// What the applications and the failure schedule ask for.
    Start(u32),
    Timer(u32),
    Change(u32),
}

/// A fluid flow in progress.
#[derive(Clone, Copy, Debug, Default)]
struct Live {
    flow: u32,
    /// Wire bytes left in the fluid at `since`.
    left: f64,
    since: u64,
    version: u32,
    /// Its first packet's latency, or a coarsened ring transfer's chain latency.
    latency: u64,
    /// Its first packet's time on the NIC's link.
    first_tx: u64,
    /// From its arrival to its sender's completion: the last ACK's way
    /// back, the flow's base RTT less a full packet's latency out
    /// ([`NO_BACK`] for a coarsened ring transfer).
    back: u64,
    /// Started in this batch: its rate is new even if it is 0.
    fresh: bool,
    /// Its fluid bytes in all, and the fraction of its bytes already
    /// billed to the links' job counters ([`bill`]).
    volume: f64,
    billed: f64,
}

/// The fluid model's state beside the world.
struct Fluid {
    fab: Fabric,
    shares: Vec<Share>,
    live: Vec<Live>,
    free: Vec<u32>,
    due: BinaryHeap<Reverse<(u64, u64, Due)>>,
    seq: u64,
    /// Queue length at which stale drains are dropped.
    compact_at: usize,
    meters: Option<links::LinkMeters>,
    coarse: Vec<crate::workload::collective::coarse::Coarse>,
    coarse_latency: Vec<Vec<u64>>,
    /// Host-side entropy varies per packet: every flow is spread.
    split: bool,
    /// Every flow is spread at every switch: links that carry the same
    /// shares of the same flows are one resource ([`classes`]).
    classes: Option<classes::Classes>,
    /// The run has jobs: each flow's bytes are billed per link (jobs.csv,
    /// job_links.csv).
    jobs: bool,
    mtu: u64,
    header: u64,
    ack_size: u64,
    ack_every: u64,
}

/// [`Live::back`] of a coarsened ring transfer.
const NO_BACK: u64 = u64::MAX;

/// The smallest queue whose stale drains are dropped.
const COMPACT_MIN: usize = 1 << 12;

/// Events between two progress callbacks at flow level.
const PROGRESS_EVENTS: u64 = 1 << 16;

impl Fluid {
    fn new(w: &World, coarse: Vec<crate::workload::collective::coarse::Coarse>) -> Fluid {
        let net = w.network();
        let cap = caps(w);
        let t = &w.scenario().transport;
        let (mtu, header) = (t.mtu as u64, t.header as u64);
        let coarse_latency = coarse.iter().map(|c| ring::chain_latencies(c, net, mtu, header)).collect();
        let meters = w.observers().link_rows().is_some().then(|| links::LinkMeters::new(cap.len(), w.observers().window_ps()));
        let split = t.entropy != crate::lb::EntropyMode::default();
        let split_all = split || net.switches().iter().all(|s| !matches!(s.routing, crate::lb::RoutingPolicy::Ecmp | crate::lb::RoutingPolicy::Deterministic));
        let classes = split_all.then(|| classes::Classes::build(net, &cap));
        Fluid {
            fab: Fabric::new(cap),
            shares: Vec::new(),
            live: Vec::new(),
            free: Vec::new(),
            due: BinaryHeap::new(),
            seq: 0,
            compact_at: COMPACT_MIN,
            meters,
            coarse,
            coarse_latency,
            split,
            classes,
            jobs: w.observers().job_bytes().is_some(),
            mtu,
            header,
            ack_size: t.ack_size as u64,
            ack_every: t.ack_every.max(1) as u64,
        }
    }

    fn push(&mut self, t: u64, d: Due) {
        self.seq += 1;
        self.due.push(Reverse((t, self.seq, d)));
        if self.due.len() >= self.compact_at {
            // Every rate change leaves the flow's previous drain behind:
            // dropping them all at once keeps the queue near its live
            // entries (their order is kept: every key is distinct).
            let live = &self.live;
            self.due.retain(|Reverse((_, _, d))| !matches!(*d, Due::Drain(slot, v) if live[slot as usize].version != v));
            self.compact_at = (2 * self.due.len()).max(COMPACT_MIN);
        }
    }

    /// The next time something of the fluid model is due (stale drains popped).
    fn next_due(&mut self) -> Option<u64> {
        while let Some(&Reverse((t, _, d))) = self.due.peek() {
            if let Due::Drain(slot, v) = d {
                if self.live[slot as usize].version != v {
                    self.due.pop();
                    continue;
                }
            }
            return Some(t);
        }
        None
    }

    /// Flow `flow` starts at `now`: its fluid joins the links of its path.
    fn start(&mut self, w: &mut World, flow: FlowId, now: u64) -> u32 {
        let (src, dst, size, npkts, entropy, cap, base_rtt) = {
            let mut r = w.c.transport.flows.record_mut(flow);
            r.started = true;
            r.start_ps = now;
            (r.src, r.dst, r.size, r.npkts as u64, r.entropy, r.rate_cap(), r.base_rtt_ps)
        };
        let net = &w.c.net;
        let coarse = self.coarse.iter().position(|c| c.holds(flow.0));
        let split = self.split || coarse.is_some();
        let mut share = Share { links: Vec::new(), cap: if cap == u64::MAX { f64::INFINITY } else { cap as f64 }, rate: 0.0 };
        match &mut self.classes {
            Some(c) => c.expand(net, src, dst, &mut share.links),
            None => paths::expand(net, src, dst, entropy, split, &mut share.links),
        }
        let nic_rate = net.ports()[net.host_port(src)].rate_bps();
        let (volume, latency, first_tx, back) = match coarse {
            Some(k) => {
                let c = &self.coarse[k];
                (c.volume(self.mtu, self.header, self.ack_size, self.ack_every), self.coarse_latency[k][(flow.0 - c.first) as usize], 0, NO_BACK)
            }
            None => {
                let full = self.mtu + self.header;
                let first = size.min(self.mtu) + self.header;
                let wire = size + npkts * self.header;
                let latency = paths::first_packet_latency(net, src, dst, entropy, split, first);
                let full_latency = if first == full { latency } else { paths::first_packet_latency(net, src, dst, entropy, split, full) };
                (wire - first, latency, crate::units::tx_time_ps(first, nic_rate), base_rtt.saturating_sub(full_latency))
            }
        };
        let live = Live { flow: flow.0, left: volume as f64, since: now, version: 0, latency, first_tx, back, fresh: true, volume: volume as f64, billed: 0.0 };
        let slot = match self.free.pop() {
            Some(s) => {
                let version = self.live[s as usize].version + 1;
                self.live[s as usize] = Live { version, ..live };
                self.shares[s as usize] = share;
                s
            }
            None => {
                self.live.push(live);
                self.shares.push(share);
                self.live.len() as u32 - 1
            }
        };
        self.fab.add(slot, &self.shares[slot as usize]);
        slot
    }

    /// Refills the rates of `set`, reschedules the drains of the flows
    /// whose rate changed, and brings the link meters up to `now`.
    fn refill(&mut self, set: &[u32], now: u64) {
        let old: Vec<f64> = set.iter().map(|&s| self.shares[s as usize].rate).collect();
        let mut links: Vec<u32> = Vec::new();
        self.fab.fill(set, &mut self.shares, &mut links);
        for (k, &s) in set.iter().enumerate() {
            let new = self.shares[s as usize].rate;
            let l = &mut self.live[s as usize];
            if new == old[k] && !l.fresh {
                continue;
            }
            l.fresh = false;
            // Settle what the old rate moved, then run at the new one.
            l.left = (l.left - old[k] * (now - l.since) as f64 / 8e12).max(0.0);
            l.since = now;
            l.version += 1;
            if let Some(t) = drain_time(now, l.left, new) {
                let d = Due::Drain(s, l.version);
                self.push(t, d);
            }
        }
        if let Some(m) = &mut self.meters {
            for &l in &links {
                for &p in members(&self.classes, &l) {
                    m.set(p, now, self.fab.load[l as usize], self.fab.cap[l as usize]);
                }
            }
        }
    }
}

/// The links that `link` (a resource of the fabric) stands for.
fn members<'a>(classes: &'a Option<classes::Classes>, link: &'a u32) -> &'a [u32] {
    match classes {
        Some(c) => c.members(*link),
        None => std::slice::from_ref(link),
    }
}

/// When `left` wire bytes at `rate` bits/s from `now` are through; None
/// at rate 0. Whole bytes at a whole rate take [`crate::units::tx_time_ps`]
/// exactly (a lone flow's ideal time).
fn drain_time(now: u64, left: f64, rate: f64) -> Option<u64> {
    if left <= 0.0 {
        return Some(now);
    }
    if rate <= 0.0 {
        return None;
    }
    let whole = |x: f64| x.fract() == 0.0 && x < 9.0e15;
    let dt = if whole(left) && whole(rate) {
        crate::units::tx_time_ps(left as u64, rate as u64)
    } else {
        (left * 8e12 / rate).ceil() as u64
    };
    Some(now.saturating_add(dt))
}

/// Every link's capacity now: its rate, or 0 while it is down.
fn caps(w: &World) -> Vec<f64> {
    let net = w.network();
    (0..net.ports().len() as u32)
        .map(|p| {
            let id = crate::id::PortId(p);
            if net.failures().is_down(id) {
                0.0
            } else {
                net.ports()[id].rate_bps() as f64
            }
        })
        .collect()
}

/// Runs `w` at flow level to completion or its stop time; answers why it
/// ended, as [`crate::run_with`]'s loop does.
pub fn run(w: &mut World, progress: &mut impl FnMut(&crate::Progress) -> bool) -> &'static str {
    let mut f = Fluid::new(w, w.scenario().flow_rings.clone());
    let stop = w.stop_ps();
    let mut events: u64 = 0;
    let mut next_look = PROGRESS_EVENTS;
    let mut started: Vec<u32> = Vec::new();
    let mut freed: Vec<u32> = Vec::new();
    let mut set: Vec<u32> = Vec::new();
    // The world's queue holds the first flow starts and the link changes;
    // from here on what the applications schedule is staged and taken
    // into the fluid model's own queue, which keeps one order for both.
    let mut initial = 0;
    while let Some((t, ev)) = w.ctx.q.pop() {
        take(&mut f, t, ev.event());
        initial += 1;
    }
    w.ctx.staged = Some(Vec::new());
    let reason = loop {
        let Some(t) = f.next_due() else { break "completed" };
        if stop.is_some_and(|s| t > s) {
            let s = stop.expect("a stop time");
            w.ctx.now = w.ctx.now.max(s);
            settle_unfinished(w, &f);
            break "stop_time";
        }
        w.ctx.now = t;
        let mut rerouted = false;
        // Everything due at `t`, what the applications schedule at `t` included.
        while f.next_due() == Some(t) {
            let Reverse((_, _, d)) = f.due.pop().expect("peeked");
            events += 1;
            match d {
                Due::Drain(slot, _) => drained(w, &mut f, slot, t, &mut freed),
                Due::Arrive(flow) => arrived(w, FlowId(flow), t),
                Due::Start(flow) => {
                    let id = FlowId(flow);
                    if !w.c.transport.flows.started(id) {
                        // A queue pair's part of a message: its share is decided now.
                        w.c.transport.start_part(t, id);
                        if w.c.transport.flows.spec(id).size == 0 {
                            nothing_to_send(w, id, t);
                        } else {
                            started.push(f.start(w, id, t));
                        }
                    }
                }
                Due::Timer(op) => w.c.transport.apps.timer(&mut w.ctx, op),
                Due::Change(change) => {
                    w.c.net.link_change(&mut w.ctx, &mut w.c.obs, change);
                    rerouted = true;
                }
            }
            let staged = w.ctx.staged.as_mut().expect("staged");
            if !staged.is_empty() {
                for (at, ev) in std::mem::take(staged) {
                    take(&mut f, at, ev.event());
                }
            }
        }
        // The rates of the flows that share a link with a change.
        f.fab.begin(f.live.len());
        set.clear();
        if rerouted {
            reroute(w, &mut f, t);
            set.extend((0..f.live.len() as u32).filter(|&s| f.live[s as usize].since != u64::MAX));
        } else {
            for &s in &started {
                if f.fab.mark_flow(s) {
                    set.push(s);
                }
            }
            let links = started.iter().flat_map(|&s| f.shares[s as usize].links.iter().map(|l| l.0)).chain(freed.iter().copied());
            f.fab.gather(links, &mut set);
        }
        started.clear();
        freed.clear();
        if !set.is_empty() {
            let s = std::mem::take(&mut set);
            f.refill(&s, t);
            set = s;
        }
        if events >= next_look {
            next_look = events + PROGRESS_EVENTS;
            let p = crate::Progress { sim_time_ps: t, stop_ps: stop, events, flows_completed: w.ctx.stats.flows_completed, flows_total: w.flow_store().len() };
            if !progress(&p) {
                break "interrupted";
            }
        }
    };
    w.ctx.staged = None;
    w.fluid_events = events.saturating_sub(initial);
    if let Some(m) = f.meters.take() {
        let rows = m.finish(w.ctx.now, &f.fab.cap);
        w.c.obs.put_link_rows(rows);
    }
    reason
}

/// An event the world would have queued, into the fluid model's queue.
fn take(f: &mut Fluid, t: u64, ev: Event) {
    let d = match ev {
        Event::FlowStart { flow } => Due::Start(flow.0),
        Event::AppTimer { op } => Due::Timer(op),
        Event::LinkChange { change } => Due::Change(change),
        // The packet engine's own events are never scheduled at flow level.
        _ => return,
    };
    f.push(t, d);
}

/// Slot `slot`'s fluid is through at `t`: its links are freed, the
/// application learns its last byte left the NIC, and its arrival is due
/// one first-packet latency later.
fn drained(w: &mut World, f: &mut Fluid, slot: u32, t: u64, freed: &mut Vec<u32>) {
    let l = f.live[slot as usize];
    let share = std::mem::take(&mut f.shares[slot as usize]);
    bill(w, f, &l, &share.links, 1.0);
    f.fab.remove(slot, &share);
    freed.extend(share.links.iter().map(|x| x.0));
    if let Some(m) = &mut f.meters {
        for (link, _) in &share.links {
            for &p in members(&f.classes, link) {
                m.set(p, t, f.fab.load[*link as usize], f.fab.cap[*link as usize]);
            }
        }
    }
    f.live[slot as usize] = Live { since: u64::MAX, version: l.version + 1, ..l };
    f.free.push(slot);
    f.push(t + l.latency, Due::Arrive(l.flow));
    let flow = FlowId(l.flow);
    let mut r = w.c.transport.flows.record_mut(flow);
    r.bytes_sent = r.size + r.npkts as u64 * f.header;
    // The sender is done when the last ACK is back: its arrival, and the
    // way back of the unloaded round trip (a full packet out, an ACK back);
    // a coarsened transfer's latency is a chain's, longer than a round trip.
    let back = match l.back {
        NO_BACK => r.base_rtt_ps.saturating_sub(l.latency.min(r.base_rtt_ps / 2 + 1)),
        b => b,
    };
    let done = t + l.latency + back;
    r.sender_done_ps = Some(done);
    let part = crate::transport::connection::PartDone { id: flow, size: r.size, start_ps: r.start_ps, base_rtt_ps: r.base_rtt_ps };
    let src = r.src;
    drop(r);
    w.c.transport.apps.sent(&mut w.ctx, flow, t + l.first_tx);
    let rate = w.c.net.ports()[w.c.net.host_port(src)].rate_bps();
    w.c.transport.part_done(done, part, rate);
}

/// Flow `flow` has no bytes at `t` (a queue pair's part that carries none
/// of its message): complete at once, as at packet level.
fn nothing_to_send(w: &mut World, flow: FlowId, t: u64) {
    let mut r = w.c.transport.flows.record_mut(flow);
    r.started = true;
    r.start_ps = t;
    r.finish_ps = Some(t);
    r.sender_done_ps = Some(t);
    drop(r);
    w.ctx.stats.flows_completed += 1;
    w.c.transport.apps.arrived(&mut w.ctx, flow);
}

/// Flow `flow` arrived whole at its receiver at `t`.
fn arrived(w: &mut World, flow: FlowId, t: u64) {
    let mut r = w.c.transport.flows.record_mut(flow);
    r.finish_ps = Some(t);
    r.rcv_nxt = r.npkts;
    w.ctx.stats.flows_completed += 1;
    w.c.transport.apps.arrived(&mut w.ctx, flow);
}

/// After a link change: capacities from the network, every live flow on
/// its path anew (its fluid kept).
fn reroute(w: &mut World, f: &mut Fluid, now: u64) {
    let cap = caps(w);
    // The families as they were (the flows' resources until each is moved)
    // and as they are now.
    let old = f.classes.take();
    f.classes = old.as_ref().map(|_| classes::Classes::build(&w.c.net, &cap));
    for s in 0..f.live.len() {
        if f.live[s].since == u64::MAX {
            continue;
        }
        let share = std::mem::take(&mut f.shares[s]);
        f.fab.remove(s as u32, &share);
        let l = &mut f.live[s];
        // Settle at the old rate: the refill starts from rate 0.
        l.left = (l.left - share.rate * (now - l.since) as f64 / 8e12).max(0.0);
        l.since = now;
        l.fresh = true;
        // What moved so far went over the old path.
        let l = *l;
        f.live[s].billed = bill_with(w, f, &old, &l, &share.links, moved(&l));
        let r = w.flow_store().spec(FlowId(l.flow));
        let split = f.split || f.coarse.iter().any(|c| c.holds(l.flow));
        let mut links = Vec::new();
        match &mut f.classes {
            Some(c) => c.expand(&w.c.net, r.src, r.dst, &mut links),
            None => paths::expand(&w.c.net, r.src, r.dst, r.entropy, split, &mut links),
        }
        f.shares[s] = Share { links, cap: share.cap, rate: 0.0 };
        f.fab.add(s as u32, &f.shares[s]);
        if let Some(m) = &mut f.meters {
            for (link, _) in &share.links {
                for &p in members(&old, link) {
                    m.set(p, now, f.fab.load[*link as usize], f.fab.cap[*link as usize]);
                }
            }
        }
    }
    if let Some(m) = &mut f.meters {
        for (l, c) in cap.iter().enumerate() {
            if *c != f.fab.cap[l] {
                let r = f.classes.as_ref().map_or(l, |k| k.rep(l as u32) as usize);
                m.set(l as u32, now, f.fab.load[r], f.fab.cap[l]);
            }
        }
    }
    f.fab.cap = cap;
}

/// At the stop time: each unfinished flow's record counts the whole
/// packets its fluid has moved.
fn settle_unfinished(w: &mut World, f: &Fluid) {
    let now = w.ctx.now;
    for (s, l) in f.live.iter().enumerate() {
        if l.since == u64::MAX {
            continue;
        }
        let left = (l.left - f.shares[s].rate * (now.saturating_sub(l.since)) as f64 / 8e12).max(0.0);
        bill(w, f, l, &f.shares[s].links, moved(&Live { left, ..*l }));
        let mut r = w.c.transport.flows.record_mut(FlowId(l.flow));
        let wire = (r.size + r.npkts as u64 * f.header) as f64;
        let sent = (wire - left).max(0.0);
        r.bytes_sent = sent as u64;
        r.rcv_nxt = ((sent / (r.mss as u64 + f.header) as f64) as u32).min(r.npkts);
    }
}

/// The fraction of `l`'s fluid through (0 for a flow with none: it is
/// through only when drained).
fn moved(l: &Live) -> f64 {
    if l.volume > 0.0 {
        (1.0 - l.left / l.volume).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// Bills the links' job counters for `l`'s bytes from the fraction it
/// had billed up to `to`, as its packets would put them on the wire: its
/// data's wire bytes over `links` (its fluid's links and shares), its
/// ACKs (one per `ack_every` data packets) over its way back; answers
/// `to`. Nothing without jobs.
fn bill(w: &mut World, f: &Fluid, l: &Live, links: &[(u32, f64)], to: f64) -> f64 {
    bill_with(w, f, &f.classes, l, links, to)
}

/// [`bill`] with `links` the resources of `classes`.
fn bill_with(w: &mut World, f: &Fluid, classes: &Option<classes::Classes>, l: &Live, links: &[(u32, f64)], to: f64) -> f64 {
    let part = to - l.billed;
    if !f.jobs || part <= 0.0 {
        return to;
    }
    let r = w.flow_store().spec(FlowId(l.flow));
    let (data, acks) = match f.coarse.iter().find(|c| c.holds(l.flow)) {
        Some(c) => c.wire(f.mtu, f.header, f.ack_size, f.ack_every),
        None => {
            let pkts = r.npkts as u64;
            (r.size + pkts * f.header, pkts.div_ceil(f.ack_every) * f.ack_size)
        }
    };
    let World { c, .. } = w;
    for (link, share) in links {
        for &p in members(classes, link) {
            c.obs.add_job_bytes(p, l.flow, (data as f64 * share * part).round() as u64);
        }
    }
    let split = f.split || f.coarse.iter().any(|c| c.holds(l.flow));
    let mut back = Vec::new();
    paths::expand(&c.net, r.dst, r.src, r.entropy, split, &mut back);
    for &(link, share) in &back {
        c.obs.add_job_bytes(link, l.flow, (acks as f64 * share * part).round() as u64);
    }
    to
}
