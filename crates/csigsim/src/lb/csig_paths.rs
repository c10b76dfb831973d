//! CSIG-guided path choice (the CSIG tutorial's load-balancing use of its
//! signals): min(ABW) is a quantitative path weight, and the locator tells
//! last-hop congestion (incast) from core congestion, when moving cannot
//! help. The sender keeps `paths` entropies, each with an EWMA of the
//! min(ABW) (or min(ABW/C)) reflected on the ACKs of packets sent on it, and
//! draws each packet's entropy with probability proportional to the
//! estimates. A path without a sample, or whose last sample is older than
//! `forget_after`, counts as the best estimate (explore), so a path written
//! off at one moment is tried again. An ACK whose locator names a tier-0
//! downlink (the destination's last hop: the only tier-0 down port on a
//! data packet's way) changes nothing.

use super::{ConfigError, CsigEcho, Scheme, Setup};
use crate::rng::Stream;
use crate::units::Time;

/// `[transport.csig_paths]`. The tutorial gives no constants; these are
/// csigsim's (docs/lb.md).
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CsigPathsConfig {
    /// Entropies (paths) a flow keeps.
    pub paths: u32,
    /// EWMA gain of a new min(ABW) sample.
    pub gain: f64,
    /// A path's estimate older than this counts as no sample (explore again).
    pub forget_after: Time,
    /// Leave the weights alone when the locator names the last hop.
    pub last_hop_rule: bool,
}

impl Default for CsigPathsConfig {
    fn default() -> Self {
        CsigPathsConfig { paths: 8, gain: 0.125, forget_after: Time::us(100), last_hop_rule: true }
    }
}

/// Whether locator `lm` (of `bits` bits) names a tier-0 port leading down:
/// on a data packet's way, the destination's last hop.
pub fn is_last_hop(lm: u16, bits: u8) -> bool {
    let low = bits.saturating_sub(3) as u32;
    let tier = (lm as u32 >> (low + 1)) & 3;
    let down = (lm as u32 >> low) & 1;
    tier == 0 && down == 1
}

/// One flow's path estimates, allocated once at the flow's start.
#[derive(Clone, Debug)]
pub struct CsigPaths {
    cfg: CsigPathsConfig,
    /// Per path: the EWMA of min(ABW), and the time of its last sample
    /// (u64::MAX: none).
    est: Vec<f64>,
    last: Vec<u64>,
    /// Samples taken into the estimates, and left out by the last-hop rule
    /// (for tests and reports).
    used: u64,
    held: u64,
}

impl CsigPaths {
    pub fn new(cfg: CsigPathsConfig) -> CsigPaths {
        let n = cfg.paths.max(1) as usize;
        CsigPaths { cfg, est: vec![0.0; n], last: vec![u64::MAX; n], used: 0, held: 0 }
    }

    fn fresh(&self, i: usize, now: u64) -> bool {
        self.last[i] != u64::MAX && now.saturating_sub(self.last[i]) <= self.cfg.forget_after.0
    }

    /// The best fresh estimate at `now` (1 when no path has one): the weight
    /// of a path without a sample.
    fn best(&self, now: u64) -> f64 {
        (0..self.est.len()).filter(|&j| self.fresh(j, now)).map(|j| self.est[j]).reduce(f64::max).unwrap_or(1.0)
    }

    fn weight_with(&self, i: usize, now: u64, best: f64) -> f64 {
        if self.fresh(i, now) {
            self.est[i]
        } else {
            best
        }
    }

    /// Path `i`'s weight at `now`: its estimate, or the best fresh estimate
    /// when it has none.
    pub fn weight(&self, i: usize, now: u64) -> f64 {
        self.weight_with(i, now, self.best(now))
    }

    /// Samples the last-hop rule kept out.
    pub fn held(&self) -> u64 {
        self.held
    }

    /// Samples taken into the estimates.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// Path `i`'s estimate, fresh or not (None: never sampled).
    pub fn estimate(&self, i: usize) -> Option<f64> {
        (self.last.get(i).is_some_and(|&t| t != u64::MAX)).then(|| self.est[i])
    }

