//! The flow-level engine (`engine.fidelity = "flow"`): a lone flow's
//! completion time to the picosecond, max-min sharing, the ring
//! all-reduce against its analytic time, determinism, and its outputs.

use crate::common::{dumbbell, load, load_with};
use csigsim::units::tx_time_ps;

const FLOW: &str = "engine.fidelity=\"flow\"";

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
[[flow]]
src = "h0"
dst = "h1"
size = "1000000B"
start = "3us"
"#;

/// The first packet (4160 wire bytes) store-and-forward over the three
/// hops, the other 1,011,520 wire bytes (245 headers of 64 bytes) at the
/// 40 Gb/s bottleneck: 5,697,600 + 202,304,000 ps.
#[test]
fn a_lone_flow_takes_its_analytic_time_to_the_picosecond() {
    let out = csigsim::run(load_with(THREE_HOP, &[FLOW]), |_| true);
    let f = &out.tables.flows;
    let first = tx_time_ps(4160, 100_000_000_000) + 1_000_000 + tx_time_ps(4160, 40_000_000_000) + 2_500_000 + tx_time_ps(4160, 100_000_000_000) + 700_000;
    assert_eq!(first, 5_697_600);
    let rest = tx_time_ps(1_000_000 + 245 * 64 - 4160, 40_000_000_000);
    assert_eq!(rest, 202_304_000);
    assert_eq!(f.fct_ps[0], Some(208_001_600));
    assert_eq!(f.fct_ps[0], Some(f.ideal_fct_ps[0]), "the ideal FCT is the lone flow's");
    assert_eq!(f.start_ps[0], 3_000_000);
    assert_eq!(out.summary.flows_completed, 1);
    assert!(out.summary.invariants_ok);
    assert_eq!(out.summary.fidelity.as_ref().map(|n| n.engine.as_str()), Some("flow"));
}

/// Two flows share the 100 Gb/s bottleneck at 50 Gb/s each until the
/// shorter one's fluid is through; the longer then runs alone at 100.
#[test]
fn flows_share_a_bottleneck_max_min_and_speed_up_when_one_leaves() {
    let text = dumbbell(
        2,
        "[[flow]]\nsrc = \"h0\"\ndst = \"rx\"\nsize = \"1MB\"\n[[flow]]\nsrc = \"h1\"\ndst = \"rx\"\nsize = \"3MB\"\n",
    );
    let out = csigsim::run(load_with(&text, &[FLOW]), |_| true);
    let f = &out.tables.flows;
    let wire = |size: u64| size + size.div_ceil(4096) * 64 - 4160;
    let first = 3 * (tx_time_ps(4160, 100_000_000_000) + 1_000_000);
    // Flow 0's fluid at 50 Gb/s.
    let t0 = (wire(1_000_000) as f64 * 8e12 / 50e9).ceil();
    assert_eq!(f.fct_ps[0], Some(t0 as u64 + first));
    // Flow 1 moved as much by then, the rest at 100 Gb/s.
    let left = wire(3_000_000) as f64 - 50e9 * t0 / 8e12;
    let t1 = t0 + (left * 8e12 / 100e9).ceil();
    let got = f.fct_ps[1].unwrap() as f64;
    assert!((got - (t1 + first as f64)).abs() <= 2.0, "{got} against {}", t1 + first as f64);
    // links.csv: the bottleneck carried both flows' wire bytes less their
    // first packets (metered as fluid), busy the whole time.
    let links = out.tables.links.as_ref().expect("links table");
    let rows: Vec<_> = links.rows().filter(|r| r.from == "s0" && r.to == "s1").collect();
    let bytes: u64 = rows.iter().map(|r| r.tx_bytes).sum();
    let expect = wire(1_000_000) + wire(3_000_000);
    assert!(bytes.abs_diff(expect) <= rows.len() as u64, "{bytes} against {expect}");
    // No queues at flow level: their cells are empty, not 0.
    assert!(rows.iter().all(|r| r.max_queue_bytes.is_none() && r.drops.is_none() && r.ecn_marks.is_none() && r.trims.is_none() && r.pause_ps.is_none()));
}

