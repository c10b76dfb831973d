//! Chakra execution traces (MLCommons): one protobuf file per rank, as
//! ASTRA-sim reads them, and a communicator-group file. Each rank's nodes
//! are operations with control and data dependencies on the rank's other
//! nodes:
//!
//! - `COMP_NODE`: `duration_micros` of compute on one of the rank's
//!   streams (a GPU stream, or its CPU for a node marked `is_cpu_op`);
//! - `COMM_SEND_NODE` / `COMM_RECV_NODE`: a message to (from) another rank,
//!   matched as MPI matches them (the n-th send from `a` to `b` with tag `t`
//!   is the n-th receive of `b` from `a` with tag `t`);
//! - `COMM_COLL_NODE`: a collective on a communicator group: the k-th
//!   collective of a group in each member's file is one operation, run as
//!   the `collective` workload runs it (its flows and the dependencies
//!   between them), each rank's part begun when the rank reaches its node;
//! - `METADATA_NODE`: nothing to do (complete when its dependencies are).
//!
//! The trace becomes a [`Dag`]. What the format carries that csigsim does
//! not model is refused naming the rank's file and the node, or has a
//! documented default (docs/workloads.md).

pub mod et;

use super::collective::{self, Algorithm, CollectiveConfig, CollectiveOp};
use super::dag::{Dag, DagFlows, Op, Step, StepKind, Trace};
use super::goal::SendDone;
use super::{label, relative_to, size_error, Ctx, Extras, FlowSpec};
use crate::de::InputError;
use crate::id::HostId;
use crate::net::topology::HostRef;
use crate::units::{Size, Time, PS_PER_US};
use et::{node_type, Node, Value};
use serde::Deserialize;
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};

/// The hosts the ranks run on: a list of host references, or a range of
/// host indices `"a..b"` (`b` excluded).
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Ranks {
    List(Vec<HostRef>),
    Range(String),
}

/// What a node marked `is_cpu_op` does.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CpuOps {
    /// Its duration on the rank's CPU, a stream of its own beside the GPU's.
    #[default]
    Compute,
    /// No time: complete when its dependencies are (ASTRA-sim skips them).
    Skip,
}

/// What a message between two NICs of one server is.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum IntraServer {
    /// A flow over the fabric like any other (NIC to switch and back).
    #[default]
    Network,
    /// No time: the server's own interconnect (NVLink, PCIe) is not
    /// modelled, and taken as infinitely fast.
    Instant,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChakraConfig {
    /// A directory of `<prefix>.<rank>.et` files, or the prefix itself
    /// (`trace` for `trace.0.et`, `trace.1.et`, ...), relative to the
    /// scenario file.
    pub path: String,
    /// The communicator groups (default: `comm_group.json` beside the
    /// traces, when there is one).
    #[serde(default)]
    pub comm_group: Option<String>,
    /// The hosts of the ranks, rank `r` on the `r`-th (default: all hosts in order).
    #[serde(default)]
    pub ranks: Option<Ranks>,
    #[serde(default)]
    pub cpu_ops: CpuOps,
    #[serde(default)]
    pub send_done: SendDone,
    #[serde(default)]
    pub intra_server: IntraServer,
    /// Attributes to ignore beyond those csigsim knows.
    #[serde(default)]
    pub ignore_attrs: Vec<String>,
    /// How collectives run: as the `collective` workload's keys of the same names.
    #[serde(default)]
    pub algorithm: Option<Algorithm>,
    #[serde(default = "crate::workload::collective::default_chunk")]
    pub chunk: Size,
    #[serde(default = "crate::workload::collective::default_channels")]
    pub channels: u32,
    #[serde(default = "crate::workload::collective::default_slots")]
    pub slots: u32,
    /// When the trace starts: no flow begins earlier.
    #[serde(default)]
    pub start: Time,
    #[serde(default)]
    pub name: Option<String>,
    /// The training job the entry is ([`super::job`]).
    #[serde(default)]
    pub job: Option<String>,
    /// How the job's ranks are laid on hosts (default: `ranks`).
    #[serde(default)]
    pub placement: Option<super::job::Policy>,
    /// The job may run on hosts an earlier job holds.
    #[serde(default)]
    pub share_hosts: bool,
}

impl ChakraConfig {
    pub(crate) fn job_keys(&self) -> super::job::Keys<'_> {
        super::job::Keys { job: self.job.as_deref(), placement: self.placement, share_hosts: self.share_hosts, list_key: "ranks", listed: self.ranks.is_some() }
    }
}


