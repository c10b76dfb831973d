//! HPCC (Li et al., SIGCOMM 2019), window-based as in the paper's sender
//! algorithm, driven by the multi-hop INT stack the receiver reflects in each
//! ACK. The page is docs/cc/hpcc.md; the rules are the paper's
//! MeasureInflight, ComputeWind and NewAck.
//!
//! Per ACK that carries INT (`T` = base RTT, `B_j` = hop j's port rate):
//!
//! - the first such ACK only stores the records and sets
//!   `last_update_seq = snd_nxt`;
//! - MeasureInflight: per hop `tau_j = ts - ts_prev`,
//!   `txRate_j = (tx_bytes - tx_bytes_prev) * 8 / tau_j`,
//!   `u_j = min(qlen, qlen_prev) / (B_j * T) + txRate_j / B_j`; the hop with the
//!   largest `u_j` gives `U_max` and `tau`; `tau = min(tau, T)`;
//!   `U = (1 - tau/T) * U + (tau/T) * U_max`; the records are stored;
//! - ComputeWind: if `U >= eta` or `inc_stage >= max_stage`,
//!   `W = Wc / (U / eta) + W_AI` (and `inc_stage = 0` on commit), else
//!   `W = Wc + W_AI` (and `inc_stage += 1` on commit); `W` is clamped to
//!   `[min_rate * T, B_nic * T]`; on commit `Wc = W`;
//! - commit once per RTT: when `snd_una > last_update_seq`, then
//!   `last_update_seq = snd_nxt`; other ACKs react without committing.
//!
//! `cwnd()` is `W` (payload bytes) and `rate()` is `W / T`, within
//! `[min_rate, line rate]`. An ACK without INT leaves everything unchanged.
//! NACKs and timeouts do not change the window (the paper gives no loss
//! reaction; the ns-3 artifact's go-back-N does not touch the rate either).
//!
//! INT records are exact by default (picosecond timestamps, a 64-bit byte
//! counter that never wraps, queue bytes, the port rate in bit/s); with
//! `signals.int.record = "quantized"` they carry ns-3's 8-byte fields, and the
//! time and byte differences wrap as ns-3's do (`signal::int`).

use super::{AckSample, Algorithm, CcMetrics, ConfigError, CongestionControl, FlowParams, NoReceiver, Setup};
use crate::signal::int::{ts_delta, tx_delta, IntHop, IntStack};
use crate::units::{bytes_in, Rate, Size, Time, PS_PER_S};
use serde::Deserialize;

/// `[transport.hpcc]`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct HpccConfig {
    /// Target utilization eta.
    pub eta: f64,
    /// Additive-increase stages (committed updates) before a multiplicative
    /// adjustment is forced. 0 means always multiplicative (the ns-3 shipped config).
    pub max_stage: u32,
    /// Additive increase W_AI in bytes; default `W_init * (1 - eta) / expected_flows`.
    pub w_ai: Option<Size>,
    /// N in the default W_AI. 100 reproduces ns-3's RATE_AI of 50 Mb/s at 100 Gb/s.
    pub expected_flows: u32,
    /// T; default the flow's own base RTT (ns-3 uses the largest base RTT of the topology).
    pub base_rtt: Option<Time>,
    /// Lowest pacing rate; the window never goes below `min_rate * T`.
    pub min_rate: Rate,
}

impl Default for HpccConfig {
    fn default() -> Self {
        HpccConfig {
            eta: 0.95,
            max_stage: 5,
            w_ai: None,
            expected_flows: 100,
            base_rtt: None,
            min_rate: Rate(100_000_000),
        }
    }
}

impl HpccConfig {
    /// Checks the values; errors name the key (under `transport.hpcc`).
    pub fn validate(&self) -> Result<(), (String, String)> {
        let err = |k: &str, m: String| Err((k.to_string(), m));
        if !(self.eta.is_finite() && self.eta > 0.0 && self.eta <= 1.0) {
            return err("eta", format!("eta must be in (0, 1], got {}", self.eta));
        }
        if self.w_ai == Some(Size(0)) {
            return err("w_ai", "w_ai must be positive".into());
        }
        if self.expected_flows == 0 {
            return err("expected_flows", "expected_flows must be at least 1".into());
        }
        if self.base_rtt == Some(Time(0)) {
            return err("base_rtt", "base_rtt must be positive".into());
        }
        if self.min_rate.0 == 0 {
            return err("min_rate", "min_rate must be positive".into());
        }
        Ok(())
    }
}

