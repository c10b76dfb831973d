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
//!
//! With nothing fresh, `fallback = "bitmap"` (htsim's default load
//! balancing, `mixed`) walks the entropies as oblivious spraying does but
//! skips those whose ACKs came back marked or NACKed lately: each keeps a
//! penalty (1 per mark, 4 per NACK, at most 15) that the walk pays off one
//! step each time it passes over it. `"random"` (htsim's `reps`) draws one.

use super::{ConfigError, Feedback, Scheme, Setup};
use crate::rng::Stream;

/// What a packet takes when the ring holds nothing fresh.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fallback {
    /// The next entropy of an oblivious walk that skips penalised ones
    /// (htsim's `mixed`, its default).
    #[default]
    Bitmap,
    /// A uniform draw among `evs` (htsim's `reps`).
    Random,
}

/// `[transport.reps]`, with htsim's defaults.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RepsConfig {
    /// Entropies a flow draws from (htsim's `path_entropy_size`).
    pub evs: u32,
    /// Ring size: entropies remembered (htsim's `repsBufferSize`).
    pub buffer: u16,
    /// With nothing fresh in the ring: the penalty bitmap's walk or a draw.
    pub fallback: Fallback,
    /// Enter the frozen mode on a timeout (htsim's `repsUseFreezing`).
    pub freezing: bool,
    /// How long the frozen mode lasts, in ps (htsim's `exit_freeze_after`).
    pub exit_freeze_after: crate::units::Time,
    /// Random draws after the frozen mode ends (htsim's explore counter).
    pub explore: u16,
}

impl Default for RepsConfig {
    fn default() -> Self {
        RepsConfig { evs: 64, buffer: 8, fallback: Fallback::Bitmap, freezing: true, exit_freeze_after: crate::units::Time::ms(10), explore: 16 }
    }
}

