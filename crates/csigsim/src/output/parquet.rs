//! Parquet twins of the CSV files (`csigsim run --parquet`), written from the
//! typed tables with the Apache `parquet` crate's column writer (its Arrow
//! layer is left out: it would double the build time for no gain here).
//!
//! Each `NAME.csv` gets a `NAME.parquet` with the same rows in the same
//! order and the same columns under the same names and units, from the
//! table's one declaration ([`super::schema`]): times are nanoseconds
//! (DOUBLE, the CSV's exact value), and the numbers the CSV rounds
//! (`slowdown`, `utilization`, `algbw_gbps`, `busbw_gbps`) are unrounded.
//! Integers are INT64, numbers DOUBLE, text UTF-8 strings; an empty CSV
//! cell is a null (docs/outputs.md).

use super::schema::{Cell, ColumnDef, Kind, Table};
use super::tables::LinkColumns;
use super::RunOutput;
use parquet::basic::Compression;
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use std::io;
use std::path::Path;
use std::sync::Arc;

/// Rows per row group: bounds the writer's memory on long runs (a twin
/// streamed as the run goes holds one group, about 30 MB of `links` rows at
/// this size; 2^20 held 450 MB).
pub(crate) const ROW_GROUP: usize = 1 << 16;

/// One column's values in a row group; `None` is a null.
enum Values {
    Int(Vec<Option<i64>>),
    Num(Vec<Option<f64>>),
    Text(Vec<String>),
}

impl Values {
    fn of(kind: Kind, n: usize) -> Values {
        match kind {
            Kind::Int => Values::Int(Vec::with_capacity(n)),
            Kind::Text => Values::Text(Vec::with_capacity(n)),
            _ => Values::Num(Vec::with_capacity(n)),
        }
    }

    /// Adds a cell of a column of `kind`: a time (integer picoseconds) as
    /// nanoseconds, `ps as f64 / 1000.0`, the double nearest to the exact
    /// number, which is the double the CSV's decimal text parses to (exact
    /// below 2^53 ps, about 2.5 hours).
    fn push(&mut self, kind: Kind, c: Cell<'_>) {
        match (self, c) {
            (Values::Int(v), Cell::Int(x)) => v.push(Some(i64::try_from(x).unwrap_or(i64::MAX))),
            (Values::Int(v), _) => v.push(None),
            (Values::Num(v), Cell::Int(x)) if kind == Kind::Time => v.push(Some(x as f64 / 1000.0)),
            (Values::Num(v), Cell::Int(x)) => v.push(Some(x as f64)),
            (Values::Num(v), Cell::Num(x)) => v.push(Some(x)),
            (Values::Num(v), _) => v.push(None),
            (Values::Text(v), Cell::Text(s)) => v.push(s.to_string()),
            (Values::Text(v), _) => v.push(String::new()),
        }
    }
}

/// The Parquet type of a column.
fn schema_line(c: &ColumnDef) -> String {
    let rep = if c.nullable { "OPTIONAL" } else { "REQUIRED" };
    match c.kind {
        Kind::Int => format!("{rep} INT64 {};", c.name),
        Kind::Text => format!("{rep} BYTE_ARRAY {} (UTF8);", c.name),
        _ => format!("{rep} DOUBLE {};", c.name),
    }
}

/// The non-null values and their definition levels (1 set, 0 null).
fn split<T: Copy>(v: &[Option<T>], nullable: bool) -> (Vec<T>, Option<Vec<i16>>) {
    let vals = v.iter().filter_map(|x| *x).collect();
    (vals, nullable.then(|| v.iter().map(|x| i16::from(x.is_some())).collect()))
}

/// A Parquet file of one table, written one row group at a time.
pub(crate) struct TableWriter {
    writer: SerializedFileWriter<std::fs::File>,
    groups: usize,
}

