//! `csigsim sweep` as a user runs it: idempotent reruns, reruns of changed
//! points only, a killed point recorded and rerun, bad sweep files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_csigsim"))
}

fn two_hosts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/two_hosts.toml").canonicalize().unwrap()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("csigsim-sweep-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A sweep file in `dir` over two_hosts.toml with `rest` appended.
fn sweep_file(dir: &Path, rest: &str) -> PathBuf {
    let f = dir.join("sweep.toml");
    let text = format!("scenario = {:?}\nout = {:?}\n{rest}", two_hosts().display().to_string(), dir.join("out").display().to_string());
    std::fs::write(&f, text).unwrap();
    f
}

fn sweep(file: &Path, extra: &[&str]) -> Output {
    bin().arg("sweep").arg(file).args(extra).output().unwrap()
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn index(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json")).unwrap()).unwrap()
}

fn point_json(out: &Path, id: &str) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("points").join(id).join("point.json")).unwrap()).unwrap()
}

/// (id, mtu, seed) of every point of the sweep.
fn points(out: &Path) -> Vec<(String, i64, u64)> {
    index(out)["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap().to_string(), p["axes"]["transport.mtu"].as_i64().unwrap(), p["seed"].as_u64().unwrap()))
        .collect()
}

fn finished(out: &Path, id: &str) -> f64 {
    point_json(out, id)["attempts"].as_array().unwrap().last().unwrap()["finished"].as_f64().unwrap()
}

#[test]
fn a_rerun_runs_nothing_and_a_changed_value_reruns_only_its_points() {
    let dir = tmp("rerun");
    let out = dir.join("out");
    let axis = |values: &str| format!("seeds = [1, 2]\nworkers = 2\n[[axis]]\nkey = \"transport.mtu\"\nvalues = {values}\n");
    let f = sweep_file(&dir, &axis("[1024, 2048]"));
    let r = sweep(&f, &[]);
    assert!(r.status.success(), "{}", text(&r));
    assert!(text(&r).contains("0 already done, 4 run, 0 failed"), "{}", text(&r));
    let first = points(&out);
    assert_eq!(first.len(), 4);
    for (id, mtu, seed) in &first {
        let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("points").join(id).join("summary.json")).unwrap()).unwrap();
        assert_eq!(s["seed"].as_u64(), Some(*seed));
        let sc = std::fs::read_to_string(out.join("points").join(id).join("scenario.toml")).unwrap();
        assert!(sc.contains(&format!("mtu = {mtu}")), "{sc}");
    }
    let stamps: Vec<f64> = first.iter().map(|p| finished(&out, &p.0)).collect();

    // The same file again: every point is complete, nothing runs.
    let r = sweep(&f, &[]);
    assert!(r.status.success(), "{}", text(&r));
    assert!(text(&r).contains("4 already done, 0 run, 0 failed"), "{}", text(&r));
    assert_eq!(first.iter().map(|p| finished(&out, &p.0)).collect::<Vec<_>>(), stamps);

    // 2048 -> 3072: only the two points with the new value run.
    sweep_file(&dir, &axis("[1024, 3072]"));
    let r = sweep(&f, &[]);
    assert!(r.status.success(), "{}", text(&r));
    assert!(text(&r).contains("2 already done, 2 run, 0 failed"), "{}", text(&r));
    let second = points(&out);
    assert_eq!(&second[..2], &first[..2], "the unchanged points keep their ids");
    assert!(second[2..].iter().all(|p| p.1 == 3072 && !first.iter().any(|q| q.0 == p.0)));
    assert_eq!(finished(&out, &first[0].0), stamps[0]);
    assert_eq!(finished(&out, &first[1].0), stamps[1]);
    // The table has every point of the sweep once, in order.
    let table = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let ids: Vec<&str> = table.lines().skip(1).map(|l| l.split(',').next().unwrap()).collect();
    assert_eq!(ids, second.iter().map(|p| p.0.as_str()).collect::<Vec<_>>());
    assert!(table.lines().next().unwrap().starts_with("id,seed,transport.mtu,"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn comments_and_key_order_do_not_change_a_point_id() {
    let dir = tmp("ids");
    let a = sweep_file(&dir, "[set]\n\"transport.ack_every\" = 2\n\"monitor.window\" = \"20us\"\n");
    let r = sweep(&a, &[]);
    assert!(r.status.success(), "{}", text(&r));
    let id = points_any(&dir.join("out"));
    // The same overrides in another order and form.
    let b = sweep_file(&dir, "# a comment\n[set.monitor]\nwindow = \"20us\"\n[set.transport]\nack_every = 2\n");
    let r = sweep(&b, &[]);
    assert!(r.status.success(), "{}", text(&r));
    assert!(text(&r).contains("1 already done, 0 run"), "{}", text(&r));
    assert_eq!(points_any(&dir.join("out")), id);
    let _ = std::fs::remove_dir_all(&dir);
}

fn points_any(out: &Path) -> Vec<String> {
    index(out)["points"].as_array().unwrap().iter().map(|p| p["id"].as_str().unwrap().to_string()).collect()
}

fn wrapper(dir: &Path, body: &str) -> String {
    let w = dir.join("wrap.sh");
    std::fs::write(&w, format!("#!/bin/sh\n{body}\nexec \"$@\"\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&w, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    w.display().to_string()
}

#[cfg(unix)]
#[test]
fn a_point_killed_mid_sweep_is_recorded_and_rerun() {
    let dir = tmp("kill");
    let out = dir.join("out");
    // The first attempt of (mtu 2048, seed 1) becomes a process that waits
    // for this test to SIGKILL it; every other point runs as usual.
    let w = wrapper(
        &dir,
        &format!(
            "case \"$*\" in *\"--seed 1 \"*transport.mtu=2048*) if [ \"$CSIGSIM_SWEEP_ATTEMPT\" = 1 ]; then echo $$ > {0}/victim.tmp; mv {0}/victim.tmp {0}/victim.pid; exec sleep 120; fi;; esac",
            dir.display()
        ),
    );
    let f = sweep_file(
        &dir,
        &format!("seeds = [1, 2]\nworkers = 2\nretries = 0\ntimeout = \"100s\"\nwrapper = [{w:?}]\n[[axis]]\nkey = \"transport.mtu\"\nvalues = [1024, 2048]\n"),
    );
    let child = bin().arg("sweep").arg(&f).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let pid_file = dir.join("victim.pid");
    let mut waited = 0;
    while !pid_file.exists() {
        std::thread::sleep(std::time::Duration::from_millis(20));
        waited += 1;
        assert!(waited < 5000, "the victim point never started");
    }
    // While it waits, --status sees it running (with at most one other).
    let st = sweep(&f, &["--status"]);
    let running = text(&st).lines().find_map(|l| l.trim().strip_prefix("running").map(|n| n.trim().parse::<u32>().unwrap())).unwrap();
    assert!((1..=2).contains(&running), "{}", text(&st));
    let pid: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    // SAFETY: sends a signal to the point's process, which this test set up to wait for it.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let r = child.wait_with_output().unwrap();
    assert_eq!(r.status.code(), Some(1), "a sweep with a failed point exits 1: {}", text(&r));
    assert!(text(&r).contains("killed by signal 9 (SIGKILL)"), "{}", text(&r));
    let st = sweep(&f, &["--status"]);
    let s = text(&st);
    assert!(s.contains("done     3") && s.contains("failed   1") && s.contains("pending  0"), "{s}");
    assert!(s.contains("attempt 1: killed by signal 9 (SIGKILL)"), "{s}");
    assert!(!out.join("tmp").read_dir().unwrap().any(|_| true), "nothing left in tmp/");

    // The rerun runs only the killed point, and every point has its result.
    let r = sweep(&f, &[]);
    assert!(r.status.success(), "{}", text(&r));
    assert!(text(&r).contains("3 already done, 1 run, 0 failed"), "{}", text(&r));
    let pts = points(&out);
    let victim = pts.iter().find(|p| p.1 == 2048 && p.2 == 1).unwrap();
    let attempts = point_json(&out, &victim.0)["attempts"].as_array().unwrap().clone();
    assert_eq!(attempts.len(), 2);
    assert_eq!(attempts[0]["status"], "failed");
    assert_eq!(attempts[0]["reason"], "killed by signal 9 (SIGKILL)");
    assert_eq!(attempts[1]["status"], "done");
    assert!(!out.join("failed").join(format!("{}.json", victim.0)).exists());
    for p in &pts {
        assert!(out.join("points").join(&p.0).join("summary.json").is_file());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn a_dead_point_is_retried_within_the_sweep_and_a_slow_one_hits_its_time_limit() {
    let dir = tmp("retry");
    let out = dir.join("out");
    // mtu 2048 kills itself on its first attempt; mtu 3072 never finishes.
    let w = wrapper(
        &dir,
        "case \"$*\" in *transport.mtu=2048*) [ \"$CSIGSIM_SWEEP_ATTEMPT\" = 1 ] && kill -9 $$;; *transport.mtu=3072*) exec sleep 60;; esac",
    );
    let f = sweep_file(
        &dir,
        &format!("retries = 1\ntimeout = \"300ms\"\nwrapper = [{w:?}]\n[[axis]]\nkey = \"transport.mtu\"\nvalues = [1024, 2048, 3072]\n"),
    );
    let r = sweep(&f, &[]);
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    let pts = points(&out);
    let retried = &pts[1].0;
    let a = point_json(&out, retried)["attempts"].as_array().unwrap().clone();
    assert_eq!(a.len(), 2, "{a:?}");
    assert_eq!(a[0]["reason"], "killed by signal 9 (SIGKILL)");
    let slow: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("failed").join(format!("{}.json", pts[2].0))).unwrap()).unwrap();
    let a = slow["attempts"].as_array().unwrap();
    assert_eq!(a.len(), 2, "tried, then retried once: {a:?}");
    assert!(a.iter().all(|x| x["reason"] == "time limit of 0.3s exceeded (killed)"), "{a:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn bad(name: &str, rest: &str, needles: &[&str]) {
    let dir = tmp(name);
    let f = sweep_file(&dir, rest);
    let r = sweep(&f, &[]);
    assert_eq!(r.status.code(), Some(2), "{name}: {}", text(&r));
    let e = String::from_utf8_lossy(&r.stderr).to_string();
    for n in needles {
        assert!(e.contains(n), "{name}: {n:?} missing from: {e}");
    }
    assert!(!dir.join("out").exists(), "{name}: nothing runs");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_sweep_files_exit_2_naming_the_key() {
    bad("unknown", "sedes = [1]\n", &["sweep.toml:3:1: key `sedes`", "unknown key"]);
    bad("nokey", "[[axis]]\nvalues = [1]\n", &["key `axis[0].key`", "missing"]);
    bad("novalues", "[[axis]]\nkey = \"transport.mtu\"\n", &["key `axis[0].values`"]);
    bad("range", "[[axis]]\nkey = \"transport.mtu\"\nrange = { start = 1, stop = 10 }\n", &["key `axis[0].range`", "step and count"]);
    bad("step", "[[axis]]\nkey = \"transport.mtu\"\nrange = { start = 10, stop = 1, step = 1 }\n", &["key `axis[0].range.step`"]);
    bad(
        "zip",
        "mode = \"zip\"\n[[axis]]\nkey = \"transport.mtu\"\nvalues = [1, 2]\n[[axis]]\nkey = \"transport.ack_every\"\nvalues = [1]\n",
        &["key `axis[1].values`", "zipped"],
    );
    bad("seeds", "seeds = [1, -2]\n", &["key `seeds`"]);
    bad("retries", "retries = \"x\"\n", &["key `retries`"]);
    bad("timeout", "timeout = \"soon\"\n", &["key `timeout`"]);
    bad("twice", "[[axis]]\nkey = \"transport.mtu\"\nvalues = [1]\n[[axis]]\nkey = \"transport.mtu\"\nvalues = [2]\n", &["key `axis[1].key`", "already"]);
    bad("mode", "mode = \"diagonal\"\n", &["key `mode`"]);
    // A value the scenario refuses: the scenario's key and the point.
    bad("value", "[[axis]]\nkey = \"transport.mtu\"\nvalues = [1024, 0]\n", &["key `transport.mtu`", "mtu must be above zero", "point transport.mtu=0 seed=1"]);
    bad("dup", "[[axis]]\nkey = \"transport.mtu\"\nvalues = [1024, 1024]\n", &["same scenario"]);
    bad("syntax", "seeds = [1\n", &["TOML syntax error"]);
    let dir = tmp("noscenario");
    let f = dir.join("s.toml");
    std::fs::write(&f, "scenario = \"missing.toml\"\n").unwrap();
    let r = sweep(&f, &[]);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("key `scenario`"), "{}", text(&r));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The process ids whose parent is `parent`, from /proc.
#[cfg(target_os = "linux")]
fn children_of(parent: u32) -> Vec<u32> {
    let mut v = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else { continue };
        // pid (comm) state ppid ...: the command name may hold spaces.
        let rest = stat.rsplit_once(')').map_or("", |r| r.1);
        if rest.split_whitespace().nth(1).and_then(|p| p.parse::<u32>().ok()) == Some(parent) {
            v.push(pid);
        }
    }
    v
}

/// Whether a process still runs (a zombie waiting for its new parent to
/// reap it does not).
#[cfg(target_os = "linux")]
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.rsplit_once(')').and_then(|r| r.1.split_whitespace().next()) != Some("Z"))
}

/// A sweep killed with SIGKILL takes its running points with it: they get
/// SIGTERM from the kernel as their parent dies, and are gone within a
/// second or two, not left running for the rest of their (long) runs.
#[cfg(target_os = "linux")]
#[test]
fn a_killed_sweep_takes_its_workers_with_it() {
    let dir = tmp("orphans");
    // Two points that would each run for minutes.
    let f = sweep_file(&dir, "seeds = [1, 2]\nworkers = 2\nretries = 0\n[set]\n\"flow[0].size\" = \"1000GB\"\n");
    let mut driver = bin().arg("sweep").arg(&f).arg("--quiet").stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap();
    let started = std::time::Instant::now();
    let workers = loop {
        let w = children_of(driver.id());
        if w.len() == 2 {
            break w;
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(30), "the points never started: {w:?}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    // They are running, and stay so while the sweep lives.
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(workers.iter().all(|&p| running(p)), "the points ended early");
    driver.kill().unwrap();
    driver.wait().unwrap();
    let killed = std::time::Instant::now();
    while workers.iter().any(|&p| running(p)) {
        assert!(killed.elapsed() < std::time::Duration::from_secs(2), "points still running 2 s after their sweep was killed: {workers:?}");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    println!("points gone {} ms after the sweep was killed", killed.elapsed().as_millis());
    // The next sweep cleans what they left and runs them (short this time).
    std::fs::write(&f, std::fs::read_to_string(&f).unwrap().replace("1000GB", "10KB")).unwrap();
    let r = sweep(&f, &[]);
    assert!(r.status.success(), "{}", text(&r));
    assert!(!dir.join("out/tmp").read_dir().unwrap().any(|_| true), "nothing left in tmp/");
    let _ = std::fs::remove_dir_all(&dir);
}
