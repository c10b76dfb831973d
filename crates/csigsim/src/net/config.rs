//! `[switch]`: the configuration of every switch, and the rules that
//! resolve ECN marking per egress port (by switch, tier, port or link speed).

use crate::units::{Rate, Size, Time};
use serde::Deserialize;

pub use super::mode::SwitchMode;

pub use crate::lb::RoutingPolicy;

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

/// `[[switch.ecn_rule]]`: ECN settings for the egress ports a rule matches.
/// Rules apply in order over the default `switch.ecn`, so the last matching
/// rule wins; a rule with no matching key matches every switch port.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EcnRule {
    /// Only this switch (by name).
    #[serde(default)]
    pub switch: Option<String>,
    /// Only switches of this tier (0: the switches hosts attach to).
    #[serde(default)]
    pub tier: Option<u8>,
    /// Only this port index within the switch (in link order).
    #[serde(default)]
    pub port: Option<u32>,
    /// Only ports whose link runs at this rate.
    #[serde(default)]
    pub rate: Option<Rate>,
    /// Only ports facing down (towards hosts or a lower tier), or only up.
    #[serde(default)]
    pub down: Option<bool>,
    /// The marking of the matched ports.
    pub ecn: EcnConfig,
}

impl EcnRule {
    /// Does the rule match port `index` of a switch named `name` at `tier`,
    /// on a link of `rate_bps` facing `down`?
    pub fn matches(&self, name: &str, tier: u8, index: u32, rate_bps: u64, down: bool) -> bool {
        self.switch.as_deref().is_none_or(|n| n == name)
            && self.tier.is_none_or(|t| t == tier)
            && self.port.is_none_or(|p| p == index)
            && self.rate.is_none_or(|r| r.0 == rate_bps)
            && self.down.is_none_or(|d| d == down)
    }
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
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
    /// ECN marking of every switch egress port, unless a rule says otherwise.
    #[serde(default)]
    pub ecn: Option<EcnConfig>,
    /// Per-port ECN settings, applied in order over `ecn`.
    #[serde(default)]
    pub ecn_rule: Vec<EcnRule>,
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
            ecn_rule: Vec::new(),
            pfc: PfcConfig::default(),
            trim_size: default_trim_size(),
            ctrl_buffer: default_ctrl_buffer(),
        }
    }
}