/// links.csv at flow level: tx_bytes and utilization in every row, the
/// five queue cells empty, in memory, streamed (the command's way) and
/// read back from the run directory as CSV and as Parquet; the same
/// scenario at packet level fills every cell.
#[test]
fn flow_level_links_have_empty_queue_cells_in_every_format() {
    let text = dumbbell(2, "[[flow]]\nsrc = \"h0\"\ndst = \"rx\"\nsize = \"1MB\"\n[[flow]]\nsrc = \"h1\"\ndst = \"rx\"\nsize = \"3MB\"\n");
    let mem = csigsim::run(load_with(&text, &[FLOW]), |_| true);
    let csv = mem.links_csv();
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().ends_with("utilization,max_queue_bytes,drops,ecn_marks,trims,pause_ns"));
    let rows: Vec<&str> = lines.collect();
    assert!(!rows.is_empty());
    for r in &rows {
        let cells: Vec<&str> = r.split(',').collect();
        assert_eq!(cells.len(), 11, "{r}");
        assert!(cells[4].parse::<u64>().is_ok() && cells[5].parse::<f64>().is_ok(), "{r}");
        assert_eq!(&cells[6..], ["", "", "", "", ""], "{r}");
    }
    // Streamed, as the command writes it: the same bytes.
    let dir = std::env::temp_dir().join(format!("csigsim-flow-links-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let opts = csigsim::RunOptions { stream_dir: Some(dir.clone()), ..Default::default() };
    let _ = csigsim::run_with(load_with(&text, &[FLOW]), &opts, |_| true).unwrap();
    assert_eq!(std::fs::read_to_string(dir.join("links.csv")).unwrap(), csv);
    // Read back: empty cells are None, in CSV and in Parquet.
    let back = tempdir_written(&mem, "csv");
    let c = csigsim::output::read_run(&back, csigsim::output::Format::Csv).unwrap().links.expect("links");
    assert_eq!(c.len(), rows.len());
    assert!(c.max_queue_bytes.iter().chain(&c.pause_ps).all(Option::is_none) && c.drops.iter().chain(&c.ecn_marks).chain(&c.trims).all(Option::is_none));
    #[cfg(feature = "parquet")]
    {
        let pq = csigsim::output::read_run(&back, csigsim::output::Format::Parquet).unwrap().links.expect("links");
        assert_eq!(pq, c);
    }
    // Packet level: every cell is a number.
    let packet = csigsim::run(csigsim::scenario::load_str(&text, "t.toml", std::path::Path::new("."), &[], None).unwrap(), |_| true);
    assert!(packet.links_csv().lines().skip(1).all(|l| l.split(',').all(|c| !c.is_empty())));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&back);
}

