//! `kind = "fat_tree"`: the 3-tier k-ary fat tree of Al-Fares et al., with
//! optional ToR oversubscription and partial builds.
//!
//! A full tree has `k` pods; each pod has `k/2` ToRs and `k/2` aggregation
//! switches, and there are `(k/2)^2` core switches. Each ToR has
//! `(k/2) * oversubscription` hosts and `k/2` uplinks, one to every agg of its
//! pod. Agg `j` of every pod connects to cores `j*(k/2) .. j*(k/2) + k/2 - 1`.
//! Only the pods that hold hosts are built (all cores always are).
//!
//! Numbering is global within a tier: ToR `t` is in pod `t / (k/2)` at
//! position `t % (k/2)`; agg `g` likewise; host `h` is on ToR
//! `h / hosts_per_tor`. The switch list holds the ToRs, then the aggs, then the
//! cores.
//!
//! Port order: a ToR lists its hosts, then its aggs in agg order; an agg lists
//! its ToRs in ToR order, then its cores in core order; a core lists one agg
//! per pod in pod order. D-mod-K (`deterministic` routing) divisors are those
//! of the tree seen as a `k/2`-ary tree: ToR 1, agg `k/2`, core 1, so a ToR
//! sends destination `dst` to agg `dst % (k/2)` and an agg sends it to core
//! `(dst / (k/2)) % (k/2)` of its group. On a full tree every up-link of a tier
//! and every down-link of a tier then carries the same number of
//! source-destination pairs, and every core-to-pod link carries exactly
//! `oversubscription` destinations.

use super::servers::{self, NicAttach};
use super::{LinkSpec, NodeRef, SwitchSpec, TopologyError, TopologySpec};
use crate::units::{Rate, Time};
use serde::Deserialize;

const MAX_HOSTS: u64 = 1_000_000;
const MAX_SWITCHES: u64 = 1_000_000;
const MAX_LINKS: u64 = 10_000_000;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FatTreeConfig {
    /// Switch radix: an even number >= 2. Chosen from `hosts` when absent.
    #[serde(default)]
    pub k: Option<u32>,
    /// Number of hosts to build; the full tree's capacity when absent.
    #[serde(default)]
    pub hosts: Option<u32>,
    /// Hosts per ToR are `(k/2) * oversubscription`; ToR uplinks stay `k/2`.
    #[serde(default = "default_oversubscription")]
    pub oversubscription: u32,
    /// Rate of every link unless overridden below.
    #[serde(default = "default_rate")]
    pub rate: Rate,
    /// Propagation delay of every link.
    #[serde(default = "default_delay")]
    pub delay: Time,
    /// Rate of ToR-agg links (default: `rate`).
    #[serde(default)]
    pub agg_rate: Option<Rate>,
    /// Rate of agg-core links (default: `rate`).
    #[serde(default)]
    pub core_rate: Option<Rate>,
    /// NICs per server: every `nics` host ports are one server's (`servers`).
    #[serde(default = "servers::default_nics")]
    pub nics: u32,
    /// How a server's NICs attach: all to one ToR, or one per rail ToR of a pod.
    #[serde(default)]
    pub nic_attach: NicAttach,
}

fn default_oversubscription() -> u32 {
    1
}
fn default_rate() -> Rate {
    Rate::gbps(100)
}
fn default_delay() -> Time {
    Time::us(1)
}

/// The resolved shape of a fat tree: what `build` will construct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FatTreeLayout {
    pub k: u32,
    pub hosts: u32,
    pub hosts_per_tor: u32,
    /// Pods built: `ceil(hosts / (hosts_per_tor * k/2))`.
    pub pods: u32,
}

impl FatTreeLayout {
    pub fn tors(&self) -> u32 {
        self.pods * (self.k / 2)
    }
    pub fn aggs(&self) -> u32 {
        self.tors()
    }
    pub fn cores(&self) -> u32 {
        (self.k / 2) * (self.k / 2)
    }
}

/// Hosts a full tree of radix `k` holds: k pods * k/2 ToRs * (k/2)*os hosts.
fn capacity(k: u64, os: u64) -> u128 {
    let half = (k / 2) as u128;
    k as u128 * half * half * os as u128
}

