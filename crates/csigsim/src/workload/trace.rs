//! Trace: flows from a CSV file with a header naming the columns `src`,
//! `dst`, `size` and optionally `start`, `name` (size in bytes or with a unit,
//! start with a unit), relative to the scenario file.
//!
//! The file is read by a small CSV reader of its own so that every error
//! points at the cell's line and column, and so that what a general reader
//! would accept quietly (an unknown or repeated column, an unterminated quote,
//! a row longer than the header) is refused.

use super::Ctx;
use super::{relative_to, size_error, FlowSpec};
use crate::de::error::utf8;
use crate::de::InputError;
use crate::id::HostId;
use crate::net::topology::resolve_host;
use crate::net::topology::HostRef;
use crate::net::topology::TopologySpec;
use crate::units::{parse_size, parse_time, Time};
use serde::Deserialize;
use std::path::Path;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceConfig {
    pub file: String,
}

/// The columns a trace may have, in the order the docs give them.
const COLUMNS: [&str; 5] = ["src", "dst", "size", "start", "name"];

pub fn expand(c: &TraceConfig, ctx: &Ctx, flows: &mut Vec<FlowSpec>) -> Result<(), InputError> {
    let path = relative_to(ctx.base_dir, &c.file);
    // Errors inside the file name the file and line; only reading it is the key's fault.
    read_trace(&path, ctx.topo, ctx.idx, ctx.mtu, (ctx.first, ctx.max_flows), flows).map_err(|e| if e.file.is_empty() { (ctx.err)("file", e.msg) } else { e })
}

/// Reads `src,dst,size,start[,name]` rows. Hosts are names or indices; size is
/// bytes or a size with a unit; start is a time with a unit.
fn read_trace(path: &Path, topo: &TopologySpec, idx: usize, mtu: u32, (first, max_flows): (u64, u64), flows: &mut Vec<FlowSpec>) -> Result<(), InputError> {
    let fname = path.display().to_string();
    // Parsed rows take several times the text: a file too large for the
    // flow budget is refused before it is read (the shortest row is 6 bytes).
    if let Ok(m) = std::fs::metadata(path) {
        if m.len() / 6 > max_flows.saturating_mul(4) {
            return Err(InputError::new("", None, None, format!("trace file {fname} has {} bytes: {}", m.len(), super::too_many_flows(max_flows))));
        }
    }
    let bytes = std::fs::read(path).map_err(|e| InputError::new("", None, None, format!("cannot read trace file {fname}: {e}")))?;
    let text = utf8(bytes, &fname)?;
    let records = records(&text).map_err(|(at, m)| InputError::new(&fname, None, Some(at), m))?;
    let Some((header, rows)) = records.split_first() else {
        return Err(InputError::new(&fname, None, Some((1, 1)), "the file has no header: it must name the columns src, dst, size and optionally start, name"));
    };
    let mut cols: Vec<&str> = Vec::with_capacity(header.cells.len());
    for c in &header.cells {
        let name = c.text.as_str();
        let at = Some(c.at);
        if !COLUMNS.contains(&name) {
            let what = if name.is_empty() { "an empty column name".to_string() } else { format!("unknown column \"{name}\"") };
            return Err(InputError::new(&fname, None, at, format!("{what}; the columns are src, dst, size and optionally start, name")));
        }
        if cols.contains(&name) {
            return Err(InputError::new(&fname, None, at, format!("the header names the column \"{name}\" twice")));
        }
        cols.push(name);
    }
    let col = |name: &str| cols.iter().position(|h| *h == name);
    let (Some(cs), Some(cd), Some(cz)) = (col("src"), col("dst"), col("size")) else {
        return Err(InputError::new(
            &fname,
            None,
            Some(header.cells[0].at),
            "the header must name the columns src, dst, size and optionally start, name",
        ));
    };
    let (ct, cn) = (col("start"), col("name"));
    for rec in rows {
        if first + flows.len() as u64 >= max_flows {
            return Err(InputError::new(&fname, None, Some(rec.cells.first().map_or(rec.end, |c| c.at)), super::too_many_flows(max_flows)));
        }
        if let Some(extra) = rec.cells.get(cols.len()) {
            return Err(InputError::new(
                &fname,
                None,
                Some(extra.at),
                format!("this row has {} cells but the header names {} columns", rec.cells.len(), cols.len()),
            ));
        }
        // A missing cell is empty, and its position is the end of the row.
        let cell = |c: usize| rec.cells.get(c).map_or(("", rec.end), |x| (x.text.as_str(), x.at));
        let bad = |c: usize, m: String| InputError::new(&fname, Some(cols[c].to_string()), Some(cell(c).1), m);
        let host = |c: usize| {
            let v = cell(c).0;
            let h = match v.parse::<i64>() {
                Ok(i) => HostRef::Index(i),
                Err(_) => HostRef::Name(v.to_string()),
            };
            resolve_host(topo, &h).map_err(|m| bad(c, m))
        };
        let src = host(cs)?;
        let dst = host(cd)?;
        if src == dst {
            return Err(bad(cd, "a flow's source and destination must differ".into()));
        }
        let zs = cell(cz).0;
        let size = match zs.parse::<u64>() {
            Ok(v) => v,
            Err(_) => parse_size(zs).map_err(|m| bad(cz, m))?.0,
        };
        if let Some(m) = size_error(size, mtu) {
            return Err(bad(cz, m));
        }
        let start = match ct.map(|c| cell(c).0).filter(|s| !s.is_empty()) {
            Some(s) => parse_time(s).map_err(|m| bad(ct.expect("a start column"), m))?,
            None => Time(0),
        };
        let name = match cn {
            Some(c) if c < rec.cells.len() => cell(c).0.to_string(),
            _ => format!("trace{idx}"),
        };
        flows.push(FlowSpec { src: HostId(src), dst: HostId(dst), size, start, name, rate_cap: u64::MAX, channel: 0 });
    }
    Ok(())
}

