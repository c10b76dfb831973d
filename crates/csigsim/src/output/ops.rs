//! ops.csv and iterations.csv: what each rank of a trace workload (`goal`,
//! `chakra`) did and when, from the times its graph's operations began and
//! were complete ([`crate::workload::dag`]), and each iteration's time per
//! rank with the part of it the rank spent computing.
//!
//! A Chakra rank's first node, where it recurs in the rank's file, begins
//! the rank's next iteration (a trace of several training steps); a GOAL
//! schedule is one iteration.
//!
//! Only trace workloads have rows: a `collective` workload's steps are
//! collectives.csv's rows (one row per rank and step would be millions at
//! a thousand ranks), and its iterations are the totals rows there.

use super::schema::{table, Label};
use crate::engine::World;
use crate::workload::dag::{Dag, Op, StepKind};
use crate::workload::Flows;

table! {
    /// `ops.csv`: one row per operation of each trace workload, workloads in
    /// file order, rank by rank, each rank's operations as written.
    pub struct OpTable in "ops" {
        /// Operation names (Chakra node names, GOAL labels), each once; `name` indexes it.
        names: Vec<String>,
        /// Host names, in host order; `host` indexes it.
        hosts: Vec<String>,
    }
    columns {
        workload: String = "workload" plain, Text, "", "the workload entry's name";
        rank: u32 = "rank" plain, Int, "", "the rank";
        iteration: u32 = "iteration" plain, Int, "", "the rank's iteration it is in, from 0";
        host: u32 = "host" coded(hosts), Text, "", "the host the rank runs on";
        op_id: u64 = "op_id" plain, Int, "", "the Chakra node's id, or the GOAL line";
        name: u32 = "name" coded(names), Text, "", "the Chakra node's name, or the GOAL operation's label (empty without one)";
        kind: Label = "kind" plain, Text, "", "compute, send, recv, collective or other";
        ready_ps: Option<u64> = "ready_ns" plain, Time, "ns", "when the last of what it waits for was complete";
        start_ps: Option<u64> = "start_ns" plain, Time, "ns", "when it began; empty if it did not";
        end_ps: Option<u64> = "end_ns" plain, Time, "ns", "when it was complete; empty if it was not";
        time_ps: Option<u64> = "time_ns" plain, Time, "ns", "end - start";
        waited_on: Option<Label> = "waited_on" plain, Text, "", "what it last waited for: compute, network or none";
    }
}

table! {
    /// `iterations.csv`: per trace workload and iteration, one row per rank
    /// then the iteration's totals row (`rank` empty).
    pub struct IterationTable in "iterations" {
        hosts: Vec<String>,
    }
    columns {
        workload: String = "workload" plain, Text, "", "the workload entry's name";
        iteration: u32 = "iteration" plain, Int, "", "the iteration, from 0";
        rank: Option<u32> = "rank" plain, Int, "", "the rank; empty on the totals row";
        host: Option<u32> = "host" coded_opt(hosts), Text, "", "its host; empty on the totals row";
        ops: u32 = "ops" plain, Int, "", "operations of the rank (of every rank on the totals row)";
        ops_completed: u32 = "ops_completed" plain, Int, "", "of those, complete";
        start_ps: Option<u64> = "start_ns" plain, Time, "ns", "when its first operation began";
        end_ps: Option<u64> = "end_ns" plain, Time, "ns", "when its last was complete, if all were";
        time_ps: Option<u64> = "time_ns" plain, Time, "ns", "end - start: the iteration time";
        compute_ps: Option<u64> = "compute_ns" plain, Time, "ns", "time with a compute delay running";
        exposed_ps: Option<u64> = "exposed_ns" plain, Time, "ns", "time - compute: waiting on the network (or on nothing)";
        critical_rank: Option<u32> = "critical_rank" plain, Int, "", "totals row: the rank that ended last";
    }
}

/// What an operation last waited for (ops.csv's `waited_on`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    None,
    Compute,
    Network,
}

impl Cause {
    pub fn name(self) -> &'static str {
        match self {
            Cause::None => "none",
            Cause::Compute => "compute",
            Cause::Network => "network",
        }
    }
}

/// Whether the scenario has a trace workload (and so ops.csv and
/// iterations.csv).
pub fn any(w: &World) -> bool {
    w.scenario().workloads.iter().any(|wl| matches!(&wl.flows, Flows::Dag(d) if !d.trace.steps.is_empty()))
}

