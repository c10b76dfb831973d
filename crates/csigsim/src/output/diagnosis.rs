//! What a run that ended with unfinished flows was doing: the flows left,
//! the ports PFC holds paused (and the cycle they form, a PFC deadlock), and
//! the counters of the stretch since the last progress that point at a cause.
//! Read at the end of the run through [`World`]'s accessors.

use crate::engine::World;
use crate::id::{NodeId, PortId};
use crate::watchdog::Mark;
use serde::Serialize;

/// Unfinished flows listed by name, at most.
pub const MAX_FLOWS_LISTED: usize = 10;

/// One unfinished flow.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct UnfinishedFlow {
    pub flow_id: u32,
    pub name: String,
    pub src: String,
    pub dst: String,
    pub started: bool,
    /// Payload delivered in order to the receiver.
    pub delivered_bytes: u64,
    pub size_bytes: u64,
    /// The sender has packets sent and not yet acknowledged.
    pub in_flight: bool,
}

/// Counters over the stretch from the last progress to the end of the run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Stretch {
    pub since_ns: f64,
    pub length_ns: f64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub nacks: u64,
    pub trims: u64,
    pub drops: u64,
    pub pauses: u64,
}

/// summary.json's `diagnosis`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Diagnosis {
    /// "pfc_deadlock", "retransmission_storm", "trim_loop", "nack_loop",
    /// "pfc_paused", "no_events" or "no_progress".
    pub cause: String,
    /// One line for people.
    pub message: String,
    pub unfinished_flows: u64,
    /// The first [`MAX_FLOWS_LISTED`] unfinished flows, by flow id.
    pub flows: Vec<UnfinishedFlow>,
    /// Directed links whose sending port is paused by PFC, "from->to".
    pub paused_ports: Vec<String>,
    /// Paused switch-to-switch links that form a cycle, in order; empty
    /// when there is none.
    pub pfc_cycle: Vec<String>,
    pub stretch: Stretch,
}

fn link_name(w: &World, p: PortId) -> String {
    let ports = w.ports();
    format!("{}->{}", w.node_name(ports[p].node()), w.node_name(ports[ports[p].peer()].node()))
}

/// A cycle of paused switch-to-switch ports: port A (on switch X, towards Y)
/// paused, and Y has a paused port towards the next switch, back to X.
fn pfc_cycle(w: &World, paused: &[PortId]) -> Vec<PortId> {
    let net = w.network();
    let ports = w.ports();
    let is_switch = |n: NodeId| net.switch_of(n).is_some();
    let edges: Vec<PortId> =
        paused.iter().copied().filter(|&p| is_switch(ports[p].node()) && is_switch(ports[ports[p].peer()].node())).collect();
    // Depth-first search over the paused ports; colours per port.
    let mut colour = vec![0u8; ports.len()];
    let mut stack: Vec<(PortId, usize)> = Vec::new();
    for &start in &edges {
        if colour[start.ix()] != 0 {
            continue;
        }
        colour[start.ix()] = 1;
        stack.push((start, 0));
        while let Some(&mut (p, ref mut next)) = stack.last_mut() {
            let to = ports[ports[p].peer()].node();
            let succ: Vec<PortId> = edges.iter().copied().filter(|&q| ports[q].node() == to).collect();
            if *next < succ.len() {
                let q = succ[*next];
                *next += 1;
                match colour[q.ix()] {
                    0 => {
                        colour[q.ix()] = 1;
                        stack.push((q, 0));
                    }
                    1 => {
                        let from = stack.iter().position(|&(s, _)| s == q).expect("grey ports are on the stack");
                        return stack[from..].iter().map(|&(s, _)| s).collect();
                    }
                    _ => {}
                }
            } else {
                colour[p.ix()] = 2;
                stack.pop();
            }
        }
    }
    Vec::new()
}

/// The diagnosis of a run that ended for `end_reason` with the counters at
/// its last progress in `mark`; `None` when every flow completed.
pub fn diagnose(w: &World, end_reason: &str, mark: &Mark) -> Option<Diagnosis> {
    let sc = w.scenario();
    let hosts = &sc.topology.hosts;
    // Counted in one pass; only the listed ones are kept (a stalled
    // collective can leave millions unfinished).
    let mut n = 0usize;
    let mut listed = Vec::new();
    for (i, f) in w.flow_store().records().enumerate().filter(|(_, f)| f.finish_ps.is_none()) {
        n += 1;
        if listed.len() < MAX_FLOWS_LISTED {
            listed.push((i, f));
        }
    }
    if n == 0 {
        return None;
    }
    let flows = listed
        .into_iter()
        .map(|(i, f)| UnfinishedFlow {
            flow_id: f.id.0,
            name: sc.flow_name(crate::id::FlowId(i as u32)).to_string(),
            src: hosts[f.src.ix()].clone(),
            dst: hosts[f.dst.ix()].clone(),
            started: f.started,
            delivered_bytes: f.delivered_bytes(),
            size_bytes: f.size,
            in_flight: f.in_flight,
        })
        .collect();
    let paused: Vec<PortId> = (0..w.ports().len() as u32).map(PortId).filter(|&p| w.ports()[p].paused()).collect();
    let cycle = pfc_cycle(w, &paused);
    let s = w.stats();
    let now = w.now();
    let stretch = Stretch {
        since_ns: mark.at_ps as f64 / 1000.0,
        length_ns: (now - mark.at_ps) as f64 / 1000.0,
        retransmits: s.retransmits - mark.retransmits,
        timeouts: s.timeouts - mark.timeouts,
        nacks: s.nacks_sent - mark.nacks_sent,
        trims: s.packets_trimmed - mark.packets_trimmed,
        drops: s.packets_dropped - mark.packets_dropped,
        pauses: s.pauses_sent - mark.pauses_sent,
    };
    let cycle_names: Vec<String> = cycle.iter().map(|&p| link_name(w, p)).collect();
    let (cause, why) = if !cycle.is_empty() {
        ("pfc_deadlock", format!("PFC deadlock: paused links form the cycle {}", cycle_names.join(", ")))
    } else if end_reason == "stalled" && stretch.trims > 0 && stretch.nacks > 0 {
        ("trim_loop", format!("trim loop: {} trims and {} NACKs without a delivery", stretch.trims, stretch.nacks))
    } else if end_reason == "stalled" && stretch.nacks > 0 {
        ("nack_loop", format!("NACK loop: {} NACKs and {} retransmissions without a delivery", stretch.nacks, stretch.retransmits))
    } else if end_reason == "stalled" && (stretch.timeouts > 0 || stretch.retransmits > 0) {
        (
            "retransmission_storm",
            format!("retransmission storm: {} timeouts and {} retransmissions without a delivery", stretch.timeouts, stretch.retransmits),
        )
    } else if !paused.is_empty() {
        ("pfc_paused", format!("{} ports paused by PFC", paused.len()))
    } else if end_reason == "completed" {
        ("no_events", "no event was left to run".to_string())
    } else {
        ("no_progress", "no data packet delivered".to_string())
    };
    let message = format!(
        "{n} of {} flows unfinished after {:.3} us without a delivery; {why}",
        w.flow_store().len(),
        stretch.length_ns / 1000.0
    );
    Some(Diagnosis {
        cause: cause.to_string(),
        message,
        unfinished_flows: n as u64,
        flows,
        paused_ports: paused.iter().map(|&p| link_name(w, p)).collect(),
        pfc_cycle: cycle_names,
        stretch,
    })
}