/// Writes `out` to a fresh run directory (with its Parquet twins when the
/// feature is on), answers the directory.
fn tempdir_written(out: &csigsim::RunOutput, tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("csigsim-flow-rundir-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    out.write_dir(&dir).unwrap();
    #[cfg(feature = "parquet")]
    out.write_parquet(&dir).unwrap();
    dir
}

/// A flow's rate cap holds it below its fair share; the other takes the rest.
#[test]
fn rate_caps_are_respected() {
    let text = dumbbell(
        2,
        "[[flow]]\nsrc = \"h0\"\ndst = \"rx\"\nsize = \"1MB\"\nrate = \"20Gbps\"\n[[flow]]\nsrc = \"h1\"\ndst = \"rx\"\nsize = \"1MB\"\n",
    );
    let out = csigsim::run(load_with(&text, &[FLOW]), |_| true);
    let f = &out.tables.flows;
    let wire = 1_000_000 + 245 * 64 - 4160;
    let first = 3 * (tx_time_ps(4160, 100_000_000_000) + 1_000_000);
    assert_eq!(f.fct_ps[0], Some(tx_time_ps(wire, 20_000_000_000) + first));
    assert_eq!(f.fct_ps[1], Some(tx_time_ps(wire, 80_000_000_000) + first));
}

/// A ring all-reduce's CCT on an idle non-blocking fabric, one slice per
/// step and channel: the last step at rank `r` ends a chain over the
/// 2 (n - 1) edges before it, each step a lone flow (its first packet's
/// store-and-forward latency, the rest of its wire bytes at the rate)
/// plus the ACKs of the step the rank receives, which leave on its NIC
/// link ahead of its data; the slowest chain.
fn ring_analytic_ps(w: &csigsim::World, n: u32, size: u64) -> f64 {
    use csigsim::id::HostId;
    let t = &w.scenario().transport;
    let (mtu, header, ack) = (t.mtu as u64, t.header as u64, t.ack_size as u64);
    let block = size / n as u64;
    let pkts = block.div_ceil(mtu);
    let rest = block + pkts * header - (mtu + header) + pkts.div_ceil(t.ack_every as u64) * ack;
    let edge: Vec<u64> = (0..n).map(|r| w.path_latency(HostId(r), HostId((r + 1) % n), mtu + header).0).collect();
    let steps = 2 * (n - 1);
    let chain = (0..n).map(|end| (0..steps).map(|i| edge[((end + n * 2 - i) % n) as usize]).sum::<u64>()).max().unwrap();
    (steps as u64 * tx_time_ps(rest, 100_000_000_000) + chain) as f64
}

/// Ring all-reduce on a non-blocking fat tree: the CCT within 1% of the
/// analytic time at 8, 64 and 1024 ranks (blocks of 4 MB, 250 KB and
/// 15.6 KB: chunk 4 MB keeps them one slice a step).
#[test]
fn ring_allreduce_matches_the_analytic_cct_within_one_percent() {
    for (k, n, size, bytes) in [(4, 8, "32MB", 32_000_000u64), (8, 64, "16MB", 16_000_000), (16, 1024, "16MB", 16_000_000)] {
        let text = crate::collectives::ring(k, n, size).replace("size = ", "chunk = \"4MB\"\nsize = ");
        let sc = load_with(&text, &[FLOW]);
        let w = csigsim::World::new(sc.clone());
        let expect = ring_analytic_ps(&w, n, bytes);
        let out = csigsim::run(sc, |_| true);
        assert_eq!(out.summary.flows_completed as usize, out.summary.flows_total);
        let t = out.tables.collectives.as_ref().expect("collectives table");
        let total = t.step.iter().position(|s| s.is_none()).expect("instance row");
        let cct = (t.finish_ps[total].unwrap() - t.start_ps[total].unwrap()) as f64;
        println!("n={n}: flow-level CCT {:.1} us, analytic {:.1} us", cct / 1e6, expect / 1e6);
        assert!((cct - expect).abs() / expect < 0.01, "n={n}: CCT {cct} ps against {expect} ps");
    }
}

/// At flow level a ring's plan becomes its transfers before any flow id
/// is taken: a ring of more slice flows than a scenario may have (16 ranks
/// x 30 steps x 31,250 slices of 64 bytes = 15 M, above the 10 M cap)
/// loads as its 16 transfers, the workload after it numbers its flows
/// from 16, and the run completes; at packet level the same scenario is
/// refused for its slices, at the ring's key.
#[test]
fn a_flow_level_ring_is_counted_and_numbered_by_its_transfers() {
    let text = crate::collectives::ring(4, 16, "32MB").replace("size = ", "chunk = \"64B\"\nsize = ")
        + "[[workload]]\nkind = \"incast\"\nreceiver = \"h0\"\ncount = 2\nsize = \"1MB\"\n";
    let e = csigsim::scenario::load_str(&text, "t.toml", std::path::Path::new("."), &[], None).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("workload[0].size"), "{e}");
    assert!(e.to_string().contains("expands into 15000000 flows"), "{e}");
    let sc = load_with(&text, &[FLOW]);
    assert_eq!(sc.flow_count(), 16 + 2);
    assert_eq!((sc.workloads[1].first, sc.workloads[1].len(), sc.workloads[2].first), (0, 16, 16));
    assert_eq!(sc.collectives.len(), 1);
    assert_eq!(sc.collectives[0].steps.len(), 1);
    assert_eq!(sc.collectives[0].steps[0], 0..16);
    let out = csigsim::run(sc, |_| true);
    assert_eq!(out.summary.flows_completed, 18);
    let f = &out.tables.flows;
    assert_eq!((f.flow_name(15), f.flow_name(16)), ("coll0", "incast1"));
    let c = out.tables.collectives.as_ref().expect("collectives");
    assert_eq!((c.first_flow[0], c.flows[0], c.step[0], c.step[1]), (0, 16, Some(0), None));
}

/// Two runs of one scenario and seed write the same bytes.
#[test]
fn flow_level_outputs_are_byte_identical_across_runs() {
    let text = r#"
name = "websearch"
seed = 7
[topology]
kind = "fat_tree"
k = 4
rate = "100Gbps"
delay = "1us"
[monitor]
window = "10us"
[[workload]]
kind = "poisson"
cdf = "websearch"
load = 0.5
duration = "3ms"
"#;
    let a = csigsim::run(load_with(text, &[FLOW]), |_| true);
    let b = csigsim::run(load_with(text, &[FLOW]), |_| true);
    assert!(a.summary.flows_completed > 100);
    assert_eq!(a.summary.flows_completed as usize, a.summary.flows_total);
    assert_eq!(a.flows_csv(), b.flows_csv());
    assert_eq!(a.links_csv(), b.links_csv());
    let (mut sa, mut sb) = (a.summary.clone(), b.summary.clone());
    sa.wall_s = 0.0;
    sb.wall_s = 0.0;
    assert_eq!(serde_json::to_string(&sa).unwrap(), serde_json::to_string(&sb).unwrap());
}

