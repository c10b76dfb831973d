//! Side-by-side validation against the reference simulators
//! (docs/validation.md): the scenarios of scenarios/validation under the
//! htsim-uec and ns3-rdma profiles, run with their documented defaults, against
//! the figures htsim (UEC) and the HPCC authors' ns-3 produced. Longer cases
//! (1024 hosts, the leaf-spines, WebSearch) are commands in docs/validation.md.

use csigsim::output::RunOutput;
use std::path::Path;

fn run(file: &str, sets: &[&str]) -> RunOutput {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/validation").join(file);
    let ov: Vec<csigsim::Override> = sets.iter().map(|s| csigsim::Override::parse(s).unwrap()).collect();
    let sc = csigsim::scenario::load_file(&path, &ov, None).unwrap_or_else(|e| panic!("{e}"));
    csigsim::run(sc, |_| true)
}

/// Sender-side FCTs (the time the sender saw the last ACK), in us, sorted;
/// every flow must have finished.
fn sender_fcts(out: &RunOutput) -> Vec<f64> {
    assert_eq!(out.summary.end_reason, "completed");
    let mut f: Vec<f64> = out.tables.flows.sender_fct_ps.iter().map(|t| t.expect("every flow finishes") as f64 / 1e6).collect();
    f.sort_by(f64::total_cmp);
    f
}

fn within(case: &str, got: f64, want: f64, tol: f64) {
    let r = got / want;
    println!("{case}: csigsim {got:.3} us, reference {want:.3} us, ratio {r:.4}");
    assert!((r - 1.0).abs() <= tol, "{case}: {got:.3} us against the reference's {want:.3} us is outside {tol}");
}

/// htsim `one`: a lone 2 MB flow across the k=4 fat tree finishes at the
/// analytic time (the first packet store-and-forward over 6 links, the rest at
/// 100 Gb/s, then the final 64 B ACK back over 6 links), which is htsim's
/// 176.200 us.
#[test]
fn htsim_one_is_the_analytic_fct() {
    let out = run("htsim_one.toml", &[]);
    let ft = &out.tables.flows;
    let ack_back = 6 * (csigsim::units::tx_time_ps(64, 100_000_000_000) + 1_000_000);
    assert_eq!(ft.fct_ps[0], Some(ft.ideal_fct_ps[0]), "alone at line rate: the ideal FCT");
    assert_eq!(ft.sender_fct_ps[0], Some(ft.ideal_fct_ps[0] + ack_back));
    within("htsim one", sender_fcts(&out)[0], 176.200, 0.0005);
    assert_eq!((out.summary.packets_trimmed, ft.retransmits[0]), (0, 0));
}

/// htsim's incasts and sprayed permutations (docs/validation.md, first table):
/// the tail FCT within the 5%. `incast128` (127 x 2 MB into one port
/// of the k=8 fat tree, more trims than packets) must complete: no livelock.
#[test]
fn htsim_tail_fcts_within_five_percent() {
    for (file, tail) in [
        ("htsim_incast16.toml", 2478.530),
        ("htsim_incast16to1_k8.toml", 2657.280),
        ("htsim_perm16_paths128.toml", 194.022),
        ("htsim_perm128.toml", 202.009),
        ("htsim_incast128.toml", 21029.3),
    ] {
        let out = run(file, &[]);
        let f = sender_fcts(&out);
        within(file, *f.last().unwrap(), tail, 0.05);
        assert!(out.summary.invariants_ok, "{file}");
    }
}

/// The ns-3 one-switch cases for each congestion control: the tail FCT
/// within 10% (measured within 6%, docs/validation.md).
#[test]
fn ns3_dumbbell_and_incast_tails_within_ten_percent() {
    for (cc, dumbbell, incast) in
        [("dcqcn", 2180.079, 3424.317), ("hpcc", 1842.946, 2963.385), ("timely", 2049.746, 2945.950), ("dctcp", 1664.091, 2662.519)]
    {
        let set = format!("transport.cc={cc}");
        for (file, tail) in [("ns3_dumbbell.toml", dumbbell), ("ns3_incast16.toml", incast)] {
            let out = run(file, &[&set]);
            let f = sender_fcts(&out);
            within(&format!("{file} {cc}"), *f.last().unwrap(), tail, 0.10);
            assert_eq!((out.summary.pauses_sent, out.summary.packets_dropped), (0, 0), "no PAUSE and no drop, as in ns-3");
        }
    }
}

/// HPCC's incast16, first flow to finish (docs/validation.md, "HPCC
/// incast16: the first flow to finish"). ns-3 re-paces the waiting packet at
/// every rate change (`RdmaHw::ChangeRate`) and finishes its first flow at
/// 1,776.046 us; with that rule turned off, at 2,486.77 us. Like against
/// like: without the rule in both (`pacing_update = "on_send"`) csigsim's
/// first flow is within 10% of ns-3's (measured 1.078). With it in both (the
/// profile's `"on_rate_change"`) the first flow stays about half as late
/// again as ns-3's (measured 1.519): a documented residual, held between
/// 1.45 and 1.60 so that a change that moves it also updates the page.
#[test]
fn ns3_hpcc_incast_first_flow_with_and_without_re_pacing() {
    let first = |sets: &[&str]| sender_fcts(&run("ns3_incast16.toml", sets))[0];
    let off = first(&["transport.cc=hpcc", "transport.pacing_update=\"on_send\""]);
    within("ns3_incast16 hpcc first, re-pacing off in both", off, 2486.77, 0.10);
    let on = first(&["transport.cc=hpcc"]);
    let r = on / 1776.046;
    println!("ns3_incast16 hpcc first, re-pacing on in both: csigsim {on:.3} us, ns-3 1776.046 us, ratio {r:.4}");
    assert!((1.45..=1.60).contains(&r), "the documented residual moved: {on:.3} us, {r:.4} of ns-3's");
    assert_ne!(on, off, "the profile re-paces HPCC's rate changes");
}

