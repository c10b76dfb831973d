//! Reading configuration: the located input error every layer reports
//! ([`InputError`]: file, key, line and column) and the key path of a serde
//! error, as scenario files spell it. A leaf: every layer that reads
//! configuration uses it.

pub mod error;
pub use error::InputError;

/// Formats a serde path as `a.b[2].c`.
pub fn path_string(p: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut s = String::new();
    for seg in p.iter() {
        match seg {
            Segment::Seq { index } => s.push_str(&format!("[{index}]")),
            Segment::Map { key } => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(key);
            }
            Segment::Enum { variant } => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(variant);
            }
            Segment::Unknown => {}
        }
    }
    s
}
