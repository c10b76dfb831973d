//! The scenario file's schema. Every table refuses unknown keys so that a typo
//! is an error, not a silently ignored setting. Defaults are documented in
//! docs/scenario.md, next to each key.

use crate::lb::RoutingPolicy;
use crate::workload::WorkloadEntry;
use crate::units::{Size, Time};
use serde::Deserialize;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    #[serde(default = "default_name")]
    pub name: String,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Stop the simulation at this time even if work remains.
    #[serde(default)]
    pub stop: Option<Time>,
    /// Kept raw and deserialized by kind, so errors inside it keep their key path.
    pub topology: toml::Table,
    #[serde(default)]
    pub switch: SwitchConfig,
    #[serde(default)]
    pub transport: TransportConfig,
    #[serde(default)]
    pub monitor: MonitorConfig,
    #[serde(default)]
    pub signals: crate::signal::SignalsConfig,
    #[serde(default)]
    pub flow: Vec<FlowEntry>,
    #[serde(default)]
    pub workload: Vec<WorkloadEntry>,
}

fn default_name() -> String {
    "unnamed".into()
}
fn default_seed() -> u64 {
    1
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum SwitchMode {
    /// Drop-tail: a packet that does not fit the buffer is dropped.
    #[default]
    Lossy,
    /// Lossless: per-ingress PAUSE/RESUME keeps the buffer from overflowing.
    Pfc,
    /// A packet that does not fit is cut to its header and sent at high priority.
    Trim,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum EcnMode {
    /// Classic RED on the egress data queue.
    #[default]
    Red,
    /// Enhanced congestion point: RED only at congestion roots (docs/signals.md).
    Ecp,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EcnConfig {
    pub kmin: Size,
    pub kmax: Size,
    #[serde(default = "default_pmax")]
    pub pmax: f64,
    #[serde(default)]
    pub mode: EcnMode,
    /// ECP: an egress queue at or above this is a candidate root (default kmin).
    #[serde(default)]
    pub root_threshold: Option<Size>,
    /// ECP: a port paused by PFC within this time is a branch of a congestion
    /// tree, not its root.
    #[serde(default = "default_pause_memory")]
    pub pause_memory: Time,
    /// ECP: a flow is marked at a root only with at least this many times its
    /// fair share of the root's queue.
    #[serde(default = "default_fair_share")]
    pub fair_share: f64,
    /// ECP: flows tracked per egress queue.
    #[serde(default = "default_max_flows")]
    pub max_flows: u32,
    /// ECP: the time in which the rate advice stamped into marked packets
    /// would drain the root's queue above `root_threshold` (the advice is the
    /// fair share / (1 + excess / (rate x drain_time))).
    #[serde(default = "default_drain_time")]
    pub drain_time: Time,
}
fn default_drain_time() -> Time {
    Time::us(10)
}
fn default_fair_share() -> f64 {
    1.0
}
fn default_max_flows() -> u32 {
    64
}
fn default_pause_memory() -> Time {
    Time::us(20)
}
fn default_pmax() -> f64 {
    1.0
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PfcConfig {
    /// XOFF threshold = alpha * (free shared buffer), per ingress port.
    #[serde(default = "default_pfc_alpha")]
    pub alpha: f64,
    /// Headroom per ingress port; default 2 * rate * delay + 2 * max packet + a PAUSE frame.
    #[serde(default)]
    pub headroom: Option<Size>,
    /// XON when the ingress port's shared occupancy falls this far below XOFF.
    #[serde(default = "default_xon_delta")]
    pub xon_delta: Size,
}
fn default_pfc_alpha() -> f64 {
    0.125
}
fn default_xon_delta() -> Size {
    Size(3_000)
}
impl Default for PfcConfig {
    fn default() -> Self {
        PfcConfig { alpha: default_pfc_alpha(), headroom: None, xon_delta: default_xon_delta() }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    /// Shared packet buffer per switch.
    #[serde(default = "default_buffer")]
    pub buffer: Size,
    #[serde(default)]
    pub mode: SwitchMode,
    #[serde(default)]
    pub routing: RoutingPolicy,
    /// Reserved (guaranteed) buffer per egress port (lossy, trim) or per ingress port (pfc).
    #[serde(default = "default_reserved")]
    pub reserved: Size,
    /// Dynamic-threshold alpha for egress queues in lossy and trim modes:
    /// a queue may hold alpha * (free shared buffer) beyond its reservation.
    #[serde(default = "default_dt_alpha")]
    pub dt_alpha: f64,
    #[serde(default)]
    pub ecn: Option<EcnConfig>,
    #[serde(default)]
    pub pfc: PfcConfig,
    /// Bytes a trimmed packet keeps (its headers).
    #[serde(default = "default_trim_size")]
    pub trim_size: u32,
    /// Control-class queue per egress port (ACKs, NACKs, trimmed headers);
    /// beyond it control packets are dropped. PAUSE frames are never dropped.
    #[serde(default = "default_ctrl_buffer")]
    pub ctrl_buffer: Size,
}
fn default_ctrl_buffer() -> Size {
    Size(1_000_000)
}
fn default_buffer() -> Size {
    Size(32_000_000)
}
fn default_reserved() -> Size {
    Size(4_096)
}
fn default_dt_alpha() -> f64 {
    1.0
}
fn default_trim_size() -> u32 {
    64
}
impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            buffer: default_buffer(),
            mode: SwitchMode::Lossy,
            routing: RoutingPolicy::Ecmp,
            reserved: default_reserved(),
            dt_alpha: default_dt_alpha(),
            ecn: None,
            pfc: PfcConfig::default(),
            trim_size: default_trim_size(),
            ctrl_buffer: default_ctrl_buffer(),
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Retransmit {
    /// RoCE: the receiver drops out-of-order data and NACKs; the sender goes back.
    #[default]
    GoBackN,
    /// The receiver keeps out-of-order data; the sender resends only what is missing.
    Selective,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum CcKind {
    #[default]
    None,
    Dctcp,
    Swift,
    Dcqcn,
    Timely,
    Hpcc,
    Nscc,
    DcqcnRev,
    Mcc,
}

impl TransportConfig {
    /// The notification point's least time between CNPs to one flow.
    pub fn cnp_interval_ps(&self) -> u64 {
        match self.cnp_interval {
            Some(t) => t.0,
            None if self.cc == CcKind::Dcqcn && self.dcqcn.profile == crate::cc::dcqcn::DcqcnProfile::Hpcc => 0,
            None => Time::us(50).0,
        }
    }
}

impl CcKind {
    /// Does the receiver send CNPs for CE-marked packets (DCQCN's notification point)?
    pub fn uses_cnp(self) -> bool {
        matches!(self, CcKind::Dcqcn | CcKind::DcqcnRev)
    }
}

/// DCTCP (Alizadeh et al. 2010; RFC 8257) parameters.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DctcpConfig {
    /// EWMA gain for alpha.
    #[serde(default = "default_dctcp_g")]
    pub g: f64,
    /// Initial alpha.
    #[serde(default = "default_one")]
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
fn default_dctcp_g() -> f64 {
    1.0 / 16.0
}
fn default_one() -> f64 {
    1.0
}
impl Default for DctcpConfig {
    fn default() -> Self {
        DctcpConfig { g: default_dctcp_g(), alpha_init: 1.0, init_cwnd: None, min_cwnd: None, ssthresh: None }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TransportConfig {
    #[serde(default)]
    pub cc: CcKind,
    /// Payload bytes per data packet.
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    /// Wire bytes per data packet beyond the payload.
    #[serde(default = "default_header")]
    pub header: u32,
    /// Wire bytes of an ACK or NACK.
    #[serde(default = "default_ack_size")]
    pub ack_size: u32,
    /// The receiver sends one ACK per this many data packets (and always on the
    /// last packet, on a CE mark when `ack_on_ce`, and on loss).
    #[serde(default = "default_ack_every")]
    pub ack_every: u32,
    #[serde(default = "default_true")]
    pub ack_on_ce: bool,
    /// With ack_every > 1: the longest a receiver holds a coalesced ACK.
    #[serde(default = "default_ack_delay")]
    pub ack_delay: Time,
    #[serde(default)]
    pub retransmit: Retransmit,
    /// Retransmission timeout; doubles on each consecutive timeout up to 64x.
    #[serde(default = "default_rto")]
    pub rto: Time,
    /// Selective mode: the receiver NACKs a hole once a packet this many
    /// positions past it arrives (tolerates reordering from spraying). Go-back-N
    /// NACKs every hole at once.
    #[serde(default = "default_nack_threshold")]
    pub nack_threshold: u32,
    /// Least time between two CNPs to the same flow (notification point).
    /// Default: 0 (a CNP for every marked packet, as the ns-3 RDMA simulator
    /// behaves) with the `hpcc` DCQCN profile, 50 us (the paper's N) otherwise.
    #[serde(default)]
    pub cnp_interval: Option<Time>,
    /// Least time between two NACKs for the same expected PSN.
    #[serde(default = "default_nack_interval")]
    pub nack_interval: Time,
    /// Data packets are ECN-capable.
    #[serde(default = "default_true")]
    pub ecn: bool,
    #[serde(default)]
    pub dctcp: DctcpConfig,
    #[serde(default)]
    pub swift: crate::cc::swift::SwiftConfig,
    #[serde(default)]
    pub dcqcn: crate::cc::dcqcn::DcqcnConfig,
    #[serde(default)]
    pub timely: crate::cc::timely::TimelyConfig,
    #[serde(default)]
    pub hpcc: crate::cc::hpcc::HpccConfig,
    #[serde(default)]
    pub nscc: crate::cc::nscc::NsccConfig,
    #[serde(default)]
    pub dcqcn_rev: crate::cc::dcqcn_rev::DcqcnRevConfig,
    #[serde(default)]
    pub mcc: crate::cc::mcc::MccConfig,
}
fn default_mtu() -> u32 {
    4096
}
fn default_header() -> u32 {
    64
}
fn default_ack_size() -> u32 {
    64
}
fn default_ack_every() -> u32 {
    1
}
fn default_ack_delay() -> Time {
    Time::us(5)
}
fn default_true() -> bool {
    true
}
fn default_rto() -> Time {
    Time::us(500)
}
fn default_nack_threshold() -> u32 {
    3
}
fn default_nack_interval() -> Time {
    Time::us(50)
}
impl Default for TransportConfig {
    fn default() -> Self {
        TransportConfig {
            cc: CcKind::None,
            mtu: default_mtu(),
            header: default_header(),
            ack_size: default_ack_size(),
            ack_every: default_ack_every(),
            ack_on_ce: true,
            ack_delay: default_ack_delay(),
            retransmit: Retransmit::GoBackN,
            rto: default_rto(),
            nack_threshold: default_nack_threshold(),
            cnp_interval: None,
            nack_interval: default_nack_interval(),
            ecn: true,
            dctcp: DctcpConfig::default(),
            swift: Default::default(),
            dcqcn: Default::default(),
            timely: Default::default(),
            hpcc: Default::default(),
            nscc: Default::default(),
            dcqcn_rev: Default::default(),
            mcc: Default::default(),
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MonitorConfig {
    #[serde(default = "default_window")]
    pub window: Time,
    /// Write links.csv (one row per directed link per window).
    #[serde(default = "default_true")]
    pub links: bool,
    /// Write cc.csv (congestion-control state per flow per window).
    #[serde(default)]
    pub cc: bool,
}
fn default_window() -> Time {
    Time::us(100)
}
impl Default for MonitorConfig {
    fn default() -> Self {
        MonitorConfig { window: default_window(), links: true, cc: false }
    }
}

/// A host named in the scenario: its name, or its index in the host list.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum HostRef {
    Index(i64),
    Name(String),
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowEntry {
    pub src: HostRef,
    pub dst: HostRef,
    pub size: Size,
    #[serde(default)]
    pub start: Time,
    #[serde(default)]
    pub name: Option<String>,
    /// Cap on the flow's sending rate (paced), below what its congestion control allows.
    #[serde(default)]
    pub rate: Option<crate::units::Rate>,
}
