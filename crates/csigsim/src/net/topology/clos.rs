//! `kind = "clos"`: a k-ary n-tree (Petrini & Vanneschi). The default 4-ary
//! 3-tree is the 64-host, 48-switch, 3-stage CLOS of the DCQCN-Rev paper.
//!
//! There are `k^n` hosts and `n` stages of `k^(n-1)` switches. Switch `<s, w>`
//! sits at stage `s` (0 = leaf, where hosts attach) with index `w`, read as an
//! `(n-1)`-digit base-`k` number whose least significant digit is digit 0.
//! Host `h` attaches to leaf `h / k`. Switch `<s, w>` connects to `<s+1, w'>`
//! when `w` and `w'` agree in every digit except digit `s`; the up-port of
//! `<s, w>` that leads to `<s+1, w'>` has index `w'[s]`, and the down-port of
//! `<s+1, w'>` that leads to `<s, w>` has index `w[s]`.
//!
//! Every switch lists its down-ports first (hosts `k*w .. k*w+k-1` at a leaf,
//! otherwise the stage below in order of the differing digit), then its
//! up-ports in order of `w'[s]`. Leaves and middle stages use `2k` ports; the
//! top stage uses `k`. With `dmodk_divisor = k^s`, D-mod-K picks up-port
//! `(dst / k^s) % k`, which is also the down-port a destination leaves by at
//! stage `s`.
//!
//! Names: stage 0 `tor{w}`, stage `n-1` `spine{w}`, the middle stage of a
//! 3-tree `agg{w}`, and for `n > 3` middle stage `s` is `agg{s}_{w}`. A 1-tree
//! is a single `tor0`. The switch list is stage-major: switch `s*k^(n-1) + w`.

use super::{LinkSpec, NodeRef, SwitchSpec, TopologyError, TopologySpec};
use crate::units::{Rate, Time};
use serde::Deserialize;

const MAX_HOSTS: u64 = 1_000_000;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClosConfig {
    /// Arity: hosts per leaf, and up-ports per non-top switch.
    #[serde(default = "default_k")]
    pub k: u32,
    /// Number of switch stages `n`.
    #[serde(default = "default_stages")]
    pub stages: u32,
    /// Rate of every link.
    #[serde(default = "default_rate")]
    pub rate: Rate,
    /// Propagation delay of every link.
    #[serde(default = "default_delay")]
    pub delay: Time,
}

fn default_k() -> u32 {
    4
}
fn default_stages() -> u32 {
    3
}
fn default_rate() -> Rate {
    Rate::gbps(100)
}
fn default_delay() -> Time {
    Time::ns(25)
}

impl Default for ClosConfig {
    fn default() -> Self {
        ClosConfig { k: default_k(), stages: default_stages(), rate: default_rate(), delay: default_delay() }
    }
}

/// The name of switch `index` of `stage` in a tree of `stages` stages.
pub fn switch_name(stage: u32, stages: u32, index: u32) -> String {
    if stage == 0 {
        format!("tor{index}")
    } else if stage + 1 == stages {
        format!("spine{index}")
    } else if stages == 3 {
        format!("agg{index}")
    } else {
        format!("agg{stage}_{index}")
    }
}

