//! Swift (Kumar et al., SIGCOMM 2020), window-based and delay-driven, and
//! Swift with fast ramp-up (FRU) from the CSIG min(ABW/C) signal (Karp,
//! SIGCOMM 2025 tutorial). The page is docs/cc/swift.md.
//!
//! Windows are real numbers of packets (one packet = `mss` payload bytes), as
//! in the paper's Algorithm 1; `cwnd()` converts to payload bytes.
//!
//! - fabric window `fcwnd`, driven by the fabric delay, which here is the
//!   ACK's RTT sample (the engine models no host delay, so RTT minus endpoint
//!   delay is the RTT), against
//!   `target = base_target + hops * h + clamp(fs_alpha / sqrt(fcwnd) + fs_beta, 0, fs_range)`;
//! - endpoint window `ecwnd`: the same rule on the endpoint delay, which is
//!   always 0 here, so it stays at `max_cwnd` and never binds;
//! - per ACK, with `n` packets acknowledged: below target
//!   `fcwnd += (ai + fru) * n / max(fcwnd, 1)`, where `fru = lambda * fcwnd * abw_c`
//!   when fast ramp-up is on and the ACK reflects a switch-written
//!   min(ABW/C) tag, else 0; at or above target, at most once per smoothed
//!   RTT, `fcwnd *= max(1 - beta * (delay - target) / delay, 1 - max_mdf)`;
//! - a NACK (fast recovery) multiplies by `1 - max_mdf` at most once per RTT;
//!   a timeout does too, and the `retx_reset_threshold`-th consecutive
//!   timeout resets the window to `min_cwnd`;
//! - below one packet of window the flow is paced at `cwnd / srtt` packets
//!   per second; otherwise it sends at line rate.

use super::{AckSample, Algorithm, CcMetrics, ConfigError, CongestionControl, FlowParams, NoReceiver};
use crate::signal::csig::SignalType;
use crate::signal::NO_WRITER;
use crate::units::{Time, PS_PER_S};
use serde::Deserialize;

/// What `hops` in the target delay counts.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum HopUnit {
    /// Links on the forward path, host to host (htsim counts the pipes of the route).
    #[default]
    Links,
    /// Switches on the forward path (links - 1), what an IP TTL difference counts (the paper).
    Switches,
}

/// `[transport.swift]`. Windows are in packets of `transport.mtu` payload bytes.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SwiftConfig {
    /// Base fabric target delay (the one-hop, many-packet-window target).
    pub base_target: Time,
    /// Target added per hop; default `base_target / 6.55`.
    pub h: Option<Time>,
    /// What a hop is for `h`.
    pub hop_unit: HopUnit,
    /// Largest flow-scaling addition to the target; default `5 * base_target`.
    pub fs_range: Option<Time>,
    /// Window (packets) at and below which the flow-scaling term is `fs_range`.
    pub fs_min_cwnd: f64,
    /// Window (packets) at and above which the flow-scaling term is 0.
    pub fs_max_cwnd: f64,
    /// Additive increment, packets per RTT.
    pub ai: f64,
    /// Multiplicative-decrease gain.
    pub beta: f64,
    /// Largest multiplicative decrease per RTT (the window keeps at least `1 - max_mdf`).
    pub max_mdf: f64,
    /// Smallest window, packets.
    pub min_cwnd: f64,
    /// Largest window, packets; default 1.5 BDP of the flow's path (at least 1).
    pub max_cwnd: Option<f64>,
    /// Initial window, packets; default one BDP of the flow's path.
    pub init_cwnd: Option<f64>,
    /// Endpoint target delay. Accepted for completeness; without a host-delay
    /// model the endpoint delay is 0, so the endpoint window stays at `max_cwnd`.
    pub endpoint_target: Option<Time>,
    /// Consecutive retransmission timeouts that reset the window to `min_cwnd`.
    pub retx_reset_threshold: u32,
    /// EWMA gain of the smoothed RTT (for once-per-RTT decreases and pacing).
    pub rtt_gain: f64,
    /// Swift FRU: grow faster in proportion to the reflected CSIG min(ABW/C).
    pub fast_ramp_up: bool,
    /// FRU safety factor (the slides ask for lambda < 1).
    pub lambda: f64,
}

impl Default for SwiftConfig {
    fn default() -> Self {
        SwiftConfig {
            base_target: Time::us(20),
            h: None,
            hop_unit: HopUnit::Links,
            fs_range: None,
            fs_min_cwnd: 0.1,
            fs_max_cwnd: 100.0,
            ai: 1.0,
            beta: 0.8,
            max_mdf: 0.5,
            min_cwnd: 0.001,
            max_cwnd: None,
            init_cwnd: None,
            endpoint_target: None,
            retx_reset_threshold: 5,
            rtt_gain: 0.125,
            fast_ramp_up: false,
            lambda: 0.5,
        }
    }
}

