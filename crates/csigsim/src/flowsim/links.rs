//! links.csv at flow level: each link's rate is constant between two
//! changes, so a window's bytes and busy time are the rate integrated over
//! the part of the window it held. Queues, drops, marks, trims and pauses
//! are not modelled: their counters stay 0, and links.csv leaves their
//! cells empty at flow level (`LinkTable::queues`).

use crate::monitor::LinkWindow;

/// One link's rate since its last change, and its closed rows.
#[derive(Clone, Debug, Default)]
struct Meter {
    rate: f64,
    since: u64,
    /// The window being filled: its index, bytes and busy picoseconds.
    cur: Option<(u64, f64, f64)>,
    rows: Vec<LinkWindow>,
}

/// Every link's meter.
#[derive(Debug)]
pub struct LinkMeters {
    window_ps: u64,
    m: Vec<Meter>,
}

impl Meter {
    fn close(&mut self) {
        if let Some((w, bytes, busy)) = self.cur.take() {
            let r = LinkWindow { window: w, windows: 1, tx_bytes: bytes.round() as u64, busy_ps: busy.round() as u64, ..Default::default() };
            if r.tx_bytes > 0 || r.busy_ps > 0 {
                self.rows.push(r);
            }
        }
    }

    /// Adds `bytes` and `busy` to window `w`.
    fn add(&mut self, w: u64, bytes: f64, busy: f64) {
        match &mut self.cur {
            Some((cw, b, u)) if *cw == w => {
                *b += bytes;
                *u += busy;
            }
            _ => {
                self.close();
                self.cur = Some((w, bytes, busy));
            }
        }
    }

    /// Integrates the rate over [since, t) at capacity `cap`.
    fn integrate(&mut self, t: u64, cap: f64, window_ps: u64) {
        let (a, b) = (self.since, t);
        self.since = t;
        if b <= a || self.rate <= 0.0 {
            return;
        }
        let frac = if cap > 0.0 { (self.rate / cap).min(1.0) } else { 1.0 };
        let bytes_per_ps = self.rate / 8e12;
        let (wa, wb) = (a / window_ps, (b - 1) / window_ps);
        if wa == wb {
            let d = (b - a) as f64;
            self.add(wa, d * bytes_per_ps, d * frac);
            return;
        }
        let d = ((wa + 1) * window_ps - a) as f64;
        self.add(wa, d * bytes_per_ps, d * frac);
        if wb > wa + 1 {
            // Whole windows at one rate: one row for the run of them.
            self.close();
            let full = window_ps as f64;
            let r = LinkWindow {
                window: wa + 1,
                windows: wb - wa - 1,
                tx_bytes: (full * bytes_per_ps).round() as u64,
                busy_ps: (full * frac).round() as u64,
                ..Default::default()
            };
            if r.tx_bytes > 0 || r.busy_ps > 0 {
                self.rows.push(r);
            }
        }
        let d = (b - wb * window_ps) as f64;
        self.add(wb, d * bytes_per_ps, d * frac);
    }
}

impl LinkMeters {
    pub fn new(links: usize, window_ps: u64) -> LinkMeters {
        LinkMeters { window_ps, m: vec![Meter::default(); links] }
    }

    /// Link `l` carries `rate` bits/s from `now` (capacity `cap`).
    pub fn set(&mut self, l: u32, now: u64, rate: f64, cap: f64) {
        let m = &mut self.m[l as usize];
        if m.rate == rate {
            return;
        }
        m.integrate(now, cap, self.window_ps);
        m.rate = rate;
    }

    /// Closes every meter at `end` (capacities `cap`) and answers each
    /// link's rows.
    pub fn finish(mut self, end: u64, cap: &[f64]) -> Vec<Vec<LinkWindow>> {
        let w = self.window_ps;
        self.m
            .iter_mut()
            .enumerate()
            .map(|(l, m)| {
                m.integrate(end, cap[l], w);
                m.close();
                std::mem::take(&mut m.rows)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Half the capacity over [50, 350) with windows of 100: windows 0 and
    /// 3 half full in time, 1 and 2 one run of two rows.
    #[test]
    fn a_rate_is_integrated_window_by_window() {
        let mut m = LinkMeters::new(1, 100);
        m.set(0, 50, 4e12, 8e12);
        let rows = m.finish(350, &[8e12]).remove(0);
        let got: Vec<(u64, u64, u64, u64)> = rows.iter().map(|r| (r.window, r.windows, r.tx_bytes, r.busy_ps)).collect();
        assert_eq!(got, vec![(0, 1, 25, 25), (1, 2, 50, 50), (3, 1, 25, 25)]);
    }
}