/// The operation names of every trace workload, one list (ops.csv's
/// `names`), and where each workload's start in it.
pub fn names(w: &World) -> (Vec<String>, Vec<u32>) {
    let (mut names, mut first) = (Vec::new(), Vec::new());
    for wl in &w.scenario().workloads {
        first.push(names.len() as u32);
        if let Flows::Dag(d) = &wl.flows {
            names.extend(d.trace.names.iter().cloned());
        }
    }
    (names, first)
}

/// Why each graph operation was complete when it was, memoised: a compute
/// delay and a flow are their own cause; a join's is that of the
/// operation it waited for last.
struct Causes<'a> {
    dag: &'a Dag,
    ended: &'a [u64],
    memo: Vec<Option<Cause>>,
    path: Vec<u32>,
}

impl<'a> Causes<'a> {
    fn new(dag: &'a Dag, ended: &'a [u64]) -> Causes<'a> {
        Causes { dag, ended, memo: vec![None; dag.ops.len()], path: Vec::new() }
    }

    /// Of what `op` waits for, the one complete last (the first of those
    /// complete at once), with its time; None when it waits for nothing.
    fn last(&self, op: u32) -> Option<(u32, u64)> {
        let mut best: Option<(u32, u64)> = None;
        for &a in self.dag.after(op) {
            let t = self.ended[a as usize];
            if best.is_none_or(|(_, b)| t > b) {
                best = Some((a, t));
            }
        }
        best
    }

    fn of(&mut self, op: u32) -> Cause {
        let mut o = op;
        let c = loop {
            if let Some(c) = self.memo[o as usize] {
                break c;
            }
            match self.dag.ops[o as usize] {
                Op::Compute { .. } => break Cause::Compute,
                Op::Flow(_) | Op::Sent(_) => break Cause::Network,
                Op::Join => match self.last(o) {
                    None => break Cause::None,
                    Some((p, _)) => {
                        self.path.push(o);
                        o = p;
                    }
                },
            }
        };
        self.memo[o as usize] = Some(c);
        for p in self.path.drain(..) {
            self.memo[p as usize] = Some(c);
        }
        c
    }
}

/// One rank's figures for iterations.csv, gathered from its rows.
#[derive(Default)]
struct RankAcc {
    ops: u32,
    done: u32,
    start: Option<u64>,
    end: Option<u64>,
    /// Its compute delays' (start, end).
    compute: Vec<(u64, u64)>,
}

impl RankAcc {
    /// The time covered by at least one compute delay.
    fn compute_ps(&mut self) -> u64 {
        self.compute.sort_unstable();
        let (mut total, mut reach) = (0u64, 0u64);
        for &(s, e) in &self.compute {
            let s = s.max(reach);
            if e > s {
                total += e - s;
                reach = e;
            }
        }
        total
    }
}

/// Makes ops.csv's rows of every trace workload, one at a time, each
/// appended to `t` and handed to `emit` (which may write and clear it),
/// and answers iterations.csv. `first_name` is [`names`]' second answer.
pub fn rows<E>(w: &World, first_name: &[u32], t: &mut OpTable, mut emit: impl FnMut(&mut OpTable) -> Result<(), E>) -> Result<IterationTable, E> {
    let sc = w.scenario();
    let mut it = IterationTable { hosts: sc.topology.hosts.clone(), ..Default::default() };
    for (k, wl) in sc.workloads.iter().enumerate() {
        let Flows::Dag(d) = &wl.flows else { continue };
        if d.trace.steps.is_empty() {
            continue;
        }
        let Some((begun, ended)) = w.op_times(k) else { continue };
        let tr = &d.trace;
        let mut causes = Causes::new(d, ended);
        let known = |x: u64| (x != u64::MAX).then_some(x);
        let iterations = tr.steps.iter().map(|s| s.iteration + 1).max().unwrap_or(1) as usize;
        let mut ranks: Vec<Vec<RankAcc>> = (0..iterations).map(|_| (0..tr.hosts.len()).map(|_| RankAcc::default()).collect()).collect();
        for s in &tr.steps {
            let (start, end) = (known(begun[s.begin as usize]), known(ended[s.done as usize]));
            let last = causes.last(s.begin);
            let ready = match last {
                Some((_, t)) => known(t),
                None => start,
            };
            let waited = start.map(|st| match (d.ops[s.begin as usize], last) {
                (_, None) => Cause::None,
                // Ready, and its stream busy with another delay.
                (Op::Compute { .. }, Some((_, r))) if st > r => Cause::Compute,
                (_, Some((p, _))) => causes.of(p),
            });
            t.workload.push(tr.name.clone());
            t.rank.push(s.rank);
            t.iteration.push(s.iteration);
            t.host.push(tr.hosts[s.rank as usize]);
            t.op_id.push(s.id);
            t.name.push(first_name[k] + s.name);
            t.kind.push(s.kind.name().into());
            t.ready_ps.push(ready);
            t.start_ps.push(start);
            t.end_ps.push(end);
            t.time_ps.push(start.zip(end).map(|(a, b)| b - a));
            t.waited_on.push(waited.map(|c| c.name().into()));
            emit(t)?;
            let r = &mut ranks[s.iteration as usize][s.rank as usize];
            r.ops += 1;
            r.done += end.is_some() as u32;
            r.start = r.start.into_iter().chain(start).min();
            r.end = r.end.into_iter().chain(end).max();
            if let (StepKind::Compute, Some(a), Some(b)) = (s.kind, start, end) {
                r.compute.push((a, b));
            }
        }
        for (iteration, ranks) in ranks.iter_mut().enumerate() {
            iteration_rows(&mut it, tr, iteration as u32, ranks);
        }
    }
    Ok(it)
}

