//! Observers: what watches a run without taking part in it. The forwarding
//! path and the transport report typed events to [`Observers`] and do not
//! know which observers are attached; a run without them pays a branch per
//! event and nothing else.
//!
//! - links ([`PortMon`]): windowed per-link counters for links.csv;
//! - signals ([`signals`]): the reflected signals per flow and window;
//! - cc ([`cc`]): congestion-control state per flow and window;
//! - capture ([`capture`]): a pcap of the packets a filter selects.
//!
//! Nothing here schedules events: each monitor rolls its window forward when
//! it is touched, and intervals that span a window boundary (a transmission,
//! a pause) are split exactly at the boundary. Only windows in which something
//! happened are stored; the writers fill the idle windows with zeros.

pub mod capture;
pub mod cc;
pub mod signals;

use crate::cc::CcMetrics;
use crate::id::{FlowId, PktId, PortId};
use crate::packet::{IntStack, PacketArena};
use crate::signal::{CsigSample, StampSample, NO_WRITER};
use crate::units::Time;
use serde::Deserialize;
use signals::{FlowSignalMon, Series};

/// `[monitor]`: which monitors a run attaches, and their window.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MonitorConfig {
    #[serde(default = "default_window")]
    pub window: Time,
    /// Write links.csv (one row per directed link per window).
    #[serde(default = "links_default")]
    pub links: bool,
    /// Write cc.csv (congestion-control state per flow per window).
    #[serde(default)]
    pub cc: bool,
    /// The progress watchdog: a run whose started flows deliver no data
    /// packet for this long (simulated time) stops as stalled; zero turns
    /// the watchdog off.
    #[serde(default = "default_stall")]
    pub stall: Time,
}
fn default_window() -> Time {
    Time::us(100)
}
/// Longer than the longest backed-off retransmission timeout at the default
/// `rto` (64 x 500 us = 32 ms), so a flow waiting out its timer is not called
/// stalled before it has retried a few times.
fn default_stall() -> Time {
    Time::ms(100)
}
impl Default for MonitorConfig {
    fn default() -> Self {
        MonitorConfig { window: default_window(), links: true, cc: false, stall: default_stall() }
    }
}

fn links_default() -> bool {
    true
}

/// Which observers a run has, and their state.
#[derive(Default)]
pub struct Observers {
    window_ps: u64,
    /// Per port, when links.csv is wanted.
    links: Option<Vec<PortMon>>,
    /// Per flow, when the run has any in-band signal.
    signals: Option<Vec<FlowSignalMon>>,
    /// Per flow, when cc.csv is wanted.
    cc: Option<Vec<cc::FlowCcMon>>,
    capture: Option<capture::Capture>,
}

/// What an ACK told its sender, for the signal and cc monitors.
#[derive(Clone, Copy, Debug)]
pub struct AckSeen<'a> {
    pub csig: Option<CsigSample>,
    pub stamps: Option<StampSample>,
    pub int: Option<&'a IntStack>,
    /// The controller's state after the ACK, the RTT sample, and the data
    /// packets the ACK covers and how many carried CE.
    pub metrics: CcMetrics,
    pub rtt_ps: u64,
    pub acked_pkts: u32,
    pub ce_pkts: u32,
}

impl Observers {
    /// `links`, `signals` and `cc` say which monitors to attach.
    pub fn new(window_ps: u64, ports: usize, flows: usize, links: bool, signals: bool, cc: bool) -> Observers {
        Observers {
            window_ps,
            links: links.then(|| vec![PortMon::default(); ports]),
            signals: signals.then(|| vec![FlowSignalMon::default(); flows]),
            cc: cc.then(|| vec![cc::FlowCcMon::default(); flows]),
            capture: None,
        }
    }

    pub fn window_ps(&self) -> u64 {
        self.window_ps
    }

    pub fn attach_capture(&mut self, c: capture::Capture) {
        self.capture = Some(c);
    }

    pub fn take_capture(&mut self) -> Option<capture::Capture> {
        self.capture.take()
    }

