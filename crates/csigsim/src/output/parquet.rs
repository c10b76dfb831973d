//! Parquet twins of the CSV files (`csigsim run --parquet`), written from the
//! typed tables with the Apache `parquet` crate's column writer (its Arrow
//! layer is left out: it would double the build time for no gain here).
//!
//! Each `NAME.csv` gets a `NAME.parquet` with the same rows in the same
//! order and the same columns under the same names and units: times are
//! nanoseconds (DOUBLE, the CSV's exact value), and `slowdown`,
//! `utilization`, `algbw_gbps` and `busbw_gbps` are unrounded. Integers are
//! INT64, numbers DOUBLE, text UTF-8 strings; an empty CSV cell is a null
//! (docs/outputs.md).

use super::tables::{CcTable, CollectiveTable, FlowTable, LinkTable, RpcTable, SignalTable};
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
const ROW_GROUP: usize = 1 << 16;

/// One column's values; `None` is a null.
enum Values {
    Int(Vec<Option<i64>>),
    Num(Vec<Option<f64>>),
    Text(Vec<String>),
}

struct Column {
    name: &'static str,
    /// Whether the column may hold nulls (OPTIONAL in the schema).
    nullable: bool,
    values: Values,
}

fn int<T: Copy + TryInto<i64>>(name: &'static str, v: &[T]) -> Column {
    Column { name, nullable: false, values: Values::Int(v.iter().map(|x| Some((*x).try_into().unwrap_or(i64::MAX))).collect()) }
}

fn int_opt<T: Copy + TryInto<i64>>(name: &'static str, v: &[Option<T>]) -> Column {
    Column { name, nullable: true, values: Values::Int(v.iter().map(|x| x.map(|x| x.try_into().unwrap_or(i64::MAX))).collect()) }
}

fn num(name: &'static str, v: &[f64]) -> Column {
    Column { name, nullable: false, values: Values::Num(v.iter().map(|x| Some(*x)).collect()) }
}

fn num_opt(name: &'static str, v: &[Option<f64>]) -> Column {
    Column { name, nullable: true, values: Values::Num(v.to_vec()) }
}

/// A time column: the table's integer picoseconds as nanoseconds (DOUBLE),
/// named as in the CSV file. `ps as f64 / 1000.0` is the double nearest to
/// the exact number of nanoseconds, which is the double the CSV's decimal
/// text parses to (exact for times below 2^53 ps, about 2.5 hours).
fn ns(name: &'static str, v: &[u64]) -> Column {
    Column { name, nullable: false, values: Values::Num(v.iter().map(|x| Some(*x as f64 / 1000.0)).collect()) }
}

fn ns_opt(name: &'static str, v: &[Option<u64>]) -> Column {
    Column { name, nullable: true, values: Values::Num(v.iter().map(|x| x.map(|x| x as f64 / 1000.0)).collect()) }
}

fn text<S: AsRef<str>>(name: &'static str, v: impl IntoIterator<Item = S>) -> Column {
    Column { name, nullable: false, values: Values::Text(v.into_iter().map(|s| s.as_ref().to_string()).collect()) }
}

impl Column {
    fn len(&self) -> usize {
        match &self.values {
            Values::Int(v) => v.len(),
            Values::Num(v) => v.len(),
            Values::Text(v) => v.len(),
        }
    }

    fn schema(&self) -> String {
        let rep = if self.nullable { "OPTIONAL" } else { "REQUIRED" };
        match self.values {
            Values::Int(_) => format!("{rep} INT64 {};", self.name),
            Values::Num(_) => format!("{rep} DOUBLE {};", self.name),
            Values::Text(_) => format!("{rep} BYTE_ARRAY {} (UTF8);", self.name),
        }
    }
}

/// The non-null values of rows `a..b` and their definition levels (1 set, 0 null).
fn split<T: Copy>(v: &[Option<T>], nullable: bool) -> (Vec<T>, Option<Vec<i16>>) {
    let vals = v.iter().filter_map(|x| *x).collect();
    (vals, nullable.then(|| v.iter().map(|x| i16::from(x.is_some())).collect()))
}

/// A Parquet file written one row group at a time.
struct TableWriter {
    writer: SerializedFileWriter<std::fs::File>,
    groups: usize,
}

