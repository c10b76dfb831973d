//! The run's results: the summary and the typed tables ([`tables`], each
//! declared once in [`schema`]), gathered from the simulation by
//! [`collect`], and the run directory (`summary.json`, `flows.csv`,
//! `links.csv`, `signals.csv`, `cc.csv` and the scenario as run,
//! `scenario.toml`) formatted from them ([`csv`], and `parquet` for the
//! twins); [`read`] reads a run directory back into the same tables. Every
//! column is described in docs/outputs.md. Times are nanoseconds written
//! exactly (up to three decimals, since the engine counts picoseconds).

pub use crate::monitor::capture;
pub mod csv;
pub mod diagnosis;
pub mod jobs;
pub mod ops;
#[cfg(feature = "parquet")]
pub mod parquet;
pub mod read;
pub mod rundir;
pub mod schema;
pub mod tables;
pub mod timeline;

pub use rundir::{RunDir, RunDirError, RunDirOptions};

pub use read::{read_run, Format, RunTables};
pub use schema::{Cell, ColumnDef, Kind, Table};
pub use tables::{CcTable, CollectiveTable, FlowTable, LinkColumns, LinkCounters, LinkRow, LinkTable, RpcTable, SignalTable, Tables};

use crate::engine::World;
use serde::Serialize;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

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
    /// The iteration times of the trace workloads (`goal`, `chakra`), what
    /// such a run is for: iterations.csv's totals rows. Absent without one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub iterations: Vec<IterationFigure>,
    /// "completed", "stop_time", "stalled" or "interrupted".
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
    /// A flow-level run's rung and what it does not model; absent at
    /// packet level.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fidelity: Option<FidelityNote>,
    /// What the scenario's set-up warns of (the command prints them first);
    /// absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// What the unfinished flows were stuck on, when the run stalled or ran
    /// out of events before every flow completed; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnosis: Option<diagnosis::Diagnosis>,
}

/// One iteration of a trace workload in summary.json (times in ns).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct IterationFigure {
    pub workload: String,
    pub iteration: u32,
    /// None when an operation of the iteration was not complete.
    pub time_ns: Option<f64>,
    /// Of the rank that ended last: the time it computed, and the rest.
    pub compute_ns: Option<f64>,
    pub exposed_ns: Option<f64>,
    pub critical_rank: Option<u32>,
}

/// summary.json's iterations: iterations.csv's totals rows.
fn summary_iterations(t: Option<&ops::IterationTable>) -> Vec<IterationFigure> {
    let Some(t) = t else { return Vec::new() };
    let ns = |v: Option<u64>| v.map(|x| x as f64 / 1000.0);
    (0..t.len())
        .filter(|&i| t.rank[i].is_none())
        .map(|i| IterationFigure {
            workload: t.workload[i].clone(),
            iteration: t.iteration[i],
            time_ns: ns(t.time_ps[i]),
            compute_ns: ns(t.compute_ps[i]),
            exposed_ns: ns(t.exposed_ps[i]),
            critical_rank: t.critical_rank[i],
        })
        .collect()
}

/// summary.json's `fidelity` of a flow-level run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FidelityNote {
    /// "flow".
    pub engine: String,
    /// What the scenario sets that the flow level does not model.
    pub not_modelled: Vec<String>,
}

/// Everything a run produced, in memory: the summary and the typed tables.
/// The CSV files are formatted from the tables when asked for
/// ([`RunOutput::write_dir`], [`RunOutput::flows_csv`] and the like). A run
/// that streamed its monitor files ([`crate::RunOptions::stream_dir`]) has
/// no tables for them: `streamed` says where the files are.
#[derive(Clone, Debug)]
pub struct RunOutput {
    pub summary: Summary,
    pub tables: Tables,
    pub scenario_toml: String,
    /// ops.csv (without rows when it was streamed) and iterations.csv:
    /// present when the scenario has a trace workload (`goal`, `chakra`).
    pub ops: Option<ops::OpTable>,
    pub iterations: Option<ops::IterationTable>,
    pub streamed: Option<Streamed>,
    /// How the run used threads (not an output file: the files are the
    /// same whatever the number of threads).
    pub threads: Threads,
    /// The budget or guard that ended the run, when one did
    /// (`end_reason` "output_limit" or "too_slow"): its outputs are
    /// incomplete, and the CLI writes no run directory.
    pub limit: Option<Limit>,
}

pub use crate::budget::Limit;

/// The partitions a run ran on ([`crate::RunOptions::threads`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Threads {
    /// Partitions of the fabric the run was cut into (1: the sequential engine).
    pub partitions: u32,
    /// Why a run asked to use several threads ran on fewer partitions
    /// than asked (one: the sequential engine).
    pub refused: Option<String>,
    /// What the parallel scheduler did (windows, events that crossed
    /// between partitions, wall time of the serial steps between windows), when the run
    /// was cut into partitions.
    pub scheduler: Option<crate::sim::parallel::ParallelStats>,
}

impl Threads {
    /// A run on the sequential engine, as nothing asked otherwise.
    pub const ONE: Threads = Threads { partitions: 1, refused: None, scheduler: None };
}

