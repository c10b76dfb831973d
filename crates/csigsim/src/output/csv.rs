//! The CSV files, formatted from the tables (docs/outputs.md). Nothing here
//! reads the simulation.

use super::schema::{Cell, Kind, Table};
use super::tables::{CcTable, CollectiveTable, FlowTable, LinkColumns, LinkTable, RpcTable, SignalTable};
use crate::units::write_ns;
use std::io::{self, Write};

/// A text cell, quoted CSV-style if it contains a comma, a quote or a line break.
pub fn csv_field(v: &str) -> String {
    let mut s = Vec::with_capacity(v.len());
    let _ = write_field(&mut s, v);
    String::from_utf8(s).expect("UTF-8 in, UTF-8 out")
}

/// [`csv_field`] written to `out`.
#[inline(always)]
fn write_field(out: &mut impl Write, v: &str) -> io::Result<()> {
    if v.contains([',', '"', '\n']) {
        write!(out, "\"{}\"", v.replace('"', "\"\""))
    } else {
        out.write_all(v.as_bytes())
    }
}

/// `slowdown` as written: four decimals, empty if the flow did not complete.
pub fn fmt_slowdown(v: Option<f64>) -> String {
    let mut s = Vec::with_capacity(16);
    let _ = write_slowdown(&mut s, v);
    String::from_utf8(s).expect("ASCII digits")
}

/// [`fmt_slowdown`] written to `out`. The float formatter takes its slow
/// exact path for most slowdowns near 1 (1.0043, say, as flows of a
/// collective have): a value in the usual range is rounded here instead,
/// exactly and half to even, as the formatter rounds.
fn write_slowdown(out: &mut impl Write, v: Option<f64>) -> io::Result<()> {
    let Some(x) = v else { return Ok(()) };
    match four_decimals(x) {
        Some(q) => {
            let mut int = itoa::Buffer::new();
            out.write_all(int.format(q / 10_000).as_bytes())?;
            let f = q % 10_000;
            out.write_all(&[b'.', b'0' + (f / 1000) as u8, b'0' + (f / 100 % 10) as u8, b'0' + (f / 10 % 10) as u8, b'0' + (f % 10) as u8])
        }
        None => write!(out, "{x:.4}"),
    }
}

/// `x` x 10^4 rounded to a whole number, half to even, for a finite,
/// positive, normal `x` below 2^52 that is not below 2^-60; None otherwise.
/// Exact: `x` is m x 2^e, so x x 10^4 is (m x 10^4) / 2^-e, with m x 10^4
/// below 2^67.
fn four_decimals(x: f64) -> Option<u64> {
    let bits = x.to_bits();
    let biased = (bits >> 52) & 0x7ff;
    if bits >> 63 != 0 || biased == 0 || biased == 0x7ff {
        return None;
    }
    let e = biased as i64 - 1075;
    let shift = u32::try_from(-e).ok().filter(|s| (1..=112).contains(s))?;
    let n = ((bits & ((1 << 52) - 1)) | (1 << 52)) as u128 * 10_000;
    let (mut q, r, half) = (n >> shift, n & ((1u128 << shift) - 1), 1u128 << (shift - 1));
    if r > half || (r == half && q & 1 == 1) {
        q += 1;
    }
    u64::try_from(q).ok()
}

/// `utilization` as written: six decimals, or `0` when idle.
pub fn fmt_utilization(v: f64) -> String {
    let mut s = Vec::with_capacity(16);
    let _ = write_utilization(&mut s, v);
    String::from_utf8(s).expect("ASCII digits")
}

/// [`fmt_utilization`] written to `out`. A busy link's share is exactly 1,
/// which the float formatter writes by its slow exact path: written directly.
fn write_utilization(out: &mut impl Write, v: f64) -> io::Result<()> {
    match v {
        0.0 => out.write_all(b"0"),
        1.0 => out.write_all(b"1.000000"),
        u => write!(out, "{u:.6}"),
    }
}

