//! Link failures and degradations (`[[topology.failure]]`): a link goes down,
//! or runs at a fraction of its rate, from a given time (and comes back at
//! another). Both directions of the link change together.
//!
//! What happens, in order (docs/lb.md, "Failures"):
//! - at `at`, a degraded link's ports send at `rate_factor` x their rate; a
//!   link that goes down drops what its ports hold queued, and every packet a
//!   switch later routes into it is dropped (counted);
//! - switches see their own dead ports at once: `adaptive` and `spray` steer
//!   away from them, the oblivious policies (`ecmp`, `deterministic`,
//!   `round_robin`) keep choosing them;
//! - `reconvergence` later the routing table is recomputed without the dead
//!   links (as a routing protocol would), for every policy;
//! - at `until` the link is back; it joins the routes `reconvergence` later.

use super::routing::SwitchGraph;
use super::Network;
use crate::id::{PortId, SwitchId};
use crate::monitor::Observers;
use crate::net::topology::TopologySpec;
use crate::sim::{Ctx, Event};
use crate::units::Time;

/// One `[[topology.failure]]` entry, as written.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FailureEntry {
    /// The link's two ends, by node name (either order).
    pub from: String,
    pub to: String,
    /// When the link fails.
    pub at: Time,
    /// When it is back; never if absent.
    #[serde(default)]
    pub until: Option<Time>,
    /// The fraction of its rate the link keeps: 0 (the default) takes it down.
    #[serde(default)]
    pub rate_factor: f64,
    /// How long after a change of a link's state the routes reflect it.
    #[serde(default = "default_reconvergence")]
    pub reconvergence: Time,
}

fn default_reconvergence() -> Time {
    Time::us(100)
}

/// A failure resolved against the topology.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkFailure {
    /// Index into `TopologySpec::links`.
    pub link: u32,
    pub at: u64,
    pub until: Option<u64>,
    pub rate_factor: f64,
    pub reconvergence: u64,
}

/// Resolves `[[topology.failure]]` entries: known nodes joined by a link,
/// times in order, a factor in [0, 1), only switch-to-switch links taken
/// down, no two failures of one link overlapping. Errors name the key
/// relative to `topology.failure[i]`.
pub fn resolve(entries: &[FailureEntry], topo: &TopologySpec) -> Result<Vec<LinkFailure>, (String, String)> {
    use crate::net::topology::NodeRef;
    let node = |name: &str| -> Option<NodeRef> {
        if let Some(h) = topo.hosts.iter().position(|x| x == name) {
            return Some(NodeRef::Host(h as u32));
        }
        topo.switches.iter().position(|s| s.name == name).map(|s| NodeRef::Switch(s as u32))
    };
    let mut out: Vec<LinkFailure> = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let key = |k: &str| format!("failure[{i}].{k}");
        let a = node(&e.from).ok_or_else(|| (key("from"), format!("unknown node \"{}\"", e.from)))?;
        let b = node(&e.to).ok_or_else(|| (key("to"), format!("unknown node \"{}\"", e.to)))?;
        let link = topo
            .links
            .iter()
            .position(|l| (l.a == a && l.b == b) || (l.a == b && l.b == a))
            .ok_or_else(|| (key("to"), format!("no link joins \"{}\" and \"{}\"", e.from, e.to)))?;
        if !(0.0..1.0).contains(&e.rate_factor) {
            return Err((key("rate_factor"), format!("rate_factor must be at least 0 and below 1, got {}", e.rate_factor)));
        }
        let to_host = matches!(a, NodeRef::Host(_)) || matches!(b, NodeRef::Host(_));
        if e.rate_factor == 0.0 && to_host {
            return Err((key("rate_factor"), "a host's link can be degraded (rate_factor above 0), not taken down: the host has no other way out".into()));
        }
        if let Some(u) = e.until {
            if u.0 <= e.at.0 {
                return Err((key("until"), format!("until ({u}) must be after at ({})", e.at)));
            }
        }
        let f = LinkFailure { link: link as u32, at: e.at.0, until: e.until.map(|u| u.0), rate_factor: e.rate_factor, reconvergence: e.reconvergence.0 };
        if let Some(j) = out.iter().position(|o| o.link == f.link && o.at < f.until.unwrap_or(u64::MAX) && f.at < o.until.unwrap_or(u64::MAX)) {
            return Err((key("at"), format!("this failure of the link overlaps failure[{j}] of the same link")));
        }
        out.push(f);
    }
    Ok(out)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// The link fails (down or degraded).
    Fail,
    /// The link is back at its full rate.
    Restore,
    /// The routes are recomputed from the links up now.
    Reroute,
}

