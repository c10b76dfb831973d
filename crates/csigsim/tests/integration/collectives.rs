//! Collectives: a ring AllReduce's completion time against the analytic one,
//! busbw, dependencies and the collectives table.

use crate::common::load;
use csigsim::id::HostId;
use csigsim::World;

/// A ring AllReduce of `size` bytes per rank on hosts h0..h(n-1) of a
/// `k`-ary fat tree at 100 Gb/s, lossless, no congestion control.
pub(crate) fn ring(k: u32, n: u32, size: &str) -> String {
    let hosts: Vec<String> = (0..n).map(|i| format!("\"h{i}\"")).collect();
    format!(
        "name = \"ring\"\n[topology]\nkind = \"fat_tree\"\nk = {k}\nrate = \"100Gbps\"\ndelay = \"1us\"\n[switch]\nmode = \"pfc\"\n\
         [[workload]]\nkind = \"collective\"\nop = \"all_reduce\"\nsize = \"{size}\"\nhosts = [{}]\n",
        hosts.join(", ")
    )
}

/// 2 (n - 1) / n x size at the payload rate (the link rate less the
/// headers), plus the latency of the critical path of dependencies: the send
/// of step `s` at rank `r` waits for the last packet of step `s - 1` from rank
/// `r - 1`, so the last step at rank `r` ends a chain over the 2 (n - 1)
/// consecutive ring edges before it, each adding one full packet's
/// store-and-forward latency; the slowest such chain.
pub(crate) fn analytic_ps(w: &World, n: u32, size: u64) -> f64 {
    let t = &w.scenario().transport;
    let packet = (t.mtu + t.header) as u64;
    let payload_bps = 100e9 * t.mtu as f64 / packet as f64;
    let edge: Vec<u64> = (0..n).map(|r| w.path_latency(HostId(r), HostId((r + 1) % n), packet).0).collect();
    let steps = 2 * (n - 1);
    let chain = (0..n).map(|end| (0..steps).map(|i| edge[((end + n * 2 - i) % n) as usize]).sum::<u64>()).max().unwrap();
    steps as f64 / n as f64 * size as f64 * 8.0 / payload_bps * 1e12 + chain as f64
}

#[test]
fn ring_allreduce_time_matches_the_analytic_within_two_percent() {
    for (k, n, size, bytes) in [(4, 4, "16MB", 16_000_000u64), (4, 8, "32MB", 32_000_000), (8, 64, "16MB", 16_000_000)] {
        let sc = load(&ring(k, n, size));
        let w = World::new(sc.clone());
        let expect = analytic_ps(&w, n, bytes);
        let out = csigsim::run(sc, |_| true);
        assert!(out.summary.invariants_ok);
        assert_eq!(out.summary.flows_completed as usize, out.summary.flows_total);
        let t = out.tables.collectives.as_ref().expect("collectives table");
        let total = t.step.iter().position(|s| s.is_none()).expect("instance row");
        let cct = (t.finish_ps[total].unwrap() - t.start_ps[total].unwrap()) as f64;
        println!("n={n}: CCT {:.1} us, analytic {:.1} us, busbw {:.2} Gb/s", cct / 1e6, expect / 1e6, t.busbw_gbps[total].unwrap());
        assert!((cct - expect).abs() / expect < 0.02, "n={n}: CCT {cct} ps against {expect} ps");
        // busbw as nccl-tests define it, against the analytic time; and where the
        // steps' latency is small against their data (n = 4, 8), against the
        // payload rate, 100 Gb/s x 4096 / 4160, within 3%.
        let busbw = t.busbw_gbps[total].unwrap();
        let expect_busbw = 2.0 * (n as f64 - 1.0) / n as f64 * bytes as f64 * 8.0 / expect * 1e3;
        assert!((busbw - expect_busbw).abs() / expect_busbw < 0.02, "n={n}: busbw {busbw} against {expect_busbw}");
        if n <= 8 {
            assert!((busbw - 98.4615).abs() / 98.4615 < 0.03, "n={n}: busbw {busbw}");
        }
        // Steps follow each other: none finishes before the previous one starts.
        let steps: Vec<usize> = (0..t.len()).filter(|&i| t.step[i].is_some()).collect();
        assert_eq!(steps.len() as u32, 2 * (n - 1));
        assert!(steps.windows(2).all(|p| t.start_ps[p[1]] > t.start_ps[p[0]]));
    }
}

