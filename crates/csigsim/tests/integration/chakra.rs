//! Chakra execution traces (`kind = "chakra"`): traces made by the
//! mlc-chakra package's own text converter (tests/data/chakra, with the
//! script that makes them) and traces written here with the crate's
//! message definitions.

use crate::common::{analytic_fct, star};
use csigsim::workload::chakra::et::{self, node_type, AttributeProto, GlobalMetadata, Node, Value};
use std::path::{Path, PathBuf};

fn data(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/chakra").join(dir)
}


/// The FCT of `size` bytes alone from one host to another through the switch.
fn alone(size: u64) -> u64 {
    let mut sizes = vec![4160u64; (size / 4096) as usize];
    if !size.is_multiple_of(4096) {
        sizes.push(size % 4096 + 64);
    }
    analytic_fct(&sizes, &[(100_000_000_000, 1_000_000), (100_000_000_000, 1_000_000)])
}

fn run_in(dir: &Path, scenario: &str) -> csigsim::output::RunOutput {
    let sc = csigsim::scenario::load_str(scenario, "t.toml", dir, &[], None).unwrap_or_else(|e| panic!("{e}"));
    csigsim::run(sc, |_| true)
}

/// When the run ended (its last ACK back, or its last compute).
fn end_ps(o: &csigsim::output::RunOutput) -> u64 {
    (o.summary.sim_time_ns * 1000.0).round() as u64
}

/// When the last flow arrived whole.
fn last_arrival(o: &csigsim::output::RunOutput) -> u64 {
    o.tables.flows.finish_ps.iter().map(|f| f.expect("every flow arrives")).max().expect("a flow")
}

/// The converter's data-parallel trace (3 layers; per layer 300 us of
/// forward, 500 us of weight-gradient and 500 us of input-gradient compute
/// and an all-reduce of 4 MiB; 3 iterations) on 8 and 64 ranks. Each
/// layer's all-reduce overlaps the backward compute below it, except the
/// first layer's, which the next iteration's forward pass waits for: an
/// iteration is 3 x 300 + 3 x 500 + 2 x 500 us of compute and one ring
/// all-reduce, 2 (n - 1) steps of 4 MiB / n each.
#[test]
fn data_parallel_iterations_take_the_compute_and_one_exposed_all_reduce() {
    for n in [8u32, 64] {
        let dir = data(&format!("dp{n}"));
        let out = run_in(&dir, &format!("{}[[workload]]\nkind = \"chakra\"\npath = \".\"\n", star(n)));
        assert_eq!(out.summary.flows_completed as u64, out.summary.flows_total as u64);
        let all_reduce = 2 * (n as u64 - 1) * alone(4_194_304 / n as u64);
        let iteration = (3 * 300 + 3 * 500 + 2 * 500) * 1_000_000 + all_reduce;
        let measured = last_arrival(&out) as f64 / 3.0;
        let err = measured / iteration as f64 - 1.0;
        eprintln!("{n} ranks: iteration {measured:.0} ps, analytic {iteration} ps ({:+.3}%)", 100.0 * err);
        assert!(err.abs() < 0.02, "{n} ranks: iteration {measured} ps, analytic {iteration} ps");
        // 3 iterations x 3 layers of ring all-reduce flows, a row each in collectives.csv.
        assert_eq!(out.tables.flows.len() as u64, 9 * 2 * (n as u64 - 1) * n as u64);
        let c = out.tables.collectives.as_ref().expect("collectives.csv");
        let whole: Vec<usize> = (0..c.step.len()).filter(|&i| c.step[i].is_none()).collect();
        assert_eq!(whole.len(), 9);
        assert!(whole.iter().all(|&i| c.time_ps[i].is_some_and(|t| t.abs_diff(all_reduce) < all_reduce / 50)), "{:?}", c.time_ps);
    }
}

