//! The command line as a user runs it: exit status, messages, run directory.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::TmpPath;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_csigsim"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tmp(name: &str) -> TmpPath {
    TmpPath::new(&format!("cli-test-{name}"))
}

#[test]
fn run_writes_the_run_directory_and_prints_a_summary() {
    let out = tmp("run");
    let r = bin().arg("run").arg(repo().join("scenarios/two_hosts.toml")).arg("--out").arg(&out).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert!(stdout.contains("flows completed") && stdout.contains("1 of 1"), "{stdout}");
    for f in ["summary.json", "flows.csv", "links.csv", "scenario.toml"] {
        assert!(out.join(f).exists(), "{f} missing");
    }
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    for k in [
        "name", "seed", "version", "sim_time_ns", "wall_s", "events", "link_hops", "packets_delivered", "packets_dropped", "flows_total",
        "flows_completed", "invariants_ok",
    ] {
        assert!(summary.get(k).is_some(), "summary lacks {k}");
    }
    assert_eq!(summary["invariants_ok"], true);
    let flows = std::fs::read_to_string(out.join("flows.csv")).unwrap();
    assert!(flows.starts_with("flow_id,name,src,dst,size_bytes,start_ns,finish_ns,fct_ns"));
    let links = std::fs::read_to_string(out.join("links.csv")).unwrap();
    assert!(links.starts_with("time_ns,from,to,"));
    assert!(links.lines().next().unwrap().contains("tx_bytes,utilization,max_queue_bytes,drops,ecn_marks"));
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn set_and_seed_override_the_scenario() {
    let out = tmp("set");
    let r = bin()
        .arg("run")
        .arg(repo().join("scenarios/two_hosts.toml"))
        .args(["--quiet", "--seed", "9", "--set", "transport.mtu=1000", "--set", "name=\"renamed\"", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(r.stdout.is_empty(), "--quiet prints nothing");
    let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["seed"], 9);
    assert_eq!(s["name"], "renamed");
    assert_eq!(s["packets_delivered"], 10_000);
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn same_seed_twice_gives_identical_files() {
    let (a, b) = (tmp("det-a"), tmp("det-b"));
    for d in [&a, &b] {
        let r = bin().arg("run").arg(repo().join("scenarios/incast_fat_tree.toml")).arg("--quiet").arg("--out").arg(d).output().unwrap();
        assert!(r.status.success());
    }
    for f in ["flows.csv", "links.csv", "scenario.toml"] {
        assert_eq!(std::fs::read(a.join(f)).unwrap(), std::fs::read(b.join(f)).unwrap(), "{f} differs");
    }
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&b);
}

/// `--threads 2` and `--threads auto` (the default, whatever it decides on
/// this machine) write the same files as one thread (the summary but for
/// its wall-clock figures); a scenario that cannot be cut runs on one
/// thread, says why when a count was asked for, and writes its files as
/// well.
#[test]
fn threads_write_the_same_files_or_say_why_not() {
    let (a, b, auto, default) = (tmp("thr-a"), tmp("thr-b"), tmp("thr-auto"), tmp("thr-default"));
    for (d, threads) in [(&a, Some("1")), (&b, Some("2")), (&auto, Some("auto")), (&default, None)] {
        let mut cmd = bin();
        cmd.arg("run").arg(repo().join("scenarios/leaf_spine_spray_trim.toml")).arg("--quiet");
        if let Some(t) = threads {
            cmd.args(["--threads", t]);
        }
        let r = cmd.arg("--out").arg(d).output().unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        assert!(r.stderr.is_empty(), "{}", String::from_utf8_lossy(&r.stderr));
    }
    for f in ["flows.csv", "links.csv", "scenario.toml"] {
        for d in [&b, &auto, &default] {
            assert_eq!(std::fs::read(a.join(f)).unwrap(), std::fs::read(d.join(f)).unwrap(), "{f} differs in {}", d.display());
        }
    }
    let neutral = |d: &Path| {
        let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.join("summary.json")).unwrap()).unwrap();
        v["wall_s"] = 0.into();
        v["link_hops_per_s"] = 0.into();
        v
    };
    for d in [&b, &auto, &default] {
        assert_eq!(neutral(&a), neutral(d));
    }
    // A pipeline's stages sit in different pods: the next microbatch waits
    // for a flow that ends across the cut. A ring's steps do not.
    let c = tmp("thr-c");
    let r = bin().arg("run").arg(repo().join("scenarios/pipeline_parallel.toml")).args(["--quiet", "--threads", "2", "--out"]).arg(&c).output().unwrap();
    assert!(r.status.success());
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("--threads 2: ran on one thread") && err.contains("waits for flow") && err.contains("another partition"), "{err}");
    assert!(c.join("flows.csv").exists());
    let r = bin().arg("run").arg(repo().join("scenarios/ring_allreduce.toml")).args(["--quiet", "--threads", "2", "--out"]).arg(&c).output().unwrap();
    assert!(r.status.success() && r.stderr.is_empty(), "{}", String::from_utf8_lossy(&r.stderr));
    // auto never notes a fall-back to one thread: it asked for no count.
    let r = bin().arg("run").arg(repo().join("scenarios/pipeline_parallel.toml")).args(["--quiet", "--threads", "auto", "--out"]).arg(&c).output().unwrap();
    assert!(r.status.success() && r.stderr.is_empty(), "{}", String::from_utf8_lossy(&r.stderr));
    refused_run("threads-0", &["--threads", "0"], &["--threads"]);
    refused_run("threads-65", &["--threads", "65"], &["--threads", "auto"]);
    refused_run("threads-word", &["--threads", "many"], &["--threads", "auto"]);
    for d in [&a, &b, &c, &auto, &default] {
        let _ = std::fs::remove_dir_all(d);
    }
}

