//! NCCL's ring algorithms. The group is a ring in rank order: rank `r` sends
//! to rank `r + 1`.
//!
//! All-reduce, all-gather, reduce-scatter: a rank's buffer of `size` bytes is
//! cut into `n` blocks; each step every rank sends one block to the next:
//! - `reduce_scatter`: `n - 1` steps; after it each rank holds one reduced block;
//! - `all_gather`: `n - 1` steps; `size` is the gathered result per rank;
//! - `all_reduce`: reduce-scatter then all-gather, `2 (n - 1)` steps.
//!
//! Each block is divided evenly among the channels and sent as slices of at
//! most `chunk` bytes. Slice `j` of step `s` on a channel starts when slice
//! `j` of step `s - 1` has arrived from the previous rank, and when slice
//! `j - slots` of the same step has arrived. A rank starts iteration `i + 1`
//! `gap` after it has received the last step of iteration `i`.
//!
//! Broadcast and reduce (NCCL's ring broadcast and reduce): a chain along the
//! ring, `n - 1` hops. Broadcast: the root sends, each next rank receives and
//! forwards, the rank before the root only receives. Reduce: the rank after
//! the root sends, each next rank adds its own data and forwards, the root
//! receives. The whole buffer travels every hop, pipelined by slices.

use super::{share, slices, slices_of_shares, Instance, Plan};
use crate::de::InputError;
use crate::id::HostId;
use crate::units::Time;
use crate::workload::{Extras, FlowSpec, KeyErr};
use super::{CollectiveOp, CollectiveSpec, FlowDep};

/// Steps of the ring all-reduce, all-gather or reduce-scatter on `n` ranks.
fn steps(op: CollectiveOp, n: u32) -> u32 {
    match op {
        CollectiveOp::AllReduce => 2 * (n - 1),
        _ => n - 1,
    }
}

/// Flows of one instance.
pub(super) fn flows(p: &Plan) -> u64 {
    let c = p.c;
    let ch = c.channels as u64;
    match c.op {
        CollectiveOp::Broadcast | CollectiveOp::Reduce => {
            (p.n as u64 - 1).saturating_mul(slices_of_shares(c.size.0, ch, c.chunk.0))
        }
        _ => {
            let per_channel = c.size.0 / p.n as u64 / ch;
            let slices = per_channel.div_ceil(c.chunk.0);
            (p.n as u64 * ch).saturating_mul(slices).saturating_mul(steps(c.op, p.n) as u64)
        }
    }
}

