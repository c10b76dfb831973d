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
    match fits(s, ports[out].data_bytes, s.shared_used, wire) {
        Some(extra) => {
            s.shared_used += extra;
            Admission::Admitted { send_xoff: false }
        }
        None => Admission::Refused,
    }
}

/// Would `wire` bytes fit the queue of `out` once `freed` of its bytes have
/// left it? Changes nothing (trimming the last queued packet asks first).
#[inline]
pub fn admits_after(s: &Switch, ports: &[Port], out: PortId, freed: u64, wire: u64) -> bool {
    let reserved = s.reserved;
    let q = ports[out].data_bytes;
    let rest = q - freed;
    fits(s, rest, s.shared_used - (over(q, reserved) - over(rest, reserved)), wire).is_some()
}

/// The shared bytes `wire` more bytes would take in a queue of `q` bytes,
/// with `shared_used` of the pool in use, if they fit.
#[inline]
fn fits(s: &Switch, q: u64, shared_used: u64, wire: u64) -> Option<u64> {
    let reserved = s.reserved;
    let extra = over(q + wire, reserved) - over(q, reserved);
    if extra == 0 {
        return Some(0);
    }
    let free = s.shared_size - shared_used;
    let limit = (s.dt_alpha * free as f64) as u64;
    (extra <= free && over(q + wire, reserved) <= limit).then_some(extra)
}

/// `wire` bytes leave the queue of `out`: shared bytes return to the pool
/// before reserved ones.
#[inline]
pub fn release(s: &mut Switch, ports: &mut [Port], _in_port: PortId, out: PortId, wire: u64) -> bool {
    let p = &mut ports[out];
    let q = p.data_bytes;
    s.shared_used -= over(q, s.reserved) - over(q - wire, s.reserved);
    p.data_bytes -= wire;
    false
}
