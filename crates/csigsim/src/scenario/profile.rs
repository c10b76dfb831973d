//! Compatibility profiles: `profile = "htsim-uec"` or `profile = "ns3-rdma"`
//! at the top of a scenario fills every key the scenario leaves unset with
//! the reference simulator's behaviour and defaults, so that an experiment
//! ported from it gets the same model. Keys the scenario sets (in the file
//! or with `--set`) always win. docs/profiles.md lists every key each profile
//! sets and why.

use crate::de::InputError;
use crate::net::topology::{LinkSpec, NodeRef, TopologyConfig, TopologySpec};
use crate::units::{bytes_in, tx_time_ps, Size};
use serde::Deserialize;
use toml_edit::{DocumentMut, Item};

/// A profile: its name and the keys it sets, as a TOML document.
pub struct Profile {
    pub name: &'static str,
    pub about: &'static str,
    pub toml: &'static str,
}

/// The profiles, in the order `csigsim list` shows them.
pub const PROFILES: &[Profile] = &[
    Profile {
        name: "htsim-uec",
        about: "htsim's UEC model (ultraethernet/uet-htsim): NSCC, trimming, spraying, dequeue ECN marking",
        toml: include_str!("profiles/htsim-uec.toml"),
    },
    Profile {
        name: "ns3-rdma",
        about: "the ns-3 RDMA simulator of the HPCC paper: PFC, its run script's congestion-control settings",
        toml: include_str!("profiles/ns3-rdma.toml"),
    },
];

/// The scenario text with its profile's keys filled in where the scenario
/// leaves them unset, or `None` when it names no profile. `text` is the
/// scenario after `--set` overrides; `locate` finds a key in it for errors.
pub fn apply(text: &str, file: &str, locate: impl Fn(&str) -> Option<(usize, usize)>) -> Result<Option<String>, InputError> {
    // A syntax error is reported by the main parser, with its position.
    let Ok(mut doc) = text.parse::<DocumentMut>() else { return Ok(None) };
    let Some(item) = doc.get("profile") else { return Ok(None) };
    let err = |m: String| InputError::new(file, Some("profile".into()), locate("profile"), m);
    let Some(name) = item.as_str() else {
        return Err(err("profile must be a string".into()));
    };
    let Some(p) = PROFILES.iter().find(|p| p.name == name) else {
        let names: Vec<&str> = PROFILES.iter().map(|p| p.name).collect();
        return Err(err(format!("unknown profile \"{name}\"; profiles: {}", names.join(", "))));
    };
    let preset: DocumentMut = p.toml.parse().expect("a built-in profile is valid TOML");
    if preset.get("transport").and_then(|t| t.get("delivery")).is_some() {
        keep_own_recovery(&mut doc);
    }
    fill(doc.as_item_mut(), preset.as_item());
    // Values that depend on the fabric or the congestion control. A scenario
    // whose values cannot be read gets none: the main parser reports them.
    if let Some(f) = Facts::read(&doc) {
        let derived = match p.name {
            "htsim-uec" => derive_htsim(&f),
            _ => derive_ns3(&f),
        };
        for (path, v) in derived {
            set_unset(doc.as_item_mut(), path, v);
        }
    }
    Ok(Some(doc.to_string()))
}

/// A scenario that chooses its own `transport.retransmit` and no
/// `delivery` keeps the delivery that key belongs to (`"rc"`), rather than
/// a profile's `"rud"`, which would refuse go-back-N; with go-back-N it
/// keeps the timer that goes back too (`timeout = "window"`), rather than
/// a profile's per-packet one.
fn keep_own_recovery(doc: &mut DocumentMut) {
    let Some(t) = doc.get_mut("transport").and_then(|t| t.as_table_like_mut()) else { return };
    let Some(retransmit) = t.get("retransmit").map(|v| v.as_str().map(str::to_string)) else { return };
    if t.get("delivery").is_none() {
        t.insert("delivery", toml_edit::value("rc"));
        if retransmit.as_deref() != Some("selective") && t.get("timeout").is_none() {
            t.insert("timeout", toml_edit::value("window"));
        }
    }
}

