//! `csigsim import`: scenarios from other simulators' inputs (docs/import.md).
//!
//! Each importer reads its inputs whole and checks them before anything is
//! written; the scenario and its trace are then written into a scratch
//! directory, loaded back as `csigsim validate` would, and only then moved
//! into place, so a refused input leaves no file behind.

mod htsim;
mod ns3;

use csigsim::InputError;
use std::path::{Path, PathBuf};

#[derive(clap::Subcommand)]
pub enum Source {
    /// An htsim connection matrix (.cm) as a scenario on the fat tree (or
    /// leaf-spine) htsim builds for it, with the htsim-uec profile.
    Htsim(htsim::Args),
    /// The HPCC ns-3 simulator's topology and flow files as a scenario with
    /// a custom topology, a trace, and the ns3-rdma profile.
    Ns3(ns3::Args),
}

/// Where the files go and whether they may replace others; common to every importer.
#[derive(clap::Args)]
pub struct Output {
    /// Directory of the scenario and its trace (default: the directory of the input file).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The scenario's name, and the stem of the files written (default: the input file's stem).
    #[arg(long)]
    name: Option<String>,
    /// Replace files of the same names.
    #[arg(long)]
    force: bool,
}

pub fn cmd(source: Source) -> Result<(), InputError> {
    let (dir, files, force, origin) = match source {
        Source::Htsim(a) => {
            let (dir, stem) = place(&a.output, &a.matrix)?;
            (dir, htsim::import(&a, &stem)?, a.output.force, a.matrix.display().to_string())
        }
        Source::Ns3(a) => {
            let (dir, stem) = place(&a.output, &a.flow)?;
            (dir, ns3::import(&a, &stem)?, a.output.force, a.topology.display().to_string())
        }
    };
    write_all(&dir, &files, force, &origin)?;
    for (name, _) in &files {
        println!("wrote {}", dir.join(name).display());
    }
    Ok(())
}

/// The output directory and the file stem.
fn place(o: &Output, input: &Path) -> Result<(PathBuf, String), InputError> {
    let dir = match &o.out {
        Some(d) => d.clone(),
        None => input.parent().map(Path::to_path_buf).filter(|p| !p.as_os_str().is_empty()).unwrap_or_else(|| PathBuf::from(".")),
    };
    let stem = match &o.name {
        Some(n) => n.clone(),
        None => input.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "imported".into()),
    };
    if stem.is_empty() || stem.contains(['/', '\\']) || stem.starts_with('.') {
        return Err(InputError::new("--name", None, None, format!("\"{stem}\" cannot be a file name: give --name NAME without a path")));
    }
    Ok((dir, stem))
}

/// Writes the files into `dir` all or none: into a scratch directory first,
/// where the scenario is loaded back, then renamed into place.
fn write_all(dir: &Path, files: &[(String, String)], force: bool, origin: &str) -> Result<(), InputError> {
    let io = |what: &str, p: &Path, e: std::io::Error| InputError::new("--out", None, None, format!("cannot {what} {}: {e}", p.display()));
    for (name, _) in files {
        let p = dir.join(name);
        if p.exists() && !force {
            return Err(InputError::new("--out", None, None, format!("{} exists: give --force to replace it, or --out or --name", p.display())));
        }
    }
    let created = !dir.exists();
    std::fs::create_dir_all(dir).map_err(|e| io("create", dir, e))?;
    let scratch = dir.join(format!(".csigsim-import-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir(&scratch).map_err(|e| io("create", &scratch, e))?;
    let result = (|| {
        for (name, text) in files {
            let p = scratch.join(name);
            std::fs::write(&p, text).map_err(|e| io("write", &p, e))?;
        }
        // What was written must load; what the checks above let through
        // (a fabric in two parts) is the input's fault.
        let scenario = scratch.join(&files[0].0);
        csigsim::scenario::load_file(&scenario, &[], None).map_err(|e| {
            let key = e.key.map(|k| format!("key `{k}` of the scenario made from it: ")).unwrap_or_else(|| "the scenario made from it: ".into());
            InputError::new(origin, None, None, format!("{key}{}", e.msg))
        })?;
        let mut moved = Vec::new();
        for (name, _) in files {
            let (from, to) = (scratch.join(name), dir.join(name));
            if let Err(e) = std::fs::rename(&from, &to) {
                for m in &moved {
                    let _ = std::fs::remove_file(m);
                }
                return Err(io("write", &to, e));
            }
            moved.push(to);
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&scratch);
    if result.is_err() && created {
        let _ = std::fs::remove_dir(dir);
    }
    result
}

/// A whitespace-separated token with its 1-based line and column.
#[derive(Clone, Debug)]
pub struct Token<'a> {
    pub text: &'a str,
    pub line: usize,
    pub col: usize,
}

/// The tokens of each line, blank lines left out.
pub fn lines(text: &str) -> Vec<Vec<Token<'_>>> {
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            let mut v = Vec::new();
            let mut start = None;
            for (j, c) in l.char_indices().chain(std::iter::once((l.len(), ' '))) {
                match (c.is_whitespace(), start) {
                    (true, Some(s)) => {
                        v.push(Token { text: &l[s..j], line: i + 1, col: l[..s].chars().count() + 1 });
                        start = None;
                    }
                    (false, None) => start = Some(j),
                    _ => {}
                }
            }
            v
        })
        .filter(|v: &Vec<Token>| !v.is_empty())
        .collect()
}

