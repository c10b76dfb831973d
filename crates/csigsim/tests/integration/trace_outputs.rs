//! ops.csv, iterations.csv and the timeline of trace workloads: what each
//! rank did, its iterations' compute and exposed time against the trace's
//! own durations, and the trace-event file's structure.

use crate::common::star;
use csigsim::output::ops::{IterationTable, OpTable};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}


fn run_in(dir: &Path, scenario: &str) -> csigsim::output::RunOutput {
    let sc = csigsim::scenario::load_str(scenario, "t.toml", dir, &[], None).unwrap_or_else(|e| panic!("{e}"));
    csigsim::run(sc, |_| true)
}

/// The converter's data-parallel trace on 8 ranks: 3 iterations, each
/// rank's first node (layer 0's forward) beginning the next. Per rank and
/// iteration the compute is the trace's own, 3 x 300 + 3 x 500 + 2 x 500
/// us on one stream; the rest of the iteration is the first layer's
/// all-reduce, which the next forward pass waits for on the network.
#[test]
fn data_parallel_iterations_split_into_compute_and_the_exposed_all_reduce() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/chakra/dp8");
    let out = run_in(&dir, &format!("{}[[workload]]\nkind = \"chakra\"\npath = \".\"\n", star(8)));
    let ops: &OpTable = out.ops.as_ref().expect("ops.csv");
    let it: &IterationTable = out.iterations.as_ref().expect("iterations.csv");
    let compute = (3 * 300 + 3 * 500 + 2 * 500) * 1_000_000u64;
    assert_eq!(it.len(), 3 * 9, "3 iterations of 8 ranks and a totals row");
    for r in 0..it.len() {
        assert_eq!(it.ops_completed[r], it.ops[r]);
        assert_eq!(it.compute_ps[r], Some(compute), "row {r}");
        let (t, e) = (it.time_ps[r].unwrap(), it.exposed_ps[r].unwrap());
        assert_eq!(t - compute, e);
        // The all-reduce of 4 MiB on 8 ranks: 14 steps of 512 KiB, about 43 us each at 100 Gb/s.
        assert!((500_000_000..800_000_000).contains(&e), "row {r}: exposed {e} ps");
    }
    // Each row: ready, then start, then end; compute rows take the trace's durations.
    let mut first_of: HashMap<(u32, u32), usize> = HashMap::new();
    for i in 0..ops.len() {
        let (ready, start, end) = (ops.ready_ps[i].unwrap(), ops.start_ps[i].unwrap(), ops.end_ps[i].unwrap());
        assert!(ready <= start && start <= end, "row {i}");
        if ops.kind[i] == "compute" {
            assert!([300_000_000, 500_000_000].contains(&(end - start)), "row {i}: {}", end - start);
        }
        first_of.entry((ops.rank[i], ops.iteration[i])).or_insert(i);
    }
    assert_eq!(first_of.len(), 3 * 8);
    for (&(rank, iteration), &i) in &first_of {
        let expected = if iteration == 0 { "none" } else { "network" };
        assert_eq!(ops.waited_on[i].as_deref(), Some(expected), "rank {rank}, iteration {iteration}");
    }
    // summary.json leads with the same iterations.
    assert_eq!(out.summary.iterations.len(), 3);
    assert_eq!(out.summary.iterations[1].time_ns, it.time_ps[17].map(|t| t as f64 / 1000.0));
}

/// A GOAL operation is named by its label in ops.csv: the shipped ring
/// labels every rank's operations alike, `c<i>` for the compute of step
/// `i`, `s<i>_<k>` and `r<i>_<k>` for its sends and receives.
#[test]
fn goal_operations_are_named_by_their_labels() {
    let dir = repo().join("scenarios");
    let text = std::fs::read_to_string(dir.join("goal_ring_allreduce.toml")).unwrap();
    let out = run_in(&dir, &text);
    let ops = out.ops.as_ref().expect("ops.csv");
    let mut per_rank: Vec<Vec<&str>> = Vec::new();
    for i in 0..ops.len() {
        let (r, name) = (ops.rank[i] as usize, ops.names[ops.name[i] as usize].as_str());
        let want = match ops.kind[i].as_ref() {
            "compute" => "c",
            "send" => "s",
            "recv" => "r",
            k => panic!("kind {k}"),
        };
        assert!(name.starts_with(want) && name.len() > 1, "rank {r}: {name}");
        per_rank.resize(per_rank.len().max(r + 1), Vec::new());
        per_rank[r].push(name);
    }
    assert_eq!(per_rank.len(), 16);
    assert!(per_rank.iter().all(|p| *p == per_rank[0]), "every rank's labels are rank 0's");
    // Each label once in the table of names, with "" for none.
    assert_eq!(ops.names.len(), per_rank[0].len() + 1);
}

