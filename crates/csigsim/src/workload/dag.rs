//! A workload as a graph of operations: flows, compute delays and joins,
//! each begun once every operation it waits for is complete. Training
//! traces (a rank computes, then sends; a collective step waits for the
//! data it forwards) are such graphs; trace readers build one.
//!
//! - A flow begins at the later of the time it is ready and its own
//!   scheduled start, and is complete when it has arrived whole at its
//!   receiver.
//! - A compute delay runs on a stream (a rank's GPU, or its CPU): a stream
//!   runs one delay at a time, the ready ones in the order they became
//!   ready (ties: by operation). It is complete `duration` after it began.
//! - A join is complete as soon as it is ready: where several operations
//!   meet, or an operation that others wait to *begin* (its begin is a join
//!   before it).
//! - A flow's "sent" is complete when the flow's last packet has left its
//!   NIC for the first time (a send's local completion: the sender may go
//!   on while the data is still in the network).

use super::FlowSpec;
use crate::id::HostId;
use crate::units::Time;
use std::sync::Arc;

/// One operation of a [`Dag`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Flow `i` of the workload.
    Flow(u32),
    /// A delay of `duration` on stream `stream`.
    Compute { stream: u32, duration: Time },
    Join,
    /// Flow `i`'s last packet has left its NIC.
    Sent(u32),
}

/// Operations and what each waits for, checked: every flow is one
/// operation's, every dependency names an operation, and no operation
/// waits for itself through others.
#[derive(Clone, Debug, PartialEq)]
pub struct Dag {
    pub specs: DagFlows,
    /// Shared with the run ([`DagRun`]), which reads them as it goes.
    pub ops: Arc<[Op]>,
    /// Operation `i` waits for `after[first[i]..first[i + 1]]`.
    first: Vec<u32>,
    after: Vec<u32>,
    /// Streams in all (`0..streams`).
    pub streams: u32,
    /// The trace's operations as written, for ops.csv (empty for a graph
    /// built by hand).
    pub trace: Trace,
    /// Per operation: the host it runs at (a compute delay's rank's, a
    /// flow's sender, a join's rank's), which the parallel mode cuts by;
    /// empty for a graph built by hand ([`Dag::set_hosts`]).
    hosts: Vec<u32>,
}

/// A graph's flows, 32 bytes each: a trace of millions of flows repeats
/// a few names (a collective's flows share its name), held once here.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DagFlows {
    flows: Vec<DagFlow>,
    names: Vec<String>,
    /// Each name's index in `names`, so that a trace of many names that
    /// interleave loads in linear time.
    name_index: std::collections::HashMap<String, u32>,
    /// The flows with a rate cap and their caps (none in a trace).
    caps: Vec<(u32, u64)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct DagFlow {
    src: HostId,
    dst: HostId,
    size: u64,
    start: Time,
    /// Its name's index in [`DagFlows::names`].
    name: u32,
    channel: u32,
}

impl DagFlows {
    /// Adds flow `f` (the next id).
    pub fn push(&mut self, f: &FlowSpec) -> u32 {
        let i = self.flows.len() as u32;
        // Flows of one name come together: the last flow's is nearly always it.
        let last = self.flows.last().map(|d| d.name).filter(|&k| self.names[k as usize] == f.name);
        let name = match last.or_else(|| self.name_index.get(&f.name).copied()) {
            Some(k) => k,
            None => {
                let k = self.names.len() as u32;
                self.names.push(f.name.clone());
                self.name_index.insert(f.name.clone(), k);
                k
            }
        };
        if f.rate_cap != u64::MAX {
            self.caps.push((i, f.rate_cap));
        }
        self.flows.push(DagFlow { src: f.src, dst: f.dst, size: f.size, start: f.start, name, channel: f.channel });
        i
    }

