//! `lossy`: egress admission with a per-queue reservation and a dynamic
//! threshold (a queue may hold `dt_alpha` x the free shared buffer beyond its
//! reservation); a data packet that does not fit is dropped.

use super::{over, Admission, Refusal};
use crate::id::PortId;
use crate::net::{Port, Switch};

pub const ON_REFUSE: Refusal = Refusal::Drop;
pub const HEADROOM: bool = false;

/// May the egress queue `out` take `wire` more bytes? Takes them from the
/// shared pool if so.
#[inline]
pub fn admit(s: &mut Switch, ports: &mut [Port], _in_port: PortId, out: PortId, wire: u64) -> Admission {
    let reserved = s.cfg.reserved.0;
    let q = ports[out].data_bytes;
    let extra = over(q + wire, reserved) - over(q, reserved);
    if extra == 0 {
        return Admission::Admitted { send_xoff: false };
    }
    let free = s.shared_size - s.shared_used;
    let limit = (s.cfg.dt_alpha * free as f64) as u64;
    if extra <= free && over(q + wire, reserved) <= limit {
        s.shared_used += extra;
        Admission::Admitted { send_xoff: false }
    } else {
        Admission::Refused
    }
}

/// `wire` bytes leave the queue of `out`: shared bytes return to the pool
/// before reserved ones.
#[inline]
pub fn release(s: &mut Switch, ports: &mut [Port], _in_port: PortId, out: PortId, wire: u64) -> bool {
    let p = &mut ports[out];
    let q = p.data_bytes;
    s.shared_used -= over(q, s.cfg.reserved.0) - over(q - wire, s.cfg.reserved.0);
    p.data_bytes -= wire;
    false
}
