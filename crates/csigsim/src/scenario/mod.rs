//! Scenarios: TOML text -> validated [`Scenario`] -> a [`World`](crate::engine::World).
//!
//! Loading applies `--set` overrides to the document, deserializes it with
//! unknown keys refused, builds the topology and resolves every host reference
//! and workload into its flows: listed, or a plan the run generates them
//! from ([`crate::workload::Flows`]). Any problem is an [`InputError`]
//! naming the file, the key and the line.

pub mod config;
pub use crate::de::error;
mod locate;
pub mod profile;
pub(crate) use crate::de::path_string;

use crate::net::topology::{TopologyConfig, TopologySpec};
use crate::units::Time;
use config::*;
use crate::id::{FlowId, HostId};
pub use error::InputError;
use std::path::Path;

pub use crate::budget::Budget;
pub use crate::workload::FlowSpec;

/// A validated scenario, ready to build.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub seed: u64,
    pub stop: Option<Time>,
    pub topology_kind: &'static str,
    pub topology: TopologySpec,
    /// `[[topology.failure]]`: links that go down or slow down during the run.
    pub failures: Vec<crate::net::failure::LinkFailure>,
    pub switch: SwitchConfig,
    pub transport: TransportConfig,
    pub monitor: MonitorConfig,
    pub signals: crate::signal::SignalSetup,
    /// `[engine]`: packet or flow level.
    pub engine: EngineConfig,
    /// At flow level: the ring collectives, each rewritten into one
    /// transfer per edge and channel (`workload::collective::coarse`).
    pub flow_rings: Vec<crate::workload::collective::coarse::Coarse>,
    /// The flows, workload by workload (`[[flow]]` entries first): flow
    /// ids run on from one workload to the next.
    pub workloads: Vec<crate::workload::Workload>,
    /// Collective operations, for collectives.csv.
    pub collectives: Vec<crate::workload::collective::CollectiveSpec>,
    /// RPC flows, for rpcs.csv.
    pub rpcs: Vec<crate::workload::rpc::RpcSpec>,
    /// With `[transport.connection]`: the flows are the parts of messages,
    /// grouped into connections.
    pub connections: Option<crate::workload::connection::ConnPlan>,
    /// The workloads that are jobs (`job = "name"`), in file order.
    pub jobs: Vec<crate::workload::job::JobSpec>,
    /// Run job `alone` by itself: the other jobs' flows and operations
    /// keep their ids and never begin (`csigsim run --isolate-jobs`).
    pub alone: Option<usize>,
    /// The scenario text after overrides, as run (for the run directory).
    pub resolved_toml: String,
    /// The run's memory as estimated when it was loaded ([`crate::budget::Estimate`]),
    /// and the budget it was checked against (`--max-memory`): a parallel
    /// run holds a copy per partition, and takes no more partitions than
    /// the budget holds copies.
    pub memory_estimate: u64,
    pub max_memory: u64,
}

impl Scenario {
    /// Flows in all.
    pub fn flow_count(&self) -> usize {
        self.workloads.last().map_or(0, |w| (w.first + w.len()) as usize)
    }

    /// The workload that holds `flow`.
    fn workload_of(&self, flow: FlowId) -> &crate::workload::Workload {
        &self.workloads[self.workloads.partition_point(|w| w.first <= flow.0) - 1]
    }

    /// This scenario with job `job` alone on the fabric: the other jobs'
    /// flows keep their ids (and so their entropy and event order) and
    /// never start, their hosts stay theirs.
    pub fn alone(&self, job: usize) -> Scenario {
        Scenario { alone: Some(job), ..self.clone() }
    }

    /// Whether workload `k`'s flows are left out of the run (another job's,
    /// in a run of one job alone).
    pub fn muted(&self, k: usize) -> bool {
        self.alone.is_some_and(|a| self.jobs.iter().enumerate().any(|(j, s)| j != a && s.workload == k))
    }

    /// The name of flow `flow`.
    pub fn flow_name(&self, flow: FlowId) -> &str {
        let w = self.workload_of(flow);
        w.name(flow.0 - w.first)
    }

    /// Calls `each` with every flow (its id, what it is and whether it
    /// waits for others), in flow order, computing those a plan holds.
    pub fn for_each_flow(&self, mut each: impl FnMut(FlowId, &FlowSpec, bool)) {
        for w in &self.workloads {
            w.for_each_flow(&mut each);
        }
    }

    /// Every flow, listed (a plan's computed: for tests and small scenarios).
    pub fn flow_specs(&self) -> Vec<FlowSpec> {
        let mut v = Vec::with_capacity(self.flow_count());
        self.for_each_flow(|_, f, _| v.push(f.clone()));
        v
    }

    /// Calls `each` with every dependency (flow ids of the scenario) until
    /// it answers false; answers whether it never did.
    pub fn for_each_dep(&self, mut each: impl FnMut(&crate::workload::collective::FlowDep) -> bool) -> bool {
        self.workloads.iter().all(|w| w.for_each_dep(&mut each))
    }

