//! In-band signals end to end: CSIG max(Delay) and its locator against the
//! per-hop sojourn stamps, ABW on a loaded port, ECP versus RED on the victim.

use crate::common::load_with;
use csigsim::id::FlowId;
use csigsim::monitor::signals::Series;
use csigsim::signal::csig::{CsigConfig, CsigSetup, PortAction};
use csigsim::signal::{Signals, NO_WRITER};
use csigsim::World;
use proptest::prelude::*;
use std::path::Path;

fn scenario(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios").join(name)
}

fn port_name(w: &World, port: u32) -> String {
    let p = &w.ports()[port as usize];
    format!("{}->{}", w.node_name(p.node()), w.node_name(w.ports()[p.peer()].node()))
}

#[test]
fn max_delay_names_the_deeper_hop_and_sum_adds_both() {
    let sc = csigsim::scenario::load_file(&scenario("chain_csig_delay.toml"), &[], None).unwrap();
    let mut w = World::new(sc);
    w.run(u64::MAX);
    w.finish();
    assert!(w.check_invariants().is_empty());
    let rows = w.observers().signal_rows(FlowId(0));
    let series = |s: Series| rows.iter().filter(move |r| r.series == s);
    let mut checked = 0;
    for c in series(Series::Csig).filter(|r| r.writer.is_some()) {
        let m = series(Series::StampMax).find(|r| r.window == c.window).unwrap();
        let sum = series(Series::StampSum).find(|r| r.window == c.window).unwrap();
        // The wide tag quantizes in 128 ns steps and decodes to the upper edge:
        // never below the true maximum, at most one step above it.
        assert!(c.mean >= m.mean && c.mean - m.mean <= 128_000.0, "window {}: csig {} vs max stamp {}", c.window, c.mean, m.mean);
        assert!(c.max >= m.max && c.max - m.max <= 128_000.0);
        // The bottleneck is the deeper queue, s1 -> s2 (three cross flows), every window.
        assert_eq!(port_name(&w, c.writer.unwrap().0), "s1->s2", "window {}", c.window);
        // Both hops queue: the sum exceeds the maximum by the shallower hop's delay.
        if m.mean > 10_000_000.0 {
            assert!(sum.mean > m.mean * 1.05, "window {}: sum {} max {}", c.window, sum.mean, m.mean);
        }
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} windows with a written tag");
    // The deeper hop's delay grows to microseconds: the queue is real.
    assert!(series(Series::Csig).any(|r| r.max > 5_000_000.0));
}

const LOADED_PORT: &str = r#"
name = "60 of 100"
[topology]
kind = "custom"
hosts = ["h0", "h1"]
switches = ["s0"]
links = [
  { a = "h0", b = "s0", rate = "60Gbps", delay = "1us" },
  { a = "s0", b = "h1", rate = "100Gbps", delay = "1us" },
]
[[flow]]
src = "h0"
dst = "h1"
size = "20MB"
"#;

fn abw_rows(sets: &[&str]) -> Vec<f64> {
    let mut w = World::new(load_with(LOADED_PORT, sets));
    w.run(u64::MAX);
    w.finish();
    // Skip the first 1 ms: the meter needs a complete 256 us window.
    w.observers().signal_rows(FlowId(0)).iter().filter(|r| r.series == Series::Csig && r.window >= 10 && r.writer.is_some()).map(|r| r.mean).collect()
}

#[test]
fn abw_of_a_port_carrying_60_of_100_gbps() {
    let c = abw_rows(&["signals.csig.type=\"abw_c\""]);
    assert!(c.len() > 5);
    // Compact ABW/C: 32 bands of 1/31; conservative decode is the lower edge.
    for v in &c {
        assert!((v - 0.4).abs() <= 1.0 / 31.0, "ABW/C {v}");
    }
    let a = abw_rows(&["signals.csig.type=\"abw\""]);
    for v in &a {
        assert!((v - 40e9).abs() <= 100e9 / 31.0, "ABW {v}");
    }
    // Wide ABW: 8 Mb/s steps; a 256 us window holds 461 or 462 packets, so the
    // measurement itself moves by one packet time (0.13% of the rate).
    let a = abw_rows(&["signals.csig.type=\"abw\"", "signals.csig.size=\"wide\""]);
    for v in &a {
        assert!((v - 40e9).abs() <= 0.0014 * 100e9 + 8e6, "wide ABW {v}");
    }
}

/// The victim F3 sends at 25 Gb/s, below its fair share of every link it
/// crosses, while the incast flows (DCTCP) congest the path it shares with
/// them: it is a victim, not a contributor.
#[test]
fn ecp_spares_the_victim_that_red_marks() {
    let run = |mode: &str| {
        // Both decide at enqueue, so only the root and fair-share tests differ.
        // K = 10 KB, not the scenario's 15: the ToR uplink the victim shares
        // with F0 and F1 peaks at 14 to 19 KB depending on the order of
        // packets that reach it in one picosecond, so at 15 KB RED's marks
        // of the victim rested on a few packets (0 or 339); at 10 KB it
        // marks the victim 148 to 219 times whichever order.
        let sets = [
            "switch.ecn_at=\"enqueue\"".to_string(),
            "switch.ecn.kmin=\"10KB\"".to_string(),
            "switch.ecn.kmax=\"10KB\"".to_string(),
            format!("switch.ecn.mode=\"{mode}\""),
            "transport.cc=\"dctcp\"".to_string(),
            "flow.4.rate=\"25Gbps\"".to_string(),
        ];
        let ov: Vec<csigsim::Override> = sets.iter().map(|s| csigsim::Override::parse(s).unwrap()).collect();
        let sc = csigsim::scenario::load_file(&scenario("clos_incast_victim.toml"), &ov, None).unwrap();
        let mut w = World::new(sc);
        w.run(u64::MAX);
        assert_eq!(w.stats().flows_completed, 5);
        w.flows().iter().map(|f| f.ce_marks).collect::<Vec<u64>>()
    };
    let red = run("red");
    let ecp = run("ecp");
    // Flow 4 is the victim F3 (N3 -> N12); flows 0..3 are the incast.
    assert!(red[4] > 100, "RED marks the victim: {red:?}");
    assert_eq!(ecp[4], 0, "ECP spares the victim: {ecp:?}");
    for i in 0..4 {
        assert!(ecp[i] > 1000, "ECP still marks the congesting flow {i}: {ecp:?}");
    }
}

