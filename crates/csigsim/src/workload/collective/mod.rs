//! Collectives: the communication of a collective operation among a group of
//! hosts, as NCCL performs it, expanded into flows with dependencies (a send
//! starts when the data it forwards has arrived), not into timed flows.
//!
//! - `ring.rs`: NCCL's ring algorithms: all-reduce, all-gather and
//!   reduce-scatter around the ring, broadcast and reduce along the ring from
//!   (to) the root;
//! - `tree.rs`: NCCL's double binary tree for all-reduce (reduce up, then
//!   broadcast down, on two trees that each carry half the data), and one
//!   binary tree of the same shape for broadcast and reduce;
//! - `alltoall.rs`: the direct all-to-all (every rank sends `size / n` bytes
//!   to every other rank, as nccl-tests' alltoall).
//!
//! Every pipelined algorithm sends its data as slices of at most `chunk`
//! bytes on each of `channels` parallel connections. A slice waits for the
//! slices it forwards or reduces (arrived whole at this rank), for the slice
//! `slots` places before it on its connection (at most `slots` in flight,
//! NCCL's FIFO of `NCCL_STEPS` buffers), and with `order = "fifo"` for the
//! previous slice of its connection to have left the NIC (one queue pair per
//! connection: its work requests go out in order).
//!
//! Iterations: a rank starts iteration `i + 1` `gap` after it has received
//! everything of iteration `i` it waits for (the compute between iterations).
//!
//! Each instance (group and iteration) records its completion time, algbw and
//! busbw as nccl-tests define them: algbw = size / time, busbw = algbw x
//! factor ([`CollectiveOp::bus_factor`]).

mod alltoall;
pub mod coarse;
pub mod ring;
pub mod tree;

use super::{hosts_of, label, Ctx, FlowSpec};
use crate::de::InputError;
use crate::id::HostId;
use crate::net::topology::{HostRef, TopologySpec};
use crate::units::{Size, Time};
use serde::Deserialize;

/// The collective operations.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CollectiveOp {
    AllReduce,
    AllGather,
    ReduceScatter,
    Broadcast,
    Reduce,
    AllToAll,
}

impl CollectiveOp {
    pub fn name(self) -> &'static str {
        match self {
            CollectiveOp::AllReduce => "all_reduce",
            CollectiveOp::AllGather => "all_gather",
            CollectiveOp::ReduceScatter => "reduce_scatter",
            CollectiveOp::Broadcast => "broadcast",
            CollectiveOp::Reduce => "reduce",
            CollectiveOp::AllToAll => "all_to_all",
        }
    }

    /// nccl-tests' bus bandwidth factor on `n` ranks (its PERFORMANCE.md):
    /// the share of the data each rank's link carries whatever the algorithm.
    pub fn bus_factor(self, n: u32) -> f64 {
        let n = n as f64;
        match self {
            CollectiveOp::AllReduce => 2.0 * (n - 1.0) / n,
            CollectiveOp::AllGather | CollectiveOp::ReduceScatter | CollectiveOp::AllToAll => (n - 1.0) / n,
            CollectiveOp::Broadcast | CollectiveOp::Reduce => 1.0,
        }
    }

    /// Does the operation have a root rank?
    fn rooted(self) -> bool {
        matches!(self, CollectiveOp::Broadcast | CollectiveOp::Reduce)
    }
}

/// How the ranks exchange the data.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Algorithm {
    Ring,
    Tree,
}

/// How the slices of one connection share the NIC.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// One queue pair per connection: a slice leaves after the previous one.
    Fifo,
    /// Every slice in flight is its own flow on the NIC's round robin.
    Parallel,
}