/// Reads an input file as text; errors name the file.
pub fn read(path: &Path) -> Result<(String, String), InputError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| InputError::new(&file, None, None, format!("cannot read the file: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|e| InputError::new(&file, None, None, format!("not UTF-8 text: {e}")))?;
    Ok((file, text))
}

pub fn err_at(file: &str, t: &Token, msg: impl Into<String>) -> InputError {
    InputError::new(file, None, Some((t.line, t.col)), msg)
}

/// A non-negative decimal integer token.
pub fn uint(file: &str, t: &Token, what: &str) -> Result<u64, InputError> {
    if !t.text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(err_at(file, t, format!("{what}: expected a whole number, got \"{}\"", t.text)));
    }
    t.text.parse().map_err(|_| err_at(file, t, format!("{what}: {} is too large", t.text)))
}

/// A decimal number with an optional exponent ("2.000000265", "1e-6") times
/// `scale`, rounded to the nearest whole unit, computed exactly.
pub fn decimal(s: &str, scale: u128) -> Option<u128> {
    let (mant, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], s[i + 1..].parse::<i32>().ok()?),
        None => (s, 0),
    };
    let mant = mant.strip_prefix('+').unwrap_or(mant);
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    if int.is_empty() && frac.is_empty() || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    if digits.len() > 36 {
        return None;
    }
    let m: u128 = if digits.is_empty() { 0 } else { digits.parse().ok()? };
    // value = m * 10^(exp - frac.len()) * scale
    let e = exp - frac.len() as i32;
    let v = m.checked_mul(scale)?;
    if e >= 0 {
        v.checked_mul(10u128.checked_pow(e as u32)?)
    } else {
        let d = 10u128.checked_pow((-e) as u32);
        match d {
            Some(d) => Some((v + d / 2) / d),
            None => Some(0),
        }
    }
}

/// A TOML basic string.
pub fn quote(s: &str) -> String {
    toml_edit::Value::from(s).to_string().trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_exact() {
        assert_eq!(decimal("2.000000265", 1_000_000_000_000), Some(2_000_000_265_000));
        assert_eq!(decimal("1e-6", 1_000_000_000_000), Some(1_000_000));
        assert_eq!(decimal("0.001", 1_000_000_000), Some(1_000_000));
        assert_eq!(decimal("2", 1), Some(2));
        assert_eq!(decimal("1.5", 1), Some(2));
        assert_eq!(decimal("-1", 1), None);
        assert_eq!(decimal("x", 1), None);
        assert_eq!(decimal(".", 1), None);
    }

    #[test]
    fn tokens_know_their_line_and_column() {
        let l = lines("a  b\n\n  c");
        assert_eq!(l.len(), 2);
        assert_eq!((l[0][1].text, l[0][1].line, l[0][1].col), ("b", 1, 4));
        assert_eq!((l[1][0].text, l[1][0].line, l[1][0].col), ("c", 3, 3));
    }
}
