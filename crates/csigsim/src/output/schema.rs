//! One declaration per output table. Each table of [`super::tables`] is
//! declared once with [`table!`]: its columns in file order, each with its
//! field in the typed table, its name in the files, its kind, unit and a
//! short description. From that declaration come the typed table, the CSV
//! header and rows ([`super::csv`]), the Parquet schema and row groups
//! (`super::parquet`), the Python columns, and the reader of a run
//! directory ([`super::read`]). docs/outputs.md documents every column
//! (a test keeps the page and the declarations in step).

use std::borrow::Cow;
use std::collections::HashMap;

/// Text that is one of a few names known to the engine (a signal, an
/// operation), or, in a table read back from a file, that text.
pub type Label = Cow<'static, str>;

/// How a column's values are kept and written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A whole number. CSV: decimal digits; Parquet: INT64.
    Int,
    /// A time: integer picoseconds in the table; in the files, nanoseconds
    /// (CSV: exact, up to three decimals; Parquet: DOUBLE).
    Time,
    /// A number written in Rust's shortest form, which reads back as the
    /// same double. Parquet: DOUBLE.
    Num,
    /// A number the CSV writes with four decimals (Parquet: unrounded).
    Dec4,
    /// A number the CSV writes with three decimals (Parquet: unrounded).
    Dec3,
    /// A share of 0 .. 1 the CSV writes with six decimals, `0` when 0
    /// (Parquet: unrounded).
    Share,
    /// Text, quoted CSV-style when it holds a comma, a quote or a line break.
    Text,
}

impl Kind {
    /// The kind as the Python package names it when it builds a DataFrame.
    pub fn python(self) -> &'static str {
        match self {
            Kind::Int => "int",
            Kind::Time => "ns",
            Kind::Num => "number",
            Kind::Dec4 | Kind::Dec3 => "decimals",
            Kind::Share => "utilization",
            Kind::Text => "text",
        }
    }

    /// Whether the CSV rounds the values of this kind.
    pub fn rounded(self) -> bool {
        matches!(self, Kind::Dec4 | Kind::Dec3 | Kind::Share)
    }
}

/// One column of an output table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnDef {
    /// The name in the CSV header, the Parquet schema and the DataFrame.
    pub name: &'static str,
    pub kind: Kind,
    /// Whether a cell may be empty (CSV) or null (Parquet, NaN in Python).
    pub nullable: bool,
    /// The unit of the values in the files (`ns` for every time).
    pub unit: &'static str,
    /// A line about the column; docs/outputs.md says it in full.
    pub about: &'static str,
}

/// One cell of a row: what a table hands to the writers and takes from the
/// readers. A time is `Int`, in picoseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell<'a> {
    Null,
    Int(u64),
    Num(f64),
    Text(&'a str),
}

/// A value a table column holds, and how it becomes a cell and back.
pub trait CellValue: Sized {
    const NULLABLE: bool = false;
    fn cell(&self) -> Cell<'_>;
    /// The value of a cell read from a file; None when the cell does not fit.
    fn from_cell(c: Cell<'_>) -> Option<Self>;
}

macro_rules! int_cell {
    ($($t:ty),*) => {$(
        impl CellValue for $t {
            fn cell(&self) -> Cell<'_> {
                Cell::Int(u64::from(*self))
            }
            fn from_cell(c: Cell<'_>) -> Option<Self> {
                match c {
                    Cell::Int(v) => v.try_into().ok(),
                    _ => None,
                }
            }
        }
    )*};
}
int_cell!(u16, u32, u64);

impl CellValue for f64 {
    fn cell(&self) -> Cell<'_> {
        Cell::Num(*self)
    }
    fn from_cell(c: Cell<'_>) -> Option<Self> {
        match c {
            Cell::Num(v) => Some(v),
            Cell::Int(v) => Some(v as f64),
            _ => None,
        }
    }
}

impl CellValue for String {
    fn cell(&self) -> Cell<'_> {
        Cell::Text(self)
    }
    fn from_cell(c: Cell<'_>) -> Option<Self> {
        match c {
            Cell::Text(s) => Some(s.to_string()),
            _ => None,
        }
    }
}

