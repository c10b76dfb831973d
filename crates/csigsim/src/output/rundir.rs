//! The run directory, safely owned ([`RunDir`]): written whole into a hidden
//! sibling staging directory and published by one rename, under an advisory
//! lock, never onto a directory that holds anything but an earlier run, and
//! never onto the files the run reads.

use super::{RunOutput, OUTPUT_FILES};
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::path::{Component, Path, PathBuf};

/// Files that csigsim writes into a run directory after the run, by
/// default: `csigsim report`'s page and `csigsim plot`'s directory of PNG
/// files. A run directory that holds them is still a run directory (and a
/// new run replaces them with the rest).
pub const DERIVED_FILES: [&str; 2] = ["report.html", "plots"];

/// What a run reads and what else it writes into its run directory, for
/// [`RunDir::create_with`].
#[derive(Clone, Debug, Default)]
pub struct RunDirOptions {
    /// Files the run reads, each with what names it (`the scenario`,
    /// `workload[0].file`): none may lie inside the run directory, which
    /// the run replaces.
    pub inputs: Vec<(String, PathBuf)>,
    /// Entries (names directly inside the run directory) that the run
    /// writes there besides the output files, such as a packet capture
    /// asked for inside it.
    pub extra: Vec<OsString>,
}

/// Why a run directory cannot be written. Everything but [`RunDirError::Io`]
/// is the user's to fix (bad input, exit status 2 from the command line).
#[derive(Debug)]
pub enum RunDirError {
    /// Another process holds the directory's lock: it is writing a run there.
    Busy { dir: PathBuf, pid: Option<u32> },
    /// The directory exists, is not empty, and is not a csigsim run
    /// directory: `entries` are (up to five of) the `total` entries that
    /// are not a run's (all of them without a csigsim summary.json);
    /// `summary`: whether it has csigsim's summary.json.
    NotARun { dir: PathBuf, entries: Vec<String>, total: usize, summary: bool },
    /// A file the run reads (`what` names it) lies inside the directory.
    InputInside { dir: PathBuf, what: String, file: PathBuf },
    /// The current directory lies inside the run directory, which the run
    /// would replace under the caller's feet.
    CwdInside { dir: PathBuf },
    /// The path exists and is not a directory (`file`: the path itself or
    /// one of its ancestors).
    NotADir { dir: PathBuf, file: PathBuf },
    /// Reading or writing the file system failed.
    Io { what: String, err: io::Error },
}

impl RunDirError {
    /// Whether the error is the user's input (everything but an I/O failure).
    pub fn is_input(&self) -> bool {
        !matches!(self, RunDirError::Io { .. })
    }
}

impl fmt::Display for RunDirError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunDirError::Busy { dir, pid } => {
                let who = pid.map_or_else(|| "another process".to_string(), |p| format!("another csigsim run (process {p})"));
                write!(f, "{who} is writing the run directory {}; wait for it to end or choose another directory", dir.display())
            }
            RunDirError::NotARun { dir, entries, total, summary } => {
                write!(f, "{} is not empty and is not a csigsim run directory, so it is left as it is: ", dir.display())?;
                if !entries.is_empty() {
                    write!(f, "it holds {}", entries.join(", "))?;
                    if *total > entries.len() {
                        write!(f, " and {} more", total - entries.len())?;
                    }
                }
                let foreign_summary = entries.first().is_some_and(|e| e.starts_with("summary.json"));
                if !*summary && !foreign_summary {
                    write!(f, "{}no summary.json of a csigsim run", if entries.is_empty() { "it has " } else { ", and " })?;
                }
                write!(f, "; choose a new or empty directory")
            }
            RunDirError::InputInside { dir, what, file } => write!(
                f,
                "{what} {} lies inside the run directory {}, which the run replaces as a whole; choose another directory",
                file.display(),
                dir.display()
            ),
            RunDirError::CwdInside { dir } => write!(
                f,
                "the current directory lies inside the run directory {}, which the run replaces as a whole; choose another directory",
                dir.display()
            ),
            RunDirError::NotADir { dir, file } if dir == file => {
                write!(f, "cannot write the run directory {}: it is an existing file, not a directory", dir.display())
            }
            RunDirError::NotADir { dir, file } => {
                write!(f, "cannot write the run directory {}: {} is an existing file, not a directory", dir.display(), file.display())
            }
            RunDirError::Io { what, err } => write!(f, "{what}: {err}"),
        }
    }
}

impl std::error::Error for RunDirError {}

