//! `csigsim sweep`: runs the points of a sweep (`csigsim::sweep`: the sweep
//! file, the points and their ids, the sweep directory and its records) as
//! child `csigsim run` processes, up to `workers` at once.
//!
//! Child processes rather than threads: a point that crashes, runs out of
//! memory or is killed takes only itself down and is recorded, and a time
//! limit is a kill.

use csigsim::sweep::{self as lib, Entry, Owner, Point, State, Sweep, SweepDir};
use csigsim::InputError;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::VecDeque;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

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

impl From<lib::Error> for Error {
    fn from(e: lib::Error) -> Self {
        match e {
            lib::Error::Sweep(e) | lib::Error::Point(e) => Error::Input(e),
            lib::Error::Io(m) => Error::Internal(m),
        }
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

#[cfg(unix)]
fn exit_signal(s: &std::process::ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(s)
}

#[cfg(not(unix))]
fn exit_signal(_: &std::process::ExitStatus) -> Option<i32> {
    None
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

enum Outcome {
    Done { wall_s: f64 },
    Failed { reason: String, retry: bool },
}

struct Runner<'a> {
    sweep: &'a Sweep,
    dir: SweepDir,
    exe: PathBuf,
    owner: Owner,
}

impl Runner<'_> {
    /// Runs one attempt of a point and records it.
    fn attempt(&self, p: &Point, e: &Entry, attempt: u32) -> Outcome {
        let temp = match self.dir.begin(&p.id, attempt, &self.owner) {
            Ok(t) => t,
            Err(reason) => {
                self.dir.fail(e, attempt, &self.dir.temp(&p.id, attempt, self.owner.pid), &reason, None);
                return Outcome::Failed { reason, retry: true };
            }
        };
        let (outcome, wall_s) = self.run(p, attempt, &temp);
        match outcome {
            Outcome::Done { wall_s } => match self.dir.complete(e, attempt, &temp, &self.sweep.scenario.display().to_string(), wall_s) {
                Ok(()) => Outcome::Done { wall_s },
                Err(reason) => {
                    self.dir.fail(e, attempt, &temp, &reason, Some(wall_s));
                    Outcome::Failed { reason, retry: true }
                }
            },
            Outcome::Failed { reason, retry } => {
                self.dir.fail(e, attempt, &temp, &reason, wall_s);
                Outcome::Failed { reason, retry }
            }
        }
    }

    /// The child `csigsim run` of an attempt, into the attempt's run directory.
    fn run(&self, p: &Point, attempt: u32, temp: &lib::Temp) -> (Outcome, Option<f64>) {
        let fail = |reason: String| Outcome::Failed { reason, retry: true };
        let log = match std::fs::File::create(temp.stderr_log()) {
            Ok(f) => f,
            Err(e) => return (fail(format!("cannot create the log: {e}")), None),
        };
        let mut cmd = match self.sweep.wrapper.split_first() {
            Some((first, rest)) => {
                let mut c = Command::new(first);
                c.args(rest).arg(&self.exe);
                c
            }
            None => Command::new(&self.exe),
        };
        let run_dir = temp.run_dir();
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
            Err(e) => return (Outcome::Failed { reason: format!("cannot start {:?}: {e}", cmd.get_program()), retry: false }, None),
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
        let stderr = std::fs::read_to_string(temp.stderr_log()).unwrap_or_default();
        let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
        let outcome = match status {
            Err(e) => fail(format!("lost the point's process: {e}")),
            Ok(_) if timed_out => fail(lib::time_limit_reason(self.sweep.timeout.unwrap_or_default(), "killed")),
            // Exit 1 with a summary: the run finished but stalled or broke an
            // invariant; that is its (deterministic) result, shown in the table.
            Ok(s) if (s.success() || s.code() == Some(1)) && run_dir.join("summary.json").is_file() => Outcome::Done { wall_s },
            Ok(s) if s.code() == Some(2) => Outcome::Failed { reason: format!("bad input: {last}"), retry: false },
            Ok(s) => match (s.code(), exit_signal(&s)) {
                (_, Some(sig)) => fail(lib::signal_reason(sig)),
                (Some(c), _) => fail(format!("exit status {c}{}", if last.is_empty() { String::new() } else { format!(": {last}") })),
                _ => fail("ended without a status".into()),
            },
        };
        (outcome, Some(wall_s))
    }
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
    let mut sweep = lib::read(path)?;
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
    let dir = SweepDir::new(&sweep.out);
    if opts.status {
        print!("{}", dir.status_report(&sweep.name, &points));
        return Ok(());
    }
    let index = lib::Index::new(&sweep, &points);
    dir.prepare(&path.display().to_string(), &index)?;
    let entries = &index.points;
    let states = dir.states(entries);
    let already = states.iter().filter(|s| **s == State::Done).count();
    let first_attempt: Vec<u32> = points.iter().map(|p| dir.next_attempt(&p.id)).collect();
    // Another live sweep on this directory owns its running points.
    let todo: VecDeque<(usize, u32)> =
        states.iter().enumerate().filter(|(_, s)| **s == State::Failed || **s == State::Pending).map(|(i, _)| (i, first_attempt[i])).collect();
    let to_run = todo.len();
    let exe = std::env::current_exe().map_err(|e| Error::Internal(format!("cannot find the csigsim executable: {e}")))?;
    let runner = Runner { sweep: &sweep, dir: dir.clone(), exe, owner: Owner::this() };
    let bar = (!opts.quiet && std::io::stderr().is_terminal()).then(|| {
        let b = ProgressBar::with_draw_target(Some(points.len() as u64), ProgressDrawTarget::stderr());
        b.set_style(ProgressStyle::with_template("{bar:30} {pos}/{len} points | {msg} | {elapsed} elapsed, ETA {eta}").expect("template"));
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
                let outcome = runner.attempt(&points[i], &entries[i], attempt);
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
                        eprintln!("[{done}/{}] {} done in {wall_s:.2} s: {}", points.len(), points[i].id, points[i].describe());
                    }
                }
                Event::Failed(i, reason, again) => {
                    let line = format!("{} failed: {reason} ({}){}", points[i].id, points[i].describe(), if again { "; retrying" } else { "" });
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
    let table = dir.write_results_csv(&index.axes, entries).map_err(|e| Error::Internal(format!("cannot write results.csv: {e}")))?;
    let wall = started.elapsed().as_secs_f64();
    if !opts.quiet {
        println!("{}: {} points: {already} already done, {ran} run, {} failed in {wall:.2} s; table {}", sweep.name, points.len(), failed_now.len(), table.display());
    }
    if !failed_now.is_empty() {
        for (i, reason) in &failed_now {
            eprintln!("failed {} ({}): {reason}", points[*i].id, points[*i].describe());
        }
        return Err(Error::Reported);
    }
    Ok(())
}
