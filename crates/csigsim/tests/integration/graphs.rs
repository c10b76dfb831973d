//! Workloads as graphs of flows, compute delays and joins
//! (`workload::dag`): each operation begins when those it waits for are
//! complete, and the flows' times are the network's.

use crate::common::{analytic_fct, load};
use csigsim::id::HostId;
use csigsim::units::Time;
use csigsim::workload::dag::{Dag, Op};
use csigsim::workload::{FlowSpec, Flows, Workload};

const TWO_HOSTS: &str = r#"
name = "graph"
[topology]
kind = "custom"
hosts = ["h0", "h1"]
switches = ["s0"]
links = [
  { a = "h0", b = "s0", rate = "100Gbps", delay = "1us" },
  { a = "s0", b = "h1", rate = "100Gbps", delay = "1us" },
]
[transport]
cc = "none"
mtu = 4096
header = 64
"#;

fn flow(src: u32, dst: u32, size: u64) -> FlowSpec {
    FlowSpec { src: HostId(src), dst: HostId(dst), size, start: Time(0), name: "g".into(), rate_cap: u64::MAX, channel: 0 }
}

/// The FCT of `size` bytes alone from h0 to h1 (or back).
fn alone(size: u64) -> u64 {
    let full = size / 4096;
    let mut sizes = vec![4160u64; full as usize];
    if !size.is_multiple_of(4096) {
        sizes.push(size % 4096 + 64);
    }
    analytic_fct(&sizes, &[(100_000_000_000, 1_000_000), (100_000_000_000, 1_000_000)])
}

/// Rank 0 computes 10 us, sends 1 MB to rank 1, which computes 5 us on
/// it and sends 100 KB back; rank 0's second compute of 3 us waits for
/// that reply. Every time is exact: compute plus store-and-forward.
#[test]
fn a_graph_of_compute_and_flows_runs_each_step_after_the_last() {
    let mut sc = load(TWO_HOSTS);
    let ops = vec![
        Op::Compute { stream: 0, duration: Time(10_000_000) },
        Op::Flow(0),
        Op::Compute { stream: 1, duration: Time(5_000_000) },
        Op::Flow(1),
        Op::Compute { stream: 0, duration: Time(3_000_000) },
    ];
    let dag = Dag::new(vec![flow(0, 1, 1_000_000), flow(1, 0, 100_000)], ops, vec![(1, 0), (2, 1), (3, 2), (4, 3)]).unwrap();
    sc.workloads = vec![Workload { first: 0, flows: Flows::Dag(dag) }];
    let mut w = csigsim::World::new(sc);
    w.run(u64::MAX);
    let f = w.flows();
    let (a, b) = (alone(1_000_000), alone(100_000));
    assert_eq!((f[0].start_ps, f[0].finish_ps), (10_000_000, Some(10_000_000 + a)));
    let second = 10_000_000 + a + 5_000_000;
    assert_eq!((f[1].start_ps, f[1].finish_ps), (second, Some(second + b)));
    let (begun, ended) = w.op_times(0).expect("a graph");
    assert_eq!(begun, &[0, 10_000_000, 10_000_000 + a, second, second + b]);
    assert_eq!(ended, &[10_000_000, 10_000_000 + a, second, second + b, second + b + 3_000_000]);
    // The run ends with the last compute, after the last flow.
    assert_eq!(w.now(), second + b + 3_000_000);
}

/// Two sends wait for a join of two computes on one stream: the stream
/// runs them one after the other, so the sends begin at 4 + 6 us; a flow
/// that waits for nothing starts at its scheduled start meanwhile.
#[test]
fn a_join_releases_its_flows_when_the_last_compute_is_over() {
    let mut sc = load(TWO_HOSTS);
    let mut early = flow(1, 0, 4096);
    early.start = Time(2_000_000);
    let ops = vec![
        Op::Compute { stream: 0, duration: Time(4_000_000) },
        Op::Compute { stream: 0, duration: Time(6_000_000) },
        Op::Join,
        Op::Flow(0),
        Op::Flow(1),
        Op::Flow(2),
    ];
    let dag = Dag::new(vec![flow(0, 1, 4096), flow(0, 1, 4096), early], ops, vec![(2, 0), (2, 1), (3, 2), (4, 2)]).unwrap();
    sc.workloads = vec![Workload { first: 0, flows: Flows::Dag(dag) }];
    let mut w = csigsim::World::new(sc);
    w.run(u64::MAX);
    let f = w.flows();
    assert_eq!((f[0].start_ps, f[1].start_ps, f[2].start_ps), (10_000_000, 10_000_000, 2_000_000));
    assert!(f.iter().all(|x| x.finish_ps.is_some()));
    let (_, ended) = w.op_times(0).unwrap();
    assert_eq!(&ended[..3], &[4_000_000, 10_000_000, 10_000_000]);
    assert_eq!(ended[5], 2_000_000 + alone(4096));
}
