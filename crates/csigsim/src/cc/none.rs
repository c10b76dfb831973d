//! `cc = "none"`: send at line rate with no window. Loss recovery still works
//! (the transport retransmits), but nothing slows the sender down.

use super::{Algorithm, CongestionControl, FlowParams, NoConfig, NoReceiver};

#[derive(Clone, Debug)]
pub struct NoCc {
    line_rate_bps: u64,
}

impl NoCc {
    pub fn new(p: &FlowParams) -> Self {
        NoCc { line_rate_bps: p.line_rate_bps }
    }
}

impl CongestionControl for NoCc {
    fn cwnd(&self) -> u64 {
        u64::MAX
    }
    fn rate(&self) -> u64 {
        self.line_rate_bps
    }
}

impl Algorithm for NoCc {
    const NAME: &'static str = "none";
    const ABOUT: &'static str = "line rate, no window";
    const SECTION: bool = false;
    type Config = NoConfig;
    type Receiver = NoReceiver;
    fn build(_c: &NoConfig, p: &FlowParams) -> Self {
        NoCc::new(p)
    }
}
