//! Load balancing. Switch-side routing policies, one file each, chosen per
//! scenario with `switch.routing`: the switch hands a policy its equal-cost
//! candidates and what it may read about the packet and itself, and takes the
//! port the policy returns. Host-side schemes, one file each, chosen with
//! `transport.entropy`: a sender asks its flow's scheme for each data
//! packet's entropy and tells it what the ACKs say ([`Scheme`]). The
//! connection-level scheduler [`cast`] (used by `transport::connection`)
//! spreads messages over queue pairs, not packets over paths.
//!
//! Adding a routing policy: its file (with `choose` and its per-group
//! `State`), one line in `policies!` below, and its row in docs/scenario.md.
//! Adding a host-side scheme: its file (a type implementing [`Scheme`]), one
//! line in `schemes!` below, and its row in docs/lb.md.

pub mod cast;

use crate::id::PortId;
use crate::rng::Stream;
use serde::de::DeserializeOwned;
use std::fmt::Debug;

/// A configuration error: the key under `[transport]` and the message.
pub type ConfigError = (String, String);

/// What an ACK said about the path of the packet it answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feedback {
    /// Delivered without a congestion mark.
    Good,
    /// Delivered with a congestion mark.
    Marked,
    /// Trimmed or lost (a NACK).
    Nack,
}

/// What the scenario knows that a scheme may need to check.
#[derive(Clone, Copy, Debug, Default)]
pub struct Setup {
    /// The CSIG tag's signal type, if `[signals.csig]` is on.
    pub csig: Option<crate::signal::csig::SignalType>,
}

/// A CSIG sample reflected on an ACK, as a scheme sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CsigEcho {
    /// The decoded value (min(ABW) or min(ABW/C) for the min types).
    pub value: f64,
    /// The locator of the hop that wrote it, and the locator's width in bits.
    pub locator: u16,
    pub lm_bits: u8,
}

/// A host-side load-balancing scheme: one flow's choice of each data
/// packet's entropy value. Everything but the per-packet hooks runs once, at
/// load or at the flow's start; the hooks with defaults are no-ops.
pub trait Scheme: Sized + Clone + Debug {
    /// `transport.entropy`.
    const NAME: &'static str;
    /// One line for `csigsim list`.
    const ABOUT: &'static str;
    /// Its section `[transport.<SECTION>]`, if it has one of its own.
    const SECTION: Option<&'static str>;
    /// The section with its defaults (`Default` is the section absent), plus
    /// what [`resolve`](Self::resolve) fills in.
    type Config: Clone + Debug + Default + PartialEq + DeserializeOwned;
    /// Completes the configuration from other schemes' sections, once, at load.
    fn resolve(_c: &mut Self::Config, _sections: &Sections) {}
    /// Checks when selected, once, at load; keys are relative to `[transport]`.
    fn check(_c: &Self::Config, _s: &Setup) -> Result<(), ConfigError> {
        Ok(())
    }
    /// One flow's state, at the flow's start; `rng` is the flow's own stream.
    fn start(c: &Self::Config, rng: &mut Stream) -> Self;
    /// The entropy value of the next data packet, sent at `now`.
    fn next_ev(&mut self, now: u64, rng: &mut Stream) -> u32;
    /// An ACK or NACK for a packet sent on entropy value `ev`.
    fn on_feedback(&mut self, _now: u64, _ev: u32, _fb: Feedback) {}
    /// An ACK for a packet sent on `ev` reflected a CSIG sample.
    fn on_csig(&mut self, _now: u64, _ev: u32, _echo: CsigEcho) {}
    /// The flow's retransmission timer fired.
    fn on_timeout(&mut self, _now: u64) {}
}

/// The link from a scheme's type to its registry variant (written by the
/// registry line).
pub trait RegisteredScheme: Scheme {
    /// The configuration in `c`, if `c` is this scheme's.
    fn config(c: &HostLbConfig) -> Option<&Self::Config>;
    /// The state in `s`, if `s` is this scheme's.
    fn state(s: &HostLbState) -> Option<&Self>;
}

/// The host-side sections a scenario writes (`[transport.reps]`, ...), as
/// read at load; each is kept as the configuration of the scheme owning it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sections(Vec<HostLbConfig>);

impl Sections {
    /// The section of scheme `S`, or its defaults when the file has none.
    pub fn get<S: RegisteredScheme>(&self) -> S::Config {
        self.0.iter().find_map(S::config).cloned().unwrap_or_default()
    }

    /// Keeps `c` as its scheme's section.
    pub fn insert(&mut self, c: HostLbConfig) {
        self.0.retain(|s| s.mode() != c.mode());
        self.0.push(c);
    }

