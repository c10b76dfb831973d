//! `csigsim compare RUN_A RUN_B`: what changed between two run directories:
//! completion and slowdown percentiles, the run's totals, throughput per
//! named group of flows, the bottleneck map, collectives' times and RPC
//! latencies, each with B / A.

use csigsim::InputError;
use std::path::Path;

/// One compared figure: its name, its value in A and in B (None when a run has none).
pub struct Row {
    pub metric: String,
    pub a: Option<f64>,
    pub b: Option<f64>,
}

/// A CSV file as its header and its rows of cells.
type Csv = (Vec<String>, Vec<Vec<String>>);

/// A CSV file of a run directory (None when absent).
fn read_csv(dir: &Path, name: &str) -> Result<Option<Csv>, InputError> {
    let path = dir.join(name);
    if !path.exists() {
        return Ok(None);
    }
    let file = path.display().to_string();
    let mut rdr = csv::ReaderBuilder::new().from_path(&path).map_err(|e| InputError::new(&file, None, None, format!("cannot read: {e}")))?;
    let header: Vec<String> = rdr.headers().map_err(|e| InputError::new(&file, None, Some((1, 1)), format!("bad header: {e}")))?.iter().map(String::from).collect();
    let mut rows = Vec::new();
    for (i, r) in rdr.records().enumerate() {
        let r = r.map_err(|e| InputError::new(&file, None, Some((i + 2, 1)), format!("bad row: {e}")))?;
        rows.push(r.iter().map(String::from).collect());
    }
    Ok(Some((header, rows)))
}

/// The numbers of column `col` (empty cells skipped).
fn column(t: &Csv, col: &str, keep: impl Fn(&[String]) -> bool) -> Vec<f64> {
    let Some(i) = t.0.iter().position(|h| h == col) else { return Vec::new() };
    t.1.iter().filter(|r| keep(r)).filter_map(|r| r.get(i).and_then(|c| c.parse::<f64>().ok())).collect()
}

/// The `q` quantile as the summary computes it (nearest rank).
fn quantile(v: &[f64], q: f64) -> Option<f64> {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    csigsim::stats::nearest_rank(&s, q)
}

/// Every figure of one run, in order.
fn figures(dir: &Path) -> Result<Vec<(String, Option<f64>)>, InputError> {
    let summary_path = dir.join("summary.json");
    let file = summary_path.display().to_string();
    let text = std::fs::read_to_string(&summary_path).map_err(|e| InputError::new(&file, None, None, format!("not a run directory: {e}")))?;
    let summary: serde_json::Value = serde_json::from_str(&text).map_err(|e| InputError::new(&file, None, Some((e.line(), e.column())), e.to_string()))?;
    let mut out = Vec::new();
    for key in [
        "flows_total",
        "flows_completed",
        "sim_time_ns",
        "packets_dropped",
        "packets_trimmed",
        "ecn_marks",
        "pauses_sent",
        "cnps_sent",
        "retransmits",
        "timeouts",
        "max_switch_buffer_bytes",
    ] {
        out.push((key.to_string(), summary.get(key).and_then(|v| v.as_f64())));
    }
    let all = |_: &[String]| true;
    if let Some(flows) = read_csv(dir, "flows.csv")? {
        let fct_us: Vec<f64> = column(&flows, "fct_ns", all).iter().map(|x| x / 1e3).collect();
        let slow = column(&flows, "slowdown", all);
        for (q, name) in [(0.5, "p50"), (0.95, "p95"), (0.99, "p99"), (1.0, "max")] {
            out.push((format!("fct_{name}_us"), quantile(&fct_us, q)));
        }
        for (q, name) in [(0.5, "p50"), (0.95, "p95"), (0.99, "p99")] {
            out.push((format!("slowdown_{name}"), quantile(&slow, q)));
        }
    }
    if let Some(flows) = read_csv(dir, "flows.csv")? {
        out.extend(group_throughput(&flows));
    }
    if let Some(sig) = read_csv(dir, "signals.csv")? {
        out.extend(bottleneck_shares(&sig));
    }
    if let Some(c) = read_csv(dir, "collectives.csv")? {
        let step = c.0.iter().position(|h| h == "step");
        let totals = |r: &[String]| step.is_some_and(|i| r.get(i).is_some_and(|s| s.is_empty()));
        let ids = column(&c, "collective_id", totals);
        let times = column(&c, "time_ns", totals);
        for (id, t) in ids.iter().zip(&times) {
            out.push((format!("collective_{id}_time_us"), Some(t / 1e3)));
        }
        let busbw = column(&c, "busbw_gbps", totals);
        out.push(("busbw_mean_gbps".into(), (!busbw.is_empty()).then(|| busbw.iter().sum::<f64>() / busbw.len() as f64)));
    }
    if let Some(r) = read_csv(dir, "rpcs.csv")? {
        let class = r.0.iter().position(|h| h == "class");
        for cls in ["foreground", "background"] {
            let lat: Vec<f64> =
                column(&r, "latency_ns", |row| class.is_some_and(|i| row.get(i).is_some_and(|c| c == cls))).iter().map(|x| x / 1e3).collect();
            for (q, name) in [(0.5, "p50"), (0.99, "p99")] {
                out.push((format!("rpc_{cls}_latency_{name}_us"), quantile(&lat, q)));
            }
        }
    }
    Ok(out)
}

