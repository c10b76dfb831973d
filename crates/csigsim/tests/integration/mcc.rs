//! MCC on sprayed traffic: partial versus global congestion, and the
//! dumbbell. The figures are in docs/cc/mcc.md (run with `-- --nocapture`
//! to print them).

use crate::common::{jain, load_with, port};
use csigsim::cc::mcc::Mcc;
use csigsim::cc::Cc;
use csigsim::World;

fn mcc_of(w: &World, i: usize) -> &Mcc {
    match &w.flow_state(i).expect("flow state kept").cc {
        Cc::Mcc(m) => m,
        _ => unreachable!("flow {i} does not run MCC"),
    }
}

/// Payload bytes each flow had in order at `t0` and at `t1` (ps), and the
/// largest data queue seen at `port` (if any), sampled every 10 us.
fn measure(w: &mut World, t0: u64, t1: u64, port: Option<csigsim::id::PortId>) -> (Vec<u64>, u64) {
    let iv = crate::common::measure(w, t0, t1, 10_000_000, port);
    (iv.payload_bytes(w), iv.max_queue)
}

fn gbps(bytes: u64, t0: u64, t1: u64) -> f64 {
    bytes as f64 * 8.0 / ((t1 - t0) as f64 / 1e12) / 1e9
}

/// Two leaves joined by four spines, adaptive routing, PFC. Three long flows
/// a_i -> b_i cross from L0 to L1 over the four spines; a cross flow from c0,
/// whose leaf L2 has a single uplink (to S3), shares the S3 -> L1 link. Only
/// the S3 path congests: partial congestion of the main flows' path set. The
/// three other spines can carry all 300 Gb/s the main senders' NICs send.
fn partial_fabric(cc: &str) -> String {
    partial_fabric_from(cc, [0; 4])
}

/// [`partial_fabric`] with the flows a0, a1, a2 and cross starting at
/// these times (ns).
fn partial_fabric_from(cc: &str, start_ns: [u64; 4]) -> String {
    let mut links = String::new();
    let link = |a: &str, b: &str| format!("  {{ a = \"{a}\", b = \"{b}\", rate = \"100Gbps\", delay = \"1us\" }},\n");
    for i in 0..3 {
        links += &link(&format!("a{i}"), "L0");
    }
    for i in 0..4 {
        links += &link(&format!("b{i}"), "L1");
    }
    links += &link("c0", "L2");
    for s in 0..4 {
        links += &link("L0", &format!("S{s}"));
        links += &link("L1", &format!("S{s}"));
    }
    links += &link("L2", "S3");
    let mut flows = String::new();
    for (i, start) in start_ns[..3].iter().enumerate() {
        flows += &format!("[[flow]]\nsrc = \"a{i}\"\ndst = \"b{i}\"\nsize = \"1GB\"\nstart = \"{start}ns\"\n");
    }
    flows += &format!("[[flow]]\nname = \"cross\"\nsrc = \"c0\"\ndst = \"b3\"\nsize = \"1GB\"\nstart = \"{}ns\"\n", start_ns[3]);
    format!(
        "name = \"partial\"\n[topology]\nkind = \"custom\"\n\
         hosts = [\"a0\", \"a1\", \"a2\", \"b0\", \"b1\", \"b2\", \"b3\", \"c0\"]\n\
         switches = [\"L0\", \"L1\", \"L2\", \"S0\", \"S1\", \"S2\", \"S3\"]\nlinks = [\n{links}]\n\
         [switch]\nmode = \"pfc\"\nrouting = \"adaptive\"\necn = {{ kmin = \"100KB\", kmax = \"400KB\", pmax = 0.2 }}\n\
         [transport]\ncc = \"{cc}\"\nretransmit = \"selective\"\n\
         # Lossless: reordering from adaptive routing is not loss.\nnack_threshold = 100000\n\
         [monitor]\nlinks = false\n{flows}"
    )
}

const T0: u64 = 500_000_000; // 0.5 ms
const T1: u64 = 3_000_000_000; // 3 ms

/// Aggregate main-flow throughput (Gb/s) over 0.5 to 3 ms, per-flow bytes, and the world.
fn partial_run(cc: &str, start_ns: [u64; 4], extra: &[&str]) -> (f64, Vec<u64>, World) {
    let mut sets = vec!["stop=\"3ms\""];
    sets.extend_from_slice(extra);
    let mut w = World::new(load_with(&partial_fabric_from(cc, start_ns), &sets));
    let (bytes, _) = measure(&mut w, T0, T1, None);
    let main: u64 = bytes[..3].iter().sum();
    (gbps(main, T0, T1), bytes, w)
}