/// The ring all-reduce of 1 MiB on 16 ranks of a k = 4 fat tree, three
/// ways: the native collective, the converter's Chakra trace of one
/// COMM_COLL node per rank, and a GOAL schedule of its point-to-point
/// steps. The completion times agree within 1%.
#[test]
fn a_collective_native_from_chakra_and_from_goal_completes_at_the_same_time() {
    let n = 16u32;
    let size = 1u64 << 20;
    let block = size / n as u64;
    let base = "name = \"three ways\"\n[topology]\nkind = \"fat_tree\"\nk = 4\nrate = \"100Gbps\"\ndelay = \"1us\"\n[switch]\nmode = \"pfc\"\n[transport]\ncc = \"none\"\n";
    let native = run_in(Path::new("."), &format!("{base}[[workload]]\nkind = \"collective\"\nop = \"all_reduce\"\nsize = \"{size}B\"\n"));
    let chakra = run_in(&data("allreduce16"), &format!("{base}[[workload]]\nkind = \"chakra\"\npath = \"ar\"\n"));
    let goal = crate::common::goal_ring_allreduce(n as usize, block);
    let dir = std::env::temp_dir().join(format!("csigsim-chakra-3ways-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("ring.goal"), &goal).unwrap();
    let goal = run_in(&dir, &format!("{base}[[workload]]\nkind = \"goal\"\nfile = \"ring.goal\"\nsend_done = \"delivered\"\n"));
    std::fs::remove_dir_all(&dir).unwrap();
    let (nat, ch, go) = (last_arrival(&native), last_arrival(&chakra), last_arrival(&goal));
    eprintln!("native {nat} ps, chakra {ch} ps, goal {go} ps");
    assert_eq!(native.tables.flows.len(), chakra.tables.flows.len());
    assert_eq!(native.tables.flows.len(), goal.tables.flows.len());
    // collectives.csv: the trace's collective has the native one's row.
    let whole = |o: &csigsim::output::RunOutput| {
        let t = o.tables.collectives.as_ref().expect("collectives.csv");
        (0..t.step.len()).filter(|&i| t.step[i].is_none()).map(|i| (t.op[i].clone(), t.ranks[i], t.size_bytes[i], t.time_ps[i])).collect::<Vec<_>>()
    };
    assert_eq!(whole(&chakra), whole(&native));
    for (what, t) in [("chakra", ch), ("goal", go)] {
        assert!((t as f64 / nat as f64 - 1.0).abs() < 0.01, "{what} {t} ps against native {nat} ps");
    }
}

pub(crate) fn attr(name: &str, v: Value) -> AttributeProto {
    AttributeProto { name: name.into(), doc_string: String::new(), value: Some(v) }
}

pub(crate) fn node(id: u64, ty: i32, deps: &[u64], attrs: Vec<AttributeProto>) -> Node {
    Node { id, name: format!("n{id}"), r#type: ty, data_deps: deps.to_vec(), attr: attrs, ..Default::default() }
}

pub(crate) fn comp(id: u64, micros: u64, deps: &[u64]) -> Node {
    Node { duration_micros: micros, ..node(id, node_type::COMP, deps, vec![attr("is_cpu_op", Value::BoolVal(false))]) }
}

pub(crate) fn send(id: u64, dst: i64, size: Value, deps: &[u64]) -> Node {
    node(id, node_type::COMM_SEND, deps, vec![attr("comm_dst", Value::Int64Val(dst)), attr("comm_size", size), attr("comm_tag", Value::Int64Val(1))])
}

pub(crate) fn recv(id: u64, src: i64, size: i64, deps: &[u64]) -> Node {
    node(id, node_type::COMM_RECV, deps, vec![attr("comm_src", Value::Int64Val(src)), attr("comm_size", Value::Int64Val(size)), attr("comm_tag", Value::Int64Val(1))])
}

/// Writes one file per rank (`t.<rank>.et`) into a fresh directory.
pub fn write_traces(tag: &str, ranks: &[Vec<Node>]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("csigsim-chakra-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (r, nodes) in ranks.iter().enumerate() {
        std::fs::write(dir.join(format!("t.{r}.et")), et::encode_stream(&GlobalMetadata { version: "0.0.4".into(), attr: vec![] }, nodes)).unwrap();
    }
    dir
}

/// Rank 0 computes 10 us and sends 1 MB to rank 1 (comm_size as uint64),
/// which computes 5 us once it has it: each time is exact, and the same
/// with comm_size as int64, and with the files gzipped.
#[test]
fn sends_receives_and_compute_run_in_order_whatever_the_integer_width_or_compression() {
    let mut ends = Vec::new();
    for (k, size) in [Value::Uint64Val(1_000_000), Value::Int64Val(1_000_000)].into_iter().enumerate() {
        let dir = write_traces(&format!("p2p{k}"), &[vec![comp(1, 10, &[]), send(2, 1, size, &[1])], vec![recv(7, 0, 1_000_000, &[]), comp(8, 5, &[7])]]);
        let mut w = csigsim::World::new(csigsim::scenario::load_str(&format!("{}[[workload]]\nkind = \"chakra\"\npath = \"t\"\n", star(2)), "t.toml", &dir, &[], None).unwrap());
        w.run(u64::MAX);
        let f = w.flows();
        assert_eq!((f[0].start_ps, f[0].finish_ps), (10_000_000, Some(10_000_000 + alone(1_000_000))));
        assert_eq!(w.now(), 10_000_000 + alone(1_000_000) + 5_000_000);
        ends.push(w.now());
        if k == 1 {
            use std::io::Write;
            for r in 0..2 {
                let plain = std::fs::read(dir.join(format!("t.{r}.et"))).unwrap();
                let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                gz.write_all(&plain).unwrap();
                std::fs::remove_file(dir.join(format!("t.{r}.et"))).unwrap();
                std::fs::write(dir.join(format!("t.{r}.et.gz")), gz.finish().unwrap()).unwrap();
            }
            let out = run_in(&dir, &format!("{}[[workload]]\nkind = \"chakra\"\npath = \".\"\n", star(2)));
            ends.push(end_ps(&out));
            assert_eq!(last_arrival(&out), 10_000_000 + alone(1_000_000));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
    assert!(ends.iter().all(|&e| e == ends[0]), "{ends:?}");
}

/// A collective on a communicator group of comm_group.json runs among its
/// members only; CPU ops run on the rank's CPU beside its GPU stream, or
/// take no time with cpu_ops = "skip".
#[test]
fn comm_groups_and_cpu_ops() {
    let coll = |id: u64, deps: &[u64]| {
        node(id, node_type::COMM_COLL, deps, vec![
            attr("comm_type", Value::Int64Val(et::comm_type::ALL_GATHER)),
            attr("comm_size", Value::Uint64Val(1 << 16)),
            attr("pg_name", Value::StringVal("pair".into())),
        ])
    };
    let cpu = Node { duration_micros: 50, ..node(1, node_type::COMP, &[], vec![attr("is_cpu_op", Value::BoolVal(true))]) };
    let ranks = vec![vec![cpu.clone(), comp(2, 20, &[]), coll(3, &[1, 2])], vec![comp(2, 20, &[]), coll(3, &[2])], vec![comp(1, 30, &[])]];
    let dir = write_traces("groups", &ranks);
    std::fs::write(dir.join("comm_group.json"), r#"{"pair": [0, 1]}"#).unwrap();
    let scenario = |extra: &str| format!("{}[[workload]]\nkind = \"chakra\"\npath = \".\"\n{extra}", star(3));
    let out = run_in(&dir, &scenario(""));
    // All-gather of two ranks: one flow each way, of half the data.
    assert_eq!(out.tables.flows.len(), 2);
    // Rank 0's CPU op (50 us) overlaps its GPU op (20 us): the collective begins at 50 us.
    assert_eq!(last_arrival(&out), 50_000_000 + alone(1 << 15));
    let skip = run_in(&dir, &scenario("cpu_ops = \"skip\""));
    assert_eq!(last_arrival(&skip), 20_000_000 + alone(1 << 15));
    // Rank 2 computes 30 us on its own, after the last ACK is back.
    assert_eq!(end_ps(&skip), 30_000_000);
    // Without the group file the node's group is unknown: refused, named.
    std::fs::remove_file(dir.join("comm_group.json")).unwrap();
    let e = csigsim::scenario::load_str(&scenario(""), "t.toml", &dir, &[], None).unwrap_err();
    assert!(e.file.ends_with("t.0.et") && e.msg.contains("rank 0, node 3") && e.msg.contains("group pair"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Inputs that cannot run are refused before the run, naming the rank's
/// file, the rank and the node (the CLI test checks the exit status).
#[test]
fn malformed_traces_are_refused_naming_file_rank_and_node() {
    let ok = || vec![vec![comp(1, 10, &[]), send(2, 1, Value::Int64Val(4096), &[1])], vec![recv(5, 0, 4096, &[])]];
    let check = |tag: &str, ranks: Vec<Vec<Node>>, file: &str, want: &[&str]| {
        let dir = write_traces(tag, &ranks);
        let e = csigsim::scenario::load_str(&format!("{}[[workload]]\nkind = \"chakra\"\npath = \"t\"\n", star(2)), "t.toml", &dir, &[], None).unwrap_err();
        assert!(e.file.ends_with(file), "{tag}: {e}");
        for w in want {
            assert!(e.msg.contains(w), "{tag}: {e} lacks {w}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    };
    let mut r = ok();
    r[1].clear();
    check("unmatched-send", r, "t.0.et", &["rank 0, node 2", "never receives"]);
    let mut r = ok();
    r[0].pop();
    check("unmatched-recv", r, "t.1.et", &["rank 1, node 5", "never matched"]);
    let mut r = ok();
    r[0][1] = send(2, 7, Value::Int64Val(4096), &[1]);
    check("unknown-rank", r, "t.0.et", &["rank 0, node 2", "comm_dst 7 is an unknown rank"]);
    let mut r = ok();
    r[0][0].r#type = 42;
    check("unknown-type", r, "t.0.et", &["rank 0, node 1", "node type 42"]);
    let mut r = ok();
    r[0][0].r#type = node_type::MEM_LOAD;
    check("mem-load", r, "t.0.et", &["rank 0, node 1", "MEM_LOAD_NODE is not modelled"]);
    let mut r = ok();
    r[0][0].data_deps = vec![2];
    check("cycle", r, "t.0.et", &["rank 0, node ", "waits for itself"]);
    let mut r = ok();
    r[0][0].ctrl_deps = vec![99];
    check("missing-dep", r, "t.0.et", &["rank 0, node 1", "node 99"]);
    let mut r = ok();
    r[0][0].attr.push(attr("flops", Value::Int64Val(1)));
    check("attribute", r, "t.0.et", &["rank 0, node 1", "attribute flops is not modelled"]);
    let mut r = ok();
    r[0][1].attr[1] = attr("comm_size", Value::DoubleVal(1.0));
    check("comm-size-type", r, "t.0.et", &["rank 0, node 2", "comm_size is a double"]);
    // Rank 1 has a second all-reduce that rank 0 lacks.
    let coll = |id: u64| node(id, node_type::COMM_COLL, &[], vec![attr("comm_type", Value::Int64Val(0)), attr("comm_size", Value::Int64Val(1 << 16))]);
    check("uneven-collectives", vec![vec![coll(1)], vec![coll(1), coll(2)]], "t.1.et", &["rank 1, node 2", "no counterpart in rank 0's trace", "could never finish"]);
    // Ranks that disagree on a collective's size.
    let mut r = vec![vec![coll(1)], vec![coll(1)]];
    r[1][0].attr[1] = attr("comm_size", Value::Int64Val(1 << 17));
    check("collective-size", r, "t.1.et", &["rank 1, node 1", "all_reduce of 131072 bytes here, all_reduce of 65536 bytes in rank 0's node 1"]);
    // A truncated file: the error names the byte offset of the cut message.
    let dir = write_traces("truncated", &ok());
    let bytes = std::fs::read(dir.join("t.1.et")).unwrap();
    std::fs::write(dir.join("t.1.et"), &bytes[..bytes.len() - 3]).unwrap();
    let e = csigsim::scenario::load_str(&format!("{}[[workload]]\nkind = \"chakra\"\npath = \"t\"\n", star(2)), "t.toml", &dir, &[], None).unwrap_err();
    let meta_len = et::encode_stream(&GlobalMetadata { version: "0.0.4".into(), attr: vec![] }, &[]).len();
    assert!(e.file.ends_with("t.1.et") && e.msg.contains(&format!("rank 1, byte offset {meta_len}")) && e.msg.contains("truncated"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// With `intra_server = "instant"` a message or collective step between
/// two NICs of one server takes no time and is no flow; with the default
/// it crosses the fabric.
#[test]
fn intra_server_transfers_cross_the_fabric_or_take_no_time() {
    let coll = |id: u64| {
        node(id, node_type::COMM_COLL, &[1], vec![attr("comm_type", Value::Int64Val(et::comm_type::ALL_REDUCE)), attr("comm_size", Value::Int64Val(1 << 20))])
    };
    let rank = |peer: i64, sends: bool| {
        let p2p = if sends { send(2, peer, Value::Int64Val(1 << 20), &[1]) } else { recv(2, peer, 1 << 20, &[1]) };
        vec![comp(1, 10, &[]), p2p, coll(3)]
    };
    // Ranks 0 and 1 on server h0's NICs, 2 and 3 on h1's; 0 sends to 1 and 3 to 2.
    let dir = write_traces("intra", &[rank(1, true), rank(0, false), rank(3, false), rank(2, true)]);
    let base = "name = \"servers\"\n[topology]\nkind = \"fat_tree\"\nk = 4\nnics = 2\nrate = \"100Gbps\"\ndelay = \"1us\"\n[transport]\ncc = \"none\"\n";
    let scenario = |extra: &str| format!("{base}[[workload]]\nkind = \"chakra\"\npath = \"t\"\nranks = [\"h0\", \"h1\"]\n{extra}");
    let network = run_in(&dir, &scenario(""));
    let instant = run_in(&dir, &scenario("intra_server = \"instant\""));
    // The ring 0 -> 1 -> 2 -> 3 -> 0: 6 steps of 4 flows, half of them within a server.
    assert_eq!(network.tables.flows.len(), 2 + 6 * 4);
    assert_eq!(instant.tables.flows.len(), 6 * 2);
    assert!(instant.tables.flows.src.iter().zip(&instant.tables.flows.dst).all(|(&s, &d)| s / 2 != d / 2));
    assert!(last_arrival(&instant) < last_arrival(&network));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The long trace of docs/workloads.md's memory figures: 1,024 ranks in
/// 128 groups of 8, each iteration 100 us of compute and then a 1 MiB
/// all-reduce per group. `ranks`, `group`, `iterations` as given.
pub fn long_trace(tag: &str, ranks: u32, group: u32, iterations: u32) -> PathBuf {
    let coll = |id: u64, g: u32| {
        node(id, node_type::COMM_COLL, &[id - 1], vec![
            attr("comm_type", Value::Int64Val(et::comm_type::ALL_REDUCE)),
            attr("comm_size", Value::Uint64Val(1 << 20)),
            attr("pg_name", Value::StringVal(format!("g{g}"))),
        ])
    };
    let per_rank: Vec<Vec<Node>> = (0..ranks)
        .map(|r| {
            let mut nodes = Vec::new();
            for i in 0..iterations as u64 {
                let deps: Vec<u64> = if i == 0 { vec![] } else { vec![2 * i] };
                nodes.push(Node { name: "forward".into(), ..comp(2 * i + 1, 100, &deps) });
                nodes.push(Node { name: "all_reduce".into(), ..coll(2 * i + 2, r / group) });
            }
            nodes
        })
        .collect();
    let dir = write_traces(tag, &per_rank);
    let groups: Vec<String> = (0..ranks / group).map(|g| format!("\"g{g}\": [{}]", (g * group..(g + 1) * group).map(|r| r.to_string()).collect::<Vec<_>>().join(", "))).collect();
    std::fs::write(dir.join("comm_group.json"), format!("{{{}}}", groups.join(", "))).unwrap();
    dir
}

/// The long trace on 16 ranks (two groups of 8) at 2 and at 8
/// iterations: the flows' transport states held at once are bounded by
/// the flows in flight (a ring step's, at most two a rank), whatever the
/// trace's length; the flows' records are the trace's every flow (the
/// part of the memory that still grows with it, docs/workloads.md).
#[test]
fn a_long_traces_flow_states_are_bounded_by_the_flows_in_flight() {
    use csigsim::{sim::RunState, World};
    for iterations in [2u32, 8] {
        let dir = long_trace(&format!("bounded{iterations}"), 16, 8, iterations);
        let toml = format!("{}[[workload]]\nkind = \"chakra\"\npath = \".\"\n", star(16));
        let sc = csigsim::scenario::load_str(&toml, "t.toml", &dir, &[], None).unwrap_or_else(|e| panic!("{e}"));
        let mut w = World::new(sc);
        while w.run(1 << 20) == RunState::Paused {}
        w.finish();
        let s = w.flow_store();
        // Per group and iteration 2 (8 - 1) steps of 8 flows.
        assert_eq!(s.len() as u32, 2 * iterations * 14 * 8);
        assert!(w.flows().iter().all(|f| f.finish_ps.is_some()));
        assert!(s.peak_live() <= 2 * 16, "{iterations} iterations: {} states held at once", s.peak_live());
        assert!(s.retired() >= s.len() - 16, "{} retired", s.retired());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// Writes the long trace for a measurement by hand:
/// `CSIGSIM_LONG_TRACE=ITERATIONS cargo test --release -p csigsim --test integration write_long_trace -- --ignored --nocapture`
/// prints the directory (1,024 ranks on a k = 16 fat tree).
#[test]
#[ignore = "writes a trace for a measurement by hand"]
fn write_long_trace() {
    let iterations = std::env::var("CSIGSIM_LONG_TRACE").ok().and_then(|s| s.parse().ok()).unwrap_or(10);
    let dir = long_trace(&format!("long{iterations}"), 1024, 8, iterations);
    println!("{}", dir.display());
}
