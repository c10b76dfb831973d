//! The run's result tables, typed: one struct per output file, one column
//! per CSV column, each declared once ([`super::schema`]). Times are integer
//! picoseconds (`*_ps`); the files write them as nanoseconds (`*_ns`). An
//! empty CSV cell is `None`.
//!
//! The tables hold no reference to the simulation: they are built once, at
//! the end of the run, by [`super::collect`], or read back from a run
//! directory by [`super::read`].

use super::schema::{table, Label};

/// Every table of a run. `links`, `signals` and `cc` are `None` when the
/// scenario does not ask for them (and their files are then not written).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tables {
    pub flows: FlowTable,
    pub links: Option<LinkTable>,
    pub signals: Option<SignalTable>,
    pub cc: Option<CcTable>,
    /// Present when the scenario runs collectives.
    pub collectives: Option<CollectiveTable>,
    /// Present when the scenario has an `rpc` workload.
    pub rpcs: Option<RpcTable>,
    /// Present when the scenario has jobs.
    pub jobs: Option<JobTable>,
    pub job_links: Option<JobLinkTable>,
}

table! {
    /// `rpcs.csv`: one row per RPC (foreground or background), in flow order.
    pub struct RpcTable in "rpcs" {
        /// Host names; `src` and `dst` are indices into it.
        hosts: Vec<String>,
    }
    columns {
        flow_id: u32 = "flow_id" plain, Int, "", "the RPC's flow (a row of flows.csv)";
        name: String = "name" plain, Text, "", "the workload's name, with -bg for background ops";
        class: Label = "class" plain, Text, "", "foreground or background";
        src: u32 = "src" coded(hosts), Text, "", "sending host";
        dst: u32 = "dst" coded(hosts), Text, "", "receiving host";
        size_bytes: u64 = "size_bytes" plain, Int, "bytes", "the RPC's size";
        start_ps: u64 = "start_ns" plain, Time, "ns", "when it was issued";
        finish_ps: Option<u64> = "finish_ns" plain, Time, "ns", "when its last byte arrived; empty if it did not";
        /// The RPC's latency: its flow's completion time.
        latency_ps: Option<u64> = "latency_ns" plain, Time, "ns", "finish - start, the flow's FCT";
    }
}

impl RpcTable {
    /// Row `i`'s sending host.
    pub fn src_name(&self, i: usize) -> &str {
        &self.hosts[self.src[i] as usize]
    }

    /// Row `i`'s receiving host.
    pub fn dst_name(&self, i: usize) -> &str {
        &self.hosts[self.dst[i] as usize]
    }
}

table! {
    /// `collectives.csv`: one row per step of each collective instance (an
    /// iteration of a `collective` workload), then the instance's totals in the
    /// row whose `step` is empty. Times are those of the step's flows: the first
    /// start and the last arrival at a receiver.
    pub struct CollectiveTable in "collectives" {}
    columns {
        /// The instance: its position among all instances of the run.
        collective_id: u32 = "collective_id" plain, Int, "", "the instance, from 0 over the run";
        name: String = "name" plain, Text, "", "the entry's name (with .g<k> per group)";
        op: Label = "op" plain, Text, "", "the collective operation";
        ranks: u32 = "ranks" plain, Int, "", "hosts in the group";
        iteration: u32 = "iteration" plain, Int, "", "the iteration, from 0";
        /// `None` on the instance's total row.
        step: Option<u32> = "step" plain, Int, "", "the step of the algorithm; empty on the totals row";
        /// The flows of the step (or instance): ids `first_flow .. first_flow + flows`.
        first_flow: u32 = "first_flow" plain, Int, "", "the first flow of the step";
        flows: u32 = "flows" plain, Int, "", "flows of the step";
        start_ps: Option<u64> = "start_ns" plain, Time, "ns", "first start of the step's flows";
        finish_ps: Option<u64> = "finish_ns" plain, Time, "ns", "last arrival of the step's flows, if all arrived";
        /// `finish_ps - start_ps`, when both are known.
        time_ps: Option<u64> = "time_ns" plain, Time, "ns", "finish - start";
        /// Instance rows: nccl-tests' size per rank, algbw = size / time and busbw
        /// = algbw x factor, in Gb/s; empty on step rows and when unfinished.
        size_bytes: u64 = "size_bytes" plain, Int, "bytes", "size per rank";
        algbw_gbps: Option<f64> = "algbw_gbps" plain, Dec3, "Gb/s", "size / time, on the totals row";
        busbw_gbps: Option<f64> = "busbw_gbps" plain, Dec3, "Gb/s", "algbw x the operation's bus factor";
    }
}

