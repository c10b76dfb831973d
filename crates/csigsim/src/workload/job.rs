//! Jobs: `collective`, `goal` and `chakra` entries with a `job` name, each a
//! training job of its own on the shared fabric. A job's ranks run on the
//! hosts its `placement` picks (or lists), and no two jobs share a host
//! unless the later one says `share_hosts = true`. The run reports each
//! job's times and its share of the links it used (jobs.csv,
//! job_links.csv), and `csigsim run --isolate-jobs` runs each job alone on
//! the same placement for its slowdown ([`crate::Scenario::alone`]).
//!
//! Placement is decided in file order: a job's policy sees the hosts the
//! jobs before it hold, never those after it.

use super::Ctx;
use crate::de::InputError;
use crate::rng::{Purpose, Stream};
use serde::Deserialize;
use std::cell::RefCell;

/// `placement`: how a job's ranks are laid on hosts.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// The lowest-indexed free hosts, in host order.
    Contiguous,
    /// Free hosts drawn from the run's seed and the job's name, in host order.
    Random,
    /// Whole free servers of several NICs, ranks laid rail by rail: rank
    /// `r S + s` on NIC `r` of the job's server `s` (S servers).
    RailAligned,
    /// The entry's own host list (`hosts`, or `ranks` for `chakra`).
    Explicit,
}

impl Policy {
    pub fn name(self) -> &'static str {
        match self {
            Policy::Contiguous => "contiguous",
            Policy::Random => "random",
            Policy::RailAligned => "rail_aligned",
            Policy::Explicit => "explicit",
        }
    }
}

/// The job keys of one entry.
pub struct Keys<'a> {
    pub job: Option<&'a str>,
    pub placement: Option<Policy>,
    pub share_hosts: bool,
    /// The key of the entry's explicit host list (`hosts` or `ranks`), and
    /// whether the entry gives one.
    pub list_key: &'static str,
    pub listed: bool,
}

/// One job as the scenario holds it, for the outputs and `--isolate-jobs`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobSpec {
    pub name: String,
    /// Its entry's position among the scenario's workloads
    /// (`Scenario::workloads`; 0 holds the `[[flow]]` entries).
    pub workload: usize,
    /// `collective`, `goal` or `chakra`.
    pub kind: &'static str,
    pub placement: Policy,
    /// The hosts of its ranks, in rank order.
    pub hosts: Vec<u32>,
    /// Its collective instances: `Scenario::collectives[collectives]`.
    pub collectives: std::ops::Range<usize>,
    /// Iterations it runs (a `collective`'s `iterations`; a trace's are in
    /// its files: 1).
    pub iterations: u32,
}

/// Which job holds each host, and where each job was placed: what the
/// entries' placements see, in file order.
#[derive(Debug, Default)]
pub struct Placer {
    state: RefCell<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Per host: the job holding it (an index into `jobs`), or none.
    holder: Vec<Option<u32>>,
    /// Per job: its name, entry, policy and hosts in rank order.
    jobs: Vec<(String, usize, Policy, Vec<u32>)>,
}

impl Placer {
    /// The job `name`'s policy and hosts, once placed.
    pub fn placed(&self, name: &str) -> Option<(Policy, Vec<u32>)> {
        self.state.borrow().jobs.iter().find(|j| j.0 == name).map(|j| (j.2, j.3.clone()))
    }
}

