//! `csigsim sweep`: a base scenario crossed (or zipped) with axes of `--set`
//! values and seeds, each point run once into a directory named by a hash of
//! its resolved scenario.
//!
//! Points run as child `csigsim run` processes (one per point, up to
//! `workers` at once), so a point that crashes, runs out of memory or is
//! killed takes only itself down and can be retried; the child writes into
//! `tmp/` and the point is renamed into `points/<id>/` only once it has
//! finished. The directory layout and the point id are shared with the
//! Python `csigsim.sweep` (docs/sweeps.md).

use csigsim::InputError;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, VecDeque};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};
use toml_edit::{Item, Value};

/// What went wrong, for main's exit status.
pub enum Error {
    Input(InputError),
    Internal(String),
    /// Points failed; the report is already printed.
    Reported,
}

impl From<InputError> for Error {
    fn from(e: InputError) -> Self {
        Error::Input(e)
    }
}

/// Options of the command line that override the sweep file.
pub struct Options {
    pub out: Option<PathBuf>,
    pub workers: Option<usize>,
    pub retries: Option<u32>,
    pub status: bool,
    pub quiet: bool,
}

/// A parsed sweep file.
pub struct Sweep {
    pub file: PathBuf,
    pub name: String,
    pub scenario: PathBuf,
    pub out: PathBuf,
    pub seeds: Option<Vec<u64>>,
    pub set: Vec<(String, String)>,
    pub axes: Vec<Axis>,
    pub retries: u32,
    pub workers: usize,
    pub timeout: Option<Duration>,
    pub wrapper: Vec<String>,
}

pub struct Axis {
    pub key: String,
    /// Each value as TOML text (what `--set KEY=VALUE` takes).
    pub values: Vec<String>,
    pub group: String,
}

/// One point: its overrides, seed and id.
pub struct Point {
    pub id: String,
    pub seed: u64,
    /// (axis key, value as TOML text), in axis order.
    pub axes: Vec<(String, String)>,
    /// Every override, the fixed ones first: `KEY=VALUE`.
    pub overrides: Vec<String>,
}

/// The top-level keys of a sweep file.
const KEYS: [&str; 11] = ["scenario", "name", "out", "seeds", "mode", "retries", "workers", "timeout", "wrapper", "set", "axis"];
const AXIS_KEYS: [&str; 4] = ["key", "values", "range", "group"];

fn line_col(text: &str, span: Option<std::ops::Range<usize>>) -> Option<(usize, usize)> {
    span.map(|s| csigsim::scenario::error::line_col(text, s.start))
}

