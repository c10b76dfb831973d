//! Broadcom CAST (Congestion-Aware Sprayed Traffic): a sender-side scheduler
//! over the queue pairs (QPs) of one connection. Each QP keeps an estimate of
//! its round-trip metric; the estimates become scheduler weights, inversely
//! proportional to each QP's excess over the best QP (the jitter filter); the
//! weights size the stripes of a split message (rounded down to the
//! alignment, the last QP taking the rest) or, for a message sent whole,
//! drive a weighted round robin of tokens.
//!
//! Parameters are the plug-in's environment variables
//! (`NCCL_IB_QP_SCHED_*`) with the source's defaults; the token total (100)
//! and the token rounding are the reference implementation's. Everything here
//! runs once per message or per completion, never per packet.

use crate::units::{Size, Time};
use serde::Deserialize;

/// `[transport.connection.qp_sched]`: `NCCL_IB_QP_SCHED_*`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CastConfig {
    /// `NCCL_IB_QP_SCHED_ENABLE` (default off).
    #[serde(default)]
    pub enable: bool,
    /// `NCCL_IB_QP_SCHED_RESET_INTERVAL`: the running sums of every QP are
    /// cleared this often; 0 never (default 60000 ms).
    #[serde(default = "default_reset")]
    pub reset_interval: Time,
    /// `NCCL_IB_QP_SCHED_UPDATE_INTERVAL`: least time between two weight
    /// computations (default 50 us).
    #[serde(default = "default_update")]
    pub update_interval: Time,
    /// `NCCL_IB_QP_SCHED_WEIGHT`: 0 = average estimator; otherwise the weight
    /// of a new sample in the weighted average (default 0).
    #[serde(default)]
    pub weight: f64,
    /// `NCCL_IB_QP_SCHED_SPLIT_DATA_MIN`: a message is split only when each
    /// QP's share is at least this (default 64K bytes = 65536).
    #[serde(default = "default_split_min")]
    pub split_data_min: Size,
    /// `NCCL_IB_QP_SCHED_WRR_ENABLE`: a message sent whole goes to the QP a
    /// weighted round robin picks, instead of the next in turn (default off).
    #[serde(default)]
    pub wrr_enable: bool,
    /// Tokens the weighted round robin deals per round (the reference
    /// implementation's `NCCL_IB_TARGET_TOT_TOKENS`, 100: weights as percentages).
    #[serde(default = "default_tokens")]
    pub tokens: u32,
}

fn default_reset() -> Time {
    Time::ms(60_000)
}
fn default_update() -> Time {
    Time::us(50)
}
fn default_split_min() -> Size {
    Size(65_536)
}
fn default_tokens() -> u32 {
    100
}

impl Default for CastConfig {
    fn default() -> Self {
        CastConfig {
            enable: false,
            reset_interval: default_reset(),
            update_interval: default_update(),
            weight: 0.0,
            split_data_min: default_split_min(),
            wrr_enable: false,
            tokens: default_tokens(),
        }
    }
}

impl CastConfig {
    /// The first invalid key and why.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if !(0.0..=1.0).contains(&self.weight) || self.weight.is_nan() {
            return Err(("weight", format!("weight must be between 0 and 1 (0 = average estimator), got {}", self.weight)));
        }
        if self.update_interval.0 == 0 {
            return Err(("update_interval", "update_interval must be above zero".into()));
        }
        if self.tokens == 0 {
            return Err(("tokens", "tokens must be at least 1".into()));
        }
        Ok(())
    }
}

/// One QP's estimator: the running sum and count since the last reset, the
/// estimate, and the smallest metric it ever measured.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QpEstimator {
    pub sum: f64,
    pub n: u64,
    pub estimate: f64,
    pub min_metric: f64,
    /// It has measured at least once (the reset keeps the estimate).
    pub measured: bool,
}

impl QpEstimator {
    /// Takes one metric sample (ps). The first sample after a reset is the
    /// estimate; then the average of the samples since the reset (`weight` 0)
    /// or the weighted average.
    pub fn sample(&mut self, metric: f64, weight: f64) {
        self.sum += metric;
        self.n += 1;
        self.min_metric = if self.measured { self.min_metric.min(metric) } else { metric };
        self.estimate = if self.n == 1 {
            metric
        } else if weight == 0.0 {
            self.sum / self.n as f64
        } else {
            metric * weight + self.estimate * (1.0 - weight)
        };
        self.measured = true;
    }