/// Inserts into `user` every key of `preset` it lacks, descending into
/// tables both have.
fn fill(user: &mut Item, preset: &Item) {
    let (Some(u), Some(p)) = (user.as_table_like_mut(), preset.as_table_like()) else { return };
    for (k, pv) in p.iter() {
        match u.get_mut(k) {
            None => {
                u.insert(k, pv.clone());
            }
            Some(uv) => {
                if uv.is_table_like() && pv.is_table_like() {
                    fill(uv, pv);
                }
            }
        }
    }
}

/// What the derivations read from the filled scenario.
struct Facts {
    topo: TopologySpec,
    cc: String,
    mtu: u64,
    /// `transport.header` and `ack_size` when the scenario (or the preset) sets them.
    header: Option<u64>,
    ack_size: Option<u64>,
    /// `switch.reserved` as the scenario sets it (the htsim preset leaves it to derivation).
    reserved: Option<u64>,
    /// The scenario sets `switch.buffer` (then `dt_alpha` is left alone).
    buffer_set: bool,
    /// The scenario sets `switch.ecn` or `switch.ecn_rule` (then neither is derived).
    ecn_set: bool,
    /// Signal bytes on every data packet: the INT stack (HPCC's, from its
    /// keys or defaults) and the CSIG tag.
    signal_bytes: u64,
}

impl Facts {
    fn read(doc: &DocumentMut) -> Option<Facts> {
        let t: toml::Table = toml::from_str(&doc.to_string()).ok()?;
        let topo = TopologyConfig::from_table(t.get("topology")?.as_table()?).ok()?.build().ok()?;
        let empty = toml::Table::new();
        let sw = t.get("switch").and_then(|v| v.as_table()).unwrap_or(&empty);
        let tr = t.get("transport").and_then(|v| v.as_table()).unwrap_or(&empty);
        let int = |v: Option<&toml::Value>| -> Option<Option<u64>> {
            match v {
                None => Some(None),
                Some(v) => v.as_integer().and_then(|i| u64::try_from(i).ok()).map(Some),
            }
        };
        let reserved = match sw.get("reserved") {
            None => None,
            Some(v) => Some(Size::deserialize(v.clone()).ok()?.0),
        };
        let cc = match tr.get("cc") {
            None => "none".to_string(),
            Some(v) => v.as_str()?.to_string(),
        };
        let signal_int = t.get("signals").and_then(|s| s.get("int")).and_then(|v| v.as_table());
        let key = |k: &str, d: u64| signal_int.and_then(|s| s.get(k)).and_then(|v| v.as_integer()).map_or(d, |i| i.max(0) as u64);
        // HPCC gets [signals.int] from the ns-3 profile when it has none.
        let int_bytes = if cc == "hpcc" || signal_int.is_some() { key("header", 2) + key("per_hop", 8) * key("max_hops", 5) } else { 0 };
        let csig = t.get("signals").and_then(|s| s.get("csig")).and_then(|v| v.as_table());
        let tag_bytes = match csig {
            None => 0,
            Some(c) if c.get("size").and_then(|v| v.as_str()) == Some("wide") => 8,
            Some(_) => 4,
        };
        Some(Facts {
            topo,
            cc,
            mtu: int(tr.get("mtu"))?.unwrap_or(4096).max(1),
            header: int(tr.get("header"))?,
            ack_size: int(tr.get("ack_size"))?,
            reserved,
            buffer_set: sw.contains_key("buffer"),
            ecn_set: sw.contains_key("ecn") || sw.contains_key("ecn_rule"),
            signal_bytes: int_bytes + tag_bytes,
        })
    }

    /// The hosts' NIC rate: the fastest host link.
    fn nic_rate(&self) -> u64 {
        self.topo.links.iter().filter(|l| matches!(l.a, NodeRef::Host(_)) || matches!(l.b, NodeRef::Host(_))).map(|l| l.rate.0).max().unwrap_or(1).max(1)
    }

