//! GOAL schedules: the text format LogGOPSim's `schedgen` writes and
//! ATLAHS uses for AI, HPC and storage traces. Each rank lists operations
//! (`send`, `recv`, `calc`), optionally labelled, and dependencies between
//! its labels (`a requires b`: `a` begins once `b` is complete; `a
//! irequires b`: once `b` has begun):
//!
//! ```text
//! num_ranks 2
//! rank 0 {
//!   l1: calc 1000
//!   l2: send 64b to 1 tag 7
//!   l2 requires l1
//! }
//! rank 1 {
//!   l1: recv 64b from 0 tag 7
//! }
//! ```
//!
//! The schedule becomes a [`Dag`]: a send is a flow from its rank's host
//! to its peer's, begun when the send is; a receive is complete once it
//! has begun (posted) and its message has arrived; a `calc` is a compute
//! delay on its rank's CPU `cpu` (one at a time per CPU). Sends and
//! receives are matched as MPI matches them: the n-th send from rank `a`
//! to rank `b` with tag `t` with the n-th receive of rank `b` from `a` with
//! tag `t`. What the format carries that csigsim does not model is refused
//! with the file and line, or has a documented default (docs/workloads.md).

use super::dag::{Dag, Op, Step, StepKind, Trace};
use super::{hosts_of, label, relative_to, size_error, Ctx, FlowSpec};
use crate::de::error::utf8;
use crate::de::InputError;
use crate::id::HostId;
use crate::net::topology::HostRef;
use crate::units::Time;
use serde::Deserialize;
use std::collections::HashMap;

/// When a send is complete, for what waits for it on its rank.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SendDone {
    /// Its last packet has left the NIC (the sender's buffer is free).
    #[default]
    Sent,
    /// Its message has arrived whole at the receiver.
    Delivered,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GoalConfig {
    /// The schedule, relative to the scenario file.
    pub file: String,
    /// The hosts the ranks run on, rank `r` on the `r`-th (default: all
    /// hosts in order).
    #[serde(default)]
    pub hosts: Option<Vec<HostRef>>,
    /// What one unit of a `calc` is (LogGOPSim's times are nanoseconds).
    #[serde(default = "default_time_unit")]
    pub time_unit: Time,
    #[serde(default)]
    pub send_done: SendDone,
    /// When the schedule starts: no flow begins earlier.
    #[serde(default)]
    pub start: Time,
    #[serde(default)]
    pub name: Option<String>,
    /// The training job the entry is ([`super::job`]).
    #[serde(default)]
    pub job: Option<String>,
    /// How the job's ranks are laid on hosts (default: `hosts`).
    #[serde(default)]
    pub placement: Option<super::job::Policy>,
    /// The job may run on hosts an earlier job holds.
    #[serde(default)]
    pub share_hosts: bool,
}

impl GoalConfig {
    pub(crate) fn job_keys(&self) -> super::job::Keys<'_> {
        super::job::Keys { job: self.job.as_deref(), placement: self.placement, share_hosts: self.share_hosts, list_key: "hosts", listed: self.hosts.is_some() }
    }
}

fn default_time_unit() -> Time {
    Time(crate::units::PS_PER_NS)
}

/// The graph of the schedule `c.file` names.
pub fn read(c: &GoalConfig, ctx: &Ctx) -> Result<Dag, InputError> {
    let path = relative_to(ctx.base_dir, &c.file);
    let fname = path.display().to_string();
    let bytes = std::fs::read(&path).map_err(|e| (ctx.err)("file", format!("cannot read {fname}: {e}")))?;
    let text = utf8(bytes, &fname)?;
    let schedule = parse(&text, &fname)?;
    let hosts = super::job::rank_hosts(ctx, &c.job_keys(), Some(schedule.ranks), || hosts_of(ctx.topo, &c.hosts, ctx.err))?;
    if schedule.ranks as usize > hosts.len() {
        let key = if c.hosts.is_some() { "hosts" } else { "file" };
        return Err((ctx.err)(key, format!("{fname} has {} ranks and there are {} hosts to run them on", schedule.ranks, hosts.len())));
    }
    build(&schedule, c, ctx, &hosts, &fname)
}

