//! The HPCC ns-3 simulator's `topology.txt` and `flow.txt`, as its
//! `scratch/third.cc` reads them (whitespace-separated values, read in order):
//!
//! - topology: `nodes switches links`, the switches' node ids, then one
//!   `src dst rate delay error_rate` per link; nodes not listed as switches
//!   are hosts.
//! - flows: their count, then one `src dst pg dport size start_s` per flow,
//!   in start order (third.cc schedules them in file order).

use super::{decimal, err_at, lines, quote, read, uint, Token};
use csigsim::units::{Rate, Time};
use csigsim::InputError;
use std::fmt::Write as _;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The topology file (ns-3's mix/topology.txt format).
    pub topology: PathBuf,
    /// The flow file (ns-3's mix/flow.txt format).
    pub flow: PathBuf,
    /// Congestion control, by run.py's --cc name (hp, dcqcn, dcqcn_paper,
    /// timely, dctcp; hpcc for hp).
    #[arg(long, default_value = "hp")]
    pub cc: String,
    /// Flow start times are taken relative to this time (default: the
    /// earliest start rounded down to a whole second).
    #[arg(long = "start-offset", value_name = "TIME")]
    pub start_offset: Option<String>,
    #[command(flatten)]
    pub output: super::Output,
}

/// run.py's --cc names: the scenario's `transport.cc` and extra TOML.
fn cc(name: &str) -> Result<(&'static str, &'static str), InputError> {
    Ok(match name {
        "hp" | "hpcc" => ("hpcc", ""),
        "dcqcn" => ("dcqcn", ""),
        "dcqcn_paper" => ("dcqcn", "[transport.dcqcn]\nprofile = \"hpcc_run_paper\"\n"),
        "timely" => ("timely", ""),
        "dctcp" => ("dctcp", ""),
        _ => {
            return Err(InputError::new(
                "--cc",
                None,
                None,
                format!(
                    "\"{name}\" is not one csigsim models: give hp (HPCC, run.py's default), dcqcn, dcqcn_paper, timely or dctcp \
                     (run.py's _vwin variants and hpccPint are not modelled)"
                ),
            ))
        }
    })
}

/// Reads the values of a file in order, as `ifstream >>` does.
struct Reader<'a> {
    file: &'a str,
    toks: Vec<Token<'a>>,
    next: usize,
}

impl<'a> Reader<'a> {
    fn new(file: &'a str, text: &'a str) -> Self {
        Reader { file, toks: lines(text).into_iter().flatten().collect(), next: 0 }
    }
    fn take(&mut self, what: &str) -> Result<Token<'a>, InputError> {
        match self.toks.get(self.next) {
            Some(t) => {
                self.next += 1;
                Ok(t.clone())
            }
            None => {
                let at = self.toks.last().map(|t| (t.line, t.col + t.text.len()));
                Err(InputError::new(self.file, None, at, format!("the file ends where {what} was expected")))
            }
        }
    }
    fn uint(&mut self, what: &str) -> Result<(u64, Token<'a>), InputError> {
        let t = self.take(what)?;
        Ok((uint(self.file, &t, what)?, t))
    }
    /// third.cc reads no further than the counts of the first line say,
    /// so what follows is ignored, as there, with a warning.
    fn end(&self, what: &str) {
        if let Some(t) = self.toks.get(self.next) {
            eprintln!(
                "warning: {}:{}:{}: ignored from here to the end: ns-3 reads only the {what} the first line declares",
                self.file, t.line, t.col
            );
        }
    }
}

/// An ns-3 DataRate string ("100Gbps", "10Gb/s", "25GBps", "1000000bps").
fn rate(s: &str) -> Option<u64> {
    let i = s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len());
    let (num, unit) = s.split_at(i);
    let (prefix, per) = if let Some(p) = unit.strip_suffix("bps").or_else(|| unit.strip_suffix("b/s")) {
        (p, 1)
    } else if let Some(p) = unit.strip_suffix("Bps").or_else(|| unit.strip_suffix("B/s")) {
        (p, 8)
    } else if unit.is_empty() {
        ("", 1)
    } else {
        return None;
    };
    let mult: u128 = match prefix {
        "" => 1,
        "k" | "K" => 1_000,
        "M" => 1_000_000,
        "G" => 1_000_000_000,
        "T" => 1_000_000_000_000,
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        _ => return None,
    };
    u64::try_from(decimal(num, mult * per)?).ok().filter(|&r| r > 0)
}