/// Per-flow HPCC state.
#[derive(Clone, Debug)]
pub struct Hpcc {
    // Resolved constants.
    eta: f64,
    max_stage: u32,
    /// T, ps.
    pub t_ps: u64,
    /// W_AI, bytes.
    pub w_ai: f64,
    /// Window bounds, bytes: `min_rate * T` and `B_nic * T` (= W_init).
    pub w_min: f64,
    pub w_max: f64,
    line_rate_bps: u64,
    min_rate_bps: u64,
    // State.
    /// Current window, bytes.
    pub w: f64,
    /// Reference window, committed once per RTT, bytes.
    pub wc: f64,
    /// Smoothed normalized inflight.
    pub u: f64,
    pub inc_stage: u32,
    pub last_update_seq: u32,
    /// The INT records of the last ACK that carried INT (`None` before the first).
    prev: Option<IntStack>,
}

impl Hpcc {
    pub fn new(c: &HpccConfig, p: &FlowParams) -> Self {
        let t_ps = c.base_rtt.map(|t| t.0).unwrap_or(p.base_rtt_ps).max(1);
        let w_max = bytes_in(t_ps, p.line_rate_bps).max(1) as f64;
        let min_rate_bps = c.min_rate.0.min(p.line_rate_bps);
        let w_min = (bytes_in(t_ps, min_rate_bps) as f64).min(w_max);
        let w_ai = c.w_ai.map(|s| s.0 as f64).unwrap_or(w_max * (1.0 - c.eta) / c.expected_flows.max(1) as f64);
        Hpcc {
            eta: c.eta,
            max_stage: c.max_stage,
            t_ps,
            w_ai,
            w_min,
            w_max,
            line_rate_bps: p.line_rate_bps,
            min_rate_bps,
            w: w_max,
            wc: w_max,
            // ns-3 starts every QP at U = 1.
            u: 1.0,
            inc_stage: 0,
            last_update_seq: 0,
            prev: None,
        }
    }

    /// MeasureInflight: updates `u` from the new INT records against the
    /// stored ones and stores the new ones. Returns false when no hop gave a
    /// sample (then `u` is unchanged and the window must not move).
    fn measure_inflight(&mut self, int: &IntStack) -> bool {
        let prev = match self.prev.replace(*int) {
            Some(p) => p,
            None => return false,
        };
        if prev.n != int.n {
            // Different path length (path change): nothing comparable.
            return false;
        }
        let t = self.t_ps as f64;
        let mut u_max = 0.0f64;
        let mut tau_ps = 0u64;
        let mut any = false;
        for (now, old) in int.hops().iter().zip(prev.hops()) {
            if let Some((u, tau)) = hop_util(int, now, old, t) {
                if !any || u > u_max {
                    u_max = u;
                    tau_ps = tau;
                }
                any = true;
            }
        }
        if !any {
            return false;
        }
        let tau = tau_ps.min(self.t_ps) as f64;
        self.u = (1.0 - tau / t) * self.u + (tau / t) * u_max;
        true
    }

    /// ComputeWind: the window for normalized inflight `u`; commits `Wc` and
    /// `inc_stage` when `commit`.
    fn compute_wind(&mut self, commit: bool) {
        let u = self.u;
        let (w, stage) = if u >= self.eta || self.inc_stage >= self.max_stage {
            // U = 0 (idle path with max_stage reached) would divide by zero: the
            // limit is +inf, which the clamp turns into the largest window.
            let w = if u > 0.0 { self.wc / (u / self.eta) + self.w_ai } else { self.w_max };
            (w, 0)
        } else {
            (self.wc + self.w_ai, self.inc_stage + 1)
        };
        self.w = w.clamp(self.w_min, self.w_max);
        if commit {
            self.wc = self.w;
            self.inc_stage = stage;
        }
    }
}

