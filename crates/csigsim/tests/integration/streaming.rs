//! Streamed monitor files: the same bytes as the files formatted from the
//! in-memory tables, and rows held in memory bounded whatever the number of
//! windows.

use crate::common::load_with;
use csigsim::monitor::cc::CcRow;
use csigsim::monitor::signals::SignalRow;
use csigsim::monitor::{LinkWindow, RowSink, STREAM_ROWS};
use csigsim::{RunOptions, World};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

fn scenarios() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("csigsim-stream-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `file` with `sets` in memory and streamed; every monitor file must
/// have the same bytes.
fn same_files(file: &str, sets: &[&str]) {
    let text = std::fs::read_to_string(scenarios().join(file)).unwrap();
    let ov: Vec<csigsim::Override> = sets.iter().map(|s| csigsim::Override::parse(s).unwrap()).collect();
    let load = || csigsim::scenario::load_str(&text, file, &scenarios(), &ov, None).unwrap_or_else(|e| panic!("{e}"));
    let mem = csigsim::run(load(), |_| true);
    let dir = tmp(&format!("{file}-{}", sets.len()));
    let opts = RunOptions { stream_dir: Some(dir.clone()), ..Default::default() };
    let st = csigsim::run_with(load(), &opts, |_| true).unwrap();
    let streamed = st.streamed.as_ref().expect("streamed");
    assert!(st.tables.links.is_none() && st.tables.signals.is_none() && st.tables.cc.is_none());
    // flows.csv is written at the end, a row at a time, and not held.
    assert!(st.tables.flows.is_empty() && mem.tables.flows.len() == st.summary.flows_total, "{file}: flows held");
    let timeless = |o: &csigsim::output::RunOutput| {
        let mut v: serde_json::Value = serde_json::from_str(&o.summary_json()).unwrap();
        v["wall_s"] = 0.into();
        v["link_hops_per_s"] = 0.into();
        v
    };
    assert_eq!(timeless(&st), timeless(&mem), "{file}: summary");
    for (name, text) in [("flows.csv", mem.flows_csv()), ("links.csv", mem.links_csv()), ("signals.csv", mem.signals_csv()), ("cc.csv", mem.cc_csv())] {
        assert_eq!(streamed.files.contains(&name), !text.is_empty(), "{file} {sets:?}: {name}");
        if !text.is_empty() {
            let got = std::fs::read_to_string(dir.join(name)).unwrap();
            assert!(got == text, "{file} {sets:?}: {name} differs ({} vs {} bytes)", got.len(), text.len());
        }
    }
    // On two threads the rows go out between stretches of the run, with
    // every partition's monitors gathered: the same bytes again.
    let par_dir = tmp(&format!("{file}-{}-par", sets.len()));
    let opts = RunOptions { stream_dir: Some(par_dir.clone()), threads: 2, ..Default::default() };
    let par = csigsim::run_with(load(), &opts, |_| true).unwrap();
    assert!(par.tables.links.is_none() && par.tables.signals.is_none() && par.tables.cc.is_none());
    if file == "incast_fat_tree.toml" {
        assert_eq!(par.threads.partitions, 2, "a fat tree is cut");
    }
    for (name, text) in [("flows.csv", mem.flows_csv()), ("links.csv", mem.links_csv()), ("signals.csv", mem.signals_csv()), ("cc.csv", mem.cc_csv())] {
        if !text.is_empty() {
            let got = std::fs::read_to_string(par_dir.join(name)).unwrap();
            assert!(got == text, "{file} {sets:?} on two threads ({} partitions): {name} differs ({} vs {} bytes)", par.threads.partitions, got.len(), text.len());
        }
    }
    std::fs::remove_dir_all(&par_dir).unwrap();
    // write_dir elsewhere copies the streamed files.
    let other = tmp(&format!("{file}-copy"));
    st.write_dir(&other).unwrap();
    assert_eq!(std::fs::read_to_string(other.join("links.csv")).unwrap_or_default(), mem.links_csv());
    assert_eq!(std::fs::read_to_string(other.join("flows.csv")).unwrap(), mem.flows_csv());
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&other).unwrap();
}

