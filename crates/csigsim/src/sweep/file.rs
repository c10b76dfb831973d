//! The sweep file: its keys, checked, with errors that name the file, the
//! key and its line:column.

use super::{Axis, Sweep};
use crate::scenario::error::line_col;
use crate::scenario::InputError;
use std::collections::BTreeSet;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;
use toml_edit::{Item, TableLike, Value};

/// The top-level keys of a sweep file.
const KEYS: [&str; 11] = ["scenario", "name", "out", "seeds", "mode", "retries", "workers", "timeout", "wrapper", "set", "axis"];
const AXIS_KEYS: [&str; 4] = ["key", "values", "range", "group"];
/// Points, seeds and range values a sweep may have.
pub(super) const MAX: usize = 1_000_000;

/// A table of the file and where it is.
type Located<'a> = (&'a dyn TableLike, Option<Range<usize>>);

/// What [`parse`] reads.
pub struct Source<'a> {
    /// The sweep file's text ("" for a sweep given only as keys).
    pub text: &'a str,
    /// The sweep file, for messages; `None` for a sweep given as data.
    pub file: Option<&'a Path>,
    /// What `scenario` is relative to: the file's directory.
    pub base_dir: &'a Path,
    /// The default `name`, and the default `out` under `runs/sweeps/`.
    pub stem: &'a str,
    /// Top-level keys given beside the file, each with its value as TOML
    /// text; they replace the file's (Python's keyword arguments).
    pub replace: &'a [(String, String)],
}

/// Reads and parses a sweep file (relative paths in it are relative to the file).
pub fn read(path: &Path) -> Result<Sweep, InputError> {
    let text = std::fs::read_to_string(path).map_err(|e| InputError::new(path.display().to_string(), None, None, format!("cannot read the file: {e}")))?;
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "sweep".into());
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    parse(&Source { text: &text, file: Some(path), base_dir: &base, stem: &stem, replace: &[] })
}

