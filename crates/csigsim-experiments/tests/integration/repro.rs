//! The source documents' experiments in their quick form
//! (`csigsim_experiments::repro`): every direction csigsim reproduces stays
//! reproduced. docs/reproductions.md explains the ones it does not.

use csigsim_experiments::repro::{experiments, figure};

/// Experiments whose source direction csigsim reproduces (quick form).
const REPRODUCED: &[&str] = &["S1", "S2", "S5", "S6", "S7"];

#[test]
fn the_reproduced_directions_hold_in_the_quick_form() {
    let dir = std::env::temp_dir().join(format!("csigsim-repro-it-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for e in experiments() {
        e.write_files(&dir).unwrap();
        let r = e.run(true, &dir, |_, o| assert!(o.summary.invariants_ok, "{}: {:?}", e.id, o.summary.invariant_violations));
        println!("{}: {} (reproduced: {})", e.id, r.csigsim_figure, r.reproduced);
        for v in &r.variants {
            assert!(!v.figures.is_empty(), "{} {}", e.id, v.name);
            assert!(v.figures.iter().all(|f| f.1.is_finite()), "{} {}: {:?}", e.id, v.name, v.figures);
        }
        if REPRODUCED.contains(&e.id) {
            assert!(r.reproduced, "{}: {}", e.id, r.csigsim_figure);
        }
        if e.id == "S4" {
            // The 100 us view shows what the 1 s view averages away: the
            // busiest ToR uplink and the hot rack pair under ECMP.
            let ecmp = &r.variants[0].figures;
            assert!(figure(ecmp, "uplink_util_100us_peak") > 2.0 * figure(ecmp, "uplink_util_1s"), "{ecmp:?}");
            assert!(figure(ecmp, "hot_pair_abw_c_100us_min") < figure(ecmp, "hot_pair_abw_c_1s"), "{ecmp:?}");
            // Spraying ends ECMP's collisions: the job's busbw rises.
            assert!(figure(&r.variants[1].figures, "busbw_gbps") > figure(ecmp, "busbw_gbps"), "{}", r.csigsim_figure);
        }
        if e.id == "S8" {
            // Four queue pairs beat one under every seed (ECMP collisions
            // spread over more entropies).
            for s in 0..3 {
                let (qp1, split) = (&r.variants[5 * s].figures, &r.variants[5 * s + 3].figures);
                assert!(figure(split, "busbw_gbps") > figure(qp1, "busbw_gbps"), "{}", r.csigsim_figure);
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