/// A number of a rounded kind as the CSV writes it, read back.
pub fn as_written(kind: Kind, x: f64) -> f64 {
    let mut s = Vec::with_capacity(24);
    let _ = write_cell(&mut s, kind, Cell::Num(x), &mut itoa::Buffer::new());
    std::str::from_utf8(&s).ok().and_then(|s| s.parse().ok()).unwrap_or(x)
}

/// One cell as the CSV writes a value of its column's kind (an empty cell
/// for a null). Inlined into each table's row writer, where the kind of
/// most cells is known: a links.csv line of 1 us windows is written a
/// million times a run.
#[inline(always)]
pub(crate) fn write_cell(out: &mut Vec<u8>, kind: Kind, cell: Cell<'_>, int: &mut itoa::Buffer) -> io::Result<()> {
    match (kind, cell) {
        (_, Cell::Null) => Ok(()),
        (Kind::Time, Cell::Int(ps)) => write_ns(out, ps),
        (_, Cell::Int(v)) => out.write_all(int.format(v).as_bytes()),
        (Kind::Dec4, Cell::Num(x)) => write_slowdown(out, Some(x)),
        (Kind::Dec3, Cell::Num(x)) => write!(out, "{x:.3}"),
        (Kind::Share, Cell::Num(x)) => write_utilization(out, x),
        (_, Cell::Num(x)) => write!(out, "{x}"),
        (_, Cell::Text(s)) => write_field(out, s),
    }
}

/// Row `i` of `t` as a CSV line, appended to `out`. Each row is put
/// together in memory and written at once: small writes through a file's
/// buffer each paid a call, where appending to a vector is inlined (a
/// collective of millions of flows writes millions of lines).
pub fn write_row<T: Table>(t: &T, i: usize, int: &mut itoa::Buffer, out: &mut Vec<u8>) -> io::Result<()> {
    t.write_csv_row(i, int, out)
}

/// A table as its CSV file: the header, then every row.
pub fn write_table<T: Table>(t: &T, out: &mut impl Write) -> io::Result<()> {
    out.write_all(super::schema::header::<T>().as_bytes())?;
    let mut int = itoa::Buffer::new();
    let mut row = Vec::with_capacity(256);
    for i in 0..t.rows() {
        row.clear();
        write_row(t, i, &mut int, &mut row)?;
        out.write_all(&row)?;
    }
    Ok(())
}

pub fn write_flows(t: &FlowTable, out: &mut impl Write) -> io::Result<()> {
    write_table(t, out)
}

/// links.csv of a table kept sparse: each row expanded into a one-row table
/// as it is written, so the file never needs the dense table in memory.
pub fn write_links(t: &LinkTable, out: &mut impl Write) -> io::Result<()> {
    out.write_all(super::schema::header::<LinkColumns>().as_bytes())?;
    let mut one = LinkColumns { nodes: t.nodes.clone(), ..Default::default() };
    let (mut int, mut row) = (itoa::Buffer::new(), Vec::with_capacity(128));
    for r in t.rows() {
        one.clear_rows();
        one.push(&r, t.from[r.link_id as usize], t.to[r.link_id as usize]);
        row.clear();
        write_row(&one, 0, &mut int, &mut row)?;
        out.write_all(&row)?;
    }
    Ok(())
}

pub fn write_signals(t: &SignalTable, out: &mut impl Write) -> io::Result<()> {
    write_table(t, out)
}

pub fn write_cc(t: &CcTable, out: &mut impl Write) -> io::Result<()> {
    write_table(t, out)
}

pub fn write_collectives(t: &CollectiveTable, out: &mut impl Write) -> io::Result<()> {
    write_table(t, out)
}

pub fn write_rpcs(t: &RpcTable, out: &mut impl Write) -> io::Result<()> {
    write_table(t, out)
}

