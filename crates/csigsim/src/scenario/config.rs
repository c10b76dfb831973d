//! The scenario file's schema. Every table refuses unknown keys so that a typo
//! is an error, not a silently ignored setting. Defaults are documented in
//! docs/scenario.md, next to each key.

use crate::workload::WorkloadEntry;
use crate::units::{Size, Time};
use serde::Deserialize;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    #[serde(default = "default_name")]
    pub name: String,
    #[serde(default = "default_seed", deserialize_with = "seed")]
    pub seed: u64,
    /// Stop the simulation at this time even if work remains.
    #[serde(default)]
    pub stop: Option<Time>,
    /// The compatibility profile whose keys filled the unset ones
    /// (`scenario::profile`); already applied to the text.
    #[serde(default)]
    pub profile: Option<String>,
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
    pub engine: EngineConfig,
    #[serde(default)]
    pub flow: Vec<FlowEntry>,
    #[serde(default)]
    pub workload: Vec<WorkloadEntry>,
}

/// `[engine]`: which rung of the fidelity ladder runs the scenario.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct EngineConfig {
    #[serde(default)]
    pub fidelity: Fidelity,
}

/// `engine.fidelity`.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Fidelity {
    /// Every packet through queues, congestion control and signals.
    #[default]
    Packet,
    /// Flows as fluids at their max-min fair rates (`crate::flowsim`).
    Flow,
}

impl Fidelity {
    pub fn name(self) -> &'static str {
        match self {
            Fidelity::Packet => "packet",
            Fidelity::Flow => "flow",
        }
    }
}

fn default_name() -> String {
    "unnamed".into()
}
fn default_seed() -> u64 {
    1
}

/// A seed: a TOML integer 0 .. 2^63-1, or a string of decimal digits for the
/// whole 0 .. 2^64-1 (TOML integers stop at 2^63-1).
fn seed<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    struct V;
    impl serde::de::Visitor<'_> for V {
        type Value = u64;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            write!(f, "an integer 0 .. 2^64-1 (above 2^63-1 written as a string of digits)")
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<u64, E> {
            u64::try_from(v).map_err(|_| E::custom(format!("seed must not be negative, got {v}")))
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<u64, E> {
            Ok(v)
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<u64, E> {
            match v.parse::<u64>() {
                Ok(n) if v.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
                _ => Err(E::custom(format!("a seed written as a string must be decimal digits 0 .. 18446744073709551615, got \"{v}\""))),
            }
        }
    }
    d.deserialize_any(V)
}

pub use crate::net::config::{EcnConfig, EcnMode, EcnRule, PfcConfig, RoutingPolicy, SwitchConfig, SwitchMode};

pub use crate::monitor::MonitorConfig;
pub use crate::transport::config::{Retransmit, TransportConfig};

pub use crate::net::topology::HostRef;

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
    /// Start only when these `[[flow]]` entries (by position) have arrived
    /// whole at their receivers, plus `gap`: a pipeline's dependencies.
    #[serde(default)]
    pub after: Vec<u32>,
    #[serde(default)]
    pub gap: Time,
}
