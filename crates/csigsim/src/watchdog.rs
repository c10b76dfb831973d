//! The progress watchdog. The run loop pauses every [`crate::CHUNK_EVENTS`]
//! events; at each pause [`Watchdog::check`] compares the data packets
//! delivered so far and the simulated time with their values at the last
//! progress. The loop also pauses at [`Watchdog::deadline`], `monitor.stall`
//! of simulated time after the last progress. When started flows remain
//! unfinished and no data packet has reached a receiver for `monitor.stall`,
//! the run is stalled. Nothing is checked per packet, so a stall is seen at
//! the first pause after it has lasted `monitor.stall`: up to one chunk of
//! events or one more `monitor.stall` late.

use crate::engine::World;

/// The run's counters at the last progress: what the diagnosis compares
/// with the end of the run to name what happened in the stalled stretch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mark {
    /// Simulated time of the pause that last saw progress (or no started,
    /// unfinished flow).
    pub at_ps: u64,
    pub data_packets_delivered: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub nacks_sent: u64,
    pub packets_trimmed: u64,
    pub packets_dropped: u64,
    pub pauses_sent: u64,
}

impl Mark {
    pub fn take(w: &World) -> Mark {
        Mark::of(w.now(), w.stats())
    }

    /// The mark of a run at `now` with counters `s`.
    pub fn of(now: u64, s: &crate::sim::Stats) -> Mark {
        Mark {
            at_ps: now,
            data_packets_delivered: s.data_packets_delivered,
            retransmits: s.retransmits,
            timeouts: s.timeouts,
            nacks_sent: s.nacks_sent,
            packets_trimmed: s.packets_trimmed,
            packets_dropped: s.packets_dropped,
            pauses_sent: s.pauses_sent,
        }
    }
}

/// Watches a run for progress; see the module documentation.
#[derive(Clone, Debug)]
pub struct Watchdog {
    stall_ps: u64,
    mark: Mark,
    /// Where the current stretch without progress began.
    since: u64,
}

impl Watchdog {
    /// A watchdog that calls a run stalled after `stall_ps` without progress
    /// (never when `stall_ps` is zero).
    pub fn new(w: &World, stall_ps: u64) -> Watchdog {
        let mark = Mark::take(w);
        Watchdog { stall_ps, since: mark.at_ps, mark }
    }

    /// Called between chunks of events: whether the run has stalled.
    pub fn check(&mut self, w: &World) -> bool {
        self.check_at(w, w.now())
    }

    /// [`Watchdog::check`] at `seen`: every event of the run up to `seen`
    /// has run (later than [`World::now`], the last event's time, when the
    /// run paused at [`Watchdog::deadline`] with nothing to do before it).
    pub fn check_at(&mut self, w: &World, seen: u64) -> bool {
        // A stretch without delivery starts no earlier than the first start
        // of a flow still waiting for one: a flow that starts after a long
        // idle time is not stalled by the idle time before it.
        let first_start = || w.flow_store().first_unfinished_start();
        self.check_counts(seen, w.stats(), first_start)
    }

    /// [`Watchdog::check`] on a run at `now` with counters `s`;
    /// `first_start` answers when the earliest started and unfinished flow
    /// started. It is asked only when no data packet was delivered since
    /// the last progress: it reads the flows in progress (every flow's
    /// record where states are kept to the end, as in a joined parallel
    /// run), and reading every flow at every look cost about a quarter of
    /// the run on a collective of 2.1 M flows.
    pub fn check_counts(&mut self, now: u64, s: &crate::sim::Stats, first_start: impl FnOnce() -> Option<u64>) -> bool {
        let stuck = s.data_packets_delivered == self.mark.data_packets_delivered;
        let Some(first_start) = stuck.then(first_start).flatten() else {
            self.mark = Mark::of(now, s);
            self.since = self.mark.at_ps;
            return false;
        };
        self.since = self.mark.at_ps.max(first_start);
        self.stall_ps > 0 && now - self.since >= self.stall_ps
    }

    /// The simulated time by which the next check is due (the run loop
    /// pauses there too, so a stall is seen within two `monitor.stall` of
    /// the last delivery however sparse the events), or `None` when off.
    pub fn deadline(&self) -> Option<u64> {
        (self.stall_ps > 0).then(|| self.since.saturating_add(self.stall_ps))
    }

    /// The counters at the last progress.
    pub fn mark(&self) -> &Mark {
        &self.mark
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Stats;

    fn watchdog(stall_ps: u64) -> Watchdog {
        Watchdog { stall_ps, mark: Mark::default(), since: 0 }
    }

    #[test]
    fn the_flows_are_read_only_when_nothing_was_delivered() {
        let mut w = watchdog(100);
        let mut s = Stats { data_packets_delivered: 1, ..Stats::default() };
        // Progress: the first start is not asked for, and the mark moves.
        assert!(!w.check_counts(50, &s, || panic!("read the flows although data was delivered")));
        assert_eq!(w.mark().at_ps, 50);
        // No progress, a flow unfinished since 60: stalled 100 ps after 60.
        let mut asked = 0;
        assert!(!w.check_counts(120, &s, || {
            asked += 1;
            Some(60)
        }));
        assert_eq!(w.deadline(), Some(160));
        assert!(w.check_counts(160, &s, || {
            asked += 1;
            Some(60)
        }));
        assert_eq!(asked, 2);
        // No unfinished flow: progress, whatever was delivered.
        assert!(!w.check_counts(400, &s, || None));
        assert_eq!(w.mark().at_ps, 400);
        s.data_packets_delivered += 1;
        assert!(!w.check_counts(600, &s, || panic!("read the flows although data was delivered")));
        assert_eq!(w.mark().data_packets_delivered, 2);
    }
}
