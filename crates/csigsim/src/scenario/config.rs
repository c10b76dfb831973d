//! The scenario file's schema. Every table refuses unknown keys so that a typo
//! is an error, not a silently ignored setting. Defaults are documented in
//! docs/scenario.md, next to each key.

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

pub use crate::net::config::{EcnConfig, EcnMode, EcnRule, PfcConfig, RoutingPolicy, SwitchConfig, SwitchMode};

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

#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum WorkloadEntry {
    /// Every host sends one flow to a distinct host (a random derangement).
    Permutation {
        size: Size,
        #[serde(default)]
        start: Time,
        /// Restrict to these hosts (default: all).
        #[serde(default)]
        hosts: Option<Vec<HostRef>>,
        #[serde(default)]
        name: Option<String>,
    },
    /// N senders to one receiver.
    Incast {
        receiver: HostRef,
        /// Sender hosts; default every other host.
        #[serde(default)]
        senders: Option<Vec<HostRef>>,
        /// Instead of a list: this many senders, the hosts after the receiver in index order.
        #[serde(default)]
        count: Option<u32>,
        size: Size,
        #[serde(default)]
        start: Time,
        #[serde(default)]
        name: Option<String>,
    },
    /// Every host sends to every other host.
    AllToAll {
        size: Size,
        #[serde(default)]
        start: Time,
        #[serde(default)]
        hosts: Option<Vec<HostRef>>,
        #[serde(default)]
        name: Option<String>,
    },
    /// Flows from a CSV file with a header `src,dst,size,start` (size in
    /// bytes or with a unit, start with a unit), relative to the scenario file.
    Trace {
        file: String,
    },
}
