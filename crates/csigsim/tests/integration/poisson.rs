//! Poisson arrivals with empirical sizes: the achieved load, the size
//! distribution (Kolmogorov-Smirnov), destinations and determinism.

use crate::common::{load, load_with};
use csigsim::workload::poisson::Cdf;

const FT: &str = "name = \"p\"\n[topology]\nkind = \"fat_tree\"\nk = 4\nrate = \"100Gbps\"\n";

fn poisson(cdf: &str, load_frac: f64, duration: &str) -> String {
    format!("{FT}[[workload]]\nkind = \"poisson\"\nload = {load_frac}\ncdf = \"{cdf}\"\nduration = \"{duration}\"\n")
}

/// Achieved offered load: payload bytes over what 16 links carry in `duration_ps`.
fn achieved(sizes: &[u64], duration_ps: u64) -> f64 {
    sizes.iter().sum::<u64>() as f64 * 8.0 / (16.0 * 100e9 * duration_ps as f64 / 1e12)
}

#[test]
fn achieved_load_is_within_two_percent_of_the_target() {
    // About 100,000 flows: the relative spread of a compound Poisson sum of
    // websearch sizes is sqrt(E[S^2]) / E[S] / sqrt(N), about 0.7% here, so a
    // 2% bound is near three standard deviations.
    for (cdf, target, duration_ps) in [("websearch", 0.3, 2_850_000_000_000u64), ("hadoop", 0.5, 150_000_000_000)] {
        let sc = load(&poisson(cdf, target, &format!("{}us", duration_ps / 1_000_000)));
        assert!(sc.flow_specs().len() > 90_000, "{cdf}: {} flows", sc.flow_specs().len());
        let sizes: Vec<u64> = sc.flow_specs().iter().map(|f| f.size).collect();
        let a = achieved(&sizes, duration_ps);
        assert!((a - target).abs() / target < 0.02, "{cdf}: achieved {a:.4} for {target}");
        assert!(sc.flow_specs().iter().all(|f| f.start.0 < duration_ps));
    }
}

#[test]
fn sizes_follow_the_distribution_by_kolmogorov_smirnov() {
    for cdf in ["websearch", "hadoop"] {
        let sc = load(&poisson(cdf, 0.3, if cdf == "websearch" { "300ms" } else { "30ms" }));
        let n = sc.flow_specs().len();
        assert!(n >= 10_000, "{cdf}: {n} flows");
        let mut sizes: Vec<f64> = sc.flow_specs().iter().map(|f| f.size as f64).collect();
        sizes.sort_by(f64::total_cmp);
        let dist = Cdf::named(cdf).unwrap();
        let mut d: f64 = 0.0;
        for (i, &x) in sizes.iter().enumerate() {
            let f = dist.at(x);
            d = d.max((f - i as f64 / n as f64).abs()).max(((i + 1) as f64 / n as f64 - f).abs());
        }
        // Critical value at the 1% level.
        let critical = 1.628 / (n as f64).sqrt();
        assert!(d < critical, "{cdf}: D = {d:.5}, critical {critical:.5} for n = {n}");
    }
}

#[test]
fn destinations_are_the_other_hosts_and_the_draw_is_per_seed() {
    let text = poisson("hadoop", 0.3, "10ms");
    let sc = load(&text);
    assert!(sc.flow_specs().iter().all(|f| f.src != f.dst));
    let mut seen = [[false; 16]; 16];
    for f in &sc.flow_specs() {
        seen[f.src.0 as usize][f.dst.0 as usize] = true;
    }
    let pairs = seen.iter().flatten().filter(|&&b| b).count();
    assert_eq!(pairs, 16 * 15, "every ordered pair of distinct hosts occurs");
    assert!(sc.flow_specs().windows(2).all(|w| w[0].start <= w[1].start), "flow ids in start order");
    assert_eq!(load(&text).flow_specs(), sc.flow_specs(), "same seed, same flows");
    assert_ne!(load_with(&text, &["seed=2"]).flow_specs(), sc.flow_specs());
}

#[test]
fn a_user_distribution_file_is_read_relative_to_the_scenario_and_errors_name_it() {
    let dir = std::env::temp_dir().join(format!("csigsim-poisson-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("fixed.cdf"), "# all flows 4096 bytes\n4096 0\n4096 100\n").unwrap();
    let text = poisson("fixed.cdf", 0.5, "1ms");
    let sc = csigsim::scenario::load_str(&text, "s.toml", &dir, &[], None).unwrap();
    assert!(!sc.flow_specs().is_empty() && sc.flow_specs().iter().all(|f| f.size == 4096));
    // 16 hosts x 0.5 x 100 Gb/s for 1 ms is 100 MB: about 24,400 flows of 4 KB.
    let n = sc.flow_specs().len() as f64;
    assert!((n - 24_414.0).abs() < 4.0 * 24_414f64.sqrt(), "{n}");
    std::fs::write(dir.join("bad.cdf"), "0 0\n100 50\n50 100\n").unwrap();
    let e = csigsim::scenario::load_str(&poisson("bad.cdf", 0.5, "1ms"), "s.toml", &dir, &[], None).unwrap_err();
    assert!(e.file.ends_with("bad.cdf") && e.line_col == Some((3, 1)), "{e}");
    let e = csigsim::scenario::load_str(&poisson("nope", 0.5, "1ms"), "s.toml", &dir, &[], None).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("workload[0].cdf"), "{e}");
    let e = csigsim::scenario::load_str(&poisson("hadoop", 0.0, "1ms"), "s.toml", &dir, &[], None).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("workload[0].load"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
