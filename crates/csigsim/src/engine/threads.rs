//! `--threads auto`: how many threads a run takes when the user does not
//! say. A partition that shares its core with other work waits at every
//! window for the partition that has a core to itself, so a run cut into
//! more partitions than the machine has idle cores is slower than the
//! sequential engine. Auto therefore counts only the cores that other work
//! leaves free.

/// The threads of `--threads auto` on a machine of `cores` cores (the
/// parallelism this process may use) whose load average over the last
/// minute is `load` (runnable processes, as `uptime` prints it; `None`
/// where the system does not say): the cores minus the load rounded to the
/// nearest whole core, at least 1. An unknown load counts as a busy
/// machine: one thread.
pub fn auto_threads(cores: usize, load: Option<f64>) -> usize {
    let Some(load) = load.filter(|l| l.is_finite() && *l >= 0.0) else { return 1 };
    // Rounded: a load of 0.4 is a core mostly idle, 0.6 one mostly taken.
    let busy = load.round().min(cores as f64) as usize;
    cores.saturating_sub(busy).max(1)
}

/// [`auto_threads`] for this machine, now.
pub fn free_cores() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    auto_threads(cores, load_average())
}

/// The load average over the last minute, if the system reports it.
#[cfg(unix)]
fn load_average() -> Option<f64> {
    let mut avg = [0f64; 3];
    // SAFETY: getloadavg writes at most the number of samples asked for (1)
    // into the array it is given, which holds three.
    let n = unsafe { libc::getloadavg(avg.as_mut_ptr(), 1) };
    (n >= 1).then_some(avg[0])
}

#[cfg(not(unix))]
fn load_average() -> Option<f64> {
    None
}

#[cfg(test)]
mod tests {
    use super::auto_threads;

    /// Every core idle: all of them; each core's worth of load takes one
    /// away, rounded to the nearest core; never fewer than one.
    #[test]
    fn auto_takes_the_cores_the_load_leaves_free() {
        assert_eq!(auto_threads(2, Some(0.0)), 2);
        assert_eq!(auto_threads(2, Some(0.49)), 2);
        assert_eq!(auto_threads(2, Some(0.51)), 1);
        assert_eq!(auto_threads(2, Some(1.0)), 1);
        assert_eq!(auto_threads(2, Some(1.47)), 1);
        assert_eq!(auto_threads(2, Some(3.9)), 1);
        assert_eq!(auto_threads(8, Some(2.6)), 5);
        assert_eq!(auto_threads(64, Some(0.2)), 64);
        assert_eq!(auto_threads(1, Some(0.0)), 1);
        // A machine busier than its cores still runs, on one thread.
        assert_eq!(auto_threads(4, Some(40.0)), 1);
    }

    /// A load the system does not report, or one that makes no sense, is
    /// taken as a busy machine.
    #[test]
    fn an_unknown_load_means_one_thread() {
        assert_eq!(auto_threads(16, None), 1);
        assert_eq!(auto_threads(16, Some(f64::NAN)), 1);
        assert_eq!(auto_threads(16, Some(-1.0)), 1);
    }
}
