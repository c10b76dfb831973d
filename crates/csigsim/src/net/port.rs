//! One end of a full-duplex link. As an egress port it owns the transmitter
//! and the data queue towards its peer; as an ingress port it owns the PFC
//! accounting of the bytes that arrived through it and still sit in its
//! switch's buffer. The port's own operations (kick the transmitter, put a
//! packet on the wire, be paused) live here; what to send next is its
//! owner's business (a switch or a host NIC).

use crate::id::{NodeId, PktId, PortId};
use crate::monitor::Observers;
use crate::sim::{Ctx, Event};
use crate::units::tx_time_ps;
use super::rings::RingPos;

/// No ECN marking on this port ([`Port::marking`]).
pub const NO_MARKING: u16 = 0x7fff;
/// [`Port::marking`]: RED on this egress port happens as data leaves
/// (`ecn_at = "dequeue"`), not as it joins.
pub const AT_DEQUEUE: u16 = 0x8000;

/// [`Port::txdone`]: no `TxDone` pending.
pub(crate) const TXDONE_NONE: u32 = crate::sim::queue::NO_PLACE - 1;
/// [`Port::txdone`]: the pending `TxDone` is for an earlier time than
/// `busy_until`.
pub(crate) const TXDONE_LAGS: u32 = crate::sim::queue::NO_PLACE - 2;

/// Laid out hot first, aligned to a cache line: what forwarding a packet
/// reads and writes (the queue's ring position and bytes, the transmitter,
/// marking, the control class's limit) is the first line; the owner, the
/// bytes sent, PFC ingress accounting (with the XOFF sent) and ECP state
/// follow.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Port {
    /// Where the data queue's ring is in the network's `Rings`. Control
    /// packets never wait here: they are committed to the wire as soon as
    /// they arrive (see `Network::push_ctrl`).
    pub(crate) q: RingPos,
    /// The data class is paused by the peer's PFC.
    pub(crate) paused: bool,
    /// The marking profile of this egress port (an index into the network's
    /// table of resolved ECN settings), or [`NO_MARKING`]; with
    /// [`AT_DEQUEUE`] set when RED marks as data leaves.
    pub(crate) marking: u16,
    /// Switch ports: the switch's `ctrl_buffer` (saturated at 2^32 - 1
    /// bytes), copied here because a control packet committed to the port
    /// reads nothing else of the switch.
    pub(crate) ctrl_buffer: u32,
    /// The port at the other end of the link.
    pub(crate) peer: PortId,
    /// Bytes of trimmed headers committed since the last data packet started
    /// (switch ports): trimmed headers share the wire with data by bytes.
    pub(crate) trim_run: u32,
    /// The `TxDone` of this port in the event queue: [`TXDONE_NONE`];
    /// [`TXDONE_LAGS`], one for an earlier time than `busy_until` (what was
    /// committed behind the packet on the wire moved the end beyond the
    /// wheel's reach, [`Ctx::reschedule`], so it pops at the old end and is
    /// pushed again for the new one); or one for `busy_until`, and where
    /// the queue put it ([`crate::sim::queue::EventQueue::push_placed`]),
    /// for a move to find it at once.
    pub(crate) txdone: u32,
    pub(crate) data_bytes: u64,
    /// The transmitter is busy until this time.
    pub(crate) busy_until: u64,
    pub(crate) rate_bps: u64,
    pub(crate) delay_ps: u64,

    /// The node that owns the port: hosts first (0..hosts), then switches.
    pub(crate) node: NodeId,
    /// Wire bytes this switch port has sent in the whole run (INT's
    /// txBytes), counted only when the run carries INT.
    pub(crate) tx_total: u64,
    /// Ingress accounting (switch ports, pfc mode): bytes admitted through this
    /// port outside headroom, and in headroom.
    pub(crate) in_bytes: u64,
    pub(crate) in_headroom: u64,
    /// This port has sent XOFF upstream and not yet XON.
    pub(crate) xoff_sent: bool,
    /// PFC thresholds of this ingress port (`switch.pfc` and `pfc_rule`):
    /// XOFF at `pfc_alpha` x the free shared buffer, XON `xon_delta` below it.
    pub(crate) pfc_alpha: f64,
    pub(crate) xon_delta: u64,
    /// When the peer last resumed this port's data class (ECP root detection).
    pub(crate) last_pause_end: Option<u64>,
    /// ECP: which flows occupy the data queue, and with how many bytes.
    pub(crate) occupancy: crate::signal::ecp::Occupancy,
}