/// Monitor files written while the run went on: `files` in `dir`.
#[derive(Clone, Debug, PartialEq)]
pub struct Streamed {
    pub dir: PathBuf,
    pub files: Vec<&'static str>,
}

/// Every file of a run directory (a reused directory loses those the run
/// does not write).
pub const OUTPUT_FILES: [&str; 22] = [
    "summary.json",
    "flows.csv",
    "links.csv",
    "signals.csv",
    "cc.csv",
    "collectives.csv",
    "rpcs.csv",
    "scenario.toml",
    "flows.parquet",
    "links.parquet",
    "signals.parquet",
    "cc.parquet",
    "collectives.parquet",
    "rpcs.parquet",
    "jobs.csv",
    "job_links.csv",
    "jobs.parquet",
    "job_links.parquet",
    "ops.csv",
    "iterations.csv",
    "ops.parquet",
    "iterations.parquet",
];

/// The figures of the summary that come from the flows table.
struct FlowFigures {
    fct_p50_ns: Option<f64>,
    fct_p99_ns: Option<f64>,
    fct_max_ns: Option<f64>,
    slowdown_p50: Option<f64>,
    slowdown_p99: Option<f64>,
    throughput_min_gbps: Option<f64>,
    throughput_max_gbps: Option<f64>,
}

/// What the summary's figures need of each flow, gathered as the rows of
/// flows.csv are made (a run that streams them holds no flows table).
#[derive(Default)]
struct FigureAcc {
    fcts: Vec<u64>,
    slow: Vec<f64>,
    throughput_min_gbps: Option<f64>,
    throughput_max_gbps: Option<f64>,
}

impl FigureAcc {
    /// Adds the last row of `t`; `end_ps` is the end of the run.
    fn add_last(&mut self, t: &FlowTable, end_ps: u64) {
        let i = t.len() - 1;
        self.fcts.extend(t.fct_ps[i]);
        self.slow.extend(t.slowdown[i]);
        // Each started flow's average throughput: payload delivered in order
        // over the time from its start to its completion (or to the end of
        // the run).
        if t.start_ps[i] < end_ps {
            let tput = t.delivered_bytes[i] as f64 * 8.0 / (t.finish_ps[i].unwrap_or(end_ps) - t.start_ps[i]).max(1) as f64 * 1e3;
            self.throughput_min_gbps = Some(self.throughput_min_gbps.map_or(tput, |m| m.min(tput)));
            self.throughput_max_gbps = Some(self.throughput_max_gbps.map_or(tput, |m| m.max(tput)));
        }
    }

    fn figures(mut self) -> FlowFigures {
        use crate::stats::nearest_rank;
        self.fcts.sort_unstable();
        self.slow.sort_by(f64::total_cmp);
        FlowFigures {
            fct_p50_ns: nearest_rank(&self.fcts, 0.5).map(|v| v as f64 / 1000.0),
            fct_p99_ns: nearest_rank(&self.fcts, 0.99).map(|v| v as f64 / 1000.0),
            fct_max_ns: self.fcts.last().map(|&v| v as f64 / 1000.0),
            slowdown_p50: nearest_rank(&self.slow, 0.5),
            slowdown_p99: nearest_rank(&self.slow, 0.99),
            throughput_min_gbps: self.throughput_min_gbps,
            throughput_max_gbps: self.throughput_max_gbps,
        }
    }
}

/// Makes the rows of flows.csv from the flows' records, one at a time.
struct FlowRows<'w> {
    w: &'w World,
    paths: crate::net::PathMemo,
    /// Each name's index: the flow before's if it has the same (a
    /// collective's flows come in runs), else looked up.
    name_code: std::collections::HashMap<&'w str, u32>,
    last_name: Option<(&'w str, u32)>,
}

