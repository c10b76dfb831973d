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
pub mod jobs;
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
    /// links.csv has a row for every link in every window, idle or not;
    /// false leaves out the rows of a link's windows in which nothing
    /// happened (and nothing stood: no queue, pause or transmission).
    #[serde(default = "links_default")]
    pub idle_rows: bool,
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
        MonitorConfig { window: default_window(), links: true, idle_rows: true, cc: false, stall: default_stall() }
    }
}

fn links_default() -> bool {
    true
}

/// Where the monitors' closed rows go when a run streams its outputs
/// ([`Observers::stream_to`]): the rows of links.csv, signals.csv and cc.csv,
/// each file's rows in file order. A sink keeps its first error and reports
/// it at [`RowSink::close`]; the run goes on.
pub trait RowSink: Send {
    /// One row of links.csv: `link`'s counters in window `window` (a row of
    /// zeros for an idle window when the file is dense).
    fn link_row(&mut self, window: u64, link: u32, r: &LinkWindow);
    fn signal_row(&mut self, flow: u32, r: &signals::SignalRow);
    fn cc_row(&mut self, flow: u32, r: &cc::CcRow);
    /// Called once, after the last row.
    fn close(&mut self) -> std::io::Result<()>;
    /// Whether the sink takes no more rows (its output budget is spent, or
    /// writing failed): the monitors stop handing it idle windows, and the
    /// run loop ends the run.
    fn stopped(&self) -> bool {
        false
    }
    /// Bytes written so far to each file.
    fn written(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
    /// Bytes the files may take in all.
    fn budget(&self) -> u64 {
        u64::MAX
    }
}

/// Rows a streaming run may hold before it writes out the closed windows,
/// beyond one per port and flow (see [`Observers::stream_to`]).
pub const STREAM_ROWS: usize = 4096;

/// Which observers a run has, and their state.
#[derive(Default)]
pub struct Observers {
    window_ps: u64,
    /// Write a links.csv row for every window, idle or not (`monitor.idle_rows`).
    idle_rows: bool,
    /// Per port, when links.csv is wanted.
    links: Option<Vec<PortMon>>,
    /// Per flow, when the run has any in-band signal.
    signals: Option<Vec<FlowSignalMon>>,
    /// Per flow, when cc.csv is wanted.
    cc: Option<Vec<cc::FlowCcMon>>,
    capture: Option<capture::Capture>,
    /// Per-job link bytes, when the scenario has jobs: which flows are
    /// whose, and per port the counters.
    jobs: jobs::JobLinks,
    job_ports: Option<Vec<Box<[u64]>>>,
    /// Where closed rows go when the run streams; `None` keeps them in memory.
    sink: Option<Box<dyn RowSink>>,
    /// Closed rows held (links, signals and cc), and the most ever held.
    held: usize,
    held_peak: usize,
    /// Held rows at which a streaming run writes out its closed windows.
    flush_at: usize,
    /// Windows `0..written` of links.csv have been handed to the sink.
    written: u64,
    /// A sink was attached: the rows went there, not into the tables.
    streamed: bool,
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
    /// `links`, `signals` and `cc` say which monitors to attach; `idle_rows`
    /// whether links.csv has a row for a link's idle windows.
    pub fn new(window_ps: u64, ports: usize, flows: usize, links: bool, signals: bool, cc: bool, idle_rows: bool) -> Observers {
        Observers {
            window_ps,
            idle_rows,
            links: links.then(|| vec![PortMon::default(); ports]),
            signals: signals.then(|| vec![FlowSignalMon::default(); flows]),
            cc: cc.then(|| vec![cc::FlowCcMon::default(); flows]),
            flush_at: usize::MAX,
            ..Default::default()
        }
    }

    pub fn window_ps(&self) -> u64 {
        self.window_ps
    }

    /// Takes from `other` (a partition of a parallel run, whose observers
    /// watched its own ports and its flows' senders) the state of the ports
    /// and flows `port_in` and `flow_in` select, leaving this one's in
    /// their place, and counts the rows it holds.
    pub(crate) fn take_part(&mut self, other: &mut Observers, port_in: impl Fn(usize) -> bool, flow_in: impl Fn(usize) -> bool) {
        self.swap_part(other, port_in, flow_in);
        self.held += other.held;
        self.held_peak += other.held_peak;
    }

