//! `csigsim._core`: the thin pyo3 layer between the Python package and the
//! engine. It passes TOML text in and the run's output out, as an `Output`
//! that hands over each table as NumPy columns (and formats the CSV texts
//! only when asked), reads run directories back into the same tables
//! (`read_run`), and gives the one percentile definition (`nearest_rank`);
//! everything user-facing (DataFrames, dict scenarios) lives in
//! `python/csigsim/`.

use csigsim::output::rundir::{self, RunDir, RunDirOptions};
use csigsim::output::schema::{column_data, ColumnData, Table};
use csigsim::scenario::{self, InputError, Override, Scenario};
use csigsim::sweep::{self as sweeps, Entry, Index, Point, Sweep, SweepDir};
use csigsim::RunOutput;
use numpy::IntoPyArray;
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use std::path::{Path, PathBuf};

create_exception!(
    csigsim,
    ScenarioError,
    PyValueError,
    "A scenario could not be loaded: bad TOML, an unknown key or an invalid value.\n\n\
     Attributes `file`, `key`, `line` and `column` locate the problem (None when unknown)."
);

create_exception!(
    csigsim,
    SweepError,
    PyValueError,
    "A sweep is invalid: its file, a key of it, or its directory.\n\n\
     Attributes `file` (None for a sweep given as a dict), `key`, `line` and `column` locate the problem."
);

/// A sweep's input error as a `SweepError`; a sweep given as data has no
/// file, and its message starts at the key.
fn sweep_error(py: Python<'_>, e: InputError) -> PyErr {
    let file = (!e.file.is_empty()).then(|| e.file.clone());
    let msg = match &file {
        Some(_) => e.to_string(),
        None => match &e.key {
            Some(k) => format!("key `{k}`: {}", e.msg),
            None => e.msg.clone(),
        },
    };
    let err = SweepError::new_err(msg);
    let (line, column) = match e.line_col {
        Some((l, c)) => (Some(l), Some(c)),
        None => (None, None),
    };
    let v = err.value(py);
    let _ = v.setattr("file", file);
    let _ = v.setattr("key", e.key);
    let _ = v.setattr("line", line);
    let _ = v.setattr("column", column);
    err
}

/// The sweep library's errors: `SweepError` for the sweep, `ScenarioError`
/// for a point's scenario, `OSError` for the sweep directory.
fn sweep_lib_error(py: Python<'_>, e: sweeps::Error) -> PyErr {
    match e {
        sweeps::Error::Sweep(e) => sweep_error(py, e),
        sweeps::Error::Point(e) => scenario_error(py, e),
        sweeps::Error::Io(m) => pyo3::exceptions::PyOSError::new_err(m),
    }
}

/// Converts an engine input error into a `ScenarioError` carrying its location.
fn scenario_error(py: Python<'_>, e: InputError) -> PyErr {
    let err = ScenarioError::new_err(e.to_string());
    let (line, column) = match e.line_col {
        Some((l, c)) => (Some(l), Some(c)),
        None => (None, None),
    };
    let v = err.value(py);
    // Setting attributes on a fresh exception instance cannot fail in practice;
    // if it ever did, the message alone still tells the user what is wrong.
    let _ = v.setattr("file", e.file);
    let _ = v.setattr("key", e.key);
    let _ = v.setattr("line", line);
    let _ = v.setattr("column", column);
    err
}

fn parse_overrides(py: Python<'_>, overrides: &[String]) -> PyResult<Vec<Override>> {
    overrides.iter().map(|s| Override::parse(s).map_err(|e| scenario_error(py, e))).collect()
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// The output of one run, kept in the engine's types. Columns (`columns`) and
/// CSV texts (`csv`) are made when asked for.
#[pyclass(frozen, name = "Output", module = "csigsim._core")]
struct Output(RunOutput);

const TABLES: [&str; 10] = ["flows", "links", "signals", "cc", "collectives", "rpcs", "jobs", "job_links", "ops", "iterations"];

fn unknown_table(table: &str) -> PyErr {
    PyValueError::new_err(format!("no table {table:?} (tables: {})", TABLES.join(", ")))
}

/// Text coded as indices into a list of names: `(codes, names)`.
fn coded<'py>(py: Python<'py>, codes: Vec<u32>, names: &[String]) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, [codes.into_pyarray(py).into_any(), names.into_pyobject(py)?.into_any()])
}