#[test]
fn sends_wait_for_their_input_and_iterations_for_the_gap() {
    let text = ring(4, 4, "4MB").replace("size = \"4MB\"", "size = \"4MB\"\niterations = 2\ngap = \"50us\"\nchunk = \"250KB\"");
    let sc = load(&text);
    // 2 iterations x 6 steps x 4 ranks x 4 slices of 250 KB.
    assert_eq!(sc.flow_specs().len(), 2 * 6 * 4 * 4);
    assert!(sc.flow_specs().iter().all(|f| f.size == 250_000));
    let out = csigsim::run(sc.clone(), |_| true);
    let mut w = World::new(sc);
    w.run(u64::MAX);
    let f = w.flows();
    for d in &w.scenario().flow_deps() {
        let me = &f[d.flow as usize];
        let ready = d.after.iter().map(|&a| f[a as usize].finish_ps.unwrap()).max().unwrap() + d.gap.0;
        assert_eq!(me.start_ps, ready, "flow {} starts when its last input arrived, plus the gap", d.flow);
    }
    let t = out.tables.collectives.unwrap();
    let totals: Vec<usize> = (0..t.len()).filter(|&i| t.step[i].is_none()).collect();
    assert_eq!(totals.len(), 2);
    // Iteration 1 begins at least the gap after iteration 0's last step began.
    let last_step_of_first = totals[0] - 1;
    assert_eq!(t.step[last_step_of_first], Some(5));
    assert!(t.start_ps[totals[1]].unwrap() >= t.start_ps[last_step_of_first].unwrap() + 50_000_000);
    let text = out_csv(&t);
    assert!(text.starts_with("collective_id,name,op,ranks,iteration,step,first_flow,flows,start_ns,finish_ns,time_ns,size_bytes,algbw_gbps,busbw_gbps\n"));
}

fn out_csv(t: &csigsim::output::CollectiveTable) -> String {
    let mut buf = Vec::new();
    csigsim::output::csv::write_collectives(t, &mut buf).unwrap();
    String::from_utf8(buf).unwrap()
}

#[test]
fn collective_errors_name_the_key() {
    let bad = ring(4, 4, "16MB").replace("op = \"all_reduce\"", "op = \"all_reduce\"\nchannels = 0");
    let e = csigsim::scenario::load_str(&bad, "t.toml", std::path::Path::new("."), &[], None).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("workload[0].channels"), "{e}");
    let bad = ring(4, 4, "3B");
    let e = csigsim::scenario::load_str(&bad, "t.toml", std::path::Path::new("."), &[], None).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("workload[0].size"), "{e}");
}

const PIPE: &str = "name = \"pipe\"\n[topology]\nkind = \"fat_tree\"\nk = 4\n\
    [[flow]]\nsrc = 0\ndst = 1\nsize = \"1MB\"\nstart = \"3us\"\n\
    [[flow]]\nsrc = 1\ndst = 5\nsize = \"1MB\"\nafter = [0]\ngap = \"5us\"\n\
    [[flow]]\nsrc = 5\ndst = 9\nsize = \"2MB\"\nafter = [1, 0]\n";

#[test]
fn a_pipeline_of_flows_starts_each_stage_when_its_input_arrived() {
    let mut w = World::new(load(PIPE));
    w.run(u64::MAX);
    let f = w.flows();
    assert_eq!(f[0].start_ps, 3_000_000);
    assert_eq!(f[1].start_ps, f[0].finish_ps.unwrap() + 5_000_000);
    assert_eq!(f[2].start_ps, f[1].finish_ps.unwrap());
    assert_eq!(w.stats().flows_completed, 3);
}

