//! `kind = "custom"`: hosts, switches and links named in the scenario.

use super::servers::ServerSpec;
use super::{LinkSpec, NodeRef, SwitchSpec, TopologyError, TopologySpec};
use crate::units::{Rate, Time};
use serde::Deserialize;
use std::collections::HashMap;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CustomConfig {
    pub hosts: Vec<String>,
    #[serde(default)]
    pub switches: Vec<String>,
    pub links: Vec<CustomLink>,
    /// Servers of several NICs: each a name and its NICs, consecutive hosts.
    #[serde(default)]
    pub servers: Vec<CustomServer>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CustomServer {
    pub name: String,
    pub nics: Vec<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CustomLink {
    pub a: String,
    pub b: String,
    pub rate: Rate,
    pub delay: Time,
}

pub fn build(c: &CustomConfig) -> Result<TopologySpec, TopologyError> {
    let mut names: HashMap<&str, NodeRef> = HashMap::new();
    for (i, h) in c.hosts.iter().enumerate() {
        if names.insert(h, NodeRef::Host(i as u32)).is_some() {
            return Err(TopologyError::new(format!("hosts[{i}]"), format!("the name \"{h}\" is used twice")));
        }
    }
    for (i, s) in c.switches.iter().enumerate() {
        if names.insert(s, NodeRef::Switch(i as u32)).is_some() {
            return Err(TopologyError::new(format!("switches[{i}]"), format!("the name \"{s}\" is used twice")));
        }
    }
    let mut links = Vec::with_capacity(c.links.len());
    for (i, l) in c.links.iter().enumerate() {
        let find = |end: &str, name: &str| {
            names.get(name).copied().ok_or_else(|| {
                TopologyError::new(
                    format!("links[{i}].{end}"),
                    format!("\"{name}\" is neither a host nor a switch of this topology"),
                )
            })
        };
        let (a, b) = (find("a", &l.a)?, find("b", &l.b)?);
        if a == b {
            return Err(TopologyError::new(format!("links[{i}].b"), format!("link from \"{}\" to itself", l.a)));
        }
        if let (NodeRef::Host(_), NodeRef::Host(_)) = (a, b) {
            return Err(TopologyError::new(format!("links[{i}]"), "a link must have a switch on at least one end"));
        }
        links.push(LinkSpec { a, b, rate: l.rate, delay: l.delay });
    }
    let servers = servers(c, &names)?;
    let spec = TopologySpec {
        hosts: c.hosts.clone(),
        switches: c.switches.iter().map(|s| SwitchSpec { name: s.clone(), tier: 0, dmodk_divisor: 1 }).collect(),
        links,
        servers,
    };
    // Each host attaches to exactly one switch port (single-homed NIC).
    let mut host_links = vec![0u32; spec.hosts.len()];
    for l in &spec.links {
        for e in [l.a, l.b] {
            if let NodeRef::Host(h) = e {
                host_links[h as usize] += 1;
            }
        }
    }
    for (i, n) in host_links.iter().enumerate() {
        match n {
            0 => return Err(TopologyError::new("links", format!("host \"{}\" has no link", spec.hosts[i]))),
            1 => {}
            _ => {
                return Err(TopologyError::new(
                    "links",
                    format!("host \"{}\" has {n} links; hosts have one NIC port", spec.hosts[i]),
                ))
            }
        }
    }
    Ok(spec)
}

/// The `servers` list: unique names that name no host or switch, each with
/// at least two NICs that are consecutive hosts in `hosts` order, and no
/// host in two servers.
fn servers(c: &CustomConfig, names: &HashMap<&str, NodeRef>) -> Result<Vec<ServerSpec>, TopologyError> {
    let mut out: Vec<ServerSpec> = Vec::with_capacity(c.servers.len());
    let mut owned = vec![false; c.hosts.len()];
    for (i, s) in c.servers.iter().enumerate() {
        let key = |k: &str| format!("servers[{i}].{k}");
        if names.contains_key(s.name.as_str()) || out.iter().any(|o| o.name == s.name) {
            return Err(TopologyError::new(key("name"), format!("the name \"{}\" is used twice", s.name)));
        }
        if s.nics.len() < 2 {
            return Err(TopologyError::new(key("nics"), "a server lists at least two NICs (a host alone is a server of one)"));
        }
        let mut first = 0;
        for (j, nic) in s.nics.iter().enumerate() {
            let h = match names.get(nic.as_str()) {
                Some(NodeRef::Host(h)) => *h,
                _ => return Err(TopologyError::new(format!("servers[{i}].nics[{j}]"), format!("\"{nic}\" is not a host of this topology"))),
            };
            if owned[h as usize] {
                return Err(TopologyError::new(format!("servers[{i}].nics[{j}]"), format!("host \"{nic}\" is already a NIC of another server")));
            }
            owned[h as usize] = true;
            if j == 0 {
                first = h;
            } else if h != first + j as u32 {
                return Err(TopologyError::new(
                    format!("servers[{i}].nics[{j}]"),
                    format!("a server's NICs must be consecutive in `hosts`, in order: \"{nic}\" should follow \"{}\" there", s.nics[j - 1]),
                ));
            }
        }
        out.push(ServerSpec { name: s.name.clone(), first, nics: s.nics.len() as u32 });
    }
    Ok(out)
}
