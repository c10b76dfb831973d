//! Topologies: a [`TopologySpec`] is the plain description of a fabric (named
//! hosts and switches, links with rate and delay) that the engine builds its
//! ports and routes from. Each generator lives in its own file and turns its
//! `[topology]` keys into a spec.
//!
//! Contracts every generator keeps:
//! - hosts are named `h0..hN-1` (custom topologies name their own);
//! - switch names say their tier (`tor3`, `agg1`, `spine0`, `core2`, `s0`);
//! - a switch's links are listed in port order, and for the `deterministic`
//!   routing policy the equal-cost up-ports of a switch at stage `s` of a
//!   k-ary tree are listed in the order of the digit `(dst / k^s) % k` that
//!   selects them, with `SwitchSpec::dmodk_divisor = k^s`.

use crate::units::{Rate, Time};

pub mod servers;

/// One end of a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NodeRef {
    Host(u32),
    Switch(u32),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchSpec {
    pub name: String,
    /// 0 for switches that hosts attach to, counting up towards the core.
    pub tier: u8,
    /// Divisor of the destination host index for D-mod-K routing: the
    /// `deterministic` policy takes candidate `(dst / dmodk_divisor) % n`.
    pub dmodk_divisor: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkSpec {
    pub a: NodeRef,
    pub b: NodeRef,
    pub rate: Rate,
    pub delay: Time,
}

/// A fabric: hosts, switches and full-duplex links.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopologySpec {
    pub hosts: Vec<String>,
    pub switches: Vec<SwitchSpec>,
    pub links: Vec<LinkSpec>,
    /// Servers of several NICs (`nics > 1`); empty when every host is a
    /// server of one NIC.
    pub servers: Vec<servers::ServerSpec>,
}

/// A problem with topology keys: the key (relative to `[topology]`) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopologyError {
    pub key: String,
    pub msg: String,
}

impl TopologyError {
    pub fn new(key: impl Into<String>, msg: impl Into<String>) -> Self {
        TopologyError { key: key.into(), msg: msg.into() }
    }
}

macro_rules! kinds {
    ($(($module:ident, $variant:ident, $kind:literal, $config:ident, $description:literal)),* $(,)?) => {
        $(pub mod $module;)*

        /// The `[topology]` table, by `kind`.
        #[derive(Clone, Debug)]
        pub enum TopologyConfig {
            $($variant($module::$config),)*
        }

        /// Every kind this build knows, for `csigsim list`.
        pub const KINDS: &[(&str, &str)] = &[$(($kind, $description),)*];

        impl TopologyConfig {
            /// The keys of `table` (without `kind`) as a topology of `kind`;
            /// None for a kind this build does not know.
            fn parse(kind: &str, table: toml::Table) -> Option<Result<Self, TopologyError>> {
                match kind {
                    $($kind => Some(de(table).map(TopologyConfig::$variant)),)*
                    _ => None,
                }
            }

            pub fn kind(&self) -> &'static str {
                match self {
                    $(TopologyConfig::$variant(_) => $kind,)*
                }
            }

            fn generate(&self) -> Result<TopologySpec, TopologyError> {
                match self {
                    $(TopologyConfig::$variant(c) => $module::build(c),)*
                }
            }
        }
    };
}

// One line per generator: its file, variant, `kind`, config type and description.
kinds! {
    (custom, Custom, "custom", CustomConfig, "named hosts, switches and links"),
    (fat_tree, FatTree, "fat_tree", FatTreeConfig, "3-tier k-ary fat tree with optional ToR oversubscription"),
    (leaf_spine, LeafSpine, "leaf_spine", LeafSpineConfig, "2-tier leaf-spine with hosts per leaf and oversubscription"),
    (clos, Clos, "clos", ClosConfig, "k-ary n-tree (default 4-ary 3-tree: 64 hosts, 48 switches of 8 ports) with D-mod-K routing"),
    (chain, Chain, "chain", ChainConfig, "a line of switches with cross-traffic hosts at every switch"),
}

/// A generator's keys, with errors naming the key inside the table.
fn de<T: serde::de::DeserializeOwned>(t: toml::Table) -> Result<T, TopologyError> {
    serde_path_to_error::deserialize(toml::Value::Table(t)).map_err(|e| {
        let key = crate::de::path_string(e.path());
        TopologyError::new(key, e.into_inner().to_string().trim_end().to_string())
    })
}

impl TopologyConfig {
    /// Reads the `[topology]` table by its `kind`. Errors name the key inside
    /// the table (empty for the table itself).
    pub fn from_table(raw: &toml::Table) -> Result<Self, TopologyError> {
        let kinds = KINDS.iter().map(|k| k.0).collect::<Vec<_>>().join(", ");
        let kind = match raw.get("kind") {
            Some(toml::Value::String(k)) => k.clone(),
            Some(_) => return Err(TopologyError::new("kind", format!("kind must be a string, one of {kinds}"))),
            None => return Err(TopologyError::new("", format!("missing key `kind` (one of {kinds})"))),
        };
        let mut table = raw.clone();
        table.remove("kind");
        // `[[topology.failure]]` applies to every kind (`net::failure`).
        table.remove("failure");
        match Self::parse(&kind, table) {
            Some(config) => config,
            None => Err(TopologyError::new("kind", format!("unknown topology kind \"{kind}\"; kinds: {kinds}"))),
        }
    }

