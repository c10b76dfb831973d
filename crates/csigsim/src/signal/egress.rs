//! The switch side of the signals: what an egress port writes into a data
//! packet when the packet joins its queue (enqueue-time stamps) and when it
//! leaves (CSIG compare-and-overwrite, dequeue-time stamps, INT).

use super::csig::{PortAction, SignalType};
use super::int::IntHop;
use super::stamp::Collector;
use super::NO_TAG;
use crate::sim::World;

impl World {
    /// A data packet joins the queue of switch port `port`, which holds `queue_bytes` before it.
    #[inline]
    pub(crate) fn signal_enqueue(&mut self, pkt: u32, queue_bytes: u64) {
        if let Some(st) = &self.sc.signals.stamp {
            if st.collect == Collector::Enqueue {
                st.stamp(self.pkts.sig_mut(pkt), queue_bytes);
            }
        }
    }

    /// A data packet leaves switch port `port` now.
    pub(crate) fn signal_egress(&mut self, port: u32, pkt: u32) {
        let now = self.now;
        let sojourn = now - self.pkts.get(pkt).enq_ps;
        let p = &self.ports[port as usize];
        let (rate, queue) = (p.rate_bps, p.data_bytes);
        if let Some(cs) = &self.sc.signals.csig {
            let tagged = self.pkts.sig(pkt).csig_type != NO_TAG;
            match self.sig.action[port as usize] {
                PortAction::Passthrough => {}
                PortAction::Strip if tagged => {
                    let w = self.pkts.get(pkt).wire - self.sig.tag_bytes;
                    self.pkts.set_wire(pkt, w);
                    self.stats.bytes_stripped += self.sig.tag_bytes as u64;
                    self.pkts.sig_mut(pkt).csig_type = NO_TAG;
                }
                PortAction::Strip => {}
                PortAction::Update if tagged => {
                    let local = match cs.sig {
                        SignalType::Delay => sojourn as f64,
                        // Drain time of the queue the packet leaves behind, in ps.
                        SignalType::Nqd => queue as f64 * 8e12 / rate as f64,
                        SignalType::AbwC => self.sig.abw[port as usize].available(now, cs.abw_interval_ps, cs.abw_ewma),
                        SignalType::Abw => {
                            rate as f64 * self.sig.abw[port as usize].available(now, cs.abw_interval_ps, cs.abw_ewma)
                        }
                    };
                    let lm = self.sig.locator[port as usize];
                    cs.update(self.pkts.sig_mut(pkt), local, lm, port);
                }
                PortAction::Update => {}
            }
        }
        if let Some(st) = &self.sc.signals.stamp {
            match st.collect {
                Collector::Enqueue => {}
                Collector::Dequeue => st.stamp(self.pkts.sig_mut(pkt), queue),
                Collector::Sojourn => st.stamp(self.pkts.sig_mut(pkt), sojourn),
            }
        }
        if let Some(ic) = self.sc.signals.int {
            let wire = self.pkts.get(pkt).wire as u64;
            let hop = IntHop { ts_ps: now, tx_bytes: self.ports[port as usize].tx_total + wire, qlen_bytes: queue, rate_bps: rate };
            self.pkts.int_mut(pkt).push(hop, ic.max_hops);
        }
    }
}
