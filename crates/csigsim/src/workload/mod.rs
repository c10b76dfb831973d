//! Workloads: generators that expand into flows. Each generator draws from
//! its own random stream (seed, workload index), so adding a generator never
//! changes the flows of another.

use crate::net::topology::TopologySpec;
use crate::scenario::config::{HostRef, WorkloadEntry};
use crate::scenario::{relative_to, resolve_host, FlowSpec, InputError};
use crate::sim::rng::{Purpose, Stream};
use crate::units::{parse_size, parse_time, Time};
use std::path::Path;

/// Every generator this build knows, for `csigsim list`.
pub const KINDS: &[(&str, &str)] = &[
    ("permutation", "every host sends one flow to another; a uniformly random cyclic permutation"),
    ("incast", "N senders to one receiver"),
    ("all_to_all", "every host sends one flow to every other host"),
    ("trace", "flows from a CSV file: src,dst,size,start"),
];

type KeyErr<'a> = dyn Fn(&str, String) -> InputError + 'a;

fn hosts_of(topo: &TopologySpec, list: &Option<Vec<HostRef>>, err: &KeyErr) -> Result<Vec<u32>, InputError> {
    match list {
        None => Ok((0..topo.hosts.len() as u32).collect()),
        Some(l) => {
            let mut out = Vec::with_capacity(l.len());
            for (i, h) in l.iter().enumerate() {
                let id = resolve_host(topo, h).map_err(|m| err(&format!("hosts[{i}]"), m))?;
                if out.contains(&id) {
                    return Err(err(&format!("hosts[{i}]"), format!("host {} is listed twice", topo.hosts[id as usize])));
                }
                out.push(id);
            }
            Ok(out)
        }
    }
}

fn label(name: &Option<String>, kind: &str, idx: usize) -> String {
    name.clone().unwrap_or_else(|| format!("{kind}{idx}"))
}

pub fn expand(
    idx: usize,
    w: &WorkloadEntry,
    topo: &TopologySpec,
    seed: u64,
    base_dir: &Path,
    flows: &mut Vec<FlowSpec>,
    err: &KeyErr,
) -> Result<(), InputError> {
    let nonzero = |size: u64| if size == 0 { Err(err("size", "size must be above zero".into())) } else { Ok(size) };
    match w {
        WorkloadEntry::Permutation { size, start, hosts, name } => {
            let size = nonzero(size.0)?;
            let hs = hosts_of(topo, hosts, err)?;
            if hs.len() < 2 {
                return Err(err("hosts", "a permutation needs at least two hosts".into()));
            }
            // Sattolo's algorithm: a uniformly random permutation with a single
            // cycle, so no host sends to itself.
            let mut perm: Vec<usize> = (0..hs.len()).collect();
            let mut rng = Stream::new(seed, idx as u64, Purpose::Workload);
            for i in (1..perm.len()).rev() {
                let j = rng.below(i as u64) as usize;
                perm.swap(i, j);
            }
            let tag = label(name, "perm", idx);
            for (i, &h) in hs.iter().enumerate() {
                flows.push(FlowSpec { src: h, dst: hs[perm[i]], size, start: *start, name: tag.clone(), rate_cap: u64::MAX });
            }
        }
        WorkloadEntry::Incast { receiver, senders, count, size, start, name } => {
            let size = nonzero(size.0)?;
            let rx = resolve_host(topo, receiver).map_err(|m| err("receiver", m))?;
            let n = topo.hosts.len() as u32;
            let tx: Vec<u32> = match (senders, count) {
                (Some(_), Some(_)) => return Err(err("count", "give either senders or count, not both".into())),
                (Some(_), None) => {
                    let l = hosts_of(topo, senders, &|k, m| err(&k.replace("hosts", "senders"), m))?;
                    if l.contains(&rx) {
                        return Err(err("senders", "the receiver cannot be one of the senders".into()));
                    }
                    l
                }
                (None, Some(c)) => {
                    if *c == 0 || *c >= n {
                        return Err(err("count", format!("count must be between 1 and {} (hosts other than the receiver)", n - 1)));
                    }
                    (1..=*c).map(|k| (rx + k) % n).collect()
                }
                (None, None) => (0..n).filter(|&h| h != rx).collect(),
            };
            if tx.is_empty() {
                return Err(err("senders", "an incast needs at least one sender".into()));
            }
            let tag = label(name, "incast", idx);
            for s in tx {
                flows.push(FlowSpec { src: s, dst: rx, size, start: *start, name: tag.clone(), rate_cap: u64::MAX });
            }
        }
        WorkloadEntry::AllToAll { size, start, hosts, name } => {
            let size = nonzero(size.0)?;
            let hs = hosts_of(topo, hosts, err)?;
            if hs.len() < 2 {
                return Err(err("hosts", "all_to_all needs at least two hosts".into()));
            }
            let tag = label(name, "a2a", idx);
            for &s in &hs {
                for &d in &hs {
                    if s != d {
                        flows.push(FlowSpec { src: s, dst: d, size, start: *start, name: tag.clone(), rate_cap: u64::MAX });
                    }
                }
            }
        }
        WorkloadEntry::Trace { file } => {
            let path = relative_to(base_dir, file);
            read_trace(&path, topo, idx, flows).map_err(|e| {
                if e.file.is_empty() {
                    err("file", e.msg)
                } else {
                    e
                }
            })?;
        }
    }
    Ok(())
}

