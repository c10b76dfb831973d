//! `csigsim run --parquet`: each CSV file has a Parquet twin with the same
//! rows and values, read back here with the parquet crate's reader.

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use std::path::Path;
use std::process::Command;

fn csigsim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_csigsim")).args(args).output().expect("runs")
}

fn scenario(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios").join(name).to_str().unwrap().to_string()
}

fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header = r.headers().unwrap().iter().map(String::from).collect();
    (header, r.records().map(|x| x.unwrap().iter().map(String::from).collect()).collect())
}

fn read_parquet(path: &Path) -> (Vec<String>, Vec<Vec<Field>>) {
    let reader = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let header = reader.metadata().file_metadata().schema_descr().columns().iter().map(|c| c.name().to_string()).collect();
    let rows = reader.get_row_iter(None).unwrap().map(|r| r.unwrap().get_column_iter().map(|(_, f)| f.clone()).collect()).collect();
    (header, rows)
}

/// Checks that `NAME.parquet` holds the values of `NAME.csv`.
fn same_values(dir: &Path, name: &str) -> usize {
    let (ch, crows) = read_csv(&dir.join(format!("{name}.csv")));
    let (ph, prows) = read_parquet(&dir.join(format!("{name}.parquet")));
    // Same columns under the same names (times in ns in both).
    assert_eq!(ch, ph, "{name}");
    assert_eq!(crows.len(), prows.len(), "{name}: rows");
    for (i, (cr, pr)) in crows.iter().zip(&prows).enumerate() {
        for ((col, cell), f) in ch.iter().zip(cr).zip(pr) {
            let at = format!("{name} row {i} {col}: csv {cell:?}, parquet {f:?}");
            match f {
                Field::Null => assert_eq!(cell, "", "{at}"),
                Field::Long(v) => assert_eq!(&v.to_string(), cell, "{at}"),
                Field::Double(v) => {
                    let c: f64 = cell.parse().unwrap();
                    // The CSV rounds these to 4, 6 and 3 decimals; every other number,
                    // times in ns included, is the double the CSV's text parses to.
                    let tol = match col.as_str() {
                        "slowdown" => 0.5e-4,
                        "utilization" => 0.5e-6,
                        "algbw_gbps" | "busbw_gbps" => 0.5e-3,
                        _ => 0.0,
                    };
                    assert!((v - c).abs() <= tol * (1.0 + 1e-9), "{at}");
                }
                Field::Str(s) => assert_eq!(s, cell, "{at}"),
                other => panic!("{at}: unexpected type {other:?}"),
            }
        }
    }
    crows.len()
}

