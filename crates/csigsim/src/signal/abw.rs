//! Available bandwidth of an egress port, measured over tumbling windows of a
//! fixed interval: ABW = C * (1 - busy / interval) of the last complete
//! window (busy time split exactly at window boundaries), optionally smoothed
//! by an EWMA per window. Before the first complete window, ABW = C.

#[derive(Clone, Debug, Default)]
pub struct AbwMeter {
    window: u64,
    busy: u64,
    /// End of the transmission in progress (its time past the window carries over).
    busy_end: u64,
    /// Smoothed available fraction of the last complete window(s); None before the first.
    avail: Option<f64>,
}

impl AbwMeter {
    #[inline]
    fn roll(&mut self, now: u64, interval: u64, ewma: f64) {
        let w = now / interval;
        if w == self.window {
            return;
        }
        let mut k = 0;
        while self.window < w && k < 64 {
            let sample = 1.0 - (self.busy.min(interval) as f64 / interval as f64);
            self.avail = Some(match self.avail {
                Some(a) => (1.0 - ewma) * a + ewma * sample,
                None => sample,
            });
            self.window += 1;
            let start = self.window * interval;
            self.busy = self.busy_end.saturating_sub(start).min(interval);
            k += 1;
        }
        if self.window < w {
            // Long idle stretch: every skipped window was idle.
            self.window = w;
            self.avail = Some(if self.busy_end > w * interval { self.avail.unwrap_or(1.0) } else { 1.0 });
            self.busy = self.busy_end.saturating_sub(w * interval).min(interval);
        }
    }

    /// A transmission over [start, end) (start may be after now for committed
    /// control packets; the port is busy from now to end without a gap).
    #[inline]
    pub fn on_tx(&mut self, now: u64, start: u64, end: u64, interval: u64, ewma: f64) {
        self.roll(now, interval, ewma);
        let wend = (self.window + 1) * interval;
        if start < wend {
            self.busy += end.min(wend) - start;
        }
        self.busy_end = self.busy_end.max(end);
    }

    /// Available fraction of the port (ABW/C) as of `now`.
    #[inline]
    pub fn available(&mut self, now: u64, interval: u64, ewma: f64) -> f64 {
        self.roll(now, interval, ewma);
        self.avail.unwrap_or(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixty_percent_load_leaves_forty_percent() {
        let mut m = AbwMeter::default();
        let interval = 1000;
        // 6 units busy out of every 10, back to back.
        let mut t = 0;
        while t < 10_000 {
            m.on_tx(t, t, t + 6, interval, 1.0);
            t += 10;
        }
        assert_eq!(m.available(1500, interval, 1.0), 0.4);
        assert!((m.available(9_999, interval, 1.0) - 0.4).abs() < 1e-12);
        // Idle for long: the port is fully available again.
        assert_eq!(m.available(50_000, interval, 1.0), 1.0);
    }

    #[test]
    fn a_transmission_spanning_windows_counts_in_each() {
        let mut m = AbwMeter::default();
        m.on_tx(900, 900, 1300, 1000, 1.0);
        assert_eq!(m.available(1000, 1000, 1.0), 0.9);
        assert_eq!(m.available(2000, 1000, 1.0), 0.7);
    }

    #[test]
    fn ewma_smooths_per_window() {
        let mut m = AbwMeter::default();
        m.on_tx(0, 0, 1000, 1000, 0.5); // window 0 fully busy
        assert_eq!(m.available(1000, 1000, 0.5), 0.0);
        assert_eq!(m.available(2000, 1000, 0.5), 0.5); // idle window 1 moves halfway
    }
}