/// One operation of a rank, as written.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Written {
    Send { size: u64, peer: u32, tag: u32 },
    Recv { size: u64, peer: u32, tag: u32 },
    Calc { time: u64, cpu: u32 },
}

/// An operation, where it is written.
#[derive(Clone, Debug)]
struct Item {
    rank: u32,
    line: usize,
    op: Written,
    /// Its label, if written (ops.csv's `name`).
    label: Option<String>,
}

/// A dependency of one rank's operations: `op` waits for `on` to be
/// complete, or to have begun.
#[derive(Clone, Debug)]
struct Dependency {
    op: u32,
    on: u32,
    begun: bool,
}

#[derive(Debug, Default)]
struct Schedule {
    ranks: u32,
    items: Vec<Item>,
    deps: Vec<Dependency>,
}

fn parse(text: &str, file: &str) -> Result<Schedule, InputError> {
    let err = |line: usize, col: usize, m: String| InputError::new(file, None, Some((line, col)), m);
    let mut s = Schedule::default();
    let mut ranks: Option<u32> = None;
    let mut rank: Option<u32> = None;
    let mut seen = Vec::new();
    // Labels of the rank being read: its operations' indices.
    let mut labels: HashMap<String, u32> = HashMap::new();
    let mut in_comment = false;
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        // Comments: `//` to the end of the line, `/* .. */` across lines.
        let mut code = String::new();
        let mut rest = raw;
        loop {
            if in_comment {
                match rest.find("*/") {
                    Some(i) => {
                        rest = &rest[i + 2..];
                        in_comment = false;
                    }
                    None => break,
                }
            }
            let (a, b) = (rest.find("//"), rest.find("/*"));
            match (a, b) {
                (Some(i), Some(j)) if i < j => {
                    code.push_str(&rest[..i]);
                    break;
                }
                (Some(i), None) => {
                    code.push_str(&rest[..i]);
                    break;
                }
                (_, Some(j)) => {
                    code.push_str(&rest[..j]);
                    code.push(' ');
                    rest = &rest[j + 2..];
                    in_comment = true;
                }
                (None, None) => {
                    code.push_str(rest);
                    break;
                }
            }
        }
        let words: Vec<(usize, &str)> = words(&code);
        let Some(&(col, first)) = words.first() else { continue };
        let word = |i: usize| words.get(i).map(|w| w.1);
        let col_of = |i: usize| words.get(i).map_or(raw.len() + 1, |w| w.0);
        let number = |i: usize, what: &str| -> Result<u64, InputError> {
            let w = word(i).ok_or_else(|| err(line, col_of(i), format!("expected {what} at the end of the line")))?;
            if w == "-1" {
                return Err(err(line, col_of(i), format!("{what} -1 (any) is not modelled: csigsim matches receives to sends by source and tag")));
            }
            w.parse::<u64>().map_err(|_| err(line, col_of(i), format!("expected {what}, found \"{w}\"")))
        };
        match first {
            "num_ranks" => {
                let v = number(1, "the number of ranks")?;
                if v == 0 || v > u32::MAX as u64 || ranks.is_some() {
                    return Err(err(line, col, "num_ranks must be given once, above zero".into()));
                }
                ranks = Some(v as u32);
                trailing(&words, 2, line, &err)?;
            }
            "rank" => {
                if rank.is_some() {
                    return Err(err(line, col, "a rank begins inside another: a \"}\" is missing".into()));
                }
                let Some(total) = ranks else { return Err(err(line, col, "num_ranks must come before the first rank".into())) };
                let r = number(1, "a rank")?;
                if r >= total as u64 {
                    return Err(err(line, col_of(1), format!("rank {r} is not one of the {total} ranks (0 .. {})", total - 1)));
                }
                if seen.contains(&(r as u32)) {
                    return Err(err(line, col_of(1), format!("rank {r} is listed twice")));
                }
                if word(2) != Some("{") {
                    return Err(err(line, col_of(2), "expected \"{\" after the rank".into()));
                }
                trailing(&words, 3, line, &err)?;
                seen.push(r as u32);
                rank = Some(r as u32);
                labels.clear();
            }
            "}" => {
                if rank.take().is_none() {
                    return Err(err(line, col, "\"}\" closes no rank".into()));
                }
                trailing(&words, 1, line, &err)?;
            }
            _ => {
                let Some(r) = rank else { return Err(err(line, col, format!("\"{first}\" outside a rank"))) };
                let total = ranks.expect("inside a rank");
                // `a requires b`, `a irequires b`, or `[label:] op ...`.
                if matches!(word(1), Some("requires") | Some("irequires")) {
                    let on = word(2).ok_or_else(|| err(line, col_of(2), "expected a label".into()))?;
                    let find = |l: &str, i: usize| {
                        labels.get(l).copied().ok_or_else(|| err(line, col_of(i), format!("label {l} is not defined (before this line) in rank {r}")))
                    };
                    let dep = Dependency { op: find(first, 0)?, on: find(on, 2)?, begun: word(1) == Some("irequires") };
                    trailing(&words, 3, line, &err)?;
                    s.deps.push(dep);
                    continue;
                }
                let (label, at) = match first.strip_suffix(':') {
                    Some(l) if !l.is_empty() => (Some(l), 1),
                    Some(_) => return Err(err(line, col, "a \":\" without a label".into())),
                    _ if word(1) == Some(":") => (Some(first), 2),
                    _ => (None, 0),
                };
                let kind = word(at).ok_or_else(|| err(line, col_of(at), "expected send, recv or calc".into()))?;
                let peer = |i: usize, dir: &str| -> Result<u32, InputError> {
                    if word(i) != Some(dir) {
                        return Err(err(line, col_of(i), format!("expected \"{dir}\"")));
                    }
                    let p = number(i + 1, "a rank")?;
                    if p >= total as u64 {
                        return Err(err(line, col_of(i + 1), format!("rank {p} is not one of the {total} ranks")));
                    }
                    if p == r as u64 {
                        return Err(err(line, col_of(i + 1), format!("rank {r} sends to itself: a message within a rank is not on the network")));
                    }
                    Ok(p as u32)
                };
                // Options after the operation: `tag T`, `cpu C`, `nic N`.
                let options = |from: usize, allowed: &[&str]| -> Result<HashMap<&str, u64>, InputError> {
                    let mut o = HashMap::new();
                    let mut i = from;
                    while let Some(w) = word(i) {
                        if !allowed.contains(&w) || o.contains_key(w) {
                            return Err(err(line, col_of(i), format!("unexpected \"{w}\" (expected {})", allowed.join(", "))));
                        }
                        o.insert(w, number(i + 1, w)?);
                        i += 2;
                    }
                    Ok(o)
                };
                let op = match kind {
                    "send" | "recv" => {
                        let size = bytes(word(at + 1), line, col_of(at + 1), &err)?;
                        let p = peer(at + 2, if kind == "send" { "to" } else { "from" })?;
                        let o = options(at + 4, &["tag", "cpu", "nic"])?;
                        if o.get("nic").is_some_and(|&n| n > 0) {
                            return Err(err(line, col, "nic above 0 is not modelled: each rank runs on one host (NIC); give the ranks' NICs in hosts".into()));
                        }
                        let tag = o.get("tag").copied().unwrap_or(0);
                        let tag = u32::try_from(tag).map_err(|_| err(line, col, format!("tag {tag} is too large")))?;
                        if kind == "send" {
                            Written::Send { size, peer: p, tag }
                        } else {
                            Written::Recv { size, peer: p, tag }
                        }
                    }
                    "calc" => {
                        let time = number(at + 1, "a time")?;
                        let o = options(at + 2, &["cpu"])?;
                        let cpu = o.get("cpu").copied().unwrap_or(0);
                        let cpu = u32::try_from(cpu).map_err(|_| err(line, col, format!("cpu {cpu} is too large")))?;
                        Written::Calc { time, cpu }
                    }
                    other => return Err(err(line, col_of(at), format!("unknown operation \"{other}\" (expected send, recv or calc)"))),
                };
                let index = s.items.len() as u32;
                if let Some(l) = label {
                    if labels.insert(l.to_string(), index).is_some() {
                        return Err(err(line, col, format!("label {l} is defined twice in rank {r}")));
                    }
                }
                s.items.push(Item { rank: r, line, op, label: label.map(str::to_string) });
            }
        }
    }
    if let Some(r) = rank {
        return Err(err(text.lines().count().max(1), 1, format!("rank {r} is not closed: a \"}}\" is missing at the end of the file")));
    }
    s.ranks = ranks.ok_or_else(|| err(1, 1, "the schedule has no num_ranks".into()))?;
    Ok(s)
}

