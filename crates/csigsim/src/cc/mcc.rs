//! MCC: message-level congestion control for sprayed traffic (Li et al.,
//! APNet 2025, slides only). The control law below is csigsim's reading of
//! the slides; the page is docs/cc/mcc.md.
//!
//! Window-based, in payload bytes. A flow's packets are cut into messages
//! ("chunks", 64 KiB by default, the size a collective library's chunk
//! mechanism typically uses): chunk `k` is packets `[k P, (k + 1) P)` with
//! `P = ceil(chunk / mss)`.
//!
//! - a message opens when its first packet is first sent (a resend does not
//!   reopen it) and completes on the first ACK whose `snd_una` reaches its end;
//! - its message delay is `md = completion - first send - ideal`, with
//!   `ideal = base_rtt + tx(P packets at line rate)`;
//! - while it is the oldest open message, ACKs add packet-delay samples
//!   (`rtt - base_rtt`) to its two counters: samples, and samples above
//!   `pkt_threshold`;
//! - at completion: `md <= msg_threshold` is no congestion (`W += ai`); else,
//!   if at least `global_fraction` of the samples were delayed (or there were
//!   none), global congestion
//!   (`W *= max(1 - beta (md - msg_threshold) / md, 1 - max_mdf)`, at most once
//!   per round trip); else partial congestion, which adaptive routing absorbs
//!   (`W` unchanged);
//! - a NACK cuts `W` by `max_mdf` at most once per round trip; a timeout sets
//!   `W` to `min_window`. No pacing.

use serde::Deserialize;

use super::{AckSample, CcMetrics, CongestionControl, FlowParams};
use crate::units::{tx_time_ps, Size, Time};

/// `[transport.mcc]`. Sizes are payload bytes.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct MccConfig {
    /// Message (chunk) size; a message is `ceil(chunk / mtu)` packets.
    pub chunk: Size,
    /// Take a packet-delay sample from every this many ACKs.
    pub sample_every: u32,
    /// Message delay above which a message counts as delayed; default the flow's base RTT.
    pub msg_threshold: Option<Time>,
    /// Packet delay (`rtt - base_rtt`) above which a sample counts as delayed;
    /// default the flow's base RTT (NSCC's default target queueing delay without trimming).
    pub pkt_threshold: Option<Time>,
    /// Share of delayed samples from which a delayed message is global congestion.
    pub global_fraction: f64,
    /// Window increase per message without congestion; default one `mtu`.
    pub ai: Option<Size>,
    /// Multiplicative-decrease gain.
    pub beta: f64,
    /// Largest decrease at once (the window keeps at least `1 - max_mdf`).
    pub max_mdf: f64,
    /// Smallest window; default one `mtu`.
    pub min_window: Option<Size>,
    /// Largest window, absolute; default `max_window_bdps` x BDP.
    pub max_window: Option<Size>,
    /// Largest window in BDPs of the flow's path, when `max_window` is not given.
    pub max_window_bdps: f64,
    /// Initial window; default one BDP (line-rate start).
    pub init_window: Option<Size>,
}

impl Default for MccConfig {
    fn default() -> Self {
        MccConfig {
            chunk: Size(65_536),
            sample_every: 1,
            msg_threshold: None,
            pkt_threshold: None,
            global_fraction: 0.9,
            ai: None,
            beta: 0.8,
            max_mdf: 0.5,
            min_window: None,
            max_window: None,
            max_window_bdps: 1.5,
            init_window: None,
        }
    }
}

