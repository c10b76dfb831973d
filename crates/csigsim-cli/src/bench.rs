//! `csigsim bench`: the fixed benchmark set, each case in a process of its
//! own (so that its peak memory is its own); and, with `--against`, the
//! same cases run alternately by this binary and another build, reported
//! as paired ratios (docs/performance.md, "Comparing two builds").

use crate::Failure;
use csigsim::InputError;
use csigsim::stats::median;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What `csigsim bench` was asked.
pub struct Options {
    pub json: bool,
    pub cases: Vec<String>,
    pub child: Option<String>,
    /// Runs per case (per binary with `against`); `None`: 1, or
    /// [`AGAINST_REPEAT`] with `against`.
    pub repeat: Option<u32>,
    pub threads: u32,
    pub partitions: u32,
    pub against: Option<PathBuf>,
}

/// Runs per binary and case when comparing builds: the fewest pairs whose
/// ratios give a 95% interval for their median (see [`median_interval`]).
pub const AGAINST_REPEAT: u32 = 6;

pub fn cmd(o: Options) -> Result<(), Failure> {
    let all = csigsim_experiments::bench::cases();
    if let Some(name) = &o.child {
        return run_child(&all, name, o.threads, o.partitions);
    }
    for n in &o.cases {
        if !all.iter().any(|c| c.name == n) {
            let names: Vec<&str> = all.iter().map(|c| c.name).collect();
            return Err(Failure::Input(InputError::new("--cases", None, None, format!("unknown case \"{n}\"; cases: {}", names.join(", ")))));
        }
    }
    let exe = std::env::current_exe().map_err(|e| Failure::Internal(e.to_string()))?;
    let chosen: Vec<&'static str> = all.iter().filter(|c| o.cases.is_empty() || o.cases.iter().any(|n| n == c.name)).map(|c| c.name).collect();
    let child = Child { threads: o.threads, partitions: o.partitions };
    match &o.against {
        Some(other) => against(&o, &child, &exe, other, &chosen),
        None => table(&o, &child, &exe, &chosen),
    }
}

/// The arguments of every child run.
struct Child {
    threads: u32,
    partitions: u32,
}

impl Child {
    /// Runs `case` in a child process of `exe` and returns its JSON line.
    fn run(&self, exe: &Path, case: &str) -> Result<serde_json::Value, String> {
        let out = Command::new(exe)
            .args(["bench", "--child", case, "--threads", &self.threads.to_string(), "--partitions", &self.partitions.to_string()])
            .output()
            .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
        if !out.status.success() {
            return Err(format!("case {case} failed under {}: {}", exe.display(), String::from_utf8_lossy(&out.stderr).trim()));
        }
        let line = String::from_utf8_lossy(&out.stdout).trim().to_string();
        serde_json::from_str(&line).map_err(|e| format!("case {case} under {} printed no benchmark record ({e}): {line:.200}", exe.display()))
    }
}

/// The figures of each case, the run of median wall time of `repeat`.
fn table(o: &Options, child: &Child, exe: &Path, cases: &[&str]) -> Result<(), Failure> {
    // Partitioned runs add the wall time of the serial steps between windows.
    let merge = child.threads > 1 || child.partitions > 1;
    if !o.json {
        println!(
            "{:<26} {:>6} {:>9} {:>9} {:>12} {:>12} {:>12} {:>10} {:>12} {:>9} {:>9}{}",
            "case",
            "hosts",
            "wall s",
            "cpu s",
            "sim us",
            "events",
            "link hops",
            "M hops/s",
            "M hops/cpu s",
            "ev/hop",
            "peak MB",
            if merge { format!(" {:>9}", "merge s") } else { String::new() }
        );
    }
    for &case in cases {
        let mut runs = Vec::new();
        for _ in 0..o.repeat.unwrap_or(1).max(1) {
            runs.push(child.run(exe, case).map_err(Failure::Internal)?);
        }
        runs.sort_by(|a, b| f(a, "wall_s").total_cmp(&f(b, "wall_s")));
        let v = runs.swap_remove(runs.len() / 2);
        if o.json {
            println!("{v}");
            continue;
        }
        println!(
            "{:<26} {:>6} {:>9.2} {:>9.2} {:>12.1} {:>12} {:>12} {:>10.2} {:>12.2} {:>9.3} {:>9.0}{}",
            case,
            f(&v, "hosts"),
            f(&v, "wall_s"),
            f(&v, "cpu_s"),
            f(&v, "sim_time_ns") / 1000.0,
            f(&v, "events"),
            f(&v, "link_hops"),
            f(&v, "link_hops_per_s") / 1e6,
            f(&v, "link_hops_per_cpu_s") / 1e6,
            f(&v, "events_per_link_hop"),
            f(&v, "peak_rss_bytes") / 1e6,
            if merge { format!(" {:>9.2}", f(&v, "merge_s")) } else { String::new() }
        );
    }
    Ok(())
}

