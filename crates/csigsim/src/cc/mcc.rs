//! MCC: message-level congestion control for sprayed traffic.
//! (Skeleton; the control law is being written.)

use serde::Deserialize;

use super::{CongestionControl, FlowParams};

/// `[transport.mcc]`.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MccConfig {}

impl MccConfig {
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct Mcc {
    cwnd: u64,
    line: u64,
}

impl Mcc {
    pub fn new(_c: &MccConfig, p: &FlowParams) -> Self {
        Mcc { cwnd: p.bdp(), line: p.line_rate_bps }
    }
}

impl CongestionControl for Mcc {
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn rate(&self) -> u64 {
        self.line
    }
}
