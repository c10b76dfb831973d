//! `[[topology.failure]]`: degraded links give the analytic FCT at the lower
//! rate; a down link loses packets until the routes reconverge (ECMP) or not
//! past the failure (spray, adaptive at the failed link's switch); every run
//! conserves bytes.

use crate::common::{analytic_fct, load, world};
use csigsim::units::tx_time_ps;

fn three_hop(failure: &str) -> String {
    format!(
        r#"
name = "three hops"
[topology]
kind = "custom"
hosts = ["h0", "h1"]
switches = ["s0", "s1"]
links = [
  {{ a = "h0", b = "s0", rate = "100Gbps", delay = "1us" }},
  {{ a = "s0", b = "s1", rate = "100Gbps", delay = "2.5us" }},
  {{ a = "s1", b = "h1", rate = "100Gbps", delay = "700ns" }},
]
{failure}
[transport]
cc = "none"
mtu = 4096
header = 64
[[flow]]
src = "h0"
dst = "h1"
size = "1000000B"
"#
    )
}

#[test]
fn a_link_degraded_to_half_gives_the_analytic_fct_at_half_rate() {
    let failure = "[[topology.failure]]\nfrom = \"s1\"\nto = \"s0\"\nat = \"0s\"\nrate_factor = 0.5";
    let out = csigsim::run(load(&three_hop(failure)), |_| true);
    let mut sizes = vec![4160u64; 244];
    sizes.push(640);
    let half = analytic_fct(&sizes, &[(100_000_000_000, 1_000_000), (50_000_000_000, 2_500_000), (100_000_000_000, 700_000)]);
    let full = analytic_fct(&sizes, &[(100_000_000_000, 1_000_000), (100_000_000_000, 2_500_000), (100_000_000_000, 700_000)]);
    assert_eq!(out.tables.flows.fct_ps[0], Some(half));
    // The 50 Gbps hop carries the bulk: about twice the serialization of the whole flow.
    assert!(half > full + 240 * tx_time_ps(4160, 100_000_000_000), "{half} vs {full}");
    assert!(out.summary.invariants_ok);

    // Degraded only before the flow starts sending: the full-rate FCT.
    let before = "[[topology.failure]]\nfrom = \"s0\"\nto = \"s1\"\nat = \"0s\"\nuntil = \"1ps\"\nrate_factor = 0.5";
    let out = csigsim::run(load(&three_hop(before)), |_| true);
    assert_eq!(out.tables.flows.fct_ps[0], Some(full));
}

/// Two leaves, two spines, four hosts per leaf; every host of leaf 0 sends
/// 2 MB to its peer on leaf 1.
fn leaf_spine(routing: &str, failure: &str) -> String {
    let mut s = format!(
        "name = \"failure\"\nseed = 3\n[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 4\n{failure}\n[switch]\nrouting = \"{routing}\"\n[transport]\ncc = \"dctcp\"\nrto = \"50us\"\n"
    );
    for i in 0..4 {
        s += &format!("[[flow]]\nsrc = \"h{i}\"\ndst = \"h{}\"\nsize = \"2MB\"\n", i + 4);
    }
    s
}

const T_FAIL: u64 = 20_000_000;
const RECONVERGENCE: u64 = 30_000_000;

/// Runs to the failure, just past it, to the reconvergence and to the end:
/// the packets lost to the down link by each time (both directions, or only
/// at the port `from` -> `to` with `one_way`).
fn losses(routing: &str, from: &str, to: &str) -> [u64; 4] {
    losses_at(routing, from, to, false)
}

fn losses_at(routing: &str, from: &str, to: &str, one_way: bool) -> [u64; 4] {
    let failure = format!("[[topology.failure]]\nfrom = \"{from}\"\nto = \"{to}\"\nat = \"20us\"\nreconvergence = \"30us\"");
    let mut w = world(&leaf_spine(routing, &failure), &[]);
    let port = crate::common::port(&w, from, to);
    let mut seen = [0; 4];
    let mut total = 0;
    for (i, t) in [T_FAIL - 1, T_FAIL + 1, T_FAIL + RECONVERGENCE, u64::MAX].into_iter().enumerate() {
        w.run_until(t);
        let f = w.network().failures();
        total = f.dropped();
        seen[i] = if one_way { f.dropped_at(port) } else { total };
    }
    w.finish();
    assert!(w.flows().iter().all(|f| f.finish_ps.is_some()), "{routing}: every flow completes");
    assert_eq!(w.check_invariants(), Vec::<String>::new(), "{routing}: bytes conserved");
    assert_eq!(w.stats().packets_dropped, total, "{routing}: every drop is the failure's");
    seen
}

