//! Congestion control: a small trait with default no-op hooks, one file per
//! algorithm, and one line per algorithm in the registry at the end of this
//! file. An algorithm's file holds everything about it: its scenario name
//! and description ([`Algorithm::NAME`], [`Algorithm::ABOUT`]), its section
//! `[transport.<name>]` with its defaults ([`Algorithm::Config`]), the
//! validation of that section, its checks against the rest of the scenario,
//! the defaults it derives from the fabric, its per-flow state and its
//! receiver side. The registry line only names the file and the type; from
//! the lines come the [`CcKind`] names, [`KINDS`] (for `csigsim list`), the
//! typed [`CcConfig`] (the selected algorithm's settings only), and the
//! [`Cc`] and [`ReceiverCc`] enums that dispatch every hook (no trait
//! objects on the per-packet path).
//!
//! The sender asks two things of its controller before every packet: the
//! window (bytes that may be unacknowledged) and the pacing rate. A window of
//! `u64::MAX` means "no window"; a rate equal to the line rate means "no pacing".
//!
//! Adding an algorithm `foo`: a file `cc/foo.rs` with its state type
//! implementing [`CongestionControl`] and [`Algorithm`], and the line
//! `Foo(foo::Foo),` in the registry below (docs/architecture.md has a worked
//! example).

pub use crate::packet::NackReason;
use crate::packet::Advice;
use crate::units::Time;
use serde::de::DeserializeOwned;
use std::fmt::Debug;

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

/// How often a window controller took each of its per-ACK decisions over a
/// flow (NSCC's four cases, quick adapt and the ACKs it ignores), for
/// flows.csv. Counts saturate at 2^32 - 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Decisions {
    /// No ECN, delay at or above the target: fair increase.
    pub fair: u32,
    /// No ECN, delay below the target: proportional increase (fast ones included).
    pub proportional: u32,
    /// Of the proportional increases, those that took the fast-increase path.
    pub fast: u32,
    /// ECN, delay below the target: no change.
    pub noop: u32,
    /// ECN, delay at or above the target: multiplicative decrease.
    pub decrease: u32,
    /// Of the decreases, those applied (the average delay above the
    /// target and no decrease within the last base RTT).
    pub decrease_applied: u32,
    /// Quick adapt firings, on ACKs and NACKs.
    pub quick_adapt: u32,
    /// ACKs ignored after a quick adapt (ECN-marked, within the bytes in
    /// flight when it fired).
    pub ignored: u32,
}

