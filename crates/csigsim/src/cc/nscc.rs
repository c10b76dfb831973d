//! UEC NSCC (Network Signal-based Congestion Control, UEC 1.0 §3.6.13) as the
//! UEC reference simulator uet-htsim implements it (`UecSrc`, snapshot after
//! PR #129), and NSCC + CSIG max(Delay). The page is docs/cc/nscc.md.
//!
//! Window-based, in payload bytes (one "MTU" of the notes = `mss`).
//!
//! - parameters derived from the network RTT (`network_rtt`, default the
//!   fabric's largest unloaded RTT between two hosts, filled in by
//!   [`Algorithm::prepare`]) and the line rate: `a = BDP / 150 kB`,
//!   `b = target_qdelay / 12 us`, `alpha = 4 MSS a b / target`,
//!   `fi = 5 MSS a`, `eta = 0.15 MSS a`, `fi_scale = 0.25 a`;
//! - per ACK: update the tracked base RTT from the RTT sample, take the
//!   queueing-delay sample (`rtt - base_rtt`, or the reflected CSIG
//!   max(Delay) when `delay_signal = "csig"` and a switch wrote it), feed the
//!   delay EWMA, run quick adapt, then one of four cases on
//!   (ECN echo) x (delay vs target): no ECN below target -> proportional
//!   increase (first trying fast increase), no ECN at/above target -> fair
//!   increase, ECN below target -> no-op, ECN at/above target ->
//!   multiplicative decrease on the EWMA delay (once per base RTT);
//! - increases are deferred in `inc_bytes` and applied as `inc_bytes / cwnd`
//!   when more than `adjust_bytes` were acknowledged or `adjust_period` has
//!   passed since the last eta (the period also adds `eta`);
//! - a trim NACK feeds the EWMA with `network_rtt`, arms quick adapt, and, if
//!   quick adapt does not fire, removes one packet from the window (a gap
//!   NACK too, unless `gap_nack = "spec"`); a timeout removes one packet.

use super::{AckSample, Algorithm, CcMetrics, ConfigError, CongestionControl, Decisions, FlowParams, NackReason, NoReceiver};
use crate::signal::csig::SignalType;
use crate::signal::NO_WRITER;
use crate::units::{Size, Time, PS_PER_S, PS_PER_US};
use serde::Deserialize;

/// Which queueing-delay sample drives the four cases, the delay EWMA and quick adapt.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum DelaySignal {
    /// `rtt - base_rtt` (baseline NSCC).
    #[default]
    Rtt,
    /// The reflected CSIG max(Delay) (max per-hop queueing delay) when the ACK
    /// carries a Delay tag written by a switch; otherwise `rtt - base_rtt`.
    Csig,
}

/// What the window and the bytes in flight count.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum WindowUnits {
    /// Payload bytes.
    #[default]
    Payload,
    /// Wire bytes, payload plus `transport.header` per packet (htsim's
    /// `_in_flight` and `_cwnd` count `_mtu`-sized packets).
    Wire,
}

/// What NSCC does with a NACK that answers no trimmed packet (a gap NACK:
/// go-back-N's out of order, the selective `nack_threshold`).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum GapNack {
    /// As a trim: the delay sample, quick adapt and one packet off the window.
    #[default]
    Trim,
    /// As the UEC specification's `OnNACK` treats a code other than a trim:
    /// the packet leaves the bytes in flight, nothing else.
    Spec,
}

/// `[transport.nscc]`. Sizes are payload bytes (wire bytes with `window_units = "wire"`); "MTU" in the notes is `transport.mtu`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct NsccConfig {
    /// `config_base_rtt` / htsim `network_rtt`: the RTT all derived parameters
    /// use, the same for every flow. Default: the largest unloaded RTT among
    /// the scenario's flows (set at set-up by `prepare`); a flow built
    /// without it (unit tests) uses its own unloaded RTT.
    pub network_rtt: Option<Time>,
    /// Trimming on in the fabric: selects the default target (0.75 vs 1.0
    /// network RTT). Default: whether the switches trim (`switch.mode =
    /// "trim"`), set at set-up by `prepare`.
    pub trimming: Option<bool>,
    /// Target queueing delay; default `0.75 * network_rtt` with trimming, else `1.0 * network_rtt`.
    pub target_qdelay: Option<Time>,
    /// Reference BDP for `scaling_a` (100 Gb/s x 12 us).
    pub reference_bdp: Size,
    /// Reference delay for `scaling_b`.
    pub reference_rtt: Time,
    /// `alpha = alpha_factor * MSS * a * b / target_qdelay`.
    pub alpha_factor: f64,
    /// Override of alpha, in bytes per microsecond of delay headroom.
    pub alpha: Option<f64>,
    /// `fi = fi_factor * MSS * a` (fair increase, bytes per RTT).
    pub fi_factor: f64,
    /// Override of fi.
    pub fi: Option<Size>,
    /// `fi_scale = fi_scale_factor * a` (fast increase, bytes per byte acknowledged).
    pub fi_scale_factor: f64,
    /// Override of fi_scale.
    pub fi_scale: Option<f64>,
    /// `eta = eta_factor * MSS * a` (added once per adjust period).
    pub eta_factor: f64,
    /// Override of eta.
    pub eta: Option<Size>,
    /// Multiplicative-decrease strength.
    pub gamma: f64,
    /// Smallest multiplicative-decrease factor (one decrease keeps at least this share).
    pub max_md_jump: f64,
    /// Gain of the delay EWMA.
    pub delay_ewma_gain: f64,
    /// A no-ECN sample above target feeds the EWMA `this * base_rtt` instead.
    pub no_ecn_high_delay_factor: f64,
    /// Fast increase applies while the delay sample is below this ("delay ~ 0").
    pub fast_increase_threshold: Time,
    /// Quick adapt on/off.
    pub quick_adapt: bool,
    /// Quick adapt fires only if less than `max_wnd >> qa_gate` was delivered in the window.
    pub qa_gate: u32,
    /// Quick adapt delay threshold; default `qa_threshold_factor * target_qdelay`.
    pub qa_threshold: Option<Time>,
    pub qa_threshold_factor: f64,
    /// Deferred increases are applied when more than this many MSS were acknowledged.
    pub adjust_bytes_mtus: f64,
    /// ... or when this much time passed since the last eta; default `network_rtt`.
    pub adjust_period: Option<Time>,
    /// `max_wnd = max_wnd_bdps * base_rtt * line_rate` (recomputed as base_rtt falls).
    pub max_wnd_bdps: f64,
    /// Initial window; default `max_wnd` (line-rate start).
    pub init_cwnd: Option<Size>,
    /// Smallest window; default one MSS.
    pub min_cwnd: Option<Size>,
    /// Sample fed to the delay EWMA on a NACK; default `network_rtt`.
    pub nack_delay: Option<Time>,
    /// Lower the base RTT from samples (ACK RTTs).
    pub update_base_rtt: bool,
    /// Queueing-delay sample source.
    pub delay_signal: DelaySignal,
    /// "payload" or "wire": what the window, the bytes in flight, `min_cwnd`,
    /// the adjust threshold and the NACK and timeout cuts count.
    pub window_units: WindowUnits,
    /// A NACK for a gap rather than a trim: `"trim"` or `"spec"`.
    pub gap_nack: GapNack,
    /// Receivers grant credits (`[transport.rccc]`, set at load by
    /// `resolve`): a last-hop trim then leaves the window alone, the
    /// receiver's credits being what paces its link.
    #[serde(skip)]
    pub receiver_credits: bool,
}

