//! `csigsim`: run, validate and benchmark scenarios from the command line.
//!
//! Exit status: 0 success, 2 bad input (the message names the file, the key
//! and line:column), 1 internal error.

mod alloc;
mod bench;
mod compare;
mod import;
mod limits;
mod repro;
mod report;
mod sweep;

use clap::{Parser, Subcommand};
use csigsim::{InputError, Override, RunOutput};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Large blocks on huge pages (csigsim::hugepages): the same outputs, less
/// time waiting on page walks on large fabrics; a failed allocation ends
/// with a message, not an abort.
#[global_allocator]
static ALLOC: alloc::Allocator = alloc::Allocator;

#[derive(Parser)]
#[command(name = "csigsim", version, about = "Packet-level simulator of datacenter and AI fabrics with in-band congestion signals")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a scenario and write its run directory.
    Run {
        scenario: PathBuf,
        /// Run directory (default: runs/<scenario file name>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Seed, replacing the scenario's.
        #[arg(long)]
        seed: Option<u64>,
        /// Override a scenario key: --set transport.cc=dctcp (value parsed as TOML).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Print nothing but errors.
        #[arg(long)]
        quiet: bool,
        /// Capture packets into this pcap file (and FILE.csv beside it, one row per frame).
        #[arg(long, value_name = "FILE")]
        pcap: Option<PathBuf>,
        /// Capture only this flow (repeatable).
        #[arg(long = "pcap-flow", value_name = "FLOW_ID")]
        pcap_flow: Vec<u32>,
        /// Capture only this directed link, FROM->TO by node names (repeatable).
        #[arg(long = "pcap-link", value_name = "FROM->TO")]
        pcap_link: Vec<String>,
        /// Capture from this simulated time (e.g. 100us).
        #[arg(long = "pcap-start", value_name = "TIME")]
        pcap_start: Option<String>,
        /// Capture until this simulated time.
        #[arg(long = "pcap-end", value_name = "TIME")]
        pcap_end: Option<String>,
        /// Bytes of each frame stored in the capture (default 256).
        #[arg(long)]
        snaplen: Option<u32>,
        /// Also write a .parquet twin of each CSV file.
        #[arg(long)]
        parquet: bool,
        /// Run on this many threads (1 to 64), the fabric cut into as many
        /// partitions (docs/parallel.md); the outputs are the same as on one.
        /// auto: the cores the machine's load average leaves free, at least 1.
        #[arg(long, default_value = "auto", value_parser = parse_threads)]
        threads: Threads,
        /// Memory the run may take, by the estimate made before it runs
        /// (default: 8GiB, or less where this process may have less; docs/robustness.md).
        #[arg(long = "max-memory", value_name = "SIZE")]
        max_memory: Option<String>,
        /// Bytes the monitor files may take (default: 16GiB, or 90% of the free space where --out goes).
        #[arg(long = "max-output", value_name = "SIZE")]
        max_output: Option<String>,
        /// End a run whose simulated time advances by less than this per
        /// second of wall time over 10 s (default 1us; 0s: never).
        #[arg(long = "min-progress", value_name = "TIME", default_value = "1us")]
        min_progress: String,
        /// Also run each job alone on the same fabric, seed and placement,
        /// for its slowdown in jobs.csv (docs/workloads.md#jobs).
        #[arg(long = "isolate-jobs")]
        isolate_jobs: bool,
        /// Also write the run as a Chrome / Perfetto trace-event file: a
        /// track per rank, per flow group, and the busiest links' counters
        /// (docs/outputs.md#timeline).
        #[arg(long, value_name = "FILE.json")]
        timeline: Option<PathBuf>,
    },
    /// Parse and check a scenario without running it.
    Validate {
        scenario: PathBuf,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// As for `run`.
        #[arg(long = "max-memory", value_name = "SIZE")]
        max_memory: Option<String>,
        /// As for `run`.
        #[arg(long = "max-output", value_name = "SIZE")]
        max_output: Option<String>,
    },
    /// List the topologies, congestion controls, routing policies, workloads and shipped scenarios.
    List,
    /// Compare run directories, each against the first: collectives' CCT,
    /// algbw and busbw, slowdown per flow-size bucket, completion and
    /// slowdown percentiles, RPC latencies and totals, with the ratio to the
    /// first run and whether it is better or worse.
    Compare {
        /// Two or more run directories; the first is the reference.
        #[arg(required = true, num_args = 2.., value_name = "RUN")]
        runs: Vec<PathBuf>,
        /// Print one JSON object instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Run the source documents' experiments (docs/reproductions.md) and
    /// print each source's figure beside csigsim's.
    Repro {
        /// Experiments to run (S1, S2, ...; default: all).
        ids: Vec<String>,
        /// Directory for the run directories and results.
        #[arg(long, default_value = "runs/repro")]
        out: PathBuf,
        /// The reduced form: seconds instead of minutes; directions only.
        #[arg(long)]
        quick: bool,
        /// Print one JSON array instead of the table.
        #[arg(long)]
        json: bool,
        /// Runs side by side (default: the machine's cores).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        jobs: Option<u32>,
        /// Write no HTML report per experiment (written by default when the
        /// Python package is installed).
        #[arg(long)]
        no_report: bool,
    },
    /// Run a parameter sweep: a base scenario with axes of --set values and
    /// seeds, one child `csigsim run` per point (docs/sweeps.md).
    Sweep {
        sweep: PathBuf,
        /// Show the points done, running, failed and pending, and run nothing.
        #[arg(long)]
        status: bool,
        /// Sweep directory, replacing the file's `out`.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Points run at once (default: the file's `workers`, 0 = every core).
        #[arg(long)]
        workers: Option<usize>,
        /// Retries of a failed point, replacing the file's `retries`.
        #[arg(long)]
        retries: Option<u32>,
        /// Print nothing but errors.
        #[arg(long)]
        quiet: bool,
    },
    /// Write one self-contained, interactive HTML report of run
    /// directories: the scenario keys that differ, the figures of `compare`,
    /// summaries, overlaid plots and telemetry views (needs the csigsim
    /// Python package).
    Report {
        #[arg(required = true)]
        runs: Vec<PathBuf>,
        /// The HTML file (default: report.html in the first run directory).
        #[arg(long)]
        out: Option<PathBuf>,
        /// A run's name in the report, once per run in order (default: the
        /// directories' names).
        #[arg(long = "label", value_name = "NAME")]
        labels: Vec<String>,
    },
    /// Write a PNG of every plot that applies to a run directory (needs the
    /// csigsim Python package).
    Plot {
        run: PathBuf,
        /// Directory of the PNG files (default: RUN/plots).
        out: Option<PathBuf>,
    },
    /// Write a scenario (and its flow trace) from another simulator's
    /// inputs: an htsim connection matrix, or ns-3's topology and flow files
    /// (docs/import.md).
    Import {
        #[command(subcommand)]
        source: import::Source,
    },
    /// Run the fixed benchmark set and print its figures.
    Bench {
        /// Print JSON lines instead of a table.
        #[arg(long)]
        json: bool,
        /// Run only these cases (comma-separated names).
        #[arg(long, value_delimiter = ',')]
        cases: Vec<String>,
        /// Run each case this many times and report the run with the median wall time
        /// (default 1; with --against, 6 runs of each binary).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        repeat: Option<u32>,
        /// Run each case on this many threads (`run --threads`, auto included;
        /// default 1, so that figures compare across machines and loads).
        #[arg(long, default_value = "1", value_parser = parse_threads)]
        threads: Threads,
        /// Cut each case into this many partitions (default: as many as threads).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
        partitions: Option<u32>,
        /// Run each case alternately with another csigsim binary (a build to compare
        /// with) and report paired ratios of CPU and wall time, this / other.
        #[arg(long, value_name = "BINARY")]
        against: Option<PathBuf>,
        /// Internal: run one case in this process and print its JSON.
        #[arg(long, hide = true)]
        child: Option<String>,
    },
}

