//! A flow's state is held from its start until nothing of it can act again,
//! then retired to its record. Retiring changes no output: each case runs
//! twice, retiring and keeping every state, and compares every output; and
//! each case does retire (else the comparison would prove nothing).

use crate::common::load_with;
use csigsim::output::collect;
use csigsim::sim::RunState;
use csigsim::World;

/// Fat tree of 16 hosts: `workload` and `extra` keys, then `sets`.
fn fat_tree(extra: &str, workload: &str) -> String {
    format!("name = \"states\"\n[topology]\nkind = \"fat_tree\"\nk = 4\nrate = \"100Gbps\"\ndelay = \"1us\"\n{extra}\n[[workload]]\n{workload}\n")
}

const INCAST: &str = "kind = \"incast\"\nreceiver = \"h0\"\nsize = \"200KB\"";
const PERMUTATION: &str = "kind = \"permutation\"\nsize = \"300KB\"";

/// Runs to the end; the world and its outputs with the wall time taken out.
fn run(toml: &str, sets: &[&str], keep: bool) -> (World, String) {
    let mut w = World::new(load_with(toml, sets));
    if keep {
        w.keep_flow_states();
    }
    while w.run(1 << 20) == RunState::Paused {}
    w.finish();
    let out = collect(&w, 0.0, "completed");
    let text = [out.flows_csv(), out.links_csv(), out.signals_csv(), out.cc_csv(), out.collectives_csv(), out.summary_json()].join("\n---\n");
    (w, text)
}

/// The outputs are the same whether states are retired or kept; returns
/// the retiring world.
fn same_outputs(toml: &str, sets: &[&str]) -> World {
    let (retiring, a) = run(toml, sets, false);
    let (keeping, b) = run(toml, sets, true);
    assert_eq!(a, b, "{sets:?}");
    let (r, k) = (retiring.flow_store(), keeping.flow_store());
    assert!(r.retired() > 0, "{sets:?}: no state retired");
    assert_eq!((k.retired(), k.live()), (0, k.len()), "{sets:?}: every state kept");
    assert!(retiring.flows().iter().all(|f| f.finish_ps.is_some()), "{sets:?}: every flow finished");
    retiring
}

#[test]
fn lossy_incast_with_drops_and_timeouts_is_unchanged_by_retiring() {
    // A 15-to-1 incast into a 150 KB buffer drops; go-back-N resends and
    // stale copies arrive after their flows' senders are done.
    let w = same_outputs(&fat_tree("[switch]\nmode = \"lossy\"\nbuffer = \"150KB\"\n[transport]\ncc = \"dctcp\"\nrto = \"100us\"", INCAST), &[]);
    assert!(w.stats().packets_dropped > 0);
    assert!(w.stats().timeouts > 0 || w.stats().retransmits > 0);
}

#[test]
fn dcqcn_with_cnps_and_rate_timers_is_unchanged_by_retiring() {
    let w = same_outputs(
        &fat_tree("[switch]\nmode = \"pfc\"\necn = { kmin = \"20KB\", kmax = \"80KB\", pmax = 0.2 }\n[transport]\ncc = \"dcqcn\"", INCAST),
        &[],
    );
    assert!(w.stats().cnps_sent > 0);
}

#[test]
fn trimming_nscc_with_delayed_acks_is_unchanged_by_retiring() {
    let extra = "[switch]\nmode = \"trim\"\nrouting = \"spray\"\nbuffer = \"300KB\"\n[transport]\ncc = \"nscc\"\nretransmit = \"selective\"\nack_every = 4";
    same_outputs(&fat_tree(extra, PERMUTATION), &[]);
    same_outputs(&fat_tree(extra, INCAST), &[]);
}

#[test]
fn a_ring_all_reduce_holds_the_flows_in_progress_not_every_flow() {
    let toml = fat_tree("[switch]\nmode = \"pfc\"", "kind = \"collective\"\nop = \"all_reduce\"\nsize = \"2MB\"");
    let w = same_outputs(&toml, &[]);
    let s = w.flow_store();
    // 16 ranks, 2 x 15 steps: 480 flows, one a rank at a time. A sender's
    // last flow is held until its NIC sends the next one's first packet,
    // so two a rank at most.
    assert_eq!(s.len(), 480);
    assert!(s.peak_live() <= 32, "{} states held at once", s.peak_live());
    assert!(s.retired() >= 480 - 16, "{} retired", s.retired());
}

#[test]
fn every_congestion_control_in_every_switch_mode_is_unchanged_by_retiring() {
    // A permutation and an incast at once into small buffers: queues,
    // marks, drops or trims or pauses, and resends, under each controller.
    let workloads = format!("{PERMUTATION}\n[[workload]]\n{INCAST}");
    let retransmit = |mode: &str| if mode == "trim" { "selective" } else { "go_back_n" };
    for cc in ["none", "dctcp", "dcqcn", "dcqcn_rev", "timely", "swift", "hpcc", "nscc", "mcc"] {
        for mode in ["pfc", "lossy", "trim"] {
            // DCQCN-Rev's switches run the enhanced congestion point; HPCC
            // reads INT.
            let ecp = if cc == "dcqcn_rev" { ", mode = \"ecp\"" } else { "" };
            let int = if cc == "hpcc" { "\n[signals.int]" } else { "" };
            let extra = format!(
                "[switch]\nmode = \"{mode}\"\nbuffer = \"400KB\"\necn = {{ kmin = \"20KB\", kmax = \"80KB\", pmax = 0.2{ecp} }}\n[transport]\ncc = \"{cc}\"\nretransmit = \"{}\"\nrto = \"200us\"{int}",
                retransmit(mode)
            );
            same_outputs(&fat_tree(&extra, &workloads), &[&format!("name=\"{cc} {mode}\"")]);
        }
    }
}