/// Normalized inflight of one hop, `min(qlen, qlen_prev) / (B * T) + txRate / B`,
/// and the time between the records (ps), or `None` when the records cannot
/// be compared (time not advanced, no rate). `stack` tells exact records from
/// quantized ones, whose differences wrap.
fn hop_util(stack: &IntStack, now: &IntHop, old: &IntHop, t_ps: f64) -> Option<(f64, u64)> {
    let tau_ps = ts_delta(stack, now, old);
    if tau_ps == 0 || now.rate_bps == 0 {
        return None;
    }
    let tau = tau_ps as f64;
    let b = now.rate_bps as f64;
    let tx_rate = tx_delta(stack, now, old) as f64 * 8.0 * PS_PER_S as f64 / tau;
    let bdp_bytes = b * t_ps / 8.0 / PS_PER_S as f64;
    Some((now.qlen_bytes.min(old.qlen_bytes) as f64 / bdp_bytes + tx_rate / b, tau_ps))
}

impl CongestionControl for Hpcc {
    fn on_ack(&mut self, a: &AckSample) {
        let int = match a.int {
            Some(s) if s.n > 0 => s,
            _ => return,
        };
        if self.prev.is_none() {
            // First ACK with INT: store only.
            self.prev = Some(*int);
            self.last_update_seq = a.snd_nxt;
            return;
        }
        if !self.measure_inflight(int) {
            return;
        }
        if a.snd_una > self.last_update_seq {
            self.compute_wind(true);
            self.last_update_seq = a.snd_nxt;
        } else {
            self.compute_wind(false);
        }
    }

    fn cwnd(&self) -> u64 {
        self.w as u64
    }

    fn rate(&self) -> u64 {
        let r = self.w * 8.0 * PS_PER_S as f64 / self.t_ps as f64;
        (r as u64).clamp(self.min_rate_bps, self.line_rate_bps)
    }

    fn metrics(&self) -> CcMetrics {
        CcMetrics { cwnd_bytes: self.cwnd(), rate_bps: self.rate(), alpha: self.u }
    }
}