/// htsim's per-hop divisor: `h = base_target / 6.55`.
pub const H_DIVISOR: f64 = 6.55;
/// htsim's flow-scaling range: `fs_range = 5 * base_target`.
pub const FS_RANGE_FACTOR: u64 = 5;
/// Default `max_cwnd` in BDPs.
pub const MAX_CWND_BDPS: f64 = 1.5;

impl SwiftConfig {
    /// Per-hop target in ps.
    pub fn h_ps(&self) -> f64 {
        self.h.map(|t| t.0 as f64).unwrap_or(self.base_target.0 as f64 / H_DIVISOR)
    }

    /// Flow-scaling range in ps.
    pub fn fs_range_ps(&self) -> f64 {
        self.fs_range.map(|t| t.0).unwrap_or(self.base_target.0 * FS_RANGE_FACTOR) as f64
    }

    /// Checks the values; errors name the key (under `transport.swift`).
    pub fn validate(&self) -> Result<(), (String, String)> {
        let err = |k: &str, m: String| Err((k.to_string(), m));
        let pos = |x: f64| x.is_finite() && x > 0.0;
        if self.base_target.0 == 0 {
            return err("base_target", "base_target must be positive".into());
        }
        if !pos(self.fs_min_cwnd) {
            return err("fs_min_cwnd", format!("fs_min_cwnd must be positive, got {}", self.fs_min_cwnd));
        }
        if !(self.fs_max_cwnd.is_finite() && self.fs_max_cwnd > self.fs_min_cwnd) {
            return err("fs_max_cwnd", format!("fs_max_cwnd must exceed fs_min_cwnd ({}), got {}", self.fs_min_cwnd, self.fs_max_cwnd));
        }
        if !(self.ai.is_finite() && self.ai >= 0.0) {
            return err("ai", format!("ai must be >= 0, got {}", self.ai));
        }
        if !(self.beta.is_finite() && self.beta >= 0.0) {
            return err("beta", format!("beta must be >= 0, got {}", self.beta));
        }
        if !(self.max_mdf >= 0.0 && self.max_mdf < 1.0) {
            return err("max_mdf", format!("max_mdf must be in [0, 1), got {}", self.max_mdf));
        }
        if !pos(self.min_cwnd) {
            return err("min_cwnd", format!("min_cwnd must be positive, got {}", self.min_cwnd));
        }
        if let Some(m) = self.max_cwnd {
            if !(m.is_finite() && m >= self.min_cwnd) {
                return err("max_cwnd", format!("max_cwnd must be at least min_cwnd ({}), got {m}", self.min_cwnd));
            }
        }
        if let Some(i) = self.init_cwnd {
            if !pos(i) {
                return err("init_cwnd", format!("init_cwnd must be positive, got {i}"));
            }
        }
        if self.endpoint_target == Some(Time(0)) {
            return err("endpoint_target", "endpoint_target must be positive".into());
        }
        if self.retx_reset_threshold == 0 {
            return err("retx_reset_threshold", "retx_reset_threshold must be at least 1".into());
        }
        if !(self.rtt_gain > 0.0 && self.rtt_gain <= 1.0) {
            return err("rtt_gain", format!("rtt_gain must be in (0, 1], got {}", self.rtt_gain));
        }
        if !(self.lambda.is_finite() && self.lambda >= 0.0) {
            return err("lambda", format!("lambda must be >= 0, got {}", self.lambda));
        }
        Ok(())
    }
}

/// Per-flow Swift state.
#[derive(Clone, Debug)]
pub struct Swift {
    // Resolved constants.
    mss: f64,
    packet_bytes: f64,
    line_rate_bps: u64,
    ai: f64,
    beta: f64,
    max_mdf: f64,
    pub min_cwnd: f64,
    pub max_cwnd: f64,
    /// `base_target + hops * h`, ps.
    pub fabric_base_ps: f64,
    fs_alpha_ps: f64,
    fs_beta_ps: f64,
    fs_range_ps: f64,
    endpoint_target_ps: Option<f64>,
    retx_reset_threshold: u32,
    rtt_gain: f64,
    fru: bool,
    lambda: f64,
    // State.
    /// Fabric window, packets.
    pub fcwnd: f64,
    /// Endpoint window, packets.
    pub ecwnd: f64,
    /// Smoothed RTT, ps (starts at the flow's base RTT).
    pub srtt_ps: f64,
    /// Last time the fabric / endpoint window shrank (None: never).
    pub f_last_decrease: Option<u64>,
    pub e_last_decrease: Option<u64>,
    /// Consecutive retransmission timeouts.
    pub retransmit_cnt: u32,
    /// ACKs that applied an FRU increase.
    pub fru_acks: u64,
}