/// A name as a stream's entity: FNV-1a of its bytes (stable across builds).
fn name_entity(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

/// The hosts of an entry's `n` ranks (`n` None: as many as it lists), in
/// rank order: the list `listed` reads (all hosts when the entry gives
/// none), or those its job's placement policy picks. A job's hosts are
/// claimed for it; an entry without `job` takes its list as before.
pub fn rank_hosts(ctx: &Ctx, keys: &Keys, n: Option<u32>, listed: impl FnOnce() -> Result<Vec<u32>, InputError>) -> Result<Vec<u32>, InputError> {
    let err = ctx.err;
    let policy = keys.placement.unwrap_or(Policy::Explicit);
    let Some(job) = keys.job else {
        if keys.placement.is_some() {
            return Err(err("placement", "placement applies to a job: give the entry a `job` name".into()));
        }
        if keys.share_hosts {
            return Err(err("share_hosts", "share_hosts applies to a job: give the entry a `job` name".into()));
        }
        return listed();
    };
    if let Some(p) = ctx.placer.placed(job) {
        // The entry is read twice (a collective's plan, then its listing).
        return Ok(p.1);
    }
    let hosts = if policy == Policy::Explicit {
        let mut l = listed()?;
        if let Some(n) = n {
            l.truncate(n as usize);
        }
        l
    } else {
        if keys.listed {
            return Err(err(
                keys.list_key,
                format!("placement = \"{}\" places the ranks: list them only with placement = \"explicit\"", policy.name()),
            ));
        }
        let n = n.ok_or_else(|| err("num_ranks", format!("placement = \"{}\" needs num_ranks, the number of ranks to place", policy.name())))?;
        place(ctx, job, policy, n)?
    };
    claim(ctx, keys, job, policy, hosts)
}

/// Claims `hosts` for `job`: refused when another job holds one, unless
/// the entry allows sharing.
pub fn claim(ctx: &Ctx, keys: &Keys, job: &str, policy: Policy, hosts: Vec<u32>) -> Result<Vec<u32>, InputError> {
    if let Some(p) = ctx.placer.placed(job) {
        return Ok(p.1);
    }
    let mut st = ctx.placer.state.borrow_mut();
    if st.holder.len() < ctx.topo.hosts.len() {
        st.holder.resize(ctx.topo.hosts.len(), None);
    }
    let me = st.jobs.len() as u32;
    if !keys.share_hosts {
        for (r, &h) in hosts.iter().enumerate() {
            if let Some(other) = st.holder[h as usize].filter(|&o| o != me) {
                let (name, entry, ..) = &st.jobs[other as usize];
                let key = if policy == Policy::Explicit && keys.listed { format!("{}[{r}]", keys.list_key) } else { "placement".to_string() };
                return Err((ctx.err)(
                    &key,
                    format!(
                        "host {} (rank {r}) already runs job \"{name}\" (workload[{entry}]); two jobs share a host only when the later says share_hosts = true",
                        ctx.topo.hosts[h as usize]
                    ),
                ));
            }
        }
    }
    for &h in &hosts {
        st.holder[h as usize].get_or_insert(me);
    }
    st.jobs.push((job.to_string(), ctx.idx, policy, hosts.clone()));
    Ok(hosts)
}

/// The hosts `policy` gives job `job`'s `n` ranks, among those no earlier job holds.
fn place(ctx: &Ctx, job: &str, policy: Policy, n: u32) -> Result<Vec<u32>, InputError> {
    let st = ctx.placer.state.borrow();
    let hosts = ctx.topo.hosts.len();
    let free = |h: u32| st.holder.get(h as usize).is_none_or(|o| o.is_none());
    let free_hosts: Vec<u32> = (0..hosts as u32).filter(|&h| free(h)).collect();
    let short = |what: String| {
        (ctx.err)("placement", format!("job \"{job}\" needs {n} ranks on {what}; the jobs before it hold {} of the {hosts} hosts", hosts - free_hosts.len()))
    };
    if n == 0 {
        return Err((ctx.err)("num_ranks", "num_ranks must be at least 1".into()));
    }
    match policy {
        Policy::Contiguous | Policy::Random if (free_hosts.len() as u64) < n as u64 => Err(short(format!("free hosts, and {} are free", free_hosts.len()))),
        Policy::Contiguous => Ok(free_hosts[..n as usize].to_vec()),
        Policy::Random => {
            // A partial Fisher-Yates shuffle of the free hosts, from the
            // job's own stream: another job's entry does not move it.
            let mut pool = free_hosts.clone();
            let mut rng = Stream::new(ctx.seed, name_entity(job), Purpose::JobPlacement);
            for i in 0..n as usize {
                let j = i + rng.below((pool.len() - i) as u64) as usize;
                pool.swap(i, j);
            }
            let mut picked = pool[..n as usize].to_vec();
            picked.sort_unstable();
            Ok(picked)
        }
        Policy::RailAligned => {
            let servers = &ctx.topo.servers;
            if servers.is_empty() {
                return Err((ctx.err)(
                    "placement",
                    "placement = \"rail_aligned\" needs servers of several NICs (topology key nics): the fabric has no rails".into(),
                ));
            }
            let nics = servers[0].nics;
            if servers.iter().any(|s| s.nics != nics) {
                return Err((ctx.err)("placement", "placement = \"rail_aligned\" needs servers of the same number of NICs".into()));
            }
            if !n.is_multiple_of(nics) {
                return Err((ctx.err)("placement", format!("placement = \"rail_aligned\" takes whole servers of {nics} NICs: job \"{job}\" has {n} ranks")));
            }
            let want = (n / nics) as usize;
            let picked: Vec<&super::super::net::topology::servers::ServerSpec> =
                servers.iter().filter(|s| (s.first..s.first + s.nics).all(free)).take(want).collect();
            if picked.len() < want {
                return Err(short(format!("{want} whole free servers, and {} are free", picked.len())));
            }
            Ok((0..nics).flat_map(|r| picked.iter().map(move |s| s.first + r)).collect())
        }
        Policy::Explicit => unreachable!("explicit hosts are listed"),
    }
}

impl super::WorkloadEntry {
    /// The entry's job name, kind and iterations, when it is a job.
    pub fn job(&self) -> Option<(&str, &'static str, u32)> {
        use super::WorkloadEntry as W;
        match self {
            W::Collective(c) => c.job.as_deref().map(|j| (j, "collective", c.iterations)),
            W::Goal(c) => c.job.as_deref().map(|j| (j, "goal", 1)),
            W::Chakra(c) => c.job.as_deref().map(|j| (j, "chakra", 1)),
            _ => None,
        }
    }
}

/// Job names: each entry's own (checked once, before any is placed).
pub fn check_names<'a>(names: impl Iterator<Item = (usize, Option<&'a str>)>, err: &dyn Fn(&str, String) -> InputError) -> Result<(), InputError> {
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for (i, name) in names {
        let Some(name) = name else { continue };
        if name.is_empty() {
            return Err(err(&format!("workload[{i}].job"), "a job's name must not be empty".into()));
        }
        if let Some((_, j)) = seen.iter().find(|s| s.0 == name) {
            return Err(err(&format!("workload[{i}].job"), format!("job \"{name}\" is also workload[{j}]'s: each job is one entry")));
        }
        seen.push((name, i));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_hash_stably() {
        // FNV-1a's published value for "a".
        assert_eq!(name_entity("a"), 0xaf63_dc4c_8601_ec8c);
        assert_ne!(name_entity("a"), name_entity("b"));
    }
}
