//! CSIG: the congestion-signal tag.
//!
//! A sender puts a tag with one signal type and its initial value (the
//! largest code for min-types, zero for max-types) on data packets. At each
//! switch egress port whose action is `update`, the switch measures its local
//! value for the tag's type, encodes it, and overwrites value and locator only
//! when strictly worse (smaller for min-types, larger for max-types). Ports can
//! instead pass the tag through untouched or strip it. A trimmed packet's tag
//! gets the do-not-update bit. The receiver reflects type, value and locator
//! in its ACK or NACK.

use super::{Signals, NO_TAG};
use crate::units::{parse_rate, parse_time};
use serde::Deserialize;

/// Signal types, numbered as in the UEC/SAI specification.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum SignalType {
    /// Minimum available bandwidth of the egress ports (bits/s).
    Abw = 0,
    /// Minimum available bandwidth as a fraction of the port rate.
    AbwC = 1,
    /// Maximum per-hop queueing delay (the packet's sojourn in the egress queue).
    Delay = 2,
    /// Maximum egress queue depth normalized by the port rate (drain time).
    Nqd = 3,
}

impl SignalType {
    pub fn from_code(c: u8) -> Option<SignalType> {
        match c {
            0 => Some(SignalType::Abw),
            1 => Some(SignalType::AbwC),
            2 => Some(SignalType::Delay),
            3 => Some(SignalType::Nqd),
            _ => None,
        }
    }
    /// Min-types keep the smallest value along the path; max-types the largest.
    pub fn is_min(self) -> bool {
        matches!(self, SignalType::Abw | SignalType::AbwC)
    }
    pub fn name(self) -> &'static str {
        match self {
            SignalType::Abw => "abw",
            SignalType::AbwC => "abw_c",
            SignalType::Delay => "delay",
            SignalType::Nqd => "nqd",
        }
    }
    /// The natural unit written in outputs.
    pub fn unit(self) -> &'static str {
        match self {
            SignalType::Abw => "bps",
            SignalType::AbwC => "fraction",
            SignalType::Delay | SignalType::Nqd => "ns",
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum TagSize {
    /// 4 bytes: 16-bit TPID, T 3 bits, d 1 bit, S 5 bits (bucketized), LM 7 bits.
    #[default]
    Compact,
    /// 8 bytes: 16-bit TPID, LM 16 bits, T 4 bits, S 20 bits (quantized), d, reserved.
    Wide,
}

impl TagSize {
    pub fn bytes(self) -> u32 {
        match self {
            TagSize::Compact => 4,
            TagSize::Wide => 8,
        }
    }
    /// (value bits, locator bits) of the default layouts.
    pub fn widths(self) -> (u8, u8) {
        match self {
            TagSize::Compact => (5, 7),
            TagSize::Wide => (20, 16),
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum PortAction {
    #[default]
    Update,
    Passthrough,
    Strip,
}

/// Which value of a bucket or quantization step the sender decodes.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Decode {
    /// Lower edge for min-types, upper edge for max-types: never better than the truth.
    #[default]
    Conservative,
    Lower,
    Upper,
    Mid,
}

/// What a (coalesced) ACK reflects.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Reflect {
    /// The tag of the data packet that triggered the ACK.
    #[default]
    Last,
    /// The worst value over the data packets the ACK covers.
    Worst,
}

/// Per-port tag action, by switch name, tier, and optionally port index.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PortRule {
    #[serde(default)]
    pub switch: Option<String>,
    #[serde(default)]
    pub tier: Option<u8>,
    /// Port index within the switch (its link order); default every port.
    #[serde(default)]
    pub port: Option<u32>,
    pub action: PortAction,
}

/// `[signals.csig]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CsigConfig {
    #[serde(rename = "type")]
    pub sig: SignalType,
    #[serde(default)]
    pub size: TagSize,
    /// Field widths of the tag (defaults: compact T 3, S 5, LM 7 with the d
    /// bit; wide T 4, S 20, LM 16, d and 7 reserved bits).
    #[serde(default)]
    pub type_bits: Option<u8>,
    #[serde(default)]
    pub value_bits: Option<u8>,
    #[serde(default)]
    pub locator_bits: Option<u8>,
    /// TPIDs (EtherTypes) of the compact and wide tags on the wire.
    #[serde(default = "default_tpid")]
    pub tpid: u16,
    #[serde(default = "default_tpid_wide")]
    pub tpid_wide: u16,
    /// Fraction of data packets a sender tags (drawn per packet from the flow's stream).
    #[serde(default = "one")]
    pub fraction: f64,
    /// ABW measurement interval (tumbling windows).
    #[serde(default = "default_abw_interval")]
    pub abw_interval: crate::units::Time,
    /// EWMA weight of each new ABW sample (1 = no smoothing).
    #[serde(default = "one")]
    pub abw_ewma: f64,
    /// Compact tags: ascending band thresholds in natural units (times for
    /// delay and nqd, rates for abw, fractions for abw_c); at most 2^S - 1.
    /// The selected type's entry of `buckets`, written directly.
    #[serde(default)]
    pub bands: Option<Vec<toml::Value>>,
    /// Compact tags: per signal type, its bucket edges or a preset.
    #[serde(default)]
    pub buckets: Buckets,
    /// The `geometric` preset (delay, nqd): from delay_min to delay_max;
    /// `linear` ends at delay_max.
    #[serde(default = "default_delay_min")]
    pub delay_min: crate::units::Time,
    #[serde(default = "default_delay_max")]
    pub delay_max: crate::units::Time,
    /// Wide tags: S = floor((x - base) / step), saturating.
    #[serde(default)]
    pub base: Option<toml::Value>,
    #[serde(default)]
    pub step: Option<toml::Value>,
    #[serde(default)]
    pub decode: Decode,
    #[serde(default)]
    pub reflect: Reflect,
    /// Per-port actions; later rules win. Default: update everywhere.
    #[serde(default)]
    pub port_action: Vec<PortRule>,
}