    pub fn len(&self) -> usize {
        self.flows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    /// Flow `i` written into `f` (its name's buffer reused).
    pub fn spec_into(&self, i: u32, f: &mut FlowSpec) {
        let d = &self.flows[i as usize];
        f.src = d.src;
        f.dst = d.dst;
        f.size = d.size;
        f.start = d.start;
        f.name.clear();
        f.name.push_str(&self.names[d.name as usize]);
        f.rate_cap = self.caps.binary_search_by_key(&i, |c| c.0).map_or(u64::MAX, |k| self.caps[k].1);
        f.channel = d.channel;
    }

    pub fn name(&self, i: u32) -> &str {
        &self.names[self.flows[i as usize].name as usize]
    }

    /// Flow `i`'s scheduled start.
    pub fn start(&self, i: u32) -> Time {
        self.flows[i as usize].start
    }
}

impl From<Vec<FlowSpec>> for DagFlows {
    fn from(specs: Vec<FlowSpec>) -> DagFlows {
        let mut d = DagFlows::default();
        d.flows.reserve_exact(specs.len());
        for f in &specs {
            d.push(f);
        }
        d
    }
}

/// What an operation of a trace is, as ops.csv names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepKind {
    Compute,
    Send,
    Recv,
    Collective,
    /// Nothing to do (a metadata node, a skipped CPU operation).
    Other,
}

impl StepKind {
    pub fn name(self) -> &'static str {
        match self {
            StepKind::Compute => "compute",
            StepKind::Send => "send",
            StepKind::Recv => "recv",
            StepKind::Collective => "collective",
            StepKind::Other => "other",
        }
    }
}

/// One operation of a trace as written (a node of a Chakra rank, a line of
/// a GOAL rank): the graph operation that begins it and the one complete
/// when it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub rank: u32,
    /// The node's id (Chakra), or the line (GOAL).
    pub id: u64,
    /// Its name, an index into [`Trace::names`].
    pub name: u32,
    pub kind: StepKind,
    /// The iteration of the rank it is in, from 0.
    pub iteration: u32,
    pub begin: u32,
    pub done: u32,
}

/// A trace's operations as written, rank by rank in file order, and the
/// host each rank runs on.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    /// The workload's name.
    pub name: String,
    pub steps: Vec<Step>,
    /// Step names, each once (a trace repeats a few operator names).
    pub names: Vec<String>,
    pub hosts: Vec<u32>,
}

impl Trace {
    /// The code of `name` in `names`, given through `index`.
    pub fn name_code(&mut self, index: &mut std::collections::HashMap<String, u32>, name: &str) -> u32 {
        if let Some(&c) = index.get(name) {
            return c;
        }
        self.names.push(name.to_string());
        let c = self.names.len() as u32 - 1;
        index.insert(name.to_string(), c);
        c
    }
}

/// Groups the values of `pairs` (key, value) by key, `0..n`: the values
/// of key `k` are `values[first[k]..first[k + 1]]`, in the order `pairs`
/// gives them (a counting sort, stable).
pub(super) fn adjacency<I: Iterator<Item = (u32, u32)> + Clone>(n: usize, pairs: I) -> (Vec<u32>, Vec<u32>) {
    let mut first = vec![0u32; n + 1];
    for (k, _) in pairs.clone() {
        first[k as usize + 1] += 1;
    }
    for i in 0..n {
        first[i + 1] += first[i];
    }
    let mut fill = first.clone();
    let mut values = vec![0; first[n] as usize];
    for (k, v) in pairs {
        values[fill[k as usize] as usize] = v;
        fill[k as usize] += 1;
    }
    (first, values)
}

/// Why a graph is not one: its message names the operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DagError {
    pub op: u32,
    pub message: String,
}