#[test]
fn ecmp_loses_packets_into_a_down_link_until_reconvergence_then_flows_complete() {
    let [before, _, at_reconvergence, end] = losses("ecmp", "leaf0", "spine0");
    assert_eq!(before, 0);
    assert!(at_reconvergence > 0);
    assert_eq!(end, at_reconvergence, "no loss once the routes exclude the link");
    let [_, just_after, at_reconvergence, _] = losses_at("ecmp", "leaf0", "spine0", true);
    assert!(at_reconvergence > just_after, "ECMP keeps hashing into its own dead port");
}

#[test]
fn spray_and_adaptive_steer_away_at_once_from_their_own_dead_port() {
    for routing in ["spray", "adaptive"] {
        // At leaf0's dead port, only what it held queued when the link died is
        // lost. (ACKs still die at spine0 -> leaf0, which spine0 cannot avoid.)
        let [before, just_after, _, end] = losses_at(routing, "leaf0", "spine0", true);
        assert_eq!(before, 0);
        assert_eq!(end, just_after, "{routing}");
    }
    let ecmp = losses("ecmp", "leaf0", "spine0");
    let spray = losses("spray", "leaf0", "spine0");
    assert!(ecmp[3] > spray[3], "ECMP {ecmp:?} loses more than spray {spray:?}");
}

#[test]
fn a_remote_failure_costs_every_policy_until_reconvergence() {
    // spine0 -> leaf1 dies: leaf0 cannot see it, spine0 has no other way down.
    for routing in ["ecmp", "adaptive"] {
        let [_, _, at_reconvergence, end] = losses(routing, "spine0", "leaf1");
        assert!(at_reconvergence > 0, "{routing}");
        assert_eq!(end, at_reconvergence, "{routing}");
    }
}

#[test]
fn the_routes_drop_a_dead_link_after_reconvergence_and_take_it_back_after_repair() {
    use csigsim::id::{HostId, SwitchId};
    let failure = "[[topology.failure]]\nfrom = \"leaf0\"\nto = \"spine0\"\nat = \"0s\"\nuntil = \"10us\"\nreconvergence = \"2us\"";
    let mut w = world(&leaf_spine("ecmp", failure), &[]);
    let dead = crate::common::port(&w, "leaf0", "spine0");
    let cands = |w: &csigsim::World| w.network().routes().candidates(SwitchId(0), HostId(4)).to_vec();
    w.run_until(1_000_000);
    assert!(cands(&w).contains(&dead), "before reconvergence");
    w.run_until(5_000_000);
    assert_eq!(cands(&w).len(), 1);
    assert!(!cands(&w).contains(&dead));
    w.run_until(11_000_000);
    assert!(!cands(&w).contains(&dead), "up again, not yet in the routes");
    w.run_until(13_000_000);
    assert!(cands(&w).contains(&dead));
    w.run_until(u64::MAX);
    assert!(w.flows().iter().all(|f| f.finish_ps.is_some()));
    assert_eq!(w.check_invariants(), Vec::<String>::new());
}

#[test]
fn failure_runs_are_deterministic_per_seed() {
    let a = losses("spray", "leaf0", "spine0");
    let b = losses("spray", "leaf0", "spine0");
    assert_eq!(a, b);
}

#[test]
fn bad_failure_keys_are_refused_with_their_key() {
    for (failure, key) in [
        ("[[topology.failure]]\nfrom = \"leaf0\"\nto = \"leaf1\"\nat = \"1us\"", "topology.failure[0].to"),
        ("[[topology.failure]]\nfrom = \"leaf0\"\nto = \"spine0\"\nat = \"1us\"\nrate_factor = 1.5", "topology.failure[0].rate_factor"),
        ("[[topology.failure]]\nfrom = \"leaf0\"\nto = \"spine0\"\nat = \"1us\"\nspeed = 1", "topology.failure[0]"),
        ("[[topology.failure]]\nfrom = \"h0\"\nto = \"leaf0\"\nat = \"1us\"", "topology.failure[0].rate_factor"),
    ] {
        let t = leaf_spine("ecmp", failure);
        let e = csigsim::scenario::load_str(&t, "bad.toml", std::path::Path::new("."), &[], None).expect_err(failure);
        let msg = e.to_string();
        assert!(msg.contains(key), "{msg}");
        assert!(msg.contains("bad.toml"), "{msg}");
    }
}

