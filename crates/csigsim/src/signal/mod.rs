//! In-band congestion signals: what switches write into packets and what
//! receivers reflect to senders.
//!
//! - CSIG ([`csig`]): one signal per tag (max delay, min available bandwidth,
//!   min ABW/C, max normalized queue depth) with the locator of the hop that
//!   wrote it; each switch egress compares and overwrites only when worse.
//! - Queue stamping ([`stamp`]): per-hop queue occupancy, quantized to n bits,
//!   aggregated along the path as MAX, SUM, SUM_SQU and IND.
//! - INT ([`int`]): per-hop records (time, tx bytes, queue, rate) for HPCC.
//! - Enhanced congestion point ([`ecp`]): ECN marking only at congestion roots.
//!
//! Signals live beside the packet arena, in slots parallel to the packets',
//! and cost nothing when a scenario does not enable them.

pub mod abw;
pub mod csig;
pub mod ecp;
pub mod egress;
pub mod int;
pub mod stamp;

use serde::Deserialize;

/// `[signals]`: which signals senders ask for and how switches produce them.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SignalsConfig {
    #[serde(default)]
    pub csig: Option<csig::CsigConfig>,
    #[serde(default)]
    pub stamp: Option<stamp::StampConfig>,
    #[serde(default)]
    pub int: Option<int::IntConfig>,
}

pub use crate::packet::{Signals, NO_TAG, NO_WRITER};

/// The CSIG signal of an ACK, decoded for the sender.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CsigSample {
    pub sig: csig::SignalType,
    /// Encoded value as carried.
    pub raw: u32,
    /// Decoded into natural units: bits/s (ABW), fraction (ABW/C), ps (Delay, nQD).
    pub value: f64,
    pub locator: u16,
    /// Egress port that wrote the value, or [`NO_WRITER`] (value never written).
    pub writer: u32,
}

/// The queue stamps of an ACK.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct StampSample {
    pub hops: u8,
    /// In the collector's unit (bytes, or ps for sojourn), quantized.
    pub max: u64,
    pub sum: u64,
    /// sqrt of the sum of squares (the Euclidean norm of the per-hop vector).
    pub sum_squ: f64,
    /// Some hop was above the indicator threshold.
    pub ind: bool,
}

/// The signal set-up of a validated scenario.
#[derive(Clone, Debug, Default)]
pub struct SignalSetup {
    pub csig: Option<csig::CsigSetup>,
    pub port_rules: Vec<csig::PortRule>,
    pub stamp: Option<stamp::StampSetup>,
    pub int: Option<int::IntConfig>,
}

impl SignalSetup {
    /// Resolves `[signals]` against the topology; errors name the key under `signals`.
    /// `max_rate` is the fastest link's rate; `is_switch` tells switch names.
    pub fn new(
        c: &SignalsConfig,
        max_rate: u64,
        is_switch: &dyn Fn(&str) -> bool,
        buffer: crate::units::Size,
    ) -> Result<SignalSetup, (String, String)> {
        let mut out = SignalSetup::default();
        if let Some(cc) = &c.csig {
            out.csig = Some(csig::CsigSetup::new(cc, max_rate).map_err(|(k, m)| (format!("csig.{k}"), m))?);
            for (i, r) in cc.port_action.iter().enumerate() {
                if let Some(name) = &r.switch {
                    if !is_switch(name) {
                        return Err((format!("csig.port_action[{i}].switch"), format!("unknown switch \"{name}\"")));
                    }
                }
                if r.switch.is_none() && r.tier.is_none() {
                    return Err((format!("csig.port_action[{i}]"), "a rule needs `switch` or `tier`".into()));
                }
            }
            out.port_rules = cc.port_action.clone();
        }
        if let Some(sc) = &c.stamp {
            out.stamp = Some(stamp::StampSetup::new(sc, buffer).map_err(|(k, m)| (format!("stamp.{k}"), m))?);
        }
        if let Some(ic) = &c.int {
            ic.validate().map_err(|(k, m)| (format!("int.{k}"), m))?;
            out.int = Some(*ic);
        }
        Ok(out)
    }

    pub fn any(&self) -> bool {
        self.csig.is_some() || self.stamp.is_some() || self.int.is_some()
    }

    /// The action of a switch port: the last matching rule wins.
    pub fn action(&self, switch_name: &str, tier: u8, port_index: u32) -> csig::PortAction {
        let mut a = csig::PortAction::Update;
        for r in &self.port_rules {
            let m = r.switch.as_deref().is_none_or(|n| n == switch_name)
                && r.tier.is_none_or(|t| t == tier)
                && r.port.is_none_or(|p| p == port_index);
            if m {
                a = r.action;
            }
        }
        a
    }
}

/// Per-port signal state of a running world.
#[derive(Debug, Default)]
pub struct SignalRuntime {
    /// Any signal is on (so the packet arena carries signal slots).
    pub on: bool,
    /// The CSIG type needs ABW meters.
    pub abw_on: bool,
    /// INT is on: switch ports count the bytes they send (its txBytes).
    pub int_on: bool,
    pub action: Vec<csig::PortAction>,
    pub locator: Vec<u16>,
    pub abw: Vec<abw::AbwMeter>,
    /// Wire bytes the CSIG tag and the INT stack add.
    pub tag_bytes: u32,
    pub int_bytes: u32,
}