table! {
    /// `flows.csv`: one row per flow, in `flow_id` order.
    pub struct FlowTable in "flows" {
        /// Flow names (labels), each once, in order of first use; `name` is an
        /// index into it (a collective's millions of flows share a name).
        names: Vec<String>,
        /// Host names, in host order; `src` and `dst` are indices into it, not
        /// copies of the names (a collective has millions of flows between a
        /// thousand hosts).
        hosts: Vec<String>,
    }
    columns {
        flow_id: u32 = "flow_id" plain, Int, "", "position of the flow in the scenario";
        /// The flow's label (an index into `names`; the label is empty if none).
        name: u32 = "name" coded(names), Text, "", "the flow's label";
        src: u32 = "src" coded(hosts), Text, "", "sending host";
        dst: u32 = "dst" coded(hosts), Text, "", "receiving host";
        size_bytes: u64 = "size_bytes" plain, Int, "bytes", "payload bytes of the flow";
        start_ps: u64 = "start_ns" plain, Time, "ns", "when the sender started";
        /// `None` if the flow did not complete.
        finish_ps: Option<u64> = "finish_ns" plain, Time, "ns", "when the receiver held every byte";
        /// `finish_ps - start_ps`; `None` if the flow did not complete.
        fct_ps: Option<u64> = "fct_ns" plain, Time, "ns", "flow completion time";
        ideal_fct_ps: u64 = "ideal_fct_ns" plain, Time, "ns", "the FCT of the flow alone on an idle network";
        /// `fct / max(ideal_fct, 1 ps)`, unrounded (the CSV writes four decimals).
        slowdown: Option<f64> = "slowdown" plain, Dec4, "", "fct / ideal_fct";
        bytes_sent: u64 = "bytes_sent" plain, Int, "bytes", "wire bytes of every data packet sent";
        retransmits: u64 = "retransmits" plain, Int, "", "data packets sent again";
        timeouts: u64 = "timeouts" plain, Int, "", "retransmission timeouts";
        nacks: u64 = "nacks" plain, Int, "", "NACKs the receiver sent";
        trims: u64 = "trims" plain, Int, "", "trimmed packets that reached the receiver";
        ecn_marked: u64 = "ecn_marked" plain, Int, "", "CE-marked data packets received";
        delivered_bytes: u64 = "delivered_bytes" plain, Int, "bytes", "payload the receiver had in order at the end";
        cnps: u64 = "cnps" plain, Int, "", "CNPs the receiver sent";
        /// When the sender got the ACK for the flow's last byte (its final ACK);
        /// `None` if it did not.
        sender_finish_ps: Option<u64> = "sender_finish_ns" plain, Time, "ns", "when the sender got the final ACK";
        /// `sender_finish_ps - start_ps`; `None` if the sender did not finish.
        sender_fct_ps: Option<u64> = "sender_fct_ns" plain, Time, "ns", "sender-side completion time";
        /// The sender's controller's decisions per ACK (`cc::Decisions`);
        /// `None` for controllers that do not count them.
        nscc_fair: Option<u32> = "nscc_fair" plain, Int, "", "ACKs that took NSCC's fair increase";
        nscc_proportional: Option<u32> = "nscc_proportional" plain, Int, "", "ACKs that took NSCC's proportional increase";
        nscc_fast: Option<u32> = "nscc_fast" plain, Int, "", "proportional ACKs that took the fast increase";
        nscc_noop: Option<u32> = "nscc_noop" plain, Int, "", "ACKs that left NSCC's window unchanged (ECN below target)";
        nscc_decrease: Option<u32> = "nscc_decrease" plain, Int, "", "ACKs in NSCC's multiplicative-decrease case";
        nscc_decrease_applied: Option<u32> = "nscc_decrease_applied" plain, Int, "", "multiplicative decreases applied";
        nscc_quick_adapt: Option<u32> = "nscc_quick_adapt" plain, Int, "", "NSCC quick adapt firings";
        nscc_ignored: Option<u32> = "nscc_ignored" plain, Int, "", "ACKs NSCC ignored after a quick adapt";
    }
}

