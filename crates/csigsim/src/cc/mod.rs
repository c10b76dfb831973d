//! Congestion control: a small trait with default no-op hooks, one file per
//! algorithm, dispatched through the [`Cc`] enum (no trait objects on the
//! per-packet path). Each algorithm splits its `Config` (from the scenario,
//! shared) from its per-flow state, built by `new(&config, &FlowParams)`.
//!
//! The sender asks two things of its controller before every packet: the
//! window (bytes that may be unacknowledged) and the pacing rate. A window of
//! `u64::MAX` means "no window"; a rate equal to the line rate means "no pacing".

pub mod dcqcn;
pub mod dcqcn_rev;
pub mod dctcp;
pub mod hpcc;
pub mod mcc;
pub mod none;
pub mod nscc;
pub mod swift;
pub mod timely;

use crate::scenario::config::{CcKind, TransportConfig};

/// What a controller knows about its flow when it is created.
#[derive(Clone, Copy, Debug)]
pub struct FlowParams {
    /// NIC line rate.
    pub line_rate_bps: u64,
    /// Round-trip time of an unloaded path: data out, ACK back.
    pub base_rtt_ps: u64,
    /// Payload bytes per full data packet.
    pub mss: u32,
    /// Wire bytes of a full data packet (payload plus headers and signal bytes).
    pub packet_bytes: u32,
    /// Links on the flow's (first equal-cost) path, host to host.
    pub hops: u32,
}

impl FlowParams {
    /// Bandwidth-delay product in bytes.
    pub fn bdp(&self) -> u64 {
        crate::units::bytes_in(self.base_rtt_ps, self.line_rate_bps)
    }
}

/// An acknowledgement as the controller sees it.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckSample<'a> {
    pub now_ps: u64,
    /// Payload bytes newly acknowledged (cumulative or selective).
    pub acked_bytes: u64,
    /// Data packets this ACK covers and how many of them carried CE.
    pub acked_pkts: u32,
    pub ce_pkts: u32,
    /// Round-trip sample: now minus the echoed send time.
    pub rtt_ps: u64,
    /// Sender sequence state after the ACK was applied (packet numbers):
    /// first unacknowledged, and one past the highest packet ever sent.
    pub snd_una: u32,
    pub snd_nxt: u32,
    pub inflight_bytes: u64,
    /// The CSIG signal the receiver reflected, if the packet carried a tag.
    pub csig: Option<crate::signal::CsigSample>,
    /// The reflected queue stamps, if stamping is on.
    pub stamps: Option<crate::signal::StampSample>,
    /// The reflected INT stack, if INT is on.
    pub int: Option<&'a crate::signal::int::IntStack>,
}

/// A congestion notification packet as the controller sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CnpSample {
    pub now_ps: u64,
    /// The fair share per contributor of the congestion root the CNP reports
    /// (DCQCN-Rev's enhanced notification point), if it carries one,
    pub fair_share_bps: Option<u64>,
    /// and the factor in (0, 1] below that share that would drain the root's
    /// queue (1 without a share).
    pub drain: f64,
}

impl CnpSample {
    /// A plain DCQCN CNP at `now_ps`.
    pub fn at(now_ps: u64) -> Self {
        CnpSample { now_ps, fair_share_bps: None, drain: 1.0 }
    }
}

/// A snapshot of a controller for telemetry.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CcMetrics {
    pub cwnd_bytes: u64,
    pub rate_bps: u64,
    /// Algorithm-specific congestion estimate (DCTCP alpha), if any.
    pub alpha: f64,
}

