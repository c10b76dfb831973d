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

pub mod bench;
pub mod cc;
pub mod de;
pub mod engine;
pub mod hugepages;
pub mod id;
pub mod lb;
pub mod monitor;
pub mod net;
pub mod output;
pub mod repro;
pub mod rng;
pub mod packet;
pub mod scenario;
pub mod signal;
pub mod sim;
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
    /// run needs then does not grow with its simulated time. The output has
    /// no tables for them; [`RunOutput::streamed`] names the files.
    pub stream_dir: Option<std::path::PathBuf>,
}

/// Runs a scenario to completion (or its stop time). `progress` is called
/// every [`CHUNK_EVENTS`] events; returning false stops the run early, and the
/// output then says `end_reason = "interrupted"`. A run whose started flows
/// deliver nothing for `monitor.stall` of simulated time stops with
/// `end_reason = "stalled"` (see [`watchdog`]).
pub fn run(sc: Scenario, progress: impl FnMut(&Progress) -> bool) -> RunOutput {
    run_with(sc, &RunOptions::default(), progress).expect("a run without capture cannot fail")
}

/// [`run`] with options. Fails only when the capture or the streamed files
/// cannot be opened or written (a message naming the problem).
pub fn run_with(sc: Scenario, opts: &RunOptions, mut progress: impl FnMut(&Progress) -> bool) -> Result<RunOutput, String> {
    let started = std::time::Instant::now();
    let mut w = World::new(sc);
    if let Some((path, filter)) = &opts.capture {
        let links = (0..w.ports().len())
            .map(|p| {
                let port = &w.ports()[p];
                let (from_node, to_node) = (port.node(), w.ports()[port.peer()].node());
                monitor::capture::LinkEnds { from_node, to_node, from: w.node_name(from_node).into(), to: w.node_name(to_node).into() }
            })
            .collect();
        let c = monitor::capture::Capture::open(path, filter, links, w.flows().len(), w.scenario().signals.csig.as_ref())?;
        w.observers_mut().attach_capture(c);
    }
    let streamer = match &opts.stream_dir {
        Some(dir) => {
            let s = output::StreamWriter::create(dir, &w).map_err(|e| e.to_string())?;
            let files = s.files();
            w.observers_mut().stream_to(Box::new(s));
            Some(output::Streamed { dir: dir.clone(), files })
        }
        None => None,
    };
    let mut watchdog = watchdog::Watchdog::new(&w, w.scenario().monitor.stall.0);
    let reason = loop {
        let state = match w.run_to(CHUNK_EVENTS, watchdog.deadline()) {
            // Stopped at the watchdog's deadline, not the scenario's stop.
            sim::RunState::Stopped if w.stop_ps().is_none_or(|s| w.now() < s) => sim::RunState::Paused,
            state => state,
        };
        match state {
            sim::RunState::Idle => break "completed",
            sim::RunState::Stopped => break "stop_time",
            sim::RunState::Paused => {
                if watchdog.check(&w) {
                    break "stalled";
                }
                let p = Progress {
                    sim_time_ps: w.now(),
                    stop_ps: w.stop_ps(),
                    events: w.events(),
                    flows_completed: w.stats().flows_completed,
                    flows_total: w.flows().len(),
                };
                if !progress(&p) {
                    break "interrupted";
                }
            }
        }
    };
    if reason != "stalled" {
        // Bring the last progress up to the end of the run.
        watchdog.check(&w);
    }
    w.finish();
    if let Some(c) = w.observers_mut().take_capture() {
        c.finish()?;
    }
    if let (Some(mut sink), Some(st)) = (w.observers_mut().take_sink(), &streamer) {
        sink.close().map_err(|e| format!("cannot write {}: {e}", st.dir.display()))?;
    }
    let wall = started.elapsed().as_secs_f64();
    let mut out = output::collect_watched(&w, wall, reason, watchdog.mark());
    out.streamed = streamer;
    Ok(out)
}