#[pymethods]
impl Output {
    /// `summary.json` as written, without its final line break.
    #[getter]
    fn summary_json(&self) -> String {
        self.0.summary_json()
    }

    /// The scenario as run.
    #[getter]
    fn scenario_toml(&self) -> String {
        self.0.scenario_toml.clone()
    }

    /// The text of `TABLE.csv`; "" when the run has no such table.
    fn csv(&self, py: Python<'_>, table: &str) -> PyResult<String> {
        let o = &self.0;
        match table {
            "flows" => Ok(py.detach(|| o.flows_csv())),
            "links" => Ok(py.detach(|| o.links_csv())),
            "signals" => Ok(py.detach(|| o.signals_csv())),
            "cc" => Ok(py.detach(|| o.cc_csv())),
            "collectives" => Ok(py.detach(|| o.collectives_csv())),
            "rpcs" => Ok(py.detach(|| o.rpcs_csv())),
            "jobs" => Ok(py.detach(|| o.jobs_csv())),
            "job_links" => Ok(py.detach(|| o.job_links_csv())),
            "ops" => Ok(py.detach(|| o.ops_csv())),
            "iterations" => Ok(py.detach(|| o.iterations_csv())),
            _ => Err(unknown_table(table)),
        }
    }

    /// The table's columns, `[(name, kind, data)]` (`table_columns`); None
    /// when the run has no such table.
    fn table<'py>(&self, py: Python<'py>, table: &str) -> PyResult<Option<Bound<'py, PyList>>> {
        let t = &self.0.tables;
        match table {
            "flows" => table_columns(py, &t.flows).map(Some),
            "links" => t.links.as_ref().map(|l| table_columns(py, &py.detach(|| l.columns()))).transpose(),
            "signals" => t.signals.as_ref().map(|s| table_columns(py, s)).transpose(),
            "cc" => t.cc.as_ref().map(|c| table_columns(py, c)).transpose(),
            "collectives" => t.collectives.as_ref().map(|c| table_columns(py, c)).transpose(),
            "rpcs" => t.rpcs.as_ref().map(|r| table_columns(py, r)).transpose(),
            "jobs" => t.jobs.as_ref().map(|j| table_columns(py, j)).transpose(),
            "job_links" => t.job_links.as_ref().map(|j| table_columns(py, j)).transpose(),
            "ops" => self.0.ops.as_ref().map(|o| table_columns(py, o)).transpose(),
            "iterations" => self.0.iterations.as_ref().map(|i| table_columns(py, i)).transpose(),
            _ => Err(unknown_table(table)),
        }
    }

    /// Writes the run directory, byte for byte, locked, checked and
    /// published whole as the CLI does.
    fn write_dir(&self, py: Python<'_>, dir: PathBuf) -> PyResult<()> {
        write_dir(py, &self.0, &dir)
    }
}

fn write_dir(py: Python<'_>, output: &RunOutput, dir: &Path) -> PyResult<()> {
    let d = open_run_dir(py, dir, Vec::new(), ("Results.write", "dir"))?;
    commit(py, d, output)
}

/// The run directory `dir`, locked and checked as the CLI does
/// (`RunDir`): a refusal (another run writing it, a directory that is not a
/// run's, an input inside it) raises ScenarioError naming the function and
/// its argument, `(function, key)`.
fn open_run_dir(py: Python<'_>, dir: &Path, inputs: Vec<(String, PathBuf)>, (function, key): (&str, &str)) -> PyResult<RunDir> {
    py.detach(|| RunDir::create_with(dir, &RunDirOptions { inputs, extra: Vec::new() })).map_err(|e| match e.is_input() {
        true => scenario_error(py, InputError::new(function, Some(key.to_string()), None, e.to_string())),
        false => pyo3::exceptions::PyOSError::new_err(format!("cannot write the run directory {}: {e}", dir.display())),
    })
}

/// Writes the run into `d`'s staging directory and publishes it.
fn commit(py: Python<'_>, d: RunDir, output: &RunOutput) -> PyResult<()> {
    let shown = d.path().display().to_string();
    py.detach(|| d.commit(output)).map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("cannot write the run directory {shown}: {e}")))
}