impl Port {
    pub(crate) fn new(node: NodeId, rate_bps: u64, delay_ps: u64) -> Port {
        Port {
            node,
            peer: PortId(0),
            rate_bps,
            delay_ps,
            busy_until: 0,
            txdone: TXDONE_NONE,
            paused: false,
            q: RingPos::EMPTY,
            data_bytes: 0,
            trim_run: 0,
            ctrl_buffer: u32::MAX,
            in_bytes: 0,
            in_headroom: 0,
            xoff_sent: false,
            pfc_alpha: 0.125,
            xon_delta: 3_000,
            tx_total: 0,
            last_pause_end: None,
            occupancy: Default::default(),
            marking: NO_MARKING,
        }
    }

    /// Bytes waiting in the data queue (not counting the packet on the wire).
    #[inline]
    pub fn queue_bytes(&self) -> u64 {
        self.data_bytes
    }

    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    pub fn delay_ps(&self) -> u64 {
        self.delay_ps
    }

    /// The node that owns this port, and the port at the other end.
    pub fn node(&self) -> NodeId {
        self.node
    }

    pub fn peer(&self) -> PortId {
        self.peer
    }

    /// PFC thresholds of this port as an ingress port: the XOFF alpha and
    /// the XON delta (bytes), as resolved from `switch.pfc` and `pfc_rule`.
    pub fn pfc_thresholds(&self) -> (f64, u64) {
        (self.pfc_alpha, self.xon_delta)
    }

    /// Whether the peer's PFC has paused this port's data class.
    pub fn paused(&self) -> bool {
        self.paused
    }

    /// Whether the owner should transmit now: true when the transmitter is
    /// idle; otherwise makes sure a `TxDone` will serve the port when the
    /// current packet is out.
    #[inline(always)]
    pub(crate) fn kick(&mut self, id: PortId, ctx: &mut Ctx) -> bool {
        if self.txdone != TXDONE_NONE {
            return false;
        }
        if self.busy_until <= ctx.now {
            true
        } else {
            self.txdone = ctx.push_placed(self.busy_until, Event::TxDone { port: id });
            false
        }
    }

    /// After a packet went out from a backlog: serve the backlog when it is out.
    #[inline]
    pub(crate) fn again_at(&mut self, id: PortId, ctx: &mut Ctx, end: u64) {
        self.txdone = ctx.push_placed(end, Event::TxDone { port: id });
    }

    /// The port's `TxDone` popped: true if it serves the port now; false if
    /// what was committed behind the packet that ended moved the port's
    /// end beyond the wheel's reach, and it is pushed again for that end.
    #[inline(always)]
    pub(crate) fn tx_done(&mut self, id: PortId, ctx: &mut Ctx) -> bool {
        if self.busy_until > ctx.now {
            self.txdone = ctx.push_placed(self.busy_until, Event::TxDone { port: id });
            return false;
        }
        self.txdone = TXDONE_NONE;
        true
    }

    /// Puts `pkt` on the wire at `start` (now, or later for a control packet
    /// committed behind the packet on the wire) and schedules its arrival at
    /// the far end. Returns the end of its serialization.
    #[inline(always)]
    pub(crate) fn start_tx(&mut self, id: PortId, ctx: &mut Ctx, obs: &mut Observers, pkt: PktId, start: u64) -> u64 {
        let wire = ctx.pkts.get(pkt).wire as u64;
        let end = start + tx_time_ps(wire, self.rate_bps);
        if self.txdone != TXDONE_NONE && self.txdone != TXDONE_LAGS {
            // Committed behind the packet on the wire (a control packet, or
            // data let go before trimmed headers): the pending `TxDone`
            // moves to the new end instead of popping at the old one.
            self.txdone = ctx.reschedule(self.busy_until, end, Event::TxDone { port: id }, self.txdone).unwrap_or(TXDONE_LAGS);
        }
        self.busy_until = end;
        obs.on_tx(ctx.now, id, &ctx.pkts, pkt, start, end);
        ctx.pkts.get_mut(pkt).hops += 1;
        ctx.stats.link_hops += 1;
        ctx.push(end + self.delay_ps, Event::Arrive { pkt, port: self.peer });
        end
    }

    /// PFC: the peer asked this port to stop (or resume) sending data.
    /// Returns true when the state changed to resumed (the owner kicks the port).
    pub(crate) fn set_paused(&mut self, id: PortId, now: u64, obs: &mut Observers, paused: bool) -> bool {
        if self.paused == paused {
            return false;
        }
        self.paused = paused;
        if !paused {
            self.last_pause_end = Some(now);
        }
        obs.on_pause(now, id, paused);
        !paused
    }
}

crate::id::index_by!(PortId => Port);

#[cfg(test)]
mod tests {
    use super::*;

    /// What forwarding reads and writes is the first line, as the struct's
    /// comment says.
    #[test]
    fn the_forwarding_fields_fill_the_first_line() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(align_of::<Port>(), 64);
        assert_eq!(offset_of!(Port, q), 0);
        assert_eq!(offset_of!(Port, delay_ps) + size_of::<u64>(), 64);
        assert_eq!(offset_of!(Port, node), 64);
    }
}