impl Dag {
    /// The graph of `ops` over the flows `specs`, where `edges` holds
    /// (operation, an operation it waits for) pairs in any order.
    pub fn new(specs: impl Into<DagFlows>, ops: Vec<Op>, mut edges: Vec<(u32, u32)>) -> Result<Dag, DagError> {
        let mut specs: DagFlows = specs.into();
        // Held for the whole run: no room left over from growing.
        specs.flows.shrink_to_fit();
        let n = ops.len();
        let mut owner = vec![u32::MAX; specs.len()];
        let mut streams = 0;
        for (i, op) in ops.iter().enumerate() {
            match *op {
                Op::Flow(f) => {
                    let Some(o) = owner.get_mut(f as usize) else {
                        return Err(DagError { op: i as u32, message: format!("names flow {f}, of {} flows", specs.len()) });
                    };
                    if *o != u32::MAX {
                        return Err(DagError { op: i as u32, message: format!("flow {f} is also operation {o}'s") });
                    }
                    *o = i as u32;
                }
                Op::Compute { stream, .. } => streams = streams.max(stream + 1),
                Op::Join => {}
                Op::Sent(f) if f as usize >= specs.len() => {
                    return Err(DagError { op: i as u32, message: format!("names flow {f}, of {} flows", specs.len()) });
                }
                Op::Sent(_) => {}
            }
        }
        if let Some(f) = owner.iter().position(|&o| o == u32::MAX) {
            return Err(DagError { op: u32::MAX, message: format!("flow {f} is no operation's") });
        }
        for &(op, a) in &edges {
            if op as usize >= n || a as usize >= n {
                return Err(DagError { op, message: format!("waits for operation {a}, of {n} operations") });
            }
            if op == a {
                return Err(DagError { op, message: "waits for itself".into() });
            }
        }
        edges.sort_unstable();
        edges.dedup();
        let (first, after) = adjacency(n, edges.iter().copied());
        // Gone before the operations are copied into their shared slice.
        drop(edges);
        for (i, op) in ops.iter().enumerate() {
            if let Op::Sent(_) = op {
                if first[i + 1] > first[i] {
                    return Err(DagError { op: i as u32, message: "a flow's sent waits for its flow alone".into() });
                }
            }
        }
        let dag = Dag { specs, ops: ops.into(), first, after, streams, trace: Trace::default(), hosts: Vec::new() };
        if let Some(op) = dag.cycle() {
            return Err(DagError { op, message: "waits for itself through the operations it waits for: none of them could begin".into() });
        }
        Ok(dag)
    }

    /// Sets each operation's host (one a operation; a flow's and its
    /// sent's are its sender, whatever `hosts` says).
    pub fn set_hosts(&mut self, mut hosts: Vec<u32>) {
        assert_eq!(hosts.len(), self.ops.len(), "one host an operation");
        for (h, op) in hosts.iter_mut().zip(self.ops.iter()) {
            if let Op::Flow(f) | Op::Sent(f) = *op {
                *h = self.specs.flows[f as usize].src.0;
            }
        }
        self.hosts = hosts;
    }

    /// The host operation `op` runs at, if the graph knows its hosts.
    pub fn host(&self, op: u32) -> Option<HostId> {
        self.hosts.get(op as usize).map(|&h| HostId(h))
    }

    /// Does the graph know where each operation runs?
    pub fn has_hosts(&self) -> bool {
        self.hosts.len() == self.ops.len()
    }

    /// Flow `i`'s sender and receiver.
    pub fn flow_ends(&self, f: u32) -> (HostId, HostId) {
        let d = &self.specs.flows[f as usize];
        (d.src, d.dst)
    }

    /// What operation `op` waits for.
    pub fn after(&self, op: u32) -> &[u32] {
        &self.after[self.first[op as usize] as usize..self.first[op as usize + 1] as usize]
    }