impl Swift {
    pub fn new(c: &SwiftConfig, p: &FlowParams) -> Self {
        let mss = p.mss.max(1) as f64;
        let bdp_pkts = p.bdp() as f64 / mss;
        let min_cwnd = c.min_cwnd;
        let max_cwnd = c.max_cwnd.unwrap_or((MAX_CWND_BDPS * bdp_pkts).max(1.0)).max(min_cwnd);
        let init = c.init_cwnd.unwrap_or(bdp_pkts).clamp(min_cwnd, max_cwnd);
        let hops = match c.hop_unit {
            HopUnit::Links => p.hops,
            HopUnit::Switches => p.hops.saturating_sub(1),
        };
        let fs_range_ps = c.fs_range_ps();
        let fs_alpha_ps = fs_range_ps / (1.0 / c.fs_min_cwnd.sqrt() - 1.0 / c.fs_max_cwnd.sqrt());
        Swift {
            mss,
            packet_bytes: p.packet_bytes.max(1) as f64,
            line_rate_bps: p.line_rate_bps,
            ai: c.ai,
            beta: c.beta,
            max_mdf: c.max_mdf,
            min_cwnd,
            max_cwnd,
            fabric_base_ps: c.base_target.0 as f64 + hops as f64 * c.h_ps(),
            fs_alpha_ps,
            fs_beta_ps: -fs_alpha_ps / c.fs_max_cwnd.sqrt(),
            fs_range_ps,
            endpoint_target_ps: c.endpoint_target.map(|t| t.0 as f64),
            retx_reset_threshold: c.retx_reset_threshold.max(1),
            rtt_gain: c.rtt_gain,
            fru: c.fast_ramp_up,
            lambda: c.lambda,
            fcwnd: init,
            ecwnd: max_cwnd,
            srtt_ps: p.base_rtt_ps.max(1) as f64,
            f_last_decrease: None,
            e_last_decrease: None,
            retransmit_cnt: 0,
            fru_acks: 0,
        }
    }

    /// Flow-scaling term for a fabric window of `fcwnd` packets, ps.
    pub fn flow_term_ps(&self, fcwnd: f64) -> f64 {
        (self.fs_alpha_ps / fcwnd.sqrt() + self.fs_beta_ps).clamp(0.0, self.fs_range_ps)
    }

    /// Fabric target delay for a fabric window of `fcwnd` packets, ps.
    pub fn target_for_ps(&self, fcwnd: f64) -> f64 {
        self.fabric_base_ps + self.flow_term_ps(fcwnd)
    }

    /// Current fabric target delay, ps.
    pub fn target_ps(&self) -> f64 {
        self.target_for_ps(self.fcwnd)
    }

    /// Effective window in packets: min(fcwnd, ecwnd).
    pub fn cwnd_pkts(&self) -> f64 {
        self.fcwnd.min(self.ecwnd)
    }

    fn can_decrease(last: Option<u64>, now: u64, srtt: f64) -> bool {
        match last {
            None => true,
            Some(t) => now.saturating_sub(t) as f64 >= srtt,
        }
    }

    /// One Algorithm-1 step for window `w` (packets): below target
    /// `w + (ai + extra) * n / max(w, 1)`; else, if allowed,
    /// `w * max(1 - beta * (delay - target) / delay, 1 - max_mdf)`; else `w`.
    fn step(&self, w: f64, delay: f64, target: f64, n: f64, extra: f64, can_decrease: bool) -> f64 {
        if delay < target {
            w + (self.ai + extra) * n / w.max(1.0)
        } else if can_decrease && delay > 0.0 {
            w * (1.0 - self.beta * (delay - target) / delay).max(1.0 - self.max_mdf)
        } else {
            w
        }
    }

    /// Clamps a window and records the time if it shrank.
    fn settle(&self, w: f64, prev: f64, now: u64, last: &mut Option<u64>) -> f64 {
        let w = w.clamp(self.min_cwnd, self.max_cwnd);
        if w < prev {
            *last = Some(now);
        }
        w
    }

    /// The CSIG min(ABW/C) value of an ACK, if FRU is on and a switch wrote it.
    fn fru_abwc(&self, a: &AckSample) -> Option<f64> {
        if !self.fru {
            return None;
        }
        match a.csig {
            Some(c) if c.sig == SignalType::AbwC && c.writer != NO_WRITER && c.value.is_finite() => Some(c.value.clamp(0.0, 1.0)),
            _ => None,
        }
    }
}