#[test]
fn pipeline_errors_name_the_entry() {
    let cases = [
        (PIPE.replace("after = [1, 0]", "after = [7]"), "flow[2].after[0]", "there is no flow 7"),
        (PIPE.replace("after = [1, 0]", "after = [2]"), "flow[2].after[0]", "the flow itself"),
        (PIPE.replace("start = \"3us\"", "after = [2]"), "flow[0].after", "cycle"),
        (PIPE.replace("start = \"3us\"", "gap = \"1us\""), "flow[0].gap", "applies to a flow with `after`"),
    ];
    for (text, key, msg) in cases {
        let e = csigsim::scenario::load_str(&text, "t.toml", std::path::Path::new("."), &[], None).unwrap_err();
        assert_eq!(e.key.as_deref(), Some(key), "{e}");
        assert!(e.to_string().contains(msg), "{e}");
    }
}

/// `n` ranks h0..h(n-1) of a k = 4 fat tree at 100 Gb/s, lossless, no
/// congestion control, D-mod-K routing, and a collective with `keys`.
/// Receivers acknowledge every 64 packets, so ACKs take a negligible share
/// of the links the data uses (the closed forms below leave them out).
fn fat_tree_collective(n: u32, keys: &str) -> String {
    let hosts: Vec<String> = (0..n).map(|i| format!("\"h{i}\"")).collect();
    format!(
        "name = \"coll\"\n[topology]\nkind = \"fat_tree\"\nk = 4\nrate = \"100Gbps\"\ndelay = \"1us\"\n[switch]\nmode = \"pfc\"\nrouting = \"deterministic\"\n\
         [transport]\nack_every = 64\n[[workload]]\nkind = \"collective\"\nhosts = [{}]\n{keys}\n",
        hosts.join(", ")
    )
}

/// Completion time (ps) and busbw of instance `i` (its total row).
fn instance(t: &csigsim::output::CollectiveTable, i: usize) -> (f64, f64) {
    let row = (0..t.len()).filter(|&r| t.step[r].is_none()).nth(i).expect("instance row");
    ((t.finish_ps[row].unwrap() - t.start_ps[row].unwrap()) as f64, t.busbw_gbps[row].unwrap())
}

/// Wire time (ps) of a full data packet at 100 Gb/s, and the one-packet
/// store-and-forward latency from host `a` to host `b`.
fn packet_times(w: &World, a: u32, b: u32) -> (u64, u64) {
    let t = &w.scenario().transport;
    let packet = (t.mtu + t.header) as u64;
    (packet * 8 * 10, w.path_latency(HostId(a), HostId(b), packet).0)
}

/// Ring broadcast and reduce: the buffer travels the n - 1 hops of a chain,
/// pipelined in slices of `chunk` that queue on each connection (fifo). The
/// first rank sends its m slices back to back; every later rank starts
/// forwarding when the first slice has arrived and then is never starved,
/// since slices arrive as fast as it sends them. So the last slice reaches
/// the end of the chain after (m + n - 2) slice times plus, per hop, the
/// store-and-forward latency of one packet less its own wire time (already
/// counted in the slice time): (S + (n - 2) chunk) / B plus the latencies.
#[test]
fn ring_broadcast_and_reduce_match_the_pipeline_within_two_percent() {
    let n = 8;
    let size = 16u64 << 20;
    let chunk = 512u64 << 10;
    for (op, root) in [("broadcast", 2u32), ("reduce", 5)] {
        let sc = load(&fat_tree_collective(n, &format!("op = \"{op}\"\nsize = \"16MiB\"\nchunk = \"512KiB\"\nroot = {root}")));
        assert_eq!(sc.flow_specs().len() as u64, (n as u64 - 1) * size / chunk);
        let w = World::new(sc.clone());
        // The chain: from the root (broadcast) or ending at it (reduce).
        let first = if op == "broadcast" { root } else { (root + 1) % n };
        let chain: Vec<u32> = (0..n).map(|h| (first + h) % n).collect();
        assert_eq!(sc.flow_specs()[0].src, HostId(chain[0]));
        assert_eq!(sc.flow_specs().last().unwrap().dst, HostId(chain[n as usize - 1]));
        let (tp, _) = packet_times(&w, 0, 1);
        let slice = chunk / 4096 * tp;
        let latencies: u64 = chain.windows(2).map(|h| packet_times(&w, h[0], h[1]).1 - tp).sum();
        let expect = ((size / chunk + n as u64 - 2) * slice + latencies) as f64;
        let out = csigsim::run(sc, |_| true);
        assert!(out.summary.invariants_ok);
        let t = out.tables.collectives.as_ref().unwrap();
        assert_eq!(t.op[0], op);
        assert_eq!(t.step.iter().filter(|s| s.is_some()).count() as u32, n - 1, "one step per hop");
        let (cct, busbw) = instance(t, 0);
        println!("ring {op}: CCT {:.2} us, analytic {:.2} us, busbw {busbw:.2} Gb/s", cct / 1e6, expect / 1e6);
        assert!((cct - expect).abs() / expect < 0.02, "{op}: CCT {cct} ps against {expect} ps");
        // busbw = algbw for broadcast and reduce (factor 1).
        assert!((busbw - size as f64 * 8.0 / cct * 1e3).abs() < 1e-9 * busbw);
    }
}

