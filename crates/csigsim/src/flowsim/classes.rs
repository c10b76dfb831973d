//! Links that every fluid loads alike, merged into one resource.
//!
//! Where every flow is spread over the equal-cost next hops of every switch
//! (spray and the other per-packet policies, or host-side entropy), whole
//! families of links carry the same flows at the same shares: on a fat
//! tree, an edge switch's uplinks, a pod's aggregation uplinks, the core
//! links into a pod, the links into an edge switch. Such links always
//! have the same load and fill at the same level, so one of them (the
//! family's first port, its representative) stands for all in the max-min
//! filling, and a flow lists one entry per family instead of one per link:
//! 6 rather than 546 for a flow across pods of a k = 32 fat tree.
//!
//! The families are the coarsest partition of switches and switch-to-switch
//! links that is stable under: a link's class is its source switch's and
//! target switch's classes, its capacity, and the destination edge switches
//! it is a candidate next hop for, with the candidate count of each; a
//! switch's class is the edge switch it is (if hosts attach to it) and the
//! classes of its incoming and of its outgoing links. Links that touch a
//! host stay alone. Equivalent switches are then as far from every
//! destination edge (induction on the distance: a candidate leads one hop
//! closer), and along each destination's shortest paths equivalent switches
//! receive equal shares of every source edge's flows (induction from the
//! sources), so equivalent links carry equal shares of every flow: the
//! merge is exact, not an approximation.

use crate::id::{HostId, PortId, SwitchId};
use crate::net::Network;
use std::collections::HashMap;

/// The families of a fabric where every flow is split ([`Classes::build`]).
#[derive(Debug, Default)]
pub struct Classes {
    /// Per port: its class.
    class: Vec<u32>,
    /// Per class: where its members start in `members` (one more entry at
    /// the end); members in port order, the representative first.
    start: Vec<u32>,
    members: Vec<u32>,
    /// Per switch: its class; per switch class: how many switches it has.
    sw_class: Vec<u32>,
    sw_size: Vec<u32>,
    /// Scratch of [`Classes::expand`]: the switches reached at this hop and
    /// the next, one per class, with the share of the flow each receives.
    front: Vec<(u32, f64)>,
    next: Vec<(u32, f64)>,
}

/// Hops a path may have before the walk gives up (a routing loop).
const MAX_HOPS: usize = 64;

