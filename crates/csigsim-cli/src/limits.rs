//! The resource options of `run` and `validate` (`--max-memory`,
//! `--max-output`, `--min-progress`) and the failures of a run that a
//! limit ended or a full disk stopped (docs/robustness.md).

use crate::Failure;
use csigsim::scenario::{Budget, InputError};
use std::path::Path;

/// The budget of this process, with the flags given in place of its
/// defaults; the output lowered to the free space where `out` goes.
pub fn budget(max_memory: Option<&str>, max_output: Option<&str>, out: Option<&Path>) -> Result<Budget, InputError> {
    let mut b = Budget::for_this_process();
    let size = |flag: &str, v: &str| csigsim::units::parse_size(v).map(|s| s.0).map_err(|m| InputError::new(flag, None, None, m));
    if let Some(v) = max_memory {
        b.max_memory = size("--max-memory", v)?;
    }
    if let Some(v) = max_output {
        b.max_output = size("--max-output", v)?;
    } else if let Some(out) = out {
        b = b.fit_disk(out);
    }
    Ok(b)
}

/// `--min-progress`: simulated picoseconds per second of wall time.
pub fn min_progress(v: &str) -> Result<u64, InputError> {
    csigsim::units::parse_time(v).map(|t| t.0).map_err(|m| InputError::new("--min-progress", None, None, m))
}

/// The failure of a run that a limit ended (exit status 2, naming the key).
pub fn limit_failure(res: &csigsim::output::RunOutput, scenario: &Path) -> Option<Failure> {
    let l = res.limit.as_ref()?;
    let file = match &l.key {
        Some(_) => scenario.display().to_string(),
        None => "--min-progress".to_string(),
    };
    Some(Failure::Input(InputError::new(file, l.key.clone(), None, l.message.clone())))
}

/// A message of a failed write: a full disk is the user's to fix (exit
/// status 2, naming `--out`); anything else is an internal error.
pub fn write_failure(m: String) -> Failure {
    if m.contains("No space left on device") || m.contains("os error 28") {
        Failure::Input(InputError::new(
            "--out",
            None,
            None,
            format!("{m}: the disk is full. Free space, write to another --out, or lower the run's output (a coarser monitor.window, fewer monitors, or --max-output to have the run stop at a size)"),
        ))
    } else {
        Failure::Internal(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_is_the_users_to_fix_and_other_write_errors_are_internal() {
        match write_failure("cannot write runs/x: No space left on device (os error 28)".into()) {
            Failure::Input(e) => {
                assert_eq!(e.file, "--out");
                assert!(e.msg.contains("the disk is full"), "{e}");
            }
            _ => panic!("a full disk is bad input"),
        }
        assert!(matches!(write_failure("cannot write runs/x: Permission denied (os error 13)".into()), Failure::Internal(_)));
    }

    #[test]
    fn budget_flags_take_sizes_and_name_themselves() {
        let b = budget(Some("1GiB"), Some("10MB"), None).unwrap();
        assert_eq!((b.max_memory, b.max_output), (1 << 30, 10_000_000));
        assert_eq!(budget(Some("x"), None, None).unwrap_err().file, "--max-memory");
        assert_eq!(min_progress("1us").unwrap(), 1_000_000);
        assert_eq!(min_progress("fast").unwrap_err().file, "--min-progress");
    }
}
