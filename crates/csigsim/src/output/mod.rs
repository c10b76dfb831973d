//! The run directory: `summary.json`, `flows.csv`, `links.csv` and the
//! scenario as run (`scenario.toml`). Every column is described in
//! docs/outputs.md. Times are nanoseconds written exactly (up to three
//! decimals, since the engine counts picoseconds).

pub use crate::monitor::capture;

use crate::engine::World;
use serde::Serialize;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;

pub use crate::units::fmt_ns;


#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    pub name: String,
    pub seed: u64,
    pub version: String,
    pub topology: String,
    pub hosts: usize,
    pub switches: usize,
    pub links: usize,
    pub cc: String,
    pub switch_mode: String,
    pub routing: String,
    /// "completed", "stop_time" or "interrupted".
    pub end_reason: String,
    pub sim_time_ns: f64,
    pub wall_s: f64,
    pub events: u64,
    pub link_hops: u64,
    pub events_per_link_hop: f64,
    pub link_hops_per_s: f64,
    pub packets_injected: u64,
    pub packets_delivered: u64,
    pub packets_dropped: u64,
    pub packets_trimmed: u64,
    pub ecn_marks: u64,
    pub pauses_sent: u64,
    pub resumes_sent: u64,
    pub acks_sent: u64,
    pub nacks_sent: u64,
    pub cnps_sent: u64,
    pub cnps_suppressed: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub flows_total: usize,
    pub flows_completed: u64,
    pub fct_p50_ns: Option<f64>,
    pub fct_p99_ns: Option<f64>,
    pub fct_max_ns: Option<f64>,
    pub slowdown_p50: Option<f64>,
    pub slowdown_p99: Option<f64>,
    pub throughput_min_gbps: Option<f64>,
    pub throughput_max_gbps: Option<f64>,
    pub max_switch_buffer_bytes: u64,
    pub invariants_ok: bool,
    pub invariant_violations: Vec<String>,
}

