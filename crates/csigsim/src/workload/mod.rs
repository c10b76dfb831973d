//! Workloads: generators of flows, one file each, and the applications
//! that start their flows during the run ([`app`]). Each generator draws
//! from its own random stream (seed, workload index), so adding a generator
//! never changes the flows of another.
//!
//! A workload's flows are either listed when the scenario is loaded
//! ([`Flows::Listed`]: the flows and the dependencies between them), or
//! held as a plan the run computes each flow and dependency from when it
//! needs them ([`Flows::Ring`]: a ring collective of millions of slices).
//! Either way flow `i` of a workload has the id `first + i`, in the order
//! the generator lists them.
//!
//! Adding a generator: its file (its keys as a config struct, `expand`), one
//! line in the registry below, and its section in docs/workloads.md.

use crate::net::topology::TopologySpec;
use crate::de::InputError;
use crate::net::topology::{resolve_endpoint, HostRef};
use std::path::{Path, PathBuf};

/// Builds the error for a key of the workload (relative to its table).
pub type KeyErr<'a> = dyn Fn(&str, String) -> InputError + 'a;

/// What generators produce beside flows: dependencies between flows and
/// collective operations (for their outputs).
#[derive(Clone, Debug, Default)]
pub struct Extras {
    pub deps: Vec<collective::FlowDep>,
    pub collectives: Vec<collective::CollectiveSpec>,
    pub rpcs: Vec<rpc::RpcSpec>,
    /// `[[flow]]` entries from or to a server of several NICs.
    pub nic_spread: Vec<NicSpread>,
}

/// A message whose queue pairs spread over a server's NICs: with
/// `[transport.connection]`, QP `q` runs from NIC `q mod src_nics` of the
/// source (the flow's `src` is its first NIC) to NIC `q mod dst_nics` of
/// the destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NicSpread {
    pub flow: u32,
    pub src_nics: u32,
    pub dst_nics: u32,
}

/// What a generator expands against.
pub struct Ctx<'a> {
    /// The workload's position among the `[[workload]]` tables.
    pub idx: usize,
    /// Flows of the scenario before this workload's (its first flow's id).
    pub first: u64,
    pub topo: &'a TopologySpec,
    pub seed: u64,
    /// Relative file names are relative to this directory.
    pub base_dir: &'a Path,
    /// Payload bytes per packet (`transport.mtu`): a flow's size must come to
    /// at most `u32::MAX` packets.
    pub mtu: u32,
    pub err: &'a KeyErr<'a>,
    /// The most flows the scenario may have in all (`Budget::max_flows`):
    /// a generator refuses to go past it, before or while it generates.
    pub max_flows: u64,
    /// Dependencies and collectives the generator adds.
    pub out: &'a std::cell::RefCell<Extras>,
    /// The hosts the jobs of earlier entries hold ([`job`]).
    pub placer: &'a job::Placer,
}