/// Keys without meaning at flow level are accepted and listed; a fidelity
/// that does not exist is refused with its key.
#[test]
fn unmodelled_keys_are_listed_and_bad_fidelity_refused() {
    let out = csigsim::run(load_with(THREE_HOP, &[FLOW, "transport.cc=\"dctcp\"", "switch.ecn={ kmin = \"10KB\", kmax = \"40KB\", pmax = 0.1 }"]), |_| true);
    let listed = &out.summary.fidelity.as_ref().unwrap().not_modelled;
    assert!(listed.iter().any(|k| k == "transport.cc"), "{listed:?}");
    assert!(listed.iter().any(|k| k == "switch.ecn.kmin"), "{listed:?}");
    let e = csigsim::scenario::load_str(THREE_HOP, "t.toml", std::path::Path::new("."), &[csigsim::Override::parse("engine.fidelity=\"fluid\"").unwrap()], None).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("engine.fidelity"), "{e}");
    let _ = load(THREE_HOP);
}

/// Flow level against packet level on small versions of the rows of
/// docs/fidelity.md's error table: each error inside the bound the page
/// documents for its row (collective CCT 1%, incast max FCT 5%, ECMP
/// permutation max FCT 20%).
#[test]
fn flow_level_error_stays_inside_the_documented_bounds() {
    let ft4 = "[topology]\nkind = \"fat_tree\"\nk = 4\nrate = \"100Gbps\"\ndelay = \"1us\"\n";
    let ls2 = "[topology]\nkind = \"leaf_spine\"\nleaves = 4\nspines = 2\nhosts_per_leaf = 4\nrate = \"100Gbps\"\noversubscription = 2\ndelay = \"1us\"\n";
    let dctcp = "[switch]\nbuffer = \"32MB\"\necn = { kmin = \"100KB\", kmax = \"400KB\", pmax = 0.2 }\n[transport]\ncc = \"dctcp\"\nretransmit = \"selective\"\n";
    let ring = "[switch]\nmode = \"pfc\"\n[[workload]]\nkind = \"collective\"\nop = \"all_reduce\"\nsize = \"4MB\"\n";
    let tree = ring.replace("size = \"4MB\"\n", "size = \"4MB\"\nalgorithm = \"tree\"\n");
    let spray = dctcp.replace("[transport]", "routing = \"spray\"\n[transport]");
    let web = "[[workload]]\nkind = \"poisson\"\nload = 0.5\ncdf = \"websearch\"\nduration = \"1ms\"\n";
    // (row, scenario, the documented bounds of the error, the figure).
    let cases: Vec<(&str, String, (f64, f64), Figure)> = vec![
        ("ring all-reduce, non-blocking", format!("{ft4}{ring}"), (-0.01, 0.01), Figure::Cct),
        ("ring all-reduce, 2:1", format!("{ls2}{ring}"), (-0.01, 0.01), Figure::Cct),
        ("tree all-reduce, non-blocking", format!("{ft4}{tree}"), (-0.05, 0.05), Figure::Cct),
        ("tree all-reduce, 2:1", format!("{ls2}{tree}"), (-0.05, 0.05), Figure::Cct),
        ("incast 15 to 1", format!("{ft4}{dctcp}[[workload]]\nkind = \"incast\"\nreceiver = \"h0\"\ncount = 15\nsize = \"1MB\"\n"), (-0.05, 0.05), Figure::MaxFct),
        ("permutation, ECMP", format!("{ft4}{dctcp}[[workload]]\nkind = \"permutation\"\nsize = \"2MB\"\n"), (-0.20, 0.20), Figure::MaxFct),
        ("permutation, spray", format!("{ft4}{spray}[[workload]]\nkind = \"permutation\"\nsize = \"2MB\"\n"), (-0.90, 0.0), Figure::MaxFct),
        ("all-to-all, 2:1", format!("{ls2}{dctcp}[[workload]]\nkind = \"all_to_all\"\nsize = \"64KB\"\n"), (-0.90, 0.0), Figure::MaxFct),
        ("WebSearch 50%", format!("{ft4}{dctcp}{web}"), (-0.90, 0.10), Figure::SlowdownP99),
        ("Hadoop 50%", format!("{ft4}{dctcp}{}", web.replace("websearch", "hadoop")), (-0.90, 0.10), Figure::SlowdownP99),
    ];
    for (row, text, (lo, hi), which) in cases {
        let figure = |sets: &[&str]| {
            let out = csigsim::run(load_with(&text, sets), |_| true);
            assert_eq!(out.summary.flows_completed as usize, out.summary.flows_total, "{row}");
            match which {
                Figure::Cct => {
                    let t = out.tables.collectives.as_ref().expect("collectives.csv");
                    let total = t.step.iter().position(|s| s.is_none()).expect("instance row");
                    t.time_ps[total].unwrap() as f64
                }
                Figure::MaxFct => out.summary.fct_max_ns.unwrap(),
                Figure::SlowdownP99 => out.summary.slowdown_p99.unwrap(),
            }
        };
        let (packet, flow) = (figure(&[]), figure(&[FLOW]));
        let err = (flow - packet) / packet;
        println!("{row}: packet {packet:.3}, flow {flow:.3}, error {:+.2}%", err * 100.0);
        assert!((lo..=hi).contains(&err), "{row}: flow level {flow} against packet level {packet}: {:+.2}% is outside {:+.0}% .. {:+.0}%", err * 100.0, lo * 100.0, hi * 100.0);
    }
}

