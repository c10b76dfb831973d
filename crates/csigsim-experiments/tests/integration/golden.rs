//! The benchmark cases' share of the regression net: every output of every
//! benchmark case (at 128 hosts, links.csv on) is compared byte for byte
//! with the digests recorded in tests/golden/outputs.sha256, as the
//! engine's golden test does for the shipped scenarios.
//!
//! A change that is meant to move an output re-records the digests with
//! `CSIGSIM_BLESS=1 cargo test -p csigsim-experiments --test integration golden`
//! (and the engine's with `-p csigsim`) and says in its commit which outputs
//! moved and why. On a mismatch the outputs of this build are left in the
//! directory the failure message names.
//!
//! summary.json is compared without the engine's event counts, which
//! tests/golden/events.txt records on their own (events, link hops): a
//! change that only pops fewer events re-records that file alone.

use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn golden_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/outputs.sha256")
}

/// Run-time figures that depend on the machine, not the simulation, and the
/// engine's own counts (events popped, and events per link hop), which are
/// recorded apart in tests/golden/events.txt: an engine change that pops
/// fewer events moves those counts and nothing else, and the digests show it.
fn machine_neutral(mut s: csigsim::output::Summary) -> csigsim::output::Summary {
    s.wall_s = 0.0;
    s.link_hops_per_s = 0.0;
    s.events = 0;
    s.events_per_link_hop = 0.0;
    s
}

fn events_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/events.txt")
}

/// The recorded event counts: case to "events link_hops".
fn recorded_events() -> BTreeMap<String, String> {
    std::fs::read_to_string(events_file())
        .expect("tests/golden/events.txt (record it with CSIGSIM_BLESS=1)")
        .lines()
        .filter_map(|l| l.split_once(' ').map(|(k, v)| (k.to_string(), v.to_string())))
        .collect()
}

struct Case {
    name: String,
    toml: String,
}

fn cases() -> Vec<Case> {
    csigsim_experiments::bench::cases()
        .into_iter()
        .map(|c| {
            // Every benchmark case at 128 hosts (k = 8), links.csv on.
            let toml = c.toml.replace("k = 16", "k = 8").replace("k = 32", "k = 8").replace("links = false", "links = true");
            Case { name: format!("bench_{}", c.name), toml }
        })
        .collect()
}

/// What a case's run left: how it used threads, (file name, sha256 hex,
/// bytes) of every output, and "events link_hops".
struct Run {
    threads: csigsim::output::Threads,
    files: Vec<(String, String, usize)>,
    events: String,
}

/// Runs one case into `dir`.
fn run_case(c: &Case, dir: &Path, opts: csigsim::RunOptions) -> Run {
    let sc = csigsim::scenario::load_str(&c.toml, &c.name, Path::new("."), &[], None).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(dir).unwrap();
    let mut out = csigsim::run_with(sc, &opts, |_| true).unwrap();
    let events = format!("{} {}", out.summary.events, out.summary.link_hops);
    out.summary = machine_neutral(out.summary);
    out.write_dir(dir).unwrap();
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().to_string()).collect();
    names.sort();
    let files = names
        .into_iter()
        .map(|n| {
            let bytes = std::fs::read(dir.join(&n)).unwrap();
            let hex: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
            (n, hex, bytes.len())
        })
        .collect();
    Run { threads: out.threads, files, events }
}

/// The recorded outputs: "case/file" to "sha256 bytes".
fn recorded() -> BTreeMap<String, String> {
    std::fs::read_to_string(golden_file())
        .expect("tests/golden/outputs.sha256 (record it with CSIGSIM_BLESS=1)")
        .lines()
        .filter_map(|l| l.split_once(' ').map(|(k, v)| (k.to_string(), v.to_string())))
        .collect()
}

/// The parallel mode takes every case, and writes its recorded outputs cut
/// into two, three and four partitions, on one to four threads.
#[test]
fn every_bench_output_is_the_same_on_partitions_and_threads() {
    let root = std::env::temp_dir().join(format!("csigsim-bench-golden-parallel-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let expected = recorded();
    let expected_events = recorded_events();
    let mut cut = 0;
    let mut refused = Vec::new();
    for (i, c) in cases().iter().enumerate() {
        // Two partitions on two threads for every case; three on one
        // thread and four on four, or two on one and three on three, for
        // every other, to keep the test short.
        let runs: &[(usize, usize)] = if i % 2 == 0 { &[(2, 2), (3, 1), (4, 4)] } else { &[(2, 2), (2, 1), (3, 3)] };
        for &(partitions, threads) in runs {
            let opts = csigsim::RunOptions { partitions, threads, ..Default::default() };
            let dir = root.join(format!("{}-{partitions}-{threads}", c.name));
            let Run { threads: used, files, events } = run_case(c, &dir, opts);
            assert_eq!(expected_events.get(&c.name), Some(&events), "{} events on {partitions} partitions, {threads} threads", c.name);
            match used.refused {
                Some(why) => {
                    assert_eq!(used.partitions, 1);
                    refused.push(format!("{}: {why}", c.name));
                }
                None => {
                    assert_eq!(used.partitions, partitions as u32);
                    cut += 1;
                }
            }
            for (file, hex, len) in files {
                let k = format!("{}/{}", c.name, file);
                assert_eq!(expected.get(&k), Some(&format!("{hex} {len}")), "{k} on {partitions} partitions, {threads} threads");
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    assert!(refused.is_empty(), "{cut} runs cut; refused: {refused:#?}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn every_output_of_every_bench_case_is_unchanged() {
    let root = std::env::temp_dir().join(format!("csigsim-bench-golden-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let mut actual = BTreeMap::new();
    let mut actual_events = BTreeMap::new();
    for c in cases() {
        let run = run_case(&c, &root.join(&c.name), csigsim::RunOptions::default());
        for (file, hex, len) in run.files {
            actual.insert(format!("{}/{}", c.name, file), format!("{hex} {len}"));
        }
        actual_events.insert(c.name, run.events);
    }
    let text: String = actual.iter().map(|(k, v)| format!("{k} {v}\n")).collect();
    let events_text: String = actual_events.iter().map(|(k, v)| format!("{k} {v}\n")).collect();
    if std::env::var_os("CSIGSIM_BLESS").is_some() {
        std::fs::write(golden_file(), &text).unwrap();
        std::fs::write(events_file(), &events_text).unwrap();
        let _ = std::fs::remove_dir_all(&root);
        return;
    }
    let expected = recorded();
    let mut diffs = Vec::new();
    for (k, v) in &expected {
        match actual.get(k) {
            None => diffs.push(format!("missing now: {k}")),
            Some(a) if a != v => diffs.push(format!("changed: {k} (recorded {v}, now {a})")),
            _ => {}
        }
    }
    for k in actual.keys().filter(|k| !expected.contains_key(*k)) {
        diffs.push(format!("new output: {k}"));
    }
    let expected_events = recorded_events();
    for (k, v) in &actual_events {
        if expected_events.get(k) != Some(v) {
            diffs.push(format!("events of {k}: recorded {:?}, now {v} (events link_hops)", expected_events.get(k)));
        }
    }
    assert!(diffs.is_empty(), "{} outputs differ; this build's outputs are in {}:\n{}", diffs.len(), root.display(), diffs.join("\n"));
    let _ = std::fs::remove_dir_all(&root);
}
