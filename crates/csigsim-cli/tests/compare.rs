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

/// The CLOS incast with a victim under PFC alone and under DCQCN, with CSIG
/// max(Delay) tags: throughput per flow name and the bottleneck map.
#[test]
fn compare_gives_throughput_per_named_group_and_the_bottleneck_map() {
    let dir = std::env::temp_dir().join(format!("csigsim-compare-groups-{}", std::process::id()));
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/clos_incast_victim.toml");
    let (a, b) = (dir.join("a"), dir.join("b"));
    let s = scenario.to_str().unwrap();
    let tag = "signals.csig.type=\"delay\"";
    assert!(csigsim(&["run", s, "--out", a.to_str().unwrap(), "--quiet", "--set", tag]).status.success());
    assert!(csigsim(&["run", s, "--out", b.to_str().unwrap(), "--quiet", "--set", tag, "--set", "transport.cc=\"dcqcn\""]).status.success());
    let out = csigsim(&["compare", a.to_str().unwrap(), b.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Each named flow's throughput is its size over its FCT (one flow per name here).
    let flows = std::fs::read_to_string(a.join("flows.csv")).unwrap();
    let victim = flows.lines().find(|l| l.contains(",F3 victim,")).expect("victim row");
    let cells: Vec<&str> = victim.split(',').collect();
    let (size, fct): (f64, f64) = (cells[4].parse().unwrap(), cells[7].parse().unwrap());
    let got = v["throughput_gbps[F3 victim]"]["a"].as_f64().unwrap();
    assert!((got - size * 8.0 / fct).abs() < 1e-9, "{got}");
    for name in ["F0", "F1", "F4", "F8"] {
        assert!(v[format!("throughput_gbps[{name}]")]["b"].as_f64().is_some(), "{name}");
    }
    // The bottleneck map: the shared uplinks the docs name, shares adding to 1.
    let shares: Vec<(&String, f64)> =
        v.as_object().unwrap().iter().filter(|(k, _)| k.starts_with("bottleneck_share[")).map(|(k, x)| (k, x["a"].as_f64().unwrap())).collect();
    let ports: Vec<&str> = shares.iter().map(|(k, _)| &k["bottleneck_share[".len()..k.len() - 1]).collect();
    assert!(ports.iter().all(|p| ["tor0->agg0", "agg0->spine0"].contains(p)), "{ports:?}");
    assert!((shares.iter().map(|s| s.1).sum::<f64>() - 1.0).abs() < 1e-9);
    let _ = std::fs::remove_dir_all(&dir);
}
