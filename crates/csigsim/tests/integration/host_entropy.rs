//! Per-packet entropy chosen by the sender (`transport.entropy`), switches
//! hashing it per packet (ECMP on the entropy).

use crate::common::world;

/// Two leaves, four spines; leaf0 -> spine0 at a quarter of its rate (as
/// htsim's `-failed`); every host of leaf 0 sends 4 MB to its peer on leaf 1,
/// the starts 1.3 us apart so that the flows' packets do not meet the
/// uplinks in the same picoseconds throughout.
fn degraded(entropy: &str, seed: u64) -> String {
    let mut s = format!(
        "name = \"degraded\"\nseed = {seed}\n[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 4\nhosts_per_leaf = 4\n\
         [[topology.failure]]\nfrom = \"leaf0\"\nto = \"spine0\"\nat = \"0s\"\nrate_factor = 0.25\n\
         [switch]\nmode = \"trim\"\nrouting = \"ecmp\"\necn = {{ kmin = \"20KB\", kmax = \"20KB\", pmax = 1.0 }}\n[transport]\ncc = \"dctcp\"\nretransmit = \"selective\"\nentropy = \"{entropy}\"\n[monitor]\nlinks = true\n"
    );
    for i in 0..4 {
        s += &format!("[[flow]]\nsrc = \"h{i}\"\ndst = \"h{}\"\nsize = \"4MB\"\nstart = \"{}ns\"\n", i + 4, 1300 * i);
    }
    s
}

/// The share of data bytes leaf0 sent over the degraded port.
fn run(entropy: &str, seed: u64) -> f64 {
    run_fct(entropy, seed).0
}

/// The same, and the slowest flow's completion time (ps).
fn run_fct(entropy: &str, seed: u64) -> (f64, u64) {
    let mut w = world(&degraded(entropy, seed), &[]);
    w.run_until(u64::MAX);
    w.finish();
    assert!(w.flows().iter().all(|f| f.finish_ps.is_some()), "{entropy}");
    assert_eq!(w.check_invariants(), Vec::<String>::new());
    let rows: Vec<u64> = w.observers().link_rows().expect("links monitored").map(|r| r.iter().map(|x| x.tx_bytes).sum()).collect();
    let ups: Vec<_> = (0..4).map(|s| crate::common::port(&w, "leaf0", &format!("spine{s}"))).collect();
    let share = rows[ups[0].ix()] as f64 / ups.iter().map(|p| rows[p.ix()]).sum::<u64>() as f64;
    (share, w.flows().iter().map(|f| f.finish_ps.unwrap() - f.start_ps).max().unwrap())
}

#[test]
fn reps_steers_away_from_a_degraded_link_that_oblivious_spraying_keeps() {
    for seed in 1..=3 {
        let (reps, reps_fct) = run_fct("reps", seed);
        let (obl, obl_fct) = run_fct("oblivious", seed);
        eprintln!("seed {seed}: reps {reps:.3} {reps_fct} oblivious {obl:.3} {obl_fct}");
        assert!(reps < obl - 0.05, "REPS {reps} vs oblivious {obl}");
        assert!(reps_fct < obl_fct, "REPS {reps_fct} vs oblivious {obl_fct}");
    }
}

#[test]
fn oblivious_spraying_spreads_over_every_path() {
    for seed in 1..=3 {
        let share = run("oblivious", seed);
        assert!((share - 0.25).abs() < 0.06, "{share}");
    }
    // One entropy per flow: four flows hash onto the uplinks unevenly.
    assert!((1..=3).map(|s| run("flow", s)).any(|share| (share - 0.25).abs() > 0.05));
}

#[test]
fn per_packet_entropy_runs_are_deterministic_per_seed() {
    assert_eq!(run("reps", 5).to_bits(), run("reps", 5).to_bits());
    assert_eq!(run("oblivious", 5).to_bits(), run("oblivious", 5).to_bits());
}