    /// Paths kept.
    pub fn paths(&self) -> usize {
        self.est.len()
    }

    /// The entropy value (0 .. paths) of the next packet.
    pub fn next(&mut self, now: u64, rng: &mut Stream) -> u32 {
        let n = self.est.len();
        let best = self.best(now);
        let total: f64 = (0..n).map(|i| self.weight_with(i, now, best)).sum();
        // Estimates are finite (samples are checked), so the sum is too.
        if total <= 0.0 {
            // Every path reports no spare capacity: no preference.
            return rng.below(n as u64) as u32;
        }
        let mut r = rng.unit() * total;
        for i in 0..n {
            let w = self.weight_with(i, now, best);
            if r < w {
                return i as u32;
            }
            r -= w;
        }
        // Rounding left `r` past the last weight: the last path with any.
        (0..n).rev().find(|&i| self.weight_with(i, now, best) > 0.0).unwrap_or(0) as u32
    }

    /// An ACK for a packet sent on `ev` reflected min(ABW) `abw`, written at
    /// the hop whose locator is `last_hop` or not.
    pub fn on_sample(&mut self, now: u64, ev: u32, abw: f64, last_hop: bool) {
        let i = ev as usize;
        if i >= self.est.len() || !abw.is_finite() {
            return;
        }
        if last_hop && self.cfg.last_hop_rule {
            // Incast at the receiver: every path shares that hop, moving cannot help.
            self.held += 1;
            return;
        }
        self.est[i] = if self.fresh(i, now) { self.est[i] + self.cfg.gain * (abw - self.est[i]) } else { abw };
        self.last[i] = now;
        self.used += 1;
    }
}

