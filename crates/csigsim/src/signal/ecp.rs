//! Enhanced congestion point (the ECP of DCQCN-Rev): ECN marking that tells
//! the packets contributing to congestion from the victims that merely share
//! a congested buffer.
//!
//! The source gives the goal, not the mechanism; csigsim's design
//! (docs/signals.md): an egress port is the *root* of a congestion tree when
//! its data queue is at or above `root_threshold` while the port itself is
//! free to transmit, that is, it has not been paused by PFC within the last
//! `pause_memory`. A port whose queue is long because the next hop pauses it
//! is a *branch*: the packets queued there are waiting for someone else's
//! congestion, and some of them are victims. Packets are marked (with the RED
//! probability on the root's queue) only when they join a root's queue, and
//! only if their flow occupies at least its fair share of that queue
//! (`fair_share` x queue bytes / flows in the queue): a flow sending below its
//! fair share of the root is not what congests it. A congesting flow is marked
//! at its root; a victim that never crosses a root, or crosses it below its
//! fair share, is not marked. Each port tracks the flows in its queue in a
//! small table (`max_flows` entries; flows beyond it are not tracked and not
//! marked).

use crate::id::FlowId;

/// The flows in one egress queue and their queued bytes.
#[derive(Clone, Debug, Default)]
pub struct Occupancy {
    entries: Vec<(FlowId, u64)>,
}

impl Occupancy {
    /// Bytes `flow` has in the queue.
    #[inline]
    pub fn bytes(&self, flow: FlowId) -> u64 {
        self.entries.iter().find(|e| e.0 == flow).map_or(0, |e| e.1)
    }

    pub fn flows(&self) -> usize {
        self.entries.len()
    }

    #[inline]
    pub fn add(&mut self, flow: FlowId, bytes: u64, max_flows: usize) {
        if let Some(e) = self.entries.iter_mut().find(|e| e.0 == flow) {
            e.1 += bytes;
        } else if self.entries.len() < max_flows {
            self.entries.push((flow, bytes));
        }
    }

    #[inline]
    pub fn remove(&mut self, flow: FlowId, bytes: u64) {
        if let Some(i) = self.entries.iter().position(|e| e.0 == flow) {
            let e = &mut self.entries[i];
            e.1 = e.1.saturating_sub(bytes);
            if e.1 == 0 {
                self.entries.swap_remove(i);
            }
        }
    }

    /// Does `flow` hold at least `factor` times its fair share of `queue_bytes`?
    #[inline]
    pub fn contributes(&self, flow: FlowId, queue_bytes: u64, factor: f64) -> bool {
        let n = self.entries.len().max(1) as f64;
        self.bytes(flow) as f64 * n >= factor * queue_bytes as f64
    }
}

impl Occupancy {
    /// The fair share of a root's capacity for each contributor: the bytes of
    /// the flows below their fair share of the queue (and of untracked flows)
    /// stand for the capacity those flows keep; the rest is split evenly among
    /// the contributors (one water-filling step: a FIFO queue's composition
    /// follows its arrival rates). `None` when no flow contributes.
    pub fn contributor_share(&self, queue_bytes: u64, factor: f64, rate_bps: u64) -> Option<u64> {
        if queue_bytes == 0 {
            return None;
        }
        let (mut n, mut bytes) = (0u64, 0u64);
        for &(flow, b) in &self.entries {
            if self.contributes(flow, queue_bytes, factor) {
                n += 1;
                bytes += b;
            }
        }
        if n == 0 {
            return None;
        }
        let frac = (bytes as f64 / queue_bytes as f64).min(1.0);
        Some((rate_bps as f64 * frac / n as f64) as u64)
    }
}

/// How far below its fair share a contributor should send so that the
/// root's queue above `threshold` drains in about `drain_time`:
/// 1 / (1 + excess / (rate x drain_time)), HPCC's normalization of a standing
/// queue by the bytes one base RTT carries.
pub fn drain_factor(queue_bytes: u64, threshold: u64, rate_bps: u64, drain_time_ps: u64) -> f64 {
    let excess = queue_bytes.saturating_sub(threshold) as f64;
    let per_drain_time = rate_bps as f64 * drain_time_ps as f64 / 8e12;
    1.0 / (1.0 + excess / per_drain_time.max(1.0))
}

/// Whether an egress port is a congestion root now.
#[inline]
pub fn is_root(queue_bytes: u64, root_threshold: u64, paused: bool, last_pause_end_ps: Option<u64>, now: u64, pause_memory: u64) -> bool {
    if paused || queue_bytes < root_threshold {
        return false;
    }
    match last_pause_end_ps {
        Some(t) => now.saturating_sub(t) >= pause_memory,
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occupancy_tracks_flows_and_fair_shares() {
        let mut o = Occupancy::default();
        o.add(FlowId(1), 100, 3);
        o.add(FlowId(2), 100, 3);
        o.add(FlowId(3), 25, 3);
        o.add(FlowId(4), 999, 3); // table full: not tracked
        assert_eq!(o.flows(), 3);
        assert!(o.contributes(FlowId(1), 225, 1.0));
        assert!(!o.contributes(FlowId(3), 225, 1.0));
        assert!(!o.contributes(FlowId(4), 225, 1.0));
        o.remove(FlowId(3), 25);
        assert_eq!(o.flows(), 2);
        assert_eq!(o.bytes(FlowId(3)), 0);
    }

    #[test]
    fn contributors_split_what_the_others_leave() {
        let mut o = Occupancy::default();
        // Two heavy flows (40 KB each) and one light one (20 KB): fair share of
        // the queue is 100/3 KB, so the light flow is not a contributor and
        // keeps a fifth of the capacity; the heavy ones split four fifths.
        o.add(FlowId(1), 40_000, 8);
        o.add(FlowId(2), 40_000, 8);
        o.add(FlowId(3), 20_000, 8);
        assert_eq!(o.contributor_share(100_000, 1.0, 100_000_000_000), Some(40_000_000_000));
        // Equal flows: the capacity split evenly.
        let mut e = Occupancy::default();
        for f in 0..4 {
            e.add(FlowId(f), 25_000, 8);
        }
        assert_eq!(e.contributor_share(100_000, 1.0, 100_000_000_000), Some(25_000_000_000));
        // Bytes of untracked flows count as capacity they keep.
        assert_eq!(e.contributor_share(200_000, 1.0, 100_000_000_000), None, "no tracked flow holds its fair share of 200 KB");
        assert_eq!(Occupancy::default().contributor_share(0, 1.0, 1), None);
    }

    #[test]
    fn the_drain_factor_normalizes_the_excess_by_one_drain_time() {
        // 100 Gb/s x 10 us = 125 KB: an excess of 125 KB halves the advice.
        assert_eq!(drain_factor(140_000, 15_000, 100_000_000_000, 10_000_000), 0.5);
        assert_eq!(drain_factor(10_000, 15_000, 100_000_000_000, 10_000_000), 1.0);
        assert!((drain_factor(15_000 + 1_250_000, 15_000, 100_000_000_000, 10_000_000) - 1.0 / 11.0).abs() < 1e-12);
    }

    #[test]
    fn roots_are_long_queues_that_are_free_to_drain() {
        assert!(is_root(20_000, 15_000, false, None, 100, 20));
        assert!(!is_root(10_000, 15_000, false, None, 100, 20), "short queue");
        assert!(!is_root(20_000, 15_000, true, None, 100, 20), "paused: a branch");
        assert!(!is_root(20_000, 15_000, false, Some(90), 100, 20), "paused moments ago: a branch");
        assert!(is_root(20_000, 15_000, false, Some(70), 100, 20));
    }
}
