//! A pipelined ring collective at flow level: one fluid transfer per ring
//! edge, channel and iteration instead of a flow per slice and step.
//!
//! Every step of a ring all-reduce, all-gather or reduce-scatter moves one
//! block per channel over every edge at once, so an edge carries the same
//! bytes step after step: as one transfer its rate is the edge's share of
//! its links over the whole operation. What the slices add beyond their
//! bytes is latency: the last step at a rank ends a chain of `steps`
//! dependencies over the edges before it, and on each a step takes the
//! longer of its bytes at the edge's rate and its first slice's time
//! (its first packet's store-and-forward latency, the rest of the slice at
//! the rate). The transfer into rank `r` arrives that chain's latency
//! beyond its bytes (computed on the idle fabric), and iteration `i + 1`
//! of a rank starts `gap` after iteration `i`'s transfers into it arrived.

use crate::id::HostId;
use crate::net::Network;
use crate::workload::collective::coarse::Coarse;

/// The latency the steps add to each transfer beyond its bytes at its
/// rate, in transfer order: over the `steps` edges ending at its
/// receiver, each edge's first-packet store-and-forward latency, on the
/// idle fabric (a step forwards data only once it has arrived; the
/// packet engine's ring pays that latency per step even when slices
/// pipeline: 0.3% of CCT apart at 8 ranks of 32 MB and 64 of 16 MB).
pub fn chain_latencies(c: &Coarse, net: &Network, mtu: u64, header: u64) -> Vec<u64> {
    let p = &c.plan;
    let first_pkt = (mtu + header).min(c.step_wire(mtu, header).1);
    let n = p.n as usize;
    let mut out = Vec::with_capacity(c.len() as usize);
    for (hs, _) in &p.groups {
        // Edge e runs from rank e to e + 1. Each step on it pays its
        // first packet's store-and-forward latency.
        let cost: Vec<u64> = (0..n).map(|e| net.walk_path(HostId(hs[e]), HostId(hs[(e + 1) % n]), first_pkt).latency_ps).collect();
        let lap: u64 = cost.iter().sum();
        // Sums of the costs of edges 0..i, twice around the ring.
        let mut pre = vec![0u64; 2 * n + 1];
        for i in 0..2 * n {
            pre[i + 1] = pre[i] + cost[i % n];
        }
        let (laps, rem) = (p.steps as usize / n, p.steps as usize % n);
        for _ in 0..p.iterations {
            for r in 0..n {
                // The transfer into rank r + 1 ends the chain over edges
                // r, r - 1, ..., r - steps + 1.
                let end = r + n + 1;
                let chain = laps as u64 * lap + pre[end] - pre[end - rem];
                out.extend(std::iter::repeat_n(chain, p.channels as usize));
            }
        }
    }
    out
}
