//! `csigsim repro`: runs the source documents' experiments
//! (`csigsim_experiments::repro`), writes every variant's run directory and
//! a result per experiment, and prints the source's figure beside csigsim's.

use crate::Failure;
use csigsim_experiments::repro::{experiments, Experiment};
use csigsim::{InputError, RunOutput};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::io::Write;
use std::sync::Mutex;

/// One variant's run, for the worker pool.
struct Job<'a> {
    exp: &'a Experiment,
    variant: usize,
}

pub fn cmd_repro(ids: &[String], out: &Path, quick: bool, json: bool, jobs: usize, report: bool) -> Result<(), Failure> {
    let all = experiments();
    for id in ids {
        if !all.iter().any(|e| e.id.eq_ignore_ascii_case(id)) {
            let names: Vec<&str> = all.iter().map(|e| e.id).collect();
            return Err(Failure::Input(InputError::new("ID", None, None, format!("unknown experiment \"{id}\"; experiments: {}", names.join(", ")))));
        }
    }
    crate::check_out(out)?;
    let chosen: Vec<&Experiment> = all.iter().filter(|e| ids.is_empty() || ids.iter().any(|i| e.id.eq_ignore_ascii_case(i))).collect();
    // The experiments' trace files, written once beside the run directories.
    let files = out.join(".files");
    let internal = |what: &str, e: std::io::Error| Failure::Internal(format!("cannot write {what}: {e}"));
    std::fs::create_dir_all(&files).map_err(|e| internal(&files.display().to_string(), e))?;
    for e in &chosen {
        e.write_files(&files).map_err(|err| internal(&files.display().to_string(), err))?;
    }
    // Every variant of every chosen experiment, run side by side on `jobs` threads.
    let queue: Vec<Job> = chosen.iter().flat_map(|e| (0..e.variants.len()).map(move |variant| Job { exp: e, variant })).collect();
    let next = Mutex::new(0usize);
    let results: Mutex<Vec<Option<RunOutput>>> = Mutex::new((0..queue.len()).map(|_| None).collect());
    let failure: Mutex<Option<Failure>> = Mutex::new(None);
    if !json {
        eprintln!("running {} runs of {} experiments on {} threads{}", queue.len(), chosen.len(), jobs, if quick { " (quick form)" } else { "" });
    }
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().expect("no worker panics while holding it");
                    let i = *n;
                    *n += 1;
                    i
                };
                let Some(job) = queue.get(i) else { break };
                let v = &job.exp.variants[job.variant];
                let sc = match job.exp.load(v, quick, &files) {
                    Ok(sc) => sc,
                    Err(e) => {
                        *failure.lock().expect("unpoisoned") = Some(Failure::Internal(format!("{} {}: {e}", job.exp.id, v.name)));
                        break;
                    }
                };
                let dir = out.join(job.exp.id).join(v.name);
                // Owned as `csigsim run` owns its directory: locked, checked,
                // published whole (docs/outputs.md).
                let written = csigsim::output::RunDir::create(&dir).map(|d| (d, csigsim::run(sc, |_| true)));
                let written = match written {
                    Ok((d, output)) => d.commit(&output).map(|_| output).map_err(|e| internal(&dir.display().to_string(), e)),
                    Err(e) => Err(Failure::Input(InputError::new("--out", None, None, e.to_string()))),
                };
                let output = match written {
                    Ok(o) => o,
                    Err(f) => {
                        *failure.lock().expect("unpoisoned") = Some(f);
                        break;
                    }
                };
                if !json {
                    eprintln!("  {} {:<10} done: {} of {} flows, {:.1} ms simulated", job.exp.id, v.name, output.summary.flows_completed, output.summary.flows_total, output.summary.sim_time_ns / 1e6);
                }
                results.lock().expect("unpoisoned")[i] = Some(output);
            });
        }
    });
    if let Some(f) = failure.into_inner().expect("unpoisoned") {
        return Err(f);
    }
    let _ = std::fs::remove_dir_all(&files);
    let results = results.into_inner().expect("unpoisoned");
    // The HTML report needs the Python package; without it, a note.
    let python_ok = report && python_has_report();
    let mut rows = Vec::new();
    let mut k = 0;
    for e in &chosen {
        let figs: Vec<csigsim_experiments::repro::Figures> = (0..e.variants.len())
            .map(|j| (e.figures)(results[k + j].as_ref().expect("every job ran")))
            .collect();
        k += e.variants.len();
        let (figure, reproduced) = (e.verdict)(&figs);
        let variants: serde_json::Map<String, serde_json::Value> = e
            .variants
            .iter()
            .zip(&figs)
            .map(|(v, f)| (v.name.to_string(), serde_json::Value::Object(f.iter().map(|(n, x)| (n.to_string(), serde_json::json!(x))).collect())))
            .collect();
        let mut row = serde_json::json!({
            "id": e.id,
            "source": e.source,
            "title": e.title,
            "scenario": format!("scenarios/{}", e.scenario),
            "quick": quick,
            "source_figure": e.source_figure,
            "csigsim_figure": figure,
            "direction_reproduced": reproduced,
            "variants": variants,
        });
        let report_note = if !report {
            serde_json::json!({ "skipped": "--no-report" })
        } else if !python_ok {
            serde_json::json!({ "skipped": format!("{} cannot import csigsim.report (pip install ./python)", crate::report::python()) })
        } else {
            let dirs: Vec<PathBuf> = e.variants.iter().map(|v| out.join(e.id).join(v.name)).collect();
            let html = out.join(e.id).join("report.html");
            if !json {
                eprintln!("  {} writing {}", e.id, html.display());
            }
            match write_report(&dirs, &html) {
                Ok(()) => serde_json::json!({ "file": "report.html" }),
                Err(why) => serde_json::json!({ "skipped": why }),
            }
        };
        row["report"] = report_note;
        let path = out.join(e.id).join("result.json");
        std::fs::write(&path, serde_json::to_string_pretty(&row).expect("json") + "\n").map_err(|err| internal(&path.display().to_string(), err))?;
        rows.push(row);
    }
    let path = out.join("repro.json");
    std::fs::write(&path, serde_json::to_string_pretty(&rows).expect("json") + "\n").map_err(|err| internal(&path.display().to_string(), err))?;
    if json {
        println!("{}", serde_json::Value::Array(rows));
    } else {
        for r in &rows {
            println!("{} ({}): {}", r["id"].as_str().unwrap_or(""), r["source"].as_str().unwrap_or(""), r["title"].as_str().unwrap_or(""));
            println!("  source:  {}", r["source_figure"].as_str().unwrap_or(""));
            println!("  csigsim: {}", r["csigsim_figure"].as_str().unwrap_or(""));
            println!("  {}", verdict_line(r["direction_reproduced"].as_bool() == Some(true), quick));
            match (r["report"]["file"].as_str(), r["report"]["skipped"].as_str()) {
                (Some(f), _) => println!("  report: {}", out.join(r["id"].as_str().unwrap_or("")).join(f).display()),
                (None, Some(why)) => println!("  report: not written ({why})"),
                _ => {}
            }
        }
        let same = rows.iter().filter(|r| r["direction_reproduced"].as_bool() == Some(true)).count();
        println!("{}", tally_line(same, rows.len(), quick));
        println!("results in {}", out.display());
    }
    Ok(())
}