/// Start times (ns of a0, a1, a2, cross) the partial-congestion figures
/// are averaged over. Packets that reach the congested S3 -> L1 link in
/// one picosecond take turns in an order drawn per nanosecond block, and
/// which flows meet there, and how often, follows from when they started:
/// one set of starts alone gives a main-flow total anywhere from 128 to
/// 204 Gb/s under MCC (docs/cc/mcc.md).
const STARTS: [[u64; 4]; 5] = [[0, 0, 0, 0], [0, 1300, 2600, 700], [0, 700, 1900, 300], [500, 0, 1100, 1700], [0, 2300, 900, 1500]];

#[test]
fn partial_congestion_keeps_the_window_where_dcqcn_slows_down() {
    let per = |b: &[u64]| b.iter().map(|&x| format!("{:.1}", gbps(x, T0, T1))).collect::<Vec<_>>().join(" / ");
    let (mut mcc, mut literal, mut dcqcn, mut none) = (0.0, 0.0, 0.0, 0.0);
    let (mut none_m, mut partial, mut global, mut dec) = (0, 0, 0, 0);
    println!("partial congestion, main flows over 0.5-3 ms (per flow a0 / a1 / a2 / cross, Gb/s):");
    for starts in STARTS {
        let (m, mb, w) = partial_run("mcc", starts, &[]);
        let (l, lb, _) = partial_run("mcc", starts, &["transport.mcc.partial_min_delayed=0"]);
        let (d, db, _) = partial_run("dcqcn", starts, &[]);
        let (n, nb, _) = partial_run("none", starts, &[]);
        println!("starts {starts:?} ns:");
        println!("  mcc   {m:.1} Gb/s ({})", per(&mb));
        println!("  mcc with partial_min_delayed = 0 {l:.1} Gb/s ({})", per(&lb));
        println!("  dcqcn {d:.1} Gb/s ({})", per(&db));
        println!("  none  {n:.1} Gb/s ({})", per(&nb));
        for i in 0..3 {
            let c = mcc_of(&w, i);
            none_m += c.messages_none;
            partial += c.messages_partial;
            global += c.messages_global;
            dec += c.decreases;
            assert_eq!(c.messages_evicted, 0);
        }
        // The flow whose packets never meet the congested spine is never
        // slowed: every message of a2 is undelayed.
        assert!(gbps(mb[2], T0, T1) > 95.0, "{starts:?}: {}", per(&mb));
        assert_eq!(w.stats().packets_dropped, 0);
        (mcc, literal, dcqcn, none) = (mcc + m, literal + l, dcqcn + d, none + n);
    }
    let k = STARTS.len() as f64;
    (mcc, literal, dcqcn, none) = (mcc / k, literal / k, dcqcn / k, none / k);
    println!("mean over {} sets of starts: mcc {mcc:.1}, partial_min_delayed = 0 {literal:.1}, dcqcn {dcqcn:.1}, none {none:.1} Gb/s", STARTS.len());
    println!("  main flows under mcc: messages none {none_m} partial {partial} global {global} decreases {dec}");
    // Measured: 179.7 against 146.3 Gb/s (1.23 times).
    assert!(mcc > dcqcn * 1.2, "MCC {mcc:.1} Gb/s vs DCQCN {dcqcn:.1} Gb/s");
    // The literal rule (every delayed, non-global message partial) does as
    // well on average here (183.5 Gb/s): one set of starts made it look
    // worse (docs/cc/mcc.md). Within 5% of each other either way.
    assert!((literal / mcc - 1.0).abs() < 0.05, "partial_min_delayed = 0: {literal:.1} Gb/s vs {mcc:.1} Gb/s");
    // Most delayed messages are recognized as partial congestion.
    assert!(partial > global, "partial {partial} vs global {global}");
}

/// `n` senders on leaf1 of a 2-leaf, 4-spine fabric into h0 on leaf0,
/// adaptive routing, PFC: every path ends in the leaf0 -> h0 link.
fn incast(n: usize) -> String {
    let mut flows = String::new();
    for i in 0..n {
        flows += &format!("[[flow]]\nsrc = \"h{}\"\ndst = \"h0\"\nsize = \"1GB\"\n", 16 + i);
    }
    format!(
        "name = \"incast\"\n[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 4\nhosts_per_leaf = 16\n\
         rate = \"100Gbps\"\ndelay = \"1us\"\n\
         [switch]\nmode = \"pfc\"\nrouting = \"adaptive\"\n\
         [transport]\ncc = \"mcc\"\nretransmit = \"selective\"\nnack_threshold = 100000\n\
         [monitor]\nlinks = false\n{flows}"
    )
}

/// Message classes summed over flows `0..n`: (none, partial, global, decreases).
fn classes(w: &World, n: usize) -> (u64, u64, u64, u64) {
    (0..n).map(|i| mcc_of(w, i)).fold((0, 0, 0, 0), |a, m| {
        (a.0 + m.messages_none, a.1 + m.messages_partial, a.2 + m.messages_global, a.3 + m.decreases)
    })
}