impl MccConfig {
    /// Checks the values; errors name the key (under `transport.mcc`).
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.chunk.0 == 0 {
            return Err(("chunk", "chunk must be at least 1 byte".into()));
        }
        if self.chunk.0 > u32::MAX as u64 {
            return Err(("chunk", format!("chunk must be at most {} bytes, got {}", u32::MAX, self.chunk.0)));
        }
        if self.sample_every == 0 {
            return Err(("sample_every", "sample_every must be at least 1".into()));
        }
        if self.msg_threshold == Some(Time(0)) {
            return Err(("msg_threshold", "msg_threshold must be positive".into()));
        }
        if !(self.global_fraction > 0.0 && self.global_fraction <= 1.0) {
            return Err(("global_fraction", format!("global_fraction must be in (0, 1], got {}", self.global_fraction)));
        }
        if !(self.beta.is_finite() && self.beta >= 0.0) {
            return Err(("beta", format!("beta must be >= 0, got {}", self.beta)));
        }
        if !(self.max_mdf > 0.0 && self.max_mdf < 1.0) {
            return Err(("max_mdf", format!("max_mdf must be in (0, 1), got {}", self.max_mdf)));
        }
        if self.min_window == Some(Size(0)) {
            return Err(("min_window", "min_window must be positive".into()));
        }
        if !(self.max_window_bdps.is_finite() && self.max_window_bdps > 0.0) {
            return Err(("max_window_bdps", format!("max_window_bdps must be positive, got {}", self.max_window_bdps)));
        }
        if let (Some(lo), Some(hi)) = (self.min_window, self.max_window) {
            if lo > hi {
                return Err(("max_window", format!("max_window ({} B) is below min_window ({} B)", hi.0, lo.0)));
            }
        }
        if self.max_window == Some(Size(0)) {
            return Err(("max_window", "max_window must be positive".into()));
        }
        if self.init_window == Some(Size(0)) {
            return Err(("init_window", "init_window must be positive".into()));
        }
        Ok(())
    }
}

/// How a completed message was classified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Congestion {
    None,
    Partial,
    Global,
}

/// One open message: packets `[start, end)`.
#[derive(Clone, Copy, Debug, Default)]
struct Msg {
    start: u32,
    end: u32,
    first_send_ps: u64,
    samples: u32,
    delayed: u32,
}

/// Per-flow MCC state.
#[derive(Clone, Debug)]
pub struct Mcc {
    // Resolved constants (bytes, ps).
    line_rate_bps: u64,
    base_rtt_ps: u64,
    packet_bytes: u64,
    /// Packets per message.
    pub chunk_pkts: u32,
    sample_every: u32,
    pub msg_threshold_ps: u64,
    pub pkt_threshold_ps: u64,
    global_fraction: f64,
    pub ai: u64,
    beta: f64,
    max_mdf: f64,
    pub min_window: u64,
    pub max_window: u64,
    // State.
    /// The window, payload bytes.
    pub window: u64,
    /// Open messages, oldest first: a ring of fixed capacity.
    ring: Vec<Msg>,
    head: usize,
    len: usize,
    /// One past the highest packet sent so far (a send below it is a resend).
    high_sent: u32,
    /// First packet of the next message to open.
    next_open: u32,
    acks: u64,
    /// When the last decrease (message or NACK) was applied.
    pub last_decrease_ps: Option<u64>,
    /// The latest RTT sample (base RTT before the first), the round trip of the NACK gate.
    pub last_rtt_ps: u64,
    /// Message delay of the last completed message, ps.
    pub last_md_ps: u64,
    pub last_class: Option<Congestion>,
    // Counters.
    pub messages_none: u64,
    pub messages_partial: u64,
    pub messages_global: u64,
    /// Global messages that cut the window (the others fell in the round
    /// trip after a decrease).
    pub decreases: u64,
    pub nack_decreases: u64,
    pub nacks: u64,
    pub timeouts: u64,
    /// Packet-delay samples taken, and those above `pkt_threshold`.
    pub samples: u64,
    pub delayed_samples: u64,
    /// Messages dropped unclassified because the ring was full (never expected).
    pub messages_evicted: u64,
}

