//! Input errors: every problem with a scenario names the file, the key and,
//! where the file has one, the line and column.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// The file the problem is in (a scenario, a trace), or "--set".
    pub file: String,
    /// Dotted key path, e.g. `flow[2].src`.
    pub key: Option<String>,
    /// 1-based line and column.
    pub line_col: Option<(usize, usize)>,
    pub msg: String,
}

impl InputError {
    /// A located error. Quoted values in `msg` longer than [`MAX_QUOTED`]
    /// characters are cut short, so that a long value is not repeated whole,
    /// and the message is one line ([`one_line`]).
    pub fn new(file: impl Into<String>, key: Option<String>, line_col: Option<(usize, usize)>, msg: impl Into<String>) -> Self {
        InputError { file: file.into(), key, line_col, msg: clip_words(&clip_quoted(&one_line(&msg.into()))) }
    }
}

/// A parser's message on one line: the line naming the key that the parser
/// may add ("in `links.rate`") is dropped, as the error names the key, and
/// other lines are joined with "; ".
pub fn one_line(msg: &str) -> String {
    let mut lines: Vec<&str> = msg.trim_end().lines().map(str::trim_end).filter(|l| !l.is_empty()).collect();
    while lines.len() > 1 && lines.last().is_some_and(|l| l.starts_with("in `")) {
        lines.pop();
    }
    lines.join("; ")
}

/// Characters of a quoted value a message keeps.
pub const MAX_QUOTED: usize = 80;

/// Cuts every run of text between a pair of `"` or of `` ` `` longer than
/// [`MAX_QUOTED`] characters to its first characters, an ellipsis and the
/// length of the whole.
pub fn clip_quoted(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len().min(4 * MAX_QUOTED));
    let mut rest = msg;
    while let Some(open) = rest.find(['"', '`']) {
        let q = rest[open..].chars().next().expect("a quote");
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        let Some(close) = rest.find(q) else { break };
        out.push_str(&clip(&rest[..close]));
        out.push(q);
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

/// Cuts every unquoted word longer than [`MAX_QUOTED`] characters as
/// [`clip`] does: a number such as 1e300 prints with 301 digits.
pub fn clip_words(msg: &str) -> String {
    if !msg.split(' ').any(|w| w.len() > MAX_QUOTED && !w.starts_with(['"', '`'])) {
        return msg.to_string();
    }
    let words: Vec<std::borrow::Cow<str>> = msg.split(' ').map(|w| if w.starts_with(['"', '`']) { w.into() } else { clip(w) }).collect();
    words.join(" ")
}

/// `s`, or its first [`MAX_QUOTED`] characters, an ellipsis and the length
/// of the whole when it is longer.
pub fn clip(s: &str) -> std::borrow::Cow<'_, str> {
    let n = s.chars().count();
    if n > MAX_QUOTED {
        let head: String = s.chars().take(MAX_QUOTED).collect();
        format!("{head}... ({n} characters)").into()
    } else {
        s.into()
    }
}

/// The text of a file read as bytes; bytes that are not UTF-8 are an error at
/// their line and column (the column counts the characters before them).
pub fn utf8(bytes: Vec<u8>, file: &str) -> Result<String, InputError> {
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let valid = std::str::from_utf8(&e.as_bytes()[..at]).expect("the valid prefix");
        InputError::new(file, None, Some(line_col(valid, at)), format!("the file is not valid UTF-8 text (byte offset {at})"))
    })
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some((l, c)) = self.line_col {
            write!(f, ":{l}:{c}")?;
        }
        if let Some(k) = &self.key {
            write!(f, ": key `{}`", clip(k))?;
        }
        write!(f, ": {}", self.msg)
    }
}

impl std::error::Error for InputError {}

/// 1-based line and column of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map(|i| before[i + 1..].chars().count()).unwrap_or(before.chars().count()) + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_quoted_values_are_clipped() {
        let long = "x".repeat(200);
        let m = clip_quoted(&format!("unknown host \"{long}\" in `{long}`; short \"h1\""));
        assert_eq!(m, format!("unknown host \"{0}... (200 characters)\" in `{0}... (200 characters)`; short \"h1\"", "x".repeat(80)));
        assert_eq!(clip_quoted("no quotes"), "no quotes");
        assert_eq!(clip_quoted("open \"quote"), "open \"quote");
        let e = InputError::new("--set", Some(long.clone()), None, "unknown field");
        assert_eq!(e.to_string(), format!("--set: key `{}... (200 characters)`: unknown field", "x".repeat(80)));
    }

    #[test]
    fn long_numbers_are_clipped() {
        let m = InputError::new("f.toml", None, None, format!("load must be at most 10, got {}", 1e300)).msg;
        let digits = format!("1{}", "0".repeat(79));
        assert_eq!(m, format!("load must be at most 10, got {digits}... (301 characters)"));
        assert!(m.chars().count() < 140, "{m}");
        assert_eq!(clip_words("short words stay"), "short words stay");
    }

    #[test]
    fn bad_utf8_is_located() {
        let e = utf8(b"a = 1\nbc = \"\xff\"\n".to_vec(), "f.toml").unwrap_err();
        assert_eq!(e.line_col, Some((2, 7)));
        assert!(e.msg.contains("UTF-8"), "{e}");
    }
}