/// ns-3's `fct_analysis.py` slowdowns of a run of `ns3_websearch.toml`, sorted,
/// for the flows of `sizes` bytes: the sender FCT over ns-3's standalone FCT
/// (`qp_finish` in its `third.cc`: the pair's base RTT, twice the path's
/// propagation plus one 1000 B payload per link, plus the flow's bytes with
/// `header` bytes per 1000 B packet at 100 Gb/s), clamped below at 1.
fn ns3_slowdowns(out: &RunOutput, header: u64, sizes: std::ops::Range<u64>) -> Vec<f64> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/validation/ns3_websearch.toml");
    let sc: toml::Table = toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let topo = sc["topology"].as_table().unwrap();
    let names: Vec<&str> = topo["hosts"].as_array().unwrap().iter().chain(topo["switches"].as_array().unwrap()).map(|v| v.as_str().unwrap()).collect();
    let index = |n: &str| names.iter().position(|&m| m == n).unwrap();
    let hosts = topo["hosts"].as_array().unwrap().len();
    // Per node: (neighbour, one-way delay, one payload's serialization), in ns.
    let mut adj: Vec<Vec<(usize, u64, u64)>> = vec![Vec::new(); names.len()];
    for l in topo["links"].as_array().unwrap() {
        let (a, b) = (index(l["a"].as_str().unwrap()), index(l["b"].as_str().unwrap()));
        let rate = csigsim::units::parse_rate(l["rate"].as_str().unwrap()).unwrap().0;
        let delay = csigsim::units::parse_time(l["delay"].as_str().unwrap()).unwrap().0 / 1000;
        let tx = 1000 * 8 * 1_000_000_000 / rate;
        adj[a].push((b, delay, tx));
        adj[b].push((a, delay, tx));
    }
    // Base RTT from one host to every node over a fewest-links path (every
    // such path of the fat tree has the same delays and rates).
    let base_rtts = |src: usize| {
        let mut rtt = vec![u64::MAX; names.len()];
        rtt[src] = 0;
        let mut frontier = vec![src];
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for &u in &frontier {
                if u != src && u < hosts {
                    continue; // hosts do not forward
                }
                for &(v, delay, tx) in &adj[u] {
                    if rtt[v] == u64::MAX {
                        rtt[v] = rtt[u] + 2 * delay + tx;
                        next.push(v);
                    }
                }
            }
            frontier = next;
        }
        rtt
    };
    let ft = &out.tables.flows;
    let mut cache: Vec<Option<Vec<u64>>> = vec![None; hosts];
    let mut s: Vec<f64> = (0..ft.len())
        .filter(|&i| sizes.contains(&ft.size_bytes[i]))
        .map(|i| {
            let (src, dst, size) = (ft.src[i] as usize, ft.dst[i] as usize, ft.size_bytes[i]);
            let rtt = cache[src].get_or_insert_with(|| base_rtts(src))[dst];
            let bytes = size + size.div_ceil(1000) * header;
            let standalone = rtt + bytes * 8 / 100;
            let fct_ns = ft.sender_fct_ps[i].expect("every flow finishes") as f64 / 1000.0;
            (fct_ns / standalone as f64).max(1.0)
        })
        .collect();
    s.sort_by(f64::total_cmp);
    s
}

/// `sorted[int(n x p)]`, as `fct_analysis.py`'s `get_pctl`.
fn pctl(sorted: &[f64], p: f64) -> f64 {
    sorted[(sorted.len() as f64 * p) as usize]
}

/// Timely on the WebSearch case (docs/validation.md, "The two residuals of
/// the first comparison"): its slowdown p95 and p99 within 10% of ns-3's
/// (2.643 and 5.835) with the profile's ACKs in the data queue, as ns-3's
/// switches queue them. With ACKs in their own priority queue (csigsim's
/// default) a short flow's final ACK no longer waits behind data: the p99 of
/// the flows under 100 KB falls far below ns-3's 8.446.
#[test]
fn ns3_websearch_timely_tails_within_ten_percent() {
    let shared = run("ns3_websearch.toml", &["transport.cc=timely"]);
    assert_eq!(shared.summary.end_reason, "completed");
    assert_eq!((shared.summary.pauses_sent, shared.summary.packets_dropped), (0, 0), "no PAUSE and no drop, as in ns-3");
    let all = ns3_slowdowns(&shared, 56, 0..u64::MAX);
    assert_eq!(all.len(), 467);
    for (p, ns3) in [(0.95, 2.643), (0.99, 5.835)] {
        let got = pctl(&all, p);
        println!("Timely WebSearch slowdown p{}: csigsim {got:.3}, ns-3 {ns3}", p * 100.0);
        assert!((got / ns3 - 1.0).abs() <= 0.10, "p{} {got:.3} against ns-3's {ns3}", p * 100.0);
    }
    let short_shared = pctl(&ns3_slowdowns(&shared, 56, 0..100_000), 0.99);
    let priority = run("ns3_websearch.toml", &["transport.cc=timely", "switch.control_queue=\"priority\""]);
    let short_priority = pctl(&ns3_slowdowns(&priority, 56, 0..100_000), 0.99);
    println!("Timely WebSearch < 100 KB p99: shared {short_shared:.3}, priority {short_priority:.3}, ns-3 8.446");
    assert!((short_shared / 8.446 - 1.0).abs() <= 0.10, "{short_shared:.3}");
    assert!(short_priority < 0.5 * short_shared, "{short_priority:.3} against {short_shared:.3}");
}
