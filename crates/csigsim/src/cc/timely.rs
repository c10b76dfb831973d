//! Timely (Mittal et al., SIGCOMM 2015), rate-based, and its queue-stamp
//! variants (HOPE: Arslan & McKeown, "Switches Know the Exact Amount of
//! Congestion", BS'19), in which the gradient is taken of the reflected
//! per-hop queue stamps (MAX, SUM or SUM_SQU) instead of the RTT.
//!
//! On each completion event (an ACK that brings the bytes acknowledged since
//! the last event to `update_every`, every ACK when it is 0; or, with
//! `once_per_rtt`, the first ACK past the data sent at the last event):
//!
//! ```text
//! new_diff  = signal - prev_signal          (0 on the first event)
//! prev_signal = signal
//! neg_count = new_diff < 0 ? neg_count + 1 : 0
//! rtt_diff  = (1 - alpha) * rtt_diff + alpha * new_diff
//! gradient  = rtt_diff / min_rtt
//! ```
//!
//! then one of two control laws:
//!
//! - `timely` (paper Algorithm 1): rtt < T_low: rate += delta; rtt > T_high:
//!   rate *= 1 - beta (1 - T_high / rtt); gradient <= 0: rate += N delta
//!   (N = hai_n once neg_count >= hai_thresh, else 1); otherwise
//!   rate *= max(0, 1 - beta gradient);
//! - `hope` (the BS'19 authors' ns-2 code): the same branches with the steps
//!   scaled by D = clamp((now - last_update) / min_rtt, 0, 1) (all but the
//!   gradient decrease), "gradient <= hope_epsilon" for the increase test, and
//!   rate >= hope_floor * rate before the update.
//!
//! `increase_rule = "ns3"` replaces `neg_count` by the count of consecutive
//! increases of any kind (the HPCC authors' ns-3), uses `N delta` below T_low
//! too, and leaves the rate alone on the first completion event.
//!
//! Both clamp the rate to [min_rate, line rate]. The T_low / T_high tests always
//! use the measured RTT; the signal is the RTT (`signal = "rtt"`) or the
//! stamp aggregate converted to time. The law defaults to `timely` for the RTT
//! signal and to `hope` for the stamp signals. See docs/cc/timely.md.

use super::{AckSample, Algorithm, CcMetrics, ConfigError, CongestionControl, FlowParams, NoReceiver, Setup};
use crate::signal::stamp::{Collector, StampSetup};
use crate::units::{Rate, Size, Time, PS_PER_S};
use serde::Deserialize;

/// What the gradient is taken of.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum TimelySignal {
    /// The measured RTT (classic Timely).
    #[default]
    Rtt,
    /// The largest per-hop stamp (HOPE MAX).
    Max,
    /// The sum of the per-hop stamps (HOPE SUM).
    Sum,
    /// The Euclidean norm of the per-hop stamps (HOPE SUM_SQU).
    SumSqu,
}

/// Which update rule runs on a completion event.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TimelyLaw {
    /// Timely Algorithm 1 as published.
    Timely,
    /// The BS'19 authors' code: time-scaled steps and a halving floor.
    Hope,
}

/// Which increases count toward hyperactive increase, and what the first
/// completion event does.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum IncreaseRule {
    /// Timely Algorithm 1: `hai_n x delta` once `hai_thresh` consecutive
    /// completion events saw a negative RTT difference, only in the gradient
    /// branch (below T_low the step is always `delta`); the first event
    /// already applies the law (with a zero difference).
    #[default]
    Paper,
    /// The HPCC authors' ns-3 (`RdmaHw::UpdateRateTimely`): a stage counter
    /// counts consecutive increases of any kind (below T_low too) and any
    /// decrease resets it; from `hai_thresh` on every increase, below T_low
    /// included, is `hai_n x delta`; the first event only records the RTT.
    Ns3,
}

/// The unit of the reflected stamps.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum StampUnit {
    /// Queue bytes (`collect = "enqueue"` or `"dequeue"`); converted to time at `stamp_rate`.
    #[default]
    Bytes,
    /// Picoseconds (`collect = "sojourn"`); used as is.
    Ps,
}

/// `[transport.timely]`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TimelyConfig {
    /// Gradient input: "rtt", "max", "sum" or "sum_squ".
    #[serde(default)]
    pub signal: TimelySignal,
    /// Update rule; default `timely` for `signal = "rtt"`, `hope` otherwise.
    #[serde(default)]
    pub law: Option<TimelyLaw>,
    /// Unit of the stamps: "bytes" (queue collectors) or "ps" (sojourn).
    #[serde(default)]
    pub stamp_unit: StampUnit,
    /// Rate that converts stamped bytes to time (bytes x 8 / rate); default the
    /// flow's NIC line rate. The BS'19 code used a fixed 10 Gb/s.
    #[serde(default)]
    pub stamp_rate: Option<Rate>,
    /// EWMA weight of a new RTT (signal) difference.
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// Multiplicative decrease factor.
    #[serde(default = "default_beta")]
    pub beta: f64,
    /// Additive increment.
    #[serde(default = "default_delta")]
    pub delta: Rate,
    /// Below this RTT: additive increase whatever the gradient ("0ps" disables).
    #[serde(default = "default_t_low")]
    pub t_low: Time,
    /// Above this RTT: multiplicative decrease by 1 - beta (1 - T_high / rtt).
    #[serde(default = "default_t_high")]
    pub t_high: Time,
    /// Hyperactive increase after this many consecutive negative differences.
    #[serde(default = "default_hai")]
    pub hai_thresh: u32,
    /// Multiplier of delta in hyperactive increase.
    #[serde(default = "default_hai")]
    pub hai_n: u32,
    /// What counts toward hyperactive increase: "paper" (consecutive negative
    /// differences, gradient branch only) or "ns3" (consecutive increases of
    /// any kind; no rate change on the first event).
    #[serde(default)]
    pub increase_rule: IncreaseRule,
    /// Fixed gradient normalizer; default the smallest RTT seen (the flow's
    /// base RTT before the first sample).
    #[serde(default)]
    pub min_rtt: Option<Time>,
    /// Bytes acknowledged per completion event (0: every ACK); default 16 KiB
    /// for the `timely` law, 0 for `hope`.
    #[serde(default)]
    pub update_every: Option<Size>,
    /// One completion event per round trip instead (the HPCC authors' ns-3:
    /// the first ACK whose snd_una passes the snd_nxt of the last event).
    #[serde(default)]
    pub once_per_rtt: bool,
    /// Starting rate; default the line rate.
    #[serde(default)]
    pub initial_rate: Option<Rate>,
    /// Rate floor.
    #[serde(default = "default_min_rate")]
    pub min_rate: Rate,
    /// Also limit the bytes in flight to a window derived from the rate
    /// (HOPE: max(1.1, rate x rtt / (8 x packet)) packets).
    #[serde(default)]
    pub window: bool,
    /// `hope` law: a single update keeps at least this fraction of the rate.
    #[serde(default = "default_hope_floor")]
    pub hope_floor: f64,
    /// `hope` law: a gradient at or below this counts as non-positive.
    #[serde(default = "default_hope_epsilon")]
    pub hope_epsilon: f64,
}