fn bad(name: &str, text: &str, needles: &[&str]) {
    let dir = tmp(name);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.toml");
    std::fs::write(&path, text).unwrap();
    let out = dir.join("out");
    let r = bin().arg("run").arg(&path).arg("--out").arg(&out).output().unwrap();
    assert_eq!(r.status.code(), Some(2), "{name}");
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("bad.toml:"), "{name}: {err}");
    for n in needles {
        assert!(err.contains(n), "{name}: {err} lacks {n}");
    }
    assert!(!out.exists(), "{name}: bad input must not create the run directory");
    let v = bin().arg("validate").arg(&path).output().unwrap();
    assert_eq!(v.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

const GOOD: &str = "[topology]\nkind = \"custom\"\nhosts = [\"h0\", \"h1\"]\nswitches = [\"s0\"]\nlinks = [\n  { a = \"h0\", b = \"s0\", rate = \"100Gbps\", delay = \"1us\" },\n  { a = \"s0\", b = \"h1\", rate = \"100Gbps\", delay = \"1us\" },\n]\n[[flow]]\nsrc = \"h0\"\ndst = \"h1\"\nsize = \"1MB\"\n";

#[test]
fn malformed_input_exits_2_and_names_key_and_line() {
    bad("unit", &GOOD.replace("size = \"1MB\"", "size = \"1 MBB\""), &["flow[0].size", ":12:", "unit"]);
    bad("key", &GOOD.replace("[[flow]]\n", "[[flow]]\nfoo = 1\n"), &["flow[0].foo", ":10:", "unknown field"]);
    bad("host", &GOOD.replace("dst = \"h1\"", "dst = \"hx\""), &["flow[0].dst", ":11:", "unknown host"]);
    bad("nowhere", &GOOD.replace("b = \"h1\"", "b = \"sX\""), &["topology.links[1].b", ":7:"]);
    bad("negative", &GOOD.replace("size = \"1MB\"", "size = -1"), &["flow[0].size", ":12:", "negative"]);
    bad("disconnected", &GOOD.replace("{ a = \"s0\", b = \"h1\"", "{ a = \"h1\", b = \"s1\"").replace("[\"s0\"]", "[\"s0\", \"s1\"]"), &["disconnected"]);
    bad("syntax", &GOOD.replace("kind = \"custom\"", "kind = \"custom"), &[":2:", "syntax"]);
}

#[test]
fn missing_file_and_bad_set_exit_2() {
    let r = bin().args(["run", "does-not-exist.toml"]).output().unwrap();
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("does-not-exist.toml"));
    let r = bin().arg("validate").arg(repo().join("scenarios/two_hosts.toml")).args(["--set", "transport.cc=\"warp\""]).output().unwrap();
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("transport.cc"), "{}", String::from_utf8_lossy(&r.stderr));
}

/// Output into a pipe its reader has closed (`csigsim list | head -0`)
/// ends the process by the signal, as other tools end, not as a panic.
#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_the_process_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let mut child = bin().arg("list").stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.signal(), Some(13), "ended by SIGPIPE: {:?}", out.status);
}

#[test]
fn list_names_every_kind() {
    let r = bin().arg("list").current_dir(repo()).output().unwrap();
    assert!(r.status.success());
    let s = String::from_utf8_lossy(&r.stdout);
    for n in ["fat_tree", "leaf_spine", "clos", "chain", "custom", "dctcp", "ecmp", "spray", "adaptive", "deterministic", "round_robin", "permutation", "incast", "all_to_all", "two_hosts.toml", "csig", "ecp", "stamp", "int"] {
        assert!(s.contains(n), "list lacks {n}");
    }
}

