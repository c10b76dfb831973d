//! DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257), window-based.
//!
//! - alpha <- (1 - g) * alpha + g * F once per window of data, where F is the
//!   fraction of acknowledged bytes that carried CE;
//! - on the first CE echo outside congestion-window reduction (CWR):
//!   cwnd <- cwnd * (1 - alpha / 2), then no further reduction until the data
//!   sent before the reduction is acknowledged;
//! - otherwise slow start below ssthresh, else +1 MSS per window of ACKs;
//! - a NACK halves the window (once per window); a timeout restarts from one
//!   packet in slow start, as TCP does.
//!
//! The initial window defaults to one BDP with ssthresh equal to it, so a flow
//! starts at line rate in congestion avoidance, as RDMA NICs do.
//!
//! `mode = "rate"` is the HPCC authors' ns-3 RDMA DCTCP (`RdmaHw::HandleAckDctcp`,
//! CC_MODE 8, with `HAS_WIN 1`, `VAR_WIN 1`): the same alpha and the same cut
//! once per window, but no slow start, an additive increase of `rate_ai`
//! once per window of data (when not reducing), no reaction to NACKs or
//! timeouts, and the sender paces at `rate = cwnd / T` (T the flow's base
//! RTT) within `[min_rate, line rate]`, its window being `rate x T` (ns-3's
//! `m_win x rate / max_rate`). `max_cwnd` caps the window in both modes
//! (ns-3's window is at most the BDP).

use super::{AckSample, Algorithm, CcMetrics, ConfigError, CongestionControl, FlowParams, NoReceiver};
use crate::units::{bytes_in, Rate, Size, PS_PER_S};
use serde::Deserialize;

/// How the window reaches the wire.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum DctcpMode {
    /// RFC 8257: a window, sent at line rate (TCP-like bursts).
    #[default]
    Window,
    /// ns-3 RDMA DCTCP: the window paced at `cwnd / base RTT`, per-RTT additive rate increase.
    Rate,
}

/// `[transport.dctcp]` (Alizadeh et al. 2010; RFC 8257).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DctcpConfig {
    /// EWMA gain for alpha.
    #[serde(default = "default_g")]
    pub g: f64,
    /// Initial alpha.
    #[serde(default = "default_alpha_init")]
    pub alpha_init: f64,
    /// Initial window; default one bandwidth-delay product of the flow's path.
    #[serde(default)]
    pub init_cwnd: Option<Size>,
    /// Smallest window; default one MTU-sized packet.
    #[serde(default)]
    pub min_cwnd: Option<Size>,
    /// Slow start below ssthresh (initially the initial window, so flows start
    /// in congestion avoidance at one BDP as RDMA NICs do).
    #[serde(default)]
    pub ssthresh: Option<Size>,
    /// Largest window; default none (ns-3 RDMA DCTCP: the BDP).
    #[serde(default)]
    pub max_cwnd: Option<Size>,
    /// "window" (RFC 8257, line-rate bursts) or "rate" (ns-3 RDMA DCTCP, paced).
    #[serde(default)]
    pub mode: DctcpMode,
    /// `mode = "rate"`: additive increase per window of data; default one
    /// MSS per base RTT (how run.py derives its DCTCP_RATE_AI of 615 Mb/s
    /// from a 1 KB MTU and a 13 us RTT).
    #[serde(default)]
    pub rate_ai: Option<Rate>,
    /// `mode = "rate"`: lowest pacing rate (ns-3 MIN_RATE; run.py 1 Gb/s).
    #[serde(default = "default_min_rate")]
    pub min_rate: Rate,
}
fn default_min_rate() -> Rate {
    Rate(100_000_000)
}
fn default_g() -> f64 {
    1.0 / 16.0
}
fn default_alpha_init() -> f64 {
    1.0
}
impl Default for DctcpConfig {
    fn default() -> Self {
        DctcpConfig {
            g: default_g(),
            alpha_init: default_alpha_init(),
            init_cwnd: None,
            min_cwnd: None,
            ssthresh: None,
            max_cwnd: None,
            mode: DctcpMode::Window,
            rate_ai: None,
            min_rate: default_min_rate(),
        }
    }
}

