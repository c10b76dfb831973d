//! `csigsim list`: every family a scenario can name, and each shipped
//! scenario and sweep file with a one-line description.

use std::path::Path;
use std::process::Command;

#[test]
fn list_names_host_load_balancing_profiles_sweeps_and_describes_scenarios() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new(env!("CARGO_BIN_EXE_csigsim")).arg("list").current_dir(&root).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let section = |title: &str| -> Vec<String> {
        let mut lines = text.lines().skip_while(|l| !l.starts_with(title)).skip(1);
        let mut v = Vec::new();
        for l in lines.by_ref() {
            if !l.starts_with("  ") {
                break;
            }
            v.push(l.trim().to_string());
        }
        v
    };
    let entropy = section("host-side load balancing");
    for name in ["flow", "oblivious", "reps", "csig"] {
        assert!(entropy.iter().any(|l| l.split_whitespace().next() == Some(name)), "{name}: {text}");
    }
    let qps = section("queue pairs per connection");
    for name in ["round robin", "striping", "cast"] {
        assert!(qps.iter().any(|l| l.starts_with(name)), "{name}: {text}");
    }
    let profiles = section("profiles");
    assert!(profiles.iter().any(|l| l.starts_with("htsim-uec ")) && profiles.iter().any(|l| l.starts_with("ns3-rdma ")), "{text}");
    // Every shipped scenario and sweep file, each with its description.
    for (dir, title) in [("scenarios", "scenarios ("), ("scenarios/sweeps", "sweep files")] {
        let listed = section(title);
        let files = std::fs::read_dir(root.join(dir)).unwrap().filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "toml")).count();
        assert_eq!(listed.len(), files, "{dir}: {text}");
        for l in &listed {
            let (file, about) = l.split_once(' ').unwrap_or((l, ""));
            assert!(file.ends_with(".toml") && about.trim().len() > 10, "{l}");
        }
    }
    assert!(text.contains("scenarios/websearch_poisson.toml") && text.contains("Web search traffic"), "{text}");
}
