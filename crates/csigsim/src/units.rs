//! Units: integer picoseconds, bytes and bits per second, and their parsing.
//!
//! Time is an integer number of picoseconds everywhere in the engine; rates are
//! integer bits per second. Scenario files write them with units ("1us",
//! "100Gbps", "2MB"); decimal fractions are accepted when the result is a whole
//! number of the base unit ("1.5us" is 1_500_000 ps; "0.5ps" is refused).

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;

/// Picoseconds per nanosecond, microsecond, millisecond and second.
pub const PS_PER_NS: u64 = 1_000;
pub const PS_PER_US: u64 = 1_000_000;
pub const PS_PER_MS: u64 = 1_000_000_000;
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// The largest time a scenario may give: 10^17 ps (100,000 s, about 28
/// hours of simulated time). Every time key, trace start and capture bound is
/// refused above it, so that a start plus the engine's sums (link delays,
/// transmission times, 64 retransmission timeouts) stays far inside 64 bits.
pub const MAX_TIME_PS: u64 = 100_000 * PS_PER_S;

/// A time or duration in picoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Time(pub u64);

/// A size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Size(pub u64);

/// A rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Rate(pub u64);

impl Time {
    pub const fn ps(v: u64) -> Self {
        Time(v)
    }
    pub const fn ns(v: u64) -> Self {
        Time(v * PS_PER_NS)
    }
    pub const fn us(v: u64) -> Self {
        Time(v * PS_PER_US)
    }
    pub const fn ms(v: u64) -> Self {
        Time(v * PS_PER_MS)
    }
}

impl Rate {
    pub const fn gbps(v: u64) -> Self {
        Rate(v * 1_000_000_000)
    }
}

/// Serialization time of `bytes` at `rate_bps`, rounded up to a whole
/// picosecond (`u64::MAX` if it does not fit in 64 bits).
#[inline]
pub fn tx_time_ps(bytes: u64, rate_bps: u64) -> u64 {
    // A packet's bits x 10^12 fit in 64 bits: the 128-bit division (a
    // library call) is only needed for sizes above 2.3 MB.
    match bytes.checked_mul(8 * PS_PER_S) {
        Some(bits) => bits.div_ceil(rate_bps),
        None => saturate((bytes as u128 * 8 * PS_PER_S as u128).div_ceil(rate_bps as u128)),
    }
}

/// Bytes a link of `rate_bps` carries in `ps` picoseconds (rounded down;
/// `u64::MAX` if it does not fit in 64 bits).
#[inline]
pub fn bytes_in(ps: u64, rate_bps: u64) -> u64 {
    match ps.checked_mul(rate_bps) {
        Some(x) => x / (8 * PS_PER_S),
        None => saturate(ps as u128 * rate_bps as u128 / (8 * PS_PER_S as u128)),
    }
}

/// `v`, or `u64::MAX` when it is larger: a result too large for 64 bits
/// never wraps to a small one.
#[inline]
fn saturate(v: u128) -> u64 {
    u64::try_from(v).unwrap_or(u64::MAX)
}

const TIME_UNITS: &[(&str, u64)] = &[
    ("ps", 1),
    ("ns", PS_PER_NS),
    ("us", PS_PER_US),
    ("µs", PS_PER_US),
    // The Greek small letter mu (U+03BC), which looks like the micro sign
    // (U+00B5) above and is what many keyboards type.
    ("\u{3bc}s", PS_PER_US),
    ("ms", PS_PER_MS),
    ("s", PS_PER_S),
];
const SIZE_UNITS: &[(&str, u64)] = &[
    ("B", 1),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
];
const RATE_UNITS: &[(&str, u64)] = &[
    ("bps", 1),
    ("Kbps", 1_000),
    ("Mbps", 1_000_000),
    ("Gbps", 1_000_000_000),
    ("Tbps", 1_000_000_000_000),
];

