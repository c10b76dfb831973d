//! The experiments of the source documents, each as shipped scenarios run in
//! a few variants, the figures csigsim reads off them, the figures the source
//! reports, and whether the source's direction is reproduced. `csigsim repro`
//! runs them; docs/reproductions.md discusses every result.
//!
//! A variant is the experiment's scenario with `--set` overrides. The quick
//! form adds overrides that shrink the experiment (shorter runs, smaller
//! transfers) so that the test suite can check every direction in seconds;
//! its figures are not the ones to compare with the source.

use csigsim::output::RunOutput;
use csigsim::scenario::Override;

/// A run's figures, by name.
pub type Figures = Vec<(&'static str, f64)>;

/// One experiment of a source document.
pub struct Experiment {
    /// `S1` .. `S8`, as in docs/reproductions.md.
    pub id: &'static str,
    /// The source document and what it reports.
    pub source: &'static str,
    pub title: &'static str,
    /// The scenario file, relative to the repository's `scenarios/` and to
    /// this crate's copy of it.
    pub scenario: &'static str,
    /// Its text, built in (from the copy) so that `csigsim repro` runs
    /// anywhere.
    pub toml: &'static str,
    /// Files the scenario reads (trace files), by name relative to the
    /// scenario's directory, built in as well.
    pub files: &'static [(&'static str, &'static str)],
    pub variants: &'static [Variant],
    /// Overrides added to every variant in the quick form.
    pub quick: &'static [&'static str],
    /// The source's figures, in words.
    pub source_figure: &'static str,
    /// The figures of one variant's run, by name.
    pub figures: fn(&RunOutput) -> Figures,
    /// From every variant's figures (in variant order): csigsim's figure in
    /// words and whether the source's direction holds.
    pub verdict: fn(&[Figures]) -> (String, bool),
}

/// A variant of an experiment: a name for its run directory and tables, and
/// the overrides that make it.
pub struct Variant {
    pub name: &'static str,
    pub sets: &'static [&'static str],
}

/// The outcome of one variant.
pub struct VariantRun {
    pub name: &'static str,
    pub output: RunOutput,
    pub figures: Figures,
}

/// The outcome of one experiment.
pub struct ExperimentRun {
    pub id: &'static str,
    pub variants: Vec<VariantRun>,
    pub csigsim_figure: String,
    pub reproduced: bool,
}

impl Experiment {
    /// The overrides of `variant`, with the quick form's if `quick`.
    pub fn overrides(&self, variant: &Variant, quick: bool) -> Vec<Override> {
        let quick_sets: &[&str] = if quick { self.quick } else { &[] };
        variant.sets.iter().chain(quick_sets).map(|s| Override::parse(s).expect("built-in override")).collect()
    }

    /// The scenario of `variant`. `base` is a directory holding the
    /// experiment's files (see [`Experiment::write_files`]).
    pub fn load(&self, variant: &Variant, quick: bool, base: &std::path::Path) -> Result<csigsim::Scenario, csigsim::de::InputError> {
        csigsim::scenario::load_str(self.toml, self.scenario, base, &self.overrides(variant, quick), None)
    }

    /// Writes the files the scenario reads into `dir`.
    pub fn write_files(&self, dir: &std::path::Path) -> std::io::Result<()> {
        for (name, text) in self.files {
            std::fs::write(dir.join(name), text)?;
        }
        Ok(())
    }

    /// Runs every variant and judges the direction. `base` holds the
    /// experiment's files; `each` sees every variant's output as it
    /// completes (to write its run directory).
    pub fn run(&self, quick: bool, base: &std::path::Path, mut each: impl FnMut(&Variant, &RunOutput)) -> ExperimentRun {
        let mut variants = Vec::new();
        for v in self.variants {
            let sc = self.load(v, quick, base).expect("built-in scenario");
            let output = csigsim::run(sc, |_| true);
            each(v, &output);
            let figures = (self.figures)(&output);
            variants.push(VariantRun { name: v.name, output, figures });
        }
        let all: Vec<Figures> = variants.iter().map(|v| v.figures.clone()).collect();
        let (csigsim_figure, reproduced) = (self.verdict)(&all);
        ExperimentRun { id: self.id, variants, csigsim_figure, reproduced }
    }
}

