//! Malformed scenarios: each error names the key and the line.

use csigsim::InputError;
use std::path::Path;

const GOOD: &str = r#"name = "ok"
[topology]
kind = "custom"
hosts = ["h0", "h1"]
switches = ["s0"]
links = [
  { a = "h0", b = "s0", rate = "100Gbps", delay = "1us" },
  { a = "s0", b = "h1", rate = "100Gbps", delay = "1us" },
]
[[flow]]
src = "h0"
dst = "h1"
size = "1MB"
"#;

fn err(text: &str) -> InputError {
    csigsim::scenario::load_str(text, "bad.toml", Path::new("."), &[], None).expect_err("must be refused")
}

fn check(text: &str, key: &str, line: usize, needle: &str) {
    let e = err(text);
    assert_eq!(e.file, "bad.toml");
    assert_eq!(e.key.as_deref(), Some(key), "{e}");
    assert_eq!(e.line_col.map(|p| p.0), Some(line), "{e}");
    assert!(e.to_string().contains(needle), "message {e:?} lacks {needle:?}");
    assert!(e.to_string().starts_with(&format!("bad.toml:{line}:")), "{e}");
}

#[test]
fn the_good_scenario_loads() {
    csigsim::scenario::load_str(GOOD, "good.toml", Path::new("."), &[], None).unwrap();
}

#[test]
fn bad_unit() {
    check(&GOOD.replace("delay = \"1us\" },\n  { a = \"s0\"", "delay = \"1 parsec\" },\n  { a = \"s0\""), "topology.links[0].delay", 7, "unknown unit");
}

#[test]
fn plain_number_for_a_time() {
    check(&GOOD.replace("size = \"1MB\"", "size = \"1MB\"\nstart = 5"), "flow[0].start", 14, "with a unit");
}

#[test]
fn unknown_key() {
    check(&GOOD.replace("[[flow]]\n", "[[flow]]\nsrc_port = 7\n"), "flow[0].src_port", 11, "unknown field `src_port`");
    check(&GOOD.replace("kind = \"custom\"", "kind = \"custom\"\nradix = 4"), "topology.radix", 4, "unknown field `radix`");
}

#[test]
fn unknown_host() {
    check(&GOOD.replace("dst = \"h1\"", "dst = \"h9\""), "flow[0].dst", 12, "unknown host \"h9\"");
}

#[test]
fn link_to_nowhere() {
    check(&GOOD.replace("{ a = \"s0\", b = \"h1\"", "{ a = \"s0\", b = \"s7\""), "topology.links[1].b", 8, "neither a host nor a switch");
}

#[test]
fn negative_size() {
    check(&GOOD.replace("size = \"1MB\"", "size = -5"), "flow[0].size", 13, "negative");
}

#[test]
fn disconnected_topology() {
    let text = GOOD
        .replace("switches = [\"s0\"]", "switches = [\"s0\", \"s1\"]")
        .replace("{ a = \"s0\", b = \"h1\"", "{ a = \"s1\", b = \"h1\"");
    check(&text, "topology.links", 6, "disconnected");
}

#[test]
fn toml_syntax_error() {
    let e = err(&GOOD.replace("size = \"1MB\"", "size = \"1MB"));
    assert_eq!(e.line_col.map(|p| p.0), Some(13), "{e}");
    assert!(e.msg.contains("TOML syntax error"), "{e}");
}

#[test]
fn unknown_topology_kind_and_missing_topology() {
    let e = err(&GOOD.replace("kind = \"custom\"", "kind = \"torus\""));
    assert!(e.to_string().contains("torus"), "{e}");
    assert_eq!(e.key.as_deref(), Some("topology.kind"));
    let e = err("name = \"x\"\n");
    assert!(e.to_string().contains("topology"), "{e}");
}

#[test]
fn bad_values_name_their_key() {
    check(&format!("{GOOD}[switch]\necn = {{ kmin = \"400KB\", kmax = \"100KB\" }}\n"), "switch.ecn.kmin", 15, "above kmax");
    check(&format!("{GOOD}[transport]\nack_every = 0\n"), "transport.ack_every", 15, "at least 1");
    check(&GOOD.replace("dst = \"h1\"", "dst = 0"), "flow[0].dst", 12, "must differ");
    check(&format!("{GOOD}[transport]\ncc = \"dcqcn_rev\"\n"), "transport.cc", 15, "mode = \"ecp\"");
    check(
        &format!("{GOOD}[switch]\necn = {{ kmin = \"1KB\", kmax = \"2KB\", mode = \"ecp\", drain_time = \"0us\" }}\n"),
        "switch.ecn.drain_time",
        15,
        "above zero",
    );
    check(&format!("{GOOD}[transport.dcqcn_rev]\ntarget_utilization = 0\n"), "transport.dcqcn_rev.target_utilization", 15, "(0, 1]");
    check(&GOOD.replace("dst = \"h1\"", "dst = 5"), "flow[0].dst", 12, "out of range");
}

#[test]
fn override_errors_say_so() {
    let ov = [csigsim::Override::parse("transport.rto=\"fast\"").unwrap()];
    let e = csigsim::scenario::load_str(GOOD, "bad.toml", Path::new("."), &ov, None).unwrap_err();
    assert!(e.to_string().contains("rto"), "{e}");
    assert!(csigsim::Override::parse("novalue").is_err());
}