    /// An operation on a cycle, if the graph has one (Kahn's order leaves
    /// it out). A flow's "sent" comes after its flow has begun: a flow that
    /// waits for its own sent, through others, never begins.
    fn cycle(&self) -> Option<u32> {
        let (dependents, at) = self.dependents();
        let mut waiting: Vec<u32> = (0..self.ops.len() as u32).map(|i| self.after(i).len() as u32).collect();
        let mut sent_of = vec![u32::MAX; self.specs.len()];
        for (i, op) in self.ops.iter().enumerate() {
            if let Op::Sent(f) = *op {
                waiting[i] += 1;
                sent_of[f as usize] = i as u32;
            }
        }
        let mut ready: Vec<u32> = (0..self.ops.len() as u32).filter(|&i| waiting[i as usize] == 0).collect();
        let mut done = 0;
        while let Some(op) = ready.pop() {
            done += 1;
            let sent = match self.ops[op as usize] {
                Op::Flow(f) if sent_of[f as usize] != u32::MAX => Some(sent_of[f as usize]),
                _ => None,
            };
            for &d in dependents[at[op as usize] as usize..at[op as usize + 1] as usize].iter().chain(sent.as_ref()) {
                waiting[d as usize] -= 1;
                if waiting[d as usize] == 0 {
                    ready.push(d);
                }
            }
        }
        (done < self.ops.len()).then(|| waiting.iter().position(|&w| w > 0).expect("a waiting operation") as u32)
    }

    /// The operations waiting for each (`dependents[at[i]..at[i + 1]]`, in
    /// increasing order).
    fn dependents(&self) -> (Vec<u32>, Vec<u32>) {
        let (at, dependents) = adjacency(self.ops.len(), (0..self.ops.len() as u32).flat_map(|op| self.after(op).iter().map(move |&a| (a, op))));
        (dependents, at)
    }

    /// The flow-wait flags of every flow, in one pass.
    pub fn flows_waiting(&self) -> Vec<bool> {
        let mut w = vec![false; self.specs.len()];
        for (i, op) in self.ops.iter().enumerate() {
            if let Op::Flow(f) = *op {
                w[f as usize] = !self.after(i as u32).is_empty();
            }
        }
        w
    }
}

/// A [`Dag`] as the run goes: what each operation still waits for, the
/// streams, and when each operation began and was complete.
#[derive(Debug)]
pub(super) struct DagRun {
    ops: Arc<[Op]>,
    dependents: Vec<u32>,
    at: Vec<u32>,
    waiting: Vec<u32>,
    /// Per flow: its operation, and its "sent" operation (`u32::MAX`: none).
    flow_op: Vec<u32>,
    flow_sent: Vec<u32>,
    /// Per flow: its scheduled start; empty when every flow's is
    /// `start` (a trace's are).
    flow_start: Vec<u64>,
    start: u64,
    /// Per stream: busy, and the delays ready for it in order.
    busy: Vec<bool>,
    queued: Vec<std::collections::VecDeque<u32>>,
    /// Per operation: when it began and when it was complete (`u64::MAX`: not yet).
    pub(super) begun: Vec<u64>,
    pub(super) ended: Vec<u64>,
    /// Operations complete and their dependents not yet told (reused).
    stack: Vec<u32>,
}

/// What a graph asks of the run: a flow of the workload to start, or an
/// operation's timer (ids of the workload).
pub(super) enum Start {
    Flow(u32, u64),
    Timer(u32, u64),
}

impl DagRun {
    pub(super) fn new(d: &Dag) -> DagRun {
        let (dependents, at) = d.dependents();
        let waiting = (0..d.ops.len() as u32).map(|i| d.after(i).len() as u32).collect();
        let mut flow_op = vec![0; d.specs.len()];
        let mut flow_sent = vec![u32::MAX; d.specs.len()];
        for (i, op) in d.ops.iter().enumerate() {
            match *op {
                Op::Flow(f) => flow_op[f as usize] = i as u32,
                Op::Sent(f) => flow_sent[f as usize] = i as u32,
                _ => {}
            }
        }
        let start = if d.specs.is_empty() { 0 } else { d.specs.start(0).0 };
        let uniform = (0..d.specs.len() as u32).all(|f| d.specs.start(f).0 == start);
        DagRun {
            ops: Arc::clone(&d.ops),
            dependents,
            at,
            waiting,
            flow_op,
            flow_sent,
            flow_start: if uniform { Vec::new() } else { (0..d.specs.len() as u32).map(|f| d.specs.start(f).0).collect() },
            start,
            busy: vec![false; d.streams as usize],
            queued: vec![Default::default(); d.streams as usize],
            begun: vec![u64::MAX; d.ops.len()],
            ended: vec![u64::MAX; d.ops.len()],
            stack: Vec::new(),
        }
    }