/// Runs a loaded scenario on `threads` threads without holding the GIL,
/// checking for Ctrl-C between chunks of events and calling
/// `on_progress(sim_time_ps, stop_ps, flows_completed, flows_total, events)`
/// there if given; writes the run directory if `out` is given.
fn run_loaded(py: Python<'_>, sc: Scenario, out: Option<(PathBuf, Vec<(String, PathBuf)>)>, on_progress: Option<Py<PyAny>>, threads: usize) -> PyResult<Bound<'_, Output>> {
    // Locked and checked before the run, so that a refused directory costs nothing.
    let dir = out.map(|(dir, inputs)| open_run_dir(py, &dir, inputs, ("csigsim.run", "out"))).transpose()?;
    let (result, interrupt) = py.detach(move || {
        let mut interrupt: Option<PyErr> = None;
        let progress = |p: &csigsim::Progress| {
            // Signal handlers only run on the main thread with the GIL held, so
            // re-attach briefly; a pending KeyboardInterrupt (or an exception
            // of the progress callback) stops the engine.
            let r = Python::attach(|py| {
                py.check_signals()?;
                if let Some(f) = &on_progress {
                    f.call1(py, (p.sim_time_ps, p.stop_ps, p.flows_completed, p.flows_total, p.events))?;
                }
                Ok::<(), PyErr>(())
            });
            match r {
                Ok(()) => true,
                Err(e) => {
                    interrupt = Some(e);
                    false
                }
            }
        };
        // An engine panic is a bug, but it should surface as a Python error,
        // not abort the interpreter's current statement with a PanicException.
        let opts = csigsim::RunOptions { threads, ..Default::default() };
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| csigsim::run_with(sc, &opts, progress).expect("a run without capture or streaming cannot fail")));
        (r.map_err(|p| panic_message(&*p)), interrupt)
    });
    if let Some(e) = interrupt {
        return Err(e);
    }
    let output = result.map_err(|m| PyRuntimeError::new_err(format!("csigsim internal error: {m}")))?;
    if let Some(dir) = dir {
        // Same writer and publish as the CLI, so both produce byte-identical run directories.
        commit(py, dir, &output)?;
    }
    Bound::new(py, Output(output))
}

/// Loads scenario text and runs it; returns its `Output`.
#[pyfunction]
#[pyo3(signature = (text, source="<string>", base_dir=None, seed=None, overrides=Vec::new(), out=None, on_progress=None, threads=1))]
#[allow(clippy::too_many_arguments)]
fn run_toml<'py>(
    py: Python<'py>,
    text: &str,
    source: &str,
    base_dir: Option<PathBuf>,
    seed: Option<u64>,
    overrides: Vec<String>,
    out: Option<PathBuf>,
    on_progress: Option<Py<PyAny>>,
    threads: usize,
) -> PyResult<Bound<'py, Output>> {
    let ov = parse_overrides(py, &overrides)?;
    let base = base_dir.unwrap_or_else(|| PathBuf::from("."));
    let sc = scenario::load_str(text, source, &base, &ov, seed).map_err(|e| scenario_error(py, e))?;
    let out = out.map(|o| (o, rundir::scenario_inputs(&sc.resolved_toml, &base)));
    run_loaded(py, sc, out, on_progress, threads)
}

/// Loads a scenario file and runs it; returns its `Output`.
#[pyfunction]
#[pyo3(signature = (path, seed=None, overrides=Vec::new(), out=None, on_progress=None, threads=1))]
fn run_file<'py>(
    py: Python<'py>,
    path: PathBuf,
    seed: Option<u64>,
    overrides: Vec<String>,
    out: Option<PathBuf>,
    on_progress: Option<Py<PyAny>>,
    threads: usize,
) -> PyResult<Bound<'py, Output>> {
    let ov = parse_overrides(py, &overrides)?;
    let sc = scenario::load_file(&path, &ov, seed).map_err(|e| scenario_error(py, e))?;
    let out = out.map(|o| {
        let mut inputs = vec![("the scenario".to_string(), path.clone())];
        inputs.extend(rundir::scenario_inputs(&sc.resolved_toml, path.parent().unwrap_or(Path::new(""))));
        (o, inputs)
    });
    run_loaded(py, sc, out, on_progress, threads)
}