/// A rank sends the same slices of a connection in order: with `order =
/// "fifo"` a connection's slices never overlap on the NIC, so the root of a
/// broadcast sends slice j from j slice times on; with `"parallel"` up to
/// `slots` of them share the NIC and the first one arrives later.
#[test]
fn fifo_slices_leave_one_after_another_and_parallel_ones_share_the_nic() {
    let keys = "op = \"broadcast\"\nsize = \"4MiB\"\nchunk = \"512KiB\"";
    let fifo = load(&fat_tree_collective(4, keys));
    let mut w = World::new(fifo);
    let (tp, _) = packet_times(&w, 0, 1);
    w.run(u64::MAX);
    let slice = 128 * tp;
    for j in 0..8u64 {
        assert_eq!(w.flows()[j as usize].start_ps, j * slice, "slice {j} of the root");
    }
    let par = load(&fat_tree_collective(4, &format!("{keys}\norder = \"parallel\"")));
    let mut p = World::new(par);
    p.run(u64::MAX);
    assert!(p.flows()[..8].iter().all(|f| f.start_ps == 0));
    assert!(p.flows()[0].finish_ps.unwrap() > w.flows()[0].finish_ps.unwrap() + 6 * slice);
}

/// AllToAll on a non-blocking fabric: each rank sends (n - 1) transfers of
/// size / n, one packet to each peer in turn (the NIC's round robin over
/// peers r + 1, r + 2, ...), so at every moment each rank receives from one
/// rank only and the time is the (n - 1) (size / n) at the NIC's rate, plus
/// the last packet's latency to peer r - 1.
#[test]
fn all_to_all_time_matches_the_nic_bound_within_two_percent() {
    let n = 16;
    let per_peer = 256u64 << 10;
    let sc = load(&fat_tree_collective(n, "op = \"all_to_all\"\nsize = \"4MiB\""));
    assert_eq!(sc.flow_specs().len() as u32, n * (n - 1));
    assert!(sc.flow_specs().iter().all(|f| f.size == per_peer));
    let w = World::new(sc.clone());
    let (tp, _) = packet_times(&w, 0, 1);
    let last = (0..n).map(|r| packet_times(&w, r, (r + n - 1) % n).1).max().unwrap();
    let expect = ((n as u64 - 1) * per_peer / 4096 * tp - tp + last) as f64;
    let out = csigsim::run(sc, |_| true);
    assert!(out.summary.invariants_ok);
    let t = out.tables.collectives.as_ref().unwrap();
    let (cct, busbw) = instance(t, 0);
    println!("all_to_all: CCT {:.2} us, analytic {:.2} us, busbw {busbw:.2} Gb/s", cct / 1e6, expect / 1e6);
    assert!((cct - expect).abs() / expect < 0.02, "CCT {cct} ps against {expect} ps");
    let algbw = (4u64 << 20) as f64 * 8.0 / cct * 1e3;
    assert!((busbw - algbw * (n - 1) as f64 / n as f64).abs() < 1e-9 * busbw);
}

