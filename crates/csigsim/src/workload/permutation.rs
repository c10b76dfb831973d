//! Permutation: every host sends one flow to a distinct host, drawn as a
//! uniformly random cyclic permutation (so no host sends to itself).

use super::{hosts_of, label, flow_size, Ctx};
use crate::net::topology::HostRef;
use super::FlowSpec;
use crate::id::HostId;
use crate::de::InputError;
use crate::rng::{Purpose, Stream};
use crate::units::{Size, Time};
use serde::Deserialize;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermutationConfig {
    pub size: Size,
    #[serde(default)]
    pub start: Time,
    /// Restrict to these hosts (default: all).
    #[serde(default)]
    pub hosts: Option<Vec<HostRef>>,
    #[serde(default)]
    pub name: Option<String>,
}

pub fn expand(c: &PermutationConfig, ctx: &Ctx, flows: &mut Vec<FlowSpec>) -> Result<(), InputError> {
    let err = ctx.err;
    let size = flow_size(c.size.0, ctx)?;
    let hs = hosts_of(ctx.topo, &c.hosts, err)?;
    if hs.len() < 2 {
        return Err(err("hosts", "a permutation needs at least two hosts".into()));
    }
    // Sattolo's algorithm: a uniformly random permutation with a single
    // cycle, so no host sends to itself.
    let mut perm: Vec<usize> = (0..hs.len()).collect();
    let mut rng = Stream::new(ctx.seed, ctx.idx as u64, Purpose::Workload);
    for i in (1..perm.len()).rev() {
        let j = rng.below(i as u64) as usize;
        perm.swap(i, j);
    }
    let tag = label(&c.name, "perm", ctx.idx);
    for (i, &h) in hs.iter().enumerate() {
        flows.push(FlowSpec { src: HostId(h), dst: HostId(hs[perm[i]]), size, start: c.start, name: tag.clone(), rate_cap: u64::MAX, channel: 0 });
    }
    Ok(())
}
