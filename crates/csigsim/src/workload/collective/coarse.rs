//! A pipelined ring collective coarsened for the flow level: one transfer
//! per ring edge, channel and iteration instead of a flow per slice and
//! step, made when the scenario is loaded in place of the ring's plan, so
//! that flow ids, the flow count and the memory check are the transfers'.
//! How the flow level times them: `crate::flowsim::ring`.

use crate::id::HostId;
use crate::workload::collective::ring::RingPlan;
use crate::workload::collective::{CollectiveOp, CollectiveSpec, FlowDep};
use crate::workload::{FlowSpec, Flows};

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

    /// A transfer's data wire bytes over all its steps, and the bytes of
    /// the ACKs its receiver sends back for them (`ack_every` data packets
    /// an ACK of `ack_size` bytes).
    pub fn wire(&self, mtu: u64, header: u64, ack_size: u64, ack_every: u64) -> (u64, u64) {
        let steps = self.plan.steps as u64;
        (self.step_wire(mtu, header).0 * steps, self.step_acks(mtu, ack_size, ack_every) * steps)
    }

    /// ACK bytes of one step on an edge and channel.
    fn step_acks(&self, mtu: u64, ack_size: u64, ack_every: u64) -> u64 {
        let p = &self.plan;
        let last = p.per_channel - p.chunk * (p.slices - 1);
        let pkts = p.chunk.div_ceil(mtu) * (p.slices - 1) + last.div_ceil(mtu);
        pkts.div_ceil(ack_every) * ack_size
    }

    /// Bytes a transfer moves through the fluid: per step, its wire bytes
    /// less the first packet (counted in the chain's latency) plus the
    /// ACKs of the step it receives, which leave on the same NIC link ahead
    /// of its data (`acks`: the ACK bytes per data packet sent).
    pub fn volume(&self, mtu: u64, header: u64, ack_size: u64, ack_every: u64) -> u64 {
        let (step, first) = self.step_wire(mtu, header);
        let acks = self.step_acks(mtu, ack_size, ack_every);
        (step - first.min(mtu + header) + acks) * self.plan.steps as u64
    }

}

/// A ring plan as the flow level runs it, before any flow id is taken:
/// its transfers (flows `first ..`) and their dependencies, and one
/// instance per group and iteration (of `op`, `size` bytes per rank)
/// whose one step is its transfers. A ring's slice flows are never
/// listed: they may be more than flow ids reach.
pub fn coarsen(plan: RingPlan, first: u32, op: CollectiveOp, size: u64) -> (Coarse, Flows, Vec<CollectiveSpec>) {
    let (specs, deps) = transfers(&plan);
    let per = plan.n * plan.channels;
    let mut instances = Vec::with_capacity(plan.groups.len() * plan.iterations as usize);
    for (g, (_, name)) in plan.groups.iter().enumerate() {
        for it in 0..plan.iterations {
            let a = first + (g as u32 * plan.iterations + it) * per;
            instances.push(CollectiveSpec { name: name.clone(), op, ranks: plan.n, size, iteration: it, steps: std::iter::once(a..a + per).collect() });
        }
    }
    (Coarse { first, plan }, Flows::Listed { specs, deps }, instances)
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