/// iterations.csv's rows of one iteration of a trace: a row per rank, then
/// the totals row.
fn iteration_rows(it: &mut IterationTable, tr: &crate::workload::dag::Trace, iteration: u32, ranks: &mut [RankAcc]) {
    let mut totals = RankAcc::default();
    let mut critical: Option<(u32, u64, u64)> = None;
    for (rank, r) in ranks.iter_mut().enumerate() {
        let end = r.end.filter(|_| r.done == r.ops);
        let time = r.start.zip(end).map(|(a, b)| b - a);
        let compute = r.compute_ps();
        it.workload.push(tr.name.clone());
        it.iteration.push(iteration);
        it.rank.push(Some(rank as u32));
        it.host.push(Some(tr.hosts[rank]));
        it.ops.push(r.ops);
        it.ops_completed.push(r.done);
        it.start_ps.push(r.start);
        it.end_ps.push(end);
        it.time_ps.push(time);
        it.compute_ps.push(Some(compute));
        it.exposed_ps.push(time.map(|t| t.saturating_sub(compute)));
        it.critical_rank.push(None);
        totals.ops += r.ops;
        totals.done += r.done;
        totals.start = totals.start.into_iter().chain(r.start).min();
        if let Some(e) = end {
            if critical.is_none_or(|c| e > c.1) {
                critical = Some((rank as u32, e, compute));
            }
        }
    }
    let complete = totals.done == totals.ops;
    let end = critical.map(|c| c.1).filter(|_| complete);
    let time = totals.start.zip(end).map(|(a, b)| b - a);
    let compute = critical.filter(|_| complete).map(|c| c.2);
    it.workload.push(tr.name.clone());
    it.iteration.push(iteration);
    it.rank.push(None);
    it.host.push(None);
    it.ops.push(totals.ops);
    it.ops_completed.push(totals.done);
    it.start_ps.push(totals.start);
    it.end_ps.push(end);
    it.time_ps.push(time);
    it.compute_ps.push(compute);
    it.exposed_ps.push(time.zip(compute).map(|(t, c)| t.saturating_sub(c)));
    it.critical_rank.push(critical.filter(|_| complete).map(|c| c.0));
}

/// ops.csv as a table and iterations.csv, for a run that streams neither.
pub fn tables(w: &World) -> Option<(OpTable, IterationTable)> {
    if !any(w) {
        return None;
    }
    let (names, first) = names(w);
    let mut t = OpTable { names, hosts: w.scenario().topology.hosts.clone(), ..Default::default() };
    let it = rows(w, &first, &mut t, |_| Ok::<(), ()>(())).ok()?;
    Some((t, it))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Delays on two streams that overlap count once; a gap counts not at all.
    #[test]
    fn compute_time_is_the_union_of_the_delays() {
        let mut r = RankAcc { compute: vec![(50, 80), (0, 100), (90, 120), (200, 210), (205, 205)], ..Default::default() };
        assert_eq!(r.compute_ps(), 120 + 10);
        assert_eq!(RankAcc::default().compute_ps(), 0);
    }
}