/// The named figure of one variant (NaN when missing).
pub fn figure(figs: &[(&'static str, f64)], name: &str) -> f64 {
    figs.iter().find(|f| f.0 == name).map_or(f64::NAN, |f| f.1)
}

/// Flow `i`'s goodput over the run, in Gb/s.
fn goodput_gbps(o: &RunOutput, i: usize) -> f64 {
    let end_ns = o.summary.sim_time_ns;
    let start_ns = o.tables.flows.start_ps[i] as f64 / 1e3;
    let end_ns = o.tables.flows.finish_ps[i].map_or(end_ns, |f| f as f64 / 1e3);
    o.tables.flows.delivered_bytes[i] as f64 * 8.0 / (end_ns - start_ns).max(1.0)
}

/// The latest finish among the flows, in ms (NaN if one is unfinished).
fn last_finish_ms(o: &RunOutput, flows: impl Iterator<Item = usize>) -> f64 {
    let mut last = 0.0f64;
    for i in flows {
        match o.tables.flows.finish_ps[i] {
            Some(f) => last = last.max(f as f64 / 1e9),
            None => return f64::NAN,
        }
    }
    last
}

fn fct_ms(o: &RunOutput, i: usize) -> f64 {
    o.tables.flows.fct_ps[i].map_or(f64::NAN, |f| f as f64 / 1e9)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    csigsim::stats::median(&v)
}

// S1: the CSIG tutorial's 3-flow parking lot. Flows 0 and 2 cross one
// congested queue each, the victim (flow 1) both.
fn s1_figures(o: &RunOutput) -> Figures {
    let t: Vec<f64> = (0..3).map(|i| goodput_gbps(o, i)).collect();
    vec![("victim_gbps", t[1]), ("non_victim_gbps", (t[0] + t[2]) / 2.0), ("ratio", (t[0] + t[2]) / 2.0 / t[1])]
}

fn s1_verdict(v: &[Figures]) -> (String, bool) {
    let (base, csig) = (figure(&v[0], "ratio"), figure(&v[1], "ratio"));
    (format!("{base:.2}:1 baseline, {csig:.2}:1 with CSIG max(Delay)"), csig < base && base > 1.0)
}

// S2: collective-like traffic; the victims are the last two flows.
fn s2_figures(o: &RunOutput) -> Figures {
    let n = o.tables.flows.len();
    let victims = [n - 2, n - 1];
    let gbps: Vec<f64> = victims.iter().map(|&i| goodput_gbps(o, i)).collect();
    let fct: Vec<f64> = victims.iter().map(|&i| fct_ms(o, i)).collect();
    vec![("victim_gbps", (gbps[0] + gbps[1]) / 2.0), ("victim_fct_ms", (fct[0] + fct[1]) / 2.0)]
}

fn s2_verdict(v: &[Figures]) -> (String, bool) {
    let (bt, ct) = (figure(&v[0], "victim_gbps"), figure(&v[1], "victim_gbps"));
    let (bf, cf) = (figure(&v[0], "victim_fct_ms"), figure(&v[1], "victim_fct_ms"));
    let dt = (ct / bt - 1.0) * 100.0;
    let df = (cf / bf - 1.0) * 100.0;
    (
        format!("victim throughput {bt:.1} -> {ct:.1} Gb/s ({dt:+.0}%), FCT {bf:.2} -> {cf:.2} ms ({df:+.0}%)"),
        ct > bt && cf < bf,
    )
}

// S3: RPC latencies under Swift with and without fast ramp-up.
fn s3_figures(o: &RunOutput) -> Figures {
    let Some(r) = &o.tables.rpcs else { return vec![] };
    let class = |c: &str| median((0..r.len()).filter(|&i| r.class[i] == c).filter_map(|i| r.latency_ps[i]).map(|l| l as f64 / 1e6).collect());
    vec![("fg_median_us", class("foreground")), ("bg_median_us", class("background"))]
}

fn s3_verdict(v: &[Figures]) -> (String, bool) {
    let (bf, ff) = (figure(&v[0], "fg_median_us"), figure(&v[1], "fg_median_us"));
    let (bb, fb) = (figure(&v[0], "bg_median_us"), figure(&v[1], "bg_median_us"));
    let df = (ff / bf - 1.0) * 100.0;
    let db = (fb / bb - 1.0) * 100.0;
    (format!("foreground median {bf:.0} -> {ff:.0} us ({df:+.1}%), background {bb:.0} -> {fb:.0} us ({db:+.1}%)"), ff < bf)
}

// S5: the DCQCN-Rev CLOS incast with a victim: flows F0, F1, F4, F8 (0..4)
// incast, F3 (4) is the victim.
fn s5_figures(o: &RunOutput) -> Figures {
    vec![("last_byte_ms", last_finish_ms(o, 0..o.tables.flows.len())), ("victim_fct_ms", fct_ms(o, 4)), ("pauses", o.summary.pauses_sent as f64)]
}

fn s5_verdict(v: &[Figures]) -> (String, bool) {
    let last: Vec<f64> = v.iter().map(|f| figure(f, "last_byte_ms")).collect();
    let victim: Vec<f64> = v.iter().map(|f| figure(f, "victim_fct_ms")).collect();
    (
        format!(
            "last byte: PFC {:.2} ms, DCQCN {:.2} ms, DCQCN-Rev {:.2} ms; victim FCT {:.2} / {:.2} / {:.2} ms",
            last[0], last[1], last[2], victim[0], victim[1], victim[2]
        ),
        // DCQCN ends after PFC, DCQCN-Rev before DCQCN and the victim best off under DCQCN-Rev.
        last[1] > last[0] && last[2] < last[1] && victim[2] < victim[0] && victim[2] < victim[1],
    )
}

// S6: the queue-stamping paper's ablation chain; flow 0 is the main flow.
fn s6_figures(o: &RunOutput) -> Figures {
    vec![("main_gbps", o.tables.flows.delivered_bytes[0] as f64 * 8.0 / o.summary.sim_time_ns)]
}

fn s6_verdict(v: &[Figures]) -> (String, bool) {
    let g: Vec<f64> = v.iter().map(|f| figure(f, "main_gbps")).collect();
    let names = ["RTT", "SUM", "SUM_SQU", "MAX"];
    let parts: Vec<String> = names.iter().zip(&g).map(|(n, x)| format!("{n} {x:.2}")).collect();
    (format!("main flow Gb/s: {} (MAX / RTT = {:.2})", parts.join(", "), g[3] / g[0]), g[3] > g[0] && g[3] > g[1] && g[2] > g[1])
}

// S7: MCC's spray AllReduce: the AllReduce ends with its last flow.
fn s7_figures(o: &RunOutput) -> Figures {
    let n = o.tables.flows.len();
    let cct = last_finish_ms(o, 0..n);
    let bytes: u64 = o.tables.flows.size_bytes.iter().sum();
    // Each of the n flows has its own 100 Gb/s sender and receiver link.
    let utilization = bytes as f64 * 8.0 / (cct * 1e-3) / (n as f64 * 100e9);
    vec![("cct_ms", cct), ("utilization", utilization)]
}

fn s7_verdict(v: &[Figures]) -> (String, bool) {
    let (d, m) = (figure(&v[0], "cct_ms"), figure(&v[1], "cct_ms"));
    let (du, mu) = (figure(&v[0], "utilization"), figure(&v[1], "utilization"));
    (
        format!("AllReduce {d:.2} ms under DCQCN ({:.0}% of the links), {m:.2} ms under MCC ({:.0}%), {:+.0}% CCT", du * 100.0, mu * 100.0, (m / d - 1.0) * 100.0),
        m < d,
    )
}

// S4: the CSIG tutorial's telemetry views, computed from the run's tables
// as csigsim.telemetry computes them (docs/telemetry.md): racks are the
// switches hosts attach to, a port's class is read from its name.

/// The class of a bottleneck port `from->to` of a leaf-spine or fat tree.
fn port_class(port: &str) -> Option<usize> {
    let (from, to) = port.split_once("->")?;
    let host = |n: &str| n.starts_with('h') && n[1..].bytes().all(|b| b.is_ascii_digit());
    let edge = |n: &str| n.starts_with("leaf") || n.starts_with("tor");
    Some(if host(from) {
        PORT_HOST_UP
    } else if host(to) {
        PORT_TOR_DOWN
    } else if edge(from) {
        PORT_TOR_UP
    } else {
        PORT_CORE_DOWN
    })
}

const PORT_TOR_UP: usize = 0;
const PORT_CORE_DOWN: usize = 1;
const PORT_TOR_DOWN: usize = 2;
const PORT_HOST_UP: usize = 3;
/// Figure names of the port classes' shares of the bottleneck samples.
const PORT_SHARES: [&str; 4] = ["tor_uplink_share", "spine_downlink_share", "tor_downlink_share", "host_uplink_share"];
const PORT_WORDS: [&str; 4] = ["ToR uplinks", "spine downlinks", "ToR downlinks", "host uplinks"];

/// Figure names of the ABW heatmap's cells (source rack, destination rack).
const ABW_CELLS: [[&str; 4]; 4] = [
    ["abw_r0_r0", "abw_r0_r1", "abw_r0_r2", "abw_r0_r3"],
    ["abw_r1_r0", "abw_r1_r1", "abw_r1_r2", "abw_r1_r3"],
    ["abw_r2_r0", "abw_r2_r1", "abw_r2_r2", "abw_r2_r3"],
    ["abw_r3_r0", "abw_r3_r1", "abw_r3_r2", "abw_r3_r3"],
];

fn s4_figures(o: &RunOutput) -> Figures {
    let (Some(sig), Some(links)) = (&o.tables.signals, &o.tables.links) else { return vec![] };
    // Racks: the switch each host's link leads to, numbered in host order.
    let mut rack_of_switch: Vec<(u32, usize)> = Vec::new();
    let mut rack_of_host = std::collections::BTreeMap::new();
    let is_host = |n: &str| n.starts_with('h') && n[1..].bytes().all(|b| b.is_ascii_digit());
    let mut host_links: Vec<(usize, u32)> = (0..links.from.len())
        .filter(|&l| is_host(&links.nodes[links.from[l] as usize]))
        .map(|l| (links.nodes[links.from[l] as usize][1..].parse::<usize>().unwrap_or(0), links.to[l]))
        .collect();
    host_links.sort_unstable();
    for (h, sw) in host_links {
        let next = rack_of_switch.len();
        let r = match rack_of_switch.iter().find(|x| x.0 == sw) {
            Some(x) => x.1,
            None => {
                rack_of_switch.push((sw, next));
                next
            }
        };
        rack_of_host.insert(format!("h{h}"), r);
    }
    let racks = rack_of_switch.len().min(4);
    let rack = |flow: u32, dst: bool| {
        let f = flow as usize;
        let name = if dst { o.tables.flows.dst_name(f) } else { o.tables.flows.src_name(f) };
        rack_of_host.get(name).copied().filter(|&r| r < racks)
    };
    // Per rack pair: samples-weighted sums over the run ("1 s": the whole
    // run lies in one 1 s window) and per 100 us monitor window.
    let mut run_sum = [[(0.0f64, 0u64); 4]; 4];
    let mut windows: std::collections::BTreeMap<(usize, usize, u64), (f64, u64)> = Default::default();
    let mut class_samples = [0u64; 4];
    let mut written = 0u64;
    for i in 0..sig.len() {
        let n = sig.samples[i];
        if n == 0 {
            continue;
        }
        // Shares among the samples a switch wrote, as telemetry.bottleneck_map.
        if let Some(c) = port_class(sig.bottleneck_name(i)) {
            class_samples[c] += n;
            written += n;
        }
        if let (Some(a), Some(b)) = (rack(sig.flow_id[i], false), rack(sig.flow_id[i], true)) {
            let cell = &mut run_sum[a][b];
            cell.0 += sig.mean[i] * n as f64;
            cell.1 += n;
            let w = windows.entry((a, b, sig.time_ps[i])).or_default();
            w.0 += sig.mean[i] * n as f64;
            w.1 += n;
        }
    }
    let mut figs: Figures = Vec::new();
    for (c, name) in PORT_SHARES.iter().enumerate() {
        figs.push((name, class_samples[c] as f64 / written.max(1) as f64));
    }
    // The hot pair: the least mean ABW/C over the run.
    let mut hot: Option<(usize, usize, f64)> = None;
    for (a, row) in run_sum.iter().enumerate() {
        for (b, &(sum, n)) in row.iter().enumerate() {
            if n > 0 {
                let mean = sum / n as f64;
                figs.push((ABW_CELLS[a][b], mean));
                if hot.is_none_or(|h| mean < h.2) {
                    hot = Some((a, b, mean));
                }
            }
        }
    }
    if let Some((a, b, mean)) = hot {
        let min_100us = windows.iter().filter(|(k, _)| k.0 == a && k.1 == b).map(|(_, w)| w.0 / w.1 as f64).fold(f64::INFINITY, f64::min);
        figs.push(("hot_pair_abw_c_1s", mean));
        figs.push(("hot_pair_abw_c_100us_min", min_100us));
        figs.push(("hot_pair_src_rack", a as f64));
        figs.push(("hot_pair_dst_rack", b as f64));
    }
    // The busiest ToR uplink (leaf -> spine): its utilization over the run
    // and in its busiest 100 us window.
    let run_ps = links.windows.max(1) as f64 * links.window_ps as f64;
    let mut busiest: Option<(f64, f64)> = None;
    for l in 0..links.from.len() {
        let port = format!("{}->{}", links.nodes[links.from[l] as usize], links.nodes[links.to[l] as usize]);
        if port_class(&port) != Some(PORT_TOR_UP) {
            continue;
        }
        let busy: f64 = links.active[l].iter().map(|w| w.busy_ps as f64 * w.windows as f64).sum();
        let peak = links.active[l].iter().map(|w| w.busy_ps as f64 / links.window_ps as f64).fold(0.0, f64::max);
        if busiest.is_none_or(|b| busy / run_ps > b.0) {
            busiest = Some((busy / run_ps, peak));
        }
    }
    if let Some((run, peak)) = busiest {
        figs.push(("uplink_util_1s", run));
        figs.push(("uplink_util_100us_peak", peak));
    }
    if let Some(c) = &o.tables.collectives {
        let bus: Vec<f64> = (0..c.len()).filter(|&i| c.step[i].is_none()).filter_map(|i| c.busbw_gbps[i]).collect();
        figs.push(("busbw_gbps", bus.iter().sum::<f64>() / bus.len().max(1) as f64));
    }
    figs
}

/// The port class named most often (the mode of the bottleneck map).
fn bottleneck_mode(f: &[(&'static str, f64)]) -> usize {
    (0..4).max_by(|&a, &b| figure(f, PORT_SHARES[a]).total_cmp(&figure(f, PORT_SHARES[b]))).unwrap_or(0)
}

fn s4_verdict(v: &[Figures]) -> (String, bool) {
    let (before, after) = (&v[0], &v[1]);
    let (mb, ma) = (bottleneck_mode(before), bottleneck_mode(after));
    let (ub, ua) = (figure(before, "tor_uplink_share"), figure(after, "tor_uplink_share"));
    let (h1s, h100) = (figure(before, "hot_pair_abw_c_1s"), figure(before, "hot_pair_abw_c_100us_min"));
    let (u1s, u100) = (figure(before, "uplink_util_1s"), figure(before, "uplink_util_100us_peak"));
    let (bb, ba) = (figure(before, "busbw_gbps"), figure(after, "busbw_gbps"));
    (
        format!(
            "ECMP: busiest ToR uplink {:.0}% busy over the run (1 s view), {:.0}% in its peak 100 us window; hot rack pair r{}->r{} mean ABW/C {h1s:.2} over the run, {h100:.2} in its worst 100 us window; \
             bottleneck mode {} ({:.0}% of samples) -> {} ({:.0}%) with spray, ToR uplinks {:.0}% -> {:.0}%; busbw {bb:.1} -> {ba:.1} Gb/s",
            u1s * 100.0,
            u100 * 100.0,
            figure(before, "hot_pair_src_rack"),
            figure(before, "hot_pair_dst_rack"),
            PORT_WORDS[mb],
            figure(before, PORT_SHARES[mb]) * 100.0,
            PORT_WORDS[ma],
            figure(after, PORT_SHARES[ma]) * 100.0,
            ub * 100.0,
            ua * 100.0
        ),
        // The 100 us view shows congestion the 1 s view hides, the mode is
        // the ToR uplinks before the change and elsewhere after it.
        u100 > u1s && h100 < h1s && mb == PORT_TOR_UP && ma != PORT_TOR_UP && ua < ub,
    )
}

// S6b: the queue-stamping paper's bits per stamp, on the ablation chain with
// MAX (the source's Clos experiment is not expressed; see the docs).
fn s6b_figures(o: &RunOutput) -> Figures {
    let total: u64 = o.tables.flows.delivered_bytes.iter().sum();
    let rtt = o.tables.cc.as_ref().map_or(f64::NAN, |c| {
        let acks: u64 = c.acks.iter().sum();
        (0..c.len()).map(|i| c.rtt_mean_ns[i] * c.acks[i] as f64).sum::<f64>() / acks.max(1) as f64 / 1e3
    });
    vec![
        ("main_gbps", o.tables.flows.delivered_bytes[0] as f64 * 8.0 / o.summary.sim_time_ns),
        ("total_gbps", total as f64 * 8.0 / o.summary.sim_time_ns),
        ("rtt_mean_us", rtt),
    ]
}

const S6B_BITS: [u32; 6] = [1, 2, 4, 8, 16, 32];

fn s6b_verdict(v: &[Figures]) -> (String, bool) {
    let parts: Vec<String> = S6B_BITS
        .iter()
        .zip(v)
        .map(|(b, f)| format!("{b} bits {:.2} / {:.2} Gb/s, RTT {:.0} us", figure(f, "main_gbps"), figure(f, "total_gbps"), figure(f, "rtt_mean_us")))
        .collect();
    let full = &v[S6B_BITS.len() - 1];
    // "4 bits suffice": from 4 bits on, total throughput within 5% and mean
    // RTT within 10% of 32 bits.
    let close = |f: &Figures| {
        (figure(f, "total_gbps") / figure(full, "total_gbps") - 1.0).abs() <= 0.05 && (figure(f, "rtt_mean_us") / figure(full, "rtt_mean_us") - 1.0).abs() <= 0.10
    };
    (format!("main / all flows: {}", parts.join("; ")), v[2..].iter().all(close))
}

// S8: Broadcom CAST on 4 servers x 8 NICs: busbw (mean over the 8 rails) per
// load-balancing mode and seed.
fn s8_figures(o: &RunOutput) -> Figures {
    let Some(c) = &o.tables.collectives else { return vec![] };
    let bus: Vec<f64> = (0..c.len()).filter(|&i| c.step[i].is_none()).filter_map(|i| c.busbw_gbps[i]).collect();
    let mean = bus.iter().sum::<f64>() / bus.len().max(1) as f64;
    let min = bus.iter().copied().fold(f64::INFINITY, f64::min);
    let max = bus.iter().copied().fold(0.0, f64::max);
    vec![("busbw_gbps", mean), ("busbw_min_gbps", min), ("busbw_max_gbps", max)]
}

/// S8's modes, in variant order within each seed.
const S8_MODES: [&str; 5] = ["qp1", "rr", "wrr_cast", "split", "split_cast"];

fn s8_verdict(v: &[Figures]) -> (String, bool) {
    let seeds = v.len() / S8_MODES.len();
    let mean = |m: usize| (0..seeds).map(|s| figure(&v[s * S8_MODES.len() + m], "busbw_gbps")).sum::<f64>() / seeds as f64;
    let gain = |with: usize, without: usize| {
        let g: Vec<f64> = (0..seeds).map(|s| figure(&v[s * S8_MODES.len() + with], "busbw_gbps") / figure(&v[s * S8_MODES.len() + without], "busbw_gbps") - 1.0).collect();
        (g.iter().copied().fold(f64::INFINITY, f64::min) * 100.0, g.iter().copied().fold(f64::NEG_INFINITY, f64::max) * 100.0)
    };
    let (sl, sh) = gain(4, 3);
    let (wl, wh) = gain(2, 1);
    (
        format!(
            "busbw over {seeds} seeds: 1 QP {:.1}, rr {:.1}, wrr-cast {:.1}, split {:.1}, split-cast {:.1} Gb/s; CAST over striping {sl:+.0}% .. {sh:+.0}%, over rr {wl:+.0}% .. {wh:+.0}%",
            mean(0),
            mean(1),
            mean(2),
            mean(3),
            mean(4)
        ),
        sl > 0.0 && wl > 0.0,
    )
}

/// S8's variants: every mode (docs/lb.md's `--set`s of the shipped
/// scenario) under seeds 1, 2 and 3, at 64 MB per rank as lb.md's table.
macro_rules! s8_variants {
    ($($seed:literal),*) => {
        &[$(
            Variant { name: concat!("qp1_s", $seed), sets: s8_sets!($seed, "transport.connection.qps=1") },
            Variant { name: concat!("rr_s", $seed), sets: s8_sets!($seed, "transport.connection.split_data=false", "transport.connection.qp_sched.enable=false") },
            Variant { name: concat!("wrr_cast_s", $seed), sets: s8_sets!($seed, "transport.connection.split_data=false", "transport.connection.qp_sched.wrr_enable=true") },
            Variant { name: concat!("split_s", $seed), sets: s8_sets!($seed, "transport.connection.qp_sched.enable=false") },
            Variant { name: concat!("split_cast_s", $seed), sets: s8_sets!($seed) },
        )*]
    };
}

macro_rules! s8_sets {
    ($seed:literal $(, $set:literal)*) => {
        &[
            concat!("seed=", $seed),
            "workload.0.size=\"64MB\"",
            $($set),*
        ]
    };
}

/// S8's quick form: the shipped scenario's 16 MB per rank.
const S8_QUICK: &[&str] = &["workload.0.size=\"16MB\""];

/// S6b's variants: Timely on MAX stamps of 1 .. 32 bits.
macro_rules! s6b_variants {
    ($($bits:literal),*) => {
        &[$(
            Variant {
                name: concat!("max_", $bits, "bits"),
                sets: &["transport.cc=\"timely\"", "transport.timely.signal=\"max\"", "signals.stamp.collect=\"enqueue\"", "monitor.cc=true", concat!("signals.stamp.bits=", $bits)],
            },
        )*]
    };
}

/// Every experiment csigsim can express, in source order.
pub fn experiments() -> Vec<Experiment> {
    vec![
        Experiment {
            id: "S1",
            source: "000 CSIG slides",
            title: "NSCC 3-flow parking lot, delay vs CSIG max(Delay)",
            scenario: "nscc_parking_lot.toml",
            toml: include_str!("../scenarios/nscc_parking_lot.toml"),
            files: &[],
            variants: &[
                Variant { name: "nscc", sets: &["transport.nscc.delay_signal=\"rtt\""] },
                Variant { name: "nscc_csig", sets: &["transport.nscc.delay_signal=\"csig\""] },
            ],
            quick: &["stop=\"2ms\""],
            source_figure: "non-victim : victim throughput about 5:1 baseline, about 2.3:1 with CSIG max(Delay)",
            figures: s1_figures,
            verdict: s1_verdict,
        },
        Experiment {
            id: "S2",
            source: "000 CSIG slides",
            title: "collective-like: 30 all-reduce flows vs 2 pipeline victims, NSCC vs NSCC + CSIG max(Delay)",
            scenario: "repro/s2_collective_victims.toml",
            toml: include_str!("../scenarios/repro/s2_collective_victims.toml"),
            files: &[],
            variants: &[
                Variant { name: "nscc", sets: &["transport.nscc.delay_signal=\"rtt\""] },
                Variant { name: "nscc_csig", sets: &["transport.nscc.delay_signal=\"csig\""] },
            ],
            quick: &["flow.30.size=\"4MB\"", "flow.31.size=\"4MB\"", "flow.30.start=\"200us\"", "flow.31.start=\"200us\"", "stop=\"3ms\""],
            source_figure: "victims 13.7 / 14.0 -> 22.6 / 23.1 Gb/s (+65%), FCT 37.3 / 36.7 -> 22.6 / 22.2 ms (-39%)",
            figures: s2_figures,
            verdict: s2_verdict,
        },
        Experiment {
            id: "S3",
            source: "000 CSIG slides",
            title: "Swift vs Swift + fast ramp-up (CSIG min(ABW/C)) on 640 KB RPCs with bursty 10 MB background",
            scenario: "rpc_bursty_background.toml",
            toml: include_str!("../scenarios/rpc_bursty_background.toml"),
            files: &[],
            variants: &[
                Variant { name: "swift", sets: &["transport.swift.fast_ramp_up=false"] },
                Variant { name: "swift_fru", sets: &["transport.swift.fast_ramp_up=true"] },
            ],
            quick: &["workload.0.duration=\"5ms\""],
            source_figure: "foreground median RPC latency -15%, background unchanged (testbed)",
            figures: s3_figures,
            verdict: s3_verdict,
        },
        Experiment {
            id: "S4",
            source: "000 CSIG slides",
            title: "telemetry: 100 us vs 1 s views, ABW/C heatmap, bottleneck map before and after ECMP -> spray (and D-mod-K)",
            scenario: "repro/s4_telemetry_hotspot.toml",
            toml: include_str!("../scenarios/repro/s4_telemetry_hotspot.toml"),
            files: &[],
            variants: &[
                Variant { name: "ecmp", sets: &[] },
                // Spraying reorders packets: the change takes a receiver that keeps them.
                Variant { name: "spray", sets: &["switch.routing=\"spray\"", "transport.retransmit=\"selective\""] },
                Variant { name: "dmodk", sets: &["switch.routing=\"deterministic\""] },
                // The same pair with twice the core capacity: where a sprayed flow no
                // longer fills every hop, the upstream port stops winning ties.
                Variant { name: "ecmp_8_spines", sets: &["topology.spines=8"] },
                Variant { name: "spray_8_spines", sets: &["topology.spines=8", "switch.routing=\"spray\"", "transport.retransmit=\"selective\""] },
            ],
            quick: &["workload.0.iterations=2", "workload.1.iterations=2", "workload.2.iterations=2", "workload.3.iterations=2"],
            source_figure: "production telemetry (qualitative): at 1 s no congestion is evident, at 100 us brief intense bursts are; min(ABW) heatmap between cluster portions; after an LB change the most prevalent bottleneck moves away from the ToR uplinks",
            figures: s4_figures,
            verdict: s4_verdict,
        },
        Experiment {
            id: "S5",
            source: "001 DCQCN-Rev",
            title: "64-node CLOS incast F0, F1, F4, F8 -> N16 with victim F3: PFC, DCQCN, DCQCN-Rev",
            scenario: "clos_incast_victim.toml",
            toml: include_str!("../scenarios/clos_incast_victim.toml"),
            files: &[],
            variants: &[
                Variant { name: "pfc", sets: &[] },
                // The source takes DCQCN's constants from the DCQCN paper.
                Variant { name: "dcqcn", sets: &["transport.cc=\"dcqcn\"", "transport.dcqcn.profile=\"paper\""] },
                Variant { name: "dcqcn_rev", sets: &["transport.cc=\"dcqcn_rev\"", "transport.dcqcn.profile=\"paper\"", "switch.ecn.mode=\"ecp\""] },
            ],
            quick: &[],
            source_figure: "all delivered: PFC about 6.5 ms, DCQCN about 12.5 ms, DCQCN-Rev first (about 4 ms); victim at full rate only with DCQCN-Rev",
            figures: s5_figures,
            verdict: s5_verdict,
        },
        Experiment {
            id: "S6",
            source: "003 queue stamping",
            title: "Timely on the ablation chain: RTT vs SUM, SUM_SQU and MAX stamps",
            scenario: "chain_cross_traffic.toml",
            toml: include_str!("../scenarios/chain_cross_traffic.toml"),
            files: &[("chain_cross_traffic.csv", include_str!("../scenarios/chain_cross_traffic.csv"))],
            variants: &[
                Variant { name: "rtt", sets: &["transport.cc=\"timely\"", "transport.timely.signal=\"rtt\""] },
                Variant { name: "sum", sets: &["transport.cc=\"timely\"", "transport.timely.signal=\"sum\"", "signals.stamp.collect=\"enqueue\""] },
                Variant { name: "sum_squ", sets: &["transport.cc=\"timely\"", "transport.timely.signal=\"sum_squ\"", "signals.stamp.collect=\"enqueue\""] },
                Variant { name: "max", sets: &["transport.cc=\"timely\"", "transport.timely.signal=\"max\"", "signals.stamp.collect=\"enqueue\""] },
            ],
            quick: &["stop=\"5ms\""],
            source_figure: "MAX about 2x the throughput of RTT; SUM and RTT below the 1.4 Gb/s fair share; SUM_SQU between",
            figures: s6_figures,
            verdict: s6_verdict,
        },
        Experiment {
            id: "S6b",
            source: "003 queue stamping",
            title: "Timely on MAX stamps of 1, 2, 4, 8, 16 and 32 bits on the ablation chain",
            scenario: "chain_cross_traffic.toml",
            toml: include_str!("../scenarios/chain_cross_traffic.toml"),
            files: &[("chain_cross_traffic.csv", include_str!("../scenarios/chain_cross_traffic.csv"))],
            variants: s6b_variants!(1, 2, 4, 8, 16, 32),
            quick: &["stop=\"5ms\""],
            source_figure: "192-host Clos, MAX: RTT improves up to 4 bits, diminishing beyond; throughput stable with 4 or more bits (\"4 bits may suffice, 8 plenty\")",
            figures: s6b_figures,
            verdict: s6b_verdict,
        },
        Experiment {
            id: "S7",
            source: "004 MCC",
            title: "spray + AllReduce groups: DCQCN vs MCC",
            scenario: "mcc_spray_allreduce.toml",
            toml: include_str!("../scenarios/mcc_spray_allreduce.toml"),
            files: &[],
            variants: &[Variant { name: "dcqcn", sets: &["transport.cc=\"dcqcn\""] }, Variant { name: "mcc", sets: &["transport.cc=\"mcc\""] }],
            quick: &[],
            source_figure: "DCQCN below 60% utilization, MCC about 100%: +22% throughput, -16% AllReduce time",
            figures: s7_figures,
            verdict: s7_verdict,
        },
        Experiment {
            id: "S8",
            source: "002 CAST",
            title: "4 servers x 8 NICs, ring AllReduce per rail with ECMP collisions: 1 QP, rr, wrr-cast, split, split-cast",
            scenario: "cast_leaf_spine.toml",
            toml: include_str!("../scenarios/cast_leaf_spine.toml"),
            files: &[],
            variants: s8_variants!(1, 2, 3),
            quick: S8_QUICK,
            source_figure: "CAST +10% to +50% busbw over striping for large messages (hardware)",
            figures: s8_figures,
            verdict: s8_verdict,
        },
    ]
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_variant_is_a_valid_scenario_in_both_forms() {
        let dir = std::env::temp_dir().join(format!("csigsim-repro-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for e in super::experiments() {
            e.write_files(&dir).unwrap();
            for v in e.variants {
                for quick in [false, true] {
                    e.load(v, quick, &dir).unwrap_or_else(|err| panic!("{} {} quick={quick}: {err}", e.id, v.name));
                }
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