fn one() -> f64 {
    1.0
}
fn default_tpid() -> u16 {
    0x9900
}
fn default_tpid_wide() -> u16 {
    0x9901
}
fn default_abw_interval() -> crate::units::Time {
    crate::units::Time::us(256)
}
fn default_delay_min() -> crate::units::Time {
    crate::units::Time::ns(100)
}
fn default_delay_max() -> crate::units::Time {
    crate::units::Time::ms(1)
}

/// `[signals.csig.buckets]`: a compact tag's bucket edges for each signal
/// type, as a list of edges in the type's natural unit or a preset name.
/// Only the run's type is used; every entry is checked.
#[derive(Clone, Debug, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Buckets {
    #[serde(default)]
    pub abw: Option<toml::Value>,
    #[serde(default)]
    pub abw_c: Option<toml::Value>,
    #[serde(default)]
    pub delay: Option<toml::Value>,
    #[serde(default)]
    pub nqd: Option<toml::Value>,
}

impl Buckets {
    fn of(&self, t: SignalType) -> Option<&toml::Value> {
        match t {
            SignalType::Abw => self.abw.as_ref(),
            SignalType::AbwC => self.abw_c.as_ref(),
            SignalType::Delay => self.delay.as_ref(),
            SignalType::Nqd => self.nqd.as_ref(),
        }
    }
}

/// The `target` preset of delay and nqd, in ns: 1 us steps up to 16 us
/// (NSCC's target is 0.75 to 1 network RTT, 7 to 14 us on 100 Gb/s fabrics
/// of 1 us links), 2 us steps to 24 us, then coarser to 1 ms. 31 edges.
pub const TARGET_DELAY_EDGES_NS: [u64; 31] = [
    500, 1_000, 2_000, 3_000, 4_000, 5_000, 6_000, 7_000, 8_000, 9_000, 10_000, 11_000, 12_000, 13_000, 14_000, 15_000, 16_000,
    18_000, 20_000, 22_000, 24_000, 27_000, 30_000, 35_000, 40_000, 50_000, 64_000, 100_000, 200_000, 500_000, 1_000_000,
];

/// How natural values map to codes.
#[derive(Clone, Debug, PartialEq)]
pub enum Encoding {
    /// Code = number of thresholds at or below the value.
    Bands(Vec<f64>),
    /// Code = floor((x - base) / step), clamped to [0, max_code].
    Quantized { base: f64, step: f64, max_code: u32 },
}