impl FlowTable {
    /// Flow `i`'s label.
    pub fn flow_name(&self, i: usize) -> &str {
        &self.names[self.name[i] as usize]
    }

    /// Flow `i`'s sending host.
    pub fn src_name(&self, i: usize) -> &str {
        &self.hosts[self.src[i] as usize]
    }

    /// Flow `i`'s receiving host.
    pub fn dst_name(&self, i: usize) -> &str {
        &self.hosts[self.dst[i] as usize]
    }

    /// The row of the first flow with this name.
    pub fn position(&self, name: &str) -> Option<usize> {
        let code = self.names.iter().position(|n| n == name)? as u32;
        self.name.iter().position(|&c| c == code)
    }
}

/// One directed link's counters in one monitor window (or a run of equal
/// windows), as the link monitor kept them (idle windows are not stored).
pub use crate::monitor::LinkWindow as LinkCounters;

/// `links.csv`: one row per directed link per monitor window, window by
/// window, links in `link_id` order within a window; without `idle_rows`,
/// only the rows of windows in which something happened on the link.
///
/// The table is stored sparse: only the windows in which something happened
/// on a link are kept (a run of equal windows as one entry), and
/// [`LinkTable::rows`] and [`LinkTable::columns`] expand the runs and fill in
/// the idle windows with zeros as they go.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkTable {
    pub window_ps: u64,
    /// Windows `0..windows`.
    pub windows: u64,
    /// Whether idle windows have rows (`monitor.idle_rows`).
    pub idle_rows: bool,
    /// Whether the run measured queues, drops, marks, trims and pauses
    /// (packet level); their cells are empty when not (flow level).
    pub queues: bool,
    /// Node names; `from` and `to` are indices into it.
    pub nodes: Vec<String>,
    /// Per `link_id`: the sending node.
    pub from: Vec<u32>,
    /// Per `link_id`: the receiving node.
    pub to: Vec<u32>,
    /// Per `link_id`: its non-idle windows, in window order.
    pub active: Vec<Vec<LinkCounters>>,
}

/// One row of `links.csv`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkRow<'a> {
    pub time_ps: u64,
    pub from: &'a str,
    pub to: &'a str,
    pub link_id: u32,
    pub tx_bytes: u64,
    /// Busy fraction of the window, unrounded (the CSV writes six decimals).
    pub utilization: f64,
    /// The queue counters: `None` where the run has no queues (flow level).
    pub max_queue_bytes: Option<u64>,
    pub drops: Option<u32>,
    pub ecn_marks: Option<u32>,
    pub trims: Option<u32>,
    pub pause_ps: Option<u64>,
}

impl<'a> LinkRow<'a> {
    /// The row of `link` in window `window` with the counters `r`; without
    /// `queues` (a run that measures none) its queue cells are empty.
    pub fn new(window_ps: u64, window: u64, link_id: u32, from: &'a str, to: &'a str, r: &LinkCounters, queues: bool) -> LinkRow<'a> {
        LinkRow {
            time_ps: window.saturating_mul(window_ps),
            from,
            to,
            link_id,
            tx_bytes: r.tx_bytes,
            utilization: r.busy_ps as f64 / window_ps as f64,
            max_queue_bytes: queues.then_some(r.max_queue_bytes),
            drops: queues.then_some(r.drops),
            ecn_marks: queues.then_some(r.ecn_marks),
            trims: queues.then_some(r.trims),
            pause_ps: queues.then_some(r.pause_ps),
        }
    }
}