impl Default for NsccConfig {
    fn default() -> Self {
        NsccConfig {
            network_rtt: None,
            trimming: None,
            target_qdelay: None,
            reference_bdp: Size(150_000),
            reference_rtt: Time::us(12),
            alpha_factor: 4.0,
            alpha: None,
            fi_factor: 5.0,
            fi: None,
            fi_scale_factor: 0.25,
            fi_scale: None,
            eta_factor: 0.15,
            eta: None,
            gamma: 0.8,
            max_md_jump: 0.5,
            delay_ewma_gain: 0.0125,
            no_ecn_high_delay_factor: 0.25,
            fast_increase_threshold: Time::us(1),
            quick_adapt: true,
            qa_gate: 3,
            qa_threshold: None,
            qa_threshold_factor: 4.0,
            adjust_bytes_mtus: 8.0,
            adjust_period: None,
            max_wnd_bdps: 1.5,
            init_cwnd: None,
            min_cwnd: None,
            nack_delay: None,
            update_base_rtt: true,
            delay_signal: DelaySignal::Rtt,
            window_units: WindowUnits::Payload,
            gap_nack: GapNack::Trim,
            receiver_credits: false,
        }
    }
}

/// Target factor of `network_rtt` with and without trimming.
pub const TARGET_FACTOR_TRIM: f64 = 0.75;
pub const TARGET_FACTOR_NO_TRIM: f64 = 1.0;

impl NsccConfig {
    /// Checks the values; errors name the key (under `transport.nscc`).
    pub fn validate(&self) -> Result<(), (String, String)> {
        let err = |k: &str, m: String| Err((k.to_string(), m));
        let nonneg = |x: f64| x.is_finite() && x >= 0.0;
        let pos = |x: f64| x.is_finite() && x > 0.0;
        if self.network_rtt == Some(Time(0)) {
            return err("network_rtt", "network_rtt must be positive".into());
        }
        if self.target_qdelay == Some(Time(0)) {
            return err("target_qdelay", "target_qdelay must be positive".into());
        }
        if self.reference_bdp.0 == 0 {
            return err("reference_bdp", "reference_bdp must be positive".into());
        }
        if self.reference_rtt.0 == 0 {
            return err("reference_rtt", "reference_rtt must be positive".into());
        }
        for (k, v) in [
            ("alpha_factor", self.alpha_factor),
            ("fi_factor", self.fi_factor),
            ("fi_scale_factor", self.fi_scale_factor),
            ("eta_factor", self.eta_factor),
            ("gamma", self.gamma),
            ("no_ecn_high_delay_factor", self.no_ecn_high_delay_factor),
        ] {
            if !nonneg(v) {
                return err(k, format!("{k} must be >= 0, got {v}"));
            }
        }
        if let Some(a) = self.alpha {
            if !nonneg(a) {
                return err("alpha", format!("alpha must be >= 0, got {a}"));
            }
        }
        if let Some(f) = self.fi_scale {
            if !nonneg(f) {
                return err("fi_scale", format!("fi_scale must be >= 0, got {f}"));
            }
        }
        if !(self.max_md_jump > 0.0 && self.max_md_jump <= 1.0) {
            return err("max_md_jump", format!("max_md_jump must be in (0, 1], got {}", self.max_md_jump));
        }
        if !(self.delay_ewma_gain > 0.0 && self.delay_ewma_gain <= 1.0) {
            return err("delay_ewma_gain", format!("delay_ewma_gain must be in (0, 1], got {}", self.delay_ewma_gain));
        }
        if self.qa_gate >= 64 {
            return err("qa_gate", format!("qa_gate must be below 64, got {}", self.qa_gate));
        }
        if self.qa_threshold == Some(Time(0)) {
            return err("qa_threshold", "qa_threshold must be positive".into());
        }
        if !pos(self.qa_threshold_factor) {
            return err("qa_threshold_factor", format!("qa_threshold_factor must be positive, got {}", self.qa_threshold_factor));
        }
        if !pos(self.adjust_bytes_mtus) {
            return err("adjust_bytes_mtus", format!("adjust_bytes_mtus must be positive, got {}", self.adjust_bytes_mtus));
        }
        if self.adjust_period == Some(Time(0)) {
            return err("adjust_period", "adjust_period must be positive".into());
        }
        if !pos(self.max_wnd_bdps) {
            return err("max_wnd_bdps", format!("max_wnd_bdps must be positive, got {}", self.max_wnd_bdps));
        }
        if self.init_cwnd == Some(Size(0)) {
            return err("init_cwnd", "init_cwnd must be positive".into());
        }
        if self.min_cwnd == Some(Size(0)) {
            return err("min_cwnd", "min_cwnd must be positive".into());
        }
        Ok(())
    }
}

/// How often each branch ran (htsim's `NsccStats`, as counts of events).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NsccStats {
    /// ACKs in each of the four cases (after quick adapt let them through).
    pub proportional: u64,
    pub fair: u64,
    pub noop: u64,
    pub md_case: u64,
    /// Of the proportional ACKs, those that took the fast-increase path.
    pub fast: u64,
    /// Multiplicative decreases actually applied (EWMA above target, gate open).
    pub md_applied: u64,
    /// Quick adapt firings, and ECN ACKs ignored after one.
    pub quick_adapt: u64,
    pub qa_ignored: u64,
    /// Fulfil steps, and how many of them added eta.
    pub fulfil: u64,
    pub eta: u64,
    pub nacks: u64,
    /// Of the NACKs, those for gaps that only left the bytes in flight (`gap_nack = "spec"`).
    pub gap_nacks: u64,
    pub timeouts: u64,
    /// ACKs whose delay sample came from CSIG max(Delay).
    pub csig_samples: u64,
}

