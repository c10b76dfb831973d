//! Scenarios: TOML text -> validated [`Scenario`] -> a [`World`](crate::sim::World).
//!
//! Loading applies `--set` overrides to the document, deserializes it with
//! unknown keys refused, builds the topology and resolves every host reference
//! and workload into a flat list of flows. Any problem is an [`InputError`]
//! naming the file, the key and the line.

pub mod config;
pub use crate::de::error;
mod locate;
pub(crate) use crate::de::path_string;

use crate::net::topology::{TopologyConfig, TopologySpec};
use crate::units::Time;
use config::*;
use crate::id::HostId;
use crate::net::topology::resolve_host;
pub use error::InputError;
use std::path::Path;

pub use crate::workload::FlowSpec;

/// A validated scenario, ready to build.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub seed: u64,
    pub stop: Option<Time>,
    pub topology_kind: &'static str,
    pub topology: TopologySpec,
    pub switch: SwitchConfig,
    pub transport: TransportConfig,
    pub monitor: MonitorConfig,
    pub signals: crate::signal::SignalSetup,
    pub flows: Vec<FlowSpec>,
    /// Flows that start when others have arrived (collectives).
    pub deps: Vec<crate::workload::collective::FlowDep>,
    /// Collective operations, for collectives.csv.
    pub collectives: Vec<crate::workload::collective::CollectiveSpec>,
    /// The scenario text after overrides, as run (for the run directory).
    pub resolved_toml: String,
}

/// An override `KEY=VALUE` from `--set` or the Python API.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Override {
    pub key: String,
    pub value: String,
}

impl Override {
    pub fn parse(s: &str) -> Result<Override, InputError> {
        match s.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok(Override { key: k.trim().into(), value: v.trim().into() }),
            _ => Err(InputError::new("--set", None, None, format!("expected KEY=VALUE, got \"{s}\""))),
        }
    }
}

/// Loads a scenario file.
pub fn load_file(path: &Path, overrides: &[Override], seed: Option<u64>) -> Result<Scenario, InputError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError::new(path.display().to_string(), None, None, format!("cannot read the file: {e}")))?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    load_str(&text, &path.display().to_string(), &base, overrides, seed)
}

/// Loads a scenario from text; `file` names it in errors, `base_dir` anchors relative paths.
pub fn load_str(text: &str, file: &str, base_dir: &Path, overrides: &[Override], seed: Option<u64>) -> Result<Scenario, InputError> {
    // A seed given on the command line is written into the scenario as run.
    let mut all = overrides.to_vec();
    if let Some(s) = seed {
        all.push(Override { key: "seed".into(), value: s.to_string() });
    }
    let overrides = &all[..];
    let text = locate::apply_overrides(text, file, overrides)?;
    let at = |key: &str| locate::locate(&text, key);
    let err = |key: &str, msg: String| {
        let key = key.to_string();
        let overridden = overrides.iter().any(|o| key == o.key || key.starts_with(&format!("{}.", o.key)));
        let f = if overridden { format!("{file} (with --set {key})") } else { file.to_string() };
        InputError::new(f, Some(key.clone()), at(&key), msg)
    };
    let de = toml::de::Deserializer::parse(&text).map_err(|e| syntax_error(&text, file, e))?;
    let sf: ScenarioFile = serde_path_to_error::deserialize(de).map_err(|e| {
        let key = path_string(e.path());
        let inner = e.into_inner();
        let pos = inner.span().map(|s| error::line_col(&text, s.start)).or_else(|| at(&key));
        InputError::new(file, (!key.is_empty() && key != ".").then_some(key), pos, inner.message().trim_end().to_string())
    })?;
    validate(sf, &text, base_dir, seed, &err)
}

fn syntax_error(text: &str, file: &str, e: toml::de::Error) -> InputError {
    let pos = e.span().map(|s| error::line_col(text, s.start));
    InputError::new(file, None, pos, format!("TOML syntax error: {}", e.message().trim_end()))
}