impl Encoding {
    #[inline]
    pub fn encode(&self, x: f64) -> u32 {
        match self {
            Encoding::Bands(t) => t.partition_point(|&th| th <= x) as u32,
            Encoding::Quantized { base, step, max_code } => {
                let q = ((x - base) / step).floor();
                if q <= 0.0 {
                    0
                } else {
                    (q as u64).min(*max_code as u64) as u32
                }
            }
        }
    }

    pub fn max_code(&self) -> u32 {
        match self {
            Encoding::Bands(t) => t.len() as u32,
            Encoding::Quantized { max_code, .. } => *max_code,
        }
    }

    /// The range [lo, hi) of natural values a code stands for (hi may be infinite).
    pub fn range(&self, code: u32) -> (f64, f64) {
        match self {
            Encoding::Bands(t) => {
                let i = code as usize;
                let lo = if i == 0 { 0.0 } else { t[(i - 1).min(t.len() - 1)] };
                let hi = if i < t.len() { t[i] } else { f64::INFINITY };
                (lo, hi)
            }
            Encoding::Quantized { base, step, .. } => (base + code as f64 * step, base + (code as f64 + 1.0) * step),
        }
    }

    pub fn decode(&self, code: u32, how: Decode, is_min: bool) -> f64 {
        let (lo, hi) = self.range(code);
        let upper = if hi.is_finite() { hi } else { lo };
        match how {
            Decode::Lower => lo,
            Decode::Upper => upper,
            Decode::Mid => {
                if hi.is_finite() {
                    (lo + hi) / 2.0
                } else {
                    lo
                }
            }
            Decode::Conservative => {
                if is_min {
                    lo
                } else {
                    upper
                }
            }
        }
    }
}

/// Resolved CSIG set-up of a run.
#[derive(Clone, Debug)]
pub struct CsigSetup {
    pub sig: SignalType,
    pub size: TagSize,
    pub encoding: Encoding,
    pub decode: Decode,
    pub reflect: Reflect,
    pub fraction: f64,
    pub lm_bits: u8,
    pub abw_interval_ps: u64,
    pub abw_ewma: f64,
    /// The byte layout, for captures.
    pub codec: crate::wire::CsigCodec,
}