impl From<RunDirError> for io::Error {
    fn from(e: RunDirError) -> io::Error {
        match e {
            RunDirError::Io { what, err } => io::Error::new(err.kind(), format!("{what}: {err}")),
            other => io::Error::new(io::ErrorKind::InvalidInput, other.to_string()),
        }
    }
}

fn io_err(what: impl Into<String>) -> impl FnOnce(io::Error) -> RunDirError {
    let what = what.into();
    move |err| RunDirError::Io { what, err }
}

/// A run directory written whole or not at all, by one process at a time.
///
/// - [`RunDir::create`] takes an advisory lock on `<parent>/.<name>.lock`
///   (which stays: removing a lock file is racy), refuses a directory that
///   holds anything but an earlier csigsim run, removes the staging
///   directories of dead processes, and makes the hidden staging directory
///   `<parent>/.<name>.partial-<process id>` beside the run directory, where
///   the run's files are written (a streaming run writes its monitor files
///   there as it goes).
/// - [`RunDir::commit`] writes the rest there and publishes it with one
///   rename: onto an earlier run, an atomic exchange of the two
///   directories, then the earlier one is removed.
/// - Dropped without a commit (an error, a panic), it removes the staging
///   directory, and the directories it created for the run directory's
///   parent.
pub struct RunDir {
    /// The run directory, absolute, symbolic links resolved.
    out: PathBuf,
    staging: PathBuf,
    /// The lock file, locked while this lives.
    lock: Option<File>,
    lock_path: PathBuf,
    /// The outermost directory created for the parent, to remove on failure.
    created: Option<PathBuf>,
    replaces: bool,
    committed: bool,
}

impl RunDir {
    /// Creates the staging directory of the run directory `out`, with
    /// nothing the run reads and nothing else written there.
    pub fn create(out: &Path) -> Result<RunDir, RunDirError> {
        RunDir::create_with(out, &RunDirOptions::default())
    }

    /// Creates the staging directory of the run directory `out`: checks
    /// that `out` can be written (not a file, no input inside, empty or an
    /// earlier run), takes its lock and removes stale staging directories.
    pub fn create_with(out: &Path, opts: &RunDirOptions) -> Result<RunDir, RunDirError> {
        let shown = out.to_path_buf();
        let out = absolute(out).map_err(io_err(format!("cannot resolve the run directory {}", shown.display())))?;
        let (Some(parent), Some(name)) = (out.parent(), out.file_name()) else {
            return Err(RunDirError::NotARun { dir: shown, entries: Vec::new(), total: 0, summary: false });
        };
        // Nothing is created before these checks: a refused run leaves no trace.
        for p in out.ancestors() {
            if let Ok(m) = std::fs::metadata(p) {
                if !m.is_dir() {
                    return Err(RunDirError::NotADir { dir: shown.clone(), file: if p == out { shown } else { p.to_path_buf() } });
                }
                break;
            }
        }
        for (what, file) in &opts.inputs {
            if let Ok(f) = file.canonicalize() {
                if f.starts_with(&out) {
                    return Err(RunDirError::InputInside { dir: shown, what: what.clone(), file: file.clone() });
                }
            }
        }
        if std::env::current_dir().and_then(|d| d.canonicalize()).is_ok_and(|d| d.starts_with(&out)) {
            return Err(RunDirError::CwdInside { dir: shown });
        }
        check_contents(&out, &shown, opts)?;

        let created = parent.ancestors().take_while(|p| !p.as_os_str().is_empty() && !p.exists()).last().map(Path::to_path_buf);
        std::fs::create_dir_all(parent).map_err(io_err(format!("cannot create {}", parent.display())))?;
        let lock_path = parent.join(hidden(name, ".lock"));
        let staging = parent.join(hidden(name, &format!(".partial-{}", std::process::id())));
        // From here on, dropping it undoes what it did.
        let mut d = RunDir { out: out.clone(), staging, lock: None, lock_path, created, replaces: false, committed: false };
        d.lock = Some(lock(&d.lock_path, &shown)?);
        remove_stale(parent, name, &out, &shown)?;
        // Checked again under the lock: the directory may have changed since.
        d.replaces = check_contents(&out, &shown, opts)?;
        std::fs::create_dir(&d.staging).map_err(io_err(format!("cannot create {}", d.staging.display())))?;
        Ok(d)
    }

    /// Where the run's files go until the commit.
    pub fn staging(&self) -> &Path {
        &self.staging
    }

    /// The run directory, absolute, symbolic links resolved.
    pub fn path(&self) -> &Path {
        &self.out
    }

