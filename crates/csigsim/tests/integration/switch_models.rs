//! Switch-side model choices where the reference simulators differ:
//! `switch.ecn_at`, `switch.control_queue`, `switch.trim_victim` and
//! `[[switch.pfc_rule]]` (docs/model.md, "Switch model choices").

use crate::common::{dumbbell, load_with};
use csigsim::units::tx_time_ps;
use csigsim::World;
use std::path::Path;

/// Runs `w` in steps of `step` ps until `done` holds; returns the time it first did.
fn first_time(w: &mut World, step: u64, limit: u64, done: impl Fn(&World) -> bool) -> u64 {
    let mut t = 0;
    while t < limit {
        t += step;
        w.run_until(t);
        if done(w) {
            return t;
        }
    }
    panic!("not seen by {limit} ps");
}

/// Two senders at line rate into one receiver: the s0 -> s1 queue grows by
/// 100 Gb/s. Step marking at 100 KB: the queue holds 8 us of data when it
/// first crosses the threshold.
fn first_ce(ecn_at: &str) -> u64 {
    let extra = format!(
        "[switch]\necn_at = \"{ecn_at}\"\necn = {{ kmin = \"100KB\", kmax = \"100KB\", pmax = 1.0 }}\n[[workload]]\nkind = \"incast\"\nreceiver = \"rx\"\nsize = \"1MB\"\n"
    );
    let mut w = World::new(load_with(&dumbbell(2, &extra), &[]));
    // The first CE mark reaches the receiver; its ACK leaves at once and
    // takes the same uncongested way back in both runs.
    first_time(&mut w, 1_000, 100_000_000, |w| w.flows().iter().any(|f| f.ce_marks > 0))
}

#[test]
fn dequeue_marking_signals_one_queueing_delay_earlier() {
    let (enq, deq) = (first_ce("enqueue"), first_ce("dequeue"));
    // Marking at enqueue flags the packet that joins behind 100 KB; it then
    // waits those 100 KB out (8 us at 100 Gb/s). Marking at dequeue flags the
    // packet leaving as 100 KB wait behind it, which happens about when the
    // enqueue-marked packet joined.
    let qdelay = tx_time_ps(100_000, 100_000_000_000);
    let packet = tx_time_ps(4096 + 64, 100_000_000_000);
    assert!(deq < enq, "dequeue {deq} ps, enqueue {enq} ps");
    let earlier = enq - deq;
    assert!(earlier.abs_diff(qdelay) <= 2 * packet, "earlier by {earlier} ps, queueing delay {qdelay} ps");
}

/// One sender (h0) bursts 40 packets towards h2, whose 10 Gb/s link backs
/// them up at the switch; at 30 us h2 sends one packet to h3, whose ACK
/// comes back through that backlog. `backlog = false` leaves h0 idle.
fn ack_case(control_queue: &str, backlog: bool) -> World {
    let size = if backlog { 40 * 4096 } else { 4096 };
    let toml = format!(
        r#"name = "ack behind data"
[topology]
kind = "custom"
hosts = ["h0", "h2", "h3"]
switches = ["s"]
links = [
  {{ a = "h0", b = "s", rate = "100Gbps", delay = "1us" }},
  {{ a = "s", b = "h2", rate = "10Gbps", delay = "1us" }},
  {{ a = "h3", b = "s", rate = "100Gbps", delay = "1us" }},
]
[switch]
control_queue = "{control_queue}"
[[flow]]
src = "h0"
dst = "h2"
size = {size}
[[flow]]
src = "h2"
dst = "h3"
size = 4096
start = "30us"
"#
    );
    World::new(load_with(&toml, &[]))
}

/// From the start of flow `f` to its sender learning, by the last ACK, that it is done.
fn ack_time(w: &mut World, f: usize) -> u64 {
    w.run(u64::MAX);
    let f = &w.flows()[f];
    f.sender_done_ps.expect("the flow finishes") - f.start_ps
}