fn default_alpha() -> f64 {
    0.875
}
fn default_beta() -> f64 {
    0.8
}
fn default_delta() -> Rate {
    Rate(10_000_000)
}
fn default_t_low() -> Time {
    Time::us(50)
}
fn default_t_high() -> Time {
    Time::us(500)
}
fn default_hai() -> u32 {
    5
}
fn default_min_rate() -> Rate {
    Rate(10_000_000)
}
fn default_hope_floor() -> f64 {
    0.5
}
fn default_hope_epsilon() -> f64 {
    1e-6
}

/// Default completion-event size of the `timely` law (the paper's smallest segment).
pub const DEFAULT_SEGMENT: u64 = 16 * 1024;

impl Default for TimelyConfig {
    fn default() -> Self {
        TimelyConfig {
            signal: TimelySignal::Rtt,
            law: None,
            stamp_unit: StampUnit::Bytes,
            stamp_rate: None,
            alpha: default_alpha(),
            beta: default_beta(),
            delta: default_delta(),
            t_low: default_t_low(),
            t_high: default_t_high(),
            hai_thresh: default_hai(),
            hai_n: default_hai(),
            increase_rule: IncreaseRule::Paper,
            min_rtt: None,
            update_every: None,
            once_per_rtt: false,
            initial_rate: None,
            min_rate: default_min_rate(),
            window: false,
            hope_floor: default_hope_floor(),
            hope_epsilon: default_hope_epsilon(),
        }
    }
}

impl TimelyConfig {
    /// The update rule in force.
    pub fn law(&self) -> TimelyLaw {
        self.law.unwrap_or(if self.signal == TimelySignal::Rtt { TimelyLaw::Timely } else { TimelyLaw::Hope })
    }

    /// Bytes acknowledged per completion event (0: every ACK).
    pub fn update_every_bytes(&self) -> u64 {
        self.update_every.map(|s| s.0).unwrap_or(match self.law() {
            TimelyLaw::Timely => DEFAULT_SEGMENT,
            TimelyLaw::Hope => 0,
        })
    }

    /// Does the signal need `[signals.stamp]`?
    pub fn needs_stamps(&self) -> bool {
        self.signal != TimelySignal::Rtt
    }

    /// Checks the values; errors name the key under `transport.timely`.
    pub fn validate(&self) -> Result<(), (String, String)> {
        let bad = |k: &str, m: String| Err((k.to_string(), m));
        if !(self.alpha > 0.0 && self.alpha <= 1.0) {
            return bad("alpha", format!("alpha must be in (0, 1], got {}", self.alpha));
        }
        if !(self.beta > 0.0 && self.beta <= 1.0) {
            return bad("beta", format!("beta must be in (0, 1], got {}", self.beta));
        }
        if self.t_low > self.t_high {
            return bad("t_low", format!("t_low ({} ps) is above t_high ({} ps)", self.t_low.0, self.t_high.0));
        }
        if self.hai_n == 0 {
            return bad("hai_n", "hai_n must be at least 1".into());
        }
        if self.min_rtt == Some(Time(0)) {
            return bad("min_rtt", "min_rtt must be above zero".into());
        }
        if !(0.0..=1.0).contains(&self.hope_floor) {
            return bad("hope_floor", format!("hope_floor must be in [0, 1], got {}", self.hope_floor));
        }
        if !self.hope_epsilon.is_finite() {
            return bad("hope_epsilon", format!("hope_epsilon must be finite, got {}", self.hope_epsilon));
        }
        Ok(())
    }

    /// Checks the signal against `[signals.stamp]` (resolved): a stamp signal
    /// needs stamping, and `stamp_unit` must match the collector. Errors name
    /// the key under `transport.timely`.
    pub fn check_stamps(&self, stamp: Option<&StampSetup>) -> Result<(), (String, String)> {
        if !self.needs_stamps() {
            return Ok(());
        }
        let name = match self.signal {
            TimelySignal::Max => "max",
            TimelySignal::Sum => "sum",
            _ => "sum_squ",
        };
        let Some(s) = stamp else {
            return Err(("signal".into(), format!("signal = \"{name}\" needs queue stamps: add [signals.stamp]")));
        };
        match (s.collect, self.stamp_unit) {
            (Collector::Sojourn, StampUnit::Bytes) => Err((
                "stamp_unit".into(),
                "signals.stamp.collect = \"sojourn\" stamps picoseconds: set stamp_unit = \"ps\"".into(),
            )),
            (Collector::Enqueue | Collector::Dequeue, StampUnit::Ps) => Err((
                "stamp_unit".into(),
                "signals.stamp.collect stamps queue bytes: set stamp_unit = \"bytes\" (or collect = \"sojourn\")".into(),
            )),
            _ => Ok(()),
        }
    }
}