/// The checks of `[transport.reps]` (also read by `oblivious`, which needs
/// a power of two); keys are relative to `[transport]`.
pub fn check_section(c: &RepsConfig, power_of_two: bool) -> Result<(), ConfigError> {
    if c.evs == 0 || (power_of_two && !c.evs.is_power_of_two()) {
        return Err(("reps.evs".into(), format!("evs must be at least 1, and a power of two for oblivious spraying and for REPS's bitmap (fallback = \"bitmap\"), got {}", c.evs)));
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
        // The bitmap's walk is oblivious spraying's: `i XOR x` over a power of two.
        check_section(c, c.fallback == Fallback::Bitmap)
    }
    fn start(c: &RepsConfig, rng: &mut Stream) -> Self {
        Reps::new(*c, rng)
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
    /// `fallback = "bitmap"`: the walk and its penalties.
    bitmap: Option<Bitmap>,
}

/// The penalty bitmap of htsim's default load balancing: an oblivious walk
/// over the `evs` entropies (`i XOR x`, `x` drawn per round) that skips an
/// entropy while it carries a penalty.
#[derive(Clone, Debug)]
pub struct Bitmap {
    walk: super::oblivious::Oblivious,
    penalty: Vec<u8>,
}

/// A mark adds 1, a NACK 4; no entropy carries more than 15.
const MARK_PENALTY: u8 = 1;
const NACK_PENALTY: u8 = 4;
const MAX_PENALTY: u8 = 15;

impl Bitmap {
    pub fn new(evs: u32, rng: &mut Stream) -> Bitmap {
        Bitmap { walk: super::oblivious::Oblivious::new(evs, rng), penalty: vec![0; evs as usize] }
    }

    fn on_feedback(&mut self, ev: u32, fb: Feedback) {
        let add = match fb {
            Feedback::Good => return,
            Feedback::Marked => MARK_PENALTY,
            Feedback::Nack => NACK_PENALTY,
        };
        let mask = self.penalty.len() - 1;
        let p = &mut self.penalty[ev as usize & mask];
        *p = p.saturating_add(add).min(MAX_PENALTY);
    }

    /// The walk's next entropy without a penalty. Passing over penalised
    /// ones pays one step off the first of them only; after a full round of
    /// them the walk takes what it reaches.
    pub fn next(&mut self, rng: &mut Stream) -> u32 {
        let mut ev = self.walk.next(rng);
        let mut skipped = 0;
        while self.penalty[ev as usize] > 0 && skipped < self.penalty.len() {
            if skipped == 0 {
                self.penalty[ev as usize] -= 1;
            }
            skipped += 1;
            ev = self.walk.next(rng);
        }
        ev
    }
}

impl Reps {
    /// A flow's state; `rng` (the flow's stream) draws the bitmap walk's first order.
    pub fn new(cfg: RepsConfig, rng: &mut Stream) -> Reps {
        let n = cfg.buffer.max(1) as usize;
        let bitmap = (cfg.fallback == Fallback::Bitmap).then(|| Bitmap::new(cfg.evs, rng));
        Reps { cfg, ring: vec![(0, false); n], head: 0, count: 0, fresh: 0, frozen: false, frozen_head: 0, freeze_until: 0, explore_left: 0, bitmap }
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
        if let Some(b) = &mut self.bitmap {
            b.on_feedback(ev, fb);
        }
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
            return match &mut self.bitmap {
                Some(b) => b.next(rng),
                None => rng.below(self.cfg.evs as u64) as u32,
            };
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

    /// htsim's `reps`: a random draw with nothing fresh.
    fn reps() -> (Reps, Stream) {
        let mut rng = Stream::new(1, 0, Purpose::HostEntropy);
        (Reps::new(RepsConfig { fallback: Fallback::Random, ..Default::default() }, &mut rng), rng)
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
        let mut r = Reps::new(RepsConfig { freezing: false, ..Default::default() }, &mut Stream::new(1, 0, Purpose::HostEntropy));
        r.on_timeout(5);
        assert!(!r.frozen());
    }

    #[test]
    fn with_nothing_fresh_the_bitmap_walks_every_entropy_once_a_round() {
        let mut rng = Stream::new(2, 0, Purpose::HostEntropy);
        let mut r = Reps::new(RepsConfig { evs: 16, ..Default::default() }, &mut rng);
        for _ in 0..3 {
            let mut round: Vec<u32> = (0..16).map(|_| r.next(&mut rng)).collect();
            round.sort();
            assert_eq!(round, (0..16).collect::<Vec<_>>());
        }
    }

    #[test]
    fn the_bitmap_skips_penalised_entropies_until_their_penalty_is_paid() {
        let mut rng = Stream::new(2, 0, Purpose::HostEntropy);
        let mut b = Bitmap::new(8, &mut rng);
        // A NACK costs 4 passes, a mark 1; marks stop adding at 15.
        b.on_feedback(3, Feedback::Nack);
        b.on_feedback(5, Feedback::Marked);
        b.on_feedback(6, Feedback::Good);
        for _ in 0..20 {
            b.on_feedback(7, Feedback::Marked);
        }
        assert_eq!((b.penalty[3], b.penalty[5], b.penalty[6], b.penalty[7]), (4, 1, 0, MAX_PENALTY));
        // Each round of 8 passes every entropy once: a penalised one is
        // skipped (its penalty paid down only when it is the first one a
        // packet passes over) and the packets go to the others.
        let sent: Vec<u32> = (0..40).map(|_| b.next(&mut rng)).collect();
        assert!(!sent.contains(&7), "15 to pay off: {sent:?}");
        assert!(sent.iter().filter(|&&e| e == 3).count() < sent.iter().filter(|&&e| e == 0).count());
        let (six, zero) = (sent.iter().filter(|&&e| e == 6).count(), sent.iter().filter(|&&e| e == 0).count());
        assert!(six.abs_diff(zero) <= 1, "an unpenalised entropy gets its turn every round: {six} against {zero}");
    }

    #[test]
    fn recycled_entropies_go_before_the_bitmap() {
        let mut rng = Stream::new(2, 0, Purpose::HostEntropy);
        let mut r = Reps::new(RepsConfig::default(), &mut rng);
        r.on_feedback(0, 41, Feedback::Good);
        r.on_feedback(0, 9, Feedback::Marked);
        assert_eq!(r.next(&mut rng), 41);
        // A marked entropy is not recycled, and the walk passes over it once.
        let walk: Vec<u32> = (0..64).map(|_| r.next(&mut rng)).collect();
        assert_eq!(walk.iter().filter(|&&e| e == 9).count(), 0, "{walk:?}");
    }
}