/// Named groups of flows compared at most (the first by flow id).
const MAX_GROUPS: usize = 16;
/// Ports of the bottleneck map compared at most (the most named).
const MAX_PORTS: usize = 8;

/// `throughput_gbps[NAME]`: the mean of size / FCT over the completed flows
/// of each flow name (the `name` of `[[flow]]` entries and workloads), in
/// order of each name's first flow; unnamed flows are left out.
fn group_throughput(flows: &Csv) -> Vec<(String, Option<f64>)> {
    let col = |c: &str| flows.0.iter().position(|h| h == c);
    let (Some(name), Some(size), Some(fct)) = (col("name"), col("size_bytes"), col("fct_ns")) else { return Vec::new() };
    let mut groups: Vec<(String, f64, u32)> = Vec::new();
    for r in &flows.1 {
        let n = &r[name];
        if n.is_empty() {
            continue;
        }
        let i = match groups.iter().position(|g| &g.0 == n) {
            Some(i) => i,
            None if groups.len() < MAX_GROUPS => {
                groups.push((n.clone(), 0.0, 0));
                groups.len() - 1
            }
            None => continue,
        };
        if let (Ok(b), Ok(t)) = (r[size].parse::<f64>(), r[fct].parse::<f64>()) {
            if t > 0.0 {
                groups[i].1 += b * 8.0 / t;
                groups[i].2 += 1;
            }
        }
    }
    groups.into_iter().map(|(n, sum, k)| (format!("throughput_gbps[{n}]"), (k > 0).then(|| sum / k as f64))).collect()
}

/// `bottleneck_share[PORT]`: of the CSIG samples whose writer is named (the
/// locator's `bottleneck`), the share naming each port, for the ports named
/// most (ties by name).
fn bottleneck_shares(sig: &Csv) -> Vec<(String, Option<f64>)> {
    let col = |c: &str| sig.0.iter().position(|h| h == c);
    let (Some(port), Some(samples)) = (col("bottleneck"), col("samples")) else { return Vec::new() };
    // One entry per port named (a fabric's worth), over rows of every window.
    let mut by_port: std::collections::HashMap<&str, f64> = std::collections::HashMap::new();
    for r in &sig.1 {
        let p = &r[port];
        if !p.is_empty() {
            *by_port.entry(p).or_default() += r[samples].parse::<f64>().unwrap_or(0.0);
        }
    }
    let mut counts: Vec<(&str, f64)> = by_port.into_iter().collect();
    // Sorted before summing, so the total does not depend on the map's order.
    counts.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let total: f64 = counts.iter().map(|c| c.1).sum();
    counts.truncate(MAX_PORTS);
    counts.into_iter().map(|(p, k)| (format!("bottleneck_share[{p}]"), (total > 0.0).then(|| k / total))).collect()
}

/// The figures of both runs, matched by name (a figure only one run has keeps its place).
pub fn compare(a: &Path, b: &Path) -> Result<Vec<Row>, InputError> {
    let (fa, fb) = (figures(a)?, figures(b)?);
    let mut rows: Vec<Row> = fa.iter().map(|(m, v)| Row { metric: m.clone(), a: *v, b: fb.iter().find(|(n, _)| n == m).and_then(|x| x.1) }).collect();
    for (m, v) in &fb {
        if !fa.iter().any(|(n, _)| n == m) {
            rows.push(Row { metric: m.clone(), a: None, b: *v });
        }
    }
    Ok(rows)
}

/// B / A, when both exist and A is not zero.
pub fn ratio(r: &Row) -> Option<f64> {
    match (r.a, r.b) {
        (Some(a), Some(b)) if a != 0.0 => Some(b / a),
        _ => None,
    }
}

fn cell(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(x) if x == x.trunc() && x.abs() < 1e15 => format!("{x}"),
        Some(x) => format!("{x:.3}"),
    }
}

/// The comparison as an aligned table.
pub fn table(rows: &[Row], a: &Path, b: &Path) -> String {
    let mut s = format!("{:<32} {:>16} {:>16} {:>8}\n", "", format!("A {}", short(a)), format!("B {}", short(b)), "B/A");
    for r in rows {
        let q = ratio(r).map_or("-".into(), |x| format!("{x:.3}"));
        s.push_str(&format!("{:<32} {:>16} {:>16} {:>8}\n", r.metric, cell(r.a), cell(r.b), q));
    }
    s
}

fn short(p: &Path) -> String {
    let s = p.file_name().map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned());
    s.chars().take(14).collect()
}

/// The comparison as one JSON object: metric -> {a, b, ratio}.
pub fn json(rows: &[Row]) -> String {
    let mut m = serde_json::Map::new();
    for r in rows {
        m.insert(r.metric.clone(), serde_json::json!({ "a": r.a, "b": r.b, "ratio": ratio(r) }));
    }
    serde_json::Value::Object(m).to_string()
}