impl DctcpConfig {
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(("g", format!("g must be in (0, 1], got {}", self.g)));
        }
        if !(0.0..=1.0).contains(&self.alpha_init) {
            return Err(("alpha_init", format!("alpha_init must be in [0, 1], got {}", self.alpha_init)));
        }
        if self.max_cwnd == Some(Size(0)) {
            return Err(("max_cwnd", "max_cwnd must be above zero".into()));
        }
        if let (Some(lo), Some(hi)) = (self.min_cwnd, self.max_cwnd) {
            if lo > hi {
                return Err(("max_cwnd", format!("max_cwnd ({} bytes) is below min_cwnd ({} bytes)", hi.0, lo.0)));
            }
        }
        if self.rate_ai == Some(Rate(0)) {
            return Err(("rate_ai", "rate_ai must be above zero".into()));
        }
        if self.min_rate.0 == 0 {
            return Err(("min_rate", "min_rate must be above zero".into()));
        }
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct Dctcp {
    g: f64,
    mss: f64,
    min_cwnd: f64,
    max_cwnd: f64,
    line_rate_bps: u64,
    mode: DctcpMode,
    /// Rate mode: the RTT that turns the window into a rate (ps), the
    /// increase per window of data (bytes), the window floor of `min_rate`.
    t_ps: f64,
    ai_bytes: f64,
    pub cwnd: f64,
    pub ssthresh: f64,
    pub alpha: f64,
    /// Bytes acknowledged, and of those CE-marked, in the current observation window.
    acked_bytes: u64,
    marked_bytes: u64,
    /// The observation window ends when snd_una passes this packet number.
    window_end: u32,
    /// In CWR until snd_una passes this packet number.
    cwr_end: Option<u32>,
}

impl Dctcp {
    pub fn new(c: &DctcpConfig, p: &FlowParams) -> Self {
        let mss = p.mss as f64;
        let t_ps = p.base_rtt_ps.max(1);
        let rate_mode = c.mode == DctcpMode::Rate;
        // Rate mode: the window can never pass the line rate's (one BDP), nor
        // fall below min_rate's.
        let mut max_cwnd = c.max_cwnd.map_or(f64::INFINITY, |s| s.0 as f64);
        let mut min_cwnd = c.min_cwnd.map(|s| s.0 as f64).unwrap_or(mss);
        if rate_mode {
            max_cwnd = max_cwnd.min(p.bdp().max(1) as f64);
            if c.min_cwnd.is_none() {
                min_cwnd = bytes_in(t_ps, c.min_rate.0.min(p.line_rate_bps)).max(1) as f64;
            }
        }
        let min_cwnd = min_cwnd.min(max_cwnd);
        let init = (c.init_cwnd.map(|s| s.0).unwrap_or_else(|| p.bdp()).max(p.mss as u64) as f64).clamp(min_cwnd, max_cwnd);
        let ai_bytes = c.rate_ai.map_or(mss, |r| r.0 as f64 * t_ps as f64 / 8.0 / PS_PER_S as f64);
        Dctcp {
            g: c.g,
            mss,
            min_cwnd,
            max_cwnd,
            line_rate_bps: p.line_rate_bps,
            mode: c.mode,
            t_ps: t_ps as f64,
            ai_bytes,
            cwnd: init,
            ssthresh: c.ssthresh.map(|s| s.0 as f64).unwrap_or(init),
            alpha: c.alpha_init,
            acked_bytes: 0,
            marked_bytes: 0,
            window_end: 0,
            cwr_end: None,
        }
    }

    fn reduce(&mut self, factor: f64, snd_nxt: u32) {
        self.cwnd = (self.cwnd * factor).max(self.min_cwnd).min(self.max_cwnd);
        self.ssthresh = self.cwnd;
        self.cwr_end = Some(snd_nxt);
    }
}

