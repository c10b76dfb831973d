//! A default capture (`--pcap` with the default snaplen) of the shipped CSIG
//! chain scenario, read by tshark with the shipped Lua dissector: frames cut
//! by the snaplen are recorded as cut (captured length below the original
//! length), and no frame is malformed or flagged. Skipped without tshark.

use std::path::Path;
use std::process::Command;

#[test]
fn tshark_reads_a_default_capture_of_the_csig_chain_without_a_malformed_frame() {
    if Command::new("tshark").arg("-v").output().is_err() {
        eprintln!("tshark not found: skipped");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = std::env::temp_dir().join(format!("csigsim-pcap-default-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let pcap = dir.join("c.pcap");
    let out = Command::new(env!("CARGO_BIN_EXE_csigsim"))
        .arg("run")
        .arg(root.join("scenarios/chain_csig_delay.toml"))
        .args(["--quiet", "--out"])
        .arg(dir.join("run"))
        .arg("--pcap")
        .arg(&pcap)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let t = Command::new("tshark")
        .arg("-n")
        .arg("-X")
        .arg(format!("lua_script:{}", root.join("tools/wireshark/csig.lua").display()))
        .arg("-r")
        .arg(&pcap)
        .args(["-T", "fields", "-E", "separator=/t"])
        .args(["-e", "frame.len", "-e", "frame.cap_len", "-e", "csig.type", "-e", "ip.len", "-e", "_ws.malformed", "-e", "_ws.expert.message"])
        .output()
        .unwrap();
    assert!(t.status.success(), "{}", String::from_utf8_lossy(&t.stderr));
    let text = String::from_utf8_lossy(&t.stdout);
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    let index = std::fs::read_to_string(format!("{}.csv", pcap.display())).unwrap();
    assert_eq!(rows.len(), index.lines().count() - 1, "one row per frame of the capture's index");
    let mut cut = 0;
    for (i, r) in rows.iter().enumerate() {
        let (len, cap): (usize, usize) = (r[0].parse().unwrap(), r[1].parse().unwrap());
        if cap < len {
            cut += 1;
            assert_eq!(cap, 256, "frame {}: cut at the default snaplen", i + 1);
            assert!(!r[2].is_empty(), "frame {}: a data frame of the chain carries a tag", i + 1);
            // IPv4 behind the tag: a datagram longer than what was captured.
            let ip: usize = r[3].parse().unwrap();
            assert!(ip > cap && ip < len, "frame {}: ip.len {ip}", i + 1);
        }
        assert_eq!((r[4], r[5]), ("", ""), "frame {}: malformed or flagged", i + 1);
    }
    assert!(cut > 1000, "the data frames are longer than the snaplen ({cut} cut)");
    let _ = std::fs::remove_dir_all(&dir);
}
