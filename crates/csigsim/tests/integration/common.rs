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

/// What happened over an interval of a run: packets each flow had in order
/// at its end minus at its start, and the largest data queue sampled at a port.
pub struct Interval {
    pub packets: Vec<u64>,
    pub max_queue: u64,
}

impl Interval {
    /// Wire bytes (payload and header) of the packets each flow received.
    pub fn wire_bytes(&self, w: &World) -> Vec<u64> {
        let t = &w.scenario().transport;
        self.packets.iter().map(|p| p * (t.mtu + t.header) as u64).collect()
    }

    /// Payload bytes of the packets each flow received.
    pub fn payload_bytes(&self, w: &World) -> Vec<u64> {
        self.packets.iter().map(|p| p * w.scenario().transport.mtu as u64).collect()
    }
}

/// Runs `w` to `t0`, then to `t1` in steps of `step` ps, sampling the data
/// queue of `port` (if given) after every step.
pub fn measure(w: &mut World, t0: u64, t1: u64, step: u64, port: Option<u32>) -> Interval {
    w.run_until(t0);
    let before: Vec<u64> = w.flows().iter().map(|f| f.rcv_nxt as u64).collect();
    let mut max_queue = 0;
    let mut t = t0;
    while t < t1 {
        t += step;
        w.run_until(t);
        if let Some(p) = port {
            max_queue = max_queue.max(w.ports()[p as usize].queue_bytes());
        }
    }
    let packets = w.flows().iter().zip(before).map(|(f, b)| f.rcv_nxt as u64 - b).collect();
    Interval { packets, max_queue }
}

/// The egress port of the directed link `from` -> `to` (node names).
pub fn port(w: &World, from: &str, to: &str) -> u32 {
    w.port_between(from, to).unwrap_or_else(|| panic!("no link {from} -> {to}"))
}

/// Jain's fairness index of `x`: 1 when all are equal, 1/n when one has everything.
pub fn jain(x: &[u64]) -> f64 {
    let s: f64 = x.iter().map(|&v| v as f64).sum();
    let s2: f64 = x.iter().map(|&v| (v as f64).powi(2)).sum();
    s * s / (x.len() as f64 * s2)
}
