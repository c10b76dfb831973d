//! Congestion-control telemetry for `cc.csv`: per flow and monitor window,
//! the controller's state after the last ACK of the window (window, rate,
//! its congestion estimate), the range of the window, and the inputs the
//! ACKs brought (RTT, the fraction of packets that carried CE).

use crate::cc::CcMetrics;

/// One row of cc.csv.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcRow {
    pub window: u64,
    pub acks: u64,
    pub last: CcMetrics,
    pub cwnd_min: u64,
    pub cwnd_max: u64,
    pub rtt_sum_ps: f64,
    pub acked_pkts: u64,
    pub ce_pkts: u64,
}

#[derive(Clone, Debug, Default)]
pub struct FlowCcMon {
    cur: Option<CcRow>,
    pub rows: Vec<CcRow>,
}

impl FlowCcMon {
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn record(&mut self, now: u64, window_ps: u64, m: CcMetrics, rtt_ps: u64, acked: u32, ce: u32, held: &mut usize) {
        let w = now / window_ps;
        if self.cur.is_some_and(|r| r.window != w) {
            self.rows.push(self.cur.take().expect("checked"));
            *held += 1;
        }
        let r = self.cur.get_or_insert(CcRow {
            window: w,
            acks: 0,
            last: m,
            cwnd_min: m.cwnd_bytes,
            cwnd_max: m.cwnd_bytes,
            rtt_sum_ps: 0.0,
            acked_pkts: 0,
            ce_pkts: 0,
        });
        r.acks += 1;
        r.last = m;
        r.cwnd_min = r.cwnd_min.min(m.cwnd_bytes);
        r.cwnd_max = r.cwnd_max.max(m.cwnd_bytes);
        r.rtt_sum_ps += rtt_ps as f64;
        r.acked_pkts += acked as u64;
        r.ce_pkts += ce as u64;
    }

    /// Closes the current window if it is before window `upto`.
    pub fn close_before(&mut self, upto: u64, held: &mut usize) {
        if self.cur.is_some_and(|r| r.window < upto) {
            self.finish(held);
        }
    }

    pub fn finish(&mut self, held: &mut usize) {
        if let Some(r) = self.cur.take() {
            self.rows.push(r);
            *held += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_close_per_window_with_last_state_and_ranges() {
        let mut m = FlowCcMon::default();
        let s = |c| CcMetrics { cwnd_bytes: c, rate_bps: 7, alpha: 0.5 };
        let mut held = 0;
        m.record(10, 100, s(50), 1000, 1, 0, &mut held);
        m.record(20, 100, s(30), 3000, 2, 1, &mut held);
        m.record(150, 100, s(40), 2000, 1, 1, &mut held);
        m.finish(&mut held);
        assert_eq!(held, 2);
        assert_eq!(m.rows.len(), 2);
        let r = m.rows[0];
        assert_eq!((r.window, r.acks, r.last.cwnd_bytes, r.cwnd_min, r.cwnd_max), (0, 2, 30, 30, 50));
        assert_eq!((r.rtt_sum_ps, r.acked_pkts, r.ce_pkts), (4000.0, 3, 1));
        assert_eq!(m.rows[1].window, 1);
    }
}
