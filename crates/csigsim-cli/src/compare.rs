//! `csigsim compare RUN_A RUN_B [RUN ...]`: what changed between run
//! directories, each against the first (the reference). The figures that
//! say what the runs were for come first: with trace workloads (`goal`,
//! `chakra`), each iteration's time and its compute and exposed parts; with collectives, the completion
//! time (CCT), algbw and busbw of each named collective and iteration; with
//! Poisson or RPC workloads, the slowdown percentiles per flow-size bucket.
//! Then completion and slowdown percentiles, throughput per named group of
//! flows, the bottleneck map, RPC latencies and the run's totals. Every
//! figure says which direction is better, and every ratio whether it is.
//!
//! The tables are read with the engine's reader of run directories
//! ([`csigsim::output::read`]), from the Parquet twins when the run has
//! them, and every percentile is the summary's nearest rank
//! ([`csigsim::stats::nearest_rank`]).
//!
//! The printed summary of `csigsim run` shows the leading figures of its
//! run directory ([`headline`]).

use csigsim::output::read::{read_table, read_table_chunks, Format};
use csigsim::output::ops::IterationTable;
use csigsim::output::{CollectiveTable, FlowTable, RpcTable, SignalTable};
use csigsim::InputError;
use std::path::Path;

/// Which way a figure improves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    Lower,
    Higher,
    /// Neither: a count or a share that is no verdict by itself.
    Neither,
}

impl Better {
    pub fn name(self) -> Option<&'static str> {
        match self {
            Better::Lower => Some("lower"),
            Better::Higher => Some("higher"),
            Better::Neither => None,
        }
    }
}

/// One figure of one run.
struct Figure {
    key: String,
    value: Option<f64>,
    better: Better,
}

fn fig(key: impl Into<String>, value: Option<f64>, better: Better) -> Figure {
    Figure { key: key.into(), value, better }
}

/// One compared figure: its name, its value in each run (None when a run
/// has none) and which direction is better.
pub struct Row {
    pub metric: String,
    pub values: Vec<Option<f64>>,
    pub better: Better,
}

impl Row {
    /// Run `i` over the reference, when both exist and the reference is not zero.
    pub fn ratio(&self, i: usize) -> Option<f64> {
        match (self.values[0], self.values[i]) {
            (Some(a), Some(b)) if a != 0.0 => Some(b / a),
            _ => None,
        }
    }

    /// "better", "worse" or "same" for run `i` against the reference; None
    /// when the figure has no better direction or a run lacks it.
    pub fn verdict(&self, i: usize) -> Option<&'static str> {
        let (a, b) = (self.values[0]?, self.values[i]?);
        let up = match self.better {
            Better::Neither => return None,
            Better::Higher => b > a,
            Better::Lower => b < a,
        };
        Some(if a == b {
            "same"
        } else if up {
            "better"
        } else {
            "worse"
        })
    }
}