/// How `group_size` cuts the hosts into groups.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum GroupLayout {
    /// Consecutive hosts: group `k` is hosts `k g .. (k + 1) g`.
    #[default]
    Blocks,
    /// Every `(n / g)`-th host: group `k` is hosts `k, k + n/g, k + 2 n/g, ...`.
    Strided,
    /// `hosts` are servers of several NICs: group `r` is NIC `r` of each
    /// (NCCL's rail-aligned rings), named `<name>.r<r>`.
    Rails,
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
    /// `ring` or `tree` (default: ring).
    #[serde(default)]
    pub algorithm: Option<Algorithm>,
    /// Broadcast and reduce: the root's rank (its position in the group).
    #[serde(default)]
    pub root: Option<u32>,
    /// Largest slice a channel sends at once (NCCL's chunk).
    #[serde(default = "default_chunk")]
    pub chunk: Size,
    /// Parallel connections sharing the data (NCCL's channels).
    #[serde(default = "default_channels")]
    pub channels: u32,
    /// Slices in flight per connection.
    #[serde(default = "default_slots")]
    pub slots: u32,
    /// `fifo` or `parallel`; the default depends on the operation.
    #[serde(default)]
    pub order: Option<Order>,
    /// Cut `hosts` into groups of this many ranks, each running the operation.
    #[serde(default)]
    pub group_size: Option<u32>,
    #[serde(default)]
    pub group_layout: Option<GroupLayout>,
    #[serde(default = "default_iterations")]
    pub iterations: u32,
    /// Compute time between a rank's receipt of an iteration's last data and its next iteration.
    #[serde(default)]
    pub gap: Time,
    #[serde(default)]
    pub start: Time,
    #[serde(default)]
    pub name: Option<String>,
    /// The training job the entry is ([`super::job`]).
    #[serde(default)]
    pub job: Option<String>,
    /// How the job's ranks are laid on hosts (default: `hosts`).
    #[serde(default)]
    pub placement: Option<super::job::Policy>,
    /// With a placement policy: the job's ranks.
    #[serde(default)]
    pub num_ranks: Option<u32>,
    /// The job may run on hosts an earlier job holds.
    #[serde(default)]
    pub share_hosts: bool,
}

impl CollectiveConfig {
    pub(crate) fn job_keys(&self) -> super::job::Keys<'_> {
        super::job::Keys { job: self.job.as_deref(), placement: self.placement, share_hosts: self.share_hosts, list_key: "hosts", listed: self.hosts.is_some() }
    }
}
pub(crate) fn default_chunk() -> Size {
    Size(512 * 1024)
}
pub(crate) fn default_channels() -> u32 {
    1
}
pub(crate) fn default_slots() -> u32 {
    8
}
fn default_iterations() -> u32 {
    1
}

/// A flow that waits for others: it starts `gap` after the last of `after`
/// has arrived whole at its receiver, not before `after_sent` has put its
/// last packet on the wire (the flow queued before it on the same queue
/// pair), and not before its own start time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowDep {
    pub flow: u32,
    pub after: Vec<u32>,
    pub gap: Time,
    pub after_sent: Option<u32>,
}

/// One instance (one iteration of one group) of a collective, for the outputs.
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

/// At most this many flows, and this many dependencies, per scenario: more
/// would not fit in memory.
const MAX_FLOWS: u64 = 10_000_000;

/// The `n` bytes of `total` that part `i` of `parts` gets: the parts differ by at most one byte.
fn share(total: u64, parts: u64, i: u64) -> u64 {
    total / parts + u64::from(i < total % parts)
}

/// Slices of at most `chunk` bytes that carry `total` bytes split into `parts` shares.
fn slices_of_shares(total: u64, parts: u64, chunk: u64) -> u64 {
    let (q, rem) = (total / parts, total % parts);
    (q + 1).div_ceil(chunk).saturating_mul(rem).saturating_add(q.div_ceil(chunk).saturating_mul(parts - rem))
}

/// Slices of at most `chunk` bytes that carry `bytes`, in order.
fn slices(bytes: u64, chunk: u64) -> impl Iterator<Item = u64> {
    let k = bytes.div_ceil(chunk);
    (0..k).map(move |j| if j + 1 < k { chunk } else { bytes - chunk * (k - 1) })
}

/// The resolved settings an algorithm expands with.
struct Plan<'a> {
    c: &'a CollectiveConfig,
    n: u32,
    root: u32,
    fifo: bool,
}

/// One instance under construction: its flows, their dependencies, the
/// connections' queues, and what each rank waits for before the next iteration.
struct Instance<'a> {
    flows: &'a mut Vec<FlowSpec>,
    deps: &'a mut Vec<FlowDep>,
    /// Dependencies added so far (all instances), against [`MAX_FLOWS`].
    dep_count: &'a mut u64,
    hosts: &'a [u32],
    name: &'a str,
    start: Time,
    slots: u32,
    fifo: bool,
    /// Per rank: what its first flows of this iteration wait for, and the gap.
    gate: &'a [Vec<u32>],
    gap: Time,
    /// Per rank: the flows it received and sent in this iteration.
    received: Vec<Vec<u32>>,
    sent: Vec<Vec<u32>>,
    steps: Vec<std::ops::Range<u32>>,
}

