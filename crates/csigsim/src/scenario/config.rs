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
}