/// Parses a sweep file (relative paths in it are relative to the file).
pub fn parse(path: &Path, text: &str) -> Result<Sweep, InputError> {
    let file = path.display().to_string();
    let doc = toml_edit::Document::parse(text.to_string()).map_err(|e| {
        InputError::new(&file, None, line_col(text, e.span()), format!("TOML syntax error: {}", e.message().trim_end()))
    })?;
    let err = |key: &str, span: Option<std::ops::Range<usize>>, msg: String| InputError::new(&file, Some(key.to_string()), line_col(text, span), msg);
    let root = doc.as_table();
    for (k, _) in root.iter() {
        if !KEYS.contains(&k) {
            return Err(err(k, root.key(k).and_then(|k| k.span()), format!("unknown key; the keys of a sweep file are {}", KEYS.join(", "))));
        }
    }
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let string = |k: &str| -> Result<Option<String>, InputError> {
        match root.get(k) {
            None => Ok(None),
            Some(i) => i.as_str().map(|s| Some(s.to_string())).ok_or_else(|| err(k, i.span(), "expected a string".into())),
        }
    };
    let scenario = match string("scenario")? {
        Some(s) => dir.join(s),
        None => return Err(err("scenario", None, "missing: the path of the base scenario, relative to the sweep file".into())),
    };
    if !scenario.is_file() {
        return Err(err("scenario", root.get("scenario").and_then(Item::span), format!("no scenario file {}", scenario.display())));
    }
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "sweep".into());
    let name = string("name")?.unwrap_or_else(|| stem.clone());
    let out = string("out")?.map(PathBuf::from).unwrap_or_else(|| PathBuf::from("runs/sweeps").join(&stem));
    let count = |k: &str, max: i64| -> Result<Option<i64>, InputError> {
        match root.get(k) {
            None => Ok(None),
            Some(i) => match i.as_integer() {
                Some(n) if (0..=max).contains(&n) => Ok(Some(n)),
                _ => Err(err(k, i.span(), format!("expected an integer from 0 to {max}"))),
            },
        }
    };
    let retries = count("retries", 100)?.unwrap_or(1) as u32;
    let workers = count("workers", 4096)?.unwrap_or(0) as usize;
    let timeout = match root.get("timeout") {
        None => None,
        Some(i) => Some(i.as_str().and_then(parse_duration).ok_or_else(|| err("timeout", i.span(), "expected a duration such as \"90s\", \"30m\" or \"2h\"".into()))?),
    };
    let wrapper = match root.get("wrapper") {
        None => Vec::new(),
        Some(i) => {
            let bad = || err("wrapper", i.span(), "expected a non-empty list of strings: the command and its arguments".into());
            let a = i.as_array().ok_or_else(bad)?;
            let w: Option<Vec<String>> = a.iter().map(|v| v.as_str().map(String::from)).collect();
            w.filter(|w| !w.is_empty()).ok_or_else(bad)?
        }
    };
    let seeds = match root.get("seeds") {
        None => None,
        Some(i) => Some(seeds(i).map_err(|m| err("seeds", i.span(), m))?),
    };
    let zip_all = match string("mode")?.as_deref() {
        None | Some("cross") => false,
        Some("zip") => true,
        Some(m) => return Err(err("mode", root.get("mode").and_then(Item::span), format!("unknown mode \"{m}\": cross or zip"))),
    };
    let mut set = Vec::new();
    if let Some(i) = root.get("set") {
        let t = i.as_table_like().ok_or_else(|| err("set", i.span(), "expected a table of KEY = VALUE overrides".into()))?;
        flatten(t, "", &mut set);
    }
    let mut axes: Vec<Axis> = Vec::new();
    if let Some(i) = root.get("axis") {
        let arr = i.as_array_of_tables().ok_or_else(|| err("axis", i.span(), "expected [[axis]] tables".into()))?;
        for (n, t) in arr.iter().enumerate() {
            let at = |k: &str| format!("axis[{n}].{k}");
            for (k, _) in t.iter() {
                if !AXIS_KEYS.contains(&k) {
                    return Err(err(&at(k), t.key(k).and_then(|k| k.span()), format!("unknown key; the keys of an axis are {}", AXIS_KEYS.join(", "))));
                }
            }
            let key = match t.get("key") {
                Some(k) => k.as_str().filter(|s| !s.trim().is_empty()).ok_or_else(|| err(&at("key"), k.span(), "expected a scenario key such as \"transport.cc\"".into()))?,
                None => return Err(err(&at("key"), t.span(), "missing: the scenario key this axis sets (any key --set takes)".into())),
            };
            if key.trim() == "seed" {
                return Err(err(&at("key"), t.get("key").and_then(Item::span), "the seed is swept with the top-level `seeds` key".into()));
            }
            if let Some(j) = axes.iter().position(|a| a.key == key.trim()) {
                return Err(err(&at("key"), t.get("key").and_then(Item::span), format!("axis[{j}] already sweeps \"{key}\"")));
            }
            let values = match (t.get("values"), t.get("range")) {
                (Some(v), None) => {
                    let a = v.as_array().filter(|a| !a.is_empty()).ok_or_else(|| err(&at("values"), v.span(), "expected a non-empty list of values".into()))?;
                    a.iter().map(value_text).collect()
                }
                (None, Some(r)) => range(r).map_err(|(k, m)| err(&at(&format!("range{k}")), r.span(), m))?,
                (Some(v), Some(_)) => return Err(err(&at("values"), v.span(), "give either values or range, not both".into())),
                (None, None) => return Err(err(&at("values"), t.span(), "missing: give values = [...] or range = { start, stop, step | count }".into())),
            };
            let group = match t.get("group") {
                _ if zip_all => "zip".to_string(),
                None => format!("\0{n}"),
                Some(g) => g.as_str().map(String::from).ok_or_else(|| err(&at("group"), g.span(), "expected a string: axes with the same group are zipped".into()))?,
            };
            if let Some(other) = axes.iter().find(|a| a.group == group && a.values.len() != values.len()) {
                return Err(err(
                    &at("values"),
                    t.span(),
                    format!("zipped with \"{}\" ({} values) but has {} values: zipped axes need as many values each", other.key, other.values.len(), values.len()),
                ));
            }
            axes.push(Axis { key: key.trim().to_string(), values, group });
        }
    }
    Ok(Sweep { file: path.to_path_buf(), name, scenario, out, seeds, set, axes, retries, workers, timeout, wrapper })
}

/// `[set]` with nested tables read as dotted keys.
fn flatten(t: &dyn toml_edit::TableLike, prefix: &str, out: &mut Vec<(String, String)>) {
    for (k, item) in t.iter() {
        let key = if prefix.is_empty() { k.to_string() } else { format!("{prefix}.{k}") };
        match item {
            Item::Table(sub) => flatten(sub, &key, out),
            Item::Value(Value::InlineTable(sub)) => flatten(sub, &key, out),
            Item::Value(v) => out.push((key, value_text(v))),
            _ => {}
        }
    }
}

/// A value as TOML text, without the file's comments and spacing.
fn value_text(v: &Value) -> String {
    let mut v = v.clone();
    v.decor_mut().clear();
    v.to_string()
}

fn seeds(i: &Item) -> Result<Vec<u64>, String> {
    const BAD: &str = "expected a list of seeds [1, 2, 3] or { start = 1, count = 3 }";
    let seed = |v: &Value| v.as_integer().filter(|&n| n >= 0).map(|n| n as u64);
    if let Some(a) = i.as_array() {
        let s: Option<Vec<u64>> = a.iter().map(seed).collect();
        let s = s.filter(|s| !s.is_empty()).ok_or(BAD)?;
        if let Some(d) = s.iter().enumerate().find(|(n, x)| s[..*n].contains(x)) {
            return Err(format!("seed {} is listed twice", d.1));
        }
        return Ok(s);
    }
    let t = i.as_table_like().ok_or(BAD)?;
    if t.iter().any(|(k, _)| k != "start" && k != "count") {
        return Err(BAD.into());
    }
    let start = t.get("start").and_then(|v| v.as_value()).and_then(seed).ok_or(BAD)?;
    let count = t.get("count").and_then(|v| v.as_value()).and_then(seed).filter(|&c| (1..=1_000_000).contains(&c)).ok_or("count must be from 1 to 1000000")?;
    Ok((0..count).map(|n| start.wrapping_add(n)).collect())
}

