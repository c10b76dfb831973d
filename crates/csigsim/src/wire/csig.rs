/*! The CSIG L2 tag: a TPID followed by a 16-bit (compact) or 48-bit (wide) body.

The tag sits where an 802.1Q tag would, between the source MAC and the
EtherType, and carries one signal: type `T`, value `S`, locator metadata `LM`
and the do-not-update bit `d`. Each size has its own TPID, so a parser knows
the body length from the first two bytes.

Field order inside the body is fixed per size, most significant bit first:
`T, d, S, LM` for compact and `LM, T, S, d` for wide. Widths come from a
[`CsigLayout`]; bits left over after the last field are reserved (zero on
emit, ignored on parse). With `d_bit = false` the `d` field takes no bits.
*/

use super::WireError;
use serde::{Deserialize, Serialize};

/// TPID of the compact tag used by the Broadcom SDK tests (FBOSS).
pub const TPID_COMPACT_DEFAULT: u16 = 0x9900;
/// TPID of the wide tag: no public value exists, so the next one up.
pub const TPID_WIDE_DEFAULT: u16 = 0x9901;

/// Byte offsets within a tag, counted from the TPID.
pub mod field {
    use core::ops::Range;

    pub const TPID: Range<usize> = 0..2;
    /// The body starts right after the TPID.
    pub const BODY: usize = 2;
    pub const COMPACT_BODY_LEN: usize = 2;
    pub const WIDE_BODY_LEN: usize = 6;
}

/// Which of the two tag formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TagSize {
    /// 4 bytes on the wire: TPID + 16-bit body.
    Compact,
    /// 8 bytes on the wire: TPID + 48-bit body.
    Wide,
}

impl TagSize {
    /// Bytes the tag adds to a frame, TPID included.
    pub const fn tag_len(self) -> usize {
        field::BODY + self.body_len()
    }

    /// Bytes of the body after the TPID.
    pub const fn body_len(self) -> usize {
        match self {
            TagSize::Compact => field::COMPACT_BODY_LEN,
            TagSize::Wide => field::WIDE_BODY_LEN,
        }
    }

    /// Bits of the body after the TPID.
    pub const fn body_bits(self) -> u32 {
        8 * self.body_len() as u32
    }

    fn name(self) -> &'static str {
        match self {
            TagSize::Compact => "compact",
            TagSize::Wide => "wide",
        }
    }
}

/// Field widths of one tag size. See the module docs for the field order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CsigLayout {
    /// Width of the signal type `T`.
    pub t_bits: u8,
    /// Width of the signal value `S`.
    pub s_bits: u8,
    /// Width of the locator metadata `LM`.
    pub lm_bits: u8,
    /// Whether the body has the 1-bit `d` field.
    pub d_bit: bool,
}

/// Bit position (shift from the body's least significant bit) of each field.
#[derive(Clone, Copy, Debug)]
struct Shifts {
    t: u32,
    d: Option<u32>,
    s: u32,
    lm: u32,
}

impl CsigLayout {
    /// The verified compact layout (draft-01 / Broadcom SDK) with the
    /// reserved bit used as `d`: `T(3) | d(1) | S(5) | LM(7)`.
    pub const fn compact_default() -> Self {
        CsigLayout {
            t_bits: 3,
            s_bits: 5,
            lm_bits: 7,
            d_bit: true,
        }
    }

    /// The draft-01 wide layout with `d` taken from the reserved byte:
    /// `LM(16) | T(4) | S(20) | d(1) | reserved(7)`.
    pub const fn wide_default() -> Self {
        CsigLayout {
            t_bits: 4,
            s_bits: 20,
            lm_bits: 16,
            d_bit: true,
        }
    }

    /// Bits the fields occupy, `d` included.
    pub const fn used_bits(&self) -> u32 {
        self.t_bits as u32 + self.s_bits as u32 + self.lm_bits as u32 + self.d_bit as u32
    }

