/*! Classic pcap capture files with nanosecond timestamps.

The format is the libpcap savefile (`pcap-savefile(5)`): a 24-byte global
header, then per packet a 16-byte record header and the captured bytes. We
write the nanosecond magic `0xa1b23c4d` (microseconds are too coarse at
400-800 Gb/s), version 2.4, `LINKTYPE_ETHERNET`, little-endian always so the
bytes do not depend on the host. The simulator's picosecond clock is
truncated to nanoseconds.
*/

use super::{CsigCodec, FrameRepr, WireError, MAX_HEADER_LEN};
use std::io::{self, Write};

/// Magic of a nanosecond-resolution pcap file.
pub const PCAP_MAGIC_NS: u32 = 0xa1b2_3c4d;
/// Magic of a microsecond-resolution pcap file (read only).
const PCAP_MAGIC_US: u32 = 0xa1b2_c3d4;
pub const LINKTYPE_ETHERNET: u32 = 1;
/// Enough for every header of a tagged RoCEv2 frame, with room to spare.
pub const DEFAULT_SNAPLEN: u32 = 256;
const VERSION_MAJOR: u16 = 2;
const VERSION_MINOR: u16 = 4;
const PS_PER_NS: u64 = 1_000;
const NS_PER_S: u64 = 1_000_000_000;

/// Byte offsets in the global header and in each record header.
pub mod field {
    use core::ops::Range;

    pub const MAGIC: Range<usize> = 0..4;
    pub const VERSION_MAJOR: Range<usize> = 4..6;
    pub const VERSION_MINOR: Range<usize> = 6..8;
    pub const THISZONE: Range<usize> = 8..12;
    pub const SIGFIGS: Range<usize> = 12..16;
    pub const SNAPLEN: Range<usize> = 16..20;
    pub const LINKTYPE: Range<usize> = 20..24;
    pub const GLOBAL_LEN: usize = 24;

    pub const TS_SEC: Range<usize> = 0..4;
    /// Nanoseconds (or microseconds, by the magic) within the second.
    pub const TS_FRAC: Range<usize> = 4..8;
    pub const INCL_LEN: Range<usize> = 8..12;
    pub const ORIG_LEN: Range<usize> = 12..16;
    pub const RECORD_LEN: usize = 16;
}