/// Hooks a congestion controller implements; every hook has a no-op default.
pub trait CongestionControl {
    /// An ACK arrived (possibly coalesced, possibly echoing CE marks).
    fn on_ack(&mut self, _ack: &AckSample) {}
    /// The receiver reported a gap or a trimmed packet; `snd_nxt` is one past
    /// the highest packet ever sent.
    fn on_nack(&mut self, _now_ps: u64, _snd_nxt: u32) {}
    /// The retransmission timer fired.
    fn on_timeout(&mut self, _now_ps: u64) {}
    /// Data packet `psn` (new or resent) of `bytes` wire bytes left the NIC.
    fn on_send(&mut self, _now_ps: u64, _psn: u32, _bytes: u32) {}
    /// A congestion notification packet (CNP) for this flow arrived.
    fn on_cnp(&mut self, _cnp: &CnpSample) {}
    /// The earliest time the controller wants [`on_timer`](Self::on_timer),
    /// if any. Asked after every hook; the engine keeps one pending timer
    /// event per flow (timers are fields, not queue entries).
    fn next_timer(&self) -> Option<u64> {
        None
    }
    /// Called at the time `next_timer` returned (if it still returns a time
    /// not after now).
    fn on_timer(&mut self, _now_ps: u64) {}
    /// Bytes that may be in flight.
    fn cwnd(&self) -> u64;
    /// Pacing rate in bits per second.
    fn rate(&self) -> u64;
    fn metrics(&self) -> CcMetrics {
        CcMetrics { cwnd_bytes: self.cwnd(), rate_bps: self.rate(), alpha: 0.0 }
    }
}

/// The controllers this build knows, by enum dispatch.
#[derive(Clone, Debug)]
pub enum Cc {
    None(none::NoCc),
    Dctcp(dctcp::Dctcp),
    Swift(swift::Swift),
    Dcqcn(dcqcn::Dcqcn),
    Timely(timely::Timely),
    Hpcc(hpcc::Hpcc),
    Nscc(nscc::Nscc),
    DcqcnRev(dcqcn_rev::DcqcnRev),
    Mcc(mcc::Mcc),
}

/// Every algorithm this build knows, for `csigsim list`.
pub const KINDS: &[(&str, &str)] = &[
    ("none", "line rate, no window"),
    ("dctcp", "DCTCP window control from the fraction of CE-marked bytes (RFC 8257)"),
    ("swift", "Swift delay-target window (Kumar et al. 2020); fast_ramp_up for FRU on CSIG min(ABW/C)"),
    ("dcqcn", "DCQCN rate control from CNPs (Zhu et al. 2015); profiles paper and hpcc"),
    ("timely", "Timely RTT-gradient rate control; queue-stamp (MAX, SUM, SUM_SQU) variants"),
    ("hpcc", "HPCC window control from multi-hop INT (Li et al. 2019); needs [signals.int]"),
    ("nscc", "UEC NSCC delay and ECN window control; delay_signal = \"csig\" for CSIG max(Delay)"),
    ("dcqcn_rev", "DCQCN-Rev: DCQCN with the enhanced notification and reaction points (fair share of the root); needs ecn mode = \"ecp\""),
    ("mcc", "MCC message-level window control for sprayed traffic (partial vs global congestion)"),
];

impl Cc {
    pub fn new(t: &TransportConfig, p: &FlowParams) -> Self {
        match t.cc {
            CcKind::None => Cc::None(none::NoCc::new(p)),
            CcKind::Dctcp => Cc::Dctcp(dctcp::Dctcp::new(&t.dctcp, p)),
            CcKind::Swift => Cc::Swift(swift::Swift::new(&t.swift, p)),
            CcKind::Dcqcn => Cc::Dcqcn(dcqcn::Dcqcn::new(&t.dcqcn, p)),
            CcKind::Timely => Cc::Timely(timely::Timely::new(&t.timely, p)),
            CcKind::Hpcc => Cc::Hpcc(hpcc::Hpcc::new(&t.hpcc, p)),
            CcKind::Nscc => Cc::Nscc(nscc::Nscc::new(&t.nscc, p)),
            CcKind::DcqcnRev => Cc::DcqcnRev(dcqcn_rev::DcqcnRev::new(&t.dcqcn, &t.dcqcn_rev, p)),
            CcKind::Mcc => Cc::Mcc(mcc::Mcc::new(&t.mcc, p)),
        }
    }

    #[inline]
    fn inner(&self) -> &dyn CongestionControl {
        match self {
            Cc::None(c) => c,
            Cc::Dctcp(c) => c,
            Cc::Swift(c) => c,
            Cc::Dcqcn(c) => c,
            Cc::Timely(c) => c,
            Cc::Hpcc(c) => c,
            Cc::Nscc(c) => c,
            Cc::DcqcnRev(c) => c,
            Cc::Mcc(c) => c,
        }
    }