fn run(dir: &Path, scenario: &str, set: &[&str]) {
    let mut args = vec!["run", scenario, "--out", dir.to_str().unwrap(), "--quiet", "--parquet"];
    for s in set {
        args.extend(["--set", s]);
    }
    let out = csigsim(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn parquet_twins_hold_the_csv_values() {
    let base = std::env::temp_dir().join(format!("csigsim-parquet-{}", std::process::id()));
    // Flows, links, signals (CSIG and stamps) and cc.
    let chain = base.join("chain");
    run(&chain, &scenario("chain_csig_delay.toml"), &["monitor.cc=true", "transport.cc=\"dctcp\""]);
    for (name, min_rows) in [("flows", 5), ("links", 100), ("signals", 100), ("cc", 10)] {
        assert!(same_values(&chain, name) >= min_rows, "{name}");
    }
    // Collectives, with empty cells (the totals rows' step).
    let ring = base.join("ring");
    run(&ring, &scenario("ring_allreduce.toml"), &["workload.0.size=\"2MB\"", "monitor.links=false"]);
    assert!(same_values(&ring, "collectives") >= 16);
    assert!(!ring.join("links.parquet").exists(), "no twin of a file the run does not write");
    // RPCs, and flows left unfinished by the stop time (empty cells).
    let rpc = base.join("rpc");
    run(&rpc, &scenario("rpc_bursty_background.toml"), &["stop=\"2ms\""]);
    assert!(same_values(&rpc, "rpcs") >= 1);
    same_values(&rpc, "flows");
    // A run without --parquet into the same directory leaves no stale twin.
    assert!(csigsim(&["run", &scenario("two_hosts.toml"), "--out", rpc.to_str().unwrap(), "--quiet"]).status.success());
    assert!(std::fs::read_dir(&rpc).unwrap().all(|e| e.unwrap().path().extension().is_none_or(|x| x != "parquet")));
    let _ = std::fs::remove_dir_all(&base);
}

/// The twins `csigsim run --parquet` streams as the run goes have the bytes
/// of the twins written from whole tables by a run that keeps them in
/// memory (`RunOutput::write_parquet`): the same rows in the same row groups,
/// here more than one of `links` (78,960 rows at 200 ns windows).
#[test]
fn streamed_twins_have_the_bytes_of_whole_table_twins() {
    let base = std::env::temp_dir().join(format!("csigsim-parquet-stream-{}", std::process::id()));
    let set = ["monitor.cc=true", "transport.cc=\"dctcp\"", "monitor.window=\"200ns\""];
    let streamed = base.join("streamed");
    run(&streamed, &scenario("chain_csig_delay.toml"), &set);
    let overrides: Vec<csigsim::Override> = set.iter().map(|s| csigsim::Override::parse(s).unwrap()).collect();
    let sc = csigsim::scenario::load_file(Path::new(&scenario("chain_csig_delay.toml")), &overrides, None).unwrap();
    let whole = base.join("whole");
    let res = csigsim::run(sc, |_| true);
    assert!(res.streamed.is_none() && res.tables.links.is_some(), "the library run keeps its tables");
    res.write_parquet(&whole).unwrap();
    for name in ["links", "signals", "cc", "flows"] {
        let file = format!("{name}.parquet");
        let (a, b) = (std::fs::read(streamed.join(&file)).unwrap(), std::fs::read(whole.join(&file)).unwrap());
        assert!(a == b, "{file}: {} bytes streamed, {} from the whole table", a.len(), b.len());
    }
    assert!(same_values(&streamed, "links") > 1 << 16, "more than one row group");
    let _ = std::fs::remove_dir_all(&base);
}

/// The library's reader gives the same tables from the CSV files and from
/// their Parquet twins, and those tables written again are the CSV files,
/// byte for byte.
#[test]
fn a_run_directory_reads_back_into_the_tables_it_was_written_from() {
    use csigsim::output::read::{read_run, Format};
    use csigsim::output::{csv, schema::Table};
    fn text<T: Table>(t: &T) -> String {
        let mut buf = Vec::new();
        csv::write_table(t, &mut buf).unwrap();
        String::from_utf8(buf).unwrap()
    }
    let base = std::env::temp_dir().join(format!("csigsim-parquet-read-{}", std::process::id()));
    let cases: [(&str, &[&str]); 3] = [
        ("chain_csig_delay.toml", &["monitor.cc=true", "transport.cc=\"dctcp\""]),
        ("ring_allreduce.toml", &["workload.0.size=\"2MB\""]),
        ("rpc_bursty_background.toml", &["stop=\"2ms\""]),
    ];
    for (name, set) in cases {
        let dir = base.join(name);
        run(&dir, &scenario(name), set);
        let from_csv = read_run(&dir, Format::Csv).unwrap();
        let from_parquet = read_run(&dir, Format::Parquet).unwrap();
        assert_eq!(from_csv.summary["name"], from_parquet.summary["name"]);
        let file = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
        for t in [&from_csv, &from_parquet] {
            assert_eq!(text(&t.flows), file("flows.csv"), "{name}: flows");
            assert_eq!(t.links.as_ref().map(text), Some(file("links.csv")), "{name}: links");
            assert_eq!(t.signals.as_ref().map(text).unwrap_or_default(), file("signals.csv"), "{name}: signals");
            assert_eq!(t.cc.as_ref().map(text).unwrap_or_default(), file("cc.csv"), "{name}: cc");
            assert_eq!(t.collectives.as_ref().map(text).unwrap_or_default(), file("collectives.csv"), "{name}: collectives");
            assert_eq!(t.rpcs.as_ref().map(text).unwrap_or_default(), file("rpcs.csv"), "{name}: rpcs");
        }
        assert_eq!(from_csv.flows, from_parquet.flows, "{name}: the same table from either file");
    }
    let missing = read_run(&base.join("nothing"), Format::Csv).unwrap_err();
    assert!(missing.to_string().contains("flows.csv"), "{missing}");
    let _ = std::fs::remove_dir_all(&base);
}
