//! htsim's connection matrix (`.cm`), as `ConnectionMatrix::load` of
//! htsim's datacenter code reads it: a header (`Nodes N`, `Connections C`,
//! `Triggers T`, `Failures F`), then one line per connection
//! (`SRC->DST` followed by `start US`, `size B`, `id N`, `trigger T`,
//! `send_done_trigger T`, `recv_done_trigger T`, `prio P`, `msg [M]`), per
//! trigger (`trigger id T oneshot|multishot|barrier [count N]`) and per
//! link failure (`failure ...`).

use super::{err_at, lines, quote, read, uint, Token};
use csigsim::units::{parse_rate, parse_time, Time};
use csigsim::InputError;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;

#[derive(Clone, Copy, PartialEq, clap::ValueEnum)]
pub enum Topo {
    /// htsim's default 3-tier fat tree.
    #[value(name = "fat_tree")]
    FatTree,
    /// htsim's 2-tier fat tree (-tiers 2), a leaf-spine.
    #[value(name = "leaf_spine")]
    LeafSpine,
}

#[derive(Clone, Copy, PartialEq, clap::ValueEnum)]
pub enum Routing {
    /// A new path per packet: htsim's default load balancing.
    Spray,
    /// One path per flow: htsim's -paths 1.
    Ecmp,
}

#[derive(clap::Args)]
pub struct Args {
    /// The connection matrix (htsim's .cm format).
    pub matrix: PathBuf,
    /// The fabric htsim builds for the matrix: fat_tree (its default) or
    /// leaf_spine (its -tiers 2).
    #[arg(long, value_enum, default_value = "fat_tree")]
    pub topology: Topo,
    /// Fat tree radix (default: the smallest even k whose full tree holds the matrix's nodes).
    #[arg(long)]
    pub k: Option<u32>,
    /// Leaf-spine leaves (default: htsim's 2-tier sizing, K leaves of K/2 hosts for K^2/2 nodes).
    #[arg(long)]
    pub leaves: Option<u32>,
    /// Leaf-spine spines (default: as many as hosts per leaf).
    #[arg(long)]
    pub spines: Option<u32>,
    /// Rate of every link (htsim's -linkspeed).
    #[arg(long, default_value = "100Gbps")]
    pub rate: String,
    /// Propagation delay of every link (htsim's -hop_latency).
    #[arg(long, default_value = "1us")]
    pub delay: String,
    /// spray (htsim's default load balancing) or ecmp (htsim's -paths 1).
    #[arg(long, value_enum, default_value = "spray")]
    pub routing: Routing,
    #[command(flatten)]
    pub output: super::Output,
}

/// The fabric, enough to count a path's links.
enum Fabric {
    FatTree { k: u64, hosts: u64 },
    LeafSpine { leaves: u64, spines: u64, per_leaf: u64 },
}

impl Fabric {
    fn links(&self, a: u64, b: u64) -> u64 {
        match *self {
            Fabric::FatTree { k, .. } => {
                let (tor, pod) = (k / 2, k * k / 4);
                if a / tor == b / tor {
                    2
                } else if a / pod == b / pod {
                    4
                } else {
                    6
                }
            }
            Fabric::LeafSpine { per_leaf, .. } => {
                if a / per_leaf == b / per_leaf {
                    2
                } else {
                    4
                }
            }
        }
    }
}