fn main() -> ExitCode {
    // A closed pipe (`csigsim list | head -1`) ends the process quietly, as
    // it does other command-line tools, not as a panic in `println!`.
    #[cfg(unix)]
    // SAFETY: before any thread starts; restores the signal's default action.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let result = std::panic::catch_unwind(|| match cli.cmd {
        Cmd::Run { scenario, out, seed, set, quiet, pcap, pcap_flow, pcap_link, pcap_start, pcap_end, snaplen, parquet, threads, max_memory, max_output, min_progress, isolate_jobs, timeline } => {
            let budget = limits::budget(max_memory.as_deref(), max_output.as_deref(), Some(out.as_deref().unwrap_or(Path::new("runs"))))?;
            let min_progress_ps = limits::min_progress(&min_progress)?;
            let capture = match pcap {
                Some(path) => Some((path, capture_filter(pcap_flow, &pcap_link, pcap_start, pcap_end, snaplen.unwrap_or(256))?)),
                None => {
                    // A capture filter without a capture would be silently ignored.
                    let given = [
                        ("--pcap-flow", !pcap_flow.is_empty()),
                        ("--pcap-link", !pcap_link.is_empty()),
                        ("--pcap-start", pcap_start.is_some()),
                        ("--pcap-end", pcap_end.is_some()),
                        ("--snaplen", snaplen.is_some()),
                    ];
                    if let Some((flag, _)) = given.iter().find(|g| g.1) {
                        return Err(Failure::Input(InputError::new(*flag, None, None, "applies to a packet capture: give --pcap FILE too")));
                    }
                    None
                }
            };
            let opts = csigsim::RunOptions { capture, threads: threads.count(), stream_parquet: parquet, max_output: Some(budget.max_output), min_progress_ps, ..Default::default() };
            cmd_run(&scenario, out, seed, &set, quiet, opts, &budget, threads, isolate_jobs, timeline.as_deref())
        }
        Cmd::Validate { scenario, set, max_memory, max_output } => {
            let budget = limits::budget(max_memory.as_deref(), max_output.as_deref(), None)?;
            cmd_validate(&scenario, &set, &budget)
        }
        Cmd::List => {
            cmd_list();
            Ok(())
        }
        Cmd::Sweep { sweep, status, out, workers, retries, quiet } => {
            sweep::cmd(&sweep, sweep::Options { out, workers, retries, status, quiet }).map_err(|e| match e {
                sweep::Error::Input(e) => Failure::Input(e),
                sweep::Error::Internal(m) => Failure::Internal(m),
                sweep::Error::Reported => Failure::Stalled,
            })
        }
        Cmd::Bench { json, cases, child, repeat, threads, partitions, against } => {
            // Resolved once: every run of the set, and the other binary's, on the same count.
            let threads = threads.count() as u32;
            bench::cmd(bench::Options { json, cases, child, repeat, threads, partitions: partitions.unwrap_or(threads), against })
        }
        Cmd::Repro { ids, out, quick, json, jobs, no_report } => {
            let jobs = jobs.map_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()), |j| j as usize);
            repro::cmd_repro(&ids, &out, quick, json, jobs, !no_report)
        }
        Cmd::Import { source } => import::cmd(source).map_err(Failure::Input),
        Cmd::Report { runs, out, labels } => report::cmd_report(&runs, out, &labels),
        Cmd::Plot { run, out } => report::cmd_plot(&run, out),
        Cmd::Compare { runs, json } => {
            let runs: Vec<&Path> = runs.iter().map(PathBuf::as_path).collect();
            let rows = compare::compare(&runs)?;
            if json {
                println!("{}", compare::json(&rows));
            } else {
                print!("{}", compare::table(&rows, &runs));
            }
            Ok(())
        }
    });
    match result {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(Failure::Input(e))) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
        Ok(Err(Failure::Internal(m))) => {
            eprintln!("internal error: {m}");
            ExitCode::from(1)
        }
        // The diagnosis is already on stderr.
        Ok(Err(Failure::Stalled)) => ExitCode::from(1),
        Err(_) => {
            eprintln!("internal error: the simulator panicked (please report it with the scenario)");
            ExitCode::from(1)
        }
    }
}