/// Attributes csigsim reads.
const READ: &[&str] = &["is_cpu_op", "stream", "comm_type", "comm_size", "comm_src", "comm_dst", "comm_tag", "pg_name"];
/// Attributes the Chakra tools write that do not change what csigsim
/// simulates (identifiers, provenance, operator details).
const IGNORED: &[&str] =
    &["rf_id", "fw_parent", "seq_id", "scope", "tid", "fw_tid", "op_schema", "num_ops", "tensor_size", "op_type", "comm_priority", "involved_dim"];

/// The graph of the trace `c.path` names.
pub fn read(c: &ChakraConfig, ctx: &Ctx) -> Result<Dag, InputError> {
    let (files, dir) = rank_files(c, ctx)?;
    let hosts = super::job::rank_hosts(ctx, &c.job_keys(), Some(files.len() as u32), || rank_hosts(c, ctx))?;
    if files.len() > hosts.len() {
        let key = if c.ranks.is_some() { "ranks" } else { "path" };
        return Err((ctx.err)(key, format!("the trace has {} ranks and there are {} hosts to run them on", files.len(), hosts.len())));
    }
    let groups = comm_groups(c, ctx, &dir, files.len() as u32)?;
    let mut ranks = Vec::with_capacity(files.len());
    for (r, f) in files.iter().enumerate() {
        ranks.push(read_rank(f, r as u32)?);
    }
    build(c, ctx, &ranks, &hosts, &groups)
}

/// A rank's file and nodes.
pub struct RankTrace {
    pub rank: u32,
    pub file: String,
    pub nodes: Vec<Node>,
}

/// Reads one rank's file: gzipped or not, a metadata message then nodes.
pub fn read_rank(path: &Path, rank: u32) -> Result<RankTrace, InputError> {
    let file = path.display().to_string();
    let raw = std::fs::read(path).map_err(|e| InputError::new(&file, None, None, format!("rank {rank}: cannot read the trace: {e}")))?;
    let (nodes, _) = decode_rank(&raw, rank, &file)?;
    Ok(RankTrace { rank, file, nodes })
}

/// The nodes of a rank's file's bytes (gzipped or not).
pub fn decode_rank(raw: &[u8], rank: u32, file: &str) -> Result<(Vec<Node>, et::GlobalMetadata), InputError> {
    let plain;
    let (bytes, gz) = if raw.starts_with(&[0x1f, 0x8b]) {
        use std::io::Read;
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(raw)
            .read_to_end(&mut out)
            .map_err(|e| InputError::new(file, None, None, format!("rank {rank}: the gzip stream is corrupt or truncated: {e}")))?;
        plain = out;
        (&plain[..], " of the decompressed stream")
    } else {
        (raw, "")
    };
    let (meta, nodes) =
        et::decode_stream(bytes).map_err(|e| InputError::new(file, None, None, format!("rank {rank}, byte offset {}{gz}: {}", e.offset, e.message)))?;
    Ok((nodes, meta))
}

/// The rank files (rank `r` at `r`) and the directory they are in.
fn rank_files(c: &ChakraConfig, ctx: &Ctx) -> Result<(Vec<PathBuf>, PathBuf), InputError> {
    let p = relative_to(ctx.base_dir, &c.path);
    let err = |m: String| (ctx.err)("path", m);
    // A rank's number in a file name `<prefix>.<rank>.et[.gz]`.
    let split = |name: &str| -> Option<(String, u32)> {
        let stem = name.strip_suffix(".et.gz").or_else(|| name.strip_suffix(".et"))?;
        let (prefix, r) = stem.rsplit_once('.')?;
        (!r.is_empty() && r.bytes().all(|b| b.is_ascii_digit())).then_some(())?;
        Some((prefix.to_string(), r.parse().ok()?))
    };
    if p.is_dir() {
        let mut found: Vec<(String, u32, PathBuf)> = Vec::new();
        let entries = std::fs::read_dir(&p).map_err(|e| err(format!("cannot read the directory {}: {e}", p.display())))?;
        for e in entries {
            let e = e.map_err(|e| err(format!("cannot read the directory {}: {e}", p.display())))?;
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some((prefix, r)) = split(&name) {
                found.push((prefix, r, e.path()));
            }
        }
        found.sort();
        let Some(prefix) = found.first().map(|f| f.0.clone()) else {
            return Err(err(format!("the directory {} holds no trace files (<prefix>.<rank>.et)", p.display())));
        };
        if let Some(other) = found.iter().find(|f| f.0 != prefix) {
            return Err(err(format!("the directory {} holds the traces of two prefixes ({prefix}, {}): give the prefix as path", p.display(), other.0)));
        }
        let mut files = vec![None; found.len()];
        for (_, r, path) in found {
            match files.get_mut(r as usize) {
                Some(slot @ None) => *slot = Some(path),
                Some(Some(_)) => return Err(err(format!("rank {r} has two files in {} (.et and .et.gz)", p.display()))),
                None => return Err(err(format!("{} is rank {r}, and the directory has no file for a rank below it", path.display()))),
            }
        }
        if let Some(r) = files.iter().position(Option::is_none) {
            return Err(err(format!("the directory {} has no file for rank {r} ({prefix}.{r}.et)", p.display())));
        }
        Ok((files.into_iter().map(|f| f.expect("every rank")).collect(), p))
    } else {
        let dir = p.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let mut files = Vec::new();
        loop {
            let r = files.len();
            let plain = PathBuf::from(format!("{}.{r}.et", p.display()));
            let gz = PathBuf::from(format!("{}.{r}.et.gz", p.display()));
            match (plain.is_file(), gz.is_file()) {
                (true, true) => return Err(err(format!("rank {r} has two files ({} and its .gz)", plain.display()))),
                (true, false) => files.push(plain),
                (false, true) => files.push(gz),
                (false, false) => break,
            }
        }
        if files.is_empty() {
            return Err(err(format!("{} is no directory and there is no {}.0.et", p.display(), p.display())));
        }
        Ok((files, dir))
    }
}