    /// Whether the run directory holds an earlier run, which the commit replaces.
    pub fn replaces(&self) -> bool {
        self.replaces
    }

    /// Writes `res` into the staging directory and publishes it as the run
    /// directory, replacing an earlier run there as a whole.
    pub fn commit(mut self, res: &RunOutput) -> io::Result<()> {
        res.write_dir(&self.staging)?;
        publish(&self.staging, &self.out)?;
        // After an exchange, the staging path holds the earlier run.
        if self.staging.exists() {
            std::fs::remove_dir_all(&self.staging)?;
        }
        self.committed = true;
        // The lock is released as the file closes, after the publish.
        self.lock = None;
        Ok(())
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        if self.committed {
            return;
        }
        let _ = std::fs::remove_dir_all(&self.staging);
        if let Some(c) = &self.created {
            // The parent was made for this run: while this holds its lock,
            // nobody else uses the lock file (a run into it now finds it
            // locked and leaves), so it goes with the directories, if they
            // are empty. Without the lock (another run that made the same
            // parent at the same moment holds it), the file is that run's.
            if self.lock.is_some() {
                let _ = std::fs::remove_file(&self.lock_path);
            }
            for p in self.out.ancestors().skip(1).take_while(|p| p.starts_with(c)) {
                let _ = std::fs::remove_dir(p);
            }
        }
    }
}

/// `.NAME` + `suffix`.
fn hidden(name: &OsStr, suffix: &str) -> OsString {
    let mut s = OsString::from(".");
    s.push(name);
    s.push(suffix);
    s
}

/// `path` made absolute, with the symbolic links of its existing part
/// resolved and `.` and `..` of the rest applied.
pub fn absolute(path: &Path) -> io::Result<PathBuf> {
    let path = if path.is_absolute() { path.to_path_buf() } else { std::env::current_dir()?.join(path) };
    let mut base = path.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(c) = base.canonicalize() {
            let mut p = c;
            for comp in rest.iter().rev() {
                match comp {
                    Component::ParentDir => {
                        p.pop();
                    }
                    Component::Normal(n) => p.push(n),
                    _ => {}
                }
            }
            return Ok(p);
        }
        match (base.parent(), base.components().next_back()) {
            (Some(parent), Some(last)) => {
                rest.push(last);
                base = parent;
            }
            _ => return Ok(path),
        }
    }
}

