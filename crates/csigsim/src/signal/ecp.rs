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
//! probability on the root's queue) only when they join a root's queue; a
//! congesting flow is marked at its root, a victim that never crosses a root is
//! never marked.

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
    fn roots_are_long_queues_that_are_free_to_drain() {
        assert!(is_root(20_000, 15_000, false, None, 100, 20));
        assert!(!is_root(10_000, 15_000, false, None, 100, 20), "short queue");
        assert!(!is_root(20_000, 15_000, true, None, 100, 20), "paused: a branch");
        assert!(!is_root(20_000, 15_000, false, Some(90), 100, 20), "paused moments ago: a branch");
        assert!(is_root(20_000, 15_000, false, Some(70), 100, 20));
    }
}
