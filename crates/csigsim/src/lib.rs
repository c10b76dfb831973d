//! # csigsim
//!
//! A packet-level simulator of datacenter and AI fabrics, built around the
//! congestion signals switches can give end hosts.
//!
//! The engine is deterministic: time is an integer number of picoseconds, the
//! event queue breaks ties by insertion order, and every random consumer has
//! its own stream derived from the seed. The same scenario and seed give
//! byte-identical outputs.
//!
//! ```
//! let toml = r#"
//! name = "two hosts"
//! [topology]
//! kind = "custom"
//! hosts = ["h0", "h1"]
//! switches = ["s0"]
//! links = [
//!   { a = "h0", b = "s0", rate = "100Gbps", delay = "1us" },
//!   { a = "s0", b = "h1", rate = "100Gbps", delay = "1us" },
//! ]
//! [[flow]]
//! src = "h0"
//! dst = "h1"
//! size = "1MB"
//! "#;
//! let sc = csigsim::scenario::load_str(toml, "example", std::path::Path::new("."), &[], None).unwrap();
//! let out = csigsim::run(sc, |_| true);
//! assert_eq!(out.summary.flows_completed, 1);
//! assert!(out.summary.invariants_ok);
//! ```

pub mod bits;
pub mod budget;
pub mod cc;
pub mod de;
pub mod engine;
pub mod flowsim;
pub mod hugepages;
pub mod id;
pub mod lb;
pub mod monitor;
pub mod net;
pub mod output;
pub mod rng;
pub mod packet;
pub mod scenario;
pub mod signal;
pub mod sim;
pub mod stats;
pub mod sweep;
pub mod transport;
pub mod units;
pub mod watchdog;
pub mod wire;
pub mod workload;

pub use output::RunOutput;
pub use scenario::{InputError, Override, Scenario};
pub use engine::World;

/// The crate version, written into every summary.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Progress of a run, for progress bars and cancellation.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub sim_time_ps: u64,
    /// The scenario's stop time, if it has one.
    pub stop_ps: Option<u64>,
    pub events: u64,
    pub flows_completed: u64,
    pub flows_total: usize,
}

/// Events between two progress callbacks.
pub const CHUNK_EVENTS: u64 = 1 << 20;

/// Options of a run beyond its scenario.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Write a pcap of the packets the filter selects to this file.
    pub capture: Option<(std::path::PathBuf, monitor::capture::CaptureFilter)>,
    /// Write links.csv, signals.csv and cc.csv into this directory while the
    /// run goes on, instead of keeping their rows in memory: the memory a
    /// run needs then does not grow with its simulated time. flows.csv goes
    /// there too, at the end, a row at a time (a collective of millions of
    /// flows never holds its flows table). The output has no tables for
    /// them; [`RunOutput::streamed`] names the files.
    pub stream_dir: Option<std::path::PathBuf>,
    /// With `stream_dir`: also write the Parquet twins of the streamed files
    /// there as the run goes (`links.parquet`, `signals.parquet`,
    /// `cc.parquet`, `flows.parquet`, a row group at a time; the `parquet`
    /// feature), so that `RunOutput::write_parquet` need not hold their
    /// rows. Without it, `write_parquet` of a streamed run fails: its flows
    /// table is not there to write from.
    pub stream_parquet: bool,
    /// Run on this many threads, the fabric cut into as many partitions
    /// ([`engine::parallel`]); 0 and 1 run the sequential engine. The
    /// outputs are the same. A run that cannot be cut runs on one thread
    /// and says why in [`RunOutput::threads`]. With `stream_dir`, a run on
    /// several threads streams its monitor rows between stretches of the
    /// run (about 2^20 events apart) rather than as the rows pile up.
    pub threads: usize,
    /// Partitions to cut the fabric into, when more than `threads` (0: as
    /// many as threads). Two partitions on one thread run the parallel
    /// mode's order and joins without its threads.
    pub partitions: usize,
    /// Bytes the streamed monitor files may take (`--max-output`); past
    /// them the run ends with `end_reason = "output_limit"`. None: no limit.
    pub max_output: Option<u64>,
    /// The progress guard (`--min-progress`): simulated picoseconds the run
    /// must advance per second of wall time, over each stretch of
    /// [`watchdog::GUARD_WALL_S`] seconds, or it ends with `end_reason =
    /// "too_slow"`. 0: no guard.
    pub min_progress_ps: u64,
}

