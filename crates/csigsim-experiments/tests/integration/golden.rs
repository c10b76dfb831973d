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

use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn golden_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/outputs.sha256")
}

/// Run-time figures that depend on the machine, not the simulation.
fn machine_neutral(mut s: csigsim::output::Summary) -> csigsim::output::Summary {
    s.wall_s = 0.0;
    s.link_hops_per_s = 0.0;
    s
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

/// Runs one case into `dir`: how the run used threads, and (file name,
/// sha256 hex, bytes) of every output.
fn run_case(c: &Case, dir: &Path, opts: csigsim::RunOptions) -> (csigsim::output::Threads, Vec<(String, String, usize)>) {
    let sc = csigsim::scenario::load_str(&c.toml, &c.name, Path::new("."), &[], None).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(dir).unwrap();
    let mut out = csigsim::run_with(sc, &opts, |_| true).unwrap();
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
    (out.threads, files)
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
            let (used, files) = run_case(c, &dir, opts);
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
    for c in cases() {
        for (file, hex, len) in run_case(&c, &root.join(&c.name), csigsim::RunOptions::default()).1 {
            actual.insert(format!("{}/{}", c.name, file), format!("{hex} {len}"));
        }
    }
    let text: String = actual.iter().map(|(k, v)| format!("{k} {v}\n")).collect();
    if std::env::var_os("CSIGSIM_BLESS").is_some() {
        std::fs::write(golden_file(), &text).unwrap();
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
    assert!(diffs.is_empty(), "{} outputs differ; this build's outputs are in {}:\n{}", diffs.len(), root.display(), diffs.join("\n"));
    let _ = std::fs::remove_dir_all(&root);
}