#[test]
fn a_shared_control_queue_holds_an_ack_behind_the_data_backlog() {
    let data_wire = 4096 + 64;
    let ser = tx_time_ps(data_wire, 10_000_000_000);
    // How many data packets are ahead of the ACK when it joins the shared
    // queue: the queue then holds them and the ACK (64 bytes).
    let mut w = ack_case("shared", true);
    let s_h2 = w.port_between("s", "h2").unwrap();
    let seen = first_time(&mut w, 1_000, 100_000_000, |w| w.ports()[s_h2].queue_bytes() % data_wire != 0);
    let q = w.ports()[s_h2].queue_bytes();
    let ahead = q / data_wire;
    assert!(ahead >= 5, "a real backlog: {ahead} packets at {seen} ps");
    let shared = ack_time(&mut w, 1);
    let priority = ack_time(&mut ack_case("priority", true), 1);
    let idle = ack_time(&mut ack_case("priority", false), 1);
    // Shared: the ACK waits for every packet ahead of it to serialize.
    assert_eq!(shared - priority, ahead * ser, "{ahead} packets of {ser} ps");
    // Priority: it waits at most for the packet already on the wire.
    assert!(priority - idle < ser, "priority {priority} ps, idle {idle} ps");
}

/// One sender at 400 Gb/s into a 100 Gb/s port of a trimming switch with a
/// small buffer: the queue fills and most later packets do not fit.
fn trim_toml(victim: &str, seed: u64) -> String {
    format!(
        r#"name = "trim victim"
seed = {seed}
[topology]
kind = "custom"
hosts = ["h0", "rx"]
switches = ["s"]
links = [
  {{ a = "h0", b = "s", rate = "400Gbps", delay = "1us" }},
  {{ a = "s", b = "rx", rate = "100Gbps", delay = "1us" }},
]
[switch]
mode = "trim"
buffer = "40KB"
trim_victim = "{victim}"
[[flow]]
src = "h0"
dst = "rx"
size = {}
"#,
        32 * 4096
    )
}