impl<'w> FlowRows<'w> {
    fn new(w: &'w World) -> FlowRows<'w> {
        FlowRows { w, paths: crate::net::PathMemo::new(w.network()), name_code: std::collections::HashMap::new(), last_name: None }
    }

    /// Appends flow `i`'s row to `ft`, whose names it adds to.
    fn push(&mut self, i: usize, ft: &mut FlowTable) {
        let (w, sc) = (self.w, self.w.scenario());
        let f = w.flow_store().record(crate::id::FlowId(i as u32));
        // Ideal FCT: the flow alone on its path: the first packet's
        // store-and-forward latency plus the remaining wire bytes at the
        // path's slowest rate.
        let first = (f.payload(0) + sc.transport.header) as u64;
        let total_wire = f.size + f.npkts as u64 * sc.transport.header as u64;
        let path = self.paths.walk(w.network(), f.src, f.dst, first);
        let ideal = path.latency_ps.saturating_add(crate::units::tx_time_ps(total_wire.saturating_sub(first), path.slowest_bps));
        let fct = f.finish_ps.map(|fp| fp - f.start_ps);
        ft.flow_id.push(f.id.0);
        let name = sc.flow_name(crate::id::FlowId(i as u32));
        let code = match self.last_name {
            Some((last, code)) if last == name => code,
            _ => *self.name_code.entry(name).or_insert_with(|| {
                ft.names.push(name.to_string());
                ft.names.len() as u32 - 1
            }),
        };
        self.last_name = Some((name, code));
        ft.name.push(code);
        ft.src.push(f.src.0);
        ft.dst.push(f.dst.0);
        ft.size_bytes.push(f.size);
        ft.start_ps.push(f.start_ps);
        ft.finish_ps.push(f.finish_ps);
        ft.fct_ps.push(fct);
        ft.ideal_fct_ps.push(ideal);
        ft.slowdown.push(fct.map(|x| x as f64 / ideal.max(1) as f64));
        ft.bytes_sent.push(f.bytes_sent);
        ft.retransmits.push(f.retransmits);
        ft.timeouts.push(f.timeouts);
        ft.nacks.push(f.nacks);
        ft.trims.push(f.trims);
        ft.ecn_marked.push(f.ce_marks);
        ft.delivered_bytes.push(f.delivered_bytes());
        ft.cnps.push(f.cnps);
        ft.sender_finish_ps.push(f.sender_done_ps);
        ft.sender_fct_ps.push(f.sender_done_ps.map(|s| s - f.start_ps));
        let d = f.decisions;
        ft.nscc_fair.push(d.map(|d| d.fair));
        ft.nscc_proportional.push(d.map(|d| d.proportional));
        ft.nscc_fast.push(d.map(|d| d.fast));
        ft.nscc_noop.push(d.map(|d| d.noop));
        ft.nscc_decrease.push(d.map(|d| d.decrease));
        ft.nscc_decrease_applied.push(d.map(|d| d.decrease_applied));
        ft.nscc_quick_adapt.push(d.map(|d| d.quick_adapt));
        ft.nscc_ignored.push(d.map(|d| d.ignored));
    }
}

/// The collector: the one place that reads the simulation's state at the end
/// of a run. It copies what the outputs need into the summary and the tables
/// in one pass; everything after it (figures, CSV, Python columns) works on
/// the tables alone.
pub fn collect(w: &World, wall_s: f64, end_reason: &str) -> RunOutput {
    collect_watched(w, wall_s, end_reason, &crate::watchdog::Mark::default())
}

/// [`collect`] for a run watched by a [`crate::watchdog::Watchdog`], whose
/// last progress is `mark`: a run that stalled or ran out of events with
/// flows unfinished gets a [`diagnosis::Diagnosis`].
pub fn collect_watched(w: &World, wall_s: f64, end_reason: &str, mark: &crate::watchdog::Mark) -> RunOutput {
    collect_to(w, wall_s, end_reason, mark, None).expect("a collector that writes no file cannot fail")
}

/// [`collect_watched`], with `flows_to` = (the files streamed so far,
/// whether with Parquet twins): flows.csv (and with `true` flows.parquet)
/// written into their directory as its rows are made, one at a time, the
/// output holding no flows table and naming every streamed file in
/// [`RunOutput::streamed`]. A collective of millions of flows thus never
/// holds its flows table (about 300 bytes a flow).
pub fn collect_to(w: &World, wall_s: f64, end_reason: &str, mark: &crate::watchdog::Mark, flows_to: Option<(Streamed, bool)>) -> io::Result<RunOutput> {
    let sc = w.scenario();
    let window_ps = w.observers().window_ps();
    let now = w.now();
    let hosts = &sc.topology.hosts;

    // flows.csv: a table, or rows written to the file as they are made.
    let n = w.flow_store().len();
    let mut rows = FlowRows::new(w);
    // At most one completion time and slowdown a flow.
    let mut acc = FigureAcc { fcts: Vec::with_capacity(n), slow: Vec::with_capacity(n), ..Default::default() };
    let stream_parquet = flows_to.as_ref().is_some_and(|f| f.1);
    let (ft, mut files_streamed) = match flows_to {
        None => {
            let mut ft = FlowTable { hosts: hosts.clone(), ..FlowTable::with_capacity(n) };
            for i in 0..n {
                rows.push(i, &mut ft);
                acc.add_last(&ft, now);
            }
            (ft, None)
        }
        Some((mut st, parquet)) => {
            let mut out = Stream::create(&st.dir, FlowTable { hosts: hosts.clone(), ..Default::default() }, parquet, &mut st.files)?;
            let (mut int, mut line) = (itoa::Buffer::new(), Vec::with_capacity(256));
            for i in 0..n {
                out.row(
                    |t| {
                        rows.push(i, t);
                        acc.add_last(t, now);
                    },
                    &mut int,
                    &mut line,
                )?;
            }
            out.close()?;
            (FlowTable { hosts: hosts.clone(), ..Default::default() }, Some(st))
        }
    };

    // links.csv: the monitor's non-idle windows, per port.
    let ports = w.ports();
    let streamed = w.observers().streamed();
    let links = w.observers().link_rows().filter(|_| !streamed).map(|port_rows| LinkTable {
        window_ps,
        windows: now / window_ps + 1,
        idle_rows: w.observers().idle_rows(),
        queues: !crate::flowsim::is_flow_level(sc),
        nodes: node_names(w),
        from: ports.iter().map(|p| p.node().0).collect(),
        to: ports.iter().map(|p| ports[p.peer()].node().0).collect(),
        active: port_rows.map(<[_]>::to_vec).collect(),
    });

    // signals.csv: ordered by window, flow, series.
    let signals = (sc.signals.any() && !streamed).then(|| {
        let mut rows: Vec<(u64, u32, &crate::monitor::signals::SignalRow)> = Vec::new();
        for f in (0..n as u32).map(crate::id::FlowId) {
            for r in w.observers().signal_rows(f) {
                rows.push((r.window, f.0, r));
            }
        }
        rows.sort_by_key(|&(win, flow, r)| (win, flow, r.series as u8));
        let labels = signal_labels(sc);
        let mut t = SignalTable::default();
        let mut port_index: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
        for (_, flow, r) in rows {
            let bottleneck = r.writer.map(|(port, _)| {
                let next = t.bottlenecks.len() as u32;
                *port_index.entry(port).or_insert_with(|| {
                    t.bottlenecks.push(port_name(w, crate::id::PortId(port)));
                    next
                })
            });
            push_signal_row(&mut t, &labels, window_ps, flow, r, bottleneck);
        }
        t
    });

    // cc.csv: ordered by window, flow.
    let cc_name = sc.transport.cc.name().to_string();
    let cc = (sc.monitor.cc && !streamed).then(|| {
        let mut rows: Vec<(u64, u32, &crate::monitor::cc::CcRow)> = Vec::new();
        for f in (0..n as u32).map(crate::id::FlowId) {
            for r in w.observers().cc_rows(f) {
                rows.push((r.window, f.0, r));
            }
        }
        rows.sort_by_key(|&(win, flow, _)| (win, flow));
        let mut t = CcTable::of(&cc_name);
        for (_, flow, r) in rows {
            push_cc_row(&mut t, window_ps, flow, r);
        }
        t
    });

    let figures = acc.figures();
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
        cc: cc_name,
        switch_mode: sc.switch.mode.name().to_string(),
        routing: sc.switch.routing.name().to_string(),
        iterations: Vec::new(),
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
        flows_total: w.flow_store().len(),
        flows_completed: s.flows_completed,
        fct_p50_ns: figures.fct_p50_ns,
        fct_p99_ns: figures.fct_p99_ns,
        fct_max_ns: figures.fct_max_ns,
        slowdown_p50: figures.slowdown_p50,
        slowdown_p99: figures.slowdown_p99,
        throughput_min_gbps: figures.throughput_min_gbps,
        throughput_max_gbps: figures.throughput_max_gbps,
        max_switch_buffer_bytes: w.switches().iter().map(|s| s.max_used()).max().unwrap_or(0),
        invariants_ok: violations.is_empty(),
        invariant_violations: violations,
        fidelity: (sc.engine.fidelity == crate::scenario::config::Fidelity::Flow).then(|| FidelityNote { engine: "flow".into(), not_modelled: crate::flowsim::not_modelled(sc) }),
        warnings: sc.transport.warnings(sc.switch.routing),
        diagnosis: match end_reason {
            "stalled" | "completed" => diagnosis::diagnose(w, end_reason, mark),
            _ => None,
        },
    };
    let collectives = (!sc.collectives.is_empty()).then(|| collectives_table(w));
    let rpcs = (!sc.rpcs.is_empty()).then(|| {
        let mut t = RpcTable { hosts: hosts.clone(), ..Default::default() };
        for r in &sc.rpcs {
            let f = w.flow_store().record(crate::id::FlowId(r.flow));
            t.flow_id.push(r.flow);
            t.name.push(r.name.clone());
            t.class.push(r.class.into());
            t.src.push(f.src.0);
            t.dst.push(f.dst.0);
            t.size_bytes.push(f.size);
            t.start_ps.push(f.start_ps);
            t.finish_ps.push(f.finish_ps);
            t.latency_ps.push(f.finish_ps.map(|fp| fp - f.start_ps));
        }
        t
    });
    // ops.csv: a table, or rows written to the file as they are made (a
    // trace of a thousand ranks has millions of operations).
    let (op_table, iterations) = match (&mut files_streamed, ops::any(w)) {
        (_, false) => (None, None),
        (None, true) => ops::tables(w).unzip(),
        (Some(st), true) => {
            let (names, first) = ops::names(w);
            let mut t = ops::OpTable { names, hosts: hosts.clone(), ..Default::default() };
            let mut out = Stream::create(&st.dir, t.clone(), stream_parquet, &mut st.files)?;
            let (mut int, mut line) = (itoa::Buffer::new(), Vec::with_capacity(256));
            let it = ops::rows(w, &first, &mut t, |t| out.row_of(t, &mut int, &mut line))?;
            out.close()?;
            (Some(ops::OpTable::default()), Some(it))
        }
    };
    let (jobs, job_links) = jobs::tables(w, iterations.as_ref());
    let summary = Summary { iterations: summary_iterations(iterations.as_ref()), ..summary };
    Ok(RunOutput {
        summary,
        tables: Tables { flows: ft, links, signals, cc, collectives, rpcs, jobs, job_links },
        scenario_toml: sc.resolved_toml.clone(),
        ops: op_table,
        iterations,
        streamed: files_streamed,
        threads: Threads::ONE,
        limit: None,
    })
}

