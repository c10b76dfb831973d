//! Reliable unordered delivery (`transport.delivery = "rud"`) end to end:
//! bytes conserved under trimming, and ACKs coalesced by bytes whatever the
//! order packets arrive in.

use crate::common::load_with;

/// A 16-host fat tree with per-packet spraying: a permutation of flows of
/// 61 packets (1 + 4 x 15) at line rate, no ECN, buffers that never fill.
const SPRAYED_PERMUTATION: &str = r#"
name = "sprayed permutation"
[topology]
kind = "fat_tree"
k = 4
rate = "100Gbps"
delay = "1us"
[switch]
buffer = "64MB"
routing = "spray"
[transport]
cc = "none"
mtu = 4096
header = 64
ack_every = 4
ack_bytes = 16640
retransmit = "selective"
nack_threshold = 1000
[monitor]
links = false
[[workload]]
kind = "permutation"
size = "249856B"
"#;

#[test]
fn rud_acks_by_bytes_whatever_the_order_and_selective_acks_every_reordered_packet() {
    let rud = csigsim::run(load_with(SPRAYED_PERMUTATION, &["transport.delivery=\"rud\""]), |_| true).summary;
    let sel = csigsim::run(load_with(SPRAYED_PERMUTATION, &[]), |_| true).summary;
    for s in [&rud, &sel] {
        assert_eq!(s.flows_completed, 16);
        assert!(s.invariants_ok, "{:?}", s.invariant_violations);
        assert_eq!((s.packets_dropped, s.retransmits, s.nacks_sent), (0, 0, 0));
    }
    // rud: the first packet, then every 4 packets of 4160 B (16,640 B), the
    // last of which completes the flow: 1 + 15 ACKs per flow of 61 packets.
    assert_eq!(rud.acks_sent, 16 * 16);
    // Selective ACKs every 4 in-order packets too (16 a flow), and at once
    // every packet that arrives beyond a hole: on this fabric's four paths
    // spraying adds 13 a flow (468 in all, 1.83 times rud's).
    let factor = sel.acks_sent as f64 / rud.acks_sent as f64;
    assert!(factor > 1.5, "selective {} against rud {} ACKs", sel.acks_sent, rud.acks_sent);
}

/// An 8-to-1 incast into a trimming switch with a small buffer, under NSCC.
const TRIMMED_INCAST: &str = r#"
name = "trimmed incast"
[topology]
kind = "custom"
hosts = ["h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7", "rx"]
switches = ["s0"]
links = [
  { a = "h0", b = "s0", rate = "100Gbps", delay = "1us" },
  { a = "h1", b = "s0", rate = "100Gbps", delay = "1us" },
  { a = "h2", b = "s0", rate = "100Gbps", delay = "1us" },
  { a = "h3", b = "s0", rate = "100Gbps", delay = "1us" },
  { a = "h4", b = "s0", rate = "100Gbps", delay = "1us" },
  { a = "h5", b = "s0", rate = "100Gbps", delay = "1us" },
  { a = "h6", b = "s0", rate = "100Gbps", delay = "1us" },
  { a = "h7", b = "s0", rate = "100Gbps", delay = "1us" },
  { a = "s0", b = "rx", rate = "100Gbps", delay = "1us" },
]
[switch]
buffer = "200KB"
mode = "trim"
ecn = { kmin = "20KB", kmax = "80KB", pmax = 1.0 }
[transport]
cc = "nscc"
delivery = "rud"
ack_request = true
[[workload]]
kind = "incast"
receiver = "rx"
size = "1MB"
"#;

#[test]
fn a_trimmed_rud_incast_nacks_only_trims_and_delivers_every_byte() {
    let s = csigsim::run(load_with(TRIMMED_INCAST, &[]), |_| true).summary;
    assert_eq!(s.flows_completed, 8);
    assert!(s.invariants_ok, "{:?}", s.invariant_violations);
    assert!(s.packets_trimmed > 0, "the buffer must overflow");
    // Every NACK answers a trimmed packet (a trim of a packet already held is ACKed instead).
    assert!(s.nacks_sent > 0 && s.nacks_sent <= s.packets_trimmed, "{} NACKs, {} trims", s.nacks_sent, s.packets_trimmed);
    // Every packet arrived once, besides those resent.
    let npkts = 1_000_000u64.div_ceil(4096);
    assert!(s.packets_delivered >= 8 * npkts && s.packets_delivered <= 8 * npkts + s.retransmits);
}