/// Per-flow NSCC state. Laid out in the order a flow reads it: what each
/// sent packet reads first (the window, the bytes in flight, the rate), so
/// that a send touches one line of the controller, then what an ACK reads.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct Nscc {
    // Read on every send.
    pub cwnd: f64,
    /// Payload bytes in flight (from the last ACK, plus sends since).
    pub inflight: f64,
    line_rate_bps: u64,
    /// Payload bytes = wire bytes - this (for on_send).
    header_bytes: u32,
    /// Window units are wire bytes.
    wire: bool,
    // Read on every ACK: state.
    pub base_rtt_ps: f64,
    /// EWMA of the queueing delay, ps.
    pub avg_delay_ps: f64,
    /// Pending increase, bytes^2 (applied as `inc_bytes / cwnd`).
    pub inc_bytes: f64,
    pub received_bytes: f64,
    pub achieved_bytes: f64,
    pub bytes_to_ignore: f64,
    pub bytes_ignored: f64,
    pub qa_end_ps: u64,
    pub last_adjust_ps: u64,
    pub fi_count: f64,
    pub max_wnd: f64,
    pub last_dec_ps: Option<u64>,
    pub trigger_qa: bool,
    pub increase_mode: bool,
    update_base: bool,
    qa_enabled: bool,
    qa_gate: u32,
    delay_signal: DelaySignal,
    // Resolved constants (bytes, ps).
    pub target_ps: f64,
    pub network_rtt_ps: f64,
    /// Bytes per ps of delay headroom.
    pub alpha: f64,
    pub fi: f64,
    pub fi_scale: f64,
    pub eta: f64,
    gamma: f64,
    max_md_jump: f64,
    ewma_gain: f64,
    no_ecn_high_factor: f64,
    fast_threshold_ps: f64,
    pub qa_threshold_ps: f64,
    pub adjust_bytes: f64,
    pub adjust_period_ps: f64,
    max_wnd_bdps: f64,
    pub min_cwnd: f64,
    nack_delay_ps: f64,
    /// One full packet in window units (MSS, or MSS plus headers).
    unit: f64,
    gap_nack: GapNack,
    receiver_credits: bool,
    pub stats: NsccStats,
}

impl Nscc {
    pub fn new(c: &NsccConfig, p: &FlowParams) -> Self {
        let mss = p.mss.max(1) as f64;
        let rate_bytes_per_ps = p.line_rate_bps as f64 / 8.0 / PS_PER_S as f64;
        let network_rtt_ps = c.network_rtt.map(|t| t.0).unwrap_or(p.base_rtt_ps).max(1) as f64;
        let target_ps = c.target_qdelay.map(|t| t.0 as f64).unwrap_or_else(|| {
            network_rtt_ps * if c.trimming.unwrap_or(false) { TARGET_FACTOR_TRIM } else { TARGET_FACTOR_NO_TRIM }
        });
        let target_ps = target_ps.max(1.0);
        let network_bdp = network_rtt_ps * rate_bytes_per_ps;
        let a = network_bdp / c.reference_bdp.0.max(1) as f64;
        let b = target_ps / c.reference_rtt.0.max(1) as f64;
        let alpha = c.alpha.map(|x| x / PS_PER_US as f64).unwrap_or(c.alpha_factor * mss * a * b / target_ps);
        let fi = c.fi.map(|s| s.0 as f64).unwrap_or(c.fi_factor * mss * a);
        let fi_scale = c.fi_scale.unwrap_or(c.fi_scale_factor * a);
        let eta = c.eta.map(|s| s.0 as f64).unwrap_or(c.eta_factor * mss * a);
        let base_rtt_ps = p.base_rtt_ps.max(1) as f64;
        let wire = c.window_units == WindowUnits::Wire;
        // htsim: _min_cwnd and the adjust threshold are in _mtu (wire) units;
        // alpha, fi and eta stay in _mss (payload) units.
        let unit = if wire { p.packet_bytes.max(p.mss).max(1) as f64 } else { mss };
        let min_cwnd = c.min_cwnd.map(|s| s.0 as f64).unwrap_or(unit);
        let max_wnd = (c.max_wnd_bdps * base_rtt_ps * rate_bytes_per_ps).max(min_cwnd);
        let cwnd = c.init_cwnd.map(|s| s.0 as f64).unwrap_or(max_wnd).clamp(min_cwnd, max_wnd);
        Nscc {
            line_rate_bps: p.line_rate_bps,
            network_rtt_ps,
            target_ps,
            alpha,
            fi,
            fi_scale,
            eta,
            gamma: c.gamma,
            max_md_jump: c.max_md_jump,
            ewma_gain: c.delay_ewma_gain,
            no_ecn_high_factor: c.no_ecn_high_delay_factor,
            fast_threshold_ps: c.fast_increase_threshold.0 as f64,
            qa_enabled: c.quick_adapt,
            qa_gate: c.qa_gate.min(63),
            qa_threshold_ps: c.qa_threshold.map(|t| t.0 as f64).unwrap_or(c.qa_threshold_factor * target_ps),
            adjust_bytes: c.adjust_bytes_mtus * unit,
            adjust_period_ps: c.adjust_period.map(|t| t.0 as f64).unwrap_or(network_rtt_ps),
            max_wnd_bdps: c.max_wnd_bdps,
            min_cwnd,
            nack_delay_ps: c.nack_delay.map(|t| t.0 as f64).unwrap_or(network_rtt_ps),
            update_base: c.update_base_rtt,
            delay_signal: c.delay_signal,
            cwnd,
            base_rtt_ps,
            max_wnd,
            avg_delay_ps: 0.0,
            inc_bytes: 0.0,
            received_bytes: 0.0,
            achieved_bytes: 0.0,
            inflight: 0.0,
            qa_end_ps: 0,
            trigger_qa: false,
            bytes_to_ignore: 0.0,
            bytes_ignored: 0.0,
            fi_count: 0.0,
            increase_mode: false,
            last_dec_ps: None,
            last_adjust_ps: 0,
            stats: NsccStats::default(),
            header_bytes: p.packet_bytes.saturating_sub(p.mss),
            wire,
            unit,
            gap_nack: c.gap_nack,
            receiver_credits: c.receiver_credits,
        }
    }

    fn clamp(&mut self) {
        self.cwnd = self.cwnd.clamp(self.min_cwnd, self.max_wnd);
    }

    /// Lowers the base RTT (and with it `max_wnd`) on a smaller sample.
    fn update_base_rtt(&mut self, rtt_ps: f64) {
        if self.update_base && rtt_ps > 0.0 && rtt_ps < self.base_rtt_ps {
            self.base_rtt_ps = rtt_ps;
            let bdp = rtt_ps * self.line_rate_bps as f64 / 8.0 / PS_PER_S as f64;
            self.max_wnd = (self.max_wnd_bdps * bdp).max(self.min_cwnd);
        }
    }

    /// The delay EWMA; a no-ECN sample above target counts as `factor * base_rtt`.
    fn update_delay(&mut self, delay_ps: f64, ecn: bool) {
        let d = if !ecn && delay_ps > self.target_ps { self.no_ecn_high_factor * self.base_rtt_ps } else { delay_ps };
        self.avg_delay_ps = self.ewma_gain * d + (1.0 - self.ewma_gain) * self.avg_delay_ps;
    }

