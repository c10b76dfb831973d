//! RCCC: receiver credits (UEC 1.0's receiver-credit congestion control,
//! as the UEC reference simulator uet-htsim runs it with `-receiver_cc`).
//! The page is docs/cc/rccc.md.
//!
//! Credits are the receiver's business, so they live here beside the flow
//! rather than in cc/: they run alone (`transport.cc = "none"`) or under a
//! sender window (`"nscc"`), and a packet leaves only when both allow it.
//!
//! - The sender starts with `speculative` bytes of credit and sends while
//!   its credit is positive, spending each packet's wire bytes (the credit
//!   may end below zero by less than a packet). Its first ACK, NACK or
//!   credit packet ends speculation: credit left over is dropped.
//! - Every data packet carries the sender's credit target: the cumulative
//!   credit it wants, in quanta of `quantum` bytes (what it has still to
//!   send, resends included, at most `max_credit` (and the window plus a
//!   packet under NSCC), less the credit it holds, shared among the flows
//!   waiting at its NIC, plus what it was granted so far).
//! - The receiving host's pacer grants credit to its flows round robin, one
//!   pull of `pull_packets` MTUs at a time, no faster than `credit_rate` of
//!   its line rate; a flow whose target is met moves to an idle list and
//!   gets unrequested (speculative) grants while no flow asks, up to
//!   `max_credit` beyond its target. A credit packet carries the cumulative
//!   grant; the sender adds what is new, holding at most `max_credit`.
//! - A trimmed packet puts its flow back on the pacer's list (its resend
//!   needs credit). A sender whose retransmission timer fires with no
//!   credit sends a request (RTS) carrying its target, at most once per
//!   `rts_interval`.

use crate::id::FlowId;
use crate::units::{Size, Time, PS_PER_S};
use serde::Deserialize;
use std::collections::VecDeque;

/// `[transport.rccc]`: present, receivers grant credits.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RcccConfig {
    /// The RTT `max_credit` is derived from; default the fabric's largest
    /// unloaded RTT between two hosts (as NSCC's `network_rtt`).
    pub network_rtt: Option<Time>,
    /// `max_credit = max_credit_bdps * network_rtt * line rate`.
    pub max_credit_bdps: f64,
    /// Override of `max_credit`: the most credit a sender holds and asks for.
    pub max_credit: Option<Size>,
    /// Credit a sender starts with (its speculative bytes); default `max_credit`.
    pub speculative: Option<Size>,
    /// The pacer grants at most this share of the receiver's line rate.
    pub credit_rate: f64,
    /// One pull grants this many MTUs (payload bytes, rounded down to quanta).
    pub pull_packets: u32,
    /// Unit of credit targets and grants.
    pub quantum: Size,
    /// A flow whose target is met gets grants it did not ask for while no
    /// flow asks, up to `max_credit` beyond its target.
    pub idle_grants: bool,
    /// Least time between two requests (RTS) of one sender; default `network_rtt`.
    pub rts_interval: Option<Time>,
}

impl Default for RcccConfig {
    fn default() -> Self {
        RcccConfig {
            network_rtt: None,
            max_credit_bdps: 1.5,
            max_credit: None,
            speculative: None,
            credit_rate: 0.99,
            pull_packets: 4,
            quantum: Size(256),
            idle_grants: true,
            rts_interval: None,
        }
    }
}

impl RcccConfig {
    /// Checks the values; errors name the key (under `transport.rccc`).
    pub fn validate(&self) -> Result<(), (String, String)> {
        let err = |k: &str, m: String| Err((k.to_string(), m));
        if self.network_rtt == Some(Time(0)) {
            return err("network_rtt", "network_rtt must be positive".into());
        }
        if !(self.max_credit_bdps.is_finite() && self.max_credit_bdps > 0.0) {
            return err("max_credit_bdps", format!("max_credit_bdps must be positive, got {}", self.max_credit_bdps));
        }
        if self.max_credit == Some(Size(0)) {
            return err("max_credit", "max_credit must be positive".into());
        }
        if self.speculative == Some(Size(0)) {
            return err("speculative", "speculative must be positive: a sender with no credit could never tell its receiver it has data".into());
        }
        if !(self.credit_rate > 0.0 && self.credit_rate <= 1.0) {
            return err("credit_rate", format!("credit_rate must be in (0, 1], got {}", self.credit_rate));
        }
        if self.pull_packets == 0 {
            return err("pull_packets", "pull_packets must be at least 1".into());
        }
        if self.quantum.0 == 0 || self.quantum.0 > 1 << 20 {
            return err("quantum", format!("quantum must be 1 B to 1 MiB, got {} B", self.quantum.0));
        }
        if self.rts_interval == Some(Time(0)) {
            return err("rts_interval", "rts_interval must be positive".into());
        }
        Ok(())
    }