/// Name, unit and scale (to the unit) of each signal series, as signals.csv
/// writes them for this scenario.
type SignalLabels = [(&'static str, &'static str, f64); crate::monitor::signals::SERIES];

fn signal_labels(sc: &crate::Scenario) -> SignalLabels {
    use crate::signal::stamp::Collector;
    let csig = match sc.signals.csig.as_ref().map(|c| c.sig) {
        Some(s) => (s.name(), s.unit(), if s.unit() == "ns" { 1e-3 } else { 1.0 }),
        // Not reachable: CSIG rows exist only when CSIG is on.
        None => ("csig", "", 1.0),
    };
    let stamp_unit = match sc.signals.stamp.map(|s| s.collect) {
        Some(Collector::Sojourn) => "ns",
        _ => "B",
    };
    let stamp_scale = if stamp_unit == "ns" { 1e-3 } else { 1.0 };
    // In `Series` order.
    [
        csig,
        ("stamp_max", stamp_unit, stamp_scale),
        ("stamp_sum", stamp_unit, stamp_scale),
        ("stamp_sum_squ", stamp_unit, stamp_scale),
        ("stamp_ind", "fraction", 1.0),
        ("int_hops", "hops", 1.0),
        ("int_max_qlen", "B", 1.0),
    ]
}

