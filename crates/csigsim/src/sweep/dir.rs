//! The sweep directory (docs/sweeps.md): `sweep.json`, `points/<id>/`,
//! `tmp/<id>.<attempt>.<pid>/`, `failed/<id>.json` and `results.csv`; the
//! state of each point, the records of its attempts, and the clean-up of
//! what sweeps that are no longer running left behind.
//!
//! Times in the records (`finished`, `started`) are Unix time: seconds
//! since 1970-01-01 UTC as a JSON number ([`now_s`]).

use super::{Error, Point, Sweep};
use crate::scenario::InputError;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};

/// Lines of a failed point's stderr its record keeps.
const STDERR_TAIL: usize = 20;

/// A point as the sweep directory records it. The fields are in the order
/// `sweep.json` has always written them (by name).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Entry {
    /// The axis values as JSON values, by axis key.
    pub axes: Map<String, Value>,
    pub id: String,
    pub overrides: Vec<String>,
    pub seed: u64,
}

impl From<&Point> for Entry {
    fn from(p: &Point) -> Self {
        let axes = p.axes.iter().map(|(k, v)| (k.clone(), toml_to_json(v))).collect();
        Entry { axes, id: p.id.clone(), overrides: p.overrides.clone(), seed: p.seed }
    }
}

/// An axis value (TOML text) as JSON.
fn toml_to_json(v: &str) -> Value {
    match format!("v = {v}").parse::<toml::Table>() {
        Ok(t) => serde_json::to_value(&t["v"]).unwrap_or(Value::String(v.to_string())),
        Err(_) => Value::String(v.to_string()),
    }
}

/// `sweep.json`: the sweep and its points, for `--status`, the table and
/// Python's `load_sweep`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Index {
    /// The axis keys, in axis order.
    pub axes: Vec<String>,
    pub name: String,
    pub points: Vec<Entry>,
    pub scenario: String,
}

impl Index {
    pub fn new(s: &Sweep, points: &[Point]) -> Index {
        Index {
            axes: s.axes.iter().map(|a| a.key.clone()).collect(),
            name: s.name.clone(),
            points: points.iter().map(Entry::from).collect(),
            scenario: s.scenario.display().to_string(),
        }
    }

    pub fn to_json(&self) -> String {
        format!("{}\n", serde_json::to_string_pretty(self).unwrap_or_default())
    }
}

/// The state of a point.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum State {
    /// `points/<id>/summary.json` exists.
    Done,
    /// A `tmp/` directory of it belongs to a live sweep process.
    Running,
    /// `failed/<id>.json` exists.
    Failed,
    Pending,
}

impl State {
    pub const ALL: [State; 4] = [State::Done, State::Running, State::Failed, State::Pending];

    pub fn name(self) -> &'static str {
        match self {
            State::Done => "done",
            State::Running => "running",
            State::Failed => "failed",
            State::Pending => "pending",
        }
    }
}

/// The sweep process that owns a point's temporary directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    pub host: String,
    pub pid: u32,
}

impl Owner {
    /// This process.
    pub fn this() -> Owner {
        Owner { host: hostname(), pid: std::process::id() }
    }
}

/// The temporary directory of one attempt: `owner.json` and, for the
/// command's points, `stderr.log` beside `run/`, the point's run directory
/// (a run directory holds only a run's files).
#[derive(Clone, Debug)]
pub struct Temp {
    pub dir: PathBuf,
}

impl Temp {
    pub fn run_dir(&self) -> PathBuf {
        self.dir.join("run")
    }

    pub fn stderr_log(&self) -> PathBuf {
        self.dir.join("stderr.log")
    }
}

/// The machine's name, as the records give it.
pub fn hostname() -> String {
    #[cfg(unix)]
    {
        let mut buf = [0u8; 256];
        // SAFETY: the buffer is valid for its length; gethostname writes at most that.
        if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0 {
            let n = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
            if n > 0 {
                return String::from_utf8_lossy(&buf[..n]).into_owned();
            }
        }
    }
    "localhost".into()
}

/// Now as Unix time (seconds, with their fraction), the one time format of
/// the records.
pub fn now_s() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

#[cfg(unix)]
fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid as libc::pid_t, 0) == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM) }
}

#[cfg(not(unix))]
fn alive(_pid: u32) -> bool {
    true
}

/// Whether a temporary point directory belongs to a live sweep.
fn owner_alive(tmp: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(tmp.join("owner.json")) else { return false };
    let Ok(v) = serde_json::from_str::<Value>(&text) else { return false };
    if v["host"].as_str() != Some(hostname().as_str()) {
        return true; // another machine's: cannot tell, so assume it runs
    }
    v["pid"].as_u64().is_some_and(|p| alive(p as u32))
}

fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// The sweep directory.
#[derive(Clone, Debug)]
pub struct SweepDir {
    pub out: PathBuf,
}

