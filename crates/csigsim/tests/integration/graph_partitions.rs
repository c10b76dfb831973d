//! Workload graphs (`kind = "chakra"`, `kind = "goal"`) run partitioned:
//! each operation's events go to the partition of its host, and every
//! output (the summary, flows.csv, ops.csv, iterations.csv,
//! collectives.csv) is the sequential run's on two, three and four
//! partitions. A graph whose operation waits for one complete in another
//! partition runs on one thread, the note naming both.

use crate::chakra::{comp, long_trace, recv, send, write_traces};
use csigsim::workload::chakra::et::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A k = 4 fat tree: four pods of four hosts, so up to four partitions.
const FAT_TREE: &str = "name = \"graph\"\nseed = 3\n[topology]\nkind = \"fat_tree\"\nk = 4\nrate = \"100Gbps\"\ndelay = \"1us\"\n[switch]\nmode = \"pfc\"\n[transport]\ncc = \"dcqcn\"\n";

/// What a run on `partitions` partitions (`threads` threads) left: how
/// many partitions it used, why it refused more, and every output file
/// (the summary without its wall-clock fields).
struct Run {
    partitions: u32,
    refused: Option<String>,
    files: BTreeMap<String, Vec<u8>>,
}

fn run(base: &Path, toml: &str, partitions: usize, threads: usize) -> Run {
    let sc = csigsim::scenario::load_str(toml, "graph.toml", base, &[], None).unwrap_or_else(|e| panic!("{e}"));
    let opts = csigsim::RunOptions { partitions, threads, ..Default::default() };
    let out = csigsim::run_with(sc, &opts, |_| true).unwrap();
    // One directory a run: the tests run side by side in one process.
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("csigsim-graph-parts-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    out.write_dir(&dir).unwrap();
    let mut files = BTreeMap::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let mut bytes = std::fs::read(&p).unwrap();
        if name == "summary.json" {
            let mut s: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            s["wall_s"] = 0.into();
            s["link_hops_per_s"] = 0.into();
            bytes = s.to_string().into_bytes();
        }
        files.insert(name, bytes);
    }
    std::fs::remove_dir_all(&dir).unwrap();
    Run { partitions: out.threads.partitions, refused: out.threads.refused.clone(), files }
}

/// How a run used partitions: how many, and why not more.
type Used = (u32, Option<String>);

/// Runs `toml` on one thread and on 2, 3 and 4 partitions; every output
/// file is the same byte for byte. Answers each run's (partitions used,
/// refusal) and the sequential run's files.
fn same_on_partitions(what: &str, base: &Path, toml: &str) -> (Vec<Used>, BTreeMap<String, Vec<u8>>) {
    let one = run(base, toml, 1, 1);
    assert_eq!(one.files.get("flows.csv").map(|f| f.is_empty()), Some(false), "{what}: flows.csv");
    let mut used = Vec::new();
    for (partitions, threads) in [(2, 2), (3, 1), (4, 4), (2, 1)] {
        let r = run(base, toml, partitions, threads);
        assert_eq!(r.files.keys().collect::<Vec<_>>(), one.files.keys().collect::<Vec<_>>(), "{what}: files on {partitions} partitions");
        for (name, bytes) in &one.files {
            assert!(r.files[name] == *bytes, "{what}: {name} differs on {partitions} partitions, {threads} threads");
        }
        used.push((r.partitions, r.refused));
    }
    (used, one.files)
}

/// Per run of [`same_on_partitions`] (2, 3, 4 and 2 partitions), the last
/// rank (host) of partition 0 on the k = 4 fat tree.
const LAST_RANK_BEFORE_CUT: [u32; 4] = [7, 3, 3, 7];

fn scenarios() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

/// The shipped GOAL schedule runs cut (each rank's sends complete when
/// they leave its NIC, its receives where they arrive); the shipped
/// Chakra trace's all-reduces over every rank do not: a rank's part is
/// complete when what it sent has arrived, in another partition.
#[test]
fn shipped_graph_scenarios_give_the_same_outputs_on_partitions() {
    let dir = scenarios();
    let goal = std::fs::read_to_string(dir.join("goal_ring_allreduce.toml")).unwrap();
    let (used, files) = same_on_partitions("goal_ring_allreduce", &dir, &goal);
    assert_eq!(used, vec![(2, None), (3, None), (4, None), (2, None)]);
    assert!(files.contains_key("ops.csv"));
    let chakra = std::fs::read_to_string(dir.join("chakra_data_parallel.toml")).unwrap();
    let (used, files) = same_on_partitions("chakra_data_parallel", &dir, &chakra);
    for (parts, why) in used {
        let why = why.expect("refused");
        assert_eq!(parts, 1);
        assert!(why.contains("waits for") && why.contains("another partition") && why.contains("wait for others"), "{why}");
    }
    assert!(["ops.csv", "iterations.csv", "collectives.csv"].iter().all(|f| files.contains_key(*f)), "{:?}", files.keys());
}

