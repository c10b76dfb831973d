use csigsim::{Override, Scenario, World};
use std::path::Path;

pub fn load(toml: &str) -> Scenario {
    csigsim::scenario::load_str(toml, "test.toml", Path::new("."), &[], None).unwrap_or_else(|e| panic!("{e}"))
}

pub fn load_with(toml: &str, sets: &[&str]) -> Scenario {
    let ov: Vec<Override> = sets.iter().map(|s| Override::parse(s).unwrap()).collect();
    csigsim::scenario::load_str(toml, "test.toml", Path::new("."), &ov, None).unwrap_or_else(|e| panic!("{e}"))
}

pub fn world(toml: &str, sets: &[&str]) -> World {
    World::new(load_with(toml, sets))
}

/// A dumbbell: `n` senders on s0, one receiver on s1, s0-s1 the bottleneck.
pub fn dumbbell(n: usize, extra: &str) -> String {
    let mut hosts: Vec<String> = (0..n).map(|i| format!("\"h{i}\"")).collect();
    hosts.push("\"rx\"".into());
    let mut links: Vec<String> =
        (0..n).map(|i| format!("{{ a = \"h{i}\", b = \"s0\", rate = \"100Gbps\", delay = \"1us\" }}")).collect();
    links.push("{ a = \"s0\", b = \"s1\", rate = \"100Gbps\", delay = \"1us\" }".into());
    links.push("{ a = \"s1\", b = \"rx\", rate = \"100Gbps\", delay = \"1us\" }".into());
    format!(
        "name = \"dumbbell\"\n[topology]\nkind = \"custom\"\nhosts = [{}]\nswitches = [\"s0\", \"s1\"]\nlinks = [\n{}\n]\n{extra}\n",
        hosts.join(", "),
        links.join(",\n")
    )
}
