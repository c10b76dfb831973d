//! DCQCN-Rev's enhanced reaction point (ERP), on top of DCQCN's.
//!
//! The source (Olmedilla et al., "Improving injection throttling for DCQCN")
//! states goals, not formulas: throttle only the flows that congest, by the
//! severity of the congestion, with timely information, instead of DCQCN's
//! fixed multiplicative steps driven by an alpha that remembers old CNPs.
//! csigsim's design (docs/cc/dcqcn-rev.md):
//!
//! - the enhanced congestion point (switch, `ecn.mode = "ecp"`) marks only
//!   contributors at congestion roots and stamps the root's fair share per
//!   contributor into the packet (`signal::ecp::Occupancy::contributor_share`);
//! - the enhanced notification point (receiver, [`EnhancedNotificationPoint`]) reports the lowest
//!   share seen since its last CNP, and sends no CNP to a flow that already
//!   arrives at or below the rate the CNP would set;
//! - this reaction point, on a CNP that carries a share F, sets
//!   Rc = min(Rc, target_utilization x F) and Rt = F at once (no decrease
//!   timer, no alpha), then recovers with DCQCN's own fast recovery, additive
//!   and hyper increase towards and past F. A CNP without a share (none of the
//!   marking switches knew one) gets DCQCN's reaction.

use serde::Deserialize;

use super::dcqcn::{Dcqcn, DcqcnConfig, NotificationPoint, CNP_INTERVAL};
use super::{AckSample, Algorithm, CcMetrics, CnpDecision, CnpSample, ConfigError, CongestionControl, FlowParams, Receiver, Sections, Setup, Shared};
use crate::packet::Advice;

/// `[transport.dcqcn_rev]`: what DCQCN-Rev adds to `[transport.dcqcn]`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DcqcnRevConfig {
    /// The fraction of the reported fair share a flow is cut to, so that the
    /// root's queue drains (HPCC's eta plays the same part).
    #[serde(default = "default_target_utilization")]
    pub target_utilization: f64,
    /// Enhanced notification point: no CNP to a flow whose data already
    /// arrives at or below `target_utilization` x the share it would report.
    #[serde(default = "default_suppress")]
    pub suppress: bool,
    /// The reaction point's constants: `[transport.dcqcn]`, with
    /// `transport.cnp_interval` (filled in by [`Algorithm::resolve`]).
    #[serde(skip)]
    pub rp: DcqcnConfig,
}

fn default_target_utilization() -> f64 {
    0.95
}
fn default_suppress() -> bool {
    true
}

impl Default for DcqcnRevConfig {
    fn default() -> Self {
        DcqcnRevConfig { target_utilization: default_target_utilization(), suppress: default_suppress(), rp: DcqcnConfig::default() }
    }
}

impl DcqcnRevConfig {
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !(self.target_utilization > 0.0 && self.target_utilization <= 1.0) {
            return Err(("target_utilization", format!("target_utilization must be in (0, 1], got {}", self.target_utilization)));
        }
        Ok(())
    }
}

/// The enhanced reaction point of one flow: DCQCN's rate machinery, with the
/// cut replaced by the reported share.
#[derive(Clone, Debug)]
pub struct DcqcnRev {
    pub rp: Dcqcn,
    eta: f64,
    /// The last fair share a CNP reported, bits per second (0 before any).
    pub last_share_bps: u64,
    /// CNPs that carried a share, and those that did not (DCQCN reaction).
    pub share_cnps: u64,
    pub plain_cnps: u64,
}

impl DcqcnRev {
    pub fn new(c: &DcqcnRevConfig, p: &FlowParams) -> Self {
        DcqcnRev { rp: Dcqcn::new(&c.rp, p), eta: c.target_utilization, last_share_bps: 0, share_cnps: 0, plain_cnps: 0 }
    }
}