/// Hooks a congestion controller implements; every hook has a no-op default.
pub trait CongestionControl {
    /// An ACK arrived (possibly coalesced, possibly echoing CE marks).
    fn on_ack(&mut self, _ack: &AckSample) {}
    /// The receiver reported a gap or a trimmed packet, for `reason`;
    /// `snd_nxt` is one past the highest packet ever sent.
    fn on_nack(&mut self, _now_ps: u64, _snd_nxt: u32, _reason: NackReason) {}
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
    /// The decisions counted so far, for a controller that counts them.
    fn decisions(&self) -> Option<Decisions> {
        None
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

/// The `[transport]` keys every algorithm may read besides its own section.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Shared {
    /// `transport.cnp_interval`: the least time between two CNPs to one flow
    /// (None: the algorithm's default).
    pub cnp_interval: Option<Time>,
    /// `[transport.rccc]`: receivers grant credits (NSCC then spares its
    /// window on a last-hop trim).
    pub receiver_credits: bool,
}

/// Everything the engine asks of an algorithm beyond the per-packet hooks.
/// Every hook but [`build`](Self::build) has a default; all run at load or
/// set-up, never per packet.
pub trait Algorithm: CongestionControl + Sized {
    /// The scenario name (`transport.cc`, summary.json, cc.csv) and the
    /// section `[transport.<NAME>]`.
    const NAME: &'static str;
    /// One line for `csigsim list`.
    const ABOUT: &'static str;
    /// The algorithm reads a section `[transport.<NAME>]` (false: the key is
    /// unknown, and [`Config`](Self::Config) is never read from the file).
    const SECTION: bool = true;
    /// `[transport.<NAME>]` with its defaults (`Default` is the section
    /// absent), plus what [`resolve`](Self::resolve) fills in.
    type Config: Clone + Debug + Default + PartialEq + DeserializeOwned;
    /// Receiver-side state per flow ([`NoReceiver`] for most algorithms).
    type Receiver: Receiver<Self::Config>;
    /// The controller of one flow.
    fn build(c: &Self::Config, p: &FlowParams) -> Self;
    /// The section's own checks, once, at load, whether the algorithm is
    /// selected or not; keys are relative to the section.
    fn validate(_c: &Self::Config) -> Result<(), ConfigError> {
        Ok(())
    }
    /// Completes the selected algorithm's configuration from the other
    /// sections and the shared keys, once, at load.
    fn resolve(_c: &mut Self::Config, _sections: &Sections, _shared: &Shared) {}
    /// The selected algorithm's checks against the rest of the scenario,
    /// once, at load; keys are relative to `[transport]`.
    fn check(_c: &Self::Config, _s: &Setup) -> Result<(), ConfigError> {
        Ok(())
    }
    /// Fills in defaults that depend on the whole network, once, at set-up.
    fn prepare(_c: &mut Self::Config, _f: &Fabric) {}
    /// The window counts wire bytes (payload plus `transport.header` per
    /// packet) instead of payload bytes.
    fn wire_window(_c: &Self::Config) -> bool {
        false
    }
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

/// Receiver-side hooks of an algorithm (a notification point), built from
/// the algorithm's configuration `C`.
pub trait Receiver<C>: Sized + Clone + Debug {
    fn new(c: &C) -> Self;
    /// A data packet of `wire_bytes` was delivered, CE-marked or not, with
    /// the rate advice it carries.
    fn on_data(&mut self, _now_ps: u64, _ce: bool, _advice: Advice, _wire_bytes: u32) -> Option<CnpDecision> {
        None
    }
}

/// No receiver-side state.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoReceiver;

impl<C> Receiver<C> for NoReceiver {
    fn new(_c: &C) -> Self {
        NoReceiver
    }
}

/// An algorithm without a section.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoConfig {}

/// The link from an algorithm's type to its registry variant (written by the
/// registry line).
pub trait Registered: Algorithm {
    const KIND: CcKind;
    /// The configuration in `c`, if `c` is this algorithm's.
    fn config(c: &CcConfig) -> Option<&Self::Config>;
}

/// The `[transport.<name>]` sections a scenario writes, as read at load.
/// Flows never see them: they are built from the selected algorithm's
/// [`CcConfig`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sections(Vec<CcConfig>);

impl Sections {
    /// The section of algorithm `A`, or its defaults when the file has none.
    pub fn get<A: Registered>(&self) -> A::Config {
        self.0.iter().find_map(A::config).cloned().unwrap_or_default()
    }

    /// Keeps `c` as its algorithm's section.
    pub fn insert(&mut self, c: CcConfig) {
        self.0.retain(|s| s.kind() != c.kind());
        self.0.push(c);
    }

    /// Each section's own checks (selected or not), in registry order; keys
    /// are relative to `[transport]`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for &kind in CcKind::ALL {
            if let Some(c) = self.0.iter().find(|c| c.kind() == kind) {
                c.validate().map_err(|(k, m)| (format!("{}.{k}", kind.name()), m))?;
            }
        }
        Ok(())
    }

    /// The configuration of algorithm `kind`: its section (or defaults),
    /// completed by [`Algorithm::resolve`].
    pub fn config(&self, kind: CcKind, shared: &Shared) -> CcConfig {
        let mut c = self.0.iter().find(|c| c.kind() == kind).cloned().unwrap_or_else(|| CcConfig::default_of(kind));
        c.resolve(self, shared);
        c
    }
}

