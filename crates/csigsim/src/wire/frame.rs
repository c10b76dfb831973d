/*! A RoCEv2-like frame: Ethernet / optional CSIG tag / IPv4 / UDP 4791 / BTH / [AETH].

Choices, so that Wireshark's own dissectors show sensible values:

- Data packets use the RC SEND_ONLY opcode (0x04); ACKs and NACKs use RC
  ACKNOWLEDGE (0x11) with an AETH. An ACK's syndrome is [`SYNDROME_ACK`]
  (0x1f: ACK with the "no credit count" value RoCE NICs send); a NACK's is
  [`nak_syndrome`]`(code)` = 0x60 | code (code 0 is "PSN sequence error").
  The AETH is present exactly for the opcodes that carry one (RC RDMA READ
  response first/last/only and RC ACKNOWLEDGE); other extension headers
  (RETH, DETH, ImmDt, AtomicAckETH) are not modelled.
- `payload_len` is the InfiniBand payload after the BTH/AETH. The 4-byte ICRC
  trailer is counted in the IPv4 and UDP lengths, so those are the lengths a
  real RoCEv2 frame of that payload has; pad bytes are not modelled (PadCnt
  0), so sizes equal the simulator's. Neither payload nor ICRC is written.
- Constant fields: DSCP 0, IPv4 id 0, DF set, TTL 64, UDP checksum 0 (allowed
  for IPv4 and what RoCEv2 NICs send), P_Key 0xffff (default partition),
  BTH SE/M/PadCnt/TVer 0, reserved fields 0. [`FrameRepr::parse`] accepts any
  value in them; it rejects what it cannot represent (another EtherType, IP
  version, IHL, protocol, destination port, fragments) and bad checksums.
- Addresses: [`mac_of_node`] and [`ip_of_host`] derive them from the engine's
  indices so a capture can be read without a lookup table.
*/

use super::{CsigCodec, CsigRepr, WireError};

pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// The IANA port of RoCEv2, where Wireshark looks for a BTH.
pub const ROCEV2_UDP_PORT: u16 = 4791;
/// RC SEND Only: one whole message in one packet (our data packets).
pub const OPCODE_RC_SEND_ONLY: u8 = 0x04;
/// RC Acknowledge: BTH + AETH (our ACKs and NACKs).
pub const OPCODE_RC_ACK: u8 = 0x11;
/// AETH syndrome of a positive ACK: type 000, credit count 11111 (invalid).
pub const SYNDROME_ACK: u8 = 0x1f;
/// RoCEv2 congestion notification packet (CNP) opcode; it has no AETH.
pub const OPCODE_CNP: u8 = 0x81;
/// Invariant CRC at the end of every RoCEv2 packet: counted, never written.
pub const ICRC_LEN: usize = 4;
/// The longest header [`FrameRepr::emit_headers`] writes: Ethernet with a
/// wide tag (22), IPv4 (20), UDP (8), BTH (12), AETH (4).
pub const MAX_HEADER_LEN: usize = 66;

const IPV4_VERSION_IHL: u8 = 0x45;
const IPV4_FLAG_DF: u16 = 0x4000;
const IPV4_TTL: u8 = 64;
const IP_PROTO_UDP: u8 = 17;
const BTH_PKEY: u16 = 0xffff;
const BTH_ACK_REQ: u8 = 0x80;

/// The AETH syndrome of a NACK with a 5-bit NAK code.
pub const fn nak_syndrome(code: u8) -> u8 {
    0x60 | (code & 0x1f)
}

/// Byte offsets of every header field, each relative to its header's start.
pub mod field {
    pub mod eth {
        use core::ops::Range;
        pub const DST: Range<usize> = 0..6;
        pub const SRC: Range<usize> = 6..12;
        /// The EtherType of an untagged frame, the TPID of a tagged one.
        pub const TYPE_OR_TPID: Range<usize> = 12..14;
        /// MACs plus the final EtherType; a CSIG tag adds to this.
        pub const HEADER_LEN: usize = 14;
        pub const ETHERTYPE_LEN: usize = 2;
    }

