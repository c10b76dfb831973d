//! The experiments of the source documents, each as shipped scenarios run in
//! a few variants, the figures csigsim reads off them, the figures the source
//! reports, and whether the source's direction is reproduced. `csigsim repro`
//! runs them; docs/reproductions.md discusses every result.
//!
//! A variant is the experiment's scenario with `--set` overrides. The quick
//! form adds overrides that shrink the experiment (shorter runs, smaller
//! transfers) so that the test suite can check every direction in seconds;
//! its figures are not the ones to compare with the source.

use crate::output::RunOutput;
use crate::scenario::Override;

/// A run's figures, by name.
pub type Figures = Vec<(&'static str, f64)>;

/// One experiment of a source document.
pub struct Experiment {
    /// `S1` .. `S8`, as in docs/reproductions.md.
    pub id: &'static str,
    /// The source document and what it reports.
    pub source: &'static str,
    pub title: &'static str,
    /// The scenario file, relative to the repository's `scenarios/`.
    pub scenario: &'static str,
    /// Its text, built in so that `csigsim repro` runs anywhere.
    pub toml: &'static str,
    /// Files the scenario reads (trace files), by name, built in as well.
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
    pub fn load(&self, variant: &Variant, quick: bool, base: &std::path::Path) -> Result<crate::Scenario, crate::de::InputError> {
        crate::scenario::load_str(self.toml, self.scenario, base, &self.overrides(variant, quick), None)
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
            let output = crate::run(sc, |_| true);
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
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
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

/// Every experiment csigsim can express, in source order.
pub fn experiments() -> Vec<Experiment> {
    vec![
        Experiment {
            id: "S1",
            source: "000 CSIG slides",
            title: "NSCC 3-flow parking lot, delay vs CSIG max(Delay)",
            scenario: "nscc_parking_lot.toml",
            toml: include_str!("../../../scenarios/nscc_parking_lot.toml"),
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
            toml: include_str!("../../../scenarios/repro/s2_collective_victims.toml"),
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
            toml: include_str!("../../../scenarios/rpc_bursty_background.toml"),
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
            id: "S5",
            source: "001 DCQCN-Rev",
            title: "64-node CLOS incast F0, F1, F4, F8 -> N16 with victim F3: PFC, DCQCN, DCQCN-Rev",
            scenario: "clos_incast_victim.toml",
            toml: include_str!("../../../scenarios/clos_incast_victim.toml"),
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
            toml: include_str!("../../../scenarios/chain_cross_traffic.toml"),
            files: &[("chain_cross_traffic.csv", include_str!("../../../scenarios/chain_cross_traffic.csv"))],
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
            id: "S7",
            source: "004 MCC",
            title: "spray + AllReduce groups: DCQCN vs MCC",
            scenario: "mcc_spray_allreduce.toml",
            toml: include_str!("../../../scenarios/mcc_spray_allreduce.toml"),
            files: &[],
            variants: &[Variant { name: "dcqcn", sets: &["transport.cc=\"dcqcn\""] }, Variant { name: "mcc", sets: &["transport.cc=\"mcc\""] }],
            quick: &[],
            source_figure: "DCQCN below 60% utilization, MCC about 100%: +22% throughput, -16% AllReduce time",
            figures: s7_figures,
            verdict: s7_verdict,
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
