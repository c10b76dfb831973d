//! A run directory read back into the typed tables, from its CSV files or
//! from their Parquet twins: what `csigsim compare`, the Python package's
//! `read_run` and its plots work on. Each table is read by its one
//! declaration ([`super::schema`]): columns by name, times back to integer
//! picoseconds (exactly: the files keep every picosecond), and the numbers
//! the CSV rounds as the CSV writes them, so that both files give the same
//! tables.

use super::schema::{Cell, Codes, Kind, Table};
use super::tables::{CcTable, CollectiveTable, FlowTable, LinkColumns, RpcTable, SignalTable};
use crate::InputError;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// Which files to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Csv,
    Parquet,
    /// Each table's Parquet twin when there is one (with the `parquet`
    /// feature), else its CSV file: the same tables, read faster.
    Auto,
}

/// The tables of a run directory; a table is `None` when its file is absent
/// (the run did not write it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunTables {
    pub dir: PathBuf,
    /// summary.json parsed (an empty object without the file).
    pub summary: serde_json::Value,
    /// scenario.toml ("" without the file).
    pub scenario_toml: String,
    pub flows: FlowTable,
    pub links: Option<LinkColumns>,
    pub signals: Option<SignalTable>,
    pub cc: Option<CcTable>,
    pub collectives: Option<CollectiveTable>,
    pub rpcs: Option<RpcTable>,
    pub jobs: Option<super::tables::JobTable>,
    pub job_links: Option<super::tables::JobLinkTable>,
}

/// Reads the run directory `dir`. Its flows file is required; the other
/// tables are read when their files are there.
pub fn read_run(dir: &Path, format: Format) -> Result<RunTables, InputError> {
    let flows = read_table::<FlowTable>(dir, format)?.ok_or_else(|| {
        let ext = if format == Format::Parquet { "parquet" } else { "csv" };
        let file = dir.join(format!("flows.{ext}")).display().to_string();
        InputError::new(&file, None, None, format!("not a run directory: {} has no flows.{ext}", dir.display()))
    })?;
    let summary_path = dir.join("summary.json");
    let summary = match std::fs::read_to_string(&summary_path) {
        Ok(text) => serde_json::from_str(&text)
            .map_err(|e| InputError::new(summary_path.display().to_string(), None, Some((e.line(), e.column())), e.to_string()))?,
        Err(_) => serde_json::Value::Object(Default::default()),
    };
    Ok(RunTables {
        dir: dir.to_path_buf(),
        summary,
        scenario_toml: std::fs::read_to_string(dir.join("scenario.toml")).unwrap_or_default(),
        flows,
        links: read_table(dir, format)?,
        signals: read_table(dir, format)?,
        cc: read_table(dir, format)?,
        collectives: read_table(dir, format)?,
        rpcs: read_table(dir, format)?,
        jobs: read_table(dir, format)?,
        job_links: read_table(dir, format)?,
    })
}

/// One table of `dir`, None when its file is absent.
pub fn read_table<T: Table>(dir: &Path, format: Format) -> Result<Option<T>, InputError> {
    let mut t = T::default();
    Ok(read_table_chunks(dir, format, &mut t, usize::MAX, |_| Ok(()))?.then_some(t))
}

/// One table of `dir` read `rows` rows at a time into `t`, each chunk
/// handed to `each` and then removed (see [`read_csv_chunks`]); false when
/// its file is absent.
pub fn read_table_chunks<T: Table>(dir: &Path, format: Format, t: &mut T, rows: usize, each: impl FnMut(&mut T) -> Result<(), InputError>) -> Result<bool, InputError> {
    let parquet = dir.join(format!("{}.parquet", T::FILE));
    let csv = dir.join(format!("{}.csv", T::FILE));
    let from_parquet = match format {
        Format::Csv => false,
        Format::Parquet => true,
        Format::Auto => cfg!(feature = "parquet") && parquet.is_file(),
    };
    if from_parquet {
        if !parquet.is_file() {
            return Ok(false);
        }
        return read_parquet_chunks(&parquet, t, rows, each).map(|_| true);
    }
    if !csv.is_file() {
        return Ok(false);
    }
    read_csv_chunks(&csv, t, rows, each).map(|_| true)
}

fn error(path: &Path, line_col: Option<(usize, usize)>, msg: impl Into<String>) -> InputError {
    InputError::new(path.display().to_string(), None, line_col, msg.into())
}