/// Checks the keys and works out k, the host count and the pods to build.
pub fn layout(c: &FatTreeConfig) -> Result<FatTreeLayout, TopologyError> {
    if c.oversubscription == 0 {
        return Err(TopologyError::new(
            "oversubscription",
            "oversubscription must be at least 1 (each ToR gets (k/2) * oversubscription hosts), got 0",
        ));
    }
    let os = c.oversubscription as u64;
    if let Some(h) = c.hosts {
        if h == 0 {
            return Err(TopologyError::new("hosts", "hosts must be at least 1, got 0"));
        }
        if h as u64 > MAX_HOSTS {
            return Err(TopologyError::new(
                "hosts",
                format!("hosts = {h} is more than the limit of {MAX_HOSTS} hosts"),
            ));
        }
    }
    let k: u64 = match (c.k, c.hosts) {
        (None, None) => {
            return Err(TopologyError::new(
                "k",
                "a fat tree needs k (the switch radix), hosts, or both; neither is given",
            ))
        }
        (Some(k), _) => {
            if k < 2 || k % 2 != 0 {
                return Err(TopologyError::new("k", format!("k must be an even number of at least 2, got {k}")));
            }
            k as u64
        }
        (None, Some(h)) => {
            // capacity grows as k^3 and h <= MAX_HOSTS, so this ends within ~160 steps.
            let mut k = 2u64;
            while capacity(k, os) < h as u128 {
                k += 2;
            }
            k
        }
    };
    let half = k / 2;
    if half * half > MAX_SWITCHES {
        return Err(TopologyError::new(
            "k",
            format!(
                "a fat tree with k = {k} has (k/2)^2 = {} core switches, more than the limit of {MAX_SWITCHES} switches",
                half * half
            ),
        ));
    }
    let hosts_per_tor = half * os;
    if hosts_per_tor > MAX_HOSTS {
        return Err(TopologyError::new(
            "oversubscription",
            format!(
                "each ToR would have (k/2) * oversubscription = {half} * {os} = {hosts_per_tor} hosts, \
                 more than the limit of {MAX_HOSTS} hosts"
            ),
        ));
    }
    let cap = capacity(k, os);
    let hosts: u64 = match c.hosts {
        Some(h) => {
            if h as u128 > cap {
                return Err(TopologyError::new(
                    "hosts",
                    format!(
                        "hosts = {h} does not fit a fat tree with k = {k} and oversubscription {os}, \
                         which holds at most {cap} hosts"
                    ),
                ));
            }
            h as u64
        }
        None => {
            if cap > MAX_HOSTS as u128 {
                return Err(TopologyError::new(
                    "k",
                    format!(
                        "a full fat tree with k = {k} and oversubscription {os} has {cap} hosts, \
                         more than the limit of {MAX_HOSTS}; give hosts to build part of it"
                    ),
                ));
            }
            cap as u64
        }
    };
    let pods = hosts.div_ceil(hosts_per_tor * half);
    // half < 2^31 and pods <= MAX_HOSTS, so none of these overflow u64.
    let switches = 2 * pods * half + half * half;
    if switches > MAX_SWITCHES {
        return Err(TopologyError::new(
            "k",
            format!(
                "a fat tree with k = {k} would have {switches} switches ({} cores alone), \
                 more than the limit of {MAX_SWITCHES}",
                half * half
            ),
        ));
    }
    let links = hosts + 2 * pods * half * half;
    if links > MAX_LINKS {
        return Err(TopologyError::new(
            "k",
            format!("a fat tree with k = {k} would have {links} links, more than the limit of {MAX_LINKS}"),
        ));
    }
    Ok(FatTreeLayout { k: k as u32, hosts: hosts as u32, hosts_per_tor: hosts_per_tor as u32, pods: pods as u32 })
}

