//! DCQCN's reaction point (Zhu et al., SIGCOMM 2015), rate-based.
//!
//! The structure is the Mellanox version as modelled by the HPCC ns-3 simulator
//! (`rdma-hw.cc`: `cnp_received_mlx`, `UpdateAlphaMlx`, `CheckRateDecreaseMlx`,
//! `RateIncEventTimerMlx`), with the paper's byte counter as an optional second
//! increase trigger:
//!
//! - a CNP sets two flags; the first CNP of a flow also sets alpha = 1, starts
//!   the alpha grid (every `alpha_timer`) and the decrease grid (every
//!   `decrease_timer`, 1 ns after the alpha grid), and sets Rc = Rt =
//!   `rate_on_first_cnp` x Rc;
//! - alpha tick: alpha = (1 - g) alpha + g if a CNP arrived in the last period,
//!   else alpha = (1 - g) alpha;
//! - decrease check (only if a CNP arrived since the last one): Rt = Rc if
//!   `clamp_target` or any increase event happened since the last cut;
//!   Rc = max(min_rate, Rc (1 - alpha / 2)); stage counters and byte counter
//!   reset; the increase timer restarts;
//! - increase event (every `increase_timer`, and every `byte_counter` bytes
//!   sent): fast recovery, additive (R_AI) or hyper (R_HAI) increase of Rt by
//!   the stage counters, then Rc = (Rc + Rt) / 2; Rt never exceeds the line rate.
//!
//! Timers are lazy: alpha ticks are never scheduled (alpha is brought up to
//! date from the elapsed periods whenever a hook runs); the decrease check is
//! scheduled only while a CNP is pending; the increase timer runs only while
//! the rate is below the line rate. The result is the same as the periodic
//! timers of the ns-3 model. See docs/cc/dcqcn.md.

use serde::Deserialize;

use super::{Algorithm, CcMetrics, CnpDecision, CnpSample, ConfigError, CongestionControl, FlowParams, Receiver, Sections, Shared};
use crate::packet::Advice;
use crate::units::{Rate, Size, Time, PS_PER_NS};

/// A named set of defaults for every DCQCN constant.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum DcqcnProfile {
    /// The DCQCN paper's constants (Zhu et al. 2015), with byte counter.
    Paper,
    /// The HPCC ns-3 simulator's `mix/config.txt` DCQCN values (timer only).
    #[default]
    Hpcc,
    /// What the HPCC repository's `run.py --cc dcqcn` writes (the HPCC
    /// paper's DCQCN runs): 300 us increase timer, R_AI and R_HAI of 5 and
    /// 50 Mb/s per 25 Gb/s of line rate, 1 Gb/s floor.
    #[serde(rename = "hpcc_run")]
    HpccRun,
    /// `run.py --cc dcqcn_paper`: as `hpcc_run` with 50 us alpha and decrease
    /// periods and a 55 us increase timer.
    #[serde(rename = "hpcc_run_paper")]
    HpccRunPaper,
}

/// `[transport.dcqcn]`: a profile, and any of its constants overridden.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DcqcnConfig {
    #[serde(default)]
    pub profile: DcqcnProfile,
    /// `transport.cnp_interval`, as the scenario sets it (not a key of the
    /// section: filled in by [`Algorithm::resolve`]).
    #[serde(skip)]
    pub cnp_interval: Option<Time>,
    /// EWMA gain of alpha.
    #[serde(default)]
    pub g: Option<f64>,
    /// Additive-increase step of the target rate (R_AI).
    #[serde(default)]
    pub rate_ai: Option<Rate>,
    /// Hyper-increase step of the target rate (R_HAI).
    #[serde(default)]
    pub rate_hai: Option<Rate>,
    /// Alpha update period.
    #[serde(default)]
    pub alpha_timer: Option<Time>,
    /// Rate-decrease check period; 0 cuts at every CNP.
    #[serde(default)]
    pub decrease_timer: Option<Time>,
    /// Rate-increase timer period; 0 turns the timer off.
    #[serde(default)]
    pub increase_timer: Option<Time>,
    /// Bytes sent per byte-counter increase event; 0 turns the counter off.
    #[serde(default)]
    pub byte_counter: Option<Size>,
    /// Fast-recovery steps F.
    #[serde(default)]
    pub fast_recovery_steps: Option<u32>,
    /// Floor of the current rate after a cut.
    #[serde(default)]
    pub min_rate: Option<Rate>,
    /// Factor applied to the rate (current and target) on the first CNP.
    #[serde(default)]
    pub rate_on_first_cnp: Option<f64>,
    /// Set the target rate to the current rate at every cut.
    #[serde(default)]
    pub clamp_target: Option<bool>,
    /// Also limit bytes in flight to `window_bdp x Rc / line rate`
    /// (the ns-3 `dcqcn_vwin` variant).
    #[serde(default)]
    pub window: bool,
    /// The BDP of the window; default the flow's own (line rate x base RTT).
    #[serde(default)]
    pub window_bdp: Option<Size>,
}

/// Every DCQCN constant as a plain number, after profile and overrides.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DcqcnParams {
    pub g: f64,
    pub rate_ai_bps: u64,
    pub rate_hai_bps: u64,
    pub alpha_timer_ps: u64,
    /// 0: cut at every CNP.
    pub decrease_timer_ps: u64,
    /// 0: no increase timer.
    pub increase_timer_ps: u64,
    /// 0: no byte counter.
    pub byte_counter: u64,
    pub fast_recovery_steps: u32,
    pub min_rate_bps: u64,
    pub rate_on_first_cnp: f64,
    pub clamp_target: bool,
    pub window: bool,
    pub window_bdp: Option<u64>,
    /// `rate_ai_bps` and `rate_hai_bps` are per [`RATE_SCALE_BPS`] of line rate
    /// (run.py's `5 * bw / 25`), scaled by each flow's line rate.
    pub rate_ai_scaled: bool,
    pub rate_hai_scaled: bool,
}

/// The line rate run.py's DCQCN steps are quoted for (its `bw / 25`).
pub const RATE_SCALE_BPS: u64 = 25_000_000_000;

const MBPS: u64 = 1_000_000;
const US: u64 = crate::units::PS_PER_US;

