//! Host-side load balancing: connections of several queue pairs (round
//! robin, striping) and the CAST scheduler, on whole runs.

use crate::common::{load_with, world};
use csigsim::World;
use std::path::Path;

/// Two hosts on one switch, 100 Gbps, no congestion control.
fn pair(extra: &str) -> String {
    format!(
        r#"name = "pair"
[topology]
kind = "custom"
hosts = ["h0", "h1"]
switches = ["s0"]
links = [
  {{ a = "h0", b = "s0", rate = "100Gbps", delay = "1us" }},
  {{ a = "s0", b = "h1", rate = "100Gbps", delay = "1us" }},
]
{extra}
"#
    )
}

fn messages(sizes: &[&str]) -> String {
    sizes.iter().map(|s| format!("[[flow]]\nsrc = \"h0\"\ndst = \"h1\"\nsize = \"{s}\"\n")).collect()
}

fn run(toml: &str, sets: &[&str]) -> World {
    let mut w = world(toml, sets);
    w.run(u64::MAX);
    assert!(w.check_invariants().is_empty(), "{:?}", w.check_invariants());
    w
}

fn sizes(w: &World) -> Vec<u64> {
    w.flows().iter().map(|f| f.size).collect()
}

fn cast_scenario() -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    std::fs::read_to_string(dir.join("cast_leaf_spine.toml")).unwrap()
}

#[test]
fn round_robin_sends_each_message_whole_on_the_next_queue_pair() {
    let t = pair(&format!("[transport.connection]\nqps = 2\n{}", messages(&["1MB", "2MB", "3MB"])));
    let w = run(&t, &[]);
    // Message m is flows 2m, 2m + 1: QP 0, QP 1, QP 0 in turn.
    assert_eq!(sizes(&w), [1_000_000, 0, 0, 2_000_000, 3_000_000, 0]);
    assert!(w.flows().iter().all(|f| f.finish_ps.is_some()));
    let c = w.connections().unwrap();
    assert_eq!((c.whole_messages, c.split_messages), (3, 0));
}

#[test]
fn striping_cuts_each_message_into_aligned_stripes() {
    let t = pair(&format!("[transport.connection]\nqps = 4\nsplit_data = true\n{}", messages(&["1MB", "300B"])));
    let w = run(&t, &[]);
    // ceil(1000000 / 4) = 250000 -> 250112 (1954 x 128); the last QP takes the rest.
    // 300 B: stripes of 128, 128, 44 and nothing.
    assert_eq!(sizes(&w), [250_112, 250_112, 250_112, 249_664, 128, 128, 44, 0]);
    // The empty part completes at once; the message's bytes all arrive.
    assert!(w.flows().iter().all(|f| f.finish_ps.is_some()));
    let delivered: u64 = w.flows().iter().map(|f| f.delivered_bytes()).sum();
    assert_eq!(delivered, 1_000_300);
}

#[test]
fn each_queue_pair_keeps_one_entropy_across_messages() {
    let t = pair(&format!("[transport.connection]\nqps = 4\n{}", messages(&["1MB", "1MB", "1MB"])));
    let w = world(&t, &[]);
    let e: Vec<u32> = w.flows().iter().map(|f| f.entropy).collect();
    for m in 1..3 {
        assert_eq!(e[m * 4..m * 4 + 4], e[0..4]);
    }
    let mut qps = e[0..4].to_vec();
    qps.sort();
    qps.dedup();
    assert_eq!(qps.len(), 4, "distinct entropies per queue pair: {e:?}");
}

#[test]
fn cast_measures_the_header_time_on_an_idle_path() {
    // One queue pair, CAST on, one message of 256 full packets alone on the
    // path: RTT - payload time - (base RTT - one packet's time) is the time
    // the 256 headers take at 100 Gbps, 256 x 5.12 ns; at flow level too,
    // whose sender completes one ACK's way back after the arrival.
    let t = pair(&format!("[transport.connection]\nqps = 1\n[transport.connection.qp_sched]\nenable = true\n{}", messages(&["1MiB"])));
    for w in [run(&t, &[]), run_flow(&t, &[])] {
        let q = &w.connections().unwrap().cast(0).unwrap().qps[0];
        assert_eq!(q.n, 1);
        assert_eq!(q.estimate, 256.0 * 5120.0);
    }
}

#[test]
fn cast_sends_a_message_whole_below_the_split_minimum() {
    // 4 x 64 KiB is the least message CAST splits over 4 queue pairs.
    let t = pair(&format!(
        "[transport.connection]\nqps = 4\nsplit_data = true\n[transport.connection.qp_sched]\nenable = true\n{}",
        messages(&["262143B", "262144B"])
    ));
    let w = run(&t, &[]);
    let s = sizes(&w);
    assert_eq!(s[0..4], [262_143, 0, 0, 0]);
    assert_eq!(s[4..8], [65_536; 4]);
    let c = w.connections().unwrap();
    assert_eq!((c.whole_messages, c.split_messages), (1, 1));
}

