//! `kind = "custom"`: hosts, switches and links named in the scenario.

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
    let spec = TopologySpec {
        hosts: c.hosts.clone(),
        switches: c.switches.iter().map(|s| SwitchSpec { name: s.clone(), tier: 0, dmodk_divisor: 1 }).collect(),
        links,
        servers: Vec::new(),
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