    /// The distinct rates of links that have a switch port, ascending.
    fn port_rates(&self) -> Vec<u64> {
        let mut r: Vec<u64> = self.topo.links.iter().filter(|l| matches!(l.a, NodeRef::Switch(_)) || matches!(l.b, NodeRef::Switch(_))).map(|l| l.rate.0).collect();
        r.sort_unstable();
        r.dedup();
        r
    }
}

/// The largest, over all host pairs, of the sum of `cost` over the links of
/// a shortest (fewest links) path between them; among equally short paths
/// the costliest. Hosts behind one edge switch share every link past their
/// own, so the costliest host (and the second costliest, for pairs on the
/// same switch) of each edge switch stands for the rest.
pub(crate) fn longest_path(topo: &TopologySpec, cost: impl Fn(&LinkSpec) -> u64) -> u64 {
    let ns = topo.switches.len();
    let mut adj: Vec<Vec<(usize, u64)>> = vec![Vec::new(); ns];
    // Per switch: the two costliest access links of hosts on it.
    let mut top: Vec<[Option<u64>; 2]> = vec![[None, None]; ns];
    for l in &topo.links {
        let c = cost(l);
        match (l.a, l.b) {
            (NodeRef::Switch(a), NodeRef::Switch(b)) => {
                adj[a as usize].push((b as usize, c));
                adj[b as usize].push((a as usize, c));
            }
            (NodeRef::Host(_), NodeRef::Switch(s)) | (NodeRef::Switch(s), NodeRef::Host(_)) => {
                let t = &mut top[s as usize];
                if t[0].is_none_or(|x| c > x) {
                    t[1] = t[0];
                    t[0] = Some(c);
                } else if t[1].is_none_or(|x| c > x) {
                    t[1] = Some(c);
                }
            }
            _ => {}
        }
    }
    let edges: Vec<usize> = (0..ns).filter(|&s| top[s][0].is_some()).collect();
    let mut longest = 0;
    let mut dist = vec![u32::MAX; ns];
    let mut best = vec![0u64; ns];
    for &e in &edges {
        let [Some(a0), a1] = top[e] else { continue };
        if let Some(a1) = a1 {
            longest = longest.max(a0 + a1);
        }
        dist.fill(u32::MAX);
        dist[e] = 0;
        best[e] = 0;
        let mut frontier = vec![e];
        let mut d = 0;
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for &u in &frontier {
                for &(v, c) in &adj[u] {
                    if dist[v] == u32::MAX {
                        dist[v] = d + 1;
                        best[v] = best[u] + c;
                        next.push(v);
                    } else if dist[v] == d + 1 {
                        best[v] = best[v].max(best[u] + c);
                    }
                }
            }
            frontier = next;
            d += 1;
        }
        for &f in &edges {
            if f != e && dist[f] != u32::MAX {
                longest = longest.max(a0 + best[f] + top[f][0].unwrap_or(0));
            }
        }
    }
    longest
}

fn size(b: u64) -> Item {
    toml_edit::value(format!("{b}B"))
}

