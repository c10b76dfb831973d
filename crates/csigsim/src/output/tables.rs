//! The run's result tables, typed: one struct per output file, one column
//! per CSV column. Times are integer picoseconds (`*_ps`); the CSV writers
//! in `csv.rs` format them as nanoseconds. An empty CSV cell is `None`.
//!
//! The tables hold no reference to the simulation: they are built once, at
//! the end of the run, by [`super::collect`].

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
}

/// `rpcs.csv`: one row per RPC (foreground or background), in flow order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RpcTable {
    pub flow_id: Vec<u32>,
    pub name: Vec<String>,
    pub class: Vec<&'static str>,
    /// Host names; `src` and `dst` are indices into it.
    pub hosts: Vec<String>,
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    pub size_bytes: Vec<u64>,
    pub start_ps: Vec<u64>,
    pub finish_ps: Vec<Option<u64>>,
    /// The RPC's latency: its flow's completion time.
    pub latency_ps: Vec<Option<u64>>,
}

impl RpcTable {
    pub fn len(&self) -> usize {
        self.flow_id.len()
    }

    /// Row `i`'s sending host.
    pub fn src_name(&self, i: usize) -> &str {
        &self.hosts[self.src[i] as usize]
    }

    /// Row `i`'s receiving host.
    pub fn dst_name(&self, i: usize) -> &str {
        &self.hosts[self.dst[i] as usize]
    }

    pub fn is_empty(&self) -> bool {
        self.flow_id.is_empty()
    }
}

/// `collectives.csv`: one row per step of each collective instance (an
/// iteration of a `collective` workload), then the instance's totals in the
/// row whose `step` is empty. Times are those of the step's flows: the first
/// start and the last arrival at a receiver.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CollectiveTable {
    /// The instance: its position among all instances of the run.
    pub collective_id: Vec<u32>,
    pub name: Vec<String>,
    pub op: Vec<&'static str>,
    pub ranks: Vec<u32>,
    pub iteration: Vec<u32>,
    /// `None` on the instance's total row.
    pub step: Vec<Option<u32>>,
    /// The flows of the step (or instance): ids `first_flow .. first_flow + flows`.
    pub first_flow: Vec<u32>,
    pub flows: Vec<u32>,
    pub start_ps: Vec<Option<u64>>,
    pub finish_ps: Vec<Option<u64>>,
    /// Instance rows: nccl-tests' size per rank, algbw = size / time and busbw
    /// = algbw x factor, in Gb/s; empty on step rows and when unfinished.
    pub size_bytes: Vec<u64>,
    pub algbw_gbps: Vec<Option<f64>>,
    pub busbw_gbps: Vec<Option<f64>>,
}

impl CollectiveTable {
    pub fn len(&self) -> usize {
        self.collective_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.collective_id.is_empty()
    }
}

/// `flows.csv`: one row per flow, in `flow_id` order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowTable {
    pub flow_id: Vec<u32>,
    /// Flow names (labels), each once, in order of first use; `name` is an
    /// index into it (a collective's millions of flows share a name).
    pub names: Vec<String>,
    /// The flow's label (an index into `names`; the label is empty if none).
    pub name: Vec<u32>,
    /// Host names, in host order; `src` and `dst` are indices into it, not
    /// copies of the names (a collective has millions of flows between a
    /// thousand hosts).
    pub hosts: Vec<String>,
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    pub size_bytes: Vec<u64>,
    pub start_ps: Vec<u64>,
    /// `None` if the flow did not complete.
    pub finish_ps: Vec<Option<u64>>,
    /// `finish_ps - start_ps`; `None` if the flow did not complete.
    pub fct_ps: Vec<Option<u64>>,
    pub ideal_fct_ps: Vec<u64>,
    /// `fct / max(ideal_fct, 1 ps)`, unrounded (the CSV writes four decimals).
    pub slowdown: Vec<Option<f64>>,
    pub bytes_sent: Vec<u64>,
    pub retransmits: Vec<u64>,
    pub timeouts: Vec<u64>,
    pub nacks: Vec<u64>,
    pub trims: Vec<u64>,
    pub ecn_marked: Vec<u64>,
    pub delivered_bytes: Vec<u64>,
    pub cnps: Vec<u64>,
    /// When the sender got the ACK for the flow's last byte (its final ACK);
    /// `None` if it did not.
    pub sender_finish_ps: Vec<Option<u64>>,
    /// `sender_finish_ps - start_ps`; `None` if the sender did not finish.
    pub sender_fct_ps: Vec<Option<u64>>,
}

impl FlowTable {
    pub fn len(&self) -> usize {
        self.flow_id.len()
    }

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

