//! `[transport]`: the settings every flow shares, with one section per
//! congestion control (written out by the registry in cc/).

use crate::units::Time;
use serde::Deserialize;

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
            /// The sender flags (AR) the packet that fills its window, its last
            /// packet and every resend; the receiver acknowledges a flagged packet
            /// at once and again when its out-of-order data drains (htsim's UEC).
            #[serde(default)]
            pub ack_request: bool,
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
            /// How a sender picks each data packet's entropy: `flow` (one per
            /// flow), `oblivious`, `reps` or `csig` (per packet, docs/lb.md).
            #[serde(default)]
            pub entropy: crate::lb::EntropyMode,
            /// `[transport.reps]`: REPS's parameters (`evs` also for `oblivious`).
            #[serde(default)]
            pub reps: crate::lb::reps::RepsConfig,
            /// `[transport.csig_paths]`: the CSIG-guided choice's parameters.
            #[serde(default)]
            pub csig_paths: crate::lb::csig_paths::CsigPathsConfig,
            /// `[transport.connection]`: connections of several queue pairs
            /// (absent: every flow is its own queue pair with its own entropy).
            #[serde(default)]
            pub connection: Option<super::connection::ConnectionConfig>,
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
                    ack_request: false,
                    ack_delay: default_ack_delay(),
                    retransmit: Retransmit::GoBackN,
                    rto: default_rto(),
                    nack_threshold: default_nack_threshold(),
                    cnp_interval: None,
                    nack_interval: default_nack_interval(),
                    ecn: true,
                    connection: None,
                    entropy: Default::default(),
                    reps: Default::default(),
                    csig_paths: Default::default(),
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