/// One hop of a random path: its local value, locator, port and action.
fn hop() -> impl Strategy<Value = (f64, u16, u32, u8)> {
    (0.0f64..2_000_000.0, 0u16..128, 0u32..1000, 0u8..10)
}

fn action(a: u8) -> PortAction {
    match a {
        0 => PortAction::Strip,
        1 => PortAction::Passthrough,
        _ => PortAction::Update,
    }
}

proptest! {
    #[test]
    fn the_receiver_sees_the_extreme_hop_and_its_locator(
        hops in prop::collection::vec(hop(), 1..12),
        sig in prop::sample::select(vec!["delay", "abw_c", "nqd", "abw"]),
        wide in any::<bool>(),
    ) {
        let c: CsigConfig = toml::from_str(&format!("type = \"{sig}\"\nsize = \"{}\"", if wide { "wide" } else { "compact" })).unwrap();
        let cs = CsigSetup::new(&c, 100_000_000_000).unwrap();
        // ABW/C lives in [0, 1]; ABW in [0, 100 Gb/s].
        let scale = match sig { "abw_c" => 1.0 / 2_000_000.0, "abw" => 50_000.0, _ => 1.0 };
        let mut tag = Signals::default();
        cs.init(&mut tag);
        let mut expect: Option<(u32, u16, u32)> = None;
        let mut stripped = false;
        for &(v, lm, port, a) in &hops {
            let x = v * scale;
            match action(a) {
                PortAction::Strip => { stripped = true; tag.csig_type = csigsim::signal::NO_TAG; }
                PortAction::Passthrough => {}
                PortAction::Update => {
                    cs.update(&mut tag, x, lm, port);
                    if !stripped {
                        let q = cs.encoding.encode(x);
                        let better = match expect {
                            None => cs.worse(q, cs.initial()),
                            Some((best, _, _)) => cs.worse(q, best),
                        };
                        if better { expect = Some((q, lm, port)); }
                    }
                }
            }
        }
        if stripped {
            prop_assert_eq!(tag.csig_type, csigsim::signal::NO_TAG);
        } else {
            match expect {
                Some((q, lm, port)) => {
                    prop_assert_eq!(tag.csig_value, q);
                    prop_assert_eq!(tag.csig_lm, lm);
                    prop_assert_eq!(tag.csig_writer, port);
                    // The value is the extreme of the quantized values of the updating hops.
                    let codes = hops.iter().filter(|h| action(h.3) == PortAction::Update).map(|h| cs.encoding.encode(h.0 * scale));
                    let extreme = if cs.sig.is_min() { codes.min() } else { codes.max() };
                    prop_assert_eq!(Some(q), extreme);
                }
                None => {
                    prop_assert_eq!(tag.csig_value, cs.initial());
                    prop_assert_eq!(tag.csig_writer, NO_WRITER);
                }
            }
        }
    }
}

#[test]
fn a_sender_can_tag_a_fraction_of_its_packets() {
    let sc = csigsim::scenario::load_file(
        &scenario("chain_csig_delay.toml"),
        &[csigsim::Override::parse("signals.csig.fraction=0.25").unwrap()],
        None,
    )
    .unwrap();
    let mut w = World::new(sc);
    w.run(u64::MAX);
    w.finish();
    let total = |s: Series| -> u64 { w.flows().iter().flat_map(|f| w.observers().signal_rows(f.id).iter()).filter(|r| r.series == s).map(|r| r.samples).sum() };
    // Every ACK carries stamps; a quarter of them reflect a tag.
    let ratio = total(Series::Csig) as f64 / total(Series::StampMax) as f64;
    assert!((ratio - 0.25).abs() < 0.02, "tagged fraction {ratio}");
}

#[test]
fn int_records_every_switch_hop_and_costs_its_bytes() {
    let sc = csigsim::scenario::load_file(&scenario("chain_csig_delay.toml"), &[csigsim::Override::parse("signals.int.max_hops=5").unwrap()], None).unwrap();
    let mut w = World::new(sc);
    w.run(u64::MAX);
    w.finish();
    let rows: Vec<_> = w.observers().signal_rows(FlowId(0)).iter().collect();
    // The main flow crosses s0, s1 and s2: three records on every ACK.
    let hops: Vec<f64> = rows.iter().filter(|r| r.series == Series::IntHops).map(|r| r.mean).collect();
    assert!(!hops.is_empty() && hops.iter().all(|&h| h == 3.0), "{hops:?}");
    // s1 -> s2 queues: some record reports a queue.
    assert!(rows.iter().any(|r| r.series == Series::IntMaxQlen && r.max > 100_000.0));
    // 2 + 8 * 5 = 42 bytes on every data packet of the 4096-byte payload.
    let sent = w.flows()[0].bytes_sent;
    let npkts = w.flows()[0].npkts as u64;
    assert_eq!(sent, 2_000_000 + npkts * (64 + 8 + 42));
}
