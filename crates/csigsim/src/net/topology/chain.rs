//! `kind = "chain"`: a line of switches `s0 .. s{n-1}`, the multi-bottleneck
//! path of the queue-stamping ablations. The main path runs from host `h0`
//! on `s0` to host `h1` on `s{n-1}` across every link; each switch also has
//! its own cross-traffic hosts, so traffic from a cross host of `s_i` to one of
//! `s_{i+1}` shares exactly the link `s_i -> s_{i+1}` with the main path.
//!
//! Host numbering: `h0` is the main source, `h1` the main destination, then
//! the cross hosts switch by switch: the `j`-th cross host of switch `i` is
//! `2 + (cross hosts of switches 0..i) + j`, which is `2 + i*c + j` when every
//! switch has `c` (see [`cross_host`]).
//!
//! Port order of `s_i`: its main host (`h0` on `s0`, `h1` on `s{n-1}`, both on
//! a one-switch chain, `h0` first), its cross hosts in order, then `s_{i-1}`,
//! then `s_{i+1}`. All switches are tier 0 with `dmodk_divisor = 1`; every
//! destination has a single path.

use super::{LinkSpec, NodeRef, SwitchSpec, TopologyError, TopologySpec};
use crate::units::{Rate, Time};
use serde::Deserialize;

const MAX_HOSTS: u64 = 1_000_000;
const MAX_SWITCHES: u64 = 1_000_000;

/// Cross hosts per switch: one count for every switch, or one per switch.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(untagged, expecting = "a whole number of cross hosts per switch, or a list with one count per switch")]
pub enum CrossHosts {
    Each(u32),
    PerSwitch(Vec<u32>),
}