/// Writes a pcap stream to `W`. Each packet is two `write_all` calls, so
/// wrap files in a `BufWriter`.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    w: W,
    snaplen: u32,
    /// Reused frame buffer for `write_frame`.
    scratch: Vec<u8>,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the global header. `snaplen` caps the bytes stored per packet
    /// ([`DEFAULT_SNAPLEN`] keeps every header); it must not be 0.
    pub fn new(mut w: W, snaplen: u32) -> io::Result<Self> {
        if snaplen == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "pcap snaplen must be at least 1",
            ));
        }
        let mut h = [0u8; field::GLOBAL_LEN];
        h[field::MAGIC].copy_from_slice(&PCAP_MAGIC_NS.to_le_bytes());
        h[field::VERSION_MAJOR].copy_from_slice(&VERSION_MAJOR.to_le_bytes());
        h[field::VERSION_MINOR].copy_from_slice(&VERSION_MINOR.to_le_bytes());
        h[field::THISZONE].copy_from_slice(&0i32.to_le_bytes());
        h[field::SIGFIGS].copy_from_slice(&0u32.to_le_bytes());
        h[field::SNAPLEN].copy_from_slice(&snaplen.to_le_bytes());
        h[field::LINKTYPE].copy_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
        w.write_all(&h)?;
        Ok(PcapWriter {
            w,
            snaplen,
            scratch: Vec::new(),
        })
    }

    pub fn snaplen(&self) -> u32 {
        self.snaplen
    }

    /// The writer the records go to.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.w
    }

    pub fn get_ref(&self) -> &W {
        &self.w
    }

    /// Appends one packet seen at `ts_ps` picoseconds. `data` is the start
    /// of the frame (usually its headers), `orig_len` the frame's length on
    /// the wire; at most `snaplen` bytes of `data` are stored. `data` longer
    /// than `orig_len` is a caller bug and an `InvalidInput` error.
    pub fn write_packet(&mut self, ts_ps: u64, data: &[u8], orig_len: u32) -> io::Result<()> {
        if data.len() > orig_len as usize {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "pcap: {} captured bytes exceed orig_len {orig_len}",
                    data.len()
                ),
            ));
        }
        let incl = data.len().min(self.snaplen as usize);
        let ns = ts_ps / PS_PER_NS;
        // u64::MAX ps is about 1.8e7 s, so the seconds always fit a u32.
        let sec = (ns / NS_PER_S) as u32;
        let frac = (ns % NS_PER_S) as u32;
        let mut r = [0u8; field::RECORD_LEN];
        r[field::TS_SEC].copy_from_slice(&sec.to_le_bytes());
        r[field::TS_FRAC].copy_from_slice(&frac.to_le_bytes());
        r[field::INCL_LEN].copy_from_slice(&(incl as u32).to_le_bytes());
        r[field::ORIG_LEN].copy_from_slice(&orig_len.to_le_bytes());
        self.w.write_all(&r)?;
        self.w.write_all(&data[..incl])
    }

    /// Appends `frame` as one packet whose `orig_len` is the whole frame
    /// ([`FrameRepr::frame_len`]). Like a real capture it stores the first
    /// `min(snaplen, frame_len)` bytes: the headers, then zeros for payload
    /// and ICRC (a snaplen below the header length cuts the headers). A
    /// frame that cannot be emitted is an `InvalidInput` error.
    pub fn write_frame(
        &mut self,
        ts_ps: u64,
        codec: &CsigCodec,
        frame: &FrameRepr,
    ) -> io::Result<()> {
        // Emit first: it validates the lengths before we size anything by them.
        let mut headers = [0u8; MAX_HEADER_LEN];
        let hdr = frame
            .emit_headers(codec, &mut headers)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        // emit_headers bounds the IPv4 length to 16 bits, so this fits a u32.
        let orig = frame.frame_len(codec);
        let keep = orig.min(self.snaplen as usize).max(hdr);
        self.scratch.clear();
        self.scratch.extend_from_slice(&headers[..hdr]);
        self.scratch.resize(keep, 0);
        // Move the buffer out so write_packet can borrow self mutably.
        let data = std::mem::take(&mut self.scratch);
        let r = self.write_packet(ts_ps, &data, orig as u32);
        self.scratch = data;
        r
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    /// The underlying writer (not flushed).
    pub fn into_inner(self) -> W {
        self.w
    }
}