/// tshark, with the shipped Lua dissector, reads back the CSIG tags csigsim
/// wrote for the captured packets (skipped when tshark is not installed).
#[test]
fn tshark_dissects_the_capture_as_recorded() {
    if Command::new("tshark").arg("-v").output().is_err() {
        eprintln!("tshark not found: skipped");
        return;
    }
    let dir = tmp("pcap");
    std::fs::create_dir_all(&dir).unwrap();
    let pcap = dir.join("c.pcap");
    let r = bin()
        .arg("run")
        .arg(repo().join("scenarios/chain_csig_delay.toml"))
        .args(["--quiet", "--pcap-flow", "0", "--pcap-link", "s1->s2", "--pcap-end", "200us", "--out"])
        .arg(dir.join("run"))
        .arg("--pcap")
        .arg(&pcap)
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let index = std::fs::read_to_string(dir.join("c.pcap.csv")).unwrap();
    let recorded: Vec<Vec<String>> = index
        .lines()
        .skip(1)
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            // csig_type, csig_value, csig_locator, csig_d, psn
            vec![c[9].into(), c[10].into(), c[11].into(), if c[12] == "1" { "True".into() } else { "False".into() }, c[6].into()]
        })
        .collect();
    assert!(recorded.len() > 20, "captured {} frames", recorded.len());
    let lua = repo().join("tools/wireshark/csig.lua");
    let t = Command::new("tshark")
        .arg("-X")
        .arg(format!("lua_script:{}", lua.display()))
        .arg("-r")
        .arg(&pcap)
        .args(["-T", "fields", "-e", "csig.type", "-e", "csig.value", "-e", "csig.locator", "-e", "csig.d", "-e", "infiniband.bth.psn"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&t.stdout);
    let dissected: Vec<Vec<String>> = out.lines().map(|l| l.split('\t').map(|s| s.to_string()).collect()).collect();
    assert_eq!(dissected.len(), recorded.len());
    for (i, (d, r)) in dissected.iter().zip(&recorded).enumerate() {
        let d_bit = match d[3].as_str() {
            "1" | "True" => "True",
            _ => "False",
        };
        assert_eq!((&d[0], &d[1], &d[2], d_bit, &d[4]), (&r[0], &r[1], &r[2], r[3].as_str(), &r[4]), "frame {i}");
    }
    // The tags name the deeper hop: at least one frame carries a written locator.
    assert!(recorded.iter().any(|r| r[2] != "0"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The files the CLI writes are the library's tables formatted: the same
/// scenario run through the library gives the same CSV bytes.
#[test]
fn run_directory_holds_the_library_tables() {
    let out = tmp("tables");
    let path = repo().join("scenarios/chain_csig_delay.toml");
    let r = bin().arg("run").arg(&path).args(["--quiet", "--set", "monitor.cc=true", "--out"]).arg(&out).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let ov = [csigsim::Override::parse("monitor.cc=true").unwrap()];
    let lib = csigsim::run(csigsim::scenario::load_file(&path, &ov, None).unwrap(), |_| true);
    for (file, text) in [("flows.csv", lib.flows_csv()), ("links.csv", lib.links_csv()), ("signals.csv", lib.signals_csv()), ("cc.csv", lib.cc_csv())] {
        assert!(!text.is_empty(), "{file}");
        assert_eq!(std::fs::read_to_string(out.join(file)).unwrap(), text, "{file}");
    }
    // And the values are the tables': the main flow's FCT, to the picosecond.
    let flows = std::fs::read_to_string(out.join("flows.csv")).unwrap();
    let main: Vec<&str> = flows.lines().nth(1).unwrap().split(',').collect();
    let t = &lib.tables.flows;
    assert_eq!(main[7], csigsim::output::fmt_ns(t.fct_ps[0].unwrap()));
    assert_eq!(main[16], t.delivered_bytes[0].to_string());
    std::fs::remove_dir_all(&out).unwrap();
}

/// Runs `csigsim run two_hosts.toml --out DIR` with `args`; it must exit 2
/// before the run, naming each of `needles`, and create no run directory.
fn refused_run(name: &str, args: &[&str], needles: &[&str]) -> String {
    let out = tmp(name);
    let r = bin().arg("run").arg(repo().join("scenarios/two_hosts.toml")).args(args).arg("--out").arg(&out).output().unwrap();
    let err = String::from_utf8_lossy(&r.stderr).into_owned();
    assert_eq!(r.status.code(), Some(2), "{name}: {err}");
    for n in needles {
        assert!(err.contains(n), "{name}: {err} lacks {n}");
    }
    assert!(!out.exists(), "{name}: bad input must not create the run directory");
    assert!(!err.contains("panicked"), "{name}: {err}");
    err
}

#[test]
fn out_of_range_input_exits_2_before_running() {
    refused_run("start", &["--set", "flow.0.start=\"18446744073709551615ps\""], &["flow[0].start", "two_hosts.toml (with --set flow[0].start)", "largest time"]);
    refused_run("size", &["--set", "flow.0.size=\"18446744073709551615B\""], &["flow[0].size", "packets"]);
    refused_run("header", &["--set", "transport.header=4294967295"], &["transport.header"]);
    refused_run("mtu", &["--set", "transport.mtu=4294967295"], &["transport.mtu"]);
    refused_run("int", &["--set", "signals.int.per_hop=4294967295"], &["signals.int.per_hop"]);
    refused_run("buffer", &["--set", "switch.buffer=\"1KB\"", "--set", "switch.reserved=\"0B\""], &["switch.buffer", "one data packet"]);
    refused_run("ctrl", &["--set", "switch.ctrl_buffer=\"0B\""], &["switch.ctrl_buffer", "ACK"]);
    refused_run("headroom", &["--set", "switch.mode=\"pfc\"", "--set", "switch.pfc.headroom=\"1KB\""], &["switch.pfc.headroom"]);
}

#[test]
fn flag_errors_exit_2_naming_the_flag() {
    refused_run("pcap-flow", &["--pcap-flow", "0"], &["--pcap-flow", "--pcap FILE"]);
    refused_run("pcap-end", &["--pcap-end", "1us"], &["--pcap-end"]);
    refused_run("snaplen", &["--snaplen", "100"], &["--snaplen"]);
    let dir = tmp("pcap-order-dir");
    std::fs::create_dir_all(&dir).unwrap();
    refused_run("pcap-order", &["--pcap", dir.join("c.pcap").to_str().unwrap(), "--pcap-start", "200us", "--pcap-end", "100us"], &["--pcap-end", "before it starts"]);
    assert!(!dir.join("c.pcap").exists());
    std::fs::remove_dir_all(&dir).unwrap();
    let r = bin().args(["bench", "--repeat", "0"]).output().unwrap();
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("--repeat"));
}

/// `bench --against` runs each case alternately under both binaries and
/// reports paired ratios; a binary that is not there is a flag error.
#[test]
fn bench_against_another_binary_pairs_the_runs() {
    let r = bin().args(["bench", "--cases", "fat_tree_128", "--against", "/no/such/csigsim"]).output().unwrap();
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("--against") && err.contains("/no/such/csigsim"), "{err}");
    assert!(r.stdout.is_empty(), "nothing printed before the error");
    // Against itself: the same simulation, run by run.
    let me = env!("CARGO_BIN_EXE_csigsim");
    let r = bin().args(["bench", "--cases", "fat_tree_128", "--against", me, "--repeat", "2", "--json"]).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(v["case"], "fat_tree_128");
    assert_eq!(v["pairs"], 2);
    assert_eq!(v["same_run"], true);
    assert_eq!(v["this"].as_array().unwrap().len(), 2);
    assert_eq!(v["other"].as_array().unwrap().len(), 2);
    let (this, other) = (&v["this"][0], &v["other"][0]);
    assert_eq!(this["events"], other["events"]);
    let ratio = |k: &str, i: usize| v["this"][i][k].as_f64().unwrap() / v["other"][i][k].as_f64().unwrap();
    let median = (ratio("cpu_s", 0) + ratio("cpu_s", 1)) / 2.0;
    assert!((v["cpu_ratio"]["median"].as_f64().unwrap() - median).abs() < 1e-12);
    // Two pairs give no 95% interval.
    assert!(v["cpu_ratio"]["low"].is_null() && v["wall_ratio"]["high"].is_null());
}

/// A bench run cut into partitions reports what the scheduler did
/// (windows, crossings, the serial merge's wall time); a sequential one
/// reports none of it, and both the same events.
#[test]
fn bench_reports_the_schedulers_figures_of_a_partitioned_run() {
    let child = |threads: &str| {
        let r = bin().args(["bench", "--child", "fat_tree_128", "--threads", threads, "--partitions", threads]).output().unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        serde_json::from_slice::<serde_json::Value>(&r.stdout).unwrap()
    };
    let (one, two) = (child("1"), child("2"));
    assert_eq!(one["partitions"], 1);
    assert!(one["windows"].is_null() && one["crossings"].is_null() && one["merge_s"].is_null(), "{one}");
    assert_eq!(two["partitions"], 2);
    assert_eq!(two["events"], one["events"]);
    // A permutation on a fat tree cut in two sends packets across the cut
    // all along its run, window after window.
    assert!(two["windows"].as_u64().unwrap() > 10, "{two}");
    assert!(two["crossings"].as_u64().unwrap() > 1000, "{two}");
    let merge = two["merge_s"].as_f64().unwrap();
    assert!(merge >= 0.0 && merge < two["wall_s"].as_f64().unwrap(), "{two}");
    let r = bin().args(["bench", "--cases", "fat_tree_128", "--threads", "2"]).output().unwrap();
    assert!(r.status.success());
    assert!(String::from_utf8_lossy(&r.stdout).lines().next().unwrap().ends_with("merge s"));
}

#[test]
fn an_out_that_is_a_file_is_refused_before_the_run() {
    let dir = tmp("out-file");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("taken");
    std::fs::write(&file, "keep me").unwrap();
    for out in [file.clone(), file.join("run")] {
        let r = bin().arg("run").arg(repo().join("scenarios/two_hosts.toml")).arg("--quiet").arg("--out").arg(&out).output().unwrap();
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{err}");
        assert!(err.contains("--out") && err.contains("existing file"), "{err}");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn seeds_above_2_63_run_and_are_recorded() {
    let out = tmp("seed-max");
    let r = bin().arg("run").arg(repo().join("scenarios/two_hosts.toml")).args(["--quiet", "--seed", "18446744073709551615", "--out"]).arg(&out).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["seed"].as_u64(), Some(u64::MAX));
    // The scenario as run validates again.
    let v = bin().arg("validate").arg(out.join("scenario.toml")).output().unwrap();
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stderr));
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn validate_counts_in_words() {
    let r = bin().arg("validate").arg(repo().join("scenarios/two_hosts.toml")).output().unwrap();
    assert!(r.status.success());
    let s = String::from_utf8_lossy(&r.stdout);
    assert!(s.contains("ok (2 hosts, 1 switch, 2 links, 1 flow)"), "{s}");
}

#[test]
fn a_scenario_that_is_not_utf8_is_located() {
    let mut text = GOOD.as_bytes().to_vec();
    text.splice(0..0, b"name = \"\xe9\"\n".iter().copied());
    let dir = tmp("utf8");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.toml");
    std::fs::write(&path, &text).unwrap();
    let r = bin().arg("validate").arg(&path).output().unwrap();
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("bad.toml:1:9:") && err.contains("not valid UTF-8"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A 1 Mbps last hop (12 ms per full packet) under a 10 us retransmission
/// timeout: the sender's timer fires over and over while nothing arrives.
const TIMER_STORM: &str = r#"name = "timer storm"
[topology]
kind = "custom"
hosts = ["h0", "h1"]
switches = ["s0"]
links = [
  { a = "h0", b = "s0", rate = "100Gbps", delay = "1us" },
  { a = "s0", b = "h1", rate = "1Mbps", delay = "1us" },
]
[transport]
rto = "10us"
[monitor]
links = false
stall = "5ms"
[[flow]]
src = "h0"
dst = "h1"
size = "1MB"
"#;

#[test]
fn a_stalled_run_exits_1_with_its_diagnosis() {
    let dir = tmp("stalled");
    std::fs::create_dir_all(&dir).unwrap();
    let toml = dir.join("storm.toml");
    std::fs::write(&toml, TIMER_STORM).unwrap();
    let out = dir.join("run");
    let r = bin().arg("run").arg(&toml).arg("--out").arg(&out).output().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{err}");
    assert!(err.contains("stalled: 1 of 1 flows unfinished") && err.contains("retransmission storm"), "{err}");
    assert!(err.contains("flow 0") && err.contains("h0 -> h1"), "{err}");
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["end_reason"], "stalled");
    assert_eq!(summary["diagnosis"]["cause"], "retransmission_storm");
    assert_eq!(summary["diagnosis"]["unfinished_flows"], 1);

    // Cut short by a stop time instead: exit 0, one line on stderr, no diagnosis.
    let r = bin().arg("run").arg(&toml).arg("--out").arg(&out).args(["--set", "monitor.stall=0s", "--set", "stop=2ms"]).output().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{err}");
    assert!(err.contains("1 of 1 flows unfinished at the end of the run (stop_time)"), "{err}");
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert!(summary.get("diagnosis").is_none());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn repro_runs_an_experiment_and_writes_its_runs_and_result() {
    let out = tmp("repro");
    let r = bin().args(["repro", "S1", "--quick", "--json", "--jobs", "2", "--out"]).arg(&out).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let rows: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 1);
    assert_eq!(rows[0]["id"], "S1");
    assert_eq!(rows[0]["direction_reproduced"], true, "{}", rows[0]);
    let ratio_base = rows[0]["variants"]["nscc"]["ratio"].as_f64().unwrap();
    let ratio_csig = rows[0]["variants"]["nscc_csig"]["ratio"].as_f64().unwrap();
    assert!(ratio_csig < ratio_base);
    for v in ["nscc", "nscc_csig"] {
        assert!(out.join("S1").join(v).join("flows.csv").exists(), "{v}");
    }
    assert!(out.join("S1/result.json").exists() && out.join("repro.json").exists());
    assert!(!out.join(".files").exists(), "the trace files are removed");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn repro_refuses_an_unknown_experiment() {
    let out = tmp("repro-bad");
    let r = bin().args(["repro", "S99", "--out"]).arg(&out).output().unwrap();
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("S99") && err.contains("S1"), "{err}");
    assert!(!out.exists(), "nothing written");
}

/// Names in a directory, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// The run directory is replaced whole: a second run into it leaves exactly
/// its own files, no staging directory, and says so on stderr (not with
/// --quiet); a run that fails leaves the directory as it was, and creates
/// none.
#[test]
fn out_an_earlier_run_is_replaced_whole_and_said_so() {
    let root = tmp("whole");
    let out = root.join("run");
    let run = |scenario: &str, sets: &[&str], out: &Path, extra: &[&str]| {
        let mut c = bin();
        c.arg("run").arg(repo().join("scenarios").join(scenario)).arg("--out").arg(out).args(extra);
        for s in sets {
            c.args(["--set", s]);
        }
        c.output().unwrap()
    };
    let r = run("chain_csig_delay.toml", &["monitor.cc=true"], &out, &["--quiet"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(listing(&out), ["cc.csv", "flows.csv", "links.csv", "scenario.toml", "signals.csv", "summary.json"]);
    assert!(!String::from_utf8_lossy(&r.stderr).contains("replacing"), "nothing to replace");
    // What `csigsim plot` and `csigsim report` write there by default still
    // belongs to the run, and goes with it.
    std::fs::create_dir(out.join("plots")).unwrap();
    std::fs::write(out.join("plots/fct_cdf.png"), "png").unwrap();
    std::fs::write(out.join("report.html"), "<html>").unwrap();
    let r = run("two_hosts.toml", &["monitor.links=false"], &out, &[]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{err}");
    assert!(err.contains(&format!("replacing the earlier run in {}", out.display())), "{err}");
    assert_eq!(listing(&out), ["flows.csv", "scenario.toml", "summary.json"]);
    assert_eq!(listing(&root), [".run.lock", "run"], "no staging directory left");
    let r = run("two_hosts.toml", &["monitor.links=false"], &out, &["--quiet"]);
    assert!(r.status.success() && r.stderr.is_empty(), "--quiet: {}", String::from_utf8_lossy(&r.stderr));
    let before: Vec<Vec<u8>> = listing(&out).iter().map(|n| std::fs::read(out.join(n)).unwrap()).collect();
    // A capture that cannot be created fails the run (bad input, exit 2):
    // the directory keeps the earlier run, and a new one is not created.
    let bad_pcap = root.join("no-such-dir").join("c.pcap");
    let r = run("chain_csig_delay.toml", &[], &out, &["--quiet", "--pcap", bad_pcap.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(2), "{}", String::from_utf8_lossy(&r.stderr));
    let after: Vec<Vec<u8>> = listing(&out).iter().map(|n| std::fs::read(out.join(n)).unwrap()).collect();
    assert_eq!(before, after);
    let fresh = root.join("new").join("run");
    let r = run("chain_csig_delay.toml", &[], &fresh, &["--quiet", "--pcap", bad_pcap.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(2));
    assert!(!root.join("new").exists(), "a failed run must not create its directory");
    assert_eq!(listing(&root), [".run.lock", "run"], "no staging directory left");
    std::fs::remove_dir_all(&root).unwrap();
}

/// A capture asked for inside the run directory is written with the run and
/// published with it; it is part of that run, so the next run with the same
/// capture replaces it.
#[test]
fn out_a_capture_inside_the_run_directory_is_published_with_it() {
    let root = tmp("capture-inside");
    let out = root.join("run");
    let pcap = out.join("c.pcap");
    for seed in ["1", "2"] {
        let r = bin()
            .arg("run")
            .arg(repo().join("scenarios/two_hosts.toml"))
            .args(["--quiet", "--set", "flow[0].size=\"10KB\"", "--seed", seed, "--pcap"])
            .arg(&pcap)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        assert_eq!(listing(&out), ["c.pcap", "c.pcap.csv", "flows.csv", "links.csv", "scenario.toml", "summary.json"]);
        assert!(std::fs::metadata(&pcap).unwrap().len() > 24, "frames captured");
    }
    std::fs::remove_dir_all(&root).unwrap();
}

/// Every file's bytes in a directory, by name (hidden ones included).
fn contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    listing(dir).into_iter().map(|n| (n.clone(), std::fs::read(dir.join(&n)).unwrap_or_default())).collect()
}

/// `--out .` beside the scenario, or a run directory holding a file the
/// scenario reads: exit 2 before the run, every file as it was.
#[test]
fn out_never_overwrites_the_input() {
    let dir = tmp("input-inside");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(repo().join("scenarios/two_hosts.toml"), dir.join("scenario.toml")).unwrap();
    let before = contents(&dir);
    let r = bin().current_dir(&dir).args(["run", "scenario.toml", "--out", ".", "--set", "transport.cc=\"dctcp\""]).output().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{err}");
    assert!(err.contains("--out") && err.contains("the scenario scenario.toml lies inside the run directory ."), "{err}");
    assert_eq!(contents(&dir), before, "nothing changed");
    // From elsewhere, the same directory as --out.
    let r = bin().arg("run").arg(dir.join("scenario.toml")).arg("--out").arg(&dir).output().unwrap();
    assert_eq!(r.status.code(), Some(2), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(contents(&dir), before);
    // A trace file inside the run directory, the scenario outside it.
    let trace_dir = dir.join("traces");
    std::fs::create_dir(&trace_dir).unwrap();
    std::fs::write(trace_dir.join("t.csv"), "src,dst,size,start\nh0,h1,10KB,0us\n").unwrap();
    let scenario = std::fs::read_to_string(repo().join("scenarios/two_hosts.toml")).unwrap();
    let (head, _) = scenario.split_once("[[flow]]").unwrap();
    std::fs::write(dir.join("traced.toml"), format!("{head}[[workload]]\nkind = \"trace\"\nfile = \"traces/t.csv\"\n")).unwrap();
    let traced = dir.join("traced.toml");
    let before = contents(&trace_dir);
    let r = bin().arg("run").arg(&traced).arg("--quiet").arg("--out").arg(&trace_dir).output().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{err}");
    assert!(err.contains("workload[0].file") && err.contains("t.csv"), "{err}");
    assert_eq!(contents(&trace_dir), before);
    // The scenario runs where its trace is not in the way.
    let r = bin().arg("run").arg(&traced).arg("--quiet").arg("--out").arg(dir.join("runs/traced")).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    // A capture may not overwrite the scenario either.
    let r = bin().arg("run").arg(&traced).arg("--quiet").arg("--pcap").arg(&traced).arg("--out").arg(dir.join("runs/x")).output().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{err}");
    assert!(err.contains("--pcap") && err.contains("the scenario"), "{err}");
    assert!(std::fs::read_to_string(&traced).unwrap().contains("kind = \"trace\""));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A directory that holds anything but a csigsim run is refused (exit 2,
/// naming it and up to five of its entries) and left untouched.
#[test]
fn out_a_directory_that_is_not_a_run_is_refused_untouched() {
    let root = tmp("not-a-run");
    let mine = root.join("mine");
    std::fs::create_dir_all(&mine).unwrap();
    std::fs::write(mine.join("links.csv"), "my own links\n").unwrap();
    std::fs::write(mine.join("cc.csv"), "my own cc\n").unwrap();
    let run = |out: &Path| bin().arg("run").arg(repo().join("scenarios/two_hosts.toml")).arg("--quiet").arg("--out").arg(out).output().unwrap();
    let before = contents(&mine);
    let r = run(&mine);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{err}");
    assert!(err.contains("--out") && err.contains(&mine.display().to_string()) && err.contains("not a csigsim run directory"), "{err}");
    assert!(err.contains("cc.csv, links.csv") && err.contains("no summary.json"), "{err}");
    assert_eq!(contents(&mine), before, "untouched");
    assert_eq!(listing(&root), ["mine"], "nothing created beside it");
    // A run directory with a file of the user's in it: named, untouched.
    let out = root.join("run");
    assert!(run(&out).status.success());
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    for i in 0..6 {
        std::fs::write(out.join(format!("extra{i}")), "mine").unwrap();
    }
    let before = contents(&out);
    let r = run(&out);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{err}");
    assert!(err.contains("it holds extra0, extra1, extra2, extra3, extra4 and 2 more;"), "{err}");
    assert_eq!(contents(&out), before);
    // A summary.json that is not csigsim's.
    std::fs::remove_dir_all(&out).unwrap();
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("summary.json"), "{\"total\": 3}").unwrap();
    let r = run(&out);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{err}");
    assert!(err.contains("summary.json (not a csigsim summary)"), "{err}");
    assert_eq!(std::fs::read_to_string(out.join("summary.json")).unwrap(), "{\"total\": 3}");
    // An empty directory is fine.
    std::fs::remove_file(out.join("summary.json")).unwrap();
    assert!(run(&out).status.success());
    std::fs::remove_dir_all(&root).unwrap();
}

/// Process ids of processes that have ended.
fn dead_pid() -> u32 {
    let mut c = Command::new("true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    pid
}

/// Staging directories of dead processes, beside the run directory and of
/// the older layout inside it, are removed by the next run there; a live
/// process's is kept.
#[test]
fn out_stale_staging_directories_are_removed_live_ones_kept() {
    let root = tmp("stale");
    let out = root.join("run");
    let run = || bin().arg("run").arg(repo().join("scenarios/two_hosts.toml")).arg("--quiet").arg("--out").arg(&out).output().unwrap();
    assert!(run().status.success());
    let dead = root.join(format!(".run.partial-{}", dead_pid()));
    let live = root.join(format!(".run.partial-{}", std::process::id()));
    let old_layout = out.join(format!(".partial-{}", dead_pid()));
    let other = root.join(format!(".other.partial-{}", dead_pid()));
    for d in [&dead, &live, &old_layout, &other] {
        std::fs::create_dir_all(d).unwrap();
        std::fs::write(d.join("links.csv"), "half").unwrap();
    }
    let r = run();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(!dead.exists() && !old_layout.exists(), "stale staging removed");
    assert!(live.join("links.csv").is_file(), "a live process's staging kept");
    assert!(other.exists(), "another run directory's staging is not this run's to remove");
    // A live staging directory of the older layout: an older csigsim is writing there.
    let old_live = out.join(format!(".partial-{}", std::process::id()));
    std::fs::create_dir(&old_live).unwrap();
    let r = run();
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("process {}", std::process::id())), "{err}");
    assert!(old_live.exists());
    std::fs::remove_dir_all(&root).unwrap();
}

/// A run into a directory whose lock another process holds exits 2 at once,
/// naming the directory and that process.
#[test]
fn out_a_locked_run_directory_is_refused_naming_the_holder() {
    use std::os::unix::io::AsRawFd;
    let root = tmp("locked");
    std::fs::create_dir_all(&root).unwrap();
    let out = root.join("run");
    let mut lock = std::fs::File::create(root.join(".run.lock")).unwrap();
    std::io::Write::write_all(&mut lock, format!("{}\n", std::process::id()).as_bytes()).unwrap();
    // SAFETY: flock on a file this test owns.
    assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) }, 0);
    // A run that waited for the lock, rather than refusing, would get it
    // when this thread lets go (after a minute at most) and exit 0: the
    // status below tells, where a time limit would depend on the load.
    let (done, wait) = std::sync::mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
        let _ = wait.recv_timeout(std::time::Duration::from_secs(60));
        drop(lock);
    });
    let r = bin().arg("run").arg(repo().join("scenarios/two_hosts.toml")).arg("--quiet").arg("--out").arg(&out).output().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "refused while the lock is held, not waited for: {err}");
    assert!(err.contains(&format!("another csigsim run (process {}) is writing the run directory {}", std::process::id(), out.display())), "{err}");
    assert!(!out.exists());
    assert_eq!(listing(&root), [".run.lock"], "no staging directory left");
    done.send(()).unwrap();
    holder.join().unwrap();
    let r = bin().arg("run").arg(repo().join("scenarios/two_hosts.toml")).arg("--quiet").arg("--out").arg(&out).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    std::fs::remove_dir_all(&root).unwrap();
}

/// Two runs started together into one `--out`, 100 times: one of each pair
/// exits 0, the other 0 or 2 with the lock's message, and the directory is
/// always one run's, whole: its summary.json, scenario.toml and flows.csv
/// (compared with a run of that seed alone) agree. Every other pair starts
/// without the run directory, every fourth without its parent either.
#[test]
fn out_two_runs_at_once_never_mix_their_files() {
    let root = tmp("race");
    let parent = root.join("p");
    let out = parent.join("run");
    // Seed 1: a 10 KB flow, seed 2: 20 KB, so that every file differs.
    let cmd = |seed: u32, out: &Path| {
        let mut c = bin();
        c.arg("run")
            .arg(repo().join("scenarios/two_hosts.toml"))
            .args(["--quiet", "--seed", &seed.to_string(), "--set", &format!("flow[0].size=\"{}KB\"", 10 * seed), "--out"])
            .arg(out);
        c
    };
    let solo: Vec<Vec<(String, Vec<u8>)>> = (1..=2)
        .map(|seed| {
            let d = root.join(format!("solo{seed}"));
            assert!(cmd(seed, &d).status().unwrap().success());
            contents(&d)
        })
        .collect();
    let mut outcomes = std::collections::BTreeMap::new();
    for i in 0..100 {
        if i % 4 == 0 {
            let _ = std::fs::remove_dir_all(&parent);
        } else if i % 2 == 0 {
            let _ = std::fs::remove_dir_all(&out);
        }
        let a = cmd(1, &out).stderr(std::process::Stdio::piped()).spawn().unwrap();
        let b = cmd(2, &out).stderr(std::process::Stdio::piped()).spawn().unwrap();
        let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
        let codes = (a.status.code(), b.status.code());
        *outcomes.entry(codes).or_insert(0) += 1;
        for r in [&a, &b] {
            let err = String::from_utf8_lossy(&r.stderr);
            match r.status.code() {
                Some(0) => assert!(err.is_empty(), "{err}"),
                Some(2) => assert!(err.contains("is writing the run directory"), "{err}"),
                c => panic!("exit {c:?}: {err}"),
            }
        }
        assert!(codes.0 == Some(0) || codes.1 == Some(0), "one of the pair succeeds: {codes:?}");
        let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
        let seed = summary["seed"].as_u64().unwrap();
        assert!(seed == 1 && codes.0 == Some(0) || seed == 2 && codes.1 == Some(0), "published by a run that succeeded");
        let scenario = std::fs::read_to_string(out.join("scenario.toml")).unwrap();
        assert!(scenario.contains(&format!("seed = {seed}")), "scenario.toml of another run");
        let got = contents(&out);
        let want = &solo[seed as usize - 1];
        let names = |v: &[(String, Vec<u8>)]| v.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
        assert_eq!(names(&got), names(want), "pair {i}");
        for ((name, bytes), (_, want)) in got.iter().zip(want) {
            if name != "summary.json" {
                assert!(bytes == want, "pair {i}: {name} is not seed {seed}'s");
            }
        }
        assert_eq!(listing(&parent), [".run.lock", "run"], "pair {i}: no staging directory left");
    }
    println!("exit statuses of the pairs (seed 1, seed 2): {outcomes:?}");
    std::fs::remove_dir_all(&root).unwrap();
}

/// `csigsim repro` writes each experiment's HTML report when the Python
/// package is there, and otherwise (or with `--no-report`) says why not in
/// result.json, still exiting 0 with every run written.
#[test]
fn repro_writes_a_report_per_experiment_or_says_why_not() {
    let report_of = |out: &Path| -> serde_json::Value {
        let row: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("S1/result.json")).unwrap()).unwrap();
        row["report"].clone()
    };
    // An interpreter that does not exist: a note naming it, no report.
    let out = tmp("repro-nopython");
    let r = bin().env("CSIGSIM_PYTHON", "/nonexistent/python3").args(["repro", "S1", "--quick", "--out"]).arg(&out).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let note = report_of(&out);
    assert!(note["skipped"].as_str().unwrap().contains("/nonexistent/python3"), "{note}");
    assert!(String::from_utf8_lossy(&r.stdout).contains("report: not written"));
    assert!(!out.join("S1/report.html").exists() && out.join("S1/nscc/flows.csv").exists());
    let _ = std::fs::remove_dir_all(&out);

    // --no-report: the same without asking Python.
    let out = tmp("repro-noreport");
    let r = bin().args(["repro", "S1", "--quick", "--no-report", "--json", "--out"]).arg(&out).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let rows: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(rows[0]["report"]["skipped"], "--no-report");
    assert_eq!(report_of(&out)["skipped"], "--no-report");
    assert!(!out.join("S1/report.html").exists());
    let _ = std::fs::remove_dir_all(&out);

    // With the package installed, report.html beside the variants, and
    // --json's stdout stays one JSON array.
    let python = std::env::var("CSIGSIM_PYTHON").ok().filter(|s| !s.is_empty()).unwrap_or_else(|| "python3".into());
    let has_package = Command::new(&python).args(["-c", "import csigsim.report"]).output().is_ok_and(|o| o.status.success());
    if has_package {
        let out = tmp("repro-report");
        let r = bin().args(["repro", "S1", "--quick", "--json", "--out"]).arg(&out).output().unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let rows: serde_json::Value = serde_json::from_slice(&r.stdout).expect("stdout is the JSON array alone");
        assert_eq!(rows[0]["report"]["file"], "report.html", "{}", rows[0]);
        let html = std::fs::read_to_string(out.join("S1/report.html")).unwrap();
        assert!(html.contains("nscc_csig"), "the report names the variants");
        let _ = std::fs::remove_dir_all(&out);
    }
}

