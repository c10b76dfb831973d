//! A flow's links as the routing sends it: per-flow hashing (ECMP) and
//! D-mod-K pick one next hop per switch, as the packet engine does for the
//! flow's entropy; per-packet policies (spray, adaptive, round robin) and
//! host-side entropy schemes spread the flow evenly over the equal-cost
//! next hops of every switch (a fluid split). Also the first packet's
//! store-and-forward latency along the path.

use crate::id::{HostId, PortId};
use crate::lb::RoutingPolicy;
use crate::net::Network;

/// Hops a path may have before the walk gives up (a routing loop).
const MAX_HOPS: usize = 64;

/// The links of a flow from `src` to `dst` and the share of its rate each
/// carries, into `out` (cleared first). `entropy`: the flow's ECMP
/// entropy; `split`: spread over equal-cost next hops whatever the
/// switch's policy (the host varies the entropy per packet).
pub fn expand(net: &Network, src: HostId, dst: HostId, entropy: u32, split: bool, out: &mut Vec<(u32, f64)>) {
    out.clear();
    let mut front: Vec<(PortId, f64)> = vec![(net.host_port(src), 1.0)];
    let mut next: Vec<(PortId, f64)> = Vec::new();
    for _ in 0..MAX_HOPS {
        if front.is_empty() {
            break;
        }
        next.clear();
        for &(port, w) in &front {
            out.push((port.0, w));
            let p = &net.ports[port];
            let Some(sw) = net.switch_of(net.ports[p.peer].node) else { continue };
            let cands = net.routes.candidates(sw, dst);
            let s = &net.switches[sw];
            let one = match s.routing {
                RoutingPolicy::Ecmp | RoutingPolicy::Deterministic if !split => {
                    crate::lb::predict(s.routing, cands, entropy, dst.0, s.hash_salt, s.dmodk_divisor, &s.spray_rng)
                }
                _ if cands.len() == 1 => Some(cands[0]),
                _ => None,
            };
            match one {
                Some(c) => next.push((c, w)),
                None => {
                    let part = w / cands.len() as f64;
                    next.extend(cands.iter().map(|&c| (c, part)));
                }
            }
        }
        // Paths that meet again share the link: one entry, shares summed.
        next.sort_unstable_by_key(|e| e.0);
        next.dedup_by(|b, a| {
            if a.0 == b.0 {
                a.1 += b.1;
                true
            } else {
                false
            }
        });
        std::mem::swap(&mut front, &mut next);
    }
    out.sort_unstable_by_key(|e| e.0);
    out.dedup_by(|b, a| {
        if a.0 == b.0 {
            a.1 += b.1;
            true
        } else {
            false
        }
    });
}

/// Store-and-forward latency of one packet of `bytes` along the flow's
/// path (its first path where it is split: equal-cost paths have equal
/// hops on the fabrics this models), propagation included.
pub fn first_packet_latency(net: &Network, src: HostId, dst: HostId, entropy: u32, split: bool, bytes: u64) -> u64 {
    let mut port = net.host_port(src);
    let mut lat = 0;
    for _ in 0..MAX_HOPS {
        let p = &net.ports[port];
        lat += crate::units::tx_time_ps(bytes, p.rate_bps) + p.delay_ps;
        let Some(sw) = net.switch_of(net.ports[p.peer].node) else { break };
        let cands = net.routes.candidates(sw, dst);
        let s = &net.switches[sw];
        port = match s.routing {
            RoutingPolicy::Ecmp | RoutingPolicy::Deterministic if !split => {
                crate::lb::predict(s.routing, cands, entropy, dst.0, s.hash_salt, s.dmodk_divisor, &s.spray_rng).unwrap_or(cands[0])
            }
            _ => cands[0],
        };
    }
    lat
}