    /// Clears the history: the next sample restarts the average.
    pub fn reset(&mut self) {
        self.sum = 0.0;
        self.n = 0;
    }
}

/// The scheduler weights from the QPs' estimates, with the jitter filter:
/// `1 / ((estimate[q] - best estimate) + best QP's min metric)`, normalised.
/// `None` (keep the old weights) while a QP has not measured, or when a
/// denominator is not positive (the reference implementation's guard).
pub fn weights(qps: &[QpEstimator], out: &mut [f64]) -> Option<()> {
    if qps.is_empty() || qps.iter().any(|q| !q.measured) {
        return None;
    }
    let mut best = 0;
    for (i, q) in qps.iter().enumerate() {
        if q.estimate < qps[best].estimate {
            best = i;
        }
    }
    let (min_est, min_metric) = (qps[best].estimate, qps[best].min_metric);
    let mut sum = 0.0;
    for (i, q) in qps.iter().enumerate() {
        let den = (q.estimate - min_est) + min_metric;
        if den <= 0.0 || !den.is_finite() {
            return None;
        }
        out[i] = 1.0 / den;
        sum += out[i];
    }
    for w in out.iter_mut() {
        *w /= sum;
    }
    Some(())
}

/// Tokens per QP from its weight: `floor(total * weight)`, plus one when the
/// fraction is above one half or the floor is zero (every QP keeps a turn).
pub fn tokens(weight: f64, total: u32) -> u32 {
    let x = weight * total as f64;
    let t = x.floor();
    let mut n = t as u32;
    if x - t > 0.5 || n == 0 {
        n += 1;
    }
    n
}

/// Stripe sizes of a `size`-byte message over the QPs in the order `order`
/// (the first QP first): each but the last gets `floor(size * weight /
/// align) * align`, the last the rest. Written into `out[q]`.
pub fn weighted_split(size: u64, weights: &[f64], order: impl Iterator<Item = usize>, align: u64, out: &mut [u64]) {
    let mut rest = size;
    let mut last: Option<usize> = None;
    for q in order {
        if let Some(prev) = last {
            let share = ((size as f64 * weights[prev]) / align as f64).floor() as u64 * align;
            let share = share.min(rest);
            out[prev] = share;
            rest -= share;
        }
        last = Some(q);
    }
    if let Some(q) = last {
        out[q] = rest;
    }
}

/// The even split NCCL makes without weights: stripes of
/// `ceil(ceil(size / n) / align) * align` bytes in `order`, the last ones
/// taking what remains (possibly nothing).
pub fn even_split(size: u64, n: usize, order: impl Iterator<Item = usize>, align: u64, out: &mut [u64]) {
    let chunk = size.div_ceil(n as u64).div_ceil(align) * align;
    let mut rest = size;
    for q in order {
        let share = chunk.min(rest);
        out[q] = share;
        rest -= share;
    }
}

/// CAST's state for one connection.
#[derive(Clone, Debug)]
pub struct Cast {
    pub qps: Vec<QpEstimator>,
    pub weights: Vec<f64>,
    /// The weights have been computed once.
    pub ready: bool,
    /// Weighted round robin: tokens per round, tokens left in this round, the next QP to look at.
    pub tokens: Vec<u32>,
    pub active: Vec<u32>,
    pub wrr_next: usize,
    pub next_update_ps: u64,
    /// The next reset, once the connection has sent (u64::MAX before).
    pub next_reset_ps: u64,
}

impl Cast {
    pub fn new(nqps: usize) -> Cast {
        Cast {
            qps: vec![QpEstimator::default(); nqps],
            weights: vec![1.0 / nqps as f64; nqps],
            ready: false,
            tokens: vec![0; nqps],
            active: vec![0; nqps],
            wrr_next: 0,
            next_update_ps: 0,
            next_reset_ps: u64::MAX,
        }
    }

    /// A completion on QP `q` with this metric (ps).
    pub fn on_sample(&mut self, q: usize, metric: f64, cfg: &CastConfig) {
        self.qps[q].sample(metric, cfg.weight);
    }