/// Per-flow Timely state. Times are in picoseconds and rates in bits per
/// second, as `f64`.
#[derive(Clone, Debug)]
pub struct Timely {
    signal: TimelySignal,
    law: TimelyLaw,
    alpha: f64,
    beta: f64,
    delta: f64,
    t_low: f64,
    t_high: f64,
    hai_thresh: u32,
    hai_n: f64,
    increase_rule: IncreaseRule,
    fixed_min_rtt: Option<f64>,
    update_every: u64,
    once_per_rtt: bool,
    min_rate: f64,
    line_rate: f64,
    window: bool,
    floor: f64,
    epsilon: f64,
    /// Picoseconds per stamp unit (8e12 / stamp_rate for bytes, 1 for ps).
    stamp_scale: f64,
    mss: f64,
    packet_bytes: f64,

    /// Current rate (bits per second).
    pub rate: f64,
    /// Signal of the last completion event (ps), none before the first.
    pub prev_signal: Option<f64>,
    /// EWMA of the signal differences (ps).
    pub rtt_diff: f64,
    /// Last normalized gradient.
    pub gradient: f64,
    /// Consecutive completion events with a negative difference.
    pub neg_count: u32,
    /// `increase_rule = "ns3"`: consecutive increases since the last decrease.
    pub inc_stage: u32,
    /// Smallest RTT seen (ps); the base RTT until the first sample.
    pub min_rtt: f64,
    seen_rtt: bool,
    /// Latest RTT sample (ps).
    pub last_rtt: f64,
    /// Time of the last completion event.
    pub last_update: Option<u64>,
    /// Bytes acknowledged since the last completion event.
    acc_bytes: u64,
    /// `once_per_rtt`: snd_nxt at the last completion event.
    update_seq: u32,
    /// Completion events so far.
    pub updates: u64,
    cwnd_bytes: u64,
}

impl Timely {
    pub fn new(c: &TimelyConfig, p: &FlowParams) -> Self {
        let line_rate = p.line_rate_bps as f64;
        let min_rate = (c.min_rate.0 as f64).min(line_rate);
        let rate = c.initial_rate.map_or(line_rate, |r| r.0 as f64).clamp(min_rate, line_rate);
        let stamp_scale = match c.stamp_unit {
            StampUnit::Bytes => 8.0 * PS_PER_S as f64 / c.stamp_rate.map_or(p.line_rate_bps, |r| r.0) as f64,
            StampUnit::Ps => 1.0,
        };
        let law = c.law();
        let mut t = Timely {
            signal: c.signal,
            law,
            alpha: c.alpha,
            beta: c.beta,
            delta: c.delta.0 as f64,
            t_low: c.t_low.0 as f64,
            t_high: c.t_high.0 as f64,
            hai_thresh: c.hai_thresh,
            hai_n: c.hai_n as f64,
            increase_rule: c.increase_rule,
            fixed_min_rtt: c.min_rtt.map(|t| t.0 as f64),
            update_every: c.update_every_bytes(),
            once_per_rtt: c.once_per_rtt,
            min_rate,
            line_rate,
            window: c.window,
            floor: c.hope_floor,
            epsilon: c.hope_epsilon,
            stamp_scale,
            mss: p.mss as f64,
            packet_bytes: p.packet_bytes.max(1) as f64,
            rate,
            prev_signal: None,
            rtt_diff: 0.0,
            gradient: 0.0,
            neg_count: 0,
            inc_stage: 0,
            min_rtt: p.base_rtt_ps.max(1) as f64,
            seen_rtt: false,
            last_rtt: p.base_rtt_ps as f64,
            last_update: None,
            acc_bytes: 0,
            update_seq: 0,
            updates: 0,
            cwnd_bytes: u64::MAX,
        };
        t.cwnd_bytes = t.window_bytes();
        t
    }

    /// The gradient input of an ACK, in ps; none for a stamp signal without stamps.
    fn signal_of(&self, a: &AckSample) -> Option<f64> {
        match self.signal {
            TimelySignal::Rtt => Some(a.rtt_ps as f64),
            TimelySignal::Max => a.stamps.map(|s| s.max as f64 * self.stamp_scale),
            TimelySignal::Sum => a.stamps.map(|s| s.sum as f64 * self.stamp_scale),
            TimelySignal::SumSqu => a.stamps.map(|s| s.sum_squ * self.stamp_scale),
        }
    }

    /// The gradient normalizer (and the HOPE time scale), in ps.
    fn normalizer(&self) -> f64 {
        self.fixed_min_rtt.unwrap_or(self.min_rtt)
    }

    /// One completion event with the measured RTT `rtt` and gradient input `sig` (ps).
    fn update(&mut self, now: u64, rtt: f64, sig: f64) {
        let ns3 = self.increase_rule == IncreaseRule::Ns3;
        if ns3 && self.prev_signal.is_none() {
            // ns-3's first update only records the signal: there is no difference yet.
            self.prev_signal = Some(sig);
            self.last_update = Some(now);
            self.updates += 1;
            return;
        }
        let new_diff = sig - self.prev_signal.unwrap_or(sig);
        self.prev_signal = Some(sig);
        self.neg_count = if new_diff < 0.0 { self.neg_count.saturating_add(1) } else { 0 };
        self.rtt_diff = (1.0 - self.alpha) * self.rtt_diff + self.alpha * new_diff;
        let norm = self.normalizer();
        self.gradient = self.rtt_diff / norm;
        let count = if ns3 { self.inc_stage } else { self.neg_count };
        let n = if count >= self.hai_thresh { self.hai_n } else { 1.0 };
        // Below T_low the paper always adds delta; ns-3 uses the stage's step.
        let n_low = if ns3 { n } else { 1.0 };
        let before = self.rate;
        match self.law {
            TimelyLaw::Timely => {
                if rtt < self.t_low {
                    self.rate += n_low * self.delta;
                } else if rtt > self.t_high {
                    self.rate *= 1.0 - self.beta * (1.0 - self.t_high / rtt);
                } else if self.gradient <= 0.0 {
                    self.rate += n * self.delta;
                } else {
                    self.rate *= (1.0 - self.beta * self.gradient).max(0.0);
                }
            }
            TimelyLaw::Hope => {
                let d = match self.last_update {
                    None => 1.0,
                    Some(t) => (now.saturating_sub(t) as f64 / norm).clamp(0.0, 1.0),
                };
                if rtt < self.t_low {
                    self.rate += n_low * self.delta * d;
                } else if rtt > self.t_high {
                    self.rate *= 1.0 - d * self.beta * (1.0 - self.t_high / rtt);
                } else if self.gradient <= self.epsilon {
                    self.rate += n * self.delta * d;
                } else {
                    self.rate *= 1.0 - self.beta * self.gradient;
                }
                self.rate = self.rate.max(self.floor * before);
            }
        }
        // Every branch either adds (an increase) or multiplies by at most 1 (a decrease).
        let increased = rtt < self.t_low || (rtt <= self.t_high && self.gradient <= self.increase_bound());
        self.inc_stage = if increased { self.inc_stage.saturating_add(1) } else { 0 };
        self.rate = self.rate.min(self.line_rate).max(self.min_rate);
        self.last_update = Some(now);
        self.updates += 1;
    }