/// AllToAll on a leaf-spine of 16 leaves x 2 hosts and 2 spines, D-mod-K
/// routing, lossless, no congestion control, non-blocking against 2:1 and
/// 4:1 oversubscribed (fabric links at 50 and 25 Gb/s). Every leaf uplink
/// and every spine downlink carries the same bytes, so the fabric time is
/// the cross-leaf bytes over the fabric capacity: a ratio R slower than the
/// non-blocking time, less the intra-leaf share (1 of the 31 transfers of a
/// rank: R x 30/31, within 3.3% of R). The setting where the ratio holds:
/// few hosts per leaf (little intra-leaf traffic), balanced static routing,
/// transfers large against the buffers.
#[test]
fn all_to_all_slows_by_the_oversubscription_ratio() {
    let net = |extra: &str| {
        format!(
            "name = \"a2a\"\n[topology]\nkind = \"leaf_spine\"\nleaves = 16\nspines = 2\nhosts_per_leaf = 2\nrate = \"100Gbps\"\ndelay = \"1us\"\n{extra}\n\
             [switch]\nmode = \"pfc\"\nrouting = \"deterministic\"\n[transport]\nack_every = 64\n\
             [[workload]]\nkind = \"collective\"\nop = \"all_to_all\"\nsize = \"16MiB\"\n"
        )
    };
    let cct = |extra: &str| {
        let out = csigsim::run(load(&net(extra)), |_| true);
        assert!(out.summary.invariants_ok);
        instance(out.tables.collectives.as_ref().unwrap(), 0).0
    };
    let flat = cct("");
    for r in [2.0, 4.0] {
        let slow = cct(&format!("oversubscription = {r}"));
        println!("all_to_all {r}:1: CCT {:.1} us against {:.1} us non-blocking: x{:.3}", slow / 1e6, flat / 1e6, slow / flat);
        assert!((slow / flat - r).abs() / r < 0.05, "{r}:1 slowed x{}", slow / flat);
    }
}

/// Bytes each rank sends and receives in instance 0, from the flows.
fn bytes_per_rank(sc: &csigsim::Scenario, n: u32) -> (Vec<u64>, Vec<u64>) {
    let (mut tx, mut rx) = (vec![0; n as usize], vec![0; n as usize]);
    for f in &sc.flow_specs() {
        tx[f.src.0 as usize] += f.size;
        rx[f.dst.0 as usize] += f.size;
    }
    (tx, rx)
}