/// A port as `from->to` node names.
fn port_name(w: &World, port: crate::id::PortId) -> String {
    let ports = w.ports();
    let p = &ports[port];
    format!("{}->{}", w.node_name(p.node()), w.node_name(ports[p.peer()].node()))
}

fn push_signal_row(t: &mut SignalTable, labels: &SignalLabels, window_ps: u64, flow: u32, r: &crate::monitor::signals::SignalRow, bottleneck: Option<u32>) {
    let (name, unit, scale) = labels[r.series as usize];
    t.time_ps.push(r.window.saturating_mul(window_ps));
    t.flow_id.push(flow);
    t.signal.push(name.into());
    t.unit.push(unit.into());
    t.samples.push(r.samples);
    t.mean.push(r.mean * scale);
    t.min.push(r.min * scale);
    t.max.push(r.max * scale);
    t.locator.push(r.writer.map(|(_, lm)| lm));
    t.bottleneck.push(bottleneck);
}

fn push_cc_row(t: &mut CcTable, window_ps: u64, flow: u32, r: &crate::monitor::cc::CcRow) {
    let cwnd = |v: u64| (v != u64::MAX).then_some(v);
    t.time_ps.push(r.window.saturating_mul(window_ps));
    t.flow_id.push(flow);
    t.cc.push(0);
    t.acks.push(r.acks);
    t.cwnd_bytes.push(cwnd(r.last.cwnd_bytes));
    t.cwnd_min_bytes.push(cwnd(r.cwnd_min));
    t.cwnd_max_bytes.push(cwnd(r.cwnd_max));
    t.rate_bps.push(r.last.rate_bps);
    t.alpha.push(r.last.alpha);
    t.rtt_mean_ns.push(r.rtt_sum_ps / r.acks as f64 / 1000.0);
    t.ce_fraction.push(if r.acked_pkts > 0 { r.ce_pkts as f64 / r.acked_pkts as f64 } else { 0.0 });
}

/// Every node's name, by node id (hosts, then switches).
fn node_names(w: &World) -> Vec<String> {
    (0..(w.network().num_hosts() as usize + w.switches().len()) as u32).map(|n| w.node_name(crate::id::NodeId(n)).to_string()).collect()
}

type Out = io::BufWriter<Counted>;

/// A file that counts the bytes written through to it.
pub struct Counted {
    file: std::fs::File,
    written: u64,
}

impl Write for Counted {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}
/// One monitor file written as the run goes: each row is added to `buf`
/// and written as a CSV line at once; with a Parquet twin, `buf` keeps the
/// rows of the twin's next row group, else only the row being written.
struct Stream<T> {
    out: Out,
    buf: T,
    #[cfg(feature = "parquet")]
    twin: Option<parquet::TableWriter>,
}