#[test]
fn incast_is_global_congestion() {
    let n = 8;
    let mut w = World::new(load_with(&incast(n), &["stop=\"3ms\""]));
    let port = port(&w, "leaf0", "h0");
    // Onset: eight line-rate windows meet at one link; every path is delayed.
    w.run_until(200_000_000);
    let onset = classes(&w, n);
    let (bytes, max_queue) = measure(&mut w, 1_000_000_000, T1, Some(port));
    let wire = (w.scenario().transport.mtu + w.scenario().transport.header) as f64 / w.scenario().transport.mtu as f64;
    let util = gbps(bytes.iter().sum(), 1_000_000_000, T1) * wire / 100.0;
    let j = jain(&bytes);
    let max_window = mcc_of(&w, 0).max_window;
    let all = classes(&w, n);
    println!(
        "{n}-to-1 incast: first 200 us messages none/partial/global {}/{}/{} ({} decreases); \
         1-3 ms utilization {util:.4} Jain {j:.4} max queue {max_queue} B (bound {} B) drops {}; \
         whole run none/partial/global {}/{}/{} ({} decreases)",
        onset.0,
        onset.1,
        onset.2,
        onset.3,
        n as u64 * max_window,
        w.stats().packets_dropped,
        all.0,
        all.1,
        all.2,
        all.3
    );
    assert!(util >= 0.90, "utilization {util:.4}");
    assert!(j >= 0.95, "Jain {j:.4}");
    assert_eq!(w.stats().packets_dropped, 0);
    // What is queued is in flight, and each flow has at most max_window in flight.
    assert!(max_queue <= n as u64 * max_window, "queue {max_queue}");
    // The congestion is global: at the onset delayed messages are global, and
    // every flow cut its window.
    assert!(onset.2 >= 2 * onset.1, "onset: global {} partial {}", onset.2, onset.1);
    assert_eq!(onset.0, 0);
    for i in 0..n {
        assert!(mcc_of(&w, i).decreases > 0, "flow {i} never decreased");
        assert_eq!(mcc_of(&w, i).messages_evicted, 0);
    }
}

/// The common dumbbell (`cc_dumbbell::check`'s figures). With its defaults
/// MCC fills the bottleneck without drops and keeps the queue near
/// `pkt_threshold`, but with two flows it is not fair: a message's delay
/// includes the time its own window takes to send it, so the flow with the
/// larger window sees the smaller message delay and keeps growing
/// (docs/cc/mcc.md). Jain is asserted from four flows up.
#[test]
fn mcc_on_the_dumbbell() {
    for n in [2, 4, 16] {
        let f = crate::cc_dumbbell::dumbbell_figures("mcc", n, &[]);
        println!("mcc N={n:<3} utilization {:.4} Jain {:.4} max queue {} B drops {}", f.util, f.jain, f.max_queue, f.drops);
        assert!(f.util >= 0.90, "N={n}: utilization {:.4}", f.util);
        assert_eq!(f.drops, 0, "N={n}");
        assert!(f.max_queue < 4_000_000, "N={n}: queue {}", f.max_queue);
        if n >= 4 {
            assert!(f.jain >= 0.95, "N={n}: Jain {:.4}", f.jain);
        }
    }
}

#[test]
fn bad_parameters_name_their_key() {
    let base = partial_fabric("mcc");
    for (set, key, needle) in [
        ("transport.mcc.global_fraction=1.5", "transport.mcc.global_fraction", "global_fraction must be in (0, 1]"),
        ("transport.mcc.max_mdf=1.0", "transport.mcc.max_mdf", "max_mdf must be in (0, 1)"),
        ("transport.mcc.chunk=\"0B\"", "transport.mcc.chunk", "chunk must be at least 1 byte"),
        ("transport.mcc.sample_every=0", "transport.mcc.sample_every", "sample_every"),
    ] {
        let ov = [csigsim::Override::parse(set).unwrap()];
        let e = csigsim::scenario::load_str(&base, "bad.toml", std::path::Path::new("."), &ov, None).expect_err(set);
        assert_eq!(e.key.as_deref(), Some(key), "{e}");
        assert!(e.to_string().contains(needle), "{e}");
    }
    let both = format!("{base}\n[transport.mcc]\nmin_window = \"8KB\"\nmax_window = \"4KB\"\n");
    let e = csigsim::scenario::load_str(&both, "bad.toml", std::path::Path::new("."), &[], None).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("transport.mcc.max_window"), "{e}");
    let unknown = format!("{base}\n[transport.mcc]\nchunk_size = \"64KB\"\n");
    let e = csigsim::scenario::load_str(&unknown, "bad.toml", std::path::Path::new("."), &[], None).unwrap_err();
    assert!(e.to_string().contains("chunk_size"), "{e}");
}