    pub mod ipv4 {
        use core::ops::Range;
        pub const VER_IHL: usize = 0;
        pub const DSCP_ECN: usize = 1;
        pub const LENGTH: Range<usize> = 2..4;
        pub const IDENT: Range<usize> = 4..6;
        pub const FLAGS_FRAG: Range<usize> = 6..8;
        pub const TTL: usize = 8;
        pub const PROTOCOL: usize = 9;
        pub const CHECKSUM: Range<usize> = 10..12;
        pub const SRC: Range<usize> = 12..16;
        pub const DST: Range<usize> = 16..20;
        pub const HEADER_LEN: usize = 20;
    }

    pub mod udp {
        use core::ops::Range;
        pub const SRC_PORT: Range<usize> = 0..2;
        pub const DST_PORT: Range<usize> = 2..4;
        pub const LENGTH: Range<usize> = 4..6;
        pub const CHECKSUM: Range<usize> = 6..8;
        pub const HEADER_LEN: usize = 8;
    }

    /// InfiniBand Base Transport Header.
    pub mod bth {
        use core::ops::Range;
        pub const OPCODE: usize = 0;
        /// SE(1) | MigReq(1) | PadCnt(2) | TVer(4).
        pub const FLAGS: usize = 1;
        pub const PKEY: Range<usize> = 2..4;
        pub const RESERVED: usize = 4;
        pub const DEST_QP: Range<usize> = 5..8;
        /// AckReq(1) | reserved(7).
        pub const ACK_REQ: usize = 8;
        pub const PSN: Range<usize> = 9..12;
        pub const HEADER_LEN: usize = 12;
    }

    /// InfiniBand ACK Extended Transport Header.
    pub mod aeth {
        use core::ops::Range;
        pub const SYNDROME: usize = 0;
        pub const MSN: Range<usize> = 1..4;
        pub const HEADER_LEN: usize = 4;
    }
}

use field::{aeth, bth, eth, ipv4, udp};

/// Whether a BTH opcode is followed by an AETH.
const fn has_aeth(opcode: u8) -> bool {
    // RC RDMA READ response first (0x0d), last (0x0f), only (0x10); RC ACK (0x11).
    matches!(opcode, 0x0d | 0x0f | 0x10 | 0x11)
}

/// The locally administered MAC of a node: 02:00 followed by the index.
pub const fn mac_of_node(node: u32) -> [u8; 6] {
    let b = node.to_be_bytes();
    [0x02, 0x00, b[0], b[1], b[2], b[3]]
}

/// The IPv4 address of a host: 10.x.y.z with x.y.z the index's low 24 bits
/// (host 5 is 10.0.0.5). Indices of 2^24 and more alias.
pub const fn ip_of_host(host: u32) -> [u8; 4] {
    let b = host.to_be_bytes();
    [10, b[1], b[2], b[3]]
}

/// The ones' complement of the ones' complement sum of 16-bit words (RFC 1071).
fn internet_checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = data
        .chunks(2)
        .map(|w| u16::from_be_bytes([w[0], w.get(1).copied().unwrap_or(0)]) as u32)
        .sum();
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}

fn be24(b: &[u8]) -> u32 {
    u32::from_be_bytes([0, b[0], b[1], b[2]])
}

fn put24(out: &mut [u8], v: u32) {
    out.copy_from_slice(&v.to_be_bytes()[1..]);
}

/// `buf[start..start + len]`, or a `Truncated` error.
fn need(buf: &[u8], start: usize, len: usize) -> Result<&[u8], WireError> {
    buf.get(start..start + len).ok_or(WireError::Truncated {
        needed: start + len,
        have: buf.len(),
    })
}