impl TableWriter {
    /// Creates the file of a table of type `T`.
    pub(crate) fn create<T: Table>(path: &Path) -> io::Result<TableWriter> {
        let schema = format!("message {} {{ {} }}", T::FILE, T::COLUMNS.iter().map(schema_line).collect::<Vec<_>>().join(" "));
        let schema = Arc::new(parse_message_type(&schema).map_err(io::Error::other)?);
        let props = Arc::new(WriterProperties::builder().set_compression(Compression::UNCOMPRESSED).set_created_by(format!("csigsim {}", env!("CARGO_PKG_VERSION"))).build());
        let file = std::fs::File::create(path).map_err(|e| io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display())))?;
        let writer = SerializedFileWriter::new(file, schema, props).map_err(io::Error::other)?;
        Ok(TableWriter { writer, groups: 0 })
    }

    /// Writes rows `start..end` of `t` as one row group.
    pub(crate) fn group<T: Table>(&mut self, t: &T, start: usize, end: usize) -> io::Result<()> {
        let mut cols: Vec<Values> = T::COLUMNS.iter().map(|c| Values::of(c.kind, end - start)).collect();
        for i in start..end {
            let mut k = 0;
            let _ = t.cells(i, |kind, c| -> Result<(), ()> {
                cols[k].push(kind, c);
                k += 1;
                Ok(())
            });
        }
        let mut rg = self.writer.next_row_group().map_err(io::Error::other)?;
        for (c, values) in T::COLUMNS.iter().zip(&cols) {
            let mut cw = rg.next_column().map_err(io::Error::other)?.ok_or_else(|| io::Error::other("parquet: fewer columns than the schema"))?;
            match values {
                Values::Int(v) => {
                    let (vals, def) = split(v, c.nullable);
                    cw.typed::<Int64Type>().write_batch(&vals, def.as_deref(), None).map_err(io::Error::other)?;
                }
                Values::Num(v) => {
                    let (vals, def) = split(v, c.nullable);
                    cw.typed::<DoubleType>().write_batch(&vals, def.as_deref(), None).map_err(io::Error::other)?;
                }
                Values::Text(v) => {
                    let vals: Vec<ByteArray> = v.iter().map(|s| ByteArray::from(s.as_str())).collect();
                    cw.typed::<ByteArrayType>().write_batch(&vals, None, None).map_err(io::Error::other)?;
                }
            }
            cw.close().map_err(io::Error::other)?;
        }
        rg.close().map_err(io::Error::other)?;
        self.groups += 1;
        Ok(())
    }

    /// Finishes the file. A table without rows still gets one (empty) row
    /// group, so readers see its schema.
    pub(crate) fn close<T: Table>(mut self) -> io::Result<()> {
        if self.groups == 0 {
            self.group(&T::default(), 0, 0)?;
        }
        self.writer.close().map_err(io::Error::other)?;
        Ok(())
    }
}

/// Writes one table as a Parquet file, [`ROW_GROUP`] rows a row group.
fn write_table<T: Table>(path: &Path, t: &T) -> io::Result<()> {
    let mut w = TableWriter::create::<T>(path)?;
    let rows = t.rows();
    let mut start = 0;
    while start < rows {
        let end = (start + ROW_GROUP).min(rows);
        w.group(t, start, end)?;
        start = end;
    }
    w.close::<T>()
}

/// Writes `links.parquet` from a table kept sparse, a row group at a time
/// (the row groups of the twin the CLI streams).
fn write_links(path: &Path, t: &super::LinkTable) -> io::Result<()> {
    let mut w = TableWriter::create::<LinkColumns>(path)?;
    let mut buf = LinkColumns { nodes: t.nodes.clone(), ..LinkColumns::with_capacity(ROW_GROUP) };
    for r in t.rows() {
        buf.push(&r, t.from[r.link_id as usize], t.to[r.link_id as usize]);
        if buf.len() == ROW_GROUP {
            w.group(&buf, 0, ROW_GROUP)?;
            buf.clear_rows();
        }
    }
    if !buf.is_empty() {
        w.group(&buf, 0, buf.len())?;
    }
    w.close::<LinkColumns>()
}

/// Writes one optional table, or removes a stale file of an earlier run.
fn write_opt<T>(dir: &Path, name: &str, t: Option<&T>, write: impl Fn(&Path, &T) -> io::Result<()>) -> io::Result<()> {
    let path = dir.join(format!("{name}.parquet"));
    match t {
        Some(t) => write(&path, t),
        None if path.exists() => std::fs::remove_file(path),
        None => Ok(()),
    }
}

impl RunOutput {
    /// Writes a `.parquet` twin of each CSV file of the run directory
    /// (creating it), but for the twins the run streamed
    /// ([`crate::RunOptions::stream_parquet`]), which are there already.
    pub fn write_parquet(&self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let t = &self.tables;
        // A streamed twin is in the streaming directory already.
        let streamed = |name: &str| self.copy_streamed(name, dir);
        if !streamed("flows.parquet")? {
            // flows.csv streamed without its twin left no table to write it from.
            if self.streamed.as_ref().is_some_and(|st| st.files.contains(&"flows.csv")) {
                return Err(io::Error::other("flows.csv was streamed without its Parquet twin (RunOptions::stream_parquet)"));
            }
            write_opt(dir, "flows", Some(&t.flows), write_table)?;
        }
        if !streamed("links.parquet")? {
            write_opt(dir, "links", t.links.as_ref(), write_links)?;
        }
        if !streamed("signals.parquet")? {
            write_opt(dir, "signals", t.signals.as_ref(), write_table)?;
        }
        if !streamed("cc.parquet")? {
            write_opt(dir, "cc", t.cc.as_ref(), write_table)?;
        }
        write_opt(dir, "collectives", t.collectives.as_ref(), write_table)?;
        write_opt(dir, "rpcs", t.rpcs.as_ref(), write_table)?;
        write_opt(dir, "jobs", t.jobs.as_ref(), write_table)?;
        write_opt(dir, "job_links", t.job_links.as_ref(), write_table)?;
        if !streamed("ops.parquet")? {
            if self.streamed.as_ref().is_some_and(|st| st.files.contains(&"ops.csv")) {
                return Err(io::Error::other("ops.csv was streamed without its Parquet twin (RunOptions::stream_parquet)"));
            }
            write_opt(dir, "ops", self.ops.as_ref(), write_table)?;
        }
        write_opt(dir, "iterations", self.iterations.as_ref(), write_table)
    }
}