impl CsigSetup {
    /// Resolves the encoding; `max_rate` is the fastest port of the fabric.
    /// Errors name the key (relative to `signals.csig`).
    pub fn new(c: &CsigConfig, max_rate: u64) -> Result<CsigSetup, (String, String)> {
        let mut codec = crate::wire::CsigCodec { tpid_compact: c.tpid, tpid_wide: c.tpid_wide, ..Default::default() };
        let layout = match c.size {
            TagSize::Compact => &mut codec.compact,
            TagSize::Wide => &mut codec.wide,
        };
        if let Some(b) = c.type_bits {
            layout.t_bits = b;
        }
        if let Some(b) = c.value_bits {
            layout.s_bits = b;
        }
        if let Some(b) = c.locator_bits {
            layout.lm_bits = b;
        }
        if layout.t_bits < 2 {
            return Err(("type_bits".into(), "type_bits must be at least 2 (four signal types)".into()));
        }
        if layout.s_bits == 0 || layout.s_bits > 31 {
            return Err(("value_bits".into(), format!("value_bits must be 1 to 31, got {}", layout.s_bits)));
        }
        if layout.lm_bits < 3 {
            return Err(("locator_bits".into(), "locator_bits must be at least 3 (tier, direction, port)".into()));
        }
        let (s_bits, lm_bits) = (layout.s_bits, layout.lm_bits);
        codec.validate().map_err(|e| {
            let key = if e.to_string().contains("TPID") { "tpid" } else { "value_bits" };
            (key.to_string(), e.to_string())
        })?;
        if !(c.fraction > 0.0 && c.fraction <= 1.0) {
            return Err(("fraction".into(), format!("fraction must be in (0, 1], got {}", c.fraction)));
        }
        if !(c.abw_ewma > 0.0 && c.abw_ewma <= 1.0) {
            return Err(("abw_ewma".into(), format!("abw_ewma must be in (0, 1], got {}", c.abw_ewma)));
        }
        if c.abw_interval.0 == 0 {
            return Err(("abw_interval".into(), "abw_interval must be above zero".into()));
        }
        let natural = |v: &toml::Value, key: &str| natural_value(c.sig, v, key);
        // Every type's bucket list is checked, whichever type the run uses.
        for t in [SignalType::Abw, SignalType::AbwC, SignalType::Delay, SignalType::Nqd] {
            if let Some(v) = c.buckets.of(t) {
                bucket_edges(c, t, v, &format!("buckets.{}", t.name()), max_rate, ((1u64 << s_bits) - 1) as usize)?;
            }
        }
        let encoding = match c.size {
            TagSize::Compact => {
                if c.base.is_some() || c.step.is_some() {
                    let key = if c.base.is_some() { "base" } else { "step" };
                    return Err((key.into(), "base and step apply to wide tags; compact tags use bands".into()));
                }
                let max_bands = ((1u64 << s_bits) - 1) as usize;
                let own = format!("buckets.{}", c.sig.name());
                let t = match (&c.bands, c.buckets.of(c.sig)) {
                    (Some(_), Some(_)) => {
                        return Err(("bands".into(), format!("bands and {own} both give the {} buckets; keep one", c.sig.name())));
                    }
                    (Some(list), None) => bucket_edges(c, c.sig, &toml::Value::Array(list.clone()), "bands", max_rate, max_bands)?,
                    (None, Some(v)) => bucket_edges(c, c.sig, v, &own, max_rate, max_bands)?,
                    (None, None) => {
                        let preset = if c.sig.is_min() { "linear" } else { "target" };
                        bucket_edges(c, c.sig, &toml::Value::String(preset.into()), &own, max_rate, max_bands)?
                    }
                };
                Encoding::Bands(t)
            }
            TagSize::Wide => {
                if c.bands.is_some() {
                    return Err(("bands".into(), "bands apply to compact tags; wide tags use base and step".into()));
                }
                if c.buckets.of(c.sig).is_some() {
                    let key = format!("buckets.{}", c.sig.name());
                    return Err((key, "buckets apply to compact tags; wide tags use base and step".into()));
                }
                let base = match &c.base {
                    Some(v) => natural(v, "base")?,
                    None => 0.0,
                };
                let step = match &c.step {
                    Some(v) => natural(v, "step")?,
                    None => match c.sig {
                        SignalType::Abw => 8e6,
                        SignalType::AbwC => 1.0 / (1u64 << 20) as f64,
                        SignalType::Delay | SignalType::Nqd => 128_000.0,
                    },
                };
                if step.is_nan() || step <= 0.0 {
                    return Err(("step".into(), "step must be above zero".into()));
                }
                Encoding::Quantized { base, step, max_code: (1u32 << s_bits) - 1 }
            }
        };
        Ok(CsigSetup {
            sig: c.sig,
            size: c.size,
            encoding,
            decode: c.decode,
            reflect: c.reflect,
            fraction: c.fraction,
            lm_bits,
            abw_interval_ps: c.abw_interval.0,
            abw_ewma: c.abw_ewma,
            codec,
        })
    }

    /// The value a sender writes: the least congested code for the type.
    pub fn initial(&self) -> u32 {
        if self.sig.is_min() {
            self.encoding.max_code()
        } else {
            0
        }
    }

    /// Tags a fresh data packet.
    pub fn init(&self, s: &mut Signals) {
        s.csig_type = self.sig as u8;
        s.csig_value = self.initial();
        s.csig_lm = 0;
        s.csig_d = false;
        s.csig_writer = super::NO_WRITER;
    }

    /// Switch egress: compare the local value with the tag's, overwrite if worse.
    #[inline]
    pub fn update(&self, s: &mut Signals, local: f64, locator: u16, writer: u32) {
        // A trimmed packet's tag (d set) is no longer updated.
        if s.csig_type == NO_TAG || s.csig_d {
            return;
        }
        let q = self.encoding.encode(local);
        let worse = if self.sig.is_min() { q < s.csig_value } else { q > s.csig_value };
        if worse {
            s.csig_value = q;
            s.csig_lm = locator;
            s.csig_writer = writer;
        }
    }

    /// Is `a` worse than `b` (for reflecting the worst of several tags)?
    pub fn worse(&self, a: u32, b: u32) -> bool {
        if self.sig.is_min() {
            a < b
        } else {
            a > b
        }
    }

    pub fn decode(&self, code: u32) -> f64 {
        self.encoding.decode(code, self.decode, self.sig.is_min())
    }
}