/// Reads a whole classic pcap file (either timestamp resolution, either byte
/// order) into `(timestamp ns, captured bytes, orig_len)` per packet. For
/// tests; it never panics on malformed input.
pub fn read_pcap(bytes: &[u8]) -> Result<Vec<(u64, Vec<u8>, u32)>, WireError> {
    let truncated = |needed: usize| WireError::Truncated {
        needed,
        have: bytes.len(),
    };
    let g = bytes
        .get(..field::GLOBAL_LEN)
        .ok_or(truncated(field::GLOBAL_LEN))?;
    let m = [g[0], g[1], g[2], g[3]];
    // The magic reads correctly in the writer's byte order.
    let (little, ns_per_frac) = match (u32::from_le_bytes(m), u32::from_be_bytes(m)) {
        (PCAP_MAGIC_NS, _) => (true, 1),
        (PCAP_MAGIC_US, _) => (true, 1_000),
        (_, PCAP_MAGIC_NS) => (false, 1),
        (_, PCAP_MAGIC_US) => (false, 1_000),
        _ => return Err(WireError::BadMagic(u32::from_le_bytes(m))),
    };
    let u32_at = |b: &[u8], r: core::ops::Range<usize>| {
        let a = [b[r.start], b[r.start + 1], b[r.start + 2], b[r.start + 3]];
        if little {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        }
    };
    let mut out = Vec::new();
    let mut off = field::GLOBAL_LEN;
    while off < bytes.len() {
        let end = off + field::RECORD_LEN;
        let r = bytes.get(off..end).ok_or(truncated(end))?;
        let sec = u32_at(r, field::TS_SEC) as u64;
        let frac = u32_at(r, field::TS_FRAC) as u64;
        let incl = u32_at(r, field::INCL_LEN) as usize;
        let orig = u32_at(r, field::ORIG_LEN);
        // Check against what is left before allocating anything.
        let data = bytes
            .get(end..)
            .and_then(|rest| rest.get(..incl))
            .ok_or(truncated(end.saturating_add(incl)))?;
        out.push((sec * NS_PER_S + frac * ns_per_frac, data.to_vec(), orig));
        off = end + incl;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn header_and_records_bytes() {
        let mut w = PcapWriter::new(Vec::new(), 8).unwrap();
        // 1.500000123456 s: the 456 ps are truncated.
        w.write_packet(1_500_000_123_456, &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 1000)
            .unwrap();
        w.write_packet(999, &[0xab], 1).unwrap();
        let bytes = w.into_inner();
        #[rustfmt::skip]
        let expected: Vec<u8> = vec![
            0x4d, 0x3c, 0xb2, 0xa1, // magic, little-endian
            0x02, 0x00, 0x04, 0x00, // version 2.4
            0, 0, 0, 0, 0, 0, 0, 0, // thiszone, sigfigs
            0x08, 0x00, 0x00, 0x00, // snaplen 8
            0x01, 0x00, 0x00, 0x00, // LINKTYPE_ETHERNET
            // record 1: 1 s, 500000123 ns = 0x1dcd657b, incl 8, orig 1000
            0x01, 0x00, 0x00, 0x00, 0x7b, 0x65, 0xcd, 0x1d,
            0x08, 0x00, 0x00, 0x00, 0xe8, 0x03, 0x00, 0x00,
            1, 2, 3, 4, 5, 6, 7, 8,
            // record 2: 0 s, 0 ns, incl 1, orig 1
            0, 0, 0, 0, 0, 0, 0, 0,
            0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
            0xab,
        ];
        assert_eq!(bytes, expected);
        let pkts = read_pcap(&bytes).unwrap();
        assert_eq!(
            pkts,
            vec![
                (1_500_000_123, vec![1, 2, 3, 4, 5, 6, 7, 8], 1000),
                (0, vec![0xab], 1)
            ]
        );
    }

    #[test]
    fn writer_rejects_bad_input() {
        assert!(PcapWriter::new(Vec::new(), 0).is_err());
        let mut w = PcapWriter::new(Vec::new(), DEFAULT_SNAPLEN).unwrap();
        assert!(w.write_packet(0, &[0; 10], 9).is_err());
        let bad = FrameRepr {
            dst_mac: [0; 6],
            src_mac: [0; 6],
            csig: None,
            ecn: 9,
            src_ip: [0; 4],
            dst_ip: [0; 4],
            src_port: 0,
            opcode: 0x04,
            dest_qp: 0,
            psn: 0,
            ack_req: false,
            aeth: None,
            payload_len: 0,
        };
        let err = w.write_frame(0, &CsigCodec::default(), &bad).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        // Refused before anything is sized by the bogus length.
        let huge = FrameRepr {
            ecn: 0,
            payload_len: u32::MAX,
            ..bad
        };
        w.snaplen = u32::MAX;
        assert!(w.write_frame(0, &CsigCodec::default(), &huge).is_err());
        assert_eq!(w.into_inner().len(), field::GLOBAL_LEN, "nothing written");
    }

    #[test]
    fn reads_microsecond_big_endian() {
        let mut b = Vec::new();
        b.extend_from_slice(&PCAP_MAGIC_US.to_be_bytes());
        b.extend_from_slice(&[0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);
        b.extend_from_slice(&[0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 60, 0x42]);
        assert_eq!(read_pcap(&b), Ok(vec![(2_000_003_000, vec![0x42], 60)]));
        assert_eq!(
            read_pcap(&b[..b.len() - 1]),
            Err(WireError::Truncated {
                needed: 41,
                have: 40
            })
        );
        assert_eq!(read_pcap(&[0; 24]), Err(WireError::BadMagic(0)));
    }

    #[test]
    fn write_frame_captures_like_a_snaplen() {
        use crate::wire::{CsigRepr, TagSize, OPCODE_RC_SEND_ONLY};
        let codec = CsigCodec::default();
        let f = FrameRepr {
            dst_mac: [2, 0, 0, 0, 0, 2],
            src_mac: [2, 0, 0, 0, 0, 1],
            csig: Some(CsigRepr {
                size: TagSize::Wide,
                sig_type: 0,
                value: 0,
                locator: 0,
                d: false,
            }),
            ecn: 0,
            src_ip: [10, 0, 0, 1],
            dst_ip: [10, 0, 0, 2],
            src_port: 1,
            opcode: OPCODE_RC_SEND_ONLY,
            dest_qp: 0,
            psn: 0,
            ack_req: false,
            aeth: None,
            payload_len: 100,
        };
        let (hdr, orig) = (f.header_len(&codec), f.frame_len(&codec));
        assert_eq!((hdr, orig), (62, 166));
        let mut headers = vec![0u8; hdr];
        f.emit_headers(&codec, &mut headers).unwrap();
        for (snaplen, keep) in [(256, 166), (100, 100), (62, 62), (10, 62)] {
            let mut w = PcapWriter::new(Vec::new(), snaplen).unwrap();
            w.write_frame(5_000, &codec, &f).unwrap();
            w.write_frame(6_000, &codec, &f).unwrap();
            let pkts = read_pcap(&w.into_inner()).unwrap();
            assert_eq!(pkts.len(), 2);
            let (ts, data, o) = &pkts[1];
            assert_eq!((*ts, *o as usize), (6, orig));
            // The writer still caps at snaplen, even below the headers.
            assert_eq!(data.len(), keep.min(snaplen as usize), "snaplen {snaplen}");
            let n = data.len().min(hdr);
            assert_eq!(data[..n], headers[..n]);
            assert!(data[n..].iter().all(|&b| b == 0));
        }
    }

    proptest! {
        #[test]
        fn write_read_round_trip(pkts in proptest::collection::vec(
            (any::<u64>(), proptest::collection::vec(any::<u8>(), 0..300), 0u32..2000), 0..8),
            snaplen in 1u32..400) {
            let mut w = PcapWriter::new(Vec::new(), snaplen).unwrap();
            for (ts, data, extra) in &pkts {
                w.write_packet(*ts, data, data.len() as u32 + extra).unwrap();
            }
            let back = read_pcap(&w.into_inner()).unwrap();
            prop_assert_eq!(back.len(), pkts.len());
            for ((ts, data, extra), (ts_ns, got, orig)) in pkts.iter().zip(back) {
                prop_assert_eq!(ts_ns, ts / 1000);
                prop_assert_eq!(&got[..], &data[..data.len().min(snaplen as usize)]);
                prop_assert_eq!(orig, data.len() as u32 + extra);
            }
        }

        #[test]
        fn read_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200),
                             magic in prop_oneof![Just(PCAP_MAGIC_NS), Just(PCAP_MAGIC_US)]) {
            let _ = read_pcap(&bytes);
            let mut b = magic.to_le_bytes().to_vec();
            b.extend_from_slice(&bytes);
            let _ = read_pcap(&b);
        }
    }
}