impl CellValue for Label {
    fn cell(&self) -> Cell<'_> {
        Cell::Text(self)
    }
    fn from_cell(c: Cell<'_>) -> Option<Self> {
        match c {
            Cell::Text(s) => Some(Cow::Owned(s.to_string())),
            _ => None,
        }
    }
}

impl<T: CellValue> CellValue for Option<T> {
    const NULLABLE: bool = true;
    fn cell(&self) -> Cell<'_> {
        self.as_ref().map_or(Cell::Null, T::cell)
    }
    fn from_cell(c: Cell<'_>) -> Option<Self> {
        match c {
            Cell::Null => Some(None),
            c => T::from_cell(c).map(Some),
        }
    }
}

/// The codes given so far to the texts of each coded column while a table
/// is read (a table keeps each host or node name once), and how many of
/// the column's names each has looked at.
#[derive(Debug, Default)]
pub struct Codes(Vec<(HashMap<String, u32>, usize)>);

impl Codes {
    /// The code of `v` in column `col`, whose names are `names`.
    pub fn code(&mut self, col: usize, names: &mut Vec<String>, v: &str) -> u32 {
        if self.0.len() <= col {
            self.0.resize_with(col + 1, Default::default);
        }
        let (codes, seen) = &mut self.0[col];
        if let Some(&c) = codes.get(v) {
            return c;
        }
        // Names the table had before reading, or another column sharing
        // the dictionary added, each at its first place (a scan of them
        // per new text was quadratic: 65,536 hosts took seconds).
        for (i, n) in names.iter().enumerate().skip(*seen) {
            codes.entry(n.clone()).or_insert(i as u32);
        }
        *seen = names.len();
        if let Some(&c) = codes.get(v) {
            return c;
        }
        names.push(v.to_string());
        *seen += 1;
        let c = names.len() as u32 - 1;
        codes.insert(v.to_string(), c);
        c
    }
}