fn check_width(field: &'static str, value: u32, bits: u8) -> Result<(), WireError> {
    if value >> bits != 0 {
        return Err(WireError::FieldOverflow {
            field,
            value: value.into(),
            bits,
        });
    }
    Ok(())
}

/// The header fields of one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FrameRepr {
    pub dst_mac: [u8; 6],
    pub src_mac: [u8; 6],
    pub csig: Option<CsigRepr>,
    /// The IPv4 ECN codepoint (2 bits; 3 is CE).
    pub ecn: u8,
    pub src_ip: [u8; 4],
    pub dst_ip: [u8; 4],
    /// UDP source port (the flow entropy of RoCEv2).
    pub src_port: u16,
    /// BTH opcode; see the module docs.
    pub opcode: u8,
    /// Destination queue pair (24 bits).
    pub dest_qp: u32,
    /// Packet sequence number (24 bits).
    pub psn: u32,
    /// The BTH AckReq bit.
    pub ack_req: bool,
    /// AETH `(syndrome, MSN)`, MSN 24 bits; present exactly for ACK opcodes.
    pub aeth: Option<(u8, u32)>,
    /// InfiniBand payload bytes (not written; ICRC not included).
    pub payload_len: u32,
}

impl FrameRepr {
    fn tag_len(&self) -> usize {
        self.csig.map_or(0, |c| c.size.tag_len())
    }

    fn aeth_len(&self) -> usize {
        if self.aeth.is_some() {
            aeth::HEADER_LEN
        } else {
            0
        }
    }

    /// Bytes of every header, Ethernet through AETH: what
    /// [`emit_headers`](Self::emit_headers) writes.
    pub fn header_len(&self, _codec: &CsigCodec) -> usize {
        eth::HEADER_LEN
            + self.tag_len()
            + ipv4::HEADER_LEN
            + udp::HEADER_LEN
            + bth::HEADER_LEN
            + self.aeth_len()
    }

    /// Bytes of the whole frame without the Ethernet FCS: headers, payload and
    /// ICRC. This is the `orig_len` of a capture.
    pub fn frame_len(&self, codec: &CsigCodec) -> usize {
        (self.header_len(codec) + ICRC_LEN).saturating_add(self.payload_len as usize)
    }

    /// The IPv4 total length, checked to fit 16 bits.
    fn ip_total_len(&self) -> Result<u16, WireError> {
        let total =
            (ipv4::HEADER_LEN + udp::HEADER_LEN + bth::HEADER_LEN + self.aeth_len() + ICRC_LEN)
                as u64
                + self.payload_len as u64;
        u16::try_from(total).map_err(|_| WireError::FieldOverflow {
            field: "ipv4 total length",
            value: total,
            bits: 16,
        })
    }