impl CongestionControl for Dctcp {
    fn on_ack(&mut self, a: &AckSample) {
        if let Some(end) = self.cwr_end {
            if a.snd_una > end {
                self.cwr_end = None;
            }
        }
        self.acked_bytes += a.acked_bytes;
        if a.acked_pkts > 0 {
            self.marked_bytes += a.acked_bytes * a.ce_pkts as u64 / a.acked_pkts as u64;
        }
        let new_window = a.snd_una > self.window_end;
        if new_window {
            let f = if self.acked_bytes > 0 { self.marked_bytes as f64 / self.acked_bytes as f64 } else { 0.0 };
            self.alpha = (1.0 - self.g) * self.alpha + self.g * f.min(1.0);
            self.acked_bytes = 0;
            self.marked_bytes = 0;
            self.window_end = a.snd_nxt;
        }
        if a.ce_pkts > 0 {
            if self.cwr_end.is_none() {
                self.reduce(1.0 - self.alpha / 2.0, a.snd_nxt);
            }
        } else if self.cwr_end.is_none() {
            match self.mode {
                DctcpMode::Window if self.cwnd < self.ssthresh => self.cwnd += a.acked_bytes as f64,
                DctcpMode::Window => self.cwnd += self.mss * a.acked_bytes as f64 / self.cwnd,
                // ns-3: one additive step per window of data, none in slow start.
                DctcpMode::Rate if new_window => self.cwnd += self.ai_bytes,
                DctcpMode::Rate => {}
            }
        }
        self.cwnd = self.cwnd.min(self.max_cwnd);
    }

    fn on_nack(&mut self, _now: u64, snd_nxt: u32, _reason: super::NackReason) {
        // ns-3's RDMA DCTCP resends without touching the rate.
        if self.mode == DctcpMode::Window && self.cwr_end.is_none() {
            self.reduce(0.5, snd_nxt);
        }
    }

    fn on_timeout(&mut self, _now: u64) {
        if self.mode == DctcpMode::Rate {
            return;
        }
        self.ssthresh = (self.cwnd / 2.0).max(2.0 * self.mss);
        self.cwnd = self.min_cwnd.max(self.mss).min(self.max_cwnd);
        self.cwr_end = None;
    }

    fn cwnd(&self) -> u64 {
        self.cwnd as u64
    }

    fn rate(&self) -> u64 {
        match self.mode {
            DctcpMode::Window => self.line_rate_bps,
            DctcpMode::Rate => ((self.cwnd * 8.0 * PS_PER_S as f64 / self.t_ps) as u64).clamp(1, self.line_rate_bps),
        }
    }

    fn metrics(&self) -> CcMetrics {
        CcMetrics { cwnd_bytes: self.cwnd as u64, rate_bps: self.rate(), alpha: self.alpha }
    }
}