    pub fn is_empty(&self) -> bool {
        self.flow_id.is_empty()
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
    pub max_queue_bytes: u64,
    pub drops: u32,
    pub ecn_marks: u32,
    pub trims: u32,
    pub pause_ps: u64,
}

impl<'a> LinkRow<'a> {
    /// The row of `link` in window `window` with the counters `r`.
    pub fn new(window_ps: u64, window: u64, link_id: u32, from: &'a str, to: &'a str, r: &LinkCounters) -> LinkRow<'a> {
        LinkRow {
            time_ps: window.saturating_mul(window_ps),
            from,
            to,
            link_id,
            tx_bytes: r.tx_bytes,
            utilization: r.busy_ps as f64 / window_ps as f64,
            max_queue_bytes: r.max_queue_bytes,
            drops: r.drops,
            ecn_marks: r.ecn_marks,
            trims: r.trims,
            pause_ps: r.pause_ps,
        }
    }
}

/// `links.csv` as columns; `from` and `to` index [`LinkTable::nodes`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkColumns {
    pub time_ps: Vec<u64>,
    pub from: Vec<u32>,
    pub to: Vec<u32>,
    pub link_id: Vec<u32>,
    pub tx_bytes: Vec<u64>,
    pub utilization: Vec<f64>,
    pub max_queue_bytes: Vec<u64>,
    pub drops: Vec<u32>,
    pub ecn_marks: Vec<u32>,
    pub trims: Vec<u32>,
    pub pause_ps: Vec<u64>,
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
        LinkRow::new(self.window_ps, window, link as u32, from, to, r)
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
        let n = self.len();
        let mut c = LinkColumns {
            time_ps: Vec::with_capacity(n),
            from: Vec::with_capacity(n),
            to: Vec::with_capacity(n),
            link_id: Vec::with_capacity(n),
            tx_bytes: Vec::with_capacity(n),
            utilization: Vec::with_capacity(n),
            max_queue_bytes: Vec::with_capacity(n),
            drops: Vec::with_capacity(n),
            ecn_marks: Vec::with_capacity(n),
            trims: Vec::with_capacity(n),
            pause_ps: Vec::with_capacity(n),
        };
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

/// `signals.csv`: one row per flow, window and series with samples, ordered
/// by window, then flow, then series.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SignalTable {
    pub time_ps: Vec<u64>,
    pub flow_id: Vec<u32>,
    pub signal: Vec<&'static str>,
    pub unit: Vec<&'static str>,
    pub samples: Vec<u64>,
    /// `mean`, `min`, `max` in `unit` (delays in ns).
    pub mean: Vec<f64>,
    pub min: Vec<f64>,
    pub max: Vec<f64>,
    pub locator: Vec<Option<u16>>,
    /// Index into `bottlenecks`; `None` if no switch wrote the values.
    pub bottleneck: Vec<Option<u32>>,
    /// Distinct bottleneck ports as `from->to`, in order of first appearance.
    pub bottlenecks: Vec<String>,
}

impl SignalTable {
    pub fn len(&self) -> usize {
        self.time_ps.len()
    }

    /// Removes every row, keeping `bottlenecks` and the columns' capacity
    /// (the stream writer reuses a one-row table for every row).
    pub fn clear_rows(&mut self) {
        let SignalTable { time_ps, flow_id, signal, unit, samples, mean, min, max, locator, bottleneck, bottlenecks: _ } = self;
        time_ps.clear();
        flow_id.clear();
        signal.clear();
        unit.clear();
        samples.clear();
        mean.clear();
        min.clear();
        max.clear();
        locator.clear();
        bottleneck.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.time_ps.is_empty()
    }

    /// The bottleneck of row `i` as written (`from->to`, or empty).
    pub fn bottleneck_name(&self, i: usize) -> &str {
        self.bottleneck[i].map_or("", |b| self.bottlenecks[b as usize].as_str())
    }
}

/// `cc.csv`: one row per flow and window in which the sender got ACKs,
/// ordered by window, then flow.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CcTable {
    pub time_ps: Vec<u64>,
    pub flow_id: Vec<u32>,
    /// The run's congestion control: the `cc` column, the same on every row.
    pub cc: String,
    pub acks: Vec<u64>,
    /// `None` for algorithms without a window.
    pub cwnd_bytes: Vec<Option<u64>>,
    pub cwnd_min_bytes: Vec<Option<u64>>,
    pub cwnd_max_bytes: Vec<Option<u64>>,
    pub rate_bps: Vec<u64>,
    pub alpha: Vec<f64>,
    pub rtt_mean_ns: Vec<f64>,
    pub ce_fraction: Vec<f64>,
}

impl CcTable {
    pub fn len(&self) -> usize {
        self.time_ps.len()
    }

    /// Removes every row, keeping `cc` and the columns' capacity (the
    /// stream writer reuses a one-row table for every row).
    pub fn clear_rows(&mut self) {
        let CcTable { time_ps, flow_id, cc: _, acks, cwnd_bytes, cwnd_min_bytes, cwnd_max_bytes, rate_bps, alpha, rtt_mean_ns, ce_fraction } = self;
        time_ps.clear();
        flow_id.clear();
        acks.clear();
        cwnd_bytes.clear();
        cwnd_min_bytes.clear();
        cwnd_max_bytes.clear();
        rate_bps.clear();
        alpha.clear();
        rtt_mean_ns.clear();
        ce_fraction.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.time_ps.is_empty()
    }
}
