//! Incast: N senders to one receiver, all starting together.

use super::{hosts_of, label, flow_size, Ctx};
use crate::net::topology::HostRef;
use super::FlowSpec;
use crate::id::HostId;
use crate::de::InputError;
use crate::net::topology::resolve_host;
use crate::units::{Size, Time};
use serde::Deserialize;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IncastConfig {
    pub receiver: HostRef,
    /// Sender hosts; default every other host.
    #[serde(default)]
    pub senders: Option<Vec<HostRef>>,
    /// Instead of a list: this many senders, the hosts after the receiver in index order.
    #[serde(default)]
    pub count: Option<u32>,
    pub size: Size,
    #[serde(default)]
    pub start: Time,
    #[serde(default)]
    pub name: Option<String>,
}

pub fn expand(c: &IncastConfig, ctx: &Ctx, flows: &mut Vec<FlowSpec>) -> Result<(), InputError> {
    let (err, topo) = (ctx.err, ctx.topo);
    let size = flow_size(c.size.0, ctx)?;
    let rx = resolve_host(topo, &c.receiver).map_err(|m| err("receiver", m))?;
    let n = topo.hosts.len() as u32;
    let tx: Vec<u32> = match (&c.senders, c.count) {
        (Some(_), Some(_)) => return Err(err("count", "give either senders or count, not both".into())),
        (Some(_), None) => {
            let l = hosts_of(topo, &c.senders, &|k, m| err(&k.replace("hosts", "senders"), m))?;
            if l.contains(&rx) {
                return Err(err("senders", "the receiver cannot be one of the senders".into()));
            }
            l
        }
        (None, Some(count)) => {
            if count == 0 || count >= n {
                return Err(err("count", format!("count must be between 1 and {} (hosts other than the receiver)", n - 1)));
            }
            (1..=count).map(|k| (rx + k) % n).collect()
        }
        (None, None) => (0..n).filter(|&h| h != rx).collect(),
    };
    if tx.is_empty() {
        return Err(err("senders", "an incast needs at least one sender".into()));
    }
    let tag = label(&c.name, "incast", ctx.idx);
    for s in tx {
        flows.push(FlowSpec { src: HostId(s), dst: HostId(rx), size, start: c.start, name: tag.clone(), rate_cap: u64::MAX, channel: 0 });
    }
    Ok(())
}
