//! The scenarios the experiments build in are copies, kept in this crate so
//! that it stands alone as a package; the repository's `scenarios/` holds
//! the originals users run. Every copy must be byte-identical to its
//! original and built into an experiment, so the two can never drift.
//! After editing an original, copy it over the crate's copy.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn crate_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

fn repo_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

/// Every file under `dir`, by path relative to it (with `/`).
fn files(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
                out.push(rel);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// What the experiments build in: relative path to text.
fn built_in() -> BTreeMap<String, &'static str> {
    let mut m = BTreeMap::new();
    for e in csigsim_experiments::repro::experiments() {
        m.insert(e.scenario.to_string(), e.toml);
        let dir = Path::new(e.scenario).parent().map(|p| p.to_string_lossy().to_string()).unwrap_or_default();
        for (name, text) in e.files {
            let rel = if dir.is_empty() { name.to_string() } else { format!("{dir}/{name}") };
            m.insert(rel, *text);
        }
    }
    m
}

#[test]
fn every_built_in_scenario_is_its_copy_and_every_copy_is_built_in() {
    let built = built_in();
    let copies = files(&crate_dir());
    assert_eq!(built.keys().cloned().collect::<Vec<_>>(), copies, "the crate's scenarios/ holds exactly what the experiments build in");
    for (rel, text) in &built {
        assert_eq!(std::fs::read_to_string(crate_dir().join(rel)).unwrap(), *text, "{rel}");
    }
}

#[test]
fn every_copy_is_byte_identical_to_the_repositorys_scenario() {
    if !repo_dir().is_dir() {
        // Built from its package, outside the repository: nothing to compare.
        eprintln!("no repository scenarios/ beside the crate; copies not compared");
        return;
    }
    let mut drifted = Vec::new();
    for rel in files(&crate_dir()) {
        let copy = std::fs::read(crate_dir().join(&rel)).unwrap();
        match std::fs::read(repo_dir().join(&rel)) {
            Ok(original) if original == copy => {}
            Ok(_) => drifted.push(format!("{rel}: differs from scenarios/{rel}")),
            Err(e) => drifted.push(format!("{rel}: scenarios/{rel} unreadable ({e})")),
        }
    }
    assert!(
        drifted.is_empty(),
        "the crate's scenario copies must equal the repository's scenarios/ (copy the original over the copy):\n{}",
        drifted.join("\n")
    );
}
