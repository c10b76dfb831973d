//! The run as a Chrome / Perfetto trace-event file (`csigsim run
//! --timeline FILE.json`), made from the run directory's files, a chunk of
//! rows at a time, and written as it is made:
//!
//! - a process per rank of each trace workload (ops.csv): its operations
//!   as slices, on as many threads ("lanes") as it needs for slices on a
//!   thread to never overlap (compute lanes, then network lanes), and a
//!   `waits` thread with the times the rank computed nothing, named after
//!   what it waited for;
//! - a process `collectives` with a thread per collective instance and a
//!   slice per step (collectives.csv);
//! - a process `network` with a thread per flow group (the flows' name: a
//!   workload entry or job) holding one slice from its first start to its
//!   last arrival, a counter of each group's flows in flight, and counters
//!   of the utilisation and largest queue of the busiest links, per monitor
//!   window (links.csv).
//!
//! Times are microseconds (the format's unit), written exactly from the
//! files' picoseconds.

use super::ops::OpTable;
use super::read::{read_table_chunks, Format};
use super::tables::{CollectiveTable, FlowTable, LinkColumns};
use crate::de::InputError;
use std::io::{self, Write};
use std::path::Path;

/// Links whose counters the file carries: the most bytes sent.
pub const BUSIEST_LINKS: usize = 8;
/// Flow groups the file carries at most (the first by flow id).
pub const MAX_GROUPS: usize = 32;
/// Samples of each group's flows in flight over the run.
const SAMPLES: u64 = 1000;
/// Rows read at a time.
const CHUNK: usize = 1 << 16;

/// What the file holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub events: u64,
    pub slices: u64,
    pub counters: u64,
    pub bytes: u64,
}

/// A time in picoseconds as microseconds, exactly.
fn us(ps: u64) -> String {
    let frac = ps % 1_000_000;
    if frac == 0 {
        format!("{}", ps / 1_000_000)
    } else {
        let s = format!("{}.{frac:06}", ps / 1_000_000);
        s.trim_end_matches('0').to_string()
    }
}