/// `range = { start, stop, step }` (stop included when reached) or
/// `{ start, stop, count }` (evenly spaced, both ends included). Integers
/// stay integers when start, stop and step are integers.
fn range(i: &Item) -> Result<Vec<String>, (String, String)> {
    let bad = |k: &str, m: &str| (k.to_string(), m.to_string());
    let t = i.as_table_like().ok_or_else(|| bad("", "expected { start, stop, step } or { start, stop, count }"))?;
    for (k, _) in t.iter() {
        if !["start", "stop", "step", "count"].contains(&k) {
            return Err(bad(&format!(".{k}"), "unknown key; a range has start, stop and step or count"));
        }
    }
    let num = |k: &str| -> Result<(f64, Option<i64>), (String, String)> {
        let v = t.get(k).and_then(|v| v.as_value()).ok_or_else(|| bad(&format!(".{k}"), "missing number"))?;
        match (v.as_integer(), v.as_float()) {
            (Some(n), _) => Ok((n as f64, Some(n))),
            (_, Some(f)) if f.is_finite() => Ok((f, None)),
            _ => Err(bad(&format!(".{k}"), "expected a finite number")),
        }
    };
    let (start, stop) = (num("start")?, num("stop")?);
    const MAX: usize = 1_000_000;
    match (t.get("step"), t.get("count")) {
        (Some(_), None) => {
            let step = num("step")?;
            if step.0 == 0.0 || (stop.0 - start.0) * step.0 < 0.0 {
                return Err(bad(".step", "step must be non-zero and go from start towards stop"));
            }
            if let (Some(a), Some(b), Some(s)) = (start.1, stop.1, step.1) {
                let n = (b - a) / s + 1;
                if n as usize > MAX {
                    return Err(bad(".step", "more than a million values"));
                }
                return Ok((0..n).map(|k| (a + k * s).to_string()).collect());
            }
            // A small tolerance so that 0.1-steps reach their stop.
            let n = ((stop.0 - start.0) / step.0 + 1e-9).floor() + 1.0;
            if n > MAX as f64 {
                return Err(bad(".step", "more than a million values"));
            }
            Ok((0..n as i64).map(|k| float_text(start.0 + k as f64 * step.0)).collect())
        }
        (None, Some(c)) => {
            let n = c.as_integer().filter(|&n| (1..=MAX as i64).contains(&n)).ok_or_else(|| bad(".count", "count must be from 1 to 1000000"))?;
            if n == 1 {
                return Ok(vec![float_text(start.0)]);
            }
            Ok((0..n).map(|k| float_text(start.0 + k as f64 * (stop.0 - start.0) / (n - 1) as f64)).collect())
        }
        _ => Err(bad("", "give exactly one of step and count")),
    }
}

/// A float as TOML text that reads back to the same value.
fn float_text(f: f64) -> String {
    Value::from(f).to_string().trim().to_string()
}

/// "90s", "30m", "2h", "1h30m" is not accepted; plain seconds too ("45").
fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    let (num, mult) = if let Some(n) = s.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = s.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (s, 1.0)
    };
    let v: f64 = num.trim().parse().ok()?;
    (v > 0.0 && v.is_finite()).then(|| Duration::from_secs_f64(v * mult))
}

impl Sweep {
    /// The points in order: axis groups crossed (the last varies fastest), seeds innermost.
    pub fn points(&self) -> Result<Vec<Point>, InputError> {
        let seeds = match &self.seeds {
            Some(s) => s.clone(),
            None => vec![csigsim::scenario::load_file(&self.scenario, &self.overrides(&[])?, None)?.seed],
        };
        let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
        for (n, a) in self.axes.iter().enumerate() {
            match groups.iter_mut().find(|g| g.0 == a.group) {
                Some(g) => g.1.push(n),
                None => groups.push((a.group.clone(), vec![n])),
            }
        }
        let sizes: Vec<usize> = groups.iter().map(|g| self.axes[g.1[0]].values.len()).collect();
        let combos: usize = sizes.iter().product();
        if combos.saturating_mul(seeds.len()) > 1_000_000 {
            return Err(InputError::new(self.file.display().to_string(), Some("axis".into()), None, "the sweep has more than a million points"));
        }
        let mut points = Vec::with_capacity(combos * seeds.len());
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for c in 0..combos {
            // Mixed-radix digits of c, the last group fastest.
            let mut rest = c;
            let mut pick = vec![0; groups.len()];
            for g in (0..groups.len()).rev() {
                pick[g] = rest % sizes[g];
                rest /= sizes[g];
            }
            let mut axes: Vec<(String, String)> = Vec::new();
            for (g, (_, members)) in groups.iter().enumerate() {
                for &a in members {
                    axes.push((self.axes[a].key.clone(), self.axes[a].values[pick[g]].clone()));
                }
            }
            // Back to axis order, whatever the grouping.
            axes.sort_by_key(|(k, _)| self.axes.iter().position(|a| &a.key == k));
            for &seed in &seeds {
                let overrides = self.overrides(&axes)?;
                let described = || {
                    let mut d: Vec<String> = axes.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    d.push(format!("seed={seed}"));
                    d.join(" ")
                };
                let sc = csigsim::scenario::load_file(&self.scenario, &overrides, Some(seed))
                    .map_err(|e| InputError { msg: format!("{} (in sweep {}, point {})", e.msg, self.file.display(), described()), ..e })?;
                let id = point_id(&sc.resolved_toml, self.scenario.parent().unwrap_or(Path::new("")));
                if let Some(&other) = seen.get(&id) {
                    return Err(InputError::new(
                        self.file.display().to_string(),
                        Some("axis".into()),
                        None,
                        format!("point {} ({}) resolves to the same scenario as point {other}: a value is listed twice", points.len(), described()),
                    ));
                }
                seen.insert(id.clone(), points.len());
                let overrides = overrides.iter().map(|o| format!("{}={}", o.key, o.value)).collect();
                points.push(Point { id, seed, axes: axes.clone(), overrides });
            }
        }
        Ok(points)
    }

