//! Transport: flows (queue pairs) between host NICs.
//!
//! Sender: sends packet by packet when the congestion window allows and the
//! pacing time has come; NIC ports serve ACKs first, then active flows round
//! robin, one packet each. Receiver: in-order delivery with go-back-N (RoCE)
//! or selective retransmission, ACK every `ack_every` packets (immediately on
//! CE, loss or the last packet), NACK on a gap (rate-limited) or a trimmed
//! packet. A retransmission timer backs both up.
//!
//! Timers are fields, not queue entries: a flow keeps its deadline in
//! `rto_at` and has at most one `FlowTimer` event outstanding, which re-arms
//! itself if the deadline moved later.

use crate::cc::{AckSample, Cc, CnpDecision, CongestionControl, ReceiverCc};
use crate::net::packet::{Advice, Packet, PacketKind, F_CE, F_DONE, F_ECT, F_RTX, F_TRIMMED};
use crate::scenario::config::{Retransmit, TransportConfig};
use crate::scenario::FlowSpec;
use crate::sim::{Event, World};
use crate::monitor::signals::{FlowSignalMon, Series};
use crate::signal::int::IntStack;
use crate::signal::{CsigSample, Signals, NO_TAG, NO_WRITER};
use crate::sim::rng::{Purpose, Stream};
use crate::units::tx_time_ps;
use std::collections::VecDeque;

/// A host's NIC: its port and the flows with something to send.
#[derive(Debug)]
pub struct Host {
    pub port: u32,
    pub ring: VecDeque<u32>,
    /// Time of the pending `NicWake`, or `u64::MAX`.
    pub wake_at: u64,
}

/// One flow: sender and receiver state.
#[derive(Debug)]
pub struct Flow {
    pub id: u32,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start_ps: u64,
    pub npkts: u32,
    pub mss: u32,
    pub entropy: u32,
    pub base_rtt_ps: u64,
    /// Sending-rate cap from the scenario (u64::MAX: none).
    pub rate_cap: u64,
    pub cc: Cc,
    // sender
    pub started: bool,
    pub snd_una: u32,
    pub snd_nxt: u32,
    /// One past the highest packet ever sent: anything below it is a resend.
    pub high_sent: u32,
    /// Selective mode: per-packet acked bits and the resend queue.
    acked: Vec<u64>,
    rtx_queue: VecDeque<u32>,
    pub next_send_ps: u64,
    pub in_ring: bool,
    pub rto_at: u64,
    pub timer_pending: bool,
    pub rto_backoff: u32,
    pub sender_done_ps: Option<u64>,
    // receiver
    pub rcv_nxt: u32,
    received: Vec<u64>,
    pub pending_acks: u32,
    pub pending_ce: u32,
    pub last_nack_psn: u32,
    pub last_nack_ps: u64,
    pub finish_ps: Option<u64>,
    /// Reflect = worst: the worst signals over the packets the next ACK covers.
    pending_sig: Signals,
    /// The pending congestion-control timer event, or u64::MAX.
    pub cc_timer_at: u64,
    /// The receiver side of the flow's congestion control (notification
    /// point), the CNPs it sent and those it chose not to send.
    pub rcv_cc: ReceiverCc,
    pub cnps: u64,
    pub cnps_suppressed: u64,
    /// Delayed ACK: when the pending ACK must go at the latest, and the last
    /// data packet it covers (for the echo and the reflected signals).
    pub ack_at: u64,
    last_rx: Option<(Packet, Signals)>,
    // signals
    tag_rng: Stream,
    pub sigmon: FlowSignalMon,
    pub ccmon: crate::monitor::cc::FlowCcMon,
    // stats
    pub bytes_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub nacks: u64,
    pub trims: u64,
    pub ce_marks: u64,
}

fn bit(v: &[u64], i: u32) -> bool {
    v[(i / 64) as usize] >> (i % 64) & 1 == 1
}
fn set_bit(v: &mut [u64], i: u32) {
    v[(i / 64) as usize] |= 1 << (i % 64);
}