    /// `pkt` starts on the wire of `port` over [start, end), decided at `now`.
    #[inline(always)]
    pub fn on_tx(&mut self, now: u64, port: PortId, pkts: &PacketArena, pkt: PktId, start: u64, end: u64) {
        if let Some(l) = &mut self.links {
            l[port.ix()].on_tx(now, start, end, pkts.get(pkt).wire as u64, self.window_ps);
        }
        if let Some(c) = &mut self.capture {
            c.on_tx(port, pkts, pkt, start);
        }
    }

    /// The data queue of `port` now holds `queue_bytes`.
    #[inline]
    pub fn on_queue(&mut self, now: u64, port: PortId, queue_bytes: u64) {
        if let Some(l) = &mut self.links {
            l[port.ix()].on_queue(now, queue_bytes, self.window_ps);
        }
    }

    #[inline]
    fn count(&mut self, now: u64, port: PortId, field: fn(&mut LinkWindow) -> &mut u32) {
        if let Some(l) = &mut self.links {
            let m = &mut l[port.ix()];
            m.advance(now, self.window_ps);
            *field(&mut m.cur) += 1;
        }
    }

    /// A data packet was dropped at the egress `port`.
    pub fn on_drop(&mut self, now: u64, port: PortId) {
        self.count(now, port, |w| &mut w.drops);
    }

    /// A data packet was trimmed at the egress `port`.
    pub fn on_trim(&mut self, now: u64, port: PortId) {
        self.count(now, port, |w| &mut w.trims);
    }

    /// A data packet was ECN-marked joining the queue of `port`.
    #[inline]
    pub fn on_mark(&mut self, now: u64, port: PortId) {
        self.count(now, port, |w| &mut w.ecn_marks);
    }

    /// `port`'s data class was paused or resumed by its peer.
    pub fn on_pause(&mut self, now: u64, port: PortId, paused: bool) {
        if let Some(l) = &mut self.links {
            l[port.ix()].on_pause(now, paused, self.window_ps);
        }
    }

    /// An ACK reached the sender of `flow`.
    #[inline]
    pub fn on_ack(&mut self, now: u64, flow: FlowId, a: &AckSeen) {
        let w = self.window_ps;
        if let Some(cc) = &mut self.cc {
            cc[flow.ix()].record(now, w, a.metrics, a.rtt_ps, a.acked_pkts, a.ce_pkts);
        }
        let Some(sm) = &mut self.signals else { return };
        let m = &mut sm[flow.ix()];
        if let Some(c) = a.csig {
            let writer = (c.writer != NO_WRITER).then_some((c.writer, c.locator));
            m.record(now, w, Series::Csig, c.value, writer);
        }
        if let Some(st) = a.stamps {
            m.record(now, w, Series::StampMax, st.max as f64, None);
            m.record(now, w, Series::StampSum, st.sum as f64, None);
            m.record(now, w, Series::StampSumSqu, st.sum_squ, None);
            m.record(now, w, Series::StampInd, st.ind as u8 as f64, None);
        }
        if let Some(st) = a.int {
            let qmax = st.hops().iter().map(|h| h.qlen_bytes).max().unwrap_or(0);
            m.record(now, w, Series::IntHops, st.n as f64, None);
            m.record(now, w, Series::IntMaxQlen, qmax as f64, None);
        }
    }

    /// Closes every monitor's windows at the end of the run (`end`).
    pub fn finish(&mut self, end: u64) {
        if let Some(l) = &mut self.links {
            for m in l.iter_mut() {
                m.finish(end, self.window_ps);
            }
        }
        for m in self.signals.iter_mut().flatten() {
            m.finish();
        }
        for m in self.cc.iter_mut().flatten() {
            m.finish();
        }
    }

    /// The rows of links.csv per port, if the link monitor is attached.
    pub fn link_rows(&self) -> Option<impl Iterator<Item = &[LinkWindow]>> {
        self.links.as_ref().map(|l| l.iter().map(|m| &m.rows[..]))
    }

    /// The signal rows of one flow (empty without the signal monitor).
    pub fn signal_rows(&self, flow: FlowId) -> &[signals::SignalRow] {
        self.signals.as_ref().map_or(&[], |s| &s[flow.ix()].rows[..])
    }

    /// The cc rows of one flow (empty without the cc monitor).
    pub fn cc_rows(&self, flow: FlowId) -> &[cc::CcRow] {
        self.cc.as_ref().map_or(&[], |s| &s[flow.ix()].rows[..])
    }
}

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