/// All-reduce, all-gather, reduce-scatter on the ranks `hs`, numbered
/// iteration by iteration, step by step, rank by rank, channel by channel,
/// slice by slice; the remainder of `size` over `n x channels` is not sent.
pub(super) fn expand_legacy(p: &Plan, hs: &[u32], tag: &str, flows: &mut Vec<FlowSpec>, out: &mut Extras) {
    let c = p.c;
    let n = p.n;
    let per_channel = c.size.0 / n as u64 / c.channels as u64;
    let slices = per_channel.div_ceil(c.chunk.0);
    let steps = steps(c.op, n);
    let per_step = n as u64 * c.channels as u64 * slices;
    let slice_size = |j: u64| if j + 1 < slices { c.chunk.0 } else { per_channel - c.chunk.0 * (slices - 1) };
    // Flow id of (iteration, step, rank, channel, slice).
    let base = flows.len() as u64;
    let id = |it: u32, s: u32, r: u32, ch: u32, j: u64| -> u32 {
        (base + ((it as u64 * steps as u64 + s as u64) * n as u64 + r as u64) * c.channels as u64 * slices + ch as u64 * slices + j) as u32
    };
    for it in 0..c.iterations {
        let mut spec = CollectiveSpec { name: tag.to_string(), op: c.op, ranks: n, size: c.size.0, iteration: it, steps: Vec::new() };
        for s in 0..steps {
            let first = id(it, s, 0, 0, 0);
            for r in 0..n {
                let (src, dst) = (hs[r as usize], hs[((r + 1) % n) as usize]);
                let prev = (r + n - 1) % n;
                for ch in 0..c.channels {
                    for j in 0..slices {
                        let me = id(it, s, r, ch, j);
                        debug_assert_eq!(me as usize, flows.len());
                        flows.push(FlowSpec { src: HostId(src), dst: HostId(dst), size: slice_size(j), start: c.start, name: tag.to_string(), rate_cap: u64::MAX, channel: ch });
                        let mut after = Vec::new();
                        let mut gap = Time(0);
                        if s > 0 {
                            // The data this slice forwards: the same slice of the previous step, from the previous rank.
                            after.push(id(it, s - 1, prev, ch, j));
                        } else if it > 0 {
                            // The next iteration: after everything of the last step has arrived here, and the compute gap.
                            for pch in 0..c.channels {
                                for pj in 0..slices {
                                    after.push(id(it - 1, steps - 1, prev, pch, pj));
                                }
                            }
                            gap = c.gap;
                        }
                        if j >= c.slots as u64 {
                            after.push(id(it, s, r, ch, j - c.slots as u64));
                        }
                        // The connection's queue runs in flow order, step after step.
                        let after_sent = match (p.fifo, j, s, it) {
                            (false, ..) | (true, 0, 0, 0) => None,
                            (true, 0, 0, _) => Some(id(it - 1, steps - 1, r, ch, slices - 1)),
                            (true, 0, _, _) => Some(id(it, s - 1, r, ch, slices - 1)),
                            (true, ..) => Some(id(it, s, r, ch, j - 1)),
                        };
                        if !after.is_empty() || after_sent.is_some() {
                            out.deps.push(FlowDep { flow: me, after, gap, after_sent });
                        }
                    }
                }
            }
            spec.steps.push(first..first + per_step as u32);
        }
        out.collectives.push(spec);
    }
}

/// Broadcast or reduce along the ring: one step per hop, numbered hop by
/// hop, channel by channel, slice by slice.
pub(super) fn expand_chain(p: &Plan, inst: &mut Instance, err: &KeyErr) -> Result<(), InputError> {
    let c = p.c;
    let n = p.n;
    // Ranks along the chain: from the root (broadcast), or to it (reduce).
    let first = if c.op == CollectiveOp::Broadcast { p.root } else { (p.root + 1) % n };
    let rank = |h: u32| (first + h) % n;
    let ch = c.channels as u64;
    // The previous hop's slices, per channel.
    let mut prev: Vec<Vec<u32>> = vec![Vec::new(); ch as usize];
    for h in 0..n - 1 {
        inst.begin_step();
        for (k, prev) in prev.iter_mut().enumerate() {
            let mut queue = Vec::new();
            for (j, bytes) in slices(share(c.size.0, ch, k as u64), c.chunk.0).enumerate() {
                let data: &[u32] = if h == 0 { &[] } else { std::slice::from_ref(&prev[j]) };
                inst.slice(rank(h), rank(h + 1), k as u32, bytes, data, &mut queue, err)?;
            }
            *prev = queue;
        }
    }
    Ok(())
}

/// A ring all-reduce, all-gather or reduce-scatter as the run generates it:
/// the flows and dependencies [`expand_legacy`] lists, computed from the
/// flow's position when asked, so that a ring of millions of slices holds
/// its plan and one wait per flow, not a list of flows and dependencies.
/// Flow `i` of the plan is the one `expand_legacy` numbers `i`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RingPlan {
    /// Per group: its hosts in ring order, and its flows' name.
    pub groups: Vec<(Vec<u32>, String)>,
    /// Ranks of each group.
    pub n: u32,
    pub channels: u32,
    /// Slices per channel and step, and the bytes a channel carries per step.
    pub slices: u64,
    pub per_channel: u64,
    pub chunk: u64,
    pub steps: u32,
    pub iterations: u32,
    pub slots: u32,
    pub fifo: bool,
    pub start: Time,
    pub gap: Time,
}

