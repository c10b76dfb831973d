//! Congestion control: a small trait with default no-op hooks, one file per
//! algorithm, and one line per algorithm in `registry!`, from which come the
//! [`CcKind`] enum (scenario names), [`KINDS`] (for `csigsim list`), the
//! [`CcConfig`] sections (`[transport.<module>]`), their validation and
//! cross-checks, and the [`Cc`] and [`ReceiverCc`] enums that dispatch every
//! hook (no trait objects on the per-packet path). Each algorithm splits its
//! `Config` (from the scenario, shared) from its per-flow state, built by
//! [`Algorithm::build`].
//!
//! The sender asks two things of its controller before every packet: the
//! window (bytes that may be unacknowledged) and the pacing rate. A window of
//! `u64::MAX` means "no window"; a rate equal to the line rate means "no pacing".

use crate::packet::Advice;
use crate::units::Time;
use serde::Deserialize;

/// The registry: one line per algorithm,
/// `(module, Variant, State, "scenario name", [Config], "description")`:
/// `module` is its file in cc/ and its section `[transport.<module>]` (typed
/// `Config`; `[]` for none), `State` its per-flow type implementing
/// [`Algorithm`]. The first line is the default. The list is handed to a
/// macro (`define` below; the scenario's `TransportConfig` also reads it), so
/// it is the only place that names every algorithm.
macro_rules! registry {
    ($then:ident) => {
        $then! {
            (none, None, NoCc, "none", [], "line rate, no window"),
            (dctcp, Dctcp, Dctcp, "dctcp", [DctcpConfig], "DCTCP window control from the fraction of CE-marked bytes (RFC 8257)"),
            (swift, Swift, Swift, "swift", [SwiftConfig], "Swift delay-target window (Kumar et al. 2020); fast_ramp_up for FRU on CSIG min(ABW/C)"),
            (dcqcn, Dcqcn, Dcqcn, "dcqcn", [DcqcnConfig], "DCQCN rate control from CNPs (Zhu et al. 2015); profiles paper and hpcc"),
            (timely, Timely, Timely, "timely", [TimelyConfig], "Timely RTT-gradient rate control; queue-stamp (MAX, SUM, SUM_SQU) variants"),
            (hpcc, Hpcc, Hpcc, "hpcc", [HpccConfig], "HPCC window control from multi-hop INT (Li et al. 2019); needs [signals.int]"),
            (nscc, Nscc, Nscc, "nscc", [NsccConfig], "UEC NSCC delay and ECN window control; delay_signal = \"csig\" for CSIG max(Delay)"),
            (dcqcn_rev, DcqcnRev, DcqcnRev, "dcqcn_rev", [DcqcnRevConfig], "DCQCN-Rev: DCQCN with the enhanced notification and reaction points (fair share of the root); needs ecn mode = \"ecp\""),
            (mcc, Mcc, Mcc, "mcc", [MccConfig], "MCC message-level window control for sprayed traffic (partial vs global congestion)"),
        }
    };
}
pub(crate) use registry;

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
    /// Bytes newly acknowledged (cumulative or selective), in the window's
    /// units: payload bytes, or wire bytes (payload plus `transport.header`
    /// per packet) under NSCC with `window_units = "wire"`.
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
    /// Bytes in flight, in the window's units (as `acked_bytes`).
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

/// What the scenario knows that an algorithm may need to check (a read-only
/// view, so that cc does not depend on the scenario's types).
#[derive(Clone, Copy, Debug, Default)]
pub struct Setup<'a> {
    /// `[signals.int]` is on.
    pub int: bool,
    /// Switches run the enhanced congestion point (`ecn.mode = "ecp"`).
    pub ecp: bool,
    /// Queue stamping, if on.
    pub stamp: Option<&'a crate::signal::stamp::StampSetup>,
}

/// What the network tells an algorithm at set-up, once the topology and the
/// flows are known (see [`Algorithm::prepare`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Fabric {
    /// The fabric's unloaded round trip: the largest between any two hosts
    /// (`Network::fabric_rtt`), whether or not a flow crosses that path.
    pub network_rtt: u64,
    /// The switches trim data packets they cannot admit (`switch.mode = "trim"`).
    pub trimming: bool,
}

