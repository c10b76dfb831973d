//! `[switch]`: the configuration of every switch, and the rules that
//! resolve ECN marking and PFC thresholds per port (by switch, tier, port,
//! link speed or direction).

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
        selects(&self.switch, self.tier, self.port, self.rate, self.down, (name, tier, index, rate_bps, down))
    }
}

/// The selectors shared by `ecn_rule` and `pfc_rule`: an absent selector
/// matches every port.
fn selects(
    switch: &Option<String>,
    tier: Option<u8>,
    port: Option<u32>,
    rate: Option<Rate>,
    down: Option<bool>,
    (name, t, index, rate_bps, d): (&str, u8, u32, u64, bool),
) -> bool {
    switch.as_deref().is_none_or(|n| n == name)
        && tier.is_none_or(|x| x == t)
        && port.is_none_or(|p| p == index)
        && rate.is_none_or(|r| r.0 == rate_bps)
        && down.is_none_or(|x| x == d)
}

/// `[[switch.pfc_rule]]`: PFC thresholds for the ingress ports a rule
/// matches (ns-3's per-link-speed PFC alpha). Rules apply in order over
/// `switch.pfc`; a key a rule leaves out keeps the value from `switch.pfc`
/// or an earlier matching rule.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PfcRule {
    #[serde(default)]
    pub switch: Option<String>,
    #[serde(default)]
    pub tier: Option<u8>,
    #[serde(default)]
    pub port: Option<u32>,
    #[serde(default)]
    pub rate: Option<Rate>,
    #[serde(default)]
    pub down: Option<bool>,
    /// The thresholds of the matched ports.
    pub pfc: PfcThresholds,
}

/// What a `pfc_rule` may set: the XOFF and XON thresholds of an ingress port.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct PfcThresholds {
    #[serde(default)]
    pub alpha: Option<f64>,
    #[serde(default)]
    pub xon_delta: Option<Size>,
}

impl PfcRule {
    /// Does the rule match port `index` of a switch named `name` at `tier`,
    /// on a link of `rate_bps` facing `down`?
    pub fn matches(&self, name: &str, tier: u8, index: u32, rate_bps: u64, down: bool) -> bool {
        selects(&self.switch, self.tier, self.port, self.rate, self.down, (name, tier, index, rate_bps, down))
    }
}

/// `switch.ecn_at`: when a data packet meets RED.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EcnAt {
    /// As it joins the egress queue, against the bytes queued ahead of it
    /// (the DCTCP paper's switch).
    Enqueue,
    /// As it leaves the egress queue, against the bytes queued behind it
    /// (ns-3 `SwitchNode::SwitchNotifyDequeue`, htsim `CompositeQueue`).
    Dequeue,
}

impl EcnAt {
    /// RED ports without `switch.ecn_at`: at dequeue, where both reference
    /// simulators (ns-3's RDMA simulator and htsim) mark (docs/model.md).
    pub const DEFAULT: EcnAt = EcnAt::Dequeue;
}

/// `switch.control_queue`: where ACKs, NACKs and CNPs wait at a switch port.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ControlQueue {
    /// Their own strict-priority queue, ahead of data (htsim; ns-3 with
    /// `ACK_HIGH_PRIO 1`).
    #[default]
    Priority,
    /// The data queue, in arrival order: admitted, paused and released like
    /// data (ns-3 with `ACK_HIGH_PRIO 0`).
    Shared,
}

/// `switch.header_service`: how an egress port serves trimmed headers
/// while data waits in its queue.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum HeaderService {
    /// Headers and waiting data take turns by bytes: once the headers sent
    /// ahead of the data at the head of the queue exceed `header_weight` x
    /// its bytes, it goes first, so a flood of headers cannot starve data.
    #[default]
    Weighted,
    /// Headers always go ahead of waiting data (htsim's header queue,
    /// weighted 100000:1 by packets, more headers than its queue holds).
    Strict,
}