    /// Fills in the network RTT from the fabric (0: unknown), once, at set-up.
    pub fn prepare(&mut self, network_rtt: u64) {
        if self.network_rtt.is_none() && network_rtt > 0 {
            self.network_rtt = Some(Time(network_rtt));
        }
    }

    /// `max_credit` for a sender of `line_rate_bps` whose own unloaded RTT is
    /// `base_rtt_ps` (used when the network RTT is unknown).
    pub fn max_credit(&self, line_rate_bps: u64, base_rtt_ps: u64) -> u64 {
        self.max_credit.map(|s| s.0).unwrap_or_else(|| {
            let rtt = self.network_rtt.map(|t| t.0).unwrap_or(base_rtt_ps);
            (self.max_credit_bdps * crate::units::bytes_in(rtt, line_rate_bps) as f64) as u64
        })
        .max(1)
    }

    /// Bytes one pull grants, in quanta: `pull_packets` MTUs rounded down (at least one quantum).
    pub fn pull_quanta(&self, mtu: u32) -> u32 {
        ((self.pull_packets as u64 * mtu as u64 / self.quantum.0).max(1)).min(u32::MAX as u64) as u32
    }
}

/// A flow's credit state: the sender's side and the receiver's.
#[derive(Clone, Debug)]
pub struct FlowCredit {
    pub tx: Credit,
    pub rx: Sink,
}

impl FlowCredit {
    pub fn new(c: &RcccConfig, line_rate_bps: u64, base_rtt_ps: u64) -> FlowCredit {
        let max = c.max_credit(line_rate_bps, base_rtt_ps);
        let rtt = c.network_rtt.map(|t| t.0).unwrap_or(base_rtt_ps);
        FlowCredit { tx: Credit::new(c, max, rtt), rx: Sink::new(c, max) }
    }
}

/// The sender's credit.
#[derive(Clone, Debug)]
pub struct Credit {
    /// Wire bytes the sender may still send (below zero after a packet
    /// larger than what was left).
    pub credit: i64,
    /// The cumulative grant last heard of, in quanta.
    pub granted: u32,
    /// No ACK, NACK or credit packet came back yet.
    pub speculating: bool,
    pub max_credit: i64,
    /// The credit the sender started with.
    pub speculative: u64,
    /// Wire bytes spent, and granted bytes added (for the invariant).
    pub spent: u64,
    pub added: u64,
    /// Requests sent.
    pub rts: u64,
    quantum: i64,
    last_rts: Option<u64>,
    rts_interval: u64,
}

impl Credit {
    fn new(c: &RcccConfig, max: u64, rtt: u64) -> Credit {
        let speculative = c.speculative.map(|s| s.0).unwrap_or(max);
        Credit {
            credit: speculative.min(i64::MAX as u64) as i64,
            granted: 0,
            speculating: true,
            max_credit: max.min(i64::MAX as u64) as i64,
            speculative,
            spent: 0,
            added: 0,
            rts: 0,
            quantum: c.quantum.0 as i64,
            last_rts: None,
            rts_interval: c.rts_interval.map(|t| t.0).unwrap_or(rtt),
        }
    }

    /// Any credit left lets a packet go, whatever its size.
    #[inline]
    pub fn may_send(&self) -> bool {
        self.credit > 0
    }

    /// A packet of `wire` bytes left.
    #[inline]
    pub fn spend(&mut self, wire: u32) {
        self.credit -= wire as i64;
        self.spent += wire as u64;
    }

    /// The receiver answered (ACK, NACK, credit): speculative credit left is dropped.
    #[inline]
    pub fn stop_speculating(&mut self) {
        if self.speculating {
            self.speculating = false;
            self.credit = self.credit.min(0);
        }
    }