impl Flow {
    /// Payload bytes the receiver has in order.
    pub fn delivered_bytes(&self) -> u64 {
        (self.rcv_nxt as u64 * self.mss as u64).min(self.size)
    }

    pub fn new(id: u32, f: &FlowSpec, t: &TransportConfig, cc: Cc, entropy: u32, base_rtt_ps: u64, seed: u64) -> Flow {
        let npkts = f.size.div_ceil(t.mtu as u64) as u32;
        let selective = t.retransmit == Retransmit::Selective;
        let words = if selective { (npkts as usize).div_ceil(64) } else { 0 };
        Flow {
            id,
            src: f.src,
            dst: f.dst,
            size: f.size,
            start_ps: f.start.0,
            npkts,
            mss: t.mtu,
            entropy,
            base_rtt_ps,
            rate_cap: f.rate_cap,
            cc,
            started: false,
            snd_una: 0,
            snd_nxt: 0,
            high_sent: 0,
            acked: vec![0; words],
            rtx_queue: VecDeque::new(),
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
            last_nack_psn: u32::MAX,
            last_nack_ps: 0,
            finish_ps: None,
            pending_sig: Signals::default(),
            ack_at: u64::MAX,
            last_rx: None,
            cc_timer_at: u64::MAX,
            rcv_cc: ReceiverCc::new(&t.cc_config()),
            cnps: 0,
            cnps_suppressed: 0,
            tag_rng: Stream::new(seed, id as u64, Purpose::CsigTag),
            sigmon: FlowSignalMon::default(),
            ccmon: Default::default(),
            bytes_sent: 0,
            retransmits: 0,
            timeouts: 0,
            nacks: 0,
            trims: 0,
            ce_marks: 0,
        }
    }

    /// Payload bytes of packet `psn`.
    #[inline]
    pub fn payload(&self, psn: u32) -> u32 {
        let start = psn as u64 * self.mss as u64;
        (self.size - start).min(self.mss as u64) as u32
    }

    /// Payload bytes in packets [a, b).
    #[inline]
    fn bytes_between(&self, a: u32, b: u32) -> u64 {
        if b <= a {
            return 0;
        }
        (b as u64 * self.mss as u64).min(self.size) - a as u64 * self.mss as u64
    }

    fn inflight_bytes(&self) -> u64 {
        self.bytes_between(self.snd_una, self.snd_nxt)
    }

    fn selective(&self) -> bool {
        !self.acked.is_empty()
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
}

/// Why a flow could not send.
enum SendCheck {
    Send(u32, bool),
    /// Waiting for ACKs (window full, or everything sent).
    Blocked,
    /// Paced until this time.
    Paced(u64),
}

impl World {
    pub(crate) fn on_flow_start(&mut self, flow: u32) {
        let f = &mut self.flows[flow as usize];
        f.started = true;
        if f.npkts == 0 {
            f.finish_ps = Some(self.now);
            f.sender_done_ps = Some(self.now);
            self.stats.flows_completed += 1;
            return;
        }
        self.activate(flow);
    }

    /// Puts a flow on its NIC's ring (if not there) and kicks the NIC.
    fn activate(&mut self, flow: u32) {
        let f = &mut self.flows[flow as usize];
        if f.sender_done_ps.is_some() {
            return;
        }
        if !f.in_ring {
            f.in_ring = true;
            self.hosts[f.src as usize].ring.push_back(flow);
        }
        let port = self.hosts[f.src as usize].port;
        self.kick(port);
    }

    fn check_send(&mut self, flow: u32) -> SendCheck {
        let now = self.now;
        let f = &mut self.flows[flow as usize];
        let Some((psn, rtx)) = f.next_psn() else { return SendCheck::Blocked };
        if !rtx {
            let inflight = f.inflight_bytes();
            if inflight > 0 && inflight + f.payload(psn) as u64 > f.cc.cwnd() {
                return SendCheck::Blocked;
            }
        }
        if f.next_send_ps > now {
            return SendCheck::Paced(f.next_send_ps);
        }
        SendCheck::Send(psn, rtx)
    }