    fn overrides(&self, axes: &[(String, String)]) -> Result<Vec<csigsim::Override>, InputError> {
        let fixed = self.set.iter().filter(|(k, _)| !axes.iter().any(|a| &a.0 == k));
        fixed
            .chain(axes.iter())
            .map(|(k, v)| {
                csigsim::Override::parse(&format!("{k}={v}"))
                    .map_err(|e| InputError::new(self.file.display().to_string(), Some(k.clone()), None, e.msg))
            })
            .collect()
    }
}

// --- The point id ---------------------------------------------------------
//
// sha256 over a canonical form of the resolved scenario: tables with their
// keys sorted, every value tagged with its type, floats by their bits, and
// every string that names a regular file (relative to the scenario's
// directory) followed by the sha256 of that file's contents. Comments,
// spacing and key order do not change the id; a changed trace file does.
// python/csigsim/sweep.py computes the same bytes.

const ID_VERSION: &[u8] = b"csigsim sweep point 1\n";

pub fn point_id(resolved_toml: &str, base: &Path) -> String {
    let mut h = Sha256::new();
    h.update(ID_VERSION);
    // The engine has already parsed this text; a failure here cannot happen
    // short of an engine bug, and then the raw text still gives a stable id.
    match resolved_toml.parse::<toml::Table>() {
        Ok(t) => canon_table(&t, base, &mut h),
        Err(_) => h.update(resolved_toml.as_bytes()),
    }
    let d = h.finalize();
    d.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

fn canon_str(s: &str, h: &mut Sha256) {
    h.update(format!("{}:", s.len()).as_bytes());
    h.update(s.as_bytes());
}

fn canon_table(t: &toml::Table, base: &Path, h: &mut Sha256) {
    let mut keys: Vec<&String> = t.keys().collect();
    keys.sort();
    h.update(b"{");
    for k in keys {
        canon_str(k, h);
        canon(&t[k], base, h);
    }
    h.update(b"}");
}

fn canon(v: &toml::Value, base: &Path, h: &mut Sha256) {
    match v {
        toml::Value::String(s) => {
            h.update(b"s");
            canon_str(s, h);
            let p = base.join(s);
            if !s.is_empty() && std::fs::metadata(&p).is_ok_and(|m| m.is_file()) {
                if let Ok(bytes) = std::fs::read(&p) {
                    let d = Sha256::digest(&bytes);
                    h.update(b"#");
                    h.update(d.iter().map(|b| format!("{b:02x}")).collect::<String>().as_bytes());
                }
            }
        }
        toml::Value::Integer(i) => h.update(format!("i{i};").as_bytes()),
        toml::Value::Float(f) => h.update(format!("f{:016x};", f.to_bits()).as_bytes()),
        toml::Value::Boolean(b) => h.update(if *b { b"b1" } else { b"b0" }),
        toml::Value::Datetime(d) => {
            h.update(b"d");
            canon_str(&d.to_string(), h);
        }
        toml::Value::Array(a) => {
            h.update(b"[");
            for x in a {
                canon(x, base, h);
            }
            h.update(b"]");
        }
        toml::Value::Table(t) => canon_table(t, base, h),
    }
}

// --- The sweep directory ----------------------------------------------------

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|s| s.trim().to_string()).unwrap_or_else(|_| "localhost".into())
}

#[cfg(unix)]
fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid as libc::pid_t, 0) == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM) }
}

#[cfg(not(unix))]
fn alive(_pid: u32) -> bool {
    true
}

/// A point's process dies with the sweep: on Linux it gets SIGTERM when the
/// thread that started it ends, which it outlives only if the sweep is
/// killed (each worker thread waits for its child). SIGTERM rather than
/// SIGKILL so that a `wrapper` (`timeout`, `nice`) passes it on; the run
/// itself ends on it. A driver that died before the child got here is
/// noticed by the parent process id having changed.
#[cfg(target_os = "linux")]
fn die_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: getpid before the fork; prctl, getppid and raise are
    // async-signal-safe, as the code between fork and exec must be.
    let parent = unsafe { libc::getpid() };
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                libc::raise(libc::SIGTERM);
            }
            Ok(())
        });
    }
}

/// Elsewhere the points outlive a killed sweep; the next sweep's clean-up
/// removes what they leave.
#[cfg(not(target_os = "linux"))]
fn die_with_parent(_: &mut Command) {}

