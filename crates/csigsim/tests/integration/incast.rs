//! 127-to-1 incast of 2 MB on a 128-host fat tree, in each switch mode.

use crate::common::load_with;

const INCAST: &str = r#"
name = "incast"
[topology]
kind = "fat_tree"
k = 8
[switch]
buffer = "16MB"
ecn = { kmin = "100KB", kmax = "400KB", pmax = 0.2 }
[[workload]]
kind = "incast"
receiver = "h0"
size = "2MB"
"#;

/// Sums a column of links.csv over every link and window.
fn sum_links(out: &csigsim::RunOutput, column: impl Fn(&csigsim::output::LinkRow) -> Option<u64>) -> u64 {
    out.tables.links.as_ref().expect("links.csv is on").rows().map(|r| column(&r).expect("queues measured at packet level")).sum()
}

#[test]
fn pfc_incast_is_lossless_and_pauses_show_in_links_csv() {
    let out = csigsim::run(load_with(INCAST, &["switch.mode=\"pfc\"", "transport.cc=\"none\"", "transport.rto=\"50ms\""]), |_| true);
    let s = &out.summary;
    assert_eq!(s.flows_completed, 127);
    assert_eq!(s.packets_dropped, 0);
    assert!(s.pauses_sent > 0);
    assert!(s.invariants_ok, "{:?}", s.invariant_violations);
    assert!(sum_links(&out, |r| r.pause_ps) > 0);
    assert_eq!(sum_links(&out, |r| r.drops.map(u64::from)), 0);
    // Every byte arrived: 127 flows of 2 MB.
    assert_eq!(s.packets_delivered - s.retransmits, 127 * 489);
}

#[test]
fn lossy_incast_drops_retransmits_and_delivers_everything() {
    let out = csigsim::run(load_with(INCAST, &["switch.mode=\"lossy\"", "switch.buffer=\"2MB\"", "transport.cc=\"dctcp\""]), |_| true);
    let s = &out.summary;
    assert!(s.packets_dropped > 0, "a 2 MB buffer must overflow");
    assert!(s.retransmits > 0);
    assert_eq!(s.flows_completed, 127);
    assert!(s.invariants_ok, "{:?}", s.invariant_violations);
    assert!(sum_links(&out, |r| r.drops.map(u64::from)) > 0);
}

#[test]
fn trimming_incast_nacks_and_delivers_everything() {
    let out = csigsim::run(
        load_with(INCAST, &["switch.mode=\"trim\"", "switch.buffer=\"2MB\"", "transport.cc=\"dctcp\"", "transport.retransmit=\"selective\""]),
        |_| true,
    );
    let s = &out.summary;
    assert!(s.packets_trimmed > 0);
    assert!(s.nacks_sent > 0);
    assert_eq!(s.packets_dropped, 0);
    assert_eq!(s.flows_completed, 127);
    assert!(s.invariants_ok, "{:?}", s.invariant_violations);
    assert!(sum_links(&out, |r| r.trims.map(u64::from)) > 0);
}

/// Trimming with selective retransmission under NSCC, 1-BDP queues: each
/// switch port has one BDP (about 175 KB at 100 Gbps and a 14 us diameter
/// RTT) of reserved buffer and little shared buffer beyond it. Resends used
/// to ignore the window and trimmed headers to have strict priority over
/// data: the receiver's link then carried nothing but headers and no flow
/// finished in 30 ms.
#[test]
fn trimming_incast_under_nscc_with_one_bdp_queues_stays_live() {
    const TRIM_NSCC: &str = r#"
name = "incast trim nscc"
stop = "30ms"
[topology]
kind = "fat_tree"
k = 8
rate = "100Gbps"
delay = "1us"
[switch]
mode = "trim"
buffer = "1500KB"
reserved = "175KB"
ecn = { kmin = "35KB", kmax = "140KB", pmax = 1.0 }
[transport]
cc = "nscc"
retransmit = "selective"
mtu = 4096
header = 64
[monitor]
links = false
[[workload]]
kind = "incast"
receiver = "h0"
size = "2MB"
"#;
    let out = csigsim::run(load_with(TRIM_NSCC, &[]), |_| true);
    let s = &out.summary;
    assert!(s.packets_trimmed > 0, "the incast must trim");
    assert_eq!(s.flows_completed, 127, "every flow completes");
    assert_eq!(s.end_reason, "completed");
    assert!(s.invariants_ok, "{:?}", s.invariant_violations);
    // 127 x 2 MB through one 100 Gbps link take at least 20.3 ms.
    let max = s.fct_max_ns.unwrap();
    assert!(max > 20.3e6 && max < 30e6, "tail FCT {max} ns");
}
