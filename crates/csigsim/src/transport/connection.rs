//! Connections with several queue pairs (`[transport.connection]`), as NCCL
//! opens them between two ranks (`NCCL_IB_QPS_PER_CONNECTION`). Each QP has
//! its own entropy, so the fabric hashes the QPs of one connection onto
//! different paths.
//!
//! The workload's flows are the messages; each message is expanded (in
//! `workload::connection`) into one flow per QP of its connection, its parts.
//! When the message is posted (its parts' start), this module decides how
//! many bytes each part carries:
//! - round robin (`split_data = false`, NCCL's default): the whole message on
//!   the connection's next QP in turn;
//! - striping (`split_data = true`): stripes of
//!   `ceil(ceil(size / qps) / align) * align` bytes, starting at the
//!   connection's current QP;
//! - CAST (`qp_sched.enable`): striped by the scheduler's weights when each
//!   QP's share reaches `split_data_min`, otherwise whole on one QP (weighted
//!   round robin if `wrr_enable`, else the next in turn); see [`crate::lb::cast`].
//!
//! A part of no bytes completes at once. A part's completion at the sender
//! (its last ACK) is CAST's RTT sample for its QP. This runs once per message
//! and per part, never per packet.

use super::FlowStore;
use crate::id::FlowId;
use crate::lb::cast::{self, Cast, CastConfig};
use crate::units::tx_time_ps;
use crate::workload::connection::ConnPlan;
use serde::Deserialize;

/// Largest `qps` (the reference plug-in's `NCCL_IB_MAX_QPS`).
pub const MAX_QPS: u32 = 128;

/// `[transport.connection]`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ConnectionConfig {
    /// `NCCL_IB_QPS_PER_CONNECTION` (default 1).
    #[serde(default = "default_qps")]
    pub qps: u32,
    /// `NCCL_IB_SPLIT_DATA_ON_QPS`: split each message over all QPs (true) or
    /// send each whole on the next QP in turn (false, the default).
    #[serde(default)]
    pub split_data: bool,
    /// Stripe alignment in bytes (NCCL's 128 B, for its LL/LL128 protocols).
    #[serde(default = "default_align")]
    pub align: u32,
    /// `NCCL_IB_QP_SCHED_*`: the CAST scheduler.
    #[serde(default)]
    pub qp_sched: CastConfig,
}

fn default_qps() -> u32 {
    1
}
fn default_align() -> u32 {
    128
}

impl Default for ConnectionConfig {
    fn default() -> Self {
        ConnectionConfig { qps: default_qps(), split_data: false, align: default_align(), qp_sched: CastConfig::default() }
    }
}

impl ConnectionConfig {
    /// The first invalid key (relative to `[transport.connection]`) and why.
    pub fn check(&self) -> Result<(), (String, String)> {
        if self.qps == 0 || self.qps > MAX_QPS {
            return Err(("qps".into(), format!("qps must be between 1 and {MAX_QPS}, got {}", self.qps)));
        }
        if self.align == 0 {
            return Err(("align".into(), "align must be at least 1 byte".into()));
        }
        self.qp_sched.check().map_err(|(k, m)| (format!("qp_sched.{k}"), m))
    }
}

/// What CAST reads of a part whose sender is done.
#[derive(Clone, Copy, Debug)]
pub struct PartDone {
    pub id: FlowId,
    pub size: u64,
    /// When the part started (its message was posted).
    pub start_ps: u64,
    pub base_rtt_ps: u64,
}

/// The connections of a run and the state of their QPs.
#[derive(Debug)]
pub struct Connections {
    cfg: ConnectionConfig,
    /// QPs per connection: message `m`'s parts are flows `m * n .. m * n + n`.
    n: usize,
    msg_conn: Vec<u32>,
    msg_size: Vec<u64>,
    /// The message's split is decided (at its first part's start).
    decided: Vec<bool>,
    /// Per connection: the QP the next message starts at (NCCL's `qpIndex`).
    qp_index: Vec<u32>,
    /// Per connection, when CAST is on.
    cast: Vec<Cast>,
    /// Part sizes being decided (reused).
    sizes: Vec<u64>,
    /// Messages by how they went: split over the QPs, or whole on one.
    pub split_messages: u64,
    pub whole_messages: u64,
}

impl Connections {
    pub fn new(cfg: ConnectionConfig, plan: &ConnPlan) -> Connections {
        let n = plan.qps as usize;
        let conns = plan.conns as usize;
        let cast = if cfg.qp_sched.enable { vec![Cast::new(n); conns] } else { Vec::new() };
        Connections {
            cfg,
            n,
            msg_conn: plan.msg_conn.clone(),
            msg_size: plan.msg_size.clone(),
            decided: vec![false; plan.msg_conn.len()],
            qp_index: vec![0; conns],
            cast,
            sizes: vec![0; n],
            split_messages: 0,
            whole_messages: 0,
        }
    }