    /// Swaps the monitors of the ports and flows `port_in` and `flow_in`
    /// select with `other`'s (twice leaves both as they were).
    pub(crate) fn swap_part(&mut self, other: &mut Observers, port_in: impl Fn(usize) -> bool, flow_in: impl Fn(usize) -> bool) {
        fn swap<T>(mine: &mut Option<Vec<T>>, theirs: &mut Option<Vec<T>>, owned: impl Fn(usize) -> bool) {
            if let (Some(a), Some(b)) = (mine, theirs) {
                for (i, (x, y)) in a.iter_mut().zip(b.iter_mut()).enumerate() {
                    if owned(i) {
                        std::mem::swap(x, y);
                    }
                }
            }
        }
        swap(&mut self.links, &mut other.links, &port_in);
        swap(&mut self.signals, &mut other.signals, &flow_in);
        swap(&mut self.cc, &mut other.cc, &flow_in);
        swap(&mut self.job_ports, &mut other.job_ports, &port_in);
    }

    /// Counts each job's bytes per link: job `j` holds flows
    /// `ranges[j].0 .. ranges[j].1`. Attach before the run starts.
    pub fn attach_jobs(&mut self, ranges: Vec<(u32, u32)>, ports: usize) {
        self.jobs = jobs::JobLinks::new(ranges);
        self.job_ports = Some((0..ports).map(|_| self.jobs.counters()).collect());
    }

    /// Adds `bytes` of `flow` to the job counters of `port`, when the run
    /// has jobs (the flow level's fluid, which puts no packet on a wire).
    pub(crate) fn add_job_bytes(&mut self, port: u32, flow: u32, bytes: u64) {
        if let Some(j) = &mut self.job_ports {
            self.jobs.add(&mut j[port as usize], flow, bytes);
        }
    }

    /// Per port: the wire bytes of each job, then of all packets; None
    /// without jobs.
    pub fn job_bytes(&self) -> Option<&[Box<[u64]>]> {
        self.job_ports.as_deref()
    }

    /// A parallel run's streaming: rows go to the sink only when
    /// [`Self::flush_streamed`] is called (between windows, with every
    /// partition's monitors swapped in), never from inside a window, where
    /// this partition holds only its own monitors.
    pub(crate) fn flush_only_when_asked(&mut self) {
        self.flush_at = usize::MAX;
    }

    /// Hands the sink every window before the one containing `now` (no
    /// event before `now` is still to come, none after it has been
    /// handled), when rows are streamed.
    pub(crate) fn flush_streamed(&mut self, now: u64) {
        if self.sink.is_some() {
            self.flush(now);
        }
    }

    /// Counts the rows `other` (another partition, whose monitors were
    /// swapped in to be flushed here) closed since they were last counted
    /// as held here, and no longer there.
    pub(crate) fn absorb_held(&mut self, other: &mut Observers) {
        other.held_peak = other.held_peak.max(other.held);
        self.held += std::mem::take(&mut other.held);
    }

    /// Whether links.csv has rows for idle windows (`monitor.idle_rows`).
    pub fn idle_rows(&self) -> bool {
        self.idle_rows
    }

    pub fn attach_capture(&mut self, c: capture::Capture) {
        self.capture = Some(c);
    }

    /// Whether a capture is attached.
    pub fn capturing(&self) -> bool {
        self.capture.is_some()
    }

    /// The attached capture, if any.
    pub(crate) fn capture_mut(&mut self) -> Option<&mut capture::Capture> {
        self.capture.as_mut()
    }

    pub fn take_capture(&mut self) -> Option<capture::Capture> {
        self.capture.take()
    }

    /// Streams the closed rows into `sink` instead of keeping them: whenever
    /// more than [`STREAM_ROWS`] plus one per port and flow are held, every
    /// monitor is brought up to the current window and the windows before it
    /// are handed over, so the rows held stay bounded whatever the run's
    /// length and window. Attach before the run starts.
    pub fn stream_to(&mut self, sink: Box<dyn RowSink>) {
        let ports = self.links.as_ref().map_or(0, Vec::len);
        let flows = self.signals.as_ref().map_or(0, Vec::len).max(self.cc.as_ref().map_or(0, Vec::len));
        self.flush_at = STREAM_ROWS + ports + flows;
        self.sink = Some(sink);
        self.streamed = true;
    }