/// The hosts `ranks` names, each at most once.
fn rank_hosts(c: &ChakraConfig, ctx: &Ctx) -> Result<Vec<u32>, InputError> {
    match &c.ranks {
        None => Ok((0..ctx.topo.hosts.len() as u32).collect()),
        Some(Ranks::List(l)) => super::hosts_of(ctx.topo, &Some(l.clone()), &|k: &str, m| (ctx.err)(&k.replacen("hosts", "ranks", 1), m)),
        Some(Ranks::Range(s)) => {
            let bad = || (ctx.err)("ranks", format!("\"{s}\" is no range of host indices (\"a..b\", b excluded)"));
            let (a, b) = s.split_once("..").ok_or_else(bad)?;
            let (a, b): (u32, u32) = (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
            let n = ctx.topo.hosts.len() as u32;
            if a >= b || b > n {
                return Err((ctx.err)("ranks", format!("the range {a}..{b} is empty or goes past the {n} hosts")));
            }
            Ok((a..b).collect())
        }
    }
}

/// The communicator groups of a group file: each name's ranks.
struct Groups {
    file: String,
    ranks: HashMap<String, Vec<u32>>,
}

/// Sends by (source, destination, tag), in order: (rank, node index, operation).
type SendQueues = HashMap<(u32, u32, i128), VecDeque<(u32, u32, u32)>>;

/// The communicator groups by name, each a list of ranks.
fn comm_groups(c: &ChakraConfig, ctx: &Ctx, dir: &Path, ranks: u32) -> Result<Option<Groups>, InputError> {
    let path = match &c.comm_group {
        Some(f) => relative_to(ctx.base_dir, f),
        None => {
            let p = dir.join("comm_group.json");
            if !p.is_file() {
                return Ok(None);
            }
            p
        }
    };
    let file = path.display().to_string();
    let text = std::fs::read(&path).map_err(|e| (ctx.err)("comm_group", format!("cannot read {file}: {e}")))?;
    let err = |m: String| InputError::new(&file, None, None, m);
    let groups: HashMap<String, Vec<i64>> = serde_json::from_slice(&text).map_err(|e| {
        InputError::new(&file, None, Some((e.line(), e.column())), format!("expected an object of group names, each a list of ranks: {e}"))
    })?;
    let mut out = HashMap::new();
    for (name, members) in groups {
        let mut ranks_of = Vec::with_capacity(members.len());
        for &m in &members {
            if m < 0 || m >= ranks as i64 {
                return Err(err(format!("group {name} names rank {m}, and the trace has ranks 0 .. {}", ranks - 1)));
            }
            if ranks_of.contains(&(m as u32)) {
                return Err(err(format!("group {name} names rank {m} twice")));
            }
            ranks_of.push(m as u32);
        }
        if ranks_of.is_empty() {
            return Err(err(format!("group {name} is empty")));
        }
        out.insert(name, ranks_of);
    }
    Ok(Some(Groups { file, ranks: out }))
}

/// What a node is, read from its type and attributes.
enum Kind {
    Compute { cpu: bool, stream: u32 },
    Send { peer: u32, tag: i128, size: u64 },
    Recv { peer: u32, tag: i128, size: u64 },
    Coll { op: CollectiveOp, size: u64, group: String },
    Nothing,
}

/// A node's error: its rank's file, the rank and the node.
fn node_err(t: &RankTrace, n: &Node, m: impl std::fmt::Display) -> InputError {
    let name = if n.name.is_empty() { String::new() } else { format!(" ({})", n.name) };
    InputError::new(&t.file, None, None, format!("rank {}, node {}{name}: {m}", t.rank, n.id))
}

fn kind(t: &RankTrace, n: &Node, ranks: u32, ignore: &[String]) -> Result<Kind, InputError> {
    let mut attrs: HashMap<&str, &Value> = HashMap::new();
    for a in &n.attr {
        let name = a.name.as_str();
        if READ.contains(&name) {
            let v = a.value.as_ref().ok_or_else(|| node_err(t, n, format!("attribute {name} has no value")))?;
            if attrs.insert(name, v).is_some() {
                return Err(node_err(t, n, format!("attribute {name} is given twice")));
            }
        } else if !IGNORED.contains(&name) && !ignore.iter().any(|i| i == name) {
            return Err(node_err(t, n, format!("attribute {name} is not modelled (add it to ignore_attrs to run without it)")));
        }
    }
    let int = |name: &str| -> Result<Option<i128>, InputError> {
        match attrs.get(name) {
            None => Ok(None),
            Some(v) => v.integer().map(Some).ok_or_else(|| node_err(t, n, format!("attribute {name} is a {}, expected an integer", v.type_name()))),
        }
    };
    let need = |name: &str, what: &str| -> Result<i128, InputError> {
        int(name)?.ok_or_else(|| node_err(t, n, format!("a {what} needs the attribute {name}")))
    };
    let rank = |name: &str, what: &str| -> Result<u32, InputError> {
        let r = need(name, what)?;
        if r < 0 || r >= ranks as i128 {
            return Err(node_err(t, n, format!("{name} {r} is an unknown rank: the trace has ranks 0 .. {}", ranks - 1)));
        }
        Ok(r as u32)
    };
    let size = |what: &str| -> Result<u64, InputError> {
        let s = need("comm_size", what)?;
        u64::try_from(s).map_err(|_| node_err(t, n, format!("comm_size {s} is negative or too large")))
    };
    let cpu = match attrs.get("is_cpu_op") {
        None => false,
        Some(Value::BoolVal(b)) => *b,
        Some(v) => match v.integer() {
            Some(i @ (0 | 1)) => i == 1,
            _ => return Err(node_err(t, n, format!("attribute is_cpu_op is a {}, expected a bool", v.type_name()))),
        },
    };
    Ok(match n.r#type {
        node_type::COMP => {
            let stream = int("stream")?.unwrap_or(0);
            let stream = u32::try_from(stream).map_err(|_| node_err(t, n, format!("stream {stream} is negative or too large")))?;
            Kind::Compute { cpu, stream }
        }
        node_type::METADATA => Kind::Nothing,
        node_type::COMM_SEND | node_type::COMM_RECV => {
            let send = n.r#type == node_type::COMM_SEND;
            let what = if send { "COMM_SEND_NODE" } else { "COMM_RECV_NODE" };
            let (own, peer_key) = if send { ("comm_src", "comm_dst") } else { ("comm_dst", "comm_src") };
            if let Some(o) = int(own)? {
                if o != t.rank as i128 {
                    return Err(node_err(t, n, format!("{own} is {o}, and the node is in rank {}'s trace", t.rank)));
                }
            }
            let peer = rank(peer_key, what)?;
            if peer == t.rank {
                return Err(node_err(t, n, format!("{peer_key} is the rank itself: a message within a rank is not on the network")));
            }
            let tag = int("comm_tag")?.unwrap_or(0);
            let size = size(what)?;
            if send {
                Kind::Send { peer, tag, size }
            } else {
                Kind::Recv { peer, tag, size }
            }
        }
        node_type::COMM_COLL => {
            let ty = need("comm_type", "COMM_COLL_NODE")?;
            let op = match i64::try_from(ty).unwrap_or(-1) {
                et::comm_type::ALL_REDUCE => CollectiveOp::AllReduce,
                et::comm_type::ALL_GATHER => CollectiveOp::AllGather,
                et::comm_type::REDUCE_SCATTER => CollectiveOp::ReduceScatter,
                et::comm_type::ALL_TO_ALL => CollectiveOp::AllToAll,
                et::comm_type::BROADCAST => CollectiveOp::Broadcast,
                et::comm_type::REDUCE => CollectiveOp::Reduce,
                other => {
                    return Err(node_err(
                        t,
                        n,
                        match et::comm_type::name(other) {
                            Some(name) => format!("collective {name} is not modelled (all-reduce, all-gather, reduce-scatter, all-to-all, broadcast and reduce are)"),
                            None => format!("comm_type {ty} is no collective of the schema"),
                        },
                    ))
                }
            };
            let group = match attrs.get("pg_name") {
                None => String::new(),
                Some(Value::StringVal(s)) => s.clone(),
                Some(v) => return Err(node_err(t, n, format!("attribute pg_name is a {}, expected a string", v.type_name()))),
            };
            Kind::Coll { op, size: size("COMM_COLL_NODE")?, group }
        }
        other => {
            return Err(node_err(
                t,
                n,
                match node_type::name(other) {
                    Some(name) => format!("node type {name} is not modelled"),
                    None => format!("node type {other} is no node type of the schema"),
                },
            ))
        }
    })
}