impl Mcc {
    pub fn new(c: &MccConfig, p: &FlowParams) -> Self {
        let mss = p.mss.max(1) as u64;
        let chunk_pkts = c.chunk.0.div_ceil(mss).clamp(1, u32::MAX as u64) as u32;
        let bdp = p.bdp().max(1);
        let min_window = c.min_window.map(|s| s.0).unwrap_or(mss).max(1);
        let max_window = c.max_window.map(|s| s.0).unwrap_or((c.max_window_bdps * bdp as f64) as u64).max(min_window);
        let window = c.init_window.map(|s| s.0).unwrap_or(bdp).clamp(min_window, max_window);
        // In flight are at most max(window, one packet) payload bytes, so the
        // open messages span at most that many bytes plus a partial message at
        // each end, and one shortened message (see `on_ack`).
        let msg_bytes = chunk_pkts as u64 * mss;
        let cap = (max_window.max(mss) / msg_bytes + 4).min(1 << 20) as usize;
        Mcc {
            line_rate_bps: p.line_rate_bps,
            base_rtt_ps: p.base_rtt_ps,
            packet_bytes: p.packet_bytes.max(1) as u64,
            chunk_pkts,
            sample_every: c.sample_every.max(1),
            msg_threshold_ps: c.msg_threshold.map(|t| t.0).unwrap_or(p.base_rtt_ps),
            pkt_threshold_ps: c.pkt_threshold.map(|t| t.0).unwrap_or(p.base_rtt_ps),
            global_fraction: c.global_fraction,
            ai: c.ai.map(|s| s.0).unwrap_or(mss),
            beta: c.beta,
            max_mdf: c.max_mdf,
            min_window,
            max_window,
            window,
            ring: vec![Msg::default(); cap],
            head: 0,
            len: 0,
            high_sent: 0,
            next_open: 0,
            acks: 0,
            last_decrease_ps: None,
            last_rtt_ps: p.base_rtt_ps,
            last_md_ps: 0,
            last_class: None,
            messages_none: 0,
            messages_partial: 0,
            messages_global: 0,
            decreases: 0,
            nack_decreases: 0,
            nacks: 0,
            timeouts: 0,
            samples: 0,
            delayed_samples: 0,
            messages_evicted: 0,
        }
    }

    /// Messages currently open.
    pub fn open_messages(&self) -> usize {
        self.len
    }

    /// The `[start, end)` packets of the `i`-th open message, oldest first.
    pub fn open_message(&self, i: usize) -> Option<(u32, u32)> {
        (i < self.len).then(|| {
            let m = &self.ring[(self.head + i) % self.ring.len()];
            (m.start, m.end)
        })
    }

    /// Time from first send to completion of a message of `pkts` full packets
    /// on an idle path at line rate.
    pub fn ideal_ps(&self, pkts: u32) -> u64 {
        self.base_rtt_ps + tx_time_ps(pkts as u64 * self.packet_bytes, self.line_rate_bps)
    }

    fn push(&mut self, m: Msg) {
        let cap = self.ring.len();
        if self.len == cap {
            // Cannot happen while the window bounds what is in flight; keep the newest.
            self.head = (self.head + 1) % cap;
            self.len -= 1;
            self.messages_evicted += 1;
        }
        self.ring[(self.head + self.len) % cap] = m;
        self.len += 1;
    }

    fn pop(&mut self) -> Msg {
        let m = self.ring[self.head];
        self.head = (self.head + 1) % self.ring.len();
        self.len -= 1;
        m
    }

    fn clamp(&mut self) {
        self.window = self.window.clamp(self.min_window, self.max_window);
    }