/// The files a scenario names (a trace's `file`, a Poisson workload's `cdf`
/// file, any key whose value is the path of an existing file), found in the
/// scenario as run, `resolved_toml`, relative to `base_dir` (the directory
/// of the scenario file), each with its key: the inputs of
/// [`RunDirOptions::inputs`] besides the scenario file itself.
pub fn scenario_inputs(resolved_toml: &str, base_dir: &Path) -> Vec<(String, PathBuf)> {
    fn walk(v: &toml::Value, key: String, base: &Path, out: &mut Vec<(String, PathBuf)>) {
        match v {
            toml::Value::String(s) if !s.is_empty() => {
                let p = Path::new(s);
                let p = if p.is_absolute() { p.to_path_buf() } else { base.join(p) };
                if p.is_file() {
                    out.push((key, p));
                }
            }
            toml::Value::Array(a) => a.iter().enumerate().for_each(|(i, v)| walk(v, format!("{key}[{i}]"), base, out)),
            toml::Value::Table(t) => t.iter().for_each(|(k, v)| walk(v, if key.is_empty() { k.clone() } else { format!("{key}.{k}") }, base, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Ok(t) = resolved_toml.parse::<toml::Table>() {
        walk(&toml::Value::Table(t), String::new(), base_dir, &mut out);
    }
    out
}

/// Takes the lock on `path` without waiting, and writes this process's id
/// into it.
#[cfg(unix)]
fn lock(path: &Path, shown: &Path) -> Result<File, RunDirError> {
    use std::os::unix::io::AsRawFd;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(io_err(format!("cannot open the lock file {}", path.display())))?;
    // SAFETY: flock on a file descriptor this function owns.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let err = io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
            let mut text = String::new();
            let _ = f.read_to_string(&mut text);
            return Err(RunDirError::Busy { dir: shown.to_path_buf(), pid: text.trim().parse().ok() });
        }
        return Err(RunDirError::Io { what: format!("cannot lock {}", path.display()), err });
    }
    let write = f.set_len(0).and_then(|_| f.rewind()).and_then(|_| writeln!(f, "{}", std::process::id()));
    write.map_err(io_err(format!("cannot write the lock file {}", path.display())))?;
    Ok(f)
}

/// Without flock, the lock file only names the process.
#[cfg(not(unix))]
fn lock(path: &Path, _shown: &Path) -> Result<File, RunDirError> {
    let mut f = File::create(path).map_err(io_err(format!("cannot open the lock file {}", path.display())))?;
    writeln!(f, "{}", std::process::id()).map_err(io_err(format!("cannot write the lock file {}", path.display())))?;
    Ok(f)
}

/// Whether process `pid` exists (signal 0 checks without sending; EPERM:
/// it exists, another user's).
#[cfg(unix)]
pub fn process_alive(pid: u32) -> bool {
    let Ok(p) = libc::pid_t::try_from(pid) else { return false };
    if p <= 0 {
        return false;
    }
    // SAFETY: signal 0 sends nothing.
    unsafe { libc::kill(p, 0) == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH) }
}

/// Without kill(2), every process counts as alive: nothing is removed.
#[cfg(not(unix))]
pub fn process_alive(_pid: u32) -> bool {
    true
}

/// The process id of a staging directory's name `<prefix><pid>`.
fn staging_pid(name: &OsStr, prefix: &str) -> Option<u32> {
    let digits = name.to_str()?.strip_prefix(prefix)?;
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then(|| digits.parse().ok()).flatten()
}

/// Removes, under the lock, the staging directories of runs into `out`
/// whose process is gone (or is this one, from an earlier attempt):
/// `<parent>/.<name>.partial-<pid>`, the earlier run set aside by the
/// fallback publish `<parent>/.<name>.old-<pid>`, and those of the older
/// layout inside the run directory, `<out>/.partial-<pid>`. A live one of
/// the older layout means an older csigsim is writing there.
fn remove_stale(parent: &Path, name: &OsStr, out: &Path, shown: &Path) -> Result<(), RunDirError> {
    let stale = |pid: u32| pid == std::process::id() || !process_alive(pid);
    let prefixes = [hidden(name, ".partial-"), hidden(name, ".old-")];
    let prefixes: Vec<&str> = prefixes.iter().filter_map(|p| p.to_str()).collect();
    if let Ok(rd) = std::fs::read_dir(parent) {
        for e in rd.flatten() {
            let n = e.file_name();
            if prefixes.iter().filter_map(|p| staging_pid(&n, p)).any(stale) {
                std::fs::remove_dir_all(e.path()).map_err(io_err(format!("cannot remove the stale staging directory {}", e.path().display())))?;
            }
        }
    }
    if let Ok(rd) = std::fs::read_dir(out) {
        for e in rd.flatten() {
            let Some(pid) = staging_pid(&e.file_name(), ".partial-") else { continue };
            if !stale(pid) {
                return Err(RunDirError::Busy { dir: shown.to_path_buf(), pid: Some(pid) });
            }
            std::fs::remove_dir_all(e.path()).map_err(io_err(format!("cannot remove the stale staging directory {}", e.path().display())))?;
        }
    }
    Ok(())
}

/// Whether `dir` holds an earlier run (`Ok(true)`), is absent or empty
/// (`Ok(false)`), or holds anything else (refused). A run directory has a
/// `summary.json` with csigsim's `version`, and every other entry is a file
/// csigsim writes there. Staging directories of the older layout are left
/// to [`remove_stale`].
fn check_contents(dir: &Path, shown: &Path, opts: &RunDirOptions) -> Result<bool, RunDirError> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(RunDirError::Io { what: format!("cannot read the run directory {}", shown.display()), err: e }),
    };
    let (mut offending, mut all) = (Vec::new(), Vec::new());
    let mut summary = false;
    for e in rd {
        let e = e.map_err(io_err(format!("cannot read the run directory {}", shown.display())))?;
        let name = e.file_name();
        if staging_pid(&name, ".partial-").is_some() {
            continue;
        }
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        let ours = match name.to_str() {
            Some("summary.json") => {
                summary = !is_dir && is_run_summary(&e.path());
                summary
            }
            Some("plots") => is_dir && plots_only(&e.path()),
            Some(n) if OUTPUT_FILES.contains(&n) || DERIVED_FILES.contains(&n) => !is_dir,
            _ => opts.extra.contains(&name),
        };
        let shown_name = match name.to_str() {
            Some("summary.json") if !ours => "summary.json (not a csigsim summary)".to_string(),
            _ => format!("{}{}", name.to_string_lossy(), if is_dir { "/" } else { "" }),
        };
        if !ours {
            offending.push(shown_name.clone());
        }
        all.push(shown_name);
    }
    if all.is_empty() || (summary && offending.is_empty()) {
        return Ok(!all.is_empty());
    }
    // Without a summary nothing in it is a run's: every entry is the user's.
    if !summary {
        offending = all;
    }
    // The summary that is not csigsim's first: it says why.
    offending.sort_by_key(|e| (!e.starts_with("summary.json"), e.clone()));
    let total = offending.len();
    offending.truncate(5);
    Err(RunDirError::NotARun { dir: shown.to_path_buf(), entries: offending, total, summary })
}