impl<T: Table> Stream<T> {
    /// Creates `NAME.csv` in `dir` with its header (and with `parquet` its
    /// twin `NAME.parquet`); `buf` holds the names rows will refer to.
    fn create(dir: &Path, buf: T, parquet: bool, files: &mut Vec<&'static str>) -> io::Result<Stream<T>> {
        let name = format!("{}.csv", T::FILE);
        let path = dir.join(&name);
        let file = std::fs::File::create(&path).map_err(|e| io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display())))?;
        let mut out = io::BufWriter::new(Counted { file, written: 0 });
        out.write_all(schema::header::<T>().as_bytes())?;
        files.push(static_name(name));
        #[cfg(feature = "parquet")]
        let twin = match parquet {
            true => {
                let name = format!("{}.parquet", T::FILE);
                let t = parquet::TableWriter::create::<T>(&dir.join(&name))?;
                files.push(static_name(name));
                Some(t)
            }
            false => None,
        };
        #[cfg(not(feature = "parquet"))]
        if parquet {
            return Err(io::Error::other("Parquet twins need the `parquet` feature"));
        }
        Ok(Stream {
            out,
            buf,
            #[cfg(feature = "parquet")]
            twin,
        })
    }

    /// Adds the row `push` appends to `buf` to the files.
    fn row(&mut self, push: impl FnOnce(&mut T), int: &mut itoa::Buffer, line: &mut Vec<u8>) -> io::Result<()> {
        push(&mut self.buf);
        self.write_last(int, line)
    }

    /// Adds the last row of `t` to the files, `t` taking the place of
    /// `buf` (the rows of the next row group go with it): a maker of rows
    /// that holds its own table.
    fn row_of(&mut self, t: &mut T, int: &mut itoa::Buffer, line: &mut Vec<u8>) -> io::Result<()> {
        std::mem::swap(&mut self.buf, t);
        let r = self.write_last(int, line);
        std::mem::swap(&mut self.buf, t);
        r
    }

    /// Writes the last row of `buf`.
    fn write_last(&mut self, int: &mut itoa::Buffer, line: &mut Vec<u8>) -> io::Result<()> {
        line.clear();
        csv::write_row(&self.buf, self.buf.rows() - 1, int, line)?;
        self.out.write_all(line)?;
        #[cfg(feature = "parquet")]
        if let Some(t) = &mut self.twin {
            if self.buf.rows() >= parquet::ROW_GROUP {
                t.group(&self.buf, 0, self.buf.rows())?;
                self.buf.clear();
            }
            return Ok(());
        }
        self.buf.clear();
        Ok(())
    }

    fn written(&self) -> u64 {
        self.out.get_ref().written
    }

    fn close(&mut self) -> io::Result<()> {
        self.out.flush()?;
        #[cfg(feature = "parquet")]
        if let Some(mut t) = self.twin.take() {
            if self.buf.rows() > 0 {
                t.group(&self.buf, 0, self.buf.rows())?;
                self.buf.clear();
            }
            t.close::<T>()?;
        }
        Ok(())
    }
}

/// The file names of the monitor files, as the `&'static str` the run's
/// file lists hold: one of [`OUTPUT_FILES`].
fn static_name(name: String) -> &'static str {
    OUTPUT_FILES.iter().find(|f| **f == name).copied().unwrap_or("")
}

/// Each port's (from, to) node, and links.csv.
type LinkStream = (Vec<(u32, u32)>, Stream<LinkColumns>);

/// Writes links.csv, signals.csv and cc.csv as the monitors close their
/// windows (a [`crate::monitor::RowSink`]), through buffered writers, with
/// the same bytes as the files formatted from the tables, and with
/// `--parquet` their twins, a row group at a time.
pub struct StreamWriter {
    window_ps: u64,
    /// links.csv has queue cells (not at flow level).
    queues: bool,
    links: Option<LinkStream>,
    /// The series' labels, and the file, whose table names the bottlenecks
    /// by port (`from->to`).
    signals: Option<(SignalLabels, Stream<SignalTable>)>,
    cc: Option<Stream<CcTable>>,
    int: itoa::Buffer,
    line: Vec<u8>,
    files: Vec<&'static str>,
    error: Option<io::Error>,
    /// Bytes the monitor files may take (`--max-output`).
    max_output: u64,
    /// The budget was spent: rows after that were not written.
    over: bool,
}

impl StreamWriter {
    /// Creates in `dir` the monitor files `w`'s scenario asks for, with
    /// their headers, and with `parquet` their Parquet twins (an error
    /// without the `parquet` feature).
    pub fn create(dir: &Path, w: &World, parquet: bool, max_output: u64) -> io::Result<StreamWriter> {
        let sc = w.scenario();
        let mut files = Vec::new();
        let ports = w.ports();
        let links = match sc.monitor.links {
            true => {
                let ends = ports.iter().map(|p| (p.node().0, ports[p.peer()].node().0)).collect();
                let buf = LinkColumns { nodes: node_names(w), ..Default::default() };
                Some((ends, Stream::create(dir, buf, parquet, &mut files)?))
            }
            false => None,
        };
        let signals = match sc.signals.any() {
            true => {
                let names: Vec<String> = (0..ports.len() as u32).map(|p| port_name(w, crate::id::PortId(p))).collect();
                let buf = SignalTable { bottlenecks: names, ..Default::default() };
                Some((signal_labels(sc), Stream::create(dir, buf, parquet, &mut files)?))
            }
            false => None,
        };
        let cc = match sc.monitor.cc {
            true => Some(Stream::create(dir, CcTable::of(sc.transport.cc.name()), parquet, &mut files)?),
            false => None,
        };
        Ok(StreamWriter {
            window_ps: w.observers().window_ps(),
            queues: !crate::flowsim::is_flow_level(sc),
            links,
            signals,
            cc,
            int: itoa::Buffer::new(),
            line: Vec::with_capacity(256),
            files,
            error: None,
            max_output,
            over: false,
        })
    }

    /// Bytes written to each CSV file so far (those still in a buffer aside).
    fn files_written(&self) -> Vec<(&'static str, u64)> {
        let mut out = Vec::new();
        if let Some((_, s)) = &self.links {
            out.push(("links.csv", s.written()));
        }
        if let Some((_, s)) = &self.signals {
            out.push(("signals.csv", s.written()));
        }
        if let Some(s) = &self.cc {
            out.push(("cc.csv", s.written()));
        }
        out
    }

