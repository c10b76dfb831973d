//! Equal-cost next hops, precomputed. Hosts attach to exactly one switch port;
//! switches route by the destination's attachment switch ("edge"), so the
//! table is switches x edges, not switches x hosts. Hosts never forward.

use crate::id::{HostId, PortId, SwitchId};
use crate::lb::GroupState;

/// The next-hop table.
#[derive(Debug, Default)]
pub struct Routes {
    /// Per destination host: its attachment switch and the switch's port to it.
    pub attach_switch: Vec<SwitchId>,
    pub attach_port: Vec<PortId>,
    /// Per switch: its edge index if hosts attach to it.
    edge_index: Vec<u32>,
    num_edges: usize,
    /// Per (switch, edge): start and length of the candidate list in `ports`
    /// (one load per lookup). Equal lists are stored once: a fat tree has
    /// few distinct ones, so `ports` stays in cache.
    span: Vec<(u32, u32)>,
    ports: Vec<PortId>,
    /// Per (switch, edge): what the routing policy keeps for that group.
    groups: Vec<GroupState>,
}

pub const NO_EDGE: u32 = u32::MAX;

/// The switch graph the table is computed from: for every switch, its ports
/// as (port id, peer switch or None when the peer is a host), in port order.
pub struct SwitchGraph<'a> {
    pub switch_ports: &'a [Vec<(PortId, Option<u32>)>],
}

impl Routes {
    pub fn build(g: &SwitchGraph, attach_switch: Vec<SwitchId>, attach_port: Vec<PortId>) -> Routes {
        let ns = g.switch_ports.len();
        let mut edge_index = vec![NO_EDGE; ns];
        let mut edges = Vec::new();
        for &SwitchId(s) in &attach_switch {
            if edge_index[s as usize] == NO_EDGE {
                edge_index[s as usize] = edges.len() as u32;
                edges.push(s);
            }
        }
        let ne = edges.len();
        let mut span = vec![(0u32, 0u32); ns * ne];
        let mut ports = Vec::new();
        let mut interned: std::collections::HashMap<Vec<PortId>, u32> = std::collections::HashMap::new();
        let mut list = Vec::new();
        let mut dist = vec![u32::MAX; ns];
        let mut frontier = Vec::with_capacity(ns);
        let mut next = Vec::with_capacity(ns);
        for (e, &edge) in edges.iter().enumerate() {
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[edge as usize] = 0;
            frontier.clear();
            frontier.push(edge);
            let mut d = 0;
            while !frontier.is_empty() {
                d += 1;
                next.clear();
                for &u in &frontier {
                    for &(_, peer) in &g.switch_ports[u as usize] {
                        if let Some(v) = peer {
                            if dist[v as usize] == u32::MAX {
                                dist[v as usize] = d;
                                next.push(v);
                            }
                        }
                    }
                }
                std::mem::swap(&mut frontier, &mut next);
            }
            for s in 0..ns {
                if s as u32 == edge || dist[s] == u32::MAX {
                    continue;
                }
                list.clear();
                for &(port, peer) in &g.switch_ports[s] {
                    if let Some(v) = peer {
                        if dist[v as usize] + 1 == dist[s] {
                            list.push(port);
                        }
                    }
                }
                let begin = *interned.entry(list.clone()).or_insert_with(|| {
                    ports.extend_from_slice(&list);
                    (ports.len() - list.len()) as u32
                });
                span[s * ne + e] = (begin, list.len() as u32);
            }
        }
        let groups = vec![GroupState::default(); ns * ne];
        Routes { attach_switch, attach_port, edge_index, num_edges: ne, span, ports, groups }
    }

    /// Recomputes the table over `g` (the same switches, some links left
    /// out), keeping the hosts' attachments. A (switch, edge) that `g` leaves
    /// without a path keeps its old next hops. Every group's policy state
    /// starts afresh, as the candidate lists may have changed.
    pub fn rebuild(&mut self, g: &SwitchGraph) {
        let new = Routes::build(g, self.attach_switch.clone(), self.attach_port.clone());
        let mut ports = Vec::with_capacity(new.ports.len());
        let mut span = new.span.clone();
        for (i, out) in span.iter_mut().enumerate() {
            // The new list when the group has one, else the old one.
            let ((s, l), src) = if new.span[i].1 > 0 { (new.span[i], &new.ports) } else { (self.span[i], &self.ports) };
            *out = (ports.len() as u32, l);
            ports.extend_from_slice(&src[s as usize..(s + l) as usize]);
        }
        self.groups = vec![GroupState::default(); span.len()];
        (self.span, self.ports) = (span, ports);
    }

    /// Candidate egress ports at `switch` towards host `dst`: either the one
    /// port to the host, or the equal-cost ports towards its edge switch.
    #[inline]
    pub fn candidates(&self, switch: SwitchId, dst: HostId) -> &[PortId] {
        let a = self.attach_switch[dst.ix()];
        if a == switch {
            return std::slice::from_ref(&self.attach_port[dst.ix()]);
        }
        let i = switch.ix() * self.num_edges + self.edge_index[a.ix()] as usize;
        let (s, n) = self.span[i];
        &self.ports[s as usize..(s + n) as usize]
    }

    /// As [`Routes::candidates`], with the routing policy's state for the
    /// group, or None at the destination's own switch (a single port).
    #[inline]
    pub fn next_hops(&mut self, switch: SwitchId, dst: HostId) -> (&[PortId], Option<&mut GroupState>) {
        let a = self.attach_switch[dst.ix()];
        if a == switch {
            return (std::slice::from_ref(&self.attach_port[dst.ix()]), None);
        }
        let i = switch.ix() * self.num_edges + self.edge_index[a.ix()] as usize;
        let (s, n) = self.span[i];
        (&self.ports[s as usize..(s + n) as usize], Some(&mut self.groups[i]))
    }

    /// Bytes the table occupies, for the benchmark's memory report.
    pub fn heap_bytes(&self) -> usize {
        self.span.len() * 8 + self.ports.len() * 4 + self.edge_index.len() * 4
            + self.groups.len() * std::mem::size_of::<GroupState>()
    }
}
