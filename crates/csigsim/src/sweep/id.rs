//! The point id: sha256 over a canonical form of the resolved scenario:
//! tables with their keys sorted, every value tagged with its type, floats
//! by their bits, and every string that names a regular file (relative to
//! the scenario's directory) followed by the sha256 of that file's
//! contents. Comments, spacing and key order do not change the id; a
//! changed trace file does.

use sha2::{Digest, Sha256};
use std::path::Path;

const ID_VERSION: &[u8] = b"csigsim sweep point 1\n";

/// The first 16 hex digits of the hash of `resolved_toml` (a scenario as
/// run, `scenario.toml` of its run directory); `base` is the scenario's
/// directory, for the files it names.
pub fn point_id(resolved_toml: &str, base: &Path) -> String {
    let mut h = Sha256::new();
    h.update(ID_VERSION);
    // The engine has already parsed this text; a failure here cannot happen
    // short of an engine bug, and then the raw text still gives a stable id.
    match resolved_toml.parse::<toml::Table>() {
        Ok(t) => canon_table(&t, base, &mut h),
        Err(_) => h.update(resolved_toml.as_bytes()),
    }
    hex(&h.finalize()[..8])
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn canon_str(s: &str, h: &mut Sha256) {
    h.update(format!("{}:", s.len()).as_bytes());
    h.update(s.as_bytes());
}

fn canon_table(t: &toml::Table, base: &Path, h: &mut Sha256) {
    let mut keys: Vec<&String> = t.keys().collect();
    keys.sort();
    h.update(b"{");
    for k in keys {
        canon_str(k, h);
        canon(&t[k], base, h);
    }
    h.update(b"}");
}

fn canon(v: &toml::Value, base: &Path, h: &mut Sha256) {
    match v {
        toml::Value::String(s) => {
            h.update(b"s");
            canon_str(s, h);
            let p = base.join(s);
            if !s.is_empty() && std::fs::metadata(&p).is_ok_and(|m| m.is_file()) {
                if let Ok(bytes) = std::fs::read(&p) {
                    h.update(b"#");
                    h.update(hex(&Sha256::digest(&bytes)).as_bytes());
                }
            }
        }
        toml::Value::Integer(i) => h.update(format!("i{i};").as_bytes()),
        toml::Value::Float(f) => h.update(format!("f{:016x};", f.to_bits()).as_bytes()),
        toml::Value::Boolean(b) => h.update(if *b { b"b1" } else { b"b0" }),
        toml::Value::Datetime(d) => {
            h.update(b"d");
            canon_str(&d.to_string(), h);
        }
        toml::Value::Array(a) => {
            h.update(b"[");
            for x in a {
                canon(x, base, h);
            }
            h.update(b"]");
        }
        toml::Value::Table(t) => canon_table(t, base, h),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_ignores_formatting_and_key_order_but_not_values() {
        let base = Path::new(".");
        let a = point_id("seed = 1\n[transport]\ncc = \"none\"\nmtu = 4096\n", base);
        let b = point_id("# comment\nseed=1\n[transport]\nmtu = 4096\ncc = 'none'\n", base);
        let c = point_id("seed = 1\n[transport]\ncc = \"none\"\nmtu = 4097\n", base);
        let d = point_id("seed = 1\n[transport]\ncc = \"none\"\nmtu = 4096.0\n", base);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
        assert_eq!(a.len(), 16);
    }

    /// The id is a contract (sweep directories written before keep their
    /// points): these are the ids sweeps have always given.
    #[test]
    fn known_scenarios_keep_their_ids() {
        let base = Path::new(".");
        assert_eq!(point_id("seed = 1\n", base), "5727352f5c87c2d8");
        assert_eq!(point_id("seed = 1\n[transport]\ncc = \"none\"\nmtu = 4096\nx = 1.5\n", base), "19c85124cdc73704");
    }
}
