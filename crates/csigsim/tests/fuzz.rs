//! Fuzzing of everything that reads user or wire input: scenario loading and
//! validation (and a short run of what validates), trace files (CSV, GOAL
//! schedules, Chakra execution traces), the CSIG tag,
//! frame and pcap decoders, and the unit parsers. None may panic: bad input
//! is an error.
//!
//! Generation is property-based and coverage-free (it runs on stable Rust):
//! scenarios are the shipped ones with structure-aware mutations (numbers
//! swapped for edge values, units swapped, lines deleted, duplicated or
//! swapped, truncation, random bytes), the other inputs are arbitrary or
//! near-valid bytes. `CSIGSIM_FUZZ_CASES` sets the cases per target (default
//! 2,000; `make fuzz` runs many more). Inputs that once crashed live in
//! `tests/fuzz_corpus/<target>/` and are replayed by every run.

use csigsim::wire::{read_pcap, CsigCodec, FrameRepr};
use csigsim::Override;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, RngSeed};
use std::path::{Path, PathBuf};

fn cases() -> u32 {
    std::env::var("CSIGSIM_FUZZ_CASES").ok().and_then(|s| s.trim().parse().ok()).unwrap_or(2_000)
}

/// The seed of the case generator: fixed (so that `cargo test` is
/// reproducible), unless `CSIGSIM_FUZZ_SEED` sets one or `random` asks for a
/// fresh one per run (as `make fuzz` does).
fn seed() -> RngSeed {
    match std::env::var("CSIGSIM_FUZZ_SEED").ok().as_deref().map(str::trim) {
        Some("random") => RngSeed::Random,
        Some(s) => RngSeed::Fixed(s.parse().unwrap_or(1)),
        None => RngSeed::Fixed(1),
    }
}

fn config() -> Config {
    Config { cases: cases(), failure_persistence: Some(Box::new(FileFailurePersistence::Off)), rng_seed: seed(), ..Config::default() }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scenarios_dir() -> PathBuf {
    root().join("scenarios")
}

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_corpus").join(target);
    let mut out: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_file()).collect())
        .unwrap_or_default();
    out.sort();
    out.into_iter().map(|p| (p.clone(), std::fs::read(&p).unwrap())).collect()
}

/// The shipped scenarios, (file name, text), in name order.
fn shipped() -> &'static [(String, String)] {
    static S: std::sync::OnceLock<Vec<(String, String)>> = std::sync::OnceLock::new();
    S.get_or_init(|| {
        let mut v: Vec<_> = std::fs::read_dir(scenarios_dir())
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
            .collect();
        v.sort();
        v
    })
}

// ---------------------------------------------------------------- scenarios

/// Loads a scenario (it must not panic); if it validates, runs it for a short
/// simulated time and a bounded number of events and checks the invariants.
fn load_and_run(text: &str, base: &Path) {
    let Ok(_) = csigsim::scenario::load_str(text, "fuzz.toml", base, &[], None) else { return };
    let stop = [Override { key: "stop".into(), value: "\"50us\"".into() }];
    let Ok(sc) = csigsim::scenario::load_str(text, "fuzz.toml", base, &stop, None) else { return };
    // Very large fabrics take long to build; they are loaded but not run.
    if sc.flow_count() > 20_000 {
        return;
    }
    let out = csigsim::run(sc, |_| false);
    assert!(out.summary.invariants_ok, "invariants violated on:\n{text}");
}

const EDGE_NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "-0",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "99999999999999999999999",
    "1e308",
    "-1e308",
    "1e-320",
    "nan",
    "inf",
    "-inf",
    "0.5",
    "-0.5",
    "0x10",
    "1_000",
];

const UNITS: &[&str] = &[
    "", "ps", "ns", "us", "ms", "s", "B", "KB", "MB", "GB", "TB", "KiB", "bps", "Kbps", "Mbps", "Gbps", "Tbps", "x",
    " ", "µs", "e9",
];

