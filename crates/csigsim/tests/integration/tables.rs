//! The CSV files are the typed tables formatted: every cell of every row
//! equals the table's value, written as docs/outputs.md says.

use csigsim::output::fmt_ns;
use csigsim::output::schema::header;
use csigsim::RunOutput;
use std::path::Path;

/// Splits a CSV line, honouring quoted cells.
fn cells(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut().unwrap().push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(String::new()),
            _ => out.last_mut().unwrap().push(c),
        }
    }
    out
}

/// The data rows of a CSV text, after checking its header.
fn csv_rows(text: &str, header: &str) -> Vec<Vec<String>> {
    let mut lines = text.lines();
    assert_eq!(format!("{}\n", lines.next().unwrap()), header);
    lines.map(cells).collect()
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(String::new, |x| x.to_string())
}

fn run(sets: &[&str]) -> RunOutput {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/chain_csig_delay.toml");
    let mut all = vec!["monitor.cc=true"];
    all.extend_from_slice(sets);
    let ov: Vec<csigsim::Override> = all.iter().map(|s| csigsim::Override::parse(s).unwrap()).collect();
    csigsim::run(csigsim::scenario::load_file(&path, &ov, None).unwrap(), |_| true)
}

fn check_flows(out: &RunOutput) {
    let t = &out.tables.flows;
    let rows = csv_rows(&out.flows_csv(), &header::<csigsim::output::FlowTable>());
    assert_eq!(rows.len(), t.len());
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r.len(), 28);
        assert_eq!(r[0], t.flow_id[i].to_string());
        assert_eq!((r[1].as_str(), r[2].as_str(), r[3].as_str()), (t.flow_name(i), t.src_name(i), t.dst_name(i)));
        assert_eq!(r[4], t.size_bytes[i].to_string());
        assert_eq!(r[5], fmt_ns(t.start_ps[i]));
        assert_eq!(r[6], t.finish_ps[i].map_or_else(String::new, fmt_ns));
        // fct_ns is finish_ns - start_ns, to the picosecond.
        assert_eq!(t.fct_ps[i], t.finish_ps[i].map(|f| f - t.start_ps[i]));
        assert_eq!(r[7], t.finish_ps[i].map_or_else(String::new, |f| fmt_ns(f - t.start_ps[i])));
        assert_eq!(r[8], fmt_ns(t.ideal_fct_ps[i]));
        match t.fct_ps[i] {
            Some(fct) => {
                let slow = fct as f64 / t.ideal_fct_ps[i].max(1) as f64;
                assert_eq!(t.slowdown[i], Some(slow));
                assert_eq!(r[9], format!("{slow:.4}"));
            }
            None => assert_eq!((t.slowdown[i], r[9].as_str()), (None, "")),
        }
        let ints = [t.bytes_sent[i], t.retransmits[i], t.timeouts[i], t.nacks[i], t.trims[i], t.ecn_marked[i], t.delivered_bytes[i], t.cnps[i]];
        for (k, v) in ints.iter().enumerate() {
            assert_eq!(r[10 + k], v.to_string(), "row {i} column {}", 10 + k);
        }
        // The sender finishes when the final ACK arrives: after the receiver.
        assert_eq!(r[18], t.sender_finish_ps[i].map_or_else(String::new, fmt_ns));
        assert_eq!(t.sender_fct_ps[i], t.sender_finish_ps[i].map(|f| f - t.start_ps[i]));
        assert_eq!(r[19], t.sender_fct_ps[i].map_or_else(String::new, fmt_ns));
        let decisions = [t.nscc_fair[i], t.nscc_proportional[i], t.nscc_fast[i], t.nscc_noop[i], t.nscc_decrease[i], t.nscc_decrease_applied[i], t.nscc_quick_adapt[i], t.nscc_ignored[i]];
        for (k, v) in decisions.iter().enumerate() {
            assert_eq!(r[20 + k], opt(*v), "row {i} column {}", 20 + k);
        }
        if let (Some(s), Some(f)) = (t.sender_finish_ps[i], t.finish_ps[i]) {
            assert!(s > f, "row {i}: the final ACK arrives after the last byte");
        }
    }
}