impl Algorithm for Hpcc {
    const NAME: &'static str = "hpcc";
    const ABOUT: &'static str = "HPCC window control from multi-hop INT (Li et al. 2019); needs [signals.int]";
    type Config = HpccConfig;
    type Receiver = NoReceiver;
    fn build(c: &HpccConfig, p: &FlowParams) -> Self {
        Hpcc::new(c, p)
    }
    fn validate(c: &HpccConfig) -> Result<(), ConfigError> {
        c.validate()
    }
    fn check(_c: &HpccConfig, s: &Setup) -> Result<(), ConfigError> {
        if !s.int {
            return Err(("cc".into(), "cc = \"hpcc\" needs INT: add [signals.int]".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signal::int::MAX_HOPS;

    const G100: u64 = 100_000_000_000;
    const US: u64 = 1_000_000;

    fn params() -> FlowParams {
        // 100 Gbps, T = 8 us: W_init = B * T = 100_000 bytes.
        FlowParams { line_rate_bps: G100, base_rtt_ps: 8 * US, mss: 1000, packet_bytes: 1064, hops: 2 }
    }

    fn hop(ts_ps: u64, tx_bytes: u64, qlen_bytes: u64, rate_bps: u64) -> IntHop {
        IntHop { ts_ps, tx_bytes, qlen_bytes, rate_bps }
    }

    fn stack(hops: &[IntHop]) -> IntStack {
        let mut s = IntStack::default();
        for h in hops {
            assert!(s.push(*h, MAX_HOPS as u8));
        }
        s
    }

    fn ack(una: u32, nxt: u32, int: Option<&IntStack>) -> AckSample<'_> {
        AckSample { acked_bytes: 1000, acked_pkts: 1, snd_una: una, snd_nxt: nxt, int, ..Default::default() }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn defaults_and_validation() {
        let c = HpccConfig::default();
        assert!(c.validate().is_ok());
        let h = Hpcc::new(&c, &params());
        // W_AI = W_init * (1 - 0.95) / 100 = 100_000 * 0.0005 = 50 bytes
        // (a rate step of 50 bytes / 8 us = 50 Mb/s, ns-3's RATE_AI at 100G).
        assert!(close(h.w_ai, 50.0));
        // W_min = 100 Mb/s * 8 us = 100 bytes.
        assert!(close(h.w_min, 100.0));
        assert_eq!(h.cwnd(), 100_000);
        assert_eq!(h.rate(), G100);
        assert_eq!(HpccConfig { eta: 0.0, ..c }.validate().unwrap_err().0, "eta");
        assert_eq!(HpccConfig { eta: 1.5, ..c }.validate().unwrap_err().0, "eta");
        assert_eq!(HpccConfig { expected_flows: 0, ..c }.validate().unwrap_err().0, "expected_flows");
        assert_eq!(HpccConfig { w_ai: Some(Size(0)), ..c }.validate().unwrap_err().0, "w_ai");
        assert_eq!(HpccConfig { base_rtt: Some(Time(0)), ..c }.validate().unwrap_err().0, "base_rtt");
        assert_eq!(HpccConfig { min_rate: Rate(0), ..c }.validate().unwrap_err().0, "min_rate");
    }

    #[test]
    fn first_ack_only_stores_and_no_int_changes_nothing() {
        let mut h = Hpcc::new(&HpccConfig::default(), &params());
        // No INT: nothing moves.
        h.on_ack(&ack(1, 50, None));
        assert_eq!((h.cwnd(), h.last_update_seq), (100_000, 0));
        // First INT: stored, window unchanged, last_update_seq = snd_nxt.
        let s = stack(&[hop(0, 0, 100_000, G100)]);
        h.on_ack(&ack(2, 100, Some(&s)));
        assert_eq!((h.cwnd(), h.last_update_seq), (100_000, 100));
        assert_eq!(h.u, 1.0);
        // An empty stack counts as no INT.
        let e = IntStack::default();
        h.on_ack(&ack(200, 300, Some(&e)));
        assert_eq!((h.cwnd(), h.last_update_seq), (100_000, 100));
    }

    #[test]
    fn congestion_cuts_then_per_rtt_commit_and_additive_growth() {
        let mut h = Hpcc::new(&HpccConfig::default(), &params());
        let s = stack(&[hop(0, 0, 100_000, G100)]);
        h.on_ack(&ack(1, 100, Some(&s)));
        // tau = 8 us = T; full rate (100_000 bytes in 8 us); standing queue of
        // one BDP (min(1e5, 1e5) / (B*T = 1e5) = 1): u = 1 + 1 = 2; U = 2
        // (EWMA weight tau/T = 1). U >= eta: W = Wc / (2 / 0.95) + W_AI
        // = 100_000 * 0.475 + 50 = 47_550. snd_una 101 > 100: commit.
        let s = stack(&[hop(8 * US, 100_000, 100_000, G100)]);
        h.on_ack(&ack(101, 200, Some(&s)));
        assert!(close(h.u, 2.0));
        assert!(close(h.w, 47_550.0) && close(h.wc, 47_550.0));
        assert_eq!((h.inc_stage, h.last_update_seq), (0, 200));
        assert_eq!(h.cwnd(), 47_550);
        // rate = 47_550 B / 8 us = 47.55 Gb/s.
        assert_eq!(h.rate(), 47_550_000_000);

        // Within the RTT (snd_una <= 200): 50 Gb/s (50_000 bytes in 8 us), no
        // queue: u = 0.5 -> U = 0.5 < eta, W = Wc + W_AI = 47_600, Wc stays.
        let s = stack(&[hop(16 * US, 150_000, 0, G100)]);
        h.on_ack(&ack(150, 250, Some(&s)));
        assert!(close(h.u, 0.5));
        assert!(close(h.w, 47_600.0) && close(h.wc, 47_550.0));
        assert_eq!((h.inc_stage, h.last_update_seq), (0, 200));
        // Again within the RTT: still Wc + W_AI = 47_600, not 47_650.
        let s = stack(&[hop(24 * US, 200_000, 0, G100)]);
        h.on_ack(&ack(180, 260, Some(&s)));
        assert!(close(h.w, 47_600.0) && close(h.wc, 47_550.0));
        // snd_una 201 > 200: commit W = 47_600, inc_stage 1.
        let s = stack(&[hop(32 * US, 250_000, 0, G100)]);
        h.on_ack(&ack(201, 300, Some(&s)));
        assert!(close(h.w, 47_600.0) && close(h.wc, 47_600.0));
        assert_eq!((h.inc_stage, h.last_update_seq), (1, 300));
    }

    #[test]
    fn max_stage_forces_multiplicative_increase() {
        let mut h = Hpcc::new(&HpccConfig::default(), &params());
        // Start from a reference window of 10_000 bytes (setup shortcut).
        h.w = 10_000.0;
        h.wc = 10_000.0;
        let mut ts = 0;
        let mut tx = 0;
        let mut seq = 1;
        let mut step = |h: &mut Hpcc| {
            // One RTT per call at 50% of 100 Gb/s, no queue: U = 0.5.
            let s = stack(&[hop(ts, tx, 0, G100)]);
            h.on_ack(&ack(seq, seq + 10, Some(&s)));
            ts += 8 * US;
            tx += 50_000;
            seq += 11;
        };
        step(&mut h); // first ACK: store only
        // Five committed additive stages: 10_000 + 5 * 50 = 10_250.
        for k in 1..=5 {
            step(&mut h);
            assert!(close(h.wc, 10_000.0 + 50.0 * k as f64), "stage {k}: {}", h.wc);
            assert_eq!(h.inc_stage, k);
        }
        // inc_stage = 5 = max_stage: W = Wc / (0.5 / 0.95) + W_AI
        // = 10_250 * 1.9 + 50 = 19_525; inc_stage back to 0.
        step(&mut h);
        assert!(close(h.wc, 19_525.0), "{}", h.wc);
        assert_eq!(h.inc_stage, 0);
    }

    #[test]
    fn max_stage_zero_is_always_multiplicative_and_clamped() {
        let c = HpccConfig { max_stage: 0, ..Default::default() };
        let mut h = Hpcc::new(&c, &params());
        h.on_ack(&ack(1, 10, Some(&stack(&[hop(0, 0, 0, G100)]))));
        // U = 0.5: W = 100_000 * 1.9 + 50, clamped to W_init = 100_000.
        h.on_ack(&ack(11, 20, Some(&stack(&[hop(8 * US, 50_000, 0, G100)]))));
        assert!(close(h.w, 100_000.0));
        // An idle hop (U = 0): the limit is +inf, clamped to W_init.
        h.on_ack(&ack(21, 30, Some(&stack(&[hop(16 * US, 50_000, 0, G100)]))));
        assert_eq!(h.u, 0.0);
        assert!(close(h.w, 100_000.0));
    }

    #[test]
    fn min_rate_floors_window_and_rate() {
        // min_rate 10 Gb/s: W_min = 10 Gb/s * 8 us = 10_000 bytes.
        let c = HpccConfig { min_rate: Rate::gbps(10), ..Default::default() };
        let mut h = Hpcc::new(&c, &params());
        h.on_ack(&ack(1, 10, Some(&stack(&[hop(0, 0, 2_000_000, G100)]))));
        // Queue of 20 BDPs at full rate: u = 20 + 1 = 21, W = 100_000 / (21 / 0.95)
        // + 50 = 4_573.8 < 10_000: clamped.
        h.on_ack(&ack(11, 20, Some(&stack(&[hop(8 * US, 100_000, 2_000_000, G100)]))));
        assert!(close(h.u, 21.0));
        assert!(close(h.w, 10_000.0) && close(h.wc, 10_000.0));
        assert_eq!(h.rate(), 10_000_000_000);
    }

    #[test]
    fn two_hops_max_hop_and_ewma_over_tau() {
        let mut h = Hpcc::new(&HpccConfig::default(), &params());
        let g25 = 25_000_000_000;
        h.on_ack(&ack(1, 10, Some(&stack(&[hop(0, 0, 0, G100), hop(0, 0, 25_000, g25)]))));
        // Hop 0: tau = 2 us, 12_500 bytes -> 50 Gb/s of 100: u0 = 0.5.
        // Hop 1 (25 Gb/s): tau = 4 us, 12_500 bytes -> 25 Gb/s: 1.0; queue
        // min(50_000, 25_000) / (25 Gb/s * 8 us = 25_000 B) = 1.0: u1 = 2.0.
        // U_max = 2, tau = 4 us; U = (1 - 0.5) * 1 + 0.5 * 2 = 1.5.
        // W = 100_000 / (1.5 / 0.95) + 50 = 63_333.33 + 50 = 63_383.33.
        let s = stack(&[hop(2 * US, 12_500, 0, G100), hop(4 * US, 12_500, 50_000, g25)]);
        h.on_ack(&ack(11, 20, Some(&s)));
        assert!(close(h.u, 1.5), "{}", h.u);
        assert!(close(h.w, 100_000.0 * 0.95 / 1.5 + 50.0), "{}", h.w);
        assert_eq!(h.cwnd(), 63_383);
        // tau longer than T counts as T: full weight on the new sample.
        // Hop 0: 16 us, 100_000 bytes -> 50 Gb/s: 0.5; hop 1 idle: 0.
        let s = stack(&[hop(18 * US, 112_500, 0, G100), hop(20 * US, 12_500, 0, g25)]);
        h.on_ack(&ack(21, 30, Some(&s)));
        assert!(close(h.u, 0.5), "{}", h.u);
    }

    #[test]
    fn hop_count_change_or_stale_timestamps_do_not_move_the_window() {
        let mut h = Hpcc::new(&HpccConfig::default(), &params());
        h.on_ack(&ack(1, 10, Some(&stack(&[hop(0, 0, 0, G100)]))));
        h.on_ack(&ack(11, 20, Some(&stack(&[hop(8 * US, 0, 0, G100), hop(8 * US, 0, 0, G100)]))));
        assert_eq!((h.cwnd(), h.last_update_seq, h.u), (100_000, 10, 1.0));
        // Same timestamp as the stored record: no sample.
        h.on_ack(&ack(12, 20, Some(&stack(&[hop(8 * US, 0, 0, G100), hop(8 * US, 0, 0, G100)]))));
        assert_eq!((h.cwnd(), h.last_update_seq, h.u), (100_000, 10, 1.0));
    }

    #[test]
    fn quantized_records_feed_the_same_law_with_coarse_values() {
        use crate::signal::int::{IntConfig, IntRecord};
        let q = IntConfig { record: IntRecord::Quantized, ..Default::default() };
        let push = |h: IntHop| {
            let mut s = IntStack::default();
            q.push(&mut s, h);
            s
        };
        let mut h = Hpcc::new(&HpccConfig::default(), &params());
        // 8.0005 us and 100_100 bytes later, a 100_079-byte queue: quantized to
        // 8 us, 782 x 128 = 100_096 bytes sent and 1250 x 80 = 100_000 queued.
        let s0 = push(hop(0, 0, 100_079, G100));
        h.on_ack(&ack(1, 100, Some(&s0)));
        let s1 = push(hop(8 * US + 500, 100_100, 100_079, G100));
        h.on_ack(&ack(101, 200, Some(&s1)));
        // u = 100_000 / 100_000 + 100_096 x 8 / 8 us / 100 Gb/s = 1 + 1.00096.
        assert!(close(h.u, 2.00096), "{}", h.u);
        // Across the 24-bit time stamp's wrap (16.777216 ms) the difference is still 8 us.
        let mut h = Hpcc::new(&HpccConfig::default(), &params());
        let wrap = (1u64 << 24) * 1_000;
        h.on_ack(&ack(1, 100, Some(&push(hop(wrap - 4 * US, 0, 0, G100)))));
        h.on_ack(&ack(101, 200, Some(&push(hop(wrap + 4 * US, 50_048, 0, G100)))));
        // 50_048 bytes = 391 units exactly: 50.048 Gb/s of 100.
        assert!(close(h.u, 0.50048), "{}", h.u);
    }

    #[test]
    fn config_parses_with_units_and_rejects_unknown_keys() {
        let c: HpccConfig = toml::from_str("eta = 0.9\nmax_stage = 0\nw_ai = \"100B\"\nbase_rtt = \"10us\"\nmin_rate = \"1Gbps\"").unwrap();
        assert_eq!(c.eta, 0.9);
        assert_eq!(c.max_stage, 0);
        assert_eq!(c.w_ai, Some(Size(100)));
        assert_eq!(c.base_rtt, Some(Time::us(10)));
        assert_eq!(c.min_rate, Rate::gbps(1));
        let h = Hpcc::new(&c, &params());
        // T = 10 us: W_init = 125_000 bytes.
        assert_eq!((h.t_ps, h.w_max as u64, h.w_ai as u64), (10 * US, 125_000, 100));
        assert!(toml::from_str::<HpccConfig>("bogus = 1").is_err());
    }
}
