//! Collectives: the communication of a collective operation among a group of
//! hosts, as NCCL performs it, expanded into flows with dependencies (a send
//! starts when the data it forwards has arrived), not into timed flows.
//!
//! Ring algorithms (NCCL's vocabulary): the group is a ring in `hosts` order;
//! rank `r` sends to rank `r + 1`. A rank's buffer of `size` bytes is cut
//! into `n` blocks; each step every rank sends one block to the next rank:
//! - `reduce_scatter`: `n - 1` steps; after it each rank holds one reduced block;
//! - `all_gather`: `n - 1` steps; `size` is the gathered result per rank;
//! - `all_reduce`: reduce-scatter then all-gather, `2 (n - 1)` steps.
//!
//! Pipelining: each block is sent as slices of at most `chunk` bytes on each
//! of `channels` parallel rings (the block divided evenly among channels).
//! Slice `j` of step `s` on a channel starts when slice `j` of step `s - 1`
//! has arrived from the previous rank (the data it forwards), and when slice
//! `j - slots` of the same step has arrived at the next rank (at most `slots`
//! slices in flight per connection, NCCL's FIFO of `NCCL_STEPS` = 8 buffers).
//! Iterations: a rank starts iteration `i + 1` `gap` after it has received
//! the last step of iteration `i` (the compute between iterations).
//!
//! Each instance (iteration) records its completion time, algbw and busbw as
//! nccl-tests define them: algbw = size / time, busbw = algbw x factor, the
//! factor `2 (n - 1) / n` for all-reduce and `(n - 1) / n` otherwise.

use super::{hosts_of, label, Ctx, FlowSpec};
use crate::de::InputError;
use crate::id::HostId;
use crate::net::topology::HostRef;
use crate::units::{Size, Time};
use serde::Deserialize;

/// The collective operations.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CollectiveOp {
    AllReduce,
    AllGather,
    ReduceScatter,
}

impl CollectiveOp {
    pub fn name(self) -> &'static str {
        match self {
            CollectiveOp::AllReduce => "all_reduce",
            CollectiveOp::AllGather => "all_gather",
            CollectiveOp::ReduceScatter => "reduce_scatter",
        }
    }

    /// Steps of the ring algorithm on `n` ranks.
    fn steps(self, n: u32) -> u32 {
        match self {
            CollectiveOp::AllReduce => 2 * (n - 1),
            CollectiveOp::AllGather | CollectiveOp::ReduceScatter => n - 1,
        }
    }

    /// nccl-tests' bus bandwidth factor on `n` ranks.
    pub fn bus_factor(self, n: u32) -> f64 {
        let n = n as f64;
        match self {
            CollectiveOp::AllReduce => 2.0 * (n - 1.0) / n,
            CollectiveOp::AllGather | CollectiveOp::ReduceScatter => (n - 1.0) / n,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollectiveConfig {
    pub op: CollectiveOp,
    /// Bytes of each rank's buffer (nccl-tests' "size").
    pub size: Size,
    /// The group, in ring order (default: all hosts).
    #[serde(default)]
    pub hosts: Option<Vec<HostRef>>,
    /// Largest slice a channel sends at once (NCCL's chunk).
    #[serde(default = "default_chunk")]
    pub chunk: Size,
    /// Parallel rings sharing the block (NCCL's channels).
    #[serde(default = "default_channels")]
    pub channels: u32,
    /// Slices in flight per connection.
    #[serde(default = "default_slots")]
    pub slots: u32,
    #[serde(default = "default_iterations")]
    pub iterations: u32,
    /// Compute time between a rank's receipt of an iteration's last data and its next iteration.
    #[serde(default)]
    pub gap: Time,
    #[serde(default)]
    pub start: Time,
    #[serde(default)]
    pub name: Option<String>,
}
fn default_chunk() -> Size {
    Size(512 * 1024)
}
fn default_channels() -> u32 {
    1
}
fn default_slots() -> u32 {
    8
}
fn default_iterations() -> u32 {
    1
}

/// A flow that waits for others: it starts `gap` after the last of `after`
/// has arrived whole at its receiver, and not before its own start time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowDep {
    pub flow: u32,
    pub after: Vec<u32>,
    pub gap: Time,
}

/// One instance (one iteration) of a collective, for the outputs.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectiveSpec {
    pub name: String,
    pub op: CollectiveOp,
    pub ranks: u32,
    pub size: u64,
    pub iteration: u32,
    /// Its flows, step by step: `steps[s]` is the range of flow ids of step `s`.
    pub steps: Vec<std::ops::Range<u32>>,
}

