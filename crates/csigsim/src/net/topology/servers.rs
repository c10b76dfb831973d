//! Servers of several NICs (`nics` and `nic_attach` of the `fat_tree` and
//! `leaf_spine` kinds). A generator lays out host ports, `hosts_per_tor` to
//! a ToR, ToRs in order; with `nics = n > 1` every `n` of those ports are
//! one server's NICs. Each NIC stays a host of its own to the engine (one
//! port, its own transport), named `h<s>.<r>` (NIC `r` of server `h<s>`);
//! server `s` owns the NIC hosts `s n .. s n + n - 1`.
//!
//! - `tor`: a server's NICs are consecutive ports of one ToR (a server
//!   behind its ToR, as in a virtual-ToR test bed); host indices are those
//!   of the generator.
//! - `rail`: rail-optimised. ToRs form groups of `n` consecutive ToRs; NIC
//!   `r` of every server of a group attaches to ToR `r` of the group (the
//!   rail switch), at the port the server's position in the group gives.

use super::{NodeRef, TopologyError, TopologySpec};
use serde::Deserialize;

/// A server: a name and its NIC hosts `first .. first + nics`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerSpec {
    pub name: String,
    pub first: u32,
    pub nics: u32,
}

/// How a server's NICs attach to ToRs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NicAttach {
    #[default]
    Tor,
    Rail,
}

pub fn default_nics() -> u32 {
    1
}

/// Groups the host ports of `spec` (laid out `hosts_per_tor` to a ToR,
/// ToRs consecutive) into servers of `nics` NICs. `rail_group_ok` says
/// whether `nics` consecutive ToRs starting at a multiple of `nics` may
/// form a rail group (a fat tree's groups must not cross pods). Nothing
/// changes when `nics` is 1.
pub fn assign(
    spec: &mut TopologySpec,
    nics: u32,
    attach: NicAttach,
    hosts_per_tor: u32,
    rail_group_ok: Result<(), String>,
) -> Result<(), TopologyError> {
    if nics == 0 {
        return Err(TopologyError::new("nics", "nics must be at least 1, got 0"));
    }
    if nics == 1 {
        return Ok(());
    }
    let ports = spec.hosts.len() as u32;
    let n = nics;
    let perm: Vec<u32> = match attach {
        NicAttach::Tor => {
            if !hosts_per_tor.is_multiple_of(n) {
                return Err(TopologyError::new(
                    "nics",
                    format!("with nic_attach = \"tor\" a server's {n} NICs sit on one ToR, so nics must divide the {hosts_per_tor} host ports of a ToR"),
                ));
            }
            if !ports.is_multiple_of(n) {
                return Err(TopologyError::new("nics", format!("the {ports} host ports are not a whole number of servers of {n} NICs")));
            }
            (0..ports).collect()
        }
        NicAttach::Rail => {
            rail_group_ok.map_err(|m| TopologyError::new("nics", m))?;
            let group = hosts_per_tor as u64 * n as u64;
            if !(ports as u64).is_multiple_of(group) {
                return Err(TopologyError::new(
                    "nics",
                    format!("with nic_attach = \"rail\" the {ports} host ports must fill whole rail groups of {n} ToRs ({group} ports)"),
                ));
            }
            (0..ports)
                .map(|i| {
                    let (tor, port) = (i / hosts_per_tor, i % hosts_per_tor);
                    let (g, r) = (tor / n, tor % n);
                    (g * hosts_per_tor + port) * n + r
                })
                .collect()
        }
    };
    for l in &mut spec.links {
        for end in [&mut l.a, &mut l.b] {
            if let NodeRef::Host(h) = end {
                *h = perm[*h as usize];
            }
        }
    }
    spec.hosts = (0..ports).map(|h| format!("h{}.{}", h / n, h % n)).collect();
    spec.servers = (0..ports / n).map(|s| ServerSpec { name: format!("h{s}"), first: s * n, nics: n }).collect();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::topology::{LinkSpec, SwitchSpec};
    use crate::units::{Rate, Time};

    /// 4 ToRs of 4 host ports each.
    fn spec() -> TopologySpec {
        let switches = (0..4).map(|t| SwitchSpec { name: format!("tor{t}"), tier: 0, dmodk_divisor: 1 }).collect();
        let links = (0..16).map(|h| LinkSpec { a: NodeRef::Host(h), b: NodeRef::Switch(h / 4), rate: Rate::gbps(100), delay: Time::us(1) }).collect();
        TopologySpec { hosts: (0..16).map(|h| format!("h{h}")).collect(), switches, links, servers: Vec::new() }
    }

    fn tor_of(s: &TopologySpec, host: &str) -> u32 {
        let h = s.hosts.iter().position(|x| x == host).unwrap() as u32;
        let l = s.links.iter().find(|l| l.a == NodeRef::Host(h)).unwrap();
        match l.b {
            NodeRef::Switch(t) => t,
            NodeRef::Host(_) => unreachable!(),
        }
    }

    #[test]
    fn one_nic_changes_nothing() {
        let mut s = spec();
        assign(&mut s, 1, NicAttach::Rail, 4, Err("unused".into())).unwrap();
        assert_eq!(s, spec());
    }

    #[test]
    fn tor_attach_keeps_a_server_on_its_tor() {
        let mut s = spec();
        assign(&mut s, 2, NicAttach::Tor, 4, Ok(())).unwrap();
        assert_eq!(s.servers.len(), 8);
        assert_eq!(s.servers[3], ServerSpec { name: "h3".into(), first: 6, nics: 2 });
        assert_eq!(s.hosts[6], "h3.0");
        assert_eq!((tor_of(&s, "h3.0"), tor_of(&s, "h3.1")), (1, 1));
        // Same host indices as the generator's.
        assert_eq!(s.links, spec().links);
    }

    #[test]
    fn rail_attach_puts_nic_r_on_rail_switch_r() {
        let mut s = spec();
        assign(&mut s, 2, NicAttach::Rail, 4, Ok(())).unwrap();
        // Groups: ToRs {0, 1} hold servers 0..4, ToRs {2, 3} servers 4..8.
        for srv in 0..8u32 {
            let g = srv / 4;
            for r in 0..2 {
                assert_eq!(tor_of(&s, &format!("h{srv}.{r}")), 2 * g + r, "h{srv}.{r}");
            }
        }
        // Every ToR still has 4 hosts, one per server of its group.
        for t in 0..4 {
            assert_eq!(s.links.iter().filter(|l| l.b == NodeRef::Switch(t)).count(), 4);
        }
    }

    #[test]
    fn refusals_name_nics() {
        let e = assign(&mut spec(), 3, NicAttach::Tor, 4, Ok(())).unwrap_err();
        assert_eq!(e.key, "nics");
        assert!(e.msg.contains("divide"), "{}", e.msg);
        let e = assign(&mut spec(), 8, NicAttach::Rail, 4, Ok(())).unwrap_err();
        assert!(e.msg.contains("rail groups"), "{}", e.msg);
        let e = assign(&mut spec(), 2, NicAttach::Rail, 4, Err("groups cross pods".into())).unwrap_err();
        assert_eq!(e.msg, "groups cross pods");
        assert_eq!(assign(&mut spec(), 0, NicAttach::Tor, 4, Ok(())).unwrap_err().key, "nics");
    }
}