    /// Every dependency, listed (for tests and small scenarios).
    pub fn flow_deps(&self) -> Vec<crate::workload::collective::FlowDep> {
        let mut v = Vec::new();
        self.for_each_dep(|d| {
            v.push(d.clone());
            true
        });
        v
    }
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

/// Loads a scenario file, within the default budget of this process
/// ([`Budget::for_this_process`]).
pub fn load_file(path: &Path, overrides: &[Override], seed: Option<u64>) -> Result<Scenario, InputError> {
    load_file_with(path, overrides, seed, &Budget::for_this_process())
}

/// [`load_file`] within `budget`: a scenario whose flows or network would
/// take more memory, or whose monitor files would certainly pass its
/// output, is refused, naming the key that drives it.
pub fn load_file_with(path: &Path, overrides: &[Override], seed: Option<u64>, budget: &Budget) -> Result<Scenario, InputError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| InputError::new(&file, None, None, format!("cannot read the file: {e}")))?;
    let text = error::utf8(bytes, &file)?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    load_str_with(&text, &path.display().to_string(), &base, overrides, seed, budget)
}

/// Loads a scenario from text; `file` names it in errors, `base_dir` anchors
/// relative paths. Within the default budget, as [`load_file`].
pub fn load_str(text: &str, file: &str, base_dir: &Path, overrides: &[Override], seed: Option<u64>) -> Result<Scenario, InputError> {
    load_str_with(text, file, base_dir, overrides, seed, &Budget::for_this_process())
}

/// [`load_str`] within `budget`, as [`load_file_with`].
pub fn load_str_with(text: &str, file: &str, base_dir: &Path, overrides: &[Override], seed: Option<u64>, budget: &Budget) -> Result<Scenario, InputError> {
    // A seed given on the command line is written into the scenario as run.
    let mut all = overrides.to_vec();
    // TOML integers stop at 2^63-1: a larger seed is written as a string of digits.
    if let Some(s) = seed {
        let value = if i64::try_from(s).is_ok() { s.to_string() } else { format!("\"{s}\"") };
        all.push(Override { key: "seed".into(), value });
    }
    let overrides = &all[..];
    let text = locate::apply_overrides(text, file, overrides)?;
    let at = |key: &str| locate::locate(&text, key);
    // A profile fills the keys the scenario leaves unset. Errors still point
    // into the scenario's own text: a key the profile set has no position.
    let profiled = profile::apply(&text, file, at)?;
    let parsed = profiled.as_deref().unwrap_or(&text);
    // The file an error is in, noting an override that set the key (or a table holding it).
    let set_keys: Vec<String> = overrides.iter().map(|o| locate::canonical(&o.key)).collect();
    let file_of = |key: &str| {
        let overridden = set_keys.iter().any(|k| key == k || key.starts_with(&format!("{k}.")) || key.starts_with(&format!("{k}[")));
        if overridden {
            format!("{file} (with --set {key})")
        } else {
            file.to_string()
        }
    };
    let err = |key: &str, msg: String| InputError::new(file_of(key), Some(key.to_string()), at(key), msg);
    let de = toml::de::Deserializer::parse(parsed).map_err(|e| syntax_error(&text, file, e))?;
    let sf: ScenarioFile = serde_path_to_error::deserialize(de).map_err(|e| {
        let key = path_string(e.path());
        let inner = e.into_inner();
        let message = crate::de::error::one_line(inner.message());
        // Inside a table chosen by its `kind` (a workload), the path stops at
        // the table: find the value of that table that gives the same error.
        if let Some(field) = culprit(parsed, &key, &message) {
            return InputError::new(file_of(&field), Some(field.clone()), at(&field), message);
        }
        let span_pos = inner.span().filter(|_| profiled.is_none()).map(|s| error::line_col(&text, s.start));
        let pos = span_pos.or_else(|| at(&key));
        let key = (!key.is_empty() && key != ".").then_some(key);
        InputError::new(key.as_deref().map_or_else(|| file.to_string(), file_of), key, pos, message)
    })?;
    validate(sf, parsed, base_dir, seed, budget, &err)
}

