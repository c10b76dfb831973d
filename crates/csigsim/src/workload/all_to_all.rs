//! All-to-all: every host sends one flow to every other host.

use super::{hosts_of, label, flow_size, Ctx};
use crate::net::topology::HostRef;
use super::FlowSpec;
use crate::id::HostId;
use crate::de::InputError;
use crate::units::{Size, Time};
use serde::Deserialize;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllToAllConfig {
    pub size: Size,
    #[serde(default)]
    pub start: Time,
    /// Restrict to these hosts (default: all).
    #[serde(default)]
    pub hosts: Option<Vec<HostRef>>,
    #[serde(default)]
    pub name: Option<String>,
}

pub fn expand(c: &AllToAllConfig, ctx: &Ctx, flows: &mut Vec<FlowSpec>) -> Result<(), InputError> {
    let err = ctx.err;
    let size = flow_size(c.size.0, ctx)?;
    let hs = hosts_of(ctx.topo, &c.hosts, err)?;
    if hs.len() < 2 {
        return Err(err("hosts", "all_to_all needs at least two hosts".into()));
    }
    let total = hs.len() as u64 * (hs.len() as u64 - 1);
    if ctx.first.saturating_add(flows.len() as u64).saturating_add(total) > ctx.max_flows {
        return Err(err("hosts", format!("all_to_all among {} hosts makes {total} flows: {}", hs.len(), super::too_many_flows(ctx.max_flows))));
    }
    let tag = label(&c.name, "a2a", ctx.idx);
    for &s in &hs {
        for &d in &hs {
            if s != d {
                flows.push(FlowSpec { src: HostId(s), dst: HostId(d), size, start: c.start, name: tag.clone(), rate_cap: u64::MAX, channel: 0 });
            }
        }
    }
    Ok(())
}