/// htsim's UEC settings that depend on the fabric (main_uec.cpp's automatic
/// queue sizing, ECN thresholds and minimum RTO). docs/profiles.md.
fn derive_htsim(f: &Facts) -> Vec<(&'static str, Item)> {
    let packet = f.mtu + f.header.unwrap_or(64);
    let ack = f.ack_size.unwrap_or(64);
    let nic = f.nic_rate();
    // htsim's network RTT: a full packet out and an ACK back over the
    // longest path, store and forward, plus twice its latency.
    let rtt = longest_path(&f.topo, |l| tx_time_ps(packet, l.rate.0) + tx_time_ps(ack, l.rate.0) + 2 * l.delay.0);
    // BDP in packets, rounded up (calculate_bdp_pkt).
    let bdp_bits = rtt as u128 * nic as u128;
    let pkts = (bdp_bits.div_ceil(8 * 1_000_000_000_000 * packet as u128) as u64).max(1);
    let queue = f.reserved.unwrap_or(pkts * packet);
    let ports = (0..f.topo.switches.len() as u32)
        .map(|s| f.topo.links.iter().filter(|l| l.a == NodeRef::Switch(s) || l.b == NodeRef::Switch(s)).count() as u64)
        .max()
        .unwrap_or(1);
    let buffer = queue.saturating_mul(ports);
    let mut out = vec![("switch.reserved", size(queue)), ("switch.ctrl_buffer", size(queue.saturating_mul(2)))];
    if !f.buffer_set {
        out.push(("switch.buffer", size(buffer)));
        // Every queue holds exactly `reserved`: on a switch with fewer ports
        // than the largest, the spare buffer must not lengthen its queues.
        out.push(("switch.dt_alpha", toml_edit::value(0.5 / buffer.max(1) as f64)));
    }
    if !f.ecn_set {
        let mut ecn = toml_edit::InlineTable::new();
        ecn.insert("kmin", format!("{}B", (pkts * 2).div_ceil(10) * packet).into());
        ecn.insert("kmax", format!("{}B", (pkts * 8).div_ceil(10) * packet).into());
        ecn.insert("pmax", 1.0.into());
        out.push(("switch.ecn", toml_edit::value(ecn)));
    }
    // _min_rto = 15 us + 6 queues' worth of time at the line rate.
    let rto = 15_000_000 + ((queue as u128 * 48 * 1_000_000_000_000 + nic as u128 / 2) / nic as u128) as u64;
    out.push(("transport.rto", toml_edit::value(format!("{rto}ps"))));
    out
}