/// The picoseconds of a time the CSV writes in nanoseconds (whole
/// nanoseconds, then up to three decimals).
fn parse_ns(s: &str) -> Option<u64> {
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    if whole.is_empty() || frac.len() > 3 || !whole.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut ps: u64 = whole.parse::<u64>().ok()?.checked_mul(1000)?;
    for (i, d) in frac.bytes().enumerate() {
        ps = ps.checked_add(u64::from(d - b'0') * [100, 10, 1][i])?;
    }
    Some(ps)
}

/// A CSV cell of a column of `kind` (an empty cell is a null, but text).
fn csv_cell(kind: Kind, s: &str) -> Option<Cell<'_>> {
    Some(match kind {
        Kind::Text => Cell::Text(s),
        _ if s.is_empty() => Cell::Null,
        Kind::Int => Cell::Int(s.parse().ok()?),
        Kind::Time => Cell::Int(parse_ns(s)?),
        _ => Cell::Num(s.parse().ok()?),
    })
}

/// The fields of one CSV record starting at `pos`: quoted fields may hold
/// commas, doubled quotes and line breaks. Returns the position after it.
fn record<'a>(text: &'a str, mut pos: usize, fields: &mut Vec<Cow<'a, str>>) -> Result<usize, &'static str> {
    fields.clear();
    let b = text.as_bytes();
    loop {
        if b.get(pos) == Some(&b'"') {
            let mut s = String::new();
            let mut at = pos + 1;
            loop {
                let q = text[at..].find('"').ok_or("a quoted cell is not closed")? + at;
                s.push_str(&text[at..q]);
                if b.get(q + 1) == Some(&b'"') {
                    s.push('"');
                    at = q + 2;
                } else {
                    pos = q + 1;
                    break;
                }
            }
            fields.push(Cow::Owned(s));
        } else {
            let end = text[pos..].find([',', '\n']).map_or(text.len(), |e| e + pos);
            fields.push(Cow::Borrowed(text[pos..end].strip_suffix('\r').unwrap_or(&text[pos..end])));
            pos = end;
        }
        match b.get(pos) {
            Some(b',') => pos += 1,
            Some(b'\n') => return Ok(pos + 1),
            None => return Ok(pos),
            Some(b'\r') if b.get(pos + 1) == Some(&b'\n') => return Ok(pos + 2),
            _ => return Err("text after a quoted cell"),
        }
    }
}

/// A table from its CSV file: the columns found by their names in the
/// header; a nullable column the file lacks (a file of an earlier version)
/// is empty.
pub fn read_csv<T: Table>(path: &Path) -> Result<T, InputError> {
    let mut t = T::default();
    read_csv_chunks(path, &mut t, usize::MAX, |_| Ok(()))?;
    Ok(t)
}

/// Reads the CSV file at `path` into `t` a line at a time, handing `t` to
/// `each` after every `rows` rows (and after the last), then removing its
/// rows (names stay): a file of millions of rows is read in the memory of
/// `rows` of them. With `rows` = `usize::MAX`, `t` ends up holding the
/// whole table.
pub fn read_csv_chunks<T: Table>(path: &Path, t: &mut T, rows: usize, each: impl FnMut(&mut T) -> Result<(), InputError>) -> Result<(), InputError> {
    use std::io::BufRead;
    let file = std::fs::File::open(path).map_err(|e| error(path, None, format!("cannot read: {e}")))?;
    let mut input = std::io::BufReader::with_capacity(1 << 16, file);
    // One record at a time: its lines, until its quotes are closed.
    let mut text = String::new();
    let mut next_record = |text: &mut String| -> Result<bool, InputError> {
        text.clear();
        loop {
            let n = input.read_line(text).map_err(|e| error(path, None, format!("cannot read: {e}")))?;
            if n == 0 || text.bytes().filter(|&b| b == b'"').count() % 2 == 0 {
                return Ok(!text.is_empty());
            }
        }
    };
    next_record(&mut text)?;
    let mut fields = Vec::new();
    record(&text, 0, &mut fields).map_err(|m| error(path, Some((1, 1)), m))?;
    let header: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
    drop(fields);
    let at = columns_at::<T>(&header).map_err(|m| error(path, Some((1, 1)), m))?;
    let mut codes = Codes::default();
    let mut line = 1 + text.trim_end_matches('\n').matches('\n').count();
    let mut chunks = Chunks { rows, held: 0, each };
    while next_record(&mut text)? {
        line += 1;
        let mut fields = Vec::with_capacity(T::COLUMNS.len());
        record(&text, 0, &mut fields).map_err(|m| error(path, Some((line, 1)), m))?;
        let mut cells = Vec::with_capacity(T::COLUMNS.len());
        for (c, i) in T::COLUMNS.iter().zip(&at) {
            let cell = match i {
                Some(i) => {
                    let s = fields.get(*i).map_or("", |f| f.as_ref());
                    csv_cell(c.kind, s).ok_or_else(|| error(path, Some((line, i + 1)), format!("{}: {s:?} is not a {}", c.name, kind_name(c.kind))))?
                }
                None => Cell::Null,
            };
            cells.push(cell);
        }
        t.push_cells(&cells, &mut codes).map_err(|k| error(path, Some((line, at[k].map_or(1, |i| i + 1))), format!("{}: a cell that does not fit", T::COLUMNS[k].name)))?;
        line += text.trim_end_matches('\n').matches('\n').count();
        chunks.added(t)?;
    }
    chunks.end(t)
}