    /// The next data packet a host NIC sends: flows round robin, one packet each.
    /// (ACKs and NACKs never wait for this: they are committed on arrival.)
    pub(crate) fn nic_next(&mut self, host: u32) -> Option<u32> {
        let port = self.hosts[host as usize].port;
        if self.ports[port as usize].paused {
            return None;
        }
        let mut wake = u64::MAX;
        let n = self.hosts[host as usize].ring.len();
        for _ in 0..n {
            let flow = self.hosts[host as usize].ring.pop_front().expect("ring length");
            match self.check_send(flow) {
                SendCheck::Send(psn, rtx) => {
                    let pkt = self.make_data(flow, psn, rtx);
                    self.hosts[host as usize].ring.push_back(flow);
                    return Some(pkt);
                }
                SendCheck::Blocked => self.flows[flow as usize].in_ring = false,
                SendCheck::Paced(t) => {
                    wake = wake.min(t);
                    self.hosts[host as usize].ring.push_back(flow);
                }
            }
        }
        if wake != u64::MAX && wake < self.hosts[host as usize].wake_at {
            self.hosts[host as usize].wake_at = wake;
            self.q.push(wake, Event::NicWake { host });
        }
        None
    }

    fn make_data(&mut self, flow: u32, psn: u32, rtx: bool) -> u32 {
        let now = self.now;
        let t = &self.sc.transport;
        let (header, ecn, rto) = (t.header, t.ecn, t.rto.0);
        let line = self.ports[self.hosts[self.flows[flow as usize].src as usize].port as usize].rate_bps;
        let (tag_bytes, int_bytes) = (self.sig.tag_bytes, self.sig.int_bytes);
        let f = &mut self.flows[flow as usize];
        let payload = f.payload(psn);
        let tag = match &self.sc.signals.csig {
            Some(cs) => cs.fraction >= 1.0 || f.tag_rng.unit() < cs.fraction,
            None => false,
        };
        let wire = payload + header + if tag { tag_bytes } else { 0 } + int_bytes;
        if rtx {
            f.rtx_queue.pop_front();
        } else {
            f.snd_nxt = psn + 1;
        }
        let resend = psn < f.high_sent;
        f.high_sent = f.high_sent.max(psn + 1);
        if resend {
            f.retransmits += 1;
        }
        f.bytes_sent += wire as u64;
        f.cc.on_send(now, psn, wire);
        let rate = f.cc.rate().min(f.rate_cap);
        if rate < line {
            f.next_send_ps = now + tx_time_ps(wire as u64, rate);
        }
        if f.rto_at == u64::MAX {
            f.rto_at = now + rto * f.rto_backoff as u64;
        }
        let arm = !f.timer_pending;
        if arm {
            f.timer_pending = true;
        }
        let rto_at = f.rto_at;
        let p = Packet {
            kind: PacketKind::Data,
            flags: if ecn { F_ECT } else { 0 } | if resend { F_RTX } else { 0 },
            flow,
            src: f.src,
            dst: f.dst,
            psn,
            wire,
            payload,
            entropy: f.entropy,
            sent_ps: now,
            ..Default::default()
        };
        if arm {
            self.q.push(rto_at, Event::FlowTimer { flow });
        }
        if resend {
            self.stats.retransmits += 1;
        }
        let id = self.inject(p);
        if tag {
            if let Some(cs) = &self.sc.signals.csig {
                cs.init(self.pkts.sig_mut(id));
            }
        }
        id
    }