/// The `q` quantile as the summary computes it (nearest rank).
fn quantile(v: &[f64], q: f64) -> Option<f64> {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    csigsim::stats::nearest_rank(&s, q)
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Iterations of one collective shown one by one; beyond, their mean and max.
const MAX_ITERATIONS: usize = 8;
/// Named groups of flows compared at most (the first by flow id).
const MAX_GROUPS: usize = 16;
/// Ports of the bottleneck map compared at most (the most named).
const MAX_PORTS: usize = 8;
/// Upper bounds of the flow-size buckets (bytes), as csigsim.plot's
/// `DEFAULT_BUCKETS`: <= 10KB, 10KB-100KB, 100KB-1MB, 1MB-10MB, > 10MB.
pub const BUCKETS: [f64; 4] = [1e4, 1e5, 1e6, 1e7];

/// The label of size bucket `i` of [`BUCKETS`].
pub fn bucket_label(i: usize) -> String {
    let size = |b: f64| match b {
        b if b >= 1e9 => format!("{}GB", b / 1e9),
        b if b >= 1e6 => format!("{}MB", b / 1e6),
        b if b >= 1e3 => format!("{}KB", b / 1e3),
        b => format!("{b}B"),
    };
    match i {
        0 => format!("<={}", size(BUCKETS[0])),
        i if i == BUCKETS.len() => format!(">{}", size(BUCKETS[BUCKETS.len() - 1])),
        i => format!("{}-{}", size(BUCKETS[i - 1]), size(BUCKETS[i])),
    }
}

/// The bucket of a flow of `size` bytes: the first whose bound is at least the size.
fn bucket(size: f64) -> usize {
    BUCKETS.iter().position(|&b| size <= b).unwrap_or(BUCKETS.len())
}

/// The `kind` of every `[[workload]]` of the run's scenario.toml.
fn workload_kinds(dir: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(dir.join("scenario.toml")) else { return Vec::new() };
    let Ok(doc) = text.parse::<toml::Table>() else { return Vec::new() };
    let Some(list) = doc.get("workload").and_then(|w| w.as_array()) else { return Vec::new() };
    list.iter().filter_map(|w| w.get("kind").and_then(|k| k.as_str()).map(String::from)).collect()
}

/// One instance of a collective (a totals row of collectives.csv).
struct Instance {
    iteration: String,
    cct_us: Option<f64>,
    algbw: Option<f64>,
    busbw: Option<f64>,
}

/// The instances of one job and iteration (see [`job_figures`]).
struct Job {
    job: String,
    iteration: String,
    parts: u32,
    start: f64,
    finish: f64,
    done: bool,
}

/// Per collective name and iteration (totals rows): CCT (us), algbw and
/// busbw (Gb/s); the collective's names in order of their first instance.
fn collective_figures(c: &CollectiveTable) -> Vec<Figure> {
    let mut by_name: Vec<(String, Vec<Instance>)> = Vec::new();
    for r in (0..c.len()).filter(|&r| c.step[r].is_none()) {
        let entry = Instance {
            iteration: c.iteration[r].to_string(),
            cct_us: c.time_ps[r].map(|t| t as f64 / 1e6),
            algbw: c.algbw_gbps[r],
            busbw: c.busbw_gbps[r],
        };
        match by_name.iter_mut().find(|(n, _)| *n == c.name[r]) {
            Some((_, v)) => v.push(entry),
            None => by_name.push((c.name[r].clone(), vec![entry])),
        }
    }
    let mut cct = job_figures(c);
    let mut bw = Vec::new();
    for (n, its) in &by_name {
        if its.len() <= MAX_ITERATIONS {
            for x in its {
                let i = &x.iteration;
                cct.push(fig(format!("cct_us[{n} iter {i}]"), x.cct_us, Better::Lower));
                bw.push(fig(format!("algbw_gbps[{n} iter {i}]"), x.algbw, Better::Higher));
                bw.push(fig(format!("busbw_gbps[{n} iter {i}]"), x.busbw, Better::Higher));
            }
        } else {
            let done = |f: fn(&Instance) -> Option<f64>| its.iter().filter_map(f).collect::<Vec<f64>>();
            let times = done(|x| x.cct_us);
            // An unfinished iteration has no time: the mean and max are of
            // the finished ones, and their count says how many.
            cct.push(fig(format!("cct_us[{n} mean]"), mean(&times), Better::Lower));
            cct.push(fig(format!("cct_us[{n} max]"), times.iter().copied().reduce(f64::max), Better::Lower));
            cct.push(fig(format!("iterations_finished[{n}]"), Some(times.len() as f64), Better::Higher));
            bw.push(fig(format!("algbw_gbps[{n} mean]"), mean(&done(|x| x.algbw)), Better::Higher));
            bw.push(fig(format!("busbw_gbps[{n} mean]"), mean(&done(|x| x.busbw)), Better::Higher));
        }
    }
    cct.extend(bw);
    cct
}

/// The part of a collective's name that names the job: `dp` for the rail
/// and group instances `dp.r3` and `dp.g1`; None for a name without such a
/// suffix.
fn job_name(name: &str) -> Option<&str> {
    let (job, part) = name.rsplit_once('.')?;
    let digits = part.strip_prefix('r').or_else(|| part.strip_prefix('g'))?;
    (!job.is_empty() && !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then_some(job)
}

/// `cct_us[JOB iter I]`: a collective run as several instances (one per
/// rail or group: `dp.r0`, `dp.r1`, ...) completes when its last instance
/// does: from the first instance's start to the last one's finish, per
/// iteration (None when an instance did not finish).
fn job_figures(c: &CollectiveTable) -> Vec<Figure> {
    let mut jobs: Vec<Job> = Vec::new();
    for r in (0..c.len()).filter(|&r| c.step[r].is_none()) {
        let Some(job) = job_name(&c.name[r]) else { continue };
        let iteration = c.iteration[r].to_string();
        let (s, f) = (c.start_ps[r].map(|t| t as f64 / 1e3), c.finish_ps[r].map(|t| t as f64 / 1e3));
        let i = match jobs.iter().position(|j| j.job == job && j.iteration == iteration) {
            Some(i) => i,
            None => {
                jobs.push(Job { job: job.to_string(), iteration, parts: 0, start: f64::INFINITY, finish: f64::NEG_INFINITY, done: true });
                jobs.len() - 1
            }
        };
        let j = &mut jobs[i];
        j.parts += 1;
        j.start = j.start.min(s.unwrap_or(f64::INFINITY));
        j.finish = j.finish.max(f.unwrap_or(f64::NEG_INFINITY));
        j.done &= s.is_some() && f.is_some();
    }
    let per_job = |job: &str| jobs.iter().filter(|j| j.job == job).count();
    jobs.iter()
        .filter(|j| j.parts > 1 && per_job(&j.job) <= MAX_ITERATIONS)
        .map(|j| fig(format!("cct_us[{} iter {}]", j.job, j.iteration), j.done.then(|| (j.finish - j.start) / 1e3), Better::Lower))
        .collect()
}

/// Rows of flows.csv read at a time.
const FLOW_CHUNK: usize = 1 << 16;

/// What the figures need of flows.csv, gathered a chunk of rows at a time
/// (a collective of millions of flows is never held as one table).
struct FlowFigures {
    /// Per size bucket, the completed flows' slowdowns.
    per_bucket: Vec<Vec<f64>>,
    fct_us: Vec<f64>,
    slow: Vec<f64>,
    /// Per flow name: (name, sum of size / FCT, completed flows); see
    /// [`FlowFigures::group_throughput`].
    groups: Vec<(String, f64, u32)>,
    /// The names of the run's collectives, whose flows form no group.
    collectives: Vec<String>,
}

impl FlowFigures {
    fn new(mut collectives: Vec<String>) -> FlowFigures {
        // A name per row of collectives.csv: each distinct name once, or
        // every flow would be compared with every row.
        collectives.sort_unstable();
        collectives.dedup();
        FlowFigures { per_bucket: vec![Vec::new(); BUCKETS.len() + 1], fct_us: Vec::new(), slow: Vec::new(), groups: Vec::new(), collectives }
    }

    fn add(&mut self, flows: &FlowTable) {
        let of_collective = |n: &str| self.collectives.iter().any(|c| n.strip_prefix(c.as_str()).is_some_and(|rest| rest.is_empty() || rest.starts_with('.')));
        for r in 0..flows.len() {
            if let Some(s) = flows.slowdown[r] {
                self.per_bucket[bucket(flows.size_bytes[r] as f64)].push(s);
                self.slow.push(s);
            }
            if let Some(t) = flows.fct_ps[r] {
                self.fct_us.push(t as f64 / 1e6);
            }
            let n = flows.flow_name(r);
            if n.is_empty() || of_collective(n) {
                continue;
            }
            let i = match self.groups.iter().position(|g| g.0 == n) {
                Some(i) => i,
                None if self.groups.len() < MAX_GROUPS => {
                    self.groups.push((n.to_string(), 0.0, 0));
                    self.groups.len() - 1
                }
                None => continue,
            };
            if let Some(t) = flows.fct_ps[r].filter(|&t| t > 0) {
                self.groups[i].1 += flows.size_bytes[r] as f64 * 8.0 / (t as f64 / 1e3);
                self.groups[i].2 += 1;
            }
        }
    }

    /// Slowdown p50 and p99 of the completed flows per size bucket (the
    /// buckets with a flow), and the flows in each.
    fn bucket_figures(&self) -> Vec<Figure> {
        let mut out = Vec::new();
        for (i, v) in self.per_bucket.iter().enumerate().filter(|(_, v)| !v.is_empty()) {
            let l = bucket_label(i);
            out.push(fig(format!("slowdown_p50[{l}]"), quantile(v, 0.5), Better::Lower));
            out.push(fig(format!("slowdown_p99[{l}]"), quantile(v, 0.99), Better::Lower));
            out.push(fig(format!("flows_completed[{l}]"), Some(v.len() as f64), Better::Neither));
        }
        out
    }

    /// `throughput_gbps[NAME]`: the mean of size / FCT over the completed
    /// flows of each flow name (the `name` of `[[flow]]` entries and
    /// workloads), in order of each name's first flow; unnamed flows and
    /// the flows of the collectives (named `<collective>.<...>`) are left
    /// out.
    fn group_throughput(&self) -> Vec<Figure> {
        self.groups.iter().map(|(n, sum, k)| fig(format!("throughput_gbps[{n}]"), (*k > 0).then(|| sum / *k as f64), Better::Higher)).collect()
    }
}

/// Every figure of one run, the leading ones first.
fn figures(dir: &Path) -> Result<Vec<Figure>, InputError> {
    let summary_path = dir.join("summary.json");
    let file = summary_path.display().to_string();
    let text = std::fs::read_to_string(&summary_path).map_err(|e| InputError::new(&file, None, None, format!("not a run directory: {e}")))?;
    let summary: serde_json::Value = serde_json::from_str(&text).map_err(|e| InputError::new(&file, None, Some((e.line(), e.column())), e.to_string()))?;
    let collectives = read_table::<CollectiveTable>(dir, Format::Auto)?;
    // A collective's flows are named after it (`dp.r0`): their mean
    // throughput is no figure of the collective (its CCT and busbw are).
    let mut flows = FlowFigures::new(collectives.as_ref().map(|c| c.name.clone()).unwrap_or_default());
    let has_flows = read_table_chunks(dir, Format::Auto, &mut FlowTable::default(), FLOW_CHUNK, |t| {
        flows.add(t);
        Ok(())
    })?;
    let kinds = workload_kinds(dir);
    let mut out = Vec::new();
    // What the run was for: a trace's iteration times first.
    if let Some(it) = read_table::<IterationTable>(dir, Format::Auto)? {
        out.extend(iteration_figures(&it));
    }
    if let Some(c) = &collectives {
        out.extend(collective_figures(c));
    }
    if has_flows && kinds.iter().any(|k| k == "poisson" || k == "rpc") {
        out.extend(flows.bucket_figures());
    }
    if let Some(r) = read_table::<RpcTable>(dir, Format::Auto)? {
        for cls in ["foreground", "background"] {
            let lat: Vec<f64> = (0..r.len()).filter(|&i| r.class[i] == cls).filter_map(|i| r.latency_ps[i]).map(|x| x as f64 / 1e6).collect();
            for (q, name) in [(0.5, "p50"), (0.99, "p99")] {
                out.push(fig(format!("rpc_{cls}_latency_{name}_us"), quantile(&lat, q), Better::Lower));
            }
        }
    }
    // Every run's flows.
    if has_flows {
        for (q, name) in [(0.5, "p50"), (0.95, "p95"), (0.99, "p99"), (1.0, "max")] {
            out.push(fig(format!("fct_{name}_us"), quantile(&flows.fct_us, q), Better::Lower));
        }
        for (q, name) in [(0.5, "p50"), (0.95, "p95"), (0.99, "p99")] {
            out.push(fig(format!("slowdown_{name}"), quantile(&flows.slow, q), Better::Lower));
        }
        out.extend(flows.group_throughput());
    }
    if let Some(sig) = read_table::<SignalTable>(dir, Format::Auto)? {
        out.extend(bottleneck_shares(&sig));
    }
    // The run's totals.
    for (key, better) in [
        ("flows_total", Better::Neither),
        ("flows_completed", Better::Higher),
        ("sim_time_ns", Better::Lower),
        ("packets_dropped", Better::Lower),
        ("packets_trimmed", Better::Lower),
        ("ecn_marks", Better::Neither),
        ("pauses_sent", Better::Lower),
        ("cnps_sent", Better::Neither),
        ("retransmits", Better::Lower),
        ("timeouts", Better::Lower),
        ("max_switch_buffer_bytes", Better::Lower),
    ] {
        out.push(fig(key, summary.get(key).and_then(|v| v.as_f64()), better));
    }
    Ok(out)
}

/// Per trace workload and iteration (iterations.csv's totals rows):
/// `iteration_us[W iter I]`, then the compute and exposed time of the rank
/// that ended last (us).
fn iteration_figures(t: &IterationTable) -> Vec<Figure> {
    let us = |v: Option<u64>| v.map(|x| x as f64 / 1e6);
    let mut out = Vec::new();
    for r in (0..t.len()).filter(|&r| t.rank[r].is_none()) {
        let k = format!("{} iter {}", t.workload[r], t.iteration[r]);
        out.push(fig(format!("iteration_us[{k}]"), us(t.time_ps[r]), Better::Lower));
        out.push(fig(format!("iteration_compute_us[{k}]"), us(t.compute_ps[r]), Better::Neither));
        out.push(fig(format!("iteration_exposed_us[{k}]"), us(t.exposed_ps[r]), Better::Lower));
    }
    out
}

/// `bottleneck_share[PORT]`: of the CSIG samples whose writer is named (the
/// locator's `bottleneck`), the share naming each port, for the ports named
/// most (ties by name).
fn bottleneck_shares(sig: &SignalTable) -> Vec<Figure> {
    // One entry per port named (a fabric's worth), over rows of every window.
    let mut by_port: std::collections::HashMap<&str, f64> = std::collections::HashMap::new();
    for r in 0..sig.len() {
        let p = sig.bottleneck_name(r);
        if !p.is_empty() {
            *by_port.entry(p).or_default() += sig.samples[r] as f64;
        }
    }
    let mut counts: Vec<(&str, f64)> = by_port.into_iter().collect();
    // Sorted before summing, so the total does not depend on the map's order.
    counts.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let total: f64 = counts.iter().map(|c| c.1).sum();
    counts.truncate(MAX_PORTS);
    counts.into_iter().map(|(p, k)| fig(format!("bottleneck_share[{p}]"), (total > 0.0).then(|| k / total), Better::Neither)).collect()
}

/// The figures of every run, matched by name: the reference's order, then
/// the figures only later runs have, where they first appear.
pub fn compare(runs: &[&Path]) -> Result<Vec<Row>, InputError> {
    let all: Vec<Vec<Figure>> = runs.iter().map(|r| figures(r)).collect::<Result<_, _>>()?;
    let mut rows: Vec<Row> = Vec::new();
    for (i, figs) in all.iter().enumerate() {
        let mut at = 0;
        for f in figs {
            match rows.iter().position(|r| r.metric == f.key) {
                Some(p) => {
                    rows[p].values[i] = f.value;
                    at = p + 1;
                }
                None => {
                    let mut values = vec![None; runs.len()];
                    values[i] = f.value;
                    // A figure the earlier runs lack goes after its predecessor in this run.
                    rows.insert(at, Row { metric: f.key.clone(), values, better: f.better });
                    at += 1;
                }
            }
        }
    }
    Ok(rows)
}

/// The leading figures of one run directory (collectives, then slowdown
/// per size bucket), for the summary `csigsim run` prints: (label, text).
pub fn headline(dir: &Path) -> Result<Vec<(String, String)>, InputError> {
    let figs = figures(dir)?;
    let get = |k: &str| figs.iter().find(|f| f.key == k).and_then(|f| f.value);
    let v = |x: Option<f64>, unit: &str| x.map_or_else(|| "-".to_string(), |x| format!("{}{unit}", sig4(x)));
    let mut out = Vec::new();
    for f in figs.iter().filter(|f| f.key.starts_with("iteration_us[")) {
        let inner = &f.key["iteration_us[".len()..f.key.len() - 1];
        let time = f.value.map_or_else(|| "unfinished".to_string(), |t| format!("{} us", sig4(t)));
        let (c, e) = (get(&format!("iteration_compute_us[{inner}]")), get(&format!("iteration_exposed_us[{inner}]")));
        let split = if f.value.is_some() { format!(" (compute {}, exposed {})", v(c, " us"), v(e, " us")) } else { String::new() };
        out.push((format!("iteration {inner}"), format!("{time}{split}")));
    }
    for f in figs.iter().filter(|f| f.key.starts_with("cct_us[")) {
        let inner = &f.key["cct_us[".len()..f.key.len() - 1];
        if inner.ends_with(" max") {
            continue;
        }
        let (algbw, busbw) = (get(&format!("algbw_gbps[{inner}]")), get(&format!("busbw_gbps[{inner}]")));
        let label = match inner.strip_suffix(" mean") {
            Some(n) => format!("{n}, mean of {} iterations", get(&format!("iterations_finished[{n}]")).unwrap_or(0.0)),
            None => inner.to_string(),
        };
        let cct = f.value.map_or_else(|| "unfinished".to_string(), |t| format!("{} us", sig4(t)));
        // A job of several instances has no bandwidth of its own: its instances do.
        let bw = if algbw.is_none() && busbw.is_none() { String::new() } else { format!(" (algbw {}, busbw {})", v(algbw, " Gb/s"), v(busbw, " Gb/s")) };
        out.push((format!("CCT {label}"), format!("{cct}{bw}")));
    }
    for i in 0..=BUCKETS.len() {
        let l = bucket_label(i);
        if let Some(n) = get(&format!("flows_completed[{l}]")) {
            out.push((
                format!("slowdown p50 / p99 {l}"),
                format!("{} / {} ({n} flows)", v(get(&format!("slowdown_p50[{l}]")), ""), v(get(&format!("slowdown_p99[{l}]")), "")),
            ));
        }
    }
    Ok(out)
}

/// `x` with 4 significant digits (whole numbers as they are).
pub fn sig4(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e15 {
        return format!("{x}");
    }
    let digits = if x == 0.0 { 0 } else { x.abs().log10().floor() as i32 };
    let decimals = (3 - digits).clamp(0, 12) as usize;
    format!("{x:.decimals$}")
}

fn cell(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(x) if x == x.trunc() && x.abs() < 1e15 => format!("{x}"),
        Some(x) => format!("{x:.3}"),
    }
}

/// The letter of run `i`: A, B, ..., Z, then R27, R28, ...
pub fn letter(i: usize) -> String {
    if i < 26 {
        char::from(b'A' + i as u8).to_string()
    } else {
        format!("R{}", i + 1)
    }
}

/// The comparison as an aligned table: a line naming each run, then one
/// line per figure: its values, which direction is better, and each run's
/// ratio to the reference with its verdict.
pub fn table(rows: &[Row], runs: &[&Path]) -> String {
    let mut s = String::new();
    for (i, r) in runs.iter().enumerate() {
        s.push_str(&format!("{} = {}{}\n", letter(i), r.display(), if i == 0 { " (reference)" } else { "" }));
    }
    let w = rows.iter().map(|r| r.metric.len()).max().unwrap_or(0).max(6);
    let mut head = format!("{:<w$} {:>6}", "figure", "better");
    for i in 0..runs.len() {
        head.push_str(&format!(" {:>12}", letter(i)));
    }
    for i in 1..runs.len() {
        head.push_str(&format!(" {:>14}", format!("{}/A", letter(i))));
    }
    s.push_str(head.trim_end());
    s.push('\n');
    for r in rows {
        let mut line = format!("{:<w$} {:>6}", r.metric, r.better.name().unwrap_or(""));
        for v in &r.values {
            line.push_str(&format!(" {:>12}", cell(*v)));
        }
        for i in 1..runs.len() {
            let q = r.ratio(i).map_or("-".into(), |x| format!("{x:.3}"));
            line.push_str(&format!(" {:>14}", format!("{q} {}", r.verdict(i).unwrap_or("")).trim_end()));
        }
        s.push_str(line.trim_end());
        s.push('\n');
    }
    s
}

/// The comparison as one JSON object: figure -> {values, ratios, verdicts,
/// better, and for the first two runs a, b and ratio}.
pub fn json(rows: &[Row]) -> String {
    let mut m = serde_json::Map::new();
    for r in rows {
        let n = r.values.len();
        let ratios: Vec<Option<f64>> = (0..n).map(|i| if i == 0 { None } else { r.ratio(i) }).collect();
        let verdicts: Vec<Option<&str>> = (0..n).map(|i| if i == 0 { None } else { r.verdict(i) }).collect();
        m.insert(
            r.metric.clone(),
            serde_json::json!({
                "a": r.values[0],
                "b": r.values.get(1).copied().flatten(),
                "ratio": if n > 1 { r.ratio(1) } else { None },
                "values": r.values,
                "ratios": ratios,
                "verdicts": verdicts,
                "better": r.better.name(),
            }),
        );
    }
    serde_json::Value::Object(m).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_and_their_labels_follow_the_plots() {
        assert_eq!((0..=4).map(bucket_label).collect::<Vec<_>>(), ["<=10KB", "10KB-100KB", "100KB-1MB", "1MB-10MB", ">10MB"]);
        assert_eq!([1.0, 1e4, 10_001.0, 1e7, 2e7].map(bucket), [0, 0, 1, 3, 4]);
    }

    #[test]
    fn rail_and_group_instances_name_their_job() {
        assert_eq!(job_name("dp.r3"), Some("dp"));
        assert_eq!(job_name("tp.x.g12"), Some("tp.x"));
        for n in ["dp", "dp.r", "dp.rx", ".r1", "dp.q1"] {
            assert_eq!(job_name(n), None, "{n}");
        }
    }

    #[test]
    fn verdicts_follow_the_better_direction() {
        let row = |better, a, b| Row { metric: "x".into(), values: vec![Some(a), Some(b)], better };
        assert_eq!(row(Better::Lower, 2.0, 4.4).verdict(1), Some("worse"));
        assert_eq!(row(Better::Higher, 2.0, 4.4).verdict(1), Some("better"));
        assert_eq!(row(Better::Lower, 2.0, 2.0).verdict(1), Some("same"));
        assert_eq!(row(Better::Neither, 2.0, 1.0).verdict(1), None);
        assert_eq!(row(Better::Lower, 2.0, 4.4).ratio(1), Some(2.2));
    }

    #[test]
    fn four_significant_digits() {
        assert_eq!(sig4(2312.974), "2313");
        assert_eq!(sig4(12.9512), "12.95");
        assert_eq!(sig4(0.012346), "0.01235");
        assert_eq!(sig4(7.0), "7");
    }
}