macro_rules! generators {
    ($(($module:ident, $variant:ident, $kind:literal, $config:ident, $description:literal)),* $(,)?) => {
        $(pub mod $module;)*

        /// A `[[workload]]` table, by `kind`.
        #[derive(Clone, Debug, serde::Deserialize)]
        #[serde(tag = "kind")]
        pub enum WorkloadEntry {
            $(#[doc = $description] #[serde(rename = $kind)] $variant($module::$config),)*
        }

        /// Every generator this build knows, for `csigsim list`.
        pub const KINDS: &[(&str, &str)] = &[$(($kind, $description),)*];

        /// Appends the flows of workload `ctx.idx` to `flows`.
        pub fn expand(w: &WorkloadEntry, ctx: &Ctx, flows: &mut Vec<FlowSpec>) -> Result<(), InputError> {
            match w {
                $(WorkloadEntry::$variant(c) => $module::expand(c, ctx, flows),)*
            }
        }
    };
}

// One line per generator: its file, variant, `kind`, config type and description.
generators! {
    (permutation, Permutation, "permutation", PermutationConfig, "every host sends one flow to another; a uniformly random cyclic permutation"),
    (incast, Incast, "incast", IncastConfig, "N senders to one receiver"),
    (all_to_all, AllToAll, "all_to_all", AllToAllConfig, "every host sends one flow to every other host"),
    (trace, Trace, "trace", TraceConfig, "flows from a CSV file: src,dst,size,start"),
    (poisson, Poisson, "poisson", PoissonConfig, "Poisson arrivals at a target load, sizes from an empirical CDF (websearch, hadoop or a file)"),
    (rpc, Rpc, "rpc", RpcConfig, "RPCs of one size at a target load (Poisson), with an optional on/off bursty background; latencies in rpcs.csv"),
    (collective, Collective, "collective", CollectiveConfig, "a collective as NCCL runs it (all_reduce, all_gather, reduce_scatter, broadcast, reduce on a ring or tree; all_to_all), pipelined, with dependencies between sends"),
    (goal, Goal, "goal", GoalConfig, "a GOAL schedule (LogGOPSim, ATLAHS): per-rank sends, receives and compute with dependencies"),
    (chakra, Chakra, "chakra", ChakraConfig, "Chakra execution traces (MLCommons, ASTRA-sim): per-rank compute, sends, receives and collectives with dependencies"),
}

pub mod app;
pub mod connection;
pub mod dag;
pub mod job;

/// The flows of workload `ctx.idx` as a plan the run generates them from,
/// when its generator has one and `plans` allows it; None when they are to
/// be listed ([`expand`]). `coarse_rings`: a ring's plan will become its
/// transfers (the flow level, [`collective::coarse`]), and its flows are
/// counted as those.
pub fn plan(w: &WorkloadEntry, ctx: &Ctx, plans: bool, coarse_rings: bool) -> Result<Option<Flows>, InputError> {
    match w {
        WorkloadEntry::Collective(c) if plans => Ok(collective::ring_plan(c, ctx, coarse_rings)?.map(Flows::Ring)),
        WorkloadEntry::Goal(c) => Ok(Some(Flows::Dag(goal::read(c, ctx)?))),
        WorkloadEntry::Chakra(c) => Ok(Some(Flows::Dag(chakra::read(c, ctx)?))),
        _ => Ok(None),
    }
}

/// The flows of one workload, as the scenario holds them.
// One a workload: the graph's size beside the other forms costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Flows {
    /// Every flow, and the dependencies between them (flow ids of the
    /// workload: 0 is its first flow).
    Listed { specs: Vec<FlowSpec>, deps: Vec<collective::FlowDep> },
    /// A ring collective's plan: its flows and dependencies are computed
    /// when the run or an output needs them.
    Ring(collective::ring::RingPlan),
    /// A graph of flows, compute delays and joins (a training trace).
    Dag(dag::Dag),
}

/// One workload's flows: ids `first .. first + len()`.
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    pub first: u32,
    pub flows: Flows,
}

impl Workload {
    /// Flows of the workload.
    pub fn len(&self) -> u32 {
        match &self.flows {
            Flows::Listed { specs, .. } => specs.len() as u32,
            Flows::Ring(p) => p.flows() as u32,
            Flows::Dag(d) => d.specs.len() as u32,
        }
    }