    /// The reflected CSIG max(Delay), if this flow uses it and a switch wrote it.
    fn csig_delay(&self, a: &AckSample) -> Option<f64> {
        if self.delay_signal != DelaySignal::Csig {
            return None;
        }
        match a.csig {
            Some(c) if c.sig == SignalType::Delay && c.writer != NO_WRITER && c.value.is_finite() => Some(c.value.max(0.0)),
            _ => None,
        }
    }

    /// Quick adapt; true if the caller must stop (QA fired or the ACK is ignored).
    fn quick_adapt(&mut self, now: u64, is_loss: bool, ecn: bool, delay_ps: f64) -> bool {
        if !self.qa_enabled {
            return false;
        }
        let mut done = false;
        if self.bytes_ignored < self.bytes_to_ignore && ecn {
            self.stats.qa_ignored += 1;
            done = true;
        } else if now >= self.qa_end_ps {
            if self.qa_end_ps != 0
                && (self.trigger_qa || is_loss || delay_ps > self.qa_threshold_ps)
                && self.achieved_bytes < self.max_wnd / (1u64 << self.qa_gate) as f64
            {
                self.cwnd = self.achieved_bytes.max(self.min_cwnd);
                self.bytes_to_ignore = self.inflight;
                self.bytes_ignored = 0.0;
                self.trigger_qa = false;
                self.stats.quick_adapt += 1;
                done = true;
            }
            self.achieved_bytes = 0.0;
            self.qa_end_ps = now + (self.base_rtt_ps + self.target_ps) as u64;
        }
        if done {
            self.inc_bytes = 0.0;
            self.received_bytes = 0.0;
        }
        done
    }

    /// Fast increase; true if it applied (the proportional term is then skipped).
    fn fast_increase(&mut self, n: f64, delay_ps: f64) -> bool {
        if delay_ps < self.fast_threshold_ps {
            self.fi_count += n;
            if self.fi_count > self.cwnd || self.increase_mode {
                self.cwnd = (self.cwnd + n * self.fi_scale).min(self.max_wnd);
                self.increase_mode = true;
                return true;
            }
        } else {
            self.fi_count = 0.0;
        }
        self.increase_mode = false;
        false
    }

    fn multiplicative_decrease(&mut self, now: u64) {
        self.increase_mode = false;
        self.fi_count = 0.0;
        let avg = self.avg_delay_ps;
        let gate = match self.last_dec_ps {
            None => true,
            Some(t) => now.saturating_sub(t) as f64 > self.base_rtt_ps,
        };
        if avg > self.target_ps && gate {
            let f = (1.0 - self.gamma * (avg - self.target_ps) / avg).max(self.max_md_jump);
            self.cwnd = (self.cwnd * f).max(self.min_cwnd);
            self.last_dec_ps = Some(now);
            self.stats.md_applied += 1;
        }
    }

    fn fulfil(&mut self, now: u64) {
        self.stats.fulfil += 1;
        self.cwnd += self.inc_bytes / self.cwnd;
        if now.saturating_sub(self.last_adjust_ps) as f64 >= self.adjust_period_ps {
            self.cwnd += self.eta;
            self.last_adjust_ps = now;
            self.stats.eta += 1;
        }
        self.cwnd = self.cwnd.min(self.max_wnd);
        self.inc_bytes = 0.0;
        self.received_bytes = 0.0;
    }
}

impl CongestionControl for Nscc {
    fn on_ack(&mut self, a: &AckSample) {
        let now = a.now_ps;
        let n = a.acked_bytes as f64;
        self.inflight = a.inflight_bytes as f64;
        self.bytes_ignored += n;
        self.received_bytes += n;
        self.achieved_bytes += n;
        let ecn = a.ce_pkts > 0;

        let rtt = a.rtt_ps as f64;
        let rtt_delay = if a.rtt_ps > 0 {
            self.update_base_rtt(rtt);
            Some((rtt - self.base_rtt_ps).max(0.0))
        } else {
            None
        };
        let sample = match self.csig_delay(a) {
            Some(d) => {
                self.stats.csig_samples += 1;
                Some(d)
            }
            None => rtt_delay,
        };
        // No valid sample: use the current average (htsim), without feeding it.
        let delay = match sample {
            Some(d) => {
                self.update_delay(d, ecn);
                d
            }
            None => self.avg_delay_ps,
        };

        if self.quick_adapt(now, false, ecn, delay) {
            return;
        }
        let below = delay < self.target_ps;
        match (ecn, below) {
            (false, true) => {
                self.stats.proportional += 1;
                if self.fast_increase(n, delay) {
                    self.stats.fast += 1;
                } else {
                    self.inc_bytes += self.alpha * n * (self.target_ps - delay);
                }
            }
            (false, false) => {
                self.stats.fair += 1;
                self.inc_bytes += self.fi * n;
            }
            (true, true) => self.stats.noop += 1,
            (true, false) => {
                self.stats.md_case += 1;
                self.multiplicative_decrease(now);
            }
        }
        self.clamp();
        if self.received_bytes > self.adjust_bytes
            || now.saturating_sub(self.last_adjust_ps) as f64 >= self.adjust_period_ps
        {
            self.fulfil(now);
            self.clamp();
        }
    }

    /// By the NACK's reason, as htsim's `updateCwndOnNack_NSCC` and the
    /// specification's `OnNACK`: a trim of one full packet feeds the delay
    /// EWMA, arms quick adapt and, if quick adapt does not fire, takes the
    /// packet off the window, unless the trim was at the last hop and
    /// receivers grant credits (the receiver's credits pace its own link;
    /// without them a last-hop trim is a trim); a gap NACK does the same
    /// (`gap_nack = "trim"`) or only takes the packet out of flight
    /// (`"spec"`).
    fn on_nack(&mut self, now: u64, _snd_nxt: u32, reason: NackReason) {
        self.stats.nacks += 1;
        let size = self.unit;
        self.inflight = (self.inflight - size).max(0.0);
        if !reason.is_trim() && self.gap_nack == GapNack::Spec {
            self.stats.gap_nacks += 1;
            return;
        }
        self.update_delay(self.nack_delay_ps, true);
        self.bytes_ignored += size;
        self.trigger_qa = true;
        let spared = self.receiver_credits && reason == NackReason::TrimmedLastHop;
        if !self.quick_adapt(now, true, true, 0.0) && !spared {
            self.cwnd = (self.cwnd - size).max(self.min_cwnd);
        }
    }

    fn on_timeout(&mut self, _now: u64) {
        self.stats.timeouts += 1;
        self.cwnd = (self.cwnd - self.unit).max(self.min_cwnd);
    }

    fn on_send(&mut self, _now: u64, _psn: u32, bytes: u32) {
        self.inflight += if self.wire { bytes } else { bytes.saturating_sub(self.header_bytes) } as f64;
    }

    fn cwnd(&self) -> u64 {
        self.cwnd as u64
    }

    fn rate(&self) -> u64 {
        self.line_rate_bps
    }