    /// The gradient at or below which the law increases.
    fn increase_bound(&self) -> f64 {
        match self.law {
            TimelyLaw::Timely => 0.0,
            TimelyLaw::Hope => self.epsilon,
        }
    }

    /// HOPE's window: max(1.1, rate x rtt / (8 x packet)) packets of `mss` payload bytes.
    fn window_bytes(&self) -> u64 {
        if !self.window {
            return u64::MAX;
        }
        let pkts = self.rate * self.last_rtt / (8.0 * PS_PER_S as f64 * self.packet_bytes);
        (pkts.max(1.1) * self.mss) as u64
    }
}

impl CongestionControl for Timely {
    fn on_ack(&mut self, a: &AckSample) {
        if a.rtt_ps > 0 {
            let r = a.rtt_ps as f64;
            if !self.seen_rtt || r < self.min_rtt {
                self.min_rtt = r;
                self.seen_rtt = true;
            }
            self.last_rtt = r;
        }
        self.acc_bytes += a.acked_bytes;
        let due = if self.once_per_rtt { a.snd_una > self.update_seq } else { self.acc_bytes >= self.update_every };
        if due && a.acked_bytes > 0 && a.rtt_ps > 0 {
            if let Some(sig) = self.signal_of(a) {
                self.acc_bytes = 0;
                self.update_seq = a.snd_nxt;
                self.update(a.now_ps, a.rtt_ps as f64, sig);
            }
        }
        if self.window {
            self.cwnd_bytes = self.window_bytes();
        }
    }

    fn cwnd(&self) -> u64 {
        self.cwnd_bytes
    }

    fn rate(&self) -> u64 {
        (self.rate as u64).max(1)
    }

    fn metrics(&self) -> CcMetrics {
        CcMetrics { cwnd_bytes: self.cwnd(), rate_bps: self.rate(), alpha: self.gradient }
    }
}