fn text(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

struct Out<W: Write> {
    w: W,
    stats: Stats,
}

impl<W: Write> Out<W> {
    fn event(&mut self, body: &str) -> io::Result<()> {
        let sep = if self.stats.events == 0 { "\n" } else { ",\n" };
        self.w.write_all(sep.as_bytes())?;
        self.w.write_all(body.as_bytes())?;
        self.stats.events += 1;
        self.stats.bytes += (sep.len() + body.len()) as u64;
        Ok(())
    }

    fn meta(&mut self, what: &str, pid: u32, tid: u32, name: &str) -> io::Result<()> {
        self.event(&format!(r#"{{"ph":"M","name":"{what}","ts":0,"pid":{pid},"tid":{tid},"args":{{"name":{}}}}}"#, text(name)))
    }

    fn sort(&mut self, pid: u32, index: u32) -> io::Result<()> {
        self.event(&format!(r#"{{"ph":"M","name":"process_sort_index","ts":0,"pid":{pid},"tid":0,"args":{{"sort_index":{index}}}}}"#))
    }

    fn slice(&mut self, pid: u32, tid: u32, name: &str, start: u64, end: u64, args: &str) -> io::Result<()> {
        self.stats.slices += 1;
        self.event(&format!(
            r#"{{"ph":"X","name":{},"ts":{},"dur":{},"pid":{pid},"tid":{tid},"args":{{{args}}}}}"#,
            text(name),
            us(start),
            us(end.saturating_sub(start))
        ))
    }

    fn counter(&mut self, pid: u32, name: &str, at: u64, key: &str, value: &str) -> io::Result<()> {
        self.stats.counters += 1;
        self.event(&format!(r#"{{"ph":"C","name":{},"ts":{},"pid":{pid},"tid":0,"args":{{"{key}":{value}}}}}"#, text(name), us(at)))
    }
}

/// Lanes of one track: slices (start, end) each on the first lane free by
/// its start, so that the slices of a lane never overlap.
#[derive(Default)]
struct Lanes {
    ends: Vec<u64>,
}

impl Lanes {
    fn place(&mut self, start: u64, end: u64) -> u32 {
        let lane = match self.ends.iter().position(|&e| e <= start) {
            Some(l) => l,
            None => {
                self.ends.push(0);
                self.ends.len() - 1
            }
        };
        self.ends[lane] = end;
        lane as u32
    }
}

/// One operation of a rank, as the file shows it.
struct Slice {
    start: u64,
    end: u64,
    unfinished: bool,
    compute: bool,
    name: String,
    args: String,
}

/// Process ids: the network's, the collectives', then the ranks' from here.
const NETWORK: u32 = 1;
const COLLECTIVES: u32 = 2;
const FIRST_RANK: u32 = 3;

/// Writes the timeline of the run directory `run` to `w`.
pub fn write(run: &Path, w: impl Write) -> Result<Stats, InputError> {
    let io = |e: io::Error| InputError::new(run.display().to_string(), None, None, format!("cannot write the timeline: {e}"));
    let mut out = Out { w: io::BufWriter::new(w), stats: Stats::default() };
    const HEAD: &[u8] = b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
    const TAIL: &[u8] = b"\n]}\n";
    out.w.write_all(HEAD).map_err(io)?;
    let summary: serde_json::Value = std::fs::read_to_string(run.join("summary.json")).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default();
    let end_ps = summary.get("sim_time_ns").and_then(|v| v.as_f64()).map_or(0, |ns| (ns * 1000.0).round() as u64);
    ranks(run, &mut out, end_ps)?;
    collectives(run, &mut out)?;
    flow_groups(run, &mut out, end_ps)?;
    links(run, &mut out)?;
    out.w.write_all(TAIL).map_err(io)?;
    out.stats.bytes += (HEAD.len() + TAIL.len()) as u64;
    out.w.flush().map_err(io)?;
    Ok(out.stats)
}

fn ranks<W: Write>(run: &Path, out: &mut Out<W>, end_ps: u64) -> Result<(), InputError> {
    let io = |e: io::Error| InputError::new(run.display().to_string(), None, None, format!("cannot write the timeline: {e}"));
    // The rank being gathered: (workload, rank), its process and slices.
    let mut current: Option<(String, u32, String)> = None;
    let mut slices: Vec<Slice> = Vec::new();
    let mut pid = FIRST_RANK - 1;
    let flush = |out: &mut Out<W>, key: &Option<(String, u32, String)>, slices: &mut Vec<Slice>, pid: u32| -> io::Result<()> {
        let Some((wl, rank, host)) = key else { return Ok(()) };
        out.meta("process_name", pid, 0, &format!("{wl} rank {rank} ({host})"))?;
        out.sort(pid, pid)?;
        slices.sort_by_key(|s| (s.start, s.end));
        let (mut compute, mut network) = (Lanes::default(), Lanes::default());
        let mut placed: Vec<(u32, bool)> = Vec::with_capacity(slices.len());
        for s in slices.iter() {
            placed.push((if s.compute { compute.place(s.start, s.end) } else { network.place(s.start, s.end) }, s.compute));
        }
        // Threads: 1 the waits, then compute lanes, then network lanes.
        let nc = compute.ends.len() as u32;
        out.meta("thread_name", pid, 1, "waits")?;
        for l in 0..nc {
            out.meta("thread_name", pid, 2 + l, &format!("compute {l}"))?;
        }
        for l in 0..network.ends.len() as u32 {
            out.meta("thread_name", pid, 2 + nc + l, &format!("network {l}"))?;
        }
        for (s, &(lane, c)) in slices.iter().zip(&placed) {
            let tid = if c { 2 + lane } else { 2 + nc + lane };
            let args = if s.unfinished { format!("{},\"unfinished\":true", s.args) } else { s.args.clone() };
            out.slice(pid, tid, &s.name, s.start, s.end, &args)?;
        }
        // Waits: the times within the rank's span that no compute covers.
        let (first, last) = (slices.iter().map(|s| s.start).min(), slices.iter().map(|s| s.end).max());
        if let (Some(first), Some(last)) = (first, last) {
            let mut reach = first;
            let mut gaps = Vec::new();
            for s in slices.iter().filter(|s| s.compute) {
                if s.start > reach {
                    gaps.push((reach, s.start));
                }
                reach = reach.max(s.end);
            }
            if last > reach {
                gaps.push((reach, last));
            }
            for (a, b) in gaps {
                let net = slices.iter().any(|s| !s.compute && s.start <= a && s.end > a);
                out.slice(pid, 1, if net { "waiting on the network" } else { "idle" }, a, b, "")?;
            }
        }
        slices.clear();
        Ok(())
    };
    read_table_chunks(run, Format::Csv, &mut OpTable::default(), CHUNK, |t| {
        for i in 0..t.len() {
            let key = (t.workload[i].as_str(), t.rank[i]);
            if current.as_ref().is_none_or(|c| (c.0.as_str(), c.1) != key) {
                flush(out, &current, &mut slices, pid).map_err(io)?;
                pid += 1;
                current = Some((t.workload[i].clone(), t.rank[i], t.hosts[t.host[i] as usize].clone()));
            }
            let Some(start) = t.start_ps[i] else { continue };
            let name = &t.names[t.name[i] as usize];
            let kind = &t.kind[i];
            let waited = t.waited_on[i].as_deref().unwrap_or("");
            slices.push(Slice {
                start,
                end: t.end_ps[i].unwrap_or(end_ps.max(start)),
                unfinished: t.end_ps[i].is_none(),
                compute: kind == "compute",
                name: if name.is_empty() { kind.to_string() } else { name.clone() },
                args: format!(r#""op_id":{},"kind":"{kind}","waited_on":"{waited}""#, t.op_id[i]),
            });
        }
        Ok(())
    })?;
    flush(out, &current, &mut slices, pid).map_err(io)?;
    Ok(())
}

fn collectives<W: Write>(run: &Path, out: &mut Out<W>) -> Result<(), InputError> {
    let io = |e: io::Error| InputError::new(run.display().to_string(), None, None, format!("cannot write the timeline: {e}"));
    let Some(c) = super::read::read_table::<CollectiveTable>(run, Format::Csv)? else { return Ok(()) };
    out.meta("process_name", COLLECTIVES, 0, "collectives").map_err(io)?;
    out.sort(COLLECTIVES, COLLECTIVES).map_err(io)?;
    // A thread per instance's lanes (a pipelined collective's steps overlap).
    let mut tid = 0;
    let mut r = 0;
    while r < c.len() {
        let id = c.collective_id[r];
        let end = (r..c.len()).find(|&k| c.collective_id[k] != id).unwrap_or(c.len());
        let mut rows: Vec<usize> = (r..end).filter(|&k| c.step[k].is_some() && c.start_ps[k].is_some()).collect();
        rows.sort_by_key(|&k| c.start_ps[k]);
        let mut lanes = Lanes::default();
        let first = tid + 1;
        for &k in &rows {
            let (s, f) = (c.start_ps[k].expect("started"), c.finish_ps[k]);
            let lane = lanes.place(s, f.unwrap_or(s));
            let args = format!(r#""iteration":{},"step":{},"flows":{}"#, c.iteration[k], c.step[k].expect("a step"), c.flows[k]);
            out.slice(COLLECTIVES, first + lane, &format!("{} step {}", c.op[k], c.step[k].expect("a step")), s, f.unwrap_or(s), &args).map_err(io)?;
        }
        for l in 0..lanes.ends.len() as u32 {
            out.meta("thread_name", COLLECTIVES, first + l, &format!("{} #{id} iter {} ({l})", c.name[r], c.iteration[r])).map_err(io)?;
        }
        tid += lanes.ends.len() as u32;
        r = end;
    }
    Ok(())
}

/// One flow group: its flows' span and a count of flows in flight per sample.
struct Group {
    name: String,
    start: u64,
    end: u64,
    flows: u64,
    delta: Vec<i64>,
}

fn flow_groups<W: Write>(run: &Path, out: &mut Out<W>, end_ps: u64) -> Result<(), InputError> {
    let io = |e: io::Error| InputError::new(run.display().to_string(), None, None, format!("cannot write the timeline: {e}"));
    let step = end_ps.div_ceil(SAMPLES).max(1);
    let mut groups: Vec<Group> = Vec::new();
    read_table_chunks(run, Format::Csv, &mut FlowTable::default(), CHUNK, |t| {
        for i in 0..t.len() {
            let n = t.flow_name(i);
            let name = if n.is_empty() { "(unnamed)" } else { n };
            let g = match groups.iter().position(|g| g.name == name) {
                Some(g) => g,
                None if groups.len() < MAX_GROUPS => {
                    groups.push(Group { name: name.to_string(), start: u64::MAX, end: 0, flows: 0, delta: vec![0; SAMPLES as usize + 2] });
                    groups.len() - 1
                }
                None => continue,
            };
            let g = &mut groups[g];
            let (s, f) = (t.start_ps[i], t.finish_ps[i].unwrap_or(end_ps));
            if s > end_ps {
                continue;
            }
            g.start = g.start.min(s);
            g.end = g.end.max(f);
            g.flows += 1;
            g.delta[(s / step) as usize] += 1;
            g.delta[((f / step) as usize + 1).min(SAMPLES as usize + 1)] -= 1;
        }
        Ok(())
    })?;
    out.meta("process_name", NETWORK, 0, "network").map_err(io)?;
    out.sort(NETWORK, 0).map_err(io)?;
    for (k, g) in groups.iter().enumerate().filter(|(_, g)| g.flows > 0) {
        let tid = k as u32 + 1;
        out.meta("thread_name", NETWORK, tid, &format!("flows {}", g.name)).map_err(io)?;
        out.slice(NETWORK, tid, &g.name, g.start, g.end, &format!(r#""flows":{}"#, g.flows)).map_err(io)?;
        let (mut level, mut last) = (0i64, -1i64);
        for (b, d) in g.delta.iter().enumerate().take(SAMPLES as usize + 1) {
            level += d;
            if level != last {
                out.counter(NETWORK, &format!("in flight {}", g.name), b as u64 * step, "flows", &level.to_string()).map_err(io)?;
                last = level;
            }
        }
    }
    Ok(())
}

fn links<W: Write>(run: &Path, out: &mut Out<W>) -> Result<(), InputError> {
    let io = |e: io::Error| InputError::new(run.display().to_string(), None, None, format!("cannot write the timeline: {e}"));
    // First pass: bytes per link, and the monitor window (the smallest
    // step between two rows of a link).
    let mut bytes: Vec<u64> = Vec::new();
    let mut last: Vec<Option<u64>> = Vec::new();
    let mut window = u64::MAX;
    let mut names: Vec<String> = Vec::new();
    let any = read_table_chunks(run, Format::Csv, &mut LinkColumns::default(), CHUNK, |t| {
        for i in 0..t.len() {
            let l = t.link_id[i] as usize;
            if bytes.len() <= l {
                bytes.resize(l + 1, 0);
                last.resize(l + 1, None);
                names.resize(l + 1, String::new());
            }
            bytes[l] += t.tx_bytes[i];
            if let Some(p) = last[l].filter(|&p| t.time_ps[i] > p) {
                window = window.min(t.time_ps[i] - p);
            }
            last[l] = Some(t.time_ps[i]);
            if names[l].is_empty() {
                names[l] = format!("{}->{}", t.nodes[t.from[i] as usize], t.nodes[t.to[i] as usize]);
            }
        }
        Ok(())
    })?;
    if !any {
        return Ok(());
    }
    let mut order: Vec<usize> = (0..bytes.len()).filter(|&l| bytes[l] > 0).collect();
    order.sort_by_key(|&l| (std::cmp::Reverse(bytes[l]), l));
    order.truncate(BUSIEST_LINKS);
    let mut chosen = vec![false; bytes.len()];
    order.iter().for_each(|&l| chosen[l] = true);
    let mut prev: Vec<Option<u64>> = vec![None; bytes.len()];
    // Whether the run measured queues (not at flow level).
    let mut queues = false;
    let zero = |out: &mut Out<W>, l: usize, at: u64, queues: bool| -> io::Result<()> {
        out.counter(NETWORK, &format!("utilization {}", names[l]), at, "utilization", "0")?;
        match queues {
            true => out.counter(NETWORK, &format!("queue {}", names[l]), at, "bytes", "0"),
            false => Ok(()),
        }
    };
    read_table_chunks(run, Format::Csv, &mut LinkColumns::default(), CHUNK, |t| {
        for i in 0..t.len() {
            let l = t.link_id[i] as usize;
            if !chosen[l] {
                continue;
            }
            let at = t.time_ps[i];
            // An idle window between two rows (idle rows left out): back to zero.
            if let Some(p) = prev[l] {
                if window != u64::MAX && at > p + window {
                    zero(out, l, p + window, queues).map_err(io)?;
                }
            }
            prev[l] = Some(at);
            queues |= t.max_queue_bytes[i].is_some();
            out.counter(NETWORK, &format!("utilization {}", names[l]), at, "utilization", &format!("{:.6}", t.utilization[i])).map_err(io)?;
            // Not measured at flow level: no queue counter then.
            if let Some(q) = t.max_queue_bytes[i] {
                out.counter(NETWORK, &format!("queue {}", names[l]), at, "bytes", &q.to_string()).map_err(io)?;
            }
        }
        Ok(())
    })?;
    if window != u64::MAX {
        for &l in &order {
            if let Some(p) = prev[l] {
                zero(out, l, p + window, queues).map_err(io)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_exact_microseconds() {
        assert_eq!(us(0), "0");
        assert_eq!(us(3_000_000), "3");
        assert_eq!(us(1_234_567), "1.234567");
        assert_eq!(us(71_498_880), "71.49888");
    }

    /// A slice goes on the first lane free at its start: overlapping
    /// slices on separate lanes, a lane reused once free.
    #[test]
    fn lanes_never_hold_overlapping_slices() {
        let mut l = Lanes::default();
        assert_eq!([l.place(0, 10), l.place(5, 8), l.place(8, 12), l.place(10, 11), l.place(9, 20)], [0, 1, 1, 0, 2]);
    }
}