/// The graph of the ranks' traces on `hosts`.
fn build(c: &ChakraConfig, ctx: &Ctx, ranks: &[RankTrace], hosts: &[u32], groups: &Option<Groups>) -> Result<Dag, InputError> {
    let name = label(&c.name.clone().or(c.job.clone()), "chakra", ctx.idx);
    let n = ranks.len() as u32;
    for (key, v) in [("channels", c.channels), ("slots", c.slots)] {
        if v == 0 {
            return Err((ctx.err)(key, format!("{key} must be at least 1")));
        }
    }
    if c.chunk.0 == 0 {
        return Err((ctx.err)("chunk", "chunk must be above zero".into()));
    }
    // The server of each host (a host of no several-NIC server is its own).
    let mut server = (0..ctx.topo.hosts.len() as u32).collect::<Vec<_>>();
    for s in &ctx.topo.servers {
        for h in s.first..s.first + s.nics {
            server[h as usize] = s.first;
        }
    }
    let instant = |a: u32, b: u32| c.intra_server == IntraServer::Instant && server[a as usize] == server[b as usize];
    let mut g = Graph { specs: DagFlows::default(), ops: Vec::new(), edges: Vec::new(), op_node: Vec::new() };
    // Per rank, per node (in file order): its kind, the operation that
    // begins it and the one complete when it is.
    let mut kinds: Vec<Vec<Kind>> = Vec::with_capacity(ranks.len());
    let mut begins: Vec<Vec<u32>> = Vec::with_capacity(ranks.len());
    let mut dones: Vec<Vec<u32>> = Vec::with_capacity(ranks.len());
    let mut streams: HashMap<(u32, bool, u32), u32> = HashMap::new();
    let mut sends = SendQueues::new();
    for t in ranks {
        let mut ks = Vec::with_capacity(t.nodes.len());
        let (mut b, mut d) = (Vec::with_capacity(t.nodes.len()), Vec::with_capacity(t.nodes.len()));
        for (i, nd) in t.nodes.iter().enumerate() {
            let k = kind(t, nd, n, &c.ignore_attrs)?;
            let at = (t.rank, i as u32);
            let (begin, done) = match &k {
                &Kind::Compute { cpu, stream } => {
                    if cpu && c.cpu_ops == CpuOps::Skip {
                        let j = g.op(Op::Join, at);
                        (j, j)
                    } else {
                        let next = streams.len() as u32;
                        let s = *streams.entry((t.rank, cpu, if cpu { 0 } else { stream })).or_insert(next);
                        let duration = Time(nd.duration_micros.saturating_mul(PS_PER_US));
                        let o = g.op(Op::Compute { stream: s, duration }, at);
                        (o, o)
                    }
                }
                Kind::Nothing | Kind::Coll { .. } => {
                    // A collective's begin; its completion is joined below.
                    let j = g.op(Op::Join, at);
                    let done = if matches!(k, Kind::Coll { .. }) { g.op(Op::Join, at) } else { j };
                    (j, done)
                }
                &Kind::Send { peer, tag, size } => {
                    let (src, dst) = (hosts[t.rank as usize], hosts[peer as usize]);
                    let o = if instant(src, dst) {
                        g.op(Op::Join, at)
                    } else {
                        let f = g.flow(ctx, &name, c.start, src, dst, size.max(1), || node_err(t, nd, ""))?;
                        g.op(Op::Flow(f), at)
                    };
                    sends.entry((t.rank, peer, tag)).or_default().push_back((t.rank, i as u32, o));
                    let done = match (g.ops[o as usize], c.send_done) {
                        (Op::Flow(f), SendDone::Sent) => g.op(Op::Sent(f), at),
                        _ => o,
                    };
                    (o, done)
                }
                Kind::Recv { .. } => {
                    // Posted when begun; complete once posted and its message has arrived.
                    let posted = g.op(Op::Join, at);
                    let done = g.op(Op::Join, at);
                    g.edges.push((done, posted));
                    (posted, done)
                }
            };
            ks.push(k);
            b.push(begin);
            d.push(done);
        }
        kinds.push(ks);
        begins.push(b);
        dones.push(d);
    }
    // Receives: each waits for its matched send's message.
    for t in ranks {
        for (i, k) in kinds[t.rank as usize].iter().enumerate() {
            if let Kind::Recv { peer, tag, size } = *k {
                let nd = &t.nodes[i];
                let Some((sr, si, op)) = sends.get_mut(&(peer, t.rank, tag)).and_then(VecDeque::pop_front) else {
                    return Err(node_err(t, nd, format!("receives from rank {peer} with tag {tag} more often than rank {peer} sends to it with that tag: this receive is never matched, and the trace could not finish")));
                };
                if let Kind::Send { size: sent, .. } = kinds[sr as usize][si as usize] {
                    if sent > size {
                        return Err(node_err(t, nd, format!("receives {size} bytes where rank {peer}'s node {} sends {sent}: the message would be truncated", ranks[sr as usize].nodes[si as usize].id)));
                    }
                }
                g.edges.push((dones[t.rank as usize][i], op));
            }
        }
    }
    let mut unmatched: Vec<&(u32, u32, u32)> = sends.values().filter_map(|q| q.front()).collect();
    unmatched.sort();
    if let Some(&&(r, i, _)) = unmatched.first() {
        let t = &ranks[r as usize];
        let Kind::Send { peer, tag, .. } = kinds[r as usize][i as usize] else { unreachable!("a send") };
        return Err(node_err(t, &t.nodes[i as usize], format!("sends to rank {peer} with tag {tag} and rank {peer} never receives it")));
    }
    // Dependencies, control and data alike: a node begins once they are complete.
    for t in ranks {
        let mut index: HashMap<u64, u32> = HashMap::with_capacity(t.nodes.len());
        for (i, nd) in t.nodes.iter().enumerate() {
            if index.insert(nd.id, i as u32).is_some() {
                return Err(node_err(t, nd, "the node id is used twice in the file"));
            }
        }
        for (i, nd) in t.nodes.iter().enumerate() {
            for &dep in nd.ctrl_deps.iter().chain(&nd.data_deps) {
                let Some(&j) = index.get(&dep) else {
                    return Err(node_err(t, nd, format!("depends on node {dep}, which is not in the file")));
                };
                if j == i as u32 {
                    return Err(node_err(t, nd, "depends on itself"));
                }
                g.edges.push((begins[t.rank as usize][i], dones[t.rank as usize][j as usize]));
            }
        }
    }
    collectives(c, ctx, ranks, hosts, groups, &kinds, &begins, &dones, &name, &mut g, &instant)?;
    let Graph { specs, ops, edges, op_node } = g;
    let mut dag = Dag::new(specs, ops, edges).map_err(|e| match op_node.get(e.op as usize) {
        Some(&(r, i)) => {
            let t = &ranks[r as usize];
            node_err(t, &t.nodes[i as usize], format!("the trace's dependencies: this node {}", e.message))
        }
        None => (ctx.err)("path", format!("the trace's dependencies: {}", e.message)),
    })?;
    // Each operation runs at its rank's host (a flow at its sender's).
    dag.set_hosts(op_node.iter().map(|&(r, _)| hosts[r as usize]).collect());
    drop(op_node);
    // ops.csv's rows: rank by rank, each rank's nodes in file order.
    let mut trace = Trace { name, hosts: hosts[..ranks.len()].to_vec(), ..Default::default() };
    let mut index = HashMap::new();
    trace.steps.reserve_exact(ranks.iter().map(|t| t.nodes.len()).sum());
    for t in ranks {
        let r = t.rank as usize;
        // The rank's first node, where it recurs, begins its next iteration.
        let first = t.nodes.first().map_or("", |n| n.name.as_str());
        let mut iteration = 0;
        for (i, nd) in t.nodes.iter().enumerate() {
            if i > 0 && !first.is_empty() && nd.name == first {
                iteration += 1;
            }
            let kind = match kinds[r][i] {
                Kind::Compute { cpu, .. } if cpu && c.cpu_ops == CpuOps::Skip => StepKind::Other,
                Kind::Compute { .. } => StepKind::Compute,
                Kind::Send { .. } => StepKind::Send,
                Kind::Recv { .. } => StepKind::Recv,
                Kind::Coll { .. } => StepKind::Collective,
                Kind::Nothing => StepKind::Other,
            };
            let code = trace.name_code(&mut index, &nd.name);
            trace.steps.push(Step { rank: t.rank, id: nd.id, name: code, kind, iteration, begin: begins[r][i], done: dones[r][i] });
        }
    }
    dag.trace = trace;
    Ok(dag)
}