/// Writes the enums of a plug-in family from its registry lines; each line
/// `Variant(file::Type)` names a type whose trait impls (in its own file)
/// say everything else.
macro_rules! registry {
    (
        $(#[$kind_doc:meta])* pub enum $Kind:ident;
        $(#[$config_doc:meta])* pub enum $Config:ident;
        $(#[$state_doc:meta])* pub enum $State:ident;
        $(#[$receiver_doc:meta])* pub enum $Receiver:ident;
        $( $Variant:ident($module:ident::$Type:ident), )*
    ) => {
        $( pub mod $module; )*

        $(#[$kind_doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
        pub enum $Kind {
            #[default]
            $( $Variant, )*
        }

        $(#[$config_doc])*
        #[derive(Clone, Debug, PartialEq)]
        pub enum $Config {
            $( $Variant(<$module::$Type as Algorithm>::Config), )*
        }

        $(#[$state_doc])*
        #[derive(Clone, Debug)]
        pub enum $State {
            $( $Variant($module::$Type), )*
        }

        $(#[$receiver_doc])*
        #[derive(Clone, Debug)]
        pub enum $Receiver {
            $( $Variant(<$module::$Type as Algorithm>::Receiver), )*
        }

        $( impl Registered for $module::$Type {
            const KIND: $Kind = $Kind::$Variant;
            fn config(c: &$Config) -> Option<&Self::Config> {
                match c {
                    $Config::$Variant(c) => Some(c),
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }
        } )*

        impl $Kind {
            /// Every algorithm, in registry order.
            pub const ALL: &'static [$Kind] = &[$( $Kind::$Variant, )*];
            /// Their scenario names, in registry order.
            pub const NAMES: &'static [&'static str] = &[$( <$module::$Type as Algorithm>::NAME, )*];
            const SECTIONS: &'static [bool] = &[$( <$module::$Type as Algorithm>::SECTION, )*];
        }

        /// Every algorithm this build knows and what it does, for `csigsim list`.
        pub const KINDS: &[(&str, &str)] = &[$( (<$module::$Type as Algorithm>::NAME, <$module::$Type as Algorithm>::ABOUT), )*];

        impl $Config {
            /// The algorithm this configuration is for.
            pub fn kind(&self) -> $Kind {
                match self { $( $Config::$Variant(_) => $Kind::$Variant, )* }
            }
            /// Algorithm `kind` with its section absent.
            pub fn default_of(kind: $Kind) -> Self {
                match kind { $( $Kind::$Variant => $Config::$Variant(Default::default()), )* }
            }
            /// Reads `[transport.<name>]` of algorithm `kind`.
            pub fn deserialize_section<'de, D: serde::Deserializer<'de>>(kind: $Kind, d: D) -> Result<Self, D::Error> {
                match kind { $( $Kind::$Variant => serde::Deserialize::deserialize(d).map($Config::$Variant), )* }
            }
            /// The section's own checks (keys relative to the section).
            pub fn validate(&self) -> Result<(), ConfigError> {
                match self { $( $Config::$Variant(c) => <$module::$Type as Algorithm>::validate(c), )* }
            }
            fn resolve(&mut self, sections: &Sections, shared: &Shared) {
                match self { $( $Config::$Variant(c) => <$module::$Type as Algorithm>::resolve(c, sections, shared), )* }
            }
            /// The algorithm's checks against the rest of the scenario.
            pub fn check(&self, s: &Setup) -> Result<(), ConfigError> {
                match self { $( $Config::$Variant(c) => <$module::$Type as Algorithm>::check(c, s), )* }
            }
            /// The algorithm's set-up defaults (see [`Algorithm::prepare`]).
            pub fn prepare(&mut self, f: &Fabric) {
                match self { $( $Config::$Variant(c) => <$module::$Type as Algorithm>::prepare(c, f), )* }
            }
            /// See [`Algorithm::wire_window`].
            pub fn wire_window(&self) -> bool {
                match self { $( $Config::$Variant(c) => <$module::$Type as Algorithm>::wire_window(c), )* }
            }
        }

        impl $State {
            pub fn new(c: &$Config, p: &FlowParams) -> Self {
                match c { $( $Config::$Variant(c) => $State::$Variant(<$module::$Type as Algorithm>::build(c, p)), )* }
            }
        }

        // Every hook is a match on the enum, so each call is static.
        impl CongestionControl for $State {
            #[inline]
            fn on_ack(&mut self, a: &AckSample) {
                match self { $( $State::$Variant(c) => c.on_ack(a), )* }
            }
            fn on_nack(&mut self, now: u64, snd_nxt: u32, reason: NackReason) {
                match self { $( $State::$Variant(c) => c.on_nack(now, snd_nxt, reason), )* }
            }
            fn on_timeout(&mut self, now: u64) {
                match self { $( $State::$Variant(c) => c.on_timeout(now), )* }
            }
            #[inline]
            fn on_send(&mut self, now: u64, psn: u32, bytes: u32) {
                match self { $( $State::$Variant(c) => c.on_send(now, psn, bytes), )* }
            }
            fn on_cnp(&mut self, cnp: &CnpSample) {
                match self { $( $State::$Variant(c) => c.on_cnp(cnp), )* }
            }
            #[inline]
            fn next_timer(&self) -> Option<u64> {
                match self { $( $State::$Variant(c) => c.next_timer(), )* }
            }
            fn on_timer(&mut self, now: u64) {
                match self { $( $State::$Variant(c) => c.on_timer(now), )* }
            }
            #[inline]
            fn cwnd(&self) -> u64 {
                match self { $( $State::$Variant(c) => c.cwnd(), )* }
            }
            #[inline]
            fn rate(&self) -> u64 {
                match self { $( $State::$Variant(c) => c.rate(), )* }
            }
            fn metrics(&self) -> CcMetrics {
                match self { $( $State::$Variant(c) => c.metrics(), )* }
            }
            fn decisions(&self) -> Option<Decisions> {
                match self { $( $State::$Variant(c) => c.decisions(), )* }
            }
        }

        impl $Receiver {
            pub fn new(c: &$Config) -> Self {
                match c { $( $Config::$Variant(c) => $Receiver::$Variant(Receiver::new(c)), )* }
            }

            /// A data packet was delivered: does the receiver send a CNP?
            #[inline]
            pub fn on_data(&mut self, now_ps: u64, ce: bool, advice: Advice, wire_bytes: u32) -> Option<CnpDecision> {
                match self { $( $Receiver::$Variant(r) => Receiver::<<$module::$Type as Algorithm>::Config>::on_data(r, now_ps, ce, advice, wire_bytes), )* }
            }
        }
    };
}

impl CcKind {
    /// The scenario name (also in summary.json and cc.csv).
    pub const fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// The algorithm whose section is `[transport.<key>]`, if any.
    pub fn of_section(key: &str) -> Option<CcKind> {
        CcKind::ALL.iter().copied().find(|k| Self::SECTIONS[*k as usize] && k.name() == key)
    }
}

impl<'de> serde::Deserialize<'de> for CcKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        crate::de::by_name(d, "CcKind", CcKind::NAMES).map(|i| CcKind::ALL[i])
    }
}

impl Default for CcConfig {
    fn default() -> Self {
        CcConfig::default_of(CcKind::default())
    }
}

registry! {
    /// `transport.cc`: the algorithm a scenario selects.
    pub enum CcKind;
    /// The selected algorithm's configuration: its section, resolved and
    /// prepared for the fabric. Every flow's controller is built from it.
    pub enum CcConfig;
    /// One flow's controller, by enum dispatch.
    pub enum Cc;
    /// The receiver side of a flow's algorithm, by enum dispatch.
    pub enum ReceiverCc;
    // One line per algorithm: its variant, its file in cc/ and the type there
    // implementing [`Algorithm`]. The first is the default.
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    fn params() -> FlowParams {
        FlowParams { line_rate_bps: 100_000_000_000, base_rtt_ps: 8_000_000, mss: 4096, packet_bytes: 4160, hops: 2 }
    }

    fn config(kind: CcKind) -> CcConfig {
        Sections::default().config(kind, &Shared::default())
    }

    #[derive(Debug, Deserialize)]
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
            // Every kind builds, and its receiver side too; its defaults validate.
            let c = config(k);
            assert_eq!(c.kind(), k);
            assert!(c.validate().is_ok(), "{name}");
            let cc = Cc::new(&c, &params());
            assert!(cc.cwnd() > 0 && cc.rate() > 0, "{name}");
            ReceiverCc::new(&c);
        }
        assert_eq!(CcKind::default(), CcKind::None);
        assert_eq!(CcKind::DcqcnRev.name(), "dcqcn_rev");
        let e = toml::from_str::<Doc>("cc = \"dcqcnrev\"").unwrap_err().to_string();
        assert!(e.contains("unknown variant `dcqcnrev`, expected one of `none`, `dctcp`"), "{e}");
        assert!(toml::from_str::<Doc>("cc = 5").is_err());
    }

    #[test]
    fn sections_are_the_algorithms_with_one() {
        assert_eq!(CcKind::of_section("dctcp"), Some(CcKind::Dctcp));
        assert_eq!(CcKind::of_section("dcqcn_rev"), Some(CcKind::DcqcnRev));
        assert_eq!(CcKind::of_section("none"), None);
        assert_eq!(CcKind::of_section("reps"), None);
    }

    #[test]
    fn timers_dispatch_like_every_other_hook() {
        // DCQCN schedules its rate decrease and increase on timers after a
        // CNP; through the enum the engine must see the timer and its firing
        // must move the rate.
        for kind in [CcKind::Dcqcn, CcKind::DcqcnRev] {
            let mut cc = Cc::new(&config(kind), &params());
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
        let mut d = ReceiverCc::new(&config(CcKind::Dcqcn));
        assert_eq!(d.on_data(0, true, Advice::NONE, 4160), Some(CnpDecision::Send(Advice::NONE)));
        assert_eq!(d.on_data(1, false, Advice::NONE, 4160), None);
    }

    #[test]
    fn sections_validate_with_their_keys() {
        let mut s = Sections::default();
        assert!(s.validate().is_ok());
        s.insert(CcConfig::Dctcp(dctcp::DctcpConfig { g: 0.0, ..Default::default() }));
        let (k, m) = s.validate().unwrap_err();
        assert_eq!(k, "dctcp.g");
        assert!(m.contains("(0, 1]"), "{m}");
        let c = config(CcKind::Hpcc);
        assert_eq!(c.check(&Setup::default()).unwrap_err().0, "cc");
        assert!(c.check(&Setup { int: true, ..Default::default() }).is_ok());
        let c = config(CcKind::DcqcnRev);
        assert!(c.check(&Setup::default()).unwrap_err().1.contains("mode = \"ecp\""));
        assert!(c.check(&Setup { ecp: true, ..Default::default() }).is_ok());
    }

    #[test]
    fn dcqcn_rev_reads_the_dcqcn_section() {
        let mut s = Sections::default();
        let d = dcqcn::DcqcnConfig { profile: dcqcn::DcqcnProfile::Paper, ..Default::default() };
        s.insert(CcConfig::Dcqcn(d));
        let shared = Shared { cnp_interval: Some(Time::us(7)), ..Default::default() };
        let CcConfig::DcqcnRev(r) = s.config(CcKind::DcqcnRev, &shared) else { panic!() };
        assert_eq!(r.rp, dcqcn::DcqcnConfig { cnp_interval: Some(Time::us(7)), ..d });
    }

    fn rtt(network_rtt: u64) -> Fabric {
        Fabric { network_rtt, trimming: false }
    }

    fn nscc(c: &CcConfig) -> &nscc::NsccConfig {
        nscc::Nscc::config(c).expect("nscc")
    }

    #[test]
    fn nscc_network_rtt_is_the_fabrics_unless_set() {
        let mut c = config(CcKind::Nscc);
        c.prepare(&rtt(9_000_000));
        assert_eq!(nscc(&c).network_rtt, Some(Time(9_000_000)));
        let mut c = CcConfig::Nscc(nscc::NsccConfig { network_rtt: Some(Time(1_000)), ..Default::default() });
        c.prepare(&rtt(3_000_000));
        assert_eq!(nscc(&c).network_rtt, Some(Time(1_000)));
        let mut e = config(CcKind::Nscc);
        e.prepare(&rtt(0));
        assert_eq!(nscc(&e).network_rtt, None);
    }

    #[test]
    fn nscc_trimming_follows_the_switches_unless_set() {
        let trim = Fabric { network_rtt: 0, trimming: true };
        let mut c = config(CcKind::Nscc);
        c.prepare(&trim);
        assert_eq!(nscc(&c).trimming, Some(true));
        let mut c = config(CcKind::Nscc);
        c.prepare(&rtt(0));
        assert_eq!(nscc(&c).trimming, Some(false));
        // Set explicitly, it stays whatever the switches do.
        let mut c = CcConfig::Nscc(nscc::NsccConfig { trimming: Some(false), ..Default::default() });
        c.prepare(&trim);
        assert_eq!(nscc(&c).trimming, Some(false));
    }

    #[test]
    fn only_nscc_in_wire_units_counts_headers() {
        assert!(!config(CcKind::Nscc).wire_window());
        assert!(!config(CcKind::Dctcp).wire_window());
        let c = CcConfig::Nscc(nscc::NsccConfig { window_units: nscc::WindowUnits::Wire, ..Default::default() });
        assert!(c.wire_window());
    }
}
