//! `[transport]`: the settings every flow shares, and the sections of the
//! congestion controls and host-side schemes (owned by their files in cc/
//! and lb/).

use crate::cc::{CcConfig, CcKind};
use crate::lb::{EntropyMode, HostLbConfig};
use crate::units::Time;
use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, Visitor};
use serde::de::value::MapAccessDeserializer;
use serde::{Deserialize, Deserializer};
use std::fmt;

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Retransmit {
    /// RoCE: the receiver drops out-of-order data and NACKs; the sender goes back.
    #[default]
    GoBackN,
    /// The receiver keeps out-of-order data; the sender resends only what is missing.
    Selective,
}

/// What the receiver does with data and what NACKs are for.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// Reliable connection, as RoCE: loss recovery as `retransmit` says
    /// (go-back-N or selective), an ACK per `ack_every` packets, gap NACKs.
    #[default]
    Rc,
    /// Reliable unordered delivery (UET's RUD, as htsim's UEC sink): data
    /// kept in any order and acknowledged with a selective-ACK bitmap, ACKs
    /// coalesced by `ack_bytes` whatever the order, NACKs for trimmed
    /// packets only (a lost packet waits for the retransmission timer). The
    /// sender retransmits selectively.
    Rud,
}

/// What the retransmission timer measures and what a timeout takes as lost.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Timeout {
    /// One timer per flow, restarted `rto` after each advance of the
    /// cumulative acknowledgement (or the first send) and doubled, up to 64
    /// times `rto`, on each consecutive timeout. A timeout takes every
    /// packet in flight as lost (selective) or goes back to the first
    /// unacknowledged packet (go-back-N).
    #[default]
    Window,
    /// Per packet, as htsim's UEC sender: the timer expires `rto` after the
    /// send of the oldest packet still in flight; a timeout takes that
    /// packet alone as lost and queues it for resending, without backoff,
    /// and the timer then runs to the next oldest. Selective recovery only.
    Packet,
}

/// When a rate-paced sender's next send time is set.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum PacingUpdate {
    /// When a packet leaves: the gap after it at the rate of that moment;
    /// a later rate change applies from the next packet.
    #[default]
    OnSend,
    /// Also at every rate change, as ns-3's `RdmaHw::ChangeRate`: the
    /// pending next send moves by the last packet's serialization at the
    /// new rate minus at the old one, so the packet waiting to go leaves at
    /// the new rate (and the NIC wakes earlier if it comes earlier).
    OnRateChange,
}