#[test]
fn random_spraying_spreads_over_every_path_and_is_deterministic_per_seed() {
    for seed in 1..=3 {
        let share = run("random", seed);
        assert!((share - 0.25).abs() < 0.08, "{share}");
    }
    assert_eq!(run("random", 5).to_bits(), run("random", 5).to_bits());
    assert_ne!(run("random", 5).to_bits(), run("random", 6).to_bits());
}


#[test]
fn bad_entropy_keys_are_refused_with_their_key() {
    for (set, key) in [
        ("transport.reps.evs=48", "transport.reps.evs"),
        ("transport.reps.buffer=0", "transport.reps.buffer"),
        ("transport.entropy=\"sprinkle\"", "transport.entropy"),
        ("transport.random.evs=0", "transport.random.evs"),
    ] {
        let entropy = if set.contains("buffer") {
            "reps"
        } else if set.contains("random") {
            "random"
        } else {
            "oblivious"
        };
        let ov = [csigsim::Override::parse(set).unwrap()];
        let e = csigsim::scenario::load_str(&degraded(entropy, 1), "bad.toml", std::path::Path::new("."), &ov, None).expect_err(set);
        let msg = e.to_string();
        assert!(msg.contains(key), "{msg}");
    }
}

/// S2's fabric under htsim's model with sender-side REPS: 4 leaves of 16
/// hosts, 4 spines, 800 Gbps (4:1 at the leaves); 15 flows from leaf 0 to
/// leaf 2 share leaf 0's four uplinks, 15 from leaf 3 to leaf 1 the spines'
/// links down to leaf 1. Reliable unordered delivery (the profile's)
/// acknowledges every 16 KiB, so most packets find nothing to recycle.
fn s2_under_htsim(fallback: &str) -> String {
    let mut s = format!(
        "profile = \"htsim-uec\"\nname = \"s2 reps\"\nseed = 1\n[topology]\nkind = \"leaf_spine\"\nleaves = 4\nspines = 4\nhosts_per_leaf = 16\nrate = \"800Gbps\"\ndelay = \"1us\"\n\
         [switch]\nrouting = \"ecmp\"\n[transport]\ncc = \"nscc\"\nentropy = \"reps\"\n[transport.reps]\nfallback = \"{fallback}\"\n[monitor]\nlinks = false\n"
    );
    for i in 0..15 {
        s += &format!("[[flow]]\nsrc = \"h{i}\"\ndst = \"h{}\"\nsize = \"2GB\"\n", 32 + i);
        s += &format!("[[flow]]\nsrc = \"h{}\"\ndst = \"h{}\"\nsize = \"2GB\"\n", 48 + i, 16 + i);
    }
    s
}

/// The spread (max - min) of the flows' delivered bytes from 1 to 4 ms,
/// over their mean.
fn s2_spread(fallback: &str) -> f64 {
    let mut w = world(&s2_under_htsim(fallback), &[]);
    let iv = crate::common::measure(&mut w, 1_000_000_000, 4_000_000_000, 100_000_000, None);
    let b = iv.wire_bytes(&w);
    let mean = b.iter().sum::<u64>() as f64 / b.len() as f64;
    let spread = (b.iter().max().unwrap() - b.iter().min().unwrap()) as f64 / mean;
    eprintln!("fallback {fallback}: spread {spread:.3} of a mean of {:.1} Gb/s", mean * 8.0 / 3e6);
    spread
}

#[test]
fn reps_with_the_bitmap_shares_sprayed_uplinks_more_evenly_than_with_random_draws() {
    let (bitmap, random) = (s2_spread("bitmap"), s2_spread("random"));
    // Measured 0.27 and 0.94 of a mean of 213 Gb/s.
    assert!(bitmap < 0.6 * random, "bitmap {bitmap:.3} random {random:.3}");
    assert!(bitmap < 0.35, "{bitmap:.3}");
}