    /// The run starts: the operations that wait for nothing and are not
    /// flows (those start at their scheduled start) begin.
    pub(super) fn start(&mut self, now: u64, out: &mut impl FnMut(Start)) {
        for op in 0..self.ops.len() as u32 {
            if self.waiting[op as usize] == 0 && !matches!(self.ops[op as usize], Op::Flow(_) | Op::Sent(_)) {
                self.ready(op, now, out);
            }
        }
        self.settle(now, out);
    }

    /// Operation `op` is ready at `now`.
    fn ready(&mut self, op: u32, now: u64, out: &mut impl FnMut(Start)) {
        match self.ops[op as usize] {
            Op::Flow(f) => {
                let at = now.max(self.flow_start(f));
                self.begun[op as usize] = at;
                out(Start::Flow(f, at));
            }
            Op::Compute { stream, duration } => {
                if self.busy[stream as usize] {
                    self.queued[stream as usize].push_back(op);
                } else {
                    self.busy[stream as usize] = true;
                    self.begun[op as usize] = now;
                    out(Start::Timer(op, now.saturating_add(duration.0)));
                }
            }
            Op::Join => {
                self.begun[op as usize] = now;
                self.ended[op as usize] = now;
                self.stack.push(op);
            }
            Op::Sent(_) => unreachable!("a flow's sent waits for nothing"),
        }
    }

    fn flow_start(&self, f: u32) -> u64 {
        self.flow_start.get(f as usize).copied().unwrap_or(self.start)
    }

    /// Does any flow have a "sent" operation?
    pub(super) fn watches_sent(&self) -> bool {
        self.flow_sent.iter().any(|&o| o != u32::MAX)
    }

    /// Flow `f`'s last packet leaves its NIC until `end` (sent for the
    /// first time or again): its "sent" is complete then, the first time.
    pub(super) fn sent(&mut self, f: u32, end: u64, out: &mut impl FnMut(Start)) {
        let op = self.flow_sent[f as usize];
        if op == u32::MAX || self.begun[op as usize] != u64::MAX {
            return;
        }
        self.begun[op as usize] = self.begun[self.flow_op[f as usize] as usize];
        out(Start::Timer(op, end));
    }

    /// Tells the dependents of every operation complete at `now`.
    fn settle(&mut self, now: u64, out: &mut impl FnMut(Start)) {
        while let Some(op) = self.stack.pop() {
            for k in self.at[op as usize]..self.at[op as usize + 1] {
                let d = self.dependents[k as usize];
                self.waiting[d as usize] -= 1;
                if self.waiting[d as usize] == 0 {
                    self.ready(d, now, out);
                }
            }
        }
    }

    /// Flow `f` of the workload arrived whole at `now`.
    pub(super) fn arrived(&mut self, f: u32, now: u64, out: &mut impl FnMut(Start)) {
        let op = self.flow_op[f as usize];
        if self.begun[op as usize] == u64::MAX {
            // A flow that waited for nothing started at its scheduled start.
            self.begun[op as usize] = self.flow_start(f);
        }
        self.ended[op as usize] = now;
        self.stack.push(op);
        self.settle(now, out);
    }

