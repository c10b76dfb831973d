//! Per-hop queue-occupancy stamping (the queue-stamping paper's MAX, SUM,
//! SUM_SQU and IND functions). Each switch egress quantizes its value to n
//! bits over [0, range) (q' = floor(q / (range / 2^n)) * (range / 2^n), values
//! at or above the range saturate) and folds it into running aggregates that
//! the packet carries; the receiver reflects them.

use super::{Signals, StampSample};
use crate::units::Size;
use serde::Deserialize;

/// What each hop stamps.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Collector {
    /// Egress queue bytes when the packet arrives, not counting itself.
    #[default]
    Enqueue,
    /// Egress queue bytes when the packet leaves.
    Dequeue,
    /// The packet's sojourn time in the egress queue, in picoseconds.
    Sojourn,
}

/// `[signals.stamp]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StampConfig {
    #[serde(default)]
    pub collect: Collector,
    /// Bits per hop value (1 to 32).
    #[serde(default = "default_bits")]
    pub bits: u32,
    /// Quantization range: bytes for queue collectors (default: the switch
    /// buffer); for `sojourn`, a time (default 1 ms).
    #[serde(default)]
    pub range: Option<toml::Value>,
    /// IND: set when some hop's (quantized) value exceeds this; same unit as range.
    #[serde(default)]
    pub ind_threshold: Option<toml::Value>,
}

fn default_bits() -> u32 {
    32
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StampSetup {
    pub collect: Collector,
    pub bits: u32,
    pub range: u64,
    pub ind_threshold: u64,
}

impl StampSetup {
    pub fn new(c: &StampConfig, buffer: Size) -> Result<StampSetup, (String, String)> {
        if !(1..=32).contains(&c.bits) {
            return Err(("bits".into(), format!("bits must be 1 to 32, got {}", c.bits)));
        }
        let parse = |v: &toml::Value, key: &str| -> Result<u64, (String, String)> {
            let bad = |m: String| (key.to_string(), m);
            match (c.collect, v) {
                (Collector::Sojourn, toml::Value::String(s)) => crate::units::parse_time(s).map(|t| t.0).map_err(bad),
                (Collector::Sojourn, _) => Err(bad("a sojourn range is a time such as \"1ms\"".into())),
                (_, toml::Value::String(s)) => crate::units::parse_size(s).map(|t| t.0).map_err(bad),
                (_, toml::Value::Integer(i)) if *i >= 0 => Ok(*i as u64),
                _ => Err(bad("a queue range is a size such as \"292KB\"".into())),
            }
        };
        let range = match &c.range {
            Some(v) => parse(v, "range")?,
            None if c.collect == Collector::Sojourn => crate::units::PS_PER_MS,
            None => buffer.0,
        };
        if range == 0 {
            return Err(("range".into(), "range must be above zero".into()));
        }
        let ind_threshold = match &c.ind_threshold {
            Some(v) => parse(v, "ind_threshold")?,
            None => range / 2,
        };
        Ok(StampSetup { collect: c.collect, bits: c.bits, range, ind_threshold })
    }

    /// The n-bit quantized value (floor to the interval's lower edge).
    #[inline]
    pub fn quantize(&self, q: u64) -> u64 {
        let levels = 1u128 << self.bits;
        let q = q.min(self.range - 1) as u128;
        // floor(q * levels / range) * range / levels, in integers.
        let level = q * levels / self.range as u128;
        (level * self.range as u128 / levels) as u64
    }

    #[inline]
    pub fn stamp(&self, s: &mut Signals, raw: u64) {
        let q = self.quantize(raw);
        s.stamp_hops = s.stamp_hops.saturating_add(1);
        s.stamp_max = s.stamp_max.max(q);
        s.stamp_sum += q;
        s.stamp_sumsq += (q as f64) * (q as f64);
    }

    pub fn sample(&self, s: &Signals) -> StampSample {
        StampSample {
            hops: s.stamp_hops,
            max: s.stamp_max,
            sum: s.stamp_sum,
            sum_squ: s.stamp_sumsq.sqrt(),
            ind: s.stamp_hops > 0 && s.stamp_max > self.ind_threshold,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(bits: u32) -> StampSetup {
        StampSetup { collect: Collector::Enqueue, bits, range: 292_000, ind_threshold: 100_000 }
    }

    #[test]
    fn quantization_floors_to_the_interval() {
        let s = setup(2); // interval 73_000
        assert_eq!(s.quantize(0), 0);
        assert_eq!(s.quantize(72_999), 0);
        assert_eq!(s.quantize(73_000), 73_000);
        assert_eq!(s.quantize(200_000), 146_000);
        assert_eq!(s.quantize(10_000_000), 219_000); // saturates in the top interval
        let fine = setup(32).quantize(123_457);
        assert!(fine <= 123_457 && 123_457 - fine <= 1, "{fine}");
    }

    #[test]
    fn aggregates_are_max_sum_and_norm() {
        let s = setup(32);
        let mut g = Signals::default();
        for q in [30_000, 40_000, 120_000] {
            s.stamp(&mut g, q);
        }
        let m = s.sample(&g);
        assert_eq!(m.hops, 3);
        assert!((m.max as i64 - 120_000).abs() <= 1);
        assert!((m.sum as i64 - 190_000).abs() <= 3);
        assert!((m.sum_squ - (30_000f64.powi(2) + 40_000f64.powi(2) + 120_000f64.powi(2)).sqrt()).abs() < 5.0);
        assert!(m.ind);
    }
}