impl CongestionControl for Swift {
    fn on_ack(&mut self, a: &AckSample) {
        let now = a.now_ps;
        let n = a.acked_bytes as f64 / self.mss;
        // Both decisions use the smoothed RTT before this sample (as htsim).
        let can_f = Self::can_decrease(self.f_last_decrease, now, self.srtt_ps);
        let can_e = Self::can_decrease(self.e_last_decrease, now, self.srtt_ps);
        if a.rtt_ps > 0 {
            self.srtt_ps += self.rtt_gain * (a.rtt_ps as f64 - self.srtt_ps);
        }
        self.retransmit_cnt = 0;

        // Fabric window. No host delay: fabric delay = RTT.
        let delay = a.rtt_ps as f64;
        let target = self.target_ps();
        let prev = self.fcwnd;
        let fru = if delay < target { self.fru_abwc(a) } else { None };
        let extra = match fru {
            Some(x) => {
                self.fru_acks += 1;
                self.lambda * prev * x
            }
            None => 0.0,
        };
        let w = self.step(prev, delay, target, n, extra, can_f);
        let mut last = self.f_last_decrease;
        self.fcwnd = self.settle(w, prev, now, &mut last);
        self.f_last_decrease = last;

        // Endpoint window: same rule, fixed target, no FRU; the endpoint delay is 0.
        if let Some(et) = self.endpoint_target_ps {
            let prev = self.ecwnd;
            let w = self.step(prev, 0.0, et, n, 0.0, can_e);
            let mut last = self.e_last_decrease;
            self.ecwnd = self.settle(w, prev, now, &mut last);
            self.e_last_decrease = last;
        }
    }

    /// Fast recovery (a gap or a trimmed packet): one `1 - max_mdf` cut per RTT.
    fn on_nack(&mut self, now: u64, _snd_nxt: u32, _reason: super::NackReason) {
        self.retransmit_cnt = 0;
        if Self::can_decrease(self.f_last_decrease, now, self.srtt_ps) {
            let prev = self.fcwnd;
            let mut last = self.f_last_decrease;
            self.fcwnd = self.settle(prev * (1.0 - self.max_mdf), prev, now, &mut last);
            self.f_last_decrease = last;
        }
    }

    fn on_timeout(&mut self, now: u64) {
        self.retransmit_cnt += 1;
        let prev = self.fcwnd;
        let w = if self.retransmit_cnt >= self.retx_reset_threshold {
            self.min_cwnd
        } else if Self::can_decrease(self.f_last_decrease, now, self.srtt_ps) {
            prev * (1.0 - self.max_mdf)
        } else {
            prev
        };
        let mut last = self.f_last_decrease;
        self.fcwnd = self.settle(w, prev, now, &mut last);
        self.f_last_decrease = last;
    }

    fn cwnd(&self) -> u64 {
        (self.cwnd_pkts() * self.mss) as u64
    }

    /// Below one packet: one full packet every `srtt / cwnd`; else line rate.
    fn rate(&self) -> u64 {
        let w = self.cwnd_pkts();
        if w >= 1.0 {
            return self.line_rate_bps;
        }
        let bps = w * self.packet_bytes * 8.0 * PS_PER_S as f64 / self.srtt_ps;
        (bps as u64).clamp(1, self.line_rate_bps)
    }

    fn metrics(&self) -> CcMetrics {
        CcMetrics { cwnd_bytes: self.cwnd(), rate_bps: self.rate(), alpha: 0.0 }
    }
}

impl Algorithm for Swift {
    const NAME: &'static str = "swift";
    const ABOUT: &'static str = "Swift delay-target window (Kumar et al. 2020); fast_ramp_up for FRU on CSIG min(ABW/C)";
    type Config = SwiftConfig;
    type Receiver = NoReceiver;
    fn build(c: &SwiftConfig, p: &FlowParams) -> Self {
        Swift::new(c, p)
    }
    fn validate(c: &SwiftConfig) -> Result<(), ConfigError> {
        c.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signal::CsigSample;
    use crate::units::{tx_time_ps, PS_PER_US};

    const US: u64 = PS_PER_US;

    /// 100 Gbps, 10 us base RTT: BDP = 125,000 bytes = 125 packets of 1000 B; 3 links.
    fn params() -> FlowParams {
        FlowParams { line_rate_bps: 100_000_000_000, base_rtt_ps: 10 * US, mss: 1000, packet_bytes: 1064, hops: 3 }
    }

    /// Target exactly 20 us: no hop term, no flow-scaling term.
    fn flat() -> SwiftConfig {
        SwiftConfig { h: Some(Time(0)), fs_range: Some(Time(0)), max_cwnd: Some(1000.0), ..Default::default() }
    }

    fn swift(c: SwiftConfig, init: f64) -> Swift {
        Swift::new(&SwiftConfig { init_cwnd: Some(init), ..c }, &params())
    }

    /// An ACK of `pkts` full packets at `now` with RTT sample `rtt`.
    fn ack(now: u64, rtt: u64, pkts: u64) -> AckSample<'static> {
        AckSample { now_ps: now, rtt_ps: rtt, acked_bytes: pkts * 1000, acked_pkts: pkts as u32, ..Default::default() }
    }

