//! `kind = "leaf_spine"`: a 2-tier leaf-spine fabric. Every leaf has
//! `hosts_per_leaf` hosts and one link to every spine.
//!
//! Host `h` is on leaf `h / hosts_per_leaf`. The switch list holds the leaves,
//! then the spines. A leaf lists its hosts, then the spines in spine order; a
//! spine lists the leaves in leaf order. Leaves have `dmodk_divisor = 1`, so
//! D-mod-K sends destination `dst` to spine `dst % spines` and the hosts of
//! one leaf are spread over all spines; spines have one path down.
//!
//! The fabric (leaf-spine) rate is `fabric_rate` if given; otherwise it is
//! derived from `oversubscription`, the ratio of a leaf's host capacity to its
//! uplink capacity: `rate * hosts_per_leaf / (spines * oversubscription)`,
//! rounded to a whole bit per second; with neither it equals `rate`.

use super::servers::{self, NicAttach};
use super::{LinkSpec, NodeRef, SwitchSpec, TopologyError, TopologySpec};
use crate::units::{Rate, Time};
use serde::Deserialize;

const MAX_HOSTS: u64 = 1_000_000;
const MAX_SWITCHES: u64 = 1_000_000;
const MAX_LINKS: u64 = 10_000_000;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeafSpineConfig {
    pub leaves: u32,
    pub spines: u32,
    pub hosts_per_leaf: u32,
    /// Rate of host links.
    #[serde(default = "default_rate")]
    pub rate: Rate,
    /// Rate of leaf-spine links; excludes `oversubscription`.
    #[serde(default)]
    pub fabric_rate: Option<Rate>,
    /// Host capacity over uplink capacity of a leaf; excludes `fabric_rate`.
    #[serde(default)]
    pub oversubscription: Option<f64>,
    /// Propagation delay of every link.
    #[serde(default = "default_delay")]
    pub delay: Time,
    /// NICs per server: every `nics` host ports are one server's (`servers`).
    #[serde(default = "servers::default_nics")]
    pub nics: u32,
    /// How a server's NICs attach: all to one leaf, or one per rail leaf.
    #[serde(default)]
    pub nic_attach: NicAttach,
}

fn default_rate() -> Rate {
    Rate::gbps(100)
}
fn default_delay() -> Time {
    Time::us(1)
}

/// The rate of the leaf-spine links, from `fabric_rate`, `oversubscription`
/// or `rate`. Expects `spines` and `hosts_per_leaf` to be at least 1.
pub fn fabric_rate(c: &LeafSpineConfig) -> Result<Rate, TopologyError> {
    match (c.fabric_rate, c.oversubscription) {
        (Some(_), Some(_)) => Err(TopologyError::new(
            "oversubscription",
            "give either fabric_rate or oversubscription, not both: \
             oversubscription only sets the fabric rate when fabric_rate is absent",
        )),
        (Some(r), None) => Ok(r),
        (None, None) => Ok(c.rate),
        (None, Some(os)) => {
            if !(os.is_finite() && os > 0.0) {
                return Err(TopologyError::new(
                    "oversubscription",
                    format!("oversubscription must be a positive number, got {os}"),
                ));
            }
            let num = c.rate.0 as u128 * c.hosts_per_leaf as u128;
            let bps: u128 = if os.fract() == 0.0 && os <= 1e15 {
                // Exact: round num / den to the nearest integer, halves up.
                let den = c.spines as u128 * os as u128;
                (2 * num + den) / (2 * den)
            } else {
                let v = (num as f64 / (c.spines as f64 * os)).round();
                if v >= u64::MAX as f64 {
                    u128::MAX
                } else {
                    v as u128
                }
            };
            if bps == 0 {
                return Err(TopologyError::new(
                    "oversubscription",
                    format!(
                        "oversubscription = {os} makes the fabric rate rate * hosts_per_leaf / \
                         (spines * oversubscription) less than 1 bps"
                    ),
                ));
            }
            u64::try_from(bps).map(Rate).map_err(|_| {
                TopologyError::new(
                    "oversubscription",
                    format!("oversubscription = {os} makes the fabric rate too large to represent"),
                )
            })
        }
    }
}

