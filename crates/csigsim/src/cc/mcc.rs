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
//!   per round trip); else, if at least `partial_min_delayed` samples were
//!   delayed, partial congestion, which adaptive routing absorbs (`W`
//!   unchanged); else no path queued and the excess is the sender's own
//!   window, so it counts as none;
//! - a NACK cuts `W` by `max_mdf` at most once per round trip; a timeout sets
//!   `W` to `min_window`. No pacing.

use serde::Deserialize;

use super::{AckSample, Algorithm, CcMetrics, ConfigError, CongestionControl, FlowParams, NoReceiver};
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
    /// Delayed samples a delayed, non-global message needs to count as partial
    /// congestion; with fewer, no path showed queueing, so the excess message
    /// time is the sender's own (a small window) and the message counts as
    /// none. 0 makes every delayed, non-global message partial.
    pub partial_min_delayed: u32,
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
            partial_min_delayed: 1,
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
    partial_min_delayed: u32,
    pub ai: u64,
    beta: f64,
    max_mdf: f64,
    pub min_window: u64,
    pub max_window: u64,
    // State.
    /// The window, payload bytes.
    pub window: u64,
    /// Open messages, oldest first: a ring that grows by doubling up to
    /// `ring_cap` (a huge window must not cost its whole ring per flow up
    /// front).
    ring: Vec<Msg>,
    ring_cap: usize,
    head: usize,
    len: usize,
    /// One past the highest packet sent so far (a send below it is a resend).
    high_sent: u32,
    /// First packet of the next message to open.
    next_open: u32,
    /// ACKs still to count before the next sample.
    until_sample: u32,
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
            partial_min_delayed: c.partial_min_delayed,
            ai: c.ai.map(|s| s.0).unwrap_or(mss),
            beta: c.beta,
            max_mdf: c.max_mdf,
            min_window,
            max_window,
            window,
            ring: vec![Msg::default(); cap.min(16)],
            ring_cap: cap,
            head: 0,
            len: 0,
            high_sent: 0,
            next_open: 0,
            until_sample: c.sample_every.max(1),
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
        if self.len == self.ring.len() && self.len < self.ring_cap {
            // The open messages in order, then room up to twice as many.
            let size = (2 * self.len).min(self.ring_cap);
            let mut grown = Vec::with_capacity(size);
            grown.extend((0..self.len).map(|i| self.ring[(self.head + i) % self.len]));
            grown.resize(size, Msg::default());
            self.ring = grown;
            self.head = 0;
        }
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
        } else if m.delayed >= self.partial_min_delayed {
            Congestion::Partial
        } else {
            Congestion::None
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
            self.until_sample -= 1;
            if self.until_sample == 0 {
                self.until_sample = self.sample_every;
            }
            if self.until_sample == self.sample_every && self.len > 0 {
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
    fn on_nack(&mut self, now: u64, _snd_nxt: u32, _reason: super::NackReason) {
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

impl Algorithm for Mcc {
    const NAME: &'static str = "mcc";
    const ABOUT: &'static str = "MCC message-level window control for sprayed traffic (partial vs global congestion)";
    type Config = MccConfig;
    type Receiver = NoReceiver;
    fn build(c: &MccConfig, p: &FlowParams) -> Self {
        Mcc::new(c, p)
    }
    fn validate(c: &MccConfig) -> Result<(), ConfigError> {
        c.validate().map_err(|(k, m)| (k.into(), m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::PS_PER_US;

    const US: u64 = PS_PER_US;
    /// One 1000 B packet at 100 Gb/s: 80 ns.
    const TX: u64 = 80_000;

    /// 100 Gb/s, 10 us base RTT, 1000 B packets (headers folded into the
    /// payload so the arithmetic stays round): BDP = 125,000 B, max window
    /// 187,500 B. With `chunk = 4000` a message is 4 packets and
    /// ideal = 10 us + 4 x 80 ns = 10.32 us; both thresholds are 10 us.
    fn params() -> FlowParams {
        FlowParams { line_rate_bps: 100_000_000_000, base_rtt_ps: 10 * US, mss: 1000, packet_bytes: 1000, hops: 3 }
    }

    fn mcc(c: MccConfig) -> Mcc {
        Mcc::new(&c, &params())
    }

    fn four() -> Mcc {
        mcc(MccConfig { chunk: Size(4000), ..Default::default() })
    }

    fn ack(m: &mut Mcc, now: u64, rtt: u64, snd_una: u32, snd_nxt: u32) {
        m.on_ack(&AckSample {
            now_ps: now,
            acked_bytes: 1000,
            acked_pkts: 1,
            rtt_ps: rtt,
            snd_una,
            snd_nxt,
            ..Default::default()
        });
    }

    /// Sends packets `from..to` back to back from `t`.
    fn send(m: &mut Mcc, t: u64, from: u32, to: u32) {
        for (i, psn) in (from..to).enumerate() {
            m.on_send(t + i as u64 * TX, psn, 1000);
        }
    }

    /// Completes message `[from, from + 4)` at `done`: four ACKs, the first
    /// `delayed` of them with a 25 us RTT (15 us of queueing), the others 10 us.
    fn finish(m: &mut Mcc, done: u64, from: u32, delayed: u32, snd_nxt: u32) {
        for i in 0..4 {
            let rtt = if i < delayed { 25 * US } else { 10 * US };
            ack(m, done - (3 - i as u64) * TX, rtt, from + i + 1, snd_nxt);
        }
    }

    #[test]
    fn derived_constants() {
        let m = four();
        assert_eq!(m.chunk_pkts, 4);
        assert_eq!((m.window, m.min_window, m.max_window, m.ai), (125_000, 1000, 187_500, 1000));
        assert_eq!((m.msg_threshold_ps, m.pkt_threshold_ps), (10 * US, 10 * US));
        assert_eq!(m.ideal_ps(4), 10 * US + 4 * TX);
        assert_eq!(m.rate(), 100_000_000_000, "no pacing");
        // Default chunk 64 KiB over 1000 B packets: 66 packets (rounded up).
        assert_eq!(mcc(MccConfig::default()).chunk_pkts, 66);
        assert_eq!(mcc(MccConfig { chunk: Size(1), ..Default::default() }).chunk_pkts, 1);
        // Overrides, and the initial window clamped into [min, max].
        let o = mcc(MccConfig {
            init_window: Some(Size(500_000)),
            max_window: Some(Size(200_000)),
            min_window: Some(Size(3000)),
            ai: Some(Size(250)),
            msg_threshold: Some(Time::us(3)),
            pkt_threshold: Some(Time::us(4)),
            ..Default::default()
        });
        assert_eq!((o.window, o.max_window, o.min_window, o.ai), (200_000, 200_000, 3000, 250));
        assert_eq!((o.msg_threshold_ps, o.pkt_threshold_ps), (3 * US, 4 * US));
    }

    #[test]
    fn an_undelayed_message_adds_ai() {
        let mut m = four();
        send(&mut m, 0, 0, 4);
        // The last ACK at 10.32 us: md = 10.32 - 0 - 10.32 = 0.
        finish(&mut m, 10 * US + 4 * TX, 0, 0, 4);
        assert_eq!(m.window, 126_000);
        assert_eq!((m.messages_none, m.messages_partial, m.messages_global), (1, 0, 0));
        assert_eq!(m.last_md_ps, 0);
        // md exactly at the threshold (sent at 11 us, done at 31.32 us) is
        // still no congestion, however delayed the samples.
        send(&mut m, 11 * US, 4, 8);
        finish(&mut m, 31 * US + 4 * TX, 4, 4, 8);
        assert_eq!(m.last_md_ps, 10 * US);
        assert_eq!((m.window, m.messages_none), (127_000, 2));
        // Never above max_window.
        m.window = 187_000;
        send(&mut m, 32 * US, 8, 12);
        finish(&mut m, 42 * US + 4 * TX, 8, 0, 12);
        assert_eq!(m.window, 187_500);
    }

    #[test]
    fn a_globally_delayed_message_cuts_by_the_excess_delay() {
        let mut m = four();
        send(&mut m, 0, 0, 4);
        // Done at 30 us, every sample 15 us > 10 us: md = 30 - 10.32 = 19.68 us;
        // factor = 1 - 0.8 x 9.68 / 19.68 = 0.60650...; 125,000 x that = 75,813.
        finish(&mut m, 30 * US, 0, 4, 4);
        assert_eq!(m.last_md_ps, 19_680_000);
        assert_eq!(m.last_class, Some(Congestion::Global));
        assert_eq!(m.window, 75_813);
        assert_eq!((m.messages_global, m.decreases, m.samples, m.delayed_samples), (1, 1, 4, 4));
        assert_eq!(m.last_decrease_ps, Some(30 * US));
        assert!((m.metrics().alpha - 1.968).abs() < 1e-9, "md in base RTTs");
    }

    #[test]
    fn a_partially_delayed_message_keeps_the_window() {
        for delayed in [1, 3] {
            let mut m = four();
            send(&mut m, 0, 0, 4);
            finish(&mut m, 30 * US, 0, delayed, 4);
            assert_eq!(m.last_class, Some(Congestion::Partial), "{delayed} of 4 delayed");
            assert_eq!(m.window, 125_000);
            assert_eq!((m.messages_partial, m.decreases), (1, 0));
        }
        // global_fraction 0.75: 3 of 4 is global.
        let mut m = mcc(MccConfig { chunk: Size(4000), global_fraction: 0.75, ..Default::default() });
        send(&mut m, 0, 0, 4);
        finish(&mut m, 30 * US, 0, 3, 4);
        assert_eq!(m.last_class, Some(Congestion::Global));
        // A delay exactly at pkt_threshold (RTT 20 us) is not above it: no
        // sample delayed, so the message delay is the sender's own and the
        // message counts as none (partial_min_delayed = 1).
        let mut m = four();
        send(&mut m, 0, 0, 4);
        for i in 0..4u32 {
            ack(&mut m, 27 * US + i as u64, 20 * US, i + 1, 4);
        }
        assert_eq!(m.last_class, Some(Congestion::None));
        assert_eq!((m.delayed_samples, m.window), (0, 126_000));
        // partial_min_delayed = 0: the literal rule, partial.
        let mut m = mcc(MccConfig { chunk: Size(4000), partial_min_delayed: 0, ..Default::default() });
        send(&mut m, 0, 0, 4);
        finish(&mut m, 30 * US, 0, 0, 4);
        assert_eq!(m.last_class, Some(Congestion::Partial));
        assert_eq!(m.window, 125_000);
        // partial_min_delayed = 2: one delayed sample is not enough.
        let mut m = mcc(MccConfig { chunk: Size(4000), partial_min_delayed: 2, ..Default::default() });
        send(&mut m, 0, 0, 4);
        finish(&mut m, 30 * US, 0, 1, 4);
        assert_eq!(m.last_class, Some(Congestion::None));
        finish(&mut m, 30 * US, 0, 0, 4);
        send(&mut m, 31 * US, 4, 8);
        finish(&mut m, 61 * US, 4, 2, 8);
        assert_eq!(m.last_class, Some(Congestion::Partial));
    }

    #[test]
    fn no_samples_counts_as_global() {
        let mut m = four();
        send(&mut m, 0, 0, 4);
        // A cumulative ACK with no RTT sample completes the message at 30 us.
        m.on_ack(&AckSample { now_ps: 30 * US, acked_bytes: 4000, snd_una: 4, snd_nxt: 4, ..Default::default() });
        assert_eq!(m.last_class, Some(Congestion::Global));
        assert_eq!(m.window, 75_813);
    }

    #[test]
    fn the_decrease_is_bounded_by_max_mdf() {
        let mut m = four();
        send(&mut m, 0, 0, 4);
        // md = 189.68 us: 1 - 0.8 x 179.68 / 189.68 = 0.242 -> 0.5.
        finish(&mut m, 200 * US, 0, 4, 4);
        assert_eq!(m.window, 62_500);
        // And by min_window.
        m.window = 1500;
        send(&mut m, 201 * US, 4, 8);
        finish(&mut m, 400 * US, 4, 4, 8);
        assert_eq!(m.window, 1000);
        let mut m = mcc(MccConfig { chunk: Size(4000), max_mdf: 0.25, ..Default::default() });
        send(&mut m, 0, 0, 4);
        finish(&mut m, 200 * US, 0, 4, 4);
        assert_eq!(m.window, 93_750);
    }

    #[test]
    fn one_decrease_per_round_trip() {
        let mut m = four();
        // Two messages sent back to back from 0; both globally delayed.
        send(&mut m, 0, 0, 8);
        finish(&mut m, 30 * US, 0, 4, 8);
        assert_eq!(m.window, 75_813);
        // The second was sent before the decrease at 30 us: classified, not applied.
        finish(&mut m, 31 * US, 4, 4, 8);
        assert_eq!(m.window, 75_813);
        assert_eq!((m.messages_global, m.decreases), (2, 1));
        // A message first sent at the decrease or later may decrease again:
        // md = 62 - 30 - 10.32 = 21.68 us, factor 1 - 0.8 x 11.68 / 21.68;
        // 75,813 x 0.56900... = 43,137.
        send(&mut m, 30 * US, 8, 12);
        finish(&mut m, 62 * US, 8, 4, 12);
        assert_eq!(m.window, 43_137);
        assert_eq!(m.decreases, 2);
        // An undelayed message still adds ai in the round trip after a decrease.
        send(&mut m, 62 * US, 12, 16);
        finish(&mut m, 73 * US, 12, 0, 16);
        assert_eq!(m.window, 44_137);
    }

    #[test]
    fn samples_go_to_the_oldest_open_message_and_follow_sample_every() {
        let mut m = mcc(MccConfig { chunk: Size(4000), sample_every: 2, ..Default::default() });
        send(&mut m, 0, 0, 8);
        // Four delayed ACKs for message 0, two of them sampled: global.
        finish(&mut m, 30 * US, 0, 4, 8);
        assert_eq!((m.samples, m.delayed_samples), (2, 2));
        assert_eq!(m.last_class, Some(Congestion::Global));
        // Message 1: delayed ACKs 1 and 3 unsampled, 2 and 4 (undelayed) sampled:
        // md 31 - 0.32 - 10.32 > 10 us, but no delayed sample -> none.
        for (i, rtt) in [25, 10, 25, 10].into_iter().enumerate() {
            ack(&mut m, 31 * US + i as u64, rtt * US, 5 + i as u32, 8);
        }
        assert_eq!(m.last_class, Some(Congestion::None));
        assert_eq!((m.samples, m.delayed_samples), (4, 2));
        // Message 2: RTTs 10, 25, 10, 10; the 2nd and 4th are sampled, one of
        // them delayed (1 of 2 < 90%) -> partial.
        send(&mut m, 32 * US, 8, 12);
        for (i, rtt) in [10, 25, 10, 10].into_iter().enumerate() {
            ack(&mut m, 60 * US + i as u64, rtt * US, 9 + i as u32, 12);
        }
        assert_eq!(m.last_class, Some(Congestion::Partial));
        assert_eq!((m.samples, m.delayed_samples), (6, 3));
        // A duplicate ACK (no packet covered) is not a sample.
        let mut m = four();
        send(&mut m, 0, 0, 4);
        m.on_ack(&AckSample { now_ps: US, rtt_ps: 30 * US, snd_una: 0, snd_nxt: 4, ..Default::default() });
        assert_eq!(m.samples, 0);
    }

    #[test]
    fn chunk_boundaries_short_last_chunk_and_resends() {
        // chunk 4500 B over 1000 B packets: 5 packets per message.
        assert_eq!(mcc(MccConfig { chunk: Size(4500), ..Default::default() }).chunk_pkts, 5);
        // A 10-packet flow with 4-packet messages: [0,4), [4,8), [8,10).
        let mut m = four();
        send(&mut m, 0, 0, 10);
        assert_eq!(m.open_messages(), 3);
        assert_eq!(m.open_message(0), Some((0, 4)));
        assert_eq!(m.open_message(1), Some((4, 8)));
        assert_eq!(m.open_message(2), Some((8, 12)), "the end is not known yet");
        // Go-back-N resends 4..10 at 5 us: nothing reopens, first sends stand.
        send(&mut m, 5 * US, 4, 10);
        send(&mut m, 6 * US, 0, 1);
        assert_eq!(m.open_messages(), 3);
        // ACKs up to 8 at 11 us: messages 0 and 1 complete; message 1 was first
        // sent at 4 x 80 ns = 0.32 us, so md = 11 - 0.32 - 10.32 = 0.36 us.
        ack(&mut m, 11 * US, 10 * US, 8, 10);
        assert_eq!(m.messages_none, 2);
        assert_eq!(m.last_md_ps, 360_000);
        // The final ACK (everything sent is acknowledged) ends the short last
        // message, ideal over its 2 packets: md = 30 - 0.64 - 10.16 = 19.2 us.
        ack(&mut m, 30 * US, 25 * US, 10, 10);
        assert_eq!(m.open_messages(), 0);
        assert_eq!(m.last_md_ps, 19_200_000);
        assert_eq!((m.messages_none, m.messages_global), (2, 1));
        // Resending and then sending new packets after that opens nothing stale.
        send(&mut m, 31 * US, 9, 10);
        assert_eq!(m.open_messages(), 0);
    }

    #[test]
    fn a_drained_window_ends_the_message_and_the_rest_opens_anew() {
        let mut m = four();
        send(&mut m, 0, 0, 2);
        // All that was sent is acknowledged at 10.16 us: message [0,2) ends, md 0.
        ack(&mut m, 10 * US + 2 * TX, 10 * US, 2, 2);
        assert_eq!((m.messages_none, m.open_messages()), (1, 0));
        assert_eq!(m.window, 126_000);
        // The rest of chunk 0 opens as its own message, then chunk 1 as usual.
        send(&mut m, 11 * US, 2, 6);
        assert_eq!(m.open_message(0), Some((2, 4)));
        assert_eq!(m.open_message(1), Some((4, 8)));
    }

    #[test]
    fn nack_and_timeout() {
        let mut m = four();
        m.on_nack(US, 0, crate::packet::NackReason::Trimmed);
        assert_eq!(m.window, 62_500);
        // Within a round trip (the base RTT before any sample): no second cut.
        m.on_nack(5 * US, 0, crate::packet::NackReason::Trimmed);
        assert_eq!(m.window, 62_500);
        m.on_nack(11 * US, 0, crate::packet::NackReason::Trimmed);
        assert_eq!(m.window, 31_250);
        assert_eq!((m.nacks, m.nack_decreases), (3, 2));
        // The round trip follows the latest RTT sample (30 us).
        ack(&mut m, 12 * US, 30 * US, 0, 0);
        m.on_nack(25 * US, 0, crate::packet::NackReason::Trimmed);
        assert_eq!(m.window, 31_250);
        m.on_nack(41 * US, 0, crate::packet::NackReason::Trimmed);
        assert_eq!(m.window, 15_625);
        // A NACK decrease also holds off message decreases sent before it.
        send(&mut m, 0, 0, 4);
        finish(&mut m, 50 * US, 0, 4, 4);
        assert_eq!((m.window, m.decreases), (15_625, 0));
        m.on_timeout(60 * US);
        assert_eq!(m.window, 1000);
        assert_eq!(m.timeouts, 1);
        assert_eq!(m.cwnd(), 1000);
    }

    #[test]
    fn open_messages_fit_the_ring() {
        // 187,500 B of window over 4000 B messages: 46 + 4 slots. Keep a full
        // window of messages open and slide it: nothing is evicted.
        let mut m = four();
        let mut una = 0u32;
        let mut nxt = 0u32;
        for round in 0..20u64 {
            while (nxt - una) as u64 * 1000 + 1000 <= m.max_window {
                m.on_send(round * 100 * US, nxt, 1000);
                nxt += 1;
            }
            una += 40;
            ack(&mut m, round * 100 * US + 50 * US, 10 * US, una, nxt);
        }
        assert_eq!(m.messages_evicted, 0);
        assert_eq!(m.messages_none + m.messages_partial + m.messages_global, una as u64 / 4);
    }

    #[test]
    fn validate_names_the_key() {
        assert!(MccConfig::default().validate().is_ok());
        let bad = |c: MccConfig| c.validate().unwrap_err().0;
        assert_eq!(bad(MccConfig { chunk: Size(0), ..Default::default() }), "chunk");
        assert_eq!(bad(MccConfig { sample_every: 0, ..Default::default() }), "sample_every");
        assert_eq!(bad(MccConfig { msg_threshold: Some(Time(0)), ..Default::default() }), "msg_threshold");
        for g in [0.0, -0.1, 1.5, f64::NAN] {
            assert_eq!(bad(MccConfig { global_fraction: g, ..Default::default() }), "global_fraction");
        }
        assert!(MccConfig { global_fraction: 1.0, ..Default::default() }.validate().is_ok());
        assert_eq!(bad(MccConfig { beta: -1.0, ..Default::default() }), "beta");
        for f in [0.0, 1.0, f64::NAN] {
            assert_eq!(bad(MccConfig { max_mdf: f, ..Default::default() }), "max_mdf");
        }
        assert_eq!(bad(MccConfig { min_window: Some(Size(0)), ..Default::default() }), "min_window");
        assert_eq!(bad(MccConfig { max_window_bdps: 0.0, ..Default::default() }), "max_window_bdps");
        let e = MccConfig { min_window: Some(Size(5000)), max_window: Some(Size(4000)), ..Default::default() }.validate().unwrap_err();
        assert_eq!(e.0, "max_window");
        assert!(e.1.contains("below min_window"), "{}", e.1);
        assert_eq!(bad(MccConfig { init_window: Some(Size(0)), ..Default::default() }), "init_window");
    }

    #[test]
    fn config_parses_from_toml_keys() {
        let c: MccConfig = toml::from_str(
            "chunk = \"64KB\"\nmsg_threshold = \"8us\"\npkt_threshold = \"2us\"\nglobal_fraction = 0.5\nai = \"2KB\"\nmax_window = \"1MB\"",
        )
        .unwrap();
        assert_eq!(c.chunk, Size(64_000));
        assert_eq!(c.msg_threshold, Some(Time::us(8)));
        assert_eq!(c.pkt_threshold, Some(Time::us(2)));
        assert_eq!(c.global_fraction, 0.5);
        assert_eq!(c.ai, Some(Size(2000)));
        assert_eq!(c.max_window, Some(Size(1_000_000)));
        assert!(toml::from_str::<MccConfig>("bogus = 1").is_err());
        assert!(toml::from_str::<MccConfig>("chunk = \"lots\"").is_err());
    }
}