type ErrFn<'a> = dyn Fn(&str, String) -> InputError + 'a;

fn topology_config(raw: &toml::Table, err: &ErrFn) -> Result<TopologyConfig, InputError> {
    TopologyConfig::from_table(raw).map_err(|e| {
        let full = if e.key.is_empty() { "topology".to_string() } else { format!("topology.{}", e.key) };
        err(&full, e.msg)
    })
}

fn validate(sf: ScenarioFile, text: &str, base_dir: &Path, seed: Option<u64>, err: &ErrFn) -> Result<Scenario, InputError> {
    let topo_cfg = topology_config(&sf.topology, err)?;
    let topology = topo_cfg.build().map_err(|e| err(&format!("topology.{}", e.key), e.msg))?;
    let t = &sf.transport;
    if t.mtu == 0 {
        return Err(err("transport.mtu", "mtu must be above zero".into()));
    }
    if t.ack_every == 0 {
        return Err(err("transport.ack_every", "ack_every must be at least 1".into()));
    }
    if t.ack_size == 0 {
        return Err(err("transport.ack_size", "ack_size must be above zero".into()));
    }
    if t.rto.0 == 0 {
        return Err(err("transport.rto", "rto must be above zero".into()));
    }
    let cc = t.cc_config();
    cc.validate().map_err(|(k, m)| err(&format!("transport.{k}"), m))?;
    let s = &sf.switch;
    if let Some(e) = &s.ecn {
        check_ecn(e, "switch.ecn", err)?;
    }
    for (i, r) in s.ecn_rule.iter().enumerate() {
        let key = format!("switch.ecn_rule[{i}]");
        check_ecn(&r.ecn, &format!("{key}.ecn"), err)?;
        if let Some(name) = &r.switch {
            if !topology.switches.iter().any(|s| &s.name == name) {
                return Err(err(&format!("{key}.switch"), format!("unknown switch \"{name}\"")));
            }
        }
    }
    if !(s.dt_alpha > 0.0 && s.dt_alpha.is_finite()) {
        return Err(err("switch.dt_alpha", format!("dt_alpha must be above zero, got {}", s.dt_alpha)));
    }
    if !(s.pfc.alpha > 0.0 && s.pfc.alpha.is_finite()) {
        return Err(err("switch.pfc.alpha", format!("alpha must be above zero, got {}", s.pfc.alpha)));
    }
    if s.trim_size == 0 || s.trim_size > t.header + t.mtu {
        return Err(err("switch.trim_size", format!("trim_size must be between 1 and one packet ({} bytes)", t.header + t.mtu)));
    }
    if sf.monitor.window.0 == 0 {
        return Err(err("monitor.window", "window must be above zero".into()));
    }
    check_buffer(&topology, s, t, err)?;
    let max_rate = topology.links.iter().map(|l| l.rate.0).max().unwrap_or(1);
    let is_switch = |name: &str| topology.switches.iter().any(|s| s.name == name);
    let signals = crate::signal::SignalSetup::new(&sf.signals, max_rate, &is_switch, s.buffer).map_err(|(k, m)| err(&format!("signals.{k}"), m))?;
    let setup = crate::cc::Setup {
        int: sf.signals.int.is_some(),
        ecp: s.ecn.is_some_and(|e| e.mode == EcnMode::Ecp),
        stamp: signals.stamp.as_ref(),
    };
    cc.check(&setup).map_err(|(k, m)| err(&format!("transport.{k}"), m))?;
    let mut flows = Vec::new();
    let resolve = |h: &HostRef, key: &str| resolve_host(&topology, h).map_err(|m| err(key, m));
    for (i, f) in sf.flow.iter().enumerate() {
        let src = resolve(&f.src, &format!("flow[{i}].src"))?;
        let dst = resolve(&f.dst, &format!("flow[{i}].dst"))?;
        if src == dst {
            return Err(err(&format!("flow[{i}].dst"), "a flow's source and destination must differ".into()));
        }
        if f.size.0 == 0 {
            return Err(err(&format!("flow[{i}].size"), "size must be above zero".into()));
        }
        flows.push(FlowSpec {
            src: HostId(src),
            dst: HostId(dst),
            size: f.size.0,
            start: f.start,
            name: f.name.clone().unwrap_or_default(),
            rate_cap: f.rate.map_or(u64::MAX, |r| r.0),
        });
    }
    let seed = seed.unwrap_or(sf.seed);
    let extras = std::cell::RefCell::new(crate::workload::Extras::default());
    for (i, w) in sf.workload.iter().enumerate() {
        let key_err = |key: &str, m| err(&format!("workload[{i}].{key}"), m);
        let ctx = crate::workload::Ctx { idx: i, topo: &topology, seed, base_dir, err: &key_err, out: &extras };
        crate::workload::expand(w, &ctx, &mut flows)?;
    }
    let extras = extras.into_inner();
    Ok(Scenario {
        name: sf.name,
        seed,
        stop: sf.stop,
        topology_kind: topo_cfg.kind(),
        topology,
        switch: sf.switch,
        transport: sf.transport,
        monitor: sf.monitor,
        signals,
        flows,
        deps: extras.deps,
        collectives: extras.collectives,
        resolved_toml: text.to_string(),
    })
}