enum Failure {
    Input(InputError),
    Internal(String),
    /// The run stopped on the progress watchdog, or sweep points failed:
    /// what went wrong is already on stderr.
    Stalled,
}

impl From<InputError> for Failure {
    fn from(e: InputError) -> Self {
        Failure::Input(e)
    }
}

/// `--threads`: a count, or auto ([`csigsim::engine::threads`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Threads {
    Auto,
    Count(u32),
}

impl Threads {
    /// The threads to run on; auto decides now, from the machine's load.
    fn count(self) -> usize {
        match self {
            Threads::Auto => csigsim::engine::threads::free_cores().min(64),
            Threads::Count(n) => n as usize,
        }
    }
}

fn parse_threads(s: &str) -> Result<Threads, String> {
    if s == "auto" {
        return Ok(Threads::Auto);
    }
    match s.parse::<u32>() {
        Ok(n) if (1..=64).contains(&n) => Ok(Threads::Count(n)),
        _ => Err("expected auto or a number of threads from 1 to 64".into()),
    }
}

fn parse_overrides(set: &[String]) -> Result<Vec<Override>, InputError> {
    set.iter().map(|s| Override::parse(s)).collect()
}

fn load(path: &Path, set: &[String], seed: Option<u64>, budget: &csigsim::scenario::Budget) -> Result<csigsim::Scenario, InputError> {
    let ov = parse_overrides(set)?;
    csigsim::scenario::load_file_with(path, &ov, seed, budget)
}

fn cmd_validate(path: &Path, set: &[String], budget: &csigsim::scenario::Budget) -> Result<(), Failure> {
    let sc = load(path, set, None, budget)?;
    println!(
        "{}: ok ({}, {}, {}, {})",
        path.display(),
        count(sc.topology.hosts.len(), "host", "hosts"),
        count(sc.topology.switches.len(), "switch", "switches"),
        count(sc.topology.links.len(), "link", "links"),
        count(sc.flow_count(), "flow", "flows")
    );
    Ok(())
}

/// "1 switch", "2 switches", "0 switches".
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn capture_filter(
    flows: Vec<u32>,
    links: &[String],
    start: Option<String>,
    end: Option<String>,
    snaplen: u32,
) -> Result<csigsim::output::capture::CaptureFilter, Failure> {
    let bad = |opt: &str, m: String| Failure::Input(InputError::new(opt, None, None, m));
    let time = |opt: &str, v: &Option<String>| -> Result<Option<u64>, Failure> {
        v.as_deref().map(|s| csigsim::units::parse_time(s).map(|t| t.0).map_err(|m| bad(opt, m))).transpose()
    };
    let mut pairs = Vec::new();
    for l in links {
        match l.split_once("->") {
            Some((a, b)) if !a.is_empty() && !b.is_empty() => pairs.push((a.to_string(), b.to_string())),
            _ => return Err(bad("--pcap-link", format!("expected FROM->TO, got \"{l}\""))),
        }
    }
    if snaplen < 64 {
        return Err(bad("--snaplen", format!("snaplen must be at least 64 bytes, got {snaplen}")));
    }
    let start_ps = time("--pcap-start", &start)?.unwrap_or(0);
    let end_ps = time("--pcap-end", &end)?;
    if let Some(e) = end_ps.filter(|&e| e < start_ps) {
        return Err(bad(
            "--pcap-end",
            format!("the capture would end ({}) before it starts (--pcap-start {})", csigsim::units::Time(e), csigsim::units::Time(start_ps)),
        ));
    }
    Ok(csigsim::output::capture::CaptureFilter {
        flows: flows.into_iter().map(csigsim::id::FlowId).collect(),
        links: pairs,
        start_ps,
        end_ps,
        snaplen,
    })
}