    /// Checks that each field fits its Rust type and all fields fit the body
    /// of a tag of `size`.
    pub fn validate(&self, size: TagSize) -> Result<(), WireError> {
        // The widths are bounded by the types CsigRepr stores them in.
        let limits = [
            ("t_bits", self.t_bits, 8, "the signal type is a u8"),
            ("s_bits", self.s_bits, 32, "the value is a u32"),
            ("lm_bits", self.lm_bits, 16, "the locator is a u16"),
        ];
        for (name, bits, max, why) in limits {
            if bits > max {
                return Err(WireError::InvalidLayout(format!(
                    "{name} = {bits} exceeds {max} ({why})"
                )));
            }
        }
        let used = self.used_bits();
        let avail = size.body_bits();
        if used > avail {
            return Err(WireError::InvalidLayout(format!(
                "{} tag: T {} + d {} + S {} + LM {} = {used} bits, but the body has {avail}",
                size.name(),
                self.t_bits,
                self.d_bit as u8,
                self.s_bits,
                self.lm_bits,
            )));
        }
        Ok(())
    }

    /// Field positions; only meaningful after `validate(size)` succeeded.
    fn shifts(&self, size: TagSize) -> Shifts {
        let d_bits = self.d_bit as u32;
        let (t, s, lm) = (self.t_bits as u32, self.s_bits as u32, self.lm_bits as u32);
        // Walk down from the top of the body in each size's field order.
        let top = size.body_bits();
        match size {
            TagSize::Compact => {
                let t_shift = top - t;
                let d_shift = t_shift - d_bits;
                let s_shift = d_shift - s;
                let lm_shift = s_shift - lm;
                Shifts {
                    t: t_shift,
                    d: self.d_bit.then_some(d_shift),
                    s: s_shift,
                    lm: lm_shift,
                }
            }
            TagSize::Wide => {
                let lm_shift = top - lm;
                let t_shift = lm_shift - t;
                let s_shift = t_shift - s;
                let d_shift = s_shift - d_bits;
                Shifts {
                    t: t_shift,
                    d: self.d_bit.then_some(d_shift),
                    s: s_shift,
                    lm: lm_shift,
                }
            }
        }
    }
}

/// One parsed CSIG tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CsigRepr {
    pub size: TagSize,
    /// Signal type `T`: 0 ABW, 1 ABW/C, 2 Delay, 3 nQD.
    pub sig_type: u8,
    /// Signal value `S` (a bucket index or a quantized value).
    pub value: u32,
    /// Locator metadata `LM` of the hop that last wrote `value`.
    pub locator: u16,
    /// Do-not-update bit, set by a trimming switch.
    pub d: bool,
}

impl CsigRepr {
    /// Bytes this tag occupies on the wire, TPID included.
    pub const fn buffer_len(&self) -> usize {
        self.size.tag_len()
    }
}

/// The tag formats in use: the layout and TPID of each size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CsigCodec {
    pub compact: CsigLayout,
    pub wide: CsigLayout,
    pub tpid_compact: u16,
    pub tpid_wide: u16,
}

impl Default for CsigCodec {
    fn default() -> Self {
        CsigCodec {
            compact: CsigLayout::compact_default(),
            wide: CsigLayout::wide_default(),
            tpid_compact: TPID_COMPACT_DEFAULT,
            tpid_wide: TPID_WIDE_DEFAULT,
        }
    }
}

/// Puts `value` into `bits` bits at `shift`, refusing values that do not fit.
fn put(
    body: &mut u64,
    field: &'static str,
    value: u64,
    bits: u32,
    shift: u32,
) -> Result<(), WireError> {
    if bits < 64 && value >> bits != 0 {
        return Err(WireError::FieldOverflow {
            field,
            value,
            bits: bits as u8,
        });
    }
    *body |= value << shift;
    Ok(())
}

/// Reads `bits` bits at `shift`.
fn get(body: u64, bits: u32, shift: u32) -> u64 {
    (body >> shift) & ((1u64 << bits) - 1)
}

impl CsigCodec {
    /// Checks both layouts and that the TPIDs can be told apart from each
    /// other and from IPv4.
    pub fn validate(&self) -> Result<(), WireError> {
        self.compact.validate(TagSize::Compact)?;
        self.wide.validate(TagSize::Wide)?;
        if self.tpid_compact == self.tpid_wide {
            return Err(WireError::InvalidLayout(format!(
                "compact and wide tags share TPID {:#06x}",
                self.tpid_compact
            )));
        }
        if self.tpid_compact == super::ETHERTYPE_IPV4 || self.tpid_wide == super::ETHERTYPE_IPV4 {
            return Err(WireError::InvalidLayout(
                "a CSIG TPID equals the IPv4 EtherType 0x0800".into(),
            ));
        }
        Ok(())
    }

    pub const fn layout(&self, size: TagSize) -> &CsigLayout {
        match size {
            TagSize::Compact => &self.compact,
            TagSize::Wide => &self.wide,
        }
    }