/// An experiment's verdict. The quick form's runs are too short to judge
/// a direction: it says what it saw, and that it is no verdict.
fn verdict_line(reproduced: bool, quick: bool) -> String {
    match (quick, reproduced) {
        (false, true) => "direction reproduced: yes".into(),
        (false, false) => "direction reproduced: NO".into(),
        (true, same) => format!(
            "direction in the quick form: {} (no verdict: the quick form's runs are too short; run without --quick)",
            if same { "as the source's" } else { "not the source's" }
        ),
    }
}

/// The last line: how many directions are the sources'.
fn tally_line(same: usize, all: usize, quick: bool) -> String {
    if quick {
        format!("quick form: {same} of {all} directions as the sources'; the verdicts are the full form's (csigsim repro without --quick, docs/reproductions.md)")
    } else {
        format!("{same} of {all} directions reproduced")
    }
}


/// Whether the Python interpreter can import the report module.
fn python_has_report() -> bool {
    Command::new(crate::report::python())
        .args(["-c", "import csigsim.report"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `csigsim report` of an experiment's variants into `html`, the later
/// variants compared with the first; Python's output goes to stderr so that
/// `--json` keeps stdout to itself. A failure is a note, not an error: the
/// runs and results are written.
fn write_report(dirs: &[PathBuf], html: &Path) -> Result<(), String> {
    let mut args: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    args.extend(["--out".to_string(), html.display().to_string()]);
    let stdin = if dirs.len() > 1 {
        args.extend(["--compare".to_string(), "-".to_string()]);
        Some(crate::report::comparisons(dirs).map_err(|_| "the runs cannot be compared".to_string())?)
    } else {
        None
    };
    let py = crate::report::python();
    let mut child = Command::new(&py)
        .arg("-m")
        .arg("csigsim.report")
        .args(&args)
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start {py}: {e}"))?;
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(text.as_bytes()).map_err(|e| format!("cannot write to {py}: {e}"))?;
    }
    let status = child.wait().map_err(|e| format!("{py}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{py} -m csigsim.report failed ({status})"))
    }
}

#[cfg(test)]
mod tests {
    use super::{tally_line, verdict_line};

    #[test]
    fn the_quick_form_gives_no_verdict() {
        assert_eq!(verdict_line(false, false), "direction reproduced: NO");
        assert_eq!(verdict_line(true, false), "direction reproduced: yes");
        for same in [true, false] {
            let l = verdict_line(same, true);
            assert!(l.contains("no verdict") && !l.contains("NO") && !l.contains("reproduced"), "{l}");
        }
        assert!(tally_line(5, 9, true).contains("5 of 9") && tally_line(5, 9, true).contains("without --quick"));
        assert_eq!(tally_line(7, 9, false), "7 of 9 directions reproduced");
    }
}
