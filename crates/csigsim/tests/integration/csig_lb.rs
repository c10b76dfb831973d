//! CSIG-guided path choice (`transport.entropy = "csig"`) against the other
//! load balancers on the shipped degraded-link scenario, and the last-hop
//! rule under an incast.

use crate::common::{port, world};

const SCENARIO: &str = include_str!("../../../../scenarios/lb_degraded_link.toml");

/// The variants of docs/lb.md's table, as overrides of the shipped scenario.
const VARIANTS: &[(&str, &[&str])] = &[
    ("ecmp", &["transport.entropy=\"flow\""]),
    ("spray", &["transport.entropy=\"flow\"", "switch.routing=\"spray\""]),
    ("adaptive", &["transport.entropy=\"flow\"", "switch.routing=\"adaptive\""]),
    ("oblivious", &["transport.entropy=\"oblivious\""]),
    ("reps", &["transport.entropy=\"reps\""]),
    ("csig", &[]),
];

/// The slowest flow's FCT (ps) and the degraded link's share (both
/// directions) of the bytes sent over leaf-spine links.
fn run(toml: &str, sets: &[&str], seed: u64) -> (u64, f64) {
    let seed = format!("seed={seed}");
    let mut all: Vec<&str> = sets.to_vec();
    all.push(&seed);
    let mut w = world(toml, &all);
    w.run_until(u64::MAX);
    w.finish();
    assert!(w.flows().iter().all(|f| f.finish_ps.is_some()), "{sets:?}");
    assert_eq!(w.check_invariants(), Vec::<String>::new());
    let rows: Vec<u64> = w.observers().link_rows().expect("links monitored").map(|r| r.iter().map(|x| x.tx_bytes).sum()).collect();
    let (mut fabric, mut degraded) = (0u64, 0u64);
    for l in 0..4 {
        for s in 0..4 {
            let (leaf, spine) = (format!("leaf{l}"), format!("spine{s}"));
            let bytes = rows[port(&w, &leaf, &spine).ix()] + rows[port(&w, &spine, &leaf).ix()];
            fabric += bytes;
            if l == 0 && s == 0 {
                degraded = bytes;
            }
        }
    }
    let fct = w.flows().iter().map(|f| f.finish_ps.unwrap() - f.start_ps).max().unwrap();
    (fct, degraded as f64 / fabric as f64)
}

#[test]
fn csig_guided_puts_the_least_on_the_degraded_link() {
    for seed in 1..=3 {
        let r: Vec<(u64, f64)> = VARIANTS.iter().map(|(_, sets)| run(SCENARIO, sets, seed)).collect();
        for ((name, _), (fct, share)) in VARIANTS.iter().zip(&r) {
            eprintln!("seed {seed} {name}: slowest {:.1} us, degraded share {share:.4}", *fct as f64 / 1e6);
        }
        let (csig_fct, csig) = r[5];
        // Below what the policies blind to the link put on it, and below REPS
        // (which learns only from ECN marks).
        for (i, (name, _)) in VARIANTS.iter().enumerate().take(5) {
            assert!(csig < r[i].1, "seed {seed}: csig {csig} vs {name} {}", r[i].1);
        }
        // Uniform spreading would put 1/16 on it; the link carries a quarter of a link.
        assert!(csig < 1.0 / 16.0 * 0.6, "{csig}");
        // The slowest flow finishes sooner than under ECMP and oblivious spraying.
        assert!(csig_fct < r[0].0 && csig_fct < r[3].0, "seed {seed}: {csig_fct} vs {} / {}", r[0].0, r[3].0);
    }
}

#[test]
fn csig_guided_runs_are_deterministic_per_seed() {
    assert_eq!(run(SCENARIO, &[], 7), run(SCENARIO, &[], 7));
}

/// Twelve hosts of leaves 1 to 3 send 1 MB each to h0: the bottleneck is
/// leaf0's downlink to h0, which every path shares.
fn incast() -> String {
    let base = SCENARIO.split("[[topology.failure]]").next().unwrap();
    let rest = &SCENARIO[SCENARIO.find("[switch]").unwrap()..];
    let rest = &rest[..rest.find("[[workload]]").unwrap()];
    let mut s = format!("{base}{rest}");
    for h in 4..16 {
        s += &format!("[[flow]]\nsrc = \"h{h}\"\ndst = \"h0\"\nsize = \"1MB\"\n");
    }
    s
}

