//! Inputs that once took all the memory, the disk or the time: each must end
//! with exit status 2 and a message naming its key (or run, bounded), under
//! 2 GB of address space and within 10 seconds (docs/robustness.md).

#![cfg(target_os = "linux")]

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::TmpPath;

const MEMORY: u64 = 2_000_000_000;
const TIME: Duration = Duration::from_secs(10);

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../csigsim/tests/fuzz_corpus/scenario").join(name)
}

fn tmp(name: &str) -> TmpPath {
    TmpPath::new(&format!("resources-{name}"))
}

/// What a bounded command did.
struct Ended {
    code: i32,
    stderr: String,
    took: Duration,
}

/// Runs `csigsim ARGS` with at most [`MEMORY`] bytes of address space,
/// killed after [`TIME`] (a failure).
fn bounded(args: &[&str]) -> Ended {
    let mut c = Command::new(env!("CARGO_BIN_EXE_csigsim"));
    c.args(args).stdout(Stdio::null()).stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe and touches only the child.
    unsafe {
        c.pre_exec(|| {
            let r = libc::rlimit { rlim_cur: MEMORY, rlim_max: MEMORY };
            if libc::setrlimit(libc::RLIMIT_AS, &r) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let started = Instant::now();
    let mut child = c.spawn().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut s).unwrap();
        s
    });
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let stderr = reader.join().unwrap();
            return Ended { code: status.code().unwrap_or(-1), stderr, took: started.elapsed() };
        }
        if started.elapsed() > TIME {
            let _ = child.kill();
            let _ = child.wait();
            panic!("csigsim {args:?} ran past {TIME:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Exit status 2, a message naming `key`, within the limits.
fn refused(args: &[&str], key: &str) -> String {
    let e = bounded(args);
    assert_eq!(e.code, 2, "csigsim {args:?}: {}", e.stderr);
    assert!(e.stderr.contains(&format!("key `{key}`")), "csigsim {args:?} does not name {key}: {}", e.stderr);
    assert!(e.took < TIME);
    e.stderr
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_background_at_one_bit_per_second_validates_at_once() {
    let e = bounded(&["validate", path(&corpus("rpc_background_one_bps.toml"))]);
    assert_eq!(e.code, 0, "{}", e.stderr);
    assert!(e.took < Duration::from_secs(5));
}

#[test]
fn a_deep_override_key_is_refused() {
    let key = vec!["a"; 30_000].join(".") + "=1";
    let scenario = corpus("mcc_huge_window.toml");
    let e = bounded(&["validate", path(&scenario), "--set", &key]);
    assert_eq!(e.code, 2, "{}", e.stderr);
    assert!(e.stderr.contains("30000 parts") && e.stderr.len() < 400, "{}", e.stderr);
}

#[test]
fn an_all_to_all_past_the_flow_budget_is_refused() {
    let m = refused(&["validate", path(&corpus("all_to_all_ten_million_flows.toml"))], "workload[0].hosts");
    assert!(m.contains("11940480 flows"), "{m}");
}

#[test]
fn a_fabric_of_a_million_hosts_is_refused_by_memory() {
    let dir = tmp("million");
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("million.toml");
    std::fs::write(&f, "name = \"a million hosts\"\n[topology]\nkind = \"fat_tree\"\nk = 158\n[[flow]]\nsrc = \"h0\"\ndst = \"h1\"\nsize = \"8KB\"\n").unwrap();
    let m = refused(&["validate", path(&f)], "topology");
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(m.contains("986078 hosts") && m.contains("--max-memory"), "{m}");
}

#[test]
fn the_packet_bitmaps_of_one_huge_flow_count() {
    let m = refused(&["validate", path(&corpus("selective_flow_of_17_TB.toml"))], "flow");
    assert!(m.contains("1.4 GiB of them packet bitmaps"), "{m}");
}

#[test]
fn packets_a_huge_buffer_can_hold_count() {
    let m = refused(&["validate", path(&corpus("mcc_huge_window.toml")), "--set", "switch.buffer=\"1000000GB\""], "switch.buffer");
    assert!(m.contains("whose buffers hold"), "{m}");
}

#[test]
fn an_all_reduce_of_100_gb_is_refused() {
    refused(&["validate", path(&corpus("allreduce_100GB.toml"))], "workload[0].size");
}

#[test]
fn an_mcc_window_of_1e300_bdps_runs_in_little_memory() {
    let out = tmp("mcc");
    let e = bounded(&["run", path(&corpus("mcc_huge_window.toml")), "--out", path(&out), "--quiet"]);
    assert_eq!(e.code, 0, "{}", e.stderr);
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn times_below_their_floor_are_refused() {
    let m = refused(&["validate", path(&corpus("rto_one_ps.toml"))], "transport.rto");
    assert!(m.contains("at least 1us"), "{m}");
    refused(&["validate", path(&corpus("window_twenty_ps.toml"))], "monitor.window");
    refused(&["validate", path(&corpus("window_twenty_ps.toml")), "--set", "monitor.window=\"1ps\""], "monitor.window");
}

#[test]
fn a_fine_window_past_the_output_budget_is_refused_before_the_run() {
    let out = tmp("fine");
    let scenario = corpus("window_twenty_ps.toml");
    // 1 MB flows at 100 Gb/s last at least 80 us: 80,000 windows of 96 directed links.
    let m = refused(&["run", path(&scenario), "--out", path(&out), "--set", "monitor.window=\"1ns\"", "--max-output", "100MB"], "monitor.window");
    assert!(m.contains("7680096 rows"), "{m}");
    assert!(m.contains("--max-output"), "{m}");
    assert!(!out.exists(), "a refused run left {}", out.display());
}

#[test]
fn a_run_past_the_output_budget_stops_and_leaves_nothing() {
    let out = tmp("slow-link");
    let m = refused(
        &["run", path(&corpus("link_one_bps_no_stall.toml")), "--out", path(&out), "--max-output", "8MB", "--set", "monitor.window=\"1us\""],
        "monitor.window",
    );
    assert!(m.contains("output budget") && m.contains("links.csv"), "{m}");
    assert!(!out.exists(), "a stopped run left {}", out.display());
}

#[test]
fn bad_budget_flags_are_refused() {
    let e = bounded(&["validate", path(&corpus("mcc_huge_window.toml")), "--max-memory", "lots"]);
    assert_eq!(e.code, 2, "{}", e.stderr);
    assert!(e.stderr.contains("--max-memory"), "{}", e.stderr);
    // A budget too small for the scenario names what drives it.
    let m = refused(&["validate", path(&corpus("mcc_huge_window.toml")), "--max-memory", "1MB"], "topology");
    assert!(m.contains("more than the budget of"), "{m}");
}

/// A parallel run takes no more partitions than the memory budget holds
/// copies of the run's state (each partition builds a whole one): the
/// shipped incast (about 74 MiB) asked for 4 threads runs on 2 partitions
/// under 160 MB and on one thread under 100 MB, saying why, with the
/// outputs of one thread.
#[test]
fn a_parallel_run_takes_no_more_partitions_than_the_memory_budget_holds() {
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/incast_fat_tree.toml");
    let dir = tmp("partitions");
    let flows = |out: &Path| std::fs::read_to_string(out.join("flows.csv")).unwrap();
    let run = |name: &str, extra: &[&str]| {
        let out = dir.join(name);
        let mut args = vec!["run", path(&scenario), "--quiet", "--out", path(&out)];
        args.extend_from_slice(extra);
        let e = bounded(&args);
        assert_eq!(e.code, 0, "{}", e.stderr);
        (e.stderr, flows(&out))
    };
    let (_, one) = run("one", &[]);
    let (note, two) = run("two", &["--threads", "4", "--max-memory", "160MB"]);
    assert!(note.contains("ran on 2 partitions") && note.contains("--max-memory"), "{note}");
    assert_eq!(two, one);
    let (note, single) = run("single", &["--threads", "4", "--max-memory", "100MB"]);
    assert!(note.contains("ran on one thread") && note.contains("--max-memory"), "{note}");
    assert_eq!(single, one);
    std::fs::remove_dir_all(&dir).unwrap();
}