    /// What the scheduler does when a message is posted at `now`: the
    /// periodic reset of the history, then the periodic weight update.
    pub fn on_post(&mut self, now: u64, cfg: &CastConfig) {
        if cfg.reset_interval.0 > 0 {
            if self.next_reset_ps == u64::MAX {
                self.next_reset_ps = now.saturating_add(cfg.reset_interval.0);
            } else if now >= self.next_reset_ps {
                self.qps.iter_mut().for_each(QpEstimator::reset);
                self.next_reset_ps = now.saturating_add(cfg.reset_interval.0);
            }
        }
        if now >= self.next_update_ps {
            self.next_update_ps = now.saturating_add(cfg.update_interval.0);
            self.update(cfg);
        }
    }

    /// Recomputes the weights and the round-robin tokens (if the estimates allow).
    pub fn update(&mut self, cfg: &CastConfig) {
        let mut w = std::mem::take(&mut self.weights);
        if weights(&self.qps, &mut w).is_some() {
            for (q, &x) in w.iter().enumerate() {
                self.tokens[q] = tokens(x, cfg.tokens);
                // A round under way keeps at most the new share.
                self.active[q] = self.active[q].min(self.tokens[q]);
            }
            self.ready = true;
        }
        self.weights = w;
    }

    /// The weighted round robin's next QP: the first from `wrr_next` with a
    /// token left in this round (a new round when all are spent).
    pub fn wrr_pick(&mut self) -> usize {
        let n = self.qps.len();
        if self.active.iter().all(|&a| a == 0) {
            self.active.copy_from_slice(&self.tokens);
        }
        for k in 0..n {
            let q = (self.wrr_next + k) % n;
            if self.active[q] > 0 {
                self.active[q] -= 1;
                self.wrr_next = (q + 1) % n;
                return q;
            }
        }
        // Not reachable: every QP has at least one token per round.
        let q = self.wrr_next;
        self.wrr_next = (q + 1) % n;
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(estimate: f64, min_metric: f64) -> QpEstimator {
        QpEstimator { sum: 0.0, n: 1, estimate, min_metric, measured: true }
    }

    #[test]
    fn the_average_estimator_is_the_mean_since_the_last_reset() {
        let mut e = QpEstimator::default();
        for m in [10.0, 20.0, 60.0] {
            e.sample(m, 0.0);
        }
        assert_eq!(e.estimate, 30.0);
        assert_eq!(e.min_metric, 10.0);
        e.reset();
        // The first sample after a reset is the estimate; the minimum survives.
        e.sample(100.0, 0.0);
        assert_eq!(e.estimate, 100.0);
        e.sample(50.0, 0.0);
        assert_eq!(e.estimate, 75.0);
        assert_eq!(e.min_metric, 10.0);
    }

    #[test]
    fn the_weighted_estimator_moves_by_its_weight() {
        let mut e = QpEstimator::default();
        e.sample(100.0, 0.25);
        assert_eq!(e.estimate, 100.0);
        e.sample(200.0, 0.25);
        assert_eq!(e.estimate, 125.0);
        e.sample(25.0, 0.25);
        assert_eq!(e.estimate, 100.0);
    }

    #[test]
    fn weights_are_inverse_to_the_excess_over_the_best_plus_its_minimum() {
        // Estimates 10, 20, 30 (best QP 0, min metric 10): denominators
        // 10, 20, 30, inverse 1/10, 1/20, 1/30 -> 6/11, 3/11, 2/11.
        let qps = [measured(10.0, 10.0), measured(20.0, 5.0), measured(30.0, 1.0)];
        let mut w = [0.0; 3];
        weights(&qps, &mut w).unwrap();
        let want = [6.0 / 11.0, 3.0 / 11.0, 2.0 / 11.0];
        for (a, b) in w.iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{w:?}");
        }
        // The jitter filter: a best QP whose minimum is far below its
        // estimate gets much more weight (denominators 2, 12, 22).
        let qps = [measured(10.0, 2.0), measured(20.0, 20.0), measured(30.0, 30.0)];
        weights(&qps, &mut w).unwrap();
        let inv = [1.0 / 2.0, 1.0 / 12.0, 1.0 / 22.0];
        let s: f64 = inv.iter().sum();
        for (a, b) in w.iter().zip(inv) {
            assert!((a - b / s).abs() < 1e-12);
        }
    }

