//! Writes a pcap with the `wire` module and checks that tshark, with
//! `tools/wireshark/csig.lua`, dissects the CSIG tag and the RoCEv2 headers
//! behind it to the values we wrote. Skipped (passes) without tshark.

use csigsim::wire::{
    ip_of_host, mac_of_node, nak_syndrome, read_pcap, CsigCodec, CsigLayout, CsigRepr, FrameRepr,
    PcapWriter, TagSize, DEFAULT_SNAPLEN, OPCODE_RC_ACK, OPCODE_RC_SEND_ONLY, SYNDROME_ACK,
};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The tshark fields we compare, in output column order; the last two are
/// Wireshark's expert messages and malformed-packet marker.
const FIELDS: [&str; 15] = [
    "frame.len",
    "csig.size",
    "csig.type",
    "csig.value",
    "csig.locator",
    "csig.d",
    "ip.dsfield.ecn",
    "ip.len",
    "ip.checksum.status",
    "infiniband.bth.opcode",
    "infiniband.bth.psn",
    "infiniband.aeth.syndrome",
    "infiniband.aeth.msn",
    "_ws.expert.message",
    "_ws.malformed",
];
const CHECKED: usize = 13;

/// A temp directory removed on drop, even when an assertion fails.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("csigsim-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn lua_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/wireshark/csig.lua")
}

fn tag(size: TagSize, sig_type: u8, value: u32, locator: u16, d: bool) -> Option<CsigRepr> {
    Some(CsigRepr {
        size,
        sig_type,
        value,
        locator,
        d,
    })
}

fn data(n: u32, csig: Option<CsigRepr>, ecn: u8, psn: u32, payload_len: u32) -> FrameRepr {
    FrameRepr {
        dst_mac: mac_of_node(n + 1),
        src_mac: mac_of_node(n),
        csig,
        ecn,
        src_ip: ip_of_host(n),
        dst_ip: ip_of_host(n + 1),
        src_port: 49152 + n as u16,
        opcode: OPCODE_RC_SEND_ONLY,
        dest_qp: 0x100 + n,
        psn,
        ack_req: true,
        aeth: None,
        payload_len,
    }
}

fn ack(n: u32, csig: Option<CsigRepr>, psn: u32, syndrome: u8, msn: u32) -> FrameRepr {
    FrameRepr {
        opcode: OPCODE_RC_ACK,
        ack_req: false,
        aeth: Some((syndrome, msn)),
        payload_len: 0,
        ..data(n, csig, 0, psn, 0)
    }
}

/// The row tshark should print for `f`.
fn expected_row(codec: &CsigCodec, f: &FrameRepr) -> Vec<String> {
    let mut row = vec![f.frame_len(codec).to_string()];
    match f.csig {
        Some(c) => row.extend([
            match c.size {
                TagSize::Compact => "compact".to_string(),
                TagSize::Wide => "wide".to_string(),
            },
            c.sig_type.to_string(),
            c.value.to_string(),
            c.locator.to_string(),
            (c.d as u8).to_string(),
        ]),
        None => row.extend(std::iter::repeat_n(String::new(), 5)),
    }
    let ip_len = f.frame_len(codec) - 14 - f.csig.map_or(0, |c| c.size.tag_len());
    row.extend([
        f.ecn.to_string(),
        ip_len.to_string(),
        "1".to_string(), // checksum good
        f.opcode.to_string(),
        f.psn.to_string(),
    ]);
    match f.aeth {
        Some((syndrome, msn)) => row.extend([syndrome.to_string(), msn.to_string()]),
        None => row.extend([String::new(), String::new()]),
    }
    row
}

/// tshark prints booleans as 1/0 or True/False depending on its version.
fn normalize(cell: &str) -> String {
    match cell {
        "True" | "true" => "1".into(),
        "False" | "false" => "0".into(),
        other => other.into(),
    }
}