    /// The files it writes.
    pub fn files(&self) -> Vec<&'static str> {
        self.files.clone()
    }

    fn keep(&mut self, r: io::Result<()>) {
        if let Err(e) = r {
            self.error.get_or_insert(e);
        }
        let written: u64 = self.files_written().iter().map(|f| f.1).sum();
        self.over |= written > self.max_output;
    }
}

impl crate::monitor::RowSink for StreamWriter {
    fn link_row(&mut self, window: u64, link: u32, r: &LinkCounters) {
        let Some((ends, s)) = &mut self.links else { return };
        if self.error.is_some() || self.over {
            return;
        }
        let (from, to) = ends[link as usize];
        let row = LinkRow::new(self.window_ps, window, link, "", "", r, self.queues);
        let res = s.row(|t| t.push(&row, from, to), &mut self.int, &mut self.line);
        self.keep(res);
    }

    fn signal_row(&mut self, flow: u32, r: &crate::monitor::signals::SignalRow) {
        let Some((labels, s)) = &mut self.signals else { return };
        if self.error.is_some() || self.over {
            return;
        }
        // The stream's table names the bottlenecks by port.
        let window_ps = self.window_ps;
        let res = s.row(|t| push_signal_row(t, labels, window_ps, flow, r, r.writer.map(|(port, _)| port)), &mut self.int, &mut self.line);
        self.keep(res);
    }

    fn cc_row(&mut self, flow: u32, r: &crate::monitor::cc::CcRow) {
        let Some(s) = &mut self.cc else { return };
        if self.error.is_some() || self.over {
            return;
        }
        let window_ps = self.window_ps;
        let res = s.row(|t| push_cc_row(t, window_ps, flow, r), &mut self.int, &mut self.line);
        self.keep(res);
    }

    fn stopped(&self) -> bool {
        self.over || self.error.is_some()
    }

    fn written(&self) -> Vec<(&'static str, u64)> {
        self.files_written()
    }

    fn budget(&self) -> u64 {
        self.max_output
    }

    fn close(&mut self) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if let Some((_, s)) = &mut self.links {
            s.close()?;
        }
        if let Some((_, s)) = &mut self.signals {
            s.close()?;
        }
        if let Some(s) = &mut self.cc {
            s.close()?;
        }
        Ok(())
    }
}

impl RunOutput {
    /// Writes the run directory (creating it).
    pub fn write_dir(&self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let mut sj = serde_json::to_string_pretty(&self.summary).map_err(io::Error::other)?;
        sj.push('\n');
        std::fs::write(dir.join("summary.json"), sj)?;
        // A reused run directory must not keep another run's optional files.
        let streamed = |name: &str| self.copy_streamed(name, dir);
        if !streamed("flows.csv")? {
            write_file(&dir.join("flows.csv"), Some(&self.tables.flows), csv::write_flows)?;
        }
        if !streamed("links.csv")? {
            write_file(&dir.join("links.csv"), self.tables.links.as_ref(), csv::write_links)?;
        }
        if !streamed("signals.csv")? {
            write_file(&dir.join("signals.csv"), self.tables.signals.as_ref(), csv::write_signals)?;
        }
        if !streamed("cc.csv")? {
            write_file(&dir.join("cc.csv"), self.tables.cc.as_ref(), csv::write_cc)?;
        }
        write_file(&dir.join("collectives.csv"), self.tables.collectives.as_ref(), csv::write_collectives)?;
        write_file(&dir.join("rpcs.csv"), self.tables.rpcs.as_ref(), csv::write_rpcs)?;
        write_file(&dir.join("jobs.csv"), self.tables.jobs.as_ref(), csv::write_table)?;
        write_file(&dir.join("job_links.csv"), self.tables.job_links.as_ref(), csv::write_table)?;
        if !streamed("ops.csv")? {
            write_file(&dir.join("ops.csv"), self.ops.as_ref(), csv::write_table)?;
        }
        write_file(&dir.join("iterations.csv"), self.iterations.as_ref(), csv::write_table)?;
        std::fs::write(dir.join("scenario.toml"), &self.scenario_toml)?;
        Ok(())
    }

    /// Whether `name` was streamed; if so it is copied into `dir`, unless
    /// it is there already.
    fn copy_streamed(&self, name: &str, dir: &Path) -> io::Result<bool> {
        let Some(st) = self.streamed.as_ref().filter(|st| st.files.contains(&name)) else { return Ok(false) };
        let (from, to) = (st.dir.join(name), dir.join(name));
        if !same_file(&from, &to) {
            std::fs::copy(&from, &to)?;
        }
        Ok(true)
    }

    pub fn summary_json(&self) -> String {
        serde_json::to_string_pretty(&self.summary).expect("summary serializes")
    }

    /// The text of `flows.csv`.
    pub fn flows_csv(&self) -> String {
        self.streamed_text("flows.csv").unwrap_or_else(|| csv::to_string(&self.tables.flows, csv::write_flows))
    }

    /// The text of a streamed file, read back; `None` if it was not streamed.
    fn streamed_text(&self, name: &str) -> Option<String> {
        let st = self.streamed.as_ref().filter(|st| st.files.contains(&name))?;
        Some(std::fs::read_to_string(st.dir.join(name)).unwrap_or_default())
    }