#[test]
fn every_csv_cell_is_the_table_value_formatted() {
    let out = run(&[]);
    assert_eq!(out.summary.flows_completed as usize, out.tables.flows.len());
    check_flows(&out);

    let t = out.tables.links.as_ref().expect("links.csv is on");
    let rows = csv_rows(&out.links_csv(), &header::<csigsim::output::LinkColumns>());
    assert_eq!(rows.len(), t.len());
    assert_eq!(t.len(), t.windows as usize * t.links());
    let c = t.columns();
    assert_eq!(c.time_ps.len(), t.len());
    let mut busy = 0;
    for (i, (r, row)) in rows.iter().zip(t.rows()).enumerate() {
        assert_eq!(r[0], fmt_ns(c.time_ps[i]));
        assert_eq!(c.time_ps[i], (i / t.links()) as u64 * t.window_ps);
        assert_eq!((r[1].as_str(), r[2].as_str()), (t.nodes[c.from[i] as usize].as_str(), t.nodes[c.to[i] as usize].as_str()));
        assert_eq!((row.from, row.to), (r[1].as_str(), r[2].as_str()));
        assert_eq!(r[3], c.link_id[i].to_string());
        assert_eq!(c.link_id[i] as usize, i % t.links());
        assert_eq!(r[4], c.tx_bytes[i].to_string());
        let u = c.utilization[i];
        assert_eq!(r[5], if u == 0.0 { "0".to_string() } else { format!("{u:.6}") });
        busy += (u > 0.0) as usize;
        // A packet-level run measures queues: no empty cell.
        assert_eq!(r[6], c.max_queue_bytes[i].expect("a queue").to_string());
        assert_eq!(r[7], c.drops[i].expect("drops").to_string());
        assert_eq!(r[8], c.ecn_marks[i].expect("marks").to_string());
        assert_eq!(r[9], c.trims[i].expect("trims").to_string());
        assert_eq!(r[10], fmt_ns(c.pause_ps[i].expect("pauses")));
        assert_eq!((row.time_ps, row.tx_bytes, row.utilization, row.pause_ps), (c.time_ps[i], c.tx_bytes[i], u, c.pause_ps[i]));
    }
    assert!(busy > 0 && busy < t.len(), "busy and idle rows");

    let t = out.tables.signals.as_ref().expect("signals.csv is on");
    let rows = csv_rows(&out.signals_csv(), &header::<csigsim::output::SignalTable>());
    assert_eq!(rows.len(), t.len());
    assert!(!t.is_empty());
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r[0], fmt_ns(t.time_ps[i]));
        assert_eq!(r[1], t.flow_id[i].to_string());
        assert_eq!((r[2].as_str(), r[3].as_str()), (&*t.signal[i], &*t.unit[i]));
        assert_eq!(r[4], t.samples[i].to_string());
        // `{}` writes the shortest text that reads back as the same number.
        assert_eq!(r[5].parse::<f64>().unwrap(), t.mean[i]);
        assert_eq!(r[6].parse::<f64>().unwrap(), t.min[i]);
        assert_eq!(r[7].parse::<f64>().unwrap(), t.max[i]);
        assert_eq!(r[8], opt(t.locator[i]));
        assert_eq!(r[9], t.bottleneck_name(i));
    }
    assert!(t.bottlenecks.contains(&"s1->s2".to_string()));

    let t = out.tables.cc.as_ref().expect("cc.csv is on");
    let rows = csv_rows(&out.cc_csv(), &header::<csigsim::output::CcTable>());
    assert_eq!(rows.len(), t.len());
    assert!(!t.is_empty());
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r[0], fmt_ns(t.time_ps[i]));
        assert_eq!(r[1], t.flow_id[i].to_string());
        assert_eq!(r[2], t.ccs[t.cc[i] as usize]);
        assert_eq!(r[3], t.acks[i].to_string());
        assert_eq!((r[4].clone(), r[5].clone(), r[6].clone()), (opt(t.cwnd_bytes[i]), opt(t.cwnd_min_bytes[i]), opt(t.cwnd_max_bytes[i])));
        assert_eq!(r[7], t.rate_bps[i].to_string());
        assert_eq!(r[8].parse::<f64>().unwrap(), t.alpha[i]);
        assert_eq!(r[9].parse::<f64>().unwrap(), t.rtt_mean_ns[i]);
        assert_eq!(r[10].parse::<f64>().unwrap(), t.ce_fraction[i]);
    }
}

