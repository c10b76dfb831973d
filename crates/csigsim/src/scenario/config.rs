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

// The struct is written out by the congestion-control registry so that it
// holds one section per algorithm; the derive keeps serde's unknown-key
// errors (`transport.<key>`, with line and column).
macro_rules! transport_config {
    ($( ($module:ident, $Variant:ident, $State:ident, $name:literal, [$($Config:ident)?], $desc:literal) ),* $(,)?) => {
        #[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
        #[serde(deny_unknown_fields)]
        pub struct TransportConfig {
            #[serde(default)]
            pub cc: crate::cc::CcKind,
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
            /// Default: the algorithm's (`cc::dcqcn::cnp_interval_ps`).
            #[serde(default)]
            pub cnp_interval: Option<Time>,
            /// Least time between two NACKs for the same expected PSN.
            #[serde(default = "default_nack_interval")]
            pub nack_interval: Time,
            /// Data packets are ECN-capable.
            #[serde(default = "default_true")]
            pub ecn: bool,
            /// One section per congestion control, `[transport.<module>]`.
            $( $(
                #[serde(default)]
                pub $module: crate::cc::$module::$Config,
            )? )*
        }

        impl Default for TransportConfig {
            fn default() -> Self {
                TransportConfig {
                    cc: Default::default(),
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
                    $( $( $module: <crate::cc::$module::$Config>::default(), )? )*
                }
            }
        }

        impl TransportConfig {
            /// The congestion-control part, as cc takes it.
            pub fn cc_config(&self) -> crate::cc::CcConfig {
                crate::cc::CcConfig {
                    kind: self.cc,
                    cnp_interval: self.cnp_interval,
                    $( $( $module: <crate::cc::$module::$Config>::clone(&self.$module), )? )*
                }
            }
        }
    };
}
crate::cc::registry!(transport_config);

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