/// The shipped GOAL ring all-reduce as a trace-event file: every event has
/// ph, ts, pid and tid; slices on one thread never overlap; each rank's
/// operation slices are its started rows of ops.csv; the busiest links'
/// counters are there.
#[test]
fn the_timeline_has_a_track_per_rank_and_the_links_counters() {
    let dir = repo().join("scenarios");
    let text = std::fs::read_to_string(dir.join("goal_ring_allreduce.toml")).unwrap();
    let out = run_in(&dir, &text);
    let run = std::env::temp_dir().join(format!("csigsim-timeline-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&run);
    out.write_dir(&run).unwrap();
    let mut bytes = Vec::new();
    let stats = csigsim::output::timeline::write(&run, &mut bytes).unwrap();
    assert_eq!(stats.bytes, bytes.len() as u64);
    let v: serde_json::Value = serde_json::from_slice(&bytes).expect("the file is JSON");
    let events = v["traceEvents"].as_array().expect("traceEvents");
    assert_eq!(events.len() as u64, stats.events);
    let mut process: HashMap<u64, String> = HashMap::new();
    let mut thread: HashMap<(u64, u64), String> = HashMap::new();
    let mut slices: HashMap<(u64, u64), Vec<(f64, f64)>> = HashMap::new();
    let mut counters: HashMap<String, usize> = HashMap::new();
    for e in events {
        for k in ["ph", "ts", "pid", "tid"] {
            assert!(e.get(k).is_some(), "{e} lacks {k}");
        }
        let (pid, tid) = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
        match e["ph"].as_str().unwrap() {
            "M" if e["name"] == "process_name" => drop(process.insert(pid, e["args"]["name"].as_str().unwrap().to_string())),
            "M" if e["name"] == "thread_name" => drop(thread.insert((pid, tid), e["args"]["name"].as_str().unwrap().to_string())),
            "M" => {}
            "X" => {
                let (ts, dur) = (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap());
                assert!(dur >= 0.0);
                slices.entry((pid, tid)).or_default().push((ts, ts + dur));
            }
            "C" => *counters.entry(e["name"].as_str().unwrap().to_string()).or_default() += 1,
            p => panic!("unexpected phase {p}"),
        }
    }
    for (track, s) in &mut slices {
        s.sort_by(|a, b| a.partial_cmp(b).unwrap());
        for w in s.windows(2) {
            assert!(w[1].0 >= w[0].1 - 1e-9, "track {track:?}: {:?} overlaps {:?}", w[0], w[1]);
        }
    }
    // Per rank: the slices of its compute and network threads.
    let ops = out.ops.as_ref().unwrap();
    let ranks = 16;
    for r in 0..ranks {
        let rows = (0..ops.len()).filter(|&i| ops.rank[i] == r && ops.start_ps[i].is_some()).count();
        let pid = *process.iter().find(|(_, n)| n.starts_with(&format!("goal0 rank {r} "))).unwrap_or_else(|| panic!("no track of rank {r}")).0;
        let n: usize = slices.iter().filter(|((p, t), _)| *p == pid && thread[&(*p, *t)] != "waits").map(|(_, s)| s.len()).sum();
        assert_eq!(n, rows, "rank {r}");
    }
    assert!(thread.values().any(|t| t == "flows goal0"), "{thread:?}");
    let util = counters.keys().filter(|k| k.starts_with("utilization ")).count();
    assert_eq!(util, csigsim::output::timeline::BUSIEST_LINKS);
    assert_eq!(counters.keys().filter(|k| k.starts_with("queue ")).count(), util);
    let _ = std::fs::remove_dir_all(&run);
}