fn fabric(a: &Args, nodes: u64) -> Result<Fabric, InputError> {
    let bad = |opt: &str, m: String| InputError::new(opt, None, None, m);
    match a.topology {
        Topo::FatTree => {
            if a.leaves.is_some() || a.spines.is_some() {
                return Err(bad("--leaves", "--leaves and --spines apply to --topology leaf_spine".into()));
            }
            let k = match a.k {
                Some(k) => {
                    let k = k as u64;
                    if k < 2 || k % 2 == 1 {
                        return Err(bad("--k", format!("k must be an even number of at least 2, got {k}")));
                    }
                    if k * k * k / 4 < nodes {
                        return Err(bad("--k", format!("a k = {k} fat tree holds {} hosts, fewer than the matrix's {nodes} nodes", k * k * k / 4)));
                    }
                    k
                }
                None => (1..).map(|i| 2 * i).find(|k: &u64| k * k * k / 4 >= nodes).unwrap_or(2),
            };
            Ok(Fabric::FatTree { k, hosts: nodes })
        }
        Topo::LeafSpine => {
            if a.k.is_some() {
                return Err(bad("--k", "--k applies to --topology fat_tree".into()));
            }
            let leaves = match a.leaves {
                Some(0) => return Err(bad("--leaves", "at least one leaf".into())),
                Some(l) => l as u64,
                None => match (2..=4096u64).step_by(2).find(|k| k * k / 2 >= nodes) {
                    Some(k) if k * k / 2 == nodes => k,
                    _ => {
                        return Err(bad(
                            "--leaves",
                            format!("{nodes} nodes is not K^2/2 for an even K (htsim's 2-tier fat tree): give --leaves"),
                        ))
                    }
                },
            };
            if !nodes.is_multiple_of(leaves) {
                return Err(bad("--leaves", format!("{leaves} leaves do not divide the matrix's {nodes} nodes evenly")));
            }
            let per_leaf = nodes / leaves;
            let spines = match a.spines {
                Some(0) => return Err(bad("--spines", "at least one spine".into())),
                Some(s) => s as u64,
                None => per_leaf,
            };
            Ok(Fabric::LeafSpine { leaves, spines, per_leaf })
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    OneShot,
    MultiShot,
    Barrier,
}

struct Trigger<'a> {
    kind: Kind,
    count: u64,
    at: Token<'a>,
}

struct Conn<'a> {
    src: u64,
    dst: u64,
    size: u64,
    start_us: Option<u64>,
    id: Option<u64>,
    trigger: Option<(u64, Token<'a>)>,
    send_done: Option<(u64, Token<'a>)>,
    recv_done: Option<(u64, Token<'a>)>,
    at: Token<'a>,
}

pub fn import(a: &Args, stem: &str) -> Result<Vec<(String, String)>, InputError> {
    let rate = parse_rate(&a.rate).map_err(|m| InputError::new("--rate", None, None, m))?;
    let delay = parse_time(&a.delay).map_err(|m| InputError::new("--delay", None, None, m))?;
    let (file, text) = read(&a.matrix)?;
    let file = file.as_str();
    let all = lines(&text);

    // Header: up to the first connection, trigger or failure line.
    let mut header: HashMap<&str, (u64, Token)> = HashMap::new();
    let mut body = 0;
    for l in &all {
        let t0 = &l[0];
        if t0.text.starts_with('#') {
            body += 1;
            continue;
        }
        if t0.text.contains("->") || t0.text == "trigger" || t0.text == "failure" {
            break;
        }
        if !["Nodes", "Connections", "Triggers", "Failures"].contains(&t0.text) {
            return Err(err_at(file, t0, format!("\"{}\": expected a header line (Nodes, Connections, Triggers, Failures) or a connection SRC->DST", t0.text)));
        }
        if l.len() != 2 {
            return Err(err_at(file, t0, format!("expected `{} N`", t0.text)));
        }
        let n = uint(file, &l[1], t0.text)?;
        if header.insert(t0.text, (n, t0.clone())).is_some() {
            return Err(err_at(file, t0, format!("{} is given twice", t0.text)));
        }
        body += 1;
    }
    let (nodes, nodes_at) = header.get("Nodes").cloned().ok_or_else(|| InputError::new(file, None, Some((1, 1)), "no `Nodes N` line: the header gives the number of nodes"))?;
    if !(2..=1_000_000).contains(&nodes) {
        return Err(err_at(file, &nodes_at, format!("{nodes} nodes: expected 2 .. 1000000")));
    }
    let fabric = fabric(a, nodes)?;

    // Body.
    let mut conns: Vec<Conn> = Vec::new();
    let mut triggers: HashMap<u64, Trigger> = HashMap::new();
    let mut ids: HashMap<u64, usize> = HashMap::new();
    for l in &all[body..] {
        let t0 = &l[0];
        if t0.text.starts_with('#') {
            continue;
        }
        if let Some((s, d)) = t0.text.split_once("->") {
            let end = |v: &str, which: &str| -> Result<u64, InputError> {
                match v.parse::<u64>() {
                    Ok(n) if v.bytes().all(|b| b.is_ascii_digit()) && n < nodes => Ok(n),
                    Ok(n) if v.bytes().all(|b| b.is_ascii_digit()) => Err(err_at(file, t0, format!("{which} {n} is not a node: nodes are 0 .. {}", nodes - 1))),
                    _ => Err(err_at(file, t0, format!("\"{}\": expected SRC->DST with node numbers", t0.text))),
                }
            };
            let (src, dst) = (end(s, "source")?, end(d, "destination")?);
            if src == dst {
                return Err(err_at(file, t0, format!("connection from node {src} to itself")));
            }
            let mut c = Conn { src, dst, size: 0, start_us: None, id: None, trigger: None, send_done: None, recv_done: None, at: t0.clone() };
            let mut i = 1;
            while i < l.len() {
                let key = &l[i];
                let val = l.get(i + 1);
                let need = || val.ok_or_else(|| err_at(file, key, format!("`{}` needs a value", key.text)));
                match key.text {
                    "start" => {
                        let v = need()?;
                        // htsim reads a float and starts the flow at its whole microseconds.
                        match v.text.parse::<f64>() {
                            Ok(x) if (0.0..1e11).contains(&x) => c.start_us = Some(x.trunc() as u64),
                            _ => return Err(err_at(file, v, format!("start: \"{}\" is not a time in microseconds", v.text))),
                        }
                    }
                    "size" => {
                        let v = need()?;
                        let n = uint(file, v, "size")?;
                        if n == 0 || n > i32::MAX as u64 {
                            return Err(err_at(file, v, format!("size {n}: expected 1 .. {} bytes (htsim's endless flow, size 0, is not modelled)", i32::MAX)));
                        }
                        c.size = n;
                    }
                    "id" => {
                        let v = need()?;
                        let n = uint(file, v, "id")?;
                        if n == 0 {
                            return Err(err_at(file, v, "flow id 0 is not allowed (as in htsim)"));
                        }
                        if let Some(&other) = ids.get(&n) {
                            return Err(err_at(file, v, format!("flow id {n} is also the id of the connection on line {}", conns[other].at.line)));
                        }
                        ids.insert(n, conns.len());
                        c.id = Some(n);
                    }
                    "trigger" | "send_done_trigger" | "recv_done_trigger" => {
                        let v = need()?;
                        let n = uint(file, v, key.text)?;
                        let slot = match key.text {
                            "trigger" => &mut c.trigger,
                            "send_done_trigger" => &mut c.send_done,
                            _ => &mut c.recv_done,
                        };
                        // 0 is htsim's "none" for the end triggers.
                        *slot = (n != 0).then(|| (n, v.clone()));
                        if key.text == "trigger" && n == 0 {
                            return Err(err_at(file, v, "trigger id 0 is not allowed (as in htsim)"));
                        }
                    }
                    "prio" => {
                        // htsim's UEC model does not use it (its set_priority call is commented out).
                        let v = need()?;
                        if v.text.parse::<i64>().is_err() {
                            return Err(err_at(file, v, format!("prio: \"{}\" is not a number", v.text)));
                        }
                    }
                    "msg" => {
                        return Err(err_at(
                            file,
                            key,
                            "`msg`: messages on a reused connection (htsim's -conn_reuse) are not modelled: give each message its own connection line",
                        ))
                    }
                    _ => return Err(err_at(file, key, format!("unknown connection attribute \"{}\"", key.text))),
                }
                i += 2;
            }
            if c.size == 0 {
                return Err(err_at(file, t0, "the connection has no `size`"));
            }
            match (&c.start_us, &c.trigger) {
                (None, None) => return Err(err_at(file, t0, "no start method: give `start US` or `trigger T`")),
                (Some(_), Some((_, t))) => return Err(err_at(file, t, "both a start time and a trigger")),
                _ => {}
            }
            conns.push(c);
        } else if t0.text == "trigger" {
            let (mut id, mut kind, mut count) = (None, None, None);
            let mut i = 1;
            while i < l.len() {
                let key = &l[i];
                match key.text {
                    "id" | "count" => {
                        let v = l.get(i + 1).ok_or_else(|| err_at(file, key, format!("`{}` needs a value", key.text)))?;
                        let n = uint(file, v, key.text)?;
                        if key.text == "id" {
                            if n == 0 {
                                return Err(err_at(file, v, "trigger id 0 is not allowed (as in htsim)"));
                            }
                            id = Some(n);
                        } else {
                            count = Some(n);
                        }
                        i += 2;
                        continue;
                    }
                    "oneshot" | "multishot" | "barrier" => {
                        if kind.is_some() {
                            return Err(err_at(file, key, "a trigger has one type"));
                        }
                        kind = Some(match key.text {
                            "oneshot" => Kind::OneShot,
                            "multishot" => Kind::MultiShot,
                            _ => Kind::Barrier,
                        });
                    }
                    _ => return Err(err_at(file, key, format!("unknown trigger attribute \"{}\"", key.text))),
                }
                i += 1;
            }
            let id = id.ok_or_else(|| err_at(file, t0, "trigger with no id"))?;
            let kind = kind.ok_or_else(|| err_at(file, t0, "trigger with no type: oneshot, multishot or barrier"))?;
            if let Some(old) = triggers.get(&id) {
                return Err(err_at(file, t0, format!("trigger {id} is also defined on line {}", old.at.line)));
            }
            triggers.insert(id, Trigger { kind, count: count.unwrap_or(0), at: t0.clone() });
        } else if t0.text == "failure" {
            return Err(err_at(
                file,
                t0,
                "link failures are not imported (htsim names a link by switch and port index): give them as [[topology.failure]] entries by node name",
            ));
        } else {
            return Err(err_at(file, t0, format!("\"{}\": expected a connection SRC->DST, `trigger` or `failure`", t0.text)));
        }
    }
    let declared = |k: &str| header.get(k).map(|(n, t)| (*n, Some(t.clone()))).unwrap_or((0, None));
    for (k, got) in [("Connections", conns.len()), ("Triggers", triggers.len()), ("Failures", 0)] {
        let (n, at) = declared(k);
        if n != got as u64 {
            let at = at.map(|t| (t.line, t.col)).or(Some((nodes_at.line, nodes_at.col)));
            return Err(InputError::new(file, None, at, format!("{k} {n} declared, {got} in the file")));
        }
    }

    // Triggers to `after`: a triggered connection starts when the
    // connections that activate its trigger are done.
    let ack_ps = |c: &Conn| fabric.links(c.dst, c.src) * (delay.0 + (64 * 8 * 1_000_000_000_000u64).div_ceil(rate.0));
    let mut after: Vec<Option<(Vec<usize>, u64)>> = vec![None; conns.len()];
    let mut activators: HashMap<u64, Vec<(usize, bool)>> = HashMap::new();
    for (i, c) in conns.iter().enumerate() {
        for (t, send) in [(&c.send_done, true), (&c.recv_done, false)] {
            if let Some((id, tok)) = t {
                if !triggers.contains_key(id) {
                    return Err(err_at(file, tok, format!("trigger {id} is not defined by a `trigger id {id} ...` line")));
                }
                activators.entry(*id).or_default().push((i, send));
            }
        }
    }
    let mut targets: HashMap<u64, usize> = HashMap::new();
    for c in &conns {
        if let Some((id, _)) = &c.trigger {
            *targets.entry(*id).or_default() += 1;
        }
    }
    for (i, c) in conns.iter().enumerate() {
        let Some((id, tok)) = &c.trigger else { continue };
        let t = triggers.get(id).ok_or_else(|| err_at(file, tok, format!("trigger {id} is not defined by a `trigger id {id} ...` line")))?;
        let acts = activators.get(id).map(Vec::as_slice).unwrap_or(&[]);
        let lines_of = || acts.iter().map(|&(j, _)| conns[j].at.line.to_string()).collect::<Vec<_>>().join(", ");
        match t.kind {
            _ if acts.is_empty() => {
                return Err(err_at(file, tok, format!("no connection activates trigger {id} (send_done_trigger or recv_done_trigger): this connection would never start")))
            }
            Kind::OneShot if acts.len() > 1 => {
                return Err(err_at(
                    file,
                    &t.at,
                    format!("oneshot trigger {id} is activated by {} connections (lines {}); htsim stops on its second activation: use a barrier", acts.len(), lines_of()),
                ))
            }
            Kind::MultiShot if acts.len() > 1 || targets[id] > 1 => {
                return Err(err_at(
                    file,
                    &t.at,
                    format!("multishot trigger {id}: which connection each activation starts depends on the order the activators finish; only one activator and one target are imported"),
                ))
            }
            Kind::Barrier if t.count != acts.len() as u64 => {
                return Err(err_at(
                    file,
                    &t.at,
                    format!("barrier trigger {id} fires after {} activations, but {} connections activate it (lines {}): only a barrier on all of its activators is imported", t.count, acts.len(), lines_of()),
                ))
            }
            _ => {}
        }
        let mut deps: Vec<usize> = acts.iter().map(|&(j, _)| j).collect();
        deps.dedup();
        // csigsim's `after` waits for the arrival at the receiver; htsim's
        // send_done fires at the sender's last ACK, one unloaded ACK trip later.
        let gap = acts.iter().filter(|&&(_, send)| send).map(|&(j, _)| ack_ps(&conns[j])).max().unwrap_or(0);
        after[i] = Some((deps, gap));
    }
    // A cycle would never start: name one of its connections.
    let mut indeg: Vec<usize> = after.iter().map(|a| a.as_ref().map_or(0, |(d, _)| d.len())).collect();
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); conns.len()];
    for (i, a) in after.iter().enumerate() {
        for &d in a.iter().flat_map(|(d, _)| d) {
            users[d].push(i);
        }
    }
    let mut ready: Vec<usize> = (0..conns.len()).filter(|&i| indeg[i] == 0).collect();
    while let Some(i) = ready.pop() {
        for &u in &users[i] {
            indeg[u] -= 1;
            if indeg[u] == 0 {
                ready.push(u);
            }
        }
    }
    if let Some(i) = (0..conns.len()).find(|&i| indeg[i] > 0) {
        return Err(err_at(file, &conns[i].at, "the connection waits on itself through its triggers: it would never start"));
    }

    // The files.
    let host = |n: u64| format!("h{n}");
    let mname = a.matrix.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let mut toml = String::new();
    let _ = writeln!(toml, "# Imported by `csigsim import htsim` from {mname} (htsim's connection matrix format).");
    let _ = writeln!(toml, "# Start times are htsim's: the whole microseconds of the matrix's `start`.");
    let _ = writeln!(toml, "name = {}\nprofile = \"htsim-uec\"\n", quote(stem));
    if a.routing == Routing::Ecmp {
        toml.push_str("[switch]\nrouting = \"ecmp\"\n\n");
    }
    match fabric {
        Fabric::FatTree { k, hosts } => {
            let _ = writeln!(toml, "[topology]\nkind = \"fat_tree\"\nk = {k}");
            if hosts < k * k * k / 4 {
                let _ = writeln!(toml, "hosts = {hosts}");
            }
        }
        Fabric::LeafSpine { leaves, spines, per_leaf } => {
            let _ = writeln!(toml, "[topology]\nkind = \"leaf_spine\"\nleaves = {leaves}\nspines = {spines}\nhosts_per_leaf = {per_leaf}");
        }
    }
    let _ = writeln!(toml, "rate = \"{rate}\"\ndelay = \"{delay}\"");
    let named = conns.iter().any(|c| c.id.is_some());
    let label = |c: &Conn| c.id.map(|n| format!("id{n}")).unwrap_or_default();
    let mut files = Vec::new();
    if after.iter().all(Option::is_none) {
        let csv = format!("{stem}.csv");
        let _ = writeln!(toml, "\n[[workload]]\nkind = \"trace\"\nfile = {}", quote(&csv));
        let mut trace = format!("# the connections of {mname} (htsim format)\nsrc,dst,size,start{}\n", if named { ",name" } else { "" });
        for c in &conns {
            let _ = write!(trace, "{},{},{},{}", host(c.src), host(c.dst), c.size, Time(c.start_us.unwrap_or(0) * 1_000_000));
            if named {
                let _ = write!(trace, ",{}", label(c));
            }
            trace.push('\n');
        }
        files.push((format!("{stem}.toml"), toml));
        files.push((csv, trace));
    } else {
        // `after` names [[flow]] entries by position, so the connections are entries, in file order.
        for (c, a) in conns.iter().zip(&after) {
            let _ = write!(toml, "\n[[flow]]\nsrc = \"{}\"\ndst = \"{}\"\nsize = {}\n", host(c.src), host(c.dst), c.size);
            if let Some(us) = c.start_us {
                let _ = writeln!(toml, "start = \"{}\"", Time(us * 1_000_000));
            }
            if c.id.is_some() {
                let _ = writeln!(toml, "name = \"{}\"", label(c));
            }
            if let Some((deps, gap)) = a {
                let _ = writeln!(toml, "after = [{}]", deps.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", "));
                if *gap > 0 {
                    let _ = writeln!(toml, "gap = \"{}\"", Time(*gap));
                }
            }
        }
        files.push((format!("{stem}.toml"), toml));
    }
    Ok(files)
}