/// A value of type `t` in its natural unit (ps for times, bit/s for
/// rates); errors name `key`.
fn natural_value(t: SignalType, v: &toml::Value, key: &str) -> Result<f64, (String, String)> {
    let bad = |m: String| (key.to_string(), m);
    match (t, v) {
        (SignalType::Delay | SignalType::Nqd, toml::Value::String(s)) => parse_time(s).map(|t| t.0 as f64).map_err(bad),
        (SignalType::Abw, toml::Value::String(s)) => parse_rate(s).map(|r| r.0 as f64).map_err(bad),
        (SignalType::AbwC, toml::Value::Float(f)) => Ok(*f),
        (SignalType::AbwC, toml::Value::Integer(i)) => Ok(*i as f64),
        (t, _) => Err(bad(format!(
            "a {} value must be {}",
            t.name(),
            match t {
                SignalType::Delay | SignalType::Nqd => "a time such as \"1us\"",
                SignalType::Abw => "a rate such as \"10Gbps\"",
                SignalType::AbwC => "a fraction such as 0.25",
            }
        ))),
    }
}

/// The bucket edges of type `t` from `v` (a list of edges or a preset
/// name), checked: 1 to `n` edges, each above zero and above the one
/// before. Errors name `key`, and `key[i]` for the edge at fault.
fn bucket_edges(c: &CsigConfig, t: SignalType, v: &toml::Value, key: &str, max_rate: u64, n: usize) -> Result<Vec<f64>, (String, String)> {
    let edges: Vec<f64> = match v {
        toml::Value::String(name) => match (name.as_str(), t) {
            ("linear", SignalType::AbwC) => (1..=n).map(|i| i as f64 / n as f64).collect(),
            ("linear", SignalType::Abw) => (1..=n).map(|i| max_rate as f64 * i as f64 / n as f64).collect(),
            ("linear", _) => {
                let top = c.delay_max.0.max(n as u64) as f64;
                (1..=n).map(|i| (top * i as f64 / n as f64).round()).collect()
            }
            ("geometric", SignalType::Delay | SignalType::Nqd) => {
                if c.delay_min >= c.delay_max {
                    return Err(("delay_min".into(), "the geometric buckets need delay_min below delay_max".into()));
                }
                let (lo, hi) = (c.delay_min.0.max(1) as f64, c.delay_max.0.max(2) as f64);
                let ratio = (hi / lo).powf(1.0 / (n.max(2) - 1) as f64);
                (0..n).map(|i| (lo * ratio.powi(i as i32)).round()).collect()
            }
            ("target", SignalType::Delay | SignalType::Nqd) => {
                // Fewer codes than edges: every k-th edge, the last (1 ms) kept.
                let all = &TARGET_DELAY_EDGES_NS;
                let m = n.min(all.len());
                (1..=m).map(|i| all[i * all.len() / m - 1] as f64 * 1e3).collect()
            }
            _ => {
                let names = if t.is_min() { "\"linear\"" } else { "\"target\", \"geometric\" or \"linear\"" };
                return Err((key.into(), format!("unknown {} preset \"{name}\": give a list of edges or {names}", t.name())));
            }
        },
        toml::Value::Array(list) => {
            let mut e = Vec::with_capacity(list.len());
            for (i, x) in list.iter().enumerate() {
                e.push(natural_value(t, x, &format!("{key}[{i}]"))?);
            }
            e
        }
        _ => return Err((key.into(), format!("give a list of {} edges or a preset name", t.name()))),
    };
    if edges.is_empty() || edges.len() > n {
        let bits = usize::BITS - n.leading_zeros();
        return Err((key.into(), format!("give 1 to {n} edges ({bits} value bits), got {}", edges.len())));
    }
    for (i, &x) in edges.iter().enumerate() {
        if !(x > 0.0 && x.is_finite()) {
            return Err((format!("{key}[{i}]"), format!("edge {i} must be above zero")));
        }
        if i > 0 && x <= edges[i - 1] {
            return Err((format!("{key}[{i}]"), format!("edge {i} is not above edge {}: edges must be strictly increasing", i - 1)));
        }
    }
    Ok(edges)
}