/// Tree all-reduce on NCCL's double binary tree, and tree broadcast and
/// reduce on one binary tree. Each tree edge carries the tree's part of the
/// buffer once per phase, so a rank sends, per tree, its part to its parent
/// (reduce) and to each child (broadcast): with two children in one tree and
/// a parent in both, 2 S. No closed form for the pipeline's fill, but the
/// busiest NIC bounds the time from below (2 S at the link's payload rate).
/// With 64 KiB slices, broadcast and reduce come within 5% of that bound
/// (measured: 0.8% and 3.2%); the double tree's all-reduce within 30%
/// (measured: 26%: a rank's four connections are not all ready at once, the
/// reduction waits for the slower of two children, and the down phase for a
/// round trip to the root).
#[test]
fn tree_collectives_carry_the_tree_bytes_and_approach_the_busiest_link_bound() {
    let n = 8u32;
    let size = 32u64 << 20;
    let payload_bps = 100e9 * 4096.0 / 4160.0;
    for (op, root) in [("all_reduce", None), ("broadcast", Some(3u32)), ("reduce", Some(6))] {
        let root_key = root.map_or(String::new(), |r| format!("\nroot = {r}"));
        let sc = load(&fat_tree_collective(n, &format!("op = \"{op}\"\nalgorithm = \"tree\"\nsize = \"32MiB\"\nchunk = \"64KiB\"{root_key}")));
        let (tx, rx) = bytes_per_rank(&sc, n);
        let trees: Vec<csigsim::workload::collective::tree::Tree> = match root {
            None => csigsim::workload::collective::tree::Tree::double(n).to_vec(),
            Some(r) => vec![csigsim::workload::collective::tree::Tree::rooted(n, r)],
        };
        let part = size / trees.len() as u64;
        for r in 0..n as usize {
            let (mut want_tx, mut want_rx) = (0, 0);
            for t in &trees {
                let (up, kids) = (t.parent[r].is_some() as u64, t.children[r].len() as u64);
                if op != "broadcast" {
                    want_tx += up * part;
                    want_rx += kids * part;
                }
                if op != "reduce" {
                    want_tx += kids * part;
                    want_rx += up * part;
                }
            }
            assert_eq!((tx[r], rx[r]), (want_tx, want_rx), "{op}: rank {r}");
        }
        let busiest = tx.iter().chain(&rx).copied().max().unwrap();
        let bound = busiest as f64 * 8.0 / payload_bps * 1e12;
        let out = csigsim::run(sc, |_| true);
        assert!(out.summary.invariants_ok);
        let t = out.tables.collectives.as_ref().unwrap();
        let (cct, busbw) = instance(t, 0);
        println!("tree {op}: CCT {:.1} us, busiest-NIC bound {:.1} us, busbw {busbw:.2} Gb/s", cct / 1e6, bound / 1e6);
        assert!(cct >= bound, "{op}: {cct} ps below the bound {bound} ps");
        let within = if op == "all_reduce" { 1.30 } else { 1.05 };
        assert!(cct < within * bound, "{op}: {cct} ps against the bound {bound} ps");
        let factor = if op == "all_reduce" { 2.0 * (n - 1) as f64 / n as f64 } else { 1.0 };
        assert!((busbw - size as f64 * 8.0 / cct * 1e3 * factor).abs() < 1e-9 * busbw);
    }
}

/// Every congestion control of the registry runs a ring all-reduce, a tree
/// all-reduce, a ring broadcast and an all-to-all at once, twice each with
/// two iterations: every instance completes, and two runs with the same seed
/// give the same tables.
#[test]
fn collectives_run_and_repeat_under_every_congestion_control() {
    let mut text = "name = \"cc\"\n[topology]\nkind = \"fat_tree\"\nk = 4\n[switch]\nmode = \"pfc\"\n\
        ecn = { kmin = \"50KB\", kmax = \"200KB\", pmax = 0.2 }\n[monitor]\ncc = true\n"
        .to_string();
    for (i, keys) in [
        "op = \"all_reduce\"\norder = \"fifo\"",
        "op = \"all_reduce\"\nalgorithm = \"tree\"",
        "op = \"broadcast\"\nroot = 2",
        "op = \"all_to_all\"",
    ]
    .iter()
    .enumerate()
    {
        let hosts: Vec<String> = (0..6).map(|h| format!("\"h{}\"", (h * 3 + i) % 16)).collect();
        text += &format!(
            "[[workload]]\nkind = \"collective\"\n{keys}\nsize = \"1200KB\"\nchunk = \"64KB\"\nhosts = [{}]\niterations = 2\ngap = \"5us\"\n",
            hosts.join(", ")
        );
    }
    for &(cc, _) in csigsim::cc::KINDS {
        // The settings an algorithm cannot run without.
        let extra: &[&str] = match cc {
            "dcqcn_rev" => &["switch.ecn.mode=\"ecp\""],
            "hpcc" => &["signals.int.max_hops=5"],
            _ => &[],
        };
        let cc_set = format!("transport.cc=\"{cc}\"");
        let mut sets = vec![cc_set.as_str()];
        sets.extend(extra);
        let a = csigsim::run(crate::common::load_with(&text, &sets), |_| true);
        let b = csigsim::run(crate::common::load_with(&text, &sets), |_| true);
        assert!(a.summary.invariants_ok, "{cc}: {:?}", a.summary.invariant_violations);
        assert_eq!(a.summary.flows_completed as usize, a.summary.flows_total, "{cc}");
        let t = a.tables.collectives.as_ref().unwrap();
        assert_eq!(t.step.iter().filter(|s| s.is_none()).count(), 8, "{cc}: 4 collectives x 2 iterations");
        assert!(t.finish_ps.iter().all(|f| f.is_some()), "{cc}");
        assert_eq!(a.tables, b.tables, "{cc}: same seed, same tables");
    }
}

