//! REPS, recycled entropies for packet spraying (the UEC specification's
//! load balancing; the constants are those of htsim's UEC sender). The
//! sender keeps a small ring of entropies that came back on unmarked ACKs
//! and sends each new packet on the oldest fresh one, so packets follow
//! paths that just proved uncongested; with none fresh it draws a random
//! entropy among `evs`, exploring.
//!
//! Freezing: on a retransmission timeout (a path may have failed) the ring
//! stops forgetting: the sender cycles through the entropies it holds,
//! fresh or not, until `exit_freeze_after` has passed; then the ring is
//! cleared and the next `explore` packets draw at random.

use super::{ConfigError, Feedback, Scheme, Setup};
use crate::rng::Stream;

/// `[transport.reps]`, with htsim's defaults.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RepsConfig {
    /// Entropies a flow draws from (htsim's `path_entropy_size`).
    pub evs: u32,
    /// Ring size: entropies remembered (htsim's `repsBufferSize`).
    pub buffer: u16,
    /// Enter the frozen mode on a timeout (htsim's `repsUseFreezing`).
    pub freezing: bool,
    /// How long the frozen mode lasts, in ps (htsim's `exit_freeze_after`).
    pub exit_freeze_after: crate::units::Time,
    /// Random draws after the frozen mode ends (htsim's explore counter).
    pub explore: u16,
}

impl Default for RepsConfig {
    fn default() -> Self {
        RepsConfig { evs: 64, buffer: 8, freezing: true, exit_freeze_after: crate::units::Time::ms(10), explore: 16 }
    }
}

/// The checks of `[transport.reps]` (also read by `oblivious`, which needs
/// a power of two); keys are relative to `[transport]`.
pub fn check_section(c: &RepsConfig, power_of_two: bool) -> Result<(), ConfigError> {
    if c.evs == 0 || (power_of_two && !c.evs.is_power_of_two()) {
        return Err(("reps.evs".into(), format!("evs must be a power of two for oblivious spraying and at least 1, got {}", c.evs)));
    }
    if c.buffer == 0 {
        return Err(("reps.buffer".into(), "buffer must be at least 1".into()));
    }
    Ok(())
}

impl Scheme for Reps {
    const NAME: &'static str = "reps";
    const ABOUT: &'static str = "REPS: each packet on an entropy recycled from an unmarked ACK, else a random one ([transport.reps])";
    const SECTION: Option<&'static str> = Some("reps");
    type Config = RepsConfig;
    fn check(c: &RepsConfig, _s: &Setup) -> Result<(), ConfigError> {
        check_section(c, false)
    }
    fn start(c: &RepsConfig, _rng: &mut Stream) -> Self {
        Reps::new(*c)
    }
    #[inline]
    fn next_ev(&mut self, _now: u64, rng: &mut Stream) -> u32 {
        Reps::next(self, rng)
    }
    #[inline]
    fn on_feedback(&mut self, now: u64, ev: u32, fb: Feedback) {
        Reps::on_feedback(self, now, ev, fb)
    }
    fn on_timeout(&mut self, now: u64) {
        Reps::on_timeout(self, now)
    }
}

/// One flow's REPS state. The ring is allocated once, at the flow's start.
#[derive(Clone, Debug)]
pub struct Reps {
    cfg: RepsConfig,
    ring: Vec<(u32, bool)>,
    /// Next slot to write.
    head: usize,
    /// Slots written (at most the ring's size).
    count: usize,
    /// Valid (fresh) slots: the newest `fresh` written.
    fresh: usize,
    frozen: bool,
    frozen_head: usize,
    freeze_until: u64,
    explore_left: u16,
}

impl Reps {
    pub fn new(cfg: RepsConfig) -> Reps {
        let n = cfg.buffer.max(1) as usize;
        Reps { cfg, ring: vec![(0, false); n], head: 0, count: 0, fresh: 0, frozen: false, frozen_head: 0, freeze_until: 0, explore_left: 0 }
    }

    pub fn frozen(&self) -> bool {
        self.frozen
    }

    /// Fresh entropies held.
    pub fn fresh(&self) -> usize {
        self.fresh
    }

    /// An ACK (or NACK) came back for a packet sent on `ev`.
    pub fn on_feedback(&mut self, now: u64, ev: u32, fb: Feedback) {
        self.maybe_thaw(now);
        if fb == Feedback::Good {
            let n = self.ring.len();
            if !self.ring[self.head].1 {
                self.fresh = (self.fresh + 1).min(n);
            }
            self.ring[self.head] = (ev, true);
            self.head = (self.head + 1) % n;
            self.count = (self.count + 1).min(n);
        }
    }

    /// A retransmission timeout: freeze, unless frozen or exploring.
    pub fn on_timeout(&mut self, now: u64) {
        if self.cfg.freezing && !self.frozen && self.explore_left == 0 {
            self.frozen = true;
            self.freeze_until = now.saturating_add(self.cfg.exit_freeze_after.0);
        }
        self.maybe_thaw(now);
    }