    /// `alpha` reports the delay EWMA as a fraction of the target.
    fn metrics(&self) -> CcMetrics {
        CcMetrics { cwnd_bytes: self.cwnd(), rate_bps: self.line_rate_bps, alpha: self.avg_delay_ps / self.target_ps }
    }

    fn decisions(&self) -> Option<Decisions> {
        let s = &self.stats;
        let c = |n: u64| n.min(u32::MAX as u64) as u32;
        Some(Decisions {
            fair: c(s.fair),
            proportional: c(s.proportional),
            fast: c(s.fast),
            noop: c(s.noop),
            decrease: c(s.md_case),
            decrease_applied: c(s.md_applied),
            quick_adapt: c(s.quick_adapt),
            ignored: c(s.qa_ignored),
        })
    }
}

impl Algorithm for Nscc {
    const NAME: &'static str = "nscc";
    const ABOUT: &'static str = "UEC NSCC delay and ECN window control; delay_signal = \"csig\" for CSIG max(Delay)";
    type Config = NsccConfig;
    type Receiver = NoReceiver;
    fn build(c: &NsccConfig, p: &FlowParams) -> Self {
        Nscc::new(c, p)
    }
    fn validate(c: &NsccConfig) -> Result<(), ConfigError> {
        c.validate()
    }
    /// Whether receivers grant credits (the last-hop trim rule).
    fn resolve(c: &mut NsccConfig, _sections: &super::Sections, shared: &super::Shared) {
        c.receiver_credits = shared.receiver_credits;
    }
    /// `window_units = "wire"`: the window counts each packet's header too.
    fn wire_window(c: &NsccConfig) -> bool {
        c.window_units == WindowUnits::Wire
    }
    /// NSCC derives its constants from one network-wide RTT (htsim's
    /// network_rtt): unless the scenario sets it, the fabric's largest
    /// unloaded RTT between two hosts, whichever hosts the flows use. Unless
    /// the scenario sets `trimming`, it follows the switches: a trimming
    /// fabric gets the trimming target.
    fn prepare(c: &mut NsccConfig, f: &super::Fabric) {
        if c.network_rtt.is_none() {
            c.network_rtt = (f.network_rtt > 0).then_some(Time(f.network_rtt));
        }
        c.trimming.get_or_insert(f.trimming);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signal::CsigSample;

    const US: u64 = PS_PER_US;

    /// 100 Gb/s, 12 us base RTT, 1000 B MSS: BDP = 150,000 B = the reference
    /// BDP, so a = 1; target = 1.0 x 12 us (no trimming), so b = 1.
    /// alpha = 4 * 1000 / 12e6 = 1/3000 B/ps, fi = 5000 B, eta = 150 B,
    /// fi_scale = 0.25, max_wnd = 225,000 B, qa_threshold = 48 us,
    /// adjust_bytes = 8000 B, adjust_period = 12 us.
    fn params() -> FlowParams {
        FlowParams { line_rate_bps: 100_000_000_000, base_rtt_ps: 12 * US, mss: 1000, packet_bytes: 1064, hops: 4 }
    }

    fn nscc(c: NsccConfig) -> Nscc {
        Nscc::new(&c, &params())
    }

    /// Quick adapt off, 100 kB window: the four cases in isolation.
    fn plain() -> Nscc {
        nscc(NsccConfig { quick_adapt: false, init_cwnd: Some(Size(100_000)), ..Default::default() })
    }

    /// One 1000 B ACK at `now_us` with an RTT of `rtt_us`, CE echoed or not.
    fn ack(now_us: f64, rtt_us: f64, ce: bool) -> AckSample<'static> {
        AckSample {
            now_ps: (now_us * US as f64) as u64,
            acked_bytes: 1000,
            acked_pkts: 1,
            ce_pkts: ce as u32,
            rtt_ps: (rtt_us * US as f64) as u64,
            inflight_bytes: 40_000,
            ..Default::default()
        }
    }

    fn csig(value_us: f64, writer: u32) -> Option<CsigSample> {
        Some(CsigSample { sig: SignalType::Delay, raw: 0, value: value_us * US as f64, locator: 0, writer })
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6 * b.abs().max(1.0)
    }

    #[test]
    fn derived_parameters_match_the_notes() {
        let n = nscc(NsccConfig::default());
        assert_eq!(n.target_ps, 12e6);
        assert!(close(n.alpha * 3000.0, 1.0));
        assert!(close(n.fi, 5000.0));
        assert!(close(n.eta, 150.0));
        assert!(close(n.fi_scale, 0.25));
        assert!(close(n.max_wnd, 225_000.0));
        assert_eq!(n.cwnd(), 225_000, "line-rate start at max_wnd");
        assert_eq!(n.qa_threshold_ps, 48e6);
        assert_eq!(n.adjust_bytes, 8000.0);
        assert_eq!(n.adjust_period_ps, 12e6);
        assert_eq!(n.min_cwnd, 1000.0);
        // Trimming: target 0.75 * 12 = 9 us, b = 0.75, alpha = 4*1000*1*0.75/9e6 = 1/3000 again.
        let t = nscc(NsccConfig { trimming: Some(true), ..Default::default() });
        assert_eq!(t.target_ps, 9e6);
        assert!(close(t.alpha * 3000.0, 1.0));
        assert_eq!(t.qa_threshold_ps, 36e6);
        // 200 Gb/s: a = 2: fi = 10,000, eta = 300, fi_scale = 0.5, alpha doubles.
        let p = FlowParams { line_rate_bps: 200_000_000_000, ..params() };
        let d = Nscc::new(&NsccConfig::default(), &p);
        assert!(close(d.fi, 10_000.0) && close(d.eta, 300.0) && close(d.fi_scale, 0.5));
        assert!(close(d.alpha * 1500.0, 1.0));
        // Overrides: alpha in B/us.
        let o = nscc(NsccConfig { alpha: Some(1.0), fi: Some(Size(7)), eta: Some(Size(9)), fi_scale: Some(0.1), ..Default::default() });
        assert!(close(o.alpha, 1e-6) && o.fi == 7.0 && o.eta == 9.0 && o.fi_scale == 0.1);
    }

    #[test]
    fn validate_names_the_key() {
        assert!(NsccConfig::default().validate().is_ok());
        let bad = NsccConfig { max_md_jump: 0.0, ..Default::default() };
        assert_eq!(bad.validate().unwrap_err().0, "max_md_jump");
        let bad = NsccConfig { gamma: -1.0, ..Default::default() };
        assert_eq!(bad.validate().unwrap_err().0, "gamma");
        let bad = NsccConfig { target_qdelay: Some(Time(0)), ..Default::default() };
        assert_eq!(bad.validate().unwrap_err().0, "target_qdelay");
    }

