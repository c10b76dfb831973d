//! Load balancing. Switch-side routing policies, one file each, chosen per
//! scenario with `switch.routing`: the switch hands a policy its equal-cost
//! candidates and what it may read about the packet and itself, and takes the
//! port the policy returns. Host-side schedulers live here too: [`cast`]
//! (used by `transport::connection`), and the per-packet entropy choices of
//! a sender, [`reps`], [`oblivious`] and [`csig_paths`] (used by
//! `transport::flow`).
//!
//! Adding a policy: its file (with `choose` and its per-group `State`), one
//! line in the registry below, and its row in docs/scenario.md.

pub mod cast;
pub mod csig_paths;
pub mod oblivious;
pub mod reps;

use crate::id::PortId;
use crate::rng::Stream;

/// `transport.entropy`: how a sender picks the entropy of each data packet.
#[derive(Clone, Copy, Debug, Default, serde::Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EntropyMode {
    /// One entropy per flow (queue pair): switches hash every packet alike.
    #[default]
    Flow,
    /// Each entropy of `reps.evs` in turn, in a random order per round.
    Oblivious,
    /// REPS: entropies recycled from unmarked ACKs ([`reps`]).
    Reps,
    /// CSIG-guided: entropies weighted by their reflected min(ABW) ([`csig_paths`]).
    Csig,
}

/// A sender's per-packet entropy state, with its own random stream.
#[derive(Clone, Debug)]
pub enum HostLb {
    Oblivious(oblivious::Oblivious, Stream),
    Reps(reps::Reps, Stream),
    Csig(csig_paths::CsigPaths, Stream),
}

impl HostLb {
    /// The state for flow `flow` of a run with `seed`, or None for `flow` mode.
    pub fn new(mode: EntropyMode, cfg: &reps::RepsConfig, csig: &csig_paths::CsigPathsConfig, seed: u64, flow: u64) -> Option<Box<HostLb>> {
        let mut rng = Stream::new(seed, flow, crate::rng::Purpose::HostEntropy);
        match mode {
            EntropyMode::Flow => None,
            EntropyMode::Oblivious => Some(Box::new(HostLb::Oblivious(oblivious::Oblivious::new(cfg.evs, &mut rng), rng))),
            EntropyMode::Reps => Some(Box::new(HostLb::Reps(reps::Reps::new(*cfg), rng))),
            EntropyMode::Csig => Some(Box::new(HostLb::Csig(csig_paths::CsigPaths::new(*csig), rng))),
        }
    }

    /// The entropy value (0 .. evs) of the next data packet, sent at `now`.
    #[inline]
    pub fn next_ev(&mut self, now: u64) -> u32 {
        match self {
            HostLb::Oblivious(o, rng) => o.next(rng),
            HostLb::Reps(r, rng) => r.next(rng),
            HostLb::Csig(c, rng) => c.next(now, rng),
        }
    }

    /// A CSIG min(ABW) (or ABW/C) reflected on an ACK for a packet sent on
    /// `ev`; `last_hop`: its locator names the destination's last hop.
    #[inline]
    pub fn on_csig(&mut self, now: u64, ev: u32, abw: f64, last_hop: bool) {
        if let HostLb::Csig(c, _) = self {
            c.on_sample(now, ev, abw, last_hop);
        }
    }

    /// An ACK or NACK for a packet sent on entropy value `ev`.
    #[inline]
    pub fn on_feedback(&mut self, now: u64, ev: u32, fb: reps::Feedback) {
        if let HostLb::Reps(r, _) = self {
            r.on_feedback(now, ev, fb);
        }
    }

    pub fn on_timeout(&mut self, now: u64) {
        if let HostLb::Reps(r, _) = self {
            r.on_timeout(now);
        }
    }
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