    /// Whether the rows were streamed to a sink ([`Observers::stream_to`]).
    pub fn streamed(&self) -> bool {
        self.streamed
    }

    /// The sink given to [`Observers::stream_to`], after [`Observers::finish`]
    /// handed it the last rows; close it to learn whether writing failed.
    pub fn take_sink(&mut self) -> Option<Box<dyn RowSink>> {
        self.sink.take()
    }

    /// Whether the sink given to [`Observers::stream_to`] takes no more rows.
    pub fn sink_stopped(&self) -> bool {
        self.sink.as_ref().is_some_and(|s| s.stopped())
    }

    /// Closed monitor rows held in memory now, and the most held at any time
    /// in the run (rows of the link, signal and cc monitors; a run of idle or
    /// unchanging link windows is one row).
    pub fn held_rows(&self) -> usize {
        self.held
    }

    pub fn held_rows_peak(&self) -> usize {
        self.held_peak.max(self.held)
    }

    /// Writes out the closed windows when too many rows are held.
    #[inline(always)]
    fn check_held(&mut self, now: u64) {
        if self.held >= self.flush_at {
            self.flush(now);
        }
    }

    /// Brings every monitor up to the window containing `now` and hands the
    /// windows before it to the sink.
    #[cold]
    #[inline(never)]
    fn flush(&mut self, now: u64) {
        let w = self.window_ps;
        let upto = now / w;
        for m in self.links.iter_mut().flatten() {
            m.advance(now, w, &mut self.held);
        }
        for m in self.signals.iter_mut().flatten() {
            m.close_before(upto, &mut self.held);
        }
        for m in self.cc.iter_mut().flatten() {
            m.close_before(upto, &mut self.held);
        }
        self.write_closed(upto);
    }

    /// Hands every held row (all in windows before `upto`) to the sink in
    /// file order, and the idle windows up to `upto` when links.csv is dense.
    fn write_closed(&mut self, upto: u64) {
        self.held_peak = self.held_peak.max(self.held);
        let Some(sink) = self.sink.as_deref_mut() else { return };
        if let Some(links) = &mut self.links {
            if self.idle_rows {
                write_dense(sink, links, self.written, upto);
            } else {
                write_sparse(sink, links);
            }
            for m in links.iter_mut() {
                m.rows.clear();
            }
            self.written = self.written.max(upto);
        }
        if let Some(mons) = &mut self.signals {
            let mut rows: Vec<(u32, signals::SignalRow)> = Vec::new();
            for (f, m) in mons.iter_mut().enumerate() {
                rows.extend(m.rows.drain(..).map(|r| (f as u32, r)));
            }
            // Stable: a flow's rows of one window stay in series order.
            rows.sort_by_key(|&(f, r)| (r.window, f));
            for (f, r) in &rows {
                sink.signal_row(*f, r);
            }
        }
        if let Some(mons) = &mut self.cc {
            let mut rows: Vec<(u32, cc::CcRow)> = Vec::new();
            for (f, m) in mons.iter_mut().enumerate() {
                rows.extend(m.rows.drain(..).map(|r| (f as u32, r)));
            }
            rows.sort_by_key(|&(f, r)| (r.window, f));
            for (f, r) in &rows {
                sink.cc_row(*f, r);
            }
        }
        self.held = 0;
    }

    /// `pkt` starts on the wire of `port` over [start, end), decided at `now`.
    #[inline(always)]
    pub fn on_tx(&mut self, now: u64, port: PortId, pkts: &PacketArena, pkt: PktId, start: u64, end: u64) {
        if let Some(l) = &mut self.links {
            l[port.ix()].on_tx(now, start, end, pkts.get(pkt).wire as u64, self.window_ps, &mut self.held);
            self.check_held(now);
        }
        if let Some(c) = &mut self.capture {
            c.on_tx(port, pkts, pkt, start);
        }
        if let Some(j) = &mut self.job_ports {
            self.jobs.on_tx(&mut j[port.ix()], pkts.get(pkt));
        }
    }