/// The graph under construction, and the node each operation is of.
struct Graph {
    specs: DagFlows,
    ops: Vec<Op>,
    edges: Vec<(u32, u32)>,
    op_node: Vec<(u32, u32)>,
}

impl Graph {
    fn op(&mut self, op: Op, node: (u32, u32)) -> u32 {
        self.ops.push(op);
        self.op_node.push(node);
        self.ops.len() as u32 - 1
    }

    #[allow(clippy::too_many_arguments)]
    fn flow(&mut self, ctx: &Ctx, name: &str, start: Time, src: u32, dst: u32, size: u64, at: impl Fn() -> InputError) -> Result<u32, InputError> {
        let with = |m: String| {
            let e = at();
            InputError::new(e.file, None, None, format!("{}{m}", e.msg))
        };
        if ctx.first + self.specs.len() as u64 >= ctx.max_flows {
            return Err(with(super::too_many_flows(ctx.max_flows)));
        }
        if let Some(m) = size_error(size, ctx.mtu) {
            return Err(with(m));
        }
        Ok(self.specs.push(&FlowSpec { src: HostId(src), dst: HostId(dst), size, start, name: name.to_string(), rate_cap: u64::MAX, channel: 0 }))
    }
}

/// Matches each group's collectives across its members (the k-th of the
/// group in each member's file) and adds their flows: the `collective`
/// workload's flows and dependencies for the group, each rank's flows
/// begun when the rank has reached its node, each rank's node complete
/// when every flow from or to the rank has arrived.
#[allow(clippy::too_many_arguments)]
fn collectives(
    c: &ChakraConfig,
    ctx: &Ctx,
    ranks: &[RankTrace],
    hosts: &[u32],
    groups: &Option<Groups>,
    kinds: &[Vec<Kind>],
    begins: &[Vec<u32>],
    dones: &[Vec<u32>],
    name: &str,
    g: &mut Graph,
    instant: &dyn Fn(u32, u32) -> bool,
) -> Result<(), InputError> {
    let n = ranks.len() as u32;
    let everyone: Vec<u32> = (0..n).collect();
    // Per group name: per member, its collectives (node indices) in order.
    let mut by_group: Vec<(String, Vec<Vec<u32>>)> = Vec::new();
    let mut group_index: HashMap<String, usize> = HashMap::new();
    for t in ranks {
        for (i, k) in kinds[t.rank as usize].iter().enumerate() {
            let Kind::Coll { group, .. } = k else { continue };
            let members: &[u32] = if group.is_empty() {
                &everyone
            } else {
                match groups {
                    None => return Err(node_err(t, &t.nodes[i], format!("runs on communicator group {group} and there is no comm_group file (comm_group.json beside the traces, or the key comm_group)"))),
                    Some(gs) => gs.ranks.get(group).ok_or_else(|| node_err(t, &t.nodes[i], format!("runs on communicator group {group}, which {} does not define", gs.file)))?,
                }
            };
            let Some(pos) = members.iter().position(|&m| m == t.rank) else {
                return Err(node_err(t, &t.nodes[i], format!("runs on communicator group {group}, which does not include rank {}", t.rank)));
            };
            let gi = *group_index.entry(group.clone()).or_insert_with(|| {
                by_group.push((group.clone(), vec![Vec::new(); members.len()]));
                by_group.len() - 1
            });
            by_group[gi].1[pos].push(i as u32);
        }
    }
    let mut rank_of_host = vec![u32::MAX; ctx.topo.hosts.len()];
    for (r, &h) in hosts.iter().enumerate().take(n as usize) {
        rank_of_host[h as usize] = r as u32;
    }
    for (group, per_member) in &by_group {
        let members: &[u32] = if group.is_empty() { &everyone } else { &groups.as_ref().expect("checked").ranks[group] };
        let count = per_member.iter().map(Vec::len).max().unwrap_or(0);
        for k in 0..count {
            // The k-th collective of every member; the first member that has
            // one sets the terms.
            let lead = members.iter().zip(per_member).find(|(_, l)| l.len() > k).expect("a member with k + 1 collectives");
            let (lr, li) = (*lead.0, lead.1[k]);
            let Kind::Coll { op, size, .. } = kinds[lr as usize][li as usize] else { unreachable!("a collective") };
            let lead_node = &ranks[lr as usize].nodes[li as usize];
            let mut nodes = Vec::with_capacity(members.len());
            // Each member's node of the collective, by rank.
            let mut node_of_rank = vec![u32::MAX; n as usize];
            for (&m, list) in members.iter().zip(per_member) {
                let t = &ranks[m as usize];
                let Some(&i) = list.get(k) else {
                    return Err(InputError::new(&ranks[lr as usize].file, None, None, format!(
                        "rank {lr}, node {}: collective {} of group {} has no counterpart in rank {m}'s trace ({}), which has {} collectives on the group: the collective could never finish",
                        lead_node.id, k + 1, group_label(group), t.file, list.len())));
                };
                let Kind::Coll { op: o, size: s, .. } = kinds[m as usize][i as usize] else { unreachable!("a collective") };
                if (o, s) != (op, size) {
                    return Err(node_err(t, &t.nodes[i as usize], format!(
                        "collective {} of group {}: {} of {s} bytes here, {} of {size} bytes in rank {lr}'s node {}",
                        k + 1, group_label(group), o.name(), op.name(), lead_node.id)));
                }
                nodes.push((m, i));
                node_of_rank[m as usize] = i;
            }
            if members.len() < 2 {
                // One rank: nothing to exchange.
                let (m, i) = nodes[0];
                g.edges.push((dones[m as usize][i as usize], begins[m as usize][i as usize]));
                continue;
            }
            let cfg = CollectiveConfig {
                op,
                size: Size(size),
                hosts: Some(members.iter().map(|&m| HostRef::Index(hosts[m as usize] as i64)).collect()),
                algorithm: c.algorithm,
                root: None,
                chunk: c.chunk,
                channels: c.channels,
                slots: c.slots,
                order: None,
                group_size: None,
                group_layout: None,
                iterations: 1,
                gap: Time(0),
                start: c.start,
                name: Some(if group.is_empty() { name.to_string() } else { format!("{name}.{group}") }),
                job: None,
                placement: None,
                num_ranks: None,
                share_hosts: false,
            };
            let t = &ranks[lr as usize];
            let err = |key: &str, m: String| node_err(t, lead_node, format!("its {} of {size} bytes on {} ranks (key {key}): {m}", op.name(), members.len()));
            let out = std::cell::RefCell::new(Extras::default());
            let sub = Ctx {
                idx: ctx.idx,
                first: ctx.first + g.specs.len() as u64,
                topo: ctx.topo,
                seed: ctx.seed,
                base_dir: ctx.base_dir,
                mtu: ctx.mtu,
                err: &err,
                max_flows: ctx.max_flows,
                out: &out,
                placer: ctx.placer,
            };
            let mut flows = Vec::new();
            collective::expand(&cfg, &sub, &mut flows)?;
            let Extras { deps, collectives: instances, .. } = out.into_inner();
            let (base, listed) = (g.specs.len() as u32, flows.len());
            // Each flow's operation (a flow, or a join when it stays in a server).
            let mut flow_ops = Vec::with_capacity(flows.len());
            for f in flows {
                let (src, dst) = (f.src.0, f.dst.0);
                let (rs, rd) = (rank_of_host[src as usize] as usize, rank_of_host[dst as usize] as usize);
                let (is, id) = (node_of_rank[rs], node_of_rank[rd]);
                let at = (rs as u32, is);
                let o = if instant(src, dst) {
                    g.op(Op::Join, at)
                } else {
                    let i = g.specs.push(&f);
                    g.op(Op::Flow(i), at)
                };
                // A rank sends once it has reached the collective; its part
                // is complete when all it sends and receives has arrived.
                g.edges.push((o, begins[rs][is as usize]));
                g.edges.push((dones[rs][is as usize], o));
                g.edges.push((dones[rd][id as usize], o));
                flow_ops.push(o);
            }
            // Its rows of collectives.csv (flow ids of the workload), when
            // every step is flows (none stayed in a server).
            if g.specs.len() - base as usize == listed {
                ctx.out.borrow_mut().collectives.extend(instances.into_iter().map(|mut i| {
                    i.iteration = k as u32;
                    i.steps.iter_mut().for_each(|r| *r = r.start + base..r.end + base);
                    i
                }));
            }
            let mut sent_op: HashMap<u32, u32> = HashMap::new();
            for d in deps {
                let o = flow_ops[d.flow as usize];
                for a in d.after {
                    g.edges.push((o, flow_ops[a as usize]));
                }
                if let Some(a) = d.after_sent {
                    let prev = flow_ops[a as usize];
                    let wait = match g.ops[prev as usize] {
                        Op::Flow(f) => *sent_op.entry(f).or_insert_with(|| {
                            let at = g.op_node[prev as usize];
                            g.op(Op::Sent(f), at)
                        }),
                        _ => prev,
                    };
                    g.edges.push((o, wait));
                }
            }
            // A rank that neither sends nor receives (none here) would wait for its begin alone.
            for &(m, i) in &nodes {
                g.edges.push((dones[m as usize][i as usize], begins[m as usize][i as usize]));
            }
        }
    }
    Ok(())
}

fn group_label(g: &str) -> String {
    if g.is_empty() {
        "(all ranks)".into()
    } else {
        g.to_string()
    }
}

/// A trace's flows as a list: graphs do not combine with
/// `[transport.connection]`, which rewrites listed flows only.
pub fn expand(_c: &ChakraConfig, ctx: &Ctx, _flows: &mut Vec<FlowSpec>) -> Result<(), InputError> {
    Err((ctx.err)("kind", "a chakra trace does not combine with [transport.connection] (its operations wait for flows, which connections would split into queue pairs)".into()))
}
