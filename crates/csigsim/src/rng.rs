//! Random streams. Every random consumer (a flow's entropy, a switch's ECN
//! coin, a generator) owns a stream derived from (seed, entity, purpose), so
//! adding a flow or a monitor never perturbs the draws of anything else.

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// What a stream is for; part of its derivation key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum Purpose {
    FlowEntropy = 1,
    SwitchEcn = 2,
    SwitchSpray = 3,
    Workload = 4,
    SwitchHash = 5,
    CsigTag = 6,
    TrimVictim = 7,
    /// A sender's per-packet entropy draws (REPS, oblivious spraying).
    HostEntropy = 8,
    /// A job's random placement (`workload::job`).
    JobPlacement = 9,
}

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A deterministic random stream.
#[derive(Clone, Debug)]
pub struct Stream(Xoshiro256PlusPlus);

impl Stream {
    pub fn new(seed: u64, entity: u64, purpose: Purpose) -> Self {
        let key = splitmix64(splitmix64(seed) ^ splitmix64(entity.wrapping_mul(0x100_0000_01b3) ^ purpose as u64));
        Stream(Xoshiro256PlusPlus::seed_from_u64(key))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in 0..n (n > 0), by Lemire's multiply-shift (bias below 2^-32 for n < 2^32).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in [0, 1).
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// A stateless 64-bit mix for ECMP hashing.
#[inline]
pub fn mix(a: u64, b: u64) -> u64 {
    splitmix64(a ^ b.rotate_left(32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_independent_and_repeatable() {
        let mut a = Stream::new(1, 7, Purpose::FlowEntropy);
        let mut b = Stream::new(1, 7, Purpose::FlowEntropy);
        let mut c = Stream::new(1, 8, Purpose::FlowEntropy);
        let mut d = Stream::new(1, 7, Purpose::SwitchEcn);
        let xa: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa[0], c.next_u64());
        assert_ne!(xa[0], d.next_u64());
    }

    #[test]
    fn below_is_in_range_and_roughly_uniform() {
        let mut s = Stream::new(3, 0, Purpose::Workload);
        let mut counts = [0u32; 4];
        for _ in 0..40_000 {
            counts[s.below(4) as usize] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
    }
}
