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
    /// Per (switch, edge): the candidates as a run of consecutive ports, 2
    /// bytes a group: the first port's offset from `first[switch]` in the low
    /// byte, the count in the high byte; or [`LISTED`]. On a fat tree every
    /// list is a run (the up-ports, or one down-port), and at 2 bytes rather
    /// than the 8 of a (start, length) span the table of 1280 x 512 groups
    /// (8192 hosts) shrinks from 5.2 to 1.3 MB: a lookup is one load into a
    /// table that mostly stays in cache. A switch's row (one group per
    /// edge) is kept once for all the switches whose rows are equal
    /// ([`Routes::share_rows`]): 34 KB at 8192 hosts.
    runs: Vec<u16>,
    /// Per switch: where its row of `runs` starts (a multiple of the
    /// number of edges).
    row: Vec<u32>,
    /// Per switch: the port that its runs count from.
    first: Vec<u32>,
    /// `PortId(p)` at index `p`: a run of ports as a slice.
    ident: Vec<PortId>,
    /// Per (switch, edge) whose list is not a run: start and length of the
    /// candidate list in `ports` (equal lists stored once). Empty when every
    /// list is a run.
    span: Vec<(u32, u32)>,
    ports: Vec<PortId>,
    /// Per (switch, edge): what the routing policy keeps for that group.
    groups: Vec<GroupState>,
}

/// A group whose candidates are not a run of at most 254 ports within 255
/// of the switch's first: see `Routes::span`.
const LISTED: u16 = u16::MAX;