/// ns-3 RDMA settings that depend on the fabric or on transport.cc
/// (run.py's per-cc maps, third.cc's headroom, PFC shift and maxRtt, and
/// rdma-hw.cc's re-pacing of HPCC's rate changes).
fn derive_ns3(f: &Facts) -> Vec<(&'static str, Item)> {
    let nic = f.nic_rate();
    let cc = f.cc.as_str();
    let header = f.header.unwrap_or(if cc == "timely" { 56 } else { 48 });
    let mut out = vec![
        ("transport.header", toml_edit::value(header as i64)),
        // ns-3's ACK is 60 B, 88 B with HPCC's echoed INT: the INT stack (42 B) comes on top.
        ("transport.ack_size", toml_edit::value(if cc == "hpcc" { 46 } else { 60 })),
    ];
    let rates = f.port_rates();
    if !f.ecn_set {
        // KMIN_MAP / KMAX_MAP: 4 and 16 KB per Gb/s (DCTCP: a 3 KB-per-Gb/s step).
        let ecn = |r: u64| {
            let mut e = toml_edit::InlineTable::new();
            let per_gbps = |kb: u64| format!("{}B", (r as u128 * kb as u128 / 1_000_000) as u64);
            if cc == "dctcp" {
                e.insert("kmin", per_gbps(3).into());
                e.insert("kmax", per_gbps(3).into());
                e.insert("pmax", 1.0.into());
            } else {
                e.insert("kmin", per_gbps(4).into());
                e.insert("kmax", per_gbps(16).into());
                e.insert("pmax", 0.2.into());
            }
            e
        };
        out.push(("switch.ecn", toml_edit::value(ecn(nic))));
        let mut rules = toml_edit::Array::new();
        for &r in rates.iter().filter(|&&r| r != nic) {
            let mut rule = toml_edit::InlineTable::new();
            rule.insert("rate", crate::units::Rate(r).to_string().into());
            rule.insert("ecn", toml_edit::Value::InlineTable(ecn(r)));
            rules.push(rule);
        }
        if !rules.is_empty() {
            out.push(("switch.ecn_rule", toml_edit::value(rules)));
        }
    }
    // pfc_a_shift: 3 at the NIC rate, one less per halving down to it (at least 0).
    let mut rules = toml_edit::Array::new();
    for &r in rates.iter().filter(|&&r| r > nic) {
        let (mut shift, mut x) = (3, r);
        while x > nic && shift > 0 {
            shift -= 1;
            x /= 2;
        }
        let mut pfc = toml_edit::InlineTable::new();
        pfc.insert("alpha", (1.0 / (1u64 << shift) as f64).into());
        let mut rule = toml_edit::InlineTable::new();
        rule.insert("rate", crate::units::Rate(r).to_string().into());
        rule.insert("pfc", toml_edit::Value::InlineTable(pfc));
        rules.push(rule);
    }
    if !rules.is_empty() {
        out.push(("switch.pfc_rule", toml_edit::value(rules)));
    }
    // Headroom 3 x rate x delay per port; csigsim has one per switch: the
    // largest, and never below what its check needs to stay lossless.
    let packet = f.mtu + header + f.signal_bytes;
    let headroom = f
        .topo
        .links
        .iter()
        .map(|l| {
            let in_flight = bytes_in(l.delay.0, l.rate.0);
            (3 * in_flight).max(packet + 2 * in_flight)
        })
        .max()
        .unwrap_or(0);
    out.push(("switch.pfc.headroom", size(headroom)));
    // maxRtt: twice the propagation plus one payload's serialization per link.
    let max_rtt = longest_path(&f.topo, |l| tx_time_ps(f.mtu, l.rate.0) + 2 * l.delay.0);
    match cc {
        "timely" => out.push(("transport.timely.delta", toml_edit::value(crate::units::Rate(nic / 1000).to_string()))),
        "hpcc" => {
            out.push(("transport.hpcc.base_rtt", toml_edit::value(format!("{max_rtt}ps"))));
            out.push(("signals.int.record", toml_edit::value("quantized")));
            out.push(("signals.int.multi", toml_edit::value((nic / 25_000_000_000).clamp(1, 255) as i64)));
            // RdmaHw::ChangeRate re-paces the waiting packet at every rate
            // change, and only HPCC's law (UpdateRateHp) calls it: DCQCN's,
            // Timely's and DCTCP's set the rate for the next packet.
            out.push(("transport.pacing_update", toml_edit::value("on_rate_change")));
        }
        _ => {}
    }
    out
}

