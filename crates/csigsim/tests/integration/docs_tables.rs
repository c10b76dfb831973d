//! The tables of measured figures in the docs, generated from the runs that
//! measure them and compared with the pages (`common::doc_block`). A change
//! that moves a figure fails here until the page is refreshed with
//! `CSIGSIM_BLESS=1 cargo test -p csigsim --test integration docs_tables`.

use crate::cc_dumbbell::{self, Figures};
use crate::common::doc_block;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` over `items` on as many threads as the machine has cores, in order.
fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).min(items.len().max(1));
    let mut done: Vec<(usize, R)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { return out };
                        out.push((i, f(item)));
                    }
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    done.sort_by_key(|&(i, _)| i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// Rows of the dumbbell table: one set-up at several N.
struct Group {
    cc: &'static str,
    extra: &'static [&'static str],
    ns: &'static [usize],
    /// The first column, per N (or once, for a joined row).
    labels: &'static [&'static str],
    /// The last column, per N (or once, for a joined row).
    asserted: &'static [&'static str],
    /// One row for all N, cells "a / b / c" where they differ.
    joined: bool,
}

const ALL: &[usize] = &[2, 4, 16];
const YES: &[&str] = &["yes", "yes", "yes"];
const NO: &[&str] = &["no", "no", "no"];
// The overrides of the tests that assert these set-ups (shared runs).
const HPCC_1KB: &[&str] = &["transport.mtu=1000", "signals.int.max_hops=5"];
const SWIFT_FRU: &[&str] = &["signals.csig.type=\"abw_c\"", "transport.swift.fast_ramp_up=true"];
const REV_1KB: &[&str] = &["switch.ecn.mode=\"ecp\"", "transport.mtu=1000"];

const DUMBBELL: &[Group] = &[
    Group { cc: "dctcp", extra: &[], ns: ALL, labels: &["dctcp"; 3], asserted: YES, joined: false },
    Group { cc: "swift", extra: &[], ns: ALL, labels: &["swift"; 3], asserted: YES, joined: false },
    Group { cc: "swift", extra: SWIFT_FRU, ns: ALL, labels: &["swift + FRU (abw_c)"], asserted: &["yes"], joined: true },
    Group { cc: "nscc", extra: &[], ns: ALL, labels: &["nscc"; 3], asserted: YES, joined: false },
    Group {
        cc: "hpcc",
        extra: HPCC_1KB,
        ns: ALL,
        labels: &["hpcc (INT, 5 hops), 1 KB packets as in its source", "hpcc, 1 KB packets", "hpcc, 1 KB packets"],
        asserted: YES,
        joined: false,
    },
    Group { cc: "hpcc", extra: &["signals.int.max_hops=5"], ns: ALL, labels: &["hpcc, 4 KB packets"; 3], asserted: NO, joined: false },
    Group {
        cc: "dcqcn",
        extra: &[],
        ns: ALL,
        labels: &["dcqcn (hpcc profile, CNP for every marked packet)", "dcqcn (hpcc)", "dcqcn (hpcc)"],
        asserted: NO,
        joined: false,
    },
    Group {
        cc: "dcqcn",
        extra: &["transport.dcqcn.profile=\"paper\""],
        ns: &[2],
        labels: &["dcqcn (paper profile, CNP interval 50 us)"],
        asserted: &["no"],
        joined: false,
    },
    Group { cc: "timely", extra: &[], ns: ALL, labels: &["timely (paper defaults)", "timely", "timely"], asserted: NO, joined: false },
    Group { cc: "mcc", extra: &[], ns: ALL, labels: &["mcc"; 3], asserted: &["util, queue; Jain from N = 4", "yes", "yes"], joined: false },
    Group {
        cc: "dcqcn_rev",
        extra: REV_1KB,
        ns: ALL,
        labels: &[
            "dcqcn_rev (ECP marking, hpcc profile), 1 KB packets as in its source",
            "dcqcn_rev, 1 KB packets",
            "dcqcn_rev, 1 KB packets",
        ],
        asserted: YES,
        joined: false,
    },
    Group { cc: "dcqcn_rev", extra: &["switch.ecn.mode=\"ecp\""], ns: ALL, labels: &["dcqcn_rev, 4 KB packets"; 3], asserted: NO, joined: false },
    Group {
        cc: "dcqcn",
        extra: &["transport.mtu=1000"],
        ns: ALL,
        labels: &["dcqcn (hpcc profile), 1 KB packets"],
        asserted: &["no"],
        joined: true,
    },
];

/// Three decimals, bold when below the suite's target.
fn ratio(x: f64, target: f64) -> String {
    if x < target {
        format!("**{x:.3}**")
    } else {
        format!("{x:.3}")
    }
}

/// A queue in bytes as the number and unit the table shows (KB = 1000 B).
fn queue(b: u64) -> (String, &'static str) {
    match b {
        0 => ("0".into(), ""),
        _ if b < 10_000 => (format!("{:.1}", b as f64 / 1e3), "KB"),
        _ if b < 1_000_000 => (format!("{:.0}", b as f64 / 1e3), "KB"),
        _ => (format!("{:.2}", b as f64 / 1e6), "MB"),
    }
}

fn with_unit((v, unit): &(String, &str)) -> String {
    if unit.is_empty() {
        v.clone()
    } else {
        format!("{v} {unit}")
    }
}

/// One cell for several runs: the value once if they agree, else "a / b / c".
fn joined(cells: Vec<String>) -> String {
    if cells.iter().all(|c| *c == cells[0]) {
        cells[0].clone()
    } else {
        cells.join(" / ")
    }
}

fn queue_cell(qs: &[u64]) -> String {
    let parts: Vec<(String, &str)> = qs.iter().map(|&q| queue(q)).collect();
    let unit = parts[0].1;
    if parts.iter().all(|p| p.1 == unit) && parts.iter().any(|p| p.0 != parts[0].0) && !unit.is_empty() {
        format!("{} {unit}", parts.iter().map(|p| p.0.as_str()).collect::<Vec<_>>().join(" / "))
    } else {
        joined(parts.iter().map(with_unit).collect())
    }
}

/// docs/cc/README.md "Dumbbell figures" and the table of docs/cc/mcc.md.
#[test]
fn dumbbell_figures() {
    // The set-ups no other test runs first, so the shared ones are likely
    // done (or under way) by the time this test asks for them.
    let mut runs: Vec<(usize, usize)> =
        DUMBBELL.iter().enumerate().flat_map(|(g, gr)| gr.ns.iter().map(move |&n| (g, n))).collect();
    runs.sort_by_key(|&(g, _)| DUMBBELL[g].asserted.iter().any(|a| *a != "no"));
    let figs = par_map(&runs, |&(g, n)| cc_dumbbell::dumbbell_figures(DUMBBELL[g].cc, n, DUMBBELL[g].extra));
    let of = |g: usize, n: usize| -> Figures { figs[runs.iter().position(|&r| r == (g, n)).unwrap()] };

    let mut t = String::from("| algorithm | N | utilization | Jain | max queue | drops | asserted |\n|---|---|---|---|---|---|---|\n");
    for (g, gr) in DUMBBELL.iter().enumerate() {
        let fs: Vec<Figures> = gr.ns.iter().map(|&n| of(g, n)).collect();
        if gr.joined {
            let ns: Vec<String> = gr.ns.iter().map(|n| n.to_string()).collect();
            t += &format!(
                "| {} | {} | {} | {} | {} | {} | {} |\n",
                gr.labels[0],
                ns.join(" / "),
                joined(fs.iter().map(|f| ratio(f.util, 0.90)).collect()),
                joined(fs.iter().map(|f| ratio(f.jain, 0.95)).collect()),
                queue_cell(&fs.iter().map(|f| f.max_queue).collect::<Vec<_>>()),
                joined(fs.iter().map(|f| f.drops.to_string()).collect()),
                gr.asserted[0]
            );
        } else {
            for (i, (n, f)) in gr.ns.iter().zip(&fs).enumerate() {
                t += &format!(
                    "| {} | {n} | {} | {} | {} | {} | {} |\n",
                    gr.labels[i],
                    ratio(f.util, 0.90),
                    ratio(f.jain, 0.95),
                    with_unit(&queue(f.max_queue)),
                    f.drops,
                    gr.asserted[i]
                );
            }
        }
    }
    doc_block("docs/cc/README.md", "docs_tables::dumbbell_figures", &t);

    // MCC's page: the same runs, queues in bytes.
    let g = DUMBBELL.iter().position(|gr| gr.cc == "mcc").unwrap();
    let mut t = String::from("| N | utilization | Jain | max queue | drops |\n|---|---|---|---|---|\n");
    for &n in ALL {
        let f = of(g, n);
        let q = f.max_queue.to_string();
        let q: Vec<&str> = (0..q.len()).rev().step_by(3).map(|e| &q[e.saturating_sub(2)..=e]).collect();
        let q: Vec<&str> = q.into_iter().rev().collect();
        t += &format!("| {n} | {} | {} | {} B | {} |\n", ratio(f.util, 0.90), ratio(f.jain, 0.95), q.join(","), f.drops);
    }
    doc_block("docs/cc/mcc.md", "docs_tables::dumbbell_figures", &t);
}

/// docs/signals.md "Measured: incast with a victim": CE-marked data packets
/// per flow of scenarios/clos_incast_victim.toml under RED and ECP.
#[test]
fn ecp_incast_victim() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/clos_incast_victim.toml");
    let mut cases = Vec::new();
    for cc in ["none", "dctcp"] {
        for rate in [None, Some("25Gbps")] {
            for mode in ["red", "ecp"] {
                cases.push((cc, rate, mode));
            }
        }
    }
    let marks = par_map(&cases, |&(cc, rate, mode)| {
        // RED decides at enqueue too, as ECP does: the rows differ only in which packets may be marked.
        let mut sets = vec![format!("transport.cc=\"{cc}\""), format!("switch.ecn.mode=\"{mode}\""), "switch.ecn_at=\"enqueue\"".into()];
        sets.extend(rate.map(|r| format!("flow.4.rate=\"{r}\"")));
        let ov: Vec<csigsim::Override> = sets.iter().map(|s| csigsim::Override::parse(s).unwrap()).collect();
        let out = csigsim::run(csigsim::scenario::load_file(&path, &ov, None).unwrap(), |_| true);
        let f = &out.tables.flows;
        let names: Vec<&str> = (0..f.len()).map(|i| f.flow_name(i)).collect();
        assert_eq!(names, ["F0", "F1", "F4", "F8", "F3 victim"], "the columns of the table");
        f.ecn_marked.clone()
    });
    let mut t = String::from("| configuration | marking | F0 | F1 | F4 | F8 | F3 (victim) |\n|---|---|---|---|---|---|---|\n");
    for (&(cc, rate, mode), m) in cases.iter().zip(&marks) {
        let cc = if cc == "none" { "cc none" } else { cc };
        let rate = rate.map_or("line rate".to_string(), |r| r.replace("Gbps", " Gb/s"));
        let m: Vec<String> = m.iter().map(|x| x.to_string()).collect();
        t += &format!("| {cc}, victim at {rate} | {} | {} |\n", mode.to_uppercase(), m.join(" | "));
    }
    doc_block("docs/signals.md", "docs_tables::ecp_incast_victim", &t);
}

/// Two decimals, three below 0.01.
fn short(x: f64) -> String {
    if x < 0.01 {
        format!("{x:.3}")
    } else {
        format!("{x:.2}")
    }
}

/// docs/cc/timely.md "Behaviour at 100 Gb/s": utilization / Jain on the
/// dumbbell for the defaults, the stamp signal and the ns-3 preset.
#[test]
fn timely_dumbbell() {
    const NS3: &[&str] = &[
        "transport.timely.delta=\"100Mbps\"",
        "transport.timely.min_rate=\"1Gbps\"",
        "transport.timely.min_rtt=\"20us\"",
        "transport.timely.once_per_rtt=true",
    ];
    const MAX: &[&str] = &["transport.timely.signal=\"max\"", "signals.stamp.collect=\"enqueue\""];
    const T: &[&str] = &["transport.timely.t_low=\"20us\"", "transport.timely.t_high=\"200us\""];
    let rows: Vec<(&str, Vec<&str>)> = vec![
        ("defaults (`signal = \"rtt\"`)", vec![]),
        ("defaults, `signal = \"max\"` (`hope` law, every ACK)", MAX.to_vec()),
        ("ns-3 preset above", NS3.to_vec()),
        ("ns-3 preset, `t_low = \"20us\"`, `t_high = \"200us\"`", [NS3, T].concat()),
        ("the same with `signal = \"max\"`, `law = \"timely\"`", [NS3, T, MAX, &["transport.timely.law=\"timely\""]].concat()),
    ];
    let runs: Vec<(usize, usize)> = (0..rows.len()).flat_map(|r| ALL.iter().map(move |&n| (r, n))).collect();
    let figs = par_map(&runs, |&(r, n)| cc_dumbbell::dumbbell_figures("timely", n, &rows[r].1));
    let mut t = String::from("| configuration | N = 2 | N = 4 | N = 16 |\n|---|---|---|---|\n");
    for (r, (label, _)) in rows.iter().enumerate() {
        let cells: Vec<String> =
            (0..ALL.len()).map(|i| figs[r * ALL.len() + i]).map(|f| format!("{} / {}", short(f.util), short(f.jain))).collect();
        t += &format!("| {label} | {} |\n", cells.join(" | "));
    }
    doc_block("docs/cc/timely.md", "docs_tables::timely_dumbbell", &t);
}