/// Parses "<decimal><unit>" against a unit table; the result must be a whole
/// number of the base unit and fit in u64.
fn parse_with_units(s: &str, units: &[(&str, u64)], what: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(t.len());
    let (num, unit) = (t[..split].trim(), t[split..].trim());
    // The Greek mu is accepted but not listed: it looks like the micro sign.
    let names: Vec<&str> = units.iter().map(|u| u.0).filter(|n| !n.starts_with('\u{3bc}')).collect();
    if num.is_empty() {
        if t.starts_with('-') {
            return Err(format!("{what} must not be negative: \"{s}\""));
        }
        return Err(format!("{what} needs a number and a unit ({}), got \"{s}\"", names.join(", ")));
    }
    let factor = units
        .iter()
        .find(|(n, _)| *n == unit)
        .map(|(_, f)| *f)
        .ok_or_else(|| {
            if unit.is_empty() {
                format!("{what} \"{s}\" has no unit; use one of {}", names.join(", "))
            } else {
                format!("unknown unit \"{unit}\" in {what} \"{s}\"; use one of {}", names.join(", "))
            }
        })?;
    let num = num.replace('_', "");
    let (int_part, frac_part) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num.as_str(), ""),
    };
    if frac_part.contains('.') || (int_part.is_empty() && frac_part.is_empty()) {
        return Err(format!("malformed number in {what} \"{s}\""));
    }
    let bad = || format!("{what} \"{s}\" does not fit in 64 bits");
    let mut mant: u128 = 0;
    for c in int_part.chars().chain(frac_part.chars()) {
        mant = mant.checked_mul(10).and_then(|m| m.checked_add(c as u128 - '0' as u128)).ok_or_else(bad)?;
    }
    let scale = 10u128.checked_pow(frac_part.len() as u32).ok_or_else(bad)?;
    let total = mant.checked_mul(factor as u128).ok_or_else(bad)?;
    if total % scale != 0 {
        return Err(format!("{what} \"{s}\" is not a whole number of {}", units[0].0));
    }
    u64::try_from(total / scale).map_err(|_| bad())
}

pub fn parse_time(s: &str) -> Result<Time, String> {
    let t = parse_with_units(s, TIME_UNITS, "time")?;
    if t > MAX_TIME_PS {
        return Err(format!("time \"{s}\" is above the largest time, {} ({MAX_TIME_PS} ps)", Time(MAX_TIME_PS)));
    }
    Ok(Time(t))
}
pub fn parse_size(s: &str) -> Result<Size, String> {
    parse_with_units(s, SIZE_UNITS, "size").map(Size)
}
pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let r = parse_with_units(s, RATE_UNITS, "rate")?;
    if r == 0 {
        return Err(format!("rate \"{s}\" must be above zero"));
    }
    Ok(Rate(r))
}

struct UnitVisitor {
    what: &'static str,
    parse: fn(&str) -> Result<u64, String>,
    accept_int: bool,
}

impl<'de> Visitor<'de> for UnitVisitor {
    type Value = u64;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.what {
            "time" => write!(f, "a time with a unit, such as \"1us\""),
            "rate" => write!(f, "a rate with a unit, such as \"100Gbps\""),
            _ => write!(f, "a size such as \"2MB\" or a whole number of bytes"),
        }
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
        (self.parse)(v).map_err(E::custom)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
        if !self.accept_int {
            return Err(E::custom(format!(
                "a plain number is not a {}: write it with a unit, such as {}",
                self.what,
                if self.what == "time" { "\"1us\"" } else { "\"100Gbps\"" }
            )));
        }
        u64::try_from(v).map_err(|_| E::custom(format!("{} must not be negative: {v}", self.what)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
        self.visit_i64(v.min(i64::MAX as u64) as i64)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<u64, E> {
        Err(E::custom(format!("{v} is not a {}: write it as a string with a unit", self.what)))
    }
}

impl<'de> Deserialize<'de> for Time {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UnitVisitor { what: "time", parse: |s| parse_time(s).map(|t| t.0), accept_int: false }).map(Time)
    }
}
impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UnitVisitor { what: "size", parse: |s| parse_size(s).map(|t| t.0), accept_int: true }).map(Size)
    }
}
impl<'de> Deserialize<'de> for Rate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UnitVisitor { what: "rate", parse: |s| parse_rate(s).map(|t| t.0), accept_int: false }).map(Rate)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let v = self.0;
        for (name, factor) in [("s", PS_PER_S), ("ms", PS_PER_MS), ("us", PS_PER_US), ("ns", PS_PER_NS)] {
            if v >= factor && v.is_multiple_of(factor) {
                return write!(f, "{}{name}", v / factor);
            }
        }
        write!(f, "{v}ps")
    }
}
impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let v = self.0;
        for (name, factor) in [("Tbps", 1_000_000_000_000u64), ("Gbps", 1_000_000_000), ("Mbps", 1_000_000), ("Kbps", 1_000)] {
            if v >= factor && v.is_multiple_of(factor) {
                return write!(f, "{}{name}", v / factor);
            }
        }
        write!(f, "{v}bps")
    }
}
impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}B", self.0)
    }
}

/// Formats picoseconds as nanoseconds without losing precision.
pub fn fmt_ns(ps: u64) -> String {
    let mut s = Vec::with_capacity(24);
    let _ = write_ns(&mut s, ps);
    String::from_utf8(s).expect("ASCII digits")
}