/// The shipped example: tensor-parallel groups inside each pod and
/// data-parallel rings across the pods, each repeated with a compute gap.
/// Every group's instances are recorded, iteration by iteration, the data-
/// parallel rings are slower for sharing the NICs, and the run is the same
/// for the same seed.
#[test]
fn concurrent_groups_record_every_instance_deterministically() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/concurrent_collectives.toml");
    let sc = csigsim::scenario::load_file(&path, &[], None).unwrap_or_else(|e| panic!("{e}"));
    let a = csigsim::run(sc.clone(), |_| true);
    let b = csigsim::run(sc.clone(), |_| true);
    assert!(a.summary.invariants_ok);
    assert_eq!(a.tables, b.tables);
    assert_eq!(a.collectives_csv(), b.collectives_csv());
    let t = a.tables.collectives.as_ref().unwrap();
    let totals: Vec<usize> = (0..t.len()).filter(|&i| t.step[i].is_none()).collect();
    // 4 tensor-parallel groups x 6 iterations, 4 data-parallel groups x 2.
    assert_eq!(totals.len(), 4 * 6 + 4 * 2);
    for (name, iterations, ranks) in [("tp", 6u32, 4u32), ("dp", 2, 4)] {
        for g in 0..4 {
            let rows: Vec<usize> = totals.iter().copied().filter(|&i| t.name[i] == format!("{name}.g{g}")).collect();
            assert_eq!(rows.iter().map(|&i| t.iteration[i]).collect::<Vec<_>>(), (0..iterations).collect::<Vec<_>>());
            for &i in &rows {
                assert_eq!(t.ranks[i], ranks);
                assert!(t.finish_ps[i].is_some() && t.busbw_gbps[i].unwrap() > 0.0);
            }
            // Each iteration starts after the previous one began, by at least the gap.
            let gap = if name == "tp" { 20_000_000 } else { 100_000_000 };
            assert!(rows.windows(2).all(|p| t.start_ps[p[1]].unwrap() >= t.start_ps[p[0]].unwrap() + gap));
        }
    }
    // The data-parallel groups alone run faster than beside the tensor-parallel ones.
    let text = std::fs::read_to_string(&path).unwrap();
    let tp_at = text.rfind("[[workload]]").unwrap();
    let alone = csigsim::run(load(&text[..tp_at]), |_| true);
    let ta = alone.tables.collectives.as_ref().unwrap();
    let dp0 = |t: &csigsim::output::CollectiveTable| {
        let i = (0..t.len()).find(|&i| t.step[i].is_none() && t.name[i] == "dp.g0").unwrap();
        t.finish_ps[i].unwrap() - t.start_ps[i].unwrap()
    };
    println!("dp.g0 iteration 0: {} ps beside tp, {} ps alone", dp0(t), dp0(ta));
    assert!(dp0(t) > dp0(ta));
}

