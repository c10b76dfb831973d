//! Every congestion control on a dumbbell: N long flows with staggered starts
//! through one 100 Gbps bottleneck, lossless (PFC). After convergence the
//! bottleneck must be at least 90% utilized with Jain fairness at least 0.95,
//! no drops, and a bounded queue. The figures are tabled in docs/cc/README.md
//! by the test docs_tables::dumbbell_figures (run with `-- --nocapture` to
//! print them here).

use crate::common::{dumbbell, jain, load_with, measure, port};
use csigsim::World;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

#[derive(Clone, Copy)]
pub struct Figures {
    pub util: f64,
    pub jain: f64,
    pub max_queue: u64,
    pub drops: u64,
}

/// Runs `n` long flows under `cc` (plus extra `--set` overrides), measures
/// 5 to 25 ms. Each set-up runs once per test binary: the tests here and the
/// docs table share the runs (a second caller waits for the first).
pub fn dumbbell_figures(cc: &str, n: usize, extra: &[&str]) -> Figures {
    static RUNS: Mutex<BTreeMap<String, Arc<OnceLock<Figures>>>> = Mutex::new(BTreeMap::new());
    let cell = RUNS.lock().unwrap().entry(format!("{cc} {n} {extra:?}")).or_default().clone();
    *cell.get_or_init(|| run_dumbbell(cc, n, extra))
}

fn run_dumbbell(cc: &str, n: usize, extra: &[&str]) -> Figures {
    let mut flows = String::new();
    for i in 0..n {
        flows.push_str(&format!("[[flow]]\nsrc = \"h{i}\"\ndst = \"rx\"\nsize = \"1GB\"\nstart = \"{}us\"\n", 20 * i));
    }
    let toml = dumbbell(
        n,
        &format!("[switch]\nmode = \"pfc\"\necn = {{ kmin = \"100KB\", kmax = \"400KB\", pmax = 0.2 }}\n[transport]\ncc = \"{cc}\"\n[monitor]\nlinks = false\n{flows}"),
    );
    let mut sets = vec!["stop=\"25ms\""];
    sets.extend_from_slice(extra);
    let mut w = World::new(load_with(&toml, &sets));
    let (t0, t1) = (5_000_000_000u64, 25_000_000_000u64);
    let bottleneck = port(&w, "s0", "s1");
    let iv = measure(&mut w, t0, t1, 1_000_000, Some(bottleneck));
    let bytes = iv.wire_bytes(&w);
    let total = bytes.iter().sum::<u64>() as f64;
    let capacity = (t1 - t0) as f64 * 100e9 / 8e12;
    Figures { util: total / capacity, jain: jain(&bytes), max_queue: iv.max_queue, drops: w.stats().packets_dropped }
}

pub fn check(cc: &str, extra: &[&str]) {
    for n in [2, 4, 16] {
        let f = dumbbell_figures(cc, n, extra);
        println!("{cc:<10} N={n:<3} utilization {:.4} Jain {:.4} max queue {} B drops {}", f.util, f.jain, f.max_queue, f.drops);
        assert!(f.util >= 0.90, "{cc} N={n}: utilization {:.4}", f.util);
        assert!(f.jain >= 0.95, "{cc} N={n}: Jain {:.4}", f.jain);
        assert_eq!(f.drops, 0, "{cc} N={n}");
        assert!(f.max_queue < 4_000_000, "{cc} N={n}: queue {}", f.max_queue);
    }
}

#[test]
fn dctcp_on_the_dumbbell() {
    check("dctcp", &[]);
}

#[test]
fn swift_on_the_dumbbell() {
    check("swift", &[]);
}

/// HPCC with the packet size of its source (the HPCC paper and its ns-3
/// artifact send 1000-byte payloads). With 4 KB packets, 16 flows hold about
/// 1.5 packets of window each and the per-ACK noise in the utilization keeps
/// them apart (Jain 0.844, docs/cc/README.md).
#[test]
fn hpcc_on_the_dumbbell() {
    check("hpcc", &["transport.mtu=1000", "signals.int.max_hops=5"]);
}