/// `switch.trim_victim`: which packet a trimming switch cuts when a data
/// packet does not fit.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum TrimVictim {
    /// The packet that does not fit.
    #[default]
    Arriving,
    /// The last data packet in the egress queue, making room for the
    /// arriving one (when that makes room; otherwise the arriving one).
    LastQueued,
    /// A fair coin per refusal picks `last_queued` or `arriving` (htsim
    /// `CompositeQueue::receivePacket`).
    Either,
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
    /// Per-port PFC thresholds, applied in order over `pfc`.
    #[serde(default)]
    pub pfc_rule: Vec<PfcRule>,
    /// When a data packet meets RED: as it joins or as it leaves the queue
    /// (unset: [`EcnAt::DEFAULT`]). ECP ports decide at enqueue.
    #[serde(default)]
    pub ecn_at: Option<EcnAt>,
    /// Whether ACKs, NACKs and CNPs jump the data queue or wait in it.
    #[serde(default)]
    pub control_queue: ControlQueue,
    /// Which packet a trimming switch cuts when its queue is full.
    #[serde(default)]
    pub trim_victim: TrimVictim,
    /// Bytes a trimmed packet keeps (its headers).
    #[serde(default = "default_trim_size")]
    pub trim_size: u32,
    /// How trimmed headers share a port with waiting data.
    #[serde(default)]
    pub header_service: HeaderService,
    /// `weighted`: bytes of headers a port sends ahead of waiting data per
    /// byte of the data packet at the head of its queue (unset: 1).
    #[serde(default)]
    pub header_weight: Option<u32>,
    /// Control-class queue per egress port (ACKs, NACKs, trimmed headers);
    /// beyond it control packets are dropped. PAUSE frames are never dropped.
    #[serde(default = "default_ctrl_buffer")]
    pub ctrl_buffer: Size,
}
impl SwitchConfig {
    /// Checks the switch-model keys against each other and the topology's
    /// switch names: the key at fault and what is wrong.
    pub fn check_models(&self, switch_names: &[&str]) -> Result<(), (String, String)> {
        for (i, r) in self.pfc_rule.iter().enumerate() {
            let key = format!("switch.pfc_rule[{i}]");
            if self.mode != SwitchMode::Pfc {
                return Err((key, format!("pfc_rule sets PFC thresholds, but switch.mode is \"{}\", not \"pfc\"", self.mode.name())));
            }
            if let Some(name) = &r.switch {
                if !switch_names.contains(&name.as_str()) {
                    return Err((format!("{key}.switch"), format!("unknown switch \"{name}\"")));
                }
            }
            if let Some(a) = r.pfc.alpha {
                if !(a > 0.0 && a.is_finite()) {
                    return Err((format!("{key}.pfc.alpha"), format!("alpha must be above zero, got {a}")));
                }
            }
        }
        if self.ecn_at == Some(EcnAt::Dequeue) {
            let ecp = self.ecn.iter().chain(self.ecn_rule.iter().map(|r| &r.ecn)).any(|e| e.mode == EcnMode::Ecp);
            if ecp {
                return Err((
                    "switch.ecn_at".into(),
                    "ecn_at = \"dequeue\" applies to RED marking, but a port marks with ecn mode \"ecp\", which decides at enqueue (where its root and fair-share tests are defined)".into(),
                ));
            }
        }
        match (self.header_service, self.header_weight) {
            (_, Some(0)) => return Err(("switch.header_weight".into(), "header_weight must be at least 1".into())),
            (HeaderService::Strict, Some(_)) => {
                return Err((
                    "switch.header_weight".into(),
                    "header_weight applies to header_service = \"weighted\", but header_service is \"strict\"".into(),
                ))
            }
            _ => {}
        }
        if self.trim_victim != TrimVictim::Arriving && self.mode != SwitchMode::Trim {
            return Err((
                "switch.trim_victim".into(),
                format!("trim_victim chooses the packet a trimming switch cuts, but switch.mode is \"{}\", not \"trim\"", self.mode.name()),
            ));
        }
        Ok(())
    }
}

impl SwitchConfig {
    /// Bytes of headers that may go ahead of waiting data per byte of the
    /// data packet at the head of the queue; None: no limit (`strict`).
    pub fn header_allowance(&self) -> Option<u64> {
        match self.header_service {
            HeaderService::Weighted => Some(self.header_weight.unwrap_or(1) as u64),
            HeaderService::Strict => None,
        }
    }
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
            pfc_rule: Vec::new(),
            ecn_at: None,
            control_queue: ControlQueue::Priority,
            trim_victim: TrimVictim::Arriving,
            trim_size: default_trim_size(),
            header_service: HeaderService::Weighted,
            header_weight: None,
            ctrl_buffer: default_ctrl_buffer(),
        }
    }
}