/// Every shipped scenario with fine windows (so that the rows are handed
/// over many times during the run) and every monitor on, dense and sparse.
#[test]
fn streamed_files_equal_the_in_memory_tables() {
    let mut files: Vec<String> = std::fs::read_dir(scenarios())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    files.sort();
    for f in &files {
        same_files(f, &["stop=\"200us\"", "monitor.window=\"500ns\"", "monitor.cc=true"]);
    }
    same_files("chain_csig_delay.toml", &["monitor.window=\"1us\"", "monitor.cc=true", "monitor.idle_rows=false"]);
    same_files("incast_fat_tree.toml", &["stop=\"300us\"", "monitor.window=\"100ns\"", "switch.mode=\"pfc\"", "monitor.idle_rows=false"]);
}

/// Counts rows and checks their order; shared with the test through atomics.
struct Counting {
    links: Arc<AtomicU64>,
    last: (u64, u32),
}

impl RowSink for Counting {
    fn link_row(&mut self, window: u64, link: u32, _: &LinkWindow) {
        assert!((window, link) > self.last || self.links.load(Ordering::Relaxed) == 0, "rows out of order");
        self.last = (window, link);
        self.links.fetch_add(1, Ordering::Relaxed);
    }
    fn signal_row(&mut self, _: u32, _: &SignalRow) {}
    fn cc_row(&mut self, _: u32, _: &CcRow) {}
    fn close(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A 1 ns window over a run of 1.7 ms: 1.7 million windows and seven
/// million rows of links.csv, of which the streaming run holds a few
/// thousand at a time, while the in-memory run holds every non-idle window
/// (a run of equal windows, such as the inside of a transmission, as one).
#[test]
fn rows_held_stay_bounded_with_a_tiny_window() {
    let text = std::fs::read_to_string(scenarios().join("two_hosts.toml")).unwrap();
    let sets = ["monitor.window=\"1ns\"", "flow.0.size=\"20MB\""];
    let mut w = World::new(load_with(&text, &sets));
    let n = Arc::new(AtomicU64::new(0));
    w.stream_monitors_to(Box::new(Counting { links: n.clone(), last: (0, 0) }));
    w.run(u64::MAX);
    w.finish();
    let windows = w.now() / 1000 + 1;
    let links = w.ports().len() as u64;
    assert_eq!(n.load(Ordering::Relaxed), windows * links, "dense: every link in every window");
    let bound = STREAM_ROWS + w.ports().len() + w.flows().len();
    let peak = w.observers().held_rows_peak();
    assert!(peak <= bound + 8, "held {peak} rows, bound {bound}");
    assert_eq!(w.observers().held_rows(), 0);

    // The same run in memory holds a row per busy window of each link.
    let mut m = World::new(load_with(&text, &sets));
    m.run(u64::MAX);
    m.finish();
    assert!(m.observers().held_rows_peak() > 4 * bound, "in memory: {} rows", m.observers().held_rows_peak());
}

/// Idle stretches cost nothing: a flow that starts after 100 s of nothing,
/// with a 1 us window, holds no row for the idle windows and, without
/// `idle_rows`, writes none.
#[test]
fn idle_windows_cost_no_rows() {
    let text = std::fs::read_to_string(scenarios().join("two_hosts.toml")).unwrap();
    let sets = ["monitor.window=\"1us\"", "flow.0.size=\"100KB\"", "flow.0.start=\"100s\"", "monitor.idle_rows=false"];
    let mut w = World::new(load_with(&text, &sets));
    let n = Arc::new(AtomicU64::new(0));
    w.stream_monitors_to(Box::new(Counting { links: n.clone(), last: (0, 0) }));
    w.run(u64::MAX);
    w.finish();
    assert_eq!(w.stats().flows_completed, 1);
    // The flow takes about 10 us: a few windows on each of the four links.
    let rows = n.load(Ordering::Relaxed);
    assert!(rows > 0 && rows < 100, "{rows} rows");
    // The same run in memory: its table has the same rows, and windows
    // counted to the end of the run. The progress watchdog does not count
    // the idle 100 s against the flow.
    let out = csigsim::run(load_with(&text, &sets), |_| true);
    assert_eq!((out.summary.end_reason.as_str(), out.summary.flows_completed), ("completed", 1));
    let t = out.tables.links.as_ref().unwrap();
    assert_eq!(t.len() as u64, rows);
    assert!(t.windows > 100_000_000);
    assert_eq!(out.links_csv().lines().count() as u64, rows + 1);
}