table! {
    /// `links.csv` as columns; `from` and `to` index `nodes`.
    pub struct LinkColumns in "links" {
        /// Node names (hosts, then switches).
        nodes: Vec<String>,
    }
    columns {
        time_ps: u64 = "time_ns" plain, Time, "ns", "start of the monitor window";
        from: u32 = "from" coded(nodes), Text, "", "the sending node";
        to: u32 = "to" coded(nodes), Text, "", "the receiving node";
        link_id: u32 = "link_id" plain, Int, "", "id of the sending port";
        tx_bytes: u64 = "tx_bytes" plain, Int, "bytes", "wire bytes the port put on the wire";
        /// Busy fraction of the window, unrounded (the CSV writes six decimals).
        utilization: f64 = "utilization" plain, Share, "", "fraction of the window the transmitter was busy";
        /// The queue counters: empty at flow level, which has no queues.
        max_queue_bytes: Option<u64> = "max_queue_bytes" plain, Int, "bytes", "the largest data queue of the port";
        drops: Option<u32> = "drops" plain, Int, "packets", "packets dropped at the port";
        ecn_marks: Option<u32> = "ecn_marks" plain, Int, "packets", "CE marks set at the port";
        trims: Option<u32> = "trims" plain, Int, "packets", "data packets trimmed at the port";
        pause_ps: Option<u64> = "pause_ns" plain, Time, "ns", "time the port's data class was paused by PFC";
    }
}

impl LinkTable {
    /// Directed links.
    pub fn links(&self) -> usize {
        self.from.len()
    }

