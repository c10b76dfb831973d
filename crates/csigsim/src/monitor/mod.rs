//! Windowed per-link counters. Nothing here schedules events: each port rolls
//! its window forward when it is touched, and intervals that span a window
//! boundary (a transmission, a pause) are split exactly at the boundary.
//! Only windows in which something happened are stored; the writers fill the
//! idle windows with zeros.

pub mod cc;
pub mod signals;

/// One directed link's counters for one monitor window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkWindow {
    pub window: u32,
    /// Wire bytes of packets whose transmission started in the window.
    pub tx_bytes: u64,
    /// Picoseconds the transmitter was busy within the window.
    pub busy_ps: u64,
    /// Largest egress queue (bytes waiting, not counting the packet on the wire).
    pub max_queue_bytes: u64,
    pub drops: u32,
    pub ecn_marks: u32,
    pub trims: u32,
    /// Picoseconds the data class was paused by PFC within the window.
    pub pause_ps: u64,
}

impl LinkWindow {
    fn is_idle(&self) -> bool {
        self.tx_bytes == 0 && self.busy_ps == 0 && self.max_queue_bytes == 0 && self.drops == 0 && self.ecn_marks == 0 && self.trims == 0 && self.pause_ps == 0
    }
}

#[derive(Clone, Debug, Default)]
pub struct PortMon {
    pub cur: LinkWindow,
    /// End of the transmission in progress; its time past the current window is counted at roll.
    busy_end: u64,
    /// Start of the current pause, if paused.
    pause_since: Option<u64>,
    /// Queue level now, carried into the next window's maximum.
    queue_now: u64,
    pub rows: Vec<LinkWindow>,
}

impl PortMon {
    /// Rolls windows forward so that the current window contains `now`.
    #[inline]
    pub fn advance(&mut self, now: u64, window_ps: u64) {
        let w = (now / window_ps) as u32;
        if w != self.cur.window {
            self.roll(w, window_ps);
        }
    }

    #[cold]
    fn roll(&mut self, to: u32, window_ps: u64) {
        while self.cur.window < to {
            let wend = (self.cur.window as u64 + 1) * window_ps;
            if let Some(since) = self.pause_since {
                self.cur.pause_ps += wend - since.max(wend - window_ps);
            }
            if !self.cur.is_idle() {
                self.rows.push(self.cur);
            }
            let mut next = self.cur.window + 1;
            // Runs of idle windows are skipped in one step.
            if self.queue_now == 0 && self.pause_since.is_none() && self.busy_end <= wend && next < to {
                next = to;
            }
            self.cur = LinkWindow { window: next, max_queue_bytes: self.queue_now, ..Default::default() };
            // The transmission in progress carries into the new window.
            let nstart = next as u64 * window_ps;
            if self.busy_end > nstart {
                self.cur.busy_ps += self.busy_end.min(nstart + window_ps) - nstart;
            }
        }
    }

    /// A transmission of `bytes` over [start, end), decided at `now`. A start
    /// after `now` is a control packet committed behind the packet on the wire,
    /// so the busy time from `now` to `end` is contiguous.
    #[inline]
    pub fn on_tx(&mut self, now: u64, start: u64, end: u64, bytes: u64, window_ps: u64) {
        self.advance(now, window_ps);
        let wend = (self.cur.window as u64 + 1) * window_ps;
        self.cur.tx_bytes += bytes;
        if start < wend {
            self.cur.busy_ps += end.min(wend) - start;
        }
        self.busy_end = end;
    }

    #[inline]
    pub fn on_queue(&mut self, now: u64, queue_bytes: u64, window_ps: u64) {
        self.advance(now, window_ps);
        self.queue_now = queue_bytes;
        if queue_bytes > self.cur.max_queue_bytes {
            self.cur.max_queue_bytes = queue_bytes;
        }
    }

    pub fn on_pause(&mut self, now: u64, paused: bool, window_ps: u64) {
        self.advance(now, window_ps);
        match (paused, self.pause_since) {
            (true, None) => self.pause_since = Some(now),
            (false, Some(since)) => {
                self.cur.pause_ps += now - since.max(self.cur.window as u64 * window_ps);
                self.pause_since = None;
            }
            _ => {}
        }
    }

    /// Closes the window containing `end` (the end of the run).
    pub fn finish(&mut self, end: u64, window_ps: u64) {
        self.advance(end, window_ps);
        let wstart = self.cur.window as u64 * window_ps;
        if let Some(since) = self.pause_since {
            self.cur.pause_ps += end - since.max(wstart);
            self.pause_since = Some(end);
        }
        if !self.cur.is_idle() {
            self.rows.push(self.cur);
        }
        self.cur = LinkWindow { window: self.cur.window + 1, ..Default::default() };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_time_splits_at_window_boundaries() {
        let mut m = PortMon::default();
        // window 100: tx over [90, 130) and [130, 250).
        m.on_tx(90, 90, 130, 10, 100);
        m.on_tx(130, 130, 250, 30, 100);
        m.finish(250, 100);
        let busy: Vec<(u32, u64, u64)> = m.rows.iter().map(|r| (r.window, r.busy_ps, r.tx_bytes)).collect();
        assert_eq!(busy, vec![(0, 10, 10), (1, 100, 30), (2, 50, 0)]);
    }

    #[test]
    fn pause_time_splits_and_idle_windows_are_skipped() {
        let mut m = PortMon::default();
        m.on_pause(50, true, 100);
        m.on_pause(320, false, 100);
        m.on_tx(1000, 1000, 1010, 5, 100);
        m.finish(1010, 100);
        let p: Vec<(u32, u64)> = m.rows.iter().map(|r| (r.window, r.pause_ps)).collect();
        assert_eq!(p, vec![(0, 50), (1, 100), (2, 100), (3, 20), (10, 0)]);
    }

    #[test]
    fn queue_maximum_carries_into_following_windows() {
        let mut m = PortMon::default();
        m.on_queue(10, 500, 100);
        m.on_queue(20, 800, 100);
        m.on_queue(250, 0, 100);
        m.finish(250, 100);
        let q: Vec<(u32, u64)> = m.rows.iter().map(|r| (r.window, r.max_queue_bytes)).collect();
        assert_eq!(q, vec![(0, 800), (1, 800), (2, 800)]);
    }
}