#[test]
fn new_collective_keys_are_checked_and_errors_name_them() {
    let base = fat_tree_collective(6, "op = \"all_reduce\"\nsize = \"6MB\"");
    let cases = [
        ("root = 1", "workload[0].root", "has no root"),
        ("group_size = 4", "workload[0].group_size", "divide the 6 hosts"),
        ("group_layout = \"strided\"", "workload[0].group_layout", "with group_size"),
    ];
    for (extra, key, msg) in cases {
        let text = base.replace("size = \"6MB\"", &format!("size = \"6MB\"\n{extra}"));
        let e = csigsim::scenario::load_str(&text, "t.toml", std::path::Path::new("."), &[], None).unwrap_err();
        assert_eq!(e.key.as_deref(), Some(key), "{e}");
        assert!(e.to_string().contains(msg), "{e}");
    }
    let other = [
        ("op = \"all_gather\"\nsize = \"6MB\"\nalgorithm = \"tree\"", "workload[0].algorithm", "not all_gather"),
        ("op = \"all_to_all\"\nsize = \"6MB\"\nalgorithm = \"ring\"", "workload[0].algorithm", "direct"),
        ("op = \"broadcast\"\nsize = \"6MB\"\nroot = 6", "workload[0].root", "0 .. 5"),
        ("op = \"all_to_all\"\nsize = \"11B\"\nchannels = 2", "workload[0].size", "12 bytes"),
    ];
    for (keys, key, msg) in other {
        let e = csigsim::scenario::load_str(&fat_tree_collective(6, keys), "t.toml", std::path::Path::new("."), &[], None).unwrap_err();
        assert_eq!(e.key.as_deref(), Some(key), "{e}");
        assert!(e.to_string().contains(msg), "{e}");
    }
}

/// Groups: `blocks` cuts the hosts into consecutive groups, `strided` takes
/// one host of each block; each group is its own collective.
#[test]
fn groups_cut_the_hosts_in_blocks_or_strides() {
    for (layout, first) in [("blocks", [0u32, 1, 2, 3]), ("strided", [0, 4, 8, 12])] {
        let sc = load(&fat_tree_collective(
            16,
            &format!("op = \"all_to_all\"\nsize = \"64KB\"\ngroup_size = 4\ngroup_layout = \"{layout}\"\nname = \"x\""),
        ));
        assert_eq!(sc.collectives.len(), 4);
        assert_eq!(sc.collectives[1].name, "x.g1");
        // Group 0's flows stay among its hosts.
        let r = sc.collectives[0].steps[0].start as usize..sc.collectives[0].steps.last().unwrap().end as usize;
        assert_eq!(r.len(), 12);
        for f in &sc.flow_specs()[r] {
            assert!(first.contains(&f.src.0) && first.contains(&f.dst.0), "{layout}: {f:?}");
        }
    }
}

/// Every flow of the new operations starts when its prerequisites allow and
/// not before: at the last arrival of what it waits for plus the gap, or, if
/// it queues behind a flow of its connection, once that flow has been sent
/// (after the wire time of its packets, before its arrival).
#[test]
fn every_flow_starts_when_its_inputs_and_its_queue_allow() {
    for keys in [
        "op = \"broadcast\"\nroot = 1",
        "op = \"reduce\"\nalgorithm = \"tree\"\nroot = 4",
        "op = \"all_reduce\"\nalgorithm = \"tree\"",
        "op = \"all_to_all\"",
        "op = \"all_gather\"\norder = \"fifo\"",
    ] {
        let text = fat_tree_collective(6, &format!("{keys}\nsize = \"3MB\"\nchunk = \"200KB\"\niterations = 2\ngap = \"7us\"\nchannels = 2"));
        let mut w = World::new(load(&text));
        w.run(u64::MAX);
        let (tp, _) = packet_times(&w, 0, 1);
        let f = w.flows();
        assert!(f.iter().all(|x| x.finish_ps.is_some()), "{keys}");
        let deps = &w.scenario().flow_deps();
        assert!(deps.iter().any(|d| d.gap.0 == 7_000_000), "{keys}: the second iteration waits for the first");
        for d in deps {
            let me = &f[d.flow as usize];
            let ready = d.after.iter().map(|&a| f[a as usize].finish_ps.unwrap() + d.gap.0).max().unwrap_or(0);
            assert!(me.start_ps >= ready, "{keys}: flow {}", d.flow);
            match d.after_sent {
                None => assert_eq!(me.start_ps, ready, "{keys}: flow {}", d.flow),
                Some(p) => {
                    let prev = &f[p as usize];
                    assert!(me.start_ps >= prev.start_ps + (prev.npkts as u64 - 1) * tp, "{keys}: flow {}", d.flow);
                    assert!(me.start_ps == ready || me.start_ps < prev.finish_ps.unwrap(), "{keys}: flow {}", d.flow);
                }
            }
        }
    }
}