/// Hands a table being read to `each` every `rows` rows, and at the end.
struct Chunks<F> {
    rows: usize,
    held: usize,
    each: F,
}

impl<F> Chunks<F> {
    /// A row was added to `t`: a full chunk goes to `each`, then out of `t`.
    fn added<T: Table>(&mut self, t: &mut T) -> Result<(), InputError>
    where
        F: FnMut(&mut T) -> Result<(), InputError>,
    {
        self.held += 1;
        if self.held == self.rows {
            (self.each)(t)?;
            t.clear();
            self.held = 0;
        }
        Ok(())
    }

    /// The last rows, if any (the whole table when read in one chunk).
    fn end<T: Table>(mut self, t: &mut T) -> Result<(), InputError>
    where
        F: FnMut(&mut T) -> Result<(), InputError>,
    {
        if self.held > 0 || self.rows == usize::MAX {
            (self.each)(t)?;
        }
        Ok(())
    }
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Int => "whole number",
        Kind::Time => "time in ns with up to three decimals",
        Kind::Text => "text",
        _ => "number",
    }
}

/// Where each column of `T` is among the file's `names`; a required column
/// that is missing is an error.
fn columns_at<T: Table>(names: &[String]) -> Result<Vec<Option<usize>>, String> {
    T::COLUMNS
        .iter()
        .map(|c| match names.iter().position(|n| n == c.name) {
            Some(i) => Ok(Some(i)),
            None if c.nullable => Ok(None),
            None => Err(format!("no column {} in {}", c.name, names.join(","))),
        })
        .collect()
}

/// A table from its Parquet twin: times (DOUBLE nanoseconds) back to
/// picoseconds, and the numbers the CSV rounds rounded as it does.
pub fn read_parquet<T: Table>(path: &Path) -> Result<T, InputError> {
    let mut t = T::default();
    read_parquet_chunks(path, &mut t, usize::MAX, |_| Ok(()))?;
    Ok(t)
}

/// [`read_csv_chunks`] from a table's Parquet twin.
#[cfg(feature = "parquet")]
pub fn read_parquet_chunks<T: Table>(path: &Path, t: &mut T, chunk: usize, each: impl FnMut(&mut T) -> Result<(), InputError>) -> Result<(), InputError> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;
    let file = std::fs::File::open(path).map_err(|e| error(path, None, format!("cannot read: {e}")))?;
    let reader = SerializedFileReader::new(file).map_err(|e| error(path, None, format!("not a Parquet file: {e}")))?;
    let names: Vec<String> = reader.metadata().file_metadata().schema_descr().columns().iter().map(|c| c.name().to_string()).collect();
    let at = columns_at::<T>(&names).map_err(|m| error(path, None, m))?;
    let rows = reader.get_row_iter(None).map_err(|e| error(path, None, e.to_string()))?;
    let mut codes = Codes::default();
    let mut chunks = Chunks { rows: chunk, held: 0, each };
    for (n, row) in rows.enumerate() {
        let row = row.map_err(|e| error(path, None, format!("row {n}: {e}")))?;
        let fields: Vec<&Field> = row.get_column_iter().map(|(_, f)| f).collect();
        let mut cells = Vec::with_capacity(T::COLUMNS.len());
        for (c, i) in T::COLUMNS.iter().zip(&at) {
            let f = i.and_then(|i| fields.get(i).copied());
            let cell = match (c.kind, f) {
                (_, None | Some(Field::Null)) if c.kind == Kind::Text => Cell::Text(""),
                (_, None | Some(Field::Null)) => Cell::Null,
                (Kind::Time, Some(Field::Double(x))) if *x >= 0.0 => Cell::Int((x * 1000.0).round() as u64),
                (k, Some(Field::Double(x))) if k.rounded() => Cell::Num(super::csv::as_written(k, *x)),
                (_, Some(Field::Double(x))) => Cell::Num(*x),
                (_, Some(Field::Long(v))) => Cell::Int(u64::try_from(*v).map_err(|_| error(path, None, format!("row {n}, {}: {v} is negative", c.name)))?),
                (_, Some(Field::Int(v))) => Cell::Int(u64::try_from(*v).map_err(|_| error(path, None, format!("row {n}, {}: {v} is negative", c.name)))?),
                (_, Some(Field::Str(s))) => Cell::Text(s),
                (_, Some(other)) => return Err(error(path, None, format!("row {n}, {}: unexpected value {other:?}", c.name))),
            };
            cells.push(cell);
        }
        t.push_cells(&cells, &mut codes).map_err(|k| error(path, None, format!("row {n}, {}: a value that does not fit", T::COLUMNS[k].name)))?;
        chunks.added(t)?;
    }
    chunks.end(t)
}

