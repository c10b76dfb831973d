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
fn sum_links(out: &csigsim::RunOutput, column: impl Fn(&csigsim::output::LinkRow) -> u64) -> u64 {
    out.tables.links.as_ref().expect("links.csv is on").rows().map(|r| column(&r)).sum()
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
    assert_eq!(sum_links(&out, |r| r.drops as u64), 0);
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
    assert!(sum_links(&out, |r| r.drops as u64) > 0);
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
    assert!(sum_links(&out, |r| r.trims as u64) > 0);
}