    /// The data queue of `port` now holds `queue_bytes`.
    #[inline]
    pub fn on_queue(&mut self, now: u64, port: PortId, queue_bytes: u64) {
        if let Some(l) = &mut self.links {
            l[port.ix()].on_queue(now, queue_bytes, self.window_ps, &mut self.held);
            self.check_held(now);
        }
    }

    #[inline]
    fn count(&mut self, now: u64, port: PortId, field: fn(&mut LinkWindow) -> &mut u32) {
        if let Some(l) = &mut self.links {
            let m = &mut l[port.ix()];
            m.advance(now, self.window_ps, &mut self.held);
            *field(&mut m.cur) += 1;
            self.check_held(now);
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
            l[port.ix()].on_pause(now, paused, self.window_ps, &mut self.held);
            self.check_held(now);
        }
    }

    /// Asks the CPU for what an ACK of `flow` will update in the signal
    /// monitor (`signals.csv`), when there is one: a hint only.
    #[inline]
    pub fn prefetch_ack(&self, flow: FlowId) {
        if let Some(m) = self.signals.as_ref().and_then(|sm| sm.get(flow.ix())) {
            m.prefetch();
        }
    }

    /// An ACK reached the sender of `flow`.
    #[inline]
    pub fn on_ack(&mut self, now: u64, flow: FlowId, a: &AckSeen) {
        let w = self.window_ps;
        let held = &mut self.held;
        if let Some(cc) = &mut self.cc {
            cc[flow.ix()].record(now, w, a.metrics, a.rtt_ps, a.acked_pkts, a.ce_pkts, held);
        }
        if let Some(sm) = &mut self.signals {
            let m = &mut sm[flow.ix()];
            if let Some(c) = a.csig {
                let writer = (c.writer != NO_WRITER).then_some((c.writer, c.locator));
                m.record(now, w, Series::Csig, c.value, writer, held);
            }
            if let Some(st) = a.stamps {
                m.record(now, w, Series::StampMax, st.max as f64, None, held);
                m.record(now, w, Series::StampSum, st.sum as f64, None, held);
                m.record(now, w, Series::StampSumSqu, st.sum_squ, None, held);
                m.record(now, w, Series::StampInd, st.ind as u8 as f64, None, held);
            }
            if let Some(st) = a.int {
                let qmax = st.hops().iter().map(|h| h.qlen_bytes).max().unwrap_or(0);
                m.record(now, w, Series::IntHops, st.n as f64, None, held);
                m.record(now, w, Series::IntMaxQlen, qmax as f64, None, held);
            }
        }
        self.check_held(now);
    }

    /// Adds closed rows to the link monitors, per port, in window order,
    /// after every row they hold (the flow-level engine meters the links
    /// itself); before [`Observers::finish`].
    pub(crate) fn put_link_rows(&mut self, rows: Vec<Vec<LinkWindow>>) {
        if let Some(l) = &mut self.links {
            for (m, r) in l.iter_mut().zip(rows) {
                self.held += r.len();
                m.rows.extend(r);
            }
        }
    }

    /// Closes every monitor's windows at the end of the run (`end`); a
    /// streaming run hands its last rows to the sink.
    pub fn finish(&mut self, end: u64) {
        let held = &mut self.held;
        if let Some(l) = &mut self.links {
            for m in l.iter_mut() {
                m.finish(end, self.window_ps, held);
            }
        }
        for m in self.signals.iter_mut().flatten() {
            m.finish(held);
        }
        for m in self.cc.iter_mut().flatten() {
            m.finish(held);
        }
        self.write_closed(end / self.window_ps + 1);
    }

    /// The rows of links.csv per port, if the link monitor is attached: the
    /// non-idle windows, a run of equal windows as one row
    /// ([`LinkWindow::windows`]). Empty in a streaming run.
    pub fn link_rows(&self) -> Option<impl Iterator<Item = &[LinkWindow]>> {
        self.links.as_ref().map(|l| l.iter().map(|m| &m.rows[..]))
    }

    /// The signal rows of one flow (empty without the signal monitor, and in
    /// a streaming run).
    pub fn signal_rows(&self, flow: FlowId) -> &[signals::SignalRow] {
        self.signals.as_ref().map_or(&[], |s| &s[flow.ix()].rows[..])
    }