/// `[transport]`. Its sections `[transport.<name>]` belong to the
/// congestion controls and host-side schemes that own them (the registries
/// in cc/ and lb/); reading the table hands each section to its owner, and
/// every other key to the derived reader below, so that an unknown key is
/// still an error naming `transport.<key>` with its line and column.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(remote = "Self", deny_unknown_fields)]
pub struct TransportConfig {
    #[serde(default)]
    pub cc: crate::cc::CcKind,
    /// Payload bytes per data packet.
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    /// Wire bytes per data packet beyond the payload.
    #[serde(default = "default_header")]
    pub header: u32,
    /// Wire bytes of an ACK or NACK.
    #[serde(default = "default_ack_size")]
    pub ack_size: u32,
    /// The receiver sends one ACK per this many data packets (and always on the
    /// last packet, on a CE mark when `ack_on_ce`, and on loss).
    #[serde(default = "default_ack_every")]
    pub ack_every: u32,
    #[serde(default = "default_true")]
    pub ack_on_ce: bool,
    /// The sender flags (AR) the packet that fills its window, its last
    /// packet and every resend; the receiver acknowledges a flagged packet
    /// at once and again when its out-of-order data drains (htsim's UEC).
    #[serde(default)]
    pub ack_request: bool,
    /// With ack_every > 1: the longest a receiver holds a coalesced ACK.
    #[serde(default = "default_ack_delay")]
    pub ack_delay: Time,
    /// Go-back-N or selective loss recovery (`delivery = "rc"`); `"rud"`
    /// needs (and sets) `selective`.
    #[serde(default)]
    pub retransmit: Retransmit,
    /// Resolved when the scenario is built: absent from the table (with no
    /// `retransmit` either), NSCC on a fabric that sprays gets `rud`, every
    /// other run `rc` (`resolve_delivery`).
    #[serde(default)]
    pub delivery: Delivery,
    /// `delivery = "rud"`: the receiver ACKs once this many wire bytes of
    /// new data arrived since its last ACK, in order or not (htsim's
    /// `_bytes_unacked_threshold`).
    #[serde(default = "default_ack_bytes")]
    pub ack_bytes: crate::units::Size,
    /// Retransmission timeout; with `timeout = "window"` it doubles on each
    /// consecutive timeout up to 64x.
    #[serde(default = "default_rto")]
    pub rto: Time,
    /// What the timer runs from and what a timeout resends.
    #[serde(default)]
    pub timeout: Timeout,
    /// Selective mode: the receiver NACKs a hole once a packet this many
    /// positions past it arrives (tolerates reordering from spraying). Go-back-N
    /// NACKs every hole at once.
    #[serde(default = "default_nack_threshold")]
    pub nack_threshold: u32,
    /// Least time between two CNPs to the same flow (notification point).
    /// Default: the algorithm's (`cc::dcqcn::DcqcnConfig::cnp_interval_ps`).
    #[serde(default)]
    pub cnp_interval: Option<Time>,
    /// Least time between two NACKs for the same expected PSN.
    #[serde(default = "default_nack_interval")]
    pub nack_interval: Time,
    /// When a paced sender's next send time is set: when a packet leaves,
    /// or also whenever the congestion control changes the rate.
    #[serde(default)]
    pub pacing_update: PacingUpdate,
    /// Data packets are ECN-capable.
    #[serde(default = "default_true")]
    pub ecn: bool,
    /// How a sender picks each data packet's entropy: `flow` (one per
    /// flow) or a host-side scheme of lb/ (per packet, docs/lb.md).
    #[serde(default)]
    pub entropy: crate::lb::EntropyMode,
    /// `[transport.connection]`: connections of several queue pairs
    /// (absent: every flow is its own queue pair with its own entropy).
    #[serde(default)]
    pub connection: Option<super::connection::ConnectionConfig>,
    /// `[transport.rccc]`: receivers grant credits (RCCC), alone (`cc =
    /// "none"`) or under the sender's window (absent: no credits).
    #[serde(default)]
    pub rccc: Option<super::rccc::RcccConfig>,
    /// The congestion-control sections present, `[transport.<cc name>]`.
    #[serde(skip)]
    pub cc_sections: crate::cc::Sections,
    /// The host-side sections present (`[transport.reps]`, ...).
    #[serde(skip)]
    pub lb_sections: crate::lb::Sections,
    /// The table names neither `delivery` nor `retransmit`: the delivery
    /// is the default's to choose (`resolve_delivery`).
    #[serde(skip)]
    pub delivery_unset: bool,
}

/// The keys of `[transport]` that are not sections, in the struct's order
/// (for the unknown-key message).
const KEYS: &[&str] = &[
    "cc",
    "mtu",
    "header",
    "ack_size",
    "ack_every",
    "ack_on_ce",
    "ack_request",
    "ack_delay",
    "retransmit",
    "delivery",
    "ack_bytes",
    "rto",
    "timeout",
    "nack_threshold",
    "cnp_interval",
    "nack_interval",
    "pacing_update",
    "ecn",
    "entropy",
    "connection",
    "rccc",
];