    /// A credit packet carrying the cumulative grant `granted` (quanta).
    pub fn on_grant(&mut self, granted: u32) {
        self.stop_speculating();
        if granted > self.granted {
            let add = (granted - self.granted) as i64 * self.quantum;
            self.added += add as u64;
            self.credit = (self.credit + add).min(self.max_credit);
            self.granted = granted;
        }
    }

    /// The credit target (cumulative quanta) a packet carries: `demand`
    /// wire bytes still to send (new and resends), `backlog` of them new;
    /// `window` the sender's window if one limits it; `mtu` a full packet's
    /// wire bytes; `others` the flows waiting at the sender's NIC.
    pub fn target(&self, demand: u64, backlog: bool, window: Option<u64>, mtu: u32, others: u32) -> u32 {
        let mtu = mtu as i64;
        let mut t = demand.min(i64::MAX as u64) as i64;
        if let Some(w) = window {
            t = t.min((w.min(i64::MAX as u64 / 2) as i64).saturating_add(mtu));
        }
        t = t.min(self.max_credit) - self.credit;
        // Always ask for a packet's worth while speculating with data left
        // (short flows would otherwise wait for a timer).
        if self.speculating && t < mtu && backlog {
            t = mtu;
        }
        if others > 1 {
            t /= others as i64;
        }
        let total = t + self.granted as i64 * self.quantum;
        let q = (total + self.quantum - 1).div_euclid(self.quantum);
        q.clamp(0, u32::MAX as i64) as u32
    }

    /// May the sender send a request (RTS) at `now`: it has no credit and
    /// sent none within `rts_interval`. Records the request if so.
    pub fn request_due(&mut self, now: u64) -> bool {
        if self.credit > 0 || self.last_rts.is_some_and(|t| now.saturating_sub(t) < self.rts_interval) {
            return false;
        }
        self.last_rts = Some(now);
        self.rts += 1;
        true
    }
}

/// Where a flow stands with its receiver's pacer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SinkState {
    /// On no list.
    #[default]
    Out,
    /// Asking: on the active list.
    Active,
    /// Target met: on the idle list, for unrequested grants.
    Idle,
    /// The receiver has the whole flow: no more grants.
    Done,
}

/// The receiver's view of one flow's credit.
#[derive(Clone, Debug)]
pub struct Sink {
    /// The highest credit target heard, and the cumulative grant (quanta).
    pub target: u32,
    pub granted: u32,
    pub state: SinkState,
    /// The flow's current entry on the idle list (older entries are stale).
    idle_seq: u32,
    /// Idle grants stop this many quanta beyond the target.
    idle_cap: u32,
}

impl Sink {
    fn new(c: &RcccConfig, max_credit: u64) -> Sink {
        Sink { target: 0, granted: 0, state: SinkState::Out, idle_seq: 0, idle_cap: (max_credit / c.quantum.0).min(u32::MAX as u64) as u32 }
    }

    /// A packet (data, trimmed or a request) carrying target `t`. True when
    /// the flow must join the pacer's active list.
    #[inline]
    pub fn on_target(&mut self, t: u32) -> bool {
        if t > self.target {
            self.target = t;
            return self.wants_pull();
        }
        false
    }

    /// The flow is on neither active list nor done: a trim needs a resend's credit.
    #[inline]
    pub fn wants_pull(&self) -> bool {
        matches!(self.state, SinkState::Out | SinkState::Idle)
    }

    /// Granted less than asked (quanta).
    pub fn backlog(&self) -> u32 {
        self.target.saturating_sub(self.granted)
    }

    /// An active pull: up to `per_pull` more, not beyond the target (never
    /// backwards). Returns the quanta added.
    fn pull_active(&mut self, per_pull: u32) -> u32 {
        let prev = self.granted;
        let mut g = prev.saturating_add(per_pull);
        if g > self.target {
            g = self.target.max(prev);
        }
        self.granted = g;
        g - prev
    }

    /// An idle pull: `per_pull` whatever the target.
    fn pull_idle(&mut self, per_pull: u32) -> u32 {
        self.granted = self.granted.saturating_add(per_pull);
        per_pull
    }

    fn keeps_idle(&self) -> bool {
        self.backlog() == 0 && self.granted.saturating_sub(self.target) < self.idle_cap
    }

    /// The receiver has the whole flow.
    pub fn done(&mut self) {
        self.state = SinkState::Done;
    }
}

/// What a pacer reaches its flows' sinks through.
pub trait Sinks {
    fn sink(&mut self, flow: FlowId) -> Option<&mut Sink>;
}

