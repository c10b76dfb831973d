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
    pub fn new(file: impl Into<String>, key: Option<String>, line_col: Option<(usize, usize)>, msg: impl Into<String>) -> Self {
        InputError { file: file.into(), key, line_col, msg: msg.into() }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some((l, c)) = self.line_col {
            write!(f, ":{l}:{c}")?;
        }
        if let Some(k) = &self.key {
            write!(f, ": key `{k}`")?;
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
