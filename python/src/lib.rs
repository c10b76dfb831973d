//! `csigsim._core`: the thin pyo3 layer between the Python package and the
//! engine. It passes TOML text in and the run's output texts out; everything
//! user-facing (DataFrames, dict scenarios) lives in `python/csigsim/`.

use csigsim::scenario::{self, InputError, Override, Scenario};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::{Path, PathBuf};

create_exception!(
    csigsim,
    ScenarioError,
    PyValueError,
    "A scenario could not be loaded: bad TOML, an unknown key or an invalid value.\n\n\
     Attributes `file`, `key`, `line` and `column` locate the problem (None when unknown)."
);

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

/// Runs a loaded scenario without holding the GIL, checking for Ctrl-C between
/// chunks of events; writes the run directory if `out` is given.
fn run_loaded<'py>(py: Python<'py>, sc: Scenario, out: Option<PathBuf>) -> PyResult<Bound<'py, PyDict>> {
    let (result, interrupt) = py.detach(move || {
        let mut interrupt: Option<PyErr> = None;
        let progress = |_: &csigsim::Progress| {
            // Signal handlers only run on the main thread with the GIL held, so
            // re-attach briefly; a pending KeyboardInterrupt stops the engine.
            match Python::attach(|py| py.check_signals()) {
                Ok(()) => true,
                Err(e) => {
                    interrupt = Some(e);
                    false
                }
            }
        };
        // An engine panic is a bug, but it should surface as a Python error,
        // not abort the interpreter's current statement with a PanicException.
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| csigsim::run(sc, progress)));
        (r.map_err(|p| panic_message(&*p)), interrupt)
    });
    if let Some(e) = interrupt {
        return Err(e);
    }
    let output = result.map_err(|m| PyRuntimeError::new_err(format!("csigsim internal error: {m}")))?;
    if let Some(dir) = out {
        // Same writer as the CLI, so both produce byte-identical run directories.
        py.detach(|| output.write_dir(&dir)).map_err(|e| {
            pyo3::exceptions::PyOSError::new_err(format!("cannot write the run directory {}: {e}", dir.display()))
        })?;
    }
    let summary_json = output.summary_json();
    let d = PyDict::new(py);
    d.set_item("summary_json", summary_json)?;
    d.set_item("flows_csv", output.flows_csv)?;
    d.set_item("links_csv", output.links_csv)?;
    d.set_item("signals_csv", output.signals_csv)?;
    d.set_item("cc_csv", output.cc_csv)?;
    d.set_item("scenario_toml", output.scenario_toml)?;
    Ok(d)
}

/// Loads scenario text and runs it; returns the output texts as a dict.
#[pyfunction]
#[pyo3(signature = (text, source="<string>", base_dir=None, seed=None, overrides=Vec::new(), out=None))]
fn run_toml<'py>(
    py: Python<'py>,
    text: &str,
    source: &str,
    base_dir: Option<PathBuf>,
    seed: Option<u64>,
    overrides: Vec<String>,
    out: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let ov = parse_overrides(py, &overrides)?;
    let base = base_dir.unwrap_or_else(|| PathBuf::from("."));
    let sc = scenario::load_str(text, source, &base, &ov, seed).map_err(|e| scenario_error(py, e))?;
    run_loaded(py, sc, out)
}

/// Loads a scenario file and runs it; returns the output texts as a dict.
#[pyfunction]
#[pyo3(signature = (path, seed=None, overrides=Vec::new(), out=None))]
fn run_file<'py>(
    py: Python<'py>,
    path: PathBuf,
    seed: Option<u64>,
    overrides: Vec<String>,
    out: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let ov = parse_overrides(py, &overrides)?;
    let sc = scenario::load_file(&path, &ov, seed).map_err(|e| scenario_error(py, e))?;
    run_loaded(py, sc, out)
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

/// The engine version (the one written into every summary).
#[pyfunction]
fn version() -> &'static str {
    csigsim::VERSION
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
    m.add_function(wrap_pyfunction!(run_toml, m)?)?;
    m.add_function(wrap_pyfunction!(run_file, m)?)?;
    m.add_function(wrap_pyfunction!(validate_toml, m)?)?;
    m.add_function(wrap_pyfunction!(validate_file, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