    /// Operations of the workload's graph (flows, compute delays, joins),
    /// 0 for a workload that is no graph: [`crate::sim::Event::AppTimer`]
    /// numbers the operations of all workloads one after another.
    pub fn ops(&self) -> u32 {
        match &self.flows {
            Flows::Dag(d) => d.ops.len() as u32,
            _ => 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `each` with every flow of the workload (its id, its spec and
    /// whether it waits for others), in order.
    pub fn for_each_flow(&self, mut each: impl FnMut(crate::id::FlowId, &FlowSpec, bool)) {
        let id = |i: u32| crate::id::FlowId(self.first + i);
        match &self.flows {
            Flows::Listed { specs, deps } => {
                let mut waits = vec![false; specs.len()];
                for d in deps {
                    waits[d.flow as usize] |= !d.after.is_empty() || d.after_sent.is_some();
                }
                for (i, f) in specs.iter().enumerate() {
                    each(id(i as u32), f, waits[i]);
                }
            }
            Flows::Dag(d) => {
                let mut f = FlowSpec { src: crate::id::HostId(0), dst: crate::id::HostId(0), size: 0, start: crate::units::Time(0), name: String::new(), rate_cap: u64::MAX, channel: 0 };
                for (i, waits) in d.flows_waiting().into_iter().enumerate() {
                    d.specs.spec_into(i as u32, &mut f);
                    each(id(i as u32), &f, waits);
                }
            }
            Flows::Ring(p) => {
                let mut f = FlowSpec { src: crate::id::HostId(0), dst: crate::id::HostId(0), size: 0, start: crate::units::Time(0), name: String::new(), rate_cap: u64::MAX, channel: 0 };
                for i in 0..p.flows() as u32 {
                    p.spec_into(i, &mut f);
                    each(id(i), &f, p.waiting(i) > 0);
                }
            }
        }
    }

    /// Calls `each` with every dependency of the workload (flow ids of the
    /// scenario), in order of the flows that wait, until it answers false.
    pub fn for_each_dep(&self, mut each: impl FnMut(&collective::FlowDep) -> bool) -> bool {
        let shift = |d: &mut collective::FlowDep| {
            d.flow += self.first;
            d.after.iter_mut().for_each(|a| *a += self.first);
            if let Some(a) = &mut d.after_sent {
                *a += self.first;
            }
        };
        match &self.flows {
            Flows::Listed { deps, .. } => deps.iter().all(|d| {
                let mut d = d.clone();
                shift(&mut d);
                each(&d)
            }),
            Flows::Ring(p) => (0..p.flows() as u32).filter_map(|i| p.dep(i)).all(|mut d| {
                shift(&mut d);
                each(&d)
            }),
            // A graph's flows wait for operations, not flows: it is no list
            // of flow dependencies (and runs on one thread).
            Flows::Dag(_) => true,
        }
    }

    /// The name of flow `i` of the workload.
    pub fn name(&self, i: u32) -> &str {
        match &self.flows {
            Flows::Listed { specs, .. } => &specs[i as usize].name,
            Flows::Ring(p) => p.name(i),
            Flows::Dag(d) => d.specs.name(i),
        }
    }
}

/// The hosts a `hosts` list names (all hosts when absent), each at most
/// once; a server of several NICs stands for its NICs, in order.
fn hosts_of(topo: &TopologySpec, list: &Option<Vec<HostRef>>, err: &KeyErr) -> Result<Vec<u32>, InputError> {
    match list {
        None => Ok((0..topo.hosts.len() as u32).collect()),
        Some(l) => {
            let mut out = Vec::with_capacity(l.len());
            for (i, h) in l.iter().enumerate() {
                let e = resolve_endpoint(topo, h).map_err(|m| err(&format!("hosts[{i}]"), m))?;
                for id in topo.endpoint_hosts(e) {
                    if out.contains(&id) {
                        return Err(err(&format!("hosts[{i}]"), format!("host {} is listed twice", topo.hosts[id as usize])));
                    }
                    out.push(id);
                }
            }
            Ok(out)
        }
    }
}

/// Why a workload stops generating: the scenario would pass `max` flows.
pub fn too_many_flows(max: u64) -> String {
    format!("the scenario would have more than {max} flows, the most the memory budget allows (about {} bytes each; --max-memory)", crate::budget::BYTES_PER_FLOW)
}

/// The flows' name: the one given, else the generator's prefix and the workload index.
fn label(name: &Option<String>, prefix: &str, idx: usize) -> String {
    name.clone().unwrap_or_else(|| format!("{prefix}{idx}"))
}

/// Checks the `size` of a generator's flows.
fn flow_size(size: u64, ctx: &Ctx) -> Result<u64, InputError> {
    match size_error(size, ctx.mtu) {
        Some(m) => Err((ctx.err)("size", m)),
        None => Ok(size),
    }
}

/// Why `size` bytes cannot be a flow with packets of `mtu` payload bytes, if
/// they cannot: it is zero, or more than `u32::MAX` packets.
pub fn size_error(size: u64, mtu: u32) -> Option<String> {
    let max = u32::MAX as u64 * mtu as u64;
    if size == 0 {
        Some("size must be above zero".into())
    } else if size > max {
        Some(format!(
            "a flow of {size} bytes would be {} packets of mtu {mtu} bytes; a flow may have at most {} packets ({max} bytes)",
            size.div_ceil(mtu as u64),
            u32::MAX
        ))
    } else {
        None
    }
}

/// A flow to simulate, with hosts resolved to indices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    pub src: crate::id::HostId,
    pub dst: crate::id::HostId,
    pub size: u64,
    pub start: crate::units::Time,
    pub name: String,
    /// Sending-rate cap in bits/s (u64::MAX: none).
    pub rate_cap: u64,
    /// The collective channel (ring) the flow belongs to, 0 otherwise: with
    /// `[transport.connection]`, each channel has its own connections.
    pub channel: u32,
}

/// Where a trace file given relative to a scenario lives.
pub(crate) fn relative_to(base: &Path, file: &str) -> PathBuf {
    let p = Path::new(file);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}