impl CongestionControl for DcqcnRev {
    fn on_cnp(&mut self, cnp: &CnpSample) {
        match cnp.fair_share_bps {
            Some(share) => {
                self.share_cnps += 1;
                self.last_share_bps = share;
                let share = share as f64;
                let rc = self.rp.rc.min(self.eta * share * cnp.drain);
                self.rp.set_rates(cnp.now_ps, rc, share);
            }
            None => {
                self.plain_cnps += 1;
                self.rp.on_cnp(cnp);
            }
        }
    }
    fn on_ack(&mut self, a: &AckSample) {
        self.rp.on_ack(a)
    }
    fn on_send(&mut self, now: u64, psn: u32, bytes: u32) {
        self.rp.on_send(now, psn, bytes)
    }
    fn on_timeout(&mut self, now: u64) {
        self.rp.on_timeout(now)
    }
    fn next_timer(&self) -> Option<u64> {
        self.rp.next_timer()
    }
    fn on_timer(&mut self, now: u64) {
        self.rp.on_timer(now)
    }
    fn cwnd(&self) -> u64 {
        self.rp.cwnd()
    }
    fn rate(&self) -> u64 {
        self.rp.rate()
    }
    /// `alpha` reports the last share as a fraction of the line rate.
    fn metrics(&self) -> CcMetrics {
        CcMetrics { cwnd_bytes: self.cwnd(), rate_bps: self.rate(), alpha: self.last_share_bps as f64 / self.rp.line_rate() }
    }
}

impl Algorithm for DcqcnRev {
    const NAME: &'static str = "dcqcn_rev";
    const ABOUT: &'static str =
        "DCQCN-Rev: DCQCN with the enhanced notification and reaction points (fair share of the root); needs ecn mode = \"ecp\"";
    type Config = DcqcnRevConfig;
    type Receiver = EnhancedNotificationPoint;
    fn build(c: &DcqcnRevConfig, p: &FlowParams) -> Self {
        DcqcnRev::new(c, p)
    }
    fn validate(c: &DcqcnRevConfig) -> Result<(), ConfigError> {
        c.validate().map_err(|(k, m)| (k.into(), m))
    }
    /// The reaction point is DCQCN's, with `[transport.dcqcn]`.
    fn resolve(c: &mut DcqcnRevConfig, sections: &Sections, shared: &Shared) {
        c.rp = sections.get::<Dcqcn>();
        c.rp.cnp_interval = shared.cnp_interval;
    }
    fn check(_c: &DcqcnRevConfig, s: &Setup) -> Result<(), ConfigError> {
        if !s.ecp {
            return Err((
                "cc".into(),
                "cc = \"dcqcn_rev\" needs its enhanced congestion point: set [switch] ecn = { ..., mode = \"ecp\" }".into(),
            ));
        }
        Ok(())
    }
}

/// DCQCN-Rev's enhanced notification point: DCQCN's, which also keeps the
/// lowest rate advice of the marked packets since its last decision, reports
/// it in the next CNP, and (with `suppress`) sends no CNP to a flow whose
/// data arrived, since the last decision, at no more than the rate the CNP
/// would set (`target_utilization` x share): that flow has already slowed down.
#[derive(Clone, Copy, Debug)]
pub struct EnhancedNotificationPoint {
    np: NotificationPoint,
    suppress: bool,
    eta: f64,
    /// The lowest advice and the bytes delivered since the last decision.
    advice: Advice,
    bytes: u64,
}

impl EnhancedNotificationPoint {
    /// The least time between two decisions: `transport.cnp_interval`, else
    /// the paper's, whatever DCQCN's profile.
    pub fn interval_ps(&self) -> u64 {
        self.np.interval_ps
    }
}

impl Receiver<DcqcnRevConfig> for EnhancedNotificationPoint {
    fn new(c: &DcqcnRevConfig) -> Self {
        EnhancedNotificationPoint {
            np: NotificationPoint::with_interval(c.rp.cnp_interval.unwrap_or(CNP_INTERVAL).0),
            suppress: c.suppress,
            eta: c.target_utilization,
            advice: Advice::NONE,
            bytes: 0,
        }
    }