/// Without the `parquet` feature, the twins cannot be read.
#[cfg(not(feature = "parquet"))]
pub fn read_parquet_chunks<T: Table>(path: &Path, _: &mut T, _: usize, _: impl FnMut(&mut T) -> Result<(), InputError>) -> Result<(), InputError> {
    Err(error(path, None, "reading Parquet needs the `parquet` feature"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_back_to_the_picosecond() {
        for (s, ps) in [("0", 0), ("3000", 3_000_000), ("814835.84", 814_835_840), ("1500.001", 1_500_001), ("0.5", 500)] {
            assert_eq!(parse_ns(s), Some(ps), "{s}");
            assert_eq!(crate::units::fmt_ns(ps), s);
        }
        for s in ["", "1.0001", "-1", "1e3", ".5"] {
            assert_eq!(parse_ns(s), None, "{s}");
        }
    }

    /// Read a few rows at a time, a file gives the rows it gives whole, in
    /// order, with names quoted over several lines and the host codes of
    /// earlier chunks.
    #[test]
    fn a_file_read_in_chunks_gives_its_rows_in_order() {
        use super::super::tables::RpcTable;
        let mut t = RpcTable { hosts: vec!["h0".into(), "h,1".into(), "h2".into()], ..Default::default() };
        for i in 0..11u32 {
            t.flow_id.push(i);
            t.name.push(["plain", "with, comma", "say \"hi\"", "two\nlines"][i as usize % 4].to_string());
            t.class.push("foreground".into());
            t.src.push(i % 3);
            t.dst.push((i + 1) % 3);
            t.size_bytes.push(1000 * i as u64);
            t.start_ps.push(1_500 * i as u64);
            t.finish_ps.push((i % 5 != 0).then_some(2_000_001 * i as u64));
            t.latency_ps.push((i % 5 != 0).then_some(7));
        }
        let dir = std::env::temp_dir().join(format!("csigsim-read-chunks-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("rpcs.csv");
        let mut text = Vec::new();
        super::super::csv::write_table(&t, &mut text).unwrap();
        std::fs::write(&path, &text).unwrap();
        let whole: RpcTable = read_csv(&path).unwrap();
        assert_eq!(whole, t);
        for rows in [1, 2, 3, 4, 10, 11, 12] {
            let (mut chunks, mut got) = (0, Vec::new());
            let mut chunk = RpcTable::default();
            read_csv_chunks(&path, &mut chunk, rows, |c| {
                assert!(c.len() <= rows);
                chunks += 1;
                for i in 0..c.len() {
                    assert_eq!(c.src_name(i), t.src_name(got.len()), "rows {rows}");
                    got.push(c.flow_id[i]);
                }
                Ok(())
            })
            .unwrap();
            assert_eq!(got, (0..11).collect::<Vec<u32>>(), "rows {rows}");
            assert_eq!(chunks, 11usize.div_ceil(rows), "rows {rows}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn quoted_cells_hold_commas_quotes_and_line_breaks() {
        let text = "a,\"b,c\",\"say \"\"hi\"\"\",\"two\nlines\",\n1,2\r\n";
        let mut f = Vec::new();
        let pos = record(text, 0, &mut f).unwrap();
        assert_eq!(f, ["a", "b,c", "say \"hi\"", "two\nlines", ""]);
        let end = record(text, pos, &mut f).unwrap();
        assert_eq!(f, ["1", "2"]);
        assert_eq!(end, text.len());
    }
}
