//! `csigsim import`: the scenarios written from htsim's and ns-3's inputs,
//! their runs, and the refusals of malformed inputs.
//!
//! Every input here is written by hand in the published format of the
//! reference simulator (htsim's connection matrix, the HPCC ns-3
//! simulator's topology.txt and flow.txt), small enough to read.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_csigsim"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("csigsim-import-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn ok(o: Output) -> Output {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn run(scenario: &Path, out: &Path, set: &[&str]) -> String {
    let mut c = bin();
    c.arg("run").arg(scenario).arg("--out").arg(out).arg("--quiet");
    for s in set {
        c.args(["--set", s]);
    }
    ok(c.output().unwrap());
    read(&out.join("flows.csv"))
}

/// The files of a directory, sorted.
fn listing(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

// The dumbbell of docs/validation.md in ns-3's format: nodes 0 and 1 send
// 10 MB each to node 2 through switch 3, at 2 s (when ns-3's runs start
// their flows); priority group 3, destination port 100, as traffic_gen.py
// writes them.
const NS3_TOPOLOGY: &str = "4 1 3\n3\n0 3 100Gbps 0.001ms 0\n1 3 100Gbps 0.001ms 0\n2 3 100Gbps 0.001ms 0\n";
const NS3_FLOWS: &str = "2\n0 2 3 100 10000000 2.000000000\n1 2 3 100 10000000 2.000000000\n";

#[test]
fn ns3_dumbbell_imports_as_the_validation_scenario_and_runs_the_same() {
    let d = tmp("ns3");
    std::fs::write(d.join("topology.txt"), NS3_TOPOLOGY).unwrap();
    std::fs::write(d.join("flow.txt"), NS3_FLOWS).unwrap();
    let o = ok(bin().arg("import").arg("ns3").arg(d.join("topology.txt")).arg(d.join("flow.txt")).args(["--cc", "dcqcn", "--name", "dumbbell"]).output().unwrap());
    assert!(String::from_utf8_lossy(&o.stdout).contains("dumbbell.toml"));
    assert_eq!(listing(&d), ["dumbbell.csv", "dumbbell.toml", "flow.txt", "topology.txt"]);
    let toml = read(&d.join("dumbbell.toml"));
    let body: String = toml.lines().filter(|l| !l.starts_with('#')).map(|l| format!("{l}\n")).collect();
    assert_eq!(
        body,
        r#"name = "dumbbell"
profile = "ns3-rdma"

[transport]
cc = "dcqcn"

[topology]
kind = "custom"
hosts = ["n0", "n1", "n2"]
switches = ["n3"]
links = [
  { a = "n0", b = "n3", rate = "100Gbps", delay = "1us" },
  { a = "n1", b = "n3", rate = "100Gbps", delay = "1us" },
  { a = "n2", b = "n3", rate = "100Gbps", delay = "1us" },
]

[[workload]]
kind = "trace"
file = "dumbbell.csv"
"#
    );
    let csv = read(&d.join("dumbbell.csv"));
    assert_eq!(csv.lines().filter(|l| !l.starts_with('#')).collect::<Vec<_>>(), ["src,dst,size,start,name", "n0,n2,10000000,0ps,", "n1,n2,10000000,0ps,"]);

    // The same flows.csv as the shipped scenario, for each congestion
    // control of docs/validation.md: same hosts, links, flows (ids, labels,
    // starts) and random streams.
    let shipped = repo().join("scenarios/validation/ns3_dumbbell.toml");
    for (run_py, cc) in [("dcqcn", "dcqcn"), ("hp", "hpcc"), ("timely", "timely"), ("dctcp", "dctcp")] {
        ok(bin()
            .arg("import")
            .arg("ns3")
            .arg(d.join("topology.txt"))
            .arg(d.join("flow.txt"))
            .args(["--cc", run_py, "--force", "--name", "dumbbell"])
            .output()
            .unwrap());
        let cc_set = format!("transport.cc=\"{cc}\"");
        let imported = run(&d.join("dumbbell.toml"), &d.join(format!("run-imported-{cc}")), &[]);
        let reference = run(&shipped, &d.join(format!("run-shipped-{cc}")), &[&cc_set]);
        assert_eq!(imported, reference, "--cc {run_py}");
        if cc == "dcqcn" {
            // docs/validation.md: the dumbbell's DCQCN tail, 2,310.994 us.
            let tail = imported.lines().skip(1).map(|l| l.split(',').nth(19).unwrap().parse::<f64>().unwrap()).fold(0.0, f64::max);
            assert!((tail / 1000.0 - 2310.994).abs() < 0.001, "tail {tail} ns");
        }
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn ns3_start_times_are_relative_to_the_whole_second_below_the_first() {
    let d = tmp("ns3-offset");
    std::fs::write(d.join("t.txt"), NS3_TOPOLOGY).unwrap();
    std::fs::write(d.join("f.txt"), "2\n0 2 3 100 1000 2.000000265\n1 2 3 100 2000 2.0000015\n").unwrap();
    let out = d.join("out");
    ok(bin().arg("import").arg("ns3").arg(d.join("t.txt")).arg(d.join("f.txt")).arg("--out").arg(&out).output().unwrap());
    assert_eq!(listing(&out), ["f.csv", "f.toml"]);
    assert!(read(&out.join("f.toml")).contains("cc = \"hpcc\""), "run.py's default --cc hp");
    let csv = read(&out.join("f.csv"));
    assert!(csv.contains("n0,n2,1000,265ns,\nn1,n2,2000,1500ns,\n"), "{csv}");
    ok(bin().arg("import").arg("ns3").arg(d.join("t.txt")).arg(d.join("f.txt")).arg("--out").arg(&out).args(["--force", "--start-offset", "1s"]).output().unwrap());
    assert!(read(&out.join("f.csv")).contains("n0,n2,1000,1000000265ns,"));
    run(&out.join("f.toml"), &d.join("run"), &[]);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn htsim_matrix_without_triggers_becomes_a_trace_on_htsims_fat_tree() {
    let d = tmp("htsim");
    std::fs::write(d.join("perm.cm"), "Nodes 16\nConnections 3\n0->13 start 0 size 2000000\n13->6 start 2.9 size 1000000\n6->0 start 10 size 65536\n").unwrap();
    ok(bin().arg("import").arg("htsim").arg(d.join("perm.cm")).output().unwrap());
    let toml = read(&d.join("perm.toml"));
    let body: String = toml.lines().filter(|l| !l.starts_with('#')).map(|l| format!("{l}\n")).collect();
    assert_eq!(
        body,
        r#"name = "perm"
profile = "htsim-uec"

[topology]
kind = "fat_tree"
k = 4
rate = "100Gbps"
delay = "1us"

[[workload]]
kind = "trace"
file = "perm.csv"
"#
    );
    let csv = read(&d.join("perm.csv"));
    // htsim starts a connection at the whole microseconds of its `start`.
    assert_eq!(
        csv.lines().filter(|l| !l.starts_with('#')).collect::<Vec<_>>(),
        ["src,dst,size,start", "h0,h13,2000000,0ps", "h13,h6,1000000,2us", "h6,h0,65536,10us"]
    );
    let flows = run(&d.join("perm.toml"), &d.join("run"), &[]);
    assert_eq!(flows.lines().count(), 4);
    assert!(flows.lines().skip(1).all(|l| !l.split(',').nth(6).unwrap().is_empty()), "every flow completes:\n{flows}");

    // Options: per-flow ECMP, a leaf-spine in htsim's 2-tier sizing, a larger k.
    ok(bin().arg("import").arg("htsim").arg(d.join("perm.cm")).args(["--routing", "ecmp", "--k", "8", "--rate", "400Gbps", "--delay", "500ns", "--force"]).output().unwrap());
    let toml = read(&d.join("perm.toml"));
    for want in ["[switch]\nrouting = \"ecmp\"", "k = 8\nhosts = 16\nrate = \"400Gbps\"\ndelay = \"500ns\""] {
        assert!(toml.contains(want), "{want} not in\n{toml}");
    }
    // 8 nodes: htsim's 2-tier K = 4, 4 leaves of 2 hosts, 2 spines.
    std::fs::write(d.join("ls.cm"), "Nodes 8\nConnections 1\n0->7 start 0 size 100000\n").unwrap();
    ok(bin().arg("import").arg("htsim").arg(d.join("ls.cm")).args(["--topology", "leaf_spine"]).output().unwrap());
    assert!(read(&d.join("ls.toml")).contains("kind = \"leaf_spine\"\nleaves = 4\nspines = 2\nhosts_per_leaf = 2\n"));
    ok(bin().arg("import").arg("htsim").arg(d.join("perm.cm")).args(["--topology", "leaf_spine", "--leaves", "2", "--name", "ls2"]).output().unwrap());
    assert!(read(&d.join("ls2.toml")).contains("kind = \"leaf_spine\"\nleaves = 2\nspines = 8\nhosts_per_leaf = 8\n"));
    run(&d.join("ls.toml"), &d.join("run-ls"), &[]);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn htsim_triggers_become_flows_that_wait() {
    let d = tmp("htsim-triggers");
    // A chain started by a sender's completion (send_done_trigger, a oneshot)
    // and a barrier on two receivers' completions.
    std::fs::write(
        d.join("chain.cm"),
        "Nodes 16\nConnections 4\nTriggers 2\n\
         0->5 id 1 start 0 size 100000 send_done_trigger 1\n\
         5->9 id 2 trigger 1 size 100000 recv_done_trigger 2\n\
         9->0 id 3 start 2 size 100000 recv_done_trigger 2 prio 3\n\
         3->4 id 4 trigger 2 size 50000\n\
         trigger id 1 oneshot\n\
         trigger id 2 barrier count 2\n",
    )
    .unwrap();
    ok(bin().arg("import").arg("htsim").arg(d.join("chain.cm")).output().unwrap());
    assert_eq!(listing(&d), ["chain.cm", "chain.toml"], "flows that wait are [[flow]] entries: no trace");
    let toml = read(&d.join("chain.toml"));
    // The final ACK's unloaded trip h5 -> h0 over 6 links: 6 x (1 us + 64 B at 100 Gb/s).
    for want in [
        "[[flow]]\nsrc = \"h0\"\ndst = \"h5\"\nsize = 100000\nstart = \"0ps\"\nname = \"id1\"\n",
        "[[flow]]\nsrc = \"h5\"\ndst = \"h9\"\nsize = 100000\nname = \"id2\"\nafter = [0]\ngap = \"6030720ps\"\n",
        "[[flow]]\nsrc = \"h9\"\ndst = \"h0\"\nsize = 100000\nstart = \"2us\"\nname = \"id3\"\n",
        "[[flow]]\nsrc = \"h3\"\ndst = \"h4\"\nsize = 50000\nname = \"id4\"\nafter = [1, 2]\n",
    ] {
        assert!(toml.contains(want), "{want} not in\n{toml}");
    }
    let flows = run(&d.join("chain.toml"), &d.join("run"), &[]);
    let rows: Vec<Vec<String>> = flows.lines().skip(1).map(|l| l.split(',').map(String::from).collect()).collect();
    let col = |r: usize, c: usize| rows[r][c].parse::<f64>().unwrap();
    // start_ns = 5, finish_ns = 6, sender_finish_ns = 18
    assert_eq!(col(1, 5), col(0, 18), "send_done: the next flow starts at the sender's completion");
    assert_eq!(col(3, 5), col(1, 6).max(col(2, 6)), "barrier: the flow starts when both have arrived");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn existing_files_are_kept_unless_forced() {
    let d = tmp("force");
    std::fs::write(d.join("x.cm"), "Nodes 16\nConnections 1\n0->1 start 0 size 1000\n").unwrap();
    std::fs::write(d.join("x.csv"), "mine").unwrap();
    let o = bin().arg("import").arg("htsim").arg(d.join("x.cm")).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("x.csv exists: give --force"), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(listing(&d), ["x.cm", "x.csv"]);
    assert_eq!(read(&d.join("x.csv")), "mine");
    ok(bin().arg("import").arg("htsim").arg(d.join("x.cm")).arg("--force").output().unwrap());
    assert_ne!(read(&d.join("x.csv")), "mine");
    std::fs::remove_dir_all(&d).unwrap();
}

/// Imports `input` (written as `name`) with `args` and expects exit 2, a
/// message starting with `name:line:` and containing `msg`, and no file written.
fn refused(kind: &str, files: &[(&str, &str)], msg_at: (&str, usize), msg: &str) {
    let d = tmp(&format!("bad-{kind}-{}", msg.chars().filter(|c| c.is_ascii_alphanumeric()).take(20).collect::<String>()));
    for (n, t) in files {
        std::fs::write(d.join(n), t).unwrap();
    }
    let before = listing(&d);
    let mut c = bin();
    c.arg("import").arg(kind);
    for (n, _) in files {
        c.arg(d.join(n));
    }
    let o = c.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{kind} {msg}: {err}");
    let at = format!("{}:{}:", d.join(msg_at.0).display(), msg_at.1);
    assert!(err.contains(&at), "expected {at} in: {err}");
    assert!(err.contains(msg), "expected \"{msg}\" in: {err}");
    assert_eq!(listing(&d), before, "nothing written");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn malformed_htsim_matrices_are_refused_by_file_and_line() {
    let cases: &[(&str, usize, &str)] = &[
        ("Nodes 16\nConnections 2\n0->1 start 0 size 10\n0-2 start 0 size 10\n", 4, "expected a connection SRC->DST"),
        ("Nodes 16\nConnections 2\n0->1 start 0 size 10\n0->16 start 0 size 10\n", 4, "destination 16 is not a node"),
        ("Nodes 16\nConnections 2\n0->1 start 0 size 10\n0->2 start 0 sise 10\n", 4, "unknown connection attribute \"sise\""),
        ("Nodes 16\nConnections 2\n0->1 start 0 size 10\n0->2 start 0\n", 4, "no `size`"),
        ("Nodes 16\nConnections 2\n0->1 start 0 size 10\n0->2 size 10\n", 4, "no start method"),
        ("Nodes 16\nConnections 2\n0->1 start 0 size 10\n0->2 start x size 10\n", 4, "not a time in microseconds"),
        ("Nodes 16\nConnections 2\n0->1 start 0 size 10\n0->2 start 0 size 0\n", 4, "endless flow"),
        ("Nodes 16\nConnections 3\n0->1 start 0 size 10\n0->2 start 0 size 10\n", 2, "Connections 3 declared, 2 in the file"),
        ("Nodes 16\nConnections 2\n0->1 start 0 size 10 msg 1\n0->2 start 0 size 10\n", 3, "-conn_reuse"),
        ("Nodes 16\nConnections 1\nFailures 1\n0->1 start 0 size 10\nfailure switch_type AGG switch_id 0 link_id 1\n", 5, "link failures are not imported"),
        ("Nodes 16\nConnectons 2\n", 2, "expected a header line"),
        ("Nodes 16\nConnections 1\nFailures 1\n0->1 start 0 size 10\n", 3, "Failures 1 declared, 0 in the file"),
        (
            "Nodes 16\nConnections 3\nTriggers 1\n0->1 id 1 start 0 size 10 send_done_trigger 1\n0->2 id 2 start 0 size 10 send_done_trigger 1\n0->3 id 3 trigger 1 size 10\ntrigger id 1 oneshot\n",
            7,
            "oneshot trigger 1 is activated by 2 connections (lines 4, 5)",
        ),
        (
            "Nodes 16\nConnections 2\nTriggers 1\n0->1 id 1 start 0 size 10 recv_done_trigger 1\n0->3 id 3 trigger 1 size 10\ntrigger id 1 barrier count 2\n",
            6,
            "barrier trigger 1 fires after 2 activations, but 1 connections",
        ),
        ("Nodes 16\nConnections 1\nTriggers 1\n0->3 id 3 trigger 1 size 10\ntrigger id 1 oneshot\n", 4, "no connection activates trigger 1"),
        ("Nodes 16\nConnections 1\n0->3 id 3 trigger 1 size 10 recv_done_trigger 1\n", 3, "trigger 1 is not defined"),
        (
            "Nodes 16\nConnections 2\nTriggers 2\n0->1 id 1 trigger 2 size 10 recv_done_trigger 1\n1->2 id 2 trigger 1 size 10 recv_done_trigger 2\ntrigger id 1 oneshot\ntrigger id 2 oneshot\n",
            4,
            "waits on itself",
        ),
    ];
    for (text, line, msg) in cases {
        refused("htsim", &[("m.cm", text)], ("m.cm", *line), msg);
    }
}

#[test]
fn malformed_ns3_inputs_are_refused_by_file_and_line() {
    let f = ("flow.txt", NS3_FLOWS);
    let t = ("topology.txt", NS3_TOPOLOGY);
    let topo = |text: &'static str, line: usize, msg: &str| refused("ns3", &[("topology.txt", text), f], ("topology.txt", line), msg);
    topo("4 1 3\n3\n0 3 100Gbps 0.001ms 0\n1 3 100Gbps 0.001ms 0.001\n2 3 100Gbps 0.001ms 0\n", 4, "error rate 0.001: csigsim does not model random packet loss");
    topo("4 1 3\n3\n0 3 100Gbps 0.001ms 0\n1 4 100Gbps 0.001ms 0\n2 3 100Gbps 0.001ms 0\n", 4, "node 4 does not exist");
    topo("4 1 3\n3\n0 3 100Gbps 0.001ms 0\n1 3 100Gbs 0.001ms 0\n2 3 100Gbps 0.001ms 0\n", 4, "\"100Gbs\" is not a data rate");
    topo("4 1 3\n3\n0 3 100Gbps 0.001ms 0\n1 3 100Gbps 1ds 0\n2 3 100Gbps 0.001ms 0\n", 4, "\"1ds\" is not a time");
    topo("4 1 3\n3\n0 3 100Gbps 0.001ms 0\n1 3 100Gbps 0.001ms 0\n2 3 100Gbps 0.001ms\n", 5, "the file ends where link 3 of 3: its error rate was expected");
    topo("4 1 3\n3\n0 3 100Gbps 0.001ms 0\n0 3 100Gbps 0.001ms 0\n2 3 100Gbps 0.001ms 0\n", 4, "host 0 has a second link (the first is on line 3)");
    topo("4 1 3\n3\n0 3 100Gbps 0.001ms 0\n1 2 100Gbps 0.001ms 0\n2 3 100Gbps 0.001ms 0\n", 4, "joins two hosts");
    let flow = |text: &'static str, line: usize, msg: &str| refused("ns3", &[t, ("flow.txt", text)], ("flow.txt", line), msg);
    flow("2\n0 2 3 100 10000000 2\n3 2 3 100 10000000 2\n", 3, "source node 3 is a switch");
    flow("2\n0 2 3 100 10000000 2.1\n1 2 3 100 10000000 2\n", 3, "before the flow above it");
    flow("2\n0 2 3 100 10000000 2\n1 2 1 100 10000000 2\n", 3, "priority group 1 differs from 3 of line 2");
    flow("2\n0 2 3 100 10000000 2\n1 2 3 100 0 2\n", 3, "size 0");
    flow("2\n0 2 3 100 10000000 2\n1 2 3 100 10000000 two\n", 3, "is not a start time in seconds");
    flow("3\n0 2 3 100 10000000 2\n1 2 3 100 10000000 2\n", 3, "the file ends where flow 3 of 3: its source was expected");
}

#[test]
fn ns3_values_after_the_declared_counts_are_ignored_as_ns3_does() {
    // third.cc reads as many links and flows as the first line declares;
    // HPCC's own example topology.txt has more link lines than it declares.
    let d = tmp("ns3-extra");
    std::fs::write(d.join("t.txt"), "4 1 3\n3\n0 3 100Gbps 0.001ms 0\n1 3 100Gbps 0.001ms 0\n2 3 100Gbps 0.001ms 0\n5 3 25Gbps 0.001ms 0\n").unwrap();
    std::fs::write(d.join("f.txt"), "1\n0 2 3 100 1000 2\n1 2 3 100 1000 2\n").unwrap();
    let o = ok(bin().arg("import").arg("ns3").arg(d.join("t.txt")).arg(d.join("f.txt")).output().unwrap());
    let err = String::from_utf8_lossy(&o.stderr);
    for w in [format!("warning: {}:6:1: ignored", d.join("t.txt").display()), format!("warning: {}:3:1: ignored", d.join("f.txt").display())] {
        assert!(err.contains(&w), "{w} not in {err}");
    }
    let toml = read(&d.join("f.toml"));
    assert_eq!(toml.matches("rate = ").count(), 3);
    assert_eq!(read(&d.join("f.csv")).lines().filter(|l| l.starts_with('n')).count(), 1);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn unknown_cc_and_bad_options_exit_2() {
    let d = tmp("opts");
    std::fs::write(d.join("t.txt"), NS3_TOPOLOGY).unwrap();
    std::fs::write(d.join("f.txt"), NS3_FLOWS).unwrap();
    std::fs::write(d.join("m.cm"), "Nodes 10\nConnections 1\n0->1 start 0 size 1000\n").unwrap();
    let o = bin().arg("import").arg("ns3").arg(d.join("t.txt")).arg(d.join("f.txt")).args(["--cc", "hpccPint"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--cc"));
    let o = bin().arg("import").arg("htsim").arg(d.join("m.cm")).args(["--topology", "leaf_spine"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("give --leaves"), "{}", String::from_utf8_lossy(&o.stderr));
    let o = bin().arg("import").arg("htsim").arg(d.join("m.cm")).args(["--k", "2"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(listing(&d), ["f.txt", "m.cm", "t.txt"]);
    std::fs::remove_dir_all(&d).unwrap();
}

/// The shipped validation scenario's topology and trace written back in
/// ns-3's formats (the flows at 2 s plus their trace start, as ns-3's flow
/// files have them), imported, and run: the same flows, the same FCTs.
fn ns3_round_trip(case: &str, cc: &str) {
    let shipped = repo().join(format!("scenarios/validation/{case}.toml"));
    let sc: toml::Value = toml::from_str(&read(&shipped)).unwrap();
    let topo = &sc["topology"];
    let id = |v: &toml::Value| v.as_str().unwrap().strip_prefix('n').unwrap().parse::<u64>().unwrap();
    let hosts = topo["hosts"].as_array().unwrap();
    let switches = topo["switches"].as_array().unwrap();
    let links = topo["links"].as_array().unwrap();
    let mut t = format!("{} {} {}\n", hosts.len() + switches.len(), switches.len(), links.len());
    t.push_str(&switches.iter().map(|s| id(s).to_string()).collect::<Vec<_>>().join(" "));
    t.push('\n');
    for l in links {
        let ps = csigsim::units::parse_time(l["delay"].as_str().unwrap()).unwrap().0;
        t.push_str(&format!("{} {} {} {}ns 0\n", id(&l["a"]), id(&l["b"]), l["rate"].as_str().unwrap(), ps / 1000));
    }
    let mut rows: Vec<(String, String, u64, u64)> = Vec::new();
    if let Some(w) = sc.get("workload") {
        let csv = read(&shipped.parent().unwrap().join(w[0]["file"].as_str().unwrap()));
        for l in csv.lines().filter(|l| !l.starts_with('#')).skip(1) {
            let c: Vec<&str> = l.split(',').collect();
            rows.push((c[0].into(), c[1].into(), c[2].parse().unwrap(), csigsim::units::parse_time(c[3]).unwrap().0));
        }
    } else {
        for f in sc["flow"].as_array().unwrap() {
            rows.push((f["src"].as_str().unwrap().into(), f["dst"].as_str().unwrap().into(), f["size"].as_integer().unwrap() as u64, 0));
        }
    }
    let mut fl = format!("{}\n", rows.len());
    for (s, d, size, ps) in &rows {
        let n = |h: &str| h.strip_prefix('n').unwrap().to_string();
        fl.push_str(&format!("{} {} 3 100 {size} {}.{:012}\n", n(s), n(d), 2 + ps / 1_000_000_000_000, ps % 1_000_000_000_000));
    }
    let d = tmp(&format!("rt-{case}-{cc}"));
    std::fs::write(d.join("topology.txt"), t).unwrap();
    std::fs::write(d.join("flow.txt"), fl).unwrap();
    let run_py = if cc == "hpcc" { "hp" } else { cc };
    ok(bin().arg("import").arg("ns3").arg(d.join("topology.txt")).arg(d.join("flow.txt")).args(["--cc", run_py, "--name", case]).output().unwrap());
    let imported = run(&d.join(format!("{case}.toml")), &d.join("imported"), &[]);
    let cc_set = format!("transport.cc=\"{cc}\"");
    let reference = run(&shipped, &d.join("shipped"), &[&cc_set]);
    // Labels aside (the shipped trace has none, so its flows are "trace0"),
    // every column of every flow is the same.
    let strip = |s: &str| s.lines().map(|l| l.split(',').enumerate().filter(|(i, _)| *i != 1).map(|(_, c)| c).collect::<Vec<_>>().join(",")).collect::<Vec<_>>();
    assert_eq!(strip(&imported), strip(&reference), "{case} --cc {run_py}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn ns3_incast_and_websearch_import_as_the_validation_scenarios() {
    for cc in ["dcqcn", "hpcc", "timely", "dctcp"] {
        ns3_round_trip("ns3_incast16", cc);
        ns3_round_trip("ns3_websearch", cc);
    }
}

#[test]
fn a_fabric_csigsim_refuses_is_an_input_error_and_writes_nothing() {
    let d = tmp("split");
    // Two switches with no link between them.
    std::fs::write(d.join("t.txt"), "5 2 3\n3 4\n0 3 100Gbps 1us 0\n1 3 100Gbps 1us 0\n2 4 100Gbps 1us 0\n").unwrap();
    std::fs::write(d.join("f.txt"), "1\n0 2 3 100 1000 0\n").unwrap();
    let o = bin().arg("import").arg("ns3").arg(d.join("t.txt")).arg(d.join("f.txt")).arg("--out").arg(d.join("new")).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("t.txt: key `topology.links` of the scenario made from it: the topology is disconnected"), "{err}");
    assert_eq!(listing(&d), ["f.txt", "t.txt"], "not even the --out directory");
    std::fs::remove_dir_all(&d).unwrap();
}

/// A shipped htsim validation case's trace written as a connection matrix,
/// imported with the options its scenario implies, and run: the same flows.csv.
fn htsim_round_trip(case: &str, trace: &str, args: &[&str]) {
    let shipped = repo().join(format!("scenarios/validation/{case}.toml"));
    let csv = read(&repo().join(format!("scenarios/validation/{trace}")));
    let rows: Vec<Vec<&str>> = csv.lines().filter(|l| !l.starts_with('#')).skip(1).map(|l| l.split(',').collect()).collect();
    let mut cm = format!("Nodes 16\nConnections {}\n", rows.len());
    for r in &rows {
        let us = csigsim::units::parse_time(r[3]).unwrap().0 / 1_000_000;
        cm.push_str(&format!("{}->{} start {us} size {}\n", &r[0][1..], &r[1][1..], r[2]));
    }
    let d = tmp(&format!("rt-{case}"));
    std::fs::write(d.join(format!("{case}.cm")), cm).unwrap();
    ok(bin().arg("import").arg("htsim").arg(d.join(format!("{case}.cm"))).args(args).output().unwrap());
    let imported = run(&d.join(format!("{case}.toml")), &d.join("imported"), &[]);
    let reference = run(&shipped, &d.join("shipped"), &[]);
    assert_eq!(imported, reference, "{case}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn htsim_validation_matrices_import_as_the_shipped_scenarios() {
    htsim_round_trip("htsim_incast16", "htsim_incast16.csv", &[]);
    htsim_round_trip("htsim_perm16_paths1", "htsim_perm16.csv", &["--routing", "ecmp"]);
}
