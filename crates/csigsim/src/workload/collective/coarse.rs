//! A pipelined ring collective coarsened for the flow level: one transfer
//! per ring edge, channel and iteration instead of a flow per slice and
//! step, rewritten when the scenario is loaded so that its set-up and the
//! memory check see the transfers. How the flow level times them:
//! `crate::flowsim::ring`.

use crate::id::HostId;
use crate::workload::rpc::RpcSpec;
use crate::workload::collective::ring::RingPlan;
use crate::workload::collective::{CollectiveSpec, FlowDep};
use crate::workload::{FlowSpec, Flows, Workload};

/// A coarsened ring workload: its transfers are flows `first..first + len`,
/// numbered group by group, iteration by iteration, rank by rank, channel by channel.
#[derive(Clone, Debug)]
pub struct Coarse {
    pub first: u32,
    pub plan: RingPlan,
}

impl Coarse {
    pub(crate) fn len(&self) -> u32 {
        (self.plan.groups.len() as u64 * self.plan.iterations as u64 * self.plan.n as u64 * self.plan.channels as u64) as u32
    }

    /// Does the workload hold `flow`?
    pub fn holds(&self, flow: u32) -> bool {
        (self.first..self.first + self.len()).contains(&flow)
    }

    /// Wire bytes one step moves over an edge on one channel, and those of
    /// its first slice.
    pub(crate) fn step_wire(&self, mtu: u64, header: u64) -> (u64, u64) {
        let p = &self.plan;
        let wire = |b: u64| b + b.div_ceil(mtu) * header;
        let last = p.per_channel - p.chunk * (p.slices - 1);
        let first = wire(p.chunk.min(p.per_channel));
        (wire(p.chunk) * (p.slices - 1) + wire(last), first)
    }

    /// Bytes a transfer moves through the fluid: per step, its wire bytes
    /// less the first packet (counted in the chain's latency) plus the
    /// ACKs of the step it receives, which leave on the same NIC link ahead
    /// of its data (`acks`: the ACK bytes per data packet sent).
    pub fn volume(&self, mtu: u64, header: u64, ack_size: u64, ack_every: u64) -> u64 {
        let p = &self.plan;
        let (step, first) = self.step_wire(mtu, header);
        let last = p.per_channel - p.chunk * (p.slices - 1);
        let pkts = p.chunk.div_ceil(mtu) * (p.slices - 1) + last.div_ceil(mtu);
        let acks = pkts.div_ceil(ack_every) * ack_size;
        (step - first.min(mtu + header) + acks) * p.steps as u64
    }

}

/// Rewrites every ring plan among `workloads` into its transfers (the
/// flows of the workloads after it are renumbered, and the collectives'
/// step ranges and the RPCs with them: each ring instance has one step,
/// its transfers); answers the coarsened workloads.
pub fn coarsen(workloads: &mut [Workload], collectives: &mut [CollectiveSpec], rpcs: &mut [RpcSpec]) -> Vec<Coarse> {
    let mut out = Vec::new();
    let mut shift: i64 = 0;
    // Old flow ranges and their shifts, to renumber the collectives and RPCs.
    let mut moved: Vec<(u32, u32, i64, Option<usize>)> = Vec::new();
    for w in workloads.iter_mut() {
        let old_first = w.first;
        let old_len = w.len();
        w.first = (w.first as i64 + shift) as u32;
        let Flows::Ring(plan) = &w.flows else {
            moved.push((old_first, old_len, shift, None));
            continue;
        };
        let plan = plan.clone();
        let c = Coarse { first: w.first, plan };
        let (specs, deps) = transfers(&c.plan);
        w.flows = Flows::Listed { specs, deps };
        moved.push((old_first, old_len, shift, Some(out.len())));
        shift += w.len() as i64 - old_len as i64;
        out.push(c);
    }
    let at = |flow: u32| moved.iter().find(|m| (m.0..m.0 + m.1).contains(&flow)).copied();
    let mut instance = vec![0u32; out.len()];
    for spec in collectives.iter_mut() {
        let Some((_, _, sh, coarse)) = spec.steps.first().and_then(|r| at(r.start)) else { continue };
        match coarse {
            None => spec.steps.iter_mut().for_each(|r| *r = (r.start as i64 + sh) as u32..(r.end as i64 + sh) as u32),
            Some(k) => {
                let c = &out[k];
                let per = c.plan.n * c.plan.channels;
                let a = c.first + instance[k] * per;
                instance[k] += 1;
                spec.steps = std::iter::once(a..a + per).collect();
            }
        }
    }
    for r in rpcs.iter_mut() {
        if let Some((_, _, sh, _)) = at(r.flow) {
            r.flow = (r.flow as i64 + sh) as u32;
        }
    }
    out
}

/// The transfers of a ring plan and the iterations' dependencies (ids of
/// the workload).
fn transfers(p: &RingPlan) -> (Vec<FlowSpec>, Vec<FlowDep>) {
    let (n, ch) = (p.n, p.channels);
    let size = p.per_channel * p.steps as u64;
    let mut specs = Vec::new();
    let mut deps = Vec::new();
    let id = |g: usize, it: u32, r: u32, c: u32| ((g as u32 * p.iterations + it) * n + r) * ch + c;
    for (g, (hs, name)) in p.groups.iter().enumerate() {
        for it in 0..p.iterations {
            for r in 0..n {
                for c in 0..ch {
                    let me = id(g, it, r, c);
                    debug_assert_eq!(me as usize, specs.len());
                    let (src, dst) = (HostId(hs[r as usize]), HostId(hs[((r + 1) % n) as usize]));
                    specs.push(FlowSpec { src, dst, size, start: p.start, name: name.clone(), rate_cap: u64::MAX, channel: c });
                    if it > 0 {
                        // Rank r starts its next iteration once the last
                        // iteration's transfers into it (from rank r - 1)
                        // arrived, and the gap.
                        let prev = (r + n - 1) % n;
                        let after = (0..ch).map(|pc| id(g, it - 1, prev, pc)).collect();
                        deps.push(FlowDep { flow: me, after, gap: p.gap, after_sent: None });
                    }
                }
            }
        }
    }
    (specs, deps)
}