impl DcqcnProfile {
    /// The profile's constants (no window).
    pub fn params(self) -> DcqcnParams {
        match self {
            // HPCC repo, mix/config.txt (DCQCN fields); table 2.4 of the notes.
            DcqcnProfile::Hpcc => DcqcnParams {
                g: 1.0 / 256.0,
                rate_ai_bps: 50 * MBPS,
                rate_hai_bps: 100 * MBPS,
                alpha_timer_ps: US,
                decrease_timer_ps: 4 * US,
                increase_timer_ps: 900 * US,
                byte_counter: 0,
                fast_recovery_steps: 1,
                min_rate_bps: 100 * MBPS,
                rate_on_first_cnp: 1.0,
                clamp_target: false,
                window: false,
                window_bdp: None,
                rate_ai_scaled: false,
                rate_hai_scaled: false,
            },
            // HPCC repo, simulation/run.py, `--cc dcqcn`: t_alpha = 1, t_dec = 4,
            // t_inc = 300 (us), g = 0.00390625, ai = 5 * bw / 25 and
            // hai = 50 * bw / 25 (Mb/s), MIN_RATE 1000Mb/s, FAST_RECOVERY_TIMES 1,
            // CLAMP_TARGET_RATE 0.
            DcqcnProfile::HpccRun => DcqcnParams {
                g: 1.0 / 256.0,
                rate_ai_bps: 5 * MBPS,
                rate_hai_bps: 50 * MBPS,
                alpha_timer_ps: US,
                decrease_timer_ps: 4 * US,
                increase_timer_ps: 300 * US,
                byte_counter: 0,
                fast_recovery_steps: 1,
                min_rate_bps: 1000 * MBPS,
                rate_on_first_cnp: 1.0,
                clamp_target: false,
                window: false,
                window_bdp: None,
                rate_ai_scaled: true,
                rate_hai_scaled: true,
            },
            // run.py `--cc dcqcn_paper`: t_alpha = 50, t_dec = 50, t_inc = 55 (us).
            DcqcnProfile::HpccRunPaper => DcqcnParams {
                alpha_timer_ps: 50 * US,
                decrease_timer_ps: 50 * US,
                increase_timer_ps: 55 * US,
                ..DcqcnProfile::HpccRun.params()
            },
            // Zhu et al. 2015; see docs/cc/dcqcn.md for which values are unverified.
            DcqcnProfile::Paper => DcqcnParams {
                g: 1.0 / 256.0,
                rate_ai_bps: 40 * MBPS,
                rate_hai_bps: 400 * MBPS,
                alpha_timer_ps: 55 * US,
                decrease_timer_ps: 0,
                increase_timer_ps: 55 * US,
                byte_counter: 10 << 20,
                fast_recovery_steps: 5,
                min_rate_bps: 100 * MBPS,
                rate_on_first_cnp: 1.0,
                clamp_target: true,
                window: false,
                window_bdp: None,
                rate_ai_scaled: false,
                rate_hai_scaled: false,
            },
        }
    }
}

impl DcqcnConfig {
    /// The profile's constants with this config's overrides applied.
    pub fn resolve(&self) -> DcqcnParams {
        let mut p = self.profile.params();
        if let Some(v) = self.g {
            p.g = v;
        }
        // An override is an absolute rate, whatever the profile.
        if let Some(v) = self.rate_ai {
            p.rate_ai_bps = v.0;
            p.rate_ai_scaled = false;
        }
        if let Some(v) = self.rate_hai {
            p.rate_hai_bps = v.0;
            p.rate_hai_scaled = false;
        }
        if let Some(v) = self.alpha_timer {
            p.alpha_timer_ps = v.0;
        }
        if let Some(v) = self.decrease_timer {
            p.decrease_timer_ps = v.0;
        }
        if let Some(v) = self.increase_timer {
            p.increase_timer_ps = v.0;
        }
        if let Some(v) = self.byte_counter {
            p.byte_counter = v.0;
        }
        if let Some(v) = self.fast_recovery_steps {
            p.fast_recovery_steps = v;
        }
        if let Some(v) = self.min_rate {
            p.min_rate_bps = v.0;
        }
        if let Some(v) = self.rate_on_first_cnp {
            p.rate_on_first_cnp = v;
        }
        if let Some(v) = self.clamp_target {
            p.clamp_target = v;
        }
        p.window = self.window;
        p.window_bdp = self.window_bdp.map(|s| s.0);
        p
    }

    /// Checks the resolved constants; on error, the offending key (under
    /// `transport.dcqcn`) and a message.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        let p = self.resolve();
        if !(p.g > 0.0 && p.g <= 1.0) {
            return Err(("g", format!("g must be in (0, 1], got {}", p.g)));
        }
        if p.alpha_timer_ps == 0 {
            return Err(("alpha_timer", "alpha_timer must be above zero".into()));
        }
        if p.increase_timer_ps == 0 && p.byte_counter == 0 {
            return Err((
                "increase_timer",
                "increase_timer and byte_counter are both zero: the rate could never increase again".into(),
            ));
        }
        if !(p.rate_on_first_cnp > 0.0 && p.rate_on_first_cnp <= 1.0) {
            return Err((
                "rate_on_first_cnp",
                format!("rate_on_first_cnp must be in (0, 1], got {}", p.rate_on_first_cnp),
            ));
        }
        if p.window_bdp == Some(0) {
            return Err(("window_bdp", "window_bdp must be above zero".into()));
        }
        Ok(())
    }
}

/// A rate step, scaled by `line / RATE_SCALE_BPS` when `per_scale`.
fn scaled(bps: u64, per_scale: bool, line: f64) -> f64 {
    if per_scale {
        bps as f64 * line / RATE_SCALE_BPS as f64
    } else {
        bps as f64
    }
}

/// What triggered an increase event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Trigger {
    Timer,
    Bytes,
}

/// The reaction point of one flow.
#[derive(Clone, Debug)]
pub struct Dcqcn {
    p: DcqcnParams,
    line: f64,
    rate_ai: f64,
    rate_hai: f64,
    min_rate: f64,
    mss: u64,
    /// BDP of the optional window.
    bdp: u64,
    /// Current rate Rc and target rate Rt, bits per second (Rc <= Rt <= line rate
    /// unless `rate_on_first_cnp` pushed Rt below `min_rate`).
    pub rc: f64,
    pub rt: f64,
    pub alpha: f64,
    /// Increase events since the last cut, by trigger (the stage counters).
    pub time_stage: u32,
    pub byte_stage: u32,
    /// A CNP has arrived: the alpha and decrease grids exist.
    started: bool,
    /// Next alpha tick (on the grid first CNP + k x alpha_timer); ticks up to the
    /// last hook's time have been applied.
    alpha_next: u64,
    cnp_for_alpha: bool,
    /// The decrease grid is `dec_anchor + k x decrease_timer`, k >= 1.
    dec_anchor: u64,
    /// Next decrease check; meaningful only while `cnp_for_decrease`.
    dec_at: u64,
    cnp_for_decrease: bool,
    /// After a cut, until Rc is back at the line rate: increase events happen.
    recovering: bool,
    /// Next increase-timer event, while recovering with a timer.
    inc_at: Option<u64>,
    /// Bytes sent toward the next byte-counter event.
    bytes: u64,
}

impl Dcqcn {
    pub fn new(c: &DcqcnConfig, f: &FlowParams) -> Self {
        Self::with_params(c.resolve(), f)
    }

    pub fn with_params(p: DcqcnParams, f: &FlowParams) -> Self {
        let line = f.line_rate_bps as f64;
        Dcqcn {
            p,
            line,
            rate_ai: scaled(p.rate_ai_bps, p.rate_ai_scaled, line),
            rate_hai: scaled(p.rate_hai_bps, p.rate_hai_scaled, line),
            min_rate: (p.min_rate_bps as f64).min(line),
            mss: f.mss as u64,
            bdp: p.window_bdp.unwrap_or_else(|| f.bdp()),
            rc: line,
            rt: line,
            alpha: 1.0,
            time_stage: 0,
            byte_stage: 0,
            started: false,
            alpha_next: 0,
            cnp_for_alpha: false,
            dec_anchor: 0,
            dec_at: 0,
            cnp_for_decrease: false,
            recovering: false,
            inc_at: None,
            bytes: 0,
        }
    }