/// Parses and checks scenario text without running it; raises ScenarioError.
#[pyfunction]
#[pyo3(signature = (text, source="<string>", base_dir=None, overrides=Vec::new()))]
fn validate_toml(py: Python<'_>, text: &str, source: &str, base_dir: Option<PathBuf>, overrides: Vec<String>) -> PyResult<()> {
    let ov = parse_overrides(py, &overrides)?;
    let base = base_dir.unwrap_or_else(|| PathBuf::from("."));
    scenario::load_str(text, source, &base, &ov, None).map(drop).map_err(|e| scenario_error(py, e))
}

/// Parses and checks a scenario file without running it; raises ScenarioError.
#[pyfunction]
#[pyo3(signature = (path, overrides=Vec::new()))]
fn validate_file(py: Python<'_>, path: PathBuf, overrides: Vec<String>) -> PyResult<()> {
    let ov = parse_overrides(py, &overrides)?;
    scenario::load_file(Path::new(&path), &ov, None).map(drop).map_err(|e| scenario_error(py, e))
}

/// Loads and checks a scenario file with overrides and a seed; returns the
/// scenario text as it would run (what a sweep hashes into a point's id).
#[pyfunction]
#[pyo3(signature = (path, seed=None, overrides=Vec::new()))]
fn resolve_file(py: Python<'_>, path: PathBuf, seed: Option<u64>, overrides: Vec<String>) -> PyResult<String> {
    let ov = parse_overrides(py, &overrides)?;
    scenario::load_file(Path::new(&path), &ov, seed).map(|sc| sc.resolved_toml).map_err(|e| scenario_error(py, e))
}

// --- Sweeps (csigsim::sweep): the Python package's executors run the points
// these define and report each attempt here, so that the CLI and Python
// share one sweep file, one point id and one directory layout.

/// A sweep loaded and expanded into its points, every point's scenario
/// checked.
#[pyclass(frozen, name = "SweepPlan", module = "csigsim._core")]
struct SweepPlan {
    sweep: Sweep,
    points: Vec<Point>,
    index: Index,
}

#[pymethods]
impl SweepPlan {
    #[getter]
    fn name(&self) -> String {
        self.sweep.name.clone()
    }

    /// The sweep directory.
    #[getter]
    fn out(&self) -> PathBuf {
        self.sweep.out.clone()
    }

    /// The base scenario, as the records name it.
    #[getter]
    fn scenario(&self) -> PathBuf {
        self.sweep.scenario.clone()
    }

    #[getter]
    fn retries(&self) -> u32 {
        self.sweep.retries
    }

    /// Points at once; 0 for the executor's default.
    #[getter]
    fn workers(&self) -> usize {
        self.sweep.workers
    }

    /// A point's time limit in seconds, or None.
    #[getter]
    fn timeout(&self) -> Option<f64> {
        self.sweep.timeout.map(|d| d.as_secs_f64())
    }

    /// `sweep.json` as it is written: name, scenario, axes and every
    /// point's `id`, `seed`, `axes` and `overrides`.
    #[getter]
    fn index_json(&self) -> String {
        self.index.to_json()
    }

    /// How messages name point `i`: `key=value ... seed=S`.
    fn describe(&self, i: usize) -> PyResult<String> {
        self.point(i).map(Point::describe)
    }

    /// Point `i`'s scenario as it runs (its run directory's scenario.toml).
    fn point_scenario(&self, py: Python<'_>, i: usize) -> PyResult<String> {
        let p = self.point(i)?;
        py.detach(|| self.sweep.point_scenario(p)).map_err(|e| sweep_lib_error(py, e))
    }

    /// Creates the sweep directory, removes what dead sweeps left in tmp/
    /// and writes sweep.json.
    fn prepare(&self, py: Python<'_>) -> PyResult<()> {
        let dir = SweepDir::new(&self.sweep.out);
        // A sweep given as a dict has no file to name.
        let file = self.sweep.file.as_ref().map(|f| f.display().to_string()).unwrap_or_default();
        py.detach(|| dir.prepare(&file, &self.index)).map_err(|e| sweep_lib_error(py, e))
    }
}

impl SweepPlan {
    fn point(&self, i: usize) -> PyResult<&Point> {
        self.points.get(i).ok_or_else(|| pyo3::exceptions::PyIndexError::new_err(format!("no point {i}")))
    }
}