impl Instance<'_> {
    fn begin_step(&mut self) {
        let at = self.flows.len() as u32;
        self.steps.push(at..at);
    }

    /// Adds a slice from rank `src` to rank `dst` on `channel` and `queue`
    /// (the ids of the connection's earlier slices, which it joins) that
    /// waits for `data` to have arrived; returns its id.
    #[allow(clippy::too_many_arguments)]
    fn slice(&mut self, src: u32, dst: u32, channel: u32, bytes: u64, data: &[u32], queue: &mut Vec<u32>, err: &super::KeyErr) -> Result<u32, InputError> {
        let id = self.flows.len() as u32;
        let mut after = data.to_vec();
        let slots = self.slots as usize;
        if queue.len() >= slots {
            after.push(queue[queue.len() - slots]);
        }
        let after_sent = if self.fifo { queue.last().copied() } else { None };
        // A slice that waits for nothing else of this iteration waits for the
        // rank's previous iteration.
        let mut gap = Time(0);
        if data.is_empty() && after_sent.is_none() && queue.len() < slots && !self.gate[src as usize].is_empty() {
            after.extend_from_slice(&self.gate[src as usize]);
            gap = self.gap;
        }
        *self.dep_count += after.len() as u64;
        if *self.dep_count > MAX_FLOWS {
            return Err(err("iterations", format!("the collective expands into more than {MAX_FLOWS} dependencies between flows: use fewer ranks, channels or iterations, or a larger chunk")));
        }
        self.flows.push(FlowSpec {
            src: HostId(self.hosts[src as usize]),
            dst: HostId(self.hosts[dst as usize]),
            size: bytes,
            start: self.start,
            name: self.name.to_string(),
            rate_cap: u64::MAX,
            channel,
        });
        if !after.is_empty() || after_sent.is_some() {
            self.deps.push(FlowDep { flow: id, after, gap, after_sent });
        }
        queue.push(id);
        self.received[dst as usize].push(id);
        self.sent[src as usize].push(id);
        self.steps.last_mut().expect("a step").end = id + 1;
        Ok(id)
    }

    /// What each rank's next iteration waits for: everything it received,
    /// or, for a rank that receives nothing, everything it sent.
    fn next_gate(&mut self) -> Vec<Vec<u32>> {
        let sent = std::mem::take(&mut self.sent);
        std::mem::take(&mut self.received).into_iter().zip(sent).map(|(r, s)| if r.is_empty() { s } else { r }).collect()
    }
}

/// The groups of ranks (host indices, in rank order) an entry runs.
fn groups(c: &CollectiveConfig, hs: Vec<u32>, err: &super::KeyErr) -> Result<Vec<Vec<u32>>, InputError> {
    let Some(g) = c.group_size else {
        if c.group_layout.is_some() {
            return Err(err("group_layout", "group_layout applies with group_size".into()));
        }
        return Ok(vec![hs]);
    };
    let n = hs.len() as u32;
    if g < 2 || g > n || !n.is_multiple_of(g) {
        return Err(err("group_size", format!("group_size must be at least 2 and divide the {n} hosts")));
    }
    let count = (n / g) as usize;
    Ok(match c.group_layout.unwrap_or_default() {
        GroupLayout::Blocks => hs.chunks(g as usize).map(|x| x.to_vec()).collect(),
        GroupLayout::Strided => (0..count).map(|k| hs.iter().skip(k).step_by(count).copied().collect()).collect(),
        GroupLayout::Rails => unreachable!("expand groups rails with `rails`"),
    })
}

/// `group_layout = "rails"`: one group per rail, NIC `r` of every server
/// `hosts` names (all servers when absent), in the order listed.
fn rails(c: &CollectiveConfig, topo: &TopologySpec, err: &super::KeyErr) -> Result<Vec<Vec<u32>>, InputError> {
    use crate::net::topology::{resolve_endpoint, Endpoint};
    if c.group_size.is_some() {
        return Err(err("group_size", "group_layout = \"rails\" makes one group per rail; it takes no group_size".into()));
    }
    let servers: Vec<u32> = match &c.hosts {
        None if topo.servers.is_empty() => {
            return Err(err("group_layout", "group_layout = \"rails\" needs servers of several NICs (topology key nics)".into()))
        }
        None => (0..topo.servers.len() as u32).collect(),
        Some(l) => {
            let mut out = Vec::with_capacity(l.len());
            for (i, h) in l.iter().enumerate() {
                match resolve_endpoint(topo, h).map_err(|m| err(&format!("hosts[{i}]"), m))? {
                    Endpoint::Server(s) if !out.contains(&s) => out.push(s),
                    Endpoint::Server(_) => return Err(err(&format!("hosts[{i}]"), "a server is listed twice".into())),
                    Endpoint::Host(h) => {
                        return Err(err(
                            &format!("hosts[{i}]"),
                            format!("with group_layout = \"rails\" hosts lists servers; \"{}\" is one NIC", topo.hosts[h as usize]),
                        ))
                    }
                }
            }
            out
        }
    };
    if servers.len() < 2 {
        return Err(err("hosts", "a collective needs at least two servers".into()));
    }
    let nics = topo.servers[servers[0] as usize].nics;
    if let Some(s) = servers.iter().map(|&s| &topo.servers[s as usize]).find(|s| s.nics != nics) {
        return Err(err("hosts", format!("every server of a rails collective needs the same NICs: {} has {}, {} has {nics}", s.name, s.nics, topo.servers[servers[0] as usize].name)));
    }
    Ok((0..nics).map(|r| servers.iter().map(|&s| topo.servers[s as usize].first + r).collect()).collect())
}

