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
fn reference_simulator_choices_are_checked() {
    check(&format!("{GOOD}[transport.dctcp]
max_cwnd = 0
"), "transport.dctcp.max_cwnd", 15, "above zero");
    check(&format!("{GOOD}[transport.dctcp]
mode = \"paced\"
"), "transport.dctcp.mode", 15, "unknown variant");
    check(&format!("{GOOD}[transport.dctcp]
rate_ai = \"0bps\"
"), "transport.dctcp.rate_ai", 15, "above zero");
    check(&format!("{GOOD}[transport.timely]
increase_rule = \"hpcc\"
"), "transport.timely.increase_rule", 15, "unknown variant");
    check(&format!("{GOOD}[transport.nscc]
window_units = \"mtu\"
"), "transport.nscc.window_units", 15, "unknown variant");
    check(&format!("{GOOD}[transport.dcqcn]
profile = \"run\"
"), "transport.dcqcn.profile", 15, "hpcc_run");
    check(&format!("{GOOD}[transport]
ack_request = 1
"), "transport.ack_request", 15, "boolean");
    check(&format!("{GOOD}[signals.int]
record = \"ns3\"
"), "signals.int.record", 15, "unknown variant");
    check(&format!("{GOOD}[signals.int]
multi = 0
"), "signals.int.multi", 15, "1 to 255");
}

#[test]
fn override_errors_say_so() {
    let ov = [csigsim::Override::parse("transport.rto=\"fast\"").unwrap()];
    let e = csigsim::scenario::load_str(GOOD, "bad.toml", Path::new("."), &ov, None).unwrap_err();
    assert!(e.to_string().contains("rto"), "{e}");
    assert!(csigsim::Override::parse("novalue").is_err());
}

fn with_sets(text: &str, sets: &[&str]) -> InputError {
    let ov: Vec<csigsim::Override> = sets.iter().map(|s| csigsim::Override::parse(s).unwrap()).collect();
    csigsim::scenario::load_str(text, "bad.toml", Path::new("."), &ov, None).expect_err("must be refused")
}

/// Checks an error's key, that it is located, and that its message holds `needle`.
fn refused(e: &InputError, key: &str, needle: &str) {
    assert_eq!(e.key.as_deref(), Some(key), "{e}");
    assert!(e.line_col.is_some(), "{e}");
    assert!(e.msg.contains(needle), "message {e} lacks {needle:?}");
}

#[test]
fn times_beyond_the_largest_time_are_refused() {
    let e = with_sets(GOOD, &["flow.0.start=\"18446744073709551615ps\""]);
    refused(&e, "flow[0].start", "largest time, 100000s");
    assert!(e.file.contains("with --set"), "{e}");
    check(&GOOD.replace("size = \"1MB\"", "size = \"1MB\"\nstart = \"100001s\""), "flow[0].start", 14, "largest time");
    check(&format!("stop = \"200000s\"\n{GOOD}"), "stop", 1, "largest time");
    check(&format!("{GOOD}[transport]\nrto = \"1000000s\"\n"), "transport.rto", 15, "largest time");
    // The largest time itself is accepted (without idle links.csv rows,
    // which would be four billion).
    let late = GOOD.replace("size = \"1MB\"", "size = \"1MB\"\nstart = \"100000s\"");
    csigsim::scenario::load_str(&format!("{late}[monitor]\nidle_rows = false\n"), "ok.toml", Path::new("."), &[], None).unwrap();
}

#[test]
fn sizes_that_overflow_the_engine_name_their_key() {
    refused(&with_sets(GOOD, &["flow.0.size=\"18446744073709551615B\""]), "flow[0].size", "at most 4294967295 packets");
    refused(&with_sets(GOOD, &["transport.header=4294967295"]), "transport.header", "largest wire size is 4294967295 bytes");
    refused(&with_sets(GOOD, &["transport.mtu=4294967295"]), "transport.mtu", "a data packet would be 4294967359 bytes");
    refused(&with_sets(GOOD, &["signals.int.per_hop=4294967295"]), "signals.int.per_hop", "per_hop 4294967295 x max_hops 5");
    refused(&with_sets(GOOD, &["transport.ack_size=4294967295", "signals.csig.type=\"delay\""]), "transport.ack_size", "an ACK would be");
    let perm = format!("{GOOD}[[workload]]\nkind = \"permutation\"\nsize = \"17600GB\"\n");
    refused(&csigsim::scenario::load_str(&perm, "bad.toml", Path::new("."), &[], None).unwrap_err(), "workload[0].size", "at most 4294967295 packets");
    // The largest flow is 2^32-1 full packets.
    let max = format!("{}B", 4_294_967_295u64 * 4096);
    csigsim::scenario::load_str(&GOOD.replace("\"1MB\"", &format!("\"{max}\"")), "ok.toml", Path::new("."), &[], None).unwrap();
}

#[test]
fn buffers_that_cannot_hold_a_packet_are_refused() {
    refused(&with_sets(GOOD, &["switch.buffer=\"1KB\"", "switch.reserved=\"0B\""]), "switch.buffer", "cannot take one data packet of 4160 bytes");
    refused(&with_sets(GOOD, &["switch.buffer=\"100KB\"", "switch.reserved=\"0B\"", "switch.dt_alpha=0.01"]), "switch.dt_alpha", "at most 1000 of the 100000 shared bytes");
    refused(&with_sets(GOOD, &["switch.ctrl_buffer=\"0B\""]), "switch.ctrl_buffer", "cannot hold one ACK of 64 bytes");
    let e = with_sets(GOOD, &["switch.ctrl_buffer=\"64B\"", "signals.csig.type=\"delay\"", "signals.csig.size=\"wide\""]);
    refused(&e, "switch.ctrl_buffer", "one ACK of 72 bytes (ack_size 64 + CSIG tag 8 + INT 0)");
    refused(&with_sets(GOOD, &["switch.mode=\"trim\"", "switch.ctrl_buffer=\"100B\"", "switch.trim_size=200"]), "switch.ctrl_buffer", "one trimmed packet");
    // 100 Gb/s over 1 us carries 12,500 bytes each way: at least 4160 + 25000.
    let e = with_sets(GOOD, &["switch.mode=\"pfc\"", "switch.pfc.headroom=\"29159B\""]);
    refused(&e, "switch.pfc.headroom", "set it to at least 29160 bytes");
    csigsim::scenario::load_str(GOOD, "ok.toml", Path::new("."), &[csigsim::Override::parse("switch.mode=\"pfc\"").unwrap(), csigsim::Override::parse("switch.pfc.headroom=\"29160B\"").unwrap()], None)
        .unwrap();
    // The mtu no longer wraps into a trim_size error.
    refused(&with_sets(GOOD, &["switch.trim_size=100000"]), "switch.trim_size", "one packet (4160 bytes)");
}

#[test]
fn text_that_is_not_utf8_is_located() {
    let dir = std::env::temp_dir().join(format!("csigsim-utf8-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.toml");
    let mut bytes = GOOD.as_bytes().to_vec();
    let at = GOOD.find("\"h1\"").unwrap() + 2; // line 4, after `hosts = ["h0", "h`
    bytes.insert(at, 0xff);
    std::fs::write(&path, &bytes).unwrap();
    let e = csigsim::scenario::load_file(&path, &[], None).unwrap_err();
    assert_eq!(e.line_col, Some((4, 18)), "{e}");
    assert!(e.to_string().contains("bad.toml:4:18: the file is not valid UTF-8"), "{e}");
    std::fs::write(dir.join("t.csv"), b"src,dst,size\nh0,h\xff1,1MB\n").unwrap();
    let text = format!("{GOOD}[[workload]]\nkind = \"trace\"\nfile = \"t.csv\"\n");
    let e = csigsim::scenario::load_str(&text, "s.toml", &dir, &[], None).unwrap_err();
    assert!(e.file.ends_with("t.csv") && e.line_col == Some((2, 5)), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn long_values_are_cut_short_in_messages() {
    let long = "h".repeat(5000);
    let e = err(&GOOD.replace("dst = \"h1\"", &format!("dst = \"{long}\"")));
    assert!(e.msg.contains("... (5000 characters)"), "{e}");
    assert!(e.to_string().len() < 300, "{e}");
    let e = err(&GOOD.replace("size = \"1MB\"", &format!("size = \"1{}\"", "M".repeat(500))));
    assert!(e.to_string().len() < 400, "{e}");
}

#[test]
fn seeds_take_the_whole_64_bit_range() {
    let sc = csigsim::scenario::load_str(GOOD, "ok.toml", Path::new("."), &[], Some(u64::MAX)).unwrap();
    assert_eq!(sc.seed, u64::MAX);
    assert!(sc.resolved_toml.contains("seed = \"18446744073709551615\""), "{}", sc.resolved_toml);
    // The scenario as run runs again with the same seed.
    let again = csigsim::scenario::load_str(&sc.resolved_toml, "as-run.toml", Path::new("."), &[], None).unwrap();
    assert_eq!(again.seed, u64::MAX);
    let sc = csigsim::scenario::load_str(GOOD, "ok.toml", Path::new("."), &[], Some(7)).unwrap();
    assert!(sc.resolved_toml.contains("seed = 7"), "{}", sc.resolved_toml);
    check(&format!("seed = \"12x\"\n{GOOD}"), "seed", 1, "decimal digits");
    check(&format!("seed = -1\n{GOOD}"), "seed", 1, "negative");
}

/// A scenario with a trace of `csv`; the error it gives.
fn trace_err(csv: &str) -> InputError {
    let dir = std::env::temp_dir().join(format!("csigsim-trace-err-{}-{}", std::process::id(), csv.len()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("t.csv"), csv).unwrap();
    let text = format!("{GOOD}[[workload]]\nkind = \"trace\"\nfile = \"t.csv\"\n");
    let e = csigsim::scenario::load_str(&text, "s.toml", &dir, &[], None).expect_err("must be refused");
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(e.file.ends_with("t.csv"), "{e}");
    e
}

#[test]
fn trace_errors_point_at_the_cell() {
    let e = trace_err("src,dst,size,strat\nh0,h1,1MB,5us\n");
    assert_eq!(e.line_col, Some((1, 14)), "{e}");
    assert!(e.msg.contains("unknown column \"strat\""), "{e}");
    let e = trace_err("src,dst,size,src\nh0,h1,1MB,h0\n");
    assert_eq!(e.line_col, Some((1, 14)), "{e}");
    assert!(e.msg.contains("\"src\" twice"), "{e}");
    let e = trace_err("src,dst,size\nh0,\"h1,1MB\n");
    assert_eq!(e.line_col, Some((2, 4)), "{e}");
    assert!(e.msg.contains("unterminated quote"), "{e}");
    let e = trace_err("# flows\nsrc, dst, size, start\nh0, h1, 1MB, 5 parsecs\n");
    assert_eq!((e.key.as_deref(), e.line_col), (Some("start"), Some((3, 14))), "{e}");
    let e = trace_err("src,dst,size\nh0,h1,0\n");
    assert_eq!((e.key.as_deref(), e.line_col), (Some("size"), Some((2, 7))), "{e}");
    let e = trace_err("src,dst,size\nh0,h1,1MB,extra\n");
    assert_eq!(e.line_col, Some((2, 11)), "{e}");
    let e = trace_err("src,dst,size,start\nh0,h1,1MB,200000s\n");
    assert_eq!((e.key.as_deref(), e.line_col), (Some("start"), Some((2, 11))), "{e}");
    assert!(e.msg.contains("largest time"), "{e}");
}

/// A workload's time without a unit, or with a unit it does not know, is
/// reported at the workload's key, not at the workload.
#[test]
fn a_workload_value_is_reported_at_its_key() {
    let base = GOOD.replace("[[flow]]\nsrc = \"h0\"\ndst = \"h1\"\nsize = \"1MB\"\n", "");
    let poisson = |duration: &str| format!("{base}[[workload]]\nkind = \"poisson\"\nload = 0.3\ncdf = \"websearch\"\nduration = {duration}\n");
    check(&poisson("5"), "workload[0].duration", 14, "a plain number is not a time");
    check(&poisson("\"5 parsec\""), "workload[0].duration", 14, "unknown unit \"parsec\"");
    // A value that is fine leaves the error where the parser put it.
    let e = err(&format!("{base}[[workload]]\nkind = \"poisson\"\nload = \"high\"\ncdf = \"websearch\"\nduration = \"1ms\"\n"));
    assert_ne!(e.key.as_deref(), Some("workload[0].duration"), "{e}");
}

/// Every message is one line, and the Greek mu is a micro sign.
#[test]
fn unit_errors_fit_on_one_line_and_greek_mu_is_micro() {
    for text in [GOOD.replacen("rate = \"100Gbps\"", "rate = \"100Gbit\"", 1), GOOD.replacen("delay = \"1us\"", "delay = 1", 1)] {
        let e = err(&text);
        assert!(!e.to_string().contains('\n'), "{e:?}");
        assert_eq!(e.key.as_deref(), Some("topology.links[0].rate").filter(|_| text.contains("Gbit")).or(Some("topology.links[0].delay")), "{e}");
    }
    let mu = GOOD.replacen("delay = \"1us\"", "delay = \"1\u{3bc}s\"", 1);
    csigsim::scenario::load_str(&mu, "mu.toml", Path::new("."), &[], None).unwrap();
}

#[test]
fn csig_bucket_edges_are_located_by_position() {
    let text = format!("{GOOD}[signals.csig]\ntype = \"delay\"\n[signals.csig.buckets]\ndelay = [\"1us\",\n  \"5us\",\n  \"4us\"]\n");
    check(&text, "signals.csig.buckets.delay[2]", 19, "strictly increasing");
    let e = with_sets(GOOD, &["signals.csig.type=\"delay\"", "signals.csig.buckets.abw_c=[0.5, 1.5, 0.7]"]);
    refused(&e, "signals.csig.buckets.abw_c[2]", "edge 2 is not above edge 1");
}