/// One ECN setting (`switch.ecn` or a rule's): thresholds in order, probabilities in range.
fn check_ecn(e: &EcnConfig, key: &str, err: &ErrFn) -> Result<(), InputError> {
    if e.kmin > e.kmax {
        return Err(err(&format!("{key}.kmin"), format!("kmin ({}) is above kmax ({})", e.kmin, e.kmax)));
    }
    if !(0.0..=1.0).contains(&e.pmax) {
        return Err(err(&format!("{key}.pmax"), format!("pmax must be in [0, 1], got {}", e.pmax)));
    }
    if !(e.fair_share > 0.0 && e.fair_share.is_finite()) {
        return Err(err(&format!("{key}.fair_share"), format!("fair_share must be above zero, got {}", e.fair_share)));
    }
    if e.drain_time.0 == 0 {
        return Err(err(&format!("{key}.drain_time"), "drain_time must be above zero".into()));
    }
    if e.max_flows == 0 {
        return Err(err(&format!("{key}.max_flows"), "max_flows must be at least 1".into()));
    }
    if e.root_threshold.is_some() && e.mode != EcnMode::Ecp {
        return Err(err(&format!("{key}.root_threshold"), "root_threshold applies to mode = \"ecp\"".into()));
    }
    Ok(())
}

/// Every switch must have shared buffer left after reservations and headroom.
fn check_buffer(topo: &TopologySpec, s: &SwitchConfig, t: &TransportConfig, err: &ErrFn) -> Result<(), InputError> {
    let mut ports = vec![Vec::new(); topo.switches.len()];
    for l in &topo.links {
        for e in [l.a, l.b] {
            if let crate::net::topology::NodeRef::Switch(i) = e {
                ports[i as usize].push(l);
            }
        }
    }
    let max_packet = (t.mtu + t.header) as u64;
    for (i, pl) in ports.iter().enumerate() {
        let headroom: u64 = if s.mode.headroom() {
            pl.iter()
                .map(|l| crate::net::pfc_headroom(s, l.rate.0, l.delay.0, max_packet))
                .max()
                .unwrap_or(0)
        } else {
            0
        };
        let need = (s.reserved.0 + headroom) * pl.len() as u64;
        if need >= s.buffer.0 {
            return Err(err(
                "switch.buffer",
                format!(
                    "switch \"{}\" has {} ports: {} bytes of buffer leave nothing to share after {} bytes of reservation{}",
                    topo.switches[i].name,
                    pl.len(),
                    s.buffer.0,
                    need,
                    if headroom > 0 { " and PFC headroom" } else { "" }
                ),
            ));
        }
    }
    Ok(())
}
