//! The source documents' experiments in their quick form
//! (`csigsim::repro`): every direction csigsim reproduces stays reproduced.
//! docs/reproductions.md explains the ones it does not.

use csigsim::repro::experiments;

/// Experiments whose source direction csigsim reproduces (quick form).
const REPRODUCED: &[&str] = &["S1", "S5", "S6", "S7"];

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
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