/// A sweep's results, one row per point: `id`, `status`, `seed`, the axes,
/// the scalar figures of each complete point's `summary.json` (by name) and
/// `attempts` (when a point is complete). A row has the columns it has a
/// value for.
#[derive(Clone, Debug, Serialize)]
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Map<String, Value>>,
}

impl SweepDir {
    pub fn new(out: impl Into<PathBuf>) -> SweepDir {
        SweepDir { out: out.into() }
    }

    fn failed_file(&self, id: &str) -> PathBuf {
        self.out.join("failed").join(format!("{id}.json"))
    }

    /// A complete point's run directory.
    pub fn point_dir(&self, id: &str) -> PathBuf {
        self.out.join("points").join(id)
    }

    /// Creates the directory, removes what dead sweeps left in `tmp/` and
    /// writes `sweep.json`. `file` names the sweep in an error.
    pub fn prepare(&self, file: &str, index: &Index) -> Result<(), Error> {
        if self.out.is_file() {
            return Err(Error::Sweep(InputError::new(file, Some("out".into()), None, format!("{} is an existing file", self.out.display()))));
        }
        for d in ["points", "tmp", "failed"] {
            let p = self.out.join(d);
            std::fs::create_dir_all(&p).map_err(|e| Error::Io(format!("cannot create {}: {e}", p.display())))?;
        }
        self.clean_stale();
        write_atomic(&self.out.join("sweep.json"), index.to_json().as_bytes()).map_err(|e| Error::Io(format!("cannot write sweep.json: {e}")))
    }

