//! A single flow's FCT equals the analytic store-and-forward value exactly.

use crate::common::{analytic_fct, load};
use csigsim::units::tx_time_ps;

const THREE_HOP: &str = r#"
name = "three hops"
[topology]
kind = "custom"
hosts = ["h0", "h1"]
switches = ["s0", "s1"]
links = [
  { a = "h0", b = "s0", rate = "100Gbps", delay = "1us" },
  { a = "s0", b = "s1", rate = "40Gbps", delay = "2.5us" },
  { a = "s1", b = "h1", rate = "100Gbps", delay = "700ns" },
]
[transport]
cc = "none"
mtu = 4096
header = 64
[[flow]]
src = "h0"
dst = "h1"
size = "1000000B"
start = "3us"
"#;

#[test]
fn single_flow_fct_matches_store_and_forward_to_the_picosecond() {
    let out = csigsim::run(load(THREE_HOP), |_| true);
    let f = &out.tables.flows;
    // 1_000_000 bytes = 244 packets of 4096 + one of 576, each plus a 64-byte header.
    let mut sizes = vec![4160u64; 244];
    sizes.push(640);
    let hops = [(100_000_000_000, 1_000_000), (40_000_000_000, 2_500_000), (100_000_000_000, 700_000)];
    let expect = analytic_fct(&sizes, &hops);
    assert_eq!(f.fct_ps[0], Some(expect));
    assert_eq!(f.start_ps[0], 3_000_000);
    // Worked by hand: the 40 Gbps hop is busy from 1332.8 ns on; the last
    // packet leaves it at 1332.8 + 244 * 832 + 128 = 204468.8 ns, reaches s1
    // 2.5 us later, waits there for packet 243 (on the last hop until
    // 207173.6 ns), takes 51.2 ns and 0.7 us more: 207924.8 ns.
    assert_eq!(expect, 207_924_800);
    assert!(out.summary.invariants_ok);
    assert_eq!(out.summary.packets_delivered, 245);
}

#[test]
fn flows_csv_reports_the_exact_fct_in_ns() {
    let out = csigsim::run(load(THREE_HOP), |_| true);
    let csv = out.flows_csv();
    let row = csv.lines().nth(1).unwrap();
    let cols: Vec<&str> = row.split(',').collect();
    let fct_ps = out.tables.flows.fct_ps[0].unwrap();
    assert_eq!(cols[7], csigsim::output::fmt_ns(fct_ps));
    assert_eq!(cols[5], "3000");
}

#[test]
fn coalesced_acks_never_wait_for_the_retransmission_timer() {
    // Window of two packets, one ACK per four packets: without the delayed-ACK
    // timer the receiver would sit on the ACK until the sender timed out.
    let sc = crate::common::load_with(
        THREE_HOP,
        &["transport.cc=\"dctcp\"", "transport.dctcp.init_cwnd=8192", "transport.ack_every=4", "transport.ack_delay=\"3us\""],
    );
    let mut w = csigsim::World::new(sc);
    w.run(u64::MAX);
    assert_eq!(w.stats().timeouts, 0);
    assert_eq!(w.stats().flows_completed, 1);
    let fct = w.flows()[0].finish_ps.unwrap() - w.flows()[0].start_ps;
    assert!(fct < 3_000_000_000, "fct {fct} ps");
}

/// The fabric's unloaded RTT (NSCC's default network RTT) is the longest
/// host-to-host round trip, here across pods (six links each way), even
/// when the only flow stays in one rack: 6 x (tx(4160 B) + 1 us) out and
/// 6 x (tx(64 B) + 1 us) back.
#[test]
fn fabric_rtt_is_the_longest_host_pair_whatever_the_flows() {
    let w = crate::common::world(
        r#"
[topology]
kind = "fat_tree"
k = 4
rate = "100Gbps"
delay = "1us"
[transport]
cc = "nscc"
[[flow]]
src = "h0"
dst = "h1"
size = "10KB"
"#,
        &[],
    );
    let net = w.network();
    let expected = 6 * (tx_time_ps(4160, 100_000_000_000) + 1_000_000) + 6 * (tx_time_ps(64, 100_000_000_000) + 1_000_000);
    assert_eq!(expected, 14_027_520);
    assert_eq!(net.fabric_rtt(4160, 64), expected);
    use csigsim::id::HostId;
    assert!(net.base_rtt(HostId(0), HostId(1), 4160, 64) < expected, "the flow's own RTT is shorter");
    assert_eq!(net.base_rtt(HostId(0), HostId(15), 4160, 64), expected);
}