    /// The configuration of `mode` (None for `flow`): its section (or
    /// defaults), completed by [`Scheme::resolve`].
    pub fn config(&self, mode: EntropyMode) -> Option<HostLbConfig> {
        let mut c = HostLbConfig::default_of(mode)?;
        if let Some(s) = self.0.iter().find(|s| s.mode() == mode) {
            c = s.clone();
        }
        c.resolve(self);
        Some(c)
    }
}

/// A flow's host-side scheme: its state and its own random stream.
#[derive(Clone, Debug)]
pub struct HostLb {
    state: HostLbState,
    rng: Stream,
}

/// Writes the enums of the host-side schemes from their registry lines; each
/// line `Variant(file::Type)` names a type implementing [`Scheme`] in its file.
macro_rules! schemes {
    (
        $(#[$mode_doc:meta])* pub enum $Mode:ident;
        $(#[$config_doc:meta])* pub enum $Config:ident;
        $(#[$state_doc:meta])* pub enum $State:ident;
        $( $Variant:ident($module:ident::$Type:ident), )*
    ) => {
        $( pub mod $module; )*

        $(#[$mode_doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub enum $Mode {
            /// One entropy per flow (queue pair): switches hash every packet alike.
            #[default]
            Flow,
            $( $Variant, )*
        }

        $(#[$config_doc])*
        #[derive(Clone, Debug, PartialEq)]
        pub enum $Config {
            $( $Variant(<$module::$Type as Scheme>::Config), )*
        }

        $(#[$state_doc])*
        #[derive(Clone, Debug)]
        pub enum $State {
            $( $Variant($module::$Type), )*
        }

        $( impl RegisteredScheme for $module::$Type {
            fn config(c: &$Config) -> Option<&Self::Config> {
                match c {
                    $Config::$Variant(c) => Some(c),
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }
            fn state(s: &$State) -> Option<&Self> {
                match s {
                    $State::$Variant(s) => Some(s),
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }
        } )*

        impl $Mode {
            /// Every mode, `flow` first, then the schemes in registry order.
            pub const ALL: &'static [$Mode] = &[$Mode::Flow, $( $Mode::$Variant, )*];
            /// Their scenario names, in the same order.
            pub const NAMES: &'static [&'static str] = &[FLOW.0, $( <$module::$Type as Scheme>::NAME, )*];
            const SECTIONS: &'static [Option<&'static str>] = &[None, $( <$module::$Type as Scheme>::SECTION, )*];
        }

        /// Every host-side mode this build knows and what it does, for `csigsim list`.
        pub const ENTROPY: &[(&str, &str)] = &[FLOW, $( (<$module::$Type as Scheme>::NAME, <$module::$Type as Scheme>::ABOUT), )*];

        impl $Config {
            /// The mode this configuration is for.
            pub fn mode(&self) -> $Mode {
                match self { $( $Config::$Variant(_) => $Mode::$Variant, )* }
            }
            /// Scheme `mode` with its section absent (None for `flow`).
            pub fn default_of(mode: $Mode) -> Option<Self> {
                match mode {
                    $Mode::Flow => None,
                    $( $Mode::$Variant => Some($Config::$Variant(Default::default())), )*
                }
            }
            /// Reads the section `[transport.<SECTION>]` of scheme `mode`.
            pub fn deserialize_section<'de, D: serde::Deserializer<'de>>(mode: $Mode, d: D) -> Result<Self, D::Error> {
                match mode {
                    $Mode::Flow => Err(serde::de::Error::custom("`flow` has no section")),
                    $( $Mode::$Variant => serde::Deserialize::deserialize(d).map($Config::$Variant), )*
                }
            }
            fn resolve(&mut self, sections: &Sections) {
                match self { $( $Config::$Variant(c) => <$module::$Type as Scheme>::resolve(c, sections), )* }
            }
            /// The scheme's checks against the rest of the scenario.
            pub fn check(&self, s: &Setup) -> Result<(), ConfigError> {
                match self { $( $Config::$Variant(c) => <$module::$Type as Scheme>::check(c, s), )* }
            }
        }

        impl HostLb {
            /// The state of flow `flow` of a run with `seed`.
            pub fn new(c: &$Config, seed: u64, flow: u64) -> Box<HostLb> {
                let mut rng = Stream::new(seed, flow, crate::rng::Purpose::HostEntropy);
                let state = match c { $( $Config::$Variant(c) => $State::$Variant(<$module::$Type as Scheme>::start(c, &mut rng)), )* };
                Box::new(HostLb { state, rng })
            }

            /// The entropy value of the next data packet, sent at `now`.
            #[inline]
            pub fn next_ev(&mut self, now: u64) -> u32 {
                match &mut self.state { $( $State::$Variant(s) => s.next_ev(now, &mut self.rng), )* }
            }

            /// An ACK or NACK for a packet sent on entropy value `ev`.
            #[inline]
            pub fn on_feedback(&mut self, now: u64, ev: u32, fb: Feedback) {
                match &mut self.state { $( $State::$Variant(s) => Scheme::on_feedback(s, now, ev, fb), )* }
            }

            /// An ACK for a packet sent on `ev` reflected a CSIG sample.
            #[inline]
            pub fn on_csig(&mut self, now: u64, ev: u32, echo: CsigEcho) {
                match &mut self.state { $( $State::$Variant(s) => Scheme::on_csig(s, now, ev, echo), )* }
            }

            pub fn on_timeout(&mut self, now: u64) {
                match &mut self.state { $( $State::$Variant(s) => Scheme::on_timeout(s, now), )* }
            }
        }
    };
}

/// The `flow` mode: no scheme.
const FLOW: (&str, &str) = ("flow", "one entropy per flow (queue pair): switches hash every packet alike");

impl EntropyMode {
    /// The scenario name.
    pub const fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// The scheme whose own section is `[transport.<key>]`, if any.
    pub fn of_section(key: &str) -> Option<EntropyMode> {
        EntropyMode::ALL.iter().copied().find(|m| Self::SECTIONS[*m as usize] == Some(key))
    }

    /// Every host-side section name, in registry order.
    pub fn sections() -> impl Iterator<Item = &'static str> {
        Self::SECTIONS.iter().flatten().copied()
    }
}

impl<'de> serde::Deserialize<'de> for EntropyMode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        crate::de::by_name(d, "EntropyMode", EntropyMode::NAMES).map(|i| EntropyMode::ALL[i])
    }
}

impl HostLb {
    /// The state of scheme `S`, if the flow runs it (for reports and tests).
    pub fn get<S: RegisteredScheme>(&self) -> Option<&S> {
        S::state(&self.state)
    }
}

schemes! {
    /// `transport.entropy`: how a sender picks the entropy of each data packet.
    pub enum EntropyMode;
    /// The selected host-side scheme's configuration: its section, resolved.
    pub enum HostLbConfig;
    /// One flow's host-side scheme state, by enum dispatch.
    pub enum HostLbState;
    // One line per scheme: its variant, its file in lb/ and the type there
    // implementing [`Scheme`].
    Oblivious(oblivious::Oblivious),
    Reps(reps::Reps),
    Csig(csig_paths::CsigPaths),
    Random(random::Random),
}

/// What a policy reads about an egress port, for load-aware choices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Load {
    /// Data bytes queued at the port.
    pub queue_bytes: u64,
    /// The port's transmitter is busy until this time (ps).
    pub busy_until: u64,
    /// The port's link is down (`[[topology.failure]]`): the switch knows
    /// its own dead ports at once.
    pub down: bool,
}

/// Everything a policy may use to place one packet at one switch.
pub struct Ctx<'a, L> {
    /// The equal-cost egress ports, in port order; at least two.
    pub cands: &'a [PortId],
    /// The packet's flow entropy and destination host index.
    pub entropy: u32,
    /// The destination host's index (D-mod-K divides it).
    pub dst: u32,
    /// The switch's hash salt and D-mod-K divisor.
    pub salt: u64,
    pub divisor: u32,
    /// The current time (ps).
    pub now: u64,
    /// The switch's own random stream for per-packet draws.
    pub rng: &'a mut Stream,
    /// Reads the load of an egress port by id.
    pub load: L,
}