/// Per sender: (samples used, samples held, mean estimate over sampled paths).
fn incast_paths(rule: bool) -> Vec<(u64, u64, f64)> {
    let set = format!("transport.csig_paths.last_hop_rule={rule}");
    let mut w = world(&incast(), &[&set]);
    w.keep_flow_states();
    w.run_until(u64::MAX);
    w.finish();
    assert!(w.flows().iter().all(|f| f.finish_ps.is_some()));
    (0..w.flows().len())
        .map(|i| {
            let c = w.flow_state(i).expect("kept").host_lb().and_then(|l| l.get::<csigsim::lb::csig_paths::CsigPaths>()).expect("csig entropy");
            let est: Vec<f64> = (0..c.paths()).filter_map(|i| c.estimate(i)).collect();
            (c.used(), c.held(), est.iter().sum::<f64>() / est.len() as f64)
        })
        .collect()
}

#[test]
fn the_last_hop_rule_keeps_an_incast_from_moving_the_weights() {
    let on = incast_paths(true);
    let off = incast_paths(false);
    for (i, ((used, held, est_on), (_, held_off, est_off))) in on.iter().zip(&off).enumerate() {
        eprintln!("flow {i}: used {used} held {held} estimate {est_on:.3e} (rule off: {est_off:.3e})");
        // Most ACKs name h0's downlink; the rule keeps them out.
        assert!(*held > *used, "flow {i}: {held} held, {used} used");
        assert_eq!(*held_off, 0);
        // The estimates stay those of the (lightly loaded) fabric hops,
        // not the receiver's saturated downlink.
        assert!(*est_on > 50e9, "flow {i}: {est_on}");
        assert!(*est_off < est_on / 2.0, "flow {i}: {est_off} vs {est_on}");
    }
}

#[test]
fn csig_entropy_needs_min_abw_tags() {
    let no_abw = SCENARIO.replace("type = \"abw\"", "type = \"delay\"");
    let no_tags = SCENARIO.split("[signals.csig]").next().unwrap().to_string() + "[[workload]]\nkind = \"permutation\"\nsize = \"2MB\"\n";
    for (toml, got) in [(no_abw, "\"delay\""), (no_tags, "none")] {
        let e = csigsim::scenario::load_str(&toml, "bad.toml", std::path::Path::new("."), &[], None).expect_err(got);
        let msg = e.to_string();
        assert!(msg.contains("transport.entropy") && msg.contains("signals.csig") && msg.contains(got), "{msg}");
    }
    let abw_c = SCENARIO.replace("type = \"abw\"", "type = \"abw_c\"");
    assert!(csigsim::scenario::load_str(&abw_c, "ok.toml", std::path::Path::new("."), &[], None).is_ok());
    for (set, key) in [("transport.csig_paths.paths=0", "transport.csig_paths.paths"), ("transport.csig_paths.gain=0.0", "transport.csig_paths.gain")] {
        let ov = [csigsim::Override::parse(set).unwrap()];
        let e = csigsim::scenario::load_str(SCENARIO, "bad.toml", std::path::Path::new("."), &ov, None).expect_err(set);
        assert!(e.to_string().contains(key), "{e}");
    }
}

/// The same fabric under an all-to-all of 256 KB flows.
fn all_to_all() -> String {
    SCENARIO.replace("kind = \"permutation\"\nsize = \"2MB\"", "kind = \"all_to_all\"\nsize = \"256KB\"")
}

#[test]
fn under_all_to_all_csig_guided_beats_ecmp_but_not_reps() {
    let a2a = all_to_all();
    assert_ne!(a2a, SCENARIO);
    for seed in 1..=3 {
        let (ecmp_fct, ecmp) = run(&a2a, VARIANTS[0].1, seed);
        let (reps_fct, reps) = run(&a2a, VARIANTS[4].1, seed);
        let (csig_fct, csig) = run(&a2a, &[], seed);
        eprintln!("seed {seed}: ecmp {ecmp_fct} {ecmp:.4} reps {reps_fct} {reps:.4} csig {csig_fct} {csig:.4}");
        // Short flows, each learning its own paths from few ACKs whose min(ABW)
        // is mostly the receivers' downlinks: CSIG-guided keeps more on the
        // slow link than REPS, and its slowest flow is later.
        assert!(reps < csig && reps_fct < csig_fct, "seed {seed}");
        assert!(csig_fct < ecmp_fct, "seed {seed}: {csig_fct} vs {ecmp_fct}");
    }
}
