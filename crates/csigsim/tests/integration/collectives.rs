//! Collectives: a ring AllReduce's completion time against the analytic one,
//! busbw, dependencies and the collectives table.

use crate::common::load;
use csigsim::id::HostId;
use csigsim::World;

/// A ring AllReduce of `size` bytes per rank on hosts h0..h(n-1) of a
/// `k`-ary fat tree at 100 Gb/s, lossless, no congestion control.
fn ring(k: u32, n: u32, size: &str) -> String {
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
fn analytic_ps(w: &World, n: u32, size: u64) -> f64 {
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
    assert_eq!(sc.flows.len(), 2 * 6 * 4 * 4);
    assert!(sc.flows.iter().all(|f| f.size == 250_000));
    let out = csigsim::run(sc.clone(), |_| true);
    let mut w = World::new(sc);
    w.run(u64::MAX);
    let f = w.flows();
    for d in &w.scenario().deps {
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