    #[test]
    fn proportional_increase_is_deferred_until_fulfil() {
        let mut n = plain();
        // Delay 18 - 12 = 6 us < target 12 us, no ECN, >= 1 us (no fast increase):
        // inc += (1/3000) * 1000 * (12e6 - 6e6) = 2e6 per ACK.
        for i in 1..=8 {
            n.on_ack(&ack(i as f64, 18.0, false));
        }
        assert_eq!(n.cwnd, 100_000.0, "received 8000 is not > 8000 and < 12 us passed");
        assert!(close(n.inc_bytes, 16e6));
        // 9th: received 9000 > 8000 -> cwnd += 18e6 / 1e5 = 180; no eta (9 us < 12 us).
        n.on_ack(&ack(9.0, 18.0, false));
        assert!(close(n.cwnd, 100_180.0), "cwnd {}", n.cwnd);
        assert_eq!((n.stats.proportional, n.stats.fulfil, n.stats.eta), (9, 1, 0));
        // At 13 us: 13 - 0 >= 12 us: fulfil with eta: + 2e6 / 100180 + 150.
        n.on_ack(&ack(13.0, 18.0, false));
        assert!(close(n.cwnd, 100_180.0 + 2e6 / 100_180.0 + 150.0), "cwnd {}", n.cwnd);
        assert_eq!(n.last_adjust_ps, 13 * US);
    }

    #[test]
    fn fair_increase_adds_fi_per_window_and_ewma_sees_quarter_base_rtt() {
        let mut n = plain();
        // Delay 27 - 12 = 15 us >= target, no ECN: inc += fi * 1000 = 5e6 per ACK.
        for i in 1..=9 {
            n.on_ack(&ack(i as f64, 27.0, false));
        }
        // 9 x 5e6 / 1e5 = 450.
        assert!(close(n.cwnd, 100_450.0), "cwnd {}", n.cwnd);
        assert_eq!(n.stats.fair, 9);
        // Each no-ECN sample above target feeds 0.25 * 12 us = 3 us to the EWMA.
        assert!(close(n.avg_delay_ps, 3e6 * (1.0 - 0.9875f64.powi(9))), "avg {}", n.avg_delay_ps);
    }

    #[test]
    fn ecn_below_target_is_a_noop() {
        let mut n = plain();
        // Delay 5 us < target with ECN: nothing, even when fulfil runs at the 9th ACK.
        for i in 1..=9 {
            n.on_ack(&ack(i as f64, 17.0, true));
        }
        assert_eq!(n.cwnd, 100_000.0);
        assert_eq!(n.inc_bytes, 0.0);
        assert_eq!((n.stats.noop, n.stats.fulfil), (9, 1));
        // ECN samples are fed to the EWMA as they are: 5 us.
        assert!(close(n.avg_delay_ps, 5e6 * (1.0 - 0.9875f64.powi(9))));
    }

    #[test]
    fn multiplicative_decrease_uses_the_ewma_once_per_base_rtt() {
        let mut n = plain();
        n.avg_delay_ps = 20e6;
        // ECN, delay 32 - 12 = 20 us: avg stays 20 us;
        // factor = max(1 - 0.8 * (20 - 12) / 20, 0.5) = 0.68.
        n.on_ack(&ack(1.0, 32.0, true));
        assert!(close(n.cwnd, 68_000.0), "cwnd {}", n.cwnd);
        // 4 us later: not a base RTT (12 us) since the last decrease.
        n.on_ack(&ack(5.0, 32.0, true));
        assert!(close(n.cwnd, 68_000.0));
        // 13 us later: 68,000 * 0.68 = 46,240; then fulfil (14 us >= 12 us since 0) adds eta 150.
        n.on_ack(&ack(14.0, 32.0, true));
        assert!(close(n.cwnd, 46_390.0), "cwnd {}", n.cwnd);
        assert_eq!((n.stats.md_case, n.stats.md_applied), (3, 2));

        // Floor: avg 100 us -> 1 - 0.8 * 88 / 100 = 0.296 -> 0.5.
        let mut n = plain();
        n.avg_delay_ps = 100e6;
        n.on_ack(&ack(1.0, 112.0, true));
        assert!(close(n.cwnd, 50_000.0), "cwnd {}", n.cwnd);

        // The sample alone does not decrease: avg 0 -> 0.0125 * 20 us = 0.25 us < target.
        let mut n = plain();
        n.on_ack(&ack(1.0, 32.0, true));
        assert_eq!(n.cwnd, 100_000.0);
        assert!(close(n.avg_delay_ps, 250_000.0));
        assert_eq!((n.stats.md_case, n.stats.md_applied), (1, 0));
    }

    #[test]
    fn fast_increase_after_a_window_of_near_zero_delay() {
        let mut n = nscc(NsccConfig { quick_adapt: false, init_cwnd: Some(Size(5000)), ..Default::default() });
        // Delay 0: ACKs 1-5: fi_count 1000..5000, not > cwnd 5000: proportional,
        // inc += (1/3000) * 1000 * 12e6 = 4e6 each -> 20e6.
        for i in 1..=5 {
            n.on_ack(&ack(i as f64, 12.0, false));
        }
        assert_eq!(n.cwnd, 5000.0);
        assert!(close(n.inc_bytes, 20e6));
        // ACK 6: fi_count 6000 > 5000: cwnd += 0.25 * 1000 = 5250, fast mode.
        n.on_ack(&ack(6.0, 12.0, false));
        assert!(close(n.cwnd, 5250.0) && n.increase_mode);
        n.on_ack(&ack(7.0, 12.0, false));
        n.on_ack(&ack(8.0, 12.0, false));
        assert!(close(n.cwnd, 5750.0));
        // ACK 9: fast to 6000, then fulfil (received 9000 > 8000): + 20e6 / 6000.
        n.on_ack(&ack(9.0, 12.0, false));
        assert!(close(n.cwnd, 6000.0 + 20e6 / 6000.0), "cwnd {}", n.cwnd);
        assert_eq!(n.stats.fast, 4);
        // Delay 2 us >= 1 us: fast mode off, proportional: inc = 1000 * 10e6 / 3000.
        n.on_ack(&ack(10.0, 14.0, false));
        assert!(!n.increase_mode && n.fi_count == 0.0);
        assert!(close(n.inc_bytes, 1e10 / 3000.0));
    }