pub fn build(c: &ClosConfig) -> Result<TopologySpec, TopologyError> {
    let (k, n) = (c.k, c.stages);
    if k < 2 {
        return Err(TopologyError::new("k", format!("k must be at least 2, got {k}")));
    }
    if n == 0 {
        return Err(TopologyError::new("stages", "stages must be at least 1, got 0"));
    }
    // k^n <= MAX_HOSTS also bounds n <= 19 (tiers fit u8) and every k^s below.
    let hosts = (k as u64).checked_pow(n).filter(|&h| h <= MAX_HOSTS).ok_or_else(|| {
        TopologyError::new(
            if n > 1 && k as u64 <= MAX_HOSTS { "stages" } else { "k" },
            format!("a {k}-ary {n}-tree has k^stages hosts, more than the limit of {MAX_HOSTS}"),
        )
    })? as u32;
    let per_stage = hosts / k; // k^(n-1)
    let pow = |s: u32| k.pow(s); // s < n, so no overflow

    let host_names: Vec<String> = (0..hosts).map(|h| format!("h{h}")).collect();
    let mut switches = Vec::with_capacity((n * per_stage) as usize);
    for s in 0..n {
        switches.extend((0..per_stage).map(|w| SwitchSpec {
            name: switch_name(s, n, w),
            tier: s as u8,
            dmodk_divisor: pow(s),
        }));
    }
    let (rate, delay) = (c.rate, c.delay);
    let mut links = Vec::with_capacity((hosts as usize) * n as usize);
    for h in 0..hosts {
        links.push(LinkSpec { a: NodeRef::Host(h), b: NodeRef::Switch(h / k), rate, delay });
    }
    // Stage by stage, lower switch in order, up-port u in order: each lower
    // switch gets its up-ports in order of u = w'[s], and each upper switch
    // sees its children in increasing w, i.e. in order of w[s].
    for s in 0..n.saturating_sub(1) {
        let place = pow(s);
        for w in 0..per_stage {
            let base = w - (w / place % k) * place;
            for u in 0..k {
                let up = base + u * place;
                links.push(LinkSpec {
                    a: NodeRef::Switch(s * per_stage + w),
                    b: NodeRef::Switch((s + 1) * per_stage + up),
                    rate,
                    delay,
                });
            }
        }
    }
    Ok(TopologySpec { hosts: host_names, switches, links, servers: Vec::new() })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Each switch's neighbours in port order (the order of `spec.links`).
    pub(crate) fn ports_of(spec: &TopologySpec) -> Vec<Vec<NodeRef>> {
        let mut ports = vec![Vec::new(); spec.switches.len()];
        for l in &spec.links {
            for (x, y) in [(l.a, l.b), (l.b, l.a)] {
                if let NodeRef::Switch(s) = x {
                    ports[s as usize].push(y);
                }
            }
        }
        ports
    }

    /// Port indices of switch `s` that lead to a switch of a higher tier.
    pub(crate) fn up_ports(spec: &TopologySpec, s: usize) -> Vec<usize> {
        let tier = spec.switches[s].tier;
        ports_of_one(spec, s)
            .iter()
            .enumerate()
            .filter(|(_, n)| matches!(n, NodeRef::Switch(o) if spec.switches[*o as usize].tier > tier))
            .map(|(p, _)| p)
            .collect()
    }

    fn ports_of_one(spec: &TopologySpec, s: usize) -> Vec<NodeRef> {
        let me = NodeRef::Switch(s as u32);
        let mut v = Vec::new();
        for l in &spec.links {
            if l.a == me {
                v.push(l.b)
            } else if l.b == me {
                v.push(l.a)
            }
        }
        v
    }

    /// Routes every ordered host pair of a tiered tree with D-mod-K (down
    /// when the destination is below, else up-port `(dst / divisor) % ups`)
    /// and returns how many routes leave each switch port, in port order.
    /// Checks on the way that every host has one link, that up-ports follow
    /// the down-ports, and that every route ends at its destination.
    pub(crate) fn dmodk_port_loads(spec: &TopologySpec) -> Vec<Vec<u64>> {
        let nh = spec.hosts.len();
        let ns = spec.switches.len();
        let ports = ports_of(spec);
        let mut host_sw = vec![None; nh];
        for l in &spec.links {
            for (x, y) in [(l.a, l.b), (l.b, l.a)] {
                if let NodeRef::Host(h) = x {
                    assert!(host_sw[h as usize].is_none(), "host {h} has two links");
                    host_sw[h as usize] = Some(y);
                }
            }
        }
        let ups: Vec<Vec<usize>> = (0..ns).map(|s| up_ports(spec, s)).collect();
        for s in 0..ns {
            if let Some(&first_up) = ups[s].first() {
                assert_eq!(ups[s], (first_up..ports[s].len()).collect::<Vec<_>>(), "{}", spec.switches[s].name);
            }
        }
        // down[s][d]: the port of switch s towards host d, if d is below s.
        let mut down: Vec<Vec<Option<usize>>> = vec![vec![None; nh]; ns];
        let max_tier = spec.switches.iter().map(|s| s.tier).max().unwrap_or(0);
        for t in 0..=max_tier {
            for s in (0..ns).filter(|&s| spec.switches[s].tier == t) {
                for (p, &nb) in ports[s].iter().enumerate() {
                    match nb {
                        NodeRef::Host(h) => down[s][h as usize] = Some(p),
                        NodeRef::Switch(c) if spec.switches[c as usize].tier < t => {
                            let below: Vec<usize> = (0..nh).filter(|&d| down[c as usize][d].is_some()).collect();
                            for d in below {
                                down[s][d] = Some(p);
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        let mut load: Vec<Vec<u64>> = ports.iter().map(|p| vec![0; p.len()]).collect();
        for (src, &src_sw) in host_sw.iter().enumerate() {
            for dst in 0..nh {
                if src == dst {
                    continue;
                }
                let mut at = src_sw.expect("host without link");
                for hop in 0.. {
                    assert!(hop <= 2 * max_tier as usize + 2, "route {src}->{dst} loops");
                    let NodeRef::Switch(s) = at else { panic!("host {src} attached to a host") };
                    let s = s as usize;
                    let p = match down[s][dst] {
                        Some(p) => p,
                        None => {
                            let u = &ups[s];
                            assert!(!u.is_empty(), "{} cannot reach h{dst}", spec.switches[s].name);
                            u[(dst / spec.switches[s].dmodk_divisor as usize) % u.len()]
                        }
                    };
                    load[s][p] += 1;
                    match ports[s][p] {
                        NodeRef::Host(h) => {
                            assert_eq!(h as usize, dst);
                            break;
                        }
                        nb => at = nb,
                    }
                }
            }
        }
        load
    }

    #[test]
    fn default_is_the_64_host_clos() {
        let c: ClosConfig = toml::from_str("").unwrap();
        assert_eq!((c.k, c.stages, c.rate, c.delay), (4, 3, Rate::gbps(100), Time::ns(25)));
        let s = build(&c).unwrap();
        assert_eq!(s.hosts.len(), 64);
        assert_eq!(s.switches.len(), 48);
        assert_eq!(s.links.len(), 64 + 2 * 16 * 4);
        let ports = ports_of(&s);
        for (i, sw) in s.switches.iter().enumerate() {
            let want = if sw.tier == 2 { 4 } else { 8 };
            assert_eq!(ports[i].len(), want, "{}", sw.name);
        }
        s.check_connected().unwrap();
        let mut per_host = vec![0; 64];
        for l in &s.links {
            if let NodeRef::Host(h) = l.a {
                per_host[h as usize] += 1;
            }
            assert!(!matches!(l.b, NodeRef::Host(_)));
        }
        assert!(per_host.iter().all(|&n| n == 1));
    }

    #[test]
    fn names_tiers_divisors() {
        let s = build(&ClosConfig::default()).unwrap();
        let names: Vec<&str> = s.switches.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names[0], "tor0");
        assert_eq!(names[15], "tor15");
        assert_eq!(names[16], "agg0");
        assert_eq!(names[31], "agg15");
        assert_eq!(names[32], "spine0");
        assert_eq!(names[47], "spine15");
        for (i, sw) in s.switches.iter().enumerate() {
            let stage = i / 16;
            assert_eq!(sw.tier as usize, stage);
            assert_eq!(sw.dmodk_divisor, 4u32.pow(stage as u32));
        }
        assert_eq!(s.hosts[63], "h63");
        let s = build(&ClosConfig { k: 2, stages: 5, ..ClosConfig::default() }).unwrap();
        let names: Vec<&str> = s.switches.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names[0], "tor0");
        assert_eq!(names[16], "agg1_0");
        assert_eq!(names[63], "agg3_15");
        assert_eq!(names[64], "spine0");
        let s = build(&ClosConfig { stages: 2, ..ClosConfig::default() }).unwrap();
        assert_eq!((s.switches[3].name.as_str(), s.switches[4].name.as_str()), ("tor3", "spine0"));
    }

    #[test]
    fn wiring_follows_digits() {
        let (k, n) = (4u32, 3u32);
        let s = build(&ClosConfig::default()).unwrap();
        let ports = ports_of(&s);
        let per = 16u32;
        for st in 0..n {
            for w in 0..per {
                let p = &ports[(st * per + w) as usize];
                let digit = |x: u32, d: u32| x / k.pow(d) % k;
                let downs = &p[..k as usize];
                for (i, nb) in downs.iter().enumerate() {
                    if st == 0 {
                        assert_eq!(*nb, NodeRef::Host(w * k + i as u32));
                    } else {
                        let NodeRef::Switch(c) = *nb else { panic!() };
                        let (cs, cw) = (c / per, c % per);
                        assert_eq!(cs, st - 1);
                        assert_eq!(digit(cw, st - 1), i as u32);
                        for d in (0..n - 1).filter(|&d| d != st - 1) {
                            assert_eq!(digit(cw, d), digit(w, d));
                        }
                    }
                }
                for (u, nb) in p[k as usize..].iter().enumerate() {
                    let NodeRef::Switch(c) = *nb else { panic!() };
                    let (cs, cw) = (c / per, c % per);
                    assert_eq!(cs, st + 1);
                    assert_eq!(digit(cw, st), u as u32, "up-port index is the differing digit");
                    for d in (0..n - 1).filter(|&d| d != st) {
                        assert_eq!(digit(cw, d), digit(w, d));
                    }
                }
            }
        }
        // Spot check: tor5 = digits (1, 1); its up-port 2 reaches agg (2, 1) = agg6.
        assert_eq!(ports[5][4 + 2], NodeRef::Switch(16 + 6));
        // agg6 up-port 3 changes digit 1: spine (2, 3) = spine14.
        assert_eq!(ports[16 + 6][4 + 3], NodeRef::Switch(32 + 14));
    }

    /// All 64*63 pairs of the default tree: every up-link of a stage carries
    /// the same number of routes, and so does every down-link of a stage.
    #[test]
    fn dmodk_balanced_on_default_tree() {
        let s = build(&ClosConfig::default()).unwrap();
        let loads = dmodk_port_loads(&s);
        let total: u64 = loads.iter().flatten().sum();
        assert!(total > 64 * 63);
        for stage in 0..3u8 {
            let mut up = Vec::new();
            let mut down = Vec::new();
            for (i, sw) in s.switches.iter().enumerate() {
                if sw.tier != stage {
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
            if stage < 2 {
                assert_eq!(up.len(), 64);
                assert!(up[0] > 0);
                assert!(up.iter().all(|&n| n == up[0]), "stage {stage} up-links: {up:?}");
            } else {
                assert!(up.is_empty());
            }
            assert!(down.iter().all(|&n| n == down[0] && n > 0), "stage {stage} down-links: {down:?}");
        }
        // Each leaf up-link carries: 4 sources x 60 remote destinations / 4 ports.
        assert_eq!(loads[0][4], 4 * 60 / 4);
    }

    #[test]
    fn other_shapes_balanced_and_connected() {
        for (k, n) in [(2, 1), (2, 2), (3, 3), (2, 4), (5, 2)] {
            let s = build(&ClosConfig { k, stages: n, ..ClosConfig::default() }).unwrap();
            assert_eq!(s.hosts.len() as u32, k.pow(n));
            assert_eq!(s.switches.len() as u32, n * k.pow(n - 1));
            s.check_connected().unwrap();
            let loads = dmodk_port_loads(&s);
            for stage in 0..n.saturating_sub(1) as u8 {
                let mut up = Vec::new();
                for i in (0..s.switches.len()).filter(|&i| s.switches[i].tier == stage) {
                    for p in up_ports(&s, i) {
                        up.push(loads[i][p]);
                    }
                }
                assert!(up.iter().all(|&x| x == up[0]), "k={k} n={n} stage {stage}: {up:?}");
            }
        }
    }

    #[test]
    fn errors() {
        let e = build(&ClosConfig { k: 1, ..ClosConfig::default() }).unwrap_err();
        assert_eq!((e.key.as_str(), e.msg.as_str()), ("k", "k must be at least 2, got 1"));
        let e = build(&ClosConfig { stages: 0, ..ClosConfig::default() }).unwrap_err();
        assert_eq!((e.key.as_str(), e.msg.as_str()), ("stages", "stages must be at least 1, got 0"));
        let e = build(&ClosConfig { k: 4, stages: 11, ..ClosConfig::default() }).unwrap_err();
        assert_eq!(e.key, "stages");
        assert!(e.msg.contains("limit of 1000000"), "{}", e.msg);
        assert!(build(&ClosConfig { k: u32::MAX, stages: u32::MAX, ..ClosConfig::default() }).is_err());
        assert_eq!(build(&ClosConfig { k: 2_000_000, stages: 1, ..ClosConfig::default() }).unwrap_err().key, "k");
        assert!(toml::from_str::<ClosConfig>("k = 4\nn = 3").is_err());
        // 2^20 hosts is just over the limit.
        assert_eq!(build(&ClosConfig { k: 2, stages: 20, ..ClosConfig::default() }).unwrap_err().key, "stages");
    }
}