/// Loads a sweep and its points: from the sweep file `path` (paths in it
/// relative to it), or, without one, from `replace` alone (paths relative
/// to `base_dir`). `replace` holds top-level keys with their values as
/// TOML text, replacing the file's. Raises SweepError, or ScenarioError for
/// a point whose scenario does not load.
#[pyfunction]
#[pyo3(signature = (path=None, base_dir=None, replace=Vec::new()))]
fn sweep_plan(py: Python<'_>, path: Option<PathBuf>, base_dir: Option<PathBuf>, replace: Vec<(String, String)>) -> PyResult<SweepPlan> {
    let text = match &path {
        Some(p) => std::fs::read_to_string(p)
            .map_err(|e| sweep_error(py, InputError::new(p.display().to_string(), None, None, format!("cannot read the file: {e}"))))?,
        None => String::new(),
    };
    let stem = path.as_ref().and_then(|p| p.file_stem()).map_or_else(|| "sweep".to_string(), |s| s.to_string_lossy().into_owned());
    let base = match &path {
        Some(p) => p.parent().map(Path::to_path_buf).unwrap_or_default(),
        None => base_dir.unwrap_or_else(|| PathBuf::from(".")),
    };
    let src = sweeps::Source { text: &text, file: path.as_deref(), base_dir: &base, stem: &stem, replace: &replace };
    let sweep = py.detach(|| sweeps::parse(&src)).map_err(|e| sweep_error(py, e))?;
    let points = py.detach(|| sweep.points()).map_err(|e| sweep_lib_error(py, e))?;
    let index = Index::new(&sweep, &points);
    Ok(SweepPlan { sweep, points, index })
}

fn sweep_index(py: Python<'_>, dir: &SweepDir) -> PyResult<Index> {
    py.detach(|| dir.index()).map_err(|e| pyo3::exceptions::PyFileNotFoundError::new_err(format!("{} is not a sweep directory: {e}", dir.out.display())))
}

fn entry(point: &str) -> PyResult<Entry> {
    serde_json::from_str(point).map_err(|e| PyValueError::new_err(format!("not a point of sweep.json: {e}")))
}

/// Each point's state (done, running, failed, pending), in the order of sweep.json.
#[pyfunction]
fn sweep_states(py: Python<'_>, out: PathBuf) -> PyResult<Vec<&'static str>> {
    let dir = SweepDir::new(out);
    let index = sweep_index(py, &dir)?;
    Ok(py.detach(|| dir.states(&index.points)).into_iter().map(|s| s.name()).collect())
}

/// The results table as JSON: `{"columns": [...], "rows": [{column: value}]}`.
#[pyfunction]
fn sweep_table(py: Python<'_>, out: PathBuf) -> PyResult<String> {
    let dir = SweepDir::new(out);
    let index = sweep_index(py, &dir)?;
    Ok(py.detach(|| serde_json::to_string(&dir.table(&index.axes, &index.points)).unwrap_or_default()))
}

/// The failed attempts recorded for point `id` (JSON list).
#[pyfunction]
fn sweep_failures(out: PathBuf, id: &str) -> String {
    serde_json::Value::Array(SweepDir::new(out).failures(id)).to_string()
}

/// The number of point `id`'s next attempt.
#[pyfunction]
fn sweep_next_attempt(out: PathBuf, id: &str) -> u32 {
    SweepDir::new(out).next_attempt(id)
}

/// This process as the owner of the points it runs: (host, pid).
#[pyfunction]
fn sweep_owner() -> (String, u32) {
    let o = sweeps::Owner::this();
    (o.host, o.pid)
}

/// Starts an attempt of point `id` for the sweep process (owner_host,
/// owner_pid): returns its temporary directory; the run goes into its `run/`.
#[pyfunction]
fn sweep_begin(out: PathBuf, id: &str, attempt: u32, owner_host: String, owner_pid: u32) -> PyResult<PathBuf> {
    let owner = sweeps::Owner { host: owner_host, pid: owner_pid };
    SweepDir::new(out).begin(id, attempt, &owner).map(|t| t.dir).map_err(pyo3::exceptions::PyOSError::new_err)
}

/// Records a complete attempt (`point`: the point's JSON from sweep.json)
/// and moves its run into points/<id>/. Returns None, or the reason the
/// point is not complete after all (record it with sweep_fail).
#[pyfunction]
fn sweep_complete(py: Python<'_>, out: PathBuf, point: &str, attempt: u32, owner_pid: u32, scenario: &str, wall_s: f64) -> PyResult<Option<String>> {
    let e = entry(point)?;
    let dir = SweepDir::new(out);
    let temp = dir.temp(&e.id, attempt, owner_pid);
    Ok(py.detach(|| dir.complete(&e, attempt, &temp, scenario, wall_s)).err())
}

/// Records a failed attempt in failed/<id>.json and removes what it left in tmp/.
#[pyfunction]
#[pyo3(signature = (out, point, attempt, owner_pid, reason, wall_s=None))]
fn sweep_fail(py: Python<'_>, out: PathBuf, point: &str, attempt: u32, owner_pid: u32, reason: &str, wall_s: Option<f64>) -> PyResult<()> {
    let e = entry(point)?;
    let dir = SweepDir::new(out);
    let temp = dir.temp(&e.id, attempt, owner_pid);
    py.detach(|| dir.fail(&e, attempt, &temp, reason, wall_s));
    Ok(())
}

/// The reason recorded for a point over its time limit of `seconds` (`how`: killed, cancelled).
#[pyfunction]
fn sweep_time_limit_reason(seconds: f64, how: &str) -> PyResult<String> {
    let limit = std::time::Duration::try_from_secs_f64(seconds).map_err(|e| PyValueError::new_err(format!("not a time limit: {e}")))?;
    Ok(sweeps::time_limit_reason(limit, how))
}

/// The reason recorded for a point whose process signal `sig` ended.
#[pyfunction]
fn sweep_signal_reason(sig: i32) -> String {
    sweeps::signal_reason(sig)
}

/// The engine version (the one written into every summary).
#[pyfunction]
fn version() -> &'static str {
    csigsim::VERSION
}