/// An ns-3 Time string ("0.001ms", "1000ns", "1e-6s"; a plain number is
/// seconds), in picoseconds.
fn time_ps(s: &str) -> Option<u64> {
    let i = s.find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E').unwrap_or(s.len());
    let (num, unit) = s.split_at(i);
    let v = match unit {
        "" | "s" => decimal(num, 1_000_000_000_000)?,
        "ms" => decimal(num, 1_000_000_000)?,
        "us" => decimal(num, 1_000_000)?,
        "ns" => decimal(num, 1_000)?,
        "ps" => decimal(num, 1)?,
        "fs" => (decimal(num, 1)? + 500) / 1000,
        "min" => decimal(num, 60_000_000_000_000)?,
        "h" => decimal(num, 3_600_000_000_000_000)?,
        "d" => decimal(num, 86_400_000_000_000_000)?,
        _ => return None,
    };
    u64::try_from(v).ok()
}

struct Link {
    a: usize,
    b: usize,
    rate: u64,
    delay_ps: u64,
}

struct Flow<'a> {
    src: usize,
    dst: usize,
    size: u64,
    start_ps: u64,
    at: Token<'a>,
}

pub fn import(a: &Args, stem: &str) -> Result<Vec<(String, String)>, InputError> {
    let (cc_name, cc_extra) = cc(&a.cc)?;
    let (tfile, ttext) = read(&a.topology)?;
    let (ffile, ftext) = read(&a.flow)?;

    // Topology.
    let mut r = Reader::new(&tfile, &ttext);
    let (nodes, nodes_at) = r.uint("the number of nodes")?;
    let (switches, _) = r.uint("the number of switches")?;
    let (nlinks, _) = r.uint("the number of links")?;
    if !(2..=2_000_000).contains(&nodes) {
        return Err(err_at(&tfile, &nodes_at, format!("{nodes} nodes: expected 2 .. 2000000")));
    }
    let nodes = nodes as usize;
    if switches > nodes as u64 {
        return Err(err_at(&tfile, &nodes_at, format!("{switches} switches among {nodes} nodes")));
    }
    let mut is_switch = vec![false; nodes];
    for i in 0..switches {
        let (id, t) = r.uint(&format!("switch id {} of {switches}", i + 1))?;
        if id >= nodes as u64 {
            return Err(err_at(&tfile, &t, format!("switch id {id} is not a node: nodes are 0 .. {}", nodes - 1)));
        }
        if std::mem::replace(&mut is_switch[id as usize], true) {
            return Err(err_at(&tfile, &t, format!("switch id {id} is listed twice")));
        }
    }
    let mut links = Vec::new();
    let mut host_link: Vec<Option<usize>> = vec![None; nodes];
    for i in 0..nlinks {
        let what = format!("link {} of {nlinks}", i + 1);
        let mut end = |r: &mut Reader, which: &str| -> Result<usize, InputError> {
            let (n, t) = r.uint(&format!("{what}: its {which} node"))?;
            if n >= nodes as u64 {
                return Err(err_at(&tfile, &t, format!("{what}: node {n} does not exist: nodes are 0 .. {}", nodes - 1)));
            }
            if !is_switch[n as usize] {
                if let Some(l) = host_link[n as usize] {
                    return Err(err_at(&tfile, &t, format!("host {n} has a second link (the first is on line {l}): csigsim gives every host one link")));
                }
                host_link[n as usize] = Some(t.line);
            }
            Ok(n as usize)
        };
        let a_ = end(&mut r, "first")?;
        let b_ = end(&mut r, "second")?;
        let first = r.toks[r.next - 2].clone();
        if a_ == b_ {
            return Err(err_at(&tfile, &first, format!("{what} joins node {a_} to itself")));
        }
        if !is_switch[a_] && !is_switch[b_] {
            return Err(err_at(&tfile, &first, format!("{what} joins two hosts, {a_} and {b_}: csigsim links a host to a switch")));
        }
        let t = r.take(&format!("{what}: its rate"))?;
        let rate = rate(t.text).ok_or_else(|| err_at(&tfile, &t, format!("{what}: \"{}\" is not a data rate such as 100Gbps", t.text)))?;
        let t = r.take(&format!("{what}: its delay"))?;
        let delay_ps = time_ps(t.text).ok_or_else(|| err_at(&tfile, &t, format!("{what}: \"{}\" is not a time such as 0.001ms or 1000ns", t.text)))?;
        let t = r.take(&format!("{what}: its error rate"))?;
        match t.text.parse::<f64>() {
            Ok(0.0) => {}
            Ok(e) if e.is_finite() && e > 0.0 => {
                return Err(err_at(
                    &tfile,
                    &t,
                    format!("{what}: error rate {}: csigsim does not model random packet loss on a link; an imported link must have error rate 0", t.text),
                ))
            }
            _ => return Err(err_at(&tfile, &t, format!("{what}: \"{}\" is not an error rate (a probability, 0 for none)", t.text))),
        }
        links.push(Link { a: a_, b: b_, rate, delay_ps });
    }
    r.end(&format!("{nlinks} links"));
    if let Some(h) = (0..nodes).find(|&n| !is_switch[n] && host_link[n].is_none()) {
        return Err(err_at(&tfile, &nodes_at, format!("host {h} (a node not listed as a switch) has no link")));
    }

    // Flows.
    let mut r = Reader::new(&ffile, &ftext);
    let (nflows, nflows_at) = r.uint("the number of flows")?;
    if nflows == 0 {
        return Err(err_at(&ffile, &nflows_at, "no flows: a scenario needs at least one"));
    }
    let mut flows = Vec::new();
    let mut pg0: Option<(u64, usize)> = None;
    for i in 0..nflows {
        let what = format!("flow {} of {nflows}", i + 1);
        let host = |n: u64, t: &Token, which: &str| -> Result<usize, InputError> {
            if n >= nodes as u64 || is_switch[n as usize] {
                let why = if n >= nodes as u64 { "does not exist" } else { "is a switch" };
                return Err(err_at(&ffile, t, format!("{what}: {which} node {n} {why} in {tfile}: flows run between hosts")));
            }
            Ok(n as usize)
        };
        let (n, at) = r.uint(&format!("{what}: its source"))?;
        let src = host(n, &at, "source")?;
        let (n, dt) = r.uint(&format!("{what}: its destination"))?;
        let dst = host(n, &dt, "destination")?;
        if src == dst {
            return Err(err_at(&ffile, &dt, format!("{what}: source and destination are both node {src}")));
        }
        let (pg, pt) = r.uint(&format!("{what}: its priority group"))?;
        match pg0 {
            None => pg0 = Some((pg, pt.line)),
            Some((p, line)) if p != pg => {
                return Err(err_at(
                    &ffile,
                    &pt,
                    format!("{what}: priority group {pg} differs from {p} of line {line}: csigsim carries all data in one class"),
                ))
            }
            _ => {}
        }
        r.uint(&format!("{what}: its destination port"))?;
        let (size, st) = r.uint(&format!("{what}: its size in bytes"))?;
        if size == 0 {
            return Err(err_at(&ffile, &st, format!("{what}: size 0: a flow carries at least one byte")));
        }
        let t = r.take(&format!("{what}: its start time in seconds"))?;
        let start_ps = decimal(t.text, 1_000_000_000_000)
            .and_then(|v| u64::try_from(v).ok())
            .ok_or_else(|| err_at(&ffile, &t, format!("{what}: \"{}\" is not a start time in seconds", t.text)))?;
        if let Some(prev) = flows.last().map(|f: &Flow| f.start_ps) {
            if start_ps < prev {
                return Err(err_at(
                    &ffile,
                    &t,
                    format!("{what}: starts at {} s, before the flow above it: ns-3 reads flows in order of start time", t.text),
                ));
            }
        }
        flows.push(Flow { src, dst, size, start_ps, at });
    }
    r.end(&format!("{nflows} flows"));

    const S: u64 = 1_000_000_000_000;
    let offset = match &a.start_offset {
        Some(s) => csigsim::units::parse_time(s).map_err(|m| InputError::new("--start-offset", None, None, m))?.0,
        None => flows[0].start_ps / S * S,
    };
    if let Some(f) = flows.iter().find(|f| f.start_ps < offset) {
        return Err(err_at(
            &ffile,
            &f.at,
            format!("the flow starts at {}, before --start-offset {}", Time(f.start_ps), Time(offset)),
        ));
    }

    // The files.
    let name = |n: usize| format!("n{n}");
    let list = |v: Vec<String>| v.iter().map(|s| quote(s)).collect::<Vec<_>>().join(", ");
    let tname = file_name(&a.topology);
    let fname = file_name(&a.flow);
    let csv = format!("{stem}.csv");
    let mut toml = String::new();
    let _ = writeln!(toml, "# Imported by `csigsim import ns3` from {tname} and {fname} (the HPCC ns-3 simulator's");
    let _ = writeln!(toml, "# formats), congestion control as run.py --cc {}.", a.cc);
    let _ = writeln!(toml, "name = {}\nprofile = \"ns3-rdma\"\n", quote(stem));
    let _ = writeln!(toml, "[transport]\ncc = \"{cc_name}\"\n{cc_extra}");
    let _ = writeln!(toml, "[topology]\nkind = \"custom\"");
    let _ = writeln!(toml, "hosts = [{}]", list((0..nodes).filter(|&n| !is_switch[n]).map(name).collect()));
    let _ = writeln!(toml, "switches = [{}]", list((0..nodes).filter(|&n| is_switch[n]).map(name).collect()));
    toml.push_str("links = [\n");
    for l in &links {
        let _ = writeln!(toml, "  {{ a = \"{}\", b = \"{}\", rate = \"{}\", delay = \"{}\" }},", name(l.a), name(l.b), Rate(l.rate), Time(l.delay_ps));
    }
    toml.push_str("]\n\n[[workload]]\nkind = \"trace\"\n");
    let _ = writeln!(toml, "file = {}", quote(&csv));

    let mut trace = String::new();
    let _ = writeln!(trace, "# the flows of {fname} (ns-3 format), start times relative to {} of the file", Time(offset));
    trace.push_str("src,dst,size,start,name\n");
    for f in &flows {
        let _ = writeln!(trace, "{},{},{},{},", name(f.src), name(f.dst), f.size, Time(f.start_ps - offset));
    }
    Ok(vec![(format!("{stem}.toml"), toml), (csv, trace)])
}

fn file_name(p: &std::path::Path) -> String {
    p.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ns3_rates_and_times() {
        assert_eq!(rate("100Gbps"), Some(100_000_000_000));
        assert_eq!(rate("10Gb/s"), Some(10_000_000_000));
        assert_eq!(rate("1GBps"), Some(8_000_000_000));
        assert_eq!(rate("1Kib/s"), Some(1024));
        assert_eq!(rate("1000"), Some(1000));
        assert_eq!(rate("0Gbps"), None);
        assert_eq!(rate("100Gbs"), None);
        assert_eq!(time_ps("0.001ms"), Some(1_000_000));
        assert_eq!(time_ps("1000ns"), Some(1_000_000));
        assert_eq!(time_ps("1e-6s"), Some(1_000_000));
        assert_eq!(time_ps("1e-6"), Some(1_000_000));
        assert_eq!(time_ps("1500fs"), Some(2));
        assert_eq!(time_ps("1us5"), None);
    }
}
