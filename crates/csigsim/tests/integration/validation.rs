//! Side-by-side validation against the reference simulators
//! (docs/validation.md): the scenarios of scenarios/validation under the
//! htsim-uec and ns3-rdma profiles, run with their documented defaults, against
//! the figures htsim (UEC) and the HPCC authors' ns-3 produced. Longer cases
//! (1024 hosts, the leaf-spines, WebSearch) are commands in docs/validation.md.

use csigsim::output::RunOutput;
use std::path::Path;

fn run(file: &str, sets: &[&str]) -> RunOutput {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/validation").join(file);
    let ov: Vec<csigsim::Override> = sets.iter().map(|s| csigsim::Override::parse(s).unwrap()).collect();
    let sc = csigsim::scenario::load_file(&path, &ov, None).unwrap_or_else(|e| panic!("{e}"));
    csigsim::run(sc, |_| true)
}

/// Sender-side FCTs (the time the sender saw the last ACK), in us, sorted;
/// every flow must have finished.
fn sender_fcts(out: &RunOutput) -> Vec<f64> {
    assert_eq!(out.summary.end_reason, "completed");
    let mut f: Vec<f64> = out.tables.flows.sender_fct_ps.iter().map(|t| t.expect("every flow finishes") as f64 / 1e6).collect();
    f.sort_by(f64::total_cmp);
    f
}

fn within(case: &str, got: f64, want: f64, tol: f64) {
    let r = got / want;
    println!("{case}: csigsim {got:.3} us, reference {want:.3} us, ratio {r:.4}");
    assert!((r - 1.0).abs() <= tol, "{case}: {got:.3} us against the reference's {want:.3} us is outside {tol}");
}

/// htsim `one`: a lone 2 MB flow across the k=4 fat tree finishes at the
/// analytic time (the first packet store-and-forward over 6 links, the rest at
/// 100 Gb/s, then the final 64 B ACK back over 6 links), which is htsim's
/// 176.200 us.
#[test]
fn htsim_one_is_the_analytic_fct() {
    let out = run("htsim_one.toml", &[]);
    let ft = &out.tables.flows;
    let ack_back = 6 * (csigsim::units::tx_time_ps(64, 100_000_000_000) + 1_000_000);
    assert_eq!(ft.fct_ps[0], Some(ft.ideal_fct_ps[0]), "alone at line rate: the ideal FCT");
    assert_eq!(ft.sender_fct_ps[0], Some(ft.ideal_fct_ps[0] + ack_back));
    within("htsim one", sender_fcts(&out)[0], 176.200, 0.0005);
    assert_eq!((out.summary.packets_trimmed, ft.retransmits[0]), (0, 0));
}

/// htsim's incasts and sprayed permutations (docs/validation.md, first table):
/// the tail FCT within the 5%. `incast128` (127 x 2 MB into one port
/// of the k=8 fat tree, more trims than packets) must complete: no livelock.
#[test]
fn htsim_tail_fcts_within_five_percent() {
    for (file, tail) in [
        ("htsim_incast16.toml", 2478.530),
        ("htsim_incast16to1_k8.toml", 2657.280),
        ("htsim_perm16_paths128.toml", 194.022),
        ("htsim_perm128.toml", 202.009),
        ("htsim_incast128.toml", 21029.3),
    ] {
        let out = run(file, &[]);
        let f = sender_fcts(&out);
        within(file, *f.last().unwrap(), tail, 0.05);
        assert!(out.summary.invariants_ok, "{file}");
    }
}

/// The ns-3 one-switch cases for each congestion control: the tail FCT
/// within the 10% (measured within 4%, docs/validation.md).
#[test]
fn ns3_dumbbell_and_incast_tails_within_ten_percent() {
    for (cc, dumbbell, incast) in
        [("dcqcn", 2180.079, 3424.317), ("hpcc", 1842.946, 2963.385), ("timely", 2049.746, 2945.950), ("dctcp", 1664.091, 2662.519)]
    {
        let set = format!("transport.cc={cc}");
        for (file, tail) in [("ns3_dumbbell.toml", dumbbell), ("ns3_incast16.toml", incast)] {
            let out = run(file, &[&set]);
            let f = sender_fcts(&out);
            within(&format!("{file} {cc}"), *f.last().unwrap(), tail, 0.10);
            assert_eq!((out.summary.pauses_sent, out.summary.packets_dropped), (0, 0), "no PAUSE and no drop, as in ns-3");
        }
    }
}