/// Formats a table into a string with one of the writers above.
pub fn to_string<T>(t: &T, write: fn(&T, &mut Vec<u8>) -> io::Result<()>) -> String {
    let mut buf = Vec::new();
    // Writing into memory cannot fail, and every cell is UTF-8.
    let _ = write(t, &mut buf);
    String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::super::fmt_ns;
    use super::super::tables::LinkRow;
    use super::*;
    use proptest::prelude::*;

    /// Utilization as the formatter writes it: six decimals, `0` when idle.
    fn utilization_formatted(u: f64) -> String {
        if u == 0.0 { "0".to_string() } else { format!("{u:.6}") }
    }

    /// An empty cell for `None`, else the value as `{}` writes it.
    fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
        v.map_or_else(String::new, |v| v.to_string())
    }

    /// A links.csv line as `writeln!` with `{}` for every field wrote it.
    fn reference(r: &LinkRow) -> String {
        let utilization = utilization_formatted(r.utilization);
        format!(
            "{},{},{},{},{},{},{},{},{},{},{}\n",
            fmt_ns(r.time_ps),
            r.from,
            r.to,
            r.link_id,
            r.tx_bytes,
            utilization,
            opt(r.max_queue_bytes),
            opt(r.drops),
            opt(r.ecn_marks),
            opt(r.trims),
            r.pause_ps.map_or_else(String::new, fmt_ns)
        )
    }

    fn utilization() -> impl Strategy<Value = f64> {
        prop_oneof![Just(0.0), Just(1.0), Just(0.5), Just(1.0 - f64::EPSILON), Just(0.0000005), 0.0..1.5f64]
    }

    /// A cell as `format!` writes a value of its column's kind: the
    /// formatting the writer's fast paths must reproduce.
    fn reference_cell(kind: Kind, c: Cell<'_>) -> String {
        let quoted = |v: &str| if v.contains([',', '"', '\n']) { format!("\"{}\"", v.replace('"', "\"\"")) } else { v.to_string() };
        match (kind, c) {
            (_, Cell::Null) => String::new(),
            (Kind::Time, Cell::Int(ps)) => fmt_ns(ps),
            (_, Cell::Int(v)) => v.to_string(),
            (Kind::Dec4, Cell::Num(x)) => format!("{x:.4}"),
            (Kind::Dec3, Cell::Num(x)) => format!("{x:.3}"),
            (Kind::Share, Cell::Num(x)) => utilization_formatted(x),
            (_, Cell::Num(x)) => format!("{x}"),
            (_, Cell::Text(v)) => quoted(v),
        }
    }

    /// One row of random cells for `T`, pushed into a table, and the line
    /// `format!` writes for it: every column of every table, from its
    /// declaration, so that a new column is tested without a new test.
    fn check_row<T: Table>(seeds: &[(u64, Option<f64>, String, bool)]) -> Result<(), TestCaseError> {
        let cells: Vec<Cell> = T::COLUMNS
            .iter()
            .zip(seeds)
            .map(|(c, (int, num, text, null))| match c.kind {
                _ if *null && c.nullable => Cell::Null,
                Kind::Text => Cell::Text(text),
                // Small enough for every integer type a column holds.
                Kind::Int => Cell::Int(int % 65_536),
                Kind::Time => Cell::Int(*int),
                _ => Cell::Num(num.unwrap_or(0.5)),
            })
            .collect();
        let mut t = T::default();
        prop_assert!(t.push_cells(&cells, &mut super::super::schema::Codes::default()).is_ok());
        let mut out = Vec::new();
        write_table(&t, &mut out).unwrap();
        // An empty text of a coded column that may be empty is a null.
        let line: Vec<String> = T::COLUMNS.iter().zip(&cells).map(|(c, cell)| reference_cell(c.kind, *cell)).collect();
        prop_assert_eq!(String::from_utf8(out).unwrap(), format!("{}{}\n", super::super::schema::header::<T>(), line.join(",")));
        Ok(())
    }

    fn time_ps() -> impl Strategy<Value = u64> {
        prop_oneof![Just(0u64), Just(1_000), Just(1_500), Just(1_050), Just(1_005), 0..10_000_000u64, any::<u64>()]
    }

    fn slowdown() -> impl Strategy<Value = Option<f64>> {
        prop_oneof![
            Just(None),
            Just(Some(1.0)),
            Just(Some(0.0)),
            Just(Some(-0.0)),
            Just(Some(2.0)),
            Just(Some(1.03125)),
            Just(Some(1.09375)),
            Just(Some(0.00005)),
            Just(Some(0.00015)),
            Just(Some(f64::MIN_POSITIVE)),
            Just(Some(4503599627370495.5)),
            Just(Some(4503599627370496.0)),
            // Exact ties at four decimals are the odd multiples of 1/32.
            (0u32..1_000_000).prop_map(|j| Some(f64::from(2 * j + 1) / 32.0)),
            (0.99..1.2f64).prop_map(Some),
            (0.0..1e-12f64).prop_map(Some),
            Just(Some(1e15)),
            Just(Some(1e300)),
            Just(Some(f64::NAN)),
            (0u64..1_000_000).prop_map(|n| Some(n as f64)),
            (0.0..1000.0f64).prop_map(Some),
        ]
    }

    #[test]
    fn slowdowns_are_rounded_as_the_float_formatter_rounds_them() {
        let reference = |x: f64| format!("{x:.4}");
        // Every exact tie below 2^13 (odd multiples of 1/32) and the
        // values around it.
        for j in 0..(1u32 << 17) {
            let tie = f64::from(2 * j + 1) / 32.0;
            for x in [tie, f64::from_bits(tie.to_bits() - 1), f64::from_bits(tie.to_bits() + 1)] {
                assert_eq!(fmt_slowdown(Some(x)), reference(x), "{x:e}");
            }
        }
        // Values spread over the range the fast path takes, by their bits.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..200_000 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let x = f64::from_bits((state >> 2) % 0x4330_0000_0000_0000);
            assert_eq!(fmt_slowdown(Some(x)), reference(x), "{x:e}");
        }
    }

    fn seeds() -> impl Strategy<Value = Vec<(u64, Option<f64>, String, bool)>> {
        proptest::collection::vec((time_ps(), slowdown(), "[a-z0-9,\"\n]{1,6}", any::<bool>()), 32)
    }

    proptest! {
        #[test]
        fn a_row_has_the_bytes_of_its_cells_formatted(seeds in seeds()) {
            use super::super::tables::{CcTable, CollectiveTable, FlowTable, LinkColumns, RpcTable, SignalTable};
            check_row::<FlowTable>(&seeds)?;
            check_row::<LinkColumns>(&seeds)?;
            check_row::<SignalTable>(&seeds)?;
            check_row::<CcTable>(&seeds)?;
            check_row::<CollectiveTable>(&seeds)?;
            check_row::<RpcTable>(&seeds)?;
            prop_assert_eq!(fmt_slowdown(seeds[0].1), seeds[0].1.map_or_else(String::new, |x| format!("{x:.4}")));
        }
    }

    proptest! {
        #[test]
        fn a_link_row_has_the_bytes_of_its_fields_formatted(
            time_ps in prop_oneof![Just(0u64), 0..10_000_000u64, any::<u64>()],
            link_id in any::<u32>(),
            tx_bytes in any::<u64>(),
            utilization in utilization(),
            max_queue_bytes in any::<u64>(),
            counts in any::<(u32, u32, u32)>(),
            pause_ps in prop_oneof![Just(0u64), 0..10_000u64, any::<u64>()],
            queues in any::<bool>(),
        ) {
            let r = LinkRow {
                time_ps,
                from: "tor3",
                to: "agg1",
                link_id,
                tx_bytes,
                utilization,
                max_queue_bytes: queues.then_some(max_queue_bytes),
                drops: queues.then_some(counts.0),
                ecn_marks: queues.then_some(counts.1),
                trims: queues.then_some(counts.2),
                pause_ps: queues.then_some(pause_ps),
            };
            let mut one = LinkColumns { nodes: vec!["tor3".into(), "agg1".into()], ..Default::default() };
            one.push(&r, 0, 1);
            let mut out = Vec::new();
            write_row(&one, 0, &mut itoa::Buffer::new(), &mut out).unwrap();
            prop_assert_eq!(String::from_utf8(out).unwrap(), reference(&r));
            prop_assert_eq!(fmt_utilization(utilization), utilization_formatted(utilization));
        }
    }
}