/// A flow's place in a [`RingPlan`]: group, iteration, step, rank, channel, slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingPos {
    pub g: u32,
    pub it: u32,
    pub s: u32,
    pub r: u32,
    pub ch: u32,
    pub j: u64,
}

impl RingPlan {
    pub(super) fn new(p: &Plan, groups: Vec<(Vec<u32>, String)>) -> RingPlan {
        let c = p.c;
        let per_channel = c.size.0 / p.n as u64 / c.channels as u64;
        RingPlan {
            groups,
            n: p.n,
            channels: c.channels,
            slices: per_channel.div_ceil(c.chunk.0),
            per_channel,
            chunk: c.chunk.0,
            steps: steps(c.op, p.n),
            iterations: c.iterations,
            slots: c.slots,
            fifo: p.fifo,
            start: c.start,
            gap: c.gap,
        }
    }

    /// Flows of one step of one iteration (every rank, channel and slice).
    fn per_step(&self) -> u64 {
        self.n as u64 * self.channels as u64 * self.slices
    }

    fn per_group(&self) -> u64 {
        self.per_step() * self.steps as u64 * self.iterations as u64
    }

    /// Flows of the plan.
    pub fn flows(&self) -> u64 {
        self.per_group() * self.groups.len() as u64
    }

    pub fn pos(&self, i: u32) -> RingPos {
        let mut x = i as u64;
        let j = x % self.slices;
        x /= self.slices;
        let ch = (x % self.channels as u64) as u32;
        x /= self.channels as u64;
        let r = (x % self.n as u64) as u32;
        x /= self.n as u64;
        let s = (x % self.steps as u64) as u32;
        x /= self.steps as u64;
        let it = (x % self.iterations as u64) as u32;
        let g = (x / self.iterations as u64) as u32;
        RingPos { g, it, s, r, ch, j }
    }

    pub fn index(&self, p: RingPos) -> u32 {
        let x = ((((p.g as u64 * self.iterations as u64 + p.it as u64) * self.steps as u64 + p.s as u64) * self.n as u64 + p.r as u64)
            * self.channels as u64
            + p.ch as u64)
            * self.slices
            + p.j;
        x as u32
    }

    fn slice_size(&self, j: u64) -> u64 {
        if j + 1 < self.slices {
            self.chunk
        } else {
            self.per_channel - self.chunk * (self.slices - 1)
        }
    }

    /// The group's flows' name.
    pub fn name(&self, i: u32) -> &str {
        &self.groups[self.pos(i).g as usize].1
    }

    /// Flow `i`, into `f` (whose name is set only when it differs: a
    /// group's flows share one).
    pub fn spec_into(&self, i: u32, f: &mut FlowSpec) {
        let p = self.pos(i);
        let (hs, name) = &self.groups[p.g as usize];
        f.src = HostId(hs[p.r as usize]);
        f.dst = HostId(hs[((p.r + 1) % self.n) as usize]);
        f.size = self.slice_size(p.j);
        f.start = self.start;
        if f.name != *name {
            f.name.clone_from(name);
        }
        f.rate_cap = u64::MAX;
        f.channel = p.ch;
    }

    /// Does the flow start first in its iteration: at the first step, with
    /// the gap after the previous iteration?
    fn opens_iteration(p: RingPos) -> bool {
        p.s == 0 && p.it > 0
    }

    /// Prerequisites of flow `i` (arrivals, and the flow it queues behind).
    pub fn waiting(&self, i: u32) -> u32 {
        let p = self.pos(i);
        let data = if p.s > 0 {
            1
        } else if p.it > 0 {
            self.channels as u64 * self.slices
        } else {
            0
        };
        let slot = (p.j >= self.slots as u64) as u64;
        let queued = (self.fifo && !(p.j == 0 && p.s == 0 && p.it == 0)) as u64;
        (data + slot + queued) as u32
    }