    pub fn params(&self) -> &DcqcnParams {
        &self.p
    }

    /// Applies the alpha ticks at or before `t`.
    fn sync_alpha(&mut self, t: u64) {
        if !self.started || self.alpha_next > t {
            return;
        }
        let period = self.p.alpha_timer_ps;
        let mut n = (t - self.alpha_next) / period + 1;
        self.alpha_next += n * period;
        let keep = 1.0 - self.p.g;
        if self.cnp_for_alpha {
            self.alpha = keep * self.alpha + self.p.g;
            self.cnp_for_alpha = false;
            n -= 1;
        }
        if n > 0 {
            self.alpha *= if n <= i32::MAX as u64 { keep.powi(n as i32) } else { 0.0 };
        }
    }

    /// Runs every deadline at or before `now`, in time order (at equal times:
    /// alpha tick, then increase timer, then decrease check).
    fn advance(&mut self, now: u64) {
        loop {
            let inc = self.inc_at.unwrap_or(u64::MAX);
            let dec = self.pending_decrease().unwrap_or(u64::MAX);
            let t = inc.min(dec);
            if t > now {
                break;
            }
            self.sync_alpha(t);
            if inc <= dec {
                self.inc_at = Some(t + self.p.increase_timer_ps);
                self.increase(Trigger::Timer);
            } else {
                self.decrease(t);
            }
        }
        self.sync_alpha(now);
    }

    fn pending_decrease(&self) -> Option<u64> {
        (self.cnp_for_decrease && self.p.decrease_timer_ps > 0).then_some(self.dec_at)
    }

    /// The rate decrease (at a decrease check with a CNP pending, or at the CNP
    /// itself when `decrease_timer` is 0).
    fn decrease(&mut self, t: u64) {
        if self.p.clamp_target || self.time_stage > 0 || self.byte_stage > 0 {
            self.rt = self.rc;
        }
        self.rc = (self.rc * (1.0 - self.alpha / 2.0)).max(self.min_rate);
        self.cnp_for_decrease = false;
        self.restart_increase(t);
    }

    /// After a cut: stages and byte counter to zero, increase timer from `t`.
    fn restart_increase(&mut self, t: u64) {
        self.time_stage = 0;
        self.byte_stage = 0;
        self.bytes = 0;
        self.recovering = true;
        self.inc_at = (self.p.increase_timer_ps > 0).then(|| t + self.p.increase_timer_ps);
        self.check_recovered();
    }

    /// One increase event. The phase comes from the stage counters of the enabled
    /// triggers, counting the events before this one: fast recovery while all are
    /// below F, hyper increase once all are above F, additive increase otherwise.
    fn increase(&mut self, trigger: Trigger) {
        let f = self.p.fast_recovery_steps;
        let (lo, hi) = match (self.p.increase_timer_ps > 0, self.p.byte_counter > 0) {
            (true, true) => (self.time_stage.min(self.byte_stage), self.time_stage.max(self.byte_stage)),
            (false, true) => (self.byte_stage, self.byte_stage),
            _ => (self.time_stage, self.time_stage),
        };
        if hi < f {
            // Fast recovery: Rt unchanged.
        } else if lo > f {
            self.rt = (self.rt + self.rate_hai).min(self.line);
        } else {
            self.rt = (self.rt + self.rate_ai).min(self.line);
        }
        self.rc = (self.rc + self.rt) / 2.0;
        match trigger {
            Trigger::Timer => self.time_stage = self.time_stage.saturating_add(1),
            Trigger::Bytes => self.byte_stage = self.byte_stage.saturating_add(1),
        }
        self.check_recovered();
    }

    /// Sets both rates at `now` as a cut would (DCQCN-Rev's reaction point):
    /// deadlines up to now run first; any pending decrease is dropped; the
    /// increase machinery restarts from `now`.
    pub(crate) fn set_rates(&mut self, now: u64, rc: f64, rt: f64) {
        self.advance(now);
        self.rc = rc.clamp(self.min_rate.min(self.line), self.line);
        self.rt = rt.clamp(self.rc, self.line);
        self.cnp_for_decrease = false;
        self.restart_increase(now);
    }

    pub(crate) fn line_rate(&self) -> f64 {
        self.line
    }

    /// Back at the line rate (within 1 b/s): stop the increase machinery.
    fn check_recovered(&mut self) {
        if self.rt >= self.line && self.rc >= self.line - 1.0 {
            self.rc = self.line;
            self.recovering = false;
            self.inc_at = None;
            self.bytes = 0;
        }
    }
}

impl CongestionControl for Dcqcn {
    fn on_cnp(&mut self, cnp: &CnpSample) {
        let now = cnp.now_ps;
        self.advance(now);
        if self.started {
            self.cnp_for_alpha = true;
        } else {
            self.started = true;
            self.alpha = 1.0;
            self.cnp_for_alpha = false;
            self.alpha_next = now + self.p.alpha_timer_ps;
            self.dec_anchor = now + PS_PER_NS;
            self.rc *= self.p.rate_on_first_cnp;
            self.rt = self.rc;
        }
        self.cnp_for_decrease = true;
        let period = self.p.decrease_timer_ps;
        match now.saturating_sub(self.dec_anchor).checked_div(period) {
            // decrease_timer = 0: cut at the CNP.
            None => self.decrease(now),
            // The first point of the decrease grid after now.
            Some(k) => self.dec_at = self.dec_anchor + (k + 1) * period,
        }
    }

    fn on_send(&mut self, now: u64, _psn: u32, bytes: u32) {
        self.advance(now);
        let bc = self.p.byte_counter;
        if self.recovering && bc > 0 {
            self.bytes += bytes as u64;
            while self.recovering && self.bytes >= bc {
                self.bytes -= bc;
                self.increase(Trigger::Bytes);
            }
        }
    }

    fn on_timeout(&mut self, now: u64) {
        self.advance(now);
        self.rt = self.rc;
        self.rc = (self.rc / 2.0).max(self.min_rate);
        self.restart_increase(now);
    }

