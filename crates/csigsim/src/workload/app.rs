//! Workloads as the run drives them: each workload is an application that
//! starts its flows when the run starts, when a flow of its own has
//! arrived (a collective's next slice, a pipeline's next stage), or when
//! one has left its NIC (the next work request of a queue pair). It holds
//! its own state: what each of its flows still waits for.
//!
//! A flow that waits starts `gap` after the last flow it waits for has
//! arrived whole at its receiver, not before the flow it queues behind
//! (`after_sent`) has put its last packet on the wire for the first time,
//! and not before its own scheduled start.

use super::{Flows, Workload};
use crate::id::FlowId;
use crate::sim::{Ctx, Event};

/// A flow's wait for its prerequisites.
#[derive(Clone, Copy, Debug)]
struct Waiter {
    /// Prerequisites not yet met.
    waiting: u32,
    /// The earliest start its scheduled start and the prerequisites met so
    /// far allow.
    earliest: u64,
}

impl Waiter {
    /// One prerequisite met, allowing a start at `at` or later: the start,
    /// once none is left.
    #[inline]
    fn met(&mut self, at: u64) -> Option<u64> {
        self.waiting -= 1;
        self.earliest = self.earliest.max(at);
        (self.waiting == 0).then_some(self.earliest)
    }
}

/// A listed workload's dependencies, by flow of the workload.
#[derive(Debug, Default)]
struct Graph {
    waiters: Vec<Waiter>,
    /// The gap of each flow's start after its last prerequisite arrived.
    gap: Vec<u64>,
    /// Per flow: the flows waiting for it (`dependents[first[f]..first[f + 1]]`).
    first: Vec<u32>,
    dependents: Vec<u32>,
    /// Per flow: the flow queued behind it (`u32::MAX`: none); empty when no flow queues.
    sent_next: Vec<u32>,
}

impl Graph {
    fn new(specs: &[super::FlowSpec], deps: &[super::collective::FlowDep]) -> Graph {
        let flows = specs.len();
        let mut waiters: Vec<Waiter> = specs.iter().map(|f| Waiter { waiting: 0, earliest: f.start.0 }).collect();
        let mut gap = vec![0; flows];
        let mut sent_next = Vec::new();
        for d in deps {
            let w = &mut waiters[d.flow as usize];
            w.waiting = d.after.len() as u32;
            gap[d.flow as usize] = d.gap.0;
            if let Some(a) = d.after_sent {
                if sent_next.is_empty() {
                    sent_next = vec![u32::MAX; flows];
                }
                debug_assert_eq!(sent_next[a as usize], u32::MAX, "one flow queues behind {a}");
                sent_next[a as usize] = d.flow;
                w.waiting += 1;
            }
        }
        let (first, dependents) = super::dag::adjacency(flows, deps.iter().flat_map(|d| d.after.iter().map(move |&a| (a, d.flow))));
        Graph { waiters, gap, first, dependents, sent_next }
    }
}

/// A ring collective's plan and what each of its flows still waits for.
#[derive(Debug)]
struct Ring {
    plan: super::collective::ring::RingPlan,
    waiters: Vec<Waiter>,
    /// Per flow, with `fifo`: has its last packet left the NIC (the flow
    /// queued behind it was told)?
    sent: Vec<u64>,
}

/// One workload's application.
#[derive(Debug)]
enum App {
    /// Flows that wait for nothing: each starts at its scheduled start.
    Timed,
    Graph(Graph),
    Ring(Ring),
    Dag(super::dag::DagRun),
}

/// Every workload's application, in flow order: workload `k` owns flows
/// `first[k]..first[k + 1]`.
#[derive(Debug, Default)]
pub struct Apps {
    first: Vec<u32>,
    /// Workload `k`'s graph operations are `first_op[k]..first_op[k + 1]`
    /// (the ids of [`Event::AppTimer`]).
    first_op: Vec<u32>,
    apps: Vec<App>,
    /// Does any flow wait for another's arrival, or for one to leave its NIC?
    waits: bool,
    watches_sent: bool,
}