impl TableWriter {
    /// Creates the file of `table`, whose columns are those of `cols`.
    fn create(path: &Path, table: &str, cols: &[Column]) -> io::Result<TableWriter> {
        let schema = format!("message {table} {{ {} }}", cols.iter().map(Column::schema).collect::<Vec<_>>().join(" "));
        let schema = Arc::new(parse_message_type(&schema).map_err(io::Error::other)?);
        let props = Arc::new(WriterProperties::builder().set_compression(Compression::UNCOMPRESSED).set_created_by(format!("csigsim {}", env!("CARGO_PKG_VERSION"))).build());
        let file = std::fs::File::create(path).map_err(|e| io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display())))?;
        let writer = SerializedFileWriter::new(file, schema, props).map_err(io::Error::other)?;
        Ok(TableWriter { writer, groups: 0 })
    }

    /// Writes rows `start..end` of `cols` as one row group.
    fn group(&mut self, cols: &[Column], start: usize, end: usize) -> io::Result<()> {
        let mut rg = self.writer.next_row_group().map_err(io::Error::other)?;
        for c in cols {
            let mut cw = rg.next_column().map_err(io::Error::other)?.ok_or_else(|| io::Error::other("parquet: fewer columns than the schema"))?;
            match &c.values {
                Values::Int(v) => {
                    let (vals, def) = split(&v[start..end], c.nullable);
                    cw.typed::<Int64Type>().write_batch(&vals, def.as_deref(), None).map_err(io::Error::other)?;
                }
                Values::Num(v) => {
                    let (vals, def) = split(&v[start..end], c.nullable);
                    cw.typed::<DoubleType>().write_batch(&vals, def.as_deref(), None).map_err(io::Error::other)?;
                }
                Values::Text(v) => {
                    let vals: Vec<ByteArray> = v[start..end].iter().map(|s| ByteArray::from(s.as_str())).collect();
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
    /// group, of the columns `empty`, so readers see its schema.
    fn close(mut self, empty: &[Column]) -> io::Result<()> {
        if self.groups == 0 {
            self.group(empty, 0, 0)?;
        }
        self.writer.close().map_err(io::Error::other)?;
        Ok(())
    }
}

/// Writes one table as a Parquet file, [`ROW_GROUP`] rows a row group.
fn write_table(path: &Path, table: &str, cols: &[Column]) -> io::Result<()> {
    let rows = cols.first().map_or(0, Column::len);
    debug_assert!(cols.iter().all(|c| c.len() == rows), "{table}: columns of different lengths");
    let mut w = TableWriter::create(path, table, cols)?;
    let mut start = 0;
    while start < rows {
        let end = (start + ROW_GROUP).min(rows);
        w.group(cols, start, end)?;
        start = end;
    }
    w.close(cols)
}

/// The Parquet twin of a monitor file written as the run goes (`csigsim
/// run --parquet` streams them beside the CSV files): rows gather in a
/// table of type `T` and go out [`ROW_GROUP`] at a time, so the file has the
/// row groups, and the bytes, of the twin of the whole table, and memory
/// holds at most one group.
pub(crate) struct Twin<T> {
    w: TableWriter,
    buf: T,
    rows: usize,
    cols: fn(&T) -> Vec<Column>,
    /// Empties the table's rows (keeping what every row refers to).
    clear: fn(&mut T),
}

impl<T> Twin<T> {
    /// Creates `NAME.parquet` in `dir`; `buf` has no rows.
    fn create(dir: &Path, name: &str, buf: T, cols: fn(&T) -> Vec<Column>, clear: fn(&mut T)) -> io::Result<Twin<T>> {
        let w = TableWriter::create(&dir.join(format!("{name}.parquet")), name, &cols(&buf))?;
        Ok(Twin { w, buf, rows: 0, cols, clear })
    }

    /// Adds the row `push` appends to the table; writes a row group when
    /// the table holds one.
    pub(crate) fn push(&mut self, push: impl FnOnce(&mut T)) -> io::Result<()> {
        push(&mut self.buf);
        self.rows += 1;
        if self.rows == ROW_GROUP {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        let cols = (self.cols)(&self.buf);
        self.w.group(&cols, 0, self.rows)?;
        (self.clear)(&mut self.buf);
        self.rows = 0;
        Ok(())
    }

    pub(crate) fn close(mut self) -> io::Result<()> {
        if self.rows > 0 {
            self.flush()?;
        }
        let empty = (self.cols)(&self.buf);
        self.w.close(&empty)
    }
}

/// The rows of `links.parquet` as the run streams them: node names, each
/// port's (from, to) node, and the columns with indices into the names.
#[derive(Default)]
struct LinkRows {
    nodes: Vec<String>,
    ends: Vec<(u32, u32)>,
    c: super::LinkColumns,
}

/// The node names, and each port's (from, to) node among them.
pub(crate) type LinkEnds = (Vec<String>, Vec<(u32, u32)>);

/// The streamed twins of `links.csv`, `signals.csv` and `cc.csv`, each when
/// its CSV file is streamed.
#[derive(Default)]
pub(crate) struct Twins {
    links: Option<Twin<LinkRows>>,
    signals: Option<Twin<SignalTable>>,
    cc: Option<Twin<CcTable>>,
}

impl Twins {
    /// Creates the twins in `dir`: links with the node names and each port's
    /// (from, to) node, signals with the ports' names (the bottlenecks, by
    /// port), cc with the run's congestion control.
    pub(crate) fn create(dir: &Path, links: Option<LinkEnds>, signals: Option<Vec<String>>, cc: Option<String>) -> io::Result<Twins> {
        let links = match links {
            Some((nodes, ends)) => Some(Twin::create(dir, "links", LinkRows { nodes, ends, c: Default::default() }, |b| link_columns(&b.c, &b.nodes), |b| {
                b.c = Default::default()
            })?),
            None => None,
        };
        let signals = match signals {
            Some(bottlenecks) => Some(Twin::create(dir, "signals", SignalTable { bottlenecks, ..Default::default() }, self::signals, SignalTable::clear_rows)?),
            None => None,
        };
        let cc = match cc {
            Some(name) => Some(Twin::create(dir, "cc", CcTable { cc: name, ..Default::default() }, self::cc, CcTable::clear_rows)?),
            None => None,
        };
        Ok(Twins { links, signals, cc })
    }

    /// Adds links.csv's line `row` to the twin, if there is one.
    pub(crate) fn link_row(&mut self, row: &super::LinkRow) -> io::Result<()> {
        let Some(twin) = &mut self.links else { return Ok(()) };
        twin.push(|b| {
            let (from, to) = b.ends[row.link_id as usize];
            b.c.push(row, from, to)
        })
    }

    /// Adds signals.csv's row `r` of `flow` to the twin, if there is one.
    pub(crate) fn signal_row(&mut self, labels: &super::SignalLabels, window_ps: u64, flow: u32, r: &crate::monitor::signals::SignalRow) -> io::Result<()> {
        let Some(twin) = &mut self.signals else { return Ok(()) };
        // The twin's bottleneck names are the ports' names, by port.
        twin.push(|t| super::push_signal_row(t, labels, window_ps, flow, r, r.writer.map(|(port, _)| port)))
    }

    /// Adds cc.csv's row `r` of `flow` to the twin, if there is one.
    pub(crate) fn cc_row(&mut self, window_ps: u64, flow: u32, r: &crate::monitor::cc::CcRow) -> io::Result<()> {
        let Some(twin) = &mut self.cc else { return Ok(()) };
        twin.push(|t| super::push_cc_row(t, window_ps, flow, r))
    }

    /// The files created.
    pub(crate) fn files(&self) -> Vec<&'static str> {
        let mut f = Vec::new();
        if self.links.is_some() {
            f.push("links.parquet");
        }
        if self.signals.is_some() {
            f.push("signals.parquet");
        }
        if self.cc.is_some() {
            f.push("cc.parquet");
        }
        f
    }

    pub(crate) fn close(&mut self) -> io::Result<()> {
        for r in [self.links.take().map(Twin::close), self.signals.take().map(Twin::close), self.cc.take().map(Twin::close)].into_iter().flatten() {
            r?;
        }
        Ok(())
    }
}

fn flows(t: &FlowTable) -> Vec<Column> {
    vec![
        int("flow_id", &t.flow_id),
        text("name", (0..t.len()).map(|i| t.flow_name(i))),
        text("src", (0..t.len()).map(|i| t.src_name(i))),
        text("dst", (0..t.len()).map(|i| t.dst_name(i))),
        int("size_bytes", &t.size_bytes),
        ns("start_ns", &t.start_ps),
        ns_opt("finish_ns", &t.finish_ps),
        ns_opt("fct_ns", &t.fct_ps),
        ns("ideal_fct_ns", &t.ideal_fct_ps),
        num_opt("slowdown", &t.slowdown),
        int("bytes_sent", &t.bytes_sent),
        int("retransmits", &t.retransmits),
        int("timeouts", &t.timeouts),
        int("nacks", &t.nacks),
        int("trims", &t.trims),
        int("ecn_marked", &t.ecn_marked),
        int("delivered_bytes", &t.delivered_bytes),
        int("cnps", &t.cnps),
        ns_opt("sender_finish_ns", &t.sender_finish_ps),
        ns_opt("sender_fct_ns", &t.sender_fct_ps),
    ]
}

fn links(t: &LinkTable) -> Vec<Column> {
    link_columns(&t.columns(), &t.nodes)
}

/// The columns of `links.parquet`, `from` and `to` named from `nodes`.
fn link_columns(c: &super::LinkColumns, nodes: &[String]) -> Vec<Column> {
    let name = |ids: &[u32]| ids.iter().map(|&i| nodes[i as usize].clone()).collect::<Vec<_>>();
    vec![
        ns("time_ns", &c.time_ps),
        text("from", name(&c.from)),
        text("to", name(&c.to)),
        int("link_id", &c.link_id),
        int("tx_bytes", &c.tx_bytes),
        num("utilization", &c.utilization),
        int("max_queue_bytes", &c.max_queue_bytes),
        int("drops", &c.drops),
        int("ecn_marks", &c.ecn_marks),
        int("trims", &c.trims),
        ns("pause_ns", &c.pause_ps),
    ]
}

fn signals(t: &SignalTable) -> Vec<Column> {
    vec![
        ns("time_ns", &t.time_ps),
        int("flow_id", &t.flow_id),
        text("signal", &t.signal),
        text("unit", &t.unit),
        int("samples", &t.samples),
        num("mean", &t.mean),
        num("min", &t.min),
        num("max", &t.max),
        int_opt("locator", &t.locator),
        text("bottleneck", (0..t.len()).map(|i| t.bottleneck_name(i))),
    ]
}

fn cc(t: &CcTable) -> Vec<Column> {
    vec![
        ns("time_ns", &t.time_ps),
        int("flow_id", &t.flow_id),
        text("cc", std::iter::repeat_n(t.cc.as_str(), t.len())),
        int("acks", &t.acks),
        int_opt("cwnd_bytes", &t.cwnd_bytes),
        int_opt("cwnd_min_bytes", &t.cwnd_min_bytes),
        int_opt("cwnd_max_bytes", &t.cwnd_max_bytes),
        int("rate_bps", &t.rate_bps),
        num("alpha", &t.alpha),
        num("rtt_mean_ns", &t.rtt_mean_ns),
        num("ce_fraction", &t.ce_fraction),
    ]
}

fn collectives(t: &CollectiveTable) -> Vec<Column> {
    let time: Vec<Option<u64>> = t.start_ps.iter().zip(&t.finish_ps).map(|(s, f)| Some((*f)? - (*s)?)).collect();
    vec![
        int("collective_id", &t.collective_id),
        text("name", &t.name),
        text("op", &t.op),
        int("ranks", &t.ranks),
        int("iteration", &t.iteration),
        int_opt("step", &t.step),
        int("first_flow", &t.first_flow),
        int("flows", &t.flows),
        ns_opt("start_ns", &t.start_ps),
        ns_opt("finish_ns", &t.finish_ps),
        ns_opt("time_ns", &time),
        int("size_bytes", &t.size_bytes),
        num_opt("algbw_gbps", &t.algbw_gbps),
        num_opt("busbw_gbps", &t.busbw_gbps),
    ]
}

fn rpcs(t: &RpcTable) -> Vec<Column> {
    vec![
        int("flow_id", &t.flow_id),
        text("name", &t.name),
        text("class", &t.class),
        text("src", (0..t.len()).map(|i| t.src_name(i))),
        text("dst", (0..t.len()).map(|i| t.dst_name(i))),
        int("size_bytes", &t.size_bytes),
        ns("start_ns", &t.start_ps),
        ns_opt("finish_ns", &t.finish_ps),
        ns_opt("latency_ns", &t.latency_ps),
    ]
}

/// Writes one optional table, or removes a stale file of an earlier run.
fn write_opt<T>(dir: &Path, name: &str, t: Option<&T>, cols: fn(&T) -> Vec<Column>) -> io::Result<()> {
    let path = dir.join(format!("{name}.parquet"));
    match t {
        Some(t) => write_table(&path, name, &cols(t)),
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
        write_opt(dir, "flows", Some(&t.flows), flows)?;
        if !streamed("links.parquet")? {
            write_opt(dir, "links", t.links.as_ref(), links)?;
        }
        if !streamed("signals.parquet")? {
            write_opt(dir, "signals", t.signals.as_ref(), signals)?;
        }
        if !streamed("cc.parquet")? {
            write_opt(dir, "cc", t.cc.as_ref(), cc)?;
        }
        write_opt(dir, "collectives", t.collectives.as_ref(), collectives)?;
        write_opt(dir, "rpcs", t.rpcs.as_ref(), rpcs)
    }
}