/// A collective entry, checked: its groups, the plan its algorithm runs,
/// whether it is one of the ring operations that keep their own numbering,
/// and its flows in all.
struct Setup<'a> {
    plan: Plan<'a>,
    groups: Vec<Vec<u32>>,
    algorithm: Algorithm,
    legacy: bool,
    total: u64,
}

fn setup<'a>(c: &'a CollectiveConfig, ctx: &Ctx, coarse_rings: bool) -> Result<Setup<'a>, InputError> {
    let err = ctx.err;
    let keys = c.job_keys();
    if c.num_ranks.is_some() && matches!(c.placement, None | Some(super::job::Policy::Explicit)) {
        return Err(err("num_ranks", "num_ranks applies with a placement policy (contiguous, random, rail_aligned); an explicit job runs on its hosts".into()));
    }
    let groups = if c.group_layout == Some(GroupLayout::Rails) {
        if c.placement.is_some_and(|p| p != super::job::Policy::Explicit) {
            return Err(err("placement", "group_layout = \"rails\" lists servers: use placement = \"rail_aligned\" with group_size (one group per rail) instead".into()));
        }
        let g = rails(c, ctx.topo, err)?;
        if let Some(job) = keys.job {
            super::job::claim(ctx, &keys, job, super::job::Policy::Explicit, g.concat())?;
        }
        g
    } else {
        let hs = super::job::rank_hosts(ctx, &keys, c.num_ranks, || hosts_of(ctx.topo, &c.hosts, err))?;
        if hs.len() < 2 {
            return Err(err("hosts", "a collective needs at least two hosts".into()));
        }
        groups(c, hs, err)?
    };
    let n = groups[0].len() as u32;
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
    let algorithm = c.algorithm.unwrap_or(Algorithm::Ring);
    if c.op == CollectiveOp::AllToAll && c.algorithm.is_some() {
        return Err(err("algorithm", "all_to_all is direct: every rank sends to every other; it takes no algorithm".into()));
    }
    if algorithm == Algorithm::Tree && !matches!(c.op, CollectiveOp::AllReduce | CollectiveOp::Broadcast | CollectiveOp::Reduce) {
        return Err(err("algorithm", format!("the tree algorithm runs all_reduce, broadcast and reduce, not {}", c.op.name())));
    }
    let root = match (c.root, c.op.rooted()) {
        (Some(_), false) => return Err(err("root", format!("{} has no root", c.op.name()))),
        (Some(r), true) if r >= n => return Err(err("root", format!("root is a rank of the group: 0 .. {}", n - 1))),
        (r, _) => r.unwrap_or(0),
    };
    // The ring operations that existed before `order` keep their parallel slices.
    let legacy = algorithm == Algorithm::Ring && matches!(c.op, CollectiveOp::AllReduce | CollectiveOp::AllGather | CollectiveOp::ReduceScatter);
    let fifo = c.order.unwrap_or(if legacy { Order::Parallel } else { Order::Fifo }) == Order::Fifo;
    let plan = Plan { c, n, root, fifo };
    // Each connection's share, then its slices; every share at least a byte.
    let parts = match (c.op, algorithm) {
        (CollectiveOp::AllToAll, _) => n as u64 * c.channels as u64,
        (CollectiveOp::AllReduce, Algorithm::Tree) => 2 * c.channels as u64,
        _ if legacy => n as u64 * c.channels as u64,
        _ => c.channels as u64,
    };
    if c.size.0 < parts {
        return Err(err("size", format!("size must be at least one byte per rank and channel ({parts} bytes)")));
    }
    let per_instance = match (c.op, algorithm) {
        (CollectiveOp::AllToAll, _) => alltoall::flows(&plan),
        (_, Algorithm::Tree) => tree::flows(&plan),
        // One transfer per rank and channel, however many slices and steps.
        _ if legacy && coarse_rings => n as u64 * c.channels as u64,
        _ => ring::flows(&plan),
    };
    let total = per_instance.saturating_mul(c.iterations as u64).saturating_mul(groups.len() as u64);
    if ctx.first.saturating_add(total) > ctx.max_flows {
        return Err(err("size", format!("the collective expands into {total} flows: {}; use a larger chunk or fewer iterations", super::too_many_flows(ctx.max_flows))));
    }
    Ok(Setup { plan, groups, algorithm, legacy, total })
}

