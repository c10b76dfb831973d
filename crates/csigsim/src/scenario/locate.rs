//! Finding keys in scenario text (for line:column in errors) and applying
//! `--set KEY=VALUE` overrides to it, preserving its layout.

use super::{error::line_col, InputError, Override};
use toml_edit::{Document, DocumentMut, Item, Table, TableLike, Value};

/// One step of a key path: a key or an array index.
#[derive(Debug, PartialEq, Eq)]
enum Seg {
    Key(String),
    Index(usize),
}

/// Splits `flow[2].src` or `flow.2.src` into segments.
fn segments(path: &str) -> Vec<Seg> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let mut rest = part;
        if let Some(b) = rest.find('[') {
            if b > 0 {
                out.push(Seg::Key(rest[..b].to_string()));
            }
            rest = &rest[b..];
            while let Some(stripped) = rest.strip_prefix('[') {
                let end = stripped.find(']').unwrap_or(stripped.len());
                if let Ok(i) = stripped[..end].parse() {
                    out.push(Seg::Index(i));
                }
                rest = stripped.get(end + 1..).unwrap_or("");
            }
        } else if let Ok(i) = rest.parse::<usize>() {
            out.push(Seg::Index(i));
        } else if !rest.is_empty() {
            out.push(Seg::Key(rest.to_string()));
        }
    }
    out
}