/// Messages of the CAST experiment whose stripes are off an even split by
/// more than a tenth of an even share, after checking each message's parts.
fn uneven_messages(w: &World) -> usize {
    let c = w.connections().unwrap();
    let n = c.qps();
    let flows = w.flows();
    let mut uneven = 0;
    for m in 0..flows.len() / n {
        let parts = &flows[m * n..m * n + n];
        let size = w.scenario().connections.as_ref().unwrap().msg_size[m];
        assert_eq!(parts.iter().map(|f| f.size).sum::<u64>(), size);
        // Every stripe but the last (QP 3: no message was sent whole) is a multiple of 128 B.
        assert!(parts[..n - 1].iter().all(|f| f.size % 128 == 0), "message {m}: {:?}", parts.iter().map(|f| f.size).collect::<Vec<_>>());
        let even = size / n as u64;
        if parts.iter().any(|f| f.size.abs_diff(even) > even / 10) {
            uneven += 1;
        }
    }
    assert_eq!(c.whole_messages, 0);
    uneven
}

#[test]
fn cast_stripes_follow_its_weights_in_the_leaf_spine_experiment() {
    let w = run(&cast_scenario(), &[]);
    let c = w.connections().unwrap();
    for m in 0..w.flows().len() / c.qps() {
        let s = c.cast(c.conn_of(m)).unwrap();
        assert!(s.ready, "message {m}'s connection never computed weights");
        assert!((s.weights.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    }
    // ECMP collisions make some queue pairs slower: CAST moves stripes off
    // even; plain striping never does.
    assert!(uneven_messages(&w) > 0);
    let plain = run(&cast_scenario(), &["transport.connection.qp_sched.enable=false"]);
    assert!(plain.connections().unwrap().cast(0).is_none());
    assert_eq!(uneven_messages(&plain), 0);
}

#[test]
fn connection_runs_are_deterministic_per_seed() {
    let t = cast_scenario();
    let fingerprint = |sets: &[&str]| -> Vec<(u64, Option<u64>, u32)> {
        let w = run(&t, sets);
        w.flows().iter().map(|f| (f.size, f.finish_ps, f.entropy)).collect()
    };
    assert_eq!(fingerprint(&[]), fingerprint(&[]));
    assert_ne!(fingerprint(&[]), fingerprint(&["seed=7"]));
}

#[test]
fn without_the_section_every_flow_is_its_own_queue_pair() {
    let t = pair(&messages(&["1MB", "1MB"]));
    let sc = load_with(&t, &[]);
    assert!(sc.connections.is_none());
    let w = World::new(sc);
    assert!(w.connections().is_none());
    assert_eq!(w.flows().len(), 2);
    assert_ne!(w.flows()[0].entropy, w.flows()[1].entropy);
}

#[test]
fn bad_connection_keys_are_refused_with_their_key() {
    for (set, key) in [
        ("transport.connection.qps=0", "transport.connection.qps"),
        ("transport.connection.align=0", "transport.connection.align"),
        ("transport.connection.qp_sched.weight=1.5", "transport.connection.qp_sched.weight"),
        ("transport.connection.qp_sched.update_interval=\"0us\"", "transport.connection.qp_sched.update_interval"),
    ] {
        let t = pair(&format!("[transport.connection]\nqps = 2\n{}", messages(&["1MB"])));
        let ov = vec![csigsim::Override::parse(set).unwrap()];
        let e = csigsim::scenario::load_str(&t, "bad.toml", Path::new("."), &ov, None).expect_err(set);
        assert_eq!(e.key.as_deref(), Some(key), "{e}");
    }
    let t = pair("[transport.connection]\nqps = 2\n[[workload]]\nkind = \"rpc\"\nsize = \"4KB\"\nload = 0.1\nduration = \"10us\"\n");
    let e = csigsim::scenario::load_str(&t, "bad.toml", Path::new("."), &[], None).expect_err("rpc");
    assert_eq!(e.key.as_deref(), Some("transport.connection"), "{e}");
}

/// A run at flow level (`engine.fidelity = "flow"`), its world kept.
fn run_flow(toml: &str, sets: &[&str]) -> World {
    let mut sets = sets.to_vec();
    sets.push("engine.fidelity=\"flow\"");
    let mut w = world(toml, &sets);
    csigsim::flowsim::run(&mut w, &mut |_| true);
    w
}

#[test]
fn the_flow_level_splits_messages_as_the_packet_level_does() {
    for (qps, split, msgs) in [(2, false, &["1MB", "2MB", "3MB"][..]), (4, true, &["1MB", "300B"][..])] {
        let t = pair(&format!("[transport.connection]\nqps = {qps}\nsplit_data = {split}\n{}", messages(msgs)));
        let (packet, flow) = (run(&t, &[]), run_flow(&t, &[]));
        let parts: Vec<u64> = flow.flows().iter().map(|r| r.size).collect();
        assert_eq!(parts, sizes(&packet), "qps {qps}, split {split}");
        // Every part completes, the empty ones at once, and every byte arrives.
        assert!(flow.flows().iter().all(|r| r.finish_ps.is_some() && r.sender_done_ps.is_some()));
        let c = flow.connections().unwrap();
        let p = packet.connections().unwrap();
        assert_eq!((c.whole_messages, c.split_messages), (p.whole_messages, p.split_messages));
    }
}

/// A message striped over four queue pairs of one NIC: the stripes share
/// the NIC's link and the message takes what one flow of its size takes,
/// less up to three first packets' time on the link (each part's first
/// packet is its store-and-forward latency, not its fluid, and the four
/// go out together).
#[test]
fn a_striped_message_at_flow_level_takes_its_size_at_line_rate() {
    let striped = run_flow(&pair(&format!("[transport.connection]\nqps = 4\nsplit_data = true\n{}", messages(&["4MB"]))), &[]);
    let whole = run_flow(&pair(&messages(&["4MB"])), &[]);
    let end = |w: &World| w.flows().iter().filter_map(|r| r.finish_ps).max().unwrap();
    let (a, b) = (end(&striped), end(&whole));
    let first = csigsim::units::tx_time_ps(4160, 100_000_000_000);
    assert!(a <= b && b - a <= 3 * first, "striped {a} ps, whole {b} ps");
    assert_eq!(striped.flows().iter().filter(|r| r.size > 0).count(), 4);
}

/// docs/fidelity.md's CAST rows: the leaf-spine experiment as shipped
/// (split by CAST's weights) and with one queue pair, at both rungs: the
/// mean busbw over the rails within the documented 20%.
#[test]
fn flow_level_cast_busbw_stays_inside_the_documented_bound() {
    let mean_busbw = |out: &csigsim::RunOutput| {
        let c = out.tables.collectives.as_ref().expect("collectives.csv");
        let b: Vec<f64> = c.busbw_gbps.iter().flatten().copied().collect();
        assert_eq!(b.len(), 8, "one instance per rail");
        b.iter().sum::<f64>() / b.len() as f64
    };
    for sets in [vec![], vec!["transport.connection.qps=1"]] {
        let packet = csigsim::run(load_with(&cast_scenario(), &sets), |_| true);
        let mut flow_sets = sets.clone();
        flow_sets.push("engine.fidelity=\"flow\"");
        let flow = csigsim::run(load_with(&cast_scenario(), &flow_sets), |_| true);
        let (p, f) = (mean_busbw(&packet), mean_busbw(&flow));
        assert!((f - p).abs() / p < 0.20, "{sets:?}: flow {f:.1} against packet {p:.1} Gb/s");
    }
}

/// Connections of several queue pairs run partitioned, with the outputs of
/// one thread: the senders decide each message's split, and the receivers
/// in other partitions learn the parts' sizes, and that a part of no bytes
/// is whole, before its first packet or its message's end. Round robin
/// (three of four parts empty), striping, and CAST with weighted round
/// robin, on a ring all-reduce whose steps wait for whole messages.
#[test]
fn connections_run_partitioned_with_the_outputs_of_one_thread() {
    let cases: [&[&str]; 3] = [
        &["transport.connection.split_data=false"],
        &["transport.connection.qp_sched.enable=false"],
        &["transport.connection.split_data=false", "transport.connection.qp_sched.wrr_enable=true"],
    ];
    let out = |sets: &[&str], threads: usize, partitions: usize| {
        let opts = csigsim::RunOptions { threads, partitions, ..Default::default() };
        let o = csigsim::run_with(load_with(&cast_scenario(), sets), &opts, |_| true).unwrap();
        let mut summary: serde_json::Value = serde_json::from_str(&o.summary_json()).unwrap();
        summary["wall_s"] = 0.into();
        summary["link_hops_per_s"] = 0.into();
        (o.threads.partitions, o.threads.refused.clone(), summary, o.flows_csv(), o.collectives_csv())
    };
    for sets in cases {
        let mut sets = sets.to_vec();
        sets.push("workload[0].size=\"2MB\"");
        let (_, _, one, flows, colls) = out(&sets, 1, 0);
        assert_eq!(one["flows_completed"], one["flows_total"], "{sets:?}");
        for (threads, partitions) in [(2, 2), (1, 4)] {
            let (cut, refused, summary, f, c) = out(&sets, threads, partitions);
            assert_eq!((cut, refused), (partitions as u32, None), "{sets:?}");
            assert_eq!(summary, one, "{sets:?} on {partitions} partitions");
            assert!(f == flows, "{sets:?}: flows.csv on {partitions} partitions");
            assert!(c == colls, "{sets:?}: collectives.csv on {partitions} partitions");
        }
    }
}