#[derive(Clone, Copy, Debug)]
struct Change {
    at: u64,
    failure: u32,
    step: Step,
}

/// The run's failure schedule and the state of the failed ports.
#[derive(Debug, Default)]
pub struct Failures {
    failures: Vec<LinkFailure>,
    /// Per failure: the link's two ports and their full rates.
    ports: Vec<[(PortId, u64); 2]>,
    changes: Vec<Change>,
    /// Per port: the link is down. Empty when no failure takes a link down,
    /// so the check on the forwarding path is one length test.
    pub(crate) down: Vec<bool>,
    /// Packets dropped because they were queued at, or routed into, a down link.
    pub(crate) dropped: u64,
    /// The same, per port (empty with `down`).
    dropped_at: Vec<u64>,
    /// In a partition of a parallel run, which ports are its own (a bit
    /// each): every partition makes every change, to its copy of the routes
    /// and rates, but only a port's own partition drops what it holds.
    /// Empty: every port.
    own_ports: Vec<u64>,
}

impl Failures {
    #[inline]
    pub fn is_down(&self, port: PortId) -> bool {
        !self.down.is_empty() && self.down[port.ix()]
    }

    /// Packets lost to down links so far.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Packets lost to the down link of `port` so far.
    pub fn dropped_at(&self, port: PortId) -> u64 {
        self.dropped_at.get(port.ix()).copied().unwrap_or(0)
    }

    /// The distinct times of the changes, in order: where a parallel run
    /// lets every partition catch up before going on.
    pub(crate) fn change_times(&self) -> Vec<u64> {
        let mut t: Vec<u64> = self.changes.iter().map(|c| c.at).collect();
        t.sort_unstable();
        t.dedup();
        t
    }

    /// This world is a partition that owns the ports of `own_ports` (a bit
    /// each) only.
    pub(crate) fn own_only(&mut self, own_ports: &[u64]) {
        self.own_ports = own_ports.to_vec();
    }

    fn owns(&self, port: PortId) -> bool {
        self.own_ports.is_empty() || crate::bits::bit(&self.own_ports, port.0)
    }

    /// Takes the counts of the ports `owned` says from `other`, the same
    /// run's failures in another partition, and adds its drops.
    pub(crate) fn take_part(&mut self, other: &Failures, owned: impl Fn(usize) -> bool) {
        self.dropped += other.dropped;
        for (p, d) in self.dropped_at.iter_mut().enumerate().filter(|&(p, _)| owned(p)) {
            *d = other.dropped_at[p];
        }
    }
}

impl Network {
    /// Installs the failure schedule and queues one `LinkChange` event per
    /// change. `link_ports[l]` are the two ports of topology link `l`.
    pub(crate) fn schedule_failures(&mut self, failures: &[LinkFailure], ctx: &mut Ctx) {
        if failures.is_empty() {
            return;
        }
        let mut f = Failures { failures: failures.to_vec(), ..Default::default() };
        for lf in failures {
            let [a, b] = self.link_ports[lf.link as usize];
            f.ports.push([(a, self.ports[a].rate_bps), (b, self.ports[b].rate_bps)]);
        }
        for (i, lf) in failures.iter().enumerate() {
            let i = i as u32;
            let down = lf.rate_factor == 0.0;
            f.changes.push(Change { at: lf.at, failure: i, step: Step::Fail });
            if down {
                f.changes.push(Change { at: lf.at.saturating_add(lf.reconvergence), failure: i, step: Step::Reroute });
            }
            if let Some(u) = lf.until {
                f.changes.push(Change { at: u, failure: i, step: Step::Restore });
                if down {
                    f.changes.push(Change { at: u.saturating_add(lf.reconvergence), failure: i, step: Step::Reroute });
                }
            }
        }
        if failures.iter().any(|lf| lf.rate_factor == 0.0) {
            f.down = vec![false; self.ports.len()];
            f.dropped_at = vec![0; self.ports.len()];
        }
        for (i, c) in f.changes.iter().enumerate() {
            ctx.push(c.at, Event::LinkChange { change: i as u32 });
        }
        self.failures = f;
    }

    /// The `LinkChange` event `change` is due.
    pub(crate) fn link_change(&mut self, ctx: &mut Ctx, obs: &mut Observers, change: u32) {
        let c = self.failures.changes[change as usize];
        let lf = self.failures.failures[c.failure as usize];
        let ends = self.failures.ports[c.failure as usize];
        match c.step {
            Step::Fail if lf.rate_factor == 0.0 => {
                for (p, _) in ends {
                    self.failures.down[p.ix()] = true;
                    if self.failures.owns(p) {
                        self.flush(ctx, obs, p);
                    }
                }
            }
            Step::Fail => {
                for (p, rate) in ends {
                    self.ports[p].rate_bps = ((rate as f64 * lf.rate_factor).round() as u64).max(1);
                }
            }
            Step::Restore => {
                for (p, rate) in ends {
                    self.ports[p].rate_bps = rate;
                    if !self.failures.down.is_empty() {
                        self.failures.down[p.ix()] = false;
                    }
                }
            }
            Step::Reroute => self.reroute(),
        }
    }

