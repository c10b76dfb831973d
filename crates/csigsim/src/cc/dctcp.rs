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

use super::{AckSample, Algorithm, CcConfig, CcMetrics, CongestionControl, FlowParams, NoReceiver};
use crate::units::Size;
use serde::Deserialize;

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
}
fn default_g() -> f64 {
    1.0 / 16.0
}
fn default_alpha_init() -> f64 {
    1.0
}
impl Default for DctcpConfig {
    fn default() -> Self {
        DctcpConfig { g: default_g(), alpha_init: default_alpha_init(), init_cwnd: None, min_cwnd: None, ssthresh: None }
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
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct Dctcp {
    g: f64,
    mss: f64,
    min_cwnd: f64,
    line_rate_bps: u64,
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
        let init = c.init_cwnd.map(|s| s.0).unwrap_or_else(|| p.bdp()).max(p.mss as u64) as f64;
        let min_cwnd = c.min_cwnd.map(|s| s.0 as f64).unwrap_or(mss);
        Dctcp {
            g: c.g,
            mss,
            min_cwnd,
            line_rate_bps: p.line_rate_bps,
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
        self.cwnd = (self.cwnd * factor).max(self.min_cwnd);
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
        if a.snd_una > self.window_end {
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
            if self.cwnd < self.ssthresh {
                self.cwnd += a.acked_bytes as f64;
            } else {
                self.cwnd += self.mss * a.acked_bytes as f64 / self.cwnd;
            }
        }
    }

    fn on_nack(&mut self, _now: u64, snd_nxt: u32) {
        if self.cwr_end.is_none() {
            self.reduce(0.5, snd_nxt);
        }
    }

    fn on_timeout(&mut self, _now: u64) {
        self.ssthresh = (self.cwnd / 2.0).max(2.0 * self.mss);
        self.cwnd = self.min_cwnd.max(self.mss);
        self.cwr_end = None;
    }

    fn cwnd(&self) -> u64 {
        self.cwnd as u64
    }

    fn rate(&self) -> u64 {
        self.line_rate_bps
    }

    fn metrics(&self) -> CcMetrics {
        CcMetrics { cwnd_bytes: self.cwnd as u64, rate_bps: self.line_rate_bps, alpha: self.alpha }
    }
}

impl Algorithm for Dctcp {
    type Receiver = NoReceiver;
    fn build(c: &CcConfig, p: &FlowParams) -> Self {
        Dctcp::new(&c.dctcp, p)
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
    fn timeout_restarts_in_slow_start() {
        let mut d = Dctcp::new(&DctcpConfig::default(), &params());
        d.on_timeout(0);
        assert_eq!(d.cwnd(), 1000);
        assert_eq!(d.ssthresh, 50_000.0);
        d.on_ack(&ack(1, 2, 1000, 1, 0));
        assert_eq!(d.cwnd(), 2000);
    }
}
