//! The resource budget: how much memory a run may take and how many bytes
//! of monitor output it may write. Memory is checked from the resolved
//! scenario before the run, with per-item costs measured on this engine
//! (docs/robustness.md): an estimate, not an accounting. Output is
//! estimated before the run where a lower bound is known, and counted
//! while the run writes it.

use std::path::Path;

/// Bytes a flow costs for the whole run, whether or not it is in progress:
/// its specification, record, dependencies and flows.csv row (measured:
/// 600 bytes a flow on the 1024-rank ring all-reduce, 2.1 million flows).
pub const BYTES_PER_FLOW: u64 = 600;
/// Bytes a flow in progress costs beside [`BYTES_PER_FLOW`]: its transport
/// and congestion-control state (measured: 1,560 bytes a flow in all on an
/// all-to-all of a million flows that all start at once).
pub const BYTES_PER_STATE: u64 = 1_000;
/// Bytes a directed link costs: its port, queue, routes and monitors
/// (measured: 590 to 650 bytes on fat trees of 8,192 to 27,648 hosts).
pub const BYTES_PER_PORT: u64 = 700;
/// Bytes a packet held in a switch buffer costs: the packet (64) and its
/// in-band signals.
pub const BYTES_PER_PACKET: u64 = 96;
/// Bytes of a run before its network and flows.
pub const BASE_BYTES: u64 = 16 << 20;
/// Bytes of a dense links.csv row, at least (an idle row is about 40).
pub const LINK_ROW_BYTES: u64 = 32;
/// Bytes the in-memory tables hold per monitor row (library and Python
/// runs, which do not stream).
pub const HELD_ROW_BYTES: u64 = 64;
/// The most flows of any scenario, whatever the budget.
pub const MAX_FLOWS: u64 = 10_000_000;
/// Flows in progress at once are counted among the flows that start
/// within this much simulated time of each other.
const CONCURRENT_PS: u64 = 1_000_000_000;

/// What a run may take; see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Bytes of memory the run's estimate may reach (`--max-memory`).
    pub max_memory: u64,
    /// Bytes of monitor files (or, in memory, of monitor rows) the run may
    /// write (`--max-output`).
    pub max_output: u64,
}

impl Budget {
    /// Memory of the default budget, unless the process may have less.
    pub const DEFAULT_MEMORY: u64 = 8 << 30;
    /// Output of the default budget, unless the disk has less room.
    pub const DEFAULT_OUTPUT: u64 = 16 << 30;

    /// No limit but [`MAX_FLOWS`].
    pub fn unlimited() -> Budget {
        Budget { max_memory: u64::MAX, max_output: u64::MAX }
    }

    /// The defaults, lowered to what this process can have: half its
    /// address-space limit (`ulimit -v`: address space, not memory in use,
    /// and a growing vector holds its old and new buffers at once), 80% of
    /// its control group's memory limit, and 75% of the machine's memory.
    pub fn for_this_process() -> Budget {
        let mut mem = Self::DEFAULT_MEMORY;
        for (limit, percent) in [(address_space_limit(), 50), (cgroup_limit(), 80), (machine_memory(), 75)] {
            if let Some(l) = limit {
                mem = mem.min(l / 100 * percent);
            }
        }
        Budget { max_memory: mem, max_output: Self::DEFAULT_OUTPUT }
    }

    /// The most flows this budget allows: each costs at least
    /// [`BYTES_PER_FLOW`], and never more than [`MAX_FLOWS`].
    pub fn max_flows(&self) -> u64 {
        MAX_FLOWS.min(self.max_memory / BYTES_PER_FLOW)
    }

    /// The budget with its output lowered to 90% of the free space of the
    /// file system holding `dir` (or its nearest existing ancestor).
    pub fn fit_disk(self, dir: &Path) -> Budget {
        match dir.ancestors().find(|p| p.as_os_str().is_empty() || p.exists()).and_then(free_bytes) {
            Some(free) => Budget { max_output: self.max_output.min(free / 10 * 9), ..self },
            None => self,
        }
    }
}

impl Default for Budget {
    fn default() -> Self {
        Self::for_this_process()
    }
}

/// Why a run was ended by a resource limit: the scenario key that drives
/// it, where one does, and what was measured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limit {
    pub key: Option<String>,
    pub message: String,
}

/// A run's memory, estimated from its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Estimate {
    /// Directed links (ports).
    pub ports: u64,
    pub flows: u64,
    /// Flows counted as in progress at once.
    pub states: u64,
    /// Bytes of the packet bitmaps of those flows (selective
    /// retransmission keeps three bits a packet a flow): the largest
    /// flows' bitmaps, `states` of them.
    pub bitmaps: u64,
    /// Packets the switch buffers can hold in all, full-size.
    pub buffered: u64,
}

impl Estimate {
    /// `ports` directed links and the start times of the flows that wait
    /// for nothing (`starts`, any order) among `flows` in all.
    pub fn new(ports: u64, flows: u64, starts: &mut [u64]) -> Estimate {
        Estimate { ports, flows, states: densest(starts, CONCURRENT_PS), bitmaps: 0, buffered: 0 }
    }