// The command's flags, one by one as clap gives them.
#[allow(clippy::too_many_arguments)]
fn cmd_run(
    path: &Path,
    out: Option<PathBuf>,
    seed: Option<u64>,
    set: &[String],
    quiet: bool,
    mut opts: csigsim::RunOptions,
    budget: &csigsim::scenario::Budget,
    threads: Threads,
    isolate_jobs: bool,
    timeline: Option<&Path>,
) -> Result<(), Failure> {
    let sc = load(path, set, seed, budget)?;
    if isolate_jobs && sc.jobs.is_empty() {
        return Err(Failure::Input(InputError::new(path.display().to_string(), None, None, "--isolate-jobs: the scenario has no jobs (a workload's `job` key)")));
    }
    // Each job alone first, on the same placement: its time there.
    let alone = match isolate_jobs {
        true => Some(csigsim::run_jobs_alone(&sc, &opts).map_err(Failure::Internal)?),
        false => None,
    };
    // The scenario's warnings come first (summary.json keeps them too).
    for w in sc.transport.warnings(sc.switch.routing) {
        eprintln!("warning: {w}");
    }
    let out = out.unwrap_or_else(|| {
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "run".into());
        PathBuf::from("runs").join(stem)
    });
    // The files the run reads: none may lie inside the run directory.
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut inputs = vec![("the scenario".to_string(), path.to_path_buf())];
    inputs.extend(csigsim::output::rundir::scenario_inputs(&sc.resolved_toml, &base));
    // A capture asked for inside the run directory is written with the run
    // into the staging directory, and published with it.
    let mut extra = Vec::new();
    let mut capture_inside = None;
    if let Some((pcap, _)) = &opts.capture {
        let csv_of = |p: &Path| {
            let mut s = p.as_os_str().to_owned();
            s.push(".csv");
            PathBuf::from(s)
        };
        for (what, file) in &inputs {
            if [pcap.clone(), csv_of(pcap)].iter().any(|c| c.canonicalize().is_ok_and(|c| file.canonicalize().is_ok_and(|f| f == c))) {
                return Err(Failure::Input(InputError::new("--pcap", None, None, format!("the capture would overwrite {what} {}", file.display()))));
            }
        }
        let abs = |p: &Path| csigsim::output::rundir::absolute(p).ok();
        if let (Some(p), Some(o)) = (abs(pcap), abs(&out)) {
            if let Ok(rel) = p.strip_prefix(&o) {
                match rel.components().count() {
                    0 => {}
                    1 => extra.extend([rel.as_os_str().to_owned(), csv_of(rel).into_os_string()]),
                    _ => extra.extend(rel.components().next().map(|c| c.as_os_str().to_owned())),
                }
                capture_inside = Some(rel.to_path_buf()).filter(|r| !r.as_os_str().is_empty());
            }
        }
    }
    if let Some(t) = timeline {
        check_timeline(t, &out, &inputs, &mut extra)?;
    }
    // Locked, checked, stale staging directories removed; everything goes
    // to the staging directory first (the monitor files as the run goes),
    // and becomes `out` in one rename when the whole run directory is written.
    // A place where the lock file or the staging directory cannot be made
    // is the user's to change, as a refusal is.
    let dir = csigsim::output::RunDir::create_with(&out, &csigsim::output::RunDirOptions { inputs, extra })
        .map_err(|e| Failure::Input(InputError::new("--out", None, None, e.to_string())))?;
    if let (Some(rel), Some((pcap, _))) = (capture_inside, opts.capture.as_mut()) {
        *pcap = dir.staging().join(rel);
        if let Some(p) = pcap.parent() {
            std::fs::create_dir_all(p).map_err(|e| Failure::Internal(format!("cannot create {}: {e}", p.display())))?;
        }
    }
    let bar = progress_bar(quiet);
    let started = Instant::now();
    // The monitor files, and with --parquet their twins, stream to disk.
    opts.stream_dir = Some(dir.staging().to_path_buf());
    let parquet = opts.stream_parquet;
    let res = csigsim::run_with(sc, &opts, |p| {
        if let Some(b) = &bar {
            let m = progress_measure(p);
            if b.length() != Some(m.len) {
                b.set_length(m.len);
                b.set_style(progress_style(&m));
            }
            b.set_position(m.pos);
            b.set_message(format!("wall {:.1} s, {} M events", started.elapsed().as_secs_f64(), p.events / 1_000_000));
        }
        true
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    // Only a count the user gave is worth a note: auto asks for no more than
    // the machine offers, and one thread is what it falls back to.
    if let (Threads::Count(n), Ok(r)) = (threads, res.as_ref()) {
        if let Some(why) = &r.threads.refused {
            match r.threads.partitions {
                1 => eprintln!("note: --threads {n}: ran on one thread: {why}"),
                k => eprintln!("note: --threads {n}: ran on {k} partitions: {why}"),
            }
        }
    }
    // The messages name the file: one in the staging directory is ours to
    // write (an internal error); otherwise it is the capture the user named.
    let staging = dir.staging().display().to_string();
    let mut res = res.map_err(|m| match m.contains(&staging) {
        true => limits::write_failure(m),
        false => Failure::Input(InputError::new("--pcap", None, None, m)),
    })?;
    if let (Some(alone), Some(t)) = (&alone, res.tables.jobs.as_mut()) {
        csigsim::output::jobs::set_alone(t, alone);
    }
    // A run a limit ended writes no run directory (its staging goes with `dir`).
    if let Some(f) = limits::limit_failure(&res, path) {
        return Err(f);
    }
    // The twins go into the staging directory too; a run without --parquet
    // leaves no twin of an earlier run beside its CSVs (the commit removes it).
    if parquet {
        res.write_parquet(dir.staging()).map_err(|e| limits::write_failure(format!("cannot write {}: {e}", out.display())))?;
    }
    if dir.replaces() && !quiet {
        eprintln!("replacing the earlier run in {}", out.display());
    }
    dir.commit(&res).map_err(|e| limits::write_failure(format!("cannot write {}: {e}", out.display())))?;
    if let Some(t) = timeline {
        let stats = write_timeline(t, &out)?;
        if !quiet {
            eprintln!("timeline: {} ({} events, {})", t.display(), stats.events, csigsim::budget::fmt_bytes(stats.bytes));
        }
    }
    if !quiet {
        print_summary(&res, &out);
    }
    print_diagnosis(&res.summary);
    if !res.summary.invariants_ok {
        return Err(Failure::Internal(format!("invariants violated: {}", res.summary.invariant_violations.join("; "))));
    }
    if res.summary.end_reason == "stalled" {
        return Err(Failure::Stalled);
    }
    Ok(())
}

/// `--timeline`'s temporary file, beside the file: written whole, then
/// renamed onto it.
fn timeline_partial(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.partial-{}", std::process::id()))
}

/// Checks before the run that `--timeline` can be written: a file (not a
/// directory, not a file the run reads) in an existing directory where
/// csigsim may create files, or directly in the run directory (added to
/// `extra`, the run directory's files beside the run's).
fn check_timeline(path: &Path, out: &Path, inputs: &[(String, PathBuf)], extra: &mut Vec<std::ffi::OsString>) -> Result<(), Failure> {
    let bad = |m: String| Failure::Input(InputError::new("--timeline", None, None, format!("cannot write {}: {m}", path.display())));
    let Some(name) = path.file_name() else { return Err(bad("the path names no file".into())) };
    if path.is_dir() {
        return Err(bad("it is a directory".into()));
    }
    for (what, file) in inputs {
        if path.canonicalize().is_ok_and(|p| file.canonicalize().is_ok_and(|f| f == p)) {
            return Err(bad(format!("it is {what}, which the run reads")));
        }
    }
    let abs = |p: &Path| csigsim::output::rundir::absolute(p).ok();
    if let (Some(p), Some(o)) = (abs(path), abs(out)) {
        if p.starts_with(&o) {
            if p.parent() != Some(o.as_path()) {
                return Err(bad(format!("it lies in a directory inside the run directory {}, which the run replaces; put it in the run directory itself or elsewhere", out.display())));
            }
            extra.push(name.to_owned());
            return Ok(());
        }
    }
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !parent.is_dir() {
        return Err(bad(format!("its directory {} does not exist", parent.display())));
    }
    // A file made and removed: the directory takes new files.
    let probe = timeline_partial(path);
    std::fs::OpenOptions::new().write(true).create_new(true).open(&probe).map_err(|e| bad(e.to_string()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Writes the timeline of the run directory `out` to `path`, through a
/// temporary file renamed onto it (a failure leaves no partial file).
fn write_timeline(path: &Path, out: &Path) -> Result<csigsim::output::timeline::Stats, Failure> {
    let tmp = timeline_partial(path);
    let res = std::fs::File::create(&tmp)
        .map_err(|e| e.to_string())
        .and_then(|f| csigsim::output::timeline::write(out, f).map_err(|e| e.to_string()))
        .and_then(|s| std::fs::rename(&tmp, path).map(|_| s).map_err(|e| e.to_string()));
    res.map_err(|m| {
        let _ = std::fs::remove_file(&tmp);
        limits::write_failure(format!("cannot write the timeline {}: {m}", path.display()))
    })
}

/// On stderr: the diagnosis of a run that stalled or ran out of events with
/// flows unfinished, or the count of flows a stop time cut short.
fn print_diagnosis(s: &csigsim::output::Summary) {
    let unfinished = s.flows_total as u64 - s.flows_completed;
    let Some(d) = &s.diagnosis else {
        if unfinished > 0 {
            eprintln!("{unfinished} of {} flows unfinished at the end of the run ({})", s.flows_total, s.end_reason);
        }
        return;
    };
    let head = if s.end_reason == "stalled" { "stalled" } else { "unfinished flows" };
    eprintln!("{head}: {}", d.message);
    for f in &d.flows {
        eprintln!(
            "  flow {}{} {} -> {}: {} of {} bytes delivered{}{}",
            f.flow_id,
            if f.name.is_empty() { String::new() } else { format!(" ({})", f.name) },
            f.src,
            f.dst,
            f.delivered_bytes,
            f.size_bytes,
            if f.started { "" } else { ", not started" },
            if f.in_flight { ", data in flight" } else { "" }
        );
    }
    if d.unfinished_flows > d.flows.len() as u64 {
        eprintln!("  ... and {} more", d.unfinished_flows - d.flows.len() as u64);
    }
    if !d.paused_ports.is_empty() {
        eprintln!("  paused by PFC: {}", d.paused_ports.join(", "));
    }
    if !d.pfc_cycle.is_empty() {
        eprintln!("  PFC deadlock cycle: {}", d.pfc_cycle.join(", "));
    }
    let t = &d.stretch;
    eprintln!(
        "  from {:.3} us to the end ({:.3} us without a delivery): {} retransmits, {} timeouts, {} NACKs, {} trims, {} drops, {} pauses",
        t.since_ns / 1000.0,
        t.length_ns / 1000.0,
        t.retransmits,
        t.timeouts,
        t.nacks,
        t.trims,
        t.drops,
        t.pauses
    );
}

/// An output directory must be a directory or creatable as one: checked
/// before the runs, so that a bad `--out` does not cost them (`repro`).
fn check_out(out: &Path) -> Result<(), Failure> {
    for p in out.ancestors().filter(|p| !p.as_os_str().is_empty()) {
        if let Ok(m) = std::fs::metadata(p) {
            if m.is_dir() {
                return Ok(());
            }
            let what = if p == out { "it is an existing file".to_string() } else { format!("{} is an existing file", p.display()) };
            return Err(Failure::Input(InputError::new(
                "--out",
                None,
                None,
                format!("cannot write the run directory {}: {what}, not a directory", out.display()),
            )));
        }
    }
    Ok(())
}

/// What the progress bar counts: simulated time against the scenario's stop
/// time (us, the rate in simulated us per wall second), or else flows done of
/// all; indicatif derives the rate and the ETA from the position.
struct ProgressMeasure {
    len: u64,
    pos: u64,
    template: &'static str,
    /// The unit of the rate: "us/s" or "flows/s".
    rate_unit: &'static str,
}

fn progress_measure(p: &csigsim::Progress) -> ProgressMeasure {
    match p.stop_ps {
        Some(stop) => ProgressMeasure {
            len: stop / 1_000_000,
            pos: (p.sim_time_ps / 1_000_000).min(stop / 1_000_000),
            template: "{bar:30} sim {pos}/{len} us ({rate}, ETA {eta}) | {msg}",
            rate_unit: "us/s",
        },
        None => ProgressMeasure {
            len: p.flows_total as u64,
            pos: p.flows_completed.min(p.flows_total as u64),
            template: "{bar:30} flows {pos}/{len} ({rate}, ETA {eta}) | {msg}",
            rate_unit: "flows/s",
        },
    }
}

/// The bar's style: the template of `m`, its rate as [`rate_text`].
fn progress_style(m: &ProgressMeasure) -> ProgressStyle {
    let unit = m.rate_unit;
    ProgressStyle::with_template(m.template)
        .expect("template")
        .with_key("rate", move |st: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = w.write_str(&rate_text(st.per_sec(), unit));
        })
}

/// A rate with 3 significant digits and no separators: simulated time per
/// wall second in the unit that fits (`2.28 ms/s`, `850 us/s`), flows per
/// second with an SI prefix (`12.5 flows/s`, `2.28 k flows/s`).
fn rate_text(per_sec: f64, unit: &str) -> String {
    let scales: &[(f64, &str)] = if unit == "us/s" {
        &[(1e6, "s/s"), (1e3, "ms/s"), (1.0, "us/s"), (1e-3, "ns/s")]
    } else {
        &[(1e9, "G flows/s"), (1e6, "M flows/s"), (1e3, "k flows/s"), (0.0, "flows/s")]
    };
    if !per_sec.is_finite() || per_sec <= 0.0 {
        return format!("0 {unit}");
    }
    let &(f, name) = scales.iter().find(|(f, _)| per_sec >= *f).unwrap_or(&scales[scales.len() - 1]);
    let v = if f > 0.0 { per_sec / f } else { per_sec };
    let decimals = if v >= 100.0 { 0 } else if v >= 10.0 { 1 } else { 2 };
    let text = format!("{v:.decimals$}");
    let text = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.') } else { &text };
    format!("{text} {name}")
}

fn progress_bar(quiet: bool) -> Option<ProgressBar> {
    if quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    b.set_style(ProgressStyle::with_template("{spinner} flows done {pos} | {msg}").expect("template"));
    Some(b)
}

fn print_summary(r: &RunOutput, out: &Path) {
    let s = &r.summary;
    let opt = |v: Option<f64>| v.map(|x| format!("{:.3}", x / 1000.0)).unwrap_or_else(|| "-".into());
    let rows: Vec<(&str, String)> = vec![
        ("scenario", s.name.clone()),
        ("topology", format!("{} ({} hosts, {} switches, {} links)", s.topology, s.hosts, s.switches, s.links)),
        ("cc / switch / routing", format!("{} / {} / {}", s.cc, s.switch_mode, s.routing)),
        ("seed", s.seed.to_string()),
        ("end", s.end_reason.clone()),
        ("simulated time", format!("{:.3} us", s.sim_time_ns / 1000.0)),
        ("wall time", format!("{:.3} s", s.wall_s)),
        // What --threads (auto by default) came to.
        ("threads", r.threads.partitions.to_string()),
        ("events", format!("{} ({:.2} per link hop)", s.events, s.events_per_link_hop)),
        ("link hops", format!("{} ({:.2} M/s)", s.link_hops, s.link_hops_per_s / 1e6)),
        ("flows completed", format!("{} of {}", s.flows_completed, s.flows_total)),
    ];
    // What the run was for first: collectives' CCT, algbw and busbw, or the
    // slowdown per flow-size bucket of Poisson and RPC workloads (as `compare`).
    let headline = compare::headline(out).unwrap_or_default();
    let mut rows: Vec<(String, String)> = rows.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    // A trace's iteration times come first, under the scenario's name.
    let (iterations, rest): (Vec<_>, Vec<_>) = headline.into_iter().partition(|(k, _)| k.starts_with("iteration "));
    rows.splice(1..1, iterations);
    rows.extend(rest);
    // One line per job: its time, iterations and, with --isolate-jobs, slowdown.
    if let Some(t) = &r.tables.jobs {
        let us = |v: Option<u64>| v.map_or_else(|| "-".into(), |x| format!("{:.3} us", x as f64 / 1e6));
        for j in 0..t.len() {
            let slow = t.slowdown[j].map_or_else(String::new, |x| format!(", slowdown {x:.4} (alone {})", us(t.alone_time_ps[j])));
            rows.push((
                format!("job {}", t.job[j]),
                format!("{} ranks, {}, iterations {} of {} (mean {}){slow}", t.ranks[j], us(t.time_ps[j]), t.iterations_completed[j], t.iterations[j], us(t.iteration_mean_ps[j])),
            ));
        }
    }
    let more: Vec<(&str, String)> = vec![
        ("FCT p50 / p99 / max", format!("{} / {} / {} us", opt(s.fct_p50_ns), opt(s.fct_p99_ns), opt(s.fct_max_ns))),
        (
            "slowdown p50 / p99",
            format!(
                "{} / {}",
                s.slowdown_p50.map(|v| format!("{v:.2}")).unwrap_or("-".into()),
                s.slowdown_p99.map(|v| format!("{v:.2}")).unwrap_or("-".into())
            ),
        ),
        (
            "flow throughput min / max",
            match (s.throughput_min_gbps, s.throughput_max_gbps) {
                (Some(lo), Some(hi)) if lo > 0.0 => format!("{lo:.2} / {hi:.2} Gb/s (max : min = {:.2})", hi / lo),
                (Some(lo), Some(hi)) => format!("{lo:.2} / {hi:.2} Gb/s"),
                _ => "-".into(),
            },
        ),
        ("data packets delivered", s.packets_delivered.to_string()),
        ("drops / trims / ECN marks", format!("{} / {} / {}", s.packets_dropped, s.packets_trimmed, s.ecn_marks)),
        ("PFC pauses / resumes", format!("{} / {}", s.pauses_sent, s.resumes_sent)),
        ("retransmits / timeouts / NACKs", format!("{} / {} / {}", s.retransmits, s.timeouts, s.nacks_sent)),
        ("invariants", if s.invariants_ok { "ok".into() } else { format!("VIOLATED: {}", s.invariant_violations.join("; ")) }),
        ("results", out.display().to_string()),
    ];
    rows.extend(more.into_iter().map(|(k, v)| (k.to_string(), v)));
    let w = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
    for (k, v) in rows {
        println!("{k:<w$}  {v}");
    }
}

fn cmd_list() {
    let section = |title: &str, items: &[(&str, &str)]| {
        println!("{title}:");
        let w = items.iter().map(|(n, _)| n.chars().count()).max().unwrap_or(0).max(14);
        for (n, d) in items {
            println!("  {n:<w$} {d}");
        }
    };
    section("topologies", csigsim::net::topology::KINDS);
    section("congestion control (transport.cc)", csigsim::cc::KINDS);
    section("switch routing (switch.routing)", csigsim::lb::ROUTING);
    section("host load balancing (transport.entropy)", csigsim::lb::ENTROPY);
    section("switch modes (switch.mode)", csigsim::net::mode::KINDS);
    section(
        "host-side load balancing (transport.entropy; docs/lb.md)",
        &[
            ("flow", "one entropy per flow (queue pair), drawn from the seed; switches hash it (default)"),
            ("oblivious", "oblivious spraying: every data packet on the next of the flow's entropies"),
            ("reps", "REPS: entropies of unmarked ACKs recycled, fresh ones explored"),
            ("csig", "CSIG-guided: path weights from reflected min(ABW), with the last-hop rule"),
        ],
    );
    section(
        "queue pairs per connection (transport.connection; docs/lb.md)",
        &[
            ("round robin", "qps = N: each message whole on the next QP in turn (NCCL's default)"),
            ("striping", "split_data = true: each message cut into aligned stripes over the QPs"),
            ("cast", "qp_sched.enable = true: Broadcom CAST, stripes weighted by measured round trips"),
            ("cast wrr", "qp_sched.wrr_enable = true: whole messages by weighted round robin"),
        ],
    );
    section("workloads ([[workload]] kind)", csigsim::workload::KINDS);
    section(
        "signals",
        &[
            ("ecn", "RED marking at egress (switch.ecn, mode = \"red\")"),
            ("ecp", "enhanced congestion point: marks contributors at roots only (switch.ecn, mode = \"ecp\")"),
            ("csig", "CSIG tag: delay, nqd, abw, abw_c; compact or wide (signals.csig)"),
            ("stamp", "per-hop queue stamps: MAX, SUM, SUM_SQU, IND (signals.stamp)"),
            ("int", "INT records for HPCC (signals.int)"),
        ],
    );
    let profiles: Vec<(&str, &str)> = csigsim::scenario::profile::PROFILES.iter().map(|p| (p.name, p.about)).collect();
    section("profiles (profile = NAME; docs/profiles.md)", &profiles);
    let cases: Vec<(&str, &str)> = csigsim_experiments::bench::cases().iter().map(|c| (c.name, c.description)).collect();
    section("benchmark cases", &cases);
    for (dir, title) in [("scenarios", "scenarios (./scenarios)"), ("scenarios/sweeps", "sweep files (./scenarios/sweeps; csigsim sweep FILE)")] {
        let files = described_files(Path::new(dir));
        if !files.is_empty() {
            let items: Vec<(&str, &str)> = files.iter().map(|(n, d)| (n.as_str(), d.as_str())).collect();
            section(title, &items);
        }
    }
}

/// The `.toml` files of `dir`, by name, each with its description: the
/// first sentence of the comment that opens it (else its `name`).
fn described_files(dir: &Path) -> Vec<(String, String)> {
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "toml")).collect();
    files.sort();
    files.iter().map(|p| (p.display().to_string(), std::fs::read_to_string(p).map(|t| description(&t)).unwrap_or_default())).collect()
}

/// The first sentence of a file's opening comment, or its `name = "..."`.
fn description(text: &str) -> String {
    let comment: Vec<&str> = text.lines().map_while(|l| l.strip_prefix('#')).map(str::trim).take_while(|l| !l.is_empty()).collect();
    let joined = comment.join(" ");
    // A sentence ends at ". ", or at ": " after a few words (what follows
    // details it), or with the comment; a long one is cut at a word.
    let colon = joined.find(": ").filter(|&i| i >= 40);
    let end = [joined.find(". "), colon].into_iter().flatten().min().unwrap_or(joined.len());
    let first = joined[..end].trim_end_matches('.').trim();
    if !first.is_empty() {
        const MAX: usize = 110;
        if first.chars().count() <= MAX {
            return first.to_string();
        }
        let head: String = first.chars().take(MAX).collect();
        return format!("{}...", head.rsplit_once(' ').map_or(head.as_str(), |(h, _)| h).trim_end_matches([',', ';', ':']));
    }
    text.lines()
        .find_map(|l| l.trim().strip_prefix("name").map(str::trim).and_then(|r| r.strip_prefix('=')).map(|r| r.trim().trim_matches('"').to_string()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::progress_measure;

    #[test]
    fn a_file_is_described_by_the_first_sentence_of_its_comment() {
        use super::description;
        let text = "# Web search traffic at 30% load on a fat tree: flows\n# arrive as a Poisson process. More.\nname = \"ws\"\n";
        assert_eq!(description(text), "Web search traffic at 30% load on a fat tree");
        assert_eq!(description("# One line, no stop\n\n# other\nname = \"x\""), "One line, no stop");
        // A short head before a colon is no description: the sentence goes on.
        assert_eq!(description("# Rail servers: 8 of 4 NICs. More.\n"), "Rail servers: 8 of 4 NICs");
        let long = format!("# {}\n", "word ".repeat(40));
        let d = description(&long);
        assert!(d.ends_with("word...") && d.chars().count() <= 113, "{d}");
        assert_eq!(description("name = \"two hosts\"\nseed = 1\n"), "two hosts");
    }

    fn progress(sim_time_ps: u64, stop_ps: Option<u64>, flows_completed: u64, flows_total: usize) -> csigsim::Progress {
        csigsim::Progress { sim_time_ps, stop_ps, events: 0, flows_completed, flows_total }
    }

    #[test]
    fn progress_rate_has_three_digits_a_prefix_and_no_separator() {
        use super::rate_text;
        assert_eq!(rate_text(2277.8259, "us/s"), "2.28 ms/s");
        assert_eq!(rate_text(850.2, "us/s"), "850 us/s");
        assert_eq!(rate_text(3_456_789.0, "us/s"), "3.46 s/s");
        assert_eq!(rate_text(12.54, "flows/s"), "12.5 flows/s");
        assert_eq!(rate_text(0.5, "flows/s"), "0.5 flows/s");
        assert_eq!(rate_text(2277.8259, "flows/s"), "2.28 k flows/s");
        assert_eq!(rate_text(f64::NAN, "us/s"), "0 us/s");
        for r in [1.0, 999.4, 1234.5678, 9.99e8] {
            let t = rate_text(r, "us/s");
            assert!(!t.contains(',') && t.split(' ').next().unwrap().len() <= 4, "{t}");
        }
    }

    #[test]
    fn progress_counts_simulated_time_against_stop_else_flows() {
        let m = progress_measure(&progress(2_500_000_000, Some(5_000_000_000), 1, 3));
        assert_eq!((m.pos, m.len), (2500, 5000));
        assert!(m.template.contains("us"));
        // The last check may come after the stop time: the bar ends full, not beyond.
        let m = progress_measure(&progress(5_000_200_000, Some(5_000_000_000), 1, 3));
        assert_eq!((m.pos, m.len), (5000, 5000));
        let m = progress_measure(&progress(2_500_000_000, None, 7, 10));
        assert_eq!((m.pos, m.len), (7, 10));
        assert!(m.template.contains("flows"));
    }
}