    /// htsim leaves the frozen mode on the first feedback after its end.
    fn maybe_thaw(&mut self, now: u64) {
        if self.frozen && now > self.freeze_until {
            self.frozen = false;
            self.ring.iter_mut().for_each(|s| *s = (0, false));
            (self.head, self.count, self.fresh, self.frozen_head) = (0, 0, 0, 0);
            self.explore_left = self.cfg.explore;
        }
    }

    /// The entropy value (0 .. evs) of the next packet.
    pub fn next(&mut self, rng: &mut Stream) -> u32 {
        let n = self.ring.len();
        if self.explore_left > 0 {
            self.explore_left -= 1;
            return rng.below(self.cfg.evs as u64) as u32;
        }
        if self.frozen {
            if self.count == 0 {
                return rng.below(self.cfg.evs as u64) as u32;
            }
            // Cycle through what the ring holds, fresh or not.
            let (ev, valid) = self.ring[self.frozen_head];
            if valid {
                self.fresh -= 1;
                self.ring[self.frozen_head].1 = false;
            }
            self.frozen_head = (self.frozen_head + 1) % self.count;
            return ev;
        }
        if self.fresh == 0 {
            return rng.below(self.cfg.evs as u64) as u32;
        }
        // The oldest fresh entropy: `fresh` slots behind the head.
        let i = (self.head + n - self.fresh) % n;
        self.ring[i].1 = false;
        self.fresh -= 1;
        self.ring[i].0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Purpose;

    fn reps() -> (Reps, Stream) {
        (Reps::new(RepsConfig::default()), Stream::new(1, 0, Purpose::HostEntropy))
    }

    #[test]
    fn recycles_unmarked_entropies_oldest_first_once_each() {
        let (mut r, mut rng) = reps();
        for ev in [5, 9, 12] {
            r.on_feedback(0, ev, Feedback::Good);
        }
        r.on_feedback(0, 40, Feedback::Marked);
        r.on_feedback(0, 41, Feedback::Nack);
        assert_eq!(r.fresh(), 3);
        assert_eq!([r.next(&mut rng), r.next(&mut rng), r.next(&mut rng)], [5, 9, 12]);
        assert_eq!(r.fresh(), 0);
        // Nothing fresh: random draws among the 64 entropies.
        let draws: Vec<u32> = (0..200).map(|_| r.next(&mut rng)).collect();
        assert!(draws.iter().all(|&e| e < 64));
        assert!(draws.iter().collect::<std::collections::BTreeSet<_>>().len() > 40);
    }

    #[test]
    fn the_ring_keeps_the_newest_eight() {
        let (mut r, mut rng) = reps();
        for ev in 0..11 {
            r.on_feedback(0, ev, Feedback::Good);
        }
        assert_eq!(r.fresh(), 8);
        let got: Vec<u32> = (0..8).map(|_| r.next(&mut rng)).collect();
        assert_eq!(got, [3, 4, 5, 6, 7, 8, 9, 10]);
    }

    #[test]
    fn interleaved_acks_and_sends_follow_the_fifo() {
        let (mut r, mut rng) = reps();
        r.on_feedback(0, 1, Feedback::Good);
        r.on_feedback(0, 2, Feedback::Good);
        assert_eq!(r.next(&mut rng), 1);
        r.on_feedback(0, 3, Feedback::Good);
        assert_eq!(r.next(&mut rng), 2);
        assert_eq!(r.next(&mut rng), 3);
    }

    #[test]
    fn a_timeout_freezes_the_ring_then_explores() {
        let (mut r, mut rng) = reps();
        for ev in [7, 8, 9] {
            r.on_feedback(0, ev, Feedback::Good);
        }
        r.on_timeout(1_000);
        assert!(r.frozen());
        // Frozen: cycle through the held entropies, even once used.
        let got: Vec<u32> = (0..7).map(|_| r.next(&mut rng)).collect();
        assert_eq!(got, [7, 8, 9, 7, 8, 9, 7]);
        // Feedback during the freeze is still recorded.
        r.on_feedback(2_000, 20, Feedback::Good);
        assert!(r.frozen());
        // The first feedback after 10 ms ends it: the ring is cleared and the
        // next 16 packets explore, then the ring is used again.
        r.on_feedback(1_000 + 10_000_000_001, 30, Feedback::Good);
        assert!(!r.frozen());
        assert_eq!(r.fresh(), 1);
        for _ in 0..16 {
            assert!(r.next(&mut rng) < 64);
        }
        assert_eq!(r.fresh(), 1, "exploring draws leave the ring alone");
        assert_eq!(r.next(&mut rng), 30);
        // No freeze while exploring.
        r.on_timeout(20_000_000_000);
        assert!(r.frozen(), "explore count spent: the timeout freezes");
    }

    #[test]
    fn no_freezing_when_disabled() {
        let mut r = Reps::new(RepsConfig { freezing: false, ..Default::default() });
        r.on_timeout(5);
        assert!(!r.frozen());
    }
}