/// docs/cc/swift.md "Measured: ramp-up after competitors leave".
#[test]
fn swift_ramp_up() {
    let us = par_map(&[false, true], |&fru| crate::cc_dumbbell::swift_ramp_time(fru) as f64 / 1e6);
    let t = format!(
        "| variant | time to 90% of the link |\n|---|---|\n| Swift | {:.2} us |\n| Swift + fast ramp-up (lambda 0.5) | {:.2} us |\n",
        us[0], us[1]
    );
    doc_block("docs/cc/swift.md", "docs_tables::swift_ramp_up", &t);
}

/// docs/cc/nscc.md: throughput of the parking lot's three flows over the run
/// (scenarios/nscc_parking_lot.toml), as the test
/// nscc_csig_max_delay_shares_the_parking_lot_more_evenly measures it.
#[test]
fn nscc_parking_lot() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/nscc_parking_lot.toml");
    let tput = par_map(&["rtt", "csig"], |signal| {
        let ov = [csigsim::Override::parse(&format!("transport.nscc.delay_signal=\"{signal}\"")).unwrap()];
        let mut w = csigsim::World::new(csigsim::scenario::load_file(&path, &ov, None).unwrap());
        w.run(u64::MAX);
        w.flows().iter().map(|f| f.delivered_bytes() as f64 * 8.0 / w.now() as f64 * 1e3).collect::<Vec<f64>>()
    });
    let mut t = String::from("| delay signal | 0 -> 2 | victim 1 -> 10 | 9 -> 10 | non-victim : victim |\n|---|---|---|---|---|\n");
    for (label, g) in ["`rtt` (baseline)", "`csig` (CSIG max(Delay))"].iter().zip(&tput) {
        let ratio = (g[0] + g[2]) / 2.0 / g[1];
        t += &format!("| {label} | {:.2} Gb/s | {:.2} Gb/s | {:.2} Gb/s | {ratio:.2} |\n", g[0], g[1], g[2]);
    }
    doc_block("docs/cc/nscc.md", "docs_tables::nscc_parking_lot", &t);
}