/// [`fmt_ns`] written to `out` without a string in between (the writers
/// of large CSV files): whole nanoseconds, then up to three decimals with
/// no trailing zeros.
pub fn write_ns(out: &mut impl std::io::Write, ps: u64) -> std::io::Result<()> {
    let (ns, rem) = (ps / 1000, ps % 1000);
    out.write_all(itoa::Buffer::new().format(ns).as_bytes())?;
    if rem != 0 {
        let digits = [b'.', b'0' + (rem / 100) as u8, b'0' + (rem / 10 % 10) as u8, b'0' + (rem % 10) as u8];
        let len = if rem % 100 == 0 { 2 } else if rem % 10 == 0 { 3 } else { 4 };
        out.write_all(&digits[..len])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanoseconds_keep_every_picosecond_and_no_trailing_zero() {
        let cases = [
            (0, "0"),
            (1, "0.001"),
            (999, "0.999"),
            (1_000, "1"),
            (1_500, "1.5"),
            (1_050, "1.05"),
            (1_005, "1.005"),
            (1_120, "1.12"),
            (123_456_789, "123456.789"),
            (u64::MAX, "18446744073709551.615"),
        ];
        for (ps, text) in cases {
            assert_eq!(fmt_ns(ps), text, "{ps} ps");
        }
    }

    #[test]
    fn parses_units() {
        assert_eq!(parse_time("1us").unwrap(), Time(1_000_000));
        assert_eq!(parse_time("2.5ns").unwrap(), Time(2_500));
        assert_eq!(parse_time("10ms").unwrap(), Time(10_000_000_000));
        assert_eq!(parse_size("2MB").unwrap(), Size(2_000_000));
        assert_eq!(parse_size("4KiB").unwrap(), Size(4096));
        assert_eq!(parse_rate("100Gbps").unwrap(), Rate(100_000_000_000));
        assert_eq!(parse_rate("1.6Tbps").unwrap(), Rate(1_600_000_000_000));
    }

    #[test]
    fn micro_sign_and_greek_mu_both_mean_microseconds() {
        assert_eq!(parse_time("1\u{b5}s").unwrap(), Time(1_000_000));
        assert_eq!(parse_time("1\u{3bc}s").unwrap(), Time(1_000_000));
        // The list of units does not show two signs that look the same.
        let e = parse_time("1 parsec").unwrap_err();
        assert!(e.contains("\u{b5}s") && !e.contains('\u{3bc}'), "{e}");
    }

    #[test]
    fn refuses_bad_units() {
        assert!(parse_time("1 parsec").unwrap_err().contains("unknown unit"));
        assert!(parse_time("0.5ps").unwrap_err().contains("whole number"));
        assert!(parse_time("5").unwrap_err().contains("no unit"));
        assert!(parse_size("-3MB").unwrap_err().contains("negative"));
        assert!(parse_rate("0Gbps").is_err());
        assert!(parse_rate("1.2.3Gbps").is_err());
    }

    #[test]
    fn times_stop_at_the_largest_time() {
        assert_eq!(parse_time("100000s").unwrap(), Time(MAX_TIME_PS));
        assert_eq!(parse_time("100000000000000000ps").unwrap(), Time(MAX_TIME_PS));
        assert!(parse_time("100000000000000001ps").unwrap_err().contains("largest time, 100000s"));
        assert!(parse_time("18446744073709551615ps").unwrap_err().contains("largest time"));
        assert!(parse_time("18446744073709551616ps").unwrap_err().contains("64 bits"));
    }

    #[test]
    fn tx_time_is_exact_or_rounded_up() {
        assert_eq!(tx_time_ps(4160, 100_000_000_000), 332_800);
        assert_eq!(tx_time_ps(1, 3), 2_666_666_666_667);
        assert_eq!(bytes_in(332_800, 100_000_000_000), 4160);
        // Results beyond 64 bits saturate instead of wrapping.
        assert_eq!(bytes_in(u64::MAX, u64::MAX), u64::MAX);
        assert_eq!(tx_time_ps(u64::MAX / 8, 1), u64::MAX);
    }

    proptest::proptest! {
        #[test]
        fn fast_paths_equal_the_128_bit_formulas(bytes in 0u64..u64::MAX / 8, ps in proptest::prelude::any::<u64>(), rate in 1u64..u64::MAX) {
            let slow = (bytes as u128 * 8 * PS_PER_S as u128).div_ceil(rate as u128);
            if slow <= u64::MAX as u128 {
                proptest::prop_assert_eq!(tx_time_ps(bytes, rate) as u128, slow);
            }
            proptest::prop_assert_eq!(bytes_in(ps, rate), saturate(ps as u128 * rate as u128 / (8 * PS_PER_S as u128)));
        }

        #[test]
        fn fast_paths_equal_the_128_bit_formulas_for_packets(bytes in 0u64..100_000, ps in 0u64..10_000_000_000, rate in 1_000u64..2_000_000_000_000) {
            proptest::prop_assert_eq!(tx_time_ps(bytes, rate) as u128, (bytes as u128 * 8 * PS_PER_S as u128).div_ceil(rate as u128));
            proptest::prop_assert_eq!(bytes_in(ps, rate), (ps as u128 * rate as u128 / (8 * PS_PER_S as u128)) as u64);
        }
    }
}
