//! In-band network telemetry for HPCC: each switch egress pushes a record
//! (departure time, cumulative bytes sent on the port, egress queue bytes,
//! port rate) while there is room for it; the receiver copies the stack into
//! its ACK. The sender reserves `header + per_hop * max_hops` bytes on every
//! data packet and the ACK carries the same (the layout of the HPCC artifact:
//! 2 + 8 * 5 = 42 bytes).

use serde::Deserialize;

pub use crate::packet::{IntHop, IntStack, MAX_HOPS};

/// `[signals.int]`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IntConfig {
    #[serde(default = "default_max_hops")]
    pub max_hops: u8,
    /// Bytes of the INT header.
    #[serde(default = "default_header")]
    pub header: u32,
    /// Bytes per hop record.
    #[serde(default = "default_per_hop")]
    pub per_hop: u32,
}

fn default_max_hops() -> u8 {
    5
}
fn default_header() -> u32 {
    2
}
fn default_per_hop() -> u32 {
    8
}

impl IntConfig {
    pub fn validate(&self) -> Result<(), (String, String)> {
        if self.max_hops == 0 || self.max_hops as usize > MAX_HOPS {
            return Err(("max_hops".into(), format!("max_hops must be 1 to {MAX_HOPS}, got {}", self.max_hops)));
        }
        Ok(())
    }
    /// Wire bytes INT adds to every data packet and ACK.
    pub fn overhead(&self) -> u32 {
        self.header + self.per_hop * self.max_hops as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_holds_at_most_max_hops() {
        let mut s = IntStack::default();
        for i in 0..7 {
            let pushed = s.push(IntHop { ts_ps: i, ..Default::default() }, 5);
            assert_eq!(pushed, i < 5);
        }
        assert_eq!(s.hops().len(), 5);
        assert_eq!(s.hops()[4].ts_ps, 4);
        assert_eq!(IntConfig { max_hops: 5, header: 2, per_hop: 8 }.overhead(), 42);
    }
}