/// One grant: the flow, its cumulative grant, the quanta it added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grant {
    pub flow: FlowId,
    pub granted: u32,
    pub added: u32,
}

/// A receiving host's pacer: its flows that ask for credit, served round
/// robin one pull each, then the idle ones.
#[derive(Clone, Debug, Default)]
pub struct Pacer {
    active: VecDeque<FlowId>,
    idle: VecDeque<(FlowId, u32)>,
    /// The pacer's next step, or `u64::MAX` when it is stopped.
    pub next_at: u64,
    ps_per_quantum: u64,
    per_pull: u32,
    idle_grants: bool,
    /// Quanta granted, pulls sent, and when the first grant went (for the invariant).
    pub granted: u64,
    pub pulls: u64,
    pub first_ps: Option<u64>,
}

/// A step with no credit granted still takes this many quanta's time.
const EMPTY_PULL_QUANTA: u64 = 4;

impl Pacer {
    /// The pacer of a host of `line_rate_bps` whose full data packets carry `mtu` payload bytes.
    pub fn new(c: &RcccConfig, line_rate_bps: u64, mtu: u32) -> Pacer {
        let ps = (8.0 * c.quantum.0 as f64 * PS_PER_S as f64 / (line_rate_bps.max(1) as f64 * c.credit_rate)) as u64;
        Pacer {
            active: VecDeque::new(),
            idle: VecDeque::new(),
            next_at: u64::MAX,
            ps_per_quantum: ps.max(1),
            per_pull: c.pull_quanta(mtu),
            idle_grants: c.idle_grants,
            granted: 0,
            pulls: 0,
            first_ps: None,
        }
    }

    /// Time between a pull of `quanta` and the next step.
    pub fn gap(&self, quanta: u32) -> u64 {
        self.ps_per_quantum * (quanta as u64).max(if quanta == 0 { EMPTY_PULL_QUANTA } else { 1 })
    }

    /// `flow` asks for credit (its sink said so). True when the pacer is
    /// stopped: the caller runs [`Pacer::step`] now.
    pub fn request(&mut self, flow: FlowId, sink: &mut Sink) -> bool {
        if matches!(sink.state, SinkState::Active | SinkState::Done) {
            return false;
        }
        sink.state = SinkState::Active;
        self.active.push_back(flow);
        self.next_at == u64::MAX
    }

    /// The pacer's step at `now`: one pull, or none when no flow wants one
    /// (the pacer stops). Sets `next_at`.
    pub fn step<S: Sinks>(&mut self, now: u64, sinks: &mut S) -> Option<Grant> {
        while let Some(flow) = self.active.pop_front() {
            let Some(s) = sinks.sink(flow) else { continue };
            if s.state != SinkState::Active {
                continue;
            }
            let added = s.pull_active(self.per_pull);
            if s.backlog() > 0 {
                self.active.push_back(flow);
            } else if self.idle_grants {
                s.state = SinkState::Idle;
                s.idle_seq = s.idle_seq.wrapping_add(1);
                self.idle.push_back((flow, s.idle_seq));
            } else {
                s.state = SinkState::Out;
            }
            return Some(self.granted(now, Grant { flow, granted: s.granted, added }));
        }
        while let Some((flow, seq)) = self.idle.pop_front() {
            let Some(s) = sinks.sink(flow) else { continue };
            if s.state != SinkState::Idle || s.idle_seq != seq {
                continue;
            }
            let added = s.pull_idle(self.per_pull);
            if s.keeps_idle() {
                self.idle.push_back((flow, seq));
            } else {
                s.state = SinkState::Out;
            }
            return Some(self.granted(now, Grant { flow, granted: s.granted, added }));
        }
        self.next_at = u64::MAX;
        None
    }

    fn granted(&mut self, now: u64, g: Grant) -> Grant {
        self.next_at = now + self.gap(g.added);
        self.granted += g.added as u64;
        self.pulls += 1;
        self.first_ps.get_or_insert(now);
        g
    }