    #[test]
    fn no_weights_until_every_qp_measured_or_with_a_non_positive_denominator() {
        let mut w = [0.0; 2];
        assert!(weights(&[measured(10.0, 10.0), QpEstimator::default()], &mut w).is_none());
        assert!(weights(&[measured(10.0, 0.0), measured(20.0, 20.0)], &mut w).is_none());
    }

    #[test]
    fn tokens_round_to_nearest_with_at_least_one() {
        assert_eq!(tokens(6.0 / 11.0, 100), 55); // 54.55
        assert_eq!(tokens(3.0 / 11.0, 100), 27); // 27.27
        assert_eq!(tokens(0.001, 100), 1);
        assert_eq!(tokens(0.256, 100), 26); // 25.6
        assert_eq!(tokens(0.25, 100), 25);
    }

    #[test]
    fn weighted_stripes_round_down_to_the_alignment_and_the_last_takes_the_rest() {
        let w = [0.5, 0.3, 0.2];
        let mut out = [0u64; 3];
        // 1000000 x 0.5 = 500000 -> 499968 (3906 x 128); x 0.3 = 300000 -> 299904.
        weighted_split(1_000_000, &w, 0..3, 128, &mut out);
        assert_eq!(out, [499_968, 299_904, 200_128]);
        // Starting at QP 1: QPs 1 and 2 are rounded (200000 -> 199936), QP 0 takes the rest.
        weighted_split(1_000_000, &w, [1, 2, 0].into_iter(), 128, &mut out);
        assert_eq!(out, [500_160, 299_904, 199_936]);
        assert_eq!(out.iter().sum::<u64>(), 1_000_000);
    }

    #[test]
    fn even_stripes_are_ncclsized_and_the_tail_may_be_empty() {
        let mut out = [9u64; 4];
        // ceil(1000 / 4) = 250 -> 256: 256, 256, 256, 232.
        even_split(1000, 4, 0..4, 128, &mut out);
        assert_eq!(out, [256, 256, 256, 232]);
        // 300 bytes: chunks of 128: 128, 128, 44, 0.
        even_split(300, 4, [2, 3, 0, 1].into_iter(), 128, &mut out);
        assert_eq!(out, [44, 0, 128, 128]);
    }

    #[test]
    fn weighted_round_robin_deals_each_qp_its_tokens_per_round() {
        let cfg = CastConfig { tokens: 10, ..Default::default() };
        let mut c = Cast::new(3);
        for (q, m) in [(0, 10.0), (1, 20.0), (2, 40.0)] {
            c.on_sample(q, m, &cfg);
        }
        c.update(&cfg);
        // Inverse 1/10, 1/20, 1/40 -> 4/7, 2/7, 1/7 -> 5.7, 2.9, 1.4 -> 6, 3, 1.
        assert_eq!(c.tokens, [6, 3, 1]);
        let picks: Vec<usize> = (0..10).map(|_| c.wrr_pick()).collect();
        assert_eq!(picks, [0, 1, 2, 0, 1, 0, 1, 0, 0, 0]);
        // The next round starts afresh.
        assert_eq!(c.wrr_pick(), 1);
    }

    #[test]
    fn updates_are_periodic_and_resets_clear_the_history() {
        let cfg = CastConfig { update_interval: Time(50), reset_interval: Time(1000), ..Default::default() };
        let mut c = Cast::new(2);
        c.on_post(0, &cfg);
        assert!(!c.ready, "no samples yet");
        c.on_sample(0, 10.0, &cfg);
        c.on_sample(1, 30.0, &cfg);
        c.on_post(40, &cfg);
        assert!(!c.ready, "the update interval has not passed");
        c.on_post(50, &cfg);
        assert!(c.ready);
        assert!((c.weights[0] - 0.75).abs() < 1e-12);
        c.on_sample(1, 50.0, &cfg);
        assert_eq!(c.qps[1].estimate, 40.0);
        // At the reset the sums clear: the next sample is the estimate.
        c.on_post(1000, &cfg);
        assert_eq!(c.qps[1].n, 0);
        c.on_sample(1, 10.0, &cfg);
        assert_eq!(c.qps[1].estimate, 10.0);
    }
}