pub fn build(c: &FatTreeConfig) -> Result<TopologySpec, TopologyError> {
    let l = layout(c)?;
    let half = l.k / 2;
    let (tors, aggs, cores) = (l.tors(), l.aggs(), l.cores());
    let agg_base = tors;
    let core_base = tors + aggs;

    let hosts: Vec<String> = (0..l.hosts).map(|h| format!("h{h}")).collect();
    let mut switches = Vec::with_capacity((tors + aggs + cores) as usize);
    switches.extend((0..tors).map(|t| SwitchSpec { name: format!("tor{t}"), tier: 0, dmodk_divisor: 1 }));
    switches.extend((0..aggs).map(|g| SwitchSpec { name: format!("agg{g}"), tier: 1, dmodk_divisor: half }));
    switches.extend((0..cores).map(|c| SwitchSpec { name: format!("core{c}"), tier: 2, dmodk_divisor: 1 }));

    let host_rate = c.rate;
    let agg_rate = c.agg_rate.unwrap_or(c.rate);
    let core_rate = c.core_rate.unwrap_or(c.rate);
    let delay = c.delay;
    let n_links = l.hosts as usize + 2 * (tors as usize) * half as usize;
    let mut links = Vec::with_capacity(n_links);
    // Host links first (each ToR's host ports come before its uplinks) ...
    for h in 0..l.hosts {
        let tor = h / l.hosts_per_tor;
        links.push(LinkSpec { a: NodeRef::Host(h), b: NodeRef::Switch(tor), rate: host_rate, delay });
    }
    // ... then ToR-agg links, ToR-major, so each ToR lists its aggs in order and
    // each agg lists its ToRs in order ...
    for t in 0..tors {
        let pod = t / half;
        for j in 0..half {
            let agg = agg_base + pod * half + j;
            links.push(LinkSpec { a: NodeRef::Switch(t), b: NodeRef::Switch(agg), rate: agg_rate, delay });
        }
    }
    // ... then agg-core links, agg-major: agg j of every pod reaches cores
    // j*half .. j*half+half-1 in order, and each core lists the pods in order.
    for g in 0..aggs {
        let j = g % half;
        for i in 0..half {
            let core = core_base + j * half + i;
            links.push(LinkSpec { a: NodeRef::Switch(agg_base + g), b: NodeRef::Switch(core), rate: core_rate, delay });
        }
    }
    debug_assert_eq!(links.len(), n_links);
    let mut spec = TopologySpec { hosts, switches, links, servers: Vec::new() };
    // A rail group is `nics` ToRs of one pod (they share its aggs).
    let groups = if c.nics == 0 || half % c.nics == 0 {
        Ok(())
    } else {
        Err(format!("with nic_attach = \"rail\" a server's {} NICs go to {} ToRs of one pod, so nics must divide the k/2 = {half} ToRs of a pod", c.nics, c.nics))
    };
    servers::assign(&mut spec, c.nics, c.nic_attach, l.hosts_per_tor, groups)?;
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::super::clos::tests::{dmodk_port_loads, ports_of, up_ports};
    use super::*;

    fn cfg(extra: &str) -> FatTreeConfig {
        toml::from_str(extra).unwrap()
    }

    fn count_tier(s: &TopologySpec, tier: u8) -> usize {
        s.switches.iter().filter(|x| x.tier == tier).count()
    }

    #[test]
    fn k8_counts() {
        let s = build(&cfg("k = 8")).unwrap();
        assert_eq!(s.hosts.len(), 128);
        assert_eq!(s.switches.len(), 80);
        assert_eq!((count_tier(&s, 0), count_tier(&s, 1), count_tier(&s, 2)), (32, 32, 16));
        assert_eq!(s.links.len(), 128 + 128 + 128);
        s.check_connected().unwrap();
    }

    #[test]
    fn k16_counts() {
        let s = build(&cfg("k = 16")).unwrap();
        assert_eq!(s.hosts.len(), 1024);
        assert_eq!(s.switches.len(), 320);
        assert_eq!(s.links.len(), 3072);
        let host_links = s.links.iter().filter(|l| matches!(l.a, NodeRef::Host(_))).count();
        assert_eq!(host_links, 1024);
        let tor_agg = s
            .links
            .iter()
            .filter(
                |l| matches!((l.a, l.b), (NodeRef::Switch(a), NodeRef::Switch(_)) if s.switches[a as usize].tier == 0),
            )
            .count();
        assert_eq!(tor_agg, 1024);
        s.check_connected().unwrap();
    }

    #[test]
    fn k32_counts() {
        let s = build(&cfg("k = 32")).unwrap();
        assert_eq!(s.hosts.len(), 8192);
        assert_eq!(s.switches.len(), 1280);
        assert_eq!(s.links.len(), 8192 * 3);
        s.check_connected().unwrap();
    }

    #[test]
    fn oversubscribed_partial_tree() {
        let c = cfg("k = 4\nhosts = 16\noversubscription = 2");
        let l = layout(&c).unwrap();
        assert_eq!(l, FatTreeLayout { k: 4, hosts: 16, hosts_per_tor: 4, pods: 2 });
        let s = build(&c).unwrap();
        assert_eq!(count_tier(&s, 0), 4);
        assert_eq!(count_tier(&s, 1), 4);
        assert_eq!(count_tier(&s, 2), 4);
        let ports = ports_of(&s);
        // tor0: 4 hosts then 2 aggs; core0: one agg per built pod.
        assert_eq!(
            ports[0],
            vec![
                NodeRef::Host(0),
                NodeRef::Host(1),
                NodeRef::Host(2),
                NodeRef::Host(3),
                NodeRef::Switch(4),
                NodeRef::Switch(5)
            ]
        );
        assert_eq!(ports[8], vec![NodeRef::Switch(4), NodeRef::Switch(6)]);
        s.check_connected().unwrap();
    }

    #[test]
    fn k_chosen_from_hosts() {
        // k=2 holds 2, k=4 holds 16, k=6 holds 54.
        assert_eq!(layout(&cfg("hosts = 2")).unwrap().k, 2);
        assert_eq!(layout(&cfg("hosts = 3")).unwrap().k, 4);
        assert_eq!(layout(&cfg("hosts = 16")).unwrap().k, 4);
        let l = layout(&cfg("hosts = 17")).unwrap();
        assert_eq!((l.k, l.hosts_per_tor, l.pods), (6, 3, 2));
        let s = build(&cfg("hosts = 17")).unwrap();
        assert_eq!(s.hosts.len(), 17);
        // 2 pods of 3 ToRs + 3 aggs, plus 9 cores.
        assert_eq!(s.switches.len(), 6 + 6 + 9);
        s.check_connected().unwrap();
        // k=2: one ToR per pod, one agg per pod, one core.
        let s = build(&cfg("k = 2")).unwrap();
        assert_eq!((s.hosts.len(), s.switches.len(), s.links.len()), (2, 5, 6));
        s.check_connected().unwrap();
    }

    #[test]
    fn names_tiers_and_divisors() {
        let s = build(&cfg("k = 4")).unwrap();
        assert_eq!(s.hosts[0], "h0");
        assert_eq!(s.hosts[15], "h15");
        let names: Vec<&str> = s.switches.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(&names[..9], &["tor0", "tor1", "tor2", "tor3", "tor4", "tor5", "tor6", "tor7", "agg0"]);
        assert_eq!(names[16], "core0");
        assert_eq!(names[19], "core3");
        for sw in &s.switches {
            let (tier, div) = match &sw.name[..3] {
                "tor" => (0, 1),
                "agg" => (1, 2),
                _ => (2, 1),
            };
            assert_eq!((sw.tier, sw.dmodk_divisor), (tier, div), "{}", sw.name);
        }
    }

    #[test]
    fn port_order() {
        let s = build(&cfg("k = 4")).unwrap();
        let ports = ports_of(&s);
        // tor3 is position 1 in pod 1: hosts 6, 7, then agg2, agg3 (switches 10, 11).
        assert_eq!(ports[3], vec![NodeRef::Host(6), NodeRef::Host(7), NodeRef::Switch(10), NodeRef::Switch(11)]);
        // agg3 (pod 1, j = 1): tor2, tor3, then core2, core3 (switches 18, 19).
        assert_eq!(ports[11], vec![NodeRef::Switch(2), NodeRef::Switch(3), NodeRef::Switch(18), NodeRef::Switch(19)]);
        // core1 (group 0): agg0 of every pod, pod order.
        assert_eq!(ports[17], vec![NodeRef::Switch(8), NodeRef::Switch(10), NodeRef::Switch(12), NodeRef::Switch(14)]);
        // every host has exactly one link.
        let mut per_host = vec![0; s.hosts.len()];
        for l in &s.links {
            for e in [l.a, l.b] {
                if let NodeRef::Host(h) = e {
                    per_host[h as usize] += 1;
                }
            }
        }
        assert!(per_host.iter().all(|&n| n == 1));
    }

    #[test]
    fn rates_and_delay() {
        let s =
            build(&cfg("k = 4\nrate = \"25Gbps\"\nagg_rate = \"50Gbps\"\ncore_rate = \"200Gbps\"\ndelay = \"2us\""))
                .unwrap();
        for l in &s.links {
            let want = match (l.a, l.b) {
                (NodeRef::Host(_), _) => Rate::gbps(25),
                (NodeRef::Switch(a), _) if s.switches[a as usize].tier == 0 => Rate::gbps(50),
                _ => Rate::gbps(200),
            };
            assert_eq!(l.rate, want);
            assert_eq!(l.delay, Time::us(2));
        }
        let s = build(&cfg("k = 4")).unwrap();
        assert!(s.links.iter().all(|l| l.rate == Rate::gbps(100) && l.delay == Time::us(1)));
    }

    /// On a full tree, D-mod-K loads every up-link of a tier equally and every
    /// down-link of a tier equally.
    #[test]
    fn dmodk_is_balanced_on_full_trees() {
        for keys in ["k = 4", "k = 4\noversubscription = 2", "k = 6", "k = 8"] {
            let s = build(&cfg(keys)).unwrap();
            let loads = dmodk_port_loads(&s);
            for tier in 0..=2u8 {
                let mut up = Vec::new();
                let mut down = Vec::new();
                for (i, sw) in s.switches.iter().enumerate() {
                    if sw.tier != tier {
                        continue;
                    }
                    let ups = up_ports(&s, i);
                    for (p, &n) in loads[i].iter().enumerate() {
                        if ups.contains(&p) {
                            up.push(n)
                        } else {
                            down.push(n)
                        }
                    }
                }
                assert!(up.iter().all(|&n| n == up[0]), "{keys}: tier {tier} up-links {up:?}");
                assert!(down.iter().all(|&n| n == down[0] && n > 0), "{keys}: tier {tier} down-links {down:?}");
            }
        }
    }

    #[test]
    fn errors() {
        let e = build(&cfg("k = 5")).unwrap_err();
        assert_eq!(e.key, "k");
        assert_eq!(e.msg, "k must be an even number of at least 2, got 5");
        assert_eq!(build(&cfg("k = 0")).unwrap_err().key, "k");
        let e = build(&cfg("hosts = 0")).unwrap_err();
        assert_eq!((e.key.as_str(), e.msg.as_str()), ("hosts", "hosts must be at least 1, got 0"));
        assert_eq!(build(&cfg("rate = \"1Gbps\"")).unwrap_err().key, "k");
        let e = build(&cfg("k = 4\nhosts = 17")).unwrap_err();
        assert_eq!(e.key, "hosts");
        assert!(e.msg.contains("at most 16 hosts"), "{}", e.msg);
        assert_eq!(build(&cfg("k = 4\noversubscription = 0")).unwrap_err().key, "oversubscription");
        assert_eq!(build(&cfg("hosts = 1000001")).unwrap_err().key, "hosts");
        // absurd sizes are refused, not allocated or overflowed.
        assert_eq!(build(&cfg("k = 200")).unwrap_err().key, "k");
        assert_eq!(build(&cfg("k = 4294967294\nhosts = 1")).unwrap_err().key, "k");
        assert_eq!(build(&cfg("k = 4\noversubscription = 4294967295")).unwrap_err().key, "oversubscription");
        assert!(build(&cfg("hosts = 1\noversubscription = 4294967295")).is_err());
        assert!(toml::from_str::<FatTreeConfig>("k = 4\nradix = 4").is_err());
        assert!(toml::from_str::<FatTreeConfig>("k = -4").is_err());
    }

    #[test]
    fn through_topology_config() {
        let t: super::super::TopologyConfig = toml::from_str("kind = \"fat_tree\"\nk = 4").unwrap();
        assert_eq!(t.kind(), "fat_tree");
        assert_eq!(t.build().unwrap().hosts.len(), 16);
    }
}