/// A number of a benchmark record (0 when absent).
fn f(v: &serde_json::Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or(0.0)
}

/// Each case run alternately by this binary and `other`, `repeat` times
/// each, the order swapped every round (this first, then the other first)
/// so that a drift of the machine's load falls on both alike.
fn against(o: &Options, child: &Child, exe: &Path, other: &Path, cases: &[&str]) -> Result<(), Failure> {
    let flag = |msg: String| Failure::Input(InputError::new("--against", None, None, msg));
    if !other.is_file() {
        return Err(flag(format!("{}: no such file", other.display())));
    }
    let repeat = o.repeat.unwrap_or(AGAINST_REPEAT).max(1) as usize;
    if !o.json {
        println!(
            "{:<26} {:>5} {:>11} {:>11} {:>10} {:>15} {:>10} {:>15} {:>13} {:>9}",
            "case", "pairs", "cpu s this", "cpu s other", "cpu ratio", "95% interval", "wall ratio", "95% interval", "peak MB", "same run"
        );
    }
    for &case in cases {
        let (mut this, mut that) = (Vec::with_capacity(repeat), Vec::with_capacity(repeat));
        for round in 0..repeat {
            if round % 2 == 0 {
                this.push(child.run(exe, case).map_err(Failure::Internal)?);
                that.push(child.run(other, case).map_err(flag)?);
            } else {
                that.push(child.run(other, case).map_err(flag)?);
                this.push(child.run(exe, case).map_err(Failure::Internal)?);
            }
        }
        let c = Comparison::of(&this, &that);
        if o.json {
            println!("{}", c.json(case, &this, &that));
            continue;
        }
        let interval = |i: Option<(f64, f64)>| i.map_or("-".to_string(), |(lo, hi)| format!("{lo:.3}-{hi:.3}"));
        println!(
            "{:<26} {:>5} {:>11.2} {:>11.2} {:>10.3} {:>15} {:>10.3} {:>15} {:>13} {:>9}",
            case,
            repeat,
            c.cpu_this,
            c.cpu_other,
            c.cpu.median,
            interval(c.cpu.interval),
            c.wall.median,
            interval(c.wall.interval),
            format!("{:.0}/{:.0}", c.rss_this / 1e6, c.rss_other / 1e6),
            if c.same_run { "yes" } else { "no" }
        );
    }
    Ok(())
}

/// The paired ratios (this / other) of one figure: their median and a 95%
/// interval for it.
#[derive(Debug, PartialEq)]
pub struct Ratios {
    pub median: f64,
    pub interval: Option<(f64, f64)>,
}

impl Ratios {
    fn of(this: &[f64], other: &[f64]) -> Ratios {
        let mut r: Vec<f64> = this.iter().zip(other).map(|(a, b)| if *b > 0.0 { a / b } else { f64::NAN }).collect();
        r.sort_by(f64::total_cmp);
        Ratios { median: median(&r), interval: median_interval(&r) }
    }
}

/// What one case showed, this binary against the other.
struct Comparison {
    cpu_this: f64,
    cpu_other: f64,
    cpu: Ratios,
    wall: Ratios,
    rss_this: f64,
    rss_other: f64,
    /// Both ran the same simulation: the same events and link hops in every run.
    same_run: bool,
}