impl Default for TransportConfig {
    fn default() -> Self {
        TransportConfig {
            cc: Default::default(),
            mtu: default_mtu(),
            header: default_header(),
            ack_size: default_ack_size(),
            ack_every: default_ack_every(),
            ack_on_ce: true,
            ack_request: false,
            ack_delay: default_ack_delay(),
            retransmit: Retransmit::GoBackN,
            delivery: Delivery::Rc,
            ack_bytes: default_ack_bytes(),
            rto: default_rto(),
            timeout: Timeout::Window,
            nack_threshold: default_nack_threshold(),
            cnp_interval: None,
            nack_interval: default_nack_interval(),
            pacing_update: PacingUpdate::OnSend,
            ecn: true,
            connection: None,
            rccc: None,
            entropy: Default::default(),
            cc_sections: Default::default(),
            lb_sections: Default::default(),
            delivery_unset: false,
        }
    }
}

impl TransportConfig {
    /// The selected congestion control's configuration (its section,
    /// resolved; not yet prepared for the fabric).
    pub fn cc_config(&self) -> CcConfig {
        let shared = crate::cc::Shared { cnp_interval: self.cnp_interval, receiver_credits: self.rccc.is_some() };
        self.cc_sections.config(self.cc, &shared)
    }

    /// Receivers keep out-of-order data and senders resend only what is
    /// missing (`retransmit = "selective"`, or `delivery = "rud"`).
    pub fn selective(&self) -> bool {
        self.retransmit == Retransmit::Selective || self.delivery == Delivery::Rud
    }

    /// The fabric reorders a flow's packets: the switches' `routing` picks
    /// a path per packet, or the sender an entropy per packet.
    pub fn sprays(&self, routing: crate::lb::RoutingPolicy) -> bool {
        use crate::lb::RoutingPolicy::{Adaptive, RoundRobin, Spray};
        matches!(routing, Spray | RoundRobin | Adaptive) || self.entropy != EntropyMode::default()
    }

    /// Settles a delivery the table left to the default: NSCC on a fabric
    /// that sprays gets UET's reliable unordered delivery (what a UET NIC
    /// runs it over, and htsim's UEC sink), everything else `rc`. A table
    /// that names `retransmit` chose `rc` with it.
    pub fn resolve_delivery(&mut self, routing: crate::lb::RoutingPolicy) {
        if std::mem::take(&mut self.delivery_unset) && self.cc == CcKind::Nscc && self.sprays(routing) {
            self.delivery = Delivery::Rud;
            self.retransmit = Retransmit::Selective;
        }
    }

    /// Why the settled delivery cannot run the timer (checked once the
    /// delivery left to the default is resolved).
    pub fn timeout_error(&self) -> Option<&'static str> {
        (self.timeout == Timeout::Packet && !self.selective()).then_some(
            "timeout = \"packet\" resends one packet of those in flight, which go-back-N cannot: set delivery = \"rud\" or retransmit = \"selective\", or timeout = \"window\"",
        )
    }

    /// What the run's first lines warn of: go-back-N on a fabric that
    /// reorders packets turns reordering into resends.
    pub fn warnings(&self, routing: crate::lb::RoutingPolicy) -> Vec<String> {
        let mut w = Vec::new();
        if self.sprays(routing) && !self.selective() {
            w.push(
                "transport.retransmit = \"go_back_n\" with a path chosen per packet: every reordered packet is discarded and NACKed, and the sender goes back; \
                 use transport.delivery = \"rud\" (or retransmit = \"selective\")"
                    .to_string(),
            );
        }
        w
    }

    /// The selected host-side scheme's configuration (None for `flow`).
    pub fn host_lb_config(&self) -> Option<HostLbConfig> {
        self.lb_sections.config(self.entropy)
    }
}

