//! Every code block of README.md, docs/*.md, docs/cc/*.md and
//! docs/decisions/*.md runs as written (the
//! convention is in docs/robustness.md): `sh` blocks are run line by line
//! against the built binary in a temporary directory, `console` blocks are
//! run as one script and their output compared, `toml` blocks are validated
//! (a fragment is completed with a fat tree and a flow), `python`
//! blocks are run by python/tests/test_docs.py. A block preceded by
//! `<!-- docs: not run, REASON -->` is skipped; one preceded by
//! `<!-- docs: file NAME -->` is also written as NAME for the others to use.
//! Blocks without a language are output, formulas or diagrams, and must not
//! look like commands.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

struct Block {
    file: String,
    line: usize,
    lang: String,
    text: String,
    /// The `<!-- docs: ... -->` directive on the line before the fence.
    directive: Option<String>,
}

fn blocks(path: &Path) -> Vec<Block> {
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let file = path.strip_prefix(repo()).unwrap_or(path).display().to_string();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].trim_start();
        if let Some(lang) = l.strip_prefix("```") {
            let start = i;
            i += 1;
            while i < lines.len() && lines[i].trim() != "```" {
                i += 1;
            }
            let directive = (start > 0)
                .then(|| lines[start - 1].trim())
                .and_then(|p| p.strip_prefix("<!-- docs:"))
                .and_then(|p| p.strip_suffix("-->"))
                .map(|d| d.trim().to_string());
            out.push(Block { file: file.clone(), line: start + 1, lang: lang.trim().to_string(), text: lines[start + 1..i].join("\n") + "\n", directive });
        }
        i += 1;
    }
    out
}

fn docs() -> Vec<PathBuf> {
    let mut v = vec![repo().join("README.md")];
    for dir in ["docs", "docs/cc", "docs/decisions"] {
        let mut d: Vec<PathBuf> =
            std::fs::read_dir(repo().join(dir)).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "md")).collect();
        d.sort();
        v.extend(d);
    }
    v
}

/// A scratch directory that looks like the repository root to the docs'
/// commands: `scenarios/` and `tools/`, `./target/release/csigsim` and
/// `csigsim` on the PATH are the repository's and the built binary.
fn workdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("csigsim-docs-{}-{}", std::process::id(), name.replace('/', "_")));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("target/release")).unwrap();
    std::fs::create_dir_all(d.join("bin")).unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_csigsim"));
    std::os::unix::fs::symlink(bin, d.join("target/release/csigsim")).unwrap();
    std::os::unix::fs::symlink(bin, d.join("bin/csigsim")).unwrap();
    for sub in ["scenarios", "tools"] {
        std::os::unix::fs::symlink(repo().join(sub).canonicalize().unwrap(), d.join(sub)).unwrap();
    }
    d
}

fn shell(dir: &Path, script: &str) -> std::process::Output {
    let path = format!("{}:{}", dir.join("bin").display(), std::env::var("PATH").unwrap_or_default());
    Command::new("sh").arg("-c").arg(script).current_dir(dir).env("PATH", path).output().unwrap()
}

/// The commands of an `sh` block: continuation lines joined, comments and
/// blank lines dropped.
fn commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for l in text.lines() {
        let l = l.trim();
        if let Some(part) = l.strip_suffix('\\') {
            cur.push_str(part);
            continue;
        }
        cur.push_str(l);
        let cmd = cur.split(" #").next().unwrap().trim().to_string();
        if !cmd.is_empty() && !cmd.starts_with('#') {
            out.push(cmd);
        }
        cur.clear();
    }
    out
}

