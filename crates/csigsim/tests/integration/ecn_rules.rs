//! Per-port ECN marking: `switch.ecn` for every switch port, `[[switch.ecn_rule]]`
//! to change it by switch, tier, port, link speed or direction.

use crate::common::{dumbbell, load_with};
use csigsim::id::PortId;
use csigsim::units::Size;
use csigsim::World;

/// Two tiers: hosts on 100 Gb/s to two leaves, leaves on 400 Gb/s to one spine.
const TWO_SPEEDS: &str = concat!(
    crate::two_speeds_topology!(),
    r#"[switch]
ecn = { kmin = "100KB", kmax = "400KB", pmax = 0.2 }
[[switch.ecn_rule]]
rate = "400Gbps"
ecn = { kmin = "400KB", kmax = "1600KB", pmax = 0.2 }
[[switch.ecn_rule]]
switch = "spine"
down = true
ecn = { kmin = "50KB", kmax = "50KB", pmax = 1.0 }
[[flow]]
src = "h0"
dst = "h2"
size = "10KB"
"#
);

fn kmin(w: &World, from: &str, to: &str) -> Option<u64> {
    let p = w.port_between(from, to).unwrap();
    w.network().marking(p).map(|e| e.kmin.0)
}

#[test]
fn rules_resolve_per_port_by_speed_switch_and_direction_last_match_winning() {
    let w = World::new(load_with(TWO_SPEEDS, &[]));
    // Host-facing leaf ports keep the default.
    assert_eq!(kmin(&w, "leaf0", "h0"), Some(100_000));
    // 400 Gb/s leaf uplinks take the speed rule.
    assert_eq!(kmin(&w, "leaf0", "spine"), Some(400_000));
    // The spine's ports are 400 Gb/s and face down: the later, more specific rule wins.
    assert_eq!(kmin(&w, "spine", "leaf1"), Some(50_000));
    // Hosts never mark.
    assert_eq!(kmin(&w, "h0", "leaf0"), None);
}

#[test]
fn a_rule_marks_only_the_ports_it_matches() {
    // Four senders into one receiver: the s0->s1 bottleneck queues. With no
    // default marking and a step-marking rule on s0's port 4 (its uplink, the
    // fifth link of s0), every mark happens on that port.
    let toml = dumbbell(4, "[transport]\ncc = \"dctcp\"\n[switch]\nmode = \"pfc\"\n[[switch.ecn_rule]]\nswitch = \"s0\"\nport = 4\necn = { kmin = \"20KB\", kmax = \"20KB\", pmax = 1.0 }\n[[workload]]\nkind = \"incast\"\nreceiver = \"rx\"\nsize = \"2MB\"\n");
    let mut w = World::new(load_with(&toml, &["monitor.window=\"1ms\""]));
    w.run(u64::MAX);
    w.finish();
    let up = w.port_between("s0", "s1").unwrap();
    assert_eq!(w.network().marking(up).map(|e| e.kmax), Some(Size(20_000)));
    let rows: Vec<_> = w.observers().link_rows().unwrap().collect();
    let marks = |p: PortId| rows[p.ix()].iter().map(|r| r.ecn_marks as u64).sum::<u64>();
    let total: u64 = (0..w.ports().len() as u32).map(PortId).map(marks).sum();
    assert!(marks(up) > 0, "the rule's port marks");
    assert_eq!(marks(up), total, "no other port marks");
    assert_eq!(w.stats().ecn_marks, total);
    assert_eq!(w.stats().flows_completed, 4);
}

#[test]
fn rule_errors_name_the_rule_and_key() {
    let bad = TWO_SPEEDS.replace("switch = \"spine\"", "switch = \"spine9\"");
    let e = csigsim::scenario::load_str(&bad, "t.toml", std::path::Path::new("."), &[], None).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("switch.ecn_rule[1].switch"), "{e}");
    assert!(e.to_string().contains("unknown switch \"spine9\""), "{e}");
    let bad = TWO_SPEEDS.replace("kmin = \"400KB\", kmax = \"1600KB\"", "kmin = \"400KB\", kmax = \"100KB\"");
    let e = csigsim::scenario::load_str(&bad, "t.toml", std::path::Path::new("."), &[], None).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("switch.ecn_rule[0].ecn.kmin"), "{e}");
    assert!(e.line_col.is_some(), "{e}");
}