/// Whether a temporary point directory belongs to a live sweep.
fn owner_alive(tmp: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(tmp.join("owner.json")) else { return false };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else { return false };
    if v["host"].as_str() != Some(hostname().as_str()) {
        return true; // another machine's: cannot tell, so assume it runs
    }
    v["pid"].as_u64().is_some_and(|p| alive(p as u32))
}

/// The state of every point: complete, running (a live temporary directory), failed or pending.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum State {
    Done,
    Running,
    Failed,
    Pending,
}

fn tmp_owner_id(name: &str) -> &str {
    name.split('.').next().unwrap_or(name)
}

pub fn states(out: &Path, points: &[Point]) -> Vec<State> {
    let mut running = std::collections::BTreeSet::new();
    if let Ok(rd) = std::fs::read_dir(out.join("tmp")) {
        for e in rd.flatten() {
            if owner_alive(&e.path()) {
                running.insert(tmp_owner_id(&e.file_name().to_string_lossy()).to_string());
            }
        }
    }
    points
        .iter()
        .map(|p| {
            if out.join("points").join(&p.id).join("summary.json").is_file() {
                State::Done
            } else if running.contains(&p.id) {
                State::Running
            } else if out.join("failed").join(format!("{}.json", p.id)).is_file() {
                State::Failed
            } else {
                State::Pending
            }
        })
        .collect()
}

fn failures(out: &Path, id: &str) -> Vec<serde_json::Value> {
    std::fs::read_to_string(out.join("failed").join(format!("{id}.json")))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v["attempts"].as_array().cloned())
        .unwrap_or_default()
}

fn axes_json(p: &Point) -> serde_json::Value {
    let m: serde_json::Map<String, serde_json::Value> = p.axes.iter().map(|(k, v)| (k.clone(), toml_to_json(v))).collect();
    serde_json::Value::Object(m)
}

/// An axis value (TOML text) as JSON.
fn toml_to_json(v: &str) -> serde_json::Value {
    match format!("v = {v}").parse::<toml::Table>() {
        Ok(t) => serde_json::to_value(&t["v"]).unwrap_or(serde_json::Value::String(v.to_string())),
        Err(_) => serde_json::Value::String(v.to_string()),
    }
}

/// sweep.json: the sweep and its points, for `--status`, the table and Python.
fn write_index(s: &Sweep, points: &[Point]) -> std::io::Result<()> {
    let v = serde_json::json!({
        "name": s.name,
        "scenario": s.scenario.display().to_string(),
        "axes": s.axes.iter().map(|a| a.key.clone()).collect::<Vec<_>>(),
        "points": points.iter().map(|p| serde_json::json!({"id": p.id, "seed": p.seed, "axes": axes_json(p), "overrides": p.overrides})).collect::<Vec<_>>(),
    });
    write_atomic(&s.out.join("sweep.json"), format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default()).as_bytes())
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// Removes temporary directories left by sweeps that are no longer running.
fn clean_stale(out: &Path) {
    if let Ok(rd) = std::fs::read_dir(out.join("tmp")) {
        for e in rd.flatten() {
            if !owner_alive(&e.path()) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
}

// --- Running ------------------------------------------------------------------

enum Outcome {
    Done { wall_s: f64 },
    Failed { reason: String, retry: bool },
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        6 => "SIGABRT",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        15 => "SIGTERM",
        _ => "signal",
    }
}

fn now_s() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

struct Runner<'a> {
    sweep: &'a Sweep,
    exe: PathBuf,
    host: String,
}