/// Whether `path` is a csigsim summary: a JSON object with a `version` string.
fn is_run_summary(path: &Path) -> bool {
    // A summary is a few kilobytes; a huge file is not one.
    let Ok(f) = File::open(path) else { return false };
    let mut text = String::new();
    if f.take(1 << 20).read_to_string(&mut text).is_err() {
        return false;
    }
    serde_json::from_str::<serde_json::Value>(&text).is_ok_and(|v| v.get("version").is_some_and(|v| v.is_string()))
}

/// Whether a `plots` directory holds nothing but the PNG files `csigsim plot` writes.
fn plots_only(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|rd| {
        rd.into_iter().all(|e| e.is_ok_and(|e| e.file_type().is_ok_and(|t| t.is_file()) && Path::new(&e.file_name()).extension().is_some_and(|x| x == "png")))
    })
}

/// Moves the complete `staging` directory to `out` in one rename: onto an
/// existing `out`, the two are exchanged atomically (`staging` then holds
/// the earlier run).
fn publish(staging: &Path, out: &Path) -> io::Result<()> {
    if std::fs::symlink_metadata(out).is_err() {
        return rename_noreplace(staging, out);
    }
    match exchange(staging, out) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::Unsupported || e.raw_os_error().is_some_and(is_unsupported) => rename_aside(staging, out),
        Err(e) => Err(e),
    }
}

/// The errors of a kernel or file system that cannot exchange two paths.
fn is_unsupported(code: i32) -> bool {
    #[cfg(target_os = "linux")]
    {
        code == libc::EINVAL || code == libc::ENOSYS || code == libc::ENOTSUP
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = code;
        true
    }
}

#[cfg(target_os = "linux")]
fn renameat2(from: &Path, to: &Path, flags: libc::c_uint) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path with a NUL byte"));
    let (f, t) = (c(from)?, c(to)?);
    // SAFETY: two NUL-terminated paths that live across the call.
    match unsafe { libc::renameat2(libc::AT_FDCWD, f.as_ptr(), libc::AT_FDCWD, t.as_ptr(), flags) } {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    renameat2(a, b, libc::RENAME_EXCHANGE)
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// A rename that fails rather than replace an existing `to` (renameat2 with
/// RENAME_NOREPLACE where the kernel has it, else rename, which still
/// cannot replace a non-empty directory).
fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    match renameat2(from, to, libc::RENAME_NOREPLACE) {
        Err(e) if e.raw_os_error().is_some_and(is_unsupported) => {}
        r => return r,
    }
    std::fs::rename(from, to)
}