impl Comparison {
    fn of(this: &[serde_json::Value], other: &[serde_json::Value]) -> Comparison {
        let col = |runs: &[serde_json::Value], k: &str| -> Vec<f64> { runs.iter().map(|v| f(v, k)).collect() };
        let sorted_median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            median(&v)
        };
        let key = |v: &serde_json::Value| (v["events"].as_u64(), v["link_hops"].as_u64());
        let first = key(&this[0]);
        let (cpu_this, cpu_other) = (col(this, "cpu_s"), col(other, "cpu_s"));
        Comparison {
            cpu: Ratios::of(&cpu_this, &cpu_other),
            cpu_this: sorted_median(cpu_this),
            cpu_other: sorted_median(cpu_other),
            wall: Ratios::of(&col(this, "wall_s"), &col(other, "wall_s")),
            rss_this: sorted_median(col(this, "peak_rss_bytes")),
            rss_other: sorted_median(col(other, "peak_rss_bytes")),
            same_run: this.iter().chain(other).all(|v| key(v) == first),
        }
    }

    fn json(&self, case: &str, this: &[serde_json::Value], other: &[serde_json::Value]) -> serde_json::Value {
        let ratios = |r: &Ratios| serde_json::json!({ "median": r.median, "low": r.interval.map(|i| i.0), "high": r.interval.map(|i| i.1) });
        serde_json::json!({
            "case": case,
            "pairs": this.len(),
            "cpu_s_this": self.cpu_this,
            "cpu_s_other": self.cpu_other,
            "cpu_ratio": ratios(&self.cpu),
            "wall_ratio": ratios(&self.wall),
            "peak_rss_bytes_this": self.rss_this,
            "peak_rss_bytes_other": self.rss_other,
            "same_run": self.same_run,
            "this": this,
            "other": other,
        })
    }
}

/// A distribution-free 95% interval for the median of sorted values: the
/// k-th smallest and the k-th largest, k the largest rank for which fewer
/// than k of n values fall below the median with probability at most
/// 2.5% (a sign test: the count below is Binomial(n, 1/2)). None for fewer
/// than 6 values, which give no such interval.
pub fn median_interval(sorted: &[f64]) -> Option<(f64, f64)> {
    let k = interval_rank(sorted.len())?;
    Some((sorted[k - 1], sorted[sorted.len() - k]))
}

/// The rank k of [`median_interval`] for n values, if any.
pub fn interval_rank(n: usize) -> Option<usize> {
    // P(X <= j) for X ~ Binomial(n, 1/2), accumulated term by term.
    let mut term = 0.5f64.powi(n as i32);
    let mut below = 0.0;
    let mut k = None;
    for j in 0..n {
        below += term;
        if 2.0 * below > 0.05 {
            break;
        }
        k = Some(j + 1);
        term *= (n - j) as f64 / (j + 1) as f64;
    }
    k
}

