//! DCQCN-Rev on the source's 64-node CLOS (scenarios/clos_incast_victim.toml):
//! four flows incast into N16 while a victim shares the first uplink of two of
//! them. PFC alone, DCQCN (RED marking) and DCQCN-Rev (ECP marking, enhanced
//! notification and reaction points) with the DCQCN paper's constants, as the
//! source configures them. The figures are recorded in docs/cc/dcqcn-rev.md
//! (run with `-- --nocapture` to print them).

use csigsim::World;

struct Outcome {
    fct_ns: Vec<f64>,
    end_ns: f64,
    cnps: Vec<u64>,
    cnps_sent: u64,
    cnps_suppressed: u64,
    pauses: u64,
}

fn run(sets: &[&str]) -> Outcome {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/clos_incast_victim.toml");
    let ov: Vec<csigsim::Override> = sets.iter().map(|s| csigsim::Override::parse(s).unwrap()).collect();
    let mut w = World::new(csigsim::scenario::load_file(&path, &ov, None).unwrap_or_else(|e| panic!("{e}")));
    w.run(u64::MAX);
    assert_eq!(w.stats().flows_completed, 5, "{sets:?}");
    assert_eq!(w.stats().packets_dropped, 0, "{sets:?}");
    let fct_ns: Vec<f64> = w.flows().iter().map(|f| (f.finish_ps.unwrap() - f.start_ps) as f64 / 1e3).collect();
    let end_ns = w.flows().iter().map(|f| f.finish_ps.unwrap()).max().unwrap() as f64 / 1e3;
    Outcome {
        fct_ns,
        end_ns,
        cnps: w.flows().iter().map(|f| f.cnps).collect(),
        cnps_sent: w.stats().cnps_sent,
        cnps_suppressed: w.stats().cnps_suppressed,
        pauses: w.stats().pauses_sent,
    }
}

fn show(name: &str, o: &Outcome) {
    let f: Vec<String> = o.fct_ns.iter().map(|v| format!("{:.0}", v / 1e3)).collect();
    println!(
        "{name:<10} last byte at {:.0} us, FCT (us) F0 F1 F4 F8 victim = {}, CNPs {} (per flow {:?}), suppressed {}, pauses {}",
        o.end_ns / 1e3,
        f.join(" "),
        o.cnps_sent,
        o.cnps,
        o.cnps_suppressed,
        o.pauses
    );
}

#[test]
fn dcqcn_rev_throttles_the_incast_to_its_share_and_frees_the_victim() {
    let pfc = run(&[]);
    let dcqcn = run(&["transport.cc=\"dcqcn\"", "transport.dcqcn.profile=\"paper\""]);
    let rev = run(&["transport.cc=\"dcqcn_rev\"", "transport.dcqcn.profile=\"paper\"", "switch.ecn.mode=\"ecp\""]);
    show("pfc", &pfc);
    show("dcqcn", &dcqcn);
    show("dcqcn_rev", &rev);
    // Flows 0..3 are the incast F0 F1 F4 F8, flow 4 the victim F3.
    let victim = 4;
    // The incast shares N16's link: 4 x 12.5 MB at 100 Gb/s take at least 4 ms.
    // DCQCN-Rev sets each to (below) its quarter at once, so the incast ends
    // within 12.5% of that, the four within 2% of each other, and no PAUSE is
    // ever needed.
    let incast = &rev.fct_ns[..4];
    let (lo, hi) = incast.iter().fold((f64::MAX, 0.0f64), |(l, h), &v| (l.min(v), h.max(v)));
    assert!(hi < 4.5e6, "incast ends late: {incast:?}");
    assert!(hi / lo < 1.02, "incast shares unequal: {incast:?}");
    assert_eq!(rev.pauses, 0);
    assert!(pfc.pauses > 0);
    // DCQCN's fixed cuts over-throttle: the run ends later than with PFC alone.
    assert!(dcqcn.end_ns > 1.2 * pfc.end_ns, "dcqcn {} pfc {}", dcqcn.end_ns, pfc.end_ns);
    assert!(rev.end_ns < 1.05 * pfc.end_ns, "rev {} pfc {}", rev.end_ns, pfc.end_ns);
    // The victim finishes sooner than under PFC (head-of-line blocking) and DCQCN.
    assert!(rev.fct_ns[victim] < 0.8 * pfc.fct_ns[victim], "victim rev {} pfc {}", rev.fct_ns[victim], pfc.fct_ns[victim]);
    assert!(rev.fct_ns[victim] < 0.8 * dcqcn.fct_ns[victim], "victim rev {} dcqcn {}", rev.fct_ns[victim], dcqcn.fct_ns[victim]);
    // The enhanced notification point decided against some CNPs, and the
    // victim, which contributes only at the shared uplink, gets fewer CNPs than
    // any incast flow.
    assert!(rev.cnps_suppressed > 0);
    assert!(rev.cnps[..4].iter().all(|&c| c > rev.cnps[victim]), "{:?}", rev.cnps);
}

/// With the hpcc profile (a CNP for every marked packet under DCQCN), the
/// enhanced notification point sends an order of magnitude fewer CNPs.
#[test]
fn dcqcn_rev_sends_fewer_cnps_than_dcqcn() {
    let dcqcn = run(&["transport.cc=\"dcqcn\""]);
    let rev = run(&["transport.cc=\"dcqcn_rev\"", "switch.ecn.mode=\"ecp\""]);
    show("dcqcn", &dcqcn);
    show("dcqcn_rev", &rev);
    assert!(rev.cnps_sent * 10 < dcqcn.cnps_sent, "rev {} dcqcn {}", rev.cnps_sent, dcqcn.cnps_sent);
    assert!(rev.end_ns < dcqcn.end_ns);
}

/// The dumbbell of the suite (docs/cc/README.md) with ECP marking, the
/// default (hpcc) DCQCN profile and the source's 1 KB packets. With 4 KB
/// packets utilization falls to 0.896 at 16 flows (docs/cc/dcqcn-rev.md).
#[test]
fn dcqcn_rev_on_the_dumbbell() {
    crate::cc_dumbbell::check("dcqcn_rev", &["switch.ecn.mode=\"ecp\"", "transport.mtu=1000"]);
}

#[test]
fn outputs_name_the_algorithm_as_scenarios_do() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/clos_incast_victim.toml");
    let sets = ["transport.cc=\"dcqcn_rev\"", "switch.ecn.mode=\"ecp\"", "monitor.cc=true"];
    let ov: Vec<csigsim::Override> = sets.iter().map(|s| csigsim::Override::parse(s).unwrap()).collect();
    let out = csigsim::run(csigsim::scenario::load_file(&path, &ov, None).unwrap(), |_| true);
    assert_eq!(out.summary.cc, "dcqcn_rev");
    assert!(out.summary_json().contains("\"cc\": \"dcqcn_rev\""));
    let cc = out.tables.cc.as_ref().expect("monitor.cc is on");
    assert!(!cc.flow_id.is_empty());
    assert_eq!(cc.ccs, ["dcqcn_rev"]);
    let text = out.cc_csv();
    assert!(text.lines().skip(1).all(|r| r.split(',').nth(2) == Some("dcqcn_rev")), "{text}");
}