/// Runs a scenario to completion (or its stop time). `progress` is called
/// every [`CHUNK_EVENTS`] events; returning false stops the run early, and the
/// output then says `end_reason = "interrupted"`. A run whose started flows
/// deliver nothing for `monitor.stall` of simulated time stops with
/// `end_reason = "stalled"` (see [`watchdog`]).
pub fn run(sc: Scenario, progress: impl FnMut(&Progress) -> bool) -> RunOutput {
    run_with(sc, &RunOptions::default(), progress).expect("a run without capture cannot fail")
}

/// Each job of `sc` run alone on the same fabric, seed and placement
/// ([`Scenario::alone`]), in file order: its `time_ns` there (None when it
/// did not complete), for the slowdowns of jobs.csv
/// ([`output::jobs::set_alone`]). The runs keep no monitor files; `opts`
/// gives their threads and limits (not their capture or streaming).
pub fn run_jobs_alone(sc: &Scenario, opts: &RunOptions) -> Result<Vec<Option<u64>>, String> {
    let opts = RunOptions { capture: None, stream_dir: None, stream_parquet: false, ..opts.clone() };
    (0..sc.jobs.len())
        .map(|j| {
            let mut alone = sc.alone(j);
            alone.monitor.links = false;
            alone.monitor.cc = false;
            let out = run_with(alone, &opts, |_| true)?;
            Ok(out.tables.jobs.and_then(|t| t.time_ps[j]))
        })
        .collect()
}

/// [`run`] with options. Fails only when the capture or the streamed files
/// cannot be opened or written (a message naming the problem).
pub fn run_with(sc: Scenario, opts: &RunOptions, mut progress: impl FnMut(&Progress) -> bool) -> Result<RunOutput, String> {
    let started = std::time::Instant::now();
    if sc.engine.fidelity == scenario::config::Fidelity::Flow {
        return run_flow(sc, opts, started, progress);
    }
    // Each partition holds a whole copy of the run's state: no more of them
    // than the memory budget holds.
    let (parts, capped) = partitions_within_memory(&sc, opts.partitions.max(opts.threads));
    // The partitions' worlds are built side by side when the run will
    // likely be cut (a refusal of the scenario, or a capture of a run with
    // link failures, keeps it on one thread; a fabric that does not cut is
    // found only later).
    use engine::parallel::Split;
    let one_thread = Split::scenario_refusal(&sc).is_some() || (opts.capture.is_some() && Split::capture_refusal(&sc).is_some());
    let (mut w, others) = if parts > 1 && !one_thread {
        engine::parallel::build_worlds(sc, parts, opts.threads.max(1))
    } else {
        (World::new(sc), Vec::new())
    };
    if let Some((path, filter)) = &opts.capture {
        let links = (0..w.ports().len())
            .map(|p| {
                let port = &w.ports()[p];
                let (from_node, to_node) = (port.node(), w.ports()[port.peer()].node());
                monitor::capture::LinkEnds { from_node, to_node, from: w.node_name(from_node).into(), to: w.node_name(to_node).into() }
            })
            .collect();
        let c = monitor::capture::Capture::open(path, filter, links, w.flow_store().len(), w.scenario().signals.csig.as_ref())?;
        w.observers_mut().attach_capture(c);
    }
    let mut watchdog = watchdog::Watchdog::new(&w, w.scenario().monitor.stall.0);
    let mut guard = watchdog::Guard::new(opts.min_progress_ps, w.now(), w.stats());
    let mut threads = output::Threads { refused: capped, ..output::Threads::ONE };
    if parts > 1 {
        w = match engine::parallel::Parallel::with_worlds(w, others, parts as u32, opts.threads.max(1)) {
            Ok(mut p) => {
                threads.partitions = parts as u32;
                let streamer = stream_writer(opts, p.world())?.map(|(s, st)| {
                    p.stream_to(s);
                    st
                });
                let (w, reason, stats) = run_parallel(p, &mut watchdog, &mut guard, &mut progress);
                threads.scheduler = Some(stats);
                return finish_run(w, started, reason, watchdog, guard, threads, streamer, opts.stream_parquet);
            }
            Err(refused) => {
                let (back, why) = *refused;
                threads.refused = Some(why);
                back
            }
        };
    }
    let streamer = stream_writer(opts, &w)?.map(|(s, st)| {
        w.observers_mut().stream_to(s);
        st
    });
    let reason = loop {
        let deadline = watchdog.deadline();
        // `seen`: the time up to which every event has run.
        let (state, seen) = match w.run_to(CHUNK_EVENTS, deadline) {
            // Stopped at the watchdog's deadline, not the scenario's stop:
            // nothing happens until after the deadline, though the clock
            // stays at the last event (the end of a run is its last event,
            // not the last look at it).
            sim::RunState::Stopped if w.stop_ps().is_none_or(|s| w.now() < s) => (sim::RunState::Paused, deadline.unwrap_or(0).max(w.now())),
            state => (state, w.now()),
        };
        match state {
            sim::RunState::Idle => break "completed",
            sim::RunState::Stopped => break "stop_time",
            sim::RunState::Paused => {
                if watchdog.check_at(&w, seen) {
                    // A stalled run ends where it was found stalled.
                    w.advance_to(seen);
                    break "stalled";
                }
                if w.observers().sink_stopped() {
                    break "output_limit";
                }
                if guard.check(w.now(), w.stats()) {
                    break "too_slow";
                }
                let p = Progress {
                    sim_time_ps: w.now(),
                    stop_ps: w.stop_ps(),
                    events: w.events(),
                    flows_completed: w.stats().flows_completed,
                    flows_total: w.flow_store().len(),
                };
                if !progress(&p) {
                    break "interrupted";
                }
            }
        }
    };
    finish_run(w, started, reason, watchdog, guard, threads, streamer, opts.stream_parquet)
}

