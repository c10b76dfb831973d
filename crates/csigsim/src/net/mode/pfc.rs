//! `pfc`: lossless. Per-ingress-port accounting: a reservation, the shared
//! pool up to the XOFF threshold (the port's alpha x the free shared buffer),
//! then the port's headroom. Crossing XOFF sends a PAUSE upstream; draining
//! below XOFF - the port's xon_delta with the headroom empty sends a RESUME.
//! Alpha and xon_delta are per ingress port: `switch.pfc`, then `pfc_rule`.

use super::{over, Admission, Refusal};
use crate::id::PortId;
use crate::net::{Port, Switch};

/// Only a headroom smaller than what the link can deliver after XOFF refuses.
pub const ON_REFUSE: Refusal = Refusal::Drop;
pub const HEADROOM: bool = true;

/// `wire` bytes arrive through `in_port`.
#[inline]
pub fn admit(s: &mut Switch, ports: &mut [Port], in_port: PortId, _out: PortId, wire: u64) -> Admission {
    let ip = &mut ports[in_port];
    let reserved = s.reserved;
    let alpha = ip.pfc_alpha;
    let q = ip.in_bytes;
    let extra = over(q + wire, reserved) - over(q, reserved);
    let free = s.shared_size - s.shared_used;
    let xoff = (alpha * free as f64) as u64;
    let fits_shared = extra == 0 || (extra <= free && over(q + wire, reserved) <= xoff && ip.in_headroom == 0);
    if fits_shared {
        ip.in_bytes += wire;
        s.shared_used += extra;
    } else if ip.in_headroom + wire <= s.headroom {
        ip.in_headroom += wire;
    } else {
        return Admission::Refused;
    }
    // XOFF: the port's shared use reached the threshold, or headroom is in use.
    let free = s.shared_size - s.shared_used;
    let xoff = (alpha * free as f64) as u64;
    let send_xoff = !ip.xoff_sent && (ip.in_headroom > 0 || over(ip.in_bytes, reserved) >= xoff);
    if send_xoff {
        ip.xoff_sent = true;
    }
    Admission::Admitted { send_xoff }
}

/// `wire` bytes that arrived through `in_port` leave the queue of `out`.
/// Returns true when `in_port` should send XON upstream.
#[inline]
pub fn release(s: &mut Switch, ports: &mut [Port], in_port: PortId, out: PortId, wire: u64) -> bool {
    ports[out].data_bytes -= wire;
    let ip = &mut ports[in_port];
    let reserved = s.reserved;
    let from_headroom = ip.in_headroom.min(wire);
    ip.in_headroom -= from_headroom;
    let rest = wire - from_headroom;
    let q = ip.in_bytes;
    s.shared_used -= over(q, reserved) - over(q - rest, reserved);
    ip.in_bytes -= rest;
    if ip.xoff_sent && ip.in_headroom == 0 {
        let free = s.shared_size - s.shared_used;
        let xoff = (ip.pfc_alpha * free as f64) as u64;
        let shared = over(ip.in_bytes, reserved);
        if shared == 0 || shared + ip.xon_delta <= xoff {
            ip.xoff_sent = false;
            return true;
        }
    }
    false
}