impl Scheme for CsigPaths {
    const NAME: &'static str = "csig";
    const ABOUT: &'static str = "CSIG-guided: entropies weighted by their reflected min(ABW), last-hop congestion ignored ([transport.csig_paths])";
    const SECTION: Option<&'static str> = Some("csig_paths");
    type Config = CsigPathsConfig;
    fn check(c: &CsigPathsConfig, s: &Setup) -> Result<(), ConfigError> {
        if !s.csig.is_some_and(|t| t.is_min()) {
            let got = s.csig.map_or("none".to_string(), |t| format!("\"{}\"", t.name()));
            return Err(("entropy".into(), format!("entropy = \"csig\" needs [signals.csig] type = \"abw\" or \"abw_c\" (min(ABW) tags), got {got}")));
        }
        if c.paths == 0 {
            return Err(("csig_paths.paths".into(), "paths must be at least 1".into()));
        }
        if !(c.gain > 0.0 && c.gain <= 1.0) {
            return Err(("csig_paths.gain".into(), format!("gain must be in (0, 1], got {}", c.gain)));
        }
        Ok(())
    }
    fn start(c: &CsigPathsConfig, _rng: &mut Stream) -> Self {
        CsigPaths::new(*c)
    }
    #[inline]
    fn next_ev(&mut self, now: u64, rng: &mut Stream) -> u32 {
        self.next(now, rng)
    }
    #[inline]
    fn on_csig(&mut self, now: u64, ev: u32, echo: CsigEcho) {
        self.on_sample(now, ev, echo.value, is_last_hop(echo.locator, echo.lm_bits))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Purpose;

    fn paths(n: u32) -> (CsigPaths, Stream) {
        (CsigPaths::new(CsigPathsConfig { paths: n, ..Default::default() }), Stream::new(1, 0, Purpose::HostEntropy))
    }

    fn counts(p: &mut CsigPaths, rng: &mut Stream, now: u64, draws: usize) -> Vec<usize> {
        let mut c = vec![0; p.est.len()];
        for _ in 0..draws {
            c[p.next(now, rng) as usize] += 1;
        }
        c
    }

    #[test]
    fn the_ewma_follows_the_samples() {
        let (mut p, _) = paths(2);
        p.on_sample(0, 0, 80e9, false);
        assert_eq!(p.weight(0, 0), 80e9, "the first sample is the estimate");
        p.on_sample(1, 0, 40e9, false);
        assert!((p.weight(0, 1) - (80e9 - 0.125 * 40e9)).abs() < 1.0);
        // Path 1 has no sample: it counts as the best estimate.
        assert_eq!(p.weight(1, 1), p.weight(0, 1));
    }

    #[test]
    fn draws_follow_the_abw_weights() {
        let (mut p, mut rng) = paths(4);
        for (ev, abw) in [(0, 10e9), (1, 20e9), (2, 30e9), (3, 40e9)] {
            p.on_sample(0, ev, abw, false);
        }
        let c = counts(&mut p, &mut rng, 0, 100_000);
        for (i, &k) in c.iter().enumerate() {
            let want = (i + 1) as f64 / 10.0;
            assert!((k as f64 / 100_000.0 - want).abs() < 0.01, "path {i}: {k}");
        }
    }

    #[test]
    fn a_path_reporting_low_abw_gets_fewer_packets() {
        let (mut p, mut rng) = paths(8);
        let even = counts(&mut p, &mut rng, 0, 80_000);
        assert!(even.iter().all(|&k| (9_000..11_000).contains(&k)), "no samples: uniform {even:?}");
        for ev in 0..8 {
            p.on_sample(10, ev, 100e9, false);
        }
        for t in 0..40 {
            p.on_sample(20 + t, 3, 25e9, false);
        }
        let c = counts(&mut p, &mut rng, 100, 80_000);
        let others = c.iter().enumerate().filter(|&(i, _)| i != 3).map(|(_, &k)| k).min().unwrap();
        assert!(c[3] * 3 < others, "{c:?}");
        // Stale estimates are forgotten: the low path is explored again.
        let later = 10 + Time::us(100).0 + 1;
        let c = counts(&mut p, &mut rng, later + 20, 80_000);
        assert!((9_000..11_000).contains(&c[3]), "{c:?}");
    }

    #[test]
    fn the_last_hop_rule_leaves_weights_unchanged() {
        let (mut p, mut rng) = paths(4);
        for ev in 0..4 {
            p.on_sample(0, ev, 50e9, false);
        }
        let before: Vec<f64> = (0..4).map(|i| p.weight(i, 5)).collect();
        for t in 0..100 {
            p.on_sample(1 + t % 4, (t % 2) as u32, 1e9, true);
        }
        let after: Vec<f64> = (0..4).map(|i| p.weight(i, 5)).collect();
        assert_eq!(before, after);
        assert_eq!(p.held(), 100);
        // Without the rule the same samples move the weights off paths 0 and 1.
        let mut q = CsigPaths::new(CsigPathsConfig { paths: 4, last_hop_rule: false, ..Default::default() });
        for ev in 0..4 {
            q.on_sample(0, ev, 50e9, false);
        }
        for t in 0..100 {
            q.on_sample(1 + t % 4, (t % 2) as u32, 1e9, true);
        }
        let c = counts(&mut q, &mut rng, 5, 10_000);
        assert!(c[0] + c[1] < 1_000, "{c:?}");
    }

    #[test]
    fn the_locator_names_tier_zero_downlinks() {
        use crate::signal::csig::locator;
        for bits in [7u8, 16] {
            assert!(is_last_hop(locator(bits, 0, true, 3, 5), bits));
            assert!(!is_last_hop(locator(bits, 0, false, 3, 5), bits));
            assert!(!is_last_hop(locator(bits, 1, true, 3, 5), bits));
        }
    }

    #[test]
    fn same_seed_same_draws() {
        let run = || {
            let (mut p, mut rng) = paths(8);
            p.on_sample(0, 2, 5e9, false);
            p.on_sample(0, 5, 90e9, false);
            (0..64).map(|_| p.next(1, &mut rng)).collect::<Vec<_>>()
        };
        assert_eq!(run(), run());
    }
}
