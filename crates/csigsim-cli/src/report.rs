//! `csigsim report RUN [RUN ...]` and `csigsim plot RUN [OUT_DIR]`: the
//! figures and the HTML report are drawn by the Python package (matplotlib),
//! so these commands run `python3 -m csigsim.report` / `-m csigsim.plot`.
//! The report's figures and comparison come from `compare.rs`, passed on
//! stdin, so the CLI's `compare` and the report never disagree.

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

/// The comparison of every run with the first, as JSON for `csigsim.report`:
/// `{"runs": [dir, ...], "rows": [{"metric", "values", "ratios",
/// "verdicts", "better"}, ...]}`.
pub(crate) fn comparisons(runs: &[PathBuf]) -> Result<String, Failure> {
    let paths: Vec<&Path> = runs.iter().map(PathBuf::as_path).collect();
    let rows = compare::compare(&paths)?;
    let rows: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            let n = r.values.len();
            serde_json::json!({
                "metric": r.metric,
                "values": r.values,
                "ratios": (0..n).map(|i| if i == 0 { None } else { r.ratio(i) }).collect::<Vec<_>>(),
                "verdicts": (0..n).map(|i| if i == 0 { None } else { r.verdict(i) }).collect::<Vec<_>>(),
                "better": r.better.name(),
            })
        })
        .collect();
    let names: Vec<String> = runs.iter().map(|r| r.display().to_string()).collect();
    Ok(serde_json::json!({ "runs": names, "rows": rows }).to_string())
}

/// `csigsim report`: one HTML file (default RUN/report.html, the first run's directory).
pub fn cmd_report(runs: &[PathBuf], out: Option<PathBuf>, labels: &[String]) -> Result<(), Failure> {
    for r in runs {
        check_run(r)?;
    }
    if !labels.is_empty() && labels.len() != runs.len() {
        return Err(Failure::Input(InputError::new(
            "--label",
            None,
            None,
            format!("give one --label per run: {} for {} runs", labels.len(), runs.len()),
        )));
    }
    let out = out.unwrap_or_else(|| runs[0].join("report.html"));
    let mut args: Vec<String> = runs.iter().map(|r| r.display().to_string()).collect();
    args.push("--out".into());
    args.push(out.display().to_string());
    for l in labels {
        args.push("--label".into());
        args.push(l.clone());
    }
    // The figures of `compare`, also for one run: its leading figures.
    args.push("--compare".into());
    args.push("-".into());
    run_python("csigsim.report", &args, Some(comparisons(runs)?))
}

/// `csigsim plot`: a PNG of every plot that applies (default RUN/plots/).
pub fn cmd_plot(run: &Path, out: Option<PathBuf>) -> Result<(), Failure> {
    check_run(run)?;
    let out = out.unwrap_or_else(|| run.join("plots"));
    run_python("csigsim.plot", &[run.display().to_string(), out.display().to_string()], None)
}