    pub const fn tpid(&self, size: TagSize) -> u16 {
        match size {
            TagSize::Compact => self.tpid_compact,
            TagSize::Wide => self.tpid_wide,
        }
    }

    /// Bytes a tag of `size` adds to a frame (4 or 8).
    pub const fn tag_len(&self, size: TagSize) -> usize {
        size.tag_len()
    }

    /// The tag size a TPID announces, if it is one of ours.
    pub fn size_of_tpid(&self, tpid: u16) -> Option<TagSize> {
        if tpid == self.tpid_compact {
            Some(TagSize::Compact)
        } else if tpid == self.tpid_wide {
            Some(TagSize::Wide)
        } else {
            None
        }
    }

    /// Writes TPID and body to the start of `buf`; returns the bytes
    /// written. On error nothing is written.
    pub fn emit(&self, repr: &CsigRepr, buf: &mut [u8]) -> Result<usize, WireError> {
        self.validate()?;
        let size = repr.size;
        let lay = self.layout(size);
        let sh = lay.shifts(size);
        let mut body = 0u64;
        put(
            &mut body,
            "sig_type",
            repr.sig_type.into(),
            lay.t_bits.into(),
            sh.t,
        )?;
        put(
            &mut body,
            "value",
            repr.value.into(),
            lay.s_bits.into(),
            sh.s,
        )?;
        put(
            &mut body,
            "locator",
            repr.locator.into(),
            lay.lm_bits.into(),
            sh.lm,
        )?;
        match sh.d {
            Some(shift) => put(&mut body, "d", repr.d.into(), 1, shift)?,
            // No d field in this layout: only d = false is representable.
            None => put(&mut body, "d", repr.d.into(), 0, 0)?,
        }
        let len = size.tag_len();
        let Some(out) = buf.get_mut(..len) else {
            return Err(WireError::Truncated {
                needed: len,
                have: buf.len(),
            });
        };
        out[field::TPID].copy_from_slice(&self.tpid(size).to_be_bytes());
        // The body is the low body_len bytes of the big-endian u64.
        out[field::BODY..].copy_from_slice(&body.to_be_bytes()[8 - size.body_len()..]);
        Ok(len)
    }