/// Parses and checks a sweep.
pub fn parse(src: &Source) -> Result<Sweep, InputError> {
    let file = src.file.map(|f| f.display().to_string()).unwrap_or_default();
    let text = src.text;
    let doc = toml_edit::Document::parse(text.to_string()).map_err(|e| {
        InputError::new(&file, None, e.span().map(|s| line_col(text, s.start)), format!("TOML syntax error: {}", e.message().trim_end()))
    })?;
    let mut root = doc.as_table().clone();
    // A replaced key has no place in the file: its errors are not located.
    let mut replaced = BTreeSet::new();
    for (k, v) in src.replace {
        let item = format!("v = {v}")
            .parse::<toml_edit::DocumentMut>()
            .ok()
            .and_then(|mut d| d.remove("v"))
            .ok_or_else(|| InputError::new(&file, Some(k.clone()), None, format!("not a TOML value: {v}")))?;
        root.insert(k, item);
        replaced.insert(k.as_str());
    }
    let err = |key: &str, span: Option<Range<usize>>, msg: String| {
        let top = key.split(['.', '[']).next().unwrap_or(key);
        let at = span.filter(|_| src.file.is_some() && !replaced.contains(top)).map(|s| line_col(text, s.start));
        InputError::new(&file, Some(key.to_string()), at, msg)
    };
    for (k, _) in root.iter() {
        if !KEYS.contains(&k) {
            return Err(err(k, root.key(k).and_then(|k| k.span()), format!("unknown key; the keys of a sweep file are {}", KEYS.join(", "))));
        }
    }
    let string = |k: &str| -> Result<Option<String>, InputError> {
        match root.get(k) {
            None => Ok(None),
            Some(i) => i.as_str().map(|s| Some(s.to_string())).ok_or_else(|| err(k, i.span(), "expected a string".into())),
        }
    };
    let scenario = match string("scenario")? {
        Some(s) => src.base_dir.join(s),
        None => return Err(err("scenario", None, "missing: the path of the base scenario, relative to the sweep file".into())),
    };
    if !scenario.is_file() {
        return Err(err("scenario", root.get("scenario").and_then(Item::span), format!("no scenario file {}", scenario.display())));
    }
    let name = string("name")?.unwrap_or_else(|| src.stem.to_string());
    let out = string("out")?.map(PathBuf::from).unwrap_or_else(|| PathBuf::from("runs/sweeps").join(src.stem));
    let count = |k: &str, max: i64| -> Result<Option<i64>, InputError> {
        match root.get(k) {
            None => Ok(None),
            Some(i) => match i.as_integer() {
                Some(n) if (0..=max).contains(&n) => Ok(Some(n)),
                _ => Err(err(k, i.span(), format!("expected an integer from 0 to {max}"))),
            },
        }
    };
    let retries = count("retries", 100)?.unwrap_or(1) as u32;
    let workers = count("workers", 4096)?.unwrap_or(0) as usize;
    let timeout = match root.get("timeout") {
        None => None,
        Some(i) => {
            let secs = |f: f64| (f > 0.0 && f.is_finite()).then(|| Duration::from_secs_f64(f));
            let d = match i.as_value() {
                Some(Value::String(s)) => parse_duration(s.value()),
                Some(Value::Integer(n)) => secs(*n.value() as f64),
                Some(Value::Float(f)) => secs(*f.value()),
                _ => None,
            };
            Some(d.ok_or_else(|| err("timeout", i.span(), "expected a duration such as \"90s\", \"30m\" or \"2h\"".into()))?)
        }
    };
    let wrapper = match root.get("wrapper") {
        None => Vec::new(),
        Some(i) => {
            let bad = || err("wrapper", i.span(), "expected a non-empty list of strings: the command and its arguments".into());
            let a = i.as_array().ok_or_else(bad)?;
            let w: Option<Vec<String>> = a.iter().map(|v| v.as_str().map(String::from)).collect();
            w.filter(|w| !w.is_empty()).ok_or_else(bad)?
        }
    };
    let seeds = match root.get("seeds") {
        None => None,
        Some(i) => Some(seeds(i).map_err(|m| err("seeds", i.span(), m))?),
    };
    let zip_all = match string("mode")?.as_deref() {
        None | Some("cross") => false,
        Some("zip") => true,
        Some(m) => return Err(err("mode", root.get("mode").and_then(Item::span), format!("unknown mode \"{m}\": cross or zip"))),
    };
    let mut set = Vec::new();
    if let Some(i) = root.get("set") {
        let t = i.as_table_like().ok_or_else(|| err("set", i.span(), "expected a table of KEY = VALUE overrides".into()))?;
        flatten(t, "", &mut set);
    }
    let mut axes: Vec<Axis> = Vec::new();
    if let Some(i) = root.get("axis") {
        // [[axis]] tables, or the same as an array of inline tables.
        let tables: Option<Vec<Located>> = match i {
            Item::ArrayOfTables(a) => Some(a.iter().map(|t| (t as &dyn TableLike, t.span())).collect()),
            Item::Value(Value::Array(a)) => a.iter().map(|v| v.as_inline_table().map(|t| (t as &dyn TableLike, t.span()))).collect(),
            _ => None,
        };
        let tables = tables.ok_or_else(|| err("axis", i.span(), "expected [[axis]] tables".into()))?;
        for (n, (t, t_span)) in tables.into_iter().enumerate() {
            let at = |k: &str| format!("axis[{n}].{k}");
            for (k, _) in t.iter() {
                if !AXIS_KEYS.contains(&k) {
                    return Err(err(&at(k), t.key(k).and_then(|k| k.span()), format!("unknown key; the keys of an axis are {}", AXIS_KEYS.join(", "))));
                }
            }
            let key = match t.get("key") {
                Some(k) => k.as_str().filter(|s| !s.trim().is_empty()).ok_or_else(|| err(&at("key"), k.span(), "expected a scenario key such as \"transport.cc\"".into()))?,
                None => return Err(err(&at("key"), t_span, "missing: the scenario key this axis sets (any key --set takes)".into())),
            };
            if key.trim() == "seed" {
                return Err(err(&at("key"), t.get("key").and_then(Item::span), "the seed is swept with the top-level `seeds` key".into()));
            }
            if let Some(j) = axes.iter().position(|a| a.key == key.trim()) {
                return Err(err(&at("key"), t.get("key").and_then(Item::span), format!("axis[{j}] already sweeps \"{key}\"")));
            }
            let values = match (t.get("values"), t.get("range")) {
                (Some(v), None) => {
                    let a = v.as_array().filter(|a| !a.is_empty()).ok_or_else(|| err(&at("values"), v.span(), "expected a non-empty list of values".into()))?;
                    a.iter().map(value_text).collect()
                }
                (None, Some(r)) => range(r).map_err(|(k, m)| err(&at(&format!("range{k}")), r.span(), m))?,
                (Some(v), Some(_)) => return Err(err(&at("values"), v.span(), "give either values or range, not both".into())),
                (None, None) => return Err(err(&at("values"), t_span, "missing: give values = [...] or range = { start, stop, step | count }".into())),
            };
            let group = match t.get("group") {
                _ if zip_all => "zip".to_string(),
                None => format!("\0{n}"),
                Some(g) => g.as_str().map(String::from).ok_or_else(|| err(&at("group"), g.span(), "expected a string: axes with the same group are zipped".into()))?,
            };
            if let Some(other) = axes.iter().find(|a| a.group == group && a.values.len() != values.len()) {
                return Err(err(
                    &at("values"),
                    t_span,
                    format!("zipped with \"{}\" ({} values) but has {} values: zipped axes need as many values each", other.key, other.values.len(), values.len()),
                ));
            }
            axes.push(Axis { key: key.trim().to_string(), values, group });
        }
    }
    Ok(Sweep { file: src.file.map(Path::to_path_buf), name, scenario, out, seeds, set, axes, retries, workers, timeout, wrapper })
}

