//! One flow (a queue pair) as a state machine with no I/O, in the manner of
//! quinn-proto's `Connection`: it takes arrivals (ACK, NACK, CNP, data) and
//! timer expiries with the time they happen, and answers with what to send
//! and which timers to arm. The transport does the sending; a flow can be
//! driven by a test with scripted packets and no network.
//!
//! Sender: sends packet by packet when the congestion window allows and the
//! pacing time has come. Receiver: in-order delivery with go-back-N (RoCE) or
//! selective retransmission, ACK every `ack_every` packets (immediately on
//! CE, loss or the last packet), NACK on a gap (rate-limited) or a trimmed
//! packet; or reliable unordered delivery (`delivery = "rud"`): ACKs every
//! `ack_bytes` in any order with a selective-ACK bitmap, NACKs for trims
//! only. A retransmission timer backs them up.
//!
//! Timers are fields, not queue entries: a flow keeps its deadline in
//! `rto_at` and has at most one `FlowTimer` event outstanding, which re-arms
//! itself if the deadline moved later.

use crate::cc::{AckSample, Cc, CcConfig, CnpDecision, CongestionControl, FlowParams, ReceiverCc};
use crate::lb::{CsigEcho, Feedback, HostLb, HostLbConfig};
use crate::packet::{Advice, IntStack, NackReason, Packet, PacketKind, Signals, F_AR, F_CE, F_DONE, F_ECT, F_RTX, F_TRIMMED, F_TRIMMED_LAST_HOP, NO_TAG, SACK_BITS};
use super::config::{Delivery, PacingUpdate, Timeout, TransportConfig};
use crate::signal::csig::{CsigSetup, Reflect};
use crate::signal::stamp::StampSetup;
use crate::signal::CsigSample;
use crate::bits::{bit, clear_bit, set_bit};
use crate::id::{FlowId, HostId};
use crate::rng::{Purpose, Stream};
use crate::units::tx_time_ps;
use std::collections::VecDeque;

/// Payload bytes of packet `psn` of a flow of `size` bytes in packets of
/// `mss` payload bytes at most.
#[inline]
pub(crate) fn payload_of(size: u64, mss: u32, psn: u32) -> u32 {
    let start = psn as u64 * mss as u64;
    (size - start).min(mss as u64) as u32
}

/// What every flow of a run shares: the transport settings and the signals
/// senders put in (and receivers reflect from) packets.
#[derive(Clone, Debug)]
pub struct FlowShared {
    pub t: TransportConfig,
    pub csig: Option<CsigSetup>,
    pub stamp: Option<StampSetup>,
    /// Wire bytes a CSIG tag and an INT stack add.
    pub tag_bytes: u32,
    pub int_bytes: u32,
}

/// What building a flow's state takes beyond its record: the controller's
/// settings, prepared for the fabric, the host-side scheme's, and the run's seed.
#[derive(Clone, Debug)]
pub struct FlowBuild {
    pub cc: CcConfig,
    /// None: one entropy per flow.
    pub lb: Option<HostLbConfig>,
    /// Wire bytes of a full data packet (payload, header, tag and INT).
    pub packet_bytes: u32,
    pub seed: u64,
    /// `[transport.rccc]`, prepared for the fabric: receivers grant credits.
    pub credits: Option<super::rccc::RcccConfig>,
}

impl FlowBuild {
    /// The selected algorithm and scheme of `t` (the controller's settings
    /// not yet prepared for the fabric: see [`CcConfig::prepare`]).
    pub fn new(t: &TransportConfig, packet_bytes: u32, seed: u64) -> FlowBuild {
        FlowBuild { cc: t.cc_config(), lb: t.host_lb_config(), packet_bytes, seed, credits: t.rccc }
    }

    /// Fills in the defaults the controller and the credits derive from the
    /// whole network, once, at set-up.
    pub fn prepare(&mut self, f: &crate::cc::Fabric) {
        self.cc.prepare(f);
        if let Some(c) = &mut self.credits {
            c.prepare(f.network_rtt);
        }
    }
}

/// What a flow is, from the scenario.
#[derive(Clone, Debug)]
pub struct FlowInit<'a> {
    pub src: HostId,
    pub dst: HostId,
    pub size: u64,
    pub start_ps: u64,
    /// Sending-rate cap (u64::MAX: none).
    pub rate_cap: u64,
    pub name: &'a str,
}

/// One flow: sender and receiver state.
///
/// Laid out by what each packet touches, since a flow's lines have left the
/// cache by its next packet on a large fabric: sending a packet reads the
/// first two lines, the selective-mode vectors and the controller; taking
/// data reads the receiver's two lines, the first sender line (the packet
/// count and the ids its ACK carries) and the vectors' line, and writes the
/// delayed ACK's copy of the packet (two cold lines) when the ACK waits; the
/// rest is cold (statistics, the reflected signals, the tag stream).
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Flow {
    // sender, first line
    pub snd_una: u32,
    pub snd_nxt: u32,
    /// One past the highest packet ever sent: anything below it is a resend.
    pub high_sent: u32,
    pub npkts: u32,
    pub mss: u32,
    /// Bytes a packet adds to the window beyond its payload: 0, or
    /// `transport.header` when the window counts wire bytes (NSCC
    /// `window_units = "wire"`).
    window_overhead: u32,
    pub entropy: u32,
    pub id: FlowId,
    pub src: HostId,
    pub dst: HostId,
    pub rto_backoff: u32,
    pub started: bool,
    pub(crate) in_ring: bool,
    pub(crate) timer_pending: bool,
    /// Receiver credits run (`credit` is set): read on the hot lines, so
    /// that a flow without them never touches the cold one.
    credits: bool,
    pub size: u64,
    outstanding_bytes: u64,
    // sender, second line
    pub next_send_ps: u64,
    pub rto_at: u64,
    /// Sending-rate cap from the scenario (u64::MAX: none).
    pub rate_cap: u64,
    pub bytes_sent: u64,
    pub sender_done_ps: Option<u64>,
    /// `transport.entropy` other than `flow`: the per-packet choice, whose
    /// value is XORed into `entropy`.
    pub(crate) host_lb: Option<Box<crate::lb::HostLb>>,
    pub retransmits: u64,
    /// Selective mode: per-packet acked bits and the resend queue.
    acked: Vec<u64>,
    /// Selective mode: per-packet in-flight bits (sent, not acknowledged,
    /// not NACKed, not timed out) and the payload bytes they add up to
    /// (`outstanding_bytes`): what the window limits.
    outstanding: Vec<u64>,
    rtx_queue: VecDeque<u32>,
    /// The pending congestion-control timer event, or u64::MAX.
    pub(crate) cc_timer_at: u64,
    pub cc: Cc,
    _receiver_line: LineStart,
    // receiver, first line
    pub rcv_nxt: u32,
    pub pending_acks: u32,
    /// Selective: packets held beyond the first missing one.
    ooo_held: u32,
    pub last_nack_psn: u32,
    /// rud: wire bytes of new data since the last ACK.
    accepted_bytes: u32,
    /// CE-marked packets the next ACK covers (an ACK reports at most 2^16 - 1).
    pub pending_ce: u16,
    /// `ack_request`: a flagged packet asked for an ACK that is owed again
    /// once the out-of-order data drains.
    ack_requested: bool,
    /// Delayed ACK: an `AckTimer` event is queued, at or before `ack_at`.
    /// One a flow at most: a timer armed while an earlier one is queued
    /// waits for that one to schedule it again (see
    /// [`Flow::on_ack_timer`]), rather than pushing one event per ACK.
    ack_timer_queued: bool,
    received: Vec<u64>,
    /// Delayed ACK: when the pending ACK must go at the latest.
    pub(crate) ack_at: u64,
    pub ce_marks: u64,
    // receiver, second line
    pub finish_ps: Option<u64>,
    /// The receiver side of the flow's congestion control (notification
    /// point).
    pub rcv_cc: ReceiverCc,
    // cold
    /// Delayed ACK: the last data packet the pending ACK covers (for the
    /// echo and the reflected signals).
    last_rx: Option<(Packet, Signals)>,
    /// Reflect = worst: the worst signals over the packets the next ACK covers.
    pending_sig: Signals,
    pub last_nack_ps: u64,
    /// The CNPs the notification point sent and those it chose not to send.
    pub cnps: u64,
    pub cnps_suppressed: u64,
    pub timeouts: u64,
    pub nacks: u64,
    pub trims: u64,
    /// `pacing_update = "on_rate_change"`: wire bytes of the last data
    /// packet sent, whose gap a rate change stretches or shrinks.
    last_wire: u32,
    pub base_rtt_ps: u64,
    pub start_ps: u64,
    tag_rng: Stream,
    /// Receiver credits (`[transport.rccc]`): the sender's credit and the
    /// receiver's view of it.
    pub credit: Option<Box<super::rccc::FlowCredit>>,
    /// `timeout = "packet"`: each packet's last send time (empty in the
    /// other mode), and the sends in time order, where a send is stale
    /// once its packet left the flight or was sent again: the oldest live
    /// one sets the timer.
    sent_at: Vec<u64>,
    send_log: VecDeque<(u64, u32)>,
}

/// A field of no size that starts the next field of a `repr(C)` struct on a
/// cache line, whatever the size of the fields before it.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
struct LineStart;

/// Why a flow could not send, or what it sends next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendCheck {
    /// Packet `psn`, a resend from the resend queue if true.
    Send(u32, bool),
    /// Waiting for ACKs (window full, or everything sent).
    Blocked,
    /// Paced until this time.
    Paced(u64),
}

/// A data packet the sender built.
#[derive(Clone, Copy, Debug)]
pub struct Sent {
    pub packet: Packet,
    /// The packet carries a CSIG tag (initialized by the transport).
    pub tagged: bool,
    /// It resends a packet sent before.
    pub resend: bool,
    /// Arm the retransmission timer event at this time.
    pub arm_rto: Option<u64>,
}

/// What a control packet reports: the data packets it covers, how many of
/// them carried CE, and whether the receiver has the whole flow.
#[derive(Clone, Copy, Debug)]
struct Covers {
    acked: u32,
    ce: u32,
    done: bool,
}

impl Covers {
    const NONE: Covers = Covers { acked: 0, ce: 0, done: false };
}

/// What the signals of a control packet reflect.
#[derive(Clone, Copy, Debug)]
pub enum Reflection {
    None,
    /// These signals, and the INT stack of the data packet that triggered it if true.
    Signals(Signals, bool),
}

/// One thing a receiver does in answer to a data packet, in order.
#[derive(Clone, Copy, Debug)]
pub enum RxAction {
    /// Send this control packet (ACK, NACK or CNP) back to the sender.
    Send(Packet, Reflection),
    /// Arm the delayed-ACK timer event at this time.
    AckTimer(u64),
}

/// A receiver's answer to one data packet: what to count. The actions (at
/// most a CNP, an ACK or its timer, and a NACK) go, in the order they
/// happen, into the caller's buffer.
#[derive(Clone, Copy, Debug, Default)]
pub struct RxOutcome {
    /// The packet delivered data (it was not trimmed and the flow not finished).
    pub delivered: bool,
    /// The flow's last byte arrived with this packet.
    pub completed: bool,
    /// Go-back-N discarded the packet as out of order.
    pub discarded: bool,
    /// The notification point decided not to send a CNP.
    pub cnp_suppressed: bool,
    /// Receiver credits: the flow asks its receiver's pacer for credit
    /// (a higher target, or a trim whose resend needs credit).
    pub pull: bool,
}

/// A sender's answer to an ACK.
#[derive(Clone, Copy, Debug)]
pub enum AckOutcome<'a> {
    /// The sender had already finished.
    Ignored,
    /// Applied; what the ACK said (for the monitors) and whether the
    /// controller now wants a timer and the flow is done.
    Applied { seen: AckView<'a>, done: bool, wants_timer: bool },
}

/// An ACK as the sender applied it.
#[derive(Clone, Copy, Debug)]
pub struct AckView<'a> {
    pub sample: AckSample<'a>,
    pub csig: Option<CsigSample>,
    pub stamps: Option<crate::signal::StampSample>,
}

/// The retransmission timer's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtoOutcome {
    /// Nothing to do (the flow finished or has no deadline).
    Idle,
    /// The deadline moved later: wait again until then.
    Rearm(u64),
    /// Timeout: the controller may want a timer; wait again until the new
    /// deadline (`u64::MAX`: none, nothing is in flight).
    Fired { wants_timer: bool, rearm: u64 },
}