impl Apps {
    /// The run is over: the ring plans' waits (16 bytes a flow) go, as
    /// nothing waits any more. A graph keeps its operations' times, which
    /// the outputs read.
    pub fn end(&mut self) {
        for a in &mut self.apps {
            if let App::Ring(r) = a {
                r.waiters = Vec::new();
                r.sent = Vec::new();
            }
        }
    }

    pub fn new(workloads: &[Workload]) -> Apps {
        let mut first = Vec::with_capacity(workloads.len() + 1);
        let mut first_op = Vec::with_capacity(workloads.len() + 1);
        let mut ops = 0;
        let mut apps = Vec::with_capacity(workloads.len());
        let (mut waits, mut watches_sent) = (false, false);
        for w in workloads {
            first.push(w.first);
            first_op.push(ops);
            ops += w.ops();
            let app = match &w.flows {
                Flows::Listed { deps, .. } if deps.is_empty() => App::Timed,
                Flows::Listed { specs, deps } => {
                    let g = Graph::new(specs, deps);
                    watches_sent |= !g.sent_next.is_empty();
                    App::Graph(g)
                }
                Flows::Ring(plan) => {
                    let n = plan.flows() as u32;
                    let waiters = (0..n).map(|i| Waiter { waiting: plan.waiting(i), earliest: plan.start.0 }).collect();
                    let sent = vec![0; if plan.fifo { (n as usize).div_ceil(64) } else { 0 }];
                    watches_sent |= plan.fifo;
                    App::Ring(Ring { plan: plan.clone(), waiters, sent })
                }
                Flows::Dag(d) => {
                    let run = super::dag::DagRun::new(d);
                    watches_sent |= run.watches_sent();
                    App::Dag(run)
                }
            };
            waits |= !matches!(app, App::Timed);
            apps.push(app);
        }
        first.push(workloads.last().map_or(0, |w| w.first + w.len()));
        first_op.push(ops);
        Apps { first, first_op, apps, waits, watches_sent }
    }

    /// Does any flow wait for others?
    #[inline]
    pub fn any_waits(&self) -> bool {
        self.waits
    }

    /// Does any flow wait for another to leave its NIC?
    #[inline]
    pub fn watches_sent(&self) -> bool {
        self.watches_sent
    }

    /// The application of `flow`, and the flow's index in it.
    /// Answers the application, the flow's index in it, and the
    /// application's first flow and first graph operation.
    fn owner(&mut self, flow: FlowId) -> (&mut App, u32, u32, u32) {
        let k = self.first.partition_point(|&f| f <= flow.0) - 1;
        let first = self.first[k];
        (&mut self.apps[k], flow.0 - first, first, self.first_op[k])
    }

    /// The run starts at `ctx.now`: the graphs' operations that wait for
    /// nothing and are not flows begin (flows that wait for nothing start
    /// at their scheduled start, as every workload's). A workload `muted`
    /// answers true for (another job, in a run of one job alone) does not.
    pub fn start(&mut self, ctx: &mut Ctx, muted: impl Fn(usize) -> bool) {
        for k in 0..self.apps.len() {
            if muted(k) {
                continue;
            }
            if let App::Dag(run) = &mut self.apps[k] {
                let (first, first_op) = (self.first[k], self.first_op[k]);
                let now = ctx.now;
                run.start(now, &mut |s| push(ctx, s, first, first_op));
            }
        }
    }

    /// When each operation of workload `k`'s graph began and was complete
    /// (`u64::MAX`: not yet), if the workload is a graph.
    pub fn op_times(&self, k: usize) -> Option<(&[u64], &[u64])> {
        match self.apps.get(k)? {
            App::Dag(run) => Some((&run.begun, &run.ended)),
            _ => None,
        }
    }