/// Chakra traces that cannot run: `run` and `validate` exit 2 naming the
/// rank's file, the rank and the node (or the byte offset), and write no
/// run directory.
#[test]
fn malformed_chakra_traces_exit_2_naming_file_rank_and_node() {
    use csigsim::workload::chakra::et::{encode_stream, node_type, AttributeProto, GlobalMetadata, Node, Value};
    let attr = |name: &str, v: Value| AttributeProto { name: name.into(), doc_string: String::new(), value: Some(v) };
    let node = |id: u64, ty: i32, deps: &[u64], attrs: Vec<AttributeProto>| Node { id, r#type: ty, data_deps: deps.to_vec(), attr: attrs, duration_micros: 5, ..Default::default() };
    let send = |id: u64, dst: i64| node(id, node_type::COMM_SEND, &[1], vec![attr("comm_dst", Value::Int64Val(dst)), attr("comm_size", Value::Uint64Val(4096))]);
    let recv = |id: u64| node(id, node_type::COMM_RECV, &[], vec![attr("comm_src", Value::Int64Val(0)), attr("comm_size", Value::Int64Val(4096))]);
    let coll = |id: u64| node(id, node_type::COMM_COLL, &[], vec![attr("comm_type", Value::Int64Val(0)), attr("comm_size", Value::Int64Val(1 << 20)), attr("pg_name", Value::StringVal("dp".into()))]);
    let good = || vec![vec![node(1, node_type::COMP, &[], vec![]), send(2, 1)], vec![recv(9)]];
    // (case, the ranks' nodes, what the message names)
    type Case = (&'static str, Vec<Vec<Node>>, &'static [&'static str]);
    let mut cases: Vec<Case> = Vec::new();
    let mut r = good();
    r[1][0].r#type = 99;
    cases.push(("unknown-type", r, &["t.1.et", "rank 1, node 9", "node type 99"]));
    let mut r = good();
    r[0].pop();
    cases.push(("unmatched-recv", r, &["t.1.et", "rank 1, node 9", "never matched"]));
    let mut r = good();
    r[0][1] = send(2, 5);
    cases.push(("unknown-rank", r, &["t.0.et", "rank 0, node 2", "comm_dst 5 is an unknown rank"]));
    cases.push(("missing-group", vec![vec![coll(4)], vec![coll(4)]], &["t.0.et", "rank 0, node 4", "group dp", "comm_group"]));
    let mut r = good();
    r[0][0].ctrl_deps = vec![2];
    cases.push(("cycle", r, &["t.0.et", "rank 0, node ", "waits for itself"]));
    cases.push(("truncated", good(), &["t.1.et", "rank 1, byte offset", "truncated"]));
    for (name, ranks, needles) in cases {
        let dir = tmp(&format!("chakra-{name}"));
        std::fs::create_dir_all(&dir).unwrap();
        for (i, nodes) in ranks.iter().enumerate() {
            let mut bytes = encode_stream(&GlobalMetadata::default(), nodes);
            if name == "truncated" && i == 1 {
                bytes.truncate(bytes.len() - 2);
            }
            std::fs::write(dir.join(format!("t.{i}.et")), bytes).unwrap();
        }
        let path = dir.join("s.toml");
        std::fs::write(&path, GOOD.split("[[flow]]").next().unwrap().to_string() + "[[workload]]\nkind = \"chakra\"\npath = \"t\"\n").unwrap();
        let out = dir.join("out");
        let r = bin().arg("run").arg(&path).arg("--out").arg(&out).output().unwrap();
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{name}: {err}");
        for n in needles {
            assert!(err.contains(n), "{name}: {err} lacks {n}");
        }
        assert!(!out.exists(), "{name}: bad input must not create the run directory");
        assert_eq!(bin().arg("validate").arg(&path).output().unwrap().status.code(), Some(2), "{name}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// `--isolate-jobs`: each job alone first, then jobs.csv with its alone
/// time and slowdown, and a summary line per job; refused (exit 2) for a
/// scenario without jobs and for a job placement that does not fit.
#[test]
fn isolate_jobs_writes_each_jobs_slowdown() {
    let out = tmp("jobs");
    let r = bin().arg("run").arg(repo().join("scenarios/two_jobs.toml")).arg("--isolate-jobs").arg("--out").arg(&out).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert!(stdout.contains("job a") && stdout.contains("slowdown"), "{stdout}");
    let jobs = std::fs::read_to_string(out.join("jobs.csv")).unwrap();
    let lines: Vec<&str> = jobs.lines().collect();
    assert_eq!(lines.len(), 3, "{jobs}");
    let head: Vec<&str> = lines[0].split(',').collect();
    let (alone, slow) = (head.iter().position(|c| *c == "alone_time_ns").unwrap(), head.iter().position(|c| *c == "slowdown").unwrap());
    for l in &lines[1..] {
        let cells: Vec<&str> = l.split(',').collect();
        assert!(!cells[alone].is_empty(), "{l}");
        assert!(cells[slow].parse::<f64>().unwrap() > 1.0, "{l}");
    }
    assert!(out.join("job_links.csv").exists());
    // Without --isolate-jobs the columns are empty.
    let r = bin().arg("run").arg(repo().join("scenarios/two_jobs.toml")).args(["--quiet", "--out"]).arg(&out).output().unwrap();
    assert!(r.status.success());
    let jobs = std::fs::read_to_string(out.join("jobs.csv")).unwrap();
    assert!(jobs.lines().nth(1).unwrap().ends_with(",,"), "{jobs}");
    std::fs::remove_dir_all(&out).unwrap();
    refused_run("isolate-no-jobs", &["--isolate-jobs"], &["--isolate-jobs", "no jobs"]);
    let two = std::fs::read_to_string(repo().join("scenarios/two_jobs.toml")).unwrap();
    bad("placement", &two.replace("num_ranks = 8\nop", "num_ranks = 12\nop"), &["workload[1].placement", "needs 12 ranks"]);
}

/// `--timeline`: the trace-event file of a trace run, written whole (no
/// temporary file left beside it); the summary and `compare` lead with the
/// iteration time. A path that cannot be written is refused before the run,
/// naming it, and nothing is written.
#[test]
fn timeline_is_written_whole_and_a_bad_path_is_refused() {
    let out = tmp("timeline");
    let dir = tmp("timeline-files");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("t.json");
    let r = bin().arg("run").arg(repo().join("scenarios/goal_ring_allreduce.toml")).arg("--out").arg(&out).arg("--timeline").arg(&file).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&r.stdout), String::from_utf8_lossy(&r.stderr));
    assert!(r.status.success(), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert!(v["traceEvents"].as_array().is_some_and(|e| e.len() > 100));
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, [std::ffi::OsString::from("t.json")]);
    // The iteration time comes first, under the scenario's name.
    let second = stdout.lines().nth(1).unwrap_or("");
    assert!(second.starts_with("iteration goal0 iter 0"), "{stdout}");
    assert!(out.join("ops.csv").is_file() && out.join("iterations.csv").is_file());
    let c = bin().arg("compare").arg(&out).arg(&out).output().unwrap();
    let table = String::from_utf8_lossy(&c.stdout);
    let first = table.lines().find(|l| !l.contains(" = ") && !l.starts_with("figure")).unwrap_or("");
    assert!(first.starts_with("iteration_us[goal0 iter 0]"), "{table}");

    for (name, path, needle) in [
        ("timeline-nodir", dir.join("missing/t.json"), "does not exist"),
        ("timeline-isdir", dir.clone(), "is a directory"),
    ] {
        let shown = path.display().to_string();
        let err = refused_run(name, &["--timeline", &shown], &["--timeline", &shown, needle]);
        assert!(!err.is_empty());
    }
    assert!(!dir.join("missing").exists());
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&dir);
}