pub fn build(c: &LeafSpineConfig) -> Result<TopologySpec, TopologyError> {
    for (key, v) in [("leaves", c.leaves), ("spines", c.spines), ("hosts_per_leaf", c.hosts_per_leaf)] {
        if v == 0 {
            return Err(TopologyError::new(key, format!("{key} must be at least 1, got 0")));
        }
    }
    let (leaves, spines, hpl) = (c.leaves as u64, c.spines as u64, c.hosts_per_leaf as u64);
    let n_hosts = leaves * hpl;
    if n_hosts > MAX_HOSTS {
        return Err(TopologyError::new(
            "hosts_per_leaf",
            format!("leaves * hosts_per_leaf = {leaves} * {hpl} = {n_hosts} hosts, more than the limit of {MAX_HOSTS}"),
        ));
    }
    if leaves + spines > MAX_SWITCHES {
        return Err(TopologyError::new(
            "spines",
            format!("leaves + spines = {} switches, more than the limit of {MAX_SWITCHES}", leaves + spines),
        ));
    }
    let n_links = n_hosts + leaves * spines;
    if n_links > MAX_LINKS {
        return Err(TopologyError::new(
            "spines",
            format!("this leaf-spine has {n_links} links, more than the limit of {MAX_LINKS}"),
        ));
    }
    let fabric = fabric_rate(c)?;
    let (nl, ns, hpl) = (c.leaves, c.spines, c.hosts_per_leaf);
    let n_hosts = n_hosts as u32;

    let hosts: Vec<String> = (0..n_hosts).map(|h| format!("h{h}")).collect();
    let mut switches = Vec::with_capacity((nl + ns) as usize);
    switches.extend((0..nl).map(|i| SwitchSpec { name: format!("leaf{i}"), tier: 0, dmodk_divisor: 1 }));
    switches.extend((0..ns).map(|i| SwitchSpec { name: format!("spine{i}"), tier: 1, dmodk_divisor: 1 }));
    let delay = c.delay;
    let mut links = Vec::with_capacity(n_links as usize);
    for h in 0..n_hosts {
        links.push(LinkSpec { a: NodeRef::Host(h), b: NodeRef::Switch(h / hpl), rate: c.rate, delay });
    }
    for l in 0..nl {
        for s in 0..ns {
            links.push(LinkSpec { a: NodeRef::Switch(l), b: NodeRef::Switch(nl + s), rate: fabric, delay });
        }
    }
    let mut spec = TopologySpec { hosts, switches, links, servers: Vec::new() };
    // Rail groups of `nics` leaves: any consecutive leaves will do.
    servers::assign(&mut spec, c.nics, c.nic_attach, hpl, Ok(()))?;
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::super::clos::tests::{dmodk_port_loads, ports_of, up_ports};
    use super::*;

    fn cfg(s: &str) -> LeafSpineConfig {
        toml::from_str(s).unwrap()
    }
    const BASE: &str = "leaves = 4\nspines = 2\nhosts_per_leaf = 8\n";

    #[test]
    fn counts_names_ports() {
        let s = build(&cfg(BASE)).unwrap();
        assert_eq!(s.hosts.len(), 32);
        assert_eq!(s.switches.len(), 6);
        assert_eq!(s.links.len(), 32 + 8);
        let names: Vec<&str> = s.switches.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["leaf0", "leaf1", "leaf2", "leaf3", "spine0", "spine1"]);
        assert_eq!(s.hosts[31], "h31");
        for sw in &s.switches {
            assert_eq!(sw.tier, if sw.name.starts_with("leaf") { 0 } else { 1 });
            assert_eq!(sw.dmodk_divisor, 1);
        }
        let ports = ports_of(&s);
        let mut want: Vec<NodeRef> = (8..16).map(NodeRef::Host).collect();
        want.extend([NodeRef::Switch(4), NodeRef::Switch(5)]);
        assert_eq!(ports[1], want);
        assert_eq!(ports[5], (0..4).map(NodeRef::Switch).collect::<Vec<_>>());
        assert!(s.links.iter().all(|l| l.rate == Rate::gbps(100) && l.delay == Time::us(1)));
        s.check_connected().unwrap();
    }

    #[test]
    fn fabric_rate_sources() {
        let s = build(&cfg(&format!("{BASE}fabric_rate = \"400Gbps\"\nrate = \"25Gbps\""))).unwrap();
        assert!(s.links[..32].iter().all(|l| l.rate == Rate::gbps(25)));
        assert!(s.links[32..].iter().all(|l| l.rate == Rate::gbps(400)));
        // 8 * 100G down, 2 uplinks, 2:1 -> 200G per uplink.
        let c = cfg(&format!("{BASE}oversubscription = 2"));
        assert_eq!(fabric_rate(&c).unwrap(), Rate::gbps(200));
        let c = cfg(&format!("{BASE}oversubscription = 1.6"));
        assert_eq!(fabric_rate(&c).unwrap(), Rate::gbps(250));
        // 100G * 3 / (7 * 1) = 42857142857.14 -> rounded.
        let c = cfg("leaves = 1\nspines = 7\nhosts_per_leaf = 3\noversubscription = 1");
        assert_eq!(fabric_rate(&c).unwrap(), Rate(42_857_142_857));
        // Halves round up: 3 / (1 * 2) = 1.5 -> 2 bps.
        let c = cfg("leaves = 1\nspines = 1\nhosts_per_leaf = 1\nrate = \"3bps\"\noversubscription = 2");
        assert_eq!(fabric_rate(&c).unwrap(), Rate(2));
        // 2 / (3 * 4) rounds to 0 bps: refused.
        let c = cfg("leaves = 1\nspines = 3\nhosts_per_leaf = 1\nrate = \"2bps\"\noversubscription = 4");
        assert_eq!(fabric_rate(&c).unwrap_err().key, "oversubscription");
    }

    #[test]
    fn errors() {
        let e = build(&cfg(&format!("{BASE}fabric_rate = \"400Gbps\"\noversubscription = 2"))).unwrap_err();
        assert_eq!(e.key, "oversubscription");
        assert!(e.msg.contains("fabric_rate") && e.msg.contains("oversubscription"), "{}", e.msg);
        let e = build(&cfg("leaves = 0\nspines = 2\nhosts_per_leaf = 8")).unwrap_err();
        assert_eq!((e.key.as_str(), e.msg.as_str()), ("leaves", "leaves must be at least 1, got 0"));
        assert_eq!(build(&cfg("leaves = 2\nspines = 0\nhosts_per_leaf = 8")).unwrap_err().key, "spines");
        assert_eq!(build(&cfg("leaves = 2\nspines = 2\nhosts_per_leaf = 0")).unwrap_err().key, "hosts_per_leaf");
        assert_eq!(build(&cfg(&format!("{BASE}oversubscription = 0"))).unwrap_err().key, "oversubscription");
        assert_eq!(build(&cfg(&format!("{BASE}oversubscription = -1.5"))).unwrap_err().key, "oversubscription");
        assert_eq!(build(&cfg(&format!("{BASE}oversubscription = nan"))).unwrap_err().key, "oversubscription");
        assert_eq!(build(&cfg(&format!("{BASE}oversubscription = 1e-300"))).unwrap_err().key, "oversubscription");
        assert_eq!(build(&cfg(&format!("{BASE}oversubscription = 1e300"))).unwrap_err().key, "oversubscription");
        let e = build(&cfg("leaves = 4294967295\nspines = 1\nhosts_per_leaf = 4294967295")).unwrap_err();
        assert_eq!(e.key, "hosts_per_leaf");
        assert!(build(&cfg("leaves = 1\nspines = 4294967295\nhosts_per_leaf = 1")).is_err());
        assert!(build(&cfg("leaves = 10000\nspines = 10000\nhosts_per_leaf = 1")).is_err());
        assert!(toml::from_str::<LeafSpineConfig>("leaves = 2\nspines = 2").is_err());
        assert!(toml::from_str::<LeafSpineConfig>(&format!("{BASE}hosts = 3")).is_err());
    }

    #[test]
    fn dmodk_spreads_each_leaf_over_all_spines() {
        let s = build(&cfg(BASE)).unwrap();
        let loads = dmodk_port_loads(&s);
        let mut up = Vec::new();
        for (i, l) in loads.iter().enumerate().take(4) {
            for p in up_ports(&s, i) {
                up.push(l[p]);
            }
        }
        // 8 sources x 24 remote destinations over 2 uplinks.
        assert!(up.iter().all(|&n| n == 8 * 24 / 2), "{up:?}");
        for i in 4..6 {
            assert!(loads[i].iter().all(|&n| n == loads[4][0] && n > 0), "{:?}", loads[i]);
        }
    }

    #[test]
    fn through_topology_config() {
        let t: super::super::TopologyConfig =
            toml::from_str(&format!("kind = \"leaf_spine\"\n{BASE}oversubscription = 4")).unwrap();
        let s = t.build().unwrap();
        assert_eq!(s.links.last().unwrap().rate, Rate::gbps(100));
    }
}