pub fn expand(c: &CollectiveConfig, ctx: &Ctx, flows: &mut Vec<FlowSpec>) -> Result<(), InputError> {
    let err = ctx.err;
    let hs = hosts_of(ctx.topo, &c.hosts, err)?;
    if hs.len() < 2 {
        return Err(err("hosts", "a collective needs at least two hosts".into()));
    }
    let n = hs.len() as u32;
    for (key, v) in [("channels", c.channels), ("slots", c.slots), ("iterations", c.iterations)] {
        if v == 0 {
            return Err(err(key, format!("{key} must be at least 1")));
        }
    }
    if c.chunk.0 == 0 {
        return Err(err("chunk", "chunk must be above zero".into()));
    }
    if let Some(m) = super::size_error(c.chunk.0.min(c.size.0), ctx.mtu) {
        return Err(err("chunk", m));
    }
    // Each channel's share of a block, then its slices.
    let per_channel = c.size.0 / n as u64 / c.channels as u64;
    if per_channel == 0 {
        return Err(err("size", format!("size must be at least one byte per rank and channel ({} bytes)", n as u64 * c.channels as u64)));
    }
    let slices = per_channel.div_ceil(c.chunk.0);
    let steps = c.op.steps(n);
    let per_step = (n as u64 * c.channels as u64).saturating_mul(slices);
    let total = per_step.saturating_mul(steps as u64 * c.iterations as u64);
    // At most ten million flows: more would not fit in memory.
    if (flows.len() as u64).saturating_add(total) > 10_000_000 {
        return Err(err("size", format!("the collective expands into {total} flows: use a larger chunk or fewer iterations")));
    }
    let tag = label(&c.name, "coll", ctx.idx);
    let mut out = ctx.out.borrow_mut();
    let slice_size = |j: u64| if j + 1 < slices { c.chunk.0 } else { per_channel - c.chunk.0 * (slices - 1) };
    // Flow id of (iteration, step, rank, channel, slice).
    let base = flows.len() as u64;
    let id = |it: u32, s: u32, r: u32, ch: u32, j: u64| -> u32 {
        (base + ((it as u64 * steps as u64 + s as u64) * n as u64 + r as u64) * c.channels as u64 * slices + ch as u64 * slices + j) as u32
    };
    for it in 0..c.iterations {
        let mut spec = CollectiveSpec { name: tag.clone(), op: c.op, ranks: n, size: c.size.0, iteration: it, steps: Vec::new() };
        for s in 0..steps {
            let first = id(it, s, 0, 0, 0);
            for r in 0..n {
                let (src, dst) = (hs[r as usize], hs[((r + 1) % n) as usize]);
                let prev = (r + n - 1) % n;
                for ch in 0..c.channels {
                    for j in 0..slices {
                        let me = id(it, s, r, ch, j);
                        debug_assert_eq!(me as usize, flows.len());
                        flows.push(FlowSpec { src: HostId(src), dst: HostId(dst), size: slice_size(j), start: c.start, name: tag.clone(), rate_cap: u64::MAX, channel: ch });
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
                        if !after.is_empty() {
                            out.deps.push(FlowDep { flow: me, after, gap });
                        }
                    }
                }
            }
            spec.steps.push(first..first + per_step as u32);
        }
        out.collectives.push(spec);
    }
    Ok(())
}