#[test]
fn swift_fast_ramp_up_on_the_dumbbell() {
    check("swift", &["signals.csig.type=\"abw_c\"", "transport.swift.fast_ramp_up=true"]);
}


#[test]
fn cc_csv_shows_dctcp_cutting_its_window_on_marks() {
    let flows = "[[flow]]\nsrc = \"h0\"\ndst = \"rx\"\nsize = \"50MB\"\n[[flow]]\nsrc = \"h1\"\ndst = \"rx\"\nsize = \"50MB\"\n";
    let toml = dumbbell(2, &format!("[switch]\necn = {{ kmin = \"100KB\", kmax = \"100KB\", pmax = 1.0 }}\n[transport]\ncc = \"dctcp\"\n[monitor]\ncc = true\nlinks = false\n{flows}"));
    let out = csigsim::run(load_with(&toml, &[]), |_| true);
    let t = out.tables.cc.as_ref().expect("cc.csv is on");
    assert!(t.len() > 20);
    assert_eq!(t.ccs, ["dctcp"]);
    let marked: Vec<usize> = (0..t.len()).filter(|&i| t.ce_fraction[i] > 0.0).collect();
    assert!(!marked.is_empty(), "the shared queue marks");
    for &i in &marked {
        let (lo, hi) = (t.cwnd_min_bytes[i].unwrap(), t.cwnd_max_bytes[i].unwrap());
        assert!(lo <= hi);
        assert!((0.0..=1.0).contains(&t.alpha[i]));
    }
    // A window in which marks arrived shows the window moving (a cut and growth).
    assert!(marked.iter().any(|&i| t.cwnd_min_bytes[i] != t.cwnd_max_bytes[i]));
}

/// Swift versus Swift + fast ramp-up: eight competing flows end together; how
/// long until the survivor carries 90% of the link? Returns picoseconds.
pub fn swift_ramp_time(fru: bool) -> u64 {
    let mut flows = "[[flow]]\nsrc = \"h0\"\ndst = \"rx\"\nsize = \"1GB\"\n".to_string();
    for i in 1..=8 {
        flows.push_str(&format!("[[flow]]\nsrc = \"h{i}\"\ndst = \"rx\"\nsize = \"5MB\"\n"));
    }
    let extra = if fru { "[signals.csig]\ntype = \"abw_c\"\nabw_interval = \"8us\"\n" } else { "" };
    let toml = dumbbell(9, &format!("[switch]\nmode = \"pfc\"\n[transport]\ncc = \"swift\"\n[transport.swift]\nfast_ramp_up = {fru}\n{extra}[monitor]\nlinks = false\n{flows}"));
    let mut w = World::new(load_with(&toml, &["stop=\"5ms\""]));
    let step = 2_000_000; // 2 us
    let mut t = 0;
    while w.flows()[1..].iter().any(|f| f.finish_ps.is_none()) {
        t += step;
        w.run_until(t);
        assert!(t < 5_000_000_000, "the short flow must finish");
    }
    let end = w.flows()[1..].iter().map(|f| f.finish_ps.unwrap()).max().unwrap();
    let wire = (w.scenario().transport.mtu + w.scenario().transport.header) as f64;
    // 90% of 100 Gb/s over a 10 us sliding window, sampled every 2 us.
    let win = 10_000_000u64;
    let mut hist: std::collections::VecDeque<(u64, u32)> = std::collections::VecDeque::new();
    loop {
        hist.push_back((t, w.flows()[0].rcv_nxt));
        while hist.front().is_some_and(|&(t0, _)| t - t0 > win) {
            hist.pop_front();
        }
        if let (Some(&(t0, a)), Some(&(t1, b))) = (hist.front(), hist.back()) {
            if t1 - t0 == win && (b - a) as f64 * wire * 8.0 / (win as f64 / 1e12) >= 0.9 * 100e9 {
                return t - end;
            }
        }
        t += step;
        w.run_until(t);
        assert!(t < 5_000_000_000, "the survivor never reached 90%");
    }
}

