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

/// The flows in one egress queue and their queued bytes.
#[derive(Clone, Debug, Default)]
pub struct Occupancy {
    entries: Vec<(u32, u64)>,
}

impl Occupancy {
    /// Bytes `flow` has in the queue.
    #[inline]
    pub fn bytes(&self, flow: u32) -> u64 {
        self.entries.iter().find(|e| e.0 == flow).map_or(0, |e| e.1)
    }

    pub fn flows(&self) -> usize {
        self.entries.len()
    }

    #[inline]
    pub fn add(&mut self, flow: u32, bytes: u64, max_flows: usize) {
        if let Some(e) = self.entries.iter_mut().find(|e| e.0 == flow) {
            e.1 += bytes;
        } else if self.entries.len() < max_flows {
            self.entries.push((flow, bytes));
        }
    }

    #[inline]
    pub fn remove(&mut self, flow: u32, bytes: u64) {
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
    pub fn contributes(&self, flow: u32, queue_bytes: u64, factor: f64) -> bool {
        let n = self.entries.len().max(1) as f64;
        self.bytes(flow) as f64 * n >= factor * queue_bytes as f64
    }
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
        o.add(1, 100, 3);
        o.add(2, 100, 3);
        o.add(3, 25, 3);
        o.add(4, 999, 3); // table full: not tracked
        assert_eq!(o.flows(), 3);
        assert!(o.contributes(1, 225, 1.0));
        assert!(!o.contributes(3, 225, 1.0));
        assert!(!o.contributes(4, 225, 1.0));
        o.remove(3, 25);
        assert_eq!(o.flows(), 2);
        assert_eq!(o.bytes(3), 0);
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
