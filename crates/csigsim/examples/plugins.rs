//! A worked example of the two plug-in families of docs/architecture.md: a
//! congestion control (a fixed window) and a host-side load-balancing scheme
//! (entropies in turn), each written as its file in cc/ or lb/ would be, and
//! driven here through the same traits the registries call. Registering them
//! is the one line the page shows; `cargo test` builds this file, so the
//! shape it shows compiles.
//!
//! `cargo run --example plugins`

use csigsim::cc::{AckSample, Algorithm, ConfigError, CongestionControl, FlowParams, NoReceiver};
use csigsim::lb::{ConfigError as LbError, Scheme, Setup};
use csigsim::rng::{Purpose, Stream};
use csigsim::units::Size;
use serde::Deserialize;

// ---- cc/fixed.rs --------------------------------------------------------

/// `[transport.fixed]`: the window, in bytes (default: one BDP).
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FixedConfig {
    pub window: Option<Size>,
}

/// One flow's controller: a window that never moves, paced at line rate.
#[derive(Clone, Debug)]
pub struct Fixed {
    window: u64,
    line_rate_bps: u64,
}

impl CongestionControl for Fixed {
    // Every hook but these two has a no-op default.
    fn cwnd(&self) -> u64 {
        self.window
    }
    fn rate(&self) -> u64 {
        self.line_rate_bps
    }
}

impl Algorithm for Fixed {
    const NAME: &'static str = "fixed";
    const ABOUT: &'static str = "a fixed window, one BDP unless [transport.fixed] window says";
    type Config = FixedConfig;
    type Receiver = NoReceiver;
    fn build(c: &FixedConfig, p: &FlowParams) -> Self {
        Fixed { window: c.window.map_or_else(|| p.bdp(), |s| s.0), line_rate_bps: p.line_rate_bps }
    }
    fn validate(c: &FixedConfig) -> Result<(), ConfigError> {
        match c.window {
            Some(Size(0)) => Err(("window".into(), "window must be above zero".into())),
            _ => Ok(()),
        }
    }
}

// Its registry line, in cc/mod.rs: `Fixed(fixed::Fixed),`

// ---- lb/in_turn.rs ------------------------------------------------------

/// `[transport.in_turn]`.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct InTurnConfig {
    pub evs: u32,
}

impl Default for InTurnConfig {
    fn default() -> Self {
        InTurnConfig { evs: 8 }
    }
}

/// One flow's entropies, in turn from a random first one.
#[derive(Clone, Debug)]
pub struct InTurn {
    evs: u32,
    next: u32,
}

impl Scheme for InTurn {
    const NAME: &'static str = "in_turn";
    const ABOUT: &'static str = "each of in_turn.evs entropies in turn";
    const SECTION: Option<&'static str> = Some("in_turn");
    type Config = InTurnConfig;
    fn check(c: &InTurnConfig, _s: &Setup) -> Result<(), LbError> {
        if c.evs == 0 {
            return Err(("in_turn.evs".into(), "evs must be at least 1".into()));
        }
        Ok(())
    }
    fn start(c: &InTurnConfig, rng: &mut Stream) -> Self {
        InTurn { evs: c.evs, next: rng.below(c.evs as u64) as u32 }
    }
    fn next_ev(&mut self, _now: u64, _rng: &mut Stream) -> u32 {
        let ev = self.next;
        self.next = (self.next + 1) % self.evs;
        ev
    }
}

// Its registry line, in lb/mod.rs: `InTurn(in_turn::InTurn),`

// ---- what the registries do with them -----------------------------------

fn main() {
    // A section as the scenario writes it, validated, then one flow's controller.
    let c: FixedConfig = toml::from_str("window = \"64KB\"").unwrap();
    Fixed::validate(&c).unwrap();
    let p = FlowParams { line_rate_bps: 100_000_000_000, base_rtt_ps: 8_000_000, mss: 4096, packet_bytes: 4160, hops: 2 };
    let mut f = Fixed::build(&c, &p);
    f.on_ack(&AckSample { acked_bytes: 4096, ..Default::default() });
    println!("{}: window {} B, rate {} b/s", Fixed::NAME, f.cwnd(), f.rate());
    assert_eq!(f.cwnd(), 64_000);
    let bad: FixedConfig = toml::from_str("window = 0").unwrap();
    assert_eq!(Fixed::validate(&bad).unwrap_err().0, "window");

    // A flow's scheme, on the flow's own random stream.
    let c = InTurnConfig::default();
    InTurn::check(&c, &Setup::default()).unwrap();
    let mut rng = Stream::new(1, 0, Purpose::HostEntropy);
    let mut s = InTurn::start(&c, &mut rng);
    let evs: Vec<u32> = (0..8).map(|_| s.next_ev(0, &mut rng)).collect();
    println!("{}: {evs:?}", InTurn::NAME);
    let mut sorted = evs.clone();
    sorted.sort();
    assert_eq!(sorted, (0..8).collect::<Vec<_>>());
}