#[test]
fn rud_refuses_an_explicit_go_back_n_and_the_htsim_profile_selects_it() {
    let bad = TRIMMED_INCAST.replace("delivery = \"rud\"", "delivery = \"rud\"\nretransmit = \"go_back_n\"");
    let e = csigsim::scenario::load_str(&bad, "t.toml", std::path::Path::new("."), &[], None).unwrap_err().to_string();
    assert!(e.contains("rud") && e.contains("go_back_n"), "{e}");
    let own = TRIMMED_INCAST.replace("delivery = \"rud\"\n", "").replace("buffer = \"200KB\"\n", "");
    let sc = load_with(&format!("profile = \"htsim-uec\"\n{own}"), &[]);
    assert_eq!(sc.transport.delivery, csigsim::transport::config::Delivery::Rud);
    assert!(sc.transport.selective());
}

#[test]
fn go_back_n_with_spraying_warns() {
    let sc = load_with(SPRAYED_PERMUTATION, &["transport.retransmit=\"go_back_n\""]);
    let w = sc.transport.warnings(sc.switch.routing);
    assert_eq!(w.len(), 1);
    assert!(w[0].contains("go_back_n") && w[0].contains("rud"), "{}", w[0]);
    let sc = load_with(SPRAYED_PERMUTATION, &[]);
    assert!(sc.transport.warnings(sc.switch.routing).is_empty(), "selective recovery tolerates reordering");
    let rc = load_with(SPRAYED_PERMUTATION, &["transport.retransmit=\"go_back_n\"", "switch.routing=\"ecmp\""]);
    assert!(rc.transport.warnings(rc.switch.routing).is_empty());
    let host = load_with(SPRAYED_PERMUTATION, &["transport.retransmit=\"go_back_n\"", "switch.routing=\"ecmp\"", "transport.entropy=\"oblivious\""]);
    assert_eq!(host.transport.warnings(host.switch.routing).len(), 1, "host-side spraying reorders too");
}

#[test]
fn nscc_on_a_sprayed_fabric_defaults_to_rud_unless_the_table_chooses() {
    use csigsim::transport::config::Delivery;
    let nscc = |sets: &[&str]| {
        let mut all = vec!["transport.cc=\"nscc\""];
        all.extend_from_slice(sets);
        // The table's own retransmit goes: the default is what is tested.
        load_with(&SPRAYED_PERMUTATION.replace("retransmit = \"selective\"\n", ""), &all)
    };
    let sc = nscc(&[]);
    assert_eq!(sc.transport.delivery, Delivery::Rud, "NSCC on switch spraying");
    assert!(sc.transport.selective() && sc.transport.warnings(sc.switch.routing).is_empty());
    let host = nscc(&["switch.routing=\"ecmp\"", "transport.entropy=\"reps\""]);
    assert_eq!(host.transport.delivery, Delivery::Rud, "NSCC on host-side spraying");
    let ecmp = nscc(&["switch.routing=\"ecmp\""]);
    assert_eq!(ecmp.transport.delivery, Delivery::Rc, "one path per flow keeps rc");
    assert!(!ecmp.transport.selective());
    // A table that names its recovery or its delivery keeps it.
    let gbn = nscc(&["transport.retransmit=\"go_back_n\""]);
    assert_eq!(gbn.transport.delivery, Delivery::Rc);
    assert_eq!(gbn.transport.warnings(gbn.switch.routing).len(), 1, "and is warned");
    let sel = nscc(&["transport.retransmit=\"selective\""]);
    assert_eq!(sel.transport.delivery, Delivery::Rc);
    let rc = nscc(&["transport.delivery=\"rc\""]);
    assert_eq!((rc.transport.delivery, rc.transport.selective()), (Delivery::Rc, false));
    // Other algorithms keep rc (and go-back-N's warning).
    let dctcp = load_with(&SPRAYED_PERMUTATION.replace("retransmit = \"selective\"\n", ""), &["transport.cc=\"dctcp\""]);
    assert_eq!(dctcp.transport.delivery, Delivery::Rc);
    assert_eq!(dctcp.transport.warnings(dctcp.switch.routing).len(), 1);
    // The per-packet timer is checked against the delivery as settled:
    // NSCC's default on spraying takes it, a go-back-N run is refused.
    let timed = nscc(&["transport.timeout=\"packet\""]);
    assert_eq!(timed.transport.delivery, Delivery::Rud);
    let text = SPRAYED_PERMUTATION.replace("retransmit = \"selective\"\n", "");
    let sets = [csigsim::Override::parse("transport.cc=\"dctcp\"").unwrap(), csigsim::Override::parse("transport.timeout=\"packet\"").unwrap()];
    let e = csigsim::scenario::load_str(&text, "t.toml", std::path::Path::new("."), &sets, None).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("transport.timeout"), "{e}");
    assert!(e.to_string().contains("go-back-N"), "{e}");
}
