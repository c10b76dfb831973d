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
