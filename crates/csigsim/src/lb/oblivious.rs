//! Oblivious spraying (htsim's UEC `oblivious` load balancing): the sender
//! walks through all `evs` entropies in a random order, one per packet,
//! then draws a new order. Every path gets the same share whatever the
//! feedback. The order is `i XOR x` for `i` = 0 .. evs - 1, with `x` drawn
//! per round, so `evs` must be a power of two.

use super::reps::{self, RepsConfig};
use super::{ConfigError, Scheme, Sections, Setup};
use crate::rng::Stream;

#[derive(Clone, Debug)]
pub struct Oblivious {
    evs: u32,
    index: u32,
    xor: u32,
}

impl Oblivious {
    /// `evs`: a power of two.
    pub fn new(evs: u32, rng: &mut Stream) -> Oblivious {
        debug_assert!(evs.is_power_of_two());
        Oblivious { evs, index: 0, xor: rng.below(evs as u64) as u32 }
    }

    /// The entropy value (0 .. evs) of the next packet.
    pub fn next(&mut self, rng: &mut Stream) -> u32 {
        let ev = (self.index ^ self.xor) & (self.evs - 1);
        self.index += 1;
        if self.index == self.evs {
            self.index = 0;
            self.xor = rng.below(self.evs as u64) as u32;
        }
        ev
    }
}

impl Scheme for Oblivious {
    const NAME: &'static str = "oblivious";
    const ABOUT: &'static str = "each of reps.evs entropies in turn, in a random order per round, whatever the feedback";
    const SECTION: Option<&'static str> = None;
    /// `[transport.reps]`: its `evs`.
    type Config = RepsConfig;
    fn resolve(c: &mut RepsConfig, sections: &Sections) {
        *c = sections.get::<reps::Reps>();
    }
    fn check(c: &RepsConfig, _s: &Setup) -> Result<(), ConfigError> {
        reps::check_section(c, true)
    }
    fn start(c: &RepsConfig, rng: &mut Stream) -> Self {
        Oblivious::new(c.evs, rng)
    }
    #[inline]
    fn next_ev(&mut self, _now: u64, rng: &mut Stream) -> u32 {
        self.next(rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Purpose;

    #[test]
    fn every_round_uses_each_entropy_once() {
        let mut rng = Stream::new(3, 1, Purpose::HostEntropy);
        let mut o = Oblivious::new(16, &mut rng);
        let mut orders = Vec::new();
        for _ in 0..6 {
            let mut round: Vec<u32> = (0..16).map(|_| o.next(&mut rng)).collect();
            orders.push(round.clone());
            round.sort();
            assert_eq!(round, (0..16).collect::<Vec<_>>());
        }
        assert!(orders.windows(2).any(|w| w[0] != w[1]), "the order changes between rounds");
    }
}