/// The partitions a run asked for `asked` takes: as many as the memory
/// budget holds copies of the run's state (each partition builds a whole
/// world), at least one; with the reason when fewer.
fn partitions_within_memory(sc: &Scenario, asked: usize) -> (usize, Option<String>) {
    let copies = sc.max_memory / sc.memory_estimate.max(1);
    if asked <= 1 || copies >= asked as u64 {
        return (asked, None);
    }
    let fit = copies.max(1) as usize;
    let why = format!(
        "each partition builds a whole copy of the run's state, about {}, and the memory budget of {} (--max-memory) holds {fit}",
        budget::fmt_bytes(sc.memory_estimate),
        budget::fmt_bytes(sc.max_memory)
    );
    (fit, Some(why))
}

/// [`run_with`] at flow level ([`flowsim`]): on one thread whatever
/// `threads` asks (the output says so), no capture (there are no packets).
fn run_flow(sc: Scenario, opts: &RunOptions, started: std::time::Instant, mut progress: impl FnMut(&Progress) -> bool) -> Result<RunOutput, String> {
    if opts.capture.is_some() {
        return Err("a packet capture needs packets: engine.fidelity = \"flow\" has none (use \"packet\")".into());
    }
    let mut w = World::new(sc);
    let streamer = stream_writer(opts, &w)?.map(|(s, st)| {
        w.observers_mut().stream_to(s);
        st
    });
    let reason = flowsim::run(&mut w, &mut progress);
    let watchdog = watchdog::Watchdog::new(&w, 0);
    let guard = watchdog::Guard::new(0, w.now(), w.stats());
    let mut threads = output::Threads::ONE;
    if opts.threads > 1 || opts.partitions > 1 {
        threads.refused = Some("a flow-level run (engine.fidelity = \"flow\") runs on one thread".into());
    }
    finish_run(w, started, reason, watchdog, guard, threads, streamer, opts.stream_parquet)
}

/// A stream writer and what the output says of its files.
type StreamedSink = (Box<dyn monitor::RowSink>, output::Streamed);

/// The writer of the monitor files `opts` streams (`stream_dir`) for the
/// world `w`, and what the output will say of them; None without a
/// stream directory.
fn stream_writer(opts: &RunOptions, w: &World) -> Result<Option<StreamedSink>, String> {
    let Some(dir) = &opts.stream_dir else { return Ok(None) };
    let s = output::StreamWriter::create(dir, w, opts.stream_parquet, opts.max_output.unwrap_or(u64::MAX)).map_err(|e| e.to_string())?;
    let files = s.files();
    Ok(Some((Box::new(s), output::Streamed { dir: dir.clone(), files })))
}