    #[test]
    fn quick_adapt_sets_the_window_to_what_was_delivered() {
        let mut n = nscc(NsccConfig { init_cwnd: Some(Size(100_000)), ..Default::default() });
        // First ACK only opens a QA window: ends at 1 + 12 + 12 = 25 us.
        n.on_ack(&ack(1.0, 13.0, false));
        assert_eq!(n.qa_end_ps, 25 * US);
        assert_eq!(n.cwnd, 100_000.0);
        // At 26 us, 5000 B acknowledged in the window, delay 50 us > 48 us,
        // 5000 < 225,000 >> 3 = 28,125: cwnd = 5000, ignore the 40,000 B in flight.
        let a = AckSample { acked_bytes: 5000, ..ack(26.0, 62.0, false) };
        n.on_ack(&a);
        assert_eq!(n.cwnd, 5000.0);
        assert_eq!((n.bytes_to_ignore, n.bytes_ignored, n.stats.quick_adapt), (40_000.0, 0.0, 1));
        assert_eq!(n.inc_bytes, 0.0);
        assert_eq!(n.qa_end_ps, 50 * US);
        // An ECN ACK while ignoring: no change at all (even with a huge EWMA).
        n.avg_delay_ps = 100e6;
        n.on_ack(&ack(27.0, 40.0, true));
        assert_eq!(n.cwnd, 5000.0);
        assert_eq!(n.stats.qa_ignored, 1);
        // A non-ECN ACK is processed: delay 1 us is not below the 1 us fast-increase
        // threshold, so proportional: inc = 1000 * 11e6 / 3000;
        // fulfil (28 us >= 12 us since 0): + inc / 5000 + eta 150.
        n.on_ack(&ack(28.0, 13.0, false));
        assert!(close(n.cwnd, 5000.0 + 11e9 / 3000.0 / 5000.0 + 150.0), "cwnd {}", n.cwnd);
    }

    #[test]
    fn quick_adapt_is_gated_by_achieved_bytes() {
        let mut n = nscc(NsccConfig { init_cwnd: Some(Size(100_000)), ..Default::default() });
        n.on_ack(&ack(1.0, 13.0, false));
        // 30,000 B >= 28,125: no QA; the ACK is a fair increase (delay 50 us, no ECN).
        let a = AckSample { acked_bytes: 30_000, ..ack(26.0, 62.0, false) };
        n.on_ack(&a);
        assert_eq!(n.stats.quick_adapt, 0);
        assert_eq!(n.stats.fair, 1);
        assert_eq!(n.achieved_bytes, 0.0, "a new QA window starts anyway");
    }

    #[test]
    fn base_rtt_tracks_the_smallest_sample() {
        let mut n = nscc(NsccConfig::default());
        // RTT 10 us < 12 us: base 10 us, BDP 125,000, max_wnd 187,500; the
        // window (225,000) is clamped to it; delay 0 -> proportional (fi_count
        // 1000 is not above cwnd): inc = 1000 * 12e6 / 3000 = 4e6.
        n.on_ack(&ack(1.0, 10.0, false));
        assert_eq!(n.base_rtt_ps, 10e6);
        assert!(close(n.max_wnd, 187_500.0));
        assert!(close(n.cwnd, 187_500.0));
        assert!(close(n.inc_bytes, 4e6));
        // RTT 16 us: delay 6 us against the new base: inc += 1000 * 6e6 / 3000 = 2e6.
        n.on_ack(&ack(2.0, 16.0, false));
        assert_eq!(n.base_rtt_ps, 10e6);
        assert!(close(n.inc_bytes, 6e6), "inc {}", n.inc_bytes);
        // Target and the derived constants stay where they were.
        assert_eq!(n.target_ps, 12e6);
        // Switched off: the base stays.
        let mut m = nscc(NsccConfig { update_base_rtt: false, ..Default::default() });
        m.on_ack(&ack(1.0, 10.0, false));
        assert_eq!(m.base_rtt_ps, 12e6);
    }

    #[test]
    fn nack_removes_a_packet_and_arms_quick_adapt() {
        let mut n = nscc(NsccConfig { init_cwnd: Some(Size(100_000)), ..Default::default() });
        // No QA window yet: QA only opens one (ends 1 + 24 = 25 us); cwnd -= 1000.
        n.on_nack(US, 0, crate::packet::NackReason::Trimmed);
        assert_eq!(n.cwnd, 99_000.0);
        assert!(n.trigger_qa);
        // The EWMA is fed network_rtt = 12 us as an ECN sample: 0.0125 * 12 us.
        assert!(close(n.avg_delay_ps, 150_000.0));
        n.on_nack(2 * US, 0, crate::packet::NackReason::Trimmed);
        assert_eq!(n.cwnd, 98_000.0);
        // First ACK after the window: 1000 B achieved < 28,125 and trigger_qa: cwnd = 1000.
        n.on_ack(&ack(30.0, 13.0, false));
        assert_eq!(n.cwnd, 1000.0);
        assert!(!n.trigger_qa);
        assert_eq!(n.bytes_to_ignore, 40_000.0);
        // A NACK while stale bytes are being ignored: QA swallows it, no decrease.
        n.cwnd = 10_000.0;
        n.on_nack(31 * US, 0, crate::packet::NackReason::Trimmed);
        assert_eq!(n.cwnd, 10_000.0);
        assert_eq!(n.stats.nacks, 3);
    }

    #[test]
    fn a_gap_nack_is_a_trim_by_default_and_only_leaves_flight_per_the_spec() {
        use crate::packet::NackReason;
        let cfg = |gap_nack| NsccConfig { init_cwnd: Some(Size(100_000)), quick_adapt: false, gap_nack, ..Default::default() };
        let mut d = nscc(cfg(GapNack::Trim));
        d.inflight = 10_000.0;
        d.on_nack(US, 0, NackReason::Gap);
        assert_eq!((d.cwnd, d.inflight, d.stats.gap_nacks), (99_000.0, 9_000.0, 0));
        assert!(d.trigger_qa && d.avg_delay_ps > 0.0);
        let mut s = nscc(cfg(GapNack::Spec));
        s.inflight = 10_000.0;
        s.on_nack(US, 0, NackReason::Gap);
        assert_eq!((s.cwnd, s.inflight, s.avg_delay_ps, s.trigger_qa, s.stats.gap_nacks), (100_000.0, 9_000.0, 0.0, false, 1));
        for r in [NackReason::Trimmed, NackReason::TrimmedLastHop] {
            let mut t = nscc(cfg(GapNack::Spec));
            t.on_nack(US, 0, r);
            assert_eq!(t.cwnd, 99_000.0, "{r:?}");
        }
        let c: NsccConfig = toml::from_str("gap_nack = \"spec\"").unwrap();
        assert_eq!(c.gap_nack, GapNack::Spec);
    }

    #[test]
    fn timeout_removes_one_packet_down_to_min_cwnd() {
        let mut n = plain();
        n.on_timeout(0);
        assert_eq!(n.cwnd(), 99_000);
        n.cwnd = 1500.0;
        n.on_timeout(0);
        n.on_timeout(0);
        assert_eq!(n.cwnd(), 1000);
    }

