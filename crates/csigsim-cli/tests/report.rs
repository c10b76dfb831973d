//! `csigsim report` and `csigsim plot`: their refusals, and, where Python can
//! import the csigsim package, the page they write. The rendering in a real
//! browser is tested in python/tests/test_report.py.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn csigsim(args: &[&str], python: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_csigsim"));
    c.args(args);
    if let Some(p) = python {
        c.env("CSIGSIM_PYTHON", p);
    }
    c.output().expect("runs")
}

fn run_two(dir: &Path) -> (PathBuf, PathBuf) {
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/two_hosts.toml");
    let s = scenario.to_str().unwrap();
    let (a, b) = (dir.join("a"), dir.join("b"));
    assert!(csigsim(&["run", s, "--out", a.to_str().unwrap(), "--quiet"], None).status.success());
    assert!(csigsim(&["run", s, "--out", b.to_str().unwrap(), "--quiet", "--set", "transport.mtu=1024"], None).status.success());
    (a, b)
}

#[test]
fn report_and_plot_refuse_what_is_not_a_run_directory() {
    let dir = std::env::temp_dir().join(format!("csigsim-report-refuse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for cmd in ["report", "plot"] {
        let out = csigsim(&[cmd, dir.to_str().unwrap()], None);
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("summary.json"), "{cmd}");
    }
    let missing = csigsim(&["report"], None);
    assert_eq!(missing.status.code(), Some(2), "a run directory is required");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_python_the_commands_say_what_they_need() {
    let dir = std::env::temp_dir().join(format!("csigsim-report-nopy-{}", std::process::id()));
    let (a, _) = run_two(&dir);
    for cmd in ["report", "plot"] {
        let out = csigsim(&[cmd, a.to_str().unwrap()], Some("/nonexistent/python3"));
        assert_eq!(out.status.code(), Some(1), "{cmd}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("CSIGSIM_PYTHON") && err.contains("csigsim package"), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn report_of_two_runs_holds_the_comparison_of_compare() {
    // Python with the package installed (make python), else this test has nothing to drive.
    let importable = Command::new("python3").args(["-c", "import csigsim.report"]).output().is_ok_and(|o| o.status.success());
    if !importable {
        eprintln!("skipped: python3 cannot import csigsim.report (install the package: make python)");
        return;
    }
    let dir = std::env::temp_dir().join(format!("csigsim-report-{}", std::process::id()));
    let (a, b) = run_two(&dir);
    let page = dir.join("r.html");
    let out = csigsim(&["report", a.to_str().unwrap(), b.to_str().unwrap(), "--out", page.to_str().unwrap()], None);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    let cmp = csigsim(&["compare", a.to_str().unwrap(), b.to_str().unwrap(), "--json"], None);
    let v: serde_json::Value = serde_json::from_slice(&cmp.stdout).unwrap();
    // The figures of compare, in the report's table: a row per figure.
    let figures = &html[html.find("<table class=\"figures\">").expect("the figures' table")..];
    let figures = &figures[..figures.find("</table>").unwrap()];
    for m in v.as_object().unwrap().keys() {
        assert!(figures.contains(&format!("<code>{m}</code>")), "{m}");
    }
    // The key that differs, and an interactive FCT CDF with one line per run.
    assert!(html.contains("<code>transport.mtu</code>"));
    assert!(html.contains("data-figure=\"fct_cdf\""));
    assert!(!html.contains("src=\"http"));
    // The default page of one run is RUN/report.html; plot writes RUN/plots/.
    assert!(csigsim(&["report", a.to_str().unwrap()], None).status.success());
    assert!(a.join("report.html").is_file());
    assert!(csigsim(&["plot", a.to_str().unwrap()], None).status.success());
    assert!(a.join("plots/fct_cdf.png").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}