    fn with_csig(mut a: AckSample<'static>, sig: SignalType, value: f64, writer: u32) -> AckSample<'static> {
        a.csig = Some(CsigSample { sig, raw: 0, value, locator: 0, writer });
        a
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn defaults_resolve_per_flow() {
        let s = Swift::new(&SwiftConfig::default(), &params());
        // init = 1 BDP = 125 packets, max = 1.5 BDP, ecwnd at max.
        assert!(close(s.fcwnd, 125.0));
        assert!(close(s.max_cwnd, 187.5));
        assert!(close(s.ecwnd, 187.5));
        assert_eq!(s.cwnd(), 125_000);
        assert_eq!(s.rate(), 100_000_000_000);
        // 20 us + 3 links x 20/6.55 us.
        assert!(close(s.fabric_base_ps, 20e6 + 3.0 * 20e6 / 6.55));
        assert!(SwiftConfig::default().validate().is_ok());
    }

    #[test]
    fn worked_example_of_the_doc() {
        // docs/cc/swift.md "Worked example": defaults, 100G, 10 us, mtu 1000, 3 links.
        let mut s = Swift::new(&SwiftConfig::default(), &params());
        assert!((s.fabric_base_ps - 29.160_305e6).abs() < 1.0);
        assert!((s.flow_term_ps(0.5) - 42.916_212e6).abs() < 1.0);
        assert!((s.flow_term_ps(10.0) - 7.061_011e6).abs() < 1.0);
        assert!((s.flow_term_ps(25.0) - 3.265_543e6).abs() < 1.0);
        assert_eq!(s.flow_term_ps(125.0), 0.0);
        s.on_ack(&ack(100 * US, 12 * US, 1));
        assert!(close(s.fcwnd, 125.008));
        let mut s = Swift::new(&SwiftConfig::default(), &params());
        s.on_ack(&ack(100 * US, 40 * US, 1));
        let factor = 1.0 - 0.8 * (40e6 - s.fabric_base_ps) / 40e6;
        assert!(close(s.fcwnd, 125.0 * factor));
        assert!((s.fcwnd - 97.90).abs() < 0.005, "{}", s.fcwnd);
        assert!(close(s.srtt_ps, 13.75e6));
    }

    #[test]
    fn additive_increase_below_target() {
        let mut s = swift(flat(), 10.0);
        // 1 packet acked at 10 us < 20 us: +ai * 1 / 10.
        s.on_ack(&ack(100 * US, 10 * US, 1));
        assert!(close(s.fcwnd, 10.1), "{}", s.fcwnd);
        // 2 packets: +2 / 10.1.
        s.on_ack(&ack(101 * US, 10 * US, 2));
        assert!(close(s.fcwnd, 10.1 + 2.0 / 10.1));
        // A duplicate ACK (nothing newly acked) below target changes nothing.
        let w = s.fcwnd;
        s.on_ack(&ack(102 * US, 10 * US, 0));
        assert_eq!(s.fcwnd, w);
        // A whole window of single-packet ACKs adds about ai = 1 packet.
        let mut s = swift(flat(), 10.0);
        for i in 0..10 {
            s.on_ack(&ack((200 + i) * US, 10 * US, 1));
        }
        assert!(s.fcwnd > 10.95 && s.fcwnd < 11.0, "{}", s.fcwnd);
    }

    #[test]
    fn increase_below_one_packet_is_ai_per_packet() {
        let mut s = swift(flat(), 0.5);
        s.on_ack(&ack(100 * US, 10 * US, 1));
        // cwnd < 1: += ai * n.
        assert!(close(s.fcwnd, 1.5));
        // Now >= 1: += ai * n / cwnd.
        s.on_ack(&ack(101 * US, 10 * US, 1));
        assert!(close(s.fcwnd, 1.5 + 1.0 / 1.5));
    }

    #[test]
    fn multiplicative_decrease_bounded_by_max_mdf() {
        // delay 25 us, target 20 us: 1 - 0.8 * 5/25 = 0.84.
        let mut s = swift(flat(), 100.0);
        s.on_ack(&ack(100 * US, 25 * US, 1));
        assert!(close(s.fcwnd, 84.0), "{}", s.fcwnd);
        assert_eq!(s.f_last_decrease, Some(100 * US));
        // delay 200 us: 1 - 0.8 * 180/200 = 0.28, bounded by 1 - max_mdf = 0.5.
        let mut s = swift(flat(), 100.0);
        s.on_ack(&ack(100 * US, 200 * US, 1));
        assert!(close(s.fcwnd, 50.0), "{}", s.fcwnd);
        // Exactly at target: decrease branch with factor 1 (no change, no decrease time).
        let mut s = swift(flat(), 100.0);
        s.on_ack(&ack(100 * US, 20 * US, 1));
        assert!(close(s.fcwnd, 100.0));
        assert_eq!(s.f_last_decrease, None);
    }

    #[test]
    fn at_most_one_decrease_per_rtt() {
        let mut s = swift(flat(), 100.0);
        // srtt starts at the base RTT, 10 us; the first decrease is always allowed.
        s.on_ack(&ack(100 * US, 25 * US, 1));
        assert!(close(s.fcwnd, 84.0));
        // srtt = 10 + (25 - 10)/8 = 11.875 us.
        assert!(close(s.srtt_ps, 11.875e6));
        // 5 us later (< 11.875 us): no decrease, and no increase above target.
        s.on_ack(&ack(105 * US, 25 * US, 1));
        assert!(close(s.fcwnd, 84.0));
        // srtt = 11.875 + (25 - 11.875)/8 = 13.515625 us.
        assert!(close(s.srtt_ps, 13.515625e6));
        // 13.5 us after the decrease: still < 13.515625 us.
        s.on_ack(&ack(100 * US + 13_500_000, 25 * US, 1));
        assert!(close(s.fcwnd, 84.0));
        // srtt = 13.515625 + (25 - 13.515625)/8 = 14.951171875 us; 15 us after: cut again.
        s.on_ack(&ack(115 * US, 25 * US, 1));
        assert!(close(s.fcwnd, 84.0 * 0.84), "{}", s.fcwnd);
        assert_eq!(s.f_last_decrease, Some(115 * US));
    }

    #[test]
    fn target_scales_with_hops() {
        let c = SwiftConfig { fs_range: Some(Time(0)), ..Default::default() };
        let h = 20e6 / 6.55;
        // 3 links.
        let s = Swift::new(&c, &params());
        assert!(close(s.target_ps(), 20e6 + 3.0 * h));
        // 3 links = 2 switches.
        let s2 = Swift::new(&SwiftConfig { hop_unit: HopUnit::Switches, ..c }, &params());
        assert!(close(s2.target_ps(), 20e6 + 2.0 * h));
        // Explicit h = 2 us, 5 links: 30 us.
        let s3 = Swift::new(&SwiftConfig { h: Some(Time::us(2)), ..c }, &FlowParams { hops: 5, ..params() });
        assert!(close(s3.target_ps(), 30e6));
        // The same 25 us delay: below the 3-link target (29.16 us) -> increase;
        // above the 1-link-0-switch target (20 us) -> decrease.
        let mut far = Swift::new(&SwiftConfig { init_cwnd: Some(100.0), ..c }, &params());
        far.on_ack(&ack(100 * US, 25 * US, 1));
        assert!(close(far.fcwnd, 100.01));
        let mut near =
            Swift::new(&SwiftConfig { init_cwnd: Some(100.0), hop_unit: HopUnit::Switches, ..c }, &FlowParams { hops: 1, ..params() });
        near.on_ack(&ack(100 * US, 25 * US, 1));
        assert!(close(near.fcwnd, 84.0));
    }

    #[test]
    fn flow_scaling_raises_the_target_at_small_windows() {
        // Defaults: fs_range = 100 us, fs_min 0.1, fs_max 100 packets; no hop term.
        let c = SwiftConfig { h: Some(Time(0)), max_cwnd: Some(1000.0), ..Default::default() };
        let s = Swift::new(&c, &params());
        // alpha = 100 us / (1/sqrt(0.1) - 1/sqrt(100)) = 32.6554... us, beta = -alpha/10.
        let alpha = 100e6 / (1.0 / 0.1f64.sqrt() - 0.1);
        assert!((alpha - 32.655_44e6).abs() < 10.0, "{alpha}");
        assert!(close(s.flow_term_ps(0.1), 100e6));
        assert!(close(s.flow_term_ps(0.01), 100e6)); // clamped at fs_range
        assert!(s.flow_term_ps(100.0).abs() < 1e-3);
        assert_eq!(s.flow_term_ps(400.0), 0.0); // clamped at 0
        assert!(close(s.flow_term_ps(1.0), 0.9 * alpha)); // 29.39 us
        assert!(close(s.flow_term_ps(4.0), 0.4 * alpha)); // 13.06 us
        assert!(close(s.target_for_ps(1.0), 20e6 + 0.9 * alpha));
        // Delay 40 us: a 1-packet flow (target 49.39 us) grows, a 100-packet flow (20 us) shrinks.
        let mut small = swift(c, 1.0);
        small.on_ack(&ack(100 * US, 40 * US, 1));
        assert!(close(small.fcwnd, 2.0));
        let mut big = swift(c, 100.0);
        big.on_ack(&ack(100 * US, 40 * US, 1));
        // 1 - 0.8 * 20/40 = 0.6.
        assert!(close(big.fcwnd, 60.0));
    }

    #[test]
    fn paces_below_one_packet() {
        let mut s = swift(flat(), 0.5);
        assert_eq!(s.cwnd(), 500);
        // 0.5 packet per srtt (10 us): 0.5 * 1064 B * 8 / 10 us = 425.6 Mbps.
        assert_eq!(s.rate(), 425_600_000);
        // One full packet every srtt / cwnd = 20 us.
        assert_eq!(tx_time_ps(1064, s.rate()), 20 * US);
        // A big delay cuts to 0.25 (bounded by max_mdf); srtt becomes 10 + (200-10)/8 = 33.75 us.
        s.on_ack(&ack(100 * US, 200 * US, 1));
        assert!(close(s.fcwnd, 0.25));
        assert!(close(s.srtt_ps, 33.75e6));
        // 0.25 * 1064 * 8 / 33.75 us = 63.05 Mbps; gap = 135 us = srtt / cwnd.
        assert_eq!(s.rate(), 63_051_851);
        assert!(tx_time_ps(1064, s.rate()).abs_diff(135 * US) < 10);
        // At or above one packet: line rate.
        let s = swift(flat(), 1.0);
        assert_eq!(s.rate(), 100_000_000_000);
    }

    #[test]
    fn window_clamped_to_min_and_max() {
        let c = SwiftConfig { max_cwnd: Some(10.0), min_cwnd: 0.3, ..flat() };
        let mut s = swift(c, 9.95);
        s.on_ack(&ack(100 * US, 10 * US, 1));
        assert!(close(s.fcwnd, 10.0));
        assert_eq!(s.f_last_decrease, None);
        let mut s = swift(c, 0.5);
        s.on_ack(&ack(100 * US, 200 * US, 1));
        assert!(close(s.fcwnd, 0.3));
        // Initial window clamped too.
        assert!(close(swift(c, 50.0).fcwnd, 10.0));
    }

    #[test]
    fn timeouts_cut_then_reset() {
        let mut s = swift(flat(), 100.0);
        // srtt = 10 us throughout (no ACKs).
        s.on_timeout(1000 * US);
        assert!(close(s.fcwnd, 50.0));
        s.on_timeout(1005 * US); // < 1 RTT after the cut
        assert!(close(s.fcwnd, 50.0));
        s.on_timeout(1015 * US);
        assert!(close(s.fcwnd, 25.0));
        s.on_timeout(1016 * US);
        assert!(close(s.fcwnd, 25.0));
        assert_eq!(s.retransmit_cnt, 4);
        // The 5th consecutive timeout resets to min_cwnd = 0.001.
        s.on_timeout(1017 * US);
        assert!(close(s.fcwnd, 0.001));
        // An ACK clears the count.
        s.on_ack(&ack(1100 * US, 10 * US, 1));
        assert_eq!(s.retransmit_cnt, 0);
        assert!(close(s.fcwnd, 1.001));
    }

    #[test]
    fn nack_cuts_once_per_rtt() {
        let mut s = swift(flat(), 100.0);
        s.on_nack(100 * US, 50, crate::packet::NackReason::Trimmed);
        assert!(close(s.fcwnd, 50.0));
        s.on_nack(105 * US, 60, crate::packet::NackReason::Trimmed);
        assert!(close(s.fcwnd, 50.0));
        s.on_nack(110 * US, 70, crate::packet::NackReason::Trimmed);
        assert!(close(s.fcwnd, 25.0));
        // A NACK also counts as a decrease for the delay rule.
        s.on_ack(&ack(111 * US, 25 * US, 1));
        assert!(close(s.fcwnd, 25.0));
    }

    #[test]
    fn fru_grows_faster_with_abw_c() {
        let fru = SwiftConfig { fast_ramp_up: true, lambda: 0.5, ..flat() };
        let mut plain = swift(flat(), 10.0);
        let mut fast = swift(fru, 10.0);
        let a = with_csig(ack(100 * US, 10 * US, 1), SignalType::AbwC, 0.5, 7);
        plain.on_ack(&a);
        fast.on_ack(&a);
        // Plain: 10 + 1/10. FRU: 10 + (1 + 0.5 * 10 * 0.5) * 1/10 = 10.35.
        assert!(close(plain.fcwnd, 10.1));
        assert!(close(fast.fcwnd, 10.35));
        assert_eq!(fast.fru_acks, 1);
        // Coalesced ACK of 2 packets: + (1 + 0.25 * 10.35) * 2 / 10.35 = 2/10.35 + 0.5.
        let a2 = with_csig(ack(101 * US, 10 * US, 2), SignalType::AbwC, 0.5, 7);
        fast.on_ack(&a2);
        assert!(close(fast.fcwnd, 10.35 + 2.0 / 10.35 + 0.5));
        // Below one packet: + (ai + lambda * cwnd * abw_c) * n = (1 + 0.5*0.5*0.5) = 1.125.
        let mut tiny = swift(fru, 0.5);
        tiny.on_ack(&with_csig(ack(100 * US, 10 * US, 1), SignalType::AbwC, 0.5, 7));
        assert!(close(tiny.fcwnd, 1.625));
        // Over one window (10 single-packet ACKs): plain adds ~1 packet, FRU
        // ~1 + lambda * abw_c * 10 = 3.5 packets (a bit less: the ai share shrinks
        // as the window grows). Iterating w += 1/w + 0.25 ten times from 10 gives
        // 13.3729; plain w += 1/w gives 10.9586.
        let mut plain = swift(flat(), 10.0);
        let mut fast = swift(fru, 10.0);
        for i in 0..10 {
            let a = with_csig(ack((200 + i) * US, 10 * US, 1), SignalType::AbwC, 0.5, 7);
            plain.on_ack(&a);
            fast.on_ack(&a);
        }
        assert!((plain.fcwnd - 10.958_648).abs() < 1e-6, "{}", plain.fcwnd);
        assert!((fast.fcwnd - 13.372_861).abs() < 1e-6, "{}", fast.fcwnd);
    }

    #[test]
    fn fru_needs_a_written_abw_c_tag_below_target() {
        let fru = SwiftConfig { fast_ramp_up: true, ..flat() };
        let cases = [
            with_csig(ack(100 * US, 10 * US, 1), SignalType::AbwC, 0.5, NO_WRITER), // never written
            with_csig(ack(100 * US, 10 * US, 1), SignalType::Delay, 0.5, 7),        // other signal
            ack(100 * US, 10 * US, 1),                                              // no tag
        ];
        for a in cases {
            let mut s = swift(fru, 10.0);
            s.on_ack(&a);
            assert!(close(s.fcwnd, 10.1), "{:?}", a.csig);
            assert_eq!(s.fru_acks, 0);
        }
        // FRU off: the tag is ignored.
        let mut s = swift(flat(), 10.0);
        s.on_ack(&with_csig(ack(100 * US, 10 * US, 1), SignalType::AbwC, 0.5, 7));
        assert!(close(s.fcwnd, 10.1));
        // abw_c = 0: plain additive increase.
        let mut s = swift(fru, 10.0);
        s.on_ack(&with_csig(ack(100 * US, 10 * US, 1), SignalType::AbwC, 0.0, 7));
        assert!(close(s.fcwnd, 10.1));
        // Above target: the usual decrease, no FRU term.
        let mut s = swift(fru, 100.0);
        s.on_ack(&with_csig(ack(100 * US, 25 * US, 1), SignalType::AbwC, 1.0, 7));
        assert!(close(s.fcwnd, 84.0));
    }

    #[test]
    fn endpoint_window_never_binds() {
        let c = SwiftConfig { endpoint_target: Some(Time::us(5)), ..flat() };
        let mut s = swift(c, 10.0);
        assert!(close(s.ecwnd, 1000.0));
        s.on_ack(&ack(100 * US, 200 * US, 1));
        s.on_timeout(200 * US);
        assert!(close(s.ecwnd, 1000.0));
        assert!(close(s.cwnd_pkts(), s.fcwnd));
    }

    #[test]
    fn config_from_toml() {
        let c: SwiftConfig = toml::from_str(
            "base_target = \"25us\"\nh = \"1us\"\nhop_unit = \"switches\"\nfs_range = \"50us\"\n\
             max_cwnd = 200.0\nfast_ramp_up = true\nlambda = 0.25\nretx_reset_threshold = 4",
        )
        .unwrap();
        assert_eq!(c.base_target, Time::us(25));
        assert_eq!(c.h, Some(Time::us(1)));
        assert_eq!(c.hop_unit, HopUnit::Switches);
        assert_eq!(c.fs_range_ps(), 50e6);
        assert_eq!(c.max_cwnd, Some(200.0));
        assert!(c.fast_ramp_up);
        assert_eq!(c.lambda, 0.25);
        assert_eq!(c.retx_reset_threshold, 4);
        assert_eq!(c.ai, 1.0);
        assert!(c.validate().is_ok());
        assert_eq!(toml::from_str::<SwiftConfig>("").unwrap(), SwiftConfig::default());
        assert!(toml::from_str::<SwiftConfig>("alpha = 1.0").is_err());
        assert!(toml::from_str::<SwiftConfig>("base_target = 20").is_err());
        let bad = |c: SwiftConfig| c.validate().unwrap_err().0;
        assert_eq!(bad(SwiftConfig { max_mdf: 1.0, ..Default::default() }), "max_mdf");
        assert_eq!(bad(SwiftConfig { fs_max_cwnd: 0.05, ..Default::default() }), "fs_max_cwnd");
        assert_eq!(bad(SwiftConfig { min_cwnd: 0.0, ..Default::default() }), "min_cwnd");
        assert_eq!(bad(SwiftConfig { lambda: -0.1, ..Default::default() }), "lambda");
        assert_eq!(bad(SwiftConfig { base_target: Time(0), ..Default::default() }), "base_target");
    }
}