#[test]
fn unfinished_flows_have_empty_cells_and_no_values() {
    let out = run(&["stop=\"100us\""]);
    let t = &out.tables.flows;
    assert!(t.finish_ps.iter().any(Option::is_none), "the stop leaves flows unfinished");
    check_flows(&out);
}

#[test]
fn optional_tables_are_absent_when_off() {
    let out = run(&["monitor.links=false", "monitor.cc=false"]);
    assert!(out.tables.links.is_none() && out.tables.cc.is_none());
    assert_eq!((out.links_csv(), out.cc_csv()), (String::new(), String::new()));
    assert!(out.tables.signals.is_some());
}

/// flows.csv's `nscc_` columns: NSCC's decisions per flow, empty for other
/// congestion controls. On S1 (the parking lot) with CSIG max(Delay), the
/// victim's decisions are mostly multiplicative decreases; every counted
/// ACK is in one case, so each flow's cases add up to at least its
/// fulfilled increases' ACKs and the sub-counts stay within their case.
#[test]
fn nscc_decision_counts_per_flow() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/nscc_parking_lot.toml");
    let run = |sets: &[&str]| {
        let ov: Vec<csigsim::Override> = sets.iter().map(|s| csigsim::Override::parse(s).unwrap()).collect();
        csigsim::run(csigsim::scenario::load_file(&path, &ov, None).unwrap(), |_| true)
    };
    let out = run(&["stop=\"2ms\"", "transport.nscc.delay_signal=\"csig\""]);
    check_flows(&out);
    let f = &out.tables.flows;
    for i in 0..f.len() {
        let (fair, prop, fast, noop, dec, applied) = (
            f.nscc_fair[i].unwrap(),
            f.nscc_proportional[i].unwrap(),
            f.nscc_fast[i].unwrap(),
            f.nscc_noop[i].unwrap(),
            f.nscc_decrease[i].unwrap(),
            f.nscc_decrease_applied[i].unwrap(),
        );
        assert!(fast <= prop && applied <= dec, "flow {i}");
        assert!(fair + prop + noop + dec > 1000, "flow {i} took decisions on its ACKs");
    }
    let share = |i: usize| {
        let all = f.nscc_fair[i].unwrap() + f.nscc_proportional[i].unwrap() + f.nscc_noop[i].unwrap() + f.nscc_decrease[i].unwrap();
        f.nscc_decrease[i].unwrap() as f64 / all as f64
    };
    assert!(share(1) > 0.5, "the victim mostly decreases: {:.2}", share(1));
    // The CSV writes the counts; another algorithm leaves them empty.
    let text = out.flows_csv();
    let line = text.lines().nth(2).unwrap();
    assert!(line.ends_with(&format!(",{},{},{},{},{},{},{},{}", f.nscc_fair[1].unwrap(), f.nscc_proportional[1].unwrap(), f.nscc_fast[1].unwrap(), f.nscc_noop[1].unwrap(), f.nscc_decrease[1].unwrap(), f.nscc_decrease_applied[1].unwrap(), f.nscc_quick_adapt[1].unwrap(), f.nscc_ignored[1].unwrap())), "{line}");
    let d = run(&["stop=\"200us\"", "transport.cc=\"dctcp\""]);
    assert!(d.tables.flows.nscc_fair.iter().chain(&d.tables.flows.nscc_decrease).all(Option::is_none));
    assert!(d.flows_csv().lines().nth(1).unwrap().ends_with(",,,,,,,,"));
}