    #[test]
    fn wire_units_count_packets_with_their_headers() {
        let c = NsccConfig { window_units: WindowUnits::Wire, ..Default::default() };
        let p = FlowParams { line_rate_bps: 100_000_000_000, base_rtt_ps: 8_000_000, mss: 4096, packet_bytes: 4160, hops: 2 };
        let mut n = Nscc::new(&c, &p);
        let pay = Nscc::new(&NsccConfig::default(), &p);
        // htsim: _min_cwnd = _mtu and the adjust threshold 8 x _mtu count wire bytes;
        // alpha, fi and eta stay in _mss units.
        assert_eq!((n.min_cwnd, n.adjust_bytes), (4160.0, 8.0 * 4160.0));
        assert_eq!((pay.min_cwnd, pay.adjust_bytes), (4096.0, 8.0 * 4096.0));
        assert_eq!((n.alpha, n.fi, n.eta), (pay.alpha, pay.fi, pay.eta));
        n.on_send(0, 0, 4160);
        assert_eq!(n.inflight, 4160.0);
        // A timeout removes one wire packet.
        let before = n.cwnd;
        n.on_timeout(1);
        assert_eq!(n.cwnd, before - 4160.0);
        let t: NsccConfig = toml::from_str("window_units = \"wire\"").unwrap();
        assert_eq!(t.window_units, WindowUnits::Wire);
        assert!(toml::from_str::<NsccConfig>("window_units = \"mtu\"").is_err());
    }

    #[test]
    fn on_send_tracks_payload_in_flight() {
        let mut n = plain();
        n.on_ack(&ack(1.0, 13.0, false));
        n.on_send(US, 0, 1064);
        n.on_send(US, 1, 564);
        assert_eq!(n.inflight, 40_000.0 + 1000.0 + 500.0);
    }

    #[test]
    fn csig_max_delay_replaces_the_rtt_delay_sample() {
        let csig_cfg = NsccConfig { quick_adapt: false, init_cwnd: Some(Size(100_000)), delay_signal: DelaySignal::Csig, ..Default::default() };
        // RTT delay 15 us >= target, no ECN.
        let base = ack(1.0, 27.0, false);
        // rtt: fair increase, inc = 5e6.
        let mut r = plain();
        r.on_ack(&AckSample { csig: csig(5.0, 3), ..base });
        assert!(close(r.inc_bytes, 5e6) && r.stats.fair == 1);
        // csig, max(Delay) 5 us written by port 3: proportional, inc = 1000 * 7e6 / 3000.
        let mut c = Nscc::new(&csig_cfg, &params());
        c.on_ack(&AckSample { csig: csig(5.0, 3), ..base });
        assert!(close(c.inc_bytes, 7e9 / 3000.0) && c.stats.proportional == 1 && c.stats.csig_samples == 1);
        // The EWMA took 5 us, not the substitute for a high no-ECN sample.
        assert!(close(c.avg_delay_ps, 0.0125 * 5e6));
        // Not written by a switch: falls back to rtt - base_rtt -> fair.
        let mut f = Nscc::new(&csig_cfg, &params());
        f.on_ack(&AckSample { csig: csig(5.0, NO_WRITER), ..base });
        assert!(close(f.inc_bytes, 5e6) && f.stats.fair == 1 && f.stats.csig_samples == 0);
        // No tag at all: also falls back.
        let mut g = Nscc::new(&csig_cfg, &params());
        g.on_ack(&base);
        assert!(g.stats.fair == 1);

        // ECN, RTT delay 20 us, EWMA 20 us: rtt -> MD to 68,000; csig 3 us -> no-op.
        let ecn = ack(1.0, 32.0, true);
        let mut r = plain();
        r.avg_delay_ps = 20e6;
        r.on_ack(&AckSample { csig: csig(3.0, 3), ..ecn });
        assert!(close(r.cwnd, 68_000.0));
        let mut c = Nscc::new(&csig_cfg, &params());
        c.avg_delay_ps = 20e6;
        c.on_ack(&AckSample { csig: csig(3.0, 3), ..ecn });
        assert_eq!(c.cwnd, 100_000.0);
        assert_eq!(c.stats.noop, 1);
        assert!(close(c.avg_delay_ps, 0.0125 * 3e6 + 0.9875 * 20e6));
        // And the reverse: RTT delay 1 us with ECN is a no-op for rtt, but a
        // 30 us max(Delay) is the MD case: avg = 0.0125*30 + 0.9875*20 = 20.125 us,
        // factor 1 - 0.8 * 8.125 / 20.125.
        let low = ack(1.0, 13.0, true);
        let mut c = Nscc::new(&csig_cfg, &params());
        c.avg_delay_ps = 20e6;
        c.on_ack(&AckSample { csig: csig(30.0, 3), ..low });
        assert!(close(c.cwnd, 100_000.0 * (1.0 - 0.8 * 8.125 / 20.125)), "cwnd {}", c.cwnd);
        // Base-RTT tracking still uses the RTT in csig mode.
        let mut c = Nscc::new(&csig_cfg, &params());
        c.on_ack(&AckSample { csig: csig(30.0, 3), ..ack(1.0, 11.0, false) });
        assert_eq!(c.base_rtt_ps, 11e6);
    }

    #[test]
    fn config_parses_from_toml_keys() {
        let c: NsccConfig = toml::from_str("delay_signal = \"csig\"\ntarget_qdelay = \"8us\"\ngamma = 0.5\nquick_adapt = false").unwrap();
        assert_eq!(c.delay_signal, DelaySignal::Csig);
        assert_eq!(c.target_qdelay, Some(Time::us(8)));
        assert_eq!(c.gamma, 0.5);
        assert!(!c.quick_adapt);
        assert!(toml::from_str::<NsccConfig>("bogus = 1").is_err());
    }

    #[test]
    fn decisions_count_each_case_of_a_scripted_ack_sequence() {
        // Quick adapt off: every ACK lands in exactly one of the four cases.
        let mut n = nscc(NsccConfig { quick_adapt: false, init_cwnd: Some(Size(100_000)), ..Default::default() });
        let script = [(27.0, false), (18.0, false), (17.0, true), (32.0, true), (27.0, false), (32.0, true), (18.0, false), (18.0, false)];
        for (i, &(rtt, ce)) in script.iter().enumerate() {
            n.on_ack(&ack(1.0 + 20.0 * i as f64, rtt, ce));
        }
        let d = n.decisions().unwrap();
        // 27 us: 15 us >= target 12 us; 18 us: 6 us below; 17 us with ECN: 5 us below; 32 us with ECN: 20 us above.
        assert_eq!((d.fair, d.proportional, d.noop, d.decrease), (2, 3, 1, 2));
        assert_eq!(d.fair + d.proportional + d.noop + d.decrease, script.len() as u32);
        assert!(d.fast <= d.proportional && d.decrease_applied <= d.decrease);
        assert_eq!((d.quick_adapt, d.ignored), (0, 0));
        // The counters are NSCC's own statistics, narrowed.
        n.stats.fair = u64::MAX;
        assert_eq!(n.decisions().unwrap().fair, u32::MAX, "saturates");
        let t = NsccConfig::default();
        let mut q = nscc(NsccConfig { init_cwnd: Some(Size(100_000)), ..t });
        q.on_nack(0, 10, NackReason::Trimmed);
        assert_eq!(q.decisions().unwrap().quick_adapt, q.stats.quick_adapt as u32);
    }
}