/// The long Chakra trace on 16 ranks in groups of 4 (one group a pod),
/// three iterations of 100 us of compute and an all-reduce per group:
/// cut on every number of partitions, with ops.csv, iterations.csv and
/// collectives.csv the sequential run's.
#[test]
fn a_chakra_trace_with_collectives_within_pods_runs_cut() {
    let dir = long_trace("parts", 16, 4, 3);
    let toml = format!("{FAT_TREE}[[workload]]\nkind = \"chakra\"\npath = \".\"\n");
    let (used, files) = same_on_partitions("long trace", &dir, &toml);
    assert_eq!(used, vec![(2, None), (3, None), (4, None), (2, None)]);
    assert!(["ops.csv", "iterations.csv", "collectives.csv"].iter().all(|f| files.contains_key(*f)), "{:?}", files.keys());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A pipeline over the 16 ranks: rank r receives three micro-batches from
/// rank r - 1, computes 10 us on each, and sends it on to rank r + 1, then
/// computes 5 us more (its next layer's bookkeeping) once the send is
/// done. Each pod's last rank sends across the cut.
fn pipeline() -> Vec<Vec<csigsim::workload::chakra::et::Node>> {
    (0..16i64)
        .map(|r| {
            let mut nodes = Vec::new();
            let mut last: Vec<u64> = vec![];
            for m in 0..3u64 {
                let id = 10 * m + 1;
                let got = if r > 0 {
                    nodes.push(recv(id, r - 1, 65_536, &last));
                    vec![id]
                } else {
                    last.clone()
                };
                nodes.push(comp(id + 1, 10, &got));
                if r < 15 {
                    nodes.push(send(id + 2, r + 1, Value::Int64Val(65_536), &[id + 1]));
                    nodes.push(comp(id + 3, 5, &[id + 2]));
                    last = vec![id + 3];
                } else {
                    last = vec![id + 1];
                }
            }
            nodes
        })
        .collect()
}

/// Sends complete when they leave the NIC (`send_done = "sent"`): every
/// dependency stays in its rank's partition, and the pipeline runs cut
/// with the sequential outputs. Complete only when delivered, the compute
/// after pod 0's last rank's send waits for an arrival in pod 1: refused
/// on every cut, the note naming the rank and both nodes.
#[test]
fn a_pipeline_runs_cut_unless_a_rank_waits_for_a_delivery_across_the_cut() {
    let dir = write_traces("pipeline-parts", &pipeline());
    let toml = format!("{FAT_TREE}[[workload]]\nkind = \"chakra\"\npath = \".\"\n");
    let (used, files) = same_on_partitions("pipeline", &dir, &toml);
    assert_eq!(used, vec![(2, None), (3, None), (4, None), (2, None)]);
    assert!(files.contains_key("ops.csv"));
    let delivered = format!("{toml}send_done = \"delivered\"\n");
    let (used, _) = same_on_partitions("pipeline, delivered", &dir, &delivered);
    // The last rank of the first partition (7 of 2 partitions' pods 0
    // and 1, 3 of 3 and 4 partitions' pod 0) sends across the cut; its
    // node 4 computes once node 3's message has arrived.
    for ((parts, why), last) in used.into_iter().zip(LAST_RANK_BEFORE_CUT) {
        let why = why.expect("refused");
        assert_eq!(parts, 1);
        assert!(why.contains(&format!("rank {last}'s compute 4 (n4) waits for rank {last}'s send 3 (n3)")) && why.contains("another partition"), "{why}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A GOAL ring all-reduce over the 16 ranks after compute (an odd rank
/// sends its first step at once), its sends complete when delivered: a step's receive is complete where
/// its message arrives, at the rank that sends the next step, so the ring
/// runs cut; a rank that computes once its own send is delivered, across
/// the cut, is refused.
#[test]
fn a_goal_ring_with_compute_runs_cut() {
    let dir = std::env::temp_dir().join(format!("csigsim-goal-parts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let n = 16;
    let mut goal = format!("num_ranks {n}\n");
    for r in 0..n {
        goal.push_str(&format!("rank {r} {{\nc: calc {}\n", 20_000 + 1_000 * r));
        for s in 0..2 * (n - 1) {
            goal.push_str(&format!("s{s}: send 32768b to {} tag {s}\nr{s}: recv 32768b from {} tag {s}\n", (r + 1) % n, (r + n - 1) % n));
            // An odd rank's first send waits for nothing: it begins at
            // its scheduled start, which only its receiver's partition,
            // where it is complete, writes.
            goal.push_str(&match s {
                0 if r % 2 == 1 => String::new(),
                0 => "s0 requires c\n".into(),
                _ => format!("s{s} requires r{}\n", s - 1),
            });
        }
        goal.push_str(&format!("d: calc 5000\nd requires r{}\n}}\n", 2 * n - 3));
    }
    std::fs::write(dir.join("ring.goal"), &goal).unwrap();
    let toml = format!("{FAT_TREE}[[workload]]\nkind = \"goal\"\nfile = \"ring.goal\"\nsend_done = \"delivered\"\n");
    let (used, files) = same_on_partitions("goal ring", &dir, &toml);
    assert_eq!(used, vec![(2, None), (3, None), (4, None), (2, None)]);
    assert!(files.contains_key("ops.csv"));
    // Ranks 0 to 7 compute last once their last send has arrived: across
    // the cut at the first partition's last rank.
    std::fs::write(dir.join("ring.goal"), goal.replacen(&format!("d requires r{}\n}}\n", 2 * n - 3), &format!("d requires s{}\n}}\n", 2 * n - 3), 8)).unwrap();
    let (used, _) = same_on_partitions("goal ring, waiting for a delivery", &dir, &toml);
    for ((parts, why), last) in used.into_iter().zip(LAST_RANK_BEFORE_CUT) {
        let why = why.expect("refused");
        assert_eq!(parts, 1);
        assert!(why.contains(&format!("rank {last}'s compute")) && why.contains(&format!("(d) waits for rank {last}'s send")) && why.contains("another partition"), "{why}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