    pub(crate) fn host_receive(&mut self, host: u32, pkt: u32, port: u32) {
        let p = *self.pkts.get(pkt);
        let sig = if self.sig.on { *self.pkts.sig(pkt) } else { Signals::default() };
        let int = if self.pkts.has_int() { Some(*self.pkts.int(pkt)) } else { None };
        let int = int.as_ref();
        match p.kind {
            PacketKind::Pause => {
                self.consume(pkt);
                self.set_paused(port, p.flags & crate::net::packet::F_XOFF != 0);
            }
            PacketKind::Data => {
                self.consume(pkt);
                debug_assert_eq!(p.dst, host);
                self.receive_data(&p, &sig, int);
            }
            PacketKind::Ack => {
                self.consume(pkt);
                self.receive_ack(&p, &sig, int);
            }
            PacketKind::Nack => {
                self.consume(pkt);
                self.receive_nack(&p);
            }
            PacketKind::Cnp => {
                self.consume(pkt);
                let f = &mut self.flows[p.flow as usize];
                if f.sender_done_ps.is_none() {
                    let cnp = crate::cc::CnpSample { now_ps: self.now, fair_share_bps: p.advice.share_bps(), drain: p.advice.drain() };
                    f.cc.on_cnp(&cnp);
                    self.arm_cc_timer(p.flow);
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn send_ctrl(&mut self, flow: u32, kind: PacketKind, psn: u32, data: &Packet, acked: u32, ce: u32, done: bool, refl: Option<(&Signals, Option<&IntStack>)>) {
        let f = &self.flows[flow as usize];
        let reflect_bytes = match refl {
            Some((s, _)) if s.csig_type != NO_TAG => self.sig.tag_bytes,
            _ => 0,
        } + self.sig.int_bytes;
        let p = Packet {
            kind,
            flags: if done { F_DONE } else { 0 },
            flow,
            src: f.dst,
            dst: f.src,
            psn,
            sack: data.psn,
            wire: self.sc.transport.ack_size + reflect_bytes,
            entropy: f.entropy,
            acked: acked.min(u16::MAX as u32) as u16,
            ce: ce.min(u16::MAX as u32) as u16,
            sent_ps: data.sent_ps,
            advice: if kind == PacketKind::Cnp { data.advice } else { Advice::NONE },
            ..Default::default()
        };
        match kind {
            PacketKind::Ack => self.stats.acks_sent += 1,
            PacketKind::Nack => self.stats.nacks_sent += 1,
            _ => {}
        }
        let port = self.hosts[f.dst as usize].port;
        let id = self.inject(p);
        if let Some((s, int)) = refl {
            if self.pkts.has_signals() {
                *self.pkts.sig_mut(id) = *s;
            }
            if let Some(st) = int {
                *self.pkts.int_mut(id) = *st;
            }
        }
        self.push_ctrl(port, id);
    }

    fn receive_data(&mut self, p: &Packet, sig: &Signals, int: Option<&IntStack>) {
        let refl = Some((sig, int));
        let now = self.now;
        let flow = p.flow;
        let t = &self.sc.transport;
        let (ack_every, ack_on_ce, nack_threshold) = (t.ack_every, t.ack_on_ce, t.nack_threshold);
        let f = &mut self.flows[flow as usize];
        if f.finish_ps.is_some() {
            // Late duplicate after completion: re-ACK so the sender can finish.
            let n = f.npkts;
            self.send_ctrl(flow, PacketKind::Ack, n, p, 0, 0, true, refl);
            return;
        }
        if p.flags & F_TRIMMED != 0 {
            f.trims += 1;
            // Selective: NACK exactly the trimmed packet. Go-back-N asks for the
            // same packet whatever was trimmed: rate-limit those NACKs like gap
            // NACKs, or every trim would rewind the sender.
            if f.selective() {
                let ask = p.psn;
                f.last_nack_psn = ask;
                f.last_nack_ps = now;
                f.nacks += 1;
                self.send_ctrl(flow, PacketKind::Nack, ask, p, 0, 0, false, refl);
            } else {
                self.nack_hole(flow, p, refl);
            }
            return;
        }
        self.stats.data_packets_delivered += 1;
        let ce = (p.flags & F_CE != 0) as u32;
        self.maybe_cnp(flow, p, ce == 1);
        let f = &mut self.flows[flow as usize];
        f.ce_marks += ce as u64;
        let mut gap = false;
        let mut nack_gap = false;
        if f.selective() {
            if p.psn >= f.rcv_nxt && !bit(&f.received, p.psn) {
                set_bit(&mut f.received, p.psn);
                while f.rcv_nxt < f.npkts && bit(&f.received, f.rcv_nxt) {
                    f.rcv_nxt += 1;
                }
            }
            gap = p.psn > f.rcv_nxt;
            nack_gap = p.psn >= f.rcv_nxt.saturating_add(nack_threshold.max(1));
        } else if p.psn == f.rcv_nxt {
            f.rcv_nxt += 1;
        } else if p.psn > f.rcv_nxt {
            // Go-back-N: out-of-order data is discarded and the hole NACKed.
            self.stats.out_of_order_discards += 1;
            self.nack_hole(flow, p, refl);
            return;
        } else {
            // Duplicate of delivered data: ACK at once so a sender that went back moves on.
            let n = f.rcv_nxt;
            self.send_ctrl(flow, PacketKind::Ack, n, p, 0, 0, false, refl);
            return;
        }
        let f = &mut self.flows[flow as usize];
        f.pending_acks += 1;
        f.pending_ce += ce;
        let done = f.rcv_nxt == f.npkts;
        if done {
            f.finish_ps = Some(now);
            self.stats.flows_completed += 1;
        }
        let worst = match &self.sc.signals.csig {
            Some(cs) if cs.reflect == crate::signal::csig::Reflect::Worst => Some(cs),
            _ => None,
        };
        let f = &mut self.flows[flow as usize];
        if let Some(cs) = worst {
            // Keep the worst tag over the packets this ACK will cover.
            let pend = &mut f.pending_sig;
            if sig.csig_type != NO_TAG && (pend.csig_type == NO_TAG || cs.worse(sig.csig_value, pend.csig_value)) {
                *pend = *sig;
            }
        }
        if done || gap || f.pending_acks >= ack_every || (ce == 1 && ack_on_ce) {
            let (acked, ces, n) = (f.pending_acks, f.pending_ce, f.rcv_nxt);
            f.pending_acks = 0;
            f.pending_ce = 0;
            let out = f.take_reflection(sig);
            self.send_ctrl(flow, PacketKind::Ack, n, p, acked, ces, done, Some((&out, int)));
            self.flows[flow as usize].ack_at = u64::MAX;
        } else {
            // Coalescing: the ACK waits for more packets, but at most ack_delay.
            let delay = self.sc.transport.ack_delay.0;
            let f = &mut self.flows[flow as usize];
            f.last_rx = Some((*p, *sig));
            if f.ack_at == u64::MAX {
                f.ack_at = now + delay;
                self.q.push(now + delay, Event::AckTimer { flow });
            }
        }
        if nack_gap {
            self.nack_hole(flow, p, refl);
        }
    }

    /// NACKs the first missing packet, at most once per `nack_interval` for
    /// the same hole.
    fn nack_hole(&mut self, flow: u32, p: &Packet, refl: Option<(&Signals, Option<&IntStack>)>) {
        let now = self.now;
        let nack_interval = self.sc.transport.nack_interval.0;
        let f = &mut self.flows[flow as usize];
        let ask = f.rcv_nxt;
        if f.last_nack_psn != ask || now >= f.last_nack_ps + nack_interval {
            f.last_nack_psn = ask;
            f.last_nack_ps = now;
            f.nacks += 1;
            self.send_ctrl(flow, PacketKind::Nack, ask, p, 0, 0, false, refl);
        }
    }

    fn receive_ack(&mut self, p: &Packet, sig: &Signals, int: Option<&IntStack>) {
        let now = self.now;
        let window_ps = self.window_ps;
        let csig = match &self.sc.signals.csig {
            Some(cs) if sig.csig_type != NO_TAG => Some(CsigSample {
                sig: cs.sig,
                raw: sig.csig_value,
                value: cs.decode(sig.csig_value),
                locator: sig.csig_lm,
                writer: sig.csig_writer,
            }),
            _ => None,
        };
        let stamps = self.sc.signals.stamp.as_ref().map(|st| st.sample(sig));
        let record_cc = self.sc.monitor.cc;
        let rto = self.sc.transport.rto.0;
        let flow = p.flow;
        let f = &mut self.flows[flow as usize];
        if f.sender_done_ps.is_some() {
            return;
        }
        let before = f.snd_una;
        let mut newly = 0u64;
        if f.selective() {
            // The selectively acked packet, when beyond the cumulative point.
            if p.sack < f.npkts && p.sack >= p.psn && !bit(&f.acked, p.sack) && p.acked > 0 {
                set_bit(&mut f.acked, p.sack);
                newly += f.payload(p.sack) as u64;
            }
            while f.snd_una < p.psn.min(f.npkts) {
                if !bit(&f.acked, f.snd_una) {
                    set_bit(&mut f.acked, f.snd_una);
                    newly += f.payload(f.snd_una) as u64;
                }
                f.snd_una += 1;
            }
            while f.snd_una < f.npkts && bit(&f.acked, f.snd_una) {
                f.snd_una += 1;
            }
        } else if p.psn > f.snd_una {
            newly = f.bytes_between(f.snd_una, p.psn);
            f.snd_una = p.psn;
        }
        if f.snd_nxt < f.snd_una {
            f.snd_nxt = f.snd_una;
        }
        let progress = f.snd_una > before;
        let sample = AckSample {
            now_ps: now,
            acked_bytes: newly,
            acked_pkts: p.acked as u32,
            ce_pkts: p.ce as u32,
            rtt_ps: now.saturating_sub(p.sent_ps),
            snd_una: f.snd_una,
            // After a go-back-N rewind, windows are still measured to the highest packet sent.
            snd_nxt: f.snd_nxt.max(f.high_sent),
            inflight_bytes: f.inflight_bytes(),
            csig,
            stamps,
            int,
        };
        f.cc.on_ack(&sample);
        let timer = f.cc.next_timer();
        if record_cc {
            let m = f.cc.metrics();
            f.ccmon.record(now, window_ps, m, sample.rtt_ps, sample.acked_pkts, sample.ce_pkts);
        }
        if let Some(c) = csig {
            let writer = (c.writer != NO_WRITER).then_some((c.writer, c.locator));
            f.sigmon.record(now, window_ps, Series::Csig, c.value, writer);
        }
        if let Some(st) = stamps {
            f.sigmon.record(now, window_ps, Series::StampMax, st.max as f64, None);
            f.sigmon.record(now, window_ps, Series::StampSum, st.sum as f64, None);
            f.sigmon.record(now, window_ps, Series::StampSumSqu, st.sum_squ, None);
            f.sigmon.record(now, window_ps, Series::StampInd, st.ind as u8 as f64, None);
        }
        if let Some(st) = int {
            let qmax = st.hops().iter().map(|h| h.qlen_bytes).max().unwrap_or(0);
            f.sigmon.record(now, window_ps, Series::IntHops, st.n as f64, None);
            f.sigmon.record(now, window_ps, Series::IntMaxQlen, qmax as f64, None);
        }
        if f.snd_una >= f.npkts || p.flags & F_DONE != 0 {
            f.snd_una = f.npkts;
            f.sender_done_ps = Some(now);
            f.rto_at = u64::MAX;
            f.cc_timer_at = u64::MAX;
            return;
        }
        if timer.is_some() {
            self.arm_cc_timer(flow);
        }
        let f = &mut self.flows[flow as usize];
        if progress {
            f.rto_backoff = 1;
            f.rto_at = if f.snd_nxt > f.snd_una { now + rto } else { u64::MAX };
        }
        self.activate(flow);
    }

    fn receive_nack(&mut self, p: &Packet) {
        let now = self.now;
        let rto = self.sc.transport.rto.0;
        let flow = p.flow;
        let f = &mut self.flows[flow as usize];
        if f.sender_done_ps.is_some() {
            return;
        }
        let before = f.snd_una;
        if f.selective() {
            // A selective NACK names one missing packet; it says nothing of the others.
            if p.psn < f.npkts && !bit(&f.acked, p.psn) && !f.rtx_queue.contains(&p.psn) {
                f.rtx_queue.push_back(p.psn);
            }
        } else {
            if p.psn > f.snd_una {
                f.snd_una = p.psn;
            }
            // Go back: resend from the requested packet.
            if f.snd_nxt > p.psn {
                f.snd_nxt = p.psn.max(f.snd_una);
            }
        }
        let nxt = f.snd_nxt.max(f.high_sent);
        f.cc.on_nack(now, nxt);
        let timer = f.cc.next_timer().is_some();
        if f.snd_una > before {
            // The NACK acknowledged everything before the hole: that is progress.
            f.rto_backoff = 1;
            f.rto_at = now + rto;
        }
        if timer {
            self.arm_cc_timer(flow);
        }
        self.activate(flow);
    }

    /// Makes sure a `CcTimer` event is pending for the controller's next timer.
    pub(crate) fn arm_cc_timer(&mut self, flow: u32) {
        let f = &mut self.flows[flow as usize];
        if let Some(t) = f.cc.next_timer() {
            let t = t.max(self.now);
            if t < f.cc_timer_at {
                f.cc_timer_at = t;
                self.q.push(t, Event::CcTimer { flow });
            }
        }
    }

    /// The controller's timer: run it, re-arm, and let the sender use a
    /// window or rate that may have grown.
    pub(crate) fn on_cc_timer(&mut self, flow: u32) {
        let now = self.now;
        let f = &mut self.flows[flow as usize];
        f.cc_timer_at = u64::MAX;
        if f.sender_done_ps.is_some() {
            return;
        }
        if f.cc.next_timer().is_some_and(|t| t <= now) {
            f.cc.on_timer(now);
        }
        self.arm_cc_timer(flow);
        self.activate(flow);
    }

    /// A data packet was delivered: the flow's notification point (cc's
    /// receiver side) decides whether a CNP goes; this sends it and counts.
    fn maybe_cnp(&mut self, flow: u32, p: &Packet, ce: bool) {
        let f = &mut self.flows[flow as usize];
        match f.rcv_cc.on_data(self.now, ce, p.advice, p.wire) {
            None => {}
            Some(CnpDecision::Suppress) => {
                f.cnps_suppressed += 1;
                self.stats.cnps_suppressed += 1;
            }
            Some(CnpDecision::Send(advice)) => {
                f.cnps += 1;
                self.stats.cnps_sent += 1;
                let cnp_of = Packet { advice, ..*p };
                self.send_ctrl(flow, PacketKind::Cnp, p.psn, &cnp_of, 0, 1, false, None);
            }
        }
    }

    /// The delayed-ACK timer: send the coalesced ACK if it is still pending.
    pub(crate) fn on_ack_timer(&mut self, flow: u32) {
        let f = &mut self.flows[flow as usize];
        if f.ack_at != self.now || f.pending_acks == 0 {
            return;
        }
        f.ack_at = u64::MAX;
        let Some((p, sig)) = f.last_rx.take() else { return };
        let (acked, ces, n) = (f.pending_acks, f.pending_ce, f.rcv_nxt);
        f.pending_acks = 0;
        f.pending_ce = 0;
        let out = f.take_reflection(&sig);
        // INT is not kept for delayed ACKs: the stack of the last packet is gone.
        self.send_ctrl(flow, PacketKind::Ack, n, &p, acked, ces, false, Some((&out, None)));
    }

    pub(crate) fn on_flow_timer(&mut self, flow: u32) {
        let now = self.now;
        let rto = self.sc.transport.rto.0;
        let f = &mut self.flows[flow as usize];
        f.timer_pending = false;
        if f.sender_done_ps.is_some() || f.rto_at == u64::MAX {
            return;
        }
        if now < f.rto_at {
            f.timer_pending = true;
            let at = f.rto_at;
            self.q.push(at, Event::FlowTimer { flow });
            return;
        }
        // Timeout: nothing acknowledged for a whole RTO.
        f.timeouts += 1;
        self.stats.timeouts += 1;
        f.rto_backoff = (f.rto_backoff * 2).min(64);
        f.cc.on_timeout(now);
        if f.cc.next_timer().is_some() {
            self.arm_cc_timer(flow);
        }
        let f = &mut self.flows[flow as usize];
        if f.selective() {
            let una = f.snd_una;
            if !f.rtx_queue.contains(&una) {
                f.rtx_queue.push_front(una);
            }
        } else {
            f.snd_nxt = f.snd_una;
        }
        f.rto_at = now + rto * f.rto_backoff as u64;
        f.timer_pending = true;
        let at = f.rto_at;
        self.q.push(at, Event::FlowTimer { flow });
        self.activate(flow);
    }
}