    /// Writes every header to the start of `buf` and returns their length.
    /// Lengths count the full payload and ICRC, which are not written. On
    /// error nothing is written.
    pub fn emit_headers(&self, codec: &CsigCodec, buf: &mut [u8]) -> Result<usize, WireError> {
        check_width("ecn", self.ecn.into(), 2)?;
        check_width("dest_qp", self.dest_qp, 24)?;
        check_width("psn", self.psn, 24)?;
        if let Some((_, msn)) = self.aeth {
            check_width("msn", msn, 24)?;
        }
        if self.aeth.is_some() != has_aeth(self.opcode) {
            return Err(WireError::Inconsistent(
                "an AETH must be present exactly for acknowledge opcodes",
            ));
        }
        let total = self.ip_total_len()?;
        let len = self.header_len(codec);
        let Some(out) = buf.get_mut(..len) else {
            return Err(WireError::Truncated {
                needed: len,
                have: buf.len(),
            });
        };

        // The tag goes first: it is the only part that can still fail.
        let mut off = eth::TYPE_OR_TPID.start;
        if let Some(tag) = &self.csig {
            off += codec.emit(tag, &mut out[off..])?;
        }
        out[eth::DST].copy_from_slice(&self.dst_mac);
        out[eth::SRC].copy_from_slice(&self.src_mac);
        out[off..off + eth::ETHERTYPE_LEN].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        off += eth::ETHERTYPE_LEN;

        let ip = &mut out[off..off + ipv4::HEADER_LEN];
        ip[ipv4::VER_IHL] = IPV4_VERSION_IHL;
        ip[ipv4::DSCP_ECN] = self.ecn; // DSCP 0
        ip[ipv4::LENGTH].copy_from_slice(&total.to_be_bytes());
        ip[ipv4::IDENT].copy_from_slice(&[0, 0]);
        ip[ipv4::FLAGS_FRAG].copy_from_slice(&IPV4_FLAG_DF.to_be_bytes());
        ip[ipv4::TTL] = IPV4_TTL;
        ip[ipv4::PROTOCOL] = IP_PROTO_UDP;
        ip[ipv4::CHECKSUM].copy_from_slice(&[0, 0]);
        ip[ipv4::SRC].copy_from_slice(&self.src_ip);
        ip[ipv4::DST].copy_from_slice(&self.dst_ip);
        let sum = internet_checksum(ip);
        ip[ipv4::CHECKSUM].copy_from_slice(&sum.to_be_bytes());
        off += ipv4::HEADER_LEN;

        let u = &mut out[off..off + udp::HEADER_LEN];
        u[udp::SRC_PORT].copy_from_slice(&self.src_port.to_be_bytes());
        u[udp::DST_PORT].copy_from_slice(&ROCEV2_UDP_PORT.to_be_bytes());
        // Fits: total <= 0xffff was checked and the UDP length is 20 less.
        let udp_len = total - ipv4::HEADER_LEN as u16;
        u[udp::LENGTH].copy_from_slice(&udp_len.to_be_bytes());
        u[udp::CHECKSUM].copy_from_slice(&[0, 0]);
        off += udp::HEADER_LEN;

        let b = &mut out[off..off + bth::HEADER_LEN];
        b[bth::OPCODE] = self.opcode;
        b[bth::FLAGS] = 0;
        b[bth::PKEY].copy_from_slice(&BTH_PKEY.to_be_bytes());
        b[bth::RESERVED] = 0;
        put24(&mut b[bth::DEST_QP], self.dest_qp);
        b[bth::ACK_REQ] = if self.ack_req { BTH_ACK_REQ } else { 0 };
        put24(&mut b[bth::PSN], self.psn);
        off += bth::HEADER_LEN;

        if let Some((syndrome, msn)) = self.aeth {
            let a = &mut out[off..off + aeth::HEADER_LEN];
            a[aeth::SYNDROME] = syndrome;
            put24(&mut a[aeth::MSN], msn);
            off += aeth::HEADER_LEN;
        }
        debug_assert_eq!(off, len);
        Ok(len)
    }