    /// Quanta one pull grants.
    pub fn per_pull(&self) -> u32 {
        self.per_pull
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Sinks for Vec<Sink> {
        fn sink(&mut self, flow: FlowId) -> Option<&mut Sink> {
            self.get_mut(flow.ix())
        }
    }

    const RATE: u64 = 100_000_000_000;
    const RTT: u64 = 8_000_000;

    /// 100 Gb/s, 8 us: BDP 100,000 B, max credit 150,000 B; mtu 4096 B
    /// payload + 64 B header.
    fn cfg() -> RcccConfig {
        RcccConfig { network_rtt: Some(Time(RTT)), ..Default::default() }
    }

    #[test]
    fn credit_and_pull_sizes_follow_the_configuration() {
        let c = cfg();
        assert_eq!(c.max_credit(RATE, 1), 150_000);
        assert_eq!(c.pull_quanta(4096), 64, "4 x 4096 B = 64 quanta of 256 B");
        assert_eq!(c.pull_quanta(4086), 63, "rounded down");
        let p = Pacer::new(&c, RATE, 4096);
        // 256 B at 99 Gb/s: 20.687 ns; a pull of 64 quanta 1.324 us.
        assert_eq!(p.gap(1), 20_686);
        assert_eq!(p.gap(64), 64 * 20_686);
        assert_eq!(p.gap(0), 4 * 20_686, "a pull that grants nothing still takes time");
        let f = FlowCredit::new(&c, RATE, 1);
        assert_eq!((f.tx.credit, f.tx.speculative, f.rx.idle_cap), (150_000, 150_000, 585));
        let s = FlowCredit::new(&RcccConfig { speculative: Some(Size(10_000)), ..c }, RATE, 1);
        assert_eq!(s.tx.credit, 10_000);
        assert!(c.validate().is_ok());
        assert_eq!(RcccConfig { credit_rate: 1.5, ..c }.validate().unwrap_err().0, "credit_rate");
        assert_eq!(RcccConfig { speculative: Some(Size(0)), ..c }.validate().unwrap_err().0, "speculative");
        assert_eq!(RcccConfig { pull_packets: 0, ..c }.validate().unwrap_err().0, "pull_packets");
    }

    #[test]
    fn the_sender_spends_its_speculative_bytes_then_only_grants() {
        let c = RcccConfig { speculative: Some(Size(10_000)), ..cfg() };
        let mut t = FlowCredit::new(&c, RATE, 1).tx;
        // Any credit lets a packet go: 10,000 B pass three 4,160 B packets.
        let mut sent = 0;
        while t.may_send() {
            t.spend(4160);
            sent += 1;
        }
        assert_eq!((sent, t.credit), (3, 10_000 - 3 * 4160));
        // The first answer ends speculation; a debt stays a debt.
        t.stop_speculating();
        assert_eq!(t.credit, -2480);
        t.on_grant(64);
        assert_eq!((t.credit, t.granted, t.added), (16_384 - 2480, 64, 16_384));
        // Grants are cumulative: an old one adds nothing.
        t.on_grant(10);
        assert_eq!(t.credit, 13_904);
        // Credit never passes max_credit.
        t.on_grant(64 + 10_000);
        assert_eq!(t.credit, 150_000);
        // Credit left when speculation ends is dropped.
        let mut u = FlowCredit::new(&c, RATE, 1).tx;
        u.spend(4160);
        u.on_grant(4);
        assert_eq!(u.credit, 1024, "speculative credit dropped, then the grant added");
    }

    #[test]
    fn the_target_asks_for_what_is_left_less_the_credit_held() {
        let c = cfg();
        let mut t = FlowCredit::new(&c, RATE, 1).tx;
        t.stop_speculating();
        t.on_grant(100);
        // 25,600 B held; 100,000 B left: ask for 74,400 B more = 290.6 -> 291 quanta beyond 100.
        assert_eq!(t.target(100_000, true, None, 4160, 0), 100 + 291);
        // At most max_credit in all (150,000 - 25,600 = 124,400 -> 486 quanta).
        assert_eq!(t.target(1_000_000, true, None, 4160, 1), 100 + 486);
        // Under a window, at most the window and a packet.
        assert_eq!(t.target(1_000_000, true, Some(30_000), 4160, 0), 100 + 34);
        // Shared among the flows waiting at the NIC (three: a third).
        assert_eq!(t.target(100_000, true, None, 4160, 3), 100 + 97);
        // More credit than demand: a target below the grant.
        assert_eq!(t.target(1_000, false, None, 4160, 0), 100 - 96);
        // Speculating with data left: at least a packet, whatever is held.
        let s = FlowCredit::new(&c, RATE, 1).tx;
        assert_eq!(s.target(50_000, true, None, 4160, 0), 17, "4160 B = 16.25 quanta");
        assert_eq!(s.target(50_000, false, None, 4160, 0), 0, "no new data: nothing more");
    }

    #[test]
    fn a_sender_without_credit_requests_at_most_once_per_interval() {
        let mut t = FlowCredit::new(&cfg(), RATE, 1).tx;
        assert!(!t.request_due(0), "it has credit");
        t.spend(200_000);
        assert!(t.request_due(10));
        assert!(!t.request_due(10 + RTT - 1));
        assert!(t.request_due(10 + RTT));
        assert_eq!(t.rts, 2);
    }

    fn sinks(n: usize) -> Vec<Sink> {
        (0..n).map(|_| FlowCredit::new(&cfg(), RATE, 1).rx).collect()
    }

    #[test]
    fn the_pacer_grants_round_robin_at_its_rate_and_stops_at_the_targets() {
        let mut p = Pacer::new(&cfg(), RATE, 4096);
        let mut s = sinks(3);
        // Flow 0 asks for 100 quanta and finds the pacer stopped: it steps at once.
        assert!(s[0].on_target(100));
        assert!(p.request(FlowId(0), &mut s[0]));
        let mut grants = Vec::new();
        let mut now = 0;
        while let Some(g) = p.step(now, &mut s) {
            grants.push((g.flow.0, g.granted, g.added, now));
            now = p.next_at;
            if grants.len() == 1 {
                assert!(!s[0].on_target(90), "a lower target changes nothing");
                assert!(!s[0].on_target(101), "already asking");
                // Flow 1 asks for 64 while the pacer runs: it waits its turn.
                assert!(s[1].on_target(64));
                assert!(!p.request(FlowId(1), &mut s[1]));
            }
        }
        let q = 20_686;
        assert_eq!(grants[0], (0, 64, 64, 0));
        assert_eq!(grants[1], (0, 101, 37, 64 * q), "no further than the target");
        assert_eq!(grants[2], (1, 64, 64, 101 * q));
        // Then the idle list: unrequested grants until max_credit (585 quanta) beyond the target.
        assert_eq!(grants[3], (0, 165, 64, 165 * q));
        assert_eq!(grants[4], (1, 128, 64, 229 * q));
        assert_eq!(p.next_at, u64::MAX, "stopped");
        let idle1 = grants.iter().rfind(|g| g.0 == 1).unwrap().1;
        assert!(idle1 - 64 >= 585 && idle1 - 64 < 585 + 64, "{idle1}");
        assert_eq!((s[0].state, s[1].state), (SinkState::Out, SinkState::Out));
        // The rate: every grant waits for the previous one's quanta at 99% of the line rate.
        for w in grants.windows(2) {
            assert_eq!(w[1].3 - w[0].3, w[0].2 as u64 * q);
        }
    }

    #[test]
    fn a_new_target_moves_an_idle_flow_back_and_a_done_flow_gets_nothing() {
        let mut p = Pacer::new(&cfg(), RATE, 4096);
        let mut s = sinks(2);
        s[0].on_target(10);
        p.request(FlowId(0), &mut s[0]);
        assert_eq!(p.step(0, &mut s).unwrap().granted, 10);
        assert_eq!(s[0].state, SinkState::Idle);
        // A trim (or a higher target) puts it back on the active list; its
        // idle entry is now stale.
        assert!(s[0].wants_pull());
        p.request(FlowId(0), &mut s[0]);
        s[0].on_target(200);
        let g = p.step(10, &mut s).unwrap();
        assert_eq!((g.granted, g.added), (74, 64));
        // The receiver gets the whole flow: it leaves the lists.
        s[0].done();
        assert!(!s[0].on_target(300));
        assert_eq!(p.step(20, &mut s), None);
        assert_eq!(p.next_at, u64::MAX);
        // Without idle grants a met target takes the flow off the lists.
        let mut q = Pacer::new(&RcccConfig { idle_grants: false, ..cfg() }, RATE, 4096);
        s[1].on_target(5);
        q.request(FlowId(1), &mut s[1]);
        assert_eq!(q.step(0, &mut s).unwrap().granted, 5);
        assert_eq!(q.step(1, &mut s), None);
        assert_eq!(s[1].state, SinkState::Out);
    }
}