    /// Parses a tag at the start of `buf` (TPID first); returns it and the
    /// bytes it occupies.
    pub fn parse(&self, buf: &[u8]) -> Result<(CsigRepr, usize), WireError> {
        self.validate()?;
        let Some(tpid) = buf.get(field::TPID) else {
            return Err(WireError::Truncated {
                needed: field::BODY,
                have: buf.len(),
            });
        };
        let tpid = u16::from_be_bytes([tpid[0], tpid[1]]);
        let size = self
            .size_of_tpid(tpid)
            .ok_or(WireError::UnknownTpid(tpid))?;
        let len = size.tag_len();
        let Some(body_bytes) = buf.get(field::BODY..len) else {
            return Err(WireError::Truncated {
                needed: len,
                have: buf.len(),
            });
        };
        let body = body_bytes.iter().fold(0u64, |acc, &b| acc << 8 | b as u64);
        let lay = self.layout(size);
        let sh = lay.shifts(size);
        // Widths were validated against the Rust types, so the casts are exact.
        let repr = CsigRepr {
            size,
            sig_type: get(body, lay.t_bits.into(), sh.t) as u8,
            value: get(body, lay.s_bits.into(), sh.s) as u32,
            locator: get(body, lay.lm_bits.into(), sh.lm) as u16,
            d: sh.d.is_some_and(|shift| get(body, 1, shift) == 1),
        };
        Ok((repr, len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn compact_default_bytes() {
        let codec = CsigCodec::default();
        let repr = CsigRepr {
            size: TagSize::Compact,
            sig_type: 2, // Delay
            value: 0x15,
            locator: 0x5a,
            d: true,
        };
        // T=010 d=1 S=10101 LM=1011010 -> 0101 1010 1101 1010 = 0x5ADA
        let expected = [0x99, 0x00, 0x5a, 0xda];
        let mut buf = [0u8; 4];
        assert_eq!(codec.emit(&repr, &mut buf), Ok(4));
        assert_eq!(buf, expected);
        assert_eq!(codec.parse(&expected), Ok((repr, 4)));
    }

    #[test]
    fn wide_default_bytes() {
        let codec = CsigCodec::default();
        let repr = CsigRepr {
            size: TagSize::Wide,
            sig_type: 1, // ABW/C
            value: 0xabcde,
            locator: 0x1234,
            d: true,
        };
        // LM=0x1234 | T=0x1 | S=0xABCDE | d=1 | 0000000
        // low 32 bits: 0x1<<28 | 0xABCDE<<8 | 0x80 = 0x1ABCDE80
        let expected = [0x99, 0x01, 0x12, 0x34, 0x1a, 0xbc, 0xde, 0x80];
        let mut buf = [0u8; 10];
        assert_eq!(codec.emit(&repr, &mut buf), Ok(8));
        assert_eq!(buf[..8], expected);
        assert_eq!(buf[8..], [0, 0]);
        assert_eq!(codec.parse(&buf), Ok((repr, 8)));
    }

    #[test]
    fn parse_ignores_reserved_bits() {
        let codec = CsigCodec::default();
        let (repr, _) = codec.parse(&[0x99, 0x01, 0, 0, 0, 0, 0, 0x7f]).unwrap();
        assert_eq!(
            (repr.sig_type, repr.value, repr.locator, repr.d),
            (0, 0, 0, false)
        );
    }

    #[test]
    fn overflow_is_an_error_not_a_truncation() {
        let codec = CsigCodec::default();
        let mut buf = [0xeeu8; 8];
        let repr = CsigRepr {
            size: TagSize::Compact,
            sig_type: 0,
            value: 32,
            locator: 0,
            d: false,
        };
        assert_eq!(
            codec.emit(&repr, &mut buf),
            Err(WireError::FieldOverflow {
                field: "value",
                value: 32,
                bits: 5
            })
        );
        assert_eq!(buf, [0xee; 8], "nothing written on error");
        let repr = CsigRepr {
            sig_type: 8,
            value: 0,
            ..repr
        };
        assert!(matches!(
            codec.emit(&repr, &mut buf),
            Err(WireError::FieldOverflow {
                field: "sig_type",
                bits: 3,
                ..
            })
        ));
        let repr = CsigRepr {
            size: TagSize::Wide,
            sig_type: 0,
            value: 1 << 20,
            ..repr
        };
        assert!(matches!(
            codec.emit(&repr, &mut buf),
            Err(WireError::FieldOverflow {
                field: "value",
                bits: 20,
                ..
            })
        ));
    }

    #[test]
    fn d_without_d_bit_is_an_error() {
        let mut codec = CsigCodec::default();
        codec.compact.d_bit = false;
        let repr = CsigRepr {
            size: TagSize::Compact,
            sig_type: 0,
            value: 0,
            locator: 0,
            d: true,
        };
        let mut buf = [0u8; 4];
        assert!(matches!(
            codec.emit(&repr, &mut buf),
            Err(WireError::FieldOverflow {
                field: "d",
                bits: 0,
                ..
            })
        ));
    }

    #[test]
    fn short_buffers_and_foreign_tpids() {
        let codec = CsigCodec::default();
        assert_eq!(
            codec.parse(&[0x99]),
            Err(WireError::Truncated { needed: 2, have: 1 })
        );
        assert_eq!(
            codec.parse(&[0x99, 0x01, 0, 0]),
            Err(WireError::Truncated { needed: 8, have: 4 })
        );
        assert_eq!(
            codec.parse(&[0x81, 0x00, 0, 0]),
            Err(WireError::UnknownTpid(0x8100))
        );
        let repr = CsigRepr {
            size: TagSize::Wide,
            sig_type: 0,
            value: 0,
            locator: 0,
            d: false,
        };
        assert_eq!(
            codec.emit(&repr, &mut [0u8; 7]),
            Err(WireError::Truncated { needed: 8, have: 7 })
        );
    }

    #[test]
    fn layout_validation_messages() {
        let too_wide = CsigLayout {
            t_bits: 3,
            s_bits: 6,
            lm_bits: 7,
            d_bit: true,
        };
        let err = too_wide.validate(TagSize::Compact).unwrap_err().to_string();
        assert_eq!(
            err,
            "invalid CSIG layout: compact tag: T 3 + d 1 + S 6 + LM 7 = 17 bits, but the body has 16"
        );
        assert!(too_wide.validate(TagSize::Wide).is_ok());
        let big_t = CsigLayout {
            t_bits: 9,
            ..CsigLayout::wide_default()
        };
        assert_eq!(
            big_t.validate(TagSize::Wide).unwrap_err().to_string(),
            "invalid CSIG layout: t_bits = 9 exceeds 8 (the signal type is a u8)"
        );
        // UEC-slides flavour: one bit left over, reserved at the bottom.
        let uec = CsigLayout {
            t_bits: 3,
            s_bits: 5,
            lm_bits: 6,
            d_bit: true,
        };
        assert!(uec.validate(TagSize::Compact).is_ok());
        let same_tpid = CsigCodec {
            tpid_wide: TPID_COMPACT_DEFAULT,
            ..CsigCodec::default()
        };
        assert!(same_tpid.validate().is_err());
        assert!(CsigCodec::default().validate().is_ok());
    }

    #[test]
    fn custom_layout_positions() {
        // T3 d1 S5 LM6 leaves bit 0 reserved.
        let codec = CsigCodec {
            compact: CsigLayout {
                t_bits: 3,
                s_bits: 5,
                lm_bits: 6,
                d_bit: true,
            },
            ..CsigCodec::default()
        };
        let repr = CsigRepr {
            size: TagSize::Compact,
            sig_type: 7,
            value: 0,
            locator: 0x3f,
            d: false,
        };
        let mut buf = [0u8; 4];
        codec.emit(&repr, &mut buf).unwrap();
        // 111 0 00000 111111 0 -> 1110 0000 0111 1110
        assert_eq!(buf, [0x99, 0x00, 0xe0, 0x7e]);
    }

    fn layout_strategy(size: TagSize) -> impl Strategy<Value = CsigLayout> {
        let avail = size.body_bits();
        (any::<bool>(), 0u32..=8).prop_flat_map(move |(d_bit, t)| {
            let left = avail - t - d_bit as u32;
            (Just(d_bit), Just(t), 0..=left.min(32)).prop_flat_map(move |(d_bit, t, s)| {
                let left = left - s;
                (0..=left.min(16)).prop_map(move |lm| CsigLayout {
                    t_bits: t as u8,
                    s_bits: s as u8,
                    lm_bits: lm as u8,
                    d_bit,
                })
            })
        })
    }

    fn mask(v: u64, bits: u8) -> u64 {
        if bits >= 64 {
            v
        } else {
            v & ((1u64 << bits) - 1)
        }
    }

    fn round_trip(size: TagSize, lay: CsigLayout, t: u8, s: u32, lm: u16, d: bool) {
        let mut codec = CsigCodec::default();
        match size {
            TagSize::Compact => codec.compact = lay,
            TagSize::Wide => codec.wide = lay,
        }
        assert_eq!(lay.validate(size), Ok(()));
        let repr = CsigRepr {
            size,
            sig_type: mask(t.into(), lay.t_bits) as u8,
            value: mask(s.into(), lay.s_bits) as u32,
            locator: mask(lm.into(), lay.lm_bits) as u16,
            d: d && lay.d_bit,
        };
        let mut buf = [0u8; 8];
        let n = codec.emit(&repr, &mut buf).unwrap();
        assert_eq!(n, size.tag_len());
        assert_eq!(codec.parse(&buf[..n]), Ok((repr, n)));
    }

    proptest! {
        #[test]
        fn compact_round_trip(lay in layout_strategy(TagSize::Compact),
                              t: u8, s: u32, lm: u16, d: bool) {
            round_trip(TagSize::Compact, lay, t, s, lm, d);
        }

        #[test]
        fn wide_round_trip(lay in layout_strategy(TagSize::Wide),
                           t: u8, s: u32, lm: u16, d: bool) {
            round_trip(TagSize::Wide, lay, t, s, lm, d);
        }

        #[test]
        fn default_layouts_round_trip(t in 0u8..8, s in 0u32..32, lm in 0u16..128, d: bool,
                                      tw in 0u8..16, sw in 0u32..(1 << 20), lmw: u16, dw: bool) {
            round_trip(TagSize::Compact, CsigLayout::compact_default(), t, s, lm, d);
            round_trip(TagSize::Wide, CsigLayout::wide_default(), tw, sw, lmw, dw);
        }

        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..12),
                              lay in layout_strategy(TagSize::Compact)) {
            let codec = CsigCodec { compact: lay, ..CsigCodec::default() };
            let _ = codec.parse(&bytes);
            let _ = CsigCodec::default().parse(&bytes);
        }
    }
}