    /// The text of `links.csv`; empty when `monitor.links` is off.
    pub fn links_csv(&self) -> String {
        self.streamed_text("links.csv")
            .unwrap_or_else(|| self.tables.links.as_ref().map_or_else(String::new, |t| csv::to_string(t, csv::write_links)))
    }

    /// The text of `signals.csv`; empty when the scenario enables no signal.
    pub fn signals_csv(&self) -> String {
        self.streamed_text("signals.csv")
            .unwrap_or_else(|| self.tables.signals.as_ref().map_or_else(String::new, |t| csv::to_string(t, csv::write_signals)))
    }

    /// The text of `rpcs.csv`; empty when the scenario has no `rpc` workload.
    pub fn rpcs_csv(&self) -> String {
        self.tables.rpcs.as_ref().map_or_else(String::new, |t| csv::to_string(t, csv::write_rpcs))
    }

    /// The text of `collectives.csv`; empty when the scenario runs no collective.
    pub fn collectives_csv(&self) -> String {
        self.tables.collectives.as_ref().map_or_else(String::new, |t| csv::to_string(t, csv::write_collectives))
    }

    /// The text of `jobs.csv`; empty when the scenario has no jobs.
    pub fn jobs_csv(&self) -> String {
        self.tables.jobs.as_ref().map_or_else(String::new, |t| csv::to_string(t, csv::write_table))
    }

    /// The text of `job_links.csv`; empty without jobs or at flow level.
    pub fn job_links_csv(&self) -> String {
        self.tables.job_links.as_ref().map_or_else(String::new, |t| csv::to_string(t, csv::write_table))
    }

    /// The text of `ops.csv`; empty without a trace workload.
    pub fn ops_csv(&self) -> String {
        self.streamed_text("ops.csv").unwrap_or_else(|| self.ops.as_ref().map_or_else(String::new, |t| csv::to_string(t, csv::write_table)))
    }

    /// The text of `iterations.csv`; empty without a trace workload.
    pub fn iterations_csv(&self) -> String {
        self.iterations.as_ref().map_or_else(String::new, |t| csv::to_string(t, csv::write_table))
    }

    /// The text of `cc.csv`; empty unless `monitor.cc` is on.
    pub fn cc_csv(&self) -> String {
        self.streamed_text("cc.csv").unwrap_or_else(|| self.tables.cc.as_ref().map_or_else(String::new, |t| csv::to_string(t, csv::write_cc)))
    }
}

/// The steps and totals of every collective instance, from its flows' actual
/// start and arrival times.
fn collectives_table(w: &World) -> CollectiveTable {
    let flows = w.flow_store();
    let mut t = CollectiveTable::default();
    // First start and last arrival of flows [a, b), if all arrived.
    let span = |a: u32, b: u32| -> (Option<u64>, Option<u64>) {
        let (mut start, mut finish, mut all) = (None::<u64>, None::<u64>, true);
        for f in (a..b).map(|i| flows.record(crate::id::FlowId(i))) {
            if f.started {
                start = Some(start.map_or(f.start_ps, |s| s.min(f.start_ps)));
            }
            all &= f.finish_ps.is_some();
            finish = finish.max(f.finish_ps);
        }
        (start, finish.filter(|_| all))
    };
    for (ci, c) in w.scenario().collectives.iter().enumerate() {
        let mut row = |step: Option<u32>, a: u32, b: u32, bw: bool| {
            let (start, finish) = span(a, b);
            let algbw = match (bw, start, finish) {
                (true, Some(s), Some(f)) if f > s => Some(c.size as f64 * 8.0 / (f - s) as f64 * 1e3),
                _ => None,
            };
            t.collective_id.push(ci as u32);
            t.name.push(c.name.clone());
            t.op.push(c.op.name().into());
            t.ranks.push(c.ranks);
            t.iteration.push(c.iteration);
            t.step.push(step);
            t.first_flow.push(a);
            t.flows.push(b - a);
            t.start_ps.push(start);
            t.finish_ps.push(finish);
            t.time_ps.push(start.zip(finish).map(|(s, f)| f - s));
            t.size_bytes.push(c.size);
            t.algbw_gbps.push(algbw);
            t.busbw_gbps.push(algbw.map(|x| x * c.op.bus_factor(c.ranks)));
        };
        for (s, r) in c.steps.iter().enumerate() {
            row(Some(s as u32), r.start, r.end, false);
        }
        let (a, b) = (c.steps[0].start, c.steps[c.steps.len() - 1].end);
        row(None, a, b, true);
    }
    t
}

/// Writes a table's CSV file, or removes a stale one when the table is absent.
fn write_file<T>(path: &Path, table: Option<&T>, write: fn(&T, &mut io::BufWriter<std::fs::File>) -> io::Result<()>) -> io::Result<()> {
    match table {
        Some(t) => {
            let mut f = io::BufWriter::new(std::fs::File::create(path)?);
            write(t, &mut f)?;
            f.flush()
        }
        None if path.exists() => std::fs::remove_file(path),
        None => Ok(()),
    }
}

/// Whether two paths name the same existing file.
fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