    #[inline]
    fn inner_mut(&mut self) -> &mut dyn CongestionControl {
        match self {
            Cc::None(c) => c,
            Cc::Dctcp(c) => c,
            Cc::Swift(c) => c,
            Cc::Dcqcn(c) => c,
            Cc::Timely(c) => c,
            Cc::Hpcc(c) => c,
            Cc::Nscc(c) => c,
            Cc::DcqcnRev(c) => c,
            Cc::Mcc(c) => c,
        }
    }
}

// Static dispatch: `inner` is a match on a local enum, which the compiler
// resolves per variant, so no vtable call survives in the hot path.
impl CongestionControl for Cc {
    #[inline]
    fn on_ack(&mut self, a: &AckSample) {
        match self {
            Cc::None(c) => c.on_ack(a),
            Cc::Dctcp(c) => c.on_ack(a),
            Cc::Swift(c) => c.on_ack(a),
            Cc::Dcqcn(c) => c.on_ack(a),
            Cc::Timely(c) => c.on_ack(a),
            Cc::Hpcc(c) => c.on_ack(a),
            Cc::Nscc(c) => c.on_ack(a),
            Cc::DcqcnRev(c) => c.on_ack(a),
            Cc::Mcc(c) => c.on_ack(a),
        }
    }
    fn on_nack(&mut self, now: u64, snd_nxt: u32) {
        self.inner_mut().on_nack(now, snd_nxt)
    }
    fn on_timeout(&mut self, now: u64) {
        self.inner_mut().on_timeout(now)
    }
    fn on_cnp(&mut self, cnp: &CnpSample) {
        self.inner_mut().on_cnp(cnp)
    }
    #[inline]
    fn next_timer(&self) -> Option<u64> {
        match self {
            Cc::None(_) | Cc::Dctcp(_) | Cc::Swift(_) | Cc::Timely(_) | Cc::Hpcc(_) | Cc::Nscc(_) => None,
            Cc::Dcqcn(c) => c.next_timer(),
            Cc::DcqcnRev(c) => c.next_timer(),
            Cc::Mcc(c) => c.next_timer(),
        }
    }
    fn on_timer(&mut self, now: u64) {
        self.inner_mut().on_timer(now)
    }
    #[inline]
    fn on_send(&mut self, now: u64, psn: u32, bytes: u32) {
        match self {
            Cc::None(c) => c.on_send(now, psn, bytes),
            Cc::Dctcp(c) => c.on_send(now, psn, bytes),
            Cc::Swift(c) => c.on_send(now, psn, bytes),
            Cc::Dcqcn(c) => c.on_send(now, psn, bytes),
            Cc::Timely(c) => c.on_send(now, psn, bytes),
            Cc::Hpcc(c) => c.on_send(now, psn, bytes),
            Cc::Nscc(c) => c.on_send(now, psn, bytes),
            Cc::DcqcnRev(c) => c.on_send(now, psn, bytes),
            Cc::Mcc(c) => c.on_send(now, psn, bytes),
        }
    }
    #[inline]
    fn cwnd(&self) -> u64 {
        match self {
            Cc::None(c) => c.cwnd(),
            Cc::Dctcp(c) => c.cwnd(),
            Cc::Swift(c) => c.cwnd(),
            Cc::Dcqcn(c) => c.cwnd(),
            Cc::Timely(c) => c.cwnd(),
            Cc::Hpcc(c) => c.cwnd(),
            Cc::Nscc(c) => c.cwnd(),
            Cc::DcqcnRev(c) => c.cwnd(),
            Cc::Mcc(c) => c.cwnd(),
        }
    }
    #[inline]
    fn rate(&self) -> u64 {
        match self {
            Cc::None(c) => c.rate(),
            Cc::Dctcp(c) => c.rate(),
            Cc::Swift(c) => c.rate(),
            Cc::Dcqcn(c) => c.rate(),
            Cc::Timely(c) => c.rate(),
            Cc::Hpcc(c) => c.rate(),
            Cc::Nscc(c) => c.rate(),
            Cc::DcqcnRev(c) => c.rate(),
            Cc::Mcc(c) => c.rate(),
        }
    }
    fn metrics(&self) -> CcMetrics {
        self.inner().metrics()
    }
}