impl Default for CrossHosts {
    fn default() -> Self {
        CrossHosts::Each(1)
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChainConfig {
    /// Number of switches in the line.
    pub switches: u32,
    #[serde(default)]
    pub cross_hosts: CrossHosts,
    /// Rate of switch-switch links, and of host links unless `host_rate` is set.
    #[serde(default = "default_rate")]
    pub rate: Rate,
    /// Rate of host links (default: `rate`).
    #[serde(default)]
    pub host_rate: Option<Rate>,
    /// Propagation delay of every link.
    #[serde(default = "default_delay")]
    pub delay: Time,
}

fn default_rate() -> Rate {
    Rate::gbps(10)
}
fn default_delay() -> Time {
    Time::us(1)
}

/// The number of cross hosts on switch `switch` (0 for a switch the chain
/// does not have).
pub fn cross_hosts_at(c: &ChainConfig, switch: u32) -> u32 {
    if switch >= c.switches {
        return 0;
    }
    match &c.cross_hosts {
        CrossHosts::Each(n) => *n,
        CrossHosts::PerSwitch(v) => v.get(switch as usize).copied().unwrap_or(0),
    }
}

/// The host index of the `j`-th cross host (from 0) of switch `switch`:
/// `2 + sum(cross_hosts_at(c, m) for m < switch) + j`.
///
/// # Panics
/// If `switch` is not a switch of the chain or `j >= cross_hosts_at(c, switch)`;
/// check with [`cross_hosts_at`] first. Meant for configs [`build`] accepts.
pub fn cross_host(c: &ChainConfig, switch: u32, j: u32) -> u32 {
    let here = cross_hosts_at(c, switch);
    assert!(
        j < here,
        "cross host {j} of switch s{switch} does not exist: the chain has {} switches and s{switch} has {here} cross hosts",
        c.switches
    );
    let before: u64 = match &c.cross_hosts {
        CrossHosts::Each(n) => switch as u64 * *n as u64,
        CrossHosts::PerSwitch(v) => v[..switch as usize].iter().map(|&x| x as u64).sum(),
    };
    u32::try_from(2 + before + j as u64).expect("chain host index overflows u32; build refuses such configs")
}

pub fn build(c: &ChainConfig) -> Result<TopologySpec, TopologyError> {
    let n = c.switches;
    if n == 0 {
        return Err(TopologyError::new("switches", "switches must be at least 1, got 0"));
    }
    if n as u64 > MAX_SWITCHES {
        return Err(TopologyError::new("switches", format!("switches = {n} is more than the limit of {MAX_SWITCHES}")));
    }
    let cross_total: u64 = match &c.cross_hosts {
        CrossHosts::Each(m) => n as u64 * *m as u64,
        CrossHosts::PerSwitch(v) => {
            if v.len() != n as usize {
                return Err(TopologyError::new(
                    "cross_hosts",
                    format!(
                        "cross_hosts lists {} counts but the chain has {n} switches; \
                         give one count per switch or a single number for all",
                        v.len()
                    ),
                ));
            }
            v.iter().map(|&x| x as u64).sum()
        }
    };
    let n_hosts = 2 + cross_total;
    if n_hosts > MAX_HOSTS {
        return Err(TopologyError::new(
            "cross_hosts",
            format!("the chain would have {n_hosts} hosts (2 main + {cross_total} cross), more than the limit of {MAX_HOSTS}"),
        ));
    }
    let hosts: Vec<String> = (0..n_hosts).map(|h| format!("h{h}")).collect();
    let switches: Vec<SwitchSpec> =
        (0..n).map(|i| SwitchSpec { name: format!("s{i}"), tier: 0, dmodk_divisor: 1 }).collect();
    let (rate, delay) = (c.rate, c.delay);
    let host_rate = c.host_rate.unwrap_or(rate);
    let mut links = Vec::with_capacity(n_hosts as usize + n as usize - 1);
    let host_link = |h: u32, s: u32| LinkSpec { a: NodeRef::Host(h), b: NodeRef::Switch(s), rate: host_rate, delay };
    links.push(host_link(0, 0));
    links.push(host_link(1, n - 1));
    let mut next = 2u32;
    for i in 0..n {
        for _ in 0..cross_hosts_at(c, i) {
            links.push(host_link(next, i));
            next += 1;
        }
    }
    debug_assert_eq!(next as u64, n_hosts);
    for i in 0..n - 1 {
        links.push(LinkSpec { a: NodeRef::Switch(i), b: NodeRef::Switch(i + 1), rate, delay });
    }
    Ok(TopologySpec { hosts, switches, links, servers: Vec::new() })
}

#[cfg(test)]
mod tests {
    use super::super::clos::tests::ports_of;
    use super::*;

    fn cfg(s: &str) -> ChainConfig {
        toml::from_str(s).unwrap()
    }

    #[test]
    fn defaults_counts_names() {
        let c = cfg("switches = 4");
        assert_eq!(c.cross_hosts, CrossHosts::Each(1));
        let s = build(&c).unwrap();
        assert_eq!(s.hosts.len(), 6);
        assert_eq!(s.switches.len(), 4);
        assert_eq!(s.links.len(), 6 + 3);
        let names: Vec<&str> = s.switches.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["s0", "s1", "s2", "s3"]);
        assert!(s.switches.iter().all(|x| x.tier == 0 && x.dmodk_divisor == 1));
        assert!(s.links.iter().all(|l| l.rate == Rate::gbps(10) && l.delay == Time::us(1)));
        s.check_connected().unwrap();
    }

    #[test]
    fn port_order_and_numbering() {
        let c = cfg("switches = 3\ncross_hosts = 2\nrate = \"40Gbps\"\nhost_rate = \"100Gbps\"");
        let s = build(&c).unwrap();
        let ports = ports_of(&s);
        use NodeRef::{Host as H, Switch as S};
        assert_eq!(ports[0], vec![H(0), H(2), H(3), S(1)]);
        assert_eq!(ports[1], vec![H(4), H(5), S(0), S(2)]);
        assert_eq!(ports[2], vec![H(1), H(6), H(7), S(1)]);
        for i in 0..3 {
            for j in 0..2 {
                let h = cross_host(&c, i, j);
                assert_eq!(h, 2 + i * 2 + j);
                assert!(ports[i as usize].contains(&H(h)));
            }
        }
        for l in &s.links {
            let host_link = matches!(l.a, H(_));
            assert_eq!(l.rate, if host_link { Rate::gbps(100) } else { Rate::gbps(40) });
        }
        let mut per_host = vec![0; s.hosts.len()];
        for l in &s.links {
            if let H(h) = l.a {
                per_host[h as usize] += 1;
            }
        }
        assert!(per_host.iter().all(|&n| n == 1));
    }

    #[test]
    fn per_switch_list() {
        let c = cfg("switches = 4\ncross_hosts = [3, 0, 1, 2]");
        let s = build(&c).unwrap();
        assert_eq!(s.hosts.len(), 2 + 6);
        assert_eq!((cross_host(&c, 0, 2), cross_host(&c, 2, 0), cross_host(&c, 3, 1)), (4, 5, 7));
        assert_eq!(cross_hosts_at(&c, 1), 0);
        assert_eq!(cross_hosts_at(&c, 9), 0);
        let ports = ports_of(&s);
        use NodeRef::{Host as H, Switch as S};
        assert_eq!(ports[1], vec![S(0), S(2)]);
        assert_eq!(ports[3], vec![H(1), H(6), H(7), S(2)]);
        s.check_connected().unwrap();
    }

    #[test]
    fn single_switch_and_no_cross() {
        let s = build(&cfg("switches = 1\ncross_hosts = 0")).unwrap();
        assert_eq!((s.hosts.len(), s.switches.len(), s.links.len()), (2, 1, 2));
        assert_eq!(ports_of(&s)[0], vec![NodeRef::Host(0), NodeRef::Host(1)]);
        s.check_connected().unwrap();
        let s = build(&cfg("switches = 7\ncross_hosts = 0")).unwrap();
        assert_eq!((s.hosts.len(), s.links.len()), (2, 8));
        s.check_connected().unwrap();
    }

    #[test]
    fn errors() {
        let e = build(&cfg("switches = 0")).unwrap_err();
        assert_eq!((e.key.as_str(), e.msg.as_str()), ("switches", "switches must be at least 1, got 0"));
        let e = build(&cfg("switches = 3\ncross_hosts = [1, 2]")).unwrap_err();
        assert_eq!(e.key, "cross_hosts");
        assert!(e.msg.contains("lists 2 counts but the chain has 3 switches"), "{}", e.msg);
        assert_eq!(build(&cfg("switches = 4294967295")).unwrap_err().key, "switches");
        assert_eq!(build(&cfg("switches = 1000\ncross_hosts = 4294967295")).unwrap_err().key, "cross_hosts");
        assert_eq!(build(&cfg("switches = 2\ncross_hosts = [4294967295, 4294967295]")).unwrap_err().key, "cross_hosts");
        let e = toml::from_str::<ChainConfig>("switches = 2\ncross_hosts = \"many\"").unwrap_err();
        assert!(e.to_string().contains("one count per switch"), "{e}");
        assert!(toml::from_str::<ChainConfig>("cross_hosts = 1").is_err());
        assert!(toml::from_str::<ChainConfig>("switches = 2\nhops = 1").is_err());
    }

    #[test]
    #[should_panic(expected = "does not exist")]
    fn cross_host_out_of_range_panics_with_message() {
        cross_host(&cfg("switches = 2"), 2, 0);
    }

    #[test]
    fn through_topology_config() {
        let t: super::super::TopologyConfig =
            toml::from_str("kind = \"chain\"\nswitches = 3\ncross_hosts = [1, 1, 1]").unwrap();
        assert_eq!(t.build().unwrap().hosts.len(), 5);
    }
}
