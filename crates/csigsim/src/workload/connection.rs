//! Connection expansion (with `[transport.connection]`): the workloads'
//! flows are messages; messages with the same source, destination, name and
//! channel share a connection; each message becomes one flow per QP of its
//! connection (its parts, flows `m * qps .. m * qps + qps`). How many bytes
//! each part carries is decided when the message is posted
//! (`transport::connection`); until then each part is sized for the whole
//! message. Dependencies and collective steps are rewritten onto the parts:
//! a flow that waited for a message waits for all its parts.

use super::{Extras, FlowSpec};
use std::collections::BTreeMap;

/// The messages and their connections, for the transport.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnPlan {
    pub qps: u32,
    /// Per message: its connection.
    pub msg_conn: Vec<u32>,
    /// Per message: its size in bytes.
    pub msg_size: Vec<u64>,
    /// Connections in all.
    pub conns: u32,
}

/// Flows a connection expansion of `messages` messages over `qps` QPs
/// would make.
pub fn parts(messages: usize, qps: u32) -> u64 {
    (messages as u64).saturating_mul(qps as u64)
}

/// Replaces the messages in `flows` by their parts and rewrites `extras`.
pub fn expand(qps: u32, flows: &mut Vec<FlowSpec>, extras: &mut Extras) -> ConnPlan {
    let n = qps as usize;
    let mut ids: BTreeMap<(u32, u32, &str, u32), u32> = BTreeMap::new();
    let mut msg_conn = Vec::with_capacity(flows.len());
    for f in flows.iter() {
        let next = ids.len() as u32;
        msg_conn.push(*ids.entry((f.src.0, f.dst.0, f.name.as_str(), f.channel)).or_insert(next));
    }
    let conns = ids.len() as u32;
    drop(ids);
    let msg_size = flows.iter().map(|f| f.size).collect();
    let messages = std::mem::take(flows);
    flows.reserve(messages.len() * n);
    for f in messages {
        for _ in 0..n {
            flows.push(f.clone());
        }
    }
    // QP `k` of a message between servers takes the NICs of rail `k`.
    for s in &extras.nic_spread {
        for k in 0..qps {
            let part = &mut flows[(s.flow * qps + k) as usize];
            part.src.0 += k % s.src_nics;
            part.dst.0 += k % s.dst_nics;
        }
    }
    let q = qps;
    for d in &mut extras.deps {
        d.flow *= q;
        d.after = d.after.iter().flat_map(|&a| (0..q).map(move |k| a * q + k)).collect();
    }
    // Each message's parts but the first wait for the same flows; a part
    // queued behind an earlier message's (fifo order) waits for that
    // message's part on the same QP to have been sent.
    let mut more = Vec::new();
    for d in &mut extras.deps {
        let sent = d.after_sent;
        d.after_sent = sent.map(|a| a * q);
        for k in 1..q {
            more.push(super::collective::FlowDep { flow: d.flow + k, after: d.after.clone(), gap: d.gap, after_sent: sent.map(|a| a * q + k) });
        }
    }
    extras.deps.extend(more);
    for c in &mut extras.collectives {
        for s in &mut c.steps {
            *s = s.start * q..s.end * q;
        }
    }
    ConnPlan { qps, msg_conn, msg_size, conns }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::HostId;
    use crate::units::Time;
    use crate::workload::collective::FlowDep;

    fn msg(src: u32, dst: u32, size: u64, channel: u32) -> FlowSpec {
        FlowSpec { src: HostId(src), dst: HostId(dst), size, start: Time(0), name: "m".into(), rate_cap: u64::MAX, channel }
    }

    #[test]
    fn messages_of_one_pair_and_channel_share_a_connection_and_become_parts() {
        let mut flows = vec![msg(0, 1, 10, 0), msg(1, 2, 20, 0), msg(0, 1, 30, 0), msg(0, 1, 40, 1)];
        let mut ex = Extras { deps: vec![FlowDep { flow: 2, after: vec![0, 1], gap: Time(5), after_sent: None }], ..Default::default() };
        let plan = expand(2, &mut flows, &mut ex);
        assert_eq!(plan.msg_conn, [0, 1, 0, 2]);
        assert_eq!(plan.conns, 3);
        assert_eq!(plan.msg_size, [10, 20, 30, 40]);
        assert_eq!(flows.len(), 8);
        assert_eq!((flows[4].size, flows[5].size), (30, 30));
        // Message 2 (parts 4, 5) waits for all parts of messages 0 and 1.
        assert_eq!(ex.deps.len(), 2);
        assert_eq!((ex.deps[0].flow, &ex.deps[0].after[..]), (4, &[0, 1, 2, 3][..]));
        assert_eq!((ex.deps[1].flow, &ex.deps[1].after[..], ex.deps[1].gap), (5, &[0, 1, 2, 3][..], Time(5)));
    }
}
