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

/// Reads a unit variant of an enum whose variant names are `names`, as
/// serde's derive reads one (the same messages), for registries whose names
/// come from their plug-ins' files: the index of the name in `names`.
pub fn by_name<'de, D: serde::Deserializer<'de>>(d: D, enum_name: &'static str, names: &'static [&'static str]) -> Result<usize, D::Error> {
    use serde::de::{DeserializeSeed, EnumAccess, Error, VariantAccess, Visitor};
    use std::fmt;
    struct Name(&'static [&'static str]);
    impl<'de> Visitor<'de> for Name {
        type Value = usize;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("variant identifier")
        }
        fn visit_str<E: Error>(self, s: &str) -> Result<usize, E> {
            self.0.iter().position(|n| *n == s).ok_or_else(|| E::unknown_variant(s, self.0))
        }
    }
    impl<'de> DeserializeSeed<'de> for Name {
        type Value = usize;
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
            d.deserialize_identifier(self)
        }
    }
    struct Enum(&'static str, &'static [&'static str]);
    impl<'de> Visitor<'de> for Enum {
        type Value = usize;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "enum {}", self.0)
        }
        fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<usize, A::Error> {
            let (i, v) = data.variant_seed(Name(self.1))?;
            v.unit_variant()?;
            Ok(i)
        }
    }
    d.deserialize_enum(enum_name, names, Enum(enum_name, names))
}