/// The names of an entry's groups: the entry's name, with the group's
/// index when it has several.
fn group_names(c: &CollectiveConfig, ctx: &Ctx, groups: usize) -> Vec<String> {
    let tag = label(&c.name.clone().or(c.job.clone()), "coll", ctx.idx);
    (0..groups)
        .map(|k| match c.group_layout {
            Some(GroupLayout::Rails) => format!("{tag}.r{k}"),
            _ if groups > 1 => format!("{tag}.g{k}"),
            _ => tag.clone(),
        })
        .collect()
}

/// The ring all-reduce, all-gather and reduce-scatter as plans the run
/// generates their flows from ([`ring::RingPlan`]); None for the other
/// operations and algorithms, which [`expand`] lists. `coarse_rings`: the
/// plan will become one transfer per rank and channel (the flow level),
/// and the flow count checked is theirs.
pub fn ring_plan(c: &CollectiveConfig, ctx: &Ctx, coarse_rings: bool) -> Result<Option<ring::RingPlan>, InputError> {
    let s = setup(c, ctx, coarse_rings)?;
    if !s.legacy {
        return Ok(None);
    }
    let names = group_names(c, ctx, s.groups.len());
    let plan = ring::RingPlan::new(&s.plan, s.groups.into_iter().zip(names).collect());
    debug_assert!(coarse_rings || plan.flows() == s.total);
    Ok(Some(plan))
}