/// docs/cc/dcqcn-rev.md: the incast with a victim under PFC alone, DCQCN
/// (RED and ECP marking) and DCQCN-Rev, with the DCQCN paper's constants.
#[test]
fn dcqcn_rev_incast() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/clos_incast_victim.toml");
    let rows: [(&str, &[&str]); 4] = [
        ("PFC only (`cc = \"none\"`)", &[]),
        ("DCQCN, RED marking", &["transport.cc=\"dcqcn\"", "transport.dcqcn.profile=\"paper\""]),
        ("DCQCN, ECP marking (no ENP/ERP)", &["transport.cc=\"dcqcn\"", "transport.dcqcn.profile=\"paper\"", "switch.ecn.mode=\"ecp\""]),
        ("DCQCN-Rev", &["transport.cc=\"dcqcn_rev\"", "transport.dcqcn.profile=\"paper\"", "switch.ecn.mode=\"ecp\""]),
    ];
    let outs = par_map(&rows, |(_, sets)| {
        // Every row decides marking at enqueue, where ECP does.
        let sets: Vec<&str> = sets.iter().copied().chain(["switch.ecn_at=\"enqueue\""]).collect();
        let ov: Vec<csigsim::Override> = sets.iter().map(|s| csigsim::Override::parse(s).unwrap()).collect();
        let mut w = csigsim::World::new(csigsim::scenario::load_file(&path, &ov, None).unwrap());
        w.run(u64::MAX);
        assert_eq!(w.stats().flows_completed, 5, "{sets:?}");
        let ms = |ps: u64| format!("{:.2}", ps as f64 / 1e9);
        let fct: Vec<String> = w.flows().iter().map(|f| ms(f.finish_ps.unwrap() - f.start_ps)).collect();
        let end = ms(w.flows().iter().map(|f| f.finish_ps.unwrap()).max().unwrap());
        let s = w.stats();
        (fct, end, s.cnps_sent, s.cnps_suppressed, w.flows()[4].cnps, s.pauses_sent)
    });
    let mut t = String::from(
        "| | last byte | FCT F0 / F1 / F4 / F8 | FCT victim F3 | CNPs (suppressed) | PAUSEs |\n|---|---|---|---|---|---|\n",
    );
    for ((label, _), (fct, end, cnps, suppressed, victim_cnps, pauses)) in rows.iter().zip(&outs) {
        let incast = if fct[..4].iter().all(|f| *f == fct[0]) { format!("{} ms each", fct[0]) } else { format!("{} ms", fct[..4].join(" / ")) };
        // Suppression is DCQCN-Rev's; its row also gives the victim's CNPs.
        let cnps = if *suppressed > 0 { format!("{cnps} ({suppressed}), F3: {victim_cnps}") } else { cnps.to_string() };
        t += &format!("| {label} | {end} ms | {incast} | {} ms | {cnps} | {pauses} |\n", fct[4]);
    }
    doc_block("docs/cc/dcqcn-rev.md", "docs_tables::dcqcn_rev_incast", &t);
}