    /// Parses the headers at the start of `buf`. The payload need not be
    /// present (captures hold headers only); lengths must be consistent.
    pub fn parse(codec: &CsigCodec, buf: &[u8]) -> Result<FrameRepr, WireError> {
        let e = need(buf, 0, eth::TYPE_OR_TPID.end)?;
        let mut dst_mac = [0u8; 6];
        let mut src_mac = [0u8; 6];
        dst_mac.copy_from_slice(&e[eth::DST]);
        src_mac.copy_from_slice(&e[eth::SRC]);
        let mut off = eth::TYPE_OR_TPID.start;
        let mut csig = None;
        if codec.size_of_tpid(be16(&e[eth::TYPE_OR_TPID])).is_some() {
            let (tag, n) = codec.parse(&buf[off..])?;
            csig = Some(tag);
            off += n;
        }
        let ethertype = be16(need(buf, off, eth::ETHERTYPE_LEN)?);
        if ethertype != ETHERTYPE_IPV4 {
            return Err(WireError::Unsupported {
                field: "ethertype",
                value: ethertype.into(),
            });
        }
        off += eth::ETHERTYPE_LEN;

        let ip = need(buf, off, ipv4::HEADER_LEN)?;
        let version = ip[ipv4::VER_IHL] >> 4;
        if version != 4 {
            return Err(WireError::Unsupported {
                field: "ip version",
                value: version.into(),
            });
        }
        let ihl = ip[ipv4::VER_IHL] & 0x0f;
        if ihl != 5 {
            return Err(WireError::Unsupported {
                field: "ipv4 ihl",
                value: ihl.into(),
            });
        }
        // A correct header sums to 0xffff, so its checksum is 0.
        if internet_checksum(ip) != 0 {
            let mut zeroed = [0u8; ipv4::HEADER_LEN];
            zeroed.copy_from_slice(ip);
            zeroed[ipv4::CHECKSUM].copy_from_slice(&[0, 0]);
            return Err(WireError::BadChecksum {
                found: be16(&ip[ipv4::CHECKSUM]),
                expected: internet_checksum(&zeroed),
            });
        }
        // MF set or a nonzero offset: a fragment, which we never emit.
        let frag = be16(&ip[ipv4::FLAGS_FRAG]) & 0x3fff;
        if frag != 0 {
            return Err(WireError::Unsupported {
                field: "ipv4 fragment",
                value: frag.into(),
            });
        }
        if ip[ipv4::PROTOCOL] != IP_PROTO_UDP {
            return Err(WireError::Unsupported {
                field: "ip protocol",
                value: ip[ipv4::PROTOCOL].into(),
            });
        }
        let ecn = ip[ipv4::DSCP_ECN] & 0x03;
        let total = be16(&ip[ipv4::LENGTH]) as usize;
        let mut src_ip = [0u8; 4];
        let mut dst_ip = [0u8; 4];
        src_ip.copy_from_slice(&ip[ipv4::SRC]);
        dst_ip.copy_from_slice(&ip[ipv4::DST]);
        off += ipv4::HEADER_LEN;

        let u = need(buf, off, udp::HEADER_LEN)?;
        let dst_port = be16(&u[udp::DST_PORT]);
        if dst_port != ROCEV2_UDP_PORT {
            return Err(WireError::Unsupported {
                field: "udp dst port",
                value: dst_port.into(),
            });
        }
        let src_port = be16(&u[udp::SRC_PORT]);
        let udp_len = be16(&u[udp::LENGTH]) as usize;
        if total < ipv4::HEADER_LEN || udp_len != total - ipv4::HEADER_LEN {
            return Err(WireError::Inconsistent(
                "UDP length is not IPv4 total length - 20",
            ));
        }
        off += udp::HEADER_LEN;

        let b = need(buf, off, bth::HEADER_LEN)?;
        let opcode = b[bth::OPCODE];
        let dest_qp = be24(&b[bth::DEST_QP]);
        let ack_req = b[bth::ACK_REQ] & BTH_ACK_REQ != 0;
        let psn = be24(&b[bth::PSN]);
        off += bth::HEADER_LEN;

        let mut aeth = None;
        if has_aeth(opcode) {
            let a = need(buf, off, aeth::HEADER_LEN)?;
            aeth = Some((a[aeth::SYNDROME], be24(&a[aeth::MSN])));
        }
        let fixed =
            udp::HEADER_LEN + bth::HEADER_LEN + aeth.map_or(0, |_| aeth::HEADER_LEN) + ICRC_LEN;
        let payload_len = udp_len.checked_sub(fixed).ok_or(WireError::Inconsistent(
            "UDP length too short for BTH, AETH and ICRC",
        ))? as u32;

        Ok(FrameRepr {
            dst_mac,
            src_mac,
            csig,
            ecn,
            src_ip,
            dst_ip,
            src_port,
            opcode,
            dest_qp,
            psn,
            ack_req,
            aeth,
            payload_len,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{CsigLayout, TagSize};
    use proptest::prelude::*;

    fn data_frame() -> FrameRepr {
        FrameRepr {
            dst_mac: mac_of_node(2),
            src_mac: mac_of_node(1),
            csig: Some(CsigRepr {
                size: TagSize::Compact,
                sig_type: 2,
                value: 0x15,
                locator: 0x5a,
                d: true,
            }),
            ecn: 2,
            src_ip: ip_of_host(1),
            dst_ip: ip_of_host(2),
            src_port: 0xc000,
            opcode: OPCODE_RC_SEND_ONLY,
            dest_qp: 0x123,
            psn: 0xabcd,
            ack_req: true,
            aeth: None,
            payload_len: 1000,
        }
    }

    #[test]
    fn data_frame_bytes() {
        let codec = CsigCodec::default();
        let f = data_frame();
        #[rustfmt::skip]
        let expected: [u8; 58] = [
            // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01
            0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
            0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
            // CSIG compact: TPID 0x9900, T=2 d=1 S=0x15 LM=0x5a
            0x99, 0x00, 0x5a, 0xda,
            // EtherType IPv4
            0x08, 0x00,
            // IPv4. Total length 20+8+12+1000+4 = 1044 = 0x0414.
            // Checksum by hand: 4502+0414+0000+4000+4011+0000+0a00+0001+0a00+0002
            // = 0xDD2A (no carry), so ~0xDD2A = 0x22D5.
            0x45, 0x02, 0x04, 0x14, 0x00, 0x00, 0x40, 0x00,
            0x40, 0x11, 0x22, 0xd5,
            0x0a, 0x00, 0x00, 0x01,
            0x0a, 0x00, 0x00, 0x02,
            // UDP: 49152 -> 4791 (0x12b7), length 1024, checksum 0
            0xc0, 0x00, 0x12, 0xb7, 0x04, 0x00, 0x00, 0x00,
            // BTH: SEND_ONLY, flags 0, P_Key ffff, rsvd, QP 0x000123, A=1, PSN 0x00abcd
            0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0x01, 0x23,
            0x80, 0x00, 0xab, 0xcd,
        ];
        assert_eq!(f.header_len(&codec), 58);
        assert_eq!(f.frame_len(&codec), 58 + 1000 + 4);
        let mut buf = [0u8; 64];
        assert_eq!(f.emit_headers(&codec, &mut buf), Ok(58));
        assert_eq!(buf[..58], expected);
        assert_eq!(FrameRepr::parse(&codec, &expected), Ok(f));
    }

    #[test]
    fn untagged_ack_bytes() {
        let codec = CsigCodec::default();
        let f = FrameRepr {
            dst_mac: mac_of_node(1),
            src_mac: mac_of_node(2),
            csig: None,
            ecn: 0,
            src_ip: ip_of_host(2),
            dst_ip: ip_of_host(1),
            src_port: 0xc000,
            opcode: OPCODE_RC_ACK,
            dest_qp: 0x123,
            psn: 0xabcd,
            ack_req: false,
            aeth: Some((SYNDROME_ACK, 7)),
            payload_len: 0,
        };
        #[rustfmt::skip]
        let expected: [u8; 58] = [
            0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
            0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
            0x08, 0x00,
            // Total length 20+8+12+4+0+4 = 48. Checksum by hand:
            // 4500+0030+0000+4000+4011+0000+0a00+0002+0a00+0001 = 0xD944,
            // ~0xD944 = 0x26BB.
            0x45, 0x00, 0x00, 0x30, 0x00, 0x00, 0x40, 0x00,
            0x40, 0x11, 0x26, 0xbb,
            0x0a, 0x00, 0x00, 0x02,
            0x0a, 0x00, 0x00, 0x01,
            0xc0, 0x00, 0x12, 0xb7, 0x00, 0x1c, 0x00, 0x00,
            0x11, 0x00, 0xff, 0xff, 0x00, 0x00, 0x01, 0x23,
            0x00, 0x00, 0xab, 0xcd,
            // AETH: syndrome 0x1f, MSN 7
            0x1f, 0x00, 0x00, 0x07,
        ];
        let mut buf = [0u8; 58];
        assert_eq!(f.emit_headers(&codec, &mut buf), Ok(58));
        assert_eq!(buf, expected);
        assert_eq!(FrameRepr::parse(&codec, &expected), Ok(f));
    }

    #[test]
    fn max_header_len() {
        let f = FrameRepr {
            csig: Some(CsigRepr {
                size: TagSize::Wide,
                ..data_frame().csig.unwrap()
            }),
            opcode: OPCODE_RC_ACK,
            aeth: Some((SYNDROME_ACK, 0)),
            ..data_frame()
        };
        assert_eq!(f.header_len(&CsigCodec::default()), MAX_HEADER_LEN);
    }

    #[test]
    fn address_helpers() {
        assert_eq!(mac_of_node(0x0102_0304), [2, 0, 1, 2, 3, 4]);
        assert_eq!(ip_of_host(5), [10, 0, 0, 5]);
        assert_eq!(ip_of_host(0x01_0203), [10, 1, 2, 3]);
        assert_eq!(nak_syndrome(0), 0x60);
        assert_eq!(nak_syndrome(3), 0x63);
    }

    #[test]
    fn emit_errors_leave_buffer_untouched() {
        let codec = CsigCodec::default();
        let mut buf = [0xeeu8; 80];
        let bad = [
            FrameRepr {
                ecn: 4,
                ..data_frame()
            },
            FrameRepr {
                psn: 1 << 24,
                ..data_frame()
            },
            FrameRepr {
                dest_qp: 1 << 24,
                ..data_frame()
            },
            FrameRepr {
                aeth: Some((0, 0)),
                ..data_frame()
            },
            FrameRepr {
                payload_len: 65536,
                ..data_frame()
            },
            FrameRepr {
                csig: Some(CsigRepr {
                    value: 32,
                    ..data_frame().csig.unwrap()
                }),
                ..data_frame()
            },
        ];
        for f in bad {
            assert!(f.emit_headers(&codec, &mut buf).is_err(), "{f:?}");
            assert_eq!(buf, [0xee; 80]);
        }
        assert_eq!(
            data_frame().emit_headers(&codec, &mut buf[..57]),
            Err(WireError::Truncated {
                needed: 58,
                have: 57
            })
        );
        // The largest payload that fits a 16-bit IPv4 length.
        let max = FrameRepr {
            payload_len: 65535 - 44,
            ..data_frame()
        };
        assert!(max.emit_headers(&codec, &mut buf).is_ok());
    }

    #[test]
    fn parse_rejects() {
        let codec = CsigCodec::default();
        let mut buf = [0u8; 58];
        data_frame().emit_headers(&codec, &mut buf).unwrap();
        let mut bad = buf;
        bad[26] ^= 1; // TTL: the checksum no longer verifies
        assert!(matches!(
            FrameRepr::parse(&codec, &bad),
            Err(WireError::BadChecksum { found: 0x22d5, .. })
        ));
        let mut bad = buf;
        bad[40..42].copy_from_slice(&4792u16.to_be_bytes());
        assert!(matches!(
            FrameRepr::parse(&codec, &bad),
            Err(WireError::Unsupported {
                field: "udp dst port",
                ..
            })
        ));
        let mut bad = buf;
        bad[16..18].copy_from_slice(&0x86ddu16.to_be_bytes());
        assert_eq!(
            FrameRepr::parse(&codec, &bad),
            Err(WireError::Unsupported {
                field: "ethertype",
                value: 0x86dd
            })
        );
        for n in 0..58 {
            assert!(FrameRepr::parse(&codec, &buf[..n]).is_err(), "{n}");
        }
    }

    fn csig_strategy() -> impl Strategy<Value = Option<CsigRepr>> {
        prop_oneof![
            Just(None),
            (0u8..8, 0u32..32, 0u16..128, any::<bool>()).prop_map(|(t, s, lm, d)| Some(CsigRepr {
                size: TagSize::Compact,
                sig_type: t,
                value: s,
                locator: lm,
                d
            })),
            (0u8..16, 0u32..(1 << 20), any::<u16>(), any::<bool>()).prop_map(|(t, s, lm, d)| {
                Some(CsigRepr {
                    size: TagSize::Wide,
                    sig_type: t,
                    value: s,
                    locator: lm,
                    d,
                })
            }),
        ]
    }

    prop_compose! {
        fn frame_strategy()(
            dst in any::<u32>(), src in any::<u32>(), csig in csig_strategy(), ecn in 0u8..4,
            sip in any::<[u8; 4]>(), dip in any::<[u8; 4]>(), src_port: u16,
            ack in any::<bool>(), data_op in prop_oneof![Just(OPCODE_RC_SEND_ONLY), Just(0u8), Just(0x0e)],
            dest_qp in 0u32..(1 << 24), psn in 0u32..(1 << 24), ack_req: bool,
            syndrome: u8, msn in 0u32..(1 << 24), payload_len in 0u32..=(65535 - 48),
        ) -> FrameRepr {
            FrameRepr {
                dst_mac: mac_of_node(dst), src_mac: mac_of_node(src), csig, ecn,
                src_ip: sip, dst_ip: dip, src_port,
                opcode: if ack { OPCODE_RC_ACK } else { data_op },
                dest_qp, psn, ack_req,
                aeth: ack.then_some((syndrome, msn)),
                payload_len,
            }
        }
    }

    proptest! {
        #[test]
        fn frame_round_trip(f in frame_strategy()) {
            let codec = CsigCodec::default();
            let mut buf = [0u8; 80];
            let n = f.emit_headers(&codec, &mut buf).unwrap();
            prop_assert_eq!(n, f.header_len(&codec));
            prop_assert_eq!(FrameRepr::parse(&codec, &buf[..n]), Ok(f));
        }

        #[test]
        fn frame_round_trip_other_layout(f in frame_strategy()) {
            // A UEC-slides style codec with other TPIDs: T3 d S5 LM6, T4 S20 LM15 d.
            let codec = CsigCodec {
                compact: CsigLayout { t_bits: 3, s_bits: 5, lm_bits: 6, d_bit: true },
                wide: CsigLayout { t_bits: 4, s_bits: 20, lm_bits: 15, d_bit: true },
                tpid_compact: 0x88b5,
                tpid_wide: 0x88b6,
            };
            let f = FrameRepr {
                csig: f.csig.map(|c| CsigRepr { locator: c.locator & 0x3f, ..c }),
                ..f
            };
            let mut buf = [0u8; 80];
            let n = f.emit_headers(&codec, &mut buf).unwrap();
            prop_assert_eq!(FrameRepr::parse(&codec, &buf[..n]), Ok(f));
        }

        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..90)) {
            let _ = FrameRepr::parse(&CsigCodec::default(), &bytes);
        }

        #[test]
        fn parse_never_panics_on_mutations(f in frame_strategy(), at in 0usize..80, x in 1u8..=255,
                                           cut in 0usize..80) {
            let codec = CsigCodec::default();
            let mut buf = [0u8; 80];
            let n = f.emit_headers(&codec, &mut buf).unwrap();
            buf[at % n] ^= x;
            let _ = FrameRepr::parse(&codec, &buf[..cut.min(n)]);
            let _ = FrameRepr::parse(&codec, &buf[..n]);
        }
    }
}