    /// Rows: `windows x links`, or the non-idle windows without `idle_rows`.
    pub fn len(&self) -> usize {
        if self.idle_rows {
            (self.windows as usize).saturating_mul(self.links())
        } else {
            self.active.iter().flatten().map(|r| r.windows.max(1) as usize).sum()
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn row(&self, window: u64, link: usize, r: &LinkCounters) -> LinkRow<'_> {
        let (from, to) = (&self.nodes[self.from[link] as usize], &self.nodes[self.to[link] as usize]);
        LinkRow::new(self.window_ps, window, link as u32, from, to, r, self.queues)
    }

    /// Every row, in file order, built as it is read.
    pub fn rows(&self) -> Box<dyn Iterator<Item = LinkRow<'_>> + '_> {
        if !self.idle_rows {
            return Box::new(self.active_rows());
        }
        // Per link: the stored entry that covers the window, if any.
        let mut at = vec![0usize; self.links()];
        Box::new((0..self.windows).flat_map(move |win| {
            let counters: Vec<LinkCounters> = at
                .iter_mut()
                .enumerate()
                .map(|(l, c)| {
                    let active = &self.active[l];
                    while *c < active.len() && active[*c].last() < win {
                        *c += 1;
                    }
                    active.get(*c).filter(|r| r.window <= win).copied().unwrap_or_default()
                })
                .collect();
            counters.into_iter().enumerate().map(move |(link, r)| self.row(win, link, &r))
        }))
    }

    /// The stored (non-idle) windows in file order, runs expanded.
    fn active_rows(&self) -> impl Iterator<Item = LinkRow<'_>> + '_ {
        use std::cmp::Reverse;
        // (window, link, entry) of each link's next row.
        let mut next: std::collections::BinaryHeap<Reverse<(u64, usize, usize)>> =
            self.active.iter().enumerate().filter(|(_, a)| !a.is_empty()).map(|(l, a)| Reverse((a[0].window, l, 0))).collect();
        std::iter::from_fn(move || {
            let Reverse((win, l, i)) = next.pop()?;
            let a = &self.active[l];
            if win < a[i].last() {
                next.push(Reverse((win + 1, l, i)));
            } else if i + 1 < a.len() {
                next.push(Reverse((a[i + 1].window, l, i + 1)));
            }
            Some(self.row(win, l, &a[i]))
        })
    }

    /// The table as columns.
    pub fn columns(&self) -> LinkColumns {
        let mut c = LinkColumns::with_capacity(self.len());
        c.nodes = self.nodes.clone();
        for r in self.rows() {
            c.push(&r, self.from[r.link_id as usize], self.to[r.link_id as usize]);
        }
        c
    }
}

impl LinkColumns {
    /// Appends row `r`, its link going from node `from` to node `to`.
    pub fn push(&mut self, r: &LinkRow, from: u32, to: u32) {
        self.time_ps.push(r.time_ps);
        self.from.push(from);
        self.to.push(to);
        self.link_id.push(r.link_id);
        self.tx_bytes.push(r.tx_bytes);
        self.utilization.push(r.utilization);
        self.max_queue_bytes.push(r.max_queue_bytes);
        self.drops.push(r.drops);
        self.ecn_marks.push(r.ecn_marks);
        self.trims.push(r.trims);
        self.pause_ps.push(r.pause_ps);
    }
}

table! {
    /// `signals.csv`: one row per flow, window and series with samples, ordered
    /// by window, then flow, then series.
    pub struct SignalTable in "signals" {
        /// Distinct bottleneck ports as `from->to`, in order of first appearance.
        bottlenecks: Vec<String>,
    }
    columns {
        time_ps: u64 = "time_ns" plain, Time, "ns", "start of the monitor window";
        flow_id: u32 = "flow_id" plain, Int, "", "the flow";
        signal: Label = "signal" plain, Text, "", "the series";
        unit: Label = "unit" plain, Text, "", "unit of mean, min and max";
        samples: u64 = "samples" plain, Int, "", "ACKs of the flow in the window that carried the signal";
        /// `mean`, `min`, `max` in `unit` (delays in ns).
        mean: f64 = "mean" plain, Num, "as unit", "mean of the reflected values";
        min: f64 = "min" plain, Num, "as unit", "smallest reflected value";
        max: f64 = "max" plain, Num, "as unit", "largest reflected value";
        locator: Option<u16> = "locator" plain, Int, "", "CSIG locator of the most frequent writer";
        /// Index into `bottlenecks`; `None` if no switch wrote the values.
        bottleneck: Option<u32> = "bottleneck" coded_opt(bottlenecks), Text, "", "that writer's egress port as from->to";
    }
}

impl SignalTable {
    /// The bottleneck of row `i` as written (`from->to`, or empty).
    pub fn bottleneck_name(&self, i: usize) -> &str {
        self.bottleneck[i].map_or("", |b| self.bottlenecks[b as usize].as_str())
    }
}

table! {
    /// `cc.csv`: one row per flow and window in which the sender got ACKs,
    /// ordered by window, then flow.
    pub struct CcTable in "cc" {
        /// The congestion controls named by `cc` (the run's one).
        ccs: Vec<String>,
    }
    columns {
        time_ps: u64 = "time_ns" plain, Time, "ns", "start of the monitor window";
        flow_id: u32 = "flow_id" plain, Int, "", "the flow";
        /// The run's congestion control, an index into `ccs`.
        cc: u32 = "cc" coded(ccs), Text, "", "the congestion control";
        acks: u64 = "acks" plain, Int, "", "ACKs the sender received in the window";
        /// `None` for algorithms without a window.
        cwnd_bytes: Option<u64> = "cwnd_bytes" plain, Int, "bytes", "the window after the window's last ACK";
        cwnd_min_bytes: Option<u64> = "cwnd_min_bytes" plain, Int, "bytes", "smallest window after any ACK";
        cwnd_max_bytes: Option<u64> = "cwnd_max_bytes" plain, Int, "bytes", "largest window after any ACK";
        rate_bps: u64 = "rate_bps" plain, Int, "bps", "the pacing rate after the last ACK";
        alpha: f64 = "alpha" plain, Num, "", "the algorithm's congestion estimate";
        rtt_mean_ns: f64 = "rtt_mean_ns" plain, Num, "ns", "mean RTT sample of the window's ACKs";
        ce_fraction: f64 = "ce_fraction" plain, Num, "", "fraction of the covered data packets that carried CE";
    }
}

impl CcTable {
    /// A table of the congestion control `name`, without rows.
    pub fn of(name: &str) -> CcTable {
        CcTable { ccs: vec![name.to_string()], ..Default::default() }
    }
}

table! {
    /// `jobs.csv`: one row per job (a `collective`, `goal` or `chakra`
    /// entry with `job`), in file order.
    pub struct JobTable in "jobs" {}
    columns {
        job: String = "job" plain, Text, "", "the job's name";
        kind: Label = "kind" plain, Text, "", "its workload kind";
        placement: Label = "placement" plain, Text, "", "the placement policy that laid its ranks";
        ranks: u32 = "ranks" plain, Int, "", "its ranks";
        /// Host names in rank order, separated by spaces.
        hosts: String = "hosts" plain, Text, "", "its ranks' hosts, in rank order";
        flows: u32 = "flows" plain, Int, "", "its flows";
        flows_completed: u32 = "flows_completed" plain, Int, "", "of those, completed";
        iterations: u32 = "iterations" plain, Int, "", "iterations it runs";
        iterations_completed: u32 = "iterations_completed" plain, Int, "", "of those, completed";
        start_ps: Option<u64> = "start_ns" plain, Time, "ns", "when its first flow or operation began";
        end_ps: Option<u64> = "end_ns" plain, Time, "ns", "when its last flow or operation was complete; empty if it was not";
        time_ps: Option<u64> = "time_ns" plain, Time, "ns", "end - start";
        iteration_mean_ps: Option<u64> = "iteration_mean_ns" plain, Time, "ns", "mean time of its completed iterations";
        iteration_max_ps: Option<u64> = "iteration_max_ns" plain, Time, "ns", "longest of them";
        /// `None` when no link was watched.
        links: Option<u32> = "links" plain, Int, "", "directed links its packets crossed";
        shared_links: Option<u32> = "shared_links" plain, Int, "", "of those, links another job's packets crossed too";
        alone_time_ps: Option<u64> = "alone_time_ns" plain, Time, "ns", "time_ns of the job alone on the fabric (--isolate-jobs)";
        /// `time / alone_time`, unrounded (the CSV writes four decimals).
        slowdown: Option<f64> = "slowdown" plain, Dec4, "", "time_ns / alone_time_ns";
    }
}

table! {
    /// `job_links.csv`: one row per job and directed link its packets
    /// crossed, jobs in file order, links in `link_id` order.
    pub struct JobLinkTable in "job_links" {
        /// Node names (hosts, then switches); `from` and `to` index it.
        nodes: Vec<String>,
    }
    columns {
        job: String = "job" plain, Text, "", "the job's name";
        link_id: u32 = "link_id" plain, Int, "", "id of the sending port, as in links.csv";
        from: u32 = "from" coded(nodes), Text, "", "the sending node";
        to: u32 = "to" coded(nodes), Text, "", "the receiving node";
        tx_bytes: u64 = "tx_bytes" plain, Int, "bytes", "wire bytes of the job's packets on the link";
        link_bytes: u64 = "link_bytes" plain, Int, "bytes", "wire bytes of every packet on the link";
        /// `tx_bytes / link_bytes`, unrounded (the CSV writes six decimals).
        share: f64 = "share" plain, Share, "", "the job's share of the link's bytes";
    }
}