pub fn expand(c: &CollectiveConfig, ctx: &Ctx, flows: &mut Vec<FlowSpec>) -> Result<(), InputError> {
    let Setup { plan, groups, algorithm, legacy, .. } = setup(c, ctx, false)?;
    let (n, fifo, err) = (plan.n, plan.fifo, ctx.err);
    let names = group_names(c, ctx, groups.len());
    let mut out = ctx.out.borrow_mut();
    let out = &mut *out;
    let mut dep_count = out.deps.iter().map(|d| d.after.len() as u64).sum::<u64>();
    for (hosts, name) in groups.iter().zip(names) {
        if legacy {
            // Kept as it was: its own numbering and its own iteration rule.
            ring::expand_legacy(&plan, hosts, &name, flows, out);
            continue;
        }
        let mut gate: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
        for it in 0..c.iterations {
            let mut inst = Instance {
                flows,
                deps: &mut out.deps,
                dep_count: &mut dep_count,
                hosts,
                name: &name,
                start: c.start,
                slots: c.slots,
                fifo,
                gate: &gate,
                gap: c.gap,
                received: vec![Vec::new(); n as usize],
                sent: vec![Vec::new(); n as usize],
                steps: Vec::new(),
            };
            match (c.op, algorithm) {
                (CollectiveOp::AllToAll, _) => alltoall::expand(&plan, &mut inst, err)?,
                (_, Algorithm::Tree) => tree::expand(&plan, &mut inst, err)?,
                _ => ring::expand_chain(&plan, &mut inst, err)?,
            }
            let steps = std::mem::take(&mut inst.steps);
            gate = inst.next_gate();
            out.collectives.push(CollectiveSpec { name: name.clone(), op: c.op, ranks: n, size: c.size.0, iteration: it, steps });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_differ_by_at_most_a_byte_and_add_up() {
        for (total, parts) in [(10u64, 3u64), (9, 3), (1, 1), (1_000_003, 7)] {
            let s: Vec<u64> = (0..parts).map(|i| share(total, parts, i)).collect();
            assert_eq!(s.iter().sum::<u64>(), total);
            assert!(s.iter().max().unwrap() - s.iter().min().unwrap() <= 1);
        }
        for (total, parts, chunk) in [(10u64, 3u64, 2u64), (1_000_003, 7, 1000), (5, 5, 1), (64, 2, 64)] {
            let count: u64 = (0..parts).map(|i| slices(share(total, parts, i), chunk).count() as u64).sum();
            assert_eq!(slices_of_shares(total, parts, chunk), count);
        }
        let v: Vec<u64> = slices(10, 4).collect();
        assert_eq!(v, [4, 4, 2]);
        assert_eq!(slices(8, 4).collect::<Vec<_>>(), [4, 4]);
    }

    /// A ring plan computes, flow by flow, exactly the flows and
    /// dependencies the listing gives: same ids, hosts, sizes, names,
    /// channels, prerequisites, gaps and queues, over groups, iterations,
    /// channels, several slices, slots, both orders and a remainder.
    #[test]
    fn ring_plans_compute_what_the_listing_lists() {
        let topo: toml::Table = toml::from_str("kind = \"fat_tree\"\nk = 4\nrate = \"100Gbps\"\ndelay = \"1us\"").unwrap();
        let topo = crate::net::topology::TopologyConfig::from_table(&topo).unwrap().build().unwrap();
        let cases = [
            "op = \"all_reduce\"\nsize = \"64KB\"",
            "op = \"all_reduce\"\nsize = \"1000003B\"\nchunk = \"7KB\"\nchannels = 3\nslots = 2\niterations = 3\ngap = \"2us\"\nstart = \"5us\"",
            "op = \"all_gather\"\nsize = \"400KB\"\nchunk = \"4KB\"\norder = \"fifo\"\niterations = 2\ngroup_size = 4",
            "op = \"reduce_scatter\"\nsize = \"96KB\"\nchunk = \"1KB\"\nslots = 1\nchannels = 2\norder = \"fifo\"\ngroup_size = 8\ngroup_layout = \"strided\"\niterations = 2\ngap = \"1us\"\nname = \"rs\"",
            "op = \"all_reduce\"\nsize = \"32KB\"\nhosts = [\"h3\", \"h0\", \"h9\"]\nchunk = \"2KB\"\norder = \"fifo\"",
        ];
        for (k, text) in cases.iter().enumerate() {
            let c: CollectiveConfig = toml::from_str(text).unwrap();
            let err = |key: &str, m: String| InputError::new("t", Some(key.into()), None, m);
            let out = std::cell::RefCell::new(super::super::Extras::default());
            let ctx = Ctx { idx: 2, first: 0, topo: &topo, seed: 1, base_dir: std::path::Path::new("."), mtu: 1000, err: &err, max_flows: u64::MAX, out: &out, placer: &Default::default() };
            let plan = ring_plan(&c, &ctx, false).unwrap().expect("a ring plan");
            let mut listed = Vec::new();
            expand(&c, &ctx, &mut listed).unwrap();
            let extras = out.into_inner();
            assert_eq!(plan.flows(), listed.len() as u64, "case {k}");
            let mut f = listed[0].clone();
            for (i, want) in listed.iter().enumerate() {
                plan.spec_into(i as u32, &mut f);
                assert_eq!(&f, want, "case {k} flow {i}");
                assert_eq!(plan.index(plan.pos(i as u32)), i as u32);
            }
            let deps: Vec<FlowDep> = (0..plan.flows() as u32).filter_map(|i| plan.dep(i)).collect();
            assert_eq!(deps, extras.deps, "case {k}");
            // Waits, dependents and queues agree with the dependencies.
            let mut dependents = vec![Vec::new(); listed.len()];
            let mut behind = vec![None; listed.len()];
            let mut waiting = vec![0u32; listed.len()];
            for d in &deps {
                waiting[d.flow as usize] = d.after.len() as u32 + d.after_sent.is_some() as u32;
                for &a in &d.after {
                    dependents[a as usize].push(d.flow);
                }
                if let Some(a) = d.after_sent {
                    behind[a as usize] = Some(d.flow);
                }
            }
            for i in 0..listed.len() as u32 {
                assert_eq!(plan.waiting(i), waiting[i as usize], "case {k} flow {i}");
                let mut got = Vec::new();
                plan.dependents(i, |d| got.push(d));
                assert_eq!(got, dependents[i as usize], "case {k} flow {i}");
                assert_eq!(plan.queued_behind(i), behind[i as usize], "case {k} flow {i}");
            }
            assert_eq!(plan.instances(c.op, c.size.0, 0), extras.collectives, "case {k}");
        }
    }
}
