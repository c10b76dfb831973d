//! Parameter sweeps (docs/sweeps.md): a base scenario crossed (or zipped)
//! with axes of `--set` values and seeds, each point run once into a
//! directory named by a hash of its resolved scenario.
//!
//! This module is the one definition of a sweep that `csigsim sweep` and
//! Python's `csigsim.sweep` share: the sweep file ([`parse`]), its points
//! ([`Sweep::points`], [`point_id`]), the sweep directory, each point's state
//! and the records of its attempts ([`SweepDir`]), the clean-up of what dead
//! sweeps left, and the results table. What runs a point (a child process
//! of the command, a forked Python process, a Ray task, a Slurm job) is the
//! caller's; it asks [`SweepDir::begin`] for the directory to run into and
//! reports with [`SweepDir::complete`] or [`SweepDir::fail`].

mod dir;
mod file;
mod id;
mod points;

pub use dir::{hostname, now_s, Entry, Index, Owner, State, SweepDir, Table, Temp};
pub use file::{parse, parse_duration, read, Source};
pub use id::point_id;

use crate::scenario::InputError;
use std::path::PathBuf;
use std::time::Duration;

/// A parsed sweep file.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The sweep file, as given; `None` for a sweep given as data (Python's dict).
    pub file: Option<PathBuf>,
    pub name: String,
    /// The base scenario (relative to the working directory, or absolute).
    pub scenario: PathBuf,
    /// The sweep directory.
    pub out: PathBuf,
    pub seeds: Option<Vec<u64>>,
    /// `[set]`: (key, value as TOML text), fixed for every point.
    pub set: Vec<(String, String)>,
    pub axes: Vec<Axis>,
    pub retries: u32,
    /// Points at once; 0: every core (the runner decides).
    pub workers: usize,
    pub timeout: Option<Duration>,
    /// The command each of the command line's point processes runs under.
    pub wrapper: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct Axis {
    pub key: String,
    /// Each value as TOML text (what `--set KEY=VALUE` takes).
    pub values: Vec<String>,
    /// Axes of the same group are zipped; groups are crossed.
    pub group: String,
}

/// One point: its id, seed, axis values and overrides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Point {
    pub id: String,
    pub seed: u64,
    /// (axis key, value as TOML text), in axis order.
    pub axes: Vec<(String, String)>,
    /// Every override, the fixed ones first: `KEY=VALUE`.
    pub overrides: Vec<String>,
}

impl Point {
    /// `key=value ... seed=S`, as messages name a point.
    pub fn describe(&self) -> String {
        describe(&self.axes, self.seed)
    }
}

fn describe(axes: &[(String, String)], seed: u64) -> String {
    let mut d: Vec<String> = axes.iter().map(|(k, v)| format!("{k}={v}")).collect();
    d.push(format!("seed={seed}"));
    d.join(" ")
}

/// Why a sweep cannot start. Both input errors are the user's to fix
/// (exit status 2 from the command line); Python raises `SweepError` for
/// the first and `ScenarioError` for the second.
#[derive(Debug)]
pub enum Error {
    /// The sweep itself: its file, a key of it, its directory.
    Sweep(InputError),
    /// A point's scenario does not load (the message names the point).
    Point(InputError),
    /// Reading or writing the sweep directory failed.
    Io(String),
}

impl Error {
    pub fn input(&self) -> Option<&InputError> {
        match self {
            Error::Sweep(e) | Error::Point(e) => Some(e),
            Error::Io(_) => None,
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Sweep(e) | Error::Point(e) => e.fmt(f),
            Error::Io(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

impl From<InputError> for Error {
    fn from(e: InputError) -> Self {
        Error::Sweep(e)
    }
}

/// A time limit as the records give it: `90s`, `30m`, `2h`, `0.3s`.
pub fn fmt_duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 3600.0 && s % 3600.0 == 0.0 {
        format!("{}h", s / 3600.0)
    } else if s >= 60.0 && s % 60.0 == 0.0 {
        format!("{}m", s / 60.0)
    } else {
        format!("{s}s")
    }
}

/// The reason recorded for a point whose process a signal ended.
pub fn signal_reason(sig: i32) -> String {
    let name = match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        6 => "SIGABRT",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        15 => "SIGTERM",
        _ => "signal",
    };
    format!("killed by signal {sig} ({name})")
}

/// The reason recorded for a point over its time limit; `how` is what
/// ended it (`killed`, `cancelled`).
pub fn time_limit_reason(limit: Duration, how: &str) -> String {
    format!("time limit of {} exceeded ({how})", fmt_duration(limit))
}