/// What a row of the error table compares.
#[derive(Clone, Copy)]
enum Figure {
    Cct,
    MaxFct,
    SlowdownP99,
}

/// Spraying on a non-blocking fat tree: every fabric link carries at most
/// one host's worth of any permutation, so every flow runs at its NIC's
/// rate and takes its ideal time; the links of a family (an edge switch's
/// uplinks, which the fluid fills as one) each carry the same bytes.
#[test]
fn a_sprayed_permutation_on_a_fat_tree_runs_at_line_rate() {
    let text = "name = \"spray\"\nseed = 5\n[topology]\nkind = \"fat_tree\"\nk = 4\nrate = \"100Gbps\"\ndelay = \"1us\"\n[switch]\nrouting = \"spray\"\n[[workload]]\nkind = \"permutation\"\nsize = \"2MB\"\n";
    let out = csigsim::run(load_with(text, &[FLOW]), |_| true);
    let f = &out.tables.flows;
    assert_eq!(out.summary.flows_completed, 16);
    for i in 0..16 {
        assert_eq!(f.fct_ps[i], Some(f.ideal_fct_ps[i]), "flow {i}");
    }
    let links = out.tables.links.as_ref().expect("links table");
    let tors: std::collections::BTreeSet<&str> = links.rows().filter(|r| r.from.starts_with("tor")).map(|r| r.from).collect();
    let bytes = |tor: &str, agg: &str| links.rows().filter(|r| r.from == tor && r.to == agg).map(|r| r.tx_bytes).sum::<u64>();
    let mut busy = 0;
    for tor in &tors {
        let aggs: std::collections::BTreeSet<&str> = links.rows().filter(|r| r.from == *tor && r.to.starts_with("agg")).map(|r| r.to).collect();
        let each: Vec<u64> = aggs.iter().map(|a| bytes(tor, a)).collect();
        if each.iter().all(|&b| b == 0) {
            continue;
        }
        assert_eq!(each.len(), 2, "{tor}");
        assert!(each[0].abs_diff(each[1]) <= 2, "{tor}: {each:?}");
        busy += (each[0] > 0) as usize;
    }
    assert!(busy >= 4, "most edge switches send up: {busy} of {}", tors.len());
}

/// A sprayed flow over two uplinks, one of which drops to a quarter of its
/// rate: it runs at 100 Gb/s (50 on each), then at 50 Gb/s (the slow
/// uplink full at 25 with half of the flow).
#[test]
fn a_sprayed_flow_slows_to_its_degraded_uplink() {
    let text = "name = \"degraded\"\n[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\nrate = \"100Gbps\"\ndelay = \"1us\"\n\
        [[topology.failure]]\nfrom = \"leaf0\"\nto = \"spine0\"\nat = \"20us\"\nrate_factor = 0.25\n\
        [switch]\nrouting = \"spray\"\n[[flow]]\nsrc = \"h0\"\ndst = \"h2\"\nsize = \"2MB\"\n";
    let out = csigsim::run(load_with(text, &[FLOW]), |_| true);
    let f = &out.tables.flows;
    let wire = 2_000_000 + 489 * 64 - 4160;
    let first = 4 * (tx_time_ps(4160, 100_000_000_000) + 1_000_000);
    let by_then = 100e9 * 20e-6 / 8.0;
    let rest = ((wire as f64 - by_then) * 8e12 / 50e9).ceil();
    let expect = 20_000_000.0 + rest + first as f64;
    let got = f.fct_ps[0].expect("done") as f64;
    assert!((got - expect).abs() <= 2.0, "{got} against {expect}");
}
