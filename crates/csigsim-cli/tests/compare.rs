//! `csigsim compare`: two runs of two_hosts under different controls.

use std::path::Path;
use std::process::Command;

fn csigsim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_csigsim")).args(args).output().expect("runs")
}

#[test]
fn compare_reports_each_figure_of_both_runs_and_their_ratio() {
    let dir = std::env::temp_dir().join(format!("csigsim-compare-{}", std::process::id()));
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/two_hosts.toml");
    let (a, b) = (dir.join("a"), dir.join("b"));
    let s = scenario.to_str().unwrap();
    assert!(csigsim(&["run", s, "--out", a.to_str().unwrap(), "--quiet"]).status.success());
    assert!(csigsim(&["run", s, "--out", b.to_str().unwrap(), "--quiet", "--set", "transport.mtu=1024"]).status.success());
    let out = csigsim(&["compare", a.to_str().unwrap(), b.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The ratio is B / A of the values the runs wrote.
    let read = |d: &Path| -> serde_json::Value { serde_json::from_str(&std::fs::read_to_string(d.join("summary.json")).unwrap()).unwrap() };
    let (sa, sb) = (read(&a)["sim_time_ns"].as_f64().unwrap(), read(&b)["sim_time_ns"].as_f64().unwrap());
    assert_eq!(v["sim_time_ns"]["a"].as_f64(), Some(sa));
    assert_eq!(v["sim_time_ns"]["b"].as_f64(), Some(sb));
    assert!((v["sim_time_ns"]["ratio"].as_f64().unwrap() - sb / sa).abs() < 1e-12);
    assert!(v["fct_p99_us"]["b"].as_f64().unwrap() > v["fct_p99_us"]["a"].as_f64().unwrap(), "smaller packets take longer");
    let table = csigsim(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&table.stdout).lines().any(|l| l.starts_with("fct_p99_us")));
    let missing = csigsim(&["compare", dir.join("nope").to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("summary.json"));
    let _ = std::fs::remove_dir_all(&dir);
}