    /// The estimate with the bitmaps of the flows in progress: the sum of
    /// the `states` largest of `bitmap_bytes` (any order; reordered).
    pub fn with_bitmaps(mut self, bitmap_bytes: &mut [u64]) -> Estimate {
        let k = (self.states as usize).min(bitmap_bytes.len());
        if k > 0 && k < bitmap_bytes.len() {
            bitmap_bytes.select_nth_unstable_by(k - 1, |a, b| b.cmp(a));
        }
        self.bitmaps = bitmap_bytes[..k].iter().fold(0u64, |a, &b| a.saturating_add(b));
        self
    }

    /// The network's own state and the packets its buffers can hold.
    pub fn network_bytes(&self) -> u64 {
        self.ports.saturating_mul(BYTES_PER_PORT).saturating_add(self.packet_bytes())
    }

    /// The packets the switch buffers can hold.
    pub fn packet_bytes(&self) -> u64 {
        self.buffered.saturating_mul(BYTES_PER_PACKET)
    }

    pub fn flow_bytes(&self) -> u64 {
        self.flows.saturating_mul(BYTES_PER_FLOW).saturating_add(self.states.saturating_mul(BYTES_PER_STATE)).saturating_add(self.bitmaps)
    }

    /// The estimate in bytes.
    pub fn bytes(&self) -> u64 {
        BASE_BYTES.saturating_add(self.network_bytes()).saturating_add(self.flow_bytes())
    }
}

/// The most values of `v` within any span of `span` (sorts `v`).
fn densest(v: &mut [u64], span: u64) -> u64 {
    v.sort_unstable();
    let (mut best, mut lo) = (0, 0);
    for hi in 0..v.len() {
        while v[hi] - v[lo] >= span {
            lo += 1;
        }
        best = best.max(hi + 1 - lo);
    }
    best as u64
}

/// Bytes with a binary prefix, for messages: "1.5 GiB".
pub fn fmt_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(target_os = "linux")]
fn address_space_limit() -> Option<u64> {
    let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes the struct it is given.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) } == 0;
    (ok && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
}

#[cfg(not(target_os = "linux"))]
fn address_space_limit() -> Option<u64> {
    None
}

/// The memory limit of this process's control group (v2 `memory.max`, v1
/// `memory.limit_in_bytes`), if it has one.
fn cgroup_limit() -> Option<u64> {
    ["/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"]
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .filter_map(|s| s.trim().parse::<u64>().ok())
        // v1 says "no limit" with a number near 2^63.
        .find(|&l| l < 1 << 60)
}

/// The machine's memory (`MemTotal` of /proc/meminfo).
fn machine_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

#[cfg(target_os = "linux")]
fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs reads a NUL-terminated path and writes the struct.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::statvfs(c.as_ptr(), &mut s) } == 0;
    ok.then(|| (s.f_bavail as u64).saturating_mul(s.f_frsize as u64))
}

#[cfg(not(target_os = "linux"))]
fn free_bytes(_: &Path) -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn densest_counts_the_most_starts_within_a_span() {
        assert_eq!(densest(&mut [], 10), 0);
        assert_eq!(densest(&mut [5, 0, 9, 30, 31, 32, 33], 10), 4);
        assert_eq!(densest(&mut [0, 10, 20], 10), 1);
        assert_eq!(densest(&mut [7; 5], 1), 5);
    }

    #[test]
    fn flows_are_bounded_by_memory_and_by_the_cap() {
        assert_eq!(Budget { max_memory: 600_000, max_output: 0 }.max_flows(), 1_000);
        assert_eq!(Budget::unlimited().max_flows(), MAX_FLOWS);
    }

    #[test]
    fn the_estimate_adds_network_flows_and_states() {
        let e = Estimate::new(10, 100, &mut [0; 40]);
        assert_eq!(e.states, 40);
        assert_eq!(e.bytes(), BASE_BYTES + 10 * BYTES_PER_PORT + 100 * BYTES_PER_FLOW + 40 * BYTES_PER_STATE);
        // Saturates rather than wraps.
        assert_eq!(Estimate { ports: u64::MAX, flows: 1, states: 0, bitmaps: 0, buffered: 0 }.bytes(), u64::MAX);
        assert_eq!(Estimate { ports: 0, flows: 0, states: 0, bitmaps: 0, buffered: 10 }.bytes(), BASE_BYTES + 10 * BYTES_PER_PACKET);
        // The bitmaps of the largest flows, as many as are in progress.
        let e = Estimate::new(0, 4, &mut [0, 0, 5_000_000_000, 5_000_000_000]).with_bitmaps(&mut [8, 1 << 30, 24, 1 << 20]);
        assert_eq!(e.states, 2);
        assert_eq!(e.bitmaps, (1 << 30) + (1 << 20));
    }

    #[test]
    fn the_default_never_exceeds_its_stated_figure() {
        let b = Budget::for_this_process();
        assert!(b.max_memory <= Budget::DEFAULT_MEMORY && b.max_memory > 0);
        assert_eq!(fmt_bytes(1536), "1.5 KiB");
        assert_eq!(fmt_bytes(12), "12 B");
    }
}
