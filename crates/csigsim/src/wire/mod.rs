/*! Wire formats: header fields to bytes and back, at the edge only.

The engine carries parsed header fields, never bytes. This module turns them
into bytes where bytes are needed — pcap capture and tests — and parses them
back. It follows the `Repr` style of smoltcp: each header has a plain struct of
fields with `parse`, `emit` and a length function, and the byte offsets of its
fields are constants in one `field` module next to it.

Contracts:

- `parse` never panics, whatever the input bytes; it returns a [`WireError`].
- `emit` never panics either: a buffer that is too short, or a value wider
  than its field, is an error. Values are never silently truncated.
- For every `Repr` whose fields fit their widths, `parse(emit(r)) == r`.

# Frame layout

A RoCEv2-like frame, as emitted by [`FrameRepr::emit_headers`]; offsets are
for a frame with a compact (4 B) CSIG tag, add 4 for a wide (8 B) tag and
subtract 4 for an untagged frame:

```text
 0      Ethernet destination MAC (6)
 6      Ethernet source MAC (6)
12      CSIG TPID (2)            0x9900 compact / 0x9901 wide (configurable)
14      CSIG body (2 compact / 6 wide)
16      EtherType 0x0800 (2)
18      IPv4 header (20): version 4, IHL 5, DSCP 0, ECN, total length, id 0,
        DF, TTL 64, protocol 17 (UDP), header checksum, src, dst
38      UDP header (8): src port, dst port 4791 (RoCEv2), length, checksum 0
46      InfiniBand BTH (12): opcode, SE|M|PadCnt|TVer, P_Key 0xffff,
        reserved, destination QP (24), A|reserved, PSN (24)
58      AETH (4), only for acknowledge opcodes: syndrome, MSN (24)
62      payload (payload_len bytes; counted in the lengths, not written)
        ICRC (4; counted in the lengths, not written)
```

# CSIG tag bits

The body after the TPID, most significant bit first (defaults; widths are
configurable through [`CsigLayout`], fields keep their order and any unused
bits are reserved, zero on emit, ignored on parse):

```text
compact, 16 bits:  15..13 T (3) | 12 d (1) | 11..7 S (5) | 6..0 LM (7)
wide,    48 bits:  47..32 LM (16) | 31..28 T (4) | 27..8 S (20) | 7 d (1) | 6..0 reserved (7)
```

`T` is the signal type (0 ABW, 1 ABW/C, 2 Delay, 3 nQD), `S` the signal value,
`LM` the locator metadata of the hop that last wrote `S`, and `d` the
do-not-update bit a trimming switch sets (the draft's reserved bit, reused by
UEC). The compact layout is the one the Broadcom SDK codes; the wide one
follows the draft-01 summary with UEC's `d` bit taken from the reserved byte.

# Capture

[`PcapWriter`] writes classic pcap with nanosecond timestamps and
`LINKTYPE_ETHERNET`. [`PcapWriter::write_frame`] stores at most `snaplen`
bytes of a frame — its headers, then zeros for payload and ICRC — and records
the true frame length as `orig_len`, so captures stay small while Wireshark
still shows the true sizes. `tools/wireshark/csig.lua` dissects the tag and
hands the rest to Wireshark's own IPv4/UDP/InfiniBand dissectors.

One Wireshark limitation: a Lua dissector cannot hand on a sub-buffer that
keeps the true length of a truncated frame, so behind a CSIG tag Wireshark
sees only the captured bytes and flags the IPv4/UDP lengths of frames longer
than `snaplen` ("exceeds packet length", "bogus"). The values are still
dissected correctly; a snaplen at least the frame size avoids the warnings.
*/

mod csig;
mod frame;
mod pcap;

pub use csig::{field as csig_field, CsigCodec, CsigLayout, CsigRepr, TagSize};
pub use csig::{TPID_COMPACT_DEFAULT, TPID_WIDE_DEFAULT};
pub use frame::{field as frame_field, ip_of_host, mac_of_node, nak_syndrome, FrameRepr};
pub use frame::{
    ETHERTYPE_IPV4, ICRC_LEN, MAX_HEADER_LEN, OPCODE_CNP, OPCODE_RC_ACK, OPCODE_RC_SEND_ONLY, ROCEV2_UDP_PORT,
    SYNDROME_ACK,
};
pub use pcap::{
    field as pcap_field, read_pcap, PcapWriter, DEFAULT_SNAPLEN, LINKTYPE_ETHERNET, PCAP_MAGIC_NS,
};

/// Why bytes could not be parsed or emitted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The buffer ends before the header does.
    #[error("buffer too short: need {needed} bytes, have {have}")]
    Truncated { needed: usize, have: usize },
    /// A value does not fit its field on emit.
    #[error("{field} = {value} does not fit in {bits} bits")]
    FieldOverflow {
        field: &'static str,
        value: u64,
        bits: u8,
    },
    /// A CSIG layout or codec whose fields do not fit or overlap.
    #[error("invalid CSIG layout: {0}")]
    InvalidLayout(String),
    /// The two bytes where a CSIG tag should start hold another TPID.
    #[error("0x{0:04x} is not a CSIG TPID")]
    UnknownTpid(u16),
    /// A well-formed header that this module does not produce (another
    /// EtherType, IP version, protocol, port).
    #[error("unsupported {field}: {value:#x}")]
    Unsupported { field: &'static str, value: u64 },
    /// Header fields that contradict each other (lengths, opcode vs AETH).
    #[error("inconsistent header: {0}")]
    Inconsistent(&'static str),
    /// The IPv4 header checksum does not verify.
    #[error("bad IPv4 header checksum: found {found:#06x}, expected {expected:#06x}")]
    BadChecksum { found: u16, expected: u16 },
    /// Not a pcap file (or one in a format we do not read).
    #[error("bad pcap magic {0:#010x}")]
    BadMagic(u32),
}
