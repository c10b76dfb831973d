//! Trace: flows from a CSV file with a header naming the columns `src`,
//! `dst`, `size` and optionally `start`, `name` (size in bytes or with a unit,
//! start with a unit), relative to the scenario file.

use super::Ctx;
use crate::net::topology::TopologySpec;
use crate::net::topology::HostRef;
use super::{relative_to, FlowSpec};
use crate::id::HostId;
use crate::de::InputError;
use crate::net::topology::resolve_host;
use crate::units::{parse_size, parse_time, Time};
use serde::Deserialize;
use std::path::Path;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceConfig {
    pub file: String,
}

pub fn expand(c: &TraceConfig, ctx: &Ctx, flows: &mut Vec<FlowSpec>) -> Result<(), InputError> {
    let path = relative_to(ctx.base_dir, &c.file);
    // Errors inside the file name the file and line; only reading it is the key's fault.
    read_trace(&path, ctx.topo, ctx.idx, flows).map_err(|e| if e.file.is_empty() { (ctx.err)("file", e.msg) } else { e })
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
        flows.push(FlowSpec { src: HostId(src), dst: HostId(dst), size, start, name, rate_cap: u64::MAX });
    }
    Ok(())
}