/// The words of a line's code, each with its column (1-based; the code
/// keeps the line's offsets up to its first comment). A label's `:` ends
/// a word (`l1:send` is `l1:` and `send`).
fn words(code: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, ch) in code.char_indices() {
        if ch == ':' {
            let s = start.take().unwrap_or(i);
            out.push((s + 1, &code[s..i + 1]));
        } else if ch.is_whitespace() {
            if let Some(s) = start.take() {
                out.push((s + 1, &code[s..i]));
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push((s + 1, &code[s..]));
    }
    out
}

/// A message size: digits and a `b` (`64b`), or digits and a separate `b`.
fn bytes(w: Option<&str>, line: usize, col: usize, err: &impl Fn(usize, usize, String) -> InputError) -> Result<u64, InputError> {
    let w = w.ok_or_else(|| err(line, col, "expected a size in bytes (e.g. 64b)".into()))?;
    let digits = w.strip_suffix('b').unwrap_or(w);
    digits.parse::<u64>().map_err(|_| err(line, col, format!("expected a size in bytes (e.g. 64b), found \"{w}\"")))
}

fn trailing(words: &[(usize, &str)], from: usize, line: usize, err: &impl Fn(usize, usize, String) -> InputError) -> Result<(), InputError> {
    match words.get(from) {
        Some(&(col, w)) => Err(err(line, col, format!("unexpected \"{w}\""))),
        None => Ok(()),
    }
}

/// The graph of a parsed schedule on `hosts`.
fn build(s: &Schedule, c: &GoalConfig, ctx: &Ctx, hosts: &[u32], file: &str) -> Result<Dag, InputError> {
    let err = |line: usize, m: String| InputError::new(file, None, Some((line, 1)), m);
    let name = label(&c.name.clone().or(c.job.clone()), "goal", ctx.idx);
    // Match sends and receives: per (source, destination, tag), in order.
    let mut sends: HashMap<(u32, u32, u32), std::collections::VecDeque<u32>> = HashMap::new();
    for (i, it) in s.items.iter().enumerate() {
        if let Written::Send { peer, tag, .. } = it.op {
            sends.entry((it.rank, peer, tag)).or_default().push_back(i as u32);
        }
    }
    // Per item: its flow (a send's, or the matched send's for a receive).
    let mut flow_of = vec![u32::MAX; s.items.len()];
    let mut specs = Vec::new();
    for (i, it) in s.items.iter().enumerate() {
        if let Written::Send { size, peer, .. } = it.op {
            if ctx.first + specs.len() as u64 >= ctx.max_flows {
                return Err(err(it.line, super::too_many_flows(ctx.max_flows)));
            }
            // A message of no bytes still crosses the network: one byte.
            let size = size.max(1);
            if let Some(m) = size_error(size, ctx.mtu) {
                return Err(err(it.line, m));
            }
            flow_of[i] = specs.len() as u32;
            specs.push(FlowSpec {
                src: HostId(hosts[it.rank as usize]),
                dst: HostId(hosts[peer as usize]),
                size,
                start: c.start,
                name: name.clone(),
                rate_cap: u64::MAX,
                channel: 0,
            });
        }
    }
    for (i, it) in s.items.iter().enumerate() {
        if let Written::Recv { size, peer, tag } = it.op {
            let Some(send) = sends.get_mut(&(peer, it.rank, tag)).and_then(|q| q.pop_front()) else {
                return Err(err(it.line, format!("rank {} receives from rank {peer} with tag {tag} more often than rank {peer} sends to it with that tag: this receive is never matched", it.rank)));
            };
            if let Written::Send { size: sent, .. } = s.items[send as usize].op {
                if sent > size {
                    return Err(err(it.line, format!("rank {} receives {size} bytes where rank {peer} sends {sent} (line {}): the message would be truncated", it.rank, s.items[send as usize].line)));
                }
            }
            flow_of[i] = flow_of[send as usize];
        }
    }
    if let Some(q) = sends.values().find(|q| !q.is_empty()) {
        let it = &s.items[q[0] as usize];
        let Written::Send { peer, tag, .. } = it.op else { unreachable!() };
        return Err(err(it.line, format!("rank {} sends to rank {peer} with tag {tag} and rank {peer} never receives it", it.rank)));
    }
    // Operations: per item, the one that begins it (its flow for a send)
    // and the one others wait for when they require it.
    let mut ops = Vec::new();
    let mut edges = Vec::new();
    let mut begins = vec![0u32; s.items.len()];
    let mut done = vec![0u32; s.items.len()];
    let mut streams: HashMap<(u32, u32), u32> = HashMap::new();
    // Per operation: the item it is written as (for errors).
    let mut op_item = Vec::new();
    for (i, it) in s.items.iter().enumerate() {
        let at = ops.len() as u32;
        match it.op {
            Written::Send { .. } => {
                ops.push(Op::Flow(flow_of[i]));
                begins[i] = at;
                done[i] = at;
                if c.send_done == SendDone::Sent {
                    ops.push(Op::Sent(flow_of[i]));
                    done[i] = at + 1;
                }
            }
            // A receive is posted (a join of what it requires) and complete
            // once posted and its message has arrived.
            Written::Recv { .. } => {
                ops.push(Op::Join);
                ops.push(Op::Join);
                begins[i] = at;
                done[i] = at + 1;
                edges.push((at + 1, at));
            }
            Written::Calc { time, cpu } => {
                let next = streams.len() as u32;
                let stream = *streams.entry((it.rank, cpu)).or_insert(next);
                let duration = Time(time.saturating_mul(c.time_unit.0));
                ops.push(Op::Compute { stream, duration });
                begins[i] = at;
                done[i] = at;
            }
        }
        op_item.resize(ops.len(), i as u32);
    }
    // A receive's completion waits for its message.
    let mut send_of_flow = vec![0u32; specs.len()];
    for (i, it) in s.items.iter().enumerate() {
        if let Written::Send { .. } = it.op {
            send_of_flow[flow_of[i] as usize] = i as u32;
        }
    }
    for (i, it) in s.items.iter().enumerate() {
        if let Written::Recv { .. } = it.op {
            edges.push((done[i], begins[send_of_flow[flow_of[i] as usize] as usize]));
        }
    }
    // Dependencies: a `requires` waits for completion; an `irequires` for
    // the begin, which is a join before the operation waiting for what the
    // operation waits for.
    let mut begun_join: HashMap<u32, u32> = HashMap::new();
    for d in s.deps.iter().filter(|d| d.begun) {
        begun_join.entry(d.on).or_insert_with(|| {
            ops.push(Op::Join);
            op_item.push(d.on);
            let j = ops.len() as u32 - 1;
            edges.push((begins[d.on as usize], j));
            j
        });
    }
    for d in &s.deps {
        let waiter = begins[d.op as usize];
        let on = if d.begun { begun_join[&d.on] } else { done[d.on as usize] };
        // What the operation waits for, its begin join waits for too.
        edges.push((waiter, on));
        if let Some(&j) = begun_join.get(&d.op) {
            edges.push((j, on));
        }
    }
    // The begin join of an operation takes its place as what it waits
    // for; the operation itself waits only for the join.
    if !begun_join.is_empty() {
        let join_of: HashMap<u32, u32> = begun_join.iter().map(|(&item, &j)| (begins[item as usize], j)).collect();
        edges.retain(|&(op, on)| join_of.get(&op).is_none_or(|&j| on == j));
    }
    let mut dag = Dag::new(specs, ops, edges).map_err(|e| {
        let line = op_item.get(e.op as usize).map_or(1, |&i| s.items[i as usize].line);
        err(line, format!("the schedule's dependencies {}", e.message))
    })?;
    // Each operation runs at its item's rank's host (a flow at its sender's).
    dag.set_hosts(op_item.iter().map(|&i| hosts[s.items[i as usize].rank as usize]).collect());
    // ops.csv's rows: rank by rank, each rank's operations as written.
    // Labels as step names, each once; an unlabelled operation's is "".
    let mut trace = Trace { name, steps: Vec::with_capacity(s.items.len()), names: vec![String::new()], hosts: hosts[..s.ranks as usize].to_vec() };
    let mut index = HashMap::from([(String::new(), 0)]);
    for (i, it) in s.items.iter().enumerate() {
        let kind = match it.op {
            Written::Send { .. } => StepKind::Send,
            Written::Recv { .. } => StepKind::Recv,
            Written::Calc { .. } => StepKind::Compute,
        };
        let name = trace.name_code(&mut index, it.label.as_deref().unwrap_or(""));
        trace.steps.push(Step { rank: it.rank, id: it.line as u64, name, kind, iteration: 0, begin: begins[i], done: done[i] });
    }
    trace.steps.sort_by_key(|st| st.rank);
    dag.trace = trace;
    Ok(dag)
}

/// A schedule's flows as a list: graphs do not combine with
/// `[transport.connection]`, which rewrites listed flows only.
pub fn expand(_c: &GoalConfig, ctx: &Ctx, _flows: &mut Vec<FlowSpec>) -> Result<(), InputError> {
    Err((ctx.err)("kind", "a goal schedule does not combine with [transport.connection] (its operations wait for flows, which connections would split into queue pairs)".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_err(text: &str) -> String {
        let e = parse(text, "s.goal").unwrap_err();
        format!("{}:{}: {}", e.line_col.unwrap().0, e.line_col.unwrap().1, e.msg)
    }

    /// Labels with and without a space before the colon, comments of
    /// both kinds, options in any order, dependencies of both kinds.
    #[test]
    fn schedules_parse_as_schedgen_writes_them() {
        let text = "// made by hand\nnum_ranks 2\nrank 0 {\n l1: calc 100 cpu 1\n l2:send 8b to 1 tag 3 cpu 0\n /* a comment\n over lines */ l3 : recv 8b from 1\n l2 requires l1\n l3 irequires l2\n}\nrank 1 {\n recv 8b from 0 tag 3\n send 8b to 0 // the reply\n}\n";
        let s = parse(text, "s.goal").unwrap();
        assert_eq!(s.ranks, 2);
        let ops: Vec<Written> = s.items.iter().map(|i| i.op.clone()).collect();
        assert_eq!(
            ops,
            vec![
                Written::Calc { time: 100, cpu: 1 },
                Written::Send { size: 8, peer: 1, tag: 3 },
                Written::Recv { size: 8, peer: 1, tag: 0 },
                Written::Recv { size: 8, peer: 0, tag: 3 },
                Written::Send { size: 8, peer: 0, tag: 0 },
            ]
        );
        assert_eq!(s.items.iter().map(|i| i.line).collect::<Vec<_>>(), [4, 5, 7, 12, 13]);
        assert_eq!(s.deps.len(), 2);
        assert!((s.deps[0].op, s.deps[0].on, s.deps[0].begun) == (1, 0, false));
        assert!((s.deps[1].op, s.deps[1].on, s.deps[1].begun) == (2, 1, true));
    }

    #[test]
    fn errors_name_the_line_and_column() {
        assert_eq!(parse_err("rank 0 {\n}\n"), "1:1: num_ranks must come before the first rank");
        assert_eq!(parse_err("num_ranks 2\nrank 2 {\n}\n"), "2:6: rank 2 is not one of the 2 ranks (0 .. 1)");
        assert_eq!(parse_err("num_ranks 2\nrank 0 {\n send 8b to 1 tag -1\n}\n"), "3:19: tag -1 (any) is not modelled: csigsim matches receives to sends by source and tag");
        assert_eq!(parse_err("num_ranks 2\nrank 0 {\n l1: put 8b to 1\n}\n"), "3:6: unknown operation \"put\" (expected send, recv or calc)");
        assert_eq!(parse_err("num_ranks 2\nrank 0 {\n l2 requires l1\n}\n"), "3:2: label l2 is not defined (before this line) in rank 0");
        assert_eq!(parse_err("num_ranks 2\nrank 0 {\n send 8 to 0\n}\n"), "3:12: rank 0 sends to itself: a message within a rank is not on the network");
        assert_eq!(parse_err("num_ranks 2\nrank 0 {\n calc 5\n"), "3:1: rank 0 is not closed: a \"}\" is missing at the end of the file");
        assert_eq!(parse_err("num_ranks 2\nrank 0 {\n send 8b to 1 nic 1\n}\n"), "3:2: nic above 0 is not modelled: each rank runs on one host (NIC); give the ranks' NICs in hosts");
    }
}