impl Classes {
    /// The families of `net`'s links at capacities `cap` (bits/s per port).
    pub fn build(net: &Network, cap: &[f64]) -> Classes {
        let np = net.ports.len();
        let ns = net.switches.len();
        let routes = &net.routes;
        let switch_of = |p: usize| net.switch_of(net.ports[p].node).map(|s| s.ix());
        // Routes go by the destination's edge switch: one host stands for each.
        let mut edge_of = vec![u32::MAX; ns];
        let mut edge_host = Vec::new();
        for (h, s) in routes.attach_switch.iter().enumerate() {
            if edge_of[s.ix()] == u32::MAX {
                edge_of[s.ix()] = edge_host.len() as u32;
                edge_host.push(HostId(h as u32));
            }
        }
        let mut out: Vec<Vec<u32>> = vec![Vec::new(); ns];
        for p in 0..np {
            if let Some(s) = switch_of(p) {
                out[s].push(p as u32);
            }
        }
        let host_side = |p: usize| switch_of(p).is_none() || switch_of(net.ports[p].peer.ix()).is_none();
        // Per port: the destination edges it is a candidate for, with their
        // candidate counts, as an id (equal sets, equal ids).
        let mut groups: HashMap<(Vec<u32>, u32), u32> = HashMap::new();
        let mut port_groups: Vec<Vec<u32>> = vec![Vec::new(); np];
        let mut local: Vec<(&[PortId], Vec<u32>)> = Vec::new();
        for (s, &own) in edge_of.iter().enumerate() {
            local.clear();
            let mut last = 0;
            for (e, &h) in edge_host.iter().enumerate() {
                if own == e as u32 {
                    continue;
                }
                let c = routes.candidates(SwitchId(s as u32), h);
                if c.is_empty() {
                    continue;
                }
                let i = if local.get(last).is_some_and(|x| std::ptr::eq(x.0, c)) {
                    last
                } else if let Some(i) = local.iter().position(|x| std::ptr::eq(x.0, c)) {
                    i
                } else {
                    local.push((c, Vec::new()));
                    local.len() - 1
                };
                local[i].1.push(e as u32);
                last = i;
            }
            for (c, es) in local.drain(..) {
                let n = groups.len() as u32;
                let g = *groups.entry((es, c.len() as u32)).or_insert(n);
                for p in c {
                    port_groups[p.ix()].push(g);
                }
            }
        }
        let mut keys: HashMap<Vec<u32>, u32> = HashMap::new();
        let member: Vec<u32> = port_groups
            .into_iter()
            .map(|mut g| {
                g.sort_unstable();
                let n = keys.len() as u32;
                *keys.entry(g).or_insert(n)
            })
            .collect();
        // Refine until the switches' partition is stable.
        let mut sw: Vec<u32> = edge_of.iter().map(|&e| if e == u32::MAX { 0 } else { e + 1 }).collect();
        let mut n_sw = {
            let mut v = sw.clone();
            v.sort_unstable();
            v.dedup();
            v.len()
        };
        let mut class = vec![0u32; np];
        loop {
            let mut lmap: HashMap<(u32, u32, u32, u64), u32> = HashMap::new();
            let mut n = 0u32;
            for (p, class) in class.iter_mut().enumerate() {
                *class = if host_side(p) {
                    n += 1;
                    n - 1
                } else {
                    let s = switch_of(p).expect("a switch port");
                    let t = switch_of(net.ports[p].peer.ix()).expect("a switch port");
                    *lmap.entry((sw[s], sw[t], member[p], cap[p].to_bits())).or_insert_with(|| {
                        n += 1;
                        n - 1
                    })
                };
            }
            let mut smap: HashMap<(u32, Vec<u32>, Vec<u32>), u32> = HashMap::new();
            let next: Vec<u32> = out
                .iter()
                .zip(&sw)
                .map(|(ports, &was)| {
                    let mut inc: Vec<u32> = ports.iter().map(|&p| class[net.ports[p as usize].peer.ix()]).collect();
                    let mut outc: Vec<u32> = ports.iter().map(|&p| class[p as usize]).collect();
                    inc.sort_unstable();
                    outc.sort_unstable();
                    let k = smap.len() as u32;
                    *smap.entry((was, inc, outc)).or_insert(k)
                })
                .collect();
            let stable = smap.len() == n_sw;
            n_sw = smap.len();
            if stable {
                break;
            }
            sw = next;
        }
        // Classes in order of their first port.
        let mut renum = vec![u32::MAX; np];
        let mut nc = 0u32;
        for c in class.iter_mut() {
            if renum[*c as usize] == u32::MAX {
                renum[*c as usize] = nc;
                nc += 1;
            }
            *c = renum[*c as usize];
        }
        let mut start = vec![0u32; nc as usize + 1];
        for &c in &class {
            start[c as usize + 1] += 1;
        }
        for i in 0..nc as usize {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut members = vec![0u32; np];
        for (p, &c) in class.iter().enumerate() {
            members[fill[c as usize] as usize] = p as u32;
            fill[c as usize] += 1;
        }
        let mut sw_size = vec![0u32; n_sw];
        for &c in &sw {
            sw_size[c as usize] += 1;
        }
        Classes { class, start, members, sw_class: sw, sw_size, front: Vec::new(), next: Vec::new() }
    }

    /// The ports that `link` (a representative) stands for, itself first.
    pub fn members(&self, link: u32) -> &[u32] {
        let c = self.class[link as usize] as usize;
        &self.members[self.start[c] as usize..self.start[c + 1] as usize]
    }

    /// The representative of `port`'s family.
    pub fn rep(&self, port: u32) -> u32 {
        self.members[self.start[self.class[port as usize] as usize] as usize]
    }

    /// Families in all.
    pub fn families(&self) -> usize {
        self.start.len() - 1
    }

    /// A split flow from `src` to `dst` as [`super::paths::expand`] gives
    /// it, one entry per family (its representative, with the share each of
    /// its links carries), into `out` (cleared first), in port order: the
    /// walk visits one switch of each class the flow reaches at each hop.
    pub fn expand(&mut self, net: &Network, src: HostId, dst: HostId, out: &mut Vec<(u32, f64)>) {
        out.clear();
        let first = net.host_port(src);
        out.push((first.0, 1.0));
        let Some(s0) = net.switch_of(net.ports[net.ports[first].peer].node) else { return };
        let (mut front, mut next) = (std::mem::take(&mut self.front), std::mem::take(&mut self.next));
        front.clear();
        front.push((s0.0, 1.0));
        for _ in 0..MAX_HOPS {
            if front.is_empty() {
                break;
            }
            next.clear();
            for &(s, a) in &front {
                let cands = net.routes.candidates(SwitchId(s), dst);
                let w = a / cands.len() as f64;
                let from = out.len();
                for &p in cands {
                    let c = self.class[p.ix()];
                    if out[from..].iter().any(|&(r, _)| self.class[r as usize] == c) {
                        continue;
                    }
                    out.push((self.rep(p.0), w));
                    let Some(t) = net.switch_of(net.ports[net.ports[p].peer].node) else { continue };
                    // Every switch of the target's class has as many links of
                    // this family coming in: each brings it `w`.
                    let tc = self.sw_class[t.ix()];
                    let links = (self.start[c as usize + 1] - self.start[c as usize]) / self.sw_size[tc as usize];
                    let add = w * links as f64;
                    match next.iter_mut().find(|x| self.sw_class[x.0 as usize] == tc) {
                        Some(x) => x.1 += add,
                        None => next.push((t.0, add)),
                    }
                }
            }
            std::mem::swap(&mut front, &mut next);
        }
        (self.front, self.next) = (front, next);
        out.sort_unstable_by_key(|e| e.0);
        debug_assert!(out.windows(2).all(|x| x[0].0 != x[1].0), "a family is met once");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::World;
    use crate::flowsim::paths;
    use crate::flowsim::rates::{Fabric, Share};
    use proptest::prelude::*;

    fn world(topology: &str) -> World {
        let text = format!("name = \"classes\"\nseed = 3\n{topology}\n[switch]\nrouting = \"spray\"\n[[workload]]\nkind = \"permutation\"\nsize = \"1MB\"\n");
        World::new(crate::scenario::load_str(&text, "classes.toml", std::path::Path::new("."), &[], None).expect("scenario"))
    }

    fn caps(net: &Network) -> Vec<f64> {
        net.ports().iter().map(|p| p.rate_bps() as f64).collect()
    }

    const FAT_TREE_4: &str = "[topology]\nkind = \"fat_tree\"\nk = 4\nrate = \"100Gbps\"\ndelay = \"1us\"";
    const FAT_TREE_6: &str = "[topology]\nkind = \"fat_tree\"\nk = 6\nrate = \"100Gbps\"\ndelay = \"1us\"";
    const LEAF_SPINE: &str = "[topology]\nkind = \"leaf_spine\"\nleaves = 4\nspines = 3\nhosts_per_leaf = 3\noversubscription = 2\nrate = \"100Gbps\"\ndelay = \"1us\"";
    /// Two paths of unequal capacity from s0 to s3, a third switch hanging
    /// off s1 with a host, and a longer way round that no flow takes.
    const UNEVEN: &str = r#"[topology]
kind = "custom"
hosts = ["h0", "h1", "h2", "h3", "h4"]
switches = ["s0", "s1", "s2", "s3", "s4", "s5"]
links = [
  { a = "h0", b = "s0", rate = "100Gbps", delay = "1us" },
  { a = "h1", b = "s0", rate = "100Gbps", delay = "1us" },
  { a = "h2", b = "s3", rate = "100Gbps", delay = "1us" },
  { a = "h3", b = "s3", rate = "100Gbps", delay = "1us" },
  { a = "h4", b = "s4", rate = "100Gbps", delay = "1us" },
  { a = "s0", b = "s1", rate = "40Gbps", delay = "1us" },
  { a = "s0", b = "s2", rate = "100Gbps", delay = "1us" },
  { a = "s1", b = "s3", rate = "100Gbps", delay = "1us" },
  { a = "s2", b = "s3", rate = "100Gbps", delay = "1us" },
  { a = "s1", b = "s4", rate = "100Gbps", delay = "1us" },
  { a = "s0", b = "s5", rate = "100Gbps", delay = "1us" },
  { a = "s5", b = "s4", rate = "100Gbps", delay = "1us" },
]"#;

    /// Every family entry of a flow stands for links that each carry its
    /// share in the link-by-link walk, and together they are that walk,
    /// for every pair of hosts.
    #[test]
    fn families_give_every_link_its_share() {
        for (topology, fewer) in [(FAT_TREE_4, true), (FAT_TREE_6, true), (LEAF_SPINE, true), (UNEVEN, false)] {
            let w = world(topology);
            let net = &w.c.net;
            let mut c = Classes::build(net, &caps(net));
            assert!(!fewer || c.families() < net.ports().len(), "{topology}: some links merge");
            let (mut per_link, mut merged) = (Vec::new(), Vec::new());
            let n = net.num_hosts();
            for src in 0..n {
                for dst in (0..n).filter(|&d| d != src) {
                    paths::expand(net, HostId(src), HostId(dst), 0, true, &mut per_link);
                    c.expand(net, HostId(src), HostId(dst), &mut merged);
                    let mut spread: Vec<(u32, f64)> = merged.iter().flat_map(|&(r, x)| c.members(r).iter().map(move |&p| (p, x))).collect();
                    spread.sort_unstable_by_key(|e| e.0);
                    assert_eq!(spread.len(), per_link.len(), "{topology}: {src} -> {dst}");
                    for (a, b) in spread.iter().zip(&per_link) {
                        assert_eq!(a.0, b.0, "{topology}: {src} -> {dst}");
                        assert!((a.1 - b.1).abs() <= 1e-12, "{topology}: {src} -> {dst} on {}: {} against {}", a.0, a.1, b.1);
                    }
                }
            }
        }
    }

    /// Uniform spraying on a k = 4 fat tree: per edge its uplinks and the
    /// links into it, per pod its aggregation uplinks and the core links
    /// into it, each host link alone.
    #[test]
    fn a_fat_tree_merges_by_edge_and_by_pod() {
        let w = world(FAT_TREE_4);
        let net = &w.c.net;
        let c = Classes::build(net, &caps(net));
        assert_eq!(c.families(), 2 * 16 + 2 * 8 + 2 * 4);
        let sizes: Vec<usize> = (0..net.ports().len() as u32).filter(|&p| c.rep(p) == p).map(|p| c.members(p).len()).collect();
        assert_eq!(sizes.iter().filter(|&&s| s == 1).count(), 32);
        assert_eq!(sizes.iter().filter(|&&s| s == 2).count(), 16);
        assert_eq!(sizes.iter().filter(|&&s| s == 4).count(), 8);
    }

    /// A failed link (capacity 0) leaves its family.
    #[test]
    fn a_link_of_another_capacity_stands_alone() {
        let w = world(FAT_TREE_4);
        let net = &w.c.net;
        let mut cap = caps(net);
        let whole = Classes::build(net, &cap);
        let p = (0..net.ports().len() as u32).find(|&p| whole.members(p).len() == 4).expect("a pod's family");
        cap[p as usize] = 0.0;
        let c = Classes::build(net, &cap);
        assert_eq!(c.members(p), &[p]);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
        /// Filling a random set of flows (random pairs, some capped) over
        /// the families gives every flow the rate the link-by-link filling
        /// gives it, and every link its load.
        #[test]
        fn filling_families_equals_filling_links(which in 0usize..4, pairs in proptest::collection::vec((0u32..64, 0u32..64, prop::option::of(1u64..200)), 1..40)) {
            let topology = [FAT_TREE_4, FAT_TREE_6, LEAF_SPINE, UNEVEN][which];
            let w = world(topology);
            let net = &w.c.net;
            let cap = caps(net);
            let mut c = Classes::build(net, &cap);
            let n = net.num_hosts();
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for &(s, d, limit) in &pairs {
                let (s, d) = (s % n, d % n);
                if s == d {
                    continue;
                }
                let limit = limit.map_or(f64::INFINITY, |g| g as f64 * 1e9);
                let mut links = Vec::new();
                paths::expand(net, HostId(s), HostId(d), 0, true, &mut links);
                a.push(Share { links, cap: limit, rate: 0.0 });
                let mut links = Vec::new();
                c.expand(net, HostId(s), HostId(d), &mut links);
                b.push(Share { links, cap: limit, rate: 0.0 });
            }
            let (mut fa, mut fb) = (Fabric::new(cap.clone()), Fabric::new(cap));
            for (i, (x, y)) in a.iter().zip(&b).enumerate() {
                fa.add(i as u32, x);
                fb.add(i as u32, y);
            }
            let set: Vec<u32> = (0..a.len() as u32).collect();
            fa.fill(&set, &mut a, &mut Vec::new());
            fb.fill(&set, &mut b, &mut Vec::new());
            for (x, y) in a.iter().zip(&b) {
                prop_assert!((x.rate - y.rate).abs() <= 1.0 + 1e-9 * x.rate, "{} against {}", x.rate, y.rate);
            }
            for p in 0..net.ports().len() as u32 {
                let merged = fb.load[c.rep(p) as usize];
                prop_assert!((fa.load[p as usize] - merged).abs() <= 1e-6 * fa.cap[p as usize].max(1.0), "link {p}: {} against {merged}", fa.load[p as usize]);
            }
        }
    }
}