/// The key of the value behind an error reported at the table `key`, an
/// element of an array of tables (`workload[0]`): the first value of that
/// table (or of a table inside it) that, read as a time, a size or a rate,
/// fails with the same message. None when the key is not such an element
/// or no value matches.
fn culprit(text: &str, key: &str, message: &str) -> Option<String> {
    use serde::Deserialize;
    let (array, index) = key.strip_suffix(']')?.rsplit_once('[')?;
    if array.contains(['.', '[']) {
        return None;
    }
    let doc: toml::Table = toml::from_str(text).ok()?;
    let table = doc.get(array)?.as_array()?.get(index.parse::<usize>().ok()?)?.as_table()?;
    // A string the table's kind does not know: the key holding it.
    let unknown = message.strip_prefix("unknown variant `").and_then(|m| m.split_once('`')).map(|(v, _)| v.to_string());
    fn search(t: &toml::Table, at: &str, message: &str, unknown: &Option<String>) -> Option<String> {
        for (k, v) in t {
            let here = format!("{at}.{k}");
            if unknown.is_some() && v.as_str() == unknown.as_deref() && k != "kind" {
                return Some(here);
            }
            if let Some(inner) = v.as_table() {
                if let Some(found) = search(inner, &here, message, unknown) {
                    return Some(found);
                }
                continue;
            }
            let errors = [
                crate::units::Time::deserialize(v.clone()).err(),
                crate::units::Size::deserialize(v.clone()).err(),
                crate::units::Rate::deserialize(v.clone()).err(),
            ];
            if errors.iter().flatten().any(|e| crate::de::error::one_line(e.message()) == message) {
                return Some(here);
            }
        }
        None
    }
    search(table, key, message, &unknown)
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

/// `[[topology.failure]]`, resolved against the built topology.
fn link_failures(raw: &toml::Table, topo: &TopologySpec, err: &ErrFn) -> Result<Vec<crate::net::failure::LinkFailure>, InputError> {
    let Some(v) = raw.get("failure") else { return Ok(Vec::new()) };
    let entries: Vec<crate::net::failure::FailureEntry> = serde_path_to_error::deserialize(v.clone()).map_err(|e| {
        let inner = crate::de::path_string(e.path());
        let key = if inner.starts_with('[') { format!("topology.failure{inner}") } else { format!("topology.failure.{inner}") };
        err(key.trim_end_matches('.'), e.into_inner().to_string().trim_end().to_string())
    })?;
    crate::net::failure::resolve(&entries, topo).map_err(|(k, m)| err(&format!("topology.{k}"), m))
}

fn validate(mut sf: ScenarioFile, text: &str, base_dir: &Path, seed: Option<u64>, budget: &Budget, err: &ErrFn) -> Result<Scenario, InputError> {
    sf.transport.resolve_delivery(sf.switch.routing);
    if let Some(m) = sf.transport.timeout_error() {
        return Err(err("transport.timeout", m.into()));
    }
    let topo_cfg = topology_config(&sf.topology, err)?;
    let topology = topo_cfg.build().map_err(|e| err(&format!("topology.{}", e.key), e.msg))?;
    let network = crate::budget::Estimate::new(2 * topology.links.len() as u64, 0, &mut []);
    if network.bytes() > budget.max_memory {
        return Err(err("topology", over_memory(&network, budget, format!("its network of {} hosts, {} switches and {} links", topology.hosts.len(), topology.switches.len(), topology.links.len()))));
    }
    let failures = link_failures(&sf.topology, &topology, err)?;
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
    if let Some(lb) = t.host_lb_config() {
        let setup = crate::lb::Setup { csig: sf.signals.csig.as_ref().map(|c| c.sig) };
        lb.check(&setup).map_err(|(k, m)| err(&format!("transport.{k}"), m))?;
    }
    if t.rto.0 < MIN_RTO.0 {
        return Err(err("transport.rto", format!("rto must be at least {MIN_RTO}, got {}: a timeout shorter than any fabric's round trip fires for every packet in flight, and the run makes events faster than time passes", t.rto)));
    }
    t.cc_sections.validate().map_err(|(k, m)| err(&format!("transport.{k}"), m))?;
    if let Some(r) = &t.rccc {
        r.validate().map_err(|(k, m)| err(&format!("transport.rccc.{k}"), m))?;
    }
    let cc = t.cc_config();
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
    let names: Vec<&str> = topology.switches.iter().map(|s| s.name.as_str()).collect();
    s.check_models(&names).map_err(|(k, m)| err(&k, m))?;
    if !(s.dt_alpha > 0.0 && s.dt_alpha.is_finite()) {
        return Err(err("switch.dt_alpha", format!("dt_alpha must be above zero, got {}", s.dt_alpha)));
    }
    if !(s.pfc.alpha > 0.0 && s.pfc.alpha.is_finite()) {
        return Err(err("switch.pfc.alpha", format!("alpha must be above zero, got {}", s.pfc.alpha)));
    }
    if sf.monitor.window.0 < MIN_WINDOW.0 {
        return Err(err("monitor.window", format!("window must be at least {MIN_WINDOW}, got {}: a window shorter than a nanosecond is shorter than any packet's transmission, and every link writes a row per window", sf.monitor.window)));
    }
    let max_rate = topology.links.iter().map(|l| l.rate.0).max().unwrap_or(1);
    let is_switch = |name: &str| topology.switches.iter().any(|s| s.name == name);
    let signals = crate::signal::SignalSetup::new(&sf.signals, max_rate, &is_switch, s.buffer).map_err(|(k, m)| err(&format!("signals.{k}"), m))?;
    let wire = wire_sizes(t, &sf.signals, &signals, err)?;
    let one_packet = t.header as u64 + t.mtu as u64;
    if s.trim_size == 0 || s.trim_size as u64 > one_packet {
        return Err(err("switch.trim_size", format!("trim_size must be between 1 and one packet ({one_packet} bytes), got {}", s.trim_size)));
    }
    check_buffer(&topology, s, &wire, err)?;
    check_ctrl_buffer(s, &wire, err)?;
    let setup = crate::cc::Setup {
        int: sf.signals.int.is_some(),
        ecp: s.ecn.is_some_and(|e| e.mode == EcnMode::Ecp),
        stamp: signals.stamp.as_ref(),
    };
    cc.check(&setup).map_err(|(k, m)| err(&format!("transport.{k}"), m))?;
    let mut flows = Vec::new();
    let mut nic_spread = Vec::new();
    for (i, f) in sf.flow.iter().enumerate() {
        let (src, src_nics) = flow_end(&topology, &f.src, &format!("flow[{i}].src"), err)?;
        let (dst, dst_nics) = flow_end(&topology, &f.dst, &format!("flow[{i}].dst"), err)?;
        if src_nics > 1 || dst_nics > 1 {
            if sf.transport.connection.is_none() {
                let key = if src_nics > 1 { "src" } else { "dst" };
                return Err(err(
                    &format!("flow[{i}].{key}"),
                    "a flow from or to a server of several NICs is a connection whose queue pairs spread over the NICs: it needs [transport.connection] (or name one NIC)".into(),
                ));
            }
            nic_spread.push(crate::workload::NicSpread { flow: i as u32, src_nics, dst_nics });
        }
        if (src..src + src_nics).any(|h| (dst..dst + dst_nics).contains(&h)) {
            return Err(err(&format!("flow[{i}].dst"), "a flow's source and destination must differ (and not share a server)".into()));
        }
        if let Some(m) = crate::workload::size_error(f.size.0, t.mtu) {
            return Err(err(&format!("flow[{i}].size"), m));
        }
        flows.push(FlowSpec {
            src: HostId(src),
            dst: HostId(dst),
            size: f.size.0,
            start: f.start,
            name: f.name.clone().unwrap_or_default(),
            rate_cap: f.rate.map_or(u64::MAX, |r| r.0),
            channel: 0,
        });
    }
    let seed = seed.unwrap_or(sf.seed);
    let mut extras = crate::workload::Extras { nic_spread, ..Default::default() };
    let mut entry_deps = Vec::new();
    flow_deps(&sf.flow, &mut entry_deps, err)?;
    // Which key made how many flows, for the memory check below.
    let mut makers: Vec<(String, u64)> = vec![("flow".into(), flows.len() as u64)];
    let max_flows = budget.max_flows();
    if flows.len() as u64 > max_flows {
        return Err(err("flow", crate::workload::too_many_flows(max_flows)));
    }
    let mut count = flows.len() as u64;
    let mut workloads = vec![crate::workload::Workload { first: 0, flows: crate::workload::Flows::Listed { specs: flows, deps: entry_deps } }];
    // Connections of several queue pairs rewrite every flow into its parts:
    // every workload is listed for them.
    let plans = sf.transport.connection.is_none();
    crate::workload::job::check_names(sf.workload.iter().enumerate().map(|(i, w)| (i, w.job().map(|j| j.0))), err)?;
    if sf.transport.connection.is_some() {
        if let Some(i) = sf.workload.iter().position(|w| w.job().is_some()) {
            return Err(err(&format!("workload[{i}].job"), "jobs are not tracked with [transport.connection], which rewrites every workload's flows into one list of queue-pair parts".into()));
        }
    }
    let placer = crate::workload::job::Placer::default();
    let mut jobs = Vec::new();
    // At flow level a ring collective moves as one transfer per edge and
    // channel: its plan becomes those before any flow id is taken (its
    // slices may be more than ids reach), and its memory is theirs.
    let coarse_rings = sf.engine.fidelity == Fidelity::Flow && plans;
    let mut flow_rings = Vec::new();
    for (i, w) in sf.workload.iter().enumerate() {
        let key_err = |key: &str, m| err(&format!("workload[{i}].{key}"), m);
        let own = std::cell::RefCell::new(crate::workload::Extras::default());
        let ctx = crate::workload::Ctx { idx: i, first: count, topo: &topology, seed, base_dir, mtu: t.mtu, err: &key_err, max_flows, out: &own, placer: &placer };
        let first = count as u32;
        let collectives_before = extras.collectives.len();
        let flows = match crate::workload::plan(w, &ctx, plans, coarse_rings)? {
            Some(mut plan) => {
                if let (crate::workload::Flows::Ring(p), crate::workload::WorkloadEntry::Collective(c)) = (&plan, w) {
                    if coarse_rings {
                        let (ring, flows, instances) = crate::workload::collective::coarse::coarsen(p.clone(), first, c.op, c.size.0);
                        flow_rings.push(ring);
                        extras.collectives.extend(instances);
                        plan = flows;
                    } else {
                        extras.collectives.extend(p.instances(c.op, c.size.0, first));
                    }
                }
                // A graph's collectives (a Chakra trace's), flow ids of the workload.
                extras.collectives.extend(own.into_inner().collectives.into_iter().map(|mut c| {
                    c.steps.iter_mut().for_each(|r| *r = r.start + first..r.end + first);
                    c
                }));
                plan
            }
            None => {
                let mut specs = Vec::new();
                crate::workload::expand(w, &ctx, &mut specs)?;
                let own = own.into_inner();
                extras.collectives.extend(own.collectives.into_iter().map(|mut c| {
                    c.steps.iter_mut().for_each(|r| *r = r.start + first..r.end + first);
                    c
                }));
                extras.rpcs.extend(own.rpcs.into_iter().map(|mut r| {
                    r.flow += first;
                    r
                }));
                crate::workload::Flows::Listed { specs, deps: own.deps }
            }
        };
        let w = crate::workload::Workload { first, flows };
        if let Some((name, kind, iterations)) = sf.workload[i].job() {
            let (placement, hosts) = placer.placed(name).expect("a job's entry places it");
            jobs.push(crate::workload::job::JobSpec {
                name: name.to_string(),
                workload: workloads.len(),
                kind,
                placement,
                hosts,
                collectives: collectives_before..extras.collectives.len(),
                iterations,
            });
        }
        makers.push((format!("workload[{i}]"), w.len() as u64));
        count += w.len() as u64;
        workloads.push(w);
    }
    let connections = match &sf.transport.connection {
        None => None,
        Some(c) => {
            c.check().map_err(|(k, m)| err(&format!("transport.connection.{k}"), m))?;
            if !extras.rpcs.is_empty() {
                return Err(err("transport.connection", "connections of several queue pairs do not apply to rpc workloads (rpcs.csv reports whole RPCs)".into()));
            }
            let parts = crate::workload::connection::parts(count as usize, c.qps);
            if parts > max_flows {
                return Err(err("transport.connection.qps", format!("{count} messages on {} queue pairs make {parts} flows: {}", c.qps, crate::workload::too_many_flows(max_flows))));
            }
            makers.push(("transport.connection.qps".into(), parts.saturating_sub(count)));
            // One list of every message, dependencies in ids of the scenario.
            let mut flows = Vec::with_capacity(count as usize);
            for w in &workloads {
                w.for_each_flow(|_, f, _| flows.push(f.clone()));
                w.for_each_dep(|d| {
                    extras.deps.push(d.clone());
                    true
                });
            }
            let plan = crate::workload::connection::expand(c.qps, &mut flows, &mut extras);
            workloads = vec![crate::workload::Workload { first: 0, flows: crate::workload::Flows::Listed { specs: flows, deps: std::mem::take(&mut extras.deps) } }];
            Some(plan)
        }
    };
    let selective = sf.transport.selective();
    let memory_estimate = check_memory(&topology, &workloads, &makers, (sf.transport.mtu, selective, sf.switch.buffer.0), budget, err)?;
    check_link_rows(&sf.monitor, sf.stop, &topology, &workloads, budget, err)?;
    Ok(Scenario {
        name: sf.name,
        seed,
        stop: sf.stop,
        topology_kind: topo_cfg.kind(),
        topology,
        failures,
        switch: sf.switch,
        transport: sf.transport,
        monitor: sf.monitor,
        signals,
        engine: sf.engine,
        flow_rings,
        workloads,
        collectives: extras.collectives,
        rpcs: extras.rpcs,
        connections,
        jobs,
        alone: None,
        resolved_toml: text.to_string(),
        memory_estimate,
        max_memory: budget.max_memory,
    })
}

/// A `[[flow]]` end: its first host, and how many consecutive NIC hosts
/// its queue pairs spread over (1 for a host, the NICs for a server).
fn flow_end(topo: &TopologySpec, h: &HostRef, key: &str, err: &ErrFn) -> Result<(u32, u32), InputError> {
    let e = crate::net::topology::resolve_endpoint(topo, h).map_err(|m| err(key, m))?;
    let hosts = topo.endpoint_hosts(e);
    Ok((hosts.start, hosts.end - hosts.start))
}

/// The `after` lists of `[[flow]]` entries: known entries, no flow waiting
/// for itself, and no cycle (its flows would never start).
fn flow_deps(entries: &[FlowEntry], deps: &mut Vec<crate::workload::collective::FlowDep>, err: &ErrFn) -> Result<(), InputError> {
    let n = entries.len();
    for (i, f) in entries.iter().enumerate() {
        for (j, &a) in f.after.iter().enumerate() {
            let key = format!("flow[{i}].after[{j}]");
            if a as usize >= n {
                return Err(err(&key, format!("there is no flow {a}: the scenario has {n} [[flow]] entries (0..{})", n.saturating_sub(1))));
            }
            if a as usize == i || f.after[..j].contains(&a) {
                return Err(err(&key, format!("flow {a} is listed twice or is the flow itself")));
            }
        }
        if !f.after.is_empty() {
            deps.push(crate::workload::collective::FlowDep { flow: i as u32, after: f.after.clone(), gap: f.gap, after_sent: None });
        } else if f.gap.0 != 0 {
            return Err(err(&format!("flow[{i}].gap"), "gap applies to a flow with `after`".into()));
        }
    }
    // Kahn's algorithm: whatever is left waits, directly or not, for itself.
    let mut waiting: Vec<usize> = entries.iter().map(|f| f.after.len()).collect();
    let mut ready: Vec<usize> = (0..n).filter(|&i| waiting[i] == 0).collect();
    let mut done = 0;
    while let Some(i) = ready.pop() {
        done += 1;
        for (k, f) in entries.iter().enumerate() {
            if f.after.contains(&(i as u32)) {
                waiting[k] -= 1;
                if waiting[k] == 0 {
                    ready.push(k);
                }
            }
        }
    }
    if done < n {
        let i = (0..n).find(|&i| waiting[i] > 0).unwrap_or(0);
        return Err(err(&format!("flow[{i}].after"), "the flows' `after` lists form a cycle: none of its flows could start".into()));
    }
    Ok(())
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

/// Wire bytes of the largest data packet and of the largest ACK, and their parts.
struct WireSizes {
    mtu: u64,
    header: u64,
    /// A CSIG tag (0 without `[signals.csig]`).
    tag: u64,
    /// The INT stack every data packet and ACK reserves (0 without `[signals.int]`).
    int: u64,
    ack_size: u64,
}

impl WireSizes {
    fn data(&self) -> u64 {
        self.mtu + self.header + self.tag + self.int
    }
    fn ack(&self) -> u64 {
        self.ack_size + self.tag + self.int
    }
    /// How a data packet's size is made up, for messages.
    fn data_parts(&self) -> String {
        format!("mtu {} + header {} + CSIG tag {} + INT {}", self.mtu, self.header, self.tag, self.int)
    }
}

/// The largest wire size: the engine counts a packet's bytes in 32 bits.
const MAX_WIRE: u64 = u32::MAX as u64;

/// Packet sizes, summed in 64 bits: a data packet (payload, header, tag,
/// INT) and an ACK (its size, tag, INT) must each fit in 32 bits. A sum that
/// does not names its largest part.
fn wire_sizes(t: &TransportConfig, sc: &crate::signal::SignalsConfig, setup: &crate::signal::SignalSetup, err: &ErrFn) -> Result<WireSizes, InputError> {
    let int = match &sc.int {
        Some(ic) => {
            let (header, hops) = (ic.header as u64, ic.per_hop as u64 * ic.max_hops as u64);
            if header + hops > MAX_WIRE {
                let key = if hops >= header { "signals.int.per_hop" } else { "signals.int.header" };
                return Err(err(
                    key,
                    format!(
                        "INT would add header {header} + per_hop {} x max_hops {} = {} bytes to every packet; the largest wire size is {MAX_WIRE} bytes",
                        ic.per_hop,
                        ic.max_hops,
                        header + hops
                    ),
                ));
            }
            header + hops
        }
        None => 0,
    };
    let w = WireSizes {
        mtu: t.mtu as u64,
        header: t.header as u64,
        tag: setup.csig.as_ref().map_or(0, |c| c.size.bytes() as u64),
        int,
        ack_size: t.ack_size as u64,
    };
    let int_key = if sc.int.is_some_and(|ic| ic.header as u64 > ic.per_hop as u64 * ic.max_hops as u64) { "signals.int.header" } else { "signals.int.per_hop" };
    if w.data() > MAX_WIRE {
        let key = [("transport.mtu", w.mtu), ("transport.header", w.header), (int_key, w.int)].into_iter().max_by_key(|p| p.1).map_or("transport.mtu", |p| p.0);
        return Err(err(
            key,
            format!("a data packet would be {} bytes on the wire ({}); the largest wire size is {MAX_WIRE} bytes", w.data(), w.data_parts()),
        ));
    }
    if w.ack() > MAX_WIRE {
        let key = if w.ack_size >= w.int { "transport.ack_size" } else { int_key };
        return Err(err(
            key,
            format!(
                "an ACK would be {} bytes on the wire (ack_size {} + CSIG tag {} + INT {}); the largest wire size is {MAX_WIRE} bytes",
                w.ack(),
                w.ack_size,
                w.tag,
                w.int
            ),
        ));
    }
    Ok(w)
}

/// Every switch must have shared buffer left after reservations and
/// headroom, and an empty switch must take one data packet of the largest
/// size: otherwise every packet would be dropped (or trimmed) and resent
/// forever. In PFC mode the headroom must hold one packet and what the link
/// delivers in a round trip, or a PAUSE comes too late and "lossless" drops.
fn check_buffer(topo: &TopologySpec, s: &SwitchConfig, wire: &WireSizes, err: &ErrFn) -> Result<(), InputError> {
    let mut ports = vec![Vec::new(); topo.switches.len()];
    for l in &topo.links {
        for e in [l.a, l.b] {
            if let crate::net::topology::NodeRef::Switch(i) = e {
                ports[i as usize].push(l);
            }
        }
    }
    // The engine sizes the default headroom by payload and header only.
    let max_packet = wire.mtu + wire.header;
    let packet = wire.data();
    for (i, pl) in ports.iter().enumerate() {
        let name = &topo.switches[i].name;
        let headroom: u64 = if s.mode.headroom() {
            pl.iter()
                .map(|l| crate::net::pfc_headroom(s, l.rate.0, l.delay.0, max_packet))
                .max()
                .unwrap_or(0)
        } else {
            0
        };
        let need = (s.reserved.0 as u128 + headroom as u128) * pl.len() as u128;
        // Without PFC, reservations may take the whole buffer: fixed per-port
        // queues (htsim's model). PFC needs a shared pool to pause against.
        let no_shared_pool = if s.mode.headroom() { need >= s.buffer.0 as u128 } else { need > s.buffer.0 as u128 };
        if no_shared_pool {
            return Err(err(
                "switch.buffer",
                format!(
                    "switch \"{}\" has {} ports: {} bytes of buffer leave nothing to share after {} bytes of reservation{}",
                    name,
                    pl.len(),
                    s.buffer.0,
                    need,
                    if headroom > 0 { " and PFC headroom" } else { "" }
                ),
            ));
        }
        let shared = s.buffer.0 - need as u64;
        if s.mode.headroom() {
            for l in pl {
                let round_trip = crate::units::bytes_in(l.delay.0, l.rate.0).saturating_mul(2);
                if headroom < packet.saturating_add(round_trip) {
                    let given = if s.pfc.headroom.is_some() { "" } else { "the default " };
                    return Err(err(
                        "switch.pfc.headroom",
                        format!(
                            "{given}PFC headroom of {headroom} bytes at switch \"{name}\" is below one data packet ({packet} bytes) plus what its link to \"{}\" ({}, {}) delivers in a round trip ({round_trip} bytes): set it to at least {} bytes",
                            topo.node_name(if l.a == crate::net::topology::NodeRef::Switch(i as u32) { l.b } else { l.a }),
                            l.rate,
                            l.delay,
                            packet.saturating_add(round_trip)
                        ),
                    ));
                }
            }
        } else if packet > s.reserved.0 {
            // An empty egress queue takes a packet beyond its reservation if the
            // excess fits the free shared buffer and dt_alpha times it.
            let extra = packet - s.reserved.0;
            let limit = ((s.dt_alpha * shared as f64) as u64).min(shared);
            if extra > limit {
                let key = if extra <= shared { "switch.dt_alpha" } else { "switch.buffer" };
                return Err(err(
                    key,
                    format!(
                        "switch \"{name}\" cannot take one data packet of {packet} bytes ({}) even when empty: {} bytes are reserved per port and an egress queue may take at most {limit} of the {shared} shared bytes (dt_alpha {})",
                        wire.data_parts(),
                        s.reserved.0,
                        s.dt_alpha
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A switch port's control queue must hold the largest control packet: an
/// ACK (or NACK, or CNP), or in `trim` mode a trimmed packet. Otherwise every
/// one of them is dropped and the flows never finish.
fn check_ctrl_buffer(s: &SwitchConfig, wire: &WireSizes, err: &ErrFn) -> Result<(), InputError> {
    let cap = s.ctrl_buffer.0;
    if wire.ack() > cap {
        return Err(err(
            "switch.ctrl_buffer",
            format!(
                "ctrl_buffer ({cap} bytes) cannot hold one ACK of {} bytes (ack_size {} + CSIG tag {} + INT {}): every ACK would be dropped",
                wire.ack(),
                wire.ack_size,
                wire.tag,
                wire.int
            ),
        ));
    }
    if s.mode == SwitchMode::Trim && s.trim_size as u64 > cap {
        return Err(err(
            "switch.ctrl_buffer",
            format!("ctrl_buffer ({cap} bytes) cannot hold one trimmed packet (trim_size {} bytes): every trimmed packet would be dropped", s.trim_size),
        ));
    }
    Ok(())
}

/// The shortest `transport.rto`: shorter than any fabric's round trip.
pub const MIN_RTO: Time = Time(crate::units::PS_PER_US);
/// The shortest `monitor.window`.
pub const MIN_WINDOW: Time = Time(crate::units::PS_PER_NS);

/// Why a scenario does not fit the memory budget, driven by `what`.
fn over_memory(e: &crate::budget::Estimate, budget: &Budget, what: String) -> String {
    use crate::budget::fmt_bytes;
    format!(
        "the run would need about {} of memory ({}: {} for {} directed links and the packets their buffers hold, {} for {} flows of which {} in progress at once, {} of them packet bitmaps), more than the budget of {} (--max-memory)",
        fmt_bytes(e.bytes()),
        what,
        fmt_bytes(e.network_bytes()),
        e.ports,
        fmt_bytes(e.flow_bytes()),
        e.flows,
        e.states,
        fmt_bytes(e.bitmaps),
        fmt_bytes(budget.max_memory)
    )
}

/// The run's memory, estimated from its network and flows
/// ([`crate::budget::Estimate`]), in bytes, within the budget; over it, the
/// key that made the most flows (or the topology) is named.
fn check_memory(
    topology: &TopologySpec,
    workloads: &[crate::workload::Workload],
    makers: &[(String, u64)],
    (mtu, selective, switch_buffer): (u32, bool, u64),
    budget: &Budget,
    err: &ErrFn,
) -> Result<u64, InputError> {
    let (mut starts, mut bitmaps, mut flows) = (Vec::new(), Vec::new(), 0u64);
    // Selective retransmission keeps three bitmaps of a bit a packet a flow.
    let bitmap = |f: &FlowSpec| if selective { 3 * f.size.div_ceil(mtu as u64).div_ceil(64) * 8 } else { 0 };
    for w in workloads {
        w.for_each_flow(|_, f, waits| {
            if !waits {
                starts.push(f.start.0);
            }
            bitmaps.push(bitmap(f));
            flows += 1;
        });
    }
    let mut e = crate::budget::Estimate::new(2 * topology.links.len() as u64, flows, &mut starts).with_bitmaps(&mut bitmaps);
    // Packets in flight sit mostly in switch buffers: as many as they hold.
    e.buffered = (topology.switches.len() as u64).saturating_mul(switch_buffer / (mtu as u64).max(1));
    if e.bytes() <= budget.max_memory {
        return Ok(e.bytes());
    }
    if e.packet_bytes() >= e.flow_bytes() && e.packet_bytes() >= e.ports.saturating_mul(crate::budget::BYTES_PER_PORT) {
        return Err(err("switch.buffer", over_memory(&e, budget, format!("{} switches whose buffers hold {} packets of {mtu} bytes", topology.switches.len(), e.buffered))));
    }
    let (key, n) = makers.iter().max_by_key(|m| m.1).cloned().unwrap_or_else(|| ("topology".into(), 0));
    if e.network_bytes() >= e.flow_bytes() || n == 0 {
        return Err(err("topology", over_memory(&e, budget, format!("the network of {} hosts and {} links", topology.hosts.len(), topology.links.len()))));
    }
    Err(err(&key, over_memory(&e, budget, format!("{key} makes {n} flows"))))
}

/// A dense links.csv has a row per directed link per window up to the end of
/// the run, which is no earlier than the last flow's start plus its
/// transmission at the fastest link's rate (or `stop`): refuse a scenario
/// whose file would certainly pass the output budget.
fn check_link_rows(m: &crate::monitor::MonitorConfig, stop: Option<Time>, topology: &TopologySpec, workloads: &[crate::workload::Workload], budget: &Budget, err: &ErrFn) -> Result<(), InputError> {
    if !(m.links && m.idle_rows) {
        return Ok(());
    }
    let links = topology.links.len() as u64;
    let fastest = topology.links.iter().map(|l| l.rate.0).max().unwrap_or(1).max(1);
    let end_of = |f: &FlowSpec| f.start.0.saturating_add(crate::units::tx_time_ps(f.size, fastest));
    // The first flow of the latest end.
    let mut last: Option<(FlowId, u64)> = None;
    for w in workloads {
        w.for_each_flow(|id, f, _| {
            let e = end_of(f);
            if last.is_none_or(|(_, l)| e >= l) {
                last = Some((id, e));
            }
        });
    }
    let Some((i, last)) = last else { return Ok(()) };
    let end = last.min(stop.map_or(u64::MAX, |s| s.0));
    let rows = (end / m.window.0.max(1)).saturating_add(1).saturating_mul(2 * links);
    let bytes = rows.saturating_mul(crate::budget::LINK_ROW_BYTES);
    if bytes > budget.max_output {
        return Err(err(
            "monitor.window",
            format!(
                "links.csv would have at least {rows} rows ({} or more): a row per directed link ({}) per window of {} up to {} (flow {i} cannot end earlier), more than the output budget of {} (--max-output); set monitor.idle_rows = false to leave out idle windows, a coarser window, or monitor.links = false",
                crate::budget::fmt_bytes(bytes),
                2 * links,
                m.window,
                Time(end),
                crate::budget::fmt_bytes(budget.max_output)
            ),
        ));
    }
    Ok(())
}