/// A configuration error: the key under `[transport]` and the message.
pub type ConfigError = (String, String);

/// The per-algorithm hooks beyond the per-packet ones, each called through
/// the registry for the algorithm the scenario selects.
pub trait Algorithm: CongestionControl + Sized {
    /// Receiver-side state per flow ([`NoReceiver`] for most algorithms).
    type Receiver: Receiver;
    /// The controller of one flow.
    fn build(c: &CcConfig, p: &FlowParams) -> Self;
    /// Checks against the rest of the scenario, once, at load.
    fn check(_c: &CcConfig, _s: &Setup) -> Result<(), ConfigError> {
        Ok(())
    }
    /// Fills in defaults that depend on the whole network, once, at set-up.
    fn prepare(_c: &mut CcConfig, _f: &Fabric) {}
}

/// What the receiver's side of an algorithm decided about a congestion
/// notification packet (CNP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CnpDecision {
    /// Send a CNP carrying this rate advice.
    Send(Advice),
    /// A CNP was due but is not needed (counted).
    Suppress,
}

/// Receiver-side hooks of an algorithm (a notification point).
pub trait Receiver: Sized {
    fn new(c: &CcConfig) -> Self;
    /// A data packet of `wire_bytes` was delivered, CE-marked or not, with
    /// the rate advice it carries.
    fn on_data(&mut self, _now_ps: u64, _ce: bool, _advice: Advice, _wire_bytes: u32) -> Option<CnpDecision> {
        None
    }
}

/// No receiver-side state.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoReceiver;

impl Receiver for NoReceiver {
    fn new(_c: &CcConfig) -> Self {
        NoReceiver
    }
}