impl Flow {
    /// Flow `id`'s state before it starts, its controller built with `p`.
    pub fn new(id: FlowId, f: &FlowInit, t: &TransportConfig, b: &FlowBuild, p: &FlowParams, entropy: u32) -> Flow {
        let seed = b.seed;
        let npkts = f.size.div_ceil(t.mtu as u64) as u32;
        let selective = t.selective();
        let words = if selective { (npkts as usize).div_ceil(64) } else { 0 };
        Flow {
            id,
            src: f.src,
            dst: f.dst,
            size: f.size,
            start_ps: f.start_ps,
            npkts,
            mss: t.mtu,
            entropy,
            host_lb: b.lb.as_ref().map(|c| HostLb::new(c, seed, id.0 as u64)),
            base_rtt_ps: p.base_rtt_ps,
            rate_cap: f.rate_cap,
            cc: Cc::new(&b.cc, p),
            _receiver_line: LineStart,
            started: false,
            snd_una: 0,
            snd_nxt: 0,
            high_sent: 0,
            acked: vec![0; words],
            rtx_queue: VecDeque::new(),
            outstanding: vec![0; words],
            outstanding_bytes: 0,
            window_overhead: if b.cc.wire_window() { t.header } else { 0 },
            next_send_ps: 0,
            in_ring: false,
            rto_at: u64::MAX,
            timer_pending: false,
            rto_backoff: 1,
            sender_done_ps: None,
            rcv_nxt: 0,
            received: vec![0; words],
            pending_acks: 0,
            pending_ce: 0,
            accepted_bytes: 0,
            ooo_held: 0,
            ack_requested: false,
            ack_timer_queued: false,
            last_nack_psn: u32::MAX,
            last_nack_ps: 0,
            finish_ps: None,
            pending_sig: Signals::default(),
            ack_at: u64::MAX,
            last_rx: None,
            cc_timer_at: u64::MAX,
            rcv_cc: ReceiverCc::new(&b.cc),
            cnps: 0,
            cnps_suppressed: 0,
            tag_rng: Stream::new(seed, id.0 as u64, Purpose::CsigTag),
            bytes_sent: 0,
            retransmits: 0,
            timeouts: 0,
            nacks: 0,
            trims: 0,
            last_wire: 0,
            ce_marks: 0,
            credits: b.credits.is_some(),
            credit: b.credits.map(|c| Box::new(super::rccc::FlowCredit::new(&c, p.line_rate_bps, p.base_rtt_ps))),
            sent_at: if selective && t.timeout == Timeout::Packet { vec![0; npkts as usize] } else { Vec::new() },
            send_log: VecDeque::new(),
        }
    }

    /// The flow's credit state, when receiver credits run (read through
    /// the hot flag).
    #[inline(always)]
    fn credit_mut(&mut self) -> Option<&mut super::rccc::FlowCredit> {
        if self.credits {
            self.credit.as_deref_mut()
        } else {
            None
        }
    }

    /// Payload bytes of packet `psn`.
    #[inline]
    pub fn payload(&self, psn: u32) -> u32 {
        payload_of(self.size, self.mss, psn)
    }

    /// Bytes packet `psn` counts in the window (payload, plus headers when
    /// the window counts wire bytes).
    #[inline]
    fn window_bytes(&self, psn: u32) -> u64 {
        self.payload(psn) as u64 + self.window_overhead as u64
    }

    /// Window bytes of packets [a, b).
    #[inline]
    fn bytes_between(&self, a: u32, b: u32) -> u64 {
        if b <= a {
            return 0;
        }
        let payload = (b as u64 * self.mss as u64).min(self.size) - a as u64 * self.mss as u64;
        payload + (b - a) as u64 * self.window_overhead as u64
    }

    /// Bytes in flight (payload, or wire with `window_overhead`), what the window limits. Go-back-N: every
    /// packet from the first unacknowledged to the next to send. Selective:
    /// packets sent and neither acknowledged (cumulatively or selectively),
    /// nor NACKed, nor timed out; a NACKed packet leaves the count at once, so
    /// its resend fits in the room it freed.
    fn inflight_bytes(&self) -> u64 {
        if self.selective() {
            self.outstanding_bytes
        } else {
            self.bytes_between(self.snd_una, self.snd_nxt)
        }
    }

    /// Selective: packet `psn` is no longer in flight (acknowledged, NACKed or timed out).
    fn leave_flight(&mut self, psn: u32) {
        if bit(&self.outstanding, psn) {
            clear_bit(&mut self.outstanding, psn);
            self.outstanding_bytes -= self.window_bytes(psn);
        }
    }

    fn selective(&self) -> bool {
        !self.acked.is_empty()
    }

    /// The flow starts at `now` (its scheduled start, or later when it waited
    /// for other flows). Returns true when it is complete at once (no packets).
    /// Sets the size of a flow not yet started, at most the size it was
    /// built with (a connection decides at a message's start how many of its
    /// bytes each queue pair carries).
    pub fn set_size(&mut self, size: u64) {
        debug_assert!(!self.started && size <= self.size);
        self.size = size;
        self.npkts = size.div_ceil(self.mss as u64) as u32;
    }

    pub fn start(&mut self, now: u64) -> bool {
        self.started = true;
        self.start_ps = now;
        if self.npkts == 0 {
            self.finish_ps = Some(now);
            self.sender_done_ps = Some(now);
            return true;
        }
        false
    }

    /// The signals an ACK reflects: those of the last packet it covers, with
    /// the CSIG tag replaced by the worst one held since the previous ACK
    /// (held only when `reflect = "worst"`).
    fn take_reflection(&mut self, last: &Signals) -> Signals {
        let mut out = *last;
        let w = std::mem::take(&mut self.pending_sig);
        if w.csig_type != NO_TAG {
            out.csig_type = w.csig_type;
            out.csig_value = w.csig_value;
            out.csig_lm = w.csig_lm;
            out.csig_writer = w.csig_writer;
            out.csig_d = w.csig_d;
        }
        out
    }

    /// Asks the CPU for the fields choosing and building the next packet
    /// reads (a hint only).
    #[inline]
    pub(crate) fn prefetch_send(&self) {
        // The sender's two lines, the vectors' line and the controller's first.
        crate::sim::prefetch(&self.snd_nxt);
        crate::sim::prefetch(&self.next_send_ps);
        crate::sim::prefetch(&self.acked);
        crate::sim::prefetch(&self.cc);
    }

    /// Asks the CPU for what taking `p` reads: at `stage` 2 the fields, at
    /// stage 1 the word of the bitmap the packet's number falls in (a hint
    /// only).
    #[inline]
    pub(crate) fn prefetch_receive(&self, p: &Packet, stage: usize) {
        let data = p.kind == PacketKind::Data;
        if stage == 2 {
            if data {
                // The receiver's two lines.
                crate::sim::prefetch(&self.rcv_nxt);
                crate::sim::prefetch(&self.finish_ps);
            } else {
                crate::sim::prefetch(&self.sender_done_ps);
                crate::sim::prefetch(&self.snd_una);
                crate::sim::prefetch(&self.acked);
                crate::sim::prefetch(&self.cc);
            }
            return;
        }
        let bits = if data { &self.received } else { &self.acked };
        if let Some(w) = bits.get((p.psn / 64) as usize) {
            crate::sim::prefetch(w);
        }
    }

    /// Next packet to (re)send, if any, without consuming it.
    fn next_psn(&mut self) -> Option<(u32, bool)> {
        if self.selective() {
            while let Some(&p) = self.rtx_queue.front() {
                if p < self.snd_una || bit(&self.acked, p) {
                    self.rtx_queue.pop_front();
                } else {
                    return Some((p, true));
                }
            }
        }
        (self.snd_nxt < self.npkts).then_some((self.snd_nxt, false))
    }

    /// May the sender send at `now`, and what? New data and resends alike
    /// must fit in the window (one packet always may go when nothing is in
    /// flight).
    #[inline(always)]
    pub fn check_send(&mut self, now: u64) -> SendCheck {
        let Some((psn, rtx)) = self.next_psn() else { return SendCheck::Blocked };
        if self.credits && self.credit.as_ref().is_some_and(|c| !c.tx.may_send()) {
            return SendCheck::Blocked;
        }
        let inflight = self.inflight_bytes();
        if inflight > 0 && inflight + self.window_bytes(psn) > self.cc.cwnd() {
            return SendCheck::Blocked;
        }
        if self.next_send_ps > now {
            return SendCheck::Paced(self.next_send_ps);
        }
        SendCheck::Send(psn, rtx)
    }

    /// The rate the sender paces at: its controller's, under the flow's cap.
    #[inline(always)]
    fn pacing_rate(&self) -> u64 {
        self.cc.rate().min(self.rate_cap)
    }

    /// `pacing_update = "on_rate_change"`: the pacing rate before a hook
    /// that may change it (None in the other mode: nothing to compare).
    #[inline(always)]
    fn rate_before(&self, sh: &FlowShared) -> Option<u64> {
        (sh.t.pacing_update == PacingUpdate::OnRateChange).then(|| self.pacing_rate())
    }

    /// After a hook that may have changed the rate from `before`: the next
    /// send moves by the last packet's serialization at the new rate minus
    /// at the old one (ns-3's `RdmaHw::ChangeRate`), even when that time
    /// has passed, as there. Returns true when it moved earlier.
    #[inline]
    fn repace(&mut self, before: Option<u64>) -> bool {
        let Some(old) = before else { return false };
        let new = self.pacing_rate();
        if new == old || self.last_wire == 0 {
            return false;
        }
        let w = self.last_wire as u64;
        let (at_old, at_new) = (tx_time_ps(w, old), tx_time_ps(w, new));
        self.next_send_ps = (self.next_send_ps + at_new).saturating_sub(at_old);
        at_new < at_old
    }

    /// Builds data packet `psn` (a resend from the queue if `rtx`) leaving a
    /// NIC of `line_rate` at `now`. Inlined, as `check_send` is: one call
    /// site, once per packet sent.
    #[inline(always)]
    pub fn send(&mut self, now: u64, psn: u32, rtx: bool, line_rate: u64, sh: &FlowShared) -> Sent {
        let t = &sh.t;
        let payload = self.payload(psn);
        let tagged = match &sh.csig {
            Some(cs) => cs.fraction >= 1.0 || self.tag_rng.unit() < cs.fraction,
            None => false,
        };
        let wire = payload + t.header + if tagged { sh.tag_bytes } else { 0 } + sh.int_bytes;
        if rtx {
            self.rtx_queue.pop_front();
        } else {
            self.snd_nxt = psn + 1;
        }
        let resend = psn < self.high_sent;
        self.high_sent = self.high_sent.max(psn + 1);
        if resend {
            self.retransmits += 1;
        }
        if self.selective() && !bit(&self.outstanding, psn) {
            set_bit(&mut self.outstanding, psn);
            self.outstanding_bytes += self.window_bytes(psn);
        }
        if self.per_packet_timer() {
            self.sent_at[psn as usize] = now;
            self.send_log.push_back((now, psn));
        }
        // htsim's UEC sender: ask for an ACK on the packet that fills the
        // window (one more of its size would reach it) or spends the last
        // credit, the last new packet and every resend.
        let no_credit = match self.credit_mut() {
            Some(c) => {
                c.tx.spend(wire);
                !c.tx.may_send()
            }
            None => false,
        };
        let ack_request = t.ack_request
            && (resend || no_credit || psn + 1 == self.npkts || self.inflight_bytes() + self.window_bytes(psn) >= self.cc.cwnd());
        self.bytes_sent += wire as u64;
        self.cc.on_send(now, psn, wire);
        let rate = self.pacing_rate();
        if t.pacing_update == PacingUpdate::OnRateChange {
            // ns-3's next-available time, set at every send (at the line
            // rate too), which a rate change then moves.
            self.last_wire = wire;
            self.next_send_ps = now + tx_time_ps(wire as u64, rate.min(line_rate));
        } else if rate < line_rate {
            self.next_send_ps = now + tx_time_ps(wire as u64, rate);
        }
        if self.rto_at == u64::MAX {
            self.rto_at = now + t.rto.0 * self.rto_backoff as u64;
        }
        let arm_rto = (!self.timer_pending).then(|| {
            self.timer_pending = true;
            self.rto_at
        });
        let packet = Packet {
            kind: PacketKind::Data,
            flags: if t.ecn { F_ECT } else { 0 } | if resend { F_RTX } else { 0 } | if ack_request { F_AR } else { 0 },
            flow: self.id,
            src: self.src,
            dst: self.dst,
            psn,
            wire,
            payload,
            entropy: match &mut self.host_lb {
                None => self.entropy,
                Some(lb) => self.entropy ^ lb.next_ev(now),
            },
            sent_ps: now,
            ..Default::default()
        };
        Sent { packet, tagged, resend, arm_rto }
    }

