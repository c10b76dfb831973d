//! Same scenario and seed: byte-identical outputs. Another seed: different draws.

use crate::common::load_with;

const PERM: &str = r#"
name = "perm"
[topology]
kind = "fat_tree"
k = 4
[switch]
routing = "spray"
ecn = { kmin = "50KB", kmax = "200KB", pmax = 0.5 }
[transport]
cc = "dctcp"
[[workload]]
kind = "permutation"
size = "300KB"
"#;

fn strip_wall(j: &str) -> String {
    j.lines().filter(|l| !l.contains("\"wall_s\"") && !l.contains("\"link_hops_per_s\"")).collect::<Vec<_>>().join("\n")
}

#[test]
fn same_seed_gives_byte_identical_outputs() {
    let a = csigsim::run(load_with(PERM, &[]), |_| true);
    let b = csigsim::run(load_with(PERM, &[]), |_| true);
    assert_eq!(a.tables, b.tables);
    assert_eq!(a.flows_csv(), b.flows_csv());
    assert_eq!(a.links_csv(), b.links_csv());
    assert_eq!(strip_wall(&a.summary_json()), strip_wall(&b.summary_json()));
    assert_eq!(a.summary.flows_completed, 16);
}

#[test]
fn another_seed_changes_the_permutation_and_the_spray() {
    let a = csigsim::run(load_with(PERM, &[]), |_| true);
    let b = csigsim::run(load_with(PERM, &["seed=7"]), |_| true);
    assert_ne!(a.tables.flows, b.tables.flows);
}

#[test]
fn two_simulations_in_one_process_do_not_interfere() {
    let sc = load_with(PERM, &[]);
    let mut w1 = csigsim::World::new(sc.clone());
    let mut w2 = csigsim::World::new(sc.clone());
    // Interleave the two worlds event batch by event batch.
    loop {
        let a = w1.run(1000);
        let b = w2.run(1000);
        if a == csigsim::sim::RunState::Idle && b == csigsim::sim::RunState::Idle {
            break;
        }
    }
    let solo = csigsim::run(sc, |_| true);
    let fin = |w: &csigsim::World| w.flows().iter().map(|f| f.finish_ps).collect::<Vec<_>>();
    assert_eq!(fin(&w1), fin(&w2));
    assert_eq!(fin(&w1), solo.tables.flows.finish_ps);
}

/// Every congestion control, with the signals it reads and cc.csv on: two runs
/// of the same seed agree to the byte, and every flow completes.
#[test]
fn every_congestion_control_is_deterministic() {
    for (cc, extra) in [
        ("none", vec![]),
        ("dctcp", vec![]),
        ("dcqcn", vec![]),
        ("dcqcn_rev", vec!["switch.ecn.mode=\"ecp\""]),
        ("timely", vec![]),
        ("swift", vec!["signals.csig.type=\"abw_c\"", "transport.swift.fast_ramp_up=true"]),
        ("hpcc", vec!["signals.int.max_hops=5"]),
        ("nscc", vec!["signals.csig.type=\"delay\"", "transport.nscc.delay_signal=\"csig\""]),
        ("mcc", vec![]),
    ] {
        let cc_set = format!("transport.cc=\"{cc}\"");
        let mut sets = vec![cc_set.as_str(), "monitor.cc=true", "switch.mode=\"pfc\""];
        sets.extend(extra.iter().copied());
        let a = csigsim::run(load_with(PERM, &sets), |_| true);
        let b = csigsim::run(load_with(PERM, &sets), |_| true);
        assert_eq!(a.summary.flows_completed, 16, "{cc}");
        assert_eq!(a.flows_csv(), b.flows_csv(), "{cc}");
        assert_eq!(a.cc_csv(), b.cc_csv(), "{cc}");
        assert!(a.tables.cc.as_ref().unwrap().len() > 15, "{cc}: cc.csv has rows");
        assert_eq!(strip_wall(&a.summary_json()), strip_wall(&b.summary_json()), "{cc}");
    }
}

/// Every host-side load balancing mode, on the degraded-link scenario as
/// servers of 2 NICs with the messages of 4-QP connections: the same seed
/// gives the same bytes, another seed other choices.
#[test]
fn every_host_load_balancing_mode_is_deterministic() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/lb_degraded_link.toml");
    let base = std::fs::read_to_string(path).unwrap().replace("hosts_per_leaf = 4", "hosts_per_leaf = 4\nnics = 2");
    for (mode, extra) in [
        ("flow", vec![]),
        ("oblivious", vec![]),
        ("reps", vec![]),
        ("csig", vec![]),
        ("flow", vec!["transport.connection.qps=4", "transport.connection.split_data=true", "transport.connection.qp_sched.enable=true"]),
    ] {
        let m = format!("transport.entropy=\"{mode}\"");
        let mut sets = vec![m.as_str()];
        sets.extend(extra.iter().copied());
        let a = csigsim::run(load_with(&base, &sets), |_| true);
        let b = csigsim::run(load_with(&base, &sets), |_| true);
        assert_eq!(a.summary.flows_completed as usize, a.summary.flows_total, "{mode} {extra:?}");
        assert_eq!(a.flows_csv(), b.flows_csv(), "{mode} {extra:?}");
        assert_eq!(strip_wall(&a.summary_json()), strip_wall(&b.summary_json()), "{mode} {extra:?}");
        sets.push("seed=2");
        let c = csigsim::run(load_with(&base, &sets), |_| true);
        assert_ne!(a.flows_csv(), c.flows_csv(), "{mode} {extra:?}: another seed");
    }
}