    /// The gap after flow `i`'s last prerequisite arrived.
    pub fn gap_of(&self, i: u32) -> u64 {
        if Self::opens_iteration(self.pos(i)) {
            self.gap.0
        } else {
            0
        }
    }

    /// The flows that wait for flow `i` to arrive, in increasing order.
    pub fn dependents(&self, i: u32, mut each: impl FnMut(u32)) {
        let p = self.pos(i);
        if p.j + (self.slots as u64) < self.slices {
            each(self.index(RingPos { j: p.j + self.slots as u64, ..p }));
        }
        let next = (p.r + 1) % self.n;
        if p.s + 1 < self.steps {
            each(self.index(RingPos { s: p.s + 1, r: next, ..p }));
        } else if p.it + 1 < self.iterations {
            for ch in 0..self.channels {
                for j in 0..self.slices {
                    each(self.index(RingPos { it: p.it + 1, s: 0, r: next, ch, j, ..p }));
                }
            }
        }
    }

    /// The flow queued behind flow `i` on its connection (with `fifo`).
    pub fn queued_behind(&self, i: u32) -> Option<u32> {
        if !self.fifo {
            return None;
        }
        let p = self.pos(i);
        if p.j + 1 < self.slices {
            Some(self.index(RingPos { j: p.j + 1, ..p }))
        } else if p.s + 1 < self.steps {
            Some(self.index(RingPos { s: p.s + 1, j: 0, ..p }))
        } else if p.it + 1 < self.iterations {
            Some(self.index(RingPos { it: p.it + 1, s: 0, j: 0, ..p }))
        } else {
            None
        }
    }

    /// Flow `i`'s dependency as [`expand_legacy`] lists it (ids of the
    /// plan), if it has one.
    pub fn dep(&self, i: u32) -> Option<FlowDep> {
        let p = self.pos(i);
        let prev = (p.r + self.n - 1) % self.n;
        let mut after = Vec::new();
        if p.s > 0 {
            after.push(self.index(RingPos { s: p.s - 1, r: prev, ..p }));
        } else if p.it > 0 {
            for ch in 0..self.channels {
                for j in 0..self.slices {
                    after.push(self.index(RingPos { it: p.it - 1, s: self.steps - 1, r: prev, ch, j, ..p }));
                }
            }
        }
        if p.j >= self.slots as u64 {
            after.push(self.index(RingPos { j: p.j - self.slots as u64, ..p }));
        }
        let after_sent = match (self.fifo, p.j, p.s, p.it) {
            (false, ..) | (true, 0, 0, 0) => None,
            (true, 0, 0, _) => Some(self.index(RingPos { it: p.it - 1, s: self.steps - 1, j: self.slices - 1, ..p })),
            (true, 0, _, _) => Some(self.index(RingPos { s: p.s - 1, j: self.slices - 1, ..p })),
            (true, ..) => Some(self.index(RingPos { j: p.j - 1, ..p })),
        };
        (!after.is_empty() || after_sent.is_some()).then(|| FlowDep { flow: i, after, gap: Time(self.gap_of(i)), after_sent })
    }

    /// The instances (group and iteration) for collectives.csv, with flow
    /// ids from `first`.
    pub fn instances(&self, op: CollectiveOp, size: u64, first: u32) -> Vec<CollectiveSpec> {
        let per_step = self.per_step() as u32;
        let mut out = Vec::with_capacity(self.groups.len() * self.iterations as usize);
        for (g, (_, name)) in self.groups.iter().enumerate() {
            for it in 0..self.iterations {
                let steps = (0..self.steps)
                    .map(|s| {
                        let a = first + self.index(RingPos { g: g as u32, it, s, r: 0, ch: 0, j: 0 });
                        a..a + per_step
                    })
                    .collect();
                out.push(CollectiveSpec { name: name.clone(), op, ranks: self.n, size, iteration: it, steps });
            }
        }
        out
    }
}