macro_rules! policies {
    ($($(#[$attr:meta])* ($module:ident, $variant:ident, $name:literal, $description:literal)),* $(,)?) => {
        $(pub mod $module;)*

        /// `switch.routing`: the choice among equal-cost next hops.
        #[derive(Clone, Copy, Debug, Default, serde::Deserialize, PartialEq, Eq)]
        pub enum RoutingPolicy {
            $(#[doc = $description] #[serde(rename = $name)] $(#[$attr])* $variant,)*
        }

        /// What each policy keeps between packets for one group of next hops
        /// (one switch towards one edge switch). Created once with the routing
        /// table; a stateless policy's `State` is `()` and costs nothing.
        #[derive(Clone, Debug, Default)]
        pub struct GroupState {
            $($module: $module::State,)*
        }

        /// Every switch routing policy this build knows, for `csigsim list`.
        pub const ROUTING: &[(&str, &str)] = &[$(($name, $description),)*];

        impl RoutingPolicy {
            /// The name scenarios and outputs use.
            pub fn name(self) -> &'static str {
                match self { $(RoutingPolicy::$variant => $name,)* }
            }
        }

        /// The egress port for one packet among `ctx.cands`.
        #[inline]
        pub fn choose<L: Fn(PortId) -> Load>(policy: RoutingPolicy, mut ctx: Ctx<L>, group: &mut GroupState) -> PortId {
            // One candidate: nothing to choose, and no random draw spent.
            if ctx.cands.len() == 1 {
                return ctx.cands[0];
            }
            let i = match policy {
                $(RoutingPolicy::$variant => $module::choose(&mut ctx, &mut group.$module),)*
            };
            ctx.cands[i]
        }
    };
}

/// The next hop a stateless policy will choose for a packet, computed on a
/// copy of the switch's random stream (so the choice itself is untouched),
/// for a prefetch; None for policies that look at queues or keep state.
#[inline]
pub fn predict(policy: RoutingPolicy, cands: &[PortId], entropy: u32, dst: u32, salt: u64, divisor: u32, rng: &Stream) -> Option<PortId> {
    if cands.len() == 1 {
        return Some(cands[0]);
    }
    let mut rng = rng.clone();
    let mut c = Ctx { cands, entropy, dst, salt, divisor, now: 0, rng: &mut rng, load: |_| Load::default() };
    let i = match policy {
        RoutingPolicy::Ecmp => ecmp::choose(&mut c, &mut ()),
        RoutingPolicy::Spray => spray::choose(&mut c, &mut ()),
        RoutingPolicy::Deterministic => deterministic::choose(&mut c, &mut ()),
        RoutingPolicy::Adaptive | RoutingPolicy::RoundRobin => return None,
    };
    Some(cands[i])
}

// One line per policy: its file, variant, `switch.routing` name and description.
policies! {
    #[default] (ecmp, Ecmp, "ecmp", "per-flow hash of the packet's entropy over equal-cost next hops"),
    (spray, Spray, "spray", "per-packet uniform random choice among equal-cost next hops"),
    (adaptive, Adaptive, "adaptive", "the equal-cost next hop with the shortest egress queue"),
    (deterministic, Deterministic, "deterministic", "D-mod-K: candidate (dst / k^stage) mod n, balanced on k-ary trees"),
    (round_robin, RoundRobin, "round_robin", "per packet, the next of the equal-cost next hops in turn (per switch and destination edge)"),
}

#[cfg(test)]
mod predict_tests {
    use super::*;

    /// The prediction is the choice the policy then makes, and spends no
    /// draw of the switch's stream; policies with state or loads are not
    /// predicted.
    #[test]
    fn predict_equals_the_choice_and_leaves_the_stream_alone() {
        let cands = [PortId(4), PortId(5), PortId(6), PortId(7), PortId(8)];
        for policy in [RoutingPolicy::Ecmp, RoutingPolicy::Spray, RoutingPolicy::Deterministic] {
            let mut rng = test_util::stream();
            for entropy in 0..200u32 {
                let before = rng.clone();
                let want = predict(policy, &cands, entropy, entropy * 7, 0x5eed, 3, &rng).unwrap();
                let mut b = before.clone();
                assert_eq!(rng.next_u64(), b.next_u64(), "{policy:?}: the stream did not move");
                rng = before;
                let c = Ctx { cands: &cands, entropy, dst: entropy * 7, salt: 0x5eed, divisor: 3, now: 0, rng: &mut rng, load: |_| Load::default() };
                assert_eq!(choose(policy, c, &mut GroupState::default()), want, "{policy:?} entropy {entropy}");
            }
        }
        let rng = test_util::stream();
        assert_eq!(predict(RoutingPolicy::Adaptive, &cands, 1, 1, 0, 1, &rng), None);
        assert_eq!(predict(RoutingPolicy::RoundRobin, &cands, 1, 1, 0, 1, &rng), None);
        assert_eq!(predict(RoutingPolicy::Adaptive, &cands[..1], 1, 1, 0, 1, &rng), Some(PortId(4)));
    }
}

#[cfg(test)]
mod test_util {
    use super::*;
    use crate::rng::Purpose;

    /// A context over `cands` with every port idle.
    pub fn ctx<'a>(cands: &'a [PortId], entropy: u32, dst: u32, rng: &'a mut Stream) -> Ctx<'a, impl Fn(PortId) -> Load> {
        Ctx { cands, entropy, dst, salt: 0x5eed, divisor: 1, now: 0, rng, load: |_| Load::default() }
    }

    pub fn stream() -> Stream {
        Stream::new(1, 0, Purpose::SwitchSpray)
    }
}