macro_rules! define {
    ($( ($module:ident, $Variant:ident, $State:ident, $name:literal, [$($Config:ident)?], $desc:literal) ),* $(,)?) => {
        $( pub mod $module; )*

        /// The algorithm a scenario selects (`transport.cc`).
        #[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
        pub enum CcKind {
            $( #[serde(rename = $name)] $Variant, )*
        }

        impl CcKind {
            /// Every algorithm, in registry order.
            pub const ALL: &'static [CcKind] = &[$(CcKind::$Variant),*];

            /// The scenario name (also in summary.json and cc.csv).
            pub const fn name(self) -> &'static str {
                match self {
                    $( CcKind::$Variant => $name, )*
                }
            }
        }

        impl Default for CcKind {
            fn default() -> Self {
                CcKind::ALL[0]
            }
        }

        /// Every algorithm this build knows, for `csigsim list`.
        pub const KINDS: &[(&str, &str)] = &[$( ($name, $desc) ),*];

        /// The congestion-control part of `[transport]`: the selected
        /// algorithm, the CNP interval, and every algorithm's section.
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        pub struct CcConfig {
            pub kind: CcKind,
            /// `transport.cnp_interval`; its default is the algorithm's.
            pub cnp_interval: Option<Time>,
            $( $( pub $module: $module::$Config, )? )*
        }

        impl CcConfig {
            /// Each section's own checks (all sections, selected or not);
            /// keys are relative to `[transport]`.
            pub fn validate(&self) -> Result<(), ConfigError> {
                $( $(
                    $module::$Config::validate(&self.$module).map_err(|(k, m)| (format!("{}.{k}", stringify!($module)), m))?;
                )? )*
                Ok(())
            }

            /// The selected algorithm's checks against the rest of the scenario.
            pub fn check(&self, s: &Setup) -> Result<(), ConfigError> {
                match self.kind {
                    $( CcKind::$Variant => <$module::$State as Algorithm>::check(self, s), )*
                }
            }

            /// The selected algorithm's set-up defaults (see [`Algorithm::prepare`]).
            pub fn prepare(&mut self, f: &Fabric) {
                match self.kind {
                    $( CcKind::$Variant => <$module::$State as Algorithm>::prepare(self, f), )*
                }
            }
        }

        /// The controllers this build knows, by enum dispatch.
        #[derive(Clone, Debug)]
        pub enum Cc {
            $( $Variant($module::$State), )*
        }

        impl Cc {
            pub fn new(c: &CcConfig, p: &FlowParams) -> Self {
                match c.kind {
                    $( CcKind::$Variant => Cc::$Variant(<$module::$State as Algorithm>::build(c, p)), )*
                }
            }
        }

        // Every hook is a match on the enum, so each call is static.
        impl CongestionControl for Cc {
            #[inline]
            fn on_ack(&mut self, a: &AckSample) {
                match self { $( Cc::$Variant(c) => c.on_ack(a), )* }
            }
            fn on_nack(&mut self, now: u64, snd_nxt: u32) {
                match self { $( Cc::$Variant(c) => c.on_nack(now, snd_nxt), )* }
            }
            fn on_timeout(&mut self, now: u64) {
                match self { $( Cc::$Variant(c) => c.on_timeout(now), )* }
            }
            #[inline]
            fn on_send(&mut self, now: u64, psn: u32, bytes: u32) {
                match self { $( Cc::$Variant(c) => c.on_send(now, psn, bytes), )* }
            }
            fn on_cnp(&mut self, cnp: &CnpSample) {
                match self { $( Cc::$Variant(c) => c.on_cnp(cnp), )* }
            }
            #[inline]
            fn next_timer(&self) -> Option<u64> {
                match self { $( Cc::$Variant(c) => c.next_timer(), )* }
            }
            fn on_timer(&mut self, now: u64) {
                match self { $( Cc::$Variant(c) => c.on_timer(now), )* }
            }
            #[inline]
            fn cwnd(&self) -> u64 {
                match self { $( Cc::$Variant(c) => c.cwnd(), )* }
            }
            #[inline]
            fn rate(&self) -> u64 {
                match self { $( Cc::$Variant(c) => c.rate(), )* }
            }
            fn metrics(&self) -> CcMetrics {
                match self { $( Cc::$Variant(c) => c.metrics(), )* }
            }
        }

        /// The receiver side of a flow's algorithm, by enum dispatch.
        #[derive(Clone, Copy, Debug)]
        pub enum ReceiverCc {
            $( $Variant(<$module::$State as Algorithm>::Receiver), )*
        }

        impl ReceiverCc {
            pub fn new(c: &CcConfig) -> Self {
                match c.kind {
                    $( CcKind::$Variant => ReceiverCc::$Variant(Receiver::new(c)), )*
                }
            }

            /// A data packet was delivered: does the receiver send a CNP?
            #[inline]
            pub fn on_data(&mut self, now_ps: u64, ce: bool, advice: Advice, wire_bytes: u32) -> Option<CnpDecision> {
                match self { $( ReceiverCc::$Variant(r) => r.on_data(now_ps, ce, advice, wire_bytes), )* }
            }
        }
    };
}
registry!(define);

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> FlowParams {
        FlowParams { line_rate_bps: 100_000_000_000, base_rtt_ps: 8_000_000, mss: 4096, packet_bytes: 4160, hops: 2 }
    }

    #[derive(Deserialize)]
    struct Doc {
        cc: CcKind,
    }

    #[test]
    fn every_kind_round_trips_through_its_name() {
        assert_eq!(KINDS.len(), CcKind::ALL.len());
        for (&k, &(name, desc)) in CcKind::ALL.iter().zip(KINDS) {
            assert_eq!(k.name(), name);
            assert!(!desc.is_empty());
            let d: Doc = toml::from_str(&format!("cc = \"{name}\"")).unwrap();
            assert_eq!(d.cc, k, "{name}");
            // Every kind builds, and its receiver side too.
            let c = CcConfig { kind: k, ..Default::default() };
            let cc = Cc::new(&c, &params());
            assert!(cc.cwnd() > 0 && cc.rate() > 0, "{name}");
            ReceiverCc::new(&c);
        }
        assert_eq!(CcKind::default(), CcKind::None);
        assert_eq!(CcKind::DcqcnRev.name(), "dcqcn_rev");
        assert!(toml::from_str::<Doc>("cc = \"dcqcnrev\"").is_err());
    }

    #[test]
    fn timers_dispatch_like_every_other_hook() {
        // DCQCN schedules its rate decrease and increase on timers after a
        // CNP; through the enum the engine must see the timer and its firing
        // must move the rate.
        for kind in [CcKind::Dcqcn, CcKind::DcqcnRev] {
            let mut cc = Cc::new(&CcConfig { kind, ..Default::default() }, &params());
            cc.on_cnp(&CnpSample::at(1_000_000));
            let after_cnp = cc.rate();
            let mut now = 1_000_000;
            let mut moved = false;
            for _ in 0..100 {
                let t = cc.next_timer().unwrap_or_else(|| panic!("{kind:?}: timer not dispatched"));
                now = t.max(now);
                cc.on_timer(now);
                moved |= cc.rate() != after_cnp;
                if cc.next_timer().is_none() {
                    break;
                }
            }
            assert!(moved, "{kind:?}: on_timer not dispatched");
        }
    }

    #[test]
    fn receivers_by_kind() {
        let mut none = ReceiverCc::new(&CcConfig::default());
        assert_eq!(none.on_data(0, true, Advice::NONE, 4160), None);
        let mut d = ReceiverCc::new(&CcConfig { kind: CcKind::Dcqcn, ..Default::default() });
        assert_eq!(d.on_data(0, true, Advice::NONE, 4160), Some(CnpDecision::Send(Advice::NONE)));
        assert_eq!(d.on_data(1, false, Advice::NONE, 4160), None);
    }

    #[test]
    fn sections_validate_with_their_keys() {
        let mut c = CcConfig::default();
        assert!(c.validate().is_ok());
        c.dctcp.g = 0.0;
        let (k, m) = c.validate().unwrap_err();
        assert_eq!(k, "dctcp.g");
        assert!(m.contains("(0, 1]"), "{m}");
        let c = CcConfig { kind: CcKind::Hpcc, ..Default::default() };
        assert_eq!(c.check(&Setup::default()).unwrap_err().0, "cc");
        assert!(c.check(&Setup { int: true, ..Default::default() }).is_ok());
        let c = CcConfig { kind: CcKind::DcqcnRev, ..Default::default() };
        assert!(c.check(&Setup::default()).unwrap_err().1.contains("mode = \"ecp\""));
        assert!(c.check(&Setup { ecp: true, ..Default::default() }).is_ok());
    }

    fn rtt(network_rtt: u64) -> Fabric {
        Fabric { network_rtt, trimming: false }
    }

    #[test]
    fn nscc_network_rtt_is_the_fabrics_unless_set() {
        let mut c = CcConfig { kind: CcKind::Nscc, ..Default::default() };
        c.prepare(&rtt(9_000_000));
        assert_eq!(c.nscc.network_rtt, Some(Time(9_000_000)));
        c.nscc.network_rtt = Some(Time(1_000));
        c.prepare(&rtt(3_000_000));
        assert_eq!(c.nscc.network_rtt, Some(Time(1_000)));
        let mut d = CcConfig { kind: CcKind::Dctcp, ..Default::default() };
        d.prepare(&rtt(3_000_000));
        assert_eq!(d.nscc.network_rtt, None);
        let mut e = CcConfig { kind: CcKind::Nscc, ..Default::default() };
        e.prepare(&rtt(0));
        assert_eq!(e.nscc.network_rtt, None);
    }

    #[test]
    fn nscc_trimming_follows_the_switches_unless_set() {
        let trim = Fabric { network_rtt: 0, trimming: true };
        let mut c = CcConfig { kind: CcKind::Nscc, ..Default::default() };
        c.prepare(&trim);
        assert_eq!(c.nscc.trimming, Some(true));
        let mut c = CcConfig { kind: CcKind::Nscc, ..Default::default() };
        c.prepare(&rtt(0));
        assert_eq!(c.nscc.trimming, Some(false));
        // Set explicitly, it stays whatever the switches do.
        let mut c = CcConfig { kind: CcKind::Nscc, ..Default::default() };
        c.nscc.trimming = Some(false);
        c.prepare(&trim);
        assert_eq!(c.nscc.trimming, Some(false));
    }
}