/// A key path as errors spell it: `flow.0.src` and `flow[0].src` are both `flow[0].src`.
pub fn canonical(path: &str) -> String {
    let mut out = String::new();
    for seg in segments(path) {
        match seg {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

#[derive(Clone, Copy)]
enum Node<'a> {
    Item(&'a Item),
    Value(&'a Value),
    Table(&'a Table),
}

impl<'a> Node<'a> {
    fn span(&self) -> Option<std::ops::Range<usize>> {
        match self {
            Node::Item(i) => i.span(),
            Node::Value(v) => v.span(),
            Node::Table(t) => t.span(),
        }
    }
    fn child(&self, seg: &Seg) -> Option<(Node<'a>, Option<std::ops::Range<usize>>)> {
        match (self, seg) {
            (Node::Item(Item::Table(t)), Seg::Key(k)) => {
                let key_span = t.key(k).and_then(|k| k.span());
                t.get(k).map(|i| (Node::Item(i), key_span))
            }
            (Node::Table(t), Seg::Key(k)) => {
                let key_span = t.key(k).and_then(|k| k.span());
                t.get(k).map(|i| (Node::Item(i), key_span))
            }
            (Node::Item(Item::Value(v)), s) => Node::Value(v).child(s),
            (Node::Value(Value::InlineTable(t)), Seg::Key(k)) => {
                let key_span = t.key(k).and_then(|k| k.span());
                t.get(k).map(|v| (Node::Value(v), key_span))
            }
            (Node::Item(Item::ArrayOfTables(a)), Seg::Index(i)) => a.get(*i).map(|t| (Node::Table(t), None)),
            (Node::Value(Value::Array(a)), Seg::Index(i)) => a.get(*i).map(|v| (Node::Value(v), None)),
            _ => None,
        }
    }
}

/// Line and column of the value at `path`, or of its deepest existing parent.
pub fn locate(text: &str, path: &str) -> Option<(usize, usize)> {
    let doc = Document::parse(text.to_string()).ok()?;
    let mut node = Node::Table(doc.as_table());
    let mut best = None;
    for seg in segments(path) {
        match node.child(&seg) {
            Some((child, key_span)) => {
                best = child.span().or(key_span).or(best);
                node = child;
            }
            None => break,
        }
    }
    best.map(|s| line_col(text, s.start))
}

/// The most parts (keys and indices) of an override's key: the deepest
/// scenario key has six.
pub const MAX_KEY_PARTS: usize = 16;

/// Applies overrides to the text. A value that is not valid TOML is taken as a string.
pub fn apply_overrides(text: &str, file: &str, overrides: &[Override]) -> Result<String, InputError> {
    if overrides.is_empty() {
        return Ok(text.to_string());
    }
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        let pos = e.span().map(|s| line_col(text, s.start));
        InputError::new(file, None, pos, format!("TOML syntax error: {}", e.message().trim_end()))
    })?;
    for o in overrides {
        let value: Value = o.value.parse().unwrap_or_else(|_| Value::from(o.value.as_str()));
        let segs = segments(&o.key);
        let fail = |m: String| InputError::new("--set", Some(o.key.clone()), None, m);
        if segs.is_empty() {
            return Err(fail("empty key".into()));
        }
        // The text of nested tables grows with the square of their depth.
        if segs.len() > MAX_KEY_PARTS {
            return Err(fail(format!("the key has {} parts; no scenario key has more than {MAX_KEY_PARTS}", segs.len())));
        }
        let mut item: &mut Item = doc.as_item_mut();
        for (i, seg) in segs.iter().enumerate() {
            let last = i + 1 == segs.len();
            item = match seg {
                Seg::Key(k) => {
                    let t: &mut dyn TableLike = match item {
                        Item::None => {
                            *item = Item::Table(Table::new());
                            item.as_table_like_mut().expect("table")
                        }
                        other => other
                            .as_table_like_mut()
                            .ok_or_else(|| fail(format!("cannot set `{k}` inside a value that is not a table")))?,
                    };
                    if last {
                        t.insert(k, Item::Value(value.clone()));
                        break;
                    }
                    t.entry(k).or_insert(Item::None)
                }
                Seg::Index(idx) => match item {
                    Item::ArrayOfTables(a) => {
                        let len = a.len();
                        let t = a.get_mut(*idx).ok_or_else(|| fail(format!("index {idx} is out of range (there are {len})")))?;
                        if last {
                            return Err(fail("cannot replace a whole table".into()));
                        }
                        // Step into the table by re-wrapping it as an item view.
                        let Seg::Key(k) = &segs[i + 1] else { return Err(fail("expected a key after the index".into())) };
                        if i + 2 == segs.len() {
                            t.insert(k, Item::Value(value.clone()));
                            break;
                        }
                        return Err(fail("overrides reach at most one key inside an array of tables".into()));
                    }
                    _ => return Err(fail(format!("`{}` is not an array of tables", o.key))),
                },
            };
        }
    }
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "name = \"x\"\n[topology]\nkind = \"custom\"\nlinks = [\n  { a = \"h0\", b = \"s0\" },\n]\n\n[[flow]]\nsrc = \"h0\"\n\n[[flow]]\nsrc = \"h9\"\n";

    #[test]
    fn locates_nested_keys() {
        assert_eq!(locate(TEXT, "name"), Some((1, 8)));
        assert_eq!(locate(TEXT, "topology.kind"), Some((3, 8)));
        assert_eq!(locate(TEXT, "topology.links[0].b"), Some((5, 19)));
        assert_eq!(locate(TEXT, "flow[1].src"), Some((12, 7)));
        // A missing key falls back to its deepest parent.
        assert_eq!(locate(TEXT, "flow[1].nope"), locate(TEXT, "flow[1]"));
        assert_eq!(locate(TEXT, "flow[1]"), Some((11, 1)));
    }

    #[test]
    fn canonical_keys_use_brackets() {
        assert_eq!(canonical("flow.0.src"), "flow[0].src");
        assert_eq!(canonical("flow[0].src"), "flow[0].src");
        assert_eq!(canonical("switch.ecn.kmin"), "switch.ecn.kmin");
    }

    #[test]
    fn overrides_set_values_and_create_tables() {
        let o = |k: &str, v: &str| Override { key: k.into(), value: v.into() };
        let out = apply_overrides(TEXT, "f", &[o("name", "\"y\""), o("transport.cc", "dctcp"), o("flow.1.src", "3")]).unwrap();
        let v: toml::Table = toml::from_str(&out).unwrap();
        assert_eq!(v["name"].as_str(), Some("y"));
        assert_eq!(v["transport"]["cc"].as_str(), Some("dctcp"));
        assert_eq!(v["flow"][1]["src"].as_integer(), Some(3));
        assert!(apply_overrides(TEXT, "f", &[o("flow.7.src", "1")]).unwrap_err().msg.contains("out of range"));
    }
}