/// One cell: its text (unquoted, trimmed of spaces) and where it starts.
#[derive(Debug, PartialEq)]
struct Cell {
    text: String,
    /// Line and column (1-based, in characters) of its first character.
    at: (usize, usize),
}

/// One row of the file.
#[derive(Debug)]
struct Record {
    cells: Vec<Cell>,
    /// Line and column just past its last cell.
    end: (usize, usize),
}

/// Splits CSV text into records. Lines starting with `#` and blank lines are
/// skipped; cells are separated by commas and trimmed of spaces; a cell that
/// starts with `"` runs to the matching `"` (`""` is a quote inside it, and it
/// may span lines) and may be followed only by spaces. Errors give the
/// position of the problem.
fn records(text: &str) -> Result<Vec<Record>, ((usize, usize), String)> {
    let chars: Vec<char> = text.strip_prefix('\u{feff}').unwrap_or(text).chars().collect();
    let n = chars.len();
    let (mut i, mut line, mut col) = (0, 1, 1);
    let mut out = Vec::new();
    let blank = |c: char| c == ' ' || c == '\t' || c == '\r';
    while i < n {
        let eol = chars[i..].iter().position(|&c| c == '\n').map_or(n, |p| i + p);
        if chars[i] == '#' || chars[i..eol].iter().all(|&c| blank(c)) {
            i = eol + 1;
            line += 1;
            col = 1;
            continue;
        }
        let mut cells = Vec::new();
        loop {
            while i < n && blank(chars[i]) {
                i += 1;
                col += 1;
            }
            let at = (line, col);
            let mut cell = String::new();
            if i < n && chars[i] == '"' {
                i += 1;
                col += 1;
                loop {
                    let Some(&c) = chars.get(i) else {
                        return Err((at, "unterminated quote: this cell's closing \" is missing".into()));
                    };
                    i += 1;
                    if c == '"' {
                        col += 1;
                        if chars.get(i) == Some(&'"') {
                            cell.push('"');
                            i += 1;
                            col += 1;
                            continue;
                        }
                        break;
                    }
                    if c == '\n' {
                        line += 1;
                        col = 1;
                    } else {
                        col += 1;
                    }
                    cell.push(c);
                }
                while i < n && blank(chars[i]) {
                    i += 1;
                    col += 1;
                }
                if i < n && chars[i] != ',' && chars[i] != '\n' {
                    return Err(((line, col), "unexpected text after the closing quote of a cell (a quote inside a quoted cell is written \"\")".into()));
                }
            } else {
                while i < n && chars[i] != ',' && chars[i] != '\n' {
                    cell.push(chars[i]);
                    i += 1;
                    col += 1;
                }
            }
            cells.push(Cell { text: cell.trim().to_string(), at });
            if chars.get(i) == Some(&',') {
                i += 1;
                col += 1;
                continue;
            }
            out.push(Record { cells, end: (line, col) });
            i += 1;
            line += 1;
            col = 1;
            break;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(r: &Record) -> Vec<&str> {
        r.cells.iter().map(|c| c.text.as_str()).collect()
    }

    #[test]
    fn reads_cells_with_positions() {
        let r = records("# c\nsrc, dst ,size\n\nh0,\"h,1\" , 5\n\"a\"\"b\nc\",x\n").unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(texts(&r[0]), ["src", "dst", "size"]);
        assert_eq!(r[0].cells[1].at, (2, 6));
        assert_eq!(texts(&r[1]), ["h0", "h,1", "5"]);
        assert_eq!(r[1].cells[2].at, (4, 12));
        assert_eq!(texts(&r[2]), ["a\"b\nc", "x"]);
        assert_eq!(r[2].cells[1].at, (6, 4));
        assert_eq!(r[2].end, (6, 5));
    }

    #[test]
    fn refuses_unterminated_quotes_and_text_after_them() {
        assert_eq!(records("src,dst\n\"h0,h1\n").unwrap_err().0, (2, 1));
        assert_eq!(records("src,dst\n\"h0\"x,h1\n").unwrap_err().0, (2, 5));
    }
}