    /// Receiver credits: the credit target the packet just sent carries
    /// (cumulative quanta), with `others` flows waiting at the sender's NIC.
    /// Demand is in wire bytes: the new packets left and the resends queued.
    pub fn credit_target(&self, others: u32, sh: &FlowShared) -> u32 {
        let Some(c) = &self.credit else { return 0 };
        let t = &sh.t;
        let left = self.npkts.saturating_sub(self.snd_nxt);
        let new = (self.size - (self.snd_nxt as u64 * self.mss as u64).min(self.size)) + left as u64 * t.header as u64;
        let resends = self.rtx_queue.len() as u64 * (self.mss + t.header) as u64;
        let cwnd = self.cc.cwnd();
        c.tx.target(new + resends, left > 0, (cwnd != u64::MAX).then_some(cwnd), self.mss + t.header, others)
    }

    /// Receiver credits: a request (RTS) for credit at `now`, when the
    /// sender has none and sent no request within the interval: a control
    /// packet to the receiver carrying the credit target.
    pub fn credit_request(&mut self, now: u64, sh: &FlowShared) -> Option<Packet> {
        if !self.credit.as_mut()?.tx.request_due(now) {
            return None;
        }
        let target = self.credit_target(0, sh);
        let mut p = Packet {
            kind: PacketKind::Credit,
            flow: self.id,
            src: self.src,
            dst: self.dst,
            psn: self.snd_una,
            wire: sh.t.ack_size,
            entropy: self.entropy,
            sent_ps: now,
            ..Default::default()
        };
        p.set_credit_quanta(target);
        Some(p)
    }

    /// Receiver credits: the receiver's credit packet for this flow, with
    /// its next entropy value (credit packets are sprayed as htsim's pulls).
    pub fn credit_packet(&self, granted: u32, sh: &FlowShared) -> Packet {
        let mut p = Packet {
            kind: PacketKind::Credit,
            flow: self.id,
            src: self.dst,
            dst: self.src,
            wire: sh.t.ack_size,
            entropy: self.entropy.wrapping_add(granted),
            ..Default::default()
        };
        p.set_credit_quanta(granted);
        p
    }

    /// Receiver credits: a grant arrived at the sender at `now`. None when
    /// the sender had finished.
    pub fn on_credit(&mut self, _now: u64, p: &Packet) -> Option<()> {
        if self.sender_done_ps.is_some() {
            return None;
        }
        if let Some(c) = self.credit_mut() {
            c.tx.on_grant(p.credit_quanta());
        }
        Some(())
    }

    /// Receiver credits: a sender's request arrived at the receiver. True
    /// when the flow must join the pacer's active list.
    pub fn on_credit_request(&mut self, p: &Packet) -> bool {
        match &mut self.credit {
            Some(c) if self.finish_ps.is_none() => c.rx.on_target(p.credit_quanta()) || c.rx.wants_pull(),
            _ => false,
        }
    }

    /// The flow's host-side scheme (None with `transport.entropy = "flow"`),
    /// for reports and tests.
    pub fn host_lb(&self) -> Option<&HostLb> {
        self.host_lb.as_deref()
    }

    /// A control packet from the receiver to the sender, answering `data`.
    fn ctrl(&self, kind: PacketKind, psn: u32, data: &Packet, count: Covers, refl: Reflection, sh: &FlowShared) -> RxAction {
        let Covers { acked, ce, done } = count;
        // Every control packet reserves the INT stack's bytes; only a reflected tag adds its own.
        let reflect_bytes = match refl {
            Reflection::Signals(s, _) if s.csig_type != NO_TAG => sh.tag_bytes,
            _ => 0,
        } + sh.int_bytes;
        let mut p = Packet {
            kind,
            flags: if done { F_DONE } else { 0 },
            flow: self.id,
            src: self.dst,
            dst: self.src,
            psn,
            sack: data.psn,
            wire: sh.t.ack_size + reflect_bytes,
            // The entropy of the packet answered (the same as the flow's
            // unless the sender picks one per packet): REPS learns from it.
            entropy: data.entropy,
            acked: acked.min(u16::MAX as u32) as u16,
            ce: ce.min(u16::MAX as u32) as u16,
            sent_ps: data.sent_ps,
            advice: if kind == PacketKind::Cnp { data.advice } else { Advice::NONE },
            ..Default::default()
        };
        if kind == PacketKind::Ack && sh.t.delivery == Delivery::Rud {
            p.set_sack_bitmap(self.sack_bitmap(p.sack_base()));
        }
        RxAction::Send(p, refl)
    }

    /// rud: the packets held from `base` on, one bit each ([`SACK_BITS`]).
    fn sack_bitmap(&self, base: u32) -> u32 {
        let mut bits = 0;
        for i in 0..SACK_BITS {
            let psn = base.saturating_add(i);
            if psn >= self.npkts {
                break;
            }
            bits |= (bit(&self.received, psn) as u32) << i;
        }
        bits
    }

    /// A NACK for data packet `p`, for the reason `reason`.
    fn nack(&self, psn: u32, p: &Packet, reason: NackReason, refl: Reflection, sh: &FlowShared) -> RxAction {
        let mut a = self.ctrl(PacketKind::Nack, psn, p, Covers::NONE, refl, sh);
        if let RxAction::Send(n, _) = &mut a {
            n.reason = reason;
        }
        a
    }

    /// Does the sender's ack request call for an ACK now (htsim's
    /// UecSink::processData): a flagged packet is acknowledged at once,
    /// and once more by the in-order packet that drains the held data.
    #[inline]
    fn ack_requested_now(&mut self, ack_request: bool, flags: u8, in_order: bool) -> bool {
        let mut requested = false;
        if ack_request && flags & F_AR != 0 {
            requested = true;
            self.ack_requested = true;
        }
        if in_order && self.ack_requested && self.ooo_held == 0 {
            requested = true;
            self.ack_requested = false;
        }
        requested
    }

    /// The receiver gets data packet `p` with signals `sig` at `now`; `has_int`
    /// says whether the packet carried an INT stack (reflected as it is).
    /// What to send and arm is appended to `actions`, in order.
    pub fn on_data(&mut self, now: u64, p: &Packet, sig: &Signals, has_int: bool, sh: &FlowShared, actions: &mut Vec<RxAction>) -> RxOutcome {
        let mut out = RxOutcome::default();
        let refl = Reflection::Signals(*sig, has_int);
        let t = &sh.t;
        if self.finish_ps.is_some() {
            // Late duplicate after completion: re-ACK so the sender can finish.
            actions.push(self.ctrl(PacketKind::Ack, self.npkts, p, Covers { done: true, ..Covers::NONE }, refl, sh));
            return out;
        }
        if p.flags & F_TRIMMED != 0 {
            self.trims += 1;
            let reason = if p.flags & F_TRIMMED_LAST_HOP != 0 { NackReason::TrimmedLastHop } else { NackReason::Trimmed };
            let rud = t.delivery == Delivery::Rud;
            if rud && (p.psn < self.rcv_nxt || bit(&self.received, p.psn)) {
                // rud (htsim's sink): the trimmed packet is a copy of one held: ACK, do not NACK.
                actions.push(self.ctrl(PacketKind::Ack, self.rcv_nxt, p, Covers::NONE, refl, sh));
                return out;
            }
            // Its target counts, and its resend needs credit: the flow asks again.
            if let Some(c) = self.credit_mut() {
                out.pull = c.rx.on_target(p.credit_quanta()) || c.rx.wants_pull();
            }
            // Selective: NACK exactly the trimmed packet. Go-back-N asks for the
            // same packet whatever was trimmed: rate-limit those NACKs like gap
            // NACKs, or every trim would rewind the sender.
            if self.selective() {
                self.last_nack_psn = p.psn;
                self.last_nack_ps = now;
                self.nacks += 1;
                actions.push(self.nack(p.psn, p, reason, refl, sh));
            } else {
                self.nack_hole(now, p, reason, refl, sh, actions);
            }
            return out;
        }
        out.delivered = true;
        if let Some(c) = self.credit_mut() {
            out.pull = c.rx.on_target(p.credit_quanta());
        }
        let ce = (p.flags & F_CE != 0) as u32;
        // The notification point (the algorithm's receiver side) sees every delivered packet.
        match self.rcv_cc.on_data(now, ce == 1, p.advice, p.wire) {
            None => {}
            Some(CnpDecision::Suppress) => {
                self.cnps_suppressed += 1;
                out.cnp_suppressed = true;
            }
            Some(CnpDecision::Send(advice)) => {
                self.cnps += 1;
                let cnp_of = Packet { advice, ..*p };
                actions.push(self.ctrl(PacketKind::Cnp, p.psn, &cnp_of, Covers { ce: 1, ..Covers::NONE }, Reflection::None, sh));
            }
        }
        self.ce_marks += ce as u64;
        if t.delivery == Delivery::Rud {
            self.rud_data(now, p, sig, has_int, ce == 1, sh, actions, &mut out);
            return out;
        }
        let mut gap = false;
        let mut nack_gap = false;
        // The packet is the one the receiver expected (it may drain held data).
        let in_order = p.psn == self.rcv_nxt;
        if self.selective() {
            if p.psn >= self.rcv_nxt && !bit(&self.received, p.psn) {
                set_bit(&mut self.received, p.psn);
                if p.psn > self.rcv_nxt {
                    self.ooo_held += 1;
                } else {
                    self.rcv_nxt += 1;
                    while self.rcv_nxt < self.npkts && bit(&self.received, self.rcv_nxt) {
                        self.rcv_nxt += 1;
                        self.ooo_held -= 1;
                    }
                }
            }
            gap = p.psn > self.rcv_nxt;
            nack_gap = p.psn >= self.rcv_nxt.saturating_add(t.nack_threshold.max(1));
        } else if p.psn == self.rcv_nxt {
            self.rcv_nxt += 1;
        } else if p.psn > self.rcv_nxt {
            // Go-back-N: out-of-order data is discarded and the hole NACKed.
            out.discarded = true;
            self.nack_hole(now, p, NackReason::Gap, refl, sh, actions);
            return out;
        } else {
            // Duplicate of delivered data: ACK at once so a sender that went back moves on.
            actions.push(self.ctrl(PacketKind::Ack, self.rcv_nxt, p, Covers::NONE, refl, sh));
            return out;
        }
        self.pending_acks += 1;
        self.pending_ce = self.pending_ce.saturating_add(ce as u16);
        let done = self.rcv_nxt == self.npkts;
        if done {
            self.finish_ps = Some(now);
            out.completed = true;
            if let Some(c) = self.credit_mut() {
                c.rx.done();
            }
        }
        self.hold_worst(sig, sh);
        let requested = self.ack_requested_now(t.ack_request, p.flags, in_order);
        if done || gap || requested || self.pending_acks >= t.ack_every || (ce == 1 && t.ack_on_ce) {
            self.ack_now(p, sig, has_int, done, sh, actions);
        } else {
            self.hold_ack(now, p, sig, sh, actions);
        }
        if nack_gap {
            self.nack_hole(now, p, NackReason::Gap, refl, sh, actions);
        }
        out
    }

    /// Reflect = worst: keeps the worst tag over the packets the next ACK covers.
    #[inline]
    fn hold_worst(&mut self, sig: &Signals, sh: &FlowShared) {
        if let Some(cs) = sh.csig.as_ref().filter(|cs| cs.reflect == Reflect::Worst) {
            let pend = &mut self.pending_sig;
            if sig.csig_type != NO_TAG && (pend.csig_type == NO_TAG || cs.worse(sig.csig_value, pend.csig_value)) {
                *pend = *sig;
            }
        }
    }

    /// Sends the ACK of everything pending, triggered by `p`.
    fn ack_now(&mut self, p: &Packet, sig: &Signals, has_int: bool, done: bool, sh: &FlowShared, actions: &mut Vec<RxAction>) {
        let (acked, ces, n) = (self.pending_acks, self.pending_ce as u32, self.rcv_nxt);
        self.pending_acks = 0;
        self.pending_ce = 0;
        self.accepted_bytes = 0;
        let refl = Reflection::Signals(self.take_reflection(sig), has_int);
        actions.push(self.ctrl(PacketKind::Ack, n, p, Covers { acked, ce: ces, done }, refl, sh));
        self.ack_at = u64::MAX;
    }