    fn next_timer(&self) -> Option<u64> {
        match (self.inc_at, self.pending_decrease()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn on_timer(&mut self, now: u64) {
        self.advance(now);
    }

    fn cwnd(&self) -> u64 {
        if self.p.window {
            ((self.bdp as f64 * self.rc / self.line) as u64).max(self.mss)
        } else {
            u64::MAX
        }
    }

    fn rate(&self) -> u64 {
        (self.rc.round() as u64).max(1)
    }

    fn metrics(&self) -> CcMetrics {
        CcMetrics { cwnd_bytes: self.cwnd(), rate_bps: self.rate(), alpha: self.alpha }
    }
}

impl Algorithm for Dcqcn {
    const NAME: &'static str = "dcqcn";
    const ABOUT: &'static str = "DCQCN rate control from CNPs (Zhu et al. 2015); profiles paper and hpcc";
    type Config = DcqcnConfig;
    type Receiver = NotificationPoint;
    fn build(c: &DcqcnConfig, p: &FlowParams) -> Self {
        Dcqcn::new(c, p)
    }
    fn validate(c: &DcqcnConfig) -> Result<(), ConfigError> {
        c.validate().map_err(|(k, m)| (k.into(), m))
    }
    fn resolve(c: &mut DcqcnConfig, _sections: &Sections, shared: &Shared) {
        c.cnp_interval = shared.cnp_interval;
    }
}

/// The paper's N: the least time between two CNPs to one flow.
pub const CNP_INTERVAL: Time = Time::us(50);

impl DcqcnConfig {
    /// `transport.cnp_interval` as resolved: as set, else 0 with a profile
    /// other than `paper` (a CNP for every marked packet, as the ns-3 RDMA
    /// simulator behaves), else [`CNP_INTERVAL`].
    pub fn cnp_interval_ps(&self) -> u64 {
        match self.cnp_interval {
            Some(t) => t.0,
            None if self.profile != DcqcnProfile::Paper => 0,
            None => CNP_INTERVAL.0,
        }
    }
}

/// DCQCN's notification point (receiver side of a flow): a CNP for a
/// CE-marked packet unless one went to the flow less than `interval_ps` ago.
#[derive(Clone, Copy, Debug)]
pub struct NotificationPoint {
    pub interval_ps: u64,
    /// When the last decision (a CNP, or with DCQCN-Rev a suppressed one) was taken.
    pub last_ps: Option<u64>,
}

impl NotificationPoint {
    pub fn with_interval(interval_ps: u64) -> Self {
        NotificationPoint { interval_ps, last_ps: None }
    }

    /// Has the interval since the last decision run out at `now`?
    pub fn due(&self, now: u64) -> bool {
        self.last_ps.is_none_or(|t| now >= t + self.interval_ps)
    }
}

impl Receiver<DcqcnConfig> for NotificationPoint {
    fn new(c: &DcqcnConfig) -> Self {
        NotificationPoint::with_interval(c.cnp_interval_ps())
    }
    fn on_data(&mut self, now: u64, ce: bool, _advice: Advice, _wire_bytes: u32) -> Option<CnpDecision> {
        if !ce || !self.due(now) {
            return None;
        }
        self.last_ps = Some(now);
        // DCQCN's CNP carries no advice, whatever the marking switch stamped.
        Some(CnpDecision::Send(Advice::NONE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: f64 = 1e9;
    const M: f64 = 1e6;

    fn params() -> FlowParams {
        // 100 Gbps, 8 us base RTT: BDP = 100_000 bytes.
        FlowParams { line_rate_bps: 100_000_000_000, base_rtt_ps: 8_000_000, mss: 1000, packet_bytes: 1064, hops: 2 }
    }

    fn cfg(text: &str) -> DcqcnConfig {
        toml::from_str(text).unwrap()
    }

    fn new(text: &str) -> Dcqcn {
        let c = cfg(text);
        c.validate().unwrap();
        Dcqcn::new(&c, &params())
    }

    fn us(v: f64) -> u64 {
        (v * 1e6).round() as u64
    }

    #[track_caller]
    fn close(got: f64, want: f64) {
        assert!((got - want).abs() <= 1e-9 * want.abs().max(1.0), "got {got}, want {want}");
    }

    /// Runs on_timer at t, as the engine does (only when a timer is due).
    #[track_caller]
    fn fire(d: &mut Dcqcn, t: u64) {
        assert_eq!(d.next_timer(), Some(t), "next timer");
        d.on_timer(t);
    }

    #[test]
    fn profiles_resolve_to_the_documented_constants() {
        let h = DcqcnConfig::default().resolve();
        assert_eq!(cfg("").resolve(), h);
        assert_eq!(h, DcqcnProfile::Hpcc.params());
        assert_eq!(h.g, 1.0 / 256.0);
        assert_eq!((h.alpha_timer_ps, h.decrease_timer_ps, h.increase_timer_ps), (us(1.0), us(4.0), us(900.0)));
        assert_eq!((h.rate_ai_bps, h.rate_hai_bps, h.min_rate_bps), (50_000_000, 100_000_000, 100_000_000));
        assert_eq!((h.fast_recovery_steps, h.byte_counter, h.rate_on_first_cnp, h.clamp_target), (1, 0, 1.0, false));

        let p = cfg("profile = \"paper\"").resolve();
        assert_eq!(p.g, 1.0 / 256.0);
        assert_eq!((p.alpha_timer_ps, p.decrease_timer_ps, p.increase_timer_ps), (us(55.0), 0, us(55.0)));
        assert_eq!((p.rate_ai_bps, p.rate_hai_bps, p.min_rate_bps), (40_000_000, 400_000_000, 100_000_000));
        assert_eq!((p.fast_recovery_steps, p.byte_counter, p.clamp_target), (5, 10 * 1024 * 1024, true));
        assert!(!p.window && p.window_bdp.is_none());
    }

    #[test]
    fn run_script_profiles_scale_their_steps_with_the_line_rate() {
        let r = cfg("profile = \"hpcc_run\"").resolve();
        assert_eq!((r.alpha_timer_ps, r.decrease_timer_ps, r.increase_timer_ps), (us(1.0), us(4.0), us(300.0)));
        assert_eq!((r.rate_ai_bps, r.rate_hai_bps, r.min_rate_bps), (5_000_000, 50_000_000, 1_000_000_000));
        assert_eq!((r.g, r.fast_recovery_steps, r.byte_counter, r.clamp_target), (1.0 / 256.0, 1, 0, false));
        let rp = cfg("profile = \"hpcc_run_paper\"").resolve();
        assert_eq!((rp.alpha_timer_ps, rp.decrease_timer_ps, rp.increase_timer_ps), (us(50.0), us(50.0), us(55.0)));
        assert_eq!(DcqcnParams { alpha_timer_ps: r.alpha_timer_ps, decrease_timer_ps: r.decrease_timer_ps, increase_timer_ps: r.increase_timer_ps, ..rp }, r);
        // At 100 Gb/s run.py writes ai = 5 * 100 / 25 = 20 and hai = 200 Mb/s.
        let d = Dcqcn::new(&cfg("profile = \"hpcc_run\""), &params());
        assert_eq!((d.rate_ai, d.rate_hai), (20e6, 200e6));
        // An override is absolute.
        let d = Dcqcn::new(&cfg("profile = \"hpcc_run\"\nrate_ai = \"5Mbps\""), &params());
        assert_eq!((d.rate_ai, d.rate_hai), (5e6, 200e6));
        // Like `hpcc`, a CNP for every marked packet by default.
        let c = cfg("profile = \"hpcc_run\"");
        assert_eq!(c.cnp_interval_ps(), 0);
    }

    #[test]
    fn every_constant_can_be_overridden() {
        let c = cfg(r#"
            profile = "paper"
            g = 0.5
            rate_ai = "10Mbps"
            rate_hai = "1Gbps"
            alpha_timer = "2us"
            decrease_timer = "50us"
            increase_timer = "0us"
            byte_counter = "64KiB"
            fast_recovery_steps = 3
            min_rate = "1Gbps"
            rate_on_first_cnp = 0.5
            clamp_target = false
            window = true
            window_bdp = "200KB"
        "#);
        let p = c.resolve();
        assert_eq!(
            p,
            DcqcnParams {
                g: 0.5,
                rate_ai_bps: 10_000_000,
                rate_hai_bps: 1_000_000_000,
                alpha_timer_ps: us(2.0),
                decrease_timer_ps: us(50.0),
                increase_timer_ps: 0,
                byte_counter: 65536,
                fast_recovery_steps: 3,
                min_rate_bps: 1_000_000_000,
                rate_on_first_cnp: 0.5,
                clamp_target: false,
                window: true,
                window_bdp: Some(200_000),
                rate_ai_scaled: false,
                rate_hai_scaled: false,
            }
        );
        // An override leaves the profile's other constants alone.
        let q = cfg("profile = \"hpcc\"\nbyte_counter = \"10MB\"").resolve();
        assert_eq!(q, DcqcnParams { byte_counter: 10_000_000, ..DcqcnProfile::Hpcc.params() });
    }

    #[test]
    fn bad_configs_are_refused() {
        assert!(toml::from_str::<DcqcnConfig>("rai = \"1Mbps\"").is_err());
        assert!(toml::from_str::<DcqcnConfig>("profile = \"mellanox\"").is_err());
        assert!(toml::from_str::<DcqcnConfig>("rate_ai = 5").is_err());
        assert_eq!(cfg("g = 0.0").validate().unwrap_err().0, "g");
        assert_eq!(cfg("alpha_timer = \"0us\"").validate().unwrap_err().0, "alpha_timer");
        assert_eq!(cfg("increase_timer = \"0us\"").validate().unwrap_err().0, "increase_timer");
        assert!(cfg("increase_timer = \"0us\"\nbyte_counter = \"1MB\"").validate().is_ok());
        assert_eq!(cfg("rate_on_first_cnp = 1.5").validate().unwrap_err().0, "rate_on_first_cnp");
        assert_eq!(cfg("window_bdp = 0").validate().unwrap_err().0, "window_bdp");
    }

    #[test]
    fn starts_at_line_rate_with_no_window_and_no_timer() {
        let mut d = new("");
        assert_eq!(d.rate(), 100_000_000_000);
        assert_eq!(d.cwnd(), u64::MAX);
        assert_eq!(d.next_timer(), None);
        // Sending without CNPs changes nothing and starts no timer.
        d.on_send(us(1.0), 0, 1064);
        assert_eq!(d.next_timer(), None);
        assert_eq!(d.metrics(), CcMetrics { cwnd_bytes: u64::MAX, rate_bps: 100_000_000_000, alpha: 1.0 });
    }

    #[test]
    fn first_cnp_cuts_at_the_first_decrease_check() {
        // hpcc: T_alpha 1 us, T_dec 4 us, g = 1/256.
        let mut d = new("");
        let t0 = us(10.0);
        d.on_cnp(&CnpSample::at(t0));
        // Nothing changes at the CNP itself (rate_on_first_cnp = 1): alpha = 1.
        assert_eq!((d.rc, d.rt, d.alpha), (100.0 * G, 100.0 * G, 1.0));
        // First decrease check at t0 + 4 us + 1 ns.
        let d1 = t0 + us(4.0) + 1000;
        fire(&mut d, d1);
        // Alpha ticks at t0 + 1, 2, 3, 4 us; none had a CNP in its period (the
        // first CNP clears the flag): alpha = (255/256)^4 = 0.98446631454862...
        close(d.alpha, 0.9844663145486265);
        // Rc = 100 G x (1 - alpha / 2) = 50.77668427256867 G; Rt stays at 100 G
        // (stage 0, no clamp).
        close(d.rc, 50_776_684_272.568_67);
        assert_eq!(d.rt, 100.0 * G);
        assert_eq!(d.rate(), 50_776_684_273);
        // Next: the increase timer, 900 us after the cut.
        assert_eq!(d.next_timer(), Some(d1 + us(900.0)));
    }

    #[test]
    fn cnps_within_one_decrease_period_make_one_cut() {
        let mut d = new("g = 0.5\nalpha_timer = \"100us\"");
        d.on_cnp(&CnpSample::at(0));
        d.on_cnp(&CnpSample::at(us(1.0)));
        d.on_cnp(&CnpSample::at(us(3.5)));
        let d1 = us(4.0) + 1000;
        fire(&mut d, d1);
        // No alpha tick yet (first at 100 us): alpha = 1, one halving.
        assert_eq!(d.rc, 50.0 * G);
        // A CNP at 5 us is handled by the check at 8 us + 1 ns; before it, no other timer
        // than the increase timer is pending.
        d.on_cnp(&CnpSample::at(us(5.0)));
        fire(&mut d, us(8.0) + 1000);
        assert_eq!(d.rc, 25.0 * G);
        assert_eq!(d.next_timer(), Some(us(8.0) + 1000 + us(900.0)));
    }

    #[test]
    fn alpha_decays_by_one_minus_g_per_period_without_cnps() {
        let mut d = new("");
        d.on_cnp(&CnpSample::at(0));
        // Alpha is brought up to date by any hook; on_send does it for a sending flow.
        d.on_send(us(10.0), 0, 1064);
        // 10 ticks (1..10 us), no CNP flag: (255/256)^10 = 0.9616170416164264.
        close(d.alpha, 0.9616170416164264);
        // Half a period later: no new tick.
        d.on_send(us(10.5), 0, 1064);
        close(d.alpha, 0.9616170416164264);
        // A CNP at 10.5 us: the tick at 11 us adds g:
        // (255/256) x 0.9616170416164264 + 1/256 = 0.9617669750476122.
        d.on_cnp(&CnpSample::at(us(10.5)));
        d.on_send(us(11.0), 0, 1064);
        close(d.alpha, 0.9617669750476122);
        // 89 more CNP-free ticks (12..100 us): multiply by (255/256)^89.
        d.on_send(us(100.0), 0, 1064);
        close(d.alpha, 0.9617669750476122 * (255.0f64 / 256.0).powi(89));
        assert_eq!(d.metrics().alpha, d.alpha);

        // 100 periods with no CNP at all: (255/256)^100 = 0.6761164651095474.
        let mut e = new("");
        e.on_cnp(&CnpSample::at(us(3.0)));
        e.on_timer(us(103.0));
        close(e.alpha, 0.6761164651095474);
    }

    /// hpcc with g = 1/2, an alpha timer long enough not to tick before the
    /// first check, and Rc = Rt = 50 Gbps from the first CNP.
    const RECOVERY: &str = "g = 0.5\nalpha_timer = \"10ms\"\nrate_on_first_cnp = 0.5";

    #[test]
    fn timer_increases_fast_recovery_then_additive_then_hyper() {
        // F = 1 (hpcc), R_AI = 50 Mbps, R_HAI = 100 Mbps, T_inc = 900 us.
        let mut d = new(RECOVERY);
        d.on_cnp(&CnpSample::at(0));
        assert_eq!((d.rc, d.rt), (50.0 * G, 50.0 * G));
        let d1 = us(4.0) + 1000;
        fire(&mut d, d1);
        // alpha = 1: Rc = 25 G, Rt = 50 G.
        assert_eq!((d.rc, d.rt), (25.0 * G, 50.0 * G));
        let t = |k: u64| d1 + k * us(900.0);
        // Stage 0 < F: fast recovery, Rc = (25 + 50) / 2 = 37.5 G.
        fire(&mut d, t(1));
        assert_eq!((d.rc, d.rt, d.time_stage), (37.5 * G, 50.0 * G, 1));
        // Stage 1 = F: additive, Rt = 50.05 G, Rc = (37.5 + 50.05) / 2 = 43.775 G.
        fire(&mut d, t(2));
        close(d.rt, 50.05 * G);
        close(d.rc, 43.775 * G);
        // Stage 2 > F: hyper, Rt = 50.15 G, Rc = (43.775 + 50.15) / 2 = 46.9625 G.
        fire(&mut d, t(3));
        close(d.rt, 50.15 * G);
        close(d.rc, 46.9625 * G);
        // And hyper again: Rt = 50.25 G, Rc = (46.9625 + 50.25) / 2 = 48.60625 G.
        fire(&mut d, t(4));
        close(d.rt, 50.25 * G);
        close(d.rc, 48.60625 * G);
    }

    #[test]
    fn fast_recovery_halves_the_gap_for_f_events() {
        let mut d = new(&format!("{RECOVERY}\nfast_recovery_steps = 3"));
        d.on_cnp(&CnpSample::at(0));
        let d1 = us(4.0) + 1000;
        fire(&mut d, d1);
        // Gap to Rt = 50 G: 25, 12.5, 6.25, 3.125 G over F = 3 events.
        for (k, rc) in [(1, 37.5), (2, 43.75), (3, 46.875)] {
            fire(&mut d, d1 + k * us(900.0));
            assert_eq!((d.rc, d.rt), (rc * G, 50.0 * G));
        }
        // Event 4 (stage 3 = F): additive, Rt = 50.05 G, Rc = (46.875 + 50.05) / 2 = 48.4625 G.
        fire(&mut d, d1 + 4 * us(900.0));
        close(d.rt, 50.05 * G);
        close(d.rc, 48.4625 * G);
        // Event 5: hyper, Rt = 50.15 G, Rc = (48.4625 + 50.15) / 2 = 49.30625 G.
        fire(&mut d, d1 + 5 * us(900.0));
        close(d.rt, 50.15 * G);
        close(d.rc, 49.30625 * G);
    }

    #[test]
    fn target_is_capped_at_line_rate_and_timers_stop_there() {
        // hpcc with F = 0: every event increases Rt, which is already the line rate.
        let mut d = new("g = 0.5\nalpha_timer = \"10ms\"\nfast_recovery_steps = 0");
        d.on_cnp(&CnpSample::at(0));
        let d1 = us(4.0) + 1000;
        fire(&mut d, d1);
        assert_eq!((d.rc, d.rt), (50.0 * G, 100.0 * G));
        fire(&mut d, d1 + us(900.0));
        // Additive: Rt = min(100 G, 100.05 G) = 100 G; Rc = 75 G.
        assert_eq!((d.rc, d.rt), (75.0 * G, 100.0 * G));
        // The gap halves every event: 50 G / 2^k; it is below 1 b/s after 36 events.
        let mut k = 1;
        while d.next_timer().is_some() {
            k += 1;
            fire(&mut d, d1 + k * us(900.0));
            assert_eq!(d.rt, 100.0 * G);
        }
        assert_eq!(k, 36);
        assert_eq!(d.rc, 100.0 * G);
        assert_eq!(d.rate(), 100_000_000_000);
    }

    #[test]
    fn min_rate_floors_the_cut() {
        let mut d = new(&format!("{RECOVERY}\nmin_rate = \"30Gbps\""));
        d.on_cnp(&CnpSample::at(0));
        let d1 = us(4.0) + 1000;
        fire(&mut d, d1);
        // 50 G x (1 - 1/2) = 25 G < 30 G.
        assert_eq!(d.rc, 30.0 * G);
        // Default hpcc floor, 100 Mbps: ten halvings from 50 G would reach 48.8 Mbps.
        let mut e = new(RECOVERY);
        e.on_cnp(&CnpSample::at(0));
        for k in 1..=10 {
            e.on_cnp(&CnpSample::at(k * us(4.0)));
            fire(&mut e, k * us(4.0) + 1000);
        }
        // 50 G / 2^9 = 97.7 Mbps: floored at the ninth cut, and at the tenth.
        assert_eq!(e.rc, 100.0 * M);
    }

    #[test]
    fn a_cut_after_an_increase_clamps_the_target() {
        // The increase timer due at d1 + 900 us coincides with a decrease check
        // (900 = 225 x 4); the increase goes first.
        let mut d = new("g = 0.5\nalpha_timer = \"10us\"\nrate_on_first_cnp = 0.5");
        d.on_cnp(&CnpSample::at(0));
        let d1 = us(4.0) + 1000;
        fire(&mut d, d1);
        assert_eq!((d.rc, d.rt), (25.0 * G, 50.0 * G));
        d.on_cnp(&CnpSample::at(d1 + us(899.0)));
        fire(&mut d, d1 + us(900.0));
        // Increase: Rc = 37.5 G (stage 0 < F); then the cut: stage 1 > 0 so Rt = Rc = 37.5 G;
        // alpha = 1 x 0.5^90 (ticks at 10 .. 900 us, the CNP's tick at 910 us is later):
        // Rc = 37.5 G x (1 - 0.5^91), 37.5 G to double precision.
        assert_eq!(d.rt, 37.5 * G);
        close(d.rc, 37.5 * G);
        close(d.alpha, 0.5f64.powi(90));
        assert_eq!(d.time_stage, 0);
        assert_eq!(d.next_timer(), Some(d1 + us(1800.0)));
        // Without an increase since the cut, a second cut keeps Rt.
        d.on_cnp(&CnpSample::at(d1 + us(901.0)));
        fire(&mut d, d1 + us(904.0));
        assert_eq!(d.rt, 37.5 * G);
        // With clamp_target every cut sets Rt = Rc, increase or not: 50 -> 25 G with
        // Rt = 50 G, then 25 -> 12.5 G with Rt = 25 G.
        let mut c = new(&format!("{RECOVERY}\nclamp_target = true"));
        c.on_cnp(&CnpSample::at(0));
        fire(&mut c, d1);
        assert_eq!((c.rc, c.rt), (25.0 * G, 50.0 * G));
        c.on_cnp(&CnpSample::at(us(5.0)));
        fire(&mut c, us(8.0) + 1000);
        assert_eq!((c.rc, c.rt), (12.5 * G, 25.0 * G));
    }

    #[test]
    fn byte_counter_and_timer_combine_by_the_papers_rule() {
        // paper: immediate cut at each CNP, clamp, R_AI 40 Mbps, R_HAI 400 Mbps, T = 55 us;
        // here F = 2, B = 10 kB and Rc = Rt = 50 G on the first CNP.
        let mut d =
            new("profile = \"paper\"\nfast_recovery_steps = 2\nbyte_counter = \"10KB\"\nrate_on_first_cnp = 0.5");
        d.on_cnp(&CnpSample::at(0));
        // Cut at the CNP with alpha = 1: Rt = 50 G, Rc = 25 G; timer at 55 us.
        assert_eq!((d.rc, d.rt), (25.0 * G, 50.0 * G));
        assert_eq!(d.next_timer(), Some(us(55.0)));
        // Byte events: (T, BC) before each event = (0, 0), (0, 1): fast recovery.
        d.on_send(us(1.0), 0, 10_000);
        assert_eq!(d.rc, 37.5 * G);
        d.on_send(us(2.0), 0, 10_000);
        assert_eq!((d.rc, d.rt, d.byte_stage), (43.75 * G, 50.0 * G, 2));
        // (0, 2): one counter has reached F: additive. Rt = 50.04 G, Rc = 46.895 G.
        d.on_send(us(3.0), 0, 10_000);
        close(d.rt, 50.04 * G);
        close(d.rc, 46.895 * G);
        d.on_send(us(4.0), 0, 4_000);
        close(d.rc, 46.895 * G);
        // Timer events (1, 3)... (2, 3): additive, Rt += 40 Mbps each.
        fire(&mut d, us(55.0));
        close(d.rt, 50.08 * G);
        close(d.rc, 48.4875 * G);
        fire(&mut d, us(110.0));
        close(d.rt, 50.12 * G);
        close(d.rc, 49.30375 * G);
        fire(&mut d, us(165.0));
        close(d.rt, 50.16 * G);
        close(d.rc, 49.731875 * G);
        assert_eq!((d.time_stage, d.byte_stage), (3, 3));
        // 4000 + 6000 bytes complete a byte event at (3, 3): both above F: hyper.
        // Rt = 50.56 G, Rc = (49.731875 + 50.56) / 2 = 50.1459375 G.
        d.on_send(us(166.0), 0, 6_000);
        close(d.rt, 50.56 * G);
        close(d.rc, 50.1459375 * G);
        // A new CNP cuts at once, with the alpha of the ticks so far (55, 110 and
        // 165 us, none with a CNP in its period): alpha = (255/256)^3; Rt = Rc (clamp).
        d.on_cnp(&CnpSample::at(us(170.0)));
        let a = (255.0f64 / 256.0).powi(3);
        close(d.alpha, a);
        close(d.rt, 50.1459375 * G);
        close(d.rc, 50.1459375 * G * (1.0 - a / 2.0));
        assert_eq!((d.time_stage, d.byte_stage), (0, 0));
        assert_eq!(d.next_timer(), Some(us(225.0)));
    }

    #[test]
    fn hyper_increase_needs_both_counters_past_f() {
        // paper with F = 2 and a flow that sends nothing: only the timer counts.
        let mut d = new("profile = \"paper\"\nfast_recovery_steps = 2\nrate_on_first_cnp = 0.5");
        d.on_cnp(&CnpSample::at(0));
        assert_eq!((d.rc, d.rt), (25.0 * G, 50.0 * G));
        // (0,0) FR 37.5; (1,0) FR 43.75; then additive forever: Rt += 40 Mbps.
        let mut rc = 25.0 * G;
        let mut rt = 50.0 * G;
        for k in 1..=8u64 {
            fire(&mut d, k * us(55.0));
            if k > 2 {
                rt += 40.0 * M;
            }
            rc = (rc + rt) / 2.0;
            close(d.rt, rt);
            close(d.rc, rc);
        }
        close(d.rt, 50.24 * G);
    }

    #[test]
    fn byte_counter_alone_follows_the_stage_rule() {
        // No timer: F = 2 byte events of fast recovery, one additive, then hyper.
        let mut d = new(
            "profile = \"paper\"\nincrease_timer = \"0us\"\nfast_recovery_steps = 2\nbyte_counter = \"1000B\"\nrate_on_first_cnp = 0.5",
        );
        d.on_cnp(&CnpSample::at(0));
        assert_eq!(d.next_timer(), None);
        // One 4000-byte packet completes four byte events (stages 0, 1, 2, 3):
        // FR 37.5, FR 43.75, AI Rt 50.04 -> Rc 46.895, HAI Rt 50.44 -> Rc 48.6675 G.
        d.on_send(us(1.0), 0, 4000);
        assert_eq!(d.byte_stage, 4);
        close(d.rt, 50.44 * G);
        close(d.rc, 48.6675 * G);
        // Remainders carry over: 999 bytes do nothing, one more completes an event (hyper).
        d.on_send(us(2.0), 0, 999);
        close(d.rc, 48.6675 * G);
        d.on_send(us(3.0), 0, 1);
        close(d.rt, 50.84 * G);
        close(d.rc, 49.7537500 * G);
    }

    #[test]
    fn timeout_halves_and_restarts_recovery() {
        let mut d = new("");
        d.on_timeout(us(100.0));
        // Rt = 100 G, Rc = 50 G, increase timer from now; alpha untouched, no CNP state.
        assert_eq!((d.rc, d.rt, d.alpha), (50.0 * G, 100.0 * G, 1.0));
        assert_eq!(d.next_timer(), Some(us(1000.0)));
        fire(&mut d, us(1000.0));
        assert_eq!(d.rc, 75.0 * G);
        // NACKs change nothing.
        d.on_nack(us(1001.0), 10, crate::packet::NackReason::Trimmed);
        assert_eq!((d.rc, d.rt), (75.0 * G, 100.0 * G));
    }

    /// The ns-3 model with eager periodic timers (alpha every T_alpha, decrease
    /// check every T_dec from first CNP + 1 ns, increase timer restarted at each
    /// cut and never stopped), to check the lazy timers against.
    struct Eager {
        p: DcqcnParams,
        line: f64,
        rc: f64,
        rt: f64,
        alpha: f64,
        stage: u32,
        flag_a: bool,
        flag_d: bool,
        started: bool,
        alpha_at: u64,
        dec_at: u64,
        inc_at: u64,
    }

    impl Eager {
        fn new(p: DcqcnParams, line: f64) -> Self {
            let never = u64::MAX;
            Eager {
                p,
                line,
                rc: line,
                rt: line,
                alpha: 1.0,
                stage: 0,
                flag_a: false,
                flag_d: false,
                started: false,
                alpha_at: never,
                dec_at: never,
                inc_at: never,
            }
        }
        /// Every event at or before t; same-time order: alpha, increase, decrease.
        fn run_to(&mut self, t: u64) {
            loop {
                let next = self.alpha_at.min(self.inc_at).min(self.dec_at);
                if next > t {
                    return;
                }
                if self.alpha_at == next {
                    let g = self.p.g;
                    self.alpha = (1.0 - g) * self.alpha + if self.flag_a { g } else { 0.0 };
                    self.flag_a = false;
                    self.alpha_at += self.p.alpha_timer_ps;
                } else if self.inc_at == next {
                    self.inc_at += self.p.increase_timer_ps;
                    let f = self.p.fast_recovery_steps;
                    if self.stage == f {
                        self.rt = (self.rt + self.p.rate_ai_bps as f64).min(self.line);
                    } else if self.stage > f {
                        self.rt = (self.rt + self.p.rate_hai_bps as f64).min(self.line);
                    }
                    self.rc = (self.rc + self.rt) / 2.0;
                    self.stage += 1;
                } else {
                    self.dec_at += self.p.decrease_timer_ps;
                    if self.flag_d {
                        if self.p.clamp_target || self.stage > 0 {
                            self.rt = self.rc;
                        }
                        self.rc = (self.rc * (1.0 - self.alpha / 2.0)).max(self.p.min_rate_bps as f64);
                        self.stage = 0;
                        self.flag_d = false;
                        self.inc_at = next + self.p.increase_timer_ps;
                    }
                }
            }
        }
        fn cnp(&mut self, t: u64) {
            self.run_to(t);
            self.flag_a = true;
            self.flag_d = true;
            if !self.started {
                self.started = true;
                self.alpha = 1.0;
                self.flag_a = false;
                self.alpha_at = t + self.p.alpha_timer_ps;
                self.dec_at = t + 1000 + self.p.decrease_timer_ps;
                self.rc *= self.p.rate_on_first_cnp;
                self.rt = self.rc;
            }
        }
    }

    #[test]
    fn lazy_timers_match_eager_periodic_timers() {
        // hpcc with a short increase timer (so recovery completes between bursts),
        // F = 2, and a pseudo-random CNP pattern on a 100 ns grid (ties with timer
        // events happen).
        for (seed, text) in [
            (1u64, "increase_timer = \"20us\"\nfast_recovery_steps = 2"),
            (7, "increase_timer = \"8us\"\nfast_recovery_steps = 2\nclamp_target = true\nrate_on_first_cnp = 0.7"),
            (42, "increase_timer = \"12us\"\ng = 0.0625\nalpha_timer = \"3us\"\ndecrease_timer = \"6us\""),
        ] {
            let c = cfg(text);
            let mut lazy = Dcqcn::new(&c, &params());
            let mut eager = Eager::new(c.resolve(), 100.0 * G);
            let mut x = seed;
            let mut rnd = move |n: u64| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (x >> 33) % n
            };
            let mut t = 0u64;
            let mut events = 0;
            let end = us(20_000.0);
            while t < end {
                // Bursts of CNPs 0.1 .. 30 us apart, separated by quiet spells up to 2 ms.
                t += if rnd(20) == 0 { 1 + rnd(20_000) } else { 1 + rnd(300) } * us(0.1);
                // Drive the lazy one as the engine does: timers up to t, then the CNP.
                while let Some(w) = lazy.next_timer().filter(|&w| w <= t) {
                    lazy.on_timer(w);
                    eager.run_to(w);
                    events += 1;
                    assert!(
                        (lazy.rc - eager.rc).abs() <= 2.0 + 1e-9 * eager.rc,
                        "rc {} vs {} at {w}",
                        lazy.rc,
                        eager.rc
                    );
                    assert!((lazy.rt - eager.rt).abs() <= 1e-9 * eager.rt, "rt {} vs {} at {w}", lazy.rt, eager.rt);
                }
                lazy.on_cnp(&CnpSample::at(t));
                eager.cnp(t);
                assert!((lazy.rc - eager.rc).abs() <= 2.0 + 1e-9 * eager.rc, "rc {} vs {} at {t}", lazy.rc, eager.rc);
                assert!((lazy.rt - eager.rt).abs() <= 1e-9 * eager.rt, "rt {} vs {} at {t}", lazy.rt, eager.rt);
                assert!((lazy.alpha - eager.alpha).abs() <= 1e-12, "alpha {} vs {} at {t}", lazy.alpha, eager.alpha);
            }
            assert!(events > 100, "only {events} timer events");
        }
    }

    #[test]
    fn window_follows_the_rate() {
        let mut d = new(&format!("{RECOVERY}\nwindow = true"));
        // BDP 100_000 bytes x Rc / C.
        assert_eq!(d.cwnd(), 100_000);
        d.on_cnp(&CnpSample::at(0));
        assert_eq!(d.cwnd(), 50_000);
        fire(&mut d, us(4.0) + 1000);
        assert_eq!(d.cwnd(), 25_000);
        assert_eq!(d.metrics().cwnd_bytes, 25_000);
        let e = new("window = true\nwindow_bdp = \"1MB\"");
        assert_eq!(e.cwnd(), 1_000_000);
    }

    #[test]
    fn notification_point_respects_the_interval() {
        let us = 1_000_000;
        let mut np = NotificationPoint::with_interval(50 * us);
        let stamped = Advice::new(10_000_000_000, 1.0);
        let send = Some(CnpDecision::Send(Advice::NONE));
        // Unmarked packets never trigger a CNP.
        assert_eq!(np.on_data(0, false, Advice::NONE, 4160), None);
        assert_eq!(np.on_data(us, true, stamped, 4160), send);
        assert_eq!(np.on_data(2 * us, true, stamped, 4160), None);
        assert_eq!(np.on_data(50 * us, true, Advice::NONE, 4160), None);
        assert_eq!(np.on_data(51 * us, false, Advice::NONE, 4160), None);
        assert_eq!(np.on_data(51 * us, true, Advice::NONE, 4160), send);
        assert_eq!(np.on_data(100 * us, true, Advice::NONE, 4160), None);
        // Zero interval: a CNP for every marked packet.
        let mut every = NotificationPoint::with_interval(0);
        assert!((0..5).all(|_| every.on_data(7, true, Advice::NONE, 4160) == send));
    }

    #[test]
    fn cnp_interval_default_depends_on_the_profile() {
        let sections = Sections::default();
        let shared = |t| Shared { cnp_interval: t, ..Default::default() };
        let interval = |kind, t| match (crate::cc::ReceiverCc::new(&sections.config(kind, &shared(t))), kind) {
            (crate::cc::ReceiverCc::Dcqcn(np), crate::cc::CcKind::Dcqcn) => np.interval_ps,
            (crate::cc::ReceiverCc::DcqcnRev(enp), crate::cc::CcKind::DcqcnRev) => enp.interval_ps(),
            _ => unreachable!(),
        };
        assert_eq!(interval(crate::cc::CcKind::Dcqcn, None), 0);
        let mut c = DcqcnConfig { profile: DcqcnProfile::Paper, ..Default::default() };
        assert_eq!(c.cnp_interval_ps(), 50_000_000);
        c.cnp_interval = Some(Time::us(4));
        assert_eq!(c.cnp_interval_ps(), 4_000_000);
        assert_eq!(interval(crate::cc::CcKind::Dcqcn, Some(Time::us(4))), 4_000_000);
        // DCQCN-Rev keeps the paper's interval whatever the profile.
        assert_eq!(interval(crate::cc::CcKind::DcqcnRev, None), 50_000_000);
        assert_eq!(interval(crate::cc::CcKind::DcqcnRev, Some(Time::us(4))), 4_000_000);
    }
}