    /// QPs per connection.
    pub fn qps(&self) -> usize {
        self.n
    }

    /// The message and QP of a part flow.
    pub fn part(&self, flow: FlowId) -> (usize, usize) {
        (flow.ix() / self.n, flow.ix() % self.n)
    }

    /// The connection of message `m`.
    pub fn conn_of(&self, m: usize) -> usize {
        self.msg_conn[m] as usize
    }

    /// CAST's state of a connection, when CAST is on.
    pub fn cast(&self, conn: usize) -> Option<&Cast> {
        self.cast.get(conn)
    }

    /// Gives every part its QP's entropy: QP `q` of a connection keeps the
    /// entropy drawn for part `q` of the connection's first message.
    pub fn assign_entropy(&self, flows: &mut FlowStore) {
        let mut first: Vec<u32> = vec![u32::MAX; self.qp_index.len()];
        for (m, &c) in self.msg_conn.iter().enumerate() {
            if first[c as usize] == u32::MAX {
                first[c as usize] = m as u32;
            }
            let f0 = first[c as usize] as usize * self.n;
            for q in 0..self.n {
                let entropy = flows.spec(FlowId((f0 + q) as u32)).entropy;
                flows.set_entropy(FlowId((m * self.n + q) as u32), entropy);
            }
        }
    }

    /// A part is starting at `now`: at the message's first, decide and set
    /// every part's size.
    pub fn on_part_start(&mut self, now: u64, flow: FlowId, flows: &mut FlowStore) {
        let (m, _) = self.part(flow);
        if self.decided[m] {
            return;
        }
        self.decided[m] = true;
        let (c, size, n) = (self.conn_of(m), self.msg_size[m], self.n);
        let align = self.cfg.align as u64;
        let start = self.qp_index[c] as usize;
        let order = (0..n).map(move |i| (start + i) % n);
        let mut sizes = std::mem::take(&mut self.sizes);
        sizes.iter_mut().for_each(|s| *s = 0);
        let sched = &self.cfg.qp_sched;
        let split = if n == 1 {
            false
        } else if sched.enable {
            self.cast[c].on_post(now, sched);
            self.cfg.split_data && size / n as u64 >= sched.split_data_min.0
        } else {
            self.cfg.split_data
        };
        if n == 1 {
            sizes[0] = size;
        } else if split {
            match self.cast.get(c) {
                Some(k) if k.ready => cast::weighted_split(size, &k.weights, order, align, &mut sizes),
                _ => cast::even_split(size, n, order, align, &mut sizes),
            }
            self.split_messages += 1;
        } else {
            let q = match self.cast.get_mut(c) {
                Some(k) if sched.wrr_enable && k.ready => k.wrr_pick(),
                _ => {
                    self.qp_index[c] = ((start + 1) % n) as u32;
                    start
                }
            };
            sizes[q] = size;
            self.whole_messages += 1;
        }
        for (q, &s) in sizes.iter().enumerate() {
            flows.set_size(FlowId((m * n + q) as u32), s);
        }
        self.sizes = sizes;
    }

    /// Takes from `other`, the same run's connections in another partition
    /// of a parallel run, the state of the messages `theirs` says (those
    /// whose sender is there: their splits, their connections' next QP and
    /// CAST state), and adds its counts.
    pub(crate) fn take_part(&mut self, other: &Connections, theirs: impl Fn(usize) -> bool) {
        // A connection's state once, from the first of its messages there.
        let mut taken = vec![false; self.qp_index.len()];
        for m in (0..self.decided.len()).filter(|&m| theirs(m)) {
            self.decided[m] = other.decided[m];
            let c = self.conn_of(m);
            if std::mem::replace(&mut taken[c], true) {
                continue;
            }
            self.qp_index[c] = other.qp_index[c];
            if let (Some(mine), Some(o)) = (self.cast.get_mut(c), other.cast.get(c)) {
                mine.clone_from(o);
            }
        }
        self.split_messages += other.split_messages;
        self.whole_messages += other.whole_messages;
    }

    /// A part's sender has its last ACK at `now`: CAST's sample for its QP,
    /// the metric `RTT - payload transmission time - minimum network latency`
    /// (ps). The minimum latency is the flow's base RTT without the first
    /// packet's transmission at the NIC (which the payload time counts).
    pub fn on_part_done(&mut self, now: u64, f: PartDone, rate_bps: u64, packet_bytes: u64) {
        if self.cast.is_empty() || f.size == 0 {
            return;
        }
        let (m, q) = self.part(f.id);
        let c = self.conn_of(m);
        let rtt = now.saturating_sub(f.start_ps) as f64;
        let payload = tx_time_ps(f.size, rate_bps) as f64;
        let min_latency = f.base_rtt_ps.saturating_sub(tx_time_ps(packet_bytes, rate_bps)) as f64;
        let sched = self.cfg.qp_sched;
        self.cast[c].on_sample(q, rtt - payload - min_latency, &sched);
    }
}