/// Reads `src,dst,size,start[,name]` rows. Hosts are names or indices; size is
/// bytes or a size with a unit; start is a time with a unit.
fn read_trace(path: &Path, topo: &TopologySpec, idx: usize, flows: &mut Vec<FlowSpec>) -> Result<(), InputError> {
    let fname = path.display().to_string();
    let mut rdr = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .flexible(true)
        .from_path(path)
        .map_err(|e| InputError::new("", None, None, format!("cannot read trace file {fname}: {e}")))?;
    let headers = rdr.headers().map_err(|e| InputError::new(&fname, None, Some((1, 1)), format!("bad header: {e}")))?.clone();
    let col = |name: &str| headers.iter().position(|h| h == name);
    let (Some(cs), Some(cd), Some(cz)) = (col("src"), col("dst"), col("size")) else {
        return Err(InputError::new(&fname, None, Some((1, 1)), "the header must name the columns src, dst, size and optionally start, name"));
    };
    let (ct, cn) = (col("start"), col("name"));
    for rec in rdr.records() {
        let rec = rec.map_err(|e| InputError::new(&fname, None, None, format!("bad row: {e}")))?;
        let line = rec.position().map(|p| p.line() as usize).unwrap_or(0);
        let bad = |column: &str, m: String| InputError::new(&fname, Some(column.to_string()), Some((line, 1)), m);
        let host = |c: usize, column: &str| {
            let v = rec.get(c).unwrap_or("");
            let h = match v.parse::<i64>() {
                Ok(i) => HostRef::Index(i),
                Err(_) => HostRef::Name(v.to_string()),
            };
            resolve_host(topo, &h).map_err(|m| bad(column, m))
        };
        let src = host(cs, "src")?;
        let dst = host(cd, "dst")?;
        if src == dst {
            return Err(bad("dst", "a flow's source and destination must differ".into()));
        }
        let zs = rec.get(cz).unwrap_or("");
        let size = match zs.parse::<u64>() {
            Ok(v) => v,
            Err(_) => parse_size(zs).map_err(|m| bad("size", m))?.0,
        };
        if size == 0 {
            return Err(bad("size", "size must be above zero".into()));
        }
        let start = match ct.and_then(|c| rec.get(c)).filter(|s| !s.is_empty()) {
            Some(s) => parse_time(s).map_err(|m| bad("start", m))?,
            None => Time(0),
        };
        let name = cn.and_then(|c| rec.get(c)).map(str::to_string).unwrap_or_else(|| format!("trace{idx}"));
        flows.push(FlowSpec { src, dst, size, start, name, rate_cap: u64::MAX });
    }
    Ok(())
}