#[derive(Clone, Debug)]
enum Mutation {
    /// Replace the n-th number with an edge value.
    Number(usize, usize),
    /// Replace the n-th unit suffix (letters right after a digit).
    Unit(usize, usize),
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    Truncate(usize),
    Insert(usize, Vec<u8>),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), 0..EDGE_NUMBERS.len()).prop_map(|(n, v)| Mutation::Number(n, v)),
        2 => (any::<usize>(), 0..UNITS.len()).prop_map(|(n, u)| Mutation::Unit(n, u)),
        2 => any::<usize>().prop_map(Mutation::DeleteLine),
        1 => any::<usize>().prop_map(Mutation::DuplicateLine),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        1 => any::<usize>().prop_map(Mutation::Truncate),
        1 => (any::<usize>(), prop::collection::vec(any::<u8>(), 1..8)).prop_map(|(at, b)| Mutation::Insert(at, b)),
    ]
}

/// Byte spans of the numbers in `s` (a run of digits, with a sign and a fraction).
fn numbers(s: &str) -> Vec<(usize, usize)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) {
            let start = if i > 0 && b[i - 1] == b'-' { i - 1 } else { i };
            let mut j = i;
            while j < b.len() && (b[j].is_ascii_digit() || b[j] == b'.') {
                j += 1;
            }
            out.push((start, j));
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// Byte spans of unit suffixes: the letters right after a number.
fn units(s: &str) -> Vec<(usize, usize)> {
    let b = s.as_bytes();
    numbers(s)
        .into_iter()
        .filter_map(|(_, end)| {
            let mut j = end;
            while j < b.len() && b[j].is_ascii_alphabetic() {
                j += 1;
            }
            (j > end).then_some((end, j))
        })
        .collect()
}

fn apply(text: &str, m: &Mutation) -> String {
    let replace = |spans: Vec<(usize, usize)>, n: usize, with: &str| {
        if spans.is_empty() {
            return text.to_string();
        }
        let (a, b) = spans[n % spans.len()];
        format!("{}{}{}", &text[..a], with, &text[b..])
    };
    let mut lines: Vec<&str> = text.lines().collect();
    let joined = |lines: Vec<&str>| lines.join("\n") + "\n";
    match m {
        Mutation::Number(n, v) => replace(numbers(text), *n, EDGE_NUMBERS[*v]),
        Mutation::Unit(n, u) => replace(units(text), *n, UNITS[*u]),
        _ if lines.is_empty() => text.to_string(),
        Mutation::DeleteLine(n) => {
            lines.remove(n % lines.len());
            joined(lines)
        }
        Mutation::DuplicateLine(n) => {
            let i = n % lines.len();
            lines.insert(i, lines[i]);
            joined(lines)
        }
        Mutation::SwapLines(a, b) => {
            let len = lines.len();
            lines.swap(a % len, b % len);
            joined(lines)
        }
        Mutation::Truncate(n) => {
            let b = text.as_bytes();
            String::from_utf8_lossy(&b[..n % (b.len() + 1)]).into_owned()
        }
        Mutation::Insert(at, bytes) => {
            let b = text.as_bytes();
            let at = at % (b.len() + 1);
            let mut v = b[..at].to_vec();
            v.extend_from_slice(bytes);
            v.extend_from_slice(&b[at..]);
            String::from_utf8_lossy(&v).into_owned()
        }
    }
}

/// The unmutated scenarios load and run under the fuzzer's stop override.
#[test]
fn scenario_seeds_run() {
    let stop = [Override { key: "stop".into(), value: "\"50us\"".into() }];
    for (name, text) in shipped() {
        let sc = csigsim::scenario::load_str(text, name, &scenarios_dir(), &stop, None).unwrap_or_else(|e| panic!("{e}"));
        assert!(csigsim::run(sc, |_| false).summary.invariants_ok, "{name}");
    }
}

#[test]
fn scenario_corpus() {
    for (path, bytes) in corpus("scenario") {
        eprintln!("replaying {}", path.display());
        load_and_run(&String::from_utf8_lossy(&bytes), &scenarios_dir());
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn scenario_mutations(which in any::<prop::sample::Index>(), ms in prop::collection::vec(mutation(), 1..6)) {
        let s = shipped();
        let (_, text) = &s[which.index(s.len())];
        let mut t = text.clone();
        for m in &ms {
            t = apply(&t, m);
        }
        load_and_run(&t, &scenarios_dir());
    }

    #[test]
    fn scenario_arbitrary_text(t in "\\PC{0,200}") {
        let _ = csigsim::scenario::load_str(&t, "fuzz.toml", &scenarios_dir(), &[], None);
    }

    #[test]
    fn scenario_overrides(which in any::<prop::sample::Index>(), key in "[a-z_.\\[\\]0-9]{1,24}", v in 0..EDGE_NUMBERS.len(), u in 0..UNITS.len(), quoted in any::<bool>()) {
        let s = shipped();
        let (_, text) = &s[which.index(s.len())];
        let value = format!("{}{}", EDGE_NUMBERS[v], UNITS[u]);
        let value = if quoted { format!("\"{value}\"") } else { value };
        let _ = csigsim::scenario::load_str(text, "fuzz.toml", &scenarios_dir(), &[Override { key, value }], None);
    }
}

// ---------------------------------------------------------------- end to end

/// Cases of the end-to-end target (`CSIGSIM_FUZZ_E2E_CASES`, default 16):
/// each runs a whole scenario, so far fewer than the other targets.
fn e2e_config() -> Config {
    let cases = std::env::var("CSIGSIM_FUZZ_E2E_CASES").ok().and_then(|s| s.trim().parse().ok()).unwrap_or(16);
    Config { cases, ..config() }
}

/// Wall-clock limit of one end-to-end run (`CSIGSIM_FUZZ_E2E_LIMIT_S`, default 10 s).
fn e2e_limit() -> std::time::Duration {
    let s = std::env::var("CSIGSIM_FUZZ_E2E_LIMIT_S").ok().and_then(|s| s.trim().parse().ok()).unwrap_or(10.0_f64);
    std::time::Duration::from_secs_f64(s)
}

/// Runs a mutated scenario that validates as the CLI does: to its own stop or
/// to completion (interrupted after the wall-clock limit), its monitor files
/// streamed into the staging directory of a run directory that is then
/// committed. The invariants must hold and links.csv must have its rows.
/// Bytes of monitor files one end-to-end case may write.
const E2E_MAX_OUTPUT: u64 = 256 << 20;

fn end_to_end(text: &str) {
    static CASE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let Ok(sc) = csigsim::scenario::load_str(text, "fuzz.toml", &scenarios_dir(), &[], None) else { return };
    if sc.flow_count() > 20_000 {
        return;
    }
    // A fine window is written sparse, so that a case costs disk in
    // proportion to its events, not to its simulated time.
    let sc = if sc.monitor.window.0 < 1_000_000 && sc.monitor.idle_rows {
        let sparse = [Override { key: "monitor.idle_rows".into(), value: "false".into() }];
        match csigsim::scenario::load_str(text, "fuzz.toml", &scenarios_dir(), &sparse, None) {
            Ok(sc) => sc,
            Err(_) => return,
        }
    } else {
        sc
    };
    let (window, idle_rows, links) = (sc.monitor.window.0, sc.monitor.idle_rows, sc.monitor.links);
    let ports = 2 * sc.topology.links.len() as u64;
    let n = CASE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    // A case's own parent, removed whole: it holds the run directory's lock file.
    let parent = std::env::temp_dir().join(format!("csigsim-fuzz-e2e-{}-{n}", std::process::id()));
    let out = parent.join("run");
    let dir = csigsim::output::RunDir::create(&out).unwrap();
    // The engine's output budget caps what a case writes.
    let opts = csigsim::RunOptions { stream_dir: Some(dir.staging().to_path_buf()), max_output: Some(E2E_MAX_OUTPUT), ..Default::default() };
    let started = std::time::Instant::now();
    let limit = e2e_limit();
    // Interrupted at the time limit.
    let res = csigsim::run_with(sc, &opts, |_| started.elapsed() < limit).unwrap();
    assert!(res.summary.invariants_ok, "invariants violated ({:?}) on:\n{text}", res.summary.invariant_violations);
    let staged: u64 = std::fs::read_dir(dir.staging()).unwrap().map(|e| e.unwrap().metadata().unwrap().len()).sum();
    // The budget, plus a row and the writers' buffers.
    assert!(staged <= E2E_MAX_OUTPUT + (64 << 10), "{staged} bytes of monitor files on:\n{text}");
    if res.limit.is_some() {
        assert_eq!(res.summary.end_reason, "output_limit", "{text}");
        // Dropped uncommitted, the run directory removes what it created.
        drop(dir);
        let _ = std::fs::remove_dir_all(&parent);
        return;
    }
    dir.commit(&res).unwrap();
    assert!(out.join("summary.json").is_file() && out.join("flows.csv").is_file(), "{text}");
    if links && idle_rows {
        let rows = std::io::BufRead::lines(std::io::BufReader::new(std::fs::File::open(out.join("links.csv")).unwrap())).count() as u64 - 1;
        let end_ps = (res.summary.sim_time_ns * 1000.0).round() as u64;
        assert_eq!(rows, (end_ps / window + 1) * ports, "links.csv rows on:\n{text}");
    }
    std::fs::remove_dir_all(&parent).unwrap();
}

proptest! {
    #![proptest_config(e2e_config())]

    #[test]
    fn scenario_end_to_end(which in any::<prop::sample::Index>(), ms in prop::collection::vec(mutation(), 1..6)) {
        let s = shipped();
        let (_, text) = &s[which.index(s.len())];
        let mut t = text.clone();
        for m in &ms {
            t = apply(&t, m);
        }
        end_to_end(&t);
    }
}

// ---------------------------------------------------------------- traces

const TRACE_SCENARIO: &str = r#"name = "trace fuzz"
[topology]
kind = "custom"
hosts = ["h0", "h1", "h2"]
switches = ["s0"]
links = [
  { a = "h0", b = "s0", rate = "100Gbps", delay = "1us" },
  { a = "h1", b = "s0", rate = "100Gbps", delay = "1us" },
  { a = "h2", b = "s0", rate = "100Gbps", delay = "1us" },
]
[[workload]]
kind = "trace"
file = "trace.csv"
"#;

/// A case's input directory, removed when the case is over (passed or not).
struct CaseDir(std::path::PathBuf);

impl CaseDir {
    fn new(kind: &str) -> CaseDir {
        let dir = std::env::temp_dir().join(format!("csigsim-fuzz-{kind}-{}-{:?}", std::process::id(), std::thread::current().id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        CaseDir(dir)
    }
}

impl Drop for CaseDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Loads the trace scenario with `csv` as its trace and runs it if it validates.
fn trace(csv: &[u8]) {
    let dir = CaseDir::new("trace");
    std::fs::write(dir.0.join("trace.csv"), csv).unwrap();
    load_and_run(TRACE_SCENARIO, &dir.0);
}

const CELLS: &[&str] = &[
    "src", "dst", "size", "start", "name", "h0", "h1", "h2", "h3", "0", "1", "2", "3", "-1", "1000", "1MB", "0B",
    "18446744073709551615", "18446744073709551616", "4294967295", "1us", "0ns", "-1us", "1e30s", "1.5", "\"h0\"",
    "\"a,b\"", "\"", "\"\"", "", " ", "x", "\u{feff}src", "1KB ", " 1KB",
];

fn csv_text() -> impl Strategy<Value = Vec<u8>> {
    let cell = prop_oneof![
        8 => (0..CELLS.len()).prop_map(|i| CELLS[i].as_bytes().to_vec()),
        1 => prop::collection::vec(any::<u8>(), 0..4),
    ];
    let row = prop::collection::vec(cell, 0..7);
    let sep = prop_oneof![Just(b"\n".to_vec()), Just(b"\r\n".to_vec()), Just(b"\r".to_vec()), Just(Vec::new())];
    (prop::collection::vec((row, sep), 0..6), any::<bool>()).prop_map(|(rows, header)| {
        let mut out = if header { b"src,dst,size,start,name\n".to_vec() } else { Vec::new() };
        for (cells, sep) in rows {
            out.extend_from_slice(&cells.join(&b","[..]));
            out.extend_from_slice(&sep);
        }
        out
    })
}

#[test]
fn trace_corpus() {
    for (path, bytes) in corpus("trace") {
        eprintln!("replaying {}", path.display());
        trace(&bytes);
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn trace_structured(csv in csv_text()) {
        trace(&csv);
    }

    #[test]
    fn trace_bytes(csv in prop::collection::vec(any::<u8>(), 0..64)) {
        trace(&csv);
    }
}

// ---------------------------------------------------------------- GOAL schedules

/// Loads the three-host scenario with `goal` as the schedule of a GOAL
/// workload and runs it if it validates.
fn goal(text: &[u8]) {
    let dir = CaseDir::new("goal");
    std::fs::write(dir.0.join("s.goal"), text).unwrap();
    let scenario = TRACE_SCENARIO.replace("kind = \"trace\"\nfile = \"trace.csv\"", "kind = \"goal\"\nfile = \"s.goal\"");
    load_and_run(&scenario, &dir.0);
}

const GOAL_WORDS: &[&str] = &[
    "num_ranks", "rank", "{", "}", "send", "recv", "calc", "to", "from", "tag", "cpu", "nic", "requires", "irequires", "l1:", "l2:", "l3", ":",
    "l1", "l2", "0", "1", "2", "3", "-1", "8b", "0b", "4096b", "18446744073709551615b", "1000", "18446744073709551615", "//", "/*", "*/", "b", "x",
];

/// Lines of schedule words: mostly well-formed statements, some random.
fn goal_text() -> impl Strategy<Value = Vec<u8>> {
    let statement = prop_oneof![
        4 => (0u32..3, 0u32..4, 1u64..10_000).prop_map(|(r, p, n)| format!("l{r}: send {n}b to {p} tag {r}")),
        4 => (0u32..3, 0u32..4, 1u64..10_000).prop_map(|(r, p, n)| format!("l{r}: recv {n}b from {p} tag {r}")),
        2 => (0u32..3, 0u64..100_000, 0u32..3).prop_map(|(l, t, c)| format!("c{l}: calc {t} cpu {c}")),
        2 => (0u32..3, 0u32..3, any::<bool>()).prop_map(|(a, b, i)| format!("l{a} {}requires l{b}", if i { "i" } else { "" })),
        2 => (0u32..4).prop_map(|r| format!("rank {r} {{")),
        2 => Just("}".to_string()),
        2 => prop::collection::vec(0..GOAL_WORDS.len(), 0..6).prop_map(|w| w.iter().map(|&i| GOAL_WORDS[i]).collect::<Vec<_>>().join(" ")),
    ];
    (prop::collection::vec(statement, 0..16), 0u32..5).prop_map(|(lines, ranks)| {
        let mut out = format!("num_ranks {ranks}\n");
        for l in lines {
            out.push_str(&l);
            out.push('\n');
        }
        out.into_bytes()
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn goal_structured(text in goal_text()) {
        goal(&text);
    }

    #[test]
    fn goal_bytes(text in prop::collection::vec(any::<u8>(), 0..64)) {
        goal(&text);
    }
}

// ---------------------------------------------------------------- Chakra traces

/// Loads the three-host scenario with `files` as the ranks' Chakra traces
/// (`t.<rank>.et`) and runs it if it validates.
fn chakra(files: &[Vec<u8>]) {
    let dir = CaseDir::new("chakra");
    for (r, f) in files.iter().enumerate() {
        std::fs::write(dir.0.join(format!("t.{r}.et")), f).unwrap();
    }
    std::fs::write(dir.0.join("comm_group.json"), r#"{"g": [0, 2], "all": [0, 1, 2]}"#).unwrap();
    let scenario = TRACE_SCENARIO.replace("kind = \"trace\"\nfile = \"trace.csv\"", "kind = \"chakra\"\npath = \"t\"");
    load_and_run(&scenario, &dir.0);
}

#[test]
fn chakra_corpus() {
    for (path, bytes) in corpus("chakra") {
        eprintln!("replaying {}", path.display());
        chakra(&[bytes.clone(), bytes]);
    }
}

const CHAKRA_ATTRS: &[&str] = &["comm_type", "comm_size", "comm_src", "comm_dst", "comm_tag", "pg_name", "is_cpu_op", "stream", "tid", "flops"];

/// An attribute of a name csigsim reads (mostly), with a value of a type
/// it reads or not.
fn chakra_attr() -> impl Strategy<Value = csigsim::workload::chakra::et::AttributeProto> {
    use csigsim::workload::chakra::et::{AttributeProto, Value};
    let value = prop_oneof![
        4 => (-2i64..5).prop_map(Value::Int64Val),
        2 => prop_oneof![Just(0u64), Just(1), Just(4096), Just(1 << 20), Just(u64::MAX)].prop_map(Value::Uint64Val),
        1 => any::<i32>().prop_map(Value::Int32Val),
        1 => any::<bool>().prop_map(Value::BoolVal),
        1 => prop_oneof![Just("g".to_string()), Just("all".to_string()), Just("x".to_string()), Just(String::new())].prop_map(Value::StringVal),
        1 => any::<f64>().prop_map(Value::DoubleVal),
    ];
    (0..CHAKRA_ATTRS.len(), prop::option::weighted(0.95, value))
        .prop_map(|(n, value)| AttributeProto { name: CHAKRA_ATTRS[n].to_string(), doc_string: String::new(), value })
}

/// Nodes of every type, with dependencies among a few ids, encoded as a
/// rank's trace; sometimes gzipped, cut short or with a byte changed.
fn chakra_rank() -> impl Strategy<Value = Vec<u8>> {
    use csigsim::workload::chakra::et::{encode_stream, GlobalMetadata, Node};
    let node = (0u64..6, 0i32..9, prop::collection::vec(0u64..7, 0..3), prop::collection::vec(0u64..7, 0..2), 0u64..2000, prop::collection::vec(chakra_attr(), 0..5))
        .prop_map(|(id, t, data_deps, ctrl_deps, duration_micros, attr)| Node { id, r#type: t, data_deps, ctrl_deps, duration_micros, attr, ..Default::default() });
    (prop::collection::vec(node, 0..7), 0u8..6, any::<prop::sample::Index>(), any::<u8>()).prop_map(|(nodes, how, at, byte)| {
        let mut b = encode_stream(&GlobalMetadata { version: "0.0.4".into(), attr: vec![] }, &nodes);
        match how {
            0 if !b.is_empty() => b.truncate(at.index(b.len())),
            1 if !b.is_empty() => {
                let i = at.index(b.len());
                b[i] = byte;
            }
            2 => {
                use std::io::Write;
                let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                gz.write_all(&b).unwrap();
                b = gz.finish().unwrap();
                if byte < 32 {
                    b.truncate(at.index(b.len()));
                }
            }
            _ => {}
        }
        b
    })
}

/// Well-formed nodes (compute, sends, receives, collectives with the
/// attributes they need) with dependencies on the rank's earlier nodes:
/// traces that mostly load, so that matching and running are exercised.
fn chakra_well_formed() -> impl Strategy<Value = Vec<u8>> {
    use csigsim::workload::chakra::et::{encode_stream, node_type, AttributeProto, GlobalMetadata, Node, Value};
    let a = |name: &str, v: Value| AttributeProto { name: name.into(), doc_string: String::new(), value: Some(v) };
    let node = (0u8..4, 0i64..3, 0i64..10, 0u64..100_000, 0u8..4, prop::collection::vec(0u64..8, 0..2), 0u64..500).prop_map(move |(k, peer, ty, size, group, deps, micros)| {
        let (t, attr) = match k {
            0 => (node_type::COMP, vec![a("is_cpu_op", Value::BoolVal(micros % 2 == 0))]),
            1 => (node_type::COMM_SEND, vec![a("comm_dst", Value::Int64Val(peer)), a("comm_size", Value::Uint64Val(size))]),
            2 => (node_type::COMM_RECV, vec![a("comm_src", Value::Int64Val(peer)), a("comm_size", Value::Int64Val(size as i64))]),
            _ => {
                let mut v = vec![a("comm_type", Value::Int64Val(ty)), a("comm_size", Value::Int64Val(size as i64))];
                if group > 0 {
                    v.push(a("pg_name", Value::StringVal(["", "g", "all", "x"][group as usize].into())));
                }
                (node_type::COMM_COLL, v)
            }
        };
        Node { r#type: t, attr, data_deps: deps, duration_micros: micros, ..Default::default() }
    });
    prop::collection::vec(node, 0..8).prop_map(move |mut nodes| {
        for (i, n) in nodes.iter_mut().enumerate() {
            n.id = i as u64;
            n.data_deps.retain(|&d| d < i as u64);
        }
        encode_stream(&GlobalMetadata::default(), &nodes)
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn chakra_traces(files in prop::collection::vec(chakra_well_formed(), 2..4)) {
        chakra(&files);
    }

    #[test]
    fn chakra_structured(files in prop::collection::vec(chakra_rank(), 1..4)) {
        chakra(&files);
    }

    #[test]
    fn chakra_bytes(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        chakra(&[bytes]);
    }
}

// ---------------------------------------------------------------- wire

fn wire(target: &str, bytes: &[u8]) {
    let codec = CsigCodec::default();
    match target {
        "csig" => {
            if let Ok((_, n)) = codec.parse(bytes) {
                assert!(n <= bytes.len(), "a tag longer than its buffer");
            }
        }
        "frame" => {
            let _ = FrameRepr::parse(&codec, bytes);
        }
        "pcap" => {
            let _ = read_pcap(bytes);
        }
        _ => unreachable!(),
    }
}

#[test]
fn wire_corpus() {
    for t in ["csig", "frame", "pcap"] {
        for (path, bytes) in corpus(t) {
            eprintln!("replaying {}", path.display());
            wire(t, &bytes);
        }
    }
}

/// Bytes that often start like the real thing: a CSIG TPID, an Ethernet
/// header, a pcap magic number, followed by arbitrary bytes.
fn near_valid() -> impl Strategy<Value = Vec<u8>> {
    let prefix = prop_oneof![
        Just(Vec::new()),
        Just(csigsim::wire::TPID_COMPACT_DEFAULT.to_be_bytes().to_vec()),
        Just(csigsim::wire::TPID_WIDE_DEFAULT.to_be_bytes().to_vec()),
        Just([[0u8; 12].as_slice(), &csigsim::wire::TPID_COMPACT_DEFAULT.to_be_bytes()].concat()),
        Just([[0u8; 12].as_slice(), &csigsim::wire::TPID_WIDE_DEFAULT.to_be_bytes()].concat()),
        Just([[0u8; 12].as_slice(), &csigsim::wire::ETHERTYPE_IPV4.to_be_bytes(), &[0x45]].concat()),
        Just(vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0]),
        Just(vec![0xa1, 0xb2, 0xc3, 0xd4, 0, 2, 0, 4]),
        Just(vec![0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0]),
        Just(vec![0xa1, 0xb2, 0x3c, 0x4d, 0, 2, 0, 4]),
    ];
    (prefix, prop::collection::vec(any::<u8>(), 0..160)).prop_map(|(mut p, rest)| {
        p.extend(rest);
        p
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn csig_tags(bytes in near_valid()) {
        wire("csig", &bytes);
    }

    #[test]
    fn frames(bytes in near_valid()) {
        wire("frame", &bytes);
    }

    #[test]
    fn pcaps(bytes in near_valid()) {
        wire("pcap", &bytes);
    }
}

// ---------------------------------------------------------------- units

fn unit_strings(s: &str) {
    let _ = csigsim::units::parse_time(s);
    let _ = csigsim::units::parse_size(s);
    let _ = csigsim::units::parse_rate(s);
}

#[test]
fn units_corpus() {
    for (path, bytes) in corpus("units") {
        eprintln!("replaying {}", path.display());
        for line in String::from_utf8_lossy(&bytes).lines() {
            unit_strings(line);
        }
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn unit_structured(n in 0..EDGE_NUMBERS.len(), u in 0..UNITS.len(), pad in "[ \t]{0,2}") {
        unit_strings(&format!("{}{pad}{}", EDGE_NUMBERS[n], UNITS[u]));
    }

    #[test]
    fn unit_arbitrary(s in "\\PC{0,12}") {
        unit_strings(&s);
    }

    #[test]
    fn unit_numeric(x in any::<f64>(), u in 0..UNITS.len()) {
        unit_strings(&format!("{x}{}", UNITS[u]));
        unit_strings(&format!("{x:e}{}", UNITS[u]));
    }
}