/// In [`Routes::build`]'s list of groups: the count of a group that is no run.
const LISTED_BIT: u32 = 1 << 31;

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
        // Per group: its candidates as (first port, count) when they are a
        // run of consecutive ports (every group of a fat tree), or as
        // (start, count | LISTED_BIT) in `ports`, where only the lists that
        // are no run are kept, each distinct one once. A run needs neither a
        // copy nor a lookup (a lookup per group was most of the build on
        // large fabrics).
        let mut span = vec![(0u32, 0u32); ns * ne];
        let mut ports = Vec::new();
        let mut interned: std::collections::HashMap<Vec<PortId>, u32> = std::collections::HashMap::new();
        let mut intern = |ports: &mut Vec<PortId>, list: &[PortId]| {
            *interned.entry(list.to_vec()).or_insert_with(|| {
                ports.extend_from_slice(list);
                (ports.len() - list.len()) as u32
            })
        };
        let mut list = Vec::new();
        let mut first = vec![u32::MAX; ns];
        // Every switch's links to switches, (port, peer), in port order, as
        // one list, which the searches below read level by level.
        let mut at = Vec::with_capacity(ns + 1);
        let mut links: Vec<(PortId, u32)> = Vec::new();
        for sp in g.switch_ports {
            at.push(links.len());
            links.extend(sp.iter().filter_map(|&(port, peer)| Some((port, peer?))));
        }
        at.push(links.len());
        // Breadth-first searches from 64 edge switches at once, a bit each:
        // `level[d][s]` has the bits of the edge switches `d` hops from `s`.
        // A port of `s` is a next hop towards the edge switches in
        // `level[d][s] & level[d - 1][peer]`.
        let mut level: Vec<Vec<u64>> = Vec::new();
        let mut reached = vec![0u64; ns];
        let mut top = 0u32;
        // Per bit, the group being followed at one switch: its first and
        // last port, count, and whether it is still a run.
        let mut track = [(0u32, 0u32, 0u32, true); 64];
        for (b, batch) in edges.chunks(64).enumerate() {
            reached.iter_mut().for_each(|r| *r = 0);
            let mut cur = level.pop().unwrap_or_default();
            level.clear();
            cur.clear();
            cur.resize(ns, 0);
            for (j, &edge) in batch.iter().enumerate() {
                cur[edge as usize] |= 1 << j;
                reached[edge as usize] |= 1 << j;
            }
            loop {
                let mut next = vec![0u64; ns];
                let mut any = false;
                for u in 0..ns {
                    let f = cur[u];
                    if f == 0 {
                        continue;
                    }
                    for &(_, v) in &links[at[u]..at[u + 1]] {
                        let new = f & !reached[v as usize];
                        if new != 0 {
                            next[v as usize] |= new;
                            any = true;
                        }
                    }
                }
                // Bits reached at this level by several paths are set once.
                for v in 0..ns {
                    reached[v] |= next[v];
                }
                level.push(std::mem::replace(&mut cur, next));
                if !any {
                    break;
                }
            }
            let closer = |s: usize, v: u32| (1..level.len()).fold(0u64, |m, l| m | (level[l][s] & level[l - 1][v as usize]));
            for s in 0..ns {
                let ports_of = &links[at[s]..at[s + 1]];
                for &(PortId(p), v) in ports_of {
                    let mut m = closer(s, v);
                    while m != 0 {
                        let j = m.trailing_zeros() as usize;
                        m &= m - 1;
                        let t = &mut track[j];
                        if t.2 == 0 {
                            t.0 = p;
                        } else if p != t.1 + 1 {
                            t.3 = false;
                        }
                        (t.1, t.2) = (p, t.2 + 1);
                    }
                }
                for (j, t) in track.iter_mut().enumerate().take(batch.len()) {
                    let (p0, last, n, run) = std::mem::replace(t, (0, 0, 0, true));
                    if n == 0 {
                        continue;
                    }
                    first[s] = first[s].min(p0);
                    top = top.max(last + 1);
                    span[s * ne + b * 64 + j] = if run {
                        (p0, n)
                    } else {
                        list.clear();
                        list.extend(ports_of.iter().filter(|&&(_, v)| closer(s, v) & 1 << j != 0).map(|&(p, _)| p));
                        (intern(&mut ports, &list), n | LISTED_BIT)
                    };
                }
            }
        }
        // The table: a group's run counted from its switch's first port in
        // 2 bytes where it fits, else listed (as `set_lists` would).
        let n = ns * ne;
        let first: Vec<u32> = first.into_iter().map(|p| if p == u32::MAX { 0 } else { p }).collect();
        let mut runs = vec![0u16; n];
        let mut listed = false;
        for (i, sp) in span.iter_mut().enumerate() {
            let (start, count) = *sp;
            if count == 0 {
                continue;
            }
            let off = start.wrapping_sub(first[i / ne]);
            if count & LISTED_BIT == 0 && off < 255 && count < 255 {
                runs[i] = off as u16 | (count as u16) << 8;
                continue;
            }
            if count & LISTED_BIT == 0 {
                // A run too long or too far from the switch's first port.
                list.clear();
                list.extend((start..start + count).map(PortId));
                *sp = (intern(&mut ports, &list), count);
            }
            runs[i] = LISTED;
            sp.1 &= !LISTED_BIT;
            listed = true;
        }
        if !listed {
            span = Vec::new();
        }
        let mut routes = Routes {
            attach_switch,
            attach_port,
            edge_index,
            num_edges: ne,
            runs,
            row: Vec::new(),
            first,
            ident: (0..top).map(PortId).collect(),
            span,
            ports,
            groups: vec![GroupState::default(); n],
        };
        routes.share_rows();
        routes
    }

    /// Keeps each distinct row of `runs` once, and per switch where its
    /// row is. Runs count from their switch's first port, so the switches
    /// of one role have equal rows: on a fat tree, every edge switch, the
    /// aggregation switches of one pod, every core switch (k + 2 rows).
    /// At 8192 hosts the table shrinks from 1,280 rows (1.3 MB, past the
    /// second-level cache, a miss on most lookups) to 34 (34 KB); at 1024
    /// from 80 KB to 5 KB. An edge switch's entry for its own hosts is
    /// never read (their port is `attach_port`), so it takes the row's
    /// most common entry, which makes the edge switches' rows equal.
    fn share_rows(&mut self) {
        let ne = self.num_edges;
        let ns = self.first.len();
        let mut runs = std::mem::take(&mut self.runs);
        if ne > 0 {
            let mut count: std::collections::HashMap<u16, usize> = std::collections::HashMap::new();
            for s in 0..ns {
                let own = self.edge_index[s];
                if own == NO_EDGE {
                    continue;
                }
                let row = &mut runs[s * ne..(s + 1) * ne];
                count.clear();
                for (e, &r) in row.iter().enumerate() {
                    if e != own as usize {
                        *count.entry(r).or_default() += 1;
                    }
                }
                // The most common entry; the least of equally common ones,
                // so the choice does not depend on the map's order.
                if let Some((&r, _)) = count.iter().max_by_key(|&(&r, &n)| (n, std::cmp::Reverse(r))) {
                    row[own as usize] = r;
                }
            }
        }
        let mut shared: Vec<u16> = Vec::new();
        let mut row = Vec::with_capacity(ns);
        let mut seen: std::collections::HashMap<&[u16], u32> = std::collections::HashMap::new();
        for s in 0..ns {
            let r = &runs[s * ne..(s + 1) * ne];
            let at = *seen.entry(r).or_insert_with(|| {
                shared.extend_from_slice(r);
                (shared.len() - ne) as u32
            });
            row.push(at);
        }
        self.runs = shared;
        self.row = row;
    }

    /// Recomputes the table over `g` (the same switches, some links left
    /// out), keeping the hosts' attachments. A (switch, edge) that `g` leaves
    /// without a path keeps its old next hops. Every group's policy state
    /// starts afresh, as the candidate lists may have changed.
    pub fn rebuild(&mut self, g: &SwitchGraph) {
        let new = Routes::build(g, self.attach_switch.clone(), self.attach_port.clone());
        let ns = self.first.len();
        let n = ns * self.num_edges;
        let (mut pool, mut spans) = (Vec::new(), Vec::with_capacity(n));
        for i in 0..n {
            // The new list when the group has one, else the old one.
            let l = new.group_list(i);
            let l = if l.is_empty() { self.group_list(i) } else { l };
            spans.push((pool.len(), l.len()));
            pool.extend_from_slice(l);
        }
        self.groups = vec![GroupState::default(); n];
        self.set_lists(ns, |i| &pool[spans[i].0..spans[i].0 + spans[i].1]);
    }

    /// Fills `runs`, `first`, `ident`, `span` and `ports` from the candidate
    /// list of every group (`list(i)` for group i = switch x edges + edge).
    fn set_lists<'a>(&mut self, ns: usize, list: impl Fn(usize) -> &'a [PortId]) {
        let ne = self.num_edges;
        let n = ns * ne;
        let is_run = |l: &[PortId]| l.windows(2).all(|w| w[1].0 == w[0].0 + 1);
        self.first = (0..ns)
            .map(|s| (0..ne).filter_map(|e| list(s * ne + e).first()).map(|p| p.0).min().unwrap_or(0))
            .collect();
        let top = (0..n).filter_map(|i| list(i).last()).map(|p| p.0 + 1).max().unwrap_or(0);
        self.ident = (0..top).map(PortId).collect();
        self.runs = vec![0; n];
        self.span.clear();
        self.ports.clear();
        let mut interned: std::collections::HashMap<&[PortId], u32> = std::collections::HashMap::new();
        for i in 0..n {
            let l = list(i);
            let Some(p) = l.first() else { continue };
            let off = p.0 - self.first[i / ne];
            if off < 255 && l.len() < 255 && is_run(l) {
                self.runs[i] = off as u16 | (l.len() as u16) << 8;
                continue;
            }
            if self.span.is_empty() {
                self.span = vec![(0, 0); n];
            }
            let ports = &mut self.ports;
            let begin = *interned.entry(l).or_insert_with(|| {
                ports.extend_from_slice(l);
                (ports.len() - l.len()) as u32
            });
            self.runs[i] = LISTED;
            self.span[i] = (begin, l.len() as u32);
        }
        self.share_rows();
    }

    /// The candidate list of group `i`.
    #[inline]
    fn group_list(&self, i: usize) -> &[PortId] {
        let (s, e) = (i / self.num_edges, i % self.num_edges);
        // An edge switch's own entry names no group (see `share_rows`).
        if self.edge_index[s] == e as u32 {
            return &[];
        }
        located(&self.ports, &self.ident, self.group_ports(s, i))
    }

    /// Candidate egress ports at `switch` towards host `dst`: either the one
    /// port to the host, or the equal-cost ports towards its edge switch.
    /// Inlined into the loop's prefetch stage, its only caller per packet.
    #[inline(always)]
    pub fn candidates(&self, switch: SwitchId, dst: HostId) -> &[PortId] {
        let Some(i) = self.group_index(switch, dst) else { return std::slice::from_ref(&self.attach_port[dst.ix()]) };
        located(&self.ports, &self.ident, self.group_ports(switch.ix(), i))
    }

    /// As [`Routes::candidates`], with the routing policy's state for the
    /// group, or None at the destination's own switch (a single port).
    #[inline]
    pub fn next_hops(&mut self, switch: SwitchId, dst: HostId) -> (&[PortId], Option<&mut GroupState>) {
        let Some(i) = self.group_index(switch, dst) else { return (std::slice::from_ref(&self.attach_port[dst.ix()]), None) };
        let cands = located(&self.ports, &self.ident, self.group_ports(switch.ix(), i));
        (cands, Some(&mut self.groups[i]))
    }

    /// The route group of `dst` at `switch`, or None at its own switch.
    #[inline(always)]
    fn group_index(&self, switch: SwitchId, dst: HostId) -> Option<usize> {
        let a = self.attach_switch[dst.ix()];
        (a != switch).then(|| switch.ix() * self.num_edges + self.edge_index[a.ix()] as usize)
    }

    /// Where in `runs` group `i` (of switch `sw`) is: in the switch's row.
    #[inline(always)]
    fn run_index(&self, sw: usize, i: usize) -> usize {
        self.row[sw] as usize + (i - sw * self.num_edges)
    }

    /// Where group `i` of switch `sw` keeps its ports: in `ports` (a listed
    /// group) or in `ident` (a run), from `start`, `len` of them.
    #[inline(always)]
    fn group_ports(&self, sw: usize, i: usize) -> (bool, usize, usize) {
        let r = self.runs[self.run_index(sw, i)];
        if r == LISTED {
            let (s, n) = self.span[i];
            (true, s as usize, n as usize)
        } else {
            (false, self.first[sw] as usize + (r & 0xff) as usize, (r >> 8) as usize)
        }
    }

    /// Asks the CPU for the candidate list that [`Routes::candidates`]
    /// will name (a hint only). The table itself is small enough to stay
    /// in cache ([`Routes::share_rows`]) and is read here; the list lies
    /// among all the fabric's port ids (`ident`: 196 KB at 8192 hosts),
    /// where the choice of the egress port, an event later, missed.
    #[inline(always)]
    pub fn prefetch(&self, switch: SwitchId, dst: HostId) {
        let c = self.candidates(switch, dst);
        if let (Some(first), Some(last)) = (c.first(), c.last()) {
            crate::sim::prefetch(first);
            crate::sim::prefetch(last);
        }
    }

    /// Bytes the table occupies, for the benchmark's memory report.
    pub fn heap_bytes(&self) -> usize {
        self.runs.len() * 2 + self.row.len() * 4 + self.first.len() * 4 + self.ident.len() * 4
            + self.span.len() * 8 + self.ports.len() * 4 + self.edge_index.len() * 4
            + self.groups.len() * std::mem::size_of::<GroupState>()
    }
}

