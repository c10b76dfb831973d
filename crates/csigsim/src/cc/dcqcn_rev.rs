//! DCQCN-Rev (placeholder while being written).
use serde::Deserialize;

use super::dcqcn::{Dcqcn, DcqcnConfig};
use super::{CongestionControl, FlowParams};

#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DcqcnRevConfig {}

impl DcqcnRevConfig {
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct DcqcnRev {
    rp: Dcqcn,
}

impl DcqcnRev {
    pub fn new(d: &DcqcnConfig, _c: &DcqcnRevConfig, p: &FlowParams) -> Self {
        DcqcnRev { rp: Dcqcn::new(d, p) }
    }
}

impl CongestionControl for DcqcnRev {
    fn cwnd(&self) -> u64 {
        self.rp.cwnd()
    }
    fn rate(&self) -> u64 {
        self.rp.rate()
    }
}