/// One case in this process: its figures as a JSON line.
fn run_child(all: &[csigsim_experiments::bench::BenchCase], name: &str, threads: u32, partitions: u32) -> Result<(), Failure> {
    let case = all.iter().find(|c| c.name == name).ok_or_else(|| Failure::Internal(format!("no bench case {name}")))?;
    let sc = csigsim::scenario::load_str(&case.toml, case.name, Path::new("."), &[], None)?;
    // The run writes its files as `csigsim run` does (streamed into a
    // directory of its own, removed after): its memory and CPU are a
    // user's run's, outputs included.
    let dir = std::env::temp_dir().join(format!("csigsim-bench-{}-{}", std::process::id(), case.name));
    std::fs::create_dir_all(&dir).map_err(|e| Failure::Internal(format!("cannot create {}: {e}", dir.display())))?;
    let opts = csigsim::RunOptions { threads: threads as usize, partitions: partitions as usize, stream_dir: Some(dir.clone()), ..Default::default() };
    let r = csigsim::run_with(sc, &opts, |_| true).map_err(Failure::Internal);
    let r = r.and_then(|r| r.write_dir(&dir).map(|_| r).map_err(|e| Failure::Internal(format!("cannot write {}: {e}", dir.display()))));
    let _ = std::fs::remove_dir_all(&dir);
    let r = r?;
    let cpu = cpu_times();
    let s = &r.summary;
    let cpu_s = cpu.map(|(u, k)| u + k);
    let v = serde_json::json!({
        "case": case.name,
        "hosts": s.hosts,
        "flows": s.flows_total,
        "flows_completed": s.flows_completed,
        "wall_s": s.wall_s,
        "sim_time_ns": s.sim_time_ns,
        "events": s.events,
        "link_hops": s.link_hops,
        "link_hops_per_s": s.link_hops_per_s,
        "events_per_link_hop": s.events_per_link_hop,
        "peak_rss_bytes": peak_rss(),
        "user_s": cpu.map(|c| c.0),
        "sys_s": cpu.map(|c| c.1),
        "cpu_s": cpu_s,
        "link_hops_per_cpu_s": cpu_s.filter(|&c| c > 0.0).map(|c| s.link_hops as f64 / c),
        "invariants_ok": s.invariants_ok,
        "partitions": r.threads.partitions,
        "windows": r.threads.scheduler.map(|s| s.windows),
        "crossings": r.threads.scheduler.map(|s| s.crossings),
        "merge_s": r.threads.scheduler.map(|s| s.merge_s),
    });
    println!("{v}");
    Ok(())
}

/// Peak resident memory of this process in bytes (Linux), if known.
fn peak_rss() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// CPU time of this process so far, user and system, in seconds.
#[cfg(unix)]
fn cpu_times() -> Option<(f64, f64)> {
    // SAFETY: getrusage fills the struct it is given and reads nothing else.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return None;
    }
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Some((s(ru.ru_utime), s(ru.ru_stime)))
}

#[cfg(not(unix))]
fn cpu_times() -> Option<(f64, f64)> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ranks of the sign-test interval for the median, as tables of it
    /// give them (95%: 1 of 6 to 8 values, 2 of 9 to 11, 3 of 12 to 14, 6
    /// of 20), and none below 6 values.
    #[test]
    fn interval_ranks_match_the_sign_test_tables() {
        for n in 0..6 {
            assert_eq!(interval_rank(n), None, "n = {n}");
        }
        let table = [(6, 1), (7, 1), (8, 1), (9, 2), (10, 2), (11, 2), (12, 3), (13, 3), (14, 3), (15, 4), (16, 4), (17, 5), (20, 6), (30, 10)];
        for (n, k) in table {
            assert_eq!(interval_rank(n), Some(k), "n = {n}");
        }
    }

    /// Ratios are this / other, paired run by run; the interval is read off
    /// the sorted ratios.
    #[test]
    fn ratios_pair_runs_and_read_the_interval_off_the_sorted_ratios() {
        let this = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0];
        let other = [2.0; 9];
        let r = Ratios::of(&this, &other);
        assert_eq!(r.median, 2.5);
        // Nine values: the 2nd smallest and the 2nd largest.
        assert_eq!(r.interval, Some((1.0, 4.0)));
        let r = Ratios::of(&[3.0, 1.0], &[1.0, 1.0]);
        assert_eq!(r, Ratios { median: 2.0, interval: None });
    }

    /// Runs of both binaries count as the same simulation only when every
    /// run has the same events and link hops.
    #[test]
    fn a_different_event_count_marks_the_runs_as_different() {
        let run = |events: u64, cpu: f64| serde_json::json!({ "events": events, "link_hops": 10, "cpu_s": cpu, "wall_s": cpu, "peak_rss_bytes": 1e6 });
        let this = [run(5, 1.0), run(5, 1.2)];
        assert!(Comparison::of(&this, &[run(5, 2.0), run(5, 2.0)]).same_run);
        let c = Comparison::of(&this, &[run(5, 2.0), run(6, 2.0)]);
        assert!(!c.same_run);
        assert_eq!(c.cpu.median, 0.55);
        assert_eq!((c.cpu_this, c.cpu_other), (1.1, 2.0));
    }
}