/// The ports a group's location ([`Routes::group_ports`]) names: a free
/// function over the two lists, so that `next_hops` can lend the group's
/// state mutably beside them.
#[inline(always)]
fn located<'a>(ports: &'a [PortId], ident: &'a [PortId], (listed, start, len): (bool, usize, usize)) -> &'a [PortId] {
    if listed {
        &ports[start..start + len]
    } else {
        &ident[start..start + len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ring of four switches, hosts 0 and 1 on switches 0 and 3: from
    /// switch 0 both ways round are equal, on ports 0 and 2 (not a run);
    /// from switch 3 on ports 7 and 8 (a run).
    fn ring() -> Vec<Vec<(PortId, Option<u32>)>> {
        let p = |i: u32, peer: Option<u32>| (PortId(i), peer);
        vec![
            vec![p(0, Some(1)), p(1, None), p(2, Some(2))],
            vec![p(3, Some(0)), p(4, Some(3))],
            vec![p(5, Some(0)), p(6, Some(3))],
            vec![p(7, Some(1)), p(8, Some(2)), p(9, None)],
        ]
    }

    #[test]
    fn runs_and_listed_groups_give_the_same_candidates() {
        let g = ring();
        let mut r = Routes::build(&SwitchGraph { switch_ports: &g }, vec![SwitchId(0), SwitchId(3)], vec![PortId(1), PortId(9)]);
        let (h0, h1) = (HostId(0), HostId(1));
        assert_eq!(r.candidates(SwitchId(0), h1), &[PortId(0), PortId(2)]);
        assert_eq!(r.candidates(SwitchId(3), h0), &[PortId(7), PortId(8)]);
        assert_eq!(r.candidates(SwitchId(1), h1), &[PortId(4)]);
        assert_eq!(r.candidates(SwitchId(0), h0), &[PortId(1)]);
        assert_eq!(r.next_hops(SwitchId(0), h1).0, &[PortId(0), PortId(2)]);
        assert_eq!(r.next_hops(SwitchId(2), h0).0, &[PortId(5)]);
        // Without switch 1's links, switch 0 reaches switch 3 only through
        // port 2; switch 1, left without a path, keeps its old hops.
        let mut g = ring();
        g[0].remove(0);
        g[1].clear();
        g[3].remove(0);
        r.rebuild(&SwitchGraph { switch_ports: &g });
        assert_eq!(r.candidates(SwitchId(0), h1), &[PortId(2)]);
        assert_eq!(r.candidates(SwitchId(3), h0), &[PortId(8)]);
        assert_eq!(r.candidates(SwitchId(1), h0), &[PortId(3)]);
        assert_eq!(r.candidates(SwitchId(1), h1), &[PortId(4)]);
    }
    /// Every switch's ports as (port, peer switch or None for a host).
    type Graph = Vec<Vec<(PortId, Option<u32>)>>;

    /// The candidates of a plain breadth-first search from the switch of
    /// `dst`: every port of `sw` whose peer switch is one hop closer, in
    /// port order; at `dst`'s own switch its port to the host.
    fn reference(g: &[Vec<(PortId, Option<u32>)>], attach: &[(u32, PortId)], sw: u32, dst: usize) -> Vec<PortId> {
        let (edge, port) = attach[dst];
        if sw == edge {
            return vec![port];
        }
        let mut dist = vec![u32::MAX; g.len()];
        dist[edge as usize] = 0;
        let mut queue = std::collections::VecDeque::from([edge]);
        while let Some(u) = queue.pop_front() {
            for &(_, v) in &g[u as usize] {
                if let Some(v) = v.filter(|&v| dist[v as usize] == u32::MAX) {
                    dist[v as usize] = dist[u as usize] + 1;
                    queue.push_back(v);
                }
            }
        }
        if dist[sw as usize] == u32::MAX {
            return Vec::new();
        }
        g[sw as usize].iter().filter(|&&(_, v)| v.is_some_and(|v| dist[v as usize] + 1 == dist[sw as usize])).map(|&(p, _)| p).collect()
    }

    /// Every (switch, host) of `g`: the table's candidates are the plain search's.
    fn check_every_pair(g: &[Vec<(PortId, Option<u32>)>], attach: &[(u32, PortId)]) {
        let r = Routes::build(&SwitchGraph { switch_ports: g }, attach.iter().map(|a| SwitchId(a.0)).collect(), attach.iter().map(|a| a.1).collect());
        for sw in 0..g.len() as u32 {
            for h in 0..attach.len() {
                assert_eq!(r.candidates(SwitchId(sw), HostId(h as u32)), reference(g, attach, sw, h).as_slice(), "switch {sw}, host {h}");
            }
        }
    }

    /// Switches joined by links `pairs`, ports numbered in the order of
    /// `pairs` (so that some lists are runs and some are not), and hosts on
    /// `hosts`, each with a port of its own after the links'.
    fn graph(ns: usize, pairs: &[(u32, u32)], hosts: &[u32]) -> (Graph, Vec<(u32, PortId)>) {
        let mut g: Graph = vec![Vec::new(); ns];
        let mut n = 0;
        let mut port = |g: &mut Graph, s: u32, peer: Option<u32>| {
            g[s as usize].push((PortId(n), peer));
            n += 1;
            PortId(n - 1)
        };
        for &(a, b) in pairs {
            port(&mut g, a, Some(b));
            port(&mut g, b, Some(a));
        }
        let attach = hosts.iter().map(|&s| (s, port(&mut g, s, None))).collect();
        for l in &mut g {
            l.sort_by_key(|e| e.0);
        }
        (g, attach)
    }

    /// A fat tree of k = 4 (its ports in switch order, every list a run)
    /// and irregular graphs (lists that are not runs, unreachable switches,
    /// parallel links): the table gives every pair the plain search's
    /// next hops.
    #[test]
    fn the_table_holds_every_pairs_shortest_next_hops() {
        // Fat tree k = 4: ToRs 0..8, aggs 8..16, cores 16..20; ports
        // numbered switch by switch.
        let mut g: Vec<Vec<(PortId, Option<u32>)>> = vec![Vec::new(); 20];
        let mut attach = Vec::new();
        let mut n = 0;
        for s in 0..20u32 {
            let peers: Vec<Option<u32>> = match s {
                0..8 => vec![None, None, Some(8 + s / 2 * 2), Some(9 + s / 2 * 2)],
                8..16 => {
                    let (pod, j) = ((s - 8) / 2, (s - 8) % 2);
                    vec![Some(pod * 2), Some(pod * 2 + 1), Some(16 + j * 2), Some(17 + j * 2)]
                }
                _ => (0..4).map(|pod| Some(8 + pod * 2 + (s - 16) / 2)).collect(),
            };
            for peer in peers {
                if peer.is_none() {
                    attach.push((s, PortId(n)));
                }
                g[s as usize].push((PortId(n), peer));
                n += 1;
            }
        }
        check_every_pair(&g, &attach);
        // Switches of one role share their row: the edge switches one, the
        // aggregation switches of each pod one, the cores one (k + 2).
        let r = Routes::build(&SwitchGraph { switch_ports: &g }, attach.iter().map(|a| SwitchId(a.0)).collect(), attach.iter().map(|a| a.1).collect());
        assert_eq!((r.num_edges, r.runs.len()), (8, (4 + 2) * 8));
        // Irregular: a ring with a chord and a parallel link, and a switch
        // left alone (no path to or from it).
        let (g, attach) = graph(7, &[(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0), (0, 3), (2, 3), (1, 4)], &[0, 2, 3, 5, 6, 6]);
        check_every_pair(&g, &attach);
        // Runs too long for a 2-byte entry (300 parallel links between
        // switches 0 and 1) and one too far from its switch's first port
        // (switch 1's port 600 to switch 2, 300 after its first).
        let mut g: Vec<Vec<(PortId, Option<u32>)>> = vec![Vec::new(); 3];
        g[0] = (0..300).map(|p| (PortId(p), Some(1))).collect();
        g[1] = (300..600).map(|p| (PortId(p), Some(0))).chain([(PortId(600), Some(2))]).collect();
        g[2] = vec![(PortId(601), Some(1))];
        g[0].push((PortId(602), None));
        g[2].push((PortId(603), None));
        check_every_pair(&g, &[(0, PortId(602)), (2, PortId(603))]);
        // More edge switches than a batch of the search (64): a ring of 150
        // with chords, a host on each.
        let mut pairs: Vec<(u32, u32)> = (0..150).map(|a| (a, (a + 1) % 150)).collect();
        pairs.extend((0..150).step_by(7).map(|a| (a, (a * 13 + 40) % 150)).filter(|&(a, b)| a != b));
        let (g, attach) = graph(150, &pairs, &(0..150).collect::<Vec<u32>>());
        check_every_pair(&g, &attach);
        // Pseudo-random graphs of 12 switches.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20 {
            let mut pairs = Vec::new();
            for a in 0..12u32 {
                for b in a + 1..12 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    if x.is_multiple_of(4) {
                        pairs.push((a, b));
                    }
                }
            }
            let (g, attach) = graph(12, &pairs, &[0, 1, 4, 7, 7, 11]);
            check_every_pair(&g, &attach);
        }
    }
}