impl Runner<'_> {
    fn attempt(&self, p: &Point, attempt: u32) -> Outcome {
        let out = &self.sweep.out;
        let tmp = out.join("tmp").join(format!("{}.{attempt}.{}", p.id, std::process::id()));
        let fail = |reason: String| Outcome::Failed { reason, retry: true };
        let _ = std::fs::remove_dir_all(&tmp);
        if let Err(e) = std::fs::create_dir_all(&tmp) {
            return fail(format!("cannot create {}: {e}", tmp.display()));
        }
        let owner = serde_json::json!({"host": self.host, "pid": std::process::id(), "attempt": attempt, "started": now_s()});
        let _ = std::fs::write(tmp.join("owner.json"), owner.to_string());
        let log = match std::fs::File::create(tmp.join("stderr.log")) {
            Ok(f) => f,
            Err(e) => return fail(format!("cannot create the log: {e}")),
        };
        let mut cmd = match self.sweep.wrapper.split_first() {
            Some((first, rest)) => {
                let mut c = Command::new(first);
                c.args(rest).arg(&self.exe);
                c
            }
            None => Command::new(&self.exe),
        };
        // The run directory inside the temporary one, beside owner.json and
        // stderr.log (a run directory holds only a run's files).
        let run_dir = tmp.join("run");
        cmd.arg("run").arg(&self.sweep.scenario).arg("--quiet").arg("--seed").arg(p.seed.to_string()).arg("--out").arg(&run_dir);
        for o in &p.overrides {
            cmd.arg("--set").arg(o);
        }
        cmd.env("CSIGSIM_SWEEP_POINT", &p.id).env("CSIGSIM_SWEEP_ATTEMPT", attempt.to_string());
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(log);
        die_with_parent(&mut cmd);
        let started = Instant::now();
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => return Outcome::Failed { reason: format!("cannot start {:?}: {e}", cmd.get_program()), retry: false },
        };
        let mut timed_out = false;
        let status = match self.sweep.timeout {
            None => child.wait(),
            Some(limit) => {
                // Short points are common: look again soon, then less often.
                let mut nap = Duration::from_micros(500);
                loop {
                    match child.try_wait() {
                        Ok(Some(s)) => break Ok(s),
                        Ok(None) => {}
                        Err(e) => break Err(e),
                    }
                    if started.elapsed() > limit && !timed_out {
                        timed_out = true;
                        let _ = child.kill();
                    }
                    std::thread::sleep(nap);
                    nap = (nap * 2).min(Duration::from_millis(50));
                }
            }
        };
        let wall_s = started.elapsed().as_secs_f64();
        let stderr = std::fs::read_to_string(tmp.join("stderr.log")).unwrap_or_default();
        let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
        let outcome = match status {
            Err(e) => fail(format!("lost the point's process: {e}")),
            Ok(_) if timed_out => fail(format!("time limit of {} exceeded (killed)", fmt_duration(self.sweep.timeout.unwrap_or_default()))),
            // Exit 1 with a summary: the run finished but stalled or broke an
            // invariant; that is its (deterministic) result, shown in the table.
            Ok(s) if (s.success() || s.code() == Some(1)) && run_dir.join("summary.json").is_file() => Outcome::Done { wall_s },
            Ok(s) if s.code() == Some(2) => Outcome::Failed { reason: format!("bad input: {last}"), retry: false },
            Ok(s) => match (s.code(), exit_signal(&s)) {
                (_, Some(sig)) => fail(format!("killed by signal {sig} ({})", signal_name(sig))),
                (Some(c), _) => fail(format!("exit status {c}{}", if last.is_empty() { String::new() } else { format!(": {last}") })),
                _ => fail("ended without a status".into()),
            },
        };
        let mut attempts = failures(out, &p.id);
        match &outcome {
            Outcome::Done { wall_s } => {
                attempts.push(serde_json::json!({"attempt": attempt, "status": "done", "host": self.host, "wall_s": wall_s, "finished": now_s()}));
                let point = serde_json::json!({
                    "id": p.id, "seed": p.seed, "axes": axes_json(p), "overrides": p.overrides,
                    "scenario": self.sweep.scenario.display().to_string(), "version": csigsim::VERSION, "attempts": attempts,
                });
                let mut written = match stderr.is_empty() {
                    true => Ok(()),
                    false => std::fs::rename(tmp.join("stderr.log"), run_dir.join("stderr.log")),
                };
                let dest = out.join("points").join(&p.id);
                written = written.and_then(|_| std::fs::write(run_dir.join("point.json"), format!("{}\n", serde_json::to_string_pretty(&point).unwrap_or_default())));
                // A complete directory appears in one rename; another sweep
                // that finished the same point first keeps its copy.
                let moved = written.and_then(|_| std::fs::rename(&run_dir, &dest));
                let _ = std::fs::remove_dir_all(&tmp);
                if let Err(e) = moved {
                    if !dest.join("summary.json").is_file() {
                        return self.record_failure(p, attempt, attempts, format!("cannot move the run into {}: {e}", dest.display()), true);
                    }
                }
                let _ = std::fs::remove_file(out.join("failed").join(format!("{}.json", p.id)));
                outcome
            }
            Outcome::Failed { reason, retry } => {
                let _ = std::fs::remove_dir_all(&tmp);
                let (reason, retry) = (reason.clone(), *retry);
                let mut attempts = attempts;
                let tail: Vec<&str> = stderr.lines().rev().take(20).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                attempts.push(serde_json::json!({
                    "attempt": attempt, "status": "failed", "reason": reason, "host": self.host, "wall_s": wall_s,
                    "finished": now_s(), "stderr_tail": tail.join("\n"),
                }));
                self.write_failed(p, &attempts);
                Outcome::Failed { reason, retry }
            }
        }
    }

    fn record_failure(&self, p: &Point, attempt: u32, mut attempts: Vec<serde_json::Value>, reason: String, retry: bool) -> Outcome {
        attempts.pop();
        attempts.push(serde_json::json!({"attempt": attempt, "status": "failed", "reason": reason, "host": self.host, "finished": now_s()}));
        self.write_failed(p, &attempts);
        Outcome::Failed { reason, retry }
    }

    fn write_failed(&self, p: &Point, attempts: &[serde_json::Value]) {
        let v = serde_json::json!({"id": p.id, "seed": p.seed, "axes": axes_json(p), "attempts": attempts});
        let _ = write_atomic(&self.sweep.out.join("failed").join(format!("{}.json", p.id)), v.to_string().as_bytes());
    }
}

#[cfg(unix)]
fn exit_signal(s: &std::process::ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(s)
}

#[cfg(not(unix))]
fn exit_signal(_: &std::process::ExitStatus) -> Option<i32> {
    None
}

fn fmt_duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 3600.0 && s % 3600.0 == 0.0 {
        format!("{}h", s / 3600.0)
    } else if s >= 60.0 && s % 60.0 == 0.0 {
        format!("{}m", s / 60.0)
    } else {
        format!("{s}s")
    }
}

fn describe(p: &Point) -> String {
    let mut d: Vec<String> = p.axes.iter().map(|(k, v)| format!("{k}={v}")).collect();
    d.push(format!("seed={}", p.seed));
    d.join(" ")
}

/// The work queue: points still to run and the number not yet settled.
struct Queue {
    todo: VecDeque<(usize, u32)>,
    unsettled: usize,
}

