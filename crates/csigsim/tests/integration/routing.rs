//! Switch routing policies and D-mod-K balance; head-of-line blocking under PFC.

use crate::common::load_with;
use csigsim::World;

/// Wire bytes each directed link carried, keyed "from>to".
fn link_bytes(w: &World) -> std::collections::BTreeMap<String, u64> {
    let mut m = std::collections::BTreeMap::new();
    let rows: Vec<_> = w.observers().link_rows().expect("links monitored").collect();
    for (p, port) in w.ports().iter().enumerate() {
        let key = format!("{}>{}", w.node_name(port.node()), w.node_name(w.ports()[port.peer()].node()));
        *m.entry(key).or_default() += rows[p].iter().map(|r| r.tx_bytes).sum::<u64>();
    }
    m
}

fn run(toml: &str, sets: &[&str]) -> World {
    let mut w = World::new(load_with(toml, sets));
    w.run(u64::MAX);
    w.finish();
    assert!(w.check_invariants().is_empty(), "{:?}", w.check_invariants());
    w
}

const ONE_FLOW: &str = "name = \"r\"\n[topology]\nkind = \"fat_tree\"\nk = 4\n[[flow]]\nsrc = 0\ndst = 15\nsize = \"400KB\"\n";

#[test]
fn ecmp_keeps_a_flow_on_one_path_and_spray_uses_every_uplink() {
    let up = |w: &World| {
        let b = link_bytes(w);
        (b["tor0>agg0"] > 0, b["tor0>agg1"] > 0)
    };
    let (a, b) = up(&run(ONE_FLOW, &["switch.routing=\"ecmp\""]));
    assert!(a ^ b, "ECMP must use exactly one uplink");
    let (a, b) = up(&run(ONE_FLOW, &["switch.routing=\"spray\"", "transport.retransmit=\"selective\"", "transport.nack_threshold=100"]));
    assert!(a && b, "spray must use both uplinks");
}

#[test]
fn round_robin_splits_one_flow_evenly_over_four_spines() {
    // 100 full packets: a short last packet would overtake its predecessor on
    // a parallel path (fewer store-and-forward bytes) and be reordered.
    let toml = "name = \"rr\"\n[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 4\nhosts_per_leaf = 2\n\
                [switch]\nrouting = \"round_robin\"\n[[flow]]\nsrc = 0\ndst = 3\nsize = 409600\n";
    let w = run(toml, &[]);
    assert_eq!((w.stats().flows_completed, w.stats().retransmits), (1, 0));
    let b = link_bytes(&w);
    let packet = (w.scenario().transport.mtu + w.scenario().transport.header) as u64;
    for s in 0..4 {
        assert_eq!(b[&format!("leaf0>spine{s}")], 25 * packet, "{b:?}");
    }
}

#[test]
fn adaptive_routing_spreads_two_flows_from_one_tor() {
    let two = ONE_FLOW.to_string() + "[[flow]]\nsrc = 1\ndst = 14\nsize = \"400KB\"\n";
    let b = link_bytes(&run(&two, &["switch.routing=\"adaptive\""]));
    assert!(b["tor0>agg0"] > 0 && b["tor0>agg1"] > 0, "{b:?}");
}

#[test]
fn deterministic_routing_balances_all_to_all_on_the_clos() {
    let toml = "name = \"dmodk\"\n[topology]\nkind = \"clos\"\n[switch]\nrouting = \"deterministic\"\nmode = \"pfc\"\n[[workload]]\nkind = \"all_to_all\"\nsize = 4096\n";
    let w = run(toml, &[]);
    assert_eq!(w.stats().flows_completed, 64 * 63);
    let b = link_bytes(&w);
    // Every ToR-to-agg link carries the same bytes, and so does every agg-to-spine link.
    for prefix in ["tor", "agg"] {
        let up: Vec<u64> = b
            .iter()
            .filter(|(k, _)| k.starts_with(prefix) && k.split('>').nth(1).is_some_and(|t| !t.starts_with('h') && !t.starts_with("tor") && (prefix == "tor" || t.starts_with("spine"))))
            .map(|(_, v)| *v)
            .collect();
        assert!(up.len() >= 16, "{prefix}: {}", up.len());
        assert!(up.iter().all(|&v| v == up[0] && v > 0), "{prefix} up-links unbalanced: {up:?}");
    }
}

#[test]
fn pfc_head_of_line_blocking_slows_the_victim() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/clos_incast_victim.toml");
    let sc = csigsim::scenario::load_file(&path, &[], None).unwrap();
    let out = csigsim::run(sc.clone(), |_| true);
    let f = &out.tables.flows;
    let victim = f.position("F3 victim").unwrap();
    let slow = f.fct_ps[victim].unwrap() as f64 / f.ideal_fct_ps[victim] as f64;
    assert!(slow > 2.0, "victim slowdown {slow:.2}: PFC back-pressure must block it");
    assert_eq!(out.summary.packets_dropped, 0);
    // Alone, the victim runs at line rate.
    let mut alone = sc;
    let specs = alone.flow_specs().into_iter().filter(|f| f.name == "F3 victim").collect();
    alone.workloads = vec![csigsim::workload::Workload { first: 0, flows: csigsim::workload::Flows::Listed { specs, deps: Vec::new() } }];
    let out = csigsim::run(alone, |_| true);
    let f = &out.tables.flows;
    let slow = f.fct_ps[0].unwrap() as f64 / f.ideal_fct_ps[0] as f64;
    assert!(slow < 1.01, "alone the victim's slowdown is {slow:.4}");
}

#[test]
fn summary_names_the_routing_policy_and_switch_mode_as_scenarios_do() {
    for (routing, _) in csigsim::lb::ROUTING {
        for (mode, _) in csigsim::net::mode::KINDS {
            let sets = [format!("switch.routing=\"{routing}\""), format!("switch.mode=\"{mode}\"")];
            let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
            let out = csigsim::run(load_with(ONE_FLOW, &sets), |_| true);
            assert_eq!((out.summary.routing.as_str(), out.summary.switch_mode.as_str()), (*routing, *mode));
        }
    }
}