    /// Classifies a completed message and reacts.
    fn complete(&mut self, m: Msg, now: u64) {
        let pkts = m.end.saturating_sub(m.start).max(1);
        let md = now.saturating_sub(m.first_send_ps).saturating_sub(self.ideal_ps(pkts));
        self.last_md_ps = md;
        let class = if md <= self.msg_threshold_ps {
            Congestion::None
        } else if m.samples == 0 || m.delayed as f64 >= self.global_fraction * m.samples as f64 {
            Congestion::Global
        } else {
            Congestion::Partial
        };
        self.last_class = Some(class);
        match class {
            Congestion::None => {
                self.messages_none += 1;
                self.window = self.window.saturating_add(self.ai);
            }
            Congestion::Partial => self.messages_partial += 1,
            Congestion::Global => {
                self.messages_global += 1;
                // Once per round trip: a message sent before the last
                // decrease was already answered by it.
                if self.last_decrease_ps.is_none_or(|t| m.first_send_ps >= t) {
                    let excess = (md - self.msg_threshold_ps) as f64 / md as f64;
                    let f = (1.0 - self.beta * excess).max(1.0 - self.max_mdf);
                    self.window = (self.window as f64 * f) as u64;
                    self.last_decrease_ps = Some(now);
                    self.decreases += 1;
                }
            }
        }
        self.clamp();
    }
}

impl CongestionControl for Mcc {
    fn on_ack(&mut self, a: &AckSample) {
        let now = a.now_ps;
        // Packet delay: a duplicate ACK (no packet covered) carries no sample.
        if a.rtt_ps > 0 && a.acked_pkts > 0 {
            self.last_rtt_ps = a.rtt_ps;
            self.acks += 1;
            if self.acks % self.sample_every as u64 == 0 && self.len > 0 {
                let delayed = a.rtt_ps.saturating_sub(self.base_rtt_ps) > self.pkt_threshold_ps;
                let h = self.head;
                self.ring[h].samples += 1;
                self.ring[h].delayed += delayed as u32;
                self.samples += 1;
                self.delayed_samples += delayed as u64;
            }
        }
        while self.len > 0 && self.ring[self.head].end <= a.snd_una {
            let m = self.pop();
            self.complete(m, now);
        }
        // Everything sent is acknowledged inside the last open message: the
        // sender ran out of data (the flow's last, shorter message) or of
        // window. The message ends here; a later send opens the rest as a
        // new message.
        if self.len == 1 && a.snd_una == a.snd_nxt {
            let h = self.head;
            if a.snd_una > self.ring[h].start && a.snd_una < self.ring[h].end {
                self.ring[h].end = a.snd_una;
                let m = self.pop();
                self.next_open = self.next_open.min(a.snd_una);
                self.complete(m, now);
            }
        }
    }

    /// Loss or trimming: a global signal, at most once per round trip.
    fn on_nack(&mut self, now: u64, _snd_nxt: u32) {
        self.nacks += 1;
        if self.last_decrease_ps.is_none_or(|t| now >= t.saturating_add(self.last_rtt_ps)) {
            self.window = (self.window as f64 * (1.0 - self.max_mdf)) as u64;
            self.clamp();
            self.last_decrease_ps = Some(now);
            self.nack_decreases += 1;
        }
    }

    fn on_timeout(&mut self, now: u64) {
        self.timeouts += 1;
        self.window = self.min_window;
        self.last_decrease_ps = Some(now);
    }

    fn on_send(&mut self, now: u64, psn: u32, _bytes: u32) {
        if psn < self.high_sent {
            return; // a resend
        }
        self.high_sent = psn.saturating_add(1);
        if psn >= self.next_open {
            let p = self.chunk_pkts;
            let end = (psn / p).saturating_add(1).saturating_mul(p);
            self.push(Msg { start: psn, end, first_send_ps: now, samples: 0, delayed: 0 });
            self.next_open = end;
        }
    }

    fn cwnd(&self) -> u64 {
        self.window
    }

    fn rate(&self) -> u64 {
        self.line_rate_bps
    }

    /// `alpha` reports the last message delay in base RTTs.
    fn metrics(&self) -> CcMetrics {
        CcMetrics {
            cwnd_bytes: self.window,
            rate_bps: self.line_rate_bps,
            alpha: self.last_md_ps as f64 / self.base_rtt_ps.max(1) as f64,
        }
    }
}