enum Event {
    Done(usize, f64),
    Failed(usize, String, bool),
}

pub fn cmd(path: &Path, opts: Options) -> Result<(), Error> {
    let text = std::fs::read_to_string(path).map_err(|e| InputError::new(path.display().to_string(), None, None, format!("cannot read the file: {e}")))?;
    let mut sweep = parse(path, &text)?;
    if let Some(o) = opts.out {
        sweep.out = o;
    }
    if let Some(w) = opts.workers {
        sweep.workers = w;
    }
    if let Some(r) = opts.retries {
        sweep.retries = r;
    }
    if sweep.workers == 0 {
        sweep.workers = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    }
    let points = sweep.points()?;
    if opts.status {
        print_status(&sweep, &points);
        return Ok(());
    }
    if sweep.out.is_file() {
        return Err(Error::Input(InputError::new(path.display().to_string(), Some("out".into()), None, format!("{} is an existing file", sweep.out.display()))));
    }
    for d in ["points", "tmp", "failed"] {
        std::fs::create_dir_all(sweep.out.join(d)).map_err(|e| Error::Internal(format!("cannot create {}: {e}", sweep.out.join(d).display())))?;
    }
    clean_stale(&sweep.out);
    write_index(&sweep, &points).map_err(|e| Error::Internal(format!("cannot write sweep.json: {e}")))?;
    let states = states(&sweep.out, &points);
    let already = states.iter().filter(|s| **s == State::Done).count();
    // Another live sweep on this directory owns its running points.
    let todo: VecDeque<(usize, u32)> = states
        .iter()
        .enumerate()
        .filter(|(_, s)| **s == State::Failed || **s == State::Pending)
        .map(|(i, _)| (i, failures(&sweep.out, &points[i].id).len() as u32 + 1))
        .collect();
    let to_run = todo.len();
    let exe = std::env::current_exe().map_err(|e| Error::Internal(format!("cannot find the csigsim executable: {e}")))?;
    let runner = Runner { sweep: &sweep, exe, host: hostname() };
    let bar = (!opts.quiet && std::io::stderr().is_terminal()).then(|| {
        let b = ProgressBar::with_draw_target(Some(points.len() as u64), ProgressDrawTarget::stderr());
        b.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} points | {msg} | {elapsed} elapsed, ETA {eta}").expect("template"),
        );
        b.set_position(already as u64);
        b.reset_eta();
        b
    });
    if !opts.quiet {
        let plan = if to_run == 0 { "nothing to run".to_string() } else { format!("{to_run} to run on {} workers", sweep.workers.min(to_run)) };
        eprintln!("sweep {}: {} points, {already} already done, {plan} -> {}", sweep.name, points.len(), sweep.out.display());
    }
    let queue = Mutex::new(Queue { todo, unsettled: to_run });
    let wake = Condvar::new();
    let (tx, rx) = std::sync::mpsc::channel::<Event>();
    let retries = sweep.retries;
    let first_attempt: Vec<u32> = (0..points.len()).map(|i| failures(&sweep.out, &points[i].id).len() as u32 + 1).collect();
    let started = Instant::now();
    let (mut ran, mut failed_now) = (0usize, Vec::new());
    std::thread::scope(|s| {
        for _ in 0..sweep.workers.min(to_run) {
            let tx = tx.clone();
            let (queue, wake, runner, points, first_attempt) = (&queue, &wake, &runner, &points, &first_attempt);
            s.spawn(move || loop {
                let job = {
                    let mut q = queue.lock().unwrap_or_else(|e| e.into_inner());
                    loop {
                        if let Some(j) = q.todo.pop_front() {
                            break Some(j);
                        }
                        if q.unsettled == 0 {
                            break None;
                        }
                        q = wake.wait(q).unwrap_or_else(|e| e.into_inner());
                    }
                };
                let Some((i, attempt)) = job else { return };
                let outcome = runner.attempt(&points[i], attempt);
                let mut q = queue.lock().unwrap_or_else(|e| e.into_inner());
                match outcome {
                    Outcome::Done { wall_s } => {
                        q.unsettled -= 1;
                        let _ = tx.send(Event::Done(i, wall_s));
                    }
                    Outcome::Failed { reason, retry } => {
                        let again = retry && attempt < first_attempt[i] + retries;
                        if again {
                            q.todo.push_back((i, attempt + 1));
                        } else {
                            q.unsettled -= 1;
                        }
                        let _ = tx.send(Event::Failed(i, reason, again));
                    }
                }
                wake.notify_all();
            });
        }
        drop(tx);
        let mut done = already;
        for ev in rx {
            match ev {
                Event::Done(i, wall_s) => {
                    done += 1;
                    ran += 1;
                    failed_now.retain(|&(j, _)| j != i);
                    if let Some(b) = &bar {
                        b.set_position(done as u64);
                    } else if !opts.quiet {
                        eprintln!("[{done}/{}] {} done in {wall_s:.2} s: {}", points.len(), points[i].id, describe(&points[i]));
                    }
                }
                Event::Failed(i, reason, again) => {
                    let line = format!("{} failed: {reason} ({}){}", points[i].id, describe(&points[i]), if again { "; retrying" } else { "" });
                    match &bar {
                        Some(b) => b.println(line),
                        None if !opts.quiet => eprintln!("{line}"),
                        None => {}
                    }
                    if !again {
                        failed_now.push((i, reason));
                    }
                }
            }
            if let Some(b) = &bar {
                b.set_message(format!("{} failed", failed_now.len()));
            }
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let table = write_table(&sweep.out, &points).map_err(|e| Error::Internal(format!("cannot write results.csv: {e}")))?;
    let wall = started.elapsed().as_secs_f64();
    if !opts.quiet {
        println!(
            "{}: {} points: {already} already done, {ran} run, {} failed in {wall:.2} s; table {}",
            sweep.name,
            points.len(),
            failed_now.len(),
            table.display()
        );
    }
    if !failed_now.is_empty() {
        for (i, reason) in &failed_now {
            eprintln!("failed {} ({}): {reason}", points[*i].id, describe(&points[*i]));
        }
        return Err(Error::Reported);
    }
    Ok(())
}

fn print_status(sweep: &Sweep, points: &[Point]) {
    let st = states(&sweep.out, points);
    let n = |s: State| st.iter().filter(|x| **x == s).count();
    println!("sweep {}: {} points in {}", sweep.name, points.len(), sweep.out.display());
    println!("  done     {}", n(State::Done));
    println!("  running  {}", n(State::Running));
    println!("  failed   {}", n(State::Failed));
    println!("  pending  {}", n(State::Pending));
    for (p, s) in points.iter().zip(&st) {
        if *s == State::Failed {
            let a = failures(&sweep.out, &p.id);
            let last = a.last().cloned().unwrap_or_default();
            println!(
                "  failed {} ({}): attempt {}: {}",
                p.id,
                describe(p),
                last["attempt"].as_u64().unwrap_or(0),
                last["reason"].as_str().unwrap_or("?")
            );
        }
    }
}

/// results.csv: one row per complete point in sweep order: id, seed, the
/// axes, then the scalar figures of its summary.json.
fn write_table(out: &Path, points: &[Point]) -> std::io::Result<PathBuf> {
    let mut rows = Vec::new();
    let mut cols: Vec<String> = Vec::new();
    for p in points {
        let Ok(text) = std::fs::read_to_string(out.join("points").join(&p.id).join("summary.json")) else { continue };
        let Ok(serde_json::Value::Object(m)) = serde_json::from_str::<serde_json::Value>(&text) else { continue };
        for (k, v) in &m {
            if !(v.is_object() || v.is_array() || cols.contains(k)) {
                cols.push(k.clone());
            }
        }
        rows.push((p, m));
    }
    let path = out.join("results.csv");
    let tmp = out.join("results.csv.tmp");
    let mut w = csv::Writer::from_path(&tmp)?;
    let axes: Vec<&String> = points.first().map(|p| p.axes.iter().map(|a| &a.0).collect()).unwrap_or_default();
    let mut header = vec!["id".to_string(), "seed".to_string()];
    header.extend(axes.iter().map(|a| a.to_string()));
    header.extend(cols.iter().filter(|c| *c != "seed").cloned());
    w.write_record(&header)?;
    for (p, m) in rows {
        let mut rec = vec![p.id.clone(), p.seed.to_string()];
        rec.extend(p.axes.iter().map(|(_, v)| match toml_to_json(v) {
            serde_json::Value::String(s) => s,
            j => j.to_string(),
        }));
        for c in cols.iter().filter(|c| *c != "seed") {
            rec.push(match m.get(c) {
                None | Some(serde_json::Value::Null) => String::new(),
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(v) => v.to_string(),
            });
        }
        w.write_record(&rec)?;
    }
    w.flush()?;
    drop(w);
    std::fs::rename(&tmp, &path)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep(text: &str) -> Result<Sweep, InputError> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/sweeps");
        parse(&dir.join("t.toml"), text)
    }

    #[test]
    fn ranges_include_their_stop() {
        let s = sweep("scenario = \"../two_hosts.toml\"\n[[axis]]\nkey = \"a\"\nrange = { start = 0.1, stop = 0.5, step = 0.1 }\n[[axis]]\nkey = \"b\"\nrange = { start = 2, stop = 10, step = 4 }\n[[axis]]\nkey = \"c\"\nrange = { start = 0, stop = 1, count = 3 }\n").ok().unwrap();
        assert_eq!(s.axes[0].values.len(), 5);
        assert_eq!(s.axes[1].values, ["2", "6", "10"]);
        assert_eq!(s.axes[2].values, ["0.0", "0.5", "1.0"]);
    }

    #[test]
    fn the_id_ignores_formatting_and_key_order_but_not_values() {
        let base = Path::new(".");
        let a = point_id("seed = 1\n[transport]\ncc = \"none\"\nmtu = 4096\n", base);
        let b = point_id("# comment\nseed=1\n[transport]\nmtu = 4096\ncc = 'none'\n", base);
        let c = point_id("seed = 1\n[transport]\ncc = \"none\"\nmtu = 4097\n", base);
        let d = point_id("seed = 1\n[transport]\ncc = \"none\"\nmtu = 4096.0\n", base);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
        assert_eq!(a.len(), 16);
    }

    #[test]
    fn zipped_axes_need_equal_lengths() {
        let e = sweep("scenario = \"../two_hosts.toml\"\nmode = \"zip\"\n[[axis]]\nkey = \"a\"\nvalues = [1, 2]\n[[axis]]\nkey = \"b\"\nvalues = [1]\n").err().unwrap();
        assert_eq!(e.key.as_deref(), Some("axis[1].values"));
    }
}
