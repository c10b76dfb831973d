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

/// Wall-clock seconds of one stretch of the progress [`Guard`].
pub const GUARD_WALL_S: u64 = 10;

/// The progress guard: a run whose simulated time advances by less than
/// `min_ps_per_s` picoseconds per second of wall time, over a stretch of
/// [`GUARD_WALL_S`] seconds, is ended (`end_reason = "too_slow"`) with a
/// diagnosis instead of running for hours. It reads the wall clock, so
/// whether it ends a run depends on the machine; it never changes an
/// output of a run it lets finish.
#[derive(Clone, Debug)]
pub struct Guard {
    min_ps_per_s: u64,
    /// Wall seconds of a stretch ([`GUARD_WALL_S`]).
    stretch_s: f64,
    since: std::time::Instant,
    /// Simulated time and counters at the start of the stretch.
    at_ps: u64,
    timeouts: u64,
    delivered: u64,
    /// The stretch that failed: its wall seconds.
    failed_s: f64,
}

impl Guard {
    /// A guard (none when `min_ps_per_s` is zero) whose first stretch
    /// starts now, at simulated time `now` with counters `s`.
    pub fn new(min_ps_per_s: u64, now: u64, s: &crate::sim::Stats) -> Guard {
        Guard::with_stretch(min_ps_per_s, GUARD_WALL_S as f64, now, s)
    }

    /// A guard whose stretches last `stretch_s` wall seconds.
    pub fn with_stretch(min_ps_per_s: u64, stretch_s: f64, now: u64, s: &crate::sim::Stats) -> Guard {
        Guard { min_ps_per_s, stretch_s, since: std::time::Instant::now(), at_ps: now, timeouts: s.timeouts, delivered: s.data_packets_delivered, failed_s: 0.0 }
    }

    /// Called between chunks of events: whether the run is too slow.
    pub fn check(&mut self, now: u64, s: &crate::sim::Stats) -> bool {
        if self.min_ps_per_s == 0 {
            return false;
        }
        let wall = self.since.elapsed().as_secs_f64();
        if wall < self.stretch_s {
            return false;
        }
        if (now.saturating_sub(self.at_ps) as f64) < self.min_ps_per_s as f64 * wall {
            self.failed_s = wall;
            return true;
        }
        *self = Guard::with_stretch(self.min_ps_per_s, self.stretch_s, now, s);
        false
    }

    /// What the failed stretch did, naming `transport.rto` when timeouts
    /// outnumbered the data packets delivered.
    pub fn diagnosis(&self, now: u64, s: &crate::sim::Stats) -> crate::budget::Limit {
        let us = |ps: u64| format!("{:.3} us", ps as f64 / 1e6);
        let timeouts = s.timeouts - self.timeouts;
        let delivered = s.data_packets_delivered - self.delivered;
        let key = (timeouts > delivered).then(|| "transport.rto".to_string());
        let cause = match key {
            Some(_) => "retransmission timeouts outnumber the data packets delivered: transport.rto is too short for this fabric",
            None => "the fabric or its timers make events faster than simulated time passes",
        };
        crate::budget::Limit {
            key,
            message: format!(
                "the run advanced {} of simulated time (from {} to {}) in {:.1} s of wall time, less than {} per second (--min-progress): {timeouts} timeouts and {delivered} data packets delivered in that stretch; {cause}",
                us(now.saturating_sub(self.at_ps)),
                us(self.at_ps),
                us(now),
                self.failed_s,
                us(self.min_ps_per_s),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Stats;

    #[test]
    fn the_guard_ends_a_run_slower_than_its_bound_and_names_the_rto() {
        let s0 = Stats::default();
        // Off: never.
        let mut off = Guard::with_stretch(0, 0.0, 0, &s0);
        assert!(!off.check(0, &s0));
        // A stretch not yet over: nothing is judged.
        let mut g = Guard::with_stretch(u64::MAX, 3600.0, 0, &s0);
        assert!(!g.check(1, &s0));
        // Over: one picosecond in any wall time is below a second per second.
        let mut g = Guard::with_stretch(crate::units::PS_PER_S, 0.0, 0, &s0);
        let s = Stats { timeouts: 50, data_packets_delivered: 3, ..Stats::default() };
        assert!(g.check(1, &s));
        let d = g.diagnosis(1, &s);
        assert_eq!(d.key.as_deref(), Some("transport.rto"));
        assert!(d.message.contains("50 timeouts and 3 data packets"), "{}", d.message);
        // Timeouts that do not dominate name no key.
        let s = Stats { timeouts: 1, data_packets_delivered: 3, ..Stats::default() };
        assert_eq!(g.diagnosis(1, &s).key, None);
        // Fast enough: the stretch starts again from here.
        let mut g = Guard::with_stretch(1, 0.0, 0, &s0);
        assert!(!g.check(u64::MAX / 2, &s0));
        assert_eq!(g.at_ps, u64::MAX / 2);
    }

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
