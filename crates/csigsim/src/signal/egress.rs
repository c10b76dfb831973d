//! The switch side of the signals: what an egress port writes into a data
//! packet when the packet joins its queue (enqueue-time stamps) and when it
//! leaves (CSIG compare-and-overwrite, dequeue-time stamps, INT), and the
//! available-bandwidth meter every transmission feeds.

use super::csig::{PortAction, SignalType};
use super::int::IntHop;
use super::stamp::Collector;
use super::{SignalRuntime, SignalSetup, NO_TAG};
use crate::id::{PktId, PortId};
use crate::packet::PacketArena;
use crate::sim::Ctx;

/// A data packet joins a switch egress queue that holds `queue_bytes` before it.
#[inline]
pub fn on_enqueue(setup: &SignalSetup, pkts: &mut PacketArena, pkt: PktId, queue_bytes: u64) {
    if let Some(st) = &setup.stamp {
        if st.collect == Collector::Enqueue {
            st.stamp(pkts.sig_mut(pkt), queue_bytes);
        }
    }
}

/// The egress port as the signals see it when a packet leaves.
#[derive(Clone, Copy, Debug)]
pub struct Egress {
    pub port: PortId,
    pub rate_bps: u64,
    /// Data bytes still queued behind the departing packet.
    pub queue_bytes: u64,
    /// Wire bytes the port sent before this packet (INT's txBytes; 0 when
    /// the run carries no INT, which alone reads it).
    pub tx_total: u64,
}

/// A data packet leaves switch port `e.port` now.
pub fn on_depart(setup: &SignalSetup, rt: &mut SignalRuntime, ctx: &mut Ctx, e: Egress, pkt: PktId) {
    let now = ctx.now;
    let pkts = &mut ctx.pkts;
    let sojourn = now - pkts.get(pkt).enq_ps;
    let (rate, queue, port) = (e.rate_bps, e.queue_bytes, e.port);
    if let Some(cs) = &setup.csig {
        let tagged = pkts.sig(pkt).csig_type != NO_TAG;
        match rt.action[port.ix()] {
            PortAction::Passthrough => {}
            PortAction::Strip if tagged => {
                let w = pkts.get(pkt).wire - rt.tag_bytes;
                pkts.set_wire(pkt, w);
                ctx.stats.bytes_stripped += rt.tag_bytes as u64;
                pkts.sig_mut(pkt).csig_type = NO_TAG;
            }
            PortAction::Strip => {}
            PortAction::Update if tagged => {
                let local = match cs.sig {
                    SignalType::Delay => sojourn as f64,
                    // Drain time of the queue the packet leaves behind, in ps.
                    SignalType::Nqd => queue as f64 * 8e12 / rate as f64,
                    SignalType::AbwC => rt.abw[port.ix()].available(now, cs.abw_interval_ps, cs.abw_ewma),
                    SignalType::Abw => rate as f64 * rt.abw[port.ix()].available(now, cs.abw_interval_ps, cs.abw_ewma),
                };
                let lm = rt.locator[port.ix()];
                cs.update(pkts.sig_mut(pkt), local, lm, port.0);
            }
            PortAction::Update => {}
        }
    }
    if let Some(st) = &setup.stamp {
        match st.collect {
            Collector::Enqueue => {}
            Collector::Dequeue => st.stamp(pkts.sig_mut(pkt), queue),
            Collector::Sojourn => st.stamp(pkts.sig_mut(pkt), sojourn),
        }
    }
    if let Some(ic) = setup.int {
        let wire = pkts.get(pkt).wire as u64;
        ic.push(pkts.int_mut(pkt), IntHop { ts_ps: now, tx_bytes: e.tx_total + wire, qlen_bytes: queue, rate_bps: rate });
    }
}

/// Switch port `port` transmits over [start, end), decided at `now`: its ABW meter counts it.
#[inline]
pub fn on_tx(setup: &SignalSetup, rt: &mut SignalRuntime, port: PortId, now: u64, start: u64, end: u64) {
    if let Some(cs) = &setup.csig {
        rt.abw[port.ix()].on_tx(now, start, end, cs.abw_interval_ps, cs.abw_ewma);
    }
}