    /// Takes the times of workload `k`'s graph operations from `other`
    /// (the applications of a partition of the run): when each began where
    /// `begun_there` says so, when it was complete where `ended_there` does.
    pub fn take_op_times(&mut self, other: &Apps, k: usize, begun_there: impl Fn(u32) -> bool, ended_there: impl Fn(u32) -> bool) {
        let (App::Dag(run), Some(App::Dag(theirs))) = (&mut self.apps[k], other.apps.get(k)) else { return };
        for op in 0..run.begun.len() {
            if begun_there(op as u32) {
                run.begun[op] = theirs.begun[op];
            }
            if ended_there(op as u32) {
                run.ended[op] = theirs.ended[op];
            }
        }
    }

    /// Graph operation `op` (an [`Event::AppTimer`]'s) is over.
    pub fn timer(&mut self, ctx: &mut Ctx, op: u32) {
        let k = self.first_op.partition_point(|&f| f <= op) - 1;
        let (first, first_op) = (self.first[k], self.first_op[k]);
        let App::Dag(run) = &mut self.apps[k] else { unreachable!("only a graph has timers") };
        let now = ctx.now;
        run.timer(op - first_op, now, &mut |s| push(ctx, s, first, first_op));
    }

    /// `flow` arrived whole at its receiver (at `ctx.now`): the flows that
    /// waited only for it start, after their gap.
    #[cold]
    pub fn arrived(&mut self, ctx: &mut Ctx, flow: FlowId) {
        let now = ctx.now;
        match self.owner(flow) {
            (App::Timed, ..) => {}
            (App::Graph(g), i, first, _) => {
                let (a, b) = (g.first[i as usize] as usize, g.first[i as usize + 1] as usize);
                for k in a..b {
                    let d = g.dependents[k] as usize;
                    if let Some(at) = g.waiters[d].met(now + g.gap[d]) {
                        ctx.push(at, Event::FlowStart { flow: FlowId(first + d as u32) });
                    }
                }
            }
            (App::Dag(run), i, first, first_op) => run.arrived(i, now, &mut |s| push(ctx, s, first, first_op)),
            (App::Ring(r), i, first, _) => {
                let Ring { plan, waiters, .. } = r;
                plan.dependents(i, |d| {
                    if let Some(at) = waiters[d as usize].met(now + plan.gap_of(d)) {
                        ctx.push(at, Event::FlowStart { flow: FlowId(first + d) });
                    }
                });
            }
        }
    }

    /// The last packet of `flow` leaves its NIC until `end`, sent for the
    /// first time or again: the flow queued behind it may start then, the
    /// first time.
    pub fn sent(&mut self, ctx: &mut Ctx, flow: FlowId, end: u64) {
        let (behind, first) = match self.owner(flow) {
            (App::Timed, ..) => return,
            (App::Dag(run), i, first, first_op) => {
                run.sent(i, end, &mut |s| push(ctx, s, first, first_op));
                return;
            }
            (App::Graph(g), i, first, _) => {
                let Some(next) = g.sent_next.get_mut(i as usize).filter(|n| **n != u32::MAX) else { return };
                let d = std::mem::replace(next, u32::MAX);
                (g.waiters[d as usize].met(end), first + d)
            }
            (App::Ring(r), i, first, _) => {
                let Some(d) = r.plan.queued_behind(i) else { return };
                if crate::bits::bit(&r.sent, i) {
                    return;
                }
                crate::bits::set_bit(&mut r.sent, i);
                (r.waiters[d as usize].met(end), first + d)
            }
        };
        if let Some(at) = behind {
            ctx.push(at, Event::FlowStart { flow: FlowId(first) });
        }
    }
}

/// Carries out what a graph asks: a flow start or an operation's timer.
fn push(ctx: &mut Ctx, s: super::dag::Start, first: u32, first_op: u32) {
    match s {
        super::dag::Start::Flow(f, at) => ctx.push(at, Event::FlowStart { flow: FlowId(first + f) }),
        super::dag::Start::Timer(op, at) => ctx.push(at, Event::AppTimer { op: first_op + op }),
    }
}
