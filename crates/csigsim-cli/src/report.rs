//! `csigsim report RUN [RUN ...]` and `csigsim plot RUN [OUT_DIR]`: the
//! figures and the HTML report are drawn by the Python package (matplotlib),
//! so these commands run `python3 -m csigsim.report` / `-m csigsim.plot`.
//! The report's comparison comes from `compare.rs`, passed on stdin, so the
//! CLI's `compare` and the report never disagree.

use crate::{compare, Failure};
use csigsim::InputError;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The Python interpreter: `CSIGSIM_PYTHON`, else `python3`.
pub(crate) fn python() -> String {
    std::env::var("CSIGSIM_PYTHON").ok().filter(|s| !s.is_empty()).unwrap_or_else(|| "python3".into())
}

/// A run directory must hold summary.json (as for `compare`).
fn check_run(dir: &Path) -> Result<(), Failure> {
    let summary = dir.join("summary.json");
    if !summary.is_file() {
        let file = summary.display().to_string();
        return Err(Failure::Input(InputError::new(&file, None, None, "not a run directory: no summary.json")));
    }
    Ok(())
}

/// Runs `python -m MODULE ARGS`, feeding `stdin`; stdout and stderr go to ours.
fn run_python(module: &str, args: &[String], stdin: Option<String>) -> Result<(), Failure> {
    let py = python();
    let mut cmd = Command::new(&py);
    cmd.arg("-m").arg(module).args(args).stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    let mut child = cmd.spawn().map_err(|e| {
        Failure::Internal(format!(
            "cannot start {py} ({e}): `csigsim {}` needs Python 3 with the csigsim package (pip install ./python); \
             set CSIGSIM_PYTHON to the interpreter",
            module.trim_start_matches("csigsim.")
        ))
    })?;
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(text.as_bytes()).map_err(|e| Failure::Internal(format!("cannot write to {py}: {e}")))?;
    }
    let status = child.wait().map_err(|e| Failure::Internal(format!("{py}: {e}")))?;
    if !status.success() {
        return Err(Failure::Internal(format!(
            "{py} -m {module} failed ({status}); is the csigsim Python package installed (pip install ./python)?"
        )));
    }
    Ok(())
}

/// The comparison of each later run against the first, as JSON for `csigsim.report`.
pub(crate) fn comparisons(runs: &[PathBuf]) -> Result<String, Failure> {
    let mut all = Vec::new();
    for b in &runs[1..] {
        let rows = compare::compare(&runs[0], b)?;
        let rows: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| serde_json::json!({ "metric": r.metric, "a": r.a, "b": r.b, "ratio": compare::ratio(r) }))
            .collect();
        all.push(serde_json::json!({ "a": runs[0].display().to_string(), "b": b.display().to_string(), "rows": rows }));
    }
    Ok(serde_json::Value::Array(all).to_string())
}

/// `csigsim report`: one HTML file (default RUN/report.html, the first run's directory).
pub fn cmd_report(runs: &[PathBuf], out: Option<PathBuf>) -> Result<(), Failure> {
    for r in runs {
        check_run(r)?;
    }
    let out = out.unwrap_or_else(|| runs[0].join("report.html"));
    let mut args: Vec<String> = runs.iter().map(|r| r.display().to_string()).collect();
    args.push("--out".into());
    args.push(out.display().to_string());
    let stdin = if runs.len() > 1 {
        args.push("--compare".into());
        args.push("-".into());
        Some(comparisons(runs)?)
    } else {
        None
    };
    run_python("csigsim.report", &args, stdin)
}

/// `csigsim plot`: a PNG of every plot that applies (default RUN/plots/).
pub fn cmd_plot(run: &Path, out: Option<PathBuf>) -> Result<(), Failure> {
    check_run(run)?;
    let out = out.unwrap_or_else(|| run.join("plots"));
    run_python("csigsim.plot", &[run.display().to_string(), out.display().to_string()], None)
}