/// A table's columns for the Python package, in file order, from its one
/// declaration: `[(name, kind, data)]`, `kind` as `Kind::python` names it
/// and `data` a NumPy array, `(values, valid)` for whole numbers with empty
/// cells (times in picoseconds) or `(codes, names)` for text. The numbers
/// the CSV rounds are given as written, NaN where a cell is empty.
fn table_columns<'py, T: Table + Sync>(py: Python<'py>, t: &T) -> PyResult<Bound<'py, PyList>> {
    let data = py.detach(|| column_data(t));
    let list = PyList::empty(py);
    for (c, d) in T::COLUMNS.iter().zip(data) {
        let v = match d {
            ColumnData::Int { values, valid: None } => values.into_pyarray(py).into_any(),
            ColumnData::Int { values, valid: Some(valid) } => PyTuple::new(py, [values.into_pyarray(py).into_any(), valid.into_pyarray(py).into_any()])?.into_any(),
            ColumnData::Num(values) => values.into_pyarray(py).into_any(),
            ColumnData::Text { codes, names } => coded(py, codes, &names)?.into_any(),
        };
        list.append((c.name, c.kind.python(), v))?;
    }
    Ok(list)
}

/// A run directory read back (`csigsim::output::read_run`).
#[pyclass(frozen, name = "RunRead", module = "csigsim._core")]
struct RunRead(csigsim::output::RunTables, csigsim::output::Format);

#[pymethods]
impl RunRead {
    /// summary.json as parsed and written again ("{}" without the file).
    #[getter]
    fn summary_json(&self) -> String {
        self.0.summary.to_string()
    }

    /// scenario.toml ("" without the file).
    #[getter]
    fn scenario_toml(&self) -> String {
        self.0.scenario_toml.clone()
    }

    /// The table's columns, as `Output.table` gives them; None when the
    /// directory has no such file.
    fn table<'py>(&self, py: Python<'py>, table: &str) -> PyResult<Option<Bound<'py, PyList>>> {
        let t = &self.0;
        match table {
            "flows" => table_columns(py, &t.flows).map(Some),
            "links" => t.links.as_ref().map(|l| table_columns(py, l)).transpose(),
            "signals" => t.signals.as_ref().map(|s| table_columns(py, s)).transpose(),
            "cc" => t.cc.as_ref().map(|c| table_columns(py, c)).transpose(),
            "collectives" => t.collectives.as_ref().map(|c| table_columns(py, c)).transpose(),
            "rpcs" => t.rpcs.as_ref().map(|r| table_columns(py, r)).transpose(),
            "jobs" => t.jobs.as_ref().map(|j| table_columns(py, j)).transpose(),
            "job_links" => t.job_links.as_ref().map(|j| table_columns(py, j)).transpose(),
            // A trace run's tables, read when asked for.
            "ops" => read_one::<csigsim::output::ops::OpTable>(py, &t.dir, self.1),
            "iterations" => read_one::<csigsim::output::ops::IterationTable>(py, &t.dir, self.1),
            _ => Err(unknown_table(table)),
        }
    }
}