/// Writes `frames` to a pcap, dissects it and compares every row. Returns
/// false when tshark is not installed.
fn check(name: &str, codec: &CsigCodec, frames: &[FrameRepr], prefs: &[&str]) -> bool {
    let dir = TempDir::new(name);
    let pcap = dir.0.join("frames.pcap");
    let mut w = PcapWriter::new(Vec::new(), DEFAULT_SNAPLEN).unwrap();
    for (i, f) in frames.iter().enumerate() {
        // 1.5 us apart, with sub-ns digits that the writer truncates.
        w.write_frame(1_500_000 * i as u64 + 123, codec, f).unwrap();
    }
    let bytes = w.into_inner();
    // Our own reader sees what we wrote before tshark does.
    let back = read_pcap(&bytes).unwrap();
    assert_eq!(back.len(), frames.len());
    for ((_, got, orig), f) in back.iter().zip(frames) {
        assert_eq!(FrameRepr::parse(codec, got).as_ref(), Ok(f));
        assert_eq!(*orig as usize, f.frame_len(codec));
    }
    std::fs::write(&pcap, &bytes).unwrap();

    let mut cmd = Command::new("tshark");
    cmd.arg("-n")
        .arg("-X")
        .arg(format!("lua_script:{}", lua_script().display()))
        .args(["-o", "ip.check_checksum:TRUE"]);
    for p in prefs {
        cmd.args(["-o", p]);
    }
    cmd.arg("-r")
        .arg(&pcap)
        .args(["-T", "fields", "-E", "separator=/t"]);
    for f in FIELDS {
        cmd.args(["-e", f]);
    }
    let out = match cmd.output() {
        Ok(out) => out,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            println!("tshark not found: skipped");
            return false;
        }
        Err(e) => panic!("running tshark: {e}"),
    };
    // Warnings on stderr (e.g. running as root) are fine; only the exit
    // status and stdout matter.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "tshark failed: {stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<Vec<String>> = stdout
        .lines()
        .map(|l| l.split('\t').map(normalize).collect())
        .collect();
    assert_eq!(
        rows.len(),
        frames.len(),
        "tshark printed:\n{stdout}\nstderr:\n{stderr}"
    );
    for (i, (row, f)) in rows.iter().zip(frames).enumerate() {
        assert_eq!(
            row.get(..CHECKED),
            Some(&expected_row(codec, f)[..]),
            "frame {} ({FIELDS:?}); stderr:\n{stderr}",
            i + 1
        );
        let (expert, malformed) = (&row[CHECKED], &row[CHECKED + 1]);
        assert!(!expert.contains("Lua"), "frame {}: {expert}", i + 1);
        // Every frame dissects without complaint, those cut by the snaplen
        // behind a tag included (csig.lua passes them on at full length).
        assert_eq!((&expert[..], &malformed[..]), ("", ""), "frame {} of {} bytes", i + 1, f.frame_len(codec));
    }
    true
}

#[test]
fn tshark_dissects_default_tags() {
    let codec = CsigCodec::default();
    let frames = [
        // Compact max(Delay) tag, ECT(0).
        data(1, tag(TagSize::Compact, 2, 21, 90, true), 2, 100, 4096),
        // Wide min(ABW/C) tag, ECN CE.
        data(
            2,
            tag(TagSize::Wide, 1, 0xabcde, 0x1234, false),
            3,
            0x123456,
            1000,
        ),
        // ACK reflecting nothing, with a compact min(ABW) tag of its own.
        ack(
            3,
            tag(TagSize::Compact, 0, 31, 127, false),
            100,
            SYNDROME_ACK,
            1,
        ),
        // NACK (PSN sequence error) carrying a trimmed packet's wide tag.
        ack(
            4,
            tag(TagSize::Wide, 3, (1 << 20) - 1, 0xffff, true),
            0xffffff,
            nak_syndrome(0),
            5,
        ),
        // Untagged data packets, ECT(1): one longer than the snaplen.
        data(5, None, 1, 0, 1000),
        data(6, None, 1, 1, 64),
    ];
    if check("tshark-default", &codec, &frames, &[]) {
        println!("tshark dissected {} frames as written", frames.len());
    }
}

#[test]
fn tshark_follows_layout_preferences() {
    // Other TPIDs and UEC-slides widths; the dissector learns them from -o.
    let codec = CsigCodec {
        compact: CsigLayout {
            t_bits: 3,
            s_bits: 5,
            lm_bits: 6,
            d_bit: true,
        },
        wide: CsigLayout {
            t_bits: 4,
            s_bits: 20,
            lm_bits: 15,
            d_bit: true,
        },
        tpid_compact: 0x88b5,
        tpid_wide: 0x88b6,
    };
    let frames = [
        data(1, tag(TagSize::Compact, 5, 17, 63, true), 0, 7, 64),
        data(2, tag(TagSize::Wide, 15, 12345, 0x7fff, true), 3, 8, 64),
    ];
    let prefs = [
        "csig.tpid_compact:34997", // 0x88b5
        "csig.tpid_wide:34998",    // 0x88b6
        "csig.compact_lm_bits:6",
        "csig.wide_lm_bits:15",
    ];
    check("tshark-prefs", &codec, &frames, &prefs);
}
