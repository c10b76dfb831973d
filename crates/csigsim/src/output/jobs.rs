//! jobs.csv and job_links.csv: each job's times from its flows' records
//! (and its operations', for a trace), its iterations from its collective
//! instances, and its bytes per link from the job monitor
//! ([`crate::monitor::jobs`]; at flow level, its fluid's bytes per link,
//! which the fluid model bills to the same counters). The alone times come
//! from other runs: [`set_alone`].

use super::ops::IterationTable;
use super::tables::{JobLinkTable, JobTable};
use crate::workload::Flows;
use crate::engine::World;
use crate::id::FlowId;

/// The job tables of a run; None for a scenario without jobs. A trace
/// job's iterations are its workload's totals rows of iterations.csv.
pub fn tables(w: &World, iteration_rows: Option<&IterationTable>) -> (Option<JobTable>, Option<JobLinkTable>) {
    let sc = w.scenario();
    if sc.jobs.is_empty() {
        return (None, None);
    }
    let flows = w.flow_store();
    let mut t = JobTable::default();
    // First start and last arrival of flows [a, b), and how many arrived.
    let span = |a: u32, b: u32| {
        let (mut start, mut end, mut done) = (None::<u64>, None::<u64>, 0u32);
        for f in (a..b).map(|i| flows.record(FlowId(i))) {
            if f.started {
                start = Some(start.map_or(f.start_ps, |s| s.min(f.start_ps)));
            }
            if let Some(e) = f.finish_ps {
                done += 1;
                end = Some(end.map_or(e, |x| x.max(e)));
            }
        }
        (start, end, done)
    };
    let links = w.observers().job_bytes();
    let per_job: Vec<(u32, u32)> = (0..sc.jobs.len())
        .map(|j| {
            let Some(ports) = links else { return (0, 0) };
            let used = ports.iter().map(|c| &c[..]).filter(|c| c[j] > 0);
            let shared = |c: &&[u64]| c[..c.len() - 1].iter().enumerate().any(|(k, &b)| k != j && b > 0);
            (used.clone().count() as u32, used.filter(shared).count() as u32)
        })
        .collect();
    for (j, job) in sc.jobs.iter().enumerate() {
        let wl = &sc.workloads[job.workload];
        let (a, b) = (wl.first, wl.first + wl.len());
        let (mut start, mut end, done) = span(a, b);
        let mut complete = done == b - a;
        // A trace's operations: compute may come first and last.
        if let Some((begun, ended)) = w.op_times(job.workload) {
            let first = begun.iter().copied().filter(|&x| x != u64::MAX).min();
            start = start.into_iter().chain(first).min();
            complete &= ended.iter().all(|&x| x != u64::MAX);
            end = end.into_iter().chain(ended.iter().copied().filter(|&x| x != u64::MAX)).max();
        }
        let end = end.filter(|_| complete);
        // Iteration times: a collective's instances of each iteration (all
        // its groups), a trace's iterations, else the whole job as one.
        let mut times = Vec::new();
        let mut iterations = job.iterations;
        let trace = trace_iterations(sc, job.workload, iteration_rows);
        if job.kind == "collective" {
            let instances = &sc.collectives[job.collectives.clone()];
            for it in 0..job.iterations {
                let (mut s, mut e, mut all) = (None::<u64>, None::<u64>, true);
                for c in instances.iter().filter(|c| c.iteration == it) {
                    let (x, y) = (c.steps[0].start, c.steps[c.steps.len() - 1].end);
                    let (cs, ce, cd) = span(x, y);
                    s = s.into_iter().chain(cs).min();
                    e = e.into_iter().chain(ce).max();
                    all &= cd == y - x;
                }
                if let (Some(s), Some(e), true) = (s, e, all) {
                    times.push(e - s);
                }
            }
        } else if let Some(rows) = trace {
            iterations = rows.len() as u32;
            times.extend(rows.into_iter().flatten());
        } else if let (Some(s), Some(e)) = (start, end) {
            times.push(e - s);
        }
        let names: Vec<&str> = job.hosts.iter().map(|&h| sc.topology.hosts[h as usize].as_str()).collect();
        t.job.push(job.name.clone());
        t.kind.push(job.kind.into());
        t.placement.push(job.placement.name().into());
        t.ranks.push(job.hosts.len() as u32);
        t.hosts.push(names.join(" "));
        t.flows.push(b - a);
        t.flows_completed.push(done);
        t.iterations.push(iterations);
        t.iterations_completed.push(times.len() as u32);
        t.start_ps.push(start);
        t.end_ps.push(end);
        t.time_ps.push(start.zip(end).map(|(s, e)| e - s));
        t.iteration_mean_ps.push((!times.is_empty()).then(|| times.iter().sum::<u64>() / times.len() as u64));
        t.iteration_max_ps.push(times.iter().copied().max());
        t.links.push(links.map(|_| per_job[j].0));
        t.shared_links.push(links.map(|_| per_job[j].1));
        t.alone_time_ps.push(None);
        t.slowdown.push(None);
    }
    let job_links = links.map(|ports| {
        let nodes = (0..(w.network().num_hosts() as usize + w.switches().len()) as u32).map(|n| w.node_name(crate::id::NodeId(n)).to_string()).collect();
        let mut l = JobLinkTable { nodes, ..Default::default() };
        let p = w.ports();
        for (j, job) in sc.jobs.iter().enumerate() {
            for (port, c) in ports.iter().enumerate().filter(|(_, c)| c[j] > 0) {
                let total = c[c.len() - 1];
                l.job.push(job.name.clone());
                l.link_id.push(port as u32);
                l.from.push(p[port].node().0);
                l.to.push(p[p[port].peer()].node().0);
                l.tx_bytes.push(c[j]);
                l.link_bytes.push(total);
                l.share.push(c[j] as f64 / total as f64);
            }
        }
        l
    });
    (Some(t), job_links)
}

/// The iteration times (None: not complete) of trace workload `k`, from
/// iterations.csv's totals rows of its name; None when it has none, or
/// when another trace workload has its name.
fn trace_iterations(sc: &crate::Scenario, k: usize, rows: Option<&IterationTable>) -> Option<Vec<Option<u64>>> {
    fn name(wl: &crate::workload::Workload) -> Option<&str> {
        match &wl.flows {
            Flows::Dag(d) if !d.trace.steps.is_empty() => Some(d.trace.name.as_str()),
            _ => None,
        }
    }
    let own = name(&sc.workloads[k])?;
    if sc.workloads.iter().filter(|wl| name(wl) == Some(own)).count() > 1 {
        return None;
    }
    let t = rows?;
    let times: Vec<Option<u64>> = (0..t.len()).filter(|&i| t.rank[i].is_none() && t.workload[i] == own).map(|i| t.time_ps[i]).collect();
    (!times.is_empty()).then_some(times)
}

/// Fills in each job's time alone (`alone[j]`: job `j`'s `time_ns` in
/// its run alone, None when it did not complete) and its slowdown.
pub fn set_alone(t: &mut JobTable, alone: &[Option<u64>]) {
    for (j, a) in alone.iter().enumerate().take(t.len()) {
        t.alone_time_ps[j] = *a;
        t.slowdown[j] = match (t.time_ps[j], *a) {
            (Some(s), Some(a)) if a > 0 => Some(s as f64 / a as f64),
            _ => None,
        };
    }
}
