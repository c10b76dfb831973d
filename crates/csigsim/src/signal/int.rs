//! In-band network telemetry for HPCC: each switch egress pushes a record
//! (departure time, cumulative bytes sent on the port, egress queue bytes,
//! port rate) while there is room for it; the receiver copies the stack into
//! its ACK. The sender reserves `header + per_hop * max_hops` bytes on every
//! data packet and the ACK carries the same (the layout of the HPCC artifact:
//! 2 + 8 * 5 = 42 bytes).
//!
//! Records are exact (`record = "exact"`: picoseconds, a 64-bit byte counter,
//! queue bytes, bit/s) or quantized as the HPCC authors' ns-3 packs them into
//! 8 bytes (`record = "quantized"`, `IntHop` in `int-header.h`): a 24-bit time
//! stamp in nanoseconds, a 20-bit byte counter in units of 128 x `multi`
//! bytes and a 17-bit queue length in units of 80 x `multi` bytes, each
//! truncated and wrapping, and a 3-bit code for 25, 50, 100, 200 or 400 Gb/s.
//! Quantized records keep their decoded values (units times the field), and
//! differences of time stamps and byte counters wrap as ns-3's
//! `GetTimeDelta` and `GetBytesDelta` do.

use serde::Deserialize;

pub use crate::packet::{IntHop, IntStack, MAX_HOPS};

/// How switches write a hop record.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum IntRecord {
    /// Full-precision values.
    #[default]
    Exact,
    /// The ns-3 HPCC simulator's 8-byte record: coarse units, wrapping fields.
    Quantized,
}

/// Bits of each quantized field (ns-3 `IntHop::timeWidth`, `bytesWidth`, `qlenWidth`).
pub const TIME_BITS: u32 = 24;
pub const BYTES_BITS: u32 = 20;
pub const QLEN_BITS: u32 = 17;
/// Units of the quantized fields at `multi = 1`: ns (ns-3's default time
/// step), bytes (`byteUnit`), bytes (`qlenUnit`).
pub const TIME_UNIT_PS: u64 = 1_000;
pub const BYTES_UNIT: u64 = 128;
pub const QLEN_UNIT: u64 = 80;
/// The rates the 3-bit code can name (ns-3 `lineRateValues`).
pub const LINE_RATES: [u64; 5] = [25_000_000_000, 50_000_000_000, 100_000_000_000, 200_000_000_000, 400_000_000_000];

/// `[signals.int]`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IntConfig {
    #[serde(default = "default_max_hops")]
    pub max_hops: u8,
    /// Bytes of the INT header.
    #[serde(default = "default_header")]
    pub header: u32,
    /// Bytes per hop record.
    #[serde(default = "default_per_hop")]
    pub per_hop: u32,
    /// "exact" or "quantized" (ns-3's field widths and units).
    #[serde(default)]
    pub record: IntRecord,
    /// Quantized records: the unit multiplier of the byte and queue fields
    /// (ns-3 `INT_MULTI`; its run.py sets line rate / 25 Gb/s for HPCC).
    #[serde(default = "default_multi")]
    pub multi: u8,
}

fn default_max_hops() -> u8 {
    5
}
fn default_header() -> u32 {
    2
}
fn default_per_hop() -> u32 {
    8
}
fn default_multi() -> u8 {
    1
}

impl Default for IntConfig {
    fn default() -> Self {
        IntConfig {
            max_hops: default_max_hops(),
            header: default_header(),
            per_hop: default_per_hop(),
            record: IntRecord::Exact,
            multi: default_multi(),
        }
    }
}

impl IntConfig {
    pub fn validate(&self) -> Result<(), (String, String)> {
        if self.max_hops == 0 || self.max_hops as usize > MAX_HOPS {
            return Err(("max_hops".into(), format!("max_hops must be 1 to {MAX_HOPS}, got {}", self.max_hops)));
        }
        if self.multi == 0 {
            return Err(("multi".into(), "multi must be 1 to 255, got 0".into()));
        }
        Ok(())
    }
    /// Wire bytes INT adds to every data packet and ACK.
    pub fn overhead(&self) -> u32 {
        self.header + self.per_hop * self.max_hops as u32
    }

    /// Pushes the record of one hop onto `stack` (if it has room), quantized
    /// when `record = "quantized"`.
    #[inline]
    pub fn push(&self, stack: &mut IntStack, hop: IntHop) -> bool {
        match self.record {
            IntRecord::Exact => {
                stack.multi = 0;
                stack.push(hop, self.max_hops)
            }
            IntRecord::Quantized => {
                stack.multi = self.multi;
                stack.push(quantize(hop, self.multi), self.max_hops)
            }
        }
    }
}

/// `v` truncated to whole `unit`s, kept to `bits` bits, in the original unit.
fn field(v: u64, unit: u64, bits: u32) -> u64 {
    ((v / unit) & ((1 << bits) - 1)) * unit
}

/// The record as ns-3's `IntHop::Set` stores it, decoded. A rate outside the
/// 3-bit table is kept exact (ns-3 prints an error and keeps the old code).
pub fn quantize(h: IntHop, multi: u8) -> IntHop {
    let m = multi.max(1) as u64;
    IntHop {
        ts_ps: field(h.ts_ps, TIME_UNIT_PS, TIME_BITS),
        tx_bytes: field(h.tx_bytes, BYTES_UNIT * m, BYTES_BITS),
        qlen_bytes: field(h.qlen_bytes, QLEN_UNIT * m, QLEN_BITS),
        rate_bps: h.rate_bps,
    }
}