    fn on_data(&mut self, now: u64, ce: bool, advice: Advice, wire_bytes: u32) -> Option<CnpDecision> {
        self.bytes += wire_bytes as u64;
        if !ce {
            return None;
        }
        self.advice = self.advice.lower(advice);
        if !self.np.due(now) {
            return None;
        }
        let advice = self.advice;
        // Delivered rate since the last decision, against the rate the CNP would set.
        let suppress = match self.np.last_ps {
            Some(last) if self.suppress && !advice.is_none() => {
                self.bytes as f64 * 8e12 / (now - last).max(1) as f64 <= self.eta * advice.bps() as f64
            }
            _ => false,
        };
        // Either way this is a decision: the interval, the count and the advice restart.
        self.np.last_ps = Some(now);
        self.bytes = 0;
        self.advice = Advice::NONE;
        Some(if suppress { CnpDecision::Suppress } else { CnpDecision::Send(advice) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000_000;
    const G: f64 = 1e9;

    fn params() -> FlowParams {
        FlowParams { line_rate_bps: 100_000_000_000, base_rtt_ps: 8 * US, mss: 1000, packet_bytes: 1064, hops: 2 }
    }

    fn rev(dcqcn: &str, rev: &str) -> DcqcnRev {
        let d: DcqcnConfig = toml::from_str(dcqcn).unwrap();
        let mut c: DcqcnRevConfig = toml::from_str(rev).unwrap();
        d.validate().unwrap();
        c.validate().unwrap();
        c.rp = d;
        DcqcnRev::new(&c, &params())
    }

    fn share(now: u64, bps: f64) -> CnpSample {
        CnpSample { now_ps: now, fair_share_bps: Some(bps as u64), drain: 1.0 }
    }

    #[track_caller]
    fn close(got: f64, want: f64) {
        assert!((got - want).abs() <= 1e-6 * want.abs().max(1.0), "got {got}, want {want}");
    }

    #[test]
    fn a_share_sets_the_rate_at_once() {
        let mut r = rev("", "");
        r.on_cnp(&share(0, 25.0 * G));
        // Cut to 0.95 x 25 G immediately: no decrease timer, no alpha.
        close(r.rp.rc, 23.75 * G);
        close(r.rp.rt, 25.0 * G);
        assert_eq!(r.rate(), 23_750_000_000);
        close(r.metrics().alpha, 0.25);
        assert_eq!((r.share_cnps, r.plain_cnps), (1, 0));
    }

    #[test]
    fn a_larger_share_never_raises_the_current_rate() {
        let mut r = rev("", "");
        r.on_cnp(&share(0, 10.0 * G));
        close(r.rp.rc, 9.5 * G);
        // A later CNP reports 40 G (other contributors left): Rc stays, the
        // target moves up, so recovery climbs towards the new share.
        r.on_cnp(&share(US, 40.0 * G));
        close(r.rp.rc, 9.5 * G);
        close(r.rp.rt, 40.0 * G);
    }

    #[test]
    fn recovery_after_a_share_follows_dcqcn_increase_steps() {
        // hpcc profile: increase timer 900 us, one fast-recovery step, then
        // additive increase of 50 Mb/s.
        let mut r = rev("", "");
        r.on_cnp(&share(0, 20.0 * G));
        close(r.rp.rc, 19.0 * G);
        assert_eq!(r.next_timer(), Some(900 * US));
        r.on_timer(900 * US);
        // Fast recovery: Rc = (Rc + Rt) / 2, Rt unchanged.
        close(r.rp.rc, 19.5 * G);
        close(r.rp.rt, 20.0 * G);
        r.on_timer(1800 * US);
        // Additive increase: Rt += 50 Mb/s, Rc = (Rc + Rt) / 2.
        close(r.rp.rt, 20.05 * G);
        close(r.rp.rc, (19.5 * G + 20.05 * G) / 2.0);
    }

    #[test]
    fn target_utilization_and_min_rate_bound_the_cut() {
        let mut r = rev("", "target_utilization = 0.5");
        r.on_cnp(&share(0, 30.0 * G));
        close(r.rp.rc, 15.0 * G);
        // A share below the minimum rate (hpcc profile: 100 Mb/s) floors at it.
        let mut m = rev("", "");
        m.on_cnp(&share(0, 50e6));
        close(m.rp.rc, 100e6);
        close(m.rp.rt, 100e6);
    }

    #[test]
    fn a_cnp_without_a_share_gets_the_dcqcn_cut() {
        // decrease_timer = 0: DCQCN cuts at the CNP with alpha = 1 (first CNP): Rc / 2.
        let mut r = rev("decrease_timer = \"0us\"", "");
        r.on_cnp(&CnpSample::at(0));
        close(r.rp.rc, 50.0 * G);
        assert_eq!((r.share_cnps, r.plain_cnps), (0, 1));
    }

    #[test]
    fn config_is_checked() {
        let bad: DcqcnRevConfig = toml::from_str("target_utilization = 1.5").unwrap();
        assert_eq!(bad.validate().unwrap_err().0, "target_utilization");
        assert!(toml::from_str::<DcqcnRevConfig>("eta = 0.9").is_err());
    }

    fn enp(suppress: bool) -> EnhancedNotificationPoint {
        let mut c = DcqcnRevConfig { suppress, ..Default::default() };
        c.rp.cnp_interval = Some(crate::units::Time::us(10));
        EnhancedNotificationPoint::new(&c)
    }

    #[test]
    fn enhanced_notification_point_folds_the_lowest_advice() {
        let us = 1_000_000;
        let (hi, lo) = (Advice::new(40_000_000_000, 1.0), Advice::new(10_000_000_000, 1.0));
        let mut e = enp(false);
        // The first marked packet: a CNP with its advice at once.
        assert_eq!(e.on_data(0, true, hi, 1000), Some(CnpDecision::Send(hi)));
        // Within the interval the advice is folded, lowest wins, unmarked ones do not count.
        assert_eq!(e.on_data(us, true, hi, 1000), None);
        assert_eq!(e.on_data(2 * us, true, lo, 1000), None);
        assert_eq!(e.on_data(3 * us, false, Advice::NONE, 1000), None);
        assert_eq!(e.on_data(9 * us, true, hi, 1000), None);
        assert_eq!(e.on_data(10 * us, true, hi, 1000), Some(CnpDecision::Send(lo)));
        // The advice restarts after each decision.
        assert_eq!(e.on_data(20 * us, true, hi, 1000), Some(CnpDecision::Send(hi)));
    }

    #[test]
    fn enhanced_notification_point_suppresses_flows_already_slow() {
        let us = 1_000_000;
        let share = Advice::new(10_000_000_000, 1.0);
        let mut e = enp(true);
        // No earlier decision: nothing to measure, the CNP goes.
        assert_eq!(e.on_data(0, true, share, 1000), Some(CnpDecision::Send(share)));
        // 12_500 bytes in 10 us = 10 Gb/s, above 0.95 x 10 Gb/s: send.
        for i in 1..=12 {
            assert_eq!(e.on_data(i * 500_000, false, share, 1000), None);
        }
        assert_eq!(e.on_data(10 * us, true, share, 500), Some(CnpDecision::Send(share)));
        // 10_000 bytes in 10 us = 8 Gb/s: already below the share, suppress.
        for i in 1..=9 {
            assert_eq!(e.on_data(10 * us + i * us / 2, false, share, 1000), None);
        }
        assert_eq!(e.on_data(20 * us, true, share, 1000), Some(CnpDecision::Suppress));
        // A suppression is a decision: the interval restarts from it.
        assert_eq!(e.on_data(25 * us, true, Advice::NONE, 1000), None);
        // Without advice there is nothing to compare: the CNP goes.
        assert_eq!(e.on_data(40 * us, true, Advice::NONE, 1), Some(CnpDecision::Send(Advice::NONE)));
        // With suppression off, a slow flow still gets its CNP.
        let mut e = enp(false);
        assert_eq!(e.on_data(0, true, share, 1000), Some(CnpDecision::Send(share)));
        assert_eq!(e.on_data(20 * us, true, share, 1000), Some(CnpDecision::Send(share)));
    }
}
