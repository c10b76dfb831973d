//! Every shipped scenario validates, runs to completion and keeps its invariants.

use std::path::Path;

#[test]
fn every_shipped_scenario_runs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "toml") {
            continue;
        }
        let sc = csigsim::scenario::load_file(&p, &[], None).unwrap_or_else(|e| panic!("{e}"));
        let total = sc.flow_specs().len() as u64;
        let out = csigsim::run(sc, |_| true);
        assert!(out.summary.invariants_ok, "{}: {:?}", p.display(), out.summary.invariant_violations);
        if out.summary.end_reason == "completed" {
            assert_eq!(out.summary.flows_completed, total, "{}", p.display());
        }
        n += 1;
    }
    assert!(n >= 2);
}
