//! A pipelined ring collective at flow level: one fluid transfer per ring
//! edge, channel and iteration instead of a flow per slice and step.
//!
//! Every step of a ring all-reduce, all-gather or reduce-scatter moves one
//! block per channel over every edge at once, so an edge carries the same
//! bytes step after step: as one transfer its rate is the edge's share of
//! its links over the whole operation. What the slices add beyond their
//! bytes is latency: the last step at a rank ends a chain of `steps`
//! dependencies over the edges before it, and on each a step takes the
//! longer of its bytes at the edge's rate and its first slice's time
//! (its first packet's store-and-forward latency, the rest of the slice at
//! the rate). The transfer into rank `r` arrives that chain's latency
//! beyond its bytes (computed on the idle fabric), and iteration `i + 1`
//! of a rank starts `gap` after iteration `i`'s transfers into it arrived.

use crate::id::HostId;
use crate::net::Network;
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
    fn len(&self) -> u32 {
        (self.plan.groups.len() as u64 * self.plan.iterations as u64 * self.plan.n as u64 * self.plan.channels as u64) as u32
    }

    /// Does the workload hold `flow`?
    pub fn holds(&self, flow: u32) -> bool {
        (self.first..self.first + self.len()).contains(&flow)
    }

    /// Wire bytes one step moves over an edge on one channel, and those of
    /// its first slice.
    fn step_wire(&self, mtu: u64, header: u64) -> (u64, u64) {
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

    /// The latency the steps add to each transfer beyond its bytes at its
    /// rate, in transfer order: over the `steps` edges ending at its
    /// receiver, each edge's first-packet store-and-forward latency, on the
    /// idle fabric (a step forwards data only once it has arrived; the
    /// packet engine's ring pays that latency per step even when slices
    /// pipeline: 0.3% of CCT apart at 8 ranks of 32 MB and 64 of 16 MB).
    pub fn chain_latencies(&self, net: &Network, mtu: u64, header: u64) -> Vec<u64> {
        let p = &self.plan;
        let first_pkt = (mtu + header).min(self.step_wire(mtu, header).1);
        let n = p.n as usize;
        let mut out = Vec::with_capacity(self.len() as usize);
        for (hs, _) in &p.groups {
            // Edge e runs from rank e to e + 1. Each step on it pays its
            // first packet's store-and-forward latency.
            let cost: Vec<u64> = (0..n).map(|e| net.walk_path(HostId(hs[e]), HostId(hs[(e + 1) % n]), first_pkt).latency_ps).collect();
            let lap: u64 = cost.iter().sum();
            // Sums of the costs of edges 0..i, twice around the ring.
            let mut pre = vec![0u64; 2 * n + 1];
            for i in 0..2 * n {
                pre[i + 1] = pre[i] + cost[i % n];
            }
            let (laps, rem) = (p.steps as usize / n, p.steps as usize % n);
            for _ in 0..p.iterations {
                for r in 0..n {
                    // The transfer into rank r + 1 ends the chain over edges
                    // r, r - 1, ..., r - steps + 1.
                    let end = r + n + 1;
                    let chain = laps as u64 * lap + pre[end] - pre[end - rem];
                    out.extend(std::iter::repeat_n(chain, p.channels as usize));
                }
            }
        }
        out
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