/// An output table, declared with [`table!`].
pub trait Table: Default {
    /// The file's name without its extension (`flows` for flows.csv).
    const FILE: &'static str;
    /// The columns, in file order.
    const COLUMNS: &'static [ColumnDef];
    fn rows(&self) -> usize;
    /// Hands the cells of row `row` to `f` with their columns' kinds, in
    /// column order. The kind is a constant at each call: once inlined, a
    /// writer's work for a cell is chosen when the crate is built, not per
    /// cell.
    fn cells<E>(&self, row: usize, f: impl FnMut(Kind, Cell<'_>) -> Result<(), E>) -> Result<(), E>;
    /// Appends row `row` to `out` as a CSV line, each cell written by the
    /// code of its kind, chosen when the crate is built (a links.csv of
    /// 1 us windows has a million lines, and looking the kind up per cell
    /// made such a run about a fifth slower).
    fn write_csv_row(&self, row: usize, int: &mut itoa::Buffer, out: &mut Vec<u8>) -> std::io::Result<()>;
    /// Appends a row read from a file, one cell per column; on a cell that
    /// does not fit its column, the column's position.
    fn push_cells(&mut self, cells: &[Cell<'_>], codes: &mut Codes) -> Result<(), usize>;
    /// Removes every row, keeping the names rows refer to.
    fn clear(&mut self);
}

/// The CSV header line of a table.
pub fn header<T: Table>() -> String {
    let mut s = T::COLUMNS.iter().map(|c| c.name).collect::<Vec<_>>().join(",");
    s.push('\n');
    s
}

/// A table's columns as arrays (what the Python package hands to NumPy).
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnData {
    /// Whole numbers (times in picoseconds); `valid` is false at a null, where the value is 0.
    Int { values: Vec<u64>, valid: Option<Vec<bool>> },
    /// Numbers; NaN at a null.
    Num(Vec<f64>),
    /// Text as codes into `names`.
    Text { codes: Vec<u32>, names: Vec<String> },
}

/// Every column of `t` as an array, in column order; the rounded kinds
/// with the values the CSV writes.
pub fn column_data<T: Table>(t: &T) -> Vec<ColumnData> {
    let n = t.rows();
    let mut cols: Vec<ColumnData> = T::COLUMNS
        .iter()
        .map(|c| match c.kind {
            Kind::Int | Kind::Time => ColumnData::Int { values: Vec::with_capacity(n), valid: c.nullable.then(|| Vec::with_capacity(n)) },
            Kind::Text => ColumnData::Text { codes: Vec::with_capacity(n), names: Vec::new() },
            _ => ColumnData::Num(Vec::with_capacity(n)),
        })
        .collect();
    let mut index: Vec<HashMap<String, u32>> = vec![HashMap::new(); cols.len()];
    // The last text of each column and its code: names come in runs.
    let mut last: Vec<Option<(String, u32)>> = vec![None; cols.len()];
    for i in 0..n {
        let mut k = 0;
        let _ = t.cells(i, |kind, cell| -> Result<(), ()> {
            match &mut cols[k] {
                ColumnData::Int { values, valid } => {
                    let v = match cell {
                        Cell::Int(v) => Some(v),
                        _ => None,
                    };
                    values.push(v.unwrap_or(0));
                    if let Some(valid) = valid {
                        valid.push(v.is_some());
                    }
                }
                ColumnData::Num(values) => values.push(match cell {
                    Cell::Num(x) if kind.rounded() => super::csv::as_written(kind, x),
                    Cell::Num(x) => x,
                    Cell::Int(v) => v as f64,
                    _ => f64::NAN,
                }),
                ColumnData::Text { codes, names } => {
                    let s = match cell {
                        Cell::Text(s) => s,
                        _ => "",
                    };
                    let code = match &last[k] {
                        Some((l, c)) if l == s => *c,
                        _ => {
                            let c = *index[k].entry(s.to_string()).or_insert_with(|| {
                                names.push(s.to_string());
                                names.len() as u32 - 1
                            });
                            last[k] = Some((s.to_string(), c));
                            c
                        }
                    };
                    codes.push(code);
                }
            }
            k += 1;
            Ok(())
        });
    }
    cols
}

/// Declares an output table: the typed table (a struct of one vector per
/// column, plus the names coded columns index) and its [`Table`]
/// implementation. Each column is
///
/// `field: Type = "name" codec, Kind, "unit", "about";`
///
/// where `Type` is the type of one value (`Option<..>` when a cell may be
/// empty) and `codec` is `plain` (the value itself), `coded(names)` (an
/// index into the table's `names`, written as that name) or
/// `coded_opt(names)` (the same, `None` written as an empty cell).
macro_rules! table {
    (
        $(#[$m:meta])*
        pub struct $T:ident in $file:literal {
            $( $(#[$xm:meta])* $x:ident : $xty:ty, )*
        }
        columns {
            $( $(#[$fm:meta])* $field:ident : $fty:ty = $name:literal $codec:ident $( ($dict:ident) )?, $kind:ident, $unit:literal, $about:literal; )*
        }
    ) => {
        $(#[$m])*
        #[derive(Clone, Debug, Default, PartialEq)]
        pub struct $T {
            $( $(#[$xm])* pub $x: $xty, )*
            $( $(#[$fm])* pub $field: Vec<$fty>, )*
        }

        impl $T {
            /// An empty table with room for `n` rows.
            #[allow(clippy::needless_update)] // a table without name lists has only columns
            pub fn with_capacity(n: usize) -> Self {
                $T { $( $field: Vec::with_capacity(n), )* ..Default::default() }
            }

            pub fn len(&self) -> usize {
                [$( self.$field.len() ),*][0]
            }

            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// Removes every row, keeping the names rows refer to and the
            /// columns' capacity (a stream writer reuses one table).
            pub fn clear_rows(&mut self) {
                $( self.$field.clear(); )*
            }
        }

        impl $crate::output::schema::Table for $T {
            const FILE: &'static str = $file;
            const COLUMNS: &'static [$crate::output::schema::ColumnDef] = &[
                $( $crate::output::schema::ColumnDef {
                    name: $name,
                    kind: $crate::output::schema::Kind::$kind,
                    nullable: $crate::output::schema::nullable!($fty, $codec),
                    unit: $unit,
                    about: $about,
                }, )*
            ];

            fn rows(&self) -> usize {
                self.len()
            }

            #[inline]
            fn cells<E>(&self, row: usize, mut f: impl FnMut($crate::output::schema::Kind, $crate::output::schema::Cell<'_>) -> Result<(), E>) -> Result<(), E> {
                let t = self;
                $( f($crate::output::schema::Kind::$kind, $crate::output::schema::cell_get!(t, row, $field, $codec $( ($dict) )?))?; )*
                Ok(())
            }

            #[inline]
            fn write_csv_row(&self, row: usize, int: &mut itoa::Buffer, out: &mut Vec<u8>) -> std::io::Result<()> {
                let t = self;
                $(
                    $crate::output::csv::write_cell(out, $crate::output::schema::Kind::$kind, $crate::output::schema::cell_get!(t, row, $field, $codec $( ($dict) )?), int)?;
                    out.push(b',');
                )*
                // The comma after the last cell becomes the line break.
                if let Some(last) = out.last_mut() {
                    *last = b'\n';
                }
                Ok(())
            }

            fn push_cells(&mut self, cells: &[$crate::output::schema::Cell<'_>], codes: &mut $crate::output::schema::Codes) -> Result<(), usize> {
                let (t, _) = (self, &codes);
                let mut k = 0usize;
                $(
                    let c = cells.get(k).copied().unwrap_or($crate::output::schema::Cell::Null);
                    $crate::output::schema::cell_put!(t, c, codes, k, $field, $fty, $codec $( ($dict) )?);
                    k += 1;
                )*
                let _ = k;
                Ok(())
            }

            fn clear(&mut self) {
                self.clear_rows();
            }
        }
    };
}
pub(crate) use table;

macro_rules! nullable {
    ($fty:ty, plain) => {
        <$fty as $crate::output::schema::CellValue>::NULLABLE
    };
    ($fty:ty, $other:ident) => {
        false
    };
}
pub(crate) use nullable;

macro_rules! cell_get {
    ($t:ident, $i:ident, $f:ident, plain) => {
        $crate::output::schema::CellValue::cell(&$t.$f[$i])
    };
    ($t:ident, $i:ident, $f:ident, coded ($d:ident)) => {
        $crate::output::schema::Cell::Text(&$t.$d[$t.$f[$i] as usize])
    };
    ($t:ident, $i:ident, $f:ident, coded_opt ($d:ident)) => {
        $crate::output::schema::Cell::Text($t.$f[$i].map_or("", |c| $t.$d[c as usize].as_str()))
    };
}
pub(crate) use cell_get;

macro_rules! cell_put {
    ($t:ident, $c:ident, $codes:ident, $k:ident, $f:ident, $fty:ty, plain) => {
        $t.$f.push(<$fty as $crate::output::schema::CellValue>::from_cell($c).ok_or($k)?)
    };
    ($t:ident, $c:ident, $codes:ident, $k:ident, $f:ident, $fty:ty, coded ($d:ident)) => {{
        let $crate::output::schema::Cell::Text(s) = $c else { return Err($k) };
        let code = $codes.code($k, &mut $t.$d, s);
        $t.$f.push(code);
    }};
    ($t:ident, $c:ident, $codes:ident, $k:ident, $f:ident, $fty:ty, coded_opt ($d:ident)) => {{
        let s = match $c {
            $crate::output::schema::Cell::Text(s) => s,
            $crate::output::schema::Cell::Null => "",
            _ => return Err($k),
        };
        let code = (!s.is_empty()).then(|| $codes.code($k, &mut $t.$d, s));
        $t.$f.push(code);
    }};
}
pub(crate) use cell_put;

#[cfg(test)]
mod tests {
    use super::super::tables::{CcTable, CollectiveTable, FlowTable, LinkColumns, RpcTable, SignalTable};
    use super::*;

    /// The column names of the first table after `## FILE.csv` in
    /// docs/outputs.md (every backquoted name of its first cells), with the
    /// units of a table that has a unit column, and the header line of the
    /// section's first code block that has one.
    fn documented(page: &str, file: &str, first_column: &str) -> (Vec<(String, Option<String>)>, Option<String>) {
        let start = page.find(&format!("\n## {file}.csv\n")).unwrap_or_else(|| panic!("docs/outputs.md has no section {file}.csv"));
        let section = &page[start + 1..];
        let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
        let lines: Vec<&str> = section.lines().collect();
        let header = lines.iter().find(|l| l.starts_with(&format!("{first_column},"))).map(|l| l.to_string());
        let first = lines.iter().position(|l| l.starts_with('|')).expect("a table");
        let head: Vec<&str> = lines[first].trim_matches('|').split('|').map(str::trim).collect();
        let unit = head.iter().position(|h| *h == "unit");
        let mut out = Vec::new();
        for l in lines[first + 2..].iter().take_while(|l| l.starts_with('|')) {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            for name in cells[0].split('`').skip(1).step_by(2) {
                out.push((name.to_string(), unit.map(|u| cells.get(u).copied().unwrap_or("").replace('`', ""))));
            }
        }
        (out, header)
    }

    fn check<T: Table>(page: &str) {
        let (doc, doc_header) = documented(page, T::FILE, T::COLUMNS[0].name);
        let names: Vec<&str> = T::COLUMNS.iter().map(|c| c.name).collect();
        let doc_names: Vec<&str> = doc.iter().map(|d| d.0.as_str()).collect();
        assert_eq!(doc_names, names, "docs/outputs.md, {}.csv: the documented columns are not the schema's", T::FILE);
        for (c, (_, unit)) in T::COLUMNS.iter().zip(&doc) {
            if let Some(u) = unit {
                assert_eq!(u, c.unit, "docs/outputs.md, {}.csv: unit of {}", T::FILE, c.name);
            }
        }
        assert_eq!(doc_header.map(|h| h + "\n"), Some(header::<T>()), "docs/outputs.md, {}.csv: the header line", T::FILE);
    }

    #[test]
    fn outputs_md_documents_every_column_of_every_table() {
        let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/outputs.md")).unwrap();
        check::<FlowTable>(&page);
        check::<LinkColumns>(&page);
        check::<SignalTable>(&page);
        check::<CcTable>(&page);
        check::<CollectiveTable>(&page);
        check::<RpcTable>(&page);
        check::<super::super::tables::JobTable>(&page);
        check::<super::super::tables::JobLinkTable>(&page);
        check::<super::super::ops::OpTable>(&page);
        check::<super::super::ops::IterationTable>(&page);
    }

    #[test]
    fn cells_read_back_into_the_same_row() {
        let mut t = SignalTable { bottlenecks: vec!["s0->h1".into()], ..Default::default() };
        t.time_ps.push(1_500);
        t.flow_id.push(3);
        t.signal.push("delay".into());
        t.unit.push("ns".into());
        t.samples.push(2);
        t.mean.push(1.5);
        t.min.push(1.0);
        t.max.push(2.0);
        t.locator.push(None);
        t.bottleneck.push(Some(0));
        let mut cells = Vec::new();
        let _ = t.cells(0, |_, c| -> Result<(), ()> {
            cells.push(match c {
                Cell::Text(s) => Err(s.to_string()),
                Cell::Int(v) => Ok(Cell::Int(v)),
                Cell::Num(x) => Ok(Cell::Num(x)),
                Cell::Null => Ok(Cell::Null),
            });
            Ok(())
        });
        let cells: Vec<Cell> = cells.iter().map(|c| c.as_ref().map_or_else(|s| Cell::Text(s), |c| *c)).collect();
        let mut back = SignalTable::default();
        back.push_cells(&cells, &mut Codes::default()).unwrap();
        assert_eq!(back, t);
        assert_eq!(back.push_cells(&[Cell::Text("x")], &mut Codes::default()), Err(0));
    }
}