/// docs/signals.md "Why these delay buckets": S1's non-victim : victim
/// throughput ratio under CSIG max(Delay) with no quantization, the wide
/// tag, and the compact tag's default and former buckets; the default
/// compact tag must stay within 10% of the unquantized ratio.
#[test]
fn csig_buckets_s1() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/nscc_parking_lot.toml");
    let unq: &[&str] = &["signals.csig.value_bits=31", "signals.csig.locator_bits=3", "signals.csig.step=\"1ps\""];
    let cases: [(&str, &str, &[&str]); 4] = [
        ("none (`size = \"wide\"`, `value_bits = 31`, `locator_bits = 3`, `step = \"1ps\"`: 2^31 ps, 2.1 ms, before saturation)", "", unq),
        ("wide, 8 bytes (the scenario's)", "128 ns steps", &[]),
        ("compact, 4 bytes, `target` (default)", "31 edges above", &["signals.csig.size=\"compact\""]),
        ("compact, 4 bytes, `geometric` (former default)", "100 ns to 1 ms", &["signals.csig.size=\"compact\"", "signals.csig.buckets.delay=\"geometric\""]),
    ];
    let figs = par_map(&cases, |&(_, _, sets)| {
        let mut ov = vec![csigsim::Override::parse("transport.nscc.delay_signal=\"csig\"").unwrap()];
        ov.extend(sets.iter().map(|s| csigsim::Override::parse(s).unwrap()));
        let out = csigsim::run(csigsim::scenario::load_file(&path, &ov, None).unwrap(), |_| true);
        let f = &out.tables.flows;
        // Goodput over the run (the flows are longer than it), as S1's figure.
        let gbps = |i: usize| f.delivered_bytes[i] as f64 * 8.0 / (out.summary.sim_time_ns - f.start_ps[i] as f64 / 1e3);
        let (victim, others) = (gbps(1), (gbps(0) + gbps(2)) / 2.0);
        (others / victim, victim, others)
    });
    let (none, compact) = (figs[0].0, figs[2].0);
    assert!((compact / none - 1.0).abs() < 0.10, "default compact buckets {compact:.3}:1 against {none:.3}:1 unquantized");
    assert!(figs[3].0 > compact, "the former geometric buckets were further off");
    let mut t = String::from("| tag | buckets | ratio | victim Gb/s | non-victims Gb/s |\n|---|---|---|---|---|\n");
    for (&(tag, buckets, _), &(r, v, o)) in cases.iter().zip(&figs) {
        t += &format!("| {tag} | {buckets} | {r:.3}:1 | {v:.2} | {o:.2} |\n");
    }
    doc_block("docs/signals.md", "docs_tables::csig_buckets_s1", &t);
}