    /// The cc rows of one flow (empty without the cc monitor, and in a
    /// streaming run).
    pub fn cc_rows(&self, flow: FlowId) -> &[cc::CcRow] {
        self.cc.as_ref().map_or(&[], |s| &s[flow.ix()].rows[..])
    }
}

/// links.csv rows of windows `from..upto`, every link in every window.
fn write_dense(sink: &mut dyn RowSink, links: &[PortMon], from: u64, upto: u64) {
    let idle = LinkWindow::default();
    // Per link: the held row that covers the window, if any.
    let mut at = vec![0usize; links.len()];
    for win in from..upto {
        // Idle windows of a fine monitor are as many as the user asks for.
        if sink.stopped() {
            return;
        }
        for (l, m) in links.iter().enumerate() {
            let c = &mut at[l];
            while *c < m.rows.len() && m.rows[*c].last() < win {
                *c += 1;
            }
            match m.rows.get(*c).filter(|r| r.window <= win) {
                Some(r) => sink.link_row(win, l as u32, &LinkWindow { window: win, windows: 1, ..*r }),
                None => sink.link_row(win, l as u32, &LinkWindow { window: win, ..idle }),
            }
        }
    }
}

/// links.csv rows of the held non-idle windows only, in file order.
fn write_sparse(sink: &mut dyn RowSink, links: &[PortMon]) {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    // (window, link, row index) of each link's next row.
    let mut next: BinaryHeap<Reverse<(u64, u32, usize)>> =
        links.iter().enumerate().filter(|(_, m)| !m.rows.is_empty()).map(|(l, m)| Reverse((m.rows[0].window, l as u32, 0))).collect();
    while let Some(Reverse((win, l, i))) = next.pop() {
        let rows = &links[l as usize].rows;
        let r = rows[i];
        sink.link_row(win, l, &LinkWindow { window: win, windows: 1, ..r });
        if win < r.last() {
            next.push(Reverse((win + 1, l, i)));
        } else if i + 1 < rows.len() {
            next.push(Reverse((rows[i + 1].window, l, i + 1)));
        }
    }
}

/// One directed link's counters for one monitor window, or for a run of
/// consecutive windows with the same counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkWindow {
    pub window: u64,
    /// Consecutive windows, from `window`, that these counters describe: 1,
    /// or more for a stretch without events in which a queue stood, a pause
    /// lasted or a transmission went on (each window then has the same row).
    pub windows: u64,
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

