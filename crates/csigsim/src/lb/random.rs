//! Random spraying: each data packet's entropy is drawn uniformly among
//! `evs` values from the flow's own random stream, whatever the feedback.
//! Unlike `oblivious`, a round does not use every value once, so paths get
//! equal shares only on average; a baseline for the schemes that steer.

use super::{ConfigError, Scheme, Setup};
use crate::rng::Stream;
use serde::Deserialize;

/// `[transport.random]`.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RandomConfig {
    /// Entropy values a flow draws from.
    pub evs: u32,
}

impl Default for RandomConfig {
    fn default() -> Self {
        RandomConfig { evs: 64 }
    }
}

/// One flow's draws: nothing to keep but the count of values.
#[derive(Clone, Debug)]
pub struct Random {
    evs: u64,
}

impl Scheme for Random {
    const NAME: &'static str = "random";
    const ABOUT: &'static str = "each packet on an entropy drawn uniformly among random.evs, whatever the feedback ([transport.random])";
    const SECTION: Option<&'static str> = Some("random");
    type Config = RandomConfig;
    fn check(c: &RandomConfig, _s: &Setup) -> Result<(), ConfigError> {
        if c.evs == 0 {
            return Err(("random.evs".into(), "evs must be at least 1".into()));
        }
        Ok(())
    }
    fn start(c: &RandomConfig, _rng: &mut Stream) -> Self {
        Random { evs: c.evs as u64 }
    }
    #[inline]
    fn next_ev(&mut self, _now: u64, rng: &mut Stream) -> u32 {
        rng.below(self.evs) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Purpose;

    #[test]
    fn every_value_is_drawn_about_equally() {
        let mut rng = Stream::new(3, 1, Purpose::HostEntropy);
        let mut r = Random::start(&RandomConfig { evs: 16 }, &mut rng);
        let mut counts = [0u32; 16];
        for _ in 0..16_000 {
            counts[r.next_ev(0, &mut rng) as usize] += 1;
        }
        assert!(counts.iter().all(|&k| (850..1150).contains(&k)), "{counts:?}");
    }

    #[test]
    fn the_draws_are_the_flows_own_per_seed() {
        let draws = |seed, flow| {
            let mut rng = Stream::new(seed, flow, Purpose::HostEntropy);
            let mut r = Random::start(&RandomConfig::default(), &mut rng);
            (0..64).map(|_| r.next_ev(0, &mut rng)).collect::<Vec<_>>()
        };
        assert_eq!(draws(1, 2), draws(1, 2));
        assert_ne!(draws(1, 2), draws(1, 3));
        assert_ne!(draws(1, 2), draws(2, 2));
    }

    #[test]
    fn the_section_is_checked() {
        let c: RandomConfig = toml::from_str("evs = 0").unwrap();
        assert_eq!(Random::check(&c, &Setup::default()).unwrap_err().0, "random.evs");
        assert!(toml::from_str::<RandomConfig>("paths = 4").is_err());
    }
}