impl Algorithm for Dctcp {
    const NAME: &'static str = "dctcp";
    const ABOUT: &'static str = "DCTCP window control from the fraction of CE-marked bytes (RFC 8257)";
    type Config = DctcpConfig;
    type Receiver = NoReceiver;
    fn build(c: &DctcpConfig, p: &FlowParams) -> Self {
        Dctcp::new(c, p)
    }
    fn validate(c: &DctcpConfig) -> Result<(), ConfigError> {
        c.validate().map_err(|(k, m)| (k.into(), m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> FlowParams {
        // 100 Gbps, 8 us base RTT: BDP = 100_000 bytes.
        FlowParams { line_rate_bps: 100_000_000_000, base_rtt_ps: 8_000_000, mss: 1000, packet_bytes: 1064, hops: 2 }
    }

    fn ack(una: u32, nxt: u32, bytes: u64, pkts: u32, ce: u32) -> AckSample<'static> {
        AckSample { acked_bytes: bytes, acked_pkts: pkts, ce_pkts: ce, snd_una: una, snd_nxt: nxt, ..Default::default() }
    }

    #[test]
    fn starts_at_one_bdp_in_congestion_avoidance() {
        let mut d = Dctcp::new(&DctcpConfig::default(), &params());
        assert_eq!(d.cwnd(), 100_000);
        d.on_ack(&ack(1, 100, 1000, 1, 0));
        // +mss*acked/cwnd = 1000*1000/100000 = 10 bytes.
        assert!((d.cwnd - 100_010.0).abs() < 1e-9);
    }

    #[test]
    fn alpha_is_an_ewma_of_the_marked_fraction_per_window() {
        let mut d = Dctcp::new(&DctcpConfig { alpha_init: 0.0, ..Default::default() }, &params());
        // First ACK closes the (empty) initial window: F = 0 over 1000 bytes.
        d.on_ack(&ack(1, 10, 1000, 1, 0));
        assert_eq!(d.alpha, 0.0);
        // Window ends at psn 10; ACKs up to 10 accumulate, half of the bytes marked.
        for una in 2..=10 {
            d.on_ack(&ack(una, 20, 1000, 1, (una % 2 == 0) as u32));
        }
        // Within the window: no update yet.
        assert_eq!(d.alpha, 0.0);
        d.on_ack(&ack(11, 20, 1000, 1, 0));
        // Window of 10 ACKs (psn 2..11): 5 marked of 10 -> F = 0.5; alpha = g * 0.5.
        assert!((d.alpha - 0.5 / 16.0).abs() < 1e-12, "alpha {}", d.alpha);
    }

    #[test]
    fn ce_cuts_by_alpha_over_two_once_per_window() {
        let mut d = Dctcp::new(&DctcpConfig::default(), &params());
        // alpha starts at 1: the first CE halves the window... after the alpha update
        // of the first window, which sees F = 1: alpha stays 1.
        d.on_ack(&ack(1, 50, 1000, 1, 1));
        assert_eq!(d.cwnd(), 50_000);
        // Further CE before snd_una passes 50: no second cut, no growth.
        d.on_ack(&ack(20, 60, 1000, 1, 1));
        assert_eq!(d.cwnd(), 50_000);
        // After snd_una passes 50 the next CE cuts again.
        d.on_ack(&ack(51, 70, 1000, 1, 1));
        assert_eq!(d.cwnd(), 25_000);
    }

    #[test]
    fn max_cwnd_caps_growth_and_slow_start() {
        let c = DctcpConfig { max_cwnd: Some(Size(100_500)), ..Default::default() };
        let mut d = Dctcp::new(&c, &params());
        // +10 bytes per 1000-byte ACK in congestion avoidance until the cap.
        for i in 0..100 {
            d.on_ack(&ack(i + 1, 200, 1000, 1, 0));
        }
        assert_eq!(d.cwnd(), 100_500);
        // An initial window above the cap starts at the cap.
        let c = DctcpConfig { init_cwnd: Some(Size(400_000)), ..c };
        assert_eq!(Dctcp::new(&c, &params()).cwnd(), 100_500);
        assert_eq!(DctcpConfig { max_cwnd: Some(Size(0)), ..Default::default() }.validate().unwrap_err().0, "max_cwnd");
        let c = DctcpConfig { max_cwnd: Some(Size(500)), min_cwnd: Some(Size(1000)), ..Default::default() };
        assert_eq!(c.validate().unwrap_err().0, "max_cwnd");
    }

    /// Rate mode on a scripted ECN sequence: (snd_una, snd_nxt, CE) per 1000-byte ACK.
    #[test]
    fn rate_mode_follows_the_ns3_law() {
        let c = DctcpConfig { mode: DctcpMode::Rate, rate_ai: Some(Rate::gbps(1)), ..Default::default() };
        let mut d = Dctcp::new(&c, &params());
        // One BDP (100_000 bytes in 8 us) paced at line rate.
        assert_eq!((d.cwnd(), d.rate()), (100_000, 100_000_000_000));
        // rate_ai 1 Gb/s x 8 us = 1000 bytes per window of data.
        assert_eq!(d.ai_bytes, 1000.0);
        // First ACK closes the initial (empty) observation window: alpha = 15/16
        // (F = 0); capped at one BDP, the increase does nothing.
        d.on_ack(&ack(1, 100, 1000, 1, 0));
        assert_eq!(d.alpha, 15.0 / 16.0);
        assert_eq!(d.cwnd(), 100_000);
        // CE: cut by alpha / 2 -> 100_000 x (1 - 15/32) = 53_125 bytes = 53.125 Gb/s.
        d.on_ack(&ack(2, 100, 1000, 1, 1));
        assert_eq!((d.cwnd(), d.rate()), (53_125, 53_125_000_000));
        // Within the window (snd_una <= 100): no increase, no second cut.
        d.on_ack(&ack(50, 110, 1000, 1, 1));
        d.on_ack(&ack(60, 120, 1000, 1, 0));
        assert_eq!(d.cwnd(), 53_125);
        // snd_una 101 > 100: new window and out of CWR: + 1000 bytes (+ 1 Gb/s).
        d.on_ack(&ack(101, 130, 1000, 1, 0));
        assert_eq!((d.cwnd(), d.rate()), (54_125, 54_125_000_000));
        // More ACKs of the same window: no further increase (once per window, not per ACK).
        d.on_ack(&ack(110, 140, 1000, 1, 0));
        assert_eq!(d.cwnd(), 54_125);
        // NACKs and timeouts leave the rate.
        d.on_nack(0, 140, crate::packet::NackReason::Trimmed);
        d.on_timeout(0);
        assert_eq!(d.cwnd(), 54_125);
        // The window mode would grow per ACK: 100_010 after one unmarked ACK.
        let mut w = Dctcp::new(&DctcpConfig::default(), &params());
        w.on_ack(&ack(1, 100, 1000, 1, 0));
        assert_eq!((w.cwnd(), w.rate()), (100_010, 100_000_000_000));
    }

    #[test]
    fn rate_mode_floors_at_min_rate_and_defaults_to_one_mss_per_rtt() {
        let c = DctcpConfig { mode: DctcpMode::Rate, min_rate: Rate::gbps(10), ..Default::default() };
        let mut d = Dctcp::new(&c, &params());
        assert_eq!(d.ai_bytes, 1000.0, "one MSS per base RTT");
        // min_rate 10 Gb/s x 8 us = 10_000 bytes: repeated cuts with alpha = 1 stop there.
        for k in 0..10u32 {
            d.on_ack(&ack(100 * k + 1, 100 * k + 100, 1000, 1, 1));
        }
        assert_eq!((d.cwnd(), d.rate()), (10_000, 10_000_000_000));
        let bad = DctcpConfig { rate_ai: Some(Rate(0)), ..c };
        assert_eq!(bad.validate().unwrap_err().0, "rate_ai");
        let t: DctcpConfig = toml::from_str("mode = \"rate\"\nmax_cwnd = \"64KB\"\nrate_ai = \"615Mbps\"\nmin_rate = \"1Gbps\"").unwrap();
        assert_eq!((t.mode, t.max_cwnd, t.rate_ai, t.min_rate), (DctcpMode::Rate, Some(Size(64_000)), Some(Rate(615_000_000)), Rate::gbps(1)));
        assert!(toml::from_str::<DctcpConfig>("mode = \"paced\"").is_err());
    }

    #[test]
    fn timeout_restarts_in_slow_start() {
        let mut d = Dctcp::new(&DctcpConfig::default(), &params());
        d.on_timeout(0);
        assert_eq!(d.cwnd(), 1000);
        assert_eq!(d.ssthresh, 50_000.0);
        d.on_ack(&ack(1, 2, 1000, 1, 0));
        assert_eq!(d.cwnd(), 2000);
    }
}