    /// The last window the row covers.
    pub fn last(&self) -> u64 {
        self.window + self.windows.max(1) - 1
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
    /// Rolls windows forward so that the current window contains `now`;
    /// `held` counts the rows added.
    #[inline]
    pub fn advance(&mut self, now: u64, window_ps: u64, held: &mut usize) {
        let w = now / window_ps;
        if w > self.cur.window {
            self.roll(w, window_ps, held);
        }
    }

    fn push(&mut self, r: LinkWindow, held: &mut usize) {
        if !r.is_idle() && r.windows > 0 {
            self.rows.push(r);
            *held += 1;
        }
    }

    /// Closes the current window and the windows up to `to`, which saw no
    /// event: in them only the state carried over counts (a standing queue,
    /// a pause, the rest of a transmission), so they form at most three runs
    /// of equal rows: busy all the window, busy in part, not busy.
    #[cold]
    fn roll(&mut self, to: u64, window_ps: u64, held: &mut usize) {
        let wend = (self.cur.window + 1) * window_ps;
        if let Some(since) = self.pause_since {
            self.cur.pause_ps += wend - since.max(wend - window_ps);
        }
        let cur = LinkWindow { windows: 1, ..self.cur };
        self.push(cur, held);
        let next = self.cur.window + 1;
        let steady = LinkWindow {
            window: next,
            windows: 0,
            max_queue_bytes: self.queue_now,
            pause_ps: if self.pause_since.is_some() { window_ps } else { 0 },
            ..Default::default()
        };
        // Windows wholly inside the transmission in progress, then the one it ends in.
        let full_end = (self.busy_end / window_ps).clamp(next, to);
        self.push(LinkWindow { windows: full_end - next, busy_ps: window_ps, ..steady }, held);
        let mut after = full_end;
        let part = self.busy_end % window_ps;
        if after < to && after == self.busy_end / window_ps && part > 0 {
            self.push(LinkWindow { window: after, windows: 1, busy_ps: part, ..steady }, held);
            after += 1;
        }
        self.push(LinkWindow { window: after, windows: to - after, ..steady }, held);
        self.cur = LinkWindow { window: to, max_queue_bytes: self.queue_now, ..Default::default() };
        // The transmission in progress carries into the new window.
        let nstart = to * window_ps;
        if self.busy_end > nstart {
            self.cur.busy_ps += self.busy_end.min(nstart + window_ps) - nstart;
        }
    }

    /// A transmission of `bytes` over [start, end), decided at `now`. A start
    /// after `now` is a control packet committed behind the packet on the wire,
    /// so the busy time from `now` to `end` is contiguous.
    #[inline]
    pub fn on_tx(&mut self, now: u64, start: u64, end: u64, bytes: u64, window_ps: u64, held: &mut usize) {
        self.advance(now, window_ps, held);
        let wend = (self.cur.window + 1) * window_ps;
        self.cur.tx_bytes += bytes;
        if start < wend {
            self.cur.busy_ps += end.min(wend) - start;
        }
        self.busy_end = end;
    }

    #[inline]
    pub fn on_queue(&mut self, now: u64, queue_bytes: u64, window_ps: u64, held: &mut usize) {
        self.advance(now, window_ps, held);
        self.queue_now = queue_bytes;
        if queue_bytes > self.cur.max_queue_bytes {
            self.cur.max_queue_bytes = queue_bytes;
        }
    }

    pub fn on_pause(&mut self, now: u64, paused: bool, window_ps: u64, held: &mut usize) {
        self.advance(now, window_ps, held);
        match (paused, self.pause_since) {
            (true, None) => self.pause_since = Some(now),
            (false, Some(since)) => {
                self.cur.pause_ps += now - since.max(self.cur.window * window_ps);
                self.pause_since = None;
            }
            _ => {}
        }
    }

    /// Closes the window containing `end` (the end of the run).
    pub fn finish(&mut self, end: u64, window_ps: u64, held: &mut usize) {
        self.advance(end, window_ps, held);
        let wstart = self.cur.window * window_ps;
        if let Some(since) = self.pause_since {
            self.cur.pause_ps += end - since.max(wstart);
            self.pause_since = Some(end);
        }
        let cur = LinkWindow { windows: 1, ..self.cur };
        self.push(cur, held);
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
        m.on_tx(90, 90, 130, 10, 100, &mut 0);
        m.on_tx(130, 130, 250, 30, 100, &mut 0);
        m.finish(250, 100, &mut 0);
        let busy: Vec<(u64, u64, u64)> = m.rows.iter().map(|r| (r.window, r.busy_ps, r.tx_bytes)).collect();
        assert_eq!(busy, vec![(0, 10, 10), (1, 100, 30), (2, 50, 0)]);
    }

    #[test]
    fn pause_time_splits_and_idle_windows_are_skipped() {
        let mut m = PortMon::default();
        m.on_pause(50, true, 100, &mut 0);
        m.on_pause(320, false, 100, &mut 0);
        m.on_tx(1000, 1000, 1010, 5, 100, &mut 0);
        m.finish(1010, 100, &mut 0);
        let p: Vec<(u64, u64, u64)> = m.rows.iter().map(|r| (r.window, r.windows, r.pause_ps)).collect();
        // Windows 1 and 2, paused throughout, are one run of two.
        assert_eq!(p, vec![(0, 1, 50), (1, 2, 100), (3, 1, 20), (10, 1, 0)]);
    }

    #[test]
    fn queue_maximum_carries_into_following_windows() {
        let mut m = PortMon::default();
        m.on_queue(10, 500, 100, &mut 0);
        m.on_queue(20, 800, 100, &mut 0);
        m.on_queue(250, 0, 100, &mut 0);
        m.finish(250, 100, &mut 0);
        let q: Vec<(u64, u64, u64)> = m.rows.iter().map(|r| (r.window, r.windows, r.max_queue_bytes)).collect();
        assert_eq!(q, vec![(0, 1, 800), (1, 1, 800), (2, 1, 800)]);
    }
}