/// Sets the dotted `path` to `v` unless the document already has it,
/// creating tables on the way; a non-table on the way leaves it alone (the
/// main parser reports it).
fn set_unset(root: &mut Item, path: &str, v: Item) {
    let mut cur = root;
    let parts: Vec<&str> = path.split('.').collect();
    let (last, tables) = parts.split_last().expect("a path has a key");
    for k in tables {
        let inline = cur.is_inline_table();
        let Some(t) = cur.as_table_like_mut() else { return };
        if t.get(k).is_none() {
            // Inside an inline table only inline tables can go.
            let new = if inline {
                Item::Value(toml_edit::Value::InlineTable(toml_edit::InlineTable::new()))
            } else {
                let mut new = toml_edit::Table::new();
                new.set_implicit(true);
                Item::Table(new)
            };
            t.insert(k, new);
        }
        cur = t.get_mut(k).expect("inserted");
    }
    let Some(t) = cur.as_table_like_mut() else { return };
    if t.get(last).is_none() {
        t.insert(last, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::config::PacingUpdate;

    fn filled(text: &str) -> toml::Table {
        let out = apply(text, "t.toml", |_| None).unwrap().expect("a profile");
        toml::from_str(&out).unwrap()
    }

    #[test]
    fn the_profile_fills_only_what_the_scenario_leaves_unset() {
        let t = filled("profile = \"htsim-uec\"\n[switch]\nrouting = \"ecmp\"\n[transport]\nack_every = 2\n");
        let sw = t["switch"].as_table().unwrap();
        assert_eq!(sw["routing"].as_str(), Some("ecmp"), "the scenario's key wins");
        assert_eq!(sw["mode"].as_str(), Some("trim"), "the profile fills an unset key");
        assert_eq!(t["transport"]["ack_every"].as_integer(), Some(2));
        assert_eq!(t["transport"]["cc"].as_str(), Some("nscc"));
        assert_eq!(t["transport"]["delivery"].as_str(), Some("rud"), "htsim's sink");
        assert_eq!(t["transport"]["timeout"].as_str(), Some("packet"), "htsim's per-packet timer");
        // A scenario that picks its own loss recovery keeps the delivery it
        // belongs to, and with go-back-N the timer that goes back.
        let t = filled("profile = \"htsim-uec\"\n[transport]\nretransmit = \"go_back_n\"\n");
        assert_eq!(t["transport"]["delivery"].as_str(), Some("rc"));
        assert_eq!(t["transport"]["timeout"].as_str(), Some("window"));
        let t = filled("profile = \"htsim-uec\"\n[transport]\nretransmit = \"selective\"\n");
        assert_eq!((t["transport"]["delivery"].as_str(), t["transport"]["timeout"].as_str()), (Some("rc"), Some("packet")));
    }

    #[test]
    fn no_profile_leaves_the_text_alone_and_bad_names_are_refused() {
        assert!(apply("[switch]\nmode = \"pfc\"\n", "t.toml", |_| None).unwrap().is_none());
        let e = apply("profile = \"ns3\"\n", "t.toml", |_| Some((1, 11))).unwrap_err().to_string();
        assert!(e.contains("t.toml:1:11") && e.contains("htsim-uec") && e.contains("ns3-rdma"), "{e}");
        let e = apply("profile = 3\n", "t.toml", |_| None).unwrap_err().to_string();
        assert!(e.contains("must be a string"), "{e}");
    }

    #[test]
    fn every_profile_is_a_valid_partial_scenario() {
        for p in PROFILES {
            let text = format!("profile = \"{}\"\n[topology]\nkind = \"fat_tree\"\nk = 4\n", p.name);
            crate::scenario::load_str(&text, p.name, std::path::Path::new("."), &[], None).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        }
    }

    fn scenario(text: &str, sets: &[&str]) -> crate::scenario::Scenario {
        let ov: Vec<crate::scenario::Override> = sets.iter().map(|s| crate::scenario::Override::parse(s).unwrap()).collect();
        crate::scenario::load_str(text, "t.toml", std::path::Path::new("."), &ov, None).unwrap_or_else(|e| panic!("{e}"))
    }

    const K4: &str = "profile = \"htsim-uec\"\n[topology]\nkind = \"fat_tree\"\nk = 4\n";
    const LS: &str = "profile = \"htsim-uec\"\n[topology]\nkind = \"leaf_spine\"\nleaves = 32\nhosts_per_leaf = 32\nspines = 8\nfabric_rate = \"100Gbps\"\n";

    #[test]
    fn htsim_queue_ecn_and_rto_follow_the_fabric() {
        // k=4 fat tree, 6 links: network RTT 14.0227 us, BDP 43 packets of 4150 B.
        let s = scenario(K4, &[]);
        assert_eq!(s.switch.reserved.0, 43 * 4150);
        assert_eq!(s.switch.reserved.0, 178_450);
        assert_eq!(s.switch.buffer.0, 178_450 * 4, "every k=4 switch has 4 ports: no shared pool");
        assert_eq!(s.switch.ctrl_buffer.0, 2 * 178_450);
        let e = s.switch.ecn.unwrap();
        assert_eq!((e.kmin.0, e.kmax.0, e.pmax), (37_350, 145_250, 1.0));
        assert_eq!(s.transport.rto.0, 100_656_000, "15 us + 6 x 178450 B at 100 Gb/s");
        // 32 x 32 leaf-spine with 8 spines, 4 links: 9.34848 us, 29 packets.
        let s = scenario(LS, &[]);
        assert_eq!(s.switch.reserved.0, 120_350);
        let e = s.switch.ecn.unwrap();
        assert_eq!((e.kmin.0, e.kmax.0), (24_900, 99_600));
        assert_eq!(s.transport.rto.0, 72_768_000);
        // Leaves have 40 ports, spines 32: the buffer fits the leaves and the
        // spines' spare bytes cannot lengthen a queue (dt_alpha x free < 1 B).
        assert_eq!(s.switch.buffer.0, 40 * 120_350);
        assert!(s.switch.dt_alpha * s.switch.buffer.0 as f64 <= 0.5);
    }

    #[test]
    fn derived_values_use_the_scenarios_own_packet_sizes_and_its_keys_win() {
        // A smaller MTU: BDP 175,284 B... of 1064 B packets over the same RTT
        // with these packets: 2 x 6 us + 6 x (1064 + 64) x 8 / 100 Gb/s.
        let s = scenario(K4, &["transport.mtu=1000"]);
        let rtt_ps = 12_000_000u64 + 6 * (1128 * 80);
        let pkts = (rtt_ps as u128 * 100_000_000_000).div_ceil(8 * 1_000_000_000_000 * 1064) as u64;
        assert_eq!(s.switch.reserved.0, pkts * 1064);
        // Keys the scenario sets win, and the values derived from them follow.
        let s = scenario(&format!("{K4}[switch]\nreserved = \"100000B\"\necn = {{ kmin = \"1B\", kmax = \"2B\" }}\n[transport]\nrto = \"1ms\"\n"), &[]);
        assert_eq!(s.switch.reserved.0, 100_000);
        assert_eq!(s.switch.ctrl_buffer.0, 200_000, "twice the scenario's queue");
        assert_eq!(s.switch.ecn.unwrap().kmin.0, 1);
        assert_eq!(s.transport.rto.0, 1_000_000_000);
        let s = scenario(K4, &["switch.buffer=32MB", "transport.rto=2ms"]);
        assert_eq!(s.switch.buffer.0, 32_000_000);
        assert_eq!(s.switch.dt_alpha, 1.0, "a buffer the scenario sets keeps csigsim's dynamic threshold");
        assert_eq!(s.transport.rto.0, 2_000_000_000);
    }

    #[test]
    fn errors_point_into_the_scenarios_own_text() {
        let text = format!("{K4}[switch]\necn = {{ kmin = \"500KB\", kmax = \"400KB\" }}\n");
        let e = crate::scenario::load_str(&text, "t.toml", std::path::Path::new("."), &[], None).unwrap_err().to_string();
        assert!(e.starts_with("t.toml:6:") && e.contains("switch.ecn.kmin"), "{e}");
        let e = crate::scenario::load_str(&format!("{K4}[transport]\nmtu = \"big\"\n"), "t.toml", std::path::Path::new("."), &[], None).unwrap_err().to_string();
        assert!(e.starts_with("t.toml:6:") && e.contains("transport.mtu"), "{e}");
        let e = crate::scenario::load_str("profile = \"htsim-uec\"\n[topology]\nkind = \"fat_tree\"\nk = 3\n", "t.toml", std::path::Path::new("."), &[], None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("t.toml:4:") && e.contains("topology.k"), "{e}");
    }

    fn one_switch(n: usize, extra: &str) -> String {
        let hosts: Vec<String> = (0..n).map(|i| format!("\"n{i}\"")).collect();
        let links: Vec<String> = (0..n).map(|i| format!("{{ a = \"n{i}\", b = \"sw\", rate = \"100Gbps\", delay = \"1us\" }}")).collect();
        format!("profile = \"ns3-rdma\"\n{extra}\n[topology]\nkind = \"custom\"\nhosts = [{}]\nswitches = [\"sw\"]\nlinks = [{}]\n", hosts.join(", "), links.join(", "))
    }

    #[test]
    fn ns3_values_follow_the_congestion_control() {
        let s = scenario(&one_switch(3, ""), &["transport.cc=dcqcn"]);
        assert_eq!((s.transport.mtu, s.transport.header, s.transport.ack_size), (1000, 48, 60));
        let e = s.switch.ecn.unwrap();
        assert_eq!((e.kmin.0, e.kmax.0, e.pmax), (400_000, 1_600_000, 0.2));
        assert_eq!(s.switch.pfc.headroom.unwrap().0, 37_500, "3 x 100 Gb/s x 1 us");
        assert_eq!(s.switch.pfc.xon_delta.0, 3072);
        assert_eq!(s.switch.buffer.0, 32 << 20);
        let s = scenario(&one_switch(3, ""), &["transport.cc=dctcp"]);
        let e = s.switch.ecn.unwrap();
        assert_eq!((e.kmin.0, e.kmax.0, e.pmax), (300_000, 300_000, 1.0));
        let s = scenario(&one_switch(3, ""), &["transport.cc=timely"]);
        assert_eq!(s.transport.header, 56);
        assert_eq!(s.transport.cc_sections.get::<crate::cc::timely::Timely>().delta.0, 100_000_000, "10 Mb/s per 10 Gb/s of line rate");
        assert_eq!(s.transport.pacing_update, PacingUpdate::OnSend, "ns-3's Timely sets the rate for the next packet");
        // HPCC (run.py's default): INT for 5 hops, ns-3's 88 B ACK, maxRtt as T.
        let s = scenario(&one_switch(3, ""), &[]);
        assert_eq!(s.transport.cc.name(), "hpcc");
        assert_eq!((s.transport.header, s.transport.ack_size), (48, 46));
        assert_eq!(s.transport.cc_sections.get::<crate::cc::hpcc::Hpcc>().base_rtt.unwrap().0, 4_160_000, "2 x 2 us + 2 x 80 ns");
        let t: toml::Table = toml::from_str(&s.resolved_toml).unwrap();
        assert_eq!(t["signals"]["int"]["record"].as_str(), Some("quantized"));
        assert_eq!(t["signals"]["int"]["multi"].as_integer(), Some(4));
        assert_eq!(s.transport.pacing_update, PacingUpdate::OnRateChange, "ChangeRate re-paces HPCC's waiting packet");
        let s = scenario(&one_switch(3, "[transport]\npacing_update = \"on_send\""), &[]);
        assert_eq!(s.transport.pacing_update, PacingUpdate::OnSend, "the scenario's key wins");
        let s = scenario(&one_switch(3, ""), &["transport.cc=dcqcn"]);
        assert_eq!(s.transport.pacing_update, PacingUpdate::OnSend);
    }

    #[test]
    fn ns3_scales_ecn_and_pfc_alpha_with_port_speed() {
        // Hosts at 100 Gb/s, one 400 Gb/s link between two switches.
        let text = "profile = \"ns3-rdma\"\n[transport]\ncc = \"dcqcn\"\n[topology]\nkind = \"custom\"\nhosts = [\"a\", \"b\"]\nswitches = [\"s\", \"t\"]\nlinks = [{ a = \"a\", b = \"s\", rate = \"100Gbps\", delay = \"1us\" }, { a = \"s\", b = \"t\", rate = \"400Gbps\", delay = \"1us\" }, { a = \"t\", b = \"b\", rate = \"100Gbps\", delay = \"1us\" }]\n";
        let s = scenario(text, &[]);
        let r = &s.switch.ecn_rule[0];
        assert_eq!((r.rate.unwrap().0, r.ecn.kmin.0, r.ecn.kmax.0), (400_000_000_000, 1_600_000, 6_400_000));
        let p = &s.switch.pfc_rule[0];
        assert_eq!((p.rate.unwrap().0, p.pfc.alpha), (400_000_000_000, Some(0.5)), "pfc_a_shift 1");
        assert_eq!(s.switch.pfc.headroom.unwrap().0, 150_000, "3 x 400 Gb/s x 1 us, the largest port's");
    }
}