    /// Drops every data packet queued at `port` (its link went down).
    fn flush(&mut self, ctx: &mut Ctx, obs: &mut Observers, port: PortId) {
        let Some(sw) = self.switch_of(self.ports[port].node) else { return };
        while let Some(pkt) = self.rings.pop_front(&mut self.ports[port].q) {
            self.release(ctx, obs, sw, port, pkt);
            self.drop_into_down_link(ctx, obs, port, pkt);
        }
        obs.on_queue(ctx.now, port, self.ports[port].data_bytes);
    }

    /// A packet lost to the down link of `port`.
    pub(crate) fn drop_into_down_link(&mut self, ctx: &mut Ctx, obs: &mut Observers, port: PortId, pkt: crate::id::PktId) {
        obs.on_drop(ctx.now, port);
        self.failures.dropped += 1;
        self.failures.dropped_at[port.ix()] += 1;
        ctx.drop_packet(pkt);
    }

    /// Recomputes the routes over the links up now. A switch left with no
    /// path to an edge keeps its old next hops (and drops into them).
    fn reroute(&mut self) {
        let graph = self.switch_graph(|p| self.failures.is_down(p));
        self.routes.rebuild(&SwitchGraph { switch_ports: &graph });
    }

    /// Every switch's ports as (port, peer switch or None for a host), in
    /// port order, leaving out the ports `skip` says.
    pub(crate) fn switch_graph(&self, skip: impl Fn(PortId) -> bool) -> Vec<Vec<(PortId, Option<u32>)>> {
        self.switches
            .iter()
            .map(|s| {
                s.ports()
                    .filter(|&p| !skip(p))
                    .map(|p| (p, self.switch_of(self.ports[self.ports[p].peer].node).map(|SwitchId(x)| x)))
                    .collect()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::topology::{LinkSpec, NodeRef, SwitchSpec};
    use crate::units::Rate;

    fn topo() -> TopologySpec {
        let sw = |n: &str| SwitchSpec { name: n.into(), tier: 0, dmodk_divisor: 1 };
        let link = |a, b| LinkSpec { a, b, rate: Rate(100_000_000_000), delay: Time(1000) };
        TopologySpec {
            hosts: vec!["h0".into(), "h1".into()],
            switches: vec![sw("s0"), sw("s1")],
            links: vec![
                link(NodeRef::Host(0), NodeRef::Switch(0)),
                link(NodeRef::Switch(0), NodeRef::Switch(1)),
                link(NodeRef::Switch(1), NodeRef::Host(1)),
            ],
            servers: Vec::new(),
        }
    }

    fn entry(from: &str, to: &str, at: u64, until: Option<u64>, rate_factor: f64) -> FailureEntry {
        FailureEntry { from: from.into(), to: to.into(), at: Time(at), until: until.map(Time), rate_factor, reconvergence: Time(5) }
    }

    #[test]
    fn resolves_links_in_either_order_and_refuses_bad_entries() {
        let t = topo();
        let ok = resolve(&[entry("s1", "s0", 10, Some(20), 0.0), entry("s0", "s1", 20, None, 0.5)], &t).unwrap();
        assert_eq!(ok.iter().map(|f| f.link).collect::<Vec<_>>(), [1, 1]);
        let key = |e: FailureEntry| resolve(&[e], &t).unwrap_err().0;
        assert_eq!(key(entry("s0", "x", 0, None, 0.0)), "failure[0].to");
        assert_eq!(key(entry("h0", "s1", 0, None, 0.0)), "failure[0].to");
        assert_eq!(key(entry("h0", "s0", 0, None, 0.0)), "failure[0].rate_factor");
        assert_eq!(key(entry("s0", "s1", 0, None, 1.0)), "failure[0].rate_factor");
        assert_eq!(key(entry("s0", "s1", 10, Some(10), 0.0)), "failure[0].until");
        assert!(resolve(&[entry("h0", "s0", 0, None, 0.25)], &t).is_ok(), "a host link may be degraded");
        let overlap = resolve(&[entry("s0", "s1", 10, Some(30), 0.0), entry("s1", "s0", 20, None, 0.5)], &t);
        assert_eq!(overlap.unwrap_err().0, "failure[1].at");
    }
}