/// Picoseconds between two records of one hop (`now` the later); exact
/// records never wrap (0 if `now` is not later), quantized ones wrap at 2^24 ns.
#[inline]
pub fn ts_delta(stack: &IntStack, now: &IntHop, old: &IntHop) -> u64 {
    if stack.multi == 0 {
        now.ts_ps.saturating_sub(old.ts_ps)
    } else {
        let period = TIME_UNIT_PS << TIME_BITS;
        (now.ts_ps + period - old.ts_ps % period) % period
    }
}

/// Bytes sent between two records of one hop; quantized counters wrap at
/// 2^20 units of 128 x `multi` bytes.
#[inline]
pub fn tx_delta(stack: &IntStack, now: &IntHop, old: &IntHop) -> u64 {
    if stack.multi == 0 {
        now.tx_bytes.saturating_sub(old.tx_bytes)
    } else {
        let period = (BYTES_UNIT * stack.multi as u64) << BYTES_BITS;
        (now.tx_bytes + period - old.tx_bytes % period) % period
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_holds_at_most_max_hops() {
        let mut s = IntStack::default();
        for i in 0..7 {
            let pushed = s.push(IntHop { ts_ps: i, ..Default::default() }, 5);
            assert_eq!(pushed, i < 5);
        }
        assert_eq!(s.hops().len(), 5);
        assert_eq!(s.hops()[4].ts_ps, 4);
        assert_eq!(IntConfig { max_hops: 5, header: 2, per_hop: 8, ..Default::default() }.overhead(), 42);
    }

    #[test]
    fn exact_records_are_kept_as_they_are() {
        let c = IntConfig::default();
        assert_eq!(c.record, IntRecord::Exact);
        let h = IntHop { ts_ps: 1_234_567, tx_bytes: 987_654_321, qlen_bytes: 12_345, rate_bps: 100_000_000_000 };
        let mut s = IntStack::default();
        assert!(c.push(&mut s, h));
        assert_eq!((s.multi, s.hops()[0]), (0, h));
        let later = IntHop { ts_ps: 2_000_000, tx_bytes: 987_700_000, ..h };
        assert_eq!((ts_delta(&s, &later, &h), tx_delta(&s, &later, &h)), (765_433, 45_679));
    }

    #[test]
    fn quantized_records_use_ns3_units_and_widths() {
        let c: IntConfig = toml::from_str("record = \"quantized\"").unwrap();
        assert_eq!((c.record, c.multi), (IntRecord::Quantized, 1));
        let h = IntHop { ts_ps: 1_234_567, tx_bytes: 987_654_321, qlen_bytes: 12_345, rate_bps: 100_000_000_000 };
        let mut s = IntStack::default();
        assert!(c.push(&mut s, h));
        assert_eq!(s.multi, 1);
        let q = s.hops()[0];
        // 1234.567 ns -> 1234 ns.
        assert_eq!(q.ts_ps, 1_234_000);
        // 987654321 / 128 = 7716049 units; mod 2^20 = 7716049 - 7 x 1048576 = 376017;
        // x 128 = 48130176 bytes.
        assert_eq!(q.tx_bytes, 376_017 * 128);
        // 12345 / 80 = 154 units = 12320 bytes.
        assert_eq!(q.qlen_bytes, 12_320);
        assert_eq!(q.rate_bps, 100_000_000_000);
        // multi = 4 (run.py at 100 Gb/s): units of 512 and 320 bytes.
        let c4 = IntConfig { multi: 4, ..c };
        let q4 = quantize(h, c4.multi);
        assert_eq!((q4.tx_bytes, q4.qlen_bytes), ((987_654_321 / 512 % (1 << 20)) * 512, 38 * 320));
        // A queue of 2^17 units or more wraps, as ns-3's bit field does.
        assert_eq!(quantize(IntHop { qlen_bytes: (1 << 17) * 80 + 160, ..h }, 1).qlen_bytes, 160);
    }

    #[test]
    fn quantized_deltas_wrap_like_ns3() {
        let c = IntConfig { record: IntRecord::Quantized, ..Default::default() };
        // Time: 2^24 ns = 16.777216 ms; a record 1 us before the wrap and one 2 us after.
        let wrap_ps = (1u64 << 24) * 1_000;
        let mut a = IntStack::default();
        let mut b = IntStack::default();
        let bytes_wrap = 128u64 << 20;
        c.push(&mut a, IntHop { ts_ps: wrap_ps - 1_000_000, tx_bytes: bytes_wrap - 1_280, ..Default::default() });
        c.push(&mut b, IntHop { ts_ps: wrap_ps + 2_000_500, tx_bytes: bytes_wrap + 2_600, ..Default::default() });
        let (old, now) = (a.hops()[0], b.hops()[0]);
        assert_eq!(now.ts_ps, 2_000_000, "the stamp wrapped");
        assert_eq!(ts_delta(&b, &now, &old), 3_000_000);
        // 2600 bytes past the wrap is 20 units (2560); 1280 before it is 10 units.
        assert_eq!(now.tx_bytes, 2_560);
        assert_eq!(tx_delta(&b, &now, &old), 30 * 128);
        assert_eq!(IntConfig { multi: 0, ..c }.validate().unwrap_err().0, "multi");
        assert!(toml::from_str::<IntConfig>("record = \"ns3\"").is_err());
    }
}