#[test]
fn a_link_change_after_every_flow_finished_does_not_stretch_the_run() {
    let at = |t: &str| format!("[[topology.failure]]\nfrom = \"s0\"\nto = \"s1\"\nat = \"{t}\"\nrate_factor = 0.5");
    let alone = csigsim::run(load(&three_hop("")), |_| true);
    let finish = alone.tables.flows.finish_ps[0].expect("the flow finishes");
    // A change long after the flow finished is stale: the run ends when the
    // flow does, with the same figures.
    let late = csigsim::run(load(&three_hop(&at("1s"))), |_| true);
    assert_eq!(late.tables.flows.finish_ps[0], Some(finish));
    assert_eq!(late.summary.sim_time_ns, alone.summary.sim_time_ns);
    assert!(late.summary.sim_time_ns < 1e6, "{}", late.summary.sim_time_ns);
    // A change while the flow runs is not stale, and slows it.
    let early = csigsim::run(load(&three_hop(&at("10us"))), |_| true);
    assert!(early.tables.flows.finish_ps[0] > Some(finish));
}

/// A k = 4 fat tree (four pods, so up to four partitions) with every host
/// of pod 0 sending 1 MB to its peer in pod 2, and `failure`.
fn fat_tree(routing: &str, failure: &str) -> String {
    let mut s = format!(
        "name = \"failure\"\nseed = 5\n[topology]\nkind = \"fat_tree\"\nk = 4\n{failure}\n[switch]\nrouting = \"{routing}\"\n[transport]\ncc = \"dctcp\"\nrto = \"50us\"\n[monitor]\nwindow = \"2us\"\n"
    );
    for i in 0..4 {
        s += &format!("[[flow]]\nsrc = \"h{i}\"\ndst = \"h{}\"\nsize = \"1MB\"\n", i + 8);
    }
    s
}

/// Link failures run partitioned, and every output is the sequential
/// run's: a down link with reconvergence and repair (packets lost at the
/// failed ports, routes rebuilt in every partition), a degraded link,
/// changes at time 0 and two at one time, and changes after every flow
/// finished (void, as on one queue: they neither stretch the run nor count
/// twice).
#[test]
fn failures_run_partitioned_with_the_outputs_of_one_thread() {
    let down = |from: &str, to: &str, at: &str, until: &str| format!("[[topology.failure]]\nfrom = \"{from}\"\nto = \"{to}\"\nat = \"{at}\"\nuntil = \"{until}\"\nreconvergence = \"15us\"\n");
    let cases = [
        ("ecmp", down("agg0", "core0", "20us", "60us")),
        ("spray", down("core1", "agg4", "20us", "40us") + &down("agg1", "core2", "30.5us", "1s")),
        ("ecmp", "[[topology.failure]]\nfrom = \"core3\"\nto = \"agg5\"\nat = \"10.000333us\"\nrate_factor = 0.25\n".to_string()),
        ("adaptive", down("agg0", "core0", "5ms", "6ms")),
        // At time 0, and two changes at one time.
        ("spray", "[[topology.failure]]\nfrom = \"core0\"\nto = \"agg0\"\nat = \"0s\"\nrate_factor = 0.5\n".to_string() + &down("agg2", "core1", "12us", "30us") + &down("agg4", "core0", "12us", "2ms")),
    ];
    let out = |toml: &str, threads: usize, partitions: usize| {
        let opts = csigsim::RunOptions { threads, partitions, ..Default::default() };
        let o = csigsim::run_with(load(toml), &opts, |_| true).unwrap();
        let mut summary: serde_json::Value = serde_json::from_str(&o.summary_json()).unwrap();
        summary["wall_s"] = 0.into();
        summary["link_hops_per_s"] = 0.into();
        (o.threads.partitions, o.threads.refused.clone(), summary, o.flows_csv(), o.links_csv())
    };
    for (routing, failure) in &cases {
        let toml = fat_tree(routing, failure);
        let (_, _, one, flows, links) = out(&toml, 1, 0);
        assert!(one["packets_dropped"].as_u64().is_some(), "{one}");
        for (threads, partitions) in [(2, 2), (1, 3), (4, 4)] {
            let (cut, refused, summary, f, l) = out(&toml, threads, partitions);
            assert_eq!((cut, refused), (partitions as u32, None), "{routing} {failure}");
            assert_eq!(summary, one, "{routing} {failure} on {partitions} partitions");
            assert!(f == flows, "{routing} {failure}: flows.csv on {partitions} partitions");
            assert!(l == links, "{routing} {failure}: links.csv on {partitions} partitions");
        }
    }
    // The down links lost packets (spray sends into both at once), and the
    // late change of the last case changed nothing.
    let drops = |c: usize| out(&fat_tree(cases[c].0, &cases[c].1), 2, 2).2["packets_dropped"].as_u64().unwrap();
    assert!(drops(1) > 0);
    let (_, _, late, ..) = out(&fat_tree("adaptive", &cases[3].1), 2, 2);
    let (_, _, none, ..) = out(&fat_tree("adaptive", ""), 1, 0);
    assert_eq!(late["sim_time_ns"], none["sim_time_ns"]);
}