/// The publish where the two directories cannot be exchanged: the earlier
/// run is renamed aside to `.<name>.old-<pid>` and the new one into its
/// place, two renames with a moment between them in which the run directory
/// does not exist (the lock keeps other runs out; a reader may see nothing,
/// never a mixture). The earlier run is then moved where the caller expects
/// it, the staging path, to be removed.
fn rename_aside(staging: &Path, out: &Path) -> io::Result<()> {
    let (Some(parent), Some(name)) = (out.parent(), out.file_name()) else { return Err(io::Error::other("the run directory has no parent")) };
    let aside = parent.join(hidden(name, &format!(".old-{}", std::process::id())));
    std::fs::rename(out, &aside)?;
    if let Err(e) = std::fs::rename(staging, out) {
        // Put the earlier run back.
        let _ = std::fs::rename(&aside, out);
        return Err(e);
    }
    std::fs::rename(&aside, staging)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch directory, removed when dropped.
    struct Scratch(PathBuf);

    impl std::ops::Deref for Scratch {
        type Target = PathBuf;
        fn deref(&self) -> &PathBuf {
            &self.0
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn scratch(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("csigsim-rundir-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d.canonicalize().unwrap())
    }

    #[test]
    fn staging_names_give_their_process() {
        assert_eq!(staging_pid(OsStr::new(".run.partial-123"), ".run.partial-"), Some(123));
        assert_eq!(staging_pid(OsStr::new(".run.partial-"), ".run.partial-"), None);
        assert_eq!(staging_pid(OsStr::new(".run.partial-12x"), ".run.partial-"), None);
        assert_eq!(staging_pid(OsStr::new(".runs.partial-12"), ".run.partial-"), None);
    }

    #[test]
    fn absolute_applies_dots_past_the_existing_part() {
        let d = scratch("abs");
        assert_eq!(absolute(&d.join("a/./b/../c")).unwrap(), d.join("a/c"));
        assert_eq!(absolute(&d.join(".")).unwrap(), *d);
    }

    #[test]
    fn a_second_lock_is_refused_with_the_holders_pid() {
        let d = scratch("lock");
        let first = RunDir::create(&d.join("run")).unwrap();
        match RunDir::create(&d.join("run")) {
            Err(RunDirError::Busy { pid, .. }) => assert_eq!(pid, Some(std::process::id())),
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("locked twice"),
        }
        drop(first);
        assert!(!d.join(format!(".run.partial-{}", std::process::id())).exists());
        RunDir::create(&d.join("run")).unwrap();
    }

    #[test]
    fn a_run_directory_holds_only_what_csigsim_writes() {
        let d = scratch("contents");
        let opts = RunDirOptions { inputs: Vec::new(), extra: vec!["c.pcap".into()] };
        let check = |dir: &Path| check_contents(dir, dir, &opts);
        assert!(matches!(check(&d.join("absent")), Ok(false)));
        assert!(matches!(check(&d), Ok(false)), "empty");
        std::fs::write(d.join("summary.json"), "{\"version\": \"0.1.0\", \"seed\": 1}").unwrap();
        for f in ["flows.csv", "links.parquet", "report.html", "c.pcap"] {
            std::fs::write(d.join(f), "x").unwrap();
        }
        std::fs::create_dir(d.join("plots")).unwrap();
        std::fs::write(d.join("plots/fct_cdf.png"), "x").unwrap();
        assert!(matches!(check(&d), Ok(true)));
        // A plots directory with something else in it is the user's.
        std::fs::write(d.join("plots/notes.txt"), "x").unwrap();
        match check(&d) {
            Err(RunDirError::NotARun { entries, summary: true, .. }) => assert_eq!(entries, ["plots/"]),
            other => panic!("{other:?}"),
        }
        std::fs::remove_file(d.join("plots/notes.txt")).unwrap();
        // A summary without csigsim's version is not a run's.
        std::fs::write(d.join("summary.json"), "{\"seed\": 1}").unwrap();
        match check(&d) {
            Err(RunDirError::NotARun { entries, summary: false, total, .. }) => {
                assert_eq!(entries[0], "summary.json (not a csigsim summary)");
                assert_eq!(total, 6);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn scenario_inputs_are_the_strings_that_name_files() {
        let d = scratch("inputs");
        std::fs::write(d.join("t.csv"), "src,dst,size\n").unwrap();
        std::fs::write(d.join("sizes.cdf"), "1 0\n").unwrap();
        let text = "name = \"t.csv-like\"\n[[workload]]\nkind = \"trace\"\nfile = \"t.csv\"\n\
                    [[workload]]\nkind = \"poisson\"\ncdf = \"sizes.cdf\"\n[[workload]]\nkind = \"poisson\"\ncdf = \"websearch\"\n";
        let got = scenario_inputs(text, &d);
        assert_eq!(got, [("workload[0].file".to_string(), d.join("t.csv")), ("workload[1].cdf".to_string(), d.join("sizes.cdf"))]);
    }

    #[test]
    fn exchange_swaps_two_directories() {
        let d = scratch("swap");
        std::fs::create_dir(d.join("a")).unwrap();
        std::fs::create_dir(d.join("b")).unwrap();
        std::fs::write(d.join("a/x"), "a").unwrap();
        publish(&d.join("a"), &d.join("b")).unwrap();
        assert_eq!(std::fs::read_to_string(d.join("b/x")).unwrap(), "a");
        assert!(d.join("a").is_dir() && !d.join("a/x").exists());
        // The fallback leaves the same result.
        std::fs::write(d.join("a/y"), "y").unwrap();
        rename_aside(&d.join("a"), &d.join("b")).unwrap();
        assert!(d.join("b/y").is_file() && d.join("a/x").is_file());
    }
}