    /// `sweep.json`, read back.
    pub fn index(&self) -> io::Result<Index> {
        let text = std::fs::read_to_string(self.out.join("sweep.json"))?;
        serde_json::from_str(&text).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("{}: {e}", self.out.join("sweep.json").display())))
    }

    /// Removes temporary directories left by sweeps that are no longer running.
    pub fn clean_stale(&self) {
        if let Ok(rd) = std::fs::read_dir(self.out.join("tmp")) {
            for e in rd.flatten() {
                if !owner_alive(&e.path()) {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
    }

    /// Every point's state, in point order.
    pub fn states(&self, points: &[Entry]) -> Vec<State> {
        let mut running = BTreeSet::new();
        if let Ok(rd) = std::fs::read_dir(self.out.join("tmp")) {
            for e in rd.flatten() {
                if owner_alive(&e.path()) {
                    let name = e.file_name().to_string_lossy().into_owned();
                    running.insert(name.split('.').next().unwrap_or(&name).to_string());
                }
            }
        }
        points
            .iter()
            .map(|p| {
                if self.point_dir(&p.id).join("summary.json").is_file() {
                    State::Done
                } else if running.contains(&p.id) {
                    State::Running
                } else if self.failed_file(&p.id).is_file() {
                    State::Failed
                } else {
                    State::Pending
                }
            })
            .collect()
    }

    /// The failed attempts recorded for a point not yet complete.
    pub fn failures(&self, id: &str) -> Vec<Value> {
        std::fs::read_to_string(self.failed_file(id))
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|v| v["attempts"].as_array().cloned())
            .unwrap_or_default()
    }

    /// The number of a point's next attempt: 1, or one more than its failures.
    pub fn next_attempt(&self, id: &str) -> u32 {
        self.failures(id).len() as u32 + 1
    }

    /// The temporary directory of an attempt of `owner`'s.
    pub fn temp(&self, id: &str, attempt: u32, owner_pid: u32) -> Temp {
        Temp { dir: self.out.join("tmp").join(format!("{id}.{attempt}.{owner_pid}")) }
    }

    /// Starts an attempt: its temporary directory, empty, with `owner.json`.
    pub fn begin(&self, id: &str, attempt: u32, owner: &Owner) -> Result<Temp, String> {
        let t = self.temp(id, attempt, owner.pid);
        let _ = std::fs::remove_dir_all(&t.dir);
        std::fs::create_dir_all(&t.dir).map_err(|e| format!("cannot create {}: {e}", t.dir.display()))?;
        let o = json!({"host": owner.host, "pid": owner.pid, "attempt": attempt, "started": now_s()});
        std::fs::write(t.dir.join("owner.json"), o.to_string()).map_err(|e| format!("cannot write {}: {e}", t.dir.join("owner.json").display()))?;
        Ok(t)
    }

    /// Records a complete attempt: `point.json` (and a non-empty
    /// `stderr.log`) into its run directory, which is renamed to
    /// `points/<id>/`; the point's failure record goes. `scenario` is the
    /// base scenario as the record names it. An error is the reason the
    /// point is not complete after all (record it with [`SweepDir::fail`]).
    pub fn complete(&self, p: &Entry, attempt: u32, temp: &Temp, scenario: &str, wall_s: f64) -> Result<(), String> {
        let mut attempts = self.failures(&p.id);
        attempts.push(json!({"attempt": attempt, "status": "done", "host": hostname(), "wall_s": wall_s, "finished": now_s()}));
        let point = json!({
            "id": p.id, "seed": p.seed, "axes": p.axes, "overrides": p.overrides,
            "scenario": scenario, "version": crate::VERSION, "attempts": attempts,
        });
        let run = temp.run_dir();
        let log = temp.stderr_log();
        let mut written = match std::fs::metadata(&log) {
            Ok(m) if m.len() > 0 => std::fs::rename(&log, run.join("stderr.log")),
            _ => Ok(()),
        };
        let dest = self.point_dir(&p.id);
        written = written.and_then(|_| std::fs::write(run.join("point.json"), format!("{}\n", serde_json::to_string_pretty(&point).unwrap_or_default())));
        // A complete directory appears in one rename; another sweep that
        // finished the same point first keeps its copy.
        let moved = written.and_then(|_| std::fs::rename(&run, &dest));
        if let Err(e) = moved {
            if !dest.join("summary.json").is_file() {
                return Err(format!("cannot move the run into {}: {e}", dest.display()));
            }
        }
        let _ = std::fs::remove_dir_all(&temp.dir);
        let _ = std::fs::remove_file(self.failed_file(&p.id));
        Ok(())
    }

    /// Records a failed attempt in `failed/<id>.json` (with the last lines
    /// of the attempt's `stderr.log`, where it has one) and removes what it
    /// left in `tmp/`.
    pub fn fail(&self, p: &Entry, attempt: u32, temp: &Temp, reason: &str, wall_s: Option<f64>) {
        let mut a = Map::new();
        a.insert("attempt".into(), json!(attempt));
        a.insert("status".into(), json!("failed"));
        a.insert("reason".into(), json!(reason));
        a.insert("host".into(), json!(hostname()));
        if let Some(w) = wall_s {
            a.insert("wall_s".into(), json!(w));
        }
        a.insert("finished".into(), json!(now_s()));
        if let Ok(log) = std::fs::read_to_string(temp.stderr_log()) {
            let tail: Vec<&str> = log.lines().rev().take(STDERR_TAIL).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            a.insert("stderr_tail".into(), json!(tail.join("\n")));
        }
        let _ = std::fs::remove_dir_all(&temp.dir);
        let mut attempts = self.failures(&p.id);
        attempts.push(Value::Object(a));
        let v = json!({"id": p.id, "seed": p.seed, "axes": p.axes, "attempts": attempts});
        let _ = write_atomic(&self.failed_file(&p.id), v.to_string().as_bytes());
    }

    /// The results table of the points (`axes`: the axis keys, in order).
    pub fn table(&self, axes: &[String], points: &[Entry]) -> Table {
        let mut columns: Vec<String> = ["id", "status", "seed"].iter().map(|s| s.to_string()).chain(axes.iter().cloned()).collect();
        let mut figures: Vec<String> = Vec::new();
        let mut rows = Vec::with_capacity(points.len());
        for (p, s) in points.iter().zip(self.states(points)) {
            let mut row = Map::new();
            row.insert("id".into(), json!(p.id));
            row.insert("status".into(), json!(s.name()));
            row.insert("seed".into(), json!(p.seed));
            for (k, v) in &p.axes {
                row.insert(k.clone(), v.clone());
            }
            if s == State::Done {
                let dir = self.point_dir(&p.id);
                if let Some(Value::Object(m)) = std::fs::read_to_string(dir.join("summary.json")).ok().and_then(|t| serde_json::from_str(&t).ok()) {
                    for (k, v) in m {
                        if v.is_object() || v.is_array() || columns.contains(&k) || k == "attempts" {
                            continue;
                        }
                        if !figures.contains(&k) {
                            figures.push(k.clone());
                        }
                        row.insert(k, v);
                    }
                }
                let attempts = std::fs::read_to_string(dir.join("point.json")).ok().and_then(|t| serde_json::from_str::<Value>(&t).ok());
                if let Some(a) = attempts.as_ref().and_then(|v| v["attempts"].as_array()) {
                    row.insert("attempts".into(), json!(a.len()));
                }
            }
            rows.push(row);
        }
        columns.extend(figures);
        if rows.iter().any(|r| r.contains_key("attempts")) {
            columns.push("attempts".into());
        }
        Table { columns, rows }
    }

    /// `results.csv`: the table's complete points, without `status` and
    /// `attempts`; rewritten whole.
    pub fn write_results_csv(&self, axes: &[String], points: &[Entry]) -> io::Result<PathBuf> {
        let t = self.table(axes, points);
        let cols: Vec<&String> = t.columns.iter().filter(|c| *c != "status" && *c != "attempts").collect();
        let mut text = String::new();
        let line = |cells: Vec<String>, text: &mut String| {
            text.push_str(&cells.join(","));
            text.push('\n');
        };
        line(cols.iter().map(|c| cell(c)).collect(), &mut text);
        for r in t.rows.iter().filter(|r| r["status"] == "done") {
            let cells = cols
                .iter()
                .map(|c| match r.get(*c) {
                    None | Some(Value::Null) => String::new(),
                    Some(Value::String(s)) => cell(s),
                    Some(v) => cell(&v.to_string()),
                })
                .collect();
            line(cells, &mut text);
        }
        let path = self.out.join("results.csv");
        write_atomic(&path, text.as_bytes())?;
        Ok(path)
    }

    /// What `csigsim sweep --status` prints: the count of each state and
    /// each failed point's last reason.
    pub fn status_report(&self, name: &str, points: &[Point]) -> String {
        let entries: Vec<Entry> = points.iter().map(Entry::from).collect();
        let st = self.states(&entries);
        let n = |s: State| st.iter().filter(|x| **x == s).count();
        let mut r = format!("sweep {name}: {} points in {}\n", points.len(), self.out.display());
        for s in State::ALL {
            r.push_str(&format!("  {:<8} {}\n", s.name(), n(s)));
        }
        for (p, s) in points.iter().zip(&st) {
            if *s == State::Failed {
                let last = self.failures(&p.id).last().cloned().unwrap_or_default();
                r.push_str(&format!(
                    "  failed {} ({}): attempt {}: {}\n",
                    p.id,
                    p.describe(),
                    last["attempt"].as_u64().unwrap_or(0),
                    last["reason"].as_str().unwrap_or("?")
                ));
            }
        }
        r
    }
}

/// A CSV cell, quoted when it holds a comma, a quote or a line break.
fn cell(v: &str) -> String {
    if v.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", v.replace('"', "\"\""))
    } else {
        v.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str) -> Entry {
        Entry { axes: Map::new(), id: id.into(), overrides: vec![], seed: 1 }
    }

    fn scratch(name: &str) -> SweepDir {
        let d = std::env::temp_dir().join(format!("csigsim-sweepdir-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        for s in ["points", "tmp", "failed"] {
            std::fs::create_dir_all(d.join(s)).unwrap();
        }
        SweepDir::new(d)
    }

    #[test]
    fn an_attempt_goes_from_pending_to_running_to_failed_to_done() {
        let d = scratch("states");
        let p = entry("abc");
        assert_eq!(d.states(std::slice::from_ref(&p)), [State::Pending]);
        let t = d.begin(&p.id, 1, &Owner::this()).unwrap();
        assert_eq!(d.states(std::slice::from_ref(&p)), [State::Running]);
        std::fs::write(t.stderr_log(), "one\ntwo\n").unwrap();
        d.fail(&p, 1, &t, "killed by signal 9 (SIGKILL)", Some(0.5));
        assert!(!t.dir.exists());
        assert_eq!(d.states(std::slice::from_ref(&p)), [State::Failed]);
        assert_eq!(d.failures(&p.id)[0]["stderr_tail"], "one\ntwo");
        assert_eq!(d.next_attempt(&p.id), 2);
        let t = d.begin(&p.id, 2, &Owner::this()).unwrap();
        std::fs::create_dir_all(t.run_dir()).unwrap();
        std::fs::write(t.run_dir().join("summary.json"), "{\"seed\": 1, \"fct_p99_ns\": 1.5, \"hosts\": []}").unwrap();
        d.complete(&p, 2, &t, "s.toml", 0.25).unwrap();
        assert_eq!(d.states(std::slice::from_ref(&p)), [State::Done]);
        assert!(!d.failed_file(&p.id).exists() && !t.dir.exists());
        let table = d.table(&[], std::slice::from_ref(&p));
        assert_eq!(table.columns, ["id", "status", "seed", "fct_p99_ns", "attempts"]);
        assert_eq!(table.rows[0]["attempts"], 2);
        d.write_results_csv(&[], std::slice::from_ref(&p)).unwrap();
        assert_eq!(std::fs::read_to_string(d.out.join("results.csv")).unwrap(), "id,seed,fct_p99_ns\nabc,1,1.5\n");
        let _ = std::fs::remove_dir_all(&d.out);
    }

    #[test]
    fn a_dead_owners_temporary_directory_is_cleaned() {
        let d = scratch("stale");
        let dead = Owner { host: hostname(), pid: u32::MAX / 2 };
        let t = d.begin("abc", 1, &dead).unwrap();
        assert_eq!(d.states(&[entry("abc")]), [State::Pending]);
        d.clean_stale();
        assert!(!t.dir.exists());
        let _ = std::fs::remove_dir_all(&d.out);
    }
}