/// One table of the run directory `dir`, as `RunRead.table` gives it.
fn read_one<'py, T: csigsim::output::Table + Send + Sync>(py: Python<'py>, dir: &Path, format: csigsim::output::Format) -> PyResult<Option<Bound<'py, PyList>>> {
    let t = py.detach(|| csigsim::output::read::read_table::<T>(dir, format)).map_err(|e| PyValueError::new_err(e.to_string()))?;
    t.as_ref().map(|t| table_columns(py, t)).transpose()
}

/// Reads the run directory `dir` from its CSV files (`format` "csv"), its
/// Parquet twins ("parquet") or each table's twin when there is one
/// ("auto"); a file that cannot be read raises ValueError naming it.
#[pyfunction]
#[pyo3(signature = (dir, format="csv"))]
fn read_run(py: Python<'_>, dir: PathBuf, format: &str) -> PyResult<RunRead> {
    use csigsim::output::Format;
    let format = match format {
        "csv" => Format::Csv,
        "parquet" => Format::Parquet,
        "auto" => Format::Auto,
        other => return Err(PyValueError::new_err(format!("format must be 'csv', 'parquet' or 'auto', not {other:?}"))),
    };
    py.detach(|| csigsim::output::read_run(&dir, format)).map(|t| RunRead(t, format)).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The `q` quantile of `values` by nearest rank, as summary.json and
/// `csigsim compare` compute it (`csigsim::stats::nearest_rank`); NaN
/// values are left out; None when none is left.
#[pyfunction]
fn nearest_rank(values: numpy::PyReadonlyArray1<'_, f64>, q: f64) -> Option<f64> {
    let mut v: Vec<f64> = values.as_array().iter().copied().filter(|x| !x.is_nan()).collect();
    v.sort_by(f64::total_cmp);
    csigsim::stats::nearest_rank(&v, q)
}

/// Large blocks on huge pages (csigsim::hugepages), as in the command.
#[global_allocator]
static ALLOC: csigsim::hugepages::HugePages = csigsim::hugepages::HugePages;

/// The threads `threads="auto"` takes: the machine's cores its load
/// leaves free, at least one (the CLI's `--threads auto`).
#[pyfunction]
fn free_cores() -> usize {
    csigsim::engine::threads::free_cores()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let cls = py.get_type::<ScenarioError>();
    // Class-level defaults, so a ScenarioError raised from Python code has them too.
    for attr in ["file", "key", "line", "column"] {
        cls.setattr(attr, py.None())?;
    }
    m.add("ScenarioError", cls)?;
    let cls = py.get_type::<SweepError>();
    for attr in ["file", "key", "line", "column"] {
        cls.setattr(attr, py.None())?;
    }
    m.add("SweepError", cls)?;
    m.add_class::<SweepPlan>()?;
    for f in [
        wrap_pyfunction!(free_cores, m)?,
        wrap_pyfunction!(sweep_plan, m)?,
        wrap_pyfunction!(sweep_states, m)?,
        wrap_pyfunction!(sweep_table, m)?,
        wrap_pyfunction!(sweep_failures, m)?,
        wrap_pyfunction!(sweep_next_attempt, m)?,
        wrap_pyfunction!(sweep_owner, m)?,
        wrap_pyfunction!(sweep_begin, m)?,
        wrap_pyfunction!(sweep_complete, m)?,
        wrap_pyfunction!(sweep_fail, m)?,
        wrap_pyfunction!(sweep_signal_reason, m)?,
        wrap_pyfunction!(sweep_time_limit_reason, m)?,
    ] {
        m.add_function(f)?;
    }
    m.add_class::<Output>()?;
    m.add_function(wrap_pyfunction!(run_toml, m)?)?;
    m.add_function(wrap_pyfunction!(run_file, m)?)?;
    m.add_function(wrap_pyfunction!(validate_toml, m)?)?;
    m.add_function(wrap_pyfunction!(validate_file, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_file, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_class::<RunRead>()?;
    m.add_function(wrap_pyfunction!(read_run, m)?)?;
    m.add_function(wrap_pyfunction!(nearest_rank, m)?)?;
    Ok(())
}