    /// Operation `op`'s delay is over at `now`: its stream takes the next.
    pub(super) fn timer(&mut self, op: u32, now: u64, out: &mut impl FnMut(Start)) {
        self.ended[op as usize] = now;
        match self.ops[op as usize] {
            Op::Compute { stream, .. } => {
                self.busy[stream as usize] = false;
                if let Some(next) = self.queued[stream as usize].pop_front() {
                    self.ready(next, now, out);
                }
            }
            Op::Sent(_) => {}
            _ => unreachable!("only a compute delay or a sent has a timer"),
        }
        self.stack.push(op);
        self.settle(now, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::HostId;

    fn flow(src: u32, dst: u32) -> FlowSpec {
        FlowSpec { src: HostId(src), dst: HostId(dst), size: 1000, start: Time(0), name: "f".into(), rate_cap: u64::MAX, channel: 0 }
    }

    /// Drives a run by hand: flows arrive `flight` after they start;
    /// answers each operation's (begun, ended).
    fn drive(d: &Dag, flight: u64) -> Vec<(u64, u64)> {
        let mut run = DagRun::new(d);
        let mut events: Vec<(u64, bool, u32)> = Vec::new();
        let mut out = |s: Start| match s {
            Start::Flow(f, at) => events.push((at + flight, true, f)),
            Start::Timer(op, at) => events.push((at, false, op)),
        };
        // Flows that wait for nothing start at their scheduled start.
        for (f, w) in d.flows_waiting().iter().enumerate() {
            if !w {
                out(Start::Flow(f as u32, d.specs.start(f as u32).0));
            }
        }
        run.start(0, &mut out);
        while !events.is_empty() {
            events.sort_by_key(|e| std::cmp::Reverse(*e));
            let (t, is_flow, id) = events.pop().expect("an event");
            let mut out = |s: Start| match s {
                Start::Flow(f, at) => events.push((at + flight, true, f)),
                Start::Timer(op, at) => events.push((at, false, op)),
            };
            if is_flow {
                run.arrived(id, t, &mut out);
            } else {
                run.timer(id, t, &mut out);
            }
        }
        run.begun.iter().copied().zip(run.ended.iter().copied()).collect()
    }

    /// Compute, send, compute on the other side: each begins when the one
    /// before is complete.
    #[test]
    fn a_chain_of_compute_and_a_flow_runs_in_order() {
        let ops = vec![Op::Compute { stream: 0, duration: Time(100) }, Op::Flow(0), Op::Compute { stream: 1, duration: Time(50) }];
        let d = Dag::new(vec![flow(0, 1)], ops, vec![(1, 0), (2, 1)]).unwrap();
        assert_eq!(drive(&d, 1000), vec![(0, 100), (100, 1100), (1100, 1150)]);
    }

    /// One stream runs one delay at a time, in the order they became
    /// ready; another stream runs beside it; a join waits for all.
    #[test]
    fn a_stream_runs_its_delays_one_at_a_time_and_a_join_waits_for_all() {
        let ops = vec![
            Op::Compute { stream: 0, duration: Time(10) },
            Op::Compute { stream: 0, duration: Time(20) },
            Op::Compute { stream: 1, duration: Time(5) },
            Op::Join,
        ];
        let d = Dag::new(vec![], ops, vec![(3, 0), (3, 1), (3, 2)]).unwrap();
        assert_eq!(drive(&d, 0), vec![(0, 10), (10, 30), (0, 5), (30, 30)]);
    }

    /// A flow ready before its scheduled start begins at its start.
    #[test]
    fn a_flow_begins_no_earlier_than_its_scheduled_start() {
        let mut f = flow(0, 1);
        f.start = Time(500);
        let d = Dag::new(vec![f], vec![Op::Compute { stream: 0, duration: Time(100) }, Op::Flow(0)], vec![(1, 0)]).unwrap();
        assert_eq!(drive(&d, 10), vec![(0, 100), (500, 510)]);
    }

    /// Flows of two different starts: each begins no earlier than its own.
    #[test]
    fn flows_of_different_starts_each_begin_at_their_own() {
        let (mut a, mut b) = (flow(0, 1), flow(1, 0));
        a.start = Time(300);
        b.start = Time(700);
        let ops = vec![Op::Compute { stream: 0, duration: Time(500) }, Op::Flow(0), Op::Flow(1)];
        let d = Dag::new(vec![a, b], ops, vec![(1, 0), (2, 0)]).unwrap();
        assert_eq!(drive(&d, 10), vec![(0, 500), (500, 510), (700, 710)]);
    }

    /// A graph holds a flow in 32 bytes and each name once, and gives each
    /// flow back as written; the run shares the graph's operations.
    #[test]
    fn a_graphs_flows_are_held_compactly_and_read_back_as_written() {
        assert_eq!(std::mem::size_of::<DagFlow>(), 32);
        let mut specs = Vec::new();
        for i in 0..3000u32 {
            let mut f = flow(i % 7, 7 + i % 5);
            f.size = 1000 + i as u64;
            f.start = Time(i as u64 / 1000);
            f.name = format!("w.g{}", i / 1000);
            f.channel = i % 2;
            if i == 1234 {
                f.rate_cap = 5_000_000_000;
            }
            specs.push(f);
        }
        let ops = (0..3000).map(Op::Flow).collect();
        let d = Dag::new(specs.clone(), ops, vec![]).unwrap();
        assert_eq!(d.specs.names, vec!["w.g0", "w.g1", "w.g2"]);
        let mut f = flow(0, 0);
        for (i, s) in specs.iter().enumerate() {
            d.specs.spec_into(i as u32, &mut f);
            assert_eq!(&f, s);
            assert_eq!(d.specs.name(i as u32), s.name);
        }
        let run = DagRun::new(&d);
        assert!(Arc::ptr_eq(&run.ops, &d.ops));
        assert_eq!(run.flow_start.len(), 3000, "starts differ: one per flow");
    }

    /// Names that interleave (each rank's point-to-point flows between
    /// collectives) are each held once and read back as written.
    #[test]
    fn interleaved_names_are_held_once() {
        let mut d = DagFlows::default();
        let names: Vec<String> = (0..2000).map(|i| format!("r{}", i % 1000)).collect();
        for n in &names {
            let mut f = flow(0, 1);
            f.name = n.clone();
            d.push(&f);
        }
        assert_eq!(d.names.len(), 1000);
        for (i, n) in names.iter().enumerate() {
            assert_eq!(d.name(i as u32), n);
        }
    }

    #[test]
    fn bad_graphs_are_refused_naming_the_operation() {
        let e = Dag::new(vec![], vec![Op::Join, Op::Join, Op::Join], vec![(0, 2), (1, 0), (2, 1)]).unwrap_err();
        assert!(e.message.contains("waits for itself through"), "{e:?}");
        let e = Dag::new(vec![], vec![Op::Join], vec![(0, 3)]).unwrap_err();
        assert_eq!((e.op, e.message.as_str()), (0, "waits for operation 3, of 1 operations"));
        let e = Dag::new(vec![flow(0, 1)], vec![Op::Join], vec![]).unwrap_err();
        assert_eq!(e.message, "flow 0 is no operation's");
        let e = Dag::new(vec![flow(0, 1)], vec![Op::Flow(0), Op::Flow(0)], vec![]).unwrap_err();
        assert_eq!((e.op, e.message.as_str()), (1, "flow 0 is also operation 0's"));
        // A flow that waits (through a compute) for its own sent.
        let ops = vec![Op::Compute { stream: 0, duration: Time(1) }, Op::Flow(0), Op::Sent(0)];
        let e = Dag::new(vec![flow(0, 1)], ops, vec![(0, 2), (1, 0)]).unwrap_err();
        assert!(e.message.contains("waits for itself through"), "{e:?}");
    }
}