/// Locator metadata of an egress port: tier (2 bits), direction (1 bit, 0 up,
/// 1 down), and the low bits of the port's identity: the port index within
/// its switch for narrow fields, (switch index << 6 | port index) for fields
/// of 12 bits or more.
pub fn locator(bits: u8, tier: u8, down: bool, switch: u32, port_index: u32) -> u16 {
    let low_bits = bits.saturating_sub(3) as u32;
    let ident = if low_bits >= 12 { (switch << 6) | (port_index & 63) } else { port_index };
    let low = ident & ((1u32 << low_bits) - 1);
    (((tier as u32 & 3) << (low_bits + 1)) | ((down as u32) << low_bits) | low) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(size: TagSize, sig: SignalType) -> CsigSetup {
        let c: CsigConfig = toml::from_str(&format!("type = \"{}\"\nsize = \"{}\"", sig.name(), if size == TagSize::Wide { "wide" } else { "compact" })).unwrap();
        CsigSetup::new(&c, 100_000_000_000).unwrap()
    }

    #[test]
    fn compact_abw_c_buckets_are_thirty_seconds() {
        let s = setup(TagSize::Compact, SignalType::AbwC);
        assert_eq!(s.encoding.encode(0.0), 0);
        assert_eq!(s.encoding.encode(0.4), 12); // floor(0.4 * 31)
        assert_eq!(s.encoding.encode(1.0), 31);
        assert_eq!(s.initial(), 31);
        let v = s.decode(12);
        assert!((v - 12.0 / 31.0).abs() < 1e-12);
    }

    #[test]
    fn wide_delay_quantizes_in_128ns_steps_and_saturates() {
        let s = setup(TagSize::Wide, SignalType::Delay);
        assert_eq!(s.encoding.encode(127_999.0), 0);
        assert_eq!(s.encoding.encode(128_000.0), 1);
        assert_eq!(s.encoding.encode(1e30), (1 << 20) - 1);
        // Conservative decode of a max-type is the upper edge.
        assert_eq!(s.decode(3), 4.0 * 128_000.0);
    }

    #[test]
    fn update_overwrites_only_when_worse() {
        let s = setup(TagSize::Wide, SignalType::Delay);
        let mut g = Signals::default();
        s.init(&mut g);
        s.update(&mut g, 300_000.0, 5, 40);
        assert_eq!((g.csig_value, g.csig_lm, g.csig_writer), (2, 5, 40));
        s.update(&mut g, 200_000.0, 6, 41);
        assert_eq!((g.csig_value, g.csig_lm, g.csig_writer), (2, 5, 40));
        s.update(&mut g, 290_000.0, 7, 42); // same code: a tie keeps the upstream writer
        assert_eq!(g.csig_writer, 40);
        g.csig_d = true;
        s.update(&mut g, 9e9, 8, 43);
        assert_eq!(g.csig_writer, 40, "do-not-update");
        let m = setup(TagSize::Compact, SignalType::AbwC);
        let mut g = Signals::default();
        m.init(&mut g);
        m.update(&mut g, 0.5, 1, 1);
        m.update(&mut g, 0.7, 2, 2);
        m.update(&mut g, 0.2, 3, 3);
        assert_eq!((g.csig_value, g.csig_writer), (6, 3));
    }

    #[test]
    fn locator_packs_tier_direction_and_port() {
        assert_eq!(locator(7, 2, true, 9, 5), (2 << 5) | (1 << 4) | 5);
        assert_eq!(locator(16, 1, false, 3, 4), (1 << 14) | (3 << 6) | 4);
    }

    #[test]
    fn field_widths_and_tpids_are_configurable() {
        let c: CsigConfig = toml::from_str("type = \"abw_c\"\nvalue_bits = 4\nlocator_bits = 8\ntpid = 0x88b5").unwrap();
        let s = CsigSetup::new(&c, 1).unwrap();
        assert_eq!(s.encoding.max_code(), 15);
        assert_eq!(s.lm_bits, 8);
        assert_eq!((s.codec.compact.s_bits, s.codec.compact.lm_bits, s.codec.tpid_compact), (4, 8, 0x88b5));
        // T 3 + d + S 5 + LM 8 = 17 bits: does not fit the compact word.
        let c: CsigConfig = toml::from_str("type = \"delay\"\nlocator_bits = 8").unwrap();
        assert_eq!(CsigSetup::new(&c, 1).unwrap_err().0, "value_bits");
        let c: CsigConfig = toml::from_str("type = \"delay\"\ntpid = 0x9901").unwrap();
        assert_eq!(CsigSetup::new(&c, 1).unwrap_err().0, "tpid");
    }

    #[test]
    fn bad_config_names_its_key() {
        let c: CsigConfig = toml::from_str("type = \"delay\"\nbands = [\"1us\", \"1us\"]").unwrap();
        assert_eq!(CsigSetup::new(&c, 1).unwrap_err().0, "bands[1]");
        let c: CsigConfig = toml::from_str("type = \"abw\"\nbands = [0.5]").unwrap();
        assert_eq!(CsigSetup::new(&c, 1).unwrap_err().0, "bands[0]");
        let c: CsigConfig = toml::from_str("type = \"abw\"\nsize = \"wide\"\nstep = \"0Gbps\"").unwrap();
        assert_eq!(CsigSetup::new(&c, 1).unwrap_err().0, "step");
    }

    fn with(text: &str) -> Result<CsigSetup, (String, String)> {
        let c: CsigConfig = toml::from_str(text).unwrap();
        CsigSetup::new(&c, 100_000_000_000)
    }

    #[test]
    fn default_delay_buckets_are_fine_up_to_sixteen_us() {
        let s = setup(TagSize::Compact, SignalType::Delay);
        let e = &s.encoding;
        assert_eq!(e.max_code(), 31);
        // Code k counts the edges at or below the value (ps).
        assert_eq!((e.encode(0.0), e.encode(499_999.0), e.encode(500_000.0)), (0, 0, 1));
        assert_eq!((e.encode(999_999.0), e.encode(1_000_000.0), e.encode(1_999_999.0)), (1, 2, 2));
        // 13.5 us: 500 ns and 1 .. 13 us are below it.
        assert_eq!(e.encode(13_500_000.0), 14);
        assert_eq!(e.encode(17_000_000.0), 17);
        assert_eq!(e.encode(2e9), 31);
        // Max-type conservative decode: the upper edge; the top band its lower edge.
        assert_eq!(s.decode(14), 14e6);
        assert_eq!(s.decode(0), 500e3);
        assert_eq!(s.decode(31), 1e9);
        // 1 us of resolution from 1 to 16 us, at most 2 us to 24 us.
        for code in 2..=16 {
            let (lo, hi) = e.range(code);
            assert_eq!(hi - lo, 1e6, "code {code}");
        }
        assert!((17..=20).all(|k| e.range(k).1 - e.range(k).0 == 2e6));
    }

    #[test]
    fn bucket_lists_quantize_scripted_values() {
        let s = with("type = \"delay\"\nbuckets.delay = [\"1us\", \"5us\", \"20us\"]").unwrap();
        let e = &s.encoding;
        let got: Vec<u32> = [0.0, 999_999.0, 1e6, 4_999_999.0, 5e6, 19e6, 20e6, 1e12].iter().map(|&x| e.encode(x)).collect();
        assert_eq!(got, [0, 0, 1, 1, 2, 2, 3, 3]);
        assert_eq!(e.max_code(), 3);
        assert_eq!((s.decode(0), s.decode(1), s.decode(3)), (1e6, 5e6, 20e6));
        // Another type's list is not this run's.
        let a = with("type = \"abw_c\"\nbuckets.abw_c = [0.1, 0.5, 0.9]\nbuckets.delay = [\"3us\"]").unwrap();
        assert_eq!([0.05, 0.1, 0.6, 1.0].map(|x| a.encoding.encode(x)), [0, 1, 2, 3]);
        assert_eq!(a.initial(), 3);
        assert_eq!(a.decode(2), 0.5, "min-type conservative decode: the lower edge");
        let r = with("type = \"abw\"\nbuckets.abw = [\"10Gbps\", \"50Gbps\"]").unwrap();
        assert_eq!([9e9, 10e9, 60e9].map(|x| r.encoding.encode(x)), [0, 1, 2]);
        // `bands` is the selected type's list written directly.
        assert_eq!(with("type = \"delay\"\nbands = [\"1us\", \"5us\", \"20us\"]").unwrap().encoding, s.encoding);
    }

    #[test]
    fn presets_give_the_former_defaults() {
        // geometric: 100 ns to 1 ms in 31 edges, the compact delay default before `target`.
        let g = with("type = \"nqd\"\nbuckets.nqd = \"geometric\"").unwrap();
        let Encoding::Bands(t) = &g.encoding else { panic!() };
        let r = (1e9f64 / 1e5).powf(1.0 / 30.0);
        assert_eq!(t.len(), 31);
        assert_eq!((t[0], t[30]), (1e5, 1e9));
        assert!(t.windows(2).all(|w| (w[1] / w[0] - r).abs() < 1e-4));
        let l = with("type = \"delay\"\nbuckets.delay = \"linear\"\ndelay_max = \"31us\"").unwrap();
        assert_eq!([999_999.0, 1e6, 30.5e6, 40e6].map(|x| l.encoding.encode(x)), [0, 1, 30, 31]);
        // Fewer codes: every other target edge, 1 ms kept.
        let n = with("type = \"delay\"\nvalue_bits = 4").unwrap();
        let Encoding::Bands(t) = &n.encoding else { panic!() };
        assert_eq!(t.len(), 15);
        assert_eq!((t[0], t[14]), (1e6, 1e9));
    }

    #[test]
    fn bucket_errors_name_the_key_and_the_edge() {
        let err = |t: &str| with(t).unwrap_err();
        let (k, m) = err("type = \"delay\"\nbuckets.delay = [\"1us\", \"2us\", \"2us\"]");
        assert_eq!(k, "buckets.delay[2]");
        assert!(m.contains("strictly increasing"), "{m}");
        assert_eq!(err("type = \"delay\"\nbuckets.delay = [\"0us\"]").0, "buckets.delay[0]");
        assert_eq!(err("type = \"delay\"\nbuckets.delay = [\"1Gbps\"]").0, "buckets.delay[0]");
        // Checked even when the run's type is another.
        assert_eq!(err("type = \"delay\"\nbuckets.abw_c = [0.5, 0.25]").0, "buckets.abw_c[1]");
        let many = (1..=32).map(|i| format!("\"{i}us\"")).collect::<Vec<_>>().join(", ");
        let (k, m) = err(&format!("type = \"delay\"\nbuckets.delay = [{many}]"));
        assert_eq!(k, "buckets.delay");
        assert!(m.contains("1 to 31 edges (5 value bits), got 32"), "{m}");
        assert_eq!(err("type = \"delay\"\nvalue_bits = 2\nbuckets.delay = [\"1us\", \"2us\", \"3us\", \"4us\"]").0, "buckets.delay");
        assert_eq!(err("type = \"delay\"\nbuckets.delay = []").0, "buckets.delay");
        assert_eq!(err("type = \"abw_c\"\nbuckets.abw_c = \"geometric\"").0, "buckets.abw_c");
        assert_eq!(err("type = \"delay\"\nbands = [\"1us\"]\nbuckets.delay = [\"1us\"]").0, "bands");
        assert_eq!(err("type = \"delay\"\nsize = \"wide\"\nbuckets.delay = [\"1us\"]").0, "buckets.delay");
        assert_eq!(err("type = \"delay\"\nbuckets.delay = \"geometric\"\ndelay_min = \"1ms\"").0, "delay_min");
        assert!(toml::from_str::<CsigConfig>("type = \"delay\"\nbuckets.latency = [\"1us\"]").is_err(), "unknown type key");
    }

    #[test]
    fn bucket_codes_survive_the_wire() {
        use crate::wire::CsigRepr;
        for text in ["type = \"delay\"", "type = \"delay\"\nbuckets.delay = [\"1us\", \"5us\", \"20us\"]", "type = \"abw_c\"\nbuckets.abw_c = [0.1, 0.5, 0.9]"] {
            let s = with(text).unwrap();
            let scale = if s.sig.is_min() { 1e-6 } else { 1e3 };
            for x in [0.0, 400.0, 500.0, 1_000.0, 4_999.0, 13_500.0, 23_000.0, 70_000.0, 999_999.0, 2e6] {
                let x = x * scale;
                let code = s.encoding.encode(x);
                let repr = CsigRepr { size: crate::wire::TagSize::Compact, sig_type: s.sig as u8, value: code, locator: 9, d: false };
                let mut buf = [0u8; 4];
                assert_eq!(s.codec.emit(&repr, &mut buf), Ok(4));
                let (back, _) = s.codec.parse(&buf).unwrap();
                assert_eq!(back, repr, "{text}: {x}");
                let (lo, hi) = s.encoding.range(back.value);
                assert!(lo <= x && x < hi, "{text}: {x} decoded to [{lo}, {hi})");
            }
        }
    }
}