/// A TOML block as a scenario: a fragment gets a name, a fat tree (k = 4:
/// hosts h0 .. h15) and a flow when it has none.
fn as_scenario(text: &str) -> String {
    let has = |table: &str| text.lines().any(|l| l.trim_start().starts_with(table));
    let mut s = String::new();
    if !text.lines().any(|l| l.starts_with("name")) {
        s.push_str("name = \"docs\"\n");
    }
    s.push_str(text);
    if !has("[topology]") {
        s.push_str("\n[topology]\nkind = \"fat_tree\"\nk = 4\n");
    }
    if !has("[[flow]]") && !has("[[workload]]") {
        s.push_str("\n[[flow]]\nsrc = 0\ndst = 1\nsize = \"1MB\"\n");
    }
    s
}

const COMMAND_STARTS: [&str; 9] = ["csigsim ", "$ ", "./", "make ", "cargo ", "python ", "python3 ", "wireshark ", "tshark "];

#[test]
fn every_documented_block_runs_as_written() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for doc in docs() {
        let bs = blocks(&doc);
        let dir = workdir(&doc.strip_prefix(repo()).unwrap().display().to_string());
        for b in bs.iter().filter(|b| b.directive.as_deref().is_some_and(|d| d.starts_with("file "))) {
            let name = b.directive.as_deref().unwrap()["file ".len()..].trim();
            std::fs::write(dir.join(name), &b.text).unwrap();
        }
        for b in &bs {
            let at = format!("{}:{}", b.file, b.line);
            if let Some(d) = &b.directive {
                if let Some(reason) = d.strip_prefix("not run") {
                    if reason.trim_start_matches(',').trim().is_empty() {
                        failures.push(format!("{at}: `not run` needs a reason"));
                    }
                    continue;
                }
                if !d.starts_with("file ") {
                    failures.push(format!("{at}: unknown directive `{d}`"));
                    continue;
                }
            }
            match b.lang.as_str() {
                "sh" => {
                    for c in commands(&b.text) {
                        if !(c.starts_with("csigsim ") || c.starts_with("./target/release/csigsim ")) {
                            failures.push(format!("{at}: `{c}` is not a csigsim command: mark the block `not run`"));
                            continue;
                        }
                        let o = shell(&dir, &c);
                        ran += 1;
                        if !o.status.success() {
                            failures.push(format!("{at}: `{c}` failed: {}", String::from_utf8_lossy(&o.stderr)));
                        }
                    }
                }
                "console" => {
                    let (mut script, mut expected) = (String::new(), String::new());
                    for l in b.text.lines() {
                        match l.strip_prefix("$ ") {
                            Some(c) => {
                                script.push_str(c);
                                script.push_str(" 2>&1\n");
                            }
                            None => {
                                expected.push_str(l);
                                expected.push('\n');
                            }
                        }
                    }
                    let o = shell(&dir, &script);
                    ran += 1;
                    let got = String::from_utf8_lossy(&o.stdout);
                    if got != expected {
                        failures.push(format!("{at}: the output differs:\n--- documented\n{expected}--- got\n{got}"));
                    }
                }
                "toml" => {
                    let path = dir.join(format!("block-{}.toml", b.line));
                    std::fs::write(&path, as_scenario(&b.text)).unwrap();
                    let o = shell(&dir, &format!("csigsim validate {}", path.file_name().unwrap().to_string_lossy()));
                    ran += 1;
                    if !o.status.success() {
                        failures.push(format!("{at}: the scenario does not validate: {}", String::from_utf8_lossy(&o.stderr)));
                    }
                }
                // Run by python/tests/test_docs.py; data files are written above.
                "python" => {}
                "csv" if b.directive.is_some() => {}
                "" | "text" => {
                    let first = b.text.lines().next().unwrap_or("").trim_start();
                    if COMMAND_STARTS.iter().any(|c| first.starts_with(c)) {
                        failures.push(format!("{at}: a command in a block without a language: tag it `sh` or `console`, or mark it `not run`"));
                    }
                }
                other => failures.push(format!("{at}: a `{other}` block is neither run nor marked `not run` or `file NAME`")),
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
    assert!(failures.is_empty(), "{} of the docs' blocks are wrong:\n{}", failures.len(), failures.join("\n"));
    assert!(ran >= 25, "ran only {ran} blocks");
}