    pub fn build(&self) -> Result<TopologySpec, TopologyError> {
        let spec = self.generate()?;
        // Two ports a link; a port id must fit a queued event.
        let ports = 2 * spec.links.len() as u64;
        if ports >= crate::sim::MAX_PORTS {
            return Err(TopologyError::new("links", format!("{} links make {ports} ports, more than the 2^31 - 1 a network may have", spec.links.len())));
        }
        spec.check_connected()?;
        Ok(spec)
    }
}

impl<'de> serde::Deserialize<'de> for TopologyConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let t = toml::Table::deserialize(d)?;
        Self::from_table(&t).map_err(|e| serde::de::Error::custom(format!("{}: {}", e.key, e.msg)))
    }
}

impl TopologySpec {
    pub fn node_name(&self, n: NodeRef) -> &str {
        match n {
            NodeRef::Host(i) => &self.hosts[i as usize],
            NodeRef::Switch(i) => &self.switches[i as usize].name,
        }
    }

    /// Every node must reach every other, and each host needs a link.
    pub fn check_connected(&self) -> Result<(), TopologyError> {
        let nh = self.hosts.len();
        let n = nh + self.switches.len();
        if nh == 0 {
            return Err(TopologyError::new("hosts", "the topology has no hosts"));
        }
        let idx = |r: NodeRef| match r {
            NodeRef::Host(i) => i as usize,
            NodeRef::Switch(i) => nh + i as usize,
        };
        let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
        for l in &self.links {
            adj[idx(l.a)].push(idx(l.b));
            adj[idx(l.b)].push(idx(l.a));
        }
        let mut seen = vec![false; n];
        let mut stack = vec![0usize];
        seen[0] = true;
        while let Some(u) = stack.pop() {
            for &v in &adj[u] {
                if !seen[v] {
                    seen[v] = true;
                    stack.push(v);
                }
            }
        }
        if let Some(i) = seen.iter().position(|s| !s) {
            let name = if i < nh { &self.hosts[i] } else { &self.switches[i - nh].name };
            return Err(TopologyError::new(
                "links",
                format!("the topology is disconnected: \"{name}\" cannot reach \"{}\"", self.hosts[0]),
            ));
        }
        Ok(())
    }
}

/// A host named in the scenario: its name, or its index in the host list.
#[derive(Clone, Debug, serde::Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum HostRef {
    Index(i64),
    Name(String),
}

/// What a host reference names: one host (a NIC port), or a server of
/// several NICs (an index into `TopologySpec::servers`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    Host(u32),
    Server(u32),
}

impl TopologySpec {
    /// The hosts an endpoint stands for: one host, or a server's NICs in order.
    pub fn endpoint_hosts(&self, e: Endpoint) -> std::ops::Range<u32> {
        match e {
            Endpoint::Host(h) => h..h + 1,
            Endpoint::Server(s) => {
                let s = &self.servers[s as usize];
                s.first..s.first + s.nics
            }
        }
    }
}

/// What `h` names in `topo`: a host by index or name, else a server by
/// name; or why it names neither.
pub fn resolve_endpoint(topo: &TopologySpec, h: &HostRef) -> Result<Endpoint, String> {
    match h {
        HostRef::Index(i) => {
            if *i >= 0 && (*i as usize) < topo.hosts.len() {
                Ok(Endpoint::Host(*i as u32))
            } else {
                Err(format!("host index {i} is out of range: the topology has {} hosts (0..{})", topo.hosts.len(), topo.hosts.len() - 1))
            }
        }
        HostRef::Name(n) => {
            if let Some(i) = topo.hosts.iter().position(|x| x == n) {
                return Ok(Endpoint::Host(i as u32));
            }
            if let Some(s) = topo.servers.iter().position(|x| &x.name == n) {
                return Ok(Endpoint::Server(s as u32));
            }
            let hint = if topo.hosts.len() <= 8 { format!(" (hosts: {})", topo.hosts.join(", ")) } else { String::new() };
            Err(format!("unknown host \"{n}\"{hint}"))
        }
    }
}

/// The index of host `h` in `topo`, or why it names no host (a server of
/// several NICs is not one host).
pub fn resolve_host(topo: &TopologySpec, h: &HostRef) -> Result<u32, String> {
    match resolve_endpoint(topo, h)? {
        Endpoint::Host(i) => Ok(i),
        Endpoint::Server(s) => Err(server_is_not_a_host(&topo.servers[s as usize])),
    }
}

/// Why a server of several NICs cannot stand where one host must.
pub fn server_is_not_a_host(s: &servers::ServerSpec) -> String {
    format!(
        "\"{n}\" is a server of {k} NICs; name one of them ({n}.0 .. {n}.{last}) here",
        n = s.name,
        k = s.nics,
        last = s.nics - 1
    )
}