/// Everything a run produced, in memory.
#[derive(Clone, Debug)]
pub struct RunOutput {
    pub summary: Summary,
    pub flows_csv: String,
    pub links_csv: String,
    /// Empty when the scenario enables no signal.
    pub signals_csv: String,
    /// Empty unless `monitor.cc` is on.
    pub cc_csv: String,
    pub scenario_toml: String,
    /// Per-flow results for callers that want numbers, not text.
    pub flows: Vec<FlowResult>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FlowResult {
    pub flow_id: u32,
    pub name: String,
    pub src: u32,
    pub dst: u32,
    pub size_bytes: u64,
    pub start_ps: u64,
    pub finish_ps: Option<u64>,
    pub ideal_fct_ps: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub nacks: u64,
    pub trims: u64,
    pub bytes_sent: u64,
}

impl FlowResult {
    pub fn fct_ps(&self) -> Option<u64> {
        self.finish_ps.map(|f| f - self.start_ps)
    }
}

fn percentile(sorted: &[u64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let i = ((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len()) - 1;
    Some(sorted[i] as f64)
}

/// Ideal FCT: the flow alone on its path: the first packet's store-and-forward
/// latency plus the remaining wire bytes at the path's slowest rate.
fn ideal_fct(w: &World, f: &crate::transport::Flow) -> u64 {
    let t = &w.scenario().transport;
    let first = (f.payload(0) + t.header) as u64;
    let total_wire = f.size + f.npkts as u64 * t.header as u64;
    let (lat, slowest) = w.path_latency(f.src, f.dst, first);
    lat + crate::units::tx_time_ps(total_wire - first, slowest)
}

pub fn collect(w: &World, wall_s: f64, end_reason: &str) -> RunOutput {
    let sc = w.scenario();
    let mut flows = Vec::with_capacity(w.flows().len());
    for (i, f) in w.flows().iter().enumerate() {
        flows.push(FlowResult {
            flow_id: f.id,
            name: sc.flows[i].name.clone(),
            src: f.src,
            dst: f.dst,
            size_bytes: f.size,
            start_ps: f.start_ps,
            finish_ps: f.finish_ps,
            ideal_fct_ps: ideal_fct(w, f),
            retransmits: f.retransmits,
            timeouts: f.timeouts,
            nacks: f.nacks,
            trims: f.trims,
            bytes_sent: f.bytes_sent,
        });
    }
    let mut fcts: Vec<u64> = flows.iter().filter_map(|f| f.fct_ps()).collect();
    fcts.sort_unstable();
    let mut slow: Vec<f64> =
        flows.iter().filter_map(|f| f.fct_ps().map(|x| x as f64 / f.ideal_fct_ps.max(1) as f64)).collect();
    slow.sort_by(f64::total_cmp);
    let pct_f = |q: f64| {
        if slow.is_empty() {
            None
        } else {
            Some(slow[((slow.len() as f64 * q).ceil() as usize).clamp(1, slow.len()) - 1])
        }
    };
    // Each started flow's average throughput: payload delivered in order over
    // the time from its start to its completion (or to the end of the run).
    let now = w.now();
    let tputs: Vec<f64> = w
        .flows()
        .iter()
        .filter(|f| f.start_ps < now)
        .map(|f| {
            f.delivered_bytes() as f64 * 8.0 / (f.finish_ps.unwrap_or(now) - f.start_ps).max(1) as f64 * 1e3
        })
        .collect();
    let violations = w.check_invariants();
    let s = w.stats();
    let events = w.events();
    let summary = Summary {
        name: sc.name.clone(),
        seed: sc.seed,
        version: crate::VERSION.to_string(),
        topology: sc.topology_kind.to_string(),
        hosts: sc.topology.hosts.len(),
        switches: sc.topology.switches.len(),
        links: sc.topology.links.len(),
        cc: sc.transport.cc.name().to_string(),
        switch_mode: format!("{:?}", sc.switch.mode).to_lowercase(),
        routing: format!("{:?}", sc.switch.routing).to_lowercase(),
        end_reason: end_reason.to_string(),
        sim_time_ns: now as f64 / 1000.0,
        wall_s,
        events,
        link_hops: s.link_hops,
        events_per_link_hop: if s.link_hops > 0 { events as f64 / s.link_hops as f64 } else { 0.0 },
        link_hops_per_s: if wall_s > 0.0 { s.link_hops as f64 / wall_s } else { 0.0 },
        packets_injected: s.packets_injected,
        packets_delivered: s.data_packets_delivered,
        packets_dropped: s.packets_dropped,
        packets_trimmed: s.packets_trimmed,
        ecn_marks: s.ecn_marks,
        pauses_sent: s.pauses_sent,
        resumes_sent: s.resumes_sent,
        acks_sent: s.acks_sent,
        nacks_sent: s.nacks_sent,
        cnps_sent: s.cnps_sent,
        cnps_suppressed: s.cnps_suppressed,
        retransmits: s.retransmits,
        timeouts: s.timeouts,
        flows_total: w.flows().len(),
        flows_completed: s.flows_completed,
        fct_p50_ns: percentile(&fcts, 0.5).map(|v| v / 1000.0),
        fct_p99_ns: percentile(&fcts, 0.99).map(|v| v / 1000.0),
        fct_max_ns: fcts.last().map(|&v| v as f64 / 1000.0),
        slowdown_p50: pct_f(0.5),
        slowdown_p99: pct_f(0.99),
        throughput_min_gbps: tputs.iter().copied().reduce(f64::min),
        throughput_max_gbps: tputs.iter().copied().reduce(f64::max),
        max_switch_buffer_bytes: w.switches().iter().map(|s| s.max_used()).max().unwrap_or(0),
        invariants_ok: violations.is_empty(),
        invariant_violations: violations,
    };
    RunOutput {
        flows_csv: flows_csv(w, &flows),
        links_csv: if sc.monitor.links { links_csv(w) } else { String::new() },
        signals_csv: if sc.signals.any() { signals_csv(w) } else { String::new() },
        cc_csv: if sc.monitor.cc { cc_csv(w) } else { String::new() },
        scenario_toml: sc.resolved_toml.clone(),
        summary,
        flows,
    }
}

fn flows_csv(w: &World, flows: &[FlowResult]) -> String {
    let mut s = String::from("flow_id,name,src,dst,size_bytes,start_ns,finish_ns,fct_ns,ideal_fct_ns,slowdown,bytes_sent,retransmits,timeouts,nacks,trims,ecn_marked,delivered_bytes,cnps\n");
    let hosts = &w.scenario().topology.hosts;
    for f in flows {
        let (fin, fct, slow) = match f.finish_ps {
            Some(fp) => {
                let fct = fp - f.start_ps;
                (fmt_ns(fp), fmt_ns(fct), format!("{:.4}", fct as f64 / f.ideal_fct_ps.max(1) as f64))
            }
            None => (String::new(), String::new(), String::new()),
        };
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            f.flow_id,
            csv_field(&f.name),
            csv_field(&hosts[f.src as usize]),
            csv_field(&hosts[f.dst as usize]),
            f.size_bytes,
            fmt_ns(f.start_ps),
            fin,
            fct,
            fmt_ns(f.ideal_fct_ps),
            slow,
            f.bytes_sent,
            f.retransmits,
            f.timeouts,
            f.nacks,
            f.trims,
            w.flows()[f.flow_id as usize].ce_marks,
            w.flows()[f.flow_id as usize].delivered_bytes(),
            w.flows()[f.flow_id as usize].cnps,
        );
    }
    s
}

/// Reflected signals per flow and window (docs/outputs.md).
fn signals_csv(w: &World) -> String {
    use crate::monitor::signals::Series;
    use crate::signal::stamp::Collector;
    let mut rows: Vec<(u32, u32, &crate::monitor::signals::SignalRow)> = Vec::new();
    for f in w.flows() {
        for r in w.observers().signal_rows(f.id) {
            rows.push((r.window, f.id, r));
        }
    }
    rows.sort_by_key(|&(win, flow, r)| (win, flow, r.series as u8));
    let csig = w.scenario().signals.csig.as_ref().map(|c| c.sig);
    let stamp_unit = match w.scenario().signals.stamp.map(|s| s.collect) {
        Some(Collector::Sojourn) => "ns",
        _ => "B",
    };
    let mut s = String::from("time_ns,flow_id,signal,unit,samples,mean,min,max,locator,bottleneck\n");
    for (win, flow, r) in rows {
        let (name, unit, scale) = match r.series {
            Series::Csig => {
                let t = csig.expect("csig rows need csig");
                let scale = if t.unit() == "ns" { 1e-3 } else { 1.0 };
                (t.name(), t.unit(), scale)
            }
            Series::StampMax => ("stamp_max", stamp_unit, if stamp_unit == "ns" { 1e-3 } else { 1.0 }),
            Series::StampSum => ("stamp_sum", stamp_unit, if stamp_unit == "ns" { 1e-3 } else { 1.0 }),
            Series::StampSumSqu => ("stamp_sum_squ", stamp_unit, if stamp_unit == "ns" { 1e-3 } else { 1.0 }),
            Series::StampInd => ("stamp_ind", "fraction", 1.0),
            Series::IntHops => ("int_hops", "hops", 1.0),
            Series::IntMaxQlen => ("int_max_qlen", "B", 1.0),
        };
        let (lm, bottleneck) = match r.writer {
            Some((port, lm)) => {
                let p = &w.ports()[port as usize];
                (lm.to_string(), format!("{}->{}", w.node_name(p.node()), w.node_name(w.ports()[p.peer() as usize].node())))
            }
            None => (String::new(), String::new()),
        };
        let _ = writeln!(
            s,
            "{},{flow},{name},{unit},{},{},{},{},{lm},{bottleneck}",
            fmt_ns(win as u64 * w.observers().window_ps()),
            r.samples,
            r.mean * scale,
            r.min * scale,
            r.max * scale
        );
    }
    s
}

/// Congestion-control state per flow and window (docs/outputs.md).
fn cc_csv(w: &World) -> String {
    let mut rows: Vec<(u32, u32, &crate::monitor::cc::CcRow)> = Vec::new();
    for f in w.flows() {
        for r in w.observers().cc_rows(f.id) {
            rows.push((r.window, f.id, r));
        }
    }
    rows.sort_by_key(|&(win, flow, _)| (win, flow));
    let cwnd = |v: u64| if v == u64::MAX { String::new() } else { v.to_string() };
    let mut s = String::from("time_ns,flow_id,cc,acks,cwnd_bytes,cwnd_min_bytes,cwnd_max_bytes,rate_bps,alpha,rtt_mean_ns,ce_fraction\n");
    let cc = w.scenario().transport.cc.name();
    for (win, flow, r) in rows {
        let ce = if r.acked_pkts > 0 { r.ce_pkts as f64 / r.acked_pkts as f64 } else { 0.0 };
        let _ = writeln!(
            s,
            "{},{flow},{cc},{},{},{},{},{},{},{},{}",
            fmt_ns(win as u64 * w.observers().window_ps()),
            r.acks,
            cwnd(r.last.cwnd_bytes),
            cwnd(r.cwnd_min),
            cwnd(r.cwnd_max),
            r.last.rate_bps,
            r.last.alpha,
            r.rtt_sum_ps / r.acks as f64 / 1000.0,
            ce
        );
    }
    s
}

fn csv_field(v: &str) -> String {
    if v.contains([',', '"', '\n']) {
        format!("\"{}\"", v.replace('"', "\"\""))
    } else {
        v.to_string()
    }
}

fn links_csv(w: &World) -> String {
    let window = w.observers().window_ps();
    let nwin = (w.now() / window + 1) as usize;
    let ports = w.ports();
    let rows_of: Vec<&[crate::monitor::LinkWindow]> = w.observers().link_rows().map(|r| r.collect()).unwrap_or_default();
    let mut s = String::from("time_ns,from,to,link_id,tx_bytes,utilization,max_queue_bytes,drops,ecn_marks,trims,pause_ns\n");
    let names: Vec<&str> = (0..ports.len()).map(|p| w.node_name(ports[p].node())).collect();
    let mut cursor = vec![0usize; ports.len()];
    for win in 0..nwin {
        let t = fmt_ns(win as u64 * window);
        for (pid, port) in ports.iter().enumerate() {
            let rows = rows_of[pid];
            let c = &mut cursor[pid];
            let row = if *c < rows.len() && rows[*c].window as usize == win {
                *c += 1;
                rows[*c - 1]
            } else {
                Default::default()
            };
            let util = row.busy_ps as f64 / window as f64;
            let peer = ports[port.peer() as usize].node();
            let _ = writeln!(
                s,
                "{t},{},{},{pid},{},{},{},{},{},{},{}",
                names[pid],
                w.node_name(peer),
                row.tx_bytes,
                if util == 0.0 { "0".to_string() } else { format!("{util:.6}") },
                row.max_queue_bytes,
                row.drops,
                row.ecn_marks,
                row.trims,
                fmt_ns(row.pause_ps)
            );
        }
    }
    s
}

impl RunOutput {
    /// Writes the run directory (creating it).
    pub fn write_dir(&self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let mut sj = serde_json::to_string_pretty(&self.summary).map_err(io::Error::other)?;
        sj.push('\n');
        std::fs::write(dir.join("summary.json"), sj)?;
        std::fs::write(dir.join("flows.csv"), &self.flows_csv)?;
        let links = dir.join("links.csv");
        if !self.links_csv.is_empty() {
            let mut f = io::BufWriter::new(std::fs::File::create(&links)?);
            f.write_all(self.links_csv.as_bytes())?;
            f.flush()?;
        } else if links.exists() {
            // A reused run directory must not keep another run's links.
            std::fs::remove_file(&links)?;
        }
        for (name, text) in [("signals.csv", &self.signals_csv), ("cc.csv", &self.cc_csv)] {
            let path = dir.join(name);
            if !text.is_empty() {
                std::fs::write(&path, text)?;
            } else if path.exists() {
                std::fs::remove_file(&path)?;
            }
        }
        std::fs::write(dir.join("scenario.toml"), &self.scenario_toml)?;
        Ok(())
    }

    pub fn summary_json(&self) -> String {
        serde_json::to_string_pretty(&self.summary).expect("summary serializes")
    }
}