impl Algorithm for Timely {
    const NAME: &'static str = "timely";
    const ABOUT: &'static str = "Timely RTT-gradient rate control; queue-stamp (MAX, SUM, SUM_SQU) variants";
    type Config = TimelyConfig;
    type Receiver = NoReceiver;
    fn build(c: &TimelyConfig, p: &FlowParams) -> Self {
        Timely::new(c, p)
    }
    fn validate(c: &TimelyConfig) -> Result<(), ConfigError> {
        c.validate()
    }
    fn check(c: &TimelyConfig, s: &Setup) -> Result<(), ConfigError> {
        c.check_stamps(s.stamp).map_err(|(k, m)| (format!("timely.{k}"), m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signal::{Signals, StampSample};

    const US: u64 = 1_000_000;
    const G: f64 = 1e9;
    const M: f64 = 1e6;

    fn params() -> FlowParams {
        // 100 Gbps: one queued byte is 8e12 / 1e11 = 80 ps.
        FlowParams { line_rate_bps: 100_000_000_000, base_rtt_ps: 8 * US, mss: 1000, packet_bytes: 1064, hops: 2 }
    }

    /// Paper constants, 50 Gbps start, an update on every ACK.
    fn cfg() -> TimelyConfig {
        TimelyConfig { initial_rate: Some(Rate::gbps(50)), update_every: Some(Size(0)), ..Default::default() }
    }

    fn ack(now_ps: u64, rtt_ps: u64) -> AckSample<'static> {
        AckSample { now_ps, acked_bytes: 1000, acked_pkts: 1, rtt_ps, ..Default::default() }
    }

    fn sack(now_ps: u64, rtt_ps: u64, max: u64, sum: u64, sum_squ: f64) -> AckSample<'static> {
        AckSample { stamps: Some(StampSample { hops: 2, max, sum, sum_squ, ind: false }), ..ack(now_ps, rtt_ps) }
    }

    #[track_caller]
    fn close(got: f64, want: f64) {
        assert!((got - want).abs() <= 1e-9 * want.abs().max(1.0), "got {got}, want {want}");
    }

    #[test]
    fn defaults_and_parsing() {
        let c: TimelyConfig = toml::from_str("").unwrap();
        assert_eq!(c, TimelyConfig::default());
        assert_eq!(c.law(), TimelyLaw::Timely);
        assert_eq!(c.update_every_bytes(), 16_384);
        assert_eq!((c.alpha, c.beta, c.delta, c.t_low, c.t_high), (0.875, 0.8, Rate(10_000_000), Time::us(50), Time::us(500)));
        let c: TimelyConfig = toml::from_str(
            "signal = \"sum_squ\"\nalpha = 0.3\nt_low = \"0ps\"\nt_high = \"1ms\"\ndelta = \"30Mbps\"\n\
             initial_rate = \"750Mbps\"\nstamp_rate = \"10Gbps\"\nwindow = true\nmin_rtt = \"20us\"",
        )
        .unwrap();
        assert_eq!(c.signal, TimelySignal::SumSqu);
        assert_eq!(c.law(), TimelyLaw::Hope);
        assert_eq!(c.update_every_bytes(), 0);
        assert_eq!(c.t_low, Time(0));
        assert_eq!(c.delta, Rate(30_000_000));
        assert_eq!(c.min_rtt, Some(Time::us(20)));
        assert!(c.validate().is_ok());
        assert!(toml::from_str::<TimelyConfig>("gamma = 1.0").is_err());
        assert!(toml::from_str::<TimelyConfig>("signal = \"ind\"").is_err());
        let c: TimelyConfig = toml::from_str("signal = \"max\"\nlaw = \"timely\"\nupdate_every = \"64KiB\"").unwrap();
        assert_eq!((c.law(), c.update_every_bytes()), (TimelyLaw::Timely, 65_536));
    }

    #[test]
    fn validation_names_the_key() {
        let k = |c: TimelyConfig| c.validate().unwrap_err().0;
        assert_eq!(k(TimelyConfig { alpha: 0.0, ..Default::default() }), "alpha");
        assert_eq!(k(TimelyConfig { beta: 1.5, ..Default::default() }), "beta");
        assert_eq!(k(TimelyConfig { t_low: Time::ms(1), ..Default::default() }), "t_low");
        assert_eq!(k(TimelyConfig { hai_n: 0, ..Default::default() }), "hai_n");
        assert_eq!(k(TimelyConfig { min_rtt: Some(Time(0)), ..Default::default() }), "min_rtt");
        assert_eq!(k(TimelyConfig { hope_floor: 2.0, ..Default::default() }), "hope_floor");
    }

    #[test]
    fn stamp_signals_need_matching_stamps() {
        let bytes = StampSetup { collect: Collector::Enqueue, bits: 8, range: 292_000, ind_threshold: 1 };
        let soj = StampSetup { collect: Collector::Sojourn, bits: 8, range: 1_000_000_000, ind_threshold: 1 };
        let rtt = TimelyConfig::default();
        assert!(rtt.check_stamps(None).is_ok());
        let max = TimelyConfig { signal: TimelySignal::Max, ..Default::default() };
        assert_eq!(max.check_stamps(None).unwrap_err().0, "signal");
        assert!(max.check_stamps(Some(&bytes)).is_ok());
        assert_eq!(max.check_stamps(Some(&soj)).unwrap_err().0, "stamp_unit");
        let max_ps = TimelyConfig { stamp_unit: StampUnit::Ps, ..max };
        assert!(max_ps.check_stamps(Some(&soj)).is_ok());
        assert_eq!(max_ps.check_stamps(Some(&bytes)).unwrap_err().0, "stamp_unit");
    }

    #[test]
    fn starts_at_line_rate_without_window() {
        let t = Timely::new(&TimelyConfig::default(), &params());
        assert_eq!(t.rate(), 100_000_000_000);
        assert_eq!(t.cwnd(), u64::MAX);
        // Before any sample the normalizer is the flow's base RTT.
        assert_eq!(t.min_rtt, 8e6);
    }

    #[test]
    fn additive_increase_below_t_low() {
        let mut t = Timely::new(&cfg(), &params());
        // rtt 10 us < T_low 50 us: rate += delta = 10 Mbps per event.
        t.on_ack(&ack(10 * US, 10 * US));
        close(t.rate, 50.01 * G);
        t.on_ack(&ack(11 * US, 12 * US));
        close(t.rate, 50.02 * G);
        // Even a steep rise in RTT only adds while under T_low.
        t.on_ack(&ack(12 * US, 49 * US));
        close(t.rate, 50.03 * G);
    }

    #[test]
    fn multiplicative_decrease_above_t_high() {
        let mut t = Timely::new(&cfg(), &params());
        // rtt 1000 us > T_high 500 us: rate *= 1 - 0.8 * (1 - 500/1000) = 0.6 -> 30 Gbps.
        t.on_ack(&ack(1000 * US, 1000 * US));
        close(t.rate, 30.0 * G);
        // rtt 625 us: 1 - 0.8 * (1 - 0.8) = 0.84 -> 25.2 Gbps.
        t.on_ack(&ack(1001 * US, 625 * US));
        close(t.rate, 25.2 * G);
        // Exactly T_high is not above it: gradient branch. diff = 500 - 625 = -125 us,
        // negative gradient -> +delta.
        t.on_ack(&ack(1002 * US, 500 * US));
        close(t.rate, 25.21 * G);
    }

    #[test]
    fn gradient_decrease_with_fixed_min_rtt() {
        let mut t = Timely::new(&TimelyConfig { min_rtt: Some(Time::us(20)), ..cfg() }, &params());
        // First event: prev = 60 us, diff 0, gradient 0 <= 0 -> +delta -> 50.01 G.
        t.on_ack(&ack(60 * US, 60 * US));
        close(t.rate, 50.01 * G);
        // 80 us: diff 20 us; rtt_diff = 0.875 * 20 = 17.5 us; g = 17.5/20 = 0.875;
        // rate *= 1 - 0.8 * 0.875 = 0.3 -> 15.003 G.
        t.on_ack(&ack(61 * US, 80 * US));
        close(t.rtt_diff, 17.5e6);
        close(t.gradient, 0.875);
        close(t.rate, 15.003 * G);
        // 80 us again: diff 0; rtt_diff = 0.125 * 17.5 = 2.1875 us; g = 0.109375;
        // rate *= 1 - 0.0875 = 0.9125 -> 13.6902375 G.
        t.on_ack(&ack(62 * US, 80 * US));
        close(t.gradient, 0.109375);
        close(t.rate, 13.6902375 * G);
    }

    #[test]
    fn gradient_normalized_by_smallest_rtt_seen() {
        let mut t = Timely::new(&cfg(), &params());
        // min_rtt: 8 us (base) until the first sample, then the smallest sample: 60 us.
        t.on_ack(&ack(60 * US, 60 * US));
        assert_eq!(t.min_rtt, 60e6);
        close(t.rate, 50.01 * G);
        // 90 us: diff 30; rtt_diff 26.25 us; g = 26.25/60 = 0.4375; x (1 - 0.35) = 0.65.
        t.on_ack(&ack(61 * US, 90 * US));
        assert_eq!(t.min_rtt, 60e6);
        close(t.rate, 50.01 * 0.65 * G);
    }

    #[test]
    fn gradient_decrease_factor_floors_at_zero_then_min_rate() {
        let mut t = Timely::new(&TimelyConfig { min_rtt: Some(Time::us(10)), ..cfg() }, &params());
        t.on_ack(&ack(60 * US, 60 * US));
        // diff 40 us; rtt_diff 35 us; g = 3.5; 1 - 0.8 * 3.5 < 0 -> 0 -> min_rate 10 Mbps.
        t.on_ack(&ack(61 * US, 100 * US));
        close(t.rate, 10.0 * M);
        assert_eq!(t.rate(), 10_000_000);
    }

    #[test]
    fn hyperactive_increase_after_five_negative_differences() {
        let mut t = Timely::new(&TimelyConfig { min_rtt: Some(Time::us(20)), ..cfg() }, &params());
        // 200 us then falling by 10 us per event: every gradient is <= 0.
        // neg_count 0,1,2,3,4 -> +10 Mbps; 5, 6 -> +5 x 10 Mbps.
        let want = [50.01, 50.02, 50.03, 50.04, 50.05, 50.10, 50.15];
        for (i, (rtt, w)) in (0..7).map(|i| 200 - 10 * i).zip(want).enumerate() {
            t.on_ack(&ack((300 + i as u64) * US, rtt * US));
            assert_eq!(t.neg_count, i as u32);
            close(t.rate, w * G);
        }
        // An equal sample resets the count; rtt_diff is still negative -> +10 Mbps.
        t.on_ack(&ack(310 * US, 140 * US));
        assert_eq!(t.neg_count, 0);
        assert!(t.gradient < 0.0);
        close(t.rate, 50.16 * G);
    }

    /// Rates after each event of one RTT script under `rule`: seven samples
    /// below T_low (10 us), a rise to 60 us, a fall to 40 us (below T_low again).
    fn increase_script(rule: IncreaseRule) -> Vec<f64> {
        let c = TimelyConfig { increase_rule: rule, min_rtt: Some(Time::ms(1)), ..cfg() };
        let mut t = Timely::new(&c, &params());
        [10, 10, 10, 10, 10, 10, 10, 60, 40]
            .iter()
            .enumerate()
            .map(|(i, &rtt)| {
                t.on_ack(&ack((100 + i as u64) * US, rtt * US));
                t.rate
            })
            .collect()
    }

    #[test]
    fn paper_rule_adds_delta_below_t_low_from_the_first_event() {
        let r = increase_script(IncreaseRule::Paper);
        // Below T_low: + 10 Mbps every event, the first included, never hyperactive.
        for (i, &rate) in r[..7].iter().enumerate() {
            close(rate, (50.0 + 0.01 * (i + 1) as f64) * G);
        }
        // 60 us: diff 50 us, rtt_diff 43.75 us, g = 43.75 / 1000 = 0.04375:
        // x (1 - 0.8 x 0.04375) = 0.965.
        close(r[7], 50.07 * 0.965 * G);
        // 40 us < T_low: + delta.
        close(r[8], (50.07 * 0.965 + 0.01) * G);
    }

    #[test]
    fn ns3_rule_counts_every_increase_and_skips_the_first_event() {
        let r = increase_script(IncreaseRule::Ns3);
        // First event: the RTT is recorded, the rate stays.
        close(r[0], 50.0 * G);
        // Stages 0..4: + 10 Mbps; stage 5 (the sixth increase): + 5 x 10 Mbps,
        // below T_low too.
        let want = [50.01, 50.02, 50.03, 50.04, 50.05, 50.10];
        for (&rate, w) in r[1..7].iter().zip(want) {
            close(rate, w * G);
        }
        // The same decrease as the paper's (x 0.965) resets the stage ...
        close(r[7], 50.10 * 0.965 * G);
        // ... so the next increase is + delta again.
        close(r[8], (50.10 * 0.965 + 0.01) * G);
        let c: TimelyConfig = toml::from_str("increase_rule = \"ns3\"").unwrap();
        assert_eq!(c.increase_rule, IncreaseRule::Ns3);
        assert!(toml::from_str::<TimelyConfig>("increase_rule = \"hpcc\"").is_err());
    }

    #[test]
    fn rate_is_clamped_to_line_rate_and_min_rate() {
        let mut t = Timely::new(&TimelyConfig { initial_rate: None, ..cfg() }, &params());
        t.on_ack(&ack(10 * US, 10 * US));
        assert_eq!(t.rate(), 100_000_000_000);
        let mut t = Timely::new(&TimelyConfig { initial_rate: Some(Rate(20_000_000)), ..cfg() }, &params());
        // x0.6 -> 12 Mbps; x0.6 -> 7.2 Mbps, floored at 10 Mbps.
        t.on_ack(&ack(1000 * US, 1000 * US));
        close(t.rate, 12.0 * M);
        t.on_ack(&ack(1001 * US, 1000 * US));
        close(t.rate, 10.0 * M);
    }

    #[test]
    fn one_update_per_segment_by_default() {
        // Default update_every = 16 KiB = 16384 bytes: with 1000-byte ACKs the
        // 17th ACK completes the first segment (17000 >= 16384).
        let mut t = Timely::new(&TimelyConfig { initial_rate: Some(Rate::gbps(50)), ..Default::default() }, &params());
        for i in 0..16 {
            t.on_ack(&ack(i * US, 10 * US));
            assert_eq!(t.updates, 0);
        }
        close(t.rate, 50.0 * G);
        t.on_ack(&ack(16 * US, 10 * US));
        assert_eq!(t.updates, 1);
        close(t.rate, 50.01 * G);
        // A duplicate ACK (nothing newly acknowledged) is never a completion event.
        let mut t = Timely::new(&cfg(), &params());
        t.on_ack(&AckSample { acked_bytes: 0, ..ack(1, 10 * US) });
        assert_eq!(t.updates, 0);
    }

    #[test]
    fn once_per_rtt_waits_for_the_data_sent_at_the_last_event() {
        let c = TimelyConfig { once_per_rtt: true, ..cfg() };
        let mut t = Timely::new(&c, &params());
        let a = |now, una, nxt| AckSample { snd_una: una, snd_nxt: nxt, ..ack(now, 10 * US) };
        // First ACK (snd_una 1 > 0): event, remembers snd_nxt = 20.
        t.on_ack(&a(10 * US, 1, 20));
        assert_eq!(t.updates, 1);
        close(t.rate, 50.01 * G);
        // snd_una up to 20: same round trip, no event.
        for una in 2..=20 {
            t.on_ack(&a(11 * US, una, 20 + una));
        }
        assert_eq!(t.updates, 1);
        // snd_una 21 > 20: next event.
        t.on_ack(&a(20 * US, 21, 45));
        assert_eq!(t.updates, 2);
        close(t.rate, 50.02 * G);
    }

    #[test]
    fn nack_and_timeout_leave_the_rate() {
        let mut t = Timely::new(&cfg(), &params());
        t.on_nack(1, 10, crate::packet::NackReason::Trimmed);
        t.on_timeout(2);
        close(t.rate, 50.0 * G);
    }

    /// The stamps of the three-event script below: (max, sum, sum_squ) in bytes,
    /// i.e. x 80 ps at 100 Gbps.
    /// 1: (0, 0, 0); 2: (125000 = 10 us, 250000 = 20 us, 187500 = 15 us);
    /// 3: (62500 = 5 us, 250000 = 20 us, 125000 = 10 us).
    fn run_script(signal: TimelySignal) -> Vec<f64> {
        let c = TimelyConfig { signal, alpha: 0.5, initial_rate: Some(Rate::gbps(50)), ..Default::default() };
        let mut t = Timely::new(&c, &params());
        let script = [(100 * US, 0, 0, 0.0), (150 * US, 125_000, 250_000, 187_500.0), (175 * US, 62_500, 250_000, 125_000.0)];
        // RTT a constant 100 us (between T_low and T_high): min_rtt = 100 us.
        script
            .iter()
            .map(|&(now, max, sum, sq)| {
                t.on_ack(&sack(now, 100 * US, max, sum, sq));
                t.rate
            })
            .collect()
    }

    #[test]
    fn max_variant_reads_max() {
        let r = run_script(TimelySignal::Max);
        // 1: first event, diff 0, g 0 <= 1e-6: +delta x D, D = 1 (no previous update) -> 50.01 G.
        close(r[0], 50.01 * G);
        // 2: diff 10 us; avg = 0.5 x 10 = 5 us; g = 5/100 = 0.05; x (1 - 0.8 x 0.05) = 0.96.
        close(r[1], 48.0096 * G);
        // 3: diff -5 us; avg = 0.5 x 5 - 0.5 x 5 = 0; g = 0 -> +delta x D,
        // D = (175 - 150)/100 = 0.25 -> +2.5 Mbps.
        close(r[2], 48.0121 * G);
    }

    #[test]
    fn sum_variant_reads_sum() {
        let r = run_script(TimelySignal::Sum);
        close(r[0], 50.01 * G);
        // diff 20 us; avg 10 us; g 0.1; x 0.92 -> 46.0092 G.
        close(r[1], 46.0092 * G);
        // diff 0; avg 5 us; g 0.05; x 0.96 -> 44.168832 G.
        close(r[2], 44.168832 * G);
    }

    #[test]
    fn sum_squ_variant_reads_the_norm() {
        let r = run_script(TimelySignal::SumSqu);
        close(r[0], 50.01 * G);
        // diff 15 us; avg 7.5 us; g 0.075; x 0.94 -> 47.0094 G.
        close(r[1], 47.0094 * G);
        // diff -5 us; avg = 3.75 - 2.5 = 1.25 us; g 0.0125 > 1e-6; x 0.99 -> 46.539306 G.
        close(r[2], 46.539306 * G);
    }

    #[test]
    fn rtt_signal_ignores_stamps() {
        // Same script with the RTT as the gradient input: constant RTT, zero gradient,
        // additive increase every time (Timely law: no D scaling).
        let c =
            TimelyConfig { alpha: 0.5, update_every: Some(Size(0)), initial_rate: Some(Rate::gbps(50)), ..Default::default() };
        let mut t = Timely::new(&c, &params());
        t.on_ack(&sack(100 * US, 100 * US, 125_000, 250_000, 187_500.0));
        t.on_ack(&sack(150 * US, 100 * US, 0, 0, 0.0));
        close(t.rate, 50.02 * G);
    }

    #[test]
    fn hope_t_high_is_time_scaled_and_floored_at_half() {
        let c = TimelyConfig { signal: TimelySignal::Max, initial_rate: Some(Rate::gbps(50)), ..Default::default() };
        let mut t = Timely::new(&c, &params());
        // rtt 2000 us > T_high: D = 1: x (1 - 0.8 x (1 - 500/2000)) = 0.4 -> 20 G,
        // floored at 0.5 x 50 G = 25 G.
        t.on_ack(&sack(2000 * US, 2000 * US, 0, 0, 0.0));
        close(t.rate, 25.0 * G);
        // 500 us later, min_rtt 2000 us: D = 0.25: x (1 - 0.25 x 0.6) = 0.85 -> 21.25 G.
        t.on_ack(&sack(2500 * US, 2000 * US, 0, 0, 0.0));
        close(t.rate, 21.25 * G);
    }

    #[test]
    fn hope_t_low_step_is_time_scaled() {
        let c = TimelyConfig { signal: TimelySignal::Max, initial_rate: Some(Rate::gbps(50)), ..Default::default() };
        let mut t = Timely::new(&c, &params());
        // rtt 10 us < T_low: D = 1 -> +10 Mbps.
        t.on_ack(&sack(10 * US, 10 * US, 0, 0, 0.0));
        close(t.rate, 50.01 * G);
        // 5 us later, min_rtt 10 us: D = 0.5 -> +5 Mbps.
        t.on_ack(&sack(15 * US, 10 * US, 0, 0, 0.0));
        close(t.rate, 50.015 * G);
        // 30 us later: D clamps at 1 -> +10 Mbps.
        t.on_ack(&sack(45 * US, 10 * US, 0, 0, 0.0));
        close(t.rate, 50.025 * G);
    }

    #[test]
    fn hope_hai_is_time_scaled() {
        let c =
            TimelyConfig { signal: TimelySignal::Max, initial_rate: Some(Rate::gbps(50)), hai_thresh: 1, ..Default::default() };
        let mut t = Timely::new(&c, &params());
        // rtt 100 us; max 10 us then 5 us.
        t.on_ack(&sack(100 * US, 100 * US, 125_000, 0, 0.0)); // first: +10 Mbps
        close(t.rate, 50.01 * G);
        // diff -5 us -> neg_count 1 >= hai_thresh 1: +5 x 10 Mbps x D, D = 50/100 -> +25 Mbps.
        t.on_ack(&sack(150 * US, 100 * US, 62_500, 0, 0.0));
        close(t.rate, 50.035 * G);
    }

    #[test]
    fn hope_law_with_rtt_signal() {
        // law = "hope" with the RTT: the BS'19 Timely baseline.
        let c = TimelyConfig { law: Some(TimelyLaw::Hope), initial_rate: Some(Rate::gbps(50)), ..Default::default() };
        assert_eq!(c.update_every_bytes(), 0);
        let mut t = Timely::new(&c, &params());
        t.on_ack(&ack(100 * US, 100 * US));
        close(t.rate, 50.01 * G);
        // 400 us: diff 300 us; avg 262.5 us; g = 2.625 (min_rtt 100 us);
        // 1 - 0.8 x 2.625 = -1.1 -> floored at 0.5 x 50.01 G.
        t.on_ack(&ack(110 * US, 400 * US));
        close(t.rate, 25.005 * G);
    }

    #[test]
    fn quantized_stamps_flow_through_unchanged() {
        // 2-bit stamps over 292000 bytes: interval 73000; hops stamping 100000 and
        // 200000 bytes carry 73000 and 146000.
        let setup = StampSetup { collect: Collector::Enqueue, bits: 2, range: 292_000, ind_threshold: 146_000 };
        let mut s = Signals::default();
        setup.stamp(&mut s, 100_000);
        setup.stamp(&mut s, 200_000);
        let sample = setup.sample(&s);
        assert_eq!((sample.max, sample.sum), (146_000, 219_000));
        for (signal, want_ps) in [
            (TimelySignal::Max, 146_000.0 * 80.0),
            (TimelySignal::Sum, 219_000.0 * 80.0),
            (TimelySignal::SumSqu, (73_000f64.powi(2) + 146_000f64.powi(2)).sqrt() * 80.0),
        ] {
            let c = TimelyConfig { signal, ..Default::default() };
            let mut t = Timely::new(&c, &params());
            t.on_ack(&AckSample { stamps: Some(sample), ..ack(100 * US, 100 * US) });
            close(t.prev_signal.unwrap(), want_ps);
        }
        // 1 bit: everything below 146000 stamps as 0, the rest as 146000.
        let one = StampSetup { bits: 1, ..setup };
        let mut s = Signals::default();
        one.stamp(&mut s, 145_999);
        let c = TimelyConfig { signal: TimelySignal::Max, ..Default::default() };
        let mut t = Timely::new(&c, &params());
        t.on_ack(&AckSample { stamps: Some(one.sample(&s)), ..ack(100 * US, 100 * US) });
        assert_eq!(t.prev_signal, Some(0.0));
    }

    #[test]
    fn stamp_units_and_rate() {
        let st = |max| Some(StampSample { hops: 1, max, sum: max, sum_squ: max as f64, ind: false });
        // Sojourn stamps are picoseconds already.
        let c = TimelyConfig { signal: TimelySignal::Max, stamp_unit: StampUnit::Ps, ..Default::default() };
        let mut t = Timely::new(&c, &params());
        t.on_ack(&AckSample { stamps: st(3_000_000), ..ack(100 * US, 100 * US) });
        assert_eq!(t.prev_signal, Some(3_000_000.0));
        // stamp_rate 10 Gbps: 125000 bytes = 100 us (800 ps per byte).
        let c = TimelyConfig { signal: TimelySignal::Max, stamp_rate: Some(Rate::gbps(10)), ..Default::default() };
        let mut t = Timely::new(&c, &params());
        t.on_ack(&AckSample { stamps: st(125_000), ..ack(100 * US, 100 * US) });
        close(t.prev_signal.unwrap(), 100e6);
        // Without stamps, a stamp signal has no completion event.
        let mut t = Timely::new(&c, &params());
        t.on_ack(&ack(100 * US, 100 * US));
        assert_eq!(t.updates, 0);
        assert_eq!(t.min_rtt, 100e6);
    }

    #[test]
    fn window_follows_rate_times_rtt() {
        let c = TimelyConfig { window: true, ..cfg() };
        let mut t = Timely::new(&c, &params());
        // Before a sample: 50 G x 8 us / 8 = 50000 wire bytes = 46.99 packets of 1064 -> x 1000.
        assert_eq!(t.cwnd(), 46_992);
        // rtt 100 us, first event (zero gradient): +10 Mbps, then the window is
        // 50.01e9 x 100e-6 / 8 = 625125 bytes / 1064 = 587.5234 packets -> 587523 bytes.
        t.on_ack(&ack(100 * US, 100 * US));
        assert_eq!(t.cwnd(), 587_523);
        // From 10 Mbps, rtt 10 us < T_low: 20 Mbps; 20e6 x 10e-6 / 8 = 25 bytes,
        // 0.0235 packets -> at least 1.1 packets of 1000 bytes.
        let mut t = Timely::new(&TimelyConfig { window: true, initial_rate: Some(Rate(10_000_000)), ..cfg() }, &params());
        t.on_ack(&ack(10 * US, 10 * US));
        close(t.rate, 20.0 * M);
        assert_eq!(t.cwnd(), 1_100);
        assert_eq!(t.metrics().cwnd_bytes, 1_100);
    }
}