#[test]
fn swift_fast_ramp_up_reclaims_the_link_sooner() {
    let plain = swift_ramp_time(false);
    let fru = swift_ramp_time(true);
    println!("time to 90% after the competitors end: swift {} us, swift + FRU {} us", plain as f64 / 1e6, fru as f64 / 1e6);
    assert!(fru < plain, "FRU {fru} ps vs plain {plain} ps");
}

/// Timely on the queue-stamping paper's chain: the main flow crosses five
/// switch-to-switch links whose cross traffic makes the non-bottleneck queues
/// oscillate; driven by MAX of the per-hop stamps it ignores them.
#[test]
fn timely_max_stamps_beat_rtt_on_the_chain() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/chain_cross_traffic.toml");
    let run = |sets: &[&str]| {
        let ov: Vec<csigsim::Override> = sets.iter().map(|s| csigsim::Override::parse(s).unwrap()).collect();
        let out = csigsim::run(csigsim::scenario::load_file(&path, &ov, None).unwrap(), |_| true);
        let main = out.tables.flows.delivered_bytes[0] as f64;
        main * 8.0 / 20e-3 / 1e9
    };
    let rtt = run(&["transport.cc=\"timely\"", "transport.timely.signal=\"rtt\""]);
    let max = run(&["transport.cc=\"timely\"", "transport.timely.signal=\"max\"", "signals.stamp.collect=\"enqueue\""]);
    println!("main flow over 20 ms: Timely RTT {rtt:.3} Gb/s, Timely MAX {max:.3} Gb/s");
    assert!(max > 1.5 * rtt, "MAX {max} vs RTT {rtt}");
}

#[test]
fn nscc_on_the_dumbbell() {
    check("nscc", &[]);
}

/// The CSIG tutorial's 3-flow parking lot (scenarios/nscc_parking_lot.toml):
/// the victim crosses two congested queues. Baseline NSCC reacts to the
/// whole path's delay and starves it; NSCC on CSIG max(Delay) reacts to the
/// worst single queue, as the non-victims do, and shares more evenly.
#[test]
fn nscc_csig_max_delay_shares_the_parking_lot_more_evenly() {
    let run = |signal: &str| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/nscc_parking_lot.toml");
        let ov = [csigsim::Override::parse(&format!("transport.nscc.delay_signal=\"{signal}\"")).unwrap()];
        let mut w = World::new(csigsim::scenario::load_file(&path, &ov, None).unwrap());
        w.run(u64::MAX);
        let r = csigsim::output::collect(&w, 0.0, "stop_time");
        let tput: Vec<f64> = w.flows().iter().map(|f| f.delivered_bytes() as f64 * 8.0 / w.now() as f64 * 1e3).collect();
        // Flow 1 is the victim; the summary's min and max are the victim and the busier non-victim.
        assert!(tput[1] < tput[0].min(tput[2]) || signal == "csig");
        let ratio = (tput[0] + tput[2]) / 2.0 / tput[1];
        println!("nscc {signal:<4} throughput 0->2 {:.2} victim {:.2} 9->10 {:.2} Gb/s, non-victim : victim {ratio:.2}, summary max : min {:.2}",
            tput[0], tput[1], tput[2], r.summary.throughput_max_gbps.unwrap() / r.summary.throughput_min_gbps.unwrap());
        (ratio, tput)
    };
    let (base, bt) = run("rtt");
    let (csig, ct) = run("csig");
    assert!(base > 2.0, "baseline starves the victim: {base:.2}");
    assert!(csig < base, "csig {csig:.2} baseline {base:.2}");
    assert!((csig.ln()).abs() < (base.ln()).abs(), "CSIG's ratio is closer to 1: csig {csig:.2} baseline {base:.2}");
    // The bottlenecks stay busy: ToR 0's uplink carries 0->2 and the victim.
    assert!(bt[0] + bt[1] > 55.0 && ct[0] + ct[1] > 55.0, "{bt:?} {ct:?}");
}