    /// Coalescing: the ACK waits for more packets, but at most `ack_delay`.
    fn hold_ack(&mut self, now: u64, p: &Packet, sig: &Signals, sh: &FlowShared, actions: &mut Vec<RxAction>) {
        self.last_rx = Some((*p, *sig));
        if self.ack_at == u64::MAX {
            self.ack_at = now + sh.t.ack_delay.0;
            // A queued event is earlier (an earlier packet plus the
            // same delay): it schedules this deadline when it pops.
            if !self.ack_timer_queued {
                self.ack_timer_queued = true;
                actions.push(RxAction::AckTimer(self.ack_at));
            }
        }
    }

    /// rud (htsim's UEC sink, `UecSink::processData`): data `p` (CE-marked
    /// if `ce`), not trimmed, is kept in any order. The ACK goes at once
    /// for a duplicate, the first packet, a CE mark (`ack_on_ce`), a
    /// flagged packet (`ack_request`) or the drain of held data after one,
    /// and the flow's last packet; otherwise once `ack_bytes` wire bytes
    /// arrived since the last ACK, in order or not, or at `ack_delay`. No
    /// gap NACKs: a lost packet waits for the sender's timer.
    #[allow(clippy::too_many_arguments)]
    fn rud_data(&mut self, now: u64, p: &Packet, sig: &Signals, has_int: bool, ce: bool, sh: &FlowShared, actions: &mut Vec<RxAction>, out: &mut RxOutcome) {
        let t = &sh.t;
        self.hold_worst(sig, sh);
        if p.psn < self.rcv_nxt || bit(&self.received, p.psn) {
            // A copy of data held: the sender resent it needlessly; tell it now.
            self.pending_ce = self.pending_ce.saturating_add(ce as u16);
            self.ack_now(p, sig, has_int, false, sh, actions);
            return;
        }
        let first = self.rcv_nxt == 0 && self.ooo_held == 0;
        set_bit(&mut self.received, p.psn);
        let in_order = p.psn == self.rcv_nxt;
        if in_order {
            self.rcv_nxt += 1;
            while self.rcv_nxt < self.npkts && bit(&self.received, self.rcv_nxt) {
                self.rcv_nxt += 1;
                self.ooo_held -= 1;
            }
        } else {
            self.ooo_held += 1;
        }
        self.pending_acks += 1;
        self.pending_ce = self.pending_ce.saturating_add(ce as u16);
        self.accepted_bytes = self.accepted_bytes.saturating_add(p.wire);
        let done = self.rcv_nxt == self.npkts;
        if done {
            self.finish_ps = Some(now);
            out.completed = true;
            if let Some(c) = self.credit_mut() {
                c.rx.done();
            }
        }
        let requested = self.ack_requested_now(t.ack_request, p.flags, in_order);
        if done || first || requested || self.accepted_bytes as u64 >= t.ack_bytes.0 || (ce && t.ack_on_ce) {
            self.ack_now(p, sig, has_int, done, sh, actions);
        } else {
            self.hold_ack(now, p, sig, sh, actions);
        }
    }

    /// NACKs the first missing packet, at most once per `nack_interval` for
    /// the same hole.
    fn nack_hole(&mut self, now: u64, p: &Packet, reason: NackReason, refl: Reflection, sh: &FlowShared, actions: &mut Vec<RxAction>) {
        let ask = self.rcv_nxt;
        if self.last_nack_psn != ask || now >= self.last_nack_ps + sh.t.nack_interval.0 {
            self.last_nack_psn = ask;
            self.last_nack_ps = now;
            self.nacks += 1;
            actions.push(self.nack(ask, p, reason, refl, sh));
        }
    }

    /// Is the delayed-ACK timer's event stale? Only when nothing is owed:
    /// one for an earlier deadline than `ack_at` is handled, and pushed
    /// again for it ([`Flow::on_ack_timer`]).
    pub(crate) fn ack_timer_stale(&mut self) -> bool {
        let stale = self.ack_at == u64::MAX;
        if stale {
            self.ack_timer_queued = false;
        }
        stale
    }

    /// The delayed-ACK timer at `now`: the coalesced ACK, if it is still
    /// owed; or, when the deadline was armed later than this event's
    /// (while it was queued), the timer again for that deadline.
    pub fn on_ack_timer(&mut self, now: u64, sh: &FlowShared) -> Option<RxAction> {
        if self.ack_at != u64::MAX && self.ack_at > now {
            // The event this one stands for, at the deadline. Its pop is
            // activity, but never the run's last: the ACK it waits for
            // goes later, at the deadline or with a later packet.
            return Some(RxAction::AckTimer(self.ack_at));
        }
        self.ack_timer_queued = false;
        if self.ack_at != now || self.pending_acks == 0 {
            return None;
        }
        self.ack_at = u64::MAX;
        let (p, sig) = self.last_rx.take()?;
        let (acked, ces, n) = (self.pending_acks, self.pending_ce as u32, self.rcv_nxt);
        self.pending_acks = 0;
        self.pending_ce = 0;
        self.accepted_bytes = 0;
        let out = self.take_reflection(&sig);
        // INT is not kept for delayed ACKs: the stack of the last packet is gone.
        Some(self.ctrl(PacketKind::Ack, n, &p, Covers { acked, ce: ces, done: false }, Reflection::Signals(out, false), sh))
    }