impl<'de> Deserialize<'de> for TransportConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Table;
        impl<'de> Visitor<'de> for Table {
            type Value = TransportConfig;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("struct TransportConfig")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<TransportConfig, A::Error> {
                let mut m = Sectioned { map, cc: Default::default(), lb: Default::default(), retransmit_set: false, delivery_set: false };
                let mut t = TransportConfig::deserialize(MapAccessDeserializer::new(&mut m))?;
                (t.cc_sections, t.lb_sections) = (m.cc, m.lb);
                t.delivery_unset = !m.delivery_set && !m.retransmit_set;
                if t.delivery == Delivery::Rud {
                    if m.retransmit_set && t.retransmit == Retransmit::GoBackN {
                        return Err(de::Error::custom("delivery = \"rud\" retransmits selectively: remove retransmit = \"go_back_n\" or set delivery = \"rc\""));
                    }
                    t.retransmit = Retransmit::Selective;
                }
                if t.ack_bytes.0 == 0 {
                    return Err(de::Error::custom("ack_bytes must be at least 1 byte"));
                }
                Ok(t)
            }
        }
        d.deserialize_struct("TransportConfig", KEYS, Table)
    }
}

/// What a key of `[transport]` is.
enum Key {
    Plain(String),
    Cc(CcKind),
    Lb(EntropyMode),
}

/// Reads a key of `[transport]`.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        let key = String::deserialize(d)?;
        if KEYS.contains(&key.as_str()) {
            Ok(Key::Plain(key))
        } else if let Some(k) = CcKind::of_section(&key) {
            Ok(Key::Cc(k))
        } else if let Some(m) = EntropyMode::of_section(&key) {
            Ok(Key::Lb(m))
        } else {
            // serde's own wording, with every key and section.
            let (before, after) = KEYS.split_at(KEYS.len() - 1);
            let cc = CcKind::ALL.iter().filter(|k| CcKind::of_section(k.name()).is_some()).map(|k| k.name());
            let all: Vec<String> = before.iter().copied().chain(EntropyMode::sections()).chain(after.iter().copied()).chain(cc).map(|k| format!("`{k}`")).collect();
            Err(de::Error::custom(format!("unknown field `{key}`, expected one of {}", all.join(", "))))
        }
    }
}

/// The map of `[transport]` with its sections taken out as they come.
struct Sectioned<A> {
    map: A,
    cc: crate::cc::Sections,
    lb: crate::lb::Sections,
    /// The table writes `retransmit` (rud refuses an explicit go-back-N).
    retransmit_set: bool,
    /// The table writes `delivery`.
    delivery_set: bool,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for &mut Sectioned<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        loop {
            match self.map.next_key_seed(KeySeed)? {
                None => return Ok(None),
                Some(Key::Plain(k)) => {
                    self.retransmit_set |= k == "retransmit";
                    self.delivery_set |= k == "delivery";
                    return seed.deserialize(k.into_deserializer()).map(Some);
                }
                Some(Key::Cc(kind)) => {
                    let c = self.map.next_value_seed(CcSection(kind))?;
                    self.cc.insert(c);
                }
                Some(Key::Lb(mode)) => {
                    let c = self.map.next_value_seed(LbSection(mode))?;
                    self.lb.insert(c);
                }
            }
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

/// Reads `[transport.<name>]` with its owner's reader.
struct CcSection(CcKind);

impl<'de> DeserializeSeed<'de> for CcSection {
    type Value = CcConfig;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<CcConfig, D::Error> {
        CcConfig::deserialize_section(self.0, d)
    }
}

struct LbSection(EntropyMode);

impl<'de> DeserializeSeed<'de> for LbSection {
    type Value = HostLbConfig;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<HostLbConfig, D::Error> {
        HostLbConfig::deserialize_section(self.0, d)
    }
}

fn default_mtu() -> u32 {
    4096
}
fn default_header() -> u32 {
    64
}
fn default_ack_size() -> u32 {
    64
}
fn default_ack_every() -> u32 {
    1
}
fn default_ack_delay() -> Time {
    Time::us(5)
}
fn default_true() -> bool {
    true
}
/// htsim's UEC sink: 16 KiB, four packets of 4 KiB.
fn default_ack_bytes() -> crate::units::Size {
    crate::units::Size(16_384)
}
fn default_rto() -> Time {
    Time::us(500)
}
fn default_nack_threshold() -> u32 {
    3
}
fn default_nack_interval() -> Time {
    Time::us(50)
}