/// The end of a run, on one thread or several: brings the watchdog's last
/// progress up to the end, closes the monitors, the capture and the
/// streamed files, and collects the outputs (with a stream directory,
/// writing flows.csv and with `parquet` its twin there).
#[allow(clippy::too_many_arguments)]
fn finish_run(
    mut w: World,
    started: std::time::Instant,
    mut reason: &str,
    mut watchdog: watchdog::Watchdog,
    guard: watchdog::Guard,
    threads: output::Threads,
    streamer: Option<output::Streamed>,
    parquet: bool,
) -> Result<RunOutput, String> {
    if reason != "stalled" {
        // Bring the last progress up to the end of the run.
        watchdog.check(&w);
    }
    w.finish();
    if let Some(c) = w.observers_mut().take_capture() {
        c.finish()?;
    }
    let mut limit = None;
    if let (Some(mut sink), Some(st)) = (w.observers_mut().take_sink(), &streamer) {
        sink.close().map_err(|e| format!("cannot write {}: {e}", st.dir.display()))?;
        // A parallel run ends at its end; its sink stopped taking rows earlier.
        if sink.stopped() {
            reason = "output_limit";
            limit = Some(output_limit(&*sink, w.now()));
        }
    }
    if reason == "too_slow" {
        limit = Some(guard.diagnosis(w.now(), w.stats()));
    }
    let wall = started.elapsed().as_secs_f64();
    // A run that streams its monitor files streams flows.csv too, at the end.
    let dir = streamer.as_ref().map(|st| st.dir.display().to_string()).unwrap_or_default();
    let mut out = output::collect_to(&w, wall, reason, watchdog.mark(), streamer.map(|st| (st, parquet))).map_err(|e| format!("cannot write {dir}: {e}"))?;
    out.threads = threads;
    out.limit = limit;
    Ok(out)
}

/// What passed the output budget: the largest monitor file names its key.
fn output_limit(sink: &dyn monitor::RowSink, now: u64) -> output::Limit {
    let files = sink.written();
    let total: u64 = files.iter().map(|f| f.1).sum();
    let (largest, _) = files.iter().copied().max_by_key(|f| f.1).unwrap_or(("links.csv", 0));
    let key = if largest == "cc.csv" { "monitor.cc" } else { "monitor.window" };
    let sizes: Vec<String> = files.iter().map(|(n, b)| format!("{n} {}", budget::fmt_bytes(*b))).collect();
    output::Limit {
        key: Some(key.into()),
        message: format!(
            "the monitor files passed the output budget of {} (--max-output; by default at most 90% of the free space where --out goes) at {:.3} us of simulated time: {} in all ({}); use a coarser monitor.window, monitor.idle_rows = false, or fewer monitors, or raise --max-output",
            budget::fmt_bytes(sink.budget()),
            now as f64 / 1e6,
            budget::fmt_bytes(total),
            sizes.join(", ")
        ),
    }
}

/// Simulated time the parallel mode runs between two looks at progress,
/// at first; it then doubles or halves to keep about [`CHUNK_EVENTS`]
/// events between them.
const FIRST_STRETCH_PS: u64 = 10_000_000;

/// [`run_with`]'s loop on partitions; answers the joined world and why the
/// run ended. The watchdog and the progress callback look between
/// stretches of simulated time instead of every [`CHUNK_EVENTS`] events: a
/// run that stalls may be called stalled at another time than on one
/// thread (every other output is the same).
fn run_parallel(
    mut p: engine::parallel::Parallel,
    watchdog: &mut watchdog::Watchdog,
    guard: &mut watchdog::Guard,
    progress: &mut impl FnMut(&Progress) -> bool,
) -> (World, &'static str, sim::parallel::ParallelStats) {
    let flows_total = p.flows_total();
    let mut stretch = FIRST_STRETCH_PS;
    let mut seen = 0;
    let reason = loop {
        let events = p.events();
        let next = p.now().saturating_add(stretch);
        let until = watchdog.deadline().map_or(next, |d| d.min(next));
        match p.run_to(Some(until)) {
            sim::RunState::Idle => break "completed",
            sim::RunState::Stopped if p.at_stop() => break "stop_time",
            _ => {}
        }
        let s = p.stats();
        // Every event up to `until` has run (the clock is the last one's):
        // the watchdog looks at `until`, or it would wait for a deadline
        // that no event reaches.
        seen = until.max(p.now());
        if watchdog.check_counts(seen, &s, || p.first_unfinished_start()) {
            break "stalled";
        }
        if guard.check(p.now(), &s) {
            break "too_slow";
        }
        // Streamed monitor rows go out between stretches.
        p.flush_monitors();
        let done = p.events() - events;
        if done < CHUNK_EVENTS / 2 {
            stretch = stretch.saturating_mul(2);
        } else if done > CHUNK_EVENTS * 2 {
            stretch = (stretch / 2).max(sim::queue::BLOCK_PS);
        }
        let pr = Progress { sim_time_ps: p.now(), stop_ps: p.stop_ps(), events: p.events(), flows_completed: s.flows_completed, flows_total };
        if !progress(&pr) {
            break "interrupted";
        }
    };
    let stats = p.sched_stats();
    let mut w = p.into_world();
    if reason == "stalled" {
        // As on one thread: a stalled run ends where it was found stalled.
        w.advance_to(seen);
    }
    (w, reason, stats)
}