    /// The sender gets ACK `p` with reflected signals `sig` (and INT stack
    /// `int`) at `now`.
    pub fn on_ack<'a>(&mut self, now: u64, p: &Packet, sig: &Signals, int: Option<&'a IntStack>, sh: &FlowShared) -> AckOutcome<'a> {
        let csig = match &sh.csig {
            Some(cs) if sig.csig_type != NO_TAG => Some(CsigSample {
                sig: cs.sig,
                raw: sig.csig_value,
                value: cs.decode(sig.csig_value),
                locator: sig.csig_lm,
                writer: sig.csig_writer,
            }),
            _ => None,
        };
        let stamps = sh.stamp.as_ref().map(|st| st.sample(sig));
        if self.sender_done_ps.is_some() {
            return AckOutcome::Ignored;
        }
        if let Some(lb) = &mut self.host_lb {
            let fb = if p.ce > 0 { Feedback::Marked } else { Feedback::Good };
            lb.on_feedback(now, p.entropy ^ self.entropy, fb);
            if let (Some(c), Some(cs)) = (&csig, &sh.csig) {
                lb.on_csig(now, p.entropy ^ self.entropy, CsigEcho { value: c.value, locator: c.locator, lm_bits: cs.lm_bits });
            }
        }
        if let Some(c) = self.credit_mut() {
            c.tx.stop_speculating();
        }
        let before = self.snd_una;
        let mut newly = 0u64;
        if self.selective() {
            // The selectively acked packet, when beyond the cumulative point.
            if p.sack < self.npkts && p.sack >= p.psn && !bit(&self.acked, p.sack) && p.acked > 0 {
                set_bit(&mut self.acked, p.sack);
                newly += self.window_bytes(p.sack);
                self.leave_flight(p.sack);
            }
            if sh.t.delivery == Delivery::Rud {
                // The bitmap names every packet held in its range.
                let (base, mut bits) = (p.sack_base(), p.sack_bitmap());
                while bits != 0 {
                    let q = base + bits.trailing_zeros();
                    bits &= bits - 1;
                    if q < self.npkts && !bit(&self.acked, q) {
                        set_bit(&mut self.acked, q);
                        newly += self.window_bytes(q);
                        self.leave_flight(q);
                    }
                }
            }
            while self.snd_una < p.psn.min(self.npkts) {
                if !bit(&self.acked, self.snd_una) {
                    set_bit(&mut self.acked, self.snd_una);
                    newly += self.window_bytes(self.snd_una);
                    self.leave_flight(self.snd_una);
                }
                self.snd_una += 1;
            }
            while self.snd_una < self.npkts && bit(&self.acked, self.snd_una) {
                self.snd_una += 1;
            }
        } else if p.psn > self.snd_una {
            newly = self.bytes_between(self.snd_una, p.psn);
            self.snd_una = p.psn;
        }
        if self.snd_nxt < self.snd_una {
            self.snd_nxt = self.snd_una;
        }
        let progress = self.snd_una > before;
        let sample = AckSample {
            now_ps: now,
            acked_bytes: newly,
            acked_pkts: p.acked as u32,
            ce_pkts: p.ce as u32,
            rtt_ps: now.saturating_sub(p.sent_ps),
            snd_una: self.snd_una,
            // After a go-back-N rewind, windows are still measured to the highest packet sent.
            snd_nxt: self.snd_nxt.max(self.high_sent),
            inflight_bytes: self.inflight_bytes(),
            csig,
            stamps,
            int,
        };
        let rate = self.rate_before(sh);
        self.cc.on_ack(&sample);
        self.repace(rate);
        let wants_timer = self.cc.next_timer().is_some();
        let seen = AckView { sample, csig, stamps };
        if self.snd_una >= self.npkts || p.flags & F_DONE != 0 {
            self.snd_una = self.npkts;
            self.sender_done_ps = Some(now);
            self.rto_at = u64::MAX;
            self.cc_timer_at = u64::MAX;
            return AckOutcome::Applied { seen, done: true, wants_timer: false };
        }
        // Per packet, the timer moves when it expires (`on_rto_timer`).
        if progress && !self.per_packet_timer() {
            self.rto_backoff = 1;
            self.rto_at = if self.snd_nxt > self.snd_una { now + sh.t.rto.0 } else { u64::MAX };
        }
        AckOutcome::Applied { seen, done: false, wants_timer }
    }

    /// The sender gets NACK `p` at `now`. Returns None when the sender had
    /// finished, else whether the controller now wants a timer.
    pub fn on_nack(&mut self, now: u64, p: &Packet, sh: &FlowShared) -> Option<bool> {
        if self.sender_done_ps.is_some() {
            return None;
        }
        if let Some(lb) = &mut self.host_lb {
            // A trim at the receiver's own link says nothing against the path
            // (htsim reads such a NACK as an ACK, its mark included).
            let fb = match p.reason {
                NackReason::TrimmedLastHop if p.ce > 0 => Feedback::Marked,
                NackReason::TrimmedLastHop => Feedback::Good,
                _ => Feedback::Nack,
            };
            lb.on_feedback(now, p.entropy ^ self.entropy, fb);
        }
        if let Some(c) = self.credit_mut() {
            c.tx.stop_speculating();
        }
        let before = self.snd_una;
        if self.selective() {
            // A selective NACK names one missing packet; it says nothing of
            // the others. The packet leaves the flight: its resend takes its room.
            if p.psn < self.npkts && !bit(&self.acked, p.psn) {
                self.leave_flight(p.psn);
                if !self.rtx_queue.contains(&p.psn) {
                    self.rtx_queue.push_back(p.psn);
                }
            }
        } else {
            if p.psn > self.snd_una {
                self.snd_una = p.psn;
            }
            // Go back: resend from the requested packet.
            if self.snd_nxt > p.psn {
                self.snd_nxt = p.psn.max(self.snd_una);
            }
        }
        let nxt = self.snd_nxt.max(self.high_sent);
        let rate = self.rate_before(sh);
        self.cc.on_nack(now, nxt, p.reason);
        self.repace(rate);
        let timer = self.cc.next_timer().is_some();
        if self.snd_una > before && !self.per_packet_timer() {
            // The NACK acknowledged everything before the hole: that is progress.
            self.rto_backoff = 1;
            self.rto_at = now + sh.t.rto.0;
        }
        Some(timer)
    }

    /// A CNP for this flow arrived at the sender at `now`. Returns None when
    /// the sender had finished, else whether its next send moved earlier
    /// (a rate that rose, with `pacing_update = "on_rate_change"`).
    pub fn on_cnp(&mut self, now: u64, p: &Packet, sh: &FlowShared) -> Option<bool> {
        if self.sender_done_ps.is_some() {
            return None;
        }
        let cnp = crate::cc::CnpSample { now_ps: now, fair_share_bps: p.advice.share_bps(), drain: p.advice.drain() };
        let rate = self.rate_before(sh);
        self.cc.on_cnp(&cnp);
        Some(self.repace(rate))
    }

    /// When a `CcTimer` event should be armed for the controller's next timer
    /// (not before `now`), if it asks for one earlier than the one pending.
    pub fn cc_timer_due(&mut self, now: u64) -> Option<u64> {
        let t = self.cc.next_timer()?.max(now);
        (t < self.cc_timer_at).then(|| {
            self.cc_timer_at = t;
            t
        })
    }

    /// The controller's timer event at `now`. Returns false when the sender had finished.
    pub fn on_cc_timer(&mut self, now: u64, sh: &FlowShared) -> bool {
        self.cc_timer_at = u64::MAX;
        if self.sender_done_ps.is_some() {
            return false;
        }
        if self.cc.next_timer().is_some_and(|t| t <= now) {
            let rate = self.rate_before(sh);
            self.cc.on_timer(now);
            self.repace(rate);
        }
        true
    }

    /// The retransmission timer event at `now`.
    pub fn on_rto_timer(&mut self, now: u64, sh: &FlowShared) -> RtoOutcome {
        self.timer_pending = false;
        if self.sender_done_ps.is_some() || self.rto_at == u64::MAX {
            return RtoOutcome::Idle;
        }
        if now < self.rto_at {
            self.timer_pending = true;
            return RtoOutcome::Rearm(self.rto_at);
        }
        if self.per_packet_timer() {
            return self.on_packet_timeout(now, sh);
        }
        // Timeout: nothing acknowledged for a whole RTO.
        self.timeouts += 1;
        if let Some(lb) = &mut self.host_lb {
            lb.on_timeout(now);
        }
        self.rto_backoff = (self.rto_backoff * 2).min(64);
        let rate = self.rate_before(sh);
        self.cc.on_timeout(now);
        self.repace(rate);
        if let Some(c) = self.credit_mut() {
            c.tx.stop_speculating();
        }
        let wants_timer = self.cc.next_timer().is_some();
        if self.selective() {
            // Nothing came back for a whole RTO: what was in flight is taken
            // as lost, so that packets lost without a NACK cannot hold the
            // window shut. The first unacknowledged packet is resent first.
            self.outstanding.fill(0);
            self.outstanding_bytes = 0;
            let una = self.snd_una;
            if !self.rtx_queue.contains(&una) {
                self.rtx_queue.push_front(una);
            }
        } else {
            self.snd_nxt = self.snd_una;
        }
        self.rto_at = now + sh.t.rto.0 * self.rto_backoff as u64;
        self.timer_pending = true;
        RtoOutcome::Fired { wants_timer, rearm: self.rto_at }
    }

    /// `timeout = "packet"`: the timer is due (`rto_at`, never later than the
    /// oldest packet in flight's send plus `rto`, as send times only grow):
    /// the oldest packet in flight times out if its `rto` has passed, alone,
    /// and the timer runs to the next oldest's.
    fn on_packet_timeout(&mut self, now: u64, sh: &FlowShared) -> RtoOutcome {
        let rto = sh.t.rto.0;
        let Some((sent, psn)) = self.oldest_in_flight() else {
            self.rto_at = u64::MAX;
            return RtoOutcome::Idle;
        };
        if sent + rto > now {
            self.rto_at = sent + rto;
            self.timer_pending = true;
            return RtoOutcome::Rearm(self.rto_at);
        }
        self.send_log.pop_front();
        self.timeouts += 1;
        if let Some(lb) = &mut self.host_lb {
            lb.on_timeout(now);
        }
        let rate = self.rate_before(sh);
        self.cc.on_timeout(now);
        self.repace(rate);
        if let Some(c) = self.credit_mut() {
            c.tx.stop_speculating();
        }
        let wants_timer = self.cc.next_timer().is_some();
        self.leave_flight(psn);
        if !self.rtx_queue.contains(&psn) {
            self.rtx_queue.push_back(psn);
        }
        self.rto_at = self.oldest_in_flight().map_or(u64::MAX, |(t, _)| (t + rto).max(now));
        self.timer_pending = self.rto_at != u64::MAX;
        RtoOutcome::Fired { wants_timer, rearm: self.rto_at }
    }

    /// `timeout = "packet"`: the oldest send whose packet is still in
    /// flight from it (stale sends before it dropped).
    fn oldest_in_flight(&mut self) -> Option<(u64, u32)> {
        while let Some(&(t, psn)) = self.send_log.front() {
            if bit(&self.outstanding, psn) && self.sent_at[psn as usize] == t {
                return Some((t, psn));
            }
            self.send_log.pop_front();
        }
        None
    }

    #[inline(always)]
    fn per_packet_timer(&self) -> bool {
        !self.sent_at.is_empty()
    }

    /// Is a timer event at `t` stale (it changes nothing and is not activity)?
    pub(crate) fn rto_stale(&mut self) -> bool {
        if self.sender_done_ps.is_some() || self.rto_at == u64::MAX {
            self.timer_pending = false;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::nscc::{NsccConfig, WindowUnits};
    use crate::cc::FlowParams;

    /// The lines each packet touches are where the struct's comment says
    /// (offsets of a 64-bit target).
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn the_sender_and_receiver_fields_fill_their_lines() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(align_of::<Flow>(), 64);
        assert_eq!(offset_of!(Flow, snd_una), 0);
        assert_eq!(offset_of!(Flow, outstanding_bytes) + size_of::<u64>(), 64);
        assert_eq!(offset_of!(Flow, next_send_ps), 64);
        assert_eq!(offset_of!(Flow, retransmits) + size_of::<u64>(), 128);
        assert_eq!(offset_of!(Flow, acked), 128);
        assert_eq!(offset_of!(Flow, rcv_nxt) % 64, 0);
        assert_eq!(offset_of!(Flow, ce_marks) + size_of::<u64>(), offset_of!(Flow, rcv_nxt) + 64);
        assert_eq!(offset_of!(Flow, finish_ps), offset_of!(Flow, rcv_nxt) + 64);
        assert_eq!(offset_of!(Flow, rcv_cc) + size_of::<ReceiverCc>(), offset_of!(Flow, rcv_nxt) + 128);
    }

    const MSS: u32 = 1000;
    const RTO: u64 = 500_000_000;

    use super::super::config::Retransmit;

    fn shared(retransmit: Retransmit, ack_every: u32) -> FlowShared {
        let t = TransportConfig { mtu: MSS, retransmit, ack_every, ..Default::default() };
        FlowShared { t, csig: None, stamp: None, tag_bytes: 0, int_bytes: 0 }
    }

    /// A flow of `size` bytes from host 0 to host 1 with no congestion control.
    fn flow(size: u64, sh: &FlowShared) -> Flow {
        let p = FlowParams { line_rate_bps: 100_000_000_000, base_rtt_ps: 10_000_000, mss: MSS, packet_bytes: MSS + 64, hops: 2 };
        let spec = FlowInit { src: HostId(0), dst: HostId(1), size, start_ps: 0, rate_cap: u64::MAX, name: "f" };
        Flow::new(FlowId(0), &spec, &sh.t, &FlowBuild::new(&sh.t, MSS + 64, 1), &p, 7)
    }

    /// A flow under NSCC with `nscc`'s settings.
    fn nscc_flow(size: u64, nscc: NsccConfig, sh: &FlowShared) -> Flow {
        let p = FlowParams { line_rate_bps: 100_000_000_000, base_rtt_ps: 10_000_000, mss: MSS, packet_bytes: MSS + 64, hops: 2 };
        let spec = FlowInit { src: HostId(0), dst: HostId(1), size, start_ps: 0, rate_cap: u64::MAX, name: "f" };
        let b = FlowBuild { cc: CcConfig::Nscc(nscc), lb: None, packet_bytes: MSS + 64, seed: 1, credits: None };
        Flow::new(FlowId(0), &spec, &sh.t, &b, &p, 7)
    }

    fn data(f: &mut Flow, now: u64, sh: &FlowShared) -> Packet {
        let SendCheck::Send(psn, rtx) = f.check_send(now) else { panic!("cannot send") };
        f.send(now, psn, rtx, 100_000_000_000, sh).packet
    }

    fn sent(actions: &[RxAction]) -> Vec<(PacketKind, u32, u16, bool)> {
        actions
            .iter()
            .filter_map(|a| match a {
                RxAction::Send(p, _) => Some((p.kind, p.psn, p.acked, p.flags & F_DONE != 0)),
                RxAction::AckTimer(_) => None,
            })
            .collect()
    }

    #[test]
    fn sender_sends_in_order_arms_one_timer_and_finishes_on_the_last_ack() {
        let sh = shared(Retransmit::GoBackN, 1);
        let mut f = flow(2 * MSS as u64 + 500, &sh);
        assert_eq!(f.npkts, 3);
        let a = f.send(0, 0, false, 100_000_000_000, &sh);
        assert_eq!((a.packet.psn, a.packet.payload, a.packet.wire, a.arm_rto), (0, MSS, MSS + 64, Some(RTO)));
        let b = f.send(10, 1, false, 100_000_000_000, &sh);
        assert_eq!(b.arm_rto, None, "one timer event at a time");
        let c = data(&mut f, 20, &sh);
        assert_eq!((c.psn, c.payload), (2, 500));
        assert_eq!(f.check_send(30), SendCheck::Blocked, "everything sent");
        let ack = Packet { kind: PacketKind::Ack, psn: 3, sack: 2, acked: 3, sent_ps: 20, flags: F_DONE, ..Default::default() };
        match f.on_ack(1_000, &ack, &Signals::default(), None, &sh) {
            AckOutcome::Applied { done, seen, .. } => {
                assert!(done);
                assert_eq!((seen.sample.acked_bytes, seen.sample.rtt_ps), (2 * MSS as u64 + 500, 980));
            }
            AckOutcome::Ignored => panic!("applied"),
        }
        assert_eq!(f.sender_done_ps, Some(1_000));
        assert!(matches!(f.on_ack(2_000, &ack, &Signals::default(), None, &sh), AckOutcome::Ignored));
    }

    #[test]
    fn receiver_acks_every_n_packets_and_at_once_on_the_last() {
        let sh = shared(Retransmit::GoBackN, 2);
        let mut tx = flow(3 * MSS as u64, &sh);
        let mut rx = flow(3 * MSS as u64, &sh);
        let mut acts = Vec::new();
        let p0 = data(&mut tx, 0, &sh);
        let out = rx.on_data(100, &p0, &Signals::default(), false, &sh, &mut acts);
        assert!(out.delivered && !out.completed);
        assert!(matches!(acts[..], [RxAction::AckTimer(t)] if t == 100 + sh.t.ack_delay.0), "coalescing: the ACK waits");
        acts.clear();
        let p1 = data(&mut tx, 10, &sh);
        rx.on_data(110, &p1, &Signals::default(), false, &sh, &mut acts);
        assert_eq!(sent(&acts), vec![(PacketKind::Ack, 2, 2, false)]);
        // The timer armed for the first packet now finds nothing owed.
        assert!(rx.on_ack_timer(100 + sh.t.ack_delay.0, &sh).is_none());
        acts.clear();
        let p2 = data(&mut tx, 20, &sh);
        let out = rx.on_data(120, &p2, &Signals::default(), false, &sh, &mut acts);
        assert!(out.completed);
        assert_eq!(sent(&acts), vec![(PacketKind::Ack, 3, 1, true)]);
        assert_eq!(rx.finish_ps, Some(120));
    }

    #[test]
    fn one_delayed_ack_event_is_queued_and_pushed_again_for_a_later_deadline() {
        let sh = shared(Retransmit::GoBackN, 2);
        let d = sh.t.ack_delay.0;
        let mut tx = flow(10 * MSS as u64, &sh);
        let mut rx = flow(10 * MSS as u64, &sh);
        let mut acts = Vec::new();
        let deliver = |rx: &mut Flow, tx: &mut Flow, now: u64, acts: &mut Vec<RxAction>| {
            acts.clear();
            let p = data(tx, now, &sh);
            rx.on_data(now, &p, &Signals::default(), false, &sh, acts);
        };
        deliver(&mut rx, &mut tx, 100, &mut acts);
        assert!(matches!(acts[..], [RxAction::AckTimer(t)] if t == 100 + d), "the first deadline queues an event");
        deliver(&mut rx, &mut tx, 110, &mut acts);
        assert_eq!(sent(&acts), vec![(PacketKind::Ack, 2, 2, false)]);
        // Armed again while the first event is still queued: no second event.
        deliver(&mut rx, &mut tx, 200, &mut acts);
        assert!(acts.is_empty(), "{acts:?}");
        // The queued event finds the later deadline and goes again for it.
        assert!(!rx.ack_timer_stale());
        assert!(matches!(rx.on_ack_timer(100 + d, &sh), Some(RxAction::AckTimer(t)) if t == 200 + d));
        // Armed once more before that event pops: still one event.
        deliver(&mut rx, &mut tx, 210, &mut acts);
        assert_eq!(sent(&acts), vec![(PacketKind::Ack, 4, 2, false)]);
        deliver(&mut rx, &mut tx, 300, &mut acts);
        assert!(acts.is_empty(), "{acts:?}");
        assert!(!rx.ack_timer_stale());
        assert!(matches!(rx.on_ack_timer(200 + d, &sh), Some(RxAction::AckTimer(t)) if t == 300 + d));
        // Its deadline: due, and the held ACK goes.
        assert!(!rx.ack_timer_stale());
        let ack = rx.on_ack_timer(300 + d, &sh);
        assert!(matches!(ack, Some(RxAction::Send(p, _)) if p.kind == PacketKind::Ack && p.acked == 1));
        // Nothing queued now: the next packet queues an event of its own.
        deliver(&mut rx, &mut tx, 400 + d, &mut acts);
        assert!(matches!(acts[..], [RxAction::AckTimer(t)] if t == 400 + 2 * d));
        deliver(&mut rx, &mut tx, 410 + d, &mut acts);
        assert_eq!(sent(&acts), vec![(PacketKind::Ack, 7, 2, false)]);
        assert!(rx.ack_timer_stale(), "nothing owed");
        // Stale, it leaves no event queued: the next deadline queues one.
        deliver(&mut rx, &mut tx, 500 + 2 * d, &mut acts);
        assert!(matches!(acts[..], [RxAction::AckTimer(t)] if t == 500 + 3 * d));
    }

    #[test]
    fn go_back_n_discards_out_of_order_data_and_nacks_the_hole_once_per_interval() {
        let sh = shared(Retransmit::GoBackN, 1);
        let mut tx = flow(4 * MSS as u64, &sh);
        let mut rx = flow(4 * MSS as u64, &sh);
        let pkts: Vec<Packet> = (0..4).map(|i| data(&mut tx, i, &sh)).collect();
        let mut acts = Vec::new();
        let out = rx.on_data(100, &pkts[1], &Signals::default(), false, &sh, &mut acts);
        assert!(out.discarded);
        assert_eq!(sent(&acts), vec![(PacketKind::Nack, 0, 0, false)]);
        acts.clear();
        rx.on_data(200, &pkts[2], &Signals::default(), false, &sh, &mut acts);
        assert!(acts.is_empty(), "the same hole is not NACKed again within nack_interval");
        rx.on_data(100 + sh.t.nack_interval.0, &pkts[3], &Signals::default(), false, &sh, &mut acts);
        assert_eq!(sent(&acts), vec![(PacketKind::Nack, 0, 0, false)]);
        // The sender goes back to the hole.
        let nack = Packet { kind: PacketKind::Nack, psn: 0, ..Default::default() };
        assert_eq!(tx.on_nack(300, &nack, &sh), Some(false));
        assert_eq!(tx.check_send(300), SendCheck::Send(0, false));
        assert!(tx.send(300, 0, false, 100_000_000_000, &sh).resend);
    }

    #[test]
    fn selective_receiver_nacks_exactly_the_trimmed_packet_and_the_sender_resends_it_first() {
        let sh = shared(Retransmit::Selective, 1);
        let mut tx = flow(3 * MSS as u64, &sh);
        let mut rx = flow(3 * MSS as u64, &sh);
        let pkts: Vec<Packet> = (0..3).map(|i| data(&mut tx, i, &sh)).collect();
        let mut acts = Vec::new();
        rx.on_data(100, &pkts[0], &Signals::default(), false, &sh, &mut acts);
        acts.clear();
        let trimmed = Packet { flags: pkts[1].flags | F_TRIMMED, wire: 64, ..pkts[1] };
        let out = rx.on_data(110, &trimmed, &Signals::default(), false, &sh, &mut acts);
        assert!(!out.delivered);
        assert_eq!(sent(&acts), vec![(PacketKind::Nack, 1, 0, false)]);
        // Packet 2 arrives: held out of order, ACKed selectively.
        acts.clear();
        rx.on_data(120, &pkts[2], &Signals::default(), false, &sh, &mut acts);
        assert_eq!(sent(&acts), vec![(PacketKind::Ack, 1, 1, false)]);
        assert_eq!(rx.rcv_nxt, 1);
        let nack = Packet { kind: PacketKind::Nack, psn: 1, ..Default::default() };
        tx.on_nack(200, &nack, &sh);
        assert_eq!(tx.check_send(200), SendCheck::Send(1, true));
        let again = tx.send(200, 1, true, 100_000_000_000, &sh);
        assert!(again.resend);
        acts.clear();
        let out = rx.on_data(300, &again.packet, &Signals::default(), false, &sh, &mut acts);
        assert!(out.completed, "the resend fills the hole and completes the flow");
    }

    /// A flow under NSCC starting with a window of `pkts` full packets; with
    /// quick adapt and base-RTT updates off, only a NACK (one packet less) or
    /// a timeout (one less) moves the window within these tests.
    fn windowed(size: u64, pkts: u64, sh: &FlowShared) -> Flow {
        let c = NsccConfig { init_cwnd: Some(crate::units::Size(pkts * MSS as u64)), quick_adapt: false, update_base_rtt: false, ..Default::default() };
        nscc_flow(size, c, sh)
    }

    #[test]
    fn selective_resends_count_against_the_window_and_a_nack_frees_the_room_its_resend_takes() {
        let sh = shared(Retransmit::Selective, 1);
        let mut f = windowed(10 * MSS as u64, 3, &sh);
        let cwnd = f.cc.cwnd();
        assert_eq!(cwnd, 3 * MSS as u64);
        for i in 0..3 {
            data(&mut f, i, &sh);
        }
        assert_eq!(f.inflight_bytes(), 3 * MSS as u64);
        assert_eq!(f.check_send(10), SendCheck::Blocked, "window full");
        // Packet 1 is trimmed: the NACK takes it out of flight and queues it.
        let nack = Packet { kind: PacketKind::Nack, psn: 1, ..Default::default() };
        f.on_nack(100, &nack, &sh);
        assert_eq!(f.inflight_bytes(), 2 * MSS as u64);
        // NSCC cut its window by one packet on the NACK: the resend does not fit.
        assert_eq!(f.cc.cwnd(), 2 * MSS as u64);
        assert_eq!(f.check_send(100), SendCheck::Blocked, "a resend waits for the window too");
        // An ACK for packet 0 makes room: the resend goes before new data.
        let ack = Packet { kind: PacketKind::Ack, psn: 1, sack: 0, acked: 1, sent_ps: 0, ..Default::default() };
        f.on_ack(200, &ack, &Signals::default(), None, &sh);
        assert_eq!(f.inflight_bytes(), MSS as u64);
        let cwnd = f.cc.cwnd();
        assert!(cwnd >= 2 * MSS as u64 && cwnd < 3 * MSS as u64, "{cwnd}");
        assert_eq!(f.check_send(200), SendCheck::Send(1, true));
        f.send(200, 1, true, 100_000_000_000, &sh);
        assert_eq!(f.inflight_bytes(), 2 * MSS as u64);
        assert_eq!(f.check_send(210), SendCheck::Blocked);
        // A selective ACK of packet 2 (beyond the hole) takes it out of flight.
        let sack = Packet { kind: PacketKind::Ack, psn: 1, sack: 2, acked: 1, sent_ps: 0, ..Default::default() };
        f.on_ack(300, &sack, &Signals::default(), None, &sh);
        assert_eq!(f.inflight_bytes(), MSS as u64, "only the resend of packet 1 is in flight");
        assert_eq!(f.check_send(300), SendCheck::Send(3, false));
    }

    /// A receiver's answers to `p` (kind, psn, packets covered).
    fn answer(rx: &mut Flow, now: u64, p: &Packet, sh: &FlowShared) -> Vec<(PacketKind, u32, u16, bool)> {
        let mut acts = Vec::new();
        rx.on_data(now, p, &Signals::default(), false, sh, &mut acts);
        sent(&acts)
    }

    #[test]
    fn ack_request_flags_the_packet_that_fills_the_window_and_is_acked_at_once() {
        let mut sh = shared(Retransmit::Selective, 8);
        sh.t.ack_request = true;
        // Window of 4 packets: a packet is flagged when the bytes in flight
        // after it plus one more packet reach the window (htsim's rule), so
        // the third and the fourth.
        let mut f = windowed(10 * MSS as u64, 4, &sh);
        let pkts: Vec<Packet> = (0..4).map(|i| data(&mut f, i, &sh)).collect();
        let flagged: Vec<bool> = pkts.iter().map(|p| p.flags & F_AR != 0).collect();
        assert_eq!(flagged, [false, false, true, true]);
        assert_eq!(f.check_send(5), SendCheck::Blocked);
        // The receiver coalesces (ack_every 8) until the flagged packet, then ACKs at once.
        let mut rx = windowed(10 * MSS as u64, 4, &sh);
        assert!(answer(&mut rx, 10, &pkts[0], &sh).is_empty());
        assert!(answer(&mut rx, 11, &pkts[1], &sh).is_empty());
        assert_eq!(answer(&mut rx, 12, &pkts[2], &sh), [(PacketKind::Ack, 3, 3, false)]);
        assert_eq!(answer(&mut rx, 13, &pkts[3], &sh), [(PacketKind::Ack, 4, 1, false)]);
        // The last packet of a flow and every resend are flagged too.
        let mut g = windowed(2 * MSS as u64, 8, &sh);
        assert_eq!(data(&mut g, 0, &sh).flags & F_AR, 0);
        assert_ne!(data(&mut g, 1, &sh).flags & F_AR, 0, "last packet");
        let nack = Packet { kind: PacketKind::Nack, psn: 0, ..Default::default() };
        g.on_nack(2, &nack, &sh);
        assert_ne!(data(&mut g, 3, &sh).flags & F_AR, 0, "resend");
        // Without ack_request: no flag, and the flagged bit is ignored by the receiver.
        let plain = shared(Retransmit::Selective, 8);
        let mut h = windowed(10 * MSS as u64, 4, &plain);
        assert!((0..4).all(|i| data(&mut h, i, &plain).flags & F_AR == 0));
        let mut rx = windowed(10 * MSS as u64, 4, &plain);
        for p in &pkts[..3] {
            assert!(answer(&mut rx, 20, p, &plain).is_empty());
        }
    }

    #[test]
    fn an_ack_request_is_answered_again_when_held_data_drains() {
        let mut sh = shared(Retransmit::Selective, 8);
        sh.t.ack_request = true;
        sh.t.nack_threshold = 8;
        let mut f = windowed(10 * MSS as u64, 10, &sh);
        let pkts: Vec<Packet> = (0..4).map(|i| data(&mut f, i, &sh)).collect();
        let ar = |p: &Packet| Packet { flags: p.flags | F_AR, ..*p };
        let mut rx = windowed(10 * MSS as u64, 10, &sh);
        assert!(answer(&mut rx, 10, &pkts[0], &sh).is_empty());
        // Packet 2 arrives flagged, ahead of packet 1: ACKed at once (it is out of order anyway).
        assert_eq!(answer(&mut rx, 11, &ar(&pkts[2]), &sh), [(PacketKind::Ack, 1, 2, false)]);
        // Packet 1 fills the hole: the held data drains, the request is owed again.
        assert_eq!(answer(&mut rx, 12, &pkts[1], &sh), [(PacketKind::Ack, 3, 1, false)]);
        // Then coalescing resumes.
        assert!(answer(&mut rx, 13, &pkts[3], &sh).is_empty());
        // Without the flag, filling the hole is coalesced.
        let mut plain = sh.clone();
        plain.t.ack_request = false;
        let mut rx = windowed(10 * MSS as u64, 10, &plain);
        answer(&mut rx, 10, &pkts[0], &plain);
        answer(&mut rx, 11, &pkts[2], &plain);
        assert!(answer(&mut rx, 12, &pkts[1], &plain).is_empty());
    }

    #[test]
    fn nscc_wire_window_counts_headers_in_flight_and_acked() {
        let sh = shared(Retransmit::Selective, 1);
        // A 3100-byte window: 3 payload packets of 1000 fit, but only 2 wire packets of 1064.
        for (wire, fit, unit) in [(false, 3, MSS as u64), (true, 2, MSS as u64 + 64)] {
            let s = sh.clone();
            let window_units = if wire { WindowUnits::Wire } else { WindowUnits::Payload };
            let c = NsccConfig { init_cwnd: Some(crate::units::Size(3_100)), quick_adapt: false, update_base_rtt: false, window_units, ..Default::default() };
            let mut f = nscc_flow(10 * MSS as u64, c, &s);
            for i in 0..fit {
                data(&mut f, i, &s);
            }
            assert_eq!(f.inflight_bytes(), fit * unit, "wire {wire}");
            assert_eq!(f.check_send(10), SendCheck::Blocked, "wire {wire}");
            // A selective ACK of packet 1 frees one packet in the window's units.
            let ack = Packet { kind: PacketKind::Ack, psn: 0, sack: 1, acked: 1, sent_ps: 0, ..Default::default() };
            let AckOutcome::Applied { seen, .. } = f.on_ack(100, &ack, &Signals::default(), None, &s) else { panic!() };
            assert_eq!((seen.sample.acked_bytes, seen.sample.inflight_bytes), (unit, (fit - 1) * unit), "wire {wire}");
        }
    }

    #[test]
    fn a_nack_for_a_packet_already_out_of_flight_frees_nothing_twice() {
        let sh = shared(Retransmit::Selective, 1);
        let mut f = windowed(10 * MSS as u64, 4, &sh);
        for i in 0..4 {
            data(&mut f, i, &sh);
        }
        let nack = Packet { kind: PacketKind::Nack, psn: 2, ..Default::default() };
        f.on_nack(100, &nack, &sh);
        f.on_nack(110, &nack, &sh);
        assert_eq!(f.inflight_bytes(), 3 * MSS as u64);
        // The timeout takes everything out of flight; the first unacknowledged packet goes first.
        assert!(matches!(f.on_rto_timer(RTO, &sh), RtoOutcome::Fired { .. }));
        assert_eq!(f.inflight_bytes(), 0);
        assert_eq!(f.check_send(RTO), SendCheck::Send(0, true));
        f.send(RTO, 0, true, 100_000_000_000, &sh);
        assert_eq!(f.inflight_bytes(), MSS as u64);
        // A late ACK of a packet sent before the timeout frees nothing it no longer holds.
        let ack = Packet { kind: PacketKind::Ack, psn: 0, sack: 3, acked: 1, sent_ps: 0, ..Default::default() };
        f.on_ack(RTO + 10, &ack, &Signals::default(), None, &sh);
        assert_eq!(f.inflight_bytes(), MSS as u64);
    }

    /// rud with an ACK per 4 full packets (4 x 1064 wire bytes) and ack requests.
    fn rud(ack_request: bool) -> FlowShared {
        let mut sh = shared(Retransmit::Selective, 1);
        sh.t.delivery = Delivery::Rud;
        sh.t.ack_bytes = crate::units::Size(4 * (MSS as u64 + 64));
        sh.t.ack_request = ack_request;
        sh
    }

    /// The control packets a receiver sent in answer to `p`.
    fn answers(rx: &mut Flow, now: u64, p: &Packet, sh: &FlowShared) -> Vec<Packet> {
        let mut acts = Vec::new();
        rx.on_data(now, p, &Signals::default(), false, sh, &mut acts);
        acts.iter().filter_map(|a| if let RxAction::Send(p, _) = a { Some(*p) } else { None }).collect()
    }

    #[test]
    fn rud_receiver_acks_by_bytes_in_any_order_and_at_once_on_first_ce_request_duplicate_and_last() {
        let sh = rud(true);
        let mut tx = flow(12 * MSS as u64, &sh);
        let pkts: Vec<Packet> = (0..12).map(|i| data(&mut tx, i, &sh)).collect();
        let ce = |p: &Packet| Packet { flags: p.flags | F_CE, ..*p };
        let ar = |p: &Packet| Packet { flags: p.flags | F_AR, ..*p };
        let mut rx = flow(12 * MSS as u64, &sh);
        // (cumulative point, trigger, packets covered, CE covered, bitmap, final) of each answer.
        let mut step = |now: u64, p: &Packet| -> Vec<(u32, u32, u16, u16, u32, bool)> {
            answers(&mut rx, now, p, &sh).iter().map(|a| {
                assert_eq!(a.kind, PacketKind::Ack);
                (a.psn, a.sack, a.acked, a.ce, a.sack_bitmap(), a.flags & F_DONE != 0)
            }).collect()
        };
        // The first packet: at once.
        assert_eq!(step(10, &pkts[0]), [(1, 0, 1, 0, 0, false)]);
        // In order, and then out of order (packet 3 missing): held until 4 x 1064 bytes.
        assert!(step(11, &pkts[1]).is_empty());
        assert!(step(12, &pkts[2]).is_empty());
        assert!(step(13, &pkts[4]).is_empty(), "a packet beyond a hole waits like any other");
        // The bitmap starts past the cumulative point (4) and names 4 and 5.
        assert_eq!(step(14, &pkts[5]), [(3, 5, 4, 0, 0b11, false)]);
        // CE: at once.
        assert_eq!(step(15, &ce(&pkts[6])), [(3, 6, 1, 1, 0b111, false)]);
        // A copy of a held packet: at once.
        assert_eq!(step(16, &pkts[4]), [(3, 4, 0, 0, 0b111, false)]);
        // The sender's request: at once, and owed again when the held data drains.
        assert_eq!(step(17, &ar(&pkts[7])), [(3, 7, 1, 0, 0b1111, false)]);
        assert_eq!(step(18, &pkts[3]), [(8, 3, 1, 0, 0, false)]);
        // Coalescing resumes; the last packet completes the flow: the final ACK at once.
        assert!(step(19, &pkts[8]).is_empty());
        assert!(step(20, &pkts[9]).is_empty());
        assert!(step(21, &pkts[10]).is_empty());
        assert_eq!(step(22, &pkts[11]), [(12, 11, 4, 0, 0, true)]);
    }

    #[test]
    fn rud_nacks_only_trims_with_their_reason_and_acks_a_trimmed_copy_of_held_data() {
        let sh = rud(false);
        let mut tx = flow(8 * MSS as u64, &sh);
        let pkts: Vec<Packet> = (0..8).map(|i| data(&mut tx, i, &sh)).collect();
        let mut rx = flow(8 * MSS as u64, &sh);
        answers(&mut rx, 10, &pkts[0], &sh);
        // Far beyond a hole: no gap NACK, whatever nack_threshold says.
        assert!(answers(&mut rx, 11, &pkts[6], &sh).is_empty());
        let trim = |p: &Packet, flags: u8| Packet { flags: p.flags | flags, wire: 64, ..*p };
        let n = answers(&mut rx, 12, &trim(&pkts[2], F_TRIMMED), &sh);
        assert_eq!((n[0].kind, n[0].psn, n[0].reason), (PacketKind::Nack, 2, NackReason::Trimmed));
        let n = answers(&mut rx, 13, &trim(&pkts[3], F_TRIMMED | F_TRIMMED_LAST_HOP), &sh);
        assert_eq!((n[0].kind, n[0].psn, n[0].reason), (PacketKind::Nack, 3, NackReason::TrimmedLastHop));
        // A trimmed copy of packet 6, which is held: an ACK instead.
        let a = answers(&mut rx, 14, &trim(&pkts[6], F_TRIMMED), &sh);
        assert_eq!((a[0].kind, a[0].psn), (PacketKind::Ack, 1));
        // The sender learns of packet 6 from the bitmap of a coalesced ACK triggered by packet 7.
        let mut s = windowed(8 * MSS as u64, 8, &sh);
        for i in 0..8 {
            data(&mut s, i, &sh);
        }
        let ack = Packet { kind: PacketKind::Ack, psn: 1, sack: 7, acked: 2, sent_ps: 0, payload: 0b110000, ..Default::default() };
        assert_eq!(ack.sack_base(), 2);
        s.on_ack(100, &ack, &Signals::default(), None, &sh);
        assert_eq!(s.inflight_bytes(), 5 * MSS as u64, "packets 1 to 5 in flight; 0, 6 and 7 acknowledged");
        // Go-back-N and selective gap NACKs say so.
        let gbn = shared(Retransmit::GoBackN, 1);
        let mut g = flow(4 * MSS as u64, &gbn);
        let gp: Vec<Packet> = (0..4).map(|i| data(&mut g, i, &gbn)).collect();
        let mut grx = flow(4 * MSS as u64, &gbn);
        assert_eq!(answers(&mut grx, 10, &gp[2], &gbn)[0].reason, NackReason::Gap);
    }

    #[test]
    fn a_nack_carries_its_reason_to_nscc_and_only_a_trim_cuts_the_window() {
        let sh = shared(Retransmit::Selective, 1);
        let c = NsccConfig {
            init_cwnd: Some(crate::units::Size(8 * MSS as u64)),
            quick_adapt: false,
            update_base_rtt: false,
            gap_nack: crate::cc::nscc::GapNack::Spec,
            ..Default::default()
        };
        let mut f = nscc_flow(10 * MSS as u64, c, &sh);
        for i in 0..4 {
            data(&mut f, i, &sh);
        }
        let nack = |psn: u32, reason: NackReason| Packet { kind: PacketKind::Nack, psn, reason, ..Default::default() };
        f.on_nack(100, &nack(1, NackReason::Gap), &sh);
        let Cc::Nscc(n) = &f.cc else { panic!() };
        assert_eq!((n.cwnd, n.avg_delay_ps, n.trigger_qa, n.stats.gap_nacks), (8_000.0, 0.0, false, 1), "a gap is no congestion signal");
        f.on_nack(110, &nack(2, NackReason::Trimmed), &sh);
        let Cc::Nscc(n) = &f.cc else { panic!() };
        assert_eq!(n.cwnd, 7_000.0);
        assert!(n.trigger_qa && n.avg_delay_ps > 0.0);
        f.on_nack(120, &nack(3, NackReason::TrimmedLastHop), &sh);
        let Cc::Nscc(n) = &f.cc else { panic!() };
        assert_eq!(n.cwnd, 6_000.0, "without receiver credits a last-hop trim is a trim");
    }

    /// A rud flow of 10 packets under receiver credits with `speculative` bytes.
    fn credited(speculative: u64, cc: Option<NsccConfig>) -> (FlowShared, Flow) {
        use super::super::rccc::RcccConfig;
        use crate::units::{Size, Time};
        let mut sh = shared(Retransmit::Selective, 1);
        sh.t.delivery = Delivery::Rud;
        sh.t.ack_request = true;
        sh.t.rccc = Some(RcccConfig { network_rtt: Some(Time(10_000_000)), speculative: Some(Size(speculative)), ..Default::default() });
        if let Some(c) = cc {
            sh.t.cc = crate::cc::CcKind::Nscc;
            sh.t.cc_sections.insert(CcConfig::Nscc(c));
        }
        let p = FlowParams { line_rate_bps: 100_000_000_000, base_rtt_ps: 10_000_000, mss: MSS, packet_bytes: MSS + 64, hops: 2 };
        let spec = FlowInit { src: HostId(0), dst: HostId(1), size: 10 * MSS as u64, start_ps: 0, rate_cap: u64::MAX, name: "f" };
        let f = Flow::new(FlowId(0), &spec, &sh.t, &FlowBuild::new(&sh.t, MSS + 64, 1), &p, 7);
        (sh, f)
    }

    #[test]
    fn credits_gate_the_sender_and_its_packets_tell_the_receiver_what_it_wants() {
        let (sh, mut f) = credited(3 * 1064, None);
        let c = |f: &Flow| f.credit.as_ref().unwrap().tx.clone();
        assert_eq!(c(&f).max_credit, 187_500, "1.5 x 10 us x 100 Gb/s");
        // Three packets of 1,064 wire bytes spend the speculative bytes.
        let mut pkts = Vec::new();
        for i in 0..3 {
            let mut p = data(&mut f, i, &sh);
            p.set_credit_quanta(f.credit_target(0, &sh));
            pkts.push(p);
        }
        assert_eq!(f.check_send(10), SendCheck::Blocked, "no credit left");
        assert_eq!((c(&f).credit, c(&f).spent), (0, 3 * 1064));
        // The last asks for the 7 packets left, holding no credit: 7 x 1,064 B = 29.1 -> 30 quanta.
        assert_eq!(pkts[2].credit_quanta(), 30);
        assert!(pkts[2].flags & F_AR != 0, "the packet spending the last credit asks for an ACK");
        assert!(pkts[0].flags & F_AR == 0);
        // The receiver: a higher target asks its pacer, the same one does not.
        let (_, mut rx) = credited(3 * 1064, None);
        let mut acts = Vec::new();
        assert!(rx.on_data(100, &pkts[0], &Signals::default(), false, &sh, &mut acts).pull);
        assert!(!rx.on_data(101, &pkts[0], &Signals::default(), false, &sh, &mut acts).pull, "a copy");
        // Each packet spent what it asks for: the same target, no new ask.
        assert_eq!(pkts[0].credit_quanta(), 30);
        assert!(!rx.on_data(102, &pkts[2], &Signals::default(), false, &sh, &mut acts).pull, "the same target");
        // A trim asks again (its resend needs credit), whatever its target.
        let trimmed = Packet { flags: pkts[1].flags | F_TRIMMED, wire: 64, ..pkts[1] };
        let out = rx.on_data(103, &trimmed, &Signals::default(), false, &sh, &mut acts);
        assert!(out.pull && !out.delivered);
        // A grant of 8 quanta lets the sender go on; the first answer ended speculation.
        let grant = rx.credit_packet(8, &sh);
        assert_eq!((grant.kind, grant.src, grant.dst, grant.credit_quanta()), (PacketKind::Credit, HostId(1), HostId(0), 8));
        f.on_credit(200, &grant).unwrap();
        assert_eq!(c(&f).credit, 2048);
        assert!(matches!(f.check_send(200), SendCheck::Send(3, false)));
        // A sender that speculates drops what is left on its first ACK.
        let (_, mut g) = credited(5_000, None);
        data(&mut g, 0, &sh);
        assert_eq!(c(&g).credit, 5_000 - 1064);
        let ack = Packet { kind: PacketKind::Ack, psn: 1, sack: 0, acked: 1, ..Default::default() };
        g.on_ack(300, &ack, &Signals::default(), None, &sh);
        assert_eq!(c(&g).credit, 0);
        assert_eq!(g.check_send(300), SendCheck::Blocked);
        // With no credit, a timeout sends one request carrying the target.
        let rts = g.credit_request(400, &sh).expect("a request");
        assert_eq!((rts.kind, rts.src, rts.dst), (PacketKind::Credit, HostId(0), HostId(1)));
        assert!(g.credit_request(401, &sh).is_none(), "one per interval");
        assert_eq!(rts.credit_quanta(), 38, "9 packets left: 9,576 B = 37.4 -> 38 quanta");
        assert!(rx.on_credit_request(&rts));
        assert_eq!(rx.credit.as_ref().unwrap().rx.target, 38);
    }

    #[test]
    fn with_receiver_credits_a_last_hop_trim_spares_the_nscc_window() {
        let c = NsccConfig {
            init_cwnd: Some(crate::units::Size(8 * MSS as u64)),
            quick_adapt: false,
            update_base_rtt: false,
            ..Default::default()
        };
        let (sh, mut f) = credited(100_000, Some(c));
        for i in 0..4 {
            data(&mut f, i, &sh);
        }
        let nack = |psn: u32, reason: NackReason| Packet { kind: PacketKind::Nack, psn, reason, ..Default::default() };
        f.on_nack(100, &nack(1, NackReason::TrimmedLastHop), &sh);
        let Cc::Nscc(n) = &f.cc else { panic!() };
        assert_eq!(n.cwnd, 8_000.0, "the receiver's credits pace its own link");
        assert!(n.trigger_qa && n.avg_delay_ps > 0.0, "still a congestion signal");
        f.on_nack(110, &nack(2, NackReason::Trimmed), &sh);
        let Cc::Nscc(n) = &f.cc else { panic!() };
        assert_eq!(n.cwnd, 7_000.0, "a trim in the fabric cuts the window");
    }

    #[test]
    fn retransmission_timer_waits_for_its_deadline_fires_backs_off_and_rewinds() {
        let sh = shared(Retransmit::GoBackN, 1);
        let mut f = flow(2 * MSS as u64, &sh);
        data(&mut f, 0, &sh);
        data(&mut f, 10, &sh);
        assert_eq!(f.check_send(20), SendCheck::Blocked);
        // An ACK for packet 0 moves the deadline: the old event re-arms.
        let ack = Packet { kind: PacketKind::Ack, psn: 1, sack: 0, acked: 1, ..Default::default() };
        f.on_ack(1_000, &ack, &Signals::default(), None, &sh);
        assert_eq!(f.on_rto_timer(RTO, &sh), RtoOutcome::Rearm(1_000 + RTO));
        // Nothing more: the timer fires, doubles the timeout and rewinds to snd_una.
        assert_eq!(f.on_rto_timer(1_000 + RTO, &sh), RtoOutcome::Fired { wants_timer: false, rearm: 1_000 + 3 * RTO });
        assert_eq!((f.timeouts, f.rto_backoff), (1, 2));
        assert_eq!(f.check_send(1_000 + RTO), SendCheck::Send(1, false));
    }

    /// `timeout = "packet"` (htsim's UEC sender): the timer runs from the
    /// oldest packet in flight's send; a timeout takes that packet alone,
    /// without backoff; acknowledged and resent packets no longer count
    /// from their old sends.
    #[test]
    fn per_packet_timer_expires_the_oldest_packet_in_flight_alone_without_backoff() {
        let t = TransportConfig { mtu: MSS, delivery: Delivery::Rud, retransmit: Retransmit::Selective, timeout: Timeout::Packet, ..Default::default() };
        let sh = FlowShared { t, csig: None, stamp: None, tag_bytes: 0, int_bytes: 0 };
        let mut f = flow(4 * MSS as u64, &sh);
        for (i, at) in [0, 10, 20, 30].into_iter().enumerate() {
            assert_eq!(data(&mut f, at, &sh).psn, i as u32);
        }
        assert_eq!(f.rto_at, RTO, "armed by the first send");
        // Packet 0 is acknowledged (packets 1.. are not): the deadline is
        // packet 1's, 10 ps later, and the event waits again.
        let ack = Packet { kind: PacketKind::Ack, psn: 1, sack: 0, acked: 1, ..Default::default() };
        f.on_ack(50, &ack, &Signals::default(), None, &sh);
        assert_eq!(f.rto_at, RTO, "an ACK does not move the timer");
        assert_eq!(f.on_rto_timer(RTO, &sh), RtoOutcome::Rearm(10 + RTO));
        // Packet 1 times out alone; packet 2's deadline is next, unscaled.
        assert_eq!(f.on_rto_timer(10 + RTO, &sh), RtoOutcome::Fired { wants_timer: false, rearm: 20 + RTO });
        assert_eq!((f.timeouts, f.rto_backoff), (1, 1));
        assert_eq!(f.inflight_bytes(), 2 * MSS as u64, "packets 2 and 3 stay in flight");
        assert_eq!(f.check_send(10 + RTO), SendCheck::Send(1, true));
        data(&mut f, 15 + RTO, &sh);
        // Packet 3 is acknowledged selectively; packet 2 times out, and the
        // timer then runs to packet 1's resend, skipping packet 3.
        let sack = Packet { kind: PacketKind::Ack, psn: 1, sack: 3, acked: 1, ..Default::default() };
        f.on_ack(16 + RTO, &sack, &Signals::default(), None, &sh);
        assert_eq!(f.on_rto_timer(20 + RTO, &sh), RtoOutcome::Fired { wants_timer: false, rearm: 15 + 2 * RTO });
        assert_eq!(f.timeouts, 2);
        assert_eq!(f.check_send(20 + RTO), SendCheck::Send(2, true));
        // Packet 1's resend times out in turn, one RTO after it was sent.
        data(&mut f, 21 + RTO, &sh);
        assert_eq!(f.on_rto_timer(15 + 2 * RTO, &sh), RtoOutcome::Fired { wants_timer: false, rearm: 21 + 2 * RTO });
        assert_eq!((f.timeouts, f.rto_backoff), (3, 1));
        // Everything acknowledged: the sender is done and the timer idle.
        let all = Packet { kind: PacketKind::Ack, psn: 3, sack: 3, acked: 2, ..Default::default() };
        f.on_ack(30 + 2 * RTO, &all, &Signals::default(), None, &sh);
        assert!(f.sender_done_ps.is_some());
        assert_eq!(f.on_rto_timer(21 + 2 * RTO, &sh), RtoOutcome::Idle);
    }

    /// A DCQCN flow that cuts its rate at each CNP and takes a recovery
    /// step `inc` ps after a cut, under `sh`.
    fn dcqcn_flow(inc: u64, sh: &FlowShared) -> Flow {
        use crate::cc::dcqcn::DcqcnConfig;
        let p = FlowParams { line_rate_bps: 100_000_000_000, base_rtt_ps: 10_000_000, mss: MSS, packet_bytes: MSS + 64, hops: 2 };
        let spec = FlowInit { src: HostId(0), dst: HostId(1), size: 100 * MSS as u64, start_ps: 0, rate_cap: u64::MAX, name: "f" };
        let c = DcqcnConfig { decrease_timer: Some(crate::units::Time(0)), increase_timer: Some(crate::units::Time(inc)), ..Default::default() };
        let b = FlowBuild { cc: CcConfig::Dcqcn(c), lb: None, packet_bytes: MSS + 64, seed: 1, credits: None };
        Flow::new(FlowId(0), &spec, &sh.t, &b, &p, 7)
    }

    #[test]
    fn a_rate_change_re_paces_the_waiting_packet_as_ns3_does() {
        const LINE: u64 = 100_000_000_000;
        let tx = |w: u32, r: u64| tx_time_ps(w as u64, r);
        let cnp = Packet { kind: PacketKind::Cnp, ..Default::default() };
        for update in [PacingUpdate::OnSend, PacingUpdate::OnRateChange] {
            let mut sh = shared(Retransmit::GoBackN, 1);
            sh.t.pacing_update = update;
            let repace = update == PacingUpdate::OnRateChange;
            let mut f = dcqcn_flow(100_000, &sh);
            f.start(0);
            // A CNP before the first packet cuts the rate to R1: no packet
            // was sent, nothing moves.
            assert_eq!(f.on_cnp(0, &cnp, &sh), Some(false));
            let r1 = f.cc.rate();
            assert!(r1 < LINE, "{r1}");
            assert_eq!(f.next_send_ps, 0);
            // Packet 0 leaves at s: the next waits one serialization at R1.
            let s = 1_000;
            let w = data(&mut f, s, &sh).wire;
            let t = s + tx(w, r1);
            assert_eq!(f.check_send(s + 1), SendCheck::Paced(t));
            // The recovery step at t0 < t raises the rate to R2.
            let t0 = f.cc.next_timer().expect("the increase timer");
            assert!(s < t0 && t0 < t, "{t0}");
            assert!(f.on_cc_timer(t0, &sh));
            let r2 = f.cc.rate();
            assert!(r2 > r1, "{r2}");
            if repace {
                // The waiting packet moves earlier by tx(w, R1) - tx(w, R2):
                // it leaves at R2 from packet 0.
                assert_eq!(f.next_send_ps, t - (tx(w, r1) - tx(w, r2)));
                assert_eq!(f.next_send_ps, s + tx(w, r2));
            } else {
                assert_eq!(f.next_send_ps, t, "the rate applies from the next packet");
            }
            // A CNP at t1 cuts to R3: the packet moves later by tx(w, R3) - tx(w, R2).
            let (before, t1) = (f.next_send_ps, t0 + 1);
            assert_eq!(f.on_cnp(t1, &cnp, &sh), Some(false));
            let r3 = f.cc.rate();
            assert!(r3 < r2, "{r3}");
            let moved = if repace { tx(w, r3) - tx(w, r2) } else { 0 };
            assert_eq!(f.next_send_ps, before + moved);
            assert_eq!(f.check_send(t1), SendCheck::Paced(before + moved));
            // A send resets the gap at the rate of the moment, in both modes.
            let u = f.next_send_ps;
            let w = data(&mut f, u, &sh).wire;
            assert_eq!(f.next_send_ps, u + tx(w, f.cc.rate()));
        }
    }

    #[test]
    fn pacing_update_reads_its_two_values_and_refuses_others() {
        let t: TransportConfig = toml::from_str("pacing_update = \"on_rate_change\"\n").unwrap();
        assert_eq!(t.pacing_update, PacingUpdate::OnRateChange);
        assert_eq!(TransportConfig::default().pacing_update, PacingUpdate::OnSend);
        let e = toml::from_str::<TransportConfig>("pacing_update = \"always\"\n").unwrap_err().to_string();
        assert!(e.contains("on_send") && e.contains("on_rate_change"), "{e}");
    }

    #[test]
    fn a_per_packet_timer_needs_selective_recovery() {
        let t: TransportConfig = toml::from_str("timeout = \"packet\"\n").unwrap();
        assert!(t.timeout_error().is_some_and(|m| m.contains("go-back-N")));
        let t: TransportConfig = toml::from_str("timeout = \"packet\"\ndelivery = \"rud\"\n").unwrap();
        assert_eq!((t.timeout, t.timeout_error()), (Timeout::Packet, None));
    }
}

crate::id::index_by!(FlowId => Flow);