/// The first frame of each PSN on s -> rx: true when it went out whole,
/// false when trimmed (from the capture's index).
fn first_frames(victim: &str, seed: u64) -> Vec<bool> {
    let dir = std::env::temp_dir().join(format!("csigsim-trim-{victim}-{seed}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sc = csigsim::scenario::load_str(&trim_toml(victim, seed), "t.toml", Path::new("."), &[], None).unwrap_or_else(|e| panic!("{e}"));
    let filter = csigsim::output::capture::CaptureFilter { links: vec![("s".into(), "rx".into())], snaplen: 128, ..Default::default() };
    let opts = csigsim::RunOptions { capture: Some((dir.join("c.pcap"), filter)), ..Default::default() };
    let out = csigsim::run_with(sc, &opts, |_| true).unwrap();
    assert_eq!(out.summary.flows_completed, 1);
    let index = std::fs::read_to_string(dir.join("c.pcap.csv")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let mut first: Vec<Option<bool>> = vec![None; 32];
    for row in index.lines().skip(1) {
        let c: Vec<&str> = row.split(',').collect();
        let (kind, psn) = (c[4], c[6].parse::<usize>().unwrap());
        if kind == "data" || kind == "trimmed" {
            first[psn].get_or_insert(kind == "data");
        }
    }
    first.into_iter().map(|f| f.expect("every PSN crosses s -> rx")).collect()
}

#[test]
fn trimming_the_arriving_packet_cuts_the_end_of_a_burst() {
    let whole = first_frames("arriving", 1);
    assert!(whole[..4].iter().all(|&w| w), "the first packets fit: {whole:?}");
    assert!(whole.iter().filter(|&&w| !w).count() >= 10, "{whole:?}");
    // The last packet arrives at a full queue and is the one cut.
    assert!(!whole[31], "{whole:?}");
}

#[test]
fn trimming_the_last_queued_packet_keeps_the_newest() {
    let whole = first_frames("last_queued", 1);
    let arriving = first_frames("arriving", 1);
    // Each refusal cuts one packet either way, so as many are trimmed...
    let cut = |v: &[bool]| v.iter().filter(|&&w| !w).count();
    assert_eq!(cut(&whole), cut(&arriving));
    // ...but the newest packet always takes the place of the one before it:
    // the last packet goes out whole, and the one before it is cut.
    assert!(whole[31] && !whole[30], "{whole:?}");
}

#[test]
fn either_victim_is_a_fair_coin_per_refusal_drawn_from_the_seed() {
    assert_eq!(first_frames("either", 7), first_frames("either", 7), "the same seed, the same choices");
    // The last packet arrives at a full queue: it is kept whole exactly when
    // the coin picks the last queued packet instead.
    let kept = (0..40).filter(|&s| first_frames("either", s)[31]).count();
    assert!((8..=32).contains(&kept), "{kept} of 40 seeds kept the last packet");
}

/// Hosts on 100 Gb/s to two leaves, leaves on 400 Gb/s to a spine.
const TWO_SPEEDS: &str = concat!(
    crate::two_speeds_topology!(),
    r#"[switch]
mode = "pfc"
pfc = { alpha = 0.125, xon_delta = "3KB" }
[[switch.pfc_rule]]
rate = "400Gbps"
pfc = { alpha = 0.5 }
[[switch.pfc_rule]]
switch = "spine"
pfc = { xon_delta = "6KB" }
[[flow]]
src = "h0"
dst = "h2"
size = "10KB"
"#
);

#[test]
fn pfc_rules_give_ports_of_the_selected_speed_their_thresholds() {
    let w = World::new(load_with(TWO_SPEEDS, &[]));
    let th = |a: &str, b: &str| w.ports()[w.port_between(a, b).unwrap()].pfc_thresholds();
    // Host-facing ports keep switch.pfc.
    assert_eq!(th("leaf0", "h0"), (0.125, 3_000));
    // 400 Gb/s ports take the speed rule's alpha (ns-3 doubles alpha per
    // doubling of speed over the NIC's: 1/8 -> 1/2 at 4x).
    assert_eq!(th("leaf1", "spine"), (0.5, 3_000));
    // A later rule changes only the key it sets.
    assert_eq!(th("spine", "leaf0"), (0.5, 6_000));
}

#[test]
fn a_pfc_rule_threshold_changes_when_the_port_pauses() {
    // Four senders into one receiver: s0's uplink backs up into its four
    // host-facing ingress ports, which pause the hosts. With alpha 8 instead
    // of 1/8 on those ports alone, each may hold far more of the shared
    // buffer before it pauses, and pauses less often.
    let run = |alpha: &str| {
        let extra = format!(
            "[switch]\nmode = \"pfc\"\nbuffer = \"2MB\"\n[[switch.pfc_rule]]\nswitch = \"s0\"\ndown = true\npfc = {{ alpha = {alpha} }}\n[[workload]]\nkind = \"incast\"\nreceiver = \"rx\"\nsize = \"1MB\"\n"
        );
        let mut w = World::new(load_with(&dumbbell(4, &extra), &[]));
        w.run(u64::MAX);
        assert_eq!(w.stats().flows_completed, 4);
        w.stats().pauses_sent
    };
    let (low, high) = (run("0.125"), run("8.0"));
    assert!(low > 0, "the incast pauses with the default alpha");
    assert!(high < low, "alpha 8 pauses {high} times, 1/8 {low} times");
}

fn refused(text: &str) -> csigsim::InputError {
    csigsim::scenario::load_str(text, "bad.toml", Path::new("."), &[], None).expect_err("must be refused")
}

#[test]
fn switch_model_keys_are_validated_with_key_and_position() {
    let check = |text: &str, key: &str, needle: &str| {
        let e = refused(text);
        assert_eq!(e.key.as_deref(), Some(key), "{e}");
        assert!(e.line_col.is_some(), "{e}");
        assert!(e.to_string().starts_with("bad.toml:"), "{e}");
        assert!(e.to_string().contains(needle), "{e} lacks {needle:?}");
    };
    check(&TWO_SPEEDS.replace("switch = \"spine\"", "switch = \"spine9\""), "switch.pfc_rule[1].switch", "unknown switch \"spine9\"");
    check(&TWO_SPEEDS.replace("alpha = 0.5", "alpha = -1.0"), "switch.pfc_rule[0].pfc.alpha", "above zero");
    check(&TWO_SPEEDS.replace("mode = \"pfc\"", "mode = \"lossy\""), "switch.pfc_rule[0]", "not \"pfc\"");
    check(&TWO_SPEEDS.replace("pfc = { alpha = 0.5 }", "pfc = { alpha = 0.5, headroom = \"1MB\" }"), "switch.pfc_rule[0].pfc.headroom", "unknown field");
    let base = dumbbell(1, "[switch]\n");
    check(&format!("{base}ecn_at = \"egress\"\n"), "switch.ecn_at", "unknown variant");
    check(
        &format!("{base}ecn_at = \"dequeue\"\necn = {{ kmin = \"10KB\", kmax = \"20KB\", mode = \"ecp\" }}\n"),
        "switch.ecn_at",
        "decides at enqueue",
    );
    check(&format!("{base}control_queue = \"fifo\"\n"), "switch.control_queue", "unknown variant");
    check(&format!("{base}trim_victim = \"either\"\n"), "switch.trim_victim", "not \"trim\"");
    check(&format!("{base}mode = \"trim\"\ntrim_victim = \"oldest\"\n"), "switch.trim_victim", "unknown variant");
}

/// Eight senders at 400 Gb/s into one 100 Gb/s port of a trimming switch
/// with a small buffer: a flood of trimmed headers (1,000 B each, so that a
/// few of them outweigh a data packet) meets a full data queue.
fn header_flood(service: &str) -> String {
    let hosts: Vec<String> = (0..8).map(|i| format!("h{i}")).collect();
    let links: Vec<String> = hosts.iter().map(|h| format!("  {{ a = \"{h}\", b = \"s\", rate = \"400Gbps\", delay = \"1us\" }},\n")).collect();
    let flows: Vec<String> = hosts.iter().map(|h| format!("[[flow]]\nsrc = \"{h}\"\ndst = \"rx\"\nsize = {}\n", 16 * 4096)).collect();
    format!(
        "name = \"header flood\"\n[topology]\nkind = \"custom\"\nhosts = [{}, \"rx\"]\nswitches = [\"s\"]\nlinks = [\n{}  {{ a = \"s\", b = \"rx\", rate = \"100Gbps\", delay = \"1us\" }},\n]\n\
         [switch]\nmode = \"trim\"\nbuffer = \"40KB\"\ntrim_size = 1000\nheader_service = \"{service}\"\n{}",
        hosts.iter().map(|h| format!("\"{h}\"")).collect::<Vec<_>>().join(", "),
        links.concat(),
        flows.concat()
    )
}

/// For each packet trimmed at s (its first frame on s -> rx a header): the
/// data packets that started on s -> rx after the header reached s and
/// before the header itself did.
fn data_ahead_of_headers(service: &str) -> Vec<usize> {
    let dir = std::env::temp_dir().join(format!("csigsim-headers-{service}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sc = csigsim::scenario::load_str(&header_flood(service), "t.toml", Path::new("."), &[], None).unwrap_or_else(|e| panic!("{e}"));
    let filter = csigsim::output::capture::CaptureFilter { snaplen: 128, ..Default::default() };
    let opts = csigsim::RunOptions { capture: Some((dir.join("c.pcap"), filter)), ..Default::default() };
    let out = csigsim::run_with(sc, &opts, |_| true).unwrap();
    assert_eq!(out.summary.flows_completed, 8);
    let index = std::fs::read_to_string(dir.join("c.pcap.csv")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    // (flow, psn) -> when its first copy reached s; the frames on s -> rx.
    let mut reached = std::collections::HashMap::new();
    let mut out_frames: Vec<(f64, bool, (u32, u32))> = Vec::new();
    for row in index.lines().skip(1) {
        let c: Vec<&str> = row.split(',').collect();
        let (t, from, to, kind) = (c[1].parse::<f64>().unwrap(), c[2], c[3], c[4]);
        let key = (c[5].parse::<u32>().unwrap(), c[6].parse::<u32>().unwrap());
        if kind == "data" && to == "s" {
            // Serialized at 400 Gb/s, then 1 us on the link.
            let wire: f64 = c[7].parse().unwrap();
            reached.entry(key).or_insert(t + wire * 8.0 / 400.0 + 1000.0);
        } else if from == "s" && to == "rx" && (kind == "data" || kind == "trimmed") {
            out_frames.push((t, kind == "data", key));
        }
    }
    let mut seen = std::collections::HashSet::new();
    let mut ahead = Vec::new();
    for &(t, data, key) in &out_frames {
        if !seen.insert(key) || data {
            continue;
        }
        let at = reached[&key];
        ahead.push(out_frames.iter().filter(|&&(u, d, _)| d && u > at + 1e-3 && u < t).count());
    }
    assert!(ahead.len() >= 20, "the flood trims: {} headers", ahead.len());
    ahead
}

#[test]
fn strict_headers_never_wait_behind_data() {
    let strict = data_ahead_of_headers("strict");
    assert!(strict.iter().all(|&n| n == 0), "{strict:?}");
    // Taking turns, some header let a data packet go first.
    let weighted = data_ahead_of_headers("weighted");
    assert!(weighted.iter().any(|&n| n > 0), "{weighted:?}");
}

#[test]
fn header_weight_is_checked() {
    let base = "[switch]\nmode = \"trim\"\n";
    let check = |extra: &str, needle: &str| {
        let e = csigsim::scenario::load_str(&format!("{}{base}{extra}", crate::common::dumbbell(1, "")), "t.toml", Path::new("."), &[], None);
        let e = e.expect_err("refused");
        assert_eq!(e.key.as_deref(), Some("switch.header_weight"), "{e}");
        assert!(e.msg.contains(needle), "{e}");
    };
    check("header_weight = 0\n", "at least 1");
    check("header_service = \"strict\"\nheader_weight = 4\n", "applies to header_service");
}

/// A capture runs partitioned and writes the files of one thread, byte for
/// byte: every frame of a k = 4 fat tree's permutation (ECN marks, trims
/// and control packets among them), and a capture filtered by flow and
/// time.
#[test]
fn a_capture_on_partitions_is_the_capture_of_one_thread() {
    let toml = "name = \"capture\"\nseed = 2\n[topology]\nkind = \"fat_tree\"\nk = 4\n[switch]\nmode = \"trim\"\nbuffer = \"20KB\"\nrouting = \"spray\"\necn = { kmin = \"4KB\", kmax = \"16KB\", pmax = 0.5 }\n[transport]\ncc = \"nscc\"\n[[workload]]\nkind = \"permutation\"\nsize = \"300KB\"\n";
    let dir = std::env::temp_dir().join(format!("csigsim-capture-parts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let capture = |name: &str, filter: &csigsim::output::capture::CaptureFilter, threads: usize, partitions: usize| {
        let sc = csigsim::scenario::load_str(toml, "c.toml", Path::new("."), &[], None).unwrap();
        let pcap = dir.join(format!("{name}-{threads}-{partitions}.pcap"));
        let opts = csigsim::RunOptions { capture: Some((pcap.clone(), filter.clone())), threads, partitions, ..Default::default() };
        let out = csigsim::run_with(sc, &opts, |_| true).unwrap();
        assert_eq!(out.summary.flows_completed, 16);
        (out.threads.partitions, out.threads.refused.clone(), std::fs::read(&pcap).unwrap(), std::fs::read_to_string(pcap.with_extension("pcap.csv")).unwrap())
    };
    let all = csigsim::output::capture::CaptureFilter { snaplen: 128, ..Default::default() };
    let some = csigsim::output::capture::CaptureFilter { flows: vec![csigsim::id::FlowId(3), csigsim::id::FlowId(9)], start_ps: 5_000_000, end_ps: Some(40_000_000), snaplen: 64, ..Default::default() };
    for (name, filter) in [("all", &all), ("some", &some)] {
        let (_, _, pcap, index) = capture(name, filter, 1, 0);
        let rows = index.lines().count() - 1;
        assert!(rows > if name == "all" { 5_000 } else { 20 }, "{name}: {rows} frames");
        assert!(index.contains(",trimmed,") || name == "some", "{name}: the capture has trimmed frames");
        for (threads, partitions) in [(2, 2), (1, 4), (3, 3)] {
            let (cut, refused, p, i) = capture(name, filter, threads, partitions);
            assert_eq!((cut, refused), (partitions as u32, None));
            assert!(i == index, "{name}: the index on {partitions} partitions differs");
            assert!(p == pcap, "{name}: the pcap on {partitions} partitions differs");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