/// `[set]` with nested tables read as dotted keys.
fn flatten(t: &dyn TableLike, prefix: &str, out: &mut Vec<(String, String)>) {
    for (k, item) in t.iter() {
        let key = if prefix.is_empty() { k.to_string() } else { format!("{prefix}.{k}") };
        match item {
            Item::Table(sub) => flatten(sub, &key, out),
            Item::Value(Value::InlineTable(sub)) => flatten(sub, &key, out),
            Item::Value(v) => out.push((key, value_text(v))),
            _ => {}
        }
    }
}

/// A value as TOML text, without the file's comments and spacing.
fn value_text(v: &Value) -> String {
    let mut v = v.clone();
    v.decor_mut().clear();
    v.to_string()
}

fn seeds(i: &Item) -> Result<Vec<u64>, String> {
    const BAD: &str = "expected a list of seeds [1, 2, 3] or { start = 1, count = 3 }";
    let seed = |v: &Value| v.as_integer().filter(|&n| n >= 0).map(|n| n as u64);
    if let Some(a) = i.as_array() {
        let s: Option<Vec<u64>> = a.iter().map(seed).collect();
        let s = s.filter(|s| !s.is_empty()).ok_or(BAD)?;
        if let Some(d) = s.iter().enumerate().find(|(n, x)| s[..*n].contains(x)) {
            return Err(format!("seed {} is listed twice", d.1));
        }
        return Ok(s);
    }
    let t = i.as_table_like().ok_or(BAD)?;
    if t.iter().any(|(k, _)| k != "start" && k != "count") {
        return Err(BAD.into());
    }
    let start = t.get("start").and_then(|v| v.as_value()).and_then(seed).ok_or(BAD)?;
    let count = t.get("count").and_then(|v| v.as_value()).and_then(seed).filter(|&c| (1..=MAX as u64).contains(&c)).ok_or("count must be from 1 to 1000000")?;
    Ok((0..count).map(|n| start.wrapping_add(n)).collect())
}

/// `range = { start, stop, step }` (stop included when reached) or
/// `{ start, stop, count }` (evenly spaced, both ends included). Integers
/// stay integers when start, stop and step are integers.
fn range(i: &Item) -> Result<Vec<String>, (String, String)> {
    let bad = |k: &str, m: &str| (k.to_string(), m.to_string());
    let t = i.as_table_like().ok_or_else(|| bad("", "expected { start, stop, step } or { start, stop, count }"))?;
    for (k, _) in t.iter() {
        if !["start", "stop", "step", "count"].contains(&k) {
            return Err(bad(&format!(".{k}"), "unknown key; a range has start, stop and step or count"));
        }
    }
    let num = |k: &str| -> Result<(f64, Option<i64>), (String, String)> {
        let v = t.get(k).and_then(|v| v.as_value()).ok_or_else(|| bad(&format!(".{k}"), "missing number"))?;
        match (v.as_integer(), v.as_float()) {
            (Some(n), _) => Ok((n as f64, Some(n))),
            (_, Some(f)) if f.is_finite() => Ok((f, None)),
            _ => Err(bad(&format!(".{k}"), "expected a finite number")),
        }
    };
    let (start, stop) = (num("start")?, num("stop")?);
    match (t.get("step"), t.get("count")) {
        (Some(_), None) => {
            let step = num("step")?;
            if step.0 == 0.0 || (stop.0 - start.0) * step.0 < 0.0 {
                return Err(bad(".step", "step must be non-zero and go from start towards stop"));
            }
            if let (Some(a), Some(b), Some(s)) = (start.1, stop.1, step.1) {
                let n = (b - a) / s + 1;
                if n as usize > MAX {
                    return Err(bad(".step", "more than a million values"));
                }
                return Ok((0..n).map(|k| (a + k * s).to_string()).collect());
            }
            // A small tolerance so that 0.1-steps reach their stop.
            let n = ((stop.0 - start.0) / step.0 + 1e-9).floor() + 1.0;
            if n > MAX as f64 {
                return Err(bad(".step", "more than a million values"));
            }
            Ok((0..n as i64).map(|k| float_text(start.0 + k as f64 * step.0)).collect())
        }
        (None, Some(c)) => {
            let n = c.as_integer().filter(|&n| (1..=MAX as i64).contains(&n)).ok_or_else(|| bad(".count", "count must be from 1 to 1000000"))?;
            if n == 1 {
                return Ok(vec![float_text(start.0)]);
            }
            Ok((0..n).map(|k| float_text(start.0 + k as f64 * (stop.0 - start.0) / (n - 1) as f64)).collect())
        }
        _ => Err(bad("", "give exactly one of step and count")),
    }
}

/// A float as TOML text that reads back to the same value.
fn float_text(f: f64) -> String {
    Value::from(f).to_string().trim().to_string()
}

/// A time limit: `"90s"`, `"30m"`, `"2h"`, `"500ms"`, or plain seconds (`"45"`).
pub fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    let (num, mult) = if let Some(n) = s.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = s.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (s, 1.0)
    };
    let v: f64 = num.trim().parse().ok()?;
    (v > 0.0 && v.is_finite()).then(|| Duration::from_secs_f64(v * mult))
}
